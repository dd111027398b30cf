//! Relations stated in frontmatter fields and in markdown (prose, lists, links).

use std::{borrow::Cow, sync::LazyLock};

use regex::Regex;
use skg_model::{Diagnostic, DiagnosticCode, EdgeKind, EdgeSource, Severity};

use super::{
    Candidate, evidence,
    names::{NameIndex, join_rel, parent},
};
use crate::{
    load::{Loaded, MdText},
    manifest::{as_list, metadata},
    read::Files,
};

fn re(s: &str) -> Regex {
    Regex::new(s).expect("static regex is valid")
}

static REQUIRED_LINE: LazyLock<Regex> = LazyLock::new(|| {
    re(
        r"(?i)\brequired\b|\brequires?\b|\bprerequisites?\b|\bmust\s+(?:first\s+)?(?:use|invoke|load|read|run|call|complete|apply|have)\b|\bdepends?\s+on\b|\bbuilds?\s+on\b|\bbefore\s+(?:using|starting|you\s+(?:start|begin))\b",
    )
});
static REQUIRED_HEADING: LazyLock<Regex> = LazyLock::new(|| {
    re(
        r"(?i)^(?:pre-?requisites?|requirements?|required(?:\s+\w+)?|dependencies|depends on|before (?:you )?(?:start|begin)\w*)\b",
    )
});
static RELATED_HEADING: LazyLock<Regex> = LazyLock::new(|| {
    re(
        r"(?i)\b(?:related|see also|complementary|companion|works? (?:well )?with|pairs? (?:well )?with|other skills|next steps?|integrations? with other skills)\b",
    )
});
static RELATED_LINE: LazyLock<Regex> = LazyLock::new(|| {
    re(r"(?i)\b(?:see also|related skills?|complements?|pairs? well with|works? well with)\b")
});
static INVOKE_BEFORE: LazyLock<Regex> = LazyLock::new(|| {
    re(
        r"(?i)\b(?:use|using|invoke|invoking|load|loading|run|running|call|apply|follow|trigger|activate|switch to|hand off to|delegate to|dispatch|launch|start with)\s+(?:the\s+|a\s+|an\s+)?[*_`'\[(]*(?:[A-Za-z0-9_-]+:)?$",
    )
});
static SKILL_AFTER: LazyLock<Regex> =
    LazyLock::new(|| re(r#"(?i)^[*_`'")\]]*\s+(?:sub-?)?skills?\b"#));
static SKILL_BEFORE: LazyLock<Regex> = LazyLock::new(|| {
    re(
        r#"(?i)\b(?:sub-?)?skills?(?:\s*[:(]\s*|\s+(?:called|named)\s+|\s+[`'"])[*_`'"\[]*(?:[A-Za-z0-9_-]+:)?$"#,
    )
});
static CO_USE_BEFORE: LazyLock<Regex> = LazyLock::new(|| {
    re(
        r"(?i)\b(?:then|afterwards?|followed by|combined? with|together with|alongside|in combination with|paired with|chain(?:ed)? (?:with|into)|after using|before using)\b[^.;!?]{0,40}$",
    )
});
static TAG_LINE: LazyLock<Regex> =
    LazyLock::new(|| re(r"(?i)^[-*\s]*\**(?:tags|keywords|topics|categories|labels)\**\s*:"));
static NAMESPACE_BEFORE: LazyLock<Regex> =
    LazyLock::new(|| re(r"(?:^|[^A-Za-z0-9_/:.-])([A-Za-z0-9_-]+):$"));

/// Frontmatter keys that name other skills, and the relation they declare.
const FIELDS: &[(&str, EdgeKind)] = &[
    ("depends_on", EdgeKind::DependsOn),
    ("depends-on", EdgeKind::DependsOn),
    ("dependsOn", EdgeKind::DependsOn),
    ("requires_skills", EdgeKind::DependsOn),
    ("required_skills", EdgeKind::DependsOn),
    ("required-skills", EdgeKind::DependsOn),
    ("prerequisite_skills", EdgeKind::DependsOn),
    ("extends", EdgeKind::DependsOn),
    ("complements", EdgeKind::Complements),
    ("related", EdgeKind::Complements),
    ("related_skills", EdgeKind::Complements),
    ("related-skills", EdgeKind::Complements),
    ("see_also", EdgeKind::Complements),
    ("see-also", EdgeKind::Complements),
    ("works_with", EdgeKind::Complements),
    ("co_used_with", EdgeKind::CoUsedWith),
    ("used_with", EdgeKind::CoUsedWith),
];

/// Declared relations: the keys in [`FIELDS`] at the top level or under `metadata`, and
/// `requires.skills`.
pub(crate) fn frontmatter_fields(
    index: &NameIndex,
    loaded: &[Loaded],
    i: usize,
    out: &mut Vec<Candidate>,
) {
    let l = &loaded[i];
    let meta = metadata(&l.frontmatter);
    // (key whose line is the evidence, relation, value)
    let mut all: Vec<(&str, EdgeKind, serde_json::Value)> = Vec::new();
    for &(key, kind) in FIELDS {
        if let Some(v) = l.frontmatter.get(key) {
            all.push((key, kind, v.clone()));
        }
        if let Some(v) = meta.as_ref().and_then(|m| m.get(key)) {
            all.push(("metadata", kind, v.clone()));
        }
    }
    if let Some(serde_json::Value::Object(r)) = l.frontmatter.get("requires")
        && let Some(v) = r.get("skills")
    {
        all.push(("requires", EdgeKind::DependsOn, v.clone()));
    }
    for (key, kind, value) in all {
        let line = l.key_lines.get(key).copied().unwrap_or(1);
        for name in as_list(&value, false) {
            let (ns, bare) = match name.rsplit_once(':') {
                Some((ns, b)) => (Some(ns), b),
                None => (None, name.as_str()),
            };
            let bare = bare.rsplit('/').next().unwrap_or(bare);
            let prefer = ns.and_then(|n| index.namespace(n.rsplit('/').next().unwrap_or(n)));
            if let Some((dst, cross)) = index.resolve_name(bare, i, true, prefer)
                && dst != i
            {
                let c = if cross { 0.9 } else { 1.0 };
                out.push(Candidate {
                    src: i,
                    dst,
                    kind,
                    evidence: evidence(
                        "frontmatter",
                        c,
                        EdgeSource::Extracted,
                        l.skill.path.clone(),
                        line,
                        &format!("{key}: {name}"),
                    ),
                    unless_common: None,
                });
            }
        }
    }
}

/// Section context flags for a byte offset.
#[derive(Debug, Clone, Copy, Default)]
struct SectionCtx {
    required: bool,
    related: bool,
}

/// One markdown file of a skill, with what every relation found in it needs: its path in the
/// registry, and the section context and file line of any offset.
struct MdFile<'a> {
    md: &'a MdText,
    text: &'a str,
    /// Registry-relative path.
    path: String,
    /// (start, end, context) of every section, by start.
    sections: Vec<(usize, usize, SectionCtx)>,
}

impl<'a> MdFile<'a> {
    fn new(l: &Loaded, md: &'a MdText) -> MdFile<'a> {
        let sections = md
            .outline
            .sections
            .iter()
            .map(|s| {
                let mut ctx = SectionCtx::default();
                // The nearest heading decides, but a Related/Prerequisites parent covers its
                // subsections.
                for h in &s.heading_path {
                    ctx.required |= REQUIRED_HEADING.is_match(h);
                    ctx.related |= RELATED_HEADING.is_match(h);
                }
                (s.start, s.end, ctx)
            })
            .collect();
        MdFile {
            md,
            text: md.text.as_str(),
            path: l.file_path(&md.path),
            sections,
        }
    }

    fn ctx_at(&self, off: usize) -> SectionCtx {
        let k = self.sections.partition_point(|(s, _, _)| *s <= off);
        if k == 0 {
            SectionCtx::default()
        } else {
            self.sections[k - 1].2
        }
    }

    /// The file line of a byte offset.
    fn line_of(&self, off: usize) -> u32 {
        self.md.first_line + self.md.outline.lines.line(off) - 1
    }

    /// The physical line around `[start, end)`, as byte offsets.
    fn line_bounds(&self, start: usize, end: usize) -> (usize, usize) {
        let line_start = self.text[..start].rfind('\n').map_or(0, |p| p + 1);
        let line_end = self.text[end..]
            .find('\n')
            .map_or(self.text.len(), |p| end + p);
        (line_start, line_end)
    }

    /// `text[a..b]` with line breaks read as spaces.
    fn one_line(&self, a: usize, b: usize) -> Cow<'a, str> {
        let t = &self.text[a..b];
        if t.contains('\n') {
            Cow::Owned(t.replace('\n', " "))
        } else {
            Cow::Borrowed(t)
        }
    }
}

/// Relations in every markdown file of skill `i`: names in prose and lists, links. Returns the
/// names seen as words (for their document frequency).
pub(crate) fn markdown(
    index: &NameIndex,
    loaded: &[Loaded],
    files: &[&dyn Files],
    i: usize,
    out: &mut Vec<Candidate>,
    diags: &mut Vec<Diagnostic>,
) -> Vec<usize> {
    let mut seen: Vec<usize> = Vec::new();
    let l = &loaded[i];
    for md in &l.md {
        let file = MdFile::new(l, md);
        for (start, end, pid) in index.find_names(file.text) {
            seen.push(pid);
            out.extend(mention(index, &file, l.registry, i, (start, end), pid));
        }
        links(index, files[l.registry], &file, l, i, out, diags);
    }
    seen.sort_unstable();
    seen.dedup();
    seen
}

/// Positions where a name is not a mention of a skill: the skill's own name, a name no other
/// skill could answer to, a plain word found only in other registries without a `namespace:`
/// before it (it could only cross registries if marked, and plain words never are), part of a
/// file name (`cover-letter.md`), a host (`mcp.serpapi.com`), an option value (`--x=name`), a
/// variable, an e-mail, or a path segment that does not lead to a skill.
fn not_a_mention(
    index: &NameIndex,
    text: &str,
    reg: usize,
    i: usize,
    (start, end): (usize, usize),
    pid: usize,
) -> bool {
    let bytes = text.as_bytes();
    if !index.may_resolve(pid, i)
        || (!index.in_registry(pid, reg, i)
            && NameIndex::is_ambiguous(&index.names[pid])
            && (start == 0 || bytes[start - 1] != b':'))
    {
        return true;
    }
    let prev = if start > 0 { bytes[start - 1] } else { b' ' };
    let file_ext =
        bytes.get(end) == Some(&b'.') && bytes.get(end + 1).is_some_and(u8::is_ascii_alphabetic);
    file_ext
        || matches!(prev, b'.' | b'@' | b'=' | b'$' | b'#' | b'~')
        || (prev == b'/' && !path_to_skill(&text[..start]))
}

/// What the text around a name says about it.
#[expect(
    clippy::struct_excessive_bools,
    reason = "each flag is one independent reading of the text"
)]
struct Marks<'t> {
    /// The registry that namespace names, if it names one.
    ns_registry: Option<usize>,
    /// Namespaced as a skill reference (not a URL scheme, not a quoted value).
    namespaced: bool,
    /// The prefix of the logical line before the namespace.
    prefix_core: &'t str,
    /// In backticks.
    backticked: bool,
    /// A folder of a path (`x/SKILL.md`, `../x/`).
    path_ref: bool,
    /// A single plain word or common compound.
    ambiguous: bool,
    /// "the X skill" / "skill: X".
    skill_word: bool,
    /// The name heads a list item in a Related section.
    related_item: bool,
    /// In a Prerequisites section or on a requires line.
    required: bool,
    /// In a Prerequisites section (its heading says so).
    required_section: bool,
    /// On a list item of a Related section (anywhere on the item's line).
    in_related_list: bool,
    /// In a Related section (marked), or on a see-also line.
    related: bool,
}

