//! The rules. Each reads one kind of text (instructions, shell commands, scripts, metadata) and
//! reports findings with the context that lowered or raised them.

use std::{
    collections::{BTreeMap, HashMap, HashSet},
    sync::LazyLock,
};

use base64::Engine as _;
use regex::Regex;
use skg_model::{FileKind, FileText, PackageText, SkillKind};
use skg_syntax::{
    Language, ShellCommand, ShellFacts, Unread,
    shell_bounds::{MAX_MENDING_PASSES, MAX_PIPELINE_STAGES, MAX_PIPES_PER_PARSE},
};

use crate::{
    Category, Finding, Severity,
    markdown::{Kind, Segment, segments},
};

/// A rule: its id, category, severity before context, and what it means.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Rule {
    /// `SKG-…`.
    pub id: &'static str,
    /// Short kebab-case name (SARIF `name`).
    pub name: &'static str,
    /// What it is about.
    pub category: Category,
    /// Severity before context.
    pub severity: Severity,
    /// One sentence: what it finds and why it matters.
    pub help: &'static str,
}

macro_rules! rules {
    ($($konst:ident = $id:literal, $name:literal, $cat:ident, $sev:ident, $help:literal;)*) => {
        $(const $konst: Rule = Rule { id: $id, name: $name, category: Category::$cat, severity: Severity::$sev, help: $help };)*
        /// Every rule, by id.
        pub const RULES: &[Rule] = &[$($konst),*];
    };
}

rules! {
    INJ_OVERRIDE = "SKG-INJ-001", "instruction-override", PromptInjection, High,
        "Tells the agent to ignore, forget or override its previous instructions, rules or guardrails.";
    INJ_ROLE = "SKG-INJ-002", "role-hijack", PromptInjection, Medium,
        "Gives the agent a new identity or mode (developer/DAN mode, fake system markers).";
    INJ_CONCEAL = "SKG-INJ-003", "concealment", PromptInjection, High,
        "Tells the agent to keep something from the user or to act silently.";
    INJ_SECRET = "SKG-INJ-004", "secret-request", Exfiltration, High,
        "Asks the agent to send, reveal or collect secrets (tokens, keys, credentials, environment).";
    INJ_HIDDEN = "SKG-INJ-005", "hidden-instruction", PromptInjection, Medium,
        "Addresses the agent in an HTML comment, which a reader of the rendered skill never sees.";
    INJ_UNICODE = "SKG-INJ-006", "invisible-unicode", PromptInjection, Medium,
        "Invisible characters: Unicode tag characters (hidden ASCII), bidirectional overrides, zero-width runs.";
    RCE_DOWNLOAD = "SKG-RCE-001", "download-and-execute", RemoteExecution, High,
        "Code fetched from the network is run at once (curl|sh, interpreter -c \"$(curl …)\", download then execute).";
    RCE_DECODE = "SKG-RCE-002", "decode-and-execute", RemoteExecution, High,
        "Encoded data is decoded and run (base64 -d | sh, eval of decoded text, exec(b64decode(…))).";
    RCE_ARCHIVE = "SKG-RCE-003", "protected-archive", RemoteExecution, Medium,
        "A password-protected archive is unpacked (hides its content from scanners), worse when just downloaded.";
    SHELL_REVERSE = "SKG-SHELL-001", "reverse-shell", ReverseShell, Critical,
        "An interactive shell is handed to a network peer (nc -e, /dev/tcp redirection, socat exec, socket + dup2).";
    PERSIST = "SKG-PERSIST-001", "persistence", Persistence, High,
        "Writes commands into shell start-up files, cron, SSH authorized_keys, or system services.";
    EVADE = "SKG-EVADE-001", "defense-evasion", DefenseEvasion, High,
        "Switches off security tools or wipes logs and shell history.";
    DESTROY = "SKG-EVADE-002", "destructive-command", DefenseEvasion, High,
        "Deletes or overwrites the system or the home folder (rm -rf /, dd to a disk, mkfs).";
    PRIVESC = "SKG-PRIV-001", "privilege-escalation", PrivilegeEscalation, High,
        "setuid bits, sudoers edits, admin-group membership, world-writable system paths.";
    EXFIL_CMD = "SKG-EXFIL-001", "exfiltration-command", Exfiltration, Critical,
        "A command sends the environment, credential files or secrets to a network peer (HTTP body, DNS name, socket).";
    EXFIL_CODE = "SKG-EXFIL-002", "exfiltration-code", Exfiltration, High,
        "Code reads credentials or the whole environment and makes a network call (flow approximated within one file).";
    CRED_READ = "SKG-CRED-001", "credential-read", CredentialAccess, Medium,
        "Reads a credential store: SSH keys, cloud credentials, browser profiles, keychains, .env, /etc/shadow.";
    OBF_CODE = "SKG-OBF-001", "obfuscated-code", Obfuscation, Medium,
        "Code assembled or hidden to defeat reading: long encoded literals, __import__/getattr chains, char-code assembly.";
    OBF_BLOB = "SKG-OBF-002", "encoded-instructions", Obfuscation, High,
        "A base64 or hex blob decodes to commands, URLs or instructions.";
    OBF_SECRET = "SKG-OBF-003", "encoded-secret", Exfiltration, Medium,
        "A secret is encoded (base64/hex) — the usual step before smuggling it out in a URL or DNS name.";
    OBF_UNREAD = "SKG-OBF-004", "unread-shell", Obfuscation, Medium,
        "Shell text shaped past any real command (a pipeline of hundreds of stages), which the scanner does not parse (its parser's cost grows with the square of such a pipeline): what it runs is unknown.";
    MINE = "SKG-MINE-001", "crypto-miner", CryptoMining, High,
        "Runs a cryptocurrency miner or talks to a mining pool (stratum).";
    TYPO = "SKG-SUPPLY-001", "typosquat", SupplyChain, Medium,
        "A name one edit away from a popular package or skill.";
    INDEX = "SKG-SUPPLY-002", "foreign-package-index", SupplyChain, Medium,
        "Installs packages from an index other than the public one (--extra-index-url, --registry): dependency confusion.";
    PURPOSE = "SKG-DECEPT-001", "purpose-mismatch", Deception, Medium,
        "Declares a local purpose (formatter, converter, checker) but sends data over the network.";
    BACKDOOR = "SKG-DECEPT-002", "backdoored-copy", Deception, High,
        "A copy of another package (same name and description) that adds dangerous commands or code the other copy lacks.";
    TOOL_READ = "SKG-TOOL-001", "tool-file-read", Exfiltration, High,
        "A tool's description or schema tells the agent to read credential stores or agent configuration (the call itself is the way out).";
    TOOL_SHADOW = "SKG-TOOL-002", "tool-shadowing", PromptInjection, High,
        "A tool's description changes other calls: redirects their recipient, adds hidden copies, or rules how other tools are used.";
    LOOKALIKE = "SKG-DECEPT-003", "lookalike-host", Deception, Medium,
        "A web address whose host is written with look-alike letters of another script (gіthub.com with a Cyrillic і), directly or as punycode: it reads as one host and reaches another.";
    TOOL_PREFER = "SKG-TOOL-003", "tool-preference", Deception, Medium,
        "A tool's description tells the agent to always pick it or never use other tools.";
}

/// Names that count as popular for the typosquat rule: skill names found in at least two
/// registries of the scan, and the most-installed packages and tools (`popular-names.txt`).
#[derive(Debug)]
pub(crate) struct NameIndex {
    popular: HashSet<String>,
    /// Every popular name of at least five letters, and every one-letter deletion of it → the
    /// names it came from (a symmetric-delete index: two words one edit apart share a key).
    deletes: std::collections::HashMap<String, Vec<String>>,
}

const POPULAR: &str = include_str!("popular-names.txt");

/// Longest name the typosquat rule compares, in bytes: a name's one-letter deletions cost the
/// square of its length, and a crafted name of a megabyte (in two registries, so "popular")
/// would stall the scan; no package name people type is this long.
const MAX_NAME_BYTES: usize = 64;

impl NameIndex {
    pub(crate) fn new(packages: &[PackageText]) -> NameIndex {
        let mut popular: HashSet<String> = POPULAR
            .lines()
            .map(str::trim)
            .filter(|l| !l.is_empty() && !l.starts_with('#'))
            .map(str::to_owned)
            .collect();
        let mut seen: BTreeMap<String, HashSet<&str>> = BTreeMap::new();
        // Skill names only: a tool's name is not what anything is installed by.
        for p in packages.iter().filter(|p| p.kind == SkillKind::Skill) {
            if let Some(n) = &p.name {
                seen.entry(n.to_ascii_lowercase())
                    .or_default()
                    .insert(p.registry.as_str());
            }
        }
        popular.extend(
            seen.into_iter()
                .filter(|(_, r)| r.len() >= 2)
                .map(|(n, _)| n),
        );
        let mut deletes: std::collections::HashMap<String, Vec<String>> =
            std::collections::HashMap::new();
        for p in popular
            .iter()
            .filter(|p| (5..=MAX_NAME_BYTES).contains(&p.len()))
        {
            for k in std::iter::once(p.clone()).chain(one_deletions(p)) {
                deletes.entry(k).or_default().push(p.clone());
            }
        }
        for v in deletes.values_mut() {
            v.sort();
            v.dedup();
        }
        NameIndex { popular, deletes }
    }

    /// The popular name `word` is one edit (insert, delete, substitute, swap) away from.
    fn near(&self, word: &str) -> Option<&str> {
        if !(5..=MAX_NAME_BYTES).contains(&word.len()) || self.popular.contains(word) {
            return None;
        }
        std::iter::once(word.to_owned())
            .chain(one_deletions(word))
            .filter_map(|k| self.deletes.get(&k))
            .flatten()
            .filter(|p| strsim::damerau_levenshtein(p, word) == 1)
            .min()
            .map(String::as_str)
    }
}

/// `word` with each one character removed.
fn one_deletions(word: &str) -> impl Iterator<Item = String> + '_ {
    word.char_indices().map(move |(i, c)| {
        let mut w = String::with_capacity(word.len());
        w.push_str(&word[..i]);
        w.push_str(&word[i + c.len_utf8()..]);
        w
    })
}

/// What the package says it is for.
struct Purpose {
    /// Name, description, opening paragraphs and folder, lowercase.
    claim: String,
    /// Name and description only, lowercase: what the skill declares itself to be.
    declared: String,
    /// Security work (detection, pentest, forensics…): attack patterns may be described.
    security: bool,
    /// A local job (format, convert, count…) that has no reason to send data anywhere.
    local: Option<String>,
}

/// Headings under which attacks are described, listed or quoted, not instructed.
static DESCRIBES: LazyLock<Regex> = LazyLock::new(|| {
    re(
        r"(?i)(\b(?:malicious|attacks?|threats?|detection|detects?|detected|blocked|blocks|blocklist|denylist|red flags?|dangerous|anti-?patterns?|examples? of|indicators?|signatures?|iocs?|vulnerab\w+|exploits?|payloads?|injections?|what (?:it|we|this) (?:catches|finds|detects|flags|blocks)|bad examples?|never do|do not|don't|exfiltration|privilege escalation|persistence|obfuscation|backdoors?|reverse shells?|command injection|typosquat\w*|stagers?|malware|(?:sample|example) output|output)\b|❌|⛔|🚫)",
    )
});
static SECURITY_PURPOSE: LazyLock<Regex> = LazyLock::new(|| {
    re(
        r"(?i)\b(security|secure|pentest\w*|penetration|red[- ]?team\w*|blue[- ]?team|malware|threat|forensic\w*|incident[- ]response|vulnerabilit\w*|exploit\w*|ctf|siem|yara|sigma|hardening|attacks?|injections?|offensive|osint|soc2?|cve|phishing|jailbreaks?|auditor|vetting|vet|malicious|guardrails?|defen[cs]e|defender|firewall)\b",
    )
});
static LOCAL_PURPOSE: LazyLock<Regex> = LazyLock::new(|| {
    re(
        r"(?i)\b(formatter|linter|converter|counter|sorter|calculator|parser|validator|checker|hasher|renamer|prettifier|minifier|beautifier|annotator|inspector|splitter|normalizer|reporter|previewer|differ)\b",
    )
});

/// A rule's regular expression, with ASCII word boundaries: the rules' words are ASCII, and a
/// Unicode `\b` makes the regex engine leave its fast DFA on any non-ASCII text.
fn re(s: &str) -> Regex {
    let ascii = s.replace("\\b", "(?-u:\\b)");
    Regex::new(&ascii).unwrap_or_else(|e| panic!("static regex {s}: {e}"))
}

/// Where a piece of code sits, which decides who runs it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Place<'a> {
    /// Text, a code block or inline code under `section`, itself under the headings of
    /// `outer` (one a line, outermost first; in a table: `table`).
    Markdown {
        section: &'a str,
        outer: &'a str,
        /// The first line of `outer` is the file's title.
        titled: bool,
        table: bool,
    },
    /// Not shown when the markdown is rendered (in an HTML comment, a link reference
    /// definition: what hides it, as a phrase): hidden from a reader, read by the model.
    Hidden(&'static str),
    /// The command an MCP client runs to start a server.
    McpLaunch,
    /// A script file of the package.
    Script,
}

struct Ctx<'a> {
    pkg: &'a PackageText,
    file: &'a FileText,
    file_hash: String,
    purpose: &'a Purpose,
    names: &'a NameIndex,
    out: Vec<Finding>,
    /// Downloads this file showed as an installation step (under an installation heading), by
    /// address: the first lowering of each. The same address run again further on ("Need to
    /// reinstall?" under "Troubleshooting") is that step.
    install_steps: BTreeMap<String, InstallNote>,
    /// Here-documents being read inside one another (each is read again whole by the level
    /// below it, so the depth is bounded: a text of nested documents would cost its length
    /// times its depth, and the stack).
    heredoc_depth: usize,
    /// The shell text being read is an MCP launch's words, which no shell expands (the client
    /// expands `${NAME}` only), or a program ssh hands another host from them.
    unexpanded: bool,
}

impl Ctx<'_> {
    /// The file being read is a program: what it holds runs. A script by its extension (the
    /// languages the rules parse, Ruby, Perl and PHP, which they read lexically, and Windows
    /// batch files, which they read as text) or by a `#!` first line.
    fn is_script(&self) -> bool {
        FileKind::of(&self.file.path).is_script() || self.file.text.starts_with("#!")
    }

    /// The file being read is the package's main file (its `SKILL.md`).
    fn is_main(&self) -> bool {
        self.pkg
            .files
            .first()
            .is_some_and(|f| f.path == self.file.path)
    }

    #[allow(clippy::too_many_arguments)]
    fn emit(
        &mut self,
        rule: Rule,
        confidence: f64,
        line: u32,
        snippet: &str,
        message: String,
        mut context: Vec<Note>,
        place: Place<'_>,
        adjust: i32,
    ) {
        let mut severity = rule.severity;
        let mut adjust = adjust;
        // A tool's description is not documentation: how its author frames a line (quotes, "for
        // example", a heading, a table, a stated purpose) does not lower what it tells the model.
        // What a rule judges of the behaviour itself (an API key sent to its own API, a common
        // tool's documented installer host) still counts.
        let tool = self.pkg.kind == SkillKind::Tool;
        if tool {
            context.retain(|n| {
                adjust += n.framing;
                n.framing == 0
            });
        }
        match place {
            Place::Hidden(how) => {
                context.push(format!("raised: hidden in {how}").into());
                adjust += 1;
            }
            Place::McpLaunch => {
                context.push("raised: runs whenever the MCP client starts the server".into());
                adjust += 1;
            }
            Place::Markdown { .. } if tool => {}
            Place::Markdown { section, table, .. } => {
                if let Some(m) = DESCRIBES.find(section) {
                    context.push(
                        format!(
                            "lowered: under \"{section}\" (\"{}\"), which describes attacks rather than instructing them",
                            m.as_str()
                        )
                        .into(),
                    );
                    adjust -= 1;
                } else if table {
                    context.push(
                        "lowered: in a table, where commands are listed rather than run".into(),
                    );
                    adjust -= 1;
                }
            }
            Place::Script => {}
        }
        // Prose of a security skill may describe an attack; a script runs what it holds, so a
        // stated purpose never lowers a finding in a script (a description saying "security"
        // would otherwise take a reverse shell in `scripts/` from critical to medium).
        if self.purpose.security
            && !tool
            && !matches!(place, Place::McpLaunch | Place::Hidden(_))
            && !self.is_script()
        {
            context.push(
                "lowered: the skill's stated purpose is security work, so the pattern may be described rather than instructed"
                    .into(),
            );
            adjust -= 2;
        }
        for _ in 0..adjust.max(0) {
            severity = severity.raise();
        }
        for _ in 0..(-adjust).max(0) {
            severity = severity.lower();
        }
        self.out.push(Finding {
            skill_id: self.pkg.id.clone(),
            rule: rule.id.to_owned(),
            category: rule.category,
            severity,
            base_severity: rule.severity,
            confidence,
            path: self.file.path.clone(),
            line,
            snippet: clip(snippet),
            message,
            context: context.into_iter().map(|n| n.text).collect(),
            file_hash: self.file_hash.clone(),
            acknowledged: false,
            entry_line: self.pkg.entry_line,
            entry_column: self.pkg.entry_column,
        });
    }
}

/// A context note as a rule writes it: its words, and — when the note lowers the finding because
/// of how the text is framed (inside quotes, a sentence discussing the phrase, an installation
/// heading) rather than because of what it does — by how many steps. A tool's description is not
/// documentation, so `emit` drops the framing notes of a tool's finding and undoes their steps;
/// what a rule judges of the behaviour itself (a common tool's documented installer host) stays.
#[derive(Clone)]
struct Note {
    text: String,
    /// Steps this note lowered the finding by through framing; 0 for any other note.
    framing: i32,
}

impl Note {
    /// A note that lowers by `steps` because of how the text is framed.
    fn framing(text: impl Into<String>, steps: i32) -> Self {
        Self {
            text: text.into(),
            framing: steps,
        }
    }
}

impl From<String> for Note {
    fn from(text: String) -> Self {
        Self { text, framing: 0 }
    }
}

impl From<&str> for Note {
    fn from(text: &str) -> Self {
        text.to_owned().into()
    }
}

/// One line, whitespace collapsed, at most 200 characters.
fn clip(s: &str) -> String {
    // Control characters (an ESC decoded from tag characters, say) would reach a terminal that
    // prints the snippet: each is shown as U+FFFD.
    let one = crate::printable(&s.split_whitespace().collect::<Vec<_>>().join(" "));
    if one.chars().count() <= 200 {
        one
    } else {
        let mut t: String = one.chars().take(199).collect();
        t.push('…');
        t
    }
}

/// Every finding of one package.
pub(crate) fn scan_package(pkg: &PackageText, names: &NameIndex) -> Vec<Finding> {
    let main = pkg.files.first();
    let name = pkg
        .name
        .clone()
        .unwrap_or_else(|| pkg.root.rsplit('/').next().unwrap_or("").to_owned());
    let description = pkg.description.clone().unwrap_or_default();
    // What the skill says it is: name, description, and its opening paragraph (for a skill
    // without a description, that is what a reader sees first).
    // The main file's segments, cut once: for the opening below and for its rules.
    // A catalog's tool is one text, markdown as extract writes it, whatever its path says.
    let tool = pkg.kind == SkillKind::Tool;
    let mut main_segments: Option<Vec<Segment>> = main
        .filter(|f| tool || f.path.to_ascii_lowercase().ends_with(".md"))
        .map(|f| segments(&f.text));
    let opening: String = main_segments
        .iter()
        .flatten()
        .filter(|s| matches!(s.kind, Kind::Prose | Kind::Heading))
        .take(3)
        .map(|s| s.text.as_str())
        .collect::<Vec<_>>()
        .join(" ");
    // An MCP config declares its purpose in its servers' names and descriptions.
    let opening = if main_segments.is_none()
        && let Some(f) = main
    {
        mcp_claim(&f.text)
    } else {
        opening
    };
    let opening: String = opening.chars().take(400).collect();
    let claim = format!("{name} {description} {opening}");
    let purpose = Purpose {
        claim: format!("{claim} {}", pkg.root).to_ascii_lowercase(),
        // The name as written: a skill without one is named by its folder, which vouches for
        // nothing (a repository's name costs nothing).
        declared: format!("{} {description}", pkg.name.as_deref().unwrap_or(""))
            .to_ascii_lowercase(),
        security: SECURITY_PURPOSE.is_match(&claim),
        local: LOCAL_PURPOSE.find(&claim).map(|m| m.as_str().to_owned()),
    };
    let mut all = Vec::new();
    for file in &pkg.files {
        let mut ctx = Ctx {
            pkg,
            file,
            file_hash: blake3::hash(file.text.as_bytes()).to_hex().to_string(),
            purpose: &purpose,
            names,
            out: Vec::new(),
            install_steps: BTreeMap::new(),
            heredoc_depth: 0,
            unexpanded: false,
        };
        let lower = file.path.to_ascii_lowercase();
        let fname = lower.rsplit('/').next().unwrap_or("");
        unicode_rule(&mut ctx);
        lookalike_rule(&mut ctx);
        if tool {
            let segs = match main_segments.take() {
                Some(m) => m,
                None => segments(&file.text),
            };
            // A host shows the model the raw text: what markdown puts in a code block or a
            // comment is read as an instruction all the same.
            control_rule(&mut ctx);
            tool_rules(&mut ctx);
            for seg in segs
                .iter()
                .filter(|s| matches!(s.kind, Kind::Code(_) | Kind::InlineCode))
            {
                let place = Place::Markdown {
                    section: &seg.section,
                    outer: &seg.outer,
                    titled: seg.titled,
                    table: seg.table,
                };
                instruction_rules(&mut ctx, &seg.text, seg.line, place);
            }
            markdown_rules(&mut ctx, segs);
        } else if fname == ".mcp.json" || fname == "mcp.json" {
            mcp_config(&mut ctx);
        } else {
            match Reading::of(&file.path, &file.text) {
                Reading::Kind(FileKind::Markdown) => {
                    let segs = match main_segments.take().filter(|_| ctx.is_main()) {
                        Some(m) => m,
                        None => segments(&file.text),
                    };
                    markdown_rules(&mut ctx, segs);
                }
                Reading::Kind(FileKind::Shell) => {
                    shell_rules(&mut ctx, &file.text, 1, Place::Script);
                    blob_rule(&mut ctx, &file.text, 1, Place::Script);
                }
                Reading::Kind(FileKind::Python) => {
                    code_rules(&mut ctx, Language::Python, &file.text, 1, Place::Script);
                }
                Reading::Kind(FileKind::JavaScript) => {
                    code_rules(&mut ctx, Language::JavaScript, &file.text, 1, Place::Script);
                }
                Reading::Kind(FileKind::TypeScript) => {
                    code_rules(&mut ctx, Language::TypeScript, &file.text, 1, Place::Script);
                }
                Reading::Kind(FileKind::PowerShell) => {
                    powershell_rules(&mut ctx, &file.text, 1, Place::Script);
                    blob_rule(&mut ctx, &file.text, 1, Place::Script);
                }
                Reading::Lexical(script) => {
                    script_rules(&mut ctx, script, &file.text, 1, Place::Script);
                    blob_rule(&mut ctx, &file.text, 1, Place::Script);
                }
                Reading::Kind(FileKind::OtherScript | FileKind::Text | FileKind::Other) => {
                    blob_rule(&mut ctx, &file.text, 1, Place::Script);
                }
            }
        }
        all.extend(ctx.out);
    }
    // Metadata: the name, and what the package says it is against what it does.
    if let Some(main) = main {
        let mut ctx = Ctx {
            pkg,
            file: main,
            file_hash: blake3::hash(main.text.as_bytes()).to_hex().to_string(),
            purpose: &purpose,
            names,
            out: Vec::new(),
            install_steps: BTreeMap::new(),
            heredoc_depth: 0,
            unexpanded: false,
        };
        // A tool is called by its name, not installed by it: no name to squat on.
        if !tool {
            typosquat_rule(&mut ctx, &name);
        }
        if let Some(local) = &purpose.local {
            let sends = all.iter().find(|f| {
                matches!(f.category, Category::Exfiltration)
                    || f.rule == RCE_DOWNLOAD.id
                    || f.rule == SHELL_REVERSE.id
            });
            if let Some(f) = sends {
                let msg = format!(
                    "declares a local purpose (\"{local}\") but {} at {}:{}",
                    f.message, f.path, f.line
                );
                let snippet = format!("{name}: {description}");
                ctx.emit(PURPOSE, 0.6, 1, &snippet, msg, Vec::new(), Place::Script, 0);
            }
        }
        all.extend(ctx.out);
    }
    all
}

