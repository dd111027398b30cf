//! The stage as `skg score` runs it: options, labels matched to skills, per-registry
//! evaluation, and the summaries printed.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use skg_model::{Score, SkillKeys};

use crate::{Context, Error, Evaluation, Example, Label, LeftOut, evaluate, features};

/// What `skg score` decides with (the audit hashes it, serialized, into score's key together
/// with the model's content id).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Options {
    /// Skills with a `slop_score` below this are quarantined.
    pub threshold: f64,
}

impl Options {
    /// The default quarantine threshold: P(clean) below 0.4 (docs/score.md).
    pub const DEFAULT_THRESHOLD: f64 = 0.4;
}

impl Default for Options {
    fn default() -> Self {
        Options {
            threshold: Options::DEFAULT_THRESHOLD,
        }
    }
}

/// One registry's scores.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct RegistryScores {
    /// Skills scored.
    pub skills: usize,
    /// Of which quarantined.
    pub quarantined: usize,
    /// Mean `slop_score`.
    pub mean_score: f64,
}

/// What `skg score` prints.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Summary {
    /// Skills scored.
    pub skills: usize,
    /// Of which quarantined.
    pub quarantined: usize,
    /// The threshold.
    pub threshold: f64,
    /// Per registry, by name.
    pub registries: BTreeMap<String, RegistryScores>,
}

impl Summary {
    /// The summary of `rows` scored at `threshold`.
    pub fn of(rows: &[Score], threshold: f64) -> Summary {
        let mut by: BTreeMap<String, RegistryScores> = BTreeMap::new();
        for r in rows {
            let e = by.entry(r.registry.to_string()).or_default();
            e.skills += 1;
            e.quarantined += usize::from(r.quarantined);
            e.mean_score += r.slop_score;
        }
        for e in by.values_mut() {
            e.mean_score /= e.skills.max(1) as f64;
        }
        Summary {
            skills: rows.len(),
            quarantined: rows.iter().filter(|r| r.quarantined).count(),
            threshold,
            registries: by,
        }
    }
}

/// The per-registry table `skg score` prints.
impl std::fmt::Display for Summary {
    fn fmt(&self, out: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        writeln!(
            out,
            "\n{:<40} {:>7} {:>12} {:>11}",
            "registry", "skills", "quarantined", "mean score"
        )?;
        for (name, r) in &self.registries {
            writeln!(
                out,
                "{name:<40} {:>7} {:>12} {:>11.3}",
                r.skills, r.quarantined, r.mean_score
            )?;
        }
        Ok(())
    }
}

/// The header of an evaluation table (`name`: the first column's title).
fn evaluation_header(out: &mut std::fmt::Formatter<'_>, name: &str) -> std::fmt::Result {
    writeln!(
        out,
        "{name:<40} {:>4} {:>8} {:>10}",
        "n", "AUC g/s", "AUC g/m+s"
    )
}

/// One row of an evaluation table.
fn evaluation_row(
    out: &mut std::fmt::Formatter<'_>,
    name: &str,
    e: &Evaluation,
) -> std::fmt::Result {
    let auc = |a: Option<f64>| a.map_or_else(|| "   -".to_owned(), |x| format!("{x:.3}"));
    let q = |l: &str| e.at_threshold.get(l).copied().unwrap_or((0, 0));
    let ((gq, gk), (mq, mk), (sq, sk)) = (q("good"), q("mediocre"), q("slop"));
    writeln!(
        out,
        "{name:<40} {:>4} {:>8} {:>10}   good {gq}/{} mediocre {mq}/{} slop {sq}/{} quarantined",
        e.n,
        auc(e.auc_good_vs_slop),
        auc(e.auc_mediocre_as_slop),
        gq + gk,
        mq + mk,
        sq + sk
    )
}

/// One row of a labels file: where it was read (`file:line`), the skill key
/// (`<registry folder>/<SKILL.md path>`) and the label as written.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LabelRow {
    /// `file:line`.
    pub at: String,
    /// The skill key.
    pub path: String,
    /// `good`, `mediocre` or `slop`.
    pub label: String,
}

impl LabelRow {
    /// The rows of a labels CSV text with columns `path` and `label` (`file` names the source in
    /// `at` and in errors); a file without rows is an error.
    pub fn parse_csv(text: &str, file: &str) -> Result<Vec<LabelRow>, Error> {
        let rows: Vec<LabelRow> =
            skg_model::labels::read_csv_columns(text, file, &["path", "label"], &[])
                .map_err(Error::Labels)?
                .into_iter()
                .map(|r| LabelRow {
                    path: r.get(0).to_owned(),
                    label: r.get(1).to_owned(),
                    at: r.at,
                })
                .collect();
        if rows.is_empty() {
            return Err(Error::Labels(format!("{file}: no labelled rows")));
        }
        Ok(rows)
    }
}

