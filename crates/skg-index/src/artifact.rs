//! The index folder: what is in it, how it is written (beside its destination, `_SUCCESS` last,
//! one rename) and its manifest.

use std::{
    collections::{BTreeMap, HashMap},
    path::Path,
};

use serde::{Deserialize, Serialize};
use skg_model::{
    DocId, Document, Edge, EdgeKind, Level, Member, RegistryInput, RegistryName, Role, Score,
    SectionRole, Skill, SkillId, SkillKind,
};

use skg_artifact::Staged;

use crate::{Error, Result, bm25};

/// Version of the index folder layout and row types; readers refuse others. Format 4: a
/// tool-catalog entry's row says `"kind": "tool"` (a row without it is a `SKILL.md` package, so
/// a format-3 index of a tool catalog would be read with the packages' BM25 weights).
pub const INDEX_SCHEMA_VERSION: u32 = 4;
/// The skill-level BM25 index's folder (one document per skill; since format 3).
pub(crate) const SKILL_BM25_DIR: &str = "bm25-skills";
/// Relations below this confidence are not used for routing unless asked otherwise
/// (`skg index build --min-confidence`): INFERRED mentions at 0.4–0.5 stay out of bundles.
pub const DEFAULT_MIN_CONFIDENCE: f64 = 0.5;

/// One skill as the router sees it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SkillEntry {
    /// Skill id.
    pub id: SkillId,
    /// Registry.
    pub registry: RegistryName,
    /// `SKILL.md` path relative to the registry folder.
    pub path: String,
    /// Name.
    pub name: String,
    /// Description.
    pub description: String,
    /// Frontmatter `when_not_to_use` (negative evidence at query time).
    pub when_not_to_use: Option<String>,
    /// The canonical this skill is a copy of (aliases are not routed).
    pub alias_of: Option<SkillId>,
    /// Quarantined by the slop score (not routed unless asked).
    pub quarantined: bool,
    /// Found unsafe by the security scan (risk tier `unsafe`): never routed nor found, whatever
    /// the request asks.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub r#unsafe: bool,
    /// The slop score, when scored.
    pub slop_score: Option<f64>,
    /// Approximate tokens of the skill's `SKILL.md` (bytes / 4), for bundle accounting.
    pub tokens: u32,
    /// `depends_on` targets (canonical ids), strongest evidence first.
    pub depends_on: Vec<SkillId>,
    /// `complements` targets (canonical ids).
    pub complements: Vec<SkillId>,
    /// `co_used_with` targets (canonical ids).
    pub co_used_with: Vec<SkillId>,
    /// Declared `inputs` (capability types).
    pub inputs: Vec<String>,
    /// Declared `outputs` (capability types).
    pub outputs: Vec<String>,
    /// Content hash of the skill's package (incremental builds compare it).
    pub content_hash: String,
    /// Primary capability type (extract's taxonomy) or `unknown`.
    #[serde(default = "unknown")]
    pub capability: String,
    /// What the row was made from: a `SKILL.md` package or a tool-catalog entry (whole-skill
    /// BM25 weighs their fields differently, [`crate::FieldWeights::of`]). Written only for
    /// tools, so a skill registry's `skills.ndjson` is what it was before the field existed;
    /// an index written before it reads every row as a package.
    #[serde(default = "package", skip_serializing_if = "is_package")]
    pub kind: SkillKind,
}

fn unknown() -> String {
    "unknown".to_owned()
}

fn package() -> SkillKind {
    SkillKind::Skill
}

#[allow(clippy::trivially_copy_pass_by_ref)] // serde's skip_serializing_if passes a reference
fn is_package(kind: &SkillKind) -> bool {
    *kind == SkillKind::Skill
}

impl SkillEntry {
    /// Routed by default: not an alias, not quarantined, not unsafe.
    pub fn routable(&self) -> bool {
        self.alias_of.is_none() && !self.quarantined && !self.r#unsafe
    }
}

/// One searchable document of the index.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct DocEntry {
    /// Document id.
    pub id: DocId,
    /// Position of its skill in `skills.ndjson`.
    pub skill: u32,
    /// L0 / L1 / L2.
    pub level: Level,
    /// The markdown file, relative to the skill root.
    pub file: String,
    /// Display title.
    pub title: String,
    /// Heading path of an L2 section.
    pub heading_path: Vec<String>,
    /// First line in `file`.
    pub line_start: u32,
    /// Last line in `file`.
    pub line_end: u32,
    /// The first 240 characters of the text (the hit's abstract).
    pub snippet: String,
}

