//! Writing a file so that a reader, a run killed halfway or a full disk only ever sees the old
//! file or the new one, never a part of it, and never a file outside the run's folder.

use std::io::Write;
use std::path::{Path, PathBuf};

use anyhow::Context;

use super::args::UsageError;

/// The pages `reproduce --compare` writes beside the records: not figures or tables, so the
/// audit of a folder never asks them for a CSV, whatever ran in it before.
pub const COMPARISON_PAGES: &[&str] = &["compare.md", "compare.html"];

/// How the temporary files of [`write_atomic`] are named: `.cmbook-<random>.tmp`.
pub const TEMP_PREFIX: &str = ".cmbook-";
pub const TEMP_SUFFIX: &str = ".tmp";

/// Writes `bytes` to `path` so that a reader (or a run killed halfway, or a full disk) only
/// ever sees the old file or the new one: the bytes go to a temporary file in the same folder,
/// which is flushed to disk and then renamed over `path`. A symlink at `path` is written
/// through (atomically, at its target) only where its target lies in the same folder; one that
/// leads out of it is refused, so that a run never writes outside its output folder.
pub fn write_atomic(path: &Path, bytes: &[u8]) -> anyhow::Result<()> {
    let target = write_target(path)?;
    let dir = parent_of(&target);
    let mut builder = tempfile::Builder::new();
    builder.prefix(TEMP_PREFIX).suffix(TEMP_SUFFIX);
    // A temporary file is private (0600); the files a run leaves are as readable as any
    // file the reader creates (0666 less their umask), as they were before writes were atomic.
    #[cfg(unix)]
    builder.permissions(std::os::unix::fs::PermissionsExt::from_mode(0o666));
    let mut tmp = builder.tempfile_in(dir).with_context(|| {
        format!("cannot write {}: no temporary file in its folder", path.display())
    })?;
    tmp.write_all(bytes)
        .and_then(|()| tmp.as_file().sync_all())
        .with_context(|| format!("cannot write {}", path.display()))?;
    // The run's journal keeps the old file (or notes that there was none) first.
    super::undo::before_write(&target)?;
    tmp.persist(&target)
        .map_err(|e| e.error)
        .with_context(|| format!("cannot write {}", path.display()))?;
    Ok(())
}

fn parent_of(path: &Path) -> &Path {
    match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p,
        _ => Path::new("."),
    }
}

/// Where a write to `path` lands: `path` itself, or the target of a symlink at `path` that
/// stays in `path`'s folder.
fn write_target(path: &Path) -> anyhow::Result<PathBuf> {
    match std::fs::symlink_metadata(path) {
        Ok(m) if m.file_type().is_symlink() => {}
        Ok(m) if m.is_file() => return Ok(path.to_path_buf()),
        Ok(_) => {
            return Err(UsageError(format!(
                "cannot write {}: it is not a regular file",
                path.display()
            ))
            .into())
        }
        Err(_) => return Ok(path.to_path_buf()),
    }
    let dir = parent_of(path)
        .canonicalize()
        .with_context(|| format!("cannot write {}", path.display()))?;
    match path.canonicalize() {
        Ok(target) if target.parent() == Some(dir.as_path()) && !target.is_dir() => {
            Ok(target)
        }
        Ok(target) => Err(UsageError(format!(
            "refusing to write {}: it is a symlink to {}, outside its folder",
            path.display(),
            target.display()
        ))
        .into()),
        Err(_) => Err(UsageError(format!(
            "refusing to write {}: it is a symlink whose target does not exist",
            path.display()
        ))
        .into()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn listing(dir: &Path) -> Vec<String> {
        let mut names: Vec<String> = std::fs::read_dir(dir)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        names.sort();
        names
    }

    #[test]
    fn an_atomic_write_replaces_the_file_whole_and_leaves_no_temporary_file() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("t.md");
        write_atomic(&path, b"old").unwrap();
        write_atomic(&path, b"new and longer").unwrap();
        assert_eq!(std::fs::read(&path).unwrap(), b"new and longer");
        assert_eq!(listing(dir.path()), ["t.md"]);
        // As readable as a file written the ordinary way (the umask decides both).
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            let plain = dir.path().join("plain");
            std::fs::write(&plain, b"x").unwrap();
            let mode =
                |p: &Path| std::fs::metadata(p).unwrap().permissions().mode() & 0o777;
            assert_eq!(mode(&path), mode(&plain));
        }
    }

    #[cfg(unix)]
    #[test]
    fn a_symlink_out_of_the_folder_is_refused_and_its_target_kept() {
        let outside = tempfile::tempdir().unwrap();
        let victim = outside.path().join("victim.txt");
        std::fs::write(&victim, b"precious").unwrap();
        let dir = tempfile::tempdir().unwrap();
        let link = dir.path().join("ceilings-copy.svg");
        std::os::unix::fs::symlink(&victim, &link).unwrap();
        let err = write_atomic(&link, b"<svg/>").unwrap_err().to_string();
        assert!(
            err.contains("refusing to write") && err.contains("ceilings-copy.svg"),
            "{err}"
        );
        assert_eq!(std::fs::read(&victim).unwrap(), b"precious");
        assert!(std::fs::symlink_metadata(&link).unwrap().file_type().is_symlink());
        // A dangling one is refused too, and nothing is created where it points.
        let dangling = dir.path().join("d.md");
        std::os::unix::fs::symlink(outside.path().join("nothing"), &dangling).unwrap();
        let err = write_atomic(&dangling, b"x").unwrap_err().to_string();
        assert!(err.contains("does not exist") && err.contains("d.md"), "{err}");
        assert!(!outside.path().join("nothing").exists());
        assert_eq!(listing(dir.path()), ["ceilings-copy.svg", "d.md"]);
    }

    #[cfg(unix)]
    #[test]
    fn a_symlink_within_the_folder_is_written_at_its_target() {
        let dir = tempfile::tempdir().unwrap();
        let target = dir.path().join("real.md");
        std::fs::write(&target, b"old").unwrap();
        let link = dir.path().join("alias.md");
        std::os::unix::fs::symlink("real.md", &link).unwrap();
        write_atomic(&link, b"new").unwrap();
        assert_eq!(std::fs::read(&target).unwrap(), b"new");
        assert!(std::fs::symlink_metadata(&link).unwrap().file_type().is_symlink());
    }
}
