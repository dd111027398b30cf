//! The HTTP surface: routes, request types, limits, JSON errors, metrics and request logs.

use std::{sync::Arc, time::Instant};

use axum::{
    Extension, Json, Router,
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
    access::Access,
    error::{ApiError, ErrorCode},
    gateway::Gateway,
    mcp,
    openapi::{self, ErrorResponses},
    wire::{
        FindRequest, FindResponse, HealthResponse, ListingFormat, ListingRequest, ListingResponse,
        RouteRequest, RouteResponse, SearchResponse, SkillResponse,
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
///
/// The read routes (`/v1/*`, `/mcp`) pass [`authenticate`] first: with a keys file, each needs a
/// key and answers within the key's scope. `/health`, `/ready` and `/openapi.json` stay open
/// (load balancers call them; they carry no skill), `/metrics` asks a keyed gateway's scraper
/// for its token ([`crate::Config::metrics_access`]), `/admin/reload` has its own token.
pub fn router(gw: Arc<Gateway>) -> Router {
    let cfg = gw.config().clone();
    let reads = Router::new()
        .route("/v1/route", post(route))
        .route("/v1/skills/find", post(find))
        .route("/v1/search", post(search))
        .route("/v1/skills/{*id}", get(skill))
        .route("/v1/listing", get(listing_get).post(listing))
        .route(
            "/mcp",
            post(mcp::http).get(mcp::http_get).delete(mcp::http_get),
        )
        .route_layer(middleware::from_fn_with_state(
            Arc::clone(&gw),
            authenticate,
        ));
    // Everything a client asks for runs under the limits; the probes do not, so a replica
    // under load still answers its load balancer (they read no body and compute nothing).
    let limited = Router::new()
        .merge(reads)
        .route("/metrics", get(metrics))
        .route("/openapi.json", get(openapi_doc))
        .route("/admin/reload", post(admin_reload))
        .fallback(not_found)
        .layer(axum::extract::DefaultBodyLimit::max(cfg.max_body_bytes))
        .layer(RequestBodyLimitLayer::new(cfg.max_body_bytes))
        .layer(GlobalConcurrencyLimitLayer::new(cfg.concurrency.max(1)))
        .layer(TimeoutLayer::with_status_code(
            StatusCode::SERVICE_UNAVAILABLE,
            cfg.timeout,
        ));
    Router::new()
        .merge(limited)
        .route("/health", get(health))
        .route("/ready", get(ready))
        .layer(CatchPanicLayer::custom(
            |_: Box<dyn std::any::Any + Send>| {
                ApiError::internal("the request's handler failed", "panicked").into_response()
            },
        ))
        .layer(
            // The span names the path, never the query string (`/v1/listing?task=…` carries
            // the task, which is logged only when configured).
            TraceLayer::new_for_http()
                .make_span_with(|req: &Request| {
                    tracing::debug_span!(
                        "request",
                        method = %method_label(req.method()),
                        path = %req.uri().path(),
                    )
                })
                .on_response(
                    tower_http::trace::DefaultOnResponse::new().level(tracing::Level::INFO),
                )
                .on_failure(tower_http::trace::DefaultOnFailure::new().level(tracing::Level::WARN)),
        )
        .layer(middleware::from_fn_with_state(Arc::clone(&gw), observe))
        .with_state(gw)
}

/// The tenant a request was answered for (metrics and the access log read it).
#[derive(Debug, Clone)]
struct TenantLabel(String);

/// What the access log records about an answer: the revision that answered and the skill ids
/// returned, and the task only when the gateway is configured to log it.
#[derive(Debug, Clone)]
struct AccessNote {
    revision: String,
    results: Vec<String>,
    task: Option<String>,
}

/// `value` as a JSON response carrying its [`AccessNote`].
fn noted<T: serde::Serialize>(value: T, note: AccessNote) -> Response {
    let mut resp = Json(value).into_response();
    resp.extensions_mut().insert(note);
    resp
}

/// The key a request presents: `Authorization: Bearer <key>`, else `X-Api-Key: <key>`.
fn presented_key(headers: &HeaderMap) -> Option<&str> {
    headers
        .get(header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| {
            // The scheme is case-insensitive (RFC 9110, 11.1).
            let (scheme, key) = v.split_once(' ')?;
            scheme.eq_ignore_ascii_case("bearer").then_some(key)
        })
        .or_else(|| headers.get("x-api-key").and_then(|v| v.to_str().ok()))
        .map(str::trim)
}

/// Who is asking ([`Gateway::authenticate`]): the request carries its [`Access`] to the handler;
/// a refusal (401, 429) is answered here.
async fn authenticate(State(gw): State<Arc<Gateway>>, mut req: Request, next: Next) -> Response {
    match gw.authenticate(presented_key(req.headers())) {
        Ok(access) => {
            let label = TenantLabel(access.tenant().to_owned());
            req.extensions_mut().insert(access);
            let mut resp = next.run(req).await;
            resp.extensions_mut().insert(label);
            resp
        }
        Err(e) => e.into_response(),
    }
}

/// The method as a metrics and log label: the standard methods by name, any other token a client
/// sends as `other` — a label per arbitrary method would grow the metric series without bound.
fn method_label(method: &axum::http::Method) -> &'static str {
    const KNOWN: [&str; 9] = [
        "GET", "POST", "HEAD", "PUT", "DELETE", "OPTIONS", "PATCH", "TRACE", "CONNECT",
    ];
    KNOWN
        .into_iter()
        .find(|m| *m == method.as_str())
        .unwrap_or("other")
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
    let method = method_label(req.method()).to_owned();
    let started = Instant::now();
    let mut resp = next.run(req).await;
    let status = resp.status();
    let tenant = resp
        .extensions()
        .get::<TenantLabel>()
        .map_or_else(|| "-".to_owned(), |t| t.0.clone());
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
    let took = started.elapsed();
    gw.metrics.request(
        (&route, &method, status.as_u16()),
        &tenant,
        took.as_secs_f64(),
    );
    let note = resp.extensions().get::<AccessNote>();
    tracing::info!(
        target: "skg::access",
        tenant = %tenant,
        method = %method,
        route = %route,
        status = status.as_u16(),
        ms = took.as_secs_f64() * 1000.0,
        revision = %note.map_or("", |n| n.revision.as_str()),
        results = %note.map(|n| n.results.join(",")).unwrap_or_default(),
        task = note.and_then(|n| n.task.as_deref()),
        "request"
    );
    resp
}

async fn not_found() -> ApiError {
    ApiError::not_found("no such route (see /openapi.json)")
}

/// Route a task to a small, ordered, dependency-complete skill bundle.
#[utoipa::path(post, path = "/v1/route", request_body = RouteRequest, security((), ("api_key" = [])),
    responses((status = 200, description = "the bundle: plan (dependencies first), cycles, type errors, token accounting, rejected; `tools` in the asked format", body = RouteResponse), ErrorResponses))]
