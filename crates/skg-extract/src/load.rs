//! One package → one [`Loaded`] skill: read, parse, normalize.

use std::{collections::BTreeMap, path::Path};

use serde_json::{Map, Value};
use skg_model::{
    Diagnostic, DiagnosticCode, Document, Frontmatter, FrontmatterStatus, RegistryName,
    ScriptStructure, SectionRole, Severity, Skill, SkillId, SkillKind,
};
use skg_syntax::{Language, ScriptFacts};

use crate::{
    Limits, documents,
    frontmatter::{self, Parsed},
    manifest,
    markdown::{self, Outline},
    read::{self, TextFile},
    walk::{self, Package},
};

/// A markdown file of a package.
#[derive(Debug)]
pub(crate) struct MdText {
    /// Relative to the skill root.
    pub(crate) path: String,
    /// Text (for `SKILL.md`: the body after the frontmatter).
    pub(crate) text: String,
    pub(crate) outline: Outline,
    /// File line of the text's first line.
    pub(crate) first_line: u32,
}

/// A parsed script of a package.
#[derive(Debug)]
pub(crate) struct Script {
    /// Relative to the skill root.
    pub(crate) path: String,
    pub(crate) facts: ScriptFacts,
}

/// A skill with what the later passes need (markdown structure, script facts, frontmatter).
#[derive(Debug)]
pub(crate) struct Loaded {
    pub(crate) skill: Skill,
    /// Index of the registry source.
    pub(crate) registry: usize,
    /// `SKILL.md`'s body first, then the other markdown files by path.
    pub(crate) md: Vec<MdText>,
    pub(crate) scripts: Vec<Script>,
    pub(crate) frontmatter: Map<String, Value>,
    /// File line of each top-level frontmatter key.
    pub(crate) key_lines: BTreeMap<String, u32>,
    /// A catalog's tool: the catalog file's line where its entry is, when known.
    pub(crate) entry_line: Option<u32>,
    /// A catalog's tool in a JSON or YAML document: the column of its entry's key on that line.
    pub(crate) entry_column: Option<u32>,
    /// A catalog's tool: its parameters and results ([`skg_model::ToolParameter`]).
    pub(crate) parameters: Vec<skg_model::ToolParameter>,
}

impl Loaded {
    /// L0, L1 and the L2 sections of every markdown file.
    pub(crate) fn documents(&self) -> Vec<Document> {
        let body = self.md.first().map_or("", |m| m.text.as_str());
        let mut out = vec![documents::l0(&self.skill, body)];
        let md: Vec<documents::MdFile<'_>> = self
            .md
            .iter()
            .enumerate()
            .map(|(i, m)| documents::MdFile {
                path: &m.path,
                text: &m.text,
                outline: &m.outline,
                first_line: m.first_line,
                skill_md: i == 0,
            })
            .collect();
        if let Some(body) = md.first() {
            out.push(documents::l1(&self.skill, body));
        }
        for f in &md {
            documents::l2(&self.skill, f, &mut out);
        }
        out
    }

    /// The finished skill row (the body moves in from `md[0]`).
    pub(crate) fn into_skill(mut self) -> Skill {
        if let Some(first) = self.md.first_mut() {
            self.skill.body = std::mem::take(&mut first.text);
        }
        self.skill
    }

    /// Registry-relative path of a package file.
    pub(crate) fn file_path(&self, inner: &str) -> String {
        walk::join(&self.skill.root, inner)
    }
}

const SCRIPT_EXTS: &[&str] = &[
    "py", "js", "mjs", "cjs", "jsx", "ts", "mts", "cts", "tsx", "sh", "bash", "zsh", "fish", "rb",
    "pl", "ps1", "go", "rs", "lua", "php", "r", "jl", "swift", "kt", "java", "cs",
];

pub(crate) fn is_script(path: &str) -> bool {
    path.rsplit_once('.')
        .is_some_and(|(_, ext)| SCRIPT_EXTS.contains(&ext.to_ascii_lowercase().as_str()))
}

