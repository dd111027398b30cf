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
    let stages: [(&str, &[&str]); 5] = [
        (
            "EXTRACT",
            &["crates/skg-extract/src", "crates/skg-syntax/src"],
        ),
        (
            "SCAN",
            &[
                "crates/skg-scan/src",
                "crates/skg-syntax/src",
                "crates/skg-extract/src",
            ],
        ),
        (
            "CANONICALIZE",
            &[
                "crates/skg-canon/src",
                "crates/skg-embed/src",
                "crates/skg-extract/src",
            ],
        ),
        ("SCORE", &["crates/skg-score/src"]),
        ("MEASURE", &["crates/skg-measure/src"]),
    ];
    let mut watched: Vec<&str> = vec!["Cargo.lock"];
    for (stage, dirs) in stages {
        let all: Vec<&str> = common.iter().chain(dirs).copied().collect();
        let id = code_id(&base, &all, &["Cargo.lock"])
            .unwrap_or_else(|e| panic!("cannot hash the sources of {stage}: {e}"));
        println!("cargo:rustc-env=SKG_CODE_{stage}={id}");
        watched.extend(all);
    }
    watched.sort_unstable();
    watched.dedup();
    for path in watched {
        println!("cargo:rerun-if-changed={}", base.join(path).display());
    }
    println!("cargo:rerun-if-changed=build.rs");
}