/// `manifest.json` of an index folder.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct IndexManifest {
    /// [`INDEX_SCHEMA_VERSION`].
    pub format: u32,
    /// The skg that wrote it.
    pub tool: String,
    /// The registries, with revisions and content hashes.
    pub sources: Vec<RegistryInput>,
    /// Row counts (`skills`, `routable`, `documents`, `vectors`, …).
    pub counts: BTreeMap<String, u64>,
    /// Embedding model of `vectors.bin`, when there is one.
    pub model: Option<String>,
    /// Vector dimension.
    pub dim: Option<u32>,
    /// blake3 of `skills.ndjson`, `documents.ndjson`, `content.ndjson`, `vectors.bin` and
    /// `tokens.bin` (when built): the revision served.
    pub content_hash: String,
    /// Options that shaped the index.
    pub options: serde_json::Value,
}

/// Dense vectors for some documents.
#[derive(Debug, Clone)]
pub struct Vectors {
    /// Model id (as skg-embed names it).
    pub model: String,
    /// Dimension.
    pub dim: usize,
    /// (document position in `BuildInput::documents`, L2-normalized vector).
    pub rows: Vec<(usize, Vec<f32>)>,
    /// (document position, its token states' codes) of skills' cards, for late interaction
    /// (`tokens.bin`; [`crate::Late`]): a skill takes its card's (its L0 document's). Empty: no
    /// second stage.
    pub tokens: Vec<(usize, crate::TokenCodes)>,
    /// The card tokens are projected on their first this many principal directions before they
    /// are stored (and each query's like them); 0, or the dimension or more: kept whole.
    /// [`crate::LATE_DIRECTIONS`] by default.
    pub token_directions: usize,
}

/// What an index is built from: extract's tables, optionally canonicalize's members and score's
/// scores, and vectors for the documents [`DenseTexts::targets`] names.
#[derive(Debug)]
pub struct BuildInput<'a> {
    /// Skills.
    pub skills: &'a [Skill],
    /// Their documents.
    pub documents: &'a [Document],
    /// Relation edges.
    pub edges: &'a [Edge],
    /// Cluster membership (aliases are kept but not routed).
    pub members: Option<&'a [Member]>,
    /// Slop scores (quarantined skills are kept but not routed).
    pub scores: Option<&'a [Score]>,
    /// The registries read.
    pub registries: &'a [RegistryInput],
    /// Dense vectors, handed over: the build frees each card's whole-width token codes as it
    /// codes them on the catalog's principal directions, and the rows once they are written
    /// (at 30,000 cards the codes alone are ~0.9 GB).
    pub vectors: Option<Vectors>,
    /// Relations below this confidence are not used for routing.
    pub min_confidence: f64,
}

/// Characters of an L2 section embedded (its title, then the start of its text): sections are
/// long, a transformer's cost grows with the tokens it is given, and a section's opening says
/// what it is about.
pub const SECTION_CHARS: usize = 320;

/// Characters of an L1 overview embedded by default: about 190 of the model's tokens. The
/// model was trained on 128-token texts; past ~190 tokens an overview costs more (attention grows
/// with the square of the length) than it tells (docs/retrieval.md: the whole overview gave the
/// same dev figures within a query, at 1.2× the cold build).
pub const DEFAULT_OVERVIEW_CHARS: usize = 768;

/// Characters of a usage section embedded by default (its title, then its text): as many as an
/// overview's, since a usage section is read for what it says in full — the situations a skill
/// is for.
pub const USAGE_CHARS: usize = DEFAULT_OVERVIEW_CHARS;

/// Usage sections embedded per skill at most (`SKILL.md`'s, in order): a skill scores as its best
/// vector, and one with many usage-like sections should not get many more chances than one with a
/// single "When to use".
pub const USAGE_PER_SKILL: usize = 2;

/// Version of the usage-section rule: extract's section roles ([`skg_model::SECTION_ROLE_RULE`],
/// which decide [`is_usage_section`]) and the text embedded. Recorded in the manifest, so
/// vectors made under another rule are never carried over.
pub const USAGE_RULE: u32 = skg_model::SECTION_ROLE_RULE;

