//! Tenants: with a keys file, every read endpoint (HTTP and MCP, get-by-id included) answers only
//! with the skills the key may see; missing, unknown and revoked keys get 401 (a revocation
//! within one watch interval), an empty bucket 429 with `Retry-After`; a key's defaults apply.
#![allow(
    clippy::disallowed_methods,
    reason = "tests set up and inspect files on disk"
)]
#![allow(
    clippy::unwrap_used,
    clippy::too_many_lines,
    reason = "a panic is the test failure"
)]

use std::{
    collections::BTreeSet,
    path::{Path, PathBuf},
    sync::{Arc, OnceLock},
    time::{Duration, Instant},
};

use axum::{
    body::Body,
    http::{Request, StatusCode, header},
};
use proptest::prelude::*;
use serde_json::{Value, json};
use skg_serve::{
    Config, Gateway,
    access::{KeysFile, Policy},
};

mod common;

use common::{ALIAS, QUARANTINED, build_index, call, get, post};

/// The demo index, built once for the whole file.
fn index_dir() -> &'static Path {
    static DIR: OnceLock<(tempfile::TempDir, PathBuf)> = OnceLock::new();
    let (_, dir) = DIR.get_or_init(|| {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path().join("index");
        build_index(&dir, None);
        (tmp, dir)
    });
    dir
}

/// Every skill of the index: (id, quarantined).
fn skills() -> Vec<(String, bool)> {
    let ix = skg_index::Index::open(index_dir()).unwrap();
    ix.skills
        .iter()
        .map(|s| (s.id.to_string(), s.quarantined))
        .collect()
}

/// A keys file with one key of `policy` in `dir`; the key and the file's path.
fn keys_file(dir: &Path, policy: Policy) -> (String, PathBuf) {
    let mut f = KeysFile::default();
    let (key, _) = f.add("t1", policy).unwrap();
    let path = dir.join("keys.toml");
    std::fs::write(&path, f.to_toml()).unwrap();
    (key, path)
}

/// The token [`keyed_gateway`]'s scraper sends for `/metrics`.
const METRICS_TOKEN: &str = "the-scraper-secret";

fn keyed_gateway(keys: &Path, poll: Duration) -> Arc<Gateway> {
    let mut cfg = Config::new(index_dir().to_path_buf());
    cfg.keys_file = Some(keys.to_path_buf());
    cfg.keys_poll = poll;
    cfg.metrics_token = Some(METRICS_TOKEN.to_owned());
    Arc::new(Gateway::open(cfg, None).unwrap())
}

/// `/metrics` as [`keyed_gateway`]'s scraper reads it.
async fn scrape(gw: &Arc<Gateway>) -> Value {
    let m = call(gw, with_key(get("/metrics"), METRICS_TOKEN)).await;
    assert_eq!(m.status, StatusCode::OK, "{}", m.json);
    m.json
}

fn with_key(mut req: Request<Body>, key: &str) -> Request<Body> {
    req.headers_mut().insert(
        header::AUTHORIZATION,
        format!("Bearer {key}").parse().unwrap(),
    );
    req
}

/// Every skill id a response names: a string that is an index id, or a `skg://skills/<id>` uri
/// (the longest index id it starts with). MCP tool results are walked as JSON too.
fn named_ids(v: &Value, ids: &BTreeSet<String>, out: &mut BTreeSet<String>) {
    match v {
        Value::String(s) => {
            if ids.contains(s) {
                out.insert(s.clone());
            }
            if let Some(rest) = s.strip_prefix("skg://skills/")
                && let Some(id) = ids
                    .iter()
                    .filter(|id| {
                        rest == id.as_str()
                            || rest
                                .strip_prefix(id.as_str())
                                .is_some_and(|r| r.starts_with('/'))
                    })
                    .max_by_key(|id| id.len())
            {
                out.insert(id.clone());
            }
            // The MCP text content is the answer as JSON text.
            if s.starts_with('{')
                && let Ok(inner) = serde_json::from_str::<Value>(s)
            {
                named_ids(&inner, ids, out);
            }
        }
        Value::Array(a) => a.iter().for_each(|x| named_ids(x, ids, out)),
        Value::Object(o) => o.values().for_each(|x| named_ids(x, ids, out)),
        _ => {}
    }
}

