//! What the commands print, as snapshots: the human output of every stage on the bundled demo
//! (lexical, no model needed) and the JSON summaries, with the temporary folder, timings and
//! rates filtered out. A change in what a command prints shows up here as a reviewed diff
//! (`cargo insta review`).

use std::path::Path;

use super::{repo, skg};

/// The output of `skg args…` in `dir` with its exit code, paths and timings filtered.
fn run(dir: &Path, args: &[&str]) -> String {
    let o = skg(dir, args);
    format!(
        "exit: {}\n{}",
        o.status
            .code()
            .map_or_else(|| "signal".into(), |c| c.to_string()),
        String::from_utf8_lossy(&o.stdout)
    )
}

fn settings(dir: &Path) -> insta::Settings {
    let mut s = insta::Settings::clone_current();
    s.add_filter(&regex_escape(&dir.display().to_string()), "[TMP]");
    s.add_filter(&regex_escape(&repo().display().to_string()), "[REPO]");
    // Durations (`0.12s`, `0.12 s`, `in 3.4s`) and rates (`(123 skills/s)`, `(45/s)`).
    s.add_filter(r"\b\d+\.\d+ ?s\b", "[T]");
    s.add_filter(r"\(\d+ skills/s\)", "([N] skills/s)");
    s.add_filter(r"\d+ KB\)", "[N] KB)");
    s.add_filter(r#""(seconds|elapsed_seconds|skills_per_second|took_ms|read|embed|dedup|write|total)": [0-9.e-]+"#, r#""$1": "[T]""#);
    s.add_filter(
        r#""p(50|95|99)": [0-9.e-]+|"mean": [0-9.e-]+"#,
        r#""[LATENCY]": 0"#,
    );
    s.set_prepend_module_to_snapshot(false);
    s
}

fn regex_escape(s: &str) -> String {
    s.chars()
        .flat_map(|c| {
            let special = "\\.+*?()|[]{}^$#&-~".contains(c);
            special.then_some('\\').into_iter().chain([c])
        })
        .collect()
}

/// The demo registries copied into `dir` (outside the repository: no git revision).
fn demo(dir: &Path) {
    let _ = super::audit::demo_copy(dir);
}

#[test]
fn every_stage_prints_what_it_did() {
    let tmp = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    let d = tmp.path();
    demo(d);
    settings(d).bind(|| {
        insta::assert_snapshot!(
            "extract",
            run(d, &["extract", "registries", "-o", "extract"])
        );
        insta::assert_snapshot!(
            "canonicalize",
            run(
                d,
                &["canonicalize", "extract", "-o", "canon", "--no-embeddings"]
            )
        );
        insta::assert_snapshot!(
            "score",
            run(d, &["score", "extract", "--canon", "canon", "-o", "score"])
        );
        insta::assert_snapshot!(
            "measure",
            run(
                d,
                &[
                    "measure", "extract", "--canon", "canon", "--scores", "score", "-o", "measure"
                ]
            )
        );
        insta::assert_snapshot!("gate", run(d, &["gate", "measure"]));
        insta::assert_snapshot!(
            "gate_failing",
            run(d, &["gate", "measure", "--max-cfi", "5", "--scope", "each"])
        );
        insta::assert_snapshot!(
            "audit",
            run(
                d,
                &["audit", "registries", "-o", "audit", "--no-embeddings"]
            )
        );
        insta::assert_snapshot!(
            "index_build",
            run(
                d,
                &["index", "build", "audit", "-o", "index", "--no-embeddings"]
            )
        );
        let task = "finish the feature branch and get it reviewed";
        insta::assert_snapshot!(
            "route",
            run(d, &["route", task, "--index", "index", "-k", "2", "--bm25"])
        );
    });
}

#[test]
fn json_summaries_are_typed_and_stable() {
    let tmp = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    let d = tmp.path();
    demo(d);
    let json = |args: &[&str]| {
        let mut all = args.to_vec();
        all.extend(["--format", "json"]);
        run(d, &all)
    };
    settings(d).bind(|| {
        insta::assert_snapshot!(
            "extract_json",
            json(&["extract", "registries", "-o", "extract"])
        );
        let _ = json(&["canonicalize", "extract", "-o", "canon", "--no-embeddings"]);
        let _ = json(&["score", "extract", "--canon", "canon", "-o", "score"]);
        let _ = json(&[
            "measure", "extract", "--canon", "canon", "--scores", "score", "-o", "measure",
        ]);
        insta::assert_snapshot!("gate_json", json(&["gate", "measure"]));
        let _ = json(&["audit", "registries", "-o", "audit", "--no-embeddings"]);
        let _ = json(&["index", "build", "audit", "-o", "index", "--no-embeddings"]);
        let route = json(&[
            "route",
            "finish the feature branch",
            "--index",
            "index",
            "-k",
            "1",
            "--bm25",
        ]);
        // The CLI answers what `POST /v1/route` answers: the gateway's wire type reads it back.
        let body = route.trim_start_matches("exit: 0\n");
        let typed: skg_serve::wire::RouteResponse =
            serde_json::from_str(body).unwrap_or_else(|e| panic!("{e}: {body}"));
        assert_eq!(typed.plan.len(), 4);
        insta::assert_snapshot!("route_json", route);
    });
}

/// `skg eval --train-ranker`: the same queries over the same index give the same artifact, byte
/// for byte, and `--ranker` reads it back and measures it on the same candidates.
#[test]
fn ranker_training_is_reproducible() {
    let tmp = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    let d = tmp.path();
    demo(d);
    let ok = |args: &[&str]| {
        let o = skg(d, args);
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        o
    };
    super::lexical_index(d, "registries");
    let queries = repo().join("tests/fixtures/queries/demo.jsonl");
    let q = queries.to_str().expect("a UTF-8 path");
    let train = |out: &str| {
        ok(&[
            "eval",
            q,
            "--index",
            "index",
            "--mode",
            "bm25",
            "--folds",
            "2",
            "--train-ranker",
            out,
        ]);
        std::fs::read(d.join(out)).unwrap_or_else(|e| panic!("{e}"))
    };
    let (first, second) = (train("r1.json"), train("r2.json"));
    assert_eq!(first, second, "same data, same artifact");
    let o = ok(&[
        "eval", q, "--index", "index", "--mode", "bm25", "--ranker", "r1.json", "--format", "json",
    ]);
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).expect("parse JSON");
    let stage = &v["second_stage"];
    assert_eq!(stage["first_stage"]["queries"], 8);
    assert_eq!(stage["ranked"]["queries"], 8);
}

