//! `skg extract`: registries → `skills`, `documents`, `edges`, `diagnostics` tables.

use std::{
    collections::{BTreeMap, BTreeSet},
    io::Write,
    time::Instant,
};

use anyhow::Context;
use serde::Serialize;
use skg_extract::{Extraction, Limits, Options};
use skg_model::{EdgeSource, FrontmatterStatus, Severity};
use skg_store::{Manifest, Staging, tables};

use crate::{ExitStatus, GlobalArgs, args::ExtractArgs, progress::Bar};

pub(crate) fn run(args: &ExtractArgs, global: &GlobalArgs) -> anyhow::Result<ExitStatus> {
    let bar = Bar::new(global.quiet > 0);
    let summary = execute(args, &bar)?;
    bar.finish();
    super::emit(args.format, &summary, |out| print_human(out, &summary))?;
    Ok(ExitStatus::Success)
}

/// Reads the registries and writes the output folder; the summary is not printed.
pub(crate) fn execute(args: &ExtractArgs, bar: &Bar) -> anyhow::Result<Summary> {
    let started = Instant::now();
    let sources = skg_extract::resolve_inputs(&args.inputs)
        .context("cannot resolve the registries to read")?;
    let options = Options {
        limits: Limits {
            max_file_bytes: args.max_file_bytes,
            max_files: args.max_files,
            parse_budget: std::time::Duration::from_millis(args.max_parse_ms),
        },
    };
    let x = skg_extract::extract(&sources, &options, bar);
    tracing::info!(seconds = started.elapsed().as_secs_f64(), "extracted");
    let write_started = Instant::now();
    skg_extract::Progress::phase(bar, "write tables", tables::EXTRACT_TABLES.len() as u64);
    write(&x, args, &options).with_context(|| format!("cannot write {}", args.out.display()))?;
    tracing::info!(seconds = write_started.elapsed().as_secs_f64(), "written");
    if args.show_diagnostics {
        let mut err = std::io::stderr().lock();
        for d in &x.diagnostics {
            writeln!(err, "{d}")?;
        }
    }
    Ok(summarize(&x, args, started.elapsed().as_secs_f64()))
}

fn write(x: &Extraction, args: &ExtractArgs, options: &Options) -> anyhow::Result<()> {
    let mut staging = Staging::begin(&args.out)?;
    staging.write_table(&tables::SKILLS, &x.skills)?;
    staging.write_table(&tables::DOCUMENTS, &x.documents)?;
    staging.write_table(&tables::EDGES, &x.edges)?;
    staging.write_table(&tables::DIAGNOSTICS, &x.diagnostics)?;
    let counts = BTreeMap::from([
        ("skills".to_owned(), x.skills.len() as u64),
        ("documents".to_owned(), x.documents.len() as u64),
        ("edges".to_owned(), x.edges.len() as u64),
        ("diagnostics".to_owned(), x.diagnostics.len() as u64),
    ]);
    let manifest = Manifest::new(
        "extract",
        x.registries.clone(),
        counts,
        serde_json::json!({
            "max_file_bytes": options.limits.max_file_bytes,
            "max_files": options.limits.max_files,
        }),
    );
    staging.commit(manifest)?;
    Ok(())
}

#[derive(Debug, Serialize)]
struct RegistrySummary {
    name: String,
    skills: u64,
    documents: u64,
    /// Edges whose source skill is in this registry.
    edges: u64,
    /// Skills with no edge in or out.
    isolated: u64,
    isolated_fraction: f64,
    /// Fraction of skills with no EXTRACTED or INFERRED edge.
    isolated_unambiguous_fraction: f64,
    /// Frontmatter present but not valid YAML (repaired + salvaged).
    yaml_failures: u64,
    yaml_repaired: u64,
    yaml_salvaged: u64,
    frontmatter_missing: u64,
    diagnostics: u64,
    errors: u64,
    warnings: u64,
}

#[derive(Debug, Serialize)]
pub(crate) struct Summary {
    out: String,
    elapsed_seconds: f64,
    skills_per_second: f64,
    counts: BTreeMap<&'static str, u64>,
    registries: Vec<RegistrySummary>,
    edges_by_kind: BTreeMap<String, u64>,
    edges_by_source: BTreeMap<String, u64>,
    edges_by_extractor: BTreeMap<String, u64>,
    diagnostics_by_code: BTreeMap<String, u64>,
}

