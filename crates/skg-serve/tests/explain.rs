//! `explain: true` and the access log: every candidate's signals and decision in the answer; one
//! log line per request with tenant, revision and result ids, never the task text unless the
//! gateway is configured to log it.
#![allow(
    clippy::disallowed_methods,
    reason = "tests set up and inspect files on disk"
)]
#![allow(clippy::unwrap_used, reason = "a panic is the test failure")]

use axum::http::StatusCode;
use serde_json::{Value, json};

mod common;

use common::{build_index, call, gateway, post};

#[tokio::test]
async fn explain_shows_every_candidate_and_the_access_log_names_results_not_tasks() {
    use std::sync::{Arc as StdArc, Mutex};
    // The access log (target skg::access), captured.
    #[derive(Clone, Default)]
    struct Captured(StdArc<Mutex<Vec<u8>>>);
    impl std::io::Write for Captured {
        fn write(&mut self, b: &[u8]) -> std::io::Result<usize> {
            self.0.lock().unwrap().extend_from_slice(b);
            Ok(b.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }
    let log = Captured::default();
    let sink = log.clone();
    let subscriber = tracing_subscriber::fmt()
        .with_env_filter("skg::access=info")
        .with_writer(move || sink.clone())
        .with_ansi(false)
        .finish();
    // The only test of this binary: the subscriber is global (a thread-local one races with
    // tracing's callsite cache when other tests run beside it).
    tracing::subscriber::set_global_default(subscriber).unwrap();

    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("index");
    let manifest = build_index(&dir, None);
    let gw = gateway(&dir, None);
    let task = "review the pull request code changes";
    let f = call(
        &gw,
        post(
            "/v1/skills/find",
            &json!({"query": task, "k": 3, "explain": true}),
        ),
    )
    .await;
    assert_eq!(f.status, StatusCode::OK, "{}", f.json);
    let e = &f.json["explain"];
    let candidates = e["candidates"].as_array().unwrap();
    let kept: Vec<&Value> = candidates
        .iter()
        .filter(|c| c["decision"] == "kept")
        .collect();
    // The kept candidates are the results, in order, each above the floor.
    let results: Vec<&str> = f.json["results"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["id"].as_str().unwrap())
        .collect();
    let kept_ids: Vec<&str> = kept.iter().map(|c| c["id"].as_str().unwrap()).collect();
    assert_eq!(kept_ids, results);
    for (i, c) in kept.iter().enumerate() {
        assert_eq!(c["rank"], i + 1);
        assert!(c["score"].as_f64().unwrap() > e["floor"].as_f64().unwrap());
    }
    // BM25 as the fusion counted it: this index has no vectors, so the answer is BM25's alone
    // and what BM25 gave each candidate is what counted (the cut in hybrid: skg-index's fusion
    // test).
    assert_eq!(e["mode"], "bm25");
    for c in candidates {
        let (bm25, counted) = (
            c["bm25"].as_f64().unwrap(),
            c["bm25_counted"].as_f64().unwrap(),
        );
        assert!((counted - bm25).abs() < 1e-6, "{c}");
    }
    assert_eq!(e["k"], 3);
    assert!(e["terms"].as_array().is_some_and(|t| !t.is_empty()));
    // With a floor above every score, every candidate is dropped and says why.
    let high = call(
        &gw,
        post(
            "/v1/skills/find",
            &json!({"query": task, "k": 3, "explain": true, "min_score": 1e9}),
        ),
    )
    .await;
    assert_eq!(high.json["nothing_cleared_the_floor"], true);
    let dropped = high.json["explain"]["candidates"].as_array().unwrap();
    assert!(!dropped.is_empty());
    assert!(
        dropped
            .iter()
            .all(|c| c["decision"] == "below_floor" && c["rank"].is_null())
    );
    // Without `explain` the field is absent.
    let plain = call(&gw, post("/v1/skills/find", &json!({"query": task}))).await;
    assert!(plain.json.get("explain").is_none());

    let text = String::from_utf8(log.0.lock().unwrap().clone()).unwrap();
    let line = text
        .lines()
        .find(|l| l.contains("route=/v1/skills/find") && l.contains("status=200"))
        .unwrap_or_else(|| panic!("no access log line: {text}"));
    assert!(
        line.contains(&format!("revision={}", manifest.content_hash)),
        "{line}"
    );
    assert!(
        line.contains(&format!("results={}", results.join(","))),
        "{line}"
    );
    assert!(line.contains("tenant=open"), "{line}");
    assert!(
        !text.contains(task),
        "the task text is not logged unless configured: {text}"
    );
}
