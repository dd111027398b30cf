//! A routed bundle in the shapes agent hosts take: Anthropic `tools`, OpenAI chat-completions
//! `tools`, Gemini `functionDeclarations`, an MCP `tools/list` result, and a folder of `SKILL.md`
//! files.
//!
//! Each skill becomes one tool named after it whose single argument is the task; calling it means
//! "load this skill's instructions for this task" (the gateway's `get_skill`). Names are made
//! valid for every host (`[A-Za-z][A-Za-z0-9_-]{0,63}`, unique within the bundle); descriptions
//! carry the skill's description and its place in the plan.

use std::{
    collections::HashSet,
    path::{Path, PathBuf},
};

use serde::{Deserialize, Serialize};

use skg_artifact::Staged;

use crate::{Bundle, Error, Index, Reason, Result};

/// Output shapes of a bundle.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "lowercase")]
pub enum Format {
    /// skg's own bundle (plan, reasons, tokens).
    #[default]
    Bundle,
    /// Anthropic Messages API `tools`.
    Anthropic,
    /// OpenAI chat-completions `tools`.
    Openai,
    /// Gemini `tools: [{functionDeclarations}]`.
    Gemini,
    /// MCP `tools/list` result.
    Mcp,
}

impl Format {
    /// Every format, for help texts and schemas.
    pub const ALL: [Format; 5] = [
        Format::Bundle,
        Format::Anthropic,
        Format::Openai,
        Format::Gemini,
        Format::Mcp,
    ];

    /// Its name on the wire.
    pub fn as_str(self) -> &'static str {
        match self {
            Format::Bundle => "bundle",
            Format::Anthropic => "anthropic",
            Format::Openai => "openai",
            Format::Gemini => "gemini",
            Format::Mcp => "mcp",
        }
    }
}

/// Longest tool description written (hosts differ; 1024 characters fits all of them).
pub const MAX_DESCRIPTION: usize = 1024;

/// One skill of a bundle as a tool, host-neutral.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ToolSpec {
    /// Valid, unique tool name.
    pub name: String,
    /// The skill's id.
    pub skill_id: String,
    /// The skill's name as written.
    pub title: String,
    /// Description with the skill's place in the plan.
    pub description: String,
}

/// Makes `name` a tool name every host accepts: `[A-Za-z0-9_-]`, starting with a letter, at most
/// 64 characters, distinct from the names in `taken` (a `_2`, `_3`, … suffix otherwise).
pub fn tool_name<H: std::hash::BuildHasher>(name: &str, taken: &mut HashSet<String, H>) -> String {
    let mut base: String = name
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '_' || c == '-' {
                c
            } else {
                '_'
            }
        })
        .collect();
    base = base.trim_matches('_').to_owned();
    if !base.starts_with(|c: char| c.is_ascii_alphabetic()) {
        base.insert_str(0, "skill_");
    }
    base.truncate(64);
    let mut candidate = base.clone();
    let mut n = 2;
    while !taken.insert(candidate.clone()) {
        let suffix = format!("_{n}");
        let mut b = base.clone();
        b.truncate(64 - suffix.len());
        candidate = format!("{b}{suffix}");
        n += 1;
    }
    candidate
}

fn clip(text: &str, max: usize) -> String {
    if text.chars().count() <= max {
        return text.to_owned();
    }
    let mut s: String = text.chars().take(max - 1).collect();
    s.push('…');
    s
}

