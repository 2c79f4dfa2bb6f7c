//! The one list of the book's chapters and the example behind each: what it needs, what it
//! writes, how it runs under the sanitizers. `reproduce`, the command-line tests, the figure
//! audit and the appendix's table of commands all read it; nothing else lists the chapters.

use crate::harness::run::{FullQuick, Needs};

/// One example program and the chapter it measures.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Chapter {
    /// The example's name: `cargo run --release --example <example>`.
    pub example: &'static str,
    /// The chapter's page under `src/book/` and its title in `SUMMARY.md`.
    pub page: &'static str,
    pub title: &'static str,
    /// What a run needs on this machine.
    pub needs: Needs,
    /// Timed repetitions per measurement, unless `--reps` says otherwise.
    pub reps: FullQuick<u32>,
    /// Every figure (`.svg`) and table (`.md`) stem the example writes, each with its CSV.
    pub writes: &'static [&'static str],
    /// The arguments it runs with under compute-sanitizer: small, because the tools slow
    /// kernels down by one or two orders of magnitude. Empty for CPU-only examples.
    pub sanitizer_args: &'static [&'static str],
    /// A note for the appendix's table (how long a full run takes, what it needs).
    pub note: &'static str,
}

impl Chapter {
    /// The command a reader types to re-measure the chapter.
    pub fn command(&self) -> String {
        format!("cargo run --release --example {}", self.example)
    }

    /// Whether this example writes the figure or table `stem`.
    pub fn writes(&self, stem: &str) -> bool {
        self.writes.contains(&stem)
    }
}

pub const CEILINGS: Chapter = Chapter {
    example: "ceilings",
    page: "ceilings.md",
    title: "Measuring a GPU",
    needs: Needs::Gpu,
    reps: FullQuick::new(30, 5),
    writes: &[
        "ceilings-device",
        "ceilings-copy",
        "ceilings-transfer",
        "ceilings-launch",
        "ceilings-summary",
    ],
    sanitizer_args: &[
        "--quick",
        "--ceiling-mib",
        "8",
        "--max-transfer-mib",
        "2",
        "--reps",
        "2",
    ],
    note: "",
};

pub const MEMORY_SPACES: Chapter = Chapter {
    example: "memory_spaces",
    page: "memory_spaces.md",
    title: "Memory spaces",
    needs: Needs::Gpu,
    reps: FullQuick::new(20, 2),
    writes: &[
        "memory_spaces-map",
        "memory_spaces-signal",
        "memory_spaces-divergent",
        "memory_spaces-stencil",
        "memory_spaces-registers",
        "memory_spaces-latency",
        "memory_spaces-bandwidth",
    ],
    sanitizer_args: &["--quick", "--reps", "1"],
    note: "",
};

pub const COALESCING: Chapter = Chapter {
    example: "coalescing",
    page: "coalescing.md",
    title: "Coalescing, alignment and the transpose",
    needs: Needs::Gpu,
    reps: FullQuick::new(20, 3),
    writes: &[
        "coalescing-patterns",
        "coalescing-stride",
        "coalescing-offset",
        "coalescing-layout",
        "coalescing-banks",
        "coalescing-transpose",
        "coalescing-transpose-kernels",
        "coalescing-readonly",
        "coalescing-readonly-ptx",
    ],
    sanitizer_args: &["--quick", "--reps", "1"],
    note: "",
};

pub const LOOP_PERMUTATION: Chapter = Chapter {
    example: "loop_permutation",
    page: "tiling.md",
    title: "Reuse, loop permutation, tiling",
    needs: Needs::Cpu,
    reps: FullQuick::new(5, 2),
    writes: &["tiling-traversal", "tiling-strip", "tiling-predictions"],
    sanitizer_args: &[],
    note: "CPU only",
};

pub const TILED_MATMUL: Chapter = Chapter {
    example: "tiled_matmul",
    page: "tiling.md",
    title: "Reuse, loop permutation, tiling",
    needs: Needs::GpuAndCublas,
    reps: FullQuick::new(10, 2),
    writes: &["tiling-kernels", "tiling-verification", "tiling-matmul"],
    sanitizer_args: &["--quick", "--reps", "1", "--side", "64"],
    note: "",
};