/// Whether `d` is a usage section of its skill: an L2 section extract marked as saying when to
/// use the skill ([`SectionRole::WhenToUse`]: a section of `SKILL.md` headed "When to use", "Use
/// cases", "Example prompts", … at the top of the outline, or inside such a section; the rule is
/// skg-extract's `roles`). Such
/// sections describe the user's situation in the user's words — what a request says — where the
/// card describes the tool (docs/retrieval.md, "Usage sections").
pub fn is_usage_section(d: &Document) -> bool {
    d.level == Level::L2 && d.role == SectionRole::WhenToUse
}

/// A usage section's embedded text: its title, then its text without the heading line the text
/// starts with (the title already says it), cut at `chars` characters.
fn usage_text(d: &Document, chars: usize) -> String {
    let body = match d.text.split_once('\n') {
        Some((first, rest)) if first.trim_start().starts_with('#') => rest.trim_start(),
        _ => d.text.as_str(),
    };
    cut(format!("{}\n{}", d.title, body), chars)
}

/// Which documents get a dense vector, and as what text.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DenseTexts {
    /// L2 sections per skill embedded besides its L0 and L1 (`SKILL.md`'s first).
    pub sections: usize,
    /// Characters of each usage section embedded — the first [`USAGE_PER_SKILL`] sections of a
    /// skill that say when to use it ([`is_usage_section`]), each as its title and the start of
    /// its text; 0: no usage vectors.
    pub usage_chars: usize,
    /// The usage-section rule the vectors were made under ([`USAGE_RULE`]; 0: none recorded).
    pub usage_rule: u32,
    /// Characters of the L1 overview embedded: `None` the whole text (the model reads its first
    /// 256 tokens), `Some(0)` no L1 vector, `Some(n)` the first `n` characters. Overviews are the
    /// long texts of an index build (median ~1,100 characters), and a transformer's cost grows
    /// with the tokens it is given.
    pub overview_chars: Option<usize>,
}

impl Default for DenseTexts {
    fn default() -> Self {
        DenseTexts {
            sections: 0,
            usage_chars: USAGE_CHARS,
            usage_rule: USAGE_RULE,
            overview_chars: Some(DEFAULT_OVERVIEW_CHARS),
        }
    }
}

impl DenseTexts {
    /// The manifest's record of it: `dense_sections` when there are any, `usage_chars` when
    /// usage sections are embedded, `overview_chars` whenever overviews are cut. An absent `overview_chars` is a
    /// whole-overview index (every index before the cut became the default reads so, as it was
    /// built); an absent `usage_chars` an index without usage vectors (every index before them).
    pub fn record(&self, options: &mut serde_json::Value) {
        if self.sections > 0 {
            options["dense_sections"] = self.sections.into();
        }
        if self.usage_chars > 0 {
            options["usage_chars"] = self.usage_chars.into();
            options["usage_rule"] = self.usage_rule.into();
        }
        if let Some(n) = self.overview_chars {
            options["overview_chars"] = n.into();
        }
    }

    /// What an index's manifest says it was built with.
    pub fn recorded(options: &serde_json::Value) -> DenseTexts {
        let n = |k: &str| {
            options
                .get(k)
                .and_then(serde_json::Value::as_u64)
                .and_then(|n| usize::try_from(n).ok())
        };
        DenseTexts {
            sections: n("dense_sections").unwrap_or(0),
            usage_chars: n("usage_chars").unwrap_or(0),
            usage_rule: options
                .get("usage_rule")
                .and_then(serde_json::Value::as_u64)
                .and_then(|n| u32::try_from(n).ok())
                .unwrap_or(0),
            overview_chars: n("overview_chars"),
        }
    }

    /// Whether `other` embeds every document it shares with `self` as the same text (so a
    /// vector of one can stand for the other's).
    pub fn same_texts(&self, other: &DenseTexts) -> bool {
        self.overview_chars == other.overview_chars
            && self.usage_chars == other.usage_chars
            && (self.usage_chars == 0 || self.usage_rule == other.usage_rule)
    }

