//! `skg canonicalize`: skills → duplicate clusters, aliases, variants, canonical skills.

use std::{
    collections::{BTreeMap, BTreeSet, HashMap},
    io::Write,
    path::Path,
    time::Instant,
};

use anyhow::{Context, bail};
use serde::Serialize;
use skg_canon::{Canonicalization, EmbeddingCache, Index, Input, Options, Verdict, synth};
use skg_model::{EdgeKind, EdgeSource, Progress, RegistryInput, Role, Skill, SkillId};
use skg_store::{Manifest, Staging, tables};

use crate::{ExitStatus, GlobalArgs, args::CanonArgs, progress::Bar};

/// The embedding cache file inside the output folder.
const CACHE_FILE: &str = "embeddings.cache";

pub(crate) fn run(args: &CanonArgs, global: &GlobalArgs) -> anyhow::Result<ExitStatus> {
    let bar = Bar::new(global.quiet > 0);
    let summary = execute(args, &bar)?;
    bar.finish();
    super::emit(args.format, &summary, |out| print_human(out, &summary))?;
    Ok(ExitStatus::Success)
}

/// Canonicalizes and writes the output folder; the summary is not printed.
pub(crate) fn execute(args: &CanonArgs, bar: &Bar) -> anyhow::Result<Summary> {
    let started = Instant::now();
    let (skills, registries, edges, origins) = if let Some(n) = args.synthetic {
        let (s, o) = synth::generate(n, 8, args.seed);
        (s, Vec::new(), Vec::new(), Some(o))
    } else {
        let x = super::load_extract(&args.inputs, bar)?;
        (x.skills, x.registries, x.edges, None)
    };
    let mut in_degree: BTreeMap<SkillId, u32> = BTreeMap::new();
    for e in edges.iter().filter(|e| e.source != EdgeSource::Ambiguous) {
        *in_degree.entry(e.dst.clone()).or_default() += 1;
    }
    let read_seconds = started.elapsed().as_secs_f64();

    let embed_started = Instant::now();
    let (vectors, cache, embedding) = if args.no_embeddings {
        tracing::warn!(
            "--no-embeddings: descriptions are compared lexically (content-word Jaccard)"
        );
        (None, None, None)
    } else {
        let texts: Vec<String> = skills.iter().map(skg_canon::description_text).collect();
        let (v, c, e) = super::embed_texts(&texts, &args.out.join(CACHE_FILE), args.threads, bar)?;
        (Some(v), Some(c), Some(e))
    };
    let embed_seconds = embed_started.elapsed().as_secs_f64();

    let scores = match &args.scores {
        Some(p) => Some(read_scores(p)?),
        None => None,
    };
    let dedup_started = Instant::now();
    let input = Input {
        skills: &skills,
        vectors: vectors.as_deref(),
        scores: scores.as_ref(),
        in_degree: Some(&in_degree),
    };
    let options = Options::default();
    bar.phase("fingerprint", skills.len() as u64);
    let index = Index::build(&input, &options);
    bar.advance(skills.len() as u64);
    let candidates = index.candidates();
    let c = index.canonicalize_candidates(&candidates, bar);
    let dedup_seconds = dedup_started.elapsed().as_secs_f64();

    let write_started = Instant::now();
    bar.phase("write tables", tables::CANON_TABLES.len() as u64);
    write(&c, &skills, &registries, cache.as_ref(), args)
        .with_context(|| format!("cannot write {}", args.out.display()))?;
    let write_seconds = write_started.elapsed().as_secs_f64();

    let pairs = match &args.pairs {
        Some(p) => Some(score_pairs(p, &index, &candidates, &c, &registries)?),
        None => None,
    };
    let synthetic = origins.map(|o| synthetic_truth(&skills, &c, &o));
    let summary = Summary {
        out: args.out.display().to_string(),
        similarity: c.stats.similarity,
        seconds: Seconds {
            read: read_seconds,
            embed: embed_seconds,
            dedup: dedup_seconds,
            write: write_seconds,
            total: started.elapsed().as_secs_f64(),
        },
        embedding,
        stats: c.stats.clone(),
        registries: per_registry(&c),
        pairs,
        synthetic,
    };
    Ok(summary)
}

