//! MCP configs: the command a client runs to start each server, and its environment.

use super::{
    Ctx, EXFIL_CMD, OBF_BLOB, Place,
    blobs::{DECODED_DANGER, blob_rule, decode_blob},
    hosts::{base_name, host_of},
    interpreters::{Given, given_programs},
    scripts::{powershell_rules, read_given},
    settings::variable_command_lines,
    shell::shell_rules,
};

/// The servers' names and descriptions of an MCP config (empty when it is not one).
/// An MCP config's servers as clients read the file — JSON with comments and trailing commas
/// (VS Code's `.vscode/mcp.json`), else as leniently as jsonc-parser reads — under either key clients use (`mcpServers`,
/// and VS Code's `servers`: both are read, one cannot hide the other). `None`: not such JSON.
pub(super) fn mcp_servers(text: &str) -> Option<Vec<(String, serde_json::Value)>> {
    let options = jsonc_parser::ParseOptions {
        allow_comments: true,
        allow_trailing_commas: true,
        allow_loose_object_property_names: false,
        allow_missing_commas: false,
        allow_single_quoted_strings: false,
        allow_hexadecimal_numbers: false,
        allow_unary_plus_numbers: false,
    };
    // A file a strict reader rejects (a missing comma, an unquoted key) is read leniently all
    // the same: clients that recover from errors may still start what it names.
    let json: serde_json::Value = jsonc_parser::parse_to_serde_value(text, &options)
        .or_else(|_| {
            jsonc_parser::parse_to_serde_value(text, &jsonc_parser::ParseOptions::default())
        })
        .ok()?;
    Some(
        ["mcpServers", "servers"]
            .into_iter()
            .filter_map(|key| json.get(key).and_then(serde_json::Value::as_object))
            .flat_map(|servers| servers.iter().map(|(n, c)| (n.clone(), c.clone())))
            .collect(),
    )
}

pub(super) fn mcp_claim(text: &str) -> String {
    mcp_servers(text)
        .unwrap_or_default()
        .iter()
        .flat_map(|(name, cfg)| {
            std::iter::once(name.as_str())
                .chain(cfg.get("description").and_then(serde_json::Value::as_str))
        })
        .collect::<Vec<_>>()
        .join(" ")
}

pub(super) fn mcp_config(ctx: &mut Ctx<'_>) {
    // The file outlives the context: borrowed through its own reference, not copied.
    let file = ctx.file;
    let text = &file.text;
    let Some(servers) = mcp_servers(text) else {
        blob_rule(ctx, text, 1, Place::McpLaunch);
        return;
    };
    let line_of = |needle: &str| {
        text.find(needle).map_or(1, |at| {
            u32::try_from(text[..at].matches('\n').count() + 1).unwrap_or(1)
        })
    };
    for (server, cfg) in servers {
        let command = cfg
            .get("command")
            .and_then(serde_json::Value::as_str)
            .unwrap_or("");
        let args: Vec<String> = cfg
            .get("args")
            .and_then(serde_json::Value::as_array)
            .map(|a| {
                a.iter()
                    .filter_map(|v| v.as_str().map(str::to_owned))
                    .collect()
            })
            .unwrap_or_default();
        if command.is_empty() {
            continue;
        }
        let line = args.iter().max_by_key(|a| a.len()).map_or_else(
            || line_of(command),
            |a| line_of(&serde_json::to_string(a).unwrap_or_default()[1..]),
        );
        let before = ctx.out.len();
        // A server whose command is a network client: the client's messages (tool calls, and
        // what the agent passes in them) go to that host.
        let launched = base_name(command);
        if matches!(
            launched.as_str(),
            "curl" | "wget" | "nc" | "ncat" | "netcat" | "socat" | "telnet"
        ) {
            let refs: Vec<&str> = args.iter().map(String::as_str).collect();
            let host = host_of("", &refs);
            let stdin = refs.windows(2).any(|w| {
                matches!(
                    w[0],
                    "-d" | "--data" | "--data-binary" | "-T" | "--upload-file"
                ) && (w[1] == "@-" || w[1] == "-")
            }) || matches!(
                launched.as_str(),
                "nc" | "ncat" | "netcat" | "socat" | "telnet"
            );
            ctx.emit(
                EXFIL_CMD,
                0.8,
                line,
                &format!("{command} {}", args.join(" ")),
                format!(
                    "server `{server}` is `{launched}`: what the client sends goes to {}",
                    if host.name.is_empty() {
                        "a network peer".to_owned()
                    } else {
                        host.name.clone()
                    }
                ),
                Vec::new(),
                Place::Script,
                if stdin { -1 } else { -2 },
            );
        }
        // An interpreter given its program inline: read the program itself. Otherwise the
        // launch as one shell line, each argument quoted as the client passes it (no shell
        // expands it) — ssh's too, read there as a shell block's ssh is: what it sends, the
        // commands its options run here, and its remote command for what that runs from the
        // network only.
        let name = base_name(command);
        let words: Vec<&str> = args.iter().map(String::as_str).collect();
        let programs = given_programs(&name, &words);
        if programs.is_empty() || name == "ssh" {
            let quoted: Vec<String> = std::iter::once(command.to_owned())
                .chain(args.iter().map(|a| shell_quote(a)))
                .collect();
            ctx.unexpanded = true;
            shell_rules(ctx, &quoted.join(" "), line, Place::McpLaunch);
            ctx.unexpanded = false;
        } else {
            read_given(ctx, programs, line, Place::McpLaunch);
        }
        // PowerShell joins its words into one command line, read as PowerShell (a shell
        // block's lines are read so already; a launch's are not).
        if matches!(name.as_str(), "pwsh" | "powershell") {
            powershell_rules(ctx, &words.join(" "), line, Place::McpLaunch);
        }
        for f in &mut ctx.out[before..] {
            f.line = line;
            f.message = format!("server `{server}`: {}", f.message);
        }
        // Secrets given literally in the config's env, and command lines kept in a variable
        // a program runs (`"GIT_SSH_COMMAND": "…"`).
        if let Some(env) = cfg.get("env").and_then(serde_json::Value::as_object) {
            let variables: Vec<(&str, &str)> = env
                .iter()
                .map(|(k, v)| (k.as_str(), v.as_str().unwrap_or("")))
                .collect();
            for (at, code) in variable_command_lines(&variables) {
                let line = line_of(variables[at].0);
                read_given(ctx, vec![Given::local("sh", &code)], line, Place::McpLaunch);
            }
            for &(k, v) in &variables {
                let Some(decoded) = decode_blob(v).filter(|_| v.len() >= 16) else {
                    continue;
                };
                if DECODED_DANGER.is_match(&decoded) {
                    ctx.emit(
                        OBF_BLOB,
                        0.85,
                        line_of(k),
                        &format!("{k}={v} → {decoded}"),
                        format!("server `{server}`: environment value decodes to commands or URLs"),
                        Vec::new(),
                        Place::McpLaunch,
                        0,
                    );
                }
            }
        }
    }
}

/// `a` as one shell word.
pub(super) fn shell_quote(a: &str) -> String {
    if a.contains('\'') {
        format!(
            "\"{}\"",
            a.replace('\\', "\\\\")
                .replace('"', "\\\"")
                .replace('$', "\\$")
                .replace('`', "\\`")
        )
    } else {
        format!("'{a}'")
    }
}
