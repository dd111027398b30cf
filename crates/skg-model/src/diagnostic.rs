//! Problems found while reading a registry. Reading never aborts on one bad file: every problem
//! becomes a [`Diagnostic`] with registry, path and line.

use std::fmt;

use serde::{Deserialize, Serialize};

use crate::RegistryName;

/// How bad a problem is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Severity {
    /// Worth knowing; nothing was lost.
    Info,
    /// Data was repaired or guessed (a fix is advised).
    Warning,
    /// Data could not be read as written; what could be salvaged was kept.
    Error,
}

impl Severity {
    /// The snake_case name used in tables.
    pub fn as_str(self) -> &'static str {
        match self {
            Severity::Info => "info",
            Severity::Warning => "warning",
            Severity::Error => "error",
        }
    }
}

/// Stable diagnostic codes, named after the pattern flagged (not the fix).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum DiagnosticCode {
    /// `SKILL.md` has no frontmatter block.
    FrontmatterMissing,
    /// `key: value` lines at the top of the file without `---` delimiters.
    FrontmatterUndelimited,
    /// The opening `---` is never closed.
    FrontmatterUnclosed,
    /// The frontmatter is valid YAML but not a mapping.
    FrontmatterNotMapping,
    /// A plain scalar value contains `: ` (e.g. `description: Use when: …`).
    YamlUnquotedColon,
    /// A flow collection (`[…]`, `{…}`) is unbalanced or followed by text (`argument-hint: [a] [b]`).
    YamlBrokenFlow,
    /// A plain value starts with a character YAML reserves (`` ` ``, `@`, `,`, `%`, `|`…).
    YamlReservedIndicator,
    /// Git merge-conflict markers inside the frontmatter.
    YamlMergeConflict,
    /// A control character YAML does not allow.
    YamlControlCharacter,
    /// A tab used for indentation.
    YamlTabIndent,
    /// The same key twice.
    YamlDuplicateKey,
    /// A line without `key:` inside a mapping (continuation or missing colon).
    YamlOrphanLine,
    /// Any other YAML syntax error.
    YamlSyntax,
    /// No `name`: the folder name is used.
    NameMissing,
    /// `name` is not spec-valid kebab-case (`^[a-z0-9]+(-[a-z0-9]+)*$`, ≤ 64 chars).
    NameNotKebab,
    /// `name` differs from the skill folder's name.
    NameFolderMismatch,
    /// No or empty `description`.
    DescriptionMissing,
    /// `description` longer than the spec's 1,024 characters.
    DescriptionTooLong,
    /// Bytes that are not UTF-8: in a file (replaced by U+FFFD), or in a path (shown as `\xNN`;
    /// two paths that would show alike are named, the second not read).
    InvalidUtf8,
    /// A file that is not text (NUL bytes) where markdown or a script was expected.
    BinaryFile,
    /// A file larger than the configured limit: read up to the limit.
    FileTooLarge,
    /// A symbolic link cycle.
    SymlinkLoop,
    /// A symbolic link pointing outside the registry root (not followed).
    SymlinkEscape,
    /// More files in a registry than the configured limit.
    TooManyFiles,
    /// A file or folder that could not be read.
    Io,
    /// A relative link to a file that does not exist.
    BrokenLink,
    /// A script that tree-sitter could not parse cleanly (facts may be partial).
    ScriptSyntax,
    /// A script whose parse went over the time budget per file (`--max-parse-ms`): no facts.
    ScriptTimeout,
    /// A tool catalog entry without a usable name, or a catalog that is not JSON/JSONL.
    CatalogInvalid,
    /// Two skills with the same id in one registry (the later one is renamed).
    DuplicateSkill,
    /// A git source could not be read at its revision.
    GitSource,
}

