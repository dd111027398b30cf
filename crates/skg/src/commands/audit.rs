//! `skg audit`: extract → scan → canonicalize → score → measure into one folder with an HTML report
//! (the stage loop, keys and reuse: [`skg_pipeline::audit`]).

use std::{
    io::Write as _,
    path::{Path, PathBuf},
};

use anyhow::bail;
use skg_pipeline::audit::Plan;

use crate::{ExitStatus, GlobalArgs, args::AuditArgs, progress::Bar};

/// The plan `skg audit` runs: the command line converted once.
pub(crate) fn plan(args: &AuditArgs) -> anyhow::Result<Plan> {
    let mut plan = Plan::new(args.inputs.clone(), out_dir(args)?);
    plan.force = args.force;
    plan.threads = args.threads;
    plan.extract = args.limits.options();
    if let Some(p) = &args.scan_allow {
        plan.scan.allow = super::scan::read_allow(p)?.allow;
    }
    plan.embeddings = !args.no_embeddings;
    plan.score.threshold = args.threshold;
    plan.measure.min_confidence = args.min_confidence;
    plan.min_rscore = args.min_rscore;
    Ok(plan)
}

pub(crate) fn run(args: &AuditArgs, global: &GlobalArgs) -> anyhow::Result<ExitStatus> {
    let bar = Bar::new(global.quiet > 0);
    let summary = skg_pipeline::audit::execute(&plan(args)?, &bar)?;
    bar.finish();
    super::emit(args.format, &summary, |o| write!(o, "{summary}"))?;
    Ok(ExitStatus::Success)
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
