//! A shell command's words as the programs that run them read them: wrappers unwrapped, `env`'s
//! options, ssh's remote command, option values.

use super::{
    hosts::base_name,
    interpreters::{Run, interpreter_run, is_shell},
};
use skg_syntax::ShellCommand;

pub(super) const DOWNLOADERS: &[&str] = &[
    "curl",
    "wget",
    "fetch",
    "aria2c",
    "iwr",
    "invoke-webrequest",
    "irm",
    "invoke-restmethod",
    "http",
    "https",
    "lwp-download",
    "ftp",
    "tftp",
];
/// The shells among the interpreters (what a reverse shell hands out).
pub(super) const SHELLS: &[&str] = &["sh", "bash", "zsh", "dash", "ksh", "fish"];
pub(super) const SENDERS: &[&str] = &[
    "curl",
    "wget",
    "nc",
    "ncat",
    "netcat",
    "socat",
    "telnet",
    "openssl",
    "scp",
    "rsync",
    "ftp",
    "sftp",
    "iwr",
    "invoke-webrequest",
    "irm",
    "invoke-restmethod",
    "http",
    "https",
    "ssh",
    "sendmail",
    "mail",
    "mutt",
];
pub(super) const WRAPPERS: &[&str] = &[
    "sudo", "doas", "env", "nohup", "exec", "command", "time", "nice", "xargs", "timeout",
    "setsid", "stdbuf", "busybox",
];

/// A wrapper's options whose value is the next word (`sudo -u root`, `xargs -I {}`,
/// `timeout -s KILL`), from their manuals.
pub(super) fn wrapper_valued(name: &str) -> &'static [&'static str] {
    match name {
        "sudo" => &[
            "-u",
            "-g",
            "-C",
            "-D",
            "-h",
            "-p",
            "-r",
            "-t",
            "-T",
            "-U",
            "--user",
            "--group",
            "--close-from",
            "--chdir",
            "--host",
            "--prompt",
            "--role",
            "--type",
            "--command-timeout",
            "--other-user",
        ],
        "doas" => &["-u", "-C"],
        // `-P` is BSD env's search path.
        "env" => &["-u", "-C", "-P", "--unset", "--chdir"],
        "nice" => &["-n", "--adjustment"],
        "timeout" => &["-s", "-k", "--signal", "--kill-after"],
        "xargs" => &[
            "-I",
            "-n",
            "-P",
            "-d",
            "-E",
            "-L",
            "-s",
            "-a",
            "--max-args",
            "--max-procs",
            "--delimiter",
            "--eof",
            "--max-lines",
            "--max-chars",
            "--arg-file",
        ],
        "stdbuf" => &["-i", "-o", "-e", "--input", "--output", "--error"],
        "time" => &["-f", "-o", "--format", "--output"],
        "exec" => &["-a"],
        _ => &[],
    }
}

/// A command's name and arguments as it is run ([`effective`]).
pub(super) type Words<'a> = (String, Vec<&'a str>);
/// The `NAME=value` words a command's wrappers give its environment ([`unwrapped`]).
pub(super) type Environment<'a> = Vec<(&'a str, &'a str)>;

/// The command actually run: `sudo -E bash -s` → (`bash`, [`-s`]), `sudo -u root bash -c …` →
/// (`bash`, [`-c`, …]); paths reduced to names. A command `xargs` gives each item it reads as
/// its code (`xargs -I{} sh -c '{}'`, `xargs sh -c`) runs its input as a shell reading it
/// does: (`sh`, []). (`ssh` stays itself, a sender; what it runs remotely is [`ssh_command`].)
/// Also the `NAME=value` words its wrappers give its environment ([`unwrapped`]).
pub(super) fn effective(c: &ShellCommand) -> (String, Vec<&str>, Vec<(&str, &str)>) {
    unwrapped(
        base_name(&c.name),
        c.args.iter().map(String::as_str).collect(),
    )
}

