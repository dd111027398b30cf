//! Relations in scripts: imports of another skill's module, calls of its exported functions.

use std::collections::BTreeSet;

use skg_model::{EdgeKind, EdgeSource};
use skg_syntax::{ImportKind, Language};

use super::{
    Candidate, evidence,
    names::{NameIndex, join_rel, parent},
};
use crate::load::Loaded;

/// Extensions tried, in order, for a JS/TS import without one.
const JS_SUFFIXES: &[&str] = &[
    "",
    ".js",
    ".mjs",
    ".cjs",
    ".ts",
    ".mts",
    ".tsx",
    ".jsx",
    "/index.js",
    "/index.ts",
    "/index.mjs",
];

/// Names too generic to link two skills by a call alone.
const GENERIC_CALLS: &[&str] = &[
    "main", "init", "run", "setup", "start", "stop", "test", "print", "render", "parse", "load",
    "save", "get", "set", "update", "create", "delete", "fetch", "handle", "handler", "process",
    "execute", "build", "log", "error", "debug", "info", "warn", "format", "read", "write", "open",
    "close", "list", "help", "exit", "config", "validate", "sleep", "wait", "require", "request",
    "send", "call", "apply", "next", "done", "resolve", "reject", "callback", "default",
];

pub(crate) fn extract(index: &NameIndex, loaded: &[Loaded], i: usize, out: &mut Vec<Candidate>) {
    let l = &loaded[i];
    let reg = l.registry;
    for script in &l.scripts {
        let path = l.file_path(&script.path);
        let dir = parent(&path);
        let lang = Language::from_path(std::path::Path::new(&script.path));
        let is_py = lang == Some(Language::Python);
        let mut bound: BTreeSet<&str> = script
            .facts
            .definitions
            .iter()
            .map(String::as_str)
            .collect();
        for imp in &script.facts.imports {
            bound.extend(imp.names.iter().map(String::as_str));
            let resolved = match imp.kind {
                ImportKind::Python => resolve_python(index, loaded, i, dir, &imp.specifier),
                _ => resolve_js(index, reg, dir, &imp.specifier).map(|d| (d, true)),
            };
            if let Some((dst, by_path)) = resolved
                && dst != i
            {
                let (extractor, conf, source) = match (is_py, by_path) {
                    (false, _) => ("js-import", 1.0, EdgeSource::Extracted),
                    (true, true) => ("py-import", 1.0, EdgeSource::Extracted),
                    (true, false) => ("py-import", 0.8, EdgeSource::Inferred),
                };
                let snippet = format!(
                    "import {} ({})",
                    imp.specifier,
                    if imp.names.is_empty() {
                        "module".to_owned()
                    } else {
                        imp.names.join(", ")
                    }
                );
                out.push(Candidate {
                    src: i,
                    dst,
                    kind: EdgeKind::DependsOn,
                    evidence: evidence(extractor, conf, source, path.clone(), imp.line, &snippet),
                    unless_common: None,
                });
            }
        }
        let extractor = if is_py { "py-call" } else { "js-call" };
        let mut seen = BTreeSet::new();
        for call in &script.facts.calls {
            let name = call.name.as_str();
            if call.receiver.is_some()
                || name.len() < 4
                || bound.contains(name)
                || GENERIC_CALLS.contains(&name)
                || !seen.insert(name)
            {
                continue;
            }
            let Some(owners) = index.exports[reg].get(name) else {
                continue;
            };
            let others: Vec<usize> = owners.iter().copied().filter(|&o| o != i).collect();
            if others.len() == 1 && !owners.contains(&i) {
                out.push(Candidate {
                    src: i,
                    dst: others[0],
                    kind: EdgeKind::DependsOn,
                    evidence: evidence(
                        extractor,
                        0.6,
                        EdgeSource::Inferred,
                        path.clone(),
                        call.line,
                        &format!(
                            "{name}() is exported only by {}",
                            loaded[others[0]].skill.id
                        ),
                    ),
                    unless_common: None,
                });
            }
        }
    }
}

/// A relative JS/TS specifier → the skill owning the file it names.
fn resolve_js(index: &NameIndex, reg: usize, dir: &str, spec: &str) -> Option<usize> {
    if !spec.starts_with('.') {
        return None; // a package, not a file
    }
    let base = join_rel(dir, spec)?;
    JS_SUFFIXES
        .iter()
        .find_map(|suf| index.files[reg].get(&format!("{base}{suf}")).copied())
}

/// A Python module → the skill owning it: by path (relative import or a module file next to
/// the script), else by a module stem that exactly one other skill of the registry has.
fn resolve_python(
    index: &NameIndex,
    loaded: &[Loaded],
    i: usize,
    dir: &str,
    spec: &str,
) -> Option<(usize, bool)> {
    let reg = loaded[i].registry;
    let dots = spec.len() - spec.trim_start_matches('.').len();
    let module = &spec[dots..];
    let rel_module = module.replace('.', "/");
    let mut base_dir = dir.to_owned();
    for _ in 1..dots {
        base_dir = parent(&base_dir).to_owned();
    }
    if !rel_module.is_empty() {
        for cand in [
            format!("{rel_module}.py"),
            format!("{rel_module}/__init__.py"),
        ] {
            if let Some(p) = join_rel(&base_dir, &cand)
                && let Some(&owner) = index.files[reg].get(&p)
            {
                return Some((owner, true));
            }
        }
    }
    if dots > 0 || module.is_empty() {
        return None;
    }
    let first = module.split('.').next().unwrap_or(module);
    let owners = index.py_modules[reg].get(first)?;
    if owners.contains(&i) {
        return None; // the skill has its own module of that name
    }
    (owners.len() == 1).then(|| (owners[0], false))
}
