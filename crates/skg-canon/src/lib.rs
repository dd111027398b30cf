//! Cross-registry deduplication: which skills are copies of one another (merged into a cluster
//! with one canonical and aliases), which are independently written skills with the same purpose
//! (linked as variants, never merged), and which canonical to keep.
//!
//! The pipeline, one module each:
//! 1. [`prep`] — per-skill fingerprints: body shingles and their MinHash signature, body/head/
//!    description hashes, name key, script structural hashes, declared upstream, quality.
//! 2. [`lsh`] — candidate pairs from shared blocking keys (sub-quadratic; never all pairs).
//! 3. [`judge`] — exact signals on each candidate and a duplicate / variant / distinct decision.
//! 4. clustering (here) — duplicates are joined strongest first, but two clusters merge only when
//!    every member of the merged cluster is itself a duplicate of its canonical (no A~B~C
//!    drift); variants link canonicals.
//!
//! Every step is deterministic: parallel work is collected and sorted, hash functions are seeded
//! with constants, ties are broken by skill id.

mod cluster;
pub mod eval;
pub mod judge;
pub mod lsh;
mod prep;
mod summary;
pub mod synth;
mod text;

use std::{collections::BTreeMap, fmt::Write as _};

use rayon::prelude::*;
use serde::Serialize;
use skg_model::{Cluster, Edge, Member, Progress, Skill, SkillId};

pub use crate::{
    judge::{Signals, Thresholds, Verdict, decide},
    lsh::Blocking,
    prep::completeness,
    summary::{RegistryCounts, RegistryTable, in_degree},
};
use crate::{lsh::Key, prep::Prep};

/// Tuning of the whole stage (the audit hashes it, serialized, into canonicalize's key).
#[derive(Debug, Clone, Copy, PartialEq, Default, Serialize, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Options {
    /// Candidate blocking.
    pub blocking: Blocking,
    /// Decision thresholds.
    pub thresholds: Thresholds,
}

/// What canonicalization reads.
#[derive(Debug, Clone, Copy)]
pub struct Input<'a> {
    /// The skills, in any order (they are processed by id).
    pub skills: &'a [Skill],
    /// L2-normalized description embeddings, one per skill in `skills` order; `None` falls back
    /// to lexical description similarity.
    pub vectors: Option<&'a [Vec<f32>]>,
    /// Slop scores by skill (1 = clean) from `skg score`; skills without one use
    /// [`completeness`].
    pub scores: Option<&'a BTreeMap<SkillId, f64>>,
    /// Relation edges pointing at each skill (from extract). Between copies of equal quality
    /// the one other skills refer to is the original; absent skills count 0.
    pub in_degree: Option<&'a BTreeMap<SkillId, u32>>,
}

/// Counts describing one run.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct Stats {
    /// Skills read.
    pub skills: usize,
    /// `embedding` or `lexical`.
    pub similarity: &'static str,
    /// Candidate pairs from blocking (exact signals were computed for these only).
    pub candidate_pairs: usize,
    /// All pairs (what an exhaustive comparison would have measured).
    pub all_pairs: u64,
    /// Candidates judged duplicates.
    pub duplicate_pairs: usize,
    /// Candidates judged variants.
    pub variant_pairs: usize,
    /// Duplicate links not followed because the two clusters' canonicals are not duplicates.
    pub chain_merges_refused: usize,
    /// Clusters whose canonical moved to another member so that no two canonicals are duplicates
    /// (re-canonicalizing the routable output merges nothing more).
    pub canonicals_moved: usize,
    /// Pairs of canonicals still judged duplicates after that (0 unless no member could move).
    pub unsettled: usize,
    /// Clusters (including clusters of one).
    pub clusters: usize,
    /// Clusters with more than one member.
    pub multi_clusters: usize,
    /// Skills that became aliases (`duplicate`).
    pub duplicates: usize,
    /// Canonicals linked as `variant` of a better one.
    pub variants: usize,
}

