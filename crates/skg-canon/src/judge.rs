//! Pair signals and the duplicate / variant / distinct decision.

use serde::{Deserialize, Serialize};

use crate::{
    prep::Prep,
    text::{self, intersection},
};

/// Everything measured about one pair. All similarities are symmetric.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[allow(
    clippy::struct_excessive_bools,
    reason = "each flag is one independent signal of the table"
)]
pub struct Signals {
    /// Jaccard of the bodies' word 5-gram shingle sets.
    pub body_jaccard: f64,
    /// Shared shingles / the smaller set: near 1 when one body is a cut or extended copy of the other.
    pub containment: f64,
    /// The bodies are the same word for word (markdown, case and spacing ignored).
    pub same_body: bool,
    /// The bodies start with the same 40 words.
    pub same_head: bool,
    /// Cosine of the description embeddings (absent with `--no-embeddings`).
    pub desc_cosine: Option<f64>,
    /// Jaccard of the descriptions' content words.
    pub desc_jaccard: f64,
    /// Similarity of the identifying parts of the names (normalized Levenshtein, 0–1).
    pub name_similarity: f64,
    /// Scripts with the same structural hash (identifiers, comments and formatting ignored).
    pub scripts_shared: u32,
    /// Scripts of the skill with fewer scripts.
    pub scripts_min: u32,
    /// Tokens of the shared scripts (how much code they stand for).
    pub script_tokens_shared: u32,
    /// Both declare the same upstream (`source`, `repository`, `homepage`).
    pub same_source: bool,
    /// Each body is about a subject named in its own name that the other body never mentions
    /// (a template filled in for two products: `datadog-monitor` vs `newrelic-monitor`).
    pub subject_swap: bool,
    /// Body words of the shorter body.
    pub min_words: u32,
    /// Both are tool-catalog entries with different names or input schemas: never copies.
    pub distinct_tools: bool,
}

/// What a pair is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Verdict {
    /// Same instructions: merge.
    Duplicate,
    /// Same purpose, independently written: link.
    Variant,
    /// Different jobs.
    Distinct,
}

impl Verdict {
    /// The label used in tables and in the labelled pairs.
    pub fn as_str(self) -> &'static str {
        match self {
            Verdict::Duplicate => "duplicate",
            Verdict::Variant => "variant",
            Verdict::Distinct => "distinct",
        }
    }
}

/// The decision thresholds (chosen on the labelled dev pairs: `docs/canonicalize.md`).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Thresholds {
    /// Body Jaccard at or above which the bodies are one text.
    pub body_jaccard: f64,
    /// Containment at or above which the shorter body is a cut of the longer one…
    pub containment: f64,
    /// …provided the shorter body has at least this many words.
    pub containment_min_words: u32,
    /// Description cosine for a variant.
    pub variant_cosine: f64,
    /// Description cosine for a variant when the names agree.
    pub variant_cosine_same_name: f64,
    /// Name similarity that counts as "the names agree".
    pub same_name: f64,
    /// Description Jaccard for a variant without embeddings.
    pub variant_desc_jaccard: f64,
    /// Fewest script tokens for a script-only duplicate.
    pub script_min_tokens: u32,
    /// A rewritten copy: descriptions this close (cosine)…
    pub rewrite_cosine: f64,
    /// …sharing this share of content words (the lexical check; alone without embeddings)…
    pub rewrite_desc_jaccard: f64,
    /// …and bodies sharing at least this containment.
    pub rewrite_containment: f64,
    /// Skills declaring the same upstream share its text (a quoted README, install lines); below
    /// this body Jaccard their overlap counts only when the descriptions agree too.
    pub same_source_jaccard: f64,
    /// Descriptions agree: cosine at least this…
    pub agree_cosine: f64,
    /// …or content-word Jaccard at least this.
    pub agree_desc_jaccard: f64,
}

impl Default for Thresholds {
    fn default() -> Self {
        Thresholds {
            body_jaccard: 0.5,
            containment: 0.8,
            containment_min_words: 40,
            variant_cosine: 0.8,
            variant_cosine_same_name: 0.55,
            same_name: 0.85,
            variant_desc_jaccard: 0.45,
            script_min_tokens: 12,
            rewrite_cosine: 0.93,
            rewrite_desc_jaccard: 0.65,
            rewrite_containment: 0.3,
            same_source_jaccard: 0.9,
            agree_cosine: 0.95,
            agree_desc_jaccard: 0.5,
        }
    }
}

