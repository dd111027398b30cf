// The code id of a stage: a hash of the source of the crates that compute it, made when skg is
// built (`build.rs` includes this file, so it holds no inner attributes or docs), so that an
// audit folder made by other code is never reused — not only one made by another release.

/// blake3 over every file under each of `dirs` (each relative to `base`) — Rust sources and the
/// data they `include_str!` alike —, in path order, and over each of `files`: each as its path
/// relative to `base`, its length and its bytes. Unit tests (`tests.rs`, files under a `tests/`
/// folder) are left out: they do not change what a stage computes.
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
            } else if name != "tests.rs" {
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

/// The source folders (`crates/<crate>/src`, relative to `base`) of the code that computes a
/// stage: the workspace crates its module in skg-pipeline names (`skg_x::` paths in
/// `crates/skg-pipeline/src/<module>.rs` — that file only: a stage's calls into other crates
/// belong in it, not in the crate's shared helpers), and every workspace crate those depend on
/// (the `[dependencies]` of their `Cargo.toml`, transitively; dev-dependencies are not
/// followed). Derived, not listed, so a stage module that starts calling another crate hashes
/// it without a second list to update. It may include more than the stage runs (measure.rs
/// also holds `skg measure --codebase`, which reads code with extract): a needless recompute,
/// never a stale reuse. skg-pipeline itself is left out (the caller hashes it whole).
///
/// # Errors
/// The module or a manifest cannot be read or parsed.
#[allow(
    clippy::disallowed_methods,
    reason = "it reads skg's own source tree at build time, not a registry or an artifact"
)]
pub(crate) fn stage_sources(base: &std::path::Path, module: &str) -> std::io::Result<Vec<String>> {
    let crates = base.join("crates");
    let text =
        std::fs::read_to_string(crates.join("skg-pipeline/src").join(format!("{module}.rs")))?;
    // `skg_x::` not preceded by an identifier character, as crate `skg-x`.
    let bytes = text.as_bytes();
    let ident = |b: u8| b.is_ascii_alphanumeric() || b == b'_';
    let mut todo: Vec<String> = text
        .match_indices("skg_")
        .filter(|(i, _)| *i == 0 || !ident(bytes[i - 1]))
        .filter_map(|(i, _)| {
            let rest = &text[i..];
            let end = rest.bytes().position(|b| !ident(b)).unwrap_or(rest.len());
            rest[end..]
                .starts_with("::")
                .then(|| rest[..end].replace('_', "-"))
        })
        .filter(|c| c != "skg-pipeline" && crates.join(c).join("Cargo.toml").is_file())
        .collect();
    let mut seen = std::collections::BTreeSet::new();
    while let Some(c) = todo.pop() {
        if !seen.insert(c.clone()) {
            continue;
        }
        let path = crates.join(&c).join("Cargo.toml");
        let manifest: toml::Table = std::fs::read_to_string(&path)?
            .parse()
            .map_err(|e| std::io::Error::other(format!("{}: {e}", path.display())))?;
        if let Some(deps) = manifest.get("dependencies").and_then(toml::Value::as_table) {
            todo.extend(
                deps.keys()
                    .filter(|k| k.starts_with("skg-") && *k != "skg-pipeline")
                    .cloned(),
            );
        }
    }
    Ok(seen
        .into_iter()
        .map(|c| format!("crates/{c}/src"))
        .collect())
}

