//! The Skill Knowledge Graph and its routability metrics.
//!
//! [`build`] makes the SKG (petgraph, undirected): one node per routable skill (canonical or
//! variant, not quarantined, unless asked otherwise), edges from extract's relations (redirected
//! from aliases to their canonicals) at or above a confidence. [`measure`] computes TLIS, GNCI,
//! CFI and RScore of the whole graph and of each registry's subgraph, with their evidence
//! (isolated nodes, god nodes, Louvain communities with labels). Definitions: `docs/metrics.md`.

use std::collections::{BTreeMap, BTreeSet, HashMap, HashSet};

mod gate;
mod summary;

use petgraph::graph::{NodeIndex, UnGraph};
use skg_model::{
    ALL_SCOPE, CommunityRow, Edge, EdgeKind, Member, MetricRow, Role, Score, Skill, limits,
};

pub use crate::{
    gate::{Check, GateConfig, GateOptions, GateReport, gate},
    summary::{GraphSize, Summary, failure_modes},
};

/// Errors of this crate.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// graphrs failed (its error type implements no `std::error::Error`).
    #[error("community detection failed: {0}")]
    Louvain(String),
    /// The gate found no metric row for the scope it checks.
    #[error("no metrics for scope `{0}`")]
    NoScope(String),
}

/// What goes into the graph and how it is measured (the audit hashes it, serialized, into
/// measure's key; `skg measure` writes it into its manifest).
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Options {
    /// Edges below this confidence are left out (0.3 keeps EXTRACTED and INFERRED edges and
    /// drops AMBIGUOUS mentions, whose precision was 5 % on a hand-checked sample).
    pub min_confidence: f64,
    /// Relation kinds that count.
    pub kinds: Vec<EdgeKind>,
    /// Keep quarantined skills as nodes.
    pub include_quarantined: bool,
    /// Keep aliases (duplicates) as nodes instead of folding them into their canonical.
    pub include_aliases: bool,
    /// Louvain seed.
    pub seed: u64,
    /// GNCI normalization constant: normalize(GNCI) = min(GNCI / this, 1) (the seed's 40).
    pub gnci_scale: f64,
    /// CFI normalization constant: normalize(CFI) = min(CFI / this, 1) (the seed's 20).
    pub cfi_scale: f64,
    /// Name communities by their members' capability type first (false: by raw tags, categories
    /// and name stems only, as before capability types; kept for before/after comparisons).
    #[serde(default = "yes")]
    pub name_by_capability: bool,
}

fn yes() -> bool {
    true
}

impl Default for Options {
    fn default() -> Self {
        Options {
            min_confidence: 0.3,
            kinds: vec![
                EdgeKind::DependsOn,
                EdgeKind::Complements,
                EdgeKind::CoUsedWith,
                EdgeKind::References,
            ],
            include_quarantined: false,
            include_aliases: false,
            seed: 42,
            gnci_scale: 40.0,
            cfi_scale: 20.0,
            name_by_capability: true,
        }
    }
}

/// What the graph is built from.
#[derive(Debug, Clone, Copy)]
pub struct Input<'a> {
    /// Skills (extract).
    pub skills: &'a [Skill],
    /// Relation edges (extract).
    pub edges: &'a [Edge],
    /// Cluster membership (canonicalize), when present.
    pub members: Option<&'a [Member]>,
    /// Slop scores (score), when present.
    pub scores: Option<&'a [Score]>,
}

/// One node of the SKG.
#[derive(Debug, Clone, PartialEq)]
pub struct Node {
    /// Skill id.
    pub id: String,
    /// Registry.
    pub registry: String,
    /// Labels the naming rule may use: `tag:x`, `category:x`, `stem:x`.
    pub labels: Vec<String>,
    /// The skill's capability type and its confidence (`None` when `unknown`).
    pub capability: Option<(String, f64)>,
}

/// The Skill Knowledge Graph.
#[derive(Debug, Clone)]
pub struct Skg {
    /// Undirected graph; edge weight = the best confidence among the kinds joining the pair.
    pub graph: UnGraph<Node, f64>,
    /// Relation edges read, and how many made it in.
    pub edges_read: usize,
}

