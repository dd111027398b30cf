//! Per-skill features. Every feature is computed from pipeline data (skills, relation edges,
//! diagnostics, and canonicalize's clusters when present), is documented here, and is
//! registry-agnostic: nothing encodes which registry a skill comes from. Corpus statistics
//! (template n-grams) are learned from the skills being scored, so they adapt to unseen data.

use std::{
    collections::{HashMap, HashSet},
    hash::BuildHasher,
};

use foldhash::fast::FixedState;
use rayon::prelude::*;
use skg_model::{Diagnostic, Edge, EdgeSource, FrontmatterStatus, Member, Role, Severity, Skill};

/// Names and meanings of the features, in vector order.
pub const FEATURES: &[(&str, &str)] = &[
    ("desc_chars_log", "ln(1 + characters of the description)"),
    (
        "desc_says_when",
        "1 when the description says when to use the skill (\"use when\", \"when …\", \"use for\", \"triggers\")",
    ),
    (
        "desc_template",
        "share of the description's word 3-grams that occur in the descriptions of many other skills (learned template)",
    ),
    (
        "desc_nearest",
        "closest description of a skill in another duplicate cluster (embedding cosine, from canonicalize; 0 without it): description uniqueness",
    ),
    (
        "desc_generic",
        "share of description words that are generic praise or filler (comprehensive, powerful, seamless, …)",
    ),
    ("body_words_log", "ln(1 + words of the body)"),
    ("headings_log", "ln(1 + markdown headings in the body)"),
    ("code_blocks_log", "ln(1 + fenced code blocks)"),
    ("code_lines_log", "ln(1 + lines inside fenced code blocks)"),
    (
        "inline_code_density",
        "inline code spans per 100 body words (capped at 20)",
    ),
    ("list_items_log", "ln(1 + bullet and numbered list items)"),
    (
        "body_template",
        "share of the body's word 5-grams that occur in many other skills' bodies (learned template / boilerplate skeleton)",
    ),
    (
        "boilerplate_phrases",
        "known LLM/catalogue boilerplate phrases per 1,000 body words (capped at 20)",
    ),
    (
        "placeholder",
        "1 when the text holds placeholder or extraction-failure text (TODO, lorem ipsum, {{…}}, \"no usage instructions\")",
    ),
    (
        "desc_body_overlap",
        "share of the body's distinct content words that are also in the description (a body that only restates it)",
    ),
    (
        "link_density",
        "links and URLs per 100 body words (capped at 20)",
    ),
    (
        "install_share",
        "share of non-empty body lines that are install commands (npm/pip/brew install, npx, git clone)",
    ),
    (
        "empty_content",
        "1 when the body has no code, no list, no inline code and fewer than 80 words: nothing actionable",
    ),
    (
        "degree_log",
        "ln(1 + relation edges in or out, AMBIGUOUS excluded): graph isolation",
    ),
    (
        "is_alias",
        "1 when canonicalize made the skill an alias (a duplicate of another canonical)",
    ),
    (
        "name_collision",
        "1 when another cluster's skill has a name within edit distance 2 (name collision)",
    ),
    (
        "script_duplicate",
        "1 when one of its scripts has the same structural hash as a script of another cluster",
    ),
    (
        "frontmatter_problem",
        "0 strict, 0.5 repaired, 1 salvaged or missing frontmatter",
    ),
    (
        "diagnostics_log",
        "ln(1 + content problems reported for the skill: missing/overlong description, missing name, broken or missing frontmatter; naming-style and link diagnostics are not counted — they follow a registry's house style or export)",
    ),
    (
        "name_folder_mismatch",
        "1 when the declared name does not match the folder name",
    ),
];

/// What features are computed from.
#[derive(Debug, Clone, Copy)]
pub struct Context<'a> {
    /// The skills to score (the corpus the templates are learned from).
    pub skills: &'a [Skill],
    /// Relation edges from extract.
    pub edges: &'a [Edge],
    /// Diagnostics from extract.
    pub diagnostics: &'a [Diagnostic],
    /// Cluster membership from canonicalize, when available.
    pub members: Option<&'a [Member]>,
}

const GENERIC: &[&str] = &[
    "comprehensive",
    "powerful",
    "seamless",
    "seamlessly",
    "robust",
    "advanced",
    "expert",
    "various",
    "efficiently",
    "effortlessly",
    "leverage",
    "cutting",
    "edge",
    "ultimate",
    "best",
    "practices",
    "world",
    "class",
    "unlock",
    "elevate",
    "supercharge",
    "enhance",
    "streamline",
    "innovative",
    "professional",
    "complete",
    "all",
    "any",
    "everything",
];

