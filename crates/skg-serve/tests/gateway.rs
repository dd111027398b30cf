//! The gateway end to end: routes in-process (tower `oneshot`), one real socket, MCP over HTTP and
//! stdio, reloads, refused partial artifacts and every 4xx path. The index is built from the
//! bundled demo registries (extracted here; no model, so BM25 only), with one skill quarantined
//! and one made an alias.
#![allow(
    clippy::disallowed_methods,
    reason = "tests set up and inspect files on disk"
)]
#![allow(
    clippy::unwrap_used,
    clippy::too_many_lines,
    clippy::many_single_char_names,
    reason = "a panic is the test failure"
)]

use std::sync::Arc;

use axum::{
    body::Body,
    http::{Request, StatusCode, header},
};
use serde_json::{Value, json};
use skg_serve::{Config, Gateway};

mod common;

use common::{
    ALIAS, QUARANTINED, Reply, build_index, call, extraction, gateway, get, post, reload, score,
};
use skg_model::Score;

#[tokio::test]
async fn health_find_search_and_skill() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("index");
    let manifest = build_index(&dir, None);
    let gw = gateway(&dir, None);

    let h = call(&gw, get("/health")).await;
    assert_eq!(h.status, StatusCode::OK);
    assert_eq!(h.json["index"]["revision"], manifest.content_hash.as_str());
    assert_eq!(h.json["status"], "degraded", "no vectors: BM25 only");
    assert!(
        h.json["degraded"][0]
            .as_str()
            .unwrap()
            .contains("BM25 only"),
        "{}",
        h.json
    );
    assert_eq!(h.json["index"]["counts"]["quarantined"], 1);
    assert_eq!(h.json["index"]["counts"]["aliases"], 1);

    // find: one result per skill, never the quarantined or the alias skill.
    let f = call(
        &gw,
        post(
            "/v1/skills/find",
            &json!({"query": "review the pull request code changes", "k": 10}),
        ),
    )
    .await;
    assert_eq!(f.status, StatusCode::OK, "{}", f.json);
    let results = f.json["results"].as_array().unwrap();
    assert!(!results.is_empty());
    let ids: Vec<&str> = results.iter().map(|r| r["id"].as_str().unwrap()).collect();
    let mut distinct = ids.clone();
    distinct.sort_unstable();
    distinct.dedup();
    assert_eq!(distinct.len(), ids.len(), "one result per skill: {ids:?}");
    assert!(
        !ids.contains(&QUARANTINED) && !ids.contains(&ALIAS),
        "{ids:?}"
    );
    for r in results {
        for field in [
            "name",
            "description",
            "root_uri",
            "uri",
            "level",
            "score",
            "abstract",
        ] {
            assert!(!r[field].is_null(), "{field} missing in {r}");
        }
        assert!(
            r["uri"]
                .as_str()
                .unwrap()
                .starts_with(r["root_uri"].as_str().unwrap())
        );
        assert!(r["level"].as_u64().unwrap() <= 2);
    }
    let scores: Vec<f64> = results
        .iter()
        .map(|r| r["score"].as_f64().unwrap())
        .collect();
    assert!(scores.windows(2).all(|w| w[0] >= w[1]), "best first");

    // With the quarantine off, the quarantined skill can be found.
    let q = call(
        &gw,
        post(
            "/v1/skills/find",
            &json!({"query": "review the pull request code changes", "k": 10, "include_quarantined": true}),
        ),
    )
    .await;
    assert!(
        q.json["results"]
            .as_array()
            .unwrap()
            .iter()
            .any(|r| r["id"] == QUARANTINED)
    );

    // A floor nothing clears: no results, everything rejected, and it says so.
    let floor = call(
        &gw,
        post(
            "/v1/skills/find",
            &json!({"query": "review code", "min_score": 1e9}),
        ),
    )
    .await;
    assert_eq!(floor.json["results"].as_array().unwrap().len(), 0);
    assert_eq!(floor.json["nothing_cleared_the_floor"], true);
    assert!(!floor.json["rejected"].as_array().unwrap().is_empty());

    // search: section hits, several per skill allowed.
    let s = call(&gw, post("/v1/search", &json!({"query": "test", "k": 30}))).await;
    assert_eq!(s.status, StatusCode::OK);
    let hits = s.json["results"].as_array().unwrap();
    let mut per_skill = std::collections::HashMap::new();
    for h in hits {
        *per_skill.entry(h["id"].as_str().unwrap()).or_insert(0) += 1;
        assert!(h["doc_id"].is_string() && h["lines"].is_array());
    }
    assert!(
        per_skill.values().any(|&n| n > 1),
        "some skill has several sections: {per_skill:?}"
    );
    let doc_ids: std::collections::HashSet<&str> =
        hits.iter().map(|h| h["doc_id"].as_str().unwrap()).collect();
    assert_eq!(doc_ids.len(), hits.len(), "each section once");

    // Skills by id, routable or not, with their SKILL.md.
    for id in [QUARANTINED, ALIAS, "demo/devflow:skills/finishing-a-branch"] {
        let r = call(&gw, get(&format!("/v1/skills/{id}"))).await;
        assert_eq!(r.status, StatusCode::OK, "{id}: {}", r.json);
        assert_eq!(r.json["id"], id);
        let md = r.json["markdown"].as_str().unwrap();
        assert!(md.starts_with("---\n") && md.contains("\n---\n"), "{md}");
        assert_eq!(r.json["routable"], id != QUARANTINED && id != ALIAS);
    }
}

/// A task whose two best demo skills both have dependencies (the bundle's order is tested).
const ROUTE_TASK: &str =
    "execute the implementation plan, then finish the feature branch and merge it";

