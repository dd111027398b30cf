//! The gateway's wire format: every request and answer as a type, shared by the HTTP API, the
//! MCP tools and `skg route --format json`, and described in `/openapi.json` from these types.
//!
//! Answers are built from an index and a search [`Answer`](skg_index::Answer) by pure functions
//! here ([`find`], [`search`], [`route`], [`skill`]), so the same task gives the same JSON
//! whoever asks.

use serde::{Deserialize, Serialize};
use skg_index::Index;
use skg_model::Level;
use utoipa::ToSchema;

/// Defaults of the request fields, defined once (the command line shows them from here).
pub mod defaults {
    /// Distinct skills retrieved before the dependency closure.
    pub const K: usize = 5;
}

pub use skg_index::{Mode, Reason, adapt::Format};

/// `POST /v1/route` (and the MCP tool `route_task`, which takes `task`, `k`, `token_budget`).
#[derive(Debug, Clone, PartialEq, Deserialize, Serialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct RouteRequest {
    /// The task, in words.
    pub task: String,
    /// Distinct skills retrieved before the dependency closure (at most the gateway's max_k;
    /// default: the key's `k`, else 5).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schema(minimum = 1, default = 5)]
    pub k: Option<usize>,
    /// Tokens the bundle may use: dependencies are kept past it (the overrun is reported),
    /// complements are added within it.
    #[serde(default)]
    pub token_budget: Option<u64>,
    /// `tools` in this host's shape besides the bundle.
    #[serde(default)]
    pub format: Format,
    /// Evidence used (default: hybrid when the gateway has the model, else BM25).
    #[serde(default)]
    pub mode: Option<Mode>,
    /// Route quarantined skills too.
    #[serde(default)]
    pub include_quarantined: bool,
    /// Hits must score above this (default: the calibrated floor).
    #[serde(default)]
    pub min_score: Option<f32>,
    /// Include each skill's `SKILL.md` in the plan.
    #[serde(default)]
    pub include_content: bool,
    /// Return every retrieval candidate's signals and why it was kept or dropped.
    #[serde(default)]
    pub explain: bool,
    /// Route only from skills of this capability type (`docs/capabilities.md`; dependencies of
    /// other types are still bundled).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub capability: Option<String>,
}

impl RouteRequest {
    /// A request for `task` with every default.
    pub fn new(task: impl Into<String>) -> RouteRequest {
        RouteRequest {
            task: task.into(),
            k: None,
            token_budget: None,
            format: Format::Bundle,
            mode: None,
            include_quarantined: false,
            min_score: None,
            include_content: false,
            explain: false,
            capability: None,
        }
    }

    /// The index query this request asks for (`vector`: the task's embedding, when the
    /// index's model is at hand).
    pub fn query<'q>(&'q self, vector: Option<&'q [f32]>) -> skg_index::Query<'q> {
        self.ask().query(vector)
    }

    pub(crate) fn ask(&self) -> Ask<'_> {
        Ask {
            text: &self.task,
            k: self.k,
            mode: self.mode,
            include_quarantined: self.include_quarantined,
            min_score: self.min_score,
            capability: self.capability.as_deref(),
        }
    }
}

/// `POST /v1/skills/find` and `POST /v1/search` (and the MCP tool `find_skills`, which takes
/// `query` and `k`).
#[derive(Debug, Clone, PartialEq, Deserialize, Serialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct FindRequest {
    /// What the agent needs to do, in words.
    pub query: String,
    /// Distinct skills wanted (at most the gateway's max_k; default: the key's `k`, else 5).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schema(minimum = 1, default = 5)]
    pub k: Option<usize>,
    /// Evidence used (default: hybrid when the gateway has the model, else BM25).
    #[serde(default)]
    pub mode: Option<Mode>,
    /// Return quarantined skills too.
    #[serde(default)]
    pub include_quarantined: bool,
    /// Hits must score above this (default: the calibrated floor).
    #[serde(default)]
    pub min_score: Option<f32>,
    /// Return every candidate's signals and why it was kept or dropped (`find` only).
    #[serde(default)]
    pub explain: bool,
    /// Only skills of this capability type (`docs/capabilities.md`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub capability: Option<String>,
}

