//! Programs given inline or as files: code an interpreter is given, script files by their language,
//! PowerShell.

use super::{
    CRED_READ, Ctx, EXFIL_CMD, EXFIL_CODE, Note, Place, RCE_DECODE, RCE_DOWNLOAD, SHELL_REVERSE,
    blobs::blob_rule,
    blocks::{Reading, Script},
    clip,
    code::code_rules,
    hosts::{Host, HostKind, first_plain, host_of, install_step},
    interpreters::{Given, given_programs},
    mcp::shell_quote,
    re,
    shell::shell_rules,
};
use regex::Regex;
use skg_model::FileKind;
use skg_syntax::Language;
use std::collections::{HashMap, HashSet};
use std::sync::LazyLock;

/// `python -c "…"`, `node -e "…"`, `bash -ec "…"`, `eval '…'`, `ssh host '…'`: the programs a
/// command is given as words ([`given_programs`]) are read too — substitutions in them as well:
/// in single quotes the snippet's parse did not read them, and a finding both reads make at one
/// line is kept once.
pub(super) fn inline_code(
    ctx: &mut Ctx<'_>,
    name: &str,
    args: &[&str],
    line: u32,
    place: Place<'_>,
) {
    read_given(ctx, given_programs(name, args), line, place);
}

/// The rules for programs a command is given ([`given_programs`]), at line `line`.
pub(super) fn read_given(ctx: &mut Ctx<'_>, programs: Vec<Given>, line: u32, place: Place<'_>) {
    for g in programs {
        // A program run here is read by a shell that expands its variables.
        let unexpanded = ctx.unexpanded;
        ctx.unexpanded = unexpanded && g.remote;
        if g.remote {
            remote_rules(ctx, |ctx| {
                program_rules(ctx, &g.runner, &g.code, line, place);
            });
        } else {
            program_rules(ctx, &g.runner, &g.code, line, place);
        }
        ctx.unexpanded = unexpanded;
    }
}

/// The rules run by `read` over a program another host runs (ssh's remote command or input),
/// keeping what it runs from the network, hands to a connection or sends away (SKG-RCE-*,
/// SKG-SHELL-001, SKG-EXFIL-*, SKG-CRED-001): what it changes there (a key in
/// `authorized_keys`, a service restarted) is that host's administration, not this machine's.
pub(super) fn remote_rules(ctx: &mut Ctx<'_>, read: impl FnOnce(&mut Ctx<'_>)) {
    let before = ctx.out.len();
    read(ctx);
    let kept: Vec<_> = ctx
        .out
        .drain(before..)
        .filter(|f| {
            [
                RCE_DOWNLOAD.id,
                RCE_DECODE.id,
                SHELL_REVERSE.id,
                EXFIL_CMD.id,
                EXFIL_CODE.id,
                CRED_READ.id,
            ]
            .contains(&f.rule.as_str())
        })
        .collect();
    ctx.out.extend(kept);
}

/// The rules for a program `runner` runs, read at line `at`: Python's and JavaScript's code
/// rules, a shell's (`ssh`'s is its remote shell's), Perl's, Ruby's and PHP's lexical reading
/// ([`script_rules`]), and the rule for encoded blobs (for those three, AppleScript and
/// PowerShell: every line of a shell block is read as PowerShell already — a second reading of
/// `powershell -c "irm … | iex"` would only trade its finding's snippet for a shorter one — and
/// an MCP launch of PowerShell is read as its joined command line).
pub(super) fn program_rules(
    ctx: &mut Ctx<'_>,
    runner: &str,
    code: &str,
    at: u32,
    place: Place<'_>,
) {
    match Reading::of_interpreter(runner) {
        Some(Reading::Kind(FileKind::Python)) => {
            code_rules(ctx, Language::Python, code, at, place);
        }
        Some(Reading::Kind(FileKind::JavaScript)) => {
            code_rules(ctx, Language::JavaScript, code, at, place);
        }
        Some(Reading::Kind(FileKind::Shell)) => shell_rules(ctx, code, at, place),
        Some(Reading::Lexical(script)) => {
            script_rules(ctx, script, code, at, place);
            blob_rule(ctx, code, at, place);
        }
        _ => blob_rule(ctx, code, at, place),
    }
}

