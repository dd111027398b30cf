//! Command lines kept in variables programs run (`GIT_SSH_COMMAND`, `EDITOR`, `PAGER`, …) and git
//! settings that are commands.

use super::{mcp::shell_quote, re};
use regex::Regex;
use skg_syntax::Assignment;
use std::collections::{BTreeMap, HashMap, HashSet};
use std::sync::LazyLock;

/// Bytes one text may take in from the variables it expands ([`Known::expand`]).
const MAX_EXPANDED_BYTES: usize = 32_768;

/// Bytes a block's texts may take in from its variables together ([`Known`]): each text taken
/// in is read again with every rule, so a 16 KB value given to a thousand programs would
/// otherwise be read a thousand times (a block's 32 KiB of `curl … | sh;` is read in about a
/// second).
const MAX_BLOCK_EXPANDED_BYTES: usize = 32_768;

/// Bytes a text may take in whatever the block took before it ([`Known`]): a short payload
/// cannot be pushed out by big values given to programs before it.
const ALWAYS_EXPANDED_BYTES: usize = 256;

/// Variables put in over a block ([`Known`]): an empty value doubled forty times (`V1=$V0$V0`
/// …) takes in no bytes and would cost 2⁴⁰ steps.
const MAX_BLOCK_EXPANSIONS: usize = 10_000;

/// Copies of copies followed, at most.
const MAX_EXPANSION_DEPTH: usize = 64;

/// What a block's variables hold, assignment by assignment, for the texts programs run
/// (`X='curl … | sh'; export GIT_SSH_COMMAND="$X"`, `eval "$X"`, `bash -c "$X"`, `env
/// GIT_SSH_COMMAND=$X git fetch`, `git config alias.x "$X"`). A `$NAME`, `${NAME}` or
/// `${NAME…}` (`${X:-…}`, `${X%…}`: read as the whole value) holds what the last assignment
/// of `NAME` before it set — alone or declared (`export`, `readonly`), not before one command
/// only (`X=… true`) — as that value was when it was assigned (a copy of a copy holds the
/// first value; `X=a; Y=$X; X=b` leaves `Y` `a`). Nothing is run: a `$( )` stays its text.
/// Values are put in only where a text asks for them, each while it fits: in
/// [`MAX_EXPANDED_BYTES`] a text and [`MAX_BLOCK_EXPANDED_BYTES`] a block (at least
/// [`ALWAYS_EXPANDED_BYTES`] a text), [`MAX_BLOCK_EXPANSIONS`] variables a block,
/// [`MAX_EXPANSION_DEPTH`] copies deep. A variable that does not fit stays as written and
/// [`Known::spent`] says where (the block reports it as unread); a text already read as
/// expanded is not read again.
pub(super) struct Known<'a> {
    assignments: &'a [Assignment],
    /// By name, its assignments that persist, as indices into `assignments`, in order.
    by_name: HashMap<&'a str, Vec<usize>>,
    room: usize,
    steps: usize,
    read: HashSet<String>,
    /// The line of the first text a bound left a variable of as written.
    pub(super) spent: Option<u32>,
}

