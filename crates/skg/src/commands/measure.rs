//! `skg measure` and `skg gate`.

use std::{io::Write, path::Path, time::Instant};

use anyhow::Context as _;
use serde::{Deserialize, Serialize};
use skg_measure::{GateConfig, GateOptions, Input, Options};
use skg_model::{MetricRow, Progress as _, Stage};
use skg_store::{Manifest, Staging, tables};

use crate::{
    ExitStatus, GlobalArgs,
    args::{GateArgs, MeasureArgs},
    progress::Bar,
};

/// What `skg measure` prints.
#[derive(Debug, Serialize, Deserialize)]
pub(crate) struct Report {
    out: String,
    seconds: f64,
    #[serde(flatten)]
    pub(crate) summary: skg_measure::Summary,
}

pub(crate) fn run(args: &MeasureArgs, global: &GlobalArgs) -> anyhow::Result<ExitStatus> {
    let options = Options {
        min_confidence: args.min_confidence,
        include_quarantined: args.include_quarantined,
        include_aliases: args.include_aliases,
        seed: args.seed,
        ..Options::default()
    };
    if let Some(root) = &args.codebase {
        return run_codebase(args, root, &options);
    }
    let bar = Bar::new(global.quiet > 0);
    let x = super::load_extract(&args.inputs, &bar)?;
    let canon = super::stage_dir(args.canon.as_ref(), Stage::Canonicalize);
    let scores = super::stage_dir(args.scores.as_ref(), Stage::Score);
    let report = execute(
        &x,
        canon.as_deref(),
        scores.as_deref(),
        &options,
        &args.out,
        &bar,
    )?;
    bar.finish();
    super::emit(args.format, &report, |out| print_human(out, &report))?;
    Ok(ExitStatus::Success)
}

/// Builds the SKG from extract's tables (aliases folded by `canon`'s clusters, quarantined
/// skills left out by `scores`, when given), measures it and writes the output folder.
pub(crate) fn execute(
    x: &super::ExtractData,
    canon: Option<&Path>,
    scores: Option<&Path>,
    options: &Options,
    out: &Path,
    bar: &Bar,
) -> anyhow::Result<Report> {
    let started = Instant::now();
    let members = canon
        .map(|c| super::read_table(c, Stage::Canonicalize, &tables::MEMBERS))
        .transpose()?;
    let score_rows = scores
        .map(|s| super::read_table(s, Stage::Score, &tables::SCORES))
        .transpose()?;
    let input = Input {
        skills: &x.skills,
        edges: &x.edges,
        members: members.as_deref(),
        scores: score_rows.as_deref(),
    };
    bar.phase("measure the SKG", 1);
    let (skg, m) = skg_measure::measure(&input, options)?;
    bar.advance(1);
    let summary =
        skg_measure::Summary::new(&skg, &m, options, members.is_some(), score_rows.is_some());
    let manifest_options = super::manifest_options(
        options,
        serde_json::json!({
            "canonicalize": canon.map(|p| p.display().to_string()),
            "score": scores.map(|p| p.display().to_string()),
        }),
    )?;
    publish(out, &m, x.registries.clone(), manifest_options)?;
    Ok(Report {
        out: out.display().to_string(),
        seconds: started.elapsed().as_secs_f64(),
        summary,
    })
}

/// Writes the `metrics` and `communities` tables with their manifest.
fn publish(
    out: &Path,
    m: &skg_measure::Measurement,
    inputs: Vec<skg_model::RegistryInput>,
    options: serde_json::Value,
) -> anyhow::Result<()> {
    let mut staging = Staging::begin(out)?;
    staging.write_table(&tables::METRICS, &m.metrics)?;
    staging.write_table(&tables::COMMUNITIES, &m.communities)?;
    let counts = std::collections::BTreeMap::from([
        ("metrics".to_owned(), m.metrics.len() as u64),
        ("communities".to_owned(), m.communities.len() as u64),
    ]);
    staging
        .commit(Manifest::new(Stage::Measure, inputs, counts, options))
        .with_context(|| format!("cannot write {}", out.display()))?;
    Ok(())
}

