//! A block of shell read command by command: every rule applied to what each command runs, here-
//! documents read as the programs they feed.

use super::{
    CRED_READ, Ctx, MINE, OBF_UNREAD, Place, RCE_ARCHIVE,
    attacks::{CRED_PATH, READERS, evasion, exfil, persistence, privesc, reverse_shell},
    commands::{DOWNLOADERS, Environment, Remote, SENDERS, Words, effective, ssh_command},
    downloads::{decode_exec, download_exec, is_decoder, output_runner, passes_on},
    interpreters::{Given, given_programs, gives_programs, runs_stdin},
    packages::package_install,
    re,
    runs::Runs,
    scripts::{inline_code, program_rules, read_given, remote_rules},
    settings::{Known, read_by_programs, variable_command_lines},
};
use regex::Regex;
use skg_syntax::shell_bounds::{MAX_MENDING_PASSES, MAX_PIPELINE_STAGES, MAX_PIPES_PER_PARSE};
use skg_syntax::{ShellCommand, ShellFacts, Unread};
use std::sync::LazyLock;

/// Words without which no shell rule can fire (every rule needs one of these commands, paths or
/// flags): text without any is not parsed. Most inline code (`config.json`, `--verbose`) and much
/// prose read as shell is skipped this way.
pub(super) static SHELL_TRIGGER: LazyLock<Regex> = LazyLock::new(|| {
    re(
        r"(?i)(\b(?:curl|wget|fetch|aria2c|iwr|irm|invoke-\w+|nc|ncat|netcat|socat|telnet|openssl|scp|rsync|ftp|sftp|ssh|sendmail|mail|mutt|http|https|base64|base32|xxd|uudecode|eval|chmod|chown|usermod|gpasswd|adduser|rm|shred|truncate|unlink|dd|mkfs\S*|crontab|tee|setenforce|ufw|systemctl|service|iptables|ip6tables|set-mppreference|spctl|csrutil|unset|history|export|security|dig|nslookup|host|drill|resolvectl|pip3?|uvx?|pipx|poetry|npm|npx|yarn|pnpm|bunx?|unzip|7za?|7zz|unrar|env|printenv|xmrig|minerd|cpuminer|ccminer|t-rex|nbminer|ethminer|lolminer|phoenixminer|nanominer|bfgminer|cgminer|gminer|cat|cp|tar|zip|sqlite3|gpg|python[23]?|node|deno|perl|ruby|bash|sh|zsh|dash|ksh)\b|/dev/(?:tcp|udp)|stratum\+|authorized_keys|\.bashrc|\.zshrc|\.profile|/etc/|nopasswd|histfile|--no-preserve-root|>>)",
    )
});

/// Shell text longer than this (in bytes) is not parsed, and is reported (the syntax crate
/// parses a long text in pieces of whole statements, `MAX_BYTES_PER_PARSE` each, within one
/// time budget).
pub(super) const MAX_SHELL_BYTES: usize = 1_000_000;

