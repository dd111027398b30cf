//! A learned second stage: the first stage's candidates re-ranked by a logistic regression over
//! features of each (query, skill) pair — the dense and BM25 evidence relative to the query's
//! other candidates, the fused rank, how much of the skill's name and description the query
//! says. The model is fitted outside this crate (the binary uses skg-score's
//! `fit_logistic`) and kept as a versioned JSON artifact ([`Ranker`]).

use std::collections::BTreeSet;

use serde::{Deserialize, Serialize};

use crate::{Answer, Index, Query, Result};

/// Candidates the second stage re-ranks.
pub const CANDIDATES: usize = 30;
/// Format version of the ranker artifact.
pub const RANKER_FORMAT: u32 = 1;

/// The features, in vector order, with what each measures.
/// Only evidence relative to the query and its other candidates: absolute scales (raw BM25, the
/// slop score) differ between catalogs, and a model fitted on one would not carry to another.
pub const RANK_FEATURES: [(&str, &str); 8] = [
    (
        "dense",
        "best cosine of the skill's abstract or overview with the query",
    ),
    (
        "dense_gap",
        "dense minus the best dense among the candidates (0 for the best)",
    ),
    (
        "section",
        "best cosine of the skill's embedded sections with the query (0 without)",
    ),
    (
        "section_gap",
        "section minus the best section among the candidates (0 for the best)",
    ),
    (
        "bm25_rel",
        "BM25 divided by the best BM25 among the candidates of its kind (package or tool)",
    ),
    (
        "fused_rank",
        "1 / the candidate's rank in the first stage's fusion",
    ),
    (
        "name_in_query",
        "share of the skill name's words that the query contains",
    ),
    (
        "desc_overlap",
        "share of the query's words that the skill's description contains",
    ),
];

/// A fitted second stage.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Ranker {
    /// [`RANKER_FORMAT`].
    pub format: u32,
    /// Feature names, in vector order ([`RANK_FEATURES`]).
    pub features: Vec<String>,
    /// Training means.
    pub mean: Vec<f64>,
    /// Training standard deviations.
    pub scale: Vec<f64>,
    /// Coefficients on the standardized features (log-odds of a gold skill).
    pub coefficients: Vec<f64>,
    /// Intercept.
    pub intercept: f64,
    /// What it was trained on (files, queries, rows, the data's blake3).
    pub training: serde_json::Value,
}

impl Ranker {
    /// Reads an artifact, refusing other formats and feature sets.
    pub fn from_json(text: &str) -> std::result::Result<Ranker, String> {
        let r: Ranker = serde_json::from_str(text).map_err(|e| e.to_string())?;
        let names: Vec<&str> = RANK_FEATURES.iter().map(|f| f.0).collect();
        if r.format != RANKER_FORMAT || r.features != names {
            return Err(format!(
                "ranker format {} with features {:?}: this skg reads format {RANKER_FORMAT} with {names:?}",
                r.format, r.features
            ));
        }
        Ok(r)
    }

    /// The log-odds that a candidate with features `x` is a gold skill.
    pub fn score(&self, x: &[f64]) -> f64 {
        self.intercept
            + x.iter()
                .zip(&self.mean)
                .zip(&self.scale)
                .zip(&self.coefficients)
                .map(|(((v, m), s), c)| c * (v - m) / s)
                .sum::<f64>()
    }
}

/// Lowercase words of a text (letters and digits), camelCase and `-`/`_` split.
fn words(text: &str) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    let mut cur = String::new();
    let mut prev_lower = false;
    for c in text.chars() {
        if c.is_alphanumeric() {
            if c.is_uppercase() && prev_lower && !cur.is_empty() {
                out.insert(std::mem::take(&mut cur));
            }
            prev_lower = c.is_lowercase();
            cur.extend(c.to_lowercase());
        } else {
            prev_lower = false;
            if !cur.is_empty() {
                out.insert(std::mem::take(&mut cur));
            }
        }
    }
    if !cur.is_empty() {
        out.insert(cur);
    }
    out.retain(|w| w.chars().count() > 2);
    out
}

/// Best cosine of `vector` with a skill's abstract/overview vectors and with its section vectors.
fn cosines(index: &Index, skill: u32, vector: Option<&[f32]>) -> (f32, f32) {
    let Some(v) = vector else {
        return (0.0, 0.0);
    };
    // Documents are stored by skill (the skills' order), so a skill's are one range.
    let from = index.docs.partition_point(|d| d.skill < skill);
    let to = index.docs.partition_point(|d| d.skill <= skill);
    let (mut card, mut section) = (0.0f32, 0.0f32);
    for doc in from..to {
        let Some(w) = u32::try_from(doc).ok().and_then(|d| index.vector_of(d)) else {
            continue;
        };
        let c: f32 = v.iter().zip(w).map(|(a, b)| a * b).sum();
        if index.docs[doc].level == skg_model::Level::L2 {
            section = section.max(c);
        } else {
            card = card.max(c);
        }
    }
    (card, section)
}

