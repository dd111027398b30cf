//! Writing a folder beside its destination and publishing it with one rename.

use std::path::{Path, PathBuf};

use serde::Serialize;

use crate::{Error, Result, SUCCESS_FILE};

/// A folder being written beside its destination. Nothing is visible at the destination until
/// [`Staged::publish`]; dropping it unpublished removes the temporary folder and leaves the
/// previous one untouched.
#[derive(Debug)]
pub struct Staged {
    /// `.<name>.tmp-<pid>` next to `dest`; `None` once published.
    tmp: Option<PathBuf>,
    dest: PathBuf,
}

impl Staged {
    /// A fresh, empty `.<name>.tmp-<pid>` folder next to `dest` (an old one of this process is
    /// removed first).
    pub fn beside(dest: &Path) -> Result<Staged> {
        let parent = parent_of(dest);
        std::fs::create_dir_all(parent).map_err(|e| Error::io(parent, e))?;
        let tmp = parent.join(format!(".{}.tmp-{}", name_of(dest), std::process::id()));
        if tmp.exists() {
            std::fs::remove_dir_all(&tmp).map_err(|e| Error::io(&tmp, e))?;
        }
        std::fs::create_dir(&tmp).map_err(|e| Error::io(&tmp, e))?;
        Ok(Staged {
            tmp: Some(tmp),
            dest: dest.to_path_buf(),
        })
    }

    /// The temporary folder, for files a caller writes itself (sync them: [`write_synced`]).
    pub fn path(&self) -> &Path {
        self.tmp.as_deref().unwrap_or(&self.dest)
    }

    /// Where the folder will be published.
    pub fn dest(&self) -> &Path {
        &self.dest
    }

    /// Writes `bytes` as `name` (a path relative to the folder, whose parent folder exists:
    /// [`Staged::create_dir`]), synced.
    pub fn write_file(&self, name: &str, bytes: &[u8]) -> Result<()> {
        write_synced(&self.path().join(name), bytes)
    }

    /// Writes `name` by streaming into it (buffered, then synced): for files too large to hold
    /// twice in memory.
    pub fn write_with(
        &self,
        name: &str,
        write: impl FnOnce(&mut dyn std::io::Write) -> std::io::Result<()>,
    ) -> Result<()> {
        write_streamed(&self.path().join(name), write)
    }

    /// Creates the sub-folder `name` (and its parents).
    pub fn create_dir(&self, name: &str) -> Result<()> {
        let path = self.path().join(name);
        std::fs::create_dir_all(&path).map_err(|e| Error::io(&path, e))
    }

    /// Writes `value` as pretty JSON with a final newline.
    pub fn write_json<T: Serialize + ?Sized>(&self, name: &str, value: &T) -> Result<()> {
        let mut text = serde_json::to_string_pretty(value)
            .map_err(|e| Error::json(self.path().join(name), e))?;
        text.push('\n');
        self.write_file(name, text.as_bytes())
    }

    /// Writes `rows` as NDJSON (one compact JSON object per line) and returns the bytes
    /// written (callers that hash their output hash these).
    pub fn write_ndjson<T: Serialize>(&self, name: &str, rows: &[T]) -> Result<Vec<u8>> {
        let buf = ndjson(&self.path().join(name), rows)?;
        self.write_file(name, &buf)?;
        Ok(buf)
    }

    /// Adds `src` as `name`, hard-linked (copied where links are not possible). For files of
    /// another finished folder, which are never written again.
    pub fn link_file(&self, name: &str, src: &Path) -> Result<()> {
        link_or_copy(src, &self.path().join(name))
    }

    /// Adds the folder `src` (recursively) as `name`, files hard-linked where possible.
    pub fn link_dir(&self, name: &str, src: &Path) -> Result<()> {
        link_tree(src, &self.path().join(name))
    }

    /// Writes `_SUCCESS`, syncs the folder, renames it over the destination (the previous
    /// folder is moved aside first, restored if the rename fails, removed after) and syncs the
    /// parent folder so that the rename itself is durable. Returns the destination.
    pub fn publish(mut self) -> Result<PathBuf> {
        let Some(tmp) = self.tmp.clone() else {
            return Ok(self.dest.clone());
        };
        write_synced(&tmp.join(SUCCESS_FILE), b"")?;
        sync_dir(&tmp)?;
        let old = parent_of(&self.dest).join(format!(
            ".{}.old-{}",
            name_of(&self.dest),
            std::process::id()
        ));
        let had_old = self.dest.exists();
        if had_old {
            if old.exists() {
                std::fs::remove_dir_all(&old).map_err(|e| Error::io(&old, e))?;
            }
            std::fs::rename(&self.dest, &old).map_err(|e| Error::io(&self.dest, e))?;
        }
        if let Err(e) = std::fs::rename(&tmp, &self.dest) {
            if had_old {
                // Put the previous folder back before reporting.
                let _ = std::fs::rename(&old, &self.dest);
            }
            return Err(Error::io(&self.dest, e));
        }
        self.tmp = None;
        sync_dir(parent_of(&self.dest))?;
        if had_old {
            // The new folder is in place; a leftover old one is only disk space.
            let _ = std::fs::remove_dir_all(&old);
        }
        Ok(self.dest.clone())
    }
}