/// Labels of a skill for community naming.
fn labels(s: &Skill) -> Vec<String> {
    let mut out: BTreeSet<String> = s.tags.iter().map(|t| format!("tag:{t}")).collect();
    if let Some(c) = &s.category {
        out.insert(format!("category:{}", c.to_lowercase()));
    }
    if let Some(stem) = s.slug.split('-').next().filter(|t| t.len() >= 3) {
        out.insert(format!("stem:{stem}"));
    }
    out.into_iter().collect()
}

/// Builds the SKG.
pub fn build(input: &Input<'_>, options: &Options) -> Skg {
    let quarantined: HashSet<&str> = input
        .scores
        .map(|ss| {
            ss.iter()
                .filter(|s| s.quarantined)
                .map(|s| s.id.as_str())
                .collect()
        })
        .unwrap_or_default();
    let canonical_of: HashMap<&str, &str> = input
        .members
        .map(|ms| {
            ms.iter()
                .filter(|m| m.role == Role::Duplicate)
                .map(|m| (m.id.as_str(), m.cluster_id.as_str()))
                .collect()
        })
        .unwrap_or_default();
    let mut skills: Vec<&Skill> = input
        .skills
        .iter()
        .filter(|s| options.include_quarantined || !quarantined.contains(s.id.as_str()))
        .filter(|s| options.include_aliases || !canonical_of.contains_key(s.id.as_str()))
        .collect();
    skills.sort_by(|a, b| a.id.cmp(&b.id));
    let mut graph: UnGraph<Node, f64> = UnGraph::default();
    let mut index: HashMap<&str, NodeIndex> = HashMap::new();
    for s in &skills {
        let ix = graph.add_node(Node {
            id: s.id.to_string(),
            registry: s.registry.to_string(),
            labels: labels(s),
            capability: (options.name_by_capability && s.capability != "unknown")
                .then(|| (s.capability.clone(), s.capability_confidence)),
        });
        index.insert(s.id.as_str(), ix);
    }
    let resolve = |id: &str| -> Option<NodeIndex> {
        let id = if options.include_aliases {
            id
        } else {
            canonical_of.get(id).copied().unwrap_or(id)
        };
        index.get(id).copied()
    };
    let mut best: BTreeMap<(NodeIndex, NodeIndex), f64> = BTreeMap::new();
    for e in input.edges {
        if e.confidence < options.min_confidence || !options.kinds.contains(&e.kind) {
            continue;
        }
        let (Some(a), Some(b)) = (resolve(e.src.as_str()), resolve(e.dst.as_str())) else {
            continue;
        };
        if a == b {
            continue;
        }
        let key = if a < b { (a, b) } else { (b, a) };
        let w = best.entry(key).or_insert(0.0);
        *w = w.max(e.confidence);
    }
    for ((a, b), w) in best {
        graph.add_edge(a, b, w);
    }
    Skg {
        graph,
        edges_read: input.edges.len(),
    }
}