/// Slop scores by skill id from NDJSON rows with `id` and `slop_score`.
fn read_scores(path: &Path) -> anyhow::Result<BTreeMap<SkillId, f64>> {
    let file = if path.is_dir() {
        path.join("scores.ndjson")
    } else {
        path.to_path_buf()
    };
    let text = std::fs::read_to_string(&file)
        .with_context(|| format!("cannot read {}", file.display()))?;
    let mut out = BTreeMap::new();
    for (n, line) in text.lines().enumerate() {
        if line.trim().is_empty() {
            continue;
        }
        let v: serde_json::Value = serde_json::from_str(line)
            .with_context(|| format!("{}:{}: not JSON", file.display(), n + 1))?;
        let (Some(id), Some(score)) = (
            v.get("id").and_then(|x| x.as_str()),
            v.get("slop_score").and_then(serde_json::Value::as_f64),
        ) else {
            bail!(
                "{}:{}: a row needs `id` and `slop_score`",
                file.display(),
                n + 1
            );
        };
        out.insert(SkillId::from(id), score);
    }
    Ok(out)
}

fn write(
    c: &Canonicalization,
    skills: &[Skill],
    registries: &[RegistryInput],
    cache: Option<&EmbeddingCache>,
    args: &CanonArgs,
) -> anyhow::Result<()> {
    let mut staging = Staging::begin(&args.out)?;
    let routable: BTreeSet<&SkillId> = c
        .members
        .iter()
        .filter(|m| m.role != Role::Duplicate)
        .map(|m| &m.id)
        .collect();
    let mut canonical: Vec<Skill> = skills
        .iter()
        .filter(|s| routable.contains(&s.id))
        .cloned()
        .collect();
    canonical.sort_by(|a, b| a.id.cmp(&b.id));
    let aliases = tables::alias_rows(&c.members);
    staging.write_table(&tables::MEMBERS, &c.members)?;
    staging.write_table(&tables::CLUSTERS, &c.clusters)?;
    staging.write_table(&tables::ALIASES, &aliases)?;
    staging.write_table(&tables::CANONICAL_SKILLS, &canonical)?;
    staging.write_table(&tables::EDGES, &c.edges)?;
    if let Some(cache) = cache {
        staging.write_file(CACHE_FILE, &cache.to_bytes())?;
    }
    let counts = BTreeMap::from([
        ("members".to_owned(), c.members.len() as u64),
        ("clusters".to_owned(), c.clusters.len() as u64),
        ("aliases".to_owned(), aliases.len() as u64),
        ("canonical_skills".to_owned(), canonical.len() as u64),
        ("edges".to_owned(), c.edges.len() as u64),
    ]);
    let manifest = Manifest::new(
        "canonicalize",
        registries.to_vec(),
        counts,
        serde_json::json!({
            "similarity": c.stats.similarity,
            "model": if args.no_embeddings { None } else { Some(skg_embed::MODEL_ID) },
            "scores": args.scores.as_ref().map(|p| p.display().to_string()),
            "synthetic": args.synthetic.map(|n| serde_json::json!({"skills": n, "seed": args.seed})),
        }),
    );
    staging.commit(manifest)?;
    Ok(())
}

#[derive(Debug, Serialize)]
struct Seconds {
    read: f64,
    embed: f64,
    dedup: f64,
    write: f64,
    total: f64,
}

#[derive(Debug, Serialize)]
struct RegistryCounts {
    name: String,
    /// Skills read.
    raw: u64,
    /// Routable after deduplication (canonical + variant).
    canonical: u64,
    /// Aliases (duplicates) in this registry.
    duplicates: u64,
    /// Aliases whose canonical lives in another registry.
    copies_of_other_registries: u64,
    /// Variants in this registry.
    variants: u64,
}

#[derive(Debug, Serialize)]
pub(crate) struct Summary {
    out: String,
    similarity: &'static str,
    seconds: Seconds,
    embedding: Option<super::EmbeddingStats>,
    stats: skg_canon::Stats,
    registries: Vec<RegistryCounts>,
    pairs: Option<PairReport>,
    synthetic: Option<SyntheticTruth>,
}

