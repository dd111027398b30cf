//! Retrieval evaluation end to end: judged queries resolved against an index (gold ids by path
//! or by a name only one skill has, copies folded onto their canonical), each query run in each
//! mode, ranked skills judged, the metrics averaged, latency and bundle tokens measured.

use std::{collections::BTreeSet, time::Instant};

use serde::{Deserialize, Serialize};
use skg_model::{Document, Level, RegistryInput, Skill, SkillKeys};

use crate::{
    Bm25Unit, FieldWeights, Fusion, Index, Judged, Metrics, Mode, Query, Result, judge, summarize,
};

/// One judged query as read (JSONL `{id?, query, gold[], acceptable[]}`; other fields ignored).
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
pub struct JudgedQuery {
    /// Its id, when it has one.
    #[serde(default)]
    pub id: Option<String>,
    /// The task, in words.
    pub query: String,
    /// Gold skills: `<registry folder>/<SKILL.md path>`, `<registry>/<path>` or a tool name.
    #[serde(default)]
    pub gold: Vec<String>,
    /// Acceptable (weaker) answers, written the same way.
    #[serde(default)]
    pub acceptable: Vec<String>,
}

/// How `skg eval` runs the queries.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct EvalOptions {
    /// Modes measured, in order.
    pub modes: Vec<Mode>,
    /// Fusion of the hybrid mode.
    pub fusion: Fusion,
    /// Weight of `when_not_to_use` matches subtracted from BM25.
    pub negative_weight: f32,
    /// Candidates each ranking contributes to the fusion.
    pub pool: usize,
    /// Query terms BM25 scores (the rarest; 0: all).
    pub max_terms: usize,
    /// What BM25 scores as one document (the whole skill or its best document).
    #[serde(default)]
    pub bm25_unit: Bm25Unit,
    /// BM25 field weights in [`crate::FIELDS`] order (name, description, `when_to_use`,
    /// tags, headings, body) for every skill; `None`: the unit's defaults for each skill's kind
    /// ([`FieldWeights::of`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub field_weights: Option<[f32; 6]>,
    /// Count quarantined skills as routable.
    pub include_quarantined: bool,
    /// Skills of the answer whose `SKILL.md` tokens count as the bundle.
    pub bundle_k: usize,
    /// Keep each query's rank of its first gold skill.
    pub per_query: bool,
    /// The second stage over the hybrid ranking ([`crate::Late`]; [`crate::Late::OFF`] to
    /// measure without it).
    pub late: crate::Late,
}

impl EvalOptions {
    /// The query `skg eval` runs for `text` in `mode`: `k` skills, these options' fusion,
    /// quarantine, negative weight and pool (at least `k`), and no floor (evaluation ranks
    /// everything; the floor is measured separately).
    pub(crate) fn query<'q>(
        &self,
        text: &'q str,
        embedding: Option<&'q QueryEmbedding>,
        mode: Mode,
        k: usize,
    ) -> Query<'q> {
        let mut q = Query::new(text, embedding.map(|e| e.vector.as_slice()), k);
        q.tokens = embedding
            .map(|e| e.tokens.as_slice())
            .filter(|t| !t.is_empty());
        q.late = self.late;
        q.mode = mode;
        q.fusion = self.fusion;
        q.include_quarantined = self.include_quarantined;
        q.negative_weight = self.negative_weight;
        q.pool = self.pool.max(k);
        q.max_terms = self.max_terms;
        q.bm25_unit = self.bm25_unit;
        q.weights = self.field_weights.map(FieldWeights);
        q.min_score = f32::NEG_INFINITY;
        q
    }
}

/// The query's embedding when `mode` uses vectors and the index has them.
pub(crate) fn query_vector(
    index: &Index,
    mode: Mode,
    text: &str,
    embed: &mut EmbedFn<'_>,
) -> Result<Option<QueryEmbedding>> {
    match mode {
        Mode::Dense | Mode::Hybrid if index.dim() > 0 => {
            Ok(Some(embed(text).map_err(crate::Error::Embed)?))
        }
        _ => Ok(None),
    }
}

