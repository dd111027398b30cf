//! What a command does to the machine: reverse shells, persistence, defense evasion, privilege
//! escalation, exfiltration.

use super::{
    Ctx, DESTROY, EVADE, EXFIL_CMD, PERSIST, PRIVESC, Place, SHELL_REVERSE,
    commands::SENDERS,
    hosts::{HostKind, base_name, host_of},
    interpreters::{is_interpreter, is_shell},
    packages::foreign_vendor,
    re,
};
use regex::Regex;
use skg_syntax::{ShellCommand, ShellFacts};
use std::sync::LazyLock;

pub(super) fn reverse_shell(
    ctx: &mut Ctx<'_>,
    facts: &ShellFacts,
    eff: &[(String, Vec<&str>)],
    i: usize,
    line: u32,
    snippet: &str,
    place: Place<'_>,
) {
    let (name, args) = &eff[i];
    let c = &facts.commands()[i];
    let net = matches!(
        name.as_str(),
        "nc" | "ncat" | "netcat" | "nc.traditional" | "telnet"
    );
    let shellish = |a: &&str| {
        let b = base_name(a);
        is_shell(&b) || matches!(b.as_str(), "cmd" | "powershell" | "pwsh")
    };
    let why = if net
        && args.iter().any(|a| {
            matches!(*a, "-e" | "-c")
                || a.starts_with("-e") && a.len() > 2 && args.iter().any(shellish)
        }) {
        Some(format!("`{name} -e` hands a shell to the connection"))
    } else if c
        .redirects
        .iter()
        .any(|r| r.target.starts_with("/dev/tcp/") || r.target.starts_with("/dev/udp/"))
        || args
            .iter()
            .any(|a| a.contains("/dev/tcp/") || a.contains("/dev/udp/"))
    {
        Some("a shell's input and output are redirected to /dev/tcp".to_owned())
    } else if name == "socat"
        && args.iter().any(|a| {
            let l = a.to_ascii_lowercase();
            l.starts_with("exec:") || l.starts_with("system:")
        })
    {
        Some("`socat exec:` hands a program to the connection".to_owned())
    } else if net
        && facts
            .pipeline(i)
            .any(|(j, _)| j != i && is_interpreter(&eff[j].0, &eff[j].1) && is_shell(&eff[j].0))
    {
        Some(format!("`{name}` is piped to or from a shell"))
    } else {
        None
    };
    if let Some(why) = why {
        ctx.emit(SHELL_REVERSE, 0.9, line, snippet, why, Vec::new(), place, 0);
    }
}

pub(super) static PERSIST_PATH: LazyLock<Regex> = LazyLock::new(|| {
    re(
        r"(?i)(\.bashrc|\.bash_profile|\.zshrc|\.zprofile|\.profile|/etc/profile|/etc/bash\.bashrc|config\.fish|/etc/cron|/var/spool/cron|authorized_keys|/etc/systemd/system|\.config/systemd/user|/library/launch(?:agents|daemons)|/etc/rc\.local|/etc/init\.d|\.git/hooks/|/etc/ld\.so\.preload)",
    )
});
pub(super) static PERSIST_PAYLOAD: LazyLock<Regex> = LazyLock::new(|| {
    re(
        r"(?i)(\b(?:curl|wget|nc|ncat|socat|base64|python3?\s+-c|perl\s+-e|bash\s+-i|/dev/tcp)\b|/tmp/|ssh-(?:rsa|ed25519)\s+AAAA)",
    )
});

