//! Interpreters and what they run: code given as an argument, a file, standard input, each by its
//! own option grammar.

use super::{
    blocks::Reading,
    commands::{
        Remote, SHELLS, SshOption, option_values, ssh_command, ssh_option_command, ssh_words,
    },
    hosts::base_name,
    settings::git_programs,
};

/// A program that runs code it is given — a file, a word or its input (`python script.py`,
/// `python -`, `eval`): whatever [`Reading::of_interpreter`] reads, AppleScript's and
/// PowerShell's `iex`; not ssh, whose remote command another host runs ([`given_programs`]).
pub(super) fn runs_code(name: &str) -> bool {
    Reading::of_interpreter(name).is_some()
        || matches!(name, "osascript" | "iex" | "invoke-expression")
}

/// [`runs_code`], also through `xargs` (`xargs bash`).
pub(super) fn is_interpreter(name: &str, args: &[&str]) -> bool {
    runs_code(name) || (name == "xargs" && args.iter().any(|a| runs_code(a)))
}

/// A program a command is given as words, and who runs it ([`given_programs`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Given {
    /// The interpreter that reads it ([`program_rules`]).
    pub(super) runner: String,
    pub(super) code: String,
    /// Another host runs it (ssh's remote command): read for what it runs from the network,
    /// hands to a connection or sends away only ([`remote_rules`]).
    pub(super) remote: bool,
}

impl Given {
    /// `code`, run on this host by `runner`.
    pub(super) fn local(runner: &str, code: &str) -> Given {
        Given {
            runner: runner.to_owned(),
            code: code.to_owned(),
            remote: false,
        }
    }
}

/// The programs a command is given as words, which it runs: `eval`'s (and `iex`'s) words, the
/// code an interpreter's options name, as [`interpreter_run`] reads them (`bash -ec '…'`,
/// `python3 -W ignore -c '…'`, `node -r dotenv/config -e '…'`, `perl -lne '…'`), ssh's — the
/// commands its options run on this host (`-o ProxyCommand=…`) and its remote command, read by
/// its own runner (`ssh host python3 -c '…'`) —, the commands scp's and sftp's ssh options run
/// here, and rsync's remote shell (`-e 'ssh …'`, a command line run here). None when it runs a file or its input (`bash
/// install.sh "$VERSION"` passes the variable as data).
pub(super) fn given_programs(name: &str, args: &[&str]) -> Vec<Given> {
    if matches!(name, "eval" | "iex" | "invoke-expression") {
        return vec![Given::local(name, &args.join(" "))];
    }
    // What scp's and sftp's ssh options run here, and rsync's remote shell (`-e`, `--rsh`).
    let local_options = |valued: &str| {
        option_values(args, valued, 'o')
            .into_iter()
            .filter_map(|o| match ssh_option_command(o) {
                Some(SshOption::Local(c)) => Some(Given::local("sh", c)),
                _ => None,
            })
            .collect()
    };
    match name {
        "scp" => return local_options("cDFiJloPSX"),
        "sftp" => return local_options("BbcDFiJloPRSsX"),
        "rsync" => {
            let long = args
                .iter()
                .take_while(|a| **a != "--")
                .enumerate()
                .find_map(|(k, a)| match a.strip_prefix("--rsh") {
                    Some(v) if v.starts_with('=') => Some(v[1..].to_owned()),
                    Some("") => args.get(k + 1).map(|v| (*v).to_owned()),
                    _ => None,
                });
            return option_values(args, "BefTM", 'e')
                .into_iter()
                .map(str::to_owned)
                .chain(long)
                .map(|c| Given::local("sh", &c))
                .collect();
        }
        _ => {}
    }
    if name == "git" {
        return git_programs(args)
            .iter()
            .map(|c| Given::local("sh", c))
            .collect();
    }
    if name == "ssh" {
        let ssh = ssh_words(args);
        let mut out: Vec<Given> = ssh.local.iter().map(|c| Given::local("sh", c)).collect();
        let remote = match ssh.remote {
            Some(Remote::Code(code)) => vec![Given::local("sh", &code)],
            Some(Remote::Words(n, a)) => given_programs(&n, &a),
            Some(Remote::Login) | None => Vec::new(),
        };
        out.extend(remote.into_iter().map(|g| Given { remote: true, ..g }));
        return out;
    }
    match interpreter_run(name, args) {
        Some(Run::Code(code)) => vec![Given::local(name, code)],
        _ => Vec::new(),
    }
}

