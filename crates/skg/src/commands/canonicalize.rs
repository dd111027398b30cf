//! `skg canonicalize`: skills → duplicate clusters, aliases, variants, canonical skills.

use std::{
    collections::BTreeMap,
    io::Write,
    path::{Path, PathBuf},
    time::Instant,
};

use anyhow::Context;
use serde::Serialize;
use skg_canon::{
    Canonicalization, Index, Input, Options, RegistryCounts,
    eval::{LabelledPair, PairReport, SyntheticTruth},
    synth,
};
use skg_model::{Progress as _, RegistryInput, Skill, SkillId, SkillKeys, Stage};
use skg_store::{Manifest, Staging, tables};

use crate::{ExitStatus, GlobalArgs, args::CanonArgs, progress::Bar};

pub(crate) fn run(args: &CanonArgs, global: &GlobalArgs) -> anyhow::Result<ExitStatus> {
    let bar = Bar::new(global.quiet > 0);
    let job = Job {
        out: args.out.clone(),
        options: Options::default(),
        embeddings: !args.no_embeddings,
        threads: args.threads,
        scores: args.scores.clone(),
        pairs: args.pairs.clone(),
        synthetic: args.synthetic.map(|n| (n, args.seed)),
    };
    let summary = if let Some(n) = args.synthetic {
        let (skills, origins) = synth::generate(n, 8, args.seed);
        let mut s = execute(&job, &skills, &[], &[], &bar)?;
        s.synthetic = Some(skg_canon::eval::synthetic_truth(
            &skills, &s.canon, &origins,
        ));
        s
    } else {
        let x = super::load_extract(&args.inputs, &bar)?;
        execute(&job, &x.skills, &x.registries, &x.edges, &bar)?
    };
    bar.finish();
    super::emit(args.format, &summary, |out| print_human(out, &summary))?;
    Ok(ExitStatus::Success)
}

/// One canonicalization to run.
pub(crate) struct Job {
    pub(crate) out: PathBuf,
    pub(crate) options: Options,
    /// Compare descriptions with the embedding model (else lexically).
    pub(crate) embeddings: bool,
    pub(crate) threads: usize,
    /// Slop scores to pick canonicals by.
    pub(crate) scores: Option<PathBuf>,
    /// Labelled pairs to score.
    pub(crate) pairs: Option<PathBuf>,
    /// Generated skills instead of registries: (count, seed).
    pub(crate) synthetic: Option<(usize, u64)>,
}

#[derive(Debug, Serialize)]
struct Seconds {
    read: f64,
    embed: f64,
    dedup: f64,
    write: f64,
    total: f64,
}

/// What `skg canonicalize` prints.
#[derive(Debug, Serialize)]
pub(crate) struct Summary {
    out: String,
    similarity: &'static str,
    seconds: Seconds,
    embedding: Option<skg_embed::EmbeddingStats>,
    stats: skg_canon::Stats,
    registries: Vec<RegistryCounts>,
    pairs: Option<PairReport>,
    synthetic: Option<SyntheticTruth>,
    #[serde(skip)]
    canon: Canonicalization,
}

/// Canonicalizes `skills` (with the relation `edges` extract found) and writes the output folder.
pub(crate) fn execute(
    job: &Job,
    skills: &[Skill],
    registries: &[RegistryInput],
    edges: &[skg_model::Edge],
    bar: &Bar,
) -> anyhow::Result<Summary> {
    let started = Instant::now();
    let in_degree = skg_canon::in_degree(edges);
    let read_seconds = started.elapsed().as_secs_f64();

    let embed_started = Instant::now();
    let embedded = if job.embeddings {
        let texts: Vec<String> = skills.iter().map(skg_canon::description_text).collect();
        Some(super::embed_texts(
            &texts,
            &job.out.join(skg_embed::CACHE_FILE),
            job.threads,
            bar,
        )?)
    } else {
        tracing::warn!(
            "--no-embeddings: descriptions are compared lexically (content-word Jaccard)"
        );
        None
    };
    let embed_seconds = embed_started.elapsed().as_secs_f64();

    let scores = job.scores.as_deref().map(read_scores).transpose()?;
    let dedup_started = Instant::now();
    let input = Input {
        skills,
        vectors: embedded.as_ref().map(|e| e.vectors.as_slice()),
        scores: scores.as_ref(),
        in_degree: Some(&in_degree),
    };
    bar.phase("fingerprint", skills.len() as u64);
    let index = Index::build(&input, &job.options);
    bar.advance(skills.len() as u64);
    let candidates = index.candidates();
    let c = index.canonicalize_candidates(&candidates, bar);
    let dedup_seconds = dedup_started.elapsed().as_secs_f64();

    let write_started = Instant::now();
    bar.phase("write tables", tables::CANON_TABLES.len() as u64);
    write(&c, skills, registries, embedded.as_ref(), job)
        .with_context(|| format!("cannot write {}", job.out.display()))?;
    let write_seconds = write_started.elapsed().as_secs_f64();

    let pairs = match &job.pairs {
        Some(p) => {
            let keys = SkillKeys::new(
                index
                    .skills()
                    .iter()
                    .map(|s| (s.registry.as_str(), s.path.as_str(), s.name.as_str())),
                registries,
            );
            let rows = read_pairs(p)?;
            let file = p.display().to_string();
            Some(skg_canon::eval::score_pairs(
                &file,
                &rows,
                &index,
                &candidates,
                &c,
                &keys,
            ))
        }
        None => None,
    };
    Ok(Summary {
        out: job.out.display().to_string(),
        similarity: c.stats.similarity,
        seconds: Seconds {
            read: read_seconds,
            embed: embed_seconds,
            dedup: dedup_seconds,
            write: write_seconds,
            total: started.elapsed().as_secs_f64(),
        },
        embedding: embedded.map(|e| e.stats),
        stats: c.stats.clone(),
        registries: c.per_registry(),
        pairs,
        synthetic: None,
        canon: c,
    })
}

