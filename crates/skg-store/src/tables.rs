//! Table declarations: every column's name, meaning and accessor, in one place.
//!
//! A column is declared with a typed accessor (`Get`), so its Parquet type follows from the
//! code and cannot drift from the row type. Bump [`skg_model::SCHEMA_VERSION`] on any change here.

use skg_model::{
    CapabilityRow, Cluster, CommunityRow, Diagnostic, Document, Edge, Member, MetricRow, Role,
    Score, Skill, Stage,
    security::{Finding, Verdict},
};

/// Column types as written to Parquet.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ColumnType {
    /// UTF-8 string, never null.
    Str,
    /// UTF-8 string or null.
    OptStr,
    /// Unsigned 32-bit integer.
    U32,
    /// Unsigned 32-bit integer or null.
    OptU32,
    /// Unsigned 64-bit integer.
    U64,
    /// 64-bit float.
    F64,
    /// 64-bit float or null.
    OptF64,
    /// Boolean.
    Bool,
    /// List of UTF-8 strings.
    StrList,
    /// Any value, as compact JSON text.
    Json,
}

impl ColumnType {
    /// The type as documented (Arrow/Parquet logical type).
    pub fn as_str(self) -> &'static str {
        match self {
            ColumnType::Str => "string",
            ColumnType::OptStr => "string (nullable)",
            ColumnType::U32 => "uint32",
            ColumnType::OptU32 => "uint32 (nullable)",
            ColumnType::U64 => "uint64",
            ColumnType::F64 => "float64",
            ColumnType::OptF64 => "float64 (nullable)",
            ColumnType::Bool => "bool",
            ColumnType::StrList => "list<string>",
            ColumnType::Json => "string (JSON)",
        }
    }
}

/// How a column's value is read from a row.
#[derive(Debug)]
pub enum Get<T: 'static> {
    /// A string.
    Str(fn(&T) -> &str),
    /// An optional string.
    OptStr(fn(&T) -> Option<&str>),
    /// A u32.
    U32(fn(&T) -> u32),
    /// An optional u32.
    OptU32(fn(&T) -> Option<u32>),
    /// A u64.
    U64(fn(&T) -> u64),
    /// A float.
    F64(fn(&T) -> f64),
    /// An optional float.
    OptF64(fn(&T) -> Option<f64>),
    /// A boolean.
    Bool(fn(&T) -> bool),
    /// A list of strings.
    StrList(fn(&T) -> Vec<&str>),
    /// A value rendered as JSON.
    Json(fn(&T) -> String),
}

impl<T> Get<T> {
    /// The Parquet type this accessor produces.
    pub fn ty(&self) -> ColumnType {
        match self {
            Get::Str(_) => ColumnType::Str,
            Get::OptStr(_) => ColumnType::OptStr,
            Get::U32(_) => ColumnType::U32,
            Get::OptU32(_) => ColumnType::OptU32,
            Get::U64(_) => ColumnType::U64,
            Get::F64(_) => ColumnType::F64,
            Get::OptF64(_) => ColumnType::OptF64,
            Get::Bool(_) => ColumnType::Bool,
            Get::StrList(_) => ColumnType::StrList,
            Get::Json(_) => ColumnType::Json,
        }
    }
}

/// One column of a table of `T`.
#[derive(Debug)]
pub struct Column<T: 'static> {
    /// Column name.
    pub name: &'static str,
    /// Accessor (and so the type).
    pub get: Get<T>,
    /// What it means.
    pub doc: &'static str,
}

/// A table of `T` rows.
#[derive(Debug)]
pub struct Table<T: 'static> {
    /// Table name (file stem).
    pub name: &'static str,
    /// What a row is.
    pub doc: &'static str,
    /// Columns, in order.
    pub columns: &'static [Column<T>],
}

/// One column, described (for docs and readers).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ColumnSpec {
    /// Column name.
    pub name: &'static str,
    /// Type.
    pub ty: ColumnType,
    /// What it means.
    pub doc: &'static str,
}

