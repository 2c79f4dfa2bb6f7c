//! NCCL through cudarc: finding the library, keeping NVLink multicast off, one communicator per
//! GPU of this process, and the three collectives the chapter measures.
//!
//! One thread drives every GPU: `ncclCommInitAll` makes one communicator per device, and each
//! collective is issued on every communicator between `ncclGroupStart` and `ncclGroupEnd`, so
//! NCCL launches them as one operation (without the group, the first call would wait for peers
//! that this same thread has not yet asked).

use std::ffi::CStr;
use std::path::{Path, PathBuf};

use cudarc::driver::{CudaSlice, DevicePtr, DevicePtrMut};
use cudarc::nccl::{result, sys, Comm, ReduceOp};

use crate::harness::Gpu;

/// The variable that turns NVLink SHARP (multicast, "NVLS") off in NCCL. Multicast objects can
/// take a shared host's GPUs out of service, so every process of this chapter sets it to `0`
/// before NCCL initialises, and the chapter's code never creates one (`cuMulticastCreate`).
pub const NVLS_VARIABLE: &str = "NCCL_NVLS_ENABLE";

/// Set by [`prepare`] when it restarts the program with a link to `libnccl.so.2` on the loader
/// path, so that it restarts at most once.
const RESTARTED: &str = "CMBOOK_NCCL_LINKED";

/// What a run must do before anything else: turn NVLink multicast off for NCCL, and make NCCL
/// loadable under the names cudarc looks for (see [`find_libnccl`]). Call it first in `main`,
/// before any thread is started.
pub fn prepare() {
    if std::env::var(NVLS_VARIABLE).as_deref() != Ok("0") {
        if std::env::var_os(NVLS_VARIABLE).is_some() {
            eprintln!("note: {NVLS_VARIABLE} was set to something else; this chapter sets it to 0");
        }
        // SAFETY (of the environment): no other thread exists yet.
        std::env::set_var(NVLS_VARIABLE, "0");
    }
    relaunch_with_link_if_needed();
}

/// Whether NVLink multicast is off for NCCL in this process.
pub fn nvls_off() -> bool {
    multicast_off(std::env::var(NVLS_VARIABLE).ok().as_deref())
}

/// Whether a value of [`NVLS_VARIABLE`] turns multicast off: exactly `0` (unset leaves NCCL
/// free to use it).
pub fn multicast_off(value: Option<&str>) -> bool {
    value == Some("0")
}

// ANCHOR: find_libnccl
/// cudarc opens NCCL as `libnccl.so` (or `libnccl.so.<CUDA major>` and a few other
/// names); NCCL's runtime package installs only `libnccl.so.2` (the `-dev` package adds
/// the link named `libnccl.so`). Where cudarc finds none of its names, this looks for
/// `libnccl.so.2` in the folders of `LD_LIBRARY_PATH`, in the usual library folders and
/// in `ldconfig -p`'s list.
pub fn find_libnccl(ld_library_path: &str, ldconfig: &str) -> Option<PathBuf> {
    const NAME: &str = "libnccl.so.2";
    let folders = ld_library_path.split(':').filter(|d| !d.is_empty()).chain([
        "/usr/lib/x86_64-linux-gnu",
        "/usr/lib/aarch64-linux-gnu",
        "/usr/lib64",
        "/usr/local/lib",
        "/usr/lib",
    ]);
    for dir in folders {
        let path = Path::new(dir).join(NAME);
        if path.exists() {
            return Some(path);
        }
    }
    // `ldconfig -p` lines read
    // `\tlibnccl.so.2 (libc6,x86-64) => /usr/lib/.../libnccl.so.2`.
    ldconfig
        .lines()
        .filter(|l| l.trim_start().starts_with(&format!("{NAME} ")))
        .filter_map(|l| l.split("=>").nth(1))
        .map(|p| PathBuf::from(p.trim()))
        .find(|p| p.exists())
}
// ANCHOR_END: find_libnccl

