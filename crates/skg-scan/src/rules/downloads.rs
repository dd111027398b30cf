//! Downloads and decodes that are run: piped, written and run, named as the command, or kept in a
//! variable that is run.

use super::{
    Ctx, Place, RCE_DECODE, RCE_DOWNLOAD,
    commands::{DOWNLOADERS, SENDERS},
    hosts::{Host, base_name, first_plain, host_of, install_step, under},
    interpreters::{Run, given_programs, interpreter_run, is_interpreter, runs_code, runs_stdin},
    runs::Runs,
    scripts::source_notes,
};
use skg_syntax::{ShellCommand, ShellFacts};

#[allow(clippy::too_many_arguments)]
pub(super) fn download_exec(
    ctx: &mut Ctx<'_>,
    facts: &ShellFacts,
    eff: &[(String, Vec<&str>)],
    runs: &Runs,
    i: usize,
    line: u32,
    snippet: &str,
    place: Place<'_>,
    code: &str,
) {
    let (name, args) = &eff[i];
    let c = &facts.commands()[i];
    let mut how: Option<String> = None;
    let mut host = Host::default();
    let mut confidence = 0.9;
    if DOWNLOADERS.contains(&name.as_str()) {
        host = host_of(name, args);
        // The first command downstream of `j` in its pipeline that runs its input.
        let runner_after = |j: usize| {
            facts
                .downstream(j)
                .map(|(k, _)| &eff[k])
                .find(|(n, a)| runs_stdin(n, a))
                .map(|(n, _)| n)
        };
        // What runs what command `j` writes: a runner it is piped into, one whose input it is
        // (`bash < <(echo …)`), one that runs it as its program (`bash <(echo …)`, `bash -c
        // "$(echo …)"`), … ([`output_runner`]).
        let runs_output = |j: usize| {
            runner_after(j).or_else(|| output_runner(facts, eff, runs, j).map(|q| &eff[q].0))
        };
        // Piped into an interpreter.
        if let Some(n) = runner_after(i) {
            how = Some(format!(
                "`{name}` output is piped into `{n}`, which runs it"
            ));
        }
        // The input of an interpreter that runs its input (`bash < <(curl …)`), or of a
        // command piped into one (`cat < <(curl …) | bash`, `jq -r .x < <(curl …) | sh`), as a
        // pipe into it would be.
        if how.is_none()
            && let Some(p) = c.feeds
        {
            let (reader, reader_args) = &eff[p];
            if runs_stdin(reader, reader_args) {
                how = Some(format!(
                    "`{name}` output is the input of `{reader}`, which runs it"
                ));
            } else if let Some(n) = runner_after(p) {
                how = Some(format!(
                    "`{name}` output is the input of `{reader}`, piped into `{n}`, which runs it"
                ));
            }
        }
        // Printed, as an argument, into a pipe that runs it (`echo "$(curl …)" | sh`, `cat <<<
        // "$(curl …)" | sh`), or read as a file by a command piped into one (`cat <(curl …) |
        // bash`, `jq -r .x <(curl …) | sh`); a `$( )` in another command's argument is data.
        if how.is_none()
            && let Some(p) = c.parent
            && (matches!(eff[p].0.as_str(), "echo" | "printf")
                || passes_on(&eff[p].0, &eff[p].1)
                || eff[p]
                    .1
                    .iter()
                    .any(|a| a.starts_with("<(") && a.contains(name.as_str())))
            && let Some(n) = runs_output(p)
        {
            how = Some(format!(
                "`{}` prints what `{name}` downloads into `{n}`, which runs it",
                eff[p].0
            ));
        }
        // The command a substitution names (`$(curl …)`, `sudo "$(curl …)" -y`): the
        // download's words are the program run and its arguments.
        // The command whose name holds it, through printers (`$(echo $(curl …))`).
        let named = |p: usize| {
            // The word the command's name comes from, through its wrappers (`sudo`); the
            // download anywhere in it (`${X:-}$(curl …)`).
            let cp = &facts.commands()[p];
            std::iter::once(&cp.name).chain(&cp.args).any(|w| {
                (w.contains("$(") || w.contains('`'))
                    && w.contains(name.as_str())
                    && base_name(w) == eff[p].0
                    && !in_a_path(w, name, snippet)
            })
        };
        if how.is_none()
            && let Some(p) = c.parent
            && (named(p)
                || (matches!(eff[p].0.as_str(), "echo" | "printf")
                    && facts.commands()[p].parent.is_some_and(named)))
        {
            how = Some(format!(
                "`{name}` output names the command run (its words are the program and its arguments)"
            ));
            // Weaker than a shell reading it (no pipes, no quotes): an interpreter that runs the
            // same download as code (`bash -c "$(curl …)"`, read again as its program) is the
            // finding kept on the line.
            confidence = 0.85;
        }
        // The remote command ssh is given (`ssh host "$(curl …)"`: the download is the code the
        // remote shell reads; one inside an argument, `ufw allow from $(curl …)`, is data), or a
        // command its options run here (`ssh -o ProxyCommand="$(curl …)" host`).
        if how.is_none()
            && let Some(p) = c.parent
            && matches!(eff[p].0.as_str(), "ssh" | "scp" | "sftp" | "rsync")
        {
            let whole = |t: &str| {
                let t = t.trim_start();
                t.starts_with("$(") || t.starts_with('`')
            };
            let by = &eff[p].0;
            let programs = given_programs(by, &eff[p].1);
            if programs.iter().any(|g| g.remote && whole(&g.code)) {
                how = Some(format!(
                    "`{by}` runs what `{name}` downloads on the remote host"
                ));
            } else if programs.iter().any(|g| !g.remote && whole(&g.code)) {
                how = Some(format!(
                    "`{by}` runs what `{name}` downloads as a command of its options"
                ));
            }
        }
        // Inside `$( )` of the program an interpreter runs (`bash -c "$(curl …)"`, `eval`'s
        // words, `source <(curl …)`), not of a script's argument (`python3 report.py --version
        // "$(curl …)"` passes data).
        if how.is_none()
            && let Some(p) = c.parent
            && is_interpreter(&eff[p].0, &eff[p].1)
            && {
                // Its input: a here-string or a process substitution it reads (`bash <<<
                // "$(curl …)"`, `< <(curl …) bash`).
                let input = || {
                    facts.commands()[p].redirects.iter().any(|r| {
                        (r.op == "<<<" || r.op == "<")
                            && (r.target.contains("$(") || r.target.starts_with("<("))
                    })
                };
                match interpreter_run(&eff[p].0, &eff[p].1) {
                    // In the code, or in the words after it, which the code reads (`bash -c
                    // 'eval "$1"' _ "$(curl …)"`); eval's and the others' words.
                    Some(Run::Code(_)) | None => true,
                    Some(Run::File(f)) => {
                        f.starts_with("<(")
                            || f.contains("$(")
                            || f.starts_with("/dev/fd/")
                            || ((f == "/dev/stdin" || f.starts_with("/proc/")) && input())
                    }
                    Some(Run::Stdin) => input(),
                    Some(Run::Nothing) => false,
                }
            }
        {
            how = Some(format!("`{}` runs what `{name}` downloads", eff[p].0));
        }
        // Saved to a file that a later command of the snippet runs (the same statement or a
        // later one: `curl -o /tmp/i.sh URL; /tmp/i.sh` over two lines runs it all the same).
        if how.is_none()
            && let Some(file) = output_file(name, args, c)
        {
            let run =
                Runs::after(runs.files.get(&base_name(&file)), i).map(|j| &facts.commands()[j]);
            if let Some(o) = run {
                how = Some(format!("`{name}` saves `{file}` and `{}` runs it", o.name));
            }
        }
        // Kept in a variable that a later interpreter or `eval` runs (`X=$(curl …); eval "$X"`).
        if how.is_none()
            && let Some((var, j)) = variable_run(facts, eff, runs, i)
        {
            how = Some(format!(
                "`{name}` output is kept in `${var}` and `{}` runs it",
                eff[j].0
            ));
        }
    } else if is_interpreter(name, args) && (name != "eval" || !args.is_empty()) {
        // `bash <(curl …)`, `python -c "$(curl …)"`, `iex (iwr …)` written as shell.
        let joined = args.join(" ").to_ascii_lowercase();
        if ["<(curl", "<(wget", "$(curl", "$(wget", "`curl", "`wget"]
            .iter()
            .any(|p| joined.contains(p))
            && facts.inner(i).next().is_none()
        {
            how = Some(format!("`{name}` runs a download"));
            host = host_of("", args);
            // The download is inside an argument, read as words.
            if host.plain.is_none() {
                host.plain = first_plain(&args.join(" "));
            }
        } else if name == "deno"
            && let Some(Run::File(module)) = interpreter_run(name, args)
            && ["http://", "https://"].iter().any(|p| {
                module
                    .get(..p.len())
                    .is_some_and(|m| m.eq_ignore_ascii_case(p))
            })
        {
            // `deno run https://…/x.ts`: Deno fetches the module and runs it. A module registry's
            // address (deno.land, jsr.io, esm.sh) is a published package, as `jsr:` and `npm:`
            // specifiers are, and as `npx` is not reported; a Deno Deploy app (`*.deno.dev`) is
            // anyone's, as any other host.
            // (Read as the shell passes it: `https://deno.land\@10.0.0.9/x.ts` is 10.0.0.9's.
            // esm.sh's `/gh/…` serves any GitHub repository, not a published package.)
            let unescaped = module.replace('\\', "");
            let remote = host_of("", &[unescaped.as_str()]);
            let registry = ["deno.land", "jsr.io", "esm.sh"]
                .iter()
                .any(|h| under(&remote.name, h))
                && !unescaped.to_ascii_lowercase().contains("esm.sh/gh/");
            if !registry {
                how = Some(format!(
                    "`{name}` runs a module it fetches from the network"
                ));
                host = remote;
            }
        }
    }
    let Some(how) = how else {
        return;
    };
    let (mut context, mut adjust) = source_notes(&host);
    if let Some(why) = install_step(ctx, place, &host) {
        adjust -= why.framing;
        context.push(why);
    }
    if code.contains("/tmp/.") || code.contains("$TMPDIR/.") {
        context.push("raised: runs a hidden file in a temporary folder".into());
        adjust += 1;
    }
    ctx.emit(
        RCE_DOWNLOAD,
        confidence,
        line,
        snippet,
        format!(
            "{how}{}",
            if host.name.is_empty() {
                String::new()
            } else {
                format!(" (from {})", host.shown())
            }
        ),
        context,
        place,
        adjust,
    );
}

