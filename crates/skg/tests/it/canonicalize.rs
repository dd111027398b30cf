//! `skg canonicalize` end to end: the demo registries with the real embedding model, labelled
//! pairs, the missing-model error, and the known duplicates of a peer's fixture.

use std::{collections::BTreeMap, fmt::Write as _, path::Path};

use serde_json::Value;

use crate::{extract_demo, model_dir, repo, rows, skg_env};

fn canon_json(cwd: &Path, args: &[&str], model: &Path) -> Value {
    let mut all: Vec<&str> = args.to_vec();
    all.extend(["--format", "json"]);
    let out = skg_env(cwd, &all, &[("SKG_MODEL_DIR", model)]);
    assert!(
        out.status.success(),
        "skg {args:?} failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).unwrap_or_else(|e| panic!("stdout is not JSON: {e}"))
}

fn member<'a>(members: &'a [Value], id: &str) -> &'a Value {
    members
        .iter()
        .find(|m| m["id"] == id)
        .unwrap_or_else(|| panic!("no member row for {id}"))
}

#[test]
fn demo_registries_with_embeddings() {
    let Some(model) = model_dir() else {
        return;
    };
    let tmp = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    extract_demo(tmp.path());

    let first = canon_json(
        tmp.path(),
        &["canonicalize", "extract", "-o", "canon"],
        &model,
    );
    assert_eq!(first["similarity"], "embedding");
    // The 35 descriptions, then the taxonomy's prototype texts (one cache).
    let prototype_texts: usize = skg_extract::capability::taxonomy()
        .prototype_texts()
        .iter()
        .map(Vec::len)
        .sum();
    assert_eq!(first["embedding"]["texts"], 35 + prototype_texts);
    assert!(first["embedding"]["embedded"].as_u64().unwrap_or(0) > 0);

    let canon = tmp.path().join("canon");
    let members = rows(&canon, "members");
    assert_eq!(members.len(), 35, "one row per skill");
    for m in &members {
        for col in ["registry", "path", "cluster_id", "role"] {
            assert!(
                m[col].as_str().is_some_and(|s| !s.is_empty()),
                "{col} in {m}"
            );
        }
    }
    // The demo's three documented copies (registries/README.md) are merged; the original that
    // other devflow skills refer to is canonical.
    for (copy, original) in [
        (
            "demo/datalab:skills/reviewing-code",
            "demo/devflow:skills/reviewing-code",
        ),
        (
            "demo/datalab:skills/git-worktree-isolation",
            "demo/devflow:skills/git-worktree-isolation",
        ),
        (
            "demo/community:vizfolk/chart-maker",
            "demo/datalab:skills/plotting-charts",
        ),
    ] {
        assert_eq!(member(&members, copy)["role"], "duplicate", "{copy}");
        assert_eq!(member(&members, copy)["cluster_id"], original, "{copy}");
        assert_eq!(
            member(&members, original)["role"],
            "canonical",
            "{original}"
        );
    }
    // The three "Automate X via Connector" skeletons fill one template for different products.
    let trello =
        member(&members, "demo/community:connectorhub/trello-automation")["cluster_id"].clone();
    let asana =
        member(&members, "demo/community:connectorhub/asana-automation")["cluster_id"].clone();
    assert_ne!(trello, asana);
    // Aliases, duplicate_of edges and canonical skills agree with the member rows.
    let aliases = rows(&canon, "aliases");
    assert_eq!(aliases.len(), 3);
    let dup_edges = rows(&canon, "edges")
        .into_iter()
        .filter(|e| e["kind"] == "duplicate_of")
        .count();
    assert_eq!(dup_edges, 3);
    assert_eq!(rows(&canon, "canonical_skills").len(), 35 - 3);

    // Capability types: one row per skill; a type the words named is extract's, untouched; a
    // type named by the embedding is one the words left `unknown` (the prototype holding a third
    // of the mass); canonical skills carry them.
    let extracted: BTreeMap<String, Value> = rows(&tmp.path().join("extract"), "skills")
        .into_iter()
        .map(|s| (s["id"].as_str().unwrap_or_default().to_owned(), s))
        .collect();
    let capabilities = rows(&canon, "capabilities");
    assert_eq!(capabilities.len(), 35);
    let mut by_embedding = 0;
    for c in &capabilities {
        let id = c["id"].as_str().unwrap_or_default();
        let words = &extracted[id]["capability"];
        let share = c["confidence"].as_f64().unwrap_or(0.0);
        match c["evidence"].as_str() {
            Some("words") => assert_eq!(&c["capability"], words, "{id}"),
            Some("embedding") => {
                by_embedding += 1;
                assert_ne!(c["capability"], "unknown", "{id}");
                assert_eq!(words, "unknown", "{id}");
                assert!(share >= 1.0 / 3.0, "{id}");
            }
            Some("none") => assert_eq!(c["capability"], "unknown", "{id}"),
            other => panic!("evidence {other:?} of {id}"),
        }
    }
    assert_eq!(
        first["capabilities"]["embedding"], by_embedding,
        "the summary counts the table"
    );
    for s in rows(&canon, "canonical_skills") {
        let c = capabilities
            .iter()
            .find(|c| c["id"] == s["id"])
            .unwrap_or_else(|| panic!("no capability row for {}", s["id"]));
        assert_eq!(
            (&s["capability"], &s["capability_confidence"]),
            (&c["capability"], &c["confidence"])
        );
    }
    assert_eq!(rows(&canon, "clusters").len(), 35 - 3);

    // A second run embeds nothing (the cache persisted in the output folder) and writes the
    // same bytes.
    let snapshot =
        |name: &str| std::fs::read(canon.join(name)).unwrap_or_else(|e| panic!("{name}: {e}"));
    let before: Vec<Vec<u8>> = [
        "members.ndjson",
        "clusters.parquet",
        "edges.ndjson",
        "capabilities.ndjson",
        "canonical_skills.ndjson",
        "manifest.json",
    ]
    .iter()
    .map(|n| snapshot(n))
    .collect();
    let second = canon_json(
        tmp.path(),
        &["canonicalize", "extract", "-o", "canon"],
        &model,
    );
    assert_eq!(second["embedding"]["embedded"], 0);
    assert_eq!(
        second["embedding"]["from_cache"],
        first["embedding"]["unique_texts"]
    );
    let after: Vec<Vec<u8>> = [
        "members.ndjson",
        "clusters.parquet",
        "edges.ndjson",
        "capabilities.ndjson",
        "canonical_skills.ndjson",
        "manifest.json",
    ]
    .iter()
    .map(|n| snapshot(n))
    .collect();
    assert!(before == after, "same input → byte-identical output");

    // A damaged cache is a warning, not an error: everything is embedded again.
    let cache = canon.join("embeddings.cache");
    let bytes = std::fs::read(&cache).expect("read a file the run wrote");
    std::fs::write(&cache, &bytes[..bytes.len() / 2]).unwrap_or_else(|e| panic!("{e}"));
    let third = canon_json(
        tmp.path(),
        &["canonicalize", "extract", "-o", "canon"],
        &model,
    );
    assert_eq!(
        third["embedding"]["embedded"],
        first["embedding"]["unique_texts"]
    );
    assert!(
        std::fs::read(canon.join("members.ndjson")).expect("read a file the run wrote")
            == before[0]
    );
    assert!(
        std::fs::read(canon.join("capabilities.ndjson")).expect("read a file the run wrote")
            == before[3],
        "re-embedded vectors type the skills the same way"
    );
}

