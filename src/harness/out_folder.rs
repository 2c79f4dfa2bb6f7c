//! The output folder of a run, where a reader's results live: checked before anything is
//! measured (not a file, not a dangling link, writable) and locked for the run with `flock(2)`,
//! so that two runs never write into one folder at once; what a killed run changed is undone,
//! and its temporary files cleared, by the next one ([`undo`]).

use std::path::{Path, PathBuf};

use super::args::UsageError;
use super::{record, undo};

/// The environment variable through which a process that holds its output folder's lock
/// lets the processes it starts (`reproduce`'s chapter examples) write into that folder: its
/// value is the folder's canonical path.
pub const OUT_LOCK_ENV: &str = "CMBOOK_OUT_LOCKED";

/// The lock file in an output folder. It exists only while a run holds it.
pub const LOCK_FILE: &str = ".cmbook.lock";

/// The folders this process holds the lock of (a run that composes records through another
/// [`Run`], as the roofline does, holds its folder once).
static HELD: std::sync::Mutex<Vec<PathBuf>> = std::sync::Mutex::new(Vec::new());

/// An output folder claimed for one run: checked, and locked with `flock(2)` on
/// [`LOCK_FILE`] until dropped, so that two runs never write into one folder at once.
#[derive(Debug)]
pub struct OutLock {
    /// The folder's canonical path.
    pub dir: PathBuf,
    /// The locked file, where this claim took the lock (not where a parent process or an
    /// earlier claim in this process holds it).
    file: Option<std::fs::File>,
    /// Whether this claim started the process's journal ([`undo`]): then it keeps the run's
    /// changes when the run ends well ([`OutLock::commit`]) and undoes them when dropped
    /// without that.
    journal: std::cell::Cell<bool>,
}

impl OutLock {
    /// Keeps every change this run made to the folder: called once the run has ended well.
    pub fn commit(&self) -> anyhow::Result<()> {
        if self.journal.replace(false) {
            undo::commit(&self.dir)?;
        }
        Ok(())
    }
}

impl Drop for OutLock {
    fn drop(&mut self) {
        // A run that did not end well (an error, a panic) leaves the folder as it found it.
        if self.journal.replace(false) {
            if let Err(e) = undo::roll_back(&self.dir) {
                eprintln!("error: {e:#}");
            }
        }
        if self.file.is_some() {
            // Removed while still locked: a run that opened the file meanwhile finds it
            // unlinked once it gets the lock, and takes a new one (see `claim_out`).
            let _ = std::fs::remove_file(self.dir.join(LOCK_FILE));
            HELD.lock().unwrap_or_else(|e| e.into_inner()).retain(|d| d != &self.dir);
        }
    }
}

/// Checks that `out` can receive a run's files: a folder (or a symlink to one) that this user
/// can write into, or one that can be created (its nearest existing ancestor is such a
/// folder). Nothing is created. Every failure is bad input (exit code 2), told before
/// anything is measured.
pub fn check_out(out: &Path) -> Result<(), UsageError> {
    let shown = out.display();
    match std::fs::symlink_metadata(out) {
        Ok(m) if m.file_type().is_symlink() => match std::fs::metadata(out) {
            Ok(t) if t.is_dir() => {}
            Ok(_) => {
                return Err(UsageError(format!(
                    "--out {shown} is a symlink to something that is not a folder"
                )))
            }
            Err(e) => {
                return Err(UsageError(format!(
                    "--out {shown} is a symlink that leads nowhere ({e})"
                )))
            }
        },
        Ok(m) if !m.is_dir() => {
            return Err(UsageError(format!("--out {shown} is a file, not a folder")))
        }
        Ok(_) => {
            let data = out.join("data");
            if data.exists() && !data.is_dir() {
                return Err(UsageError(format!(
                    "{} is not a folder: the records of a run go there",
                    data.display()
                )));
            }
        }
        Err(_) => {
            let existing = out.ancestors().skip(1).find(|a| {
                a.as_os_str().is_empty() || std::fs::symlink_metadata(a).is_ok()
            });
            let existing = match existing {
                Some(a) if a.as_os_str().is_empty() => Path::new("."),
                Some(a) => a,
                None => Path::new("/"),
            };
            if !existing.is_dir() {
                return Err(UsageError(format!(
                    "cannot create --out {shown}: {} is not a folder",
                    existing.display()
                )));
            }
            return tempfile::tempfile_in(existing).map(drop).map_err(|e| {
                UsageError(format!(
                    "cannot create --out {shown}: {} cannot be written ({e})",
                    existing.display()
                ))
            });
        }
    }
    tempfile::tempfile_in(out)
        .map(drop)
        .map_err(|e| UsageError(format!("cannot write into --out {shown}: {e}")))
}

