//! Paired comparison of two evaluations of the same judged queries (`skg eval --compare`):
//! for each mode and each rank metric (hit@1/3/5/10, MRR@10), the difference of the means, a
//! paired bootstrap 95 % interval of it, and a two-sided p-value — the exact McNemar test for
//! the hit rates, the paired randomization (sign-flip) test for MRR@10 — with the queries won and
//! lost. On 70 queries a single query moves hit@k by 1.4 points; this says which differences a
//! set that small can tell from chance.
//!
//! Only the rank of each query's first gold skill in the first 10 is needed, which is what
//! `skg eval --per-query --format json` records, so an evaluation saved once can be compared with
//! any later one. Resampling uses a fixed seed: the same two evaluations give the same figures.

use std::collections::BTreeMap;

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use serde::{Deserialize, Serialize};

use crate::eval::{CUTOFFS, hit_at, nearest_rank, reciprocal_rank};
use crate::judged::QueryRank;
use crate::search::Mode;

/// Bootstrap and randomization resamples.
pub const RESAMPLES: usize = 10_000;

/// The resampling seed.
const SEED: u64 = 0x0073_6b67_5f63_6d70; // "skg_cmp"

/// Nonzero differences up to which the randomization test enumerates every sign assignment
/// (2^20 ≈ 10^6 cheap sums); above it, [`RESAMPLES`] random ones.
const EXACT_UP_TO: usize = 20;

/// Moved queries printed each way (up, down), the largest moves first.
const SHOWN: usize = 12;

/// Characters of a query's text printed when it has no id.
const QUERY_CHARS: usize = 40;

/// A saved evaluation, as `skg eval --per-query --format json` writes it (other fields ignored).
#[derive(Debug, Clone, Deserialize)]
pub struct RecordedEval {
    /// The index revision it measured.
    #[serde(default)]
    pub index_revision: String,
    /// Whether it routed quarantined skills (absent in files that do not say).
    #[serde(default)]
    pub include_quarantined: Option<bool>,
    /// Per mode.
    pub modes: Vec<RecordedMode>,
}

/// One mode of a saved evaluation.
#[derive(Debug, Clone, Deserialize)]
pub struct RecordedMode {
    /// The mode.
    pub mode: Mode,
    /// Each query's rank of its first gold skill in the first 10.
    #[serde(default)]
    pub per_query: Vec<QueryRank>,
}

/// One metric compared.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct MetricComparison {
    /// `hit@1`, `hit@3`, `hit@5`, `hit@10` or `MRR@10`.
    pub metric: String,
    /// Mean before, over the paired queries.
    pub before: f64,
    /// Mean after.
    pub after: f64,
    /// after − before.
    pub delta: f64,
    /// Paired bootstrap 95 % percentile interval of `delta`.
    pub ci95: [f64; 2],
    /// Two-sided p-value of "no difference".
    pub p_value: f64,
    /// The test behind `p_value`.
    pub test: Test,
    /// Queries whose value went up.
    pub wins: usize,
    /// Queries whose value went down.
    pub losses: usize,
}

/// Which test gave a p-value.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Test {
    /// Exact McNemar (a hit rate).
    McnemarExact,
    /// Paired randomization over every sign assignment.
    RandomizationExact,
    /// Paired randomization over [`RESAMPLES`] random sign assignments.
    RandomizationSampled,
}

/// A query whose first gold rank changed.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Moved {
    /// Query id or text.
    pub query: String,
    /// Rank before (None: not in the first 10).
    pub before: Option<usize>,
    /// Rank after.
    pub after: Option<usize>,
}

/// One mode compared.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ModeComparison {
    /// The mode.
    pub mode: Mode,
    /// Queries in both evaluations.
    pub paired: usize,
    /// Queries only in the earlier one.
    pub only_before: usize,
    /// Queries whose id (or text) repeats an earlier one's in the later evaluation: paired by
    /// occurrence, and a repeated query moves with its twin, so it counts twice in the tests.
    pub repeated: usize,
    /// Queries only in the later one.
    pub only_after: usize,
    /// Queries under one key whose text or gold differs between the two (their
    /// [`QueryRank::judged`] digests): two questions, not compared.
    pub changed: usize,
    /// Paired queries the earlier file has no digest for (saved before it was recorded): paired
    /// by key alone.
    pub unverified: usize,
    /// hit@1, hit@3, hit@5, hit@10, MRR@10.
    pub metrics: Vec<MetricComparison>,
    /// Queries whose rank changed, the largest gains first, then the largest losses last.
    pub moved: Vec<Moved>,
}

/// Every mode both evaluations measured.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Comparison {
    /// The earlier evaluation's index revision.
    pub before_revision: String,
    /// Resamples behind each interval and sampled p-value.
    pub resamples: usize,
    /// Per mode with paired queries, in the later evaluation's order.
    pub modes: Vec<ModeComparison>,
    /// Modes both measured whose queries did not pair (other ids, or no per-query ranks saved).
    pub unpaired_modes: Vec<Mode>,
    /// Queries of those modes kept under their id with another text or gold (per mode, summed).
    pub unpaired_changed: usize,
    /// Modes only the earlier evaluation measured.
    pub modes_only_before: Vec<Mode>,
    /// Modes only the later evaluation measured.
    pub modes_only_after: Vec<Mode>,
}

