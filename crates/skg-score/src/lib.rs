//! The slop score: documented, registry-agnostic features ([`features`]), a logistic
//! regression fitted with linfa on labelled skills ([`model`]), its evaluation (cross-validated
//! and leave-one-registry-out AUC), and the quarantine decision with per-skill explanations.
//!
//! `slop_score` keeps the seed's orientation: 1 = clean, 0 = slop.

pub mod features;
pub mod model;
mod stage;

use std::collections::BTreeMap;

use serde::Serialize;
use skg_model::{Score, SkillKind};

pub use crate::{
    features::{Context, FEATURES},
    model::{Logistic, Model, auc, fit_logistic},
    stage::{
        EvalReport, LabelRow, Options, RegistryEvaluation, RegistryScores, Summary, TrainReport,
        examples,
    },
};

/// Errors of this crate.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// Fitting failed.
    #[error("cannot train: {0}")]
    Training(String),
    /// A model artifact is unusable.
    #[error("unusable model: {0}")]
    Model(String),
    /// A labels file row is unusable (the message names the row).
    #[error("{0}")]
    Labels(String),
}

/// A label of the rubric.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Label {
    /// Specific, actionable.
    Good,
    /// Usable but thin or diluted.
    Mediocre,
    /// Filler.
    Slop,
}

impl Label {
    /// Parses `good` / `mediocre` / `slop`.
    pub fn parse(s: &str) -> Option<Label> {
        match s.trim() {
            "good" => Some(Label::Good),
            "mediocre" => Some(Label::Mediocre),
            "slop" => Some(Label::Slop),
            _ => None,
        }
    }
}

/// One labelled skill with its features.
#[derive(Debug, Clone)]
pub struct Example {
    /// A stable key (the labels file's path) for fold assignment.
    pub key: String,
    /// The skill's registry (for leave-one-registry-out; never a feature).
    pub registry: String,
    /// Its label.
    pub label: Label,
    /// What kind of entry it is (the fitted model's domain is the kinds it saw).
    pub kind: SkillKind,
    /// Its features.
    pub x: Vec<f64>,
}

/// Fits on the good and slop examples (mediocre ones are left out: they sit between the
/// classes, and a model fitted on the clear cases ranks them in between).
pub fn train(examples: &[Example], alpha: f64) -> Result<Model, Error> {
    let used: Vec<&Example> = examples
        .iter()
        .filter(|e| e.label != Label::Mediocre)
        .collect();
    let x: Vec<Vec<f64>> = used.iter().map(|e| e.x.clone()).collect();
    let y: Vec<bool> = used.iter().map(|e| e.label == Label::Good).collect();
    let mut m = Model::fit(&x, &y, alpha)?;
    m.training.mediocre_excluded = examples.len() - used.len();
    let kinds: std::collections::BTreeSet<SkillKind> = used.iter().map(|e| e.kind).collect();
    m.training.kinds = kinds.into_iter().collect();
    Ok(m)
}

/// Scores of held-out predictions and the AUCs they give.
#[derive(Debug, Clone, Serialize)]
pub struct Evaluation {
    /// AUC of P(clean), good vs slop.
    pub auc_good_vs_slop: Option<f64>,
    /// AUC with mediocre counted as slop.
    pub auc_mediocre_as_slop: Option<f64>,
    /// Mean score per label.
    pub mean_score: BTreeMap<String, f64>,
    /// Counts at the threshold: `label → (quarantined, kept)`.
    pub at_threshold: BTreeMap<String, (usize, usize)>,
    /// Examples evaluated.
    pub n: usize,
    /// Calibration over good and slop examples: for predicted P(clean) in each fifth of [0, 1],
    /// `(bin, examples, mean predicted, observed share good)`.
    pub calibration: Vec<(String, usize, f64, f64)>,
    /// Brier score over good and slop examples (mean squared error of P(clean); lower is better).
    pub brier: Option<f64>,
}

