//! Rows written by `skg canonicalize`.

use std::fmt;

use serde::{Deserialize, Serialize};

use crate::{RegistryName, SkillId};

/// What a skill is after deduplication.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Role {
    /// The representative of its duplicate cluster (possibly a cluster of one). Routable.
    Canonical,
    /// A copy of its cluster's canonical: an alias, not routed, kept with its provenance.
    Duplicate,
    /// The canonical of its own cluster, and an independently written skill with the same purpose
    /// as a better one (`variant_of`). Routable: variants are linked, never merged.
    Variant,
}

impl Role {
    /// The snake_case name used in tables.
    pub fn as_str(self) -> &'static str {
        match self {
            Role::Canonical => "canonical",
            Role::Duplicate => "duplicate",
            Role::Variant => "variant",
        }
    }
}

impl fmt::Display for Role {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// One skill's place after deduplication. One row of the `members` table: every skill of the
/// input has exactly one row.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Member {
    /// The skill.
    pub id: SkillId,
    /// Its registry (name as in `registries.toml`).
    pub registry: RegistryName,
    /// Its `SKILL.md` path relative to the registry folder.
    pub path: String,
    /// Its name.
    pub name: String,
    /// The duplicate cluster it belongs to: the id of the cluster's canonical skill.
    pub cluster_id: SkillId,
    /// canonical / duplicate / variant.
    pub role: Role,
    /// For a variant: the canonical it is a variant of.
    pub variant_of: Option<SkillId>,
    /// The quality used to pick canonicals, 0–1 (higher is better).
    pub quality: f64,
    /// Where the quality came from: `slop_score` (from `skg score`) or `completeness`.
    pub quality_source: String,
    /// The closest description of a skill in another cluster among the compared candidates
    /// (cosine with embeddings, content-word Jaccard without); 0 when none was compared. High
    /// means the description doesn't set the skill apart.
    pub nearest_description: f64,
    /// For a duplicate or variant: the signals that decided it, measured against the skill it
    /// points to (`body_jaccard=0.93 containment=0.98 …`). Empty for a canonical.
    pub reason: String,
}

/// One duplicate cluster. One row of the `clusters` table (clusters of one included).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Cluster {
    /// The canonical's id.
    pub cluster_id: SkillId,
    /// The canonical's registry.
    pub canonical_registry: RegistryName,
    /// The canonical's `SKILL.md` path.
    pub canonical_path: String,
    /// Skills in the cluster (canonical included).
    pub size: u32,
    /// Registries that hold a member, sorted.
    pub registries: Vec<String>,
    /// Every member's id, canonical first, then sorted.
    pub members: Vec<SkillId>,
    /// Canonicals of other clusters linked to this one as variants, sorted.
    pub variants: Vec<SkillId>,
}

/// One skill's capability type after canonicalize has refined it. One row of the
/// `capabilities` table: every skill of the input has exactly one row. Extract types a skill
/// from the words it declares and says; where that leaves it `unknown`, canonicalize (which holds
/// every description's embedding) names the taxonomy type whose prototype is nearest, when
/// confident (docs/capabilities.md). Later stages read the type from here.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CapabilityRow {
    /// The skill.
    pub id: SkillId,
    /// A type id of the taxonomy, or `unknown`.
    pub capability: String,
    /// The type's share: of the word evidence (`words`), or of the similarity mass over the
    /// type prototypes (`embedding`); 0–1.
    pub confidence: f64,
    /// What named the type: `words` (extract's classifier), `embedding` (nearest prototype) or
    /// `none` (`unknown`).
    pub evidence: String,
}