pub(super) fn persistence(
    ctx: &mut Ctx<'_>,
    c: &ShellCommand,
    name: &str,
    args: &[&str],
    line: u32,
    snippet: &str,
    place: Place<'_>,
) {
    let target = c
        .redirects
        .iter()
        .filter(|r| r.op.contains('>'))
        .map(|r| r.target.as_str())
        .chain(if name == "tee" {
            args.to_vec()
        } else {
            Vec::new()
        })
        .find(|t| PERSIST_PATH.is_match(t));
    let crontab = name == "crontab" && !args.iter().any(|a| matches!(*a, "-l" | "-e" | "-r"));
    if target.is_none() && !crontab {
        return;
    }
    let payload = PERSIST_PAYLOAD.is_match(snippet);
    let keys = target.is_some_and(|t| t.contains("authorized_keys") || t.contains("ld.so.preload"));
    let what = target.map_or_else(|| "the crontab".to_owned(), |t| format!("`{t}`"));
    let (adjust, context) = if payload || keys {
        (
            0,
            vec!["raised: what is written downloads, connects or runs a payload".into()],
        )
    } else {
        (
            -2,
            vec!["lowered: what is written is configuration (PATH, aliases), not a payload".into()],
        )
    };
    ctx.emit(
        PERSIST,
        0.8,
        line,
        snippet,
        format!("writes to {what}, which runs again at every login, schedule or boot"),
        if keys { Vec::new() } else { context },
        place,
        if keys { 0 } else { adjust },
    );
}

/// `reloads_history`: the snippet reads the history file back after this command (`history -c;
/// history -r`, the shared-history `PROMPT_COMMAND`) before it writes the list over it, so
/// clearing the list in memory hides nothing.
#[allow(clippy::too_many_arguments)]
pub(super) fn evasion(
    ctx: &mut Ctx<'_>,
    c: &ShellCommand,
    name: &str,
    args: &[&str],
    reloads_history: bool,
    line: u32,
    snippet: &str,
    place: Place<'_>,
) {
    const GUARDS: &[&str] = &[
        "firewalld",
        "ufw",
        "apparmor",
        "auditd",
        "selinux",
        "clamav",
        "clamd",
        "falcon-sensor",
        "crowdstrike",
        "defender",
        "mdatp",
        "sysmon",
        "osqueryd",
        "wazuh-agent",
        "fail2ban",
        "rsyslog",
        "syslog",
        "systemd-journald",
    ];
    let lower: Vec<String> = args.iter().map(|a| a.to_ascii_lowercase()).collect();
    let has = |s: &str| lower.iter().any(|a| a == s);
    let why = match name {
        "setenforce" if has("0") || has("permissive") => Some("switches SELinux off"),
        "ufw" if has("disable") => Some("switches the firewall off"),
        "systemctl" | "service"
            if (has("stop") || has("disable") || has("mask"))
                && lower
                    .iter()
                    .any(|a| GUARDS.iter().any(|g| a.starts_with(g))) =>
        {
            Some("stops a security or logging service")
        }
        "iptables" | "ip6tables" if has("-f") || has("--flush") => {
            Some("flushes the firewall rules")
        }
        "set-mppreference" if lower.iter().any(|a| a.starts_with("-disable")) => {
            Some("switches Microsoft Defender protection off")
        }
        "spctl" if has("--master-disable") => Some("switches Gatekeeper off"),
        "csrutil" if has("disable") => Some("switches System Integrity Protection off"),
        "unset" if has("histfile") => Some("stops shell history"),
        "history" if has("-c") && !reloads_history => Some("clears shell history"),
        "export"
            if lower
                .iter()
                .any(|a| a.starts_with("histfile=/dev/null") || a == "histsize=0") =>
        {
            Some("stops shell history")
        }
        "rm" | "shred" | "truncate" | "unlink"
            if lower.iter().any(|a| a.starts_with("/var/log")) =>
        {
            Some("deletes system logs")
        }
        _ => None,
    };
    let why = why.or_else(|| {
        c.redirects
            .iter()
            .any(|r| r.op == ">" && r.target.starts_with("/var/log"))
            .then_some("empties a system log")
    });
    if let Some(why) = why {
        ctx.emit(
            EVADE,
            0.85,
            line,
            snippet,
            why.to_owned(),
            Vec::new(),
            place,
            0,
        );
    }
    // Destructive.
    let rm_root = name == "rm"
        && lower.iter().any(|a| a.starts_with('-') && a.contains('r'))
        && lower.iter().any(|a| {
            matches!(
                a.as_str(),
                "/" | "/*"
                    | "~"
                    | "~/"
                    | "~/*"
                    | "$home"
                    | "${home}"
                    | "$home/"
                    | "$home/*"
                    | "/home"
                    | "/etc"
                    | "/usr"
            )
        });
    let disk = (name == "dd"
        && lower.iter().any(|a| {
            a.starts_with("of=/dev/sd")
                || a.starts_with("of=/dev/nvme")
                || a.starts_with("of=/dev/disk")
        }))
        || name == "mkfs"
        || name.starts_with("mkfs.")
        || lower.iter().any(|a| a == "--no-preserve-root");
    if rm_root || disk {
        ctx.emit(
            DESTROY,
            0.9,
            line,
            snippet,
            "deletes or overwrites the system, a disk or the home folder".into(),
            Vec::new(),
            place,
            0,
        );
    }
}

