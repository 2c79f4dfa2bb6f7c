//! What a chapter's entry says about its example: what it needs, what it writes, how it runs
//! under the sanitizers, its headline numbers and claims, and its kernel exercise. Each
//! chapter's folder declares its own (`pub const CHAPTER: Chapter` in its `mod.rs`); the list
//! of them, in the book's order, is the top floor's `chapters::ALL`. This module holds only the type,
//! so that the harness can run any chapter without knowing which chapters exist.

use super::args::FullQuick;
use super::compare::{Claim, Headline};
use super::exercise::Exercise;

/// One example program and the chapter it measures.
#[derive(Debug, Clone, Copy)]
pub struct Chapter {
    /// The example's name: `cargo run --release --example <example>`.
    pub example: &'static str,
    /// The chapter's page under `src/book/` and its title in `SUMMARY.md`.
    pub page: &'static str,
    pub title: &'static str,
    /// What a run needs on this machine: libraries, GPU, memory.
    pub needs: Needs,
    /// Timed repetitions per measurement, unless `--reps` says otherwise.
    pub reps: FullQuick<u32>,
    /// Every figure (`.svg`) and table (`.md`) stem the example writes, each with its CSV.
    pub writes: &'static [&'static str],
    /// What `--counters` writes (empty where nothing is counted yet): the hardware counters of
    /// its key kernels (`<stem>-counters`) and the table of predicted vs counted
    /// (`<stem>-counted`). See [`super::counters`].
    pub counted: &'static [&'static str],
    /// The arguments it runs with under compute-sanitizer: small, because the tools slow
    /// kernels down by one or two orders of magnitude. Empty for CPU-only examples.
    pub sanitizer_args: &'static [&'static str],
    /// A note for the appendix's table (how long a full run takes, what it needs).
    pub note: &'static str,
    /// The numbers a reader's run is compared with the book's on.
    pub headlines: &'static [Headline],
    /// What the chapter claims, checked on the reader's data and the book's.
    pub claims: &'static [Claim],
    /// The chapter's kernel exercise, if this example's page has one.
    pub exercise: Option<Exercise>,
}

/// Two entries are the same chapter when they name the same example (names are unique).
impl PartialEq for Chapter {
    fn eq(&self, other: &Self) -> bool {
        self.example == other.example
    }
}

impl Chapter {
    /// The command a reader types to re-measure the chapter.
    pub fn command(&self) -> String {
        format!("cargo run --release --example {}", self.example)
    }

    /// Whether this example writes the figure or table `stem`.
    pub fn writes(&self, stem: &str) -> bool {
        self.writes.contains(&stem) || self.counted.contains(&stem)
    }
}

/// What a run opens before it measures: the libraries and devices its start-up checks for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Opens {
    /// Nothing but the CPU.
    Cpu,
    /// A CUDA GPU, its driver and NVRTC.
    Gpu,
    /// A CUDA GPU, its driver, NVRTC and cuBLAS.
    GpuAndCublas,
    /// One or more CUDA GPUs, their driver, NVRTC and NCCL.
    GpuAndNccl,
}

/// A GPU feature that some section of a chapter uses, and the compute capability that
/// brings it. A GPU below it still runs the chapter's other sections.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Feature {
    pub name: &'static str,
    pub cc: (u32, u32),
}

impl Feature {
    pub const CLUSTERS: Feature = Feature { name: "thread-block clusters", cc: (9, 0) };
    pub const TMA: Feature = Feature { name: "TMA", cc: (9, 0) };
    pub const CP_ASYNC: Feature = Feature { name: "cp.async", cc: (8, 0) };
}

const GIB: f64 = (1u64 << 30) as f64;

/// What a chapter's run needs: what it opens, the compute capability below which nothing of it
/// runs, the features of its optional sections, the device memory of its largest allocation
/// at its default sizes (full and `--quick`, without the L2 flush buffer of twice the L2 that
/// every L2-cold timing adds), and how many GPUs it takes to measure all of it.
///
/// Written from the chapter's sizes: each chapter's tests compare `memory` with what its
/// default settings allocate.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Needs {
    pub opens: Opens,
    pub min_cc: (u32, u32),
    pub features: &'static [Feature],
    pub memory: FullQuick<u64>,
    /// GPUs for the whole chapter (a run on fewer measures less and says what it left out).
    pub gpus: u32,
    /// Whether its default sizes are lowered to fit a GPU with less free memory than
    /// `memory` (see [`super::fit`]); a size the reader gives is not.
    pub fits_smaller: bool,
}

#[allow(non_upper_case_globals)]
impl Needs {
    /// Nothing but the CPU.
    pub const Cpu: Needs = Needs::opening(Opens::Cpu);
    /// A GPU (any from compute capability 7.0), its driver and NVRTC.
    pub const Gpu: Needs = Needs::opening(Opens::Gpu);
    /// [`Needs::Gpu`] and cuBLAS.
    pub const GpuAndCublas: Needs = Needs::opening(Opens::GpuAndCublas);
    /// GPUs, their driver, NVRTC and NCCL.
    pub const GpuAndNccl: Needs = Needs::opening(Opens::GpuAndNccl);

    const fn opening(opens: Opens) -> Needs {
        let min_cc = if matches!(opens, Opens::Cpu) { (0, 0) } else { (7, 0) };
        Needs {
            opens,
            min_cc,
            features: &[],
            memory: FullQuick::new(0, 0),
            gpus: 0,
            fits_smaller: false,
        }
    }

    /// The same, with optional sections that use `features`.
    pub const fn features(self, features: &'static [Feature]) -> Needs {
        Needs { features, ..self }
    }

