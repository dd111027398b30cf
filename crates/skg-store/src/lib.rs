//! Stage output folders: tables as Parquet (via polars) and NDJSON, a `manifest.json`, and
//! `_SUCCESS`, published atomically.
//!
//! ```no_run
//! # fn demo(skills: &[skg_model::Skill], manifest: skg_store::Manifest) -> skg_store::Result<()> {
//! let mut out = skg_store::Staging::begin(std::path::Path::new("reports/extract"))?;
//! out.write_table(&skg_store::tables::SKILLS, skills)?;
//! out.commit(manifest)?; // _SUCCESS last, then one rename into place
//! # Ok(()) }
//! ```
//!
//! The only crate that links polars. A table's columns are declared once in [`tables`]
//! (name, type, where the value comes from in the row, what it means); Parquet, NDJSON and
//! `skg schema` all follow that declaration, so they can't drift apart.
#![allow(
    clippy::disallowed_methods,
    reason = "this crate writes and reads the stage output folders' tables"
)]

mod audit;
mod error;
mod frame;
mod manifest;
mod staging;
pub mod tables;

pub use crate::{
    audit::publish_audit,
    error::{Error, Result},
    manifest::{Manifest, TableInfo, Tool, read_manifest, read_stage_manifest},
    staging::{Staging, read_ndjson, read_rows},
    tables::{ColumnSpec, ColumnType, Table, TableSpec},
};

pub use skg_artifact::{MANIFEST_FILE, SUCCESS_FILE};

#[cfg(test)]
mod tests;