/// A command whose words [`given_programs`] may read programs from (an interpreter, `eval`,
/// git, ssh and the commands that start it): the words worth putting variables in.
pub(super) fn gives_programs(name: &str) -> bool {
    runs_code(name)
        || matches!(
            name,
            "git" | "ssh" | "scp" | "sftp" | "rsync" | "eval" | "iex" | "invoke-expression"
        )
}

/// An interpreter that runs what it reads on standard input: no program given (`sh`, `sudo
/// bash`, `python3 -`, `bash -s -- args`), or PowerShell's `iex`. `python3 -c '…'` or
/// `node script.js` read their input as data.
pub(super) fn runs_stdin(name: &str, args: &[&str]) -> bool {
    // `xargs bash` is no such reader: it gives bash its input's words as arguments (and
    // `effective` reads through `xargs` to the command it runs). `xargs -I{} sh -c '{}'`, which
    // runs each line it reads, is not read as running its input.
    if name == "ssh" {
        // What the remote host runs reads ssh's input (`curl … | ssh host bash`).
        return match ssh_command(args) {
            Some(Remote::Login) => true,
            Some(Remote::Words(n, a)) => runs_stdin(&n, &a),
            Some(Remote::Code(_)) | None => false,
        };
    }
    matches!(name, "iex" | "invoke-expression") || interpreter_run(name, args) == Some(Run::Stdin)
}

/// The name an interpreter is known by, for its reading ([`Reading::of_interpreter`]), its
/// option grammar ([`interpreter_run`]) and whether it is a shell ([`is_shell`]): a version
/// after it dropped (`python3.12`, `bash5`, `bash-5.2`, `perl5.36`, `php8.2`, `ruby3.2`), and its other
/// names read as the one they are (`ash` and `mksh` as `sh`, `pypy` as `python`, `nodejs` as
/// `node`). A name that is only digits and dots (`.`) stays as written.
pub(super) fn interpreter_name(name: &str) -> &str {
    let bare = name.trim_end_matches(|c: char| c.is_ascii_digit() || c == '.');
    // `bash-5.2`, `php-8.2`: the version after a hyphen.
    let bare = if bare.len() < name.len() {
        bare.strip_suffix('-').unwrap_or(bare)
    } else {
        bare
    };
    match bare {
        "" => name,
        "ash" | "mksh" => "sh",
        "pypy" => "python",
        "nodejs" => "node",
        bare => bare,
    }
}

/// A shell, by any of its names ([`interpreter_name`]: `bash5`, `ash`).
pub(super) fn is_shell(name: &str) -> bool {
    SHELLS.contains(&interpreter_name(name))
}

/// Where an interpreter given some words gets the program it runs ([`interpreter_run`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Run<'a> {
    /// Its standard input (`sh`, `bash -s -- --yes`, `python3 -`, `node`).
    Stdin,
    /// Code given as a word (`bash -c '…'`, `python3 -c'…'`, `node --eval=…`).
    Code(&'a str),
    /// A script file (`bash install.sh`, `python3 -u /tmp/i.py`, `deno run x.ts`).
    File(&'a str),
    /// Nothing of its own: `-c` without a word, a module (`python3 -m http.server`), a package
    /// manager's subcommand (`bun install`).
    Nothing,
}

/// How an interpreter's short options are written, by letter ([`interpreter_run`]).
pub(super) struct Letters {
    /// Whose value is the program: the rest of the group, else the next word.
    pub(super) code: &'static str,
    /// Whose value is a script file.
    pub(super) file: &'static str,
    /// Whose value is the rest of the group, else the next word (`-W ignore`, `-r dotenv`).
    pub(super) valued: &'static str,
    /// Whose value is the rest of the group only (Perl's `-Mstrict`, `-i.bak`: `-pie` edits in
    /// place keeping a copy named with `e` added).
    pub(super) attached: &'static str,
    /// Followed by digits only (Perl's `-0777`, `-l`: `-lne` is `-l -n -e`).
    pub(super) digits: &'static str,
    /// After which something else runs (Python's `-m module`).
    pub(super) other: &'static str,
    /// Long options whose value is the program (`--eval`, `--print`).
    pub(super) code_long: &'static [&'static str],
    /// Long options whose value is the next word unless written `--x=v`.
    pub(super) valued_long: &'static [&'static str],
    /// Letters or long options that only check the program, never run it (`php -l`, `ruby -c`,
    /// `node --check`; not `perl -c`, which runs `BEGIN` blocks).
    pub(super) check: &'static [&'static str],
    /// Short options are whole words, never grouped (node's `-pe` is `--print --eval`).
    pub(super) whole: bool,
}

