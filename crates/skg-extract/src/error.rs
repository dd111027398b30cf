//! Errors that stop an extraction before it starts (bad inputs, not bad registry content).

use std::path::PathBuf;

/// What went wrong resolving the inputs.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// An input path does not exist.
    #[error("{0}: no such file or folder")]
    InputMissing(PathBuf),
    /// An input is neither a folder, a `registries.toml` nor a JSON/JSONL tool catalog.
    #[error(
        "{0}: not a registry folder, a registries.toml, a .json/.jsonl tool catalog or a .json/.yaml/.yml OpenAPI document"
    )]
    InputKind(PathBuf),
    /// Two registries share a name (a folder's or a file's stem, or a `registries.toml` entry's).
    #[error(
        "two registries are named `{name}` ({first} and {second}); names must be unique: rename \
         one (a registries.toml entry's `name`; inputs on the command line are named after their \
         folder or file stem)"
    )]
    DuplicateRegistry {
        /// The shared name.
        name: String,
        /// Where the first registry comes from.
        first: String,
        /// Where the second does.
        second: String,
    },
    /// `registries.toml` is not valid.
    #[error("{path}: {message}")]
    Toml {
        /// The file.
        path: PathBuf,
        /// The parser's message.
        message: String,
    },
    /// A git source has no `rev`.
    #[error("registry `{0}` has `git` but no `rev`: pin the revision to read")]
    GitRevMissing(String),
    /// git failed.
    #[error("{0}")]
    Git(String),
    /// An I/O error on an input or the cache.
    #[error("{path}: {source}")]
    Io {
        /// The path.
        path: PathBuf,
        /// The error.
        source: std::io::Error,
    },
}

impl Error {
    pub(crate) fn io(path: &std::path::Path, source: std::io::Error) -> Self {
        Error::Io {
            path: path.to_path_buf(),
            source,
        }
    }
}

/// Result with [`Error`].
pub type Result<T, E = Error> = std::result::Result<T, E>;