/// Evaluates `scores` (aligned with `examples`) at `threshold`.
pub fn evaluate(examples: &[&Example], scores: &[f64], threshold: f64) -> Evaluation {
    let gs: Vec<(f64, bool)> = examples
        .iter()
        .zip(scores)
        .filter(|(e, _)| e.label != Label::Mediocre)
        .map(|(e, s)| (*s, e.label == Label::Good))
        .collect();
    let (s1, y1): (Vec<f64>, Vec<bool>) = gs.into_iter().unzip();
    let y2: Vec<bool> = examples.iter().map(|e| e.label == Label::Good).collect();
    let mut sums: BTreeMap<String, (f64, usize)> = BTreeMap::new();
    let mut at: BTreeMap<String, (usize, usize)> = BTreeMap::new();
    for (e, &s) in examples.iter().zip(scores) {
        let key = format!("{:?}", e.label).to_lowercase();
        let x = sums.entry(key.clone()).or_default();
        x.0 += s;
        x.1 += 1;
        let c = at.entry(key).or_default();
        if s < threshold {
            c.0 += 1;
        } else {
            c.1 += 1;
        }
    }
    let mut bins = [(0usize, 0.0f64, 0usize); 5];
    for (s, y) in s1.iter().zip(&y1) {
        #[allow(
            clippy::cast_possible_truncation,
            clippy::cast_sign_loss,
            reason = "s is in [0, 1]"
        )]
        let b = ((s * 5.0) as usize).min(4);
        bins[b].0 += 1;
        bins[b].1 += s;
        bins[b].2 += usize::from(*y);
    }
    let calibration = bins
        .iter()
        .enumerate()
        .filter(|(_, b)| b.0 > 0)
        .map(|(k, b)| {
            (
                format!("{:.1}–{:.1}", k as f64 / 5.0, (k + 1) as f64 / 5.0),
                b.0,
                b.1 / b.0 as f64,
                b.2 as f64 / b.0 as f64,
            )
        })
        .collect();
    let brier = (!s1.is_empty()).then(|| {
        s1.iter()
            .zip(&y1)
            .map(|(s, y)| (s - f64::from(u8::from(*y))).powi(2))
            .sum::<f64>()
            / s1.len() as f64
    });
    Evaluation {
        calibration,
        brier,
        auc_good_vs_slop: auc(&s1, &y1),
        auc_mediocre_as_slop: auc(scores, &y2),
        mean_score: sums
            .into_iter()
            .map(|(k, (s, n))| (k, s / n as f64))
            .collect(),
        at_threshold: at,
        n: examples.len(),
    }
}

/// Stratified `folds`-fold cross-validation: every example is scored by a model that never saw
/// it. Folds are assigned by a hash of the key within each label (deterministic).
pub fn cross_validate(
    examples: &[Example],
    alpha: f64,
    folds: usize,
    threshold: f64,
) -> Result<Evaluation, Error> {
    let mut fold = vec![0usize; examples.len()];
    for label in [Label::Good, Label::Mediocre, Label::Slop] {
        let mut idx: Vec<usize> = (0..examples.len())
            .filter(|&i| examples[i].label == label)
            .collect();
        idx.sort_by_key(|&i| {
            blake3::hash(examples[i].key.as_bytes())
                .to_hex()
                .to_string()
        });
        for (k, i) in idx.into_iter().enumerate() {
            fold[i] = k % folds;
        }
    }
    let mut scores = vec![0.0; examples.len()];
    for f in 0..folds {
        let train_set: Vec<Example> = examples
            .iter()
            .zip(&fold)
            .filter(|(_, g)| **g != f)
            .map(|(e, _)| e.clone())
            .collect();
        let m = train(&train_set, alpha)?;
        for (i, e) in examples.iter().enumerate() {
            if fold[i] == f {
                scores[i] = m.slop_score(&e.x);
            }
        }
    }
    let all: Vec<&Example> = examples.iter().collect();
    Ok(evaluate(&all, &scores, threshold))
}

/// One registry left out: trained on the others, evaluated on it.
#[derive(Debug, Clone, Serialize)]
pub struct LeftOut {
    /// The registry.
    pub registry: String,
    /// Its evaluation; `None` when the other registries hold only one class (nothing to fit).
    pub eval: Option<Evaluation>,
}

/// Leave-one-registry-out evaluation.
pub fn leave_one_registry_out(
    examples: &[Example],
    alpha: f64,
    threshold: f64,
) -> Result<Vec<LeftOut>, Error> {
    let mut registries: Vec<&str> = examples.iter().map(|e| e.registry.as_str()).collect();
    registries.sort_unstable();
    registries.dedup();
    let mut out = Vec::new();
    for r in registries {
        let train_set: Vec<Example> = examples
            .iter()
            .filter(|e| e.registry != r)
            .cloned()
            .collect();
        let has = |l: Label| train_set.iter().any(|e| e.label == l);
        if !(has(Label::Good) && has(Label::Slop)) {
            out.push(LeftOut {
                registry: r.to_owned(),
                eval: None,
            });
            continue;
        }
        let m = train(&train_set, alpha)?;
        let test: Vec<&Example> = examples.iter().filter(|e| e.registry == r).collect();
        let scores: Vec<f64> = test.iter().map(|e| m.slop_score(&e.x)).collect();
        out.push(LeftOut {
            registry: r.to_owned(),
            eval: Some(evaluate(&test, &scores, threshold)),
        });
    }
    Ok(out)
}