/// A table, described independently of its row type.
pub trait TableSpec: Sync {
    /// Table name.
    fn name(&self) -> &'static str;
    /// What a row is.
    fn doc(&self) -> &'static str;
    /// Its columns.
    fn columns(&self) -> Vec<ColumnSpec>;
}

impl<T: Sync> TableSpec for Table<T> {
    fn name(&self) -> &'static str {
        self.name
    }
    fn doc(&self) -> &'static str {
        self.doc
    }
    fn columns(&self) -> Vec<ColumnSpec> {
        self.columns
            .iter()
            .map(|c| ColumnSpec {
                name: c.name,
                ty: c.get.ty(),
                doc: c.doc,
            })
            .collect()
    }
}

const fn col<T>(name: &'static str, get: Get<T>, doc: &'static str) -> Column<T> {
    Column { name, get, doc }
}

fn strs(v: &[String]) -> Vec<&str> {
    v.iter().map(String::as_str).collect()
}

fn u32_of(n: usize) -> u32 {
    u32::try_from(n).unwrap_or(u32::MAX)
}

/// `skills`: one row per skill (or catalog tool).
pub static SKILLS: Table<Skill> = Table {
    name: "skills",
    doc: "one row per skill package (or tool of a catalog), normalized",
    columns: SKILL_COLUMNS,
};

/// `canonical_skills` (canonicalize): the routable skills — canonicals and variants — with every
/// `skills` column.
pub static CANONICAL_SKILLS: Table<Skill> = Table {
    name: "canonical_skills",
    doc: "one row per routable skill after deduplication (role canonical or variant); columns as in `skills`",
    columns: SKILL_COLUMNS,
};

