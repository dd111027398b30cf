//! Writing a folder beside its destination and publishing it with a rename.

use std::{
    io::{BufWriter, Write},
    path::{Path, PathBuf},
};

use serde::{Serialize, de::DeserializeOwned};
use skg_model::Stage;

use rayon::prelude::*;

use skg_artifact::Staged;

use crate::{Error, MANIFEST_FILE, Manifest, Result, TableInfo, frame, tables::Table};

/// An output folder being written: tables and files in an [`skg_artifact::Staged`] folder
/// beside the destination. Nothing is visible at the destination until [`commit`]; dropping a
/// `Staging` without committing removes the temporary folder and leaves the previous output
/// untouched.
///
/// [`commit`]: Staging::commit
#[derive(Debug)]
pub struct Staging {
    staged: Staged,
    tables: Vec<TableInfo>,
}

impl Staging {
    /// Starts a folder that will replace `dest`.
    pub fn begin(dest: &Path) -> Result<Staging> {
        Ok(Staging {
            staged: Staged::beside(dest)?,
            tables: Vec::new(),
        })
    }

    /// The temporary folder (for extra files a stage writes itself).
    pub fn path(&self) -> &Path {
        self.staged.path()
    }

    /// Writes a file that is not a table (a cache, say) into the folder, published with it.
    pub fn write_file(&mut self, name: &str, bytes: &[u8]) -> Result<()> {
        Ok(self.staged.write_file(name, bytes)?)
    }

    /// Writes `rows` as `<table>.parquet` and `<table>.ndjson`.
    pub fn write_table<T: Serialize + Sync>(&mut self, spec: &Table<T>, rows: &[T]) -> Result<()> {
        let parquet = format!("{}.parquet", spec.name);
        let ndjson = format!("{}.ndjson", spec.name);
        let tmp = self.staged.path().to_path_buf();
        let t = std::time::Instant::now();
        let mut df = frame::build(spec, rows)?;
        tracing::debug!(
            table = spec.name,
            seconds = t.elapsed().as_secs_f64(),
            "store::frame"
        );
        let t = std::time::Instant::now();
        let ppath = tmp.join(&parquet);
        let mut f = std::fs::File::create(&ppath).map_err(|e| Error::io(&ppath, e))?;
        frame::write_parquet(spec.name, &mut df, &mut f)?;
        f.sync_all().map_err(|e| Error::io(&ppath, e))?;
        tracing::debug!(
            table = spec.name,
            seconds = t.elapsed().as_secs_f64(),
            "store::parquet"
        );
        let t = std::time::Instant::now();

        let npath = tmp.join(&ndjson);
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
            self.staged.link_file(f, &src_dir.join(f))?;
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
        Ok(self.staged.link_dir(name, src)?)
    }

    /// Writes `manifest.json` (with the tables written so far), then publishes the folder
    /// (`_SUCCESS` last, synced, one rename over the previous output). Returns the destination.
    pub fn commit(mut self, mut manifest: Manifest) -> Result<PathBuf> {
        manifest.tables = std::mem::take(&mut self.tables);
        self.staged.write_json(MANIFEST_FILE, &manifest)?;
        Ok(self.staged.publish()?)
    }
}

/// Reads a table's NDJSON rows from a finished folder.
pub fn read_ndjson<T: DeserializeOwned>(dir: &Path, table: &str) -> Result<Vec<T>> {
    skg_artifact::require_finished(dir)?;
    Ok(skg_artifact::read_ndjson(
        &dir.join(format!("{table}.ndjson")),
    )?)
}

/// The rows of a declared table in a finished folder written by `stage` (another stage's folder
/// is refused, naming both).
pub fn read_rows<T: DeserializeOwned>(
    dir: &Path,
    stage: Stage,
    table: &Table<T>,
) -> Result<Vec<T>> {
    crate::read_stage_manifest(dir, stage)?;
    read_ndjson(dir, table.name)
}
