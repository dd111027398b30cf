//! `skg measure` and `skg gate`.

use std::{io::Write, path::Path};

use anyhow::Context as _;
use serde::Deserialize;
use skg_measure::{GateConfig, GateOptions, Options};
use skg_model::{MetricRow, Stage};
use skg_store::tables;

use crate::{
    ExitStatus, GlobalArgs,
    args::{GateArgs, MeasureArgs},
    progress::Bar,
};

pub(crate) fn run(args: &MeasureArgs, global: &GlobalArgs) -> anyhow::Result<ExitStatus> {
    let options = Options {
        min_confidence: args.min_confidence,
        include_quarantined: args.include_quarantined,
        include_aliases: args.include_aliases,
        seed: args.seed,
        name_by_capability: !args.raw_community_names,
        ..Options::default()
    };
    if let Some(root) = &args.codebase {
        return run_codebase(args, root, &options);
    }
    let bar = Bar::new(global.quiet > 0);
    let x = super::load_extract(&args.inputs, &bar)?;
    let canon = super::stage_dir(args.canon.as_ref(), Stage::Canonicalize);
    let scores = super::stage_dir(args.scores.as_ref(), Stage::Score);
    let report = skg_pipeline::measure::execute(
        x,
        canon.as_deref(),
        scores.as_deref(),
        &options,
        &args.out,
        &bar,
    )?;
    bar.finish();
    super::emit(args.format, &report, |out| write!(out, "{report}"))?;
    Ok(ExitStatus::Success)
}

fn run_codebase(args: &MeasureArgs, root: &Path, options: &Options) -> anyhow::Result<ExitStatus> {
    let report =
        skg_pipeline::measure::execute_codebase(root, args.include_tests, options, &args.out)?;
    super::emit(args.format, &report, |out| write!(out, "{report}"))?;
    Ok(ExitStatus::Success)
}

/// The part of `skg measure --format json` output the gate reads.
#[derive(Deserialize)]
struct Printed {
    metrics: Vec<MetricRow>,
}

/// Metric rows of a measure folder or of `skg measure --format json` output.
fn read_metrics(path: &Path) -> anyhow::Result<Vec<MetricRow>> {
    if path.is_dir() {
        // A measure folder, or an audit folder (which holds measure's tables at its top).
        if skg_store::read_stage_manifest(path, Stage::Audit).is_ok() {
            return skg_store::read_ndjson(path, tables::METRICS.name)
                .with_context(|| format!("cannot read metrics from {}", path.display()));
        }
        return Ok(skg_pipeline::read_table(
            path,
            Stage::Measure,
            &tables::METRICS,
        )?);
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
    let mut report = skg_measure::gate(&metrics, baseline.as_deref(), &options)
        .with_context(|| args.measure.display().to_string())?;
    if let Some(limit) = args.max_unsafe {
        let dir = args.scan.clone().unwrap_or_else(|| {
            if skg_store::read_stage_manifest(&args.measure, Stage::Audit).is_ok() {
                args.measure.clone()
            } else {
                Stage::Scan.default_dir()
            }
        });
        let scanned = skg_pipeline::scan::read_gate_inputs(&dir)?;
        report.check_unsafe(scanned.r#unsafe, limit);
        report.check_scanned_whole(scanned.incomplete_catalogs + scanned.incomplete_packages);
    }
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
