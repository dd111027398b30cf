//! `skg score`, `skg score train`, `skg score eval`.

use std::{io::Write, path::Path};

use anyhow::Context as _;
use skg_model::Stage;
use skg_pipeline::score::{Data, ModelSource};
use skg_score::{EvalReport, LabelRow, Model, Options, TrainReport};

use crate::{
    ExitStatus, GlobalArgs,
    args::{ScoreAction, ScoreArgs, ScoreEvalArgs, ScoreTrainArgs},
    progress::Bar,
};

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
    let data = load_data(&args.data)?;
    let model = load_model(args.model.as_deref())?;
    let options = Options {
        threshold: args.threshold,
    };
    let source = args
        .model
        .as_deref()
        .map_or(ModelSource::Bundled, ModelSource::File);
    let report = skg_pipeline::score::execute(&data, &model, source, options, &args.out, &bar)?;
    bar.finish();
    super::emit(args.format, &report, |out| write!(out, "{report}"))?;
    Ok(ExitStatus::Success)
}

/// Labelled examples: the labels CSV's rows matched to skills (bad rows are errors naming the
/// row).
fn examples(labels: &Path, data: &Data) -> anyhow::Result<Vec<skg_score::Example>> {
    let text = std::fs::read_to_string(labels)
        .with_context(|| format!("cannot read {}", labels.display()))?;
    let rows = LabelRow::parse_csv(&text, &labels.display().to_string())?;
    Ok(data.examples(&rows)?)
}

/// Extract's folder and canonicalize's (`--canon`, else its default folder when finished).
fn load_data(args: &crate::args::ScoreData) -> anyhow::Result<Data> {
    let canon = super::stage_dir(args.canon.as_ref(), Stage::Canonicalize);
    Ok(Data::load(&args.extract, canon.as_deref())?)
}

fn train(args: &ScoreTrainArgs) -> anyhow::Result<ExitStatus> {
    let data = load_data(&args.data)?;
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
    let data = load_data(&args.data)?;
    let ex = examples(&args.labels, &data)?;
    let model = load_model(args.model.as_deref())?;
    let scores: Vec<f64> = ex.iter().map(|e| model.slop_score(&e.x)).collect();
    let report = EvalReport::new(&ex, &scores, args.threshold);
    super::emit(args.format, &report, |out| write!(out, "{report}"))?;
    Ok(ExitStatus::Success)
}