pub(super) fn privesc(
    ctx: &mut Ctx<'_>,
    c: &ShellCommand,
    name: &str,
    args: &[&str],
    line: u32,
    snippet: &str,
    place: Place<'_>,
) {
    let system = |a: &&str| {
        let a = a.trim_end_matches('/');
        a.is_empty()
            || [
                "/etc", "/usr", "/bin", "/sbin", "/var", "/opt", "/lib", "/root", "/boot",
            ]
            .iter()
            .any(|p| a == *p || a.starts_with(&format!("{p}/")))
    };
    let mut why: Option<(&str, i32)> = None;
    if name == "chmod" {
        let mode = args
            .iter()
            .find(|a| !a.starts_with('-') || a.starts_with("-R"));
        let modes: Vec<&&str> = args.iter().filter(|a| !a.starts_with('/')).collect();
        let setuid = modes.iter().any(|m| {
            m.contains("+s")
                || (m.len() == 4
                    && (m.starts_with('4') || m.starts_with('2') || m.starts_with('6'))
                    && m.chars().all(|c| c.is_ascii_digit()))
        });
        let world = modes
            .iter()
            .any(|m| **m == "777" || **m == "a+rwx" || **m == "o+w");
        let _ = mode;
        if setuid {
            why = Some(("sets the setuid/setgid bit", 0));
        } else if world && args.iter().any(system) {
            why = Some(("makes a system path world-writable", 0));
        }
    }
    if matches!(name, "usermod" | "gpasswd" | "adduser")
        && args
            .iter()
            .any(|a| matches!(*a, "sudo" | "wheel" | "root" | "admin"))
    {
        why = Some(("adds a user to an administrators' group", 0));
    }
    let sudoers = c
        .redirects
        .iter()
        .any(|r| r.op.contains('>') && r.target.starts_with("/etc/sudoers"))
        || (name == "tee" && args.iter().any(|a| a.starts_with("/etc/sudoers")))
        || args.iter().any(|a| a.contains("NOPASSWD"));
    if sudoers {
        why = Some(("edits sudoers (passwordless root)", 0));
    }
    if let Some((why, adjust)) = why {
        ctx.emit(
            PRIVESC,
            0.8,
            line,
            snippet,
            why.into(),
            Vec::new(),
            place,
            adjust,
        );
    }
}

