//! Command-line arguments (clap derive): one struct per subcommand.

use std::path::PathBuf;

use clap::{Args, Parser, Subcommand, ValueEnum};
use skg_model::{Stage, limits};

/// The index folder `skg index build` writes for the demo and the commands that read an index
/// default to.
const DEFAULT_INDEX: &str = "reports/index-registries";
/// The registries read when none are given.
const DEFAULT_INPUT: &str = "registries";

fn extract_limits() -> skg_extract::Limits {
    skg_extract::Limits::default()
}

/// skg — audit AI-agent skill registries and route agents to the right skills.
#[derive(Debug, Parser)]
#[command(name = "skg", version, about, propagate_version = true)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Command,
    #[command(flatten)]
    pub global: GlobalArgs,
}

/// Options every subcommand takes.
#[derive(Debug, Clone, Args)]
pub struct GlobalArgs {
    /// More log output on stderr (-v info, -vv debug, -vvv trace).
    #[arg(short, long, action = clap::ArgAction::Count, global = true)]
    pub verbose: u8,
    /// Less output: no progress bar, warnings only (-qq: errors only).
    #[arg(short, long, action = clap::ArgAction::Count, global = true, conflicts_with = "verbose")]
    pub quiet: u8,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Read registries into skills, search documents, relations and diagnostics.
    Extract(ExtractArgs),
    /// Find copies across registries: one canonical per duplicate cluster, the rest aliases;
    /// variants (same purpose, written independently) linked, not merged.
    Canonicalize(CanonArgs),
    /// Score skills for slop with the fitted model; quarantine low scores, with reasons.
    Score(ScoreArgs),
    /// Build the Skill Knowledge Graph and compute TLIS / GNCI / CFI / RScore (docs/metrics.md).
    Measure(MeasureArgs),
    /// Fail (exit 1) when measured routability is below thresholds or regressed from a baseline.
    Gate(GateArgs),
    /// Audit registries end to end (extract → scan → canonicalize → score → measure) into
    /// `reports/<name>/`: an HTML report, every table as Parquet, a manifest. Stages whose inputs
    /// did not change are reused.
    Audit(AuditArgs),
    /// Build the routing index (documents, BM25, dense vectors) from an audit folder.
    #[command(subcommand)]
    Index(IndexCommand),
    /// Measure retrieval on judged queries (JSONL `{query, gold[], acceptable[]}`): hit@k, MRR,
    /// nDCG, recall, latency, bundle tokens — for BM25, dense and the fusion.
    Eval(EvalArgs),
    /// Route a task: the retrieved skills, their dependency closure and complements within a
    /// token budget, as a plan ordered dependencies first.
    Route(RouteArgs),
    /// Serve the routing gateway: HTTP API (/v1/route, /v1/skills/find, /v1/search, /health,
    /// /metrics, /openapi.json, /admin/reload) and an MCP server at /mcp, over an index folder
    /// that is hot-swapped when it changes.
    Serve(ServeArgs),
    /// Serve MCP over stdio (one JSON-RPC message per line) for agent hosts that launch skg.
    Mcp(McpArgs),
    /// Manage the gateway's API keys (`skg serve --keys FILE`): add a key for a tenant with what
    /// it may see and how often it may ask, list keys, revoke one. Only hashes are stored.
    #[command(subcommand)]
    Keys(KeysCommand),
    /// Scan packages for malicious and unsafe content (prompt injection, download-and-execute,
    /// exfiltration, reverse shells, persistence, obfuscation, typosquats): findings with
    /// evidence, a verdict per package (safe | suspicious | unsafe), SARIF 2.1.0. Reads text
    /// only; nothing is executed (SECURITY.md).
    Scan(ScanArgs),
    /// Print the schema of the output tables (markdown).
    Schema(SchemaArgs),
}

/// How results are printed on stdout.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Format {
    /// Tables for people.
    Human,
    /// One JSON document for programs.
    Json,
}

/// The extraction limits (`skg extract`, `skg audit`); defaults from [`skg_extract::Limits`].
#[derive(Debug, Clone, Args)]
#[expect(
    clippy::struct_field_names,
    reason = "the fields are the flags `--max-…`"
)]
pub struct LimitsArgs {
    /// Bytes read from one file of a skill package; longer files are cut with a diagnostic.
    #[arg(long, default_value_t = extract_limits().max_file_bytes)]
    pub max_file_bytes: u64,
    /// Bytes read from a tool catalog or OpenAPI document given as an input; a longer one is cut,
    /// and a cut document is one error.
    #[arg(long, default_value_t = extract_limits().max_catalog_bytes)]
    pub max_catalog_bytes: u64,
    /// Files walked per registry; more are skipped with a diagnostic.
    #[arg(long, default_value_t = extract_limits().max_files)]
    pub max_files: usize,
    /// Milliseconds one script's parse may take; slower scripts get a `script-timeout` diagnostic.
    #[arg(long, default_value_t = extract_limits().max_parse_ms())]
    pub max_parse_ms: u64,
}

impl LimitsArgs {
    /// The extraction options these flags ask for.
    pub fn options(&self) -> skg_extract::Options {
        skg_extract::Options {
            limits: skg_extract::Limits {
                max_file_bytes: self.max_file_bytes,
                max_catalog_bytes: self.max_catalog_bytes,
                max_files: self.max_files,
                parse_budget: std::time::Duration::from_millis(self.max_parse_ms),
            },
        }
    }
}

#[derive(Debug, Args)]
pub struct ExtractArgs {
    /// Registries: registries.toml files, folders holding one, skill folders, or JSON/JSONL tool catalogs.
    #[arg(default_value = DEFAULT_INPUT)]
    pub inputs: Vec<PathBuf>,
    /// Output folder (replaced atomically when the run succeeds).
    #[arg(short, long, default_value_os_t = Stage::Extract.default_dir())]
    pub out: PathBuf,
    /// Summary format on stdout.
    #[arg(long, value_enum, default_value_t = Format::Human)]
    pub format: Format,
    #[command(flatten)]
    pub limits: LimitsArgs,
    /// Print every diagnostic (path:line: severity[code]: message) on stderr.
    #[arg(long)]
    pub show_diagnostics: bool,
    /// Also measure the capability types against hand labels (CSV `registry,path,type[,also]`,
    /// e.g. labels/capabilities-v1.csv): accuracy and the confusion of the ten largest types.
    #[arg(long, value_name = "CSV")]
    pub capability_labels: Option<PathBuf>,
}