pub(super) const NO_LETTERS: Letters = Letters {
    code: "",
    file: "",
    valued: "",
    attached: "",
    digits: "",
    other: "",
    code_long: &[],
    valued_long: &[],
    check: &[],
    whole: false,
};

/// The option grammar of the interpreters whose arguments are read ([`interpreter_run`]), from
/// their manuals: what takes the program, a file or a value.
pub(super) fn letters(name: &str) -> Option<Letters> {
    Some(match name {
        "python" => Letters {
            code: "c",
            valued: "WXQ",
            other: "m",
            valued_long: &["--check-hash-based-pycs"],
            ..NO_LETTERS
        },
        "node" => Letters {
            code: "ep",
            valued: "rC",
            code_long: &["--eval", "--print"],
            valued_long: &[
                "--require",
                "--import",
                "--loader",
                "--experimental-loader",
                "--conditions",
                "--input-type",
                "--inspect-port",
                "--title",
                "--env-file",
            ],
            check: &["c", "--check"],
            whole: true,
            ..NO_LETTERS
        },
        // `deno run`'s options (`-r` reloads and takes no word; `-c` is the config file;
        // `--check` type-checks, then runs; `--lock` and `--env-file` take a value only after
        // `=`).
        "deno" => Letters {
            valued: "cL",
            valued_long: &[
                "--config",
                "--import-map",
                "--cert",
                "--location",
                "--seed",
                "--log-level",
                "--ext",
            ],
            whole: true,
            ..NO_LETTERS
        },
        "bun" => Letters {
            code: "ep",
            valued: "rc",
            code_long: &["--eval", "--print"],
            valued_long: &["--preload", "--config", "--cwd", "--env-file"],
            whole: true,
            ..NO_LETTERS
        },
        // `perl -c` runs `BEGIN`/`CHECK` blocks and `use`: no mere check.
        "perl" => Letters {
            code: "eE",
            valued: "I",
            attached: "MmxidDVC",
            digits: "0l",
            ..NO_LETTERS
        },
        "ruby" => Letters {
            code: "e",
            valued: "rICE",
            attached: "xFKTWi",
            digits: "0",
            valued_long: &["--encoding", "--external-encoding", "--internal-encoding"],
            check: &["c"],
            ..NO_LETTERS
        },
        "php" => Letters {
            code: "rBRE",
            file: "fF",
            valued: "dczSt",
            check: &["l"],
            ..NO_LETTERS
        },
        "osascript" => Letters {
            code: "e",
            valued: "ls",
            ..NO_LETTERS
        },
        _ => return None,
    })
}

