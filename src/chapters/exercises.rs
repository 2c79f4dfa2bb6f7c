//! The index of the book's kernel exercises, derived from [`ALL`]: each chapter's entry names
//! its exercise and its number there; the chapter's number is its place in the book (pages in
//! the order of [`ALL`], which is `SUMMARY.md`'s), so `"1.4"` is exercise 4 of the first
//! chapter. `cargo run --release --example exercises -- 1.4` runs one of them.

use super::{Chapter, ALL};
use crate::harness::exercise::Exercise;
pub use crate::harness::exercise::Version;

/// One kernel exercise with its place in the book.
#[derive(Debug, Clone, Copy)]
pub struct KernelExercise {
    /// Its id as the book writes it: `1.4`.
    pub chapter: usize,
    pub number: u32,
    /// The chapter's page under `src/book/`.
    pub page: &'static str,
    /// What the chapter's entry declares: file, functions and check.
    pub exercise: Exercise,
}

impl KernelExercise {
    /// `"1.4"`.
    pub fn id(&self) -> String {
        format!("{}.{}", self.chapter, self.number)
    }
}

/// The chapter number of each page, in the book's order (two examples may share a page).
fn chapter_numbers() -> Vec<(&'static str, usize)> {
    let mut pages: Vec<&'static str> = Vec::new();
    for c in ALL {
        if !pages.contains(&c.page) {
            pages.push(c.page);
        }
    }
    pages.into_iter().zip(1..).collect()
}

/// Every kernel exercise, in the book's order.
pub fn all() -> Vec<KernelExercise> {
    let numbers = chapter_numbers();
    let number_of = |c: &Chapter| {
        numbers
            .iter()
            .find(|(p, _)| *p == c.page)
            .map(|&(_, n)| n)
            .expect("listed above")
    };
    ALL.iter()
        .filter_map(|c| {
            c.exercise.map(|exercise| KernelExercise {
                chapter: number_of(c),
                number: exercise.number,
                page: c.page,
                exercise,
            })
        })
        .collect()
}

/// The kernel exercise `id` (`"1.4"`), if there is one.
pub fn find(id: &str) -> Option<KernelExercise> {
    all().into_iter().find(|e| e.id() == id)
}

/// The ids of every kernel exercise, for messages.
pub fn ids() -> Vec<String> {
    all().iter().map(KernelExercise::id).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_are_unique_found_and_numbered_by_page() {
        let all = all();
        for e in &all {
            assert_eq!(find(&e.id()).map(|f| f.exercise.file), Some(e.exercise.file));
        }
        let mut ids = ids();
        ids.dedup();
        assert_eq!(ids.len(), all.len());
        assert!(find("9.9").is_none());
        // Two examples share the tiling page: chapter numbers follow pages, not examples.
        assert_eq!(
            all.iter().find(|e| e.page == "tiling.md").map(|e| e.id()),
            Some("4.3".into())
        );
        assert_eq!(all.last().map(|e| e.id()), Some("9.5".into()));
    }

    #[test]
    fn each_exercise_names_two_functions_of_its_own_file() {
        for e in all() {
            let file = e.exercise.file;
            let source = crate::harness::kernels::source(file)
                .unwrap_or_else(|| panic!("kernels/{file} is not registered"))
                .source;
            for version in [Version::Exercise, Version::Solution] {
                let f = (e.exercise.function)(version);
                assert!(
                    source.contains(&format!("__global__ void {f}(")),
                    "kernels/{file} defines no `{f}`"
                );
            }
            assert!((e.exercise.function)(Version::Exercise).ends_with("_exercise"));
            assert!((e.exercise.function)(Version::Solution).ends_with("_solution"));
        }
    }
}