impl Marks<'_> {
    /// The text itself says this is a skill name.
    fn marked(&self) -> bool {
        self.namespaced || self.skill_word || self.related_item
    }

    /// Backticks mark a hyphenated name; a plain word in backticks is a command or a value.
    fn strong(&self) -> bool {
        self.marked() || (self.backticked && !self.ambiguous)
    }
}

/// Reads the marks around the name at `[start, end)` of `line` (`[line_start, …)`), whose
/// logical line is `logical` with `prefix` before the name and `suffix` after it.
fn marks<'t>(
    index: &NameIndex,
    file: &MdFile<'_>,
    name: &str,
    (start, line_start, line): (usize, usize, &str),
    (logical, prefix, suffix): (&str, &'t str, &str),
) -> Marks<'t> {
    let in_code = file.md.outline.in_code_block(start);
    let namespace = NAMESPACE_BEFORE
        .captures(prefix)
        .and_then(|c| c.get(1))
        .map(|g| g.as_str());
    let ns_registry = namespace.and_then(|n| index.namespace(n));
    // `foo:bar` where foo is not a known registry is still a namespaced ref (a plugin name)
    // unless it looks like a URL scheme or a drive.
    let namespaced = namespace.is_some_and(|n| {
        !matches!(
            n.to_ascii_lowercase().as_str(),
            "http" | "https" | "file" | "mailto" | "ftp" | "git" | "ssh"
        ) && n.len() > 1
    }) && (ns_registry.is_some() || (!in_code && !prefix.ends_with(['\'', '"'])));
    let prefix_core = namespace.map_or(prefix, |n| &prefix[..prefix.len() - n.len() - 1]);
    let backticked = prefix_core.ends_with('`') && suffix.starts_with('`');
    // The name is a folder of a path (`agent-protocol/SKILL.md`, `../using-superpowers/refs/`):
    // a pointer to the skill's package, as explicit as backticks.
    let path_ref = suffix.starts_with("/SKILL.md")
        || (suffix.starts_with('/') && (prefix_core.ends_with('/') || prefix_core.ends_with('`')));
    let ambiguous = NameIndex::is_ambiguous(name);
    // "the X skill" / "skill: X": for a plain word only when quoted (`the debugging skill` is
    // prose).
    let skill_word = (SKILL_AFTER.is_match(suffix) || SKILL_BEFORE.is_match(prefix_core))
        && (!ambiguous || backticked);
    let ctx = file.ctx_at(start);
    // The name opens a list item ("- `pdf` — …", "- **plotting-charts**: …").
    let in_line = start - line_start;
    let item_head = list_item_head(line).is_some_and(|head_end| {
        in_line < head_end
            && !line[..in_line]
                .trim_start()
                .trim_start_matches(|c: char| c.is_ascii_digit())
                .chars()
                .any(char::is_alphanumeric)
    });
    let related_item = ctx.related && item_head;
    Marks {
        ns_registry,
        namespaced,
        prefix_core,
        backticked,
        path_ref,
        ambiguous,
        skill_word,
        related_item,
        required: ctx.required || REQUIRED_LINE.is_match(logical),
        required_section: ctx.required,
        in_related_list: ctx.related && list_item_head(line).is_some(),
        related: related_item
            || (ctx.related && (backticked || skill_word))
            || RELATED_LINE.is_match(logical),
    }
}