const BOILERPLATE: &[&str] = &[
    "no usage instructions could be extracted",
    "this skill provides",
    "this skill enables",
    "this skill helps",
    "use this skill when working on",
    "use when working on",
    "tasks or workflows",
    "in today's",
    "whether you're",
    "take your",
    "to the next level",
    "i'm here to help",
    "as an ai",
    "feel free to",
    "best practices",
    "seamlessly",
    "comprehensive guide",
    "unlock the power",
    "powered by",
    "star this repo",
    "view on github",
    "source repository",
];

const PLACEHOLDERS: &[&str] = &[
    "todo:",
    "tbd",
    "lorem ipsum",
    "{{",
    "[insert",
    "<insert",
    "your-api-key-here",
    "placeholder",
    "no usage instructions",
    "coming soon",
    "fill in",
];

const INSTALL: &[&str] = &[
    "npm install",
    "npm i ",
    "pip install",
    "brew install",
    "npx ",
    "git clone",
    "cargo install",
    "go install",
    "pnpm add",
    "yarn add",
];

fn hash(s: &str) -> u64 {
    FixedState::with_seed(0x736b_6773_636f_7265).hash_one(s)
}

fn words(text: &str) -> Vec<String> {
    text.split(|c: char| !c.is_alphanumeric())
        .filter(|w| !w.is_empty())
        .map(str::to_lowercase)
        .collect()
}

fn grams(ws: &[String], n: usize) -> Vec<u64> {
    let mut out: Vec<u64> = if ws.len() < n {
        Vec::new()
    } else {
        ws.windows(n).map(|w| hash(&w.join(" "))).collect()
    };
    out.sort_unstable();
    out.dedup();
    out
}

/// Body-structure counts of one skill.
#[derive(Debug, Default)]
struct Shape {
    headings: usize,
    code_blocks: usize,
    code_lines: usize,
    inline_code: usize,
    list_items: usize,
    links: usize,
    install_lines: usize,
    nonempty_lines: usize,
}

fn shape(body: &str) -> Shape {
    let mut s = Shape::default();
    let mut in_code = false;
    for line in body.lines() {
        let t = line.trim_start();
        if t.starts_with("```") || t.starts_with("~~~") {
            if !in_code {
                s.code_blocks += 1;
            }
            in_code = !in_code;
            continue;
        }
        if t.is_empty() {
            continue;
        }
        s.nonempty_lines += 1;
        let lower = t.to_lowercase();
        if INSTALL.iter().any(|p| lower.contains(p)) {
            s.install_lines += 1;
        }
        if in_code {
            s.code_lines += 1;
            continue;
        }
        if t.starts_with('#') {
            s.headings += 1;
        }
        let bytes = t.as_bytes();
        let numbered = bytes.iter().take_while(|b| b.is_ascii_digit()).count();
        if t.starts_with("- ")
            || t.starts_with("* ")
            || t.starts_with("+ ")
            || (numbered > 0 && t[numbered..].starts_with(". "))
        {
            s.list_items += 1;
        }
        s.inline_code += t.matches('`').count() / 2;
        s.links +=
            t.matches("](").count() + t.matches("http://").count() + t.matches("https://").count();
    }
    s
}

