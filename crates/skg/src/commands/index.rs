//! `skg index build`, `skg eval` and `skg route`.

use std::{
    collections::HashMap,
    io::Write,
    path::{Path, PathBuf},
    time::Instant,
};

use anyhow::{Context as _, bail};
use serde::Serialize;
use skg_index::{EvalOptions, EvalReport, Fusion, Index, JudgedQuery, Mode};
use skg_model::{Progress as _, Stage};
use skg_serve::wire::{self, RouteRequest};
use skg_store::tables;

use crate::{
    ExitStatus, GlobalArgs,
    args::{EvalArgs, EvalMode, FusionArg, IndexBuildArgs, RouteArgs, ToolFormat},
    progress::Bar,
};

/// What one build changed against the previous index (`--incremental`).
#[derive(Debug, Serialize)]
pub(crate) struct Incremental {
    packages: std::collections::BTreeMap<&'static str, usize>,
    #[serde(flatten)]
    diff: skg_index::PackageDiff,
    vectors_reused: usize,
    texts_embedded: usize,
}

impl Incremental {
    /// Packages by what happened to them.
    pub(crate) fn packages(&self) -> &std::collections::BTreeMap<&'static str, usize> {
        &self.packages
    }
}

/// What `skg index build` prints.
#[derive(Debug, Serialize)]
pub(crate) struct BuildReport {
    out: String,
    seconds: f64,
    #[serde(flatten)]
    manifest: BuildManifest,
    embedding: Option<skg_embed::EmbeddingStats>,
    pub(crate) incremental: Option<Incremental>,
}

#[derive(Debug, Serialize)]
struct BuildManifest {
    counts: std::collections::BTreeMap<String, u64>,
    model: Option<String>,
    content_hash: String,
}

/// One index build: the audit read, where the index goes, how.
pub(crate) struct BuildJob {
    pub(crate) audit: PathBuf,
    pub(crate) out: PathBuf,
    pub(crate) embeddings: bool,
    pub(crate) incremental: bool,
    pub(crate) examples: Option<PathBuf>,
    pub(crate) min_confidence: f64,
    pub(crate) threads: usize,
    /// L2 sections per skill that get a vector.
    pub(crate) dense_sections: usize,
}

impl BuildJob {
    /// An index of `audit` at `out`, with the defaults.
    pub(crate) fn new(audit: PathBuf, out: PathBuf) -> BuildJob {
        BuildJob {
            audit,
            out,
            embeddings: true,
            incremental: false,
            examples: None,
            min_confidence: skg_index::DEFAULT_MIN_CONFIDENCE,
            threads: skg_embed::DEFAULT_THREADS,
            dense_sections: 0,
        }
    }
}

/// `reports/index-<audit folder name>`.
fn default_out(audit: &Path) -> PathBuf {
    let name = audit
        .canonicalize()
        .ok()
        .and_then(|p| p.file_name().map(|n| n.to_string_lossy().into_owned()))
        .unwrap_or_else(|| "audit".to_owned());
    PathBuf::from("reports").join(format!("index-{name}"))
}

pub(crate) fn build(args: &IndexBuildArgs, global: &GlobalArgs) -> anyhow::Result<ExitStatus> {
    let bar = Bar::new(global.quiet > 0);
    let job = BuildJob {
        embeddings: !args.no_embeddings,
        incremental: args.incremental,
        examples: args.examples.clone(),
        min_confidence: args.min_confidence,
        threads: args.threads,
        dense_sections: args.dense_sections,
        ..BuildJob::new(
            args.audit.clone(),
            args.out.clone().unwrap_or_else(|| default_out(&args.audit)),
        )
    };
    let r = execute_build(&job, &bar)?;
    super::emit(args.format, &r, |o| {
        if let Some(inc) = &r.incremental {
            let n = |k: &str| inc.packages.get(k).copied().unwrap_or(0);
            writeln!(
                o,
                "incremental: {} packages kept, {} changed, {} added, {} deleted; {} vectors reused, {} texts embedded",
                n("kept"),
                n("changed"),
                n("added"),
                n("deleted"),
                inc.vectors_reused,
                inc.texts_embedded,
            )?;
        }
        let count = |k: &str| r.manifest.counts.get(k).copied().unwrap_or(0);
        writeln!(
            o,
            "index {} in {:.1}s: {} skills ({} routable), {} documents, {} vectors ({})",
            r.out,
            r.seconds,
            count("skills"),
            count("routable"),
            count("documents"),
            count("vectors"),
            r.manifest.model.as_deref().unwrap_or("no model: BM25 only"),
        )
    })?;
    Ok(ExitStatus::Success)
}

