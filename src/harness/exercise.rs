//! The mechanism of the book's kernel exercises: the reader changes a kernel until it passes
//! the chapter's check. Each lives in `kernels/exercises_<chapter>.cu` as two functions, the
//! kernel the reader starts from (`…_exercise`) and the book's solution (`…_solution`); the
//! chapter's `exercises` module runs either through [`Gpu::verify_then_time`] with the same
//! poison, reference and comparison as the chapter's own kernels, and names itself in its
//! chapter's entry ([`Exercise`]). The index of every exercise, with its number, is derived from
//! the chapter list (the top floor's `chapters::exercises`).

use std::fmt;
use std::sync::Arc;

use cudarc::driver::{
    CudaFunction, CudaSlice, CudaStream, LaunchConfig, PushKernelArg,
};

use super::kernels::{KernelName, KernelTable};
use super::{verify, Gpu};

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

        impl $crate::harness::exercise::ExerciseKernels for $name {
            fn of(version: $crate::harness::exercise::Version) -> Self {
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

/// The function of `version` of the exercise `K`, by name: what an [`Exercise`] entry's
/// `function` is, written `function_of::<K>`.
pub fn function_of<K: ExerciseKernels>(version: Version) -> String {
    K::of(version).function()
}

/// A chapter's kernel exercise, as its entry declares it; its id (`"1.4"`) follows from the
/// chapter's place in the book and `number`.
#[derive(Clone, Copy)]
pub struct Exercise {
    /// Its number among the chapter's exercises: 4 in "Exercise 1.4".
    pub number: u32,
    /// The kernel file under `kernels/`.
    pub file: &'static str,
    /// The function of each version, from the chapter's typed kernel names.
    pub function: fn(Version) -> String,
    /// Runs one version through the chapter's check: `Ok` when every size passed, the first
    /// [`crate::harness::Mismatch`] (as the error) when one did not.
    pub check: fn(&Gpu, Version) -> anyhow::Result<Passed>,
}

impl fmt::Debug for Exercise {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Exercise({} in kernels/{})", self.number, self.file)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn passed_lists_its_sizes() {
        let mut p = Passed::default();
        p.add("n = 3", 3);
        p.add("n = 5", 5);
        assert_eq!(p.to_string(), "8 elements checked against the CPU at n = 3; n = 5");
    }
}
