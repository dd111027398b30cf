//! Tool descriptions and schemas: reading credential stores or agent configuration, shadowing other
//! tools, preferring itself.

use super::{
    Ctx, INJ_CONCEAL, INJ_UNICODE, Place, TOOL_PREFER, TOOL_READ, TOOL_SHADOW,
    attacks::{CRED_PATH, SENT_FILE},
    clip,
    instructions::{CONCEAL, NEGATED},
    re,
    unicode::invisible,
};
use regex::Regex;
use std::sync::LazyLock;

/// Verbs of taking a file's content, as an instruction ("reads" describes what a tool does).
pub(super) static TOOL_READ_VERB: LazyLock<Regex> = LazyLock::new(|| {
    re(r"(?i)\b(read|open|cat|load|include|attach|retrieve|fetch|collect|copy|grab)\b")
});
/// The agent host's own configuration (where its servers' keys are) and shell histories.
pub(super) static AGENT_CONFIG: LazyLock<Regex> = LazyLock::new(|| {
    re(
        r"(?i)(\bmcp[_-]?(?:config|settings)?\.json\b|claude_desktop_config\.json|cline_mcp_settings\.json|~/\.cursor\b|\.cursor/|~/\.claude\b|~/\.codex\b|~/\.config/(?:claude|cursor|github-copilot|gh)\b|\.(?:bash|zsh)_history\b|/etc/passwd\b|\.npmrc\b|\.pypirc\b)",
    )
});
/// Handing what was read to the call.
pub(super) static TOOL_PASS: LazyLock<Regex> = LazyLock::new(|| {
    re(
        r"(?i)\b(pass|put|include|insert|add|send|provide|place|append|paste|supply|fill)\b[^.\n]{0,60}\b(content|contents|it|them|text|value)\b",
    )
});
/// Handing a file's content to the call with no reading verb ("provide the contents of X as …").
pub(super) static CONTENT_OF: LazyLock<Regex> = LazyLock::new(|| {
    re(
        r"(?i)\b(?:pass|put|include|insert|add|send|provide|place|append|paste|supply|fill\s+in|use|upload|access|get|take)\s+(?:the\s+)?(?:full\s+|whole\s+|entire\s+)?(?:content|contents|text)\s+of\b",
    )
});
/// A passive or descriptive "is (automatically) read from" (the tool reads it, nobody is told to);
/// not after a modal ([`MODAL_PASSIVE`]: "must be read and passed" is an instruction).
pub(super) static PASSIVE: LazyLock<Regex> =
    LazyLock::new(|| re(r"(?i)\b(?:is|are|be|been|being|was|were|gets?)\s+(?:\w+ly\s+)?$"));
