//! What `skg measure` prints: the graph's size and how it was built, every metric row, the
//! union's largest communities.

use serde::{Deserialize, Serialize};
use skg_model::{ALL_SCOPE, CommunityRow, MetricRow};

use crate::{Measurement, Options, Skg};

/// The graph measured.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct GraphSize {
    /// Nodes.
    pub nodes: usize,
    /// Edges.
    pub edges: usize,
    /// Relation edges read (before folding and the confidence floor).
    pub relation_edges_read: usize,
    /// The confidence floor.
    pub min_confidence: f64,
    /// Aliases were folded into their canonicals.
    pub aliases_folded: bool,
    /// Quarantined skills were left out.
    pub quarantined_left_out: bool,
}

/// The summary of a measurement.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Summary {
    /// The graph.
    pub graph: GraphSize,
    /// Every metric row: the union first, then each registry.
    pub metrics: Vec<MetricRow>,
    /// The union's ten largest communities (all are in the `communities` table).
    pub top_communities: Vec<CommunityRow>,
}

impl Summary {
    /// The summary of `m`, measured on `skg` with `options`; `canonicalized` and `scored` say
    /// whether cluster membership and scores were given (aliases are folded and quarantined
    /// skills left out only then). A codebase graph passes `min_confidence: 0`.
    pub fn new(
        skg: &Skg,
        m: &Measurement,
        options: &Options,
        canonicalized: bool,
        scored: bool,
    ) -> Summary {
        Summary {
            graph: GraphSize {
                nodes: skg.graph.node_count(),
                edges: skg.graph.edge_count(),
                relation_edges_read: skg.edges_read,
                min_confidence: options.min_confidence,
                aliases_folded: canonicalized && !options.include_aliases,
                quarantined_left_out: scored && !options.include_quarantined,
            },
            metrics: m.metrics.clone(),
            top_communities: m
                .communities
                .iter()
                .filter(|c| c.scope == ALL_SCOPE)
                .take(10)
                .cloned()
                .collect(),
        }
    }
}

fn f(x: Option<f64>, digits: usize) -> String {
    x.map_or_else(|| "-".to_owned(), |v| format!("{v:.digits$}"))
}

/// ` (isolation, …)`, or nothing.
pub fn failure_modes(modes: &[String]) -> String {
    if modes.is_empty() {
        String::new()
    } else {
        format!(" ({})", modes.join(", "))
    }
}

/// The metrics of every scope, the union's isolated skills, god nodes and largest communities,
/// as `skg measure` prints them.
impl std::fmt::Display for Summary {
    fn fmt(&self, out: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        writeln!(
            out,
            "\n{:<38} {:>6} {:>6} {:>6} {:>7} {:>7} {:>6} {:>6} {:>7} {:>7}  risk / failure modes",
            "scope", "nodes", "edges", "isol.", "TLIS", "GNCI", "comm.", "named", "CFI", "RScore"
        )?;
        for m in &self.metrics {
            writeln!(
                out,
                "{:<38} {:>6} {:>6} {:>6} {:>7} {:>7} {:>6} {:>6} {:>7} {:>7}  {}{}",
                m.scope,
                m.nodes,
                m.edges,
                m.isolated,
                f(m.tlis, 3),
                f(m.gnci, 2),
                m.communities,
                m.named_communities,
                f(m.cfi, 2),
                f(m.rscore, 3),
                m.risk,
                failure_modes(&m.failure_modes)
            )?;
        }
        let Some(all) = self.metrics.first() else {
            return Ok(());
        };
        if !all.isolated_nodes.is_empty() {
            let shown: Vec<&str> = all
                .isolated_nodes
                .iter()
                .take(8)
                .map(String::as_str)
                .collect();
            let more = if all.isolated_nodes.len() > shown.len() {
                ", …"
            } else {
                ""
            };
            writeln!(
                out,
                "\nisolated ({}): {}{more}",
                all.isolated_nodes.len(),
                shown.join(", ")
            )?;
        }
        if !all.god_nodes.is_empty() {
            let gods: Vec<&str> = all.god_nodes.iter().take(10).map(String::as_str).collect();
            writeln!(out, "\ngod nodes (degree > 3 × mean): {}", gods.join(", "))?;
        }
        if !self.top_communities.is_empty() {
            writeln!(out, "\nlargest communities of the union:")?;
            for c in &self.top_communities {
                writeln!(
                    out,
                    "  #{:<3} {:>4} skills  {}",
                    c.community,
                    c.size,
                    c.label.as_deref().unwrap_or("(unnamed)")
                )?;
            }
        }
        Ok(())
    }
}

impl std::fmt::Display for GraphSize {
    /// `N nodes, E edges (of R relation edges read; confidence ≥ c; …)`.
    fn fmt(&self, out: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            out,
            "{} nodes, {} edges (of {} relation edges read; confidence ≥ {}{}{})",
            self.nodes,
            self.edges,
            self.relation_edges_read,
            self.min_confidence,
            if self.aliases_folded {
                "; aliases folded into canonicals"
            } else {
                ""
            },
            if self.quarantined_left_out {
                "; quarantined left out"
            } else {
                ""
            },
        )
    }
}
