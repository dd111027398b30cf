//! Capability types: one primary type per skill from a versioned taxonomy
//! (`capabilities/v1.toml`), with a confidence, or `unknown`.
//!
//! Evidence, each counted once per distinct keyword (or declared value) of a type:
//!
//! | where | what matches | weight |
//! |---|---|---|
//! | declared `category` | a type's `declared` value | 3 |
//! | each declared tag | a `declared` value or a keyword | 2 |
//! | the name (slug words) | a keyword | 2 |
//! | description and "use when" text | a keyword | 1 |
//! | the body's headings | a keyword | 0.5, at most 2 per type |
//!
//! Keywords and texts are compared as sequences of lower-case letter/digit words, so `CI/CD`,
//! `ci-cd` and `ci cd` are one phrase. A type's score is its weighted evidence; the **confidence**
//! is the top type's share of all types' evidence (how much of what the skill says points one
//! way). The primary type is the top score (ties: taxonomy order); it is `unknown` when its score
//! is below [`MIN_SCORE`] or its share below [`MIN_SHARE`]. Both thresholds were set from the
//! definitions before any labelled sample was read: at least one name word or two description
//! words, and a plurality of at least a third.

use std::{collections::BTreeSet, sync::LazyLock};

use serde::{Deserialize, Serialize};

/// The taxonomy's version (the `version` of the file compiled in).
pub const TAXONOMY_VERSION: u32 = 1;

/// The type of a skill nothing confidently classifies.
pub const UNKNOWN: &str = "unknown";

/// Least weighted evidence for a type to be named.
pub const MIN_SCORE: f64 = 2.0;

/// Least share of all evidence the top type must carry.
pub const MIN_SHARE: f64 = 1.0 / 3.0;

const WEIGHT_CATEGORY: f64 = 3.0;
const WEIGHT_TAG: f64 = 2.0;
const WEIGHT_NAME: f64 = 2.0;
const WEIGHT_TEXT: f64 = 1.0;
const WEIGHT_HEADING: f64 = 0.5;
const MAX_HEADING_EVIDENCE: f64 = 2.0;
/// Longest keyword phrase, in words.
const MAX_PHRASE: usize = 4;

/// The taxonomy file, as compiled in.
pub const TAXONOMY_TOML: &str = include_str!("../capabilities/v1.toml");

/// One capability type of the taxonomy.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CapabilityType {
    /// Stable id (`bioinformatics`).
    pub id: String,
    /// Display name.
    pub name: String,
    /// What a labeller reads.
    pub definition: String,
    /// Skills that are this type.
    pub examples: Vec<String>,
    /// Words and phrases that are evidence for it.
    pub keywords: Vec<String>,
    /// Tags and registry categories that declare it.
    pub declared: Vec<String>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct TaxonomyFile {
    version: u32,
    #[serde(rename = "type")]
    types: Vec<CapabilityType>,
}

/// The taxonomy: its types in file order, with keywords normalized for matching.
#[derive(Debug)]
pub struct Taxonomy {
    /// The file's version.
    pub version: u32,
    /// The types, in file order.
    pub types: Vec<CapabilityType>,
    keywords: Vec<BTreeSet<String>>,
    declared: Vec<BTreeSet<String>>,
}

/// The taxonomy compiled in (`capabilities/v1.toml`).
///
/// # Panics
/// Never at run time: the file is compiled in and a unit test parses it.
pub fn taxonomy() -> &'static Taxonomy {
    static TAXONOMY: LazyLock<Taxonomy> = LazyLock::new(|| {
        Taxonomy::parse(TAXONOMY_TOML).expect("the compiled-in taxonomy parses (unit-tested)")
    });
    &TAXONOMY
}

