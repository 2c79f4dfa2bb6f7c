//! Chapter "Reuse, loop permutation, tiling", the CPU half (no GPU needed).
//!
//! `cargo run --release --example loop_permutation` measures on the CPU
//! - a row-major array updated in row order and in column order, from 4 KiB to 256 MiB;
//! - `D[i] += B[j][i]` in its original, strip-mined and tiled forms, over strip sizes;
//!
//! checks that each pair of orders gives identical results first, and writes
//! `figures/tiling-traversal.svg`, `figures/tiling-strip.svg`, the table
//! `figures/tiling-predictions.md` (the matrix-multiply model) and their CSVs.

use std::process::ExitCode;

use clap::Parser;
use cmbook::harness::record::Meta;
use cmbook::harness::{cli, run_main, CommonArgs};
use cmbook::tiling::{report, strip, traversal};

#[derive(Parser, Debug)]
#[command(
    about = "Loop permutation and tiling on the CPU: traversal orders and strip sizes measured"
)]
struct Args {
    #[command(flatten)]
    common: CommonArgs,
}

fn main() -> ExitCode {
    let args = Args::parse();
    run_main(|| run(args))
}

fn run(args: Args) -> anyhow::Result<()> {
    let quick = args.common.quick;
    let reps = args.common.reps_or(5, 2);
    let meta = Meta::for_cpu(&cli::command_line("loop_permutation"));
    println!(
        "CPU: {} (timed with std::time::Instant, median of {reps})",
        meta.get("cpu").unwrap_or("unknown")
    );

    let mut points = Vec::new();
    for n in traversal::sweep_sides(quick) {
        // Small arrays are swept repeatedly so that one sample lasts long enough to time.
        let p = traversal::measure(n, reps, if quick { 1 << 16 } else { 1 << 24 })?;
        let (row, column) = p.ns_per_element();
        println!("traversal n = {n:>5} ({:>9} KiB): row order {row:7.3} ns/element, column order {column:7.3} ns/element", p.bytes() / 1024);
        points.push(p);
    }
    report::write_traversal(&args.common.out, &meta, &points)?;

    let sweep =
        strip::measure(strip::Problem::new(quick), reps.min(3), args.common.seed)?;
    println!(
        "D[i] += B[j][i], {} x {}: original {:.2} ms",
        sweep.problem.m, sweep.problem.n, sweep.original.median_ms
    );
    for (s, mined, tiled) in &sweep.points {
        println!(
            "  strip {s:>8}: strip-mined {:8.2} ms, tiled {:8.2} ms",
            mined.median_ms, tiled.median_ms
        );
    }
    report::write_strip(&args.common.out, &meta, &sweep)?;
    report::write_predictions(&args.common.out, &meta)?;
    println!(
        "all orders agreed; figures and data written to {}",
        args.common.out.display()
    );
    Ok(())
}
