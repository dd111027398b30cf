//! JavaScript / TypeScript facts (the two grammars share the node kinds used here).

use tree_sitter::Node;

use crate::{Call, Import, ImportKind, ScriptFacts, line, text, walk};

pub(crate) fn collect(root: Node<'_>, src: &[u8]) -> ScriptFacts {
    let mut facts = ScriptFacts::default();
    walk(root, |node| match node.kind() {
        "import_statement" => {
            if let Some(source) = node.child_by_field_name("source") {
                facts.imports.push(Import {
                    specifier: string_value(source, src),
                    kind: ImportKind::Static,
                    names: imported_names(node, src),
                    line: line(node),
                });
            }
        }
        "export_statement" => export_statement(node, src, &mut facts),
        "call_expression" => call_expression(node, src, &mut facts),
        "function_declaration" | "generator_function_declaration" | "class_declaration" => {
            if let Some(name) = node.child_by_field_name("name") {
                facts.definitions.push(text(name, src).to_owned());
            }
        }
        "variable_declarator" => {
            // `const f = () => …` / `const f = function …` define functions too.
            if let (Some(name), Some(value)) = (
                node.child_by_field_name("name"),
                node.child_by_field_name("value"),
            ) && matches!(
                value.kind(),
                "arrow_function" | "function_expression" | "function"
            ) && name.kind() == "identifier"
            {
                facts.definitions.push(text(name, src).to_owned());
            }
        }
        "assignment_expression" => commonjs_export(node, src, &mut facts),
        _ => {}
    });
    facts
}

/// The value of a string literal node, without quotes.
fn string_value(node: Node<'_>, src: &[u8]) -> String {
    let raw = text(node, src);
    let trimmed = raw
        .strip_prefix(['"', '\'', '`'])
        .and_then(|s| s.strip_suffix(['"', '\'', '`']))
        .unwrap_or(raw);
    trimmed.to_owned()
}

/// Local names bound by an import statement.
fn imported_names(stmt: Node<'_>, src: &[u8]) -> Vec<String> {
    let mut names = Vec::new();
    walk(stmt, |n| match n.kind() {
        "import_specifier" => {
            if let Some(name) = n.child_by_field_name("name") {
                names.push(text(name, src).to_owned());
            }
        }
        "import_clause" => {
            // default import: `import foo from "x"`
            let mut c = n.walk();
            for child in n.children(&mut c) {
                if child.kind() == "identifier" {
                    names.push(text(child, src).to_owned());
                }
            }
        }
        "namespace_import" => {
            let mut c = n.walk();
            for child in n.children(&mut c) {
                if child.kind() == "identifier" {
                    names.push(text(child, src).to_owned());
                }
            }
        }
        _ => {}
    });
    names
}

fn export_statement(node: Node<'_>, src: &[u8], facts: &mut ScriptFacts) {
    if let Some(source) = node.child_by_field_name("source") {
        // `export * from "x"` / `export { a } from "x"` re-export another module.
        facts.imports.push(Import {
            specifier: string_value(source, src),
            kind: ImportKind::Static,
            names: Vec::new(),
            line: line(node),
        });
    }
    if let Some(decl) = node.child_by_field_name("declaration") {
        match decl.kind() {
            "lexical_declaration" | "variable_declaration" => {
                let mut c = decl.walk();
                for d in decl.children(&mut c) {
                    if d.kind() == "variable_declarator"
                        && let Some(name) = d.child_by_field_name("name")
                    {
                        facts.exports.push(text(name, src).to_owned());
                    }
                }
            }
            _ => {
                if let Some(name) = decl.child_by_field_name("name") {
                    facts.exports.push(text(name, src).to_owned());
                }
            }
        }
    }
    let mut c = node.walk();
    for child in node.children(&mut c) {
        if child.kind() == "export_clause" {
            let mut cc = child.walk();
            for spec in child.children(&mut cc) {
                if spec.kind() == "export_specifier" {
                    let exported = spec
                        .child_by_field_name("alias")
                        .or_else(|| spec.child_by_field_name("name"));
                    if let Some(n) = exported {
                        facts.exports.push(text(n, src).to_owned());
                    }
                }
            }
        }
    }
}