/// A metric that got worse beyond chance (`skg eval --compare … --fail-if-worse ALPHA`).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Regression {
    /// The mode.
    pub mode: Mode,
    /// The metric.
    pub metric: String,
    /// after − before (negative).
    pub delta: f64,
    /// Its p-value.
    pub p_value: f64,
    /// Its p-value adjusted by Holm's step-down over every metric of every mode compared.
    pub p_holm: f64,
}

impl Comparison {
    /// The metrics that got worse with a Holm-adjusted p-value at most `alpha`: the run prints
    /// 5 metrics per mode, so an unadjusted 0.05 would flag a change that did nothing more than
    /// one time in twenty per metric. Holm (step-down Bonferroni) holds the chance of any false
    /// flag at `alpha` whatever the metrics' dependence.
    pub fn regressions(&self, alpha: f64) -> Vec<Regression> {
        let all: Vec<(Mode, &MetricComparison)> = self
            .modes
            .iter()
            .flat_map(|m| m.metrics.iter().map(move |c| (m.mode, c)))
            .collect();
        let adjusted = holm(&all.iter().map(|(_, c)| c.p_value).collect::<Vec<_>>());
        all.iter()
            .zip(adjusted)
            .filter(|((_, c), p)| c.delta < 0.0 && *p <= alpha)
            .map(|((mode, c), p_holm)| Regression {
                mode: *mode,
                metric: c.metric.clone(),
                delta: c.delta,
                p_value: c.p_value,
                p_holm,
            })
            .collect()
    }
}

/// Holm's step-down adjusted p-values, in the input's order: sorted ascending, the i-th (from 0)
/// of m is min(1, max over j ≤ i of (m − j) · p_(j)).
pub fn holm(p: &[f64]) -> Vec<f64> {
    let m = p.len();
    let mut order: Vec<usize> = (0..m).collect();
    order.sort_by(|a, b| p[*a].total_cmp(&p[*b]).then(a.cmp(b)));
    let mut out = vec![1.0; m];
    let mut running = 0.0f64;
    for (j, &i) in order.iter().enumerate() {
        running = running.max(((m - j) as f64 * p[i]).min(1.0));
        out[i] = running;
    }
    out
}

/// A hit as a number (1 or 0), so hit rates average like MRR.
fn hit(rank: Option<usize>, k: usize) -> f64 {
    f64::from(u8::from(hit_at(rank, k)))
}

/// One evaluation's ranks, one per query.
pub type Ranks<'a> = &'a [QueryRank];

