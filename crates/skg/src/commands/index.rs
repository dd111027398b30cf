//! `skg index build` and `skg eval`.

use std::{
    collections::{BTreeSet, HashMap},
    io::Write,
    path::{Path, PathBuf},
    time::Instant,
};

use anyhow::{Context as _, bail};
use serde::{Deserialize, Serialize};
use skg_index::{Fusion, Index, Judged, Metrics, Mode, Query};
use skg_model::{Document, Edge, Member, Score, Skill};

use crate::{
    ExitStatus, GlobalArgs,
    args::{EvalArgs, EvalMode, FusionArg, IndexBuildArgs, RouteArgs, ToolFormat},
    progress::Bar,
};

const CACHE_FILE: &str = "embeddings.cache";

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
    let (summary, manifest, out) = execute_build(args, &bar)?;
    super::emit(args.format, &summary, |o| {
        if let Some(inc) = summary.get("incremental").filter(|v| !v.is_null()) {
            writeln!(
                o,
                "incremental: {} packages kept, {} changed, {} added, {} deleted; {} vectors reused, {} texts embedded",
                inc["packages"]["kept"],
                inc["packages"]["changed"],
                inc["packages"]["added"],
                inc["packages"]["deleted"],
                inc["vectors_reused"],
                inc["texts_embedded"],
            )?;
        }
        writeln!(
            o,
            "index {} in {:.1}s: {} skills ({} routable), {} documents, {} vectors ({})",
            out.display(),
            summary["seconds"].as_f64().unwrap_or(0.0),
            manifest.counts.get("skills").unwrap_or(&0),
            manifest.counts.get("routable").unwrap_or(&0),
            manifest.counts.get("documents").unwrap_or(&0),
            manifest.counts.get("vectors").unwrap_or(&0),
            manifest.model.as_deref().unwrap_or("no model: BM25 only"),
        )
    })?;
    Ok(ExitStatus::Success)
}