pub(crate) async fn route(
    State(gw): State<Arc<Gateway>>,
    Extension(access): Extension<Access>,
    ApiJson(r): ApiJson<RouteRequest>,
) -> Result<Response, ApiError> {
    let span = tracing::info_span!("route", tenant = access.tenant(), k = ?r.k);
    let task = gw.config().log_task.then(|| r.task.clone());
    let out: RouteResponse = gw
        .compute(move |g| span.in_scope(|| g.route(&r, &access)))
        .await?;
    let note = AccessNote {
        revision: out.served.index_revision.clone(),
        results: out.plan.iter().map(|s| s.id.clone()).collect(),
        task,
    };
    Ok(noted(out, note))
}

/// Find skills: one result per skill, best first.
#[utoipa::path(post, path = "/v1/skills/find", request_body = FindRequest, security((), ("api_key" = [])),
    responses((status = 200, description = "results with name, description, root_uri, uri, level, score, abstract; rejected", body = FindResponse), ErrorResponses))]
pub(crate) async fn find(
    State(gw): State<Arc<Gateway>>,
    Extension(access): Extension<Access>,
    ApiJson(r): ApiJson<FindRequest>,
) -> Result<Response, ApiError> {
    let span = tracing::info_span!("find", tenant = access.tenant(), k = ?r.k);
    let task = gw.config().log_task.then(|| r.query.clone());
    let out: FindResponse = gw
        .compute(move |g| span.in_scope(|| g.find(&r, &access)))
        .await?;
    let note = AccessNote {
        revision: out.served.index_revision.clone(),
        results: out.results.iter().map(|s| s.id.clone()).collect(),
        task,
    };
    Ok(noted(out, note))
}

