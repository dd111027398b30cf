//! Each extractor on a tiny inline registry: files in, edges out (`src -> dst kind extractor SOURCE conf`).

use std::path::Path;

use skg_model::{RegistryKind, RegistryName};

use crate::{NoProgress, Options, RegistrySource, extract};

fn write(root: &Path, files: &[(&str, &str)]) {
    for (p, text) in files {
        let path = root.join(p);
        std::fs::create_dir_all(path.parent().unwrap_or(root))
            .expect("test setup: write the fixture");
        std::fs::write(path, text).expect("test setup: write the fixture");
    }
}

fn source(name: &str, root: &Path) -> RegistrySource {
    RegistrySource {
        name: RegistryName(name.into()),
        display_path: name.into(),
        local_path: root.to_path_buf(),
        kind: RegistryKind::Skills,
        git: None,
        rev: None,
        source: None,
        license: None,
    }
}

/// Runs extract over registries given as (name, files) and renders the edges.
fn edges(registries: &[(&str, &[(&str, &str)])]) -> Vec<String> {
    let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("tempdir: {e}"));
    let sources: Vec<RegistrySource> = registries
        .iter()
        .map(|(name, files)| {
            let root = dir.path().join(name.replace('/', "__"));
            std::fs::create_dir_all(&root).expect("test setup: write the fixture");
            write(&root, files);
            source(name, &root)
        })
        .collect();
    let x = extract(&sources, &Options::default(), &NoProgress);
    x.edges
        .iter()
        .map(|e| {
            format!(
                "{} -> {} {} {} {} {}",
                e.src,
                e.dst,
                e.kind,
                e.extractor,
                e.source.as_str(),
                e.confidence
            )
        })
        .collect()
}

fn skill(name: &str, body: &str) -> String {
    format!("---\nname: {name}\ndescription: The {name} skill.\n---\n# {name}\n\n{body}\n")
}

#[test]
fn required_sub_skill_with_namespace() {
    let a = skill(
        "planning",
        "**REQUIRED SUB-SKILL:** Use superpowers:executing-plans to run it.",
    );
    let b = skill("executing-plans", "Run the plan.");
    let got = edges(&[(
        "obra/superpowers",
        &[
            ("skills/planning/SKILL.md", &a),
            ("skills/executing-plans/SKILL.md", &b),
        ],
    )]);
    assert_eq!(
        got,
        vec![
            "obra/superpowers:skills/planning -> obra/superpowers:skills/executing-plans depends_on required-prose INFERRED 0.7"
        ]
    );
}

#[test]
fn related_skills_section_and_ambiguous_single_words() {
    let a = skill(
        "report-writing",
        "Write it up.\n\n## Related Skills\n\n- `plotting-charts` for figures\n- pandas\n\nAlso pandas is handy.",
    );
    let b = skill("plotting-charts", "Plot.");
    let c = skill("pandas", "Frames.");
    let got = edges(&[(
        "lab",
        &[("a/SKILL.md", &a), ("b/SKILL.md", &b), ("c/SKILL.md", &c)],
    )]);
    assert_eq!(
        got,
        vec![
            "lab:a -> lab:b complements related-list INFERRED 0.6",
            // in a related list a bare single word is still explicit…
            "lab:a -> lab:c complements related-list INFERRED 0.6",
            // …but in prose it is AMBIGUOUS at half confidence
            "lab:a -> lab:c references mention AMBIGUOUS 0.2",
        ]
    );
}

#[test]
fn invoke_and_co_use_phrases() {
    let a = skill(
        "executing",
        "When done, use the reviewing-code skill.\nIf green, then run `finishing-a-branch`.\nSee notes on finishing-a-branch.",
    );
    let b = skill("reviewing-code", "Review.");
    let c = skill("finishing-a-branch", "Finish.");
    let got = edges(&[(
        "dev",
        &[("a/SKILL.md", &a), ("b/SKILL.md", &b), ("c/SKILL.md", &c)],
    )]);
    assert_eq!(
        got,
        vec![
            "dev:a -> dev:b depends_on invoke-phrase INFERRED 0.6",
            "dev:a -> dev:c depends_on invoke-phrase INFERRED 0.6",
            // An unmarked name is AMBIGUOUS at half of 0.4.
            "dev:a -> dev:c references mention AMBIGUOUS 0.2",
        ]
    );
}

