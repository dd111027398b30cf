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

mod cache;
pub mod judge;
pub mod lsh;
mod prep;
pub mod synth;
mod text;

use std::{
    collections::{BTreeMap, BTreeSet},
    fmt::Write as _,
};

use rayon::prelude::*;
use serde::Serialize;
use skg_model::{
    Cluster, Edge, EdgeKind, EdgeSource, Evidence, Member, Progress, RiskTier, Role, Skill, SkillId,
};

pub use crate::{
    cache::{CacheError, EmbeddingCache},
    judge::{Signals, Thresholds, Verdict, decide},
    lsh::Blocking,
    prep::completeness,
};
use crate::{lsh::Key, prep::Prep};

/// Tuning of the whole stage.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
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
        run(self, candidates, progress)
    }
}

fn run(index: &Index<'_>, candidates: &[(u32, u32)], progress: &dyn Progress) -> Canonicalization {
    let n = index.skills.len();
    progress.phase("compare candidates", candidates.len() as u64);
    let judged: Vec<(u32, u32, Signals, Verdict)> = candidates
        .par_chunks(4096)
        .flat_map_iter(|chunk| {
            let out: Vec<_> = chunk
                .iter()
                .filter_map(|&(i, j)| {
                    let (s, v, _) = index.judge(i as usize, j as usize);
                    (v != Verdict::Distinct).then_some((i, j, s, v))
                })
                .collect();
            progress.advance(chunk.len() as u64);
            out
        })
        .collect();
    let mut stats = Stats {
        skills: n,
        similarity: if index.vectors.is_some() {
            "embedding"
        } else {
            "lexical"
        },
        candidate_pairs: candidates.len(),
        all_pairs: (n as u64) * (n as u64).saturating_sub(1) / 2,
        ..Stats::default()
    };
    // The better of two skills: not instructing something dangerous (a copy with an injected
    // pipe-to-shell or backdoor never becomes canonical over a clean one), then higher quality,
    // then more skills referring to it, then the smaller id. A strict total order, so variant
    // links can't form cycles.
    let better = |a: usize, b: usize| -> usize {
        let key = |x: usize| {
            (
                index.skills[x].risk_tier != RiskTier::Unsafe,
                index.prep[x].quality,
                index.in_degree[x],
                std::cmp::Reverse(x),
            )
        };
        if key(a) > key(b) { a } else { b }
    };

    // Duplicates, strongest first; clusters merge only when their canonicals agree.
    let mut dups: Vec<&(u32, u32, Signals, Verdict)> = judged
        .iter()
        .filter(|x| x.3 == Verdict::Duplicate)
        .collect();
    stats.duplicate_pairs = dups.len();
    stats.variant_pairs = judged.len() - dups.len();
    dups.sort_by(|x, y| {
        strength(&y.2)
            .partial_cmp(&strength(&x.2))
            .unwrap_or(std::cmp::Ordering::Equal)
            .then((x.0, x.1).cmp(&(y.0, y.1)))
    });
    // Invariants: every member of a cluster is itself judged a duplicate of the cluster's
    // canonical, and of up to `LINKAGE_SAMPLE` other members (the earliest; complete linkage on a
    // sample, so a bundle B = A + C can't pull unrelated A and C together). A merge that would
    // break them is refused.
    let mut uf = UnionFind::new(n);
    let mut rep: Vec<usize> = (0..n).collect();
    let mut cluster_of: Vec<Vec<usize>> = (0..n).map(|i| vec![i]).collect();
    for &&(i, j, _, _) in &dups {
        let (ri, rj) = (uf.find(i as usize), uf.find(j as usize));
        if ri == rj {
            continue;
        }
        let (ci, cj) = (rep[ri], rep[rj]);
        let top = better(ci, cj);
        let other = if top == ci { rj } else { ri };
        let direct = |m: usize| {
            m == top
                || (m.min(top), m.max(top)) == (i as usize, j as usize)
                || index.judge(m.min(top), m.max(top)).1 == Verdict::Duplicate
        };
        let own = if other == ri { rj } else { ri };
        let sample: Vec<usize> = cluster_of[own]
            .iter()
            .copied()
            .filter(|&y| y != top)
            .take(LINKAGE_SAMPLE)
            .collect();
        let linked = |m: usize| {
            sample.iter().all(|&y| {
                (m.min(y), m.max(y)) == (i as usize, j as usize)
                    || index.judge(m.min(y), m.max(y)).1 == Verdict::Duplicate
            })
        };
        if !cluster_of[other].iter().all(|&m| direct(m) && linked(m)) {
            stats.chain_merges_refused += 1;
            continue;
        }
        let root = uf.union(ri, rj);
        let absorbed = if root == ri { rj } else { ri };
        let moved = std::mem::take(&mut cluster_of[absorbed]);
        cluster_of[root].extend(moved);
        rep[root] = top;
    }
    let canonical: Vec<usize> = (0..n).map(|i| rep[uf.find(i)]).collect();

    // Description uniqueness: the closest description among candidates in other clusters
    // (cosine with embeddings, content-word Jaccard without). Candidates hold every near
    // neighbour blocking found, so this stays sub-quadratic.
    let nearest: Vec<f64> = candidates
        .par_iter()
        .fold(
            || vec![0.0f64; n],
            |mut acc, &(i, j)| {
                let (i, j) = (i as usize, j as usize);
                if canonical[i] != canonical[j] {
                    let sim = index.description_similarity(i, j);
                    acc[i] = acc[i].max(sim);
                    acc[j] = acc[j].max(sim);
                }
                acc
            },
        )
        .reduce(
            || vec![0.0f64; n],
            |mut a, b| {
                for (x, y) in a.iter_mut().zip(b) {
                    *x = x.max(y);
                }
                a
            },
        );

    // Variants link canonicals: the worse points to the better (acyclic by construction).
    let mut variant_links: BTreeMap<(usize, usize), (usize, usize)> = BTreeMap::new();
    for &(i, j, _, v) in &judged {
        if v != Verdict::Variant {
            continue;
        }
        let (ci, cj) = (canonical[i as usize], canonical[j as usize]);
        if ci == cj {
            continue;
        }
        let top = better(ci, cj);
        let low = if top == ci { cj } else { ci };
        variant_links
            .entry((low, top))
            .or_insert((i as usize, j as usize));
    }
    let mut variant_of: Vec<Option<usize>> = vec![None; n];
    for &(low, top) in variant_links.keys() {
        let cur = variant_of[low];
        variant_of[low] = Some(match cur {
            Some(c) => better(c, top),
            None => top,
        });
    }

    progress.phase("write rows", n as u64);
    let mut edges = Vec::new();
    let mut members = Vec::with_capacity(n);
    let mut cluster_members: BTreeMap<usize, Vec<usize>> = BTreeMap::new();
    for i in 0..n {
        let s = index.skills[i];
        let c = canonical[i];
        cluster_members.entry(c).or_default().push(i);
        let (role, reason) = if c != i {
            let (sig, _, rule) = index.judge(i.min(c), i.max(c));
            let mut why = format!("{rule}: {}", describe(&sig));
            if s.risk_tier > index.skills[c].risk_tier {
                let _ = write!(
                    why,
                    " riskier_than_canonical={}>{}",
                    s.risk_tier.as_str(),
                    index.skills[c].risk_tier.as_str()
                );
            }
            edges.push(edge(
                s,
                index.skills[c],
                EdgeKind::DuplicateOf,
                &sig,
                rule,
                &why,
            ));
            (Role::Duplicate, why)
        } else if let Some(t) = variant_of[i] {
            let (sig, _, rule) = index.judge(i.min(t), i.max(t));
            let why = format!("{rule}: {}", describe(&sig));
            (Role::Variant, why)
        } else {
            (Role::Canonical, String::new())
        };
        members.push(Member {
            id: s.id.clone(),
            registry: s.registry.clone(),
            path: s.path.clone(),
            name: s.name.clone(),
            cluster_id: index.skills[c].id.clone(),
            role,
            variant_of: if role == Role::Variant {
                variant_of[i].map(|t| index.skills[t].id.clone())
            } else {
                None
            },
            quality: index.prep[i].quality,
            quality_source: index.quality_source[i].to_owned(),
            nearest_description: (nearest[i] * 1e4).round() / 1e4,
            reason,
        });
    }
    for &(low, top) in variant_links.keys() {
        let (sig, _, rule) = index.judge(low.min(top), low.max(top));
        let why = format!("{rule}: {}", describe(&sig));
        edges.push(edge(
            index.skills[low],
            index.skills[top],
            EdgeKind::VariantOf,
            &sig,
            rule,
            &why,
        ));
    }
    edges.sort_by(|a, b| (&a.src, &a.dst, a.kind).cmp(&(&b.src, &b.dst, b.kind)));
    let mut variants_of_cluster: BTreeMap<usize, BTreeSet<usize>> = BTreeMap::new();
    for &(low, top) in variant_links.keys() {
        variants_of_cluster.entry(top).or_default().insert(low);
    }
    let clusters: Vec<Cluster> = cluster_members
        .iter()
        .map(|(&c, ms)| {
            let s = index.skills[c];
            let mut ids: Vec<SkillId> = vec![s.id.clone()];
            ids.extend(
                ms.iter()
                    .filter(|&&m| m != c)
                    .map(|&m| index.skills[m].id.clone()),
            );
            let registries: BTreeSet<String> = ms
                .iter()
                .map(|&m| index.skills[m].registry.to_string())
                .collect();
            Cluster {
                cluster_id: s.id.clone(),
                canonical_registry: s.registry.clone(),
                canonical_path: s.path.clone(),
                size: u32::try_from(ms.len()).unwrap_or(u32::MAX),
                registries: registries.into_iter().collect(),
                members: ids,
                variants: variants_of_cluster
                    .get(&c)
                    .map(|v| v.iter().map(|&x| index.skills[x].id.clone()).collect())
                    .unwrap_or_default(),
            }
        })
        .collect();
    let mut clusters = clusters;
    clusters.sort_by(|a, b| a.cluster_id.cmp(&b.cluster_id));
    stats.clusters = clusters.len();
    stats.multi_clusters = clusters.iter().filter(|c| c.size > 1).count();
    stats.duplicates = members.iter().filter(|m| m.role == Role::Duplicate).count();
    stats.variants = members.iter().filter(|m| m.role == Role::Variant).count();
    progress.advance(n as u64);
    Canonicalization {
        members,
        clusters,
        edges,
        stats,
    }
}

