//! `skg canonicalize`: skills → duplicate clusters, aliases, variants, canonical skills.

use std::{io::Write as _, path::Path};

use anyhow::Context as _;
use skg_canon::eval::LabelledPair;
use skg_pipeline::canonicalize::{self, Job, Pairs, Scores};
use skg_store::tables;

use crate::{ExitStatus, GlobalArgs, args::CanonArgs, progress::Bar};

pub(crate) fn run(args: &CanonArgs, global: &GlobalArgs) -> anyhow::Result<ExitStatus> {
    let bar = Bar::new(global.quiet > 0);
    let job = Job {
        embeddings: !args.no_embeddings,
        threads: args.threads,
        scores: args.scores.as_deref().map(read_scores).transpose()?,
        pairs: args.pairs.as_deref().map(read_pairs).transpose()?,
        capability_labels: args
            .capability_labels
            .as_deref()
            .map(super::extract::read_capability_labels)
            .transpose()?,
        ..Job::new(args.out.clone())
    };
    let summary = if let Some(n) = args.synthetic {
        canonicalize::synthetic(&job, n, args.seed, &bar)?
    } else {
        let x = super::load_extract(&args.inputs, &bar)?;
        canonicalize::execute(&job, &x.skills, &x.registries, &x.edges, &bar)?
    };
    bar.finish();
    super::emit(args.format, &summary, |out| write!(out, "{summary}"))?;
    Ok(ExitStatus::Success)
}

/// `--scores`: a `skg score` folder (its `scores` table) or an NDJSON file of such rows.
fn read_scores(path: &Path) -> anyhow::Result<Scores> {
    let file = if path.is_dir() {
        path.join(format!("{}.ndjson", tables::SCORES.name))
    } else {
        path.to_path_buf()
    };
    Ok(Scores {
        source: path.display().to_string(),
        by_skill: canonicalize::read_scores(&file)?,
    })
}

/// `--pairs`: a CSV with columns `a`, `b` and optionally `label`.
fn read_pairs(path: &Path) -> anyhow::Result<Pairs> {
    let text =
        std::fs::read_to_string(path).with_context(|| format!("cannot read {}", path.display()))?;
    let file = path.display().to_string();
    let rows = LabelledPair::parse_csv(&text, &file).map_err(anyhow::Error::msg)?;
    Ok(Pairs { file, rows })
}
