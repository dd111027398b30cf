//! The stages over artifact folders: each module reads a stage's inputs from the folders earlier
//! stages wrote, runs the stage crate, writes the stage's folder through `skg-store` and returns
//! a typed report with its human rendering. The audit runs them in order with stage keys and
//! reuse and publishes the report; the index build turns an audit into a routing index.
//!
//! The command line converts its arguments into the options and jobs defined here (and in the
//! stage crates), reads the files a user names (labels, pairs, configs, queries) and prints;
//! everything between an input folder and an output folder happens here.

pub mod audit;
pub mod canonicalize;
#[cfg(test)]
mod code_id;
pub mod extract;
pub mod index;
pub mod measure;
pub mod scan;
pub mod score;

use std::path::Path;

use serde::Serialize;
use skg_model::{Diagnostic, Edge, RegistryInput, Skill, Stage};
use skg_store::tables;

/// Any error a stage's source can raise, boxed.
pub type BoxError = Box<dyn std::error::Error + Send + Sync + 'static>;

/// Why a stage run over folders failed.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// A folder or file could not be read or written; `context` says which and what for.
    #[error("{context}")]
    Io {
        /// What was being read or written, with its path.
        context: String,
        /// The underlying error.
        #[source]
        source: BoxError,
    },
    /// The embedding model failed or is missing.
    #[error("{0}\n(or pass --no-embeddings to compare descriptions lexically)")]
    EmbeddingModel(skg_embed::Error),
    /// Embedding failed.
    #[error(transparent)]
    Embed(skg_embed::Error),
    /// The slop model could not be loaded or applied.
    #[error(transparent)]
    Score(#[from] skg_score::Error),
    /// The SKG could not be measured.
    #[error(transparent)]
    Measure(#[from] skg_measure::Error),
    /// The report could not be rendered.
    #[error(transparent)]
    Report(#[from] skg_report::Error),
    /// A stage key could not be computed, read or written.
    #[error(transparent)]
    Artifact(#[from] skg_artifact::Error),
    /// The job asks for something that cannot be done.
    #[error("{0}")]
    Invalid(String),
}

impl From<skg_embed::Error> for Error {
    fn from(e: skg_embed::Error) -> Error {
        match e {
            skg_embed::Error::Missing { .. } => Error::EmbeddingModel(e),
            e => Error::Embed(e),
        }
    }
}

/// Result with [`Error`].
pub type Result<T, E = Error> = std::result::Result<T, E>;

/// Attaches what was being done to a folder or file error.
pub trait IoContext<T> {
    /// `context()` names the operation and its path.
    fn at(self, context: impl FnOnce() -> String) -> Result<T>;
}

impl<T, E: Into<BoxError>> IoContext<T> for std::result::Result<T, E> {
    fn at(self, context: impl FnOnce() -> String) -> Result<T> {
        self.map_err(|e| Error::Io {
            context: context(),
            source: e.into(),
        })
    }
}

/// Extract's tables, as the later stages read them.
#[derive(Debug, Clone, Default)]
pub struct ExtractData {
    /// Every skill.
    pub skills: Vec<Skill>,
    /// Relations extract found.
    pub edges: Vec<Edge>,
    /// What went wrong while reading.
    pub diagnostics: Vec<Diagnostic>,
    /// The registries read.
    pub registries: Vec<RegistryInput>,
}

impl From<skg_extract::Extraction> for ExtractData {
    fn from(x: skg_extract::Extraction) -> ExtractData {
        ExtractData {
            skills: x.skills,
            edges: x.edges,
            diagnostics: x.diagnostics,
            registries: x.registries,
        }
    }
}

/// An extract output folder.
///
/// # Errors
/// The folder is not a finished extract output or a table does not parse.
pub fn read_extract(dir: &Path) -> Result<ExtractData> {
    let m = skg_store::read_stage_manifest(dir, Stage::Extract).at(|| {
        format!(
            "cannot read the extract output {} (run `skg extract` first)",
            dir.display()
        )
    })?;
    let read = |t: &str| format!("cannot read {t} from {}", dir.display());
    Ok(ExtractData {
        skills: skg_store::read_ndjson(dir, tables::SKILLS.name).at(|| read("skills"))?,
        edges: skg_store::read_ndjson(dir, tables::EDGES.name).at(|| read("edges"))?,
        diagnostics: skg_store::read_ndjson(dir, tables::DIAGNOSTICS.name)
            .at(|| read("diagnostics"))?,
        registries: m.inputs,
    })
}

/// A table of a finished folder `stage` wrote.
///
/// # Errors
/// The folder is not `stage`'s finished output or the table does not parse.
pub fn read_table<T: serde::de::DeserializeOwned>(
    dir: &Path,
    stage: Stage,
    table: &tables::Table<T>,
) -> Result<Vec<T>> {
    skg_store::read_rows(dir, stage, table)
        .at(|| format!("cannot read {} from {}", table.name, dir.display()))
}

/// A stage's manifest options: its typed options as serialized, with `extra` keys (where its
/// inputs came from) beside them.
fn manifest_options(
    options: &impl Serialize,
    extra: serde_json::Value,
) -> Result<serde_json::Value> {
    let mut v = serde_json::to_value(options).at(|| "cannot serialize the options".to_owned())?;
    if let (Some(m), serde_json::Value::Object(e)) = (v.as_object_mut(), extra) {
        m.extend(e);
    }
    Ok(v)
}

/// Seconds rounded to the millisecond, as reports print them.
fn millis(seconds: f64) -> f64 {
    (seconds * 1000.0).round() / 1000.0
}
