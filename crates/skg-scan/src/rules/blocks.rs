//! A markdown file's segments sent to the rules that read them: prose, code blocks by their
//! language, inline code, HTML comments.

use super::{
    Ctx, INJ_HIDDEN, Place,
    blobs::blob_rule,
    code::code_rules,
    commands::{DOWNLOADERS, SENDERS, SHELLS, WRAPPERS, effective_words},
    hosts::base_name,
    instructions::instruction_rules,
    interpreters::interpreter_name,
    re,
    scripts::{powershell_rules, script_rules},
    shell::shell_rules,
};
use crate::markdown::{Kind, Segment};
use regex::Regex;
use skg_model::FileKind;
use skg_syntax::Language;
use std::sync::LazyLock;

pub(super) fn markdown_rules(ctx: &mut Ctx<'_>, segs: Vec<Segment>) {
    for seg in segs {
        match &seg.kind {
            Kind::Frontmatter => {
                if let Some(d) = ctx.pkg.description.clone().filter(|_| ctx.is_main()) {
                    instruction_rules(
                        ctx,
                        &d,
                        1,
                        Place::Markdown {
                            section: "",
                            outer: "",
                            titled: false,
                            table: false,
                        },
                    );
                }
                blob_rule(ctx, &seg.text, 1, Place::Script);
            }
            Kind::Prose | Kind::Heading => {
                instruction_rules(
                    ctx,
                    &seg.text,
                    seg.line,
                    Place::Markdown {
                        section: &seg.section,
                        outer: &seg.outer,
                        titled: seg.titled,
                        table: seg.table,
                    },
                );
                blob_rule(
                    ctx,
                    &seg.text,
                    seg.line,
                    Place::Markdown {
                        section: &seg.section,
                        outer: &seg.outer,
                        titled: seg.titled,
                        table: seg.table,
                    },
                );
            }
            Kind::Comment | Kind::Definition => comment_rules(ctx, &seg),
            Kind::InlineCode => {
                let place = Place::Markdown {
                    section: &seg.section,
                    outer: &seg.outer,
                    titled: seg.titled,
                    table: seg.table,
                };
                shell_rules(ctx, &seg.text, seg.line, place);
            }
            Kind::Code(lang) => code_block(ctx, lang, &seg),
        }
    }
}

/// How a package file's text is read: by the kind its name says ([`FileKind::of`]), else, for a
/// name that says nothing (`scripts/install`), by the interpreter its `#!` line names — a shell
/// runs `#!/usr/bin/env bash` whatever the file is called. Perl, Ruby and PHP (by name or `#!`)
/// are read lexically ([`script_rules`]): no grammar of theirs is compiled in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Reading {
    Kind(FileKind),
    Lexical(Script),
}

/// A language [`script_rules`] reads lexically: its comments differ.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Script {
    Perl,
    Ruby,
    Php,
}

impl Reading {
    pub(super) fn of(path: &str, text: &str) -> Reading {
        let kind = FileKind::of(path);
        let ext = path
            .rsplit('/')
            .next()
            .and_then(|n| n.rsplit_once('.'))
            .map(|(_, e)| e.to_ascii_lowercase());
        match kind {
            FileKind::OtherScript => match ext.as_deref() {
                Some("rb") => Reading::Lexical(Script::Ruby),
                Some("php") => Reading::Lexical(Script::Php),
                Some("pl" | "pm") => Reading::Lexical(Script::Perl),
                _ => Reading::Kind(kind),
            },
            FileKind::Other => shebang(text).map_or(Reading::Kind(kind), |i| {
                Reading::of_interpreter(&i).unwrap_or(Reading::Kind(kind))
            }),
            _ => Reading::Kind(kind),
        }
    }