/// Compares two evaluations' per-query ranks mode by mode. Queries are paired by id (or text,
/// then occurrence) when both judged the same text against the same gold (their digests; a file
/// without them pairs by key alone): compare evaluations of the same query file. The unpaired
/// and the changed queries are counted, not compared; modes measured by one side only, or with no paired query, are listed,
/// not compared (`modes` may then be empty: the caller says so).
pub fn compare(before: &RecordedEval, after: &[(Mode, Ranks<'_>)]) -> Comparison {
    let mut c = Comparison {
        before_revision: before.index_revision.clone(),
        resamples: RESAMPLES,
        modes: Vec::new(),
        unpaired_modes: Vec::new(),
        unpaired_changed: 0,
        modes_only_before: before
            .modes
            .iter()
            .map(|m| m.mode)
            .filter(|m| !after.iter().any(|(a, _)| a == m))
            .collect(),
        modes_only_after: Vec::new(),
    };
    for (mode, ranks) in after {
        match before.modes.iter().find(|m| m.mode == *mode) {
            None => c.modes_only_after.push(*mode),
            Some(earlier) => {
                let m = compare_mode(*mode, &earlier.per_query, ranks);
                if m.paired == 0 {
                    c.unpaired_modes.push(*mode);
                    c.unpaired_changed += m.changed;
                } else {
                    c.modes.push(m);
                }
            }
        }
    }
    c
}

/// A metric's name, its per-query (before, after) values, and whether it is a hit rate.
type MetricValues = (String, Vec<(f64, f64)>, bool);

fn compare_mode(mode: Mode, before: Ranks<'_>, after: Ranks<'_>) -> ModeComparison {
    // Keyed by (id or text, occurrence): a query text asked twice is two queries.
    fn keyed(ranks: Ranks<'_>) -> BTreeMap<(&str, usize), &QueryRank> {
        let mut seen: BTreeMap<&str, usize> = BTreeMap::new();
        ranks
            .iter()
            .map(|q| {
                let n = seen.entry(q.key.as_str()).or_default();
                *n += 1;
                ((q.key.as_str(), *n), q)
            })
            .collect()
    }
    let (earlier, later) = (keyed(before), keyed(after));
    let (mut changed, mut unverified) = (0, 0);
    let mut pairs: Vec<(&str, Option<usize>, Option<usize>)> = Vec::new();
    for (k, a) in &later {
        let Some(b) = earlier.get(k) else { continue };
        match (&b.judged, &a.judged) {
            (Some(x), Some(y)) if x != y => changed += 1,
            (Some(_), Some(_)) => pairs.push((k.0, b.rank, a.rank)),
            _ => {
                unverified += 1;
                pairs.push((k.0, b.rank, a.rank));
            }
        }
    }
    // (name, per-query (before, after), a hit rate?): hit@1/3/5/10, then MRR@10.
    let mut values: Vec<MetricValues> = CUTOFFS
        .iter()
        .map(|&k| {
            let v = pairs
                .iter()
                .map(|(_, b, a)| (hit(*b, k), hit(*a, k)))
                .collect();
            (format!("hit@{k}"), v, true)
        })
        .collect();
    values.push((
        "MRR@10".to_owned(),
        pairs
            .iter()
            .map(|(_, b, a)| (reciprocal_rank(*b), reciprocal_rank(*a)))
            .collect(),
        false,
    ));
    let diffs: Vec<Vec<f64>> = values
        .iter()
        .map(|(_, v, _)| v.iter().map(|(b, a)| a - b).collect())
        .collect();
    // One set of resamples for every metric of the mode.
    let intervals = bootstrap_ci95(&diffs);
    let metrics: Vec<MetricComparison> = values
        .into_iter()
        .zip(diffs)
        .zip(intervals)
        .map(|(((name, v, binary), d), ci95)| metric(name, &v, &d, binary, ci95))
        .collect();
    let mut moved: Vec<Moved> = pairs
        .iter()
        .filter(|(_, b, a)| b != a)
        .map(|(q, b, a)| Moved {
            query: (*q).to_owned(),
            before: *b,
            after: *a,
        })
        .collect();
    moved.sort_by(|x, y| {
        let gain = |m: &Moved| reciprocal_rank(m.after) - reciprocal_rank(m.before);
        gain(y)
            .total_cmp(&gain(x))
            .then_with(|| x.query.cmp(&y.query))
    });
    ModeComparison {
        mode,
        paired: pairs.len(),
        only_before: earlier.keys().filter(|q| !later.contains_key(*q)).count(),
        only_after: later.keys().filter(|q| !earlier.contains_key(*q)).count(),
        changed,
        unverified,
        repeated: later.keys().filter(|(_, n)| *n > 1).count(),
        metrics,
        moved,
    }
}

fn metric(
    name: String,
    values: &[(f64, f64)],
    diffs: &[f64],
    binary: bool,
    ci95: [f64; 2],
) -> MetricComparison {
    let n = values.len().max(1) as f64;
    let before = values.iter().map(|v| v.0).sum::<f64>() / n;
    let after = values.iter().map(|v| v.1).sum::<f64>() / n;
    let wins = diffs.iter().filter(|d| **d > 0.0).count();
    let losses = diffs.iter().filter(|d| **d < 0.0).count();
    let (p_value, test) = if binary {
        (mcnemar_exact(wins, losses), Test::McnemarExact)
    } else {
        randomization_test(diffs)
    };
    MetricComparison {
        metric: name,
        before,
        after,
        delta: after - before,
        ci95,
        p_value,
        test,
        wins,
        losses,
    }
}

/// Exact two-sided McNemar test: under "no difference" each of the `wins + losses` discordant
/// queries goes either way with probability ½, so p = min(1, 2·P(X ≤ min(wins, losses))) with
/// X ~ Binomial(wins + losses, ½).
pub fn mcnemar_exact(wins: usize, losses: usize) -> f64 {
    let n = wins + losses;
    if n == 0 {
        return 1.0;
    }
    let low = wins.min(losses);
    // The lower tail reaches the median: P(X ≤ low) ≥ ½ exactly (the sum below would round).
    if 2 * low + 1 >= n {
        return 1.0;
    }
    // C(n, i) / 2^n, summed in log space (n may be in the thousands).
    let ln_half_n = n as f64 * 0.5f64.ln();
    let mut ln_choose = 0.0f64; // ln C(n, 0)
    let mut tail = 0.0f64;
    for i in 0..=low {
        if i > 0 {
            ln_choose += ((n - i + 1) as f64).ln() - (i as f64).ln();
        }
        tail += (ln_choose + ln_half_n).exp();
    }
    (2.0 * tail).min(1.0)
}

/// Paired randomization test of the mean difference: under "no difference" each query's
/// difference is as likely negated, so p is the share of sign assignments whose mean is at
/// least as far from 0 as the observed one. Exact (every assignment of the nonzero
/// differences) up to [`EXACT_UP_TO`] of them, else [`RESAMPLES`] random assignments with
/// p = (1 + extreme) / (1 + resamples).
pub fn randomization_test(diffs: &[f64]) -> (f64, Test) {
    let nonzero: Vec<f64> = diffs.iter().copied().filter(|d| *d != 0.0).collect();
    if nonzero.is_empty() {
        return (1.0, Test::RandomizationExact);
    }
    let observed = nonzero.iter().sum::<f64>().abs();
    // Sums that equal the observed one up to rounding count as extreme.
    let tolerance = 1e-9 * nonzero.iter().map(|d| d.abs()).sum::<f64>();
    let extreme = |sum: f64| sum.abs() >= observed - tolerance;
    if nonzero.len() <= EXACT_UP_TO {
        let m = nonzero.len();
        let count = (0u32..1 << m)
            .filter(|signs| {
                let sum: f64 = nonzero
                    .iter()
                    .enumerate()
                    .map(|(i, d)| if signs >> i & 1 == 1 { -d } else { *d })
                    .sum();
                extreme(sum)
            })
            .count();
        return (
            count as f64 / f64::from(1u32 << m),
            Test::RandomizationExact,
        );
    }
    let mut rng = ChaCha8Rng::seed_from_u64(SEED);
    let count = (0..RESAMPLES)
        .filter(|_| {
            let sum: f64 = nonzero
                .iter()
                .map(|d| if rng.random::<bool>() { -d } else { *d })
                .sum();
            extreme(sum)
        })
        .count();
    (
        (1 + count) as f64 / (1 + RESAMPLES) as f64,
        Test::RandomizationSampled,
    )
}

/// One metric's value over a run's queries with its bootstrap 95 % interval (`skg eval
/// --intervals`): how far the figure of a set this size could move on other queries drawn the
/// same way.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct MetricInterval {
    /// `hit@1` … `MRR@10`.
    pub metric: String,
    /// The mean over the queries.
    pub value: f64,
    /// Bootstrap 95 % percentile interval of the mean ([`RESAMPLES`] resamples, seeded).
    pub ci95: [f64; 2],
}

/// One mode's metrics with their intervals.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ModeIntervals {
    /// The mode.
    pub mode: Mode,
    /// Queries.
    pub queries: usize,
    /// hit@1, hit@3, hit@5, hit@10, MRR@10.
    pub metrics: Vec<MetricInterval>,
}

