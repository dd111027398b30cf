//! OpenAPI documents as tool catalogs: each operation (a method under a path) becomes one tool,
//! as API gateways for agents expose them. OpenAPI 3.x (`openapi`) and Swagger 2.0 (`swagger`),
//! JSON or YAML.
//!
//! A tool's name is its `operationId`, else `<method>_<path>` in `[A-Za-z0-9_]` (`get_pets_id`);
//! its description the operation's `summary` and `description` (else `GET /pets/{id}`); its input
//! schema an object whose properties are the parameters (path and operation level, the
//! operation's winning on the same name and place; path parameters always required) and, when
//! the operation takes one, the request body as `body` (the JSON media type's schema, else the
//! first). Local `$ref`s to parameters and request bodies are followed; the schemas they reach
//! under `#/components/schemas` or `#/definitions` are copied into the tool's own `$defs`, so
//! each tool's schema stands alone. The method and path are kept as `method` and `path`.

use std::collections::{BTreeMap, BTreeSet};

use serde_json::{Map, Value, json};

/// HTTP methods an OpenAPI path item may hold operations under, in the order they are read.
const METHODS: [&str; 8] = [
    "get", "put", "post", "delete", "options", "head", "patch", "trace",
];
/// Most `$ref` hops followed for one parameter or body.
const MAX_REF_HOPS: usize = 8;
/// Most schema definitions copied into one tool.
const MAX_DEFS: usize = 256;

/// Whether `doc` is an OpenAPI or Swagger document (a version key and `paths`).
pub(crate) fn is_openapi(doc: &Value) -> bool {
    (doc.get("openapi").is_some_and(Value::is_string)
        || doc.get("swagger").is_some_and(Value::is_string))
        && doc.get("paths").is_some_and(Value::is_object)
}

/// The document's operations as flat tool entries (`{name, description, inputSchema, method,
/// path}`), in path order (by name) then method order.
pub(crate) fn operations(doc: &Value) -> Vec<Value> {
    let Some(Value::Object(paths)) = doc.get("paths") else {
        return Vec::new();
    };
    let mut out = Vec::new();
    for (path, item) in paths {
        let item = resolve(doc, item);
        let shared = item.get("parameters").and_then(Value::as_array);
        for method in METHODS {
            let Some(op @ Value::Object(_)) = item.get(method) else {
                continue;
            };
            out.push(operation(doc, path, method, op, shared));
        }
    }
    out
}

fn operation(
    doc: &Value,
    path: &str,
    method: &str,
    op: &Value,
    shared: Option<&Vec<Value>>,
) -> Value {
    let text = |k: &str| {
        op.get(k)
            .and_then(Value::as_str)
            .map(str::trim)
            .filter(|s| !s.is_empty())
    };
    let name = text("operationId").map_or_else(|| fallback_name(method, path), str::to_owned);
    let description = match (text("summary"), text("description")) {
        (Some(s), Some(d)) if s != d => format!("{s}\n\n{d}"),
        (Some(s), _) => s.to_owned(),
        (None, Some(d)) => d.to_owned(),
        (None, None) => format!("{} {path}", method.to_uppercase()),
    };
    // (name, in) → parameter; the operation's own replace the path item's.
    let mut params: BTreeMap<(String, String), &Value> = BTreeMap::new();
    let mut order: Vec<(String, String)> = Vec::new();
    for p in shared.into_iter().flatten().chain(
        op.get("parameters")
            .and_then(Value::as_array)
            .into_iter()
            .flatten(),
    ) {
        let p = resolve(doc, p);
        let (Some(n), Some(at)) = (
            p.get("name").and_then(Value::as_str),
            p.get("in").and_then(Value::as_str),
        ) else {
            continue;
        };
        let key = (n.to_owned(), at.to_owned());
        if params.insert(key.clone(), p).is_none() {
            order.push(key);
        }
    }
    let mut properties = Map::new();
    let mut required = Vec::new();
    for key in &order {
        let p = params[key];
        let (n, at) = (key.0.as_str(), key.1.as_str());
        // OpenAPI 3, and a Swagger 2 body parameter, give a schema; Swagger 2's other
        // parameters carry their type inline.
        let mut schema = if let Some(s) = p.get("schema") {
            s.clone()
        } else {
            let mut s = Map::new();
            for k in ["type", "format", "items", "enum", "default"] {
                if let Some(v) = p.get(k) {
                    s.insert(k.into(), v.clone());
                }
            }
            Value::Object(s)
        };
        if let (Some(d), Value::Object(s)) = (p.get("description"), &mut schema) {
            s.insert("description".into(), d.clone());
        }
        let prop = if at == "body" { "body" } else { n };
        properties.insert(prop.to_owned(), schema);
        if at == "path" || p.get("required").and_then(Value::as_bool) == Some(true) {
            required.push(Value::String(prop.to_owned()));
        }
    }
    if let Some(body) = op.get("requestBody").map(|b| resolve(doc, b))
        && let Some(Value::Object(content)) = body.get("content")
        && let Some(media) = content
            .iter()
            .find(|(t, _)| t.contains("json"))
            .or_else(|| content.iter().next())
            .map(|(_, m)| m)
    {
        let mut schema = media.get("schema").cloned().unwrap_or_else(|| json!({}));
        if let (Some(d), Value::Object(s)) = (body.get("description"), &mut schema) {
            s.entry("description").or_insert_with(|| d.clone());
        }
        properties.insert("body".into(), schema);
        if body.get("required").and_then(Value::as_bool) == Some(true) {
            required.push(Value::String("body".into()));
        }
    }
    let mut input = json!({"type": "object", "properties": properties});
    if !required.is_empty() {
        input["required"] = Value::Array(required);
    }
    let defs = definitions(doc, &input);
    let mut input = rewrite_refs(&input);
    if !defs.is_empty() {
        input["$defs"] = Value::Object(defs);
    }
    json!({
        "name": name,
        "description": description,
        "inputSchema": input,
        "method": method.to_uppercase(),
        "path": path,
    })
}