/// `skg eval --compare`: an evaluation compared with itself moves nothing (every difference 0,
/// every p-value 1, no query moved); a saved evaluation without per-query ranks is refused with a
/// message that says how to save one.
#[test]
fn eval_compares_with_a_saved_evaluation() {
    let tmp = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    let d = tmp.path();
    demo(d);
    let run = |args: &[&str]| skg(d, args);
    let ok = |args: &[&str]| {
        let o = run(args);
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        o
    };
    super::lexical_index(d, "registries");
    let queries = repo().join("tests/fixtures/queries/demo.jsonl");
    let q = queries.to_str().expect("a UTF-8 path");
    let eval = ["eval", q, "--index", "index", "--mode", "bm25"];
    let saved = ok(&[&eval[..], &["--per-query", "--format", "json"]].concat());
    std::fs::write(d.join("before.json"), &saved.stdout).unwrap_or_else(|e| panic!("{e}"));
    let o = ok(&[&eval[..], &["--compare", "before.json", "--format", "json"]].concat());
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).expect("parse JSON");
    assert!(
        v["modes"][0].get("per_query").is_none(),
        "ranks are printed only with --per-query"
    );
    let mode = &v["comparison"]["modes"][0];
    assert_eq!(mode["mode"], "bm25");
    assert_eq!(mode["paired"], 8);
    // The same file judged the same way: every query's digest matches.
    assert_eq!(
        (&mode["changed"], &mode["unverified"]),
        (&0.into(), &0.into())
    );
    assert_eq!(mode["moved"].as_array().map(Vec::len), Some(0));
    let metrics = mode["metrics"].as_array().expect("metrics");
    assert_eq!(metrics.len(), 5, "hit@1/3/5/10 and MRR@10");
    for m in metrics {
        assert_eq!(m["delta"], 0.0, "{m}");
        assert_eq!(m["p_value"], 1.0, "{m}");
        assert_eq!(m["before"], m["after"], "{m}");
    }
    // --intervals: each metric of each mode with an interval around its value.
    let o = ok(&[&eval[..], &["--intervals", "--format", "json"]].concat());
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).expect("parse JSON");
    let first = &v["intervals"][0];
    assert_eq!(
        (first["mode"].as_str(), first["queries"].as_u64()),
        (Some("bm25"), Some(8))
    );
    let metrics = first["metrics"].as_array().expect("metrics");
    assert_eq!(metrics.len(), 5);
    for metric in metrics {
        let (value, lo, hi) = (
            metric["value"].as_f64().expect("value"),
            metric["ci95"][0].as_f64().expect("low"),
            metric["ci95"][1].as_f64().expect("high"),
        );
        assert!(
            (0.0..=value).contains(&lo) && (value..=1.0).contains(&hi),
            "{metric}"
        );
    }
    assert_eq!(
        metrics[0]["value"], v["modes"][0]["metrics"]["hit"][0],
        "the same hit@1 as the table"
    );
    // As a gate: nothing worse, status 0 …
    let o = ok(&[
        &eval[..],
        &["--compare", "before.json", "--fail-if-worse", "0.05"],
    ]
    .concat());
    assert!(
        String::from_utf8_lossy(&o.stdout).contains("no metric worse beyond chance"),
        "{}",
        String::from_utf8_lossy(&o.stdout)
    );
    // … and against a saved run where every query was first, every metric that fell is a
    // regression at α = 1 (each Holm-adjusted p is at most 1): status 1, each one named.
    let ranks = v_ranks(&saved.stdout);
    let all_first: Vec<serde_json::Value> = ranks
        .iter()
        .map(|(q, _)| serde_json::json!([q, 1]))
        .collect();
    assert!(
        ranks.iter().any(|(_, r)| *r != Some(1)),
        "the demo has a query BM25 does not rank first: {ranks:?}"
    );
    let perfect = serde_json::json!({"index_revision": "perfect", "modes": [{"mode": "bm25", "per_query": all_first}]});
    std::fs::write(d.join("perfect.json"), perfect.to_string()).unwrap_or_else(|e| panic!("{e}"));
    let o = run(&[
        &eval[..],
        &[
            "--compare",
            "perfect.json",
            "--fail-if-worse",
            "1",
            "--format",
            "json",
        ],
    ]
    .concat());
    assert_eq!(
        o.status.code(),
        Some(1),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).expect("parse JSON");
    let regressions = v["regressions"].as_array().expect("regressions");
    assert!(!regressions.is_empty());
    // A file without digests (`[id, rank]`, as saved before them) pairs by id alone, and says so.
    assert_eq!(v["comparison"]["modes"][0]["unverified"], ranks.len());
    assert!(
        regressions
            .iter()
            .all(|r| r["delta"].as_f64() < Some(0.0) && r["mode"] == "bm25")
    );
    // Each refusal: a failed run whose error says why (the stderr is returned).
    let refused = |extra: &[&str]| -> String {
        let o = run(&[&eval[..], extra].concat());
        assert!(!o.status.success(), "{extra:?} should be refused");
        String::from_utf8_lossy(&o.stderr).into_owned()
    };
    // Nothing to compare (another mode, or other queries) is an error, not an empty table.
    let dense = serde_json::json!({"modes": [{"mode": "dense", "per_query": [["q1", 1]]}]});
    std::fs::write(d.join("dense.json"), dense.to_string()).unwrap_or_else(|e| panic!("{e}"));
    let err = refused(&["--compare", "dense.json"]);
    assert!(
        err.contains("dense.json") && err.contains("saved modes: dense"),
        "{err}"
    );
    // The saved run left quarantined skills out; one that routes them is another measurement.
    let err = refused(&["--compare", "before.json", "--include-quarantined"]);
    assert!(
        err.contains("before.json") && err.contains("like with like"),
        "{err}"
    );
    // A level outside (0, 1] is refused.
    let err = refused(&["--compare", "before.json", "--fail-if-worse", "5"]);
    assert!(err.contains("--fail-if-worse"), "{err}");
    // A summary saved without --per-query cannot be paired.
    let plain = ok(&[&eval[..], &["--format", "json"]].concat());
    std::fs::write(d.join("plain.json"), &plain.stdout).unwrap_or_else(|e| panic!("{e}"));
    let err = refused(&["--compare", "plain.json"]);
    assert!(
        err.contains("plain.json") && err.contains("--per-query"),
        "{err}"
    );
}

