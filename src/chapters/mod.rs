//! The top floor: the one list of the book's chapters ([`ALL`]) and the work that spans them.
//! Each chapter declares its own entry (`pub const CHAPTER` in its folder's `mod.rs`, a
//! [`Chapter`]); this module only lists them in the book's order. `reproduce`
//! ([`reproduce`]), the roofline composed from every chapter's records ([`roofline`]), the
//! index of kernel exercises ([`exercises`]), the command-line tests, the figure audit and the
//! appendix's table of commands all read the list; nothing else lists the chapters.
//!
//! **Adding a chapter** takes one folder `src/<stem>/` (its `mod.rs` declares `CHAPTER`, its
//! `args.rs` the flags, with their defaults, its `measure.rs` and `report.rs` the work), its
//! kernels `kernels/<stem>.cu` (and `kernels/exercises_<stem>.cu`), a one-call example
//! `examples/<stem>.rs`, one line `pub mod <stem>;` in `lib.rs`, one line in [`ALL`], its page
//! `src/book/<stem>.md` and its line in `SUMMARY.md`. The tests then check the rest: every
//! figure it writes has a declared stem, its page opens and closes as every chapter does, its
//! exercise is numbered from its place in the book.

pub mod diagrams;
pub mod exercises;
#[cfg(test)]
mod layering;
pub mod reproduce;
pub mod reproduce_args;
pub mod roofline;

pub use crate::harness::chapter::Chapter;
#[cfg(test)]
use crate::harness::run::Needs;

/// Every chapter's example, in the book's order.
pub const ALL: &[Chapter] = &[
    crate::ceilings::CHAPTER,
    crate::memory_spaces::CHAPTER,
    crate::coalescing::CHAPTER,
    crate::tiling::loop_permutation::CHAPTER,
    crate::tiling::tiled_matmul::CHAPTER,
    crate::cmm::diagonal::CHAPTER,
    crate::cmm::beyond::CHAPTER,
    crate::atax::CHAPTER,
    crate::hopper_memory::CHAPTER,
    crate::multi_gpu::CHAPTER,
];

/// Whether `reproduce` writes `stem` itself (not a chapter's measurement): the sanitizer
/// table, the roofline figures it composes from the chapters' records ([`roofline::STEMS`])
/// and the diagrams it computes from the chapters' models or composes from their records
/// ([`diagrams::STEMS`]).
pub fn reproduce_writes(stem: &str) -> bool {
    stem == reproduce::SANITIZER_STEM
        || roofline::STEMS.contains(&stem)
        || diagrams::STEMS.contains(&stem)
}

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
        assert_eq!(by_example("atax"), Some(&crate::atax::CHAPTER));
    }

    #[test]
    fn the_counted_parts_have_their_stems_listed() {
        use crate::harness::counters::counters_stems;
        let pitched = counters_stems(&crate::atax::CHAPTER, Some("pitched"));
        assert_eq!(pitched.unwrap(), ("atax-pitched-counters", "atax-pitched-counted"));
        assert!(
            counters_stems(&crate::tiling::loop_permutation::CHAPTER, None).is_err()
        );
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