fn call_expression(node: Node<'_>, src: &[u8], facts: &mut ScriptFacts) {
    let Some(callee) = node.child_by_field_name("function") else {
        return;
    };
    let first_string_arg = || {
        let args = node.child_by_field_name("arguments")?;
        let mut c = args.walk();
        let first = args.named_children(&mut c).next()?;
        matches!(first.kind(), "string" | "template_string").then(|| string_value(first, src))
    };
    match callee.kind() {
        "import" => {
            if let Some(spec) = first_string_arg() {
                facts.imports.push(Import {
                    specifier: spec,
                    kind: ImportKind::Dynamic,
                    names: Vec::new(),
                    line: line(node),
                });
            }
        }
        "identifier" if text(callee, src) == "require" => {
            if let Some(spec) = first_string_arg() {
                facts.imports.push(Import {
                    specifier: spec,
                    kind: ImportKind::Require,
                    names: required_names(node, src),
                    line: line(node),
                });
            }
        }
        "identifier" => facts.calls.push(Call {
            name: text(callee, src).to_owned(),
            receiver: None,
            line: line(node),
        }),
        "member_expression" => {
            if let Some(prop) = callee.child_by_field_name("property") {
                let receiver = callee
                    .child_by_field_name("object")
                    .filter(|o| o.kind() == "identifier")
                    .map(|o| text(o, src).to_owned());
                facts.calls.push(Call {
                    name: text(prop, src).to_owned(),
                    receiver,
                    line: line(node),
                });
            }
        }
        _ => {}
    }
}

/// Names bound by `const { a, b } = require("x")` or `const x = require("x")`.
fn required_names(call: Node<'_>, src: &[u8]) -> Vec<String> {
    let Some(parent) = call.parent().filter(|p| p.kind() == "variable_declarator") else {
        return Vec::new();
    };
    let Some(pattern) = parent.child_by_field_name("name") else {
        return Vec::new();
    };
    let mut names = Vec::new();
    match pattern.kind() {
        "identifier" => names.push(text(pattern, src).to_owned()),
        "object_pattern" => walk(pattern, |n| {
            if matches!(n.kind(), "shorthand_property_identifier_pattern") {
                names.push(text(n, src).to_owned());
            } else if n.kind() == "pair_pattern"
                && let Some(v) = n.child_by_field_name("value")
                && v.kind() == "identifier"
            {
                names.push(text(v, src).to_owned());
            }
        }),
        _ => {}
    }
    names
}

/// `module.exports = { a, b }`, `module.exports.a = …`, `exports.a = …`.
fn commonjs_export(node: Node<'_>, src: &[u8], facts: &mut ScriptFacts) {
    let Some(left) = node.child_by_field_name("left") else {
        return;
    };
    if left.kind() != "member_expression" {
        return;
    }
    let left_text = text(left, src);
    if left_text == "module.exports" {
        if let Some(right) = node.child_by_field_name("right") {
            match right.kind() {
                "object" => {
                    let mut c = right.walk();
                    for prop in right.named_children(&mut c) {
                        match prop.kind() {
                            "shorthand_property_identifier" => {
                                facts.exports.push(text(prop, src).to_owned());
                            }
                            "pair" | "method_definition" => {
                                let key = prop
                                    .child_by_field_name("key")
                                    .or_else(|| prop.child_by_field_name("name"));
                                if let Some(k) = key {
                                    facts.exports.push(string_value(k, src));
                                }
                            }
                            _ => {}
                        }
                    }
                }
                "identifier" => facts.exports.push(text(right, src).to_owned()),
                _ => {}
            }
        }
    } else if let Some(rest) = left_text
        .strip_prefix("module.exports.")
        .or_else(|| left_text.strip_prefix("exports."))
        && !rest.contains('.')
    {
        facts.exports.push(rest.to_owned());
    }
}