pub(super) fn shell_rules(ctx: &mut Ctx<'_>, code: &str, line0: u32, place: Place<'_>) {
    if !SHELL_TRIGGER.is_match(code) {
        return;
    }
    if code.len() > MAX_SHELL_BYTES {
        report_unread(
            ctx,
            line0,
            code.lines().next().unwrap_or(""),
            format!(
                "shell text of {} bytes, past the {MAX_SHELL_BYTES} the scanner parses: it was not read",
                code.len()
            ),
            place,
        );
        return;
    }
    let facts = skg_syntax::shell_commands(code);
    if facts.timed_out {
        report_unread(
            ctx,
            line0,
            code.lines().next().unwrap_or(""),
            "shell text whose parse ran past its time: it was not read".into(),
            place,
        );
    }
    let code_lines: Vec<&str> = code.lines().collect();
    for unread in &facts.unread {
        let message = match unread {
            Unread::Pipeline { stages, .. } => format!(
                "a pipeline of {stages} stages: the stages past the {MAX_PIPELINE_STAGES} the scanner parses were not read"
            ),
            Unread::Pipes { pipes, .. } => format!(
                "a statement holding {pipes} `|` characters, past the {MAX_PIPES_PER_PARSE} one parse takes, most of them seemingly quoted: it was not read"
            ),
            Unread::Documents { .. } => format!(
                "a here-document the shell grammar reads otherwise than bash, not mended (past the {MAX_MENDING_PASSES} parses the scanner mends one text in, its time, or of a kind it cannot mend): what follows it was not read"
            ),
        };
        let at = unread.line();
        let snippet = code_lines
            .get((at as usize).saturating_sub(1))
            .copied()
            .unwrap_or("");
        report_unread(ctx, line0 + at - 1, snippet, message, place);
    }
    // A command line kept in a variable a program runs (`GIT_SSH_COMMAND='…' git fetch`,
    // `export EDITOR=…`): read as the shell line it is, at the assignment's line.
    // Its variables as the block set them (`GIT_SSH_COMMAND=$X` holds what `X` was set to).
    let mut known = Known::new(facts.assignments());
    // The values programs read (command variables, git's settings), as the block holds them.
    let held: Vec<Option<String>> = facts
        .assignments()
        .iter()
        .enumerate()
        .map(|(k, a)| {
            read_by_programs(&a.name)
                .then(|| known.expand(&a.value, k, a.line))
                .flatten()
        })
        .collect();
    let written: Vec<(&str, &str)> = facts
        .assignments()
        .iter()
        .map(|a| (a.name.as_str(), a.value.as_str()))
        .collect();
    let as_held: Vec<(&str, &str)> = written
        .iter()
        .zip(&held)
        .map(|(&(name, value), h)| (name, h.as_deref().unwrap_or(value)))
        .collect();
    let as_written = variable_command_lines(&written);
    for (at, code) in &as_written {
        let line = line0 + facts.assignments()[*at].line - 1;
        read_given(ctx, vec![Given::local("sh", code)], line, place);
    }
    let variable_lines = variable_command_lines(&as_held);
    for (at, code) in &variable_lines {
        if as_written.contains(&(*at, code.clone())) {
            continue;
        }
        // A value put in from another assignment has lines of its own, not this text's: what
        // is found in it is found at this assignment.
        let line = line0 + facts.assignments()[*at].line - 1;
        let mid = ctx.out.len();
        read_given(ctx, vec![Given::local("sh", code)], line, place);
        for f in &mut ctx.out[mid..] {
            f.line = line;
        }
    }
    if facts.commands().is_empty() {
        report_spent(ctx, &known, &code_lines, line0, place);
        return;
    }
    let line_at = |c: &ShellCommand| line0 + c.line - 1;
    let src = |c: &ShellCommand| {
        code_lines
            .get((c.line as usize).saturating_sub(1))
            .copied()
            .unwrap_or("")
            .to_owned()
    };
    // What each command runs, and the environment its wrappers give it.
    let (eff, environments): (Vec<Words>, Vec<Environment>) = facts
        .commands()
        .iter()
        .map(|c| {
            // `key = value` / `key: value` lines of config text read as shell are not commands.
            if c.args
                .first()
                .is_some_and(|a| a == "=" || a.starts_with('='))
                || c.name.ends_with(':')
            {
                ((String::new(), Vec::new()), Vec::new())
            } else {
                let (name, args, environment) = effective(c);
                ((name, args), environment)
            }
        })
        .unzip();
    let runs = Runs::of(&facts, &variable_lines, &eff, &environments);
    // After command `i`, the next `history` that reads or writes the file reads it (`history
    // -r`, `-n`, from any file but /dev/null), not writes the list over it (`-w`). Asked of
    // `history -c` only: it reads the rest of the snippet.
    let reloads_after = |i: usize| {
        eff.iter()
            .skip(i + 1)
            .filter(|(n, _)| n == "history")
            .find_map(|(_, a)| match a.first().copied() {
                Some("-r" | "-n") => Some(a.get(1).is_none_or(|f| *f != "/dev/null")),
                Some(w) if w.starts_with("-w") => Some(false),
                _ => None,
            })
            .unwrap_or(false)
    };
    for (i, c) in facts.commands().iter().enumerate() {
        let (name, args) = &eff[i];
        let line = line_at(c);
        let snippet = src(c);
        download_exec(ctx, &facts, &eff, &runs, i, line, &snippet, place, code);
        decode_exec(ctx, &facts, &eff, &runs, i, line, &snippet, place);
        reverse_shell(ctx, &facts, &eff, i, line, &snippet, place);
        persistence(ctx, c, name, args, line, &snippet, place);
        let reloads = name == "history" && reloads_after(i);
        evasion(ctx, c, name, args, reloads, line, &snippet, place);
        privesc(ctx, c, name, args, line, &snippet, place);
        exfil(ctx, &facts, &eff, i, line, &snippet, place);
        // Credential stores read by a command that does not send them (sending is EXFIL).
        if READERS.contains(&name.as_str())
            && !SENDERS.contains(&name.as_str())
            && let Some(p) = args
                .iter()
                .find(|a| CRED_PATH.is_match(a) && !a.to_ascii_lowercase().ends_with(".pub"))
        {
            ctx.emit(
                CRED_READ,
                0.7,
                line,
                &snippet,
                format!("`{name}` reads the credential store `{p}`"),
                Vec::new(),
                place,
                0,
            );
        }
        if name == "security"
            && args.first().is_some_and(|a| {
                matches!(
                    *a,
                    "find-generic-password" | "find-internet-password" | "dump-keychain"
                )
            })
        {
            ctx.emit(
                CRED_READ,
                0.8,
                line,
                &snippet,
                "reads the macOS keychain".into(),
                Vec::new(),
                place,
                0,
            );
        }
        // Miners.
        if MINERS.contains(&name.as_str())
            || args
                .iter()
                .any(|a| a.to_ascii_lowercase().contains("stratum+"))
        {
            ctx.emit(
                MINE,
                0.95,
                line,
                &snippet,
                "runs a cryptocurrency miner or connects to a mining pool".into(),
                Vec::new(),
                place,
                0,
            );
        }
        // Password-protected archives.
        let protected = (name == "unzip" && args.iter().any(|a| a.starts_with("-P")))
            || (matches!(name.as_str(), "7z" | "7za" | "7zz")
                && args.iter().any(|a| a.starts_with("-p") && a.len() > 2))
            || (name == "unrar" && args.iter().any(|a| a.starts_with("-p") && a.len() > 2));
        if protected {
            let downloaded = eff
                .iter()
                .any(|(n, _)| DOWNLOADERS.contains(&n.as_str()) || n == "gh");
            ctx.emit(
                RCE_ARCHIVE,
                0.8,
                line,
                &snippet,
                "unpacks a password-protected archive, whose content no scanner could read".into(),
                if downloaded {
                    vec!["raised: the snippet also downloads".into()]
                } else {
                    Vec::new()
                },
                place,
                i32::from(downloaded),
            );
        }
        // Package installs: other indexes, and typosquatted names.
        package_install(ctx, name, args, line, &snippet, place);
        // Interpreters given code inline: read that code too.
        inline_code(ctx, name, args, line, place);
        // `env GIT_SSH_COMMAND='…' git fetch`, `sudo PAGER=… man x`: a command line kept in a
        // variable a program runs, given through a wrapper.
        let programs: Vec<Given> = variable_command_lines(&environments[i])
            .iter()
            .map(|(_, code)| Given::local("sh", code))
            .collect();
        // The programs it is given, its words and environment as the block's variables hold
        // them (`eval "$X"`, `bash -c "$X"`, `git config alias.x "$X"`, `env
        // GIT_SSH_COMMAND="$X" git fetch` after `X='curl … | sh'`).
        let before = known.before_line(c.line);
        let mut held: Vec<Given> = Vec::new();
        // Only a command that runs words it is given (`echo "$BLOB"` passes data).
        if gives_programs(name) && args.iter().any(|a| a.contains('$')) {
            let words: Vec<String> = args
                .iter()
                .map(|a| {
                    known
                        .expand(a, before, c.line)
                        .unwrap_or_else(|| (*a).to_owned())
                })
                .collect();
            if words.iter().zip(args).any(|(w, a)| w != a) {
                let words: Vec<&str> = words.iter().map(String::as_str).collect();
                held.extend(given_programs(name, &words));
            }
        }
        if environments[i].iter().any(|(_, v)| v.contains('$')) {
            let values: Vec<(&str, String)> = environments[i]
                .iter()
                .map(|&(n, v)| {
                    (
                        n,
                        known
                            .expand(v, before, c.line)
                            .unwrap_or_else(|| v.to_owned()),
                    )
                })
                .collect();
            let values: Vec<(&str, &str)> = values.iter().map(|(n, v)| (*n, v.as_str())).collect();
            held.extend(
                variable_command_lines(&values)
                    .iter()
                    .map(|(_, code)| Given::local("sh", code)),
            );
        }
        held.retain(|g| !programs.contains(g));
        read_given(ctx, programs, line, place);
        read_given(ctx, held, line, place);
        // Here-documents a program runs: read as that program.
        heredoc_code(ctx, &facts, &eff, &runs, i, line0, place);
    }
    report_spent(ctx, &known, &code_lines, line0, place);
}

