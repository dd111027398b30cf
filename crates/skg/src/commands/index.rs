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
use skg_pipeline::index::{BuildJob, CardTokens};
use skg_serve::wire::{self, RouteRequest};

use crate::{
    ExitStatus, GlobalArgs,
    args::{EvalArgs, EvalMode, FusionArg, IndexBuildArgs, LateInteraction, RouteArgs, ToolFormat},
    progress::Bar,
};

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
    // A folder names its cache; an explicit source that holds none is a mistake, not a cold
    // build to discover later.
    let embedding_caches = args
        .embedding_cache
        .iter()
        .map(|p| {
            let file = if p.is_dir() {
                p.join(skg_embed::CACHE_FILE)
            } else {
                p.clone()
            };
            if file.is_file() {
                Ok(file)
            } else {
                bail!(
                    "--embedding-cache {}: no embedding cache there (an index folder holds `{}`)",
                    p.display(),
                    skg_embed::CACHE_FILE
                )
            }
        })
        .collect::<anyhow::Result<Vec<_>>>()?;
    let bar = Bar::new(global.quiet > 0);
    let job = BuildJob {
        embedding_caches,
        embeddings: !args.no_embeddings,
        embedder: args.embedder.into(),
        incremental: args.incremental,
        examples: args.examples.clone(),
        min_confidence: args.min_confidence,
        threads: args.threads,
        dense: skg_index::DenseTexts {
            sections: args.dense_sections,
            usage_chars: args.usage_chars,
            usage_rule: skg_index::USAGE_RULE,
            overview_chars: (!args.whole_overviews).then_some(args.overview_chars),
        },
        ann_min_rows: (args.ann_min_rows > 0).then_some(args.ann_min_rows),
        card_tokens: match args.late_interaction {
            LateInteraction::Auto => CardTokens::Auto,
            LateInteraction::On => CardTokens::On,
            LateInteraction::Off => CardTokens::Off,
        },
        late_directions: args.late_directions,
        ..BuildJob::new(
            args.audit.clone(),
            args.out.clone().unwrap_or_else(|| default_out(&args.audit)),
        )
    };
    let r = skg_pipeline::index::execute_build(&job, &bar)?;
    bar.finish();
    super::emit(args.format, &r, |o| write!(o, "{r}"))?;
    Ok(ExitStatus::Success)
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
    #[serde(skip_serializing_if = "Option::is_none")]
    ann: Option<AnnPrinted>,
    #[serde(skip_serializing_if = "Option::is_none")]
    abstention: Option<Vec<skg_index::abstain::AbstentionReport>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    listing: Option<skg_index::listing::ListingReport>,
    #[serde(skip_serializing_if = "Option::is_none")]
    comparison: Option<skg_index::compare::Comparison>,
    /// `--intervals`: each mode's metrics with bootstrap 95 % intervals.
    #[serde(skip_serializing_if = "Option::is_none")]
    intervals: Option<Vec<skg_index::compare::ModeIntervals>>,
    /// `--fail-if-worse`: the metrics worse beyond chance.
    #[serde(skip_serializing_if = "Option::is_none")]
    regressions: Option<Vec<skg_index::compare::Regression>>,
}