/// The feature vectors, one per skill in `ctx.skills` order, in [`FEATURES`] order.
pub fn compute(ctx: &Context<'_>) -> Vec<Vec<f64>> {
    let n = ctx.skills.len();
    // Group of each skill: its duplicate cluster when known (copies must not count as a template).
    let cluster: HashMap<&str, &str> = ctx
        .members
        .map(|ms| {
            ms.iter()
                .map(|m| (m.id.as_str(), m.cluster_id.as_str()))
                .collect()
        })
        .unwrap_or_default();
    let group = |s: &Skill| -> String {
        cluster
            .get(s.id.as_str())
            .map_or_else(|| s.id.to_string(), |c| (*c).to_owned())
    };
    let groups: Vec<String> = ctx.skills.iter().map(group).collect();
    let body_words: Vec<Vec<String>> = ctx.skills.par_iter().map(|s| words(&s.body)).collect();
    let desc_words: Vec<Vec<String>> = ctx
        .skills
        .par_iter()
        .map(|s| words(&s.description))
        .collect();
    let body_grams: Vec<Vec<u64>> = body_words.par_iter().map(|w| grams(w, 5)).collect();
    let desc_grams: Vec<Vec<u64>> = desc_words.par_iter().map(|w| grams(w, 3)).collect();
    // Document frequency over clusters: a template is text shared by many different skills.
    let df = |all: &[Vec<u64>]| -> HashMap<u64, u32> {
        let mut seen: HashMap<u64, HashSet<&str>> = HashMap::new();
        for (g, grams) in all.iter().enumerate() {
            for &h in grams {
                let e = seen.entry(h).or_default();
                if e.len() < 64 {
                    e.insert(groups[g].as_str());
                }
            }
        }
        seen.into_iter()
            .map(|(h, s)| (h, u32::try_from(s.len()).unwrap_or(u32::MAX)))
            .collect()
    };
    let body_df = df(&body_grams);
    let desc_df = df(&desc_grams);
    let template_min = u32::try_from((n / 500).max(10)).unwrap_or(u32::MAX);
    let share = |grams: &[u64], df: &HashMap<u64, u32>| {
        if grams.is_empty() {
            0.0
        } else {
            grams
                .iter()
                .filter(|h| df.get(h).copied().unwrap_or(0) >= template_min)
                .count() as f64
                / grams.len() as f64
        }
    };

    let mut degree: HashMap<&str, u32> = HashMap::new();
    for e in ctx
        .edges
        .iter()
        .filter(|e| e.source != EdgeSource::Ambiguous)
    {
        *degree.entry(e.src.as_str()).or_default() += 1;
        *degree.entry(e.dst.as_str()).or_default() += 1;
    }
    let mut diag_count: HashMap<(&str, &str), u32> = HashMap::new();
    for d in ctx
        .diagnostics
        .iter()
        .filter(|d| d.severity != Severity::Info && counts_as_content_problem(d.code.as_str()))
    {
        *diag_count
            .entry((d.registry.as_str(), d.path.as_str()))
            .or_default() += 1;
    }
    let role: HashMap<&str, Role> = ctx
        .members
        .map(|ms| ms.iter().map(|m| (m.id.as_str(), m.role)).collect())
        .unwrap_or_default();
    let nearest: HashMap<&str, f64> = ctx
        .members
        .map(|ms| {
            ms.iter()
                .map(|m| (m.id.as_str(), m.nearest_description))
                .collect()
        })
        .unwrap_or_default();
    // Names and script hashes by group, for collisions across clusters.
    let mut script_groups: HashMap<&str, HashSet<&str>> = HashMap::new();
    for (s, g) in ctx.skills.iter().zip(&groups) {
        for x in s.script_structures.iter().filter(|x| x.tokens >= 12) {
            script_groups
                .entry(x.hash.as_str())
                .or_default()
                .insert(g.as_str());
        }
    }
    let names: Vec<String> = ctx.skills.iter().map(|s| s.slug.to_lowercase()).collect();
    let mut by_prefix: HashMap<String, Vec<usize>> = HashMap::new();
    for (i, name) in names.iter().enumerate() {
        by_prefix
            .entry(name.chars().take(3).collect())
            .or_default()
            .push(i);
    }

    (0..n)
        .into_par_iter()
        .map(|i| {
            let s = &ctx.skills[i];
            let sh = shape(&s.body);
            let bw = &body_words[i];
            let dw = &desc_words[i];
            let nb = bw.len() as f64;
            let per100 = |x: usize| {
                if nb == 0.0 {
                    0.0
                } else {
                    (x as f64 * 100.0 / nb).min(20.0)
                }
            };
            let desc_lower = s.description.to_lowercase();
            let body_lower = s.body.to_lowercase();
            let says_when = [
                "use when", "when ", "use for", "use this", "trigger", "use it",
            ]
            .iter()
            .any(|p| desc_lower.contains(p));
            let generic = if dw.is_empty() {
                0.0
            } else {
                dw.iter().filter(|w| GENERIC.contains(&w.as_str())).count() as f64 / dw.len() as f64
            };
            let boiler = BOILERPLATE
                .iter()
                .map(|p| body_lower.matches(p).count() + desc_lower.matches(p).count())
                .sum::<usize>();
            let placeholder = PLACEHOLDERS
                .iter()
                .any(|p| body_lower.contains(p) || desc_lower.contains(p));
            let dset: HashSet<&str> = dw
                .iter()
                .map(String::as_str)
                .filter(|w| w.len() > 3)
                .collect();
            let bset: HashSet<&str> = bw
                .iter()
                .map(String::as_str)
                .filter(|w| w.len() > 3)
                .collect();
            let overlap = if bset.is_empty() {
                1.0
            } else {
                bset.iter().filter(|w| dset.contains(*w)).count() as f64 / bset.len() as f64
            };
            let empty =
                sh.code_blocks == 0 && sh.list_items == 0 && sh.inline_code == 0 && bw.len() < 80;
            let deg = degree.get(s.id.as_str()).copied().unwrap_or(0);
            let alias = role.get(s.id.as_str()) == Some(&Role::Duplicate);
            let collision = by_prefix
                .get(&names[i].chars().take(3).collect::<String>())
                .is_some_and(|cands| {
                    cands.iter().any(|&j| {
                        j != i && groups[j] != groups[i] && edit_distance(&names[i], &names[j]) <= 2
                    })
                });
            let script_dup = s.script_structures.iter().any(|x| {
                script_groups
                    .get(x.hash.as_str())
                    .is_some_and(|g| g.len() > 1)
            });
            let fm = match s.frontmatter.status {
                FrontmatterStatus::Ok | FrontmatterStatus::NotApplicable => 0.0,
                FrontmatterStatus::Repaired => 0.5,
                FrontmatterStatus::Salvaged | FrontmatterStatus::Missing => 1.0,
            };
            let diags = diag_count
                .get(&(s.registry.as_str(), s.path.as_str()))
                .copied()
                .unwrap_or(0);
            let ln1p = |x: usize| (x as f64).ln_1p();
            vec![
                ln1p(s.description.chars().count()),
                f64::from(u8::from(says_when)),
                share(&desc_grams[i], &desc_df),
                nearest.get(s.id.as_str()).copied().unwrap_or(0.0),
                generic,
                ln1p(bw.len()),
                ln1p(sh.headings),
                ln1p(sh.code_blocks),
                ln1p(sh.code_lines),
                per100(sh.inline_code),
                ln1p(sh.list_items),
                share(&body_grams[i], &body_df),
                if nb == 0.0 {
                    0.0
                } else {
                    (boiler as f64 * 1000.0 / nb).min(20.0)
                },
                f64::from(u8::from(placeholder)),
                overlap,
                per100(sh.links),
                if sh.nonempty_lines == 0 {
                    0.0
                } else {
                    sh.install_lines as f64 / sh.nonempty_lines as f64
                },
                f64::from(u8::from(empty)),
                f64::from(deg).ln_1p(),
                f64::from(u8::from(alias)),
                f64::from(u8::from(collision)),
                f64::from(u8::from(script_dup)),
                fm,
                f64::from(diags).ln_1p(),
                f64::from(u8::from(!s.name_matches_folder)),
            ]
        })
        .collect()
}

