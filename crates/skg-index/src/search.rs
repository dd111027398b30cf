//! Retrieval over an open index: BM25, dense cosine, their fusion, one best hit per skill, a
//! score floor and the rejected list.

use std::{collections::HashMap, path::Path};

use serde::{Deserialize, Serialize};
use skg_model::{Level, SkillKind};

use crate::{
    Error, Result,
    artifact::{ContentRow, DocEntry, IndexManifest, SkillEntry, read_manifest},
    bm25::{Bm25, FieldWeights, Pass},
};

/// Which evidence ranks the skills.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "lowercase")]
pub enum Mode {
    /// BM25 over the documents only.
    Bm25,
    /// Dense cosine over the skills' vectors only (abstracts, overviews, usage sections and any
    /// sections the build embedded).
    Dense,
    /// Both, fused.
    Hybrid,
}

/// The mode as its wire name (`bm25`, `dense`, `hybrid`), as tables print it.
impl std::fmt::Display for Mode {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.pad(match self {
            Mode::Bm25 => "bm25",
            Mode::Dense => "dense",
            Mode::Hybrid => "hybrid",
        })
    }
}

/// What BM25 scores as one document when it ranks skills.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Bm25Unit {
    /// The whole skill: one document of its frontmatter fields, its section headings and the
    /// text of every section (BM25F over the package: a skill whose name and body both match
    /// gets both). The default.
    #[default]
    Skill,
    /// A skill scores as its best document (the L0 card, the L1 outline or one L2 section).
    Document,
}

/// How BM25 and dense scores are combined in [`Mode::Hybrid`].
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case", tag = "kind")]
pub enum Fusion {
    /// Reciprocal rank fusion: Σ 1 / (k + rank).
    Rrf {
        /// The rank offset (60 in the original paper).
        k: f32,
    },
    /// A fixed convex mix of BM25 (divided by the query's best BM25 score — over a catalog of
    /// both kinds, the best of the skill's own kind; a skill under BM25's cut counts at it, see
    /// [`fuse`]) and cosine.
    Linear {
        /// Weight of BM25.
        bm25: f32,
    },
    /// The mix adapts to the query: the BM25 weight grows with how much lexical evidence the
    /// query found (see [`Fusion::adaptive_weight`]); otherwise as [`Fusion::Linear`].
    Adaptive {
        /// Largest BM25 weight.
        max_bm25: f32,
        /// BM25 score (per query term) at which lexical evidence counts fully.
        saturation: f32,
    },
    /// Both scores standardized over the query's candidates (z-scores: minus their mean, over
    /// their standard deviation), then mixed: the two rankings' spreads, not their raw scales,
    /// decide how much each moves a skill. A candidate BM25 did not gather scores BM25 0 (not
    /// the last score BM25 kept, as in the linear mixes: measured worse here).
    Zscore {
        /// Largest weight of BM25's z-score.
        max_bm25: f32,
        /// As [`Fusion::Adaptive`]'s (0: the weight is always `max_bm25`).
        saturation: f32,
    },
}

impl Default for Fusion {
    /// Adaptive with BM25 at most 0.3 of the mix, at full weight from 4 BM25 points per query
    /// term: on both dev sets (corpus and MetaTool) the one setting of a 3×3 grid that beats dense alone (see
    /// docs/retrieval.md), where a fixed mix or RRF loses to dense on tool catalogs.
    fn default() -> Self {
        Fusion::Adaptive {
            max_bm25: Fusion::MAX_BM25,
            saturation: Fusion::SATURATION,
        }
    }
}

impl Fusion {
    /// [`Fusion::Adaptive`]'s default largest BM25 weight.
    pub const MAX_BM25: f32 = 0.3;
    /// [`Fusion::Adaptive`]'s default saturation (BM25 points per query term).
    pub const SATURATION: f32 = 4.0;
    /// [`Fusion::Rrf`]'s rank offset (60 in the original paper).
    pub const RRF_K: f32 = 60.0;
    /// [`Fusion::Linear`]'s default BM25 weight.
    pub const LINEAR_BM25: f32 = 0.5;

    /// BM25's weight in the mix for a query whose best BM25 score is `best` over `terms`
    /// analyzed terms: `None` for RRF (it mixes ranks).
    pub fn weight(self, best: f32, terms: usize) -> Option<f32> {
        match self {
            Fusion::Rrf { .. } => None,
            Fusion::Linear { bm25 } => Some(bm25),
            Fusion::Adaptive {
                max_bm25,
                saturation,
            } => Some(Fusion::adaptive_weight(max_bm25, saturation, best, terms)),
            Fusion::Zscore {
                max_bm25,
                saturation,
            } => Some(if saturation > 0.0 {
                Fusion::adaptive_weight(max_bm25, saturation, best, terms)
            } else {
                max_bm25
            }),
        }
    }

    /// The BM25 weight [`Fusion::Adaptive`] gives a query whose best BM25 skill score is
    /// `best` over `terms` analyzed terms: `max_bm25 × min(1, best / (saturation × terms))`.
    /// A query whose words the documents barely contain leans on the dense score.
    pub fn adaptive_weight(max_bm25: f32, saturation: f32, best: f32, terms: usize) -> f32 {
        if terms == 0 || best <= 0.0 {
            return 0.0;
        }
        max_bm25 * (best / (saturation * terms as f32)).min(1.0)
    }
}

/// A retrieval request.
#[derive(Debug, Clone)]
pub struct Query<'a> {
    /// The task, as the user wrote it.
    pub text: &'a str,
    /// Its embedding (L2-normalized, the index's model); required for dense and hybrid.
    pub vector: Option<&'a [f32]>,
    /// Distinct skills wanted.
    pub k: usize,
    /// Evidence used.
    pub mode: Mode,
    /// Fusion for hybrid.
    pub fusion: Fusion,
    /// Route quarantined skills too.
    pub include_quarantined: bool,
    /// Route aliases too.
    pub include_aliases: bool,
    /// Weight of `when_not_to_use` matches subtracted from BM25 (0.5 as agentskills-retrieval).
    pub negative_weight: f32,
    /// Hits must score above this; the rest go to `rejected`. BM25 alone over a catalog of both
    /// kinds scores in [0, 1] (a share of each kind's best × evidence), not raw BM25: a floor set
    /// for raw scores rejects more there.
    pub min_score: f32,
    /// BM25 field weights for every skill (`None`: [`FieldWeights::of`] the unit in use and each
    /// skill's kind — skill-level routing and document-level section search weigh the fields
    /// differently, and so do packages and tool-catalog entries as whole skills).
    pub weights: Option<FieldWeights>,
    /// Candidates each ranking contributes to the fusion (and BM25 skills gathered) — over a
    /// catalog of both kinds, per kind.
    pub pool: usize,
    /// BM25 scores at most this many of the query's analyzed terms, the ones found in the fewest
    /// documents (0: all). A long task's commonest words carry little IDF but have the longest
    /// posting lists: they set BM25's tail latency, not its ranking.
    pub max_terms: usize,
    /// What BM25 scores as one document when it ranks skills ([`Index::search`];
    /// [`Index::search_sections`] always scores documents).
    pub bm25_unit: Bm25Unit,
    /// The skills this query may see (a tenant's allow list); `None`: every skill. Applied where
    /// candidates are gathered, so a scoped query still returns `k` skills when it can.
    pub scope: Option<&'a Scope>,
    /// Only skills of this capability type are candidates (`None`: any). Unlike `scope` it
    /// narrows what is *found*, not what a route may depend on: dependencies of another type are
    /// still bundled.
    pub capability: Option<&'a str>,
    /// The query's token states (the index's model, [`Query::vector`]'s dimension a token), for
    /// the second stage; `None`: no second stage.
    pub tokens: Option<&'a [f32]>,
    /// The second stage over the hybrid ranking: late interaction with each candidate's card
    /// ([`crate::Late`]); it runs when the query has tokens and the index its cards'.
    pub late: crate::Late,
}

/// What [`Index::search_embedding`]'s embedder gives: the query's vector and, when it has them,
/// its tokens' states (for the second stage, [`crate::Late`]).
pub trait QueryVector {
    /// The L2-normalized vector.
    fn vector(&self) -> &[f32];
    /// The token states (the vector's dimension a token), when there are any.
    fn tokens(&self) -> Option<&[f32]> {
        None
    }
}

impl QueryVector for Vec<f32> {
    fn vector(&self) -> &[f32] {
        self
    }
}

impl QueryVector for crate::QueryEmbedding {
    fn vector(&self) -> &[f32] {
        &self.vector
    }
    fn tokens(&self) -> Option<&[f32]> {
        Some(self.tokens.as_slice()).filter(|t| !t.is_empty())
    }
}

impl<T: QueryVector> QueryVector for std::sync::Arc<T> {
    fn vector(&self) -> &[f32] {
        (**self).vector()
    }
    fn tokens(&self) -> Option<&[f32]> {
        (**self).tokens()
    }
}

/// A set of skills a caller may see (positions in [`Index::skills`]), fixed for one index.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Scope {
    visible: Vec<bool>,
    count: usize,
    routable: usize,
    catalog_tokens: u64,
}

