//! Abstention measured as a detector: does the first hit's evidence tell a task the catalog can
//! serve from one it cannot?
//!
//! In-scope tasks are judged queries of this index (their gold skills are in it); out-of-scope
//! tasks are another catalog's queries routed against this index (none of its skills was written
//! for them). Each task is ranked with no floor (10 skills), and five signals of the answer are
//! read: the best hit's fused score (what the floor `min_score` compares), the best cosine,
//! the best BM25, the cosine gap (best cosine minus the mean of the other nine — how much the
//! best answer stands out, a query-performance predictor in the spirit of NQC) and BM25 per query
//! term (a long query piles up BM25 whatever it matches). A signal's ROC AUC is the probability that a random in-scope task scores
//! above a random out-of-scope one (ties count half); it is given against every in-scope task and
//! against the in-scope tasks the index serves (gold in the top 5), which are the answers a floor
//! must keep. An operating point is a threshold: the share of in-scope tasks still answered, of
//! served ones still served, and of out-of-scope ones rejected (nothing above it).

use serde::Serialize;

use crate::{EmbedFn, EvalOptions, Index, JudgedQuery, Mode, Result, judge, judged::judge_all};

/// The signals read from an answer, in report order.
pub const SIGNALS: [&str; 5] = ["score", "cosine", "bm25", "cos_gap", "bm25_term"];

/// One task's signals and whether the index serves it.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct TaskSignals {
    /// [`SIGNALS`]: the best hit's fused score, the answer's best cosine, its best BM25, the
    /// cosine gap, BM25 per query term (−∞ when the answer is empty).
    pub values: [f64; 5],
    /// In-scope and its gold is in the top 5.
    pub served: bool,
}

/// A threshold on one signal and what it does.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct OperatingPoint {
    /// The signal thresholded.
    pub signal: &'static str,
    /// Answers need a value above it.
    pub threshold: f64,
    /// In-scope tasks still answered.
    pub in_scope_answered: f64,
    /// Served in-scope tasks (gold in the top 5) still answered.
    pub served_kept: f64,
    /// Out-of-scope tasks rejected (nothing above the threshold).
    pub out_of_scope_rejected: f64,
}

/// One signal's separation.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct SignalReport {
    /// The signal.
    pub signal: &'static str,
    /// ROC AUC, every in-scope task against the out-of-scope ones.
    pub auc: Option<f64>,
    /// ROC AUC, served in-scope tasks against the out-of-scope ones.
    pub auc_served: Option<f64>,
    /// The highest threshold that keeps all but `max_loss` of the served tasks.
    pub chosen: OperatingPoint,
}

/// Abstention in one mode.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct AbstentionReport {
    /// The mode.
    pub mode: Mode,
    /// In-scope tasks.
    pub in_scope: usize,
    /// Of them, served (gold in the top 5).
    pub served: usize,
    /// Out-of-scope tasks.
    pub out_of_scope: usize,
    /// Share of served tasks a chosen threshold may lose.
    pub max_loss: f64,
    /// The floor the gateway applies now (`min_score` on the ranking score).
    pub floor: OperatingPoint,
    /// Each signal.
    pub signals: Vec<SignalReport>,
}

/// What `threshold` on signal `s` does to `inside` and `outside` tasks.
pub fn operating_point(
    s: usize,
    threshold: f64,
    inside: &[TaskSignals],
    outside: &[TaskSignals],
) -> OperatingPoint {
    let share = |tasks: &mut dyn Iterator<Item = &TaskSignals>, above: bool| {
        let (n, k) = tasks.fold((0usize, 0usize), |(n, k), t| {
            (n + 1, k + usize::from((t.values[s] > threshold) == above))
        });
        if n == 0 { 0.0 } else { k as f64 / n as f64 }
    };
    OperatingPoint {
        signal: SIGNALS[s],
        threshold,
        in_scope_answered: share(&mut inside.iter(), true),
        served_kept: share(&mut inside.iter().filter(|t| t.served), true),
        out_of_scope_rejected: share(&mut outside.iter(), false),
    }
}