#[tokio::test]
async fn route_bundle_and_formats() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("index");
    build_index(&dir, None);
    let gw = gateway(&dir, None);
    let r = call(&gw, post("/v1/route", &json!({"task": ROUTE_TASK, "k": 2}))).await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.json);
    let plan = r.json["plan"].as_array().unwrap();
    assert!(!plan.is_empty());
    // Dependencies first: every depends_on target in the plan comes before its dependent,
    // except between skills of one reported cycle (the demo has one: planning → writing plans →
    // executing plans → planning).
    let pos = |id: &str| plan.iter().position(|p| p["id"] == id);
    let cycles = r.json["cycles"].as_array().unwrap();
    let same_cycle = |a: &Value, b: &Value| {
        cycles.iter().any(|c| {
            let c = c.as_array().unwrap();
            c.contains(a) && c.contains(b)
        })
    };
    let mut checked = 0;
    for (i, p) in plan.iter().enumerate() {
        for d in p["depends_on"].as_array().unwrap() {
            if let Some(j) = pos(d.as_str().unwrap())
                && !same_cycle(d, &p["id"])
            {
                assert!(j < i, "{d} after its dependent {}", p["id"]);
                checked += 1;
            }
        }
    }
    assert!(
        checked >= 2,
        "the bundle has dependencies to order: {plan:?}"
    );
    // Token accounting adds up.
    let sum: u64 = plan.iter().map(|p| p["tokens"].as_u64().unwrap()).sum();
    assert_eq!(r.json["tokens"]["bundle"].as_u64().unwrap(), sum);
    let catalog = r.json["tokens"]["catalog"].as_u64().unwrap();
    assert!(catalog > sum);
    let reduction = r.json["tokens"]["reduction"].as_f64().unwrap();
    assert!((reduction - (1.0 - sum as f64 / catalog as f64)).abs() < 1e-9);

    let name_ok = |n: &str| {
        n.len() <= 64
            && n.starts_with(|c: char| c.is_ascii_alphabetic())
            && n.chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
    };
    for (format, pick) in [
        ("anthropic", "/tools"),
        ("openai", "/tools"),
        ("gemini", "/tools/0/functionDeclarations"),
        ("mcp", "/tools/tools"),
    ] {
        let r = call(
            &gw,
            post(
                "/v1/route",
                &json!({"task": ROUTE_TASK, "k": 2, "format": format}),
            ),
        )
        .await;
        assert_eq!(r.status, StatusCode::OK);
        let tools = r.json.pointer(pick).unwrap().as_array().unwrap();
        assert_eq!(tools.len(), plan.len(), "{format}: one tool per skill");
        for t in tools {
            let (name, schema) = match format {
                "anthropic" => (&t["name"], &t["input_schema"]),
                "openai" => {
                    assert_eq!(t["type"], "function");
                    (&t["function"]["name"], &t["function"]["parameters"])
                }
                "gemini" => (&t["name"], &t["parameters"]),
                _ => (&t["name"], &t["inputSchema"]),
            };
            assert!(name_ok(name.as_str().unwrap()), "{format}: {name}");
            assert_eq!(schema["required"], json!(["task"]));
        }
    }

    // With content, every plan step carries its SKILL.md.
    let c = call(
        &gw,
        post(
            "/v1/route",
            &json!({"task": "merge the branch", "include_content": true}),
        ),
    )
    .await;
    assert!(
        c.json["plan"]
            .as_array()
            .unwrap()
            .iter()
            .all(|p| p["markdown"].as_str().is_some_and(|m| m.contains("---")))
    );
}

