//! End-to-end tests of the `skg` binary (one test binary, topics in modules).
#![allow(
    clippy::disallowed_methods,
    reason = "tests set up and inspect files on disk"
)]
#![allow(
    clippy::print_stderr,
    reason = "tests say on stderr which parts they skipped and why"
)]

mod audit;
mod canonicalize;
mod catalog;
mod cli_output;
mod extract;
mod faults;
mod git_source;
mod measure;
mod score;
mod telemetry;

use std::{
    path::{Path, PathBuf},
    process::{Command, Output},
};

/// The repository root.
pub(crate) fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../..")
        .canonicalize()
        .unwrap_or_else(|e| panic!("repo root: {e}"))
}

/// Runs `skg` with `args` in `cwd`, with a clean environment (no colours, no user config).
pub(crate) fn skg(cwd: &Path, args: &[&str]) -> Output {
    skg_env(cwd, args, &[])
}

/// A command for `program` in `cwd` with the harness's clean environment (no user config, the
/// cache inside `cwd`).
pub(crate) fn clean_command(program: impl AsRef<std::ffi::OsStr>, cwd: &Path) -> Command {
    let mut cmd = Command::new(program);
    cmd.current_dir(cwd)
        .env_clear()
        .env("PATH", std::env::var_os("PATH").unwrap_or_default())
        .env("HOME", cwd)
        .env("SKG_CACHE_DIR", cwd.join(".skg-cache"));
    cmd
}

/// [`skg`] with extra environment variables.
pub(crate) fn skg_env(cwd: &Path, args: &[&str], env: &[(&str, &Path)]) -> Output {
    let mut cmd = clean_command(env!("CARGO_BIN_EXE_skg"), cwd);
    cmd.args(args);
    for (k, v) in env {
        cmd.env(k, v);
    }
    cmd.output()
        .unwrap_or_else(|e| panic!("cannot run skg: {e}"))
}

/// `GET path` on 127.0.0.1:`port` (one connection, HTTP/1.1): the JSON body, or `None` when the
/// server is not answering (yet).
pub(crate) fn http_get(port: u16, path: &str) -> Option<serde_json::Value> {
    use std::io::{Read as _, Write as _};
    let mut s = std::net::TcpStream::connect(("127.0.0.1", port)).ok()?;
    write!(
        s,
        "GET {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n"
    )
    .ok()?;
    let mut raw = String::new();
    s.read_to_string(&mut raw).ok()?;
    serde_json::from_str(raw.split("\r\n\r\n").nth(1)?).ok()
}

/// A free port on 127.0.0.1.
pub(crate) fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .map_or_else(|e| panic!("{e}"), |a| a.port())
}

/// Polls `GET /health` on `port` (up to 60 s) until `ok` holds; panics naming `what` otherwise.
pub(crate) fn wait_for_health(
    port: u16,
    what: &str,
    ok: &dyn Fn(&serde_json::Value) -> bool,
) -> serde_json::Value {
    for _ in 0..600 {
        if let Some(h) = http_get(port, "/health")
            && ok(&h)
        {
            return h;
        }
        std::thread::sleep(std::time::Duration::from_millis(100));
    }
    panic!("timed out waiting for {what}");
}

/// The embedding model folder, when `scripts/fetch-model.sh` installed it (tests never
/// download it; `.ci/run` installs it first, and a missing model fails there).
pub(crate) fn model_dir() -> Option<PathBuf> {
    skg_testkit::found(
        "the embedding model (install it with scripts/fetch-model.sh)",
        skg_embed::locate().ok().map(|d| d.path().to_path_buf()),
    )
}

/// Runs `skg … --format json` and parses stdout; panics with stderr on failure.
pub(crate) fn skg_json(cwd: &Path, args: &[&str]) -> serde_json::Value {
    skg_json_env(cwd, args, &[])
}

/// [`skg_json`] with extra environment variables.
pub(crate) fn skg_json_env(cwd: &Path, args: &[&str], env: &[(&str, &Path)]) -> serde_json::Value {
    let mut all: Vec<&str> = args.to_vec();
    all.extend(["--format", "json"]);
    let out = skg_env(cwd, &all, env);
    assert!(
        out.status.success(),
        "skg {args:?} failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
        panic!(
            "stdout is not JSON ({e}): {}",
            String::from_utf8_lossy(&out.stdout)
        )
    })
}

/// NDJSON rows of a table.
pub(crate) fn rows(dir: &Path, table: &str) -> Vec<serde_json::Value> {
    std::fs::read_to_string(dir.join(format!("{table}.ndjson")))
        .unwrap_or_else(|e| panic!("{table}: {e}"))
        .lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("{e}")))
        .collect()
}

/// The routing index arguments of a lexical (BM25-only) build of `dir/audit` into `dir/index`.
pub(crate) const LEXICAL_INDEX_BUILD: [&str; 7] = [
    "index",
    "build",
    "audit",
    "-o",
    "index",
    "--no-embeddings",
    "-q",
];

/// Audits `registries` (a path, relative to `dir` or absolute) without embeddings into
/// `dir/audit` and builds the lexical routing index `dir/index` from it; both must succeed.
pub(crate) fn lexical_index(dir: &Path, registries: &str) {
    let _ = skg_json(
        dir,
        &["audit", registries, "-o", "audit", "--no-embeddings", "-q"],
    );
    let _ = skg_json(dir, &LEXICAL_INDEX_BUILD);
}

/// Extracts the bundled demo registries into `dir/extract`.
pub(crate) fn extract_demo(dir: &Path) {
    let reg = repo().join("registries");
    let o = skg(
        dir,
        &[
            "extract",
            reg.to_str().expect("a UTF-8 path"),
            "-o",
            "extract",
            "-q",
        ],
    );
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
}
