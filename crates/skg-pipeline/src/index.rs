//! The index build: an audit folder → a routing index folder (BM25 + dense vectors), whole or
//! package by package against the previous index.

use std::{
    fmt,
    path::{Path, PathBuf},
    time::Instant,
};

use serde::Serialize;
use skg_index::{Index, JudgedQuery};
use skg_model::{Progress, Stage};
use skg_store::tables;

use crate::{Error, IoContext as _, Result};

/// What one build changed against the previous index (`--incremental`).
#[derive(Debug, Serialize)]
pub struct Incremental {
    packages: std::collections::BTreeMap<&'static str, usize>,
    #[serde(flatten)]
    diff: skg_index::PackageDiff,
    vectors_reused: usize,
    texts_embedded: usize,
}

impl Incremental {
    /// Packages by what happened to them.
    pub fn packages(&self) -> &std::collections::BTreeMap<&'static str, usize> {
        &self.packages
    }
}

/// What an index build reports (`skg index build`).
#[derive(Debug, Serialize)]
pub struct BuildReport {
    out: String,
    seconds: f64,
    #[serde(flatten)]
    manifest: BuildManifest,
    embedding: Option<skg_embed::EmbeddingStats>,
    /// What changed against the previous index, when updated incrementally.
    pub incremental: Option<Incremental>,
    /// The nearest-neighbour graph built into the folder's cache, when the index is large.
    ann: Option<AnnBuilt>,
}

/// The graph an index build left in the folder's cache ([`skg_index::ann::CACHE_FILE`]).
#[derive(Debug, Serialize)]
struct AnnBuilt {
    rows: usize,
    seconds: f64,
    /// `built`, or `cached`: carried over from the folder this build replaced (same content).
    source: Option<skg_index::ann::AnnSource>,
}

#[derive(Debug, Serialize)]
struct BuildManifest {
    counts: std::collections::BTreeMap<String, u64>,
    model: Option<String>,
    content_hash: String,
}

/// One index build: the audit read, where the index goes, how.
#[derive(Debug, Clone)]
pub struct BuildJob {
    /// The audit folder read.
    pub audit: PathBuf,
    /// The index folder written.
    pub out: PathBuf,
    /// Embed documents with the model (else BM25 only).
    pub embeddings: bool,
    /// Which of the model folder's graphs embeds the catalog; `None`: by the catalog's kind
    /// ([`skg_embed::Variant::for_catalog`]: a catalog of tools alone gets the tools graph, any
    /// other the packages graph — and the packages graph when the tools graph is not installed,
    /// with a warning).
    pub embedder: Option<skg_embed::Variant>,
    /// Update the previous index at `out` package by package.
    pub incremental: bool,
    /// Judged queries embedded as examples of their gold skills.
    pub examples: Option<PathBuf>,
    /// Relations below this confidence are not followed.
    pub min_confidence: f64,
    /// Threads for embedding inference.
    pub threads: usize,
    /// Which documents get a vector, and as what text.
    pub dense: skg_index::DenseTexts,
    /// Embedding caches read besides the one in `out` (files): vectors another index folder
    /// already holds for the same model, so a build into a new folder need not start cold.
    pub embedding_caches: Vec<PathBuf>,
    /// Build the nearest-neighbour graph (saved in the folder, so that the gateway's start and
    /// reloads read it instead of building it) from this many dense rows on; `None`: never.
    pub ann_min_rows: Option<usize>,
    /// Whether to store each skill's card token states (`tokens.bin`) for the second stage,
    /// late interaction ([`skg_index::Late`]): an index with them reorders every hybrid query's
    /// fused first candidates by it (docs/retrieval.md, "Token-level late interaction").
    pub card_tokens: CardTokens,
    /// The card tokens are stored on their first this many principal directions (and each
    /// query's projected like them); 0: the model's whole dimension.
    pub late_directions: usize,
}

/// When an index build stores the cards' token states.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum CardTokens {
    /// When the catalog has at most [`CardTokens::AUTO_MAX_CARDS`] cards: the stage's file and
    /// memory grow with the catalog (~9.3 KB a card on 128 directions, ~27 KB at the whole
    /// width), its query cost does not.
    #[default]
    Auto,
    /// Always.
    On,
    /// Never: the fused ranking as it is.
    Off,
}

