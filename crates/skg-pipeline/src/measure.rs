//! Measure: extract's tables (aliases folded, quarantined skills left out) → the `metrics` and
//! `communities` tables; or a codebase's tool graph.

use std::{collections::BTreeMap, fmt, path::Path, time::Instant};

use serde::Serialize;
use skg_measure::{Input, Options};
use skg_model::{Progress, Stage};
use skg_store::{Manifest, Staging, tables};

use crate::{ExtractData, IoContext as _, Result};

/// What a measurement reports (`skg measure`).
#[derive(Debug, Serialize)]
pub struct Report {
    out: String,
    seconds: f64,
    /// The measurement.
    #[serde(flatten)]
    pub summary: skg_measure::Summary,
}

/// Builds the SKG from extract's tables (aliases folded by the `canon` folder's clusters and
/// skills typed by its `capabilities`, quarantined skills left out by the `scores` folder's, when
/// given), measures it and writes the output folder.
///
/// # Errors
/// A folder cannot be read or written, or the graph cannot be measured.
pub fn execute(
    mut x: ExtractData,
    canon: Option<&Path>,
    scores: Option<&Path>,
    options: &Options,
    out: &Path,
    progress: &dyn Progress,
) -> Result<Report> {
    let started = Instant::now();
    // Communities are named by the capability types canonicalize refined.
    if let Some(c) = canon {
        crate::canonicalize::apply_capabilities(
            &mut x.skills,
            &crate::canonicalize::read_capabilities(c)?,
        );
    }
    let members = canon
        .map(|c| crate::read_table(c, Stage::Canonicalize, &tables::MEMBERS))
        .transpose()?;
    let score_rows = scores
        .map(|s| crate::read_table(s, Stage::Score, &tables::SCORES))
        .transpose()?;
    let input = Input {
        skills: &x.skills,
        edges: &x.edges,
        members: members.as_deref(),
        scores: score_rows.as_deref(),
    };
    progress.phase("measure the SKG", 1);
    let (skg, m) = skg_measure::measure(&input, options)?;
    progress.advance(1);
    let summary =
        skg_measure::Summary::new(&skg, &m, options, members.is_some(), score_rows.is_some());
    let manifest_options = crate::manifest_options(
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
) -> Result<()> {
    let write = || -> skg_store::Result<()> {
        let mut staging = Staging::begin(out)?;
        staging.write_table(&tables::METRICS, &m.metrics)?;
        staging.write_table(&tables::COMMUNITIES, &m.communities)?;
        let counts = BTreeMap::from([
            ("metrics".to_owned(), m.metrics.len() as u64),
            ("communities".to_owned(), m.communities.len() as u64),
        ]);
        staging.commit(Manifest::new(Stage::Measure, inputs, counts, options))?;
        Ok(())
    };
    write().at(|| format!("cannot write {}", out.display()))
}

/// What a codebase measurement reports (`skg measure --codebase`).
#[derive(Debug, Serialize)]
pub struct CodebaseReport {
    codebase: String,
    modules_read: usize,
    /// Code files left out as tests, fixtures, examples or mocks (`skg_extract::is_test_code`).
    test_files_left_out: usize,
    tools: usize,
    tool_definitions: Vec<String>,
    summary: Report,
}

/// Reads the JS/TS codebase at `root` (test code left out unless `include_tests`), measures its
/// tool graph (every relation counted: `min_confidence` 0) and writes the output folder.
///
/// # Errors
/// The codebase cannot be read, the graph cannot be measured, or the folder cannot be written.
pub fn execute_codebase(
    root: &Path,
    include_tests: bool,
    options: &Options,
    out: &Path,
) -> Result<CodebaseReport> {
    let started = Instant::now();
    let codebase = skg_extract::read_codebase(root, &skg_extract::Limits::default(), include_tests)
        .at(|| format!("cannot read the codebase {}", root.display()))?;
    let modules = codebase.modules;
    let options = Options {
        min_confidence: 0.0,
        ..options.clone()
    };
    let (skg, m) = skg_measure::measure_code(&modules, &options)?;
    let tools: usize = modules.iter().map(|x| x.tools.len()).sum();
    publish(
        out,
        &m,
        Vec::new(),
        serde_json::json!({"codebase": root.display().to_string(), "seed": options.seed,
            "modules_read": modules.len(), "tools": tools, "include_tests": include_tests,
            "test_files_left_out": codebase.test_files_left_out}),
    )?;
    Ok(CodebaseReport {
        codebase: root.display().to_string(),
        modules_read: modules.len(),
        test_files_left_out: codebase.test_files_left_out,
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
            out: out.display().to_string(),
            seconds: started.elapsed().as_secs_f64(),
            summary: skg_measure::Summary::new(&skg, &m, &options, false, false),
        },
    })
}

impl fmt::Display for Report {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(
            f,
            "SKG: {} in {:.2}s → {}",
            self.summary.graph, self.seconds, self.out
        )?;
        write!(f, "{}", self.summary)
    }
}

impl fmt::Display for CodebaseReport {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(
            f,
            "codebase {}: {} JS/TS modules read ({} test files left out), {} tool definitions",
            self.codebase, self.modules_read, self.test_files_left_out, self.tools
        )?;
        write!(f, "{}", self.summary)
    }
}
