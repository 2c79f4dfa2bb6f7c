//! PyTorch's all-reduce as `torch_reference.py` (beside this file) records it: the reference
//! the chapter compares NCCL through cudarc with, on the same machine. A run reads the CSVs the
//! reader made with the script, or starts the script itself, once per number of GPUs, where
//! `python3` imports torch with CUDA and NCCL; where it does not, the comparison is skipped
//! with one line.

use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};

use crate::harness::record::{self, Meta};

/// The script, as the crate was built with it: written to a temporary folder and run from
/// there, so that a run needs no checkout beside its binary.
pub const SCRIPT: &str = include_str!("torch_reference.py");

/// The variables that keep NVLink multicast off in NCCL, PyTorch and NVSHMEM: set on every
/// process the run starts (the script refuses to run without them).
pub const MULTICAST_OFF: [(&str, &str); 3] = [
    ("NCCL_NVLS_ENABLE", "0"),
    ("TORCH_SYMM_MEM_DISABLE_MULTICAST", "1"),
    ("NVSHMEM_DISABLE_NVLS", "1"),
];

/// The interpreter the run starts the script with.
pub const PYTHON: &str = "python3";

/// How long one run of the script may take before it is stopped (its GPUs' NCCL start-up
/// and a sweep to 1 GiB take well under a minute).
pub const TIMEOUT: Duration = Duration::from_secs(600);

/// What `python3` answers when asked whether it can run the script: `Ok(torch version)`, or
/// why not, as the rest of a skip line.
pub fn probe(python: &str) -> Result<String, String> {
    let check = "import torch, torch.distributed as d\n\
                 ok = torch.cuda.is_available() and d.is_nccl_available()\n\
                 print(torch.__version__ if ok else 'no-cuda-or-nccl')";
    let out = Command::new(python)
        .args(["-c", check])
        .envs(MULTICAST_OFF)
        .output()
        .map_err(|e| format!("{python} not found ({e})"))?;
    let text = String::from_utf8_lossy(&out.stdout).trim().to_string();
    match (out.status.success(), text.as_str()) {
        (false, _) => Err(format!("{python} cannot import torch")),
        (true, "no-cuda-or-nccl") => {
            Err(format!("{python}'s torch has no CUDA or no NCCL"))
        }
        (true, version) => Ok(version.to_string()),
    }
}

/// The command that runs the script at `script` on the first `ranks` GPUs (one process
/// each, through torch's own launcher), writing `out`, with multicast off.
pub fn command(
    python: &str,
    script: &Path,
    ranks: usize,
    out: &Path,
    max_mib: u64,
    reps: usize,
) -> Command {
    let mut cmd = Command::new(python);
    cmd.args(["-m", "torch.distributed.run", "--standalone"])
        .arg(format!("--nproc_per_node={ranks}"))
        .arg(script)
        .arg("--out")
        .arg(out)
        .args(["--max-mib", &max_mib.to_string(), "--reps", &reps.to_string()])
        .envs(MULTICAST_OFF);
    cmd
}

