//! JavaScript/TypeScript codebases for `skg measure --codebase`: every module's resolved
//! relative imports and its tool definitions (`skg_syntax::tool_definitions`).

use std::{
    collections::BTreeSet,
    path::{Path, PathBuf},
};

use rayon::prelude::*;
use skg_model::{CodeModule, CodeTool};
use skg_syntax::Language;

use crate::{
    Error, Limits,
    read::{self, TextFile},
};

/// Folders never entered: dependencies, VCS data, caches. (`dist/` is read: published npm
/// packages ship only their build.)
const SKIP: &[&str] = &[
    "node_modules",
    ".git",
    ".hg",
    ".svn",
    ".next",
    ".cache",
    "coverage",
];

const EXTENSIONS: &[&str] = &["js", "mjs", "cjs", "jsx", "ts", "mts", "cts", "tsx"];

fn is_code(p: &Path) -> bool {
    let Some(ext) = p.extension().and_then(|e| e.to_str()) else {
        return false;
    };
    if p.to_string_lossy().ends_with(".d.ts") || p.to_string_lossy().ends_with(".map") {
        return false;
    }
    EXTENSIONS.contains(&ext.to_ascii_lowercase().as_str())
}

/// Reads the modules under `root` (at most `limits.max_files`, each cut at `max_file_bytes`).
pub fn read_codebase(root: &Path, limits: &Limits) -> Result<Vec<CodeModule>, Error> {
    if !root.is_dir() {
        return Err(Error::InputMissing(root.to_path_buf()));
    }
    let mut files: Vec<PathBuf> = walkdir::WalkDir::new(root)
        .follow_links(false)
        .into_iter()
        .filter_entry(|e| {
            !(e.file_type().is_dir()
                && e.depth() > 0
                && SKIP.contains(&e.file_name().to_string_lossy().as_ref()))
        })
        .filter_map(Result::ok)
        .filter(|e| e.file_type().is_file() && is_code(e.path()))
        .map(|e| e.path().to_path_buf())
        .take(limits.max_files)
        .collect();
    files.sort();
    let rel = |p: &Path| {
        p.strip_prefix(root)
            .unwrap_or(p)
            .to_string_lossy()
            .replace('\\', "/")
    };
    let known: BTreeSet<String> = files.iter().map(|p| rel(p)).collect();
    let mut modules: Vec<CodeModule> = files
        .par_iter()
        .filter_map(|p| {
            let TextFile::Text { text, .. } = read::read_text(p, limits.max_file_bytes) else {
                return None;
            };
            let path = rel(p);
            let lang = Language::from_path(p)?;
            let facts = skg_syntax::analyze(lang, &text);
            let imports: BTreeSet<String> = facts
                .imports
                .iter()
                .filter_map(|i| resolve(&path, &i.specifier, &known))
                .filter(|t| *t != path)
                .collect();
            let tools = skg_syntax::tool_definitions(lang, &text)
                .into_iter()
                .map(|t| CodeTool {
                    name: t.name,
                    line: t.line,
                    rule: t.rule.to_owned(),
                })
                .collect();
            Some(CodeModule {
                path,
                imports: imports.into_iter().collect(),
                tools,
            })
        })
        .collect();
    modules.sort_by(|a, b| a.path.cmp(&b.path));
    Ok(modules)
}

/// A relative specifier of module `from` resolved to a known module path.
fn resolve(from: &str, spec: &str, known: &BTreeSet<String>) -> Option<String> {
    if !spec.starts_with("./") && !spec.starts_with("../") {
        return None;
    }
    let mut parts: Vec<&str> = from.split('/').collect();
    parts.pop();
    for seg in spec.split('/') {
        match seg {
            "." | "" => {}
            ".." => {
                parts.pop()?;
            }
            s => parts.push(s),
        }
    }
    let base = parts.join("/");
    // TypeScript sources import `./x.js` for `./x.ts`.
    let stem = base
        .strip_suffix(".js")
        .or_else(|| base.strip_suffix(".mjs"))
        .or_else(|| base.strip_suffix(".cjs"))
        .unwrap_or(&base)
        .to_owned();
    let mut candidates = vec![base.clone()];
    for ext in EXTENSIONS {
        candidates.push(format!("{stem}.{ext}"));
        candidates.push(format!("{base}/index.{ext}"));
    }
    candidates.into_iter().find(|c| known.contains(c))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn resolves_relative_specifiers() {
        let known: BTreeSet<String> = ["src/a.ts", "src/lib/index.js", "src/b.ts"]
            .iter()
            .map(|s| (*s).to_owned())
            .collect();
        assert_eq!(
            resolve("src/b.ts", "./a.js", &known).as_deref(),
            Some("src/a.ts")
        );
        assert_eq!(
            resolve("src/b.ts", "./lib", &known).as_deref(),
            Some("src/lib/index.js")
        );
        assert_eq!(resolve("src/b.ts", "../x", &known), None);
        assert_eq!(resolve("src/b.ts", "zod", &known), None);
    }
}
