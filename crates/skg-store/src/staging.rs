//! Writing a folder beside its destination and publishing it with a rename.

use std::{
    io::{BufRead, BufWriter, Write},
    path::{Path, PathBuf},
};

use serde::{Serialize, de::DeserializeOwned};

use rayon::prelude::*;

use crate::{
    Error, MANIFEST_FILE, Manifest, Result, SUCCESS_FILE, TableInfo, frame, tables::Table,
};

/// An output folder being written. Nothing is visible at the destination until [`commit`];
/// dropping a `Staging` without committing removes the temporary folder and leaves the
/// previous output untouched.
///
/// [`commit`]: Staging::commit
#[derive(Debug)]
pub struct Staging {
    tmp: PathBuf,
    dest: PathBuf,
    tables: Vec<TableInfo>,
    committed: bool,
}

impl Staging {
    /// Starts a folder that will replace `dest`.
    pub fn begin(dest: &Path) -> Result<Staging> {
        let parent = dest
            .parent()
            .filter(|p| !p.as_os_str().is_empty())
            .unwrap_or(Path::new("."));
        std::fs::create_dir_all(parent).map_err(|e| Error::io(parent, e))?;
        let name = dest
            .file_name()
            .map_or_else(|| "out".into(), |n| n.to_string_lossy().into_owned());
        let tmp = parent.join(format!(".{name}.tmp-{}", std::process::id()));
        if tmp.exists() {
            std::fs::remove_dir_all(&tmp).map_err(|e| Error::io(&tmp, e))?;
        }
        std::fs::create_dir(&tmp).map_err(|e| Error::io(&tmp, e))?;
        Ok(Staging {
            tmp,
            dest: dest.to_path_buf(),
            tables: Vec::new(),
            committed: false,
        })
    }

    /// The temporary folder (for extra files a stage writes itself).
    pub fn path(&self) -> &Path {
        &self.tmp
    }

    /// Writes a file that is not a table (a cache, say) into the folder, published with it.
    pub fn write_file(&mut self, name: &str, bytes: &[u8]) -> Result<()> {
        write_synced(&self.tmp.join(name), bytes)
    }

    /// Writes `rows` as `<table>.parquet` and `<table>.ndjson`.
    pub fn write_table<T: Serialize + Sync>(&mut self, spec: &Table<T>, rows: &[T]) -> Result<()> {
        let parquet = format!("{}.parquet", spec.name);
        let ndjson = format!("{}.ndjson", spec.name);
        let t = std::time::Instant::now();
        let mut df = frame::build(spec, rows)?;
        tracing::debug!(
            table = spec.name,
            seconds = t.elapsed().as_secs_f64(),
            "store::frame"
        );
        let t = std::time::Instant::now();
        let ppath = self.tmp.join(&parquet);
        let mut f = std::fs::File::create(&ppath).map_err(|e| Error::io(&ppath, e))?;
        frame::write_parquet(spec.name, &mut df, &mut f)?;
        f.sync_all().map_err(|e| Error::io(&ppath, e))?;
        tracing::debug!(
            table = spec.name,
            seconds = t.elapsed().as_secs_f64(),
            "store::parquet"
        );
        let t = std::time::Instant::now();

        let npath = self.tmp.join(&ndjson);
        // Rows are serialized in parallel blocks, then written in order.
        let blocks: Vec<Vec<u8>> = rows
            .par_chunks(2048)
            .map(|chunk| {
                let mut buf = Vec::with_capacity(chunk.len() * 256);
                for row in chunk {
                    serde_json::to_writer(&mut buf, row)?;
                    buf.push(b'\n');
                }
                Ok(buf)
            })
            .collect::<Result<_, serde_json::Error>>()
            .map_err(|e| Error::Json {
                path: npath.clone(),
                message: e.to_string(),
            })?;
        let f = std::fs::File::create(&npath).map_err(|e| Error::io(&npath, e))?;
        let mut w = BufWriter::new(f);
        for b in &blocks {
            w.write_all(b).map_err(|e| Error::io(&npath, e))?;
        }
        let f = w
            .into_inner()
            .map_err(|e| Error::io(&npath, e.into_error()))?;
        f.sync_all().map_err(|e| Error::io(&npath, e))?;
        tracing::debug!(
            table = spec.name,
            seconds = t.elapsed().as_secs_f64(),
            "store::ndjson"
        );
        self.tables.push(TableInfo {
            name: spec.name.to_owned(),
            rows: rows.len() as u64,
            parquet,
            ndjson,
        });
        Ok(())
    }

