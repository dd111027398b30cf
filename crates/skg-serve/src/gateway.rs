//! The gateway's state: the served index (hot-swapped), the query embedder, limits, and the
//! operations the HTTP API and the MCP server share.

use std::{
    collections::HashMap,
    path::PathBuf,
    sync::{Arc, Mutex},
    time::{Duration, Instant, SystemTime},
};

use arc_swap::ArcSwap;
use serde::Serialize;
use skg_index::{Index, Scope};

use crate::{
    access::{Access, Keys, KeysError, KeysFile, Refusal},
    error::{ApiError, ErrorCode, public},
    metrics::Metrics,
    wire::{
        self, Ask, FindRequest, FindResponse, HealthIndex, HealthResponse, HealthSource,
        ListingRequest, ListingResponse, Mode, RouteRequest, RouteResponse, SearchResponse, Served,
        SkillResponse,
    },
};

/// Query embedding (the binary plugs skg-embed in).
pub trait Embed: Send + Sync + std::fmt::Debug + 'static {
    /// The identity of the vectors it makes (`skg_embed::identity`), compared with the index's.
    fn model(&self) -> &str;
    /// One L2-normalized vector for `text`.
    fn embed(&self, text: &str) -> Result<Vec<f32>, String>;
    /// [`Embed::embed`] while no other request is computing: the embedder may use every core.
    /// It must give the same vector bit for bit (an answer must not depend on the load it
    /// arrived in).
    fn embed_alone(&self, text: &str) -> Result<Vec<f32>, String> {
        self.embed(text)
    }
    /// [`Embed::embed`] with the text's token states, for the index's second stage (late
    /// interaction, [`skg_index::Late`]); an embedder without them gives the vector alone.
    fn embed_with_tokens(&self, text: &str) -> Result<skg_index::QueryEmbedding, String> {
        self.embed(text).map(Into::into)
    }
    /// [`Embed::embed_alone`] with the text's token states (as [`Embed::embed_with_tokens`]).
    fn embed_alone_with_tokens(&self, text: &str) -> Result<skg_index::QueryEmbedding, String> {
        self.embed_alone(text).map(Into::into)
    }
}

/// Where the gateway gets the query embedder for the index it serves: the one that made the
/// index's vectors (the model folder holds a graph per catalog kind, and a reload may bring an
/// index of the other kind). Asked once per index loaded, on a blocking thread.
pub trait Embedders: Send + Sync + std::fmt::Debug + 'static {
    /// The embedder for an index whose vectors have the identity `model`, or why there is
    /// none (said in `/health`'s `degraded`). An embedder of another identity may be returned:
    /// the gateway then answers BM25 only and says why.
    fn for_model(&self, model: &str) -> Result<Arc<dyn Embed>, String>;
}

/// One embedder (or none) for every index: what [`Gateway::open`] serves with.
impl Embedders for Option<Arc<dyn Embed>> {
    fn for_model(&self, _: &str) -> Result<Arc<dyn Embed>, String> {
        self.clone()
            .ok_or_else(|| "no embedding model loaded: BM25 only".to_owned())
    }
}

/// Gateway settings.
#[derive(Debug, Clone)]
pub struct Config {
    /// The index folder served.
    pub index_dir: PathBuf,
    /// Token that `POST /admin/reload` requires (`Authorization: Bearer …`); `None` disables it.
    pub admin_token: Option<String>,
    /// Token a scraper of `/metrics` sends (`Authorization: Bearer …`; the admin token serves
    /// too). Set, `/metrics` needs one of them; unset, `/metrics` is open without `keys_file`
    /// and, with it, needs the admin token — closed when there is none — unless `open_metrics`
    /// (the metrics carry every tenant's id and the whole index's counts, which no tenant's key
    /// may read). See [`Config::metrics_access`]; an empty token counts as unset.
    pub metrics_token: Option<String>,
    /// Serve `/metrics` without a token on a gateway with keys (a scraper on an internal
    /// network); ignored when `metrics_token` is set.
    pub open_metrics: bool,
    /// Largest request body.
    pub max_body_bytes: usize,
    /// Whole-request timeout.
    pub timeout: Duration,
    /// Time a client has to send a request's headers (slow-loris guard); the connection is
    /// closed after it.
    pub header_read_timeout: Duration,
    /// Requests handled at once (more wait, within the timeout).
    pub concurrency: usize,
    /// Retrieval/routing computations at once (CPU-bound: about the core count).
    pub compute_slots: usize,
    /// Largest `k`.
    pub max_k: usize,
    /// Longest task or query, in characters.
    pub max_query_chars: usize,
    /// Origins allowed to call `/mcp` from a browser (`Origin` header); localhost is always allowed.
    pub allowed_origins: Vec<String>,
    /// Why retrieval is degraded from the start (e.g. the model could not be loaded).
    pub degraded: Vec<String>,
    /// Query vectors kept for repeated tasks (entries; 0 = none). Agents repeat tasks, and the
    /// query embedding is most of a hybrid request's CPU time.
    pub query_cache: usize,
    /// Bytes the query cache holds at most, over its entries (a query's token states are up to
    /// 64 × 384 floats, ~100 KB: 4,096 long tasks would otherwise hold 400 MB).
    pub query_cache_bytes: u64,
    /// Dense retrieval through a nearest-neighbour graph when the index has at least this many
    /// dense rows (`None`: always the exact scan); see `skg_index::ann`.
    pub ann_min_rows: Option<usize>,
    /// The keys file (`skg keys`): every read endpoint then requires a key, and each key sees
    /// only its skills. `None`: open mode (every caller sees every skill but unsafe ones).
    pub keys_file: Option<PathBuf>,
    /// How often the keys file is re-read (a revoked key is refused within one interval).
    pub keys_poll: Duration,
    /// How often the index folder's manifest is checked for a new revision (`None`: only on
    /// `/admin/reload` or `--watch`). Replicas over one published folder each reload on their
    /// own within an interval.
    pub index_poll: Option<Duration>,
    /// How long a shutting-down gateway keeps accepting connections after `/ready` turned 503.
    pub drain_grace: Duration,
    /// The floor a request gets when it gives no `min_score` (`None`: the index's, 0): hits must
    /// score above it, else the answer abstains (`nothing_cleared_the_floor`). `skg eval
    /// --out-of-scope` measures what a floor keeps and rejects.
    pub min_score: Option<f32>,
    /// Write the task text into the access log (off: the log carries tenant, route, status,
    /// latency, revision and result ids only).
    pub log_task: bool,
    /// The second stage over the hybrid ranking (late interaction of the task's tokens with each
    /// candidate's card), when the index stores its cards' tokens. [`skg_index::Late::OFF`]
    /// answers with the fused first stage alone and embeds no token states: fewer first places,
    /// more requests a second (docs/retrieval.md, "A calm hour's figures").
    pub late: skg_index::Late,
}