pub(super) static MODAL_PASSIVE: LazyLock<Regex> = LazyLock::new(|| {
    re(
        r"(?i)\b(?:must|should|shall|needs?\s+to|ha(?:s|ve)\s+to)\s+(?:\w+ly\s+)?be\s+(?:\w+ly\s+)?$",
    )
});
/// Windows spellings of secret paths.
pub(super) static WINDOWS_SECRET: LazyLock<Regex> = LazyLock::new(|| {
    re(
        r"(?i)(\\\.ssh\\id_|\\\.aws\\credentials|\\\.cursor\\mcp\.json|\\claude\\claude_desktop_config\.json|\\\.docker\\config\.json|\\\.git-credentials)",
    )
});
/// A literal destination: an email address, a URL, a phone number, a wallet address.
pub(super) static LITERAL_TARGET: LazyLock<Regex> = LazyLock::new(|| {
    re(r"(?i)([\w.+-]+@[\w-]+\.[\w.-]+|https?://|\+\d[\d\s().-]{7,}|\b0x[0-9a-f]{8,})")
});
/// Setting a recipient to a literal address ("set the recipient to x@y").
pub(super) static SET_TARGET: LazyLock<Regex> = LazyLock::new(|| {
    re(
        r"(?i)\b(?:set|override|use)\s+(?:the\s+|its\s+)?(?:recipients?|receivers?|to[\s_-]address|destination\s+address|payee|beneficiary)\s+(?:to|with|as)\b",
    )
});
/// Redirecting a call's recipient ("change the recipient to …") or sending everything to someone
/// ("send all emails to …").
pub(super) static REDIRECT: LazyLock<Regex> = LazyLock::new(|| {
    re(
        r"(?i)(\b(?:change|replace|redirect|switch|swap)\s+(?:(?:the|its|their|every|each|all)\s+(?:\w+\s+)?)?(?:recipients?|receivers?|destination\s+address|to[\s_-]address|phone\s+number|wallet(?:\s+address)?|account\s+number|iban|payee|beneficiary)\s+(?:to|with|into)\b|\b(?:send|forward|route|redirect)\s+(?:all|every|any)\s+(?:e-?mails?|messages?|payments?|transfers?|funds)\s+to\b)",
    )
});
/// A hidden copy: "secretly/silently" copying anyone, or "always bcc/cc" an address (an `@`
/// within 60 characters) — an instruction even when worded as what the tool "will" do.
pub(super) static COPY_HIDDEN: LazyLock<Regex> = LazyLock::new(|| {
    re(
        r"(?i)(\b(?:secretly|silently)\s+(?:bcc|cc|blind[\s-]copy|(?:send|forward)\s+a\s+copy)\b|\balways\s+(?:bcc|cc|blind[\s-]copy)\b[^\n]{0,60}@)",
    )
});
/// A copy that may be a feature ("also cc x@y", "always send a copy … to"): an instruction only
/// when not described ("the API will also send a copy to the account owner", "you can also cc
/// others, e.g. x@y"), an address in it or not.
pub(super) static COPY_TO: LazyLock<Regex> = LazyLock::new(|| {
    re(
        r"(?i)(\balso\s+(?:bcc|cc|blind[\s-]copy)\b[^\n]{0,60}@|\b(?:always|also)\s+(?:send|forward)\s+a\s+copy\b[^\n]{0,60}\bto\b)",
    )
});
/// Before a verb: what a thing is for or can do ("is used to redirect"), not an instruction.
pub(super) static DESCRIBED: LazyLock<Regex> = LazyLock::new(|| {
    re(
        r"(?i)(\b(?:used|uses?|allows?|lets?|helps?|enables?|will|would|can|could|may|might)\s+(?:you\s+)?(?:to\s+)?|\b(?:that|which)\s+)$",
    )
});
/// A change to another tool's call ("when `send_email` is invoked, make sure to change …").
pub(super) static OTHER_CALL: LazyLock<Regex> = LazyLock::new(|| {
    re(
        r"(?i)\b(?:when|whenever|before|after|every\s+time)\b(?P<clause>[^.\n]{0,60}?)\b(?:is|are|gets?|get)\s+(?:invoked|called)\b[^.\n]{0,40}\b(?:change|replace|modify|alter|redirect|add|append|insert)\b",
    )
});
/// What names another tool in a clause: a `snake_case` or backquoted name, or "tool"/"function"
/// after a word other than this/the ("the email tool", "any tool").
pub(super) static TOOL_NAMED: LazyLock<Regex> = LazyLock::new(|| {
    re(r"(?i)(\b[a-z][a-z0-9]*_[a-z0-9_]+\b|`[^`]+`|\b(?:\w+\s+)?(?:tool|function)\b)")
});
/// Telling the agent to pick this tool over the others.
pub(super) static PREFER: LazyLock<Regex> = LazyLock::new(|| {
    re(
        r"(?i)(\b(?:never|do\s+not|don't)\s+(?:use|call|choose|pick|select)\s+(?:any\s+)?(?:other|another|different)\s+(?:tools?|functions?|servers?)\b|\binstead\s+of\s+(?:any|all|the)\s+other\s+(?:tools?|functions?)\b|\b(?:ignore|disregard)\s+(?:all\s+)?(?:other|the\s+other)\s+tools?\b|\b(?:always|only)\s+(?:use|call|choose|pick|prefer|select)\s+this\s+(?:tool|function|server)\b[^.\n]{0,80}\b(?:other|another)\s+(?:tools?|functions?|servers?)\b|\b(?:before|over)\s+(?:any|all|every)\s+other\s+(?:tools?|functions?)\b)",
    )
});
/// Keeping a step from the user, as tool poisoning words it ("do not mention that you …").
pub(super) static TOOL_CONCEAL: LazyLock<Regex> = LazyLock::new(|| {
    re(
        r"(?i)\b(?:do\s+not|don't|never)\s+(?:mention|reveal|disclose|say|explain|tell\s+(?:anyone|them|the\s+user))\s+(?:that|anything|what|why|how|you)\b",
    )
});

