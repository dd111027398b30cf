//! `skg score`, `skg score train`, `skg score eval`.

use std::{
    collections::BTreeMap,
    io::Write,
    path::{Path, PathBuf},
};

use anyhow::Context as _;
use serde::Serialize;
use skg_model::{Member, Progress as _, SkillKeys, Stage};
use skg_score::{Context, EvalReport, LabelRow, Model, Options, TrainReport};
use skg_store::{Manifest, Staging, tables};

use crate::{
    ExitStatus, GlobalArgs,
    args::{ScoreAction, ScoreArgs, ScoreEvalArgs, ScoreTrainArgs},
    progress::Bar,
};

/// Pipeline data the features are computed from: extract's tables and, when present,
/// canonicalize's clusters.
pub(crate) struct Data {
    x: super::ExtractData,
    members: Option<Vec<Member>>,
}

impl Data {
    /// Extract's folder and, when there is one, canonicalize's.
    pub(crate) fn load(extract: &Path, canon: Option<&PathBuf>) -> anyhow::Result<Data> {
        let x = super::read_extract(extract)?;
        let members = super::stage_dir(canon, Stage::Canonicalize)
            .map(|c| super::read_table(&c, Stage::Canonicalize, &tables::MEMBERS))
            .transpose()?;
        Ok(Data { x, members })
    }

    fn context(&self) -> Context<'_> {
        Context {
            skills: &self.x.skills,
            edges: &self.x.edges,
            diagnostics: &self.x.diagnostics,
            members: self.members.as_deref(),
        }
    }
}

/// The model at `path`, or the one committed with skg.
pub(crate) fn load_model(path: Option<&Path>) -> anyhow::Result<Model> {
    match path {
        Some(p) => {
            let text = std::fs::read_to_string(p)
                .with_context(|| format!("cannot read {}", p.display()))?;
            Ok(Model::from_json(&text).with_context(|| format!("{}", p.display()))?)
        }
        None => Ok(Model::bundled()?),
    }
}

pub(crate) fn run(args: &ScoreArgs, global: &GlobalArgs) -> anyhow::Result<ExitStatus> {
    match &args.action {
        Some(ScoreAction::Train(t)) => return train(t),
        Some(ScoreAction::Eval(e)) => return eval(e),
        None => {}
    }
    let bar = Bar::new(global.quiet > 0);
    let data = Data::load(&args.data.extract, args.data.canon.as_ref())?;
    let model = load_model(args.model.as_deref())?;
    let options = Options {
        threshold: args.threshold,
    };
    let summary = execute(
        &data,
        &model,
        args.model.as_deref(),
        options,
        &args.out,
        &bar,
    )?;
    bar.finish();
    super::emit(args.format, &summary, |out| print_human(out, &summary))?;
    Ok(ExitStatus::Success)
}

/// What `skg score` prints.
#[derive(Debug, Serialize)]
pub(crate) struct Report {
    out: String,
    #[serde(flatten)]
    summary: skg_score::Summary,
}

/// Scores every skill and writes the output folder (`model_path`: where the model came from,
/// `None` for the bundled one).
pub(crate) fn execute(
    data: &Data,
    model: &Model,
    model_path: Option<&Path>,
    options: Options,
    out: &Path,
    bar: &Bar,
) -> anyhow::Result<Report> {
    bar.phase("score skills", data.x.skills.len() as u64);
    let rows = skg_score::score(model, &data.context(), options.threshold);
    bar.advance(data.x.skills.len() as u64);
    let summary = skg_score::Summary::of(&rows, options.threshold);
    let mut staging = Staging::begin(out)?;
    staging.write_table(&tables::SCORES, &rows)?;
    let manifest = Manifest::new(
        Stage::Score,
        data.x.registries.clone(),
        BTreeMap::from([
            ("scores".to_owned(), rows.len() as u64),
            ("quarantined".to_owned(), summary.quarantined as u64),
        ]),
        super::manifest_options(
            &options,
            serde_json::json!({
                "model": model_path.map_or_else(|| "bundled slop-v1".to_owned(), |p| p.display().to_string()),
                "model_data_hash": model.training.data_hash,
            }),
        )?,
    );
    staging
        .commit(manifest)
        .with_context(|| format!("cannot write {}", out.display()))?;
    Ok(Report {
        out: out.display().to_string(),
        summary,
    })
}

fn print_human(out: &mut impl Write, r: &Report) -> std::io::Result<()> {
    let s = &r.summary;
    writeln!(
        out,
        "{} skills scored → {}: {} quarantined (slop_score < {})",
        s.skills, r.out, s.quarantined, s.threshold
    )?;
    write!(out, "{s}")
}

/// Labelled examples: the labels CSV's rows matched to skills (bad rows are errors naming the
/// row).
fn examples(labels: &Path, data: &Data) -> anyhow::Result<Vec<skg_score::Example>> {
    let text = std::fs::read_to_string(labels)
        .with_context(|| format!("cannot read {}", labels.display()))?;
    let rows = LabelRow::parse_csv(&text, &labels.display().to_string())?;
    let keys = SkillKeys::of_skills(&data.x.skills, &data.x.registries);
    Ok(skg_score::examples(&rows, &data.context(), &keys)?)
}

fn train(args: &ScoreTrainArgs) -> anyhow::Result<ExitStatus> {
    let data = Data::load(&args.data.extract, args.data.canon.as_ref())?;
    let ex = examples(&args.labels, &data)?;
    let cv = skg_score::cross_validate(&ex, args.alpha, 5, args.threshold)?;
    let loro = skg_score::leave_one_registry_out(&ex, args.alpha, args.threshold)?;
    let mut model = skg_score::train(&ex, args.alpha)?;
    model.training.labels = args.labels.display().to_string();
    model.metrics = serde_json::json!({ "cross_validated": cv, "leave_one_registry_out": loro });
    let text = serde_json::to_string_pretty(&model)? + "\n";
    skg_artifact::write_file(&args.out, text.as_bytes())
        .with_context(|| format!("cannot write {}", args.out.display()))?;
    let report = TrainReport {
        model: args.out.display().to_string(),
        rows: ex.len(),
        cross_validated: cv,
        leave_one_registry_out: loro,
        coefficients: model
            .features
            .iter()
            .cloned()
            .zip(model.coefficients.iter().copied())
            .collect(),
        intercept: model.intercept,
    };
    super::emit(args.format, &report, |o| write!(o, "{report}"))?;
    Ok(ExitStatus::Success)
}

fn eval(args: &ScoreEvalArgs) -> anyhow::Result<ExitStatus> {
    let data = Data::load(&args.data.extract, args.data.canon.as_ref())?;
    let ex = examples(&args.labels, &data)?;
    let model = load_model(args.model.as_deref())?;
    let scores: Vec<f64> = ex.iter().map(|e| model.slop_score(&e.x)).collect();
    let report = EvalReport::new(&ex, &scores, args.threshold);
    super::emit(args.format, &report, |out| write!(out, "{report}"))?;
    Ok(ExitStatus::Success)
}