impl Taxonomy {
    /// Parses a taxonomy file.
    ///
    /// # Errors
    /// The text is not a taxonomy (TOML shape, duplicate ids, an empty keyword).
    pub fn parse(text: &str) -> Result<Taxonomy, String> {
        let file: TaxonomyFile = toml::from_str(text).map_err(|e| e.to_string())?;
        let mut seen = BTreeSet::new();
        for t in &file.types {
            if t.id == UNKNOWN || !seen.insert(t.id.clone()) {
                return Err(format!("type id `{}` is reserved or repeated", t.id));
            }
        }
        let norm = |xs: &[String]| -> Result<BTreeSet<String>, String> {
            xs.iter()
                .map(|x| {
                    let n = words(x).join(" ");
                    if n.is_empty() || n.split(' ').count() > MAX_PHRASE {
                        Err(format!(
                            "keyword `{x}` is empty or longer than {MAX_PHRASE} words"
                        ))
                    } else {
                        Ok(n)
                    }
                })
                .collect()
        };
        let keywords = file
            .types
            .iter()
            .map(|t| norm(&t.keywords))
            .collect::<Result<_, _>>()?;
        let declared = file
            .types
            .iter()
            .map(|t| norm(&t.declared))
            .collect::<Result<_, _>>()?;
        Ok(Taxonomy {
            version: file.version,
            types: file.types,
            keywords,
            declared,
        })
    }

    /// Classifies one skill from what it declares and says.
    pub fn classify(&self, input: &CapabilityInput<'_>) -> Capability {
        let scores = self.scores(input);
        let total: f64 = scores.iter().sum();
        let mut best: Option<usize> = None;
        for (i, &s) in scores.iter().enumerate() {
            if s > 0.0 && best.is_none_or(|b| s > scores[b]) {
                best = Some(i);
            }
        }
        match best {
            Some(b) => {
                let share = scores[b] / total;
                let confidence = round4(share);
                if scores[b] >= MIN_SCORE && share >= MIN_SHARE {
                    Capability {
                        kind: self.types[b].id.clone(),
                        confidence,
                    }
                } else {
                    Capability {
                        kind: UNKNOWN.to_owned(),
                        confidence,
                    }
                }
            }
            None => Capability::default(),
        }
    }

    /// The texts whose mean embedding is each type's prototype, in taxonomy order: the type's
    /// "name: definition", then each of its examples — the taxonomy's own words, nothing learnt
    /// from labels.
    pub fn prototype_texts(&self) -> Vec<Vec<String>> {
        self.types
            .iter()
            .map(|t| {
                std::iter::once(format!("{}: {}", t.name, t.definition))
                    .chain(t.examples.iter().cloned())
                    .collect()
            })
            .collect()
    }

    /// Each type's weighted evidence, in taxonomy order.
    pub fn scores(&self, input: &CapabilityInput<'_>) -> Vec<f64> {
        let category: Option<String> = input.category.map(|c| words(c).join(" "));
        let tags: Vec<String> = input.tags.iter().map(|t| words(t).join(" ")).collect();
        let name = phrases(&words(input.name));
        let text = phrases(&words(&input.texts.join(" \n ")));
        let headings = phrases(&words(&input.headings.join(" \n ")));
        self.types
            .iter()
            .enumerate()
            .map(|(i, _)| {
                let (kw, decl) = (&self.keywords[i], &self.declared[i]);
                let mut s = 0.0;
                if category.as_ref().is_some_and(|c| decl.contains(c)) {
                    s += WEIGHT_CATEGORY;
                }
                let tagged: BTreeSet<&String> = tags
                    .iter()
                    .filter(|t| decl.contains(*t) || kw.contains(*t))
                    .collect();
                s += WEIGHT_TAG * tagged.len() as f64;
                s += WEIGHT_NAME * kw.intersection(&name).count() as f64;
                s += WEIGHT_TEXT * kw.intersection(&text).count() as f64;
                s += (WEIGHT_HEADING * kw.intersection(&headings).count() as f64)
                    .min(MAX_HEADING_EVIDENCE);
                s
            })
            .collect()
    }
}

/// Scale of the cosines in the prototypes' softmax: 20, the scale all-MiniLM-L6-v2 was trained
/// with (sentence-transformers' multiple-negatives ranking loss), so a share reads as the model's
/// own sense of "which of these".
pub const PROTOTYPE_SCALE: f32 = 20.0;

