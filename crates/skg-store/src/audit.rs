//! The audit folder: the report, every stage's tables at the top, the stage folders under
//! `stages/`, one manifest; published with one rename.

use std::{collections::BTreeMap, path::Path, path::PathBuf};

use skg_model::{Edge, RegistryInput, Skill, Stage};

use crate::{Manifest, Result, Staging, read_manifest, tables};

/// Publishes the audit folder at `out` from the finished stage folders in `stages_dir`:
/// `index.html`, every stage's tables hard-linked at the top — but `edges`, written whole from
/// `edges` (extract's relations and canonicalize's `duplicate_of` / `variant_of` together), and
/// `skills`, written from `skills` (extract's rows with the scan's verdicts applied) —,
/// `stages/` itself (keys included), and a manifest with `options`.
pub fn publish_audit(
    out: &Path,
    stages_dir: &Path,
    html: &str,
    skills: &[Skill],
    edges: &[Edge],
    registries: Vec<RegistryInput>,
    options: serde_json::Value,
) -> Result<PathBuf> {
    let mut staging = Staging::begin(out)?;
    staging.write_file("index.html", html.as_bytes())?;
    let mut counts = BTreeMap::new();
    for (stage, stage_tables) in tables::STAGES {
        let dir = stages_dir.join(stage.as_str());
        let m = read_manifest(&dir)?;
        for t in *stage_tables {
            if t.name() == tables::EDGES.name || t.name() == tables::SKILLS.name {
                continue;
            }
            let rows = m
                .tables
                .iter()
                .find(|x| x.name == t.name())
                .map_or(0, |x| x.rows);
            staging.link_table(t.name(), &dir, rows)?;
            counts.insert(t.name().to_owned(), rows);
        }
    }
    staging.write_table(&tables::SKILLS, skills)?;
    counts.insert(tables::SKILLS.name.to_owned(), skills.len() as u64);
    staging.write_table(&tables::EDGES, edges)?;
    counts.insert(tables::EDGES.name.to_owned(), edges.len() as u64);
    staging.link_dir("stages", stages_dir)?;
    staging.commit(Manifest::new(Stage::Audit, registries, counts, options))
}
