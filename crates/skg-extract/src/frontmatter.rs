//! Lenient YAML frontmatter.
//!
//! Real registries hold frontmatter that no YAML parser accepts (`description: Use when: …`,
//! `argument-hint: [a] [b]`, hand-written JSON, merge-conflict markers, control characters,
//! blocks never closed, `key: value` lines without `---`). Reading goes in three steps:
//!
//! 1. **strict**: the block as written, parsed by serde-saphyr;
//! 2. **repaired**: on failure, each top-level entry is checked line by line, every problem
//!    found becomes an [`Issue`] (with the file line and a stable code) and is fixed in a copy
//!    (a problematic plain value is single-quoted, continuation lines folded into it, the
//!    "ours" side of a conflict kept, control characters dropped, tabs turned into spaces, a
//!    repeated key dropped); the copy is parsed strictly again;
//! 3. **salvaged**: if that fails too, every top-level entry is parsed on its own, and an entry
//!    that still fails keeps its value as a plain string.
//!
//! Nothing is dropped silently: every step that changed the data says so.

use std::collections::{BTreeMap, BTreeSet};

use serde_json::{Map, Value};
use skg_model::{DiagnosticCode, FrontmatterStatus, Severity};

/// A problem in the frontmatter, located by file line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Issue {
    pub(crate) line: u32,
    pub(crate) code: DiagnosticCode,
    pub(crate) severity: Severity,
    pub(crate) message: String,
}

/// A `SKILL.md` split into frontmatter and body.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Parsed {
    pub(crate) status: FrontmatterStatus,
    /// The frontmatter mapping (empty when missing).
    pub(crate) map: Map<String, Value>,
    /// File line of each top-level key.
    pub(crate) key_lines: BTreeMap<String, u32>,
    /// Byte offset of the body in the text.
    pub(crate) body_offset: usize,
    /// 1-based line on which the body starts.
    pub(crate) body_line: u32,
    pub(crate) issues: Vec<Issue>,
}

/// Splits `text` (already LF-normalized, no BOM) and reads its frontmatter.
pub(crate) fn parse(text: &str) -> Parsed {
    let lines: Vec<&str> = text.split('\n').collect();
    let offsets: Vec<usize> = std::iter::once(0)
        .chain(lines.iter().scan(0usize, |acc, l| {
            *acc += l.len() + 1;
            Some(*acc)
        }))
        .collect();
    let offset_of = |line_idx: usize| {
        offsets
            .get(line_idx)
            .copied()
            .unwrap_or(text.len())
            .min(text.len())
    };
    let first = lines
        .iter()
        .position(|l| !l.trim().is_empty())
        .unwrap_or(lines.len());
    let mut issues = Vec::new();

    let missing = |issues: Vec<Issue>| Parsed {
        status: FrontmatterStatus::Missing,
        map: Map::new(),
        key_lines: BTreeMap::new(),
        body_offset: 0,
        body_line: 1,
        issues,
    };

    // (first block line index, end line index exclusive, body line index)
    let (start, end, body_idx, recovered) = if first < lines.len()
        && lines[first].trim_end() == "---"
    {
        if let Some(close) =
            (first + 1..lines.len()).find(|&j| matches!(lines[j].trim_end(), "---" | "..."))
        {
            (first + 1, close, close + 1, false)
        } else {
            let end = yamlish_run(&lines, first + 1);
            // `end` is exclusive: the block is lines first + 2 ..= end (1-based), maybe none.
            let read = if end > first + 1 {
                format!(
                    "lines {}–{end} were read as frontmatter, the rest as body",
                    first + 2
                )
            } else {
                "no line after it reads as `key: value`, so all that follows is body".to_owned()
            };
            issues.push(Issue {
                line: line_no(first),
                code: DiagnosticCode::FrontmatterUnclosed,
                severity: Severity::Error,
                message: format!("frontmatter opened here is never closed by `---`; {read}"),
            });
            (first + 1, end, end, true)
        }
    } else if first < lines.len() && is_bare_key_line(lines[first]) {
        let end = yamlish_run(&lines, first);
        issues.push(Issue {
            line: line_no(first),
            code: DiagnosticCode::FrontmatterUndelimited,
            severity: Severity::Warning,
            message: format!(
                "`key: value` lines without `---` delimiters; lines {}–{end} were read as frontmatter",
                first + 1
            ),
        });
        (first, end, end, true)
    } else {
        issues.push(Issue {
            line: 1,
            code: DiagnosticCode::FrontmatterMissing,
            severity: Severity::Warning,
            message: "no YAML frontmatter: name and description come from the folder and the body"
                .into(),
        });
        return missing(issues);
    };

    let block_lines: Vec<Line<'_>> = (start..end)
        .map(|i| Line {
            no: line_no(i),
            text: lines[i],
        })
        .collect();
    let (status, map, key_lines) = read_block(&block_lines, &mut issues);
    let status = if recovered && status == FrontmatterStatus::Ok {
        FrontmatterStatus::Repaired
    } else {
        status
    };
    Parsed {
        status,
        map,
        key_lines,
        body_offset: offset_of(body_idx),
        body_line: line_no(body_idx),
        issues,
    }
}