static SKILL_COLUMNS: &[Column<Skill>] = &[
    col("id", Get::Str(|s| s.id.as_str()), "`<registry>:<root>`"),
    col(
        "registry",
        Get::Str(|s| s.registry.as_str()),
        "registry name",
    ),
    col(
        "kind",
        Get::Str(|s| {
            if s.kind == skg_model::SkillKind::Skill {
                "skill"
            } else {
                "tool"
            }
        }),
        "`skill` or `tool`",
    ),
    col(
        "path",
        Get::Str(|s| &s.path),
        "SKILL.md relative to the registry root (tools: `<file>#<name>`)",
    ),
    col(
        "root",
        Get::Str(|s| &s.root),
        "skill folder relative to the registry root",
    ),
    col(
        "folder",
        Get::Str(|s| &s.folder),
        "the skill folder's own name",
    ),
    col(
        "name",
        Get::Str(|s| &s.name),
        "name as declared (else slug, else folder)",
    ),
    col("slug", Get::Str(|s| &s.slug), "kebab-case routing key"),
    col(
        "name_valid",
        Get::Bool(|s| s.name_valid),
        "name is spec-valid kebab-case, ≤ 64 chars",
    ),
    col(
        "name_matches_folder",
        Get::Bool(|s| s.name_matches_folder),
        "slug equals the folder name",
    ),
    col(
        "description",
        Get::Str(|s| &s.description),
        "description as declared (empty when missing)",
    ),
    col(
        "when_to_use",
        Get::OptStr(|s| s.when_to_use.as_deref()),
        "frontmatter, a 'Use when' sentence, or a 'When to use' section",
    ),
    col(
        "when_not_to_use",
        Get::OptStr(|s| s.when_not_to_use.as_deref()),
        "frontmatter, a 'Do not use' sentence, or a 'When not to use' section",
    ),
    col(
        "tags",
        Get::StrList(|s| strs(&s.tags)),
        "lowercase, sorted, unique",
    ),
    col(
        "category",
        Get::OptStr(|s| s.category.as_deref()),
        "category (top level or metadata)",
    ),
    col(
        "allowed_tools",
        Get::StrList(|s| strs(&s.allowed_tools)),
        "allowed-tools entries",
    ),
    col(
        "version",
        Get::OptStr(|s| s.version.as_deref()),
        "version (top level or metadata)",
    ),
    col(
        "license",
        Get::OptStr(|s| s.license.as_deref()),
        "license/licence",
    ),
    col(
        "requires_bins",
        Get::StrList(|s| strs(&s.requires.bins)),
        "required executables",
    ),
    col(
        "requires_env",
        Get::StrList(|s| strs(&s.requires.env)),
        "required environment variables",
    ),
    col(
        "requires_mcp",
        Get::StrList(|s| strs(&s.requires.mcp)),
        "required MCP servers",
    ),
    col(
        "requires_packages",
        Get::StrList(|s| strs(&s.requires.packages)),
        "required packages",
    ),
    col(
        "inputs",
        Get::StrList(|s| strs(&s.inputs)),
        "declared capability inputs",
    ),
    col(
        "outputs",
        Get::StrList(|s| strs(&s.outputs)),
        "declared capability outputs",
    ),
    col(
        "platforms",
        Get::StrList(|s| s.platforms.iter().map(|p| p.as_str()).collect()),
        "platform hints (claude-code, codex, gemini, cursor, copilot, openclaw, mcp)",
    ),
    col(
        "risk_tier",
        Get::Str(|s| s.risk_tier.as_str()),
        "safe | network | exec | critical | unsafe",
    ),
    col(
        "risk_reasons",
        Get::StrList(|s| strs(&s.risk_reasons)),
        "`tier: reason` per rule that fired",
    ),
    col(
        "capability",
        Get::Str(|s| &s.capability),
        "primary capability type (docs/capabilities.md) or unknown",
    ),
    col(
        "capability_confidence",
        Get::F64(|s| s.capability_confidence),
        "the type's share of the evidence that named it, 0–1 (word evidence, or the type prototypes' softmax mass where `capabilities.evidence` is embedding)",
    ),
    col(
        "frontmatter_status",
        Get::Str(|s| s.frontmatter.status.as_str()),
        "ok | repaired | salvaged | missing | not_applicable",
    ),
    col(
        "frontmatter_json",
        Get::Str(|s| &s.frontmatter.json),
        "the whole frontmatter as compact JSON",
    ),
    col(
        "frontmatter_keys",
        Get::StrList(|s| strs(&s.frontmatter.keys)),
        "top-level frontmatter keys",
    ),
    col(
        "body",
        Get::Str(|s| &s.body),
        "markdown body after the frontmatter",
    ),
    col(
        "body_line",
        Get::U32(|s| s.body_line),
        "line of SKILL.md where the body starts",
    ),
    col(
        "files",
        Get::StrList(|s| strs(&s.files)),
        "other files of the package, relative to root",
    ),
    col(
        "scripts",
        Get::StrList(|s| strs(&s.scripts)),
        "script files among them",
    ),
    col(
        "script_structures",
        Get::Json(|s| serde_json::to_string(&s.script_structures).unwrap_or_default()),
        "structural fingerprint of each script: [{path, hash, tokens}] (identifiers alpha-renamed, comments/strings/formatting ignored)",
    ),
    col("bytes", Get::U64(|s| s.bytes), "size of SKILL.md"),
    col(
        "content_hash",
        Get::Str(|s| &s.content_hash),
        "blake3 over every file of the package",
    ),
];