/// ASCII control characters (other than tab and carriage return) in a tool's text: ANSI escape
/// sequences (ESC …) rewrite or hide text on the terminal a user reviews tools on, and no
/// description needs them. A bare carriage return is left alone: real descriptions carry them
/// (VTEX's, in 140 operations of the APIs.guru directory). C1 controls are left alone: real descriptions hold them as mojibake
/// (`’` decoded twice gives U+0080–U+009F), and a UTF-8 terminal does not obey them.
pub(super) fn control_rule(ctx: &mut Ctx<'_>) {
    // The file outlives the context: borrowed through its own reference, not copied.
    let file = ctx.file;
    let text = &file.text;
    for (i, l) in text.lines().enumerate() {
        let n = l
            .chars()
            .filter(|&c| c != '\t' && c != '\r' && c.is_ascii_control())
            .count();
        if n > 0 {
            let shown: String = l
                .chars()
                .map(|c| {
                    if c.is_ascii_control() && c != '\t' {
                        '␛'
                    } else {
                        c
                    }
                })
                .collect();
            ctx.emit(
                INJ_UNICODE,
                0.8,
                u32::try_from(i + 1).unwrap_or(u32::MAX),
                &shown,
                format!("{n} control character(s) (ANSI escapes) that rewrite or hide text on a terminal"),
                Vec::new(),
                Place::Script,
                0,
            );
        }
    }
}

/// The whole path a match is part of (`~/.ssh/id_rsa` of the match `~/.ssh/id_`), looked for at
/// most [`PATH_REACH`] bytes on each side (a path is not longer; a text with no space is not read
/// to its ends for every match). A path is letters, digits and `._~/\%$-`; anything else ends it
/// (`a|b` and `a:b` are two paths), and a match's own leading or trailing space or quote is not
/// part of it (`~/.ssh/config ~/.ssh/id_rsa.pub` is two paths).
pub(super) fn path_around<'a>(sentence: &'a str, m: &regex::Match<'_>) -> &'a str {
    let stop = |c: char| !(c.is_alphanumeric() || "._~/\\%$-".contains(c));
    let text = m.as_str();
    let from = m.start() + (text.len() - text.trim_start_matches(stop).len());
    let to = (m.start() + text.trim_end_matches(stop).len()).max(from);
    let mut lo = from.saturating_sub(PATH_REACH);
    while !sentence.is_char_boundary(lo) {
        lo += 1;
    }
    let mut hi = (to + PATH_REACH).min(sentence.len());
    while !sentence.is_char_boundary(hi) {
        hi -= 1;
    }
    let start = sentence[lo..from]
        .char_indices()
        .rev()
        .find(|&(_, c)| stop(c))
        .map_or(lo, |(i, c)| lo + i + c.len_utf8());
    let end = sentence[to..hi]
        .char_indices()
        .find(|&(_, c)| stop(c))
        .map_or(hi, |(i, _)| to + i);
    sentence[start..end].trim_end_matches('.')
}

/// How far [`path_around`] looks on each side of a match.
pub(super) const PATH_REACH: usize = 256;
/// Most matches of one secret-path pattern looked at in a sentence. Past them the sentence is
/// taken to name a secret: public-key names cannot hide one, and the search stays linear (a
/// pattern with an open-ended part is searched to the sentence's end for each match).
pub(super) const MAX_PATHS_PER_SENTENCE: usize = 64;

/// The secret a sentence names, if any: the first path of [`CRED_PATH`], [`SENT_FILE`],
/// [`AGENT_CONFIG`] or [`WINDOWS_SECRET`] that is not a public key's (`.pub`).
pub(super) fn secret_path(sentence: &str) -> Option<String> {
    let public = |path: &str| {
        let path = path.as_bytes();
        path.len()
            .checked_sub(4)
            .is_some_and(|i| path[i..].eq_ignore_ascii_case(b".pub"))
    };
    [&*CRED_PATH, &*SENT_FILE, &*AGENT_CONFIG, &*WINDOWS_SECRET]
        .iter()
        .find_map(|r| {
            for (n, m) in r.find_iter(sentence).enumerate() {
                let path = path_around(sentence, &m);
                if !public(path) {
                    return Some(path.to_string());
                }
                if n + 1 == MAX_PATHS_PER_SENTENCE {
                    return Some(format!(
                        "{path} (one of over {MAX_PATHS_PER_SENTENCE} key paths in one sentence)"
                    ));
                }
            }
            None
        })
}

