//! Tool catalogs: a JSON array, an MCP `tools/list` result (`{"tools": [...]}`, also under
//! `result`), or JSONL, of `{name, description, inputSchema?}`. Each tool becomes a skill whose
//! body is its description plus a parameter list, so documents and relations work unchanged.

use std::{collections::BTreeMap, fmt::Write as _, path::Path};

use serde_json::{Map, Value};
use skg_model::{Diagnostic, DiagnosticCode, FrontmatterStatus, RegistryName, Severity, SkillKind};

use crate::{
    Limits,
    frontmatter::Parsed,
    load::{Loaded, MdText, NormalizeInput, normalize},
    markdown,
    read::{self, TextFile},
};

pub(crate) fn load(
    registry: &RegistryName,
    registry_idx: usize,
    path: &Path,
    limits: &Limits,
) -> (Vec<Loaded>, Vec<Diagnostic>) {
    let file = path.file_name().map_or_else(
        || "catalog".to_owned(),
        |f| f.to_string_lossy().into_owned(),
    );
    parse(
        registry,
        registry_idx,
        &file,
        read::read_text(path, limits.max_file_bytes),
    )
}

/// A catalog file's text (as read) → tools, with diagnostics at `file:line`.
pub(crate) fn parse(
    registry: &RegistryName,
    registry_idx: usize,
    file: &str,
    read: TextFile,
) -> (Vec<Loaded>, Vec<Diagnostic>) {
    let file = file.to_owned();
    let mut diags = Vec::new();
    let diag = |line: Option<u32>, message: String| Diagnostic {
        registry: registry.clone(),
        path: file.clone(),
        line,
        severity: Severity::Error,
        code: DiagnosticCode::CatalogInvalid,
        message,
    };
    let text = match read {
        TextFile::Text { text, issues, .. } => {
            for i in issues {
                diags.push(Diagnostic {
                    registry: registry.clone(),
                    path: file.clone(),
                    line: i.line,
                    severity: i.severity,
                    code: i.code,
                    message: i.message,
                });
            }
            text
        }
        TextFile::Binary { .. } => {
            return (Vec::new(), vec![diag(None, "not text (NUL bytes)".into())]);
        }
        TextFile::Unreadable(e) => {
            return (Vec::new(), vec![diag(None, format!("cannot read: {e}"))]);
        }
    };
    // (line, tool object)
    let mut tools: Vec<(Option<u32>, Value)> = Vec::new();
    match serde_json::from_str::<Value>(&text) {
        Ok(v) => {
            let list = match v {
                Value::Array(a) => Some(a),
                Value::Object(mut o) => {
                    let inner = o.remove("result").and_then(|r| match r {
                        Value::Object(mut r) => r.remove("tools"),
                        _ => None,
                    });
                    match inner.or_else(|| o.remove("tools")) {
                        Some(Value::Array(a)) => Some(a),
                        _ => None,
                    }
                }
                _ => None,
            };
            match list {
                Some(a) => tools.extend(a.into_iter().map(|t| (None, t))),
                None => diags.push(diag(
                    None,
                    "JSON is neither a list of tools nor an object with a `tools` list".into(),
                )),
            }
        }
        Err(_) => {
            // JSONL: one tool per line; a bad line is a diagnostic, the rest still loads.
            for (n, line) in text.lines().enumerate() {
                let line_no = u32::try_from(n + 1).ok();
                if line.trim().is_empty() {
                    continue;
                }
                match serde_json::from_str::<Value>(line) {
                    Ok(v) => tools.push((line_no, v)),
                    Err(e) => diags.push(diag(line_no, format!("not a JSON object: {e}"))),
                }
            }
        }
    }
    let mut out = Vec::new();
    let mut seen: BTreeMap<String, u32> = BTreeMap::new();
    for (n, (line, tool)) in tools.into_iter().enumerate() {
        let Value::Object(obj) = tool else {
            diags.push(diag(line, format!("tool #{n} is not an object")));
            continue;
        };
        let Some(name) = obj
            .get("name")
            .and_then(Value::as_str)
            .map(str::trim)
            .filter(|s| !s.is_empty())
        else {
            diags.push(diag(line, format!("tool #{n} has no `name`; skipped")));
            continue;
        };
        let count = seen.entry(name.to_owned()).or_insert(0);
        *count += 1;
        let root = if *count == 1 {
            name.to_owned()
        } else {
            format!("{name}#{count}")
        };
        if *count > 1 {
            diags.push(Diagnostic {
                registry: registry.clone(),
                path: file.clone(),
                line,
                severity: Severity::Warning,
                code: DiagnosticCode::DuplicateSkill,
                message: format!("tool `{name}` appears {count} times; this one is `{root}`"),
            });
        }
        out.push(tool_skill(
            registry,
            registry_idx,
            &file,
            &root,
            name,
            &obj,
            line,
            &mut diags,
        ));
    }
    (out, diags)
}

