//! `skg extract` on the bundled demo registries.

use std::{collections::BTreeMap, path::Path};

use crate::{repo, rows, skg, skg_json};

/// Every `SKILL.md` (any case) under `dir`.
fn count_skill_files(dir: &Path) -> usize {
    let mut n = 0;
    for entry in std::fs::read_dir(dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .flatten()
    {
        let p = entry.path();
        if p.is_dir() {
            n += count_skill_files(&p);
        } else if p
            .file_name()
            .is_some_and(|f| f.eq_ignore_ascii_case("skill.md"))
        {
            n += 1;
        }
    }
    n
}

fn has_edge(
    edges: &[serde_json::Value],
    src: &str,
    dst: &str,
    kind: &str,
    extractor: &str,
) -> bool {
    edges.iter().any(|e| {
        e["src"] == src && e["dst"] == dst && e["kind"] == kind && e["extractor"] == extractor
    })
}

#[test]
fn demo_registries_end_to_end() {
    let tmp = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    let out = tmp.path().join("out");
    let registries = repo().join("registries");
    let summary = skg_json(
        tmp.path(),
        &[
            "extract",
            registries.to_str().expect("a UTF-8 path"),
            "-o",
            out.to_str().expect("a UTF-8 path"),
        ],
    );

    // Every SKILL.md became a skill (none of the demo's are unreadable).
    let expected_skills = count_skill_files(&registries);
    assert_eq!(summary["counts"]["skills"], expected_skills as u64);
    let skills = rows(&out, "skills");
    assert_eq!(skills.len(), expected_skills);

    // Manifest: counts agree with the tables, inputs carry names and hashes, _SUCCESS is there.
    let manifest: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(out.join("manifest.json")).expect("read a file the run wrote"),
    )
    .expect("read a file the run wrote");
    for table in ["skills", "documents", "edges", "diagnostics"] {
        assert_eq!(
            manifest["counts"][table].as_u64(),
            Some(rows(&out, table).len() as u64),
            "{table}"
        );
        assert!(out.join(format!("{table}.parquet")).is_file());
    }
    let inputs: Vec<&str> = manifest["inputs"]
        .as_array()
        .map(|a| a.iter().filter_map(|i| i["name"].as_str()).collect())
        .expect("a JSON array");
    assert_eq!(
        inputs,
        vec!["demo/devflow", "demo/datalab", "demo/community"]
    );
    assert!(out.join("_SUCCESS").is_file());

    // The broken frontmatter of the community registry: each kind reported at its line, none lost.
    let diags = rows(&out, "diagnostics");
    let codes: BTreeMap<String, Vec<String>> = diags.iter().fold(BTreeMap::new(), |mut m, d| {
        m.entry(d["path"].as_str().unwrap_or_default().to_owned())
            .or_default()
            .push(format!(
                "{}:{}",
                d["code"].as_str().unwrap_or_default(),
                d["line"]
            ));
        m
    });
    assert!(
        codes["skyward/weather-report/SKILL.md"].contains(&"yaml-unquoted-colon:3".to_owned()),
        "{codes:?}"
    );
    assert!(
        codes["jotter/todo-tracker/SKILL.md"]
            .iter()
            .any(|c| c.starts_with("frontmatter-unclosed:")),
        "{codes:?}"
    );
    assert!(
        codes["roamer/trip-forecast/SKILL.md"]
            .iter()
            .any(|c| c.starts_with("yaml-broken-flow:")),
        "{codes:?}"
    );
    assert!(
        codes["clawfan/lobster-notify/SKILL.md"]
            .iter()
            .any(|c| c.starts_with("yaml-broken-flow:")),
        "{codes:?}"
    );
    assert!(
        codes["oldhand/markdown-toc/SKILL.md"].contains(&"frontmatter-missing:1".to_owned()),
        "{codes:?}"
    );
    let by_id: BTreeMap<&str, &serde_json::Value> = skills
        .iter()
        .map(|s| (s["id"].as_str().unwrap_or_default(), s))
        .collect();
    let weather = by_id["demo/community:skyward/weather-report"];
    assert_eq!(weather["frontmatter"]["status"], "repaired");
    assert!(
        weather["description"]
            .as_str()
            .unwrap_or_default()
            .starts_with("Use when: (1)"),
        "the value is kept whole"
    );
    let crlf = by_id["demo/community:winfolk/pomodoro-timer"];
    assert_eq!(crlf["frontmatter"]["status"], "ok", "CRLF parses strictly");
    let crlf_body = crlf["body"].as_str().unwrap_or_default();
    assert!(
        crlf_body.trim_start().starts_with("# Pomodoro")
            && crlf_body.len() > 100
            && !crlf_body.contains('\r'),
        "{crlf_body:?}"
    );
    // Every skill keeps its body: the SKILL.md bytes after the frontmatter.
    for s in &skills {
        let path = registries
            .join(
                s["registry"]
                    .as_str()
                    .unwrap_or_default()
                    .replace("demo/", ""),
            )
            .join(s["path"].as_str().unwrap_or_default());
        let file = std::fs::read_to_string(&path)
            .expect("read a file the run wrote")
            .replace("\r\n", "\n");
        let body = s["body"].as_str().unwrap_or_default();
        assert!(
            !body.trim().is_empty() && file.ends_with(body),
            "{}: body is not the tail of the file",
            s["id"]
        );
    }
    // Pipe-to-shell makes a skill critical here; whether it is unsafe is the scan's verdict.
    let risky = by_id["demo/community:shipfast/quick-deploy"];
    assert_eq!(risky["risk_tier"], "critical");
    assert!(
        risky["risk_reasons"].as_array().is_some_and(|r| r
            .iter()
            .any(|x| x.as_str().is_some_and(|x| x.contains("skg scan")))),
        "{risky}"
    );

    // Relations the demo was written to contain.
    let edges = rows(&out, "edges");
    let dev = |s: &str| format!("demo/devflow:skills/{s}");
    assert!(has_edge(
        &edges,
        &dev("release-notes"),
        &dev("changelog-writing"),
        "depends_on",
        "js-import"
    ));
    assert!(has_edge(
        &edges,
        &dev("ci-triage"),
        &dev("test-first-development"),
        "depends_on",
        "py-import"
    ));
    assert!(has_edge(
        &edges,
        &dev("planning-features"),
        &dev("writing-implementation-plans"),
        "depends_on",
        "required-prose"
    ));
    assert!(has_edge(
        &edges,
        &dev("executing-plans"),
        &dev("writing-implementation-plans"),
        "depends_on",
        "md-link"
    ));
    assert!(has_edge(
        &edges,
        &dev("requesting-review"),
        &dev("reviewing-code"),
        "depends_on",
        "invoke-phrase"
    ));
    assert!(
        edges
            .iter()
            .any(|e| e["src"] == dev("reviewing-code") && e["kind"] == "complements")
    );
    for e in &edges {
        let c = e["confidence"].as_f64().unwrap_or(-1.0);
        assert!((0.0..=1.0).contains(&c), "{e}");
        assert!(
            e["evidence"].as_array().is_some_and(|ev| !ev.is_empty()),
            "{e}"
        );
        assert_ne!(e["src"], e["dst"], "no self edges");
    }

    // Documents: every skill has exactly one L0 and one L1, and L2 sections of its markdown.
    let docs = rows(&out, "documents");
    for s in &skills {
        let id = s["id"].as_str().unwrap_or_default();
        let mine: Vec<_> = docs.iter().filter(|d| d["skill"] == id).collect();
        assert_eq!(mine.iter().filter(|d| d["level"] == 0).count(), 1, "{id}");
        assert_eq!(mine.iter().filter(|d| d["level"] == 1).count(), 1, "{id}");
    }
    let checklist = docs
        .iter()
        .filter(|d| d["skill"] == dev("reviewing-code") && d["file"] == "references/checklist.md")
        .count();
    assert!(
        checklist >= 2,
        "every heading section of other markdown files is a document"
    );
}