/// `skg index build --embedding-cache`: a source that holds no cache is refused up front, named,
/// before any work (a silent cold build would be the surprise it exists to avoid).
#[test]
fn an_embedding_cache_that_is_not_there_is_refused() {
    let tmp = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    let d = tmp.path();
    std::fs::create_dir(d.join("empty")).unwrap_or_else(|e| panic!("{e}"));
    for source in ["empty", "nowhere.cache"] {
        let o = skg(
            d,
            &[
                "index",
                "build",
                "audit",
                "-o",
                "index",
                "--embedding-cache",
                source,
            ],
        );
        assert!(!o.status.success());
        let err = String::from_utf8_lossy(&o.stderr);
        assert!(
            err.contains(source) && err.contains("embeddings.cache"),
            "{err}"
        );
        assert!(!d.join("index").exists(), "nothing written");
    }
}

/// `serve --poll-seconds` outside a tenth of a second to a day is refused when the arguments are
/// read, with the value named (a huge one had panicked when the watch started).
#[test]
fn a_poll_interval_out_of_range_is_refused() {
    let tmp = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    for value in ["1e30", "0.01", "NaN"] {
        let o = skg(
            tmp.path(),
            &["serve", "--index", "index", "--poll-seconds", value],
        );
        assert_eq!(o.status.code(), Some(2), "{value}");
        let err = String::from_utf8_lossy(&o.stderr);
        assert!(
            err.contains(value) && err.contains("from 0.1 to 86400"),
            "{value}: {err}"
        );
    }
}

/// The (query, rank) pairs of the first mode of a saved `--per-query --format json` evaluation
/// (each saved as `[key, rank, digest of what was judged]`).
fn v_ranks(stdout: &[u8]) -> Vec<(String, Option<u64>)> {
    let v: serde_json::Value = serde_json::from_slice(stdout).expect("parse JSON");
    v["modes"][0]["per_query"]
        .as_array()
        .expect("per-query ranks")
        .iter()
        .map(|p| {
            let digest = p[2].as_str().expect("a judged digest");
            assert!(
                digest.len() == 16 && digest.chars().all(|c| c.is_ascii_hexdigit()),
                "{p}"
            );
            (p[0].as_str().expect("a query").to_owned(), p[1].as_u64())
        })
        .collect()
}
