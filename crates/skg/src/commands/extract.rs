//! `skg extract`: registries → `skills`, `documents`, `edges`, `diagnostics` tables.

use std::{io::Write, path::Path, time::Instant};

use anyhow::Context;
use serde::Serialize;
use skg_extract::{Extraction, Options};
use skg_model::{Progress as _, Stage};
use skg_store::{Manifest, Staging, tables};

use crate::{ExitStatus, GlobalArgs, args::ExtractArgs, progress::Bar};

pub(crate) fn run(args: &ExtractArgs, global: &GlobalArgs) -> anyhow::Result<ExitStatus> {
    let bar = Bar::new(global.quiet > 0);
    let (summary, x) = execute(&args.inputs, &args.out, &args.limits.options(), &bar)?;
    bar.finish();
    if args.show_diagnostics {
        let mut err = std::io::stderr().lock();
        for d in &x.diagnostics {
            writeln!(err, "{d}")?;
        }
    }
    super::emit(args.format, &summary, |out| print_human(out, &summary))?;
    Ok(ExitStatus::Success)
}

/// What `skg extract` prints.
#[derive(Debug, Serialize)]
pub(crate) struct Report {
    out: String,
    elapsed_seconds: f64,
    skills_per_second: f64,
    #[serde(flatten)]
    summary: skg_extract::Summary,
}

/// Reads the registries and writes the output folder.
pub(crate) fn execute(
    inputs: &[std::path::PathBuf],
    out: &Path,
    options: &Options,
    bar: &Bar,
) -> anyhow::Result<(Report, Extraction)> {
    let started = Instant::now();
    let sources =
        skg_extract::resolve_inputs(inputs).context("cannot resolve the registries to read")?;
    let x = skg_extract::extract(&sources, options, bar);
    tracing::info!(seconds = started.elapsed().as_secs_f64(), "extracted");
    let write_started = Instant::now();
    bar.phase("write tables", tables::EXTRACT_TABLES.len() as u64);
    write(&x, out, options).with_context(|| format!("cannot write {}", out.display()))?;
    tracing::info!(seconds = write_started.elapsed().as_secs_f64(), "written");
    let secs = started.elapsed().as_secs_f64();
    let report = Report {
        out: out.display().to_string(),
        elapsed_seconds: (secs * 1000.0).round() / 1000.0,
        skills_per_second: if secs > 0.0 {
            (x.skills.len() as f64 / secs).round()
        } else {
            0.0
        },
        summary: x.summary(),
    };
    Ok((report, x))
}

fn write(x: &Extraction, out: &Path, options: &Options) -> anyhow::Result<()> {
    let mut staging = Staging::begin(out)?;
    staging.write_table(&tables::SKILLS, &x.skills)?;
    staging.write_table(&tables::DOCUMENTS, &x.documents)?;
    staging.write_table(&tables::EDGES, &x.edges)?;
    staging.write_table(&tables::DIAGNOSTICS, &x.diagnostics)?;
    let manifest = Manifest::new(
        Stage::Extract,
        x.registries.clone(),
        x.counts(),
        super::manifest_options(&options.limits, serde_json::json!({}))?,
    );
    staging.commit(manifest)?;
    Ok(())
}

fn print_human(out: &mut impl Write, r: &Report) -> std::io::Result<()> {
    let s = &r.summary;
    let count = |k: &str| s.counts.get(k).copied().unwrap_or(0);
    writeln!(
        out,
        "skg extract → {}: {} skills, {} documents, {} edges, {} diagnostics in {:.2} s ({} skills/s)\n",
        r.out,
        count("skills"),
        count("documents"),
        count("edges"),
        count("diagnostics"),
        r.elapsed_seconds,
        r.skills_per_second
    )?;
    write!(out, "{s}")?;
    Ok(())
}