/// Builds (or, incrementally, updates) the index folder.
pub(crate) fn execute_build(job: &BuildJob, bar: &Bar) -> anyhow::Result<BuildReport> {
    let started = Instant::now();
    let audit = &job.audit;
    let m = skg_store::read_stage_manifest(audit, Stage::Audit).with_context(|| {
        format!(
            "{}: not a finished audit folder (run `skg audit` first)",
            audit.display()
        )
    })?;
    bar.phase("read the audit", 5);
    let read = |t: &str| format!("cannot read {t} from {}", audit.display());
    let skills =
        skg_store::read_ndjson(audit, tables::SKILLS.name).with_context(|| read("skills"))?;
    let documents: Vec<skg_model::Document> =
        skg_store::read_ndjson(audit, tables::DOCUMENTS.name).with_context(|| read("documents"))?;
    let edges = skg_store::read_ndjson(audit, tables::EDGES.name).with_context(|| read("edges"))?;
    let members =
        skg_store::read_ndjson(audit, tables::MEMBERS.name).with_context(|| read("members"))?;
    let scores =
        skg_store::read_ndjson(audit, tables::SCORES.name).with_context(|| read("scores"))?;

    // The previous index, for a whole-package incremental update.
    let previous = if job.incremental {
        Index::open(&job.out)
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
            let queries = read_jsonl::<JudgedQuery>(path)?;
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
    if !examples.is_empty() && !job.embeddings {
        bail!("--examples are embedded: they need the model (drop --no-embeddings)");
    }

    let (mut embedding, mut cache_bytes, mut reused_count) = (None, None, 0usize);
    let vectors = if job.embeddings {
        let plan = skg_index::VectorPlan::new(
            &documents,
            job.dense_sections,
            previous.as_ref().zip(diff.as_ref()),
            &examples,
            skg_embed::MODEL_ID,
        );
        reused_count = plan.reused.len();
        let cache = job.out.join(skg_embed::CACHE_FILE);
        let mut e = super::embed_texts(&plan.texts, &cache, job.threads, bar)?;
        // Reused vectors stay in the cache, so a later whole build finds them too.
        for (i, v) in &plan.reused {
            e.cache.insert(&documents[*i].text, v.clone());
        }
        cache_bytes = Some(e.cache.to_bytes());
        embedding = Some(e.stats);
        Some(plan.into_vectors(e.vectors, skg_embed::MODEL_ID, skg_embed::DIM))
    } else {
        None
    };
    drop(previous);
    bar.phase("write the index", 1);
    let input = skg_index::BuildInput {
        skills: &skills,
        documents: &documents,
        edges: &edges,
        members: Some(&members),
        scores: Some(&scores),
        registries: &m.inputs,
        vectors: vectors.as_ref(),
        min_confidence: job.min_confidence,
    };
    let extra: Vec<(&str, &[u8])> = cache_bytes
        .as_deref()
        .map(|b| vec![(skg_embed::CACHE_FILE, b)])
        .unwrap_or_default();
    let mut options = serde_json::json!({"min_confidence": job.min_confidence, "audit": audit.display().to_string(),
        "examples": job.examples.as_ref().map(|p| serde_json::json!({"file": p.display().to_string(), "vectors": examples.len()}))});
    if job.dense_sections > 0 {
        options["dense_sections"] = job.dense_sections.into();
    }
    let manifest = skg_index::build(&input, &job.out, options, &extra)
        .with_context(|| format!("cannot write {}", job.out.display()))?;
    bar.finish();
    let texts_embedded = embedding.as_ref().map_or(0, |e| e.embedded);
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
    })
}

