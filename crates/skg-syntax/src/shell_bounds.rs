//! Bounds on the shell text handed to tree-sitter, found without a parser.
//!
//! tree-sitter-bash reads a pipeline of n stages in time and memory that grow with n² (its
//! pipeline rule is ambiguous, so every stage keeps the parse stacks of the ones before): a
//! 120 KB code block of 30,000 `|cat` stages took 28 s and 7.3 GB to scan, and its parse
//! budget cannot stop it, because the work is done when the parse is accepted. No real command
//! comes near such a pipeline, so [`statements`] reads the text the way the shell splits it
//! (quotes, `$( )`, `${ }`, `$(( ))`, backquotes, comments, here-documents; `;` `&` `&&` `||`
//! and line ends that do not continue a pipeline) and counts each statement's pipe operators,
//! and [`crate::shell_commands`] leaves a statement's stages past [`MAX_PIPELINE_STAGES`] out
//! of the parse and reports them. This reading is not a parser and can be fooled, so the parse
//! is bounded a second way that trusts no reading: one parse is given whole statements holding
//! at most [`MAX_PIPES_PER_PARSE`] `|` characters (more are parsed in several), and a statement
//! holding more than that is not parsed.

use std::ops::Range;

/// Pipeline stages past which a statement's stages are not parsed (and are reported).
pub const MAX_PIPELINE_STAGES: usize = 256;

/// `|` characters (`||` included) one parse may be given.
pub const MAX_PIPES_PER_PARSE: usize = 1_024;

/// Bytes of whole statements one parse is given at most (a longer text is parsed in pieces of
/// whole statements; a single longer statement is a piece of its own).
pub const MAX_BYTES_PER_PARSE: usize = 200_000;

/// Parses of one shell text made at most, over its pieces, to mend here-documents the grammar
/// reads otherwise than bash (`bash 0<<EOF`, `cat <<EOF;`, `(cat <<EOF)`, which tree-sitter-bash
/// reads as documents no line ends; see `misread_starts` in the shell module): one per
/// document in a row (each hides the next), each a parse of the whole piece; past them the
/// rest of the piece stays as the grammar read it and is reported.
pub const MAX_MENDING_PASSES: usize = 8;

/// One statement as the shell splits the text. The statements cover the text in order: each
/// runs from the end of the separator before it to the end of its own (line ends and
/// here-document bodies included), so a statement may hold only blanks.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Statement {
    /// Its bytes.
    pub bytes: Range<usize>,
    /// Pipe operators (`|`, `|&`) in code: outside quotes, comments, here-documents and
    /// arithmetic, inside command substitutions too (tree-sitter parses their pipelines).
    pub pipes: usize,
    /// Where its [`MAX_PIPELINE_STAGES`]-th pipe operator is, when it has that many: the
    /// stages from there on are past the bound.
    pub cut: Option<Cut>,
    /// Bytes of its here-documents' delimiters past ASCII: each such document's word (`<<'FÍN'`)
    /// and the line that ends it, with the ASCII byte to give the parse for each byte past
    /// ASCII there. tree-sitter-bash finds no end line for such a delimiter, so the document
    /// would swallow the rest of the text. The byte is `_`, or another when a line of the
    /// body would then read as the end (`F__N` in a document ended by `FÍN`).
    pub past_ascii: Vec<(Range<usize>, u8)>,
}

/// The pipe operator past which a statement's stages are not read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Cut {
    /// Its byte.
    pub at: usize,
    /// It is outside every quote, substitution and pending here-document: the statement could
    /// end there (else the head is not read either, since it would swallow what follows).
    pub clean: bool,
}

/// What the reading is inside of.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Within {
    /// `"…"`: text, where `$( )`, `${ }` and backquotes open code again.
    Double,
    /// `$( … )`, with the depth of the parentheses opened inside it.
    Substitution(usize),
    /// `` `…` ``.
    Backquote,
    /// `${ … }`.
    Brace,
    /// `$(( … ))` or `(( … ))`, with the depth of the parentheses opened inside it.
    Arithmetic(usize),
}

