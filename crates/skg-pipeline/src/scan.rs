//! Scan: registries → the `findings` and `verdicts` tables (and a SARIF log when asked).

use std::{
    collections::BTreeMap,
    fmt,
    path::{Path, PathBuf},
    time::Instant,
};

use serde::Serialize;
use skg_model::{PackageText, Progress, RegistryInput, RiskTier, Skill, Stage};
use skg_scan::{Evaluation, Options, Scan, Severity, Summary};
use skg_store::{Manifest, Staging, tables};

use crate::{IoContext as _, Result};

/// A scan run.
#[derive(Debug, Clone)]
pub struct Job<'a> {
    /// Registries (folders, `registries.toml`, git sources), as for extract.
    pub inputs: &'a [PathBuf],
    /// The output folder.
    pub out: &'a Path,
    /// Verdict thresholds.
    pub options: Options,
    /// Resource limits for reading.
    pub limits: skg_extract::Limits,
    /// Write a SARIF 2.1.0 log of the findings of at least this severity here.
    pub sarif: Option<(&'a Path, Severity)>,
    /// Labels (`path,label,attack_type` CSV text) to measure the verdicts against.
    pub labels: Option<&'a str>,
}

/// What a scan reports (`skg scan`).
#[derive(Debug, Serialize)]
pub struct Report {
    out: String,
    sarif: Option<String>,
    elapsed_seconds: f64,
    packages: usize,
    safe: usize,
    suspicious: usize,
    r#unsafe: usize,
    findings: usize,
    read_diagnostics: usize,
    /// Tool catalogs given as inputs that were not read whole (an error: unreadable, cut at
    /// `--max-catalog-bytes`, a bad line or entry, more tools than are read, a tool's text cut):
    /// what was not read was not scanned, so `skg scan` fails.
    incomplete_catalogs: Vec<String>,
    /// Packages with a file cut at `--max-file-bytes`: the rest of it was not scanned, so, as
    /// for a catalog, `skg scan` fails (ids).
    incomplete_packages: Vec<String>,
    #[serde(flatten)]
    summary: Summary,
    #[serde(skip_serializing_if = "Option::is_none")]
    evaluation: Option<Evaluation>,
}

impl Report {
    /// Whether every catalog and package was read whole (else what was not read was not
    /// scanned).
    pub fn complete(&self) -> bool {
        self.incomplete_catalogs.is_empty() && self.incomplete_packages.is_empty()
    }
}

