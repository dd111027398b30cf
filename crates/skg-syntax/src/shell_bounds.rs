//! Bounds on the shell text handed to tree-sitter, found without a parser.
//!
//! tree-sitter-bash reads a pipeline of n stages in time and memory that grow with n² (its
//! pipeline rule is ambiguous, so every stage keeps the parse stacks of the ones before): a
//! 120 KB code block of 30,000 `|cat` stages took 28 s and 7.3 GB to scan, and its parse
//! budget cannot stop it, because the work is done when the parse is accepted. No real command
//! comes near such a pipeline, so [`statements`] reads the text the way the shell splits it
//! (quotes, comments, here-documents, `;` `&` `&&` `||` and line ends), counts each
//! statement's pipe operators, and [`crate::shell_commands`] leaves a statement past
//! [`MAX_PIPELINE_STAGES`] stages out of the parse and reports it. This reading is not a
//! parser and can be fooled (it cannot know every construct the grammar knows), so the parse
//! is bounded a second way that trusts no reading: text holding more than
//! [`MAX_PIPES_PER_PARSE`] `|` characters is parsed in pieces of whole lines.

use std::ops::Range;

/// Pipeline stages past which a statement is not parsed (and is reported).
pub const MAX_PIPELINE_STAGES: usize = 256;

/// `|` characters (outside `||`) one parse may be given; more are parsed in pieces of lines.
pub const MAX_PIPES_PER_PARSE: usize = 1_024;

/// One statement as the shell splits the text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Statement {
    /// Its bytes (here-document bodies included), up to the separator.
    pub bytes: Range<usize>,
    /// Pipe operators (`|`, `|&`) outside quotes, comments and here-documents.
    pub pipes: usize,
}

/// The statements of `src`, in order: split at `;`, `&`, `&&`, `||` and at line ends that do
/// not continue a pipeline (a line ending in `|`, or in `\`, goes on). A line starting with `|`
/// is not shell (a table row, a box drawing): it starts a statement of its own.
pub(crate) fn statements(src: &str) -> Vec<Statement> {
    let b = src.as_bytes();
    let mut split = Split::default();
    // The last word on this line is a pipe operator: the statement goes on on the next line.
    let mut after_pipe = false;
    // Only blanks so far on this line.
    let mut line_start = true;
    // Here-documents whose bodies start at the next line end: (delimiter, `<<-`).
    let mut heredocs: Vec<(Vec<u8>, bool)> = Vec::new();
    let mut i = 0;
    while i < b.len() {
        let c = b[i];
        let next = b.get(i + 1).copied();
        match c {
            b' ' | b'\t' | b'\r' => {
                i += 1;
                continue;
            }
            b'\n' => {
                let mut j = i + 1;
                if !heredocs.is_empty() {
                    j = skip_heredocs(b, j, &heredocs);
                    heredocs.clear();
                }
                if !after_pipe {
                    split.at(j, j);
                }
                line_start = true;
                i = j;
                continue;
            }
            b'#' if i == 0 || b" \t\n;&|()<>".contains(&b[i - 1]) => {
                // A comment, to the line end (which it does not take).
                i = b[i..]
                    .iter()
                    .position(|&x| x == b'\n')
                    .map_or(b.len(), |p| i + p);
                continue;
            }
            b'|' if next != Some(b'|') && !line_start => {
                split.pipes += 1;
                i += if next == Some(b'&') { 2 } else { 1 };
                after_pipe = true;
                continue;
            }
            // `||` ends a statement; a line starting with `|` is not shell.
            b'|' => {
                let n = if next == Some(b'|') { 2 } else { 1 };
                split.at(i, i + n);
                i += n;
            }
            // An escaped byte (a line continuation too).
            b'\\' => i += 2,
            b'\'' | b'"' => {
                let escapes = c == b'"' || (i > 0 && b[i - 1] == b'$');
                i = skip_quoted(b, i + 1, c, escapes);
            }
            b';' => {
                split.at(i, i + 1);
                i += 1;
            }
            // A redirection (`&>`, `2>&1`, `<&3`).
            b'&' if next == Some(b'>') || (i > 0 && matches!(b[i - 1], b'>' | b'<')) => i += 1,
            b'&' => {
                let n = if next == Some(b'&') { 2 } else { 1 };
                split.at(i, i + n);
                i += n;
            }
            b'<' if next == Some(b'<')
                && b.get(i + 2) != Some(&b'<')
                && (i == 0 || b[i - 1] != b'<') =>
            {
                let (delimiter, strip, end) = heredoc_delimiter(b, i + 2);
                if !delimiter.is_empty() {
                    heredocs.push((delimiter, strip));
                }
                i = end;
            }
            _ => i += 1,
        }
        after_pipe = false;
        line_start = false;
    }
    split.at(b.len(), b.len());
    split.out
}

/// The statements found so far and the one being read.
#[derive(Default)]
struct Split {
    out: Vec<Statement>,
    start: usize,
    pipes: usize,
}

impl Split {
    /// Ends the statement being read at `end` (when it holds anything) and starts the next at
    /// `next`.
    fn at(&mut self, end: usize, next: usize) {
        if end > self.start {
            self.out.push(Statement {
                bytes: self.start..end,
                pipes: self.pipes,
            });
        }
        self.start = next;
        self.pipes = 0;
    }
}

/// The index after the quoted text that starts at `from` (just past the opening `quote`), or
/// the end when it is never closed.
fn skip_quoted(b: &[u8], from: usize, quote: u8, escapes: bool) -> usize {
    let mut i = from;
    while i < b.len() {
        match b[i] {
            b'\\' if escapes => i += 2,
            x if x == quote => return i + 1,
            _ => i += 1,
        }
    }
    b.len()
}