impl FindRequest {
    pub(crate) fn ask(&self) -> Ask<'_> {
        Ask {
            text: &self.query,
            k: self.k,
            mode: self.mode,
            include_quarantined: self.include_quarantined,
            min_score: self.min_score,
            capability: self.capability.as_deref(),
        }
    }
}

/// The MCP tool `get_skill`'s arguments.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct SkillRequest {
    /// The skill id, e.g. `registry:path/to/skill`.
    pub id: String,
}

/// The retrieval part of a request, checked the same way whoever sends it.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Ask<'a> {
    pub text: &'a str,
    /// `None`: the key's default, else [`defaults::K`] (the gateway resolves it first).
    pub k: Option<usize>,
    pub mode: Option<Mode>,
    pub include_quarantined: bool,
    pub min_score: Option<f32>,
    /// Only skills of this capability type are candidates.
    pub capability: Option<&'a str>,
}

impl<'a> Ask<'a> {
    /// The index query for this ask.
    pub(crate) fn query<'q>(self, vector: Option<&'q [f32]>) -> skg_index::Query<'q>
    where
        'a: 'q,
    {
        let mut q = skg_index::Query::new(self.text, vector, self.k.unwrap_or(defaults::K));
        if let Some(m) = self.mode {
            q.mode = m;
        }
        q.include_quarantined = self.include_quarantined;
        q.capability = self.capability;
        if let Some(s) = self.min_score {
            q.min_score = s;
        }
        q
    }
}

/// A skill that scored below the floor.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct Rejected {
    /// Skill id.
    pub id: String,
    /// Its score.
    pub score: f32,
}

/// What every retrieval answer carries about how it was answered.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct Served {
    /// The evidence used.
    pub mode: Mode,
    /// The index revision that answered.
    pub index_revision: String,
    /// Why answers are degraded (empty when hybrid retrieval is available).
    pub degraded: Vec<String>,
}

/// One skill of a find answer.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct FindResult {
    /// Skill id.
    pub id: String,
    /// Name.
    pub name: String,
    /// Description.
    pub description: String,
    /// Registry.
    pub registry: String,
    /// `SKILL.md` path in the registry.
    pub path: String,
    /// Primary capability type, or `unknown`.
    pub capability: String,
    /// `skg://skills/<id>`.
    pub root_uri: String,
    /// The part that matched: `…/.abstract`, `…/.overview` or `…/<file>#L<a>-L<b>`.
    pub uri: String,
    /// 0 abstract, 1 overview, 2 section.
    pub level: u8,
    /// The ranking score.
    pub score: f32,
    /// Its BM25 score.
    pub bm25: f32,
    /// Its best cosine.
    pub dense: f32,
    /// The matching part's first 240 characters.
    #[serde(rename = "abstract")]
    pub abstract_: String,
    /// Quarantined by the slop score.
    pub quarantined: bool,
    /// The canonical it is a copy of.
    pub alias_of: Option<String>,
}

/// `POST /v1/skills/find`: one result per skill, best first.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct FindResponse {
    /// The query.
    pub query: String,
    /// How it was answered.
    #[serde(flatten)]
    pub served: Served,
    /// The skills above the floor.
    pub results: Vec<FindResult>,
    /// The best skills below it.
    pub rejected: Vec<Rejected>,
    /// No skill cleared the floor.
    pub nothing_cleared_the_floor: bool,
    /// With `explain`: every candidate's signals and why it was kept or dropped.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub explain: Option<Explain>,
    /// Time taken, in milliseconds.
    pub took_ms: f64,
}

/// Why the answer is what it is (`explain: true`): the evidence, the fusion and each candidate.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct Explain {
    /// The analyzed query terms BM25 matched on.
    pub terms: Vec<String>,
    /// The evidence used.
    pub mode: Mode,
    /// BM25's weight in the fusion (hybrid; the rest is the cosine). Over a catalog of both
    /// kinds, the weight of the first candidate's kind.
    pub bm25_weight: Option<f32>,
    /// Over a catalog of both kinds (`SKILL.md` packages and tool-catalog entries; hybrid), each
    /// kind's BM25 weight, `skill` and `tool`: each kind's BM25 counts as a share of its own
    /// best, the weight is each kind's own, at most that of the kind of the nearest candidate
    /// by cosine. Absent over a catalog of one kind.
    #[serde(default, skip_serializing_if = "std::collections::BTreeMap::is_empty")]
    pub bm25_weight_by_kind: std::collections::BTreeMap<String, f32>,
    /// The floor a hit must score above.
    pub floor: f32,
    /// `k`: hits kept at most.
    pub k: usize,
    /// The candidates, best first: the hits, then the best below the floor.
    pub candidates: Vec<Candidate>,
}