fn line_no(idx: usize) -> u32 {
    u32::try_from(idx + 1).unwrap_or(u32::MAX)
}

#[derive(Debug, Clone, Copy)]
struct Line<'a> {
    no: u32,
    text: &'a str,
}

/// `name: …` / `description: …` at column 0 without delimiters.
fn is_bare_key_line(l: &str) -> bool {
    ["name:", "description:"].iter().any(|k| l.starts_with(k))
}

/// A top-level `key:` line: the key and the rest after the colon.
fn split_key(l: &str) -> Option<(&str, &str)> {
    let first = l.chars().next()?;
    if first.is_whitespace()
        || matches!(
            first,
            '#' | '-' | '[' | '{' | '<' | '>' | '=' | '`' | '|' | '!' | '*' | '&'
        )
    {
        return None;
    }
    let bytes = l.as_bytes();
    let (key, rest) = if matches!(first, '"' | '\'') {
        let close = l[1..].find(first)? + 1;
        let after = &l[close + 1..];
        (&l[..=close], after.strip_prefix(':')?)
    } else {
        let mut colon = None;
        for (i, &b) in bytes.iter().enumerate() {
            if b == b':' && (i + 1 == bytes.len() || bytes[i + 1] == b' ' || bytes[i + 1] == b'\t')
            {
                colon = Some(i);
                break;
            }
        }
        let c = colon?;
        (&l[..c], &l[c + 1..])
    };
    let key = key.trim();
    // Keys are short identifiers; a long "key" is prose with a colon in it.
    (!key.is_empty() && key.len() <= 64 && !key.contains("  ")).then_some((key, rest))
}

/// End (exclusive) of the run of YAML-looking lines starting at `from`: key lines, indented
/// lines, list items, comments; a blank line continues the run only if YAML follows it.
fn yamlish_run(lines: &[&str], from: usize) -> usize {
    let mut i = from;
    let mut end = from;
    let mut depth = 0i32;
    while i < lines.len() {
        let l = lines[i];
        if depth > 0 {
            // Inside a flow collection (`metadata: {` … `}`) every line belongs to it.
            depth = (depth + flow_depth_delta(l)).max(0);
            i += 1;
            end = i;
            continue;
        }
        if l.trim().is_empty() {
            i += 1;
            continue;
        }
        let yamlish = split_key(l).is_some() || l.starts_with([' ', '\t']) || l.starts_with("- ");
        if !yamlish {
            break;
        }
        depth = flow_depth_delta(l).max(0);
        i += 1;
        end = i;
    }
    end
}

/// Net change of `[`/`{` nesting over a line, outside quotes.
fn flow_depth_delta(l: &str) -> i32 {
    let mut d = 0;
    let mut quote: Option<char> = None;
    let mut prev = ' ';
    for c in l.chars() {
        match quote {
            Some(q) => {
                if c == q && prev != '\\' {
                    quote = None;
                }
            }
            None => match c {
                '"' => quote = Some(c),
                '[' | '{' => d += 1,
                ']' | '}' => d -= 1,
                _ => {}
            },
        }
        prev = c;
    }
    d
}

fn strict(text: &str) -> Result<Value, serde_saphyr::Error> {
    serde_saphyr::from_str::<Value>(text)
}

type BlockRead = (FrontmatterStatus, Map<String, Value>, BTreeMap<String, u32>);