fn summarize(x: &Extraction, args: &ExtractArgs, secs: f64) -> Summary {
    let mut connected: BTreeSet<&str> = BTreeSet::new();
    let mut connected_unambiguous: BTreeSet<&str> = BTreeSet::new();
    for e in &x.edges {
        connected.insert(e.src.as_str());
        connected.insert(e.dst.as_str());
        if e.source != EdgeSource::Ambiguous {
            connected_unambiguous.insert(e.src.as_str());
            connected_unambiguous.insert(e.dst.as_str());
        }
    }
    let registries = x
        .registries
        .iter()
        .map(|r| {
            let skills: Vec<_> = x.skills.iter().filter(|s| s.registry == r.name).collect();
            let n = skills.len() as u64;
            let isolated = skills
                .iter()
                .filter(|s| !connected.contains(s.id.as_str()))
                .count() as u64;
            let isolated_unambiguous = skills
                .iter()
                .filter(|s| !connected_unambiguous.contains(s.id.as_str()))
                .count() as u64;
            let status = |st: FrontmatterStatus| {
                skills.iter().filter(|s| s.frontmatter.status == st).count() as u64
            };
            let diags: Vec<_> = x
                .diagnostics
                .iter()
                .filter(|d| d.registry == r.name)
                .collect();
            let prefix = format!("{}:", r.name);
            RegistrySummary {
                name: r.name.to_string(),
                skills: n,
                documents: x.documents.iter().filter(|d| d.registry == r.name).count() as u64,
                edges: x
                    .edges
                    .iter()
                    .filter(|e| e.src.as_str().starts_with(&prefix))
                    .count() as u64,
                isolated,
                isolated_fraction: ratio(isolated, n),
                isolated_unambiguous_fraction: ratio(isolated_unambiguous, n),
                yaml_failures: status(FrontmatterStatus::Repaired)
                    + status(FrontmatterStatus::Salvaged),
                yaml_repaired: status(FrontmatterStatus::Repaired),
                yaml_salvaged: status(FrontmatterStatus::Salvaged),
                frontmatter_missing: status(FrontmatterStatus::Missing),
                diagnostics: diags.len() as u64,
                errors: diags
                    .iter()
                    .filter(|d| d.severity == Severity::Error)
                    .count() as u64,
                warnings: diags
                    .iter()
                    .filter(|d| d.severity == Severity::Warning)
                    .count() as u64,
            }
        })
        .collect();
    let mut by_kind = BTreeMap::new();
    let mut by_source = BTreeMap::new();
    let mut by_extractor = BTreeMap::new();
    for e in &x.edges {
        *by_kind.entry(e.kind.to_string()).or_insert(0) += 1;
        *by_source.entry(e.source.as_str().to_owned()).or_insert(0) += 1;
        *by_extractor.entry(e.extractor.clone()).or_insert(0) += 1;
    }
    let mut by_code = BTreeMap::new();
    for d in &x.diagnostics {
        *by_code.entry(d.code.to_string()).or_insert(0) += 1;
    }
    Summary {
        out: args.out.display().to_string(),
        elapsed_seconds: round3(secs),
        skills_per_second: if secs > 0.0 {
            (x.skills.len() as f64 / secs).round()
        } else {
            0.0
        },
        counts: BTreeMap::from([
            ("skills", x.skills.len() as u64),
            ("documents", x.documents.len() as u64),
            ("edges", x.edges.len() as u64),
            ("diagnostics", x.diagnostics.len() as u64),
        ]),
        registries,
        edges_by_kind: by_kind,
        edges_by_source: by_source,
        edges_by_extractor: by_extractor,
        diagnostics_by_code: by_code,
    }
}

fn ratio(a: u64, b: u64) -> f64 {
    if b == 0 {
        0.0
    } else {
        round3(a as f64 / b as f64)
    }
}

fn round3(x: f64) -> f64 {
    (x * 1000.0).round() / 1000.0
}

fn print_human(out: &mut impl Write, s: &Summary) -> std::io::Result<()> {
    writeln!(
        out,
        "skg extract → {}: {} skills, {} documents, {} edges, {} diagnostics in {:.2} s ({} skills/s)\n",
        s.out,
        s.counts["skills"],
        s.counts["documents"],
        s.counts["edges"],
        s.counts["diagnostics"],
        s.elapsed_seconds,
        s.skills_per_second
    )?;
    let width = s
        .registries
        .iter()
        .map(|r| r.name.len())
        .max()
        .unwrap_or(8)
        .max(8);
    writeln!(
        out,
        "{:<width$}  {:>7} {:>8} {:>7} {:>9} {:>10} {:>9} {:>8} {:>7} {:>6} {:>6}",
        "registry",
        "skills",
        "docs",
        "edges",
        "isolated",
        "isolated*",
        "yaml-fail",
        "salvaged",
        "no-fm",
        "errors",
        "warns"
    )?;
    for r in &s.registries {
        writeln!(
            out,
            "{:<width$}  {:>7} {:>8} {:>7} {:>8.1}% {:>9.1}% {:>9} {:>8} {:>7} {:>6} {:>6}",
            r.name,
            r.skills,
            r.documents,
            r.edges,
            r.isolated_fraction * 100.0,
            r.isolated_unambiguous_fraction * 100.0,
            r.yaml_failures,
            r.yaml_salvaged,
            r.frontmatter_missing,
            r.errors,
            r.warnings
        )?;
    }
    let line = |m: &BTreeMap<String, u64>| {
        m.iter()
            .map(|(k, v)| format!("{k} {v}"))
            .collect::<Vec<_>>()
            .join(" · ")
    };
    writeln!(out, "(isolated*: no edge other than AMBIGUOUS mentions)")?;
    writeln!(out, "\nedges by kind:      {}", line(&s.edges_by_kind))?;
    writeln!(out, "edges by source:    {}", line(&s.edges_by_source))?;
    writeln!(out, "edges by extractor: {}", line(&s.edges_by_extractor))?;
    writeln!(out, "diagnostics:        {}", line(&s.diagnostics_by_code))?;
    Ok(())
}
