//! `skg score`, `score train` and `score eval` end to end on the demo registries.

use std::fmt::Write as _;

use crate::{extract_demo, rows, skg, skg_json};

#[test]
fn score_writes_a_row_per_skill_with_the_committed_model() {
    let tmp = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    extract_demo(tmp.path());
    let v = skg_json(tmp.path(), &["score", "extract", "-o", "score"]);
    assert_eq!(v["skills"], 35);
    let scores = rows(&tmp.path().join("score"), "scores");
    assert_eq!(scores.len(), 35);
    for r in &scores {
        assert!(r["registry"].as_str().is_some_and(|s| !s.is_empty()));
        assert!(
            r["path"]
                .as_str()
                .is_some_and(|s| s.to_ascii_lowercase().ends_with("skill.md"))
        );
        let s = r["slop_score"].as_f64().unwrap_or(-1.0);
        assert!((0.0..=1.0).contains(&s));
        assert_eq!(r["quarantined"].as_bool(), Some(s < 0.4));
    }
    // The demo's healthy registry is kept whole.
    assert!(
        scores
            .iter()
            .filter(|r| r["registry"] == "demo/devflow")
            .all(|r| r["quarantined"] == false)
    );
    // Quarantined skills say why.
    for r in scores.iter().filter(|r| r["quarantined"] == true) {
        assert!(
            r["reasons"].as_array().is_some_and(|a| !a.is_empty()),
            "{r}"
        );
    }
}

#[test]
fn labels_with_a_bad_row_name_the_row() {
    let tmp = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    extract_demo(tmp.path());
    std::fs::write(
        tmp.path().join("labels.csv"),
        "path,label\ndevflow/skills/reviewing-code/SKILL.md,good\ndevflow/skills/ci-triage/SKILL.md,excellent\n",
    )
    .unwrap_or_else(|e| panic!("{e}"));
    let o = skg(
        tmp.path(),
        &["score", "eval", "--labels", "labels.csv", "extract"],
    );
    assert_eq!(o.status.code(), Some(2));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains("labels.csv:3") && err.contains("excellent"),
        "{err}"
    );

    std::fs::write(
        tmp.path().join("labels.csv"),
        "path,label\nnowhere/SKILL.md,good\n",
    )
    .unwrap_or_else(|e| panic!("{e}"));
    let o = skg(
        tmp.path(),
        &["score", "eval", "--labels", "labels.csv", "extract"],
    );
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("labels.csv:2"));
}

#[test]
fn train_is_deterministic_and_eval_reads_its_model() {
    let tmp = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    extract_demo(tmp.path());
    let mut csv = String::from("path,label\n");
    for s in [
        "reviewing-code",
        "ci-triage",
        "release-notes",
        "changelog-writing",
        "git-worktree-isolation",
    ] {
        let _ = writeln!(csv, "devflow/skills/{s}/SKILL.md,good");
    }
    for s in [
        "connectorhub/trello-automation",
        "connectorhub/asana-automation",
        "connectorhub/notion-automation",
        "growthgenie/productivity-booster",
    ] {
        let _ = writeln!(csv, "community/{s}/SKILL.md,slop");
    }
    std::fs::write(tmp.path().join("labels.csv"), csv).unwrap_or_else(|e| panic!("{e}"));
    for out in ["m1.json", "m2.json"] {
        let o = skg(
            tmp.path(),
            &[
                "score",
                "train",
                "--labels",
                "labels.csv",
                "extract",
                "--out",
                out,
                "-q",
            ],
        );
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    }
    let m1 = std::fs::read(tmp.path().join("m1.json")).expect("read a file the run wrote");
    assert!(!m1.is_empty());
    assert_eq!(
        m1,
        std::fs::read(tmp.path().join("m2.json")).expect("read a file the run wrote"),
        "retraining is deterministic"
    );
    let v = skg_json(
        tmp.path(),
        &[
            "score",
            "eval",
            "--labels",
            "labels.csv",
            "extract",
            "--model",
            "m1.json",
        ],
    );
    // Fitted on these very rows, the model separates them.
    assert!((v["pooled"]["auc_good_vs_slop"].as_f64().unwrap_or(0.0) - 1.0).abs() < 1e-9);
}
