//! Rows written by `skg measure`.

use serde::{Deserialize, Serialize};

/// The scope of the metric rows (and communities) of the whole graph; every other scope is a
/// registry's name.
pub const ALL_SCOPE: &str = "(all)";

/// The limits of the seed's failure modes and risk tier (docs/metrics.md), defined once: `skg
/// measure` derives `failure_modes` and `risk` from them, the report and `skg gate` check
/// against them.
pub mod limits {
    /// `isolation` when TLIS is at least this.
    pub const TLIS: f64 = 0.5;
    /// `god-node` when GNCI is at least this.
    pub const GNCI: f64 = 20.0;
    /// `fragmentation` when CFI is at least this.
    pub const CFI: f64 = 10.0;
    /// Risk `high` when RScore is below this (the gate's default minimum).
    pub const RSCORE: f64 = 0.4;
}

/// The routability metrics of one scope (a registry, or all of them). One row of the `metrics`
/// table. Definitions: `docs/metrics.md`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct MetricRow {
    /// A registry name, or `(all)` for the union.
    pub scope: String,
    /// Nodes (skills) in the graph.
    pub nodes: u32,
    /// Undirected edges between distinct nodes (parallel kinds counted once).
    pub edges: u32,
    /// Nodes with degree 0.
    pub isolated: u32,
    /// Their ids, sorted (TLIS's evidence).
    pub isolated_nodes: Vec<String>,
    /// Isolated / nodes.
    pub tlis: Option<f64>,
    /// Largest degree.
    pub max_degree: u32,
    /// Mean degree (2 × edges / nodes).
    pub mean_degree: Option<f64>,
    /// Max degree / mean degree (0 when the mean is 0).
    pub gnci: Option<f64>,
    /// Louvain communities (singletons included).
    pub communities: u32,
    /// Communities with a label (majority rule).
    pub named_communities: u32,
    /// Communities / named communities (communities when none is named).
    pub cfi: Option<f64>,
    /// 1 − (TLIS + min(GNCI/40, 1) + min(CFI/20, 1)) / 3.
    pub rscore: Option<f64>,
    /// `high` when RScore < 0.4, else `ok`; `empty` for a graph without nodes.
    pub risk: String,
    /// Failure modes present: `isolation` (TLIS ≥ 0.5), `god-node` (GNCI ≥ 20),
    /// `fragmentation` (CFI ≥ 10), `structural-collapse` (all three).
    pub failure_modes: Vec<String>,
    /// Nodes with degree > 3 × mean degree, as `id (degree)`, highest first.
    pub god_nodes: Vec<String>,
}

/// One community of one scope. One row of the `communities` table.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CommunityRow {
    /// The scope it was found in.
    pub scope: String,
    /// Its number in the scope (largest first, then by first member id).
    pub community: u32,
    /// Members.
    pub size: u32,
    /// The label when named: `type:x` (a capability type), else `tag:x`, `category:x`, `stem:x`
    /// or `dir:x` (`docs/metrics.md`).
    pub label: Option<String>,
    /// How strongly the members carry the label: for `type:x` the type's share of the members'
    /// capability confidence mass, else the share of members carrying it.
    #[serde(default)]
    pub support: Option<f64>,
    /// Member skill ids, sorted.
    pub members: Vec<String>,
}

/// One tool defined in a code module.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct CodeTool {
    /// The tool's name.
    pub name: String,
    /// 1-based line.
    pub line: u32,
    /// The recognition rule (`registered`, `tool-call`, `object`, `class`).
    pub rule: String,
}

/// One JavaScript/TypeScript module of a codebase, as `skg measure --codebase` reads it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct CodeModule {
    /// Path relative to the codebase root, `/`-separated.
    pub path: String,
    /// Modules of the codebase it imports (relative specifiers resolved to paths), sorted.
    pub imports: Vec<String>,
    /// Tools it defines.
    pub tools: Vec<CodeTool>,
}