#[test]
fn a_related_list_item_is_a_complement_whatever_its_verb_and_plain_names_are_ambiguous() {
    let a = skill(
        "signup",
        "# Signup\n\nSee the `form-helper` notes and scope-spec/SKILL.md.\n\n## Related Skills\n\n- **form-helper** — when the form is not a signup, use `form-helper` instead\n- `scope-spec` — scope definition before starting work\n\nThe form-helper library is fast.\n",
    );
    let b = skill("form-helper", "Forms.");
    let c = skill("scope-spec", "Scope.");
    let got = edges(&[(
        "m",
        &[("a/SKILL.md", &a), ("b/SKILL.md", &b), ("c/SKILL.md", &c)],
    )]);
    // By the rules: the two list items under "Related Skills" are related-list complements (0.6)
    // although one says "use … instead" and the other "before starting"; the backticked name
    // above and the path's folder `scope-spec/SKILL.md` are mentions at 0.5 (INFERRED); the plain
    // "form-helper library" line is an AMBIGUOUS mention, dropped as the same (src, dst, kind)
    // is already seen at 0.5.
    assert_eq!(
        got,
        vec![
            "m:a -> m:b complements related-list INFERRED 0.6",
            "m:a -> m:b references mention INFERRED 0.5",
            "m:a -> m:c complements related-list INFERRED 0.6",
            "m:a -> m:c references mention INFERRED 0.5",
        ]
    );
}

#[test]
fn links_resolve_to_skills_and_broken_links_are_diagnosed() {
    let a = skill(
        "executing",
        "Use the [plan format](../b/SKILL.md).\nSee [missing](../nope/SKILL.md) and [web](https://x.invalid/a).",
    );
    let b = skill("writing-plans", "Plan.");
    let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    write(dir.path(), &[("a/SKILL.md", &a), ("b/SKILL.md", &b)]);
    let x = extract(
        &[source("dev", dir.path())],
        &Options::default(),
        &NoProgress,
    );
    let got: Vec<String> = x
        .edges
        .iter()
        .map(|e| {
            format!(
                "{} -> {} {} {} {}",
                e.src,
                e.dst,
                e.kind,
                e.extractor,
                e.source.as_str()
            )
        })
        .collect();
    // "Use the [plan format](…)": an invocation line, but link kinds come from line/section context only.
    assert_eq!(got, vec!["dev:a -> dev:b references md-link EXTRACTED"]);
    let broken: Vec<String> = x
        .diagnostics
        .iter()
        .filter(|d| d.code == skg_model::DiagnosticCode::BrokenLink)
        .map(|d| format!("{}:{}", d.path, d.line.unwrap_or(0)))
        .collect();
    assert_eq!(broken, vec!["a/SKILL.md:8"]);
}

#[test]
fn frontmatter_declared_relations() {
    let a = "---\nname: a-skill\ndescription: A.\ndepends_on: [b-skill]\nmetadata:\n  related: other:c-skill\n---\nbody\n";
    let b = skill("b-skill", "B.");
    let c = skill("c-skill", "C.");
    let got = edges(&[(
        "r",
        &[("a/SKILL.md", a), ("b/SKILL.md", &b), ("c/SKILL.md", &c)],
    )]);
    assert_eq!(
        got,
        vec![
            "r:a -> r:b depends_on frontmatter EXTRACTED 1",
            "r:a -> r:c complements frontmatter EXTRACTED 1"
        ]
    );
}

