//! Where a tool catalog entry keeps its parts. Hosts wrap the same three fields — name,
//! description, input schema — differently: MCP `tools/list` and Anthropic `tools` give them flat
//! (`inputSchema`, `input_schema`), OpenAI's chat-completions `tools` wrap them as
//! `{"type": "function", "function": {…, "parameters"}}`, Gemini's `functionDeclarations` and
//! OpenAI's Responses API give them flat with `parameters`. Extract reads entries through these
//! functions and canonicalize tells tools apart by them, so the two agree on every shape.

use serde_json::{Map, Value};

/// The object holding an entry's name, description and schema: what an OpenAI chat-completions
/// entry wraps under `function` (when it has no `name` of its own), else the entry itself.
pub fn tool_function(entry: &Value) -> &Value {
    match entry.get("function") {
        Some(f @ Value::Object(_)) if entry.get("name").is_none() => f,
        _ => entry,
    }
}

/// An entry's input schema: `inputSchema` (MCP), `input_schema` (Anthropic), `parameters`
/// (OpenAI, Gemini's OpenAPI subset) or `parametersJsonSchema` (Gemini's JSON Schema; also
/// `parameters_json_schema`) of its [`tool_function`], the first present.
pub fn tool_schema(entry: &Value) -> Option<&Value> {
    let f = tool_function(entry);
    SCHEMA_KEYS.iter().find_map(|k| f.get(*k))
}

/// Where the hosts keep a tool's input schema, in the order [`tool_schema`] looks.
const SCHEMA_KEYS: [&str; 5] = [
    "inputSchema",
    "input_schema",
    "parameters",
    "parametersJsonSchema",
    "parameters_json_schema",
];

/// Calls `f` on every schema object in `v` (a JSON Schema, or a document holding schemas), never
/// inside instance data (`enum`, `const`, `default`, `example(s)`, `x-` extensions: a `$ref` or
/// `type` there is a value); the values of a map keyed by names (`properties`, `$defs`, …) are
/// schemas, so a property called `$ref`, `type` or `enum` is one. Extract follows `$ref`s with it,
/// the index lower-cases Gemini's type names with it: both agree on what is a schema.
pub fn for_each_schema(v: &mut Value, f: &mut impl FnMut(&mut Map<String, Value>)) {
    match v {
        Value::Object(m) => {
            f(m);
            for (k, x) in m.iter_mut() {
                match x {
                    _ if is_data(k) => {}
                    Value::Object(named) if is_schema_map(k) => {
                        named.values_mut().for_each(|x| for_each_schema(x, f));
                    }
                    _ => for_each_schema(x, f),
                }
            }
        }
        Value::Array(a) => a.iter_mut().for_each(|x| for_each_schema(x, f)),
        _ => {}
    }
}

/// Keys whose values are instance data, not schemas.
fn is_data(key: &str) -> bool {
    matches!(key, "enum" | "const" | "default" | "example" | "examples") || key.starts_with("x-")
}

/// Keys whose values map names to schemas (draft-07's `dependencies` may also map a name to a
/// list of names, which holds no schema either way).
fn is_schema_map(key: &str) -> bool {
    matches!(
        key,
        "properties"
            | "patternProperties"
            | "definitions"
            | "$defs"
            | "dependentSchemas"
            | "dependencies"
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn flat_and_wrapped_entries_give_the_same_parts() {
        let schema = serde_json::json!({"type": "object", "properties": {"q": {"type": "string"}}});
        let mcp = serde_json::json!({"name": "search", "inputSchema": schema});
        let anthropic = serde_json::json!({"name": "search", "input_schema": schema});
        let openai = serde_json::json!({"type": "function",
            "function": {"name": "search", "parameters": schema}});
        let gemini = serde_json::json!({"name": "search", "parametersJsonSchema": schema});
        for entry in [&mcp, &anthropic, &openai, &gemini] {
            assert_eq!(tool_function(entry)["name"], "search", "{entry}");
            assert_eq!(tool_schema(entry), Some(&schema), "{entry}");
        }
        // A flat entry that happens to have a `function` field keeps its own parts.
        let flat = serde_json::json!({"name": "call", "function": {"name": "other"}});
        assert_eq!(tool_function(&flat)["name"], "call");
        assert_eq!(tool_schema(&flat), None);
    }

    #[test]
    fn the_walker_visits_schemas_and_skips_data() {
        let mut v = serde_json::json!({
            "type": "object",
            "properties": {
                "type": {"type": "string", "default": {"type": "d"}},
                "enum": {"type": "array", "items": {"type": "integer"}},
            },
            "x-extra": {"type": "x"},
            "anyOf": [{"type": "null"}],
            "examples": [{"type": "e"}],
        });
        let mut seen = Vec::new();
        for_each_schema(&mut v, &mut |m| {
            if let Some(Value::String(t)) = m.get("type") {
                seen.push(t.clone());
            }
        });
        seen.sort();
        // The root, two properties (named `type` and `enum`), an item and an alternative; the
        // default, extension and example objects are data.
        assert_eq!(seen, ["array", "integer", "null", "object", "string"]);
    }
}