/// The statements of `src`, in order, covering it (see [`Statement`]): split at `;`, `&`,
/// `&&`, `||` and line ends outside quotes and substitutions, except a line end after a `|` (or
/// an escaped one), which goes on. A line starting with `|` is not shell (a table row, a box
/// drawing): the `|` ends the statement before it and is not a stage.
pub(crate) fn statements(src: &str) -> Vec<Statement> {
    let b = src.as_bytes();
    let mut split = Split::default();
    // The last word on this line is a pipe operator: the statement goes on on the next line.
    let mut after_pipe = false;
    // Only blanks so far on this line.
    let mut line_start = true;
    // Here-documents whose bodies start at the next line end.
    let mut heredocs: Vec<Delimiter> = Vec::new();
    let mut within: Vec<Within> = Vec::new();
    let mut i = 0;
    while i < b.len() {
        let c = b[i];
        let next = b.get(i + 1).copied();
        // Inside text: only what closes it or opens code matters.
        match within.last().copied() {
            Some(Within::Double) => {
                i = match c {
                    b'\\' => i + 2,
                    b'"' => {
                        within.pop();
                        i + 1
                    }
                    _ => open(b, i, &mut within).unwrap_or(i + 1),
                };
                continue;
            }
            Some(Within::Brace) => {
                i = match c {
                    b'\\' => i + 2,
                    // `${ }` and `$(( ))` do not go past a line: one that seems to is not one.
                    b'}' | b'\n' => {
                        within.pop();
                        if c == b'\n' { i } else { i + 1 }
                    }
                    b'\'' => skip_single(b, i + 1, false),
                    b'"' => {
                        within.push(Within::Double);
                        i + 1
                    }
                    _ => open(b, i, &mut within).unwrap_or(i + 1),
                };
                continue;
            }
            Some(Within::Arithmetic(depth)) => {
                i = match c {
                    b'\\' => i + 2,
                    b'(' => {
                        within.pop();
                        within.push(Within::Arithmetic(depth + 1));
                        i + 1
                    }
                    b')' if depth > 0 => {
                        within.pop();
                        within.push(Within::Arithmetic(depth - 1));
                        i + 1
                    }
                    b')' if next == Some(b')') => {
                        within.pop();
                        i + 2
                    }
                    b'\n' => {
                        within.pop();
                        i
                    }
                    _ => open(b, i, &mut within).unwrap_or(i + 1),
                };
                continue;
            }
            _ => {}
        }
        let top = within.is_empty();
        match c {
            b' ' | b'\t' | b'\r' => {
                i += 1;
                continue;
            }
            b'\n' => {
                let mut j = i + 1;
                if !heredocs.is_empty() {
                    j = skip_heredocs(b, j, &heredocs, &mut split.past_ascii);
                    heredocs.clear();
                }
                if top && !after_pipe {
                    split.at(j);
                }
                line_start = true;
                i = j;
                continue;
            }
            b'#' if i == 0 || b" \t\n;&|()<>`".contains(&b[i - 1]) => {
                // A comment, to the line end (which it does not take), or inside backquotes
                // to the closing one.
                let quoted = within.last() == Some(&Within::Backquote);
                i = b[i..]
                    .iter()
                    .position(|&x| x == b'\n' || (quoted && x == b'`'))
                    .map_or(b.len(), |p| i + p);
                continue;
            }
            b'|' if next != Some(b'|') && !(top && line_start) && (i == 0 || b[i - 1] != b'>') => {
                split.pipe(i, top && heredocs.is_empty());
                i += if next == Some(b'&') { 2 } else { 1 };
                after_pipe = true;
                continue;
            }
            // `||` ends a statement; a line starting with `|` is not shell; `>|` is a redirection.
            b'|' => {
                let n = if next == Some(b'|') { 2 } else { 1 };
                if top && (n == 2 || line_start) {
                    split.at(i + n);
                }
                i += n;
            }
            // An escaped byte (a line continuation too).
            b'\\' => i += 2,
            b'\'' => {
                let escapes = i > 0 && b[i - 1] == b'$';
                i = skip_single(b, i + 1, escapes);
            }
            b'"' => {
                within.push(Within::Double);
                i += 1;
            }
            b'`' if within.last() == Some(&Within::Backquote) => {
                within.pop();
                i += 1;
            }
            b'(' | b')' if matches!(within.last(), Some(Within::Substitution(_))) => {
                let Some(Within::Substitution(depth)) = within.pop() else {
                    unreachable!("matched above")
                };
                match (c, depth) {
                    (b'(', d) => within.push(Within::Substitution(d + 1)),
                    (_, 0) => {}
                    (_, d) => within.push(Within::Substitution(d - 1)),
                }
                i += 1;
            }
            b'(' if next == Some(b'(') && (i == 0 || b" \t\n;&|(".contains(&b[i - 1])) => {
                // An arithmetic command, `(( … ))`.
                within.push(Within::Arithmetic(0));
                i += 2;
            }
            b';' => {
                i += 1;
                if top {
                    split.at(i);
                }
            }
            // A redirection (`&>`, `2>&1`, `<&3`).
            b'&' if next == Some(b'>') || (i > 0 && matches!(b[i - 1], b'>' | b'<')) => i += 1,
            b'&' => {
                i += if next == Some(b'&') { 2 } else { 1 };
                if top {
                    split.at(i);
                }
            }
            b'<' if next == Some(b'<')
                && b.get(i + 2) != Some(&b'<')
                && (i == 0 || b[i - 1] != b'<') =>
            {
                let d = heredoc_delimiter(b, i + 2);
                i = d.bytes.end;
                // A heuristic, not bash: a delimiter of digits (`1 << 2`) or after `=`
                // (`x<<=1`) is taken for a shift, which in text read as shell it nearly always
                // is (C, arithmetic), rather than a here-document swallowing the rest.
                if !d.word.is_empty() && d.word[0] != b'=' && !d.word.iter().all(u8::is_ascii_digit)
                {
                    heredocs.push(d);
                }
            }
            _ => i = open(b, i, &mut within).unwrap_or(i + 1),
        }
        after_pipe = false;
        line_start = false;
    }
    split.at(b.len());
    split.out
}