fn is_markdown(path: &str) -> bool {
    path.rsplit_once('.').is_some_and(|(_, ext)| {
        matches!(ext.to_ascii_lowercase().as_str(), "md" | "markdown" | "mdx")
    })
}

/// Reads and normalizes one package. `None` only when `SKILL.md` itself can't be read as text.
pub(crate) fn load_package(
    registry: &RegistryName,
    registry_idx: usize,
    registry_root: &Path,
    files: &dyn read::Files,
    pkg: &Package,
    limits: &Limits,
) -> (Option<Loaded>, Vec<Diagnostic>) {
    let mut diags = Vec::new();
    let skill_path = walk::join(&pkg.root, &pkg.skill_file);
    let diag = |path: &str, line: Option<u32>, severity, code, message: String| Diagnostic {
        registry: registry.clone(),
        path: path.to_owned(),
        line,
        severity,
        code,
        message,
    };
    let mut hasher = blake3::Hasher::new();
    let (text, size) = match files.text(&skill_path, limits.max_file_bytes) {
        TextFile::Text {
            text,
            size,
            digest,
            issues,
        } => {
            hash_file(&mut hasher, &pkg.skill_file, size, &digest);
            for i in issues {
                diags.push(diag(&skill_path, i.line, i.severity, i.code, i.message));
            }
            (text, size)
        }
        TextFile::Binary { size, .. } => {
            diags.push(diag(
                &skill_path,
                None,
                Severity::Error,
                DiagnosticCode::BinaryFile,
                format!(
                    "{} is not text ({size} bytes with NUL bytes); the package was skipped",
                    pkg.skill_file
                ),
            ));
            return (None, diags);
        }
        TextFile::Unreadable(e) => {
            diags.push(diag(
                &skill_path,
                None,
                Severity::Error,
                DiagnosticCode::Io,
                format!("cannot read: {e}; the package was skipped"),
            ));
            return (None, diags);
        }
    };

    let parsed = frontmatter::parse(&text);
    for i in &parsed.issues {
        diags.push(diag(
            &skill_path,
            Some(i.line),
            i.severity,
            i.code,
            i.message.clone(),
        ));
    }
    let mut body = text;
    body.drain(..parsed.body_offset);
    let body_outline = markdown::outline(&body);
    let mut md = vec![MdText {
        path: pkg.skill_file.clone(),
        text: body,
        outline: body_outline,
        first_line: parsed.body_line,
    }];

    let mut scripts = Vec::new();
    let mut script_files = Vec::new();
    let mut script_text = String::new();
    let mut script_structures = Vec::new();
    for inner in &pkg.files {
        let rel = walk::join(&pkg.root, inner);
        let want_text = is_markdown(inner) || is_script(inner);
        if !want_text {
            // Hash other files (assets, data) without decoding them.
            match files.bytes(&rel, limits.max_file_bytes) {
                Ok((raw, size)) => hash_file(&mut hasher, inner, size, &blake3::hash(&raw)),
                Err(e) => diags.push(diag(
                    &rel,
                    None,
                    Severity::Warning,
                    DiagnosticCode::Io,
                    format!("cannot read: {e}"),
                )),
            }
            continue;
        }
        match files.text(&rel, limits.max_file_bytes) {
            TextFile::Text {
                text,
                size,
                digest,
                issues,
            } => {
                hash_file(&mut hasher, inner, size, &digest);
                for i in issues {
                    diags.push(diag(&rel, i.line, i.severity, i.code, i.message));
                }
                if is_markdown(inner) {
                    let outline = markdown::outline(&text);
                    md.push(MdText {
                        path: inner.clone(),
                        text,
                        outline,
                        first_line: 1,
                    });
                } else {
                    script_files.push(inner.clone());
                    let lang = Language::from_path(Path::new(inner));
                    let (structure, facts) = match lang {
                        Some(lang) => {
                            let s = skg_syntax::script_within(lang, &text, limits.parse_budget);
                            (s.structure, Some((lang, s.facts)))
                        }
                        None => (skg_syntax::plain_structure(&text), None),
                    };
                    script_structures.push(ScriptStructure {
                        path: inner.clone(),
                        hash: structure.hash,
                        tokens: structure.tokens,
                    });
                    if let Some((lang, facts)) = facts {
                        if facts.timed_out {
                            diags.push(diag(
                                &rel,
                                None,
                                Severity::Warning,
                                DiagnosticCode::ScriptTimeout,
                                format!(
                                    "parsing took longer than {} ms; no imports or calls read (raise --max-parse-ms)",
                                    limits.parse_budget.as_millis()
                                ),
                            ));
                        } else if facts.has_errors {
                            diags.push(diag(
                                &rel,
                                None,
                                Severity::Info,
                                DiagnosticCode::ScriptSyntax,
                                format!(
                                    "{} syntax errors; imports and calls may be partial",
                                    lang.as_str()
                                ),
                            ));
                        }
                        scripts.push(Script {
                            path: inner.clone(),
                            facts,
                        });
                    }
                    script_text.push_str(&text);
                    script_text.push('\n');
                }
            }
            TextFile::Binary { size, digest } => {
                hash_file(&mut hasher, inner, size, &digest);
                diags.push(diag(
                    &rel,
                    None,
                    Severity::Warning,
                    DiagnosticCode::BinaryFile,
                    "not text (NUL bytes); not read as markdown or script".into(),
                ));
            }
            TextFile::Unreadable(e) => {
                diags.push(diag(
                    &rel,
                    None,
                    Severity::Warning,
                    DiagnosticCode::Io,
                    format!("cannot read: {e}"),
                ));
            }
        }
    }

    let folder = pkg.root.rsplit('/').next().unwrap_or(".").to_owned();
    let folder = if folder == "." {
        registry_root.file_name().map_or_else(
            || registry.to_string(),
            |n| n.to_string_lossy().into_owned(),
        )
    } else {
        folder
    };
    let skill = normalize(NormalizeInput {
        registry,
        kind: SkillKind::Skill,
        path: &skill_path,
        root: &pkg.root,
        folder: &folder,
        parsed: &parsed,
        body: &md[0].text,
        body_outline: &md[0].outline,
        files: pkg.files.clone(),
        scripts: script_files,
        script_structures,
        script_text: &script_text,
        bytes: size,
        content_hash: hasher.finalize().to_hex().to_string(),
        diags: &mut diags,
    });
    let loaded = Loaded {
        skill,
        registry: registry_idx,
        md,
        scripts,
        frontmatter: parsed.map,
        key_lines: parsed.key_lines,
        entry_line: None,
        entry_column: None,
        parameters: Vec::new(),
    };
    (Some(loaded), diags)
}

