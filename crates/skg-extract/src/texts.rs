//! The text files of every package, for the security scan (which never reads the disk itself).

use rayon::prelude::*;
use skg_model::{
    Diagnostic, DiagnosticCode, FileKind, FileText, PackageText, Progress, RegistryKind, Severity,
    SkillId, SkillKind,
};

use crate::{
    Limits, RegistrySource, catalog,
    read::{Disk, Files},
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
                for (i, path) in all.enumerate() {
                    let (text, diag) = scan_text(&disk, &path, i == 0, limits.max_file_bytes);
                    if let Some((code, message)) = diag {
                        diags.push(Diagnostic {
                            registry: src.name.clone(),
                            path: path.clone(),
                            line: None,
                            severity: Severity::Warning,
                            code,
                            message,
                        });
                    }
                    if let Some(text) = text {
                        files.push(FileText { path, text });
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

/// The file at `path` as the scan reads it (`None`: not read), and what to say about it: a file
/// cut at `max_bytes` was not scanned whole; a file the probe calls binary for a NUL byte is
/// read without its NULs when it is the package's main file, text by its name or starts with
/// `#!` — a NUL makes a file binary to the probe, not to the agent reading it nor to the shell
/// running it (bash reads past one after the first line) —; other binaries are passed over.
fn scan_text(
    disk: &Disk<'_>,
    path: &str,
    main: bool,
    max_bytes: u64,
) -> (Option<String>, Option<(DiagnosticCode, String)>) {
    // One read: the probe, the decision and the decoding work on the same bytes.
    let (mut raw, size) = match disk.bytes(path, max_bytes) {
        Ok(read) => read,
        Err(e) => {
            let message = format!("cannot read: {e}; not scanned");
            return (None, Some((DiagnosticCode::Io, message)));
        }
    };
    let binary = crate::read::looks_binary(&raw);
    // A `#!` file is a script whatever its name.
    if binary && !(main || FileKind::of(path).is_text() || raw.starts_with(b"#!")) {
        return (None, None);
    }
    if binary {
        raw.retain(|&b| b != 0);
    }
    let (text, issues) = crate::read::decode(raw, size, max_bytes, crate::read::FILE_FLAG);
    let cut = issues
        .into_iter()
        .find(|i| i.code == DiagnosticCode::FileTooLarge);
    let said = match (binary, cut) {
        (false, None) => None,
        (false, Some(i)) => Some((
            DiagnosticCode::FileTooLarge,
            format!("{}; the rest is not scanned", i.message),
        )),
        (true, cut) => {
            let (code, rest) = if cut.is_some() {
                let rest = "; cut at --max-file-bytes, the rest is not scanned";
                (DiagnosticCode::FileTooLarge, rest)
            } else {
                (DiagnosticCode::BinaryFile, "")
            };
            let message = format!(
                "holds NUL bytes but is a text file by its name, role or #! line: scanned \
                 without them{rest}"
            );
            Some((code, message))
        }
    };
    (Some(text), said)
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
