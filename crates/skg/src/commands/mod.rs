//! One module per subcommand, and what several of them share: reading stage outputs, finding a
//! skill by the `<registry folder>/<SKILL.md path>` key labels files use, printing a summary.

pub(crate) mod audit;
pub(crate) mod canonicalize;
pub(crate) mod extract;
pub(crate) mod index;
pub(crate) mod measure;
pub(crate) mod schema;
pub(crate) mod score;
pub(crate) mod serve;

use std::{
    collections::{BTreeSet, HashMap},
    io::Write,
    path::{Path, PathBuf},
    time::Instant,
};

use anyhow::{Context as _, bail};
use serde::{Serialize, de::DeserializeOwned};
use skg_canon::EmbeddingCache;
use skg_model::{Diagnostic, Edge, RegistryInput, Skill};

use crate::{args::Format, progress::Bar};

/// Extract's tables.
pub(crate) struct ExtractData {
    pub(crate) skills: Vec<Skill>,
    pub(crate) edges: Vec<Edge>,
    pub(crate) diagnostics: Vec<Diagnostic>,
    pub(crate) registries: Vec<RegistryInput>,
}

/// The tables of a finished output folder written by `stage`.
pub(crate) fn read_stage<T: DeserializeOwned>(
    dir: &Path,
    stage: &str,
    table: &str,
) -> anyhow::Result<Vec<T>> {
    let m =
        skg_store::read_manifest(dir).with_context(|| format!("cannot read {}", dir.display()))?;
    if m.stage != stage {
        bail!(
            "{} holds `{}` output, not `{stage}` output",
            dir.display(),
            m.stage
        );
    }
    skg_store::read_ndjson(dir, table)
        .with_context(|| format!("cannot read {} from {}", table, dir.display()))
}

/// An extract output folder.
pub(crate) fn read_extract(dir: &Path) -> anyhow::Result<ExtractData> {
    let m = skg_store::read_manifest(dir).with_context(|| {
        format!(
            "cannot read the extract output {} (run `skg extract` first)",
            dir.display()
        )
    })?;
    if m.stage != "extract" {
        bail!(
            "{} holds `{}` output, not `extract` output",
            dir.display(),
            m.stage
        );
    }
    Ok(ExtractData {
        skills: skg_store::read_ndjson(dir, "skills")?,
        edges: skg_store::read_ndjson(dir, "edges")?,
        diagnostics: skg_store::read_ndjson(dir, "diagnostics")?,
        registries: m.inputs,
    })
}

/// An extract output folder (one input holding a `manifest.json`), or registries extracted on
/// the fly. Without inputs: `reports/extract` when it is finished, else `registries`.
pub(crate) fn load_extract(inputs: &[PathBuf], bar: &Bar) -> anyhow::Result<ExtractData> {
    let inputs: Vec<PathBuf> = if inputs.is_empty() {
        vec![stage_dir(None, "reports/extract").unwrap_or_else(|| PathBuf::from("registries"))]
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

/// `explicit`, else the default stage folder when a finished one is there.
pub(crate) fn stage_dir(explicit: Option<&PathBuf>, default: &str) -> Option<PathBuf> {
    explicit.cloned().or_else(|| {
        let p = PathBuf::from(default);
        p.join(skg_store::SUCCESS_FILE).is_file().then_some(p)
    })
}

/// Skill positions by the keys labels files use: `<registry folder>/<path>` and
/// `<registry name>/<path>`.
pub(crate) fn skill_keys<'a>(
    skills: impl IntoIterator<Item = &'a Skill>,
    registries: &[RegistryInput],
) -> HashMap<String, usize> {
    let folder_of: HashMap<&str, String> = registries
        .iter()
        .map(|r| (r.name.as_str(), r.folder()))
        .collect();
    let mut by_key = HashMap::new();
    for (i, s) in skills.into_iter().enumerate() {
        by_key.insert(format!("{}/{}", s.registry, s.path), i);
        if let Some(f) = folder_of.get(s.registry.as_str()) {
            by_key.insert(format!("{f}/{}", s.path), i);
        }
    }
    by_key
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

#[derive(Debug, Serialize)]
pub(crate) struct EmbeddingStats {
    model: &'static str,
    texts: usize,
    unique_texts: usize,
    embedded: usize,
    from_cache: usize,
    embed_seconds: f64,
    texts_per_second: f64,
}

/// A vector for every text, from the cache at `cache_path` where possible (the returned cache
/// holds exactly these texts, for the caller to publish with its output).
pub(crate) fn embed_texts(
    texts: &[String],
    cache_path: &Path,
    threads: usize,
    bar: &Bar,
) -> anyhow::Result<(Vec<Vec<f32>>, EmbeddingCache, EmbeddingStats)> {
    let model_id = skg_embed::MODEL_ID;
    let mut cache = match std::fs::read(cache_path) {
        Ok(bytes) => EmbeddingCache::from_bytes(&bytes, model_id).unwrap_or_else(|e| {
            tracing::warn!(path = %cache_path.display(), "embedding cache not used: {e}");
            EmbeddingCache::new(model_id, skg_embed::DIM)
        }),
        Err(_) => EmbeddingCache::new(model_id, skg_embed::DIM),
    };
    let unique: BTreeSet<&str> = texts.iter().map(String::as_str).collect();
    // Batches of similar length: fastembed pads a batch to its longest text and attention cost
    // grows with the square of the length.
    let mut misses: Vec<&str> = unique
        .iter()
        .copied()
        .filter(|t| cache.get(t).is_none())
        .collect();
    misses.sort_by_key(|t| (t.len(), *t));
    let started = Instant::now();
    if !misses.is_empty() {
        let dir = skg_embed::locate().map_err(|e| {
            anyhow::anyhow!("{e}\n(or pass --no-embeddings to compare descriptions lexically)")
        })?;
        let mut model = skg_embed::Embedder::load(&dir, threads)?;
        skg_extract::Progress::phase(bar, "embed texts", misses.len() as u64);
        for chunk in misses.chunks(256) {
            let vs = model.embed(chunk, 32)?;
            for (t, v) in chunk.iter().zip(vs) {
                cache.insert(t, v);
            }
            skg_extract::Progress::advance(bar, chunk.len() as u64);
        }
    }
    let embed_seconds = started.elapsed().as_secs_f64();
    let vectors: Vec<Vec<f32>> = texts
        .iter()
        .map(|t| cache.get(t).map(<[f32]>::to_vec).unwrap_or_default())
        .collect();
    if vectors.iter().any(Vec::is_empty) {
        bail!("the embedding model returned no vector for some texts");
    }
    cache.retain_texts(texts.iter().map(String::as_str));
    let stats = EmbeddingStats {
        model: model_id,
        texts: texts.len(),
        unique_texts: unique.len(),
        embedded: misses.len(),
        from_cache: unique.len() - misses.len(),
        embed_seconds,
        texts_per_second: if embed_seconds > 0.0 {
            misses.len() as f64 / embed_seconds
        } else {
            0.0
        },
    };
    Ok((vectors, cache, stats))
}