    /// The documents that get a vector: each skill's L0, its L1 (unless `overview_chars` is
    /// 0), its first `sections` L2 sections (`SKILL.md`'s before other files', each file's
    /// in order) and, unless `usage_chars` is 0, its usage sections.
    pub fn targets(&self, documents: &[Document]) -> Vec<usize> {
        let mut out: Vec<usize> = dense_targets(documents)
            .into_iter()
            .filter(|&i| documents[i].level != Level::L1 || self.overview_chars != Some(0))
            .collect();
        if self.usage_chars > 0 {
            let mut per_skill: HashMap<&str, usize> = HashMap::new();
            for (i, d) in documents.iter().enumerate() {
                if is_usage_section(d) {
                    let n = per_skill.entry(d.skill.as_str()).or_default();
                    if *n < USAGE_PER_SKILL {
                        *n += 1;
                        out.push(i);
                    }
                }
            }
            out.sort_unstable();
        }
        if self.sections > 0 {
            let mut by_skill: HashMap<&str, Vec<usize>> = HashMap::new();
            for (i, d) in documents.iter().enumerate() {
                if d.level == Level::L2 {
                    by_skill.entry(d.skill.as_str()).or_default().push(i);
                }
            }
            for docs in by_skill.values_mut() {
                docs.sort_by_key(|&i| (documents[i].file != "SKILL.md", i));
                out.extend(docs.iter().take(self.sections));
            }
            out.sort_unstable();
            out.dedup();
        }
        out
    }

    /// The text `d` is embedded as.
    pub fn text(&self, d: &Document) -> String {
        match (d.level, self.overview_chars) {
            (Level::L1, Some(n)) if n > 0 => cut(d.text.clone(), n),
            (Level::L2, _) if self.usage_chars > 0 && is_usage_section(d) => {
                usage_text(d, self.usage_chars)
            }
            _ => dense_text(d),
        }
    }
}

/// `t` cut to its first `chars` characters.
fn cut(mut t: String, chars: usize) -> String {
    if let Some((at, _)) = t.char_indices().nth(chars) {
        t.truncate(at);
    }
    t
}

/// The text a document is embedded as: an abstract or overview whole, an L2 section as its title
/// and the first [`SECTION_CHARS`] characters of its text.
pub fn dense_text(d: &Document) -> String {
    if d.level != Level::L2 {
        return d.text.clone();
    }
    cut(format!("{}\n{}", d.title, d.text), SECTION_CHARS)
}

/// Each skill's L0 (abstract) and L1 (overview): the documents every dense index embeds
/// ([`DenseTexts::targets`] adds the overview cut, usage sections and first sections).
pub fn dense_targets(documents: &[Document]) -> Vec<usize> {
    documents
        .iter()
        .enumerate()
        .filter(|(_, d)| matches!(d.level, Level::L0 | Level::L1))
        .map(|(i, _)| i)
        .collect()
}

fn entries(input: &BuildInput<'_>) -> Vec<SkillEntry> {
    let canonical_of: HashMap<&str, &str> = input
        .members
        .unwrap_or_default()
        .iter()
        .map(|m| (m.id.as_str(), m.cluster_id.as_str()))
        .collect();
    let alias: HashMap<&str, &SkillId> = input
        .members
        .unwrap_or_default()
        .iter()
        .filter(|m| m.role == Role::Duplicate)
        .map(|m| (m.id.as_str(), &m.cluster_id))
        .collect();
    let score: HashMap<&str, &Score> = input
        .scores
        .unwrap_or_default()
        .iter()
        .map(|s| (s.id.as_str(), s))
        .collect();
    let fold = |id: &SkillId| -> SkillId {
        canonical_of
            .get(id.as_str())
            .map_or_else(|| id.clone(), |c| SkillId::from(*c))
    };
    let mut relations: HashMap<&str, [Vec<(f64, SkillId)>; 3]> = HashMap::new();
    for e in input
        .edges
        .iter()
        .filter(|e| e.confidence >= input.min_confidence)
    {
        let slot = match e.kind {
            EdgeKind::DependsOn => 0,
            EdgeKind::Complements => 1,
            EdgeKind::CoUsedWith => 2,
            _ => continue,
        };
        relations.entry(e.src.as_str()).or_default()[slot].push((e.confidence, fold(&e.dst)));
    }
    let mut out: Vec<SkillEntry> = input
        .skills
        .iter()
        .map(|s| {
            let rel = relations.remove(s.id.as_str()).unwrap_or_default();
            let me = fold(&s.id);
            let pick = |mut v: Vec<(f64, SkillId)>| -> Vec<SkillId> {
                v.sort_by(|a, b| b.0.total_cmp(&a.0).then(a.1.cmp(&b.1)));
                let mut seen = std::collections::BTreeSet::new();
                v.into_iter()
                    .map(|(_, d)| d)
                    .filter(|d| *d != me && seen.insert(d.clone()))
                    .collect()
            };
            let [dep, comp, co] = rel;
            let sc = score.get(s.id.as_str());
            SkillEntry {
                id: s.id.clone(),
                registry: s.registry.clone(),
                path: s.path.clone(),
                name: s.name.clone(),
                description: s.description.clone(),
                when_not_to_use: s.when_not_to_use.clone(),
                alias_of: alias.get(s.id.as_str()).map(|c| (*c).clone()),
                quarantined: sc.is_some_and(|s| s.quarantined),
                r#unsafe: s.risk_tier == skg_model::RiskTier::Unsafe,
                slop_score: sc.map(|s| s.slop_score),
                tokens: u32::try_from(s.bytes.div_ceil(4)).unwrap_or(u32::MAX),
                depends_on: pick(dep),
                complements: pick(comp),
                co_used_with: pick(co),
                inputs: s.inputs.clone(),
                outputs: s.outputs.clone(),
                content_hash: s.content_hash.clone(),
                capability: s.capability.clone(),
                kind: s.kind,
            }
        })
        .collect();
    out.sort_by(|a, b| a.id.cmp(&b.id));
    out
}