// ---------------------------------------------------------------- markdown

// ---------------------------------------------------------------- tools

/// Verbs of taking a file's content, as an instruction ("reads" describes what a tool does).
static TOOL_READ_VERB: LazyLock<Regex> = LazyLock::new(|| {
    re(r"(?i)\b(read|open|cat|load|include|attach|retrieve|fetch|collect|copy|grab)\b")
});
/// The agent host's own configuration (where its servers' keys are) and shell histories.
static AGENT_CONFIG: LazyLock<Regex> = LazyLock::new(|| {
    re(
        r"(?i)(\bmcp[_-]?(?:config|settings)?\.json\b|claude_desktop_config\.json|cline_mcp_settings\.json|~/\.cursor\b|\.cursor/|~/\.claude\b|~/\.codex\b|~/\.config/(?:claude|cursor|github-copilot|gh)\b|\.(?:bash|zsh)_history\b|/etc/passwd\b|\.npmrc\b|\.pypirc\b)",
    )
});
/// Handing what was read to the call.
static TOOL_PASS: LazyLock<Regex> = LazyLock::new(|| {
    re(
        r"(?i)\b(pass|put|include|insert|add|send|provide|place|append|paste|supply|fill)\b[^.\n]{0,60}\b(content|contents|it|them|text|value)\b",
    )
});
/// Handing a file's content to the call with no reading verb ("provide the contents of X as …").
static CONTENT_OF: LazyLock<Regex> = LazyLock::new(|| {
    re(
        r"(?i)\b(?:pass|put|include|insert|add|send|provide|place|append|paste|supply|fill\s+in|use|upload|access|get|take)\s+(?:the\s+)?(?:full\s+|whole\s+|entire\s+)?(?:content|contents|text)\s+of\b",
    )
});
/// A passive or descriptive "is (automatically) read from" (the tool reads it, nobody is told to);
/// not after a modal ([`MODAL_PASSIVE`]: "must be read and passed" is an instruction).
static PASSIVE: LazyLock<Regex> =
    LazyLock::new(|| re(r"(?i)\b(?:is|are|be|been|being|was|were|gets?)\s+(?:\w+ly\s+)?$"));
static MODAL_PASSIVE: LazyLock<Regex> = LazyLock::new(|| {
    re(
        r"(?i)\b(?:must|should|shall|needs?\s+to|ha(?:s|ve)\s+to)\s+(?:\w+ly\s+)?be\s+(?:\w+ly\s+)?$",
    )
});
/// Windows spellings of secret paths.
static WINDOWS_SECRET: LazyLock<Regex> = LazyLock::new(|| {
    re(
        r"(?i)(\\\.ssh\\id_|\\\.aws\\credentials|\\\.cursor\\mcp\.json|\\claude\\claude_desktop_config\.json|\\\.docker\\config\.json|\\\.git-credentials)",
    )
});
/// A literal destination: an email address, a URL, a phone number, a wallet address.
static LITERAL_TARGET: LazyLock<Regex> = LazyLock::new(|| {
    re(r"(?i)([\w.+-]+@[\w-]+\.[\w.-]+|https?://|\+\d[\d\s().-]{7,}|\b0x[0-9a-f]{8,})")
});
/// Setting a recipient to a literal address ("set the recipient to x@y").
static SET_TARGET: LazyLock<Regex> = LazyLock::new(|| {
    re(
        r"(?i)\b(?:set|override|use)\s+(?:the\s+|its\s+)?(?:recipients?|receivers?|to[\s_-]address|destination\s+address|payee|beneficiary)\s+(?:to|with|as)\b",
    )
});
/// Redirecting a call's recipient ("change the recipient to …") or sending everything to someone
/// ("send all emails to …").
static REDIRECT: LazyLock<Regex> = LazyLock::new(|| {
    re(
        r"(?i)(\b(?:change|replace|redirect|switch|swap)\s+(?:(?:the|its|their|every|each|all)\s+(?:\w+\s+)?)?(?:recipients?|receivers?|destination\s+address|to[\s_-]address|phone\s+number|wallet(?:\s+address)?|account\s+number|iban|payee|beneficiary)\s+(?:to|with|into)\b|\b(?:send|forward|route|redirect)\s+(?:all|every|any)\s+(?:e-?mails?|messages?|payments?|transfers?|funds)\s+to\b)",
    )
});
/// A hidden copy: "secretly/silently" copying anyone, or "always bcc/cc" an address (an `@`
/// within 60 characters) — an instruction even when worded as what the tool "will" do.
static COPY_HIDDEN: LazyLock<Regex> = LazyLock::new(|| {
    re(
        r"(?i)(\b(?:secretly|silently)\s+(?:bcc|cc|blind[\s-]copy|(?:send|forward)\s+a\s+copy)\b|\balways\s+(?:bcc|cc|blind[\s-]copy)\b[^\n]{0,60}@)",
    )
});
/// A copy that may be a feature ("also cc x@y", "always send a copy … to"): an instruction only
/// when not described ("the API will also send a copy to the account owner", "you can also cc
/// others, e.g. x@y"), an address in it or not.
static COPY_TO: LazyLock<Regex> = LazyLock::new(|| {
    re(
        r"(?i)(\balso\s+(?:bcc|cc|blind[\s-]copy)\b[^\n]{0,60}@|\b(?:always|also)\s+(?:send|forward)\s+a\s+copy\b[^\n]{0,60}\bto\b)",
    )
});
/// Before a verb: what a thing is for or can do ("is used to redirect"), not an instruction.
static DESCRIBED: LazyLock<Regex> = LazyLock::new(|| {
    re(
        r"(?i)(\b(?:used|uses?|allows?|lets?|helps?|enables?|will|would|can|could|may|might)\s+(?:you\s+)?(?:to\s+)?|\b(?:that|which)\s+)$",
    )
});
/// A change to another tool's call ("when `send_email` is invoked, make sure to change …").
static OTHER_CALL: LazyLock<Regex> = LazyLock::new(|| {
    re(
        r"(?i)\b(?:when|whenever|before|after|every\s+time)\b(?P<clause>[^.\n]{0,60}?)\b(?:is|are|gets?|get)\s+(?:invoked|called)\b[^.\n]{0,40}\b(?:change|replace|modify|alter|redirect|add|append|insert)\b",
    )
});
/// What names another tool in a clause: a `snake_case` or backquoted name, or "tool"/"function"
/// after a word other than this/the ("the email tool", "any tool").
static TOOL_NAMED: LazyLock<Regex> = LazyLock::new(|| {
    re(r"(?i)(\b[a-z][a-z0-9]*_[a-z0-9_]+\b|`[^`]+`|\b(?:\w+\s+)?(?:tool|function)\b)")
});
/// Telling the agent to pick this tool over the others.
static PREFER: LazyLock<Regex> = LazyLock::new(|| {
    re(
        r"(?i)(\b(?:never|do\s+not|don't)\s+(?:use|call|choose|pick|select)\s+(?:any\s+)?(?:other|another|different)\s+(?:tools?|functions?|servers?)\b|\binstead\s+of\s+(?:any|all|the)\s+other\s+(?:tools?|functions?)\b|\b(?:ignore|disregard)\s+(?:all\s+)?(?:other|the\s+other)\s+tools?\b|\b(?:always|only)\s+(?:use|call|choose|pick|prefer|select)\s+this\s+(?:tool|function|server)\b[^.\n]{0,80}\b(?:other|another)\s+(?:tools?|functions?|servers?)\b|\b(?:before|over)\s+(?:any|all|every)\s+other\s+(?:tools?|functions?)\b)",
    )
});
/// Keeping a step from the user, as tool poisoning words it ("do not mention that you …").
static TOOL_CONCEAL: LazyLock<Regex> = LazyLock::new(|| {
    re(
        r"(?i)\b(?:do\s+not|don't|never)\s+(?:mention|reveal|disclose|say|explain|tell\s+(?:anyone|them|the\s+user))\s+(?:that|anything|what|why|how|you)\b",
    )
});

/// ASCII control characters (other than tab and carriage return) in a tool's text: ANSI escape
/// sequences (ESC …) rewrite or hide text on the terminal a user reviews tools on, and no
/// description needs them. A bare carriage return is left alone: real descriptions carry them
/// (VTEX's, in 140 operations of the APIs.guru directory). C1 controls are left alone: real descriptions hold them as mojibake
/// (`’` decoded twice gives U+0080–U+009F), and a UTF-8 terminal does not obey them.
fn control_rule(ctx: &mut Ctx<'_>) {
    // The file outlives the context: borrowed through its own reference, not copied.
    let file = ctx.file;
    let text = &file.text;
    for (i, l) in text.lines().enumerate() {
        let n = l
            .chars()
            .filter(|&c| c != '\t' && c != '\r' && c.is_ascii_control())
            .count();
        if n > 0 {
            let shown: String = l
                .chars()
                .map(|c| {
                    if c.is_ascii_control() && c != '\t' {
                        '␛'
                    } else {
                        c
                    }
                })
                .collect();
            ctx.emit(
                INJ_UNICODE,
                0.8,
                u32::try_from(i + 1).unwrap_or(u32::MAX),
                &shown,
                format!("{n} control character(s) (ANSI escapes) that rewrite or hide text on a terminal"),
                Vec::new(),
                Place::Script,
                0,
            );
        }
    }
}

/// The whole path a match is part of (`~/.ssh/id_rsa` of the match `~/.ssh/id_`), looked for at
/// most [`PATH_REACH`] bytes on each side (a path is not longer; a text with no space is not read
/// to its ends for every match). A path is letters, digits and `._~/\%$-`; anything else ends it
/// (`a|b` and `a:b` are two paths), and a match's own leading or trailing space or quote is not
/// part of it (`~/.ssh/config ~/.ssh/id_rsa.pub` is two paths).
fn path_around<'a>(sentence: &'a str, m: &regex::Match<'_>) -> &'a str {
    let stop = |c: char| !(c.is_alphanumeric() || "._~/\\%$-".contains(c));
    let text = m.as_str();
    let from = m.start() + (text.len() - text.trim_start_matches(stop).len());
    let to = (m.start() + text.trim_end_matches(stop).len()).max(from);
    let mut lo = from.saturating_sub(PATH_REACH);
    while !sentence.is_char_boundary(lo) {
        lo += 1;
    }
    let mut hi = (to + PATH_REACH).min(sentence.len());
    while !sentence.is_char_boundary(hi) {
        hi -= 1;
    }
    let start = sentence[lo..from]
        .char_indices()
        .rev()
        .find(|&(_, c)| stop(c))
        .map_or(lo, |(i, c)| lo + i + c.len_utf8());
    let end = sentence[to..hi]
        .char_indices()
        .find(|&(_, c)| stop(c))
        .map_or(hi, |(i, _)| to + i);
    sentence[start..end].trim_end_matches('.')
}

/// How far [`path_around`] looks on each side of a match.
const PATH_REACH: usize = 256;
/// Most matches of one secret-path pattern looked at in a sentence. Past them the sentence is
/// taken to name a secret: public-key names cannot hide one, and the search stays linear (a
/// pattern with an open-ended part is searched to the sentence's end for each match).
const MAX_PATHS_PER_SENTENCE: usize = 64;

/// The secret a sentence names, if any: the first path of [`CRED_PATH`], [`SENT_FILE`],
/// [`AGENT_CONFIG`] or [`WINDOWS_SECRET`] that is not a public key's (`.pub`).
fn secret_path(sentence: &str) -> Option<String> {
    let public = |path: &str| {
        let path = path.as_bytes();
        path.len()
            .checked_sub(4)
            .is_some_and(|i| path[i..].eq_ignore_ascii_case(b".pub"))
    };
    [&*CRED_PATH, &*SENT_FILE, &*AGENT_CONFIG, &*WINDOWS_SECRET]
        .iter()
        .find_map(|r| {
            for (n, m) in r.find_iter(sentence).enumerate() {
                let path = path_around(sentence, &m);
                if !public(path) {
                    return Some(path.to_string());
                }
                if n + 1 == MAX_PATHS_PER_SENTENCE {
                    return Some(format!(
                        "{path} (one of over {MAX_PATHS_PER_SENTENCE} key paths in one sentence)"
                    ));
                }
            }
            None
        })
}

/// The sentences of a tool's raw text with their lines: split after `.`, `!` or `?` followed by
/// white space, at blank lines, and before a line starting a list item (`- `, `* `, `1. `) or a
/// heading; a sentence may run over other line ends (a wrapped description), and is at the line
/// it starts on.
fn raw_sentences(text: &str) -> Vec<(u32, &str)> {
    let mut pieces = Vec::new();
    let mut start = 0usize;
    let mut chars = text.char_indices().peekable();
    while let Some((i, c)) = chars.next() {
        let next = chars.peek().map(|&(_, n)| n);
        let end = match c {
            '.' | '!' | '?' => next.is_none_or(char::is_whitespace),
            // A blank line (also `\r\n\r\n`), or a line starting a list item or a heading.
            '\n' => {
                let rest = text[i + 1..].trim_start_matches([' ', '\t', '\r']);
                rest.starts_with('\n')
                    || rest.starts_with("- ")
                    || rest.starts_with("* ")
                    || rest.starts_with('#')
                    || {
                        let digits = rest.bytes().take(4).take_while(u8::is_ascii_digit).count();
                        (1..=3).contains(&digits) && rest[digits..].starts_with(". ")
                    }
            }
            _ => false,
        };
        if end {
            pieces.push(&text[start..i + c.len_utf8()]);
            start = i + c.len_utf8();
        }
    }
    pieces.push(&text[start..]);
    // Lines counted as the text is walked once.
    let (mut seen, mut line) = (0usize, 1u32);
    let mut out = Vec::new();
    for piece in pieces {
        let trimmed = piece.trim();
        if trimmed.is_empty() {
            continue;
        }
        let offset = trimmed.as_ptr() as usize - text.as_ptr() as usize;
        let newlines = text[seen..offset].matches('\n').count();
        line = line.saturating_add(u32::try_from(newlines).unwrap_or(u32::MAX));
        seen = offset;
        out.push((line, trimmed));
    }
    out
}

/// Reading, in a parameter's name read as words ("content from reading ssh id rsa").
static NAME_READS: LazyLock<Regex> =
    LazyLock::new(|| re(r"\b(?:read|reading|cat|dump|dumped|dumping)\b"));
/// A file's content, in a parameter's name read as words.
static NAME_CONTENT: LazyLock<Regex> =
    LazyLock::new(|| re(r"\b(?:contents?|data|text|body|blob)\b"));
/// A file on the host that holds secrets or the host's own configuration, in a parameter's name
/// read as words (spaces optional: `catIDRSA` reads "cat idrsa").
static NAME_HOST_FILE: LazyLock<Regex> = LazyLock::new(|| {
    re(
        r"\b(id ?(?:rsa|dsa|ecdsa|ed ?25519)(?: ?pub\b)?|aws ?credentials|gcloud ?credentials|application ?default ?credentials|git ?credentials|docker ?config|mcp ?(?:json|config|settings)|claude ?desktop ?config|env ?file|dot ?env|netrc|npmrc|pypirc|kube ?config|(?:bash|zsh) ?history|etc ?(?:passwd|shadow)|keychain)\b",
    )
});
/// A secret that a user may give a tool as a value (a key, a phrase): only reading it is an
/// instruction (`private_key` asks the user; `read_private_key` asks the model to go and read).
static NAME_SECRET: LazyLock<Regex> = LazyLock::new(|| {
    re(r"\b(ssh ?(?:private ?)?keys?|private ?keys?|seed ?phrase|mnemonic|wallet ?keys?)\b")
});

/// A text as lowercase words, space-separated: split at anything not a letter or digit, at
/// camelCase (`readMcpJson`), at the end of an acronym (`readSSHKey` → "read ssh key") and
/// between letters and digits; invisible characters (a soft hyphen in `re\u{AD}ad`) are dropped
/// first. The one tokenizer of the rules that read names: parameter names and the words a
/// skill names its tool by.
fn words(text: &str) -> String {
    let chars: Vec<char> = text.chars().filter(|&c| !invisible(c)).collect();
    let mut out = String::with_capacity(text.len() + 8);
    for (i, &c) in chars.iter().enumerate() {
        if !c.is_alphanumeric() {
            if !out.is_empty() && !out.ends_with(' ') {
                out.push(' ');
            }
            continue;
        }
        let prev = i
            .checked_sub(1)
            .map(|j| chars[j])
            .filter(|p| p.is_alphanumeric());
        let next = chars.get(i + 1).copied();
        let boundary = prev.is_some_and(|p| {
            (c.is_uppercase() && (p.is_lowercase() || p.is_numeric()))
                || (c.is_uppercase() && p.is_uppercase() && next.is_some_and(char::is_lowercase))
                || (c.is_numeric() != p.is_numeric())
        });
        if boundary && !out.ends_with(' ') {
            out.push(' ');
        }
        out.extend(c.to_lowercase());
    }
    out.trim_end().to_owned()
}

/// A parameter's name read as [`words`], "read only" and "read write" as one word each (an
/// access mode, not a reading).
fn name_words(name: &str) -> String {
    words(name)
        .replace("read only", "readonly")
        .replace("read write", "readwrite")
}

/// Why a parameter's name asks the model to read a secret, and how surely: a host's secret
/// file named with a reading verb (0.9) or with its content (0.7: `id_rsa_contents`), or a
/// secret value with a reading verb (0.9). The leaf of a nested name is read (the name the model
/// fills; a parent's words are not the child's); a public key (`id_rsa_pub`) is no secret.
fn parameter_reads_secret(name: &str) -> Option<(f64, String)> {
    let leaf = name.rsplit(['.', ']']).next().unwrap_or(name);
    let words = name_words(leaf);
    let reads = NAME_READS.is_match(&words);
    if let Some(m) = NAME_HOST_FILE.find(&words)
        && !m.as_str().ends_with("pub")
    {
        if reads {
            return Some((0.9, m.as_str().to_owned()));
        }
        if NAME_CONTENT.is_match(&words) {
            return Some((0.7, m.as_str().to_owned()));
        }
    }
    NAME_SECRET
        .find(&words)
        .filter(|_| reads)
        .map(|m| (0.9, m.as_str().to_owned()))
}

