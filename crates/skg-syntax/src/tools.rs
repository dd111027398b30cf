//! Tool definitions in JavaScript / TypeScript: what an agent tool looks like in code.
//!
//! A definition is recognised when it is
//! 1. **registered by a call** — `server.tool("name", …)`, `registerTool("name", …)`,
//!    `server.registerTool(…)`, `addTool(…)`, `defineTool(…)`, `createTool(…)`: the name is the
//!    first argument when it is a string, or a constant of the file bound to a string
//!    (`const name = "echo"; server.registerTool(name, …)`), or another expression (its text),
//!    else the `name` property of the first argument object;
//! 2. **an AI-SDK style `tool({ … })` call** — named by the variable it is assigned to
//!    (`const weather = tool({…})`) or the object key it is stored under (`{ weather: tool({…}) }`);
//! 3. **a tool-shaped object literal** — a string `name` property together with a handler
//!    (`execute`, `handler`, `run`, `invoke`, `call`, `func`) or a schema (`inputSchema`,
//!    `input_schema`, `parameters`);
//! 4. **a tool class** — a class whose superclass name ends in `Tool` (`StructuredTool`,
//!    `BaseTool`, …), named by the class.

use tree_sitter::Node;

use crate::{Language, line, text, walk};

/// One tool definition.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct ToolDef {
    /// The tool's name.
    pub name: String,
    /// 1-based line of the definition.
    pub line: u32,
    /// Which rule recognised it: `registered`, `tool-call`, `object`, `class`.
    pub rule: &'static str,
}

const REGISTER: &[&str] = &[
    "tool",
    "registerTool",
    "addTool",
    "defineTool",
    "createTool",
];
const HANDLERS: &[&str] = &[
    "execute",
    "handler",
    "run",
    "invoke",
    "call",
    "func",
    "inputSchema",
    "input_schema",
    "parameters",
];

/// Tool definitions of a JavaScript / TypeScript file (empty for Python), sorted, unique by
/// (name, line).
pub fn tool_definitions(language: Language, source: &str) -> Vec<ToolDef> {
    if language == Language::Python {
        return Vec::new();
    }
    let mut parser = tree_sitter::Parser::new();
    if parser.set_language(&language.grammar()).is_err() {
        return Vec::new();
    }
    let Some(tree) = parser.parse(source, None) else {
        return Vec::new();
    };
    let src = source.as_bytes();
    // File-level string constants, for `registerTool(name, …)`.
    let mut consts: std::collections::HashMap<String, String> = std::collections::HashMap::new();
    walk(tree.root_node(), |node| {
        if node.kind() == "variable_declarator"
            && let (Some(n), Some(v)) = (
                node.child_by_field_name("name"),
                node.child_by_field_name("value"),
            )
            && n.kind() == "identifier"
            && let Some(s) = string_value(v, src)
        {
            consts.entry(text(n, src).to_owned()).or_insert(s);
        }
    });
    let mut out = Vec::new();
    walk(tree.root_node(), |node| match node.kind() {
        "call_expression" => {
            if let Some(t) = registered(node, src, &consts) {
                out.push(t);
            }
        }
        "object" => {
            if let Some(name) = object_tool_name(node, src)
                && !inside_register_call(node, src)
            {
                out.push(ToolDef {
                    name,
                    line: line(node),
                    rule: "object",
                });
            }
        }
        "class_declaration" | "class" => {
            if let Some(t) = tool_class(node, src) {
                out.push(t);
            }
        }
        _ => {}
    });
    out.sort();
    out.dedup_by(|a, b| a.name == b.name && a.line == b.line);
    out
}

fn callee_name<'a>(call: Node<'_>, src: &'a [u8]) -> Option<&'a str> {
    let f = call.child_by_field_name("function")?;
    match f.kind() {
        "identifier" => Some(text(f, src)),
        "member_expression" => f.child_by_field_name("property").map(|p| text(p, src)),
        _ => None,
    }
}