/// Diagnostics that say the skill's own content is broken (not its naming style, not links that
/// an export dropped).
fn counts_as_content_problem(code: &str) -> bool {
    code.starts_with("frontmatter-")
        || code.starts_with("yaml-")
        || matches!(
            code,
            "description-missing" | "description-too-long" | "name-missing"
        )
}

/// Levenshtein distance, bounded work for short names.
fn edit_distance(a: &str, b: &str) -> usize {
    let a: Vec<char> = a.chars().collect();
    let b: Vec<char> = b.chars().collect();
    if a.len().abs_diff(b.len()) > 2 {
        return 3;
    }
    let mut prev: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.iter().enumerate() {
        let mut cur = vec![i + 1; b.len() + 1];
        for (j, cb) in b.iter().enumerate() {
            cur[j + 1] = (prev[j] + usize::from(ca != cb))
                .min(prev[j + 1] + 1)
                .min(cur[j] + 1);
        }
        prev = cur;
    }
    prev[b.len()]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn edit_distance_by_hand() {
        assert_eq!(edit_distance("kitten", "sitting"), 3);
        assert_eq!(edit_distance("pdf", "pdfs"), 1);
        assert_eq!(edit_distance("same", "same"), 0);
    }

    #[test]
    fn shape_counts_structure() {
        let s =
            shape("# T\n\n- a `x`\n1. b\n\n```sh\nnpm install y\nrun\n```\nsee [d](e) https://f\n");
        assert_eq!(
            (
                s.headings,
                s.code_blocks,
                s.code_lines,
                s.list_items,
                s.inline_code,
                s.links
            ),
            (1, 1, 2, 2, 1, 2)
        );
        assert_eq!(s.install_lines, 1);
    }
}
