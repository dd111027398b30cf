//! One module per subcommand, and what several of them share: reading stage outputs, embedding
//! through a cache, printing a summary.

pub(crate) mod audit;
pub(crate) mod canonicalize;
pub(crate) mod extract;
pub(crate) mod index;
pub(crate) mod measure;
pub(crate) mod schema;
pub(crate) mod score;
pub(crate) mod serve;

use std::{
    io::Write,
    path::{Path, PathBuf},
};

use anyhow::Context as _;
use serde::Serialize;
use skg_model::{Diagnostic, Edge, RegistryInput, Skill, Stage};
use skg_store::tables;

use crate::{args::Format, progress::Bar};

/// Extract's tables, as the later stages read them.
pub(crate) struct ExtractData {
    pub(crate) skills: Vec<Skill>,
    pub(crate) edges: Vec<Edge>,
    pub(crate) diagnostics: Vec<Diagnostic>,
    pub(crate) registries: Vec<RegistryInput>,
}

/// An extract output folder.
pub(crate) fn read_extract(dir: &Path) -> anyhow::Result<ExtractData> {
    let m = skg_store::read_stage_manifest(dir, Stage::Extract).with_context(|| {
        format!(
            "cannot read the extract output {} (run `skg extract` first)",
            dir.display()
        )
    })?;
    let read = |t: &str| format!("cannot read {t} from {}", dir.display());
    Ok(ExtractData {
        skills: skg_store::read_ndjson(dir, tables::SKILLS.name).with_context(|| read("skills"))?,
        edges: skg_store::read_ndjson(dir, tables::EDGES.name).with_context(|| read("edges"))?,
        diagnostics: skg_store::read_ndjson(dir, tables::DIAGNOSTICS.name)
            .with_context(|| read("diagnostics"))?,
        registries: m.inputs,
    })
}

/// A table of a finished folder `stage` wrote.
pub(crate) fn read_table<T: serde::de::DeserializeOwned>(
    dir: &Path,
    stage: Stage,
    table: &tables::Table<T>,
) -> anyhow::Result<Vec<T>> {
    skg_store::read_rows(dir, stage, table)
        .with_context(|| format!("cannot read {} from {}", table.name, dir.display()))
}

/// An extract output folder (one input holding a `manifest.json`), or registries extracted on
/// the fly with the default options. Without inputs: `reports/extract` when it is finished,
/// else `registries`.
pub(crate) fn load_extract(inputs: &[PathBuf], bar: &Bar) -> anyhow::Result<ExtractData> {
    let inputs: Vec<PathBuf> = if inputs.is_empty() {
        vec![stage_dir(None, Stage::Extract).unwrap_or_else(|| PathBuf::from("registries"))]
    } else {
        inputs.to_vec()
    };
    if let [one] = inputs.as_slice()
        && one.join(skg_store::MANIFEST_FILE).is_file()
    {
        return read_extract(one);
    }
    let sources =
        skg_extract::resolve_inputs(&inputs).context("cannot resolve the registries to read")?;
    let x = skg_extract::extract(&sources, &skg_extract::Options::default(), bar);
    Ok(ExtractData {
        skills: x.skills,
        edges: x.edges,
        diagnostics: x.diagnostics,
        registries: x.registries,
    })
}

/// `explicit`, else `stage`'s default folder when a finished one is there.
pub(crate) fn stage_dir(explicit: Option<&PathBuf>, stage: Stage) -> Option<PathBuf> {
    explicit.cloned().or_else(|| {
        let p = stage.default_dir();
        p.join(skg_store::SUCCESS_FILE).is_file().then_some(p)
    })
}

/// A stage's manifest options: its typed options as serialized, with `extra` keys (where its
/// inputs came from) beside them.
pub(crate) fn manifest_options(
    options: &impl Serialize,
    extra: serde_json::Value,
) -> anyhow::Result<serde_json::Value> {
    let mut v = serde_json::to_value(options)?;
    if let (Some(m), serde_json::Value::Object(e)) = (v.as_object_mut(), extra) {
        m.extend(e);
    }
    Ok(v)
}