/// SKG-OBF-004 where the block's variables stopped being put in ([`Known`]'s bounds): what a
/// program was given there was read as written, not as the variables hold it.
fn report_spent(
    ctx: &mut Ctx<'_>,
    known: &Known<'_>,
    code_lines: &[&str],
    line0: u32,
    place: Place<'_>,
) {
    let Some(at) = known.spent else {
        return;
    };
    let snippet = code_lines
        .get((at as usize).saturating_sub(1))
        .copied()
        .unwrap_or("");
    report_unread(
        ctx,
        line0 + at - 1,
        snippet,
        "a variable's value past what the scanner puts in for one block (32 KiB a text and a block, 10,000 variables, 64 copies deep): what the program there is given was read as written, not as the variable holds it".into(),
        place,
    );
}

/// The variable `read` given `args` sets first: its first name, or its `-a` array (options
/// grouped, a valued one's value attached or the next word).
pub(super) fn read_variable<'a>(args: &[&'a str]) -> Option<&'a str> {
    let mut k = 0;
    while let Some(&a) = args.get(k) {
        k += 1;
        let Some(letters) = a.strip_prefix('-').filter(|l| !l.is_empty()) else {
            return Some(a);
        };
        if let Some(at) = letters.find(|c| "adinNptu".contains(c)) {
            let rest = &letters[at + 1..];
            let value = if rest.is_empty() {
                k += 1;
                args.get(k - 1).copied()
            } else {
                Some(rest)
            };
            if letters[at..].starts_with('a') {
                return value;
            }
        }
    }
    None
}