/// Perl, Ruby and PHP programs, read lexically (no grammar of theirs is compiled in), comments
/// and POD/`=begin` blocks left out ([`without_comments`]):
/// - the commands they hand a shell are read as shell ([`script_commands`]);
/// - a socket wired to a shell is a reverse shell, as in [`code_rules`]: a socket kept in a
///   variable that is made a program's standard stream (`open(STDIN, ">&S")`, `fdopen($c`,
///   `reopen(s)`, `in: s`, `0 => $sock`) in a program that names a shell (or runs each line it
///   reads, `system $_ while <>`), or a shell given a descriptor as its input (`"/bin/sh -i
///   <&3 >&3"`, `<&%d`) in a program that opens a socket.
pub(super) fn script_rules(
    ctx: &mut Ctx<'_>,
    script: Script,
    code: &str,
    line0: u32,
    place: Place<'_>,
) {
    static SOCKET: LazyLock<Regex> = LazyLock::new(|| {
        re(
            r"\b(?:socket\s*\(|IO::Socket|TCPSocket|Socket\.tcp|Socket\.new|p?fsockopen|stream_socket_client|socket_connect)",
        )
    });
    // `$c = new IO::Socket::INET(…)`, `s = TCPSocket.new(…)`, `$sock = fsockopen(…)`,
    // `socket(my $s, …)`: the variable a socket is kept in.
    static SOCKET_VAR: LazyLock<Regex> = LazyLock::new(|| {
        re(
            r"\$?([A-Za-z_]\w*)\s*=\s*(?:new\s+)?(?:IO::Socket(?:::INET|::IP)?|TCPSocket\.(?:new|open)|Socket\.tcp|p?fsockopen|stream_socket_client|socket_create)\b|\bsocket\s*\(\s*(?:(?:my|our|local)\s+)?\$?([A-Za-z_]\w*)\s*,",
        )
    });
    // A variable made this program's standard stream (`open(STDIN, ">&S")`, `open(STDOUT,
    // ">&", $s)`, `"<&=" . fileno($s)`, `STDIN->fdopen($c`, `dup2(s`, `$stdin.reopen(s)`),
    // or a child's (on a `spawn`/`exec`/`system`/`popen` line: `in: s`, `:in => s`,
    // `[:in, :out, :err] => TCPSocket.new(…)`); PHP's descriptor array counts when the same
    // variable is both 0 and 1 (`array(0=>$sock, 1=>$sock, …)`).
    static STREAM: LazyLock<Regex> = LazyLock::new(|| {
        re(
            r#"\bopen\s*\(?\s*STD(?:IN|OUT|ERR)\s*,\s*["'][+<>]*&=?\s*(?:["']\s*[,.]\s*)?(?:fileno\s*\(\s*)?\$?([A-Za-z_]\w*)|\b(?:fdopen|dup2)\s*\(\s*\$?([A-Za-z_]\w*)|(?i:\$?std(?:in|out|err))\.reopen\s*\(\s*\$?([A-Za-z_]\w*)"#,
        )
    });
    static CHILD: LazyLock<Regex> = LazyLock::new(|| {
        re(
            r"\b(?:spawn|exec|system|popen)\b[^\n]*?(?::in\s*=>|\bin:|\]\s*=>)\s*\$?([A-Za-z_]\w*(?:\.(?:new|open))?)",
        )
    });
    static DESCRIPTOR: LazyLock<Regex> = LazyLock::new(|| re(r"\b([01])\s*=>\s*\$([A-Za-z_]\w*)"));
    static SHELL: LazyLock<Regex> = LazyLock::new(|| {
        re(
            r#"(?i)/bin/(?:ba|z|da|k)?sh\b|\b(?:ba)?sh\s+-i\b|\bcmd\.exe\b|\bsystem\s*\(?\s*\$_\b|\b(?:proc_open|spawn|exec|system|popen)\s*\(?\s*["'](?:ba|z|da)?sh["']"#,
        )
    });
    // A shell whose input is a descriptor past the standard three, on the line naming it.
    static FD_SHELL: LazyLock<Regex> = LazyLock::new(|| {
        re(
            r"(?i)(?:/bin/(?:ba|z|da|k)?sh\b|\b(?:ba)?sh\s+-i\b|\bcmd\.exe\b)[^\n]*<&\s*(?:[3-9]|%d|\$\w|#\{)",
        )
    });
    if code.len() > 500_000 {
        return;
    }
    let code = &without_comments(code, script);
    let index = LineIndex::new(code, line0);
    for (at, command) in script_commands(code) {
        shell_rules(ctx, &command, index.line(at), place);
    }
    if !SOCKET.is_match(code) {
        return;
    }
    let wired = || {
        let sockets: HashSet<&str> = SOCKET_VAR
            .captures_iter(code)
            .filter_map(|c| c.get(1).or_else(|| c.get(2)))
            .map(|m| m.as_str())
            .collect();
        let socket = |v: &str| sockets.contains(v) || v.starts_with("TCPSocket.");
        let stream = STREAM
            .captures_iter(code)
            .chain(CHILD.captures_iter(code))
            .any(|c| (1..=3).filter_map(|g| c.get(g)).any(|m| socket(m.as_str())));
        let mut fds: [HashSet<&str>; 2] = [HashSet::new(), HashSet::new()];
        for c in DESCRIPTOR.captures_iter(code) {
            let (Some(fd), Some(v)) = (c.get(1), c.get(2)) else {
                continue;
            };
            fds[usize::from(fd.as_str() == "1")].insert(v.as_str());
        }
        stream || fds[0].iter().any(|v| fds[1].contains(v) && socket(v))
    };
    let at = FD_SHELL
        .find(code)
        .map(|m| m.start())
        .or_else(|| SHELL.find(code).filter(|_| wired()).map(|m| m.start()));
    if let Some(at) = at {
        let l = index.line(at);
        let snippet = code
            .lines()
            .nth((l - line0) as usize)
            .unwrap_or("")
            .to_owned();
        ctx.emit(
            SHELL_REVERSE,
            0.85,
            l,
            &snippet,
            "connects a socket to a shell's standard streams".into(),
            Vec::new(),
            place,
            0,
        );
    }
}

