//! The counting child: the example run under ncu, which wraps each counted case's launches
//! in `cuProfilerStart`/`cuProfilerStop` after one marker launch and appends the case's label
//! to the labels file.

use std::io::Write;
use std::path::PathBuf;

use super::{Case, CHILD_ENV};
use crate::harness::ceiling::CeilingKernel;
use crate::harness::kernels::KernelTable;
use crate::harness::Gpu;

/// The counting state of a child run: where labels go and the case waiting for its launch.
pub(crate) struct Counting {
    labels: PathBuf,
    pending: Option<Case>,
    marker: Option<KernelTable<CeilingKernel>>,
}

impl Counting {
    /// The counting state if this process is a counting child.
    pub(crate) fn from_env() -> Option<Counting> {
        std::env::var_os(CHILD_ENV).map(|p| Counting {
            labels: PathBuf::from(p),
            pending: None,
            marker: None,
        })
    }
}

impl Gpu {
    /// Whether this run counts (it is the child of a `--counters` run).
    pub fn counting(&self) -> bool {
        self.counting.borrow().is_some()
    }

    /// Marks the next [`Gpu::verify_then_time`]'s work as a counted case (under
    /// `--counters`; otherwise nothing happens). Build the case only when
    /// [`Gpu::counting`] says so if its predictions cost anything.
    pub fn count_next(&self, case: Case) {
        if let Some(c) = self.counting.borrow_mut().as_mut() {
            assert!(
                c.pending.is_none(),
                "count_next(`{}`) before the previous case was launched",
                case.label
            );
            c.pending = Some(case);
        }
    }

    /// Counts `launch` as `case` under `--counters` (wrapped like a verification launch);
    /// otherwise just runs it. For work whose check comes after its timing (a pointer
    /// chase verified at its end), so the counted launch is the timed one.
    pub fn count(
        &self,
        case: Case,
        launch: impl FnOnce() -> anyhow::Result<()>,
    ) -> anyhow::Result<()> {
        if self.counting() {
            self.count_case(&case, launch)
        } else {
            launch()
        }
    }

    /// Takes the case waiting for a launch, if any.
    pub fn take_counted_case(&self) -> Option<Case> {
        self.counting.borrow_mut().as_mut().and_then(|c| c.pending.take())
    }

    /// Runs `launch` (which enqueues the case's work) between `cuProfilerStart` and
    /// `cuProfilerStop`, after the marker launch, and records the case's label.
    pub fn count_case(
        &self,
        case: &Case,
        launch: impl FnOnce() -> anyhow::Result<()>,
    ) -> anyhow::Result<()> {
        {
            let mut guard = self.counting.borrow_mut();
            let c = guard.as_mut().expect("a counting run");
            if c.marker.is_none() {
                c.marker = Some(KernelTable::load(self)?);
            }
        }
        self.stream.synchronize()?;
        self.ctx.bind_to_thread()?;
        // SAFETY: the context is current on this thread; both calls take no arguments.
        unsafe { cudarc::driver::sys::cuProfilerStart() }.result()?;
        {
            let guard = self.counting.borrow();
            let table = guard.as_ref().and_then(|c| c.marker.as_ref()).expect("loaded");
            let f = table.get(CeilingKernel::Empty);
            let cfg = cudarc::driver::LaunchConfig {
                grid_dim: (1, 1, 1),
                block_dim: (1, 1, 1),
                shared_mem_bytes: 0,
            };
            // SAFETY: `empty()` takes no parameters.
            unsafe { self.stream.launch_builder(f).launch(cfg)? };
        }
        launch()?;
        self.stream.synchronize()?;
        // SAFETY: as above.
        unsafe { cudarc::driver::sys::cuProfilerStop() }.result()?;
        let path = self.counting.borrow().as_ref().expect("counting").labels.clone();
        let mut file =
            std::fs::OpenOptions::new().create(true).append(true).open(&path)?;
        writeln!(file, "{}", case.to_line())?;
        Ok(())
    }
}