/// `documents`: L0/L1/L2 search documents.
pub static DOCUMENTS: Table<Document> = Table {
    name: "documents",
    doc: "one row per search document: L0 abstract, L1 overview, L2 section (chunked)",
    columns: &[
        col(
            "id",
            Get::Str(|d| d.id.as_str()),
            "`<skill>#L0`, `<skill>#L1`, `<skill>#L2:<file>:<ordinal>[.<chunk>]`",
        ),
        col("skill", Get::Str(|d| d.skill.as_str()), "skill id"),
        col(
            "registry",
            Get::Str(|d| d.registry.as_str()),
            "registry name",
        ),
        col(
            "level",
            Get::U32(|d| u32::from(u8::from(d.level))),
            "0, 1 or 2",
        ),
        col(
            "file",
            Get::Str(|d| &d.file),
            "markdown file relative to the skill root",
        ),
        col(
            "heading_path",
            Get::StrList(|d| strs(&d.heading_path)),
            "headings from the top of the file to the section",
        ),
        col(
            "ordinal",
            Get::U32(|d| d.ordinal),
            "section position in its file",
        ),
        col("chunk", Get::U32(|d| d.chunk), "chunk of a long section"),
        col(
            "line_start",
            Get::U32(|d| d.line_start),
            "first line in the file",
        ),
        col(
            "line_end",
            Get::U32(|d| d.line_end),
            "last line in the file",
        ),
        col(
            "title",
            Get::Str(|d| &d.title),
            "skill name or section heading",
        ),
        col("text", Get::Str(|d| &d.text), "text to index"),
        col(
            "role",
            Get::Str(|d| d.role.as_str()),
            "`when_to_use` or `when_not_to_use` for a section of SKILL.md whose heading (or top-level section) says so, else `body`",
        ),
    ],
};

/// `edges`: typed relations.
pub static EDGES: Table<Edge> = Table {
    name: "edges",
    doc: "one row per (src, dst, kind); the best evidence decides confidence, source and extractor",
    columns: &[
        col("src", Get::Str(|e| e.src.as_str()), "skill id that points"),
        col("dst", Get::Str(|e| e.dst.as_str()), "skill id pointed at"),
        col(
            "kind",
            Get::Str(|e| e.kind.as_str()),
            "depends_on | complements | co_used_with | references | duplicate_of | variant_of",
        ),
        col("confidence", Get::F64(|e| e.confidence), "0–1"),
        col(
            "source",
            Get::Str(|e| e.source.as_str()),
            "EXTRACTED | INFERRED | AMBIGUOUS",
        ),
        col(
            "extractor",
            Get::Str(|e| &e.extractor),
            "extractor of the best evidence",
        ),
        col(
            "evidence_count",
            Get::U32(|e| u32_of(e.evidence.len())),
            "pieces of evidence kept (at most 20)",
        ),
        col(
            "evidence_path",
            Get::Str(|e| e.evidence.first().map_or("", |v| v.path.as_str())),
            "best evidence: file relative to the source registry root",
        ),
        col(
            "evidence_line",
            Get::U32(|e| e.evidence.first().map_or(0, |v| v.line)),
            "best evidence: line",
        ),
        col(
            "evidence_snippet",
            Get::Str(|e| e.evidence.first().map_or("", |v| v.snippet.as_str())),
            "best evidence: the line",
        ),
        col(
            "evidence",
            Get::Json(|e| serde_json::to_string(&e.evidence).unwrap_or_default()),
            "all evidence, best first: [{extractor, confidence, source, path, line, snippet}]",
        ),
    ],
};

/// `diagnostics`: problems found while reading.
pub static DIAGNOSTICS: Table<Diagnostic> = Table {
    name: "diagnostics",
    doc: "one row per problem found while reading a registry",
    columns: &[
        col(
            "registry",
            Get::Str(|d| d.registry.as_str()),
            "registry name",
        ),
        col(
            "path",
            Get::Str(|d| &d.path),
            "file relative to the registry root",
        ),
        col("line", Get::OptU32(|d| d.line), "1-based line, when known"),
        col(
            "severity",
            Get::Str(|d| d.severity.as_str()),
            "info | warning | error",
        ),
        col(
            "code",
            Get::Str(|d| d.code.as_str()),
            "stable kebab-case code",
        ),
        col(
            "message",
            Get::Str(|d| &d.message),
            "what is wrong and what was done",
        ),
    ],
};