/// Communities of the nodes `nodes` (indices into `skg`) joined by the edges among them:
/// seeded Louvain (graphrs); every node belongs to exactly one community; singletons included.
pub fn communities(
    skg: &Skg,
    nodes: &[NodeIndex],
    seed: u64,
) -> Result<Vec<Vec<NodeIndex>>, Error> {
    let local: HashMap<NodeIndex, u32> = nodes
        .iter()
        .enumerate()
        .map(|(i, &n)| (n, u32::try_from(i).unwrap_or(u32::MAX)))
        .collect();
    let mut edges = Vec::new();
    for e in skg.graph.edge_indices() {
        if let Some((a, b)) = skg.graph.edge_endpoints(e)
            && let (Some(&la), Some(&lb)) = (local.get(&a), local.get(&b))
        {
            edges.push(graphrs::Edge::<u32, ()>::new(la, lb));
        }
    }
    let mut found: Vec<Vec<NodeIndex>> = Vec::new();
    let mut placed: HashSet<u32> = HashSet::new();
    if !edges.is_empty() {
        let gnodes: Vec<_> = (0..u32::try_from(nodes.len()).unwrap_or(u32::MAX))
            .map(graphrs::Node::<u32, ()>::from_name)
            .collect();
        let g = graphrs::Graph::<u32, ()>::new_from_nodes_and_edges(
            gnodes,
            edges,
            graphrs::GraphSpecs::undirected_create_missing(),
        )
        .map_err(|e| Error::Louvain(format!("{e:?}")))?;
        let parts = graphrs::algorithms::community::louvain::louvain_communities(
            &g,
            false,
            None,
            None,
            Some(seed),
        )
        .map_err(|e| Error::Louvain(format!("{e:?}")))?;
        for part in parts {
            let mut c: Vec<u32> = part.into_iter().collect();
            c.sort_unstable();
            placed.extend(c.iter().copied());
            found.push(c.into_iter().map(|l| nodes[l as usize]).collect());
        }
    }
    for (i, &n) in nodes.iter().enumerate() {
        if !placed.contains(&u32::try_from(i).unwrap_or(u32::MAX)) {
            found.push(vec![n]);
        }
    }
    for c in &mut found {
        c.sort_by(|a, b| skg.graph[*a].id.cmp(&skg.graph[*b].id));
    }
    found.sort_by(|a, b| {
        b.len()
            .cmp(&a.len())
            .then_with(|| skg.graph[a[0]].id.cmp(&skg.graph[b[0]].id))
    });
    Ok(found)
}

/// A community named by capability type needs this share of its members' typed confidence mass.
pub const TYPE_MASS_SHARE: f64 = 0.5;

/// …and this share of its members to carry the type.
pub const TYPE_MEMBER_SHARE: f64 = 0.25;

/// The name of a community and its support (none for singletons):
///
/// 1. **By capability type**: the type carrying the most confidence mass (the sum of its members'
///    classifier confidences; ties by name) is the name `type:x` when it carries at least
///    [`TYPE_MASS_SHARE`] of the mass of all typed members, at least two members and at least
///    [`TYPE_MEMBER_SHARE`] of the members have it. Support: its share of the mass.
/// 2. Else **by a raw label**: the label (tag, category, stem, folder) carried by more than half
///    of the members (most common first, ties by name). Support: its share of the members.
pub fn name(skg: &Skg, members: &[NodeIndex]) -> Option<(String, f64)> {
    if members.len() < 2 {
        return None;
    }
    let mut mass: BTreeMap<&str, (f64, usize)> = BTreeMap::new();
    for &m in members {
        if let Some((t, c)) = &skg.graph[m].capability {
            let e = mass.entry(t.as_str()).or_default();
            e.0 += c;
            e.1 += 1;
        }
    }
    let total: f64 = mass.values().map(|v| v.0).sum();
    if let Some((t, (w, n))) = mass
        .into_iter()
        .max_by(|a, b| a.1.0.total_cmp(&b.1.0).then(b.0.cmp(a.0)))
        && total > 0.0
        && w >= TYPE_MASS_SHARE * total
        && n >= 2
        && n as f64 >= TYPE_MEMBER_SHARE * members.len() as f64
    {
        return Some((format!("type:{t}"), round(w / total)));
    }
    let mut count: BTreeMap<&str, usize> = BTreeMap::new();
    for &m in members {
        for l in &skg.graph[m].labels {
            *count.entry(l.as_str()).or_default() += 1;
        }
    }
    let (label, n) = count
        .into_iter()
        .max_by(|a, b| a.1.cmp(&b.1).then(b.0.cmp(a.0)))?;
    (2 * n > members.len()).then(|| (label.to_owned(), round(n as f64 / members.len() as f64)))
}

fn round(x: f64) -> f64 {
    (x * 1e6).round() / 1e6
}

