//! Which commands of a block run a file or a variable, by name, for the rules that follow a
//! download to where it is run.

use super::{
    hosts::base_name,
    interpreters::{
        Run, given_programs, interpreter_run, is_interpreter, is_shell, program_file, runs_stdin,
    },
    settings::variable_command_lines,
};
use skg_syntax::ShellFacts;
use std::collections::HashMap;

/// What the commands of a snippet run, found once per snippet (not once per download or
/// assignment: a snippet of n commands would cost n² otherwise).
#[derive(Default)]
pub(super) struct Runs {
    /// By a file's base name, the commands that run it (in source order): a path run as a
    /// command (`/tmp/i.sh`, `./x`), a script given to an interpreter (`bash i.sh`, `python3 -u
    /// /tmp/i.py`; not a syntax check, `php -l f`), or shell or PowerShell code that is one path
    /// (`bash -c /tmp/i.sh`, `eval /tmp/i.sh`, `powershell ./i.ps1`; Perl's `-e /tmp/x` is a
    /// pattern).
    pub(super) files: HashMap<String, Vec<usize>>,
    /// By a variable's name, the commands that run its value (in source order): as the whole
    /// program (`eval "$X"`, `bash -c "${X:-}"` — not a version string in a URL of a longer
    /// program), as a file (`bash <(echo "$X")`) or as the input of one that runs its input
    /// (`echo "$X" | sh`, `printf %s "$X" | tr -d '\r' | sh`, `sh <<< "$X"`).
    pub(super) vars: HashMap<String, Vec<usize>>,
}

impl Runs {
    /// `kept_lines`: the command lines the block's assignments keep in variables programs
    /// run ([`variable_command_lines`]), each with its assignment's index, as the block's
    /// variables hold them; `environments`: the `NAME=value` words each command's wrappers give
    /// it ([`effective`]).
    pub(super) fn of(
        facts: &ShellFacts,
        kept_lines: &[(usize, String)],
        eff: &[(String, Vec<&str>)],
        environments: &[Vec<(&str, &str)>],
    ) -> Runs {
        let mut out = Runs::default();
        let path = |c: &str| c.contains('/') && !c.contains(char::is_whitespace);
        // The command lines kept in variables a program runs ([`variable_command_lines`]), by
        // the command that sees them: the one they are written before, else the next (an
        // assignment alone, `export`); and those given through a wrapper (`env
        // GIT_SSH_COMMAND=/tmp/w git fetch`).
        let mut variable_lines: HashMap<usize, Vec<String>> = HashMap::new();
        for (at, code) in kept_lines.iter().cloned() {
            let a = &facts.assignments()[at];
            let seen_by = a.command.or_else(|| {
                let k = facts.commands().partition_point(|c| c.line <= a.line);
                (k < facts.commands().len()).then_some(k)
            });
            if let Some(k) = seen_by {
                variable_lines.entry(k).or_default().push(code);
            }
        }
        for (k, environment) in environments.iter().enumerate() {
            for (_, code) in variable_command_lines(environment) {
                variable_lines.entry(k).or_default().push(code);
            }
        }
        for (j, o) in facts.commands().iter().enumerate() {
            let (on, oa) = &eff[j];
            if o.name.contains('/') {
                out.files.entry(base_name(&o.name)).or_default().push(j);
            }
            // Every program it is given: ssh's remote command as well as its ProxyCommand.
            let programs = given_programs(on, oa);
            // A path given to a shell as its code runs that file here (`bash -c /tmp/i.sh`,
            // `ssh -o ProxyCommand=/tmp/p.sh`; another host's path is that host's file).
            let file = match interpreter_run(on, oa) {
                Some(Run::File(f)) => Some(f),
                _ => programs
                    .iter()
                    .find(|g| {
                        !g.remote
                            && (is_shell(&g.runner)
                                || matches!(g.runner.as_str(), "eval" | "pwsh" | "powershell"))
                            && path(&g.code)
                    })
                    .map(|g| g.code.as_str()),
            };
            if let Some(f) = file {
                out.files.entry(base_name(f)).or_default().push(j);
            }
            // A file a command line runs that git's settings or a variable the command sees
            // hold (`git -c core.pager='bash /tmp/w.sh' log`, `PAGER='bash /tmp/w.sh' man ls`,
            // `export GIT_SSH_COMMAND=/tmp/w` before `git fetch`).
            let lines = programs
                .iter()
                .filter(|g| !g.remote && is_shell(&g.runner))
                .map(|g| g.code.as_str())
                .chain(
                    variable_lines
                        .get(&j)
                        .into_iter()
                        .flatten()
                        .map(String::as_str),
                );
            for f in lines.filter_map(|l| program_file(l, path)) {
                out.files.entry(base_name(f)).or_default().push(j);
            }
            let mut vars: Vec<&str> = Vec::new();
            vars.extend(programs.iter().filter_map(|g| whole_var(&g.code)));
            // Its name is the variable (`$X`, `"${X}" --yes`, `sudo $X`): the value's words are
            // the program run and its arguments.
            vars.extend(whole_var(&o.name).or_else(|| whole_var(on)));
            if is_interpreter(on, oa) {
                for a in oa.iter().filter(|a| a.starts_with("<(")) {
                    vars.extend(vars_used(a));
                }
            }
            if runs_stdin(on, oa) {
                for r in o.redirects.iter().filter(|r| r.op == "<<<") {
                    vars.extend(whole_var(&r.target));
                }
                for (k, _) in facts.upstream(j) {
                    if matches!(eff[k].0.as_str(), "echo" | "printf") {
                        vars.extend(eff[k].1.last().and_then(|a| whole_var(a)));
                    }
                }
            }
            for v in vars {
                let js = out.vars.entry(v.to_owned()).or_default();
                if js.last() != Some(&j) {
                    js.push(j);
                }
            }
        }
        out
    }

    /// The first command after `i` that runs file `file`, or the value of variable `var`.
    pub(super) fn after(list: Option<&Vec<usize>>, i: usize) -> Option<usize> {
        let js = list?;
        js.get(js.partition_point(|&j| j <= i)).copied()
    }
}

/// The variable a word is as a whole: `$X`, `${X}` or `${X<op>…}` (`${X:-}`, `${X%…}`), quoted
/// or not; not `$XY`, `${#X}` or `$X/y`.
pub(super) fn whole_var(p: &str) -> Option<&str> {
    let p = p.trim().trim_matches(['"', '\'']);
    let r = p.strip_prefix('$')?;
    let end = |t: &str| {
        t.find(|ch: char| !(ch.is_ascii_alphanumeric() || ch == '_'))
            .unwrap_or(t.len())
    };
    if let Some(b) = r.strip_prefix('{') {
        let (name, t) = b.split_at(end(b));
        let op = t == "}"
            || (t.ends_with('}')
                && t.starts_with([':', '-', '=', '+', '?', '#', '%', '/', '^', ',']));
        (!name.is_empty() && op).then_some(name)
    } else {
        (end(r) == r.len() && !r.is_empty()).then_some(r)
    }
}

/// The variables a word expands (`$X`, `${X…}`).
pub(super) fn vars_used(a: &str) -> impl Iterator<Item = &str> {
    a.match_indices('$').filter_map(move |(at, _)| {
        let r = &a[at + 1..];
        let r = r.strip_prefix('{').unwrap_or(r);
        let n = r
            .find(|ch: char| !(ch.is_ascii_alphanumeric() || ch == '_'))
            .unwrap_or(r.len());
        (n > 0).then(|| &r[..n])
    })
}