/// The relation a name at `[start, end)` states, if it is a mention of another skill.
fn mention(
    index: &NameIndex,
    file: &MdFile<'_>,
    reg: usize,
    i: usize,
    (start, end): (usize, usize),
    pid: usize,
) -> Option<Candidate> {
    let text = file.text;
    if not_a_mention(index, text, reg, i, (start, end), pid) {
        return None;
    }
    let (line_start, line_end) = file.line_bounds(start, end);
    let line = &text[line_start..line_end];
    // Context is the logical line: a paragraph wrapped over several lines reads as one.
    let (lstart, lend) = logical_line(text, line_start, line_end);
    let logical = file.one_line(lstart, lend);
    let prefix = file.one_line(lstart, start);
    let suffix = file.one_line(end, lend);
    let m = marks(
        index,
        file,
        &index.names[pid],
        (start, line_start, line),
        (&logical, &prefix, &suffix),
    );
    // Identifiers, commands and values in code blocks and table cells, keywords on a
    // `tags:`/`keywords:`/`topics:` line, and a document's own title are not relations.
    let trimmed = line.trim_start();
    if !m.marked()
        && (file.md.outline.in_code_block(start)
            || trimmed.starts_with('|')
            || TAG_LINE.is_match(trimmed)
            || (trimmed.starts_with("# ") && file.md.outline.lines.line(start) <= 3))
    {
        return None;
    }
    let (strong, ambiguous) = (m.strong(), m.ambiguous);
    // A skill a Related section's list item names (its head, or marked: backticks, "skill") is a
    // related skill, whatever verb the item's text uses ("- `x` — use it before starting" lists
    // x, it does not require it); only a Prerequisites heading makes such an item a requirement.
    let (extractor, kind, mut confidence) = if m.in_related_list && m.related && !m.required_section
    {
        ("related-list", EdgeKind::Complements, 0.6)
    } else if m.required {
        ("required-prose", EdgeKind::DependsOn, 0.7)
    } else if INVOKE_BEFORE.is_match(m.prefix_core) && (strong || !ambiguous) {
        ("invoke-phrase", EdgeKind::DependsOn, 0.6)
    } else if m.related {
        ("related-list", EdgeKind::Complements, 0.6)
    } else if CO_USE_BEFORE.is_match(m.prefix_core) && (strong || !ambiguous) {
        ("co-use-phrase", EdgeKind::CoUsedWith, 0.5)
    } else if m.skill_word {
        ("skill-phrase", EdgeKind::References, 0.5)
    } else if m.namespaced {
        ("namespaced-ref", EdgeKind::References, 0.6)
    } else {
        (
            "mention",
            EdgeKind::References,
            if m.backticked || m.path_ref { 0.5 } else { 0.4 },
        )
    };
    // Another registry only for a distinctive name the text marks as a skill, or a namespace
    // naming that registry (which then resolves there or nowhere).
    let may_cross = (m.marked() && !ambiguous) || m.ns_registry.is_some();
    let (dst, cross) = match m.ns_registry {
        Some(r) => index.resolve_in(pid, i, r),
        None => index.resolve_pattern(pid, i, may_cross, None),
    }?;
    if dst == i {
        return None;
    }
    let mut source = EdgeSource::Inferred;
    // An unmarked occurrence of a name (no backticks, namespace, "skill" word, link or list
    // context) is as often a library, product or plain phrase of the same name as the skill
    // (16 of 25 right on a hand-checked sample): AMBIGUOUS, out of the metrics by default.
    let plain_mention = extractor == "mention" && !m.backticked && !m.path_ref;
    if (ambiguous && !strong) || plain_mention {
        source = EdgeSource::Ambiguous;
        confidence *= 0.5;
    }
    if cross {
        confidence *= 0.8;
    }
    Some(Candidate {
        src: i,
        dst,
        kind,
        evidence: evidence(
            extractor,
            confidence,
            source,
            file.path.clone(),
            file.line_of(start),
            line,
        ),
        unless_common: (!m.marked()).then_some(pid),
    })
}

