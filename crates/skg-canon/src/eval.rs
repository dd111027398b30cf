//! Measuring canonicalization: labelled pairs (precision / recall / F1 of `duplicate`, the
//! confusion over duplicate / variant / distinct) and the synthetic generator's ground truth.

use std::collections::{BTreeMap, BTreeSet, HashMap};

use serde::Serialize;
use skg_model::{EdgeKind, SkillId, SkillKeys};

use crate::{Canonicalization, Index, Signals, Verdict, synth};

/// One labelled pair as read from a file (`a,b[,label]`; skills as `<registry folder>/<SKILL.md
/// path>`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LabelledPair {
    /// Where it was read (`file:line`), for unresolved keys.
    pub at: String,
    /// One skill.
    pub a: String,
    /// The other.
    pub b: String,
    /// `duplicate`, `variant` or `distinct`, when labelled.
    pub label: Option<String>,
}

impl LabelledPair {
    /// The pairs of a CSV text with columns `a`, `b` and optionally `label` (`file` names the
    /// source in `at` and in errors).
    pub fn parse_csv(text: &str, file: &str) -> Result<Vec<LabelledPair>, String> {
        let rows = skg_model::labels::read_csv_columns(text, file, &["a", "b"], &["label"])?;
        Ok(rows
            .into_iter()
            .map(|r| LabelledPair {
                a: r.get(0).to_owned(),
                b: r.get(1).to_owned(),
                label: r.values.get(2).cloned().flatten(),
                at: r.at,
            })
            .collect())
    }
}

/// One scored pair.
#[derive(Debug, Clone, Serialize)]
pub struct PairRow {
    /// One skill, as given.
    pub a: String,
    /// The other, as given.
    pub b: String,
    /// The label, when given.
    pub label: Option<String>,
    /// The outcome of the whole run: same cluster → duplicate, clusters linked → variant.
    pub decision: &'static str,
    /// The decision on this pair alone.
    pub pair_decision: &'static str,
    /// The rule that decided the pair.
    pub rule: &'static str,
    /// Blocking made the pair a candidate (else it was never compared in the run).
    pub candidate: bool,
    /// The pair's signals.
    pub signals: Signals,
}

/// Precision, recall and F1 of one class.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ClassMetrics {
    /// True positives / predicted.
    pub precision: f64,
    /// True positives / actual.
    pub recall: f64,
    /// Their harmonic mean.
    pub f1: f64,
    /// Predicted and labelled.
    pub true_positives: u64,
    /// Predicted.
    pub predicted: u64,
    /// Labelled.
    pub actual: u64,
}

/// Labelled pairs scored against a run.
#[derive(Debug, Clone, Serialize)]
pub struct PairReport {
    /// The file, as given.
    pub file: String,
    /// Pairs scored (both skills found).
    pub pairs: usize,
    /// Keys that name no skill, as `file:line: key`.
    pub unresolved: Vec<String>,
    /// Every scored pair.
    pub rows: Vec<PairRow>,
    /// Metrics of `decision` for the `duplicate` label.
    pub duplicate: Option<ClassMetrics>,
    /// Metrics of `pair_decision` for the `duplicate` label.
    pub duplicate_pairwise: Option<ClassMetrics>,
    /// `confusion[label][decision]` over duplicate / variant / distinct.
    pub confusion: BTreeMap<String, BTreeMap<String, u64>>,
    /// Fraction of labels equal to the decision.
    pub accuracy: Option<f64>,
}

