//! Relations between skills, from everything a package says about other skills.
//!
//! | extractor | reads | kind | source | confidence |
//! |---|---|---|---|---|
//! | `frontmatter` | `depends_on`, `requires.skills`, `complements`, `related`, `see_also`, … | as named | EXTRACTED | 1.0 |
//! | `md-link` | a relative link to another skill's folder or file | by context (below), else `references` | EXTRACTED | 1.0 |
//! | `js-import` / `py-import` | `import`/`require`/`import()` of another skill's script; Python module of another skill | `depends_on` | EXTRACTED / INFERRED | 1.0 / 0.8 |
//! | `js-call` / `py-call` | a call of a function only another skill's script exports | `depends_on` | INFERRED | 0.6 |
//! | `required-prose` | a skill named on a "REQUIRED SUB-SKILL" / "requires" / "prerequisite" line or in a Prerequisites section | `depends_on` | INFERRED | 0.7 |
//! | `invoke-phrase` | "use / invoke / run / follow the X skill" | `depends_on` | INFERRED | 0.6 |
//! | `related-list` | a skill named in a "Related skills" / "See also" section or line (a list item there stays `complements` whatever verb its text uses, unless under a Prerequisites heading) | `complements` | INFERRED | 0.6 |
//! | `co-use-phrase` | "then X", "combine with X", "followed by X" | `co_used_with` | INFERRED | 0.5 |
//! | `namespaced-ref` | `plugin:skill-name` | `references` | INFERRED | 0.6 |
//! | `skill-phrase` | "the X skill", "skill `X`" | `references` | INFERRED | 0.5 |
//! | `mention` | any other occurrence of another skill's name (same registry only) | `references` | INFERRED 0.5 in backticks or as a path's folder (`x/SKILL.md`), else AMBIGUOUS 0.2 | |
//!
//! A name is *ambiguous* when it is a single plain word (`pdf`, `brainstorming`) or a common
//! hyphenated compound (`step-by-step`): unless the line marks it as a skill (backticks,
//! namespace, the word "skill", a link, a related-skills list), its edge is AMBIGUOUS with half
//! the confidence. Names resolve in the source's registry first; another registry is used only
//! for explicit references (namespace, link, "skill" word, required/related context), at 0.8×
//! the confidence. When several extractors see the same (src, dst, kind), the highest confidence
//! wins and the others stay as evidence; a plain mention on a line where a more specific
//! extractor saw the same target is dropped.

mod names;
mod prose;
mod scripts;

use std::collections::{BTreeMap, HashMap, HashSet};

use rayon::prelude::*;
use skg_model::{Diagnostic, Edge, EdgeKind, EdgeSource, Evidence};

use crate::{Progress, RegistrySource, load::Loaded, read::Files};

pub(crate) use names::NameIndex;

/// One relation seen once.
#[derive(Debug, Clone)]
pub(crate) struct Candidate {
    pub(crate) src: usize,
    pub(crate) dst: usize,
    pub(crate) kind: EdgeKind,
    pub(crate) evidence: Evidence,
    /// For a name found in prose without a strong marker (namespace, "skill" word, link,
    /// related-skills list item): the name's pattern, so the candidate can be dropped when the
    /// name turns out to be a common word of the corpus.
    pub(crate) unless_common: Option<usize>,
}

pub(crate) fn snippet(line: &str) -> String {
    let t = line.trim();
    if t.chars().count() > 200 {
        format!("{}…", t.chars().take(199).collect::<String>())
    } else {
        t.to_owned()
    }
}