/// The `SKILL.md` of a skill as served: the frontmatter mapping written back with each top-level
/// value as JSON (JSON is YAML 1.2, so any YAML reader reads it; key order is extract's, sorted),
/// then the body. A skill whose frontmatter did not parse gets name and description only.
pub fn skill_markdown(skill: &Skill) -> String {
    let mut out = String::from("---\n");
    let map: serde_json::Map<String, serde_json::Value> =
        serde_json::from_str(&skill.frontmatter.json).unwrap_or_default();
    if map.is_empty() {
        for (k, v) in [("name", &skill.name), ("description", &skill.description)] {
            out.push_str(k);
            out.push_str(": ");
            out.push_str(&serde_json::Value::from(v.as_str()).to_string());
            out.push('\n');
        }
    } else {
        for (k, v) in &map {
            if k.chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
            {
                out.push_str(k);
            } else {
                out.push_str(&serde_json::Value::from(k.as_str()).to_string());
            }
            out.push_str(": ");
            out.push_str(&v.to_string());
            out.push('\n');
        }
    }
    out.push_str("---\n");
    out.push_str(&skill.body);
    if !skill.body.ends_with('\n') {
        out.push('\n');
    }
    out
}

/// One row of `content.ndjson`: a skill's `SKILL.md` as served (in `skills.ndjson` order).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ContentRow {
    /// Skill id.
    pub id: SkillId,
    /// [`skill_markdown`].
    pub markdown: String,
    /// A tool-catalog entry as the catalog gave it (a routed tool is offered to a host as
    /// itself, with its own schema: [`crate::adapt::tools`]). Absent for a `SKILL.md` package, so
    /// a skill registry's `content.ndjson` is what it was before the field existed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool: Option<serde_json::Value>,
}

fn snippet(text: &str) -> String {
    let mut s: String = text.split_whitespace().collect::<Vec<_>>().join(" ");
    if s.len() > 240 {
        let mut end = 240;
        while !s.is_char_boundary(end) {
            end -= 1;
        }
        s.truncate(end);
        s.push('…');
    }
    s
}

/// Builds the index folder at `dest`: written beside it, `_SUCCESS` last, then renamed over the
/// previous one (which stays whole and served until then). Returns the manifest.
pub fn build(
    input: BuildInput<'_>,
    dest: &Path,
    options: serde_json::Value,
) -> Result<IndexManifest> {
    build_staged(input, Staged::beside(dest)?, options)
}