/// `members` (canonicalize): every skill's cluster and role.
pub static MEMBERS: Table<Member> = Table {
    name: "members",
    doc: "one row per input skill: its duplicate cluster and role (canonical | duplicate | variant)",
    columns: &[
        col("id", Get::Str(|m| m.id.as_str()), "skill id"),
        col(
            "registry",
            Get::Str(|m| m.registry.as_str()),
            "registry name (as in registries.toml)",
        ),
        col(
            "path",
            Get::Str(|m| &m.path),
            "SKILL.md path relative to the registry folder",
        ),
        col("name", Get::Str(|m| &m.name), "skill name"),
        col(
            "cluster_id",
            Get::Str(|m| m.cluster_id.as_str()),
            "duplicate cluster = id of its canonical skill",
        ),
        col(
            "role",
            Get::Str(|m| m.role.as_str()),
            "canonical | duplicate | variant",
        ),
        col(
            "variant_of",
            Get::OptStr(|m| m.variant_of.as_ref().map(skg_model::SkillId::as_str)),
            "for a variant: the better canonical with the same purpose",
        ),
        col(
            "quality",
            Get::F64(|m| m.quality),
            "quality used to pick canonicals, 0–1",
        ),
        col(
            "quality_source",
            Get::Str(|m| &m.quality_source),
            "slop_score (from skg score) | completeness",
        ),
        col(
            "nearest_description",
            Get::F64(|m| m.nearest_description),
            "closest description in another cluster among compared candidates (cosine, or word Jaccard without embeddings)",
        ),
        col(
            "reason",
            Get::Str(|m| &m.reason),
            "for a duplicate/variant: decision rule and signals against its canonical",
        ),
    ],
};

/// `aliases` (canonicalize): the alias map, one row per duplicate.
pub static ALIASES: Table<Member> = Table {
    name: "aliases",
    doc: "one row per alias (role duplicate): where the copy lives and the canonical it resolves to",
    columns: &[
        col(
            "alias_id",
            Get::Str(|m| m.id.as_str()),
            "the copy's skill id",
        ),
        col(
            "registry",
            Get::Str(|m| m.registry.as_str()),
            "the copy's registry",
        ),
        col("path", Get::Str(|m| &m.path), "the copy's SKILL.md path"),
        col(
            "canonical_id",
            Get::Str(|m| m.cluster_id.as_str()),
            "the canonical it resolves to",
        ),
        col(
            "reason",
            Get::Str(|m| &m.reason),
            "decision rule and signals",
        ),
    ],
};

/// The rows of [`ALIASES`]: members with role duplicate.
pub fn alias_rows(members: &[Member]) -> Vec<Member> {
    members
        .iter()
        .filter(|m| m.role == Role::Duplicate)
        .cloned()
        .collect()
}

/// `clusters` (canonicalize): one row per duplicate cluster.
pub static CLUSTERS: Table<Cluster> = Table {
    name: "clusters",
    doc: "one row per duplicate cluster (clusters of one included)",
    columns: &[
        col(
            "cluster_id",
            Get::Str(|c| c.cluster_id.as_str()),
            "id of the canonical skill",
        ),
        col(
            "canonical_registry",
            Get::Str(|c| c.canonical_registry.as_str()),
            "the canonical's registry",
        ),
        col(
            "canonical_path",
            Get::Str(|c| &c.canonical_path),
            "the canonical's SKILL.md path",
        ),
        col("size", Get::U32(|c| c.size), "members, canonical included"),
        col(
            "registries",
            Get::StrList(|c| strs(&c.registries)),
            "registries holding a member",
        ),
        col(
            "members",
            Get::StrList(|c| c.members.iter().map(skg_model::SkillId::as_str).collect()),
            "member ids, canonical first",
        ),
        col(
            "variants",
            Get::StrList(|c| c.variants.iter().map(skg_model::SkillId::as_str).collect()),
            "canonicals linked to this one as variants",
        ),
    ],
};