/// Measures a pair.
pub(crate) fn signals(a: &Prep, b: &Prep, cosine: Option<f64>) -> Signals {
    let shared = intersection(&a.shingles, &b.shingles);
    let (na, nb) = (a.shingles.len(), b.shingles.len());
    let union = na + nb - shared;
    let body_jaccard = if union == 0 {
        0.0
    } else {
        shared as f64 / union as f64
    };
    let smaller = na.min(nb);
    let containment = if smaller == 0 {
        0.0
    } else {
        shared as f64 / smaller as f64
    };
    let (mut scripts_shared, mut script_tokens_shared) = (0u32, 0u32);
    for (h, t) in &a.scripts {
        if b.scripts.iter().any(|(h2, _)| h2 == h) {
            scripts_shared += 1;
            script_tokens_shared = script_tokens_shared.saturating_add(*t);
        }
    }
    let subject = |x: &Prep, y: &Prep| {
        x.name_words.iter().zip(&x.name_word_counts).any(|(w, &n)| {
            n >= 2 && !y.name_words.contains(w) && !y.body_vocab.contains(&text::hash_str(w))
        })
    };
    Signals {
        body_jaccard: round(body_jaccard),
        containment: round(containment),
        same_body: a.body_hash != 0 && a.body_hash == b.body_hash,
        same_head: a.head_hash != 0 && a.head_hash == b.head_hash,
        desc_cosine: cosine.map(round),
        desc_jaccard: round(text::jaccard(&a.desc_words, &b.desc_words)),
        name_similarity: round(strsim::normalized_levenshtein(&a.name_key, &b.name_key)),
        scripts_shared,
        scripts_min: u32::try_from(a.scripts.len().min(b.scripts.len())).unwrap_or(u32::MAX),
        script_tokens_shared,
        same_source: a.source_hint.is_some() && a.source_hint == b.source_hint,
        subject_swap: subject(a, b) && subject(b, a),
        min_words: u32::try_from(a.body_words.min(b.body_words)).unwrap_or(u32::MAX),
        distinct_tools: matches!((&a.tool, &b.tool), (Some(x), Some(y)) if x != y),
    }
}

fn round(x: f64) -> f64 {
    (x * 1e4).round() / 1e4
}

/// The decision, with the rule that made it.
pub fn decide(s: &Signals, t: &Thresholds) -> (Verdict, &'static str) {
    let descriptions_agree = s.desc_cosine.is_some_and(|c| c >= t.agree_cosine)
        || s.desc_jaccard >= t.agree_desc_jaccard;
    // Two catalog entries built on one upstream quote the same README: that shared text says
    // nothing about whether they do the same job.
    let upstream_text_only = s.same_source
        && !s.same_body
        && s.body_jaccard < t.same_source_jaccard
        && !descriptions_agree;
    let same_text = !upstream_text_only
        && (s.same_body
            || s.body_jaccard >= t.body_jaccard
            || (s.containment >= t.containment && s.min_words >= t.containment_min_words));
    let same_code = s.scripts_min > 0
        && s.scripts_shared == s.scripts_min
        && s.script_tokens_shared >= t.script_min_tokens;
    // Two tools with different names or input schemas are different endpoints, however much
    // text they share (a catalog repeats an API's description in every endpoint).
    if s.distinct_tools {
        return if variant_rule(s, t) {
            (Verdict::Variant, "same-purpose")
        } else {
            (Verdict::Distinct, "distinct-tools")
        };
    }
    if same_text && !s.subject_swap {
        return (Verdict::Duplicate, "same-text");
    }
    if same_code && !s.subject_swap {
        return (Verdict::Duplicate, "same-scripts");
    }
    // A copy whose body was partly rewritten, extended or moved into references keeps its
    // description: near-identical descriptions plus a substantial shared part of the body.
    let same_description = match s.desc_cosine {
        Some(c) => c >= t.rewrite_cosine && s.desc_jaccard >= t.rewrite_desc_jaccard,
        None => s.desc_jaccard >= t.rewrite_desc_jaccard.max(0.8),
    };
    if same_description && s.containment >= t.rewrite_containment && !s.subject_swap {
        return (Verdict::Duplicate, "same-description-shared-body");
    }
    if s.subject_swap {
        return (Verdict::Distinct, "subject-swap");
    }
    if variant_rule(s, t) {
        (Verdict::Variant, "same-purpose")
    } else {
        (Verdict::Distinct, "different-purpose")
    }
}

/// Same purpose: descriptions this close (or close enough when the names agree).
fn variant_rule(s: &Signals, t: &Thresholds) -> bool {
    match s.desc_cosine {
        Some(c) => {
            c >= t.variant_cosine
                || (s.name_similarity >= t.same_name && c >= t.variant_cosine_same_name)
        }
        None => s.desc_jaccard >= t.variant_desc_jaccard,
    }
}