impl Scope {
    /// The skills of `index` for which `sees` is true.
    pub fn new(index: &Index, mut sees: impl FnMut(&SkillEntry) -> bool) -> Scope {
        let visible: Vec<bool> = index.skills.iter().map(&mut sees).collect();
        let count = visible.iter().filter(|v| **v).count();
        let (routable, catalog_tokens) = index
            .skills
            .iter()
            .zip(&visible)
            .filter(|(s, v)| **v && s.routable())
            .fold((0, 0), |(n, t), (s, _)| (n + 1, t + u64::from(s.tokens)));
        Scope {
            visible,
            count,
            routable,
            catalog_tokens,
        }
    }

    /// Routable skills in the scope ([`SkillEntry::routable`]): the scope's share of the
    /// index's `routable` count.
    pub fn routable(&self) -> usize {
        self.routable
    }

    /// Tokens of the scope's routable skills: what injecting the catalog this caller sees would
    /// cost (the scope's share of [`Index::catalog_tokens`]).
    pub fn catalog_tokens(&self) -> u64 {
        self.catalog_tokens
    }

    /// Whether the skill at `skill` is in the scope (false for positions out of range).
    pub fn contains(&self, skill: u32) -> bool {
        self.visible.get(skill as usize).copied().unwrap_or(false)
    }

    /// Skills in the scope.
    pub fn len(&self) -> usize {
        self.count
    }

    /// No skill is in the scope.
    pub fn is_empty(&self) -> bool {
        self.count == 0
    }
}

impl<'a> Query<'a> {
    /// The floor a query has unless it sets one (the gateway's, unless configured).
    pub const DEFAULT_MIN_SCORE: f32 = 0.0;
    /// Query terms BM25 scores unless a query sets its own ([`Query::max_terms`]).
    pub const DEFAULT_MAX_TERMS: usize = 16;

    /// A hybrid query for `k` skills with the defaults.
    pub fn new(text: &'a str, vector: Option<&'a [f32]>, k: usize) -> Query<'a> {
        Query {
            text,
            vector,
            k,
            mode: if vector.is_some() {
                Mode::Hybrid
            } else {
                Mode::Bm25
            },
            fusion: Fusion::default(),
            include_quarantined: false,
            include_aliases: false,
            negative_weight: 0.5,
            min_score: Self::DEFAULT_MIN_SCORE,
            weights: None,
            pool: 50,
            max_terms: Self::DEFAULT_MAX_TERMS,
            bm25_unit: Bm25Unit::Skill,
            scope: None,
            capability: None,
            tokens: None,
            late: crate::Late::default(),
        }
    }
}

/// BM25's side of a query: each candidate skill's (score, document) and the terms it scored.
#[derive(Debug, Default)]
pub(crate) struct Lexical {
    pub(crate) best: HashMap<u32, (f32, u32)>,
    terms: Vec<String>,
    /// One per BM25 pass: the kind of skill it scored (`None`: every skill) and its cut (see
    /// [`Cut`]). A catalog of one kind has one lane; a catalog of both kinds one per kind, as
    /// their scores are not on one scale (see [`Index::bm25_skills`]).
    pub(crate) lanes: Vec<Lane>,
    /// Each skill's `when_not_to_use` penalty (× the weight), gathered or not.
    penalty: HashMap<u32, f32>,
}

/// Per-skill (score, document), as BM25 and the dense side give them.
type Scored = HashMap<u32, (f32, u32)>;

/// One BM25 pass of a query: the kind of skill it scored (`None`: every skill) and where it
/// stopped ([`Cut`]).
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct Lane {
    pub(crate) kind: Option<SkillKind>,
    pub(crate) cut: Option<f32>,
}

/// Where BM25's pass stopped, as the linear mixes of [`fuse`] count the skills under it: the
/// score, before the `when_not_to_use` penalty, of the `pool`-th best skill the pass gathered,
/// when more skills matched (`None` when the pass gathered every skill a term matches). A skill
/// under it — gathered further down, or not gathered at all (dense found it) — has a BM25 score
/// the pass did not rank and, for one not gathered, did not compute; it counts at the cut less
/// its own penalty, the most it can have. So under the cut BM25 does not set skills apart, as
/// RRF gives every skill a ranking lacks the same 0, and the cut's depth is the pool's whatever
/// number of hits was asked for.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct Cut<'a> {
    pub(crate) score: Option<f32>,
    pub(crate) penalty: Option<&'a HashMap<u32, f32>>,
}

impl Cut<'_> {
    fn penalty(&self, skill: u32) -> f32 {
        self.penalty
            .and_then(|p| p.get(&skill))
            .copied()
            .unwrap_or(0.0)
    }
}

/// The `n`-th largest of `scores` (1-based) when there are more than `n`: where a pass that
/// kept `n` would have stopped.
pub(crate) fn cut_at(mut scores: Vec<f32>, n: usize) -> Option<f32> {
    if n == 0 || scores.len() <= n {
        return None;
    }
    let (_, nth, _) = scores.select_nth_unstable_by(n - 1, |a, b| b.total_cmp(a));
    Some(*nth)
}

/// One skill in an answer.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Hit {
    /// Position of the skill in [`Index::skills`].
    pub skill: u32,
    /// The ranking score: the fusion's in hybrid (the floor compares it). The second stage
    /// ([`crate::Late`]) may order the first hits otherwise; see `late`.
    pub score: f32,
    /// Its BM25 score (after the `when_not_to_use` penalty; 0 when not matched).
    pub bm25: f32,
    /// BM25 as the fusion counted it, before the mix scales it by the best BM25 (over a catalog of
    /// both kinds, its kind's best and cut): in the linear
    /// and adaptive mixes a skill under BM25's cut counts at the cut less its own penalty
    /// ([`Cut`]) — so a skill BM25's pass did not gather (`bm25` 0), or gathered below the cut,
    /// shows more here; in BM25 mode, the z-score mix and RRF, `bm25`; in dense mode 0.
    pub bm25_counted: f32,
    /// Its best cosine (0 without vectors).
    pub dense: f32,
    /// The document that matched best (the hit's uri).
    pub doc: u32,
    /// Late interaction of the query's tokens with the skill's card (MaxSim), when the second
    /// stage scored it ([`crate::Late`]): the hits it reordered are in its order, `score` stays
    /// the fusion's.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub late: Option<f32>,
}

/// The answer to a [`Query`].
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Answer {
    /// The best skills above the floor, best first (at most `k`).
    pub hits: Vec<Hit>,
    /// Candidates at or below the floor, best first (at most `k`).
    pub rejected: Vec<Hit>,
    /// The mode actually used (hybrid without a vector falls back to BM25).
    pub mode: Mode,
    /// BM25's weight in the fusion, for hybrid (over a catalog of both kinds: the weight of the
    /// first hit's kind, each kind's in `bm25_weights`).
    pub bm25_weight: Option<f32>,
    /// Over a catalog of both kinds, each kind's BM25 weight in the fusion (hybrid): each kind's
    /// lexical evidence is weighed against its own best. Empty otherwise.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub bm25_weights: Vec<(SkillKind, f32)>,
    /// The analyzed query terms.
    pub terms: Vec<String>,
}

/// An open index folder.
#[derive(Debug)]
pub struct Index {
    /// The manifest.
    pub manifest: IndexManifest,
    /// Every skill (routable or not), sorted by id.
    pub skills: Vec<SkillEntry>,
    /// Every document.
    pub docs: Vec<DocEntry>,
    pub(crate) bm25: Bm25,
    /// One BM25 document per skill (document number = skill position).
    skill_bm25: Bm25,
    /// Each skill's card (its L0 document, else its first; `u32::MAX` without documents).
    card_doc: Vec<u32>,
    /// Each skill's documents, in index order.
    docs_of: Vec<Vec<u32>>,
    /// The kinds of skill present, sorted (whole-skill BM25 runs one pass per kind).
    kinds: Vec<SkillKind>,
    dim: usize,
    vectors: Vec<f32>,
    vector_docs: Vec<u32>,
    /// The rows as int8 codes: the exact scan's first pass ([`crate::quant`]).
    pub(crate) codes: crate::quant::Coded,
    /// Each skill's rows, in row order.
    rows_of: Vec<Vec<u32>>,
    /// Each row's skill (the scan reads it in row order instead of each row's document).
    row_skill: Vec<u32>,
    /// The nearest-neighbour graph over the rows (its proposals are rescored exactly over
    /// `rows_of`), when switched on ([`Index::use_ann`]).
    ann: Option<crate::ann::Ann>,
    /// Each skill's card tokens, for the second stage ([`crate::Late`]), when the build stored
    /// them.
    card_tokens: Option<crate::late::CardTokens>,
    by_id: HashMap<String, u32>,
    content: Content,
    catalog_tokens: u64,
    /// The folder it was opened from (where the graph's cache lives).
    dir: std::path::PathBuf,
}

