//! Whole-package incremental builds: which packages (skills) changed since the previous index,
//! and which dense vectors can be carried over.
//!
//! A package is unchanged when its content hash (every file of the skill folder) is the same and
//! the previous index was embedded with the same model; its documents are then the same documents
//! (same ids, same text), so their vectors are reused. A changed package gets all of its
//! L0/L1/L2 documents from the new extract and is re-embedded; a deleted one leaves nothing behind,
//! because the folder is always written whole from the new state.

use std::collections::{BTreeMap, HashMap};

use serde::Serialize;
use skg_model::{Document, Skill};

use crate::{DenseTexts, Index, Vectors};

/// Packages by what happened to them since the previous index.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct PackageDiff {
    /// Same content hash.
    pub kept: Vec<String>,
    /// Different content hash.
    pub changed: Vec<String>,
    /// New ids.
    pub added: Vec<String>,
    /// Ids the previous index held and the new state does not.
    pub deleted: Vec<String>,
}

impl PackageDiff {
    /// Counts by kind.
    pub fn counts(&self) -> BTreeMap<&'static str, usize> {
        BTreeMap::from([
            ("kept", self.kept.len()),
            ("changed", self.changed.len()),
            ("added", self.added.len()),
            ("deleted", self.deleted.len()),
        ])
    }
}

/// Compares the new skills with the previous index's.
pub fn diff_packages(old: &Index, skills: &[Skill]) -> PackageDiff {
    let mut diff = PackageDiff::default();
    let mut now: std::collections::HashSet<&str> =
        std::collections::HashSet::with_capacity(skills.len());
    for s in skills {
        now.insert(s.id.as_str());
        match old.skill(s.id.as_str()) {
            Some((_, e)) if e.content_hash == s.content_hash && !s.content_hash.is_empty() => {
                diff.kept.push(s.id.to_string());
            }
            Some(_) => diff.changed.push(s.id.to_string()),
            None => diff.added.push(s.id.to_string()),
        }
    }
    diff.deleted = old
        .skills
        .iter()
        .filter(|e| !now.contains(e.id.as_str()))
        .map(|e| e.id.to_string())
        .collect();
    for v in [
        &mut diff.kept,
        &mut diff.changed,
        &mut diff.added,
        &mut diff.deleted,
    ] {
        v.sort();
    }
    diff
}

/// Splits the dense `targets` (positions in `documents`) into vectors carried over from `old`
/// (documents of kept packages, when `old` was embedded by `model`) and positions still to embed.
pub fn reuse_vectors(
    old: &Index,
    diff: &PackageDiff,
    documents: &[Document],
    targets: &[usize],
    model: &str,
) -> (Vec<(usize, Vec<f32>)>, Vec<usize>) {
    if old.manifest.model.as_deref() != Some(model) {
        return (Vec::new(), targets.to_vec());
    }
    let kept: std::collections::HashSet<&str> = diff.kept.iter().map(String::as_str).collect();
    let old_doc: HashMap<&str, u32> = old
        .docs
        .iter()
        .enumerate()
        .map(|(i, d)| (d.id.as_str(), u32::try_from(i).unwrap_or(u32::MAX)))
        .collect();
    let mut reused = Vec::new();
    let mut todo = Vec::new();
    for &i in targets {
        let d = &documents[i];
        let v = kept
            .contains(d.skill.as_str())
            .then(|| old_doc.get(d.id.as_str()))
            .flatten()
            .and_then(|&o| old.vector_of(o));
        match v {
            Some(v) => reused.push((i, v.to_vec())),
            None => todo.push(i),
        }
    }
    (reused, todo)
}

/// The dense vectors an index build needs: those carried over from the previous index (kept
/// packages embedded by the same model) and the texts still to embed — documents' texts, then
/// example requests as extra vectors of their skills' L0 documents.
#[derive(Debug, Clone, Default)]
pub struct VectorPlan {
    /// (document position, vector) carried over.
    pub reused: Vec<(usize, Vec<f32>)>,
    /// Document positions the texts below are embedded for, in order.
    pub targets: Vec<usize>,
    /// The texts to embed, one per target.
    pub texts: Vec<String>,
    /// Every skill's card (its L0 document, when embedded) with the text it is embedded as:
    /// the texts whose token states the second stage stores ([`crate::Late`]), carried over or
    /// not (the token states come from the token cache, else with the vector).
    pub cards: Vec<(usize, String)>,
}

impl VectorPlan {
    /// What a build of `documents` embeds with `model` (the documents and texts `dense` names), given the previous index and what changed since (`None`: a whole build), and
    /// example requests as `(document, text)`.
    pub fn new(
        documents: &[Document],
        dense: &DenseTexts,
        previous: Option<(&Index, &PackageDiff)>,
        examples: &[(usize, String)],
        model: &str,
    ) -> VectorPlan {
        let all = dense.targets(documents);
        let cards = all
            .iter()
            .filter(|&&i| documents[i].level == skg_model::Level::L0)
            .map(|&i| (i, dense.text(&documents[i])))
            .collect();
        // A vector is carried over only when its document was embedded as the same text: the
        // previous index must have cut overviews and chosen usage sections the same way.
        let previous = previous
            .filter(|(old, _)| DenseTexts::recorded(&old.manifest.options).same_texts(dense));
        let (reused, mut targets) = match previous {
            Some((old, diff)) => reuse_vectors(old, diff, documents, &all, model),
            None => (Vec::new(), all),
        };
        let mut texts: Vec<String> = targets.iter().map(|&i| dense.text(&documents[i])).collect();
        for (doc, text) in examples {
            targets.push(*doc);
            texts.push(text.clone());
        }
        VectorPlan {
            reused,
            targets,
            texts,
            cards,
        }
    }

    /// The index's vectors: the carried-over ones and `embedded` (one per text, in order).
    pub fn into_vectors(self, embedded: Vec<Vec<f32>>, model: &str, dim: usize) -> Vectors {
        let mut rows = self.reused;
        rows.extend(self.targets.into_iter().zip(embedded));
        Vectors {
            tokens: Vec::new(),
            token_directions: crate::LATE_DIRECTIONS,
            model: model.to_owned(),
            dim,
            rows,
        }
    }
}