/// The rank metrics of one run's ranks with bootstrap 95 % intervals (one set of resamples for
/// the five).
pub fn intervals(mode: Mode, ranks: Ranks<'_>) -> ModeIntervals {
    let mut named: Vec<(String, Vec<f64>)> = CUTOFFS
        .iter()
        .map(|&k| {
            (
                format!("hit@{k}"),
                ranks.iter().map(|q| hit(q.rank, k)).collect(),
            )
        })
        .collect();
    named.push((
        "MRR@10".to_owned(),
        ranks.iter().map(|q| reciprocal_rank(q.rank)).collect(),
    ));
    let values: Vec<Vec<f64>> = named.iter().map(|(_, v)| v.clone()).collect();
    let n = ranks.len().max(1) as f64;
    ModeIntervals {
        mode,
        queries: ranks.len(),
        metrics: named
            .into_iter()
            .zip(bootstrap_ci95(&values))
            .map(|((metric, v), ci95)| MetricInterval {
                metric,
                value: v.iter().sum::<f64>() / n,
                ci95,
            })
            .collect(),
    }
}

impl std::fmt::Display for ModeIntervals {
    fn fmt(&self, o: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let cells: Vec<String> = self
            .metrics
            .iter()
            .map(|m| {
                format!(
                    "{} {:.3} [{:.3}, {:.3}]",
                    m.metric, m.value, m.ci95[0], m.ci95[1]
                )
            })
            .collect();
        write!(o, "{:<8} {}", self.mode, cells.join(" · "))
    }
}

/// Bootstrap 95 % percentile intervals of the means of several per-query columns over the same
/// queries (paired differences, or a run's values): [`RESAMPLES`] resamples of the queries with
/// replacement, each resample's query indices drawn once and every column's mean taken over
/// them; the nearest-rank 2.5th and 97.5th percentiles of those means. The interval shows the
/// size of a difference; the p-value decides whether it is one: with few changed queries a
/// percentile interval can exclude 0 while an exact test cannot reject (4 won, 0 lost of 70:
/// p 0.125).
pub fn bootstrap_ci95(diffs: &[Vec<f64>]) -> Vec<[f64; 2]> {
    let n = diffs.first().map_or(0, Vec::len);
    if n == 0 {
        return vec![[0.0, 0.0]; diffs.len()];
    }
    let mut rng = ChaCha8Rng::seed_from_u64(SEED);
    let mut means: Vec<Vec<f64>> = vec![Vec::with_capacity(RESAMPLES); diffs.len()];
    let mut sums = vec![0.0f64; diffs.len()];
    for _ in 0..RESAMPLES {
        sums.fill(0.0);
        for _ in 0..n {
            let i = rng.random_range(0..n);
            for (sum, d) in sums.iter_mut().zip(diffs) {
                *sum += d[i];
            }
        }
        for (m, sum) in means.iter_mut().zip(&sums) {
            m.push(sum / n as f64);
        }
    }
    means
        .into_iter()
        .map(|mut m| {
            m.sort_by(f64::total_cmp);
            [nearest_rank(&m, 25), nearest_rank(&m, 975)]
        })
        .collect()
}