/// The rows of a JSONL file (blank lines skipped); a bad line is an error naming it.
fn read_jsonl<T: serde::de::DeserializeOwned>(path: &Path) -> anyhow::Result<Vec<T>> {
    skg_artifact::read_ndjson(path).with_context(|| format!("cannot read {}", path.display()))
}

/// What `skg eval` prints.
#[derive(Debug, Serialize)]
struct EvalPrinted<'a> {
    index: String,
    #[serde(flatten)]
    report: &'a EvalReport,
    #[serde(skip_serializing_if = "Option::is_none")]
    misses: Option<skg_index::MissReport>,
    #[serde(skip_serializing_if = "Option::is_none")]
    second_stage: Option<SecondStage>,
}

/// The learned second stage against the first stage's order, on the same candidates.
#[derive(Debug, Serialize)]
struct SecondStage {
    candidates: usize,
    first_stage: skg_index::Metrics,
    #[serde(skip_serializing_if = "Option::is_none")]
    cross_validated: Option<skg_index::Metrics>,
    #[serde(skip_serializing_if = "Option::is_none")]
    ranked: Option<skg_index::Metrics>,
}

pub(crate) fn eval(args: &EvalArgs) -> anyhow::Result<ExitStatus> {
    let index = Index::open(&args.index)
        .with_context(|| format!("cannot open the index {}", args.index.display()))?;
    let queries = read_jsonl::<JudgedQuery>(&args.queries)?;
    let modes: Vec<Mode> = match args.mode {
        EvalMode::All => vec![Mode::Bm25, Mode::Dense, Mode::Hybrid],
        EvalMode::Bm25 => vec![Mode::Bm25],
        EvalMode::Dense => vec![Mode::Dense],
        EvalMode::Hybrid => vec![Mode::Hybrid],
    };
    let needs_vectors = modes.iter().any(|m| *m != Mode::Bm25);
    if needs_vectors && index.dim() == 0 {
        bail!(
            "{}: the index has no vectors: run `--mode bm25` or rebuild it with the model",
            args.index.display()
        );
    }
    // The miss analysis ranks dense and fused too, whenever the index has vectors.
    let embedder = if needs_vectors || (args.misses && index.dim() > 0) {
        let dir =
            skg_embed::locate().map_err(|e| anyhow::anyhow!("{e}\n(or run `--mode bm25`)"))?;
        Some(skg_embed::Embedder::load(&dir, args.threads)?)
    } else {
        None
    };
    let options = EvalOptions {
        modes,
        fusion: fusion(args),
        negative_weight: args.negative_weight,
        pool: args.pool,
        include_quarantined: args.include_quarantined,
        bundle_k: args.bundle_k,
        per_query: args.per_query,
    };
    // Every mode's latency includes its query embedding, so the evaluation embeds afresh; the
    // miss analysis and the second stage reuse its vectors.
    let mut vectors = QueryVectors {
        embedder,
        seen: HashMap::new(),
    };
    let report = skg_index::evaluate(&index, &queries, &options, &mut |t: &str| vectors.fresh(t))?;
    let mut embed = |t: &str| vectors.reused(t);
    let misses = args
        .misses
        .then(|| skg_index::misses(&index, &queries, &options, &mut embed))
        .transpose()?;
    let second_stage = (args.ranker.is_some() || args.train_ranker.is_some())
        .then(|| second_stage(args, &index, &queries, &options, &mut embed))
        .transpose()?;
    let printed = EvalPrinted {
        index: args.index.display().to_string(),
        report: &report,
        misses,
        second_stage,
    };
    super::emit(args.format, &printed, |o| {
        print_eval(o, &printed)?;
        if let Some(m) = &printed.misses {
            write!(o, "{m}")?;
        }
        if let Some(s) = &printed.second_stage {
            print_second_stage(o, s)?;
        }
        Ok(())
    })?;
    Ok(ExitStatus::Success)
}