#[test]
fn same_input_gives_byte_identical_output() {
    let tmp = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    let registries = repo().join("registries");
    let reg = registries.to_str().expect("a UTF-8 path");
    for out in ["a", "b"] {
        let o = skg(tmp.path(), &["extract", reg, "-o", out, "-q"]);
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    }
    let mut files: Vec<String> = std::fs::read_dir(tmp.path().join("a"))
        .unwrap_or_else(|e| panic!("{e}"))
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect();
    files.sort();
    assert!(files.len() >= 10, "{files:?}");
    for f in files {
        let a = std::fs::read(tmp.path().join("a").join(&f)).expect("read a file the run wrote");
        let b = std::fs::read(tmp.path().join("b").join(&f)).expect("read a file the run wrote");
        assert!(a == b, "{f} differs between two runs");
    }
}

#[test]
fn rerun_replaces_output_and_leaves_no_temporaries() {
    let tmp = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    let reg = repo().join("registries");
    for _ in 0..2 {
        let o = skg(
            tmp.path(),
            &[
                "extract",
                reg.to_str().expect("a UTF-8 path"),
                "-o",
                "out",
                "-q",
            ],
        );
        assert!(o.status.success());
    }
    let names: Vec<String> = std::fs::read_dir(tmp.path())
        .unwrap_or_else(|e| panic!("{e}"))
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect();
    assert!(
        names
            .iter()
            .all(|n| !n.contains(".tmp-") && !n.contains(".old-")),
        "{names:?}"
    );
}

