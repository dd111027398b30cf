//! The HTTP surface: routes, request types, limits, JSON errors, metrics and request logs.

use std::{sync::Arc, time::Instant};

use axum::{
    Json, Router,
    extract::{FromRequest, MatchedPath, Path, Request, State},
    http::{HeaderMap, HeaderValue, StatusCode, header},
    middleware::{self, Next},
    response::{IntoResponse, Response},
    routing::{get, post},
};
use serde::{Deserialize, de::DeserializeOwned};
use skg_index::{Mode, adapt::Format};
use tower::limit::GlobalConcurrencyLimitLayer;
use tower_http::{
    catch_panic::CatchPanicLayer, limit::RequestBodyLimitLayer, timeout::TimeoutLayer,
    trace::TraceLayer,
};

use crate::{
    error::ApiError,
    gateway::{Ask, Gateway},
    mcp, openapi,
};

/// A JSON body whose rejections are [`ApiError`]s.
pub(crate) struct ApiJson<T>(pub T);

impl<S: Send + Sync, T: DeserializeOwned> FromRequest<S> for ApiJson<T> {
    type Rejection = ApiError;

    async fn from_request(req: Request, state: &S) -> Result<Self, Self::Rejection> {
        match Json::<T>::from_request(req, state).await {
            Ok(Json(v)) => Ok(ApiJson(v)),
            Err(r) => Err(ApiError::from(r)),
        }
    }
}

fn default_k() -> usize {
    5
}

/// `POST /v1/route`.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct RouteRequest {
    pub task: String,
    #[serde(default = "default_k")]
    pub k: usize,
    #[serde(default)]
    pub token_budget: Option<u64>,
    #[serde(default)]
    pub format: Format,
    #[serde(default)]
    pub mode: Option<Mode>,
    #[serde(default)]
    pub include_quarantined: bool,
    #[serde(default)]
    pub min_score: Option<f32>,
    /// Include each skill's `SKILL.md` in the plan.
    #[serde(default)]
    pub include_content: bool,
}

/// `POST /v1/skills/find` and `POST /v1/search`.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct FindRequest {
    pub query: String,
    #[serde(default = "default_k")]
    pub k: usize,
    #[serde(default)]
    pub mode: Option<Mode>,
    #[serde(default)]
    pub include_quarantined: bool,
    #[serde(default)]
    pub min_score: Option<f32>,
}

impl FindRequest {
    fn ask(self) -> Ask {
        Ask {
            text: self.query,
            k: self.k,
            mode: self.mode,
            include_quarantined: self.include_quarantined,
            min_score: self.min_score,
        }
    }
}

/// The gateway's axum app (every route, limits and layers; state included).
pub fn router(gw: Arc<Gateway>) -> Router {
    let cfg = gw.config().clone();
    Router::new()
        .route("/v1/route", post(route))
        .route("/v1/skills/find", post(find))
        .route("/v1/search", post(search))
        .route("/v1/skills/{*id}", get(skill))
        .route("/health", get(health))
        .route("/metrics", get(metrics))
        .route("/openapi.json", get(openapi_doc))
        .route("/admin/reload", post(admin_reload))
        .route(
            "/mcp",
            post(mcp::http).get(mcp::http_get).delete(mcp::http_get),
        )
        .fallback(not_found)
        .layer(CatchPanicLayer::custom(
            |_: Box<dyn std::any::Any + Send>| {
                ApiError::internal("the request's handler panicked").into_response()
            },
        ))
        .layer(axum::extract::DefaultBodyLimit::max(cfg.max_body_bytes))
        .layer(RequestBodyLimitLayer::new(cfg.max_body_bytes))
        .layer(GlobalConcurrencyLimitLayer::new(cfg.concurrency.max(1)))
        .layer(TimeoutLayer::with_status_code(
            StatusCode::SERVICE_UNAVAILABLE,
            cfg.timeout,
        ))
        .layer(
            TraceLayer::new_for_http()
                .on_response(
                    tower_http::trace::DefaultOnResponse::new().level(tracing::Level::INFO),
                )
                .on_failure(tower_http::trace::DefaultOnFailure::new().level(tracing::Level::WARN)),
        )
        .layer(middleware::from_fn_with_state(Arc::clone(&gw), observe))
        .with_state(gw)
}

/// Counts and times every request; gives bare error statuses from layers (413, 405, timeouts …)
/// the JSON error body.
async fn observe(
    State(gw): State<Arc<Gateway>>,
    matched: Option<MatchedPath>,
    req: Request,
    next: Next,
) -> Response {
    let route = matched.map_or_else(|| "(unmatched)".to_owned(), |m| m.as_str().to_owned());
    let method = req.method().as_str().to_owned();
    let started = Instant::now();
    let mut resp = next.run(req).await;
    let status = resp.status();
    let is_json = resp
        .headers()
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.starts_with("application/json"));
    if (status.is_client_error() || status.is_server_error()) && !is_json {
        let allow = resp.headers().get(header::ALLOW).cloned();
        resp = ApiError::for_status(status).into_response();
        if let Some(a) = allow {
            resp.headers_mut().insert(header::ALLOW, a);
        }
    }
    gw.metrics.request(
        &route,
        &method,
        status.as_u16(),
        started.elapsed().as_secs_f64(),
    );
    resp
}

