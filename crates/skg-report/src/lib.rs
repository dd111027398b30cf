//! The audit report: one self-contained HTML file a registry maintainer reads instead of the
//! JSON — headline routability against its thresholds, registry by registry, duplicate clusters
//! with how copies differ, quarantined skills with their reasons, the Skill Knowledge Graph
//! (communities, isolated skills, god nodes, a ForceAtlas2 picture) and every diagnostic.
//!
//! Templates are minijinja (`templates/`), charts are plotters SVG, the graph layout is the `fa2`
//! crate's ForceAtlas2; CSS and the small table script are inlined, so the page needs no
//! network and works from `file://`. Same input → byte-identical HTML (no timestamps, seeded
//! layout, sorted rows).
//!
//! Imports only skg-model: it renders rows, it does not compute them.

mod charts;
mod diff;
mod graph;
mod view;

use minijinja::{AutoEscape, Environment, context};
use skg_model::{
    Cluster, CommunityRow, Diagnostic, Edge, Member, MetricRow, RegistryInput, Score, Skill,
};

/// What the report is drawn from: the stage tables.
#[derive(Debug, Clone, Copy)]
pub struct Input<'a> {
    /// Page title (the audit's name).
    pub title: &'a str,
    /// The registries read, with revisions and content hashes.
    pub registries: &'a [RegistryInput],
    /// Every skill (extract).
    pub skills: &'a [Skill],
    /// Relation edges (extract).
    pub relations: &'a [Edge],
    /// Diagnostics (extract).
    pub diagnostics: &'a [Diagnostic],
    /// Cluster membership of every skill (canonicalize).
    pub members: &'a [Member],
    /// Duplicate clusters (canonicalize).
    pub clusters: &'a [Cluster],
    /// Slop scores (score).
    pub scores: &'a [Score],
    /// Routability metrics per scope (measure).
    pub metrics: &'a [MetricRow],
    /// Communities per scope (measure).
    pub communities: &'a [CommunityRow],
    /// Security findings (scan).
    pub findings: &'a [skg_model::security::Finding],
    /// Security verdicts per package (scan).
    pub verdicts: &'a [skg_model::security::Verdict],
}

/// How the report is drawn.
#[derive(Debug, Clone)]
pub struct Options {
    /// RScore below this is a failing gate (as `skg gate --min-rscore`).
    pub min_rscore: f64,
    /// Relation edges below this confidence are not drawn (as `skg measure --min-confidence`).
    pub min_confidence: f64,
    /// Clusters whose copies get a diff view (largest first).
    pub diff_clusters: usize,
    /// Diff lines shown per copy.
    pub diff_lines: usize,
    /// Nodes drawn in the SKG picture (highest degree first).
    pub graph_nodes: usize,
    /// ForceAtlas2 iterations.
    pub layout_iterations: usize,
    /// Lines under the title (inputs, stage keys, the command).
    pub provenance: Vec<String>,
}

impl Default for Options {
    fn default() -> Self {
        Options {
            min_rscore: 0.4,
            min_confidence: 0.5,
            diff_clusters: 150,
            diff_lines: 60,
            graph_nodes: 2500,
            layout_iterations: 400,
            provenance: Vec::new(),
        }
    }
}

/// The report could not be rendered (a template bug, never bad data).
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// The template failed.
    #[error("report template: {0:#}")]
    Template(#[from] minijinja::Error),
    /// A chart failed to draw.
    #[error("report chart `{chart}`: {message}")]
    Chart {
        /// Which chart.
        chart: &'static str,
        /// What plotters said.
        message: String,
    },
}

const TEMPLATE: &str = include_str!("../templates/report.html.j2");
const STYLE: &str = include_str!("../templates/report.css");
const SCRIPT: &str = include_str!("../templates/report.js");

/// Renders the report as one HTML document.
pub fn render(input: &Input<'_>, options: &Options) -> Result<String, Error> {
    let view = view::build(input, options)?;
    let mut env = Environment::new();
    // minijinja's HTML escaping also rewrites `/` as `&#x2f;`, which is ~8 % of a report full of
    // paths and changes nothing a browser reads: skill text goes through the crate's own escape
    // (`& < > " '`), everything else through minijinja's.
    env.set_formatter(|out, state, value| match value.as_str() {
        Some(s) if state.auto_escape() == AutoEscape::Html && !value.is_safe() => out
            .write_str(&graph::esc(s))
            .map_err(minijinja::Error::from),
        _ => minijinja::escape_formatter(out, state, value),
    });
    env.add_template("report.html", TEMPLATE)?;
    let t = env.get_template("report.html")?;
    let html = t.render(context! {
        r => view,
        style => STYLE,
        script => SCRIPT,
    })?;
    Ok(html)
}

#[cfg(test)]
mod tests;