#[tokio::test]
async fn every_client_error_is_json_4xx() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("index");
    build_index(&dir, None);
    let gw = gateway(&dir, Some("s3cret"));
    let long = "word ".repeat(200);
    let cases: Vec<(Request<Body>, StatusCode, &str)> = vec![
        (
            Request::post("/v1/route")
                .header(header::CONTENT_TYPE, "application/json")
                .body(Body::from("{not json"))
                .unwrap(),
            StatusCode::BAD_REQUEST,
            "bad_json",
        ),
        (
            Request::post("/v1/route")
                .body(Body::from(r#"{"task":"x"}"#))
                .unwrap(),
            StatusCode::UNSUPPORTED_MEDIA_TYPE,
            "unsupported_media_type",
        ),
        (
            post("/v1/route", &json!({"tsk": "x"})),
            StatusCode::UNPROCESSABLE_ENTITY,
            "invalid_request",
        ),
        (
            post("/v1/route", &json!({"task": "x", "k": 0})),
            StatusCode::UNPROCESSABLE_ENTITY,
            "invalid_request",
        ),
        (
            post("/v1/route", &json!({"task": "x", "k": 51})),
            StatusCode::UNPROCESSABLE_ENTITY,
            "invalid_request",
        ),
        (
            post("/v1/route", &json!({"task": "x", "format": "xml"})),
            StatusCode::UNPROCESSABLE_ENTITY,
            "invalid_request",
        ),
        (
            post("/v1/skills/find", &json!({"query": "   "})),
            StatusCode::UNPROCESSABLE_ENTITY,
            "invalid_request",
        ),
        (
            post("/v1/search", &json!({"query": long})),
            StatusCode::UNPROCESSABLE_ENTITY,
            "invalid_request",
        ),
        (
            post("/v1/route", &json!({"task": "x".repeat(5000)})),
            StatusCode::PAYLOAD_TOO_LARGE,
            "payload_too_large",
        ),
        (
            get("/v1/skills/no:such/skill"),
            StatusCode::NOT_FOUND,
            "not_found",
        ),
        (get("/v2/anything"), StatusCode::NOT_FOUND, "not_found"),
        (
            get("/v1/route"),
            StatusCode::METHOD_NOT_ALLOWED,
            "method_not_allowed",
        ),
        (
            Request::post("/admin/reload").body(Body::empty()).unwrap(),
            StatusCode::UNAUTHORIZED,
            "unauthorized",
        ),
        (
            Request::post("/admin/reload")
                .header(header::AUTHORIZATION, "Bearer wrong!")
                .body(Body::empty())
                .unwrap(),
            StatusCode::UNAUTHORIZED,
            "unauthorized",
        ),
        (
            Request::post("/mcp")
                .header(header::CONTENT_TYPE, "application/json")
                .header(header::ORIGIN, "https://evil.example")
                .body(Body::from(r#"{"jsonrpc":"2.0","id":1,"method":"ping"}"#))
                .unwrap(),
            StatusCode::FORBIDDEN,
            "origin_not_allowed",
        ),
        (
            Request::post("/mcp")
                .header(header::CONTENT_TYPE, "application/json")
                .header("mcp-protocol-version", "1999-01-01")
                .body(Body::from(r#"{"jsonrpc":"2.0","id":1,"method":"ping"}"#))
                .unwrap(),
            StatusCode::BAD_REQUEST,
            "unsupported_protocol_version",
        ),
        (
            get("/mcp"),
            StatusCode::METHOD_NOT_ALLOWED,
            "method_not_allowed",
        ),
    ];
    for (req, status, code) in cases {
        let what = format!("{} {}", req.method(), req.uri());
        let r = call(&gw, req).await;
        assert_eq!(r.status, status, "{what}: {}", r.json);
        assert!(r.content_type.starts_with("application/json"), "{what}");
        assert_eq!(r.json["code"], code, "{what}: {}", r.json);
        assert!(r.json["message"].as_str().is_some_and(|m| !m.is_empty()));
    }
    // Without a configured token, reload is refused outright.
    let off = gateway(&dir, None);
    let r = call(
        &off,
        Request::post("/admin/reload")
            .header(header::AUTHORIZATION, "Bearer anything")
            .body(Body::empty())
            .unwrap(),
    )
    .await;
    assert_eq!(r.status, StatusCode::FORBIDDEN);
    assert_eq!(r.json["code"], "reload_disabled");
    // Methods outside the standard ones are refused and counted under one label: a client
    // inventing methods must not grow the metric series.
    for name in ["FOO1", "FOO2"] {
        let r = call(
            &gw,
            Request::builder()
                .method(axum::http::Method::from_bytes(name.as_bytes()).unwrap())
                .uri("/v1/route")
                .body(Body::empty())
                .unwrap(),
        )
        .await;
        assert!(r.status.is_client_error(), "{name}: {}", r.status);
    }
    // Every one of those was counted by route and status.
    let m = call(&gw, get("/metrics")).await;
    let text = m.json.as_str().unwrap();
    assert!(!text.contains("FOO"), "{text}");
    assert!(text.contains(r#"method="other""#), "{text}");
    assert!(
        text.contains(r#"skg_http_requests_total{route="/v1/route",method="POST",status="422",tenant="open"} 4"#),
        "{text}"
    );
}

#[tokio::test]
async fn reload_only_when_stale_and_refuses_partial_artifacts() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("index");
    let first = build_index(&dir, None);

    // An unfinished folder is refused at start.
    let partial = tmp.path().join("partial");
    build_index(&partial, None);
    std::fs::remove_file(partial.join("_SUCCESS")).unwrap();
    let err = Gateway::open(Config::new(partial.clone()), None).unwrap_err();
    assert!(
        matches!(
            err,
            skg_serve::OpenError::Index(skg_index::Error::Unfinished(_))
        ),
        "{err}"
    );

    let gw = gateway(&dir, Some("s3cret"));
    // Same revision on disk: nothing loaded.
    let r = call(&gw, reload()).await;
    assert_eq!(r.status, StatusCode::OK);
    assert_eq!(
        r.json,
        json!({"outcome": "fresh", "revision": first.content_hash})
    );
    // The same content under another model identity (a rebuild with other model files that
    // gave the same bytes) is loaded: the gateway's check of query against index vectors
    // reads the manifest's model.
    let path = dir.join("manifest.json");
    let mut m: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
    m["model"] = json!("another-model@0123456789abcdef");
    std::fs::write(&path, serde_json::to_string(&m).unwrap()).unwrap();
    let r = call(&gw, reload()).await;
    assert_eq!(
        r.json,
        json!({"outcome": "reloaded", "from": first.content_hash, "to": first.content_hash})
    );
    assert_eq!(
        gw.current().index.manifest.model.as_deref(),
        Some("another-model@0123456789abcdef")
    );

    // A request in flight holds the old index across a swap.
    let held = gw.current();
    let second = build_index(&dir, Some("demo/devflow:skills/finishing-a-branch"));
    assert_ne!(second.content_hash, first.content_hash);
    let r = call(&gw, reload()).await;
    assert_eq!(
        r.json,
        json!({"outcome": "reloaded", "from": first.content_hash, "to": second.content_hash})
    );
    assert_eq!(held.index.manifest.content_hash, first.content_hash);
    assert!(
        held.index
            .skill("demo/devflow:skills/finishing-a-branch")
            .is_some()
    );
    assert!(
        held.index.markdown(0).is_ok(),
        "the old folder's files stay readable"
    );
    assert_eq!(
        gw.current().index.manifest.content_hash,
        second.content_hash
    );
    let gone = call(
        &gw,
        get("/v1/skills/demo/devflow:skills/finishing-a-branch"),
    )
    .await;
    assert_eq!(gone.status, StatusCode::NOT_FOUND);

    // A half-written folder (no _SUCCESS) is refused; the last good index keeps serving and
    // /health says why.
    build_index(&dir, None);
    std::fs::remove_file(dir.join("_SUCCESS")).unwrap();
    let r = call(&gw, reload()).await;
    assert_eq!(r.status, StatusCode::SERVICE_UNAVAILABLE);
    assert_eq!(r.json["code"], "reload_failed");
    assert_eq!(
        gw.current().index.manifest.content_hash,
        second.content_hash
    );
    let h = call(&gw, get("/health")).await;
    assert!(
        h.json["degraded"]
            .as_array()
            .unwrap()
            .iter()
            .any(|d| d.as_str().unwrap().contains("last reload failed")),
        "{}",
        h.json
    );
    let f = call(&gw, post("/v1/skills/find", &json!({"query": "review"}))).await;
    assert_eq!(f.status, StatusCode::OK);
    assert_eq!(f.json["index_revision"], second.content_hash.as_str());

    // Reload outcomes are counted.
    let m = call(&gw, get("/metrics")).await;
    let text = m.json.as_str().unwrap();
    for (outcome, n) in [("fresh", 1), ("reloaded", 2), ("failed", 1)] {
        assert!(
            text.contains(&format!(
                r#"skg_index_reloads_total{{outcome="{outcome}"}} {n}"#
            )),
            "{outcome}: {text}"
        );
    }
}

async fn mcp(gw: &Arc<Gateway>, msg: &Value) -> Reply {
    call(
        gw,
        Request::post("/mcp")
            .header(header::CONTENT_TYPE, "application/json")
            .header(header::ACCEPT, "application/json, text/event-stream")
            .body(Body::from(msg.to_string()))
            .unwrap(),
    )
    .await
}

#[tokio::test]
async fn mcp_over_http_handshake_list_and_call() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("index");
    build_index(&dir, None);
    let gw = gateway(&dir, None);
    let init = mcp(
        &gw,
        &json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": "2025-06-18", "capabilities": {},
            "clientInfo": {"name": "test", "version": "1"}}}),
    )
    .await;
    assert_eq!(init.status, StatusCode::OK);
    assert_eq!(init.json["id"], 1);
    assert_eq!(init.json["result"]["protocolVersion"], "2025-06-18");
    assert!(init.json["result"]["capabilities"]["tools"].is_object());
    let note = mcp(
        &gw,
        &json!({"jsonrpc": "2.0", "method": "notifications/initialized"}),
    )
    .await;
    assert_eq!(note.status, StatusCode::ACCEPTED);

    let list = mcp(
        &gw,
        &json!({"jsonrpc": "2.0", "id": 2, "method": "tools/list"}),
    )
    .await;
    let names: Vec<&str> = list.json["result"]["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["find_skills", "get_skill", "route_task"]);

    let routed = mcp(
        &gw,
        &json!({"jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": {
            "name": "route_task", "arguments": {"task": "finish the branch and merge it", "k": 2}}}),
    )
    .await;
    let result = &routed.json["result"];
    assert_eq!(result["isError"], false, "{}", routed.json);
    let plan = result["structuredContent"]["plan"].as_array().unwrap();
    assert!(!plan.is_empty());
    assert!(plan.iter().all(|p| p["markdown"].is_string()));
    let text: Value = serde_json::from_str(result["content"][0]["text"].as_str().unwrap()).unwrap();
    assert_eq!(text, result["structuredContent"]);

    let first = plan[0]["id"].as_str().unwrap();
    let got = mcp(
        &gw,
        &json!({"jsonrpc": "2.0", "id": 4, "method": "tools/call", "params": {
            "name": "get_skill", "arguments": {"id": first}}}),
    )
    .await;
    assert_eq!(got.json["result"]["structuredContent"]["id"], first);

    let found = mcp(
        &gw,
        &json!({"jsonrpc": "2.0", "id": 5, "method": "tools/call", "params": {
            "name": "find_skills", "arguments": {"query": "debug a failing test"}}}),
    )
    .await;
    assert!(
        !found.json["result"]["structuredContent"]["results"]
            .as_array()
            .unwrap()
            .is_empty()
    );

    // A tool failure is a result with isError; protocol mistakes are JSON-RPC errors.
    let missing = mcp(
        &gw,
        &json!({"jsonrpc": "2.0", "id": 6, "method": "tools/call", "params": {
            "name": "get_skill", "arguments": {"id": "no:such"}}}),
    )
    .await;
    assert_eq!(missing.json["result"]["isError"], true);
    for (msg, code) in [
        (
            json!({"jsonrpc": "2.0", "id": 7, "method": "tools/call", "params": {"name": "nope", "arguments": {}}}),
            -32602,
        ),
        (
            json!({"jsonrpc": "2.0", "id": 8, "method": "tools/call", "params": {"name": "find_skills", "arguments": {}}}),
            -32602,
        ),
        (
            json!({"jsonrpc": "2.0", "id": 9, "method": "sampling/createMessage"}),
            -32601,
        ),
        (
            json!({"jsonrpc": "1.0", "id": 10, "method": "ping"}),
            -32600,
        ),
        (
            json!([{"jsonrpc": "2.0", "id": 11, "method": "ping"}]),
            -32600,
        ),
    ] {
        let r = mcp(&gw, &msg).await;
        assert_eq!(r.json["error"]["code"], code, "{msg}: {}", r.json);
    }
    let bad = call(
        &gw,
        Request::post("/mcp")
            .header(header::CONTENT_TYPE, "application/json")
            .body(Body::from("{oops"))
            .unwrap(),
    )
    .await;
    assert_eq!(bad.status, StatusCode::BAD_REQUEST);
    assert_eq!(bad.json["error"]["code"], -32700);
}

#[tokio::test]
async fn mcp_over_stdio() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("index");
    build_index(&dir, None);
    let gw = gateway(&dir, None);
    let input = [
        json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"protocolVersion": "2025-03-26", "capabilities": {}, "clientInfo": {"name": "t", "version": "0"}}}).to_string(),
        json!({"jsonrpc": "2.0", "method": "notifications/initialized"}).to_string(),
        String::new(),
        json!({"jsonrpc": "2.0", "id": "b", "method": "tools/list"}).to_string(),
        "not json".to_owned(),
        json!({"jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": {"name": "find_skills", "arguments": {"query": "merge a branch", "k": 1}}}).to_string(),
    ]
    .join("\n");
    let mut out = Vec::new();
    skg_serve::mcp::run_stdio(gw, input.as_bytes(), &mut out)
        .await
        .unwrap();
    let lines: Vec<Value> = String::from_utf8(out)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(lines.len(), 4, "no answer to the notification: {lines:?}");
    assert_eq!(lines[0]["result"]["protocolVersion"], "2025-03-26");
    assert_eq!(lines[1]["id"], "b");
    assert_eq!(lines[1]["result"]["tools"].as_array().unwrap().len(), 3);
    assert_eq!(lines[2]["error"]["code"], -32700);
    assert_eq!(
        lines[3]["result"]["structuredContent"]["results"]
            .as_array()
            .unwrap()
            .len(),
        1
    );
}

