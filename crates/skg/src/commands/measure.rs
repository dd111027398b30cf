//! `skg measure` and `skg gate`.

use std::{collections::BTreeMap, io::Write, path::Path, time::Instant};

use anyhow::{Context as _, bail};
use serde::{Deserialize, Serialize};
use skg_measure::{Input, Options};
use skg_model::{Member, MetricRow, Score};
use skg_store::{Manifest, Staging, tables};

use crate::{
    ExitStatus, GlobalArgs,
    args::{Format, GateArgs, MeasureArgs},
    progress::Bar,
};

#[derive(Debug, Serialize, Deserialize)]
pub(crate) struct Summary {
    out: String,
    seconds: f64,
    graph: GraphSize,
    metrics: Vec<MetricRow>,
    /// The largest communities of the union (all are in the `communities` table).
    top_communities: Vec<skg_model::CommunityRow>,
}

#[derive(Debug, Serialize, Deserialize)]
struct GraphSize {
    nodes: usize,
    edges: usize,
    relation_edges_read: usize,
    min_confidence: f64,
    aliases_folded: bool,
    quarantined_left_out: bool,
}

pub(crate) fn run(args: &MeasureArgs, global: &GlobalArgs) -> anyhow::Result<ExitStatus> {
    if let Some(root) = &args.codebase {
        return run_codebase(args, root, Instant::now());
    }
    let bar = Bar::new(global.quiet > 0);
    let summary = execute(args, &bar)?;
    bar.finish();
    super::emit(args.format, &summary, |out| print_human(out, &summary))?;
    Ok(ExitStatus::Success)
}

/// Builds the SKG, measures it and writes the output folder; the summary is not printed.
pub(crate) fn execute(args: &MeasureArgs, bar: &Bar) -> anyhow::Result<Summary> {
    let started = Instant::now();
    let x = super::load_extract(&args.inputs, bar)?;
    let canon = super::stage_dir(args.canon.as_ref(), "reports/canonicalize");
    let members: Option<Vec<Member>> = match &canon {
        Some(c) => Some(super::read_stage(c, "canonicalize", "members")?),
        None => None,
    };
    let score_dir = super::stage_dir(args.scores.as_ref(), "reports/score");
    let scores: Option<Vec<Score>> = match &score_dir {
        Some(c) => Some(super::read_stage(c, "score", "scores")?),
        None => None,
    };
    let options = Options {
        min_confidence: args.min_confidence,
        include_quarantined: args.include_quarantined,
        include_aliases: args.include_aliases,
        seed: args.seed,
        ..Options::default()
    };
    let input = Input {
        skills: &x.skills,
        edges: &x.edges,
        members: members.as_deref(),
        scores: scores.as_deref(),
    };
    skg_extract::Progress::phase(bar, "measure the SKG", 1);
    let (skg, m) = skg_measure::measure(&input, &options)?;
    skg_extract::Progress::advance(bar, 1);
    let graph = GraphSize {
        nodes: skg.graph.node_count(),
        edges: skg.graph.edge_count(),
        relation_edges_read: skg.edges_read,
        min_confidence: args.min_confidence,
        aliases_folded: members.is_some() && !args.include_aliases,
        quarantined_left_out: scores.is_some() && !args.include_quarantined,
    };
    let manifest_options = serde_json::json!({
        "min_confidence": args.min_confidence,
        "include_quarantined": args.include_quarantined,
        "include_aliases": args.include_aliases,
        "seed": args.seed,
        "canonicalize": canon.as_ref().map(|p| p.display().to_string()),
        "score": score_dir.as_ref().map(|p| p.display().to_string()),
        "gnci_scale": options.gnci_scale,
        "cfi_scale": options.cfi_scale,
    });
    publish(args, m, graph, x.registries, manifest_options, started)
}

/// Writes the `metrics` and `communities` tables with their manifest and returns the summary.
fn publish(
    args: &MeasureArgs,
    m: skg_measure::Measurement,
    graph: GraphSize,
    inputs: Vec<skg_model::RegistryInput>,
    options: serde_json::Value,
    started: Instant,
) -> anyhow::Result<Summary> {
    let mut staging = Staging::begin(&args.out)?;
    staging.write_table(&tables::METRICS, &m.metrics)?;
    staging.write_table(&tables::COMMUNITIES, &m.communities)?;
    let counts = BTreeMap::from([
        ("metrics".to_owned(), m.metrics.len() as u64),
        ("communities".to_owned(), m.communities.len() as u64),
    ]);
    staging
        .commit(Manifest::new("measure", inputs, counts, options))
        .with_context(|| format!("cannot write {}", args.out.display()))?;
    Ok(Summary {
        out: args.out.display().to_string(),
        seconds: started.elapsed().as_secs_f64(),
        graph,
        top_communities: m
            .communities
            .iter()
            .filter(|c| c.scope == "(all)")
            .take(10)
            .cloned()
            .collect(),
        metrics: m.metrics,
    })
}

