//! The routing index: a folder that holds everything a router needs to answer "which skills does
//! this task need?" without the registries — skill entries (with their relations, quarantine and
//! alias status), the searchable documents, a BM25 index (tantivy) over them and dense vectors of
//! each skill's abstract, overview and usage sections — and the retrieval over it: BM25, dense cosine, their
//! fusion, one best hit per skill, a score floor and the rejected list.
//!
//! ```text
//! <index>/skills.ndjson      one SkillEntry per skill (routable or not: audit reaches all by id)
//! <index>/documents.ndjson   one DocEntry per document (L0 / L1 / L2), in doc-index order
//! <index>/content.ndjson     each skill's SKILL.md as served (skills.ndjson order; read on demand)
//! <index>/vectors.bin        dense rows: doc index (u32) + dim f32, little-endian (optional)
//! <index>/tokens.bin         each skill's card token states, int8 codes (optional; `late`)
//! <index>/bm25/              tantivy index of the documents (field-weighted)
//! <index>/manifest.json      schema, counts, model id, source revisions, content hash
//! <index>/_SUCCESS           written last; a folder without it is refused
//! ```
//!
//! Imports only skg-model: vectors come in as plain `f32` rows (the binary embeds with skg-embed).
#![allow(
    clippy::disallowed_methods,
    reason = "this crate reads its index folder (and exports bundles)"
)]

pub mod abstain;
pub mod adapt;
pub mod ann;
mod artifact;
mod bm25;
pub mod compare;
mod eval;
mod incremental;
mod judged;
mod late;
pub mod listing;
mod misses;
pub mod parity;
mod pca;
mod quant;
pub mod rerank;
mod route;
mod search;

use std::path::PathBuf;

pub use crate::{
    artifact::{
        BuildInput, ContentRow, DEFAULT_MIN_CONFIDENCE, DEFAULT_OVERVIEW_CHARS, DenseTexts,
        DocEntry, INDEX_SCHEMA_VERSION, IndexManifest, SECTION_CHARS, SkillEntry, USAGE_CHARS,
        USAGE_PER_SKILL, USAGE_RULE, Vectors, build, build_staged, dense_targets, dense_text,
        is_usage_section, read_manifest, skill_markdown,
    },
    bm25::{FIELDS, FieldWeights},
    eval::{CUTOFFS, Judged, Metrics, QueryOutcome, judge, summarize},
    incremental::{PackageDiff, VectorPlan, diff_packages, reuse_vectors},
    judged::{
        Bm25Settings, CandidateRecord, CandidateScores, EmbedFn, EvalOptions, EvalReport,
        JudgedQuery, Latency, ModeReport, QueryEmbedding, QueryRank, candidate_records, evaluate,
        judged_digest, resolve_examples, skill_keys,
    },
    late::{DEFAULT_DIRECTIONS as LATE_DIRECTIONS, Late, TOKENS_FILE, TokenCodes},
    misses::{DEPTH, Miss, MissClass, MissReport, SIBLING_COSINE, misses},
    route::{Bundle, BundleSkill, Reason, route, route_within},
    search::{
        Answer, Bm25Unit, Fusion, Hit, Index, Mode, OpenOptions, Query, QueryVector, Scope,
        SectionHit,
    },
};

/// Index errors.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// A file could not be read or written.
    #[error("{path}: {source}")]
    Io {
        /// The file.
        path: PathBuf,
        /// Why.
        source: std::io::Error,
    },
    /// A JSON file or row did not parse.
    #[error("{path}: {message}")]
    Json {
        /// The file.
        path: PathBuf,
        /// Where and why.
        message: String,
    },
    /// The folder is not a finished index (no `_SUCCESS`).
    #[error("{0}: not a finished index (no _SUCCESS): it is being written, or its build failed")]
    Unfinished(PathBuf),
    /// The folder was written by another index format.
    #[error(
        "{path}: index format {found}, this skg reads {expected}: rebuild it with `skg index build` (the embedding cache in the folder is reused)"
    )]
    Version {
        /// The folder.
        path: PathBuf,
        /// Its version.
        found: u32,
        /// Ours.
        expected: u32,
    },
    /// The files disagree with each other or with the manifest.
    #[error("{path}: {message}")]
    Corrupt {
        /// The folder.
        path: PathBuf,
        /// What disagrees.
        message: String,
    },
    /// tantivy failed.
    #[error("bm25 index: {0}")]
    Tantivy(String),
    /// The query embedder failed.
    #[error("query embedding: {0}")]
    Embed(String),
    /// The nearest-neighbour graph could not be built.
    #[error("ANN: {0}")]
    Ann(String),
}

impl Error {
    pub(crate) fn io(path: impl Into<PathBuf>, source: std::io::Error) -> Error {
        Error::Io {
            path: path.into(),
            source,
        }
    }
}

impl From<skg_artifact::Error> for Error {
    fn from(e: skg_artifact::Error) -> Self {
        match e {
            skg_artifact::Error::Io { path, source } => Error::Io { path, source },
            skg_artifact::Error::Json { path, message } => Error::Json { path, message },
            skg_artifact::Error::Unfinished(path) => Error::Unfinished(path),
        }
    }
}

impl From<tantivy::TantivyError> for Error {
    fn from(e: tantivy::TantivyError) -> Self {
        Error::Tantivy(e.to_string())
    }
}

/// Result with [`Error`].
pub type Result<T, E = Error> = std::result::Result<T, E>;

#[cfg(test)]
mod tests;