/// Everything `skg canonicalize` produces, sorted for byte-identical output.
#[derive(Debug, Clone, Default)]
pub struct Canonicalization {
    /// One row per input skill, by id.
    pub members: Vec<Member>,
    /// One row per cluster, by id.
    pub clusters: Vec<Cluster>,
    /// `duplicate_of` (alias → canonical) and `variant_of` (variant → better canonical) edges.
    pub edges: Vec<Edge>,
    /// Counts.
    pub stats: Stats,
}

/// Fingerprinted skills, ready to be compared.
#[derive(Debug)]
pub struct Index<'a> {
    skills: Vec<&'a Skill>,
    vectors: Option<Vec<&'a [f32]>>,
    prep: Vec<Prep>,
    quality_source: Vec<&'static str>,
    in_degree: Vec<u32>,
    options: Options,
}

impl<'a> Index<'a> {
    /// Fingerprints every skill (in parallel).
    pub fn build(input: &Input<'a>, options: &Options) -> Index<'a> {
        let mut order: Vec<usize> = (0..input.skills.len()).collect();
        order.sort_by(|&a, &b| input.skills[a].id.cmp(&input.skills[b].id));
        let skills: Vec<&Skill> = order.iter().map(|&i| &input.skills[i]).collect();
        let vectors = input
            .vectors
            .map(|v| order.iter().map(|&i| v[i].as_slice()).collect());
        let (quality, quality_source): (Vec<f64>, Vec<&'static str>) = skills
            .iter()
            .map(|s| match input.scores.and_then(|m| m.get(&s.id)) {
                Some(&q) => (q, "slop_score"),
                None => (completeness(s), "completeness"),
            })
            .unzip();
        let prep = prep::prepare(&skills, &quality, options.blocking.minhash_len());
        let in_degree = skills
            .iter()
            .map(|s| {
                input
                    .in_degree
                    .and_then(|m| m.get(&s.id))
                    .copied()
                    .unwrap_or(0)
            })
            .collect();
        Index {
            skills,
            vectors,
            prep,
            quality_source,
            in_degree,
            options: *options,
        }
    }

    /// Skills, by id.
    pub fn skills(&self) -> &[&'a Skill] {
        &self.skills
    }

    /// Position of a skill id.
    pub fn position(&self, id: &SkillId) -> Option<usize> {
        self.skills.binary_search_by(|s| s.id.cmp(id)).ok()
    }

    /// Signals and decision for skills at positions `i` and `j`.
    pub fn judge(&self, i: usize, j: usize) -> (Signals, Verdict, &'static str) {
        let cos = self.vectors.as_ref().map(|v| f64::from(dot(v[i], v[j])));
        let s = judge::signals(&self.prep[i], &self.prep[j], cos);
        let (v, rule) = decide(&s, &self.options.thresholds);
        (s, v, rule)
    }

    /// How alike the descriptions of skills `i` and `j` are: cosine of their vectors, or the
    /// Jaccard of their content words without vectors.
    pub fn description_similarity(&self, i: usize, j: usize) -> f64 {
        match &self.vectors {
            Some(v) => f64::from(dot(v[i], v[j])),
            None => text::jaccard(&self.prep[i].desc_words, &self.prep[j].desc_words),
        }
    }

    /// Candidate pairs `(i, j)`, `i < j`, sorted.
    pub fn candidates(&self) -> Vec<(u32, u32)> {
        let b = &self.options.blocking;
        let idx = |i: usize| u32::try_from(i).unwrap_or(u32::MAX);
        let mut keys: Vec<Key> = Vec::new();
        for (i, p) in self.prep.iter().enumerate() {
            let i = idx(i);
            if p.body_hash != 0 {
                keys.push((0, p.body_hash, i));
            }
            if p.head_hash != 0 {
                keys.push((1, p.head_hash, i));
            }
            if p.desc_hash != 0 {
                keys.push((2, p.desc_hash, i));
            }
            if p.name_key.chars().count() >= 3 {
                keys.push((3, text::hash_str(&p.name_key), i));
            }
            if p.name_stem.chars().count() >= 3 {
                keys.push((4, text::hash_str(&p.name_stem), i));
            }
            for (h, tokens) in &p.scripts {
                if *tokens >= self.options.thresholds.script_min_tokens {
                    keys.push((5, text::hash_str(h), i));
                }
            }
            if !p.shingles.is_empty() {
                for (band, rows) in p.signature.chunks(b.minhash_rows).enumerate() {
                    let mut h = 0u64;
                    for r in rows {
                        h = text::hash_u64(h ^ r);
                    }
                    keys.push((16 + idx(band), h, i));
                }
            }
        }
        if let Some(vs) = &self.vectors {
            {
                let dim = vs.first().map_or(0, |v| v.len());
                let planes = lsh::hyperplanes(b.simhash_tables, b.simhash_bits, dim);
                let sim: Vec<Vec<u64>> = vs
                    .par_iter()
                    .map(|v| lsh::simhash_keys(v, &planes, b.simhash_bits))
                    .collect();
                for (i, ks) in sim.iter().enumerate() {
                    if self.prep[i].desc_hash == 0 {
                        continue;
                    }
                    for (t, &k) in ks.iter().enumerate() {
                        keys.push((1000 + idx(t), k, idx(i)));
                    }
                }
            }
        } else {
            {
                // Lexical fallback: MinHash over description content words, 16 bands × 3 rows.
                let sigs: Vec<Vec<u64>> = self
                    .prep
                    .par_iter()
                    .map(|p| lsh::minhash(&p.desc_words, 48))
                    .collect();
                for (i, sig) in sigs.iter().enumerate() {
                    if self.prep[i].desc_words.len() < 3 {
                        continue;
                    }
                    for (band, rows) in sig.chunks(3).enumerate() {
                        let mut h = 0u64;
                        for r in rows {
                            h = text::hash_u64(h ^ r);
                        }
                        keys.push((1000 + idx(band), h, idx(i)));
                    }
                }
            }
        }
        let order: Vec<&[u64]> = self.prep.iter().map(|p| p.signature.as_slice()).collect();
        lsh::pairs_from_keys(keys, &order, b)
    }
}

fn dot(a: &[f32], b: &[f32]) -> f32 {
    a.iter().zip(b).map(|(x, y)| x * y).sum()
}

/// Runs the whole stage.
pub fn canonicalize(
    input: &Input<'_>,
    options: &Options,
    progress: &dyn Progress,
) -> Canonicalization {
    progress.phase("fingerprint", input.skills.len() as u64);
    let index = Index::build(input, options);
    progress.advance(input.skills.len() as u64);
    index.canonicalize(progress)
}

impl Index<'_> {
    /// Blocks, judges, clusters and picks canonicals.
    pub fn canonicalize(&self, progress: &dyn Progress) -> Canonicalization {
        self.canonicalize_candidates(&self.candidates(), progress)
    }

    /// [`Index::canonicalize`] on candidates already computed with [`Index::candidates`] (a
    /// caller that also needs them, to score labelled pairs, blocks once).
    pub fn canonicalize_candidates(
        &self,
        candidates: &[(u32, u32)],
        progress: &dyn Progress,
    ) -> Canonicalization {
        cluster::run(self, candidates, progress)
    }
}

/// The signals of a pair in one line.
pub fn describe(s: &Signals) -> String {
    let mut out = format!(
        "body_jaccard={:.2} containment={:.2} desc_jaccard={:.2} name_sim={:.2}",
        s.body_jaccard, s.containment, s.desc_jaccard, s.name_similarity
    );
    if let Some(c) = s.desc_cosine {
        let _ = write!(out, " desc_cosine={c:.3}");
    }
    if s.same_body {
        out.push_str(" same_body");
    }
    if s.scripts_shared > 0 {
        let _ = write!(
            out,
            " scripts_shared={}/{}",
            s.scripts_shared, s.scripts_min
        );
    }
    if s.same_source {
        out.push_str(" same_source");
    }
    out
}

/// The text of a skill that is embedded: its description, or when it has none, the start of its
/// body (at most 600 characters), whitespace collapsed.
pub fn description_text(s: &Skill) -> String {
    let src = if s.description.trim().is_empty() {
        s.body.chars().take(600).collect::<String>()
    } else {
        s.description.clone()
    };
    src.split_whitespace().collect::<Vec<_>>().join(" ")
}