fn run_codebase(args: &MeasureArgs, root: &Path, started: Instant) -> anyhow::Result<ExitStatus> {
    let modules = skg_extract::read_codebase(root, &skg_extract::Limits::default())
        .with_context(|| format!("cannot read the codebase {}", root.display()))?;
    let options = Options {
        seed: args.seed,
        ..Options::default()
    };
    let (skg, m) = skg_measure::measure_code(&modules, &options)?;
    let tools: usize = modules.iter().map(|x| x.tools.len()).sum();
    let graph = GraphSize {
        nodes: skg.graph.node_count(),
        edges: skg.graph.edge_count(),
        relation_edges_read: skg.edges_read,
        min_confidence: 0.0,
        aliases_folded: false,
        quarantined_left_out: false,
    };
    let manifest_options = serde_json::json!({"codebase": root.display().to_string(), "seed": args.seed,
        "modules_read": modules.len(), "tools": tools});
    let summary = publish(args, m, graph, Vec::new(), manifest_options, started)?;
    let mut out = std::io::stdout().lock();
    match args.format {
        Format::Json => {
            serde_json::to_writer_pretty(
                &mut out,
                &serde_json::json!({
                "codebase": root.display().to_string(), "modules_read": modules.len(), "tools": tools,
                "tool_definitions": modules.iter().flat_map(|m| m.tools.iter().map(move |t| format!("{}#{} ({}, line {})", m.path, t.name, t.rule, t.line))).collect::<Vec<_>>(),
                "summary": summary }),
            )?;
            writeln!(out)?;
        }
        Format::Human => {
            writeln!(
                out,
                "codebase {}: {} JS/TS modules read, {} tool definitions",
                root.display(),
                modules.len(),
                tools
            )?;
            print_human(&mut out, &summary)?;
        }
    }
    Ok(ExitStatus::Success)
}

fn f(x: Option<f64>, digits: usize) -> String {
    x.map_or_else(|| "-".to_owned(), |v| format!("{v:.digits$}"))
}

