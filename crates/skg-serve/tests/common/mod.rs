//! What the gateway's integration tests share: the demo index (BM25 only, one skill quarantined,
//! one an alias), a gateway over it, and in-process requests.
#![allow(dead_code, reason = "each test file uses the part it needs")]

use std::{
    path::{Path, PathBuf},
    sync::Arc,
};

use axum::{
    body::Body,
    http::{Request, StatusCode, header},
};
use http_body_util::BodyExt as _;
use serde_json::{Value, json};
use skg_model::{Member, Score, Skill};
use skg_serve::{Config, Gateway, router};
use tower::ServiceExt as _;

pub(crate) const QUARANTINED: &str = "demo/devflow:skills/reviewing-code";
pub(crate) const ALIAS: &str = "demo/devflow:skills/requesting-review";

pub(crate) fn demo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../registries")
}

pub(crate) fn extraction() -> skg_extract::Extraction {
    let sources = skg_extract::resolve_inputs(&[demo()]).unwrap();
    skg_extract::extract(
        &sources,
        &skg_extract::Options::default(),
        &skg_extract::NoProgress,
    )
}

pub(crate) fn score(s: &Skill, quarantined: bool) -> Score {
    serde_json::from_value(json!({
        "id": s.id, "registry": s.registry, "path": s.path,
        "slop_score": if quarantined { 0.1 } else { 0.9 }, "quarantined": quarantined,
        "threshold": 0.4, "reasons": [], "contributions": [], "features": [],
    }))
    .unwrap()
}

/// Builds the demo index at `dest`; `drop` leaves one skill out (another revision).
pub(crate) fn build_index(dest: &Path, drop: Option<&str>) -> skg_index::IndexManifest {
    build_index_with(dest, drop, None)
}

/// [`build_index`], with `vector` as every embedded document's vector, made by `model`.
pub(crate) fn build_index_with(
    dest: &Path,
    drop: Option<&str>,
    vector: Option<(&str, &[f32])>,
) -> skg_index::IndexManifest {
    build_index_with_tokens(dest, drop, vector, None)
}

/// [`build_index_with`], and with `card_token` (as int8 codes and their scale) as the one token
/// of every card: the index then has a second stage.
pub(crate) fn build_index_with_tokens(
    dest: &Path,
    drop: Option<&str>,
    vector: Option<(&str, &[f32])>,
    card_token: Option<&skg_index::TokenCodes>,
) -> skg_index::IndexManifest {
    let mut ex = extraction();
    if let Some(d) = drop {
        ex.skills.retain(|s| s.id.as_str() != d);
    }
    assert!(ex.skills.iter().any(|s| s.id.as_str() == QUARANTINED));
    let scores: Vec<Score> = ex
        .skills
        .iter()
        .map(|s| score(s, s.id.as_str() == QUARANTINED))
        .collect();
    let canonical = "demo/devflow:skills/finishing-a-branch";
    let members: Vec<Member> = ex
        .skills
        .iter()
        .filter(|s| s.id.as_str() == ALIAS)
        .map(|s| {
            serde_json::from_value(json!({
                "id": s.id, "registry": s.registry, "path": s.path, "name": s.name,
                "cluster_id": canonical, "role": "duplicate", "variant_of": null,
                "quality": 0.5, "quality_source": "test", "nearest_description": 1.0,
                "reason": "test alias",
            }))
            .unwrap()
        })
        .collect();
    let vectors = vector.map(|(model, v)| skg_index::Vectors {
        // The build keeps the cards' (L0) tokens of those it is given.
        tokens: card_token.map_or_else(Vec::new, |t| {
            skg_index::dense_targets(&ex.documents)
                .into_iter()
                .map(|i| (i, t.clone()))
                .collect()
        }),
        token_directions: 0,
        model: model.to_owned(),
        dim: v.len(),
        rows: skg_index::dense_targets(&ex.documents)
            .into_iter()
            .map(|i| (i, v.to_vec()))
            .collect(),
    });
    skg_index::build(
        skg_index::BuildInput {
            skills: &ex.skills,
            documents: &ex.documents,
            edges: &ex.edges,
            members: Some(&members),
            scores: Some(&scores),
            registries: &ex.registries,
            vectors,
            min_confidence: 0.5,
        },
        dest,
        json!({}),
    )
    .unwrap()
}

pub(crate) fn gateway(dir: &Path, token: Option<&str>) -> Arc<Gateway> {
    let mut cfg = Config::new(dir.to_path_buf());
    cfg.admin_token = token.map(str::to_owned);
    cfg.max_body_bytes = 4096;
    cfg.max_query_chars = 500;
    Arc::new(Gateway::open(cfg, None).unwrap())
}

pub(crate) struct Reply {
    pub(crate) status: StatusCode,
    pub(crate) json: Value,
    pub(crate) content_type: String,
}

pub(crate) async fn call(gw: &Arc<Gateway>, req: Request<Body>) -> Reply {
    let resp = router(Arc::clone(gw)).oneshot(req).await.unwrap();
    let status = resp.status();
    let content_type = resp
        .headers()
        .get(header::CONTENT_TYPE)
        .map(|v| v.to_str().unwrap().to_owned())
        // 202 (an MCP notification) has no body and no content type.
        .unwrap_or_default();
    let bytes = resp.into_body().collect().await.unwrap().to_bytes();
    let json = if content_type.starts_with("application/json") {
        serde_json::from_slice(&bytes).unwrap()
    } else {
        Value::String(String::from_utf8_lossy(&bytes).into_owned())
    };
    Reply {
        status,
        json,
        content_type,
    }
}

pub(crate) fn post(uri: &str, body: &Value) -> Request<Body> {
    Request::post(uri)
        .header(header::CONTENT_TYPE, "application/json")
        .body(Body::from(body.to_string()))
        .unwrap()
}

/// `POST /admin/reload` with the test token.
pub(crate) fn reload() -> Request<Body> {
    Request::post("/admin/reload")
        .header(header::AUTHORIZATION, "Bearer s3cret")
        .body(Body::empty())
        .unwrap()
}

pub(crate) fn get(uri: &str) -> Request<Body> {
    Request::get(uri).body(Body::empty()).unwrap()
}
