//! A skill: one package of a registry (or one tool of a catalog), normalized.

use std::fmt;

use serde::{Deserialize, Serialize};

use crate::{RegistryName, SkillId};

/// What kind of package a skill row was made from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum SkillKind {
    /// A folder with a `SKILL.md`.
    Skill,
    /// A tool from a JSON/JSONL tool catalog.
    Tool,
}

/// How the frontmatter of a `SKILL.md` was read.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum FrontmatterStatus {
    /// Strict YAML parse succeeded.
    Ok,
    /// Strict parse failed; a repaired copy parsed (every value kept).
    Repaired,
    /// Strict and repaired parses failed; simple top-level keys were salvaged line by line.
    Salvaged,
    /// No frontmatter at all.
    Missing,
    /// Not applicable (tool catalogs carry JSON, not YAML).
    NotApplicable,
}

impl FrontmatterStatus {
    /// The snake_case name used in tables.
    pub fn as_str(self) -> &'static str {
        match self {
            FrontmatterStatus::Ok => "ok",
            FrontmatterStatus::Repaired => "repaired",
            FrontmatterStatus::Salvaged => "salvaged",
            FrontmatterStatus::Missing => "missing",
            FrontmatterStatus::NotApplicable => "not_applicable",
        }
    }
}

/// The frontmatter as read, kept whole.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Frontmatter {
    /// How it was read.
    pub status: FrontmatterStatus,
    /// The whole frontmatter mapping as compact JSON (keys sorted), `{}` when missing.
    pub json: String,
    /// Top-level keys, sorted.
    pub keys: Vec<String>,
}

/// Environment needs declared by a skill (never skill-to-skill edges).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Requires {
    /// Executables on `PATH` (`metadata.*.requires.bins`, `anyBins`).
    pub bins: Vec<String>,
    /// Environment variables (`requires.env`, `requiredEnv`).
    pub env: Vec<String>,
    /// MCP servers (`requires.mcp`).
    pub mcp: Vec<String>,
    /// Packages (`dependencies`, `requires.packages`, `pip`/`npm` lists).
    pub packages: Vec<String>,
}

impl Requires {
    /// True when nothing is required.
    pub fn is_empty(&self) -> bool {
        self.bins.is_empty()
            && self.env.is_empty()
            && self.mcp.is_empty()
            && self.packages.is_empty()
    }
}

/// Agent platforms a skill gives hints for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Platform {
    /// Anthropic's Claude Code (allowed-tools, argument-hint, user-invocable, …).
    ClaudeCode,
    /// OpenAI Codex.
    Codex,
    /// Google Gemini CLI.
    Gemini,
    /// Cursor.
    Cursor,
    /// GitHub Copilot.
    Copilot,
    /// OpenClaw / clawdbot / moltbot.
    Openclaw,
    /// Needs or exposes an MCP server.
    Mcp,
}

impl Platform {
    /// The kebab-case name used in tables.
    pub fn as_str(self) -> &'static str {
        match self {
            Platform::ClaudeCode => "claude-code",
            Platform::Codex => "codex",
            Platform::Gemini => "gemini",
            Platform::Cursor => "cursor",
            Platform::Copilot => "copilot",
            Platform::Openclaw => "openclaw",
            Platform::Mcp => "mcp",
        }
    }
}

/// Risk tier: what running the skill may do. Ordered from least to most risky; the tier of a
/// skill is the highest tier any rule assigns (rules: `ARCHITECTURE.md`, `skg-extract/src/manifest.rs`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum RiskTier {
    /// Reads and writes text only.
    Safe,
    /// Talks to the network (web tools, APIs, MCP servers).
    Network,
    /// Runs programs (shell tools, scripts, required binaries).
    Exec,
    /// Runs programs with credentials or unrestricted shell plus network.
    Critical,
    /// Dangerous: `skg scan`'s verdict (malicious or unsafe instructions, code or configuration),
    /// applied by `skg audit`; quarantined from routing and never a canonical.
    Unsafe,
}

impl RiskTier {
    /// The snake_case name used in tables.
    pub fn as_str(self) -> &'static str {
        match self {
            RiskTier::Safe => "safe",
            RiskTier::Network => "network",
            RiskTier::Exec => "exec",
            RiskTier::Critical => "critical",
            RiskTier::Unsafe => "unsafe",
        }
    }
}

impl fmt::Display for RiskTier {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// The structural fingerprint of one script of a package: a hash of its syntax tree (tree-sitter
/// grammars) or of its comment-free token stream (other languages) in which identifiers are
/// alpha-renamed and comments, string contents and formatting are ignored. Two scripts with the
/// same `hash` are the same program up to naming.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub struct ScriptStructure {
    /// The script, relative to the skill root.
    pub path: String,
    /// 32 hex characters.
    pub hash: String,
    /// Tokens hashed: how much code the hash stands for.
    pub tokens: u32,
}

