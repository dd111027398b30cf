//! Retrieval metrics over judged queries (definitions as in TREC / BEIR):
//! hit@k (a relevant skill in the first k), MRR@10, nDCG@10 with graded gains (gold 2,
//! acceptable 1), recall@k (share of the distinct gold skills in the first k).

use std::collections::BTreeSet;

use serde::Serialize;

/// The relevant skills of one query, as positions in the index (copies already folded onto
/// their canonical, so a gold set of three copies is one skill).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Judged {
    /// Gold skills.
    pub gold: BTreeSet<u32>,
    /// Acceptable (weaker) answers.
    pub acceptable: BTreeSet<u32>,
}

/// The cut-offs reported.
pub const CUTOFFS: [usize; 4] = [1, 3, 5, 10];

/// One query's outcome.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct QueryOutcome {
    /// 1-based rank of the first gold skill in the first 10, if any.
    pub first_gold: Option<usize>,
    /// hit@1/3/5/10.
    pub hit: [bool; 4],
    /// recall@1/3/5/10.
    pub recall: [f64; 4],
    /// nDCG@10.
    pub ndcg10: f64,
    /// Nothing returned.
    pub empty: bool,
}

/// 1 / the rank of the first gold skill (0 when none is in the first 10): a query's MRR@10 term.
pub(crate) fn reciprocal_rank(first_gold: Option<usize>) -> f64 {
    first_gold.map_or(0.0, |r| 1.0 / r as f64)
}

/// Whether the first gold skill is in the first `k`.
pub(crate) fn hit_at(first_gold: Option<usize>, k: usize) -> bool {
    first_gold.is_some_and(|r| r <= k)
}

/// The nearest-rank percentile of sorted values: the ⌈p·n⌉-th smallest, `per_mille` = 1,000 · p
/// (0 without values).
pub(crate) fn nearest_rank(sorted: &[f64], per_mille: usize) -> f64 {
    if sorted.is_empty() {
        return 0.0;
    }
    sorted[(per_mille * sorted.len())
        .div_ceil(1000)
        .clamp(1, sorted.len())
        - 1]
}

/// Judges a ranking (skill positions, best first).
pub fn judge(ranking: &[u32], j: &Judged) -> QueryOutcome {
    let top: Vec<u32> = ranking.iter().take(10).copied().collect();
    let first_gold = top.iter().position(|s| j.gold.contains(s)).map(|p| p + 1);
    let hit = CUTOFFS.map(|k| hit_at(first_gold, k));
    let recall = CUTOFFS.map(|k| {
        if j.gold.is_empty() {
            return 0.0;
        }
        let found = top.iter().take(k).filter(|s| j.gold.contains(s)).count();
        found as f64 / j.gold.len() as f64
    });
    let gain = |s: &u32| -> f64 {
        if j.gold.contains(s) {
            2.0
        } else if j.acceptable.contains(s) {
            1.0
        } else {
            0.0
        }
    };
    let dcg: f64 = top
        .iter()
        .enumerate()
        .map(|(i, s)| (2f64.powf(gain(s)) - 1.0) / ((i + 2) as f64).log2())
        .sum();
    let mut ideal: Vec<f64> = j
        .gold
        .iter()
        .map(|_| 2.0)
        .chain(
            j.acceptable
                .iter()
                .filter(|s| !j.gold.contains(s))
                .map(|_| 1.0),
        )
        .collect();
    ideal.truncate(10);
    let idcg: f64 = ideal
        .iter()
        .enumerate()
        .map(|(i, g)| (2f64.powf(*g) - 1.0) / ((i + 2) as f64).log2())
        .sum();
    QueryOutcome {
        first_gold,
        hit,
        recall,
        ndcg10: if idcg > 0.0 { dcg / idcg } else { 0.0 },
        empty: ranking.is_empty(),
    }
}

/// Mean metrics over queries.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Metrics {
    /// Queries judged.
    pub queries: usize,
    /// hit@1, hit@3, hit@5, hit@10.
    pub hit: [f64; 4],
    /// MRR@10.
    pub mrr10: f64,
    /// nDCG@10.
    pub ndcg10: f64,
    /// recall@1, 3, 5, 10.
    pub recall: [f64; 4],
    /// Queries with an empty answer.
    pub empty: usize,
}

/// Averages outcomes.
pub fn summarize(outcomes: &[QueryOutcome]) -> Metrics {
    let n = outcomes.len().max(1) as f64;
    let mean = |f: &dyn Fn(&QueryOutcome) -> f64| outcomes.iter().map(f).sum::<f64>() / n;
    Metrics {
        queries: outcomes.len(),
        hit: [0, 1, 2, 3].map(|i| mean(&|o| f64::from(u8::from(o.hit[i])))),
        mrr10: mean(&|o| reciprocal_rank(o.first_gold)),
        ndcg10: mean(&|o| o.ndcg10),
        recall: [0, 1, 2, 3].map(|i| mean(&|o| o.recall[i])),
        empty: outcomes.iter().filter(|o| o.empty).count(),
    }
}
