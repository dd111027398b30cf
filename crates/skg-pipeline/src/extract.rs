//! Extract: registries → the `skills`, `documents`, `edges` and `diagnostics` tables.

use std::{
    fmt,
    path::{Path, PathBuf},
    time::Instant,
};

use serde::Serialize;
use skg_extract::{Extraction, Options};
use skg_model::{Progress, Stage};
use skg_store::{Manifest, Staging, tables};

use crate::{IoContext as _, Result};

/// What an extraction run reports (`skg extract`).
#[derive(Debug, Serialize)]
pub struct Report {
    out: String,
    elapsed_seconds: f64,
    skills_per_second: f64,
    #[serde(flatten)]
    summary: skg_extract::Summary,
}

/// Reads the registries `inputs` name and writes the output folder `out`; returns the report and
/// the extraction.
///
/// # Errors
/// The inputs do not resolve to registries, or the folder cannot be written.
pub fn execute(
    inputs: &[PathBuf],
    out: &Path,
    options: &Options,
    progress: &dyn Progress,
) -> Result<(Report, Extraction)> {
    let started = Instant::now();
    let sources = skg_extract::resolve_inputs(inputs)
        .at(|| "cannot resolve the registries to read".to_owned())?;
    let x = skg_extract::extract(&sources, options, progress);
    tracing::info!(seconds = started.elapsed().as_secs_f64(), "extracted");
    let write_started = Instant::now();
    progress.phase("write tables", tables::EXTRACT_TABLES.len() as u64);
    let manifest_options = crate::manifest_options(&options.limits, serde_json::json!({}))?;
    write(&x, out, manifest_options).at(|| format!("cannot write {}", out.display()))?;
    tracing::info!(seconds = write_started.elapsed().as_secs_f64(), "written");
    let secs = started.elapsed().as_secs_f64();
    let report = Report {
        out: out.display().to_string(),
        elapsed_seconds: crate::millis(secs),
        skills_per_second: if secs > 0.0 {
            (x.skills.len() as f64 / secs).round()
        } else {
            0.0
        },
        summary: x.summary(),
    };
    Ok((report, x))
}

fn write(x: &Extraction, out: &Path, options: serde_json::Value) -> skg_store::Result<()> {
    let mut staging = Staging::begin(out)?;
    staging.write_table(&tables::SKILLS, &x.skills)?;
    staging.write_table(&tables::DOCUMENTS, &x.documents)?;
    staging.write_table(&tables::EDGES, &x.edges)?;
    staging.write_table(&tables::DIAGNOSTICS, &x.diagnostics)?;
    let manifest = Manifest::new(Stage::Extract, x.registries.clone(), x.counts(), options);
    staging.commit(manifest)?;
    Ok(())
}

impl fmt::Display for Report {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let s = &self.summary;
        let count = |k: &str| s.counts.get(k).copied().unwrap_or(0);
        writeln!(
            f,
            "skg extract → {}: {} skills, {} documents, {} edges, {} diagnostics in {:.2} s ({} skills/s)\n",
            self.out,
            count("skills"),
            count("documents"),
            count("edges"),
            count("diagnostics"),
            self.elapsed_seconds,
            self.skills_per_second
        )?;
        write!(f, "{s}")
    }
}
