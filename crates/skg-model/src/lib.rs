//! skg's shared data types.
//!
//! Every stage of the pipeline (extract, canonicalize, score, measure, serve) speaks in these
//! types, so they are plain data: public fields, `serde`, ordered collections, no I/O and no
//! logging. A row type here is exactly one row of a stage output table (see `skg-store`).
//!
//! Identifiers are newtypes ([`RegistryName`], [`SkillId`], [`DocId`]) so that a skill id can't be
//! passed where a document id is expected.

mod canon;
mod diagnostic;
mod document;
mod edge;
mod ids;
mod keys;
pub mod labels;
mod measure;
mod package;
mod registry;
mod score;
pub mod security;
mod skill;
mod stage;
mod stats;
mod tool;

pub use crate::{
    canon::{CapabilityRow, Cluster, Member, Role},
    diagnostic::{Diagnostic, DiagnosticCode, Severity},
    document::{Document, Level, SECTION_ROLE_RULE, SectionRole},
    edge::{Edge, EdgeKind, EdgeSource, Evidence},
    ids::{DocId, RegistryName, SkillId},
    keys::SkillKeys,
    measure::{ALL_SCOPE, CodeModule, CodeTool, CommunityRow, MetricRow, limits},
    package::{FileKind, FileText, PackageText, ToolParameter, split_tool_path, tool_path},
    registry::{RegistryInput, RegistryKind},
    score::Score,
    skill::{
        Frontmatter, FrontmatterStatus, Platform, Requires, RiskTier, ScriptStructure, Skill,
        SkillKind,
    },
    stage::Stage,
    stats::auc,
    tool::{for_each_schema, tool_function, tool_schema},
};

/// Progress reporting, implemented by the binary (a progress bar) or ignored. Stages call it;
/// it never affects their results.
pub trait Progress: Sync {
    /// A phase starts with `total` units of work.
    fn phase(&self, name: &str, total: u64);
    /// `n` more units are done.
    fn advance(&self, n: u64);
    /// The phases that follow belong to `label` (`2/4 canonicalize`), for runs of several
    /// stages; ignored by default.
    fn stage(&self, _label: &str) {}
}

/// Ignores progress.
#[derive(Debug, Clone, Copy, Default)]
pub struct NoProgress;

impl Progress for NoProgress {
    fn phase(&self, _: &str, _: u64) {}
    fn advance(&self, _: u64) {}
}

/// Version of the on-disk tables written by `skg extract` (column names and types).
///
/// Bump on any change of a column's name, type or meaning; readers refuse other versions.
/// History: 2 added `script_structures`; 3 made the metrics (`tlis`, `mean_degree`, `gnci`,
/// `cfi`, `rscore`) nullable float64 columns instead of JSON text; 4 added the scan's `findings`
/// and `verdicts` and made risk tier `unsafe` the scan's verdict (extract assigns at most
/// `critical`); 5 added the skills' `capability` and `capability_confidence`; 6 added
/// canonicalize's `capabilities` (the type later stages read: extract's, or the nearest type
/// prototype where extract's words said `unknown`), which the audit's `skills` and
/// canonicalize's `canonical_skills` carry; 7 added the documents' `role` (what a section says
/// about its skill's use, [`SectionRole`]); 8 added the findings' `entry_line` (where a
/// catalog's tool is in its catalog file); 9 added their `entry_column` (where on that line).
pub const SCHEMA_VERSION: u32 = 9;