/// Search sections: several hits per skill.
#[utoipa::path(post, path = "/v1/search", request_body = FindRequest, security((), ("api_key" = [])),
    responses((status = 200, description = "section hits", body = SearchResponse), ErrorResponses))]
pub(crate) async fn search(
    State(gw): State<Arc<Gateway>>,
    Extension(access): Extension<Access>,
    ApiJson(r): ApiJson<FindRequest>,
) -> Result<Response, ApiError> {
    let span = tracing::info_span!("search", tenant = access.tenant(), k = ?r.k);
    let task = gw.config().log_task.then(|| r.query.clone());
    let out: SearchResponse = gw
        .compute(move |g| span.in_scope(|| g.search(&r, &access)))
        .await?;
    let note = AccessNote {
        revision: out.served.index_revision.clone(),
        results: out.results.iter().map(|s| s.doc_id.clone()).collect(),
        task,
    };
    Ok(noted(out, note))
}

/// The skills an agent host should list for a task within its character budget: most relevant
/// first, dependencies of listed skills kept, the budget never exceeded, the same bytes for the
/// same task and index (a prompt cache survives).
#[utoipa::path(post, path = "/v1/listing", request_body = ListingRequest, security((), ("api_key" = [])),
    responses((status = 200, description = "the listing (`format: markdown`: the block alone, text/markdown)", body = ListingResponse), ErrorResponses))]
pub(crate) async fn listing(
    State(gw): State<Arc<Gateway>>,
    Extension(access): Extension<Access>,
    ApiJson(r): ApiJson<ListingRequest>,
) -> Result<Response, ApiError> {
    let format = r.format;
    let span = tracing::info_span!("listing", tenant = access.tenant(), budget = r.budget_chars);
    let task = r.task.clone().filter(|_| gw.config().log_task);
    let out = gw
        .compute(move |g| span.in_scope(|| g.listing(&r, &access)))
        .await?;
    let note = AccessNote {
        revision: out.served.index_revision.clone(),
        results: out.skills.iter().map(|s| s.id.clone()).collect(),
        task,
    };
    Ok(match format {
        ListingFormat::Json => noted(out, note),
        ListingFormat::Markdown => {
            let mut resp = (
                [(
                    header::CONTENT_TYPE,
                    HeaderValue::from_static("text/markdown; charset=utf-8"),
                )],
                out.markdown,
            )
                .into_response();
            resp.extensions_mut().insert(note);
            resp
        }
    })
}

/// [`listing`] with query parameters (`?task=…&budget_chars=…&description_chars=…&format=…`).
#[utoipa::path(get, path = "/v1/listing", params(ListingRequest), security((), ("api_key" = [])),
    responses((status = 200, description = "the listing", body = ListingResponse), ErrorResponses))]
pub(crate) async fn listing_get(
    State(gw): State<Arc<Gateway>>,
    Extension(access): Extension<Access>,
    query: Result<axum::extract::Query<ListingRequest>, axum::extract::rejection::QueryRejection>,
) -> Result<Response, ApiError> {
    let axum::extract::Query(r) = query.map_err(|e| ApiError::invalid(e.body_text()))?;
    listing(State(gw), Extension(access), ApiJson(r)).await
}

