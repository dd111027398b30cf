//! Typed relations between skills.

use std::fmt;

use serde::{Deserialize, Serialize};

use crate::SkillId;

/// What a relation says.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum EdgeKind {
    /// `src` needs `dst` to do its job: declared, required/prerequisite prose, an instruction to
    /// invoke `dst`, or a script import.
    DependsOn,
    /// `src` lists `dst` as related ("Related skills", "See also", `complements:`).
    Complements,
    /// `src` and `dst` are used together in one workflow ("then use …", "combine with …").
    CoUsedWith,
    /// `src` links to or mentions `dst` without saying how they relate.
    References,
    /// `src` is a copy of `dst` (written by `skg canonicalize`).
    DuplicateOf,
    /// `src` is an independently written skill with the same purpose (written by `skg canonicalize`).
    VariantOf,
}

impl EdgeKind {
    /// The snake_case name used in tables.
    pub fn as_str(self) -> &'static str {
        match self {
            EdgeKind::DependsOn => "depends_on",
            EdgeKind::Complements => "complements",
            EdgeKind::CoUsedWith => "co_used_with",
            EdgeKind::References => "references",
            EdgeKind::DuplicateOf => "duplicate_of",
            EdgeKind::VariantOf => "variant_of",
        }
    }
}

impl fmt::Display for EdgeKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// How an edge was found (graphify's convention).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum EdgeSource {
    /// Stated by the data itself: a frontmatter field, a link to the file, a script import.
    Extracted,
    /// Read from prose or naming conventions; likely but not certain.
    Inferred,
    /// A plain mention of a name that is also a common word: may not mean the skill at all.
    Ambiguous,
}

impl EdgeSource {
    /// The name used in tables.
    pub fn as_str(self) -> &'static str {
        match self {
            EdgeSource::Extracted => "EXTRACTED",
            EdgeSource::Inferred => "INFERRED",
            EdgeSource::Ambiguous => "AMBIGUOUS",
        }
    }
}

/// Where one extractor saw a relation.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Evidence {
    /// The extractor that saw it (e.g. `required-prose`, `js-import`).
    pub extractor: String,
    /// How sure that extractor is, 0–1.
    pub confidence: f64,
    /// How it was found.
    pub source: EdgeSource,
    /// File relative to the source skill's registry root.
    pub path: String,
    /// 1-based line in `path`.
    pub line: u32,
    /// The line (trimmed, at most 200 characters).
    pub snippet: String,
}

/// One relation `src → dst` of one kind. One row of the `edges` table.
///
/// When several extractors see the same `(src, dst, kind)`, the edge takes the highest
/// confidence (and that evidence's source and extractor); all evidence is kept, best first.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Edge {
    /// The skill that points.
    pub src: SkillId,
    /// The skill pointed at.
    pub dst: SkillId,
    /// What the relation says.
    pub kind: EdgeKind,
    /// The best evidence's confidence, 0–1.
    pub confidence: f64,
    /// The best evidence's source.
    pub source: EdgeSource,
    /// The best evidence's extractor.
    pub extractor: String,
    /// All evidence, best first.
    pub evidence: Vec<Evidence>,
}