/// Where interpreter `name` given `args` gets its program, its words read as it reads them:
/// a shell's by [`shell_run`], PowerShell's by [`powershell_run`], `source`'s first word;
/// the others by their option grammar ([`letters`]): options come first, a group of letters at
/// once; the letter or long option of the program makes its value the code; `-` reads standard
/// input, `--` ends the options; the first word past them is a script file (`deno run` and
/// `bun run` first, `deno eval` code; another of their subcommands runs nothing of its own).
/// `None`: not an interpreter whose words are read.
pub(super) fn interpreter_run<'a>(name: &str, args: &[&'a str]) -> Option<Run<'a>> {
    let name = interpreter_name(name);
    if SHELLS.contains(&name) {
        return Some(shell_run(args));
    }
    match name {
        "pwsh" | "powershell" => return Some(powershell_run(name, args)),
        "source" | "." => {
            return Some(match args.first() {
                Some(&("/dev/stdin" | "-")) => Run::Stdin,
                Some(f) => Run::File(f),
                None => Run::Nothing,
            });
        }
        _ => {}
    }
    let g = letters(name)?;
    let value = |rest: &'a str, words: &mut std::slice::Iter<'_, &'a str>| {
        if rest.is_empty() {
            words.next().copied()
        } else {
            Some(rest)
        }
    };
    let mut subcommand = false;
    let mut words = args.iter();
    while let Some(&a) = words.next() {
        if a == "-" {
            return Some(Run::Stdin);
        }
        if a == "--" {
            return Some(words.next().map_or(Run::Stdin, |f| Run::File(f)));
        }
        if a.starts_with("--") {
            let (key, inline) = match a.split_once('=') {
                Some((k, v)) => (k, Some(v)),
                None => (a, None),
            };
            if g.check.contains(&key) {
                return Some(Run::Nothing);
            }
            if g.code_long.contains(&key) {
                return Some(
                    inline
                        .or_else(|| words.next().copied())
                        .map_or(Run::Nothing, Run::Code),
                );
            }
            if inline.is_none() && g.valued_long.contains(&key) {
                words.next();
            }
            continue;
        }
        if let Some(group) = a.strip_prefix('-') {
            if g.whole {
                // One option a word: `-pe` is `--print --eval`, both the program's.
                // `node -p -e X`: the program is the last such option's word.
                if !group.is_empty() && group.chars().all(|ch| g.code.contains(ch)) {
                    if words.clone().next().is_some_and(|w| w.starts_with('-')) {
                        continue;
                    }
                    return Some(words.next().map_or(Run::Nothing, |c| Run::Code(c)));
                }
                if g.check.contains(&group) {
                    return Some(Run::Nothing);
                }
                if group.len() == 1 && g.valued.contains(group) {
                    words.next();
                }
                continue;
            }
            let mut after_digits = false;
            for (i, ch) in group.char_indices() {
                if after_digits && ch.is_ascii_digit() {
                    continue;
                }
                let rest = &group[i + ch.len_utf8()..];
                if g.check.iter().any(|c| c.len() == 1 && c.starts_with(ch)) {
                    return Some(Run::Nothing);
                }
                if g.code.contains(ch) {
                    return Some(value(rest, &mut words).map_or(Run::Nothing, Run::Code));
                }
                if g.file.contains(ch) {
                    return Some(value(rest, &mut words).map_or(Run::Nothing, Run::File));
                }
                if g.other.contains(ch) {
                    return Some(Run::Nothing);
                }
                if g.valued.contains(ch) {
                    if rest.is_empty() {
                        words.next();
                    }
                    break;
                }
                if g.attached.contains(ch) {
                    break;
                }
                after_digits = g.digits.contains(ch);
            }
            continue;
        }
        // The first word past the options.
        match (name, a) {
            ("deno" | "bun", "run") | ("deno", "serve") if !subcommand => subcommand = true,
            ("deno", "eval") if !subcommand => {
                return Some(
                    words
                        .find(|w| !w.starts_with('-'))
                        .map_or(Run::Nothing, |c| Run::Code(c)),
                );
            }
            (
                "bun",
                "x" | "i" | "install" | "add" | "remove" | "update" | "create" | "init" | "pm"
                | "link" | "build" | "test" | "upgrade" | "outdated" | "publish" | "patch",
            )
            | ("deno", _)
                if !subcommand =>
            {
                return Some(Run::Nothing);
            }
            _ => return Some(Run::File(a)),
        }
    }
    Some(Run::Stdin)
}

/// Where PowerShell given `args` gets its program. Its parameters may be shortened to a prefix
/// (as long as its parser asks for each), any case (`-c`, `-com`, `-Command`; `-f`, `-File`; `-e`, `-en`, `-enc`,
/// `-ec`, `-EncodedCommand`; `-ex`, `-ep`, `-ExecutionPolicy`): `-Command` names the code
/// (`-Command -` standard input; `-CommandWithArgs` too), `-File` a script (`-File -` standard
/// input); options that take a value (`-ExecutionPolicy Bypass`, `-WindowStyle Hidden`) skip it;
/// `-EncodedCommand` is no program read here (its Base64 text is the PowerShell rule's); `-`
/// reads standard input. The first
/// other word is a script for `pwsh` (7) and the code for Windows PowerShell.
pub(super) fn powershell_run<'a>(name: &str, args: &[&'a str]) -> Run<'a> {
    // (name, the shortest prefix pwsh's parser takes for it; aliases whole), in the order it
    // resolves `-e`/`-ex`.
    const VALUED: &[(&str, usize)] = &[
        ("executionpolicy", 2),
        ("ep", 2),
        ("windowstyle", 1),
        ("outputformat", 1),
        ("of", 2),
        ("inputformat", 3),
        ("if", 2),
        ("configurationname", 6),
        ("configurationfile", 14),
        ("workingdirectory", 2),
        ("wd", 2),
        ("version", 1),
        ("psconsolefile", 2),
        ("custompipename", 3),
        ("settingsfile", 8),
    ];
    let is = |o: &str, full: &str, min: usize| o.len() >= min && full.starts_with(o);
    let stdin_or = |w: Option<&&'a str>, f: fn(&'a str) -> Run<'a>| match w {
        None => Run::Nothing,
        Some(&"-") => Run::Stdin,
        Some(w) => f(w),
    };
    let mut words = args.iter();
    while let Some(&a) = words.next() {
        let lower = a.to_ascii_lowercase();
        let Some(o) = lower.strip_prefix('-') else {
            return if name == "powershell" {
                Run::Code(a)
            } else {
                Run::File(a)
            };
        };
        if o.is_empty() {
            return Run::Stdin;
        }
        if VALUED.iter().any(|&(full, min)| is(o, full, min)) {
            words.next();
        } else if o == "cwa" || is(o, "commandwithargs", 8) || is(o, "command", 1) {
            return stdin_or(words.next(), Run::Code);
        } else if is(o, "file", 1) {
            return stdin_or(words.next(), Run::File);
        } else if o == "ec" || is(o, "encodedcommand", 1) {
            return Run::Nothing;
        }
    }
    Run::Stdin
}