impl Default for EvalOptions {
    fn default() -> Self {
        let q = Query::new("", None, 10);
        EvalOptions {
            modes: vec![Mode::Bm25, Mode::Dense, Mode::Hybrid],
            fusion: q.fusion,
            negative_weight: q.negative_weight,
            pool: q.pool,
            max_terms: q.max_terms,
            bm25_unit: q.bm25_unit,
            field_weights: None,
            include_quarantined: false,
            bundle_k: 5,
            per_query: false,
            late: q.late,
        }
    }
}

/// Latency percentiles in milliseconds (nearest rank).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Latency {
    /// Median.
    pub p50: f64,
    /// 95th percentile.
    pub p95: f64,
    /// 99th percentile.
    pub p99: f64,
    /// Mean.
    pub mean: f64,
}

impl Latency {
    /// The percentiles of `ms`: the ⌈p·n⌉-th smallest (all 0 without samples).
    pub fn of(mut ms: Vec<f64>) -> Latency {
        ms.sort_by(f64::total_cmp);
        let at = |percent: usize| crate::eval::nearest_rank(&ms, percent * 10);
        Latency {
            p50: at(50),
            p95: at(95),
            p99: at(99),
            mean: ms.iter().sum::<f64>() / ms.len().max(1) as f64,
        }
    }
}

/// One mode's results.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ModeReport {
    /// The mode.
    pub mode: Mode,
    /// Its fusion (hybrid only).
    pub fusion: Option<Fusion>,
    /// Mean metrics.
    pub metrics: Metrics,
    /// Query embedding + retrieval, per query.
    pub latency_ms: Latency,
    /// Mean tokens of the first `bundle_k` skills' `SKILL.md`.
    pub mean_bundle_tokens: f64,
    /// Every routable skill's `SKILL.md`.
    pub catalog_tokens: u64,
    /// Every routable skill's name and description.
    pub listing_tokens: u64,
    /// 1 − mean bundle / catalog.
    pub token_reduction: f64,
    /// Each query's rank of its first gold skill, with `per_query`.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub per_query: Vec<QueryRank>,
}

/// One query's result as `skg eval --per-query` records it; in JSON `[key, rank, judged]`
/// (files saved before the digest was recorded hold `[key, rank]`, and read back).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(from = "RankRecord", into = "RankRecord")]
pub struct QueryRank {
    /// The query's id, or its text when it has none: what pairs it with another run's result.
    pub key: String,
    /// Rank of its first gold skill in the first 10.
    pub rank: Option<usize>,
    /// [`judged_digest`] of the query: a comparison pairs two results under one key only when
    /// they judged the same text against the same gold. `None` in files saved before it was
    /// recorded.
    pub judged: Option<String>,
}

/// [`QueryRank`]'s JSON: a tuple, with or without the digest.
#[derive(Serialize, Deserialize)]
#[serde(untagged)]
enum RankRecord {
    Judged(String, Option<usize>, String),
    Bare(String, Option<usize>),
}

impl From<RankRecord> for QueryRank {
    fn from(r: RankRecord) -> Self {
        match r {
            RankRecord::Judged(key, rank, judged) => Self {
                key,
                rank,
                judged: Some(judged),
            },
            RankRecord::Bare(key, rank) => Self {
                key,
                rank,
                judged: None,
            },
        }
    }
}

impl From<QueryRank> for RankRecord {
    fn from(q: QueryRank) -> Self {
        match q.judged {
            Some(judged) => Self::Judged(q.key, q.rank, judged),
            None => Self::Bare(q.key, q.rank),
        }
    }
}

/// What a query's rank depends on besides the index: its text and its gold ids (in any order).
/// The first 16 hex digits of their blake3, so that a query whose id was kept while its text or
/// gold was edited is not compared with its earlier self.
pub fn judged_digest(query: &JudgedQuery) -> String {
    let mut gold: Vec<&str> = query.gold.iter().map(String::as_str).collect();
    gold.sort_unstable();
    gold.dedup();
    // Each field length-prefixed: no text can pass for another split of the same bytes.
    let mut h = blake3::Hasher::new();
    for field in std::iter::once(query.query.as_str()).chain(gold) {
        h.update(&(field.len() as u64).to_le_bytes());
        h.update(field.as_bytes());
    }
    h.finalize().to_hex()[..16].to_owned()
}

