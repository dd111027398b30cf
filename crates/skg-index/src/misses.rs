//! Why queries miss: every judged query whose gold skill is not ranked first, put in one class
//! by what the rankings show (the failure analysis docs/retrieval.md keeps current).

use std::collections::{BTreeMap, HashMap};

use serde::Serialize;
use skg_model::Level;

use crate::{EmbedFn, EvalOptions, Index, Judged, JudgedQuery, Mode, Result, judged::judge_all};

/// How deep each ranking is read.
pub const DEPTH: usize = 50;
/// Cosine of two skills' abstracts at or above which one is a sibling card of the other.
pub const SIBLING_COSINE: f32 = 0.9;

/// Why a query's gold skill is not first in the fused ranking (the first class that applies).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum MissClass {
    /// Every gold skill is quarantined (and the quarantine is on).
    GoldQuarantined,
    /// No gold skill in the first 50 of BM25 nor of dense: retrieval never saw it.
    NeverACandidate,
    /// A gold skill in one ranking's first 10, not in the fused first 10.
    LostInFusion,
    /// The first hit is a sibling of a gold skill: the same name, or an abstract this close
    /// (cosine ≥ 0.9) — a near-copy canonicalize did not merge.
    SiblingAbove,
    /// The first hit is one of the query's acceptable answers: the query has several.
    AcceptableAbove,
    /// A candidate, ranked below other skills.
    RankedLow,
}

/// One query that missed.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Miss {
    /// The query's id, or its text.
    pub query: String,
    /// Its class.
    pub class: MissClass,
    /// Rank (from 1, within [`DEPTH`]) of the first gold skill in BM25, dense and the fusion.
    pub ranks: [Option<usize>; 3],
    /// The fused ranking's first three skills.
    pub top: Vec<String>,
}

/// The misses of every query, and their counts by class: for hit@1 misses and, among them, the
/// hit@5 misses.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct MissReport {
    /// Queries judged.
    pub queries: usize,
    /// Every miss.
    pub misses: Vec<Miss>,
    /// Misses by class (hit@1 missed).
    pub by_class: BTreeMap<MissClass, usize>,
    /// Misses by class whose gold is not in the first 5 either.
    pub by_class_outside_5: BTreeMap<MissClass, usize>,
}

/// Ranks every query in BM25, dense and the fusion (to [`DEPTH`]) and classifies the misses.
pub fn misses(
    index: &Index,
    queries: &[JudgedQuery],
    options: &EvalOptions,
    embed: &mut EmbedFn<'_>,
) -> Result<MissReport> {
    let (judged, _) = judge_all(index, queries);
    let l0: HashMap<u32, u32> = index
        .docs
        .iter()
        .enumerate()
        .filter(|(_, d)| d.level == Level::L0)
        .map(|(i, d)| (d.skill, u32::try_from(i).unwrap_or(u32::MAX)))
        .collect();
    let mut misses = Vec::new();
    for (q, j) in queries.iter().zip(&judged) {
        if j.gold.is_empty() {
            continue;
        }
        let vector = if index.dim() > 0 {
            Some(embed(&q.query).map_err(crate::Error::Embed)?)
        } else {
            None
        };
        let ranking = |mode: Mode| -> Result<Vec<u32>> {
            let query = options.query(&q.query, vector.as_ref(), mode, DEPTH);
            Ok(index.search(&query)?.hits.iter().map(|h| h.skill).collect())
        };
        let bm25 = ranking(Mode::Bm25)?;
        let dense = if vector.is_some() {
            ranking(Mode::Dense)?
        } else {
            Vec::new()
        };
        let hybrid = ranking(Mode::Hybrid)?;
        let first_gold = |r: &[u32]| r.iter().position(|s| j.gold.contains(s)).map(|p| p + 1);
        let ranks = [first_gold(&bm25), first_gold(&dense), first_gold(&hybrid)];
        if ranks[2] == Some(1) {
            continue;
        }
        let class = classify(index, j, ranks, hybrid.first().copied(), &l0, options);
        misses.push(Miss {
            query: q.id.clone().unwrap_or_else(|| q.query.clone()),
            class,
            ranks,
            top: hybrid
                .iter()
                .take(3)
                .map(|&s| index.skills[s as usize].id.to_string())
                .collect(),
        });
    }
    let mut by_class = BTreeMap::new();
    let mut by_class_outside_5 = BTreeMap::new();
    for m in &misses {
        *by_class.entry(m.class).or_default() += 1;
        if m.ranks[2].is_none_or(|r| r > 5) {
            *by_class_outside_5.entry(m.class).or_default() += 1;
        }
    }
    Ok(MissReport {
        queries: queries.len(),
        misses,
        by_class,
        by_class_outside_5,
    })
}

