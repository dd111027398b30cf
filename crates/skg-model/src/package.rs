//! A package's files as text: what the security scan reads (it never reads the disk itself).

use serde::{Deserialize, Serialize};

use crate::{RegistryName, SkillId, SkillKind};

/// One text file of a package.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct FileText {
    /// The path relative to the registry root (`/`-separated), as findings cite it.
    pub path: String,
    /// The text (BOM removed, line endings normalized to `\n`; cut at the file-size limit).
    pub text: String,
}

/// The text files of one package: a skill folder (its `SKILL.md` first), a folder holding
/// only an MCP server config (`.mcp.json`), which is not a skill but is scanned like one, or one
/// tool of a tool catalog (its one file is the text extract writes for it: the description, then
/// the parameters' and results' descriptions, at the path `<catalog file>#<tool>`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PackageText {
    /// `<registry>:<root>` (the skill's id when the package is a skill).
    pub id: SkillId,
    /// The registry it was read from.
    pub registry: RegistryName,
    /// The package folder relative to the registry root.
    pub root: String,
    /// Its text files, sorted by path, the package's main file (`SKILL.md`, else the MCP
    /// config) first. Binary and unreadable files are left out (a diagnostic says so).
    pub files: Vec<FileText>,
    /// The `name` its `SKILL.md` frontmatter declares (read by extract's frontmatter reader,
    /// repairs included), when it declares one.
    pub name: Option<String>,
    /// The `description` its frontmatter declares, when it declares one.
    pub description: Option<String>,
    /// A skill folder (or an MCP config's folder), or a catalog's tool.
    #[serde(default = "skill_kind")]
    pub kind: SkillKind,
    /// A catalog's tool: the catalog file's line where its entry is (a JSONL entry's line; in a
    /// JSON document the line of the entry's own `name` key; in an OpenAPI document, JSON or
    /// YAML, of the operation's method key where it was read — under the item a `$ref` path item
    /// refers to), when extract could tell; `None` for a package folder.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub entry_line: Option<u32>,
    /// A catalog's tool in a JSON or YAML document: the column (1-based, in characters) of the
    /// key on [`Self::entry_line`] — what locates a tool in a document written on one line.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub entry_column: Option<u32>,
    /// A catalog's tool: its parameters and results as extract lists them in its text, in
    /// order, and those a long schema leaves out of the text; empty for a package folder.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub parameters: Vec<ToolParameter>,
}

/// A property of a tool's input or output schema: what the model reads and fills by name.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ToolParameter {
    /// Its name as written in the schema; a nested property's is its path (`parent.child`,
    /// `items[].child`).
    pub name: String,
    /// Its type as extract writes it (`string`, `boolean`, `string | null`, `object`, …).
    pub kind: String,
    /// It takes one of listed values (`enum`).
    pub choice: bool,
    /// The line of the tool's text that lists it (1-based); for one a long schema leaves out,
    /// the line saying how many were left out.
    pub line: u32,
}

fn skill_kind() -> SkillKind {
    SkillKind::Skill
}

/// The path findings and documents cite for a catalog's tool: `<catalog file name>#<tool>`.
pub fn tool_path(file: &str, tool: &str) -> String {
    format!("{file}#{tool}")
}

/// A tool's path ([`tool_path`]) → (catalog file, tool); `None` for a package file's path. A
/// catalog's file name holds no `/` (it is a file name) and no `#` (the first one ends it).
pub fn split_tool_path(path: &str) -> Option<(&str, &str)> {
    let (file, tool) = path.split_once('#')?;
    (!file.is_empty() && !file.contains('/') && !tool.is_empty()).then_some((file, tool))
}

/// What a package file is by its name, as the scan reads it: which parser runs on it, whether
/// it is a script, and whether it is text an agent host shows the model or a shell runs (read as
/// text even when a NUL byte makes it look binary). One table for extract and scan.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FileKind {
    /// `.md`, `.markdown`, `.mdx`.
    Markdown,
    /// `.sh`, `.bash`, `.zsh`, `.ksh`.
    Shell,
    /// `.py`.
    Python,
    /// `.js`, `.mjs`, `.cjs`, `.jsx`.
    JavaScript,
    /// `.ts`, `.mts`, `.cts`.
    TypeScript,
    /// `.ps1`.
    PowerShell,
    /// Scripts without a grammar in the scan: `.rb`, `.pl`, `.pm`, `.php` (read lexically),
    /// `.bat`, `.cmd` (for blobs only).
    OtherScript,
    /// Text and configuration: `.txt`, `.json`, `.yaml`, `.yml`, `.toml`.
    Text,
    /// Anything else.
    Other,
}

impl FileKind {
    /// The kind of the file at `path` (`/`-separated), by its extension, any case.
    pub fn of(path: &str) -> FileKind {
        let name = path.rsplit('/').next().unwrap_or(path);
        let Some((_, ext)) = name.rsplit_once('.') else {
            return FileKind::Other;
        };
        match ext.to_ascii_lowercase().as_str() {
            "md" | "markdown" | "mdx" => FileKind::Markdown,
            "sh" | "bash" | "zsh" | "ksh" => FileKind::Shell,
            "py" => FileKind::Python,
            "js" | "mjs" | "cjs" | "jsx" => FileKind::JavaScript,
            "ts" | "mts" | "cts" => FileKind::TypeScript,
            "ps1" => FileKind::PowerShell,
            "rb" | "pl" | "pm" | "php" | "bat" | "cmd" => FileKind::OtherScript,
            "txt" | "json" | "yaml" | "yml" | "toml" => FileKind::Text,
            _ => FileKind::Other,
        }
    }

    /// A script by its name (a file starting with `#!` is one too, whatever its name).
    pub fn is_script(self) -> bool {
        matches!(
            self,
            FileKind::Shell
                | FileKind::Python
                | FileKind::JavaScript
                | FileKind::TypeScript
                | FileKind::PowerShell
                | FileKind::OtherScript
        )
    }

    /// Text by its name: markdown, a script, text or configuration.
    pub fn is_text(self) -> bool {
        self != FileKind::Other
    }
}