impl Drop for Staged {
    fn drop(&mut self) {
        if let Some(tmp) = self.tmp.take() {
            let _ = std::fs::remove_dir_all(tmp);
        }
    }
}

fn parent_of(dest: &Path) -> &Path {
    dest.parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(Path::new("."))
}

fn name_of(dest: &Path) -> String {
    dest.file_name()
        .map_or_else(|| "out".into(), |n| n.to_string_lossy().into_owned())
}

/// Writes `bytes` to `path` and syncs them to disk.
pub fn write_synced(path: &Path, bytes: &[u8]) -> Result<()> {
    write_streamed(path, |w| w.write_all(bytes))
}

/// Creates `path`, lets `write` stream into it (buffered; a write larger than the buffer goes
/// straight to the file), then syncs it to disk. An error names `path`.
fn write_streamed(
    path: &Path,
    write: impl FnOnce(&mut dyn std::io::Write) -> std::io::Result<()>,
) -> Result<()> {
    let file = std::fs::File::create(path).map_err(|e| Error::io(path, e))?;
    let mut out = std::io::BufWriter::with_capacity(1 << 20, file);
    write(&mut out).map_err(|e| Error::io(path, e))?;
    let file = out
        .into_inner()
        .map_err(|e| Error::io(path, e.into_error()))?;
    file.sync_all().map_err(|e| Error::io(path, e))
}

/// Replaces the file at `path` whole: `bytes` go to a temporary file beside it (synced), which
/// is renamed over `path`; then the folder is synced, so a crash leaves the old file or the new
/// one, never a torn one.
pub fn write_file(path: &Path, bytes: &[u8]) -> Result<()> {
    let name = path
        .file_name()
        .map_or_else(|| "out".into(), |n| n.to_string_lossy().into_owned());
    let tmp = path.with_file_name(format!(".{name}.tmp"));
    write_synced(&tmp, bytes)?;
    if let Err(e) = std::fs::rename(&tmp, path) {
        let _ = std::fs::remove_file(&tmp);
        return Err(Error::io(path, e));
    }
    sync_dir(parent_of(path))
}

/// Replaces the file at `path` whole with `rows` as NDJSON (one compact JSON object per line),
/// as [`write_file`] does.
pub fn write_ndjson<T: Serialize>(path: &Path, rows: &[T]) -> Result<()> {
    write_file(path, &ndjson(path, rows)?)
}

/// `rows` as NDJSON bytes; an error names `path`.
fn ndjson<T: Serialize>(path: &Path, rows: &[T]) -> Result<Vec<u8>> {
    let mut buf = Vec::new();
    for r in rows {
        serde_json::to_writer(&mut buf, r).map_err(|e| Error::json(path, e))?;
        buf.push(b'\n');
    }
    Ok(buf)
}

/// Syncs a folder's entries (a rename or a new file in it) to disk.
pub fn sync_dir(path: &Path) -> Result<()> {
    std::fs::File::open(path)
        .and_then(|f| f.sync_all())
        .map_err(|e| Error::io(path, e))
}

fn link_or_copy(src: &Path, dst: &Path) -> Result<()> {
    if std::fs::hard_link(src, dst).is_ok() {
        return Ok(());
    }
    std::fs::copy(src, dst).map_err(|e| Error::io(src, e))?;
    Ok(())
}

fn link_tree(src: &Path, dst: &Path) -> Result<()> {
    std::fs::create_dir_all(dst).map_err(|e| Error::io(dst, e))?;
    let mut entries: Vec<_> = std::fs::read_dir(src)
        .map_err(|e| Error::io(src, e))?
        .collect::<std::io::Result<_>>()
        .map_err(|e| Error::io(src, e))?;
    entries.sort_by_key(std::fs::DirEntry::file_name);
    for e in entries {
        let ty = e.file_type().map_err(|err| Error::io(e.path(), err))?;
        let to = dst.join(e.file_name());
        if ty.is_dir() {
            link_tree(&e.path(), &to)?;
        } else if ty.is_file() {
            link_or_copy(&e.path(), &to)?;
        }
    }
    Ok(())
}