#[derive(Debug, Args)]
pub struct ScanArgs {
    /// Registries: registries.toml files, folders holding one, skill folders (folders with only
    /// an MCP config, `.mcp.json`, are scanned too), or tool catalogs and OpenAPI documents (each
    /// tool scanned as a package).
    #[arg(default_value = DEFAULT_INPUT)]
    pub inputs: Vec<PathBuf>,
    /// Output folder (replaced atomically when the run succeeds).
    #[arg(short, long, default_value_os_t = Stage::Scan.default_dir())]
    pub out: PathBuf,
    /// Also write the findings as a SARIF 2.1.0 log (GitHub code scanning) to this file.
    #[arg(long)]
    pub sarif: Option<PathBuf>,
    /// Lowest severity written to the SARIF log.
    #[arg(long, value_enum, default_value_t = SeverityArg::Medium)]
    pub sarif_min_severity: SeverityArg,
    /// Measure the verdicts against labels: CSV `path,label,attack_type` (`label` malicious or
    /// benign; `path` a package folder or a file in it, relative to the registry folder).
    #[arg(long)]
    pub labels: Option<PathBuf>,
    /// Score from which a package is unsafe.
    #[arg(long, default_value_t = skg_scan::Options::default().unsafe_at)]
    pub unsafe_at: f64,
    /// Score from which a package is suspicious.
    #[arg(long, default_value_t = skg_scan::Options::default().suspicious_at)]
    pub suspicious_at: f64,
    /// Reviewed findings to acknowledge: a TOML allow file of `[[allow]]` entries (`rule`,
    /// `path`, `file_hash`, `reason`); a finding whose file changed is raised again.
    #[arg(long)]
    pub allow: Option<PathBuf>,
    /// Write an allow file acknowledging every current finding of at least
    /// `--sarif-min-severity` (a baseline: later scans with `--allow` report only what is new).
    #[arg(long)]
    pub write_allow: Option<PathBuf>,
    /// Print every finding (path:line: severity rule: message) on stderr.
    #[arg(long)]
    pub show_findings: bool,
    /// Summary format on stdout.
    #[arg(long, value_enum, default_value_t = Format::Human)]
    pub format: Format,
    #[command(flatten)]
    pub limits: LimitsArgs,
}

/// A finding's severity on the command line.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum SeverityArg {
    /// Everything.
    Low,
    /// Medium and above.
    Medium,
    /// High and above.
    High,
    /// Critical only.
    Critical,
}

impl From<SeverityArg> for skg_scan::Severity {
    fn from(s: SeverityArg) -> Self {
        match s {
            SeverityArg::Low => skg_scan::Severity::Low,
            SeverityArg::Medium => skg_scan::Severity::Medium,
            SeverityArg::High => skg_scan::Severity::High,
            SeverityArg::Critical => skg_scan::Severity::Critical,
        }
    }
}

#[derive(Debug, Args)]
pub struct SchemaArgs {}

#[derive(Debug, Args)]
pub struct AuditArgs {
    /// Registries: registries.toml files, folders holding one, skill folders, or tool catalogs.
    #[arg(default_value = DEFAULT_INPUT)]
    pub inputs: Vec<PathBuf>,
    /// Output folder (default `reports/<name>`).
    #[arg(short, long)]
    pub out: Option<PathBuf>,
    /// The audit's name (default: the first input's folder name).
    #[arg(long)]
    pub name: Option<String>,
    /// Compare descriptions lexically instead of with the embedding model.
    #[arg(long)]
    pub no_embeddings: bool,
    /// Quarantine below this slop_score.
    #[arg(long, default_value_t = skg_score::Options::DEFAULT_THRESHOLD)]
    pub threshold: f64,
    /// Leave relation edges below this confidence out of the SKG (0.3 drops AMBIGUOUS mentions).
    #[arg(long, default_value_t = skg_measure::Options::default().min_confidence)]
    pub min_confidence: f64,
    /// The RScore the report checks against (as `skg gate --min-rscore`).
    #[arg(long, default_value_t = limits::RSCORE)]
    pub min_rscore: f64,
    /// Reviewed security findings to acknowledge (a `skg scan --allow` file).
    #[arg(long)]
    pub scan_allow: Option<PathBuf>,
    /// Recompute every stage, fresh or not.
    #[arg(long)]
    pub force: bool,
    /// Threads for embedding inference.
    #[arg(long, default_value_t = skg_embed::DEFAULT_THREADS)]
    pub threads: usize,
    #[command(flatten)]
    pub limits: LimitsArgs,
    /// Summary format on stdout.
    #[arg(long, value_enum, default_value_t = Format::Human)]
    pub format: Format,
}

