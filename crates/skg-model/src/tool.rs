//! Where a tool catalog entry keeps its parts. Hosts wrap the same three fields — name,
//! description, input schema — differently: MCP `tools/list` and Anthropic `tools` give them flat
//! (`inputSchema`, `input_schema`), OpenAI's chat-completions `tools` wrap them as
//! `{"type": "function", "function": {…, "parameters"}}`, Gemini's `functionDeclarations` and
//! OpenAI's Responses API give them flat with `parameters`. Extract reads entries through these
//! functions and canonicalize tells tools apart by them, so the two agree on every shape.

use serde_json::Value;

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
}
