//! `skg audit`: extract → canonicalize → score → measure into one folder with an HTML report.
//!
//! Each stage's output lives in `<out>/stages/<stage>/` with a key file beside it
//! (`<stage>.key`: the key it was computed for and the hash of what it wrote). A stage's key
//! hashes its options and the *content* of what it reads: the registries' files for extract, the
//! upstream stages' output hashes for the others. An unchanged key reuses the output; a changed
//! one recomputes it — and when a recomputed stage writes the same bytes as before, the stages
//! after it stay fresh. The embedding cache keeps per-description work across runs of
//! canonicalize. The audit folder itself (report, tables, manifest) is published atomically.

use std::{
    collections::BTreeMap,
    io::Write,
    path::{Path, PathBuf},
    time::Instant,
};

use anyhow::{Context as _, bail};
use serde::{Deserialize, Serialize};
use skg_model::{Edge, MetricRow, RegistryInput};
use skg_store::{Manifest, Staging, tables};

use crate::{
    ExitStatus, GlobalArgs,
    args::{AuditArgs, CanonArgs, ExtractArgs, Format, MeasureArgs, ScoreArgs, ScoreData},
    progress::Bar,
};

const STAGES: [&str; 4] = ["extract", "canonicalize", "score", "measure"];
/// Bumped when a stage's output for the same key would change in a way the version does not
/// capture (kept with the crate version in every key).
const KEY_FORMAT: &str = "skg-audit-key-1";

/// A stage's key file.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
struct KeyFile {
    key: String,
    output: String,
}

#[derive(Debug, Serialize)]
struct StageRun {
    stage: &'static str,
    status: &'static str,
    seconds: f64,
    key: String,
    /// What the stage printed on its own (`skg <stage> --format json`), when it ran.
    #[serde(skip_serializing_if = "Option::is_none")]
    summary: Option<serde_json::Value>,
}

#[derive(Debug, Serialize)]
pub(crate) struct Summary {
    out: String,
    report: String,
    seconds: f64,
    stages: Vec<StageRun>,
    embeddings: String,
    skills: usize,
    aliases: usize,
    quarantined: usize,
    diagnostics: usize,
    metrics: Option<MetricRow>,
    gate_passed: bool,
    report_bytes: u64,
}

pub(crate) fn run(args: &AuditArgs, global: &GlobalArgs) -> anyhow::Result<ExitStatus> {
    let bar = Bar::new(global.quiet > 0);
    let summary = execute(args, &bar)?;
    super::emit(args.format, &summary, |o| print_human(o, &summary))?;
    Ok(ExitStatus::Success)
}