/// The settings' defaults, defined once (the command line shows them from here).
pub mod defaults {
    /// Largest request body, in bytes.
    pub const MAX_BODY_BYTES: usize = 64 * 1024;
    /// Whole-request timeout, in milliseconds.
    pub const TIMEOUT_MS: u64 = 10_000;
    /// Time a client has to send a request's headers, in milliseconds.
    pub const HEADER_TIMEOUT_MS: u64 = 5_000;
    /// Requests handled at once.
    pub const CONCURRENCY: usize = 256;
    /// Largest `k`.
    pub const MAX_K: usize = 50;
    /// Longest task or query, in characters.
    pub const MAX_QUERY_CHARS: usize = 4000;
    /// Query vectors kept for repeated tasks.
    pub const QUERY_CACHE: usize = 4096;
    /// Bytes the query cache holds at most: 64 MiB.
    pub const QUERY_CACHE_BYTES: u64 = 64 << 20;
    /// How often the keys file is re-read, in milliseconds.
    pub const KEYS_POLL_MS: u64 = 2_000;

    /// Retrieval computations at once: the core count.
    pub fn compute_slots() -> usize {
        std::thread::available_parallelism().map_or(2, usize::from)
    }
}

/// A configured token, unless empty (an empty token would let an empty bearer through).
pub(crate) fn secret(token: Option<&str>) -> Option<&str> {
    token.filter(|t| !t.trim().is_empty())
}

/// Who may read `/metrics` ([`Config::metrics_access`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MetricsAccess {
    /// Anyone who reaches the gateway.
    Open,
    /// A bearer with the metrics token or the admin token.
    Token,
    /// No one: a gateway with keys, no token to scrape with and no `open_metrics`.
    Closed,
}

impl Config {
    /// Who may read `/metrics`: a set metrics token is required; without one, the metrics are
    /// open on a gateway without keys (or with `open_metrics`), and with keys they need the
    /// admin token — closed when there is none.
    pub fn metrics_access(&self) -> MetricsAccess {
        if secret(self.metrics_token.as_deref()).is_some() {
            MetricsAccess::Token
        } else if self.keys_file.is_none() || self.open_metrics {
            MetricsAccess::Open
        } else if secret(self.admin_token.as_deref()).is_some() {
            MetricsAccess::Token
        } else {
            MetricsAccess::Closed
        }
    }

    /// Defaults for `index_dir`.
    pub fn new(index_dir: PathBuf) -> Config {
        Config {
            index_dir,
            admin_token: None,
            metrics_token: None,
            open_metrics: false,
            max_body_bytes: defaults::MAX_BODY_BYTES,
            timeout: Duration::from_millis(defaults::TIMEOUT_MS),
            header_read_timeout: Duration::from_millis(defaults::HEADER_TIMEOUT_MS),
            concurrency: defaults::CONCURRENCY,
            compute_slots: defaults::compute_slots(),
            max_k: defaults::MAX_K,
            max_query_chars: defaults::MAX_QUERY_CHARS,
            allowed_origins: Vec::new(),
            degraded: Vec::new(),
            query_cache: defaults::QUERY_CACHE,
            query_cache_bytes: defaults::QUERY_CACHE_BYTES,
            ann_min_rows: Some(skg_index::ann::DEFAULT_MIN_ROWS),
            keys_file: None,
            keys_poll: Duration::from_millis(defaults::KEYS_POLL_MS),
            index_poll: None,
            drain_grace: Duration::ZERO,
            min_score: None,
            log_task: false,
            late: skg_index::Late::default(),
        }
    }
}

/// The index being served.
#[derive(Debug)]
pub struct Loaded {
    /// The index.
    pub index: Index,
    /// When it was loaded (seconds since the Unix epoch).
    pub loaded_at: u64,
    /// The skills each key view sees in this index (by [`crate::access::Tenant::view`]),
    /// computed on first use.
    scopes: Mutex<HashMap<u64, Arc<Scope>>>,
    /// Its queries' embedder (loaded with it, swapped with it), or why there is none (`None`
    /// both: the index has no vectors).
    embedder: Result<Option<Arc<dyn Embed>>, String>,
}

impl Loaded {
    fn new(index: Index, embedders: &dyn Embedders) -> Loaded {
        let embedder = match index.manifest.model.as_deref() {
            None => Ok(None),
            Some(model) => embedders.for_model(model).map(Some).inspect_err(|why| {
                tracing::warn!("{why}");
            }),
        };
        Loaded {
            index,
            loaded_at: now(),
            scopes: Mutex::new(HashMap::new()),
            embedder,
        }
    }

    /// The embedder of its queries, when one is loaded.
    fn embedder(&self) -> Option<&Arc<dyn Embed>> {
        self.embedder.as_ref().ok()?.as_ref()
    }

    /// What `access` may see in this index (`None`: every skill the index serves).
    pub fn scope(&self, access: &Access) -> Option<Arc<Scope>> {
        let key = access.key()?;
        let mut scopes = self
            .scopes
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        Some(Arc::clone(scopes.entry(key.view).or_insert_with(|| {
            Arc::new(Scope::new(&self.index, |s| key.sees(s)))
        })))
    }
}