#[derive(Debug, Args)]
pub struct CanonArgs {
    /// An extract output folder (default `reports/extract` when it exists), or registries to
    /// extract first (as `skg extract` takes them; default `registries`).
    pub inputs: Vec<PathBuf>,
    /// Output folder (replaced atomically when the run succeeds; the embedding cache lives in it).
    #[arg(short, long, default_value_os_t = Stage::Canonicalize.default_dir())]
    pub out: PathBuf,
    /// Summary format on stdout.
    #[arg(long, value_enum, default_value_t = Format::Human)]
    pub format: Format,
    /// Compare descriptions lexically (content-word overlap) instead of with the embedding model.
    #[arg(long)]
    pub no_embeddings: bool,
    /// Score labelled pairs: a CSV with columns `a,b[,label]`, skills written as
    /// `<registry folder>/<SKILL.md path>`; prints each pair's decision and, with labels,
    /// precision/recall/F1 and the confusion matrix.
    #[arg(long, value_name = "FILE.csv")]
    pub pairs: Option<PathBuf>,
    /// Measure the capability types as canonicalize refines them (extract's words, else the
    /// nearest type prototype) against hand labels (CSV `registry,path,type[,also]`, e.g.
    /// labels/capabilities-v1.csv).
    #[arg(long, value_name = "CSV", conflicts_with = "synthetic")]
    pub capability_labels: Option<PathBuf>,
    /// Slop scores to pick canonicals by: `skg score` output folder or NDJSON with `id` and
    /// `slop_score` (skills without one use completeness).
    #[arg(long, value_name = "PATH")]
    pub scores: Option<PathBuf>,
    /// Benchmark mode: canonicalize N generated skills (near-copies and variants of generated
    /// originals) instead of reading registries.
    #[arg(long, value_name = "N")]
    pub synthetic: Option<usize>,
    /// Seed of the synthetic generator.
    #[arg(long, default_value_t = skg_canon::synth::DEFAULT_SEED)]
    pub seed: u64,
    /// Threads for embedding inference.
    #[arg(long, default_value_t = skg_embed::DEFAULT_THREADS)]
    pub threads: usize,
}

#[derive(Debug, Args)]
#[command(args_conflicts_with_subcommands = true)]
pub struct ScoreArgs {
    #[command(subcommand)]
    pub action: Option<ScoreAction>,
    #[command(flatten)]
    pub data: ScoreData,
    /// Output folder (replaced atomically).
    #[arg(short, long, default_value_os_t = Stage::Score.default_dir())]
    pub out: PathBuf,
    /// Quarantine below this slop_score.
    #[arg(long, default_value_t = skg_score::Options::DEFAULT_THRESHOLD)]
    pub threshold: f64,
    /// A model artifact (default: the one committed with skg).
    #[arg(long)]
    pub model: Option<PathBuf>,
    /// Summary format on stdout.
    #[arg(long, value_enum, default_value_t = Format::Human)]
    pub format: Format,
}

/// Where the skills and their pipeline data come from.
#[derive(Debug, Clone, Args)]
pub struct ScoreData {
    /// An extract output folder.
    #[arg(default_value_os_t = Stage::Extract.default_dir())]
    pub extract: PathBuf,
    /// A canonicalize output folder (default `reports/canonicalize` when it exists): clusters make
    /// copies count once in the learned templates and give the alias / collision features.
    #[arg(long)]
    pub canon: Option<PathBuf>,
}

#[derive(Debug, Subcommand)]
pub enum ScoreAction {
    /// Fit the model on a labels CSV (`path,label` with good / mediocre / slop) and write it.
    Train(ScoreTrainArgs),
    /// Evaluate a model on a labels CSV: AUC, per-registry AUC, confusion at the threshold.
    Eval(ScoreEvalArgs),
}

#[derive(Debug, Args)]
pub struct ScoreTrainArgs {
    /// Labels CSV: `path` (`<registry folder>/<SKILL.md path>`) and `label` columns.
    #[arg(long)]
    pub labels: PathBuf,
    #[command(flatten)]
    pub data: ScoreData,
    /// L2 penalty of the logistic regression.
    #[arg(long, default_value_t = skg_score::model::DEFAULT_ALPHA)]
    pub alpha: f64,
    /// Where to write the model.
    #[arg(long, default_value = skg_score::model::BUNDLED_PATH)]
    pub out: PathBuf,
    /// Threshold used in the printed evaluation.
    #[arg(long, default_value_t = skg_score::Options::DEFAULT_THRESHOLD)]
    pub threshold: f64,
    /// Summary format on stdout.
    #[arg(long, value_enum, default_value_t = Format::Human)]
    pub format: Format,
}

#[derive(Debug, Args)]
pub struct ScoreEvalArgs {
    /// Labels CSV: `path` and `label` columns.
    #[arg(long)]
    pub labels: PathBuf,
    #[command(flatten)]
    pub data: ScoreData,
    /// A model artifact (default: the one committed with skg).
    #[arg(long)]
    pub model: Option<PathBuf>,
    /// Quarantine threshold for the confusion counts.
    #[arg(long, default_value_t = skg_score::Options::DEFAULT_THRESHOLD)]
    pub threshold: f64,
    /// Summary format on stdout.
    #[arg(long, value_enum, default_value_t = Format::Human)]
    pub format: Format,
}

#[derive(Debug, Args)]
#[allow(
    clippy::struct_excessive_bools,
    reason = "independent command-line switches, each a clap flag"
)]
pub struct MeasureArgs {
    /// An extract output folder (default `reports/extract`), or registries to extract first.
    pub inputs: Vec<PathBuf>,
    /// Canonicalize output (default `reports/canonicalize` when it exists): aliases fold into
    /// their canonical.
    #[arg(long)]
    pub canon: Option<PathBuf>,
    /// Score output (default `reports/score` when it exists): quarantined skills are left out.
    #[arg(long)]
    pub scores: Option<PathBuf>,
    /// Leave out relation edges below this confidence (0.3 drops AMBIGUOUS mentions).
    #[arg(long, default_value_t = skg_measure::Options::default().min_confidence)]
    pub min_confidence: f64,
    /// Keep quarantined skills as nodes.
    #[arg(long)]
    pub include_quarantined: bool,
    /// Keep aliases as nodes.
    #[arg(long)]
    pub include_aliases: bool,
    /// Louvain seed.
    #[arg(long, default_value_t = skg_measure::Options::default().seed)]
    pub seed: u64,
    /// Measure a JavaScript/TypeScript codebase instead: nodes are tool definitions and the
    /// modules that define or import them (docs/metrics.md).
    #[arg(long, value_name = "DIR", conflicts_with_all = ["inputs", "canon", "scores"])]
    pub codebase: Option<PathBuf>,
    /// Name communities by raw tags, categories and name stems only, not by capability type
    /// (the naming before capability types; for before/after comparisons).
    #[arg(long)]
    pub raw_community_names: bool,
    /// With `--codebase`: keep tests, fixtures, examples and mocks (left out by default: a test
    /// file's mock tools are not the product's; the rule is in docs/metrics.md).
    #[arg(long, requires = "codebase")]
    pub include_tests: bool,
    /// Output folder (replaced atomically).
    #[arg(short, long, default_value_os_t = Stage::Measure.default_dir())]
    pub out: PathBuf,
    /// Summary format on stdout.
    #[arg(long, value_enum, default_value_t = Format::Human)]
    pub format: Format,
}

