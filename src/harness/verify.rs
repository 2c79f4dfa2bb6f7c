//! Checking GPU results against CPU references.
//!
//! Three habits make a check worth having:
//! - **poison** the output before the launch (every byte `0xFF`: NaN for floats, all-ones for
//!   integers), so an element the kernel never wrote cannot pass by holding an old right answer;
//! - compare integers **exactly** and floats within `abs + rel·|want|`, where **NaN never passes**;
//! - on failure, name the kernel, the size and the first wrong index, and stop the program.

use std::fmt;

use std::sync::Arc;

use cudarc::driver::{CudaSlice, CudaStream, DevicePtrMut, DeviceRepr};

use super::gpu::Gpu;
use super::stats::Stats;
use super::timing::Plan;

/// Float tolerance: `|got - want| <= abs + rel * |want|`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Tolerance {
    pub abs: f64,
    pub rel: f64,
}

impl Tolerance {
    pub const fn new(abs: f64, rel: f64) -> Self {
        Self { abs, rel }
    }

    // ANCHOR: accepts
    /// Whether `got` is close enough to `want`. NaN (in either) is never close;
    /// infinities pass only when both are the same infinity.
    pub fn accepts(&self, got: f64, want: f64) -> bool {
        if got.is_nan() || want.is_nan() {
            return false;
        }
        if got.is_infinite() || want.is_infinite() {
            return got == want;
        }
        (got - want).abs() <= self.abs + self.rel * want.abs()
    }
    // ANCHOR_END: accepts
}

/// What a passing check saw: the worst error over all elements.
#[derive(Debug, Clone, PartialEq)]
pub struct Report {
    pub checked: usize,
    pub max_abs_err: f64,
    pub max_rel_err: f64,
    pub worst_index: usize,
}

impl fmt::Display for Report {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{} elements ok, worst abs err {:.2e}, rel err {:.2e} (at {})",
            self.checked, self.max_abs_err, self.max_rel_err, self.worst_index
        )
    }
}

/// A failed check. Its message names kernel, size and the first wrong index.
#[derive(Debug, Clone, PartialEq)]
pub struct Mismatch {
    pub kernel: String,
    pub size: String,
    pub index: usize,
    pub got: String,
    pub want: String,
    pub wrong: usize,
    pub total: usize,
}

impl fmt::Display for Mismatch {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "verification FAILED: kernel `{}` at size {}: element {} is {}, expected {} ({} of {} elements wrong)",
            self.kernel, self.size, self.index, self.got, self.want, self.wrong, self.total
        )
    }
}

impl std::error::Error for Mismatch {}

fn length_mismatch(kernel: &str, size: &str, got: usize, want: usize) -> Mismatch {
    Mismatch {
        kernel: kernel.to_string(),
        size: size.to_string(),
        index: got.min(want),
        got: format!("a buffer of {got} elements"),
        want: format!("{want} elements"),
        wrong: got.abs_diff(want),
        total: want,
    }
}

/// Compares floats (anything that widens to `f64`) within `tol`.
pub fn check_close<T, U>(
    kernel: &str,
    size: &str,
    got: &[T],
    want: &[U],
    tol: Tolerance,
) -> Result<Report, Mismatch>
where
    T: Copy + Into<f64>,
    U: Copy + Into<f64>,
{
    if got.len() != want.len() {
        return Err(length_mismatch(kernel, size, got.len(), want.len()));
    }
    let mut first_bad: Option<usize> = None;
    let mut wrong = 0usize;
    let mut report = Report {
        checked: got.len(),
        max_abs_err: 0.0,
        max_rel_err: 0.0,
        worst_index: 0,
    };
    for (i, (&g, &w)) in got.iter().zip(want).enumerate() {
        let (g, w): (f64, f64) = (g.into(), w.into());
        if !tol.accepts(g, w) {
            wrong += 1;
            first_bad.get_or_insert(i);
            continue;
        }
        let abs = (g - w).abs();
        if abs > report.max_abs_err {
            report.max_abs_err = abs;
            report.worst_index = i;
        }
        if w != 0.0 {
            report.max_rel_err = report.max_rel_err.max(abs / w.abs());
        }
    }
    match first_bad {
        None => Ok(report),
        Some(i) => Err(Mismatch {
            kernel: kernel.to_string(),
            size: size.to_string(),
            index: i,
            got: format!("{:e}", got[i].into()),
            want: format!("{:e}", want[i].into()),
            wrong,
            total: got.len(),
        }),
    }
}

