//! Tool catalogs as registries.

use crate::{repo, rows, skg_json};

#[test]
fn jsonl_and_mcp_catalogs() {
    let tmp = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    let dir = repo().join("tests/fixtures/catalogs");
    let jsonl = dir.join("tools.jsonl");
    let mcp = dir.join("mcp-tools-list.json");
    skg_json(
        tmp.path(),
        &[
            "extract",
            jsonl.to_str().expect("a UTF-8 path"),
            mcp.to_str().expect("a UTF-8 path"),
            "-o",
            "out",
        ],
    );
    let out = tmp.path().join("out");
    let skills = rows(&out, "skills");
    let ids: Vec<&str> = skills.iter().filter_map(|s| s["id"].as_str()).collect();
    assert_eq!(
        ids,
        vec![
            "mcp-tools-list:create_issue",
            "mcp-tools-list:search_code",
            "tools:sql_runner",
            "tools:sql_runner#2",
            "tools:weather_lookup"
        ]
    );
    assert!(skills.iter().all(|s| s["kind"] == "tool"));
    let weather = skills
        .iter()
        .find(|s| s["id"] == "tools:weather_lookup")
        .cloned()
        .unwrap_or_default();
    assert!(
        weather["body"]
            .as_str()
            .unwrap_or_default()
            .contains("- `city` (string, required): City name")
    );
    let diags = rows(&out, "diagnostics");
    let got: Vec<(String, u64)> = diags
        .iter()
        .map(|d| {
            (
                d["code"].as_str().unwrap_or_default().to_owned(),
                d["line"].as_u64().unwrap_or(0),
            )
        })
        .collect();
    assert_eq!(
        got,
        vec![
            ("catalog-invalid".into(), 3),
            ("catalog-invalid".into(), 4),
            ("duplicate-skill".into(), 5)
        ]
    );
    // A tool description naming another tool is a relation like any other.
    let edges = rows(&out, "edges");
    assert!(
        edges
            .iter()
            .any(|e| e["src"] == "mcp-tools-list:search_code"
                && e["dst"] == "mcp-tools-list:create_issue"),
        "{edges:?}"
    );
}

#[test]
fn metatool_benchmark_loads_when_present() {
    let Some(tools) = skg_testkit::shared("bench/metatool_dev/tools.jsonl") else {
        return;
    };
    let tmp = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    let summary = skg_json(
        tmp.path(),
        &[
            "extract",
            tools.to_str().expect("a UTF-8 path"),
            "-o",
            "out",
        ],
    );
    let lines = std::fs::read_to_string(&tools)
        .expect("read a file the run wrote")
        .lines()
        .filter(|l| !l.trim().is_empty())
        .count();
    assert_eq!(
        summary["counts"]["skills"], lines as u64,
        "one skill per tool"
    );
}

/// A tool catalog routes by default: tool entries are not quarantined by the SKILL.md quality
/// model (a tool's card is thin by design), only when they have nothing to route by.
#[test]
fn a_tool_catalog_routes_with_the_default_quarantine() {
    let tmp = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    let d = tmp.path();
    let dir = repo().join("tests/fixtures/catalogs");
    let jsonl = dir.join("tools.jsonl");
    let mcp = dir.join("mcp-tools-list.json");
    let (jsonl, mcp) = (
        jsonl.to_str().expect("a UTF-8 path"),
        mcp.to_str().expect("a UTF-8 path"),
    );
    let audit = skg_json(
        d,
        &["audit", jsonl, mcp, "-o", "audit", "--no-embeddings", "-q"],
    );
    assert_eq!(audit["quarantined"], 0, "{audit}");
    let scores = rows(&d.join("audit"), "scores");
    assert!(
        scores.iter().all(|s| s["reasons"][0]
            .as_str()
            .is_some_and(|r| r.starts_with("tool-catalog entry: outside the model's domain"))),
        "{scores:?}"
    );
    skg_json(d, &crate::LEXICAL_INDEX_BUILD);
    // No --include-quarantined: the default route.
    let r = skg_json(
        d,
        &[
            "route",
            "what is the weather in Paris tomorrow",
            "--index",
            "index",
            "-k",
            "1",
        ],
    );
    assert_eq!(r["plan"][0]["id"], "tools:weather_lookup", "{r}");
    assert_eq!(r["nothing_cleared_the_floor"], false);
}