impl std::fmt::Display for Comparison {
    fn fmt(&self, o: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let name = Mode::to_string;
        let names = |ms: &[Mode]| ms.iter().map(name).collect::<Vec<_>>().join(", ");
        writeln!(
            o,
            "\ncompared with the evaluation of index {} (paired by query; p: exact McNemar for hit@k, paired randomization for MRR@10 — p decides; the 95 % interval, a paired bootstrap of {} resamples, shows the size)",
            match self.before_revision.get(..12) {
                Some(short) => short,
                None if self.before_revision.is_empty() => "?",
                None => &self.before_revision,
            },
            self.resamples
        )?;
        for (what, modes) in [
            ("measured only before", &self.modes_only_before),
            ("measured only now", &self.modes_only_after),
            ("no query paired", &self.unpaired_modes),
        ] {
            if !modes.is_empty() {
                write!(o, "not compared ({what}): {}", names(modes))?;
                if what == "no query paired" && self.unpaired_changed > 0 {
                    write!(
                        o,
                        " ({} queries kept their id with another text or gold)",
                        self.unpaired_changed
                    )?;
                }
                writeln!(o)?;
            }
        }
        for m in &self.modes {
            write!(o, "\n{} ({} queries paired", name(&m.mode), m.paired)?;
            if m.only_before + m.only_after > 0 {
                write!(
                    o,
                    "; {} only before, {} only after: not compared",
                    m.only_before, m.only_after
                )?;
            }
            if m.changed > 0 {
                write!(
                    o,
                    "; {} asked under a kept id with another text or gold: not compared",
                    m.changed
                )?;
            }
            if m.unverified > 0 {
                write!(
                    o,
                    "; {} paired by id alone (the earlier file predates the query digest)",
                    m.unverified
                )?;
            }
            if m.repeated > 0 {
                write!(
                    o,
                    "; {} repeat an earlier query's id or text, paired by occurrence: they count twice",
                    m.repeated
                )?;
            }
            writeln!(o, ")")?;
            writeln!(
                o,
                "  {:<7} {:>7} {:>7} {:>7}  {:>17}  {:>8}  {:>4} {:>6}",
                "metric", "before", "after", "Δ", "95% interval", "p", "won", "lost"
            )?;
            for c in &m.metrics {
                let p = if c.p_value < 1e-4 {
                    "<0.0001".to_owned()
                } else {
                    format!("{:.4}", c.p_value)
                };
                // A p-value from random sign assignments is marked.
                let p = if c.test == Test::RandomizationSampled {
                    format!("{p}*")
                } else {
                    format!("{p} ")
                };
                writeln!(
                    o,
                    "  {:<7} {:>7.3} {:>7.3} {:>+7.3}  [{:>+7.3}, {:>+7.3}]  {:>8}  {:>4} {:>6}",
                    c.metric, c.before, c.after, c.delta, c.ci95[0], c.ci95[1], p, c.wins, c.losses
                )?;
            }
            if m.metrics
                .iter()
                .any(|c| c.test == Test::RandomizationSampled)
            {
                writeln!(
                    o,
                    "  * from {} random sign assignments (over {EXACT_UP_TO} changed queries)",
                    self.resamples
                )?;
            }
            let rank = |r: Option<usize>| r.map_or_else(|| "-".to_owned(), |r| r.to_string());
            // Ids are short; a query known by its text is cut.
            let item = |x: &Moved| {
                let q: String = if x.query.chars().count() > QUERY_CHARS {
                    let cut: String = x.query.chars().take(QUERY_CHARS).collect();
                    format!("\"{}…\"", cut.trim_end())
                } else {
                    x.query.clone()
                };
                format!("{q} {}→{}", rank(x.before), rank(x.after))
            };
            // `moved` runs from the largest gain to the largest loss.
            let gain = |x: &&Moved| reciprocal_rank(x.after) > reciprocal_rank(x.before);
            let gained: Vec<&Moved> = m.moved.iter().filter(gain).collect();
            let lost: Vec<&Moved> = m.moved.iter().rev().filter(|x| !gain(x)).collect();
            for (what, list) in [("up", gained), ("down", lost)] {
                if list.is_empty() {
                    continue;
                }
                let mut line: Vec<String> = list.iter().take(SHOWN).map(|x| item(x)).collect();
                if list.len() > SHOWN {
                    line.push(format!(
                        "… {} more (`--format json` lists all)",
                        list.len() - SHOWN
                    ));
                }
                writeln!(o, "  {what} ({}): {}", list.len(), line.join(", "))?;
            }
        }
        Ok(())
    }
}

#[cfg(test)]
#[expect(
    clippy::float_cmp,
    reason = "p = 1, zero differences and single-value intervals are exact by definition"
)]
mod tests {
    use super::*;

    /// A result under `key`, judged the same way in every evaluation of a test.
    fn rank(key: &str, rank: Option<usize>) -> QueryRank {
        QueryRank {
            key: key.to_owned(),
            rank,
            judged: Some(format!("digest of {key}")),
        }
    }

    fn ranks(rs: &[Option<usize>]) -> Vec<QueryRank> {
        rs.iter()
            .enumerate()
            .map(|(i, r)| rank(&format!("q{i:02}"), *r))
            .collect()
    }