/// Compares exactly (integers, or bit patterns of a copy).
pub fn check_exact<T>(
    kernel: &str,
    size: &str,
    got: &[T],
    want: &[T],
) -> Result<Report, Mismatch>
where
    T: PartialEq + fmt::Debug,
{
    if got.len() != want.len() {
        return Err(length_mismatch(kernel, size, got.len(), want.len()));
    }
    let mut wrong = got.iter().zip(want).enumerate().filter(|(_, (g, w))| g != w);
    match wrong.next() {
        None => Ok(Report {
            checked: got.len(),
            max_abs_err: 0.0,
            max_rel_err: 0.0,
            worst_index: 0,
        }),
        Some((i, (g, w))) => Err(Mismatch {
            kernel: kernel.to_string(),
            size: size.to_string(),
            index: i,
            got: format!("{g:?}"),
            want: format!("{w:?}"),
            wrong: 1 + wrong.count(),
            total: got.len(),
        }),
    }
}

/// [`check_exact`] of `got(i)` against `want(i)` for each index below `len`: for outputs
/// too large to hold a second copy of on the host, or compared through a view (a float's
/// bits).
pub fn check_exact_by<T>(
    kernel: &str,
    size: &str,
    len: usize,
    got: impl Fn(usize) -> T,
    want: impl Fn(usize) -> T,
) -> Result<Report, Mismatch>
where
    T: PartialEq + fmt::Debug,
{
    let mut wrong = (0..len).filter(|&i| got(i) != want(i));
    match wrong.next() {
        None => Ok(Report {
            checked: len,
            max_abs_err: 0.0,
            max_rel_err: 0.0,
            worst_index: 0,
        }),
        Some(i) => Err(Mismatch {
            kernel: kernel.to_string(),
            size: size.to_string(),
            index: i,
            got: format!("{:?}", got(i)),
            want: format!("{:?}", want(i)),
            wrong: 1 + wrong.count(),
            total: len,
        }),
    }
}

/// What verified (and, if plans were given, timed) GPU work produced: the check's report and
/// one summary per plan.
#[derive(Debug, Clone)]
pub struct Verified<R> {
    pub check: R,
    pub times: Vec<Stats>,
}

impl<R> Verified<R> {
    /// The one timing, when exactly one plan was given.
    pub fn time(&self) -> &Stats {
        assert_eq!(
            self.times.len(),
            1,
            "verified work timed under {} plans",
            self.times.len()
        );
        &self.times[0]
    }
}

impl Gpu {
    // ANCHOR: verify_then_time
    /// Correct before fast: the one protocol every GPU result of the book goes through.
    ///
    /// 1. `poison` fills every output with `0xFF` bytes (NaN as a float, all-ones as an
    ///    integer), so an element the work never writes cannot pass with an
    ///    old right answer;
    /// 2. `work` is enqueued once and the stream synchronised;
    /// 3. `check` reads the outputs back and compares them with the CPU's: a wrong
    ///    result ends the run here, as an error, before anything is timed;
    /// 4. only then is `work` timed, once under each of `plans` (none: verify only).
    ///
    /// `state` holds the buffers the three steps share (each step borrows it in turn).
    pub fn verify_then_time<S: ?Sized, R>(
        &self,
        state: &mut S,
        poison: impl FnOnce(&Gpu, &mut S) -> anyhow::Result<()>,
        mut work: impl FnMut(&Arc<CudaStream>, &mut S) -> anyhow::Result<()>,
        check: impl FnOnce(&Gpu, &mut S) -> anyhow::Result<R>,
        plans: &[Plan],
    ) -> anyhow::Result<Verified<R>> {
        poison(self, state)?;
        let counted = self.take_counted_case();
        match &counted {
            // Under `--counters`: this launch is the one ncu counts.
            Some(case) => self.count_case(case, || work(&self.stream, state))?,
            None => work(&self.stream, state)?,
        }
        self.stream.synchronize()?;
        let check = check(self, state)?;
        let mut times = Vec::with_capacity(plans.len());
        for &plan in plans {
            // A counting child's timings are thrown away: one repetition each.
            let plan = if self.counting() { Plan::new(0, 1, plan.l2) } else { plan };
            times.push(self.time(plan, |s| work(s, state))?);
        }
        Ok(Verified { check, times })
    }
    // ANCHOR_END: verify_then_time

