//! The MCP server: JSON-RPC 2.0 with the tools `find_skills`, `get_skill` and `route_task`, over
//! streamable HTTP (`POST /mcp` on the gateway's app; answers are single JSON responses, no SSE
//! stream is offered, so `GET /mcp` is 405 as the transport allows) and over stdio (one message
//! per line, [`run_stdio`]).
//!
//! The server is stateless (no session id): every request is answered from the index served at
//! that moment. Browsers are kept out by the `Origin` check the transport requires (localhost
//! and the configured origins only).

use std::sync::Arc;

use axum::{
    Extension, Json,
    body::Bytes,
    extract::State,
    http::{HeaderMap, StatusCode, header},
    response::{IntoResponse, Response},
};
use serde::{Serialize, de::DeserializeOwned};
use serde_json::{Value, json};
use tokio::io::{AsyncBufRead, AsyncBufReadExt as _, AsyncWrite, AsyncWriteExt as _};

use crate::{
    access::Access,
    error::{ApiError, ErrorCode},
    gateway::Gateway,
    wire::{FindRequest, RouteRequest, SkillRequest, defaults as wire_defaults},
};

/// Protocol revisions this server speaks, newest first.
pub const PROTOCOL_VERSIONS: [&str; 3] = ["2025-06-18", "2025-03-26", "2024-11-05"];

const PARSE_ERROR: i64 = -32700;
const INVALID_REQUEST: i64 = -32600;
const METHOD_NOT_FOUND: i64 = -32601;
const INVALID_PARAMS: i64 = -32602;
const INTERNAL_ERROR: i64 = -32603;

fn rpc_error(id: &Value, code: i64, message: impl Into<String>) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "error": {"code": code, "message": message.into()}})
}

fn rpc_result(id: &Value, result: &Value) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "result": result})
}

/// The tools, as `tools/list` gives them (`max_k`: the gateway's largest `k`).
pub fn tool_list(max_k: usize) -> Value {
    let k = json!({"type": "integer", "minimum": 1, "maximum": max_k, "default": wire_defaults::K,
        "description": "How many distinct skills to return."});
    let capability = json!({"type": "string", "pattern": "^[a-z0-9-]{1,64}$",
        "description": "Only skills of this capability type (e.g. `testing`, `bioinformatics`, `visualization`)."});
    json!({"tools": [
        {
            "name": "find_skills",
            "title": "Find skills",
            "description": "Search the skill registry for the skills that fit a need. Returns one result per skill (best first) with its id, description, the matching part (abstract, overview or a section) and a score; skills below the score floor come back as `rejected`.",
            "inputSchema": {"type": "object", "properties": {
                "query": {"type": "string", "description": "What the agent needs to do, in words."},
                "k": k,
                "capability": capability,
            }, "required": ["query"], "additionalProperties": false},
            "annotations": {"readOnlyHint": true, "openWorldHint": false},
        },
        {
            "name": "get_skill",
            "title": "Get a skill",
            "description": "Return a skill's SKILL.md (instructions) and metadata by its id (as find_skills or route_task give it).",
            "inputSchema": {"type": "object", "properties": {
                "id": {"type": "string", "description": "The skill id, e.g. `registry:path/to/skill`."},
            }, "required": ["id"], "additionalProperties": false},
            "annotations": {"readOnlyHint": true, "openWorldHint": false},
        },
        {
            "name": "route_task",
            "title": "Route a task to a skill bundle",
            "description": "Given a task, return the small ordered bundle of skills it needs: the best skills plus everything they depend on, dependencies first, with each skill's SKILL.md, dependency cycles and broken input/output chains reported, and token accounting against the whole catalog.",
            "inputSchema": {"type": "object", "properties": {
                "task": {"type": "string", "description": "The task, in words."},
                "k": k,
                "token_budget": {"type": "integer", "minimum": 0, "description": "Tokens the bundle may use; dependencies are kept past it (the overrun is reported), complements are added within it."},
                "capability": capability,
            }, "required": ["task"], "additionalProperties": false},
            "annotations": {"readOnlyHint": true, "openWorldHint": false},
        },
    ]})
}

fn tool_text(v: &Value, is_error: bool) -> Value {
    let text = serde_json::to_string_pretty(v).unwrap_or_default();
    json!({"content": [{"type": "text", "text": text}], "structuredContent": v, "isError": is_error})
}

/// A tool's arguments as its request type (the same type, defaults and checks as the HTTP API).
fn args<T: DeserializeOwned>(args: &Value) -> Result<T, (i64, String)> {
    T::deserialize(args).map_err(|e| (INVALID_PARAMS, format!("invalid arguments: {e}")))
}

/// The MCP tools take a subset of the HTTP request's fields.
#[derive(serde::Deserialize)]
#[serde(deny_unknown_fields)]
struct FindArgs {
    query: String,
    #[serde(default)]
    k: Option<usize>,
    #[serde(default)]
    capability: Option<String>,
}

