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
use serde::de::DeserializeOwned;
use tower::limit::GlobalConcurrencyLimitLayer;
use tower_http::{
    catch_panic::CatchPanicLayer, limit::RequestBodyLimitLayer, timeout::TimeoutLayer,
    trace::TraceLayer,
};

use crate::{
    error::{ApiError, ErrorCode},
    gateway::Gateway,
    mcp,
    openapi::{self, ErrorResponses},
    wire::{
        FindRequest, FindResponse, HealthResponse, RouteRequest, RouteResponse, SearchResponse,
        SkillResponse,
    },
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
                ApiError::internal("the request's handler failed", "panicked").into_response()
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

/// Route a task to a small, ordered, dependency-complete skill bundle.
#[utoipa::path(post, path = "/v1/route", request_body = RouteRequest,
    responses((status = 200, description = "the bundle: plan (dependencies first), cycles, type errors, token accounting, rejected; `tools` in the asked format", body = RouteResponse), ErrorResponses))]
pub(crate) async fn route(
    State(gw): State<Arc<Gateway>>,
    ApiJson(r): ApiJson<RouteRequest>,
) -> Result<Json<RouteResponse>, ApiError> {
    gw.compute(move |g| g.route(&r)).await.map(Json)
}

/// Find skills: one result per skill, best first.
#[utoipa::path(post, path = "/v1/skills/find", request_body = FindRequest,
    responses((status = 200, description = "results with name, description, root_uri, uri, level, score, abstract; rejected", body = FindResponse), ErrorResponses))]
pub(crate) async fn find(
    State(gw): State<Arc<Gateway>>,
    ApiJson(r): ApiJson<FindRequest>,
) -> Result<Json<FindResponse>, ApiError> {
    gw.compute(move |g| g.find(&r)).await.map(Json)
}

/// Search sections: several hits per skill.
#[utoipa::path(post, path = "/v1/search", request_body = FindRequest,
    responses((status = 200, description = "section hits", body = SearchResponse), ErrorResponses))]
pub(crate) async fn search(
    State(gw): State<Arc<Gateway>>,
    ApiJson(r): ApiJson<FindRequest>,
) -> Result<Json<SearchResponse>, ApiError> {
    gw.compute(move |g| g.search(&r)).await.map(Json)
}

/// One skill by id (routable or not), with its SKILL.md; an unsafe skill's text is withheld.
#[utoipa::path(get, path = "/v1/skills/{id}",
    params(("id" = String, Path, description = "`registry:path` (may contain slashes)")),
    responses((status = 200, description = "the skill", body = SkillResponse),
        (status = 403, description = "withheld: the security scan found the skill unsafe (`unsafe_skill`)", body = ApiError),
        (status = 404, description = "no such skill", body = ApiError)))]
pub(crate) async fn skill(
    State(gw): State<Arc<Gateway>>,
    Path(id): Path<String>,
) -> Result<Json<SkillResponse>, ApiError> {
    gw.compute(move |g| g.skill(&id)).await.map(Json)
}

/// Index loaded, revision, counts, model, degraded reasons.
#[utoipa::path(get, path = "/health", responses((status = 200, description = "health", body = HealthResponse)))]
pub(crate) async fn health(State(gw): State<Arc<Gateway>>) -> Json<HealthResponse> {
    Json(gw.health())
}

/// Prometheus metrics (OpenMetrics text).
#[utoipa::path(get, path = "/metrics", responses((status = 200, description = "metrics", content_type = "application/openmetrics-text")))]
pub(crate) async fn metrics(State(gw): State<Arc<Gateway>>) -> Response {
    (
        [(
            header::CONTENT_TYPE,
            HeaderValue::from_static("application/openmetrics-text; version=1.0.0; charset=utf-8"),
        )],
        gw.metrics.encode(),
    )
        .into_response()
}

/// This document (OpenAPI 3.1).
#[utoipa::path(get, path = "/openapi.json", responses((status = 200, description = "OpenAPI 3.1")))]
pub(crate) async fn openapi_doc() -> Json<utoipa::openapi::OpenApi> {
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

/// Reload the index folder if its manifest changed (atomic swap; in-flight requests finish on
/// the old index).
#[utoipa::path(post, path = "/admin/reload", security(("bearer" = [])),
    responses((status = 200, description = "reloaded or fresh", body = crate::ReloadOutcome),
        (status = 401, description = "missing or wrong token", body = ApiError),
        (status = 403, description = "reload disabled (no SKG_ADMIN_TOKEN)", body = ApiError),
        (status = 503, description = "the folder could not be loaded; the previous index keeps serving", body = ApiError)))]
pub(crate) async fn admin_reload(
    State(gw): State<Arc<Gateway>>,
    headers: HeaderMap,
) -> Result<Json<crate::ReloadOutcome>, ApiError> {
    let Some(token) = gw.config().admin_token.as_deref() else {
        return Err(ApiError::new(
            ErrorCode::ReloadDisabled,
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
                ErrorCode::Unauthorized,
                "send Authorization: Bearer <SKG_ADMIN_TOKEN>",
            ));
        }
        Some(g) if !same_secret(g.trim(), token) => {
            return Err(ApiError::new(
                ErrorCode::Unauthorized,
                "the bearer token is not the admin token",
            ));
        }
        Some(_) => {}
    }
    match gw.reload().await {
        crate::ReloadOutcome::Failed { error, serving } => Err(ApiError::new(
            ErrorCode::ReloadFailed,
            format!("{error}; still serving revision {serving}"),
        )),
        outcome => Ok(Json(outcome)),
    }
}
