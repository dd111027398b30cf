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
    Json,
    body::Bytes,
    extract::State,
    http::{HeaderMap, StatusCode, header},
    response::{IntoResponse, Response},
};
use serde_json::{Value, json};
use skg_index::adapt::Format;
use tokio::io::{AsyncBufRead, AsyncBufReadExt as _, AsyncWrite, AsyncWriteExt as _};

use crate::{
    error::ApiError,
    gateway::{Ask, Gateway},
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

/// The tools, as `tools/list` gives them.
pub fn tool_list() -> Value {
    let k = json!({"type": "integer", "minimum": 1, "maximum": 50, "default": 5,
        "description": "How many distinct skills to return."});
    json!({"tools": [
        {
            "name": "find_skills",
            "title": "Find skills",
            "description": "Search the skill registry for the skills that fit a need. Returns one result per skill (best first) with its id, description, the matching part (abstract, overview or a section) and a score; skills below the score floor come back as `rejected`.",
            "inputSchema": {"type": "object", "properties": {
                "query": {"type": "string", "description": "What the agent needs to do, in words."},
                "k": k,
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
            }, "required": ["task"], "additionalProperties": false},
            "annotations": {"readOnlyHint": true, "openWorldHint": false},
        },
    ]})
}

fn tool_text(v: &Value, is_error: bool) -> Value {
    let text = serde_json::to_string_pretty(v).unwrap_or_default();
    json!({"content": [{"type": "text", "text": text}], "structuredContent": v, "isError": is_error})
}

fn str_arg(args: &Value, name: &str) -> Result<String, String> {
    args.get(name)
        .and_then(Value::as_str)
        .map(str::to_owned)
        .ok_or_else(|| format!("argument `{name}` (a string) is required"))
}

fn k_arg(args: &Value) -> Result<usize, String> {
    match args.get("k") {
        None | Some(Value::Null) => Ok(5),
        Some(v) => v
            .as_u64()
            .and_then(|k| usize::try_from(k).ok())
            .ok_or_else(|| "argument `k` must be a positive integer".to_owned()),
    }
}

/// The retrieval request of a tool call: the text in `field`, `k`, the gateway's defaults.
fn ask(args: &Value, field: &str) -> Result<Ask, String> {
    Ok(Ask {
        text: str_arg(args, field)?,
        k: k_arg(args)?,
        mode: None,
        include_quarantined: false,
        min_score: None,
    })
}

async fn call_tool(gw: &Arc<Gateway>, name: &str, args: &Value) -> Result<Value, (i64, String)> {
    let bad = |m: String| (INVALID_PARAMS, m);
    let answer: Result<Value, ApiError> = match name {
        "find_skills" => {
            let ask = ask(args, "query").map_err(bad)?;
            gw.compute(move |g| g.find(&ask)).await
        }
        "get_skill" => {
            let id = str_arg(args, "id").map_err(bad)?;
            gw.compute(move |g| g.skill(&id)).await
        }
        "route_task" => {
            let ask = ask(args, "task").map_err(bad)?;
            let budget = match args.get("token_budget") {
                None | Some(Value::Null) => None,
                Some(v) => Some(v.as_u64().ok_or_else(|| {
                    bad("argument `token_budget` must be a non-negative integer".into())
                })?),
            };
            gw.compute(move |g| g.route(&ask, budget, Format::Bundle, true))
                .await
        }
        other => return Err((INVALID_PARAMS, format!("unknown tool `{other}`"))),
    };
    // Tool failures are results with isError (the model can read and correct them).
    Ok(match answer {
        Ok(v) => tool_text(&v, false),
        Err(e) => tool_text(&json!({"code": e.code, "message": e.message}), true),
    })
}

/// Answers one JSON-RPC message; `None` for notifications and responses (nothing to send).
pub async fn handle(gw: &Arc<Gateway>, msg: Value) -> Option<Value> {
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
            let loaded = gw.current();
            rpc_result(
                &id,
                &json!({
                    "protocolVersion": version,
                    "capabilities": {"tools": {"listChanged": false}},
                    "serverInfo": {"name": "skg", "title": "skg skill gateway", "version": env!("CARGO_PKG_VERSION")},
                    "instructions": format!(
                        "Skill registry gateway over {} routable skills. Call route_task with the user's task to get the ordered skills it needs (with their instructions); find_skills to browse; get_skill to read one.",
                        loaded.index.manifest.counts.get("routable").copied().unwrap_or(0)),
                }),
            )
        }
        "ping" => rpc_result(&id, &json!({})),
        "tools/list" => rpc_result(&id, &tool_list()),
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
            match call_tool(gw, name, &args).await {
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

/// `POST /mcp`: one JSON-RPC message in, its response out (202 for notifications).
pub(crate) async fn http(
    State(gw): State<Arc<Gateway>>,
    headers: HeaderMap,
    body: Bytes,
) -> Response {
    if !origin_allowed(&gw, &headers) {
        return ApiError::new(
            StatusCode::FORBIDDEN,
            "origin_not_allowed",
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
            StatusCode::BAD_REQUEST,
            "unsupported_protocol_version",
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
    match handle(&gw, msg).await {
        Some(answer) => Json(answer).into_response(),
        None => StatusCode::ACCEPTED.into_response(),
    }
}

/// `GET` / `DELETE /mcp`: no server-initiated stream and no sessions.
pub(crate) async fn http_get() -> ApiError {
    ApiError::new(
        StatusCode::METHOD_NOT_ALLOWED,
        "method_not_allowed",
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
            Ok(msg) => handle(&gw, msg).await,
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