/// The features of every candidate of `answer` (its hits, in first-stage order) for `query`
/// (`vector`: its embedding, when the index has vectors).
pub fn features(
    index: &Index,
    query: &str,
    vector: Option<&[f32]>,
    answer: &Answer,
) -> Vec<Vec<f64>> {
    let q = words(query);
    let cos: Vec<(f32, f32)> = answer
        .hits
        .iter()
        .map(|h| cosines(index, h.skill, vector))
        .collect();
    let best_dense = cos.iter().map(|c| c.0).fold(0.0f32, f32::max);
    let best_section = cos.iter().map(|c| c.1).fold(0.0f32, f32::max);
    // BM25 relative to the best of the candidate's own kind: over a catalog of both kinds their
    // scores are not on one scale (see `Index::bm25_skills`).
    let kind = |h: &crate::Hit| index.skills[h.skill as usize].kind;
    let best_bm25 = |k| {
        answer
            .hits
            .iter()
            .filter(|h| kind(h) == k)
            .map(|h| h.bm25)
            .fold(0.0f32, f32::max)
    };
    answer
        .hits
        .iter()
        .enumerate()
        .map(|(rank, h)| {
            let s = &index.skills[h.skill as usize];
            let name = words(&s.name);
            let desc = words(&s.description);
            let share = |part: &BTreeSet<String>, of: &BTreeSet<String>| -> f64 {
                if of.is_empty() {
                    0.0
                } else {
                    of.iter().filter(|w| part.contains(*w)).count() as f64 / of.len() as f64
                }
            };
            let (card, section) = cos[rank];
            vec![
                f64::from(card),
                f64::from(card - best_dense),
                f64::from(section),
                f64::from(section - best_section),
                match best_bm25(kind(h)) {
                    b if b > 0.0 => f64::from(h.bm25 / b),
                    _ => 0.0,
                },
                1.0 / (rank + 1) as f64,
                share(&q, &name),
                share(&desc, &q),
            ]
        })
        .collect()
}

/// The first stage's candidates for `query` (at most [`CANDIDATES`], no floor).
pub fn candidates(index: &Index, base: &Query<'_>) -> Result<Answer> {
    let mut q = base.clone();
    q.k = CANDIDATES;
    q.pool = q.pool.max(CANDIDATES);
    q.min_score = f32::NEG_INFINITY;
    index.search(&q)
}

/// `answer`'s hits re-ranked by `ranker` (ties keep the first stage's order).
pub fn rerank(
    index: &Index,
    query: &str,
    vector: Option<&[f32]>,
    answer: &Answer,
    ranker: &Ranker,
) -> Vec<u32> {
    let xs = features(index, query, vector, answer);
    let mut scored: Vec<(f64, usize, u32)> = answer
        .hits
        .iter()
        .zip(&xs)
        .enumerate()
        .map(|(i, (h, x))| (ranker.score(x), i, h.skill))
        .collect();
    scored.sort_by(|a, b| b.0.total_cmp(&a.0).then(a.1.cmp(&b.1)));
    scored.into_iter().map(|(_, _, s)| s).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn words_split_case_and_separators_and_drop_short_ones() {
        let w: Vec<String> = words("mergePDF-files into ONE_doc a").into_iter().collect();
        assert_eq!(w, ["doc", "files", "into", "merge", "one", "pdf"]);
    }
}

/// One judged query's first-stage candidates with their features.
#[derive(Debug, Clone)]
pub struct Candidates {
    /// The candidates, in first-stage order.
    pub skills: Vec<u32>,
    /// Their features ([`RANK_FEATURES`]).
    pub features: Vec<Vec<f64>>,
    /// The query's relevant skills.
    pub judged: crate::Judged,
}

/// The first stage's candidates and their features for every judged query (hybrid when the
/// index has vectors, else BM25), as `options` retrieves them.
pub fn collect(
    index: &Index,
    queries: &[crate::JudgedQuery],
    options: &crate::EvalOptions,
    embed: &mut crate::EmbedFn<'_>,
) -> Result<Vec<Candidates>> {
    let (judged, _) = crate::judged::judge_all(index, queries);
    let mut out = Vec::with_capacity(queries.len());
    for (q, j) in queries.iter().zip(judged) {
        let vector = if index.dim() > 0 {
            Some(embed(&q.query).map_err(crate::Error::Embed)?)
        } else {
            None
        };
        let mode = if vector.is_some() {
            crate::Mode::Hybrid
        } else {
            crate::Mode::Bm25
        };
        let answer = candidates(
            index,
            &options.query(&q.query, vector.as_ref(), mode, CANDIDATES),
        )?;
        out.push(Candidates {
            skills: answer.hits.iter().map(|h| h.skill).collect(),
            features: features(
                index,
                &q.query,
                vector.as_ref().map(|e| e.vector.as_slice()),
                &answer,
            ),
            judged: j,
        });
    }
    Ok(out)
}

