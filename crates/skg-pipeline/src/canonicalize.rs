//! Canonicalize: skills → duplicate clusters, aliases, variants, canonical skills.

use std::{
    collections::BTreeMap,
    fmt,
    path::{Path, PathBuf},
    time::Instant,
};

use serde::Serialize;
use skg_canon::{
    Canonicalization, Index, Input, Options, RegistryCounts,
    eval::{LabelledPair, PairReport, SyntheticTruth},
    synth,
};
use skg_model::{CapabilityRow, Progress, RegistryInput, Skill, SkillId, SkillKeys, Stage};
use skg_store::{Manifest, Staging, tables};

use crate::{IoContext as _, Result};

/// Slop scores to pick canonicals by, and where they came from.
#[derive(Debug, Clone)]
pub struct Scores {
    /// The folder or file read (recorded in the manifest).
    pub source: String,
    /// Slop score by skill.
    pub by_skill: BTreeMap<SkillId, f64>,
}

/// Labelled pairs to score the decisions against, and the file they came from.
#[derive(Debug, Clone)]
pub struct Pairs {
    /// The file read (named in the report).
    pub file: String,
    /// The pairs.
    pub rows: Vec<LabelledPair>,
}

/// One canonicalization to run.
#[derive(Debug, Clone)]
pub struct Job {
    /// The output folder.
    pub out: PathBuf,
    /// The stage's options.
    pub options: Options,
    /// Compare descriptions with the embedding model (else lexically).
    pub embeddings: bool,
    /// Threads for embedding inference.
    pub threads: usize,
    /// Slop scores to pick canonicals by.
    pub scores: Option<Scores>,
    /// Labelled pairs to score.
    pub pairs: Option<Pairs>,
    /// Labelled capability types to score the refined types against.
    pub capability_labels: Option<Vec<skg_extract::capability::CapabilityLabel>>,
}

impl Job {
    /// A canonicalization into `out` with the default options, embeddings on.
    pub fn new(out: PathBuf) -> Job {
        Job {
            out,
            options: Options::default(),
            embeddings: true,
            threads: skg_embed::DEFAULT_THREADS,
            scores: None,
            pairs: None,
            capability_labels: None,
        }
    }
}

#[derive(Debug, Serialize)]
struct Seconds {
    read: f64,
    embed: f64,
    dedup: f64,
    write: f64,
    total: f64,
}

/// What a canonicalization reports (`skg canonicalize`).
#[derive(Debug, Serialize)]
pub struct Summary {
    out: String,
    similarity: &'static str,
    seconds: Seconds,
    embedding: Option<skg_embed::EmbeddingStats>,
    stats: skg_canon::Stats,
    registries: Vec<RegistryCounts>,
    pairs: Option<PairReport>,
    synthetic: Option<SyntheticTruth>,
    capabilities: CapabilityCounts,
    capability_labels: Option<skg_extract::capability::CapabilityEval>,
}

/// How the skills' capability types were named (`capabilities` table).
#[derive(Debug, Default, Serialize)]
struct CapabilityCounts {
    /// Typed by extract's word evidence.
    words: usize,
    /// Typed by the nearest type prototype (the words said `unknown`).
    embedding: usize,
    /// Left `unknown`.
    unknown: usize,
}

impl CapabilityCounts {
    fn of(rows: &[CapabilityRow]) -> CapabilityCounts {
        use skg_extract::capability::CapabilityEvidence;
        let count =
            |e: CapabilityEvidence| rows.iter().filter(|r| r.evidence == e.as_str()).count();
        CapabilityCounts {
            words: count(CapabilityEvidence::Words),
            embedding: count(CapabilityEvidence::Embedding),
            unknown: count(CapabilityEvidence::None),
        }
    }
}

/// Generates `n` skills with known copies (seed `seed`), canonicalizes them into `job.out` and
/// reports how well the known copies were found.
///
/// # Errors
/// As [`execute`].
pub fn synthetic(job: &Job, n: usize, seed: u64, progress: &dyn Progress) -> Result<Summary> {
    let (skills, origins) = synth::generate(n, 8, seed);
    let provenance = serde_json::json!({"skills": n, "seed": seed});
    let (mut s, c) = run(job, &skills, &[], &[], Some(&provenance), progress)?;
    s.synthetic = Some(skg_canon::eval::synthetic_truth(&skills, &c, &origins));
    Ok(s)
}