#[tokio::test]
async fn openapi_documents_every_route() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("index");
    build_index(&dir, None);
    let gw = gateway(&dir, None);
    let doc = call(&gw, get("/openapi.json")).await.json;
    assert_eq!(doc["openapi"], "3.1.0");
    let mut paths: Vec<&str> = doc["paths"]
        .as_object()
        .unwrap()
        .keys()
        .map(String::as_str)
        .collect();
    paths.sort_unstable();
    // Each documented path answers something other than the 404 fallback.
    for p in &paths {
        let uri = p.replace("{id}", "demo/devflow:skills/finishing-a-branch");
        let r = call(&gw, get(&uri)).await;
        assert_ne!(
            r.json["message"], "no such route (see /openapi.json)",
            "{p}"
        );
    }
    // Every answer of the API is described by its wire type, not a bare object.
    for p in ["/v1/route", "/v1/skills/find", "/v1/search"] {
        let schema =
            &doc["paths"][p]["post"]["responses"]["200"]["content"]["application/json"]["schema"];
        assert!(
            schema["$ref"]
                .as_str()
                .is_some_and(|r| r.starts_with("#/components/schemas/")),
            "{p}: {schema}"
        );
        for code in ["400", "413", "415", "422", "500", "503"] {
            assert!(
                doc["paths"][p]["post"]["responses"][code].is_object(),
                "{p} {code}"
            );
        }
    }
    for t in [
        "RouteResponse",
        "FindResponse",
        "SearchResponse",
        "SkillResponse",
        "HealthResponse",
        "ApiError",
        "ErrorCode",
    ] {
        assert!(
            doc["components"]["schemas"][t].is_object(),
            "{t} is not in the document"
        );
    }
    insta::assert_json_snapshot!("openapi", doc, {".info.version" => "[version]"});
    assert_eq!(
        paths,
        [
            "/admin/reload",
            "/health",
            "/mcp",
            "/metrics",
            "/openapi.json",
            "/ready",
            "/v1/listing",
            "/v1/route",
            "/v1/search",
            "/v1/skills/find",
            "/v1/skills/{id}",
        ]
    );
}

/// `gw` served on a loopback port: its address, the stop signal and the server's task.
async fn on_loopback(
    gw: Arc<Gateway>,
) -> (
    std::net::SocketAddr,
    tokio::sync::oneshot::Sender<()>,
    tokio::task::JoinHandle<std::io::Result<()>>,
) {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let server = tokio::spawn(skg_serve::serve(gw, listener, async {
        let _ = stopped.await;
    }));
    (addr, stop, server)
}

