//! Rows written by `skg score`.

use serde::{Deserialize, Serialize};

use crate::{RegistryName, SkillId};

/// One skill's slop score. One row of the `scores` table.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Score {
    /// The skill.
    pub id: SkillId,
    /// Its registry.
    pub registry: RegistryName,
    /// Its `SKILL.md` path relative to the registry folder.
    pub path: String,
    /// P(clean) from the fitted model: 1 = clean, 0 = slop (the seed's orientation).
    pub slop_score: f64,
    /// `slop_score` below the threshold: excluded from routing, kept in every table.
    pub quarantined: bool,
    /// The quarantine threshold used.
    pub threshold: f64,
    /// The features pulling the score down most, strongest first (`name (value) −contribution`);
    /// for a quarantined skill, the reasons.
    pub reasons: Vec<String>,
    /// Every feature's contribution to the log-odds of clean (coefficient × standardized
    /// value), by feature name.
    pub contributions: Vec<(String, f64)>,
    /// Every feature's raw value, by feature name.
    pub features: Vec<(String, f64)>,
}
