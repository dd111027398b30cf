//! `/openapi.json`: the HTTP surface described (OpenAPI 3.1), kept next to the router and checked
//! against it by a test (every route documented, nothing documented that is not routed).

use serde_json::{Value, json};
use skg_index::adapt::Format;

fn error_responses() -> Value {
    let err = json!({"description": "error", "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Error"}}}});
    json!({
        "400": err, "413": err, "415": err, "422": err, "500": err, "503": err,
    })
}

fn post(summary: &str, request: &str, ok: &str) -> Value {
    let mut responses = error_responses();
    responses["200"] =
        json!({"description": ok, "content": {"application/json": {"schema": {"type": "object"}}}});
    json!({"post": {
        "summary": summary,
        "requestBody": {"required": true, "content": {"application/json": {"schema": {"$ref": format!("#/components/schemas/{request}")}}}},
        "responses": responses,
    }})
}

/// The OpenAPI document.
pub(crate) fn document() -> Value {
    let formats: Vec<&str> = Format::ALL.iter().map(|f| f.as_str()).collect();
    let mode = json!({"type": "string", "enum": ["bm25", "dense", "hybrid"], "description": "Evidence used; hybrid (default with a model) fuses BM25 and dense adaptively."});
    let k = json!({"type": "integer", "minimum": 1, "default": 5, "description": "Distinct skills wanted (at most the gateway's max_k)."});
    json!({
        "openapi": "3.1.0",
        "info": {"title": "skg gateway", "version": env!("CARGO_PKG_VERSION"),
            "description": "Routes a task to a small, dependency-complete, ordered skill bundle from a quarantine-filtered canonical skill index."},
        "paths": {
            "/v1/route": post("Route a task to a skill bundle", "RouteRequest", "the bundle: plan (dependencies first), cycles, type errors, token accounting, rejected; `tools` in the asked format"),
            "/v1/skills/find": post("Find skills: one result per skill", "FindRequest", "results with name, description, root_uri, uri, level, score, abstract; rejected"),
            "/v1/search": post("Search sections: several hits per skill", "FindRequest", "section hits"),
            "/v1/skills/{id}": {"get": {
                "summary": "One skill by id (routable or not), with its SKILL.md",
                "parameters": [{"name": "id", "in": "path", "required": true, "schema": {"type": "string"}, "description": "`registry:path` (may contain slashes)"}],
                "responses": {"200": {"description": "the skill"}, "404": {"description": "no such skill", "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Error"}}}}},
            }},
            "/health": {"get": {"summary": "Index loaded, revision, counts, model, degraded reasons", "responses": {"200": {"description": "health"}}}},
            "/metrics": {"get": {"summary": "Prometheus metrics (OpenMetrics text)", "responses": {"200": {"description": "metrics", "content": {"application/openmetrics-text": {}}}}}},
            "/openapi.json": {"get": {"summary": "This document", "responses": {"200": {"description": "OpenAPI 3.1"}}}},
            "/admin/reload": {"post": {
                "summary": "Reload the index folder if its manifest changed (atomic swap; in-flight requests finish on the old index)",
                "security": [{"bearer": []}],
                "responses": {"200": {"description": "reloaded or fresh"}, "401": {"description": "missing or wrong token"}, "403": {"description": "reload disabled (no SKG_ADMIN_TOKEN)"}, "503": {"description": "the folder could not be loaded; the previous index keeps serving"}},
            }},
            "/mcp": {"post": {
                "summary": "MCP streamable HTTP endpoint (JSON-RPC 2.0; tools find_skills, get_skill, route_task)",
                "requestBody": {"required": true, "content": {"application/json": {"schema": {"type": "object"}}}},
                "responses": {"200": {"description": "JSON-RPC response"}, "202": {"description": "notification accepted"}, "400": {"description": "not JSON or unsupported protocol version"}, "403": {"description": "Origin not allowed"}},
            }},
        },
        "components": {
            "securitySchemes": {"bearer": {"type": "http", "scheme": "bearer"}},
            "schemas": {
                "Error": {"type": "object", "required": ["code", "message"], "properties": {
                    "code": {"type": "string"}, "message": {"type": "string"}}},
                "RouteRequest": {"type": "object", "required": ["task"], "additionalProperties": false, "properties": {
                    "task": {"type": "string"}, "k": k,
                    "token_budget": {"type": "integer", "minimum": 0},
                    "format": {"type": "string", "enum": formats, "default": "bundle"},
                    "mode": mode, "include_quarantined": {"type": "boolean", "default": false},
                    "min_score": {"type": "number"},
                    "include_content": {"type": "boolean", "default": false, "description": "Include each skill's SKILL.md in the plan."},
                }},
                "FindRequest": {"type": "object", "required": ["query"], "additionalProperties": false, "properties": {
                    "query": {"type": "string"}, "k": k, "mode": mode,
                    "include_quarantined": {"type": "boolean", "default": false},
                    "min_score": {"type": "number"},
                }},
            },
        },
    })
}