/// The file a downloader writes, read as the tool reads its options: curl's `-o f` (also at
/// the end of a cluster, `-fsSLo f`, or attached, `-of`), `--output f`/`--output=f`, and `-O`/
/// `--remote-name` (alone or in a cluster, `-fsSLO`: the last segment of its URL, the first
/// argument that is no option's value); wget's `-O f` (`-qO f`, `-Of`,
/// `--output-document[=]f`; its `-o` is a log); PowerShell's `-OutFile f`; another downloader's
/// `-o f`; else a redirection of its standard output (`> f`, `&> f`). A letter that takes a value ends its cluster (`-XPOST` is
/// the method `POST`). Standard output (`-`) is no file.
pub(super) fn output_file(name: &str, args: &[&str], c: &ShellCommand) -> Option<String> {
    let file = |f: &str| (!f.is_empty() && f != "-").then(|| f.to_owned());
    let last_segment = |url: &str| {
        let path = url.split(['?', '#']).next().unwrap_or(url);
        file(path.trim_end_matches('/').rsplit('/').next().unwrap_or(""))
    };
    // The letter naming the output file, curl's remote-name letter, the letters taking a value.
    let (takes, remote, valued) = match name {
        "curl" => (Some('o'), Some('O'), "ACDEFHKQTUXYbcdehmrtuwxyz"),
        "wget" => (Some('O'), None, "ABDIPQRTUXadeilotw"),
        "iwr" | "invoke-webrequest" | "irm" | "invoke-restmethod" => (None, None, ""),
        _ => (Some('o'), None, ""),
    };
    let mut remote_name = false;
    let mut positional: Vec<&str> = Vec::new();
    let mut it = args.iter().copied();
    while let Some(a) = it.next() {
        if let Some(long) = a.strip_prefix("--") {
            let (key, value) = match long.split_once('=') {
                Some((k, v)) => (k, Some(v)),
                None => (long, None),
            };
            match key {
                "output" | "output-document" => {
                    return match value {
                        Some(v) => file(v),
                        None => it.next().and_then(file),
                    };
                }
                "remote-name" if remote.is_some() => remote_name = true,
                _ => {}
            }
            continue;
        }
        if a.eq_ignore_ascii_case("-outfile") {
            return it.next().and_then(file);
        }
        let Some(cluster) = a.strip_prefix('-').filter(|c| !c.is_empty()) else {
            positional.push(a);
            continue;
        };
        for (i, ch) in cluster.char_indices() {
            let rest = &cluster[i + ch.len_utf8()..];
            if Some(ch) == takes {
                return if rest.is_empty() {
                    it.next().and_then(file)
                } else {
                    file(rest)
                };
            }
            if Some(ch) == remote {
                remote_name = true;
            }
            if valued.contains(ch) {
                if rest.is_empty() {
                    it.next();
                }
                break;
            }
            if !ch.is_ascii_alphabetic() {
                break;
            }
        }
    }
    if remote_name {
        return positional
            .iter()
            .find(|a| a.contains("://"))
            .and_then(|u| last_segment(u));
    }
    c.redirects
        .iter()
        .find(|r| r.takes_stdout())
        .and_then(|r| file(&r.target))
}

