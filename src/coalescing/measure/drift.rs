//! The particle drift on an array of structs and on a struct of arrays.

use std::sync::Arc;

use cudarc::driver::{CudaSlice, CudaStream, PushKernelArg};

use crate::coalescing::reference::{
    self, Particle, ParticlesSoa, DRIFT_DT, PARTICLE_BYTES,
};
use crate::harness::kernels::KernelName;
use crate::harness::timing::Plan;
use crate::harness::{verify, Gpu};

use super::kernels::{GridStrideKernel, Kernels, Measurement, StreamKernel};

/// `PARTICLES_PER_THREAD` of the drift kernels.
const DRIFT_PER_THREAD: usize = 4;
/// Bytes the drift must move per particle: six 4-byte loads and three 4-byte stores.
pub const DRIFT_USEFUL_BYTES: u64 = 36;

/// Enqueues the array-of-structs drift.
pub fn launch_drift_aos(
    stream: &Arc<CudaStream>,
    kernel: &GridStrideKernel,
    particles: &mut CudaSlice<Particle>,
    dt: f32,
) -> anyhow::Result<()> {
    let n = particles.len();
    let cfg = kernel.config(n, DRIFT_PER_THREAD);
    let n = n as u64;
    // SAFETY: matches drift_aos(Particle* particles, u64 n, float dt); n is the buffer's length.
    unsafe {
        stream.launch_builder(kernel.f).arg(particles).arg(&n).arg(&dt).launch(cfg)?
    };
    Ok(())
}

/// The particles as device arrays, one per field.
pub struct DeviceSoa {
    pub x: CudaSlice<f32>,
    pub y: CudaSlice<f32>,
    pub z: CudaSlice<f32>,
    pub vx: CudaSlice<f32>,
    pub vy: CudaSlice<f32>,
    pub vz: CudaSlice<f32>,
    pub mass: CudaSlice<f32>,
}

impl DeviceSoa {
    pub fn upload(gpu: &Gpu, p: &ParticlesSoa) -> anyhow::Result<Self> {
        let up = |v: &Vec<f32>| gpu.stream.clone_htod(v);
        Ok(Self {
            x: up(&p.x)?,
            y: up(&p.y)?,
            z: up(&p.z)?,
            vx: up(&p.vx)?,
            vy: up(&p.vy)?,
            vz: up(&p.vz)?,
            mass: up(&p.mass)?,
        })
    }
}

/// Enqueues the struct-of-arrays drift.
pub fn launch_drift_soa(
    stream: &Arc<CudaStream>,
    kernel: &GridStrideKernel,
    p: &mut DeviceSoa,
    dt: f32,
) -> anyhow::Result<()> {
    let n = p.x.len();
    assert!([p.y.len(), p.z.len(), p.vx.len(), p.vy.len(), p.vz.len()]
        .iter()
        .all(|&l| l == n));
    let cfg = kernel.config(n, DRIFT_PER_THREAD);
    let n = n as u64;
    // SAFETY: matches drift_soa(x, y, z, vx, vy, vz, u64 n, float dt); every array holds n.
    unsafe {
        stream
            .launch_builder(kernel.f)
            .arg(&mut p.x)
            .arg(&mut p.y)
            .arg(&mut p.z)
            .arg(&p.vx)
            .arg(&p.vy)
            .arg(&p.vz)
            .arg(&n)
            .arg(&dt)
            .launch(cfg)?
    };
    Ok(())
}

/// Verifies, then times, both drifts on `particles`. The update is in place, so nothing can
/// be poisoned; the inputs make every position change (see `reference::random_particles`),
/// so a position the kernel did not write fails the exact comparison just the same.
pub fn measure_drifts(
    gpu: &Gpu,
    kernels: &Kernels,
    particles: &ParticlesSoa,
    plan: Plan,
) -> anyhow::Result<(Measurement, Measurement)> {
    let n = particles.len();
    let what = format!("{n} particles in both layouts");
    gpu.ensure_fits(2 * n * PARTICLE_BYTES as usize, &what)?;
    let size = format!("n={n}");
    let useful_bytes = DRIFT_USEFUL_BYTES * n as u64;

    let aos_kernel = kernels.stream(StreamKernel::DriftAos);
    let aos_name = StreamKernel::DriftAos.function();
    let aos_host = particles.to_aos();
    let aos_want = reference::drift_aos(&aos_host, DRIFT_DT);
    let mut aos = gpu.stream.clone_htod(&aos_host)?;
    let aos_stats = gpu
        .verify_then_time(
            &mut aos,
            |_, _| Ok(()), // in place: the particles are the input
            |s, aos| launch_drift_aos(s, &aos_kernel, aos, DRIFT_DT),
            |gpu, aos| {
                let got = gpu.stream.clone_dtoh(aos)?;
                Ok(verify::check_exact(&aos_name, &size, &got, &aos_want)?)
            },
            &[plan],
        )?
        .time()
        .clone();
    drop(aos);

    let soa_kernel = kernels.stream(StreamKernel::DriftSoa);
    let soa_name = StreamKernel::DriftSoa.function();
    let (x, y, z) = reference::drift_soa(particles, DRIFT_DT);
    let mut soa = DeviceSoa::upload(gpu, particles)?;
    let soa_stats = gpu
        .verify_then_time(
            &mut soa,
            |_, _| Ok(()), // in place: the particles are the input
            |s, soa| launch_drift_soa(s, &soa_kernel, soa, DRIFT_DT),
            |gpu, soa| {
                for (field, dev, want) in [
                    ("x", &soa.x, &x),
                    ("y", &soa.y, &y),
                    ("z", &soa.z, &z),
                    ("vx (read only)", &soa.vx, &particles.vx),
                    ("vy (read only)", &soa.vy, &particles.vy),
                    ("vz (read only)", &soa.vz, &particles.vz),
                ] {
                    let got = gpu.stream.clone_dtoh(dev)?;
                    verify::check_exact(
                        &format!("{soa_name} {field}"),
                        &size,
                        &got,
                        want,
                    )?;
                }
                Ok(())
            },
            &[plan],
        )?
        .time()
        .clone();
    Ok((
        Measurement { stats: aos_stats, useful_bytes },
        Measurement { stats: soa_stats, useful_bytes },
    ))
}
