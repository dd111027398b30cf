// The code id of a stage: a hash of the source of the crates that compute it, made when skg is
// built (`build.rs` includes this file, so it holds no inner attributes or docs), so that an
// audit folder made by other code is never reused — not only one made by another release.

/// blake3 over every `.rs` file under each of `dirs` (each relative to `base`), in path order,
/// and over each of `files`: each as its path relative to `base`, its length and its bytes.
/// Unit tests (`tests.rs`, files under a `tests/` folder) are left out: they do not change what
/// a stage computes.
///
/// # Errors
/// A folder or file cannot be read.
#[allow(
    clippy::disallowed_methods,
    reason = "it reads skg's own source tree at build time, not a registry or an artifact"
)]
pub(crate) fn code_id(
    base: &std::path::Path,
    dirs: &[&str],
    files: &[&str],
) -> std::io::Result<String> {
    fn walk(dir: &std::path::Path, out: &mut Vec<std::path::PathBuf>) -> std::io::Result<()> {
        for entry in std::fs::read_dir(dir)? {
            let path = entry?.path();
            let name = path.file_name().and_then(|n| n.to_str()).unwrap_or("");
            if path.is_dir() {
                if name != "tests" {
                    walk(&path, out)?;
                }
            } else if path.extension().is_some_and(|e| e == "rs") && name != "tests.rs" {
                out.push(path);
            }
        }
        Ok(())
    }
    let mut paths = Vec::new();
    for d in dirs {
        walk(&base.join(d), &mut paths)?;
    }
    paths.extend(files.iter().map(|f| base.join(f)));
    let mut named: Vec<(String, std::path::PathBuf)> = paths
        .into_iter()
        .map(|p| {
            let rel = p.strip_prefix(base).unwrap_or(&p).to_string_lossy();
            (rel.replace('\\', "/"), p)
        })
        .collect();
    named.sort();
    let mut h = blake3::Hasher::new();
    for (rel, path) in &named {
        let bytes = std::fs::read(path)?;
        h.update(&(rel.len() as u64).to_le_bytes());
        h.update(rel.as_bytes());
        h.update(&(bytes.len() as u64).to_le_bytes());
        h.update(&bytes);
    }
    Ok(h.finalize().to_hex().to_string())
}

#[cfg(test)]
mod tests {
    #![allow(
        clippy::disallowed_methods,
        clippy::unwrap_used,
        reason = "the test writes a small source tree to hash"
    )]

    use super::code_id;

    #[test]
    fn the_code_id_changes_with_the_source_and_not_with_tests_or_the_folder() {
        let make = |root: &std::path::Path, lib: &str, test: &str| {
            let w = |rel: &str, text: &str| {
                let p = root.join(rel);
                std::fs::create_dir_all(p.parent().unwrap()).unwrap();
                std::fs::write(p, text).unwrap();
            };
            w("a/src/lib.rs", lib);
            w("a/src/m/x.rs", "pub fn x() {}");
            w("a/src/tests.rs", test);
            w("a/src/tests/y.rs", test);
            w("a/src/notes.md", test);
            w("Cargo.lock", "lock");
        };
        let id = |root: &std::path::Path| code_id(root, &["a/src"], &["Cargo.lock"]).unwrap();
        let one = tempfile::tempdir().unwrap();
        make(one.path(), "fn a() {}", "t1");
        let base = id(one.path());
        assert_eq!(base.len(), 64, "{base}");
        // Another folder, other tests, other non-Rust files: the same code.
        let two = tempfile::tempdir().unwrap();
        make(two.path(), "fn a() {}", "t2");
        assert_eq!(id(two.path()), base);
        // One changed byte of the source, or of the lock file: another code id.
        let three = tempfile::tempdir().unwrap();
        make(three.path(), "fn b() {}", "t1");
        assert_ne!(id(three.path()), base);
        std::fs::write(one.path().join("Cargo.lock"), "lock2").unwrap();
        assert_ne!(id(one.path()), base);
        // A file moved to another path is another tree.
        let four = tempfile::tempdir().unwrap();
        make(four.path(), "fn a() {}", "t1");
        std::fs::rename(
            four.path().join("a/src/m/x.rs"),
            four.path().join("a/src/m/z.rs"),
        )
        .unwrap();
        assert_ne!(id(four.path()), base);
    }
}