/// Query vectors: embedded afresh (and kept), or reused.
struct QueryVectors {
    embedder: Option<skg_embed::Embedder>,
    seen: HashMap<String, Vec<f32>>,
}

impl QueryVectors {
    fn fresh(&mut self, text: &str) -> Result<Vec<f32>, String> {
        let e = self.embedder.as_mut().ok_or("no embedding model loaded")?;
        let v = e
            .embed(&[text], 1)
            .map_err(|e| e.to_string())?
            .pop()
            .ok_or_else(|| "the model returned no vector".to_owned())?;
        self.seen.insert(text.to_owned(), v.clone());
        Ok(v)
    }

    fn reused(&mut self, text: &str) -> Result<Vec<f32>, String> {
        match self.seen.get(text) {
            Some(v) => Ok(v.clone()),
            None => self.fresh(text),
        }
    }
}

/// `--train-ranker` (fit, cross-validate, write) and `--ranker` (measure a fitted one) over the
/// first stage's candidates.
fn second_stage(
    args: &EvalArgs,
    index: &Index,
    queries: &[JudgedQuery],
    options: &EvalOptions,
    embed: &mut skg_index::EmbedFn<'_>,
) -> anyhow::Result<SecondStage> {
    use skg_index::rerank;
    let cands = rerank::collect(index, queries, options, embed)?;
    let mut stage = SecondStage {
        candidates: rerank::CANDIDATES,
        first_stage: skg_index::summarize(&rerank::outcomes(&cands, None)),
        cross_validated: None,
        ranked: None,
    };
    let fit = |x: &[Vec<f64>], y: &[bool]| -> Result<rerank::Fitted, String> {
        let l = skg_score::fit_logistic(x, y, skg_score::model::DEFAULT_ALPHA)
            .map_err(|e| e.to_string())?;
        Ok(rerank::Fitted {
            mean: l.mean,
            scale: l.scale,
            coefficients: l.coefficients,
            intercept: l.intercept,
        })
    };
    if let Some(out) = &args.train_ranker {
        stage.cross_validated =
            Some(rerank::cross_validate(&cands, args.folds, &fit).map_err(anyhow::Error::msg)?);
        let training = serde_json::json!({
            "queries": args.queries.display().to_string(),
            "index_revision": index.manifest.content_hash,
            "learner": format!(
                "logistic regression (linfa-logistic, L2 alpha {}) on standardized features",
                skg_score::model::DEFAULT_ALPHA
            ),
        });
        let ranker = rerank::train(&cands.iter().collect::<Vec<_>>(), &fit, training)
            .map_err(anyhow::Error::msg)?;
        let text = serde_json::to_string_pretty(&ranker)? + "\n";
        skg_artifact::write_file(out, text.as_bytes())
            .with_context(|| format!("cannot write {}", out.display()))?;
    }
    if let Some(path) = &args.ranker {
        let text = std::fs::read_to_string(path)
            .with_context(|| format!("cannot read {}", path.display()))?;
        let ranker = rerank::Ranker::from_json(&text)
            .map_err(|e| anyhow::anyhow!("{}: {e}", path.display()))?;
        stage.ranked = Some(skg_index::summarize(&rerank::outcomes(
            &cands,
            Some(&ranker),
        )));
    }
    Ok(stage)
}

fn print_second_stage(o: &mut impl Write, s: &SecondStage) -> std::io::Result<()> {
    writeln!(
        o,
        "\nsecond stage over the first {} fused candidates:",
        s.candidates
    )?;
    writeln!(
        o,
        "  {:<28} {:>6} {:>6} {:>6} {:>7}",
        "", "hit@1", "hit@5", "hit@10", "MRR@10"
    )?;
    let row = |o: &mut dyn Write, name: &str, m: &skg_index::Metrics| {
        writeln!(
            o,
            "  {name:<28} {:>6.3} {:>6.3} {:>6.3} {:>7.3}",
            m.hit[0], m.hit[2], m.hit[3], m.mrr10
        )
    };
    row(o, "first stage (fusion order)", &s.first_stage)?;
    if let Some(m) = &s.cross_validated {
        row(o, "ranked, k-fold held out", m)?;
    }
    if let Some(m) = &s.ranked {
        row(o, "ranked by --ranker", m)?;
    }
    Ok(())
}