#[derive(Debug, Args)]
pub struct GateArgs {
    /// A measure output folder (default `reports/measure`) or the JSON `skg measure --format json` printed.
    #[arg(default_value_os_t = Stage::Measure.default_dir())]
    pub measure: PathBuf,
    /// Thresholds from a TOML file (`min_rscore`, `max_tlis`, `max_gnci`, `max_cfi`, `tolerance`, `scope`); flags override it.
    #[arg(long)]
    pub config: Option<PathBuf>,
    /// Fail when RScore is below this (default 0.4: the seed's HIGH routing risk).
    #[arg(long)]
    pub min_rscore: Option<f64>,
    /// Fail when TLIS is above this.
    #[arg(long)]
    pub max_tlis: Option<f64>,
    /// Fail when GNCI is above this.
    #[arg(long)]
    pub max_gnci: Option<f64>,
    /// Fail when CFI is above this.
    #[arg(long)]
    pub max_cfi: Option<f64>,
    /// A previous measurement (folder or JSON): fail when RScore dropped by more than the tolerance.
    #[arg(long)]
    pub baseline: Option<PathBuf>,
    /// Allowed RScore drop against the baseline (default 0.02).
    #[arg(long)]
    pub tolerance: Option<f64>,
    /// Fail when more than this many packages are unsafe (`skg scan` verdicts; acknowledge
    /// reviewed findings with `skg scan --allow`), or when the scan did not read a tool catalog
    /// whole (its unread tools were not scanned).
    #[arg(long)]
    pub max_unsafe: Option<u64>,
    /// Where the scan verdicts (and its count of catalogs not read whole) are: a scan folder or an
    /// audit folder with its `stages/scan` (default: the gated folder when it is an audit, else
    /// `reports/scan`).
    #[arg(long)]
    pub scan: Option<PathBuf>,
    /// Which scopes are gated: `(all)` (default), a registry's name, or `each` (the union and
    /// every registry).
    #[arg(long)]
    pub scope: Option<String>,
    /// Summary format on stdout.
    #[arg(long, value_enum, default_value_t = Format::Human)]
    pub format: Format,
}

#[derive(Debug, Subcommand)]
pub enum IndexCommand {
    /// Build an index folder from an audit folder (written beside it, `_SUCCESS` last, renamed).
    Build(IndexBuildArgs),
}

#[allow(
    clippy::struct_excessive_bools,
    reason = "independent command-line switches, each a clap flag"
)]
#[derive(Debug, Args)]
pub struct IndexBuildArgs {
    /// An audit folder (`skg audit` output).
    #[arg(default_value = "reports/registries")]
    pub audit: PathBuf,
    /// The index folder (default `reports/index-<audit folder name>`).
    #[arg(short, long)]
    pub out: Option<PathBuf>,
    /// No dense vectors (BM25 only).
    #[arg(long)]
    pub no_embeddings: bool,
    /// Update the index at `--out` package by package: vectors of unchanged skills (same content
    /// hash) are carried over, changed and added skills are re-embedded, deleted ones dropped;
    /// the folder is still written whole and swapped in one rename (a failure keeps the old one).
    #[arg(long)]
    pub incremental: bool,
    /// Example requests with the skills that served them (JSONL `{query, gold[]}`, ids as `skg
    /// eval` takes them): each is embedded as one more vector of its skills, so a new request
    /// close to a past one finds the same skill (few-shot routing).
    #[arg(long, value_name = "FILE.jsonl")]
    pub examples: Option<PathBuf>,
    /// Relations below this confidence are not used for routing.
    #[arg(long, default_value_t = skg_index::DEFAULT_MIN_CONFIDENCE)]
    pub min_confidence: f64,
    /// Also embed each skill's first N sections (title + opening text), so the dense signal
    /// sees the body (a skill's best vector answers for it).
    #[arg(long, value_name = "N", default_value_t = 0)]
    pub dense_sections: usize,
    /// Embed the first N characters of each skill's usage sections — the first two sections
    /// of its SKILL.md that extract marked as saying when to use it ("When to use", "Use cases",
    /// "Triggers", …) — each as one more vector of its skill (0: none)
    #[arg(long, value_name = "N", default_value_t = skg_index::USAGE_CHARS)]
    pub usage_chars: usize,
    /// Embed only the first N characters of each skill's L1 overview (0: no overview vector)
    #[arg(long, value_name = "N", default_value_t = skg_index::DEFAULT_OVERVIEW_CHARS)]
    pub overview_chars: usize,
    /// Embed whole overviews (the model reads their first 256 tokens): slower builds
    #[arg(long, conflicts_with = "overview_chars")]
    pub whole_overviews: bool,
    /// Threads for embedding inference.
    #[arg(long, default_value_t = skg_embed::DEFAULT_THREADS)]
    pub threads: usize,
    /// Also take vectors from this embedding cache: an index folder (its `embeddings.cache`) or
    /// the file; repeatable. Only vectors of the installed model's files are used, so a build
    /// into a new folder (a blue/green swap) starts warm from the index it replaces.
    #[arg(long, value_name = "INDEX_DIR|FILE", conflicts_with = "no_embeddings")]
    pub embedding_cache: Vec<PathBuf>,
    /// Build the nearest-neighbour graph into the folder's cache (`ann.cache`) when the index
    /// has at least this many dense rows, so that `skg serve` reads it instead of building it
    /// (0: never here; the gateway then builds it when it needs it)
    #[arg(long, value_name = "ROWS", default_value_t = skg_index::ann::DEFAULT_MIN_ROWS)]
    pub ann_min_rows: usize,
    /// Store each skill's card token states (`tokens.bin`, int8): queries then reorder the
    /// fused first candidates by late interaction of their tokens with the cards — more first
    /// places on the judged sets, at ~9 KB a card (128 directions) and about half a millisecond
    /// a query (docs/retrieval.md, "Token-level late interaction"). `auto`: when the catalog has
    /// at most 30,000 cards
    #[arg(
        long,
        value_enum,
        value_name = "WHEN",
        default_value_t = LateInteraction::Auto
    )]
    pub late_interaction: LateInteraction,
    /// Which embedding graph embeds the catalog: `auto` gives a catalog of tools alone the
    /// tools graph (adapted further to tool requests) and any other the packages graph
    /// (docs/retrieval.md, "An embedder per catalog kind"). Queries are embedded by the graph
    /// the index names.
    #[arg(long, value_enum, value_name = "GRAPH", default_value_t = EmbedderChoice::Auto)]
    pub embedder: EmbedderChoice,
    /// Store the card tokens on their first this many principal directions (each query's
    /// tokens are projected like them): 128 give the whole 384's first places within one query
    /// on each judged set, at a third of the size and of the work (0: the whole dimension)
    #[arg(long, value_name = "N", default_value_t = skg_index::LATE_DIRECTIONS)]
    pub late_directions: usize,
    /// Summary format on stdout.
    #[arg(long, value_enum, default_value_t = Format::Human)]
    pub format: Format,
}

