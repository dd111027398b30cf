//! Python and JavaScript code: secrets and the environment sent over the network, decoded code run,
//! obfuscation.

use super::{
    CRED_READ, Ctx, EXFIL_CODE, OBF_CODE, OBF_SECRET, Place, RCE_DECODE, SHELL_REVERSE,
    attacks::CRED_PATH, blobs::blob_rule, re, scripts::LineIndex, shell::shell_rules,
};
use regex::Regex;
use skg_syntax::Language;
use std::sync::LazyLock;

pub(super) static NET_SINK_PY: &[&str] = &[
    "post",
    "put",
    "patch",
    "urlopen",
    "Request",
    "sendall",
    "sendto",
    "create_connection",
    "sendmail",
    "gethostbyname",
    "getaddrinfo",
    "connect",
    "request",
];
pub(super) static NET_SINK_JS: &[&str] = &[
    "fetch",
    "post",
    "put",
    "patch",
    "request",
    "connect",
    "createConnection",
    "sendBeacon",
    "lookup",
    "resolve",
    "resolve4",
    "resolveTxt",
    "WebSocket",
    "XMLHttpRequest",
];
pub(super) static NET_RECV: LazyLock<Regex> = LazyLock::new(|| {
    re(
        r"(?i)^(requests|httpx|session|client|s|sock|socket|conn|urllib|request|http|https|axios|net|dns|smtp|server|aiohttp|got|superagent|needle|navigator|ws)$",
    )
});
pub(super) static PY_WHOLE_ENV: LazyLock<Regex> = LazyLock::new(|| {
    re(
        r"(dict\(os\.environ\)|os\.environ\.copy\(\)|os\.environ\.items\(\)|json\.dumps\(\s*(?:dict\()?os\.environ|str\(os\.environ\)|\{\*\*os\.environ\}|JSON\.stringify\(\s*process\.env\s*\)|Object\.(?:entries|keys|values)\(\s*process\.env\s*\)|/proc/self/environ)",
    )
});
pub(super) static CODE_SECRET: LazyLock<Regex> = LazyLock::new(|| {
    re(
        r#"(os\.environ(?:\.get)?[\[(]\s*['"]|os\.getenv\(\s*['"]|process\.env\.|process\.env\[\s*['"])([A-Z0-9_]*(?:TOKEN|SECRET|KEY|PASSWORD|PASSWD|CREDENTIAL|AUTH|COOKIE|SESSION|DATABASE_URL|DB_URL|DSN|CONNECTION_STRING)[A-Z0-9_]*)"#,
    )
});
pub(super) static EXEC_DECODED: LazyLock<Regex> = LazyLock::new(|| {
    re(
        r"(?s)\b(exec|eval|compile|Function|runInNewContext|runInThisContext|execSync|exec_command|system|popen|spawn)\s*\((?:[^()]|\([^()]*\)|\((?:[^()]|\([^()]*\))*\)){0,200}?(b64decode|decodebytes|a85decode|b32decode|fromhex|unhexlify|codecs\.decode|zlib\.decompress|marshal\.loads|\batob\b|Buffer\.from\([^)]*(?:base64|hex)|urlopen|requests\.get|\.text\b|\.content\b|fetch\(|responseText|open\(\s*[rf]?['\x22](?:/tmp/|/var/tmp/|/dev/shm/)\.)",
    )
});
pub(super) static OBFUSCATION: LazyLock<Regex> = LazyLock::new(|| {
    re(
        r#"(getattr\(\s*__import__|__import__\(\s*['"][a-z]+['"]\s*\+|__import__\(\s*(?:chr|bytes|''\.join|"".join|base64)|(?:chr\(\d+\)\s*\+\s*){6,}|String\.fromCharCode\((?:\s*\d+\s*,){7,}|(?:\\x[0-9a-fA-F]{2}){16,}|\[::-1\]\)?\s*\)\s*$|['"][A-Za-z0-9+/]{160,}={0,2}['"])"#,
    )
});