fn first_argument(call: Node<'_>) -> Option<Node<'_>> {
    let args = call.child_by_field_name("arguments")?;
    let mut c = args.walk();
    args.named_children(&mut c).find(|n| n.kind() != "comment")
}

fn string_value(node: Node<'_>, src: &[u8]) -> Option<String> {
    if node.kind() != "string" && node.kind() != "template_string" {
        return None;
    }
    let raw = text(node, src);
    let v = raw.trim_matches(|c| c == '"' || c == '\'' || c == '`');
    (!v.is_empty() && !v.contains("${")).then(|| v.to_owned())
}

/// The string value of property `key` of an object literal.
fn property_string(obj: Node<'_>, key: &str, src: &[u8]) -> Option<String> {
    let mut c = obj.walk();
    obj.named_children(&mut c).find_map(|p| {
        (p.kind() == "pair"
            && p.child_by_field_name("key")
                .is_some_and(|k| text(k, src).trim_matches(|c| c == '"' || c == '\'') == key))
        .then(|| {
            p.child_by_field_name("value")
                .and_then(|v| string_value(v, src))
        })
        .flatten()
    })
}

fn has_property(obj: Node<'_>, keys: &[&str], src: &[u8]) -> bool {
    let mut c = obj.walk();
    obj.named_children(&mut c).any(|p| match p.kind() {
        "pair" => p
            .child_by_field_name("key")
            .is_some_and(|k| keys.contains(&text(k, src).trim_matches(|c| c == '"' || c == '\''))),
        "method_definition" => p
            .child_by_field_name("name")
            .is_some_and(|k| keys.contains(&text(k, src))),
        "shorthand_property_identifier" => keys.contains(&text(p, src)),
        _ => false,
    })
}

fn object_tool_name(obj: Node<'_>, src: &[u8]) -> Option<String> {
    let name = property_string(obj, "name", src)?;
    has_property(obj, HANDLERS, src).then_some(name)
}

fn inside_register_call(obj: Node<'_>, src: &[u8]) -> bool {
    let Some(args) = obj.parent().filter(|p| p.kind() == "arguments") else {
        return false;
    };
    args.parent().is_some_and(|call| {
        call.kind() == "call_expression"
            && callee_name(call, src).is_some_and(|n| REGISTER.contains(&n))
    })
}

fn registered(
    call: Node<'_>,
    src: &[u8],
    consts: &std::collections::HashMap<String, String>,
) -> Option<ToolDef> {
    let callee = callee_name(call, src)?;
    if !REGISTER.contains(&callee) {
        return None;
    }
    let first = first_argument(call)?;
    if let Some(name) = string_value(first, src) {
        return Some(ToolDef {
            name,
            line: line(call),
            rule: "registered",
        });
    }
    // `tool(x)` alone is too common a call to count without a string or object argument.
    if callee != "tool" && matches!(first.kind(), "identifier" | "member_expression") {
        let t = text(first, src);
        let name = consts.get(t).cloned().unwrap_or_else(|| t.to_owned());
        return Some(ToolDef {
            name,
            line: line(call),
            rule: "registered",
        });
    }
    if first.kind() == "object" {
        if let Some(name) = property_string(first, "name", src) {
            return Some(ToolDef {
                name,
                line: line(call),
                rule: "registered",
            });
        }
        if callee == "tool" {
            // AI-SDK style: named by where it is stored.
            let parent = call.parent()?;
            let name = match parent.kind() {
                "variable_declarator" => parent
                    .child_by_field_name("name")
                    .map(|n| text(n, src).to_owned()),
                "pair" => parent.child_by_field_name("key").map(|k| {
                    text(k, src)
                        .trim_matches(|c| c == '"' || c == '\'')
                        .to_owned()
                }),
                _ => None,
            }?;
            return Some(ToolDef {
                name,
                line: line(call),
                rule: "tool-call",
            });
        }
    }
    None
}

fn tool_class(class: Node<'_>, src: &[u8]) -> Option<ToolDef> {
    let name = class.child_by_field_name("name")?;
    let mut c = class.walk();
    let heritage = class
        .children(&mut c)
        .find(|n| n.kind() == "class_heritage")?;
    let sup = text(heritage, src);
    let sup = sup.trim_start_matches("extends").trim();
    let sup = sup
        .split(|c: char| !(c.is_alphanumeric() || c == '_' || c == '.'))
        .next()
        .unwrap_or("");
    let last = sup.rsplit('.').next().unwrap_or(sup);
    (last.ends_with("Tool") && last.len() > 4 || last == "Tool").then(|| ToolDef {
        name: text(name, src).to_owned(),
        line: line(class),
        rule: "class",
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn names(src: &str) -> Vec<(String, &'static str)> {
        tool_definitions(Language::TypeScript, src)
            .into_iter()
            .map(|t| (t.name, t.rule))
            .collect()
    }

    #[test]
    fn each_rule() {
        assert_eq!(
            names("server.tool('get_weather', 'Weather', {}, async () => ({}));"),
            [("get_weather".into(), "registered")]
        );
        assert_eq!(
            names("registerTool({ name: 'search', execute: async () => 1 });"),
            [("search".into(), "registered")]
        );
        assert_eq!(
            names(
                "export const weather = tool({ description: 'w', parameters: z.object({}), execute: async () => 1 });"
            ),
            [("weather".into(), "tool-call")]
        );
        assert_eq!(
            names("const tools = { add: tool({ execute: async () => 1 }) };"),
            [("add".into(), "tool-call")]
        );
        assert_eq!(
            names(
                "export const readFile = { name: 'read_file', inputSchema: {}, handler: async () => 1 };"
            ),
            [("read_file".into(), "object")]
        );
        assert_eq!(
            names("class Calculator extends StructuredTool { name = 'calc'; }"),
            [("Calculator".into(), "class")]
        );
        assert_eq!(
            names(
                "const name = 'echo'; export const r = (s) => { s.registerTool(name, {}, async () => 1); };"
            ),
            [("echo".into(), "registered")]
        );
        assert_eq!(
            names("server.registerTool(ToolName.ECHO, {}, h);"),
            [("ToolName.ECHO".into(), "registered")]
        );
    }

    #[test]
    fn look_alikes_are_not_tools() {
        assert!(names("const user = { name: 'bob', age: 3 };").is_empty());
        assert!(names("class Toolbox extends Base {}").is_empty());
        assert!(names("tool(`${x}`);").is_empty());
    }
}