/// `content.ndjson`, read on demand: the open file (it survives the folder being replaced while a
/// request still holds this index) and each skill's line span.
#[derive(Debug)]
struct Content {
    path: std::path::PathBuf,
    file: std::fs::File,
    spans: Vec<(u64, u32)>,
}

impl Content {
    fn open(path: &Path, skills: usize) -> Result<Content> {
        let bytes = std::fs::read(path).map_err(|e| Error::io(path, e))?;
        let mut spans = Vec::with_capacity(skills);
        let mut start = 0usize;
        for (i, b) in bytes.iter().enumerate() {
            if *b == b'\n' {
                spans.push((start as u64, u32::try_from(i - start).unwrap_or(u32::MAX)));
                start = i + 1;
            }
        }
        if spans.len() != skills {
            return Err(Error::Corrupt {
                path: path.to_path_buf(),
                message: format!("{} rows for {skills} skills", spans.len()),
            });
        }
        let file = std::fs::File::open(path).map_err(|e| Error::io(path, e))?;
        Ok(Content {
            path: path.to_path_buf(),
            file,
            spans,
        })
    }

    fn get(&self, skill: usize) -> Result<ContentRow> {
        use std::os::unix::fs::FileExt as _;
        let (offset, len) = self.spans[skill];
        let mut buf = vec![0u8; len as usize];
        self.file
            .read_exact_at(&mut buf, offset)
            .map_err(|e| Error::io(&self.path, e))?;
        serde_json::from_slice(&buf).map_err(|e| Error::Json {
            path: self.path.clone(),
            message: format!("row {}: {e}", skill + 1),
        })
    }
}

/// One section (document) hit of [`Index::search_sections`]: several per skill allowed.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct SectionHit {
    /// Position of the document in [`Index::docs`].
    pub doc: u32,
    /// Its skill.
    pub skill: u32,
    /// The ranking score (BM25 normalized by the query's best, fused with cosine as in
    /// [`Index::search`]).
    pub score: f32,
    /// Its BM25 score.
    pub bm25: f32,
    /// Its cosine (0 for documents without a vector: most L2 sections).
    pub dense: f32,
}

/// What [`Index::open_with`] loads beside the index itself.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct OpenOptions {
    /// The cards' token states (`tokens.bin`) when the build stored them: the second stage
    /// ([`crate::Late`]). Without them the index answers with the first stage alone, and a
    /// process that never runs the stage keeps them out of memory (9 KB a card).
    pub card_tokens: bool,
}

impl Default for OpenOptions {
    /// Everything the folder holds.
    fn default() -> Self {
        OpenOptions { card_tokens: true }
    }
}

impl OpenOptions {
    /// What a process that ranks with `late` needs: the cards' token states only when the
    /// second stage can run ([`crate::Late::runs`]). The gateway and `skg route` open with it,
    /// so a process configured without the stage never reads `tokens.bin`.
    pub fn for_stage(late: &crate::Late) -> Self {
        OpenOptions {
            card_tokens: late.runs(),
        }
    }
}

impl Index {
    /// Opens a finished index folder (refusing one without `_SUCCESS`), everything it holds.
    pub fn open(dir: &Path) -> Result<Index> {
        Index::open_with(dir, OpenOptions::default())
    }

    /// [`Index::open`], loading what `options` ask for.
    pub fn open_with(dir: &Path, options: OpenOptions) -> Result<Index> {
        let manifest = read_manifest(dir)?;
        let skills: Vec<SkillEntry> = skg_artifact::read_ndjson(&dir.join("skills.ndjson"))?;
        let docs: Vec<DocEntry> = skg_artifact::read_ndjson(&dir.join("documents.ndjson"))?;
        let corrupt = |message: String| Error::Corrupt {
            path: dir.to_path_buf(),
            message,
        };
        for (name, n) in [("skills", skills.len()), ("documents", docs.len())] {
            if manifest.counts.get(name).copied() != Some(n as u64) {
                return Err(corrupt(format!(
                    "{name}.ndjson has {n} rows, the manifest says {:?}",
                    manifest.counts.get(name)
                )));
            }
        }
        if let Some(d) = docs.iter().find(|d| d.skill as usize >= skills.len()) {
            return Err(corrupt(format!("document {} names no skill", d.id)));
        }
        let dim = manifest.dim.unwrap_or(0) as usize;
        let (mut vectors, mut vector_docs) = (Vec::new(), Vec::new());
        if dim > 0 {
            let path = dir.join("vectors.bin");
            let bytes = std::fs::read(&path).map_err(|e| Error::io(&path, e))?;
            let row = 4 + 4 * dim;
            if bytes.len() % row != 0 {
                return Err(corrupt(format!(
                    "vectors.bin is {} bytes, not a multiple of {row}",
                    bytes.len()
                )));
            }
            for chunk in bytes.chunks_exact(row) {
                let doc = u32::from_le_bytes([chunk[0], chunk[1], chunk[2], chunk[3]]);
                if doc as usize >= docs.len() {
                    return Err(corrupt(format!("vectors.bin names document {doc}")));
                }
                vector_docs.push(doc);
                vectors.extend(
                    chunk[4..]
                        .chunks_exact(4)
                        .map(|b| f32::from_le_bytes([b[0], b[1], b[2], b[3]])),
                );
            }
        }
        // The cards' token states (late interaction), when the build stored them and they are
        // wanted.
        let card_tokens =
            if options.card_tokens && manifest.counts.contains_key("card_tokens") && dim > 0 {
                let path = dir.join(crate::late::TOKENS_FILE);
                let bytes = std::fs::read(&path).map_err(|e| Error::io(&path, e))?;
                let store = crate::late::CardTokens::from_bytes(bytes, skills.len(), dim)
                    .map_err(|m| corrupt(format!("{}: {m}", crate::late::TOKENS_FILE)))?;
                if manifest.counts.get("card_tokens") != Some(&(store.len() as u64)) {
                    return Err(corrupt(format!(
                        "{} holds {} tokens, the manifest says {:?}",
                        crate::late::TOKENS_FILE,
                        store.len(),
                        manifest.counts.get("card_tokens")
                    )));
                }
                Some(store)
            } else {
                None
            };
        let by_id = skills
            .iter()
            .enumerate()
            .map(|(i, s)| (s.id.to_string(), u32::try_from(i).unwrap_or(u32::MAX)))
            .collect();
        let catalog_tokens = skills
            .iter()
            .filter(|s| s.routable())
            .map(|s| u64::from(s.tokens))
            .sum();
        let mut docs_of: Vec<Vec<u32>> = vec![Vec::new(); skills.len()];
        for (i, d) in docs.iter().enumerate() {
            docs_of[d.skill as usize].push(u32::try_from(i).unwrap_or(u32::MAX));
        }
        let card_doc = docs_of
            .iter()
            .map(|ds| {
                ds.iter()
                    .copied()
                    .find(|&d| docs[d as usize].level == Level::L0)
                    .or_else(|| ds.first().copied())
                    .unwrap_or(u32::MAX)
            })
            .collect();
        let kinds = skills
            .iter()
            .map(|s| s.kind)
            .collect::<std::collections::BTreeSet<_>>()
            .into_iter()
            .collect();
        let codes = crate::quant::Coded::new(&vectors, dim);
        let row_skill: Vec<u32> = vector_docs
            .iter()
            .map(|&doc| docs[doc as usize].skill)
            .collect();
        let mut rows_of: Vec<Vec<u32>> = vec![Vec::new(); skills.len()];
        for (row, &skill) in row_skill.iter().enumerate() {
            rows_of[skill as usize].push(u32::try_from(row).unwrap_or(u32::MAX));
        }
        // The BM25 indexes name documents and skills by position: one of another build would
        // name positions this index does not have.
        let skill_bm25 = Bm25::open(&dir.join(crate::artifact::SKILL_BM25_DIR))?;
        let bm25 = Bm25::open(&dir.join("bm25"))?;
        for (name, index, n) in [
            (crate::artifact::SKILL_BM25_DIR, &skill_bm25, skills.len()),
            ("bm25", &bm25, docs.len()),
        ] {
            if let Some(max) = index.max_id()?
                && max >= n as u64
            {
                return Err(corrupt(format!(
                    "{name} names position {max}, past the index's {n}"
                )));
            }
        }
        Ok(Index {
            skill_bm25,
            card_doc,
            kinds,
            docs_of,
            catalog_tokens,
            content: Content::open(&dir.join("content.ndjson"), skills.len())?,
            bm25,
            manifest,
            skills,
            docs,
            dim,
            vectors,
            vector_docs,
            codes,
            rows_of,
            row_skill,
            ann: None,
            card_tokens,
            by_id,
            dir: dir.to_path_buf(),
        })
    }