#[cfg(test)]
mod tests {
    #![allow(
        clippy::disallowed_methods,
        clippy::unwrap_used,
        reason = "the test writes a small source tree to hash"
    )]

    use super::{code_id, stage_sources};

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
            w("a/tests/notes.md", test);
            w("Cargo.lock", "lock");
        };
        let id = |root: &std::path::Path| code_id(root, &["a/src"], &["Cargo.lock"]).unwrap();
        let one = tempfile::tempdir().unwrap();
        make(one.path(), "fn a() {}", "t1");
        let base = id(one.path());
        assert_eq!(base.len(), 64, "{base}");
        // Another folder, other tests: the same code.
        let two = tempfile::tempdir().unwrap();
        make(two.path(), "fn a() {}", "t2");
        assert_eq!(id(two.path()), base);
        // One changed byte of the source, or of the lock file: another code id.
        let three = tempfile::tempdir().unwrap();
        make(three.path(), "fn b() {}", "t1");
        assert_ne!(id(three.path()), base);
        std::fs::write(one.path().join("Cargo.lock"), "lock2").unwrap();
        assert_ne!(id(one.path()), base);
        // Data a source includes (`include_str!`) is code too.
        let five = tempfile::tempdir().unwrap();
        make(five.path(), "fn a() {}", "t1");
        assert_eq!(id(five.path()), base);
        std::fs::write(five.path().join("a/src/names.txt"), "react").unwrap();
        assert_ne!(id(five.path()), base);
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

    #[test]
    fn a_stage_hashes_the_crates_its_module_names_and_their_dependencies() {
        let root = tempfile::tempdir().unwrap();
        let w = |rel: &str, text: &str| {
            let p = root.path().join(rel);
            std::fs::create_dir_all(p.parent().unwrap()).unwrap();
            std::fs::write(p, text).unwrap();
        };
        // The module names skg-a (in a `use` and a path), mentions skg-pipeline, an identifier
        // that only contains the prefix, and a crate that is not in the workspace.
        w(
            "crates/skg-pipeline/src/stage.rs",
            "use skg_a::{x};\nfn f() { skg_a::y(); my_skg_b::z(); skg_gone::q(); skg_pipeline::r(); }\n// skg_c is named without a path\n",
        );
        w(
            "crates/skg-pipeline/Cargo.toml",
            "[dependencies]\nskg-a.workspace = true\n",
        );
        // skg-a depends on skg-b; skg-b on skg-c only as a dev-dependency; skg-d is unrelated.
        w(
            "crates/skg-a/Cargo.toml",
            "[package]\nname = \"skg-a\"\n[dependencies]\nskg-b.workspace = true\nserde.workspace = true\n",
        );
        w(
            "crates/skg-b/Cargo.toml",
            "[dependencies]\nblake3 = \"1\"\n[dev-dependencies]\nskg-c.workspace = true\n",
        );
        w("crates/skg-c/Cargo.toml", "[dependencies]\n");
        w("crates/skg-d/Cargo.toml", "[dependencies]\n");
        assert_eq!(
            stage_sources(root.path(), "stage").unwrap(),
            ["crates/skg-a/src", "crates/skg-b/src"]
        );
        assert!(stage_sources(root.path(), "missing").is_err());
    }

    #[test]
    fn the_workspace_stages_hash_what_they_call() {
        let base = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
        let of = |module: &str| stage_sources(&base, module).unwrap();
        // scan re-reads the packages with extract, which parses scripts with syntax.
        let scan = of("scan");
        for c in ["skg-scan", "skg-extract", "skg-syntax", "skg-model"] {
            assert!(scan.contains(&format!("crates/{c}/src")), "{c} in {scan:?}");
        }
        // canonicalize embeds and types capabilities with extract's taxonomy.
        let canon = of("canonicalize");
        for c in ["skg-canon", "skg-embed", "skg-extract", "skg-syntax"] {
            assert!(
                canon.contains(&format!("crates/{c}/src")),
                "{c} in {canon:?}"
            );
        }
        // No stage hashes the index, the report or the gateway.
        for module in ["extract", "scan", "canonicalize", "score", "measure"] {
            let dirs = of(module);
            for c in [
                "skg-index",
                "skg-report",
                "skg-serve",
                "skg-pipeline",
                "skg",
            ] {
                assert!(
                    !dirs.contains(&format!("crates/{c}/src")),
                    "{c} in {module}: {dirs:?}"
                );
            }
        }
    }
}
