//! The rules. Each reads one kind of text (instructions, shell commands, scripts, metadata) and
//! reports findings with the context that lowered or raised them.

mod attacks;
mod blobs;
mod blocks;
mod code;
mod commands;
mod copies;
mod downloads;
mod hosts;
mod instructions;
mod interpreters;
mod mcp;
mod packages;
mod runs;
mod scripts;
mod settings;
mod shell;
#[cfg(test)]
mod tests;
mod tools;
mod unicode;

use self::blobs::blob_rule;
use self::blocks::{Reading, markdown_rules};
use self::code::code_rules;
pub(crate) use self::copies::backdoored_copies;
use self::copies::typosquat_rule;
use self::hosts::InstallNote;
use self::instructions::instruction_rules;
use self::mcp::{mcp_claim, mcp_config};
use self::scripts::{powershell_rules, script_rules};
use self::shell::shell_rules;
use self::tools::{control_rule, tool_rules};
use self::unicode::{lookalike_rule, unicode_rule};
use crate::markdown::{Kind, Segment, segments};
use crate::{Category, Finding, Severity};
use regex::Regex;
use skg_model::{FileKind, FileText, PackageText, SkillKind};
use skg_syntax::Language;
use std::collections::{BTreeMap, HashMap, HashSet};
use std::sync::LazyLock;

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
    /// Words the scan's skills use: found in the descriptions of at least [`COMMON_IN`] skills
    /// that are not copies of one another nor named with the word, in two registries or more.
    /// A word of a skill's name that people write this often is a word (`slack`, `query`,
    /// `block`), not a misspelling of the popular name one edit away (`black`, `jquery`).
    common: HashSet<String>,
    /// Every popular name of at least five letters, and every one-letter deletion of it → the
    /// names it came from (a symmetric-delete index: two words one edit apart share a key).
    deletes: HashMap<String, Vec<String>>,
}

const POPULAR: &str = include_str!("../popular-names.txt");

/// Longest name the typosquat rule compares, in bytes: a name's one-letter deletions cost the
/// square of its length, and a crafted name of a megabyte (in two registries, so "popular")
/// would stall the scan; no package name people type is this long.
const MAX_NAME_BYTES: usize = 64;

/// Distinct skills (by name and description) whose description must use a word for it to be a
/// common word of the scan ([`NameIndex::is_common`]).
const COMMON_IN: usize = 3;

/// Words of a description read for [`NameIndex::common`].
const COMMON_WORDS_READ: usize = 200;

/// The lowercase ASCII words of `text` (split at anything not a letter or digit).
fn name_parts(text: &str) -> impl Iterator<Item = String> + '_ {
    text.split(|c: char| !c.is_ascii_alphanumeric())
        .filter(|w| !w.is_empty())
        .map(str::to_ascii_lowercase)
}

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
        // Copies (the same name and description) count once; a word counts in a description
        // only when the package is not named with it (a squat's own packages, named with the
        // misspelling, cannot make it a word), and in skills only (a catalog's tools are not
        // packages anyone names).
        let mut distinct: HashSet<(String, String)> = HashSet::new();
        let mut uses: HashMap<String, (usize, HashSet<&str>)> = HashMap::new();
        for p in packages.iter().filter(|p| p.kind == SkillKind::Skill) {
            let norm = |s: &Option<String>| {
                s.as_deref()
                    .unwrap_or("")
                    .split_whitespace()
                    .collect::<Vec<_>>()
                    .join(" ")
                    .to_lowercase()
            };
            if !distinct.insert((norm(&p.name), norm(&p.description))) {
                continue;
            }
            let named: HashSet<String> = name_parts(p.name.as_deref().unwrap_or(&p.root)).collect();
            // A description's first words say what it is about (a 20 KB one is read no further).
            let words: HashSet<String> = name_parts(p.description.as_deref().unwrap_or(""))
                .take(COMMON_WORDS_READ)
                .filter(|w| !named.contains(w))
                .collect();
            for w in words {
                let (n, registries) = uses.entry(w).or_default();
                *n += 1;
                registries.insert(p.registry.as_str());
            }
        }
        let common = uses
            .into_iter()
            .filter(|(_, (n, registries))| *n >= COMMON_IN && registries.len() >= 2)
            .map(|(w, _)| w)
            .collect();
        let mut deletes: HashMap<String, Vec<String>> = HashMap::new();
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
        NameIndex {
            popular,
            common,
            deletes,
        }
    }

    /// `word` is a common word of the scan (see [`NameIndex::common`]).
    fn is_common(&self, word: &str) -> bool {
        self.common.contains(word)
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