    /// The same, allocating at most `full` bytes of device memory at a default full run and
    /// `quick` at a `--quick` one.
    pub const fn memory(self, full: u64, quick: u64) -> Needs {
        Needs { memory: FullQuick::new(full, quick), ..self }
    }

    /// The same, its default sizes lowered to fit a GPU with less free memory.
    pub const fn fits_smaller(self) -> Needs {
        Needs { fits_smaller: true, ..self }
    }

    /// The same, measured whole only on `gpus` GPUs.
    pub const fn gpus(self, gpus: u32) -> Needs {
        Needs { gpus, ..self }
    }

    /// Whether it opens a GPU at all.
    pub fn gpu(&self) -> bool {
        self.opens != Opens::Cpu
    }

    /// The line `--help` ends with: what must be installed.
    pub fn help_line(&self) -> &'static str {
        match self.opens {
            Opens::Cpu => "Needs: no GPU (it measures the CPU).",
            Opens::Gpu => {
                "Needs: an NVIDIA GPU with a driver for CUDA 12.0 or newer, and NVRTC of the \
                 driver's major version (a toolkit, or the nvidia-cuda-nvrtc wheel)."
            }
            Opens::GpuAndCublas => {
                "Needs: an NVIDIA GPU with a driver for CUDA 12.0 or newer, and NVRTC and \
                 cuBLAS of the driver's major version (a toolkit, or the nvidia-* wheels)."
            }
            Opens::GpuAndNccl => {
                "Needs: one or more NVIDIA GPUs with a driver for CUDA 12.0 or newer, NVRTC \
                 of the driver's major version, and NCCL (libnccl.so) on the loader path."
            }
        }
    }

    /// The line after it: which GPU, how much of its memory, how many of them. `None` for a
    /// CPU-only run.
    pub fn gpu_line(&self) -> Option<String> {
        if !self.gpu() {
            return None;
        }
        let (major, minor) = self.min_cc;
        let mut line = format!("GPU: compute capability {major}.{minor} or newer");
        if let Some(sections) = features_sentence(self.features) {
            line.push_str(&format!(" ({sections})"));
        }
        let gib = |b: u64| b as f64 / GIB;
        let smaller = if self.fits_smaller { ", less on a smaller GPU" } else { "" };
        line.push_str(&format!(
            ", {:.1} GiB of device memory{smaller} ({:.2} GiB with --quick)",
            gib(self.memory.full),
            gib(self.memory.quick)
        ));
        if self.gpus > 1 {
            line.push_str(&format!(", {} GPUs for all of it", self.gpus));
        }
        line.push('.');
        Some(line)
    }
}

/// `thread-block clusters and TMA sections need 9.0, cp.async sections 8.0`: the features
/// grouped by the capability they need, newest first. `None` without features.
pub fn features_sentence(features: &[Feature]) -> Option<String> {
    let mut ccs: Vec<(u32, u32)> = features.iter().map(|f| f.cc).collect();
    ccs.sort_unstable_by(|a, b| b.cmp(a));
    ccs.dedup();
    let parts: Vec<String> = ccs
        .iter()
        .enumerate()
        .map(|(i, cc)| {
            let names: Vec<&str> =
                features.iter().filter(|f| f.cc == *cc).map(|f| f.name).collect();
            let verb = if i == 0 { " need" } else { "" };
            format!("{} sections{verb} {}.{}", names.join(" and "), cc.0, cc.1)
        })
        .collect();
    (!parts.is_empty()).then(|| parts.join(", "))
}

/// Checks a chapter's declared memory against the largest allocation its default sizes make,
/// `peak.full` and `peak.quick` bytes: the declaration covers it and is not more than 5 %
/// (or 1 MiB) above it. For the chapters' own tests.
#[cfg(test)]
pub fn check_declared_memory(chapter: &Chapter, peak: FullQuick<u64>) {
    for (declared, peak, run) in [
        (chapter.needs.memory.full, peak.full, "a full run"),
        (chapter.needs.memory.quick, peak.quick, "a --quick run"),
    ] {
        let slack = (peak / 20).max(1 << 20);
        assert!(
            (peak..=peak + slack).contains(&declared),
            "{}: {run} allocates {peak} bytes at once, the entry declares {declared}",
            chapter.example
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_gpu_line_names_capability_features_memory_and_gpus() {
        let needs = Needs::GpuAndCublas
            .features(&[Feature::CLUSTERS, Feature::CP_ASYNC, Feature::TMA])
            .memory(5 << 29, 3 << 28)
            .gpus(2);
        assert_eq!(
            needs.gpu_line().unwrap(),
            "GPU: compute capability 7.0 or newer (thread-block clusters and TMA sections \
             need 9.0, cp.async sections 8.0), 2.5 GiB of device memory (0.75 GiB with \
             --quick), 2 GPUs for all of it."
        );
        assert_eq!(
            Needs::Gpu.memory(1 << 30, 1 << 24).gpu_line().unwrap(),
            "GPU: compute capability 7.0 or newer, 1.0 GiB of device memory (0.02 GiB \
             with --quick)."
        );
        assert_eq!(Needs::Cpu.gpu_line(), None);
        assert_eq!(
            Needs::Gpu.memory(8 << 30, 1 << 27).fits_smaller().gpu_line().unwrap(),
            "GPU: compute capability 7.0 or newer, 8.0 GiB of device memory, less on a \
             smaller GPU (0.12 GiB with --quick)."
        );
    }

    #[test]
    fn what_a_run_opens_decides_the_libraries_line() {
        assert!(Needs::GpuAndCublas.memory(1, 1).help_line().contains("cuBLAS"));
        assert!(Needs::GpuAndNccl.help_line().contains("NCCL"));
        assert!(!Needs::Cpu.gpu() && Needs::Gpu.gpu());
    }
}
