//! The pipeline's stages, by name.

use serde::{Deserialize, Serialize};

/// A stage whose output is a folder of tables (`manifest.json` names it).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Stage {
    /// Registries → skills, documents, edges, diagnostics.
    Extract,
    /// Copies across registries → clusters, aliases, canonicals.
    Canonicalize,
    /// The slop score.
    Score,
    /// The Skill Knowledge Graph's metrics.
    Measure,
    /// All of them, with the report.
    Audit,
    /// Security findings and verdicts of every package.
    Scan,
}

impl Stage {
    /// The stages `skg audit` runs, in order.
    pub const PIPELINE: [Stage; 5] = [
        Stage::Extract,
        Stage::Scan,
        Stage::Canonicalize,
        Stage::Score,
        Stage::Measure,
    ];

    /// Its name (the subcommand, the manifest's `stage`, the audit's `stages/<name>/`).
    pub fn as_str(self) -> &'static str {
        match self {
            Stage::Extract => "extract",
            Stage::Canonicalize => "canonicalize",
            Stage::Score => "score",
            Stage::Measure => "measure",
            Stage::Audit => "audit",
            Stage::Scan => "scan",
        }
    }

    /// The folder `skg <stage>` writes by default, relative to the working folder
    /// (`reports/<stage>`; an audit's is named after its input instead).
    pub fn default_dir(self) -> std::path::PathBuf {
        std::path::Path::new("reports").join(self.as_str())
    }
}

impl std::fmt::Display for Stage {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}