/// Links to other skills' files (a relation by their section or line), and links to nothing
/// (a `broken-link` diagnostic).
fn links(
    index: &NameIndex,
    files: &dyn Files,
    file: &MdFile<'_>,
    l: &Loaded,
    i: usize,
    out: &mut Vec<Candidate>,
    diags: &mut Vec<Diagnostic>,
) {
    let dir = parent(&file.path);
    for link in &file.md.outline.links {
        let dest = link.dest.trim();
        if dest.is_empty()
            || dest.starts_with('#')
            || dest.starts_with('/')
            || dest.contains("://")
            || dest.starts_with("mailto:")
            || dest.contains('{')
        {
            continue;
        }
        let dest = dest
            .split(['#', '?'])
            .next()
            .unwrap_or(dest)
            .replace("%20", " ");
        let Some(target) = join_rel(dir, &dest) else {
            continue; // climbs above the registry root: not ours to check
        };
        let line_no = file.line_of(link.offset);
        let (line_start, line_end) = file.line_bounds(link.offset, link.offset);
        let link_line = &file.text[line_start..line_end];
        match index.owner(l.registry, &target) {
            Some(target_skill) if target_skill != i => {
                let ctx = file.ctx_at(link.offset);
                let kind = if ctx.required || REQUIRED_LINE.is_match(link_line) {
                    EdgeKind::DependsOn
                } else if ctx.related || RELATED_LINE.is_match(link_line) {
                    EdgeKind::Complements
                } else {
                    EdgeKind::References
                };
                out.push(Candidate {
                    src: i,
                    dst: target_skill,
                    kind,
                    evidence: evidence(
                        "md-link",
                        1.0,
                        EdgeSource::Extracted,
                        file.path.clone(),
                        line_no,
                        link_line,
                    ),
                    unless_common: None,
                });
            }
            // Not walked (a cache folder, over a limit) but there: not broken.
            None if !index.exists(l.registry, &target) && !files.exists(&target) => {
                diags.push(Diagnostic {
                    registry: l.skill.registry.clone(),
                    path: file.path.clone(),
                    line: Some(line_no),
                    severity: Severity::Warning,
                    code: DiagnosticCode::BrokenLink,
                    message: format!("link to `{}` points at nothing in the registry", link.dest),
                });
            }
            _ => {}
        }
    }
}