/// The highest threshold on signal `s` that keeps at least `1 − max_loss` of the served tasks:
/// just below the ⌈(1 − max_loss)·n⌉-th highest served value.
pub fn choose(s: usize, max_loss: f64, inside: &[TaskSignals]) -> f64 {
    let mut served: Vec<f64> = inside
        .iter()
        .filter(|t| t.served)
        .map(|t| t.values[s])
        .collect();
    if served.is_empty() {
        return f64::NEG_INFINITY;
    }
    served.sort_by(|a, b| b.total_cmp(a));
    #[allow(
        clippy::cast_possible_truncation,
        clippy::cast_sign_loss,
        reason = "a share in [0, 1] of a length, rounded up: in 0..=len"
    )]
    let keep = ((1.0 - max_loss.clamp(0.0, 1.0)) * served.len() as f64).ceil() as usize;
    let v = served[keep.clamp(1, served.len()) - 1];
    // The largest representable value below v: v itself then clears it.
    if v.is_finite() {
        v - v.abs().max(1.0) * 1e-9
    } else {
        v
    }
}

/// Reads each task's signals in `mode` (no floor, 10 skills); `judged` gives in-scope gold.
fn signals(
    index: &Index,
    queries: &[JudgedQuery],
    in_scope: bool,
    mode: Mode,
    options: &EvalOptions,
    embed: &mut EmbedFn<'_>,
) -> Result<Vec<TaskSignals>> {
    let judged = in_scope.then(|| judge_all(index, queries).0);
    let mut out = Vec::with_capacity(queries.len());
    for (i, q) in queries.iter().enumerate() {
        let vector = crate::judged::query_vector(index, mode, &q.query, embed)?;
        let answer = index.search(&options.query(&q.query, vector.as_ref(), mode, 10))?;
        let best = |f: &dyn Fn(&crate::Hit) -> f32| {
            answer
                .hits
                .iter()
                .map(|h| f64::from(f(h)))
                .fold(f64::NEG_INFINITY, f64::max)
        };
        let served = judged.as_ref().is_some_and(|j| {
            let ranking: Vec<u32> = answer.hits.iter().map(|h| h.skill).collect();
            judge(&ranking, &j[i]).first_gold.is_some_and(|r| r <= 5)
        });
        let mut cosines: Vec<f64> = answer.hits.iter().map(|h| f64::from(h.dense)).collect();
        cosines.sort_by(|a, b| b.total_cmp(a));
        let gap = match cosines.as_slice() {
            [] => f64::NEG_INFINITY,
            [only] => *only,
            [top, rest @ ..] => top - rest.iter().sum::<f64>() / rest.len() as f64,
        };
        let top_bm25 = best(&|h| h.bm25);
        out.push(TaskSignals {
            values: [
                // The best fused score, which is what the floor compares (the second stage may put
                // another hit first).
                best(&|h| h.score),
                best(&|h| h.dense),
                top_bm25,
                gap,
                top_bm25 / answer.terms.len().max(1) as f64,
            ],
            served,
        });
    }
    Ok(out)
}

