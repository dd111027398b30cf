//! The fitted model: standardized features → logistic regression (linfa-logistic, L2) → the
//! probability that a skill is clean. Serialized as a versioned JSON artifact.

use linfa::prelude::*;
use linfa_logistic::LogisticRegression;
use ndarray_linfa::{Array1, Array2};
use serde::{Deserialize, Serialize};
use skg_model::SkillKind;

use crate::{Error, features::FEATURES};

/// Format version of the JSON artifact.
pub const FORMAT: u32 = 1;
/// L2 penalty of the logistic regression unless one is given (`skg score train --alpha`).
pub const DEFAULT_ALPHA: f64 = 1.0;
/// Where the bundled model lives in the repository (what `skg score train` rewrites by default).
pub const BUNDLED_PATH: &str = "crates/skg-score/models/slop-v1.json";

/// How the model was trained.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Training {
    /// The labels file, as given.
    pub labels: String,
    /// Rows used for fitting (good + slop).
    pub rows: usize,
    /// Rows labelled good (the positive class, 1 = clean).
    pub good: usize,
    /// Rows labelled slop.
    pub slop: usize,
    /// Rows labelled mediocre: not used for fitting (they lie between the classes; their scores
    /// are reported by `skg score eval`).
    pub mediocre_excluded: usize,
    /// blake3 over the feature matrix and labels, in row order.
    pub data_hash: String,
    /// L2 penalty.
    pub alpha: f64,
    /// The kinds of entries it was fitted on: its domain. An entry of another kind is scored for
    /// the record but not judged by the score ([`crate::score`]). Artifacts written before this
    /// field existed were fitted on `SKILL.md` packages.
    #[serde(default = "skills_only")]
    pub kinds: Vec<SkillKind>,
}

fn skills_only() -> Vec<SkillKind> {
    vec![SkillKind::Skill]
}

/// A fitted slop model.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Model {
    /// [`FORMAT`].
    pub format: u32,
    /// What the numbers are.
    pub kind: String,
    /// Feature names, in vector order.
    pub features: Vec<String>,
    /// Training means of the features.
    pub mean: Vec<f64>,
    /// Training standard deviations (1 where a feature is constant).
    pub scale: Vec<f64>,
    /// Coefficients on the standardized features, for log-odds of clean.
    pub coefficients: Vec<f64>,
    /// Intercept of the log-odds of clean.
    pub intercept: f64,
    /// How it was trained.
    pub training: Training,
    /// Evaluation at training time (cross-validated and leave-one-registry-out), as printed by
    /// `skg score train`.
    pub metrics: serde_json::Value,
}

/// A logistic regression fitted on standardized features: P(y) = σ(intercept + Σ cᵢ·(xᵢ − meanᵢ)/scaleᵢ).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Logistic {
    /// Training means of the features.
    pub mean: Vec<f64>,
    /// Training standard deviations (1 where a feature is constant).
    pub scale: Vec<f64>,
    /// Coefficients on the standardized features, for the log-odds of `true`.
    pub coefficients: Vec<f64>,
    /// Intercept of the log-odds of `true`.
    pub intercept: f64,
}

impl Logistic {
    /// P(true) of a feature row.
    pub fn probability(&self, x: &[f64]) -> f64 {
        let z: f64 = self.intercept
            + x.iter()
                .zip(&self.mean)
                .zip(&self.scale)
                .zip(&self.coefficients)
                .map(|(((v, m), s), c)| c * (v - m) / s)
                .sum::<f64>();
        sigmoid(z)
    }
}

/// Fits an L2-penalized logistic regression (linfa-logistic) of `y` on the rows `x`, standardizing
/// each feature first. Deterministic: the same rows give the same coefficients.
pub fn fit_logistic(x: &[Vec<f64>], y: &[bool], alpha: f64) -> Result<Logistic, Error> {
    let k = x.first().map_or(0, Vec::len);
    let n = x.len();
    if n == 0 || y.iter().all(|&c| c) || y.iter().all(|&c| !c) {
        return Err(Error::Training("need rows of both classes".into()));
    }
    let mut mean = vec![0.0; k];
    for row in x {
        for (m, v) in mean.iter_mut().zip(row) {
            *m += v / n as f64;
        }
    }
    let mut scale = vec![0.0; k];
    for row in x {
        for ((s, v), m) in scale.iter_mut().zip(row).zip(&mean) {
            *s += (v - m) * (v - m) / n as f64;
        }
    }
    for s in &mut scale {
        *s = if *s > 1e-12 { s.sqrt() } else { 1.0 };
    }
    let flat: Vec<f64> = x
        .iter()
        .flat_map(|row| {
            row.iter()
                .zip(&mean)
                .zip(&scale)
                .map(|((v, m), s)| (v - m) / s)
        })
        .collect();
    let records =
        Array2::from_shape_vec((n, k), flat).map_err(|e| Error::Training(e.to_string()))?;
    let dataset = Dataset::new(records, Array1::from(y.to_vec()));
    let fitted = LogisticRegression::default()
        .alpha(alpha)
        .max_iterations(1000)
        .gradient_tolerance(1e-8)
        .fit(&dataset)
        .map_err(|e| Error::Training(e.to_string()))?;
    // linfa's probabilities are for its positive class; orient them to `true`.
    let sign = if fitted.labels().pos.class { 1.0 } else { -1.0 };
    Ok(Logistic {
        mean,
        scale,
        coefficients: fitted.params().iter().map(|c| sign * c).collect(),
        intercept: sign * fitted.intercept(),
    })
}

