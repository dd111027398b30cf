//! The text files of every package, for the security scan (which never reads the disk itself).

use rayon::prelude::*;
use skg_model::{
    Diagnostic, DiagnosticCode, FileText, PackageText, Progress, RegistryKind, Severity, SkillId,
    SkillKind,
};

use crate::{
    Limits, RegistrySource, catalog,
    read::{Disk, Files, TextFile},
    walk,
};

/// MCP server configs scanned as packages when no `SKILL.md` owns them.
const MCP_CONFIGS: &[&str] = &[".mcp.json", "mcp.json"];

/// Every package's text files, and what could not be read. Packages are skill folders, folders
/// holding an MCP config (`.mcp.json`, `mcp.json`) that no skill folder owns, and the tools of
/// tool catalogs and OpenAPI documents: one package per tool, with the ids extract gives them,
/// whose one file is all an agent host shows the model of the tool: the text extract writes for
/// it, then the other strings of its schema (`catalog::scan_text`). Sorted by id; each
/// package's main file first.
pub fn package_texts(
    sources: &[RegistrySource],
    limits: &Limits,
    progress: &dyn Progress,
) -> (Vec<PackageText>, Vec<Diagnostic>) {
    let mut out = Vec::new();
    let mut diagnostics = Vec::new();
    for (ri, src) in sources.iter().enumerate() {
        if src.kind == RegistryKind::ToolCatalog {
            progress.phase(&format!("read {}", src.name), 1);
            let (tools, diags) = catalog::load(&src.name, ri, &src.local_path, limits);
            diagnostics.extend(diags);
            out.extend(tools.into_iter().map(|t| {
                let (text, cut) = catalog::scan_text(&t, limits.max_file_bytes);
                if cut {
                    diagnostics.push(Diagnostic {
                        registry: src.name.clone(),
                        path: t.skill.path.clone(),
                        line: None,
                        severity: Severity::Error,
                        code: DiagnosticCode::FileTooLarge,
                        message: format!(
                            "the tool's text was cut at {} bytes (--max-file-bytes) or 100,000 \
                             strings; the rest is not scanned",
                            limits.max_file_bytes
                        ),
                    });
                }
                PackageText {
                    id: t.skill.id,
                    registry: src.name.clone(),
                    files: vec![FileText {
                        path: t.skill.path,
                        text,
                    }],
                    root: t.skill.root,
                    name: Some(t.skill.name),
                    description: Some(t.skill.description).filter(|d| !d.is_empty()),
                    kind: SkillKind::Tool,
                    entry_line: t.entry_line,
                    entry_column: t.entry_column,
                    parameters: t.parameters,
                }
            }));
            progress.advance(1);
            continue;
        }
        let walked = walk::walk(&src.name, &src.local_path, limits);
        diagnostics.extend(walked.diagnostics);
        let disk = Disk {
            root: &src.local_path,
            real_paths: &walked.real_paths,
        };
        let units = with_mcp_configs(walked.packages, &walked.files);
        progress.phase(&format!("read {}", src.name), units.len() as u64);
        let read: Vec<(PackageText, Vec<Diagnostic>)> = units
            .par_iter()
            .map(|pkg| {
                let mut diags = Vec::new();
                let mut files = Vec::new();
                let main = walk::join(&pkg.root, &pkg.skill_file);
                let all =
                    std::iter::once(main).chain(pkg.files.iter().map(|f| walk::join(&pkg.root, f)));
                let is_main_file = |path: &str| path == walk::join(&pkg.root, &pkg.skill_file);
                for path in all {
                    match disk.text(&path, limits.max_file_bytes) {
                        TextFile::Text { text, issues, .. } => {
                            // What was cut was not scanned: said, and counted by the scan.
                            if let Some(cut) = issues
                                .iter()
                                .find(|i| i.code == DiagnosticCode::FileTooLarge)
                            {
                                diags.push(Diagnostic {
                                    registry: src.name.clone(),
                                    path: path.clone(),
                                    line: None,
                                    severity: Severity::Warning,
                                    code: DiagnosticCode::FileTooLarge,
                                    message: format!("{}; the rest is not scanned", cut.message),
                                });
                            }
                            files.push(FileText { path, text });
                        }
                        TextFile::Binary { .. } if is_main_file(&path) || text_like(&path) => {
                            // A NUL byte makes a file binary to the probe, not to the agent
                            // reading it nor to the shell running it (bash reads past a NUL
                            // after the first line): such a file is scanned without its NULs,
                            // never passed over as binary.
                            let read = disk
                                .bytes(&path, limits.max_file_bytes)
                                .map(|(raw, size)| without_nul(raw, size, limits.max_file_bytes));
                            match read {
                                Ok((text, cut)) => {
                                    let (code, rest) = if cut {
                                        (
                                            DiagnosticCode::FileTooLarge,
                                            "; cut at --max-file-bytes, the rest is not scanned",
                                        )
                                    } else {
                                        (DiagnosticCode::BinaryFile, "")
                                    };
                                    diags.push(Diagnostic {
                                        registry: src.name.clone(),
                                        path: path.clone(),
                                        line: None,
                                        severity: Severity::Warning,
                                        code,
                                        message: format!(
                                            "holds NUL bytes but is a text file by its name or \
                                             role: scanned without them{rest}"
                                        ),
                                    });
                                    files.push(FileText { path, text });
                                }
                                Err(e) => diags.push(Diagnostic {
                                    registry: src.name.clone(),
                                    path,
                                    line: None,
                                    severity: Severity::Warning,
                                    code: DiagnosticCode::Io,
                                    message: format!("cannot read: {e}; not scanned"),
                                }),
                            }
                        }
                        TextFile::Binary { .. } => {}
                        TextFile::Unreadable(e) => diags.push(Diagnostic {
                            registry: src.name.clone(),
                            path,
                            line: None,
                            severity: Severity::Warning,
                            code: DiagnosticCode::Io,
                            message: format!("cannot read: {e}; not scanned"),
                        }),
                    }
                }
                progress.advance(1);
                // What the package says it is, read as extract reads it (repairs included).
                let declared = |key: &str| -> Option<String> {
                    let main = files
                        .first()
                        .filter(|_| !MCP_CONFIGS.contains(&pkg.skill_file.as_str()))?;
                    crate::frontmatter::parse(&main.text)
                        .map
                        .get(key)
                        .and_then(serde_json::Value::as_str)
                        .map(str::trim)
                        .filter(|v| !v.is_empty())
                        .map(str::to_owned)
                };
                let (name, description) = (declared("name"), declared("description"));
                (
                    PackageText {
                        id: SkillId::new(&src.name, &pkg.root),
                        registry: src.name.clone(),
                        root: pkg.root.clone(),
                        files,
                        name,
                        description,
                        kind: SkillKind::Skill,
                        entry_line: None,
                        entry_column: None,
                        parameters: Vec::new(),
                    },
                    diags,
                )
            })
            .collect();
        for (p, d) in read {
            out.push(p);
            diagnostics.extend(d);
        }
    }
    out.sort_by(|a, b| a.id.cmp(&b.id));
    (out, diagnostics)
}