impl CardTokens {
    /// [`CardTokens::Auto`]'s limit. Measured (docs/retrieval.md, "What the stage costs past
    /// 10,000 cards"): 30,000 synthetic skills hold 307 MB of codes on 128 directions in the
    /// folder and in each loaded index (the shared registries' 6,752: 63 MB), 822 MB of
    /// whole-width codes in `tokens.cache`; their cold build peaked at about 4.1 GB when this
    /// limit was set (what a 100,000-skill build without the stage takes) and at 2.6 GB since
    /// the build streams its files and frees the whole-width codes as it projects them (2.3
    /// warm, 1.1 without the stage since the graph's phase holds neither the audit's tables
    /// nor the card tokens). A larger limit has not been measured. The query's cost does
    /// not grow with the catalog (the stage reads the fused first 20).
    pub const AUTO_MAX_CARDS: usize = 30_000;

    /// Whether a catalog of `cards` cards gets them.
    pub fn stored(self, cards: usize) -> bool {
        match self {
            CardTokens::Auto => cards <= CardTokens::AUTO_MAX_CARDS,
            CardTokens::On => true,
            CardTokens::Off => false,
        }
    }
}

impl BuildJob {
    /// An index of `audit` at `out`, with the defaults.
    pub fn new(audit: PathBuf, out: PathBuf) -> BuildJob {
        BuildJob {
            audit,
            out,
            embeddings: true,
            embedder: None,
            incremental: false,
            examples: None,
            min_confidence: skg_index::DEFAULT_MIN_CONFIDENCE,
            threads: skg_embed::DEFAULT_THREADS,
            dense: skg_index::DenseTexts::default(),
            ann_min_rows: Some(skg_index::ann::DEFAULT_MIN_ROWS),
            embedding_caches: Vec::new(),
            card_tokens: CardTokens::Auto,
            late_directions: skg_index::LATE_DIRECTIONS,
        }
    }
}

/// The model folder loading the graph that embeds this catalog ([`BuildJob::embedder`]).
fn embedder(job: &BuildJob, skills: &[skg_model::Skill]) -> Result<skg_embed::ModelDir> {
    let dir = skg_embed::locate()?;
    let tools = skills
        .iter()
        .filter(|s| s.kind == skg_model::SkillKind::Tool)
        .count();
    match job.embedder {
        Some(v) => Ok(dir.with_variant(v)?),
        None => match skg_embed::Variant::for_catalog(skills.len(), tools) {
            skg_embed::Variant::Packages => Ok(dir),
            v @ skg_embed::Variant::Tools => dir.with_variant(v).or_else(|e| {
                tracing::warn!(
                    "a catalog of tools alone, embedded with the packages graph: {e} \
                     (docs/retrieval.md, \"An embedder per catalog kind\")"
                );
                Ok(dir)
            }),
        },
    }
}