/// Credential stores: what a stealer reads (a project's `.env` is not here: reading it is
/// everyday work; sending it is [`SENT_FILE`]).
pub(super) static CRED_PATH: LazyLock<Regex> = LazyLock::new(|| {
    re(
        r"(?i)(~/\.ssh/id_|\$home/\.ssh/id_|/\.ssh/id_(?:rsa|dsa|ecdsa|ed25519)\b|~/\.ssh/?$|~/\.ssh/\*|\.aws/credentials|\.config/gcloud/(?:credentials|application_default)|\.docker/config\.json|\.git-credentials|\.netrc\b|/etc/shadow|/login data\b|/google/chrome/[^\s]*/cookies|\.mozilla/firefox/[^\s]*(?:logins\.json|key4\.db|cookies\.sqlite)|keychain-db|login\.keychain|wallet\.dat|\.ethereum/keystore|\.config/solana/id\.json|\.electrum/wallets)",
    )
});
/// Files whose content must not leave the machine (credential stores and `.env` files).
pub(super) static SENT_FILE: LazyLock<Regex> = LazyLock::new(|| {
    re(
        r"(?i)(~/\.ssh/(?:id_\w+|config|known_hosts)?(?:$|[\s'\x22)])|\$home/\.ssh/id_\w+(?:$|[\s'\x22)])|\bid_(?:rsa|dsa|ecdsa|ed25519)(?:$|[\s'\x22)])|\.aws/credentials|\.kube/config|\.docker/config\.json|\.git-credentials|\.netrc\b|/etc/shadow|login data|cookies\.sqlite|keychain|wallet\.dat|(?:^|[\s/@'\x22])\.env(?:\.local|\.production)?\b)",
    )
});
/// Commands that read a file's content.
pub(super) const READERS: &[&str] = &[
    "cat",
    "cp",
    "scp",
    "tar",
    "zip",
    "7z",
    "base64",
    "xxd",
    "od",
    "head",
    "tail",
    "less",
    "more",
    "strings",
    "sqlite3",
    "gpg",
    "openssl",
    "rsync",
    "type",
    "get-content",
    "copy-item",
];
pub(super) static WHOLE_ENV: LazyLock<Regex> = LazyLock::new(|| {
    re(r"(\$\(\s*(?:env|printenv|set|export -p)\b|`\s*(?:env|printenv)\b|/proc/self/environ)")
});
/// A variable's expansion (`$NAME`, `${NAME}`, `${NAME:-…}`), its name upper case.
static VARIABLE: LazyLock<Regex> = LazyLock::new(|| re(r"\$\{?\(?([A-Z][A-Z0-9_]*)"));

/// The secret variables `text` expands ([`secret_name`]), in order: each name, and whether it
/// is written in braces (`${NAME}`).
pub(super) fn secret_vars(text: &str) -> impl Iterator<Item = (&str, bool)> {
    VARIABLE.captures_iter(text).filter_map(|c| {
        let name = c.get(1)?.as_str();
        secret_name(name).then(|| (name, c[0].starts_with("${")))
    })
}

/// The first secret variable `text` expands.
pub(super) fn secret_var(text: &str) -> Option<&str> {
    secret_vars(text).next().map(|(name, _)| name)
}

