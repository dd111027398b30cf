//! Package installs from foreign indexes, and credentials named after the vendor whose API they
//! belong to.

use super::{
    Ctx, INDEX, Place, TYPO,
    hosts::{host_of, under},
    re,
};
use regex::Regex;
use std::sync::LazyLock;

/// Credentials named after a vendor, and the domains that vendor's APIs live on.
pub(super) const VENDORS: &[(&str, &str, &[&str])] = &[
    (
        "AWS_",
        "AWS",
        &["amazonaws.com", "aws.amazon.com", "amazon.com"],
    ),
    ("ANTHROPIC_", "Anthropic", &["anthropic.com", "claude.ai"]),
    ("OPENAI_", "OpenAI", &["openai.com", "openai.azure.com"]),
    (
        "GITHUB_",
        "GitHub",
        &["github.com", "githubusercontent.com", "ghcr.io"],
    ),
    (
        "GH_",
        "GitHub",
        &["github.com", "githubusercontent.com", "ghcr.io"],
    ),
    ("NPM_", "npm", &["npmjs.org", "npmjs.com"]),
    ("SLACK_", "Slack", &["slack.com"]),
    ("STRIPE_", "Stripe", &["stripe.com"]),
    ("HF_", "Hugging Face", &["huggingface.co"]),
    ("HUGGINGFACE_", "Hugging Face", &["huggingface.co"]),
    ("DOCKER_", "Docker", &["docker.com", "docker.io"]),
    ("TELEGRAM_", "Telegram", &["telegram.org"]),
    ("DISCORD_", "Discord", &["discord.com", "discordapp.com"]),
    ("GOOGLE_", "Google", &["googleapis.com", "google.com"]),
    ("GEMINI_", "Google", &["googleapis.com", "google.com"]),
    (
        "AZURE_",
        "Azure",
        &[
            "azure.com",
            "microsoft.com",
            "windows.net",
            "microsoftonline.com",
            "azure.net",
        ],
    ),
];

/// The vendor of credential `var` when `host` is known and is not one of its domains.
pub(super) fn foreign_vendor(var: &str, host: &str) -> Option<&'static str> {
    if host.is_empty() {
        return None;
    }
    let (_, vendor, domains) = VENDORS
        .iter()
        .find(|(prefix, _, _)| var.starts_with(prefix))?;
    let own = domains.iter().any(|d| under(host, d));
    (!own).then_some(*vendor)
}

pub(super) static INDEX_FLAG: LazyLock<Regex> = LazyLock::new(|| {
    re(
        r"^(?:--extra-index-url|--index-url|-i|--registry|--trusted-host|--find-links|-f)(?:=(.*))?$",
    )
});

/// The packages a package manager's words install or run: every word of an install (`npm i a
/// b`, `pip install x`), but only the first of a runner (`npx`, `bunx`, `uvx`, `npm exec`,
/// `pnpm dlx`, `yarn dlx`, `bun x`, `pipx run`), whose other words are its program's arguments
/// (`npx -y tool@latest query "…"` runs `tool`).
fn installed<'a>(name: &str, args: &[&'a str]) -> Vec<&'a str> {
    let words: Vec<&str> = args
        .iter()
        .copied()
        .filter(|a| !a.starts_with('-'))
        .collect();
    let runner = match (name, words.first().copied()) {
        ("npx" | "bunx" | "uvx", _) => Some(args),
        ("npm", Some(sub @ ("exec" | "x")))
        | ("pnpm" | "yarn", Some(sub @ "dlx"))
        | ("bun", Some(sub @ "x"))
        | ("pipx", Some(sub @ "run")) => {
            // The runner's options may come before its subcommand (`pnpm --package=x dlx t`).
            let k = args.iter().position(|a| *a == sub).unwrap_or(0);
            return runner_packages(&[&args[..k], &args[k + 1..]].concat());
        }
        _ => None,
    };
    match runner {
        Some(args) => runner_packages(args),
        None => words
            .into_iter()
            .filter(|a| !matches!(*a, "install" | "i" | "add" | "pip"))
            .collect(),
    }
}

/// The packages a runner's words name: every `-p`/`--package` (npm, pnpm, bun), `--from` and
/// `--with` (uvx), `--spec` (pipx) value, else the first word that is no option's value.
fn runner_packages<'a>(args: &[&'a str]) -> Vec<&'a str> {
    const PACKAGE: &[&str] = &["-p", "--package", "--from", "--with", "--spec"];
    // The runners' other options that take the next word (npm's config options among them).
    const VALUED: &[&str] = &[
        "-c",
        "--call",
        "-w",
        "--workspace",
        "--cache",
        "--userconfig",
        "--globalconfig",
        "--registry",
        "--prefix",
        "--node-options",
        "--python",
        "--index-url",
        "--pip-args",
    ];
    // Options known to take no value; after any other, the word that follows may be its value
    // (`--loglevel error`), so the word after that is a candidate too.
    const FLAGS: &[&str] = &[
        "-y",
        "--yes",
        "--no",
        "-q",
        "--quiet",
        "-s",
        "--silent",
        "--ignore-existing",
        "--no-install",
        "--prefer-offline",
        "--prefer-online",
        "--offline",
        "--isolated",
        "--refresh",
    ];
    let mut packages = Vec::new();
    let mut first = None;
    let mut unknown = false;
    let mut it = args.iter().copied();
    while let Some(a) = it.next() {
        if a == "--" {
            first = first.or_else(|| it.next());
            break;
        }
        let (option, inline) = match a.split_once('=') {
            Some((o, v)) if a.starts_with("--") => (o, Some(v)),
            _ => (a, None),
        };
        if PACKAGE.contains(&option) {
            packages.extend(inline.or_else(|| it.next()));
        } else if VALUED.contains(&option) {
            if inline.is_none() {
                it.next();
            }
        } else if a.starts_with('-') {
            unknown |= inline.is_none() && !FLAGS.contains(&a);
        } else if first.is_none() {
            first = Some(a);
            if unknown {
                // `error` of `--loglevel error`, or the package: both are read.
                packages.extend(it.find(|w| !w.starts_with('-')));
            }
        }
    }
    if packages.is_empty() || first.is_some_and(|_| unknown) {
        packages.extend(first);
    }
    packages
}