/// Why the gateway could not start.
#[derive(Debug, thiserror::Error)]
pub enum OpenError {
    /// The index folder could not be opened.
    #[error(transparent)]
    Index(#[from] skg_index::Error),
    /// The keys file could not be read.
    #[error(transparent)]
    Keys(#[from] KeysError),
}

/// What re-reading the keys file did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum KeysReload {
    /// The gateway runs open: there is no keys file.
    Open,
    /// The file did not change.
    Unchanged,
    /// New keys are in force.
    Reloaded {
        /// Keys in the file (revoked ones included).
        keys: usize,
    },
    /// The file could not be read; the previous keys stay in force.
    Failed {
        /// Why (`path:line:column: …` for a parse error).
        error: String,
    },
}

/// What a reload did.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, utoipa::ToSchema)]
#[serde(rename_all = "snake_case", tag = "outcome")]
pub enum ReloadOutcome {
    /// A new revision is served.
    Reloaded {
        /// The revision served before.
        from: String,
        /// The revision served now.
        to: String,
    },
    /// The folder holds the revision already served: nothing loaded.
    Fresh {
        /// The revision served.
        revision: String,
    },
    /// The folder could not be loaded; the previous revision keeps serving.
    Failed {
        /// Why.
        error: String,
        /// The revision still served.
        serving: String,
    },
}

/// The gateway.
#[derive(Debug)]
pub struct Gateway {
    pub(crate) cfg: Config,
    current: ArcSwap<Loaded>,
    embedders: Arc<dyn Embedders>,
    /// Query embeddings by caller, model and text ([`cache_key`]): one caller's cache hit never
    /// tells it (by a faster answer) what another caller asked, and a reload onto an index of
    /// another model finds none of the previous model's.
    query_vectors: Option<QueryCache>,
    reload_lock: std::sync::Mutex<()>,
    last_reload_error: Mutex<Option<String>>,
    /// The keys in force and the hash of the text they came from (`None`: open mode).
    keys: Option<ArcSwap<(Keys, blake3::Hash)>>,
    keys_error: Mutex<Option<String>>,
    pub(crate) compute: Arc<tokio::sync::Semaphore>,
    pub(crate) metrics: Metrics,
    pub(crate) started: Instant,
    /// Ready for traffic: the index is loaded and the gateway is not draining.
    ready: std::sync::atomic::AtomicBool,
}

fn now() -> u64 {
    SystemTime::now()
        .duration_since(SystemTime::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs())
}

/// The prelude every retrieval operation shares: the request checked, the index it will finish
/// on, its query vector, the clock.
struct Prepared {
    loaded: Arc<Loaded>,
    vector: Option<Arc<skg_index::QueryEmbedding>>,
    scope: Option<Arc<Scope>>,
    started: Instant,
    /// The floor and `k` the query ran with (for `explain`).
    floor: f32,
    k: usize,
}

impl Prepared {
    fn vector(&self) -> Option<&[f32]> {
        self.vector.as_ref().map(|e| e.vector.as_slice())
    }

    fn took_ms(&self) -> f64 {
        self.started.elapsed().as_secs_f64() * 1000.0
    }
}

/// The index folder, with the nearest-neighbour graph when it is large enough.
fn open_index(cfg: &Config) -> skg_index::Result<Index> {
    // A gateway that never runs the second stage keeps the cards' tokens out of memory.
    let mut index = Index::open_with(&cfg.index_dir, skg_index::OpenOptions::for_stage(&cfg.late))?;
    if let Some(min_rows) = cfg.ann_min_rows {
        let started = Instant::now();
        if index.use_ann(min_rows, skg_index::ann::AnnOptions::default())? {
            tracing::info!(
                rows = index.vector_rows(),
                seconds = started.elapsed().as_secs_f64(),
                source = ?index.ann_source(),
                "nearest-neighbour graph ready"
            );
        }
    }
    Ok(index)
}

impl Gateway {
    /// Opens the index folder (refusing an unfinished one) and the keys file, when there is one,
    /// and builds the gateway.
    ///
    /// # Errors
    /// The index folder or the keys file cannot be read.
    pub fn open(cfg: Config, embedder: Option<Arc<dyn Embed>>) -> Result<Gateway, OpenError> {
        Gateway::open_with(cfg, Arc::new(embedder))
    }

    /// [`Gateway::open`] with the embedder of each index loaded asked of `embedders` (at the
    /// start and on every reload).
    ///
    /// # Errors
    /// The index folder or the keys file cannot be read.
    pub fn open_with(cfg: Config, embedders: Arc<dyn Embedders>) -> Result<Gateway, OpenError> {
        let keys = match &cfg.keys_file {
            None => None,
            Some(path) => {
                let text = crate::access::read_text(path)?;
                let file = KeysFile::parse(&text, path)?;
                let keys = Keys::compile(&file, None, path)?;
                Some(ArcSwap::from_pointee((keys, blake3::hash(text.as_bytes()))))
            }
        };
        let index = open_index(&cfg)?;
        let metrics = Metrics::new();
        metrics.index_loaded(&index);
        let query_vectors = QueryWeight::cache(cfg.query_cache, cfg.query_cache_bytes, index.dim());
        Ok(Gateway {
            compute: Arc::new(tokio::sync::Semaphore::new(cfg.compute_slots.max(1))),
            cfg,
            current: ArcSwap::from_pointee(Loaded::new(index, embedders.as_ref())),
            embedders,
            query_vectors,
            reload_lock: std::sync::Mutex::new(()),
            last_reload_error: Mutex::new(None),
            keys,
            keys_error: Mutex::new(None),
            metrics,
            started: Instant::now(),
            ready: std::sync::atomic::AtomicBool::new(true),
        })
    }

    /// Ready for traffic (`/ready`): true once the index is loaded (the gateway never listens
    /// before), false while draining.
    pub fn is_ready(&self) -> bool {
        self.ready.load(std::sync::atomic::Ordering::Relaxed)
    }

    /// Stops advertising readiness (a load balancer then sends no new requests) while in-flight
    /// ones finish: called when shutdown begins.
    pub fn drain(&self) {
        self.ready
            .store(false, std::sync::atomic::Ordering::Relaxed);
    }