/// One candidate of an answer and what happened to it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct Candidate {
    /// Skill id.
    pub id: String,
    /// The fusion's score (of the two signals in hybrid): what the floor compares; the second
    /// stage may order the candidates otherwise (see `late`).
    pub score: f32,
    /// Its BM25 (after the `when_not_to_use` penalty; 0 when not matched).
    pub bm25: f32,
    /// Late interaction of the task's tokens with the skill's card (MaxSim), when the second
    /// stage scored it (an index built with card tokens): the hybrid ranking's first 20 are
    /// ordered by the fused score's z-score plus 0.3 × this one's.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub late: Option<f32>,
    /// BM25 as the fusion counted it: in hybrid (linear and adaptive mixes) a skill under BM25's
    /// cut — the score of the pool-th skill its pass ranks (50 by default, `k` when larger) —
    /// counts at the cut less its own penalty, so a skill with `bm25` 0 (not gathered) can count
    /// more; otherwise equal to `bm25`.
    pub bm25_counted: f32,
    /// Its best cosine (0 without vectors).
    pub dense: f32,
    /// The document that matched best.
    pub doc: String,
    /// `kept` (rank `rank`) or `below_floor` (dropped: the score is at or under the floor).
    pub decision: String,
    /// Rank among the kept hits (from 1), for kept ones.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rank: Option<usize>,
}

/// A skill kind as the wire names it (its serde name).
fn kind_name(kind: skg_model::SkillKind) -> &'static str {
    match kind {
        skg_model::SkillKind::Skill => "skill",
        skg_model::SkillKind::Tool => "tool",
    }
}

/// The explanation of `answer` under `floor` and `k`.
pub fn explain(ix: &Index, answer: &skg_index::Answer, floor: f32, k: usize) -> Explain {
    let candidate = |h: &skg_index::Hit, rank: Option<usize>| Candidate {
        id: ix.skills[h.skill as usize].id.to_string(),
        score: h.score,
        bm25: h.bm25,
        late: h.late,
        bm25_counted: h.bm25_counted,
        dense: h.dense,
        doc: ix.docs[h.doc as usize].id.to_string(),
        decision: if rank.is_some() {
            "kept"
        } else {
            "below_floor"
        }
        .to_owned(),
        rank,
    };
    Explain {
        terms: answer.terms.clone(),
        mode: answer.mode,
        bm25_weight: answer.bm25_weight,
        bm25_weight_by_kind: answer
            .bm25_weights
            .iter()
            .map(|&(k, w)| (kind_name(k).to_owned(), w))
            .collect(),
        floor,
        k,
        candidates: answer
            .hits
            .iter()
            .enumerate()
            .map(|(i, h)| candidate(h, Some(i + 1)))
            .chain(answer.rejected.iter().map(|h| candidate(h, None)))
            .collect(),
    }
}

/// One section of a search answer.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct SectionResult {
    /// Skill id.
    pub id: String,
    /// Skill name.
    pub name: String,
    /// Document id.
    pub doc_id: String,
    /// 0 abstract, 1 overview, 2 section.
    pub level: u8,
    /// The markdown file.
    pub file: String,
    /// Section title.
    pub title: String,
    /// Its heading path.
    pub heading_path: Vec<String>,
    /// First and last line.
    pub lines: [u32; 2],
    /// `skg://skills/<id>`.
    pub root_uri: String,
    /// The section's uri.
    pub uri: String,
    /// The ranking score.
    pub score: f32,
    /// Its BM25 score.
    pub bm25: f32,
    /// Its cosine.
    pub dense: f32,
    /// The section's first 240 characters.
    pub snippet: String,
}