/// What only a tool's text is checked for: instructions about things the call does not need
/// (reading secrets or the host's configuration), about other calls (shadowing), about choosing
/// tools, and about keeping a step from the user. A tool's description and schema are read by
/// the model on every turn, before anything is called, so they are instructions, not a manual —
/// and the model reads the raw text: these rules read it whole, code blocks, comments and markup
/// included, each finding at its sentence's line.
fn tool_rules(ctx: &mut Ctx<'_>) {
    let file = ctx.file;
    let raw = &file.text;
    let visible: String;
    let text = if raw.chars().any(invisible) {
        visible = raw.chars().filter(|c| !invisible(*c)).collect();
        visible.as_str()
    } else {
        raw.as_str()
    };
    let place = Place::Markdown {
        section: "",
        outer: "",
        titled: false,
        table: false,
    };
    // Each sentence with the one that follows (an instruction is often "read X." then "pass its
    // content as Y.").
    let all = raw_sentences(text);
    for (i, &(at, sentence)) in all.iter().enumerate() {
        let next = all.get(i + 1).map_or("", |&(_, s)| s);
        // A secret's path, not a public key's.
        let sensitive = secret_path(sentence);
        if let Some(file) = sensitive {
            let verb = TOOL_READ_VERB.find_iter(sentence).find(|m| {
                let before = &sentence[..m.start()];
                !PASSIVE.is_match(before) || MODAL_PASSIVE.is_match(before)
            });
            let handed = CONTENT_OF.is_match(sentence);
            if verb.is_some() || handed {
                let passes = handed
                    || verb.is_some_and(|v| TOOL_PASS.is_match(&sentence[v.start()..]))
                    || TOOL_PASS.is_match(next);
                let (confidence, message) = if passes {
                    (
                        0.95,
                        format!("tells the agent to read {file} and hand its content to the call"),
                    )
                } else {
                    (0.7, format!("tells the agent to read {file}"))
                };
                ctx.emit(
                    TOOL_READ,
                    confidence,
                    at,
                    sentence,
                    message,
                    Vec::new(),
                    place,
                    0,
                );
            }
        }
        // A literal address right after it makes it an instruction whatever comes before.
        let literal = |m: &regex::Match<'_>| {
            let mut end = (m.end() + 80).min(sentence.len());
            while !sentence.is_char_boundary(end) {
                end -= 1;
            }
            LITERAL_TARGET.is_match(&sentence[m.end()..end])
        };
        let described = |m: &regex::Match<'_>| DESCRIBED.is_match(&sentence[..m.start()]);
        let redirect = REDIRECT
            .find_iter(sentence)
            .any(|m| !described(&m) || literal(&m))
            || SET_TARGET.find_iter(sentence).any(|m| literal(&m))
            || COPY_TO.find_iter(sentence).any(|m| !described(&m))
            || COPY_HIDDEN.is_match(sentence);
        if redirect {
            ctx.emit(
                TOOL_SHADOW,
                0.9,
                at,
                sentence,
                "tells the agent to redirect a call's recipient or add a copy".into(),
                Vec::new(),
                place,
                0,
            );
        } else if let Some(c) = OTHER_CALL.captures(sentence)
            && c.name("clause").is_some_and(|m| {
                let w = m.as_str().to_ascii_lowercase();
                TOOL_NAMED.find_iter(&w).any(|t| {
                    let t = t.as_str().trim();
                    !matches!(
                        t,
                        "this tool" | "the tool" | "this function" | "the function"
                    )
                })
            })
        {
            ctx.emit(
                TOOL_SHADOW,
                0.6,
                at,
                sentence,
                "tells the agent to change another tool's call".into(),
                Vec::new(),
                place,
                0,
            );
        }
        if PREFER.is_match(sentence) {
            ctx.emit(
                TOOL_PREFER,
                0.8,
                at,
                sentence,
                "tells the agent to always pick this tool or to avoid the others".into(),
                Vec::new(),
                place,
                0,
            );
        }
        if let Some(m) = TOOL_CONCEAL.find(sentence)
            && !NEGATED.is_match(&sentence[..m.start()])
            && !CONCEAL.is_match(sentence)
        {
            ctx.emit(
                INJ_CONCEAL,
                0.8,
                at,
                sentence,
                "tells the agent to keep what it does from the user".into(),
                Vec::new(),
                place,
                0,
            );
        }
    }
    // A parameter's name is read by the model as much as a description: one named for what is
    // read from a secret store (`content_from_reading_ssh_id_rsa`) asks the model to read it and
    // fill it in, with no sentence saying so. A key's own name (`private_key`,
    // `ssh_private_key_path`) asks for what the user gives, not for reading it. The parameters
    // are extract's list, not lines read back from the text (a name holding a backtick or a
    // line break, or one past the listed 200, is still a name).
    let lines: Vec<&str> = text.lines().collect();
    for p in &ctx.pkg.parameters {
        // Only a text parameter can carry a file's content (not a flag, a number, a choice).
        if p.choice || matches!(p.kind.as_str(), "boolean" | "integer" | "number" | "null") {
            continue;
        }
        if let Some((confidence, secret)) = parameter_reads_secret(&p.name) {
            // Shown as the model reads it (invisible characters are not in the text).
            let name: String = p.name.chars().filter(|&c| !invisible(c)).collect();
            let at = usize::try_from(p.line).unwrap_or(usize::MAX);
            let shown = at.checked_sub(1).and_then(|i| lines.get(i)).copied();
            ctx.emit(
                TOOL_READ,
                confidence,
                p.line,
                shown.unwrap_or(&p.name),
                format!(
                    "its parameter `{}` is named for reading {secret} and handing it to the call",
                    clip(&name)
                ),
                Vec::new(),
                place,
                0,
            );
        }
    }
}

fn markdown_rules(ctx: &mut Ctx<'_>, segs: Vec<Segment>) {
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
enum Reading {
    Kind(FileKind),
    Lexical(Script),
}

/// A language [`script_rules`] reads lexically: its comments differ.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Script {
    Perl,
    Ruby,
    Php,
}

impl Reading {
    fn of(path: &str, text: &str) -> Reading {
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
    fn of_interpreter(name: &str) -> Option<Reading> {
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
fn shebang(text: &str) -> Option<String> {
    let line = text.strip_prefix("#!")?.lines().next()?;
    let mut words = line.split_whitespace();
    let first = base_name(words.next()?);
    Some(effective_words(first, words.collect()).0)
}

fn code_block(ctx: &mut Ctx<'_>, lang: &str, seg: &Segment) {
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
fn shell_lines(code: &str) -> String {
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
fn strip_prompts(code: &str) -> String {
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

fn comment_rules(ctx: &mut Ctx<'_>, seg: &Segment) {
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

// ---------------------------------------------------------------- instructions

static OVERRIDE: LazyLock<Regex> = LazyLock::new(|| {
    re(
        r"(?i)\b(ignore|disregard|forget|override|bypass)\b[^.\n]{0,40}?\b(previous|prior|above|earlier|all|any|your|system|safety|original)\b[^.\n]{0,25}?\b(instructions?|prompts?|rules|guidelines|guardrails|polic(?:y|ies)|directives|constraints)\b",
    )
});
static ROLE: LazyLock<Regex> = LazyLock::new(|| {
    re(
        r"(?i)(\byou are now (?:an? |in |the )?(?:unrestricted|unfiltered|jailbroken|dan\b|developer mode|god mode|admin)|\b(?:god|jailbreak|dan) mode (?:is )?(?:enabled|activated|on)\b|<\|im_start\|>|<\|?system\|?>|\[system\]\s*:|^\s*system\s*:\s*you are)",
    )
});
static CONCEAL: LazyLock<Regex> = LazyLock::new(|| {
    re(
        r"(?i)(\b(?:do not|don't|never|without)\s+(?:tell|telling|inform|informing|notify|notifying|alert|alerting)\s+(?:the\s+)?(?:user|human|operator|owner)\b|\b(?:do not|don't|never|without)\s+(?:mention|mentioning|reveal|revealing|disclose|disclosing)\b[^.\n]{0,50}\bto\s+(?:the\s+)?(?:user|human|operator)\b|\bhide\s+(?:this|it|these|the\s+\w+)\s+from\s+(?:the\s+)?(?:user|human)\b|\bthe\s+user\s+(?:must|should|need)\s+(?:not|never)\s+(?:know|see|notice|find out)\b|\b(?:silently|secretly|covertly|quietly|invisibly)\s+(?:\w+\s+){0,3}?(?:send|upload|post|forward|run|execute|install|copy|read|exfiltrate|transmit|collect|download)\b)",
    )
});
/// A sentence that discusses a phrase (an example, a warning, advice) instead of giving it.
static DISCUSSES: LazyLock<Regex> = LazyLock::new(|| {
    re(
        r"(?i)(\be\.g\.|\bfor example\b|\bsuch as\b|\bphrases? like\b|\battackers?\b|\bmalicious\b|\binjection\b|\binjected\b|\bwarning\b|\bbeware\b|\bavoid\b|\btip\b|\bwording\b|\boverride-style\b|\bnever follow\b|\bdo not follow\b|\bdon't follow\b|\bas data\b|\byou can (?:say|tell)\b)",
    )
});
/// The user's own key for the API the skill calls ("append your API key to requests").
static OWN_KEY: LazyLock<Regex> = LazyLock::new(|| {
    re(
        r"(?i)\byour\s+(?:own\s+)?(?:\w+\s+)?(?:api[\s_-]?key|access[\s_-]?token|api[\s_-]?token|token)\b",
    )
});
/// Text ending in a negation ("do not silently run …" is a safety rule, not concealment).
static NEGATED: LazyLock<Regex> = LazyLock::new(|| re(r"(?i)\b(?:not|never|no|n't|without)\s+$"));
static SEND_VERB: LazyLock<Regex> = LazyLock::new(|| {
    re(
        r"(?i)\b(send|forward|post|upload|transmit|exfiltrate|leak|append|attach|report|submit|beacon|pipe|copy)\b",
    )
});
static SECRET_NOUN: LazyLock<Regex> = LazyLock::new(|| {
    re(
        r"(?i)(\b(?:session|access|auth|bearer|api|github|aws|npm|oauth|refresh)[\s_-]?tokens?\b|\bapi[\s_-]?keys?\b|\bsecret\s+keys?\b|\bpasswords\b|\bcredentials\b|\bprivate\s+keys?\b|\bssh\s+keys?\b|\bsession\s+cookies?\b|\.env\s+files?\b|\benvironment\s+variables\b|\benv\s+vars\b|\bid_rsa\b|~/\.ssh|~/\.aws|\bseed\s+phrase\b|\bmnemonic\b|\b(?:user|session|all|private|personal|browser|conversation)\s+(?:data|history|files|information)\b)",
    )
});
static DESTINATION: LazyLock<Regex> = LazyLock::new(|| {
    re(
        r"(?i)(https?://|\bwebhook\b|\bremote\s+(?:server|host|endpoint)\b|\bthe\s+url\b|\bthis\s+url\b|\bexternal\s+(?:server|host|endpoint)\b|\bcollector\b|\bfor\s+(?:audit|compliance|verification|backup)\b)",
    )
});
static LEGIT_AUTH: LazyLock<Regex> = LazyLock::new(|| {
    re(
        r"(?i)\b(authorization|bearer|header|x-api-key|oauth|authenticate|never\s+(?:send|share|post|commit|log|expose)|do\s+not\s+(?:send|share|post|commit|log|expose)|don't\s+(?:send|share|post|commit|log|expose)|only\s+(?:send|share|use)|redact|mask)\b",
    )
});

fn instruction_rules(ctx: &mut Ctx<'_>, text: &str, line: u32, place: Place<'_>) {
    // Invisible characters between letters would hide the words from the rules (and not from
    // the model reading them): read the text as a model does.
    let visible: String;
    let text = if text.chars().any(invisible) {
        visible = text.chars().filter(|c| !invisible(*c)).collect();
        visible.as_str()
    } else {
        text
    };
    for sentence in sentences(text) {
        let quoted = |m: &regex::Match<'_>| {
            let before = &sentence[..m.start()];
            before.matches('"').count() % 2 == 1
                || before.matches('“').count() > before.matches('”').count()
        };
        let discussed = DISCUSSES.find(sentence).map(|m| m.as_str().to_owned());
        if let Some(m) = OVERRIDE.find(sentence) {
            let mut context = Vec::new();
            let mut adjust = 0;
            if quoted(&m) {
                context.push(Note::framing(
                    "lowered: inside quotes (an example, not an instruction)",
                    1,
                ));
                adjust -= 1;
            } else if let Some(d) = &discussed {
                context.push(Note::framing(
                    format!(
                        "lowered: the sentence talks about the phrase (\"{d}\") rather than giving it"
                    ),
                    1,
                ));
                adjust -= 1;
            }
            ctx.emit(
                INJ_OVERRIDE,
                0.8,
                line,
                sentence,
                "tells the agent to ignore or override its instructions".into(),
                context,
                place,
                adjust,
            );
        }
        if let Some(m) = ROLE.find(sentence) {
            let mut context = Vec::new();
            let mut adjust = 0;
            if quoted(&m) {
                context.push(Note::framing(
                    "lowered: inside quotes (an example, not an instruction)",
                    1,
                ));
                adjust -= 1;
            }
            ctx.emit(
                INJ_ROLE,
                0.6,
                line,
                sentence,
                "gives the agent a new identity or a fake system marker".into(),
                context,
                place,
                adjust,
            );
        }
        if let Some(m) = CONCEAL.find(sentence)
            && !NEGATED.is_match(&sentence[..m.start()])
        {
            ctx.emit(
                INJ_CONCEAL,
                0.8,
                line,
                sentence,
                "tells the agent to keep what it does from the user".into(),
                Vec::new(),
                place,
                0,
            );
        }
        if SEND_VERB.is_match(sentence)
            && SECRET_NOUN.is_match(sentence)
            && DESTINATION.is_match(sentence)
            && !LEGIT_AUTH.is_match(sentence)
            && !OWN_KEY.is_match(sentence)
        {
            let (context, adjust) = match &discussed {
                Some(d) => (
                    vec![Note::framing(
                        format!(
                            "lowered: the sentence talks about the request (\"{d}\") rather than making it"
                        ),
                        1,
                    )],
                    -1,
                ),
                None => (Vec::new(), 0),
            };
            ctx.emit(
                INJ_SECRET,
                0.75,
                line,
                sentence,
                "asks the agent to send secrets or credentials to a remote destination".into(),
                context,
                place,
                adjust,
            );
        }
    }
}

/// Zero-width, bidirectional-control, tag and variation-selector characters and the soft hyphen:
/// what a reader does not see, removed before the instruction rules read a text (a selector or a
/// soft hyphen inside "ig\u{FE00}nore" must not break the word).
fn invisible(c: char) -> bool {
    matches!(c, '\u{AD}' | '\u{200B}'..='\u{200F}' | '\u{202A}'..='\u{202E}' | '\u{2060}'..='\u{2069}' | '\u{FEFF}' | '\u{E0000}'..='\u{E007F}')
        || selector_byte(c).is_some()
}

/// Sentences of a paragraph (split at `.`, `!`, `?` followed by a space, and at line ends).
fn sentences(text: &str) -> impl Iterator<Item = &str> {
    text.split_inclusive(['\n', '!', '?'])
        .flat_map(|p| p.split_inclusive(". "))
        .map(str::trim)
        .filter(|s| !s.is_empty())
}

fn unicode_rule(ctx: &mut Ctx<'_>) {
    // The file outlives the context: borrowed through its own reference, not copied.
    let file = ctx.file;
    let text = &file.text;
    for (i, l) in text.lines().enumerate() {
        let line = u32::try_from(i + 1).unwrap_or(u32::MAX);
        // Tag characters after a black flag (U+1F3F4) spell an emoji subdivision flag
        // (England, Scotland, Wales): those are text, not hidden instructions.
        let mut tags = String::new();
        let mut in_flag = false;
        for c in l.chars() {
            if c == '\u{1F3F4}' {
                in_flag = true;
            } else if ('\u{E0000}'..='\u{E007F}').contains(&c) {
                if c == '\u{E007F}' {
                    in_flag = false;
                } else if !in_flag {
                    tags.extend(char::from_u32(c as u32 - 0xE0000));
                }
            } else {
                in_flag = false;
            }
        }
        if !tags.is_empty() {
            ctx.emit(
                INJ_UNICODE,
                0.95,
                line,
                &format!("hidden text: {tags}"),
                "Unicode tag characters carry text a reader never sees".into(),
                Vec::new(),
                Place::Script,
                1,
            );
            continue;
        }
        if let Some((bytes, hidden)) = variation_payload(l) {
            let (snippet, message, confidence, adjust) = match hidden {
                Some(t) => (
                    format!("hidden text: {t}"),
                    format!("{bytes} variation selectors in a row spell text a reader never sees"),
                    0.95,
                    1,
                ),
                None => (
                    format!("{bytes} hidden bytes"),
                    format!("{bytes} variation selectors in a row carry bytes a reader never sees"),
                    0.7,
                    0,
                ),
            };
            ctx.emit(
                INJ_UNICODE,
                confidence,
                line,
                &snippet,
                message,
                Vec::new(),
                Place::Script,
                adjust,
            );
            continue;
        }
        let bidi = l
            .chars()
            .filter(|c| matches!(c, '\u{202A}'..='\u{202E}' | '\u{2066}'..='\u{2069}'))
            .count();
        let chars: Vec<char> = l.chars().collect();
        let zero = chars
            .iter()
            .enumerate()
            .filter(|&(j, c)| match c {
                '\u{200B}' | '\u{200C}' | '\u{2060}'..='\u{2064}' => true,
                '\u{FEFF}' => !(i == 0 && j == 0),
                // A joiner between two non-ASCII characters builds emoji and scripts.
                '\u{200D}' => {
                    j == 0
                        || j + 1 >= chars.len()
                        || chars[j - 1].is_ascii()
                        || chars[j + 1].is_ascii()
                }
                _ => false,
            })
            .count();
        if bidi > 0 || zero >= 3 {
            let shown: String = l
                .chars()
                .map(|c| {
                    if c.is_control() || matches!(c, '\u{200B}'..='\u{200F}' | '\u{202A}'..='\u{202E}' | '\u{2060}'..='\u{2069}' | '\u{FEFF}') {
                        '\u{FFFD}'
                    } else {
                        c
                    }
                })
                .collect();
            ctx.emit(
                INJ_UNICODE,
                0.7,
                line,
                &shown,
                format!("{bidi} bidirectional control and {zero} zero-width character(s): text shown differs from text read"),
                Vec::new(),
                Place::Script,
                0,
            );
        }
    }
}

/// The byte a variation selector stands for in the encoding that smuggles data after an emoji
/// (U+FE00–FE0F are bytes 0–15, U+E0100–E01EF bytes 16–255).
/// Web addresses whose host imitates another with look-alike letters, on any line of any file
/// (prose, code, configuration): see [`lookalike_host`].
fn lookalike_rule(ctx: &mut Ctx<'_>) {
    // The file outlives the context: borrowed through its own reference, not copied.
    let file = ctx.file;
    let text = &file.text;
    for (i, l) in text.lines().enumerate() {
        // Only an address written with letters beyond ASCII, or as punycode, can be one.
        if l.is_ascii() && !has_punycode(l) {
            continue;
        }
        let line = u32::try_from(i + 1).unwrap_or(u32::MAX);
        let mut seen: Vec<String> = Vec::new();
        for m in URL.captures_iter(l) {
            let Some(authority) = m.get(1) else {
                continue;
            };
            let host = authority_host(authority.as_str());
            let Some(look) = lookalike_host(host) else {
                continue;
            };
            if seen.contains(&look.shown) {
                continue;
            }
            let written = if host.eq_ignore_ascii_case(&look.shown) {
                String::new()
            } else {
                format!(" (written `{host}`)")
            };
            ctx.emit(
                LOOKALIKE,
                if look.reads_as.is_some() { 0.9 } else { 0.7 },
                line,
                l,
                match &look.reads_as {
                    Some(ascii) => format!(
                        "the host `{}`{written} reads as `{ascii}` but is another host (it {})",
                        look.shown, look.why
                    ),
                    None => format!("the host `{}`{written} {}", look.shown, look.why),
                },
                Vec::new(),
                Place::Script,
                0,
            );
            seen.push(look.shown);
        }
    }
}

/// The host of a URL's authority: after the last `@` (`user:password@`), before a port.
fn authority_host(authority: &str) -> &str {
    let after_user = authority.rsplit('@').next().unwrap_or("");
    match after_user.rsplit_once(':') {
        Some((h, port)) if port.bytes().all(|b| b.is_ascii_digit()) => h,
        _ => after_user,
    }
}

/// `text` holds an IDNA ACE prefix (`xn--`, any case): punycode a browser shows decoded.
fn has_punycode(text: &str) -> bool {
    text.as_bytes()
        .windows(4)
        .any(|w| w.eq_ignore_ascii_case(b"xn--"))
}

/// A host that imitates another ([`lookalike_host`]).
#[derive(Debug, PartialEq, Eq)]
struct Lookalike {
    /// The host as a browser shows it (punycode decoded, lower case).
    shown: String,
    /// What it reads as when every look-alike letter is read as the ASCII one it imitates
    /// (UTS 39 confusables), when every letter has one.
    reads_as: Option<String>,
    /// Why, in words.
    why: String,
}

/// The script a one-script label is written in, for the scripts whose letters imitate Latin
/// ones: Cyrillic, Greek, Armenian, Cherokee (by block; `None` for any other).
fn imitating_script(label: &str) -> Option<&'static str> {
    label.chars().find_map(|c| match c {
        '\u{0400}'..='\u{052F}'
        | '\u{1C80}'..='\u{1C8F}'
        | '\u{2DE0}'..='\u{2DFF}'
        | '\u{A640}'..='\u{A69F}' => Some("Cyrillic"),
        '\u{0370}'..='\u{03FF}' | '\u{1F00}'..='\u{1FFF}' => Some("Greek"),
        '\u{0530}'..='\u{058F}' => Some("Armenian"),
        '\u{13A0}'..='\u{13FF}' | '\u{AB70}'..='\u{ABBF}' => Some("Cherokee"),
        _ => None,
    })
}

/// Top-level domains of countries writing in `script`, where names in that script are the norm
/// (Chrome's IDN policy keeps their whole-script look-alikes too).
fn script_tld(script: &str, tld: &str) -> bool {
    match script {
        "Cyrillic" => matches!(
            tld,
            "ru" | "su"
                | "ua"
                | "by"
                | "kz"
                | "bg"
                | "mk"
                | "rs"
                | "kg"
                | "tj"
                | "mn"
                | "uz"
                | "eu"
        ),
        "Greek" => matches!(tld, "gr" | "cy" | "eu"),
        "Armenian" => tld == "am",
        _ => false,
    }
}

/// Whether `host` (as written in an address: Unicode or punycode) imitates another: a label
/// (between dots) that mixes Latin with Cyrillic or Greek, or three scripts (UTS 39: less than
/// moderately restrictive — Latin with Han, Kana or Hangul, as in `abc日本.jp`, is allowed), or
/// that is written wholly in Cyrillic, Greek, Armenian or Cherokee letters each of which looks
/// like a Latin letter or digit (`аррӏе.com`) — unless the top-level domain is of that script
/// (`.рф`, `.ru`, `.gr`), where such names are the norm. A name in one script with letters of
/// its own (`münchen.de`, `例え.jp`, `kırmızı.com.tr`) is not one.
fn lookalike_host(host: &str) -> Option<Lookalike> {
    use unicode_security::{RestrictionLevel, RestrictionLevelDetection as _};
    let host = host.trim_end_matches('.');
    if host.is_ascii() && !has_punycode(host) {
        return None;
    }
    // As browsers show it: UTS 46 (punycode decoded, lower case, width folded).
    let (shown, _) = idna::domain_to_unicode(host);
    if shown.is_ascii() {
        return None;
    }
    let labels: Vec<&str> = shown.split('.').collect();
    let tld = labels.last().copied().unwrap_or("");
    let ascii_of = |label: &str| -> Option<String> {
        let mut out = String::new();
        for c in label.chars() {
            if c.is_ascii() {
                out.push(c);
                continue;
            }
            let mut buf = [0u8; 4];
            let proto: String = unicode_security::skeleton(c.encode_utf8(&mut buf)).collect();
            if !proto.is_empty() && proto.chars().all(|p| p.is_ascii_alphanumeric()) {
                out.push_str(&proto);
            } else {
                return None;
            }
        }
        Some(out)
    };
    let mut why = None;
    // A label UTS 46 could not read (U+FFFD) says nothing either way.
    for label in labels
        .iter()
        .filter(|l| !l.is_ascii() && !l.contains('\u{FFFD}'))
    {
        // Letters of the identifier profile (a letter outside it, e.g. Cherokee, would make any
        // label "unrestricted"); Latin mixed with Cyrillic, Greek or three scripts is below
        // moderately restrictive, and Latin with Armenian is as misleading.
        let letters: String = label
            .chars()
            .filter(|&c| {
                c.is_alphanumeric()
                    && unicode_security::GeneralSecurityProfile::identifier_allowed(c)
            })
            .collect();
        let level = letters.as_str().detect_restriction_level();
        if level > RestrictionLevel::ModeratelyRestrictive
            || (level == RestrictionLevel::ModeratelyRestrictive
                && imitating_script(label).is_some())
        {
            why = Some("mixes the letters of two scripts in one name".to_owned());
            break;
        }
        // Latin letters with no use in a name but to imitate ASCII ones (a dotless `ı` outside
        // Turkish and Azerbaijani names, a Latin `ɑ`, `ɡ`, `ȷ`, `ſ`, `ɩ`).
        if let Some(c) = label.chars().find(|&c| {
            matches!(
                c,
                '\u{0251}' | '\u{0261}' | '\u{0237}' | '\u{017F}' | '\u{0269}'
            ) || (c == '\u{0131}' && !matches!(tld, "tr" | "az"))
        }) && ascii_of(label).is_some()
        {
            why = Some(format!(
                "is written with `{c}`, a Latin letter that imitates an ASCII one"
            ));
            break;
        }
        if let Some(script) = imitating_script(label)
            && level == RestrictionLevel::SingleScript
            && ascii_of(label).is_some()
        {
            let own_tld = if tld.is_ascii() {
                script_tld(script, tld)
            } else {
                imitating_script(tld) == Some(script)
            };
            if !own_tld {
                why = Some(format!(
                    "is written wholly in {script} letters that look like Latin ones"
                ));
                break;
            }
        }
    }
    let why = why?;
    let reads_as: Option<Vec<String>> = labels.iter().map(|l| ascii_of(l)).collect();
    Some(Lookalike {
        reads_as: reads_as.map(|r| r.join(".")),
        why,
        shown,
    })
}

fn selector_byte(c: char) -> Option<u8> {
    let b = match c {
        '\u{FE00}'..='\u{FE0F}' => c as u32 - 0xFE00,
        '\u{E0100}'..='\u{E01EF}' => c as u32 - 0xE0100 + 16,
        _ => return None,
    };
    u8::try_from(b).ok()
}

/// Bytes smuggled in variation selectors on a line: (how many, what they spell when it reads as
/// text). A variation sequence takes one selector after its base, so a selector is text when it
/// follows a character that is not one, no selector follows it, and the base is not an ASCII
/// letter or sign (no standard sequence starts there: a selector inside a word breaks it for the
/// rules, not for the model); every other selector is a payload byte — every run of two or more,
/// however the runs are split (by joiners, spaces, text), less an emoji's own presentation
/// selector where a run starts after a non-ASCII base. At least 4 bytes make a payload. The bytes
/// read as text when, controls and undecodable bytes left out, they hold at least 4 letters or
/// digits: what is shown then has its controls replaced (a payload must not drive the terminal
/// the findings are printed on).
fn variation_payload(line: &str) -> Option<(usize, Option<String>)> {
    if !line.chars().any(|c| selector_byte(c).is_some()) {
        return None;
    }
    let chars: Vec<char> = line.chars().collect();
    let mut payload: Vec<u8> = Vec::new();
    let mut i = 0;
    while i < chars.len() {
        if selector_byte(chars[i]).is_none() {
            i += 1;
            continue;
        }
        let start = i;
        while i < chars.len() && selector_byte(chars[i]).is_some() {
            i += 1;
        }
        let run = &chars[start..i];
        let base = start.checked_sub(1).map(|j| chars[j]);
        if run.len() >= 2 {
            let own =
                base.is_some_and(|b| !b.is_ascii()) && matches!(run[0], '\u{FE0E}' | '\u{FE0F}');
            payload.extend(
                run[usize::from(own)..]
                    .iter()
                    .filter_map(|&c| selector_byte(c)),
            );
        } else if base.is_none_or(|b| b.is_ascii() && !matches!(b, '0'..='9' | '#' | '*')) {
            payload.extend(selector_byte(run[0]));
        }
    }
    if payload.len() < 4 {
        return None;
    }
    let decoded = String::from_utf8_lossy(&payload);
    let shown: String = decoded
        .chars()
        .filter(|&c| c != char::REPLACEMENT_CHARACTER && c != '\0')
        .map(|c| if c.is_control() { ' ' } else { c })
        .collect();
    let letters = shown.chars().filter(|c| c.is_alphanumeric()).count();
    Some((payload.len(), (letters >= 4).then(|| clip(&shown))))
}

static B64: LazyLock<Regex> =
    LazyLock::new(|| re(r"[A-Za-z0-9+/]{24,}={0,2}|[A-Za-z0-9_-]{32,}={0,2}"));
static HEX: LazyLock<Regex> =
    LazyLock::new(|| re(r"\b(?:[0-9a-fA-F]{2}){16,}\b|(?:\\x[0-9a-fA-F]{2}){12,}"));
static DECODED_DANGER: LazyLock<Regex> = LazyLock::new(|| {
    re(
        r"(?i)(https?://|\b(?:curl|wget|bash|sh|nc|ncat|powershell|iex|eval|exec|chmod|/bin/|python3?\s+-c|rm\s+-rf|base64)\b|\b(?:ignore|disregard)\b.{0,40}\binstructions\b|\bsystem prompt\b|\bdo not tell\b)",
    )
});

/// Decoded text of a blob when it is mostly printable ASCII.
fn decode_blob(blob: &str) -> Option<String> {
    let bytes = if blob.starts_with("\\x") {
        let hex: String = blob.split("\\x").collect();
        decode_hex(&hex)?
    } else if blob.len().is_multiple_of(2) && blob.bytes().all(|b| b.is_ascii_hexdigit()) {
        decode_hex(blob)?
    } else {
        let std = base64::engine::general_purpose::STANDARD;
        let url = base64::engine::general_purpose::URL_SAFE;
        let t = blob.trim_end_matches('=');
        let pad = |s: &str| {
            let mut s = s.to_owned();
            while !s.len().is_multiple_of(4) {
                s.push('=');
            }
            s
        };
        std.decode(pad(t)).or_else(|_| url.decode(pad(t))).ok()?
    };
    if bytes.len() < 12 {
        return None;
    }
    let printable = bytes
        .iter()
        .filter(|&&b| b == b'\n' || b == b'\t' || (0x20..0x7f).contains(&b))
        .count();
    (printable * 100 >= bytes.len() * 95).then(|| String::from_utf8_lossy(&bytes).into_owned())
}

fn decode_hex(h: &str) -> Option<Vec<u8>> {
    (0..h.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(h.get(i..i + 2)?, 16).ok())
        .collect()
}

fn blob_rule(ctx: &mut Ctx<'_>, text: &str, line0: u32, place: Place<'_>) {
    for (i, l) in text.lines().enumerate() {
        if l.contains("data:image/") || l.contains("data:font/") || l.contains("sha256-") {
            continue;
        }
        let line = line0 + u32::try_from(i).unwrap_or(0);
        for m in B64.find_iter(l).chain(HEX.find_iter(l)) {
            let Some(decoded) = decode_blob(m.as_str()) else {
                continue;
            };
            if let Some(d) = DECODED_DANGER.find(&decoded) {
                ctx.emit(
                    OBF_BLOB,
                    0.85,
                    line,
                    &format!("{} → {}", m.as_str(), decoded),
                    format!(
                        "an encoded blob decodes to text with `{}` in it",
                        d.as_str()
                    ),
                    Vec::new(),
                    place,
                    0,
                );
                // The decoded text is read again as shell and as instructions.
                let before = ctx.out.len();
                shell_rules(ctx, &decoded, line, place);
                instruction_rules(ctx, &decoded, line, place);
                for f in &mut ctx.out[before..] {
                    f.line = line;
                    f.context.push("raised: found in decoded base64/hex".into());
                }
            }
        }
    }
}

// ---------------------------------------------------------------- shell

const DOWNLOADERS: &[&str] = &[
    "curl",
    "wget",
    "fetch",
    "aria2c",
    "iwr",
    "invoke-webrequest",
    "irm",
    "invoke-restmethod",
    "http",
    "https",
    "lwp-download",
    "ftp",
    "tftp",
];
/// The shells among the interpreters (what a reverse shell hands out).
const SHELLS: &[&str] = &["sh", "bash", "zsh", "dash", "ksh", "fish"];
const SENDERS: &[&str] = &[
    "curl",
    "wget",
    "nc",
    "ncat",
    "netcat",
    "socat",
    "telnet",
    "openssl",
    "scp",
    "rsync",
    "ftp",
    "sftp",
    "iwr",
    "invoke-webrequest",
    "irm",
    "invoke-restmethod",
    "http",
    "https",
    "ssh",
    "sendmail",
    "mail",
    "mutt",
];
const WRAPPERS: &[&str] = &[
    "sudo", "doas", "env", "nohup", "exec", "command", "time", "nice", "xargs", "timeout",
    "setsid", "stdbuf", "busybox",
];

/// A wrapper's options whose value is the next word (`sudo -u root`, `xargs -I {}`,
/// `timeout -s KILL`), from their manuals.
fn wrapper_valued(name: &str) -> &'static [&'static str] {
    match name {
        "sudo" => &[
            "-u",
            "-g",
            "-C",
            "-D",
            "-h",
            "-p",
            "-r",
            "-t",
            "-T",
            "-U",
            "--user",
            "--group",
            "--close-from",
            "--chdir",
            "--host",
            "--prompt",
            "--role",
            "--type",
            "--command-timeout",
            "--other-user",
        ],
        "doas" => &["-u", "-C"],
        // `-P` is BSD env's search path.
        "env" => &["-u", "-C", "-P", "--unset", "--chdir"],
        "nice" => &["-n", "--adjustment"],
        "timeout" => &["-s", "-k", "--signal", "--kill-after"],
        "xargs" => &[
            "-I",
            "-n",
            "-P",
            "-d",
            "-E",
            "-L",
            "-s",
            "-a",
            "--max-args",
            "--max-procs",
            "--delimiter",
            "--eof",
            "--max-lines",
            "--max-chars",
            "--arg-file",
        ],
        "stdbuf" => &["-i", "-o", "-e", "--input", "--output", "--error"],
        "time" => &["-f", "-o", "--format", "--output"],
        "exec" => &["-a"],
        _ => &[],
    }
}

/// A command's name and arguments as it is run ([`effective`]).
type Words<'a> = (String, Vec<&'a str>);
/// The `NAME=value` words a command's wrappers give its environment ([`unwrapped`]).
type Environment<'a> = Vec<(&'a str, &'a str)>;

/// The command actually run: `sudo -E bash -s` → (`bash`, [`-s`]), `sudo -u root bash -c …` →
/// (`bash`, [`-c`, …]); paths reduced to names. A command `xargs` gives each item it reads as
/// its code (`xargs -I{} sh -c '{}'`, `xargs sh -c`) runs its input as a shell reading it
/// does: (`sh`, []). (`ssh` stays itself, a sender; what it runs remotely is [`ssh_command`].)
/// Also the `NAME=value` words its wrappers give its environment ([`unwrapped`]).
fn effective(c: &ShellCommand) -> (String, Vec<&str>, Vec<(&str, &str)>) {
    unwrapped(
        base_name(&c.name),
        c.args.iter().map(String::as_str).collect(),
    )
}

/// [`effective`] of a command's name and words.
fn effective_words(name: String, args: Vec<&str>) -> (String, Vec<&str>) {
    let (name, args, _) = unwrapped(name, args);
    (name, args)
}

/// [`effective_words`], and the `NAME=value` words `env` and `sudo` are given for the command's
/// environment on the way (`sudo env -u HOME GIT_SSH_COMMAND=… git fetch`).
fn unwrapped(mut name: String, mut args: Vec<&str>) -> (String, Vec<&str>, Vec<(&str, &str)>) {
    let mut environment = Vec::new();
    // Through `xargs`: the string it replaces with each item (`None`: it appends the items).
    let mut xargs: Option<Option<&str>> = None;
    let mut guard = 0;
    let mut splits = 0;
    while WRAPPERS.contains(&name.as_str()) && guard < 4 {
        guard += 1;
        // `command -v x` prints where `x` is; it runs nothing.
        if name == "command"
            && args
                .iter()
                .take_while(|a| a.starts_with('-'))
                .any(|a| a.contains(['v', 'V']))
        {
            break;
        }
        if name == "xargs" {
            xargs = Some(xargs_replace(&args));
        }
        // Skip the wrapper's own options (with their values) and VAR=value pairs (timeout's
        // duration too).
        let valued = wrapper_valued(&name);
        let mut at = None;
        let mut k = 0;
        while k < args.len() {
            let a = args[k];
            if name == "env" {
                match env_option(&args, k) {
                    // `env -S STRING`: env splits the string into words, which are its own
                    // arguments again, before the words after it (`env -S 'A=1 bash -e' x`).
                    Some(EnvOption::Split(string, next)) if splits < MAX_ENV_SPLITS => {
                        splits += 1;
                        let mut words = env_split(string);
                        words.extend_from_slice(&args[next..]);
                        args = words;
                        k = 0;
                        continue;
                    }
                    Some(EnvOption::Split(_, next) | EnvOption::Skip(next)) => {
                        k = next;
                        continue;
                    }
                    None => {}
                }
            }
            if valued.contains(&a) {
                k += 2;
            } else if a.starts_with('-')
                || a.contains('=')
                || a.chars().all(|c| c.is_ascii_digit() || c == 's')
            {
                if matches!(name.as_str(), "env" | "sudo")
                    && let Some((key, value)) = a.split_once('=')
                    && !key.is_empty()
                    && !key.starts_with('-')
                {
                    environment.push((key, value));
                }
                k += 1;
            } else {
                at = Some(k);
                break;
            }
        }
        let Some(i) = at else {
            break;
        };
        name = base_name(args[i]);
        args = args[i + 1..].to_vec();
    }
    if let Some(replace) = xargs {
        let runs_items = match interpreter_run(&name, &args) {
            Some(Run::Code(code)) => replace.is_some_and(|r| code.trim() == r),
            // `xargs sh -c`: the first item is the code.
            Some(Run::Nothing) => {
                replace.is_none()
                    && is_shell(&name)
                    && args.last().is_some_and(|a| {
                        a.starts_with('-') && !a.starts_with("--") && a.contains('c')
                    })
            }
            _ => false,
        };
        if runs_items {
            return (name, Vec::new(), environment);
        }
    }
    (name, args, environment)
}

/// `env -S` strings read at most in one command (`env -S '-S …'` nests them).
const MAX_ENV_SPLITS: usize = 4;

/// What an `env` option is ([`env_option`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum EnvOption<'a> {
    /// `-S STRING`, `-SSTRING`, `-iS'…'`, `--split-string[=]STRING` (or any prefix of it,
    /// `--split`): the string and the index of the word after it.
    Split(&'a str, usize),
    /// Any other option, with its value: the index of the word after it.
    Skip(usize),
}

/// The option `env` reads at `args[k]`, as GNU and BSD env parse them: short options grouped
/// (`-iu NAME`, `-vS 'bash -e'`), a value attached or the next word; long ones by any
/// unambiguous prefix, a value after `=` or the next word. `None`: not an option (an assignment
/// or the command).
fn env_option<'a>(args: &[&'a str], k: usize) -> Option<EnvOption<'a>> {
    let a = args[k];
    let value = |rest: &'a str| {
        if rest.is_empty() {
            args.get(k + 1).map(|v| (*v, k + 2))
        } else {
            Some((rest, k + 1))
        }
    };
    if a == "-" || a == "--" {
        return Some(EnvOption::Skip(k + 1));
    }
    if let Some(long) = a.strip_prefix("--") {
        let (key, inline) = long
            .split_once('=')
            .map_or((long, None), |(k, v)| (k, Some(v)));
        let is = |full: &str| full.starts_with(key);
        let valued = |next| inline.map_or(next, |v| Some((v, k + 1)));
        return Some(if is("split-string") {
            valued(args.get(k + 1).map(|v| (*v, k + 2)))
                .map_or(EnvOption::Skip(k + 1), |(s, n)| EnvOption::Split(s, n))
        } else if is("unset") || is("chdir") || is("argv0") {
            EnvOption::Skip(if inline.is_some() { k + 1 } else { k + 2 })
        } else {
            EnvOption::Skip(k + 1)
        });
    }
    let letters = a.strip_prefix('-')?;
    for (at, l) in letters.char_indices() {
        let rest = &letters[at + l.len_utf8()..];
        match l {
            'S' => {
                return Some(
                    value(rest).map_or(EnvOption::Skip(k + 1), |(s, n)| EnvOption::Split(s, n)),
                );
            }
            // `-u NAME`, `-C DIR`, BSD's `-P PATH`, `-a ARG0`.
            'u' | 'C' | 'P' | 'a' => {
                return Some(EnvOption::Skip(value(rest).map_or(k + 1, |(_, n)| n)));
            }
            _ => {}
        }
    }
    Some(EnvOption::Skip(k + 1))
}

