//! Score: extract's tables (and canonicalize's clusters) → the `scores` table.

use std::{collections::BTreeMap, fmt, path::Path};

use serde::Serialize;
use skg_model::{Member, Progress, SkillKeys, Stage};
use skg_score::{Context, LabelRow, Model, Options};
use skg_store::{Manifest, Staging, tables};

use crate::{ExtractData, IoContext as _, Result};

/// The data the features are computed from: extract's tables and, when present,
/// canonicalize's clusters.
#[derive(Debug)]
pub struct Data {
    /// Extract's tables.
    pub extract: ExtractData,
    /// Canonicalize's cluster members.
    pub members: Option<Vec<Member>>,
}

impl Data {
    /// Extract's folder and, when given, canonicalize's.
    ///
    /// # Errors
    /// A folder is not the stage's finished output.
    pub fn load(extract: &Path, canon: Option<&Path>) -> Result<Data> {
        Ok(Data {
            extract: crate::read_extract(extract)?,
            members: canon
                .map(|c| crate::read_table(c, Stage::Canonicalize, &tables::MEMBERS))
                .transpose()?,
        })
    }

    /// The scorer's view of the data.
    pub fn context(&self) -> Context<'_> {
        Context {
            skills: &self.extract.skills,
            edges: &self.extract.edges,
            diagnostics: &self.extract.diagnostics,
            members: self.members.as_deref(),
        }
    }

    /// Labelled examples: the labels' rows matched to skills.
    ///
    /// # Errors
    /// A row names no skill or no usable label.
    pub fn examples(&self, rows: &[LabelRow]) -> Result<Vec<skg_score::Example>> {
        let keys = SkillKeys::of_skills(&self.extract.skills, &self.extract.registries);
        Ok(skg_score::examples(rows, &self.context(), &keys)?)
    }
}

/// Where the model came from, as the manifest records it.
#[derive(Debug, Clone, Copy)]
pub enum ModelSource<'a> {
    /// The model committed with skg.
    Bundled,
    /// A model file.
    File(&'a Path),
}

/// What a scoring run reports (`skg score`).
#[derive(Debug, Serialize)]
pub struct Report {
    out: String,
    #[serde(flatten)]
    summary: skg_score::Summary,
}

/// Scores every skill and writes the output folder.
///
/// # Errors
/// The folder cannot be written.
pub fn execute(
    data: &Data,
    model: &Model,
    source: ModelSource<'_>,
    options: Options,
    out: &Path,
    progress: &dyn Progress,
) -> Result<Report> {
    let n = data.extract.skills.len() as u64;
    progress.phase("score skills", n);
    let rows = skg_score::score(model, &data.context(), options.threshold);
    progress.advance(n);
    let summary = skg_score::Summary::of(&rows, options.threshold);
    let manifest_options = crate::manifest_options(
        &options,
        serde_json::json!({
            "model": match source {
                ModelSource::Bundled => format!(
                    "bundled {}",
                    Path::new(skg_score::model::BUNDLED_PATH)
                        .file_stem()
                        .map_or_else(Default::default, |s| s.to_string_lossy())
                ),
                ModelSource::File(p) => p.display().to_string(),
            },
            "model_data_hash": model.training.data_hash,
        }),
    )?;
    let write = || -> skg_store::Result<()> {
        let mut staging = Staging::begin(out)?;
        staging.write_table(&tables::SCORES, &rows)?;
        let counts = BTreeMap::from([
            ("scores".to_owned(), rows.len() as u64),
            ("quarantined".to_owned(), summary.quarantined as u64),
        ]);
        staging.commit(Manifest::new(
            Stage::Score,
            data.extract.registries.clone(),
            counts,
            manifest_options,
        ))?;
        Ok(())
    };
    write().at(|| format!("cannot write {}", out.display()))?;
    Ok(Report {
        out: out.display().to_string(),
        summary,
    })
}

impl fmt::Display for Report {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let s = &self.summary;
        writeln!(
            f,
            "{} skills scored → {}: {} quarantined (slop_score < {})",
            s.skills, self.out, s.quarantined, s.threshold
        )?;
        write!(f, "{s}")
    }
}
