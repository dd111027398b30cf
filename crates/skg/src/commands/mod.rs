//! One module per subcommand, and what several of them share: reading stage outputs, embedding
//! through a cache, printing a summary.

pub(crate) mod audit;
pub(crate) mod canonicalize;
pub(crate) mod extract;
pub(crate) mod index;
pub(crate) mod measure;
pub(crate) mod schema;
pub(crate) mod score;
pub(crate) mod serve;

use std::{
    io::Write,
    path::{Path, PathBuf},
};

use anyhow::Context as _;
use serde::Serialize;
use skg_model::{Diagnostic, Edge, RegistryInput, Skill, Stage};
use skg_store::tables;

use crate::{args::Format, progress::Bar};

/// Extract's tables, as the later stages read them.
pub(crate) struct ExtractData {
    pub(crate) skills: Vec<Skill>,
    pub(crate) edges: Vec<Edge>,
    pub(crate) diagnostics: Vec<Diagnostic>,
    pub(crate) registries: Vec<RegistryInput>,
}

/// An extract output folder.
pub(crate) fn read_extract(dir: &Path) -> anyhow::Result<ExtractData> {
    let m = skg_store::read_stage_manifest(dir, Stage::Extract).with_context(|| {
        format!(
            "cannot read the extract output {} (run `skg extract` first)",
            dir.display()
        )
    })?;
    let read = |t: &str| format!("cannot read {t} from {}", dir.display());
    Ok(ExtractData {
        skills: skg_store::read_ndjson(dir, tables::SKILLS.name).with_context(|| read("skills"))?,
        edges: skg_store::read_ndjson(dir, tables::EDGES.name).with_context(|| read("edges"))?,
        diagnostics: skg_store::read_ndjson(dir, tables::DIAGNOSTICS.name)
            .with_context(|| read("diagnostics"))?,
        registries: m.inputs,
    })
}

/// A table of a finished folder `stage` wrote.
pub(crate) fn read_table<T: serde::de::DeserializeOwned>(
    dir: &Path,
    stage: Stage,
    table: &tables::Table<T>,
) -> anyhow::Result<Vec<T>> {
    skg_store::read_rows(dir, stage, table)
        .with_context(|| format!("cannot read {} from {}", table.name, dir.display()))
}

/// An extract output folder (one input holding a `manifest.json`), or registries extracted on
/// the fly with the default options. Without inputs: `reports/extract` when it is finished,
/// else `registries`.
pub(crate) fn load_extract(inputs: &[PathBuf], bar: &Bar) -> anyhow::Result<ExtractData> {
    let inputs: Vec<PathBuf> = if inputs.is_empty() {
        vec![stage_dir(None, Stage::Extract).unwrap_or_else(|| PathBuf::from("registries"))]
    } else {
        inputs.to_vec()
    };
    if let [one] = inputs.as_slice()
        && one.join(skg_store::MANIFEST_FILE).is_file()
    {
        return read_extract(one);
    }
    let sources =
        skg_extract::resolve_inputs(&inputs).context("cannot resolve the registries to read")?;
    let x = skg_extract::extract(&sources, &skg_extract::Options::default(), bar);
    Ok(ExtractData {
        skills: x.skills,
        edges: x.edges,
        diagnostics: x.diagnostics,
        registries: x.registries,
    })
}

/// `explicit`, else `stage`'s default folder when a finished one is there.
pub(crate) fn stage_dir(explicit: Option<&PathBuf>, stage: Stage) -> Option<PathBuf> {
    explicit.cloned().or_else(|| {
        let p = stage.default_dir();
        p.join(skg_store::SUCCESS_FILE).is_file().then_some(p)
    })
}

/// A stage's manifest options: its typed options as serialized, with `extra` keys (where its
/// inputs came from) beside them.
pub(crate) fn manifest_options(
    options: &impl Serialize,
    extra: serde_json::Value,
) -> anyhow::Result<serde_json::Value> {
    let mut v = serde_json::to_value(options)?;
    if let (Some(m), serde_json::Value::Object(e)) = (v.as_object_mut(), extra) {
        m.extend(e);
    }
    Ok(v)
}

/// Prints a summary on stdout: pretty JSON, or the human form.
pub(crate) fn emit<T: Serialize>(
    format: Format,
    value: &T,
    human: impl FnOnce(&mut std::io::StdoutLock<'static>) -> std::io::Result<()>,
) -> anyhow::Result<()> {
    let mut out = std::io::stdout().lock();
    match format {
        Format::Json => {
            serde_json::to_writer_pretty(&mut out, value)?;
            writeln!(out)?;
        }
        Format::Human => human(&mut out)?,
    }
    Ok(())
}

/// A vector for every text, from the embedding cache at `cache_path` where possible.
pub(crate) fn embed_texts(
    texts: &[String],
    cache_path: &Path,
    threads: usize,
    bar: &Bar,
) -> anyhow::Result<skg_embed::Embedded> {
    skg_embed::embed_with_cache(texts, skg_embed::read_cache(cache_path), threads, bar).map_err(
        |e| match e {
            skg_embed::Error::Missing { .. } => {
                anyhow::anyhow!("{e}\n(or pass --no-embeddings to compare descriptions lexically)")
            }
            e => e.into(),
        },
    )
}