/// Canonicalizes `skills` (with the relation `edges` extract found) and writes the output folder.
///
/// # Errors
/// The embedding model fails, or the folder cannot be written.
pub fn execute(
    job: &Job,
    skills: &[Skill],
    registries: &[RegistryInput],
    edges: &[skg_model::Edge],
    progress: &dyn Progress,
) -> Result<Summary> {
    Ok(run(job, skills, registries, edges, None, progress)?.0)
}

fn run(
    job: &Job,
    skills: &[Skill],
    registries: &[RegistryInput],
    edges: &[skg_model::Edge],
    synthetic: Option<&serde_json::Value>,
    progress: &dyn Progress,
) -> Result<(Summary, Canonicalization)> {
    let started = Instant::now();
    let in_degree = skg_canon::in_degree(edges);
    let read_seconds = started.elapsed().as_secs_f64();

    let embed_started = Instant::now();
    let taxonomy = skg_extract::capability::taxonomy();
    let prototype_texts = taxonomy.prototype_texts();
    // The taxonomy's prototype texts ride along after the descriptions (one cache).
    let texts: Option<Vec<String>> = job.embeddings.then(|| {
        skills
            .iter()
            .map(skg_canon::description_text)
            .chain(prototype_texts.iter().flatten().cloned())
            .collect()
    });
    let embedded = if let Some(texts) = &texts {
        Some(embed_texts(
            texts,
            &job.out.join(skg_embed::CACHE_FILE),
            job.threads,
            progress,
        )?)
    } else {
        tracing::warn!(
            "--no-embeddings: descriptions are compared lexically (content-word Jaccard)"
        );
        None
    };
    let embed_seconds = embed_started.elapsed().as_secs_f64();

    let (descriptions, prototype_vectors) = embedded
        .as_ref()
        .map(|e| e.vectors.split_at(skills.len()))
        .unzip();
    let prototypes = prototype_vectors.and_then(|v| {
        let p = prototypes(&prototype_texts, v);
        if p.is_none() {
            tracing::warn!(
                "the capability taxonomy's prototype vectors are unusable: types stay as extract's words named them"
            );
        }
        p
    });
    // A skill's evidence for the prototypes: its description's vector — none when it had nothing
    // to embed (no description, no body: the vector of "" says nothing).
    let evidence: Option<Vec<Option<&[f32]>>> =
        descriptions.zip(texts.as_deref()).map(|(vectors, texts)| {
            vectors
                .iter()
                .zip(texts)
                .map(|(v, t)| (!t.is_empty()).then_some(v.as_slice()))
                .collect()
        });
    let capabilities = capability_rows(skills, evidence.as_deref(), prototypes.as_ref());

    let dedup_started = Instant::now();
    let input = Input {
        skills,
        vectors: descriptions,
        scores: job.scores.as_ref().map(|s| &s.by_skill),
        in_degree: Some(&in_degree),
    };
    progress.phase("fingerprint", skills.len() as u64);
    let index = Index::build(&input, &job.options);
    progress.advance(skills.len() as u64);
    let candidates = index.candidates();
    let c = index.canonicalize_candidates(&candidates, progress);
    let dedup_seconds = dedup_started.elapsed().as_secs_f64();

    let write_started = Instant::now();
    progress.phase("write tables", tables::CANON_TABLES.len() as u64);
    write(
        &c,
        skills,
        &capabilities,
        registries,
        embedded.as_ref(),
        job,
        synthetic,
    )
    .at(|| format!("cannot write {}", job.out.display()))?;
    let write_seconds = write_started.elapsed().as_secs_f64();

    let pairs = job.pairs.as_ref().map(|p| {
        let keys = SkillKeys::new(
            index
                .skills()
                .iter()
                .map(|s| (s.registry.as_str(), s.path.as_str(), s.name.as_str())),
            registries,
        );
        skg_canon::eval::score_pairs(&p.file, &p.rows, &index, &candidates, &c, &keys)
    });
    let capability_labels = job.capability_labels.as_ref().map(|labels| {
        // Only the labelled skills are copied (with their refined type).
        let wanted: std::collections::HashSet<(&str, &str)> = labels
            .iter()
            .map(|l| (l.registry.as_str(), l.path.as_str()))
            .collect();
        let mut typed: Vec<Skill> = skills
            .iter()
            .filter(|s| wanted.contains(&(s.registry.as_str(), s.root.as_str())))
            .cloned()
            .collect();
        apply_capabilities(&mut typed, &capabilities);
        skg_extract::capability::evaluate(&typed, labels)
    });
    let counts = CapabilityCounts::of(&capabilities);
    let summary = Summary {
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
        capabilities: counts,
        capability_labels,
    };
    Ok((summary, c))
}