/// The fusion `--fusion` and its parameters ask for (defaults from [`Fusion`]).
fn fusion(args: &EvalArgs) -> Fusion {
    match args.fusion {
        FusionArg::Rrf => Fusion::Rrf { k: Fusion::RRF_K },
        FusionArg::Linear => Fusion::Linear {
            bm25: args.bm25_weight.unwrap_or(Fusion::LINEAR_BM25),
        },
        FusionArg::Adaptive => Fusion::Adaptive {
            max_bm25: args.bm25_weight.unwrap_or(Fusion::MAX_BM25),
            saturation: args.saturation.unwrap_or(Fusion::SATURATION),
        },
    }
}

fn print_eval(o: &mut impl Write, p: &EvalPrinted<'_>) -> std::io::Result<()> {
    let s = p.report;
    writeln!(
        o,
        "{} queries · index {} · quarantine {} · bundle = the first {} skills' SKILL.md, catalog = every routable SKILL.md ({} tokens; names + descriptions alone: {}) · gold skills quarantined: {} (queries whose gold is all quarantined: {}) · unresolved gold ids: {}",
        s.queries,
        p.index,
        if s.include_quarantined {
            "off (quarantined skills routed)"
        } else {
            "on"
        },
        s.bundle_k,
        s.catalog_tokens,
        s.listing_tokens,
        s.gold_skills_quarantined,
        s.queries_whose_gold_is_all_quarantined,
        s.gold_unresolved,
    )?;
    write!(o, "{s}")
}

pub(crate) fn route(args: &RouteArgs) -> anyhow::Result<ExitStatus> {
    let started = Instant::now();
    let index = Index::open(&args.index)
        .with_context(|| format!("cannot open the index {}", args.index.display()))?;
    let mut degraded = Vec::new();
    let vector = if args.bm25 || index.dim() == 0 {
        None
    } else {
        match skg_embed::locate()
            .and_then(|dir| skg_embed::Embedder::load(&dir, skg_embed::DEFAULT_THREADS))
        {
            Ok(mut e) => e.embed(&[args.task.as_str()], 1)?.pop(),
            Err(e) => {
                degraded.push(format!("BM25 only: {e}"));
                None
            }
        }
    };
    let mut req = RouteRequest::new(&args.task);
    req.k = args.k;
    req.token_budget = args.token_budget;
    req.include_quarantined = args.include_quarantined;
    let answer = index.search(&req.query(vector.as_deref()))?;
    let bundle = skg_index::route(&index, &answer, req.token_budget);
    if let Some(dir) = &args.export {
        let written = skg_index::adapt::export(&index, &bundle, dir)
            .with_context(|| format!("cannot export the bundle to {}", dir.display()))?;
        tracing::info!("exported {} skills to {}", written.len(), dir.display());
    }
    if let Some(t) = args.tools {
        let format = match t {
            ToolFormat::Anthropic => skg_index::adapt::Format::Anthropic,
            ToolFormat::Openai => skg_index::adapt::Format::Openai,
            ToolFormat::Gemini => skg_index::adapt::Format::Gemini,
            ToolFormat::Mcp => skg_index::adapt::Format::Mcp,
        };
        let tools = skg_index::adapt::tools(&index, &bundle, format);
        let mut out = std::io::stdout().lock();
        serde_json::to_writer_pretty(&mut out, &tools)?;
        writeln!(out)?;
        return Ok(ExitStatus::Success);
    }
    let served = wire::Served {
        mode: answer.mode,
        index_revision: index.manifest.content_hash.clone(),
        degraded,
    };
    let mut r = wire::route(&index, &req, &answer, &bundle, served)?;
    r.took_ms = started.elapsed().as_secs_f64() * 1000.0;
    super::emit(args.format, &r, |o| write!(o, "{r}"))?;
    Ok(ExitStatus::Success)
}
