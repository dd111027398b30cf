//! Where a registry came from.

use serde::{Deserialize, Serialize};

use crate::RegistryName;

/// What a registry input holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum RegistryKind {
    /// A folder tree of skill folders (each with a `SKILL.md`).
    Skills,
    /// A JSON/JSONL tool catalog (MCP `tools/list` shape): each tool becomes a skill.
    ToolCatalog,
}

/// One registry as read by `skg extract`: a row of the manifest's `inputs`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct RegistryInput {
    /// The registry's name; skill ids start with it.
    pub name: RegistryName,
    /// What the input holds.
    pub kind: RegistryKind,
    /// The path as given (folder, catalog file, or the subfolder inside a git source).
    pub path: String,
    /// The git repository it was read from, when it was read at a pinned revision.
    pub git: Option<String>,
    /// The revision: the pinned rev for git sources, the checkout's `HEAD` for local git
    /// working trees, or the `commit` recorded in `registries.toml`.
    pub rev: Option<String>,
    /// Upstream source URL recorded for provenance (never fetched).
    pub source: Option<String>,
    /// Licence as declared in `registries.toml`.
    pub license: Option<String>,
    /// blake3 over the content of every skill read from this registry, in id order.
    pub content_hash: String,
    /// Number of skills read.
    pub skills: u64,
}

impl RegistryInput {
    /// The registry's folder name (last component of `path`; the name when there is none):
    /// the first component of the `<registry folder>/<SKILL.md path>` keys labels files use.
    pub fn folder(&self) -> String {
        std::path::Path::new(&self.path).file_name().map_or_else(
            || self.name.to_string(),
            |f| f.to_string_lossy().into_owned(),
        )
    }
}