/// Adds one file (path, size on disk, blake3 of the bytes read) to a package hash.
fn hash_file(h: &mut blake3::Hasher, path: &str, size: u64, digest: &blake3::Hash) {
    h.update(path.as_bytes());
    h.update(&[0]);
    h.update(&size.to_le_bytes());
    h.update(digest.as_bytes());
}

pub(crate) struct NormalizeInput<'a> {
    pub(crate) registry: &'a RegistryName,
    pub(crate) kind: SkillKind,
    pub(crate) path: &'a str,
    pub(crate) root: &'a str,
    pub(crate) folder: &'a str,
    pub(crate) parsed: &'a Parsed,
    /// The body; the skill row gets it when extraction ends ([`Loaded::into_skill`]).
    pub(crate) body: &'a str,
    pub(crate) body_outline: &'a Outline,
    pub(crate) files: Vec<String>,
    pub(crate) scripts: Vec<String>,
    pub(crate) script_structures: Vec<ScriptStructure>,
    pub(crate) script_text: &'a str,
    pub(crate) bytes: u64,
    pub(crate) content_hash: String,
    pub(crate) diags: &'a mut Vec<Diagnostic>,
}

/// Frontmatter + body → the normalized [`Skill`], with name/description diagnostics.
pub(crate) fn normalize(input: NormalizeInput<'_>) -> Skill {
    use manifest::{as_list, as_text, get};
    let m = &input.parsed.map;
    let meta = manifest::metadata(m);
    let line_of = |k: &str| input.parsed.key_lines.get(k).copied();
    let mut diag = |line: Option<u32>, severity, code, message: String| {
        input.diags.push(Diagnostic {
            registry: input.registry.clone(),
            path: input.path.to_owned(),
            line,
            severity,
            code,
            message,
        });
    };
    let checks = input.kind == SkillKind::Skill;

    let declared = get(m, &["name"]).and_then(as_text);
    let slug_field = get(m, &["slug"]).and_then(as_text);
    let name = declared
        .clone()
        .or_else(|| slug_field.clone())
        .unwrap_or_else(|| input.folder.to_owned());
    let name_valid = manifest::is_valid_name(&name);
    let slug = if name_valid {
        name.clone()
    } else if let Some(s) = slug_field.as_ref().filter(|s| manifest::is_valid_name(s)) {
        s.clone()
    } else {
        Some(manifest::kebab(&name))
            .filter(|k| !k.is_empty())
            .unwrap_or_else(|| manifest::kebab(input.folder))
    };
    if checks && input.parsed.status != FrontmatterStatus::Missing {
        if declared.is_none() {
            diag(
                None,
                Severity::Warning,
                DiagnosticCode::NameMissing,
                format!("no `name`; using `{name}`"),
            );
        } else if !name_valid {
            diag(
                line_of("name"),
                Severity::Warning,
                DiagnosticCode::NameNotKebab,
                format!(
                    "name `{name}` is not lowercase kebab-case (≤ 64 chars); routing key `{slug}`"
                ),
            );
        }
    }
    let name_matches_folder = slug == input.folder;
    if checks && declared.is_some() && !name_matches_folder && input.root != "." {
        diag(
            line_of("name"),
            Severity::Info,
            DiagnosticCode::NameFolderMismatch,
            format!("name `{slug}` differs from its folder `{}`", input.folder),
        );
    }

    let description = get(m, &["description"])
        .and_then(as_text)
        .or_else(|| {
            meta.as_ref()
                .and_then(|md| get(md, &["short-description", "description"]))
                .and_then(as_text)
        })
        .unwrap_or_default();
    if checks && input.parsed.status != FrontmatterStatus::Missing {
        if description.is_empty() {
            diag(
                line_of("description"),
                Severity::Warning,
                DiagnosticCode::DescriptionMissing,
                "no or empty `description`: agents can't tell when to use this skill".into(),
            );
        } else if description.chars().count() > 1024 {
            diag(
                line_of("description"),
                Severity::Warning,
                DiagnosticCode::DescriptionTooLong,
                format!(
                    "description is {} characters, over the spec's 1,024",
                    description.chars().count()
                ),
            );
        }
    }

    let when_to_use = get(
        m,
        &[
            "when_to_use",
            "when-to-use",
            "whenToUse",
            "use_when",
            "use-when",
            "triggers",
        ],
    )
    .and_then(as_text)
    .or_else(|| sentence_after(&description, &USE_WHEN))
    .or_else(|| section_text(input.body, input.body_outline, SectionRole::WhenToUse));
    let when_not_to_use = get(
        m,
        &[
            "when_not_to_use",
            "when-not-to-use",
            "whenNotToUse",
            "not_for",
            "not-for",
            "do_not_use_when",
        ],
    )
    .and_then(as_text)
    .or_else(|| sentence_after(&description, &NOT_WHEN))
    .or_else(|| section_text(input.body, input.body_outline, SectionRole::WhenNotToUse));

    let tags = manifest::tags(m, meta.as_ref());
    let category = get(m, &["category"])
        .or_else(|| meta.as_ref().and_then(|md| md.get("category")))
        .and_then(as_text);
    let allowed_tools = get(m, &["allowed-tools", "allowed_tools", "allowedTools"])
        .map(|v| as_list(v, true))
        .unwrap_or_default();
    let version = get(m, &["version"])
        .or_else(|| meta.as_ref().and_then(|md| md.get("version")))
        .and_then(as_text);
    let license = get(m, &["license", "licence"]).and_then(as_text);
    let requires = manifest::requires(m);
    let inputs = manifest::io(m, "inputs");
    let outputs = manifest::io(m, "outputs");
    let platforms = manifest::platforms(m, &requires, &[&description, input.body]);
    let (risk_tier, risk_reasons) = manifest::risk(&manifest::RiskInput {
        allowed_tools: &allowed_tools,
        requires: Some(&requires),
        scripts: input.scripts.len(),
        texts: &[input.body, input.script_text],
        shell_blocks: input.body_outline.shell_blocks(),
    });
    let headings: Vec<&str> = input
        .body_outline
        .headings
        .iter()
        .map(|h| h.text.as_str())
        .collect();
    let capability = crate::capability::taxonomy().classify(&crate::capability::CapabilityInput {
        name: &name,
        category: category.as_deref(),
        tags: &tags,
        texts: &[&description, when_to_use.as_deref().unwrap_or("")],
        headings: &headings,
    });
    let mut keys: Vec<String> = m.keys().cloned().collect();
    keys.sort();
    Skill {
        id: SkillId::new(input.registry, input.root),
        registry: input.registry.clone(),
        kind: input.kind,
        path: input.path.to_owned(),
        root: input.root.to_owned(),
        folder: input.folder.to_owned(),
        name,
        slug,
        name_valid,
        name_matches_folder,
        description,
        when_to_use,
        when_not_to_use,
        tags,
        category,
        allowed_tools,
        version,
        license,
        requires,
        inputs,
        outputs,
        platforms,
        risk_tier,
        risk_reasons,
        capability: capability.kind,
        capability_confidence: capability.confidence,
        frontmatter: Frontmatter {
            status: input.parsed.status,
            json: serde_json::to_string(&Value::Object(input.parsed.map.clone()))
                .unwrap_or_else(|_| "{}".into()),
            keys,
        },
        body: String::new(),
        body_line: input.parsed.body_line,
        files: input.files,
        scripts: input.scripts,
        script_structures: input.script_structures,
        bytes: input.bytes,
        content_hash: input.content_hash,
    }
}