/// Retrieval modes `skg eval` runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum EvalMode {
    /// BM25, dense and hybrid.
    All,
    /// BM25 only.
    Bm25,
    /// Dense only.
    Dense,
    /// The fusion.
    Hybrid,
}

/// Fusion methods for hybrid retrieval.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum FusionArg {
    /// BM25 weight adapted to the query's lexical evidence.
    Adaptive,
    /// Reciprocal rank fusion (k = 60).
    Rrf,
    /// Fixed mix (`--bm25-weight`).
    Linear,
    /// Mix of z-scores over the candidates (`--bm25-weight`; `--saturation` adapts it)
    Zscore,
}

/// What BM25 scores as one document when it ranks skills.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Bm25UnitArg {
    /// The whole skill: frontmatter, headings and every section as one document.
    Skill,
    /// A skill's best document (its card, outline or one section).
    Document,
}

impl From<Bm25UnitArg> for skg_index::Bm25Unit {
    fn from(a: Bm25UnitArg) -> Self {
        match a {
            Bm25UnitArg::Skill => skg_index::Bm25Unit::Skill,
            Bm25UnitArg::Document => skg_index::Bm25Unit::Document,
        }
    }
}

#[derive(Debug, Args)]
pub struct EvalArgs {
    /// Judged queries: JSONL `{query, gold[], acceptable[]}`; gold ids are SKILL.md paths
    /// `<registry folder>/<path>` or tool names.
    pub queries: PathBuf,
    /// The index folder.
    #[arg(long, default_value = DEFAULT_INDEX)]
    pub index: PathBuf,
    /// Modes to measure.
    #[arg(long, value_enum, default_value_t = EvalMode::All)]
    pub mode: EvalMode,
    /// Fusion for hybrid.
    #[arg(long, value_enum, default_value_t = FusionArg::Adaptive)]
    pub fusion: FusionArg,
    /// BM25 weight of `--fusion linear`, largest BM25 weight of `adaptive`.
    #[arg(long)]
    pub bm25_weight: Option<f32>,
    /// Lexical evidence (BM25 per query term) at which `adaptive` gives BM25 its full weight.
    #[arg(long)]
    pub saturation: Option<f32>,
    /// Weight of `when_not_to_use` matches subtracted from BM25.
    #[arg(long, default_value_t = skg_index::EvalOptions::default().negative_weight)]
    pub negative_weight: f32,
    /// Candidates each ranking contributes to the fusion.
    #[arg(long, default_value_t = skg_index::EvalOptions::default().pool)]
    pub pool: usize,
    /// Query terms BM25 scores: the ones found in the fewest documents (0: all)
    #[arg(long, default_value_t = skg_index::EvalOptions::default().max_terms)]
    pub max_terms: usize,
    /// What BM25 scores as one document when it ranks skills.
    #[arg(long, value_enum, default_value_t = Bm25UnitArg::Skill)]
    pub bm25_unit: Bm25UnitArg,
    /// BM25 field weights for every skill (the help text names the defaults).
    #[arg(long, value_name = "N,D,W,T,H,B", value_parser = parse_field_weights, help = field_weights_help())]
    pub field_weights: Option<[f32; 6]>,
    #[command(flatten)]
    pub late: LateArgs,
    /// Count quarantined skills as routable (gold skills the quarantine removes are reported).
    #[arg(long)]
    pub include_quarantined: bool,
    /// Skills in the bundle whose tokens are counted.
    #[arg(long, default_value_t = skg_index::EvalOptions::default().bundle_k)]
    pub bundle_k: usize,
    /// Print every query's rank of its first gold skill.
    #[arg(long)]
    pub per_query: bool,
    /// Intervals and paired comparison.
    #[command(flatten, next_help_heading = "Statistics")]
    pub stats: EvalStatsArgs,
    /// Classify every query whose gold skill is not first (never a candidate, lost in the
    /// fusion, a sibling card above it, an acceptable answer above it, ranked low, quarantined).
    #[arg(long)]
    pub misses: bool,
    /// Write every query's first-stage candidates here (JSONL, one query a line: its gold and
    /// acceptable skill ids, BM25's weight, and each candidate's fused score, own and counted
    /// BM25 and cosine, best first) — the data to study the fusion or a second stage with.
    #[arg(long, value_name = "OUT.jsonl")]
    pub candidates: Option<PathBuf>,
    /// Re-rank the first stage's candidates with this second-stage model and measure it.
    #[arg(long, value_name = "RANKER.json")]
    pub ranker: Option<PathBuf>,
    /// Fit a second-stage model on these queries, print its k-fold cross-validated metrics, and
    /// write it here.
    #[arg(long, value_name = "RANKER.json")]
    pub train_ranker: Option<PathBuf>,
    /// Folds of the cross-validation (`--train-ranker`).
    #[arg(long, default_value_t = 5)]
    pub folds: usize,
    /// Another catalog's queries (JSONL with `query`; gold ignored): measure abstention — how
    /// well the first answer's score, cosine and BM25 tell this index's tasks from these
    /// (ROC AUC) and what a floor keeps and rejects.
    #[arg(long, value_name = "QUERIES.jsonl")]
    pub out_of_scope: Option<PathBuf>,
    /// Share of served in-scope tasks (gold in the top 5) a chosen abstention threshold may lose.
    #[arg(long, default_value_t = 0.05, requires = "out_of_scope")]
    pub max_served_loss: f64,
    /// Measure listings within this many characters: the share of queries whose gold skill an
    /// agent host would list, packed from the task's ranking, against the catalog by name and by
    /// slop score.
    #[arg(long, value_name = "CHARS")]
    pub listing_budget: Option<usize>,
    /// The listing's cut of each description, in characters.
    #[arg(long, default_value_t = skg_index::listing::DEFAULT_DESCRIPTION_CHARS)]
    pub listing_description_chars: usize,
    #[command(flatten)]
    pub ann: AnnArgs,
    /// Threads for query embedding.
    #[arg(long, default_value_t = skg_embed::DEFAULT_THREADS)]
    pub threads: usize,
    /// Summary format on stdout.
    #[arg(long, value_enum, default_value_t = Format::Human)]
    pub format: Format,
}