/// Where cudarc finds no NCCL but `libnccl.so.2` exists: link it as `libnccl.so` in a folder
/// of the temporary directory and run this program again with that folder first on the loader
/// path (the loader reads `LD_LIBRARY_PATH` once, when a program starts).
fn relaunch_with_link_if_needed() {
    if crate::harness::gpu::nccl_present() || std::env::var_os(RESTARTED).is_some() {
        return;
    }
    let ld_path = std::env::var("LD_LIBRARY_PATH").unwrap_or_default();
    let ldconfig = ["/sbin/ldconfig", "/usr/sbin/ldconfig", "ldconfig"]
        .iter()
        .find_map(|exe| std::process::Command::new(exe).arg("-p").output().ok())
        .map(|o| String::from_utf8_lossy(&o.stdout).into_owned())
        .unwrap_or_default();
    let Some(lib) = find_libnccl(&ld_path, &ldconfig) else { return };
    // A folder of this run's own (two runs never replace each other's link), kept: the
    // program runs again in its place and loads NCCL through it.
    let Ok(dir) = tempfile::Builder::new().prefix("cmbook-nccl-link-").tempdir() else {
        return;
    };
    let dir = dir.keep();
    let link = dir.join("libnccl.so");
    let linked = std::os::unix::fs::symlink(&lib, &link).is_ok();
    let Ok(exe) = std::env::current_exe() else { return };
    if !linked {
        return;
    }
    eprintln!(
        "note: NCCL is installed as {} only; running again with a link named libnccl.so in {}",
        lib.display(),
        dir.display()
    );
    let path = match ld_path.as_str() {
        "" => dir.display().to_string(),
        old => format!("{}:{old}", dir.display()),
    };
    use std::os::unix::process::CommandExt;
    let err = std::process::Command::new(exe)
        .args(std::env::args_os().skip(1))
        .env("LD_LIBRARY_PATH", path)
        .env(RESTARTED, "1")
        .exec();
    eprintln!("note: could not run again ({err}); going on without NCCL");
}

/// An NCCL error with NCCL's own words for it.
pub fn error(e: result::NcclError, what: &str) -> anyhow::Error {
    // SAFETY: ncclGetErrorString returns a static string for any result code.
    let text = unsafe { CStr::from_ptr(sys::ncclGetErrorString(e.0)) };
    anyhow::anyhow!("NCCL: {what} failed: {} ({:?})", text.to_string_lossy(), e.0)
}

/// NCCL's version code as `major.minor.patch`: `22809` → `2.28.9` (the code is
/// `major·10000 + minor·100 + patch` since NCCL 2.9).
pub fn version_text(code: i32) -> String {
    if code >= 10000 {
        format!("{}.{}.{}", code / 10000, (code % 10000) / 100, code % 100)
    } else {
        format!("{}.{}.{}", code / 1000, (code % 1000) / 100, code % 100)
    }
}

/// The version of the NCCL library this process loaded.
pub fn version() -> anyhow::Result<String> {
    let code = result::get_nccl_version().map_err(|e| error(e, "ncclGetVersion"))?;
    Ok(version_text(code))
}

/// The collectives of the chapter.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Collective {
    /// Every rank ends with the element-wise sum of every rank's buffer.
    AllReduce,
    /// Every rank ends with every rank's buffer, concatenated in rank order.
    AllGather,
    /// Rank r ends with part r of the element-wise sum.
    ReduceScatter,
}

impl Collective {
    pub const ALL: [Collective; 3] =
        [Collective::AllReduce, Collective::AllGather, Collective::ReduceScatter];

    pub fn name(self) -> &'static str {
        match self {
            Collective::AllReduce => "all-reduce",
            Collective::AllGather => "all-gather",
            Collective::ReduceScatter => "reduce-scatter",
        }
    }

    // ANCHOR: bus_factor
    /// nccl-tests' bus-bandwidth factor: bus bandwidth = algorithm bandwidth × this
    /// factor, where algorithm bandwidth is the collective's size (`bytes` below) over
    /// its time. The factor turns the size into what each rank must send over its link
    /// at the least, so the result is comparable with the link's own bandwidth whatever
    /// the number of ranks: an all-reduce is a reduce-scatter and an all-gather, each
    /// moving (n − 1)/n of the data.
    pub fn bus_factor(self, ranks: usize) -> f64 {
        let n = ranks as f64;
        match self {
            Collective::AllReduce => 2.0 * (n - 1.0) / n,
            Collective::AllGather | Collective::ReduceScatter => (n - 1.0) / n,
        }
    }
    // ANCHOR_END: bus_factor

    /// Elements each rank sends and receives for a collective of `count` elements, where
    /// `count` is nccl-tests' size: the buffer of an all-reduce, the gathered result of an
    /// all-gather, the input of a reduce-scatter.
    pub fn counts(self, count: usize, ranks: usize) -> (usize, usize) {
        match self {
            Collective::AllReduce => (count, count),
            Collective::AllGather => (count / ranks, count),
            Collective::ReduceScatter => (count, count / ranks),
        }
    }
}

/// Floats in a collective of about `bytes` bytes over `ranks` ranks: a multiple of `ranks`
/// (so that every rank's part is whole), at least one per rank.
pub fn element_count(bytes: usize, ranks: usize) -> usize {
    ((bytes / 4) / ranks * ranks).max(ranks)
}

/// One communicator per GPU of this process, rank r on `gpus[r]`, issuing on each GPU's
/// timing stream.
pub struct Comms {
    pub comms: Vec<Comm>,
}

impl Comms {
    /// `ncclCommInitAll` over `gpus`. Refuses to start NCCL with NVLink multicast on.
    pub fn new(gpus: &[&Gpu]) -> anyhow::Result<Self> {
        anyhow::ensure!(
            nvls_off(),
            "{NVLS_VARIABLE} must be 0 before NCCL starts (call multi_gpu::nccl::prepare first)"
        );
        let streams = gpus.iter().map(|g| g.stream.clone()).collect();
        let comms =
            Comm::from_devices(streams).map_err(|e| error(e, "ncclCommInitAll"))?;
        Ok(Self { comms })
    }

