//! skg's shared data types.
//!
//! Every stage of the pipeline (extract, canonicalize, score, measure, serve) speaks in these
//! types, so they are plain data: public fields, `serde`, ordered collections, no I/O and no
//! logging. A row type here is exactly one row of a stage output table (see `skg-store`).
//!
//! Identifiers are newtypes ([`RegistryName`], [`SkillId`], [`DocId`]) so that a skill id can't be
//! passed where a document id is expected.

mod diagnostic;
mod document;
mod edge;
mod ids;
mod registry;
mod skill;

pub use crate::{
    diagnostic::{Diagnostic, DiagnosticCode, Severity},
    document::{Document, Level},
    edge::{Edge, EdgeKind, EdgeSource, Evidence},
    ids::{DocId, RegistryName, SkillId},
    registry::{RegistryInput, RegistryKind},
    skill::{Frontmatter, FrontmatterStatus, Platform, Requires, RiskTier, Skill, SkillKind},
};

/// Version of the on-disk tables written by `skg extract` (column names and types).
///
/// Bump on any change of a column's name, type or meaning; readers refuse other versions.
pub const SCHEMA_VERSION: u32 = 1;
