//! Markdown structure (via pulldown-cmark): headings, sections, links, code blocks.
//!
//! A CommonMark parser rather than line regexes, so that a `# comment` inside a fenced code
//! block is not a heading and setext headings count.

use pulldown_cmark::{CodeBlockKind, Event, HeadingLevel, Parser, Tag, TagEnd};

/// Byte offset → 1-based line.
#[derive(Debug)]
pub(crate) struct LineIndex {
    starts: Vec<usize>,
}

impl LineIndex {
    pub(crate) fn new(text: &str) -> Self {
        let mut starts = vec![0];
        starts.extend(memchr::memchr_iter(b'\n', text.as_bytes()).map(|i| i + 1));
        Self { starts }
    }

    /// 1-based line of byte `offset`.
    pub(crate) fn line(&self, offset: usize) -> u32 {
        let idx = self.starts.partition_point(|&s| s <= offset);
        u32::try_from(idx.max(1)).unwrap_or(u32::MAX)
    }
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Heading {
    pub(crate) level: u8,
    pub(crate) text: String,
    /// Byte range of the heading itself.
    pub(crate) start: usize,
    pub(crate) end: usize,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Link {
    pub(crate) dest: String,
    pub(crate) offset: usize,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct CodeBlock {
    /// Info string's first word, lowercase (`bash`, `python`, empty for indented blocks).
    pub(crate) lang: String,
    pub(crate) start: usize,
    pub(crate) end: usize,
}

/// What one pass over a markdown file finds, plus the sections and line index derived from it
/// (computed once; documents and relations both need them).
#[derive(Debug)]
pub(crate) struct Outline {
    pub(crate) headings: Vec<Heading>,
    pub(crate) links: Vec<Link>,
    pub(crate) code_blocks: Vec<CodeBlock>,
    pub(crate) sections: Vec<Section>,
    pub(crate) lines: LineIndex,
}

impl Outline {
    /// Is `offset` inside a code block?
    pub(crate) fn in_code_block(&self, offset: usize) -> bool {
        let i = self.code_blocks.partition_point(|c| c.start <= offset);
        i > 0 && offset < self.code_blocks[i - 1].end
    }

    /// Shell code blocks (`bash`, `sh`, `shell`, `zsh`, `console`, `powershell`).
    pub(crate) fn shell_blocks(&self) -> usize {
        self.code_blocks
            .iter()
            .filter(|c| {
                matches!(
                    c.lang.as_str(),
                    "bash" | "sh" | "shell" | "zsh" | "console" | "powershell" | "ps1" | "fish"
                )
            })
            .count()
    }
}

fn level_num(l: HeadingLevel) -> u8 {
    match l {
        HeadingLevel::H1 => 1,
        HeadingLevel::H2 => 2,
        HeadingLevel::H3 => 3,
        HeadingLevel::H4 => 4,
        HeadingLevel::H5 => 5,
        HeadingLevel::H6 => 6,
    }
}

/// One pass of pulldown-cmark over `text`.
pub(crate) fn outline(text: &str) -> Outline {
    let mut out = Outline {
        headings: Vec::new(),
        links: Vec::new(),
        code_blocks: Vec::new(),
        sections: Vec::new(),
        lines: LineIndex::new(text),
    };
    let mut heading: Option<Heading> = None;
    for (event, range) in Parser::new(text).into_offset_iter() {
        match event {
            Event::Start(Tag::Heading { level, .. }) => {
                heading = Some(Heading {
                    level: level_num(level),
                    text: String::new(),
                    start: range.start,
                    end: range.end,
                });
            }
            Event::End(TagEnd::Heading(_)) => {
                if let Some(mut h) = heading.take() {
                    h.text = h.text.split_whitespace().collect::<Vec<_>>().join(" ");
                    out.headings.push(h);
                }
            }
            Event::Text(t) | Event::Code(t) => {
                if let Some(h) = heading.as_mut() {
                    h.text.push_str(&t);
                }
            }
            Event::SoftBreak | Event::HardBreak => {
                if let Some(h) = heading.as_mut() {
                    h.text.push(' ');
                }
            }
            Event::Start(Tag::Link { dest_url, .. } | Tag::Image { dest_url, .. }) => {
                out.links.push(Link {
                    dest: dest_url.into_string(),
                    offset: range.start,
                });
            }
            Event::Start(Tag::CodeBlock(kind)) => {
                let lang = match kind {
                    CodeBlockKind::Fenced(info) => info
                        .split_whitespace()
                        .next()
                        .unwrap_or("")
                        .to_ascii_lowercase(),
                    CodeBlockKind::Indented => String::new(),
                };
                out.code_blocks.push(CodeBlock {
                    lang,
                    start: range.start,
                    end: range.end,
                });
            }
            _ => {}
        }
    }
    out.sections = sections(text, &out);
    out
}

/// A heading section: from a heading to the next heading (of any level), or the preamble
/// before the first heading.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Section {
    /// Headings from the top of the file down to this one.
    pub(crate) heading_path: Vec<String>,
    /// Byte range of the whole section, heading included.
    pub(crate) start: usize,
    pub(crate) end: usize,
    /// Byte offset where the text after the heading starts.
    pub(crate) content_start: usize,
}

impl Section {
    pub(crate) fn title(&self) -> Option<&str> {
        self.heading_path.last().map(String::as_str)
    }
}

/// Cuts `text` into sections at every heading.
pub(crate) fn sections(text: &str, outline: &Outline) -> Vec<Section> {
    let mut out = Vec::new();
    let first = outline.headings.first().map_or(text.len(), |h| h.start);
    if !text[..first].trim().is_empty() {
        out.push(Section {
            heading_path: Vec::new(),
            start: 0,
            end: first,
            content_start: 0,
        });
    }
    let mut stack: Vec<(u8, String)> = Vec::new();
    for (i, h) in outline.headings.iter().enumerate() {
        while stack.last().is_some_and(|(l, _)| *l >= h.level) {
            stack.pop();
        }
        stack.push((h.level, h.text.clone()));
        let end = outline.headings.get(i + 1).map_or(text.len(), |n| n.start);
        out.push(Section {
            heading_path: stack.iter().map(|(_, t)| t.clone()).collect(),
            start: h.start,
            end,
            content_start: h.end.min(end),
        });
    }
    out
}

/// The first paragraph of `text`: the first run of non-blank lines that is not a heading,
/// code fence, table or HTML comment, whitespace-collapsed.
pub(crate) fn first_paragraph(text: &str) -> String {
    let mut para = Vec::new();
    let mut in_fence = false;
    for line in text.lines() {
        let t = line.trim();
        if t.starts_with("```") || t.starts_with("~~~") {
            in_fence = !in_fence;
            if !para.is_empty() {
                break;
            }
            continue;
        }
        if in_fence {
            continue;
        }
        if t.is_empty() {
            if !para.is_empty() {
                break;
            }
            continue;
        }
        if t.starts_with('#')
            || t.starts_with('|')
            || t.starts_with("<!--")
            || t.chars().all(|c| matches!(c, '-' | '=' | '*' | '_'))
        {
            if !para.is_empty() {
                break;
            }
            continue;
        }
        para.push(t);
    }
    para.join(" ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn headings_ignore_code_fences_and_build_paths() {
        let text = "intro\n\n# Top\ntext\n```bash\n# not a heading\n```\n## Sub `code`\nmore\n\nSetext\n------\nx\n# Next\n";
        let o = outline(text);
        let names: Vec<_> = o
            .headings
            .iter()
            .map(|h| (h.level, h.text.as_str()))
            .collect();
        assert_eq!(
            names,
            vec![(1, "Top"), (2, "Sub code"), (2, "Setext"), (1, "Next")]
        );
        let s = sections(text, &o);
        let paths: Vec<_> = s.iter().map(|s| s.heading_path.join(" > ")).collect();
        assert_eq!(
            paths,
            vec!["", "Top", "Top > Sub code", "Top > Setext", "Next"]
        );
        assert_eq!(
            &text[s[1].start..s[1].end],
            "# Top\ntext\n```bash\n# not a heading\n```\n"
        );
        assert_eq!(o.shell_blocks(), 1);
        assert!(o.in_code_block(text.find("not a heading").unwrap_or(0)));
        assert!(!o.in_code_block(text.find("more").unwrap_or(0)));
    }

    #[test]
    fn links_and_lines() {
        let text = "a\nsee [plan](../writing/SKILL.md) and ![img](x.png)\n";
        let o = outline(text);
        let idx = LineIndex::new(text);
        let got: Vec<_> = o
            .links
            .iter()
            .map(|l| (l.dest.as_str(), idx.line(l.offset)))
            .collect();
        assert_eq!(got, vec![("../writing/SKILL.md", 2), ("x.png", 2)]);
        assert_eq!(idx.line(0), 1);
        assert_eq!(idx.line(2), 2);
    }

    #[test]
    fn first_paragraph_skips_headings_and_code() {
        assert_eq!(
            first_paragraph("# T\n\n```\ncode\n```\nFirst line\nsecond.\n\nNext para"),
            "First line second."
        );
    }
}
