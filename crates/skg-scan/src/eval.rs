//! The scan measured on labelled packages: precision, recall, F1, false-positive rate, per attack type.

use std::collections::BTreeMap;

use serde::Serialize;

use crate::{Scan, VerdictKind};

/// A labels file could not be used.
#[derive(Debug, thiserror::Error)]
pub enum LabelError {
    /// Not CSV with `path,label[,attack_type]` columns.
    #[error("{0}")]
    Format(String),
}

/// One labelled package: its path (a package folder, or a file whose folder is the package),
/// malicious or not, and the attack type.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Label {
    /// Package root relative to the registry root.
    pub root: String,
    /// Malicious.
    pub malicious: bool,
    /// Attack type (`none` for benign).
    pub attack_type: String,
}

/// Reads `path,label,attack_type` rows (`label`: `malicious` or `benign`; other columns ignored).
pub fn read_labels(text: &str) -> Result<Vec<Label>, LabelError> {
    let mut rdr = csv::ReaderBuilder::new().from_reader(text.as_bytes());
    let headers = rdr
        .headers()
        .map_err(|e| LabelError::Format(e.to_string()))?
        .clone();
    let col = |name: &str| headers.iter().position(|h| h == name);
    let (Some(p), Some(l)) = (col("path"), col("label")) else {
        return Err(LabelError::Format(
            "labels need `path` and `label` columns".into(),
        ));
    };
    let t = col("attack_type");
    let mut out = Vec::new();
    for (i, row) in rdr.records().enumerate() {
        let row = row.map_err(|e| LabelError::Format(format!("line {}: {e}", i + 2)))?;
        let path = row.get(p).unwrap_or("").trim_end_matches('/');
        let label = row.get(l).unwrap_or("");
        let malicious = match label {
            "malicious" => true,
            "benign" => false,
            other => {
                return Err(LabelError::Format(format!(
                    "line {}: label `{other}` is neither malicious nor benign",
                    i + 2
                )));
            }
        };
        // A file path names the package folder it sits in.
        let last = path.rsplit('/').next().unwrap_or(path);
        let is_file = last.rsplit_once('.').is_some_and(|(_, ext)| {
            matches!(
                ext,
                "json" | "md" | "yaml" | "yml" | "toml" | "py" | "js" | "ts" | "sh"
            )
        });
        let root = if is_file {
            path.rsplit_once('/').map_or(".", |(d, _)| d)
        } else {
            path
        };
        out.push(Label {
            root: root.to_owned(),
            malicious,
            attack_type: t.and_then(|t| row.get(t)).unwrap_or("").to_owned(),
        });
    }
    Ok(out)
}

/// Detection figures at one operating point.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct Confusion {
    /// Malicious flagged.
    pub tp: usize,
    /// Benign flagged.
    pub fp: usize,
    /// Malicious not flagged.
    pub r#fn: usize,
    /// Benign not flagged.
    pub tn: usize,
    /// tp / (tp + fp).
    pub precision: f64,
    /// tp / (tp + fn).
    pub recall: f64,
    /// Harmonic mean of precision and recall.
    pub f1: f64,
    /// fp / (fp + tn).
    pub false_positive_rate: f64,
}

impl Confusion {
    fn of(pairs: &[(bool, bool)]) -> Confusion {
        let mut c = Confusion::default();
        for &(truth, flagged) in pairs {
            match (truth, flagged) {
                (true, true) => c.tp += 1,
                (false, true) => c.fp += 1,
                (true, false) => c.r#fn += 1,
                (false, false) => c.tn += 1,
            }
        }
        let div = |a: usize, b: usize| if b == 0 { 0.0 } else { a as f64 / b as f64 };
        c.precision = div(c.tp, c.tp + c.fp);
        c.recall = div(c.tp, c.tp + c.r#fn);
        c.f1 = if c.precision + c.recall > 0.0 {
            2.0 * c.precision * c.recall / (c.precision + c.recall)
        } else {
            0.0
        };
        c.false_positive_rate = div(c.fp, c.fp + c.tn);
        c
    }
}

/// Recall per attack type (and the benign row's flag rate).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct TypeRecall {
    /// Attack type.
    pub attack_type: String,
    /// Labelled packages of the type.
    pub n: usize,
    /// Of them, `unsafe`.
    pub r#unsafe: usize,
    /// Of them, `suspicious` or `unsafe`.
    pub flagged: usize,
}

/// The scan against labels.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Evaluation {
    /// Labelled packages found in the scan.
    pub matched: usize,
    /// Labels with no scanned package.
    pub unmatched: Vec<String>,
    /// Positive = `unsafe` (what quarantines).
    pub r#unsafe: Confusion,
    /// Positive = `suspicious` or `unsafe` (what a reviewer sees).
    pub flagged: Confusion,
    /// ROC AUC of the score (ties count half; `None` without both classes).
    pub auc: Option<f64>,
    /// Per attack type.
    pub by_type: Vec<TypeRecall>,
}

