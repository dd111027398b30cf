//! The audit: extract → canonicalize → score → measure into one folder with an HTML report.
//!
//! Each stage's output lives in `<out>/stages/<stage>/` with a key file beside it
//! (`<stage>.key`, [`skg_artifact::key`]). A stage's key hashes its options as serialized (the
//! values actually passed, defaults included), the content ids of the model artifacts it loads,
//! and the content of what it reads: the registries' files for extract, the upstream stages'
//! output hashes for the others. An unchanged key reuses the output; a changed one recomputes it
//! — and when a recomputed stage writes the same bytes as before, the stages after it stay
//! fresh. The embedding cache keeps per-description work across runs of canonicalize. The
//! audit folder itself (report, tables, manifest) is published atomically.

use std::{
    collections::BTreeMap,
    fmt,
    path::{Path, PathBuf},
    time::Instant,
};

use serde::Serialize;
use skg_artifact::key::{self, KeyBuilder, KeyFile};
use skg_model::{ALL_SCOPE, Edge, MetricRow, Progress, RegistryInput, Role, Stage};
use skg_store::tables;

use crate::{
    Error, IoContext as _, Result, canonicalize, extract, measure, read_table, scan, score,
};

/// Bumped when a stage's output for the same key would change in a way the key does not capture
/// (kept with the tool's version in every key).
const KEY_FORMAT: &str = "skg-audit-key-4";

/// Everything an audit runs with, stage by stage: the command line converted once.
#[derive(Debug, Clone, PartialEq)]
pub struct Plan {
    /// The registries to read.
    pub inputs: Vec<PathBuf>,
    /// The audit folder.
    pub out: PathBuf,
    /// Recompute every stage, fresh or not.
    pub force: bool,
    /// Threads for embedding inference.
    pub threads: usize,
    /// Extract's options.
    pub extract: skg_extract::Options,
    /// The security scan's options.
    pub scan: skg_scan::Options,
    /// Canonicalize's options.
    pub canon: skg_canon::Options,
    /// Compare descriptions with the embedding model (when it is installed).
    pub embeddings: bool,
    /// Score's options.
    pub score: skg_score::Options,
    /// Measure's options.
    pub measure: skg_measure::Options,
    /// The RScore the report checks against.
    pub min_rscore: f64,
}

impl Plan {
    /// Every stage with its default options.
    pub fn new(inputs: Vec<PathBuf>, out: PathBuf) -> Plan {
        Plan {
            inputs,
            out,
            force: false,
            threads: skg_embed::DEFAULT_THREADS,
            extract: skg_extract::Options::default(),
            scan: skg_scan::Options::default(),
            canon: skg_canon::Options::default(),
            embeddings: true,
            score: skg_score::Options::default(),
            measure: skg_measure::Options::default(),
            min_rscore: skg_model::limits::RSCORE,
        }
    }
}

/// What one stage printed, when it ran.
#[derive(Debug, Serialize)]
#[serde(untagged)]
enum StageSummary {
    Extract(extract::Report),
    Scan(Box<scan::Report>),
    Canonicalize(Box<canonicalize::Summary>),
    Score(score::Report),
    Measure(Box<measure::Report>),
}

#[derive(Debug, Serialize)]
struct StageRun {
    stage: Stage,
    status: &'static str,
    seconds: f64,
    key: String,
    /// What the stage printed on its own (`skg <stage> --format json`), when it ran.
    #[serde(skip_serializing_if = "Option::is_none")]
    summary: Option<StageSummary>,
}

/// What an audit reports (`skg audit`).
#[derive(Debug, Serialize)]
pub struct Summary {
    out: String,
    report: String,
    seconds: f64,
    stages: Vec<StageRun>,
    embeddings: String,
    skills: usize,
    aliases: usize,
    quarantined: usize,
    r#unsafe: usize,
    diagnostics: usize,
    metrics: Option<MetricRow>,
    gate_passed: bool,
    report_bytes: u64,
}

/// The embedding model, when the plan wants one and it is installed.
struct Embedding {
    /// How descriptions are compared, as the report and the summary say it.
    label: String,
    /// The model's identity, its files' content id in it (`None`: lexical).
    model: Option<String>,
}

fn embedding(plan: &Plan) -> Result<Embedding> {
    if !plan.embeddings {
        return Ok(Embedding {
            label: "none (--no-embeddings): descriptions compared lexically".into(),
            model: None,
        });
    }
    match skg_embed::locate() {
        Ok(dir) => Ok(Embedding {
            label: skg_embed::MODEL_ID.into(),
            model: Some(dir.identity()?),
        }),
        Err(e) => {
            tracing::warn!(
                "{e}; descriptions are compared lexically (run scripts/fetch-model.sh for embeddings)"
            );
            Ok(Embedding {
                label: "none (model not found): descriptions compared lexically".into(),
                model: None,
            })
        }
    }
}

