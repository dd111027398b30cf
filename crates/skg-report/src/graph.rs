//! The Skill Knowledge Graph as drawn: measure's union communities for the nodes, relation
//! edges folded onto canonicals for the edges, ForceAtlas2 (the `fa2` crate) for the layout.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::fmt::Write as _;

use fa2::{FA2Data, FA2Settings};

use crate::{Input, Options};

/// Colours of the largest communities (Tableau 10); the rest are grey.
const PALETTE: [&str; 10] = [
    "#4e79a7", "#f28e2b", "#e15759", "#76b7b2", "#59a14f", "#edc948", "#b07aa1", "#ff9da7",
    "#9c755f", "#bab0ac",
];
const OTHER: &str = "#c8c8c8";

/// The union graph: node ids, their community, undirected neighbour sets.
#[derive(Debug, Default)]
pub(crate) struct Graph {
    pub(crate) nodes: Vec<String>,
    pub(crate) community: Vec<u32>,
    pub(crate) neighbours: Vec<BTreeSet<usize>>,
}

impl Graph {
    pub(crate) fn build(input: &Input<'_>, options: &Options) -> Graph {
        let mut g = Graph::default();
        let mut index: HashMap<&str, usize> = HashMap::new();
        for c in input
            .communities
            .iter()
            .filter(|c| c.scope == skg_model::ALL_SCOPE)
        {
            for m in &c.members {
                index.entry(m.as_str()).or_insert_with(|| {
                    g.nodes.push(m.clone());
                    g.community.push(c.community);
                    g.nodes.len() - 1
                });
            }
        }
        g.neighbours = vec![BTreeSet::new(); g.nodes.len()];
        let canonical: HashMap<&str, &str> = input
            .members
            .iter()
            .map(|m| (m.id.as_str(), m.cluster_id.as_str()))
            .collect();
        let fold = |id: &str| -> Option<usize> {
            let id = canonical.get(id).copied().unwrap_or(id);
            index.get(id).copied()
        };
        for e in input
            .relations
            .iter()
            .filter(|e| e.confidence >= options.min_confidence)
        {
            if let (Some(a), Some(b)) = (fold(e.src.as_str()), fold(e.dst.as_str()))
                && a != b
            {
                g.neighbours[a].insert(b);
                g.neighbours[b].insert(a);
            }
        }
        g
    }

    pub(crate) fn degree(&self, i: usize) -> usize {
        self.neighbours[i].len()
    }
}