/// Features explained together: several measure one property (code: fenced blocks, their lines,
/// inline spans), and a skill is short of the property only when their contributions add up
/// to a deficit — a skill whose code is all fenced is not "missing inline code".
const EXPLAINED_TOGETHER: &[(&str, &[&str])] = &[(
    "code",
    &["code_blocks_log", "code_lines_log", "inline_code_density"],
)];

/// The three explanation units pulling the score down most: single features, or a family of
/// [`EXPLAINED_TOGETHER`] with its summed contribution; `name (value) contribution`.
fn reasons(x: &[f64], contrib: &[f64]) -> Vec<String> {
    let family = |name: &str| EXPLAINED_TOGETHER.iter().find(|(_, ms)| ms.contains(&name));
    let mut units: Vec<(f64, String)> = Vec::new();
    for (i, (name, _)) in FEATURES.iter().enumerate() {
        if family(name).is_none() {
            units.push((
                contrib[i],
                format!("{name} ({:.2}) {:+.2}", x[i], contrib[i]),
            ));
        }
    }
    for (fam, members) in EXPLAINED_TOGETHER {
        let idx: Vec<usize> = members
            .iter()
            .filter_map(|m| FEATURES.iter().position(|f| f.0 == *m))
            .collect();
        let sum: f64 = idx.iter().map(|&i| contrib[i]).sum();
        let values: Vec<String> = idx
            .iter()
            .map(|&i| format!("{} {:.2}", FEATURES[i].0, x[i]))
            .collect();
        units.push((sum, format!("{fam} ({}) {sum:+.2}", values.join(", "))));
    }
    units.sort_by(|a, b| {
        a.0.partial_cmp(&b.0)
            .unwrap_or(std::cmp::Ordering::Equal)
            .then_with(|| a.1.cmp(&b.1))
    });
    units
        .into_iter()
        .filter(|u| u.0 < 0.0)
        .take(3)
        .map(|u| u.1)
        .collect()
}

/// Why an entry outside the model's domain is quarantined: nothing to route it by.
pub const WITHOUT_DESCRIPTION: &str = "no description: nothing to route it by";

/// What an entry of `kind` is called in reasons (one, many).
fn kind_name(kind: SkillKind) -> (&'static str, &'static str) {
    match kind {
        SkillKind::Skill => ("SKILL.md package", "SKILL.md packages"),
        SkillKind::Tool => ("tool-catalog entry", "tool-catalog entries"),
    }
}

/// Why an entry of `kind`'s score does not quarantine it.
fn outside_domain(model: &Model, kind: SkillKind) -> String {
    let fitted: Vec<&str> = model
        .training
        .kinds
        .iter()
        .map(|k| kind_name(*k).1)
        .collect();
    format!(
        "{}: outside the model's domain (fitted on {}); quarantined only without a description",
        kind_name(kind).0,
        fitted.join(", ")
    )
}

/// Scores every skill of `ctx` with `model`; below `threshold` a skill is quarantined. An entry
/// of a kind the model was not fitted on (a tool-catalog entry under the bundled model, fitted on
/// `SKILL.md` packages) is scored too, for the record, but quarantined only when it has no
/// description.
pub fn score(model: &Model, ctx: &Context<'_>, threshold: f64) -> Vec<Score> {
    let xs = features::compute(ctx);
    let mut rows: Vec<Score> = ctx
        .skills
        .iter()
        .zip(&xs)
        .map(|(s, x)| {
            let p = model.slop_score(x);
            let contrib = model.contributions(x);
            let mut reasons = reasons(x, &contrib);
            // Outside the model's domain (a tool-catalog entry scored by a model fitted on
            // SKILL.md packages) the score is not evidence: such an entry is judged only by
            // whether it has anything to be routed by.
            let quarantined = if model.applies_to(s.kind) {
                p < threshold
            } else {
                let empty = s.description.trim().is_empty();
                reasons.insert(
                    0,
                    if empty {
                        WITHOUT_DESCRIPTION.to_owned()
                    } else {
                        outside_domain(model, s.kind)
                    },
                );
                empty
            };
            Score {
                id: s.id.clone(),
                registry: s.registry.clone(),
                path: s.path.clone(),
                slop_score: (p * 1e6).round() / 1e6,
                quarantined,
                threshold,
                reasons,
                contributions: FEATURES
                    .iter()
                    .map(|(n, _)| (*n).to_owned())
                    .zip(contrib)
                    .collect(),
                features: FEATURES
                    .iter()
                    .map(|(n, _)| (*n).to_owned())
                    .zip(x.iter().map(|v| (v * 1e6).round() / 1e6))
                    .collect(),
            }
        })
        .collect();
    rows.sort_by(|a, b| a.id.cmp(&b.id));
    rows
}
