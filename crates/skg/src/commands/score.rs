//! `skg score`, `skg score train`, `skg score eval`.

use std::{collections::BTreeMap, io::Write, path::Path};

use anyhow::{Context as _, bail};
use serde::Serialize;
use skg_model::Member;
use skg_score::{Context, Example, FEATURES, Label, Model};
use skg_store::{Manifest, Staging, tables};

use crate::{
    ExitStatus, GlobalArgs,
    args::{Format, ScoreAction, ScoreArgs, ScoreData, ScoreEvalArgs, ScoreTrainArgs},
    progress::Bar,
};

/// Pipeline data the features are computed from: extract's tables and, when present,
/// canonicalize's clusters.
struct Data {
    x: super::ExtractData,
    members: Option<Vec<Member>>,
}

impl Data {
    fn load(d: &ScoreData) -> anyhow::Result<Data> {
        let x = super::read_extract(&d.extract)?;
        let members = match super::stage_dir(d.canon.as_ref(), "reports/canonicalize") {
            Some(c) => Some(super::read_stage(&c, "canonicalize", "members")?),
            None => None,
        };
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

fn load_model(path: Option<&Path>) -> anyhow::Result<Model> {
    match path {
        Some(p) => {
            let text = std::fs::read_to_string(p)
                .with_context(|| format!("cannot read {}", p.display()))?;
            Ok(Model::from_json(&text).with_context(|| format!("{}", p.display()))?)
        }
        None => Ok(Model::bundled()?),
    }
}

#[derive(Debug, Serialize, Default)]
struct Reg {
    skills: usize,
    quarantined: usize,
    mean_score: f64,
}

pub(crate) fn run(args: &ScoreArgs, global: &GlobalArgs) -> anyhow::Result<ExitStatus> {
    match &args.action {
        Some(ScoreAction::Train(t)) => return train(t),
        Some(ScoreAction::Eval(e)) => return eval(e),
        None => {}
    }
    let bar = Bar::new(global.quiet > 0);
    let summary = execute(args, &bar)?;
    bar.finish();
    super::emit(args.format, &summary, |out| print_human(out, &summary))?;
    Ok(ExitStatus::Success)
}

/// What `skg score` prints.
#[derive(Debug, Serialize)]
pub(crate) struct Summary {
    out: String,
    skills: usize,
    quarantined: usize,
    threshold: f64,
    registries: BTreeMap<String, Reg>,
}

/// Scores every skill and writes the output folder; the summary is not printed.
pub(crate) fn execute(args: &ScoreArgs, bar: &Bar) -> anyhow::Result<Summary> {
    let data = Data::load(&args.data)?;
    let model = load_model(args.model.as_deref())?;
    skg_extract::Progress::phase(bar, "score skills", data.x.skills.len() as u64);
    let rows = skg_score::score(&model, &data.context(), args.threshold);
    skg_extract::Progress::advance(bar, data.x.skills.len() as u64);
    let mut staging = Staging::begin(&args.out)?;
    staging.write_table(&tables::SCORES, &rows)?;
    let quarantined = rows.iter().filter(|r| r.quarantined).count();
    let manifest = Manifest::new(
        "score",
        data.x.registries.clone(),
        BTreeMap::from([
            ("scores".to_owned(), rows.len() as u64),
            ("quarantined".to_owned(), quarantined as u64),
        ]),
        serde_json::json!({
            "threshold": args.threshold,
            "model": args.model.as_ref().map_or_else(|| "bundled slop-v1".to_owned(), |p| p.display().to_string()),
            "model_data_hash": model.training.data_hash,
        }),
    );
    staging
        .commit(manifest)
        .with_context(|| format!("cannot write {}", args.out.display()))?;

    let mut by: BTreeMap<String, Reg> = BTreeMap::new();
    for r in &rows {
        let e = by.entry(r.registry.to_string()).or_default();
        e.skills += 1;
        e.quarantined += usize::from(r.quarantined);
        e.mean_score += r.slop_score;
    }
    for e in by.values_mut() {
        e.mean_score /= e.skills.max(1) as f64;
    }
    Ok(Summary {
        out: args.out.display().to_string(),
        skills: rows.len(),
        quarantined,
        threshold: args.threshold,
        registries: by,
    })
}

fn print_human(out: &mut impl Write, s: &Summary) -> std::io::Result<()> {
    writeln!(
        out,
        "{} skills scored → {}: {} quarantined (slop_score < {})",
        s.skills, s.out, s.quarantined, s.threshold
    )?;
    writeln!(
        out,
        "\n{:<40} {:>7} {:>12} {:>11}",
        "registry", "skills", "quarantined", "mean score"
    )?;
    for (name, r) in &s.registries {
        writeln!(
            out,
            "{name:<40} {:>7} {:>12} {:>11.3}",
            r.skills, r.quarantined, r.mean_score
        )?;
    }
    Ok(())
}

/// Labelled examples: the labels file's rows matched to skills (bad rows are errors naming the row).
fn examples(labels: &Path, data: &Data) -> anyhow::Result<Vec<Example>> {
    let by_key = super::skill_keys(&data.x.skills, &data.x.registries);
    let xs = skg_score::features::compute(&data.context());
    let mut reader = csv::Reader::from_path(labels)
        .with_context(|| format!("cannot read {}", labels.display()))?;
    let headers = reader.headers()?.clone();
    let col = |n: &str| headers.iter().position(|h| h.trim() == n);
    let (Some(cp), Some(cl)) = (col("path"), col("label")) else {
        bail!("{}: needs columns `path` and `label`", labels.display());
    };
    let mut out = Vec::new();
    for (n, rec) in reader.records().enumerate() {
        let line = n + 2;
        let rec = rec.with_context(|| format!("{}:{line}: not a CSV row", labels.display()))?;
        let path = rec.get(cp).unwrap_or("").trim();
        let raw = rec.get(cl).unwrap_or("").trim();
        let Some(label) = Label::parse(raw) else {
            bail!(
                "{}:{line}: unknown label `{raw}` (expected good, mediocre or slop)",
                labels.display()
            );
        };
        let Some(&i) = by_key.get(path) else {
            bail!(
                "{}:{line}: `{path}` is not a skill of the extract output",
                labels.display()
            );
        };
        out.push(Example {
            key: path.to_owned(),
            registry: data.x.skills[i].registry.to_string(),
            label,
            x: xs[i].clone(),
        });
    }
    if out.is_empty() {
        bail!("{}: no labelled rows", labels.display());
    }
    Ok(out)
}

#[derive(Serialize)]
struct TrainReport {
    model: String,
    rows: usize,
    cross_validated: skg_score::Evaluation,
    leave_one_registry_out: Vec<skg_score::LeftOut>,
    coefficients: Vec<(String, f64)>,
}

fn train(args: &ScoreTrainArgs) -> anyhow::Result<ExitStatus> {
    let data = Data::load(&args.data)?;
    let ex = examples(&args.labels, &data)?;
    let cv = skg_score::cross_validate(&ex, args.alpha, 5, args.threshold)?;
    let loro = skg_score::leave_one_registry_out(&ex, args.alpha, args.threshold)?;
    let mut model = skg_score::train(&ex, args.alpha)?;
    model.training.labels = args.labels.display().to_string();
    model.metrics = serde_json::json!({ "cross_validated": cv, "leave_one_registry_out": loro });
    let text = serde_json::to_string_pretty(&model)? + "\n";
    let tmp = args.out.with_extension("json.tmp");
    std::fs::write(&tmp, &text).with_context(|| format!("cannot write {}", tmp.display()))?;
    std::fs::rename(&tmp, &args.out)
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
    };
    print_train(&report, args.format, model.intercept)?;
    Ok(ExitStatus::Success)
}

fn fmt_auc(a: Option<f64>) -> String {
    a.map_or_else(|| "   -".to_owned(), |x| format!("{x:.3}"))
}

fn print_eval(out: &mut impl Write, name: &str, e: &skg_score::Evaluation) -> std::io::Result<()> {
    let q = |l: &str| e.at_threshold.get(l).copied().unwrap_or((0, 0));
    let (gq, gk) = q("good");
    let (mq, mk) = q("mediocre");
    let (sq, sk) = q("slop");
    writeln!(
        out,
        "{name:<40} {:>4} {:>8} {:>10}   good {gq}/{} mediocre {mq}/{} slop {sq}/{} quarantined",
        e.n,
        fmt_auc(e.auc_good_vs_slop),
        fmt_auc(e.auc_mediocre_as_slop),
        gq + gk,
        mq + mk,
        sq + sk
    )
}

fn print_train(r: &TrainReport, format: Format, intercept: f64) -> anyhow::Result<()> {
    let mut out = std::io::stdout().lock();
    if format == Format::Json {
        serde_json::to_writer_pretty(&mut out, r)?;
        writeln!(out)?;
        return Ok(());
    }
    writeln!(out, "trained on {} labelled skills → {}", r.rows, r.model)?;
    writeln!(
        out,
        "\n{:<40} {:>4} {:>8} {:>10}",
        "evaluation", "n", "AUC g/s", "AUC g/m+s"
    )?;
    print_eval(
        &mut out,
        "5-fold cross-validated (pooled)",
        &r.cross_validated,
    )?;
    for l in &r.leave_one_registry_out {
        match &l.eval {
            Some(e) => print_eval(&mut out, &format!("left out: {}", l.registry), e)?,
            None => writeln!(
                out,
                "left out: {:<30} not evaluable: the other registries hold one class only",
                l.registry
            )?,
        }
    }
    let cv = &r.cross_validated;
    writeln!(
        out,
        "\ncalibration of the cross-validated P(clean), good vs slop (Brier {:.3}):",
        cv.brier.unwrap_or(f64::NAN)
    )?;
    for (bin, n, pred, obs) in &cv.calibration {
        writeln!(
            out,
            "  predicted {bin}: {n:>4} skills, mean predicted {pred:.3}, observed good {obs:.3}"
        )?;
    }
    writeln!(
        out,
        "\ncoefficients (log-odds of clean per standard deviation; intercept {intercept:+.3}):"
    )?;
    let mut c = r.coefficients.clone();
    c.sort_by(|a, b| {
        b.1.abs()
            .partial_cmp(&a.1.abs())
            .unwrap_or(std::cmp::Ordering::Equal)
    });
    for (name, v) in c {
        let doc = FEATURES.iter().find(|f| f.0 == name).map_or("", |f| f.1);
        writeln!(out, "  {v:+.3}  {name:<22} {doc}")?;
    }
    Ok(())
}

fn eval(args: &ScoreEvalArgs) -> anyhow::Result<ExitStatus> {
    let data = Data::load(&args.data)?;
    let ex = examples(&args.labels, &data)?;
    let model = load_model(args.model.as_deref())?;
    let scores: Vec<f64> = ex.iter().map(|e| model.slop_score(&e.x)).collect();
    let all: Vec<&Example> = ex.iter().collect();
    let pooled = skg_score::evaluate(&all, &scores, args.threshold);
    let mut regs: Vec<&str> = ex.iter().map(|e| e.registry.as_str()).collect();
    regs.sort_unstable();
    regs.dedup();
    let per: Vec<(String, skg_score::Evaluation)> = regs
        .iter()
        .map(|r| {
            let (ee, ss): (Vec<&Example>, Vec<f64>) = ex
                .iter()
                .zip(&scores)
                .filter(|(e, _)| e.registry == *r)
                .map(|(e, s)| (e, *s))
                .unzip();
            (
                (*r).to_owned(),
                skg_score::evaluate(&ee, &ss, args.threshold),
            )
        })
        .collect();
    let mut out = std::io::stdout().lock();
    if args.format == Format::Json {
        serde_json::to_writer_pretty(
            &mut out,
            &serde_json::json!({"pooled": pooled, "registries": per.iter().map(|(r, e)| serde_json::json!({"registry": r, "eval": e})).collect::<Vec<_>>()}),
        )?;
        writeln!(out)?;
        return Ok(ExitStatus::Success);
    }
    writeln!(
        out,
        "{:<40} {:>4} {:>8} {:>10}",
        "labels (model as given; not held out)", "n", "AUC g/s", "AUC g/m+s"
    )?;
    print_eval(&mut out, "all", &pooled)?;
    for (r, e) in &per {
        print_eval(&mut out, r, e)?;
    }
    Ok(ExitStatus::Success)
}