pub(super) fn code_rules(
    ctx: &mut Ctx<'_>,
    language: Language,
    code: &str,
    line0: u32,
    place: Place<'_>,
) {
    static HARVEST: LazyLock<Regex> = LazyLock::new(|| {
        re(
            r#"['"]?[A-Za-z_][\w-]*['"]?\s*:\s*(?:os\.environ(?:\.get)?[\[(]\s*['"]|os\.getenv\(\s*['"]|process\.env\.|process\.env\[\s*['"])([A-Z0-9_]*(?:TOKEN|SECRET|KEY|PASSWORD|PASSWD|CREDENTIAL|AUTH|COOKIE|SESSION|DATABASE_URL|DB_URL|DSN|CONNECTION_STRING)[A-Z0-9_]*)"#,
        )
    });
    static ASSIGNED: LazyLock<Regex> =
        LazyLock::new(|| re(r"^\s*(?:const|let|var)?\s*([A-Za-z_]\w*)\s*=[^=]"));
    static SHELL_STRING: LazyLock<Regex> = LazyLock::new(|| {
        re(
            r#"(?:os\.system|subprocess\.(?:run|call|Popen|check_output|check_call)|execSync|exec|spawnSync)\(\s*[fr]?(?:"([^"\n]{4,})"|'([^'\n]{4,})')"#,
        )
    });
    static PRINT_SECRET: LazyLock<Regex> = LazyLock::new(|| {
        re(
            r#"\b(?:print|console\.(?:log|error|info)|sys\.stdout\.write|process\.stdout\.write|logging\.\w+|logger\.\w+)\s*\((?:(?:[^()\n]|\([^()\n]*\))*?[^!\w.])?(?:os\.environ(?:\.get)?[\[(]\s*['"]|os\.getenv\(\s*['"]|process\.env\.|process\.env\[\s*['"])[A-Z0-9_]*(?:TOKEN|SECRET|KEY|PASSWORD|PASSWD|CREDENTIAL|AUTH|COOKIE|SESSION)"#,
        )
    });
    if code.len() > 500_000 {
        return;
    }
    // Sources first: the syntax tree is needed only to find a network call that could carry one.
    let whole = PY_WHOLE_ENV.find(code);
    let cred = CRED_PATH.find(code);
    let secret = CODE_SECRET.captures(code);
    let facts = if whole.is_some() || cred.is_some() || secret.is_some() {
        skg_syntax::analyze(language, code)
    } else {
        skg_syntax::ScriptFacts::default()
    };
    let index = LineIndex::new(code, line0);
    let line_of = |offset: usize| index.line(offset);
    let src_line = |l: u32| {
        code.lines()
            .nth((l - line0) as usize)
            .unwrap_or("")
            .to_owned()
    };
    let sinks: &[&str] = if language == Language::Python {
        NET_SINK_PY
    } else {
        NET_SINK_JS
    };
    let sink = facts.calls.iter().find(|c| {
        sinks.contains(&c.name.as_str())
            && (c
                .receiver
                .as_deref()
                .is_some_and(|r| NET_RECV.is_match(r.rsplit('.').next().unwrap_or(r)))
                || matches!(
                    c.name.as_str(),
                    "fetch"
                        | "urlopen"
                        | "create_connection"
                        | "sendBeacon"
                        | "gethostbyname"
                        | "getaddrinfo"
                ))
    });
    let sink_line = sink.map(|c| line0 + c.line - 1);
    if let Some(sl) = sink_line {
        let (what, at, adjust) = if let Some(m) = whole {
            ("the whole environment".to_owned(), m.start(), 1)
        } else if let Some(m) = cred {
            (
                format!("the credential store `{}`", m.as_str().trim()),
                m.start(),
                1,
            )
        } else if let Some(c) = &secret {
            (
                format!("the secret `{}`", &c[2]),
                c.get(0).map_or(0, |m| m.start()),
                -2,
            )
        } else {
            (String::new(), 0, 0)
        };
        if !what.is_empty() {
            let src_at = line_of(at);
            let close = src_at.abs_diff(sl) <= 30;
            let name = sink.map_or("", |c| c.name.as_str());
            ctx.emit(
                EXFIL_CODE,
                if close { 0.85 } else { 0.65 },
                sl,
                &src_line(sl),
                format!("reads {what} (line {src_at}) and calls `{name}` (line {sl}); flow approximated within the file"),
                Vec::new(),
                place,
                adjust,
            );
        }
    } else if let Some(m) = whole {
        ctx.emit(
            CRED_READ,
            0.5,
            line_of(m.start()),
            &src_line(line_of(m.start())),
            "collects the whole environment (every secret in it)".into(),
            Vec::new(),
            place,
            -1,
        );
    } else if let Some(m) =
        cred.filter(|m| !m.as_str().trim().starts_with(".env") && !m.as_str().contains(".env"))
    {
        ctx.emit(
            CRED_READ,
            0.6,
            line_of(m.start()),
            &src_line(line_of(m.start())),
            format!("reads the credential store `{}`", m.as_str().trim()),
            Vec::new(),
            place,
            0,
        );
    }
    // Several services' secrets gathered into one mapping and serialized: a stealer's harvest
    // (a client reads its own key; it does not bundle Slack's, the database's and AWS's).
    let vendors: std::collections::BTreeSet<String> = HARVEST
        .captures_iter(code)
        .map(|c| c[1].split('_').next().unwrap_or("").to_owned())
        .collect();
    if vendors.len() >= 2
        && [
            "json.dumps(",
            "JSON.stringify(",
            "b64encode(",
            "btoa(",
            "pickle.dumps(",
            "urlencode(",
        ]
        .iter()
        .any(|e| code.contains(e))
    {
        let at = HARVEST.find(code).map_or(0, |m| m.start());
        let l = line_of(at);
        ctx.emit(
            CRED_READ,
            0.7,
            l,
            &src_line(l),
            format!(
                "gathers secrets of {} services ({}) into one serialized payload",
                vendors.len(),
                vendors.iter().cloned().collect::<Vec<_>>().join(", ")
            ),
            Vec::new(),
            place,
            0,
        );
    }
    // A secret written to output: into logs, or — for an MCP server — into the agent's context.
    if let Some(m) = PRINT_SECRET.find(code) {
        let l = line_of(m.start());
        ctx.emit(
            OBF_SECRET,
            0.8,
            l,
            &src_line(l),
            "writes a secret from the environment to output (logs, or the agent's context)".into(),
            Vec::new(),
            place,
            0,
        );
    }
    // A secret encoded (the step before smuggling it in a URL or a DNS name): the encoder is
    // applied on the line that reads the secret, or to the variable that line assigns.
    if let Some(c) = &secret {
        let at = c.get(0).map_or(0, |m| m.start());
        let line_start = code[..at].rfind('\n').map_or(0, |i| i + 1);
        let line_end = code[at..].find('\n').map_or(code.len(), |i| at + i);
        let read_line = &code[line_start..line_end];
        let var = ASSIGNED.captures(read_line).map(|m| m[1].to_owned());
        let encoders = [
            "b64encode(",
            "urlsafe_b64encode(",
            "hexlify(",
            "btoa(",
            "Buffer.from(",
        ];
        let encoded_here =
            encoders.iter().any(|e| read_line.contains(e)) && !read_line.contains("b64decode");
        let until = code.floor_char_boundary(code.len().min(line_end + 600));
        let rest = &code[line_end..until];
        let encoded_later = var.as_ref().is_some_and(|v| {
            encoders
                .iter()
                .any(|e| rest.contains(&format!("{e}{v}")) || rest.contains(&format!("{e}{v}.")))
        });
        if encoded_here || encoded_later {
            let window = &code[line_start..until];
            let url = window.contains("http://") || window.contains("https://");
            let l = line_of(c.get(0).map_or(0, |m| m.start()));
            ctx.emit(
                OBF_SECRET,
                if url { 0.9 } else { 0.75 },
                l,
                &src_line(l),
                format!(
                    "encodes the secret `{}`{}",
                    &c[2],
                    if url { " into a URL" } else { "" }
                ),
                Vec::new(),
                place,
                i32::from(url),
            );
        }
    }
    if let Some(m) = EXEC_DECODED.find(code) {
        let l = line_of(m.start());
        ctx.emit(
            RCE_DECODE,
            0.95,
            l,
            &src_line(l),
            "runs decoded, downloaded or hidden-file data as code".into(),
            Vec::new(),
            place,
            0,
        );
    }
    // Reverse shells in code: a socket whose descriptor becomes the shell's standard streams.
    let socket =
        code.contains("socket") || code.contains("net.Socket") || code.contains("net.connect");
    let dup = code.contains("dup2") || code.contains("pty.spawn") || code.contains("fileno()");
    let shell = code.contains("/bin/sh")
        || code.contains("/bin/bash")
        || code.contains("pty.spawn")
        || code.contains("cmd.exe");
    if socket && dup && shell {
        let at = code
            .find("dup2")
            .or_else(|| code.find("pty.spawn"))
            .unwrap_or(0);
        let l = line_of(at);
        ctx.emit(
            SHELL_REVERSE,
            0.85,
            l,
            &src_line(l),
            "connects a socket to a shell's standard streams".into(),
            Vec::new(),
            place,
            0,
        );
    }
    if let Some(m) = OBFUSCATION.find(code) {
        let l = line_of(m.start());
        ctx.emit(
            OBF_CODE,
            0.6,
            l,
            &src_line(l),
            "code is encoded or assembled at run time instead of written plainly".into(),
            Vec::new(),
            place,
            0,
        );
    }
    // Shell commands run from code (subprocess, os.system, child_process): read them as shell.
    for cap in SHELL_STRING.captures_iter(code) {
        let s = cap.get(1).or_else(|| cap.get(2)).map_or("", |m| m.as_str());
        let l = line_of(cap.get(0).map_or(0, |m| m.start()));
        shell_rules(ctx, s, l, place);
    }
    blob_rule(ctx, code, line0, place);
}