#[test]
fn human_output_and_errors() {
    let tmp = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    let reg = repo().join("registries");
    let o = skg(
        tmp.path(),
        &["extract", reg.to_str().expect("a UTF-8 path"), "-o", "out"],
    );
    let stdout = String::from_utf8_lossy(&o.stdout);
    assert!(
        stdout.contains("demo/devflow") && stdout.contains("edges by kind"),
        "{stdout}"
    );
    assert!(
        o.stderr.is_empty(),
        "no progress bar or logs when stderr is not a terminal: {}",
        String::from_utf8_lossy(&o.stderr)
    );

    let o = skg(tmp.path(), &["extract", "does-not-exist"]);
    assert_eq!(o.status.code(), Some(2));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains("does-not-exist: no such file or folder"),
        "{err}"
    );

    // Two inputs whose names meet: the message names both and says how to name them apart.
    for d in ["a", "b"] {
        std::fs::create_dir_all(tmp.path().join(d)).unwrap_or_else(|e| panic!("{e}"));
        std::fs::write(tmp.path().join(d).join("tools.json"), "[]")
            .unwrap_or_else(|e| panic!("{e}"));
    }
    let o = skg(tmp.path(), &["extract", "a/tools.json", "b/tools.json"]);
    assert_eq!(o.status.code(), Some(2));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains("two registries are named `tools` (a/tools.json and b/tools.json)")
            && err.contains("registries.toml"),
        "{err}"
    );

    let o = skg(
        tmp.path(),
        &[
            "extract",
            reg.to_str().expect("a UTF-8 path"),
            "-o",
            "out2",
            "--show-diagnostics",
            "-q",
        ],
    );
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains(
            "demo/community/skyward/weather-report/SKILL.md:3: warning[yaml-unquoted-colon]"
        ),
        "{err}"
    );
}

#[test]
fn schema_lists_every_table() {
    let tmp = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    let o = skg(tmp.path(), &["schema"]);
    let md = String::from_utf8_lossy(&o.stdout);
    for t in [
        "## `skills`",
        "## `documents`",
        "## `edges`",
        "## `diagnostics`",
        "| `evidence_line` |",
    ] {
        assert!(md.contains(t), "{t}");
    }
}

/// The demo's relation graph, one edge per line. Reviewed by hand when accepted: every line is
/// a relation the demo registries were written to contain (see registries/README.md).
#[test]
fn demo_relation_graph_snapshot() {
    let tmp = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    let registries = repo().join("registries");
    let o = skg(
        tmp.path(),
        &[
            "extract",
            registries.to_str().expect("a UTF-8 path"),
            "-o",
            "out",
            "-q",
        ],
    );
    assert!(o.status.success());
    let lines: Vec<String> = rows(&tmp.path().join("out"), "edges")
        .iter()
        .map(|e| {
            format!(
                "{} -> {} {} {} {} {}",
                e["src"].as_str().unwrap_or_default(),
                e["dst"].as_str().unwrap_or_default(),
                e["kind"].as_str().unwrap_or_default(),
                e["extractor"].as_str().unwrap_or_default(),
                e["source"].as_str().unwrap_or_default(),
                e["confidence"]
            )
        })
        .collect();
    insta::assert_snapshot!(lines.join("\n"));
}