/// Measures abstention in every mode of `options`: `in_scope` are this index's judged queries,
/// `out_of_scope` another catalog's; `floor` is the gateway's `min_score`; a chosen threshold
/// may lose `max_loss` of the served tasks.
///
/// # Errors
/// A query cannot be embedded or searched.
pub fn abstention(
    index: &Index,
    in_scope: &[JudgedQuery],
    out_of_scope: &[JudgedQuery],
    options: &EvalOptions,
    (floor, max_loss): (f32, f64),
    embed: &mut EmbedFn<'_>,
) -> Result<Vec<AbstentionReport>> {
    let mut reports = Vec::new();
    for &mode in &options.modes {
        let inside = signals(index, in_scope, true, mode, options, embed)?;
        let outside = signals(index, out_of_scope, false, mode, options, embed)?;
        let served: Vec<TaskSignals> = inside.iter().copied().filter(|t| t.served).collect();
        let auc = |s: usize, pos: &[TaskSignals]| {
            let scores: Vec<f64> = pos.iter().chain(&outside).map(|t| t.values[s]).collect();
            let labels: Vec<bool> = pos
                .iter()
                .map(|_| true)
                .chain(outside.iter().map(|_| false))
                .collect();
            skg_model::auc(&scores, &labels)
        };
        let which: &[usize] = match mode {
            Mode::Bm25 => &[0, 2, 4],
            Mode::Dense => &[0, 1, 3],
            Mode::Hybrid => &[0, 1, 2, 3, 4],
        };
        let signals = which
            .iter()
            .map(|&s| SignalReport {
                signal: SIGNALS[s],
                auc: auc(s, &inside),
                auc_served: auc(s, &served),
                chosen: operating_point(s, choose(s, max_loss, &inside), &inside, &outside),
            })
            .collect();
        reports.push(AbstentionReport {
            mode,
            in_scope: inside.len(),
            served: served.len(),
            out_of_scope: outside.len(),
            max_loss,
            floor: operating_point(0, f64::from(floor), &inside, &outside),
            signals,
        });
    }
    Ok(reports)
}

impl std::fmt::Display for AbstentionReport {
    fn fmt(&self, o: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        writeln!(
            o,
            "\nabstention, {:?}: {} in-scope tasks ({} served: gold in the top 5), {} out-of-scope",
            self.mode, self.in_scope, self.served, self.out_of_scope
        )?;
        writeln!(
            o,
            "  {:<8} {:>7} {:>11} {:>11} {:>9} {:>11} {:>10}",
            "signal", "AUC", "AUC served", "threshold", "answered", "served kept", "out rejected"
        )?;
        let point = |o: &mut std::fmt::Formatter<'_>,
                     name: &str,
                     auc: Option<f64>,
                     auc_s: Option<f64>,
                     p: &OperatingPoint| {
            let f = |x: Option<f64>| x.map_or_else(|| "-".to_owned(), |v| format!("{v:.3}"));
            writeln!(
                o,
                "  {:<8} {:>7} {:>11} {:>11.4} {:>9.3} {:>11.3} {:>10.3}",
                name,
                f(auc),
                f(auc_s),
                p.threshold,
                p.in_scope_answered,
                p.served_kept,
                p.out_of_scope_rejected
            )
        };
        point(o, "floor", None, None, &self.floor)?;
        for s in &self.signals {
            point(o, s.signal, s.auc, s.auc_served, &s.chosen)?;
        }
        writeln!(
            o,
            "  (floor: the gateway's min_score on the score; each signal's threshold keeps ≥ {:.0}% of the served tasks)",
            100.0 * (1.0 - self.max_loss)
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn t(v: f64, served: bool) -> TaskSignals {
        TaskSignals {
            values: [v, 0.0, 0.0, 0.0, 0.0],
            served,
        }
    }

    #[test]
    fn operating_points_count_by_hand() {
        // In-scope 0.9 (served), 0.7 (served), 0.4 (not served); out-of-scope 0.5, 0.2.
        let inside = [t(0.9, true), t(0.7, true), t(0.4, false)];
        let outside = [t(0.5, false), t(0.2, false)];
        let p = operating_point(0, 0.45, &inside, &outside);
        assert!((p.in_scope_answered - 2.0 / 3.0).abs() < 1e-12);
        assert!((p.served_kept - 1.0).abs() < 1e-12);
        assert!((p.out_of_scope_rejected - 0.5).abs() < 1e-12);
        // Keeping every served task: just below 0.7; losing half of two: just below 0.9.
        let all = choose(0, 0.0, &inside);
        assert!(all < 0.7 && all > 0.699_999);
        let half = choose(0, 0.5, &inside);
        assert!(half < 0.9 && half > 0.899_999);
        let p = operating_point(0, all, &inside, &outside);
        assert!((p.served_kept - 1.0).abs() < 1e-12);
        assert!((p.out_of_scope_rejected - 1.0).abs() < 1e-12);
    }
}
