//! Errors writing or reading output folders.

use std::path::PathBuf;

/// What went wrong.
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
    /// polars could not build or write a table.
    #[error("table `{table}`: {message}")]
    Table {
        /// The table.
        table: String,
        /// polars' message.
        message: String,
    },
    /// JSON (de)serialization failed.
    #[error("{path}: {message}")]
    Json {
        /// The file.
        path: PathBuf,
        /// serde_json's message.
        message: String,
    },
    /// The folder is not a finished output (no `_SUCCESS`).
    #[error("{0}: not a finished skg output folder (no _SUCCESS); was the run interrupted?")]
    Unfinished(PathBuf),
    /// The folder was written with another schema version.
    #[error("{path}: schema version {found}, this skg reads {expected}")]
    SchemaVersion {
        /// The folder.
        path: PathBuf,
        /// Its version.
        found: u32,
        /// Ours.
        expected: u32,
    },
    /// The folder holds another stage's output.
    #[error("{path} holds `{found}` output, not `{expected}` output")]
    WrongStage {
        /// The folder.
        path: PathBuf,
        /// The stage that wrote it.
        found: skg_model::Stage,
        /// The stage asked for.
        expected: skg_model::Stage,
    },
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

impl Error {
    pub(crate) fn io(path: impl Into<PathBuf>, source: std::io::Error) -> Self {
        Error::Io {
            path: path.into(),
            source,
        }
    }
}

/// Result with [`Error`].
pub type Result<T, E = Error> = std::result::Result<T, E>;
