//! Relations stated in frontmatter fields and in markdown (prose, lists, links).

use std::{borrow::Cow, sync::LazyLock};

use regex::Regex;
use skg_model::{Diagnostic, DiagnosticCode, EdgeKind, EdgeSource, Severity};

use super::{
    Candidate, evidence,
    names::{NameIndex, join_rel, parent},
};
use crate::{
    RegistrySource,
    load::Loaded,
    manifest::{as_list, metadata},
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

/// Relations in every markdown file of skill `i`: names in prose and lists, links.
pub(crate) fn markdown(
    index: &NameIndex,
    loaded: &[Loaded],
    sources: &[RegistrySource],
    i: usize,
    out: &mut Vec<Candidate>,
    diags: &mut Vec<Diagnostic>,
) -> Vec<usize> {
    let mut seen: Vec<usize> = Vec::new();
    let l = &loaded[i];
    let reg = l.registry;
    for md in &l.md {
        let file_path = l.file_path(&md.path);
        let text = md.text.as_str();
        let lines = &md.outline.lines;
        let file_line = |off: usize| md.first_line + lines.line(off) - 1;
        let sections: Vec<(usize, usize, SectionCtx)> = md
            .outline
            .sections
            .iter()
            .map(|s| {
                let mut ctx = SectionCtx::default();
                // The nearest heading decides, but a Related/Prerequisites parent covers its subsections.
                for h in &s.heading_path {
                    ctx.required |= REQUIRED_HEADING.is_match(h);
                    ctx.related |= RELATED_HEADING.is_match(h);
                }
                (s.start, s.end, ctx)
            })
            .collect();
        let ctx_at = |off: usize| {
            let k = sections.partition_point(|(s, _, _)| *s <= off);
            if k == 0 {
                SectionCtx::default()
            } else {
                sections[k - 1].2
            }
        };

        // Names in text.
        for (start, end, pid) in index.find_names(text) {
            let bytes = text.as_bytes();
            seen.push(pid);
            // Cheap exits first: the skill's own name, or a name no other skill could answer to;
            // a plain word found only in other registries without a `namespace:` before it (it
            // could only cross registries if marked, and plain words never are).
            if !index.may_resolve(pid, i)
                || (!index.in_registry(pid, reg, i)
                    && NameIndex::is_ambiguous(&index.names[pid])
                    && (start == 0 || bytes[start - 1] != b':'))
            {
                continue;
            }
            // Part of a file name (`cover-letter.md`), a host (`mcp.serpapi.com`), an option
            // value (`--x=name`), a variable or an e-mail: not a mention of a skill.
            let prev = if start > 0 { bytes[start - 1] } else { b' ' };
            let file_ext = bytes.get(end) == Some(&b'.')
                && bytes.get(end + 1).is_some_and(u8::is_ascii_alphabetic);
            if file_ext || matches!(prev, b'.' | b'@' | b'=' | b'$' | b'#' | b'~') {
                continue;
            }
            if prev == b'/' && !path_to_skill(&text[..start]) {
                continue;
            }
            let in_code = md.outline.in_code_block(start);
            let line_start = text[..start].rfind('\n').map_or(0, |p| p + 1);
            let line_end = text[end..].find('\n').map_or(text.len(), |p| end + p);
            let line = &text[line_start..line_end];
            // Context is the logical line: a paragraph wrapped over several lines reads as one.
            let (lstart, lend) = logical_line(text, line_start, line_end);
            let one_line = |a: usize, b: usize| -> Cow<'_, str> {
                let t = &text[a..b];
                if t.contains('\n') {
                    Cow::Owned(t.replace('\n', " "))
                } else {
                    Cow::Borrowed(t)
                }
            };
            let logical = one_line(lstart, lend);
            let prefix_owned = one_line(lstart, start);
            let prefix = prefix_owned.as_ref();
            let suffix_owned = one_line(end, lend);
            let suffix = suffix_owned.as_ref();
            let name = &index.names[pid];

            let ns = NAMESPACE_BEFORE
                .captures(prefix)
                .and_then(|c| c.get(1))
                .map(|g| g.as_str());
            let ns_registry = ns.and_then(|n| index.namespace(n));
            // `foo:bar` where foo is not a known registry is still a namespaced ref (a plugin name)
            // unless it looks like a URL scheme or a drive.
            let namespaced = ns.is_some_and(|n| {
                !matches!(
                    n.to_ascii_lowercase().as_str(),
                    "http" | "https" | "file" | "mailto" | "ftp" | "git" | "ssh"
                ) && n.len() > 1
            }) && (ns_registry.is_some()
                || (!in_code && !prefix.ends_with(['\'', '"'])));
            let prefix_core = ns.map_or(prefix, |n| &prefix[..prefix.len() - n.len() - 1]);
            let backticked = prefix_core.ends_with('`') && suffix.starts_with('`');
            let ambiguous = NameIndex::is_ambiguous(name);
            // "the X skill" / "skill: X": for a plain word only when quoted (`the debugging skill` is prose).
            let skill_word = (SKILL_AFTER.is_match(suffix) || SKILL_BEFORE.is_match(prefix_core))
                && (!ambiguous || backticked);
            let ctx = ctx_at(start);
            let item = list_item_head(line);
            // The name opens a list item ("- `pdf` — …", "- **plotting-charts**: …").
            let in_line = start - line_start;
            let item_head = item.is_some_and(|head_end| {
                in_line < head_end
                    && !line[..in_line]
                        .trim_start()
                        .trim_start_matches(|c: char| c.is_ascii_digit())
                        .chars()
                        .any(char::is_alphanumeric)
            });
            let related_item = ctx.related && item_head;
            let required = ctx.required || REQUIRED_LINE.is_match(&logical);
            let related = related_item
                || (ctx.related && (backticked || skill_word))
                || RELATED_LINE.is_match(&logical);
            // Marked: the text itself says this is a skill name.
            let marked = namespaced || skill_word || related_item;
            // Backticks mark a hyphenated name; a plain word in backticks is a command or a value.
            let strong = marked || (backticked && !ambiguous);
            // Identifiers, commands and values in code blocks and table cells, keywords on a
            // `tags:`/`keywords:`/`topics:` line, and a document's own title are not relations.
            let trimmed = line.trim_start();
            if !marked
                && (in_code
                    || trimmed.starts_with('|')
                    || TAG_LINE.is_match(trimmed)
                    || (trimmed.starts_with("# ") && lines.line(start) <= 3))
            {
                continue;
            }

            let (extractor, kind, mut confidence) = if required {
                ("required-prose", EdgeKind::DependsOn, 0.7)
            } else if INVOKE_BEFORE.is_match(prefix_core) && (strong || !ambiguous) {
                ("invoke-phrase", EdgeKind::DependsOn, 0.6)
            } else if related {
                ("related-list", EdgeKind::Complements, 0.6)
            } else if CO_USE_BEFORE.is_match(prefix_core) && (strong || !ambiguous) {
                ("co-use-phrase", EdgeKind::CoUsedWith, 0.5)
            } else if skill_word {
                ("skill-phrase", EdgeKind::References, 0.5)
            } else if namespaced {
                ("namespaced-ref", EdgeKind::References, 0.6)
            } else {
                (
                    "mention",
                    EdgeKind::References,
                    if backticked { 0.5 } else { 0.4 },
                )
            };
            // Another registry only for a distinctive name the text marks as a skill, or a
            // namespace naming that registry.
            let may_cross = (marked && !ambiguous) || ns_registry.is_some();
            let resolved = match ns_registry {
                // A namespace naming a registry resolves there or nowhere.
                Some(r) => index.resolve_in(pid, i, r),
                None => index.resolve_pattern(pid, i, may_cross, None),
            };
            let Some((dst, cross)) = resolved else {
                continue;
            };
            if dst == i {
                continue;
            }
            let mut source = EdgeSource::Inferred;
            if ambiguous && !strong {
                source = EdgeSource::Ambiguous;
                confidence *= 0.5;
            }
            if cross {
                confidence *= 0.8;
            }
            out.push(Candidate {
                src: i,
                dst,
                kind,
                evidence: evidence(
                    extractor,
                    confidence,
                    source,
                    file_path.clone(),
                    file_line(start),
                    line,
                ),
                unless_common: (!marked).then_some(pid),
            });
        }

        // Links to other skills' files.
        let dir = parent(&file_path);
        for link in &md.outline.links {
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
            let line_no = file_line(link.offset);
            let line_start = text[..link.offset].rfind('\n').map_or(0, |p| p + 1);
            let line_end = text[link.offset..]
                .find('\n')
                .map_or(text.len(), |p| link.offset + p);
            let link_line = &text[line_start..line_end];
            match index.owner(reg, &target) {
                Some(target_skill) if target_skill != i => {
                    let ctx = ctx_at(link.offset);
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
                            file_path.clone(),
                            line_no,
                            link_line,
                        ),
                        unless_common: None,
                    });
                }
                None if !index.exists(reg, &target)
                    && !sources[reg].local_path.join(&target).exists() =>
                {
                    diags.push(Diagnostic {
                        registry: l.skill.registry.clone(),
                        path: file_path.clone(),
                        line: Some(line_no),
                        severity: Severity::Warning,
                        code: DiagnosticCode::BrokenLink,
                        message: format!(
                            "link to `{}` points at nothing in the registry",
                            link.dest
                        ),
                    });
                }
                _ => {}
            }
        }
    }
    seen.sort_unstable();
    seen.dedup();
    seen
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