/// Builds (or, with `--incremental`, updates) the index folder; returns the summary, the
/// manifest written and the folder.
pub(crate) fn execute_build(
    args: &IndexBuildArgs,
    bar: &Bar,
) -> anyhow::Result<(serde_json::Value, skg_index::IndexManifest, PathBuf)> {
    let started = Instant::now();
    let audit = &args.audit;
    let m = skg_store::read_manifest(audit).with_context(|| {
        format!(
            "{}: not a finished audit folder (run `skg audit` first)",
            audit.display()
        )
    })?;
    if m.stage != "audit" {
        bail!(
            "{} holds `{}` output, not an audit",
            audit.display(),
            m.stage
        );
    }
    skg_extract::Progress::phase(bar, "read the audit", 5);
    let skills: Vec<Skill> = skg_store::read_ndjson(audit, "skills")?;
    let documents: Vec<Document> = skg_store::read_ndjson(audit, "documents")?;
    let edges: Vec<Edge> = skg_store::read_ndjson(audit, "edges")?;
    let members: Vec<Member> = skg_store::read_ndjson(audit, "members")?;
    let scores: Vec<Score> = skg_store::read_ndjson(audit, "scores")?;
    let out = args.out.clone().unwrap_or_else(|| default_out(audit));

    // The previous index, for a whole-package incremental update.
    let previous = if args.incremental {
        match Index::open(&out) {
            Ok(ix) => Some(ix),
            Err(e) => {
                tracing::warn!("no usable previous index ({e}): building the whole index");
                None
            }
        }
    } else {
        None
    };
    let diff = previous
        .as_ref()
        .map(|old| skg_index::diff_packages(old, &skills));

    let mut embedding = None;
    let mut cache_bytes = None;
    let mut reused_count = 0usize;
    let examples = match &args.examples {
        Some(path) => read_examples(path, &skills, &documents, &m.inputs)?,
        None => Vec::new(),
    };
    if !examples.is_empty() && args.no_embeddings {
        bail!("--examples are embedded: they need the model (drop --no-embeddings)");
    }
    let vectors = if args.no_embeddings {
        None
    } else {
        let all_targets = skg_index::dense_targets(&documents);
        let (reused, mut targets) = match (&previous, &diff) {
            (Some(old), Some(d)) => {
                skg_index::reuse_vectors(old, d, &documents, &all_targets, skg_embed::MODEL_ID)
            }
            _ => (Vec::new(), all_targets),
        };
        reused_count = reused.len();
        let mut texts: Vec<String> = targets.iter().map(|&i| documents[i].text.clone()).collect();
        for (doc, text) in &examples {
            targets.push(*doc);
            texts.push(text.clone());
        }
        let (vs, mut cache, stats) =
            super::embed_texts(&texts, &out.join(CACHE_FILE), args.threads, bar)?;
        // Reused vectors stay in the cache, so a later whole build finds them too.
        for (i, v) in &reused {
            cache.insert(&documents[*i].text, v.clone());
        }
        cache_bytes = Some(cache.to_bytes());
        embedding = Some(stats);
        let mut rows: Vec<(usize, Vec<f32>)> = reused;
        rows.extend(targets.into_iter().zip(vs));
        Some(skg_index::Vectors {
            model: skg_embed::MODEL_ID.to_owned(),
            dim: skg_embed::DIM,
            rows,
        })
    };
    drop(previous);
    skg_extract::Progress::phase(bar, "write the index", 1);
    let input = skg_index::BuildInput {
        skills: &skills,
        documents: &documents,
        edges: &edges,
        members: Some(&members),
        scores: Some(&scores),
        registries: &m.inputs,
        vectors: vectors.as_ref(),
        min_confidence: args.min_confidence,
    };
    let extra: Vec<(&str, &[u8])> = cache_bytes
        .as_deref()
        .map(|b| vec![(CACHE_FILE, b)])
        .unwrap_or_default();
    let manifest = skg_index::build(
        &input,
        &out,
        serde_json::json!({"min_confidence": args.min_confidence, "audit": audit.display().to_string(),
            "examples": args.examples.as_ref().map(|p| serde_json::json!({"file": p.display().to_string(), "vectors": examples.len()}))}),
        &extra,
    )
    .with_context(|| format!("cannot write {}", out.display()))?;
    bar.finish();
    let summary = serde_json::json!({
        "out": out.display().to_string(),
        "seconds": started.elapsed().as_secs_f64(),
        "counts": manifest.counts,
        "model": manifest.model,
        "content_hash": manifest.content_hash,
        "embedding": embedding,
        "incremental": diff.as_ref().map(|d| serde_json::json!({
            "packages": d.counts(),
            "changed": d.changed, "added": d.added, "deleted": d.deleted,
            "vectors_reused": reused_count,
            "texts_embedded": embedding.as_ref().map_or(0, |e| e.embedded),
        })),
    });
    Ok((summary, manifest, out))
}

/// Gold ids → skill positions: `<registry folder>/<SKILL.md path>`, `<registry>/<path>`, or a
/// name that only one skill has (tool catalogs).
struct Resolver {
    by_key: HashMap<String, usize>,
    by_name: HashMap<String, Vec<usize>>,
}

impl Resolver {
    fn new<'a>(
        skills: impl Iterator<Item = (&'a str, &'a str, &'a str)>,
        registries: &[skg_model::RegistryInput],
    ) -> Resolver {
        let folder: HashMap<String, String> = registries
            .iter()
            .map(|r| (r.name.to_string(), r.folder()))
            .collect();
        let mut by_key = HashMap::new();
        let mut by_name: HashMap<String, Vec<usize>> = HashMap::new();
        for (i, (registry, path, name)) in skills.enumerate() {
            if let Some(f) = folder.get(registry) {
                by_key.insert(format!("{f}/{path}"), i);
            }
            by_key.insert(format!("{registry}/{path}"), i);
            by_name.entry(name.to_owned()).or_default().push(i);
        }
        Resolver { by_key, by_name }
    }

    fn get(&self, id: &str) -> Option<usize> {
        self.by_key
            .get(id)
            .copied()
            .or_else(|| self.by_name.get(id).filter(|v| v.len() == 1).map(|v| v[0]))
    }
}