/// The process that holds `out`'s lock, where another live one does: read from the lock file
/// without touching the lock itself (a probe that locked could make a run that claims the
/// folder at that instant fail). A lock file left by a killed run names a process that is gone.
pub fn holder_of(out: &Path) -> Option<String> {
    let text = std::fs::read_to_string(out.join(LOCK_FILE)).ok()?;
    let pid: libc::pid_t = text.trim().parse().ok()?;
    if pid as u32 == std::process::id() {
        return None;
    }
    if std::env::var_os(OUT_LOCK_ENV).is_some() || super::counters::is_counting_child()
    {
        return None;
    }
    // SAFETY: signal 0 sends nothing; it asks whether the process exists.
    let alive = unsafe { libc::kill(pid, 0) } == 0
        || std::io::Error::last_os_error().raw_os_error() == Some(libc::EPERM);
    // A live process of that id may be another program that took a killed run's id: only
    // where the lock is really held (a probe that cannot take it) is the folder in use.
    (alive && !lock_is_free(&out.join(LOCK_FILE))).then(|| format!("process {pid}"))
}

/// Whether the lock on `path` can be taken now (it is released at once).
fn lock_is_free(path: &Path) -> bool {
    use std::os::unix::io::AsRawFd;
    let Ok(file) = std::fs::File::open(path) else { return true };
    // SAFETY: flock on a descriptor this function owns; closing it releases the lock.
    unsafe { libc::flock(file.as_raw_fd(), libc::LOCK_EX | libc::LOCK_NB) == 0 }
}

pub fn in_use(out: &Path, holder: &str) -> UsageError {
    UsageError(format!(
        "{} is in use: {holder} is writing into it (lock {}); wait for it to end, or give \
         another --out",
        out.display(),
        out.join(LOCK_FILE).display()
    ))
}

/// Removes the temporary files a killed run left in `dir` and `dir/data`
/// ([`record::write_atomic`] names them `.cmbook-*.tmp`): only a run that holds the folder's
/// lock may, as no other run can be writing them.
fn remove_leftovers(dir: &Path) {
    for folder in [dir.to_path_buf(), dir.join("data")] {
        for entry in std::fs::read_dir(folder).into_iter().flatten().flatten() {
            let name = entry.file_name();
            let name = name.to_string_lossy();
            if name.starts_with(record::TEMP_PREFIX)
                && name.ends_with(record::TEMP_SUFFIX)
            {
                let _ = std::fs::remove_file(entry.path());
            }
        }
    }
}