/// Each type's prototype from its texts' vectors (`vectors` holds them flattened, in order).
fn prototypes(
    texts: &[Vec<String>],
    vectors: &[Vec<f32>],
) -> Option<skg_extract::capability::Prototypes> {
    let mut rest = vectors;
    let mut per_type = Vec::with_capacity(texts.len());
    for t in texts {
        let (mine, tail) = rest.split_at_checked(t.len())?;
        per_type.push(mine.iter().map(Vec::as_slice).collect::<Vec<_>>());
        rest = tail;
    }
    skg_extract::capability::Prototypes::new(&per_type)
}

/// Every skill's capability type as the later stages read it: extract's word type or the
/// nearest type prototype of its description's vector (`vectors[i]`), by the rule of
/// [`skg_extract::capability::refine`].
fn capability_rows(
    skills: &[Skill],
    vectors: Option<&[Option<&[f32]>]>,
    prototypes: Option<&skg_extract::capability::Prototypes>,
) -> Vec<CapabilityRow> {
    use skg_extract::capability::Capability;
    let taxonomy = skg_extract::capability::taxonomy();
    skills
        .iter()
        .enumerate()
        .map(|(i, s)| {
            let words = Capability {
                kind: s.capability.clone(),
                confidence: s.capability_confidence,
            };
            let vector = vectors.and_then(|v| v.get(i).copied().flatten());
            let (c, evidence) =
                skg_extract::capability::refine(prototypes, taxonomy, &words, vector);
            CapabilityRow {
                id: s.id.clone(),
                capability: c.kind,
                confidence: c.confidence,
                evidence: evidence.as_str().to_owned(),
            }
        })
        .collect()
}

/// Gives each skill the type its `capabilities` row names (skills without a row keep theirs).
pub fn apply_capabilities(skills: &mut [Skill], rows: &[CapabilityRow]) {
    let by_id: std::collections::HashMap<&SkillId, &CapabilityRow> =
        rows.iter().map(|r| (&r.id, r)).collect();
    for s in skills {
        if let Some(r) = by_id.get(&s.id) {
            s.capability.clone_from(&r.capability);
            s.capability_confidence = r.confidence;
        }
    }
}

/// The `capabilities` table of a canonicalize folder.
///
/// # Errors
/// The folder is not a finished canonicalize output.
pub fn read_capabilities(dir: &Path) -> Result<Vec<CapabilityRow>> {
    crate::read_table(dir, Stage::Canonicalize, &tables::CAPABILITIES)
}

