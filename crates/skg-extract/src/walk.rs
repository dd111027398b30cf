//! Finding skill packages in a registry folder, safely.
//!
//! Follows symbolic links that stay inside the registry root, reports loops and links that
//! escape it, skips hidden folders and dependency folders, stops at a file-count limit. Every
//! problem is a diagnostic; the walk itself never fails.

use std::{
    collections::BTreeMap,
    path::{Path, PathBuf},
};

use skg_model::{Diagnostic, DiagnosticCode, RegistryName, Severity};

use crate::Limits;

/// The files of one skill package.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Package {
    /// Package folder relative to the registry root (`.` for the root itself), `/`-separated.
    pub(crate) root: String,
    /// The `SKILL.md` file name as found (case variants allowed).
    pub(crate) skill_file: String,
    /// Every other file, relative to `root`, sorted.
    pub(crate) files: Vec<String>,
}

/// All files found, grouped into packages.
#[derive(Debug, Default)]
pub(crate) struct WalkResult {
    pub(crate) packages: Vec<Package>,
    /// Every file walked, registry-relative.
    pub(crate) files: Vec<String>,
    pub(crate) diagnostics: Vec<Diagnostic>,
    /// Files whose path is not UTF-8: the shown path (other bytes as `\xNN`) → the real one.
    pub(crate) real_paths: std::collections::HashMap<String, PathBuf>,
}

/// Folders never entered: VCS metadata, dependency and build caches. Other hidden folders are
/// read: registries keep skills in `.system/`, `.experimental/`, `.github/skills/`.
fn skipped_dir(name: &str) -> bool {
    matches!(
        name,
        ".git"
            | ".hg"
            | ".svn"
            | "node_modules"
            | "__pycache__"
            | ".venv"
            | "venv"
            | ".tox"
            | ".mypy_cache"
            | ".pytest_cache"
            | ".ruff_cache"
            | "target"
            | ".cache"
    )
}

fn is_skill_file(name: &str) -> bool {
    name.eq_ignore_ascii_case("skill.md")
}

/// A registry-relative path as skg names it: the path's own components joined by `/`. A
/// backslash inside a name stays part of that name (on Unix it is an ordinary character: read as
/// a separator, a file named `..\..\x` would name a file outside the registry), and bytes that
/// are not UTF-8 are shown as `\xNN`. A name that spells such an escape literally could show as
/// one that is not UTF-8: [`walk`] reads the first of two such and names the second.
pub(crate) fn rel(root: &Path, p: &Path) -> String {
    let Ok(r) = p.strip_prefix(root) else {
        // Only for messages (a loop's ancestor outside the walk): files are always under root.
        return p.to_string_lossy().into_owned();
    };
    let parts: Vec<String> = r.components().map(|c| shown_name(c.as_os_str())).collect();
    if parts.is_empty() {
        ".".to_owned()
    } else {
        parts.join("/")
    }
}

/// One path component as text: itself when UTF-8, else its valid runs with each other byte as
/// `\xNN`.
fn shown_name(name: &std::ffi::OsStr) -> String {
    if let Some(s) = name.to_str() {
        return s.to_owned();
    }
    let mut out = String::new();
    for chunk in name.as_encoded_bytes().utf8_chunks() {
        out.push_str(chunk.valid());
        for b in chunk.invalid() {
            let _ = std::fmt::Write::write_fmt(&mut out, format_args!("\\x{b:02X}"));
        }
    }
    out
}