/// Builds (or, incrementally, updates) the index folder.
///
/// # Errors
/// The audit folder cannot be read, the model fails, or the index cannot be written.
pub fn execute_build(job: &BuildJob, progress: &dyn Progress) -> Result<BuildReport> {
    let started = Instant::now();
    let audit = &job.audit;
    let m = skg_store::read_stage_manifest(audit, Stage::Audit).at(|| {
        format!(
            "{}: not a finished audit folder (run `skg audit` first)",
            audit.display()
        )
    })?;
    progress.phase("read the audit", 5);
    let read = |t: &str| format!("cannot read {t} from {}", audit.display());
    let skills = skg_store::read_ndjson(audit, tables::SKILLS.name).at(|| read("skills"))?;
    let documents: Vec<skg_model::Document> =
        skg_store::read_ndjson(audit, tables::DOCUMENTS.name).at(|| read("documents"))?;
    let edges = skg_store::read_ndjson(audit, tables::EDGES.name).at(|| read("edges"))?;
    let members = skg_store::read_ndjson(audit, tables::MEMBERS.name).at(|| read("members"))?;
    let scores = skg_store::read_ndjson(audit, tables::SCORES.name).at(|| read("scores"))?;

    // The previous index, for a whole-package incremental update: its vectors are reused, its
    // card token states never (a card's states are the cache's), so they stay on disk.
    let previous = if job.incremental {
        Index::open_with(&job.out, skg_index::OpenOptions { card_tokens: false })
            .inspect_err(|e| {
                tracing::warn!("no usable previous index ({e}): building the whole index");
            })
            .ok()
    } else {
        None
    };
    let diff = previous
        .as_ref()
        .map(|old| skg_index::diff_packages(old, &skills));
    let examples = match &job.examples {
        Some(path) => {
            let queries = skg_artifact::read_ndjson::<JudgedQuery>(path)
                .at(|| format!("cannot read {}", path.display()))?;
            let (found, unresolved) =
                skg_index::resolve_examples(&queries, &skills, &documents, &m.inputs);
            if unresolved > 0 {
                tracing::warn!(
                    "{}: {unresolved} example gold ids name no skill of this audit",
                    path.display()
                );
            }
            found
        }
        None => Vec::new(),
    };
    if job.card_tokens == CardTokens::On && !job.embeddings {
        return Err(Error::Invalid(
            "--late-interaction on stores the model's token states: it needs the model (drop \
             --no-embeddings)"
                .to_owned(),
        ));
    }
    if !examples.is_empty() && !job.embeddings {
        return Err(Error::Invalid(
            "--examples are embedded: they need the model (drop --no-embeddings)".to_owned(),
        ));
    }

    // The output folder, staged beside its destination once the model has run: the embedding
    // caches are streamed into it as soon as they are complete, not held in memory beside the
    // index being built (at 30,000 cards the token cache alone is 822 MB). Dropped unpublished
    // on an error.
    let stage = || {
        skg_artifact::Staged::beside(&job.out).at(|| format!("cannot stage {}", job.out.display()))
    };
    let mut staged = None;
    let (mut embedding, mut reused_count) = (None, 0usize);
    let vectors = if job.embeddings {
        // Vectors are reused (from the previous index or the cache) only when they were made by
        // the very files installed now: the identity carries their content id.
        let model = embedder(job, &skills)?.read_files()?;
        let identity = model.identity();
        let mut plan = skg_index::VectorPlan::new(
            &documents,
            &job.dense,
            previous.as_ref().zip(diff.as_ref()),
            &examples,
            &identity,
        );
        reused_count = plan.reused.len();
        // The caches the user named are read strictly: a bad one is an error, not a cold build.
        let own = job.out.join(skg_embed::CACHE_FILE);
        let also: Vec<&Path> = job.embedding_caches.iter().map(PathBuf::as_path).collect();
        let cards = if job.card_tokens.stored(plan.cards.len()) {
            std::mem::take(&mut plan.cards)
        } else {
            if job.card_tokens == CardTokens::Auto {
                tracing::info!(
                    "{} cards, over {}: no card token states (late interaction off; \
                     --late-interaction on stores them)",
                    plan.cards.len(),
                    CardTokens::AUTO_MAX_CARDS
                );
            }
            Vec::new()
        };
        let card_texts: Vec<String> = cards.iter().map(|(_, t)| t.clone()).collect();
        let mut e = skg_embed::embed_with_caches(
            &model,
            &plan.texts,
            &card_texts,
            &own,
            &also,
            job.threads,
            progress,
        )?;
        // Reused vectors stay in the cache under the text they were embedded as (an overview's
        // cut, a section's title and text), so a later whole build finds them too.
        for (i, v) in &plan.reused {
            e.cache.insert(&job.dense.text(&documents[*i]), v.clone());
        }
        let cache_at = |name: &str| format!("cannot write {}", job.out.join(name).display());
        let staged = staged.insert(stage()?);
        staged
            .write_with(skg_embed::CACHE_FILE, |w| e.cache.write_to(w))
            .at(|| cache_at(skg_embed::CACHE_FILE))?;
        drop(e.cache);
        // The token cache's file, then the cards' codes moved out of it (held once, not twice).
        let states = if cards.is_empty() {
            Vec::new()
        } else {
            staged
                .write_with(skg_embed::TOKEN_CACHE_FILE, |w| e.token_cache.write_to(w))
                .at(|| cache_at(skg_embed::TOKEN_CACHE_FILE))?;
            e.token_cache.into_states(&card_texts).ok_or_else(|| {
                Error::Embed(skg_embed::Error::Model(
                    "the model returned no token states for some cards".into(),
                ))
            })?
        };
        embedding = Some(e.stats);
        let mut vectors = plan.into_vectors(e.vectors, &identity, skg_embed::DIM);
        vectors.token_directions = job.late_directions;
        vectors.tokens = cards
            .into_iter()
            .zip(states)
            .map(|((doc, _), t)| {
                (
                    doc,
                    skg_index::TokenCodes {
                        scales: t.scales,
                        codes: t.codes,
                    },
                )
            })
            .collect();
        Some(vectors)
    } else {
        None
    };
    drop(previous);
    progress.phase("write the index", 1);
    let input = skg_index::BuildInput {
        skills: &skills,
        documents: &documents,
        edges: &edges,
        members: Some(&members),
        scores: Some(&scores),
        registries: &m.inputs,
        vectors,
        min_confidence: job.min_confidence,
    };
    let mut options = serde_json::json!({"min_confidence": job.min_confidence, "audit": audit.display().to_string(),
        "examples": job.examples.as_ref().map(|p| serde_json::json!({"file": p.display().to_string(), "vectors": examples.len()}))});
    job.dense.record(&mut options);
    let staged = match staged {
        Some(s) => s,
        None => stage()?,
    };
    let manifest = skg_index::build_staged(input, staged, options)
        .at(|| format!("cannot write {}", job.out.display()))?;
    // The audit's tables are done with: the graph phase below must not hold them too.
    drop((skills, documents, edges, members, scores, examples, m));
    let texts_embedded = embedding.as_ref().map_or(0, |e| e.embedded);
    let rows =
        usize::try_from(manifest.counts.get("vectors").copied().unwrap_or(0)).unwrap_or(usize::MAX);
    let ann = match job.ann_min_rows {
        Some(min) if rows > 0 && rows >= min => {
            progress.phase("nearest-neighbour graph", 1);
            let graph_started = Instant::now();
            // The graph is built over the dense vectors alone: the cards' token states
            // (9 KB a card) stay on disk.
            let mut index = skg_index::Index::open_with(
                &job.out,
                skg_index::OpenOptions { card_tokens: false },
            )
            .at(|| format!("cannot reopen {}", job.out.display()))?;
            index
                .use_ann(min, skg_index::ann::AnnOptions::default())
                .at(|| {
                    format!(
                        "{}: cannot build the nearest-neighbour graph",
                        job.out.display()
                    )
                })?;
            Some(AnnBuilt {
                rows,
                seconds: graph_started.elapsed().as_secs_f64(),
                source: index.ann_source(),
            })
        }
        _ => None,
    };
    Ok(BuildReport {
        out: job.out.display().to_string(),
        seconds: started.elapsed().as_secs_f64(),
        manifest: BuildManifest {
            counts: manifest.counts,
            model: manifest.model,
            content_hash: manifest.content_hash,
        },
        embedding,
        incremental: diff.map(|d| Incremental {
            packages: d.counts(),
            diff: d,
            vectors_reused: reused_count,
            texts_embedded,
        }),
        ann,
    })
}

