//! Gateway request decoding: any method, route, content type and body against the real router
//! (over a two-skill index built once). Invariant: a request never gets a 5xx (those are for our
//! failures, and a handler panic would surface as 500), and every error body is JSON.
#![no_main]
use std::sync::{Arc, OnceLock};

use arbitrary::Arbitrary;
use axum::{body::Body, http::Request};
use tower::ServiceExt as _;

#[derive(Debug, Arbitrary)]
enum Route {
    Route,
    Find,
    Search,
    Skill(String),
    Mcp,
    Reload,
    Health,
    Other(String),
}

#[derive(Debug, Arbitrary)]
struct Input {
    post: bool,
    route: Route,
    json: bool,
    token: Option<String>,
    body: Vec<u8>,
}

struct World {
    rt: tokio::runtime::Runtime,
    app: axum::Router,
    _dir: tempfile::TempDir,
}

fn world() -> &'static World {
    static W: OnceLock<World> = OnceLock::new();
    W.get_or_init(|| {
        let files = vec![
            (
                "alpha/SKILL.md".to_owned(),
                b"---\nname: alpha\ndescription: Use when merging PDF files. Requires beta.\n---\n# Alpha\n\nUse the beta skill first.\n".to_vec(),
            ),
            (
                "beta/SKILL.md".to_owned(),
                b"---\nname: beta\ndescription: Use when cleaning CSV tables.\n---\n# Beta\n\n## Steps\n\nClean it.\n".to_vec(),
            ),
        ];
        let ex = skg_extract::fuzzing::extract_files(&files, &skg_extract::Limits::default());
        let dir = tempfile::tempdir().expect("temp dir");
        let index = dir.path().join("index");
        skg_index::build(
            skg_index::BuildInput {
                skills: &ex.skills,
                documents: &ex.documents,
                edges: &ex.edges,
                members: None,
                scores: None,
                registries: &ex.registries,
                vectors: None,
                min_confidence: 0.5,
            },
            &index,
            serde_json::json!({}),
        )
        .expect("index");
        let mut cfg = skg_serve::Config::new(index);
        cfg.admin_token = Some("fuzz-token".into());
        let gw = Arc::new(skg_serve::Gateway::open(cfg, None).expect("gateway"));
        World {
            rt: tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
                .expect("runtime"),
            app: skg_serve::router(gw),
            _dir: dir,
        }
    })
}

libfuzzer_sys::fuzz_target!(|input: Input| {
    let w = world();
    let path = match &input.route {
        Route::Route => "/v1/route".to_owned(),
        Route::Find => "/v1/skills/find".to_owned(),
        Route::Search => "/v1/search".to_owned(),
        Route::Skill(id) => format!("/v1/skills/{id}"),
        Route::Mcp => "/mcp".to_owned(),
        Route::Reload => "/admin/reload".to_owned(),
        Route::Health => "/health".to_owned(),
        Route::Other(p) => format!("/{p}"),
    };
    let mut req = Request::builder()
        .method(if input.post { "POST" } else { "GET" })
        .uri(path.as_str());
    if input.json {
        req = req.header("content-type", "application/json");
    }
    if let Some(t) = &input.token {
        req = req.header("authorization", format!("Bearer {t}"));
    }
    let Ok(req) = req.body(Body::from(input.body)) else {
        return; // not a valid URI or header: never reaches the server
    };
    if matches!(input.route, Route::Reload) {
        return; // reloading is exercised by the tests; here it would only re-read the folder
    }
    let resp = w.rt.block_on(w.app.clone().oneshot(req)).expect("infallible");
    let status = resp.status();
    assert!(!status.is_server_error(), "{path}: {status}");
    if status.is_client_error() {
        let ct = resp
            .headers()
            .get("content-type")
            .and_then(|v| v.to_str().ok())
            .unwrap_or("");
        assert!(ct.starts_with("application/json"), "{path}: {status} with {ct}");
    }
});