/// What `skg measure --codebase` prints.
#[derive(Debug, Serialize)]
struct CodebaseReport {
    codebase: String,
    modules_read: usize,
    tools: usize,
    tool_definitions: Vec<String>,
    summary: Report,
}

fn run_codebase(args: &MeasureArgs, root: &Path, options: &Options) -> anyhow::Result<ExitStatus> {
    let started = Instant::now();
    let modules = skg_extract::read_codebase(root, &skg_extract::Limits::default())
        .with_context(|| format!("cannot read the codebase {}", root.display()))?;
    let options = Options {
        min_confidence: 0.0,
        ..options.clone()
    };
    let (skg, m) = skg_measure::measure_code(&modules, &options)?;
    let tools: usize = modules.iter().map(|x| x.tools.len()).sum();
    publish(
        &args.out,
        &m,
        Vec::new(),
        serde_json::json!({"codebase": root.display().to_string(), "seed": options.seed,
            "modules_read": modules.len(), "tools": tools}),
    )?;
    let report = CodebaseReport {
        codebase: root.display().to_string(),
        modules_read: modules.len(),
        tools,
        tool_definitions: modules
            .iter()
            .flat_map(|m| {
                m.tools
                    .iter()
                    .map(move |t| format!("{}#{} ({}, line {})", m.path, t.name, t.rule, t.line))
            })
            .collect(),
        summary: Report {
            out: args.out.display().to_string(),
            seconds: started.elapsed().as_secs_f64(),
            summary: skg_measure::Summary::new(&skg, &m, &options, false, false),
        },
    };
    super::emit(args.format, &report, |out| {
        writeln!(
            out,
            "codebase {}: {} JS/TS modules read, {} tool definitions",
            report.codebase, report.modules_read, report.tools
        )?;
        print_human(out, &report.summary)
    })?;
    Ok(ExitStatus::Success)
}

fn print_human(out: &mut impl Write, r: &Report) -> std::io::Result<()> {
    writeln!(
        out,
        "SKG: {} in {:.2}s → {}",
        r.summary.graph, r.seconds, r.out
    )?;
    write!(out, "{}", r.summary)
}

/// The part of `skg measure --format json` output the gate reads.
#[derive(Deserialize)]
struct Printed {
    metrics: Vec<MetricRow>,
}

/// Metric rows of a measure folder or of `skg measure --format json` output.
fn read_metrics(path: &Path) -> anyhow::Result<Vec<MetricRow>> {
    if path.is_dir() {
        return super::read_table(path, Stage::Measure, &tables::METRICS);
    }
    let printed: Printed = skg_artifact::read_json(path).with_context(|| {
        format!(
            "{}: not `skg measure --format json` output (a `metrics` list)",
            path.display()
        )
    })?;
    Ok(printed.metrics)
}

pub(crate) fn gate(args: &GateArgs) -> anyhow::Result<ExitStatus> {
    let file: GateConfig = match &args.config {
        Some(p) => {
            let text = std::fs::read_to_string(p)
                .with_context(|| format!("cannot read {}", p.display()))?;
            toml::from_str(&text).with_context(|| format!("{}: bad gate config", p.display()))?
        }
        None => GateConfig::default(),
    };
    let flags = GateConfig {
        min_rscore: args.min_rscore,
        max_tlis: args.max_tlis,
        max_gnci: args.max_gnci,
        max_cfi: args.max_cfi,
        tolerance: args.tolerance,
        scope: args.scope.clone(),
    };
    let options = GateOptions::resolve(flags.combine(file));
    let metrics = read_metrics(&args.measure)?;
    let baseline = args.baseline.as_deref().map(read_metrics).transpose()?;
    let report = skg_measure::gate(&metrics, baseline.as_deref(), &options)
        .with_context(|| args.measure.display().to_string())?;
    super::emit(args.format, &report, |out| write!(out, "{report}"))?;
    if std::env::var("GITHUB_ACTIONS").is_ok_and(|v| v == "true") {
        let mut out = std::io::stdout().lock();
        for c in report.failed() {
            writeln!(out, "{}", c.annotation())?;
        }
    }
    Ok(if report.passed {
        ExitStatus::Success
    } else {
        ExitStatus::Failure
    })
}