/// `capabilities` (canonicalize): every skill's capability type as the later stages read it.
pub static CAPABILITIES: Table<CapabilityRow> = Table {
    name: "capabilities",
    doc: "one row per skill: its capability type after canonicalize refined extract's (the nearest type prototype of the description's embedding where the words said `unknown`, when confident; docs/capabilities.md)",
    columns: &[
        col("id", Get::Str(|c| c.id.as_str()), "`<registry>:<root>`"),
        col(
            "capability",
            Get::Str(|c| &c.capability),
            "primary capability type (docs/capabilities.md) or unknown",
        ),
        col(
            "confidence",
            Get::F64(|c| c.confidence),
            "the type's share of the evidence that named it, 0–1",
        ),
        col(
            "evidence",
            Get::Str(|c| &c.evidence),
            "words (extract's classifier) | embedding (nearest type prototype) | none",
        ),
    ],
};

/// `scores` (score): the slop score of every skill, its quarantine decision and explanation.
pub static SCORES: Table<Score> = Table {
    name: "scores",
    doc: "one row per skill: slop_score (1 = clean, 0 = slop), quarantine decision, reasons, feature contributions",
    columns: &[
        col("id", Get::Str(|s| s.id.as_str()), "skill id"),
        col(
            "registry",
            Get::Str(|s| s.registry.as_str()),
            "registry name",
        ),
        col(
            "path",
            Get::Str(|s| &s.path),
            "SKILL.md path relative to the registry folder",
        ),
        col(
            "slop_score",
            Get::F64(|s| s.slop_score),
            "P(clean) from the fitted model: 1 = clean, 0 = slop",
        ),
        col(
            "quarantined",
            Get::Bool(|s| s.quarantined),
            "slop_score < threshold: excluded from routing",
        ),
        col(
            "threshold",
            Get::F64(|s| s.threshold),
            "quarantine threshold used",
        ),
        col(
            "reasons",
            Get::StrList(|s| strs(&s.reasons)),
            "features pulling the score down most: `name (value) contribution`",
        ),
        col(
            "contributions",
            Get::Json(|s| serde_json::to_string(&s.contributions).unwrap_or_default()),
            "[[feature, coefficient × standardized value]] for every feature",
        ),
        col(
            "features",
            Get::Json(|s| serde_json::to_string(&s.features).unwrap_or_default()),
            "[[feature, raw value]] for every feature",
        ),
    ],
};

/// All tables `skg score` writes.
pub static SCORE_TABLES: &[&dyn TableSpec] = &[&SCORES];

/// `metrics` (measure): routability metrics per scope.
pub static METRICS: Table<MetricRow> = Table {
    name: "metrics",
    doc: "one row per scope (`(all)`, then each registry): TLIS, GNCI, CFI, RScore with their inputs and evidence (definitions: docs/metrics.md)",
    columns: &[
        col(
            "scope",
            Get::Str(|m| &m.scope),
            "`(all)` or a registry name",
        ),
        col("nodes", Get::U32(|m| m.nodes), "skills in the graph"),
        col(
            "edges",
            Get::U32(|m| m.edges),
            "undirected edges between distinct skills",
        ),
        col("isolated", Get::U32(|m| m.isolated), "nodes of degree 0"),
        col(
            "isolated_nodes",
            Get::StrList(|m| strs(&m.isolated_nodes)),
            "their ids (TLIS's evidence)",
        ),
        col(
            "tlis",
            Get::OptF64(|m| m.tlis),
            "isolated / nodes (null for an empty graph)",
        ),
        col("max_degree", Get::U32(|m| m.max_degree), "largest degree"),
        col(
            "mean_degree",
            Get::OptF64(|m| m.mean_degree),
            "2 × edges / nodes",
        ),
        col(
            "gnci",
            Get::OptF64(|m| m.gnci),
            "max degree / mean degree (0 when the mean is 0)",
        ),
        col(
            "communities",
            Get::U32(|m| m.communities),
            "Louvain communities, singletons included",
        ),
        col(
            "named_communities",
            Get::U32(|m| m.named_communities),
            "communities with a majority label",
        ),
        col(
            "cfi",
            Get::OptF64(|m| m.cfi),
            "communities / named communities (communities when none is named)",
        ),
        col(
            "rscore",
            Get::OptF64(|m| m.rscore),
            "1 − (TLIS + min(GNCI/40,1) + min(CFI/20,1)) / 3",
        ),
        col(
            "risk",
            Get::Str(|m| &m.risk),
            "high (RScore < 0.4) | ok | empty",
        ),
        col(
            "failure_modes",
            Get::StrList(|m| strs(&m.failure_modes)),
            "isolation | god-node | fragmentation | structural-collapse",
        ),
        col(
            "god_nodes",
            Get::StrList(|m| strs(&m.god_nodes)),
            "nodes with degree > 3 × mean: `id (degree)`",
        ),
    ],
};

