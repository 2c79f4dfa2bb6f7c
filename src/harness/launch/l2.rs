//! The L2 access-policy window: the device's limits, a window checked by
//! [`check_window`] before it is set on the timing stream, and the guard that removes it.

use std::ffi::c_void;

use cudarc::driver::sys::{
    self, CUaccessProperty, CUdevice_attribute as Attr, CUlaunchAttributeID, CUlimit,
};
use cudarc::driver::{CudaSlice, DevicePtr};

use super::{check_window, LaunchError};
use crate::harness::gpu::Gpu;

/// What L2 does with the lines of a window.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum L2Access {
    /// Kept in the persisting part of L2, evicted last.
    Persisting,
    /// Evicted first.
    Streaming,
    /// As without a window.
    Normal,
}

impl L2Access {
    fn raw(self) -> CUaccessProperty {
        match self {
            L2Access::Persisting => CUaccessProperty::CU_ACCESS_PROPERTY_PERSISTING,
            L2Access::Streaming => CUaccessProperty::CU_ACCESS_PROPERTY_STREAMING,
            L2Access::Normal => CUaccessProperty::CU_ACCESS_PROPERTY_NORMAL,
        }
    }
}

/// The device's limits on access-policy windows.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct L2Limits {
    /// `CU_DEVICE_ATTRIBUTE_MAX_ACCESS_POLICY_WINDOW_SIZE`, bytes.
    pub max_window: usize,
    /// `CU_DEVICE_ATTRIBUTE_MAX_PERSISTING_L2_CACHE_SIZE`, bytes.
    pub max_persisting: usize,
}

impl L2Limits {
    pub fn query(gpu: &Gpu) -> anyhow::Result<Self> {
        // A GPU before 8.0 has no access-policy window (its attributes read 0); a run
        // pretending one must not use the real device's.
        if gpu.info.compute_capability < (8, 0) {
            return Ok(Self { max_window: 0, max_persisting: 0 });
        }
        let a = |x| gpu.ctx.attribute(x).map(|v| v.max(0) as usize);
        Ok(Self {
            max_window: a(Attr::CU_DEVICE_ATTRIBUTE_MAX_ACCESS_POLICY_WINDOW_SIZE)?,
            max_persisting: a(Attr::CU_DEVICE_ATTRIBUTE_MAX_PERSISTING_L2_CACHE_SIZE)?,
        })
    }
}

/// A window of `bytes` bytes, `hit_ratio` of it given the hit property, and an L2
/// carve-out of `persisting` bytes for persisting lines.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct L2Window {
    pub bytes: usize,
    pub hit_ratio: f32,
    pub hit: L2Access,
    pub persisting: usize,
}

impl L2Window {
    /// See [`check_window`].
    pub fn check(&self, limits: L2Limits) -> Result<(), LaunchError> {
        check_window(self, limits)
    }
}

/// An access-policy window set on a [`Gpu`]'s timing stream; [`WindowGuard::reset`] (or
/// dropping the guard) removes it, releases the persisting lines and returns the
/// carve-out.
pub struct WindowGuard<'g> {
    gpu: &'g Gpu,
    done: bool,
}

fn set_stream_window(
    gpu: &Gpu,
    base: u64,
    bytes: usize,
    ratio: f32,
    hit: L2Access,
) -> anyhow::Result<()> {
    // SAFETY: a zeroed value is a valid union; the window is set below.
    let mut v: sys::CUstreamAttrValue = unsafe { std::mem::zeroed() };
    v.accessPolicyWindow = sys::CUaccessPolicyWindow {
        base_ptr: base as *mut c_void,
        num_bytes: bytes,
        hitRatio: ratio,
        hitProp: hit.raw(),
        missProp: CUaccessProperty::CU_ACCESS_PROPERTY_STREAMING,
    };
    gpu.ctx.bind_to_thread()?;
    // SAFETY: the stream is valid; v lives for the call.
    unsafe {
        sys::cuStreamSetAttribute(
            gpu.stream.cu_stream(),
            CUlaunchAttributeID::CU_LAUNCH_ATTRIBUTE_ACCESS_POLICY_WINDOW,
            &v,
        )
        .result()?
    };
    Ok(())
}

impl Gpu {
    /// Sets an access-policy window over the first `w.bytes` bytes of `buf` on the
    /// timing stream, after [`L2Window::check`]: kernels launched on the stream from
    /// now on mark those lines with `w.hit` (a share `w.hit_ratio` of them) and the
    /// rest as streaming.
    pub fn l2_window<T>(
        &self,
        buf: &CudaSlice<T>,
        w: L2Window,
    ) -> anyhow::Result<WindowGuard<'_>> {
        w.check(L2Limits::query(self)?)?;
        let have = buf.len() * std::mem::size_of::<T>();
        if w.bytes > have {
            return Err(LaunchError::BadWindow(format!(
                "a window of {} bytes over a buffer of {have}",
                w.bytes
            ))
            .into());
        }
        self.ctx.bind_to_thread()?;
        // SAFETY: sets a context limit within the device's maximum (checked above).
        unsafe {
            sys::cuCtxSetLimit(CUlimit::CU_LIMIT_PERSISTING_L2_CACHE_SIZE, w.persisting)
                .result()?
        };
        let (base, _sync) = buf.device_ptr(&self.stream);
        set_stream_window(self, base, w.bytes, w.hit_ratio, w.hit)?;
        Ok(WindowGuard { gpu: self, done: false })
    }
}

impl WindowGuard<'_> {
    /// Removes the window, turns persisting lines back into normal ones and sets the
    /// carve-out to 0, so later work sees the L2 it saw before.
    pub fn reset(mut self) -> anyhow::Result<()> {
        self.done = true;
        reset_window(self.gpu)
    }
}

fn reset_window(gpu: &Gpu) -> anyhow::Result<()> {
    gpu.stream.synchronize()?;
    set_stream_window(gpu, 0, 0, 0.0, L2Access::Normal)?;
    // SAFETY: context-wide calls on the bound context.
    unsafe {
        sys::cuCtxResetPersistingL2Cache().result()?;
        sys::cuCtxSetLimit(CUlimit::CU_LIMIT_PERSISTING_L2_CACHE_SIZE, 0).result()?;
    }
    Ok(())
}

impl Drop for WindowGuard<'_> {
    fn drop(&mut self) {
        if !self.done {
            // Best effort on an early return: the error that caused it is the one to
            // report.
            let _ = reset_window(self.gpu);
        }
    }
}