/// The BM25 settings an evaluation ran with, as resolved against the index: a run can be
/// repeated from its report.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Bm25Settings {
    /// What BM25 scores as one document.
    pub unit: Bm25Unit,
    /// The field weights ([`crate::FIELDS`] order) for each kind of skill in the index: the
    /// kind's defaults, or the same override for every kind.
    pub field_weights: std::collections::BTreeMap<skg_model::SkillKind, [f32; 6]>,
    /// The weights set for the run (`--field-weights`), for every skill; `None`: each kind's
    /// defaults. Recorded apart from the map so an index without skills still shows it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub field_weights_override: Option<[f32; 6]>,
    /// Weight of `when_not_to_use` matches subtracted.
    pub negative_weight: f32,
    /// Candidates each ranking contributes to the fusion.
    pub pool: usize,
    /// Query terms scored (the rarest; 0: all).
    pub max_terms: usize,
}

impl Bm25Settings {
    /// The settings `options` give over `index`.
    pub fn of(index: &Index, options: &EvalOptions) -> Bm25Settings {
        Bm25Settings {
            unit: options.bm25_unit,
            field_weights: index
                .field_weights(options.bm25_unit, options.field_weights.map(FieldWeights))
                .into_iter()
                .map(|(k, w)| (k, w.0))
                .collect(),
            field_weights_override: options.field_weights,
            negative_weight: options.negative_weight,
            pool: options.pool,
            max_terms: options.max_terms,
        }
    }
}

/// What `skg eval` reports.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct EvalReport {
    /// Queries read.
    pub queries: usize,
    /// The index revision measured.
    pub index_revision: String,
    /// Quarantined skills counted as routable.
    pub include_quarantined: bool,
    /// Skills counted as the bundle.
    pub bundle_k: usize,
    /// Every routable skill's `SKILL.md` tokens.
    pub catalog_tokens: u64,
    /// Every routable skill's name and description tokens.
    pub listing_tokens: u64,
    /// Gold ids that name no skill of the index.
    pub gold_unresolved: usize,
    /// Queries none of whose gold ids resolved.
    pub queries_without_gold: usize,
    /// Distinct gold skills the quarantine removes.
    pub gold_skills_quarantined: usize,
    /// Queries whose every gold skill is quarantined.
    pub queries_whose_gold_is_all_quarantined: usize,
    /// The lexical side's settings (each mode reports its fusion).
    pub bm25: Bm25Settings,
    /// Per mode.
    pub modes: Vec<ModeReport>,
    /// The unresolved gold ids, sorted.
    #[serde(skip)]
    pub unresolved: BTreeSet<String>,
}