/// [`effective`] of a command's name and words.
pub(super) fn effective_words(name: String, args: Vec<&str>) -> (String, Vec<&str>) {
    let (name, args, _) = unwrapped(name, args);
    (name, args)
}

/// [`effective_words`], and the `NAME=value` words `env` and `sudo` are given for the command's
/// environment on the way (`sudo env -u HOME GIT_SSH_COMMAND=… git fetch`).
pub(super) fn unwrapped(
    mut name: String,
    mut args: Vec<&str>,
) -> (String, Vec<&str>, Vec<(&str, &str)>) {
    let mut environment = Vec::new();
    // Through `xargs`: the string it replaces with each item (`None`: it appends the items).
    let mut xargs: Option<Option<&str>> = None;
    let mut guard = 0;
    let mut splits = 0;
    while WRAPPERS.contains(&name.as_str()) && guard < 4 {
        guard += 1;
        // `command -v x` prints where `x` is; it runs nothing.
        if name == "command"
            && args
                .iter()
                .take_while(|a| a.starts_with('-'))
                .any(|a| a.contains(['v', 'V']))
        {
            break;
        }
        if name == "xargs" {
            xargs = Some(xargs_replace(&args));
        }
        // Skip the wrapper's own options (with their values) and VAR=value pairs (timeout's
        // duration too).
        let valued = wrapper_valued(&name);
        let mut at = None;
        let mut k = 0;
        while k < args.len() {
            let a = args[k];
            if name == "env" {
                match env_option(&args, k) {
                    // `env -S STRING`: env splits the string into words, which are its own
                    // arguments again, before the words after it (`env -S 'A=1 bash -e' x`).
                    Some(EnvOption::Split(string, next)) if splits < MAX_ENV_SPLITS => {
                        splits += 1;
                        let mut words = env_split(string);
                        words.extend_from_slice(&args[next..]);
                        args = words;
                        k = 0;
                        continue;
                    }
                    Some(EnvOption::Split(_, next) | EnvOption::Skip(next)) => {
                        k = next;
                        continue;
                    }
                    None => {}
                }
            }
            if valued.contains(&a) {
                k += 2;
            } else if a.starts_with('-')
                || a.contains('=')
                || a.chars().all(|c| c.is_ascii_digit() || c == 's')
            {
                if matches!(name.as_str(), "env" | "sudo")
                    && let Some((key, value)) = a.split_once('=')
                    && !key.is_empty()
                    && !key.starts_with('-')
                {
                    environment.push((key, value));
                }
                k += 1;
            } else {
                at = Some(k);
                break;
            }
        }
        let Some(i) = at else {
            break;
        };
        name = base_name(args[i]);
        args = args[i + 1..].to_vec();
    }
    if let Some(replace) = xargs {
        let runs_items = match interpreter_run(&name, &args) {
            Some(Run::Code(code)) => replace.is_some_and(|r| code.trim() == r),
            // `xargs sh -c`: the first item is the code.
            Some(Run::Nothing) => {
                replace.is_none()
                    && is_shell(&name)
                    && args.last().is_some_and(|a| {
                        a.starts_with('-') && !a.starts_with("--") && a.contains('c')
                    })
            }
            _ => false,
        };
        if runs_items {
            return (name, Vec::new(), environment);
        }
    }
    (name, args, environment)
}

/// `env -S` strings read at most in one command (`env -S '-S …'` nests them).
pub(super) const MAX_ENV_SPLITS: usize = 4;

/// What an `env` option is ([`env_option`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum EnvOption<'a> {
    /// `-S STRING`, `-SSTRING`, `-iS'…'`, `--split-string[=]STRING` (or any prefix of it,
    /// `--split`): the string and the index of the word after it.
    Split(&'a str, usize),
    /// Any other option, with its value: the index of the word after it.
    Skip(usize),
}