/// Scores `pairs` against the run `canon` of `index` (whose blocking gave `candidates`);
/// `keys` resolves the pairs' skill keys to positions in `index.skills()`.
pub fn score_pairs(
    file: &str,
    pairs: &[LabelledPair],
    index: &Index<'_>,
    candidates: &[(u32, u32)],
    canon: &Canonicalization,
    keys: &SkillKeys,
) -> PairReport {
    let cluster: HashMap<&SkillId, &SkillId> = canon
        .members
        .iter()
        .map(|m| (&m.id, &m.cluster_id))
        .collect();
    let variant_links: BTreeSet<(&SkillId, &SkillId)> = canon
        .edges
        .iter()
        .filter(|e| e.kind == EdgeKind::VariantOf)
        .flat_map(|e| [(&e.src, &e.dst), (&e.dst, &e.src)])
        .collect();
    let mut rows = Vec::new();
    let mut unresolved = Vec::new();
    for p in pairs {
        let (Some(i), Some(j)) = (keys.by_path(&p.a), keys.by_path(&p.b)) else {
            for x in [&p.a, &p.b] {
                if keys.by_path(x).is_none() {
                    unresolved.push(format!("{}: {x}", p.at));
                }
            }
            continue;
        };
        let (si, sj) = (&index.skills()[i].id, &index.skills()[j].id);
        let (ki, kj) = (cluster[si], cluster[sj]);
        let decision = if ki == kj {
            Verdict::Duplicate
        } else if variant_links.contains(&(ki, kj)) {
            Verdict::Variant
        } else {
            Verdict::Distinct
        };
        let (lo, hi) = (i.min(j), i.max(j));
        let (signals, pair, rule) = index.judge(lo, hi);
        let key = (
            u32::try_from(lo).unwrap_or(u32::MAX),
            u32::try_from(hi).unwrap_or(u32::MAX),
        );
        rows.push(PairRow {
            a: p.a.clone(),
            b: p.b.clone(),
            label: p.label.clone(),
            decision: decision.as_str(),
            pair_decision: pair.as_str(),
            rule,
            candidate: candidates.binary_search(&key).is_ok(),
            signals,
        });
    }
    let labelled: Vec<&PairRow> = rows.iter().filter(|r| r.label.is_some()).collect();
    let mut confusion: BTreeMap<String, BTreeMap<String, u64>> = BTreeMap::new();
    for r in &labelled {
        let label = r.label.clone().unwrap_or_default();
        *confusion
            .entry(label)
            .or_default()
            .entry(r.decision.to_owned())
            .or_default() += 1;
    }
    let accuracy = (!labelled.is_empty()).then(|| {
        labelled
            .iter()
            .filter(|r| r.label.as_deref() == Some(r.decision))
            .count() as f64
            / labelled.len() as f64
    });
    PairReport {
        file: file.to_owned(),
        pairs: rows.len(),
        unresolved,
        duplicate: class_metrics(&labelled, |r| r.decision),
        duplicate_pairwise: class_metrics(&labelled, |r| r.pair_decision),
        rows,
        confusion,
        accuracy,
    }
}

/// Precision / recall / F1 of `pick` for the `duplicate` label (`None` without labels).
fn class_metrics(
    labelled: &[&PairRow],
    pick: fn(&PairRow) -> &'static str,
) -> Option<ClassMetrics> {
    if labelled.is_empty() {
        return None;
    }
    let is_dup = |r: &&&PairRow| r.label.as_deref() == Some("duplicate");
    let tp = labelled
        .iter()
        .filter(|r| is_dup(r) && pick(r) == "duplicate")
        .count() as u64;
    let predicted = labelled.iter().filter(|r| pick(r) == "duplicate").count() as u64;
    let actual = labelled.iter().filter(is_dup).count() as u64;
    let div = |a: u64, b: u64| if b == 0 { 0.0 } else { a as f64 / b as f64 };
    let (p, r) = (div(tp, predicted), div(tp, actual));
    let f1 = if p + r == 0.0 {
        0.0
    } else {
        2.0 * p * r / (p + r)
    };
    Some(ClassMetrics {
        precision: p,
        recall: r,
        f1,
        true_positives: tp,
        predicted,
        actual,
    })
}

