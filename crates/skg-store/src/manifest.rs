//! `manifest.json`: what an output folder holds and where it came from.

use std::{collections::BTreeMap, path::Path};

use serde::{Deserialize, Serialize};
use skg_model::{RegistryInput, Stage};

use crate::{Error, MANIFEST_FILE, Result};

/// The tool that wrote a folder.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Tool {
    /// `skg`.
    pub name: String,
    /// Its version.
    pub version: String,
}

/// One table of the folder.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct TableInfo {
    /// Table name.
    pub name: String,
    /// Rows.
    pub rows: u64,
    /// Parquet file name.
    pub parquet: String,
    /// NDJSON file name.
    pub ndjson: String,
}

/// `manifest.json`. No timestamps: the same inputs give the same bytes.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Manifest {
    /// Table schema version ([`skg_model::SCHEMA_VERSION`]).
    pub schema_version: u32,
    /// The stage that wrote it.
    pub stage: Stage,
    /// The tool that wrote it.
    pub tool: Tool,
    /// The registries read, with their revisions and content hashes.
    pub inputs: Vec<RegistryInput>,
    /// Row counts by table (`skills`, `documents`, `edges`, `diagnostics`), and a stage's other
    /// counts (the scan's `incomplete_catalogs`, only when there are some).
    pub counts: BTreeMap<String, u64>,
    /// Tables and their files (filled in by [`crate::Staging::commit`]).
    #[serde(default)]
    pub tables: Vec<TableInfo>,
    /// Options that change the output.
    pub options: serde_json::Value,
}

impl Manifest {
    /// The manifest of a `stage` output written by this skg (`tables` is filled in by
    /// [`crate::Staging::commit`]).
    pub fn new(
        stage: Stage,
        inputs: Vec<RegistryInput>,
        counts: BTreeMap<String, u64>,
        options: serde_json::Value,
    ) -> Manifest {
        Manifest {
            schema_version: skg_model::SCHEMA_VERSION,
            stage,
            tool: Tool {
                name: "skg".into(),
                version: env!("CARGO_PKG_VERSION").into(),
            },
            inputs,
            counts,
            tables: Vec::new(),
            options,
        }
    }
}

/// Reads the manifest of a finished folder (refusing unfinished ones and other schema versions).
pub fn read_manifest(dir: &Path) -> Result<Manifest> {
    skg_artifact::require_finished(dir)?;
    let m: Manifest = skg_artifact::read_json(&dir.join(MANIFEST_FILE))?;
    if m.schema_version != skg_model::SCHEMA_VERSION {
        return Err(Error::SchemaVersion {
            path: dir.to_path_buf(),
            found: m.schema_version,
            expected: skg_model::SCHEMA_VERSION,
        });
    }
    Ok(m)
}

/// [`read_manifest`] of a folder that `stage` wrote (another stage's folder is refused).
pub fn read_stage_manifest(dir: &Path, stage: Stage) -> Result<Manifest> {
    let m = read_manifest(dir)?;
    if m.stage != stage {
        return Err(Error::WrongStage {
            path: dir.to_path_buf(),
            found: m.stage,
            expected: stage,
        });
    }
    Ok(m)
}