    #[test]
    fn mcnemar_matches_the_binomial_by_hand() {
        // No discordant query: nothing to tell.
        assert_eq!(mcnemar_exact(0, 0), 1.0);
        // 6 wins, 0 losses: 2 · (1/2)^6 = 1/32.
        assert!((mcnemar_exact(6, 0) - 0.031_25).abs() < 1e-12);
        assert!((mcnemar_exact(0, 6) - 0.031_25).abs() < 1e-12);
        // 5 to 1: 2 · (C(6,0) + C(6,1)) / 64 = 14/64.
        assert!((mcnemar_exact(5, 1) - 14.0 / 64.0).abs() < 1e-12);
        // 3 to 3 and 2 to 3 are as even as they can be.
        assert_eq!(mcnemar_exact(3, 3), 1.0);
        assert_eq!(mcnemar_exact(2, 3), 1.0);
        // 10 to 0 in a large set: 2 / 1024.
        assert!((mcnemar_exact(10, 0) - 2.0 / 1024.0).abs() < 1e-12);
        // Thousands of discordant queries stay finite and symmetric.
        let p = mcnemar_exact(1_000, 1_100);
        assert!(p > 0.0 && p < 0.05 && (p - mcnemar_exact(1_100, 1_000)).abs() < 1e-15);
    }

    #[test]
    fn randomization_test_counts_sign_assignments() {
        // All differences zero: p = 1.
        assert_eq!(
            randomization_test(&[0.0, 0.0]),
            (1.0, Test::RandomizationExact)
        );
        // Three equal gains: only all-plus and all-minus reach |3|, 2 of 8.
        let (p, test) = randomization_test(&[0.5, 0.5, 0.5, 0.0]);
        assert!((p - 0.25).abs() < 1e-12);
        assert_eq!(test, Test::RandomizationExact);
        // +1, −1/2: sums ±1/2 and ±3/2; |sum| ≥ 1/2 always: p = 1.
        assert_eq!(randomization_test(&[1.0, -0.5]).0, 1.0);
        // +1, +1/2, +1/3: sums reaching 11/6 are the two uniform signs only: 2/8. Rounding in
        // the sums must not drop the observed assignment itself.
        assert!((randomization_test(&[1.0, 0.5, 1.0 / 3.0]).0 - 0.25).abs() < 1e-12);
        // Past the exact limit: sampled, with p ≥ 1/(1 + resamples) and the same seed each run.
        let gains = vec![1.0; 30];
        let (p, test) = randomization_test(&gains);
        assert_eq!(test, Test::RandomizationSampled);
        assert!((p - 1.0 / (1 + RESAMPLES) as f64).abs() < 1e-12, "{p}");
        let mixed: Vec<f64> = (0..40)
            .map(|i| if i % 2 == 0 { 0.5 } else { -0.5 })
            .collect();
        let (p, _) = randomization_test(&mixed);
        assert!(p > 0.9, "{p}");
        assert_eq!(randomization_test(&mixed), randomization_test(&mixed));
    }

    #[test]
    fn bootstrap_interval_brackets_the_mean() {
        // One value: every resample has it as its mean.
        assert_eq!(bootstrap_ci95(&[vec![0.25; 7]]), [[0.25, 0.25]]);
        assert_eq!(bootstrap_ci95(&[Vec::new()]), [[0.0, 0.0]]);
        // Half ones, half zeros: mean 0.5, standard error √(0.25/100) = 0.05, so the
        // interval is about 0.5 ± 0.098.
        let d: Vec<f64> = (0..100).map(|i| f64::from(u8::from(i % 2 == 0))).collect();
        let [lo, hi] = bootstrap_ci95(std::slice::from_ref(&d))[0];
        assert!(
            (lo - 0.402).abs() < 0.02 && (hi - 0.598).abs() < 0.02,
            "{lo} {hi}"
        );
        assert_eq!(bootstrap_ci95(&[d]), [[lo, hi]]);
    }