/// Matches labels to scanned packages by root and measures.
pub fn evaluate(scan: &Scan, labels: &[Label]) -> Evaluation {
    let by_root: BTreeMap<&str, &crate::Verdict> = scan
        .verdicts
        .iter()
        .map(|v| {
            let id = v.skill_id.as_str();
            let root = id.split_once(':').map_or(id, |(_, r)| r);
            (root, v)
        })
        .collect();
    let mut unsafe_pairs = Vec::new();
    let mut flagged_pairs = Vec::new();
    let mut scored = Vec::new();
    let mut unmatched = Vec::new();
    let mut types: BTreeMap<&str, TypeRecall> = BTreeMap::new();
    for l in labels {
        let Some(v) = by_root.get(l.root.as_str()) else {
            unmatched.push(l.root.clone());
            continue;
        };
        let is_unsafe = v.verdict == VerdictKind::Unsafe;
        let flagged = v.verdict != VerdictKind::Safe;
        unsafe_pairs.push((l.malicious, is_unsafe));
        flagged_pairs.push((l.malicious, flagged));
        scored.push((l.malicious, v.score));
        let t = types.entry(&l.attack_type).or_insert_with(|| TypeRecall {
            attack_type: l.attack_type.clone(),
            n: 0,
            r#unsafe: 0,
            flagged: 0,
        });
        t.n += 1;
        t.r#unsafe += usize::from(is_unsafe);
        t.flagged += usize::from(flagged);
    }
    Evaluation {
        matched: unsafe_pairs.len(),
        unmatched,
        r#unsafe: Confusion::of(&unsafe_pairs),
        flagged: Confusion::of(&flagged_pairs),
        auc: skg_model::auc(
            &scored.iter().map(|s| s.1).collect::<Vec<_>>(),
            &scored.iter().map(|s| s.0).collect::<Vec<_>>(),
        ),
        by_type: types.into_values().collect(),
    }
}

impl std::fmt::Display for Evaluation {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        writeln!(
            f,
            "labelled packages matched: {} (unmatched {})",
            self.matched,
            self.unmatched.len()
        )?;
        writeln!(
            f,
            "{:<22} {:>9} {:>7} {:>6} {:>6}  tp/fp/fn/tn",
            "positive =", "precision", "recall", "F1", "FPR"
        )?;
        for (name, c) in [
            ("unsafe", &self.r#unsafe),
            ("suspicious or unsafe", &self.flagged),
        ] {
            writeln!(
                f,
                "{name:<22} {:>9.3} {:>7.3} {:>6.3} {:>6.3}  {}/{}/{}/{}",
                c.precision, c.recall, c.f1, c.false_positive_rate, c.tp, c.fp, c.r#fn, c.tn
            )?;
        }
        match self.auc {
            Some(a) => writeln!(f, "score ROC AUC {a:.3}")?,
            None => writeln!(f, "score ROC AUC n/a (one class only)")?,
        }
        writeln!(
            f,
            "{:<24} {:>4} {:>7} {:>8}",
            "attack type", "n", "unsafe", "flagged"
        )?;
        for t in &self.by_type {
            writeln!(
                f,
                "{:<24} {:>4} {:>7} {:>8}",
                t.attack_type, t.n, t.r#unsafe, t.flagged
            )?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn confusion_and_auc_by_hand() {
        // 2 malicious (one flagged), 2 benign (one flagged): P 0.5, R 0.5, F1 0.5, FPR 0.5.
        let c = Confusion::of(&[(true, true), (true, false), (false, true), (false, false)]);
        assert_eq!((c.tp, c.fp, c.r#fn, c.tn), (1, 1, 1, 1));
        assert!((c.precision - 0.5).abs() < 1e-12 && (c.f1 - 0.5).abs() < 1e-12);
        // Positives 0.9, 0.4; negatives 0.4, 0.1: pairs (0.9>0.4, 0.9>0.1, 0.4=0.4, 0.4>0.1) = 3.5/4.
        let a = skg_model::auc(&[0.9, 0.4, 0.4, 0.1], &[true, true, false, false]).unwrap_or(-1.0);
        assert!((a - 0.875).abs() < 1e-12, "{a}");
    }

    #[test]
    fn labels_name_package_folders_or_files_in_them() {
        let l = read_labels(
            "path,label,attack_type\nskills/a,malicious,A1:x\nskills/b/.mcp.json,benign,none\n",
        )
        .unwrap_or_default();
        assert_eq!(l.len(), 2);
        assert_eq!((l[0].root.as_str(), l[0].malicious), ("skills/a", true));
        assert_eq!((l[1].root.as_str(), l[1].malicious), ("skills/b", false));
        assert!(read_labels("path,label\nx,maybe\n").is_err());
    }
}