/// Reads the registries, scans every package, writes the folder (and the SARIF log).
///
/// # Errors
/// The inputs do not resolve to registries, the labels are not a labels file, or an output
/// cannot be written.
pub fn execute(job: &Job<'_>, progress: &dyn Progress) -> Result<(Report, Scan)> {
    let started = Instant::now();
    let sources = skg_extract::resolve_inputs(job.inputs)
        .at(|| "cannot resolve the registries to scan".to_owned())?;
    let (packages, diagnostics) = skg_extract::package_texts(&sources, &job.limits, progress);
    for d in &diagnostics {
        tracing::warn!(registry = %d.registry, path = %d.path, "{}", d.message);
    }
    let scan = skg_scan::scan(&packages, &job.options, progress);
    let registries = inputs(&sources, &packages);
    let incomplete_catalogs: Vec<String> = sources
        .iter()
        .filter(|s| {
            s.kind == skg_model::RegistryKind::ToolCatalog
                && diagnostics.iter().any(|d| {
                    d.registry == s.name
                        && (d.severity == skg_model::Severity::Error
                            || d.code == skg_model::DiagnosticCode::FileTooLarge)
                })
        })
        .map(|s| s.display_path.clone())
        .collect();
    let incomplete_packages = incomplete_packages(&sources, &packages, &diagnostics);
    let mut counts = BTreeMap::new();
    counts.insert("findings".to_owned(), scan.findings.len() as u64);
    counts.insert("verdicts".to_owned(), scan.verdicts.len() as u64);
    // What `skg gate --max-unsafe` reads: a catalog not read whole was not scanned whole.
    if !incomplete_catalogs.is_empty() {
        counts.insert(
            INCOMPLETE_CATALOGS.to_owned(),
            incomplete_catalogs.len() as u64,
        );
    }
    if !incomplete_packages.is_empty() {
        counts.insert(
            INCOMPLETE_PACKAGES.to_owned(),
            incomplete_packages.len() as u64,
        );
    }
    let options = crate::manifest_options(&job.options, serde_json::json!({}))?;
    progress.phase("write tables", tables::SCAN_TABLES.len() as u64);
    let write = || -> skg_store::Result<()> {
        let mut staging = Staging::begin(job.out)?;
        staging.write_table(&tables::FINDINGS, &scan.findings)?;
        staging.write_table(&tables::VERDICTS, &scan.verdicts)?;
        staging.commit(Manifest::new(Stage::Scan, registries, counts, options))?;
        Ok(())
    };
    write().at(|| format!("cannot write {}", job.out.display()))?;
    if let Some((path, min)) = job.sarif {
        let log = skg_scan::sarif(
            &scan.findings,
            &job.options.allow,
            min,
            env!("CARGO_PKG_VERSION"),
        );
        let mut bytes =
            serde_json::to_vec_pretty(&log).at(|| "cannot serialize the SARIF log".to_owned())?;
        bytes.push(b'\n');
        skg_artifact::write_file(path, &bytes).at(|| format!("cannot write {}", path.display()))?;
    }
    let evaluation = match job.labels {
        Some(text) => {
            let labels = skg_scan::read_labels(text)
                .map_err(|e| crate::Error::Invalid(format!("labels: {e}")))?;
            Some(skg_scan::evaluate(&scan, &labels))
        }
        None => None,
    };
    let (safe, suspicious, r#unsafe) = scan.counts();
    let report = Report {
        out: job.out.display().to_string(),
        sarif: job.sarif.map(|(p, _)| p.display().to_string()),
        elapsed_seconds: crate::millis(started.elapsed().as_secs_f64()),
        packages: scan.verdicts.len(),
        safe,
        suspicious,
        r#unsafe,
        findings: scan.findings.len(),
        read_diagnostics: diagnostics.len(),
        incomplete_catalogs,
        incomplete_packages,
        summary: Summary::of(&scan),
        evaluation,
    };
    Ok((report, scan))
}

/// The registries scanned, as manifest inputs (the content hash covers every text scanned).
fn inputs(sources: &[skg_extract::RegistrySource], packages: &[PackageText]) -> Vec<RegistryInput> {
    sources
        .iter()
        .map(|s| {
            let mut h = blake3::Hasher::new();
            let mut n = 0;
            for p in packages.iter().filter(|p| p.registry == s.name) {
                n += 1;
                for f in &p.files {
                    h.update(f.path.as_bytes());
                    h.update(b"\0");
                    h.update(blake3::hash(f.text.as_bytes()).as_bytes());
                }
            }
            RegistryInput {
                name: s.name.clone(),
                kind: s.kind,
                path: s.display_path.clone(),
                git: s.git.clone(),
                rev: s.rev.clone(),
                source: s.source.clone(),
                license: s.license.clone(),
                content_hash: h.finalize().to_hex().to_string(),
                skills: n,
            }
        })
        .collect()
}

impl fmt::Display for Report {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(
            f,
            "skg scan → {}: {} packages: {} safe, {} suspicious, {} unsafe; {} findings in {:.2} s",
            self.out,
            self.packages,
            self.safe,
            self.suspicious,
            self.r#unsafe,
            self.findings,
            self.elapsed_seconds
        )?;
        if let Some(s) = &self.sarif {
            writeln!(f, "SARIF 2.1.0 log: {s}")?;
        }
        if self.read_diagnostics > 0 {
            writeln!(
                f,
                "{} diagnostic(s) while reading: unreadable files, catalog entries left out \
                 (logged)",
                self.read_diagnostics
            )?;
        }
        for c in &self.incomplete_catalogs {
            writeln!(
                f,
                "not scanned whole: the catalog {c} was not read whole (logged)"
            )?;
        }
        for p in &self.incomplete_packages {
            writeln!(
                f,
                "not scanned whole: a file of the package {p} is over --max-file-bytes (logged)"
            )?;
        }
        writeln!(f)?;
        write!(f, "{}", self.summary)?;
        if let Some(e) = &self.evaluation {
            writeln!(f)?;
            write!(f, "{e}")?;
        }
        Ok(())
    }
}

/// The verdicts of a scan folder.
///
/// # Errors
/// The folder is not a finished scan output.
pub fn read_verdicts(dir: &Path) -> Result<Vec<skg_scan::Verdict>> {
    crate::read_table(dir, Stage::Scan, &tables::VERDICTS)
}

/// The manifest count of the tool catalogs a scan did not read whole (absent when 0).
pub const INCOMPLETE_CATALOGS: &str = "incomplete_catalogs";

/// The manifest count of the packages with a file a scan did not read whole (absent when 0).
pub const INCOMPLETE_PACKAGES: &str = "incomplete_packages";

