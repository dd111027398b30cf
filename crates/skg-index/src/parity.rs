//! Parity mode with agentskills-retrieval's `LexicalSelector` (pratikxpanda/agentskills-sdk,
//! MIT): the same tokenizer (casefolded `[a-z0-9]+` runs minus its 35 stop words, no stemming),
//! the same documents (name, description, `when_to_use` items and tags, one bag; `when_not_to_use`
//! in a second collection), Okapi BM25 with k1 1.5, b 0.75 and Lucene's idf
//! `ln(1 + (N − n + 0.5) / (n + 0.5))`, score = positive − 0.5 × negative, ties by id, selected
//! = scores above the floor, the rest rejected.
//!
//! It exists to compare skg's ranking with a peer's on the peer's own fixtures, number for number;
//! skg's retrieval ([`crate::Index`]) is tantivy BM25 over every document level with field weights.

use std::collections::HashMap;

/// The stop words of agentskills-retrieval's tokenizer.
const STOPWORDS: [&str; 35] = [
    "a", "an", "and", "are", "as", "at", "be", "by", "for", "from", "how", "in", "into", "is",
    "it", "of", "on", "or", "that", "the", "this", "to", "use", "used", "using", "was", "what",
    "when", "where", "which", "who", "why", "with", "you", "your",
];

/// Term saturation.
const K1: f64 = 1.5;
/// Length normalization.
const B: f64 = 0.75;

/// A skill as the peer selector reads its metadata.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ParitySkill {
    /// Skill id (the name, in the peer's fixtures).
    pub id: String,
    /// Frontmatter `name`.
    pub name: String,
    /// Frontmatter `description`.
    pub description: String,
    /// `when_to_use` items.
    pub when_to_use: Vec<String>,
    /// `when_not_to_use` items.
    pub when_not_to_use: Vec<String>,
    /// `metadata.tags`.
    pub tags: Vec<String>,
}

/// The peer's tokenizer: lowercase alphanumeric runs, stop words removed, duplicates kept.
pub fn tokenize(text: &str) -> Vec<String> {
    let lower = text.to_lowercase();
    lower
        .split(|c: char| !(c.is_ascii_lowercase() || c.is_ascii_digit()))
        .filter(|w| !w.is_empty() && !STOPWORDS.contains(w))
        .map(str::to_owned)
        .collect()
}

#[derive(Debug)]
struct Bm25 {
    lengths: Vec<f64>,
    avg: f64,
    freq: Vec<HashMap<String, f64>>,
    idf: HashMap<String, f64>,
}

impl Bm25 {
    fn new(docs: &[Vec<String>]) -> Bm25 {
        let lengths: Vec<f64> = docs.iter().map(|d| d.len() as f64).collect();
        let avg = if docs.is_empty() {
            0.0
        } else {
            lengths.iter().sum::<f64>() / docs.len() as f64
        };
        let freq: Vec<HashMap<String, f64>> = docs
            .iter()
            .map(|d| {
                let mut m = HashMap::new();
                for t in d {
                    *m.entry(t.clone()).or_insert(0.0) += 1.0;
                }
                m
            })
            .collect();
        let mut df: HashMap<String, f64> = HashMap::new();
        for f in &freq {
            for t in f.keys() {
                *df.entry(t.clone()).or_insert(0.0) += 1.0;
            }
        }
        let n = docs.len() as f64;
        let idf = df
            .into_iter()
            .map(|(t, d)| (t, (1.0 + (n - d + 0.5) / (d + 0.5)).ln()))
            .collect();
        Bm25 {
            lengths,
            avg,
            freq,
            idf,
        }
    }

    fn score(&self, doc: usize, terms: &[String]) -> f64 {
        if self.avg == 0.0 {
            return 0.0;
        }
        let mut total = 0.0;
        for t in terms {
            let Some(&tf) = self.freq[doc].get(t) else {
                continue;
            };
            let denominator = tf + K1 * (1.0 - B + B * self.lengths[doc] / self.avg);
            total += self.idf[t] * tf * (K1 + 1.0) / denominator;
        }
        total
    }
}

/// Skill ids with their scores, best first.
pub type Ranked = Vec<(String, f64)>;

/// The peer selector over a set of skills.
#[derive(Debug)]
pub struct LexicalParity {
    ids: Vec<String>,
    positive: Bm25,
    negative: Bm25,
    /// Weight of the negative collection (0.5 in the peer).
    pub negative_weight: f64,
}

impl LexicalParity {
    /// Indexes the skills (in id order, as the peer's corpus).
    pub fn new(skills: &[ParitySkill]) -> LexicalParity {
        let mut sorted: Vec<&ParitySkill> = skills.iter().collect();
        sorted.sort_by(|a, b| a.id.cmp(&b.id));
        let positive: Vec<Vec<String>> = sorted
            .iter()
            .map(|s| {
                let name = if s.name.trim().is_empty() {
                    &s.id
                } else {
                    &s.name
                };
                let mut parts: Vec<&str> = vec![name, &s.description];
                parts.extend(s.when_to_use.iter().map(|x| x.trim()));
                parts.extend(s.tags.iter().map(|x| x.trim()));
                let text: Vec<&str> = parts.into_iter().filter(|p| !p.is_empty()).collect();
                tokenize(&text.join("\n"))
            })
            .collect();
        let negative: Vec<Vec<String>> = sorted
            .iter()
            .map(|s| {
                let text: Vec<&str> = s
                    .when_not_to_use
                    .iter()
                    .map(|x| x.trim())
                    .filter(|x| !x.is_empty())
                    .collect();
                tokenize(&text.join("\n"))
            })
            .collect();
        LexicalParity {
            ids: sorted.iter().map(|s| s.id.clone()).collect(),
            positive: Bm25::new(&positive),
            negative: Bm25::new(&negative),
            negative_weight: 0.5,
        }
    }