/// `<method>_<path>` with every run of other characters as one `_` (`get_pets_id`).
fn fallback_name(method: &str, path: &str) -> String {
    let mut name = method.to_owned();
    let mut gap = true;
    for c in path.chars() {
        if c.is_ascii_alphanumeric() {
            if gap {
                name.push('_');
            }
            name.push(c);
            gap = false;
        } else {
            gap = true;
        }
    }
    name
}

/// `v` with a local `$ref` into the document followed (a few hops at most).
fn resolve<'a>(doc: &'a Value, mut v: &'a Value) -> &'a Value {
    for _ in 0..MAX_REF_HOPS {
        match v
            .get("$ref")
            .and_then(Value::as_str)
            .and_then(|r| r.strip_prefix('#'))
            .and_then(|p| doc.pointer(p))
        {
            Some(target) => v = target,
            None => break,
        }
    }
    v
}

/// The schema name a `$ref` names under `#/components/schemas/` or `#/definitions/`.
fn schema_ref(r: &str) -> Option<&str> {
    r.strip_prefix("#/components/schemas/")
        .or_else(|| r.strip_prefix("#/definitions/"))
}

/// Every `$ref` string in `v`.
fn refs<'a>(v: &'a Value, out: &mut Vec<&'a str>) {
    match v {
        Value::Object(m) => {
            for (k, x) in m {
                match x {
                    Value::String(r) if k == "$ref" => out.push(r),
                    _ => refs(x, out),
                }
            }
        }
        Value::Array(a) => a.iter().for_each(|x| refs(x, out)),
        _ => {}
    }
}

/// The document's schemas `schema` reaches, directly or through each other, by name (refs
/// rewritten to `#/$defs/<name>`); at most [`MAX_DEFS`].
fn definitions(doc: &Value, schema: &Value) -> Map<String, Value> {
    let mut todo = Vec::new();
    refs(schema, &mut todo);
    let mut seen = BTreeSet::new();
    let mut defs = Map::new();
    while let Some(r) = todo.pop() {
        let Some(name) = schema_ref(r) else { continue };
        if defs.len() >= MAX_DEFS || !seen.insert(name.to_owned()) {
            continue;
        }
        let Some(target) = r.strip_prefix('#').and_then(|p| doc.pointer(p)) else {
            continue;
        };
        refs(target, &mut todo);
        // The `$defs` key is the pointer token unescaped, so `#/$defs/<token>` finds it.
        defs.insert(unescape(name), rewrite_refs(target));
    }
    defs
}

/// `v` with `$ref`s to the document's schemas pointed at the tool's own `$defs`.
fn rewrite_refs(v: &Value) -> Value {
    match v {
        Value::Object(m) => Value::Object(
            m.iter()
                .map(|(k, x)| {
                    let x = match x {
                        Value::String(r) if k == "$ref" => schema_ref(r).map_or_else(
                            || x.clone(),
                            |name| Value::String(format!("#/$defs/{name}")),
                        ),
                        _ => rewrite_refs(x),
                    };
                    (k.clone(), x)
                })
                .collect(),
        ),
        Value::Array(a) => Value::Array(a.iter().map(rewrite_refs).collect()),
        other => other.clone(),
    }
}

