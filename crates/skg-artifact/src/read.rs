//! Reading finished folders: the `_SUCCESS` check, JSON and NDJSON with located errors, and a
//! content hash of a folder's files.

use std::{
    io::BufRead as _,
    path::{Path, PathBuf},
};

use serde::de::DeserializeOwned;

use crate::{Error, Result, SUCCESS_FILE};

/// Refuses a folder without `_SUCCESS` (being written, or its run failed).
pub fn require_finished(dir: &Path) -> Result<()> {
    if dir.join(SUCCESS_FILE).is_file() {
        Ok(())
    } else {
        Err(Error::Unfinished(dir.to_path_buf()))
    }
}

/// Reads one JSON document.
pub fn read_json<T: DeserializeOwned>(path: &Path) -> Result<T> {
    let text = std::fs::read_to_string(path).map_err(|e| Error::io(path, e))?;
    serde_json::from_str(&text).map_err(|e| Error::json(path, e))
}

/// Reads NDJSON rows (blank lines skipped); a bad row is an error naming its line.
pub fn read_ndjson<T: DeserializeOwned>(path: &Path) -> Result<Vec<T>> {
    let f = std::fs::File::open(path).map_err(|e| Error::io(path, e))?;
    let mut rows = Vec::new();
    for (n, line) in std::io::BufReader::new(f).lines().enumerate() {
        let line = line.map_err(|e| Error::io(path, e))?;
        if line.trim().is_empty() {
            continue;
        }
        rows.push(
            serde_json::from_str(&line)
                .map_err(|e| Error::json(path, format!("line {}: {e}", n + 1)))?,
        );
    }
    Ok(rows)
}

/// blake3 of the regular files directly in `dir` (name and bytes, in name order), leaving out
/// the names in `skip` (caches that are not output). Sub-folders are not entered.
pub fn hash_files(dir: &Path, skip: &[&str]) -> Result<String> {
    let mut names: Vec<PathBuf> = std::fs::read_dir(dir)
        .map_err(|e| Error::io(dir, e))?
        .map(|e| e.map(|e| e.path()))
        .collect::<std::io::Result<_>>()
        .map_err(|e| Error::io(dir, e))?;
    names.retain(|p| {
        p.is_file()
            && p.file_name()
                .is_none_or(|n| !skip.iter().any(|s| n == std::ffi::OsStr::new(s)))
    });
    names.sort();
    let mut h = blake3::Hasher::new();
    for p in names {
        h.update(p.file_name().unwrap_or_default().as_encoded_bytes());
        let mut f = std::fs::File::open(&p).map_err(|e| Error::io(&p, e))?;
        h.update_reader(&mut f).map_err(|e| Error::io(&p, e))?;
    }
    Ok(h.finalize().to_hex().to_string())
}