/// Extends the physical line `[start, end)` to the paragraph line it belongs to: up through
/// previous non-blank lines and down through following ones, stopping at blank lines, list
/// items, headings, fences and tables, at most three lines each way.
fn logical_line(text: &str, start: usize, end: usize) -> (usize, usize) {
    fn breaks(l: &str) -> bool {
        let t = l.trim_start();
        t.is_empty()
            || t.starts_with(['#', '|', '>'])
            || t.starts_with("```")
            || t.starts_with("~~~")
            || t.starts_with("- ")
            || t.starts_with("* ")
            || t.starts_with("+ ")
            || t.split_once(". ").is_some_and(|(n, _)| {
                !n.is_empty() && n.len() <= 3 && n.bytes().all(|b| b.is_ascii_digit())
            })
    }
    let mut s = start;
    let mut first = &text[start..end];
    for _ in 0..3 {
        if s == 0 || breaks(first) {
            break;
        }
        let prev_end = s - 1;
        let prev_start = text[..prev_end].rfind('\n').map_or(0, |p| p + 1);
        let prev = &text[prev_start..prev_end];
        if prev.trim().is_empty()
            || prev.trim_start().starts_with(['#', '|'])
            || prev.trim_start().starts_with("```")
        {
            break;
        }
        s = prev_start;
        first = prev;
    }
    let mut e = end;
    for _ in 0..3 {
        if e >= text.len() {
            break;
        }
        let next_start = e + 1;
        let next_end = text[next_start..]
            .find('\n')
            .map_or(text.len(), |p| next_start + p);
        if breaks(&text[next_start..next_end]) {
            break;
        }
        e = next_end;
    }
    (s, e)
}