    /// The index served now (a request keeps this one until it finishes).
    pub fn current(&self) -> Arc<Loaded> {
        self.current.load_full()
    }

    /// Settings.
    pub fn config(&self) -> &Config {
        &self.cfg
    }

    /// Reloads the folder if its manifest names another revision; swaps atomically. Blocking
    /// (reads the folder): call from a blocking thread. Reloads run one at a time, whoever asks
    /// (the admin route, the revision poll, `serve --watch`): a slow load cannot be overtaken by
    /// a later one and then store an older revision over it.
    pub fn reload_blocking(&self) -> ReloadOutcome {
        let _one_at_a_time = self
            .reload_lock
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        let current = self.current();
        let serving = current.index.manifest.content_hash.clone();
        // The content hash covers the vectors' bytes, not whose they are: a rebuild with other
        // model files can give the same bytes under another identity, and must be loaded.
        let outcome = match skg_index::read_manifest(&self.cfg.index_dir) {
            Ok(m) if m.content_hash == serving && m.model == current.index.manifest.model => {
                ReloadOutcome::Fresh { revision: serving }
            }
            Ok(_) => match open_index(&self.cfg) {
                Ok(index) => {
                    let to = index.manifest.content_hash.clone();
                    self.metrics.index_loaded(&index);
                    let loaded = Loaded::new(index, self.embedders.as_ref());
                    self.current.store(Arc::new(loaded));
                    ReloadOutcome::Reloaded { from: serving, to }
                }
                Err(e) => failed(&e, serving),
            },
            Err(e) => failed(&e, serving),
        };
        let mut last = self
            .last_reload_error
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        match &outcome {
            ReloadOutcome::Failed { error, .. } => {
                tracing::warn!("reload failed, still serving the previous index: {error}");
                *last = Some(error.clone());
            }
            ReloadOutcome::Reloaded { from, to } => {
                tracing::info!("index reloaded: {from} → {to}");
                *last = None;
            }
            ReloadOutcome::Fresh { .. } => *last = None,
        }
        self.metrics.reload(&outcome);
        outcome
    }

    /// Re-reads the keys file when its text changed; a file that cannot be read or parsed keeps
    /// the previous keys in force (`/health` says that it failed; the log, once per distinct
    /// error, and this return value say why). Blocking: call from a blocking thread.
    pub fn reload_keys_blocking(&self) -> KeysReload {
        let (Some(keys), Some(path)) = (&self.keys, &self.cfg.keys_file) else {
            return KeysReload::Open;
        };
        let current = keys.load_full();
        let outcome = match crate::access::read_text(path) {
            Err(e) => KeysReload::Failed {
                error: e.to_string(),
            },
            Ok(text) if blake3::hash(text.as_bytes()) == current.1 => KeysReload::Unchanged,
            Ok(text) => match KeysFile::parse(&text, path)
                .and_then(|f| Keys::compile(&f, Some(&current.0), path))
            {
                Ok(new) => {
                    let n = new.len();
                    keys.store(Arc::new((new, blake3::hash(text.as_bytes()))));
                    KeysReload::Reloaded { keys: n }
                }
                Err(e) => KeysReload::Failed {
                    error: e.to_string(),
                },
            },
        };
        let mut last = self
            .keys_error
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        match &outcome {
            KeysReload::Failed { error } => {
                if last.as_deref() != Some(error.as_str()) {
                    tracing::warn!(
                        "keys file not reloaded, the previous keys stay in force: {error}"
                    );
                }
                *last = Some(error.clone());
            }
            KeysReload::Reloaded { keys } => {
                tracing::info!(keys, "keys file reloaded");
                *last = None;
            }
            KeysReload::Unchanged | KeysReload::Open => *last = None,
        }
        outcome
    }

    /// How often the keys file is re-read, when there is one.
    pub fn keys_poll(&self) -> Option<Duration> {
        self.keys.as_ref().map(|_| self.cfg.keys_poll)
    }

    /// Who is asking, from the key presented (`None`: no key sent), after the key's rate
    /// limit: in open mode, anyone. Refusals are counted by reason (and rate-limited requests
    /// by tenant).
    ///
    /// # Errors
    /// 401 for a missing, unknown or revoked key; 429 (with `Retry-After`) when the key's
    /// bucket is empty.
    pub fn authenticate(&self, presented: Option<&str>) -> Result<Access, ApiError> {
        let Some(keys) = &self.keys else {
            return Ok(Access::Open);
        };
        let refused = |r: Refusal| {
            self.metrics.refusal(r);
            let message = match r {
                Refusal::Missing => {
                    "this gateway requires an API key: send Authorization: Bearer <key> (skg keys add)"
                }
                Refusal::Unknown => "the API key is not valid",
                Refusal::Revoked => "the API key was revoked",
            };
            ApiError::new(ErrorCode::Unauthorized, message)
        };
        let presented = presented.ok_or_else(|| refused(Refusal::Missing))?;
        let tenant = keys.load().0.authenticate(presented).map_err(refused)?;
        if let Err(wait) = tenant.take() {
            self.metrics.rate_limited(&tenant.name);
            let seconds = wait.as_secs() + u64::from(wait.subsec_nanos() > 0);
            let mut e = ApiError::new(
                ErrorCode::RateLimited,
                format!(
                    "the rate limit of this key is reached; retry in {:.1} s",
                    wait.as_secs_f64()
                ),
            );
            e.retry_after = Some(seconds.max(1));
            return Err(e);
        }
        Ok(Access::Key(tenant))
    }

    /// [`Gateway::reload_blocking`] from async code; concurrent reloads run one at a time (the
    /// lock is taken on the blocking thread, so a caller's timeout does not release it).
    pub async fn reload(self: &Arc<Self>) -> ReloadOutcome {
        let me = Arc::clone(self);
        tokio::task::spawn_blocking(move || me.reload_blocking())
            .await
            .unwrap_or_else(|e| ReloadOutcome::Failed {
                error: format!("reload task failed: {e}"),
                serving: self.current().index.manifest.content_hash.clone(),
            })
    }