fn print_human(out: &mut impl Write, s: &Summary) -> std::io::Result<()> {
    let g = &s.graph;
    writeln!(
        out,
        "SKG: {} nodes, {} edges (of {} relation edges read; confidence ≥ {}{}{}) in {:.2}s → {}",
        g.nodes,
        g.edges,
        g.relation_edges_read,
        g.min_confidence,
        if g.aliases_folded {
            "; aliases folded into canonicals"
        } else {
            ""
        },
        if g.quarantined_left_out {
            "; quarantined left out"
        } else {
            ""
        },
        s.seconds,
        s.out
    )?;
    writeln!(
        out,
        "\n{:<38} {:>6} {:>6} {:>6} {:>7} {:>7} {:>6} {:>6} {:>7} {:>7}  risk / failure modes",
        "scope", "nodes", "edges", "isol.", "TLIS", "GNCI", "comm.", "named", "CFI", "RScore"
    )?;
    for m in &s.metrics {
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
            if m.failure_modes.is_empty() {
                String::new()
            } else {
                format!(" ({})", m.failure_modes.join(", "))
            }
        )?;
    }
    if let Some(all) = s.metrics.first()
        && !all.isolated_nodes.is_empty()
    {
        let shown: Vec<&str> = all
            .isolated_nodes
            .iter()
            .take(8)
            .map(String::as_str)
            .collect();
        writeln!(
            out,
            "\nisolated ({}): {}{}",
            all.isolated_nodes.len(),
            shown.join(", "),
            if all.isolated_nodes.len() > shown.len() {
                ", …"
            } else {
                ""
            }
        )?;
    }
    if let Some(all) = s.metrics.first()
        && !all.god_nodes.is_empty()
    {
        writeln!(
            out,
            "\ngod nodes (degree > 3 × mean): {}",
            all.god_nodes
                .iter()
                .take(10)
                .cloned()
                .collect::<Vec<_>>()
                .join(", ")
        )?;
    }
    if !s.top_communities.is_empty() {
        writeln!(out, "\nlargest communities of the union:")?;
        for c in &s.top_communities {
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

/// Metric rows of a measure folder or of `skg measure --format json` output.
fn read_metrics(path: &Path) -> anyhow::Result<Vec<MetricRow>> {
    if path.is_dir() {
        return super::read_stage(path, "measure", "metrics");
    }
    let text =
        std::fs::read_to_string(path).with_context(|| format!("cannot read {}", path.display()))?;
    let v: serde_json::Value =
        serde_json::from_str(&text).with_context(|| format!("{}: not JSON", path.display()))?;
    let rows = v.get("metrics").cloned().with_context(|| {
        format!(
            "{}: no `metrics` (not `skg measure --format json` output)",
            path.display()
        )
    })?;
    serde_json::from_value(rows)
        .with_context(|| format!("{}: unexpected `metrics` rows", path.display()))
}

/// Gate thresholds as read from `--config`.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct GateConfig {
    min_rscore: Option<f64>,
    max_tlis: Option<f64>,
    max_gnci: Option<f64>,
    max_cfi: Option<f64>,
    tolerance: Option<f64>,
    scope: Option<String>,
}

#[derive(Debug, Serialize)]
struct Check {
    scope: String,
    #[serde(rename = "check")]
    name: String,
    value: Option<f64>,
    limit: f64,
    passed: bool,
}

pub(crate) fn gate(args: &GateArgs) -> anyhow::Result<ExitStatus> {
    let config: GateConfig = match &args.config {
        Some(p) => {
            let text = std::fs::read_to_string(p)
                .with_context(|| format!("cannot read {}", p.display()))?;
            toml::from_str(&text).with_context(|| format!("{}: bad gate config", p.display()))?
        }
        None => GateConfig::default(),
    };
    let min_rscore = args.min_rscore.or(config.min_rscore).unwrap_or(0.4);
    let max_tlis = args.max_tlis.or(config.max_tlis);
    let max_gnci = args.max_gnci.or(config.max_gnci);
    let max_cfi = args.max_cfi.or(config.max_cfi);
    let tolerance = args.tolerance.or(config.tolerance).unwrap_or(0.02);
    let scope = args
        .scope
        .clone()
        .or(config.scope)
        .unwrap_or_else(|| "(all)".to_owned());
    let metrics = read_metrics(&args.measure)?;
    let gated: Vec<&MetricRow> = metrics
        .iter()
        .filter(|m| scope == "each" || m.scope == scope)
        .collect();
    if gated.is_empty() {
        bail!("{}: no metrics for scope `{scope}`", args.measure.display());
    }
    let baseline: BTreeMap<String, Option<f64>> = match &args.baseline {
        Some(p) => read_metrics(p)?
            .into_iter()
            .map(|m| (m.scope, m.rscore))
            .collect(),
        None => BTreeMap::new(),
    };
    let mut checks = Vec::new();
    for m in &gated {
        let mut check = |name: &str, value: Option<f64>, limit: f64, passed: bool| {
            checks.push(Check {
                scope: m.scope.clone(),
                name: name.to_owned(),
                value,
                limit,
                passed,
            });
        };
        check(
            "min_rscore",
            m.rscore,
            min_rscore,
            m.rscore.is_some_and(|r| r >= min_rscore),
        );
        if let Some(l) = max_tlis {
            check("max_tlis", m.tlis, l, m.tlis.is_some_and(|v| v <= l));
        }
        if let Some(l) = max_gnci {
            check("max_gnci", m.gnci, l, m.gnci.is_some_and(|v| v <= l));
        }
        if let Some(l) = max_cfi {
            check("max_cfi", m.cfi, l, m.cfi.is_some_and(|v| v <= l));
        }
        if let Some(Some(before)) = baseline.get(&m.scope) {
            let limit = before - tolerance;
            check(
                "no_regression",
                m.rscore,
                limit,
                m.rscore.is_some_and(|r| r >= limit),
            );
        }
    }
    let failed: Vec<&Check> = checks.iter().filter(|c| !c.passed).collect();
    let actions = std::env::var("GITHUB_ACTIONS").is_ok_and(|v| v == "true");
    let mut out = std::io::stdout().lock();
    match args.format {
        Format::Json => {
            serde_json::to_writer_pretty(
                &mut out,
                &serde_json::json!({"passed": failed.is_empty(), "checks": checks}),
            )?;
            writeln!(out)?;
        }
        Format::Human => {
            for c in &checks {
                writeln!(
                    out,
                    "{} {:<38} {:<14} {:>8} (limit {:.3})",
                    if c.passed { "pass" } else { "FAIL" },
                    c.scope,
                    c.name,
                    c.value
                        .map_or_else(|| "none".to_owned(), |v| format!("{v:.3}")),
                    c.limit
                )?;
            }
            writeln!(
                out,
                "gate {}: {} of {} checks failed",
                if failed.is_empty() {
                    "passed"
                } else {
                    "FAILED"
                },
                failed.len(),
                checks.len()
            )?;
        }
    }
    if actions {
        for c in &failed {
            writeln!(
                out,
                "::error title=skg gate::{} {} = {} (limit {:.3})",
                c.scope,
                c.name,
                c.value
                    .map_or_else(|| "none".to_owned(), |v| format!("{v:.3}")),
                c.limit
            )?;
        }
    }
    Ok(if failed.is_empty() {
        ExitStatus::Success
    } else {
        ExitStatus::Failure
    })
}