/// One real socket: the app served by [`skg_serve::serve`] on 127.0.0.1, spoken to with a plain
/// HTTP/1.1 request, then shut down gracefully.
#[tokio::test]
async fn real_socket() {
    use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("index");
    build_index(&dir, None);
    let gw = gateway(&dir, None);
    let (addr, stop, server) = on_loopback(gw).await;
    let body = json!({"task": "debug a failing test", "k": 3}).to_string();
    let mut s = tokio::net::TcpStream::connect(addr).await.unwrap();
    s.write_all(
        format!(
            "POST /v1/route HTTP/1.1\r\nHost: {addr}\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
            body.len()
        )
        .as_bytes(),
    )
    .await
    .unwrap();
    let mut raw = String::new();
    s.read_to_string(&mut raw).await.unwrap();
    assert!(raw.starts_with("HTTP/1.1 200"), "{raw}");
    let json: Value = serde_json::from_str(raw.split("\r\n\r\n").nth(1).unwrap()).unwrap();
    assert!(!json["plan"].as_array().unwrap().is_empty());
    stop.send(()).unwrap();
    server.await.unwrap().unwrap();
}

/// Faults under a running gateway: the served folder deleted, then replaced by a truncated
/// (corrupt) one. The last good index keeps answering — even with its files unlinked — and
/// `/health` says degraded; a good folder put back is picked up by the next reload.
#[tokio::test]
async fn faults_in_the_artifact_folder_keep_the_last_good_index_serving() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("index");
    let good = build_index(&dir, None);
    let gw = gateway(&dir, Some("s3cret"));
    // Deleted under it: requests still answer from the loaded index (its files stay open).
    std::fs::remove_dir_all(&dir).unwrap();
    let f = call(
        &gw,
        post("/v1/skills/find", &json!({"query": "review code"})),
    )
    .await;
    assert_eq!(f.status, StatusCode::OK);
    let s = call(
        &gw,
        get("/v1/skills/demo/devflow:skills/finishing-a-branch"),
    )
    .await;
    assert_eq!(s.status, StatusCode::OK);
    assert!(s.json["markdown"].as_str().unwrap().contains("---"));
    let r = call(&gw, reload()).await;
    assert_eq!(r.status, StatusCode::SERVICE_UNAVAILABLE, "{}", r.json);
    let h = call(&gw, get("/health")).await;
    assert_eq!(h.json["status"], "degraded");
    assert_eq!(h.json["index"]["revision"], good.content_hash.as_str());

    // Truncated: a finished-looking folder whose documents file lost its tail.
    let other = build_index(&dir, Some("demo/devflow:skills/finishing-a-branch"));
    let docs = dir.join("documents.ndjson");
    let bytes = std::fs::read(&docs).unwrap();
    std::fs::write(&docs, &bytes[..bytes.len() / 2]).unwrap();
    let r = call(&gw, reload()).await;
    assert_eq!(r.status, StatusCode::SERVICE_UNAVAILABLE);
    assert!(
        r.json["message"].as_str().unwrap().contains("documents"),
        "{}",
        r.json
    );
    // What failed, without the server's paths.
    let folder = dir.to_str().unwrap();
    assert!(
        !r.json["message"].as_str().unwrap().contains(folder),
        "{}",
        r.json
    );
    assert_eq!(gw.current().index.manifest.content_hash, good.content_hash);

    // A whole folder again: reloaded.
    let fixed = build_index(&dir, Some("demo/devflow:skills/finishing-a-branch"));
    assert_eq!(fixed.content_hash, other.content_hash);
    let r = call(&gw, reload()).await;
    assert_eq!(r.json["outcome"], "reloaded", "{}", r.json);
    let h = call(&gw, get("/health")).await;
    assert_eq!(h.json["index"]["revision"], fixed.content_hash.as_str());
    assert!(
        !h.json["degraded"]
            .as_array()
            .unwrap()
            .iter()
            .any(|d| d.as_str().unwrap().contains("reload failed")),
        "{}",
        h.json
    );
}

/// Slow-loris: a client that trickles its headers is disconnected after the header timeout,
/// while a normal client is served meanwhile.
#[tokio::test]
async fn slow_headers_are_cut_off() {
    use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("index");
    build_index(&dir, None);
    let mut cfg = Config::new(dir.clone());
    cfg.header_read_timeout = std::time::Duration::from_millis(500);
    let gw = Arc::new(Gateway::open(cfg, None).unwrap());
    let (addr, stop, server) = on_loopback(gw).await;
    let mut slow = tokio::net::TcpStream::connect(addr).await.unwrap();
    slow.write_all(b"POST /v1/route HTTP/1.1\r\nHost: x\r\n")
        .await
        .unwrap();
    let started = std::time::Instant::now();
    let mut cut = false;
    while started.elapsed() < std::time::Duration::from_secs(5) {
        if slow.write_all(b"X").await.is_err() {
            cut = true;
            break;
        }
        let mut buf = [0u8; 256];
        match tokio::time::timeout(std::time::Duration::from_millis(100), slow.read(&mut buf)).await
        {
            Ok(Ok(0) | Err(_)) => {
                cut = true;
                break;
            }
            Ok(Ok(_)) => {
                cut = true; // the server answered (408) and will close
                break;
            }
            Err(_) => {} // nothing yet: keep trickling
        }
    }
    assert!(cut, "the slow client was never disconnected");
    assert!(
        started.elapsed() < std::time::Duration::from_secs(3),
        "{:?}",
        started.elapsed()
    );
    // A normal client is served.
    let mut s = tokio::net::TcpStream::connect(addr).await.unwrap();
    s.write_all(b"GET /health HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
        .await
        .unwrap();
    let mut raw = String::new();
    s.read_to_string(&mut raw).await.unwrap();
    assert!(raw.starts_with("HTTP/1.1 200"), "{raw}");
    stop.send(()).unwrap();
    server.await.unwrap().unwrap();
}

/// The probes answer while every request slot is taken: a client that sends half a body holds
/// the only slot (`concurrency` 1), a read then waits for it, and `/ready` and `/health` still
/// answer at once — a replica under load is not taken out by its load balancer.
#[tokio::test]
async fn probes_answer_while_every_request_slot_is_taken() {
    use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("index");
    build_index(&dir, None);
    let mut cfg = Config::new(dir.clone());
    cfg.concurrency = 1;
    cfg.timeout = std::time::Duration::from_secs(30);
    let gw = Arc::new(Gateway::open(cfg, None).unwrap());
    let (addr, stop, server) = on_loopback(gw).await;
    let send = |request: &'static str| async move {
        let mut s = tokio::net::TcpStream::connect(addr).await.unwrap();
        s.write_all(request.as_bytes()).await.unwrap();
        s
    };
    // Half a body: the handler waits for the rest, holding the slot.
    let holder = send(
        "POST /v1/route HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{\"task\":",
    )
    .await;
    tokio::time::sleep(std::time::Duration::from_millis(200)).await;
    let read_within = |mut s: tokio::net::TcpStream, ms: u64| async move {
        let mut raw = String::new();
        tokio::time::timeout(
            std::time::Duration::from_millis(ms),
            s.read_to_string(&mut raw),
        )
        .await
        .ok()
        .map(|_| raw)
    };
    let waiting = send("GET /openapi.json HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n").await;
    assert_eq!(
        read_within(waiting, 500).await,
        None,
        "a read should wait for the slot"
    );
    for probe in [
        "GET /ready HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n",
        "GET /health HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n",
    ] {
        let raw = read_within(send(probe).await, 5_000)
            .await
            .expect("the probe waited for a request slot");
        assert!(raw.starts_with("HTTP/1.1 200"), "{probe}: {raw}");
    }
    stop.send(()).unwrap();
    drop(holder);
    server.await.unwrap().unwrap();
}