/// `skg eval`'s statistics: intervals around each figure, and a paired comparison with a saved
/// evaluation (a regression gate with `--fail-if-worse`).
#[derive(Debug, Args)]
pub struct EvalStatsArgs {
    /// Print each mode's hit@1/3/5/10 and MRR@10 with a bootstrap 95 % interval (10,000 seeded
    /// resamples of the queries): how far a figure of a set this size can move.
    #[arg(long)]
    pub intervals: bool,
    /// Compare with a saved evaluation of the same queries (saved by `skg eval --per-query
    /// --format json`): per mode, each rank metric's difference with a paired bootstrap 95 %
    /// interval, an exact McNemar (hit@k) or paired randomization (MRR@10) p-value, and the
    /// queries that moved.
    #[arg(long, value_name = "BEFORE.json")]
    pub compare: Option<PathBuf>,
    /// With `--compare`: exit with status 1 when a metric of a mode is worse than before with a
    /// Holm-adjusted p-value at most ALPHA (over every metric of every mode compared) — a
    /// retrieval regression gate for CI.
    #[arg(long, value_name = "ALPHA", requires = "compare")]
    pub fail_if_worse: Option<f64>,
}

/// `skg eval --ann`: the nearest-neighbour graph under evaluation.
#[derive(Debug, Args)]
pub struct AnnArgs {
    /// Evaluate dense retrieval through the nearest-neighbour graph (built whatever the index's
    /// size) and report its recall against the exact scan.
    #[arg(long)]
    pub ann: bool,
    /// With `--ann`: candidates kept while building the graph (HNSW efConstruction).
    #[arg(long, default_value_t = skg_index::ann::AnnOptions::default().ef_construction)]
    pub ann_ef_construction: usize,
    /// With `--ann`: rows a query visits (HNSW ef).
    #[arg(long, default_value_t = skg_index::ann::AnnOptions::default().ef_search)]
    pub ann_ef_search: usize,
}

/// The second stage over the hybrid ranking, where an index stores its cards' tokens.
#[derive(Debug, Clone, Copy, Args)]
pub struct LateArgs {
    /// Weight of the second stage over the hybrid ranking: late interaction of the query's
    /// tokens with each candidate's card (0: off, the fused ranking as it is).
    #[arg(long, value_parser = parse_late_weight, default_value_t = skg_index::Late::default().weight)]
    pub late_weight: f32,
    /// Fused candidates the second stage reorders.
    #[arg(long, default_value_t = skg_index::Late::default().depth)]
    pub late_depth: usize,
}

impl From<LateArgs> for skg_index::Late {
    fn from(a: LateArgs) -> Self {
        skg_index::Late {
            weight: a.late_weight,
            depth: a.late_depth,
        }
    }
}

fn parse_late_weight(s: &str) -> Result<f32, String> {
    match s.trim().parse::<f32>() {
        Ok(w) if w.is_finite() && w >= 0.0 => Ok(w),
        _ => Err(format!(
            "{s:?} is not a weight (a finite number ≥ 0; 0 turns the stage off)"
        )),
    }
}

/// `--poll-seconds`: from a tenth of a second to a day.
fn parse_poll_seconds(s: &str) -> Result<std::time::Duration, String> {
    match s.trim().parse::<f64>() {
        Ok(x) if (0.1..=86_400.0).contains(&x) => Ok(std::time::Duration::from_secs_f64(x)),
        _ => Err(format!(
            "{s:?} is not a number of seconds from 0.1 to 86400"
        )),
    }
}