use std::sync::LazyLock;

use regex::Regex;

static USE_WHEN: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"(?i)\b(?:use (?:this skill |it )?(?:when|for|to)|trigger(?:s|ed)? (?:when|on)|invoke when)\b").expect("static regex is valid")
});
static NOT_WHEN: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(
        r"(?i)\b(?:do not use|don't use|not for|avoid (?:using )?(?:this skill )?when|never use)\b",
    )
    .expect("static regex is valid")
});
/// The sentence of `text` starting at the first match of `re` (up to the next `.`).
fn sentence_after(text: &str, re: &Regex) -> Option<String> {
    let m = re.find(text)?;
    let rest = &text[m.start()..];
    let end = rest.find(". ").map_or(rest.len(), |i| i + 1);
    Some(rest[..end].trim().to_owned()).filter(|s| s.len() > m.len())
}

/// Text of `SKILL.md`'s first section with `role` (list items and first paragraph, at most 600
/// characters): the role extract gives its L2 documents (`roles::section_role`), so the card's
/// fallback and the index's usage vectors read the same sections.
fn section_text(body: &str, outline: &Outline, role: SectionRole) -> Option<String> {
    for s in &outline.sections {
        if crate::roles::section_role(true, &s.heading_path) != role {
            continue;
        }
        let text: Vec<&str> = body[s.content_start..s.end]
            .lines()
            .map(str::trim)
            .filter(|l| !l.is_empty() && !l.starts_with("```"))
            .collect();
        let joined = text.join(" ");
        if !joined.is_empty() {
            return Some(documents::truncate(&joined, 600));
        }
    }
    None
}