/// The key of `stage` under `plan`, given the upstream stages' output hashes.
fn stage_key(
    stage: Stage,
    plan: &Plan,
    fingerprint: &str,
    embedding: &Embedding,
    slop_model: &skg_score::Model,
    upstream: &BTreeMap<Stage, String>,
) -> Result<String> {
    let mut k = KeyBuilder::new(
        KEY_FORMAT,
        concat!("skg ", env!("CARGO_PKG_VERSION")),
        stage.as_str(),
    );
    // The code that computes it (build.rs): an audit made by other code is never reused.
    let code = match stage {
        Stage::Extract => env!("SKG_CODE_EXTRACT"),
        Stage::Scan => env!("SKG_CODE_SCAN"),
        Stage::Canonicalize => env!("SKG_CODE_CANONICALIZE"),
        Stage::Score => env!("SKG_CODE_SCORE"),
        Stage::Measure => env!("SKG_CODE_MEASURE"),
        Stage::Audit => return Err(not_a_stage()),
    };
    k.part("code", code.as_bytes());
    match stage {
        Stage::Extract => {
            k.options(&plan.extract)?;
            // It types skills with the compiled-in capability taxonomy.
            k.part(
                "capability taxonomy",
                skg_extract::capability::TAXONOMY_TOML.as_bytes(),
            );
            k.part("registries", fingerprint.as_bytes());
        }
        Stage::Scan => {
            // It reads the registries itself (MCP-config folders included, which extract's
            // output does not hold), with extract's limits.
            k.options(&plan.scan)?;
            k.options(&plan.extract.limits)?;
            k.part("registries", fingerprint.as_bytes());
        }
        Stage::Canonicalize => {
            k.options(&plan.canon)?;
            // It refines capability types with the taxonomy's prototypes.
            k.part(
                "capability taxonomy",
                skg_extract::capability::TAXONOMY_TOML.as_bytes(),
            );
            k.part(
                "embedding model",
                embedding.model.as_deref().unwrap_or("lexical").as_bytes(),
            );
        }
        Stage::Score => {
            k.options(&plan.score)?;
            k.part("slop model", slop_model.content_id().as_bytes());
        }
        Stage::Measure => {
            k.options(&plan.measure)?;
        }
        Stage::Audit => return Err(not_a_stage()),
    }
    for (up, hash) in upstream {
        k.part(up.as_str(), hash.as_bytes());
    }
    Ok(k.finish())
}

/// Runs (or reuses) every stage and publishes the audit folder; returns its summary.
///
/// # Errors
/// A stage fails, or a folder or key file cannot be read or written.
pub fn execute(plan: &Plan, progress: &dyn Progress) -> Result<Summary> {
    let started = Instant::now();
    let stages_dir = plan.out.join("stages");
    let sources = skg_extract::resolve_inputs(&plan.inputs)
        .at(|| "cannot resolve the registries to read".to_owned())?;
    let embedding = embedding(plan)?;
    let slop_model = skg_score::Model::bundled()?;
    // The registries' content, read once for the keys of the two stages that read them.
    let fingerprint = skg_extract::content_fingerprint(&sources)
        .at(|| "cannot read the registries".to_owned())?;

    let mut runs = Vec::new();
    let mut outputs: BTreeMap<Stage, String> = BTreeMap::new();
    for (i, stage) in Stage::PIPELINE.into_iter().enumerate() {
        let t = Instant::now();
        progress.stage(&format!("{}/{} {stage}", i + 1, Stage::PIPELINE.len()));
        let dir = stages_dir.join(stage.as_str());
        let key = stage_key(stage, plan, &fingerprint, &embedding, &slop_model, &outputs)?;
        let key_path = stages_dir.join(format!("{stage}.key"));
        let fresh = (!plan.force)
            .then(|| key::read(&key_path))
            .flatten()
            .filter(|k| k.key == key && skg_artifact::require_finished(&dir).is_ok());
        let (status, output, summary) = if let Some(k) = fresh {
            ("reused", k.output, None)
        } else {
            // The old key must not outlive the output it described.
            key::remove(&key_path)?;
            let summary = run_stage(stage, plan, &stages_dir, &embedding, &slop_model, progress)?;
            let output = skg_artifact::hash_files(&dir, &[skg_embed::CACHE_FILE])?;
            key::write(
                &key_path,
                &KeyFile {
                    key: key.clone(),
                    output: output.clone(),
                },
            )?;
            ("computed", output, Some(summary))
        };
        let seconds = t.elapsed().as_secs_f64();
        tracing::info!(stage = %stage, status, seconds, "audit stage");
        outputs.insert(stage, output);
        runs.push(StageRun {
            stage,
            status,
            seconds,
            key,
            summary,
        });
    }
    report(plan, &stages_dir, runs, embedding.label, started, progress)
}