    /// [`Gpu::verify_then_time`] for work with one output buffer, checked by `check` on the
    /// downloaded elements.
    pub fn verify_then_time_output<T: DeviceRepr + Default + Clone + Unpin, R>(
        &self,
        out: &mut CudaSlice<T>,
        work: impl FnMut(&Arc<CudaStream>, &mut CudaSlice<T>) -> anyhow::Result<()>,
        check: impl FnOnce(&[T]) -> Result<R, Mismatch>,
        plans: &[Plan],
    ) -> anyhow::Result<Verified<R>> {
        self.verify_then_time(
            out,
            |gpu, out| gpu.poison(out),
            work,
            |gpu, out| Ok(check(&gpu.stream.clone_dtoh(out)?)?),
            plans,
        )
    }

    /// Fills `buf` with `0xFF` bytes on the timing stream: NaN as `f32`/`f64`, all-ones as integers.
    pub fn poison<T: DeviceRepr, B: DevicePtrMut<T>>(
        &self,
        buf: &mut B,
    ) -> anyhow::Result<()> {
        let bytes = buf.num_bytes();
        let (ptr, _sync) = buf.device_ptr_mut(&self.stream);
        // SAFETY: ptr/bytes describe the buffer; the memset is ordered on our stream.
        unsafe {
            cudarc::driver::result::memset_d8_async(
                ptr,
                0xFF,
                bytes,
                self.stream.cu_stream(),
            )?
        };
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const TOL: Tolerance = Tolerance::new(1e-6, 1e-5);

    #[test]
    fn nan_never_passes() {
        assert!(!TOL.accepts(f64::NAN, 1.0));
        assert!(!TOL.accepts(1.0, f64::NAN));
        assert!(!TOL.accepts(f64::NAN, f64::NAN));
        let poisoned = f32::from_bits(0xFFFF_FFFF);
        assert!(poisoned.is_nan(), "0xFF bytes are NaN as f32");
        assert!(f64::from_bits(u64::MAX).is_nan(), "0xFF bytes are NaN as f64");
        assert!(
            check_close("k", "n=2", &[1.0f32, poisoned], &[1.0f32, 0.0], TOL).is_err()
        );
    }

    #[test]
    fn tolerance_is_abs_plus_rel() {
        assert!(TOL.accepts(1000.0 + 0.009, 1000.0));
        assert!(!TOL.accepts(1000.0 + 0.02, 1000.0));
        assert!(TOL.accepts(5e-7, 0.0));
        assert!(TOL.accepts(f64::INFINITY, f64::INFINITY));
        assert!(!TOL.accepts(f64::INFINITY, 1e300));
    }

    #[test]
    fn mismatch_names_kernel_size_and_first_index() {
        let got = [1.0f32, 2.0, 9.0, 8.0];
        let want = [1.0f32, 2.0, 3.0, 4.0];
        let err = check_close("atax_fused", "M=4", &got, &want, TOL).unwrap_err();
        assert_eq!((err.index, err.wrong, err.total), (2, 2, 4));
        let text = err.to_string();
        assert!(
            text.contains("atax_fused")
                && text.contains("M=4")
                && text.contains("element 2"),
            "{text}"
        );
    }

    #[test]
    fn exact_compare_and_worst_error() {
        assert!(check_exact("k", "n=3", &[1u64, 2, 3], &[1u64, 2, 3]).is_ok());
        let err = check_exact("k", "n=3", &[1u64, 7, 3], &[1u64, 2, 3]).unwrap_err();
        assert_eq!((err.index, err.wrong), (1, 1));
        assert!(check_exact("k", "n=3", &[1u64, 2], &[1u64, 2, 3]).is_err());
        let r =
            check_close("k", "n", &[1.0f64, 2.0 + 1e-7], &[1.0f64, 2.0], TOL).unwrap();
        assert_eq!(r.worst_index, 1);
        assert!(r.max_abs_err > 0.0);
    }
}