    /// The reading of a program an interpreter runs, by the name it is known by
    /// ([`interpreter_name`]: `python3.12`, `php8.2`, `perl5.36` as `python`, `php`, `perl`): one
    /// table for a script's `#!` line and for the program [`program_rules`] is given. (Which
    /// words of a command are its program is [`interpreter_run`]'s, by the same name.)
    /// `eval`'s and `source`'s is a shell's; ssh's remote command is its own runner's
    /// ([`Remote::runner`]).
    pub(super) fn of_interpreter(name: &str) -> Option<Reading> {
        Some(match interpreter_name(name) {
            b if SHELLS.contains(&b) => Reading::Kind(FileKind::Shell),
            "busybox" | "source" | "." | "eval" => Reading::Kind(FileKind::Shell),
            "python" => Reading::Kind(FileKind::Python),
            "node" | "deno" | "bun" => Reading::Kind(FileKind::JavaScript),
            "pwsh" | "powershell" => Reading::Kind(FileKind::PowerShell),
            "perl" => Reading::Lexical(Script::Perl),
            "ruby" => Reading::Lexical(Script::Ruby),
            "php" => Reading::Lexical(Script::Php),
            _ => return None,
        })
    }
}

/// The interpreter a `#!` first line names (its base name), read as a command is
/// ([`effective_words`]): through `env` (its options and assignments, `-S`: `#!/usr/bin/env -S
/// bash -e` names `bash`) and the other wrappers.
pub(super) fn shebang(text: &str) -> Option<String> {
    let line = text.strip_prefix("#!")?.lines().next()?;
    let mut words = line.split_whitespace();
    let first = base_name(words.next()?);
    Some(effective_words(first, words.collect()).0)
}

pub(super) fn code_block(ctx: &mut Ctx<'_>, lang: &str, seg: &Segment) {
    let place = Place::Markdown {
        section: &seg.section,
        outer: &seg.outer,
        titled: seg.titled,
        table: seg.table,
    };
    match lang {
        // Code blocks are often mislabelled (a shell line in a `python` block): commands are
        // read as shell too (the shell rules fire only on specific commands).
        "python" | "py" | "python3" | "ipython" => {
            code_rules(ctx, Language::Python, &seg.text, seg.line, place);
            shell_rules(ctx, &shell_lines(&seg.text), seg.line, place);
        }
        "js" | "javascript" | "node" | "mjs" | "jsx" => {
            code_rules(ctx, Language::JavaScript, &seg.text, seg.line, place);
            shell_rules(ctx, &shell_lines(&seg.text), seg.line, place);
        }
        "ts" | "typescript" | "tsx" => {
            code_rules(ctx, Language::TypeScript, &seg.text, seg.line, place);
            shell_rules(ctx, &shell_lines(&seg.text), seg.line, place);
        }
        "powershell" | "ps1" | "pwsh" | "ps" => {
            powershell_rules(ctx, &seg.text, seg.line, place);
        }
        "ruby" | "rb" | "php" => {
            let script = if lang == "php" {
                Script::Php
            } else {
                Script::Ruby
            };
            script_rules(ctx, script, &seg.text, seg.line, place);
            shell_rules(ctx, &shell_lines(&seg.text), seg.line, place);
            blob_rule(ctx, &seg.text, seg.line, place);
        }
        // Perl blocks are read as a block without a language is too (one-liners are written in
        // a shell's and in PowerShell's lines).
        "perl" | "pl" => {
            script_rules(ctx, Script::Perl, &seg.text, seg.line, place);
            shell_rules(ctx, &strip_prompts(&seg.text), seg.line, place);
            powershell_rules(ctx, &seg.text, seg.line, place);
            blob_rule(ctx, &seg.text, seg.line, place);
        }
        "json" | "jsonc" | "json5" | "yaml" | "yml" | "toml" | "xml" | "html" | "css" | "sql"
        | "csv" | "diff" | "go" | "rust" | "rs" | "java" | "kotlin" | "swift" | "c" | "cpp"
        | "csharp" | "cs" | "mermaid" | "markdown" | "md" | "hcl" | "terraform" | "tf" | "ini"
        | "conf" | "nginx" | "properties" | "text" | "txt" | "plaintext" | "output" | "log"
        | "graphql" | "proto" | "dot" | "latex" | "tex" | "r" | "scala" | "lua" | "elixir"
        | "haskell" => {
            blob_rule(ctx, &seg.text, seg.line, place);
        }
        // Shell, consoles, and blocks without a language: read as shell (rules fire only on
        // specific commands, so prose read as shell finds nothing).
        _ => {
            let code = strip_prompts(&seg.text);
            shell_rules(ctx, &code, seg.line, place);
            powershell_rules(ctx, &seg.text, seg.line, place);
            blob_rule(ctx, &seg.text, seg.line, place);
        }
    }
}

