//! How a copy differs from its canonical: a unified line diff (the `similar` crate) of the
//! description and body, cut to a number of lines.

use serde::Serialize;
use similar::{ChangeTag, TextDiff};
use skg_model::Skill;

/// One diff line: `tag` is `+` (only in the copy), `-` (only in the canonical), ` `, or empty
/// for a hunk header.
#[derive(Debug, Serialize)]
pub(crate) struct Line {
    pub(crate) tag: &'static str,
    /// CSS class: `a` added, `d` deleted, `h` hunk header, `c` context.
    pub(crate) class: &'static str,
    pub(crate) text: String,
}

/// The diff of `copy` against `canonical`; `None` when the texts are identical. The flag says
/// whether lines were cut.
pub(crate) fn lines(canonical: &Skill, copy: &Skill, max: usize) -> Option<(Vec<Line>, bool)> {
    let a = text(canonical);
    let b = text(copy);
    if a == b {
        return None;
    }
    let diff = TextDiff::from_lines(&a, &b);
    let mut out = Vec::new();
    let mut cut = false;
    'groups: for group in diff.grouped_ops(2) {
        let (Some(first), Some(last)) = (group.first(), group.last()) else {
            continue;
        };
        let old = first.old_range().start..last.old_range().end;
        let new = first.new_range().start..last.new_range().end;
        out.push(Line {
            tag: "",
            class: "h",
            text: format!(
                "@@ -{},{} +{},{} @@",
                old.start + 1,
                old.len(),
                new.start + 1,
                new.len()
            ),
        });
        for op in &group {
            for change in diff.iter_changes(op) {
                if out.len() >= max {
                    cut = true;
                    break 'groups;
                }
                let (tag, class) = match change.tag() {
                    ChangeTag::Delete => ("-", "d"),
                    ChangeTag::Insert => ("+", "a"),
                    ChangeTag::Equal => (" ", "c"),
                };
                let mut t = change.value().trim_end_matches(['\n', '\r']).to_owned();
                if t.len() > 240 {
                    let mut end = 240;
                    while !t.is_char_boundary(end) {
                        end -= 1;
                    }
                    t.truncate(end);
                    t.push('…');
                }
                out.push(Line {
                    tag,
                    class,
                    text: t,
                });
            }
        }
    }
    Some((out, cut))
}

fn text(s: &Skill) -> String {
    format!(
        "name: {}\ndescription: {}\n\n{}",
        s.name, s.description, s.body
    )
}