/// Example requests as (the L0 document of a gold skill, request text).
fn read_examples(
    path: &Path,
    skills: &[Skill],
    documents: &[Document],
    registries: &[skg_model::RegistryInput],
) -> anyhow::Result<Vec<(usize, String)>> {
    let text =
        std::fs::read_to_string(path).with_context(|| format!("cannot read {}", path.display()))?;
    let resolver = Resolver::new(
        skills
            .iter()
            .map(|s| (s.registry.as_str(), s.path.as_str(), s.name.as_str())),
        registries,
    );
    let l0: HashMap<&str, usize> = documents
        .iter()
        .enumerate()
        .filter(|(_, d)| d.level == skg_model::Level::L0)
        .map(|(i, d)| (d.skill.as_str(), i))
        .collect();
    let mut out = Vec::new();
    let mut unresolved = 0usize;
    for (n, line) in text
        .lines()
        .enumerate()
        .filter(|(_, l)| !l.trim().is_empty())
    {
        let q: QueryLine = serde_json::from_str(line)
            .with_context(|| format!("{}:{}: not an example line", path.display(), n + 1))?;
        for g in &q.gold {
            match resolver.get(g).and_then(|i| l0.get(skills[i].id.as_str())) {
                Some(&doc) => out.push((doc, q.query.clone())),
                None => unresolved += 1,
            }
        }
    }
    if unresolved > 0 {
        tracing::warn!(
            "{}: {unresolved} example gold ids name no skill of this audit",
            path.display()
        );
    }
    Ok(out)
}

/// One judged query as read.
#[derive(Debug, Deserialize)]
struct QueryLine {
    #[serde(default)]
    id: Option<String>,
    query: String,
    #[serde(default)]
    gold: Vec<String>,
    #[serde(default)]
    acceptable: Vec<String>,
}

#[derive(Debug, Serialize)]
struct ModeReport {
    mode: Mode,
    fusion: Option<Fusion>,
    metrics: Metrics,
    latency_ms: Latency,
    mean_bundle_tokens: f64,
    catalog_tokens: u64,
    listing_tokens: u64,
    token_reduction: f64,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    per_query: Vec<(String, Option<usize>)>,
}

#[derive(Debug, Serialize)]
struct Latency {
    p50: f64,
    p95: f64,
    p99: f64,
    mean: f64,
}

fn latency(mut ms: Vec<f64>) -> Latency {
    ms.sort_by(f64::total_cmp);
    // Nearest rank: the ⌈p·n⌉-th smallest.
    let at = |percent: usize| -> f64 {
        if ms.is_empty() {
            return 0.0;
        }
        ms[(percent * ms.len()).div_ceil(100).clamp(1, ms.len()) - 1]
    };
    Latency {
        p50: at(50),
        p95: at(95),
        p99: at(99),
        mean: ms.iter().sum::<f64>() / ms.len().max(1) as f64,
    }
}