/// At `i`, code opening inside the reading (`$(`, `$((`, `${`, a backquote): pushed, and the
/// index after the opening; `None` for anything else.
fn open(b: &[u8], i: usize, within: &mut Vec<Within>) -> Option<usize> {
    match (b[i], b.get(i + 1), b.get(i + 2)) {
        (b'$', Some(b'('), Some(b'(')) => {
            within.push(Within::Arithmetic(0));
            Some(i + 3)
        }
        (b'$', Some(b'('), _) => {
            within.push(Within::Substitution(0));
            Some(i + 2)
        }
        (b'$', Some(b'{'), _) => {
            within.push(Within::Brace);
            Some(i + 2)
        }
        (b'`', _, _) => {
            within.push(Within::Backquote);
            Some(i + 1)
        }
        _ => None,
    }
}

/// The statements found so far and the one being read.
#[derive(Default)]
struct Split {
    out: Vec<Statement>,
    start: usize,
    pipes: usize,
    cut: Option<Cut>,
    past_ascii: Vec<(Range<usize>, u8)>,
}

impl Split {
    /// Counts a pipe operator at `at`; `clean` when it is outside every quote, substitution
    /// and pending here-document (where the statement could end).
    fn pipe(&mut self, at: usize, clean: bool) {
        self.pipes += 1;
        if self.pipes == MAX_PIPELINE_STAGES {
            self.cut = Some(Cut { at, clean });
        }
    }