    /// Switches the nearest-neighbour graph on when there are at least `min_rows` dense rows
    /// (`0`: always; see [`crate::ann`]); returns whether the index now uses it. Dense retrieval
    /// then proposes skills from the graph instead of scanning every row.
    ///
    /// The graph comes from the folder's [`crate::ann::CACHE_FILE`] when that holds this index's
    /// graph for these options; else it is built and saved there for the next open (a folder
    /// that cannot be written, or an unreadable cache, is logged and the built graph used).
    ///
    /// # Errors
    /// The graph cannot be built.
    pub fn use_ann(&mut self, min_rows: usize, options: crate::ann::AnnOptions) -> Result<bool> {
        let rows = self.vector_docs.len();
        if self.dim == 0 || rows == 0 || rows < min_rows {
            self.ann = None;
            return Ok(false);
        }
        let cache = self.dir.join(crate::ann::CACHE_FILE);
        let hash = &self.manifest.content_hash;
        let cached =
            crate::ann::Ann::load(&cache, hash, rows, self.dim, options).unwrap_or_else(|e| {
                tracing::warn!(error = %e, "rebuilding the nearest-neighbour graph");
                None
            });
        let graph = if let Some(graph) = cached {
            graph
        } else {
            let graph = crate::ann::Ann::build(&self.vectors, self.dim, options)?;
            if let Err(e) = graph.save(&cache, hash, self.dim) {
                tracing::warn!(error = %e, "the nearest-neighbour graph is not cached");
            }
            graph
        };
        self.ann = Some(graph);
        Ok(true)
    }

    /// Where the graph in use came from, when the index uses one.
    pub fn ann_source(&self) -> Option<crate::ann::AnnSource> {
        self.ann.as_ref().map(crate::ann::Ann::source)
    }

    /// The graph's options, when the index uses one.
    pub fn ann(&self) -> Option<crate::ann::AnnOptions> {
        self.ann.as_ref().map(crate::ann::Ann::options)
    }

    /// Number of dense rows.
    pub fn vector_rows(&self) -> usize {
        self.vector_docs.len()
    }

    /// The `k` allowed skills nearest to `v` by their best row, nearest first: through the graph
    /// when the index uses one and `exact` is false, else by scanning every row (how ANN recall
    /// is measured).
    pub fn nearest_skills(
        &self,
        q: &Query<'_>,
        v: &[f32],
        k: usize,
        exact: bool,
    ) -> Vec<(u32, f32)> {
        let found = if exact {
            self.dense_scan(q, v, k, &HashMap::new())
        } else {
            self.dense_skills(q, v, k, &HashMap::new())
        };
        let mut ranked: Vec<(u32, f32)> = found.into_iter().map(|(s, (c, _))| (s, c)).collect();
        ranked.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
        ranked.truncate(k);
        ranked
    }

    /// The skill with this id.
    pub fn skill(&self, id: &str) -> Option<(u32, &SkillEntry)> {
        let i = *self.by_id.get(id)?;
        Some((i, &self.skills[i as usize]))
    }

    /// The skill's `SKILL.md` as served (frontmatter written back, then the body).
    pub fn markdown(&self, skill: u32) -> Result<String> {
        Ok(self.content.get(skill as usize)?.markdown)
    }

    /// A tool-catalog entry's JSON as the catalog gave it; `None` for a `SKILL.md` package (and
    /// for a tool of an index written before entries were kept).
    pub fn tool_entry(&self, skill: u32) -> Result<Option<serde_json::Value>> {
        Ok(self.content.get(skill as usize)?.tool)
    }

    /// Tokens of every routable skill: what injecting the whole catalog costs.
    pub fn catalog_tokens(&self) -> u64 {
        self.catalog_tokens
    }

    /// The dense vector of a document, when it has one.
    pub fn vector_of(&self, doc: u32) -> Option<&[f32]> {
        // Rows are sorted by document; a document's own vector comes before any example
        // request vectors that were added for it.
        let row = self.vector_docs.partition_point(|&d| d < doc);
        if self.dim == 0 || self.vector_docs.get(row) != Some(&doc) {
            return None;
        }
        self.vectors.get(row * self.dim..(row + 1) * self.dim)
    }

    /// Ranks documents (sections) for the query, several per skill allowed: BM25 per document and
    /// cosine for the documents with a vector, fused as [`Index::search`] fuses skills.
    pub fn search_sections(&self, q: &Query<'_>) -> Result<(Vec<SectionHit>, Mode)> {
        let terms = self.bm25.terms(q.text);
        let pool = q.k.max(q.pool);
        let vector = q.vector.filter(|v| v.len() == self.dim && self.dim > 0);
        let mode = match (q.mode, vector) {
            (Mode::Dense | Mode::Hybrid, None) => Mode::Bm25,
            (m, _) => m,
        };
        // Every document is its own group: the pool best allowed documents in one pruned pass,
        // and one more, to tell whether more match (the fusion's cut).
        let lexical: HashMap<u32, (f32, u32)> = if mode == Mode::Dense {
            HashMap::new()
        } else {
            let own = |doc: u32| {
                let d = self.docs.get(doc as usize)?;
                self.allowed(d.skill, q).then_some(doc)
            };
            self.bm25
                .search_groups(
                    &self.bm25.rarest(&terms, q.max_terms)?,
                    &q.weights.unwrap_or(FieldWeights::DOCUMENT),
                    pool.saturating_add(1),
                    &own,
                    Pass::Pruned,
                )?
                .into_iter()
                .map(|(doc, score, _)| (doc, (score, doc)))
                .collect()
        };
        let mut dense: HashMap<u32, (f32, u32)> = HashMap::new();
        if let (Some(v), true) = (vector, mode != Mode::Bm25) {
            for (row, &doc) in self.vectors.chunks_exact(self.dim).zip(&self.vector_docs) {
                if self.allowed(self.docs[doc as usize].skill, q) {
                    // A document with several rows (examples) counts its best.
                    let cos = dot(row, v);
                    let e = dense.entry(doc).or_insert((cos, doc));
                    if cos > e.0 || (e.0.is_nan() && !cos.is_nan()) {
                        e.0 = cos;
                    }
                }
            }
        }
        let mut hits: Vec<SectionHit> = match mode {
            Mode::Bm25 | Mode::Dense => lexical
                .iter()
                .chain(&dense)
                .map(|(&doc, &(s, _))| SectionHit {
                    doc,
                    skill: self.docs[doc as usize].skill,
                    score: s,
                    bm25: if mode == Mode::Bm25 { s } else { 0.0 },
                    dense: if mode == Mode::Dense { s } else { 0.0 },
                })
                .collect(),
            Mode::Hybrid => fuse(
                &lexical,
                &dense,
                q.fusion,
                terms.len(),
                pool,
                Cut {
                    score: cut_at(lexical.values().map(|x| x.0).collect(), pool),
                    penalty: None,
                },
            )
            .0
            .into_iter()
            .map(|h| SectionHit {
                doc: h.skill,
                skill: self.docs[h.skill as usize].skill,
                score: h.score,
                bm25: h.bm25,
                dense: h.dense,
            })
            .collect(),
        };
        hits.sort_by(|a, b| b.score.total_cmp(&a.score).then(a.doc.cmp(&b.doc)));
        hits.retain(|h| h.score > q.min_score);
        hits.truncate(q.k);
        Ok((hits, mode))
    }

    /// The kinds of skill the index holds, sorted.
    pub fn kinds(&self) -> &[SkillKind] {
        &self.kinds
    }

    /// The BM25 field weights each kind of skill present is scored with, in `unit`: `weights`
    /// for every kind when a query sets them, else each kind's defaults ([`FieldWeights::of`]).
    pub fn field_weights(
        &self,
        unit: Bm25Unit,
        weights: Option<FieldWeights>,
    ) -> Vec<(SkillKind, FieldWeights)> {
        self.kinds
            .iter()
            .map(|&k| (k, weights.unwrap_or_else(|| FieldWeights::of(unit, k))))
            .collect()
    }

    /// Vector dimension (0 without vectors).
    pub fn dim(&self) -> usize {
        self.dim
    }

    fn allowed(&self, skill: u32, q: &Query<'_>) -> bool {
        let s = &self.skills[skill as usize];
        !s.r#unsafe
            && (q.include_aliases || s.alias_of.is_none())
            && (q.include_quarantined || !s.quarantined)
            && q.scope.is_none_or(|scope| scope.contains(skill))
            && q.capability.is_none_or(|c| s.capability == c)
    }

