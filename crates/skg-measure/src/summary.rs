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
