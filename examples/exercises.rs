//! Checks the kernel of one exercise, as the book's chapters check their own kernels.
//!
//! `cargo run --release --example exercises -- 1.4` runs the kernel exercise 1.4 starts from,
//! as you have changed it in `kernels/exercises_ceilings.cu`, through the chapter's check:
//! exit code 0 and one line when every size passes; exit code 1 and the first wrong element
//! when one does not. `--solution` runs the book's solution instead.

use std::process::ExitCode;

use clap::Parser;
use cmbook::chapters::exercises::{self, Version};
use cmbook::harness::{run, Gpu, UsageError};

#[derive(Parser, Debug)]
#[command(about = "Runs a kernel exercise's kernel through its chapter's check")]
struct Args {
    #[arg(help = format!("The exercise: {}", exercises::ids().join(", ")))]
    exercise: String,
    /// Check the book's solution instead of the kernel the exercise starts from.
    #[arg(long)]
    solution: bool,
}

fn main() -> ExitCode {
    run::end_quietly_on_a_closed_pipe();
    let args = Args::parse();
    run::finish((|| {
        let exercise = exercises::find(&args.exercise).ok_or_else(|| {
            UsageError(format!(
                "no kernel exercise {} (the kernel exercises are {})",
                args.exercise,
                exercises::ids().join(", ")
            ))
        })?;
        let version = if args.solution { Version::Solution } else { Version::Exercise };
        let gpu = Gpu::open(false)?;
        println!("{}", gpu.info.line());
        let passed = (exercise.exercise.check)(&gpu, version)?;
        println!(
            "exercise {}: `{}` (kernels/{}) passes the check: {passed}",
            exercise.id(),
            (exercise.exercise.function)(version),
            exercise.exercise.file
        );
        Ok(())
    })())
}