impl<'a> Known<'a> {
    pub(super) fn new(assignments: &'a [Assignment]) -> Known<'a> {
        let mut by_name: HashMap<&str, Vec<usize>> = HashMap::new();
        for (k, a) in assignments.iter().enumerate() {
            if a.command.is_none() {
                by_name.entry(a.name.as_str()).or_default().push(k);
            }
        }
        Known {
            assignments,
            by_name,
            room: MAX_BLOCK_EXPANDED_BYTES,
            steps: MAX_BLOCK_EXPANSIONS,
            read: HashSet::new(),
            spent: None,
        }
    }

    /// How many of the block's assignments come before a command at `line` (those on its line
    /// too).
    pub(super) fn before_line(&self, line: u32) -> usize {
        self.assignments.partition_point(|a| a.line <= line)
    }

    /// `text` (at `line`) as the block's first `before` assignments leave it, when a variable
    /// was put in and the result was not read before.
    pub(super) fn expand(&mut self, text: &str, before: usize, line: u32) -> Option<String> {
        if !text.contains('$') || self.by_name.is_empty() {
            return None;
        }
        let limit = text.len() + MAX_EXPANDED_BYTES.min(self.room.max(ALWAYS_EXPANDED_BYTES));
        let mut partial = false;
        let out = self.put_in(text, before, 0, limit, &mut partial);
        if partial {
            self.spent.get_or_insert(line);
        }
        self.room = self
            .room
            .saturating_sub(out.len().saturating_sub(text.len()));
        (out != text && self.read.insert(out.clone())).then_some(out)
    }

    /// `text` with the variables set by assignments before index `before` put in, each while
    /// the text stays within `limit` bytes (else it stays as written and `partial` is set).
    fn put_in(
        &mut self,
        text: &str,
        before: usize,
        depth: usize,
        limit: usize,
        partial: &mut bool,
    ) -> String {
        static EXPANSION: LazyLock<Regex> = LazyLock::new(|| {
            re(r"\$(?:\{([A-Za-z_][A-Za-z0-9_]*)(?:[:#%/^,@][^}]*)?\}|([A-Za-z_][A-Za-z0-9_]*))")
        });
        let mut out = String::new();
        let mut last = 0;
        for c in EXPANSION.captures_iter(text) {
            let Some(whole) = c.get(0) else {
                continue;
            };
            let name = c.get(1).or_else(|| c.get(2)).map_or("", |m| m.as_str());
            let set = self.by_name.get(name).and_then(|at| {
                let k = at.partition_point(|&j| j < before);
                k.checked_sub(1).map(|k| at[k])
            });
            let Some(j) = set else {
                continue;
            };
            if self.steps == 0 || depth >= MAX_EXPANSION_DEPTH {
                *partial = true;
                continue;
            }
            self.steps -= 1;
            let assignments = self.assignments;
            let value = assignments[j].value.as_str();
            let value = if value.contains('$') {
                std::borrow::Cow::Owned(self.put_in(value, j, depth + 1, limit, partial))
            } else {
                std::borrow::Cow::Borrowed(value)
            };
            let after = text.len() - whole.end();
            if out.len() + (whole.start() - last) + value.len() + after > limit {
                *partial = true;
                continue;
            }
            out.push_str(&text[last..whole.start()]);
            out.push_str(&value);
            last = whole.end();
        }
        if last == 0 {
            return text.to_owned();
        }
        out.push_str(&text[last..]);
        out
    }
}

/// Environment variables whose value a program runs as a command line (through `sh -c`): git's
/// ssh, proxy, editor, pager, diff and password programs, the editor and pager other programs
/// start (sudo's, kubectl's, gh's, systemd's, `fc`'s), `less`'s input filters, bash's prompt
/// command and prompt strings, sudo's and ssh's password programs, the browser programs open
/// links with. (`BASH_ENV` and `ENV` name files a shell sources: not read.)
pub(super) const COMMAND_VARIABLES: &[&str] = &[
    "GIT_SSH_COMMAND",
    "GIT_SSH",
    "GIT_PROXY_COMMAND",
    "GIT_EDITOR",
    "GIT_SEQUENCE_EDITOR",
    "GIT_PAGER",
    "GIT_EXTERNAL_DIFF",
    "GIT_ASKPASS",
    "SSH_ASKPASS",
    "SUDO_ASKPASS",
    "EDITOR",
    "VISUAL",
    "PAGER",
    "MANPAGER",
    "LESSOPEN",
    "LESSCLOSE",
    "PROMPT_COMMAND",
    "BROWSER",
    "SUDO_EDITOR",
    "KUBE_EDITOR",
    "FCEDIT",
    "SYSTEMD_PAGER",
    "GH_PAGER",
    "GH_EDITOR",
    // Prompt strings: the shell expands them (their `$( )` runs) at each prompt.
    "PS0",
    "PS1",
    "PS2",
    "PS4",
];

/// The command line variable `name` holds when a program runs its value
/// ([`COMMAND_VARIABLES`]; `LESSOPEN='|lesspipe %s'` holds `lesspipe %s`; a prompt string's
/// value is the words of `:`, so that only its substitutions count as run).
pub(super) fn command_variable(name: &str, value: &str) -> Option<String> {
    if !COMMAND_VARIABLES.contains(&name) {
        return None;
    }
    let line = value.trim_start_matches('|').trim();
    if line.is_empty() {
        return None;
    }
    // A prompt string is expanded, not run: only its substitutions run (`PS1='$(git branch) $ '`),
    // read as the words of a command that runs nothing.
    Some(if name.starts_with("PS") {
        format!(": {line}")
    } else {
        line.to_owned()
    })
}

/// The command line git setting `key` holds when git runs its value (keys as `git config`
/// documents them, any case): ssh, proxy, editor, pager, password and file-system monitor
/// programs, a remote's upload and receive programs, diff and merge tools and drivers, filters,
/// signing programs, archive and mail commands, hooks; an alias or a credential helper
/// starting with `!` (the rest is a shell command).
pub(super) fn command_setting<'v>(key: &str, value: &'v str) -> Option<&'v str> {
    let key = key.to_ascii_lowercase();
    let (section, rest) = key.split_once('.')?;
    let last = rest.rsplit('.').next().unwrap_or(rest);
    let runs = match section {
        "core" => matches!(
            rest,
            "sshcommand" | "editor" | "pager" | "askpass" | "fsmonitor" | "gitproxy"
        ),
        "sequence" => rest == "editor",
        "pager" => true,
        "diff" => rest == "external" || matches!(last, "command" | "textconv"),
        "difftool" | "mergetool" => last == "cmd",
        "merge" => last == "driver",
        "filter" => matches!(last, "clean" | "smudge" | "process"),
        "gpg" => last == "program" || rest == "ssh.defaultkeycommand",
        "remote" => matches!(last, "uploadpack" | "receivepack"),
        "interactive" => rest == "difffilter",
        "tar" | "browser" | "man" => last == "cmd" || last == "command",
        "sendemail" => last == "sendmailcmd",
        "uploadpack" => rest == "packobjectshook",
        "alias" => value.starts_with('!'),
        "credential" => last == "helper" && value.starts_with('!'),
        _ => false,
    };
    let value = value.strip_prefix('!').unwrap_or(value).trim();
    (runs && !value.is_empty()).then_some(value)
}

