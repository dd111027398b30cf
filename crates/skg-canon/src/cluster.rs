//! From judged candidate pairs to clusters, one phase per function: judge the candidates, join
//! duplicates into guarded clusters (union-find), measure each skill's nearest description in
//! another cluster, link variants between canonicals, and write the member, edge and cluster rows.

use std::{
    collections::{BTreeMap, BTreeSet},
    fmt::Write as _,
};

use rayon::prelude::*;
use skg_model::{
    Cluster, Edge, EdgeKind, EdgeSource, Evidence, Member, Progress, RiskTier, Role, Skill, SkillId,
};

use crate::{Canonicalization, Index, Signals, Stats, Verdict, describe};

/// Members of the joining cluster checked against each member of the other (besides its canonical).
const LINKAGE_SAMPLE: usize = 8;

/// A candidate pair judged a duplicate or a variant.
type Judged = (u32, u32, Signals, Verdict);

/// Variant links between canonicals, `(worse, better)` → the judged pair that linked them.
type VariantLinks = BTreeMap<(usize, usize), (usize, usize)>;

pub(crate) fn run(
    index: &Index<'_>,
    candidates: &[(u32, u32)],
    progress: &dyn Progress,
) -> Canonicalization {
    let n = index.skills.len();
    let judged = judge_candidates(index, candidates, progress);
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
    let canonical = join_duplicates(index, &judged, &mut stats);
    let nearest = nearest_descriptions(index, candidates, &canonical);
    let links = variant_links(index, &judged, &canonical);
    let variant_of = variant_targets(index, &links);

    progress.phase("write rows", n as u64);
    let (members, mut edges) = member_rows(index, &canonical, &variant_of, &nearest);
    edges.extend(variant_edges(index, &links));
    edges.sort_by(|a, b| (&a.src, &a.dst, a.kind).cmp(&(&b.src, &b.dst, b.kind)));
    let clusters = cluster_rows(index, &canonical, &links);
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

/// Exact signals on every candidate; the pairs that are not distinct.
fn judge_candidates(
    index: &Index<'_>,
    candidates: &[(u32, u32)],
    progress: &dyn Progress,
) -> Vec<Judged> {
    progress.phase("compare candidates", candidates.len() as u64);
    candidates
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
        .collect()
}

/// The better of two skills: not instructing something dangerous (a copy with an injected
/// pipe-to-shell or backdoor never becomes canonical over a clean one), then higher quality,
/// then more skills referring to it, then the smaller id. A strict total order, so variant
/// links can't form cycles.
fn better(index: &Index<'_>, a: usize, b: usize) -> usize {
    let key = |x: usize| {
        (
            index.skills[x].risk_tier != RiskTier::Unsafe,
            index.prep[x].quality,
            index.in_degree[x],
            std::cmp::Reverse(x),
        )
    };
    if key(a) > key(b) { a } else { b }
}

/// How strongly a duplicate pair is one text (used to join the surest pairs first).
fn strength(s: &Signals) -> f64 {
    f64::from(u8::from(s.same_body)) * 2.0 + s.body_jaccard + s.containment
}

/// Joins duplicates, strongest first, into clusters and returns each skill's canonical.
///
/// Invariants: every member of a cluster is itself judged a duplicate of the cluster's
/// canonical, and of up to [`LINKAGE_SAMPLE`] other members (the earliest; complete linkage on a
/// sample, so a bundle B = A + C can't pull unrelated A and C together). A merge that would
/// break them is refused (and counted).
fn join_duplicates(index: &Index<'_>, judged: &[Judged], stats: &mut Stats) -> Vec<usize> {
    let n = index.skills.len();
    let mut dups: Vec<&Judged> = judged
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
    let is_dup = |a: usize, b: usize, pair: (usize, usize)| {
        (a.min(b), a.max(b)) == pair || index.judge(a.min(b), a.max(b)).1 == Verdict::Duplicate
    };
    let mut uf = UnionFind::new(n);
    let mut rep: Vec<usize> = (0..n).collect();
    let mut cluster_of: Vec<Vec<usize>> = (0..n).map(|i| vec![i]).collect();
    for &&(i, j, _, _) in &dups {
        let pair = (i as usize, j as usize);
        let (ri, rj) = (uf.find(pair.0), uf.find(pair.1));
        if ri == rj {
            continue;
        }
        let (ci, cj) = (rep[ri], rep[rj]);
        let top = better(index, ci, cj);
        let other = if top == ci { rj } else { ri };
        let own = if other == ri { rj } else { ri };
        let sample: Vec<usize> = cluster_of[own]
            .iter()
            .copied()
            .filter(|&y| y != top)
            .take(LINKAGE_SAMPLE)
            .collect();
        let fits = |m: usize| {
            (m == top || is_dup(m, top, pair)) && sample.iter().all(|&y| is_dup(m, y, pair))
        };
        if !cluster_of[other].iter().all(|&m| fits(m)) {
            stats.chain_merges_refused += 1;
            continue;
        }
        let root = uf.union(ri, rj);
        let absorbed = if root == ri { rj } else { ri };
        let moved = std::mem::take(&mut cluster_of[absorbed]);
        cluster_of[root].extend(moved);
        rep[root] = top;
    }
    let mut canonical: Vec<usize> = (0..n).map(|i| rep[uf.find(i)]).collect();
    settle(index, &dups, &mut canonical, stats);
    canonical
}

/// Most passes of [`settle`] (each resolves every conflict it can; a pass that changes nothing ends it).
const SETTLE_PASSES: usize = 8;

/// Makes the routable output stable: no two canonicals may be duplicates of each other, or
/// canonicalizing the canonicals again would merge them.
///
/// Two canonicals `p ~ q` are left apart only when the guard refused to merge their clusters:
/// some member of one is not a duplicate of the other (the bundle `B = A + C`: `A ~ B`, `C ~ B`,
/// `A ≁ C`; with `B` the canonical of `{A, B}`, `B` and `C` are both routable duplicates). The
/// conflict is resolved by another member becoming its cluster's canonical — the best (by
/// [`better`]) that every member of its cluster is a duplicate of and that is a duplicate of no
/// other cluster's canonical (`A` in the example, so the routable skills are `A` and `C`, the
/// bundle an alias of `A`). Membership never changes, so the chain guard holds; a conflict no
/// member can resolve is left and counted.
fn settle(index: &Index<'_>, dups: &[&Judged], canonical: &mut [usize], stats: &mut Stats) {
    let n = canonical.len();
    let mut dup_of: Vec<Vec<usize>> = vec![Vec::new(); n];
    for &&(i, j, _, _) in dups {
        dup_of[i as usize].push(j as usize);
        dup_of[j as usize].push(i as usize);
    }
    let mut members: BTreeMap<usize, Vec<usize>> = BTreeMap::new();
    for (i, &c) in canonical.iter().enumerate() {
        members.entry(c).or_default().push(i);
    }
    let conflicts = |canonical: &[usize]| -> Vec<(usize, usize)> {
        dups.iter()
            .map(|&&(i, j, _, _)| (i as usize, j as usize))
            .filter(|&(i, j)| canonical[i] == i && canonical[j] == j)
            .collect()
    };
    for _ in 0..SETTLE_PASSES {
        let found = conflicts(canonical);
        if found.is_empty() {
            return;
        }
        let mut changed = false;
        for (p, q) in found {
            if canonical[p] != p || canonical[q] != q {
                continue; // resolved by an earlier move in this pass
            }
            // The worse canonical's cluster moves first: the better one keeps its canonical.
            let first = if better(index, p, q) == p { q } else { p };
            let second = if first == p { q } else { p };
            let moved = [first, second].into_iter().find_map(|c| {
                let cluster = members.get(&c)?;
                let mut options: Vec<usize> = cluster.iter().copied().filter(|&x| x != c).collect();
                options.sort_by(|&x, &y| {
                    if better(index, x, y) == x {
                        std::cmp::Ordering::Less
                    } else {
                        std::cmp::Ordering::Greater
                    }
                });
                let free = |x: usize| {
                    dup_of[x].iter().all(|&y| {
                        canonical[y] != y || members.get(&y).is_some_and(|m| m.contains(&x))
                    })
                };
                let holds = |x: usize| {
                    cluster
                        .iter()
                        .all(|&m| m == x || index.judge(m.min(x), m.max(x)).1 == Verdict::Duplicate)
                };
                options
                    .into_iter()
                    .find(|&x| free(x) && holds(x))
                    .map(|x| (c, x))
            });
            if let Some((old, new)) = moved {
                let cluster = members.remove(&old).unwrap_or_default();
                for &m in &cluster {
                    canonical[m] = new;
                }
                members.insert(new, cluster);
                stats.canonicals_moved += 1;
                changed = true;
            }
        }
        if !changed {
            break;
        }
    }
    stats.unsettled = conflicts(canonical).len();
}

/// Description uniqueness: the closest description among candidates in other clusters (cosine
/// with embeddings, content-word Jaccard without). Candidates hold every near neighbour
/// blocking found, so this stays sub-quadratic.
fn nearest_descriptions(
    index: &Index<'_>,
    candidates: &[(u32, u32)],
    canonical: &[usize],
) -> Vec<f64> {
    let n = index.skills.len();
    candidates
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
        )
}