fn sigmoid(z: f64) -> f64 {
    1.0 / (1.0 + (-z).exp())
}

impl Model {
    /// Fits a model on feature rows `x` with labels `clean` (true = good, false = slop).
    pub fn fit(x: &[Vec<f64>], clean: &[bool], alpha: f64) -> Result<Model, Error> {
        let n = x.len();
        let fitted = fit_logistic(x, clean, alpha)?;
        Ok(Model {
            format: FORMAT,
            kind: "logistic regression (linfa-logistic 0.8, L2) on standardized features; output P(clean)".into(),
            features: FEATURES.iter().map(|(n, _)| (*n).to_owned()).collect(),
            mean: fitted.mean,
            scale: fitted.scale,
            coefficients: fitted.coefficients.iter().map(|c| round(*c)).collect(),
            intercept: round(fitted.intercept),
            training: Training {
                labels: String::new(),
                rows: n,
                good: clean.iter().filter(|&&c| c).count(),
                slop: clean.iter().filter(|&&c| !c).count(),
                mediocre_excluded: 0,
                data_hash: data_hash(x, clean),
                alpha,
                kinds: skills_only(),
            },
            metrics: serde_json::Value::Null,
        })
    }

    /// Reads an artifact, refusing other formats and other feature sets.
    pub fn from_json(text: &str) -> Result<Model, Error> {
        let m: Model = serde_json::from_str(text).map_err(|e| Error::Model(e.to_string()))?;
        if m.format != FORMAT {
            return Err(Error::Model(format!(
                "format {} (this skg reads {FORMAT})",
                m.format
            )));
        }
        let names: Vec<&str> = FEATURES.iter().map(|(n, _)| *n).collect();
        if m.features != names {
            return Err(Error::Model(
                "its features are not this skg's features: retrain it with `skg score train`"
                    .into(),
            ));
        }
        Ok(m)
    }

    /// The model committed with skg (`crates/skg-score/models/slop-v1.json`).
    pub fn bundled() -> Result<Model, Error> {
        Model::from_json(include_str!("../models/slop-v1.json"))
    }

    /// A content id of the model: blake3 of its canonical JSON (every coefficient, mean and
    /// scale; not the file's formatting). Two models score alike exactly when their ids agree,
    /// so the audit keys the score stage with it.
    pub fn content_id(&self) -> String {
        let bytes = serde_json::to_vec(self).unwrap_or_default();
        blake3::hash(&bytes).to_hex().to_string()
    }

    /// Whether its score judges an entry of `kind` (a kind it was fitted on).
    pub fn applies_to(&self, kind: SkillKind) -> bool {
        self.training.kinds.contains(&kind)
    }

    /// Standardized features.
    pub fn standardize(&self, x: &[f64]) -> Vec<f64> {
        x.iter()
            .zip(&self.mean)
            .zip(&self.scale)
            .map(|((v, m), s)| (v - m) / s)
            .collect()
    }

    /// P(clean): the slop score, 1 = clean, 0 = slop.
    pub fn slop_score(&self, x: &[f64]) -> f64 {
        let z: f64 = self
            .standardize(x)
            .iter()
            .zip(&self.coefficients)
            .map(|(v, c)| v * c)
            .sum::<f64>()
            + self.intercept;
        sigmoid(z)
    }

    /// Each feature's contribution to the log-odds of clean (coefficient × standardized value).
    pub fn contributions(&self, x: &[f64]) -> Vec<f64> {
        self.standardize(x)
            .iter()
            .zip(&self.coefficients)
            .map(|(v, c)| round(v * c))
            .collect()
    }
}

fn round(x: f64) -> f64 {
    (x * 1e9).round() / 1e9
}

/// blake3 over the rows and labels (little-endian f64s, one byte per label).
pub fn data_hash(x: &[Vec<f64>], clean: &[bool]) -> String {
    let mut h = blake3::Hasher::new();
    for (row, c) in x.iter().zip(clean) {
        for v in row {
            h.update(&v.to_le_bytes());
        }
        h.update(&[u8::from(*c)]);
    }
    h.finalize().to_hex().to_string()
}

/// Area under the ROC curve (defined once, in skg-model: the scan's evaluation uses it too).
pub use skg_model::auc;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn auc_by_hand() {
        assert_eq!(auc(&[0.9, 0.8, 0.1], &[true, true, false]), Some(1.0));
        assert_eq!(auc(&[0.1, 0.8, 0.9], &[true, true, false]), Some(0.0));
        // one tie of two pairs: (1 + 0.5) / 2
        assert_eq!(auc(&[0.5, 0.9, 0.5], &[true, true, false]), Some(0.75));
        assert_eq!(auc(&[0.5], &[true]), None);
    }
}