/// A variable whose value [`variable_command_lines`] reads: a command variable or one of git's
/// settings given through the environment (`GIT_CONFIG_KEY_n`, `GIT_CONFIG_PARAMETERS`, …).
pub(super) fn read_by_programs(name: &str) -> bool {
    COMMAND_VARIABLES.contains(&name) || name.starts_with("GIT_CONFIG_")
}

/// The command lines `variables` hold for the programs that run them: each variable's own
/// ([`command_variable`]) and the git settings they give ([`environment_settings`]), each with
/// the index of the variable it comes from.
pub(super) fn variable_command_lines(variables: &[(&str, &str)]) -> Vec<(usize, String)> {
    variables
        .iter()
        .enumerate()
        .filter_map(|(at, (name, value))| command_variable(name, value).map(|code| (at, code)))
        .chain(environment_settings(variables))
        .collect()
}

/// The command lines git settings given through the environment hold ([`command_setting`]):
/// `GIT_CONFIG_KEY_n` with the `GIT_CONFIG_VALUE_n` of the same `n`, and the `'key'='value'`
/// pairs of `GIT_CONFIG_PARAMETERS`, among `variables` (the last of each name, as git reads
/// them) — each with the index of the variable that names the key.
pub(super) fn environment_settings(variables: &[(&str, &str)]) -> Vec<(usize, String)> {
    static PARAMETER: LazyLock<Regex> = LazyLock::new(|| re(r"'([^']*)'='([^']*)'"));
    let mut out = Vec::new();
    // By `n`, the last key (with its variable's index) and the last value: what git reads.
    let mut keys: BTreeMap<&str, (usize, &str)> = BTreeMap::new();
    let mut values: BTreeMap<&str, &str> = BTreeMap::new();
    for (at, &(name, value)) in variables.iter().enumerate() {
        if let Some(n) = name.strip_prefix("GIT_CONFIG_KEY_") {
            keys.insert(n, (at, value));
        } else if let Some(n) = name.strip_prefix("GIT_CONFIG_VALUE_") {
            values.insert(n, value);
        } else if name == "GIT_CONFIG_PARAMETERS" {
            out.extend(PARAMETER.captures_iter(value).filter_map(|c| {
                let (_, [key, v]) = c.extract();
                command_setting(key, v).map(|code| (at, code.to_owned()))
            }));
        }
    }
    for (n, (at, key)) in keys {
        out.extend(
            values
                .get(n)
                .and_then(|v| command_setting(key, v))
                .map(|code| (at, code.to_owned())),
        );
    }
    out
}

