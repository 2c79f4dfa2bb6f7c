//! A run's changes to its output folder, kept only if the run ends well. Before a file is
//! replaced or created, the run's journal (`.cmbook-undo-<pid>.log` in the folder) records how
//! to put it back: a hard link to the old file, or "remove it". A run that succeeds commits
//! (the journal goes, then the old files); one that fails undoes its changes at once; one that
//! is killed leaves its journal behind, and the next run that claims the folder undoes them
//! before it reads anything. So every run finds the folder as the last successful run left it,
//! never a mix of an interrupted run's files and an earlier one's.
//!
//! Each file is also written whole ([`super::atomic::write_atomic`]): a reader who looks at the
//! folder while a run writes sees each file old or new, and the folder old or new once the next
//! run (or the interrupted run's parent, `reproduce`) has claimed it.

use std::collections::HashSet;
use std::ffi::OsString;
use std::fs::{File, OpenOptions};
use std::io::Write;
use std::os::unix::ffi::{OsStrExt, OsStringExt};
use std::path::{Path, PathBuf};
use std::sync::{Mutex, PoisonError};

use anyhow::Context;

/// A journal's name: `.cmbook-undo-<pid>.log`.
pub const JOURNAL_PREFIX: &str = ".cmbook-undo-";
pub const JOURNAL_SUFFIX: &str = ".log";
/// An old file kept until its run commits. Named like the temporary files of
/// [`super::atomic::write_atomic`] (`.cmbook-*.tmp`), so that a committed run's leftovers go
/// with them.
const BACKUP_PREFIX: &str = ".cmbook-old-";
const BACKUP_SUFFIX: &str = ".tmp";

/// The journal of this process's run.
struct Journal {
    /// The output folder, where the journal lives.
    dir: PathBuf,
    /// Opened at the run's first write: a run that writes nothing leaves nothing.
    file: Option<File>,
    /// The old files kept for the undo, removed when the run commits.
    backups: Vec<PathBuf>,
    /// The files already recorded: the first record of a file is the one that restores it.
    seen: HashSet<PathBuf>,
}

impl Journal {
    fn path(&self) -> PathBuf {
        journal_path(&self.dir, std::process::id())
    }

    /// Appends `line` and flushes it to disk before the change it undoes is made.
    fn append(&mut self, line: &str) -> anyhow::Result<()> {
        if self.file.is_none() {
            let path = self.path();
            // A journal of this process id left by a run killed long ago: undone first, as
            // the next claim of the folder would have done.
            if path.exists() {
                undo_journal(&path)?;
            }
            let file = OpenOptions::new()
                .append(true)
                .create_new(true)
                .open(&path)
                .with_context(|| {
                    format!("cannot start the journal {}", path.display())
                })?;
            self.file = Some(file);
        }
        let file = self.file.as_mut().expect("opened above");
        file.write_all(line.as_bytes()).and_then(|()| file.sync_data()).with_context(
            || format!("cannot write the journal {}", self.path().display()),
        )
    }
}

/// The running journals of this process, one per output folder it holds.
static ACTIVE: Mutex<Vec<Journal>> = Mutex::new(Vec::new());

fn active() -> std::sync::MutexGuard<'static, Vec<Journal>> {
    ACTIVE.lock().unwrap_or_else(PoisonError::into_inner)
}

/// Takes the running journal of `dir` out of the list.
fn take(dir: &Path) -> Option<Journal> {
    let mut active = active();
    let i = active.iter().position(|j| j.dir == dir)?;
    Some(active.swap_remove(i))
}

fn journal_path(dir: &Path, pid: u32) -> PathBuf {
    dir.join(format!("{JOURNAL_PREFIX}{pid}{JOURNAL_SUFFIX}"))
}

/// A path as one word of a journal line: its bytes in hexadecimal, so that any file name
/// (spaces, newlines, bytes that are not UTF-8) survives the round trip.
fn encode(path: &Path) -> String {
    path.as_os_str().as_bytes().iter().map(|b| format!("{b:02x}")).collect()
}

fn decode(word: &str) -> Option<PathBuf> {
    if !word.len().is_multiple_of(2) {
        return None;
    }
    let bytes: Option<Vec<u8>> = (0..word.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(word.get(i..i + 2)?, 16).ok())
        .collect();
    Some(PathBuf::from(OsString::from_vec(bytes?)))
}

/// Starts this process's journal for the output folder `dir` (canonical). Returns false when
/// one is already running there (a second claim of the folder in this process, as the roofline
/// makes through its own run): the first claim commits or undoes both.
pub fn begin(dir: &Path) -> bool {
    let mut active = active();
    if active.iter().any(|j| j.dir == dir) {
        return false;
    }
    active.push(Journal {
        dir: dir.to_path_buf(),
        file: None,
        backups: Vec::new(),
        seen: HashSet::new(),
    });
    true
}