/// The sentences of a tool's raw text with their lines: split after `.`, `!` or `?` followed by
/// white space, at blank lines, and before a line starting a list item (`- `, `* `, `1. `) or a
/// heading; a sentence may run over other line ends (a wrapped description), and is at the line
/// it starts on.
pub(super) fn raw_sentences(text: &str) -> Vec<(u32, &str)> {
    let mut pieces = Vec::new();
    let mut start = 0usize;
    let mut chars = text.char_indices().peekable();
    while let Some((i, c)) = chars.next() {
        let next = chars.peek().map(|&(_, n)| n);
        let end = match c {
            '.' | '!' | '?' => next.is_none_or(char::is_whitespace),
            // A blank line (also `\r\n\r\n`), or a line starting a list item or a heading.
            '\n' => {
                let rest = text[i + 1..].trim_start_matches([' ', '\t', '\r']);
                rest.starts_with('\n')
                    || rest.starts_with("- ")
                    || rest.starts_with("* ")
                    || rest.starts_with('#')
                    || {
                        let digits = rest.bytes().take(4).take_while(u8::is_ascii_digit).count();
                        (1..=3).contains(&digits) && rest[digits..].starts_with(". ")
                    }
            }
            _ => false,
        };
        if end {
            pieces.push(&text[start..i + c.len_utf8()]);
            start = i + c.len_utf8();
        }
    }
    pieces.push(&text[start..]);
    // Lines counted as the text is walked once.
    let (mut seen, mut line) = (0usize, 1u32);
    let mut out = Vec::new();
    for piece in pieces {
        let trimmed = piece.trim();
        if trimmed.is_empty() {
            continue;
        }
        let offset = trimmed.as_ptr() as usize - text.as_ptr() as usize;
        let newlines = text[seen..offset].matches('\n').count();
        line = line.saturating_add(u32::try_from(newlines).unwrap_or(u32::MAX));
        seen = offset;
        out.push((line, trimmed));
    }
    out
}

/// Reading, in a parameter's name read as words ("content from reading ssh id rsa").
pub(super) static NAME_READS: LazyLock<Regex> =
    LazyLock::new(|| re(r"\b(?:read|reading|cat|dump|dumped|dumping)\b"));
/// A file's content, in a parameter's name read as words.
pub(super) static NAME_CONTENT: LazyLock<Regex> =
    LazyLock::new(|| re(r"\b(?:contents?|data|text|body|blob)\b"));
/// A file on the host that holds secrets or the host's own configuration, in a parameter's name
/// read as words (spaces optional: `catIDRSA` reads "cat idrsa").
pub(super) static NAME_HOST_FILE: LazyLock<Regex> = LazyLock::new(|| {
    re(
        r"\b(id ?(?:rsa|dsa|ecdsa|ed ?25519)(?: ?pub\b)?|aws ?credentials|gcloud ?credentials|application ?default ?credentials|git ?credentials|docker ?config|mcp ?(?:json|config|settings)|claude ?desktop ?config|env ?file|dot ?env|netrc|npmrc|pypirc|kube ?config|(?:bash|zsh) ?history|etc ?(?:passwd|shadow)|keychain)\b",
    )
});
/// A secret that a user may give a tool as a value (a key, a phrase): only reading it is an
/// instruction (`private_key` asks the user; `read_private_key` asks the model to go and read).
pub(super) static NAME_SECRET: LazyLock<Regex> = LazyLock::new(|| {
    re(r"\b(ssh ?(?:private ?)?keys?|private ?keys?|seed ?phrase|mnemonic|wallet ?keys?)\b")
});