/// Training rows: every candidate's features, labelled by whether it is a gold skill.
pub fn rows<'a>(cands: impl IntoIterator<Item = &'a Candidates>) -> (Vec<Vec<f64>>, Vec<bool>) {
    let mut x = Vec::new();
    let mut y = Vec::new();
    for c in cands {
        for (s, f) in c.skills.iter().zip(&c.features) {
            x.push(f.clone());
            y.push(c.judged.gold.contains(s));
        }
    }
    (x, y)
}

/// blake3 of training rows (features as little-endian f64, then the labels), for the artifact.
pub fn data_hash(x: &[Vec<f64>], y: &[bool]) -> String {
    let mut h = blake3::Hasher::new();
    for row in x {
        for v in row {
            h.update(&v.to_le_bytes());
        }
    }
    h.update(&y.iter().map(|&b| u8::from(b)).collect::<Vec<u8>>());
    h.finalize().to_hex().to_string()
}

/// Each query's outcome with its candidates ranked by `ranker` (or in first-stage order).
pub fn outcomes<'a>(
    cands: impl IntoIterator<Item = &'a Candidates>,
    ranker: Option<&Ranker>,
) -> Vec<crate::QueryOutcome> {
    cands
        .into_iter()
        .map(|c| {
            let ranking: Vec<u32> = match ranker {
                Some(r) => {
                    let mut scored: Vec<(f64, usize, u32)> = c
                        .skills
                        .iter()
                        .zip(&c.features)
                        .enumerate()
                        .map(|(i, (s, x))| (r.score(x), i, *s))
                        .collect();
                    scored.sort_by(|a, b| b.0.total_cmp(&a.0).then(a.1.cmp(&b.1)));
                    scored.into_iter().map(|(_, _, s)| s).collect()
                }
                None => c.skills.clone(),
            };
            crate::judge(&ranking, &c.judged)
        })
        .collect()
}

/// A fitted logistic model's parameters, from whichever learner the caller uses (the binary
/// plugs skg-score's `fit_logistic` in): standardization and the log-odds of a gold skill.
#[derive(Debug, Clone, PartialEq)]
pub struct Fitted {
    /// Feature means.
    pub mean: Vec<f64>,
    /// Feature standard deviations.
    pub scale: Vec<f64>,
    /// Coefficients on the standardized features.
    pub coefficients: Vec<f64>,
    /// Intercept.
    pub intercept: f64,
}

/// Fits a model on rows `x` labelled `y`.
pub type FitFn<'a> = dyn Fn(&[Vec<f64>], &[bool]) -> std::result::Result<Fitted, String> + 'a;

/// A ranker fitted on the candidates of `train`; `training` says what they are (files,
/// revision), and the row counts and data hash are added.
pub fn train(
    train: &[&Candidates],
    fit: &FitFn<'_>,
    mut training: serde_json::Value,
) -> std::result::Result<Ranker, String> {
    let (x, y) = rows(train.iter().copied());
    let f = fit(&x, &y)?;
    if let Some(t) = training.as_object_mut() {
        t.insert("judged_queries".into(), train.len().into());
        t.insert("rows".into(), x.len().into());
        t.insert("positives".into(), y.iter().filter(|&&b| b).count().into());
        t.insert("data_hash".into(), data_hash(&x, &y).into());
    }
    Ok(Ranker {
        format: RANKER_FORMAT,
        features: RANK_FEATURES.iter().map(|f| f.0.to_owned()).collect(),
        mean: f.mean,
        scale: f.scale,
        coefficients: f.coefficients,
        intercept: f.intercept,
        training,
    })
}

/// The metrics of `k`-fold cross-validation: queries in fold `i % k`, each fold ranked by a model
/// fitted on the others.
pub fn cross_validate(
    cands: &[Candidates],
    k: usize,
    fit: &FitFn<'_>,
) -> std::result::Result<crate::Metrics, String> {
    let k = k.max(2);
    let mut held_out = Vec::with_capacity(cands.len());
    for fold in 0..k {
        let in_fold = |i: &usize| i % k == fold;
        let rest: Vec<&Candidates> = cands
            .iter()
            .enumerate()
            .filter(|(i, _)| !in_fold(i))
            .map(|(_, c)| c)
            .collect();
        let ranker = train(&rest, fit, serde_json::json!({}))?;
        let test = cands
            .iter()
            .enumerate()
            .filter(|(i, _)| in_fold(i))
            .map(|(_, c)| c);
        held_out.extend(outcomes(test, Some(&ranker)));
    }
    Ok(crate::summarize(&held_out))
}