/// `--ann`: the nearest-neighbour graph the evaluation ran with, and its recall.
#[derive(Debug, Serialize)]
struct AnnPrinted {
    /// Seconds to build the graph, or to read it from the index folder's cache.
    build_seconds: f64,
    source: Option<skg_index::ann::AnnSource>,
    #[serde(flatten)]
    recall: skg_index::ann::RecallReport,
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
    if let Some(alpha) = args.stats.fail_if_worse
        && !(alpha > 0.0 && alpha <= 1.0)
    {
        bail!("--fail-if-worse {alpha}: a significance level in (0, 1], e.g. 0.05");
    }
    let mut index = Index::open(&args.index)
        .with_context(|| format!("cannot open the index {}", args.index.display()))?;
    let started = Instant::now();
    let ann_options = skg_index::ann::AnnOptions {
        ef_construction: args.ann.ann_ef_construction,
        ef_search: args.ann.ann_ef_search,
        ..skg_index::ann::AnnOptions::default()
    };
    let ann_built = args.ann.ann && index.use_ann(0, ann_options)?;
    let ann_seconds = started.elapsed().as_secs_f64();
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
    let embedder = if needs_vectors
        || ((args.misses || args.candidates.is_some()) && index.dim() > 0)
    {
        let hint = if needs_vectors {
            "(or run `--mode bm25`)"
        } else {
            "(the miss analysis and the candidates rank dense too: or run without `--misses` and `--candidates`)"
        };
        let dir = skg_embed::locate()
            .and_then(|d| d.for_identity(index.manifest.model.as_deref()))
            .map_err(|e| anyhow::anyhow!("{e}\n{hint}"))?;
        let e = skg_embed::Embedder::load(&dir, args.threads)?;
        if let Some(why) = other_model(&index, e.identity()) {
            bail!("{}: {why}\n{hint}", args.index.display());
        }
        Some(e)
    } else {
        None
    };
    let options = EvalOptions {
        modes,
        fusion: fusion(args),
        negative_weight: args.negative_weight,
        pool: args.pool,
        max_terms: args.max_terms,
        bm25_unit: args.bm25_unit.into(),
        field_weights: args.field_weights,
        include_quarantined: args.include_quarantined,
        bundle_k: args.bundle_k,
        // A comparison and the intervals read the queries' ranks, so they need them recorded.
        per_query: args.per_query || args.stats.compare.is_some() || args.stats.intervals,
        late: args.late.into(),
    };
    let before = args
        .stats
        .compare
        .as_ref()
        .map(|path| -> anyhow::Result<skg_index::compare::RecordedEval> {
            let text = std::fs::read_to_string(path)
                .with_context(|| format!("cannot read {}", path.display()))?;
            let saved: skg_index::compare::RecordedEval = serde_json::from_str(&text)
                .with_context(|| {
                    format!(
                        "{}: not an evaluation saved by `skg eval --per-query --format json`",
                        path.display()
                    )
                })?;
            if let Some(saved_choice) = saved.include_quarantined
                && saved_choice != args.include_quarantined
            {
                let says = |on: bool| if on { "routed quarantined skills (--include-quarantined)" } else { "left quarantined skills out" };
                bail!(
                    "{}: the saved evaluation {}, this run {}: compare like with like",
                    path.display(),
                    says(saved_choice),
                    says(args.include_quarantined)
                );
            }
            if saved.modes.iter().all(|m| m.per_query.is_empty()) {
                bail!(
                    "{}: the saved evaluation has no per-query ranks: save it with `skg eval --per-query --format json`",
                    path.display()
                );
            }
            Ok(saved)
        })
        .transpose()?;
    // Every mode's latency includes its query embedding, so the evaluation embeds afresh; the
    // miss analysis and the second stage reuse its vectors.
    let mut vectors = QueryVectors {
        embedder,
        seen: HashMap::new(),
    };
    let mut report =
        skg_index::evaluate(&index, &queries, &options, &mut |t: &str| vectors.fresh(t))?;
    let comparison = before.map(|b| {
        let after: Vec<(skg_index::Mode, skg_index::compare::Ranks<'_>)> = report
            .modes
            .iter()
            .map(|m| (m.mode, m.per_query.as_slice()))
            .collect();
        skg_index::compare::compare(&b, &after)
    });
    if let (Some(c), Some(path)) = (&comparison, &args.stats.compare)
        && c.modes.is_empty()
    {
        // A comparison of nothing must not print an empty table, nor pass a gate.
        bail!(
            "{}: no query of the saved evaluation pairs with one of this run in a mode both measured (saved modes: {}; {} queries kept their id with another text or gold; paired by query id, or text, when the text and gold are unchanged: compare evaluations of the same query file)",
            path.display(),
            before_modes(c),
            c.unpaired_changed
        );
    }
    let intervals = args.stats.intervals.then(|| {
        report
            .modes
            .iter()
            .map(|m| skg_index::compare::intervals(m.mode, &m.per_query))
            .collect::<Vec<_>>()
    });
    if !args.per_query {
        for m in &mut report.modes {
            m.per_query.clear();
        }
    }
    let mut embed = |t: &str| vectors.reused(t);
    let misses = args
        .misses
        .then(|| skg_index::misses(&index, &queries, &options, &mut embed))
        .transpose()?;
    if let Some(out) = &args.candidates {
        let records = skg_index::candidate_records(&index, &queries, &options, &mut embed)?;
        skg_artifact::write_ndjson(out, &records)
            .with_context(|| format!("cannot write {}", out.display()))?;
        tracing::info!(
            queries = records.len(),
            path = %out.display(),
            "wrote the first stage's candidates"
        );
    }
    let second_stage = (args.ranker.is_some() || args.train_ranker.is_some())
        .then(|| second_stage(args, &index, &queries, &options, &mut embed))
        .transpose()?;
    let abstention = args
        .out_of_scope
        .as_ref()
        .map(|path| -> anyhow::Result<_> {
            let other = read_jsonl::<JudgedQuery>(path)?;
            let floor = skg_index::Query::new("", None, 1).min_score;
            Ok(skg_index::abstain::abstention(
                &index,
                &queries,
                &other,
                &options,
                (floor, args.max_served_loss),
                &mut embed,
            )?)
        })
        .transpose()?;
    let listing = args
        .listing_budget
        .map(|budget_chars| {
            let cut = skg_index::listing::ListingOptions {
                budget_chars,
                description_chars: args.listing_description_chars,
            };
            skg_index::listing::evaluate_listing(&index, &queries, &options, &cut, &mut embed)
        })
        .transpose()?;
    let ann = ann_built.then(|| {
        let mut seen: Vec<(&String, &skg_index::QueryEmbedding)> = vectors.seen.iter().collect();
        seen.sort_by(|a, b| a.0.cmp(b.0));
        let query_vectors: Vec<Vec<f32>> =
            seen.into_iter().map(|(_, v)| v.vector.clone()).collect();
        let mut filter = skg_index::Query::new("", None, 10);
        filter.include_quarantined = args.include_quarantined;
        AnnPrinted {
            build_seconds: ann_seconds,
            source: index.ann_source(),
            recall: skg_index::ann::report(&index, &query_vectors, &filter),
        }
    });
    let printed = EvalPrinted {
        index: args.index.display().to_string(),
        report: &report,
        misses,
        second_stage,
        ann,
        abstention,
        listing,
        intervals,
        regressions: args
            .stats
            .fail_if_worse
            .zip(comparison.as_ref())
            .map(|(alpha, c)| c.regressions(alpha)),
        comparison,
    };
    super::emit(args.format, &printed, |o| {
        print_eval(o, &printed)?;
        if let Some(all) = &printed.intervals {
            writeln!(
                o,
                "\n95 % intervals (bootstrap over the queries, {} resamples):",
                skg_index::compare::RESAMPLES
            )?;
            for m in all {
                writeln!(o, "{m}")?;
            }
        }
        if let Some(m) = &printed.misses {
            write!(o, "{m}")?;
        }
        if let Some(s) = &printed.second_stage {
            print_second_stage(o, s)?;
        }
        for a in printed.abstention.iter().flatten() {
            write!(o, "{a}")?;
        }
        if let Some(l) = &printed.listing {
            write!(o, "{l}")?;
        }
        if let Some(c) = &printed.comparison {
            write!(o, "{c}")?;
        }
        if let (Some(alpha), Some(r)) = (args.stats.fail_if_worse, &printed.regressions) {
            if r.is_empty() {
                writeln!(
                    o,
                    "\nno metric worse beyond chance (Holm-adjusted p ≤ {alpha})"
                )?;
            }
            for x in r {
                writeln!(
                    o,
                    "\nregression: {} {} {:+.3} (p {:.4}, Holm-adjusted {:.4} ≤ {alpha})",
                    x.mode, x.metric, x.delta, x.p_value, x.p_holm
                )?;
            }
        }
        if let Some(a) = &printed.ann {
            let r = &a.recall;
            writeln!(
                o,
                "\nnearest-neighbour graph: {} rows (ef_construction {}, ef_search {}) {} in {:.1}s; against the exact scan over {} queries: recall@10 {:.3}, recall@50 {:.3}",
                r.rows,
                r.ef_construction,
                r.ef_search,
                match a.source {
                    Some(skg_index::ann::AnnSource::Cached) => "read from the index folder's cache",
                    _ => "built",
                },
                a.build_seconds,
                r.queries,
                r.recall_at_10,
                r.recall_at_50
            )?;
        }
        Ok(())
    })?;
    if printed.regressions.as_ref().is_some_and(|r| !r.is_empty()) {
        return Ok(ExitStatus::Failure);
    }
    Ok(ExitStatus::Success)
}

/// Why queries can't be embedded for `index` by the model of identity `installed`: its documents
/// were embedded by another model (or other model files), and vectors of two models don't compare.
fn other_model(index: &Index, installed: &str) -> Option<String> {
    let built = index.manifest.model.as_deref()?;
    (built != installed).then(|| {
        format!(
            "the index was embedded by {built}, the installed model is {installed}: rebuild the index (`skg index build`) or set SKG_MODEL_DIR to the model it was built with"
        )
    })
}

/// Query embeddings (vector and token states): embedded afresh (and kept), or reused.
struct QueryVectors {
    embedder: Option<skg_embed::Embedder>,
    seen: HashMap<String, skg_index::QueryEmbedding>,
}

impl QueryVectors {
    fn fresh(&mut self, text: &str) -> Result<skg_index::QueryEmbedding, String> {
        let e = self.embedder.as_mut().ok_or("no embedding model loaded")?;
        let t = e.embed_with_tokens(text).map_err(|e| e.to_string())?;
        let v = skg_index::QueryEmbedding {
            vector: t.vector,
            tokens: t.tokens,
        };
        self.seen.insert(text.to_owned(), v.clone());
        Ok(v)
    }