/// Walks `root` and groups its files into packages (a folder with a `SKILL.md` owns every file
/// below it that no deeper package owns).
pub(crate) fn walk(registry: &RegistryName, root: &Path, limits: &Limits) -> WalkResult {
    let mut result = WalkResult::default();
    let diag = |path: String, code, severity, message: String| Diagnostic {
        registry: registry.clone(),
        path,
        line: None,
        severity,
        code,
        message,
    };
    let canon_root = match root.canonicalize() {
        Ok(c) => c,
        Err(e) => {
            result.diagnostics.push(diag(
                ".".into(),
                DiagnosticCode::Io,
                Severity::Error,
                format!("cannot read registry folder: {e}"),
            ));
            return result;
        }
    };
    let mut files: Vec<String> = Vec::new();
    let mut shown_names: std::collections::HashSet<String> = std::collections::HashSet::new();
    let mut it = walkdir::WalkDir::new(root)
        .follow_links(true)
        .sort_by_file_name()
        .into_iter();
    while let Some(entry) = it.next() {
        let entry = match entry {
            Ok(e) => e,
            Err(err) => {
                let path = err.path().map_or_else(|| ".".to_owned(), |p| rel(root, p));
                if let Some(ancestor) = err.loop_ancestor() {
                    result.diagnostics.push(diag(
                        path,
                        DiagnosticCode::SymlinkLoop,
                        Severity::Warning,
                        format!(
                            "symbolic link loops back to {}; not followed",
                            rel(root, ancestor)
                        ),
                    ));
                } else {
                    result.diagnostics.push(diag(
                        path,
                        DiagnosticCode::Io,
                        Severity::Warning,
                        format!("cannot read: {err}"),
                    ));
                }
                continue;
            }
        };
        let name = entry.file_name().to_string_lossy();
        if entry.depth() > 0 && entry.file_type().is_dir() && skipped_dir(&name) {
            it.skip_current_dir();
            continue;
        }
        if entry.path_is_symlink() {
            let inside = entry
                .path()
                .canonicalize()
                .is_ok_and(|target| target.starts_with(&canon_root));
            if !inside {
                result.diagnostics.push(diag(
                    rel(root, entry.path()),
                    DiagnosticCode::SymlinkEscape,
                    Severity::Warning,
                    "symbolic link points outside the registry root (or nowhere); not followed"
                        .into(),
                ));
                if entry.file_type().is_dir() {
                    it.skip_current_dir();
                }
                continue;
            }
        }
        let folder = entry.depth() > 0 && entry.file_type().is_dir();
        if !folder && !entry.file_type().is_file() {
            continue;
        }
        if !folder && files.len() >= limits.max_files {
            result.diagnostics.push(diag(
                ".".into(),
                DiagnosticCode::TooManyFiles,
                Severity::Error,
                format!(
                    "more than {} files; the rest of the registry was not read (raise --max-files)",
                    limits.max_files
                ),
            ));
            break;
        }
        let shown = rel(root, entry.path());
        // Only a name with an escape can show as another's (one not UTF-8, the other spelling
        // its escape literally): only those are remembered. The second of two such is named and
        // not read — a folder is not entered, or its files would join the other's package.
        if shown.contains("\\x") && !shown_names.insert(shown.clone()) {
            let what = if folder { "folders" } else { "files" };
            result.diagnostics.push(diag(
                shown,
                DiagnosticCode::InvalidUtf8,
                Severity::Warning,
                format!(
                    "two {what} show as this name (one of them is not UTF-8); the second was not read"
                ),
            ));
            if folder {
                it.skip_current_dir();
            }
            continue;
        }
        if folder {
            continue;
        }
        if entry.path().to_str().is_none() {
            result.diagnostics.push(diag(
                shown.clone(),
                DiagnosticCode::InvalidUtf8,
                Severity::Info,
                "the path is not UTF-8; it is shown with \\xNN escapes and read by its real name"
                    .into(),
            ));
            result
                .real_paths
                .insert(shown.clone(), entry.path().to_path_buf());
        }
        files.push(shown);
    }
    result.packages = group(files.clone());
    result.files = files;
    result
}

/// Groups registry-relative file paths into packages.
pub(crate) fn group(files: Vec<String>) -> Vec<Package> {
    // Package roots: folders holding a SKILL.md (exact case preferred over variants).
    let mut roots: BTreeMap<String, String> = BTreeMap::new();
    for f in &files {
        let (dir, name) = split(f);
        if is_skill_file(name) {
            let e = roots
                .entry(dir.to_owned())
                .or_insert_with(|| name.to_owned());
            if name == "SKILL.md" {
                name.clone_into(e);
            }
        }
    }
    let mut packages: BTreeMap<String, Package> = roots
        .iter()
        .map(|(root, file)| {
            (
                root.clone(),
                Package {
                    root: root.clone(),
                    skill_file: file.clone(),
                    files: Vec::new(),
                },
            )
        })
        .collect();
    for f in files {
        // The deepest package root that is an ancestor of f.
        let mut dir = split(&f).0;
        loop {
            if let Some(pkg) = packages.get_mut(dir) {
                let inner = if dir == "." {
                    f.as_str()
                } else {
                    &f[dir.len() + 1..]
                };
                if inner != pkg.skill_file {
                    pkg.files.push(inner.to_owned());
                }
                break;
            }
            if dir == "." {
                break;
            }
            dir = split(dir).0;
        }
    }
    packages.into_values().collect()
}

/// `("a/b", "c")` for `"a/b/c"`, `(".", "c")` for `"c"`.
fn split(path: &str) -> (&str, &str) {
    match path.rfind('/') {
        Some(i) => (&path[..i], &path[i + 1..]),
        None => (".", path),
    }
}

/// Joins a package root and a package-relative path into a registry-relative path.
pub(crate) fn join(root: &str, inner: &str) -> String {
    if root == "." {
        inner.to_owned()
    } else {
        format!("{root}/{inner}")
    }
}

/// Registry-relative path → absolute path.
pub(crate) fn abs(registry_root: &Path, rel: &str) -> PathBuf {
    registry_root.join(rel)
}

#[cfg(test)]
#[allow(clippy::unwrap_used, reason = "a panic is the test failure")]
mod tests {
    use super::*;