/// A variable named for a secret, read by its `_`-separated words (digits after a word's
/// letters dropped: `GH_TOKEN2`, `API_KEY1`): a word that is or ends in a secret's noun
/// (`TOKEN(S)`, `SECRET(S)`, `KEY(S)`, `PASSWORD(S)`, `PASSWD`, `PASS`, `PASSPHRASE`,
/// `CREDENTIAL(S)`, `AUTH`, `AUTHORIZATION`, `COOKIE(S)`, `SESSION`, `DSN`, `KEYPAIR`,
/// `PRIVKEY`: `GITHUB_TOKEN`, `APIKEY`, `OPENAI_API_KEY`), or a connection string
/// (`DATABASE_URL`, `DB_URL`, `CONNECTION_STRING`). Not a secret (nor `AUTH0_DOMAIN`: a
/// name's digits stay on `AUTH`):
/// - a noun that only starts a word (`AUTHOR`, `KEYWORD`, `PASSPORT`);
/// - one of the ambiguous nouns alone (`KEY`, `PASS`, `AUTH`, `SESSION`, `COOKIE`: a loop's
///   variable, an item's key);
/// - a noun followed by a word that names or describes the secret rather than holding it
///   (`KEY_NAME`, `AUTH_URL`, `TOKEN_LIMIT`, `PASSWORD_MIN_LENGTH`, `COOKIE_JAR`; not
///   `GH_TOKEN_PROD`, `API_KEY_V2`, nor Vault's `SECRET_ID`);
/// - a key named public (`PUBLIC_KEY`, `PUB_KEY`, `PUBKEY`, `STRIPE_PUBLISHABLE_KEY`);
/// - a token that is a count or an asset: after `MAX`, `NUM`, `TOTAL` (plural also `INPUT`,
///   `OUTPUT`, `PROMPT`, …), or a trade's side or fee (`SELL_TOKEN`, `SRC_TOKEN`,
///   `SWAP_FEE_TOKEN`; not `INPUT_TOKEN`, GitHub Actions' input, nor `SOURCE_TOKEN`),
///   or followed by what names an asset or its side (`TOKEN_MINT`, `TOKEN_ADDRESS`,
///   `TOKEN_IN`).
pub(super) fn secret_name(name: &str) -> bool {
    const NOUNS: &[&str] = &[
        "TOKEN",
        "TOKENS",
        "SECRET",
        "SECRETS",
        "KEY",
        "KEYS",
        "PASSWORD",
        "PASSWORDS",
        "PASSWD",
        "PASS",
        "PASSPHRASE",
        "CREDENTIAL",
        "CREDENTIALS",
        "AUTH",
        "AUTHORIZATION",
        "COOKIE",
        "COOKIES",
        "SESSION",
        "DSN",
        "KEYPAIR",
        "PRIVKEY",
    ];
    const AMBIGUOUS_ALONE: &[&str] = &["KEY", "KEYS", "PASS", "AUTH", "SESSION", "COOKIE"];
    // Words that, after a noun, name or describe the secret rather than hold it
    // (`SECRET_NAME`, `AUTH_URL`, `TOKEN_LIMIT`, `PASSWORD_MIN_LENGTH`). Any other word is part
    // of the secret's own name (`GH_TOKEN_PROD`, `API_KEY_V2`, `OP_SESSION_MY`).
    const ABOUT: &[&str] = &[
        "ID",
        "IDS",
        "NAME",
        "NAMES",
        "URL",
        "URI",
        "DIR",
        "LENGTH",
        "LEN",
        "JAR",
        "TYPE",
        "PREFIX",
        "ENDPOINT",
        "COUNT",
        "SIZE",
        "VAULT",
        "EXPIRY",
        "EXPIRES",
        "EXPIRATION",
        "TTL",
        "DESC",
        "DESCRIPTION",
        "LIMIT",
        "USED",
        "USAGE",
        "BUDGET",
        "RATE",
        "THRESHOLD",
        "METHOD",
        "ENABLED",
        "DISABLED",
        "TIMEOUT",
        "DOMAIN",
        "POLICY",
        "MIN",
        "MAX",
        "VERSION",
        "ARN",
        "FORMAT",
        "FIELD",
        "PARAM",
        "REGION",
        "HOST",
        "PORT",
        "MODE",
        "ALGORITHM",
        "SCOPE",
        "SCOPES",
        "ISSUER",
        "AUDIENCE",
        "LABEL",
        "KIND",
        "COLUMN",
        "HINT",
    ];
    const PUBLIC: &[&str] = &["PUB", "PUBLIC", "PUBKEY", "PUBLISHABLE"];
    // Before a token: a trade's side or fee (`SELL_TOKEN`, `SRC_TOKEN`) or a count's
    // (`MAX_TOKENS`); before a plural, a count's only (`INPUT_TOKENS`, `PROMPT_TOKENS`).
    const SIDES: &[&str] = &[
        "SELL", "BUY", "SRC", "DST", "FROM", "TO", "IN", "OUT", "BASE", "QUOTE", "FEE", "MAX",
        "NUM", "TOTAL",
    ];
    const COUNTS: &[&str] = &[
        "MAX",
        "NUM",
        "TOTAL",
        "INPUT",
        "OUTPUT",
        "PROMPT",
        "COMPLETION",
        "CONTEXT",
        "USED",
    ];
    const ASSET: &[&str] = &[
        "MINT", "ADDRESS", "ADDR", "SYMBOL", "DECIMALS", "AMOUNT", "CONTRACT", "IN", "OUT",
    ];
    if ["DATABASE_URL", "DB_URL", "CONNECTION_STRING"]
        .iter()
        .any(|c| name.contains(c))
    {
        return true;
    }
    // `AUTH0` is a name, not a numbered `AUTH`.
    let words: Vec<&str> = name
        .split('_')
        .map(|w| {
            let bare = w.trim_end_matches(|c: char| c.is_ascii_digit());
            if bare.ends_with("AUTH") { w } else { bare }
        })
        .filter(|w| !w.is_empty())
        .collect();
    let alone = words.len() == 1;
    words.iter().enumerate().any(|(k, w)| {
        let Some(noun) = NOUNS.iter().find(|n| w.ends_with(*n)) else {
            return false;
        };
        let before = k.checked_sub(1).map(|p| words[p]);
        let after = words.get(k + 1).copied();
        // A Vault AppRole's `SECRET_ID` is a credential; another noun's id names it.
        let described =
            after.is_some_and(|a| ABOUT.contains(&a) && !(*noun == "SECRET" && a == "ID"));
        if (alone && AMBIGUOUS_ALONE.contains(w)) || described {
            return false;
        }
        match *noun {
            "KEY" | "KEYS" => {
                !PUBLIC.iter().any(|p| w.starts_with(p))
                    && !before.is_some_and(|b| PUBLIC.contains(&b))
            }
            "TOKENS" => !before.is_some_and(|b| COUNTS.contains(&b)),
            "TOKEN" => {
                !before.is_some_and(|b| SIDES.contains(&b))
                    && !after.is_some_and(|a| ASSET.contains(&a))
            }
            _ => true,
        }
    })
}