/// Slop scores by skill id from NDJSON rows with `id` and `slop_score` (a `skg score` folder
/// or such a file).
fn read_scores(path: &Path) -> anyhow::Result<BTreeMap<SkillId, f64>> {
    #[derive(serde::Deserialize)]
    struct Row {
        id: SkillId,
        slop_score: f64,
    }
    let file = if path.is_dir() {
        path.join(format!("{}.ndjson", tables::SCORES.name))
    } else {
        path.to_path_buf()
    };
    let rows: Vec<Row> = skg_artifact::read_ndjson(&file)
        .with_context(|| format!("{}: rows need `id` and `slop_score`", file.display()))?;
    Ok(rows.into_iter().map(|r| (r.id, r.slop_score)).collect())
}

/// Labelled pairs: a CSV with columns `a`, `b` and optionally `label`.
fn read_pairs(path: &Path) -> anyhow::Result<Vec<LabelledPair>> {
    let text =
        std::fs::read_to_string(path).with_context(|| format!("cannot read {}", path.display()))?;
    LabelledPair::parse_csv(&text, &path.display().to_string()).map_err(anyhow::Error::msg)
}

fn write(
    c: &Canonicalization,
    skills: &[Skill],
    registries: &[RegistryInput],
    embedded: Option<&skg_embed::Embedded>,
    job: &Job,
) -> anyhow::Result<()> {
    let mut staging = Staging::begin(&job.out)?;
    let canonical = c.canonical_skills(skills);
    let aliases = tables::alias_rows(&c.members);
    staging.write_table(&tables::MEMBERS, &c.members)?;
    staging.write_table(&tables::CLUSTERS, &c.clusters)?;
    staging.write_table(&tables::ALIASES, &aliases)?;
    staging.write_table(&tables::CANONICAL_SKILLS, &canonical)?;
    staging.write_table(&tables::EDGES, &c.edges)?;
    if let Some(e) = embedded {
        staging.write_file(skg_embed::CACHE_FILE, &e.cache.to_bytes())?;
    }
    let counts = BTreeMap::from([
        ("members".to_owned(), c.members.len() as u64),
        ("clusters".to_owned(), c.clusters.len() as u64),
        ("aliases".to_owned(), aliases.len() as u64),
        ("canonical_skills".to_owned(), canonical.len() as u64),
        ("edges".to_owned(), c.edges.len() as u64),
    ]);
    let manifest = Manifest::new(
        Stage::Canonicalize,
        registries.to_vec(),
        counts,
        serde_json::json!({
            "similarity": c.stats.similarity,
            "model": embedded.map(|_| skg_embed::MODEL_ID),
            "scores": job.scores.as_ref().map(|p| p.display().to_string()),
            "synthetic": job.synthetic.map(|(n, seed)| serde_json::json!({"skills": n, "seed": seed})),
        }),
    );
    staging.commit(manifest)?;
    Ok(())
}

fn print_human(out: &mut impl Write, s: &Summary) -> std::io::Result<()> {
    writeln!(
        out,
        "{} skills → {} clusters ({} with copies): {} duplicates, {} variants  [{} similarity, {:.1}s]",
        s.stats.skills,
        s.stats.clusters,
        s.stats.multi_clusters,
        s.stats.duplicates,
        s.stats.variants,
        s.similarity,
        s.seconds.total
    )?;
    writeln!(
        out,
        "candidates: {} pairs compared of {} possible; {} duplicate, {} variant; {} chained merges refused",
        s.stats.candidate_pairs,
        s.stats.all_pairs,
        s.stats.duplicate_pairs,
        s.stats.variant_pairs,
        s.stats.chain_merges_refused
    )?;
    if let Some(e) = &s.embedding {
        writeln!(
            out,
            "embeddings: {} texts ({} unique): {} embedded in {:.1}s ({:.0}/s), {} from cache",
            e.texts, e.unique_texts, e.embedded, e.embed_seconds, e.texts_per_second, e.from_cache
        )?;
    } else {
        writeln!(
            out,
            "embeddings: off (--no-embeddings): descriptions compared lexically"
        )?;
    }
    write!(out, "{}", skg_canon::RegistryTable(&s.registries))?;
    if let Some(p) = &s.pairs {
        write!(out, "{p}")?;
    }
    if let Some(t) = &s.synthetic {
        write!(out, "{t}")?;
    }
    Ok(())
}