/// One skill by id (routable or not), with its SKILL.md; an unsafe skill's text is withheld.
#[utoipa::path(get, path = "/v1/skills/{id}", security((), ("api_key" = [])),
    params(("id" = String, Path, description = "`registry:path` (may contain slashes)")),
    responses((status = 200, description = "the skill", body = SkillResponse),
        (status = 401, description = "no, an unknown or a revoked API key", body = ApiError),
        (status = 403, description = "withheld: the security scan found the skill unsafe (`unsafe_skill`)", body = ApiError),
        (status = 404, description = "no such skill, or one outside what the key may see", body = ApiError),
        (status = 429, description = "the key's rate limit is reached (`Retry-After`)", body = ApiError)))]
pub(crate) async fn skill(
    State(gw): State<Arc<Gateway>>,
    Extension(access): Extension<Access>,
    Path(id): Path<String>,
) -> Result<Response, ApiError> {
    let out: SkillResponse = gw.compute(move |g| g.skill(&id, &access)).await?;
    let note = AccessNote {
        revision: out.index_revision.clone(),
        results: vec![out.id.clone()],
        task: None,
    };
    Ok(noted(out, note))
}

/// Index loaded, revision, model, degraded reasons; the folder, counts and registries too
/// without API keys, or with the admin token (an open probe of a gateway with tenants does not
/// learn the catalog).
#[utoipa::path(get, path = "/health", responses((status = 200, description = "health; with API keys, `index.dir`, `index.counts` and `index.sources` only for `Authorization: Bearer <SKG_ADMIN_TOKEN>`", body = HealthResponse)))]
pub(crate) async fn health(
    State(gw): State<Arc<Gateway>>,
    headers: HeaderMap,
) -> Json<HealthResponse> {
    let detailed = gw.config().keys_file.is_none()
        || gw
            .config()
            .admin_token
            .as_deref()
            .is_some_and(|token| admin_bearer(&headers, token).is_ok());
    Json(gw.health(detailed))
}

/// Readiness for a load balancer: 200 once the index is loaded, 503 while the gateway drains
/// before shutting down (in-flight requests finish; new ones should go elsewhere).
#[utoipa::path(get, path = "/ready", responses(
    (status = 200, description = "ready: `{ready: true, revision}`"),
    (status = 503, description = "draining: `{ready: false, revision}`")))]
pub(crate) async fn ready(State(gw): State<Arc<Gateway>>) -> Response {
    let revision = gw.current().index.manifest.content_hash.clone();
    let ready = gw.is_ready();
    let status = if ready {
        StatusCode::OK
    } else {
        StatusCode::SERVICE_UNAVAILABLE
    };
    (
        status,
        Json(serde_json::json!({"ready": ready, "revision": revision})),
    )
        .into_response()
}

/// Prometheus metrics (OpenMetrics text).
///
/// They count every tenant's requests and the whole index. A set `SKG_METRICS_TOKEN` is always
/// required (the admin token serves too); without one, a gateway with keys asks for the admin
/// token, or answers anyone with `--open-metrics`, and a gateway without keys is open.
#[utoipa::path(get, path = "/metrics", security((), ("bearer" = [])), responses(
    (status = 200, description = "metrics", content_type = "application/openmetrics-text"),
    (status = 401, description = "missing or wrong token (`SKG_METRICS_TOKEN` or `SKG_ADMIN_TOKEN`)", body = ApiError),
    (status = 403, description = "a gateway with keys and no token to scrape with: set `SKG_METRICS_TOKEN` (or `SKG_ADMIN_TOKEN`), or start with `--open-metrics`", body = ApiError)))]
pub(crate) async fn metrics(
    State(gw): State<Arc<Gateway>>,
    headers: HeaderMap,
) -> Result<Response, ApiError> {
    may_scrape(gw.config(), &headers)?;
    Ok((
        [(
            header::CONTENT_TYPE,
            HeaderValue::from_static("application/openmetrics-text; version=1.0.0; charset=utf-8"),
        )],
        gw.metrics.encode(),
    )
        .into_response())
}

