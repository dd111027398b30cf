//! `skg extract`: registries in; skills, documents, relations and diagnostics out.
//!
//! ```text
//! RegistrySource ──walk──▶ Package ──load──▶ Loaded (Skill + markdown + script facts)
//!                                                 ├──documents──▶ Document (L0/L1/L2)
//!                                                 └──relations──▶ Edge (typed, with evidence)
//! ```
//!
//! The only crate that reads registry files. Extraction never fails because of a registry's
//! content: every problem is a [`Diagnostic`] with registry, path and line, and what can be
//! salvaged is kept. The output is deterministic: every collection is sorted by id.
#![allow(
    clippy::disallowed_methods,
    reason = "this crate reads registries: the only one that does"
)]

pub mod capability;
mod catalog;
mod codebase;
mod documents;
mod error;
mod fingerprint;
mod frontmatter;
#[doc(hidden)]
pub mod fuzzing;
mod keylines;
mod load;
mod manifest;
mod markdown;
mod openapi;
mod read;
mod relations;
mod roles;
mod source;
mod summary;
mod texts;
mod walk;

use rayon::prelude::*;
use serde::{Deserialize, Serialize};
use skg_model::{Diagnostic, Document, Edge, RegistryInput, RegistryKind, Skill};

pub use crate::{
    codebase::{Codebase, TEST_DIRS, TEST_PARTS, is_test_code, read_codebase},
    error::{Error, Result},
    fingerprint::{change_stamp, content_fingerprint},
    source::{RegistrySource, cache_dir, checkout_git, load_registries_toml, resolve_inputs},
    summary::{RegistrySummary, Summary},
    texts::package_texts,
};

/// Resource limits; going over one is a diagnostic, never an abort. Their defaults are defined
/// here once (the command line shows them from here).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Limits {
    /// Bytes read from one file of a package; the rest is cut (at a line end) with a
    /// `file-too-large` diagnostic.
    pub max_file_bytes: u64,
    /// Bytes read from a tool catalog or OpenAPI document given as an input (one file that is a
    /// whole registry, read whole to be parsed: large API specifications run to tens of MB); the
    /// rest is cut as above, and a cut document is one error.
    #[serde(default = "default_max_catalog_bytes")]
    pub max_catalog_bytes: u64,
    /// Files walked in one registry; the rest is skipped with a `too-many-files` diagnostic.
    pub max_files: usize,
    /// Time one script's parse may take; over it the script yields no facts and a
    /// `script-timeout` diagnostic (serialized as whole milliseconds, `max_parse_ms`).
    #[serde(rename = "max_parse_ms", with = "millis")]
    pub parse_budget: std::time::Duration,
}

mod millis {
    use serde::{Deserialize as _, Deserializer, Serializer};

    pub(crate) fn serialize<S: Serializer>(
        d: &std::time::Duration,
        s: S,
    ) -> Result<S::Ok, S::Error> {
        s.serialize_u64(u64::try_from(d.as_millis()).unwrap_or(u64::MAX))
    }

    pub(crate) fn deserialize<'de, D: Deserializer<'de>>(
        d: D,
    ) -> Result<std::time::Duration, D::Error> {
        u64::deserialize(d).map(std::time::Duration::from_millis)
    }
}

impl Limits {
    /// The parse budget in whole milliseconds (how the command line and the manifest give it).
    pub fn max_parse_ms(&self) -> u64 {
        u64::try_from(self.parse_budget.as_millis()).unwrap_or(u64::MAX)
    }
}

/// 64 MiB: Microsoft Graph's beta specification (47 MB, the largest of the APIs.guru
/// directory) reads whole.
fn default_max_catalog_bytes() -> u64 {
    64 * 1024 * 1024
}

impl Default for Limits {
    fn default() -> Self {
        Self {
            max_file_bytes: 4 * 1024 * 1024,
            max_catalog_bytes: default_max_catalog_bytes(),
            max_files: 500_000,
            parse_budget: skg_syntax::DEFAULT_PARSE_BUDGET,
        }
    }
}

/// Extraction options (what `skg extract` writes into its manifest and the audit hashes into
/// extract's key).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Options {
    /// Resource limits.
    pub limits: Limits,
}

pub use skg_model::{NoProgress, Progress};

/// Everything `skg extract` produces, sorted for byte-identical output.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Extraction {
    /// The registries read, in input order.
    pub registries: Vec<RegistryInput>,
    /// Skills, by id.
    pub skills: Vec<Skill>,
    /// Documents, by skill then level, file and ordinal.
    pub documents: Vec<Document>,
    /// Edges, by (src, dst, kind).
    pub edges: Vec<Edge>,
    /// Diagnostics, by (registry, path, line, code).
    pub diagnostics: Vec<Diagnostic>,
}