/// [`build`] into a folder the caller has staged beside the destination ([`Staged::beside`]),
/// holding files it wrote there first (the embedding caches, streamed so that a large catalog's
/// are not held in memory beside the index being built). Files the index writes replace
/// same-named ones; the staged folder is published, or removed on an error.
pub fn build_staged(
    mut input: BuildInput<'_>,
    staged: Staged,
    options: serde_json::Value,
) -> Result<IndexManifest> {
    let dest = staged.dest().to_path_buf();
    let skills = entries(&input);
    let position: HashMap<&str, u32> = skills
        .iter()
        .enumerate()
        .map(|(i, s)| (s.id.as_str(), u32::try_from(i).unwrap_or(u32::MAX)))
        .collect();
    let mut docs = Vec::new();
    let mut kept: Vec<usize> = Vec::new(); // positions in input.documents, in index order
    for (i, d) in input.documents.iter().enumerate() {
        let Some(&skill) = position.get(d.skill.as_str()) else {
            continue;
        };
        kept.push(i);
        docs.push(DocEntry {
            id: d.id.clone(),
            skill,
            level: d.level,
            file: d.file.clone(),
            title: d.title.clone(),
            heading_path: d.heading_path.clone(),
            line_start: d.line_start,
            line_end: d.line_end,
            snippet: snippet(&d.text),
        });
    }

    let tmp = staged.path().to_path_buf();

    let mut hasher = blake3::Hasher::new();
    hasher.update(&staged.write_ndjson("skills.ndjson", &skills)?);
    hasher.update(&staged.write_ndjson("documents.ndjson", &docs)?);
    let skill_of: HashMap<&str, &Skill> = input.skills.iter().map(|s| (s.id.as_str(), s)).collect();
    let content: Vec<ContentRow> = skills
        .iter()
        .map(|e| {
            let skill = skill_of.get(e.id.as_str());
            ContentRow {
                id: e.id.clone(),
                markdown: skill.map(|s| skill_markdown(s)).unwrap_or_default(),
                tool: skill
                    .filter(|s| s.kind == SkillKind::Tool)
                    .and_then(|s| serde_json::from_str(&s.frontmatter.json).ok()),
            }
        })
        .collect();
    hasher.update(&staged.write_ndjson("content.ndjson", &content)?);

    let mut counts = BTreeMap::from([
        ("skills".to_owned(), skills.len() as u64),
        (
            "routable".to_owned(),
            skills.iter().filter(|s| s.routable()).count() as u64,
        ),
        (
            "aliases".to_owned(),
            skills.iter().filter(|s| s.alias_of.is_some()).count() as u64,
        ),
        (
            "quarantined".to_owned(),
            skills.iter().filter(|s| s.quarantined).count() as u64,
        ),
        ("documents".to_owned(), docs.len() as u64),
    ]);
    let (model, dim) = if let Some(v) = input.vectors.take() {
        let index_of: HashMap<usize, u32> = kept
            .iter()
            .enumerate()
            .map(|(k, &i)| (i, u32::try_from(k).unwrap_or(u32::MAX)))
            .collect();
        let Vectors {
            model,
            dim,
            rows,
            tokens,
            token_directions,
        } = v;
        let mut rows: Vec<(u32, Vec<f32>)> = rows
            .into_iter()
            .filter(|(i, vec)| vec.len() == dim && index_of.contains_key(i))
            .map(|(i, vec)| (index_of[&i], vec))
            .collect();
        rows.sort_by_key(|r| r.0);
        // Hashed, then written: both streamed.
        let write_rows = |w: &mut dyn std::io::Write| -> std::io::Result<()> {
            let mut buf = Vec::with_capacity(4 + 4 * dim);
            for (doc, vec) in &rows {
                buf.clear();
                buf.extend_from_slice(&doc.to_le_bytes());
                for x in vec {
                    buf.extend_from_slice(&x.to_le_bytes());
                }
                w.write_all(&buf)?;
            }
            Ok(())
        };
        hash_streamed(&mut hasher, write_rows)
            .map_err(|e| skg_artifact::Error::io(tmp.join("vectors.bin"), e))?;
        staged.write_with("vectors.bin", write_rows)?;
        counts.insert("vectors".to_owned(), rows.len() as u64);
        drop(rows);
        if !tokens.is_empty() {
            // Each skill's card: its L0 document's codes, moved.
            let mut card: Vec<Option<crate::TokenCodes>> = vec![None; skills.len()];
            for (i, codes) in tokens {
                if let Some(&d) = index_of.get(&i)
                    && docs[d as usize].level == Level::L0
                {
                    card[docs[d as usize].skill as usize] = Some(codes);
                }
            }
            let store = crate::late::CardTokens::new(dim, token_directions, card);
            hash_streamed(&mut hasher, |w| store.write_to(w))
                .map_err(|e| skg_artifact::Error::io(tmp.join(crate::late::TOKENS_FILE), e))?;
            staged.write_with(crate::late::TOKENS_FILE, |w| store.write_to(w))?;
            counts.insert("card_tokens".to_owned(), store.len() as u64);
        }
        (Some(model), Some(u32::try_from(dim).unwrap_or(0)))
    } else {
        (None, None)
    };

    let texts: Vec<bm25::DocText<'_>> = kept
        .iter()
        .filter_map(|&i| {
            let d = &input.documents[i];
            skill_of
                .get(d.skill.as_str())
                .map(|s| bm25::DocText::of(d, s))
        })
        .collect();
    bm25::write(&tmp.join("bm25"), &texts, &|i| docs[i].skill)?;
    // One BM25 document per skill (position = skill), for skill-level routing.
    let mut by_skill: Vec<Vec<&Document>> = vec![Vec::new(); skills.len()];
    for (&i, e) in kept.iter().zip(&docs) {
        by_skill[e.skill as usize].push(&input.documents[i]);
    }
    // Position = skill: a skill without a package (none today) gets an empty document.
    let skill_texts: Vec<bm25::DocText<'_>> = skills
        .iter()
        .zip(&by_skill)
        .map(|(e, ds)| {
            skill_of
                .get(e.id.as_str())
                .map_or_else(bm25::DocText::empty, |s| bm25::skill_text(s, ds))
        })
        .collect();
    bm25::write(&tmp.join(SKILL_BM25_DIR), &skill_texts, &|i| {
        u32::try_from(i).unwrap_or(u32::MAX)
    })?;

    let manifest = IndexManifest {
        format: INDEX_SCHEMA_VERSION,
        tool: format!("skg {}", env!("CARGO_PKG_VERSION")),
        sources: input.registries.to_vec(),
        counts,
        model,
        dim,
        content_hash: hasher.finalize().to_hex().to_string(),
        options,
    };
    staged.write_json(skg_artifact::MANIFEST_FILE, &manifest)?;
    carry_graph_cache(&dest, &tmp, &manifest.content_hash);
    staged.publish()?;
    Ok(manifest)
}