#[test]
fn same_registry_first_then_explicit_cross_registry_only() {
    let a = skill(
        "user",
        "Use the `shared-tool` skill. Also mentions other-thing here.",
    );
    let local = skill("shared-tool", "Local.");
    let remote = skill("shared-tool", "Remote.");
    let other = skill("other-thing", "Remote only.");
    let got = edges(&[
        ("one", &[("a/SKILL.md", &a), ("s/SKILL.md", &local)]),
        ("two", &[("s/SKILL.md", &remote), ("o/SKILL.md", &other)]),
    ]);
    // same-registry target wins; the plain mention of a skill only in `two` is not an edge.
    assert_eq!(
        got,
        vec!["one:a -> one:s depends_on invoke-phrase INFERRED 0.6"]
    );
}

#[test]
fn script_imports_and_exported_calls() {
    let collect = "import { parseCommits } from \"../../changelog/scripts/commits.js\";\nparseCommits(log);\nsummarizeRelease(x);\n";
    let commits = "export function parseCommits(log) { return log.split('\\n'); }\n";
    let summary =
        "function summarizeRelease(x) { return x; }\nmodule.exports = { summarizeRelease };\n";
    let triage = "from flaky import classify\nclassify([])\n";
    let flaky = "def classify(runs):\n    return runs\n";
    let files: &[(&str, &str)] = &[
        ("skills/release/SKILL.md", &skill("release", "Notes.")),
        ("skills/release/scripts/collect.js", collect),
        ("skills/changelog/SKILL.md", &skill("changelog", "Log.")),
        ("skills/changelog/scripts/commits.js", commits),
        ("skills/summary/SKILL.md", &skill("summary", "Sum.")),
        ("skills/summary/scripts/summary.js", summary),
        ("skills/triage/SKILL.md", &skill("triage", "Triage.")),
        ("skills/triage/scripts/triage.py", triage),
        ("skills/tdd/SKILL.md", &skill("tdd", "Tests.")),
        ("skills/tdd/scripts/flaky.py", flaky),
    ];
    let got = edges(&[("dev", files)]);
    assert_eq!(
        got,
        vec![
            "dev:skills/release -> dev:skills/changelog depends_on js-import EXTRACTED 1",
            "dev:skills/release -> dev:skills/summary depends_on js-call INFERRED 0.6",
            "dev:skills/triage -> dev:skills/tdd depends_on py-import INFERRED 0.8",
        ]
    );
}

#[test]
fn names_inside_other_words_or_paths_do_not_match() {
    let a = skill(
        "alpha-one",
        "Mentions my-beta-two, beta-two-extra and beta_two_x but not the skill.",
    );
    let b = skill("beta-two", "B.");
    assert!(edges(&[("r", &[("a/SKILL.md", &a), ("b/SKILL.md", &b)])]).is_empty());
}

#[test]
fn best_evidence_wins_and_all_is_kept() {
    let a = skill(
        "alpha",
        "## Prerequisites\n\n- `beta-skill`\n\n## Usage\n\nLater, beta-skill again. Use the beta-skill skill.",
    );
    let b = skill("beta-skill", "B.");
    let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    write(dir.path(), &[("a/SKILL.md", &a), ("b/SKILL.md", &b)]);
    let x = extract(&[source("r", dir.path())], &Options::default(), &NoProgress);
    let dep: Vec<_> = x
        .edges
        .iter()
        .filter(|e| e.kind == skg_model::EdgeKind::DependsOn)
        .collect();
    assert_eq!(dep.len(), 1);
    assert_eq!(dep[0].extractor, "required-prose");
    assert!((dep[0].confidence - 0.7).abs() < 1e-9);
    let ev: Vec<(&str, u32)> = dep[0]
        .evidence
        .iter()
        .map(|e| (e.extractor.as_str(), e.line))
        .collect();
    assert_eq!(ev, vec![("required-prose", 9), ("invoke-phrase", 13)]);
}