/// `POST /v1/search`: section hits, several per skill.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct SearchResponse {
    /// The query.
    pub query: String,
    /// How it was answered.
    #[serde(flatten)]
    pub served: Served,
    /// The sections.
    pub results: Vec<SectionResult>,
    /// No section cleared the floor.
    pub nothing_cleared_the_floor: bool,
    /// Time taken, in milliseconds.
    pub took_ms: f64,
}

/// One step of a plan.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct PlanStep {
    /// Position in the plan, from 1.
    pub step: usize,
    /// Skill id.
    pub id: String,
    /// Name.
    pub name: String,
    /// Description.
    pub description: String,
    /// `skg://skills/<id>`.
    pub root_uri: String,
    /// Why it is here.
    pub reason: Reason,
    /// Its `SKILL.md` tokens.
    pub tokens: u32,
    /// Its `depends_on` targets.
    pub depends_on: Vec<String>,
    /// Its `SKILL.md`, with `include_content`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub markdown: Option<String>,
}

/// Token accounting of a bundle.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct Tokens {
    /// The bundle's `SKILL.md` tokens.
    pub bundle: u64,
    /// The budget asked for.
    pub budget: Option<u64>,
    /// Tokens over the budget (dependencies are kept past it).
    pub overrun: u64,
    /// Every routable skill's tokens the caller sees (a key's view; without keys the whole
    /// catalog): what injecting that catalog would cost.
    pub catalog: u64,
    /// 1 − bundle / catalog.
    pub reduction: f64,
}

/// `POST /v1/route`: the bundle, dependencies first.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct RouteResponse {
    /// The task.
    pub task: String,
    /// How it was answered.
    #[serde(flatten)]
    pub served: Served,
    /// The `tools` shape asked for.
    pub format: Format,
    /// The skills, dependencies first.
    pub plan: Vec<PlanStep>,
    /// Dependency cycles among the bundle's skills (ids).
    pub cycles: Vec<Vec<String>>,
    /// Broken capability chains, as sentences.
    pub type_errors: Vec<String>,
    /// Dependencies the index does not hold.
    pub missing: Vec<String>,
    /// Dependencies outside what the caller's key may see: left out and not named.
    pub withheld: usize,
    /// Token accounting.
    pub tokens: Tokens,
    /// The best skills below the floor.
    pub rejected: Vec<Rejected>,
    /// No skill cleared the floor.
    pub nothing_cleared_the_floor: bool,
    /// The bundle as tool definitions in `format` (absent for `bundle`): a skill package as a
    /// tool taking the task, a routed catalog tool as itself (its own input schema).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schema(value_type = Option<Object>)]
    pub tools: Option<serde_json::Value>,
    /// With `explain`: every retrieval candidate's signals and why it was kept or dropped.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub explain: Option<Explain>,
    /// Time taken, in milliseconds.
    pub took_ms: f64,
}

/// The plan, one line a skill, with cycles, type errors, missing dependencies and the token
/// accounting, as `skg route` prints it.
impl std::fmt::Display for RouteResponse {
    fn fmt(&self, o: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        for d in &self.served.degraded {
            writeln!(o, "({d})")?;
        }
        if self.nothing_cleared_the_floor {
            writeln!(o, "no skill cleared the score floor for this task")?;
        }
        for s in &self.plan {
            let why = match &s.reason {
                Reason::Retrieved { rank } => format!("retrieved #{rank}"),
                Reason::Dependency { of } => format!("dependency of {of}"),
                Reason::Complement { of } => format!("complements {of}"),
            };
            writeln!(
                o,
                "{:>2}. {:<60} {:>6} tokens  {why}",
                s.step, s.id, s.tokens
            )?;
        }
        for c in &self.cycles {
            writeln!(o, "dependency cycle: {}", c.join(" → "))?;
        }
        for e in &self.type_errors {
            writeln!(o, "type error: {e}")?;
        }
        for m in &self.missing {
            writeln!(o, "missing dependency: {m}")?;
        }
        let t = &self.tokens;
        let over = if t.overrun > 0 {
            format!(
                "; {} tokens over the budget (dependencies are kept)",
                t.overrun
            )
        } else {
            String::new()
        };
        writeln!(
            o,
            "bundle {} tokens of a {}-token catalog ({:.1}% of it){over}",
            t.bundle,
            t.catalog,
            100.0 * t.bundle as f64 / t.catalog.max(1) as f64,
        )
    }
}