/// The lines of a code block in another language that are shell commands (start with a
/// command the rules know), the others blanked (line count kept).
pub(super) fn shell_lines(code: &str) -> String {
    strip_prompts(code)
        .lines()
        .map(|l| {
            let first = l
                .split_whitespace()
                .next()
                .map(base_name)
                .unwrap_or_default();
            let known = DOWNLOADERS.contains(&first.as_str())
                || SENDERS.contains(&first.as_str())
                || WRAPPERS.contains(&first.as_str())
                || matches!(
                    first.as_str(),
                    "bash"
                        | "sh"
                        | "zsh"
                        | "chmod"
                        | "echo"
                        | "rm"
                        | "crontab"
                        | "base64"
                        | "dig"
                        | "nslookup"
                        | "pip"
                        | "pip3"
                        | "npm"
                        | "npx"
                        | "xmrig"
                        | "setenforce"
                );
            if known { l } else { "" }
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// `$ cmd` console lines without their prompt (line count kept).
pub(super) fn strip_prompts(code: &str) -> String {
    code.lines()
        .map(|l| {
            let t = l.trim_start();
            t.strip_prefix("$ ")
                .or_else(|| t.strip_prefix("% "))
                .or_else(|| t.strip_prefix("> "))
                .unwrap_or(l)
        })
        .collect::<Vec<_>>()
        .join("\n")
}

pub(super) fn comment_rules(ctx: &mut Ctx<'_>, seg: &Segment) {
    static ADDRESSED: LazyLock<Regex> = LazyLock::new(|| {
        re(
            r"(?i)\b(assistant|agent|ai|claude|model|llm|you)\b[^.\n]{0,40}\b(must|should|shall|always|never|need to|are required to)\b[^.\n]{0,60}\b(run|execute|send|read|fetch|download|open|install|call|forward|upload|ignore|include)\b",
        )
    });
    let how = if seg.kind == Kind::Definition {
        "a link reference definition"
    } else {
        "an HTML comment"
    };
    // Sentences run over the comment's lines (read as a paragraph's, at the line of its first
    // word); commands and blobs are read line by line, where they stand.
    let leading = seg.text.len() - seg.text.trim_start().len();
    let first = seg.line + u32::try_from(seg.text[..leading].matches('\n').count()).unwrap_or(0);
    let joined = seg.text.split_whitespace().collect::<Vec<_>>().join(" ");
    let before = ctx.out.len();
    instruction_rules(ctx, &joined, first, Place::Hidden(how));
    shell_rules(ctx, &seg.text, seg.line, Place::Hidden(how));
    blob_rule(ctx, &seg.text, seg.line, Place::Hidden(how));
    if ctx.out.len() == before
        && let Some(m) = ADDRESSED.find(&joined)
    {
        ctx.emit(
            INJ_HIDDEN,
            0.6,
            first,
            m.as_str(),
            format!(
                "{how} tells the agent what to do; a reader of the rendered skill never sees it"
            ),
            Vec::new(),
            Place::Markdown {
                section: &seg.section,
                outer: &seg.outer,
                titled: seg.titled,
                table: seg.table,
            },
            0,
        );
    }
}