#[tokio::test]
async fn an_unsafe_skill_is_never_routed_or_found_even_when_quarantined_skills_are_asked_for() {
    // The skill the route below finds first, marked unsafe by the scan (risk tier `unsafe`).
    let tmp = tempfile::tempdir().unwrap();
    let task = json!({"task": "finish the feature branch and merge it", "k": 5, "include_quarantined": true});
    let dir = tmp.path().join("index");
    build_index(&dir, None);
    let gw = gateway(&dir, None);
    let before = call(&gw, post("/v1/route", &task)).await;
    assert_eq!(before.status, StatusCode::OK, "{}", before.json);
    let top = before.json["plan"]
        .as_array()
        .unwrap()
        .iter()
        .find(|p| p["reason"]["kind"] == "retrieved")
        .map(|p| p["id"].as_str().unwrap().to_owned())
        .unwrap();

    let mut ex = extraction();
    for s in &mut ex.skills {
        if s.id.as_str() == top {
            s.risk_tier = skg_model::RiskTier::Unsafe;
        }
    }
    let scores: Vec<Score> = ex.skills.iter().map(|s| score(s, false)).collect();
    let unsafe_dir = tmp.path().join("unsafe-index");
    skg_index::build(
        skg_index::BuildInput {
            skills: &ex.skills,
            documents: &ex.documents,
            edges: &ex.edges,
            members: None,
            scores: Some(&scores),
            registries: &ex.registries,
            vectors: None,
            min_confidence: 0.5,
        },
        &unsafe_dir,
        json!({}),
    )
    .unwrap();
    let gw = gateway(&unsafe_dir, None);
    let after = call(&gw, post("/v1/route", &task)).await;
    assert_eq!(after.status, StatusCode::OK, "{}", after.json);
    let ids: Vec<&str> = after.json["plan"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["id"].as_str().unwrap())
        .collect();
    assert!(!ids.contains(&top.as_str()), "{top} routed: {ids:?}");
    let found = call(
        &gw,
        post(
            "/v1/skills/find",
            &json!({"query": "finish the feature branch and merge it", "k": 10, "include_quarantined": true}),
        ),
    )
    .await;
    assert_eq!(found.status, StatusCode::OK, "{}", found.json);
    assert!(
        found.json["results"]
            .as_array()
            .unwrap()
            .iter()
            .all(|r| r["id"] != top.as_str()),
        "{}",
        found.json
    );
    // Its text is withheld by id too; a safe skill is still served.
    let path = |id: &str| format!("/v1/skills/{id}");
    let by_id = call(&gw, get(&path(&top))).await;
    assert_eq!(by_id.status, StatusCode::FORBIDDEN, "{}", by_id.json);
    assert_eq!(by_id.json["code"], "unsafe_skill");
    let other = ids.first().copied().unwrap();
    let ok = call(&gw, get(&path(other))).await;
    assert_eq!(ok.status, StatusCode::OK, "{other}: {}", ok.json);
}

#[tokio::test]
async fn listing_fits_the_budget_keeps_dependencies_and_is_stable() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("index");
    build_index(&dir, None);
    let gw = gateway(&dir, None);
    let ask = json!({"task": "finish the feature branch and merge it", "budget_chars": 600,
                     "description_chars": 80});
    let l = call(&gw, post("/v1/listing", &ask)).await;
    assert_eq!(l.status, StatusCode::OK, "{}", l.json);
    let chars = l.json["chars"].as_u64().unwrap();
    let markdown = l.json["markdown"].as_str().unwrap();
    assert!(chars <= 600 && chars > 0, "{}", l.json);
    assert_eq!(markdown.chars().count() as u64, chars);
    let skills = l.json["skills"].as_array().unwrap();
    assert_eq!(skills.len(), markdown.lines().count());
    for s in skills {
        let line = s["line"].as_str().unwrap();
        let name = s["name"].as_str().unwrap();
        assert!(line.starts_with(&format!("- {name}: ")), "{line}");
        assert!(
            line.chars().count() <= name.chars().count() + 4 + 80,
            "{line}"
        );
    }
    assert_eq!(skills[0]["reason"]["kind"], "ranked");
    // The same task gives the same bytes (a host's prompt cache survives).
    let again = call(&gw, post("/v1/listing", &ask)).await;
    assert_eq!(again.json["markdown"], l.json["markdown"]);
    // The markdown block alone, and the same listing through GET.
    let req = Request::post("/v1/listing")
        .header(header::CONTENT_TYPE, "application/json")
        .body(Body::from(
            json!({"task": "finish the feature branch and merge it", "budget_chars": 600,
                   "description_chars": 80, "format": "markdown"})
            .to_string(),
        ))
        .unwrap();
    let md = call(&gw, req).await;
    assert!(
        md.content_type.starts_with("text/markdown"),
        "{}",
        md.content_type
    );
    assert_eq!(md.json.as_str().unwrap(), markdown);
    let g = call(
        &gw,
        get("/v1/listing?task=finish%20the%20feature%20branch%20and%20merge%20it&budget_chars=600&description_chars=80"),
    )
    .await;
    assert_eq!(g.json["markdown"], l.json["markdown"]);
    // Without a task: the catalog by name (dependencies kept right after the skill that needs
    // them); an impossible budget or cut is refused.
    let c = call(&gw, get("/v1/listing?budget_chars=100000")).await;
    // The catalog's skills by name; each one's dependencies right after it.
    let names: Vec<String> = c.json["skills"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|s| s["reason"]["kind"] == "catalog")
        .map(|s| s["name"].as_str().unwrap().to_lowercase())
        .collect();
    let mut sorted = names.clone();
    sorted.sort();
    assert_eq!(names, sorted);
    assert_eq!(c.json["left_out"], 0);
    for bad in [
        json!({"budget_chars": 0}),
        json!({"description_chars": 0}),
        json!({"budget": 5}),
    ] {
        let r = call(&gw, post("/v1/listing", &bad)).await;
        assert_eq!(
            r.status,
            StatusCode::UNPROCESSABLE_ENTITY,
            "{bad}: {}",
            r.json
        );
    }
}