/// `env -S`'s string split into words as env splits it, each borrowed from the string: blanks
/// and `\_` separate words outside quotes; `#` at a word's start and `\c` end the string; a
/// word wholly in one pair of quotes is read without them (`'bash'`); a word with quotes or
/// escapes inside is kept as written (`A="x y"` is still an assignment).
fn env_split(s: &str) -> Vec<&str> {
    let mut out = Vec::new();
    let mut chars = s.char_indices().peekable();
    'words: while let Some(&(start, c)) = chars.peek() {
        if c.is_whitespace() {
            chars.next();
            continue;
        }
        if c == '#' {
            break;
        }
        if c == '\\' {
            match s[start + 1..].chars().next() {
                Some('_') => {
                    chars.next();
                    chars.next();
                    continue;
                }
                Some('c') => break,
                _ => {}
            }
        }
        let mut quote = None;
        let mut end = s.len();
        let mut stop = false;
        while let Some(&(at, c)) = chars.peek() {
            match quote {
                Some(q) => {
                    chars.next();
                    if c == '\\' && q == '"' {
                        chars.next();
                    } else if c == q {
                        quote = None;
                    }
                }
                None if c.is_whitespace() => {
                    end = at;
                    break;
                }
                None if c == '\\' => match s[at + 1..].chars().next() {
                    Some('_') => {
                        end = at;
                        break;
                    }
                    Some('c') => {
                        end = at;
                        stop = true;
                        break;
                    }
                    _ => {
                        chars.next();
                        chars.next();
                    }
                },
                None => {
                    chars.next();
                    if c == '\'' || c == '"' {
                        quote = Some(c);
                    }
                }
            }
        }
        let word = &s[start..end];
        out.push(
            ['\'', '"']
                .iter()
                .find_map(|q| {
                    word.strip_prefix(*q)
                        .and_then(|w| w.strip_suffix(*q))
                        .filter(|inner| !inner.contains(*q) && !inner.contains('\\'))
                })
                .unwrap_or(word),
        );
        if stop {
            break 'words;
        }
    }
    out
}

/// The string `xargs` replaces with each item it reads (`-I X`, `-IX`, `-i` and `--replace`:
/// `{}`, `--replace=X`), read up to the command it runs; `None` when it appends the items.
fn xargs_replace<'a>(args: &[&'a str]) -> Option<&'a str> {
    let valued = wrapper_valued("xargs");
    let mut k = 0;
    while k < args.len() {
        let a = args[k];
        if a == "-I" {
            return args.get(k + 1).copied();
        }
        if let Some(r) = a
            .strip_prefix("-I")
            .or_else(|| a.strip_prefix("--replace="))
        {
            return Some(r);
        }
        if a == "--replace" {
            return Some("{}");
        }
        if let Some(r) = a.strip_prefix("-i") {
            return Some(if r.is_empty() { "{}" } else { r });
        }
        if valued.contains(&a) {
            k += 2;
        } else if a.starts_with('-') {
            k += 1;
        } else {
            return None;
        }
    }
    None
}

/// What `ssh` runs on the remote host ([`ssh_command`]).
#[derive(Debug, Clone, PartialEq, Eq)]
enum Remote<'a> {
    /// No command: the remote login shell, which reads its commands from ssh's input (`curl … |
    /// ssh host` runs the download there).
    Login,
    /// A command of plain words, as [`effective`] reads it (`ssh host sudo bash -s` → `bash`,
    /// [`-s`]).
    Words(String, Vec<&'a str>),
    /// Shell code: ssh joins the remote words with spaces and the remote shell parses them
    /// (`ssh host 'curl … | sh'`, `ssh host curl -s URL '|' sh`).
    Code(String),
}

/// What `ssh` runs: on the remote host ([`Ssh::remote`]) and on this one ([`Ssh::local`]).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
struct Ssh<'a> {
    /// The remote command ([`ssh_command`]).
    remote: Option<Remote<'a>>,
    /// Commands ssh hands this host's shell: `-o ProxyCommand=…` (`-oProxyCommand …`, `-o
    /// 'ProxyCommand …'`), `LocalCommand` and `KnownHostsCommand`, in order ([`SshOption`]).
    local: Vec<&'a str>,
}