/// The bundle's skills as tools, in plan order.
pub fn tool_specs(index: &Index, bundle: &Bundle) -> Vec<ToolSpec> {
    let mut taken = HashSet::new();
    let n = bundle.plan.len();
    let names: Vec<String> = bundle
        .plan
        .iter()
        .map(|s| tool_name(&index.skills[s.skill as usize].name, &mut taken))
        .collect();
    let name_of = |id: &str| -> String {
        bundle
            .plan
            .iter()
            .position(|s| s.id == id)
            .map_or_else(|| id.to_owned(), |i| names[i].clone())
    };
    bundle
        .plan
        .iter()
        .enumerate()
        .map(|(i, s)| {
            let e = &index.skills[s.skill as usize];
            let role = match &s.reason {
                Reason::Retrieved { rank } => format!("retrieved #{rank}"),
                Reason::Dependency { of } => format!("a dependency of {}", name_of(of)),
                Reason::Complement { of } => format!("complements {}", name_of(of)),
            };
            let deps: Vec<String> = e
                .depends_on
                .iter()
                .filter(|d| bundle.plan.iter().any(|p| p.id == d.as_str()))
                .map(|d| name_of(d.as_str()))
                .collect();
            let mut tail = format!(" [skill {} of {n} in the plan, {role}", i + 1);
            if !deps.is_empty() {
                tail.push_str("; use after ");
                tail.push_str(&deps.join(", "));
            }
            tail.push(']');
            let room = MAX_DESCRIPTION.saturating_sub(tail.chars().count()).max(16);
            ToolSpec {
                name: names[i].clone(),
                skill_id: s.id.clone(),
                title: e.name.clone(),
                description: format!("{}{tail}", clip(e.description.trim(), room)),
            }
        })
        .collect()
}

fn task_schema(upper: bool) -> serde_json::Value {
    let (obj, string) = if upper {
        ("OBJECT", "STRING")
    } else {
        ("object", "string")
    };
    serde_json::json!({
        "type": obj,
        "properties": {"task": {"type": string, "description": "The task to do with this skill; the call returns the skill's instructions."}},
        "required": ["task"],
    })
}

/// The bundle's tools in a host's shape (`Format::Bundle` gives the host-neutral specs).
///
/// A `SKILL.md` package becomes a tool whose one argument is the task (calling it loads the
/// skill's instructions). A tool-catalog entry is offered as itself — its description and its
/// own input schema (an empty object schema when the catalog gave none; MCP also keeps its
/// `title`, `outputSchema`, `annotations` and `_meta`, and gets an OpenAPI operation's method,
/// path, server and parameter places under `_meta["skg/openapi"]`) — so the host can call the
/// real tool; its name is
/// its own unless a host would refuse it or another tool of the bundle has it ([`tool_name`]).
/// A tool of an index written before entries were kept is offered as a package is.
pub fn tools(index: &Index, bundle: &Bundle, format: Format) -> Result<serde_json::Value> {
    let specs = tool_specs(index, bundle);
    let mut list = Vec::with_capacity(specs.len());
    for (t, step) in specs.iter().zip(&bundle.plan) {
        let own = if index.skills[step.skill as usize].kind == skg_model::SkillKind::Tool {
            index.tool_entry(step.skill)?
        } else {
            None
        };
        list.push(match own {
            Some(entry) if format != Format::Bundle => own_tool(t, &entry, format),
            _ => package_tool(t, format),
        });
    }
    Ok(match format {
        Format::Gemini => serde_json::json!([{"functionDeclarations": list}]),
        Format::Mcp => serde_json::json!({"tools": list}),
        _ => serde_json::Value::Array(list),
    })
}

/// A `SKILL.md` package as a tool of `format`: one `task` argument.
fn package_tool(t: &ToolSpec, format: Format) -> serde_json::Value {
    match format {
        Format::Bundle => serde_json::to_value(t).unwrap_or_default(),
        Format::Anthropic => serde_json::json!({
            "name": t.name, "description": t.description, "input_schema": task_schema(false)}),
        Format::Openai => serde_json::json!({"type": "function", "function": {
            "name": t.name, "description": t.description, "parameters": task_schema(false)}}),
        Format::Gemini => serde_json::json!({
            "name": t.name, "description": t.description, "parameters": task_schema(true)}),
        Format::Mcp => serde_json::json!({
            "name": t.name, "title": t.title, "description": t.description,
            "inputSchema": task_schema(false)}),
    }
}

