//! Chapter "Measuring a GPU": device copy bandwidth (L2 warm and cold), host↔device bandwidth
//! (pageable and pinned) and the cost of a launch, each verified, then timed.

use std::process::ExitCode;

use cmbook::ceilings::{self, Args};
use cmbook::harness::run;

fn main() -> ExitCode {
    run::main::<Args>(&ceilings::CHAPTER, |run, args| {
        let results = ceilings::measure(run, &args.flags.settings(run))?;
        ceilings::report(run, &results)
    })
}