/// Runs the script once for each GPU count of `ranks` (each at least 2), sizes up to
/// `max_mib` MiB, `reps` repetitions. Returns what it measured, and one line for each count
/// it could not (the first line says why none ran when `python3` cannot run it).
pub fn run_script(
    ranks: &[usize],
    max_mib: u64,
    reps: usize,
) -> (Vec<TorchReference>, Vec<String>) {
    let what = |k: usize| format!("the all-reduce of torch.distributed over {k} GPUs");
    if let Err(why) = probe(PYTHON) {
        let counts = ranks.iter().map(|k| k.to_string()).collect::<Vec<_>>().join(", ");
        return (
            Vec::new(),
            vec![format!(
                "the all-reduce of torch.distributed over {counts} GPUs ({why})"
            )],
        );
    }
    let dir = match tempfile::Builder::new().prefix("cmbook-torch-").tempdir() {
        Ok(d) => d,
        Err(e) => {
            return (
                Vec::new(),
                vec![format!("{} (no temporary folder: {e})", what(2))],
            )
        }
    };
    let script = dir.path().join("torch_reference.py");
    if let Err(e) = std::fs::write(&script, SCRIPT) {
        return (
            Vec::new(),
            vec![format!("{} (cannot write the script: {e})", what(2))],
        );
    }
    let (mut found, mut skipped) = (Vec::new(), Vec::new());
    for &k in ranks {
        let out = dir.path().join(format!("torch-{k}.csv"));
        let mut cmd = command(PYTHON, &script, k, &out, max_mib, reps);
        match run_logged(&mut cmd, dir.path(), &format!("torch-{k}"))
            .and_then(|()| read(&out))
        {
            Ok(t) => found.push(t),
            Err(e) => skipped.push(format!("{} (torch_reference.py: {e:#})", what(k))),
        }
    }
    (found, skipped)
}

/// Runs `cmd` in its own process group with its output in `dir/<name>.log`, stopping the
/// group after [`TIMEOUT`]. An exit other than 0 is an error naming the log's last line.
fn run_logged(cmd: &mut Command, dir: &Path, name: &str) -> anyhow::Result<()> {
    use std::os::unix::process::CommandExt;
    let log_path = dir.join(format!("{name}.log"));
    let log = std::fs::File::create(&log_path)?;
    cmd.stdout(log.try_clone()?).stderr(log).process_group(0);
    let mut child = cmd.spawn()?;
    let start = Instant::now();
    let status = loop {
        if let Some(status) = child.try_wait()? {
            break status;
        }
        if start.elapsed() > TIMEOUT {
            // The launcher and its workers share the group: stop them all.
            // SAFETY: signals the process group this run created for the child.
            unsafe { libc::kill(-(child.id() as i32), libc::SIGKILL) };
            let _ = child.wait();
            anyhow::bail!("stopped after {} s", TIMEOUT.as_secs());
        }
        std::thread::sleep(Duration::from_millis(200));
    };
    if status.success() {
        return Ok(());
    }
    let text = std::fs::read_to_string(&log_path).unwrap_or_default();
    let last = text.lines().rev().find(|l| !l.trim().is_empty()).unwrap_or("");
    anyhow::bail!("exited with {status}: {}", last.trim())
}

/// One size of PyTorch's all-reduce sweep.
#[derive(Debug, Clone, PartialEq)]
pub struct TorchPoint {
    pub ranks: usize,
    pub bytes: usize,
    /// Microseconds per all-reduce: median, fastest and slowest repetition.
    pub time_us: (f64, f64, f64),
    pub busbw_gbps: f64,
}

/// What `torch_reference.py` wrote.
#[derive(Debug, Clone, PartialEq)]
pub struct TorchReference {
    pub meta: Meta,
    pub points: Vec<TorchPoint>,
}

impl TorchReference {
    /// The torch and NCCL versions, for the records' provenance.
    pub fn versions(&self) -> String {
        format!(
            "torch {}, NCCL {}",
            self.meta.get("torch").unwrap_or("?"),
            self.meta.get("nccl").unwrap_or("?")
        )
    }

    /// The point of `bytes` bytes, if PyTorch measured that size.
    pub fn at(&self, bytes: usize) -> Option<&TorchPoint> {
        self.points.iter().find(|p| p.bytes == bytes)
    }

    /// The GPUs (processes) the script ran on.
    pub fn ranks(&self) -> usize {
        self.points.first().map_or(0, |p| p.ranks)
    }
}