/// Prints a summary on stdout: pretty JSON, or the human form.
pub(crate) fn emit<T: Serialize>(
    format: Format,
    value: &T,
    human: impl FnOnce(&mut std::io::StdoutLock<'static>) -> std::io::Result<()>,
) -> anyhow::Result<()> {
    let mut out = std::io::stdout().lock();
    match format {
        Format::Json => {
            serde_json::to_writer_pretty(&mut out, value)?;
            writeln!(out)?;
        }
        Format::Human => human(&mut out)?,
    }
    Ok(())
}

/// A vector for every text, from the embedding cache at `cache_path` where possible.
pub(crate) fn embed_texts(
    texts: &[String],
    cache_path: &Path,
    threads: usize,
    bar: &Bar,
) -> anyhow::Result<skg_embed::Embedded> {
    skg_embed::embed_with_cache(texts, skg_embed::read_cache(cache_path), threads, bar).map_err(
        |e| match e {
            skg_embed::Error::Missing { .. } => {
                anyhow::anyhow!("{e}\n(or pass --no-embeddings to compare descriptions lexically)")
            }
            e => e.into(),
        },
    )
}

/// The command line's defaults are the crates' defaults: nothing is written twice.
#[cfg(test)]
mod defaults {
    use std::path::PathBuf;

    use clap::Parser as _;

    use crate::{Cli, Command, args::IndexCommand};

    fn parse(args: &[&str]) -> Command {
        let mut all = vec!["skg"];
        all.extend(args);
        Cli::try_parse_from(all)
            .unwrap_or_else(|e| panic!("{e}"))
            .command
    }

    #[test]
    #[expect(
        clippy::many_single_char_names,
        clippy::float_cmp,
        reason = "one parsed command each; defaults are copied, not computed"
    )]
    fn flags_default_to_the_stage_options() {
        let Command::Extract(x) = parse(&["extract"]) else {
            panic!("extract")
        };
        assert_eq!(x.limits.options(), skg_extract::Options::default());
        assert_eq!(x.out, skg_model::Stage::Extract.default_dir());

        let Command::Audit(a) = parse(&["audit", "-o", "out"]) else {
            panic!("audit")
        };
        let plan = super::audit::Plan::from_args(&a).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(
            plan,
            super::audit::Plan::new(vec![PathBuf::from("registries")], PathBuf::from("out"))
        );

        let Command::Measure(m) = parse(&["measure"]) else {
            panic!("measure")
        };
        let d = skg_measure::Options::default();
        assert_eq!((m.min_confidence, m.seed), (d.min_confidence, d.seed));

        let Command::Score(s) = parse(&["score"]) else {
            panic!("score")
        };
        assert_eq!(s.threshold, skg_score::Options::default().threshold);

        let Command::Index(IndexCommand::Build(b)) = parse(&["index", "build"]) else {
            panic!("index build")
        };
        let job = super::index::BuildJob::new(PathBuf::new(), PathBuf::new());
        assert_eq!(
            (b.min_confidence, b.threads),
            (job.min_confidence, job.threads)
        );

        let Command::Eval(e) = parse(&["eval", "q.jsonl"]) else {
            panic!("eval")
        };
        let d = skg_index::EvalOptions::default();
        assert_eq!(
            (e.negative_weight, e.pool, e.bundle_k),
            (d.negative_weight, d.pool, d.bundle_k)
        );

        let Command::Serve(v) = parse(&["serve"]) else {
            panic!("serve")
        };
        let c = skg_serve::Config::new(PathBuf::new());
        assert_eq!(
            (v.max_body_bytes, v.concurrency, v.max_k, v.query_cache),
            (c.max_body_bytes, c.concurrency, c.max_k, c.query_cache)
        );
        assert_eq!(
            (
                std::time::Duration::from_millis(v.timeout_ms),
                std::time::Duration::from_millis(v.header_timeout_ms)
            ),
            (c.timeout, c.header_read_timeout)
        );

        let Command::Gate(g) = parse(&["gate"]) else {
            panic!("gate")
        };
        let flags = skg_measure::GateConfig {
            min_rscore: g.min_rscore,
            ..skg_measure::GateConfig::default()
        };
        assert_eq!(
            skg_measure::GateOptions::resolve(flags),
            skg_measure::GateOptions::default()
        );
    }
}