/// Runs (or reuses) every stage and publishes the audit folder; returns its summary.
pub(crate) fn execute(args: &AuditArgs, bar: &Bar) -> anyhow::Result<Summary> {
    let started = Instant::now();
    let out = out_dir(args)?;
    let stages_dir = out.join("stages");
    let sources = skg_extract::resolve_inputs(&args.inputs)
        .context("cannot resolve the registries to read")?;

    let embeddings = if args.no_embeddings {
        "none (--no-embeddings): descriptions compared lexically".to_owned()
    } else {
        match skg_embed::locate() {
            Ok(_) => skg_embed::MODEL_ID.to_owned(),
            Err(e) => {
                tracing::warn!(
                    "{e}; descriptions are compared lexically (run scripts/fetch-model.sh for embeddings)"
                );
                "none (model not found): descriptions compared lexically".to_owned()
            }
        }
    };
    let lexical = embeddings.starts_with("none");

    let mut runs = Vec::new();
    let mut outputs: BTreeMap<&str, String> = BTreeMap::new();
    for (i, stage) in STAGES.iter().enumerate() {
        let t = Instant::now();
        bar.stage(&format!("{}/{} {stage}", i + 1, STAGES.len()));
        let dir = stages_dir.join(stage);
        let key = {
            let mut h = blake3::Hasher::new();
            h.update(KEY_FORMAT.as_bytes());
            h.update(env!("CARGO_PKG_VERSION").as_bytes());
            h.update(stage.as_bytes());
            let opts = match *stage {
                "extract" => {
                    h.update(inputs_fingerprint(&sources)?.as_bytes());
                    serde_json::json!({"max_file_bytes": args.max_file_bytes, "max_files": args.max_files, "max_parse_ms": args.max_parse_ms})
                }
                "canonicalize" => {
                    serde_json::json!({"lexical": lexical, "model": skg_embed::MODEL_ID})
                }
                "score" => {
                    serde_json::json!({"threshold": args.threshold, "model": "bundled slop-v1"})
                }
                _ => serde_json::json!({"min_confidence": args.min_confidence, "seed": 42}),
            };
            h.update(opts.to_string().as_bytes());
            for (up, hash) in &outputs {
                h.update(up.as_bytes());
                h.update(hash.as_bytes());
            }
            h.finalize().to_hex().to_string()
        };
        let key_path = stages_dir.join(format!("{stage}.key"));
        let fresh = (!args.force)
            .then(|| read_key(&key_path))
            .flatten()
            .filter(|k| k.key == key && dir.join(skg_store::SUCCESS_FILE).is_file());
        let mut summary = None;
        let (status, output) = if let Some(k) = fresh {
            ("reused", k.output)
        } else {
            // The old key must not outlive the output it described.
            let _ = std::fs::remove_file(&key_path);
            summary = Some(run_stage(stage, &dir, &stages_dir, args, lexical, bar)?);
            let output = output_hash(&dir)?;
            write_key(
                &key_path,
                &KeyFile {
                    key: key.clone(),
                    output: output.clone(),
                },
            )?;
            ("computed", output)
        };
        tracing::info!(
            stage,
            status,
            seconds = t.elapsed().as_secs_f64(),
            "audit stage"
        );
        outputs.insert(stage, output);
        runs.push(StageRun {
            stage,
            status,
            seconds: t.elapsed().as_secs_f64(),
            key,
            summary,
        });
    }

    bar.stage("report");
    skg_extract::Progress::phase(bar, "read tables", 1);
    let ex = super::read_extract(&stages_dir.join("extract"))?;
    let canon_dir = stages_dir.join("canonicalize");
    let members: Vec<skg_model::Member> = super::read_stage(&canon_dir, "canonicalize", "members")?;
    let clusters: Vec<skg_model::Cluster> =
        super::read_stage(&canon_dir, "canonicalize", "clusters")?;
    let canon_edges: Vec<Edge> = super::read_stage(&canon_dir, "canonicalize", "edges")?;
    let scores: Vec<skg_model::Score> =
        super::read_stage(&stages_dir.join("score"), "score", "scores")?;
    let measure_dir = stages_dir.join("measure");
    let metrics: Vec<MetricRow> = super::read_stage(&measure_dir, "measure", "metrics")?;
    let communities: Vec<skg_model::CommunityRow> =
        super::read_stage(&measure_dir, "measure", "communities")?;

    skg_extract::Progress::phase(bar, "render the report", 1);
    let name = out
        .file_name()
        .map_or_else(|| "audit".to_owned(), |n| n.to_string_lossy().into_owned());
    let options = skg_report::Options {
        min_rscore: args.min_rscore,
        min_confidence: args.min_confidence,
        provenance: vec![
            format!(
                "registries: {}",
                ex.registries
                    .iter()
                    .map(|r| format!(
                        "{}@{}",
                        r.name,
                        r.rev
                            .as_deref()
                            .unwrap_or(&r.content_hash)
                            .chars()
                            .take(12)
                            .collect::<String>()
                    ))
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
            format!("embeddings: {embeddings}"),
            format!(
                "relations ≥ confidence {}; quarantine below {}",
                args.min_confidence, args.threshold
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
    };
    let html = skg_report::render(&input, &options)?;

    skg_extract::Progress::phase(bar, "publish", 1);
    let all_edges: Vec<Edge> = ex.edges.iter().chain(&canon_edges).cloned().collect();
    publish(
        &out,
        &stages_dir,
        &html,
        &all_edges,
        &ex.registries,
        &runs,
        args,
        &embeddings,
    )
    .with_context(|| format!("cannot write {}", out.display()))?;
    bar.finish();

    let all = metrics.iter().find(|m| m.scope == "(all)").cloned();
    let summary = Summary {
        report: out.join("index.html").display().to_string(),
        out: out.display().to_string(),
        seconds: started.elapsed().as_secs_f64(),
        stages: runs,
        embeddings,
        skills: ex.skills.len(),
        aliases: members
            .iter()
            .filter(|m| m.role == skg_model::Role::Duplicate)
            .count(),
        quarantined: scores.iter().filter(|s| s.quarantined).count(),
        diagnostics: ex.diagnostics.len(),
        gate_passed: all
            .as_ref()
            .and_then(|m| m.rscore)
            .is_some_and(|r| r >= args.min_rscore),
        metrics: all,
        report_bytes: html.len() as u64,
    };
    Ok(summary)
}

/// `--out`, else `reports/<name>` with `<name>` from `--name` or the first input's folder name.
fn out_dir(args: &AuditArgs) -> anyhow::Result<PathBuf> {
    if let Some(o) = &args.out {
        return Ok(o.clone());
    }
    let name = if let Some(n) = &args.name {
        n.clone()
    } else {
        let first = args
            .inputs
            .first()
            .map_or(Path::new("registries"), PathBuf::as_path);
        let full = first.canonicalize().unwrap_or_else(|_| first.to_path_buf());
        let base = if full.is_file() {
            full.parent().map(Path::to_path_buf).unwrap_or(full)
        } else {
            full
        };
        base.file_name()
            .map_or_else(|| "audit".to_owned(), |n| n.to_string_lossy().into_owned())
    };
    if name.is_empty() || name.contains(['/', '\\']) || name.starts_with('.') {
        bail!("--name `{name}`: a plain folder name is expected");
    }
    Ok(PathBuf::from("reports").join(name))
}

fn run_stage(
    stage: &str,
    dir: &Path,
    stages_dir: &Path,
    args: &AuditArgs,
    lexical: bool,
    bar: &Bar,
) -> anyhow::Result<serde_json::Value> {
    let extract = stages_dir.join("extract");
    let canon = stages_dir.join("canonicalize");
    match stage {
        "extract" => Ok(serde_json::to_value(super::extract::execute(
            &ExtractArgs {
                inputs: args.inputs.clone(),
                out: dir.to_path_buf(),
                format: Format::Human,
                max_file_bytes: args.max_file_bytes,
                max_files: args.max_files,
                max_parse_ms: args.max_parse_ms,
                show_diagnostics: false,
            },
            bar,
        )?)?),
        "canonicalize" => Ok(serde_json::to_value(super::canonicalize::execute(
            &CanonArgs {
                inputs: vec![extract],
                out: dir.to_path_buf(),
                format: Format::Human,
                no_embeddings: lexical,
                pairs: None,
                scores: None,
                synthetic: None,
                seed: 42,
                threads: args.threads,
            },
            bar,
        )?)?),
        "score" => Ok(serde_json::to_value(super::score::execute(
            &ScoreArgs {
                action: None,
                data: ScoreData {
                    extract,
                    canon: Some(canon),
                },
                out: dir.to_path_buf(),
                threshold: args.threshold,
                model: None,
                format: Format::Human,
            },
            bar,
        )?)?),
        _ => Ok(serde_json::to_value(super::measure::execute(
            &MeasureArgs {
                inputs: vec![extract],
                canon: Some(canon),
                scores: Some(stages_dir.join("score")),
                min_confidence: args.min_confidence,
                include_quarantined: false,
                include_aliases: false,
                seed: 42,
                codebase: None,
                out: dir.to_path_buf(),
                format: Format::Human,
            },
            bar,
        )?)?),
    }
}

/// Hash of what the registries hold: every file under each local source (relative path and
/// bytes, in sorted order), and the git URL and revision of git sources. A git source whose
/// revision is not a full commit id can move without its spec changing, so it is never fresh.
fn inputs_fingerprint(sources: &[skg_extract::RegistrySource]) -> anyhow::Result<String> {
    let mut h = blake3::Hasher::new();
    for s in sources {
        h.update(s.name.as_str().as_bytes());
        h.update(format!("{:?}", s.kind).as_bytes());
        if let Some(git) = &s.git {
            h.update(git.as_bytes());
            let rev = s.rev.clone().unwrap_or_default();
            h.update(rev.as_bytes());
            if !(rev.len() == 40 && rev.bytes().all(|b| b.is_ascii_hexdigit())) {
                h.update(format!("{:?}", std::time::SystemTime::now()).as_bytes());
            }
            continue;
        }
        hash_tree(&s.local_path, &s.local_path, &mut h)?;
    }
    Ok(h.finalize().to_hex().to_string())
}

fn hash_tree(root: &Path, path: &Path, h: &mut blake3::Hasher) -> anyhow::Result<()> {
    let meta = std::fs::symlink_metadata(path)
        .with_context(|| format!("cannot read {}", path.display()))?;
    let rel = path.strip_prefix(root).unwrap_or(path);
    if meta.is_dir() {
        let mut entries: Vec<PathBuf> = std::fs::read_dir(path)
            .with_context(|| format!("cannot read {}", path.display()))?
            .filter_map(|e| e.ok().map(|e| e.path()))
            .filter(|p| p.file_name().is_none_or(|n| n != ".git"))
            .collect();
        entries.sort();
        for e in entries {
            hash_tree(root, &e, h)?;
        }
    } else if meta.is_symlink() {
        h.update(rel.to_string_lossy().as_bytes());
        if let Ok(t) = std::fs::read_link(path) {
            h.update(b"->");
            h.update(t.to_string_lossy().as_bytes());
        }
    } else if meta.is_file() {
        h.update(rel.to_string_lossy().as_bytes());
        h.update(&meta.len().to_le_bytes());
        // An unreadable file is a diagnostic for extract, not an error here.
        if let Ok(mut f) = std::fs::File::open(path) {
            let _ = h.update_reader(&mut f);
        }
    }
    Ok(())
}

/// Hash of a stage folder's files (the embedding cache aside: it is a cache, not an output).
fn output_hash(dir: &Path) -> anyhow::Result<String> {
    let mut names: Vec<PathBuf> = std::fs::read_dir(dir)
        .with_context(|| format!("cannot read {}", dir.display()))?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.is_file() && p.file_name().is_none_or(|n| n != "embeddings.cache"))
        .collect();
    names.sort();
    let mut h = blake3::Hasher::new();
    for p in names {
        h.update(p.file_name().unwrap_or_default().as_encoded_bytes());
        let mut f =
            std::fs::File::open(&p).with_context(|| format!("cannot read {}", p.display()))?;
        h.update_reader(&mut f)
            .with_context(|| format!("cannot read {}", p.display()))?;
    }
    Ok(h.finalize().to_hex().to_string())
}

fn read_key(path: &Path) -> Option<KeyFile> {
    let text = std::fs::read_to_string(path).ok()?;
    serde_json::from_str(&text).ok()
}

fn write_key(path: &Path, k: &KeyFile) -> anyhow::Result<()> {
    let tmp = path.with_extension("key.tmp");
    std::fs::write(&tmp, serde_json::to_vec_pretty(k)?)
        .with_context(|| format!("cannot write {}", tmp.display()))?;
    std::fs::rename(&tmp, path).with_context(|| format!("cannot write {}", path.display()))?;
    Ok(())
}

/// The audit folder: the report, every table at the top (hard links into `stages/`), the
/// stages with their keys, a manifest; published with one rename.
#[allow(clippy::too_many_arguments)]
fn publish(
    out: &Path,
    stages_dir: &Path,
    html: &str,
    all_edges: &[Edge],
    registries: &[RegistryInput],
    runs: &[StageRun],
    args: &AuditArgs,
    embeddings: &str,
) -> anyhow::Result<()> {
    let mut staging = Staging::begin(out)?;
    staging.write_file("index.html", html.as_bytes())?;
    let mut counts = BTreeMap::new();
    for (stage, tables) in tables::STAGES {
        let dir = stages_dir.join(stage);
        let m = skg_store::read_manifest(&dir)?;
        for t in *tables {
            // Canonicalize's `edges` (duplicate_of / variant_of) join extract's below.
            if t.name() == "edges" {
                continue;
            }
            let rows = m
                .tables
                .iter()
                .find(|x| x.name == t.name())
                .map_or(0, |x| x.rows);
            staging.link_table(t.name(), &dir, rows)?;
            counts.insert(t.name().to_owned(), rows);
        }
    }
    staging.write_table(&tables::EDGES, all_edges)?;
    counts.insert("edges".to_owned(), all_edges.len() as u64);
    staging.link_dir("stages", stages_dir)?;
    let manifest = Manifest::new(
        "audit",
        registries.to_vec(),
        counts,
        serde_json::json!({
            "stages": runs.iter().map(|r| (r.stage, r.key.clone())).collect::<BTreeMap<_, _>>(),
            "embeddings": embeddings,
            "threshold": args.threshold,
            "min_confidence": args.min_confidence,
            "min_rscore": args.min_rscore,
        }),
    );
    staging.commit(manifest)?;
    Ok(())
}

fn print_human(out: &mut impl Write, s: &Summary) -> std::io::Result<()> {
    for r in &s.stages {
        writeln!(out, "{:<13} {:<9} {:>7.2}s", r.stage, r.status, r.seconds)?;
    }
    writeln!(
        out,
        "\n{} skills: {} aliases, {} quarantined, {} diagnostics; embeddings: {}",
        s.skills, s.aliases, s.quarantined, s.diagnostics, s.embeddings
    )?;
    if let Some(m) = &s.metrics {
        let f = |x: Option<f64>| x.map_or_else(|| "–".to_owned(), |v| format!("{v:.3}"));
        writeln!(
            out,
            "RScore {} ({}) · TLIS {} · GNCI {} · CFI {} · risk {}{}",
            f(m.rscore),
            if s.gate_passed {
                "passes"
            } else {
                "below the gate"
            },
            f(m.tlis),
            f(m.gnci),
            f(m.cfi),
            m.risk,
            if m.failure_modes.is_empty() {
                String::new()
            } else {
                format!(" ({})", m.failure_modes.join(", "))
            }
        )?;
    }
    writeln!(
        out,
        "report {} ({} KB) in {:.1}s",
        s.report,
        s.report_bytes / 1024,
        s.seconds
    )?;
    Ok(())
}