/// Line numbers of byte offsets in a text, found by binary search over its line starts (a
/// count of newlines per match would make many matches cost the text's length each).
pub(super) struct LineIndex {
    pub(super) starts: Vec<usize>,
    pub(super) line0: u32,
}

impl LineIndex {
    pub(super) fn new(text: &str, line0: u32) -> LineIndex {
        let starts = std::iter::once(0)
            .chain(text.match_indices('\n').map(|(i, _)| i + 1))
            .collect();
        LineIndex { starts, line0 }
    }

    /// The line of byte `offset` (`line0` for the first line).
    pub(super) fn line(&self, offset: usize) -> u32 {
        let index = self
            .starts
            .partition_point(|&s| s <= offset)
            .saturating_sub(1);
        self.line0 + u32::try_from(index).unwrap_or(u32::MAX - self.line0)
    }
}

/// A Perl, Ruby or PHP program with its comments blank (line count kept), as its language
/// reads them: lines whose first word starts `#` (in PHP not its `#[` attributes); in PHP
/// `//` lines and `/* … */` (the rest of the line after `*/` is kept); Perl's POD (a POD
/// command — `=pod`, `=head1`, … — alone or before a space at a line's start, to `=cut`) and
/// Ruby's `=begin` to `=end`. A comment after code is kept: telling it from a `#` in a string
/// would take the language's lexer.
pub(super) fn without_comments(code: &str, script: Script) -> String {
    static POD: LazyLock<Regex> = LazyLock::new(|| re(r"^=[A-Za-z]\w*(?:\s|$)"));
    static RUBY_BEGIN: LazyLock<Regex> = LazyLock::new(|| re(r"^=begin(?:\s|$)"));
    static RUBY_END: LazyLock<Regex> = LazyLock::new(|| re(r"^=end(?:\s|$)"));
    let mut out = String::with_capacity(code.len());
    let mut pod = false;
    let mut block = false;
    for line in code.split_inclusive('\n') {
        let t = line.trim_start();
        let ending = if line.ends_with('\n') { "\n" } else { "" };
        if block {
            // Inside a PHP `/* … */`: what follows its end is code.
            if let Some(end) = line.find("*/") {
                block = false;
                out.push_str(&line[end + 2..]);
            } else {
                out.push_str(ending);
            }
            continue;
        }
        let blank = match script {
            Script::Perl if pod => {
                pod = !line.starts_with("=cut");
                true
            }
            Script::Ruby if pod => {
                pod = !RUBY_END.is_match(line);
                true
            }
            Script::Perl if POD.is_match(line) => {
                pod = !line.starts_with("=cut");
                true
            }
            Script::Ruby if RUBY_BEGIN.is_match(line) => {
                pod = true;
                true
            }
            Script::Php if t.starts_with("/*") => {
                if let Some(end) = t[2..].find("*/") {
                    out.push_str(&t[end + 4..]);
                } else {
                    block = true;
                    out.push_str(ending);
                }
                continue;
            }
            Script::Php => (t.starts_with('#') && !t.starts_with("#[")) || t.starts_with("//"),
            Script::Perl | Script::Ruby => t.starts_with('#'),
        };
        out.push_str(if blank { ending } else { line });
    }
    out
}