/// Records which of its methods the gateway calls; `embed_alone` waits (at most 20 s) until
/// `embed` has been called once, so two requests that meet show which one the gateway took as
/// alone.
#[derive(Debug, Default)]
struct Recorder {
    alone: std::sync::atomic::AtomicUsize,
    shared: std::sync::atomic::AtomicUsize,
    wait_for_shared: bool,
}

impl skg_serve::Embed for Recorder {
    fn model(&self) -> &'static str {
        "recorder"
    }

    fn embed(&self, _: &str) -> Result<Vec<f32>, String> {
        self.shared
            .fetch_add(1, std::sync::atomic::Ordering::SeqCst);
        Ok(vec![0.6, 0.8, 0.0])
    }

    fn embed_alone(&self, _: &str) -> Result<Vec<f32>, String> {
        self.alone.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
        let start = std::time::Instant::now();
        while self.wait_for_shared
            && self.shared.load(std::sync::atomic::Ordering::SeqCst) == 0
            && start.elapsed() < std::time::Duration::from_secs(20)
        {
            std::thread::sleep(std::time::Duration::from_millis(5));
        }
        Ok(vec![0.6, 0.8, 0.0])
    }
}

/// The query cache is kept per caller: a second request of one key is answered from it, the
/// same task from another key is embedded again (a hit is faster, and must not tell one tenant
/// what another asked).
#[tokio::test]
async fn the_query_cache_is_not_shared_between_keys() {
    let dir = tempfile::tempdir().unwrap();
    common::build_index_with(dir.path(), None, Some(("recorder", &[0.0, 0.0, 1.0])));
    let mut file = skg_serve::access::KeysFile::default();
    let (a, _) = file.add("a", skg_serve::access::Policy::default()).unwrap();
    let (b, _) = file.add("b", skg_serve::access::Policy::default()).unwrap();
    let keys = dir.path().join("keys.toml");
    std::fs::write(&keys, file.to_toml()).unwrap();
    let mut cfg = Config::new(dir.path().to_path_buf());
    cfg.keys_file = Some(keys);
    assert!(cfg.query_cache > 0);
    let recorder = Arc::new(Recorder::default());
    let gw = Arc::new(
        Gateway::open(
            cfg,
            Some(Arc::clone(&recorder) as Arc<dyn skg_serve::Embed>),
        )
        .unwrap(),
    );
    let embedded = || {
        recorder.alone.load(std::sync::atomic::Ordering::SeqCst)
            + recorder.shared.load(std::sync::atomic::Ordering::SeqCst)
    };
    for (key, total) in [(&a, 1), (&a, 1), (&b, 2), (&b, 2)] {
        let mut req = post("/v1/route", &json!({"task": "review my branch", "k": 2}));
        req.headers_mut().insert(
            header::AUTHORIZATION,
            format!("Bearer {key}").parse().unwrap(),
        );
        let r = call(&gw, req).await;
        assert_eq!(r.status, StatusCode::OK, "{}", r.json);
        assert_eq!(r.json["mode"], "hybrid", "{}", r.json);
        assert_eq!(embedded(), total);
    }
}

/// A request the gateway computes while no other is computing may embed on every core
/// (`Embed::embed_alone`); one that meets another computing request embeds with `embed`.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_query_embeds_alone_only_while_nothing_else_computes() {
    let dir = tempfile::tempdir().unwrap();
    common::build_index_with(dir.path(), None, Some(("recorder", &[0.0, 0.0, 1.0])));
    let open = |recorder: Arc<Recorder>| {
        let mut cfg = Config::new(dir.path().to_path_buf());
        // Three slots: "nothing else computes" (2 free) differs from "a slot is free" (≥ 1).
        cfg.compute_slots = 3;
        cfg.query_cache = 0;
        Arc::new(Gateway::open(cfg, Some(recorder)).unwrap())
    };
    let route = |task: &str| post("/v1/route", &json!({"task": task, "k": 2}));
    let count = |a: &std::sync::atomic::AtomicUsize| a.load(std::sync::atomic::Ordering::SeqCst);

    // One request at a time: each embeds alone (then searches with its vector: hybrid).
    let recorder = Arc::new(Recorder::default());
    let gw = open(Arc::clone(&recorder));
    let mut alone_plans = Vec::new();
    for task in ["review my branch", "finish the branch"] {
        let r = call(&gw, route(task)).await;
        assert_eq!(r.status, StatusCode::OK);
        assert_eq!(r.json["mode"], "hybrid", "{}", r.json);
        alone_plans.push(r.json["plan"].clone());
    }
    assert_eq!((count(&recorder.alone), count(&recorder.shared)), (2, 0));

    // The first request embeds alone and waits there until the second, computing beside it,
    // has embedded with `embed`.
    let recorder = Arc::new(Recorder {
        wait_for_shared: true,
        ..Recorder::default()
    });
    let gw = open(Arc::clone(&recorder));
    let first = tokio::spawn({
        let gw = Arc::clone(&gw);
        async move { call(&gw, route("review my branch")).await.status }
    });
    while count(&recorder.alone) == 0 {
        tokio::time::sleep(std::time::Duration::from_millis(5)).await;
    }
    let shared = call(&gw, route("finish the branch")).await;
    assert_eq!(shared.status, StatusCode::OK);
    // Embedded beside BM25 on a shared session: the same answer as embedded first, alone.
    assert_eq!(shared.json["mode"], "hybrid", "{}", shared.json);
    assert_eq!(shared.json["plan"], alone_plans[1]);
    assert_eq!(first.await.unwrap(), StatusCode::OK);
    assert_eq!((count(&recorder.alone), count(&recorder.shared)), (1, 1));
}

/// Counts the calls that asked for token states and the ones that did not.
#[derive(Debug, Default)]
struct Tokened {
    with_tokens: std::sync::atomic::AtomicUsize,
    plain: std::sync::atomic::AtomicUsize,
}

impl Tokened {
    const VECTOR: [f32; 3] = [0.0, 0.0, 1.0];

    fn embedding(&self) -> skg_index::QueryEmbedding {
        self.with_tokens
            .fetch_add(1, std::sync::atomic::Ordering::SeqCst);
        skg_index::QueryEmbedding {
            vector: Self::VECTOR.to_vec(),
            // One token along x: every card's one token.
            tokens: vec![1.0, 0.0, 0.0],
        }
    }
}

impl skg_serve::Embed for Tokened {
    fn model(&self) -> &'static str {
        "tokened"
    }

    fn embed(&self, _: &str) -> Result<Vec<f32>, String> {
        self.plain.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
        Ok(Self::VECTOR.to_vec())
    }

    fn embed_with_tokens(&self, _: &str) -> Result<skg_index::QueryEmbedding, String> {
        Ok(self.embedding())
    }

    fn embed_alone_with_tokens(&self, _: &str) -> Result<skg_index::QueryEmbedding, String> {
        Ok(self.embedding())
    }
}

