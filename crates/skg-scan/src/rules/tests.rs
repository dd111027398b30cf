//! The rules' unit tests: option grammars and readings checked case by case.

use super::{
    attacks::secret_name,
    blocks::{Reading, Script, shebang},
    commands::{Remote, effective_words, option_values, ssh_command, ssh_words},
    interpreters::{Run, interpreter_run, shell_run},
};
use skg_model::FileKind;

#[test]
fn a_shell_s_words_are_read_as_bash_reads_them() {
    let cases: &[(&[&str], Run<'_>)] = &[
        (&[], Run::Stdin),
        (&["-s", "--", "--yes"], Run::Stdin),
        (&["-euo", "pipefail"], Run::Stdin),
        (&["+o", "pipefail"], Run::Stdin),
        (&["-O", "extglob"], Run::Stdin),
        (&["--rcfile", "rc", "-i"], Run::Stdin),
        (&["-"], Run::Stdin),
        (&["-euo", "pipefail", "-c", "x"], Run::Code("x")),
        (&["-ce", "x"], Run::Code("x")),
        // Options go on past `-c`: the first word past them is the code.
        (&["-c", "-x", "x", "name"], Run::Code("x")),
        (&["-c", "--", "x"], Run::Code("x")),
        (&["--command=echo hi"], Run::Code("echo hi")),
        (&["--command", "echo hi"], Run::Code("echo hi")),
        (&["-c"], Run::Nothing),
        (&["-x", "i.sh", "a"], Run::File("i.sh")),
        (&["--", "i.sh"], Run::File("i.sh")),
        (&["-", "i.sh"], Run::File("i.sh")),
        (&["-norc", "i.sh"], Run::File("i.sh")),
        // `-s` reads stdin whatever words follow; they are its arguments.
        (&["-s", "i.sh"], Run::Stdin),
    ];
    for (args, want) in cases {
        assert_eq!(shell_run(args), *want, "{args:?}");
    }
    // bash sets `c` and `s` whatever the group's sign; a lone `+` is an empty group.
    assert_eq!(shell_run(&["+c", "x"]), Run::Code("x"));
    assert_eq!(shell_run(&["+", "-s"]), Run::Stdin);
    // `-n` checks the syntax only.
    assert_eq!(shell_run(&["-n", "install.sh"]), Run::Nothing);
    assert_eq!(
        shell_run(&["-n", "+n", "install.sh"]),
        Run::File("install.sh")
    );
}

#[test]
fn what_ssh_runs_remotely_and_what_xargs_runs() {
    let ssh = |args: &[&'static str]| ssh_command(args);
    let v = |n: &str, a: &[&'static str]| Some(Remote::Words(n.to_owned(), a.to_vec()));
    let code = |c: &str| Some(Remote::Code(c.to_owned()));
    assert_eq!(ssh(&["host", "bash", "-s"]), v("bash", &["-s"]));
    assert_eq!(
        ssh(&["-p", "22", "-i", "k", "-tt", "host", "sudo", "bash"]),
        v("bash", &[])
    );
    assert_eq!(
        ssh(&["-p22", "-oBatchMode=yes", "host", "bash -s"]),
        v("bash", &["-s"])
    );
    assert_eq!(ssh(&["-v", "--", "host"]), Some(Remote::Login));
    assert_eq!(ssh(&["host", "curl x | sh"]), code("curl x | sh"));
    // Options after the destination; several words holding syntax are joined.
    assert_eq!(ssh(&["host", "-t", "-P", "tag", "bash"]), v("bash", &[]));
    assert_eq!(
        ssh(&["host", "curl", "-s", "u", "|", "sh"]),
        code("curl -s u | sh")
    );
    // Nothing runs, or nothing is read.
    assert_eq!(ssh(&["-N", "-L", "8080:localhost:80", "host"]), None);
    assert_eq!(ssh(&["-fNT", "host"]), None);
    assert_eq!(ssh(&["-n", "host"]), None);
    assert_eq!(ssh(&["-n", "host", "uptime"]), v("uptime", &[]));
    assert_eq!(ssh(&["-p", "22"]), None);
    let eff = |n: &str, a: &[&'static str]| effective_words(n.to_owned(), a.to_vec());
    assert_eq!(
        eff("xargs", &["-0", "-I{}", "bash", "-c", "{}"]),
        ("bash".into(), vec![])
    );
    assert_eq!(
        eff("xargs", &["-I", "X", "sh", "-c", " X "]),
        ("sh".into(), vec![])
    );
    assert_eq!(
        eff("xargs", &["-i", "sh", "-c", "{}"]),
        ("sh".into(), vec![])
    );
    assert_eq!(eff("xargs", &["sh", "-c"]), ("sh".into(), vec![]));
    assert_eq!(
        eff("xargs", &["-I{}", "sh", "-c", "echo {}"]),
        ("sh".into(), vec!["-c", "echo {}"])
    );
    assert_eq!(
        eff("xargs", &["-I{}", "sh", "-c"]),
        ("sh".into(), vec!["-c"])
    );
    assert_eq!(eff("xargs", &["bash", "-n"]), ("bash".into(), vec!["-n"]));
    assert_eq!(
        eff("sudo", &["-u", "root", "bash", "-c", "x"]),
        ("bash".into(), vec!["-c", "x"])
    );
    // env's split string: its words are env's arguments again; quoted, a shell's code.
    assert_eq!(
        eff("env", &["-S", "A=1 bash -e", "x.sh"]),
        ("bash".into(), vec!["-e", "x.sh"])
    );
    assert_eq!(
        eff("env", &["--split-string=-i  python3"]),
        ("python3".into(), vec![])
    );
    assert_eq!(
        eff("env", &["-S", "bash -c 'id -u'", "x"]),
        ("bash".into(), vec!["-c", "id -u", "x"])
    );
    assert_eq!(
        eff("env", &["-vS", "A=\"x y\" B='z' python3\\_-u # c", "x"]),
        ("python3".into(), vec!["-u", "x"])
    );
    assert_eq!(
        eff("env", &["-iu", "HOME", "--split=bash\\c -x", "y"]),
        ("bash".into(), vec!["y"])
    );
    assert_eq!(eff("env", &["-S"]), ("env".into(), vec!["-S"]));
    // Nested split strings are read to a bound.
    let nested = ["-S"; 9];
    assert_eq!(eff("env", &nested).0, "env");
    // The commands ssh's options run on this host, whatever runs remotely.
    let local = |args: &[&'static str]| ssh_words(args).local;
    assert_eq!(
        local(&["-o", "ProxyCommand=nc %h %p", "host"]),
        vec!["nc %h %p"]
    );
    assert_eq!(
        local(&["-vNoproxycommand  sh -c x", "host"]),
        vec!["sh -c x"]
    );
    assert_eq!(
        local(&[
            "-o",
            "LocalCommand = id",
            "-o",
            "PermitLocalCommand=yes",
            "h"
        ]),
        vec!["id"]
    );
    assert_eq!(
        local(&["-o", "ProxyCommand=none", "-o", "ProxyJump=b", "h"]),
        Vec::<&str>::new()
    );
    assert_eq!(ssh(&["-N", "-o", "ProxyCommand=x", "h"]), None);
    assert_eq!(
        local(&["-G", "-o", "ProxyCommand=x", "h"]),
        Vec::<&str>::new()
    );
    assert_eq!(
        ssh(&["-o", "RemoteCommand=id -u", "h"]),
        Some(Remote::Code("id -u".into()))
    );
    assert_eq!(
        ssh(&["-o", "RemoteCommand=id", "h", "uptime"]),
        Some(Remote::Words("uptime".into(), vec![]))
    );
    assert_eq!(
        option_values(&["-avze", "ssh -p 2", "--", "-e", "x"], "BefTM", 'e'),
        vec!["ssh -p 2"]
    );
    assert_eq!(
        option_values(
            &["-Co", "ProxyCommand=a", "-oB", "-P", "-o"],
            "cDFiJloPSX",
            'o'
        ),
        vec!["ProxyCommand=a", "B"]
    );
}

#[test]
fn a_file_is_read_by_its_name_else_by_its_first_line() {
    assert_eq!(shebang("#!/bin/sh\nx"), Some("sh".into()));
    assert_eq!(shebang("#!/usr/bin/env bash"), Some("bash".into()));
    assert_eq!(shebang("#!/usr/bin/env -S bash -e"), Some("bash".into()));
    assert_eq!(shebang("#!/usr/bin/env -Sbash -e"), Some("bash".into()));
    assert_eq!(
        shebang("#!/usr/bin/env -S ${HOME}/.venv/bin/python3"),
        Some("python3".into())
    );
    assert_eq!(
        shebang("#!/usr/bin/env -i PATH=/bin python3"),
        Some("python3".into())
    );
    assert_eq!(shebang("#!"), None);
    assert_eq!(shebang("echo"), None);
    assert_eq!(
        Reading::of_interpreter("."),
        Some(Reading::Kind(FileKind::Shell))
    );
    assert_eq!(
        Reading::of_interpreter("python3"),
        Some(Reading::Kind(FileKind::Python))
    );
    assert_eq!(Reading::of_interpreter("osascript"), None);
    for (path, text, reading) in [
        ("s/install", "#!/bin/bash\n", Reading::Kind(FileKind::Shell)),
        (
            "s/run",
            "#!/usr/bin/env python3.12\n",
            Reading::Kind(FileKind::Python),
        ),
        (
            "s/run",
            "#!/usr/bin/env node\n",
            Reading::Kind(FileKind::JavaScript),
        ),
        (
            "s/run",
            "#!/usr/bin/perl -w\n",
            Reading::Lexical(Script::Perl),
        ),
        (
            "s/run",
            "#!/usr/bin/env ruby\n",
            Reading::Lexical(Script::Ruby),
        ),
        (
            "s/run",
            "#!/usr/bin/awk -f\n",
            Reading::Kind(FileKind::Other),
        ),
        (
            "s/run",
            "#!/usr/bin/env php8.2\n",
            Reading::Lexical(Script::Php),
        ),
        (
            "s/run",
            "#!/bin/busybox sh\n",
            Reading::Kind(FileKind::Shell),
        ),
        ("s/notes", "plain text\n", Reading::Kind(FileKind::Other)),
        ("s/x.rb", "", Reading::Lexical(Script::Ruby)),
        ("s/x.PL", "", Reading::Lexical(Script::Perl)),
        ("s/x.php", "", Reading::Lexical(Script::Php)),
        ("s/x.pm", "", Reading::Lexical(Script::Perl)),
        ("s/x.bat", "", Reading::Kind(FileKind::OtherScript)),
        // A name that says what the file is wins over its first line.
        ("s/x.py", "#!/bin/sh\n", Reading::Kind(FileKind::Python)),
        ("s/x.txt", "#!/bin/sh\n", Reading::Kind(FileKind::Text)),
    ] {
        assert_eq!(Reading::of(path, text), reading, "{path}");
    }
}

#[test]
fn an_interpreter_s_words_are_read_by_its_option_grammar() {
    let cases: &[(&str, &[&str], Option<Run<'_>>)] = &[
        (
            "python3",
            &["-W", "ignore", "-c", "x"],
            Some(Run::Code("x")),
        ),
        ("python3", &["-Ic", "x"], Some(Run::Code("x"))),
        ("python3", &["-cx"], Some(Run::Code("x"))),
        (
            "python3",
            &["-u", "/tmp/i.py"],
            Some(Run::File("/tmp/i.py")),
        ),
        (
            "python3",
            &["-m", "http.server", "-c", "x"],
            Some(Run::Nothing),
        ),
        ("python3", &["-"], Some(Run::Stdin)),
        ("python3", &["-s"], Some(Run::Stdin)),
        (
            "node",
            &["-r", "dotenv/config", "-e", "x"],
            Some(Run::Code("x")),
        ),
        (
            "node",
            &["--require", "a", "--eval=x"],
            Some(Run::Code("x")),
        ),
        ("node", &["--print", "x"], Some(Run::Code("x"))),
        (
            "node",
            &["server.js", "-e", "x"],
            Some(Run::File("server.js")),
        ),
        ("node", &[], Some(Run::Stdin)),
        ("deno", &["run", "-A", "x.ts"], Some(Run::File("x.ts"))),
        ("deno", &["eval", "x"], Some(Run::Code("x"))),
        ("deno", &["fmt"], Some(Run::Nothing)),
        ("bun", &["install"], Some(Run::Nothing)),
        ("bun", &["x.ts"], Some(Run::File("x.ts"))),
        // `-l` takes digits only: `-lne` is `-l -n -e`; `-i` takes the rest: `-pie` edits
        // in place keeping a copy with `e` added to its name, and gives no code.
        ("perl", &["-lne", "x"], Some(Run::Code("x"))),
        ("perl", &["-0777", "-ne", "x"], Some(Run::Code("x"))),
        ("perl", &["-pie", "x"], Some(Run::File("x"))),
        (
            "perl",
            &["-I", "lib", "-Mstrict", "-e", "x"],
            Some(Run::Code("x")),
        ),
        ("ruby", &["-r", "json", "-e", "x"], Some(Run::Code("x"))),
        ("php", &["-d", "a=1", "-r", "x"], Some(Run::Code("x"))),
        ("php", &["-f", "i.php"], Some(Run::File("i.php"))),
        (
            "pwsh",
            &["-NoProfile", "-ExecutionPolicy", "Bypass", "-Command", "x"],
            Some(Run::Code("x")),
        ),
        ("pwsh", &["-File", "i.ps1"], Some(Run::File("i.ps1"))),
        ("node", &["-pe", "x"], Some(Run::Code("x"))),
        ("node", &["--check", "lib.js"], Some(Run::Nothing)),
        ("node", &["-c", "lib.js"], Some(Run::Nothing)),
        (
            "deno",
            &["run", "-A", "-r", "x.ts"],
            Some(Run::File("x.ts")),
        ),
        (
            "deno",
            &["run", "-c", "deno.json", "x.ts"],
            Some(Run::File("x.ts")),
        ),
        (
            "ruby",
            &["--encoding", "UTF-8", "x.rb"],
            Some(Run::File("x.rb")),
        ),
        ("ruby", &["-c", "lib.rb"], Some(Run::Nothing)),
        ("php", &["-l", "plugin.php"], Some(Run::Nothing)),
        (
            "php",
            &["-S", "0.0.0.0:8000", "router.php"],
            Some(Run::File("router.php")),
        ),
        // `perl -c` runs `BEGIN` blocks; `deno run --check` runs after checking.
        ("perl", &["-c", "x.pl"], Some(Run::File("x.pl"))),
        ("deno", &["run", "--check", "x.ts"], Some(Run::File("x.ts"))),
        (
            "deno",
            &["run", "--env-file", "x.ts"],
            Some(Run::File("x.ts")),
        ),
        ("node", &["-p", "-e", "x"], Some(Run::Code("x"))),
        (
            "pwsh",
            &["-of", "Text", "-Command", "x"],
            Some(Run::Code("x")),
        ),
        ("pwsh", &["-in", "-Command", "x"], Some(Run::Code("x"))),
        ("pwsh", &["-cwa", "x"], Some(Run::Code("x"))),
        ("pwsh", &["-NoProfile", "-Command", "-"], Some(Run::Stdin)),
        ("pwsh", &["-File", "-"], Some(Run::Stdin)),
        (
            "pwsh",
            &["-ex", "bypass", "-enc", "SQBFAFgA"],
            Some(Run::Nothing),
        ),
        ("pwsh", &["-co", "x"], Some(Run::Code("x"))),
        ("powershell", &["-nop", "x"], Some(Run::Code("x"))),
        ("source", &["/dev/stdin"], Some(Run::Stdin)),
        ("source", &["env.sh"], Some(Run::File("env.sh"))),
        ("curl", &["-e", "x"], None),
    ];
    for (name, args, want) in cases {
        assert_eq!(interpreter_run(name, args), *want, "{name} {args:?}");
    }
}

#[test]
fn a_variable_is_a_secret_by_its_words() {
    for name in [
        "GITHUB_TOKEN",
        "OPENAI_API_KEY",
        "APIKEY",
        "AWS_SECRET_ACCESS_KEY",
        "DB_PASSWORD",
        "SSH_PASS",
        "OAUTH",
        "DATABASE_URL",
        "SENTRY_DSN",
        "API_KEYS",
        "BOT_TOKEN_2",
        "TOKEN",
        "PASSWORD",
        // Digits after a word's letters, plurals, longer nouns.
        "OPENAI_API_KEY1",
        "GH_TOKEN2",
        "GITHUB_TOKENS",
        "SSH_PASSPHRASE",
        "HTTP_AUTHORIZATION",
        "SSH_KEYPAIR",
        "PUBSUB_KEY",
        // A noun followed by another, an encoding, a header, a qualifier of its own.
        "TOKEN_SECRET",
        "API_KEY_B64",
        "GITHUB_AUTH_HEADER",
        "GH_TOKEN_PROD",
        "API_KEY_V2",
        "STRIPE_SECRET_KEY_LIVE",
        "OP_SESSION_MY",
        "VAULT_SECRET_ID",
        "INPUT_TOKEN",
        "SOURCE_TOKEN",
    ] {
        assert!(secret_name(name), "{name}");
    }
    for name in [
        // A noun that only starts a word.
        "AUTHOR",
        "KEYWORD",
        "PASSPORT",
        // An ambiguous noun alone.
        "KEY",
        "PASS",
        "SESSION",
        // What names or describes a secret.
        "KEY_ID",
        "KEY_NAME",
        "AUTH_URL",
        "SESSION_DIR",
        "PASSWORD_LENGTH",
        "COOKIE_JAR",
        "KEY_VAULT_NAME",
        "TMUX_SESSION_NAME",
        "BAGS_TOKEN_DESC",
        "AUTH0_DOMAIN",
        "TOKEN_LIMIT",
        "TOKENS_USED",
        "PASS_RATE",
        "AUTH_METHOD",
        "SESSION_TIMEOUT",
        "COOKIE_DOMAIN",
        "PASSWORD_POLICY",
        "SECRET_VERSION",
        // Keys named public.
        "PUBLIC_KEY",
        "PUBKEY",
        "SSH_PUB_KEY",
        "STRIPE_PUBLISHABLE_KEY",
        // Tokens that are counts or assets.
        "MAX_TOKENS",
        "NUM_TOKEN",
        "INPUT_TOKENS",
        "SELL_TOKEN",
        "SRC_TOKEN",
        "BAGS_TOKEN_MINT",
        "TOKEN_ADDRESS",
        "SWAP_FEE_TOKEN",
        "TOKEN_IN",
        // No noun at all.
        "HOME",
        "CHAIN_ID",
    ] {
        assert!(!secret_name(name), "{name}");
    }
}