    /// Why answers are degraded now (empty when hybrid retrieval is available).
    pub fn degraded(&self, loaded: &Loaded) -> Vec<String> {
        let mut out = self.cfg.degraded.clone();
        let index_model = loaded.index.manifest.model.as_deref();
        match (&loaded.embedder, index_model) {
            (_, None) => {
                out.push("the index has no vectors (built with --no-embeddings): BM25 only".into());
            }
            (Err(why), Some(_)) if out.is_empty() => out.push(why.clone()),
            (Ok(None), Some(_)) if out.is_empty() => {
                out.push("no embedding model loaded: BM25 only".into());
            }
            (Ok(Some(e)), Some(m)) if e.model() != m => out.push(format!(
                "the index was embedded with {m}, the gateway's model is {}: BM25 only (rebuild the index with this model, or serve with the model it was built with)",
                e.model()
            )),
            _ => {}
        }
        if let Some(e) = self
            .last_reload_error
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .as_ref()
        {
            out.push(format!(
                "the last reload failed ({e}); serving revision {}",
                loaded.index.manifest.content_hash
            ));
        }
        // Every caller sees this line, so it names no path, key or pattern: the error itself
        // is in the gateway's log.
        if self
            .keys_error
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .is_some()
        {
            out.push(
                "the keys file could not be re-read (the gateway's log says why); the previous \
                 keys stay in force"
                    .to_owned(),
            );
        }
        out
    }

    /// Whether this request (which holds one compute slot) holds the only one taken: no other
    /// request is computing, so the embedder may use every core, and the request searches
    /// after its embedding rather than beside it (`answer_many`). A slot is held until the
    /// request's work is done, even when the timeout dropped the request.
    fn alone(&self) -> bool {
        self.compute.available_permits() + 1 >= self.cfg.compute_slots.max(1)
    }

    /// The query vector, when hybrid retrieval is possible for this index; `alone` ([`Gateway::alone`],
    /// decided once per request) embeds on the solo session.
    fn query_vector(
        &self,
        loaded: &Loaded,
        (text, access): (&str, &Access),
        mode: Option<Mode>,
        alone: bool,
    ) -> Option<Arc<skg_index::QueryEmbedding>> {
        if mode == Some(Mode::Bm25) {
            return None;
        }
        let e = loaded.embedder()?;
        if loaded.index.manifest.model.as_deref() != Some(e.model()) {
            return None;
        }
        // Token states only for an index that holds its cards' (the second stage); a cached
        // embedding without them is made again for such an index.
        // (A gateway that never runs the stage opened the index without them: `open_index`.)
        let wants_tokens = loaded.index.has_card_tokens();
        if let Some(v) = self
            .query_vectors
            .as_ref()
            .and_then(|c| c.get(&cache_key(access, e.model(), text)))
            && (!wants_tokens || !v.tokens.is_empty())
        {
            self.metrics.query_cache(true);
            return Some(v);
        }
        let vector = match (wants_tokens, alone) {
            (true, true) => e.embed_alone_with_tokens(text),
            (true, false) => e.embed_with_tokens(text),
            (false, true) => e.embed_alone(text).map(Into::into),
            (false, false) => e.embed(text).map(Into::into),
        };
        match vector {
            Ok(mut v) => {
                // The stage reads a query's first tokens only: the cache keeps no more.
                v.tokens
                    .truncate(skg_index::Late::MAX_QUERY_TOKENS * v.vector.len());
                let v = Arc::new(v);
                if let Some(c) = &self.query_vectors {
                    self.metrics.query_cache(false);
                    c.insert(cache_key(access, e.model(), text), Arc::clone(&v));
                }
                Some(v)
            }
            Err(err) => {
                tracing::warn!("query embedding failed, BM25 only: {err}");
                None
            }
        }
    }