#[derive(serde::Deserialize)]
#[serde(deny_unknown_fields)]
struct RouteArgs {
    task: String,
    #[serde(default)]
    k: Option<usize>,
    #[serde(default)]
    token_budget: Option<u64>,
    #[serde(default)]
    capability: Option<String>,
}

fn answer<T: Serialize>(r: Result<T, ApiError>) -> Value {
    // Tool failures are results with isError (the model can read and correct them).
    match r.and_then(|v| {
        serde_json::to_value(v)
            .map_err(|e| ApiError::internal("the answer could not be encoded", e))
    }) {
        Ok(v) => tool_text(&v, false),
        Err(e) => tool_text(&json!({"code": e.code, "message": e.message}), true),
    }
}

async fn call_tool(
    gw: &Arc<Gateway>,
    access: &Access,
    name: &str,
    arguments: &Value,
) -> Result<Value, (i64, String)> {
    Ok(match name {
        "find_skills" => {
            let a: FindArgs = args(arguments)?;
            let req = FindRequest {
                query: a.query,
                k: a.k,
                mode: None,
                include_quarantined: false,
                min_score: None,
                explain: false,
                capability: a.capability,
            };
            let access = access.clone();
            answer(gw.compute(move |g| g.find(&req, &access)).await)
        }
        "get_skill" => {
            let a: SkillRequest = args(arguments)?;
            let access = access.clone();
            answer(gw.compute(move |g| g.skill(&a.id, &access)).await)
        }
        "route_task" => {
            let a: RouteArgs = args(arguments)?;
            let mut req = RouteRequest::new(a.task);
            req.k = a.k;
            req.token_budget = a.token_budget;
            req.capability = a.capability;
            req.include_content = true;
            let access = access.clone();
            answer(gw.compute(move |g| g.route(&req, &access)).await)
        }
        other => return Err((INVALID_PARAMS, format!("unknown tool `{other}`"))),
    })
}

/// Answers one JSON-RPC message for `access` (what the caller's key may see); `None` for
/// notifications and responses (nothing to send).
pub async fn handle(gw: &Arc<Gateway>, access: &Access, msg: Value) -> Option<Value> {
    let Value::Object(obj) = &msg else {
        return Some(rpc_error(
            &Value::Null,
            INVALID_REQUEST,
            "expected one JSON-RPC message object (batches are not supported)",
        ));
    };
    let id = obj.get("id").cloned();
    let Some(method) = obj.get("method").and_then(Value::as_str) else {
        // A response from the client (we send no requests) or garbage.
        return match id {
            Some(_) if obj.contains_key("result") || obj.contains_key("error") => None,
            _ => Some(rpc_error(
                &id.unwrap_or(Value::Null),
                INVALID_REQUEST,
                "a JSON-RPC request needs `method`",
            )),
        };
    };
    if obj.get("jsonrpc").and_then(Value::as_str) != Some("2.0") {
        return Some(rpc_error(
            &id.unwrap_or(Value::Null),
            INVALID_REQUEST,
            "`jsonrpc` must be \"2.0\"",
        ));
    }
    let Some(id) = id else {
        // Notifications (initialized, cancelled, …) need no answer.
        return None;
    };
    let params = obj.get("params").cloned().unwrap_or(Value::Null);
    Some(match method {
        "initialize" => {
            let asked = params.get("protocolVersion").and_then(Value::as_str);
            let version = asked
                .filter(|v| PROTOCOL_VERSIONS.contains(v))
                .unwrap_or(PROTOCOL_VERSIONS[0]);
            // The skills the caller may be routed to: a key's scope, not the whole catalog (a
            // tenant learns nothing of the others' skills, their number included).
            let loaded = gw.current();
            let routable = loaded.scope(access).map_or_else(
                || {
                    loaded
                        .index
                        .manifest
                        .counts
                        .get("routable")
                        .copied()
                        .unwrap_or(0)
                },
                |scope| scope.routable() as u64,
            );
            rpc_result(
                &id,
                &json!({
                    "protocolVersion": version,
                    "capabilities": {"tools": {"listChanged": false}},
                    "serverInfo": {"name": "skg", "title": "skg skill gateway", "version": env!("CARGO_PKG_VERSION")},
                    "instructions": format!(
                        "Skill registry gateway over {} routable skills. Call route_task with the user's task to get the ordered skills it needs (with their instructions); find_skills to browse; get_skill to read one.",
                        routable),
                }),
            )
        }
        "ping" => rpc_result(&id, &json!({})),
        "tools/list" => rpc_result(&id, &tool_list(gw.config().max_k)),
        "tools/call" => {
            let Some(name) = params.get("name").and_then(Value::as_str) else {
                return Some(rpc_error(&id, INVALID_PARAMS, "tools/call needs `name`"));
            };
            let args = params.get("arguments").cloned().unwrap_or(json!({}));
            if !args.is_object() {
                return Some(rpc_error(
                    &id,
                    INVALID_PARAMS,
                    "`arguments` must be an object",
                ));
            }
            match call_tool(gw, access, name, &args).await {
                Ok(r) => rpc_result(&id, &r),
                Err((code, m)) => rpc_error(&id, code, m),
            }
        }
        "resources/list" => rpc_result(&id, &json!({"resources": []})),
        "prompts/list" => rpc_result(&id, &json!({"prompts": []})),
        other => rpc_error(
            &id,
            METHOD_NOT_FOUND,
            format!("method `{other}` is not supported"),
        ),
    })
}