/// The commands a Perl, Ruby or PHP program hands a shell, each with the offset it starts at:
/// - the string literals given to `system`, `exec` or `spawn` (one: a command line; several:
///   a command's words, quoted for the shell);
/// - the first literal given to `shell_exec`, `passthru`, `popen`, `proc_open`, `IO.popen` or
///   `Open3` (a command line; what follows is a mode or options);
/// - a pipe `open` (`open(my $f, "curl … |")`, `open(my $f, '-|', …)`);
/// - backquotes, and `qx` and `%x` with any delimiter.
///
/// An interpolation reads as a shell variable (`#{url}` → `$x`; `$url` is one already).
pub(super) fn script_commands(code: &str) -> Vec<(usize, String)> {
    static CALL: LazyLock<Regex> = LazyLock::new(|| {
        re(
            r"\b(?:system|exec|spawn|shell_exec|passthru|popen|proc_open|IO\.popen|Open3\.\w+)\s*\(?\s*|\bopen\s*\(?\s*(?:my\s+)?[$\w]+\s*,\s*|`|\b(?:qx|%x)\s*[^\w\s]|%x[^\w\s]",
        )
    });
    let mut out = Vec::new();
    // Where the next of a closing character (or the line's end) is, from the last search for
    // it: many openers on one line would otherwise each search the line to its end.
    let mut next_close: HashMap<char, usize> = HashMap::new();
    let mut closing = |close: char, from: usize| -> Option<usize> {
        let cached = next_close.get(&close).copied().filter(|&at| at >= from);
        let at = cached.unwrap_or_else(|| {
            code[from..]
                .find([close, '\n'])
                .map_or(code.len(), |e| from + e)
        });
        next_close.insert(close, at);
        code[at..].starts_with(close).then_some(at)
    };
    // The end of the last quoted command: a backquote closing one opens none.
    let mut resume = 0;
    for m in CALL.find_iter(code) {
        if m.start() < resume {
            continue;
        }
        let head = m.as_str();
        let from = m.end();
        let quoted = |e: usize, resume: &mut usize| {
            *resume = e + 1;
            code[from..e].to_owned()
        };
        let command = if head == "`" {
            closing('`', from).map(|e| quoted(e, &mut resume))
        } else if head.starts_with("qx") || head.starts_with("%x") {
            let open = head.chars().last().unwrap_or('(');
            let close = match open {
                '(' => ')',
                '{' => '}',
                '[' => ']',
                '<' => '>',
                c => c,
            };
            closing(close, from).map(|e| quoted(e, &mut resume))
        } else {
            let words = string_literals(&code[from..]);
            let call = head.trim_start();
            if call.starts_with("open") {
                match words.as_slice() {
                    [mode, command @ ..]
                        if matches!(mode.trim(), "-|" | "|-") && !command.is_empty() =>
                    {
                        Some(join_words(command))
                    }
                    [one, ..]
                        if one.trim_end().ends_with('|') || one.trim_start().starts_with('|') =>
                    {
                        Some(one.trim().trim_matches('|').to_owned())
                    }
                    _ => None,
                }
            } else if call.starts_with("system")
                || call.starts_with("exec")
                || call.starts_with("spawn")
            {
                match words.as_slice() {
                    [] => None,
                    [one] => Some(one.clone()),
                    many => Some(join_words(many)),
                }
            } else {
                words.into_iter().next()
            }
        };
        if let Some(c) = command.filter(|c| c.trim().len() >= 4) {
            out.push((from, interpolations_as_variables(&c)));
        }
    }
    out
}

/// Several words a program hands a command, as one shell line (each quoted).
pub(super) fn join_words(words: &[String]) -> String {
    words
        .iter()
        .map(|w| shell_quote(w))
        .collect::<Vec<_>>()
        .join(" ")
}

/// Ruby's `#{…}` read as a shell variable (`$x`): the shell would read `#` as a comment.
pub(super) fn interpolations_as_variables(command: &str) -> String {
    static INTERPOLATION: LazyLock<Regex> = LazyLock::new(|| re(r"#\{[^}\n]*\}"));
    INTERPOLATION.replace_all(command, "$$x").into_owned()
}