/// Parses the CSV text `torch_reference.py` writes.
pub fn parse(text: &str) -> anyhow::Result<TorchReference> {
    let rec = record::parse_csv(text)?;
    let col = |name: &str| rec.column(name);
    let (c, r, b) = (col("collective")?, col("ranks")?, col("bytes")?);
    let (t, lo, hi, bus) =
        (col("time_us")?, col("time_us_min")?, col("time_us_max")?, col("busbw_gbps")?);
    let mut points = Vec::new();
    for row in &rec.rows {
        anyhow::ensure!(row[c] == "all-reduce", "unexpected collective `{}`", row[c]);
        let num = |i: usize| -> anyhow::Result<f64> {
            row[i].parse::<f64>().map_err(|e| anyhow::anyhow!("`{}`: {e}", row[i]))
        };
        points.push(TorchPoint {
            ranks: row[r].parse()?,
            bytes: row[b].parse()?,
            time_us: (num(t)?, num(lo)?, num(hi)?),
            busbw_gbps: num(bus)?,
        });
    }
    anyhow::ensure!(!points.is_empty(), "no measurements");
    anyhow::ensure!(
        points.iter().all(|p| p.ranks == points[0].ranks && p.ranks >= 2),
        "every row must be of one run over two GPUs or more"
    );
    Ok(TorchReference { meta: rec.meta, points })
}

/// Reads the CSV at `path`.
pub fn read(path: &Path) -> anyhow::Result<TorchReference> {
    let text = std::fs::read_to_string(path)
        .map_err(|e| anyhow::anyhow!("cannot read {}: {e}", path.display()))?;
    parse(&text).map_err(|e| {
        anyhow::anyhow!("{} is not torch_reference.py's CSV: {e}", path.display())
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    const CSV: &str = "# gpu: 2 × NVIDIA H200
# torch: 2.11.0+cu130
# nccl: 2.28.9 (the NCCL that torch loaded)
collective,ranks,bytes,time_us,time_us_min,time_us_max,algbw_gbps,busbw_gbps
all-reduce,2,8,20.100,19.000,25.000,0.000,0.000
all-reduce,2,1073741824,3283.000,3270.000,3300.000,327.060,327.060
";

    #[test]
    fn the_scripts_csv_is_read() {
        let t = parse(CSV).unwrap();
        assert_eq!(t.points.len(), 2);
        let p = t.at(1 << 30).unwrap();
        assert_eq!((p.ranks, p.busbw_gbps), (2, 327.06));
        assert_eq!(p.time_us, (3283.0, 3270.0, 3300.0));
        assert!(t.versions().contains("2.28.9"));
        assert!(parse("collective,ranks\n").is_err());
        assert!(parse(&CSV.replace("all-reduce,2,8", "all-gather,2,8")).is_err());
        assert!(parse(&CSV.replace("all-reduce,2,8", "all-reduce,4,8")).is_err());
        assert_eq!(t.ranks(), 2);
    }

    #[test]
    fn the_script_is_started_on_the_first_gpus_with_multicast_off() {
        let cmd =
            command("python3", Path::new("/t/s.py"), 4, Path::new("/t/o.csv"), 16, 3);
        let args: Vec<String> =
            cmd.get_args().map(|a| a.to_string_lossy().into_owned()).collect();
        assert_eq!(
            args,
            [
                "-m",
                "torch.distributed.run",
                "--standalone",
                "--nproc_per_node=4",
                "/t/s.py",
                "--out",
                "/t/o.csv",
                "--max-mib",
                "16",
                "--reps",
                "3"
            ]
        );
        let envs: Vec<(String, String)> = cmd
            .get_envs()
            .map(|(k, v)| {
                (
                    k.to_string_lossy().into_owned(),
                    v.unwrap().to_string_lossy().into_owned(),
                )
            })
            .collect();
        for (k, v) in MULTICAST_OFF {
            assert!(envs.contains(&(k.to_string(), v.to_string())), "{k}");
            assert!(
                SCRIPT.contains(&format!("\"{k}\": \"{v}\"")),
                "the script checks {k}"
            );
        }
    }

    #[test]
    fn without_python_the_comparison_is_one_line() {
        let why = probe("/no/such/python3").unwrap_err();
        assert!(why.contains("not found"), "{why}");
    }
}