#[test]
fn pairs_csv_gives_decisions_and_metrics() {
    let Some(model) = model_dir() else {
        return;
    };
    let tmp = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    let reg = repo().join("registries");
    // Three labelled duplicates (one the tool can't see: two different devflow skills) and one
    // distinct pair: by hand, 2 predicted duplicates, both right, of 3 labelled → precision 1,
    // recall 2/3, F1 0.8.
    let csv = "a,b,label\n\
        devflow/skills/reviewing-code/SKILL.md,datalab/skills/reviewing-code/SKILL.md,duplicate\n\
        datalab/skills/plotting-charts/SKILL.md,community/vizfolk/chart-maker/SKILL.md,duplicate\n\
        devflow/skills/release-notes/SKILL.md,devflow/skills/ci-triage/SKILL.md,duplicate\n\
        community/connectorhub/trello-automation/SKILL.md,community/connectorhub/asana-automation/SKILL.md,distinct\n";
    std::fs::write(tmp.path().join("pairs.csv"), csv).unwrap_or_else(|e| panic!("{e}"));
    let v = canon_json(
        tmp.path(),
        &[
            "canonicalize",
            reg.to_str().expect("a UTF-8 path"),
            "-o",
            "canon",
            "--pairs",
            "pairs.csv",
        ],
        &model,
    );
    let p = &v["pairs"];
    assert_eq!(p["pairs"], 4);
    assert_eq!(p["unresolved"].as_array().map(Vec::len), Some(0));
    let d = &p["duplicate"];
    assert_eq!(d["true_positives"], 2);
    assert_eq!(d["predicted"], 2);
    assert_eq!(d["actual"], 3);
    assert!((d["precision"].as_f64().unwrap_or(0.0) - 1.0).abs() < 1e-9);
    assert!((d["recall"].as_f64().unwrap_or(0.0) - 2.0 / 3.0).abs() < 1e-9);
    assert!((d["f1"].as_f64().unwrap_or(0.0) - 0.8).abs() < 1e-9);
    assert_eq!(p["confusion"]["duplicate"]["duplicate"], 2);
    assert_eq!(p["confusion"]["distinct"]["distinct"], 1);
}

