//! Python facts.

use tree_sitter::Node;

use crate::{Call, Import, ImportKind, ScriptFacts, line, text, walk};

pub(crate) fn collect(root: Node<'_>, src: &[u8]) -> ScriptFacts {
    let mut facts = ScriptFacts::default();
    // Public top-level definitions are the module's exports.
    let mut c = root.walk();
    for child in root.named_children(&mut c) {
        let def = if child.kind() == "decorated_definition" {
            child.child_by_field_name("definition")
        } else {
            Some(child)
        };
        if let Some(def) = def
            && matches!(def.kind(), "function_definition" | "class_definition")
            && let Some(name) = def.child_by_field_name("name")
        {
            let name = text(name, src);
            if !name.starts_with('_') {
                facts.exports.push(name.to_owned());
            }
        }
    }
    walk(root, |node| match node.kind() {
        "import_statement" => {
            let mut c = node.walk();
            for name in node.children_by_field_name("name", &mut c) {
                let module = match name.kind() {
                    "aliased_import" => name.child_by_field_name("name").map(|n| text(n, src)),
                    _ => Some(text(name, src)),
                };
                if let Some(module) = module {
                    facts.imports.push(Import {
                        specifier: module.to_owned(),
                        kind: ImportKind::Python,
                        names: Vec::new(),
                        line: line(node),
                    });
                }
            }
        }
        "import_from_statement" => {
            let Some(module) = node.child_by_field_name("module_name") else {
                return;
            };
            let mut names = Vec::new();
            let mut c = node.walk();
            for name in node.children_by_field_name("name", &mut c) {
                let n = match name.kind() {
                    "aliased_import" => name.child_by_field_name("name").map(|n| text(n, src)),
                    _ => Some(text(name, src)),
                };
                names.extend(n.map(str::to_owned));
            }
            facts.imports.push(Import {
                specifier: text(module, src).to_owned(),
                kind: ImportKind::Python,
                names,
                line: line(node),
            });
        }
        "function_definition" | "class_definition" => {
            if let Some(name) = node.child_by_field_name("name") {
                facts.definitions.push(text(name, src).to_owned());
            }
        }
        "call" => {
            let Some(callee) = node.child_by_field_name("function") else {
                return;
            };
            match callee.kind() {
                "identifier" => facts.calls.push(Call {
                    name: text(callee, src).to_owned(),
                    receiver: None,
                    line: line(node),
                }),
                "attribute" => {
                    if let Some(attr) = callee.child_by_field_name("attribute") {
                        let receiver = callee
                            .child_by_field_name("object")
                            .filter(|o| o.kind() == "identifier")
                            .map(|o| text(o, src).to_owned());
                        facts.calls.push(Call {
                            name: text(attr, src).to_owned(),
                            receiver,
                            line: line(node),
                        });
                    }
                }
                _ => {}
            }
        }
        _ => {}
    });
    facts
}
