//! What a canonicalization means per registry, the rows derived from it, and the relation
//! in-degree it reads.

use std::collections::{BTreeMap, BTreeSet, HashMap};

use serde::Serialize;
use skg_model::{Edge, EdgeSource, Role, Skill, SkillId};

use crate::Canonicalization;

/// One registry before and after deduplication.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct RegistryCounts {
    /// The registry.
    pub name: String,
    /// Skills read.
    pub raw: u64,
    /// Routable after deduplication (canonical + variant).
    pub canonical: u64,
    /// Aliases (duplicates) in this registry.
    pub duplicates: u64,
    /// Aliases whose canonical lives in another registry.
    pub copies_of_other_registries: u64,
    /// Variants in this registry.
    pub variants: u64,
}

/// The per-registry table `skg canonicalize` prints (nothing without registries).
#[derive(Debug, Clone, Copy)]
pub struct RegistryTable<'a>(pub &'a [RegistryCounts]);

impl std::fmt::Display for RegistryTable<'_> {
    fn fmt(&self, out: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        if self.0.is_empty() {
            return Ok(());
        }
        writeln!(
            out,
            "\n{:<40} {:>7} {:>9} {:>10} {:>12} {:>8}",
            "registry", "raw", "canonical", "duplicates", "cross-copies", "variants"
        )?;
        for r in self.0 {
            writeln!(
                out,
                "{:<40} {:>7} {:>9} {:>10} {:>12} {:>8}",
                r.name, r.raw, r.canonical, r.duplicates, r.copies_of_other_registries, r.variants
            )?;
        }
        Ok(())
    }
}

impl Canonicalization {
    /// Per registry (by name): skills read, routable, aliases, cross-registry copies, variants.
    pub fn per_registry(&self) -> Vec<RegistryCounts> {
        let registry_of: HashMap<&SkillId, &str> = self
            .members
            .iter()
            .map(|m| (&m.id, m.registry.as_str()))
            .collect();
        let mut by: BTreeMap<&str, RegistryCounts> = BTreeMap::new();
        for m in &self.members {
            let r = by
                .entry(m.registry.as_str())
                .or_insert_with(|| RegistryCounts {
                    name: m.registry.to_string(),
                    raw: 0,
                    canonical: 0,
                    duplicates: 0,
                    copies_of_other_registries: 0,
                    variants: 0,
                });
            r.raw += 1;
            match m.role {
                Role::Canonical => r.canonical += 1,
                Role::Variant => {
                    r.canonical += 1;
                    r.variants += 1;
                }
                Role::Duplicate => {
                    r.duplicates += 1;
                    if registry_of
                        .get(&m.cluster_id)
                        .is_some_and(|&x| x != m.registry.as_str())
                    {
                        r.copies_of_other_registries += 1;
                    }
                }
            }
        }
        by.into_values().collect()
    }

    /// The routable skills (canonicals and variants: every skill that is not an alias), by id:
    /// the `canonical_skills` table.
    pub fn canonical_skills(&self, skills: &[Skill]) -> Vec<Skill> {
        let routable: BTreeSet<&SkillId> = self
            .members
            .iter()
            .filter(|m| m.role != Role::Duplicate)
            .map(|m| &m.id)
            .collect();
        let mut out: Vec<Skill> = skills
            .iter()
            .filter(|s| routable.contains(&s.id))
            .cloned()
            .collect();
        out.sort_by(|a, b| a.id.cmp(&b.id));
        out
    }
}

/// Relation edges pointing at each skill, AMBIGUOUS mentions left out: between copies of equal
/// quality, the one other skills refer to is the original.
pub fn in_degree(edges: &[Edge]) -> BTreeMap<SkillId, u32> {
    let mut out: BTreeMap<SkillId, u32> = BTreeMap::new();
    for e in edges.iter().filter(|e| e.source != EdgeSource::Ambiguous) {
        *out.entry(e.dst.clone()).or_default() += 1;
    }
    out
}
