//! Stage keys: what a stage's output was computed from, so that a rerun can reuse it.
//!
//! A key hashes the key format, the tool's version, the stage's name, its options *as
//! serialized* (the values actually passed, defaults included, so a changed default changes the
//! key), the content ids of the model artifacts it loads, and the content hashes of what it
//! reads. A key file (`<stage>.key`) is written beside the stage's output after that output was
//! published, and removed before the stage reruns: an output never carries a key it was not
//! computed for.

use std::path::Path;

use serde::{Deserialize, Serialize};

use crate::{Error, Result, write_file};

/// The key file of one stage.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct KeyFile {
    /// The key the output was computed for.
    pub key: String,
    /// The content hash of the output ([`crate::hash_files`]), which downstream keys hash.
    pub output: String,
}

/// Builds a key from its parts, in the order they are added.
#[derive(Debug, Clone)]
pub struct KeyBuilder(blake3::Hasher);

impl KeyBuilder {
    /// A key of `format` (bumped when outputs change in a way nothing else in the key
    /// captures), `tool` (name and version) and `stage`.
    pub fn new(format: &str, tool: &str, stage: &str) -> KeyBuilder {
        let mut k = KeyBuilder(blake3::Hasher::new());
        k.part("format", format.as_bytes())
            .part("tool", tool.as_bytes())
            .part("stage", stage.as_bytes());
        k
    }

    /// Adds a named part (length-prefixed, so parts cannot run into each other).
    pub fn part(&mut self, name: &str, bytes: &[u8]) -> &mut KeyBuilder {
        for b in [name.as_bytes(), bytes] {
            self.0.update(&(b.len() as u64).to_le_bytes());
            self.0.update(b);
        }
        self
    }

    /// Adds the options as serialized JSON.
    pub fn options<T: Serialize + ?Sized>(&mut self, options: &T) -> Result<&mut KeyBuilder> {
        let json = serde_json::to_vec(options).map_err(|e| Error::json("(options)", e))?;
        Ok(self.part("options", &json))
    }

    /// The key.
    pub fn finish(&self) -> String {
        self.0.finalize().to_hex().to_string()
    }
}

/// The key file at `path`, when there is a readable one.
pub fn read(path: &Path) -> Option<KeyFile> {
    crate::read_json(path).ok()
}

/// Writes a key file atomically (a temporary file synced, then renamed).
pub fn write(path: &Path, key: &KeyFile) -> Result<()> {
    let text = serde_json::to_vec_pretty(key).map_err(|e| Error::json(path, e))?;
    write_file(path, &text)
}

/// Removes a key file (absent is fine): called before a stage reruns.
pub fn remove(path: &Path) -> Result<()> {
    match std::fs::remove_file(path) {
        Err(e) if e.kind() != std::io::ErrorKind::NotFound => Err(Error::io(path, e)),
        _ => Ok(()),
    }
}