/// The option `env` reads at `args[k]`, as GNU and BSD env parse them: short options grouped
/// (`-iu NAME`, `-vS 'bash -e'`), a value attached or the next word; long ones by any
/// unambiguous prefix, a value after `=` or the next word. `None`: not an option (an assignment
/// or the command).
pub(super) fn env_option<'a>(args: &[&'a str], k: usize) -> Option<EnvOption<'a>> {
    let a = args[k];
    let value = |rest: &'a str| {
        if rest.is_empty() {
            args.get(k + 1).map(|v| (*v, k + 2))
        } else {
            Some((rest, k + 1))
        }
    };
    if a == "-" || a == "--" {
        return Some(EnvOption::Skip(k + 1));
    }
    if let Some(long) = a.strip_prefix("--") {
        let (key, inline) = long
            .split_once('=')
            .map_or((long, None), |(k, v)| (k, Some(v)));
        let is = |full: &str| full.starts_with(key);
        let valued = |next| inline.map_or(next, |v| Some((v, k + 1)));
        return Some(if is("split-string") {
            valued(args.get(k + 1).map(|v| (*v, k + 2)))
                .map_or(EnvOption::Skip(k + 1), |(s, n)| EnvOption::Split(s, n))
        } else if is("unset") || is("chdir") || is("argv0") {
            EnvOption::Skip(if inline.is_some() { k + 1 } else { k + 2 })
        } else {
            EnvOption::Skip(k + 1)
        });
    }
    let letters = a.strip_prefix('-')?;
    for (at, l) in letters.char_indices() {
        let rest = &letters[at + l.len_utf8()..];
        match l {
            'S' => {
                return Some(
                    value(rest).map_or(EnvOption::Skip(k + 1), |(s, n)| EnvOption::Split(s, n)),
                );
            }
            // `-u NAME`, `-C DIR`, BSD's `-P PATH`, `-a ARG0`.
            'u' | 'C' | 'P' | 'a' => {
                return Some(EnvOption::Skip(value(rest).map_or(k + 1, |(_, n)| n)));
            }
            _ => {}
        }
    }
    Some(EnvOption::Skip(k + 1))
}

/// `env -S`'s string split into words as env splits it, each borrowed from the string: blanks
/// and `\_` separate words outside quotes; `#` at a word's start and `\c` end the string; a
/// word wholly in one pair of quotes is read without them (`'bash'`); a word with quotes or
/// escapes inside is kept as written (`A="x y"` is still an assignment).
pub(super) fn env_split(s: &str) -> Vec<&str> {
    let mut out = Vec::new();
    let mut chars = s.char_indices().peekable();
    'words: while let Some(&(start, c)) = chars.peek() {
        if c.is_whitespace() {
            chars.next();
            continue;
        }
        if c == '#' {
            break;
        }
        if c == '\\' {
            match s[start + 1..].chars().next() {
                Some('_') => {
                    chars.next();
                    chars.next();
                    continue;
                }
                Some('c') => break,
                _ => {}
            }
        }
        let mut quote = None;
        let mut end = s.len();
        let mut stop = false;
        while let Some(&(at, c)) = chars.peek() {
            match quote {
                Some(q) => {
                    chars.next();
                    if c == '\\' && q == '"' {
                        chars.next();
                    } else if c == q {
                        quote = None;
                    }
                }
                None if c.is_whitespace() => {
                    end = at;
                    break;
                }
                None if c == '\\' => match s[at + 1..].chars().next() {
                    Some('_') => {
                        end = at;
                        break;
                    }
                    Some('c') => {
                        end = at;
                        stop = true;
                        break;
                    }
                    _ => {
                        chars.next();
                        chars.next();
                    }
                },
                None => {
                    chars.next();
                    if c == '\'' || c == '"' {
                        quote = Some(c);
                    }
                }
            }
        }
        let word = &s[start..end];
        out.push(
            ['\'', '"']
                .iter()
                .find_map(|q| {
                    word.strip_prefix(*q)
                        .and_then(|w| w.strip_suffix(*q))
                        .filter(|inner| !inner.contains(*q) && !inner.contains('\\'))
                })
                .unwrap_or(word),
        );
        if stop {
            break 'words;
        }
    }
    out
}