/// Whether the substitution in word `w` that holds `inner` (`$(…)` or `` `…` ``) is a folder of
/// a path, `/` following it, in double quotes on source line `line`
/// (`"$HOME/tools/$(curl …)/bin/tool"`): what it writes then names a folder, not the program
/// and its arguments. Unquoted, its output is split into words, and its first is the program
/// (`$(curl …)/x` runs `sh -c id x` when the download says `sh -c id`).
pub(super) fn in_a_path(w: &str, inner: &str, line: &str) -> bool {
    let Some(at) = w
        .find(&format!("$({inner}"))
        .or_else(|| w.find(&format!("`{inner}")))
    else {
        return false;
    };
    // Where it ends, read as the syntax crate reads a substitution (its own quotes and
    // parentheses); a backquoted one at its next backquote.
    let end = if w[at..].starts_with("$(") {
        skg_syntax::substitution_len(&w[at..]).map_or(w.len(), |len| at + len)
    } else {
        w[at + 1..].find('`').map_or(w.len(), |p| at + p + 2)
    };
    if !w[end..].starts_with('/') {
        return false;
    }
    // In double quotes where the line writes it: an odd number of `"` before it, outside
    // single quotes and escapes.
    let Some(written) = line.find(&w[at..end]) else {
        return false;
    };
    let mut single = false;
    let mut double = false;
    let mut escaped = false;
    for ch in line[..written].chars() {
        match ch {
            _ if escaped => escaped = false,
            '\\' if !single => escaped = true,
            '\'' if !double => single = !single,
            '"' if !single => double = !double,
            _ => {}
        }
    }
    double
}

