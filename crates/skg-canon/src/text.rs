//! Text normalization: words, shingles, names.

use std::hash::BuildHasher;

use foldhash::fast::FixedState;

/// Shingle length in words (the labelled data's candidate search used word 5-grams too).
pub(crate) const SHINGLE: usize = 5;

/// Words of the head block (truncated/extended copies share their beginning).
pub(crate) const HEAD_WORDS: usize = 40;

/// A fixed-seed hasher: the same text hashes the same in every run.
pub(crate) fn hash_str(s: &str) -> u64 {
    FixedState::with_seed(0x736b_6763_616e_6f6e).hash_one(s)
}

pub(crate) fn hash_u64(x: u64) -> u64 {
    FixedState::with_seed(0x736b_6763_616e_6f6e).hash_one(x)
}

/// Lowercase alphanumeric words (Unicode-aware); everything else separates words. Markdown
/// punctuation, table pipes, bullets and whitespace changes therefore never matter.
pub(crate) fn words(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut cur = String::new();
    for ch in text.chars() {
        if ch.is_alphanumeric() {
            cur.extend(ch.to_lowercase());
        } else if !cur.is_empty() {
            out.push(std::mem::take(&mut cur));
        }
    }
    if !cur.is_empty() {
        out.push(cur);
    }
    out
}

/// Hashed word `SHINGLE`-grams, sorted and unique. Texts shorter than a shingle yield one
/// shingle of all their words (none when empty).
pub(crate) fn shingles(words: &[String]) -> Vec<u64> {
    let mut out: Vec<u64> = if words.len() < SHINGLE {
        if words.is_empty() {
            Vec::new()
        } else {
            vec![hash_str(&words.join(" "))]
        }
    } else {
        words
            .windows(SHINGLE)
            .map(|w| {
                let mut h = 0u64;
                for word in w {
                    h = hash_u64(h ^ hash_str(word));
                }
                h
            })
            .collect()
    };
    out.sort_unstable();
    out.dedup();
    out
}

/// Hash of a whole word sequence.
pub(crate) fn hash_words(words: &[String]) -> u64 {
    hash_str(&words.join(" "))
}

/// Common English words that carry no subject (for description word sets).
const STOPWORDS: &[&str] = &[
    "a", "about", "after", "all", "also", "an", "and", "any", "are", "as", "at", "be", "before",
    "by", "can", "do", "does", "each", "etc", "for", "from", "has", "have", "how", "if", "in",
    "into", "is", "it", "its", "like", "may", "more", "must", "need", "needs", "no", "not", "of",
    "on", "or", "other", "our", "over", "should", "so", "such", "than", "that", "the", "their",
    "them", "then", "these", "they", "this", "those", "to", "up", "use", "used", "user", "uses",
    "using", "via", "want", "wants", "was", "we", "what", "when", "where", "which", "while", "who",
    "will", "with", "within", "without", "you", "your", "skill", "skills",
];

/// Content words of a description: words minus stopwords and one-letter words, hashed, sorted,
/// unique.
pub(crate) fn content_words(text: &str) -> Vec<u64> {
    let mut out: Vec<u64> = words(text)
        .iter()
        .filter(|w| w.chars().count() > 1 && !STOPWORDS.contains(&w.as_str()))
        .map(|w| hash_str(w))
        .collect();
    out.sort_unstable();
    out.dedup();
    out
}

/// Generic name parts that say nothing about what a skill is for.
const NAME_AFFIXES: &[&str] = &[
    "skill",
    "skills",
    "official",
    "cli",
    "mcp",
    "tool",
    "tools",
    "agent",
    "helper",
    "integration",
    "api",
    "pro",
    "manager",
    "assistant",
    "expert",
    "claude",
    "openclaw",
    "clawdbot",
    "moltbot",
    "ai",
];

/// The name reduced to what identifies the skill: lowercase words without generic affixes and
/// version suffixes, joined without separators (`Claude-PDF-Tools v2` → `pdf`).
pub(crate) fn name_key(name: &str) -> String {
    let ws = words(name);
    let kept: Vec<&str> = ws
        .iter()
        .map(String::as_str)
        .filter(|w| !NAME_AFFIXES.contains(w) && !is_version(w))
        .collect();
    if kept.is_empty() {
        ws.concat()
    } else {
        kept.concat()
    }
}

/// The name key with each word cut to its first 5 characters (`prompt-engineering` and
/// `prompt-engineer` both give `prompengin`; `statistical-analysis` / `-analyst` agree too): a
/// blocking key for near-identical names, not a similarity.
pub(crate) fn name_stem_key(name: &str) -> String {
    words(name)
        .iter()
        .map(String::as_str)
        .filter(|w| !NAME_AFFIXES.contains(w) && !is_version(w))
        .flat_map(|w| w.chars().take(5))
        .collect()
}

/// The name's words without generic affixes (for subject checks).
pub(crate) fn name_words(name: &str) -> Vec<String> {
    words(name)
        .into_iter()
        .filter(|w| w.chars().count() > 2 && !NAME_AFFIXES.contains(&w.as_str()) && !is_version(w))
        .collect()
}

fn is_version(w: &str) -> bool {
    let w = w.strip_prefix('v').unwrap_or(w);
    !w.is_empty() && w.chars().all(|c| c.is_ascii_digit())
}

/// |a ∩ b| of two sorted, unique slices.
pub(crate) fn intersection(left: &[u64], right: &[u64]) -> usize {
    let (mut li, mut ri, mut shared) = (0, 0, 0);
    while li < left.len() && ri < right.len() {
        match left[li].cmp(&right[ri]) {
            std::cmp::Ordering::Less => li += 1,
            std::cmp::Ordering::Greater => ri += 1,
            std::cmp::Ordering::Equal => {
                shared += 1;
                li += 1;
                ri += 1;
            }
        }
    }
    shared
}

/// Jaccard of two sorted, unique sets (0 when both are empty).
pub(crate) fn jaccard(a: &[u64], b: &[u64]) -> f64 {
    let i = intersection(a, b);
    let u = a.len() + b.len() - i;
    if u == 0 { 0.0 } else { i as f64 / u as f64 }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn words_ignore_markdown_and_case() {
        assert_eq!(
            words("## Run `git-log` | **Now**"),
            ["run", "git", "log", "now"]
        );
    }

    #[test]
    fn shingles_are_windows() {
        let w = words("a b c d e f");
        assert_eq!(shingles(&w).len(), 2);
        assert_eq!(shingles(&words("a b")).len(), 1);
        assert!(shingles(&[]).is_empty());
    }

    #[test]
    fn name_keys_drop_affixes_and_versions() {
        assert_eq!(name_key("Claude-PDF-Tools v2"), "pdf");
        assert_eq!(name_key("pdf"), "pdf");
        assert_eq!(name_key("skill"), "skill");
        assert_eq!(name_key("web-search-2"), "websearch");
        assert_eq!(
            name_stem_key("prompt-engineering"),
            name_stem_key("prompt-engineer")
        );
        assert_eq!(
            name_stem_key("agent-orchestrator"),
            name_stem_key("agent-orchestration")
        );
    }

    #[test]
    fn jaccard_by_hand() {
        assert!((jaccard(&[1, 2, 3], &[2, 3, 4]) - 0.5).abs() < 1e-12);
        assert!(jaccard(&[], &[]).abs() < 1e-12);
        assert_eq!(intersection(&[1, 5, 9], &[5, 9, 10]), 2);
    }
}