/// Whether `headers` may read `/metrics` under `cfg` (see [`metrics`]).
fn may_scrape(cfg: &crate::Config, headers: &HeaderMap) -> Result<(), ApiError> {
    match cfg.metrics_access() {
        crate::MetricsAccess::Open => return Ok(()),
        crate::MetricsAccess::Closed => {
            return Err(ApiError::new(
                ErrorCode::Forbidden,
                "the metrics of a gateway with API keys need a token: start it with \
                 SKG_METRICS_TOKEN (or SKG_ADMIN_TOKEN) set and scrape with Authorization: \
                 Bearer <token>, or with --open-metrics",
            ));
        }
        crate::MetricsAccess::Token => {}
    }
    let tokens = [cfg.metrics_token.as_deref(), cfg.admin_token.as_deref()]
        .into_iter()
        .filter_map(crate::gateway::secret);
    // Each token compared in full, so the time taken does not tell which one matched.
    match bearer(headers) {
        None => Err(ApiError::new(
            ErrorCode::Unauthorized,
            "send Authorization: Bearer <token> with the metrics token (SKG_METRICS_TOKEN) or \
             the admin token",
        )),
        Some(given) if tokens.fold(false, |ok, t| ok | same_secret(given, t)) => Ok(()),
        Some(_) => Err(ApiError::new(
            ErrorCode::Unauthorized,
            "the bearer token is neither the metrics token nor the admin token",
        )),
    }
}

/// This document (OpenAPI 3.1).
#[utoipa::path(get, path = "/openapi.json", responses((status = 200, description = "OpenAPI 3.1")))]
pub(crate) async fn openapi_doc() -> Json<utoipa::openapi::OpenApi> {
    Json(openapi::document())
}

/// Compares without leaking where the strings differ or how long the secret is: their BLAKE3
/// digests, whose equality the crate tests in constant time.
fn same_secret(a: &str, b: &str) -> bool {
    blake3::hash(a.as_bytes()) == blake3::hash(b.as_bytes())
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
    let Some(token) = crate::gateway::secret(gw.config().admin_token.as_deref()) else {
        return Err(ApiError::new(
            ErrorCode::ReloadDisabled,
            "reloading over HTTP is disabled: start the gateway with SKG_ADMIN_TOKEN set",
        ));
    };
    admin_bearer(&headers, token)?;
    match gw.reload().await {
        crate::ReloadOutcome::Failed { error, serving } => Err(ApiError::new(
            ErrorCode::ReloadFailed,
            format!("{error}; still serving revision {serving}"),
        )),
        outcome => Ok(Json(outcome)),
    }
}

/// Whether `headers` carry `Authorization: Bearer <token>` (the scheme case-insensitive, RFC
/// 9110 11.1; the secret compared in constant time): the admin's proof.
fn admin_bearer(headers: &HeaderMap, token: &str) -> Result<(), ApiError> {
    match bearer(headers) {
        None => Err(ApiError::new(
            ErrorCode::Unauthorized,
            "send Authorization: Bearer <SKG_ADMIN_TOKEN>",
        )),
        Some(g) if !same_secret(g, token) => Err(ApiError::new(
            ErrorCode::Unauthorized,
            "the bearer token is not the admin token",
        )),
        Some(_) => Ok(()),
    }
}

/// The credentials of `Authorization: Bearer <token>` (the scheme case-insensitive, RFC 9110
/// 11.1), trimmed; none when empty.
fn bearer(headers: &HeaderMap) -> Option<&str> {
    let value = headers.get(header::AUTHORIZATION)?.to_str().ok()?;
    let (scheme, token) = value.split_once(' ')?;
    let token = token.trim();
    (scheme.eq_ignore_ascii_case("bearer") && !token.is_empty()).then_some(token)
}