    /// Adds a table another finished folder holds (`<table>.parquet` and `.ndjson`), hard-linked
    /// (copied where links are not possible), listed in the manifest like a written one.
    pub fn link_table(&mut self, table: &str, src_dir: &Path, rows: u64) -> Result<()> {
        let parquet = format!("{table}.parquet");
        let ndjson = format!("{table}.ndjson");
        for f in [&parquet, &ndjson] {
            link_or_copy(&src_dir.join(f), &self.tmp.join(f))?;
        }
        self.tables.push(TableInfo {
            name: table.to_owned(),
            rows,
            parquet,
            ndjson,
        });
        Ok(())
    }

    /// Adds a whole folder (recursively), hard-linked where possible, as `name`.
    pub fn link_dir(&mut self, name: &str, src: &Path) -> Result<()> {
        link_tree(src, &self.tmp.join(name))
    }

    /// Writes `manifest.json` (with the tables written so far) and `_SUCCESS`, then moves the
    /// folder to its destination, replacing the previous one. Returns the destination.
    pub fn commit(mut self, mut manifest: Manifest) -> Result<PathBuf> {
        manifest.tables = std::mem::take(&mut self.tables);
        let mpath = self.tmp.join(MANIFEST_FILE);
        let mut text = serde_json::to_string_pretty(&manifest).map_err(|e| Error::Json {
            path: mpath.clone(),
            message: e.to_string(),
        })?;
        text.push('\n');
        write_synced(&mpath, text.as_bytes())?;
        write_synced(&self.tmp.join(SUCCESS_FILE), b"")?;

        let old = self.dest.with_file_name(format!(
            ".{}.old-{}",
            self.dest
                .file_name()
                .map_or_else(|| "out".into(), |n| n.to_string_lossy().into_owned()),
            std::process::id()
        ));
        let had_old = self.dest.exists();
        if had_old {
            std::fs::rename(&self.dest, &old).map_err(|e| Error::io(&self.dest, e))?;
        }
        if let Err(e) = std::fs::rename(&self.tmp, &self.dest) {
            if had_old {
                // Put the previous output back before reporting.
                let _ = std::fs::rename(&old, &self.dest);
            }
            return Err(Error::io(&self.dest, e));
        }
        self.committed = true;
        if had_old {
            let _ = std::fs::remove_dir_all(&old);
        }
        Ok(self.dest.clone())
    }
}

impl Drop for Staging {
    fn drop(&mut self) {
        if !self.committed {
            let _ = std::fs::remove_dir_all(&self.tmp);
        }
    }
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

fn write_synced(path: &Path, bytes: &[u8]) -> Result<()> {
    let mut f = std::fs::File::create(path).map_err(|e| Error::io(path, e))?;
    f.write_all(bytes).map_err(|e| Error::io(path, e))?;
    f.sync_all().map_err(|e| Error::io(path, e))
}

/// Reads a table's NDJSON rows from a finished folder.
pub fn read_ndjson<T: DeserializeOwned>(dir: &Path, table: &str) -> Result<Vec<T>> {
    if !dir.join(SUCCESS_FILE).is_file() {
        return Err(Error::Unfinished(dir.to_path_buf()));
    }
    let path = dir.join(format!("{table}.ndjson"));
    let f = std::fs::File::open(&path).map_err(|e| Error::io(&path, e))?;
    let mut rows = Vec::new();
    for (n, line) in std::io::BufReader::new(f).lines().enumerate() {
        let line = line.map_err(|e| Error::io(&path, e))?;
        if line.is_empty() {
            continue;
        }
        rows.push(serde_json::from_str(&line).map_err(|e| Error::Json {
            path: path.clone(),
            message: format!("line {}: {e}", n + 1),
        })?);
    }
    Ok(rows)
}