impl fmt::Display for BuildReport {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if let Some(inc) = &self.incremental {
            let n = |k: &str| inc.packages.get(k).copied().unwrap_or(0);
            writeln!(
                f,
                "incremental: {} packages kept, {} changed, {} added, {} deleted; {} vectors reused, {} texts embedded",
                n("kept"),
                n("changed"),
                n("added"),
                n("deleted"),
                inc.vectors_reused,
                inc.texts_embedded,
            )?;
        }
        let count = |k: &str| self.manifest.counts.get(k).copied().unwrap_or(0);
        writeln!(
            f,
            "index {} in {:.1}s: {} skills ({} routable), {} documents, {} vectors ({})",
            self.out,
            self.seconds,
            count("skills"),
            count("routable"),
            count("documents"),
            count("vectors"),
            self.manifest
                .model
                .as_deref()
                .unwrap_or("no model: BM25 only"),
        )?;
        if let Some(e) = &self.embedding {
            writeln!(
                f,
                "embedding: {} distinct texts, {} embedded in {:.1}s, {} from caches",
                e.unique_texts, e.embedded, e.embed_seconds, e.from_cache
            )?;
        }
        if count("card_tokens") > 0 {
            writeln!(
                f,
                "late interaction: {} card tokens ({})",
                count("card_tokens"),
                skg_index::TOKENS_FILE
            )?;
        }
        if let Some(a) = &self.ann {
            let how = if a.source == Some(skg_index::ann::AnnSource::Cached) {
                "kept from the folder this build replaced (same content)".to_owned()
            } else {
                format!("built in {:.1}s and cached in the folder", a.seconds)
            };
            writeln!(
                f,
                "nearest-neighbour graph over {} rows {how} ({})",
                a.rows,
                skg_index::ann::CACHE_FILE
            )?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::CardTokens;

    #[test]
    fn card_tokens_are_stored_up_to_the_limit_by_default() {
        let limit = CardTokens::AUTO_MAX_CARDS;
        assert!(CardTokens::Auto.stored(0));
        assert!(CardTokens::Auto.stored(limit), "the limit is inclusive");
        assert!(!CardTokens::Auto.stored(limit + 1));
        // Past stop 50's limit (10,000): the shared registries' 6,752 cards with a few more
        // registries keep the stage (docs/retrieval.md, "What the stage costs past 10,000 cards").
        assert!(CardTokens::Auto.stored(10_001));
        assert!(CardTokens::On.stored(limit * 10));
        assert!(!CardTokens::Off.stored(1));
    }
}