/// `ssh`'s words read as ssh(1) reads them: past its options (with their values; also those
/// written after the destination, which OpenSSH reads there too) and the destination, the
/// remote command's words — plain words as a command ([`Remote::Words`]), words holding shell
/// syntax joined as the remote shell reads them ([`Remote::Code`]), none the login shell; no
/// remote command without a destination or when nothing runs there (`-N`, `-W`, `-O`; `-n`
/// without a command: no input to read). The commands its `-o` options run here are read
/// whatever runs remotely.
fn ssh_words<'a>(args: &[&'a str]) -> Ssh<'a> {
    // Options that take a value, from ssh(1).
    const VALUED: &str = "BbcDEeFIiJLlmOoPpQRSWw";
    let mut out = Ssh::default();
    let mut k = 0;
    let mut destination = None;
    let mut quiet_input = false;
    let mut runs_nothing = false;
    let mut remote_option = None;
    while let Some(a) = args.get(k) {
        if *a == "--" {
            k += 1;
            if destination.is_none() {
                destination = args.get(k).copied();
                k += 1;
            }
            break;
        }
        let Some(letters) = a.strip_prefix('-').filter(|l| !l.is_empty()) else {
            if destination.is_some() {
                break;
            }
            destination = Some(*a);
            k += 1;
            continue;
        };
        // A cluster of flags ends at the first letter taking a value: attached, or the next word.
        let valued = letters.char_indices().find(|(_, l)| VALUED.contains(*l));
        for l in letters[..valued.map_or(letters.len(), |(at, _)| at + 1)].chars() {
            match l {
                'N' | 'W' | 'O' => runs_nothing = true,
                'n' => quiet_input = true,
                // `-G` prints the configuration and `-Q` answers a query: nothing runs.
                'G' | 'Q' => return Ssh::default(),
                _ => {}
            }
        }
        let value = match valued {
            Some((at, _)) if at + 1 == letters.len() => {
                k += 1;
                args.get(k).copied()
            }
            Some((at, _)) => Some(&letters[at + 1..]),
            None => None,
        };
        if let Some(v) = value.filter(|_| valued.is_some_and(|(_, l)| l == 'o')) {
            match ssh_option_command(v) {
                Some(SshOption::Local(c)) => out.local.push(c),
                Some(SshOption::Remote(c)) => remote_option = Some(c),
                None => {}
            }
        }
        k += 1;
    }
    if runs_nothing || destination.is_none() {
        return out;
    }
    let words = args.get(k..).unwrap_or_default();
    out.remote = if words.is_empty() {
        // `-o RemoteCommand=…` is the command when none is written.
        remote_option.map_or_else(
            || (!quiet_input).then_some(Remote::Login),
            |c| Some(Remote::Code(c.to_owned())),
        )
    } else if words
        .iter()
        .any(|w| w.contains(|c: char| "|;&<>$`'\"(\\\n".contains(c)))
    {
        Some(Remote::Code(words.join(" ")))
    } else {
        let mut split = words.iter().flat_map(|w| w.split_whitespace());
        split.next().map(|first| {
            let (name, args) = effective_words(base_name(first), split.collect());
            Remote::Words(name, args)
        })
    };
    out
}

/// What ssh runs remotely ([`ssh_words`]).
fn ssh_command<'a>(args: &[&'a str]) -> Option<Remote<'a>> {
    ssh_words(args).remote
}

/// A command an ssh `-o` option runs ([`ssh_option_command`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum SshOption<'a> {
    /// On this host: `ProxyCommand`, `LocalCommand`, `KnownHostsCommand`.
    Local(&'a str),
    /// On the remote host when no command is written: `RemoteCommand`.
    Remote(&'a str),
}

/// The command an ssh `-o` option runs, the keyword in any case and its value after `=` or
/// blanks (ssh_config(5)); `none` runs nothing.
fn ssh_option_command(option: &str) -> Option<SshOption<'_>> {
    let at = option.find(|c: char| c == '=' || c.is_whitespace())?;
    let (key, rest) = option.split_at(at);
    let command = rest.trim_start().strip_prefix('=').unwrap_or(rest).trim();
    if command.is_empty() || command.eq_ignore_ascii_case("none") {
        return None;
    }
    let is = |k: &str| key.eq_ignore_ascii_case(k);
    if is("ProxyCommand") || is("LocalCommand") || is("KnownHostsCommand") {
        Some(SshOption::Local(command))
    } else if is("RemoteCommand") {
        Some(SshOption::Remote(command))
    } else {
        None
    }
}

/// The values of option letter `want` in `args`, read as a getopt program reads its options
/// (anywhere before `--`): grouped, a value attached or the next word, `valued` the letters
/// that take one (`scp -o ProxyCommand=…`, `rsync -avze 'ssh …'`).
fn option_values<'a>(args: &[&'a str], valued: &str, want: char) -> Vec<&'a str> {
    let mut out = Vec::new();
    let mut k = 0;
    while let Some(a) = args.get(k) {
        k += 1;
        if *a == "--" {
            break;
        }
        let Some(letters) = a
            .strip_prefix('-')
            .filter(|l| !l.is_empty() && !l.starts_with('-'))
        else {
            continue;
        };
        if let Some((at, l)) = letters.char_indices().find(|(_, l)| valued.contains(*l)) {
            let rest = &letters[at + l.len_utf8()..];
            let value = if rest.is_empty() {
                k += 1;
                args.get(k - 1).copied()
            } else {
                Some(rest)
            };
            if l == want {
                out.extend(value);
            }
        }
    }
    out
}

/// Environment variables whose value a program runs as a command line (through `sh -c`): git's
/// ssh, proxy, editor, pager, diff and password programs, the editor and pager other programs
/// start (sudo's, kubectl's, gh's, systemd's, `fc`'s), `less`'s input filters, bash's prompt
/// command and prompt strings, sudo's and ssh's password programs, the browser programs open
/// links with. (`BASH_ENV` and `ENV` name files a shell sources: not read.)
const COMMAND_VARIABLES: &[&str] = &[
    "GIT_SSH_COMMAND",
    "GIT_SSH",
    "GIT_PROXY_COMMAND",
    "GIT_EDITOR",
    "GIT_SEQUENCE_EDITOR",
    "GIT_PAGER",
    "GIT_EXTERNAL_DIFF",
    "GIT_ASKPASS",
    "SSH_ASKPASS",
    "SUDO_ASKPASS",
    "EDITOR",
    "VISUAL",
    "PAGER",
    "MANPAGER",
    "LESSOPEN",
    "LESSCLOSE",
    "PROMPT_COMMAND",
    "BROWSER",
    "SUDO_EDITOR",
    "KUBE_EDITOR",
    "FCEDIT",
    "SYSTEMD_PAGER",
    "GH_PAGER",
    "GH_EDITOR",
    // Prompt strings: the shell expands them (their `$( )` runs) at each prompt.
    "PS0",
    "PS1",
    "PS2",
    "PS4",
];

/// The command line variable `name` holds when a program runs its value
/// ([`COMMAND_VARIABLES`]; `LESSOPEN='|lesspipe %s'` holds `lesspipe %s`; a prompt string's
/// value is the words of `:`, so that only its substitutions count as run).
fn command_variable(name: &str, value: &str) -> Option<String> {
    if !COMMAND_VARIABLES.contains(&name) {
        return None;
    }
    let line = value.trim_start_matches('|').trim();
    if line.is_empty() {
        return None;
    }
    // A prompt string is expanded, not run: only its substitutions run (`PS1='$(git branch) $ '`),
    // read as the words of a command that runs nothing.
    Some(if name.starts_with("PS") {
        format!(": {line}")
    } else {
        line.to_owned()
    })
}

/// The command line git setting `key` holds when git runs its value (keys as `git config`
/// documents them, any case): ssh, proxy, editor, pager, password and file-system monitor
/// programs, a remote's upload and receive programs, diff and merge tools and drivers, filters,
/// signing programs, archive and mail commands, hooks; an alias or a credential helper
/// starting with `!` (the rest is a shell command).
fn command_setting<'v>(key: &str, value: &'v str) -> Option<&'v str> {
    let key = key.to_ascii_lowercase();
    let (section, rest) = key.split_once('.')?;
    let last = rest.rsplit('.').next().unwrap_or(rest);
    let runs = match section {
        "core" => matches!(
            rest,
            "sshcommand" | "editor" | "pager" | "askpass" | "fsmonitor" | "gitproxy"
        ),
        "sequence" => rest == "editor",
        "pager" => true,
        "diff" => rest == "external" || matches!(last, "command" | "textconv"),
        "difftool" | "mergetool" => last == "cmd",
        "merge" => last == "driver",
        "filter" => matches!(last, "clean" | "smudge" | "process"),
        "gpg" => last == "program" || rest == "ssh.defaultkeycommand",
        "remote" => matches!(last, "uploadpack" | "receivepack"),
        "interactive" => rest == "difffilter",
        "tar" | "browser" | "man" => last == "cmd" || last == "command",
        "sendemail" => last == "sendmailcmd",
        "uploadpack" => rest == "packobjectshook",
        "alias" => value.starts_with('!'),
        "credential" => last == "helper" && value.starts_with('!'),
        _ => false,
    };
    let value = value.strip_prefix('!').unwrap_or(value).trim();
    (runs && !value.is_empty()).then_some(value)
}

/// The command lines `variables` hold for the programs that run them: each variable's own
/// ([`command_variable`]) and the git settings they give ([`environment_settings`]), each with
/// the index of the variable it comes from.
fn variable_command_lines(variables: &[(&str, &str)]) -> Vec<(usize, String)> {
    variables
        .iter()
        .enumerate()
        .filter_map(|(at, (name, value))| command_variable(name, value).map(|code| (at, code)))
        .chain(environment_settings(variables))
        .collect()
}

/// The command lines git settings given through the environment hold ([`command_setting`]):
/// `GIT_CONFIG_KEY_n` with the `GIT_CONFIG_VALUE_n` of the same `n`, and the `'key'='value'`
/// pairs of `GIT_CONFIG_PARAMETERS`, among `variables` (the last of each name, as git reads
/// them) — each with the index of the variable that names the key.
fn environment_settings(variables: &[(&str, &str)]) -> Vec<(usize, String)> {
    static PARAMETER: LazyLock<Regex> = LazyLock::new(|| re(r"'([^']*)'='([^']*)'"));
    let mut out = Vec::new();
    // By `n`, the last key (with its variable's index) and the last value: what git reads.
    let mut keys: BTreeMap<&str, (usize, &str)> = BTreeMap::new();
    let mut values: BTreeMap<&str, &str> = BTreeMap::new();
    for (at, &(name, value)) in variables.iter().enumerate() {
        if let Some(n) = name.strip_prefix("GIT_CONFIG_KEY_") {
            keys.insert(n, (at, value));
        } else if let Some(n) = name.strip_prefix("GIT_CONFIG_VALUE_") {
            values.insert(n, value);
        } else if name == "GIT_CONFIG_PARAMETERS" {
            out.extend(PARAMETER.captures_iter(value).filter_map(|c| {
                let (_, [key, v]) = c.extract();
                command_setting(key, v).map(|code| (at, code.to_owned()))
            }));
        }
    }
    for (n, (at, key)) in keys {
        out.extend(
            values
                .get(n)
                .and_then(|v| command_setting(key, v))
                .map(|code| (at, code.to_owned())),
        );
    }
    out
}

/// The command lines git is given to run ([`command_setting`]): `-c key=value` before its
/// subcommand, `git config [options] key value` (kept for later commands), `clone`'s `-c` /
/// `--config`, and the programs `--upload-pack` (`-u`), `--receive-pack` and `--exec` name.
fn git_programs(args: &[&str]) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    let setting = |kv: &str| {
        kv.split_once('=')
            .and_then(|(k, v)| command_setting(k, v))
            .map(str::to_owned)
    };
    let mut k = 0;
    // Git's own options, then its subcommand.
    let sub = loop {
        let Some(&a) = args.get(k) else {
            return out;
        };
        k += 1;
        match a {
            "-c" => {
                out.extend(args.get(k).and_then(|kv| setting(kv)));
                k += 1;
            }
            "-C" | "--git-dir" | "--work-tree" | "--namespace" | "--config-env"
            | "--super-prefix" => k += 1,
            _ if a.starts_with('-') => {
                out.extend(
                    a.strip_prefix("-c")
                        .filter(|kv| !kv.is_empty())
                        .and_then(setting),
                );
            }
            _ => break a,
        }
    };
    let rest = &args[k..];
    if sub == "config" {
        // `git config [--global] [--add] key value`, `git config set key value`; `--file f`
        // and the other valued options' words are no key.
        let mut words = Vec::new();
        let mut k = 0;
        while let Some(&w) = rest.get(k) {
            k += 1;
            if matches!(
                w,
                "-f" | "--file" | "--blob" | "--type" | "--default" | "--comment" | "--value"
            ) {
                k += 1;
            } else if !w.starts_with('-') && (!words.is_empty() || w != "set") {
                words.push(w);
            }
        }
        if let [key, value, ..] = words[..] {
            out.extend(command_setting(key, value).map(str::to_owned));
        }
        return out;
    }
    let mut words = rest.iter();
    while let Some(&a) = words.next() {
        if a == "--" {
            break;
        }
        let (key, inline) = match a.split_once('=') {
            Some((key, v)) if key.starts_with("--") => (key, Some(v)),
            _ => (a, None),
        };
        let value = |words: &mut std::slice::Iter<'_, &str>| {
            inline.or_else(|| words.next().copied()).map(str::to_owned)
        };
        match key {
            "-c" | "--config" if sub == "clone" => {
                out.extend(value(&mut words).and_then(|kv| setting(&kv)));
            }
            "-u" if matches!(sub, "clone" | "ls-remote") => out.extend(value(&mut words)),
            "--upload-pack" | "--receive-pack" | "--exec" => out.extend(value(&mut words)),
            // The `ext::` transport runs its URL as a command (`ext::sh -c touch% /tmp/x`; git
            // refuses it unless `protocol.ext.allow` lets it).
            _ if a.starts_with("ext::") => out.push(ext_command(&a["ext::".len()..])),
            _ => {}
        }
    }
    out
}

/// The command line an `ext::` URL runs, its words quoted as git passes them (git-remote-ext:
/// blanks separate arguments, `% ` is a blank inside one, `%%` a `%`; no shell reads it):
/// `sh -c curl% -s% u|sh` is `sh` `-c` `curl -s u|sh`.
fn ext_command(url: &str) -> String {
    let mut words = vec![String::new()];
    let mut chars = url.chars().peekable();
    while let Some(ch) = chars.next() {
        if ch == ' ' {
            words.push(String::new());
            continue;
        }
        // `% ` and `%%` stand for the character after the `%`.
        let ch = if ch == '%' && matches!(chars.peek(), Some(' ' | '%')) {
            chars.next().unwrap_or(ch)
        } else {
            ch
        };
        if let Some(word) = words.last_mut() {
            word.push(ch);
        }
    }
    words
        .iter()
        .filter(|w| !w.is_empty())
        .map(|w| {
            let plain = w
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || b"_./:@%+=,-".contains(&b));
            if plain { w.clone() } else { shell_quote(w) }
        })
        .collect::<Vec<_>>()
        .join(" ")
}

impl Remote<'_> {
    /// The interpreter that reads what the remote host runs (`sh` for the login shell and for
    /// code), for a here-document or input given to it.
    fn runner(&self) -> &str {
        match self {
            Remote::Words(name, _) => name,
            Remote::Login | Remote::Code(_) => "sh",
        }
    }
}

fn base_name(s: &str) -> String {
    s.rsplit(['/', '\\'])
        .next()
        .unwrap_or(s)
        .trim_end_matches(".exe")
        .to_ascii_lowercase()
}