/// For a list item (`- `, `* `, `+ `, `1. `), the byte offset in the line where its first word
/// (or first `code`/**bold**/[link] span) ends; `None` for other lines.
pub(super) fn list_item_head(line: &str) -> Option<usize> {
    let indent = line.len() - line.trim_start().len();
    let t = &line[indent..];
    let marker = if t.starts_with(['-', '*', '+']) && t[1..].starts_with(' ') {
        2
    } else {
        let digits = t.bytes().take_while(u8::is_ascii_digit).count();
        if digits > 0 && digits <= 3 && t[digits..].starts_with(". ") {
            digits + 2
        } else {
            return None;
        }
    };
    let rest = &t[marker..];
    let rest_trim = rest.trim_start();
    let lead = marker + (rest.len() - rest_trim.len());
    // A `code`, **bold** or [link] span counts as one head; else the first word.
    let head_len = if let Some(inner) = rest_trim.strip_prefix('`') {
        inner.find('`').map_or(rest_trim.len(), |e| e + 2)
    } else if let Some(inner) = rest_trim.strip_prefix("**") {
        inner.find("**").map_or(rest_trim.len(), |e| e + 4)
    } else if let Some(inner) = rest_trim.strip_prefix('[') {
        inner.find(']').map_or(rest_trim.len(), |e| e + 2)
    } else {
        rest_trim
            .find(|c: char| c.is_whitespace() || c == ',' || c == ':')
            .unwrap_or(rest_trim.len())
    };
    Some(indent + lead + head_len)
}

/// Does the text before a `/` end in a path to skill folders (`skills/`, `../`, `./`)?
fn path_to_skill(before: &str) -> bool {
    let token_start = before
        .rfind(|c: char| c.is_whitespace() || matches!(c, '(' | '`' | '"' | '\'' | '[' | '<'))
        .map_or(0, |p| p + 1);
    let token = &before[token_start..];
    !token.contains("://")
        && (token.starts_with("../")
            || token.starts_with("./")
            || token.contains("skills/")
            || token.starts_with('@'))
}