/// The string `xargs` replaces with each item it reads (`-I X`, `-IX`, `-i` and `--replace`:
/// `{}`, `--replace=X`), read up to the command it runs; `None` when it appends the items.
pub(super) fn xargs_replace<'a>(args: &[&'a str]) -> Option<&'a str> {
    let valued = wrapper_valued("xargs");
    let mut k = 0;
    while k < args.len() {
        let a = args[k];
        if a == "-I" {
            return args.get(k + 1).copied();
        }
        if let Some(r) = a
            .strip_prefix("-I")
            .or_else(|| a.strip_prefix("--replace="))
        {
            return Some(r);
        }
        if a == "--replace" {
            return Some("{}");
        }
        if let Some(r) = a.strip_prefix("-i") {
            return Some(if r.is_empty() { "{}" } else { r });
        }
        if valued.contains(&a) {
            k += 2;
        } else if a.starts_with('-') {
            k += 1;
        } else {
            return None;
        }
    }
    None
}

/// What `ssh` runs on the remote host ([`ssh_command`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) enum Remote<'a> {
    /// No command: the remote login shell, which reads its commands from ssh's input (`curl … |
    /// ssh host` runs the download there).
    Login,
    /// A command of plain words, as [`effective`] reads it (`ssh host sudo bash -s` → `bash`,
    /// [`-s`]).
    Words(String, Vec<&'a str>),
    /// Shell code: ssh joins the remote words with spaces and the remote shell parses them
    /// (`ssh host 'curl … | sh'`, `ssh host curl -s URL '|' sh`).
    Code(String),
}

/// What `ssh` runs: on the remote host ([`Ssh::remote`]) and on this one ([`Ssh::local`]).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(super) struct Ssh<'a> {
    /// The remote command ([`ssh_command`]).
    pub(super) remote: Option<Remote<'a>>,
    /// Commands ssh hands this host's shell: `-o ProxyCommand=…` (`-oProxyCommand …`, `-o
    /// 'ProxyCommand …'`), `LocalCommand` and `KnownHostsCommand`, in order ([`SshOption`]).
    pub(super) local: Vec<&'a str>,
}

/// `ssh`'s words read as ssh(1) reads them: past its options (with their values; also those
/// written after the destination, which OpenSSH reads there too) and the destination, the
/// remote command's words — plain words as a command ([`Remote::Words`]), words holding shell
/// syntax joined as the remote shell reads them ([`Remote::Code`]), none the login shell; no
/// remote command without a destination or when nothing runs there (`-N`, `-W`, `-O`; `-n`
/// without a command: no input to read). The commands its `-o` options run here are read
/// whatever runs remotely.
pub(super) fn ssh_words<'a>(args: &[&'a str]) -> Ssh<'a> {
    // Options that take a value, from ssh(1).
    const VALUED: &str = "BbcDEeFIiJLlmOoPpQRSWw";
    let mut out = Ssh::default();
    let mut k = 0;
    let mut destination = None;
    let mut quiet_input = false;
    let mut runs_nothing = false;
    let mut remote_option = None;
    while let Some(a) = args.get(k) {
        if *a == "--" {
            k += 1;
            if destination.is_none() {
                destination = args.get(k).copied();
                k += 1;
            }
            break;
        }
        let Some(letters) = a.strip_prefix('-').filter(|l| !l.is_empty()) else {
            if destination.is_some() {
                break;
            }
            destination = Some(*a);
            k += 1;
            continue;
        };
        // A cluster of flags ends at the first letter taking a value: attached, or the next word.
        let valued = letters.char_indices().find(|(_, l)| VALUED.contains(*l));
        for l in letters[..valued.map_or(letters.len(), |(at, _)| at + 1)].chars() {
            match l {
                'N' | 'W' | 'O' => runs_nothing = true,
                'n' => quiet_input = true,
                // `-G` prints the configuration and `-Q` answers a query: nothing runs.
                'G' | 'Q' => return Ssh::default(),
                _ => {}
            }
        }
        let value = match valued {
            Some((at, _)) if at + 1 == letters.len() => {
                k += 1;
                args.get(k).copied()
            }
            Some((at, _)) => Some(&letters[at + 1..]),
            None => None,
        };
        if let Some(v) = value.filter(|_| valued.is_some_and(|(_, l)| l == 'o')) {
            match ssh_option_command(v) {
                Some(SshOption::Local(c)) => out.local.push(c),
                Some(SshOption::Remote(c)) => remote_option = Some(c),
                None => {}
            }
        }
        k += 1;
    }
    if runs_nothing || destination.is_none() {
        return out;
    }
    let words = args.get(k..).unwrap_or_default();
    out.remote = if words.is_empty() {
        // `-o RemoteCommand=…` is the command when none is written.
        remote_option.map_or_else(
            || (!quiet_input).then_some(Remote::Login),
            |c| Some(Remote::Code(c.to_owned())),
        )
    } else if words
        .iter()
        .any(|w| w.contains(|c: char| "|;&<>$`'\"(\\\n".contains(c)))
    {
        Some(Remote::Code(words.join(" ")))
    } else {
        let mut split = words.iter().flat_map(|w| w.split_whitespace());
        split.next().map(|first| {
            let (name, args) = effective_words(base_name(first), split.collect());
            Remote::Words(name, args)
        })
    };
    out
}