/// Metrics and communities of the subgraph on `nodes`.
pub fn metrics(
    skg: &Skg,
    scope: &str,
    nodes: &[NodeIndex],
    options: &Options,
) -> Result<(MetricRow, Vec<CommunityRow>), Error> {
    let inside: HashSet<NodeIndex> = nodes.iter().copied().collect();
    let degree = |n: NodeIndex| {
        skg.graph
            .neighbors(n)
            .filter(|m| inside.contains(m))
            .count()
    };
    let degrees: Vec<usize> = nodes.iter().map(|&n| degree(n)).collect();
    let n = nodes.len();
    let edges = degrees.iter().sum::<usize>() / 2;
    let isolated = degrees.iter().filter(|&&d| d == 0).count();
    let max_degree = degrees.iter().copied().max().unwrap_or(0);
    let comms = communities(skg, nodes, options.seed)?;
    let rows: Vec<CommunityRow> = comms
        .iter()
        .enumerate()
        .map(|(i, c)| {
            let (label, support) = name(skg, c).unzip();
            CommunityRow {
                scope: scope.to_owned(),
                community: u32::try_from(i + 1).unwrap_or(u32::MAX),
                size: u32::try_from(c.len()).unwrap_or(u32::MAX),
                label,
                support,
                members: c.iter().map(|&m| skg.graph[m].id.clone()).collect(),
            }
        })
        .collect();
    let named = rows.iter().filter(|r| r.label.is_some()).count();
    let u = |x: usize| u32::try_from(x).unwrap_or(u32::MAX);
    if n == 0 {
        return Ok((
            MetricRow {
                scope: scope.to_owned(),
                nodes: 0,
                edges: 0,
                isolated: 0,
                isolated_nodes: Vec::new(),
                tlis: None,
                max_degree: 0,
                mean_degree: None,
                gnci: None,
                communities: 0,
                named_communities: 0,
                cfi: None,
                rscore: None,
                risk: "empty".into(),
                failure_modes: Vec::new(),
                god_nodes: Vec::new(),
            },
            rows,
        ));
    }
    let tlis = isolated as f64 / n as f64;
    let mean = 2.0 * edges as f64 / n as f64;
    let gnci = if mean > 0.0 {
        max_degree as f64 / mean
    } else {
        0.0
    };
    let cfi = rows.len() as f64 / named.max(1) as f64;
    let rscore = 1.0
        - (tlis + (gnci / options.gnci_scale).min(1.0) + (cfi / options.cfi_scale).min(1.0)) / 3.0;
    let mut modes = Vec::new();
    if tlis >= limits::TLIS {
        modes.push("isolation".to_owned());
    }
    if gnci >= limits::GNCI {
        modes.push("god-node".to_owned());
    }
    if cfi >= limits::CFI {
        modes.push("fragmentation".to_owned());
    }
    if modes.len() == 3 {
        modes.push("structural-collapse".to_owned());
    }
    let mut gods: Vec<(usize, &str)> = nodes
        .iter()
        .zip(&degrees)
        .filter(|(_, d)| mean > 0.0 && **d as f64 > 3.0 * mean)
        .map(|(&m, &d)| (d, skg.graph[m].id.as_str()))
        .collect();
    gods.sort_by(|a, b| b.0.cmp(&a.0).then(a.1.cmp(b.1)));
    Ok((
        MetricRow {
            scope: scope.to_owned(),
            nodes: u(n),
            edges: u(edges),
            isolated: u(isolated),
            isolated_nodes: {
                let mut v: Vec<String> = nodes
                    .iter()
                    .zip(&degrees)
                    .filter(|(_, d)| **d == 0)
                    .map(|(&m, _)| skg.graph[m].id.clone())
                    .collect();
                v.sort();
                v
            },
            tlis: Some(round(tlis)),
            max_degree: u(max_degree),
            mean_degree: Some(round(mean)),
            gnci: Some(round(gnci)),
            communities: u(rows.len()),
            named_communities: u(named),
            cfi: Some(round(cfi)),
            rscore: Some(round(rscore)),
            risk: if rscore < limits::RSCORE {
                "high".into()
            } else {
                "ok".into()
            },
            failure_modes: modes,
            god_nodes: gods.iter().map(|(d, id)| format!("{id} ({d})")).collect(),
        },
        rows,
    ))
}