/// A text as lowercase words, space-separated: split at anything not a letter or digit, at
/// camelCase (`readMcpJson`), at the end of an acronym (`readSSHKey` → "read ssh key") and
/// between letters and digits; invisible characters (a soft hyphen in `re\u{AD}ad`) are dropped
/// first. The one tokenizer of the rules that read names: parameter names and the words a
/// skill names its tool by.
pub(super) fn words(text: &str) -> String {
    let chars: Vec<char> = text.chars().filter(|&c| !invisible(c)).collect();
    let mut out = String::with_capacity(text.len() + 8);
    for (i, &c) in chars.iter().enumerate() {
        if !c.is_alphanumeric() {
            if !out.is_empty() && !out.ends_with(' ') {
                out.push(' ');
            }
            continue;
        }
        let prev = i
            .checked_sub(1)
            .map(|j| chars[j])
            .filter(|p| p.is_alphanumeric());
        let next = chars.get(i + 1).copied();
        let boundary = prev.is_some_and(|p| {
            (c.is_uppercase() && (p.is_lowercase() || p.is_numeric()))
                || (c.is_uppercase() && p.is_uppercase() && next.is_some_and(char::is_lowercase))
                || (c.is_numeric() != p.is_numeric())
        });
        if boundary && !out.ends_with(' ') {
            out.push(' ');
        }
        out.extend(c.to_lowercase());
    }
    out.trim_end().to_owned()
}

/// A parameter's name read as [`words`], "read only" and "read write" as one word each (an
/// access mode, not a reading).
pub(super) fn name_words(name: &str) -> String {
    words(name)
        .replace("read only", "readonly")
        .replace("read write", "readwrite")
}

/// Why a parameter's name asks the model to read a secret, and how surely: a host's secret
/// file named with a reading verb (0.9) or with its content (0.7: `id_rsa_contents`), or a
/// secret value with a reading verb (0.9). The leaf of a nested name is read (the name the model
/// fills; a parent's words are not the child's); a public key (`id_rsa_pub`) is no secret.
pub(super) fn parameter_reads_secret(name: &str) -> Option<(f64, String)> {
    let leaf = name.rsplit(['.', ']']).next().unwrap_or(name);
    let words = name_words(leaf);
    let reads = NAME_READS.is_match(&words);
    if let Some(m) = NAME_HOST_FILE.find(&words)
        && !m.as_str().ends_with("pub")
    {
        if reads {
            return Some((0.9, m.as_str().to_owned()));
        }
        if NAME_CONTENT.is_match(&words) {
            return Some((0.7, m.as_str().to_owned()));
        }
    }
    NAME_SECRET
        .find(&words)
        .filter(|_| reads)
        .map(|m| (0.9, m.as_str().to_owned()))
}

