//! Artifact folders, the one way skg writes and reads a stage's output.
//!
//! A folder is written beside its destination ([`Staged`]), every file synced as it is written,
//! `_SUCCESS` written last, the folder itself synced, then renamed over the previous one in one
//! step and the parent folder synced, so that after a crash a reader finds the old folder or the
//! new one whole, never a mix. Readers refuse folders without `_SUCCESS` ([`require_finished`]).
//!
//! ```no_run
//! # fn demo() -> skg_artifact::Result<()> {
//! let out = skg_artifact::Staged::beside(std::path::Path::new("reports/index"))?;
//! out.write_ndjson("skills.ndjson", &[serde_json::json!({"id": "a"})])?;
//! out.write_json(skg_artifact::MANIFEST_FILE, &serde_json::json!({"format": 1}))?;
//! out.publish()?; // _SUCCESS, fsync, rename, fsync of the parent
//! # Ok(()) }
//! ```
//!
//! Also here because every stage folder needs them: NDJSON and JSON reading with located
//! errors, a content hash of a folder's files ([`hash_files`]), and the key files the audit
//! writes beside each stage's output ([`key`]). No polars, no tantivy: skg-store (tables),
//! skg-index (the routing index) and the binary's audit all build on this crate.
#![allow(
    clippy::disallowed_methods,
    reason = "this crate writes and reads artifact folders"
)]

pub mod key;
mod read;
mod staged;

use std::path::PathBuf;

pub use crate::{
    read::{hash_files, read_json, read_ndjson, require_finished},
    staged::{Staged, sync_dir, write_file, write_ndjson, write_synced},
};

/// File written last into a finished folder; readers refuse folders without it.
pub const SUCCESS_FILE: &str = "_SUCCESS";
/// The manifest's file name.
pub const MANIFEST_FILE: &str = "manifest.json";

/// What went wrong with a folder or one of its files.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// A file or folder operation failed.
    #[error("{path}: {source}")]
    Io {
        /// Where.
        path: PathBuf,
        /// Why.
        source: std::io::Error,
    },
    /// A JSON file or NDJSON row did not (de)serialize.
    #[error("{path}: {message}")]
    Json {
        /// The file.
        path: PathBuf,
        /// Where in it (`line N: …` for NDJSON) and why.
        message: String,
    },
    /// The folder is not finished (no `_SUCCESS`): being written, or its run failed.
    #[error("{0}: not a finished folder (no _SUCCESS)")]
    Unfinished(PathBuf),
}

impl Error {
    /// An I/O error at `path`.
    pub fn io(path: impl Into<PathBuf>, source: std::io::Error) -> Error {
        Error::Io {
            path: path.into(),
            source,
        }
    }

    /// A JSON error in `path`.
    pub fn json(path: impl Into<PathBuf>, message: impl std::fmt::Display) -> Error {
        Error::Json {
            path: path.into(),
            message: message.to_string(),
        }
    }
}

/// Result with [`Error`].
pub type Result<T, E = Error> = std::result::Result<T, E>;

#[cfg(test)]
mod tests;