fn run_stage(
    stage: Stage,
    plan: &Plan,
    stages_dir: &Path,
    embedding: &Embedding,
    slop_model: &skg_score::Model,
    progress: &dyn Progress,
) -> Result<StageSummary> {
    let dir = stages_dir.join(stage.as_str());
    let extract_dir = stages_dir.join(Stage::Extract.as_str());
    let scan_dir = stages_dir.join(Stage::Scan.as_str());
    let canon_dir = stages_dir.join(Stage::Canonicalize.as_str());
    Ok(match stage {
        Stage::Extract => {
            StageSummary::Extract(extract::execute(&plan.inputs, &dir, &plan.extract, progress)?.0)
        }
        Stage::Scan => {
            let job = scan::Job {
                inputs: &plan.inputs,
                out: &dir,
                options: plan.scan.clone(),
                limits: plan.extract.limits.clone(),
                sarif: None,
                labels: None,
            };
            StageSummary::Scan(Box::new(scan::execute(&job, progress)?.0))
        }
        Stage::Canonicalize => {
            // Unsafe skills never win a canonical: the scan's verdicts set their risk tier.
            let mut x = crate::read_extract(&extract_dir)?;
            scan::apply_verdicts(&mut x.skills, &scan::read_verdicts(&scan_dir)?);
            let job = canonicalize::Job {
                out: dir,
                options: plan.canon,
                embeddings: embedding.model.is_some(),
                threads: plan.threads,
                scores: None,
                pairs: None,
                capability_labels: None,
            };
            StageSummary::Canonicalize(Box::new(canonicalize::execute(
                &job,
                &x.skills,
                &x.registries,
                &x.edges,
                progress,
            )?))
        }
        Stage::Score => {
            let data = score::Data::load(&extract_dir, Some(canon_dir.as_path()))?;
            StageSummary::Score(score::execute(
                &data,
                slop_model,
                score::ModelSource::Bundled,
                plan.score,
                &dir,
                progress,
            )?)
        }
        Stage::Measure => {
            let x = crate::read_extract(&extract_dir)?;
            let score_dir = stages_dir.join(Stage::Score.as_str());
            StageSummary::Measure(Box::new(measure::execute(
                x,
                Some(canon_dir.as_path()),
                Some(score_dir.as_path()),
                &plan.measure,
                &dir,
                progress,
            )?))
        }
        Stage::Audit => return Err(not_a_stage()),
    })
}

