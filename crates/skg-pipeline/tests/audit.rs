//! The audit's stage loop over the bundled demo registries: what runs, what is reused, and why.

use std::path::PathBuf;

use skg_model::NoProgress;
use skg_pipeline::audit::{Plan, execute};

fn demo() -> PathBuf {
    PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/../../registries"))
}

/// A plan over the demo without the embedding model (the test needs no download).
fn plan(out: PathBuf) -> Plan {
    let mut p = Plan::new(vec![demo()], out);
    p.embeddings = false;
    p
}

/// Each stage's status (`computed` / `reused`) in pipeline order.
fn statuses(plan: &Plan) -> Vec<(String, String)> {
    let summary = execute(plan, &NoProgress).unwrap_or_else(|e| panic!("audit: {e}"));
    let v = serde_json::to_value(&summary).unwrap_or_else(|e| panic!("{e}"));
    v["stages"]
        .as_array()
        .unwrap_or_else(|| panic!("stages: {v}"))
        .iter()
        .map(|s| {
            (
                s["stage"].as_str().unwrap_or_default().to_owned(),
                s["status"].as_str().unwrap_or_default().to_owned(),
            )
        })
        .collect()
}

fn all(status: &str) -> Vec<(String, String)> {
    ["extract", "canonicalize", "score", "measure"]
        .iter()
        .map(|s| ((*s).to_owned(), status.to_owned()))
        .collect()
}

#[test]
fn a_stage_reruns_exactly_when_its_key_changes() {
    let tmp = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    let mut p = plan(tmp.path().join("audit"));

    assert_eq!(statuses(&p), all("computed"), "first run");
    assert!(skg_artifact::require_finished(&p.out).is_ok());
    assert_eq!(statuses(&p), all("reused"), "nothing changed");

    // A changed score option: the stages before score are untouched and score reruns (measure
    // follows whenever score's output bytes changed: its key holds their hash).
    p.score.threshold = 0.9;
    let s = statuses(&p);
    assert_eq!(s[0].1, "reused", "{s:?}");
    assert_eq!(s[1].1, "reused", "{s:?}");
    assert_eq!(s[2].1, "computed", "{s:?}");

    // The same options again: reused, now under the new key.
    assert_eq!(
        statuses(&p),
        all("reused"),
        "second run with the new threshold"
    );

    p.force = true;
    assert_eq!(statuses(&p), all("computed"), "--force");
}

#[test]
fn a_folder_that_is_not_an_extract_output_is_an_error_that_says_what_to_run() {
    let tmp = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    let e = skg_pipeline::read_extract(tmp.path()).err();
    let message = e.map(|e| e.to_string()).unwrap_or_default();
    assert!(message.contains("run `skg extract` first"), "{message}");
    assert!(
        message.contains(&tmp.path().display().to_string()),
        "{message}"
    );
}