/// What in a file (any block of it) sends a local address's traffic on: a proxy setting or
/// file, a port forward or relay, a listener running a command.
static FORWARDS: LazyLock<Regex> = LazyLock::new(|| {
    re(
        r"(?i)(_proxy\s*=|\bproxy\s*=|\.curlrc\b|\.wgetrc\b|\bcurl\b[^\n]*\s-K\b|\b(?:socat|autossh|gost|chisel|frpc|ngrok|iptables|nft|redir|rinetd)\b|(?:Local|Remote|Dynamic)Forward|\bssh\b[^\n]*\s-\w*[LDR]|--sh-exec|--exec\b|port-forward|\bmkfifo\b|\bnc(?:at)?\b[^\n]*\s-\w*l)",
    )
});

/// A loopback address (`localhost`, `127.0.0.0/8`, `::1`, `0.0.0.0`): the machine itself.
fn loopback(host: &str) -> bool {
    let host = host.trim_start_matches('[').trim_end_matches(']');
    host == "localhost"
        || host.ends_with(".localhost")
        || host == "::1"
        || host == "0.0.0.0"
        || host
            .strip_prefix("127.")
            .is_some_and(|rest| rest.split('.').all(|p| p.parse::<u8>().is_ok()))
}

pub(super) fn exfil(
    ctx: &mut Ctx<'_>,
    facts: &ShellFacts,
    eff: &[(String, Vec<&str>)],
    i: usize,
    line: u32,
    snippet: &str,
    place: Place<'_>,
) {
    let (name, args) = &eff[i];
    // DNS: a lookup of a name built at run time.
    if matches!(
        name.as_str(),
        "dig" | "nslookup" | "host" | "drill" | "resolvectl"
    ) && args
        .iter()
        .any(|a| a.contains("$(") || a.contains("${") || a.contains('`') || secret_var(a).is_some())
    {
        let secret = args
            .iter()
            .any(|a| secret_var(a).is_some() || WHOLE_ENV.is_match(a) || CRED_PATH.is_match(a));
        ctx.emit(
            EXFIL_CMD,
            0.85,
            line,
            snippet,
            "looks up a DNS name built from data at run time (DNS exfiltration)".into(),
            Vec::new(),
            place,
            if secret { 0 } else { -1 },
        );
        return;
    }
    if !SENDERS.contains(&name.as_str()) {
        return;
    }
    // openssl sends only on a connection (`s_client`, `s_time`, `ocsp` to its `-url`; `s_server`
    // hands its input to whoever connects), or through a subcommand not written out (`$SUB`):
    // `openssl dgst -hmac "$SECRET"` signs here.
    if name == "openssl"
        && !args.iter().find(|a| !a.starts_with('-')).is_some_and(|c| {
            matches!(*c, "s_client" | "s_time" | "s_server" | "ocsp") || c.starts_with('$')
        })
    {
        return;
    }
    // What the command sends: its body/upload arguments, the URL's interpolations, and what is
    // piped into it.
    let mut body: Vec<&str> = Vec::new();
    let mut it = args.iter().peekable();
    // The data and value options below are the HTTP clients' (curl, wget, HTTPie,
    // PowerShell's): ssh's `-F` is its config file and `-T` takes no value, nc's `-d` reads no
    // data.
    let http = matches!(
        name.as_str(),
        "curl"
            | "wget"
            | "http"
            | "https"
            | "iwr"
            | "irm"
            | "invoke-webrequest"
            | "invoke-restmethod"
    );
    while let Some(a) = it.next() {
        let is_flag = http
            && matches!(
                *a,
                "-d" | "--data"
                    | "--data-raw"
                    | "--data-binary"
                    | "--data-urlencode"
                    | "-F"
                    | "--form"
                    | "-T"
                    | "--upload-file"
                    | "--post-data"
                    | "--post-file"
                    | "--body-data"
                    | "--body-file"
                    | "-Body"
                    | "-InFile"
            );
        if is_flag {
            if let Some(v) = it.next() {
                body.push(v);
            }
        } else if http
            && matches!(
                *a,
                "-H" | "--header"
                    | "-u"
                    | "--user"
                    | "-A"
                    | "--user-agent"
                    | "-o"
                    | "--output"
                    | "-X"
                    | "--request"
                    | "-e"
                    | "--referer"
                    | "-b"
                    | "--cookie"
                    | "--oauth2-bearer"
                    | "-E"
                    | "--cert"
                    | "--key"
                    | "--cacert"
                    | "-w"
                    | "--write-out"
                    | "-m"
                    | "--max-time"
                    | "--connect-timeout"
                    | "--header="
                    | "-Headers"
                    | "-Method"
                    | "-O"
                    | "--output-document"
                    | "-P"
                    | "-i"
                    | "-l"
                    | "-p"
            )
        {
            // Options with a value that is not sent as data (authentication goes in headers).
            it.next();
        } else if http
            && (a.starts_with("--data")
                || a.starts_with("--post-")
                || a.starts_with("-d") && a.len() > 2)
        {
            body.push(a);
        } else if a.contains("://") || !a.starts_with('-') {
            // URL or host: data interpolated into it leaves too.
            if a.contains("$(") || secret_var(a).is_some() {
                body.push(a);
            }
        }
    }
    let upstream: Vec<&(String, Vec<&str>)> = facts.upstream(i).map(|(j, _)| &eff[j]).collect();
    // Commands inside the sender's own `$( )` feed it too.
    let inner: Vec<&(String, Vec<&str>)> = facts.inner(i).map(|(j, _)| &eff[j]).collect();
    let whole_env = body.iter().any(|b| WHOLE_ENV.is_match(b))
        || upstream
            .iter()
            .chain(&inner)
            .any(|(n, _)| matches!(n.as_str(), "env" | "printenv" | "set"));
    let upstream_secret = upstream
        .iter()
        .flat_map(|(_, a)| a.iter())
        .find_map(|a| secret_var(a).map(str::to_owned));
    let upstream_file = upstream
        .iter()
        .find(|(n, a)| {
            matches!(
                n.as_str(),
                "cat" | "base64" | "tar" | "zip" | "gzip" | "xxd" | "od" | "head" | "tail"
            ) && a
                .iter()
                .any(|x| x.starts_with('/') || x.starts_with('~') || x.starts_with("$HOME"))
        })
        .and_then(|(_, a)| {
            // An SSH public key (`~/.ssh/id_ed25519.pub`) is meant to be given away — unless the
            // block writes or links that name (`ln -sf id_rsa ~/.ssh/k.pub`); another `.pub`
            // name says nothing of what the file holds.
            let written = |path: &str| {
                let base = path.rsplit('/').next().unwrap_or(path);
                facts.commands().iter().any(|c| {
                    let to = |w: &String| w.ends_with(base);
                    c.redirects
                        .iter()
                        .any(|r| r.op.contains('>') && to(&r.target))
                        || match c.name.as_str() {
                            "ln" | "cp" | "mv" | "install" => c.args.last().is_some_and(to),
                            "tee" => c.args.iter().any(to),
                            "dd" => c.args.iter().any(|w| w.starts_with("of=") && to(w)),
                            _ => false,
                        }
                })
            };
            a.iter().find(|x| {
                (x.starts_with('/') || x.starts_with('~') || x.starts_with("$HOME"))
                    && !(x.contains(".ssh/")
                        && x.to_ascii_lowercase().ends_with(".pub")
                        && !written(x))
            })
        })
        .map(|s| (*s).to_owned());
    let cred = body
        .iter()
        .find(|b| SENT_FILE.is_match(b))
        .map(|s| (*s).to_owned())
        .or_else(|| {
            upstream
                .iter()
                .flat_map(|(_, a)| a.iter())
                .find(|a| SENT_FILE.is_match(a))
                .map(|s| (*s).to_owned())
        });
    // An MCP client expands `${NAME}` in a launch's words (Claude Code, Cursor) and nothing
    // else: a `$NAME` there reaches the remote command as written, and that host expands its
    // own.
    let unexpanded = ctx.unexpanded;
    let expanded = |b: &&str| {
        secret_vars(b)
            .find(|(_, braced)| !unexpanded || *braced)
            .map(|(name, _)| name.to_owned())
    };
    let secret = body.iter().find_map(expanded).or(upstream_secret);
    let host = host_of(name, args);
    let mut shown = host.name.clone();
    let (why, adjust) = if whole_env {
        (
            "sends the whole environment (every secret in it)".to_owned(),
            0,
        )
    } else if let Some(p) = cred {
        (format!("sends the credential store `{p}`"), 0)
    } else if let Some(v) = secret {
        // An API key in a request to an API is how APIs are called; to a raw IP, paste site or
        // tunnel it is not, nor is a vendor's credential sent to a host that is not the vendor's.
        // To this machine's own address (a local service) nothing leaves it — unless the command
        // is sent on (a proxy, `--connect-to`, `--resolve`, a `*_proxy` setting) or the block
        // opens a tunnel that a local port forwards (`ssh -L`, `socat`).
        let forwarded = args.iter().any(|a| {
            // curl's `-x` (its value after it or attached), and the long options.
            a.starts_with("-x")
                || a.starts_with("--")
                    && ["proxy", "connect-to", "resolve", "socks"]
                        .iter()
                        .any(|o| a.to_ascii_lowercase().contains(o))
        }) || FORWARDS.is_match(&ctx.file.text);
        if !forwarded && !host.all.is_empty() && host.all.iter().all(|h| loopback(h)) {
            shown.clear();
            (
                format!("sends the secret `${v}` to this machine's own address"),
                -3,
            )
        } else if host.kind == HostKind::Shady {
            (
                format!("sends the secret `${v}` in a request body or URL"),
                -1,
            )
        } else if let Some((vendor, to)) = host
            .all
            .iter()
            .find_map(|h| foreign_vendor(&v, h).map(|vendor| (vendor, h)))
        {
            // Any host the command sends to: `curl -d "key=$OPENAI_API_KEY" api.openai.com/x
            // other.example` sends it to both.
            shown.clone_from(to);
            (
                format!("sends the {vendor} credential `${v}` to a host that is not {vendor}'s"),
                -1,
            )
        } else {
            (
                format!(
                    "sends the secret `${v}` in a request body or URL (usual for the API it belongs to)"
                ),
                -3,
            )
        }
    } else if let Some(p) = upstream_file {
        (format!("sends the content of `{p}`"), -2)
    } else {
        return;
    };
    ctx.emit(
        EXFIL_CMD,
        0.9,
        line,
        snippet,
        format!(
            "`{name}` {why}{}",
            if shown.is_empty() {
                String::new()
            } else {
                format!(" to {shown}")
            }
        ),
        Vec::new(),
        place,
        adjust,
    );
}