/// The taxonomy's types as points in an embedding space: each type's prototype is the
/// normalized mean of its [`Taxonomy::prototype_texts`]' vectors.
#[derive(Debug, Clone, PartialEq)]
pub struct Prototypes {
    dim: usize,
    /// Row-major, one normalized row per type, in taxonomy order.
    rows: Vec<f32>,
}

impl Prototypes {
    /// Prototypes from each type's text vectors (taxonomy order; L2-normalized vectors of one
    /// dimension). `None` when a type has no vector or the dimensions disagree.
    pub fn new(per_type: &[Vec<&[f32]>]) -> Option<Prototypes> {
        let dim = per_type.first()?.first()?.len();
        if dim == 0 {
            return None;
        }
        let mut rows = Vec::with_capacity(per_type.len() * dim);
        for vectors in per_type {
            if vectors.is_empty() || vectors.iter().any(|v| v.len() != dim) {
                return None;
            }
            let mut mean = vec![0f32; dim];
            for v in vectors {
                for (m, x) in mean.iter_mut().zip(*v) {
                    *m += x;
                }
            }
            let norm = mean.iter().map(|x| x * x).sum::<f32>().sqrt();
            if norm == 0.0 {
                return None;
            }
            rows.extend(mean.iter().map(|x| x / norm));
        }
        Some(Prototypes { dim, rows })
    }

    /// Types, in taxonomy order.
    pub fn len(&self) -> usize {
        self.rows.len() / self.dim
    }

    /// No types.
    pub fn is_empty(&self) -> bool {
        self.rows.is_empty()
    }

    /// The type whose prototype is nearest to `vector` (a normalized embedding): its share of
    /// `softmax(PROTOTYPE_SCALE × cosine)` over the types is the confidence, and it is `unknown`
    /// below [`MIN_SHARE`] — the floor the word evidence has. Ties: taxonomy order.
    pub fn classify(&self, taxonomy: &Taxonomy, vector: &[f32]) -> Capability {
        if vector.len() != self.dim || self.len() != taxonomy.types.len() {
            return Capability::default();
        }
        let cosines: Vec<f32> = self
            .rows
            .chunks_exact(self.dim)
            .map(|p| p.iter().zip(vector).map(|(a, b)| a * b).sum())
            .collect();
        let mut best = 0;
        for (i, &c) in cosines.iter().enumerate() {
            if c > cosines[best] {
                best = i;
            }
        }
        let top = cosines[best];
        let mass: f64 = cosines
            .iter()
            .map(|&c| f64::from(PROTOTYPE_SCALE * (c - top)).exp())
            .sum();
        let share = 1.0 / mass;
        if !share.is_finite() {
            // A vector with a NaN in it names nothing.
            return Capability::default();
        }
        Capability {
            kind: if share >= MIN_SHARE {
                taxonomy.types[best].id.clone()
            } else {
                UNKNOWN.to_owned()
            },
            confidence: round4(share),
        }
    }
}

/// A skill's type from its word evidence (`words`) and, when there are prototypes and a vector,
/// its description's nearest type prototype: the words' type when they name one; else the
/// nearest prototype's when it is confident (a third of the mass); else `unknown` with the
/// words' confidence. (A prototype majority overriding words without one was tried and
/// dropped: on 40 fresh skills it would have switched, a blind reader preferred the words' type
/// 22 times and the prototype's 14 — docs/capabilities.md.)
pub fn refine(
    prototypes: Option<&Prototypes>,
    taxonomy: &Taxonomy,
    words: &Capability,
    vector: Option<&[f32]>,
) -> (Capability, CapabilityEvidence) {
    if words.kind != UNKNOWN {
        return (words.clone(), CapabilityEvidence::Words);
    }
    match prototypes.zip(vector).map(|(p, v)| p.classify(taxonomy, v)) {
        Some(c) if c.kind != UNKNOWN => (c, CapabilityEvidence::Embedding),
        _ => (words.clone(), CapabilityEvidence::None),
    }
}