/// The skill packages, plus one package per MCP config that no skill package owns (holding
/// only that file), sorted by root.
fn with_mcp_configs(mut packages: Vec<walk::Package>, files: &[String]) -> Vec<walk::Package> {
    let owned = |path: &str| {
        packages
            .iter()
            .any(|p| p.root == "." || path.starts_with(&format!("{}/", p.root)))
    };
    let mut extra = Vec::new();
    for f in files {
        let (dir, name) = f.rsplit_once('/').unwrap_or((".", f.as_str()));
        if MCP_CONFIGS.contains(&name) && !owned(f) {
            extra.push(walk::Package {
                root: dir.to_owned(),
                skill_file: name.to_owned(),
                files: Vec::new(),
            });
        }
    }
    packages.extend(extra);
    packages.sort_by(|a, b| a.root.cmp(&b.root));
    packages.dedup_by(|a, b| a.root == b.root);
    packages
}

/// File names read as text even when a NUL byte makes them look binary: markdown, plain text,
/// configuration and the scripts the scan reads as such (what an agent host shows the model or
/// a shell runs).
fn text_like(path: &str) -> bool {
    let name = path.rsplit('/').next().unwrap_or(path).to_ascii_lowercase();
    let ext = name.rsplit_once('.').map_or("", |(_, e)| e);
    matches!(
        ext,
        "md" | "markdown"
            | "txt"
            | "json"
            | "yaml"
            | "yml"
            | "toml"
            | "sh"
            | "bash"
            | "zsh"
            | "ksh"
            | "py"
            | "js"
            | "mjs"
            | "cjs"
            | "jsx"
            | "ts"
            | "mts"
            | "cts"
            | "ps1"
            | "rb"
            | "pl"
            | "bat"
            | "cmd"
    )
}

/// `raw` (the first `max_bytes` of a `size`-byte file) as text with its NUL bytes removed,
/// decoded as every file is ([`crate::read::decode`]); whether it was cut.
fn without_nul(mut raw: Vec<u8>, size: u64, max_bytes: u64) -> (String, bool) {
    raw.retain(|&b| b != 0);
    let (text, issues) = crate::read::decode(raw, size, max_bytes, crate::read::FILE_FLAG);
    let cut = issues
        .iter()
        .any(|i| i.code == DiagnosticCode::FileTooLarge);
    (text, cut)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_mcp_config_outside_skill_folders_is_a_package_of_its_own() {
        let skill = walk::Package {
            root: "a".into(),
            skill_file: "SKILL.md".into(),
            files: vec![".mcp.json".into()],
        };
        let files: Vec<String> = ["a/SKILL.md", "a/.mcp.json", "b/.mcp.json", "c/readme.md"]
            .map(String::from)
            .to_vec();
        let units = with_mcp_configs(vec![skill.clone()], &files);
        assert_eq!(units.len(), 2);
        assert_eq!(units[0], skill);
        assert_eq!(
            units[1],
            walk::Package {
                root: "b".into(),
                skill_file: ".mcp.json".into(),
                files: Vec::new()
            }
        );
    }
}