/// Records how to undo the write that is about to replace or create `target` (the file
/// itself, not a symlink to it), in the journal of the output folder that holds it: the folder
/// itself or its `data/` (wherever a symlink takes it). A file outside every running journal's
/// folder is not recorded.
pub fn before_write(target: &Path) -> anyhow::Result<()> {
    let mut active = active();
    if active.is_empty() {
        return Ok(());
    }
    // Absolute, so that a later run started from another folder undoes the same file.
    let name = target.file_name().context("a file to write has a name")?;
    let parent = match target.parent() {
        Some(p) if !p.as_os_str().is_empty() => p,
        _ => Path::new("."),
    };
    let target = parent
        .canonicalize()
        .with_context(|| format!("cannot write {}", target.display()))?
        .join(name);
    let folder = target.parent().expect("joined to a folder");
    let holds = |j: &&mut Journal| {
        folder == j.dir || j.dir.join("data").canonicalize().is_ok_and(|d| folder == d)
    };
    let Some(journal) = active.iter_mut().find(holds) else { return Ok(()) };
    if journal.seen.contains(&target) {
        return Ok(());
    }
    match std::fs::symlink_metadata(&target) {
        Ok(m) if m.is_file() => {
            let backup = keep_old(&target)?;
            let line = format!("R {} {}\n", encode(&target), encode(&backup));
            journal.backups.push(backup);
            journal.append(&line)?;
        }
        Ok(_) => {
            anyhow::bail!("cannot write {}: it is not a regular file", target.display())
        }
        Err(_) => journal.append(&format!("C {}\n", encode(&target)))?,
    }
    journal.seen.insert(target);
    Ok(())
}

/// Keeps the old `target` under a new name in its folder: a hard link (nothing is copied),
/// or a copy where the file system has no hard links.
fn keep_old(target: &Path) -> anyhow::Result<PathBuf> {
    let dir = target.parent().expect("an absolute path has a parent");
    for n in 0u32.. {
        let backup = dir
            .join(format!("{BACKUP_PREFIX}{}-{n}{BACKUP_SUFFIX}", std::process::id()));
        match std::fs::hard_link(target, &backup) {
            Ok(()) => return Ok(backup),
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => continue,
            Err(_) => {}
        }
        match OpenOptions::new().write(true).create_new(true).open(&backup) {
            Ok(mut to) => {
                let copied = std::fs::File::open(target)
                    .and_then(|mut from| std::io::copy(&mut from, &mut to))
                    .and_then(|_| to.sync_all());
                return copied.map(|()| backup).with_context(|| {
                    format!(
                        "cannot keep the old {} until the run ends",
                        target.display()
                    )
                });
            }
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => continue,
            Err(e) => {
                return Err(e).with_context(|| {
                    format!(
                        "cannot keep the old {} until the run ends",
                        target.display()
                    )
                })
            }
        }
    }
    unreachable!("some backup name is free")
}

/// Keeps every change of this process's run in `dir`: the journal is removed (from then on the
/// run's files are the folder's), then the old files it kept.
pub fn commit(dir: &Path) -> anyhow::Result<()> {
    let Some(journal) = take(dir) else { return Ok(()) };
    if journal.file.is_some() {
        let path = journal.path();
        std::fs::remove_file(&path)
            .with_context(|| format!("cannot end the journal {}", path.display()))?;
        for backup in &journal.backups {
            let _ = std::fs::remove_file(backup);
        }
    }
    Ok(())
}

/// Undoes every change of this process's run in `dir` (it failed).
pub fn roll_back(dir: &Path) -> anyhow::Result<()> {
    let Some(journal) = take(dir) else { return Ok(()) };
    if journal.file.is_some() {
        drop(journal.file);
        undo_journal(&journal_path(&journal.dir, std::process::id()))?;
    }
    Ok(())
}

/// Undoes the changes of every run that left its journal in `dir` (it was killed), except
/// this process's own. Call only while holding the folder's lock, or after the run that
/// wrote the journal has ended. Returns how many journals were undone.
pub fn recover(dir: &Path) -> anyhow::Result<usize> {
    let own = journal_path(dir, std::process::id());
    let mut undone = 0;
    for entry in std::fs::read_dir(dir).into_iter().flatten().flatten() {
        let name = entry.file_name();
        let name = name.to_string_lossy();
        if name.starts_with(JOURNAL_PREFIX) && name.ends_with(JOURNAL_SUFFIX) {
            let path = entry.path();
            if path != own {
                undo_journal(&path)?;
                undone += 1;
            }
        }
    }
    Ok(undone)
}