pub const CMM_DIAGONAL: Chapter = Chapter {
    example: "cmm_diagonal",
    page: "cmm_diagonal.md",
    title: "Chained matrix multiplication and the diagonal layout",
    needs: Needs::Gpu,
    reps: FullQuick::new(10, 3),
    writes: &[
        "cmm-worked-example",
        "cmm-layout-matrix",
        "cmm-layout-memory",
        "cmm-traffic",
        "cmm-table1-compare",
        "cmm-table1-times",
        "cmm-layout-speedup",
        "cmm-breakeven",
        "cmm-breakeven-n",
        "cmm-time-vs-n",
        "cmm-stride",
        "cmm-experiments",
        "cmm-variants",
        "cmm-streams",
    ],
    sanitizer_args: &["--quick", "--reps", "1"],
    note: "",
};

pub const CMM_BEYOND: Chapter = Chapter {
    example: "cmm_beyond",
    page: "cmm_beyond.md",
    title: "CMM beyond the paper: to n = 16384",
    needs: Needs::GpuAndCublas,
    reps: FullQuick::new(10, 3),
    writes: &[
        "cmm-beyond-time-vs-n",
        "cmm-beyond-targets",
        "cmm-beyond-chains",
        "cmm-beyond-chain-table",
    ],
    // n = 130: three tiles per side, so every tiled kernel runs, the min-plus one included.
    sanitizer_args: &["--quick", "--reps", "1", "--matrices", "130"],
    note:
        "about 5 minutes on an H100 with 16 CPU cores, most of it the CPU reference at \
           n = 16384",
};

pub const ATAX: Chapter = Chapter {
    example: "atax",
    page: "atax.md",
    title: "ATAX: two matrix-vector products",
    needs: Needs::GpuAndCublas,
    reps: FullQuick::new(30, 3),
    writes: &[
        "atax-ceilings",
        "atax-kernels",
        "atax-end-to-end",
        "atax-slides",
        "atax-targets",
        "atax-playbook",
        "atax-skipped",
        "atax-speedup",
        "atax-breakdown",
        "atax-bandwidth",
    ],
    sanitizer_args: &["--quick", "--reps", "1", "--side", "257", "--ceiling-mib", "4"],
    note: "",
};

/// Every chapter's example, in the book's order.
pub const ALL: &[Chapter] = &[
    CEILINGS,
    MEMORY_SPACES,
    COALESCING,
    LOOP_PERMUTATION,
    TILED_MATMUL,
    CMM_DIAGONAL,
    CMM_BEYOND,
    ATAX,
];

/// The chapter whose example is `name`.
pub fn by_example(name: &str) -> Option<&'static Chapter> {
    ALL.iter().find(|c| c.example == name)
}

/// The example that writes the figure or table `stem`.
pub fn writer_of(stem: &str) -> Option<&'static Chapter> {
    ALL.iter().find(|c| c.writes(stem))
}

/// The appendix's table of commands, rendered from [`ALL`]: one row per chapter page, every
/// example that measures it, and every figure and table it writes.
pub fn appendix_table() -> String {
    let mut md = String::from("| chapter | command | writes |\n|---|---|---|\n");
    let mut pages: Vec<&str> = ALL.iter().map(|c| c.page).collect();
    pages.dedup();
    for page in pages {
        let examples: Vec<&Chapter> = ALL.iter().filter(|c| c.page == page).collect();
        let command = examples
            .iter()
            .map(|c| match c.note {
                "" => format!("`{}`", c.command()),
                note => format!("`{}` ({note})", c.command()),
            })
            .collect::<Vec<_>>()
            .join(" and ");
        let writes = examples
            .iter()
            .map(|c| {
                c.writes.iter().map(|s| format!("`{s}`")).collect::<Vec<_>>().join(", ")
            })
            .collect::<Vec<_>>()
            .join("; ");
        md.push_str(&format!(
            "| [{}]({page}) | {command} | {writes} |\n",
            examples[0].title
        ));
    }
    md
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_stem_has_one_writer_and_examples_are_unique() {
        let mut stems: Vec<&str> =
            ALL.iter().flat_map(|c| c.writes.iter().copied()).collect();
        let count = stems.len();
        stems.sort();
        stems.dedup();
        assert_eq!(stems.len(), count, "a figure stem is written by two examples");
        let mut examples: Vec<&str> = ALL.iter().map(|c| c.example).collect();
        examples.dedup();
        assert_eq!(examples.len(), ALL.len());
        assert_eq!(
            writer_of("cmm-beyond-chains").map(|c| c.example),
            Some("cmm_beyond")
        );
        assert_eq!(by_example("atax"), Some(&ATAX));
    }

    #[test]
    fn cpu_only_examples_have_no_sanitizer_run() {
        for c in ALL {
            assert_eq!(
                c.needs == Needs::Cpu,
                c.sanitizer_args.is_empty(),
                "{}",
                c.example
            );
        }
    }
}
