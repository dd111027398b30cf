//! Synthetic registries for scaling measurements and tests: original skills made of generated
//! vocabulary, plus realistic near-copies (renamed, reformatted, truncated, section-added, in
//! another registry) and independently written variants. Deterministic for a seed; contains no
//! real registry text.

use std::fmt::Write as _;

use skg_model::Skill;

/// The generator's seed unless one is given (`skg canonicalize --synthetic N`).
pub const DEFAULT_SEED: u64 = 42;

/// How a synthetic skill was made.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Origin {
    /// An original (its own index).
    Original(usize),
    /// A near-copy of original `n`.
    Copy(usize),
    /// An independent rewrite with the purpose of original `n`.
    Variant(usize),
}

/// A small deterministic generator (splitmix64).
#[derive(Debug, Clone)]
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }
    fn below(&mut self, n: usize) -> usize {
        usize::try_from(self.next() % (n.max(1) as u64)).unwrap_or(0)
    }
    fn chance(&mut self, percent: u64) -> bool {
        self.next() % 100 < percent
    }
}

const SYLLABLES: &[&str] = &[
    "ka", "lo", "mi", "ran", "tes", "vo", "dra", "quin", "zel", "por", "nix", "bel", "tor", "sa",
    "mu", "glen", "fra", "pex", "dol", "wic", "har", "jun", "cy", "mon", "te", "ul", "bri", "sov",
];

const COMMON: &[&str] = &[
    "the", "a", "to", "and", "of", "for", "with", "when", "run", "check", "file", "files", "data",
    "output", "input", "command", "step", "first", "then", "use", "create", "update", "read",
    "write", "list", "config", "error", "errors", "result", "results", "project", "user", "before",
    "after", "each", "all", "new", "existing", "value", "values", "option", "options", "report",
    "test", "tests", "build", "make", "sure", "that", "it", "is", "are", "in", "on", "from",
];

fn pseudo_word(rng: &mut Rng) -> String {
    let n = 2 + rng.below(2);
    (0..n)
        .map(|_| SYLLABLES[rng.below(SYLLABLES.len())])
        .collect()
}

/// One generated topic: its own vocabulary.
struct Topic {
    words: Vec<String>,
}

fn sentence(rng: &mut Rng, topic: &Topic, len: usize) -> String {
    let mut s: Vec<String> = (0..len)
        .map(|_| {
            if rng.chance(35) {
                topic.words[rng.below(topic.words.len())].clone()
            } else {
                COMMON[rng.below(COMMON.len())].to_owned()
            }
        })
        .collect();
    if let Some(f) = s.first_mut() {
        let mut c = f.chars();
        if let Some(h) = c.next() {
            *f = h.to_uppercase().chain(c).collect();
        }
    }
    s.join(" ") + "."
}

fn section(rng: &mut Rng, topic: &Topic) -> String {
    let title = topic.words[rng.below(topic.words.len())].clone();
    let mut out = format!("## {title}\n\n");
    for _ in 0..3 + rng.below(6) {
        let len = 8 + rng.below(12);
        if rng.chance(30) {
            out.push_str("- ");
        }
        out.push_str(&sentence(rng, topic, len));
        out.push('\n');
    }
    if rng.chance(30) {
        let _ = write!(
            out,
            "
```bash
{} --{}
```
",
            topic.words[0], topic.words[1]
        );
    }
    out.push('\n');
    out
}

/// A skill row with the given text ([`Skill::from_text`]) and a content hash over it.
pub fn skill(registry: &str, root: &str, name: &str, description: &str, body: &str) -> Skill {
    let mut s = Skill::from_text(registry, root, name, description, body);
    s.content_hash = blake3::hash(format!("{name}\0{description}\0{body}").as_bytes())
        .to_hex()
        .to_string();
    s
}

/// `n` skills over `registries` registries: about 60 % originals, 30 % near-copies of them and
/// 10 % independently written variants, shuffled across registries.
pub fn generate(count: usize, registries: usize, seed: u64) -> (Vec<Skill>, Vec<Origin>) {
    let mut rng = Rng(seed);
    let topics: Vec<Topic> = (0..(count / 8).max(4))
        .map(|_| Topic {
            words: (0..12).map(|_| pseudo_word(&mut rng)).collect(),
        })
        .collect();
    let originals = (count * 6 / 10).max(1);
    let mut skills = Vec::with_capacity(count);
    let mut origins = Vec::with_capacity(count);
    let mut texts: Vec<(String, String, String, usize)> = Vec::with_capacity(originals);
    let reg = |rng: &mut Rng| format!("synth-{}", rng.below(registries.max(1)));
    for i in 0..originals {
        let t = rng.below(topics.len());
        let topic = &topics[t];
        let name = format!(
            "{}-{}-{i}",
            topic.words[rng.below(12)],
            topic.words[rng.below(12)]
        );
        let len = 10 + rng.below(10);
        let description = format!(
            "Use when you need to {}",
            sentence(&mut rng, topic, len).to_lowercase()
        );
        let mut body = format!("# {name}\n\n{}\n\n", sentence(&mut rng, topic, 15));
        for _ in 0..2 + rng.below(5) {
            body.push_str(&section(&mut rng, topic));
        }
        let r = reg(&mut rng);
        skills.push(skill(
            &r,
            &format!("skills/{name}"),
            &name,
            &description,
            &body,
        ));
        origins.push(Origin::Original(i));
        texts.push((name, description, body, t));
    }
    let mut k = 0usize;
    while skills.len() < count {
        k += 1;
        let o = rng.below(originals);
        let (name, description, body, t) = &texts[o];
        let topic = &topics[*t];
        let r = reg(&mut rng);
        if rng.chance(75) {
            // Near-copy: one to three edits.
            let mut name = name.clone();
            let mut body = body.clone();
            let mut description = description.clone();
            for _ in 0..=rng.below(3) {
                match rng.below(4) {
                    0 => name = format!("{}-{}", pseudo_word(&mut rng), name),
                    1 => {
                        body = body
                            .replace("## ", "### ")
                            .replace("- ", "* ")
                            .replace(". ", ".\n");
                        description = description.replace("Use when", "Use this skill when");
                    }
                    2 => {
                        let keep = body.len() * (50 + rng.below(45)) / 100;
                        let cut = body[..keep].rfind('\n').unwrap_or(keep);
                        body.truncate(cut);
                    }
                    _ => {
                        let extra = section(&mut rng, topic);
                        let at = body.find("\n## ").map_or(body.len(), |p| p + 1);
                        body.insert_str(at, &extra);
                    }
                }
            }
            skills.push(skill(
                &r,
                &format!("copies/{name}-{k}"),
                &name,
                &description,
                &body,
            ));
            origins.push(Origin::Copy(o));
        } else {
            // Variant: same topic and purpose words, independently written body.
            let description = format!(
                "{} Works with {}.",
                description.trim_end_matches('.'),
                topic.words[rng.below(12)]
            );
            let mut body = format!("# {name}\n\n{}\n\n", sentence(&mut rng, topic, 15));
            for _ in 0..2 + rng.below(4) {
                body.push_str(&section(&mut rng, topic));
            }
            skills.push(skill(
                &r,
                &format!("variants/{name}-{k}"),
                name,
                &description,
                &body,
            ));
            origins.push(Origin::Variant(o));
        }
    }
    (skills, origins)
}