/// Everything `skg measure` reports.
#[derive(Debug, Clone, Default)]
pub struct Measurement {
    /// The union first (`(all)`), then each registry by name.
    pub metrics: Vec<MetricRow>,
    /// Communities of every scope.
    pub communities: Vec<CommunityRow>,
}

/// Builds the SKG and measures the union and each registry.
pub fn measure(input: &Input<'_>, options: &Options) -> Result<(Skg, Measurement), Error> {
    let skg = build(input, options);
    let all: Vec<NodeIndex> = skg.graph.node_indices().collect();
    let mut out = Measurement::default();
    let (m, c) = metrics(&skg, ALL_SCOPE, &all, options)?;
    out.metrics.push(m);
    out.communities.extend(c);
    let mut by: BTreeMap<&str, Vec<NodeIndex>> = BTreeMap::new();
    for n in &all {
        by.entry(skg.graph[*n].registry.as_str())
            .or_default()
            .push(*n);
    }
    for (r, nodes) in &by {
        let (m, c) = metrics(&skg, r, nodes, options)?;
        out.metrics.push(m);
        out.communities.extend(c);
    }
    Ok((skg, out))
}

/// The graph of a JS/TS codebase (`skg measure --codebase`): a node per **tool definition**
/// (`<module>#<name>`) and per **module** that defines a tool or imports a module that does;
/// edges join a tool to the module defining it and a module to each module it imports (both
/// nodes). A registry module that imports every tool module is therefore the hub it is in the
/// code. Community labels are the modules' folders (`dir:x`).
pub fn build_code(modules: &[skg_model::CodeModule]) -> Skg {
    let defines: HashSet<&str> = modules
        .iter()
        .filter(|m| !m.tools.is_empty())
        .map(|m| m.path.as_str())
        .collect();
    let in_graph: Vec<&skg_model::CodeModule> = modules
        .iter()
        .filter(|m| {
            defines.contains(m.path.as_str())
                || m.imports.iter().any(|i| defines.contains(i.as_str()))
        })
        .collect();
    let dir = |p: &str| p.rsplit_once('/').map_or(".", |(d, _)| d).to_owned();
    let mut graph: UnGraph<Node, f64> = UnGraph::default();
    let mut module_ix: HashMap<&str, NodeIndex> = HashMap::new();
    for m in &in_graph {
        let ix = graph.add_node(Node {
            id: m.path.clone(),
            registry: "codebase".into(),
            labels: vec![format!("dir:{}", dir(&m.path))],
            capability: None,
        });
        module_ix.insert(m.path.as_str(), ix);
    }
    let mut edges = BTreeSet::new();
    for m in &in_graph {
        let mix = module_ix[m.path.as_str()];
        for t in &m.tools {
            let tix = graph.add_node(Node {
                id: format!("{}#{}", m.path, t.name),
                registry: "codebase".into(),
                labels: vec![format!("dir:{}", dir(&m.path))],
                capability: None,
            });
            edges.insert((mix.min(tix), mix.max(tix)));
        }
        for i in &m.imports {
            if let Some(&j) = module_ix.get(i.as_str())
                && j != mix
            {
                edges.insert((mix.min(j), mix.max(j)));
            }
        }
    }
    for (a, b) in edges {
        graph.add_edge(a, b, 1.0);
    }
    Skg {
        graph,
        edges_read: modules.iter().map(|m| m.imports.len()).sum(),
    }
}

/// Metrics of a codebase graph (scope `(all)`).
pub fn measure_code(
    modules: &[skg_model::CodeModule],
    options: &Options,
) -> Result<(Skg, Measurement), Error> {
    let skg = build_code(modules);
    let all: Vec<NodeIndex> = skg.graph.node_indices().collect();
    let (m, c) = metrics(&skg, ALL_SCOPE, &all, options)?;
    Ok((
        skg,
        Measurement {
            metrics: vec![m],
            communities: c,
        },
    ))
}