pub(crate) fn eval(args: &EvalArgs, _global: &GlobalArgs) -> anyhow::Result<ExitStatus> {
    let index = Index::open(&args.index)
        .with_context(|| format!("cannot open the index {}", args.index.display()))?;
    let text = std::fs::read_to_string(&args.queries)
        .with_context(|| format!("cannot read {}", args.queries.display()))?;
    let mut queries = Vec::new();
    for (n, line) in text
        .lines()
        .enumerate()
        .filter(|(_, l)| !l.trim().is_empty())
    {
        let q: QueryLine = serde_json::from_str(line)
            .with_context(|| format!("{}:{}: not a query line", args.queries.display(), n + 1))?;
        queries.push(q);
    }

    // Gold ids → skill positions, copies folded onto their canonical.
    let resolver = Resolver::new(
        index
            .skills
            .iter()
            .map(|s| (s.registry.as_str(), s.path.as_str(), s.name.as_str())),
        &index.manifest.sources,
    );
    let canonical = |i: u32| -> u32 {
        index.skills[i as usize]
            .alias_of
            .as_ref()
            .and_then(|c| index.skill(c.as_str()))
            .map_or(i, |(c, _)| c)
    };
    let resolve = |id: &str| -> Option<u32> {
        resolver
            .get(id)
            .and_then(|i| u32::try_from(i).ok())
            .map(canonical)
    };
    let mut unresolved = BTreeSet::new();
    let mut quarantined_gold = BTreeSet::new();
    let judged: Vec<Judged> = queries
        .iter()
        .map(|q| {
            let mut j = Judged::default();
            for g in &q.gold {
                match resolve(g) {
                    Some(i) => {
                        if index.skills[i as usize].quarantined {
                            quarantined_gold.insert(i);
                        }
                        j.gold.insert(i);
                    }
                    None => {
                        unresolved.insert(g.clone());
                    }
                }
            }
            j.acceptable = q.acceptable.iter().filter_map(|a| resolve(a)).collect();
            j
        })
        .collect();
    let queries_without_gold = judged.iter().filter(|j| j.gold.is_empty()).count();
    let gold_all_quarantined = judged
        .iter()
        .filter(|j| {
            !j.gold.is_empty() && j.gold.iter().all(|g| index.skills[*g as usize].quarantined)
        })
        .count();

    let modes: Vec<Mode> = match args.mode {
        EvalMode::All => vec![Mode::Bm25, Mode::Dense, Mode::Hybrid],
        EvalMode::Bm25 => vec![Mode::Bm25],
        EvalMode::Dense => vec![Mode::Dense],
        EvalMode::Hybrid => vec![Mode::Hybrid],
    };
    let needs_vectors = modes.iter().any(|m| *m != Mode::Bm25);
    let mut embedder = if needs_vectors && index.dim() > 0 {
        let dir =
            skg_embed::locate().map_err(|e| anyhow::anyhow!("{e}\n(or run `--mode bm25`)"))?;
        Some(skg_embed::Embedder::load(&dir, args.threads)?)
    } else {
        None
    };
    if needs_vectors && embedder.is_none() {
        bail!(
            "{}: the index has no vectors: run `--mode bm25` or rebuild it with the model",
            args.index.display()
        );
    }
    let fusion = match args.fusion {
        FusionArg::Rrf => Fusion::Rrf { k: 60.0 },
        FusionArg::Linear => Fusion::Linear {
            bm25: args.bm25_weight.unwrap_or(0.5),
        },
        FusionArg::Adaptive => {
            let Fusion::Adaptive {
                max_bm25,
                saturation,
            } = Fusion::default()
            else {
                unreachable!("the default fusion is adaptive")
            };
            Fusion::Adaptive {
                max_bm25: args.bm25_weight.unwrap_or(max_bm25),
                saturation: args.saturation.unwrap_or(saturation),
            }
        }
    };
    // The whole catalog: every routable skill's SKILL.md (what the bundle is a part of); the
    // listing: every routable skill's name and description (what agents are handed each turn).
    let routable = || {
        index
            .skills
            .iter()
            .filter(|s| s.routable() || (args.include_quarantined && s.alias_of.is_none()))
    };
    let catalog_tokens: u64 = routable().map(|s| u64::from(s.tokens)).sum();
    let listing_tokens: u64 = routable()
        .map(|s| ((s.name.len() + s.description.len() + 4) as u64).div_ceil(4))
        .sum();

    let mut reports = Vec::new();
    for mode in modes {
        let mut outcomes = Vec::new();
        let mut ms = Vec::new();
        let mut bundle_tokens = 0u64;
        let mut per_query = Vec::new();
        for (q, j) in queries.iter().zip(&judged) {
            let t = Instant::now();
            let vector = match (&mut embedder, mode) {
                (Some(e), Mode::Dense | Mode::Hybrid) => e.embed(&[q.query.as_str()], 1)?.pop(),
                _ => None,
            };
            let mut query = Query::new(&q.query, vector.as_deref(), 10);
            query.mode = mode;
            query.fusion = fusion;
            query.include_quarantined = args.include_quarantined;
            query.negative_weight = args.negative_weight;
            query.pool = args.pool;
            query.min_score = f32::NEG_INFINITY;
            let answer = index.search(&query)?;
            ms.push(t.elapsed().as_secs_f64() * 1000.0);
            let ranking: Vec<u32> = answer.hits.iter().map(|h| h.skill).collect();
            bundle_tokens += ranking
                .iter()
                .take(args.bundle_k)
                .map(|&s| u64::from(index.skills[s as usize].tokens))
                .sum::<u64>();
            let o = skg_index::judge(&ranking, j);
            if args.per_query {
                per_query.push((
                    q.id.clone().unwrap_or_else(|| q.query.clone()),
                    o.first_gold,
                ));
            }
            outcomes.push(o);
        }
        let mean_bundle = bundle_tokens as f64 / queries.len().max(1) as f64;
        reports.push(ModeReport {
            mode,
            fusion: (mode == Mode::Hybrid).then_some(fusion),
            metrics: skg_index::summarize(&outcomes),
            latency_ms: latency(ms),
            mean_bundle_tokens: mean_bundle,
            catalog_tokens,
            listing_tokens,
            token_reduction: if catalog_tokens > 0 {
                1.0 - mean_bundle / catalog_tokens as f64
            } else {
                0.0
            },
            per_query,
        });
    }
    let summary = serde_json::json!({
        "queries": queries.len(),
        "index": args.index.display().to_string(),
        "index_revision": index.manifest.content_hash,
        "include_quarantined": args.include_quarantined,
        "bundle_k": args.bundle_k,
        "catalog_tokens": catalog_tokens,
        "listing_tokens": listing_tokens,
        "gold_unresolved": unresolved.len(),
        "queries_without_gold": queries_without_gold,
        "gold_skills_quarantined": quarantined_gold.len(),
        "queries_whose_gold_is_all_quarantined": gold_all_quarantined,
        "modes": reports,
    });
    super::emit(args.format, &summary, |o| {
        print_eval(o, &summary, &reports, &unresolved)
    })?;
    Ok(ExitStatus::Success)
}