/// Applies the journal at `path` backwards, then removes it. Safe to repeat after a kill
/// halfway: a restored file's backup is gone, a removed file is absent. A last line without
/// its newline was being written when the run died, before the change it would undo.
fn undo_journal(path: &Path) -> anyhow::Result<()> {
    let bytes = std::fs::read(path)
        .with_context(|| format!("cannot read the journal {}", path.display()))?;
    let text = String::from_utf8_lossy(&bytes);
    let complete = match text.rfind('\n') {
        Some(end) => &text[..end],
        None => "",
    };
    let bad =
        || anyhow::anyhow!("{} is not a journal this book writes", path.display());
    for line in complete.lines().rev() {
        let words: Vec<&str> = line.split(' ').collect();
        match words[..] {
            ["R", target, backup] => {
                let (target, backup) =
                    (decode(target).ok_or_else(bad)?, decode(backup).ok_or_else(bad)?);
                if backup.exists() {
                    std::fs::rename(&backup, &target).with_context(|| {
                        format!(
                            "cannot restore {} from {}",
                            target.display(),
                            path.display()
                        )
                    })?;
                }
            }
            ["C", target] => {
                let target = decode(target).ok_or_else(bad)?;
                match std::fs::remove_file(&target) {
                    Err(e) if e.kind() != std::io::ErrorKind::NotFound => {
                        return Err(e).with_context(|| {
                            format!(
                                "cannot remove {} (an interrupted run's)",
                                target.display()
                            )
                        })
                    }
                    _ => {}
                }
            }
            _ => return Err(bad()),
        }
    }
    std::fs::remove_file(path)
        .with_context(|| format!("cannot remove the journal {}", path.display()))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn listing(dir: &Path) -> Vec<(String, String)> {
        let mut files: Vec<(String, String)> = std::fs::read_dir(dir)
            .unwrap()
            .map(|e| {
                let e = e.unwrap();
                let text = std::fs::read_to_string(e.path()).unwrap_or_default();
                (e.file_name().to_string_lossy().into_owned(), text)
            })
            .collect();
        files.sort();
        files
    }

    fn pair(name: &str, text: &str) -> (String, String) {
        (name.to_string(), text.to_string())
    }

    /// A whole-file write as [`super::super::atomic::write_atomic`] makes it: a new file
    /// renamed over the old one, whose inode the journal's hard link keeps.
    fn write(path: &Path, text: &str) {
        let tmp = path.with_extension("next");
        std::fs::write(&tmp, text).unwrap();
        before_write(path).unwrap();
        std::fs::rename(&tmp, path).unwrap();
    }

    #[test]
    fn paths_of_any_bytes_survive_the_journal() {
        let odd = Path::new(std::ffi::OsStr::from_bytes(b"/tmp/a b\n\xff.csv"));
        assert_eq!(decode(&encode(odd)).as_deref(), Some(odd));
        assert_eq!(decode("4"), None);
        assert_eq!(decode("zz"), None);
    }

    #[test]
    fn a_failed_run_leaves_the_folder_as_it_was_and_a_good_one_as_it_wrote_it() {
        let dir = tempfile::tempdir().unwrap();
        let d = dir.path().canonicalize().unwrap();
        std::fs::write(d.join("kept.md"), "old").unwrap();
        std::fs::write(d.join("mine.txt"), "the reader's").unwrap();
        let before = listing(&d);
        assert!(begin(&d));
        assert!(!begin(&d), "a second claim in one process starts no second journal");
        write(&d.join("kept.md"), "new");
        write(&d.join("kept.md"), "newer");
        write(&d.join("added.md"), "new");
        roll_back(&d).unwrap();
        assert_eq!(listing(&d), before);
        assert!(begin(&d));
        write(&d.join("kept.md"), "new");
        write(&d.join("added.md"), "new");
        commit(&d).unwrap();
        assert_eq!(
            listing(&d),
            [
                pair("added.md", "new"),
                pair("kept.md", "new"),
                pair("mine.txt", "the reader's")
            ]
        );
        // No journal running here: writes are not recorded.
        before_write(&d.join("kept.md")).unwrap();
        assert_eq!(listing(&d).len(), 3);
        // Nor are writes outside the folder a journal runs for.
        let elsewhere = tempfile::tempdir().unwrap();
        assert!(begin(&d));
        write(&elsewhere.path().join("x.md"), "x");
        roll_back(&d).unwrap();
        assert_eq!(
            std::fs::read_to_string(elsewhere.path().join("x.md")).unwrap(),
            "x"
        );
    }

    #[test]
    fn a_killed_runs_journal_is_undone_by_the_next_even_when_cut_mid_line() {
        let dir = tempfile::tempdir().unwrap();
        let d = dir.path().canonicalize().unwrap();
        std::fs::write(d.join("a.md"), "old a").unwrap();
        let before = listing(&d);
        assert!(begin(&d));
        write(&d.join("a.md"), "new a");
        write(&d.join("b.md"), "new b");
        // As if killed now: the journal stays; another process id's journal is what the next
        // run finds.
        drop(take(&d).unwrap());
        let left = journal_path(&d, std::process::id());
        let theirs = journal_path(&d, 1);
        std::fs::rename(&left, &theirs).unwrap();
        // A line cut short by the kill: its change was never made.
        let mut f = OpenOptions::new().append(true).open(&theirs).unwrap();
        f.write_all(b"C 2f746d70").unwrap();
        drop(f);
        assert_eq!(recover(&d).unwrap(), 1);
        assert_eq!(listing(&d), before);
        // Undoing twice (a kill during the undo) changes nothing more.
        assert_eq!(recover(&d).unwrap(), 0);
        std::fs::write(&theirs, "nonsense\n").unwrap();
        let err = recover(&d).unwrap_err().to_string();
        assert!(err.contains("not a journal"), "{err}");
    }
}