/// A pattern and the ids it matches, by its definition: `*` alone matches everything, a
/// trailing `*` a prefix, anything else exactly.
fn matches(pattern: &str, id: &str) -> bool {
    match pattern.strip_suffix('*') {
        Some(prefix) => id.starts_with(prefix),
        None => pattern == id,
    }
}

/// The patterns a case draws from: everything, each registry, each registry's first folder,
/// and every id exactly.
fn pattern_pool(all: &[(String, bool)]) -> Vec<String> {
    let mut pool: BTreeSet<String> = BTreeSet::from(["*".to_owned()]);
    for (id, _) in all {
        assert!(
            !id.contains(['*', '?', '[', '{', '\\']),
            "an id with glob syntax breaks the test's oracle: {id}"
        );
        let (registry, path) = id.split_once(':').unwrap();
        pool.insert(format!("{registry}:*"));
        if let Some((first, _)) = path.split_once('/') {
            pool.insert(format!("{registry}:{first}/*"));
        }
        pool.insert(id.clone());
    }
    pool.into_iter().collect()
}

const TASKS: [&str; 5] = [
    "review the pull request code changes",
    "merge a finished branch and clean up",
    "plot a chart of the data",
    "write tests before the code",
    "clean and analyse a csv dataset",
];

/// Calls every read endpoint as `key` and returns the ids the answers name, with the statuses.
async fn everything_seen(
    gw: &Arc<Gateway>,
    key: &str,
    all: &[(String, bool)],
    quarantined: bool,
) -> (
    BTreeSet<String>,
    Vec<(String, StatusCode)>,
    BTreeSet<String>,
) {
    let ids: BTreeSet<String> = all.iter().map(|(i, _)| i.clone()).collect();
    let mut seen = BTreeSet::new();
    let mut statuses = Vec::new();
    let mut note = |what: String, r: &common::Reply, seen: &mut BTreeSet<String>| {
        named_ids(&r.json, &ids, seen);
        statuses.push((what, r.status));
    };
    for task in TASKS {
        for (uri, body) in [
            (
                "/v1/skills/find",
                json!({"query": task, "k": 10, "include_quarantined": quarantined}),
            ),
            (
                "/v1/search",
                json!({"query": task, "k": 10, "include_quarantined": quarantined}),
            ),
            (
                "/v1/route",
                json!({"task": task, "k": 10, "include_content": true, "token_budget": 1_000_000,
                       "format": "openai", "include_quarantined": quarantined}),
            ),
        ] {
            let r = call(gw, with_key(post(uri, &body), key)).await;
            note(format!("{uri} {task}"), &r, &mut seen);
        }
        for (tool, args) in [
            ("find_skills", json!({"query": task, "k": 10})),
            (
                "route_task",
                json!({"task": task, "k": 10, "token_budget": 1_000_000}),
            ),
        ] {
            let msg = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
                             "params": {"name": tool, "arguments": args}});
            let r = call(gw, with_key(post("/mcp", &msg), key)).await;
            note(format!("mcp {tool} {task}"), &r, &mut seen);
        }
    }
    // Listings: for each task, and the catalog without one (the whole catalog fits).
    for task in TASKS {
        let body =
            json!({"task": task, "budget_chars": 100_000, "include_quarantined": quarantined});
        let r = call(gw, with_key(post("/v1/listing", &body), key)).await;
        note(format!("listing {task}"), &r, &mut seen);
    }
    let r = call(
        gw,
        with_key(
            get(&format!(
                "/v1/listing?budget_chars=100000&include_quarantined={quarantined}"
            )),
            key,
        ),
    )
    .await;
    let catalog: BTreeSet<String> = r.json["skills"]
        .as_array()
        .map(|a| {
            a.iter()
                .filter_map(|x| x["id"].as_str().map(str::to_owned))
                .collect()
        })
        .unwrap_or_default();
    note("catalog listing".to_owned(), &r, &mut seen);
    for (id, _) in all {
        let r = call(gw, with_key(get(&format!("/v1/skills/{id}")), key)).await;
        note(format!("GET {id}"), &r, &mut seen);
        let msg = json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call",
                         "params": {"name": "get_skill", "arguments": {"id": id}}});
        let r = call(gw, with_key(post("/mcp", &msg), key)).await;
        note(format!("mcp get_skill {id}"), &r, &mut seen);
    }
    (seen, statuses, catalog)
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 24, ..ProptestConfig::default() })]

    /// For random allow and deny lists (and quarantine policy), no endpoint names a skill the key
    /// may not see, and every skill it may see is readable by id.
    #[test]
    fn a_key_sees_only_its_skills_on_every_endpoint(
        allow_picks in proptest::collection::vec(any::<proptest::sample::Index>(), 1..4),
        deny_picks in proptest::collection::vec(any::<proptest::sample::Index>(), 0..3),
        quarantined in any::<bool>(),
    ) {
        let all = skills();
        let pool = pattern_pool(&all);
        let allow: Vec<String> = allow_picks.iter().map(|i| i.get(&pool).clone()).collect();
        let deny: Vec<String> = deny_picks.iter().map(|i| i.get(&pool).clone()).collect();
        let visible: BTreeSet<String> = all
            .iter()
            .filter(|(id, q)| {
                (quarantined || !q)
                    && allow.iter().any(|p| matches(p, id))
                    && !deny.iter().any(|p| matches(p, id))
            })
            .map(|(id, _)| id.clone())
            .collect();
        let tmp = tempfile::tempdir().unwrap();
        let (key, path) = keys_file(
            tmp.path(),
            Policy { allow: allow.clone(), deny: deny.clone(), quarantined, ..Policy::default() },
        );
        let gw = keyed_gateway(&path, Duration::from_mins(1));
        let rt = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
        let (seen, statuses, catalog) = rt.block_on(everything_seen(&gw, &key, &all, quarantined));
        // Without a task the whole catalog fits the budget: exactly the visible skills but the
        // alias (aliases are not listed) whose dependency closure is visible too (a skill listed
        // without its dependencies would fail when used), and those dependencies.
        let ix = skg_index::Index::open(index_dir()).unwrap();
        let closure_visible = |id: &str| {
            let mut stack = vec![id.to_owned()];
            let mut seen = BTreeSet::new();
            while let Some(x) = stack.pop() {
                if !seen.insert(x.clone()) {
                    continue;
                }
                if !visible.contains(&x) {
                    return false;
                }
                let (_, e) = ix.skill(&x).unwrap();
                stack.extend(e.depends_on.iter().map(ToString::to_string));
            }
            true
        };
        let expected: BTreeSet<String> = visible
            .iter()
            .filter(|id| id.as_str() != ALIAS && closure_visible(id))
            .cloned()
            .collect();
        prop_assert_eq!(&catalog, &expected);
        let leaked: Vec<&String> = seen.difference(&visible).collect();
        prop_assert!(leaked.is_empty(), "allow {allow:?} deny {deny:?} quarantined {quarantined}: leaked {leaked:?}");
        for (what, status) in &statuses {
            if let Some(id) = what.strip_prefix("GET ") {
                let expected = if visible.contains(id) { StatusCode::OK } else { StatusCode::NOT_FOUND };
                prop_assert_eq!(*status, expected, "{}", what);
            } else {
                prop_assert_eq!(*status, StatusCode::OK, "{}", what);
            }
        }
    }
}