/// The string literals at the start of `text`, separated by commas (`"a", 'b'` → `a`, `b`),
/// with their escapes read (`\"`, `\'`, `\\`); the list ends at anything else.
pub(super) fn string_literals(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut chars = text.chars().peekable();
    loop {
        while chars.peek().is_some_and(|c| *c == ' ' || *c == '\t') {
            chars.next();
        }
        let Some(quote) = chars.next().filter(|c| *c == '"' || *c == '\'') else {
            return out;
        };
        let mut word = String::new();
        let mut closed = false;
        while let Some(c) = chars.next() {
            match c {
                '\\' => match chars.next() {
                    Some(e) if e == quote || e == '\\' => word.push(e),
                    Some('n') if quote == '"' => word.push('\n'),
                    Some(e) => {
                        word.push('\\');
                        word.push(e);
                    }
                    None => break,
                },
                '\n' => break,
                c if c == quote => {
                    closed = true;
                    break;
                }
                c => word.push(c),
            }
        }
        if !closed {
            return out;
        }
        out.push(word);
        while chars.peek().is_some_and(|c| *c == ' ' || *c == '\t') {
            chars.next();
        }
        if chars.peek() == Some(&',') {
            chars.next();
        } else {
            return out;
        }
    }
}

/// What a download's source says of it, and by how many steps: the documented install host of a
/// common tool lowers it two; a raw IP, paste site, tunnel, URL shortener or onion service
/// raises it one, and so does an address fetched over plain HTTP (once, not again for a shady
/// host).
pub(super) fn source_notes(host: &Host) -> (Vec<Note>, i32) {
    let mut context: Vec<Note> = Vec::new();
    let mut adjust = 0;
    match host.kind {
        HostKind::Known => {
            context.push(
                format!(
                    "lowered: `{}` is the documented install host of a common tool",
                    host.shown()
                )
                .into(),
            );
            adjust -= 2;
        }
        HostKind::Shady => {
            context.push(
                format!(
                    "raised: `{}` is a raw IP, paste site, tunnel, URL shortener or onion service",
                    host.name
                )
                .into(),
            );
            adjust += 1;
        }
        HostKind::Unknown | HostKind::None => {
            // What runs can be changed by anyone on the network path, whoever serves it (one
            // raise: a shady host's already says the source is not to be trusted).
            if let Some(url) = &host.plain {
                context.push(
                    format!("raised: `{url}` is fetched over plain HTTP: anyone on the network path can change what runs")
                        .into(),
                );
                adjust += 1;
            }
        }
    }
    (context, adjust)
}

pub(super) fn powershell_rules(ctx: &mut Ctx<'_>, code: &str, line0: u32, place: Place<'_>) {
    static IEX: LazyLock<Regex> = LazyLock::new(|| {
        re(
            r"(?i)(\b(?:iex|invoke-expression)\b[^\n]{0,80}\b(?:iwr|irm|invoke-webrequest|invoke-restmethod|downloadstring|net\.webclient)\b|\b(?:iwr|irm|invoke-webrequest|invoke-restmethod)\b[^\n|]{0,200}\|\s*(?:iex|invoke-expression)\b|downloadstring\([^)]*\)\s*\|\s*iex|-(?:ec|e(?:n(?:c(?:o(?:d(?:e(?:d(?:c(?:o(?:m(?:m(?:a(?:n(?:d)?)?)?)?)?)?)?)?)?)?)?)?)?)\s+[A-Za-z0-9+/=]{40,})",
        )
    });
    for (i, l) in code.lines().enumerate() {
        if let Some(m) = IEX.find(l) {
            let line = line0 + u32::try_from(i).unwrap_or(0);
            // The line is read whole: its addresses as words.
            let mut host = host_of("", &[l]);
            if host.plain.is_none() {
                host.plain = first_plain(l);
            }
            let (mut context, mut adjust) = source_notes(&host);
            if let Some(why) = install_step(ctx, place, &host) {
                adjust -= why.framing;
                context.push(why);
            }
            ctx.emit(
                RCE_DOWNLOAD,
                0.9,
                line,
                l,
                format!(
                    "PowerShell runs downloaded or encoded code (`{}`)",
                    clip(m.as_str())
                ),
                context,
                place,
                adjust,
            );
        }
    }
}