fn read_block(lines: &[Line<'_>], issues: &mut Vec<Issue>) -> BlockRead {
    let text = lines.iter().map(|l| l.text).collect::<Vec<_>>().join("\n");
    let first_no = lines.first().map_or(1, |l| l.no);
    let mut key_lines = BTreeMap::new();
    for l in lines {
        if let Some((k, _)) = split_key(l.text) {
            key_lines.entry(unquote_key(k)).or_insert(l.no);
        }
    }
    let err = match strict(&text) {
        Ok(Value::Object(m)) => return (FrontmatterStatus::Ok, m, key_lines),
        Ok(Value::Null) => return (FrontmatterStatus::Ok, Map::new(), key_lines),
        Ok(other) => {
            issues.push(Issue {
                line: first_no,
                code: DiagnosticCode::FrontmatterNotMapping,
                severity: Severity::Error,
                message: format!(
                    "frontmatter is a YAML {} , not a mapping of keys",
                    kind_name(&other)
                ),
            });
            None
        }
        Err(e) => Some(e),
    };
    let (repaired_entries, found) = repair(lines);
    let parser_line = err
        .as_ref()
        .and_then(serde_saphyr::Error::location)
        .map(|loc| {
            let l = u32::try_from(loc.line()).unwrap_or(1);
            first_no + l.saturating_sub(1)
        });
    let parser_msg = err.as_ref().map(|e| first_line(&e.to_string()));
    let repaired_text = repaired_entries
        .iter()
        .map(|e| e.text.as_str())
        .collect::<Vec<_>>()
        .join("\n");
    if err.is_some()
        && let Ok(value) = strict(&repaired_text)
        && matches!(value, Value::Object(_) | Value::Null)
    {
        let m = match value {
            Value::Object(m) => m,
            _ => Map::new(),
        };
        if found.is_empty() {
            // Repair changed nothing we can name, yet the copy parses: the difference is ours.
            issues.push(syntax_issue(
                parser_line.unwrap_or(first_no),
                parser_msg.as_deref(),
                Severity::Warning,
            ));
        }
        for f in found {
            issues.push(Issue {
                severity: Severity::Warning,
                message: format!("{}; repaired", f.message),
                ..f
            });
        }
        return (FrontmatterStatus::Repaired, m, key_lines);
    }
    // Salvage entry by entry.
    let mut map = Map::new();
    let mut kept = Vec::new();
    let mut lost = Vec::new();
    for entry in &repaired_entries {
        let Some(key) = &entry.key else { continue };
        if let Ok(Value::Object(m)) = strict(&entry.text) {
            for (k, v) in m {
                map.insert(k, v);
            }
            kept.push(key.clone());
        } else {
            {
                let raw = entry.raw_value.trim();
                if raw.is_empty() {
                    lost.push(key.clone());
                } else {
                    map.insert(key.clone(), Value::String(strip_quotes(raw).to_owned()));
                    kept.push(format!("{key} (as text)"));
                }
            }
        }
    }
    let severity = Severity::Error;
    let summary = if lost.is_empty() {
        format!("salvaged keys: {}", kept.join(", "))
    } else {
        format!(
            "salvaged keys: {}; could not read: {}",
            kept.join(", "),
            lost.join(", ")
        )
    };
    if found.is_empty() {
        issues.push(Issue {
            message: format!(
                "{}; {summary}",
                syntax_issue(0, parser_msg.as_deref(), severity).message
            ),
            ..syntax_issue(parser_line.unwrap_or(first_no), None, severity)
        });
    } else {
        for f in found {
            issues.push(Issue {
                severity,
                message: format!("{}; {summary}", f.message),
                ..f
            });
        }
    }
    (FrontmatterStatus::Salvaged, map, key_lines)
}

fn syntax_issue(line: u32, msg: Option<&str>, severity: Severity) -> Issue {
    Issue {
        line,
        code: DiagnosticCode::YamlSyntax,
        severity,
        message: format!("invalid YAML: {}", msg.unwrap_or("syntax error")),
    }
}

fn first_line(s: &str) -> String {
    s.lines().next().unwrap_or("").chars().take(200).collect()
}

fn kind_name(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "boolean",
        Value::Number(_) => "number",
        Value::String(_) => "string",
        Value::Array(_) => "sequence",
        Value::Object(_) => "mapping",
    }
}

fn unquote_key(k: &str) -> String {
    strip_quotes(k).to_owned()
}

fn strip_quotes(s: &str) -> &str {
    for q in ['"', '\''] {
        if s.len() >= 2 && s.starts_with(q) && s.ends_with(q) {
            return &s[1..s.len() - 1];
        }
    }
    s
}

/// One top-level entry after repair.
#[derive(Debug)]
struct Entry {
    key: Option<String>,
    /// The value text after `key:` (continuations folded), before quoting.
    raw_value: String,
    /// YAML text of the entry after repair.
    text: String,
}