/// The delimiter of the here-document whose `<<` ends just before `from` (quotes and
/// backslashes removed), whether it is `<<-` (leading tabs of the body are stripped), and the
/// index after it.
fn heredoc_delimiter(b: &[u8], from: usize) -> (Vec<u8>, bool, usize) {
    let mut i = from;
    let strip = b.get(i) == Some(&b'-');
    if strip {
        i += 1;
    }
    while matches!(b.get(i), Some(b' ' | b'\t')) {
        i += 1;
    }
    let mut word = Vec::new();
    while let Some(&x) = b.get(i) {
        if x.is_ascii_whitespace() || b";&|()<>".contains(&x) {
            break;
        }
        if !matches!(x, b'\'' | b'"' | b'\\') {
            word.push(x);
        }
        i += 1;
    }
    (word, strip, i)
}

/// The index after the bodies of `heredocs`, read in order from `from` (each up to the line
/// that is its delimiter), or the end when one is never closed.
fn skip_heredocs(b: &[u8], from: usize, heredocs: &[(Vec<u8>, bool)]) -> usize {
    let mut i = from;
    for (delimiter, strip) in heredocs {
        loop {
            if i >= b.len() {
                return b.len();
            }
            let end = b[i..]
                .iter()
                .position(|&x| x == b'\n')
                .map_or(b.len(), |p| i + p);
            let mut line = &b[i..end];
            if *strip {
                while let [b'\t', rest @ ..] = line {
                    line = rest;
                }
            }
            if let [rest @ .., b'\r'] = line {
                line = rest;
            }
            i = (end + 1).min(b.len());
            if line == delimiter.as_slice() {
                break;
            }
        }
    }
    i
}

/// `|` characters of `b` that are not part of `||` (what a parse of it could read as pipes).
pub(crate) fn pipe_chars(b: &[u8]) -> usize {
    b.iter()
        .enumerate()
        .filter(|&(i, &x)| x == b'|' && b.get(i + 1) != Some(&b'|') && (i == 0 || b[i - 1] != b'|'))
        .count()
}

/// Byte ranges of whole lines covering `src` in order, each holding at most `max`
/// [`pipe_chars`], except a single line holding more, which is a piece of its own.
pub(crate) fn pieces(src: &str, max: usize) -> Vec<Range<usize>> {
    let b = src.as_bytes();
    if pipe_chars(b) <= max {
        return std::iter::once(0..b.len()).collect();
    }
    let mut out = Vec::new();
    let mut start = 0;
    let mut held = 0;
    let mut i = 0;
    while i < b.len() {
        let end = b[i..]
            .iter()
            .position(|&x| x == b'\n')
            .map_or(b.len(), |p| i + p + 1);
        let n = pipe_chars(&b[i..end]);
        if n > 0 && held + n > max && i > start {
            out.push(start..i);
            start = i;
            held = 0;
        }
        held += n;
        i = end;
        if held > max {
            // A line over the bound alone.
            out.push(start..i);
            start = i;
            held = 0;
        }
    }
    if b.len() > start {
        out.push(start..b.len());
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn counted(src: &str) -> Vec<(&str, usize)> {
        statements(src)
            .into_iter()
            .map(|s| (src[s.bytes].trim(), s.pipes))
            .collect()
    }

    #[test]
    fn statements_split_where_the_shell_splits_them() {
        assert_eq!(
            counted("a | b; c |& d && e || f & g\nh |\n  i | j\n"),
            [
                ("a | b", 1),
                ("c |& d", 1),
                ("e", 0),
                ("f", 0),
                ("g", 0),
                ("h |\n  i | j", 2),
            ]
        );
    }

    #[test]
    fn quoted_commented_and_here_document_pipes_are_not_operators() {
        let src = "grep -E 'a|b|c' \"x|y\" $'p|q' | wc # not | a | pipe\n\
                   cat <<-'EOF' | sh\n\ta | b | c\n\tEOF\n\
                   echo 2>&1 &> f | x\n";
        assert_eq!(
            counted(src),
            [
                ("grep -E 'a|b|c' \"x|y\" $'p|q' | wc # not | a | pipe", 1),
                ("cat <<-'EOF' | sh\n\ta | b | c\n\tEOF", 1),
                ("echo 2>&1 &> f | x", 1),
            ]
        );
    }

    #[test]
    fn a_line_starting_with_a_pipe_is_not_a_stage() {
        // A box drawing: every line ends in `|`, which would otherwise continue the pipeline.
        let src = "+----+\n| ab |\n| cd |\n+----+\n";
        assert!(statements(src).iter().all(|s| s.pipes <= 1));
    }

    #[test]
    fn an_unclosed_quote_or_here_document_runs_to_the_end() {
        assert_eq!(counted("echo 'a | b\nc | d"), [("echo 'a | b\nc | d", 0)]);
        assert_eq!(counted("cat <<EOF\na | b\n"), [("cat <<EOF\na | b", 0)]);
    }

    #[test]
    fn pieces_are_whole_lines_under_the_bound() {
        let src = "a|b|c\nd|e\nf||g|h|i|j\nk\n";
        assert_eq!(pipe_chars(src.as_bytes()), 6);
        assert_eq!(
            pieces(src, 6),
            std::iter::once(0..src.len()).collect::<Vec<_>>()
        );
        let p = pieces(src, 3);
        // Lines of 2, 1, 3 and 0 pipes: 2+1, then 3+0.
        assert_eq!(p, [0..10, 10..src.len()]);
        // A line over the bound is a piece of its own.
        assert_eq!(pieces(src, 2), [0..6, 6..10, 10..21, 21..src.len()]);
        assert_eq!(p.iter().map(|r| &src[r.clone()]).collect::<String>(), src);
    }
}