    /// Resolves `k` (the request's, else the key's, else the default), then refuses empty or
    /// too long texts, `k` out of range and a non-finite floor (422), and quarantined skills to
    /// a key that may not see them (403); every retrieval operation starts with it, whoever
    /// calls.
    fn check(&self, ask: &mut Ask<'_>, access: &Access) -> Result<(), ApiError> {
        let key = access.key();
        let k = ask
            .k
            .or_else(|| key.and_then(|t| t.k))
            .unwrap_or(wire::defaults::K);
        ask.k = Some(k);
        if ask.include_quarantined && key.is_some_and(|t| !t.quarantined) {
            return Err(ApiError::new(
                ErrorCode::Forbidden,
                "this API key may not see quarantined skills",
            ));
        }
        if ask.text.trim().is_empty() {
            return Err(ApiError::invalid("the task/query is empty"));
        }
        let chars = ask.text.chars().count();
        if chars > self.cfg.max_query_chars {
            return Err(ApiError::invalid(format!(
                "the task/query has {chars} characters; at most {} are accepted",
                self.cfg.max_query_chars
            )));
        }
        if k == 0 || k > self.cfg.max_k {
            return Err(ApiError::invalid(format!(
                "k must be between 1 and {}, got {k}",
                self.cfg.max_k
            )));
        }
        ask.min_score = ask.min_score.or(self.cfg.min_score);
        if ask.min_score.is_some_and(|s| !s.is_finite()) {
            return Err(ApiError::invalid("min_score must be a finite number"));
        }
        if let Some(c) = ask.capability
            && (c.is_empty()
                || c.len() > 64
                || !c
                    .bytes()
                    .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-'))
        {
            return Err(ApiError::invalid(
                "capability must be a type id: lower-case letters, digits and '-', at most 64",
            ));
        }
        Ok(())
    }

    /// Checks the request, takes the current index and ranks skills, the query embedded on a
    /// second thread while BM25 runs (`find` and `route`: latency is the longer of the two).
    fn answer(
        &self,
        mut ask: Ask<'_>,
        access: &Access,
    ) -> Result<(Prepared, skg_index::Answer), ApiError> {
        self.check(&mut ask, access)?;
        let k = ask.k.unwrap_or(wire::defaults::K);
        self.answer_many(ask, access, k)
    }

    /// [`Gateway::answer`] for `k` skills whatever the request's `k` (listings rank many more
    /// skills than a request may ask for); the request is checked first.
    fn answer_many(
        &self,
        mut ask: Ask<'_>,
        access: &Access,
        k: usize,
    ) -> Result<(Prepared, skg_index::Answer), ApiError> {
        self.check(&mut ask, access)?;
        ask.k = Some(k);
        let started = Instant::now();
        let loaded = self.current();
        let scope = loaded.scope(access);
        let mut q = ask.query(None);
        q.late = self.cfg.late;
        q.pool = q.pool.max(k);
        q.mode = ask.mode.unwrap_or(Mode::Hybrid);
        q.scope = scope.as_deref();
        let (floor, k) = (q.min_score, q.k);
        // Alone, the embedding runs on every core and BM25 beside it would only compete for
        // them (two cores: about 0.3 ms more a route, docs/retrieval.md, stop 38): embed, then
        // search. Otherwise each embedding is single-threaded and BM25 runs beside it, so the
        // route takes the longer of the two. Both give the same answer
        // (`search_embedding_answers_as_search_with_the_vector`).
        let alone = self.alone();
        let (answer, vector) = if alone && q.mode != Mode::Bm25 {
            let vector = self.query_vector(&loaded, (ask.text, access), ask.mode, true);
            q.vector = vector.as_ref().map(|e| e.vector.as_slice());
            q.tokens = vector
                .as_ref()
                .map(|e| e.tokens.as_slice())
                .filter(|t| !t.is_empty());
            (loaded.index.search(&q)?, vector)
        } else {
            loaded.index.search_embedding(&q, || {
                self.query_vector(&loaded, (ask.text, access), ask.mode, alone)
            })?
        };
        let prepared = Prepared {
            vector,
            scope: scope.clone(),
            loaded,
            started,
            floor,
            k,
        };
        Ok((prepared, answer))
    }

    /// Checks the request, takes the current index, the caller's scope and the query vector.
    fn prepare(&self, ask: &mut Ask<'_>, access: &Access) -> Result<Prepared, ApiError> {
        self.check(ask, access)?;
        let started = Instant::now();
        let loaded = self.current();
        let vector = self.query_vector(&loaded, (ask.text, access), ask.mode, self.alone());
        let q = ask.query(None);
        Ok(Prepared {
            scope: loaded.scope(access),
            loaded,
            vector,
            started,
            floor: q.min_score,
            k: q.k,
        })
    }

    fn served(&self, loaded: &Loaded, mode: skg_index::Mode) -> Served {
        Served {
            mode,
            index_revision: loaded.index.manifest.content_hash.clone(),
            degraded: self.degraded(loaded),
        }
    }

    /// Runs `f` on a blocking thread under a compute slot (retrieval is CPU-bound).
    pub(crate) async fn compute<T: Send + 'static>(
        self: &Arc<Self>,
        f: impl FnOnce(&Gateway) -> Result<T, ApiError> + Send + 'static,
    ) -> Result<T, ApiError> {
        // The slot moves into the blocking task: a request the timeout dropped keeps it until
        // its work is done, so no more work computes at once than there are slots.
        let permit = Arc::clone(&self.compute)
            .acquire_owned()
            .await
            .map_err(|e| ApiError::internal("the gateway is shutting down", e))?;
        let me = Arc::clone(self);
        tokio::task::spawn_blocking(move || {
            let _permit = permit;
            f(&me)
        })
        .await
        .map_err(|e| ApiError::internal("the request's task failed", e))?
    }

    /// `find`: one result per skill.
    pub(crate) fn find(
        &self,
        req: &FindRequest,
        access: &Access,
    ) -> Result<FindResponse, ApiError> {
        let (p, answer) = self.answer(req.ask(), access)?;
        let ix = &p.loaded.index;
        let mut out = wire::find(ix, &req.query, &answer, self.served(&p.loaded, answer.mode));
        if req.explain {
            out.explain = Some(wire::explain(ix, &answer, p.floor, p.k));
        }
        out.took_ms = p.took_ms();
        Ok(out)
    }

    /// `search`: section hits, several per skill.
    pub(crate) fn search(
        &self,
        req: &FindRequest,
        access: &Access,
    ) -> Result<SearchResponse, ApiError> {
        let mut ask = req.ask();
        let p = self.prepare(&mut ask, access)?;
        let ix = &p.loaded.index;
        let mut q = ask.query(p.vector());
        q.scope = p.scope.as_deref();
        let (hits, mode) = ix.search_sections(&q)?;
        let mut out = wire::search(ix, ask.text, &hits, self.served(&p.loaded, mode));
        out.took_ms = p.took_ms();
        Ok(out)
    }

    /// `route`: the bundle (within the caller's scope), with tools in the asked format and,
    /// with `include_content`, each skill's `SKILL.md`. A key's `token_budget` applies when the
    /// request gives none.
    pub(crate) fn route(
        &self,
        req: &RouteRequest,
        access: &Access,
    ) -> Result<RouteResponse, ApiError> {
        let (p, answer) = self.answer(req.ask(), access)?;
        let ix = &p.loaded.index;
        let budget = req
            .token_budget
            .or_else(|| access.key().and_then(|t| t.token_budget));
        let bundle = {
            let _span = tracing::info_span!("bundle", budget = ?budget).entered();
            skg_index::route_within(ix, &answer, budget, p.scope.as_deref())
        };
        let mut out = wire::route(
            ix,
            req,
            &answer,
            &bundle,
            self.served(&p.loaded, answer.mode),
        )?;
        if let Some(scope) = p.scope.as_deref() {
            for step in &mut out.plan {
                keep_visible(ix, scope, &mut step.depends_on);
            }
        }
        self.metrics.bundle(bundle.plan.len(), bundle.tokens);
        if req.explain {
            out.explain = Some(wire::explain(ix, &answer, p.floor, p.k));
        }
        out.took_ms = p.took_ms();
        Ok(out)
    }

