//! The book's kernel exercises, one per chapter: the reader changes a kernel until it passes
//! the chapter's check. Each lives in `kernels/exercises_<chapter>.cu` as two functions, the
//! kernel the reader starts from (`…_exercise`) and the book's solution (`…_solution`); the
//! chapter's `exercises` module runs either through [`Gpu::verify_then_time`] with the same
//! poison, reference and comparison as the chapter's own kernels.
//!
//! `cargo run --release --example exercises -- 1.4` checks the starting kernel of exercise 1.4
//! (as the reader has changed it); `tests/gpu_exercises.rs` checks that every starting kernel,
//! as the book ships it, fails its check and every solution passes it.

use std::fmt;

use crate::harness::kernels::KernelName;
use crate::harness::Gpu;

/// Which of an exercise's two kernels to run.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Version {
    /// The kernel the reader starts from and changes (`…_exercise`).
    Exercise,
    /// The book's solution (`…_solution`).
    Solution,
}

impl Version {
    /// `exercise` or `solution`, whichever this version names.
    pub fn pick<K>(self, exercise: K, solution: K) -> K {
        match self {
            Version::Exercise => exercise,
            Version::Solution => solution,
        }
    }
}

/// What a passing check compared: the sizes, and the elements (or table cells) over all of
/// them.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Passed {
    pub sizes: Vec<String>,
    pub checked: usize,
}

impl Passed {
    /// Records one size that passed, with the elements it compared.
    pub fn add(&mut self, size: impl Into<String>, checked: usize) {
        self.sizes.push(size.into());
        self.checked += checked;
    }
}

impl fmt::Display for Passed {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{} elements checked against the CPU at {}",
            self.checked,
            self.sizes.join("; ")
        )
    }
}

/// One kernel exercise.
#[derive(Clone, Copy)]
pub struct KernelExercise {
    /// `"1.4"`: chapter 1 (its position in `SUMMARY.md`), exercise 4.
    pub id: &'static str,
    /// The chapter's page under `src/book/`.
    pub page: &'static str,
    /// The kernel file under `kernels/`.
    pub file: &'static str,
    /// The function of each version, from the chapter's typed kernel names.
    pub function: fn(Version) -> String,
    /// Runs one version through the chapter's check: `Ok` when every size passed, the first
    /// [`crate::harness::Mismatch`] (as the error) when one did not.
    pub check: fn(&Gpu, Version) -> anyhow::Result<Passed>,
}

impl fmt::Debug for KernelExercise {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "KernelExercise({} in kernels/{})", self.id, self.file)
    }
}

/// Every kernel exercise, in the book's order.
pub const ALL: [KernelExercise; 8] = [
    KernelExercise {
        id: "1.4",
        page: "ceilings.md",
        file: "exercises_ceilings.cu",
        function: |v| {
            v.pick(
                crate::ceilings::exercises::CopyVec4::Exercise,
                crate::ceilings::exercises::CopyVec4::Solution,
            )
            .function()
        },
        check: crate::ceilings::exercises::check_copy_vec4,
    },
    KernelExercise {
        id: "2.4",
        page: "memory_spaces.md",
        file: "exercises_memory_spaces.cu",
        function: |v| {
            v.pick(
                crate::memory_spaces::exercises::StencilTile::Exercise,
                crate::memory_spaces::exercises::StencilTile::Solution,
            )
            .function()
        },
        check: crate::memory_spaces::exercises::check_stencil_tile,
    },
    KernelExercise {
        id: "3.4",
        page: "coalescing.md",
        file: "exercises_coalescing.cu",
        function: |v| {
            v.pick(
                crate::coalescing::exercises::TransposeTile::Exercise,
                crate::coalescing::exercises::TransposeTile::Solution,
            )
            .function()
        },
        check: crate::coalescing::exercises::check_transpose_tile,
    },
    KernelExercise {
        id: "4.3",
        page: "tiling.md",
        file: "exercises_tiling.cu",
        function: |v| {
            v.pick(
                crate::tiling::exercises::MatmulTile::Exercise,
                crate::tiling::exercises::MatmulTile::Solution,
            )
            .function()
        },
        check: crate::tiling::exercises::check_matmul_tile,
    },
    KernelExercise {
        id: "5.4",
        page: "cmm_diagonal.md",
        file: "exercises_cmm_diagonal.cu",
        function: |v| {
            v.pick(
                crate::cmm::exercises::CellPerThread::Exercise,
                crate::cmm::exercises::CellPerThread::Solution,
            )
            .function()
        },
        check: crate::cmm::exercises::check_cell_per_thread,
    },
    KernelExercise {
        id: "6.3",
        page: "cmm_beyond.md",
        file: "exercises_cmm_beyond.cu",
        function: |v| {
            v.pick(
                crate::cmm::beyond::exercises::WarpPerCell::Exercise,
                crate::cmm::beyond::exercises::WarpPerCell::Solution,
            )
            .function()
        },
        check: crate::cmm::beyond::exercises::check_warp_per_cell,
    },
    KernelExercise {
        id: "7.4",
        page: "atax.md",
        file: "exercises_atax.cu",
        function: |v| {
            v.pick(
                crate::atax::exercises::TmpWarp::Exercise,
                crate::atax::exercises::TmpWarp::Solution,
            )
            .function()
        },
        check: crate::atax::exercises::check_tmp_warp,
    },
    KernelExercise {
        id: "8.5",
        page: "multi_gpu.md",
        file: "exercises_multi_gpu.cu",
        function: |v| {
            v.pick(
                crate::multi_gpu::exercises::PeerCopyExercise::Exercise,
                crate::multi_gpu::exercises::PeerCopyExercise::Solution,
            )
            .function()
        },
        check: crate::multi_gpu::exercises::check_peer_copy,
    },
];

/// The kernel exercise `id` (`"1.4"`), if there is one.
pub fn find(id: &str) -> Option<&'static KernelExercise> {
    ALL.iter().find(|e| e.id == id)
}

/// The ids of every kernel exercise, for messages.
pub fn ids() -> Vec<&'static str> {
    ALL.iter().map(|e| e.id).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_are_unique_and_found() {
        for e in &ALL {
            assert_eq!(find(e.id).map(|f| f.file), Some(e.file));
        }
        let mut ids = ids();
        ids.dedup();
        assert_eq!(ids.len(), ALL.len());
        assert!(find("9.9").is_none());
    }

    #[test]
    fn each_exercise_names_two_functions_of_its_own_file() {
        for e in &ALL {
            let source = crate::harness::kernels::source(e.file)
                .unwrap_or_else(|| panic!("kernels/{} is not registered", e.file))
                .source;
            for version in [Version::Exercise, Version::Solution] {
                let f = (e.function)(version);
                assert!(
                    source.contains(&format!("__global__ void {f}(")),
                    "kernels/{} defines no `{f}`",
                    e.file
                );
            }
            assert!((e.function)(Version::Exercise).ends_with("_exercise"));
            assert!((e.function)(Version::Solution).ends_with("_solution"));
        }
    }

    #[test]
    fn passed_lists_its_sizes() {
        let mut p = Passed::default();
        p.add("n = 3", 3);
        p.add("n = 5", 5);
        assert_eq!(p.to_string(), "8 elements checked against the CPU at n = 3; n = 5");
    }
}