    /// BM25 of the `want` best allowed skills: (score − penalty, the matched document). Over the
    /// skill-level index (the document is the whole skill; its hit's document is its card until
    /// `locate` finds the section): one pass per kind of skill present, each over its own
    /// skills with its kind's field weights (or the query's, for every kind) and keeping its own
    /// `want` best and its own cut — a lane each. A `SKILL.md` package's body is long and
    /// matches most of a task's words; a tool's entry is a card and a parameter list: their
    /// scores are not on one scale (over the shared registries with the MetaTool tools added,
    /// BM25 on one scale ranked a tool request's gold first for 0.022 of them, against 0.362 over
    /// the tools alone; docs/retrieval.md, "A catalog of both kinds"), so the fusion weighs each
    /// lane against its own best. Over the documents (a skill scores as its best document): one pass,
    /// one lane. Each pass is exhaustive or pruned by the index's size (see
    /// `Bm25::search_groups`).
    pub(crate) fn bm25_skills(
        &self,
        q: &Query<'_>,
        terms: &[String],
        want: usize,
    ) -> Result<Lexical> {
        let _span = tracing::info_span!("bm25", terms = terms.len(), want).entered();
        let scored_terms = match q.bm25_unit {
            Bm25Unit::Skill => self.skill_bm25.rarest(terms, q.max_terms)?,
            Bm25Unit::Document => self.bm25.rarest(terms, q.max_terms)?,
        };
        let scored = &scored_terms;
        let (mut best, lanes): (HashMap<u32, (f32, u32)>, Vec<Lane>) =
            match q.bm25_unit {
                Bm25Unit::Skill => {
                    // A catalog of one kind: one unfiltered pass; of several, one pass per kind
                    // over its own skills.
                    let by_kind = self.field_weights(Bm25Unit::Skill, q.weights);
                    let passes: Vec<(FieldWeights, Option<SkillKind>)> = if by_kind.len() > 1 {
                        by_kind.into_iter().map(|(k, w)| (w, Some(k))).collect()
                    } else {
                        by_kind
                            .first()
                            .map(|&(_, w)| (w, None))
                            .into_iter()
                            .collect()
                    };
                    let mut best = HashMap::new();
                    let mut lanes = Vec::with_capacity(passes.len());
                    for (weights, kind) in passes {
                        let group_of = |skill: u32| {
                            (self
                                .card_doc
                                .get(skill as usize)
                                .is_some_and(|&d| d != u32::MAX)
                                && kind.is_none_or(|k| self.skills[skill as usize].kind == k)
                                && self.allowed(skill, q))
                            .then_some(skill)
                        };
                        let found = self.skill_bm25.search_groups(
                            scored,
                            &weights,
                            want,
                            &group_of,
                            Pass::for_documents(self.skills.len()),
                        )?;
                        // The pass gathered `want` > `pool` skills when that many matched, so the
                        // pool-th is where a pass of `pool` would have stopped.
                        lanes.push(Lane {
                            kind,
                            cut: cut_at(found.iter().map(|x| x.1).collect(), q.pool),
                        });
                        best.extend(found.into_iter().map(|(skill, score, _)| {
                            (skill, (score, self.card_doc[skill as usize]))
                        }));
                    }
                    (best, lanes)
                }
                Bm25Unit::Document => {
                    let group_of = |doc: u32| {
                        let skill = self.docs.get(doc as usize)?.skill;
                        self.allowed(skill, q).then_some(skill)
                    };
                    let best: HashMap<u32, (f32, u32)> = self
                        .bm25
                        .search_groups(
                            scored,
                            &q.weights.unwrap_or(FieldWeights::DOCUMENT),
                            want,
                            &group_of,
                            Pass::Pruned,
                        )?
                        .into_iter()
                        .map(|(skill, score, doc)| (skill, (score, doc)))
                        .collect();
                    let cut = cut_at(best.values().map(|x| x.0).collect(), q.pool);
                    (best, vec![Lane { kind: None, cut }])
                }
            };
        let mut penalty: HashMap<u32, f32> = HashMap::new();
        if q.negative_weight > 0.0 {
            let negative = match q.bm25_unit {
                // Every match, not the best thousand: a cut over the whole catalog would let
                // skills outside the caller's scope decide which of its skills are penalized.
                Bm25Unit::Skill => self.skill_bm25.search_negative(terms, self.skills.len())?,
                Bm25Unit::Document => self
                    .bm25
                    .search_negative(terms, self.docs.len())?
                    .into_iter()
                    .filter_map(|(doc, neg)| Some((self.docs.get(doc as usize)?.skill, neg)))
                    .collect(),
            };
            for (skill, neg) in negative {
                *penalty.entry(skill).or_default() += q.negative_weight * neg;
            }
            for (skill, e) in &mut best {
                if let Some(p) = penalty.get(skill) {
                    e.0 -= p;
                }
            }
        }
        Ok(Lexical {
            best,
            terms: scored_terms,
            lanes,
            penalty,
        })
    }

    /// Best cosine per allowed skill: (cosine, doc). Without the graph: every row is scanned.
    /// With it: the graph proposes skills, and each proposed skill and each skill in `also` (the
    /// lexical candidates, so fusion sees their true cosine) is scored exactly over its rows;
    /// when fewer proposed skills are allowed than the query's `k`, every row is scanned.
    fn dense_skills(
        &self,
        q: &Query<'_>,
        v: &[f32],
        keep: usize,
        also: &HashMap<u32, (f32, u32)>,
    ) -> HashMap<u32, (f32, u32)> {
        let Some(ann) = &self.ann else {
            return self.dense_scan(q, v, keep, also);
        };
        if v.len() != self.dim || self.dim == 0 {
            return HashMap::new();
        }
        let mut proposed: Vec<u32> = ann
            .nearest(v)
            .into_iter()
            .map(|(row, _)| self.docs[self.vector_docs[row as usize] as usize].skill)
            .filter(|&s| self.allowed(s, q))
            .collect();
        proposed.sort_unstable();
        proposed.dedup();
        // The graph proposes a fixed number of rows over the whole catalog: behind a small scope
        // or a capability, fewer of its skills than the query asks for may be allowed. Then the
        // exact scan answers (what the query gets without the graph), never a short list. (Short
        // of `keep` but not of `k`, the graph's skills stand: the fusion pool is what the graph
        // is measured on, and a full scan there would undo what the graph is for.)
        if proposed.len() < q.k.min(keep) {
            return self.dense_scan(q, v, keep, also);
        }
        let mut skills = proposed;
        skills.extend(also.keys().copied().filter(|&s| self.allowed(s, q)));
        skills.sort_unstable();
        skills.dedup();
        skills
            .into_iter()
            .filter_map(|skill| {
                self.rows_of[skill as usize]
                    .iter()
                    .map(|&row| {
                        let r = row as usize * self.dim;
                        (
                            dot(&self.vectors[r..r + self.dim], v),
                            self.vector_docs[row as usize],
                        )
                    })
                    // As the scan: a row whose cosine is not a number is never a skill's best
                    // (`total_cmp` would rank NaN above every cosine).
                    .filter(|(cos, _)| !cos.is_nan())
                    .max_by(|a, b| a.0.total_cmp(&b.0).then(b.1.cmp(&a.1)))
                    .map(|best| (skill, best))
            })
            .collect()
    }

    /// Best cosine per allowed skill: (cosine, doc), exactly as a scan of every `f32` row would
    /// give it, on the request's thread: splitting the scan over two threads gained nothing one
    /// request at a time and cost a tenth of the hybrid throughput under load (357–362 req/s
    /// without, 327 with, 16 connections on two cores). Returns the `keep` nearest skills (cosine
    /// descending, then position; a skill's cosine is its best row's, the first such row in row
    /// order) and every skill of `also` (the lexical candidates, which the fusion scores by their
    /// true cosine).
    ///
    /// The scan streams the rows' int8 codes, not their floats ([`crate::quant`]): each row's
    /// cosine is bounded from its codes, `T` is the `keep`-th largest lower bound of a skill's
    /// best row, and only the skills whose upper bound reaches `T` (and `also`) are scored on
    /// their `f32` rows. At least `keep` skills score ≥ `T`, so every skill of the exact top
    /// `keep` — ties at its last place included — is among them, and they are ordered exactly
    /// as the full scan orders them (`the_coded_scan_is_the_exact_scan`). A query with a
    /// non-finite value scans the floats.
    pub(crate) fn dense_scan(
        &self,
        q: &Query<'_>,
        v: &[f32],
        keep: usize,
        also: &HashMap<u32, (f32, u32)>,
    ) -> HashMap<u32, (f32, u32)> {
        if v.len() != self.dim || self.dim == 0 {
            return HashMap::new();
        }
        let Some(qc) = self.codes.query(v) else {
            return self.dense_scan_floats(q, v, keep, also);
        };
        let allowed: Vec<bool> = (0..self.skills.len())
            .map(|i| self.allowed(u32::try_from(i).unwrap_or(u32::MAX), q))
            .collect();
        // Each allowed skill's best lower and upper bound.
        let mut bounds: Vec<(f32, f32)> =
            vec![(f32::NEG_INFINITY, f32::NEG_INFINITY); self.skills.len()];
        let mut present = vec![false; self.skills.len()];
        for (row, &skill) in self.row_skill.iter().enumerate() {
            let skill = skill as usize;
            if !allowed[skill] {
                continue;
            }
            let (lo, hi) = self.codes.bounds(row, &qc);
            let b = &mut bounds[skill];
            b.0 = b.0.max(lo);
            b.1 = b.1.max(hi);
            present[skill] = true;
        }
        let mut lows: Vec<f32> = bounds
            .iter()
            .zip(&present)
            .filter(|(_, p)| **p)
            .map(|(b, _)| b.0)
            .collect();
        let threshold = if keep == 0 {
            f32::INFINITY
        } else if keep >= lows.len() {
            f32::NEG_INFINITY
        } else {
            *lows
                .select_nth_unstable_by(keep - 1, |a, b| b.total_cmp(a))
                .1
        };
        // The candidates' best rows, exactly.
        let exact = |skill: usize| -> (f32, u32) {
            let mut best = (f32::NEG_INFINITY, u32::MAX);
            for &row in &self.rows_of[skill] {
                let r = row as usize * self.dim;
                let cos = dot(&self.vectors[r..r + self.dim], v);
                if cos > best.0 {
                    best = (cos, self.vector_docs[row as usize]);
                }
            }
            best
        };
        let ranked = (0..self.skills.len())
            .filter(|&s| present[s] && bounds[s].1 >= threshold)
            .map(|s| (s, exact(s)));
        nearest_and_also(ranked, keep, also, |skill| {
            (present.get(skill) == Some(&true)).then(|| exact(skill))
        })
    }

