//! What an extraction found, counted: per registry (skills, documents, edges, isolated skills,
//! frontmatter that needed repair), edges by kind / source / extractor, diagnostics by code.

use std::collections::{BTreeMap, BTreeSet};

use serde::{Deserialize, Serialize};
use skg_model::{EdgeSource, FrontmatterStatus, Severity};

use crate::Extraction;

/// One registry's counts.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RegistrySummary {
    /// The registry.
    pub name: String,
    /// Skills read.
    pub skills: u64,
    /// Their documents.
    pub documents: u64,
    /// Edges whose source skill is in this registry.
    pub edges: u64,
    /// Skills with no edge in or out.
    pub isolated: u64,
    /// `isolated / skills` (3 decimals).
    pub isolated_fraction: f64,
    /// Fraction of skills with no EXTRACTED or INFERRED edge.
    pub isolated_unambiguous_fraction: f64,
    /// Frontmatter present but not valid YAML (repaired + salvaged).
    pub yaml_failures: u64,
    /// Repaired by the line-level repair.
    pub yaml_repaired: u64,
    /// Salvaged entry by entry.
    pub yaml_salvaged: u64,
    /// No frontmatter at all.
    pub frontmatter_missing: u64,
    /// Diagnostics about this registry.
    pub diagnostics: u64,
    /// Of which errors.
    pub errors: u64,
    /// Of which warnings.
    pub warnings: u64,
}

/// The counts `skg extract` prints.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Summary {
    /// Rows per table (`skills`, `documents`, `edges`, `diagnostics`).
    pub counts: BTreeMap<String, u64>,
    /// Per registry, in input order.
    pub registries: Vec<RegistrySummary>,
    /// Edges by kind.
    pub edges_by_kind: BTreeMap<String, u64>,
    /// Edges by source (EXTRACTED / INFERRED / AMBIGUOUS).
    pub edges_by_source: BTreeMap<String, u64>,
    /// Edges by the extractor of their best evidence.
    pub edges_by_extractor: BTreeMap<String, u64>,
    /// Diagnostics by code.
    pub diagnostics_by_code: BTreeMap<String, u64>,
}

impl Extraction {
    /// Rows per output table.
    pub fn counts(&self) -> BTreeMap<String, u64> {
        BTreeMap::from([
            ("skills".to_owned(), self.skills.len() as u64),
            ("documents".to_owned(), self.documents.len() as u64),
            ("edges".to_owned(), self.edges.len() as u64),
            ("diagnostics".to_owned(), self.diagnostics.len() as u64),
        ])
    }

    /// The counts `skg extract` prints.
    pub fn summary(&self) -> Summary {
        let mut connected: BTreeSet<&str> = BTreeSet::new();
        let mut connected_unambiguous: BTreeSet<&str> = BTreeSet::new();
        for e in &self.edges {
            connected.extend([e.src.as_str(), e.dst.as_str()]);
            if e.source != EdgeSource::Ambiguous {
                connected_unambiguous.extend([e.src.as_str(), e.dst.as_str()]);
            }
        }
        let registries = self
            .registries
            .iter()
            .map(|r| self.registry_summary(&r.name, &connected, &connected_unambiguous))
            .collect();
        let mut s = Summary {
            counts: self.counts(),
            registries,
            edges_by_kind: BTreeMap::new(),
            edges_by_source: BTreeMap::new(),
            edges_by_extractor: BTreeMap::new(),
            diagnostics_by_code: BTreeMap::new(),
        };
        for e in &self.edges {
            *s.edges_by_kind.entry(e.kind.to_string()).or_insert(0) += 1;
            *s.edges_by_source
                .entry(e.source.as_str().to_owned())
                .or_insert(0) += 1;
            *s.edges_by_extractor.entry(e.extractor.clone()).or_insert(0) += 1;
        }
        for d in &self.diagnostics {
            *s.diagnostics_by_code.entry(d.code.to_string()).or_insert(0) += 1;
        }
        s
    }