/// A tool's input schema as JSON Schema every host takes: Gemini's OpenAPI-subset type names
/// (`STRING`, `OBJECT`, …) in lower case wherever a schema says its type
/// ([`skg_model::for_each_schema`]: never inside `enum`, `default` or other instance data), and
/// `"type": "object"` at the root when it has none (Anthropic and MCP require it). Everything
/// else as written.
fn json_schema(schema: &serde_json::Value) -> serde_json::Value {
    const UPPER: [&str; 7] = [
        "STRING", "NUMBER", "INTEGER", "BOOLEAN", "ARRAY", "OBJECT", "NULL",
    ];
    let lower = |t: &mut serde_json::Value| {
        if let serde_json::Value::String(t) = t
            && UPPER.contains(&t.as_str())
        {
            *t = t.to_lowercase();
        }
    };
    let mut out = schema.clone();
    skg_model::for_each_schema(&mut out, &mut |m| match m.get_mut("type") {
        Some(serde_json::Value::Array(ts)) => ts.iter_mut().for_each(lower),
        Some(t) => lower(t),
        None => {}
    });
    if let serde_json::Value::Object(map) = &mut out {
        map.entry("type").or_insert_with(|| "object".into());
    }
    out
}

/// A catalog tool as itself in `format` (not `Bundle`): `t`'s name, the entry's own description
/// (cut to [`MAX_DESCRIPTION`]) and input schema; as an MCP tool also its `title`,
/// `outputSchema`, `annotations` and `_meta` (objects only), and an OpenAPI operation's method,
/// path, server and parameter places under `_meta["skg/openapi"]`.
fn own_tool(t: &ToolSpec, entry: &serde_json::Value, format: Format) -> serde_json::Value {
    let f = skg_model::tool_function(entry);
    let description = clip(
        f.get("description")
            .and_then(serde_json::Value::as_str)
            .unwrap_or("")
            .trim(),
        MAX_DESCRIPTION,
    );
    let schema = skg_model::tool_schema(entry)
        .filter(|s| s.is_object())
        .map_or_else(
            || serde_json::json!({"type": "object", "properties": {}}),
            json_schema,
        );
    match format {
        Format::Anthropic => serde_json::json!({
            "name": t.name, "description": description, "input_schema": schema}),
        Format::Openai => serde_json::json!({"type": "function", "function": {
            "name": t.name, "description": description, "parameters": schema}}),
        // The JSON Schema as written, where Gemini takes one (`parameters` holds its OpenAPI
        // subset, upper-case types).
        Format::Gemini => serde_json::json!({
            "name": t.name, "description": description, "parametersJsonSchema": schema}),
        Format::Mcp | Format::Bundle => {
            let mut tool = serde_json::json!({
                "name": t.name, "description": description, "inputSchema": schema});
            for key in ["title", "outputSchema", "annotations", "_meta"] {
                // MCP types these as objects (`title` a string); anything else is left out.
                let typed = |v: &&serde_json::Value| {
                    if key == "title" {
                        v.is_string()
                    } else {
                        v.is_object()
                    }
                };
                if let Some(v) = f.get(key).filter(typed) {
                    tool[key] = v.clone();
                }
            }
            // Where an OpenAPI operation's call goes (extract's `openapi`: method, path, server,
            // each property's place in the request), for a gateway that proxies it; under MCP's
            // `_meta`, with a prefix of ours.
            if let Some(call) = f.get("openapi").filter(|c| c.is_object()) {
                if !tool["_meta"].is_object() {
                    tool["_meta"] = serde_json::json!({});
                }
                tool["_meta"]["skg/openapi"] = call.clone();
            }
            tool
        }
    }
}