    /// [`Index::dense_scan`] over every `f32` row: for a query the codes cannot bound, and the
    /// reference the coded scan is tested against.
    pub(crate) fn dense_scan_floats(
        &self,
        q: &Query<'_>,
        v: &[f32],
        keep: usize,
        also: &HashMap<u32, (f32, u32)>,
    ) -> HashMap<u32, (f32, u32)> {
        if v.len() != self.dim || self.dim == 0 {
            return HashMap::new();
        }
        let allowed: Vec<bool> = (0..self.skills.len())
            .map(|i| self.allowed(u32::try_from(i).unwrap_or(u32::MAX), q))
            .collect();
        let mut best: Vec<(f32, u32)> = vec![(f32::NEG_INFINITY, u32::MAX); self.skills.len()];
        let rows = self.vectors.chunks_exact(self.dim).zip(&self.vector_docs);
        for ((row, &doc), &skill) in rows.zip(&self.row_skill) {
            let skill = skill as usize;
            if !allowed[skill] {
                continue;
            }
            let cos = dot(row, v);
            if cos > best[skill].0 {
                best[skill] = (cos, doc);
            }
        }
        nearest_and_also(best.iter().copied().enumerate(), keep, also, |skill| {
            best.get(skill).copied()
        })
    }

    /// Ranks skills for the query: one hit per skill, best first.
    pub fn search(&self, q: &Query<'_>) -> Result<Answer> {
        let terms = self.bm25.terms(q.text);
        let vector = q.vector.filter(|v| v.len() == self.dim && self.dim > 0);
        let mode = effective_mode(q.mode, vector);
        let lexical = if mode == Mode::Dense {
            Lexical::default()
        } else {
            self.bm25_skills(q, &terms, Self::lexical_want(q))?
        };
        let mut answer = self.rank(q, terms, mode, vector, &lexical);
        self.point_at_sections(q, &lexical.terms, &mut answer, HashMap::new())?;
        Ok(answer)
    }

    /// With skill-level BM25 a lexical hit's document is its card; this points each such hit
    /// (in `hits` and `rejected`) at the document of its skill that matches the query best
    /// (document-level BM25 over that skill's documents only), so the answer still says *where*
    /// the skill matched. Hits whose document came from the dense side keep it. `located` holds
    /// skills already located (by [`Index::search_embedding`] while the query embeds).
    fn point_at_sections(
        &self,
        q: &Query<'_>,
        terms: &[String],
        answer: &mut Answer,
        mut located: HashMap<u32, u32>,
    ) -> Result<()> {
        if q.bm25_unit != Bm25Unit::Skill || answer.mode == Mode::Dense {
            return Ok(());
        }
        let lexical_card =
            |h: &Hit| h.bm25 > 0.0 && self.card_doc.get(h.skill as usize) == Some(&h.doc);
        let missing: Vec<u32> = answer
            .hits
            .iter()
            .chain(&answer.rejected)
            .filter(|h| lexical_card(h) && !located.contains_key(&h.skill))
            .map(|h| h.skill)
            .collect();
        located.extend(self.locate(terms, missing)?);
        for h in answer.hits.iter_mut().chain(answer.rejected.iter_mut()) {
            if lexical_card(h)
                && let Some(&doc) = located.get(&h.skill)
            {
                h.doc = doc;
            }
        }
        Ok(())
    }

    /// Each of `skills`' best-matching document for the scored terms (skills none of whose
    /// sections match are left out: they keep their card). Sections carry only headings and
    /// body, so only those two fields are scored — a third of the work of all six.
    fn locate(&self, terms: &[String], mut skills: Vec<u32>) -> Result<HashMap<u32, u32>> {
        skills.sort_unstable();
        skills.dedup();
        if skills.is_empty() {
            return Ok(HashMap::new());
        }
        let _span = tracing::info_span!("locate", skills = skills.len()).entered();
        let mut weights = FieldWeights::DOCUMENT;
        weights.0[..4].fill(0.0);
        let limit = skills
            .iter()
            .map(|&s| self.docs_of[s as usize].len())
            .sum::<usize>();
        let mut best: HashMap<u32, (f32, u32)> = HashMap::new();
        for (doc, score) in self.bm25.score_among(terms, &weights, &skills, limit)? {
            let skill = self.docs[doc as usize].skill;
            let e = best.entry(skill).or_insert((score, doc));
            if score.total_cmp(&e.0).then(e.1.cmp(&doc)).is_gt() {
                *e = (score, doc);
            }
        }
        Ok(best.into_iter().map(|(s, (_, d))| (s, d)).collect())
    }