/// Every pair with its decision and signals, the unresolved keys, the duplicate metrics and the
/// confusion, as `skg canonicalize --pairs` prints them.
impl std::fmt::Display for PairReport {
    fn fmt(&self, out: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        writeln!(out, "\npairs from {}: {} scored", self.file, self.pairs)?;
        for r in &self.rows {
            let mark = match r.label.as_deref() {
                Some(l) if l == r.decision => "  ",
                Some(_) => "✗ ",
                None => "",
            };
            writeln!(
                out,
                "{mark}{} | {} | label={} decision={} pair={} ({}) {}",
                r.a,
                r.b,
                r.label.as_deref().unwrap_or("-"),
                r.decision,
                r.pair_decision,
                r.rule,
                crate::describe(&r.signals)
            )?;
        }
        for u in &self.unresolved {
            writeln!(out, "unresolved: {u}")?;
        }
        if let Some(m) = &self.duplicate {
            writeln!(
                out,
                "duplicate: precision {:.3} recall {:.3} F1 {:.3} ({} of {} predicted, {} labelled)",
                m.precision, m.recall, m.f1, m.true_positives, m.predicted, m.actual
            )?;
        }
        if let Some(m) = &self.duplicate_pairwise {
            writeln!(
                out,
                "duplicate (pair decision alone): precision {:.3} recall {:.3} F1 {:.3}",
                m.precision, m.recall, m.f1
            )?;
        }
        if !self.confusion.is_empty() {
            writeln!(out, "confusion (rows label, columns decision):")?;
            writeln!(
                out,
                "{:>12} {:>10} {:>10} {:>10}",
                "", "duplicate", "variant", "distinct"
            )?;
            for l in ["duplicate", "variant", "distinct"] {
                let row = self.confusion.get(l);
                let get = |d: &str| row.and_then(|r| r.get(d)).copied().unwrap_or(0);
                writeln!(
                    out,
                    "{l:>12} {:>10} {:>10} {:>10}",
                    get("duplicate"),
                    get("variant"),
                    get("distinct")
                )?;
            }
        }
        if let Some(a) = self.accuracy {
            writeln!(out, "accuracy over three labels: {a:.3}")?;
        }
        Ok(())
    }
}

/// Pairwise agreement of the clusters with the generator's ground truth (copies of one original
/// belong together; variants and other originals don't).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct SyntheticTruth {
    /// Pairs in one predicted cluster that the generator made as copies of one original.
    pub precision: f64,
    /// Generator copy pairs that ended in one cluster.
    pub recall: f64,
    /// Copy pairs the generator made.
    pub true_pairs: u64,
    /// Pairs in predicted clusters.
    pub predicted_pairs: u64,
}

impl std::fmt::Display for SyntheticTruth {
    fn fmt(&self, out: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        writeln!(
            out,
            "synthetic ground truth: pair precision {:.3}, recall {:.3} ({} true copy pairs, {} predicted)",
            self.precision, self.recall, self.true_pairs, self.predicted_pairs
        )
    }
}