/// The command lines git is given to run ([`command_setting`]): `-c key=value` before its
/// subcommand, `git config [options] key value` (kept for later commands), `clone`'s `-c` /
/// `--config`, and the programs `--upload-pack` (`-u`), `--receive-pack` and `--exec` name.
pub(super) fn git_programs(args: &[&str]) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    let setting = |kv: &str| {
        kv.split_once('=')
            .and_then(|(k, v)| command_setting(k, v))
            .map(str::to_owned)
    };
    let mut k = 0;
    // Git's own options, then its subcommand.
    let sub = loop {
        let Some(&a) = args.get(k) else {
            return out;
        };
        k += 1;
        match a {
            "-c" => {
                out.extend(args.get(k).and_then(|kv| setting(kv)));
                k += 1;
            }
            "-C" | "--git-dir" | "--work-tree" | "--namespace" | "--config-env"
            | "--super-prefix" => k += 1,
            _ if a.starts_with('-') => {
                out.extend(
                    a.strip_prefix("-c")
                        .filter(|kv| !kv.is_empty())
                        .and_then(setting),
                );
            }
            _ => break a,
        }
    };
    let rest = &args[k..];
    if sub == "config" {
        // `git config [--global] [--add] key value`, `git config set key value`; `--file f`
        // and the other valued options' words are no key.
        let mut words = Vec::new();
        let mut k = 0;
        while let Some(&w) = rest.get(k) {
            k += 1;
            if matches!(
                w,
                "-f" | "--file" | "--blob" | "--type" | "--default" | "--comment" | "--value"
            ) {
                k += 1;
            } else if !w.starts_with('-') && (!words.is_empty() || w != "set") {
                words.push(w);
            }
        }
        if let [key, value, ..] = words[..] {
            out.extend(command_setting(key, value).map(str::to_owned));
        }
        return out;
    }
    let mut words = rest.iter();
    while let Some(&a) = words.next() {
        if a == "--" {
            break;
        }
        let (key, inline) = match a.split_once('=') {
            Some((key, v)) if key.starts_with("--") => (key, Some(v)),
            _ => (a, None),
        };
        let value = |words: &mut std::slice::Iter<'_, &str>| {
            inline.or_else(|| words.next().copied()).map(str::to_owned)
        };
        match key {
            "-c" | "--config" if sub == "clone" => {
                out.extend(value(&mut words).and_then(|kv| setting(&kv)));
            }
            "-u" if matches!(sub, "clone" | "ls-remote") => out.extend(value(&mut words)),
            "--upload-pack" | "--receive-pack" | "--exec" => out.extend(value(&mut words)),
            // The `ext::` transport runs its URL as a command (`ext::sh -c touch% /tmp/x`; git
            // refuses it unless `protocol.ext.allow` lets it).
            _ if a.starts_with("ext::") => out.push(ext_command(&a["ext::".len()..])),
            _ => {}
        }
    }
    out
}

/// The command line an `ext::` URL runs, its words quoted as git passes them (git-remote-ext:
/// blanks separate arguments, `% ` is a blank inside one, `%%` a `%`; no shell reads it):
/// `sh -c curl% -s% u|sh` is `sh` `-c` `curl -s u|sh`.
pub(super) fn ext_command(url: &str) -> String {
    let mut words = vec![String::new()];
    let mut chars = url.chars().peekable();
    while let Some(ch) = chars.next() {
        if ch == ' ' {
            words.push(String::new());
            continue;
        }
        // `% ` and `%%` stand for the character after the `%`.
        let ch = if ch == '%' && matches!(chars.peek(), Some(' ' | '%')) {
            chars.next().unwrap_or(ch)
        } else {
            ch
        };
        if let Some(word) = words.last_mut() {
            word.push(ch);
        }
    }
    words
        .iter()
        .filter(|w| !w.is_empty())
        .map(|w| {
            let plain = w
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || b"_./:@%+=,-".contains(&b));
            if plain { w.clone() } else { shell_quote(w) }
        })
        .collect::<Vec<_>>()
        .join(" ")
}