/// Checks `out` ([`check_out`]) and takes its lock for this run. A folder another run holds is
/// refused (exit code 2) with that run's process id.
pub fn claim_out(out: &Path) -> anyhow::Result<OutLock> {
    use std::os::unix::fs::{MetadataExt, OpenOptionsExt};
    use std::os::unix::io::AsRawFd;
    check_out(out)?;
    std::fs::create_dir_all(out).map_err(|e| {
        UsageError(format!("cannot create --out {}: {e}", out.display()))
    })?;
    let dir = out.canonicalize()?;
    let mut held = HELD.lock().unwrap_or_else(|e| e.into_inner());
    let from_parent =
        std::env::var_os(OUT_LOCK_ENV).is_some_and(|v| Path::new(&v) == dir);
    // The counting child of a --counters run writes where its parent, which holds the lock,
    // told it to.
    if held.contains(&dir) {
        return Ok(OutLock { dir, file: None, journal: false.into() });
    }
    if from_parent || super::counters::is_counting_child() {
        let journal = undo::begin(&dir).into();
        return Ok(OutLock { dir, file: None, journal });
    }
    let path = dir.join(LOCK_FILE);
    loop {
        let file = std::fs::OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .truncate(false)
            .custom_flags(libc::O_NOFOLLOW)
            .open(&path)
            .map_err(|e| UsageError(format!("cannot lock {}: {e}", path.display())))?;
        // SAFETY: flock on a descriptor this function owns; no memory is shared.
        if unsafe { libc::flock(file.as_raw_fd(), libc::LOCK_EX | libc::LOCK_NB) } != 0
        {
            let holder = std::fs::read_to_string(&path).unwrap_or_default();
            let holder = match holder.trim() {
                "" => "another process".to_string(),
                pid => format!("process {pid}"),
            };
            return Err(in_use(out, &holder).into());
        }
        // The file may have been removed by the run that held it, between our open and our
        // lock: then the lock is on a file nobody else will open, and the claim starts over.
        let same = match (file.metadata(), std::fs::symlink_metadata(&path)) {
            (Ok(a), Ok(b)) => a.dev() == b.dev() && a.ino() == b.ino(),
            _ => false,
        };
        if !same {
            continue;
        }
        let mut file = file;
        file.set_len(0)
            .and_then(|()| {
                std::io::Write::write_all(
                    &mut file,
                    format!("{}\n", std::process::id()).as_bytes(),
                )
            })
            .map_err(|e| UsageError(format!("cannot lock {}: {e}", path.display())))?;
        held.push(dir.clone());
        // What a killed run changed is undone before this run reads anything, then its
        // temporary files go.
        undo::recover(&dir)?;
        remove_leftovers(&dir);
        let journal = undo::begin(&dir).into();
        return Ok(OutLock { dir, file: Some(file), journal });
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_output_folder_that_cannot_take_results_is_refused_before_measuring() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("a-file");
        std::fs::write(&file, b"mine").unwrap();
        let err = check_out(&file).unwrap_err().0;
        assert!(
            err.contains("is a file, not a folder") && err.contains("a-file"),
            "{err}"
        );
        assert_eq!(std::fs::read(&file).unwrap(), b"mine");
        let under = check_out(&file.join("sub")).unwrap_err().0;
        assert!(under.contains("cannot create --out"), "{under}");
        #[cfg(unix)]
        {
            let dangling = dir.path().join("dangling");
            std::os::unix::fs::symlink(dir.path().join("nowhere"), &dangling).unwrap();
            let err = check_out(&dangling).unwrap_err().0;
            assert!(err.contains("is a symlink that leads nowhere"), "{err}");
            assert!(!dir.path().join("nowhere").exists());
        }
        let data_file = dir.path().join("with-data-file");
        std::fs::create_dir(&data_file).unwrap();
        std::fs::write(data_file.join("data"), b"").unwrap();
        assert!(check_out(&data_file).unwrap_err().0.contains("is not a folder"));
        // A folder that can be made passes, and is not made by the check (a run that only
        // answers on the console leaves none); its claim makes it.
        let fresh = dir.path().join("new/deeper");
        check_out(&fresh).unwrap();
        assert!(!dir.path().join("new").exists());
        drop(claim_out(&fresh).unwrap());
        assert_eq!(std::fs::read_dir(&fresh).unwrap().count(), 0);
    }

    #[test]
    fn a_folder_is_locked_for_one_run_and_released_with_it() {
        let dir = tempfile::tempdir().unwrap();
        let lock = claim_out(dir.path()).unwrap();
        let file = dir.path().join(LOCK_FILE);
        assert_eq!(
            std::fs::read_to_string(&file).unwrap().trim(),
            std::process::id().to_string()
        );
        // Another process sees who holds it; this one (composing through a second Run, as the
        // roofline does) holds it once.
        assert_eq!(holder_of(dir.path()), None);
        std::fs::write(&file, "1\n").unwrap();
        assert_eq!(holder_of(dir.path()).as_deref(), Some("process 1"));
        // A live process that does not hold the lock (a killed run's id, taken since) does
        // not make the folder in use.
        let stale = tempfile::tempdir().unwrap();
        std::fs::write(stale.path().join(LOCK_FILE), "1\n").unwrap();
        assert_eq!(holder_of(stale.path()), None);
        std::fs::write(&file, format!("{}\n", std::process::id())).unwrap();
        let again = claim_out(dir.path()).unwrap();
        drop(again);
        assert!(file.exists(), "only the claim that took the lock releases it");
        // Another open of the file, as another process's run makes, cannot lock it.
        let other = std::fs::File::open(&file).unwrap();
        use std::os::unix::io::AsRawFd;
        // SAFETY: flock on a descriptor this test owns.
        let got =
            unsafe { libc::flock(other.as_raw_fd(), libc::LOCK_EX | libc::LOCK_NB) };
        assert_ne!(got, 0, "the folder's lock is not held");
        drop(lock);
        assert!(!file.exists(), "the lock file outlives its run");
        // A killed run's temporary files go with the next claim.
        let leftover = dir.path().join(format!(
            "{}abc{}",
            record::TEMP_PREFIX,
            record::TEMP_SUFFIX
        ));
        std::fs::write(&leftover, b"half").unwrap();
        drop(claim_out(dir.path()).unwrap());
        assert!(!leftover.exists());
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0);
    }
}