/// `communities` (measure): Louvain communities per scope.
pub static COMMUNITIES: Table<CommunityRow> = Table {
    name: "communities",
    doc: "one row per community of each scope, largest first",
    columns: &[
        col(
            "scope",
            Get::Str(|c| &c.scope),
            "`(all)` or a registry name",
        ),
        col(
            "community",
            Get::U32(|c| c.community),
            "number within the scope",
        ),
        col("size", Get::U32(|c| c.size), "members"),
        col(
            "label",
            Get::OptStr(|c| c.label.as_deref()),
            "the community's name: type:<capability>, else a majority tag:/category:/stem:/dir: label; null when unnamed",
        ),
        col(
            "support",
            Get::OptF64(|c| c.support),
            "the label's support, 0–1 (docs/metrics.md)",
        ),
        col(
            "members",
            Get::StrList(|c| strs(&c.members)),
            "member skill ids",
        ),
    ],
};

/// All tables `skg measure` writes.
pub static MEASURE_TABLES: &[&dyn TableSpec] = &[&METRICS, &COMMUNITIES];

/// `findings` (scan): one row per security finding.
pub static FINDINGS: Table<Finding> = Table {
    name: "findings",
    doc: "one row per security finding: rule, category, severity after context, confidence, path:line, evidence and the context that lowered or raised it (rules: SECURITY.md)",
    columns: &[
        col(
            "skill_id",
            Get::Str(|f| f.skill_id.as_str()),
            "package id `<registry>:<root>` (the skill's id when it is a skill)",
        ),
        col("rule", Get::Str(|f| &f.rule), "rule id `SKG-…`"),
        col(
            "category",
            Get::Str(|f| f.category.as_str()),
            "prompt-injection, exfiltration, credential-access, remote-execution, reverse-shell, persistence, defense-evasion, privilege-escalation, obfuscation, crypto-mining, supply-chain, deception",
        ),
        col(
            "severity",
            Get::Str(|f| f.severity.as_str()),
            "low | medium | high | critical, after context",
        ),
        col(
            "base_severity",
            Get::Str(|f| f.base_severity.as_str()),
            "the rule's severity before context",
        ),
        col(
            "confidence",
            Get::F64(|f| f.confidence),
            "how sure the rule is (0–1)",
        ),
        col(
            "path",
            Get::Str(|f| &f.path),
            "file relative to the registry folder",
        ),
        col("line", Get::U32(|f| f.line), "1-based line"),
        col(
            "snippet",
            Get::Str(|f| &f.snippet),
            "the evidence, one line, at most 200 characters",
        ),
        col("message", Get::Str(|f| &f.message), "what was found"),
        col(
            "context",
            Get::StrList(|f| strs(&f.context)),
            "what lowered or raised the severity (`lowered: …`, `raised: …`)",
        ),
        col(
            "file_hash",
            Get::Str(|f| &f.file_hash),
            "blake3 of the file's text (acknowledgements hold while it is unchanged)",
        ),
        col(
            "acknowledged",
            Get::Bool(|f| f.acknowledged),
            "acknowledged in the allow file (same rule, path and file hash): left out of the verdict",
        ),
        col(
            "entry_line",
            Get::OptU32(|f| f.entry_line),
            "a catalog's tool: the catalog file's line where its entry is, when known (`line` is then a line of the tool's text); null for a package file",
        ),
        col(
            "entry_column",
            Get::OptU32(|f| f.entry_column),
            "a catalog's tool in a JSON or YAML document: the column (1-based, in characters) of its entry on `entry_line`; null otherwise",
        ),
    ],
};