/// A here-document that a program runs is that program's code: `bash <<EOF`, `python3 - <<EOF`,
/// or a document passed on to one (`cat <<EOF | sh`, `base64 -d` excepted: decoding is
/// SKG-RCE-002's) — read as shell, Python or JavaScript, at its own lines.
pub(super) fn heredoc_code(
    ctx: &mut Ctx<'_>,
    facts: &ShellFacts,
    eff: &[(String, Vec<&str>)],
    runs: &Runs,
    i: usize,
    line0: u32,
    place: Place<'_>,
) {
    let (name, args) = &eff[i];
    let reader = if runs_stdin(name, args) {
        Some((name, args))
    } else if passes_on(name, args) && !is_decoder(name, args) {
        // Through filters that pass it on (`| tr -d '\r' | sh`) to the first that does not,
        // or through a substitution to what runs it (`bash -c "$(cat <<'EOF' …)"`, `eval
        // "$(cat <<EOF …)"`, `printf %s "$(cat <<EOF …)" | sh`).
        output_runner(facts, eff, runs, i).map(|k| (&eff[k].0, &eff[k].1))
    } else if name == "read" {
        // Read into a variable that a later command runs (`read -r -d '' x <<'EOF'` …
        // `eval "$x"`).
        read_variable(args)
            .and_then(|v| Runs::after(runs.vars.get(v), i))
            .map(|k| (&eff[k].0, &eff[k].1))
    } else {
        None
    };
    let Some((reader, reader_args)) = reader else {
        return;
    };
    // Over ssh, the remote command reads it (`ssh host python3 <<EOF`), for what it runs from
    // the network only.
    let remote = (reader == "ssh")
        .then(|| ssh_command(reader_args))
        .flatten();
    let runner = remote.as_ref().map_or(reader.as_str(), Remote::runner);
    if ctx.heredoc_depth >= MAX_HEREDOC_DEPTH {
        if let Some(doc) = facts.commands()[i]
            .redirects
            .iter()
            .find_map(|r| r.heredoc.as_ref())
        {
            let at = line0 + doc.line - 1;
            let first = doc.text.lines().next().unwrap_or("");
            report_unread(
                ctx,
                at,
                first,
                format!(
                    "a here-document `{runner}` runs, inside {MAX_HEREDOC_DEPTH} others: past the depth the scanner reads, what it runs was not read"
                ),
                place,
            );
        }
        return;
    }
    ctx.heredoc_depth += 1;
    // A document on another descriptor (`bash 3<<EOF`) is not the reader's input.
    for doc in facts.commands()[i]
        .redirects
        .iter()
        .filter(|r| r.fd.is_none_or(|f| f == 0))
        .filter_map(|r| r.heredoc.as_ref())
    {
        let at = line0 + doc.line - 1;
        if remote.is_some() {
            remote_rules(ctx, |ctx| program_rules(ctx, runner, &doc.text, at, place));
        } else {
            program_rules(ctx, runner, &doc.text, at, place);
        }
    }
    ctx.heredoc_depth -= 1;
}

/// SKG-OBF-004: shell text the scanner did not read, at line `at` (one confidence for every
/// reason: what was not read cannot be told from an attack but by its shape).
pub(super) fn report_unread(
    ctx: &mut Ctx<'_>,
    at: u32,
    snippet: &str,
    message: String,
    place: Place<'_>,
) {
    ctx.emit(OBF_UNREAD, 0.7, at, snippet, message, Vec::new(), place, 0);
}

/// Here-documents read inside one another, at most (`bash <<A` holding `bash <<B` …).
pub(super) const MAX_HEREDOC_DEPTH: usize = 3;

pub(super) const MINERS: &[&str] = &[
    "xmrig",
    "minerd",
    "cpuminer",
    "ccminer",
    "t-rex",
    "nbminer",
    "ethminer",
    "lolminer",
    "phoenixminer",
    "nanominer",
    "xmr-stak",
    "bfgminer",
    "cgminer",
    "gminer",
];