/// What ssh runs remotely ([`ssh_words`]).
pub(super) fn ssh_command<'a>(args: &[&'a str]) -> Option<Remote<'a>> {
    ssh_words(args).remote
}

/// A command an ssh `-o` option runs ([`ssh_option_command`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum SshOption<'a> {
    /// On this host: `ProxyCommand`, `LocalCommand`, `KnownHostsCommand`.
    Local(&'a str),
    /// On the remote host when no command is written: `RemoteCommand`.
    Remote(&'a str),
}

/// The command an ssh `-o` option runs, the keyword in any case and its value after `=` or
/// blanks (ssh_config(5)); `none` runs nothing.
pub(super) fn ssh_option_command(option: &str) -> Option<SshOption<'_>> {
    let at = option.find(|c: char| c == '=' || c.is_whitespace())?;
    let (key, rest) = option.split_at(at);
    let command = rest.trim_start().strip_prefix('=').unwrap_or(rest).trim();
    if command.is_empty() || command.eq_ignore_ascii_case("none") {
        return None;
    }
    let is = |k: &str| key.eq_ignore_ascii_case(k);
    if is("ProxyCommand") || is("LocalCommand") || is("KnownHostsCommand") {
        Some(SshOption::Local(command))
    } else if is("RemoteCommand") {
        Some(SshOption::Remote(command))
    } else {
        None
    }
}

/// The values of option letter `want` in `args`, read as a getopt program reads its options
/// (anywhere before `--`): grouped, a value attached or the next word, `valued` the letters
/// that take one (`scp -o ProxyCommand=…`, `rsync -avze 'ssh …'`).
pub(super) fn option_values<'a>(args: &[&'a str], valued: &str, want: char) -> Vec<&'a str> {
    let mut out = Vec::new();
    let mut k = 0;
    while let Some(a) = args.get(k) {
        k += 1;
        if *a == "--" {
            break;
        }
        let Some(letters) = a
            .strip_prefix('-')
            .filter(|l| !l.is_empty() && !l.starts_with('-'))
        else {
            continue;
        };
        if let Some((at, l)) = letters.char_indices().find(|(_, l)| valued.contains(*l)) {
            let rest = &letters[at + l.len_utf8()..];
            let value = if rest.is_empty() {
                k += 1;
                args.get(k - 1).copied()
            } else {
                Some(rest)
            };
            if l == want {
                out.extend(value);
            }
        }
    }
    out
}

impl Remote<'_> {
    /// The interpreter that reads what the remote host runs (`sh` for the login shell and for
    /// code), for a here-document or input given to it.
    pub(super) fn runner(&self) -> &str {
        match self {
            Remote::Words(name, _) => name,
            Remote::Login | Remote::Code(_) => "sh",
        }
    }
}