    /// [`Index::search`] with the query vector computed by `embed` on a second thread while
    /// BM25 runs on this one (`q.vector` is ignored): a request's latency becomes the longer of
    /// the two instead of their sum. `embed` returning `None` (no model, a failure) gives the
    /// BM25 answer, as a query without a vector does. Returns the answer and the vector.
    pub fn search_embedding<F, V>(&self, q: &Query<'_>, embed: F) -> Result<(Answer, Option<V>)>
    where
        F: FnOnce() -> Option<V> + Send,
        V: QueryVector + Send,
    {
        let terms = self.bm25.terms(q.text);
        let wants_vector = q.mode != Mode::Bm25 && self.dim > 0;
        // The embedding thread's span is a child of the caller's (traces show both stages).
        let parent = tracing::Span::current();
        let (lexical, located, vector) = std::thread::scope(|scope| {
            let embedding = wants_vector.then(|| {
                scope.spawn(move || {
                    let _span = tracing::info_span!(parent: &parent, "embed").entered();
                    embed()
                })
            });
            // BM25 is needed unless the answer is dense-only (and a failed embedding falls back
            // to BM25: computed below then).
            let lexical = (q.mode != Mode::Dense)
                .then(|| self.bm25_skills(q, &terms, Self::lexical_want(q)))
                .transpose();
            // While the query still embeds: locate BM25's best k skills' matching sections
            // (most final hits are among them; the rest are located after the fusion).
            let located = match &lexical {
                Ok(Some(l)) if q.bm25_unit == Bm25Unit::Skill => {
                    // Each lane's best k (their scores are not on one scale).
                    let mut top: Vec<u32> = Vec::new();
                    for lane in &l.lanes {
                        let mut own: Vec<(f32, u32)> = l
                            .best
                            .iter()
                            .filter(|(s, _)| {
                                lane.kind
                                    .is_none_or(|k| self.skills[**s as usize].kind == k)
                            })
                            .map(|(&s, &(score, _))| (score, s))
                            .collect();
                        own.sort_unstable_by(|a, b| b.0.total_cmp(&a.0).then(a.1.cmp(&b.1)));
                        top.extend(own.into_iter().take(q.k).map(|(_, s)| s));
                    }
                    self.locate(&l.terms, top)
                }
                _ => Ok(HashMap::new()),
            };
            let vector = embedding
                .and_then(|h| h.join().ok().flatten())
                .filter(|v| v.vector().len() == self.dim);
            (lexical, located, vector)
        });
        let mode = effective_mode(q.mode, vector.as_ref().map(QueryVector::vector));
        let lexical = match lexical? {
            Some(l) => l,
            None if mode == Mode::Dense => Lexical::default(),
            None => self.bm25_skills(q, &terms, Self::lexical_want(q))?,
        };
        // The embedding's token states, for the second stage.
        let q = &Query {
            tokens: vector.as_ref().and_then(QueryVector::tokens).or(q.tokens),
            ..q.clone()
        };
        let mut answer = self.rank(
            q,
            terms,
            mode,
            vector.as_ref().map(QueryVector::vector),
            &lexical,
        );
        self.point_at_sections(q, &lexical.terms, &mut answer, located?)?;
        Ok((answer, vector))
    }

    /// Distinct skills BM25 gathers for a query: one more than the pool at least, so that the
    /// pass tells whether more skills match than the pool holds (its [`Cut`]).
    fn lexical_want(q: &Query<'_>) -> usize {
        q.k.saturating_mul(2)
            .max(q.k.saturating_add(10))
            .max(q.pool.saturating_add(1))
    }

    /// Dense scores (given the lexical candidates), fusion, the floor and the rejected list.
    fn rank(
        &self,
        q: &Query<'_>,
        terms: Vec<String>,
        mode: Mode,
        vector: Option<&[f32]>,
        lexical: &Lexical,
    ) -> Answer {
        let want = (q.k * 2).max(q.k + 10);
        let dense = match vector {
            Some(v) if mode != Mode::Bm25 => {
                let _span = tracing::info_span!("dense", ann = self.ann.is_some()).entered();
                self.dense_skills(q, v, want.max(q.pool), &lexical.best)
            }
            _ => HashMap::new(),
        };
        let _span = tracing::info_span!("fuse", mode = ?mode).entered();
        // Over a catalog of both kinds each kind's lane is ranked on its own scale (see
        // `bm25_skills`): BM25 relative to the lane's best; the linear mixes run per lane over
        // the lane's skills and merge the lanes' hits by score, the cosine being on one scale
        // across kinds; RRF and the z-score mix run once over every candidate.
        let kind_of = |skill: u32| self.skills[skill as usize].kind;
        let of_lane = |m: &HashMap<u32, (f32, u32)>, lane: &Lane| -> HashMap<u32, (f32, u32)> {
            m.iter()
                .filter(|(s, _)| lane.kind.is_none_or(|k| kind_of(**s) == k))
                .map(|(&s, &x)| (s, x))
                .collect()
        };
        let several = lexical.lanes.len() > 1;
        let mut weights: Vec<(SkillKind, f32)> = Vec::new();
        let mut bm25_weight = None;
        let mut ranked: Vec<Hit> = match mode {
            Mode::Bm25 => {
                // A catalog of both kinds: no score compares the lanes, so each skill counts as
                // its share of its lane's best, scaled by how much evidence that best has per
                // query term — a lane whose best matches the query's words only thinly ranks
                // below one whose best matches them fully; leaders that tie go by their BM25
                // (over the shared registries with the MetaTool tools, tool requests with their
                // tool in the first five 0.043 → 0.213, the registries' own queries unchanged;
                // docs/retrieval.md, "A catalog of both kinds").
                let lane_best = |skill: u32| -> f32 {
                    let kind = kind_of(skill);
                    lexical
                        .best
                        .iter()
                        .filter(|(s, _)| kind_of(**s) == kind)
                        .map(|(_, x)| x.0)
                        .fold(0.0f32, f32::max)
                };
                let mut best_of: HashMap<SkillKind, f32> = HashMap::new();
                lexical
                    .best
                    .iter()
                    .map(|(&skill, &(s, doc))| {
                        let score = if several {
                            let b = *best_of
                                .entry(kind_of(skill))
                                .or_insert_with(|| lane_best(skill));
                            // The share of the lane's best, times the evidence the best has
                            // per query term (the adaptive fusion's measure, saturating at 1).
                            let evidence =
                                Fusion::adaptive_weight(1.0, Fusion::SATURATION, b, terms.len());
                            if b > 0.0 { s / b * evidence } else { 0.0 }
                        } else {
                            s
                        };
                        Hit {
                            skill,
                            score,
                            bm25: s,
                            bm25_counted: s,
                            dense: 0.0,
                            doc,
                            late: None,
                        }
                    })
                    .collect()
            }
            Mode::Dense => dense
                .iter()
                .map(|(&skill, &(c, doc))| Hit {
                    skill,
                    score: c,
                    bm25: 0.0,
                    bm25_counted: 0.0,
                    dense: c,
                    doc,
                    late: None,
                })
                .collect(),
            Mode::Hybrid => {
                if several {
                    // Each lane's own weight, at most the weight of the lane of the skill the
                    // cosine — the one score on one scale across kinds — ranks first: a
                    // package's body matches most of a tool request's words and saturates its
                    // lane's weight, which would otherwise lift the packages' lexical leader
                    // over the tool the request names (docs/retrieval.md, "A catalog of both
                    // kinds"). When that lane has no BM25 match its weight is 0, and so is
                    // every lane's: the answer is the cosine's.
                    let lanes: Vec<(&Lane, Scored, Scored)> = lexical
                        .lanes
                        .iter()
                        .map(|lane| (lane, of_lane(&lexical.best, lane), of_lane(&dense, lane)))
                        .collect();
                    let own: Vec<Option<f32>> = lanes
                        .iter()
                        .map(|(_, l, _)| {
                            let best = l.values().map(|x| x.0).fold(0.0f32, f32::max);
                            q.fusion.weight(best, terms.len())
                        })
                        .collect();
                    let nearest = dense
                        .iter()
                        .max_by(|a, b| a.1.0.total_cmp(&b.1.0).then(b.0.cmp(a.0)))
                        .map(|(&s, _)| kind_of(s));
                    let cap = lanes
                        .iter()
                        .zip(&own)
                        .find(|((lane, _, _), _)| {
                            nearest.is_some_and(|k| lane.kind.is_none_or(|l| l == k))
                        })
                        .and_then(|(_, w)| *w)
                        .unwrap_or(f32::INFINITY);
                    if matches!(q.fusion, Fusion::Rrf { .. } | Fusion::Zscore { .. }) {
                        // RRF mixes ranks and the z-score mix standardizes over the candidates:
                        // both over every candidate at once (the dense side's ranks and spread
                        // across kinds), BM25 as each skill's share of its lane's best (so its
                        // ranks interleave the lanes); the z-score mix at the weight of the
                        // nearest skill's lane. The hits show their own BM25.
                        let shares: Scored = lanes
                            .iter()
                            .flat_map(|(_, l, _)| {
                                let best = l.values().map(|x| x.0).fold(0.0f32, f32::max);
                                l.iter().map(move |(&s, &(b, doc))| {
                                    (s, (if best > 0.0 { b / best } else { 0.0 }, doc))
                                })
                            })
                            .collect();
                        let w = match q.fusion {
                            Fusion::Zscore { .. } if cap.is_finite() => Some(cap),
                            Fusion::Zscore { .. } => own.iter().flatten().copied().reduce(f32::max),
                            _ => None,
                        };
                        bm25_weight = w;
                        let mut hits = fuse_weighted(
                            &shares,
                            &dense,
                            q.fusion,
                            w,
                            want.max(q.pool),
                            Cut::default(),
                        );
                        for h in &mut hits {
                            let own = lexical.best.get(&h.skill).map_or(0.0, |x| x.0);
                            h.bm25 = own;
                            h.bm25_counted = own;
                        }
                        hits
                    } else {
                        let mut hits = Vec::new();
                        for ((lane, l, d), w) in lanes.iter().zip(own) {
                            let w = w.map(|w| w.min(cap));
                            if let (Some(k), Some(w)) = (lane.kind, w)
                                && !(l.is_empty() && d.is_empty())
                            {
                                weights.push((k, w));
                            }
                            hits.extend(fuse_weighted(
                                l,
                                d,
                                q.fusion,
                                w,
                                want.max(q.pool),
                                Cut {
                                    score: lane.cut,
                                    penalty: Some(&lexical.penalty),
                                },
                            ));
                        }
                        hits
                    }
                } else {
                    let (hits, w) = fuse(
                        &lexical.best,
                        &dense,
                        q.fusion,
                        terms.len(),
                        want.max(q.pool),
                        Cut {
                            score: lexical.lanes.first().and_then(|l| l.cut),
                            penalty: Some(&lexical.penalty),
                        },
                    );
                    bm25_weight = w;
                    hits
                }
            }
        };
        // Over a catalog of both kinds the lanes' leaders can tie (BM25 alone: both at their full
        // share and saturated evidence): the larger BM25 score breaks it before the id.
        ranked.sort_by(|a, b| {
            b.score
                .total_cmp(&a.score)
                .then_with(|| {
                    if several {
                        b.bm25.total_cmp(&a.bm25)
                    } else {
                        std::cmp::Ordering::Equal
                    }
                })
                .then_with(|| {
                    self.skills[a.skill as usize]
                        .id
                        .cmp(&self.skills[b.skill as usize].id)
                })
        });
        if mode == Mode::Hybrid {
            self.second_stage(q, &mut ranked);
        }
        let mut hits = Vec::new();
        let mut rejected = Vec::new();
        for h in ranked {
            if h.score > q.min_score && hits.len() < q.k {
                hits.push(h);
            } else if h.score <= q.min_score && rejected.len() < q.k {
                rejected.push(h);
            }
            if hits.len() >= q.k && rejected.len() >= q.k {
                break;
            }
        }
        if several && !weights.is_empty() {
            let first = hits.first().or(rejected.first()).map(|h| kind_of(h.skill));
            bm25_weight = weights
                .iter()
                .find(|(k, _)| Some(*k) == first)
                .or(weights.first())
                .map(|x| x.1);
        }
        Answer {
            hits,
            rejected,
            mode,
            bm25_weight,
            bm25_weights: weights,
            terms,
        }
    }
}

impl Index {
    /// Whether the build stored the cards' token states: hybrid queries that bring theirs get
    /// the second stage ([`crate::Late`]).
    pub fn has_card_tokens(&self) -> bool {
        self.card_tokens.is_some()
    }

