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

/// Folders whose code is not the product's: tests, their doubles and data, examples, benchmarks.
/// A file under one of them (at any depth below the root) is test code.
pub const TEST_DIRS: &[&str] = &[
    "test",
    "tests",
    "__tests__",
    "spec",
    "specs",
    "__mocks__",
    "mocks",
    "__fixtures__",
    "fixtures",
    "test-utils",
    "test_utils",
    "testing",
    "e2e",
    "integration-tests",
    "examples",
    "example",
    "benchmarks",
    "bench",
];

/// File-name parts that mark test code: `x.test.ts`, `x.spec.js`, `x.mock.ts`, `x.stories.tsx`,
/// `x.fixture.ts`, `x.bench.ts` (a part between dots, before the extension).
pub const TEST_PARTS: &[&str] = &[
    "test", "tests", "spec", "mock", "mocks", "fixture", "fixtures", "stories", "bench", "e2e",
];

/// Whether a module (its path relative to the codebase root, `/`-separated) is test code by
/// [`TEST_DIRS`] and [`TEST_PARTS`]: a test file, a test double, a fixture, an example or a
/// benchmark. The product's tools are what ships; a registry test that defines 44 mock tools is
/// not 44 tools.
pub fn is_test_code(rel: &str) -> bool {
    let mut segments: Vec<&str> = rel.split('/').collect();
    let Some(file) = segments.pop() else {
        return false;
    };
    if segments
        .iter()
        .any(|d| TEST_DIRS.contains(&d.to_ascii_lowercase().as_str()))
    {
        return true;
    }
    let parts: Vec<String> = file.split('.').map(str::to_ascii_lowercase).collect();
    // The first part is the name and the last the extension; what lies between marks the kind.
    let inner = parts.len().saturating_sub(1);
    parts[..inner]
        .iter()
        .skip(1)
        .any(|p| TEST_PARTS.contains(&p.as_str()))
        || matches!(
            parts[0].as_str(),
            "test-utils" | "test_utils" | "testutils" | "setuptests"
        )
}

/// What `read_codebase` read.
#[derive(Debug, Clone, Default)]
pub struct Codebase {
    /// The modules read, by path.
    pub modules: Vec<CodeModule>,
    /// Code files left out as test code ([`is_test_code`]; kept with `include_tests`).
    pub test_files_left_out: usize,
}

/// Reads the modules under `root` (at most `limits.max_files`, each cut at `max_file_bytes`),
/// leaving out test code unless `include_tests`. An import of a left-out module resolves to
/// nothing, as an import of a package does.
///
/// # Errors
/// `root` is not a folder.
pub fn read_codebase(root: &Path, limits: &Limits, include_tests: bool) -> Result<Codebase, Error> {
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
    let rel = |p: &Path| crate::walk::rel(root, p);
    let before = files.len();
    if !include_tests {
        files.retain(|p| !is_test_code(&rel(p)));
    }
    let test_files_left_out = before - files.len();
    let known: BTreeSet<String> = files.iter().map(|p| rel(p)).collect();
    let mut modules: Vec<CodeModule> = files
        .par_iter()
        .filter_map(|p| {
            let TextFile::Text { text, .. } =
                read::read_text(p, limits.max_file_bytes, read::FILE_FLAG)
            else {
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
    Ok(Codebase {
        modules,
        test_files_left_out,
    })
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

    #[test]
    fn test_code_is_recognized_by_folder_and_by_name_part() {
        for p in [
            "packages/core/src/tools/tool-registry.test.ts",
            "src/tools/tool-registry.test.js",
            "src/ui/App.spec.tsx",
            "src/__tests__/a.ts",
            "src/__mocks__/fs.ts",
            "packages/core/test-utils/mock-tool.ts",
            "src/test-utils.ts",
            "examples/weather/tool.ts",
            "integration-tests/run.ts",
            "src/Button.stories.tsx",
            "src/api.mock.ts",
            "test/setup.js",
        ] {
            assert!(is_test_code(p), "{p} is test code");
        }
        for p in [
            "packages/core/src/tools/tool-registry.ts",
            "src/testing-library-free.ts",
            "src/latest.ts",
            "src/contest/entry.ts",
            "src/tools/test.ts",
            "src/spec-parser.ts",
            "dist/src/tools/shell.js",
        ] {
            assert!(!is_test_code(p), "{p} is product code");
        }
    }
}