fn per_registry(c: &Canonicalization) -> Vec<RegistryCounts> {
    let registry_of: HashMap<&SkillId, &str> = c
        .members
        .iter()
        .map(|m| (&m.id, m.registry.as_str()))
        .collect();
    let mut by: BTreeMap<&str, RegistryCounts> = BTreeMap::new();
    for m in &c.members {
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

#[derive(Debug, Serialize)]
struct PairRow {
    a: String,
    b: String,
    label: Option<String>,
    /// The outcome of the whole run: same cluster → duplicate, clusters linked → variant.
    decision: &'static str,
    /// The decision on this pair alone.
    pair_decision: &'static str,
    rule: &'static str,
    /// Blocking made the pair a candidate (else it was never compared in the run).
    candidate: bool,
    signals: skg_canon::Signals,
}

#[derive(Debug, Serialize)]
struct ClassMetrics {
    precision: f64,
    recall: f64,
    f1: f64,
    true_positives: u64,
    predicted: u64,
    actual: u64,
}

#[derive(Debug, Serialize)]
struct PairReport {
    file: String,
    pairs: usize,
    unresolved: Vec<String>,
    rows: Vec<PairRow>,
    /// Metrics of `decision` for the `duplicate` label.
    duplicate: Option<ClassMetrics>,
    /// Metrics of `pair_decision` for the `duplicate` label.
    duplicate_pairwise: Option<ClassMetrics>,
    /// `confusion[label][decision]` over duplicate / variant / distinct.
    confusion: BTreeMap<String, BTreeMap<String, u64>>,
    /// Fraction of labels equal to the decision.
    accuracy: Option<f64>,
}

/// Scores a CSV of labelled pairs against the run.
fn score_pairs(
    path: &Path,
    index: &Index<'_>,
    candidates: &[(u32, u32)],
    canon: &Canonicalization,
    registries: &[RegistryInput],
) -> anyhow::Result<PairReport> {
    let by_key = super::skill_keys(index.skills().iter().copied(), registries);
    let cluster: HashMap<&SkillId, &SkillId> = canon
        .members
        .iter()
        .map(|m| (&m.id, &m.cluster_id))
        .collect();
    let variant_links: BTreeSet<(&SkillId, &SkillId)> = canon
        .edges
        .iter()
        .filter(|e| e.kind == EdgeKind::VariantOf)
        .flat_map(|e| [(&e.src, &e.dst), (&e.dst, &e.src)])
        .collect();

    let mut reader =
        csv::Reader::from_path(path).with_context(|| format!("cannot read {}", path.display()))?;
    let headers = reader.headers()?.clone();
    let col = |name: &str| headers.iter().position(|h| h.trim() == name);
    let (Some(ca), Some(cb)) = (col("a"), col("b")) else {
        bail!("{}: needs columns `a` and `b`", path.display());
    };
    let cl = col("label");
    let mut rows = Vec::new();
    let mut unresolved = Vec::new();
    for (n, rec) in reader.records().enumerate() {
        let rec = rec.with_context(|| format!("{}:{}", path.display(), n + 2))?;
        let a = rec.get(ca).unwrap_or("").trim().to_owned();
        let b = rec.get(cb).unwrap_or("").trim().to_owned();
        let (Some(&i), Some(&j)) = (by_key.get(&a), by_key.get(&b)) else {
            for x in [&a, &b] {
                if !by_key.contains_key(x) {
                    unresolved.push(format!("{}:{}: {x}", path.display(), n + 2));
                }
            }
            continue;
        };
        let (si, sj) = (&index.skills()[i].id, &index.skills()[j].id);
        let (ki, kj) = (cluster[si], cluster[sj]);
        let decision = if ki == kj {
            Verdict::Duplicate
        } else if variant_links.contains(&(ki, kj)) {
            Verdict::Variant
        } else {
            Verdict::Distinct
        };
        let (signals, pair, rule) = index.judge(i.min(j), i.max(j));
        rows.push(PairRow {
            a,
            b,
            label: cl.and_then(|k| rec.get(k)).map(|l| l.trim().to_owned()),
            decision: decision.as_str(),
            pair_decision: pair.as_str(),
            rule,
            candidate: candidates
                .binary_search(&(u32::try_from(i.min(j))?, u32::try_from(i.max(j))?))
                .is_ok(),
            signals,
        });
    }
    let labelled: Vec<&PairRow> = rows.iter().filter(|r| r.label.is_some()).collect();
    let metrics = |pick: fn(&PairRow) -> &'static str| -> Option<ClassMetrics> {
        if labelled.is_empty() {
            return None;
        }
        let tp = labelled
            .iter()
            .filter(|r| r.label.as_deref() == Some("duplicate") && pick(r) == "duplicate")
            .count() as u64;
        let predicted = labelled.iter().filter(|r| pick(r) == "duplicate").count() as u64;
        let actual = labelled
            .iter()
            .filter(|r| r.label.as_deref() == Some("duplicate"))
            .count() as u64;
        let p = if predicted == 0 {
            0.0
        } else {
            tp as f64 / predicted as f64
        };
        let r = if actual == 0 {
            0.0
        } else {
            tp as f64 / actual as f64
        };
        let f1 = if p + r == 0.0 {
            0.0
        } else {
            2.0 * p * r / (p + r)
        };
        Some(ClassMetrics {
            precision: p,
            recall: r,
            f1,
            true_positives: tp,
            predicted,
            actual,
        })
    };
    let mut confusion: BTreeMap<String, BTreeMap<String, u64>> = BTreeMap::new();
    for r in &labelled {
        let label = r.label.clone().unwrap_or_default();
        *confusion
            .entry(label)
            .or_default()
            .entry(r.decision.to_owned())
            .or_default() += 1;
    }
    let accuracy = (!labelled.is_empty()).then(|| {
        labelled
            .iter()
            .filter(|r| r.label.as_deref() == Some(r.decision))
            .count() as f64
            / labelled.len() as f64
    });
    Ok(PairReport {
        file: path.display().to_string(),
        pairs: rows.len(),
        unresolved,
        duplicate: metrics(|r| r.decision),
        duplicate_pairwise: metrics(|r| r.pair_decision),
        rows,
        confusion,
        accuracy,
    })
}

/// Pairwise agreement of the clusters with the generator's ground truth (copies of one original
/// belong together; variants and other originals don't).
#[derive(Debug, Serialize)]
struct SyntheticTruth {
    /// Pairs in one predicted cluster that the generator made as copies of one original.
    precision: f64,
    /// Generator copy pairs that ended in one cluster.
    recall: f64,
    true_pairs: u64,
    predicted_pairs: u64,
}

fn synthetic_truth(
    skills: &[Skill],
    c: &Canonicalization,
    origins: &[synth::Origin],
) -> SyntheticTruth {
    // origin family by skill id; variants form their own singleton family.
    let mut fam: HashMap<&SkillId, Option<usize>> = HashMap::new();
    for (s, &o) in skills.iter().zip(origins) {
        fam.insert(
            &s.id,
            match o {
                synth::Origin::Original(k) | synth::Origin::Copy(k) => Some(k),
                synth::Origin::Variant(_) => None,
            },
        );
    }
    let mut true_groups: HashMap<usize, u64> = HashMap::new();
    for f in fam.values().flatten() {
        *true_groups.entry(*f).or_default() += 1;
    }
    let true_pairs: u64 = true_groups.values().map(|n| n * (n - 1) / 2).sum();
    let mut predicted_pairs = 0u64;
    let mut correct = 0u64;
    for cl in &c.clusters {
        let n = u64::from(cl.size);
        predicted_pairs += n * (n - 1) / 2;
        let mut counts: HashMap<usize, u64> = HashMap::new();
        for m in &cl.members {
            if let Some(Some(f)) = fam.get(m) {
                *counts.entry(*f).or_default() += 1;
            }
        }
        correct += counts.values().map(|k| k * (k - 1) / 2).sum::<u64>();
    }
    SyntheticTruth {
        precision: if predicted_pairs == 0 {
            1.0
        } else {
            correct as f64 / predicted_pairs as f64
        },
        recall: if true_pairs == 0 {
            1.0
        } else {
            correct as f64 / true_pairs as f64
        },
        true_pairs,
        predicted_pairs,
    }
}

fn print_human(out: &mut impl Write, s: &Summary) -> std::io::Result<()> {
    writeln!(
        out,
        "{} skills → {} clusters ({} with copies): {} duplicates, {} variants  [{} similarity, {:.1}s]",
        s.stats.skills,
        s.stats.clusters,
        s.stats.multi_clusters,
        s.stats.duplicates,
        s.stats.variants,
        s.similarity,
        s.seconds.total
    )?;
    writeln!(
        out,
        "candidates: {} pairs compared of {} possible; {} duplicate, {} variant; {} chained merges refused",
        s.stats.candidate_pairs,
        s.stats.all_pairs,
        s.stats.duplicate_pairs,
        s.stats.variant_pairs,
        s.stats.chain_merges_refused
    )?;
    if let Some(e) = &s.embedding {
        writeln!(
            out,
            "embeddings: {} texts ({} unique): {} embedded in {:.1}s ({:.0}/s), {} from cache",
            e.texts, e.unique_texts, e.embedded, e.embed_seconds, e.texts_per_second, e.from_cache
        )?;
    } else {
        writeln!(
            out,
            "embeddings: off (--no-embeddings): descriptions compared lexically"
        )?;
    }
    if !s.registries.is_empty() {
        writeln!(
            out,
            "\n{:<40} {:>7} {:>9} {:>10} {:>12} {:>8}",
            "registry", "raw", "canonical", "duplicates", "cross-copies", "variants"
        )?;
        for r in &s.registries {
            writeln!(
                out,
                "{:<40} {:>7} {:>9} {:>10} {:>12} {:>8}",
                r.name, r.raw, r.canonical, r.duplicates, r.copies_of_other_registries, r.variants
            )?;
        }
    }
    if let Some(p) = &s.pairs {
        writeln!(out, "\npairs from {}: {} scored", p.file, p.pairs)?;
        for r in &p.rows {
            let mark = match r.label.as_deref() {
                Some(l) if l == r.decision => "  ",
                Some(_) => "✗ ",
                None => "",
            };
            writeln!(
                out,
                "{mark}{} | {} | label={} decision={} pair={} ({}) {}",
                r.a,
                r.b,
                r.label.as_deref().unwrap_or("-"),
                r.decision,
                r.pair_decision,
                r.rule,
                skg_canon::describe(&r.signals)
            )?;
        }
        for u in &p.unresolved {
            writeln!(out, "unresolved: {u}")?;
        }
        if let Some(m) = &p.duplicate {
            writeln!(
                out,
                "duplicate: precision {:.3} recall {:.3} F1 {:.3} ({} of {} predicted, {} labelled)",
                m.precision, m.recall, m.f1, m.true_positives, m.predicted, m.actual
            )?;
        }
        if let Some(m) = &p.duplicate_pairwise {
            writeln!(
                out,
                "duplicate (pair decision alone): precision {:.3} recall {:.3} F1 {:.3}",
                m.precision, m.recall, m.f1
            )?;
        }
        if !p.confusion.is_empty() {
            writeln!(out, "confusion (rows label, columns decision):")?;
            writeln!(
                out,
                "{:>12} {:>10} {:>10} {:>10}",
                "", "duplicate", "variant", "distinct"
            )?;
            for l in ["duplicate", "variant", "distinct"] {
                let row = p.confusion.get(l);
                let get = |d: &str| row.and_then(|r| r.get(d)).copied().unwrap_or(0);
                writeln!(
                    out,
                    "{l:>12} {:>10} {:>10} {:>10}",
                    get("duplicate"),
                    get("variant"),
                    get("distinct")
                )?;
            }
        }
        if let Some(a) = p.accuracy {
            writeln!(out, "accuracy over three labels: {a:.3}")?;
        }
    }
    if let Some(t) = &s.synthetic {
        writeln!(
            out,
            "synthetic ground truth: pair precision {:.3}, recall {:.3} ({} true copy pairs, {} predicted)",
            t.precision, t.recall, t.true_pairs, t.predicted_pairs
        )?;
    }
    Ok(())
}