/// A JSON pointer token unescaped (`~1` → `/`, `~0` → `~`).
fn unescape(token: &str) -> String {
    token.replace("~1", "/").replace("~0", "~")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_openapi_3_document_gives_one_tool_per_operation() {
        let doc = json!({
            "openapi": "3.1.0",
            "paths": {
                "/pets/{id}": {
                    "parameters": [
                        {"name": "id", "in": "path", "schema": {"type": "string"}},
                        {"name": "verbose", "in": "query", "schema": {"type": "boolean"}},
                    ],
                    "get": {
                        "operationId": "getPet",
                        "summary": "Get a pet",
                        "description": "Returns one pet.",
                        "parameters": [{"$ref": "#/components/parameters/Verbose"}],
                    },
                    "put": {
                        "requestBody": {"$ref": "#/components/requestBodies/PetBody"},
                    },
                },
                "/health": {"get": {"summary": "Health"}, "x-note": "not an operation"},
            },
            "components": {
                "parameters": {"Verbose": {"name": "verbose", "in": "query", "required": true,
                    "description": "Say more", "schema": {"type": "boolean"}}},
                "requestBodies": {"PetBody": {"required": true, "description": "The pet",
                    "content": {"text/plain": {"schema": {"type": "string"}},
                        "application/json": {"schema": {"$ref": "#/components/schemas/Pet"}}}}},
                "schemas": {
                    "Pet": {"type": "object", "properties": {"tag": {"$ref": "#/components/schemas/Tag"}}},
                    "Tag": {"type": "string"},
                    "Unused": {"type": "integer"},
                },
            },
        });
        assert!(is_openapi(&doc));
        let ops = operations(&doc);
        let names: Vec<&str> = ops.iter().filter_map(|o| o["name"].as_str()).collect();
        // Paths by name (`/health` before `/pets/{id}`), then methods in their order.
        assert_eq!(names, ["get_health", "getPet", "put_pets_id"]);
        assert_eq!(ops[0]["description"], "Health");
        assert_eq!(
            ops[0]["inputSchema"],
            json!({"type": "object", "properties": {}})
        );
        // The operation's `verbose` replaces the path item's; `id` is required as a path one.
        assert_eq!(ops[1]["description"], "Get a pet\n\nReturns one pet.");
        assert_eq!(
            ops[1]["inputSchema"],
            json!({"type": "object", "properties": {
                "id": {"type": "string"},
                "verbose": {"type": "boolean", "description": "Say more"}},
                "required": ["id", "verbose"]})
        );
        assert_eq!(
            (ops[1]["method"].as_str(), ops[1]["path"].as_str()),
            (Some("GET"), Some("/pets/{id}"))
        );
        // No summary: the method and path describe it; the JSON body's schema, its reachable
        // definitions copied in (not `Unused`), refs pointed at them.
        assert_eq!(ops[2]["description"], "PUT /pets/{id}");
        assert_eq!(
            ops[2]["inputSchema"],
            json!({"type": "object", "properties": {
                "id": {"type": "string"},
                "verbose": {"type": "boolean"},
                "body": {"$ref": "#/$defs/Pet", "description": "The pet"}},
                "required": ["id", "body"],
                "$defs": {
                    "Pet": {"type": "object", "properties": {"tag": {"$ref": "#/$defs/Tag"}}},
                    "Tag": {"type": "string"}}})
        );
    }

    #[test]
    fn a_swagger_2_document_keeps_inline_types_and_body_parameters() {
        let doc = json!({
            "swagger": "2.0",
            "paths": {"/orders": {"post": {
                "operationId": "createOrder",
                "parameters": [
                    {"name": "dryRun", "in": "query", "type": "boolean", "description": "Check only"},
                    {"name": "order", "in": "body", "required": true,
                        "schema": {"$ref": "#/definitions/Order"}},
                ],
            }}},
            "definitions": {"Order": {"type": "object", "properties": {"qty": {"type": "integer"}}}},
        });
        let ops = operations(&doc);
        assert_eq!(ops.len(), 1);
        assert_eq!(
            ops[0]["inputSchema"],
            json!({"type": "object", "properties": {
                "dryRun": {"type": "boolean", "description": "Check only"},
                "body": {"$ref": "#/$defs/Order"}},
                "required": ["body"],
                "$defs": {"Order": {"type": "object", "properties": {"qty": {"type": "integer"}}}}})
        );
        // A document without a version key or paths is not OpenAPI.
        assert!(!is_openapi(&json!({"paths": {}})));
        assert!(!is_openapi(&json!({"openapi": "3.0.0"})));
        assert_eq!(fallback_name("delete", "/a/{b}/c-d"), "delete_a_b_c_d");
    }
}