fn classify(
    index: &Index,
    j: &Judged,
    [bm25, dense, hybrid]: [Option<usize>; 3],
    first: Option<u32>,
    l0: &HashMap<u32, u32>,
    options: &EvalOptions,
) -> MissClass {
    let quarantined = |s: &u32| index.skills[*s as usize].quarantined;
    if !options.include_quarantined && j.gold.iter().all(quarantined) {
        return MissClass::GoldQuarantined;
    }
    if bm25.is_none() && dense.is_none() {
        return MissClass::NeverACandidate;
    }
    let top10 = |r: Option<usize>| r.is_some_and(|r| r <= 10);
    if (top10(bm25) || top10(dense)) && !top10(hybrid) {
        return MissClass::LostInFusion;
    }
    if let Some(first) = first {
        let cosine = |a: u32, b: u32| -> Option<f32> {
            let (va, vb) = (
                index.vector_of(*l0.get(&a)?)?,
                index.vector_of(*l0.get(&b)?)?,
            );
            Some(va.iter().zip(vb).map(|(x, y)| x * y).sum())
        };
        let name = |s: u32| index.skills[s as usize].name.to_lowercase();
        let sibling = j.gold.iter().any(|&g| {
            name(g) == name(first) || cosine(g, first).is_some_and(|c| c >= SIBLING_COSINE)
        });
        if sibling {
            return MissClass::SiblingAbove;
        }
        if j.acceptable.contains(&first) {
            return MissClass::AcceptableAbove;
        }
    }
    MissClass::RankedLow
}

/// The counts by class and every miss, as `skg eval --misses` prints them.
impl std::fmt::Display for MissReport {
    fn fmt(&self, o: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let total: usize = self.by_class.values().sum();
        writeln!(
            o,
            "\n{total} of {} queries miss hit@1 (ranks read to {DEPTH}):",
            self.queries
        )?;
        writeln!(
            o,
            "  {:<18} {:>7} {:>14}",
            "class", "misses", "not in top 5"
        )?;
        for (c, n) in &self.by_class {
            let out5 = self.by_class_outside_5.get(c).copied().unwrap_or(0);
            let name = serde_json::to_value(c).ok();
            let name = name.as_ref().and_then(|v| v.as_str()).unwrap_or("?");
            writeln!(o, "  {name:<18} {n:>7} {out5:>14}")?;
        }
        writeln!(
            o,
            "\n  bm25  dense hybrid  class              query → first hits"
        )?;
        let rank = |r: Option<usize>| r.map_or_else(|| "-".to_owned(), |r| r.to_string());
        for m in &self.misses {
            let name = serde_json::to_value(m.class).ok();
            let name = name.as_ref().and_then(|v| v.as_str()).unwrap_or("?");
            writeln!(
                o,
                "  {:>4} {:>6} {:>6}  {name:<18} {} → {}",
                rank(m.ranks[0]),
                rank(m.ranks[1]),
                rank(m.ranks[2]),
                m.query,
                m.top.join(", ")
            )?;
        }
        Ok(())
    }
}