/// `verdicts` (scan): one row per package scanned.
pub static VERDICTS: Table<Verdict> = Table {
    name: "verdicts",
    doc: "one row per package scanned: safe | suspicious | unsafe, the score (noisy-or of severity weight × confidence over its findings) and the rules that fired",
    columns: &[
        col("skill_id", Get::Str(|v| v.skill_id.as_str()), "package id"),
        col("registry", Get::Str(|v| &v.registry), "registry name"),
        col(
            "verdict",
            Get::Str(|v| v.verdict.as_str()),
            "safe | suspicious | unsafe",
        ),
        col(
            "score",
            Get::F64(|v| v.score),
            "1 − Π(1 − weight(severity) × confidence) over the findings",
        ),
        col(
            "findings",
            Get::U32(|v| v.findings),
            "findings, all severities",
        ),
        col(
            "rules",
            Get::StrList(|v| strs(&v.rules)),
            "rules that fired, sorted",
        ),
        col(
            "top",
            Get::Str(|v| &v.top),
            "the strongest finding: `rule severity: message`",
        ),
    ],
};

/// All tables `skg scan` writes.
pub static SCAN_TABLES: &[&dyn TableSpec] = &[&FINDINGS, &VERDICTS];

/// All tables `skg canonicalize` writes, in order (its `edges` table has the `EDGES` columns and
/// holds only `duplicate_of` / `variant_of`).
pub static CANON_TABLES: &[&dyn TableSpec] = &[
    &MEMBERS,
    &CLUSTERS,
    &ALIASES,
    &CANONICAL_SKILLS,
    &CAPABILITIES,
    &EDGES,
];

/// All tables `skg extract` writes, in order.
pub static EXTRACT_TABLES: &[&dyn TableSpec] = &[&SKILLS, &DOCUMENTS, &EDGES, &DIAGNOSTICS];

/// Every stage's tables, in pipeline order.
pub static STAGES: &[(Stage, &[&dyn TableSpec])] = &[
    (Stage::Extract, EXTRACT_TABLES),
    (Stage::Scan, SCAN_TABLES),
    (Stage::Canonicalize, CANON_TABLES),
    (Stage::Score, SCORE_TABLES),
    (Stage::Measure, MEASURE_TABLES),
];

/// The schema as markdown (for `skg schema`), one section per stage.
pub fn markdown(stages: &[(Stage, &[&dyn TableSpec])]) -> String {
    use std::fmt::Write as _;
    let mut s = format!(
        "# skg table schema (version {})\n\n",
        skg_model::SCHEMA_VERSION
    );
    for (stage, tables) in stages {
        let _ = write!(s, "# `skg {stage}` → `reports/{stage}/`\n\n");
        for t in *tables {
            let _ = write!(
                s,
                "## `{}`\n\n{}.\n\n| column | type | meaning |\n|---|---|---|\n",
                t.name(),
                t.doc()
            );
            for c in t.columns() {
                let _ = writeln!(s, "| `{}` | {} | {} |", c.name, c.ty.as_str(), c.doc);
            }
            s.push('\n');
        }
    }
    s
}