/// The command that runs what command `j` writes as a program: a runner it is piped into
/// (through filters that pass it on), one whose input it is (`bash < <(…)`), one that runs it
/// as its program file (`bash <(…)`, `source <(…)`) or in its code (`bash -c "$(…)"`, `sh -c
/// "set -e; $(…)"`, `eval "$(…)"`),
/// or — written by a printer (`echo`, `printf`, a filter that passes it on) — what runs the
/// printer's output; kept in a variable, the command that runs the variable
/// ([`variable_run`]).
pub(super) fn output_runner(
    facts: &ShellFacts,
    eff: &[(String, Vec<&str>)],
    runs: &Runs,
    writer: usize,
) -> Option<usize> {
    let mut j = writer;
    // Printers inside printers, at most this deep (`echo "$(printf … "$(cat …)")"`).
    for _ in 0..4 {
        if let Some(k) = facts
            .downstream(j)
            .map(|(k, _)| k)
            .find(|&k| !passes_on(&eff[k].0, &eff[k].1))
        {
            return runs_stdin(&eff[k].0, &eff[k].1).then_some(k);
        }
        if let Some(q) = facts.commands()[j].feeds {
            return runs_stdin(&eff[q].0, &eff[q].1).then_some(q);
        }
        let Some(q) = facts.commands()[j].parent else {
            return variable_run(facts, eff, runs, j).map(|(_, k)| k);
        };
        let (runner, words) = &eff[q];
        // The substitution is the whole program or file (`bash -c "$(…)"`, not `bash -c "echo
        // $(…)"`), and holds this command.
        // A file is the whole substitution (`bash <(…)`); code holds it anywhere (`sh -c "set
        // -e; $(…)"`: what it writes is read as code too).
        let holds = |t: &str| {
            (t.contains("$(") || t.contains('`') || t.contains("<("))
                && t.contains(eff[j].0.as_str())
        };
        let whole = |t: &str| {
            let t = t.trim_start();
            (t.starts_with("$(") || t.starts_with('`') || t.starts_with("<(")) && holds(t)
        };
        let runs_it = match interpreter_run(runner, words) {
            Some(Run::File(f)) => whole(f),
            Some(Run::Code(code)) => holds(code),
            _ => {
                matches!(runner.as_str(), "eval" | "iex" | "invoke-expression")
                    && words.iter().any(|w| holds(w))
            }
        };
        if runs_it {
            return Some(q);
        }
        if !(matches!(runner.as_str(), "echo" | "printf") || passes_on(runner, words)) {
            return None;
        }
        j = q;
    }
    None
}