    /// `listing`: the skills to list for the task within the budget (inside the caller's
    /// scope), packed from the task's ranking, or from the catalog by name without a task.
    pub(crate) fn listing(
        &self,
        req: &ListingRequest,
        access: &Access,
    ) -> Result<ListingResponse, ApiError> {
        /// Largest budget accepted (a whole-catalog listing of 100k skills is ~10 MB).
        const MAX_BUDGET: usize = 1 << 20;
        if req.budget_chars == 0 || req.budget_chars > MAX_BUDGET {
            return Err(ApiError::invalid(format!(
                "budget_chars must be between 1 and {MAX_BUDGET}, got {}",
                req.budget_chars
            )));
        }
        if req.description_chars == 0 || req.description_chars > 4000 {
            return Err(ApiError::invalid(format!(
                "description_chars must be between 1 and 4000, got {}",
                req.description_chars
            )));
        }
        let cut = skg_index::listing::ListingOptions {
            budget_chars: req.budget_chars,
            description_chars: req.description_chars,
        };
        let include_quarantined = req.include_quarantined;
        if let Some(task) = req.task.as_deref() {
            let ask = Ask {
                text: task,
                k: Some(1),
                mode: None,
                include_quarantined,
                min_score: None,
                capability: None,
            };
            let (p, answer) =
                self.answer_many(ask, access, skg_index::listing::RANKED_CANDIDATES)?;
            let ix = &p.loaded.index;
            let ranking: Vec<u32> = answer.hits.iter().map(|h| h.skill).collect();
            let order = skg_index::listing::ranked_order(ix, &ranking, include_quarantined);
            let l = skg_index::listing::pack(ix, &order, &cut, p.scope.as_deref());
            let mut out = wire::listing(ix, Some(task), &l, self.served(&p.loaded, answer.mode));
            out.took_ms = p.took_ms();
            return Ok(out);
        }
        let started = Instant::now();
        if include_quarantined && access.key().is_some_and(|t| !t.quarantined) {
            return Err(ApiError::new(
                ErrorCode::Forbidden,
                "this API key may not see quarantined skills",
            ));
        }
        let loaded = self.current();
        let scope = loaded.scope(access);
        let ix = &loaded.index;
        let order = skg_index::listing::catalog_order(ix, include_quarantined);
        let l = skg_index::listing::pack(ix, &order, &cut, scope.as_deref());
        let mut out = wire::listing(ix, None, &l, self.served(&loaded, skg_index::Mode::Bm25));
        out.took_ms = started.elapsed().as_secs_f64() * 1000.0;
        Ok(out)
    }

    /// One skill by id (routable or not), with its `SKILL.md` — except an unsafe one, whose text
    /// is withheld (403 `unsafe_skill`), and one outside the caller's scope, which does not exist
    /// for it (404, the same answer as an unknown id).
    pub(crate) fn skill(&self, id: &str, access: &Access) -> Result<SkillResponse, ApiError> {
        let loaded = self.current();
        let ix = &loaded.index;
        let not_found = || ApiError::not_found(format!("no skill with id {id:?} in this index"));
        let (pos, entry) = ix.skill(id).ok_or_else(not_found)?;
        let scope = loaded.scope(access);
        if let Some(scope) = scope.as_deref()
            && !scope.contains(pos)
        {
            return Err(not_found());
        }
        if entry.r#unsafe {
            return Err(ApiError::new(
                ErrorCode::UnsafeSkill,
                format!("skill {id:?} is withheld: the security scan found it unsafe (`skg scan`)"),
            ));
        }
        let mut out = wire::skill(ix, pos)?;
        if let Some(scope) = scope.as_deref() {
            if out
                .alias_of
                .as_deref()
                .is_some_and(|a| !visible_id(ix, scope, a))
            {
                out.alias_of = None;
            }
            for ids in [
                &mut out.depends_on,
                &mut out.complements,
                &mut out.co_used_with,
            ] {
                keep_visible(ix, scope, ids);
            }
        }
        Ok(out)
    }

    /// `/health`: the served index and why answers are degraded. `detailed`: with the folder,
    /// the row counts and the registries (see [`HealthIndex`]: what an open probe of a gateway
    /// with API keys does not get).
    pub fn health(&self, detailed: bool) -> HealthResponse {
        let loaded = self.current();
        let m = &loaded.index.manifest;
        let degraded = self.degraded(&loaded);
        HealthResponse {
            status: if degraded.is_empty() {
                "ok"
            } else {
                "degraded"
            }
            .to_owned(),
            degraded,
            index: HealthIndex {
                loaded: true,
                dir: detailed.then(|| self.cfg.index_dir.display().to_string()),
                revision: m.content_hash.clone(),
                format: m.format,
                tool: m.tool.clone(),
                counts: detailed.then(|| m.counts.clone()),
                model: m.model.clone(),
                dim: m.dim,
                loaded_at: loaded.loaded_at,
                sources: detailed.then(|| {
                    m.sources
                        .iter()
                        .map(|s| HealthSource {
                            name: s.name.to_string(),
                            rev: s.rev.clone(),
                            content_hash: s.content_hash.clone(),
                            skills: s.skills,
                        })
                        .collect()
                }),
            },
            uptime_seconds: self.started.elapsed().as_secs(),
            version: env!("CARGO_PKG_VERSION").to_owned(),
        }
    }
}

/// Whether `id` names no skill of the index or one inside `scope`: ids a scoped caller may
/// receive (a declared relation the index does not hold names no skill).
fn visible_id(ix: &Index, scope: &Scope, id: &str) -> bool {
    ix.skill(id).is_none_or(|(pos, _)| scope.contains(pos))
}

/// Drops the ids of skills outside `scope`.
fn keep_visible(ix: &Index, scope: &Scope, ids: &mut Vec<String>) {
    ids.retain(|id| visible_id(ix, scope, id));
}

/// The query cache: embeddings by [`cache_key`], weighed by [`QueryWeight`].
type QueryCache =
    quick_cache::sync::Cache<blake3::Hash, Arc<skg_index::QueryEmbedding>, QueryWeight>;

/// An entry's weight in the query cache: its bytes, and at least `floor` — the byte budget over
/// the entry budget — so that one weight bounds both the entries and the bytes held.
#[derive(Debug, Clone, Copy)]
struct QueryWeight {
    floor: u64,
}

