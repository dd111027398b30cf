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
    /// The default quarantine threshold: P(clean) below 0.4 (SCORE.md).
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
}
