//! Registry sources: `registries.toml`, plain folders, tool catalogs, git revisions.

use std::{
    path::{Path, PathBuf},
    process::Command,
};

use serde::Deserialize;
use skg_model::{RegistryKind, RegistryName};

use crate::{Error, Result};

/// One registry to read, resolved to a local path.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RegistrySource {
    /// Registry name (skill ids start with it).
    pub name: RegistryName,
    /// Folder of skills or catalog file, as given (for the manifest).
    pub display_path: String,
    /// Where to read it on disk (for git sources: inside the checkout of `rev`).
    pub local_path: PathBuf,
    /// Folder or catalog.
    pub kind: RegistryKind,
    /// Git repository read at `rev`, if any.
    pub git: Option<String>,
    /// Revision (pinned, recorded, or the working tree's `HEAD`).
    pub rev: Option<String>,
    /// Provenance URL, never fetched.
    pub source: Option<String>,
    /// Declared licence.
    pub license: Option<String>,
}

/// `registries.toml`: a list of `[[registry]]` tables.
#[derive(Debug, Deserialize)]
struct RegistriesFile {
    #[serde(default)]
    registry: Vec<RegistryEntry>,
}

/// One `[[registry]]` entry. Unknown keys are ignored so that files carrying extra bookkeeping
/// (e.g. a `skills = 2922` count) load as they are.
#[derive(Debug, Deserialize)]
struct RegistryEntry {
    name: String,
    /// Folder or catalog file, relative to the toml file; with `git`, a subfolder of the repository.
    #[serde(default)]
    path: Option<String>,
    /// A git repository (URL or local path) to read at `rev`.
    #[serde(default)]
    git: Option<String>,
    /// The pinned revision for `git`; without `git` it is recorded as provenance.
    #[serde(default, alias = "commit")]
    rev: Option<String>,
    /// Provenance URL, recorded, never fetched.
    #[serde(default)]
    source: Option<String>,
    #[serde(default, alias = "licence")]
    license: Option<String>,
    /// `skills` or `tool_catalog`; by default a `.json`/`.jsonl`/`.ndjson` file is a catalog.
    #[serde(default)]
    kind: Option<RegistryKind>,
}

/// Where git checkouts are cached: `$SKG_CACHE_DIR`, else `$XDG_CACHE_HOME/skg`, else `~/.cache/skg`.
pub fn cache_dir() -> PathBuf {
    if let Some(d) = std::env::var_os("SKG_CACHE_DIR") {
        return PathBuf::from(d);
    }
    if let Some(d) = std::env::var_os("XDG_CACHE_HOME") {
        return PathBuf::from(d).join("skg");
    }
    std::env::var_os("HOME").map_or_else(
        || std::env::temp_dir().join("skg-cache"),
        |h| PathBuf::from(h).join(".cache").join("skg"),
    )
}

/// Resolves command-line inputs to registry sources.
///
/// An input is a `registries.toml`, a folder holding one, a folder of skills (the registry is
/// named after the folder), or a `.json`/`.jsonl`/`.ndjson` tool catalog or a `.json`/`.yaml`/`.yml`
/// OpenAPI document (named after the file stem).
pub fn resolve_inputs(inputs: &[PathBuf]) -> Result<Vec<RegistrySource>> {
    let mut out = Vec::new();
    for input in inputs {
        if !input.exists() {
            return Err(Error::InputMissing(input.clone()));
        }
        let toml = if input.is_dir() {
            input.join("registries.toml")
        } else {
            input.clone()
        };
        if toml.is_file() && toml.extension().is_some_and(|e| e == "toml") {
            out.extend(load_registries_toml(&toml)?);
        } else if input.is_dir() {
            out.push(plain_source(input, RegistryKind::Skills));
        } else if is_catalog_path(input) {
            out.push(plain_source(input, RegistryKind::ToolCatalog));
        } else {
            return Err(Error::InputKind(input.clone()));
        }
    }
    let mut seen = std::collections::BTreeMap::new();
    for s in &out {
        if let Some(first) = seen.insert(s.name.clone(), &s.display_path) {
            return Err(Error::DuplicateRegistry {
                name: s.name.to_string(),
                first: first.clone(),
                second: s.display_path.clone(),
            });
        }
    }
    Ok(out)
}

fn is_catalog_path(p: &Path) -> bool {
    p.extension().and_then(|e| e.to_str()).is_some_and(|e| {
        matches!(
            e.to_ascii_lowercase().as_str(),
            "json" | "jsonl" | "ndjson" | "yaml" | "yml"
        )
    })
}

fn plain_source(path: &Path, kind: RegistryKind) -> RegistrySource {
    let name = match kind {
        RegistryKind::Skills => path.file_name(),
        RegistryKind::ToolCatalog => path.file_stem(),
    }
    .map_or_else(
        || "registry".to_owned(),
        |n| n.to_string_lossy().into_owned(),
    );
    RegistrySource {
        name: RegistryName(name),
        display_path: path.display().to_string(),
        local_path: path.to_path_buf(),
        kind,
        git: None,
        rev: worktree_head(path),
        source: None,
        license: None,
    }
}

