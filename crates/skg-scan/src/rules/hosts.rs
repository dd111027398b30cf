//! Where a download comes from: its host, the host's kind, who publishes it, and whether it is an
//! installation step.

use super::{Ctx, Note, Place, Purpose, re, tools::words, unicode::authority_host};
use regex::Regex;
use std::sync::LazyLock;

pub(super) fn base_name(s: &str) -> String {
    s.rsplit(['/', '\\'])
        .next()
        .unwrap_or(s)
        .trim_end_matches(".exe")
        .to_ascii_lowercase()
}

/// An address's scheme and authority (`user:password@host:port`); its path is read after it.
pub(super) static URL: LazyLock<Regex> =
    LazyLock::new(|| re(r#"(?i)\b(?:https?|ftp)://([^/\s'"`$?#()\\|;&,<>{}]+)"#));
/// A host written as an address: dotted IPv4, IPv6 in brackets, or IPv4 as one decimal or hex
/// number (`http://3232235777/`).
pub(super) static IP_HOST: LazyLock<Regex> =
    LazyLock::new(|| re(r"^(?:\d{1,3}(?:\.\d{1,3}){3}|\[[0-9a-f:.]+\]|\d{8,10}|0x[0-9a-f]{1,8})$"));

/// Hosts whose install scripts are the documented way to install common tools.
pub(super) const KNOWN_INSTALLERS: &[&str] = &[
    "sh.rustup.rs",
    "rustup.rs",
    "get.docker.com",
    // GitHub's and GitLab's own installer hosts; the forges themselves are shared
    // ([`SHARED_HOSTS`]) and judged by publisher.
    "packages.gitlab.com",
    "astral.sh",
    "bun.sh",
    "deno.land",
    "deno.com",
    "brew.sh",
    "nodejs.org",
    "deb.nodesource.com",
    "rpm.nodesource.com",
    "get.pnpm.io",
    "install.python-poetry.org",
    "pyenv.run",
    "ollama.com",
    "cli.github.com",
    "get.helm.sh",
    "starship.rs",
    "fly.io",
    "sdk.cloud.google.com",
    "awscli.amazonaws.com",
    "aka.ms",
    "dot.net",
    "claude.ai",
    "anthropic.com",
    "go.dev",
    "golang.org",
    "nixos.org",
    "install.determinate.systems",
    "get.sdkman.io",
    "volta.sh",
    "foundry.paradigm.xyz",
    "get.k3s.io",
    "dl.k8s.io",
    "mise.run",
    "mise.jdx.dev",
    "opencode.ai",
    "cursor.com",
    "sh.vector.dev",
    "tailscale.com",
    "pkgx.sh",
    "get.rvm.io",
    "vercel.com",
    "supabase.com",
    "railway.app",
    "railway.com",
    "stripe.com",
    "cloudflare.com",
    "hashicorp.com",
    "releases.hashicorp.com",
    "apt.llvm.org",
    "docs.astral.sh",
    "get.jenkins.io",
    "zed.dev",
    "openclaw.ai",
    "codex.openai.com",
    "openai.com",
];
/// Hosts and patterns an attacker uses and an installer does not.
pub(super) const SHADY_HOSTS: &[&str] = &[
    "pastebin.com",
    "paste.ee",
    "hastebin.com",
    "glot.io",
    "transfer.sh",
    "termbin.com",
    "ix.io",
    "0x0.st",
    "bit.ly",
    "tinyurl.com",
    "is.gd",
    "t.co",
    "ngrok.io",
    "ngrok-free.app",
    "ngrok.app",
    "trycloudflare.com",
    "serveo.net",
    "localhost.run",
    "duckdns.org",
    "no-ip.com",
    "ddns.net",
    "webhook.site",
    "requestbin.net",
    "pipedream.net",
    "interact.sh",
    "oast.fun",
    "oast.me",
    "burpcollaborator.net",
    "rentry.co",
    "pastes.dev",
    "anonfiles.com",
    "file.io",
    "temp.sh",
];

/// Hosts that serve anyone's files: who published a file there is the first part of its path
/// (`raw.githubusercontent.com/<owner>/<repo>/…`, `cdn.jsdelivr.net/gh/<owner>/<repo>@v/…`), not
/// the host. A download from one is judged by its publisher ([`publisher`]), never by the host.
pub(super) const SHARED_HOSTS: &[&str] = &[
    "raw.githubusercontent.com",
    "github.com",
    "raw.github.com",
    "codeload.github.com",
    "api.github.com",
    "objects.githubusercontent.com",
    "gist.githubusercontent.com",
    "gist.github.com",
    "gitlab.com",
    "bitbucket.org",
    "codeberg.org",
    "cdn.jsdelivr.net",
    "unpkg.com",
];

/// GitHub repositories (`owner/repo`, compared case-insensitively) whose install scripts are the
/// documented way to install common tools. Known on GitHub's own hosts (and jsDelivr's `/gh/`
/// mirror of them) only: on another forge or in an npm scope anyone may take the same names.
pub(super) const KNOWN_REPOSITORIES: &[&str] = &[
    "homebrew/install",
    "nvm-sh/nvm",
    "creationix/nvm",
    "ohmyzsh/ohmyzsh",
    "robbyrussell/oh-my-zsh",
    "pyenv/pyenv-installer",
    "helm/helm",
    "rust-lang/rustup",
    "astral-sh/uv",
    "astral-sh/ruff",
    "oven-sh/bun",
    "denoland/deno_install",
    "schniz/fnm",
    "cli/cli",
    "aquasecurity/trivy",
    "anchore/syft",
    "anchore/grype",
    "golangci/golangci-lint",
    "nektos/act",
    "python-poetry/install.python-poetry.org",
    "sdkman/sdkman-cli",
    "jdx/mise",
    "starship/starship",
    "tailscale/tailscale",
    "ollama/ollama",
];

/// Words too common in what a skill says about itself to name a publisher: a repository called
/// `skills` or `setup` is named by nearly every skill.
pub(super) const GENERIC_NAMES: &[&str] = &[
    "skill",
    "skills",
    "tool",
    "tools",
    "use",
    "the",
    "api",
    "apis",
    "docs",
    "doc",
    "cli",
    "app",
    "apps",
    "bin",
    "main",
    "master",
    "install",
    "installer",
    "setup",
    "script",
    "scripts",
    "config",
    "dotfiles",
    "github",
    "gitlab",
    "agent",
    "agents",
    "claude",
    "plugin",
    "plugins",
    "mcp",
    "server",
    "code",
    "dev",
    "test",
    "demo",
    "example",
    "examples",
    "release",
    "releases",
];

#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, PartialOrd, Ord)]
pub(super) enum HostKind {
    // Ordered by what a command's addresses say together: one unknown or shady address is
    // enough, a known host does not vouch for another address beside it.
    #[default]
    None,
    Known,
    Unknown,
    Shady,
}

/// Where a command downloads from: the host's kind and name, the address as written (scheme,
/// host and path, without query), and on a shared host the publisher (`owner`, `repo`; empty when
/// the path does not say, or says it ambiguously).
#[derive(Debug, Clone, Default)]
pub(super) struct Host {
    pub(super) kind: HostKind,
    pub(super) name: String,
    pub(super) url: String,
    /// Served by a host that serves anyone's files, for this path.
    pub(super) shared: bool,
    pub(super) owner: String,
    pub(super) repo: String,
    /// Every host an argument of the command is the address of, in order (`name` is the one
    /// its kind chose, from any address).
    pub(super) all: Vec<String>,
    /// The first of those addresses fetched over plain HTTP or FTP (a scheme-less one is, by
    /// curl's and wget's default), as written.
    pub(super) plain: Option<String>,
}

impl Host {
    /// The host as a finding shows it: on a shared host with its publisher.
    pub(super) fn shown(&self) -> String {
        match (self.owner.is_empty(), self.repo.is_empty()) {
            (true, _) => self.name.clone(),
            (false, true) => format!("{}/{}", self.name, self.owner),
            (false, false) => format!("{}/{}/{}", self.name, self.owner, self.repo),
        }
    }
}

/// An option of `tool` (curl, wget, PowerShell's web cmdlets; any other: options all of them
/// read alike) whose value is never the address a download fetches: a proxy, a referer, a
/// header, a file read or written, credentials, data sent.
pub(super) fn not_fetched(tool: &str, option: &str) -> bool {
    const LONG: &[&str] = &[
        "--proxy",
        "--preproxy",
        "--referer",
        "--header",
        "--output",
        "--output-document",
        "--output-dir",
        "--data",
        "--data-raw",
        "--data-binary",
        "--data-urlencode",
        "--data-ascii",
        "--form",
        "--upload-file",
        "--cookie",
        "--cookie-jar",
        "--dump-header",
        "--config",
        "--cacert",
        "--capath",
        "--cert",
        "--key",
        "--user",
        "--user-agent",
        "--resolve",
        "--connect-to",
        "--proto-default",
        "--write-out",
        "--post-data",
        "--post-file",
        "--header-file",
        "--load-cookies",
        "--save-cookies",
        "--ca-certificate",
        "--certificate",
        "--private-key",
        "--http-user",
        "--http-password",
        "--append-output",
        "--output-file",
        "--directory-prefix",
    ];
    // Short options mean different things to curl and wget (`-c`: curl's cookie jar, wget's
    // "continue").
    const CURL: &[&str] = &[
        "-x", "-e", "-H", "-o", "-d", "-F", "-T", "-b", "-c", "-D", "-K", "-E", "-u", "-A", "-w",
    ];
    const WGET: &[&str] = &["-o", "-O", "-a", "-e", "-D", "-T", "-A", "-w", "-P", "-U"];
    const BOTH: &[&str] = &["-o", "-e", "-D", "-T", "-A", "-w"];
    const POWERSHELL: &[&str] = &[
        "-outfile",
        "-infile",
        "-proxy",
        "-headers",
        "-useragent",
        "-certificate",
        "-body",
        "-credential",
        "-proxycredential",
        "-certificatethumbprint",
        "-sessionvariable",
        "-websession",
    ];
    let short = match base_name(tool).to_ascii_lowercase().as_str() {
        "curl" => CURL,
        "wget" => WGET,
        _ => BOTH,
    };
    LONG.contains(&option)
        || short.contains(&option)
        || POWERSHELL.contains(&option.to_ascii_lowercase().as_str())
}

/// The first address `text` fetches over plain HTTP or FTP, read as words (a PowerShell line, a
/// command inside `$( )`), not an option's value nor `localhost`.
pub(super) fn first_plain(text: &str) -> Option<String> {
    let words: Vec<&str> = text.split_whitespace().collect();
    words.iter().enumerate().find_map(|(i, w)| {
        let w = w.trim_start_matches(['$', '(', '<', '\'', '"', '`']);
        let lower = w.to_ascii_lowercase();
        let plain = lower.starts_with("http://") || lower.starts_with("ftp://");
        let value = i.checked_sub(1).is_some_and(|p| not_fetched("", words[p]));
        let host = lower
            .split("://")
            .nth(1)
            .unwrap_or("")
            .split(['/', ':'])
            .next();
        (plain && !value && !host.is_some_and(|h| under(h, "localhost"))).then(|| {
            w.trim_end_matches([')', '\'', '"', '`', ';', '|'])
                .to_owned()
        })
    })
}

/// Who published the file at `path` on a shared host: `(owner, repo, on GitHub)`. `None` when the
/// host is not shared for this path. The path is read as written: `/<owner>/<repo>/…`; on
/// jsDelivr `/gh/<owner>/<repo>@v/…` and `/npm/[@scope/]<package>@v/…` (the scope is the owner,
/// an unscoped package its own owner with no repository); on unpkg `/[@scope/]<package>@v/…`;
/// on GitHub's API `/repos/<owner>/<repo>/…`; on GitLab the project before `/-/`
/// (`/group/sub/project/-/raw/…`); on deno.land `/x/<module>@v/…` (its other paths are Deno's
/// own).
pub(super) fn publisher(host: &str, path: &str) -> Option<(String, String, bool)> {
    let parts: Vec<&str> = path.split('/').filter(|p| !p.is_empty()).collect();
    let at = |i: usize| {
        parts
            .get(i)
            .map(|p| p.split('@').next().unwrap_or("").to_owned())
            .unwrap_or_default()
    };
    // A package name, scoped or not, starting at part `i`.
    let package = |i: usize| match parts.get(i).and_then(|p| p.strip_prefix('@')) {
        Some(scope) => (scope.to_owned(), at(i + 1)),
        None => (at(i), String::new()),
    };
    let github = matches!(
        host,
        "raw.githubusercontent.com" | "github.com" | "raw.github.com" | "codeload.github.com"
    );
    if host == "deno.land" {
        return (parts.first() == Some(&"x")).then(|| (at(1), String::new(), false));
    }
    if !SHARED_HOSTS.contains(&host) {
        return None;
    }
    let (owner, repo, github) = match (host, parts.first().copied()) {
        ("api.github.com", Some("repos")) | ("cdn.jsdelivr.net", Some("gh")) => {
            (at(1), at(2), true)
        }
        ("cdn.jsdelivr.net", Some("npm")) => {
            let (o, r) = package(1);
            (o, r, false)
        }
        ("unpkg.com", _) => {
            let (o, r) = package(0);
            (o, r, false)
        }
        ("api.github.com" | "cdn.jsdelivr.net", _) => (String::new(), String::new(), false),
        ("gitlab.com", _) => {
            let end = parts
                .iter()
                .position(|p| *p == "-")
                .unwrap_or(parts.len().min(2));
            let project = end.checked_sub(1).map(&at).unwrap_or_default();
            (at(0), if end >= 2 { project } else { String::new() }, false)
        }
        _ => (at(0), at(1), github),
    };
    Some((owner, repo, github))
}

/// A path (and query) that does not say plainly which file is fetched: dot segments
/// (`/Homebrew/install/../../evil/…` is fetched as `/evil/…`), encoded dots, slashes or
/// backslashes, a template (`{0}`), or a pinned commit — a commit of any fork is served under the
/// upstream repository's name (`/<sha>/`, `archive/<sha>.tar.gz`, `?ref=<sha>`, a pull request).
pub(super) fn ambiguous_path(path: &str, query: &str) -> bool {
    let lower = path.to_ascii_lowercase();
    let query = query.to_ascii_lowercase();
    let hex = |p: &str| {
        p.len() >= 7
            && p.len() <= 40
            && p.bytes().all(|b| b.is_ascii_hexdigit())
            && p.bytes().any(|b| b.is_ascii_digit())
    };
    lower.contains(['\\', '{', '}'])
        || ["%2e", "%2f", "%5c"].iter().any(|e| lower.contains(e))
        || query.contains("ref=")
        || query.contains("sha=")
        || lower.split('/').any(|p| {
            let stem = p.split('.').next().unwrap_or(p);
            p == "."
                || p == ".."
                || p == "pull"
                || hex(stem)
                || p.split_once('@').is_some_and(|(_, v)| hex(v))
        })
}

/// `host` is `domain` or one of its subdomains (`api.openai.com` under `openai.com`; not
/// `notopenai.com`).
pub(super) fn under(host: &str, domain: &str) -> bool {
    host.strip_suffix(domain)
        .is_some_and(|rest| rest.is_empty() || rest.ends_with('.'))
}

/// A subdomain of a known installer host counts only when it is registered by the same owner
/// (the Public Suffix List: `evil.up.railway.app` is a tenant's, not Railway's).
pub(super) fn known_installer(host: &str) -> bool {
    KNOWN_INSTALLERS.iter().any(|h| {
        // The host itself, whatever the list knows of it; a subdomain only with its owner.
        host == *h
            || (under(host, h)
                && psl::domain_str(host).is_some_and(|d| psl::domain_str(h) == Some(d)))
    })
}

pub(super) fn host_of(tool: &str, args: &[&str]) -> Host {
    // A host (any case, with a port) or a dotted IPv4 address, then a path or nothing.
    static BARE: LazyLock<Regex> = LazyLock::new(|| {
        re(r"(?i)^(?:(?:[a-z0-9-]+\.)+[a-z]{2,}|(?:\d{1,3}\.){3}\d{1,3})(?::\d+)?(?:/|$)")
    });
    /// A PowerShell operator that builds a string from the quoted one before it.
    static BUILDS: LazyLock<Regex> =
        LazyLock::new(|| re(r"(?i)^(?:\+|\.|-(?:f|replace|join|split|creplace|ireplace)\b)"));
    // An option's value that is never the address fetched: a proxy, a referer, a header, a file
    // read or written, credentials, data sent (`-x http://proxy:3128 https://sh.rustup.rs` is
    // fetched from rustup over TLS).
    let value = |i: usize| i.checked_sub(1).is_some_and(|p| not_fetched(tool, args[p]));
    let targets = || {
        args.iter()
            .enumerate()
            .filter(move |(i, _)| !value(*i))
            .map(|(_, a)| *a)
    };
    // A host written without a scheme (`curl get.example.com/i.sh`) only when no address
    // argument has a scheme, and never the file an option names (`-o get-docker.sh` is a file,
    // not a host; for wget `-O` takes one too).
    let bare: Vec<String> = if targets().any(|a| URL.is_match(a)) {
        Vec::new()
    } else {
        args.iter()
            .enumerate()
            .filter(|(i, a)| !value(*i) && !a.contains("://") && BARE.is_match(a))
            .map(|(_, a)| format!("https://{a}"))
            .collect()
    };
    let mut found = Host::default();
    // An address without a scheme is fetched over TLS by HTTPie's `https` and by curl told
    // `--proto-default https`; otherwise over plain HTTP (curl's and wget's default).
    let tls_default = base_name(tool) == "https"
        || args
            .windows(2)
            .any(|w| w[0] == "--proto-default" && w[1].eq_ignore_ascii_case("https"))
        || args
            .iter()
            .any(|a| a.eq_ignore_ascii_case("--proto-default=https"));
    // (argument, written without a scheme, an option's value).
    let all: Vec<(&str, bool, bool)> = args
        .iter()
        .enumerate()
        .map(|(i, a)| (*a, false, value(i)))
        .chain(bare.iter().map(|a| (a.as_str(), true, false)))
        .collect();
    for &(a, schemeless, option_value) in &all {
        // The authority is matched and the path read after it, so an address inside a path
        // (`web.archive.org/web/2024/https://pastebin.com/…`) is found as an address too.
        for m in URL.captures_iter(a) {
            let (Some(whole), Some(authority)) = (m.get(0), m.get(1)) else {
                continue;
            };
            let host = authority_host(authority.as_str())
                .trim_end_matches('.')
                .to_ascii_lowercase();
            let bare_host = host.strip_prefix("www.").unwrap_or(&host).to_owned();
            let stop = |c: char| c.is_whitespace() || "'\"`$?#()|;&<>,".contains(c);
            let rest = &a[whole.end()..];
            let path_end = rest.find(stop).unwrap_or(rest.len());
            let path = &rest[..path_end];
            let mut after = &rest[path_end..];
            let mut query = "";
            if let Some(q) = after.strip_prefix('?') {
                let end = q.find(|c: char| stop(c) && c != '?').unwrap_or(q.len());
                query = &q[..end];
                after = &q[end..];
            }
            // What ends the address: the argument's end, a space, a fragment, a closing
            // parenthesis or a command separator, or a quote that closes it and is not built
            // on (`'…/'+'../x'`, `'…{0}' -f 'x'`). Anything else (`$P`) continues it with text
            // this reading does not see.
            let ends_plainly = match after.chars().next() {
                None => true,
                Some(c) if c.is_whitespace() || "#);|&".contains(c) => true,
                Some('\'' | '"' | '`') => !BUILDS.is_match(after[1..].trim_start()),
                Some(_) => false,
            };
            let lower = whole.as_str().to_ascii_lowercase();
            let plain_http = (schemeless && !tls_default)
                || lower.starts_with("http://")
                || lower.starts_with("ftp://");
            let publisher = publisher(&bare_host, path);
            let (owner, repo, on_github) = publisher.clone().unwrap_or_default();
            let ends = |list: &[&str]| list.iter().any(|h| under(&host, h));
            // A known host only when the host is settled (`https://get.docker.com$S/…` and
            // `…docker.com\@evil/…` may go on), a known repository only when the address also
            // says plainly which file is fetched. Naming (the skill's own tool) reads the
            // publisher as written: the skill's author chose both.
            let host_settled = ends_plainly || path.starts_with('/');
            let kind = if IP_HOST.is_match(&host)
                || ends(SHADY_HOSTS)
                || std::path::Path::new(&host)
                    .extension()
                    .is_some_and(|e| e.eq_ignore_ascii_case("onion"))
            {
                HostKind::Shady
            } else if plain_http || !host_settled {
                HostKind::Unknown
            } else if publisher.is_some() {
                let named = format!("{owner}/{repo}").to_ascii_lowercase();
                if on_github
                    && ends_plainly
                    && !ambiguous_path(path, query)
                    && KNOWN_REPOSITORIES.contains(&named.as_str())
                {
                    HostKind::Known
                } else {
                    HostKind::Unknown
                }
            } else if known_installer(&bare_host) {
                HostKind::Known
            } else {
                HostKind::Unknown
            };
            // A target is an argument that is an address, not one inside a value
            // (`-d '{"url": "https://your-server.com/hook"}'` sends to the target only).
            if whole.start() == 0 && !option_value {
                if !found.all.contains(&host) {
                    found.all.push(host.clone());
                }
                // Loopback is not on a network path (`localhost`; a loopback IP is a raw IP).
                if plain_http && !under(&host, "localhost") && found.plain.is_none() {
                    found.plain = Some(if schemeless {
                        format!("{host}{path}")
                    } else {
                        format!("{}{path}", whole.as_str())
                    });
                }
            }
            if kind > found.kind {
                found = Host {
                    kind,
                    name: if publisher.is_some() { bare_host } else { host },
                    url: format!("{}{path}", whole.as_str()),
                    shared: publisher.is_some(),
                    owner,
                    repo,
                    all: std::mem::take(&mut found.all),
                    plain: found.plain.take(),
                };
            }
        }
    }
    found
}

pub(super) static INSTALL_SECTION: LazyLock<Regex> = LazyLock::new(|| {
    re(
        r"(?i)\b(install\w*|set ?up|setup|prerequisites?|requirements?|getting started|quick ?start|dependencies|upgrade|update|uninstall)\b",
    )
});

/// [`install_context`], remembered for the file: a download shown as an installation step is
/// lowered the same where the file runs that address again outside an installation heading
/// (never one from a raw IP, paste site or tunnel): by the same steps, so other context (a
/// table) may lower the repeat further, but the first is a finding of the same rule, which the
/// skill's verdict already counts. The address is compared as written, without its query.
pub(super) fn install_step(ctx: &mut Ctx<'_>, place: Place<'_>, host: &Host) -> Option<Note> {
    if let Some(why) = install_context(ctx.purpose, ctx.is_main(), place, host) {
        if !host.url.is_empty() && host.kind != HostKind::Shady {
            ctx.install_steps
                .entry(host.url.clone())
                .or_insert_with(|| why.clone());
        }
        return Some(why.note);
    }
    let Place::Markdown { .. } = place else {
        return None;
    };
    if host.url.is_empty() || host.kind == HostKind::Known {
        return None;
    }
    let first = ctx.install_steps.get(&host.url)?;
    Some(Note::framing(
        format!(
            "lowered: the installation step shown under \"{}\", run again",
            first.heading
        ),
        first.note.framing,
    ))
}

/// A lowering for a download under an installation heading, and the heading.
#[derive(Clone)]
pub(super) struct InstallNote {
    pub(super) note: Note,
    pub(super) heading: String,
}

/// An installation section lowers a download-and-execute when the host is the skill's own tool
/// (its domain's name appears in what the skill says it is): the README telling the user how to
/// install what the skill wraps. A stager's "prerequisite" from an unrelated host is not lowered.
pub(super) fn install_context(
    purpose: &Purpose,
    main: bool,
    place: Place<'_>,
    host: &Host,
) -> Option<InstallNote> {
    let Place::Markdown {
        section,
        outer,
        titled,
        ..
    } = place
    else {
        return None;
    };
    if host.kind == HostKind::Known {
        return None;
    }
    // The nearest heading that says installation: the segment's own, or one enclosing it
    // (`### Linux / macOS` under `## Installation`). The skill's title encloses nothing (a
    // skill titled "A/B Test Setup"); another file's may (`references/install.md` titled
    // "Installation").
    let skip = usize::from(titled && main);
    let section = std::iter::once(section)
        .chain(
            outer
                .lines()
                .skip(skip)
                .collect::<Vec<_>>()
                .into_iter()
                .rev(),
        )
        .find(|h| INSTALL_SECTION.is_match(h))?;
    // The registered name, or the registrable domain read as one word (`molt.bot` is Moltbot,
    // `bun.sh` Bun), named in the claim or the heading. On a shared host (`someone.github.io`,
    // `x.vercel.app`) the registrable domain is the tenant's, not the platform's. On a host that
    // serves anyone's files the publisher is (`raw.githubusercontent.com/<owner>/<repo>`) — and
    // a repository's name costs nothing, unlike a domain: the owner or repository must be named
    // in the skill's name or description, not by a heading, folder or opening paragraph, nor
    // by a word every skill says ([`GENERIC_NAMES`]).
    let related = if host.shared {
        [&host.owner, &host.repo].iter().any(|l| {
            // At least one word of the name is not generic (`agent-skills` is all generic).
            words(l)
                .split(' ')
                .any(|w| w.len() >= 3 && !GENERIC_NAMES.contains(&w))
                && names(&purpose.declared, l, &host.name)
        })
    } else {
        psl::domain_str(&host.name).is_some_and(|domain| {
            let label = domain.split('.').next().unwrap_or("");
            let whole: String = domain.split('.').collect();
            label.len() >= 3
                && [label, whole.as_str()]
                    .iter()
                    .any(|l| names(&purpose.claim, l, &host.name) || names(section, l, &host.name))
        })
    };
    let note = if related {
        Note::framing(
            format!(
                "lowered: under \"{section}\", the install step of the tool the skill is about (`{}`)",
                host.shown()
            ),
            2,
        )
    } else {
        Note::framing(
            format!("lowered: under \"{section}\", an installation step shown to the user"),
            1,
        )
    };
    Some(InstallNote {
        note,
        heading: section.to_owned(),
    })
}

/// Whether `text` names `label` in words: as a word, or as adjacent words run together
/// (`private-connect`, "Private Connect", `PrivateConnect` for `privateconnect`; read by [`words`]). An address in the text names
/// nothing — a token with `://`, a host with a path (a dot before its first `/`: `a.com/x`, not
/// `rclone/rsync` nor `skills/v1.2/x`), or one holding `host`, the host being
/// judged: the install line is often in the opening the claim is made from, and its own address
/// must not vouch for itself ("Bootstrap: sink.bad.example.com." does not make a skill about
/// `example`). Whole words, not substrings: `bad` is not named by "badge", nor `example` by
/// "examples".
pub(super) fn names(text: &str, label: &str, host: &str) -> bool {
    let label: String = label
        .chars()
        .filter(|c| c.is_alphanumeric())
        .flat_map(char::to_lowercase)
        .collect();
    if label.is_empty() {
        return false;
    }
    let kept: Vec<&str> = text
        .split_whitespace()
        .filter(|t| {
            !(t.contains("://")
                || t.split_once('/').is_some_and(|(h, _)| h.contains('.'))
                || (!host.is_empty() && t.to_ascii_lowercase().contains(host)))
        })
        .collect();
    let words = words(&kept.join(" "));
    let words: Vec<&str> = words.split(' ').filter(|w| !w.is_empty()).collect();
    (0..words.len()).any(|i| {
        let mut run = String::new();
        for w in &words[i..] {
            run.push_str(w);
            if run == label {
                return true;
            }
            if !label.starts_with(run.as_str()) {
                return false;
            }
        }
        false
    })
}