/// Runs every extractor over every skill and merges the candidates into edges.
pub(crate) fn extract(
    loaded: &[Loaded],
    sources: &[RegistrySource],
    files: &[&dyn Files],
    progress: &dyn Progress,
) -> (Vec<Edge>, Vec<Diagnostic>) {
    let t = std::time::Instant::now();
    let index = NameIndex::build(loaded, sources);
    tracing::debug!(
        seconds = t.elapsed().as_secs_f64(),
        names = index.names.len(),
        "extract::relations::index"
    );
    let per_skill: Vec<(Vec<Candidate>, Vec<Diagnostic>, Vec<usize>)> = (0..loaded.len())
        .into_par_iter()
        .map(|i| {
            let mut cands = Vec::new();
            let mut diags = Vec::new();
            prose::frontmatter_fields(&index, loaded, i, &mut cands);
            let seen = prose::markdown(&index, loaded, files, i, &mut cands, &mut diags);
            scripts::extract(&index, loaded, i, &mut cands);
            progress.advance(1);
            (cands, diags, seen)
        })
        .collect();
    // Document frequency of every name: in how many skills' markdown it occurs as a word.
    let mut df = vec![0usize; index.names.len()];
    for (_, _, seen) in &per_skill {
        for &p in seen {
            df[p] += 1;
        }
    }
    let common_df = COMMON_MIN_SKILLS.max(loaded.len() / COMMON_SHARE);
    let mut cands = Vec::new();
    let mut diags = Vec::new();
    for (c, d, _) in per_skill {
        cands.extend(
            c.into_iter()
                .filter(|c| c.unless_common.is_none_or(|p| df[p] <= common_df)),
        );
        diags.extend(d);
    }
    tracing::debug!(
        common = df.iter().filter(|&&n| n > common_df).count(),
        threshold = common_df,
        "names that are common words of the corpus"
    );
    (merge(loaded, cands), diags)
}

/// Groups candidates into edges: best evidence first; plain mentions dropped where a more
/// specific extractor saw the same target on the same line.
fn merge(loaded: &[Loaded], cands: Vec<Candidate>) -> Vec<Edge> {
    let mut specific: HashSet<(usize, usize, String, u32)> = HashSet::new();
    for c in &cands {
        if c.evidence.extractor != "mention" {
            specific.insert((c.src, c.dst, c.evidence.path.clone(), c.evidence.line));
        }
    }
    let mut groups: BTreeMap<(&str, &str, EdgeKind), Vec<Evidence>> = BTreeMap::new();
    for c in cands {
        if c.evidence.extractor == "mention"
            && specific.contains(&(c.src, c.dst, c.evidence.path.clone(), c.evidence.line))
        {
            continue;
        }
        groups
            .entry((
                loaded[c.src].skill.id.as_str(),
                loaded[c.dst].skill.id.as_str(),
                c.kind,
            ))
            .or_default()
            .push(c.evidence);
    }
    let ids: HashMap<&str, usize> = loaded
        .iter()
        .enumerate()
        .map(|(i, l)| (l.skill.id.as_str(), i))
        .collect();
    groups
        .into_iter()
        .map(|((src, dst, kind), mut ev)| {
            ev.sort_by(|a, b| {
                b.confidence
                    .total_cmp(&a.confidence)
                    .then(a.source.cmp(&b.source))
                    .then_with(|| a.extractor.cmp(&b.extractor))
                    .then_with(|| a.path.cmp(&b.path))
                    .then(a.line.cmp(&b.line))
            });
            ev.dedup_by(|a, b| a.extractor == b.extractor && a.path == b.path && a.line == b.line);
            ev.truncate(MAX_EVIDENCE);
            let best = &ev[0];
            Edge {
                src: loaded[ids[src]].skill.id.clone(),
                dst: loaded[ids[dst]].skill.id.clone(),
                kind,
                confidence: best.confidence,
                source: best.source,
                extractor: best.extractor.clone(),
                evidence: ev,
            }
        })
        .collect()
}

/// A name occurring in the markdown of more than this many skills…
const COMMON_MIN_SKILLS: usize = 25;
/// …and more than 1/`COMMON_SHARE` of all skills is a common word of the corpus (`github`,
/// `test`, `create`): its unmarked occurrences say nothing about the skill of that name.
const COMMON_SHARE: usize = 100;

/// Evidence kept per edge (best first); the rest is counted in nothing — a skill that names
/// another 200 times says no more than one that names it 20 times.
const MAX_EVIDENCE: usize = 20;

/// Rounds a confidence to two decimals so that products like 0.7 × 0.8 print stably.
pub(crate) fn conf(x: f64) -> f64 {
    (x * 100.0).round() / 100.0
}

pub(crate) fn evidence(
    extractor: &str,
    confidence: f64,
    source: EdgeSource,
    path: String,
    line: u32,
    text: &str,
) -> Evidence {
    Evidence {
        extractor: extractor.to_owned(),
        confidence: conf(confidence),
        source,
        path,
        line,
        snippet: snippet(text),
    }
}

#[cfg(test)]
mod tests;