#[test]
fn missing_model_names_the_fetch_command_and_lexical_mode_says_so() {
    let tmp = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    let empty = tmp.path().join("no-model");
    std::fs::create_dir_all(&empty).unwrap_or_else(|e| panic!("{e}"));
    let reg = repo().join("registries");
    let reg = reg.to_str().expect("a UTF-8 path");
    let out = skg_env(
        tmp.path(),
        &["canonicalize", reg, "-o", "canon"],
        &[("SKG_MODEL_DIR", &empty)],
    );
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("scripts/fetch-model.sh"), "{err}");
    assert!(err.contains("--no-embeddings"), "{err}");
    assert!(!tmp.path().join("canon").exists(), "nothing half-written");

    let out = skg_env(
        tmp.path(),
        &["canonicalize", reg, "-o", "canon", "--no-embeddings"],
        &[("SKG_MODEL_DIR", &empty)],
    );
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("lexical"), "{text}");
    let manifest: Value = serde_json::from_str(
        &std::fs::read_to_string(tmp.path().join("canon/manifest.json"))
            .expect("read a file the run wrote"),
    )
    .unwrap_or(Value::Null);
    assert_eq!(manifest["options"]["similarity"], "lexical");
}

/// The peer AgentSkillFinder's known duplicates: pairs of one-script skills whose scripts are the
/// same program under different names. Each becomes a skill folder; its slop score is passed
/// with `--scores` so the canonical choice can be compared with the peer's expectation.
#[test]
fn asf_known_duplicates() {
    let Some(fixture) = skg_testkit::shared("bench/peers/asf/known-duplicates.json") else {
        return;
    };
    let text = std::fs::read_to_string(&fixture).unwrap_or_else(|e| panic!("{e}"));
    let cases: Vec<Value> = serde_json::from_str(&text).unwrap_or_else(|e| panic!("{e}"));
    let tmp = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    let regs = tmp.path().join("regs");
    let mut scores = String::new();
    for case in &cases {
        for s in case["pair"].as_array().into_iter().flatten() {
            let (id, registry) = (
                s["id"].as_str().unwrap_or(""),
                s["registry"].as_str().unwrap_or(""),
            );
            let dir = regs.join(registry).join(id);
            std::fs::create_dir_all(dir.join("scripts")).unwrap_or_else(|e| panic!("{e}"));
            let md = format!(
                "---\nname: {id}\ndescription: {} helper\n---\n# {id}\n",
                id.replace('-', " ")
            );
            std::fs::write(dir.join("SKILL.md"), md).unwrap_or_else(|e| panic!("{e}"));
            if let Some(script) = s["script"].as_str() {
                std::fs::write(dir.join("scripts/main.js"), script)
                    .unwrap_or_else(|e| panic!("{e}"));
            }
            let _ = writeln!(
                scores,
                "{{\"id\":\"{registry}:{id}\",\"slop_score\":{}}}",
                s["slop_score"]
            );
        }
    }
    std::fs::write(tmp.path().join("scores.ndjson"), scores).unwrap_or_else(|e| panic!("{e}"));
    let mut registries: Vec<String> = std::fs::read_dir(&regs)
        .unwrap_or_else(|e| panic!("{e}"))
        .filter_map(|e| e.ok().map(|e| e.path().display().to_string()))
        .collect();
    registries.sort();
    let mut args: Vec<&str> = vec!["canonicalize"];
    args.extend(registries.iter().map(String::as_str));
    args.extend([
        "-o",
        "canon",
        "--no-embeddings",
        "--scores",
        "scores.ndjson",
        "-q",
    ]);
    let out = skg_env(tmp.path(), &args, &[]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let members = rows(&tmp.path().join("canon"), "members");
    let cluster: BTreeMap<String, String> = members
        .iter()
        .map(|m| {
            (
                m["id"].as_str().unwrap_or("").to_owned(),
                m["cluster_id"].as_str().unwrap_or("").to_owned(),
            )
        })
        .collect();
    let mut ast_right = 0;
    let mut ast_total = 0;
    for case in &cases {
        let pair: Vec<String> = case["pair"]
            .as_array()
            .into_iter()
            .flatten()
            .map(|s| {
                format!(
                    "{}:{}",
                    s["registry"].as_str().unwrap_or(""),
                    s["id"].as_str().unwrap_or("")
                )
            })
            .collect();
        let merged = cluster.get(&pair[0]) == cluster.get(&pair[1]);
        let canonical = cluster.get(&pair[0]).cloned().unwrap_or_default();
        let expected = case["expected_canonical"].as_str().unwrap_or("");
        let right = merged && canonical.ends_with(&format!(":{expected}"));
        eprintln!(
            "asf #{:>2} {:<8} {:<40} merged={merged:<5} canonical={canonical:<32} expected={expected}",
            case["id"],
            case["dedup_type"].as_str().unwrap_or(""),
            pair.join(" ~ ")
        );
        if case["dedup_type"] == "ast_hash" {
            ast_total += 1;
            ast_right += usize::from(right);
        }
    }
    eprintln!("asf: {ast_right}/{ast_total} script-hash pairs merged with the expected canonical");
    assert_eq!(ast_right, ast_total);
}
