//! One module per subcommand, and what several of them share: where a stage's input comes from
//! when the command line names none, printing a summary.

pub(crate) mod audit;
pub(crate) mod canonicalize;
pub(crate) mod extract;
pub(crate) mod index;
pub(crate) mod keys;
pub(crate) mod measure;
pub(crate) mod scan;
pub(crate) mod schema;
pub(crate) mod score;
pub(crate) mod serve;

use std::{io::Write, path::PathBuf};

use anyhow::Context as _;
use serde::Serialize;
use skg_model::Stage;
use skg_pipeline::ExtractData;

use crate::{args::Format, progress::Bar};

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
        return Ok(skg_pipeline::read_extract(one)?);
    }
    let sources =
        skg_extract::resolve_inputs(&inputs).context("cannot resolve the registries to read")?;
    Ok(skg_extract::extract(&sources, &skg_extract::Options::default(), bar).into())
}

/// `explicit`, else `stage`'s default folder when a finished one is there.
pub(crate) fn stage_dir(explicit: Option<&PathBuf>, stage: Stage) -> Option<PathBuf> {
    explicit.cloned().or_else(|| {
        let p = stage.default_dir();
        p.join(skg_store::SUCCESS_FILE).is_file().then_some(p)
    })
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
        let plan = super::audit::plan(&a).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(
            plan,
            skg_pipeline::audit::Plan::new(vec![PathBuf::from("registries")], PathBuf::from("out"))
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
        let job = skg_pipeline::index::BuildJob::new(PathBuf::new(), PathBuf::new());
        assert_eq!(
            (b.min_confidence, b.threads),
            (job.min_confidence, job.threads)
        );
        assert_eq!(
            (!b.whole_overviews).then_some(b.overview_chars),
            job.dense.overview_chars
        );
        assert_eq!(
            (b.dense_sections, b.usage_chars),
            (job.dense.sections, job.dense.usage_chars)
        );

        let Command::Eval(e) = parse(&["eval", "q.jsonl"]) else {
            panic!("eval")
        };
        let d = skg_index::EvalOptions::default();
        assert_eq!(
            (e.negative_weight, e.pool, e.max_terms, e.bundle_k),
            (d.negative_weight, d.pool, d.max_terms, d.bundle_k)
        );
        assert_eq!(skg_index::Bm25Unit::from(e.bm25_unit), d.bm25_unit);
        assert_eq!(skg_index::Late::from(e.late), d.late);

        let Command::Serve(v) = parse(&["serve"]) else {
            panic!("serve")
        };
        let c = skg_serve::Config::new(PathBuf::new());
        assert_eq!(
            (v.max_body_bytes, v.concurrency, v.max_k, v.query_cache),
            (c.max_body_bytes, c.concurrency, c.max_k, c.query_cache)
        );
        assert_eq!(v.query_cache_mib << 20, c.query_cache_bytes);
        assert_eq!(Some(v.ann_min_rows), c.ann_min_rows);
        assert_eq!(skg_index::Late::from(v.late), c.late);
        let Command::Route(r) = parse(&["route", "a task"]) else {
            panic!("route")
        };
        assert_eq!(skg_index::Late::from(r.late), skg_index::Late::default());
        // A weight that would invert or poison the stage is refused.
        for bad in ["-0.1", "NaN", "inf", "x"] {
            let flag = format!("--late-weight={bad}");
            assert!(
                Cli::try_parse_from(["skg", "serve", flag.as_str()]).is_err(),
                "{bad}"
            );
        }
        let Command::Serve(off) = parse(&["serve", "--late-weight", "0"]) else {
            panic!("serve")
        };
        assert!(!skg_index::Late::from(off.late).runs());
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

    /// `--field-weights` takes six numbers ≥ 0 in the index's field order, and refuses anything
    /// else with the fields named.
    #[test]
    fn field_weights_are_six_numbers_at_least_zero() {
        let eval = |w: &str| {
            Cli::try_parse_from(["skg", "eval", "q.jsonl", "--field-weights", w]).map(|c| {
                match c.command {
                    Command::Eval(e) => e.field_weights,
                    _ => panic!("eval"),
                }
            })
        };
        assert_eq!(
            eval("0.5,0.5,0.5,0.5,1,2").unwrap_or_else(|e| panic!("{e}")),
            Some([0.5, 0.5, 0.5, 0.5, 1.0, 2.0])
        );
        assert_eq!(
            eval(" 3, 2 ,1.5,1.5,1.2,1").unwrap_or_else(|e| panic!("{e}")),
            Some([3.0, 2.0, 1.5, 1.5, 1.2, 1.0])
        );
        for (bad, says) in [
            ("1,2", "2 numbers given, 6 wanted"),
            ("1,2,3,4,5,6,7", "7 numbers given"),
            ("1,2,3,4,5,-1", "body: `-1`"),
            ("1,x,3,4,5,6", "description: `x`"),
            ("1,2,3,4,NaN,6", "headings: `NaN`"),
        ] {
            let e = eval(bad).expect_err(bad).to_string();
            assert!(e.contains(says), "{bad}: {e}");
        }
        let Command::Eval(e) = parse(&["eval", "q.jsonl"]) else {
            panic!("eval")
        };
        assert_eq!(
            e.field_weights,
            skg_index::EvalOptions::default().field_weights
        );
    }
}