    /// Reorders the fused first [`crate::Late::depth`] by late interaction with their cards
    /// ([`crate::late`]), when the query has token states and the index its cards'; each hit it
    /// scored carries its MaxSim.
    fn second_stage(&self, q: &Query<'_>, ranked: &mut [Hit]) {
        let (Some(store), Some(tokens)) = (&self.card_tokens, q.tokens) else {
            return;
        };
        if !q.late.runs() || self.dim == 0 {
            return;
        }
        let _span = tracing::info_span!("late").entered();
        let depth = q.late.depth.min(ranked.len());
        let query = store.query(tokens);
        let late: Vec<Option<f32>> = ranked[..depth]
            .iter()
            .map(|h| store.maxsim(h.skill as usize, &query))
            .collect();
        if late.iter().all(Option::is_none) {
            return;
        }
        let fused: Vec<f32> = ranked[..depth].iter().map(|h| h.score).collect();
        let order = crate::late::reorder(&fused, &late, q.late.weight);
        let mut top: Vec<Hit> = order
            .iter()
            .map(|&i| Hit {
                late: late[i],
                ..ranked[i].clone()
            })
            .collect();
        ranked[..depth].swap_with_slice(&mut top);
    }
}

/// The `keep` nearest of `scored` (skill, (best cosine, its doc); a skill without a row has doc
/// `u32::MAX` and is left out) by cosine descending, then skill position, and every skill of
/// `also` with a row (`best_of`): what both dense scans return.
fn nearest_and_also(
    scored: impl Iterator<Item = (usize, (f32, u32))>,
    keep: usize,
    also: &HashMap<u32, (f32, u32)>,
    best_of: impl Fn(usize) -> Option<(f32, u32)>,
) -> HashMap<u32, (f32, u32)> {
    let mut ranked: Vec<(f32, u32, u32)> = scored
        .filter(|(_, b)| b.1 != u32::MAX)
        .map(|(s, (cos, doc))| (cos, u32::try_from(s).unwrap_or(u32::MAX), doc))
        .collect();
    let order = |a: &(f32, u32, u32), b: &(f32, u32, u32)| b.0.total_cmp(&a.0).then(a.1.cmp(&b.1));
    if keep < ranked.len() {
        if keep > 0 {
            ranked.select_nth_unstable_by(keep - 1, order);
        }
        ranked.truncate(keep);
    }
    let mut out: HashMap<u32, (f32, u32)> = ranked
        .into_iter()
        .map(|(cos, skill, doc)| (skill, (cos, doc)))
        .collect();
    for &skill in also.keys() {
        if !out.contains_key(&skill)
            && let Some(b) = best_of(skill as usize)
            && b.1 != u32::MAX
        {
            out.insert(skill, b);
        }
    }
    out
}

/// The mode a query runs in: dense and hybrid need a vector, else BM25.
fn effective_mode(asked: Mode, vector: Option<&[f32]>) -> Mode {
    match (asked, vector) {
        (Mode::Dense | Mode::Hybrid, None) => Mode::Bm25,
        (m, _) => m,
    }
}

/// Dot product with eight independent partial sums (vectorizable).
pub(crate) fn dot(a: &[f32], b: &[f32]) -> f32 {
    let mut acc = [0f32; 8];
    let (ac, ar) = a.split_at(a.len() - a.len() % 8);
    let (bc, br) = b.split_at(ac.len());
    for (x, y) in ac.chunks_exact(8).zip(bc.chunks_exact(8)) {
        for i in 0..8 {
            acc[i] += x[i] * y[i];
        }
    }
    let tail: f32 = ar.iter().zip(br).map(|(x, y)| x * y).sum();
    acc.iter().sum::<f32>() + tail
}

/// Fuses per-skill BM25 and dense scores over the union of each one's best `pool` candidates;
/// the linear mixes count the skills under BM25's `cut` at it (see [`Cut`]). Returns the hits
/// and BM25's weight ([`Fusion::weight`] of the best BM25 score).
pub(crate) fn fuse(
    lexical: &HashMap<u32, (f32, u32)>,
    dense: &HashMap<u32, (f32, u32)>,
    fusion: Fusion,
    terms: usize,
    pool: usize,
    cut: Cut<'_>,
) -> (Vec<Hit>, Option<f32>) {
    let best = lexical.values().map(|x| x.0).fold(0.0f32, f32::max);
    let w = fusion.weight(best, terms);
    (fuse_weighted(lexical, dense, fusion, w, pool, cut), w)
}

/// [`fuse`] with BM25's weight given (`None` for RRF).
pub(crate) fn fuse_weighted(
    lexical: &HashMap<u32, (f32, u32)>,
    dense: &HashMap<u32, (f32, u32)>,
    fusion: Fusion,
    w: Option<f32>,
    pool: usize,
    cut: Cut<'_>,
) -> Vec<Hit> {
    let top = |m: &HashMap<u32, (f32, u32)>| -> Vec<(u32, f32)> {
        let mut v: Vec<(u32, f32)> = m.iter().map(|(&k, &(s, _))| (k, s)).collect();
        v.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
        v.truncate(pool);
        v
    };
    let lt = top(lexical);
    let dt = top(dense);
    let best_bm25 = lt.first().map_or(0.0, |x| x.1).max(0.0);
    let rank_l: HashMap<u32, usize> = lt.iter().enumerate().map(|(r, x)| (x.0, r)).collect();
    let rank_d: HashMap<u32, usize> = dt.iter().enumerate().map(|(r, x)| (x.0, r)).collect();
    let mut candidates: Vec<u32> = lt.iter().chain(&dt).map(|x| x.0).collect();
    candidates.sort_unstable();
    candidates.dedup();
    // Mean and standard deviation of each score over the candidates (for `Zscore`).
    let standardize = |score: &dyn Fn(u32) -> f32| -> (f32, f32) {
        let n = candidates.len().max(1) as f32;
        let mean = candidates.iter().map(|&c| score(c)).sum::<f32>() / n;
        let var = candidates
            .iter()
            .map(|&c| (score(c) - mean).powi(2))
            .sum::<f32>()
            / n;
        (mean, if var > 0.0 { var.sqrt() } else { 1.0 })
    };
    // The linear mixes count a skill under BM25's cut at the cut less its penalty (see [`Cut`];
    // before, a skill the pass had not gathered counted 0, which sank skills dense ranked high
    // below lexical candidates dense ranked low: on the second dev set hit@10 0.58 → 0.73,
    // docs/retrieval.md, "A candidate BM25 did not gather"). The z-score mix keeps its own
    // scores and 0: there the cut, counted for every candidate BM25 missed, raises the mean and
    // narrows the spread the BM25 candidates are measured by (dev2 z-score hit@1 0.36 → 0.28).
    let zscore = matches!(fusion, Fusion::Zscore { .. });
    let lexical_score = |skill: u32| -> f32 {
        let own = lexical.get(&skill).map(|x| x.0);
        match cut.score {
            Some(c) if !zscore && own.is_none_or(|b| b + cut.penalty(skill) < c) => {
                c - cut.penalty(skill)
            }
            _ => own.unwrap_or(0.0),
        }
    };
    let (bm, bs, dm, ds) = if zscore {
        let (bm, bs) = standardize(&lexical_score);
        let (dm, ds) = standardize(&|c| dense.get(&c).map_or(0.0, |x| x.0));
        (bm, bs, dm, ds)
    } else {
        (0.0, 1.0, 0.0, 1.0)
    };
    candidates
        .into_iter()
        .map(|skill| {
            let (b, bdoc) = lexical.get(&skill).copied().unwrap_or((0.0, u32::MAX));
            let mixed_b = lexical_score(skill);
            let (c, cdoc) = dense.get(&skill).copied().unwrap_or((0.0, u32::MAX));
            let score = if let Fusion::Rrf { k } = fusion {
                rank_l
                    .get(&skill)
                    .map_or(0.0, |&r| 1.0 / (k + r as f32 + 1.0))
                    + rank_d
                        .get(&skill)
                        .map_or(0.0, |&r| 1.0 / (k + r as f32 + 1.0))
            } else if zscore {
                let w = w.unwrap_or(0.0);
                w * (mixed_b - bm) / bs + (1.0 - w) * (c - dm) / ds
            } else {
                let w = w.unwrap_or(0.0);
                // The cut of a skill whose best rivals were penalized can pass the best
                // penalized score: BM25 counts at most fully.
                let bn = if best_bm25 > 0.0 {
                    (mixed_b / best_bm25).clamp(0.0, 1.0)
                } else {
                    0.0
                };
                w * bn + (1.0 - w) * c
            };
            // The hit's document: the lexical match when there is one, else the closest vector.
            let doc = if b > 0.0 && bdoc != u32::MAX {
                bdoc
            } else {
                cdoc.min(bdoc)
            };
            Hit {
                skill,
                score,
                bm25: b,
                // RRF counts ranks, not scores: what BM25 gave it is all there is to show.
                bm25_counted: if matches!(fusion, Fusion::Rrf { .. }) {
                    b
                } else {
                    mixed_b
                },
                dense: c,
                doc,
                late: None,
            }
        })
        .collect()
}