/// Where a shell given `args` gets its program, its words read as bash reads them
/// (`parse_shell_options`): options come first, each group of letters at once (`-xc`,
/// `-euo`); `c` (in a group of either sign, or fish's `--command`) makes the first word past
/// the options the code; `s` reads standard input whatever follows; `n` only checks the
/// syntax, running nothing; `o`/`O` take a word each
/// (`-euo pipefail`), as do `--rcfile` and `--init-file`; long options may be written with one
/// dash (`-norc`); `-` or `--` ends the options (a lone `+` is an empty group); and without `c`
/// or `s` the first word past them is a script file (`bash -x install.sh`). One reader for
/// every rule that asks what a shell runs.
pub(super) fn shell_run<'a>(args: &[&'a str]) -> Run<'a> {
    const LONG: &[&str] = &[
        "norc",
        "noprofile",
        "noediting",
        "posix",
        "restricted",
        "login",
        "verbose",
        "debugger",
        "dump-strings",
        "dump-po-strings",
        "rcfile",
        "init-file",
        "help",
        "version",
        "pretty-print",
    ];
    let (mut code, mut stdin, mut noexec) = (false, false, false);
    let mut operand = None;
    let mut words = args.iter().copied();
    while let Some(a) = words.next() {
        let long = a
            .strip_prefix("--")
            .or_else(|| a.strip_prefix('-').filter(|l| LONG.contains(l)));
        if let Some(l) = long {
            match l {
                "" => {
                    operand = words.next();
                    break;
                }
                "rcfile" | "init-file" => {
                    words.next();
                }
                "command" => code = true,
                l => {
                    if let Some(inline) = l.strip_prefix("command=") {
                        return Run::Code(inline);
                    }
                }
            }
            continue;
        }
        if a == "-" {
            operand = words.next();
            break;
        }
        let Some(flags) = a.strip_prefix('-').or_else(|| a.strip_prefix('+')) else {
            operand = Some(a);
            break;
        };
        code |= flags.contains('c');
        stdin |= flags.contains('s');
        // `-n` reads commands without running them (a syntax check); `+n` turns that off.
        if flags.contains('n') {
            noexec = a.starts_with('-');
        }
        for _ in flags.chars().filter(|f| matches!(f, 'o' | 'O')) {
            words.next();
        }
    }
    match operand {
        _ if noexec => Run::Nothing,
        Some(word) if code => Run::Code(word),
        None if code => Run::Nothing,
        _ if stdin => Run::Stdin,
        Some(file) => Run::File(file),
        None => Run::Stdin,
    }
}

/// The file command line `code` runs: its first word when that is a path (`/tmp/w`), or the
/// script it gives an interpreter (`bash /tmp/w.sh`).
pub(super) fn program_file(code: &str, path: impl Fn(&str) -> bool) -> Option<&str> {
    let words: Vec<&str> = code.split_whitespace().collect();
    let (first, rest) = words.split_first()?;
    if path(first) {
        return Some(first);
    }
    match interpreter_run(&base_name(first), rest) {
        Some(Run::File(f)) => Some(f),
        _ => None,
    }
}