/// The labelled skills of `ctx` with their features. A row with an unknown label or a key that
/// names no skill is an error naming the row.
pub fn examples(
    rows: &[LabelRow],
    ctx: &Context<'_>,
    keys: &SkillKeys,
) -> Result<Vec<Example>, Error> {
    let xs = features::compute(ctx);
    let mut out = Vec::with_capacity(rows.len());
    for r in rows {
        let Some(label) = Label::parse(&r.label) else {
            return Err(Error::Labels(format!(
                "{}: unknown label `{}` (expected good, mediocre or slop)",
                r.at, r.label
            )));
        };
        let Some(i) = keys.by_path(&r.path) else {
            return Err(Error::Labels(format!(
                "{}: `{}` is not a skill of the extract output",
                r.at, r.path
            )));
        };
        out.push(Example {
            key: r.path.clone(),
            registry: ctx.skills[i].registry.to_string(),
            label,
            kind: ctx.skills[i].kind,
            x: xs[i].clone(),
        });
    }
    Ok(out)
}

/// One registry's evaluation.
#[derive(Debug, Clone, Serialize)]
pub struct RegistryEvaluation {
    /// The registry.
    pub registry: String,
    /// Its evaluation.
    pub eval: Evaluation,
}

/// What `skg score eval` prints: the model as given on the labels (not held out), pooled and
/// per registry.
#[derive(Debug, Clone, Serialize)]
pub struct EvalReport {
    /// All labelled skills.
    pub pooled: Evaluation,
    /// Per registry, by name.
    pub registries: Vec<RegistryEvaluation>,
}

impl EvalReport {
    /// Evaluates `scores` (aligned with `examples`) at `threshold`, pooled and per registry.
    pub fn new(examples: &[Example], scores: &[f64], threshold: f64) -> EvalReport {
        let all: Vec<&Example> = examples.iter().collect();
        let mut regs: Vec<&str> = examples.iter().map(|e| e.registry.as_str()).collect();
        regs.sort_unstable();
        regs.dedup();
        let registries = regs
            .iter()
            .map(|r| {
                let (ee, ss): (Vec<&Example>, Vec<f64>) = examples
                    .iter()
                    .zip(scores)
                    .filter(|(e, _)| e.registry == *r)
                    .map(|(e, s)| (e, *s))
                    .unzip();
                RegistryEvaluation {
                    registry: (*r).to_owned(),
                    eval: evaluate(&ee, &ss, threshold),
                }
            })
            .collect();
        EvalReport {
            pooled: evaluate(&all, scores, threshold),
            registries,
        }
    }
}

impl std::fmt::Display for EvalReport {
    fn fmt(&self, out: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        evaluation_header(out, "labels (model as given; not held out)")?;
        evaluation_row(out, "all", &self.pooled)?;
        for r in &self.registries {
            evaluation_row(out, &r.registry, &r.eval)?;
        }
        Ok(())
    }
}

/// What `skg score train` prints.
#[derive(Debug, Clone, Serialize)]
pub struct TrainReport {
    /// Where the model was written.
    pub model: String,
    /// Labelled rows.
    pub rows: usize,
    /// 5-fold cross-validation, pooled.
    pub cross_validated: Evaluation,
    /// Each registry left out in turn.
    pub leave_one_registry_out: Vec<LeftOut>,
    /// (feature, coefficient), in feature order.
    pub coefficients: Vec<(String, f64)>,
    /// The intercept of the log-odds of clean.
    pub intercept: f64,
}

impl std::fmt::Display for TrainReport {
    fn fmt(&self, out: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        writeln!(
            out,
            "trained on {} labelled skills → {}",
            self.rows, self.model
        )?;
        writeln!(out)?;
        evaluation_header(out, "evaluation")?;
        evaluation_row(
            out,
            "5-fold cross-validated (pooled)",
            &self.cross_validated,
        )?;
        for l in &self.leave_one_registry_out {
            match &l.eval {
                Some(e) => evaluation_row(out, &format!("left out: {}", l.registry), e)?,
                None => writeln!(
                    out,
                    "left out: {:<30} not evaluable: the other registries hold one class only",
                    l.registry
                )?,
            }
        }
        let cv = &self.cross_validated;
        writeln!(
            out,
            "\ncalibration of the cross-validated P(clean), good vs slop (Brier {:.3}):",
            cv.brier.unwrap_or(f64::NAN)
        )?;
        for (bin, n, pred, obs) in &cv.calibration {
            writeln!(
                out,
                "  predicted {bin}: {n:>4} skills, mean predicted {pred:.3}, observed good {obs:.3}"
            )?;
        }
        writeln!(
            out,
            "\ncoefficients (log-odds of clean per standard deviation; intercept {:+.3}):",
            self.intercept
        )?;
        let mut c = self.coefficients.clone();
        c.sort_by(|a, b| b.1.abs().total_cmp(&a.1.abs()));
        for (name, v) in c {
            let doc = crate::FEATURES
                .iter()
                .find(|f| f.0 == name)
                .map_or("", |f| f.1);
            writeln!(out, "  {v:+.3}  {name:<22} {doc}")?;
        }
        Ok(())
    }
}