/// One skill, normalized from its package. One row of the `skills` table.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Skill {
    /// `<registry>:<root>`.
    pub id: SkillId,
    /// The registry it was read from.
    pub registry: RegistryName,
    /// Skill folder or catalog tool.
    pub kind: SkillKind,
    /// The `SKILL.md` path relative to the registry root (catalog: `<file>#<tool name>`).
    pub path: String,
    /// The skill folder relative to the registry root (`.` for a registry that is one skill).
    pub root: String,
    /// The skill folder's own name (last component of `root`).
    pub folder: String,
    /// The name as declared (`name`), else `slug`, else the folder name.
    pub name: String,
    /// Kebab-case routing key: `name` when spec-valid, else a valid `slug`, else `name` kebab-cased.
    pub slug: String,
    /// `name` is spec-valid: `^[a-z0-9]+(-[a-z0-9]+)*$`, at most 64 characters.
    pub name_valid: bool,
    /// `slug` equals the folder name.
    pub name_matches_folder: bool,
    /// The description as declared; empty when missing.
    pub description: String,
    /// `when_to_use` from frontmatter, a "Use when …" sentence of the description, or a
    /// "When to use" section of the body.
    pub when_to_use: Option<String>,
    /// `when_not_to_use` / `not_for` from frontmatter, or a "When not to use" section.
    pub when_not_to_use: Option<String>,
    /// Tags from top-level `tags`/`keywords` and `metadata.tags`: lowercase, sorted, unique.
    pub tags: Vec<String>,
    /// `category` (top level or `metadata.category`).
    pub category: Option<String>,
    /// `allowed-tools`, one entry per tool, in declared order.
    pub allowed_tools: Vec<String>,
    /// `version` (top level or `metadata.version`).
    pub version: Option<String>,
    /// `license`/`licence`.
    pub license: Option<String>,
    /// Declared environment needs.
    pub requires: Requires,
    /// Declared capability inputs (`inputs`), names only.
    pub inputs: Vec<String>,
    /// Declared capability outputs (`outputs`), names only.
    pub outputs: Vec<String>,
    /// Platform hints, sorted.
    pub platforms: Vec<Platform>,
    /// Derived risk tier.
    pub risk_tier: RiskTier,
    /// Why that tier: one short reason per rule that fired, sorted.
    pub risk_reasons: Vec<String>,
    /// Primary capability type (an id of extract's taxonomy, `docs/capabilities.md`), or
    /// `unknown`.
    #[serde(default = "unknown_capability")]
    pub capability: String,
    /// The type's share of the evidence that named it, 0–1: of the word evidence in extract's
    /// `skills`; in `canonical_skills` and the audit's `skills`, of the word evidence or — for a
    /// type the embedding named (`capabilities.evidence`) — of the type prototypes' softmax mass.
    #[serde(default)]
    pub capability_confidence: f64,
    /// The frontmatter, kept whole.
    pub frontmatter: Frontmatter,
    /// The markdown body after the frontmatter (LF line endings, no BOM).
    pub body: String,
    /// Line of `SKILL.md` on which `body` starts (1-based).
    pub body_line: u32,
    /// Other files of the package, relative to `root`, sorted.
    pub files: Vec<String>,
    /// The subset of `files` that are scripts (by extension or shebang).
    pub scripts: Vec<String>,
    /// Structural fingerprint of every script in `scripts` that could be read, same order.
    pub script_structures: Vec<ScriptStructure>,
    /// Size of `SKILL.md` in bytes.
    pub bytes: u64,
    /// blake3 over every file of the package (paths and bytes), hex.
    pub content_hash: String,
}

fn unknown_capability() -> String {
    "unknown".to_owned()
}

impl Skill {
    /// A skill row made from text alone, for generated corpora, tests and benchmarks: every field
    /// extract would derive is left neutral (strict frontmatter, `safe`, no files, no tags, empty
    /// content hash); `path` is `<root>/SKILL.md`, `folder` the last component of `root`.
    pub fn from_text(
        registry: &str,
        root: &str,
        name: &str,
        description: &str,
        body: &str,
    ) -> Skill {
        let registry = RegistryName::from(registry);
        Skill {
            id: SkillId::new(&registry, root),
            registry,
            kind: SkillKind::Skill,
            path: format!("{root}/SKILL.md"),
            root: root.to_owned(),
            folder: root.rsplit('/').next().unwrap_or(root).to_owned(),
            name: name.to_owned(),
            slug: name.to_owned(),
            name_valid: true,
            name_matches_folder: true,
            description: description.to_owned(),
            when_to_use: None,
            when_not_to_use: None,
            tags: Vec::new(),
            category: None,
            allowed_tools: Vec::new(),
            version: None,
            license: None,
            requires: Requires::default(),
            inputs: Vec::new(),
            outputs: Vec::new(),
            platforms: Vec::new(),
            risk_tier: RiskTier::Safe,
            risk_reasons: Vec::new(),
            capability: unknown_capability(),
            capability_confidence: 0.0,
            frontmatter: Frontmatter {
                status: FrontmatterStatus::Ok,
                json: "{}".into(),
                keys: vec!["description".into(), "name".into()],
            },
            body: body.to_owned(),
            body_line: 5,
            files: Vec::new(),
            scripts: Vec::new(),
            script_structures: Vec::new(),
            bytes: body.len() as u64,
            content_hash: String::new(),
        }
    }
}