    pub fn ranks(&self) -> usize {
        self.comms.len()
    }

    // ANCHOR: grouped
    /// Enqueues `collective` on every rank: rank r sends `send[r]` and receives into
    /// `recv[r]`, each on its GPU's stream. One thread issues every rank's call, so the
    /// calls go between `ncclGroupStart` and `ncclGroupEnd`: NCCL launches them
    /// together at the end.
    pub fn enqueue<S, R>(
        &self,
        collective: Collective,
        send: &[S],
        recv: &mut [R],
    ) -> anyhow::Result<()>
    where
        S: DevicePtr<f32>,
        R: DevicePtrMut<f32>,
    {
        anyhow::ensure!(send.len() == self.ranks() && recv.len() == self.ranks());
        result::group_start().map_err(|e| error(e, "ncclGroupStart"))?;
        let mut outcome = Ok(());
        for ((comm, s), r) in self.comms.iter().zip(send).zip(recv.iter_mut()) {
            let call = match collective {
                Collective::AllReduce => comm.all_reduce(s, r, &ReduceOp::Sum),
                Collective::AllGather => comm.all_gather(s, r),
                Collective::ReduceScatter => comm.reduce_scatter(s, r, &ReduceOp::Sum),
            };
            if let Err(e) = call {
                outcome = Err(error(e, collective.name()));
                break;
            }
        }
        // The group is closed even when a call failed, leaving NCCL usable.
        let end = result::group_end().map_err(|e| error(e, "ncclGroupEnd"));
        outcome.and(end.map(|_| ()))
    }
    // ANCHOR_END: grouped

    /// Enqueues an in-place sum of `bufs[r]` over every rank (each ends with the total).
    pub fn all_reduce_in_place(
        &self,
        bufs: &mut [CudaSlice<f32>],
    ) -> anyhow::Result<()> {
        anyhow::ensure!(bufs.len() == self.ranks());
        result::group_start().map_err(|e| error(e, "ncclGroupStart"))?;
        let mut outcome = Ok(());
        for (comm, b) in self.comms.iter().zip(bufs.iter_mut()) {
            if let Err(e) = comm.all_reduce_in_place(b, &ReduceOp::Sum) {
                outcome = Err(error(e, "all-reduce (in place)"));
                break;
            }
        }
        let end = result::group_end().map_err(|e| error(e, "ncclGroupEnd"));
        outcome.and(end.map(|_| ()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn version_codes() {
        assert_eq!(version_text(22809), "2.28.9");
        assert_eq!(version_text(23001), "2.30.1");
        assert_eq!(version_text(2804), "2.8.4");
    }

    #[test]
    fn bus_factors_follow_nccl_tests() {
        assert_eq!(Collective::AllReduce.bus_factor(2), 1.0);
        assert_eq!(Collective::AllGather.bus_factor(2), 0.5);
        assert_eq!(Collective::ReduceScatter.bus_factor(4), 0.75);
        assert_eq!(Collective::AllReduce.bus_factor(8), 1.75);
        assert_eq!(Collective::AllReduce.bus_factor(1), 0.0);
    }

    #[test]
    fn counts_split_evenly() {
        assert_eq!(element_count(8, 2), 2);
        assert_eq!(element_count(8, 8), 8);
        assert_eq!(element_count(1 << 30, 3), ((1 << 28) / 3) * 3);
        assert_eq!(Collective::AllGather.counts(12, 3), (4, 12));
        assert_eq!(Collective::ReduceScatter.counts(12, 3), (12, 4));
        assert_eq!(Collective::AllReduce.counts(12, 3), (12, 12));
    }

    #[test]
    fn libnccl_is_found_through_ldconfig() {
        let dir = tempfile_dir();
        let lib = dir.join("libnccl.so.2");
        std::fs::write(&lib, b"").unwrap();
        let ldconfig = format!(
            "3 libs found in cache\n\tlibnccl.so.2 (libc6,x86-64) => {}\n\tlibnccl_static.a => /x\n",
            lib.display()
        );
        assert_eq!(find_libnccl("", &ldconfig), Some(lib.clone()));
        assert_eq!(find_libnccl(&dir.display().to_string(), ""), Some(lib.clone()));
        let none = "\tlibnccl.so.2 (libc6,x86-64) => /no/such/libnccl.so.2\n";
        assert!(find_libnccl("/no/such/dir", none).is_none_or(|p| p.exists()));
        std::fs::remove_dir_all(dir).unwrap();
    }

    fn tempfile_dir() -> PathBuf {
        let d = std::env::temp_dir()
            .join(format!("cmbook-nccl-test-{}", std::process::id()));
        std::fs::create_dir_all(&d).unwrap();
        d
    }
}