/// Writes the bundle as a folder of skills: `<dir>/<tool name>/SKILL.md` for each skill and
/// `<dir>/bundle.json` (the plan, in order). Written beside `dir` and renamed over it; an existing
/// `dir` is replaced only if it is an earlier export (holds `bundle.json`) or empty.
pub fn export(index: &Index, bundle: &Bundle, dir: &Path) -> Result<Vec<PathBuf>> {
    if dir.exists() {
        let empty = std::fs::read_dir(dir)
            .map_err(|e| Error::io(dir, e))?
            .next()
            .is_none();
        if !empty && !dir.join("bundle.json").is_file() {
            return Err(Error::Corrupt {
                path: dir.to_path_buf(),
                message: "exists and is not an skg export (no bundle.json): not replacing it"
                    .into(),
            });
        }
    }
    let staged = Staged::beside(dir)?;
    let specs = tool_specs(index, bundle);
    let mut written = Vec::new();
    {
        for (spec, s) in specs.iter().zip(&bundle.plan) {
            let text = index.markdown(s.skill)?;
            staged.create_dir(&spec.name)?;
            staged.write_file(&format!("{}/SKILL.md", spec.name), text.as_bytes())?;
            written.push(dir.join(&spec.name).join("SKILL.md"));
        }
        let plan: Vec<serde_json::Value> = specs
            .iter()
            .zip(&bundle.plan)
            .enumerate()
            .map(|(i, (t, s))| {
                serde_json::json!({"step": i + 1, "folder": t.name, "id": s.id,
                    "reason": s.reason, "tokens": s.tokens})
            })
            .collect();
        staged.write_json(
            "bundle.json",
            &serde_json::json!({
                "index_revision": index.manifest.content_hash,
                "plan": plan,
                "cycles": bundle.cycles,
                "type_errors": bundle.type_errors,
                "missing": bundle.missing,
                "tokens": bundle.tokens,
                "catalog_tokens": bundle.catalog_tokens,
            }),
        )?;
    }
    staged.publish()?;
    Ok(written)
}

#[cfg(test)]
mod schema_tests {
    use super::{Format, ToolSpec, json_schema, own_tool};

    #[test]
    fn an_mcp_tool_keeps_its_objects_and_where_an_operation_goes() {
        let t = ToolSpec {
            name: "addPet".into(),
            skill_id: "petstore:addPet".into(),
            title: "addPet".into(),
            description: String::new(),
        };
        let call = serde_json::json!({"method": "POST", "path": "/pets"});
        // An entry's own `_meta` object gains the call beside what it holds.
        let entry = serde_json::json!({"name": "addPet", "_meta": {"a/b": 1},
            "annotations": {"readOnlyHint": false}, "openapi": call});
        let tool = own_tool(&t, &entry, Format::Mcp);
        assert_eq!(
            tool["_meta"],
            serde_json::json!({"a/b": 1, "skg/openapi": call})
        );
        assert_eq!(tool["annotations"]["readOnlyHint"], false);
        // A `_meta` or `annotations` that is not an object is left out; no call, no `_meta`.
        let entry = serde_json::json!({"name": "x", "_meta": "text", "annotations": [1]});
        let tool = own_tool(&t, &entry, Format::Mcp);
        assert!(
            tool.get("_meta").is_none() && tool.get("annotations").is_none(),
            "{tool}"
        );
        // A string `_meta` beside a call is replaced by an object holding the call.
        let entry = serde_json::json!({"name": "x", "_meta": "text", "openapi": call});
        let tool = own_tool(&t, &entry, Format::Mcp);
        assert_eq!(tool["_meta"], serde_json::json!({"skg/openapi": call}));
    }

    #[test]
    fn schemas_are_offered_as_json_schema() {
        // Gemini's OpenAPI subset: upper-case types, at any depth, in lists too.
        let gemini = serde_json::json!({"type": "OBJECT", "properties": {
            "city": {"type": "STRING"},
            "days": {"type": ["INTEGER", "NULL"]},
            "type": {"type": "ARRAY", "items": {"type": "OBJECT", "properties": {}}},
            "kind": {"type": "string", "default": {"type": "Shop"}},
            "mode": {"type": "STRING", "enum": [{"type": "STRING"}], "default": {"type": "OBJECT"},
                "x-host": {"type": "NULL"}}}});
        let want = serde_json::json!({"type": "object", "properties": {
            "city": {"type": "string"},
            "days": {"type": ["integer", "null"]},
            "type": {"type": "array", "items": {"type": "object", "properties": {}}},
            "kind": {"type": "string", "default": {"type": "Shop"}},
            "mode": {"type": "string", "enum": [{"type": "STRING"}], "default": {"type": "OBJECT"},
                "x-host": {"type": "NULL"}}}});
        // Instance data keeps its values: the default object and the extension are not schemas.
        assert_eq!(json_schema(&gemini), want);
        // No root type: an object schema is said to be one; a JSON Schema passes unchanged.
        let bare = serde_json::json!({"properties": {"q": {"type": "string"}}});
        assert_eq!(json_schema(&bare)["type"], "object");
        assert_eq!(json_schema(&want), want);
    }
}