pub(super) fn package_install(
    ctx: &mut Ctx<'_>,
    name: &str,
    args: &[&str],
    line: u32,
    snippet: &str,
    place: Place<'_>,
) {
    static INTERNAL_SOURCE: LazyLock<Regex> = LazyLock::new(|| {
        re(
            r"(?i)\b(?:internal|private|corporate|company)\s+(?:registry|index|package\s+(?:registry|repository|feed)|npm\s+registry|pypi|artifactory|feed)\b",
        )
    });
    static INTERNAL_NAME: LazyLock<Regex> = LazyLock::new(|| {
        re(
            r"(?i)^@[^/]*(?:internal|corp|private|intra)[^/]*/|(?:^|[-_@/])(?:internal|private|intra)(?:[-_]|$)|^(?:my)?corp[-_]",
        )
    });
    let pip = matches!(name, "pip" | "pip3" | "uv" | "pipx" | "poetry")
        || (name.starts_with("python") && args.contains(&"pip"));
    let pip = pip || name == "uvx";
    let npm = matches!(name, "npm" | "yarn" | "pnpm" | "bun" | "npx" | "bunx");
    let runner = matches!(name, "npx" | "bunx" | "uvx");
    if !(pip || npm)
        || !runner
            && !args.iter().any(|a| {
                matches!(*a, "install" | "i" | "add" | "-y" | "--yes")
                    || npm && matches!(*a, "dlx" | "exec" | "x")
                    || name == "pipx" && *a == "run"
            })
    {
        return;
    }
    let mut it = args.iter();
    while let Some(a) = it.next() {
        if let Some(cap) = INDEX_FLAG.captures(a) {
            let value = cap
                .get(1)
                .map(|m| m.as_str().to_owned())
                .or_else(|| it.next().map(|s| (*s).to_owned()));
            let Some(value) = value else { continue };
            let host = host_of("", &[value.as_str()]);
            let public = [
                "pypi.org",
                "pythonhosted.org",
                "registry.npmjs.org",
                "npmjs.org",
                "download.pytorch.org",
                "registry.yarnpkg.com",
                "pypi.nvidia.com",
                "data.pyg.org",
            ]
            .iter()
            .any(|h| under(&host.name, h));
            if !public
                && (a.starts_with("--extra")
                    || a.starts_with("--registry")
                    || a.starts_with("--trusted"))
            {
                ctx.emit(
                    INDEX,
                    0.7,
                    line,
                    snippet,
                    format!("installs packages from `{value}` besides the public index: a name there shadows the public one"),
                    Vec::new(),
                    place,
                    0,
                );
            }
        }
    }
    // Dependency confusion the other way round: a package the skill calls internal, installed
    // without naming the internal index — the public registry answers, and anyone can publish
    // that name there.
    let index_given = args.iter().any(|a| INDEX_FLAG.is_match(a));
    let says_internal = ctx
        .pkg
        .files
        .first()
        .is_some_and(|f| INTERNAL_SOURCE.is_match(&f.text));
    if !index_given
        && let Some(a) = args.iter().find(|a| {
            !a.starts_with('-')
                && !matches!(**a, "install" | "i" | "add" | "pip" | "exec" | "dlx" | "x")
                && (INTERNAL_NAME.is_match(a) || says_internal)
        })
    {
        ctx.emit(
            INDEX,
            0.7,
            line,
            snippet,
            format!(
                "installs the internal package `{a}` without naming the internal index: the public registry answers, where anyone can publish that name (dependency confusion)"
            ),
            if says_internal {
                vec!["raised: the skill says the package comes from an internal registry".into()]
            } else {
                Vec::new()
            },
            place,
            0,
        );
    }
    for a in installed(name, args) {
        let pkg = a
            .split(['=', '<', '>', '[', '@', '~'])
            .next()
            .unwrap_or(a)
            .to_ascii_lowercase();
        if let Some(near) = ctx.names.near(&pkg) {
            ctx.emit(
                TYPO,
                0.8,
                line,
                snippet,
                format!("installs `{pkg}`, one edit away from the popular `{near}`"),
                vec!["raised: the misspelt name is installed, not only shown".into()],
                place,
                1,
            );
        }
    }
}