/// When command `i` runs in a substitution kept in a variable (`X=$(… | cmd)`) and what it
/// writes reaches the variable, the variable and the first later command that runs it
/// ([`Runs::vars`]). What reaches the variable is the pipeline's last output: only filters that
/// pass data on may follow `cmd` (`tr`, `sed`, `gunzip`, `base64 -d`); an extract (`grep`,
/// `cut`, `jq`), a count or a hash holds something else, and output sent to a file (`> f`;
/// `2>/dev/null` is another stream) holds nothing.
pub(super) fn variable_run<'c>(
    facts: &'c ShellFacts,
    eff: &[(String, Vec<&str>)],
    runs: &Runs,
    i: usize,
) -> Option<(&'c str, usize)> {
    let c = &facts.commands()[i];
    let var = c.assigned_to.as_deref()?;
    let after: Vec<usize> = facts.downstream(i).map(|(j, _)| j).collect();
    if after.iter().any(|&j| !passes_on(&eff[j].0, &eff[j].1))
        || after.iter().chain(std::iter::once(&i)).any(|&j| {
            facts.commands()[j]
                .redirects
                .iter()
                .any(skg_syntax::Redirect::takes_stdout)
        })
    {
        return None;
    }
    Some((var, Runs::after(runs.vars.get(var), i)?))
}

/// A filter that passes its input on as data (decoded, decompressed, with characters mapped):
/// what follows a download or a decoder and still holds the program.
pub(super) fn passes_on(name: &str, args: &[&str]) -> bool {
    match name {
        "tr" | "sed" | "cat" | "dos2unix" | "gunzip" | "zcat" | "xzcat" | "bzcat" | "zstdcat"
        | "uudecode" | "base32" => true,
        "gzip" | "xz" | "bzip2" | "zstd" | "lz4" => args
            .iter()
            .any(|a| matches!(*a, "-d" | "--decompress" | "-dc" | "-cd")),
        _ => is_decoder(name, args),
    }
}

pub(super) fn is_decoder(name: &str, args: &[&str]) -> bool {
    match name {
        "base64" | "gbase64" => args
            .iter()
            .any(|a| matches!(*a, "-d" | "--decode" | "-D" | "-di" | "-id")),
        "xxd" => args.iter().any(|a| a.starts_with("-r")),
        "openssl" => args.iter().any(|a| *a == "base64" || *a == "enc") && args.contains(&"-d"),
        "uudecode" | "base32" => true,
        _ => false,
    }
}

#[allow(clippy::too_many_arguments)]
pub(super) fn decode_exec(
    ctx: &mut Ctx<'_>,
    facts: &ShellFacts,
    eff: &[(String, Vec<&str>)],
    runs: &Runs,
    i: usize,
    line: u32,
    snippet: &str,
    place: Place<'_>,
) {
    let (name, args) = &eff[i];
    let c = &facts.commands()[i];
    if !is_decoder(name, args) {
        return;
    }
    let into = facts.downstream(i).map(|(j, _)| &eff[j]).find(|(n, a)| {
        runs_stdin(n, a)
            || matches!(
                n.as_str(),
                "curl" | "wget" | "nc" | "ncat" | "netcat" | "socat" | "telnet"
            )
    });
    let parent = c
        .parent
        .map(|p| &eff[p])
        .filter(|(n, a)| is_interpreter(n, a))
        .or_else(|| c.feeds.map(|p| &eff[p]).filter(|(n, a)| runs_stdin(n, a)));
    // Kept in a variable that a later command runs (`X=$(echo … | base64 -d); eval "$X"`).
    let kept = || variable_run(facts, eff, runs, i).map(|(_, j)| &eff[j]);
    if let Some((n, _)) = into.or(parent).or_else(kept) {
        let runs = runs_code(n) || n == "xargs";
        ctx.emit(
            RCE_DECODE,
            0.9,
            line,
            snippet,
            if runs && !SENDERS.contains(&n.as_str()) {
                format!("decoded data is run by `{n}`")
            } else {
                format!("decoded data drives the network command `{n}`")
            },
            Vec::new(),
            place,
            0,
        );
    }
}