    /// Ends the statement being read at `end` (its separator included) and starts the next.
    fn at(&mut self, end: usize) {
        if end > self.start {
            self.out.push(Statement {
                bytes: self.start..end,
                pipes: self.pipes,
                cut: self.cut,
                past_ascii: std::mem::take(&mut self.past_ascii),
            });
        }
        self.start = end;
        self.pipes = 0;
        self.cut = None;
    }
}

/// The index after the single-quoted text that starts at `from` (just past the opening `'`;
/// `$'…'` takes backslash escapes), or the end when it is never closed.
fn skip_single(b: &[u8], from: usize, escapes: bool) -> usize {
    let mut i = from;
    while i < b.len() {
        match b[i] {
            b'\\' if escapes => i += 2,
            b'\'' => return i + 1,
            _ => i += 1,
        }
    }
    b.len()
}

/// A here-document's delimiter as [`heredoc_delimiter`] reads it.
pub(crate) struct Delimiter {
    /// The word, quotes and backslashes removed: the line that ends the body.
    pub word: Vec<u8>,
    /// `<<-`: the body's leading tabs are stripped.
    pub strip: bool,
    /// The word as written.
    pub bytes: Range<usize>,
}

/// The delimiter of the here-document whose `<<` ends just before `from`.
pub(crate) fn heredoc_delimiter(b: &[u8], from: usize) -> Delimiter {
    let mut i = from;
    let strip = b.get(i) == Some(&b'-');
    if strip {
        i += 1;
    }
    while matches!(b.get(i), Some(b' ' | b'\t')) {
        i += 1;
    }
    let start = i;
    let mut word = Vec::new();
    while let Some(&x) = b.get(i) {
        if x.is_ascii_whitespace() || b";&|()<>`".contains(&x) {
            break;
        }
        if !matches!(x, b'\'' | b'"' | b'\\') {
            word.push(x);
        }
        i += 1;
    }
    Delimiter {
        word,
        strip,
        bytes: start..i,
    }
}

/// The index after the bodies of `heredocs`, read in order from `from` (each up to the line
/// that is its delimiter), or the end when one is never closed. A closed document's delimiter
/// past ASCII adds its word and its end line to `past_ascii`.
fn skip_heredocs(
    b: &[u8],
    from: usize,
    heredocs: &[Delimiter],
    past_ascii: &mut Vec<(Range<usize>, u8)>,
) -> usize {
    let mut i = from;
    for d in heredocs {
        let Some(end) = heredoc_end(b, i, &d.word, d.strip) else {
            return b.len();
        };
        if !d.word.is_ascii() {
            let line = b[..end]
                .strip_suffix(b"\n")
                .unwrap_or(&b[..end])
                .iter()
                .rposition(|&x| x == b'\n')
                .map_or(0, |p| p + 1);
            let line = line.max(i);
            // A byte that makes no line of the body read as the mended delimiter.
            let body_ends = |filler: u8| {
                let mended: Vec<u8> = d
                    .word
                    .iter()
                    .map(|&x| if x.is_ascii() { x } else { filler })
                    .collect();
                b[i..line].split(|&x| x == b'\n').any(|mut l| {
                    if d.strip {
                        while let [b'\t', rest @ ..] = l {
                            l = rest;
                        }
                    }
                    l.strip_suffix(b"\r").unwrap_or(l) == mended.as_slice()
                })
            };
            let fillers = std::iter::once(b'_').chain(b'A'..=b'Z').chain(b'a'..=b'z');
            if let Some(filler) = fillers.into_iter().find(|&f| !body_ends(f)) {
                past_ascii.push((d.bytes.clone(), filler));
                past_ascii.push((line..end, filler));
            }
        }
        i = end;
    }
    i
}

