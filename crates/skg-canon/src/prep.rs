//! Per-skill fingerprints, computed once.

use rayon::prelude::*;
use serde_json::Value;
use skg_model::{FrontmatterStatus, Skill};

use crate::{
    lsh::minhash,
    text::{self, HEAD_WORDS},
};

/// What the pair signals need of one skill.
#[derive(Debug, Clone)]
pub(crate) struct Prep {
    /// Words of the body.
    pub(crate) body_words: usize,
    /// Hash of the whole normalized body (0 when the body has fewer than 20 words).
    pub(crate) body_hash: u64,
    /// Hash of the first `HEAD_WORDS` words (0 when the body is shorter).
    pub(crate) head_hash: u64,
    /// Body shingles, sorted, unique.
    pub(crate) shingles: Vec<u64>,
    /// MinHash signature of `shingles`.
    pub(crate) signature: Vec<u64>,
    /// Name reduced to its identifying part.
    pub(crate) name_key: String,
    /// `name_key` with its words stemmed.
    pub(crate) name_stem: String,
    /// Identifying words of the name and folder.
    pub(crate) name_words: Vec<String>,
    /// How often each of `name_words` occurs in the body.
    pub(crate) name_word_counts: Vec<usize>,
    /// All body words, sorted and unique, hashed (for subject checks).
    pub(crate) body_vocab: Vec<u64>,
    /// Content words of the description.
    pub(crate) desc_words: Vec<u64>,
    /// Hash of the normalized description (0 when empty).
    pub(crate) desc_hash: u64,
    /// Script fingerprints `(hash, tokens)`, sorted, unique.
    pub(crate) scripts: Vec<(String, u32)>,
    /// A declared upstream (`source`, `repository`, `homepage`, `url`), normalized.
    pub(crate) source_hint: Option<String>,
    /// Quality used for the canonical choice.
    pub(crate) quality: f64,
    /// For a tool-catalog entry: its name (lowercase) and a hash of its input schema. Two tools
    /// are copies only when both agree; distinct endpoints of one API share most of their text.
    pub(crate) tool: Option<(String, u64)>,
}

pub(crate) fn prepare(skills: &[&Skill], quality: &[f64], minhash_len: usize) -> Vec<Prep> {
    skills
        .par_iter()
        .zip(quality)
        .map(|(s, &q)| prep_one(s, q, minhash_len))
        .collect()
}

fn prep_one(s: &Skill, quality: f64, minhash_len: usize) -> Prep {
    let words = text::words(&s.body);
    let shingles = text::shingles(&words);
    let signature = minhash(&shingles, minhash_len);
    let mut name_words = text::name_words(&s.name);
    for w in text::name_words(&s.folder) {
        if !name_words.contains(&w) {
            name_words.push(w);
        }
    }
    let name_word_counts = name_words
        .iter()
        .map(|n| words.iter().filter(|w| w.contains(n.as_str())).count())
        .collect();
    let mut body_vocab: Vec<u64> = words.iter().map(|w| text::hash_str(w)).collect();
    body_vocab.sort_unstable();
    body_vocab.dedup();
    let desc_norm = text::words(&s.description);
    let mut scripts: Vec<(String, u32)> = s
        .script_structures
        .iter()
        .map(|x| (x.hash.clone(), x.tokens))
        .collect();
    scripts.sort();
    scripts.dedup();
    let tool = (s.kind == skg_model::SkillKind::Tool).then(|| {
        let schema = serde_json::from_str::<serde_json::Value>(&s.frontmatter.json)
            .ok()
            .and_then(|v| skg_model::tool_schema(&v).map(ToString::to_string))
            .unwrap_or_default();
        (s.name.to_lowercase(), text::hash_str(&schema))
    });
    Prep {
        tool,
        body_words: words.len(),
        body_hash: if words.len() >= 20 {
            text::hash_words(&words)
        } else {
            0
        },
        head_hash: if words.len() >= HEAD_WORDS {
            text::hash_words(&words[..HEAD_WORDS])
        } else {
            0
        },
        shingles,
        signature,
        name_key: text::name_key(&s.name),
        name_stem: text::name_stem_key(&s.name),
        name_words,
        name_word_counts,
        body_vocab,
        desc_words: text::content_words(&s.description),
        desc_hash: if desc_norm.is_empty() {
            0
        } else {
            text::hash_words(&desc_norm)
        },
        scripts,
        source_hint: source_hint(&s.frontmatter.json),
        quality,
    }
}

/// A declared upstream, as `host/path` without scheme, `www.`, `.git` or trailing `/`.
fn source_hint(frontmatter_json: &str) -> Option<String> {
    let v: Value = serde_json::from_str(frontmatter_json).ok()?;
    let get = |k: &str| {
        v.get(k)
            .or_else(|| v.get("metadata").and_then(|m| m.get(k)))
            .and_then(Value::as_str)
    };
    let raw = ["source", "repository", "repo", "homepage", "url"]
        .iter()
        .find_map(|k| get(k))?;
    let t = raw.trim().to_lowercase();
    let t = t.split("://").nth(1).unwrap_or(&t);
    let t = t.strip_prefix("www.").unwrap_or(t);
    let t = t.trim_end_matches('/');
    let t = t.strip_suffix(".git").unwrap_or(t);
    (t.len() > 3).then(|| t.to_owned())
}

/// Completeness/specificity quality, 0–1, used to pick canonicals until `skg score` provides a
/// slop score. Each term is a property a reader of a registry would prefer in the copy they keep:
///
/// | weight | term |
/// |---|---|
/// | 0.20 | a description of 40–600 characters (specific, not a wall of text) |
/// | 0.25 | body length, saturating at 400 words |
/// | 0.15 | structure: at least 2 headings in the body |
/// | 0.10 | actionable content: a code block or scripts |
/// | 0.10 | frontmatter parsed strictly (5 points if repaired) |
/// | 0.10 | spec-valid name that matches its folder |
/// | 0.10 | a declared licence |
pub fn completeness(s: &Skill) -> f64 {
    let d = s.description.chars().count();
    let words = s.body.split_whitespace().count();
    let headings = s.body.lines().filter(|l| l.starts_with('#')).count();
    let code = s.body.contains("```") || !s.scripts.is_empty();
    let fm = match s.frontmatter.status {
        FrontmatterStatus::Ok | FrontmatterStatus::NotApplicable => 1.0,
        FrontmatterStatus::Repaired => 0.5,
        FrontmatterStatus::Salvaged | FrontmatterStatus::Missing => 0.0,
    };
    let mut q = 0.0;
    q += 0.20 * f64::from(u8::from((40..=600).contains(&d)));
    q += 0.25 * (words as f64 / 400.0).min(1.0);
    q += 0.15 * f64::from(u8::from(headings >= 2));
    q += 0.10 * f64::from(u8::from(code));
    q += 0.10 * fm;
    q += 0.10 * f64::from(u8::from(s.name_valid && s.name_matches_folder));
    q += 0.10 * f64::from(u8::from(s.license.is_some()));
    (q * 1e6).round() / 1e6
}
