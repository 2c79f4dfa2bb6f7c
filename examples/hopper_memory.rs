//! Chapter "Asynchronous memory on Hopper": the synchronisation ladder, the L2
//! access-policy window, distributed shared memory, cp.async stages and the TMA, each
//! verified, then timed; and an FP32 matrix multiply fed by cp.async stages.

use std::process::ExitCode;

use cmbook::harness::run;
use cmbook::hopper_memory::{self, Args};

fn main() -> ExitCode {
    run::main::<Args>(&hopper_memory::CHAPTER, |run, args| {
        let results = hopper_memory::measure(run, &args.settings(run))?;
        hopper_memory::report(run, &results)
    })
}
