//! Table declarations: every column's name, type, source field and meaning.
//!
//! `path` is where the value sits in the row's serde JSON form: dotted keys, numeric segments
//! index lists (`evidence.0.line`). Bump [`skg_model::SCHEMA_VERSION`] on any change here.

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
            ColumnType::Bool => "bool",
            ColumnType::StrList => "list<string>",
            ColumnType::Json => "string (JSON)",
        }
    }
}

/// One column.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ColumnSpec {
    /// Column name.
    pub name: &'static str,
    /// Where the value comes from in the row.
    pub path: &'static str,
    /// Type.
    pub ty: ColumnType,
    /// What it means.
    pub doc: &'static str,
}

/// One table.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TableSpec {
    /// Table name (file stem).
    pub name: &'static str,
    /// What a row is.
    pub doc: &'static str,
    /// Columns, in order.
    pub columns: &'static [ColumnSpec],
}

const fn c(
    name: &'static str,
    path: &'static str,
    ty: ColumnType,
    doc: &'static str,
) -> ColumnSpec {
    ColumnSpec {
        name,
        path,
        ty,
        doc,
    }
}

use ColumnType::{Bool, F64, Json, OptStr, OptU32, Str, StrList, U32, U64};

/// `skills`: one row per skill (or catalog tool).
pub const SKILLS: TableSpec = TableSpec {
    name: "skills",
    doc: "one row per skill package (or tool of a catalog), normalized",
    columns: &[
        c("id", "id", Str, "`<registry>:<root>`"),
        c("registry", "registry", Str, "registry name"),
        c("kind", "kind", Str, "`skill` or `tool`"),
        c(
            "path",
            "path",
            Str,
            "SKILL.md relative to the registry root (tools: `<file>#<name>`)",
        ),
        c(
            "root",
            "root",
            Str,
            "skill folder relative to the registry root",
        ),
        c("folder", "folder", Str, "the skill folder's own name"),
        c(
            "name",
            "name",
            Str,
            "name as declared (else slug, else folder)",
        ),
        c("slug", "slug", Str, "kebab-case routing key"),
        c(
            "name_valid",
            "name_valid",
            Bool,
            "name is spec-valid kebab-case, ≤ 64 chars",
        ),
        c(
            "name_matches_folder",
            "name_matches_folder",
            Bool,
            "slug equals the folder name",
        ),
        c(
            "description",
            "description",
            Str,
            "description as declared (empty when missing)",
        ),
        c(
            "when_to_use",
            "when_to_use",
            OptStr,
            "frontmatter, a 'Use when' sentence, or a 'When to use' section",
        ),
        c(
            "when_not_to_use",
            "when_not_to_use",
            OptStr,
            "frontmatter, a 'Do not use' sentence, or a 'When not to use' section",
        ),
        c("tags", "tags", StrList, "lowercase, sorted, unique"),
        c(
            "category",
            "category",
            OptStr,
            "category (top level or metadata)",
        ),
        c(
            "allowed_tools",
            "allowed_tools",
            StrList,
            "allowed-tools entries",
        ),
        c(
            "version",
            "version",
            OptStr,
            "version (top level or metadata)",
        ),
        c("license", "license", OptStr, "license/licence"),
        c(
            "requires_bins",
            "requires.bins",
            StrList,
            "required executables",
        ),
        c(
            "requires_env",
            "requires.env",
            StrList,
            "required environment variables",
        ),
        c(
            "requires_mcp",
            "requires.mcp",
            StrList,
            "required MCP servers",
        ),
        c(
            "requires_packages",
            "requires.packages",
            StrList,
            "required packages",
        ),
        c("inputs", "inputs", StrList, "declared capability inputs"),
        c("outputs", "outputs", StrList, "declared capability outputs"),
        c(
            "platforms",
            "platforms",
            StrList,
            "platform hints (claude-code, codex, gemini, cursor, copilot, openclaw, mcp)",
        ),
        c(
            "risk_tier",
            "risk_tier",
            Str,
            "safe | network | exec | critical | unsafe",
        ),
        c(
            "risk_reasons",
            "risk_reasons",
            StrList,
            "`tier: reason` per rule that fired",
        ),
        c(
            "frontmatter_status",
            "frontmatter.status",
            Str,
            "ok | repaired | salvaged | missing | not_applicable",
        ),
        c(
            "frontmatter_json",
            "frontmatter.json",
            Str,
            "the whole frontmatter as compact JSON",
        ),
        c(
            "frontmatter_keys",
            "frontmatter.keys",
            StrList,
            "top-level frontmatter keys",
        ),
        c("body", "body", Str, "markdown body after the frontmatter"),
        c(
            "body_line",
            "body_line",
            U32,
            "line of SKILL.md where the body starts",
        ),
        c(
            "files",
            "files",
            StrList,
            "other files of the package, relative to root",
        ),
        c("scripts", "scripts", StrList, "script files among them"),
        c("bytes", "bytes", U64, "size of SKILL.md"),
        c(
            "content_hash",
            "content_hash",
            Str,
            "blake3 over every file of the package",
        ),
    ],
};