#[derive(Debug, Args)]
pub struct RouteArgs {
    /// The task, in words.
    pub task: String,
    /// The index folder.
    #[arg(long, default_value = DEFAULT_INDEX)]
    pub index: PathBuf,
    /// Skills retrieved before the dependency closure.
    #[arg(short, default_value_t = skg_serve::wire::defaults::K)]
    pub k: usize,
    /// Token budget for complements (dependencies are always kept; the overrun is reported).
    #[arg(long)]
    pub token_budget: Option<u64>,
    /// Route quarantined skills too.
    #[arg(long)]
    pub include_quarantined: bool,
    /// Route only from skills of this capability type (docs/capabilities.md); dependencies of
    /// other types are still bundled.
    #[arg(long, value_name = "TYPE")]
    pub capability: Option<String>,
    /// BM25 only (no query embedding).
    #[arg(long)]
    pub bm25: bool,
    #[command(flatten)]
    pub late: LateArgs,
    /// Print the bundle as tool definitions for a host instead (JSON on stdout).
    #[arg(long, value_enum)]
    pub tools: Option<ToolFormat>,
    /// Also write the bundle (or, with `--listing`, the listing) as a folder of skills:
    /// `DIR/<name>/SKILL.md` and `DIR/bundle.json`.
    #[arg(long, value_name = "DIR")]
    pub export: Option<PathBuf>,
    /// Print the listing an agent host should show for the task instead of the bundle: most
    /// relevant first, dependencies kept, within `--budget-chars` (human format: the markdown
    /// block; `--format json`: what `POST /v1/listing` answers).
    #[arg(long, conflicts_with = "tools")]
    pub listing: bool,
    /// The listing's budget, in characters.
    #[arg(long, default_value_t = skg_index::listing::DEFAULT_BUDGET_CHARS, requires = "listing")]
    pub budget_chars: usize,
    /// The listing's cut of each description, in characters.
    #[arg(long, default_value_t = skg_index::listing::DEFAULT_DESCRIPTION_CHARS, requires = "listing")]
    pub description_chars: usize,
    /// Summary format on stdout.
    #[arg(long, value_enum, default_value_t = Format::Human)]
    pub format: Format,
}

/// Tool-definition shapes of agent hosts.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum ToolFormat {
    /// Anthropic Messages API `tools`.
    Anthropic,
    /// OpenAI chat-completions `tools`.
    Openai,
    /// Gemini `functionDeclarations`.
    Gemini,
    /// MCP `tools/list` result.
    Mcp,
}

#[derive(Debug, Clone, Args)]
#[allow(
    clippy::struct_excessive_bools,
    reason = "independent command-line switches, not a state machine"
)]
pub struct ServeArgs {
    /// The index folder (`skg index build` output).
    #[arg(long, default_value = DEFAULT_INDEX)]
    pub index: PathBuf,
    /// Address to listen on.
    #[arg(long, default_value = "127.0.0.1:8787")]
    pub addr: String,
    /// BM25 only (do not load the embedding model).
    #[arg(long)]
    pub bm25: bool,
    #[command(flatten)]
    pub late: LateArgs,
    /// Retrievals computed at once (default: the core count); each has its own model session.
    #[arg(long)]
    pub compute_slots: Option<usize>,
    /// Requests handled at once; more wait (within the timeout).
    #[arg(long, default_value_t = skg_serve::defaults::CONCURRENCY)]
    pub concurrency: usize,
    /// Whole-request timeout, in milliseconds (503 after it).
    #[arg(long, default_value_t = skg_serve::defaults::TIMEOUT_MS)]
    pub timeout_ms: u64,
    /// Milliseconds a client has to send a request's headers before it is disconnected.
    #[arg(long, default_value_t = skg_serve::defaults::HEADER_TIMEOUT_MS)]
    pub header_timeout_ms: u64,
    /// Largest request body, in bytes (413 above it).
    #[arg(long, default_value_t = skg_serve::defaults::MAX_BODY_BYTES)]
    pub max_body_bytes: usize,
    /// Largest `k` a request may ask for.
    #[arg(long, default_value_t = skg_serve::defaults::MAX_K)]
    pub max_k: usize,
    /// Query vectors kept for repeated tasks (entries; 0 turns the cache off).
    #[arg(long, default_value_t = skg_serve::defaults::QUERY_CACHE)]
    pub query_cache: usize,
    /// Memory the query cache holds at most, in MiB (a long task's token states are ~100 KB).
    #[arg(long, default_value_t = skg_serve::defaults::QUERY_CACHE_BYTES >> 20,
          value_parser = clap::value_parser!(u64).range(1..=65_536))]
    pub query_cache_mib: u64,
    /// Dense retrieval through a nearest-neighbour graph (HNSW) when the index has at least this
    /// many dense rows; smaller indexes are scanned exactly.
    #[arg(long, default_value_t = skg_index::ann::DEFAULT_MIN_ROWS)]
    pub ann_min_rows: usize,
    /// Always scan every dense row exactly (no nearest-neighbour graph).
    #[arg(long)]
    pub no_ann: bool,
    /// Browser origins allowed to call /mcp besides localhost (repeatable).
    #[arg(long)]
    pub allow_origin: Vec<String>,
    /// Local registries to watch: on a change, re-audit, update the index incrementally and
    /// reload it (repeatable).
    #[arg(long, value_name = "REGISTRY")]
    pub watch: Vec<PathBuf>,
    /// Audit folder `--watch` maintains (default `<index>.audit`).
    #[arg(long)]
    pub watch_audit: Option<PathBuf>,
    /// Seconds between checks of the watched registries (0.1 to 86,400).
    #[arg(long, default_value = "2", value_parser = parse_poll_seconds)]
    pub poll_seconds: std::time::Duration,
    /// Quarantine threshold `--watch` audits with.
    #[arg(long, default_value_t = skg_score::Options::DEFAULT_THRESHOLD)]
    pub threshold: f64,
    /// The keys file (`skg keys add`): every read endpoint then needs an API key and each key
    /// sees only its skills. Re-read when it changes.
    #[arg(long, value_name = "FILE", conflicts_with = "open")]
    pub keys: Option<PathBuf>,
    /// Milliseconds between reads of the keys file (a revoked key is refused within one).
    #[arg(long, default_value_t = skg_serve::defaults::KEYS_POLL_MS)]
    pub keys_poll_ms: u64,
    /// With `--keys`, serve `/metrics` without a token (a scraper on an internal network). By
    /// default a keyed gateway's metrics — every tenant's id and the whole index's counts — need
    /// `Authorization: Bearer` with `SKG_METRICS_TOKEN` or `SKG_ADMIN_TOKEN`; a set
    /// `SKG_METRICS_TOKEN` is required whatever this says.
    #[arg(long, requires = "keys")]
    pub open_metrics: bool,
    /// Write each request's task text into the access log (target `skg::access`, at info); off,
    /// the log has tenant, route, status, latency, index revision and result ids only.
    #[arg(long)]
    pub log_task: bool,
    /// The floor of requests that give no `min_score`: hits must score above it, else the answer
    /// abstains (measure one with `skg eval --out-of-scope`; default: the index's, 0).
    #[arg(long)]
    pub min_score: Option<f32>,
    /// Milliseconds between checks of the index folder's revision: a replica reloads on its own
    /// when a new index is published there (0: only on /admin/reload or --watch).
    #[arg(long, default_value_t = 0)]
    pub index_poll_ms: u64,
    /// Milliseconds a stopping gateway keeps accepting connections after /ready turned 503, so
    /// a load balancer's health check moves traffic away first.
    #[arg(long, default_value_t = 0)]
    pub drain_ms: u64,
    /// Serve without keys on an address other than loopback (anyone who reaches it sees every
    /// skill). Without `--keys`, only loopback addresses are served open unless this is given.
    #[arg(long)]
    pub open: bool,
}

