//! Searchable documents at three levels of detail.

use serde::{Deserialize, Serialize};

use crate::{DocId, RegistryName, SkillId};

/// Level of detail, as in OpenViking's L0/L1/L2.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(into = "u8", try_from = "u8")]
pub enum Level {
    /// Abstract: name, description, tags, tools.
    L0,
    /// Overview: the outline of `SKILL.md` (headings and each section's first paragraph).
    L1,
    /// Detail: one heading section of a markdown file of the package (long ones chunked).
    L2,
}

impl From<Level> for u8 {
    fn from(l: Level) -> u8 {
        match l {
            Level::L0 => 0,
            Level::L1 => 1,
            Level::L2 => 2,
        }
    }
}

impl TryFrom<u8> for Level {
    type Error = String;
    fn try_from(v: u8) -> Result<Self, String> {
        match v {
            0 => Ok(Level::L0),
            1 => Ok(Level::L1),
            2 => Ok(Level::L2),
            _ => Err(format!("level {v} is not 0, 1 or 2")),
        }
    }
}

/// One searchable document. One row of the `documents` table.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Document {
    /// Deterministic id (see [`DocId`]).
    pub id: DocId,
    /// The skill it belongs to.
    pub skill: SkillId,
    /// The skill's registry.
    pub registry: RegistryName,
    /// Level of detail.
    pub level: Level,
    /// The markdown file it was cut from, relative to the skill root (`SKILL.md` for L0/L1).
    pub file: String,
    /// Headings from the file's top to this section (empty for the preamble before any heading).
    pub heading_path: Vec<String>,
    /// Position of the section in its file (0-based; 0 for L0/L1).
    pub ordinal: u32,
    /// Chunk of a long section (0-based; 0 when not split).
    pub chunk: u32,
    /// First line of the text in `file` (1-based).
    pub line_start: u32,
    /// Last line of the text in `file` (1-based, inclusive).
    pub line_end: u32,
    /// Display title: skill name, or the last heading.
    pub title: String,
    /// The text to index.
    pub text: String,
    /// What the section says about its skill's use, read from its heading by extract
    /// ([`SectionRole`]; `body` for L0, L1 and every section that is not about when to use it).
    pub role: SectionRole,
}

/// The version of extract's section-role rule. Whatever reads [`Document::role`] and keeps
/// results made from it (an index's usage vectors) records this and compares it before reusing
/// them (an audit's extract stage is keyed by extract's code, which holds the rule). A change of the rule changes what the `role` column means,
/// so it bumps [`crate::SCHEMA_VERSION`] too: an audit written under the old rule is then refused
/// (re-run `skg audit`) instead of being indexed under the new rule's number.
pub const SECTION_ROLE_RULE: u32 = 2;

/// What a section of a skill says about the skill's use. Extract decides it once, where the
/// outline is parsed, from the heading and the section's place (a top-level section of
/// `SKILL.md`); the card's `when_to_use` / `when_not_to_use` fallbacks and the index's usage
/// vectors both read it.
#[derive(
    Debug, Clone, Copy, Default, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize,
)]
#[serde(rename_all = "snake_case")]
pub enum SectionRole {
    /// Anything else: instructions, reference, examples of output.
    #[default]
    Body,
    /// When to use the skill: "When to use", "Use cases", "Example prompts", "Triggers", …
    WhenToUse,
    /// When not to use it: "When not to use", "Do not use for", "When to avoid", …
    WhenNotToUse,
}

impl SectionRole {
    /// The name used in tables and JSON.
    pub fn as_str(self) -> &'static str {
        match self {
            SectionRole::Body => "body",
            SectionRole::WhenToUse => "when_to_use",
            SectionRole::WhenNotToUse => "when_not_to_use",
        }
    }
}