async fn not_found() -> ApiError {
    ApiError::not_found("no such route (see /openapi.json)")
}

async fn route(
    State(gw): State<Arc<Gateway>>,
    ApiJson(r): ApiJson<RouteRequest>,
) -> Result<Json<serde_json::Value>, ApiError> {
    let ask = Ask {
        text: r.task,
        k: r.k,
        mode: r.mode,
        include_quarantined: r.include_quarantined,
        min_score: r.min_score,
    };
    let (budget, format, content) = (r.token_budget, r.format, r.include_content);
    gw.compute(move |g| g.route(&ask, budget, format, content))
        .await
        .map(Json)
}

async fn find(
    State(gw): State<Arc<Gateway>>,
    ApiJson(r): ApiJson<FindRequest>,
) -> Result<Json<serde_json::Value>, ApiError> {
    let ask = r.ask();
    gw.compute(move |g| g.find(&ask)).await.map(Json)
}

async fn search(
    State(gw): State<Arc<Gateway>>,
    ApiJson(r): ApiJson<FindRequest>,
) -> Result<Json<serde_json::Value>, ApiError> {
    let ask = r.ask();
    gw.compute(move |g| g.search(&ask)).await.map(Json)
}

async fn skill(
    State(gw): State<Arc<Gateway>>,
    Path(id): Path<String>,
) -> Result<Json<serde_json::Value>, ApiError> {
    gw.compute(move |g| g.skill(&id)).await.map(Json)
}

async fn health(State(gw): State<Arc<Gateway>>) -> Json<serde_json::Value> {
    Json(health_json(&gw))
}

pub(crate) fn health_json(gw: &Gateway) -> serde_json::Value {
    let loaded = gw.current();
    let m = &loaded.index.manifest;
    let degraded = gw.degraded(&loaded);
    serde_json::json!({
        "status": if degraded.is_empty() { "ok" } else { "degraded" },
        "degraded": degraded,
        "index": {
            "loaded": true,
            "dir": gw.config().index_dir.display().to_string(),
            "revision": m.content_hash,
            "format": m.format,
            "tool": m.tool,
            "counts": m.counts,
            "model": m.model,
            "dim": m.dim,
            "loaded_at": loaded.loaded_at,
            "sources": m.sources.iter().map(|s| serde_json::json!({
                "name": s.name, "rev": s.rev, "content_hash": s.content_hash, "skills": s.skills})).collect::<Vec<_>>(),
        },
        "uptime_seconds": gw.started.elapsed().as_secs(),
        "version": env!("CARGO_PKG_VERSION"),
    })
}

async fn metrics(State(gw): State<Arc<Gateway>>) -> Response {
    (
        [(
            header::CONTENT_TYPE,
            HeaderValue::from_static("application/openmetrics-text; version=1.0.0; charset=utf-8"),
        )],
        gw.metrics.encode(),
    )
        .into_response()
}

async fn openapi_doc() -> Json<serde_json::Value> {
    Json(openapi::document())
}

/// Compares without leaking where the strings differ.
fn same_secret(a: &str, b: &str) -> bool {
    a.len() == b.len()
        && a.bytes()
            .zip(b.bytes())
            .fold(0u8, |acc, (x, y)| acc | (x ^ y))
            == 0
}

async fn admin_reload(
    State(gw): State<Arc<Gateway>>,
    headers: HeaderMap,
) -> Result<Json<serde_json::Value>, ApiError> {
    let Some(token) = gw.config().admin_token.as_deref() else {
        return Err(ApiError::new(
            StatusCode::FORBIDDEN,
            "reload_disabled",
            "reloading over HTTP is disabled: start the gateway with SKG_ADMIN_TOKEN set",
        ));
    };
    let given = headers
        .get(header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.strip_prefix("Bearer "));
    match given {
        None => {
            return Err(ApiError::new(
                StatusCode::UNAUTHORIZED,
                "unauthorized",
                "send Authorization: Bearer <SKG_ADMIN_TOKEN>",
            ));
        }
        Some(g) if !same_secret(g.trim(), token) => {
            return Err(ApiError::new(
                StatusCode::UNAUTHORIZED,
                "unauthorized",
                "the bearer token is not the admin token",
            ));
        }
        Some(_) => {}
    }
    match gw.reload().await {
        crate::ReloadOutcome::Failed { error, serving } => Err(ApiError::new(
            StatusCode::SERVICE_UNAVAILABLE,
            "reload_failed",
            format!("{error}; still serving revision {serving}"),
        )),
        outcome => Ok(Json(serde_json::to_value(outcome).unwrap_or_default())),
    }
}