/// The metrics table of every mode (and, with `per_query`, each query's rank of its first gold
/// skill), as `skg eval` prints them.
impl std::fmt::Display for EvalReport {
    fn fmt(&self, o: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        for g in self.unresolved.iter().take(5) {
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
        for r in &self.modes {
            let m = &r.metrics;
            writeln!(
                o,
                "{:<8} {:>6.3} {:>6.3} {:>6.3} {:>6.3} {:>7.3} {:>7.3} {:>6.3} {:>6.3} {:>6.3} {:>6.3} {:>8.2} {:>8.2} {:>8.2} {:>9.0} {:>7.1}%",
                r.mode,
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
        for r in self.modes.iter().filter(|r| !r.per_query.is_empty()) {
            writeln!(o, "\n{:?}: rank of the first gold skill per query", r.mode)?;
            for q in &r.per_query {
                let rank = q.rank.map_or_else(|| "-".to_owned(), |r| r.to_string());
                writeln!(o, "  {rank:>4}  {}", q.key)?;
            }
        }
        Ok(())
    }
}

/// Query embedding for the dense and hybrid modes (the binary plugs the model in).
pub type EmbedFn<'a> = dyn FnMut(&str) -> std::result::Result<QueryEmbedding, String> + 'a;

/// A query's embedding: its vector and, when the embedder gives them, its tokens' states (the
/// second stage's evidence, [`crate::Late`]; empty: no second stage).
#[derive(Debug, Clone, PartialEq, Default)]
pub struct QueryEmbedding {
    /// The L2-normalized vector.
    pub vector: Vec<f32>,
    /// The token states, the vector's dimension a token.
    pub tokens: Vec<f32>,
}

impl From<Vec<f32>> for QueryEmbedding {
    /// A vector without token states.
    fn from(vector: Vec<f32>) -> Self {
        QueryEmbedding {
            vector,
            tokens: Vec::new(),
        }
    }
}

/// The keys of the index's skills (by path, and by a name only one skill has).
pub fn skill_keys(index: &Index) -> SkillKeys {
    SkillKeys::new(
        index
            .skills
            .iter()
            .map(|s| (s.registry.as_str(), s.path.as_str(), s.name.as_str())),
        &index.manifest.sources,
    )
}

/// Resolves the queries' gold and acceptable ids (copies folded onto their canonical); returns
/// the gold ids that name no skill too.
pub(crate) fn judge_all(index: &Index, queries: &[JudgedQuery]) -> (Vec<Judged>, BTreeSet<String>) {
    let keys = skill_keys(index);
    let resolve = |id: &str| -> Option<u32> {
        let i = u32::try_from(keys.resolve(id)?).ok()?;
        Some(
            index.skills[i as usize]
                .alias_of
                .as_ref()
                .and_then(|c| index.skill(c.as_str()))
                .map_or(i, |(c, _)| c),
        )
    };
    let mut unresolved = BTreeSet::new();
    let judged = queries
        .iter()
        .map(|q| {
            let mut j = Judged::default();
            for g in &q.gold {
                match resolve(g) {
                    Some(i) => {
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
    (judged, unresolved)
}

/// Runs every query in every mode of `options` and measures it. `embed` is called once per
/// query in the dense and hybrid modes (its time counts in the latency).
pub fn evaluate(
    index: &Index,
    queries: &[JudgedQuery],
    options: &EvalOptions,
    embed: &mut EmbedFn<'_>,
) -> Result<EvalReport> {
    let (judged, unresolved) = judge_all(index, queries);
    let quarantined = |i: &u32| index.skills[*i as usize].quarantined;
    let gold_skills_quarantined = judged
        .iter()
        .flat_map(|j| j.gold.iter().copied())
        .filter(quarantined)
        .collect::<BTreeSet<u32>>()
        .len();
    // The whole catalog: every routable skill's SKILL.md (what the bundle is a part of); the
    // listing: every routable skill's name and description (what agents are handed each turn).
    let routable = || {
        index.skills.iter().filter(|s| {
            s.routable() || (options.include_quarantined && s.alias_of.is_none() && !s.r#unsafe)
        })
    };
    let catalog_tokens: u64 = routable().map(|s| u64::from(s.tokens)).sum();
    let listing_tokens: u64 = routable()
        .map(|s| ((s.name.len() + s.description.len() + 4) as u64).div_ceil(4))
        .sum();
    // What each query's rank was judged against, once for every mode.
    let digests: Vec<String> = if options.per_query {
        queries.iter().map(judged_digest).collect()
    } else {
        Vec::new()
    };
    let mut modes = Vec::new();
    for &mode in &options.modes {
        let mut report = run_mode(index, queries, &judged, &digests, mode, options, embed)?;
        report.catalog_tokens = catalog_tokens;
        report.listing_tokens = listing_tokens;
        report.token_reduction = if catalog_tokens > 0 {
            1.0 - report.mean_bundle_tokens / catalog_tokens as f64
        } else {
            0.0
        };
        modes.push(report);
    }
    Ok(EvalReport {
        queries: queries.len(),
        index_revision: index.manifest.content_hash.clone(),
        include_quarantined: options.include_quarantined,
        bundle_k: options.bundle_k,
        catalog_tokens,
        listing_tokens,
        gold_unresolved: unresolved.len(),
        queries_without_gold: judged.iter().filter(|j| j.gold.is_empty()).count(),
        gold_skills_quarantined,
        queries_whose_gold_is_all_quarantined: judged
            .iter()
            .filter(|j| !j.gold.is_empty() && j.gold.iter().all(quarantined))
            .count(),
        bm25: Bm25Settings::of(index, options),
        modes,
        unresolved,
    })
}

/// One judged query's first-stage candidates with each signal's score (`skg eval
/// --candidates`): the data a study of the fusion, or of a second stage, starts from.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct CandidateRecord {
    /// The query's id, when it has one.
    pub id: Option<String>,
    /// The task.
    pub query: String,
    /// Gold skills, as skill ids (copies folded onto their canonical).
    pub gold: Vec<String>,
    /// Acceptable answers, as skill ids.
    pub acceptable: Vec<String>,
    /// The mode ranked (hybrid when the index has vectors, else BM25).
    pub mode: Mode,
    /// BM25's weight in the fusion (hybrid).
    pub bm25_weight: Option<f32>,
    /// The analyzed query terms.
    pub terms: usize,
    /// Every candidate the fusion scored — the union of each ranking's best `pool` —, best
    /// first.
    pub candidates: Vec<CandidateScores>,
}

/// One candidate of a [`CandidateRecord`].
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct CandidateScores {
    /// Skill id.
    pub skill: String,
    /// The fused score the ranking sorts by.
    pub score: f32,
    /// The skill's own BM25 score (0 when BM25 did not gather it).
    pub bm25: f32,
    /// The BM25 score the fusion counted (at least BM25's cut: see [`crate::Fusion::Linear`]).
    pub bm25_counted: f32,
    /// Its best cosine with the query (0 without vectors).
    pub cosine: f32,
    /// Late interaction with its card, when the second stage scored it (the first
    /// [`crate::Late::depth`]; the candidates are then in the second stage's order).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub late: Option<f32>,
}

/// Every judged query's candidates as `options` ranks them ([`CandidateRecord`]), in query
/// order. The pool is `options.pool`; every candidate of the union is returned (up to twice
/// the pool — over a catalog of both kinds, whose lanes each bring their own pools, the best
/// twice the pool), in the order [`evaluate`]'s hybrid ranking gives its first ten.
pub fn candidate_records(
    index: &Index,
    queries: &[JudgedQuery],
    options: &EvalOptions,
    embed: &mut EmbedFn<'_>,
) -> Result<Vec<CandidateRecord>> {
    let (judged, _) = judge_all(index, queries);
    let id = |s: &u32| index.skills[*s as usize].id.to_string();
    let mode = if index.dim() > 0 {
        Mode::Hybrid
    } else {
        Mode::Bm25
    };
    let mut out = Vec::with_capacity(queries.len());
    for (q, j) in queries.iter().zip(&judged) {
        let vector = query_vector(index, mode, &q.query, embed)?;
        let mut query = options.query(&q.query, vector.as_ref(), mode, options.pool.max(1));
        // More hits asked for, the same pool: BM25 gathers more, but its cut stays the pool's
        // (see `Cut`), so the fused scores and their order are those of a ten-hit query.
        query.k = query.pool * 2;
        let answer = index.search(&query)?;
        out.push(CandidateRecord {
            id: q.id.clone(),
            query: q.query.clone(),
            gold: j.gold.iter().map(id).collect(),
            acceptable: j.acceptable.iter().map(id).collect(),
            mode: answer.mode,
            bm25_weight: answer.bm25_weight,
            terms: answer.terms.len(),
            candidates: answer
                .hits
                .iter()
                .map(|h| CandidateScores {
                    skill: id(&h.skill),
                    score: h.score,
                    bm25: h.bm25,
                    bm25_counted: h.bm25_counted,
                    cosine: h.dense,
                    late: h.late,
                })
                .collect(),
        });
    }
    Ok(out)
}

/// One mode over every query (token totals filled in by the caller).
fn run_mode(
    index: &Index,
    queries: &[JudgedQuery],
    judged: &[Judged],
    digests: &[String],
    mode: Mode,
    options: &EvalOptions,
    embed: &mut EmbedFn<'_>,
) -> Result<ModeReport> {
    let mut outcomes = Vec::with_capacity(queries.len());
    let mut ms = Vec::with_capacity(queries.len());
    let mut bundle_tokens = 0u64;
    let mut per_query = Vec::new();
    for (i, (q, j)) in queries.iter().zip(judged).enumerate() {
        let t = Instant::now();
        let vector = query_vector(index, mode, &q.query, embed)?;
        let answer = index.search(&options.query(&q.query, vector.as_ref(), mode, 10))?;
        ms.push(t.elapsed().as_secs_f64() * 1000.0);
        let ranking: Vec<u32> = answer.hits.iter().map(|h| h.skill).collect();
        bundle_tokens += ranking
            .iter()
            .take(options.bundle_k)
            .map(|&s| u64::from(index.skills[s as usize].tokens))
            .sum::<u64>();
        let o = judge(&ranking, j);
        if options.per_query {
            per_query.push(QueryRank {
                key: q.id.clone().unwrap_or_else(|| q.query.clone()),
                rank: o.first_gold,
                judged: digests.get(i).cloned(),
            });
        }
        outcomes.push(o);
    }
    Ok(ModeReport {
        mode,
        fusion: (mode == Mode::Hybrid).then_some(options.fusion),
        metrics: summarize(&outcomes),
        latency_ms: Latency::of(ms),
        mean_bundle_tokens: bundle_tokens as f64 / queries.len().max(1) as f64,
        catalog_tokens: 0,
        listing_tokens: 0,
        token_reduction: 0.0,
        per_query,
    })
}

/// Example requests (judged queries whose gold skills served them) as `(position of the gold
/// skill's L0 document in documents, request text)`, and how many gold ids named no skill.
pub fn resolve_examples(
    examples: &[JudgedQuery],
    skills: &[Skill],
    documents: &[Document],
    registries: &[RegistryInput],
) -> (Vec<(usize, String)>, usize) {
    let keys = SkillKeys::of_skills(skills, registries);
    let l0: std::collections::HashMap<&str, usize> = documents
        .iter()
        .enumerate()
        .filter(|(_, d)| d.level == Level::L0)
        .map(|(i, d)| (d.skill.as_str(), i))
        .collect();
    let mut out = Vec::new();
    let mut unresolved = 0usize;
    for q in examples {
        for g in &q.gold {
            match keys.resolve(g).and_then(|i| l0.get(skills[i].id.as_str())) {
                Some(&doc) => out.push((doc, q.query.clone())),
                None => unresolved += 1,
            }
        }
    }
    (out, unresolved)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    #[expect(
        clippy::float_cmp,
        reason = "percentiles are samples, not computed values"
    )]
    fn latency_is_the_nearest_rank() {
        // 1..=100 ms: p50 is the 50th smallest, p95 the 95th, p99 the 99th.
        let l = Latency::of((1..=100).rev().map(f64::from).collect());
        assert_eq!((l.p50, l.p95, l.p99), (50.0, 95.0, 99.0));
        assert!((l.mean - 50.5).abs() < 1e-12);
        // Three samples: ⌈0.5·3⌉ = 2nd, ⌈0.95·3⌉ = 3rd.
        let l = Latency::of(vec![3.0, 1.0, 2.0]);
        assert_eq!((l.p50, l.p95), (2.0, 3.0));
        assert_eq!(Latency::of(Vec::new()).p99, 0.0);
    }

    #[test]
    fn the_judged_digest_reads_the_text_and_the_gold_set() {
        let q = |text: &str, gold: &[&str], acceptable: &[&str]| JudgedQuery {
            id: Some("q1".to_owned()),
            query: text.to_owned(),
            gold: gold.iter().map(|g| (*g).to_owned()).collect(),
            acceptable: acceptable.iter().map(|g| (*g).to_owned()).collect(),
        };
        let d = judged_digest(&q("deploy a site", &["a/x", "b/y"], &[]));
        assert_eq!(d.len(), 16);
        assert!(d.chars().all(|c| c.is_ascii_hexdigit()));
        // The gold is a set: its order and repeats do not change what was judged, nor do the
        // acceptable answers, which do not move the rank of the first gold skill.
        assert_eq!(
            d,
            judged_digest(&q("deploy a site", &["b/y", "a/x", "a/x"], &["c/z"]))
        );
        // Another text, another gold, or the same bytes split otherwise are other judgments.
        assert_ne!(
            d,
            judged_digest(&q("deploy a website", &["a/x", "b/y"], &[]))
        );
        assert_ne!(d, judged_digest(&q("deploy a site", &["a/x"], &[])));
        assert_ne!(
            judged_digest(&q("ab", &["c"], &[])),
            judged_digest(&q("a", &["bc"], &[]))
        );
        assert_ne!(
            judged_digest(&q("a\0b", &["c"], &[])),
            judged_digest(&q("a", &["b", "c"], &[]))
        );
    }
}
