//! Faults (issue 8): a write that fails half-way leaves the previous output whole and says what
//! failed; the gateway without its model serves BM25 and says why.

use std::path::Path;

use super::{audit::demo_copy, clean_command, free_port, skg_json_env, wait_for_health};

/// Runs `skg` with a per-file write limit of `kib` KiB (`ulimit -f`), SIGXFSZ ignored so a write
/// over it fails with EFBIG instead of killing the process — a disk that fills mid-run.
fn skg_with_write_limit(cwd: &Path, kib: u32, args: &[&str]) -> std::process::Output {
    clean_command("bash", cwd)
        .arg("-c")
        .arg(format!("trap '' XFSZ; ulimit -f {kib}; exec \"$0\" \"$@\""))
        .arg(env!("CARGO_BIN_EXE_skg"))
        .args(args)
        .output()
        .unwrap_or_else(|e| panic!("{e}"))
}

fn snapshot(dir: &Path) -> Vec<(String, Vec<u8>)> {
    let mut out: Vec<(String, Vec<u8>)> = std::fs::read_dir(dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|e| e.unwrap_or_else(|e| panic!("{e}")).path())
        .filter(|p| p.is_file())
        .map(|p| {
            (
                p.file_name()
                    .unwrap_or_default()
                    .to_string_lossy()
                    .into_owned(),
                std::fs::read(&p).unwrap_or_else(|e| panic!("{e}")),
            )
        })
        .collect();
    out.sort();
    out
}

fn leftovers(parent: &Path) -> Vec<String> {
    std::fs::read_dir(parent)
        .unwrap_or_else(|e| panic!("{e}"))
        .map(|e| {
            e.unwrap_or_else(|e| panic!("{e}"))
                .file_name()
                .to_string_lossy()
                .into_owned()
        })
        .filter(|n| n.contains(".tmp-") || n.contains(".old-"))
        .collect()
}

#[test]
fn a_write_failing_half_way_keeps_the_previous_output() {
    let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    let d = dir.path();
    demo_copy(d);
    // A good extract and index first.
    let _ = skg_json_env(d, &["extract", "registries", "-o", "out", "-q"], &[]);
    let before = snapshot(&d.join("out"));
    assert!(before.iter().any(|(n, _)| n == "_SUCCESS"));

    // Edit the input so a finished run would change the output, then fail its writes.
    let skill = d.join("registries/devflow/skills/executing-plans/SKILL.md");
    let mut text = std::fs::read_to_string(&skill).expect("read a file the run wrote");
    text.push_str("\nOne more line.\n");
    std::fs::write(&skill, text).unwrap_or_else(|e| panic!("{e}"));
    let out = skg_with_write_limit(d, 16, &["extract", "registries", "-o", "out", "-q"]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("cannot write"), "{stderr}");
    assert!(
        stderr.contains("File too large") || stderr.contains("too large"),
        "{stderr}"
    );
    assert_eq!(
        snapshot(&d.join("out")),
        before,
        "the previous output is untouched"
    );
    assert!(leftovers(d).is_empty(), "{:?}", leftovers(d));

    // The same for the routing index.
    let lexical_audit = || {
        skg_json_env(
            d,
            &[
                "audit",
                "registries",
                "-o",
                "audit",
                "--no-embeddings",
                "-q",
            ],
            &[],
        )
    };
    super::lexical_index(d, "registries");
    let index_before = snapshot(&d.join("index"));
    std::fs::remove_dir_all(d.join("registries/datalab/skills/notebook-hygiene"))
        .unwrap_or_else(|e| panic!("{e}"));
    let _ = lexical_audit();
    let out = skg_with_write_limit(d, 16, &super::LEXICAL_INDEX_BUILD);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("cannot write"), "{stderr}");
    assert_eq!(snapshot(&d.join("index")), index_before);
    assert!(leftovers(d).is_empty(), "{:?}", leftovers(d));
}

/// The model files vanish after the index was embedded: the gateway starts, answers with BM25
/// and `/health` gives the reason.
#[test]
fn the_gateway_without_its_model_serves_bm25_and_says_why() {
    let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    let d = dir.path();
    demo_copy(d);
    let Some(model) = super::model_dir() else {
        return;
    };
    let env = [("SKG_MODEL_DIR", model.as_path())];
    let _ = skg_json_env(d, &["audit", "registries", "-o", "audit", "-q"], &env);
    let built = skg_json_env(d, &["index", "build", "audit", "-o", "index", "-q"], &env);
    // L0 and L1 of 35 skills, and the 23 "## When to Use" sections of the demo.
    assert_eq!(built["counts"]["vectors"], 70 + 23);
    let port = free_port();
    let mut child = clean_command(env!("CARGO_BIN_EXE_skg"), d)
        .args([
            "serve",
            "--index",
            "index",
            "--addr",
            &format!("127.0.0.1:{port}"),
        ])
        .env("SKG_MODEL_DIR", d.join("no-model-here"))
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap_or_else(|e| panic!("{e}"));
    let h = std::panic::catch_unwind(|| wait_for_health(port, "the gateway", &|_| true));
    let _ = child.kill();
    let _ = child.wait();
    let h = h.unwrap_or_else(|_| panic!("the gateway did not answer"));
    let reasons = h["degraded"].to_string();
    assert!(reasons.contains("no embedding model"), "{reasons}");
    assert!(reasons.contains("BM25 only"), "{reasons}");
}