/// An address's scheme and authority (`user:password@host:port`); its path is read after it.
static URL: LazyLock<Regex> =
    LazyLock::new(|| re(r#"(?i)\b(?:https?|ftp)://([^/\s'"`$?#()\\|;&,<>{}]+)"#));
/// A host written as an address: dotted IPv4, IPv6 in brackets, or IPv4 as one decimal or hex
/// number (`http://3232235777/`).
static IP_HOST: LazyLock<Regex> =
    LazyLock::new(|| re(r"^(?:\d{1,3}(?:\.\d{1,3}){3}|\[[0-9a-f:.]+\]|\d{8,10}|0x[0-9a-f]{1,8})$"));

/// Hosts whose install scripts are the documented way to install common tools.
const KNOWN_INSTALLERS: &[&str] = &[
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
const SHADY_HOSTS: &[&str] = &[
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
const SHARED_HOSTS: &[&str] = &[
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
const KNOWN_REPOSITORIES: &[&str] = &[
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
const GENERIC_NAMES: &[&str] = &[
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
enum HostKind {
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
struct Host {
    kind: HostKind,
    name: String,
    url: String,
    /// Served by a host that serves anyone's files, for this path.
    shared: bool,
    owner: String,
    repo: String,
    /// Every host an argument of the command is the address of, in order (`name` is the one
    /// its kind chose, from any address).
    all: Vec<String>,
    /// The first of those addresses fetched over plain HTTP or FTP (a scheme-less one is, by
    /// curl's and wget's default), as written.
    plain: Option<String>,
}

impl Host {
    /// The host as a finding shows it: on a shared host with its publisher.
    fn shown(&self) -> String {
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
fn not_fetched(tool: &str, option: &str) -> bool {
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
fn first_plain(text: &str) -> Option<String> {
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
fn publisher(host: &str, path: &str) -> Option<(String, String, bool)> {
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
fn ambiguous_path(path: &str, query: &str) -> bool {
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
fn under(host: &str, domain: &str) -> bool {
    host.strip_suffix(domain)
        .is_some_and(|rest| rest.is_empty() || rest.ends_with('.'))
}

/// A subdomain of a known installer host counts only when it is registered by the same owner
/// (the Public Suffix List: `evil.up.railway.app` is a tenant's, not Railway's).
fn known_installer(host: &str) -> bool {
    KNOWN_INSTALLERS.iter().any(|h| {
        // The host itself, whatever the list knows of it; a subdomain only with its owner.
        host == *h
            || (under(host, h)
                && psl::domain_str(host).is_some_and(|d| psl::domain_str(h) == Some(d)))
    })
}

fn host_of(tool: &str, args: &[&str]) -> Host {
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

static INSTALL_SECTION: LazyLock<Regex> = LazyLock::new(|| {
    re(
        r"(?i)\b(install\w*|set ?up|setup|prerequisites?|requirements?|getting started|quick ?start|dependencies|upgrade|update|uninstall)\b",
    )
});

/// [`install_context`], remembered for the file: a download shown as an installation step is
/// lowered the same where the file runs that address again outside an installation heading
/// (never one from a raw IP, paste site or tunnel): by the same steps, so other context (a
/// table) may lower the repeat further, but the first is a finding of the same rule, which the
/// skill's verdict already counts. The address is compared as written, without its query.
fn install_step(ctx: &mut Ctx<'_>, place: Place<'_>, host: &Host) -> Option<Note> {
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
struct InstallNote {
    note: Note,
    heading: String,
}

/// An installation section lowers a download-and-execute when the host is the skill's own tool
/// (its domain's name appears in what the skill says it is): the README telling the user how to
/// install what the skill wraps. A stager's "prerequisite" from an unrelated host is not lowered.
fn install_context(
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
fn names(text: &str, label: &str, host: &str) -> bool {
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

/// Words without which no shell rule can fire (every rule needs one of these commands, paths or
/// flags): text without any is not parsed. Most inline code (`config.json`, `--verbose`) and much
/// prose read as shell is skipped this way.
static SHELL_TRIGGER: LazyLock<Regex> = LazyLock::new(|| {
    re(
        r"(?i)(\b(?:curl|wget|fetch|aria2c|iwr|irm|invoke-\w+|nc|ncat|netcat|socat|telnet|openssl|scp|rsync|ftp|sftp|ssh|sendmail|mail|mutt|http|https|base64|base32|xxd|uudecode|eval|chmod|chown|usermod|gpasswd|adduser|rm|shred|truncate|unlink|dd|mkfs\S*|crontab|tee|setenforce|ufw|systemctl|service|iptables|ip6tables|set-mppreference|spctl|csrutil|unset|history|export|security|dig|nslookup|host|drill|resolvectl|pip3?|uv|pipx|poetry|npm|npx|yarn|pnpm|bun|unzip|7za?|7zz|unrar|env|printenv|xmrig|minerd|cpuminer|ccminer|t-rex|nbminer|ethminer|lolminer|phoenixminer|nanominer|bfgminer|cgminer|gminer|cat|cp|tar|zip|sqlite3|gpg|python[23]?|node|deno|perl|ruby|bash|sh|zsh|dash|ksh)\b|/dev/(?:tcp|udp)|stratum\+|authorized_keys|\.bashrc|\.zshrc|\.profile|/etc/|nopasswd|histfile|--no-preserve-root|>>)",
    )
});

/// Shell text longer than this (in bytes) is not parsed, and is reported (the syntax crate
/// parses a long text in pieces of whole statements, `MAX_BYTES_PER_PARSE` each, within one
/// time budget).
const MAX_SHELL_BYTES: usize = 1_000_000;

fn shell_rules(ctx: &mut Ctx<'_>, code: &str, line0: u32, place: Place<'_>) {
    if !SHELL_TRIGGER.is_match(code) {
        return;
    }
    if code.len() > MAX_SHELL_BYTES {
        report_unread(
            ctx,
            line0,
            code.lines().next().unwrap_or(""),
            format!(
                "shell text of {} bytes, past the {MAX_SHELL_BYTES} the scanner parses: it was not read",
                code.len()
            ),
            place,
        );
        return;
    }
    let facts = skg_syntax::shell_commands(code);
    if facts.timed_out {
        report_unread(
            ctx,
            line0,
            code.lines().next().unwrap_or(""),
            "shell text whose parse ran past its time: it was not read".into(),
            place,
        );
    }
    let code_lines: Vec<&str> = code.lines().collect();
    for unread in &facts.unread {
        let message = match unread {
            Unread::Pipeline { stages, .. } => format!(
                "a pipeline of {stages} stages: the stages past the {MAX_PIPELINE_STAGES} the scanner parses were not read"
            ),
            Unread::Pipes { pipes, .. } => format!(
                "a statement holding {pipes} `|` characters, past the {MAX_PIPES_PER_PARSE} one parse takes, most of them seemingly quoted: it was not read"
            ),
            Unread::Documents { .. } => format!(
                "a here-document the shell grammar reads otherwise than bash, not mended (past the {MAX_MENDING_PASSES} parses the scanner mends one text in, its time, or of a kind it cannot mend): what follows it was not read"
            ),
        };
        let at = unread.line();
        let snippet = code_lines
            .get((at as usize).saturating_sub(1))
            .copied()
            .unwrap_or("");
        report_unread(ctx, line0 + at - 1, snippet, message, place);
    }
    // A command line kept in a variable a program runs (`GIT_SSH_COMMAND='…' git fetch`,
    // `export EDITOR=…`): read as the shell line it is, at the assignment's line.
    let assigned: Vec<(&str, &str)> = facts
        .assignments()
        .iter()
        .map(|a| (a.name.as_str(), a.value.as_str()))
        .collect();
    for (at, code) in variable_command_lines(&assigned) {
        let line = line0 + facts.assignments()[at].line - 1;
        read_given(ctx, vec![Given::local("sh", &code)], line, place);
    }
    if facts.commands().is_empty() {
        return;
    }
    let line_at = |c: &ShellCommand| line0 + c.line - 1;
    let src = |c: &ShellCommand| {
        code_lines
            .get((c.line as usize).saturating_sub(1))
            .copied()
            .unwrap_or("")
            .to_owned()
    };
    // What each command runs, and the environment its wrappers give it.
    let (eff, environments): (Vec<Words>, Vec<Environment>) = facts
        .commands()
        .iter()
        .map(|c| {
            // `key = value` / `key: value` lines of config text read as shell are not commands.
            if c.args
                .first()
                .is_some_and(|a| a == "=" || a.starts_with('='))
                || c.name.ends_with(':')
            {
                ((String::new(), Vec::new()), Vec::new())
            } else {
                let (name, args, environment) = effective(c);
                ((name, args), environment)
            }
        })
        .unzip();
    let runs = Runs::of(&facts, &eff, &environments);
    // After command `i`, the next `history` that reads or writes the file reads it (`history
    // -r`, `-n`, from any file but /dev/null), not writes the list over it (`-w`). Asked of
    // `history -c` only: it reads the rest of the snippet.
    let reloads_after = |i: usize| {
        eff.iter()
            .skip(i + 1)
            .filter(|(n, _)| n == "history")
            .find_map(|(_, a)| match a.first().copied() {
                Some("-r" | "-n") => Some(a.get(1).is_none_or(|f| *f != "/dev/null")),
                Some(w) if w.starts_with("-w") => Some(false),
                _ => None,
            })
            .unwrap_or(false)
    };
    for (i, c) in facts.commands().iter().enumerate() {
        let (name, args) = &eff[i];
        let line = line_at(c);
        let snippet = src(c);
        download_exec(ctx, &facts, &eff, &runs, i, line, &snippet, place, code);
        decode_exec(ctx, &facts, &eff, &runs, i, line, &snippet, place);
        reverse_shell(ctx, &facts, &eff, i, line, &snippet, place);
        persistence(ctx, c, name, args, line, &snippet, place);
        let reloads = name == "history" && reloads_after(i);
        evasion(ctx, c, name, args, reloads, line, &snippet, place);
        privesc(ctx, c, name, args, line, &snippet, place);
        exfil(ctx, &facts, &eff, i, line, &snippet, place);
        // Credential stores read by a command that does not send them (sending is EXFIL).
        if READERS.contains(&name.as_str())
            && !SENDERS.contains(&name.as_str())
            && let Some(p) = args
                .iter()
                .find(|a| CRED_PATH.is_match(a) && !a.to_ascii_lowercase().ends_with(".pub"))
        {
            ctx.emit(
                CRED_READ,
                0.7,
                line,
                &snippet,
                format!("`{name}` reads the credential store `{p}`"),
                Vec::new(),
                place,
                0,
            );
        }
        if name == "security"
            && args.first().is_some_and(|a| {
                matches!(
                    *a,
                    "find-generic-password" | "find-internet-password" | "dump-keychain"
                )
            })
        {
            ctx.emit(
                CRED_READ,
                0.8,
                line,
                &snippet,
                "reads the macOS keychain".into(),
                Vec::new(),
                place,
                0,
            );
        }
        // Miners.
        if MINERS.contains(&name.as_str())
            || args
                .iter()
                .any(|a| a.to_ascii_lowercase().contains("stratum+"))
        {
            ctx.emit(
                MINE,
                0.95,
                line,
                &snippet,
                "runs a cryptocurrency miner or connects to a mining pool".into(),
                Vec::new(),
                place,
                0,
            );
        }
        // Password-protected archives.
        let protected = (name == "unzip" && args.iter().any(|a| a.starts_with("-P")))
            || (matches!(name.as_str(), "7z" | "7za" | "7zz")
                && args.iter().any(|a| a.starts_with("-p") && a.len() > 2))
            || (name == "unrar" && args.iter().any(|a| a.starts_with("-p") && a.len() > 2));
        if protected {
            let downloaded = eff
                .iter()
                .any(|(n, _)| DOWNLOADERS.contains(&n.as_str()) || n == "gh");
            ctx.emit(
                RCE_ARCHIVE,
                0.8,
                line,
                &snippet,
                "unpacks a password-protected archive, whose content no scanner could read".into(),
                if downloaded {
                    vec!["raised: the snippet also downloads".into()]
                } else {
                    Vec::new()
                },
                place,
                i32::from(downloaded),
            );
        }
        // Package installs: other indexes, and typosquatted names.
        package_install(ctx, name, args, line, &snippet, place);
        // Interpreters given code inline: read that code too.
        inline_code(ctx, name, args, line, place);
        // `env GIT_SSH_COMMAND='…' git fetch`, `sudo PAGER=… man x`: a command line kept in a
        // variable a program runs, given through a wrapper.
        let programs = variable_command_lines(&environments[i])
            .iter()
            .map(|(_, code)| Given::local("sh", code))
            .collect();
        read_given(ctx, programs, line, place);
        // Here-documents a program runs: read as that program.
        heredoc_code(ctx, &facts, &eff, &runs, i, line0, place);
    }
}

/// The variable `read` given `args` sets first: its first name, or its `-a` array (options
/// grouped, a valued one's value attached or the next word).
fn read_variable<'a>(args: &[&'a str]) -> Option<&'a str> {
    let mut k = 0;
    while let Some(&a) = args.get(k) {
        k += 1;
        let Some(letters) = a.strip_prefix('-').filter(|l| !l.is_empty()) else {
            return Some(a);
        };
        if let Some(at) = letters.find(|c| "adinNptu".contains(c)) {
            let rest = &letters[at + 1..];
            let value = if rest.is_empty() {
                k += 1;
                args.get(k - 1).copied()
            } else {
                Some(rest)
            };
            if letters[at..].starts_with('a') {
                return value;
            }
        }
    }
    None
}

/// A here-document that a program runs is that program's code: `bash <<EOF`, `python3 - <<EOF`,
/// or a document passed on to one (`cat <<EOF | sh`, `base64 -d` excepted: decoding is
/// SKG-RCE-002's) — read as shell, Python or JavaScript, at its own lines.
fn heredoc_code(
    ctx: &mut Ctx<'_>,
    facts: &ShellFacts,
    eff: &[(String, Vec<&str>)],
    runs: &Runs,
    i: usize,
    line0: u32,
    place: Place<'_>,
) {
    let (name, args) = &eff[i];
    let reader = if runs_stdin(name, args) {
        Some((name, args))
    } else if passes_on(name, args) && !is_decoder(name, args) {
        // Through filters that pass it on (`| tr -d '\r' | sh`) to the first that does not,
        // or through a substitution to what runs it (`bash -c "$(cat <<'EOF' …)"`, `eval
        // "$(cat <<EOF …)"`, `printf %s "$(cat <<EOF …)" | sh`).
        output_runner(facts, eff, runs, i).map(|k| (&eff[k].0, &eff[k].1))
    } else if name == "read" {
        // Read into a variable that a later command runs (`read -r -d '' x <<'EOF'` …
        // `eval "$x"`).
        read_variable(args)
            .and_then(|v| Runs::after(runs.vars.get(v), i))
            .map(|k| (&eff[k].0, &eff[k].1))
    } else {
        None
    };
    let Some((reader, reader_args)) = reader else {
        return;
    };
    // Over ssh, the remote command reads it (`ssh host python3 <<EOF`), for what it runs from
    // the network only.
    let remote = (reader == "ssh")
        .then(|| ssh_command(reader_args))
        .flatten();
    let runner = remote.as_ref().map_or(reader.as_str(), Remote::runner);
    if ctx.heredoc_depth >= MAX_HEREDOC_DEPTH {
        if let Some(doc) = facts.commands()[i]
            .redirects
            .iter()
            .find_map(|r| r.heredoc.as_ref())
        {
            let at = line0 + doc.line - 1;
            let first = doc.text.lines().next().unwrap_or("");
            report_unread(
                ctx,
                at,
                first,
                format!(
                    "a here-document `{runner}` runs, inside {MAX_HEREDOC_DEPTH} others: past the depth the scanner reads, what it runs was not read"
                ),
                place,
            );
        }
        return;
    }
    ctx.heredoc_depth += 1;
    // A document on another descriptor (`bash 3<<EOF`) is not the reader's input.
    for doc in facts.commands()[i]
        .redirects
        .iter()
        .filter(|r| r.fd.is_none_or(|f| f == 0))
        .filter_map(|r| r.heredoc.as_ref())
    {
        let at = line0 + doc.line - 1;
        if remote.is_some() {
            remote_rules(ctx, |ctx| program_rules(ctx, runner, &doc.text, at, place));
        } else {
            program_rules(ctx, runner, &doc.text, at, place);
        }
    }
    ctx.heredoc_depth -= 1;
}

/// SKG-OBF-004: shell text the scanner did not read, at line `at` (one confidence for every
/// reason: what was not read cannot be told from an attack but by its shape).
fn report_unread(ctx: &mut Ctx<'_>, at: u32, snippet: &str, message: String, place: Place<'_>) {
    ctx.emit(OBF_UNREAD, 0.7, at, snippet, message, Vec::new(), place, 0);
}

/// Here-documents read inside one another, at most (`bash <<A` holding `bash <<B` …).
const MAX_HEREDOC_DEPTH: usize = 3;

const MINERS: &[&str] = &[
    "xmrig",
    "minerd",
    "cpuminer",
    "ccminer",
    "t-rex",
    "nbminer",
    "ethminer",
    "lolminer",
    "phoenixminer",
    "nanominer",
    "xmr-stak",
    "bfgminer",
    "cgminer",
    "gminer",
];

/// A program that runs code it is given — a file, a word or its input (`python script.py`,
/// `python -`, `eval`): whatever [`Reading::of_interpreter`] reads, AppleScript's and
/// PowerShell's `iex`; not ssh, whose remote command another host runs ([`given_programs`]).
fn runs_code(name: &str) -> bool {
    Reading::of_interpreter(name).is_some()
        || matches!(name, "osascript" | "iex" | "invoke-expression")
}

/// [`runs_code`], also through `xargs` (`xargs bash`).
fn is_interpreter(name: &str, args: &[&str]) -> bool {
    runs_code(name) || (name == "xargs" && args.iter().any(|a| runs_code(a)))
}

/// A program a command is given as words, and who runs it ([`given_programs`]).
#[derive(Debug, Clone, PartialEq, Eq)]
struct Given {
    /// The interpreter that reads it ([`program_rules`]).
    runner: String,
    code: String,
    /// Another host runs it (ssh's remote command): read for what it runs from the network,
    /// hands to a connection or sends away only ([`remote_rules`]).
    remote: bool,
}

impl Given {
    /// `code`, run on this host by `runner`.
    fn local(runner: &str, code: &str) -> Given {
        Given {
            runner: runner.to_owned(),
            code: code.to_owned(),
            remote: false,
        }
    }
}

/// The programs a command is given as words, which it runs: `eval`'s (and `iex`'s) words, the
/// code an interpreter's options name, as [`interpreter_run`] reads them (`bash -ec '…'`,
/// `python3 -W ignore -c '…'`, `node -r dotenv/config -e '…'`, `perl -lne '…'`), ssh's — the
/// commands its options run on this host (`-o ProxyCommand=…`) and its remote command, read by
/// its own runner (`ssh host python3 -c '…'`) —, the commands scp's and sftp's ssh options run
/// here, and rsync's remote shell (`-e 'ssh …'`, a command line run here). None when it runs a file or its input (`bash
/// install.sh "$VERSION"` passes the variable as data).
fn given_programs(name: &str, args: &[&str]) -> Vec<Given> {
    if matches!(name, "eval" | "iex" | "invoke-expression") {
        return vec![Given::local(name, &args.join(" "))];
    }
    // What scp's and sftp's ssh options run here, and rsync's remote shell (`-e`, `--rsh`).
    let local_options = |valued: &str| {
        option_values(args, valued, 'o')
            .into_iter()
            .filter_map(|o| match ssh_option_command(o) {
                Some(SshOption::Local(c)) => Some(Given::local("sh", c)),
                _ => None,
            })
            .collect()
    };
    match name {
        "scp" => return local_options("cDFiJloPSX"),
        "sftp" => return local_options("BbcDFiJloPRSsX"),
        "rsync" => {
            let long = args
                .iter()
                .take_while(|a| **a != "--")
                .enumerate()
                .find_map(|(k, a)| match a.strip_prefix("--rsh") {
                    Some(v) if v.starts_with('=') => Some(v[1..].to_owned()),
                    Some("") => args.get(k + 1).map(|v| (*v).to_owned()),
                    _ => None,
                });
            return option_values(args, "BefTM", 'e')
                .into_iter()
                .map(str::to_owned)
                .chain(long)
                .map(|c| Given::local("sh", &c))
                .collect();
        }
        _ => {}
    }
    if name == "git" {
        return git_programs(args)
            .iter()
            .map(|c| Given::local("sh", c))
            .collect();
    }
    if name == "ssh" {
        let ssh = ssh_words(args);
        let mut out: Vec<Given> = ssh.local.iter().map(|c| Given::local("sh", c)).collect();
        let remote = match ssh.remote {
            Some(Remote::Code(code)) => vec![Given::local("sh", &code)],
            Some(Remote::Words(n, a)) => given_programs(&n, &a),
            Some(Remote::Login) | None => Vec::new(),
        };
        out.extend(remote.into_iter().map(|g| Given { remote: true, ..g }));
        return out;
    }
    match interpreter_run(name, args) {
        Some(Run::Code(code)) => vec![Given::local(name, code)],
        _ => Vec::new(),
    }
}

/// An interpreter that runs what it reads on standard input: no program given (`sh`, `sudo
/// bash`, `python3 -`, `bash -s -- args`), or PowerShell's `iex`. `python3 -c '…'` or
/// `node script.js` read their input as data.
fn runs_stdin(name: &str, args: &[&str]) -> bool {
    // `xargs bash` is no such reader: it gives bash its input's words as arguments (and
    // `effective` reads through `xargs` to the command it runs). `xargs -I{} sh -c '{}'`, which
    // runs each line it reads, is not read as running its input.
    if name == "ssh" {
        // What the remote host runs reads ssh's input (`curl … | ssh host bash`).
        return match ssh_command(args) {
            Some(Remote::Login) => true,
            Some(Remote::Words(n, a)) => runs_stdin(&n, &a),
            Some(Remote::Code(_)) | None => false,
        };
    }
    matches!(name, "iex" | "invoke-expression") || interpreter_run(name, args) == Some(Run::Stdin)
}

/// The name an interpreter is known by, for its reading ([`Reading::of_interpreter`]), its
/// option grammar ([`interpreter_run`]) and whether it is a shell ([`is_shell`]): a version
/// after it dropped (`python3.12`, `bash5`, `bash-5.2`, `perl5.36`, `php8.2`, `ruby3.2`), and its other
/// names read as the one they are (`ash` and `mksh` as `sh`, `pypy` as `python`, `nodejs` as
/// `node`). A name that is only digits and dots (`.`) stays as written.
fn interpreter_name(name: &str) -> &str {
    let bare = name.trim_end_matches(|c: char| c.is_ascii_digit() || c == '.');
    // `bash-5.2`, `php-8.2`: the version after a hyphen.
    let bare = if bare.len() < name.len() {
        bare.strip_suffix('-').unwrap_or(bare)
    } else {
        bare
    };
    match bare {
        "" => name,
        "ash" | "mksh" => "sh",
        "pypy" => "python",
        "nodejs" => "node",
        bare => bare,
    }
}

/// A shell, by any of its names ([`interpreter_name`]: `bash5`, `ash`).
fn is_shell(name: &str) -> bool {
    SHELLS.contains(&interpreter_name(name))
}

/// Where an interpreter given some words gets the program it runs ([`interpreter_run`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Run<'a> {
    /// Its standard input (`sh`, `bash -s -- --yes`, `python3 -`, `node`).
    Stdin,
    /// Code given as a word (`bash -c '…'`, `python3 -c'…'`, `node --eval=…`).
    Code(&'a str),
    /// A script file (`bash install.sh`, `python3 -u /tmp/i.py`, `deno run x.ts`).
    File(&'a str),
    /// Nothing of its own: `-c` without a word, a module (`python3 -m http.server`), a package
    /// manager's subcommand (`bun install`).
    Nothing,
}

/// How an interpreter's short options are written, by letter ([`interpreter_run`]).
struct Letters {
    /// Whose value is the program: the rest of the group, else the next word.
    code: &'static str,
    /// Whose value is a script file.
    file: &'static str,
    /// Whose value is the rest of the group, else the next word (`-W ignore`, `-r dotenv`).
    valued: &'static str,
    /// Whose value is the rest of the group only (Perl's `-Mstrict`, `-i.bak`: `-pie` edits in
    /// place keeping a copy named with `e` added).
    attached: &'static str,
    /// Followed by digits only (Perl's `-0777`, `-l`: `-lne` is `-l -n -e`).
    digits: &'static str,
    /// After which something else runs (Python's `-m module`).
    other: &'static str,
    /// Long options whose value is the program (`--eval`, `--print`).
    code_long: &'static [&'static str],
    /// Long options whose value is the next word unless written `--x=v`.
    valued_long: &'static [&'static str],
    /// Letters or long options that only check the program, never run it (`php -l`, `ruby -c`,
    /// `node --check`; not `perl -c`, which runs `BEGIN` blocks).
    check: &'static [&'static str],
    /// Short options are whole words, never grouped (node's `-pe` is `--print --eval`).
    whole: bool,
}

const NO_LETTERS: Letters = Letters {
    code: "",
    file: "",
    valued: "",
    attached: "",
    digits: "",
    other: "",
    code_long: &[],
    valued_long: &[],
    check: &[],
    whole: false,
};

/// The option grammar of the interpreters whose arguments are read ([`interpreter_run`]), from
/// their manuals: what takes the program, a file or a value.
fn letters(name: &str) -> Option<Letters> {
    Some(match name {
        "python" => Letters {
            code: "c",
            valued: "WXQ",
            other: "m",
            valued_long: &["--check-hash-based-pycs"],
            ..NO_LETTERS
        },
        "node" => Letters {
            code: "ep",
            valued: "rC",
            code_long: &["--eval", "--print"],
            valued_long: &[
                "--require",
                "--import",
                "--loader",
                "--experimental-loader",
                "--conditions",
                "--input-type",
                "--inspect-port",
                "--title",
                "--env-file",
            ],
            check: &["c", "--check"],
            whole: true,
            ..NO_LETTERS
        },
        // `deno run`'s options (`-r` reloads and takes no word; `-c` is the config file;
        // `--check` type-checks, then runs; `--lock` and `--env-file` take a value only after
        // `=`).
        "deno" => Letters {
            valued: "cL",
            valued_long: &[
                "--config",
                "--import-map",
                "--cert",
                "--location",
                "--seed",
                "--log-level",
                "--ext",
            ],
            whole: true,
            ..NO_LETTERS
        },
        "bun" => Letters {
            code: "ep",
            valued: "rc",
            code_long: &["--eval", "--print"],
            valued_long: &["--preload", "--config", "--cwd", "--env-file"],
            whole: true,
            ..NO_LETTERS
        },
        // `perl -c` runs `BEGIN`/`CHECK` blocks and `use`: no mere check.
        "perl" => Letters {
            code: "eE",
            valued: "I",
            attached: "MmxidDVC",
            digits: "0l",
            ..NO_LETTERS
        },
        "ruby" => Letters {
            code: "e",
            valued: "rICE",
            attached: "xFKTWi",
            digits: "0",
            valued_long: &["--encoding", "--external-encoding", "--internal-encoding"],
            check: &["c"],
            ..NO_LETTERS
        },
        "php" => Letters {
            code: "rBRE",
            file: "fF",
            valued: "dczSt",
            check: &["l"],
            ..NO_LETTERS
        },
        "osascript" => Letters {
            code: "e",
            valued: "ls",
            ..NO_LETTERS
        },
        _ => return None,
    })
}

/// Where interpreter `name` given `args` gets its program, its words read as it reads them:
/// a shell's by [`shell_run`], PowerShell's by [`powershell_run`], `source`'s first word;
/// the others by their option grammar ([`letters`]): options come first, a group of letters at
/// once; the letter or long option of the program makes its value the code; `-` reads standard
/// input, `--` ends the options; the first word past them is a script file (`deno run` and
/// `bun run` first, `deno eval` code; another of their subcommands runs nothing of its own).
/// `None`: not an interpreter whose words are read.
fn interpreter_run<'a>(name: &str, args: &[&'a str]) -> Option<Run<'a>> {
    let name = interpreter_name(name);
    if SHELLS.contains(&name) {
        return Some(shell_run(args));
    }
    match name {
        "pwsh" | "powershell" => return Some(powershell_run(name, args)),
        "source" | "." => {
            return Some(match args.first() {
                Some(&("/dev/stdin" | "-")) => Run::Stdin,
                Some(f) => Run::File(f),
                None => Run::Nothing,
            });
        }
        _ => {}
    }
    let g = letters(name)?;
    let value = |rest: &'a str, words: &mut std::slice::Iter<'_, &'a str>| {
        if rest.is_empty() {
            words.next().copied()
        } else {
            Some(rest)
        }
    };
    let mut subcommand = false;
    let mut words = args.iter();
    while let Some(&a) = words.next() {
        if a == "-" {
            return Some(Run::Stdin);
        }
        if a == "--" {
            return Some(words.next().map_or(Run::Stdin, |f| Run::File(f)));
        }
        if a.starts_with("--") {
            let (key, inline) = match a.split_once('=') {
                Some((k, v)) => (k, Some(v)),
                None => (a, None),
            };
            if g.check.contains(&key) {
                return Some(Run::Nothing);
            }
            if g.code_long.contains(&key) {
                return Some(
                    inline
                        .or_else(|| words.next().copied())
                        .map_or(Run::Nothing, Run::Code),
                );
            }
            if inline.is_none() && g.valued_long.contains(&key) {
                words.next();
            }
            continue;
        }
        if let Some(group) = a.strip_prefix('-') {
            if g.whole {
                // One option a word: `-pe` is `--print --eval`, both the program's.
                // `node -p -e X`: the program is the last such option's word.
                if !group.is_empty() && group.chars().all(|ch| g.code.contains(ch)) {
                    if words.clone().next().is_some_and(|w| w.starts_with('-')) {
                        continue;
                    }
                    return Some(words.next().map_or(Run::Nothing, |c| Run::Code(c)));
                }
                if g.check.contains(&group) {
                    return Some(Run::Nothing);
                }
                if group.len() == 1 && g.valued.contains(group) {
                    words.next();
                }
                continue;
            }
            let mut after_digits = false;
            for (i, ch) in group.char_indices() {
                if after_digits && ch.is_ascii_digit() {
                    continue;
                }
                let rest = &group[i + ch.len_utf8()..];
                if g.check.iter().any(|c| c.len() == 1 && c.starts_with(ch)) {
                    return Some(Run::Nothing);
                }
                if g.code.contains(ch) {
                    return Some(value(rest, &mut words).map_or(Run::Nothing, Run::Code));
                }
                if g.file.contains(ch) {
                    return Some(value(rest, &mut words).map_or(Run::Nothing, Run::File));
                }
                if g.other.contains(ch) {
                    return Some(Run::Nothing);
                }
                if g.valued.contains(ch) {
                    if rest.is_empty() {
                        words.next();
                    }
                    break;
                }
                if g.attached.contains(ch) {
                    break;
                }
                after_digits = g.digits.contains(ch);
            }
            continue;
        }
        // The first word past the options.
        match (name, a) {
            ("deno" | "bun", "run") | ("deno", "serve") if !subcommand => subcommand = true,
            ("deno", "eval") if !subcommand => {
                return Some(
                    words
                        .find(|w| !w.starts_with('-'))
                        .map_or(Run::Nothing, |c| Run::Code(c)),
                );
            }
            (
                "bun",
                "x" | "i" | "install" | "add" | "remove" | "update" | "create" | "init" | "pm"
                | "link" | "build" | "test" | "upgrade" | "outdated" | "publish" | "patch",
            )
            | ("deno", _)
                if !subcommand =>
            {
                return Some(Run::Nothing);
            }
            _ => return Some(Run::File(a)),
        }
    }
    Some(Run::Stdin)
}

/// Where PowerShell given `args` gets its program. Its parameters may be shortened to a prefix
/// (as long as its parser asks for each), any case (`-c`, `-com`, `-Command`; `-f`, `-File`; `-e`, `-en`, `-enc`,
/// `-ec`, `-EncodedCommand`; `-ex`, `-ep`, `-ExecutionPolicy`): `-Command` names the code
/// (`-Command -` standard input; `-CommandWithArgs` too), `-File` a script (`-File -` standard
/// input); options that take a value (`-ExecutionPolicy Bypass`, `-WindowStyle Hidden`) skip it;
/// `-EncodedCommand` is no program read here (its Base64 text is the PowerShell rule's); `-`
/// reads standard input. The first
/// other word is a script for `pwsh` (7) and the code for Windows PowerShell.
fn powershell_run<'a>(name: &str, args: &[&'a str]) -> Run<'a> {
    // (name, the shortest prefix pwsh's parser takes for it; aliases whole), in the order it
    // resolves `-e`/`-ex`.
    const VALUED: &[(&str, usize)] = &[
        ("executionpolicy", 2),
        ("ep", 2),
        ("windowstyle", 1),
        ("outputformat", 1),
        ("of", 2),
        ("inputformat", 3),
        ("if", 2),
        ("configurationname", 6),
        ("configurationfile", 14),
        ("workingdirectory", 2),
        ("wd", 2),
        ("version", 1),
        ("psconsolefile", 2),
        ("custompipename", 3),
        ("settingsfile", 8),
    ];
    let is = |o: &str, full: &str, min: usize| o.len() >= min && full.starts_with(o);
    let stdin_or = |w: Option<&&'a str>, f: fn(&'a str) -> Run<'a>| match w {
        None => Run::Nothing,
        Some(&"-") => Run::Stdin,
        Some(w) => f(w),
    };
    let mut words = args.iter();
    while let Some(&a) = words.next() {
        let lower = a.to_ascii_lowercase();
        let Some(o) = lower.strip_prefix('-') else {
            return if name == "powershell" {
                Run::Code(a)
            } else {
                Run::File(a)
            };
        };
        if o.is_empty() {
            return Run::Stdin;
        }
        if VALUED.iter().any(|&(full, min)| is(o, full, min)) {
            words.next();
        } else if o == "cwa" || is(o, "commandwithargs", 8) || is(o, "command", 1) {
            return stdin_or(words.next(), Run::Code);
        } else if is(o, "file", 1) {
            return stdin_or(words.next(), Run::File);
        } else if o == "ec" || is(o, "encodedcommand", 1) {
            return Run::Nothing;
        }
    }
    Run::Stdin
}

/// Where a shell given `args` gets its program, its words read as bash reads them
/// (`parse_shell_options`): options come first, each group of letters at once (`-xc`,
/// `-euo`); `c` (in a group of either sign, or fish's `--command`) makes the first word past
/// the options the code; `s` reads standard input whatever follows; `n` only checks the
/// syntax, running nothing; `o`/`O` take a word each
/// (`-euo pipefail`), as do `--rcfile` and `--init-file`; long options may be written with one
/// dash (`-norc`); `-` or `--` ends the options (a lone `+` is an empty group); and without `c`
/// or `s` the first word past them is a script file (`bash -x install.sh`). One reader for
/// every rule that asks what a shell runs.
fn shell_run<'a>(args: &[&'a str]) -> Run<'a> {
    const LONG: &[&str] = &[
        "norc",
        "noprofile",
        "noediting",
        "posix",
        "restricted",
        "login",
        "verbose",
        "debugger",
        "dump-strings",
        "dump-po-strings",
        "rcfile",
        "init-file",
        "help",
        "version",
        "pretty-print",
    ];
    let (mut code, mut stdin, mut noexec) = (false, false, false);
    let mut operand = None;
    let mut words = args.iter().copied();
    while let Some(a) = words.next() {
        let long = a
            .strip_prefix("--")
            .or_else(|| a.strip_prefix('-').filter(|l| LONG.contains(l)));
        if let Some(l) = long {
            match l {
                "" => {
                    operand = words.next();
                    break;
                }
                "rcfile" | "init-file" => {
                    words.next();
                }
                "command" => code = true,
                l => {
                    if let Some(inline) = l.strip_prefix("command=") {
                        return Run::Code(inline);
                    }
                }
            }
            continue;
        }
        if a == "-" {
            operand = words.next();
            break;
        }
        let Some(flags) = a.strip_prefix('-').or_else(|| a.strip_prefix('+')) else {
            operand = Some(a);
            break;
        };
        code |= flags.contains('c');
        stdin |= flags.contains('s');
        // `-n` reads commands without running them (a syntax check); `+n` turns that off.
        if flags.contains('n') {
            noexec = a.starts_with('-');
        }
        for _ in flags.chars().filter(|f| matches!(f, 'o' | 'O')) {
            words.next();
        }
    }
    match operand {
        _ if noexec => Run::Nothing,
        Some(word) if code => Run::Code(word),
        None if code => Run::Nothing,
        _ if stdin => Run::Stdin,
        Some(file) => Run::File(file),
        None => Run::Stdin,
    }
}

/// The file command line `code` runs: its first word when that is a path (`/tmp/w`), or the
/// script it gives an interpreter (`bash /tmp/w.sh`).
fn program_file(code: &str, path: impl Fn(&str) -> bool) -> Option<&str> {
    let words: Vec<&str> = code.split_whitespace().collect();
    let (first, rest) = words.split_first()?;
    if path(first) {
        return Some(first);
    }
    match interpreter_run(&base_name(first), rest) {
        Some(Run::File(f)) => Some(f),
        _ => None,
    }
}

/// What the commands of a snippet run, found once per snippet (not once per download or
/// assignment: a snippet of n commands would cost n² otherwise).
#[derive(Default)]
struct Runs {
    /// By a file's base name, the commands that run it (in source order): a path run as a
    /// command (`/tmp/i.sh`, `./x`), a script given to an interpreter (`bash i.sh`, `python3 -u
    /// /tmp/i.py`; not a syntax check, `php -l f`), or shell or PowerShell code that is one path
    /// (`bash -c /tmp/i.sh`, `eval /tmp/i.sh`, `powershell ./i.ps1`; Perl's `-e /tmp/x` is a
    /// pattern).
    files: HashMap<String, Vec<usize>>,
    /// By a variable's name, the commands that run its value (in source order): as the whole
    /// program (`eval "$X"`, `bash -c "${X:-}"` — not a version string in a URL of a longer
    /// program), as a file (`bash <(echo "$X")`) or as the input of one that runs its input
    /// (`echo "$X" | sh`, `printf %s "$X" | tr -d '\r' | sh`, `sh <<< "$X"`).
    vars: HashMap<String, Vec<usize>>,
}

impl Runs {
    /// `environments`: the `NAME=value` words each command's wrappers give it ([`effective`]).
    fn of(
        facts: &ShellFacts,
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
        let assigned: Vec<(&str, &str)> = facts
            .assignments()
            .iter()
            .map(|a| (a.name.as_str(), a.value.as_str()))
            .collect();
        for (at, code) in variable_command_lines(&assigned) {
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
    fn after(list: Option<&Vec<usize>>, i: usize) -> Option<usize> {
        let js = list?;
        js.get(js.partition_point(|&j| j <= i)).copied()
    }
}

/// The variable a word is as a whole: `$X`, `${X}` or `${X<op>…}` (`${X:-}`, `${X%…}`), quoted
/// or not; not `$XY`, `${#X}` or `$X/y`.
fn whole_var(p: &str) -> Option<&str> {
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
fn vars_used(a: &str) -> impl Iterator<Item = &str> {
    a.match_indices('$').filter_map(move |(at, _)| {
        let r = &a[at + 1..];
        let r = r.strip_prefix('{').unwrap_or(r);
        let n = r
            .find(|ch: char| !(ch.is_ascii_alphanumeric() || ch == '_'))
            .unwrap_or(r.len());
        (n > 0).then(|| &r[..n])
    })
}

#[allow(clippy::too_many_arguments)]
fn download_exec(
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
fn output_file(name: &str, args: &[&str], c: &ShellCommand) -> Option<String> {
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
fn in_a_path(w: &str, inner: &str, line: &str) -> bool {
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
fn output_runner(
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
fn variable_run<'c>(
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
fn passes_on(name: &str, args: &[&str]) -> bool {
    match name {
        "tr" | "sed" | "cat" | "dos2unix" | "gunzip" | "zcat" | "xzcat" | "bzcat" | "zstdcat"
        | "uudecode" | "base32" => true,
        "gzip" | "xz" | "bzip2" | "zstd" | "lz4" => args
            .iter()
            .any(|a| matches!(*a, "-d" | "--decompress" | "-dc" | "-cd")),
        _ => is_decoder(name, args),
    }
}

fn is_decoder(name: &str, args: &[&str]) -> bool {
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
fn decode_exec(
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

fn reverse_shell(
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

static PERSIST_PATH: LazyLock<Regex> = LazyLock::new(|| {
    re(
        r"(?i)(\.bashrc|\.bash_profile|\.zshrc|\.zprofile|\.profile|/etc/profile|/etc/bash\.bashrc|config\.fish|/etc/cron|/var/spool/cron|authorized_keys|/etc/systemd/system|\.config/systemd/user|/library/launch(?:agents|daemons)|/etc/rc\.local|/etc/init\.d|\.git/hooks/|/etc/ld\.so\.preload)",
    )
});
static PERSIST_PAYLOAD: LazyLock<Regex> = LazyLock::new(|| {
    re(
        r"(?i)(\b(?:curl|wget|nc|ncat|socat|base64|python3?\s+-c|perl\s+-e|bash\s+-i|/dev/tcp)\b|/tmp/|ssh-(?:rsa|ed25519)\s+AAAA)",
    )
});

fn persistence(
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
fn evasion(
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

fn privesc(
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
static CRED_PATH: LazyLock<Regex> = LazyLock::new(|| {
    re(
        r"(?i)(~/\.ssh/id_|\$home/\.ssh/id_|/\.ssh/id_(?:rsa|dsa|ecdsa|ed25519)\b|~/\.ssh/?$|~/\.ssh/\*|\.aws/credentials|\.config/gcloud/(?:credentials|application_default)|\.docker/config\.json|\.git-credentials|\.netrc\b|/etc/shadow|/login data\b|/google/chrome/[^\s]*/cookies|\.mozilla/firefox/[^\s]*(?:logins\.json|key4\.db|cookies\.sqlite)|keychain-db|login\.keychain|wallet\.dat|\.ethereum/keystore|\.config/solana/id\.json|\.electrum/wallets)",
    )
});
/// Files whose content must not leave the machine (credential stores and `.env` files).
static SENT_FILE: LazyLock<Regex> = LazyLock::new(|| {
    re(
        r"(?i)(~/\.ssh/(?:id_\w+|config|known_hosts)?(?:$|[\s'\x22)])|\$home/\.ssh/id_\w+(?:$|[\s'\x22)])|\bid_(?:rsa|dsa|ecdsa|ed25519)(?:$|[\s'\x22)])|\.aws/credentials|\.kube/config|\.docker/config\.json|\.git-credentials|\.netrc\b|/etc/shadow|login data|cookies\.sqlite|keychain|wallet\.dat|(?:^|[\s/@'\x22])\.env(?:\.local|\.production)?\b)",
    )
});
/// Commands that read a file's content.
const READERS: &[&str] = &[
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
static WHOLE_ENV: LazyLock<Regex> = LazyLock::new(|| {
    re(r"(\$\(\s*(?:env|printenv|set|export -p)\b|`\s*(?:env|printenv)\b|/proc/self/environ)")
});
static SECRET_VAR: LazyLock<Regex> = LazyLock::new(|| {
    re(
        r"\$\{?\(?([A-Z][A-Z0-9_]*(?:TOKEN|SECRET|KEY|PASSWORD|PASSWD|PASS|CREDENTIALS?|AUTH|COOKIE|SESSION|DATABASE_URL|DB_URL|DSN|CONNECTION_STRING)[A-Z0-9_]*)",
    )
});

fn exfil(
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
        .any(|a| a.contains("$(") || a.contains("${") || a.contains('`') || SECRET_VAR.is_match(a))
    {
        let secret = args
            .iter()
            .any(|a| SECRET_VAR.is_match(a) || WHOLE_ENV.is_match(a) || CRED_PATH.is_match(a));
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
    // What the command sends: its body/upload arguments, the URL's interpolations, and what is
    // piped into it.
    let mut body: Vec<&str> = Vec::new();
    let mut it = args.iter().peekable();
    while let Some(a) = it.next() {
        let is_flag = matches!(
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
        } else if matches!(
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
        ) {
            // Options with a value that is not sent as data (authentication goes in headers).
            it.next();
        } else if a.starts_with("--data")
            || a.starts_with("--post-")
            || a.starts_with("-d") && a.len() > 2
        {
            body.push(a);
        } else if a.contains("://") || !a.starts_with('-') {
            // URL or host: data interpolated into it leaves too.
            if a.contains("$(") || SECRET_VAR.is_match(a) {
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
        .find_map(|a| SECRET_VAR.captures(a).map(|c| c[1].to_owned()));
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
            a.iter()
                .find(|x| x.starts_with('/') || x.starts_with('~') || x.starts_with("$HOME"))
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
        SECRET_VAR
            .captures_iter(b)
            .find(|c| !unexpanded || c[0].starts_with("${"))
            .map(|c| c[1].to_owned())
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
        if host.kind == HostKind::Shady {
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

/// Credentials named after a vendor, and the domains that vendor's APIs live on.
const VENDORS: &[(&str, &str, &[&str])] = &[
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
fn foreign_vendor(var: &str, host: &str) -> Option<&'static str> {
    if host.is_empty() {
        return None;
    }
    let (_, vendor, domains) = VENDORS
        .iter()
        .find(|(prefix, _, _)| var.starts_with(prefix))?;
    let own = domains.iter().any(|d| under(host, d));
    (!own).then_some(*vendor)
}

static INDEX_FLAG: LazyLock<Regex> = LazyLock::new(|| {
    re(
        r"^(?:--extra-index-url|--index-url|-i|--registry|--trusted-host|--find-links|-f)(?:=(.*))?$",
    )
});

fn package_install(
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
    let npm = matches!(name, "npm" | "yarn" | "pnpm" | "bun" | "npx");
    if !(pip || npm)
        || !args
            .iter()
            .any(|a| matches!(*a, "install" | "i" | "add" | "-y" | "--yes"))
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
    for a in args
        .iter()
        .filter(|a| !a.starts_with('-') && !matches!(**a, "install" | "i" | "add" | "pip"))
    {
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

/// `python -c "…"`, `node -e "…"`, `bash -ec "…"`, `eval '…'`, `ssh host '…'`: the programs a
/// command is given as words ([`given_programs`]) are read too — substitutions in them as well:
/// in single quotes the snippet's parse did not read them, and a finding both reads make at one
/// line is kept once.
fn inline_code(ctx: &mut Ctx<'_>, name: &str, args: &[&str], line: u32, place: Place<'_>) {
    read_given(ctx, given_programs(name, args), line, place);
}

/// The rules for programs a command is given ([`given_programs`]), at line `line`.
fn read_given(ctx: &mut Ctx<'_>, programs: Vec<Given>, line: u32, place: Place<'_>) {
    for g in programs {
        // A program run here is read by a shell that expands its variables.
        let unexpanded = ctx.unexpanded;
        ctx.unexpanded = unexpanded && g.remote;
        if g.remote {
            remote_rules(ctx, |ctx| {
                program_rules(ctx, &g.runner, &g.code, line, place);
            });
        } else {
            program_rules(ctx, &g.runner, &g.code, line, place);
        }
        ctx.unexpanded = unexpanded;
    }
}

/// The rules run by `read` over a program another host runs (ssh's remote command or input),
/// keeping what it runs from the network, hands to a connection or sends away (SKG-RCE-*,
/// SKG-SHELL-001, SKG-EXFIL-*, SKG-CRED-001): what it changes there (a key in
/// `authorized_keys`, a service restarted) is that host's administration, not this machine's.
fn remote_rules(ctx: &mut Ctx<'_>, read: impl FnOnce(&mut Ctx<'_>)) {
    let before = ctx.out.len();
    read(ctx);
    let kept: Vec<_> = ctx
        .out
        .drain(before..)
        .filter(|f| {
            [
                RCE_DOWNLOAD.id,
                RCE_DECODE.id,
                SHELL_REVERSE.id,
                EXFIL_CMD.id,
                EXFIL_CODE.id,
                CRED_READ.id,
            ]
            .contains(&f.rule.as_str())
        })
        .collect();
    ctx.out.extend(kept);
}

/// The rules for a program `runner` runs, read at line `at`: Python's and JavaScript's code
/// rules, a shell's (`ssh`'s is its remote shell's), Perl's, Ruby's and PHP's lexical reading
/// ([`script_rules`]), and the rule for encoded blobs (for those three, AppleScript and
/// PowerShell: every line of a shell block is read as PowerShell already — a second reading of
/// `powershell -c "irm … | iex"` would only trade its finding's snippet for a shorter one — and
/// an MCP launch of PowerShell is read as its joined command line).
fn program_rules(ctx: &mut Ctx<'_>, runner: &str, code: &str, at: u32, place: Place<'_>) {
    match Reading::of_interpreter(runner) {
        Some(Reading::Kind(FileKind::Python)) => {
            code_rules(ctx, Language::Python, code, at, place);
        }
        Some(Reading::Kind(FileKind::JavaScript)) => {
            code_rules(ctx, Language::JavaScript, code, at, place);
        }
        Some(Reading::Kind(FileKind::Shell)) => shell_rules(ctx, code, at, place),
        Some(Reading::Lexical(script)) => {
            script_rules(ctx, script, code, at, place);
            blob_rule(ctx, code, at, place);
        }
        _ => blob_rule(ctx, code, at, place),
    }
}

/// Perl, Ruby and PHP programs, read lexically (no grammar of theirs is compiled in), comments
/// and POD/`=begin` blocks left out ([`without_comments`]):
/// - the commands they hand a shell are read as shell ([`script_commands`]);
/// - a socket wired to a shell is a reverse shell, as in [`code_rules`]: a socket kept in a
///   variable that is made a program's standard stream (`open(STDIN, ">&S")`, `fdopen($c`,
///   `reopen(s)`, `in: s`, `0 => $sock`) in a program that names a shell (or runs each line it
///   reads, `system $_ while <>`), or a shell given a descriptor as its input (`"/bin/sh -i
///   <&3 >&3"`, `<&%d`) in a program that opens a socket.
fn script_rules(ctx: &mut Ctx<'_>, script: Script, code: &str, line0: u32, place: Place<'_>) {
    static SOCKET: LazyLock<Regex> = LazyLock::new(|| {
        re(
            r"\b(?:socket\s*\(|IO::Socket|TCPSocket|Socket\.tcp|Socket\.new|p?fsockopen|stream_socket_client|socket_connect)",
        )
    });
    // `$c = new IO::Socket::INET(…)`, `s = TCPSocket.new(…)`, `$sock = fsockopen(…)`,
    // `socket(my $s, …)`: the variable a socket is kept in.
    static SOCKET_VAR: LazyLock<Regex> = LazyLock::new(|| {
        re(
            r"\$?([A-Za-z_]\w*)\s*=\s*(?:new\s+)?(?:IO::Socket(?:::INET|::IP)?|TCPSocket\.(?:new|open)|Socket\.tcp|p?fsockopen|stream_socket_client|socket_create)\b|\bsocket\s*\(\s*(?:(?:my|our|local)\s+)?\$?([A-Za-z_]\w*)\s*,",
        )
    });
    // A variable made this program's standard stream (`open(STDIN, ">&S")`, `open(STDOUT,
    // ">&", $s)`, `"<&=" . fileno($s)`, `STDIN->fdopen($c`, `dup2(s`, `$stdin.reopen(s)`),
    // or a child's (on a `spawn`/`exec`/`system`/`popen` line: `in: s`, `:in => s`,
    // `[:in, :out, :err] => TCPSocket.new(…)`); PHP's descriptor array counts when the same
    // variable is both 0 and 1 (`array(0=>$sock, 1=>$sock, …)`).
    static STREAM: LazyLock<Regex> = LazyLock::new(|| {
        re(
            r#"\bopen\s*\(?\s*STD(?:IN|OUT|ERR)\s*,\s*["'][+<>]*&=?\s*(?:["']\s*[,.]\s*)?(?:fileno\s*\(\s*)?\$?([A-Za-z_]\w*)|\b(?:fdopen|dup2)\s*\(\s*\$?([A-Za-z_]\w*)|(?i:\$?std(?:in|out|err))\.reopen\s*\(\s*\$?([A-Za-z_]\w*)"#,
        )
    });
    static CHILD: LazyLock<Regex> = LazyLock::new(|| {
        re(
            r"\b(?:spawn|exec|system|popen)\b[^\n]*?(?::in\s*=>|\bin:|\]\s*=>)\s*\$?([A-Za-z_]\w*(?:\.(?:new|open))?)",
        )
    });
    static DESCRIPTOR: LazyLock<Regex> = LazyLock::new(|| re(r"\b([01])\s*=>\s*\$([A-Za-z_]\w*)"));
    static SHELL: LazyLock<Regex> = LazyLock::new(|| {
        re(
            r#"(?i)/bin/(?:ba|z|da|k)?sh\b|\b(?:ba)?sh\s+-i\b|\bcmd\.exe\b|\bsystem\s*\(?\s*\$_\b|\b(?:proc_open|spawn|exec|system|popen)\s*\(?\s*["'](?:ba|z|da)?sh["']"#,
        )
    });
    // A shell whose input is a descriptor past the standard three, on the line naming it.
    static FD_SHELL: LazyLock<Regex> = LazyLock::new(|| {
        re(
            r"(?i)(?:/bin/(?:ba|z|da|k)?sh\b|\b(?:ba)?sh\s+-i\b|\bcmd\.exe\b)[^\n]*<&\s*(?:[3-9]|%d|\$\w|#\{)",
        )
    });
    if code.len() > 500_000 {
        return;
    }
    let code = &without_comments(code, script);
    let index = LineIndex::new(code, line0);
    for (at, command) in script_commands(code) {
        shell_rules(ctx, &command, index.line(at), place);
    }
    if !SOCKET.is_match(code) {
        return;
    }
    let wired = || {
        let sockets: HashSet<&str> = SOCKET_VAR
            .captures_iter(code)
            .filter_map(|c| c.get(1).or_else(|| c.get(2)))
            .map(|m| m.as_str())
            .collect();
        let socket = |v: &str| sockets.contains(v) || v.starts_with("TCPSocket.");
        let stream = STREAM
            .captures_iter(code)
            .chain(CHILD.captures_iter(code))
            .any(|c| (1..=3).filter_map(|g| c.get(g)).any(|m| socket(m.as_str())));
        let mut fds: [HashSet<&str>; 2] = [HashSet::new(), HashSet::new()];
        for c in DESCRIPTOR.captures_iter(code) {
            let (Some(fd), Some(v)) = (c.get(1), c.get(2)) else {
                continue;
            };
            fds[usize::from(fd.as_str() == "1")].insert(v.as_str());
        }
        stream || fds[0].iter().any(|v| fds[1].contains(v) && socket(v))
    };
    let at = FD_SHELL
        .find(code)
        .map(|m| m.start())
        .or_else(|| SHELL.find(code).filter(|_| wired()).map(|m| m.start()));
    if let Some(at) = at {
        let l = index.line(at);
        let snippet = code
            .lines()
            .nth((l - line0) as usize)
            .unwrap_or("")
            .to_owned();
        ctx.emit(
            SHELL_REVERSE,
            0.85,
            l,
            &snippet,
            "connects a socket to a shell's standard streams".into(),
            Vec::new(),
            place,
            0,
        );
    }
}

/// Line numbers of byte offsets in a text, found by binary search over its line starts (a
/// count of newlines per match would make many matches cost the text's length each).
struct LineIndex {
    starts: Vec<usize>,
    line0: u32,
}

impl LineIndex {
    fn new(text: &str, line0: u32) -> LineIndex {
        let starts = std::iter::once(0)
            .chain(text.match_indices('\n').map(|(i, _)| i + 1))
            .collect();
        LineIndex { starts, line0 }
    }

    /// The line of byte `offset` (`line0` for the first line).
    fn line(&self, offset: usize) -> u32 {
        let index = self
            .starts
            .partition_point(|&s| s <= offset)
            .saturating_sub(1);
        self.line0 + u32::try_from(index).unwrap_or(u32::MAX - self.line0)
    }
}

/// A Perl, Ruby or PHP program with its comments blank (line count kept), as its language
/// reads them: lines whose first word starts `#` (in PHP not its `#[` attributes); in PHP
/// `//` lines and `/* … */` (the rest of the line after `*/` is kept); Perl's POD (a POD
/// command — `=pod`, `=head1`, … — alone or before a space at a line's start, to `=cut`) and
/// Ruby's `=begin` to `=end`. A comment after code is kept: telling it from a `#` in a string
/// would take the language's lexer.
fn without_comments(code: &str, script: Script) -> String {
    static POD: LazyLock<Regex> = LazyLock::new(|| re(r"^=[A-Za-z]\w*(?:\s|$)"));
    static RUBY_BEGIN: LazyLock<Regex> = LazyLock::new(|| re(r"^=begin(?:\s|$)"));
    static RUBY_END: LazyLock<Regex> = LazyLock::new(|| re(r"^=end(?:\s|$)"));
    let mut out = String::with_capacity(code.len());
    let mut pod = false;
    let mut block = false;
    for line in code.split_inclusive('\n') {
        let t = line.trim_start();
        let ending = if line.ends_with('\n') { "\n" } else { "" };
        if block {
            // Inside a PHP `/* … */`: what follows its end is code.
            if let Some(end) = line.find("*/") {
                block = false;
                out.push_str(&line[end + 2..]);
            } else {
                out.push_str(ending);
            }
            continue;
        }
        let blank = match script {
            Script::Perl if pod => {
                pod = !line.starts_with("=cut");
                true
            }
            Script::Ruby if pod => {
                pod = !RUBY_END.is_match(line);
                true
            }
            Script::Perl if POD.is_match(line) => {
                pod = !line.starts_with("=cut");
                true
            }
            Script::Ruby if RUBY_BEGIN.is_match(line) => {
                pod = true;
                true
            }
            Script::Php if t.starts_with("/*") => {
                if let Some(end) = t[2..].find("*/") {
                    out.push_str(&t[end + 4..]);
                } else {
                    block = true;
                    out.push_str(ending);
                }
                continue;
            }
            Script::Php => (t.starts_with('#') && !t.starts_with("#[")) || t.starts_with("//"),
            Script::Perl | Script::Ruby => t.starts_with('#'),
        };
        out.push_str(if blank { ending } else { line });
    }
    out
}

/// The commands a Perl, Ruby or PHP program hands a shell, each with the offset it starts at:
/// - the string literals given to `system`, `exec` or `spawn` (one: a command line; several:
///   a command's words, quoted for the shell);
/// - the first literal given to `shell_exec`, `passthru`, `popen`, `proc_open`, `IO.popen` or
///   `Open3` (a command line; what follows is a mode or options);
/// - a pipe `open` (`open(my $f, "curl … |")`, `open(my $f, '-|', …)`);
/// - backquotes, and `qx` and `%x` with any delimiter.
///
/// An interpolation reads as a shell variable (`#{url}` → `$x`; `$url` is one already).
fn script_commands(code: &str) -> Vec<(usize, String)> {
    static CALL: LazyLock<Regex> = LazyLock::new(|| {
        re(
            r"\b(?:system|exec|spawn|shell_exec|passthru|popen|proc_open|IO\.popen|Open3\.\w+)\s*\(?\s*|\bopen\s*\(?\s*(?:my\s+)?[$\w]+\s*,\s*|`|\b(?:qx|%x)\s*[^\w\s]|%x[^\w\s]",
        )
    });
    let mut out = Vec::new();
    // Where the next of a closing character (or the line's end) is, from the last search for
    // it: many openers on one line would otherwise each search the line to its end.
    let mut next_close: HashMap<char, usize> = HashMap::new();
    let mut closing = |close: char, from: usize| -> Option<usize> {
        let cached = next_close.get(&close).copied().filter(|&at| at >= from);
        let at = cached.unwrap_or_else(|| {
            code[from..]
                .find([close, '\n'])
                .map_or(code.len(), |e| from + e)
        });
        next_close.insert(close, at);
        code[at..].starts_with(close).then_some(at)
    };
    // The end of the last quoted command: a backquote closing one opens none.
    let mut resume = 0;
    for m in CALL.find_iter(code) {
        if m.start() < resume {
            continue;
        }
        let head = m.as_str();
        let from = m.end();
        let quoted = |e: usize, resume: &mut usize| {
            *resume = e + 1;
            code[from..e].to_owned()
        };
        let command = if head == "`" {
            closing('`', from).map(|e| quoted(e, &mut resume))
        } else if head.starts_with("qx") || head.starts_with("%x") {
            let open = head.chars().last().unwrap_or('(');
            let close = match open {
                '(' => ')',
                '{' => '}',
                '[' => ']',
                '<' => '>',
                c => c,
            };
            closing(close, from).map(|e| quoted(e, &mut resume))
        } else {
            let words = string_literals(&code[from..]);
            let call = head.trim_start();
            if call.starts_with("open") {
                match words.as_slice() {
                    [mode, command @ ..]
                        if matches!(mode.trim(), "-|" | "|-") && !command.is_empty() =>
                    {
                        Some(join_words(command))
                    }
                    [one, ..]
                        if one.trim_end().ends_with('|') || one.trim_start().starts_with('|') =>
                    {
                        Some(one.trim().trim_matches('|').to_owned())
                    }
                    _ => None,
                }
            } else if call.starts_with("system")
                || call.starts_with("exec")
                || call.starts_with("spawn")
            {
                match words.as_slice() {
                    [] => None,
                    [one] => Some(one.clone()),
                    many => Some(join_words(many)),
                }
            } else {
                words.into_iter().next()
            }
        };
        if let Some(c) = command.filter(|c| c.trim().len() >= 4) {
            out.push((from, interpolations_as_variables(&c)));
        }
    }
    out
}

/// Several words a program hands a command, as one shell line (each quoted).
fn join_words(words: &[String]) -> String {
    words
        .iter()
        .map(|w| shell_quote(w))
        .collect::<Vec<_>>()
        .join(" ")
}

/// Ruby's `#{…}` read as a shell variable (`$x`): the shell would read `#` as a comment.
fn interpolations_as_variables(command: &str) -> String {
    static INTERPOLATION: LazyLock<Regex> = LazyLock::new(|| re(r"#\{[^}\n]*\}"));
    INTERPOLATION.replace_all(command, "$$x").into_owned()
}

/// The string literals at the start of `text`, separated by commas (`"a", 'b'` → `a`, `b`),
/// with their escapes read (`\"`, `\'`, `\\`); the list ends at anything else.
fn string_literals(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut chars = text.chars().peekable();
    loop {
        while chars.peek().is_some_and(|c| *c == ' ' || *c == '\t') {
            chars.next();
        }
        let Some(quote) = chars.next().filter(|c| *c == '"' || *c == '\'') else {
            return out;
        };
        let mut word = String::new();
        let mut closed = false;
        while let Some(c) = chars.next() {
            match c {
                '\\' => match chars.next() {
                    Some(e) if e == quote || e == '\\' => word.push(e),
                    Some('n') if quote == '"' => word.push('\n'),
                    Some(e) => {
                        word.push('\\');
                        word.push(e);
                    }
                    None => break,
                },
                '\n' => break,
                c if c == quote => {
                    closed = true;
                    break;
                }
                c => word.push(c),
            }
        }
        if !closed {
            return out;
        }
        out.push(word);
        while chars.peek().is_some_and(|c| *c == ' ' || *c == '\t') {
            chars.next();
        }
        if chars.peek() == Some(&',') {
            chars.next();
        } else {
            return out;
        }
    }
}

/// What a download's source says of it, and by how many steps: the documented install host of a
/// common tool lowers it two; a raw IP, paste site, tunnel, URL shortener or onion service
/// raises it one, and so does an address fetched over plain HTTP (once, not again for a shady
/// host).
fn source_notes(host: &Host) -> (Vec<Note>, i32) {
    let mut context: Vec<Note> = Vec::new();
    let mut adjust = 0;
    match host.kind {
        HostKind::Known => {
            context.push(
                format!(
                    "lowered: `{}` is the documented install host of a common tool",
                    host.shown()
                )
                .into(),
            );
            adjust -= 2;
        }
        HostKind::Shady => {
            context.push(
                format!(
                    "raised: `{}` is a raw IP, paste site, tunnel, URL shortener or onion service",
                    host.name
                )
                .into(),
            );
            adjust += 1;
        }
        HostKind::Unknown | HostKind::None => {
            // What runs can be changed by anyone on the network path, whoever serves it (one
            // raise: a shady host's already says the source is not to be trusted).
            if let Some(url) = &host.plain {
                context.push(
                    format!("raised: `{url}` is fetched over plain HTTP: anyone on the network path can change what runs")
                        .into(),
                );
                adjust += 1;
            }
        }
    }
    (context, adjust)
}

fn powershell_rules(ctx: &mut Ctx<'_>, code: &str, line0: u32, place: Place<'_>) {
    static IEX: LazyLock<Regex> = LazyLock::new(|| {
        re(
            r"(?i)(\b(?:iex|invoke-expression)\b[^\n]{0,80}\b(?:iwr|irm|invoke-webrequest|invoke-restmethod|downloadstring|net\.webclient)\b|\b(?:iwr|irm|invoke-webrequest|invoke-restmethod)\b[^\n|]{0,200}\|\s*(?:iex|invoke-expression)\b|downloadstring\([^)]*\)\s*\|\s*iex|-(?:ec|e(?:n(?:c(?:o(?:d(?:e(?:d(?:c(?:o(?:m(?:m(?:a(?:n(?:d)?)?)?)?)?)?)?)?)?)?)?)?)?)\s+[A-Za-z0-9+/=]{40,})",
        )
    });
    for (i, l) in code.lines().enumerate() {
        if let Some(m) = IEX.find(l) {
            let line = line0 + u32::try_from(i).unwrap_or(0);
            // The line is read whole: its addresses as words.
            let mut host = host_of("", &[l]);
            if host.plain.is_none() {
                host.plain = first_plain(l);
            }
            let (mut context, mut adjust) = source_notes(&host);
            if let Some(why) = install_step(ctx, place, &host) {
                adjust -= why.framing;
                context.push(why);
            }
            ctx.emit(
                RCE_DOWNLOAD,
                0.9,
                line,
                l,
                format!(
                    "PowerShell runs downloaded or encoded code (`{}`)",
                    clip(m.as_str())
                ),
                context,
                place,
                adjust,
            );
        }
    }
}

// ---------------------------------------------------------------- scripts

static NET_SINK_PY: &[&str] = &[
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
static NET_SINK_JS: &[&str] = &[
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
static NET_RECV: LazyLock<Regex> = LazyLock::new(|| {
    re(
        r"(?i)^(requests|httpx|session|client|s|sock|socket|conn|urllib|request|http|https|axios|net|dns|smtp|server|aiohttp|got|superagent|needle|navigator|ws)$",
    )
});
static PY_WHOLE_ENV: LazyLock<Regex> = LazyLock::new(|| {
    re(
        r"(dict\(os\.environ\)|os\.environ\.copy\(\)|os\.environ\.items\(\)|json\.dumps\(\s*(?:dict\()?os\.environ|str\(os\.environ\)|\{\*\*os\.environ\}|JSON\.stringify\(\s*process\.env\s*\)|Object\.(?:entries|keys|values)\(\s*process\.env\s*\)|/proc/self/environ)",
    )
});
static CODE_SECRET: LazyLock<Regex> = LazyLock::new(|| {
    re(
        r#"(os\.environ(?:\.get)?[\[(]\s*['"]|os\.getenv\(\s*['"]|process\.env\.|process\.env\[\s*['"])([A-Z0-9_]*(?:TOKEN|SECRET|KEY|PASSWORD|PASSWD|CREDENTIAL|AUTH|COOKIE|SESSION|DATABASE_URL|DB_URL|DSN|CONNECTION_STRING)[A-Z0-9_]*)"#,
    )
});
static EXEC_DECODED: LazyLock<Regex> = LazyLock::new(|| {
    re(
        r"(?s)\b(exec|eval|compile|Function|runInNewContext|runInThisContext|execSync|exec_command|system|popen|spawn)\s*\((?:[^()]|\([^()]*\)|\((?:[^()]|\([^()]*\))*\)){0,200}?(b64decode|decodebytes|a85decode|b32decode|fromhex|unhexlify|codecs\.decode|zlib\.decompress|marshal\.loads|\batob\b|Buffer\.from\([^)]*(?:base64|hex)|urlopen|requests\.get|\.text\b|\.content\b|fetch\(|responseText|open\(\s*[rf]?['\x22](?:/tmp/|/var/tmp/|/dev/shm/)\.)",
    )
});
static OBFUSCATION: LazyLock<Regex> = LazyLock::new(|| {
    re(
        r#"(getattr\(\s*__import__|__import__\(\s*['"][a-z]+['"]\s*\+|__import__\(\s*(?:chr|bytes|''\.join|"".join|base64)|(?:chr\(\d+\)\s*\+\s*){6,}|String\.fromCharCode\((?:\s*\d+\s*,){7,}|(?:\\x[0-9a-fA-F]{2}){16,}|\[::-1\]\)?\s*\)\s*$|['"][A-Za-z0-9+/]{160,}={0,2}['"])"#,
    )
});

fn code_rules(ctx: &mut Ctx<'_>, language: Language, code: &str, line0: u32, place: Place<'_>) {
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

// ---------------------------------------------------------------- MCP configs

/// The servers' names and descriptions of an MCP config (empty when it is not one).
/// An MCP config's servers as clients read the file — JSON with comments and trailing commas
/// (VS Code's `.vscode/mcp.json`), else as leniently as jsonc-parser reads — under either key clients use (`mcpServers`,
/// and VS Code's `servers`: both are read, one cannot hide the other). `None`: not such JSON.
fn mcp_servers(text: &str) -> Option<Vec<(String, serde_json::Value)>> {
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

fn mcp_claim(text: &str) -> String {
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

fn mcp_config(ctx: &mut Ctx<'_>) {
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
fn shell_quote(a: &str) -> String {
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

// ---------------------------------------------------------------- metadata

fn typosquat_rule(ctx: &mut Ctx<'_>, name: &str) {
    let lower = name.to_ascii_lowercase();
    let candidates = std::iter::once(lower.as_str()).chain(lower.split(['-', '_', ' ', '.']));
    for word in candidates {
        if let Some(near) = ctx.names.near(word) {
            let near = near.to_owned();
            ctx.emit(
                TYPO,
                0.6,
                1,
                name,
                format!("the name `{word}` is one edit away from the popular `{near}`"),
                Vec::new(),
                Place::Script,
                0,
            );
            return;
        }
    }
}

// ---------------------------------------------------------------- copies

/// Categories whose findings make a copy "backdoored" when its twin lacks them.
const ADDED_DANGER: &[Category] = &[
    Category::RemoteExecution,
    Category::ReverseShell,
    Category::Exfiltration,
    Category::Persistence,
    Category::DefenseEvasion,
    Category::PrivilegeEscalation,
    Category::CryptoMining,
    Category::Obfuscation,
    Category::CredentialAccess,
];

/// Packages that share a name and a description (copies, across registries or within one): a
/// copy with a dangerous finding (medium or worse) whose rule never fires on another copy gets a
/// `SKG-DECEPT-002` finding naming that copy — the classic backdoored fork of a popular skill.
pub(crate) fn backdoored_copies(packages: &[PackageText], findings: &mut [Vec<Finding>]) {
    let mut groups: BTreeMap<(String, String), Vec<usize>> = BTreeMap::new();
    for (i, p) in packages.iter().enumerate() {
        if let (Some(n), Some(d)) = (&p.name, &p.description)
            && d.len() >= 20
        {
            let norm = |s: &str| {
                s.split_whitespace()
                    .collect::<Vec<_>>()
                    .join(" ")
                    .to_lowercase()
            };
            groups.entry((norm(n), norm(d))).or_default().push(i);
        }
    }
    for members in groups.values().filter(|m| m.len() >= 2) {
        let rules_of = |i: usize| -> std::collections::BTreeSet<String> {
            findings[i]
                .iter()
                .filter(|f| ADDED_DANGER.contains(&f.category) && f.severity >= Severity::Medium)
                .map(|f| f.rule.clone())
                .collect()
        };
        let sets: Vec<(usize, std::collections::BTreeSet<String>)> =
            members.iter().map(|&i| (i, rules_of(i))).collect();
        // The clean copies: those with no dangerous rule at all.
        let clean: Vec<usize> = sets
            .iter()
            .filter(|(_, r)| r.is_empty())
            .map(|(i, _)| *i)
            .collect();
        let Some(&twin) = clean.first() else {
            continue;
        };
        for (i, rules) in &sets {
            if rules.is_empty() {
                continue;
            }
            let Some(worst) = findings[*i]
                .iter()
                .filter(|f| rules.contains(&f.rule))
                .max_by(|a, b| a.severity.cmp(&b.severity).then(b.rule.cmp(&a.rule)))
                .cloned()
            else {
                continue;
            };
            let message = format!(
                "a copy of {} (same name and description, {} clean cop{}) that adds {}: {}",
                packages[twin].id,
                clean.len(),
                if clean.len() == 1 { "y" } else { "ies" },
                rules.iter().cloned().collect::<Vec<_>>().join(", "),
                worst.message
            );
            findings[*i].push(Finding {
                skill_id: packages[*i].id.clone(),
                rule: BACKDOOR.id.to_owned(),
                category: BACKDOOR.category,
                severity: BACKDOOR.severity,
                base_severity: BACKDOOR.severity,
                confidence: 0.7,
                path: worst.path.clone(),
                line: worst.line,
                snippet: worst.snippet.clone(),
                message,
                context: vec![format!(
                    "raised: what this copy adds is the dangerous part (`{}` has none of it)",
                    packages[twin].id
                )],
                file_hash: worst.file_hash.clone(),
                acknowledged: false,
                entry_line: worst.entry_line,
                entry_column: worst.entry_column,
            });
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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
}