impl DiagnosticCode {
    /// The kebab-case code used in tables and messages.
    pub fn as_str(self) -> &'static str {
        match self {
            DiagnosticCode::FrontmatterMissing => "frontmatter-missing",
            DiagnosticCode::FrontmatterUndelimited => "frontmatter-undelimited",
            DiagnosticCode::FrontmatterUnclosed => "frontmatter-unclosed",
            DiagnosticCode::FrontmatterNotMapping => "frontmatter-not-mapping",
            DiagnosticCode::YamlUnquotedColon => "yaml-unquoted-colon",
            DiagnosticCode::YamlBrokenFlow => "yaml-broken-flow",
            DiagnosticCode::YamlReservedIndicator => "yaml-reserved-indicator",
            DiagnosticCode::YamlMergeConflict => "yaml-merge-conflict",
            DiagnosticCode::YamlControlCharacter => "yaml-control-character",
            DiagnosticCode::YamlTabIndent => "yaml-tab-indent",
            DiagnosticCode::YamlDuplicateKey => "yaml-duplicate-key",
            DiagnosticCode::YamlOrphanLine => "yaml-orphan-line",
            DiagnosticCode::YamlSyntax => "yaml-syntax",
            DiagnosticCode::NameMissing => "name-missing",
            DiagnosticCode::NameNotKebab => "name-not-kebab",
            DiagnosticCode::NameFolderMismatch => "name-folder-mismatch",
            DiagnosticCode::DescriptionMissing => "description-missing",
            DiagnosticCode::DescriptionTooLong => "description-too-long",
            DiagnosticCode::InvalidUtf8 => "invalid-utf8",
            DiagnosticCode::BinaryFile => "binary-file",
            DiagnosticCode::FileTooLarge => "file-too-large",
            DiagnosticCode::SymlinkLoop => "symlink-loop",
            DiagnosticCode::SymlinkEscape => "symlink-escape",
            DiagnosticCode::TooManyFiles => "too-many-files",
            DiagnosticCode::Io => "io",
            DiagnosticCode::BrokenLink => "broken-link",
            DiagnosticCode::ScriptSyntax => "script-syntax",
            DiagnosticCode::ScriptTimeout => "script-timeout",
            DiagnosticCode::CatalogInvalid => "catalog-invalid",
            DiagnosticCode::DuplicateSkill => "duplicate-skill",
            DiagnosticCode::GitSource => "git-source",
        }
    }

    /// True for the codes that describe a frontmatter block that is not valid YAML.
    pub fn is_yaml_failure(self) -> bool {
        matches!(
            self,
            DiagnosticCode::FrontmatterUnclosed
                | DiagnosticCode::FrontmatterNotMapping
                | DiagnosticCode::YamlUnquotedColon
                | DiagnosticCode::YamlBrokenFlow
                | DiagnosticCode::YamlReservedIndicator
                | DiagnosticCode::YamlMergeConflict
                | DiagnosticCode::YamlControlCharacter
                | DiagnosticCode::YamlTabIndent
                | DiagnosticCode::YamlDuplicateKey
                | DiagnosticCode::YamlOrphanLine
                | DiagnosticCode::YamlSyntax
        )
    }
}

impl fmt::Display for DiagnosticCode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// One problem, located. One row of the `diagnostics` table.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
pub struct Diagnostic {
    /// The registry being read.
    pub registry: RegistryName,
    /// The file, relative to the registry root (`.` for the registry itself).
    pub path: String,
    /// 1-based line, when the problem has one.
    pub line: Option<u32>,
    /// How bad it is.
    pub severity: Severity,
    /// Stable code.
    pub code: DiagnosticCode,
    /// What is wrong and what was done about it.
    pub message: String,
}

impl fmt::Display for Diagnostic {
    /// `registry/path:line: severity[code]: message`, the shape editors and CI logs link.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let sev = self.severity.as_str();
        write!(f, "{}/{}", self.registry, self.path)?;
        if let Some(line) = self.line {
            write!(f, ":{line}")?;
        }
        write!(f, ": {sev}[{}]: {}", self.code, self.message)
    }
}