#[test]
fn wrapped_lines_keep_their_context() {
    let a = skill(
        "executing",
        "When every task is done, use the\nreviewing-code skill on the diff.",
    );
    let b = skill("reviewing-code", "Review.");
    let got = edges(&[("dev", &[("a/SKILL.md", &a), ("b/SKILL.md", &b)])]);
    assert_eq!(
        got,
        vec!["dev:a -> dev:b depends_on invoke-phrase INFERRED 0.6"]
    );
}

#[test]
fn related_sections_count_list_heads_not_words_inside_items() {
    let a = skill(
        "brainstorm",
        "## Related\n\n- **Architecture diagrams** show data flow and context\n- `flow-charts` for diagrams",
    );
    let b = skill("context", "C.");
    let c = skill("flow-charts", "F.");
    let got = edges(&[(
        "r",
        &[("a/SKILL.md", &a), ("b/SKILL.md", &b), ("c/SKILL.md", &c)],
    )]);
    assert_eq!(
        got,
        vec![
            "r:a -> r:b references mention AMBIGUOUS 0.2",
            "r:a -> r:c complements related-list INFERRED 0.6"
        ]
    );
}

#[test]
fn plain_words_never_cross_registries() {
    let a = skill(
        "writer",
        "## See also\n\n- context\n- Skills run in a sandbox; the debugging skill helps.",
    );
    let b = skill("context", "C.");
    let c = skill("run", "R.");
    let d = skill("debugging", "D.");
    let got = edges(&[
        ("one", &[("a/SKILL.md", &a)]),
        (
            "two",
            &[("b/SKILL.md", &b), ("c/SKILL.md", &c), ("d/SKILL.md", &d)],
        ),
    ]);
    assert!(got.is_empty(), "{got:?}");
}

#[test]
fn list_item_heads() {
    use super::prose::list_item_head;
    assert_eq!(list_item_head("- `pdf` - tools"), Some(7));
    assert_eq!(list_item_head("  1. **plotting-charts**: x"), Some(24));
    assert_eq!(list_item_head("* csv-profiling, then"), Some(15));
    assert_eq!(list_item_head("not a list"), None);
}

#[test]
fn code_files_hosts_and_values_are_not_mentions() {
    let a = skill(
        "writer",
        "Save it as cover-letter.md or see https://mcp.serp-api.com/x.\n\n```bash\nnpx bundle-check --help\n```\n\nSet `--mode=bundle-check`.",
    );
    let b = skill("cover-letter", "C.");
    let c = skill("serp-api", "S.");
    let d = skill("bundle-check", "B.");
    let got = edges(&[(
        "r",
        &[
            ("a/SKILL.md", &a),
            ("b/SKILL.md", &b),
            ("c/SKILL.md", &c),
            ("d/SKILL.md", &d),
        ],
    )]);
    assert!(got.is_empty(), "{got:?}");
}

#[test]
fn a_namespace_naming_a_registry_resolves_only_there() {
    let a = skill("planner", "Dispatch superpowers:code-reviewer now.");
    let elsewhere = skill("code-reviewer", "Someone else's reviewer.");
    let got = edges(&[
        ("obra/superpowers", &[("a/SKILL.md", &a)]),
        ("other", &[("c/SKILL.md", &elsewhere)]),
    ]);
    assert!(got.is_empty(), "{got:?}");
}

#[test]
fn tag_lines_and_own_titles_are_not_relations() {
    let a = skill(
        "voice-notes",
        "tags: captions, speech-to-text\n**Keywords**: speech-to-text",
    );
    let readme = "# speech-to-text\n\nThis README belongs to voice-notes.\n";
    let b = skill("speech-to-text", "S.");
    let got = edges(&[(
        "r",
        &[
            ("a/SKILL.md", &a),
            ("a/README.md", readme),
            ("b/SKILL.md", &b),
        ],
    )]);
    assert!(got.is_empty(), "{got:?}");
}
