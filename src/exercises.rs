//! The book's kernel exercises, one per chapter: the reader changes a kernel until it passes
//! the chapter's check. Each lives in `kernels/exercises_<chapter>.cu` as two functions, the
//! kernel the reader starts from (`…_exercise`) and the book's solution (`…_solution`); the
//! chapter's `exercises` module runs either through [`Gpu::verify_then_time`] with the same
//! poison, reference and comparison as the chapter's own kernels.
//!
//! `cargo run --release --example exercises -- 1.4` checks the starting kernel of exercise 1.4
//! (as the reader has changed it); `tests/gpu/gpu_exercises.rs` checks that every starting kernel,
//! as the book ships it, fails its check and every solution passes it.

use std::fmt;
use std::sync::Arc;

use cudarc::driver::{
    CudaFunction, CudaSlice, CudaStream, LaunchConfig, PushKernelArg,
};

use crate::harness::kernels::{KernelName, KernelTable};
use crate::harness::{verify, Gpu};

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

/// The two functions of a kernel exercise, named by
/// [`exercise_kernels!`](crate::exercise_kernels).
pub trait ExerciseKernels: KernelName {
    /// The function of `version`.
    fn of(version: Version) -> Self;
}

/// Writes the typed names of a kernel exercise's two functions (an enum with the variants
/// `Exercise` and `Solution`, by [`kernel_names!`](crate::kernel_names)) and their
/// [`ExerciseKernels`] impl.
#[macro_export]
macro_rules! exercise_kernels {
    (
        $(#[$meta:meta])*
        $vis:vis enum $name:ident in $file:literal {
            $(#[$exercise_meta:meta])* Exercise => $exercise:literal,
            $(#[$solution_meta:meta])* Solution => $solution:literal $(,)?
        }
    ) => {
        $crate::kernel_names! {
            $(#[$meta])*
            $vis enum $name in $file {
                $(#[$exercise_meta])* Exercise => $exercise,
                $(#[$solution_meta])* Solution => $solution,
            }
        }

        impl $crate::exercises::ExerciseKernels for $name {
            fn of(version: $crate::exercises::Version) -> Self {
                version.pick($name::Exercise, $name::Solution)
            }
        }
    };
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

/// One size that passed: the size as the book writes it, and the elements (or cells) compared.
pub type Checked = (String, usize);

/// The check every kernel exercise runs: `version`'s function of `K`, loaded for `gpu`, through
/// `check_size` at every size of `sizes`. `check_size` gets the function, its name and the
/// size, and returns the size as the book writes it with the elements (or cells) it
/// compared; the first size that fails is the error.
pub fn check_sizes<K: ExerciseKernels, S>(
    gpu: &Gpu,
    version: Version,
    sizes: impl IntoIterator<Item = S>,
    mut check_size: impl FnMut(&CudaFunction, &str, S) -> anyhow::Result<Checked>,
) -> anyhow::Result<Passed> {
    let table = KernelTable::<K>::load(gpu)?;
    let kernel = K::of(version);
    let (f, name) = (table.get(kernel), kernel.function());
    let mut passed = Passed::default();
    for size in sizes {
        let (size, checked) = check_size(f, &name, size)?;
        passed.add(size, checked);
    }
    Ok(passed)
}

/// One size of an exercise whose kernel `name` writes one float buffer as long as `want`: the
/// buffer poisoned, `launch` enqueued once, then every element compared exactly with `want`.
/// Returns the elements compared.
pub fn check_exact_output(
    gpu: &Gpu,
    name: &str,
    size: &str,
    want: &[f32],
    launch: impl FnMut(&Arc<CudaStream>, &mut CudaSlice<f32>) -> anyhow::Result<()>,
) -> anyhow::Result<usize> {
    let mut out = gpu.stream.alloc_zeros::<f32>(want.len())?;
    let verified = gpu.verify_then_time_output(
        &mut out,
        launch,
        |got: &[f32]| verify::check_exact(name, size, got, want),
        &[],
    )?;
    Ok(verified.check.checked)
}

/// One size of an exercise whose kernel `f` (named `name`) takes `(const float* in, float* out,
/// u64 n)`, both buffers `n = input.len()` floats long: `input` uploaded, the output poisoned,
/// `f` launched once with `cfg`, then every element compared exactly with `want`. Returns the
/// size as the book writes it (`n = …`) and the elements compared.
pub fn check_in_out(
    gpu: &Gpu,
    f: &CudaFunction,
    name: &str,
    input: &[f32],
    want: &[f32],
    cfg: LaunchConfig,
) -> anyhow::Result<Checked> {
    let n = input.len();
    assert_eq!(want.len(), n, "the kernel writes as many floats as it reads");
    let input = gpu.stream.clone_htod(input)?;
    let n64 = n as u64;
    let size = format!("n = {n}");
    let checked = check_exact_output(gpu, name, &size, want, |s, out| {
        // SAFETY: (const float* in, float* out, u64 n) with both buffers n floats long, and
        // the dynamic shared memory `cfg` asks for.
        unsafe { s.launch_builder(f).arg(&input).arg(out).arg(&n64).launch(cfg)? };
        Ok(())
    })?;
    Ok((size, checked))
}

/// A one-dimensional launch of `block`-thread blocks for a kernel that strides over its
/// elements: `blocks` blocks, but at least one and at most `per_sm` for each SM of `gpu`.
pub fn grid_stride_config(
    gpu: &Gpu,
    blocks: usize,
    per_sm: usize,
    block: u32,
    shared_mem_bytes: u32,
) -> LaunchConfig {
    LaunchConfig {
        grid_dim: (blocks.clamp(1, per_sm * gpu.info.sms as usize) as u32, 1, 1),
        block_dim: (block, 1, 1),
        shared_mem_bytes,
    }
}

/// The function of `version` of the exercise `K`, by name.
fn function_of<K: ExerciseKernels>(version: Version) -> String {
    K::of(version).function()
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
pub const ALL: [KernelExercise; 9] = [
    KernelExercise {
        id: "1.4",
        page: "ceilings.md",
        file: "exercises_ceilings.cu",
        function: function_of::<crate::ceilings::exercises::CopyVec4>,
        check: crate::ceilings::exercises::check_copy_vec4,
    },
    KernelExercise {
        id: "2.4",
        page: "memory_spaces.md",
        file: "exercises_memory_spaces.cu",
        function: function_of::<crate::memory_spaces::exercises::StencilTile>,
        check: crate::memory_spaces::exercises::check_stencil_tile,
    },
    KernelExercise {
        id: "3.4",
        page: "coalescing.md",
        file: "exercises_coalescing.cu",
        function: function_of::<crate::coalescing::exercises::TransposeTile>,
        check: crate::coalescing::exercises::check_transpose_tile,
    },
    KernelExercise {
        id: "4.3",
        page: "tiling.md",
        file: "exercises_tiling.cu",
        function: function_of::<crate::tiling::exercises::MatmulTile>,
        check: crate::tiling::exercises::check_matmul_tile,
    },
    KernelExercise {
        id: "5.4",
        page: "cmm_diagonal.md",
        file: "exercises_cmm_diagonal.cu",
        function: function_of::<crate::cmm::exercises::CellPerThread>,
        check: crate::cmm::exercises::check_cell_per_thread,
    },
    KernelExercise {
        id: "6.3",
        page: "cmm_beyond.md",
        file: "exercises_cmm_beyond.cu",
        function: function_of::<crate::cmm::beyond::exercises::WarpPerCell>,
        check: crate::cmm::beyond::exercises::check_warp_per_cell,
    },
    KernelExercise {
        id: "7.4",
        page: "atax.md",
        file: "exercises_atax.cu",
        function: function_of::<crate::atax::exercises::TmpWarp>,
        check: crate::atax::exercises::check_tmp_warp,
    },
    KernelExercise {
        id: "8.4",
        page: "hopper_memory.md",
        file: "exercises_hopper.cu",
        function: function_of::<crate::hopper_memory::exercises::TransposePitched>,
        check: crate::hopper_memory::exercises::check_transpose_pitched,
    },
    KernelExercise {
        id: "9.5",
        page: "multi_gpu.md",
        file: "exercises_multi_gpu.cu",
        function: function_of::<crate::multi_gpu::exercises::PeerCopyExercise>,
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