    fn reused(&mut self, text: &str) -> Result<skg_index::QueryEmbedding, String> {
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
        FusionArg::Zscore => Fusion::Zscore {
            max_bm25: args.bm25_weight.unwrap_or(Fusion::LINEAR_BM25),
            saturation: args.saturation.unwrap_or(0.0),
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

/// `skg route --listing`: what `POST /v1/listing` answers for the task, printed as the markdown
/// block (or JSON), and with `--export` written as a folder of skills.
fn listing(
    args: &RouteArgs,
    index: &Index,
    embedding: Option<&skg_embed::TokenEmbedding>,
    late: skg_index::Late,
    degraded: Vec<String>,
    started: Instant,
) -> anyhow::Result<ExitStatus> {
    let mut q = skg_index::Query::new(
        &args.task,
        embedding.map(|t| t.vector.as_slice()),
        skg_index::listing::RANKED_CANDIDATES,
    );
    // The second stage, as the gateway's listing runs it.
    q.tokens = embedding
        .map(|t| t.tokens.as_slice())
        .filter(|t| !t.is_empty());
    q.late = late;
    q.include_quarantined = args.include_quarantined;
    q.pool = q.pool.max(skg_index::listing::RANKED_CANDIDATES);
    let answer = index.search(&q)?;
    let ranking: Vec<u32> = answer.hits.iter().map(|h| h.skill).collect();
    let order = skg_index::listing::ranked_order(index, &ranking, args.include_quarantined);
    let cut = skg_index::listing::ListingOptions {
        budget_chars: args.budget_chars,
        description_chars: args.description_chars,
    };
    let l = skg_index::listing::pack(index, &order, &cut, None);
    if let Some(dir) = &args.export {
        let bundle = skg_index::listing::as_bundle(index, &l);
        let written = skg_index::adapt::export(index, &bundle, dir)
            .with_context(|| format!("cannot export the listing to {}", dir.display()))?;
        tracing::info!("exported {} skills to {}", written.len(), dir.display());
    }
    let served = wire::Served {
        mode: answer.mode,
        index_revision: index.manifest.content_hash.clone(),
        degraded,
    };
    let mut out = wire::listing(index, Some(&args.task), &l, served);
    out.took_ms = started.elapsed().as_secs_f64() * 1000.0;
    super::emit(args.format, &out, |o| write!(o, "{}", out.markdown))?;
    Ok(ExitStatus::Success)
}

pub(crate) fn route(args: &RouteArgs) -> anyhow::Result<ExitStatus> {
    let started = Instant::now();
    let late: skg_index::Late = args.late.into();
    // As the gateway: a route that never runs the second stage reads no card tokens and asks
    // the model for no token states.
    let index = Index::open_with(&args.index, skg_index::OpenOptions::for_stage(&late))
        .with_context(|| format!("cannot open the index {}", args.index.display()))?;
    let mut degraded = Vec::new();
    let vector = if args.bm25 || index.dim() == 0 {
        None
    } else {
        match skg_embed::locate()
            .and_then(|dir| dir.for_identity(index.manifest.model.as_deref()))
            .and_then(|dir| skg_embed::Embedder::load(&dir, skg_embed::DEFAULT_THREADS))
        {
            Ok(mut e) => match other_model(&index, e.identity()) {
                Some(why) => {
                    degraded.push(format!("BM25 only: {why}"));
                    None
                }
                None if index.has_card_tokens() => Some(e.embed_with_tokens(&args.task)?),
                None => Some(skg_embed::TokenEmbedding {
                    vector: e
                        .embed(&[args.task.as_str()])?
                        .into_iter()
                        .next()
                        .context("the model returned no vector for the task")?,
                    tokens: Vec::new(),
                }),
            },
            Err(e) => {
                degraded.push(format!("BM25 only: {e}"));
                None
            }
        }
    };
    let mut req = RouteRequest::new(&args.task);
    req.k = Some(args.k);
    req.token_budget = args.token_budget;
    req.include_quarantined = args.include_quarantined;
    req.capability.clone_from(&args.capability);
    if args.listing {
        return listing(args, &index, vector.as_ref(), late, degraded, started);
    }
    let mut query = req.query(vector.as_ref().map(|t| t.vector.as_slice()));
    query.tokens = vector
        .as_ref()
        .map(|t| t.tokens.as_slice())
        .filter(|t| !t.is_empty());
    query.late = late;
    let answer = index.search(&query)?;
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
        let tools = skg_index::adapt::tools(&index, &bundle, format)
            .context("cannot read the routed tools' entries")?;
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

/// The modes a saved evaluation measured, as `--mode` names them.
fn before_modes(c: &skg_index::compare::Comparison) -> String {
    let mut modes: Vec<String> = c
        .modes_only_before
        .iter()
        .chain(&c.unpaired_modes)
        .map(ToString::to_string)
        .collect();
    modes.sort();
    if modes.is_empty() {
        "none".to_owned()
    } else {
        modes.join(", ")
    }
}