/// The listing's shape on the wire.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum ListingFormat {
    /// A JSON answer (the skills, the markdown block, the accounting).
    #[default]
    Json,
    /// The markdown block alone (`text/markdown`), as a host inserts it.
    Markdown,
}

/// `POST /v1/listing` (and `GET /v1/listing?task=…&budget_chars=…`): the skills an agent host
/// should list for this task within its budget.
#[derive(Debug, Clone, PartialEq, Deserialize, Serialize, ToSchema, utoipa::IntoParams)]
#[serde(deny_unknown_fields)]
pub struct ListingRequest {
    /// The task (without one: the catalog by name).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub task: Option<String>,
    /// Characters the listing may take (every line and its newline).
    #[serde(default = "default_budget_chars")]
    #[schema(default = 8000, minimum = 1)]
    pub budget_chars: usize,
    /// Characters of each description (longer ones end in `…`).
    #[serde(default = "default_description_chars")]
    #[schema(default = 250, minimum = 1)]
    pub description_chars: usize,
    /// `json` (default) or `markdown` (the block alone).
    #[serde(default)]
    pub format: ListingFormat,
    /// List quarantined skills too (keys need the quarantine policy).
    #[serde(default)]
    pub include_quarantined: bool,
}

fn default_budget_chars() -> usize {
    skg_index::listing::DEFAULT_BUDGET_CHARS
}

fn default_description_chars() -> usize {
    skg_index::listing::DEFAULT_DESCRIPTION_CHARS
}

/// One listed skill.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct ListedSkill {
    /// Skill id.
    pub id: String,
    /// Name.
    pub name: String,
    /// Its line in the markdown block.
    pub line: String,
    /// Where to read it.
    pub root_uri: String,
    /// Why it is listed.
    #[schema(value_type = Object)]
    pub reason: skg_index::listing::ListedFor,
}

/// `POST /v1/listing`: the listing, most relevant first, dependencies of listed skills kept, the
/// budget never exceeded.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct ListingResponse {
    /// The task, when one was given.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub task: Option<String>,
    /// How it was answered.
    #[serde(flatten)]
    pub served: Served,
    /// The listed skills, in order.
    pub skills: Vec<ListedSkill>,
    /// The markdown block (one `- name: description` line per skill).
    pub markdown: String,
    /// Characters of the block.
    pub chars: usize,
    /// The budget asked for.
    pub budget_chars: usize,
    /// The description cut asked for.
    pub description_chars: usize,
    /// Skills offered that did not fit.
    pub left_out: usize,
    /// Milliseconds the gateway spent.
    pub took_ms: f64,
}

/// The listing answer (took_ms filled in by the caller).
pub fn listing(
    ix: &Index,
    task: Option<&str>,
    l: &skg_index::listing::Listing,
    served: Served,
) -> ListingResponse {
    ListingResponse {
        task: task.map(str::to_owned),
        served,
        skills: l
            .skills
            .iter()
            .map(|x| ListedSkill {
                id: x.id.clone(),
                name: ix.skills[x.skill as usize].name.clone(),
                line: x.line.clone(),
                root_uri: root_uri(&x.id),
                reason: x.reason.clone(),
            })
            .collect(),
        markdown: l.markdown(),
        chars: l.chars,
        budget_chars: l.options.budget_chars,
        description_chars: l.options.description_chars,
        left_out: l.left_out,
        took_ms: 0.0,
    }
}

/// `GET /v1/skills/{id}`: one skill (routable or not) with its `SKILL.md`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct SkillResponse {
    /// Skill id.
    pub id: String,
    /// Registry.
    pub registry: String,
    /// `SKILL.md` path in the registry.
    pub path: String,
    /// Name.
    pub name: String,
    /// Description.
    pub description: String,
    /// When not to use it.
    pub when_not_to_use: Option<String>,
    /// The canonical it is a copy of.
    pub alias_of: Option<String>,
    /// Quarantined by the slop score.
    pub quarantined: bool,
    /// Its slop score.
    pub slop_score: Option<f64>,
    /// Its `SKILL.md` tokens.
    pub tokens: u32,
    /// `depends_on` targets.
    pub depends_on: Vec<String>,
    /// `complements` targets.
    pub complements: Vec<String>,
    /// `co_used_with` targets.
    pub co_used_with: Vec<String>,
    /// Declared input types.
    pub inputs: Vec<String>,
    /// Declared output types.
    pub outputs: Vec<String>,
    /// Its package's content hash.
    pub content_hash: String,
    /// Routed by default (not an alias, not quarantined).
    pub routable: bool,
    /// `skg://skills/<id>`.
    pub root_uri: String,
    /// The index revision that answered.
    pub index_revision: String,
    /// Its `SKILL.md` as served.
    pub markdown: String,
}