/// A top-level entry before repair: its key line, continuation lines and orphan lines.
struct RawEntry {
    no: u32,
    key: Option<String>,
    key_text: String,
    value: String,
    cont: Vec<(u32, String)>,
    orphans: Vec<u32>,
}

/// One thing repair found (and fixed).
type Finding = Issue;

fn finding(line: u32, code: DiagnosticCode, message: impl Into<String>) -> Finding {
    Issue {
        line,
        code,
        severity: Severity::Warning,
        message: message.into(),
    }
}

fn is_control(c: char) -> bool {
    (c.is_control() && c != '\t' && c != '\n') || matches!(c, '\u{FEFF}' | '\u{FFFE}' | '\u{FFFF}')
}

/// Finds and fixes the known problems; returns the repaired entries and what was found.
fn repair(lines: &[Line<'_>]) -> (Vec<Entry>, Vec<Finding>) {
    #[derive(PartialEq)]
    enum Conflict {
        None,
        Ours,
        Theirs,
    }
    let mut found = Vec::new();
    // Phase 1: line-level fixes.
    let mut conflict = Conflict::None;
    let mut cleaned: Vec<(u32, String)> = Vec::new();
    for l in lines {
        let t = l.text;
        if t.starts_with("<<<<<<<") {
            found.push(finding(
                l.no,
                DiagnosticCode::YamlMergeConflict,
                "git merge-conflict markers; kept the first side (`<<<<<<<` … `=======`)",
            ));
            conflict = Conflict::Ours;
            continue;
        }
        if t.starts_with("=======") && conflict == Conflict::Ours {
            conflict = Conflict::Theirs;
            continue;
        }
        if t.starts_with(">>>>>>>") && conflict != Conflict::None {
            conflict = Conflict::None;
            continue;
        }
        if conflict == Conflict::Theirs {
            continue;
        }
        let mut s = t.to_owned();
        if s.chars().any(is_control) {
            let c = s.chars().find(|&c| is_control(c)).unwrap_or('\0');
            found.push(finding(
                l.no,
                DiagnosticCode::YamlControlCharacter,
                format!(
                    "control character U+{:04X} is not allowed in YAML; removed",
                    c as u32
                ),
            ));
            s.retain(|c| !is_control(c));
        }
        if s.starts_with('\t') {
            found.push(finding(
                l.no,
                DiagnosticCode::YamlTabIndent,
                "tab used for indentation; replaced by spaces",
            ));
            let tabs = s.len() - s.trim_start_matches('\t').len();
            s = format!("{}{}", "  ".repeat(tabs), &s[tabs..]);
        }
        cleaned.push((l.no, s));
    }
    // Phase 2: split into top-level entries.
    let mut entries: Vec<RawEntry> = Vec::new();
    let mut open_flow = 0i32;
    for (no, s) in cleaned {
        if open_flow > 0
            && let Some(e) = entries.last_mut()
        {
            // Lines of a multi-line flow collection (hand-written JSON) belong to its entry.
            open_flow = (open_flow + flow_depth_delta(&s)).max(0);
            e.cont.push((no, s));
            continue;
        }
        if let Some((k, v)) = split_key(&s) {
            open_flow = if v.trim_start().starts_with(['[', '{']) {
                flow_depth_delta(v).max(0)
            } else {
                0
            };
            entries.push(RawEntry {
                no,
                key: Some(unquote_key(k)),
                key_text: k.to_owned(),
                value: v.to_owned(),
                cont: Vec::new(),
                orphans: Vec::new(),
            });
            continue;
        }
        let top_level_text =
            !s.trim().is_empty() && !s.starts_with([' ', '#']) && !s.starts_with("- ") && s != "-";
        match entries.last_mut() {
            Some(e) => {
                if top_level_text {
                    e.orphans.push(no);
                }
                e.cont.push((no, s));
            }
            None => entries.push(RawEntry {
                no,
                key: None,
                key_text: String::new(),
                value: String::new(),
                cont: vec![(no, s.clone())],
                orphans: if top_level_text { vec![no] } else { Vec::new() },
            }),
        }
    }
    // Phase 3: per-entry fixes.
    let mut seen = BTreeSet::new();
    let mut out = Vec::new();
    for e in entries {
        let Some(key) = e.key.clone() else {
            for no in &e.orphans {
                found.push(finding(
                    *no,
                    DiagnosticCode::YamlOrphanLine,
                    "line without `key:` before the first key; dropped",
                ));
            }
            continue;
        };
        if !seen.insert(key.clone()) {
            found.push(finding(
                e.no,
                DiagnosticCode::YamlDuplicateKey,
                format!("key `{key}` appears again; the first one was kept"),
            ));
            continue;
        }
        let v = e.value.trim();
        let folded = || {
            let mut s = v.to_owned();
            for (_, c) in &e.cont {
                let c = c.trim();
                if !c.is_empty() {
                    if !s.is_empty() {
                        s.push(' ');
                    }
                    s.push_str(c);
                }
            }
            s
        };
        let as_is = || {
            let mut t = format!("{}:{}", e.key_text, e.value);
            for (_, c) in &e.cont {
                t.push('\n');
                t.push_str(c);
            }
            t
        };
        let quoted = |s: &str| format!("{}: '{}'", e.key_text, s.replace('\'', "''"));
        let problem: Option<(DiagnosticCode, String)> = if !e.orphans.is_empty()
            && !v.is_empty()
            && !v.starts_with(['|', '>'])
        {
            Some((
                DiagnosticCode::YamlOrphanLine,
                format!(
                    "line {} continues `{key}` without indentation",
                    e.orphans[0]
                ),
            ))
        } else if v.is_empty() || v.starts_with(['"', '\'']) || is_block_indicator(v) {
            None
        } else if v.starts_with(['[', '{']) {
            let all = folded();
            let entry_fails = || strict(&as_is()).is_err();
            (!flow_is_closed(&all) || entry_fails()).then(|| (DiagnosticCode::YamlBrokenFlow, format!("`{key}` starts a flow collection (`[`/`{{`) that is unbalanced or followed by text")))
        } else if v.starts_with(['`', '@', ',', '%', '|', '>', '*', '&', '!', '?'])
            || v.starts_with("- ")
            || v == "-"
        {
            Some((
                DiagnosticCode::YamlReservedIndicator,
                format!(
                    "`{key}` value starts with `{}`, which YAML reserves",
                    v.chars().next().unwrap_or(' ')
                ),
            ))
        } else {
            let all = folded();
            (all.contains(": ") || all.ends_with(':')).then(|| {
                (
                    DiagnosticCode::YamlUnquotedColon,
                    format!("`{key}` is a plain value containing `: `; it must be quoted"),
                )
            })
        };
        let raw_value = folded();
        let text = match &problem {
            None => as_is(),
            Some((DiagnosticCode::YamlBrokenFlow, _)) => {
                // Hand-written JSON with a stray character: keep it as JSON if it parses after
                // dropping backslash escapes of brackets, else as a string.
                let fixed = raw_value.replace("\\[", "[").replace("\\]", "]");
                match serde_json::from_str::<Value>(&fixed) {
                    Ok(v) => format!("{}: {}", e.key_text, v),
                    Err(_) => quoted(&raw_value),
                }
            }
            Some(_) => quoted(&raw_value),
        };
        if let Some((code, msg)) = problem {
            found.push(finding(
                if code == DiagnosticCode::YamlOrphanLine {
                    e.orphans[0]
                } else {
                    e.no
                },
                code,
                msg,
            ));
        }
        out.push(Entry {
            key: Some(key),
            raw_value,
            text,
        });
    }
    (out, found)
}

/// `|`, `|-`, `>+2`, … (a block scalar header), possibly followed by a comment.
fn is_block_indicator(v: &str) -> bool {
    let head = v.split(" #").next().unwrap_or(v).trim_end();
    head.starts_with(['|', '>'])
        && head[1..]
            .chars()
            .all(|c| matches!(c, '-' | '+' | '1'..='9'))
}

/// True when a flow collection's brackets balance (outside quotes) and nothing but a comment follows.
fn flow_is_closed(s: &str) -> bool {
    let mut depth = 0i32;
    let mut quote: Option<char> = None;
    let mut chars = s.char_indices().peekable();
    while let Some((i, c)) = chars.next() {
        if let Some(q) = quote {
            if c == '\\' && q == '"' {
                chars.next();
            } else if c == q {
                quote = None;
            }
            continue;
        }
        match c {
            '"' | '\'' => quote = Some(c),
            '[' | '{' => depth += 1,
            ']' | '}' => {
                depth -= 1;
                if depth < 0 {
                    return false;
                }
                if depth == 0 {
                    let rest = s[i + c.len_utf8()..].trim();
                    return rest.is_empty() || rest.starts_with('#');
                }
            }
            _ => {}
        }
    }
    false
}

#[cfg(test)]
mod tests;