    #[test]
    fn nested_packages_own_their_files() {
        let files = [
            "README.md",
            "a/SKILL.md",
            "a/scripts/x.js",
            "a/sub/skill.md",
            "a/sub/notes.md",
            "b/Skill.md",
            "b/SKILL.md",
            "loose/file.md",
        ]
        .map(str::to_owned)
        .to_vec();
        let pkgs = group(files);
        let got: Vec<_> = pkgs
            .iter()
            .map(|p| (p.root.as_str(), p.skill_file.as_str(), p.files.clone()))
            .collect();
        assert_eq!(
            got,
            vec![
                ("a", "SKILL.md", vec!["scripts/x.js".to_owned()]),
                ("a/sub", "skill.md", vec!["notes.md".to_owned()]),
                ("b", "SKILL.md", vec!["Skill.md".to_owned()]),
            ]
        );
    }

    /// A backslash is part of a Unix file name: the file is named (and read) as itself, never as
    /// a path that climbs out of the registry.
    #[cfg(unix)]
    #[test]
    fn a_backslash_in_a_name_never_leaves_the_registry() {
        let tmp = tempfile::tempdir().unwrap();
        let root = tmp.path().join("reg");
        std::fs::create_dir_all(root.join("skill")).unwrap();
        std::fs::write(root.join("skill/SKILL.md"), "---\nname: s\n---\n").unwrap();
        std::fs::write(tmp.path().join("outside.md"), "secret").unwrap();
        let sneaky = r"..\..\outside.md";
        std::fs::write(root.join("skill").join(sneaky), "inside").unwrap();
        let w = walk(&RegistryName::from("r"), &root, &Limits::default());
        let named = format!("skill/{sneaky}");
        assert_eq!(w.files, vec![named.clone(), "skill/SKILL.md".to_owned()]);
        assert_eq!(w.packages[0].files, vec![sneaky.to_owned()]);
        let path = abs(&root, &named);
        assert!(path.starts_with(&root), "{}", path.display());
        assert_eq!(std::fs::read_to_string(path).unwrap(), "inside");
    }

    /// Two names that differ only in bytes that are not UTF-8 stay two packages, each read by its
    /// real name.
    #[cfg(unix)]
    #[test]
    fn names_that_are_not_utf8_stay_apart() {
        use std::os::unix::ffi::OsStrExt;
        let tmp = tempfile::tempdir().unwrap();
        let root = tmp.path();
        for b in [0xE8u8, 0xE9] {
            let dir = root.join(std::ffi::OsStr::from_bytes(&[b'c', b'a', b'f', b]));
            std::fs::create_dir_all(&dir).unwrap();
            std::fs::write(dir.join("SKILL.md"), format!("byte {b:02X}")).unwrap();
        }
        let w = walk(&RegistryName::from("r"), root, &Limits::default());
        assert_eq!(w.files, vec![r"caf\xE8/SKILL.md", r"caf\xE9/SKILL.md"]);
        let roots: Vec<&str> = w.packages.iter().map(|p| p.root.as_str()).collect();
        assert_eq!(roots, vec![r"caf\xE8", r"caf\xE9"]);
        for (f, want) in w.files.iter().zip(["byte E8", "byte E9"]) {
            assert_eq!(std::fs::read_to_string(&w.real_paths[f]).unwrap(), want);
        }
        assert_eq!(
            w.diagnostics
                .iter()
                .filter(|d| d.code == DiagnosticCode::InvalidUtf8)
                .count(),
            2
        );
    }

    /// A folder that spells an escape literally and one whose name is that byte show alike:
    /// the first (by name) is read, the second is named and not entered, so no file of one
    /// joins the other's package.
    #[cfg(unix)]
    #[test]
    fn a_folder_spelling_an_escape_is_not_merged_with_the_byte() {
        use std::os::unix::ffi::OsStrExt;
        let tmp = tempfile::tempdir().unwrap();
        let root = tmp.path();
        let literal = root.join(r"caf\xE8");
        let raw = root.join(std::ffi::OsStr::from_bytes(b"caf\xE8"));
        for dir in [&literal, &raw] {
            std::fs::create_dir_all(dir).unwrap();
            std::fs::write(dir.join("SKILL.md"), "x").unwrap();
        }
        std::fs::write(raw.join("other.md"), "y").unwrap();
        let w = walk(&RegistryName::from("r"), root, &Limits::default());
        assert_eq!(w.files, vec![r"caf\xE8/SKILL.md"]);
        assert!(w.real_paths.is_empty());
        assert!(
            w.diagnostics
                .iter()
                .any(|d| d.severity == Severity::Warning && d.message.contains("two folders")),
            "{:?}",
            w.diagnostics
        );
    }

    #[test]
    fn root_package() {
        let pkgs = group(vec!["SKILL.md".into(), "scripts/run.py".into()]);
        assert_eq!(pkgs.len(), 1);
        assert_eq!(pkgs[0].root, ".");
        assert_eq!(pkgs[0].files, vec!["scripts/run.py".to_owned()]);
        assert_eq!(join(".", "x.md"), "x.md");
        assert_eq!(join("a/b", "x.md"), "a/b/x.md");
    }
}