/// What named a skill's type.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum CapabilityEvidence {
    /// Extract's word evidence (declared category and tags, name, description, headings).
    Words,
    /// The nearest type prototype of the description's embedding.
    Embedding,
    /// Nothing: `unknown`.
    None,
}

impl CapabilityEvidence {
    /// As written in the `capabilities` table.
    pub fn as_str(self) -> &'static str {
        match self {
            CapabilityEvidence::Words => "words",
            CapabilityEvidence::Embedding => "embedding",
            CapabilityEvidence::None => "none",
        }
    }
}

/// What a skill declares and says, as the classifier reads it.
#[derive(Debug, Clone, Copy, Default)]
pub struct CapabilityInput<'a> {
    /// The name (or slug).
    pub name: &'a str,
    /// Declared `category`.
    pub category: Option<&'a str>,
    /// Declared tags.
    pub tags: &'a [String],
    /// Description and "use when" text.
    pub texts: &'a [&'a str],
    /// The body's headings.
    pub headings: &'a [&'a str],
}

/// A skill's primary capability type.
#[derive(Debug, Clone, PartialEq)]
pub struct Capability {
    /// A type id of the taxonomy, or [`UNKNOWN`].
    pub kind: String,
    /// The top type's share of all evidence, 0–1 (0 when there is none).
    pub confidence: f64,
}

impl Default for Capability {
    fn default() -> Self {
        Capability {
            kind: UNKNOWN.to_owned(),
            confidence: 0.0,
        }
    }
}

/// Lower-case letter/digit words.
fn words(text: &str) -> Vec<String> {
    text.split(|c: char| !c.is_alphanumeric())
        .filter(|w| !w.is_empty())
        .map(str::to_lowercase)
        .collect()
}

/// Every phrase of 1 to [`MAX_PHRASE`] consecutive words.
fn phrases(words: &[String]) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    for i in 0..words.len() {
        let mut p = String::new();
        for (n, w) in words[i..].iter().take(MAX_PHRASE).enumerate() {
            if n > 0 {
                p.push(' ');
            }
            p.push_str(w);
            out.insert(p.clone());
        }
    }
    out
}

/// One hand label (`labels/capabilities-v1.csv`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CapabilityLabel {
    /// Registry name.
    pub registry: String,
    /// The skill folder in the registry.
    pub path: String,
    /// The labelled type (or `unknown`).
    pub kind: String,
    /// A second type just as defensible.
    pub also: Option<String>,
    /// `file:line`.
    pub at: String,
}

impl CapabilityLabel {
    /// Reads a labels CSV (`registry,path,type[,also,…]`).
    ///
    /// # Errors
    /// A missing column or a malformed record, as `file:line: …`.
    pub fn parse_csv(text: &str, file: &str) -> Result<Vec<CapabilityLabel>, String> {
        let rows = skg_model::labels::read_csv_columns(
            text,
            file,
            &["registry", "path", "type"],
            &["also"],
        )?;
        Ok(rows
            .into_iter()
            .map(|r| CapabilityLabel {
                registry: r.get(0).to_owned(),
                path: r.get(1).to_owned(),
                kind: r.get(2).to_owned(),
                also: Some(r.get(3).to_owned()).filter(|a| !a.is_empty()),
                at: r.at,
            })
            .collect())
    }
}

/// How the classifier agrees with hand labels.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct CapabilityEval {
    /// The taxonomy version evaluated.
    pub taxonomy_version: u32,
    /// Labels read.
    pub labels: usize,
    /// Labels whose skill was found among the skills (the rest are listed in `missing`).
    pub matched: usize,
    /// Labels whose skill was not found (`file:line registry path`).
    pub missing: Vec<String>,
    /// Share of matched skills whose type equals the label.
    pub accuracy: f64,
    /// …or the label's `also`.
    pub accuracy_lenient: f64,
    /// Share of matched skills the classifier typed (not `unknown`).
    pub typed: f64,
    /// Accuracy over the typed ones (how far a named type can be trusted).
    pub precision_when_typed: f64,
    /// The ten most frequent labelled types, then `other` and `unknown`: the confusion matrix's
    /// row and column names.
    pub confusion_types: Vec<String>,
    /// `confusion[label][predicted]`, counts, in `confusion_types` order.
    pub confusion: Vec<Vec<usize>>,
    /// Per labelled type (most frequent first): (type, labelled, predicted, correct).
    pub per_type: Vec<(String, usize, usize, usize)>,
}