/// The packages (ids, sorted) of skill registries with a file cut at `--max-file-bytes`: the
/// read's `file-too-large` diagnostics, each under the package whose root holds its path.
fn incomplete_packages(
    sources: &[skg_extract::RegistrySource],
    packages: &[PackageText],
    diagnostics: &[skg_model::Diagnostic],
) -> Vec<String> {
    let mut ids: Vec<String> = diagnostics
        .iter()
        .filter(|d| d.code == skg_model::DiagnosticCode::FileTooLarge)
        .filter(|d| {
            sources
                .iter()
                .any(|s| s.name == d.registry && s.kind != skg_model::RegistryKind::ToolCatalog)
        })
        .filter_map(|d| {
            packages
                .iter()
                .filter(|p| {
                    p.registry == d.registry
                        && (p.root.is_empty()
                            || d.path == p.root
                            || d.path.starts_with(&format!("{}/", p.root)))
                })
                .max_by_key(|p| p.root.len())
                .map(|p| p.id.to_string())
        })
        .collect();
    ids.sort();
    ids.dedup();
    ids
}

/// How many tool catalogs the scan in `dir` (a scan folder, or an audit folder's) did not read
/// whole: their tools were not all scanned, so its verdicts do not cover them.
///
/// # Errors
/// `dir` holds no finished scan or audit.
pub fn read_incomplete_catalogs(dir: &Path) -> Result<u64> {
    incomplete_catalogs(
        dir,
        skg_store::read_stage_manifest(dir, Stage::Audit).is_ok(),
    )
}

/// What `skg gate --max-unsafe` checks, read from a scan folder or an audit folder (its
/// manifest read once to tell which).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct GateInputs {
    /// Packages the scan found unsafe (acknowledged findings already left out).
    pub r#unsafe: usize,
    /// Tool catalogs the scan did not read whole ([`read_incomplete_catalogs`]).
    pub incomplete_catalogs: u64,
    /// Packages with a file the scan did not read whole.
    pub incomplete_packages: u64,
}

/// Reads [`GateInputs`] from `dir`.
///
/// # Errors
/// `dir` holds no finished scan or audit (or an audit without its scan stage).
pub fn read_gate_inputs(dir: &Path) -> Result<GateInputs> {
    let audit = skg_store::read_stage_manifest(dir, Stage::Audit).is_ok();
    let verdicts: Vec<skg_scan::Verdict> = if audit {
        skg_store::read_ndjson(dir, tables::VERDICTS.name)
            .at(|| format!("cannot read the verdicts in {}", dir.display()))?
    } else {
        read_verdicts(dir)?
    };
    Ok(GateInputs {
        r#unsafe: verdicts
            .iter()
            .filter(|v| v.verdict == skg_scan::VerdictKind::Unsafe)
            .count(),
        incomplete_catalogs: incomplete_catalogs(dir, audit)?,
        incomplete_packages: scan_count(dir, audit, INCOMPLETE_PACKAGES)?,
    })
}

/// [`read_incomplete_catalogs`] once it is known whether `dir` is an audit folder.
fn incomplete_catalogs(dir: &Path, audit: bool) -> Result<u64> {
    scan_count(dir, audit, INCOMPLETE_CATALOGS)
}

/// A count of the scan manifest in `dir` (an audit folder's when `audit`); 0 when absent.
fn scan_count(dir: &Path, audit: bool, key: &str) -> Result<u64> {
    let scan_dir = if audit {
        dir.join("stages").join(Stage::Scan.as_str())
    } else {
        dir.to_path_buf()
    };
    let manifest = skg_store::read_stage_manifest(&scan_dir, Stage::Scan)
        .at(|| format!("cannot read the scan in {}", scan_dir.display()))?;
    Ok(manifest.counts.get(key).copied().unwrap_or(0))
}

/// Gives every skill the scan found unsafe the risk tier `unsafe` (with the verdict as its
/// first reason); a skill the scan did not find unsafe is never `unsafe` (extract assigns at most
/// `critical`).
pub fn apply_verdicts(skills: &mut [Skill], verdicts: &[skg_scan::Verdict]) {
    let unsafe_: std::collections::HashMap<&str, &skg_scan::Verdict> = verdicts
        .iter()
        .filter(|v| v.verdict == skg_scan::VerdictKind::Unsafe)
        .map(|v| (v.skill_id.as_str(), v))
        .collect();
    for s in skills {
        if let Some(v) = unsafe_.get(s.id.as_str()) {
            s.risk_tier = RiskTier::Unsafe;
            s.risk_reasons.insert(
                0,
                format!("unsafe: skg scan verdict {:.2} ({})", v.score, v.top),
            );
        }
    }
}