/// One registry of the served index.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct HealthSource {
    /// Registry name.
    pub name: String,
    /// Revision read.
    pub rev: Option<String>,
    /// Its content hash.
    pub content_hash: String,
    /// Skills read.
    pub skills: u64,
}

/// The served index.
///
/// With API keys (tenants), what describes the whole catalog — the folder on the server, the
/// row counts, the registries — is given only to a caller with the admin token: an open probe
/// learns that the gateway answers and which revision, not what other tenants' skills are.
/// Without keys (one trusted client) it is always given.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct HealthIndex {
    /// Always true once the gateway answers.
    pub loaded: bool,
    /// The folder served (with API keys: only for the admin token).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dir: Option<String>,
    /// Its revision (content hash).
    pub revision: String,
    /// Its format version.
    pub format: u32,
    /// The skg that built it.
    pub tool: String,
    /// Row counts (with API keys: only for the admin token).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub counts: Option<std::collections::BTreeMap<String, u64>>,
    /// Embedding model of its vectors.
    pub model: Option<String>,
    /// Vector dimension.
    pub dim: Option<u32>,
    /// When it was loaded (Unix seconds).
    pub loaded_at: u64,
    /// Its registries (with API keys: only for the admin token).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sources: Option<Vec<HealthSource>>,
}

/// `GET /health`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct HealthResponse {
    /// `ok`, or `degraded` when `degraded` is not empty.
    pub status: String,
    /// Why answers are degraded.
    pub degraded: Vec<String>,
    /// The served index.
    pub index: HealthIndex,
    /// Seconds since start.
    pub uptime_seconds: u64,
    /// skg's version.
    pub version: String,
}

/// `skg://skills/<id>`: the skill.
pub(crate) fn root_uri(id: &str) -> String {
    format!("skg://skills/{id}")
}

/// The hit's uri: the abstract, the overview, or a file's line range.
fn doc_uri(id: &str, d: &skg_index::DocEntry) -> String {
    match d.level {
        Level::L0 => format!("skg://skills/{id}/.abstract"),
        Level::L1 => format!("skg://skills/{id}/.overview"),
        Level::L2 => format!(
            "skg://skills/{id}/{}#L{}-L{}",
            d.file, d.line_start, d.line_end
        ),
    }
}

fn rejected(ix: &Index, answer: &skg_index::Answer) -> Vec<Rejected> {
    answer
        .rejected
        .iter()
        .map(|h| Rejected {
            id: ix.skills[h.skill as usize].id.to_string(),
            score: h.score,
        })
        .collect()
}

fn ids(v: &[skg_model::SkillId]) -> Vec<String> {
    v.iter().map(ToString::to_string).collect()
}

/// The find answer of `answer` (took_ms filled in by the caller).
pub fn find(ix: &Index, query: &str, answer: &skg_index::Answer, served: Served) -> FindResponse {
    let results = answer
        .hits
        .iter()
        .map(|h| {
            let s = &ix.skills[h.skill as usize];
            let d = &ix.docs[h.doc as usize];
            FindResult {
                id: s.id.to_string(),
                name: s.name.clone(),
                description: s.description.clone(),
                registry: s.registry.to_string(),
                path: s.path.clone(),
                capability: s.capability.clone(),
                root_uri: root_uri(s.id.as_str()),
                uri: doc_uri(s.id.as_str(), d),
                level: u8::from(d.level),
                score: h.score,
                bm25: h.bm25,
                dense: h.dense,
                abstract_: d.snippet.clone(),
                quarantined: s.quarantined,
                alias_of: s.alias_of.as_ref().map(ToString::to_string),
            }
        })
        .collect();
    FindResponse {
        query: query.to_owned(),
        served,
        results,
        rejected: rejected(ix, answer),
        nothing_cleared_the_floor: answer.hits.is_empty(),
        explain: None,
        took_ms: 0.0,
    }
}