/// `documents`: L0/L1/L2 search documents.
pub const DOCUMENTS: TableSpec = TableSpec {
    name: "documents",
    doc: "one row per search document: L0 abstract, L1 overview, L2 section (chunked)",
    columns: &[
        c(
            "id",
            "id",
            Str,
            "`<skill>#L0`, `<skill>#L1`, `<skill>#L2:<file>:<ordinal>[.<chunk>]`",
        ),
        c("skill", "skill", Str, "skill id"),
        c("registry", "registry", Str, "registry name"),
        c("level", "level", U32, "0, 1 or 2"),
        c(
            "file",
            "file",
            Str,
            "markdown file relative to the skill root",
        ),
        c(
            "heading_path",
            "heading_path",
            StrList,
            "headings from the top of the file to the section",
        ),
        c("ordinal", "ordinal", U32, "section position in its file"),
        c("chunk", "chunk", U32, "chunk of a long section"),
        c("line_start", "line_start", U32, "first line in the file"),
        c("line_end", "line_end", U32, "last line in the file"),
        c("title", "title", Str, "skill name or section heading"),
        c("text", "text", Str, "text to index"),
    ],
};

/// `edges`: typed relations.
pub const EDGES: TableSpec = TableSpec {
    name: "edges",
    doc: "one row per (src, dst, kind); the best evidence decides confidence, source and extractor",
    columns: &[
        c("src", "src", Str, "skill id that points"),
        c("dst", "dst", Str, "skill id pointed at"),
        c(
            "kind",
            "kind",
            Str,
            "depends_on | complements | co_used_with | references | duplicate_of | variant_of",
        ),
        c("confidence", "confidence", F64, "0–1"),
        c("source", "source", Str, "EXTRACTED | INFERRED | AMBIGUOUS"),
        c(
            "extractor",
            "extractor",
            Str,
            "extractor of the best evidence",
        ),
        c(
            "evidence_path",
            "evidence.0.path",
            Str,
            "best evidence: file relative to the source registry root",
        ),
        c(
            "evidence_line",
            "evidence.0.line",
            U32,
            "best evidence: line",
        ),
        c(
            "evidence_snippet",
            "evidence.0.snippet",
            Str,
            "best evidence: the line",
        ),
        c(
            "evidence",
            "evidence",
            Json,
            "all evidence, best first: [{extractor, confidence, source, path, line, snippet}]",
        ),
    ],
};

/// `diagnostics`: problems found while reading.
pub const DIAGNOSTICS: TableSpec = TableSpec {
    name: "diagnostics",
    doc: "one row per problem found while reading a registry",
    columns: &[
        c("registry", "registry", Str, "registry name"),
        c("path", "path", Str, "file relative to the registry root"),
        c("line", "line", OptU32, "1-based line, when known"),
        c("severity", "severity", Str, "info | warning | error"),
        c("code", "code", Str, "stable kebab-case code"),
        c("message", "message", Str, "what is wrong and what was done"),
    ],
};

/// All tables `skg extract` writes, in order.
pub const EXTRACT_TABLES: &[&TableSpec] = &[&SKILLS, &DOCUMENTS, &EDGES, &DIAGNOSTICS];

/// The schema as markdown (for `skg schema`).
pub fn markdown(tables: &[&TableSpec]) -> String {
    use std::fmt::Write as _;
    let mut s = format!(
        "# skg table schema (version {})\n\n",
        skg_model::SCHEMA_VERSION
    );
    for t in tables {
        let _ = write!(
            s,
            "## `{}`\n\n{}.\n\n| column | type | meaning |\n|---|---|---|\n",
            t.name, t.doc
        );
        for col in t.columns {
            let _ = writeln!(s, "| `{}` | {} | {} |", col.name, col.ty.as_str(), col.doc);
        }
        s.push('\n');
    }
    s
}