#[tokio::test]
async fn keys_are_required_and_checked() {
    let tmp = tempfile::tempdir().unwrap();
    let (key, path) = keys_file(tmp.path(), Policy::default());
    let gw = keyed_gateway(&path, Duration::from_mins(1));
    let find = || post("/v1/skills/find", &json!({"query": "merge a branch"}));

    // No key, a malformed key, a wrong secret: 401 with a challenge, on HTTP and MCP alike.
    let wrong = format!("{}{}", &key[..key.len() - 4], "0000");
    for req in [
        find(),
        with_key(find(), "nonsense"),
        with_key(find(), &wrong),
        post(
            "/mcp",
            &json!({"jsonrpc": "2.0", "id": 1, "method": "tools/list"}),
        ),
        get(&format!("/v1/skills/{QUARANTINED}")),
    ] {
        let what = format!("{} {}", req.method(), req.uri());
        let resp = tower::ServiceExt::oneshot(skg_serve::router(Arc::clone(&gw)), req)
            .await
            .unwrap();
        assert_eq!(resp.status(), StatusCode::UNAUTHORIZED, "{what}");
        assert!(
            resp.headers().contains_key(header::WWW_AUTHENTICATE),
            "{what}"
        );
    }
    // The key, as a bearer token or as X-Api-Key.
    assert_eq!(
        call(&gw, with_key(find(), &key)).await.status,
        StatusCode::OK
    );
    let mut by_header = find();
    by_header
        .headers_mut()
        .insert("x-api-key", key.parse().unwrap());
    assert_eq!(call(&gw, by_header).await.status, StatusCode::OK);
    // What load balancers call stays open; the scraper sends its token.
    for uri in ["/health", "/ready", "/openapi.json"] {
        assert_eq!(call(&gw, get(uri)).await.status, StatusCode::OK, "{uri}");
    }
    let metrics = scrape(&gw).await;
    let text = metrics.as_str().unwrap();
    assert!(
        text.contains(r#"skg_auth_refusals_total{reason="missing"} 3"#),
        "{text}"
    );
    assert!(
        text.contains(r#"skg_auth_refusals_total{reason="unknown"} 2"#),
        "{text}"
    );
    assert!(
        text.contains(
            r#"skg_http_requests_total{route="/v1/skills/find",method="POST",status="200",tenant="t1"} 2"#
        ),
        "{text}"
    );
}

#[tokio::test]
async fn the_quarantine_policy_and_the_key_defaults_apply() {
    let tmp = tempfile::tempdir().unwrap();
    let (plain, path) = keys_file(
        tmp.path(),
        Policy {
            k: Some(1),
            ..Policy::default()
        },
    );
    let gw = keyed_gateway(&path, Duration::from_mins(1));
    // A key without the quarantine policy may not ask for quarantined skills, nor read one.
    let asked = call(
        &gw,
        with_key(
            post(
                "/v1/skills/find",
                &json!({"query": "review code", "include_quarantined": true}),
            ),
            &plain,
        ),
    )
    .await;
    assert_eq!(asked.status, StatusCode::FORBIDDEN, "{}", asked.json);
    assert_eq!(asked.json["code"], "forbidden");
    let by_id = call(
        &gw,
        with_key(get(&format!("/v1/skills/{QUARANTINED}")), &plain),
    )
    .await;
    assert_eq!(by_id.status, StatusCode::NOT_FOUND);
    // Its default k is 1; a request's own k wins.
    let task = json!({"query": "review the pull request code changes"});
    let one = call(&gw, with_key(post("/v1/skills/find", &task), &plain)).await;
    assert_eq!(
        one.json["results"].as_array().unwrap().len(),
        1,
        "{}",
        one.json
    );
    let task3 = json!({"query": "review the pull request code changes", "k": 3});
    let three = call(&gw, with_key(post("/v1/skills/find", &task3), &plain)).await;
    assert_eq!(
        three.json["results"].as_array().unwrap().len(),
        3,
        "{}",
        three.json
    );

    // A key with the quarantine policy reads it.
    let tmp2 = tempfile::tempdir().unwrap();
    let (research, path2) = keys_file(
        tmp2.path(),
        Policy {
            quarantined: true,
            ..Policy::default()
        },
    );
    let gw2 = keyed_gateway(&path2, Duration::from_mins(1));
    let by_id = call(
        &gw2,
        with_key(get(&format!("/v1/skills/{QUARANTINED}")), &research),
    )
    .await;
    assert_eq!(by_id.status, StatusCode::OK, "{}", by_id.json);
    assert_eq!(by_id.json["quarantined"], true);
}

#[tokio::test]
async fn an_empty_bucket_answers_429_with_retry_after() {
    let tmp = tempfile::tempdir().unwrap();
    let (key, path) = keys_file(
        tmp.path(),
        Policy {
            rate_per_second: Some(0.2),
            burst: Some(2),
            ..Policy::default()
        },
    );
    let gw = keyed_gateway(&path, Duration::from_mins(1));
    let find = || {
        with_key(
            post("/v1/skills/find", &json!({"query": "merge a branch"})),
            &key,
        )
    };
    assert_eq!(call(&gw, find()).await.status, StatusCode::OK);
    assert_eq!(call(&gw, find()).await.status, StatusCode::OK);
    let resp = tower::ServiceExt::oneshot(skg_serve::router(Arc::clone(&gw)), find())
        .await
        .unwrap();
    assert_eq!(resp.status(), StatusCode::TOO_MANY_REQUESTS);
    // One request every 5 s: the next is between 1 and 5 s away (rounded up to whole seconds).
    let retry: u64 = resp.headers()[header::RETRY_AFTER]
        .to_str()
        .unwrap()
        .parse()
        .unwrap();
    assert!((1..=5).contains(&retry), "Retry-After {retry}");
    let metrics = scrape(&gw).await;
    assert!(
        metrics
            .as_str()
            .unwrap()
            .contains(r#"skg_rate_limited_total{tenant="t1"} 1"#),
        "{metrics}"
    );
}

/// A revoked key is refused by a running gateway within one watch interval; a broken file keeps
/// the keys in force and `/health` says so.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_revoked_key_is_refused_within_one_watch_interval() {
    let tmp = tempfile::tempdir().unwrap();
    let mut file = KeysFile::default();
    let (key, entry) = file.add("t1", Policy::default()).unwrap();
    let (other, _) = file.add("t2", Policy::default()).unwrap();
    let path = tmp.path().join("keys.toml");
    std::fs::write(&path, file.to_toml()).unwrap();
    let poll = Duration::from_millis(200);
    let gw = keyed_gateway(&path, poll);
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let server = tokio::spawn(skg_serve::serve(Arc::clone(&gw), listener, async {
        let _ = stopped.await;
    }));
    let status = |key: String| async move {
        let mut s = tokio::net::TcpStream::connect(addr).await.unwrap();
        let body = r#"{"query":"merge a branch"}"#;
        let req = format!(
            "POST /v1/skills/find HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer {key}\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
            body.len()
        );
        tokio::io::AsyncWriteExt::write_all(&mut s, req.as_bytes())
            .await
            .unwrap();
        let mut out = String::new();
        tokio::io::AsyncReadExt::read_to_string(&mut s, &mut out)
            .await
            .unwrap();
        out.split(' ').nth(1).unwrap().parse::<u16>().unwrap()
    };
    assert_eq!(status(key.clone()).await, 200);

    assert!(file.revoke(&entry.id));
    std::fs::write(&path, file.to_toml()).unwrap();
    let revoked_at = Instant::now();
    let mut refused_after = None;
    while revoked_at.elapsed() < Duration::from_secs(10) {
        if status(key.clone()).await == 401 {
            refused_after = Some(revoked_at.elapsed());
            break;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    let refused_after = refused_after.expect("the revoked key was still accepted after 10 s");
    #[allow(clippy::print_stderr, reason = "the figure the closing note reports")]
    {
        eprintln!("revoked key refused after {refused_after:?} (watch interval {poll:?})");
    }
    // The other key is untouched.
    assert_eq!(status(other.clone()).await, 200);

    // A broken edit keeps the last good keys and degrades /health.
    std::fs::write(&path, "format = 1\n[[key]]\nid = 7\n").unwrap();
    let broken_at = Instant::now();
    let mut degraded = Value::Null;
    while broken_at.elapsed() < Duration::from_secs(10) {
        degraded = serde_json::to_value(gw.health(false)).unwrap()["degraded"].clone();
        if degraded.to_string().contains("keys file") {
            break;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    // What every caller sees names no path or key; the operator's reload names the line.
    assert!(
        !degraded.to_string().contains("keys.toml"),
        "degraded leaks the error: {degraded}"
    );
    let detail = gw.reload_keys_blocking();
    assert!(
        format!("{detail:?}").contains("keys.toml:3:6"),
        "the parse error names the line: {detail:?}"
    );
    assert_eq!(status(other).await, 200);
    assert_eq!(status(key).await, 401);
    let _ = stop.send(());
    server.await.unwrap().unwrap();
}

/// With API keys, an open `/health` says the gateway answers and at which revision, not where
/// the index lies, how many skills it holds or which registries: those are for the admin token.
/// A tenant's key is not the admin's.
#[tokio::test]
async fn an_open_probe_of_a_keyed_gateway_learns_no_catalog() {
    let tmp = tempfile::tempdir().unwrap();
    let (key, path) = keys_file(tmp.path(), Policy::default());
    let mut cfg = Config::new(index_dir().to_path_buf());
    cfg.keys_file = Some(path);
    cfg.admin_token = Some("the-admin-secret".to_owned());
    let gw = Arc::new(Gateway::open(cfg, None).unwrap());
    let catalog_fields = ["dir", "counts", "sources"];
    for (who, req) in [
        ("no token", get("/health")),
        ("a tenant's key", with_key(get("/health"), &key)),
        (
            "a wrong admin token",
            with_key(get("/health"), "not-the-secret"),
        ),
    ] {
        let h = call(&gw, req).await;
        assert_eq!(h.status, StatusCode::OK, "{who}");
        let index = h.json["index"].as_object().unwrap();
        assert!(index["revision"].is_string(), "{who}: {index:?}");
        for f in catalog_fields {
            assert!(!index.contains_key(f), "{who} learned {f}: {index:?}");
        }
    }
    let h = call(&gw, with_key(get("/health"), "the-admin-secret")).await;
    let index = h.json["index"].as_object().unwrap();
    for f in catalog_fields {
        assert!(
            index.contains_key(f),
            "the admin did not get {f}: {index:?}"
        );
    }
    assert_eq!(
        index["counts"]["skills"].as_u64(),
        Some(skills().len() as u64)
    );
}

/// `/metrics` counts every tenant's requests and the whole index, so on a gateway with keys no
/// tenant's key reads it: a set metrics token is required (the admin token serves too), without
/// one the admin token is, and with neither the metrics are closed (403) unless `open_metrics`.
/// Without keys they are open unless a metrics token is set.
#[tokio::test]
async fn a_keyed_gateway_s_metrics_need_a_token() {
    let tmp = tempfile::tempdir().unwrap();
    let (key, path) = keys_file(tmp.path(), Policy::default());
    let gateway = |keys: bool, metrics: Option<&str>, admin: Option<&str>, open: bool| {
        let mut cfg = Config::new(index_dir().to_path_buf());
        cfg.keys_file = keys.then(|| path.clone());
        cfg.metrics_token = metrics.map(str::to_owned);
        cfg.admin_token = admin.map(str::to_owned);
        cfg.open_metrics = open;
        Arc::new(Gateway::open(cfg, None).unwrap())
    };
    let (m, a, empty) = (Some("m-secret"), Some("a-secret"), Some(""));
    let (ok, unauthorized, forbidden) = (
        StatusCode::OK,
        StatusCode::UNAUTHORIZED,
        StatusCode::FORBIDDEN,
    );
    let token_only = |admin_too: bool| {
        let admin = if admin_too { ok } else { unauthorized };
        [
            unauthorized,
            unauthorized,
            ok,
            admin,
            unauthorized,
            unauthorized,
        ]
    };
    // (keys, metrics token, admin token, open_metrics) → status with no bearer, the tenant's
    // key, the metrics token, the admin token, a wrong token, an empty bearer.
    let cases = [
        // Keys: the metrics token or the admin token; neither configured → closed.
        ((true, None, None, false), [forbidden; 6]),
        (
            (true, None, a, false),
            [
                unauthorized,
                unauthorized,
                unauthorized,
                ok,
                unauthorized,
                unauthorized,
            ],
        ),
        ((true, m, a, false), token_only(true)),
        ((true, m, None, false), token_only(false)),
        // An empty token is no token.
        ((true, empty, empty, false), [forbidden; 6]),
        // --open-metrics opens a keyed gateway's metrics, unless a metrics token is set.
        ((true, None, a, true), [ok; 6]),
        ((true, m, a, true), token_only(true)),
        ((true, m, None, true), token_only(false)),
        // No keys: open, unless a metrics token is set.
        ((false, None, None, false), [ok; 6]),
        ((false, None, a, false), [ok; 6]),
        ((false, m, None, false), token_only(false)),
    ];
    for ((keys, metrics, admin, open), expected) in cases {
        let gw = gateway(keys, metrics, admin, open);
        let bearers = [None, Some(key.as_str()), m, a, Some("wrong"), Some("")];
        for (bearer, want) in bearers.into_iter().zip(expected) {
            let req = match bearer {
                None => get("/metrics"),
                Some(b) => with_key(get("/metrics"), b),
            };
            let what = format!(
                "keys {keys}, metrics {metrics:?}, admin {admin:?}, open {open}, bearer {bearer:?}"
            );
            let resp = tower::ServiceExt::oneshot(skg_serve::router(Arc::clone(&gw)), req)
                .await
                .unwrap();
            assert_eq!(resp.status(), want, "{what}");
            // A challenge only where a token would help.
            assert_eq!(
                resp.headers().contains_key(header::WWW_AUTHENTICATE),
                want == unauthorized,
                "{what}"
            );
            if want == ok {
                let body = axum::body::to_bytes(resp.into_body(), usize::MAX)
                    .await
                    .unwrap();
                assert!(
                    String::from_utf8_lossy(&body).contains("skg_index_skills"),
                    "{what}"
                );
            }
        }
    }
}

/// A key learns the size of its own scope, not the catalog's: MCP `initialize` counts the
/// routable skills the key sees, and a route's `tokens.catalog` (what injecting the catalog
/// would cost) sums theirs — by the definition of routable (not an alias, not quarantined, not
/// unsafe) over the skills the key's pattern matches.
#[tokio::test]
async fn a_key_learns_its_scope_s_size_not_the_catalog_s() {
    let ix = skg_index::Index::open(index_dir()).unwrap();
    let first = ix.skills[0].id.to_string();
    let (registry, _) = first.split_once(':').unwrap();
    let pattern = format!("{registry}:*");
    let (n, tokens) = ix
        .skills
        .iter()
        .filter(|s| matches(&pattern, &s.id.to_string()) && s.routable())
        .fold((0u64, 0u64), |(n, t), s| (n + 1, t + u64::from(s.tokens)));
    let all: u64 = ix
        .skills
        .iter()
        .filter(|s| s.routable())
        .map(|s| u64::from(s.tokens))
        .sum();
    assert!(
        n > 0 && tokens < all,
        "the fixture needs a scope smaller than the catalog"
    );

    let tmp = tempfile::tempdir().unwrap();
    let (key, path) = keys_file(
        tmp.path(),
        Policy {
            allow: vec![pattern.clone()],
            ..Policy::default()
        },
    );
    let gw = keyed_gateway(&path, Duration::from_mins(1));
    let init = json!({"jsonrpc": "2.0", "id": 1, "method": "initialize",
                      "params": {"protocolVersion": "2025-06-18", "capabilities": {},
                                 "clientInfo": {"name": "t", "version": "0"}}});
    let r = call(&gw, with_key(post("/mcp", &init), &key)).await;
    let instructions = r.json["result"]["instructions"].as_str().unwrap();
    assert!(
        instructions.contains(&format!("over {n} routable skills")),
        "{instructions}"
    );
    let route = json!({"task": TASKS[0], "k": 3});
    let r = call(&gw, with_key(post("/v1/route", &route), &key)).await;
    assert_eq!(r.status, StatusCode::OK);
    assert_eq!(r.json["tokens"]["catalog"].as_u64(), Some(tokens));

    // Without keys the catalog is the whole index's.
    let open = Arc::new(Gateway::open(Config::new(index_dir().to_path_buf()), None).unwrap());
    let r = call(&open, post("/v1/route", &route)).await;
    assert_eq!(r.json["tokens"]["catalog"].as_u64(), Some(all));
}