/// Compares each labelled skill's type with its label.
pub fn evaluate(skills: &[skg_model::Skill], labels: &[CapabilityLabel]) -> CapabilityEval {
    let by_place: std::collections::HashMap<(&str, &str), &skg_model::Skill> = skills
        .iter()
        .map(|s| ((s.registry.as_str(), s.root.as_str()), s))
        .collect();
    let mut pairs: Vec<(&CapabilityLabel, &str)> = Vec::new();
    let mut missing = Vec::new();
    for l in labels {
        match by_place.get(&(l.registry.as_str(), l.path.as_str())) {
            Some(s) => pairs.push((l, s.capability.as_str())),
            None => missing.push(format!("{} {} {}", l.at, l.registry, l.path)),
        }
    }
    let n = pairs.len();
    let share = |x: usize, of: usize| {
        if of == 0 {
            0.0
        } else {
            round4(x as f64 / of as f64)
        }
    };
    let correct = pairs.iter().filter(|(l, p)| l.kind == *p).count();
    let lenient = pairs
        .iter()
        .filter(|(l, p)| l.kind == *p || l.also.as_deref() == Some(*p))
        .count();
    let typed: Vec<_> = pairs.iter().filter(|(_, p)| *p != UNKNOWN).collect();
    let typed_correct = typed.iter().filter(|(l, p)| l.kind == *p).count();
    let mut freq: std::collections::BTreeMap<&str, usize> = std::collections::BTreeMap::new();
    for (l, _) in &pairs {
        *freq.entry(l.kind.as_str()).or_default() += 1;
    }
    let mut order: Vec<(&str, usize)> = freq.into_iter().collect();
    order.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(b.0)));
    let per_type = order
        .iter()
        .map(|&(t, labelled)| {
            let predicted = pairs.iter().filter(|(_, p)| *p == t).count();
            let right = pairs.iter().filter(|(l, p)| l.kind == t && *p == t).count();
            (t.to_owned(), labelled, predicted, right)
        })
        .collect();
    let mut names: Vec<String> = order
        .iter()
        .map(|(t, _)| (*t).to_owned())
        .filter(|t| t != UNKNOWN)
        .take(10)
        .collect();
    names.push("other".into());
    names.push(UNKNOWN.into());
    let slot = |t: &str| names.iter().position(|x| x == t).unwrap_or(names.len() - 2);
    let mut confusion = vec![vec![0usize; names.len()]; names.len()];
    for (l, p) in &pairs {
        confusion[slot(&l.kind)][slot(p)] += 1;
    }
    CapabilityEval {
        taxonomy_version: TAXONOMY_VERSION,
        labels: labels.len(),
        matched: n,
        missing,
        accuracy: share(correct, n),
        accuracy_lenient: share(lenient, n),
        typed: share(typed.len(), n),
        precision_when_typed: share(typed_correct, typed.len()),
        confusion_types: names,
        confusion,
        per_type,
    }
}

fn round4(x: f64) -> f64 {
    (x * 1e4).round() / 1e4
}

