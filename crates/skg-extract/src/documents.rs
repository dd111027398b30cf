//! Search documents at three levels: L0 abstract, L1 overview, L2 sections.

use skg_model::{DocId, Document, Level, SectionRole, Skill};

use crate::markdown::{self, Outline};

/// L2 sections longer than this many bytes are cut into chunks…
pub(crate) const CHUNK_BYTES: usize = 2000;
/// …that overlap by about this many bytes (whole lines), so no sentence is only at a cut.
pub(crate) const OVERLAP_BYTES: usize = 200;
/// L1 keeps at most this many characters of each section's first paragraph.
const L1_PARA_CHARS: usize = 240;

/// A markdown file of the package, ready for sectioning.
#[derive(Debug)]
pub(crate) struct MdFile<'a> {
    /// Path relative to the skill root.
    pub(crate) path: &'a str,
    pub(crate) text: &'a str,
    pub(crate) outline: &'a Outline,
    /// File line of `text`'s first line (the body of `SKILL.md` starts after the frontmatter).
    pub(crate) first_line: u32,
    /// Whether it is `SKILL.md`'s body (whose top-level sections may say when to use the skill).
    pub(crate) skill_md: bool,
}

/// L0: name, description, tags, tools, when to use.
pub(crate) fn l0(skill: &Skill, body: &str) -> Document {
    let mut text = format!("{}\n{}", skill.name, skill.description);
    if skill.description.is_empty()
        && let Some(p) = Some(markdown::first_paragraph(body)).filter(|p| !p.is_empty())
    {
        text.push_str(&truncate(&p, 400));
    }
    if let Some(w) = &skill.when_to_use {
        text.push_str("\nwhen to use: ");
        text.push_str(w);
    }
    if !skill.tags.is_empty() {
        text.push_str("\ntags: ");
        text.push_str(&skill.tags.join(", "));
    }
    if !skill.allowed_tools.is_empty() {
        text.push_str("\ntools: ");
        text.push_str(&skill.allowed_tools.join(", "));
    }
    Document {
        id: DocId(format!("{}#L0", skill.id)),
        skill: skill.id.clone(),
        registry: skill.registry.clone(),
        level: Level::L0,
        file: skill_file(skill),
        heading_path: Vec::new(),
        ordinal: 0,
        chunk: 0,
        line_start: 1,
        line_end: skill.body_line.saturating_sub(1).max(1),
        title: skill.name.clone(),
        text,
        role: SectionRole::Body,
    }
}

fn skill_file(skill: &Skill) -> String {
    skill
        .path
        .rsplit('/')
        .next()
        .unwrap_or("SKILL.md")
        .to_owned()
}

/// L1: the outline of `SKILL.md`: each heading with its section's first paragraph.
pub(crate) fn l1(skill: &Skill, body: &MdFile<'_>) -> Document {
    let mut text = format!("{}: {}\n", skill.name, skill.description);
    for s in &body.outline.sections {
        let depth = s.heading_path.len();
        if let Some(t) = s.title() {
            text.push_str(&"#".repeat(depth.max(1)));
            text.push(' ');
            text.push_str(t);
            text.push('\n');
        }
        let para = markdown::first_paragraph(&body.text[s.content_start..s.end]);
        if !para.is_empty() {
            text.push_str(&truncate(&para, L1_PARA_CHARS));
            text.push('\n');
        }
    }
    let lines = &body.outline.lines;
    Document {
        id: DocId(format!("{}#L1", skill.id)),
        skill: skill.id.clone(),
        registry: skill.registry.clone(),
        level: Level::L1,
        file: body.path.to_owned(),
        heading_path: Vec::new(),
        ordinal: 0,
        chunk: 0,
        line_start: body.first_line,
        line_end: body.first_line + lines.line(body.text.len()).saturating_sub(1),
        title: skill.name.clone(),
        text: text.trim_end().to_owned(),
        role: SectionRole::Body,
    }
}

/// L2: one document per heading section of `file` (long ones chunked with overlap).
pub(crate) fn l2(skill: &Skill, file: &MdFile<'_>, out: &mut Vec<Document>) {
    let lines = &file.outline.lines;
    let mut ordinal = 0u32;
    for s in &file.outline.sections {
        let content = &file.text[s.content_start..s.end];
        if content.trim().is_empty() {
            continue;
        }
        let section_text = &file.text[s.start..s.end];
        let title = s.title().map_or_else(|| skill.name.clone(), str::to_owned);
        let role = crate::roles::section_role(file.skill_md, &s.heading_path);
        for (chunk, (from, to)) in chunks(section_text).into_iter().enumerate() {
            let text = section_text[from..to].trim();
            if text.is_empty() {
                continue;
            }
            let start = s.start + from;
            let end = (s.start + to).saturating_sub(1).max(start);
            let chunk = u32::try_from(chunk).unwrap_or(u32::MAX);
            let id = if chunk == 0 {
                format!("{}#L2:{}:{ordinal}", skill.id, file.path)
            } else {
                format!("{}#L2:{}:{ordinal}.{chunk}", skill.id, file.path)
            };
            out.push(Document {
                id: DocId(id),
                skill: skill.id.clone(),
                registry: skill.registry.clone(),
                level: Level::L2,
                file: file.path.to_owned(),
                heading_path: s.heading_path.clone(),
                ordinal,
                chunk,
                line_start: file.first_line + lines.line(start) - 1,
                line_end: file.first_line + lines.line(end) - 1,
                title: title.clone(),
                text: text.to_owned(),
                role,
            });
        }
        ordinal += 1;
    }
}

