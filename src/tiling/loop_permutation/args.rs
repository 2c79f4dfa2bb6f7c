//! The command line of `cargo run --release --example loop_permutation`: the common flags only
//! (its sizes are the book's, or `--quick`'s).

use crate::harness::args::{CommonArgs, Example};

/// Loop permutation and tiling on the CPU: traversal orders and strip sizes measured.
#[derive(clap::Parser, Debug)]
#[command(
    about = "Loop permutation and tiling on the CPU: traversal orders and strip sizes measured"
)]
pub struct Args {
    #[command(flatten)]
    pub common: CommonArgs,
}

impl Example for Args {
    fn common(&self) -> &CommonArgs {
        &self.common
    }
}