/// The second stage follows the gateway's setting: by default, over an index that stores its
/// cards' tokens, a hybrid answer asks the embedder for the task's token states and its first
/// `depth` candidates carry their MaxSim (the gateway's depth, not the query's default);
/// `Late::OFF` (`skg serve --late-weight 0`) asks for none and answers with the first stage
/// alone.
#[tokio::test]
async fn the_second_stage_runs_as_the_gateway_is_configured() {
    let dir = tempfile::tempdir().unwrap();
    let token = skg_index::TokenCodes {
        scales: vec![1.0 / 127.0],
        codes: vec![127, 0, 0],
    };
    common::build_index_with_tokens(
        dir.path(),
        None,
        Some(("tokened", &Tokened::VECTOR)),
        Some(&token),
    );
    let find = || {
        post(
            "/v1/skills/find",
            &json!({"query": "review the pull request code changes", "k": 3, "explain": true}),
        )
    };
    let count = |a: &std::sync::atomic::AtomicUsize| a.load(std::sync::atomic::Ordering::SeqCst);
    let two = skg_index::Late {
        depth: 2,
        ..skg_index::Late::default()
    };
    for late in [skg_index::Late::default(), two, skg_index::Late::OFF] {
        let embedder = Arc::new(Tokened::default());
        let mut cfg = Config::new(dir.path().to_path_buf());
        cfg.query_cache = 0;
        cfg.late = late;
        let gw = Arc::new(Gateway::open(cfg, Some(Arc::clone(&embedder) as _)).unwrap());
        let r = call(&gw, find()).await;
        assert_eq!(r.status, StatusCode::OK, "{}", r.json);
        let e = &r.json["explain"];
        assert_eq!(e["mode"], "hybrid", "{}", r.json);
        // The three kept candidates: the stage scored the first `depth` of them.
        let kept: Vec<bool> = e["candidates"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|c| c["decision"] == "kept")
            .map(|c| c.get("late").is_some())
            .collect();
        assert_eq!(kept.len(), 3, "{}", r.json);
        let with_late = kept.iter().filter(|l| **l).count();
        if late.runs() {
            assert_eq!(with_late, late.depth.min(3), "{}", r.json);
            assert!(kept[0], "{}", r.json);
            assert_eq!(
                (count(&embedder.with_tokens), count(&embedder.plain)),
                (1, 0)
            );
        } else {
            assert_eq!(with_late, 0, "{}", r.json);
            assert_eq!(
                (count(&embedder.with_tokens), count(&embedder.plain)),
                (0, 1)
            );
        }
    }
}

/// An embedder of a named model: the vector every text gets, and how many it embedded.
#[derive(Debug)]
struct Named {
    model: String,
    embedded: std::sync::atomic::AtomicUsize,
}

impl skg_serve::Embed for Named {
    fn model(&self) -> &str {
        &self.model
    }

    fn embed(&self, _: &str) -> Result<Vec<f32>, String> {
        self.embedded
            .fetch_add(1, std::sync::atomic::Ordering::SeqCst);
        Ok(vec![0.6, 0.8, 0.0])
    }
}

/// Embedders of the models "a" and "b" (made on first ask, kept), none of any other.
#[derive(Debug, Default)]
struct TwoModels {
    asked: std::sync::Mutex<Vec<String>>,
    made: std::sync::Mutex<Vec<Arc<Named>>>,
}

impl skg_serve::Embedders for TwoModels {
    fn for_model(&self, model: &str) -> Result<Arc<dyn skg_serve::Embed>, String> {
        self.asked.lock().unwrap().push(model.to_owned());
        if !["a", "b"].contains(&model) {
            return Err(format!("no graph for {model}: BM25 only"));
        }
        let mut made = self.made.lock().unwrap();
        if let Some(e) = made.iter().find(|e| e.model == model) {
            return Ok(Arc::clone(e) as Arc<dyn skg_serve::Embed>);
        }
        let e = Arc::new(Named {
            model: model.to_owned(),
            embedded: std::sync::atomic::AtomicUsize::new(0),
        });
        made.push(Arc::clone(&e));
        Ok(e)
    }
}

/// Each index loaded is queried with the embedder of the model that made its vectors: a reload
/// onto an index of another model asks for that model's, reuses none of the previous model's
/// cached query vectors, and an index whose model cannot be had is served BM25 only, saying why.
#[tokio::test]
async fn each_index_is_queried_with_its_own_model() {
    let dir = tempfile::tempdir().unwrap();
    common::build_index_with(dir.path(), None, Some(("a", &[0.0, 0.0, 1.0])));
    let models = Arc::new(TwoModels::default());
    let gw = Arc::new(
        Gateway::open_with(
            Config::new(dir.path().to_path_buf()),
            Arc::clone(&models) as Arc<dyn skg_serve::Embedders>,
        )
        .unwrap(),
    );
    let embedded = |model: &str| {
        models
            .made
            .lock()
            .unwrap()
            .iter()
            .find(|e| e.model == model)
            .map_or(0, |e| e.embedded.load(std::sync::atomic::Ordering::SeqCst))
    };
    let route = || post("/v1/route", &json!({"task": "review my branch", "k": 2}));
    let r = call(&gw, route()).await;
    assert_eq!(r.json["mode"], "hybrid", "{}", r.json);
    assert_eq!(embedded("a"), 1);

    common::build_index_with(dir.path(), None, Some(("b", &[0.0, 0.0, 1.0])));
    assert!(matches!(
        gw.reload_blocking(),
        skg_serve::ReloadOutcome::Reloaded { .. }
    ));
    let r = call(&gw, route()).await;
    assert_eq!(r.json["mode"], "hybrid", "{}", r.json);
    assert_eq!(r.json["degraded"], json!([]), "{}", r.json);
    // The same task again, embedded by "b": a's cached vector is not b's.
    assert_eq!((embedded("a"), embedded("b")), (1, 1));

    common::build_index_with(dir.path(), None, Some(("c", &[0.0, 0.0, 1.0])));
    gw.reload_blocking();
    let r = call(&gw, route()).await;
    assert_eq!(r.status, StatusCode::OK);
    assert_eq!(r.json["mode"], "bm25", "{}", r.json);
    assert_eq!(
        r.json["degraded"],
        json!(["no graph for c: BM25 only"]),
        "{}",
        r.json
    );

    // Back to "a": its embedder is the one made first, and its cached vector still serves.
    common::build_index_with(dir.path(), None, Some(("a", &[0.0, 0.0, 1.0])));
    gw.reload_blocking();
    let r = call(&gw, route()).await;
    assert_eq!(r.json["mode"], "hybrid", "{}", r.json);
    assert_eq!(embedded("a"), 1);
    assert_eq!(*models.asked.lock().unwrap(), ["a", "b", "c", "a"]);
}