#[expect(
    clippy::too_many_arguments,
    reason = "one call site; a struct would only rename the arguments"
)]
fn tool_skill(
    registry: &RegistryName,
    registry_idx: usize,
    file: &str,
    root: &str,
    name: &str,
    obj: &Map<String, Value>,
    line: Option<u32>,
    diags: &mut Vec<Diagnostic>,
) -> Loaded {
    let description = obj
        .get("description")
        .and_then(Value::as_str)
        .unwrap_or("")
        .trim()
        .to_owned();
    let mut body = format!("{description}\n");
    let schema = obj
        .get("inputSchema")
        .or_else(|| obj.get("input_schema"))
        .or_else(|| obj.get("parameters"));
    if let Some(Value::Object(s)) = schema
        && let Some(Value::Object(props)) = s.get("properties")
    {
        let required: Vec<&str> = s
            .get("required")
            .and_then(Value::as_array)
            .map(|a| a.iter().filter_map(Value::as_str).collect())
            .unwrap_or_default();
        body.push_str("\n## Parameters\n");
        for (p, spec) in props {
            let ty = spec.get("type").and_then(Value::as_str).unwrap_or("any");
            let req = if required.contains(&p.as_str()) {
                ", required"
            } else {
                ""
            };
            let d = spec
                .get("description")
                .and_then(Value::as_str)
                .unwrap_or("");
            let _ = writeln!(body, "- `{p}` ({ty}{req}): {d}");
        }
    }
    let mut map = Map::new();
    map.insert("name".into(), Value::String(name.to_owned()));
    map.insert("description".into(), Value::String(description));
    for (k, v) in obj {
        map.entry(k.clone()).or_insert_with(|| v.clone());
    }
    let parsed = Parsed {
        status: FrontmatterStatus::NotApplicable,
        map,
        key_lines: BTreeMap::new(),
        body_offset: 0,
        body_line: line.unwrap_or(1),
        issues: Vec::new(),
    };
    let outline = markdown::outline(&body);
    let hash = blake3::hash(serde_json::to_string(obj).unwrap_or_default().as_bytes())
        .to_hex()
        .to_string();
    let path = format!("{file}#{root}");
    let mut skill = normalize(NormalizeInput {
        registry,
        kind: SkillKind::Tool,
        path: &path,
        root,
        folder: root,
        parsed: &parsed,
        body: &body,
        body_outline: &outline,
        files: Vec::new(),
        scripts: Vec::new(),
        script_structures: Vec::new(),
        script_text: "",
        bytes: body.len() as u64,
        content_hash: hash,
        diags,
    });
    skill.frontmatter.json = serde_json::to_string(obj).unwrap_or_else(|_| "{}".into());
    Loaded {
        skill,
        registry: registry_idx,
        md: vec![MdText {
            path: "description".into(),
            text: body,
            outline,
            first_line: line.unwrap_or(1),
        }],
        scripts: Vec::new(),
        frontmatter: parsed.map,
        key_lines: parsed.key_lines,
    }
}