/// Members of the joining cluster checked against each member of the other (besides its canonical).
const LINKAGE_SAMPLE: usize = 8;

/// How strongly a duplicate pair is one text (used to join the surest pairs first).
fn strength(s: &Signals) -> f64 {
    f64::from(u8::from(s.same_body)) * 2.0 + s.body_jaccard + s.containment
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

fn edge(src: &Skill, dst: &Skill, kind: EdgeKind, s: &Signals, rule: &str, why: &str) -> Edge {
    let exact = s.same_body || (rule == "same-scripts");
    let confidence = match kind {
        EdgeKind::DuplicateOf if s.same_body => 1.0,
        EdgeKind::DuplicateOf => {
            s.body_jaccard
                .max(s.containment)
                .max(if exact { 1.0 } else { 0.0 })
        }
        _ => s.desc_cosine.unwrap_or(s.desc_jaccard),
    };
    let source = if exact {
        EdgeSource::Extracted
    } else {
        EdgeSource::Inferred
    };
    let extractor = format!("canonicalize:{rule}");
    Edge {
        src: src.id.clone(),
        dst: dst.id.clone(),
        kind,
        confidence,
        source,
        extractor: extractor.clone(),
        evidence: vec![Evidence {
            extractor,
            confidence,
            source,
            path: src.path.clone(),
            line: src.body_line,
            snippet: why.chars().take(200).collect(),
        }],
    }
}

/// Union-find with path halving; the smaller index becomes the root (deterministic).
#[derive(Debug)]
struct UnionFind(Vec<usize>);

impl UnionFind {
    fn new(n: usize) -> Self {
        UnionFind((0..n).collect())
    }
    fn find(&mut self, mut x: usize) -> usize {
        while self.0[x] != x {
            self.0[x] = self.0[self.0[x]];
            x = self.0[x];
        }
        x
    }
    fn union(&mut self, a: usize, b: usize) -> usize {
        let (a, b) = (self.find(a), self.find(b));
        let (root, child) = if a < b { (a, b) } else { (b, a) };
        self.0[child] = root;
        root
    }
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
