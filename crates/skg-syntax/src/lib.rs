//! Script facts from tree-sitter.
//!
//! [`analyze`] parses one JavaScript, TypeScript (or TSX) or Python file and returns what the
//! relation extractors need: the modules it imports (static `import`, `require()`, dynamic
//! `import()`, Python `import`/`from … import`), the names it exports, the functions it defines
//! and the functions it calls. Parsing never fails on bad syntax: tree-sitter recovers, and
//! [`ScriptFacts::has_errors`] says the facts may be partial. [`script_within`] gives the facts
//! and the structural fingerprint ([`structure`]) from one parse.
//!
//! This crate knows nothing about skills or registries; it is shared by the stages that look at
//! scripts (extract today, the structural hash of canonicalize later).

mod javascript;
mod language;
mod python;
mod shell;
pub mod shell_bounds;
mod structure;
mod tools;

pub use crate::{
    language::Language,
    shell::{
        Assignment, Heredoc, Redirect, ShellCommand, ShellFacts, Unread, shell_commands,
        shell_commands_within, substitution_len,
    },
    structure::{Structure, plain_structure, structure, structure_within},
    tools::{ToolDef, tool_definitions},
};

/// How a module was imported.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum ImportKind {
    /// `import … from "x"` / `export … from "x"`.
    Static,
    /// `require("x")`.
    Require,
    /// `import("x")`.
    Dynamic,
    /// Python `import x` / `from x import y` (the specifier is the dotted module, with leading
    /// dots for relative imports).
    Python,
}

/// One imported module.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Import {
    /// The module specifier as written (`./lib/util.js`, `../other/scripts/x`, `pkg.mod`).
    pub specifier: String,
    /// How it was imported.
    pub kind: ImportKind,
    /// Names bound from it (`import { a, b }`, `from x import a`), when any.
    pub names: Vec<String>,
    /// 1-based line.
    pub line: u32,
}

/// One call site.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Call {
    /// The called function's own name (`foo` for `foo()`, `bar` for `obj.bar()`).
    pub name: String,
    /// The receiver for member calls (`obj` for `obj.bar()`), when simple.
    pub receiver: Option<String>,
    /// 1-based line.
    pub line: u32,
}

/// What a script imports, exports, defines and calls.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ScriptFacts {
    /// Imported modules, in source order.
    pub imports: Vec<Import>,
    /// Exported names (JS `export`, `module.exports`, `exports.x`; Python public top-level
    /// functions and classes), sorted and unique.
    pub exports: Vec<String>,
    /// Names of functions and classes defined anywhere in the file, sorted and unique.
    pub definitions: Vec<String>,
    /// Call sites, in source order.
    pub calls: Vec<Call>,
    /// tree-sitter had to recover from syntax errors.
    pub has_errors: bool,
    /// The parse went over its time budget and was stopped: no facts.
    pub timed_out: bool,
}

/// Time one file's parse may take by default (a hostile file can make tree-sitter slow).
pub const DEFAULT_PARSE_BUDGET: std::time::Duration = std::time::Duration::from_secs(2);

/// Parses `source` as `language`, giving up after `budget`.
pub(crate) fn parse(
    language: Language,
    source: &str,
    budget: std::time::Duration,
) -> Result<tree_sitter::Tree, ParseStop> {
    parse_grammar(&language.grammar(), source, budget)
}

/// Parses `source` with `grammar`, giving up after `budget`.
pub(crate) fn parse_grammar(
    grammar: &tree_sitter::Language,
    source: &str,
    budget: std::time::Duration,
) -> Result<tree_sitter::Tree, ParseStop> {
    let mut parser = tree_sitter::Parser::new();
    if parser.set_language(grammar).is_err() {
        // The grammars are compiled in and ABI-checked by the unit tests.
        return Err(ParseStop::Failed);
    }
    let started = std::time::Instant::now();
    let mut over = false;
    let mut progress = |_: &tree_sitter::ParseState| {
        if started.elapsed() > budget {
            over = true;
            std::ops::ControlFlow::Break(())
        } else {
            std::ops::ControlFlow::Continue(())
        }
    };
    let bytes = source.as_bytes();
    let tree = parser.parse_with_options(
        &mut |i, _| bytes.get(i..).unwrap_or_default(),
        None,
        Some(tree_sitter::ParseOptions::new().progress_callback(&mut progress)),
    );
    match tree {
        Some(t) => Ok(t),
        None if over => Err(ParseStop::TimedOut),
        None => Err(ParseStop::Failed),
    }
}

/// Why [`parse`] gave no tree.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum ParseStop {
    TimedOut,
    Failed,
}

/// Parses `source` as `language` and collects its facts (within [`DEFAULT_PARSE_BUDGET`]).
pub fn analyze(language: Language, source: &str) -> ScriptFacts {
    analyze_within(language, source, DEFAULT_PARSE_BUDGET)
}

/// [`analyze`] with a time budget for the parse; over it, no facts and `timed_out`.
pub fn analyze_within(
    language: Language,
    source: &str,
    budget: std::time::Duration,
) -> ScriptFacts {
    match parse(language, source, budget) {
        Ok(tree) => facts_of(&tree, language, source),
        Err(stop) => unparsed(stop),
    }
}

/// One script read once: its facts and its structural fingerprint.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Script {
    /// What [`analyze_within`] gives.
    pub facts: ScriptFacts,
    /// What [`structure_within`] gives (the [`plain_structure`] when the parse stopped).
    pub structure: Structure,
}

/// [`analyze_within`] and [`structure_within`] from one parse (half the work of calling both; a
/// file that exhausts the budget costs it once, not twice).
pub fn script_within(language: Language, source: &str, budget: std::time::Duration) -> Script {
    match parse(language, source, budget) {
        Ok(tree) => Script {
            facts: facts_of(&tree, language, source),
            structure: structure::of_tree(&tree, source),
        },
        Err(stop) => Script {
            facts: unparsed(stop),
            structure: plain_structure(source),
        },
    }
}

fn unparsed(stop: ParseStop) -> ScriptFacts {
    ScriptFacts {
        timed_out: stop == ParseStop::TimedOut,
        ..ScriptFacts::default()
    }
}

fn facts_of(tree: &tree_sitter::Tree, language: Language, source: &str) -> ScriptFacts {
    let root = tree.root_node();
    let mut facts = match language {
        Language::JavaScript | Language::TypeScript | Language::Tsx => {
            javascript::collect(root, source.as_bytes())
        }
        Language::Python => python::collect(root, source.as_bytes()),
    };
    facts.has_errors = root.has_error();
    facts.exports.sort();
    facts.exports.dedup();
    facts.definitions.sort();
    facts.definitions.dedup();
    facts
}

/// The text of `node` in `src` (empty on invalid UTF-8).
fn text<'a>(node: tree_sitter::Node<'_>, src: &'a [u8]) -> &'a str {
    node.utf8_text(src).unwrap_or("")
}

/// 1-based line of `node`.
fn line(node: tree_sitter::Node<'_>) -> u32 {
    u32::try_from(node.start_position().row).unwrap_or(u32::MAX - 1) + 1
}

/// Visits every node of the tree depth-first without recursion (deep trees can't overflow the stack).
fn walk(root: tree_sitter::Node<'_>, mut visit: impl FnMut(tree_sitter::Node<'_>)) {
    let mut cursor = root.walk();
    loop {
        visit(cursor.node());
        if cursor.goto_first_child() {
            continue;
        }
        loop {
            if cursor.goto_next_sibling() {
                break;
            }
            if !cursor.goto_parent() {
                return;
            }
        }
    }
}

#[cfg(test)]
mod tests;