    #[test]
    fn comparison_pairs_queries_and_reads_hits_and_mrr_from_ranks() {
        // Before: q00 1st, q01 3rd, q02 none, q03 2nd; after: q00 2nd, q01 1st, q02 5th,
        // q03 2nd; q04 only after, q05 only before.
        let mut before = ranks(&[Some(1), Some(3), None, Some(2)]);
        before.push(rank("q05", Some(1)));
        let mut after = ranks(&[Some(2), Some(1), Some(5), Some(2)]);
        after.push(rank("q04", Some(1)));
        let saved = RecordedEval {
            index_revision: "abc".to_owned(),
            include_quarantined: None,
            modes: vec![
                RecordedMode {
                    mode: Mode::Hybrid,
                    per_query: before,
                },
                RecordedMode {
                    mode: Mode::Bm25,
                    per_query: Vec::new(),
                },
            ],
        };
        let c = compare(&saved, &[(Mode::Hybrid, &after), (Mode::Dense, &after)]);
        assert_eq!(c.modes.len(), 1, "dense was not measured before");
        assert_eq!(
            (
                c.modes_only_before.as_slice(),
                c.modes_only_after.as_slice()
            ),
            (&[Mode::Bm25][..], &[Mode::Dense][..])
        );
        // Queries under other ids pair with nothing: the mode is listed, not compared.
        let others = vec![rank("z1", Some(1))];
        let none = compare(&saved, &[(Mode::Hybrid, &others)]);
        assert!(none.modes.is_empty());
        assert_eq!(none.unpaired_modes, [Mode::Hybrid]);
        assert!(
            none.to_string()
                .contains("not compared (no query paired): hybrid")
        );
        let m = &c.modes[0];
        assert_eq!((m.paired, m.only_before, m.only_after), (4, 1, 1));
        let get = |name: &str| {
            m.metrics
                .iter()
                .find(|x| x.metric == name)
                .expect("every metric is compared")
        };
        // hit@1: before q00 (1/4), after q01 (1/4); one win, one loss.
        let h1 = get("hit@1");
        assert_eq!(
            (h1.before, h1.after, h1.wins, h1.losses),
            (0.25, 0.25, 1, 1)
        );
        assert_eq!(h1.p_value, 1.0);
        // hit@5: before 3 of 4, after 4 of 4; q02 is the one win.
        let h5 = get("hit@5");
        assert_eq!((h5.before, h5.after, h5.wins, h5.losses), (0.75, 1.0, 1, 0));
        assert!((h5.p_value - 1.0).abs() < 1e-12, "2 · (1/2)^1 capped at 1");
        // MRR@10: before (1 + 1/3 + 0 + 1/2)/4 = 11/24, after (1/2 + 1 + 1/5 + 1/2)/4 = 11/20.
        let mrr = get("MRR@10");
        assert!((mrr.before - 11.0 / 24.0).abs() < 1e-12);
        assert!((mrr.after - 11.0 / 20.0).abs() < 1e-12);
        assert!((mrr.delta - (11.0 / 20.0 - 11.0 / 24.0)).abs() < 1e-12);
        assert!(mrr.ci95[0] <= mrr.delta && mrr.delta <= mrr.ci95[1]);
        assert_eq!((mrr.wins, mrr.losses), (2, 1));
        // Moved, largest gain first: q01 (+2/3), q02 (+1/5), q00 (−1/2); q03 did not move.
        let order: Vec<&str> = m.moved.iter().map(|x| x.query.as_str()).collect();
        assert_eq!(order, ["q01", "q02", "q00"]);
        let text = c.to_string();
        assert!(text.contains("up (2): q01 3→1, q02 -→5"), "{text}");
        assert!(text.contains("down (1): q00 1→2"), "{text}");
        assert!(text.contains("1 only before, 1 only after"), "{text}");
    }

    #[test]
    fn intervals_read_the_metrics_from_ranks() {
        // Ranks 1, 3, none, 2: hit@1 1/4, hit@3 3/4, MRR (1 + 1/3 + 0 + 1/2)/4 = 11/24.
        let r = ranks(&[Some(1), Some(3), None, Some(2)]);
        let m = intervals(Mode::Hybrid, &r);
        assert_eq!(m.queries, 4);
        let get = |name: &str| {
            m.metrics
                .iter()
                .find(|x| x.metric == name)
                .expect("every metric")
        };
        assert_eq!(get("hit@1").value, 0.25);
        assert_eq!(get("hit@3").value, 0.75);
        assert!((get("MRR@10").value - 11.0 / 24.0).abs() < 1e-12);
        for x in &m.metrics {
            assert!(x.ci95[0] <= x.value && x.value <= x.ci95[1], "{x:?}");
        }
        // Every query first: nothing to resample away.
        let all = intervals(Mode::Bm25, &ranks(&[Some(1), Some(1)]));
        assert_eq!(all.metrics[0].ci95, [1.0, 1.0]);
        assert!(
            all.to_string()
                .starts_with("bm25     hit@1 1.000 [1.000, 1.000]")
        );
    }

    #[test]
    fn holm_adjusts_by_hand() {
        // m = 4: sorted 0.01, 0.02, 0.03, 0.5 → 4·0.01 = 0.04, 3·0.02 = 0.06, 2·0.03 = 0.06
        // (running max), 1·0.5 = 0.5; returned in the input's order.
        let adjusted = holm(&[0.03, 0.5, 0.01, 0.02]);
        let want = [0.06, 0.5, 0.04, 0.06];
        for (a, w) in adjusted.iter().zip(want) {
            assert!((a - w).abs() < 1e-12, "{adjusted:?}");
        }
        // Capped at 1; the running maximum keeps the order monotone.
        assert_eq!(holm(&[0.4, 0.9]), [0.8, 0.9]);
        assert!(holm(&[]).is_empty());
    }

    #[test]
    fn only_significant_losses_are_regressions() {
        let metric = |name: &str, delta: f64, p_value: f64| MetricComparison {
            metric: name.to_owned(),
            before: 0.5,
            after: 0.5 + delta,
            delta,
            ci95: [delta, delta],
            p_value,
            test: Test::McnemarExact,
            wins: 0,
            losses: 0,
        };
        let c = Comparison {
            before_revision: String::new(),
            resamples: RESAMPLES,
            unpaired_modes: Vec::new(),
            unpaired_changed: 0,
            modes_only_before: Vec::new(),
            modes_only_after: Vec::new(),
            modes: vec![ModeComparison {
                mode: Mode::Hybrid,
                paired: 70,
                only_before: 0,
                only_after: 0,
                changed: 0,
                unverified: 0,
                repeated: 0,
                metrics: vec![
                    // 3 metrics: Holm multiplies the smallest p by 3, the next by 2.
                    metric("hit@1", -0.1, 0.001),
                    metric("hit@5", 0.2, 0.002),
                    metric("MRR@10", -0.05, 0.03),
                ],
                moved: Vec::new(),
            }],
        };
        // hit@1: 3 · 0.001 = 0.003 ≤ 0.05, worse: a regression. hit@5 is better. MRR@10:
        // max(0.004, 1 · 0.03) = 0.03 ≤ 0.05: a regression too; at α 0.01 only hit@1.
        let r = c.regressions(0.05);
        let names: Vec<&str> = r.iter().map(|x| x.metric.as_str()).collect();
        assert_eq!(names, ["hit@1", "MRR@10"]);
        assert!((r[0].p_holm - 0.003).abs() < 1e-12);
        assert_eq!(c.regressions(0.01).len(), 1);
    }