/// Reads every source and extracts skills, documents, edges and diagnostics.
pub fn extract(
    sources: &[RegistrySource],
    options: &Options,
    progress: &dyn Progress,
) -> Extraction {
    let t0 = std::time::Instant::now();
    let mut diagnostics = Vec::new();
    let mut loaded: Vec<load::Loaded> = Vec::new();
    let mut per_registry: Vec<(usize, usize)> = Vec::new(); // (first loaded idx, count)

    for (ri, src) in sources.iter().enumerate() {
        let _span = tracing::info_span!("extract::registry", registry = %src.name).entered();
        let first = loaded.len();
        match src.kind {
            RegistryKind::Skills => {
                let walked = walk::walk(&src.name, &src.local_path, &options.limits);
                diagnostics.extend(walked.diagnostics);
                progress.phase(&format!("read {}", src.name), walked.packages.len() as u64);
                let disk = read::Disk {
                    root: &src.local_path,
                    real_paths: &walked.real_paths,
                };
                let results: Vec<_> = walked
                    .packages
                    .par_iter()
                    .map(|pkg| {
                        let r = load::load_package(
                            &src.name,
                            ri,
                            &src.local_path,
                            &disk,
                            pkg,
                            &options.limits,
                        );
                        progress.advance(1);
                        r
                    })
                    .collect();
                for (skill, diags) in results {
                    diagnostics.extend(diags);
                    loaded.extend(skill);
                }
            }
            RegistryKind::ToolCatalog => {
                let (tools, diags) = catalog::load(&src.name, ri, &src.local_path, &options.limits);
                diagnostics.extend(diags);
                loaded.extend(tools);
            }
        }
        tracing::info!(registry = %src.name, skills = loaded.len() - first, "read");
        per_registry.push((first, loaded.len() - first));
    }
    tracing::info!(
        seconds = t0.elapsed().as_secs_f64(),
        skills = loaded.len(),
        "extract::read"
    );
    // Links are checked against the registries as they are on disk (a link into a folder the
    // walk does not enter is not broken).
    let no_renames = std::collections::HashMap::new();
    let disks: Vec<read::Disk<'_>> = sources
        .iter()
        .map(|s| read::Disk {
            root: &s.local_path,
            real_paths: &no_renames,
        })
        .collect();
    let files: Vec<&dyn read::Files> = disks.iter().map(|d| d as &dyn read::Files).collect();
    finish(
        sources,
        loaded,
        &per_registry,
        diagnostics,
        &files,
        progress,
    )
}

/// Relations, documents and registry rows of the loaded skills; everything sorted.
fn finish(
    sources: &[RegistrySource],
    loaded: Vec<load::Loaded>,
    per_registry: &[(usize, usize)],
    mut diagnostics: Vec<Diagnostic>,
    files: &[&dyn read::Files],
    progress: &dyn Progress,
) -> Extraction {
    let t1 = std::time::Instant::now();
    progress.phase("relations", loaded.len() as u64);
    let (edges, rel_diags) = relations::extract(&loaded, sources, files, progress);
    diagnostics.extend(rel_diags);

    tracing::info!(
        seconds = t1.elapsed().as_secs_f64(),
        edges = edges.len(),
        "extract::relations"
    );
    let t2 = std::time::Instant::now();
    progress.phase("documents", loaded.len() as u64);
    // Documents in skill-id order, and within a skill by (level, file, ordinal, chunk): each
    // skill's few documents are sorted where they are made, then skills are put in id order.
    let mut per_skill: Vec<(&str, Vec<Document>)> = loaded
        .par_iter()
        .map(|l| {
            let mut docs = l.documents();
            docs.sort_by(|a, b| {
                (a.level, &a.file, a.ordinal, a.chunk).cmp(&(b.level, &b.file, b.ordinal, b.chunk))
            });
            progress.advance(1);
            (l.skill.id.as_str(), docs)
        })
        .collect();
    per_skill.sort_by(|a, b| a.0.cmp(b.0));
    let documents: Vec<Document> = per_skill.into_iter().flat_map(|(_, d)| d).collect();

    tracing::info!(
        seconds = t2.elapsed().as_secs_f64(),
        documents = documents.len(),
        "extract::documents"
    );
    let registries = sources
        .iter()
        .zip(per_registry)
        .map(|(src, &(first, count))| {
            let mut skills: Vec<&Skill> = loaded[first..first + count]
                .iter()
                .map(|l| &l.skill)
                .collect();
            skills.sort_by(|a, b| a.id.cmp(&b.id));
            let mut h = blake3::Hasher::new();
            for s in &skills {
                h.update(s.id.as_str().as_bytes());
                h.update(b"\0");
                h.update(s.content_hash.as_bytes());
                h.update(b"\n");
            }
            RegistryInput {
                name: src.name.clone(),
                kind: src.kind,
                path: src.display_path.clone(),
                git: src.git.clone(),
                rev: src.rev.clone(),
                source: src.source.clone(),
                license: src.license.clone(),
                content_hash: h.finalize().to_hex().to_string(),
                skills: count as u64,
            }
        })
        .collect();

    let mut skills: Vec<Skill> = loaded.into_iter().map(load::Loaded::into_skill).collect();
    skills.sort_by(|a, b| a.id.cmp(&b.id));
    diagnostics.sort();
    diagnostics.dedup();
    Extraction {
        registries,
        skills,
        documents,
        edges,
        diagnostics,
    }
}