/// `skg keys …`.
#[derive(Debug, Subcommand)]
pub enum KeysCommand {
    /// Add a key for a tenant; prints the key once (only its hash is stored).
    Add(KeysAddArgs),
    /// List the keys (ids, tenants, policies; never a key).
    List(KeysFileArgs),
    /// Revoke a key by id (it stays listed; a running gateway refuses it within one poll).
    Revoke(KeysRevokeArgs),
}

/// The keys file.
#[derive(Debug, Clone, Args)]
pub struct KeysFileArgs {
    /// The keys file (created by the first `add`).
    #[arg(long, value_name = "FILE", default_value = "skg-keys.toml")]
    pub file: PathBuf,
    /// Output format.
    #[arg(long, value_enum, default_value_t = Format::Human)]
    pub format: Format,
}

/// `skg keys add`.
#[derive(Debug, Clone, Args)]
pub struct KeysAddArgs {
    #[command(flatten)]
    pub file: KeysFileArgs,
    /// The tenant the key belongs to (metrics and logs are labelled with it).
    #[arg(long)]
    pub tenant: String,
    /// Skill-id pattern the key may see, a glob over `registry:path` (repeatable; default: all).
    #[arg(long, value_name = "PATTERN")]
    pub allow: Vec<String>,
    /// Skill-id pattern the key may not see (repeatable; wins over --allow).
    #[arg(long, value_name = "PATTERN")]
    pub deny: Vec<String>,
    /// The key may see quarantined skills (unsafe ones stay withheld from everyone).
    #[arg(long)]
    pub quarantined: bool,
    /// Requests per second on average (default: unlimited).
    #[arg(long, value_name = "PER_SECOND")]
    pub rate: Option<f64>,
    /// Requests at once above the average (default: one second's worth).
    #[arg(long, requires = "rate")]
    pub burst: Option<u32>,
    /// `k` when a request does not say.
    #[arg(long)]
    pub k: Option<usize>,
    /// Token budget of a route when the request does not say.
    #[arg(long)]
    pub token_budget: Option<u64>,
}

/// `skg keys revoke`.
#[derive(Debug, Clone, Args)]
pub struct KeysRevokeArgs {
    #[command(flatten)]
    pub file: KeysFileArgs,
    /// The key's id (`skg keys list`).
    pub id: String,
}

#[derive(Debug, Args)]
pub struct McpArgs {
    /// The index folder (`skg index build` output).
    #[arg(long, default_value = DEFAULT_INDEX)]
    pub index: PathBuf,
    /// BM25 only (do not load the embedding model).
    #[arg(long)]
    pub bm25: bool,
    #[command(flatten)]
    pub late: LateArgs,
}

/// `--field-weights`' help, with the defaults as skg-index defines them.
fn field_weights_help() -> String {
    let list =
        |w: skg_index::FieldWeights| w.0.iter().map(f32::to_string).collect::<Vec<_>>().join(",");
    format!(
        "BM25 field weights for every skill, six comma-separated numbers ≥ 0: name, description, \
         when_to_use, tags, headings, body (default: by unit and kind — whole skill: packages {}, \
         tool-catalog entries {}; best document: {}; the JSON report's `bm25` records what ran)",
        list(skg_index::FieldWeights::SKILL),
        list(skg_index::FieldWeights::TOOL),
        list(skg_index::FieldWeights::DOCUMENT),
    )
}

/// `--field-weights`: six comma-separated finite numbers ≥ 0, in `skg_index::FIELDS` order.
fn parse_field_weights(s: &str) -> Result<[f32; 6], String> {
    let parts: Vec<&str> = s.split(',').map(str::trim).collect();
    let n = skg_index::FIELDS.len();
    if parts.len() != n {
        return Err(format!(
            "{} numbers given, {n} wanted ({})",
            parts.len(),
            skg_index::FIELDS.join(", ")
        ));
    }
    let mut out = [0f32; 6];
    for ((slot, part), field) in out.iter_mut().zip(&parts).zip(skg_index::FIELDS) {
        *slot = part
            .parse::<f32>()
            .ok()
            .filter(|w| w.is_finite() && *w >= 0.0)
            .ok_or_else(|| format!("{field}: `{part}` is not a number ≥ 0"))?;
    }
    Ok(out)
}

/// `skg index build --embedder`: which of the model folder's graphs embeds the catalog.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum EmbedderChoice {
    /// By the catalog's kind: the tools graph for a catalog of tools alone, else the packages
    /// graph.
    Auto,
    /// The packages graph (`model.onnx`, the audit's).
    Packages,
    /// The tools graph (`model-tools.onnx`).
    Tools,
}

impl From<EmbedderChoice> for Option<skg_embed::Variant> {
    fn from(c: EmbedderChoice) -> Self {
        match c {
            EmbedderChoice::Auto => None,
            EmbedderChoice::Packages => Some(skg_embed::Variant::Packages),
            EmbedderChoice::Tools => Some(skg_embed::Variant::Tools),
        }
    }
}

/// `skg index build --late-interaction`: when the cards' token states are stored.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum LateInteraction {
    /// When the catalog has at most 30,000 cards.
    Auto,
    /// Always.
    On,
    /// Never.
    Off,
}