    #[test]
    fn a_query_asked_twice_is_paired_twice() {
        let twice =
            |a: Option<usize>, b: Option<usize>| vec![rank("same text", a), rank("same text", b)];
        let saved = RecordedEval {
            index_revision: String::new(),
            include_quarantined: None,
            modes: vec![RecordedMode {
                mode: Mode::Dense,
                per_query: twice(Some(1), None),
            }],
        };
        let after = twice(Some(1), Some(1));
        let c = compare(&saved, &[(Mode::Dense, &after)]);
        let m = &c.modes[0];
        assert_eq!(
            (m.paired, m.only_before, m.only_after, m.repeated),
            (2, 0, 0, 1)
        );
        assert!(
            c.to_string()
                .contains("1 repeat an earlier query's id or text")
        );
        assert_eq!((m.metrics[0].before, m.metrics[0].after), (0.5, 1.0));
    }

    #[test]
    fn a_saved_evaluation_reads_back() {
        let json = r#"{"queries": 2, "index_revision": "r1", "modes": [
            {"mode": "hybrid", "fusion": "adaptive", "per_query": [["q1", 1], ["q2", null]]},
            {"mode": "bm25", "metrics": {}}]}"#;
        let saved: RecordedEval = serde_json::from_str(json).expect("a saved evaluation");
        assert_eq!(saved.index_revision, "r1");
        assert_eq!(saved.modes[0].mode, Mode::Hybrid);
        let bare = |key: &str, rank| QueryRank {
            key: key.to_owned(),
            rank,
            judged: None,
        };
        assert_eq!(
            saved.modes[0].per_query,
            [bare("q1", Some(1)), bare("q2", None)]
        );
        assert!(saved.modes[1].per_query.is_empty());
        // Today's files carry the digest as a third element, and it round-trips.
        let today = vec![rank("q1", Some(2)), rank("q2", None)];
        let json = serde_json::to_string(&today).expect("ranks serialize");
        assert_eq!(
            json,
            r#"[["q1",2,"digest of q1"],["q2",null,"digest of q2"]]"#
        );
        let back: Vec<QueryRank> = serde_json::from_str(&json).expect("and read back");
        assert_eq!(back, today);
    }

    #[test]
    fn a_query_edited_under_its_id_is_not_compared() {
        // q00 kept its text; q01 was edited (another digest); q02 comes from a file saved
        // before digests (paired by id alone, and said so).
        let before = vec![
            rank("q00", Some(1)),
            rank("q01", Some(1)),
            QueryRank {
                judged: None,
                ..rank("q02", None)
            },
        ];
        let mut after = ranks(&[Some(2), None, Some(1)]);
        after[1].judged = Some("another text".to_owned());
        let saved = RecordedEval {
            index_revision: String::new(),
            include_quarantined: None,
            modes: vec![RecordedMode {
                mode: Mode::Hybrid,
                per_query: before,
            }],
        };
        let c = compare(&saved, &[(Mode::Hybrid, &after)]);
        let m = &c.modes[0];
        assert_eq!(
            (
                m.paired,
                m.changed,
                m.unverified,
                m.only_before,
                m.only_after
            ),
            (2, 1, 1, 0, 0)
        );
        // hit@1 over q00 (1 → 2) and q02 (none → 1): one loss, one win; q01's loss is not one.
        assert_eq!((m.metrics[0].wins, m.metrics[0].losses), (1, 1));
        let text = c.to_string();
        assert!(
            text.contains("1 asked under a kept id with another text or gold: not compared"),
            "{text}"
        );
        assert!(text.contains("1 paired by id alone"), "{text}");
        // Every query edited: nothing pairs, and the mode is listed as such.
        let mut edited = ranks(&[Some(1), Some(1), Some(1)]);
        for q in &mut edited {
            q.judged = Some("edited".to_owned());
        }
        let saved = RecordedEval {
            modes: vec![RecordedMode {
                mode: Mode::Hybrid,
                per_query: ranks(&[Some(1), Some(1), Some(1)]),
            }],
            ..saved
        };
        let none = compare(&saved, &[(Mode::Hybrid, &edited)]);
        assert_eq!(none.unpaired_modes, [Mode::Hybrid]);
        assert_eq!(none.unpaired_changed, 3);
        assert!(none.to_string().contains(
            "no query paired): hybrid (3 queries kept their id with another text or gold)"
        ));
    }
}