impl QueryWeight {
    /// A cache of at most `entries` entries and `bytes` bytes (`None`: either is 0), for
    /// embeddings of `dim` floats a token.
    ///
    /// quick_cache splits the byte budget evenly over its shards (by default four a core) and
    /// refuses an entry heavier than one shard's share: on a machine with many cores a modest
    /// budget would never keep a long task. The shards are therefore as many as leave each room
    /// for [`QueryWeight::ROOM`] of the heaviest entry (a task's [`skg_index::Late::MAX_QUERY_TOKENS`]
    /// token states), at most four a core, at least one.
    fn cache(entries: usize, bytes: u64, dim: usize) -> Option<QueryCache> {
        if entries == 0 || bytes == 0 {
            return None;
        }
        let floor = (bytes / entries as u64).max(1);
        let heaviest = Self::bytes_for(dim, skg_index::Late::MAX_QUERY_TOKENS).max(floor);
        let cores = std::thread::available_parallelism().map_or(1, std::num::NonZero::get);
        let room =
            usize::try_from(bytes / Self::ROOM.saturating_mul(heaviest)).unwrap_or(usize::MAX);
        let shards = room.clamp(1, 4 * cores);
        // A power of two at most `shards` (quick_cache rounds up).
        let shards = 1usize << (usize::BITS - 1 - shards.leading_zeros());
        let options = quick_cache::OptionsBuilder::new()
            .estimated_items_capacity(entries)
            .weight_capacity(bytes)
            .shards(shards)
            .build()
            .ok()?;
        Some(quick_cache::sync::Cache::with_options(
            options,
            QueryWeight { floor },
            quick_cache::DefaultHashBuilder::default(),
            quick_cache::sync::DefaultLifecycle::default(),
        ))
    }

    /// How many of the heaviest entry a shard has room for at least.
    const ROOM: u64 = 4;

    /// The bytes of an entry of `dim` floats a token with `tokens` token states.
    fn bytes_for(dim: usize, tokens: usize) -> u64 {
        let floats = dim * (1 + tokens);
        (std::mem::size_of::<blake3::Hash>()
            + std::mem::size_of::<skg_index::QueryEmbedding>()
            + floats * std::mem::size_of::<f32>()) as u64
    }

    /// What an entry holds: its key, the embedding's header and its floats.
    fn bytes(v: &skg_index::QueryEmbedding) -> u64 {
        let dim = v.vector.len().max(1);
        Self::bytes_for(dim, v.tokens.len() / dim)
    }
}

impl quick_cache::Weighter<blake3::Hash, Arc<skg_index::QueryEmbedding>> for QueryWeight {
    fn weight(&self, _: &blake3::Hash, v: &Arc<skg_index::QueryEmbedding>) -> u64 {
        Self::bytes(v).max(self.floor)
    }
}

/// The query cache's key: the caller (the key's id; open mode is one caller) and the text.
fn cache_key(access: &Access, model: &str, text: &str) -> blake3::Hash {
    let caller = match access {
        Access::Open => "",
        Access::Key(t) => t.id.as_str(),
    };
    let mut h = blake3::Hasher::new();
    for part in [caller, model] {
        h.update(&(part.len() as u64).to_le_bytes());
        h.update(part.as_bytes());
    }
    h.update(text.as_bytes());
    h.finalize()
}

/// A failed reload: what failed in words without paths (the full error is logged).
fn failed(e: &skg_index::Error, serving: String) -> ReloadOutcome {
    tracing::warn!("reload failed: {e}");
    ReloadOutcome::Failed {
        error: public(e),
        serving,
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, reason = "a panic is the test failure")]
mod tests {
    use super::*;

    fn embedding(tokens: usize, fill: f32) -> Arc<skg_index::QueryEmbedding> {
        Arc::new(skg_index::QueryEmbedding {
            vector: vec![fill; 384],
            tokens: vec![fill; 384 * tokens],
        })
    }

    fn key(i: usize) -> blake3::Hash {
        blake3::hash(&i.to_le_bytes())
    }

    /// Long tasks fill the byte budget before the entry budget: the cache holds what fits in
    /// its bytes, never more (an entry with 64 token states is ~100 KB).
    #[test]
    fn the_query_cache_is_bounded_by_its_bytes() {
        let long = QueryWeight::bytes(&embedding(64, 0.0));
        assert!(long > 64 * 384 * 4, "{long}");
        let budget = 10 * long;
        let cache = QueryWeight::cache(4096, budget, 384).unwrap();
        for i in 0..200 {
            cache.insert(key(i), embedding(64, 0.0));
        }
        assert!(cache.weight() <= budget, "{} > {budget}", cache.weight());
        assert!(
            (1..=10).contains(&cache.len()),
            "{} entries of {long} bytes in {budget}",
            cache.len()
        );
    }

    /// A budget with room for a few long tasks keeps one, on any number of cores: the shards
    /// are as many as leave each room for the heaviest entry (quick_cache's default, four a
    /// core, split 400 KB into shards too small for one ~100 KB entry, which it then refused).
    #[test]
    fn a_long_task_fits_a_small_budget() {
        let long = QueryWeight::bytes(&embedding(64, 0.0));
        let cache = QueryWeight::cache(4096, QueryWeight::ROOM * long, 384).unwrap();
        cache.insert(key(1), embedding(64, 1.0));
        assert!(cache.get(&key(1)).is_some(), "{} entries", cache.len());
    }

    /// Short queries fill the entry budget before the byte budget.
    #[test]
    fn the_query_cache_is_bounded_by_its_entries() {
        let cache = QueryWeight::cache(8, 64 << 20, 384).unwrap();
        for i in 0..200 {
            cache.insert(key(i), embedding(0, 0.0));
        }
        assert!((1..=8).contains(&cache.len()), "{}", cache.len());
        assert!(QueryWeight::cache(0, 1 << 20, 384).is_none());
        assert!(QueryWeight::cache(8, 0, 384).is_none());
    }
}