/// The picture: an SVG of the non-isolated nodes (at most `options.graph_nodes`, highest degree
/// first), coloured by community, god nodes labelled. Returns (svg, nodes drawn, nodes left out).
#[allow(clippy::many_single_char_names)] // x, y, w, h: geometry
pub(crate) fn picture(
    g: &Graph,
    names: &HashMap<&str, (&str, &str)>,
    labels: &BTreeMap<u32, String>,
    options: &Options,
) -> (String, usize, usize) {
    let mut order: Vec<usize> = (0..g.nodes.len()).filter(|&i| g.degree(i) > 0).collect();
    order.sort_by(|&a, &b| {
        g.degree(b)
            .cmp(&g.degree(a))
            .then(g.nodes[a].cmp(&g.nodes[b]))
    });
    let connected = order.len();
    order.truncate(options.graph_nodes);
    if order.is_empty() {
        return (String::new(), 0, 0);
    }
    let slot: HashMap<usize, usize> = order.iter().enumerate().map(|(k, &i)| (i, k)).collect();

    // Deterministic start: a golden-angle spiral in drawing order.
    let mut data = FA2Data::<f64>::with_capacity(order.len(), order.len() * 4);
    for k in 0..order.len() {
        let r = (k as f64 + 1.0).sqrt() * 10.0;
        let a = k as f64 * 2.399_963_229_728_653;
        data.add_node_with_position(r * a.cos(), r * a.sin());
    }
    let mut edges = Vec::new();
    for (k, &i) in order.iter().enumerate() {
        for &j in &g.neighbours[i] {
            if let Some(&l) = slot.get(&j)
                && k < l
            {
                data.add_edge(k, l);
                edges.push((k, l));
            }
        }
    }
    // Strong gravity at 1.0 keeps disconnected components near the centre instead of leaving
    // most of the picture empty (seen on the demo: two components at opposite corners).
    let mut layout = FA2Settings::from_graph_order(order.len())
        .gravity(1.0)
        .parallel(false)
        .build(data);
    layout.run(options.layout_iterations);
    let pos: Vec<(f64, f64)> = layout.data().positions().collect();

    let (w, h, pad) = (1000.0_f64, 720.0_f64, 24.0_f64);
    let (mut x0, mut x1, mut y0, mut y1) = (f64::MAX, f64::MIN, f64::MAX, f64::MIN);
    for &(x, y) in &pos {
        x0 = x0.min(x);
        x1 = x1.max(x);
        y0 = y0.min(y);
        y1 = y1.max(y);
    }
    let scale = ((w - 2.0 * pad) / (x1 - x0).max(1e-9)).min((h - 2.0 * pad) / (y1 - y0).max(1e-9));
    let at = |(x, y): (f64, f64)| (pad + (x - x0) * scale, pad + (y - y0) * scale);

    // Colours: the ten largest communities among the drawn nodes.
    let mut sizes: BTreeMap<u32, usize> = BTreeMap::new();
    for &i in &order {
        *sizes.entry(g.community[i]).or_default() += 1;
    }
    let mut by_size: Vec<(u32, usize)> = sizes.into_iter().collect();
    by_size.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(&b.0)));
    let colour: HashMap<u32, &str> = by_size
        .iter()
        .zip(PALETTE)
        .map(|(&(c, _), p)| (c, p))
        .collect();

    let mut svg = format!(
        r#"<svg class="skg" viewBox="0 0 {w} {h}" xmlns="http://www.w3.org/2000/svg" role="img" aria-label="Skill Knowledge Graph"><g class="edges">"#
    );
    for &(a, b) in &edges {
        let (ax, ay) = at(pos[a]);
        let (bx, by) = at(pos[b]);
        let _ = write!(
            svg,
            r#"<line x1="{ax:.1}" y1="{ay:.1}" x2="{bx:.1}" y2="{by:.1}"/>"#
        );
    }
    svg.push_str(r#"</g><g class="nodes">"#);
    for (k, &i) in order.iter().enumerate() {
        let (x, y) = at(pos[k]);
        let d = g.degree(i);
        let r = 2.0 + (d as f64).sqrt();
        let c = g.community[i];
        let fill = colour.get(&c).copied().unwrap_or(OTHER);
        let (name, registry) = names
            .get(g.nodes[i].as_str())
            .copied()
            .unwrap_or(("?", "?"));
        let label = labels.get(&c).map_or(String::new(), |l| format!(" · {l}"));
        let _ = write!(
            svg,
            r#"<circle cx="{x:.1}" cy="{y:.1}" r="{r:.1}" fill="{fill}"><title>{} ({}) — community #{c}{}, degree {d}</title></circle>"#,
            esc(name),
            esc(registry),
            esc(&label),
        );
    }
    svg.push_str(r#"</g><g class="labels">"#);
    for (k, &i) in order.iter().enumerate().take(8) {
        let (x, y) = at(pos[k]);
        let (name, _) = names
            .get(g.nodes[i].as_str())
            .copied()
            .unwrap_or(("?", "?"));
        let _ = write!(
            svg,
            r#"<text x="{:.1}" y="{:.1}">{}</text>"#,
            x + 6.0,
            y - 6.0,
            esc(name)
        );
    }
    svg.push_str("</g></svg>");
    (svg, order.len(), connected - order.len())
}

/// Escapes text for SVG/HTML.
pub(crate) fn esc(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for ch in s.chars() {
        match ch {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}