/// Byte ranges of the chunks of `text`: whole lines, at most about [`CHUNK_BYTES`] each, each
/// starting [`OVERLAP_BYTES`] (rounded to whole lines) before the previous one ended.
pub(crate) fn chunks(text: &str) -> Vec<(usize, usize)> {
    if text.len() <= CHUNK_BYTES {
        return vec![(0, text.len())];
    }
    let mut line_starts: Vec<usize> = vec![0];
    line_starts.extend(
        memchr::memchr_iter(b'\n', text.as_bytes())
            .map(|i| i + 1)
            .filter(|&i| i < text.len()),
    );
    let mut out = Vec::new();
    let mut start_line = 0usize;
    loop {
        let start = line_starts[start_line];
        // The furthest line start that keeps the chunk within budget.
        let limit = start + CHUNK_BYTES;
        let end = if text.len() <= limit {
            text.len()
        } else {
            let k = line_starts.partition_point(|&s| s <= limit);
            line_starts[k - 1]
        };
        if end <= start {
            // One huge line: cut it at a char boundary and go on inside it.
            let end = floor_char_boundary(text, limit).max(start + 1);
            let end = if text.is_char_boundary(end) {
                end
            } else {
                text.len()
            };
            out.push((start, end));
            if end >= text.len() {
                break;
            }
            let next = floor_char_boundary(text, end.saturating_sub(OVERLAP_BYTES)).max(start + 1);
            let next = if text.is_char_boundary(next) {
                next
            } else {
                end
            };
            let pos = line_starts.partition_point(|&s| s < next);
            if line_starts.get(pos) != Some(&next) {
                line_starts.insert(pos, next);
            }
            start_line = pos;
            continue;
        }
        out.push((start, end));
        if end >= text.len() {
            break;
        }
        // Next chunk starts at the first line beginning at or after end - OVERLAP, but always moves forward.
        let target = end.saturating_sub(OVERLAP_BYTES);
        let mut next_line = line_starts.partition_point(|&s| s < target);
        if next_line <= start_line {
            next_line = start_line + 1;
        }
        if line_starts[next_line] >= end {
            next_line = line_starts.partition_point(|&s| s < end);
        }
        start_line = next_line;
    }
    out
}

fn floor_char_boundary(s: &str, mut i: usize) -> usize {
    if i >= s.len() {
        return s.len();
    }
    while !s.is_char_boundary(i) {
        i -= 1;
    }
    i
}

pub(crate) fn truncate(s: &str, max_chars: usize) -> String {
    if s.chars().count() <= max_chars {
        s.to_owned()
    } else {
        let mut t: String = s.chars().take(max_chars).collect();
        t.push('…');
        t
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn short_text_is_one_chunk() {
        assert_eq!(chunks("abc\n"), vec![(0, 4)]);
    }

    #[test]
    fn chunks_cover_everything_overlap_and_stay_small() {
        let line = "x".repeat(99) + "\n"; // 100-byte lines
        let text = line.repeat(50); // 5000 bytes
        let c = chunks(&text);
        assert_eq!(c.first().map(|c| c.0), Some(0));
        assert_eq!(c.last().map(|c| c.1), Some(text.len()));
        for w in c.windows(2) {
            let ((_, e0), (s1, _)) = (w[0], w[1]);
            assert!(s1 < e0, "chunks must overlap: {w:?}");
            assert_eq!(
                e0 - s1,
                OVERLAP_BYTES,
                "overlap is whole lines of 100 bytes: {w:?}"
            );
        }
        for (s, e) in &c {
            assert!(e - s <= CHUNK_BYTES);
            assert_eq!(s % 100, 0, "chunks start at line starts");
        }
    }

    #[test]
    fn one_huge_line_is_cut_at_char_boundaries() {
        let text = "é".repeat(3000); // 6000 bytes, no newline
        let c = chunks(&text);
        assert!(c.len() >= 3);
        for (s, e) in &c {
            assert!(text.is_char_boundary(*s) && text.is_char_boundary(*e));
            assert!(e - s <= CHUNK_BYTES);
        }
        assert_eq!(c.last().map(|c| c.1), Some(text.len()));
    }
}