fn origin_allowed(gw: &Gateway, headers: &HeaderMap) -> bool {
    let Some(origin) = headers.get(header::ORIGIN).and_then(|v| v.to_str().ok()) else {
        return true; // not a browser
    };
    let host = origin
        .split("://")
        .nth(1)
        .unwrap_or(origin)
        .split(['/', ':'])
        .next()
        .unwrap_or("");
    matches!(host, "localhost" | "127.0.0.1")
        || origin.starts_with("http://[::1]")
        || gw.config().allowed_origins.iter().any(|o| o == origin)
}

/// MCP streamable HTTP endpoint (JSON-RPC 2.0; tools find_skills, get_skill, route_task): one
/// message in, its response out (202 for notifications).
#[utoipa::path(post, path = "/mcp", security((), ("api_key" = [])),
    request_body(content = Object, description = "one JSON-RPC 2.0 message", content_type = "application/json"),
    responses((status = 200, description = "JSON-RPC response"),
        (status = 202, description = "notification accepted"),
        (status = 400, description = "not JSON, or an unsupported MCP-Protocol-Version", body = ApiError),
        (status = 401, description = "no, an unknown or a revoked API key", body = ApiError),
        (status = 403, description = "Origin not allowed", body = ApiError),
        (status = 429, description = "the key's rate limit is reached (`Retry-After`)", body = ApiError)))]
pub(crate) async fn http(
    State(gw): State<Arc<Gateway>>,
    Extension(access): Extension<Access>,
    headers: HeaderMap,
    body: Bytes,
) -> Response {
    if !origin_allowed(&gw, &headers) {
        return ApiError::new(
            ErrorCode::OriginNotAllowed,
            "this Origin may not call the MCP endpoint",
        )
        .into_response();
    }
    if let Some(v) = headers
        .get("mcp-protocol-version")
        .and_then(|v| v.to_str().ok())
        && !PROTOCOL_VERSIONS.contains(&v)
    {
        return ApiError::new(
            ErrorCode::UnsupportedProtocolVersion,
            format!(
                "MCP-Protocol-Version {v} is not supported; this server speaks {}",
                PROTOCOL_VERSIONS.join(", ")
            ),
        )
        .into_response();
    }
    let msg: Value = match serde_json::from_slice(&body) {
        Ok(v) => v,
        Err(e) => {
            return (
                StatusCode::BAD_REQUEST,
                Json(rpc_error(
                    &Value::Null,
                    PARSE_ERROR,
                    format!("not JSON: {e}"),
                )),
            )
                .into_response();
        }
    };
    match handle(&gw, &access, msg).await {
        Some(answer) => Json(answer).into_response(),
        None => StatusCode::ACCEPTED.into_response(),
    }
}

/// `GET` / `DELETE /mcp`: no server-initiated stream and no sessions.
pub(crate) async fn http_get() -> ApiError {
    ApiError::new(
        ErrorCode::MethodNotAllowed,
        "this MCP server answers POST only (no SSE stream, no sessions)",
    )
}

/// Serves MCP over stdio: one JSON-RPC message per line in, one per line out, until the input
/// ends. Logs go to stderr (through tracing), never to `output`.
pub async fn run_stdio<R, W>(gw: Arc<Gateway>, input: R, mut output: W) -> std::io::Result<()>
where
    R: AsyncBufRead + Unpin,
    W: AsyncWrite + Unpin,
{
    let mut lines = input.lines();
    while let Some(line) = lines.next_line().await? {
        if line.trim().is_empty() {
            continue;
        }
        let answer = match serde_json::from_str::<Value>(&line) {
            Ok(msg) => handle(&gw, &Access::Open, msg).await,
            Err(e) => Some(rpc_error(
                &Value::Null,
                PARSE_ERROR,
                format!("not JSON: {e}"),
            )),
        };
        if let Some(a) = answer {
            let mut text = serde_json::to_string(&a).unwrap_or_else(|_| {
                rpc_error(&Value::Null, INTERNAL_ERROR, "unserializable answer").to_string()
            });
            text.push('\n');
            output.write_all(text.as_bytes()).await?;
            output.flush().await?;
        }
    }
    Ok(())
}