/// Feeds what `write` streams to `hasher` in 64 KiB blocks (blake3 hashes large updates on
/// several lanes at once; a row at a time it would not).
fn hash_streamed(
    hasher: &mut blake3::Hasher,
    write: impl FnOnce(&mut dyn std::io::Write) -> std::io::Result<()>,
) -> std::io::Result<()> {
    let mut buffered = std::io::BufWriter::with_capacity(1 << 16, hasher);
    write(&mut buffered)?;
    std::io::Write::flush(&mut buffered)
}

/// Carries the nearest-neighbour graph cache of the folder being replaced into the new one when
/// the content is the same (the graph is a function of the content and its options, and building
/// it over 100,000 rows takes a quarter of an hour). Hard-linked where the file system allows —
/// a cache is only ever replaced by rename, never written in place — else copied; a failure only
/// loses the cache.
fn carry_graph_cache(dest: &Path, staged: &Path, content_hash: &str) {
    let old = dest.join(crate::ann::CACHE_FILE);
    if !crate::ann::cache_is_of(&old, content_hash) {
        return;
    }
    let new = staged.join(crate::ann::CACHE_FILE);
    if std::fs::hard_link(&old, &new).is_err()
        && let Err(e) = std::fs::copy(&old, &new)
    {
        let _ = std::fs::remove_file(&new);
        tracing::warn!(
            "{}: the nearest-neighbour graph cache was not carried over: {e}",
            old.display()
        );
    }
}

/// Reads the manifest of a finished index folder (refusing unfinished folders and other formats).
pub fn read_manifest(dir: &Path) -> Result<IndexManifest> {
    skg_artifact::require_finished(dir)?;
    let m: IndexManifest = skg_artifact::read_json(&dir.join(skg_artifact::MANIFEST_FILE))?;
    if m.format != INDEX_SCHEMA_VERSION {
        return Err(Error::Version {
            path: dir.to_path_buf(),
            found: m.format,
            expected: INDEX_SCHEMA_VERSION,
        });
    }
    Ok(m)
}