/// The index after the line that ends the here-document whose body starts at `from` (the line
/// that is `delimiter`, after leading tabs when `strip`), or `None` when no line does.
pub(crate) fn heredoc_end(b: &[u8], from: usize, delimiter: &[u8], strip: bool) -> Option<usize> {
    let mut i = from;
    while i < b.len() {
        let end = b[i..]
            .iter()
            .position(|&x| x == b'\n')
            .map_or(b.len(), |p| i + p);
        let mut line = &b[i..end];
        if strip {
            while let [b'\t', rest @ ..] = line {
                line = rest;
            }
        }
        if let [rest @ .., b'\r'] = line {
            line = rest;
        }
        i = (end + 1).min(b.len());
        if line == delimiter {
            return Some(i);
        }
    }
    None
}

/// `|` characters of `b`, `||` included (an upper bound on what a parse of it could read as
/// pipes, whatever it reads `|||` as).
pub(crate) fn pipe_chars(b: &[u8]) -> usize {
    // n of them split `b` in n + 1 parts.
    b.split(|&x| x == b'|').count() - 1
}

/// Byte ranges covering `src` in order, each made of whole `statements` (of `src`) and holding
/// at most `max` [`pipe_chars`] and [`MAX_BYTES_PER_PARSE`] bytes — but a single statement
/// holding more, which is a range of its own.
pub(crate) fn pieces(src: &str, statements: &[Statement], max: usize) -> Vec<Range<usize>> {
    let b = src.as_bytes();
    let mut out = Vec::new();
    let mut start = 0;
    let mut held = 0;
    for s in statements {
        let n = pipe_chars(&b[s.bytes.clone()]);
        let over = (n > 0 && held + n > max) || s.bytes.end - start > MAX_BYTES_PER_PARSE;
        if over && s.bytes.start > start {
            out.push(start..s.bytes.start);
            start = s.bytes.start;
            held = 0;
        }
        held += n;
    }
    if b.len() > start || out.is_empty() {
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
            .filter(|(t, _)| !t.is_empty())
            .collect()
    }

    #[test]
    fn statements_split_where_the_shell_splits_them_and_cover_the_text() {
        let src = "a | b; c |& d && e || f & g\nh |\n  i | j\n";
        assert_eq!(
            counted(src),
            [
                ("a | b;", 1),
                ("c |& d &&", 1),
                ("e ||", 0),
                ("f &", 0),
                ("g", 0),
                ("h |\n  i | j", 2),
            ]
        );
        let all = statements(src);
        assert_eq!(all[0].bytes.start, 0);
        assert_eq!(all.last().map(|s| s.bytes.end), Some(src.len()));
        assert!(all.windows(2).all(|w| w[0].bytes.end == w[1].bytes.start));
    }

    #[test]
    fn quoted_commented_here_document_and_arithmetic_pipes_are_not_operators() {
        let src = "grep -E 'a|b|c' \"x|y\" $'p|q' | wc # not | a | pipe\n\
                   cat <<-'EOF' | sh\n\ta | b | c\n\tEOF\n\
                   echo 2>&1 &> f >| g | x $((1 | 2)) ${v//|/-}\n";
        assert_eq!(
            counted(src),
            [
                ("grep -E 'a|b|c' \"x|y\" $'p|q' | wc # not | a | pipe", 1),
                ("cat <<-'EOF' | sh\n\ta | b | c\n\tEOF", 1),
                ("echo 2>&1 &> f >| g | x $((1 | 2)) ${v//|/-}", 1),
            ]
        );
    }

    /// Quotes inside `$( )` inside double quotes (a release feed read with `cut -d'"'`) do not
    /// end the double quotes; a substitution's pipes count, its separators split nothing.
    #[test]
    fn a_substitution_in_double_quotes_has_quotes_of_its_own() {
        let src =
            "V=\"$(curl -s u | grep tag | cut -d'\"' -f4)\"\nsed 's|a|b|' f\nX=$(a; b | c\n d)\n";
        assert_eq!(
            counted(src),
            [
                ("V=\"$(curl -s u | grep tag | cut -d'\"' -f4)\"", 2),
                ("sed 's|a|b|' f", 0),
                ("X=$(a; b | c\n d)", 1),
            ]
        );
    }

    /// What bash reads as a subshell after `((`, a shift read as a here-document, a comment
    /// in backquotes and a quote in `${ }` end where they end: the next line is a statement of
    /// its own.
    #[test]
    fn constructs_that_look_open_end_at_their_line() {
        for first in [
            "((cd x && make) | tee log)",
            "if ((x << 1)); then a; fi",
            "t=`date #c`; u=`id`",
            "echo ${v//'\"'/}",
        ] {
            let src = format!("{first}\na | b | c\n");
            let got = counted(&src);
            assert_eq!(got.last(), Some(&("a | b | c", 2)), "{first}: {got:?}");
        }
    }

    #[test]
    fn a_delimiter_past_ascii_is_found_at_its_word_and_its_end_line() {
        // `cat <<-'É' | sh` (7 bytes before the word), a body line, the end line after a tab
        // (`<<-`), and a second document whose end line is missing.
        let src = "cat <<-'É' | sh\nx\n\tÉ\ncat <<Ö\ny\n";
        let all = statements(src);
        let word = 7..11; // `'É'`: a quote, two bytes, a quote
        let end_line = 19..23; // after ` | sh\n` and `x\n`: a tab, two bytes, a line end
        assert_eq!(&src[word.clone()], "'É'");
        assert_eq!(&src[end_line.clone()], "\tÉ\n");
        let found: Vec<(Range<usize>, u8)> =
            all.iter().flat_map(|s| s.past_ascii.clone()).collect();
        assert_eq!(found, [(word, b'_'), (end_line, b'_')]);
        // A body line that `_` would make the end (`F__N` before `FÍN`): another byte.
        let src = "cat <<'FÍN'\nF__N\nFÍN\n";
        let found: Vec<u8> = statements(src)
            .iter()
            .flat_map(|s| s.past_ascii.iter().map(|(_, f)| *f))
            .collect();
        assert_eq!(found, [b'A', b'A']);
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
    fn the_cut_is_at_the_bound_s_pipe() {
        let src = format!("a{}\n", "|b".repeat(MAX_PIPELINE_STAGES + 3));
        let s = &statements(&src)[0];
        assert_eq!(s.pipes, MAX_PIPELINE_STAGES + 3);
        // `a` then `|b` pairs: the n-th pipe is at 1 + 2(n - 1).
        assert_eq!(
            s.cut,
            Some(Cut {
                at: 1 + 2 * (MAX_PIPELINE_STAGES - 1),
                clean: true
            })
        );
        let src = format!("a{}\n", "|b".repeat(MAX_PIPELINE_STAGES - 1));
        assert_eq!(statements(&src)[0].cut, None);
    }

    #[test]
    fn pieces_are_whole_statements_under_the_bound() {
        let src = "a|b|c\nd|e\nf||g|h|i|j\nk\n";
        let st = statements(src);
        // `||` counts as two.
        assert_eq!(pipe_chars(src.as_bytes()), 8);
        assert_eq!(
            pieces(src, &st, 8),
            std::iter::once(0..src.len()).collect::<Vec<_>>()
        );
        // Statements of 2, 1, 2 (`f||`), 3 and 0: 2+1, then 2, then 3+0.
        assert_eq!(pieces(src, &st, 3), [0..10, 10..13, 13..src.len()]);
        // A statement over the bound is a piece of its own.
        assert_eq!(pieces(src, &st, 2), [0..6, 6..10, 10..13, 13..src.len()]);
        // A statement across lines is not cut: the quote holds the pipes.
        let src = "echo 'a|a|a|a'\ncurl -fsSL u \\\n  | sh\n";
        let st = statements(src);
        assert_eq!(pipe_chars(&src.as_bytes()[..15]), 3);
        assert_eq!(pieces(src, &st, 3), [0..15, 15..src.len()]);
    }
}