    fn registry_summary(
        &self,
        name: &skg_model::RegistryName,
        connected: &BTreeSet<&str>,
        connected_unambiguous: &BTreeSet<&str>,
    ) -> RegistrySummary {
        let skills: Vec<_> = self.skills.iter().filter(|s| s.registry == *name).collect();
        let n = skills.len() as u64;
        let count =
            |p: &dyn Fn(&skg_model::Skill) -> bool| skills.iter().filter(|s| p(s)).count() as u64;
        let isolated = count(&|s| !connected.contains(s.id.as_str()));
        let isolated_unambiguous = count(&|s| !connected_unambiguous.contains(s.id.as_str()));
        let status = |st: FrontmatterStatus| count(&|s| s.frontmatter.status == st);
        let diags: Vec<_> = self
            .diagnostics
            .iter()
            .filter(|d| d.registry == *name)
            .collect();
        let severity = |sv: Severity| diags.iter().filter(|d| d.severity == sv).count() as u64;
        let prefix = format!("{}:", name.as_str());
        RegistrySummary {
            name: name.to_string(),
            skills: n,
            documents: self
                .documents
                .iter()
                .filter(|d| d.registry == *name)
                .count() as u64,
            edges: self
                .edges
                .iter()
                .filter(|e| e.src.as_str().starts_with(&prefix))
                .count() as u64,
            isolated,
            isolated_fraction: ratio(isolated, n),
            isolated_unambiguous_fraction: ratio(isolated_unambiguous, n),
            yaml_failures: status(FrontmatterStatus::Repaired)
                + status(FrontmatterStatus::Salvaged),
            yaml_repaired: status(FrontmatterStatus::Repaired),
            yaml_salvaged: status(FrontmatterStatus::Salvaged),
            frontmatter_missing: status(FrontmatterStatus::Missing),
            diagnostics: diags.len() as u64,
            errors: severity(Severity::Error),
            warnings: severity(Severity::Warning),
        }
    }
}

/// The registry table and the edge and diagnostic counts, as `skg extract` prints them.
impl std::fmt::Display for Summary {
    fn fmt(&self, out: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let width = self
            .registries
            .iter()
            .map(|r| r.name.len())
            .max()
            .unwrap_or(8)
            .max(8);
        writeln!(
            out,
            "{:<width$}  {:>7} {:>8} {:>7} {:>9} {:>10} {:>9} {:>8} {:>7} {:>6} {:>6}",
            "registry",
            "skills",
            "docs",
            "edges",
            "isolated",
            "isolated*",
            "yaml-fail",
            "salvaged",
            "no-fm",
            "errors",
            "warns"
        )?;
        for r in &self.registries {
            writeln!(
                out,
                "{:<width$}  {:>7} {:>8} {:>7} {:>8.1}% {:>9.1}% {:>9} {:>8} {:>7} {:>6} {:>6}",
                r.name,
                r.skills,
                r.documents,
                r.edges,
                r.isolated_fraction * 100.0,
                r.isolated_unambiguous_fraction * 100.0,
                r.yaml_failures,
                r.yaml_salvaged,
                r.frontmatter_missing,
                r.errors,
                r.warnings
            )?;
        }
        let line = |m: &BTreeMap<String, u64>| {
            m.iter()
                .map(|(k, v)| format!("{k} {v}"))
                .collect::<Vec<_>>()
                .join(" · ")
        };
        writeln!(out, "(isolated*: no edge other than AMBIGUOUS mentions)")?;
        writeln!(out, "\nedges by kind:      {}", line(&self.edges_by_kind))?;
        writeln!(out, "edges by source:    {}", line(&self.edges_by_source))?;
        writeln!(
            out,
            "edges by extractor: {}",
            line(&self.edges_by_extractor)
        )?;
        writeln!(
            out,
            "diagnostics:        {}",
            line(&self.diagnostics_by_code)
        )
    }
}

/// `a / b` to 3 decimals (0 when `b` is 0).
fn ratio(a: u64, b: u64) -> f64 {
    if b == 0 {
        0.0
    } else {
        (a as f64 / b as f64 * 1000.0).round() / 1000.0
    }
}