/// The search answer of section `hits` (took_ms filled in by the caller).
pub fn search(
    ix: &Index,
    query: &str,
    hits: &[skg_index::SectionHit],
    served: Served,
) -> SearchResponse {
    let results: Vec<SectionResult> = hits
        .iter()
        .map(|h| {
            let s = &ix.skills[h.skill as usize];
            let d = &ix.docs[h.doc as usize];
            SectionResult {
                id: s.id.to_string(),
                name: s.name.clone(),
                doc_id: d.id.to_string(),
                level: u8::from(d.level),
                file: d.file.clone(),
                title: d.title.clone(),
                heading_path: d.heading_path.clone(),
                lines: [d.line_start, d.line_end],
                root_uri: root_uri(s.id.as_str()),
                uri: doc_uri(s.id.as_str(), d),
                score: h.score,
                bm25: h.bm25,
                dense: h.dense,
                snippet: d.snippet.clone(),
            }
        })
        .collect();
    SearchResponse {
        query: query.to_owned(),
        served,
        nothing_cleared_the_floor: results.is_empty(),
        results,
        took_ms: 0.0,
    }
}

/// The route answer: `bundle` routed from `answer`, each skill's `SKILL.md` with
/// `include_content`, tools in the asked format (took_ms filled in by the caller).
pub fn route(
    ix: &Index,
    req: &RouteRequest,
    answer: &skg_index::Answer,
    bundle: &skg_index::Bundle,
    served: Served,
) -> skg_index::Result<RouteResponse> {
    let plan = bundle
        .plan
        .iter()
        .enumerate()
        .map(|(i, b)| {
            let s = &ix.skills[b.skill as usize];
            Ok(PlanStep {
                step: i + 1,
                id: s.id.to_string(),
                name: s.name.clone(),
                description: s.description.clone(),
                root_uri: root_uri(s.id.as_str()),
                reason: b.reason.clone(),
                tokens: b.tokens,
                depends_on: ids(&s.depends_on),
                markdown: if req.include_content {
                    Some(ix.markdown(b.skill)?)
                } else {
                    None
                },
            })
        })
        .collect::<skg_index::Result<Vec<_>>>()?;
    Ok(RouteResponse {
        task: req.task.clone(),
        served,
        format: req.format,
        plan,
        cycles: bundle.cycles.clone(),
        type_errors: bundle.type_errors.clone(),
        missing: bundle.missing.clone(),
        withheld: bundle.withheld,
        tokens: Tokens {
            bundle: bundle.tokens,
            budget: bundle.token_budget,
            overrun: bundle.overrun,
            catalog: bundle.catalog_tokens,
            reduction: 1.0 - bundle.tokens as f64 / bundle.catalog_tokens.max(1) as f64,
        },
        rejected: rejected(ix, answer),
        nothing_cleared_the_floor: answer.hits.is_empty(),
        tools: (req.format != Format::Bundle)
            .then(|| skg_index::adapt::tools(ix, bundle, req.format))
            .transpose()?,
        explain: None,
        took_ms: 0.0,
    })
}

/// The skill at `pos` with its `SKILL.md`.
pub fn skill(ix: &Index, pos: u32) -> skg_index::Result<SkillResponse> {
    let s = &ix.skills[pos as usize];
    Ok(SkillResponse {
        id: s.id.to_string(),
        registry: s.registry.to_string(),
        path: s.path.clone(),
        name: s.name.clone(),
        description: s.description.clone(),
        when_not_to_use: s.when_not_to_use.clone(),
        alias_of: s.alias_of.as_ref().map(ToString::to_string),
        quarantined: s.quarantined,
        slop_score: s.slop_score,
        tokens: s.tokens,
        depends_on: ids(&s.depends_on),
        complements: ids(&s.complements),
        co_used_with: ids(&s.co_used_with),
        inputs: s.inputs.clone(),
        outputs: s.outputs.clone(),
        content_hash: s.content_hash.clone(),
        routable: s.routable(),
        root_uri: root_uri(s.id.as_str()),
        index_revision: ix.manifest.content_hash.clone(),
        markdown: ix.markdown(pos)?,
    })
}
