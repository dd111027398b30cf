//! Each stage's code id (`SKG_CODE_<STAGE>`): a hash of the source of the crates that compute the
//! stage and of `Cargo.lock`, part of the stage's key, so an audit folder made by other code is
//! recomputed rather than reused (docs: ARCHITECTURE.md, skg-artifact's invariants).
#![allow(
    clippy::disallowed_methods,
    reason = "the build script reads the workspace's sources to hash them"
)]

include!("src/code_id.rs");

fn main() {
    let manifest = std::path::PathBuf::from(
        std::env::var("CARGO_MANIFEST_DIR").expect("cargo sets CARGO_MANIFEST_DIR"),
    );
    let base = manifest
        .parent()
        .and_then(std::path::Path::parent)
        .expect("the crate is at crates/skg-pipeline in the workspace")
        .to_path_buf();
    // What every stage runs through: the row types, the tables, the folders, this crate.
    let common = [
        "crates/skg-model/src",
        "crates/skg-artifact/src",
        "crates/skg-store/src",
        "crates/skg-pipeline/src",
    ];
    // Each stage's module in this crate; the crates it computes with are derived from it
    // (`stage_sources`: the crates it names and their dependencies).
    let stages = [
        ("EXTRACT", "extract"),
        ("SCAN", "scan"),
        ("CANONICALIZE", "canonicalize"),
        ("SCORE", "score"),
        ("MEASURE", "measure"),
    ];
    let mut watched: Vec<String> = Vec::new();
    for (stage, module) in stages {
        let derived = stage_sources(&base, module)
            .unwrap_or_else(|e| panic!("cannot tell which crates compute {stage}: {e}"));
        let mut all: Vec<&str> = common.to_vec();
        all.extend(derived.iter().map(String::as_str));
        all.sort_unstable();
        all.dedup();
        // The lock file (dependency versions), the workspace manifest (their features) and each
        // crate's manifest (its features and dependencies, which decide what the stage hashes).
        let manifests: Vec<String> = all
            .iter()
            .filter_map(|dir| dir.strip_suffix("/src"))
            .map(|krate| format!("{krate}/Cargo.toml"))
            .collect();
        let mut files: Vec<&str> = vec!["Cargo.lock", "Cargo.toml"];
        files.extend(manifests.iter().map(String::as_str));
        let id = code_id(&base, &all, &files)
            .unwrap_or_else(|e| panic!("cannot hash the sources of {stage}: {e}"));
        println!("cargo:rustc-env=SKG_CODE_{stage}={id}");
        watched.extend(all.iter().chain(&files).map(|p| (*p).to_owned()));
    }
    watched.sort_unstable();
    watched.dedup();
    for path in &watched {
        println!("cargo:rerun-if-changed={}", base.join(path).display());
    }
    println!("cargo:rerun-if-changed=build.rs");
}
