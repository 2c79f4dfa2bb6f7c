//! The command line of `cargo run --release --example loop_permutation`: the common flags only
//! (its sizes are the book's, or `--quick`'s).

crate::example_args!(
    about = "Loop permutation and tiling on the CPU: traversal orders and strip sizes \
             measured",
    flags = crate::harness::args::NoFlags,
);