impl std::fmt::Display for CapabilityEval {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        writeln!(
            f,
            "capability types (taxonomy v{}): {} labels, {} matched; accuracy {:.3} (label or its `also` {:.3}); typed {:.3}, correct when typed {:.3}",
            self.taxonomy_version,
            self.labels,
            self.matched,
            self.accuracy,
            self.accuracy_lenient,
            self.typed,
            self.precision_when_typed
        )?;
        for m in &self.missing {
            writeln!(f, "  not found: {m}")?;
        }
        writeln!(f, "confusion (rows: label, columns: predicted):")?;
        let w = self
            .confusion_types
            .iter()
            .map(String::len)
            .max()
            .unwrap_or(5);
        write!(f, "{:w$}", "")?;
        for (i, _) in self.confusion_types.iter().enumerate() {
            write!(f, " {:>3}", i + 1)?;
        }
        writeln!(f)?;
        for (i, (t, row)) in self.confusion_types.iter().zip(&self.confusion).enumerate() {
            write!(f, "{t:w$}")?;
            for c in row {
                write!(f, " {c:>3}")?;
            }
            writeln!(f, "   ({})", i + 1)?;
        }
        writeln!(f, "per type (labelled / predicted / correct):")?;
        for (t, l, p, c) in &self.per_type {
            writeln!(f, "  {t:w$} {l:>3} {p:>3} {c:>3}")?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const SMALL: &str = r#"
version = 1
[[type]]
id = "testing"
name = "Testing"
definition = "Tests."
examples = []
keywords = ["test", "unit tests", "pytest"]
declared = ["testing", "QA"]
[[type]]
id = "devops"
name = "DevOps"
definition = "Shipping."
examples = []
keywords = ["ci/cd", "deploy", "docker"]
declared = ["CI/CD Integrations"]
"#;

    fn input<'a>(
        name: &'a str,
        category: Option<&'a str>,
        tags: &'a [String],
        texts: &'a [&'a str],
        headings: &'a [&'a str],
    ) -> CapabilityInput<'a> {
        CapabilityInput {
            name,
            category,
            tags,
            texts,
            headings,
        }
    }

    #[test]
    fn the_compiled_in_taxonomy_parses() {
        let t = taxonomy();
        assert_eq!(t.version, TAXONOMY_VERSION);
        assert!(t.types.len() >= 24, "a few dozen types");
        assert!(t.types.iter().all(|x| !x.definition.is_empty()));
    }

    #[test]
    fn evidence_is_weighted_by_where_it_is_found() {
        let t = Taxonomy::parse(SMALL).expect("parses");
        let tags = vec!["qa".to_owned(), "docker".to_owned()];
        // testing: tag `qa` (declared) 2 + name `pytest` 2 + text `unit tests`, `test` 1 + 1 = 6
        //   (`test` in "test runner" too, counted once); headings: `pytest` 0.5.
        // devops: category 3 + tag `docker` (keyword) 2 + text `ci cd` 1 = 6; heading `deploy` 0.5.
        let tags_in = input(
            "pytest-runner",
            Some("CI/CD integrations"),
            &tags,
            &["Write unit tests; a test runner for CI-CD"],
            &["Pytest setup", "Deploy"],
        );
        assert_eq!(t.scores(&tags_in), vec![6.5, 6.5]);
        // A tie goes to the taxonomy's first type; the share is 6.5 / 13.
        let c = t.classify(&tags_in);
        assert_eq!(
            c,
            Capability {
                kind: "testing".into(),
                confidence: 0.5
            }
        );
    }

    #[test]
    fn weak_or_split_evidence_is_unknown() {
        let t = Taxonomy::parse(SMALL).expect("parses");
        // One description word: score 1 < 2.
        let c = t.classify(&input("x", None, &[], &["docker only"], &[]));
        assert_eq!(c.kind, UNKNOWN);
        assert!((c.confidence - 1.0).abs() < 1e-12);
        // Nothing at all.
        assert_eq!(
            t.classify(&input("x", None, &[], &[], &[])),
            Capability::default()
        );
        // Headings weigh 0.5 each: three keywords in headings alone make 1.5 < 2.
        let c = t.classify(&input(
            "x",
            None,
            &[],
            &[],
            &["test", "unit tests", "pytest"],
        ));
        assert_eq!(c.kind, UNKNOWN);
    }

    #[test]
    fn evaluation_counts_by_hand() {
        let mk = |root: &str, kind: &str| {
            let mut s = skg_model::Skill::from_text("r", root, root, "", "");
            s.capability = kind.to_owned();
            s
        };
        let skills = vec![
            mk("a", "testing"),
            mk("b", "devops"),
            mk("c", UNKNOWN),
            mk("d", "testing"),
        ];
        let labels = CapabilityLabel::parse_csv(
            "registry,path,type,also\nr,a,testing,\nr,b,testing,devops\nr,c,devops,\nr,d,devops,\nr,zz,testing,\n",
            "l.csv",
        )
        .expect("parses");
        let e = evaluate(&skills, &labels);
        // 4 matched (zz missing): a right; b wrong but its `also`; c unknown; d wrong.
        assert_eq!((e.labels, e.matched), (5, 4));
        assert_eq!(e.missing, vec!["l.csv:6 r zz".to_owned()]);
        assert!((e.accuracy - 0.25).abs() < 1e-12);
        assert!((e.accuracy_lenient - 0.5).abs() < 1e-12);
        assert!((e.typed - 0.75).abs() < 1e-12);
        assert!((e.precision_when_typed - 1.0 / 3.0).abs() < 1e-4);
        // Labelled types by frequency: devops 2, testing 2 → devops first (ties by name).
        assert_eq!(e.confusion_types, ["devops", "testing", "other", "unknown"]);
        // devops row: c → unknown, d → testing; testing row: a → testing, b → devops.
        assert_eq!(
            e.confusion,
            vec![vec![0, 1, 0, 1], vec![1, 1, 0, 0], vec![0; 4], vec![0; 4]]
        );
    }

    #[test]
    fn repeated_or_reserved_ids_are_refused() {
        let twice = format!(
            "{SMALL}\n[[type]]\nid = \"testing\"\nname = \"x\"\ndefinition = \"x\"\nexamples = []\nkeywords = [\"x\"]\ndeclared = []\n"
        );
        assert!(Taxonomy::parse(&twice).is_err());
        let unknown = SMALL.replace("id = \"devops\"", "id = \"unknown\"");
        assert!(Taxonomy::parse(&unknown).is_err());
    }

    #[test]
    fn prototype_texts_are_the_name_definition_then_the_examples() {
        let t =
            Taxonomy::parse(&SMALL.replacen("examples = []", "examples = [\"pytest suites\"]", 1))
                .expect("parses");
        assert_eq!(
            t.prototype_texts(),
            vec![
                vec!["Testing: Tests.".to_owned(), "pytest suites".to_owned()],
                vec!["DevOps: Shipping.".to_owned()],
            ]
        );
    }

    #[test]
    fn the_nearest_prototype_and_its_softmax_share_by_hand() {
        let t = Taxonomy::parse(SMALL).expect("parses");
        // testing: mean of (1, 0) and (0.6, 0.8) = (0.8, 0.4), normalized (0.894427, 0.447214).
        let p = Prototypes::new(&[vec![&[1.0, 0.0], &[0.6, 0.8]], vec![&[0.0, 1.0]]])
            .expect("prototypes");
        assert_eq!(p.len(), 2);
        assert!((p.rows[0] - 0.894_427).abs() < 1e-5 && (p.rows[1] - 0.447_214).abs() < 1e-5);
        // Cosines 0.894427 and 0: share 1 / (1 + e^(-20 × 0.894427)) = 1 − 1.7e-8 → 1.
        let c = p.classify(&t, &[1.0, 0.0]);
        assert_eq!((c.kind.as_str(), c.confidence), ("testing", 1.0));
        // Prototypes (1, 0) and (0, 1), a vector with dots 0.55 and 0.5: a gap of 0.05 is
        // 1 / (1 + e^-1) = 0.7311 of the mass.
        let p = Prototypes::new(&[vec![&[1.0, 0.0]], vec![&[0.0, 1.0]]]).expect("prototypes");
        let c = p.classify(&t, &[0.55, 0.5]);
        assert_eq!((c.kind.as_str(), c.confidence), ("testing", 0.7311));
        let c = p.classify(&t, &[0.5, 0.55]);
        assert_eq!((c.kind.as_str(), c.confidence), ("devops", 0.7311));
        // A wrong dimension, a NaN or a prototype count that is not the taxonomy's: no type.
        assert_eq!(p.classify(&t, &[1.0]), Capability::default());
        assert_eq!(p.classify(&t, &[f32::NAN, 0.0]), Capability::default());
        assert!(Prototypes::new(&[vec![&[1.0, 0.0]], vec![]]).is_none());
        assert!(Prototypes::new(&[vec![&[1.0, 0.0]], vec![&[1.0]]]).is_none());
    }

    #[test]
    fn a_prototype_without_a_third_of_the_mass_is_unknown() {
        use CapabilityEvidence as E;
        let four = format!(
            "{SMALL}\n[[type]]\nid = \"a\"\nname = \"A\"\ndefinition = \"a\"\nexamples = []\nkeywords = [\"a\"]\ndeclared = []\n[[type]]\nid = \"b\"\nname = \"B\"\ndefinition = \"b\"\nexamples = []\nkeywords = [\"b\"]\ndeclared = []\n"
        );
        let t = Taxonomy::parse(&four).expect("parses");
        let axes: [[f32; 4]; 4] = [
            [1.0, 0.0, 0.0, 0.0],
            [0.0, 1.0, 0.0, 0.0],
            [0.0, 0.0, 1.0, 0.0],
            [0.0, 0.0, 0.0, 1.0],
        ];
        let p = Prototypes::new(&axes.iter().map(|a| vec![&a[..]]).collect::<Vec<_>>())
            .expect("prototypes");
        // Equally near all four: 1/4 of the mass < 1/3.
        let c = p.classify(&t, &[0.5, 0.5, 0.5, 0.5]);
        assert_eq!((c.kind.as_str(), c.confidence), (UNKNOWN, 0.25));
        // How `refine` weighs the words against the nearest prototype: `axes[0]` puts all the
        // mass on `testing` (1 / (1 + 3 e^-20) → 1); [0.6, 0.6, 0.4, 0.4] gives its top type
        // e^4 / (2 e^4 + 2) = 0.4910; [0.5; 4] a quarter, short of a third.
        let cap = |kind: &str, confidence: f64| Capability {
            kind: kind.into(),
            confidence,
        };
        let (tie, flat): ([f32; 4], [f32; 4]) = ([0.6, 0.6, 0.4, 0.4], [0.5; 4]);
        let testing = Some(&axes[0][..]);
        for (words, vector, want, evidence) in [
            // A type the words named stands, with or without a majority, whatever the prototype
            // says (its majority overriding words without one did not hold on fresh skills).
            (cap("devops", 0.6), testing, cap("devops", 0.6), E::Words),
            (cap("devops", 0.4), testing, cap("devops", 0.4), E::Words),
            (cap("devops", 0.5), testing, cap("devops", 0.5), E::Words),
            (
                cap("devops", 0.4),
                Some(&tie[..]),
                cap("devops", 0.4),
                E::Words,
            ),
            (cap("devops", 0.4), None, cap("devops", 0.4), E::Words),
            // The words say `unknown`: a prototype with a third of the mass names the type; one
            // without it, or no vector, leaves `unknown` with the words' confidence.
            (
                cap(UNKNOWN, 0.25),
                testing,
                cap("testing", 1.0),
                E::Embedding,
            ),
            (
                cap(UNKNOWN, 0.25),
                Some(&tie[..]),
                cap("testing", 0.491),
                E::Embedding,
            ),
            (
                cap(UNKNOWN, 0.25),
                Some(&flat[..]),
                cap(UNKNOWN, 0.25),
                E::None,
            ),
            (cap(UNKNOWN, 0.25), None, cap(UNKNOWN, 0.25), E::None),
        ] {
            let got = refine(Some(&p), &t, &words, vector);
            assert_eq!(got, (want, evidence), "{words:?} {vector:?}");
        }
        // Without prototypes (no embeddings): the words' type, or `unknown`.
        assert_eq!(
            refine(None, &t, &cap("devops", 0.4), testing),
            (cap("devops", 0.4), E::Words)
        );
        assert_eq!(
            refine(None, &t, &cap(UNKNOWN, 0.0), testing),
            (cap(UNKNOWN, 0.0), E::None)
        );
    }
}
