//! Structural fingerprints of scripts: two files that differ only in identifier names,
//! comments, string contents, whitespace or formatting get the same hash.

use crate::Language;

/// The structural fingerprint of one script.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Structure {
    /// blake3 over the normalized token stream, first 16 bytes as hex (32 characters).
    pub hash: String,
    /// How many tokens went into the hash: a measure of how much code it stands for
    /// (a one-line wrapper is a few dozen; callers decide what is too small to mean anything).
    pub tokens: u32,
}

/// The fingerprint of a script in a language with a tree-sitter grammar.
///
/// The tree is walked in order; every named node contributes its kind, except that
/// identifiers are alpha-renamed by first occurrence (`v0`, `v1`, …: consistent renaming keeps
/// `a + a` apart from `a + b`), string contents and comments are dropped, and numbers keep their
/// text. Anonymous nodes (operators, keywords, punctuation) contribute their text, so `a + b` and
/// `a - b` differ; `;` and `,` separators are skipped.
pub fn structure(language: Language, source: &str) -> Structure {
    structure_within(language, source, crate::DEFAULT_PARSE_BUDGET)
}

/// [`structure`] with a time budget for the parse; over it, the [`plain_structure`] of the text.
pub fn structure_within(
    language: Language,
    source: &str,
    budget: std::time::Duration,
) -> Structure {
    match crate::parse(language, source, budget) {
        Ok(tree) => of_tree(&tree, source),
        Err(_) => plain_structure(source),
    }
}

/// The fingerprint of `source` from its parsed `tree`.
pub(crate) fn of_tree(tree: &tree_sitter::Tree, source: &str) -> Structure {
    let src = source.as_bytes();
    let mut names: Vec<&str> = Vec::new();
    let mut hasher = blake3::Hasher::new();
    let mut tokens = 0u32;
    let mut cursor = tree.root_node().walk();
    'walk: loop {
        let node = cursor.node();
        let kind = node.kind();
        let mut descend = true;
        if node.is_extra() || kind.contains("comment") {
            descend = false;
        } else if kind.contains("string") || kind == "template_string" {
            emit(&mut hasher, &mut tokens, "str");
            descend = false;
        } else if is_identifier(kind) {
            let name = node.utf8_text(src).unwrap_or("");
            let ix = names.iter().position(|n| *n == name).unwrap_or_else(|| {
                names.push(name);
                names.len() - 1
            });
            emit(&mut hasher, &mut tokens, &format!("v{ix}"));
            descend = false;
        } else if kind == "number" || kind == "integer" || kind == "float" {
            emit(&mut hasher, &mut tokens, node.utf8_text(src).unwrap_or("0"));
            descend = false;
        } else if node.child_count() == 0 {
            // Statement and list separators carry no structure (`;` is optional in JS).
            if node.is_named() || !matches!(kind, ";" | ",") {
                emit(&mut hasher, &mut tokens, kind);
            }
        } else if node.is_named() {
            emit(&mut hasher, &mut tokens, kind);
        }
        if descend && cursor.goto_first_child() {
            continue;
        }
        loop {
            if cursor.goto_next_sibling() {
                break;
            }
            if !cursor.goto_parent() {
                break 'walk;
            }
        }
    }
    finish(&hasher, tokens)
}

/// The fingerprint of a script without a grammar (shell, Ruby, …): comment lines (`#`, `//`)
/// dropped, every run of whitespace collapsed, then hashed; `tokens` counts words.
pub fn plain_structure(source: &str) -> Structure {
    let mut hasher = blake3::Hasher::new();
    let mut tokens = 0u32;
    for line in source.lines() {
        let t = line.trim();
        if t.is_empty() || (t.starts_with('#') && !t.starts_with("#!")) || t.starts_with("//") {
            continue;
        }
        for word in t.split_whitespace() {
            emit(&mut hasher, &mut tokens, word);
        }
    }
    finish(&hasher, tokens)
}

fn is_identifier(kind: &str) -> bool {
    matches!(
        kind,
        "identifier"
            | "property_identifier"
            | "shorthand_property_identifier"
            | "shorthand_property_identifier_pattern"
            | "type_identifier"
            | "private_property_identifier"
            | "statement_identifier"
    )
}

fn emit(h: &mut blake3::Hasher, tokens: &mut u32, token: &str) {
    h.update(token.as_bytes());
    h.update(&[0]);
    *tokens = tokens.saturating_add(1);
}

fn finish(h: &blake3::Hasher, tokens: u32) -> Structure {
    let digest = h.finalize();
    let mut hash = String::with_capacity(32);
    for b in &digest.as_bytes()[..16] {
        use std::fmt::Write as _;
        let _ = write!(hash, "{b:02x}");
    }
    Structure { hash, tokens }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn renaming_comments_and_formatting_do_not_change_the_hash() {
        let a = "function parseArgs(argv) {\n  return argv.slice(2);\n}";
        let b = "// parse\nfunction parse_arguments( args ){ return args.slice(2) }\n";
        assert_eq!(
            structure(Language::JavaScript, a),
            structure(Language::JavaScript, b)
        );
    }

    #[test]
    fn different_structure_or_numbers_change_the_hash() {
        let a = "function f(x) { return x.slice(2); }";
        let b = "function f(x) { return x.slice(3); }";
        let c = "function f(x, y) { return x.slice(y); }";
        let ha = structure(Language::JavaScript, a);
        assert_ne!(ha, structure(Language::JavaScript, b));
        assert_ne!(ha, structure(Language::JavaScript, c));
    }

    #[test]
    fn consistent_renaming_keeps_aliasing_apart() {
        let same = "def f(a, b):\n    return a + a\n";
        let diff = "def f(a, b):\n    return a + b\n";
        assert_ne!(
            structure(Language::Python, same),
            structure(Language::Python, diff)
        );
        let renamed = "def g(x, y):\n    # doubled\n    return x + x\n";
        assert_eq!(
            structure(Language::Python, same),
            structure(Language::Python, renamed)
        );
    }

    #[test]
    fn string_contents_are_ignored() {
        let a = "print('hello')";
        let b = "print(\"goodbye, world\")";
        assert_eq!(
            structure(Language::Python, a),
            structure(Language::Python, b)
        );
    }

    #[test]
    fn plain_structure_ignores_comments_and_spacing() {
        let a = "#!/bin/sh\n# fetch\ncurl -s  \"$URL\" | jq .\n";
        let b = "#!/bin/sh\ncurl -s \"$URL\"   | jq .\n\n# done\n";
        assert_eq!(plain_structure(a), plain_structure(b));
        assert_eq!(plain_structure(a).tokens, 7); // #!/bin/sh curl -s "$URL" | jq .
    }
}