fn print_eval(
    o: &mut impl Write,
    s: &serde_json::Value,
    reports: &[ModeReport],
    unresolved: &BTreeSet<String>,
) -> std::io::Result<()> {
    writeln!(
        o,
        "{} queries · index {} · quarantine {} · bundle = the first {} skills' SKILL.md, catalog = every routable SKILL.md ({} tokens; names + descriptions alone: {}) · gold skills quarantined: {} (queries whose gold is all quarantined: {}) · unresolved gold ids: {}",
        s["queries"],
        s["index"],
        if s["include_quarantined"].as_bool().unwrap_or(false) {
            "off (quarantined skills routed)"
        } else {
            "on"
        },
        s["bundle_k"],
        s["catalog_tokens"],
        s["listing_tokens"],
        s["gold_skills_quarantined"],
        s["queries_whose_gold_is_all_quarantined"],
        s["gold_unresolved"],
    )?;
    for g in unresolved.iter().take(5) {
        writeln!(o, "  unresolved: {g}")?;
    }
    writeln!(
        o,
        "\n{:<8} {:>6} {:>6} {:>6} {:>6} {:>7} {:>7} {:>6} {:>6} {:>6} {:>6} {:>8} {:>8} {:>8} {:>9} {:>8}",
        "mode",
        "hit@1",
        "hit@3",
        "hit@5",
        "hit@10",
        "MRR@10",
        "nDCG10",
        "R@1",
        "R@3",
        "R@5",
        "R@10",
        "p50 ms",
        "p95 ms",
        "p99 ms",
        "tokens",
        "reduct."
    )?;
    for r in reports {
        let m = &r.metrics;
        writeln!(
            o,
            "{:<8} {:>6.3} {:>6.3} {:>6.3} {:>6.3} {:>7.3} {:>7.3} {:>6.3} {:>6.3} {:>6.3} {:>6.3} {:>8.2} {:>8.2} {:>8.2} {:>9.0} {:>7.1}%",
            format!("{:?}", r.mode).to_lowercase(),
            m.hit[0],
            m.hit[1],
            m.hit[2],
            m.hit[3],
            m.mrr10,
            m.ndcg10,
            m.recall[0],
            m.recall[1],
            m.recall[2],
            m.recall[3],
            r.latency_ms.p50,
            r.latency_ms.p95,
            r.latency_ms.p99,
            r.mean_bundle_tokens,
            100.0 * r.token_reduction,
        )?;
        if m.empty > 0 {
            writeln!(o, "         {} queries got an empty answer", m.empty)?;
        }
    }
    for r in reports.iter().filter(|r| !r.per_query.is_empty()) {
        writeln!(o, "\n{:?}: rank of the first gold skill per query", r.mode)?;
        for (q, rank) in &r.per_query {
            writeln!(
                o,
                "  {:>4}  {q}",
                rank.map_or_else(|| "-".to_owned(), |r| r.to_string())
            )?;
        }
    }
    Ok(())
}