/// Compares the clusters of `canon` over `skills` with the origins [`synth::generate`] gave.
pub fn synthetic_truth(
    skills: &[skg_model::Skill],
    canon: &Canonicalization,
    origins: &[synth::Origin],
) -> SyntheticTruth {
    // Origin family by skill id; variants form their own singleton family.
    let mut fam: HashMap<&SkillId, Option<usize>> = HashMap::new();
    for (s, &o) in skills.iter().zip(origins) {
        fam.insert(
            &s.id,
            match o {
                synth::Origin::Original(k) | synth::Origin::Copy(k) => Some(k),
                synth::Origin::Variant(_) => None,
            },
        );
    }
    let mut true_groups: HashMap<usize, u64> = HashMap::new();
    for f in fam.values().flatten() {
        *true_groups.entry(*f).or_default() += 1;
    }
    let pairs = |n: u64| n * n.saturating_sub(1) / 2;
    let true_pairs: u64 = true_groups.values().map(|&n| pairs(n)).sum();
    let mut predicted_pairs = 0u64;
    let mut correct = 0u64;
    for cl in &canon.clusters {
        predicted_pairs += pairs(u64::from(cl.size));
        let mut counts: HashMap<usize, u64> = HashMap::new();
        for m in &cl.members {
            if let Some(Some(f)) = fam.get(m) {
                *counts.entry(*f).or_default() += 1;
            }
        }
        correct += counts.values().map(|&k| pairs(k)).sum::<u64>();
    }
    let div = |a: u64, b: u64| if b == 0 { 1.0 } else { a as f64 / b as f64 };
    SyntheticTruth {
        precision: div(correct, predicted_pairs),
        recall: div(correct, true_pairs),
        true_pairs,
        predicted_pairs,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{Input, Options};
    use skg_model::{NoProgress, RegistryInput};

    fn body(words: &str) -> String {
        (0..40).map(|_| words).collect::<Vec<_>>().join(" ")
    }

    /// Two registries: `a/x` and its verbatim copy `b/x`, and an unrelated `a/y`.
    fn run() -> (Vec<skg_model::Skill>, Vec<RegistryInput>) {
        let x = body("run the linter on changed files then fix what it reports");
        let y = body("draw a bar chart of quarterly sales with labelled axes");
        let skills = vec![
            synth::skill("a", "skills/x", "x", "Lint changed files.", &x),
            synth::skill("b", "skills/x", "x", "Lint changed files.", &x),
            synth::skill("a", "skills/y", "y", "Chart sales.", &y),
        ];
        (skills, Vec::new())
    }

    #[test]
    fn labelled_pairs_give_precision_recall_and_confusion_by_hand() {
        let (skills, regs) = run();
        let input = Input {
            skills: &skills,
            vectors: None,
            scores: None,
            in_degree: None,
        };
        let index = Index::build(&input, &Options::default());
        let candidates = index.candidates();
        let canon = index.canonicalize_candidates(&candidates, &NoProgress);
        let keys = SkillKeys::new(
            index
                .skills()
                .iter()
                .map(|s| (s.registry.as_str(), s.path.as_str(), s.name.as_str())),
            &regs,
        );
        let pair = |a: &str, b: &str, label: &str| LabelledPair {
            at: "pairs.csv:2".into(),
            a: a.into(),
            b: b.into(),
            label: Some(label.into()),
        };
        let pairs = [
            pair("a/skills/x/SKILL.md", "b/skills/x/SKILL.md", "duplicate"),
            pair("a/skills/x/SKILL.md", "a/skills/y/SKILL.md", "duplicate"),
            pair("b/skills/x/SKILL.md", "a/skills/y/SKILL.md", "distinct"),
            pair("a/skills/x/SKILL.md", "nowhere/SKILL.md", "distinct"),
        ];
        let r = score_pairs("pairs.csv", &pairs, &index, &candidates, &canon, &keys);
        assert_eq!(r.pairs, 3);
        assert_eq!(r.unresolved, ["pairs.csv:2: nowhere/SKILL.md"]);
        assert_eq!(r.rows[0].decision, "duplicate");
        assert!(r.rows[0].candidate, "verbatim copies share a blocking key");
        // One true duplicate found, one labelled duplicate missed, nothing wrongly merged:
        // precision 1/1, recall 1/2, F1 2·1·0.5/1.5.
        let m = r.duplicate.unwrap_or_else(|| panic!("labelled"));
        assert_eq!((m.true_positives, m.predicted, m.actual), (1, 1, 2));
        assert!((m.f1 - 2.0 / 3.0).abs() < 1e-12);
        assert_eq!(r.confusion["duplicate"]["distinct"], 1);
        assert_eq!(r.accuracy, Some(2.0 / 3.0));
    }

    #[test]
    fn pairs_csv_is_read_by_column_name_and_bad_files_name_the_file() {
        let text = "b,label,a,reason\nr/y,duplicate,r/x,copied\nr/z,,r/x,\n";
        let pairs = LabelledPair::parse_csv(text, "p.csv").unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(pairs.len(), 2);
        assert_eq!((pairs[0].a.as_str(), pairs[0].b.as_str()), ("r/x", "r/y"));
        assert_eq!(pairs[0].label.as_deref(), Some("duplicate"));
        assert_eq!(pairs[1].at, "p.csv:3");
        assert_eq!(pairs[1].label.as_deref(), Some(""));
        let err = LabelledPair::parse_csv("x,y\n1,2\n", "q.csv").err();
        assert_eq!(err.as_deref(), Some("q.csv: needs columns `a` and `b`"));
    }

    /// A catalog tool: the API's shared description, its own name and input schema (MCP's flat
    /// `inputSchema`).
    fn tool(name: &str, schema: &str) -> skg_model::Skill {
        tool_as(name, schema, "mcp")
    }

    /// [`tool`] as `host` gives it: `mcp`, `anthropic` (flat `input_schema`) or `openai`
    /// (`{"type": "function", "function": {…, "parameters"}}`).
    fn tool_as(name: &str, schema: &str, host: &str) -> skg_model::Skill {
        let api = "The Acme issue tracker API manages projects, issues, comments and labels for \
                   engineering teams, with webhooks, search and audit logs for every change made.";
        let body = format!("{api}\n\n## Parameters\n- `id` (string, required): the issue\n");
        let mut s = synth::skill("acme", name, name, api, &body);
        s.kind = skg_model::SkillKind::Tool;
        s.frontmatter.json = match host {
            "anthropic" => format!(r#"{{"name":"{name}","input_schema":{schema}}}"#),
            "openai" => format!(
                r#"{{"type":"function","function":{{"name":"{name}","parameters":{schema}}}}}"#
            ),
            _ => format!(r#"{{"name":"{name}","inputSchema":{schema}}}"#),
        };
        s
    }

    /// `skills` canonicalized with the default options, without vectors or scores.
    fn lexical_canon(skills: &[skg_model::Skill]) -> crate::Canonicalization {
        crate::canonicalize(
            &Input {
                skills,
                vectors: None,
                scores: None,
                in_degree: None,
            },
            &Options::default(),
            &NoProgress,
        )
    }

    /// One name, two schemas: two endpoints, in every host's shape; one name, one schema, in two
    /// registries: a copy.
    #[test]
    fn a_tool_s_schema_tells_endpoints_apart_in_every_host_shape() {
        let schema = r#"{"type":"object","properties":{"id":{"type":"string"}}}"#;
        let other = r#"{"type":"object","properties":{"id":{"type":"integer"}}}"#;
        for host in ["mcp", "anthropic", "openai"] {
            let in_registry = |registry: &str, schema: &str| {
                let mut t = tool_as("get_issue", schema, host);
                t.id = skg_model::SkillId::from(format!("{registry}:get_issue"));
                t.registry = skg_model::RegistryName::from(registry);
                t
            };
            let all = vec![
                in_registry("acme", schema),
                in_registry("mirror", schema),
                in_registry("v2", other),
            ];
            let canon = lexical_canon(&all);
            let dups: Vec<&str> = canon
                .members
                .iter()
                .filter(|m| m.role == skg_model::Role::Duplicate)
                .map(|m| m.id.as_str())
                .collect();
            assert_eq!(dups.len(), 1, "{host}: {dups:?}");
            assert!(!dups[0].starts_with("v2:"), "{host}: {dups:?}");
        }
    }

    #[test]
    fn distinct_endpoints_of_one_api_are_not_copies() {
        let schema = r#"{"type":"object","properties":{"id":{"type":"string"}}}"#;
        let other = r#"{"type":"object","properties":{"id":{"type":"integer"}}}"#;
        let skills = vec![
            tool("get_issue", schema),
            tool("close_issue", schema),
            tool("get_issue_v2", other),
        ];
        let mut copy = tool("get_issue", schema);
        copy.id = skg_model::SkillId::from("mirror:get_issue");
        copy.registry = skg_model::RegistryName::from("mirror");
        let mut all = skills.clone();
        all.push(copy);
        let canon = lexical_canon(&all);
        let dups: Vec<(&str, &str)> = canon
            .members
            .iter()
            .filter(|m| m.role == skg_model::Role::Duplicate)
            .map(|m| (m.id.as_str(), m.cluster_id.as_str()))
            .collect();
        // Same text, same name, same schema: the mirror's copy. Different name or schema: not.
        assert_eq!(dups.len(), 1, "{dups:?}");
        assert!(
            dups[0].0.ends_with("get_issue") && dups[0].1.ends_with("get_issue"),
            "{dups:?}"
        );
        assert_ne!(dups[0].0, dups[0].1);
    }

    #[test]
    fn synthetic_truth_counts_pairs_within_families() {
        let (skills, _) = run();
        let canon = lexical_canon(&skills);
        // Say all three were copies of original 0: 3 true pairs, the run predicted 1 (x, x).
        let origins = [synth::Origin::Copy(0); 3];
        let t = synthetic_truth(&skills, &canon, &origins);
        assert_eq!((t.true_pairs, t.predicted_pairs), (3, 1));
        assert!((t.precision - 1.0).abs() < 1e-12);
        assert!((t.recall - 1.0 / 3.0).abs() < 1e-12);
    }
}