/// Variants link canonicals: the worse points to the better (acyclic by construction).
fn variant_links(index: &Index<'_>, judged: &[Judged], canonical: &[usize]) -> VariantLinks {
    let mut links = VariantLinks::new();
    for &(i, j, _, v) in judged {
        if v != Verdict::Variant {
            continue;
        }
        let (ci, cj) = (canonical[i as usize], canonical[j as usize]);
        if ci == cj {
            continue;
        }
        let top = better(index, ci, cj);
        let low = if top == ci { cj } else { ci };
        links.entry((low, top)).or_insert((i as usize, j as usize));
    }
    links
}

/// The one canonical each variant points to: the best of those it is linked to.
fn variant_targets(index: &Index<'_>, links: &VariantLinks) -> Vec<Option<usize>> {
    let mut variant_of: Vec<Option<usize>> = vec![None; index.skills.len()];
    for &(low, top) in links.keys() {
        variant_of[low] = Some(match variant_of[low] {
            Some(c) => better(index, c, top),
            None => top,
        });
    }
    variant_of
}

/// One member row per skill, and a `duplicate_of` edge per alias.
fn member_rows(
    index: &Index<'_>,
    canonical: &[usize],
    variant_of: &[Option<usize>],
    nearest: &[f64],
) -> (Vec<Member>, Vec<Edge>) {
    let n = index.skills.len();
    let mut edges = Vec::new();
    let mut members = Vec::with_capacity(n);
    for i in 0..n {
        let s = index.skills[i];
        let c = canonical[i];
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
            (Role::Variant, format!("{rule}: {}", describe(&sig)))
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
    (members, edges)
}

/// One `variant_of` edge per link.
fn variant_edges(index: &Index<'_>, links: &VariantLinks) -> Vec<Edge> {
    links
        .keys()
        .map(|&(low, top)| {
            let (sig, _, rule) = index.judge(low.min(top), low.max(top));
            let why = format!("{rule}: {}", describe(&sig));
            edge(
                index.skills[low],
                index.skills[top],
                EdgeKind::VariantOf,
                &sig,
                rule,
                &why,
            )
        })
        .collect()
}

/// One row per cluster (canonical first among its members), by cluster id.
fn cluster_rows(index: &Index<'_>, canonical: &[usize], links: &VariantLinks) -> Vec<Cluster> {
    let mut cluster_members: BTreeMap<usize, Vec<usize>> = BTreeMap::new();
    for (i, &c) in canonical.iter().enumerate() {
        cluster_members.entry(c).or_default().push(i);
    }
    let mut variants_of_cluster: BTreeMap<usize, BTreeSet<usize>> = BTreeMap::new();
    for &(low, top) in links.keys() {
        variants_of_cluster.entry(top).or_default().insert(low);
    }
    let mut clusters: Vec<Cluster> = cluster_members
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
    clusters.sort_by(|a, b| a.cluster_id.cmp(&b.cluster_id));
    clusters
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