/// What only a tool's text is checked for: instructions about things the call does not need
/// (reading secrets or the host's configuration), about other calls (shadowing), about choosing
/// tools, and about keeping a step from the user. A tool's description and schema are read by
/// the model on every turn, before anything is called, so they are instructions, not a manual —
/// and the model reads the raw text: these rules read it whole, code blocks, comments and markup
/// included, each finding at its sentence's line.
pub(super) fn tool_rules(ctx: &mut Ctx<'_>) {
    let file = ctx.file;
    let raw = &file.text;
    let visible: String;
    let text = if raw.chars().any(invisible) {
        visible = raw.chars().filter(|c| !invisible(*c)).collect();
        visible.as_str()
    } else {
        raw.as_str()
    };
    let place = Place::Markdown {
        section: "",
        outer: "",
        titled: false,
        table: false,
    };
    // Each sentence with the one that follows (an instruction is often "read X." then "pass its
    // content as Y.").
    let all = raw_sentences(text);
    for (i, &(at, sentence)) in all.iter().enumerate() {
        let next = all.get(i + 1).map_or("", |&(_, s)| s);
        // A secret's path, not a public key's.
        let sensitive = secret_path(sentence);
        if let Some(file) = sensitive {
            let verb = TOOL_READ_VERB.find_iter(sentence).find(|m| {
                let before = &sentence[..m.start()];
                !PASSIVE.is_match(before) || MODAL_PASSIVE.is_match(before)
            });
            let handed = CONTENT_OF.is_match(sentence);
            if verb.is_some() || handed {
                let passes = handed
                    || verb.is_some_and(|v| TOOL_PASS.is_match(&sentence[v.start()..]))
                    || TOOL_PASS.is_match(next);
                let (confidence, message) = if passes {
                    (
                        0.95,
                        format!("tells the agent to read {file} and hand its content to the call"),
                    )
                } else {
                    (0.7, format!("tells the agent to read {file}"))
                };
                ctx.emit(
                    TOOL_READ,
                    confidence,
                    at,
                    sentence,
                    message,
                    Vec::new(),
                    place,
                    0,
                );
            }
        }
        // A literal address right after it makes it an instruction whatever comes before.
        let literal = |m: &regex::Match<'_>| {
            let mut end = (m.end() + 80).min(sentence.len());
            while !sentence.is_char_boundary(end) {
                end -= 1;
            }
            LITERAL_TARGET.is_match(&sentence[m.end()..end])
        };
        let described = |m: &regex::Match<'_>| DESCRIBED.is_match(&sentence[..m.start()]);
        let redirect = REDIRECT
            .find_iter(sentence)
            .any(|m| !described(&m) || literal(&m))
            || SET_TARGET.find_iter(sentence).any(|m| literal(&m))
            || COPY_TO.find_iter(sentence).any(|m| !described(&m))
            || COPY_HIDDEN.is_match(sentence);
        if redirect {
            ctx.emit(
                TOOL_SHADOW,
                0.9,
                at,
                sentence,
                "tells the agent to redirect a call's recipient or add a copy".into(),
                Vec::new(),
                place,
                0,
            );
        } else if let Some(c) = OTHER_CALL.captures(sentence)
            && c.name("clause").is_some_and(|m| {
                let w = m.as_str().to_ascii_lowercase();
                TOOL_NAMED.find_iter(&w).any(|t| {
                    let t = t.as_str().trim();
                    !matches!(
                        t,
                        "this tool" | "the tool" | "this function" | "the function"
                    )
                })
            })
        {
            ctx.emit(
                TOOL_SHADOW,
                0.6,
                at,
                sentence,
                "tells the agent to change another tool's call".into(),
                Vec::new(),
                place,
                0,
            );
        }
        if PREFER.is_match(sentence) {
            ctx.emit(
                TOOL_PREFER,
                0.8,
                at,
                sentence,
                "tells the agent to always pick this tool or to avoid the others".into(),
                Vec::new(),
                place,
                0,
            );
        }
        if let Some(m) = TOOL_CONCEAL.find(sentence)
            && !NEGATED.is_match(&sentence[..m.start()])
            && !CONCEAL.is_match(sentence)
        {
            ctx.emit(
                INJ_CONCEAL,
                0.8,
                at,
                sentence,
                "tells the agent to keep what it does from the user".into(),
                Vec::new(),
                place,
                0,
            );
        }
    }
    // A parameter's name is read by the model as much as a description: one named for what is
    // read from a secret store (`content_from_reading_ssh_id_rsa`) asks the model to read it and
    // fill it in, with no sentence saying so. A key's own name (`private_key`,
    // `ssh_private_key_path`) asks for what the user gives, not for reading it. The parameters
    // are extract's list, not lines read back from the text (a name holding a backtick or a
    // line break, or one past the listed 200, is still a name).
    let lines: Vec<&str> = text.lines().collect();
    for p in &ctx.pkg.parameters {
        // Only a text parameter can carry a file's content (not a flag, a number, a choice).
        if p.choice || matches!(p.kind.as_str(), "boolean" | "integer" | "number" | "null") {
            continue;
        }
        if let Some((confidence, secret)) = parameter_reads_secret(&p.name) {
            // Shown as the model reads it (invisible characters are not in the text).
            let name: String = p.name.chars().filter(|&c| !invisible(c)).collect();
            let at = usize::try_from(p.line).unwrap_or(usize::MAX);
            let shown = at.checked_sub(1).and_then(|i| lines.get(i)).copied();
            ctx.emit(
                TOOL_READ,
                confidence,
                p.line,
                shown.unwrap_or(&p.name),
                format!(
                    "its parameter `{}` is named for reading {secret} and handing it to the call",
                    clip(&name)
                ),
                Vec::new(),
                place,
                0,
            );
        }
    }
}