    /// Every skill scored for the query, best first (ties by id).
    pub fn rank(&self, query: &str) -> Ranked {
        let terms = tokenize(query);
        let mut scored: Vec<(String, f64)> = self
            .ids
            .iter()
            .enumerate()
            .map(|(i, id)| {
                (
                    id.clone(),
                    self.positive.score(i, &terms)
                        - self.negative_weight * self.negative.score(i, &terms),
                )
            })
            .collect();
        scored.sort_by(|a, b| b.1.total_cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
        scored
    }

    /// The peer's `select`: the first `limit` scores above `min_score`, and the rest rejected.
    pub fn select(&self, query: &str, limit: usize, min_score: f64) -> (Ranked, Ranked) {
        let scored = self.rank(query);
        let selected: Vec<(String, f64)> = scored
            .iter()
            .filter(|s| s.1 > min_score)
            .take(limit)
            .cloned()
            .collect();
        let rejected = scored
            .into_iter()
            .filter(|s| !selected.iter().any(|x| x.0 == s.0))
            .collect();
        (selected, rejected)
    }
}

#[cfg(test)]
mod tests {
    #![allow(
        clippy::unwrap_used,
        clippy::float_cmp,
        clippy::print_stderr,
        reason = "tests; a skipped part says so on stderr"
    )]

    use super::*;

    #[test]
    fn tokenizer_drops_stop_words_and_keeps_duplicates() {
        assert_eq!(
            tokenize("The payments service is returning 503 to live traffic, traffic!"),
            vec![
                "payments",
                "service",
                "returning",
                "503",
                "live",
                "traffic",
                "traffic"
            ]
        );
    }

    #[test]
    fn bm25_by_hand() {
        // Two documents: "pdf merge" (2 terms) and "csv" (1 term); avgdl 1.5, N 2.
        let p = LexicalParity::new(&[
            ParitySkill {
                id: "a".into(),
                name: "pdf".into(),
                description: "merge".into(),
                ..ParitySkill::default()
            },
            ParitySkill {
                id: "b".into(),
                name: "csv".into(),
                ..ParitySkill::default()
            },
        ]);
        let r = p.rank("merge");
        // idf = ln(1 + (2 − 1 + 0.5)/(1 + 0.5)) = ln 2; tf 1, dl 2:
        // ln 2 · 2.5 / (1 + 1.5 · (0.25 + 0.75 · 2/1.5)).
        let want = 2f64.ln() * 2.5 / (1.0 + 1.5 * (0.25 + 0.75 * 2.0 / 1.5));
        assert_eq!(r[0].0, "a");
        assert!((r[0].1 - want).abs() < 1e-12);
        assert_eq!(r[1], ("b".to_owned(), 0.0));
    }

    /// The peer's own fixture and its recorded rankings (../shared/bench/peers), when present.
    #[test]
    fn same_rankings_as_the_peer_on_its_fixture() {
        let Some(dir) = skg_testkit::shared("bench/peers") else {
            return;
        };
        let fixture = std::fs::read_to_string(dir.join("agentskills_fixtures.json")).unwrap();
        let rankings =
            std::fs::read_to_string(dir.join("agentskills_lexical_rankings.json")).unwrap();
        let f: serde_json::Value = serde_json::from_str(&fixture).unwrap();
        let r: serde_json::Value = serde_json::from_str(&rankings).unwrap();
        let strs = |v: &serde_json::Value| -> Vec<String> {
            v.as_array()
                .map(|a| {
                    a.iter()
                        .filter_map(|x| x.as_str().map(str::to_owned))
                        .collect()
                })
                .unwrap_or_default()
        };
        let skills: Vec<ParitySkill> = f["skills"]
            .as_array()
            .unwrap()
            .iter()
            .map(|s| ParitySkill {
                id: s["name"].as_str().unwrap().to_owned(),
                name: s["name"].as_str().unwrap().to_owned(),
                description: s["description"].as_str().unwrap_or_default().to_owned(),
                when_to_use: strs(&s["when_to_use"]),
                when_not_to_use: strs(&s["when_not_to_use"]),
                tags: strs(&s["frontmatter_layout"]["metadata"]["tags"]),
            })
            .collect();
        let p = LexicalParity::new(&skills);
        let (mut at1, mut at3, mut n) = (0, 0, 0);
        for case in r["results"].as_array().unwrap() {
            let query = case["query"].as_str().unwrap();
            assert_eq!(tokenize(query), strs(&case["query_terms"]), "{query}");
            let want: Vec<(String, f64)> = case["ranking"]
                .as_array()
                .unwrap()
                .iter()
                .chain(case["rejected"].as_array().unwrap())
                .map(|x| (x[0].as_str().unwrap().to_owned(), x[1].as_f64().unwrap()))
                .collect();
            let got = p.rank(query);
            assert_eq!(got.len(), want.len());
            for (g, w) in got.iter().zip(&want) {
                assert_eq!(g.0, w.0, "{query}");
                // The recorded scores are rounded to 6 decimals.
                assert!(
                    (g.1 - w.1).abs() <= 1e-6,
                    "{query}: {} {} vs {}",
                    g.0,
                    g.1,
                    w.1
                );
            }
            let expected = case["expected"].as_str().unwrap();
            let (top1, _) = p.select(query, 1, 0.0);
            let (top3, _) = p.select(query, 3, 0.0);
            at1 += usize::from(top1.iter().any(|s| s.0 == expected));
            at3 += usize::from(top3.iter().any(|s| s.0 == expected));
            n += 1;
        }
        assert_eq!((at1, at3, n), (13, 13, 13));
    }
}