/// Reads a `registries.toml`.
pub fn load_registries_toml(file: &Path) -> Result<Vec<RegistrySource>> {
    let text = std::fs::read_to_string(file).map_err(|e| Error::io(file, e))?;
    let parsed: RegistriesFile = toml::from_str(&text).map_err(|e| Error::Toml {
        path: file.to_path_buf(),
        message: e.to_string(),
    })?;
    let base = file.parent().unwrap_or(Path::new("."));
    let mut out = Vec::new();
    for entry in parsed.registry {
        let sub = entry.path.clone().unwrap_or_else(|| ".".to_owned());
        let (local_path, rev) = if let Some(git) = &entry.git {
            let rev = entry
                .rev
                .clone()
                .ok_or_else(|| Error::GitRevMissing(entry.name.clone()))?;
            let repo = if looks_like_url(git) {
                git.clone()
            } else {
                base.join(git).display().to_string()
            };
            let (checkout, resolved) = checkout_git(&repo, &rev)?;
            (checkout.join(&sub), Some(resolved))
        } else {
            let p = base.join(&sub);
            let rev = entry.rev.clone().or_else(|| worktree_head(&p));
            (p, rev)
        };
        let kind = entry.kind.unwrap_or(if is_catalog_path(&local_path) {
            RegistryKind::ToolCatalog
        } else {
            RegistryKind::Skills
        });
        if entry.git.is_none() && !local_path.exists() {
            return Err(Error::InputMissing(local_path));
        }
        out.push(RegistrySource {
            name: RegistryName(entry.name),
            display_path: sub,
            local_path,
            kind,
            git: entry.git,
            rev,
            source: entry.source,
            license: entry.license,
        });
    }
    Ok(out)
}

fn looks_like_url(s: &str) -> bool {
    s.contains("://") || s.starts_with("git@")
}

/// `HEAD` of the git working tree containing `path`, if any (provenance only).
fn worktree_head(path: &Path) -> Option<String> {
    let dir = if path.is_dir() { path } else { path.parent()? };
    let out = Command::new("git")
        .arg("-C")
        .arg(dir)
        .args(["rev-parse", "--verify", "--quiet", "HEAD"])
        .output()
        .ok()?;
    out.status
        .success()
        .then(|| String::from_utf8_lossy(&out.stdout).trim().to_owned())
        .filter(|s| !s.is_empty())
}

fn git(args: &[&str], dir: Option<&Path>) -> Result<String> {
    let mut cmd = Command::new("git");
    if let Some(d) = dir {
        cmd.arg("-C").arg(d);
    }
    cmd.args([
        "-c",
        "protocol.file.allow=always",
        "-c",
        "advice.detachedHead=false",
    ]);
    cmd.args(args);
    let out = cmd
        .output()
        .map_err(|e| Error::Git(format!("cannot run git: {e}")))?;
    if !out.status.success() {
        return Err(Error::Git(format!(
            "git {} failed: {}",
            args.join(" "),
            String::from_utf8_lossy(&out.stderr).trim()
        )));
    }
    Ok(String::from_utf8_lossy(&out.stdout).trim().to_owned())
}

/// Checks `repo` out at `rev` into the cache (once per repo and resolved commit) and returns the
/// checkout folder and the full commit id. A half-written checkout is never reused: the folder
/// is filled under a temporary name and renamed when complete.
pub fn checkout_git(repo: &str, rev: &str) -> Result<(PathBuf, String)> {
    let key = blake3::hash(repo.as_bytes()).to_hex();
    let root = cache_dir().join("git").join(&key.as_str()[..16]);
    std::fs::create_dir_all(&root).map_err(|e| Error::io(&root, e))?;
    // A full 40-hex rev names its checkout directly; anything else is resolved after cloning.
    if rev.len() == 40 && rev.bytes().all(|b| b.is_ascii_hexdigit()) {
        let done = root.join(rev);
        if done.is_dir() {
            return Ok((done, rev.to_owned()));
        }
    }
    let tmp = root.join(format!(
        ".tmp-{}-{}",
        std::process::id(),
        rev.replace('/', "_")
    ));
    let _ = std::fs::remove_dir_all(&tmp);
    let tmp_s = tmp.display().to_string();
    git(&["clone", "--quiet", "--no-checkout", repo, &tmp_s], None)?;
    let resolved = git(
        &["rev-parse", "--verify", &format!("{rev}^{{commit}}")],
        Some(&tmp),
    )
    .map_err(|_| Error::Git(format!("revision {rev} not found in {repo}")))?;
    git(&["checkout", "--quiet", "--detach", &resolved], Some(&tmp))?;
    let _ = std::fs::remove_dir_all(tmp.join(".git"));
    let done = root.join(&resolved);
    if done.is_dir() {
        let _ = std::fs::remove_dir_all(&tmp);
    } else {
        std::fs::rename(&tmp, &done).map_err(|e| Error::io(&done, e))?;
    }
    Ok((done, resolved))
}
