//! What every example shares: its common flags and its exit codes.
//!
//! | exit code | meaning |
//! |-----------|---------|
//! | 0 | measured and verified |
//! | 1 | a result was wrong (verification failed) or the GPU reported an error |
//! | 2 | it could not run here: no GPU, driver, NVRTC or cuBLAS, or bad command-line input |

use std::path::PathBuf;
use std::process::ExitCode;

use super::gpu::GpuUnavailable;
use super::verify::Mismatch;

/// Flags every example takes (flattened into its own clap parser).
#[derive(Debug, Clone, clap::Args)]
pub struct CommonArgs {
    /// Folder for the figures (SVG, Markdown tables) and their data (`data/*.csv`).
    #[arg(long, default_value = "figures")]
    pub out: PathBuf,
    /// Small sizes and few repetitions: a check that everything runs, not a measurement.
    #[arg(long)]
    pub quick: bool,
    /// Timed repetitions per measurement (the default depends on --quick).
    #[arg(long, value_parser = clap::value_parser!(u32).range(1..=100_000))]
    pub reps: Option<u32>,
    /// Seed of the random inputs.
    #[arg(long, default_value_t = 2024)]
    pub seed: u64,
}

impl CommonArgs {
    /// Repetitions: `--reps` if given, else `full` (or `quick` under `--quick`).
    pub fn reps_or(&self, full: usize, quick: usize) -> usize {
        self.reps.map(|r| r as usize).unwrap_or(if self.quick { quick } else { full })
    }
}

/// The command line as the provenance records it: `cargo run --release --example NAME -- ARGS`.
/// `--out DIR` is left out — where the files went says nothing about how they were measured,
/// and a machine's folder names do not belong in the book.
pub fn command_line(example: &str) -> String {
    command_line_from(example, std::env::args().skip(1))
}

/// [`command_line`] for given arguments.
pub fn command_line_from(example: &str, args: impl Iterator<Item = String>) -> String {
    let mut kept = Vec::new();
    let mut skip_next = false;
    for a in args {
        if skip_next {
            skip_next = false;
        } else if a == "--out" {
            skip_next = true;
        } else if !a.starts_with("--out=") {
            kept.push(a);
        }
    }
    let mut cmd = format!("cargo run --release --example {example}");
    if !kept.is_empty() {
        cmd.push_str(" -- ");
        cmd.push_str(&kept.join(" "));
    }
    cmd
}

/// Bad input that clap's own checks cannot see (a size too large for the device, a chain whose
/// costs overflow). Exit code 2.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UsageError(pub String);

impl std::fmt::Display for UsageError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for UsageError {}

/// The exit code for an error that ended an example.
pub fn exit_code_for(err: &anyhow::Error) -> u8 {
    if err.downcast_ref::<GpuUnavailable>().is_some()
        || err.downcast_ref::<UsageError>().is_some()
    {
        2
    } else {
        1
    }
}

/// Runs an example's body and turns its error into one message and an exit code.
pub fn run_main(body: impl FnOnce() -> anyhow::Result<()>) -> ExitCode {
    match body() {
        Ok(()) => {
            if !super::kernels::used().is_empty() {
                println!("{}", super::kernels::used_line());
            }
            ExitCode::SUCCESS
        }
        Err(err) => {
            if err.downcast_ref::<Mismatch>().is_some() || exit_code_for(&err) == 2 {
                eprintln!("error: {err}");
            } else {
                eprintln!("error: {err:#}");
            }
            ExitCode::from(exit_code_for(&err))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn strs(v: &[&str]) -> impl Iterator<Item = String> {
        v.iter().map(|s| s.to_string()).collect::<Vec<_>>().into_iter()
    }

    #[test]
    fn command_line_drops_the_output_folder() {
        assert_eq!(
            command_line_from("ceilings", strs(&[])),
            "cargo run --release --example ceilings"
        );
        assert_eq!(
            command_line_from(
                "ceilings",
                strs(&["--out", "/tmp/x", "--quick", "--out=/y", "--reps", "5"])
            ),
            "cargo run --release --example ceilings -- --quick --reps 5"
        );
    }

    #[test]
    fn exit_codes() {
        assert_eq!(exit_code_for(&anyhow::Error::new(GpuUnavailable::NoDriver)), 2);
        assert_eq!(
            exit_code_for(&anyhow::Error::new(UsageError("n must be > 0".into()))),
            2
        );
        let m = Mismatch {
            kernel: "k".into(),
            size: "n".into(),
            index: 0,
            got: "a".into(),
            want: "b".into(),
            wrong: 1,
            total: 1,
        };
        assert_eq!(exit_code_for(&anyhow::Error::new(m)), 1);
        assert_eq!(exit_code_for(&anyhow::anyhow!("CUDA_ERROR_ILLEGAL_ADDRESS")), 1);
    }
}