fn write(
    c: &Canonicalization,
    skills: &[Skill],
    capabilities: &[CapabilityRow],
    registries: &[RegistryInput],
    embedded: Option<&skg_embed::Embedded>,
    job: &Job,
    synthetic: Option<&serde_json::Value>,
) -> skg_store::Result<()> {
    let mut staging = Staging::begin(&job.out)?;
    let mut canonical = c.canonical_skills(skills);
    apply_capabilities(&mut canonical, capabilities);
    let aliases = tables::alias_rows(&c.members);
    staging.write_table(&tables::MEMBERS, &c.members)?;
    staging.write_table(&tables::CLUSTERS, &c.clusters)?;
    staging.write_table(&tables::ALIASES, &aliases)?;
    staging.write_table(&tables::CANONICAL_SKILLS, &canonical)?;
    staging.write_table(&tables::CAPABILITIES, capabilities)?;
    staging.write_table(&tables::EDGES, &c.edges)?;
    if let Some(e) = embedded {
        staging.write_file(skg_embed::CACHE_FILE, &e.cache.to_bytes())?;
    }
    let counts = BTreeMap::from([
        ("members".to_owned(), c.members.len() as u64),
        ("clusters".to_owned(), c.clusters.len() as u64),
        ("aliases".to_owned(), aliases.len() as u64),
        ("canonical_skills".to_owned(), canonical.len() as u64),
        ("capabilities".to_owned(), capabilities.len() as u64),
        ("edges".to_owned(), c.edges.len() as u64),
    ]);
    let manifest = Manifest::new(
        Stage::Canonicalize,
        registries.to_vec(),
        counts,
        serde_json::json!({
            "similarity": c.stats.similarity,
            "model": embedded.map(|e| e.stats.model.as_str()),
            "scores": job.scores.as_ref().map(|s| s.source.clone()),
            "synthetic": synthetic,
        }),
    );
    staging.commit(manifest)?;
    Ok(())
}

/// Slop scores by skill id from NDJSON rows with `id` and `slop_score`: the `scores` table of a
/// `skg score` folder, or such a file.
///
/// # Errors
/// The file cannot be read or a row lacks `id` or `slop_score`.
pub fn read_scores(file: &Path) -> Result<BTreeMap<SkillId, f64>> {
    #[derive(serde::Deserialize)]
    struct Row {
        id: SkillId,
        slop_score: f64,
    }
    let rows: Vec<Row> = skg_artifact::read_ndjson(file)
        .at(|| format!("{}: rows need `id` and `slop_score`", file.display()))?;
    Ok(rows.into_iter().map(|r| (r.id, r.slop_score)).collect())
}

impl fmt::Display for Summary {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let s = &self.stats;
        writeln!(
            f,
            "{} skills → {} clusters ({} with copies): {} duplicates, {} variants  [{} similarity, {:.1}s]",
            s.skills,
            s.clusters,
            s.multi_clusters,
            s.duplicates,
            s.variants,
            self.similarity,
            self.seconds.total
        )?;
        writeln!(
            f,
            "candidates: {} pairs compared of {} possible; {} duplicate, {} variant; {} chained merges refused, {} canonicals moved so that none is a duplicate of another",
            s.candidate_pairs,
            s.all_pairs,
            s.duplicate_pairs,
            s.variant_pairs,
            s.chain_merges_refused,
            s.canonicals_moved
        )?;
        if let Some(e) = &self.embedding {
            writeln!(
                f,
                "embeddings: {} texts ({} unique): {} embedded in {:.1}s ({:.0}/s), {} from cache",
                e.texts,
                e.unique_texts,
                e.embedded,
                e.embed_seconds,
                e.texts_per_second,
                e.from_cache
            )?;
        } else {
            writeln!(
                f,
                "embeddings: off (--no-embeddings): descriptions compared lexically"
            )?;
        }
        write!(f, "{}", skg_canon::RegistryTable(&self.registries))?;
        if let Some(p) = &self.pairs {
            write!(f, "{p}")?;
        }
        if let Some(t) = &self.synthetic {
            write!(f, "{t}")?;
        }
        let c = &self.capabilities;
        if self.embedding.is_some() {
            writeln!(
                f,
                "capability types: {} by their words, {} by the nearest type prototype, {} unknown",
                c.words, c.embedding, c.unknown
            )?;
        } else {
            writeln!(
                f,
                "capability types: {} by their words, {} unknown (no embeddings: no type prototypes)",
                c.words, c.unknown
            )?;
        }
        if let Some(e) = &self.capability_labels {
            write!(f, "{e}")?;
        }
        Ok(())
    }
}

/// A vector for every text by the installed model, from the embedding cache at `cache_path`
/// where it holds this model's vectors.
fn embed_texts(
    texts: &[String],
    cache_path: &Path,
    threads: usize,
    progress: &dyn Progress,
) -> Result<skg_embed::Embedded> {
    let model = skg_embed::locate()?.read_files()?;
    Ok(skg_embed::embed_with_cache(
        &model,
        texts,
        cache_path,
        &[],
        threads,
        progress,
    )?)
}