/// Renders the report from the stages' tables and publishes the audit folder.
fn report(
    plan: &Plan,
    stages_dir: &Path,
    runs: Vec<StageRun>,
    embeddings: String,
    started: Instant,
    progress: &dyn Progress,
) -> Result<Summary> {
    progress.stage("report");
    progress.phase("read tables", 1);
    let mut ex = crate::read_extract(&stages_dir.join(Stage::Extract.as_str()))?;
    let scan_dir = stages_dir.join(Stage::Scan.as_str());
    let verdicts = scan::read_verdicts(&scan_dir)?;
    let findings = read_table(&scan_dir, Stage::Scan, &tables::FINDINGS)?;
    scan::apply_verdicts(&mut ex.skills, &verdicts);
    let canon_dir = stages_dir.join(Stage::Canonicalize.as_str());
    canonicalize::apply_capabilities(
        &mut ex.skills,
        &canonicalize::read_capabilities(&canon_dir)?,
    );
    let members = read_table(&canon_dir, Stage::Canonicalize, &tables::MEMBERS)?;
    let clusters = read_table(&canon_dir, Stage::Canonicalize, &tables::CLUSTERS)?;
    let canon_edges = read_table(&canon_dir, Stage::Canonicalize, &tables::EDGES)?;
    let score_dir = stages_dir.join(Stage::Score.as_str());
    let scores = read_table(&score_dir, Stage::Score, &tables::SCORES)?;
    let measure_dir = stages_dir.join(Stage::Measure.as_str());
    let metrics = read_table(&measure_dir, Stage::Measure, &tables::METRICS)?;
    let communities = read_table(&measure_dir, Stage::Measure, &tables::COMMUNITIES)?;

    progress.phase("render the report", 1);
    let name = plan
        .out
        .file_name()
        .map_or_else(|| "audit".to_owned(), |n| n.to_string_lossy().into_owned());
    let options = skg_report::Options {
        min_rscore: plan.min_rscore,
        min_confidence: plan.measure.min_confidence,
        provenance: vec![
            format!("registries: {}", revisions(&ex.registries)),
            format!("embeddings: {embeddings}"),
            format!(
                "relations ≥ confidence {}; quarantine below {}",
                plan.measure.min_confidence, plan.score.threshold
            ),
        ],
        ..skg_report::Options::default()
    };
    let input = skg_report::Input {
        title: &name,
        registries: &ex.registries,
        skills: &ex.skills,
        relations: &ex.edges,
        diagnostics: &ex.diagnostics,
        members: &members,
        clusters: &clusters,
        scores: &scores,
        metrics: &metrics,
        communities: &communities,
        findings: &findings,
        verdicts: &verdicts,
    };
    let html = skg_report::render(&input, &options)?;

    progress.phase("publish", 1);
    let all_edges: Vec<Edge> = ex.edges.iter().chain(&canon_edges).cloned().collect();
    let options = serde_json::json!({
        "stages": runs.iter().map(|r| (r.stage, r.key.clone())).collect::<BTreeMap<_, _>>(),
        "embeddings": embeddings,
        "threshold": plan.score.threshold,
        "min_confidence": plan.measure.min_confidence,
        "min_rscore": plan.min_rscore,
    });
    skg_store::publish_audit(
        &plan.out,
        stages_dir,
        &html,
        &ex.skills,
        &all_edges,
        ex.registries.clone(),
        options,
    )
    .at(|| format!("cannot write {}", plan.out.display()))?;

    let all = metrics.iter().find(|m| m.scope == ALL_SCOPE).cloned();
    Ok(Summary {
        report: plan.out.join("index.html").display().to_string(),
        out: plan.out.display().to_string(),
        seconds: started.elapsed().as_secs_f64(),
        stages: runs,
        embeddings,
        skills: ex.skills.len(),
        aliases: members.iter().filter(|m| m.role == Role::Duplicate).count(),
        quarantined: scores.iter().filter(|s| s.quarantined).count(),
        r#unsafe: verdicts
            .iter()
            .filter(|v| v.verdict == skg_scan::VerdictKind::Unsafe)
            .count(),
        diagnostics: ex.diagnostics.len(),
        gate_passed: all
            .as_ref()
            .and_then(|m| m.rscore)
            .is_some_and(|r| r >= plan.min_rscore),
        metrics: all,
        report_bytes: html.len() as u64,
    })
}

/// `name@rev` (or its content hash), 12 characters of it, for every registry.
fn revisions(registries: &[RegistryInput]) -> String {
    registries
        .iter()
        .map(|r| {
            let rev: String = r
                .rev
                .as_deref()
                .unwrap_or(&r.content_hash)
                .chars()
                .take(12)
                .collect();
            format!("{}@{rev}", r.name)
        })
        .collect::<Vec<_>>()
        .join(", ")
}

fn not_a_stage() -> Error {
    Error::Invalid("the audit is not one of its own stages".to_owned())
}

impl fmt::Display for Summary {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for r in &self.stages {
            writeln!(
                f,
                "{:<13} {:<9} {:>7.2}s",
                r.stage.as_str(),
                r.status,
                r.seconds
            )?;
        }
        writeln!(
            f,
            "\n{} skills: {} aliases, {} quarantined, {} unsafe, {} diagnostics; embeddings: {}",
            self.skills,
            self.aliases,
            self.quarantined,
            self.r#unsafe,
            self.diagnostics,
            self.embeddings
        )?;
        if let Some(m) = &self.metrics {
            let x = |v: Option<f64>| v.map_or_else(|| "–".to_owned(), |v| format!("{v:.3}"));
            writeln!(
                f,
                "RScore {} ({}) · TLIS {} · GNCI {} · CFI {} · risk {}{}",
                x(m.rscore),
                if self.gate_passed {
                    "passes"
                } else {
                    "below the gate"
                },
                x(m.tlis),
                x(m.gnci),
                x(m.cfi),
                m.risk,
                skg_measure::failure_modes(&m.failure_modes)
            )?;
        }
        writeln!(
            f,
            "report {} ({} KB) in {:.1}s",
            self.report,
            self.report_bytes / 1024,
            self.seconds
        )
    }
}