pub(crate) fn route(args: &RouteArgs) -> anyhow::Result<ExitStatus> {
    let started = Instant::now();
    let index = Index::open(&args.index)
        .with_context(|| format!("cannot open the index {}", args.index.display()))?;
    let mut degraded = None;
    let vector = if args.bm25 || index.dim() == 0 {
        None
    } else {
        match skg_embed::locate().and_then(|dir| skg_embed::Embedder::load(&dir, 2)) {
            Ok(mut e) => e.embed(&[args.task.as_str()], 1)?.pop(),
            Err(e) => {
                degraded = Some(format!("BM25 only: {e}"));
                None
            }
        }
    };
    let mut q = Query::new(&args.task, vector.as_deref(), args.k);
    q.include_quarantined = args.include_quarantined;
    let answer = index.search(&q)?;
    let bundle = skg_index::route(&index, &answer, args.token_budget);
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
    let summary = serde_json::json!({
        "task": args.task,
        "index_revision": index.manifest.content_hash,
        "mode": answer.mode,
        "degraded": degraded,
        "bundle": bundle,
        "rejected": answer.rejected.iter().map(|h| serde_json::json!({
            "id": index.skills[h.skill as usize].id, "score": h.score})).collect::<Vec<_>>(),
        "nothing_cleared_the_floor": answer.hits.is_empty(),
        "milliseconds": started.elapsed().as_secs_f64() * 1000.0,
    });
    super::emit(args.format, &summary, |o| {
        if let Some(d) = &degraded {
            writeln!(o, "({d})")?;
        }
        if answer.hits.is_empty() {
            writeln!(o, "no skill cleared the score floor for this task")?;
        }
        for (n, s) in bundle.plan.iter().enumerate() {
            let why = match &s.reason {
                skg_index::Reason::Retrieved { rank } => format!("retrieved #{rank}"),
                skg_index::Reason::Dependency { of } => format!("dependency of {of}"),
                skg_index::Reason::Complement { of } => format!("complements {of}"),
            };
            writeln!(
                o,
                "{:>2}. {:<60} {:>6} tokens  {why}",
                n + 1,
                s.id,
                s.tokens
            )?;
        }
        for c in &bundle.cycles {
            writeln!(o, "dependency cycle: {}", c.join(" → "))?;
        }
        for e in &bundle.type_errors {
            writeln!(o, "type error: {e}")?;
        }
        for m in &bundle.missing {
            writeln!(o, "missing dependency: {m}")?;
        }
        writeln!(
            o,
            "bundle {} tokens of a {}-token catalog ({:.1}% of it){}",
            bundle.tokens,
            bundle.catalog_tokens,
            100.0 * bundle.tokens as f64 / bundle.catalog_tokens.max(1) as f64,
            if bundle.overrun > 0 {
                format!(
                    "; {} tokens over the budget (dependencies are kept)",
                    bundle.overrun
                )
            } else {
                String::new()
            }
        )
    })?;
    Ok(ExitStatus::Success)
}
