//! The gateway's state: the served index (hot-swapped), the query embedder, limits, and the
//! operations the HTTP API and the MCP server share.

use std::{
    path::PathBuf,
    sync::{Arc, Mutex},
    time::{Duration, Instant, SystemTime},
};

use arc_swap::ArcSwap;
use serde::Serialize;
use skg_index::Index;

use crate::{
    error::{ApiError, ErrorCode, public},
    metrics::Metrics,
    wire::{
        self, Ask, FindRequest, FindResponse, HealthIndex, HealthResponse, HealthSource, Mode,
        RouteRequest, RouteResponse, SearchResponse, Served, SkillResponse,
    },
};

/// Query embedding (the binary plugs skg-embed in).
pub trait Embed: Send + Sync + std::fmt::Debug + 'static {
    /// The model id (compared with the index's).
    fn model(&self) -> &str;
    /// One L2-normalized vector for `text`.
    fn embed(&self, text: &str) -> Result<Vec<f32>, String>;
}

/// Gateway settings.
#[derive(Debug, Clone)]
pub struct Config {
    /// The index folder served.
    pub index_dir: PathBuf,
    /// Token that `POST /admin/reload` requires (`Authorization: Bearer …`); `None` disables it.
    pub admin_token: Option<String>,
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
    /// Dense retrieval through a nearest-neighbour graph when the index has at least this many
    /// dense rows (`None`: always the exact scan); see `skg_index::ann`.
    pub ann_min_rows: Option<usize>,
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

    /// Retrieval computations at once: the core count.
    pub fn compute_slots() -> usize {
        std::thread::available_parallelism().map_or(2, usize::from)
    }
}

impl Config {
    /// Defaults for `index_dir`.
    pub fn new(index_dir: PathBuf) -> Config {
        Config {
            index_dir,
            admin_token: None,
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
            ann_min_rows: Some(skg_index::ann::DEFAULT_MIN_ROWS),
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
    embedder: Option<Arc<dyn Embed>>,
    query_vectors: Option<quick_cache::sync::Cache<String, Arc<[f32]>>>,
    reload_lock: tokio::sync::Mutex<()>,
    last_reload_error: Mutex<Option<String>>,
    pub(crate) compute: tokio::sync::Semaphore,
    pub(crate) metrics: Metrics,
    pub(crate) started: Instant,
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
    vector: Option<Arc<[f32]>>,
    started: Instant,
}

impl Prepared {
    fn vector(&self) -> Option<&[f32]> {
        self.vector.as_deref()
    }

    fn took_ms(&self) -> f64 {
        self.started.elapsed().as_secs_f64() * 1000.0
    }
}

/// The index folder, with the nearest-neighbour graph when it is large enough.
fn open_index(cfg: &Config) -> skg_index::Result<Index> {
    let mut index = Index::open(&cfg.index_dir)?;
    if let Some(min_rows) = cfg.ann_min_rows {
        let started = Instant::now();
        if index.use_ann(min_rows, skg_index::ann::AnnOptions::default())? {
            tracing::info!(
                rows = index.vector_rows(),
                seconds = started.elapsed().as_secs_f64(),
                "nearest-neighbour graph built"
            );
        }
    }
    Ok(index)
}

impl Gateway {
    /// Opens the index folder (refusing an unfinished one) and builds the gateway.
    pub fn open(cfg: Config, embedder: Option<Arc<dyn Embed>>) -> skg_index::Result<Gateway> {
        let index = open_index(&cfg)?;
        let metrics = Metrics::new();
        metrics.index_loaded(&index);
        let cfg_query_cache = cfg.query_cache;
        Ok(Gateway {
            compute: tokio::sync::Semaphore::new(cfg.compute_slots.max(1)),
            cfg,
            current: ArcSwap::from_pointee(Loaded {
                index,
                loaded_at: now(),
            }),
            embedder,
            query_vectors: (cfg_query_cache > 0)
                .then(|| quick_cache::sync::Cache::new(cfg_query_cache)),
            reload_lock: tokio::sync::Mutex::new(()),
            last_reload_error: Mutex::new(None),
            metrics,
            started: Instant::now(),
        })
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
    /// (reads the folder): call from a blocking thread.
    pub fn reload_blocking(&self) -> ReloadOutcome {
        let serving = self.current().index.manifest.content_hash.clone();
        let outcome = match skg_index::read_manifest(&self.cfg.index_dir) {
            Ok(m) if m.content_hash == serving => ReloadOutcome::Fresh { revision: serving },
            Ok(_) => match open_index(&self.cfg) {
                Ok(index) => {
                    let to = index.manifest.content_hash.clone();
                    self.metrics.index_loaded(&index);
                    self.current.store(Arc::new(Loaded {
                        index,
                        loaded_at: now(),
                    }));
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

    /// [`Gateway::reload_blocking`] from async code; concurrent reloads run one at a time.
    pub async fn reload(self: &Arc<Self>) -> ReloadOutcome {
        let _guard = self.reload_lock.lock().await;
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
        match (&self.embedder, index_model) {
            (_, None) => {
                out.push("the index has no vectors (built with --no-embeddings): BM25 only".into());
            }
            (None, Some(_)) if out.is_empty() => {
                out.push("no embedding model loaded: BM25 only".into());
            }
            (Some(e), Some(m)) if e.model() != m => out.push(format!(
                "the index was embedded with {m}, the gateway's model is {}: BM25 only",
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
        out
    }

    /// The query vector, when hybrid retrieval is possible for this index.
    fn query_vector(&self, loaded: &Loaded, text: &str, mode: Option<Mode>) -> Option<Arc<[f32]>> {
        if mode == Some(Mode::Bm25) {
            return None;
        }
        let e = self.embedder.as_ref()?;
        if loaded.index.manifest.model.as_deref() != Some(e.model()) {
            return None;
        }
        if let Some(v) = self.query_vectors.as_ref().and_then(|c| c.get(text)) {
            self.metrics.query_cache(true);
            return Some(v);
        }
        match e.embed(text) {
            Ok(v) => {
                let v: Arc<[f32]> = v.into();
                if let Some(c) = &self.query_vectors {
                    self.metrics.query_cache(false);
                    c.insert(text.to_owned(), Arc::clone(&v));
                }
                Some(v)
            }
            Err(err) => {
                tracing::warn!("query embedding failed, BM25 only: {err}");
                None
            }
        }
    }

    /// Refuses empty or too long texts, `k` out of range and a non-finite floor (422); every
    /// retrieval operation starts with it, whoever calls.
    fn check(&self, ask: &Ask<'_>) -> Result<(), ApiError> {
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
        if ask.k == 0 || ask.k > self.cfg.max_k {
            return Err(ApiError::invalid(format!(
                "k must be between 1 and {}, got {}",
                self.cfg.max_k, ask.k
            )));
        }
        if ask.min_score.is_some_and(|s| !s.is_finite()) {
            return Err(ApiError::invalid("min_score must be a finite number"));
        }
        Ok(())
    }

    /// Checks the request, takes the current index and ranks skills, the query embedded on a
    /// second thread while BM25 runs (`find` and `route`: latency is the longer of the two).
    fn answer(&self, ask: &Ask<'_>) -> Result<(Prepared, skg_index::Answer), ApiError> {
        self.check(ask)?;
        let started = Instant::now();
        let loaded = self.current();
        let mut q = ask.query(None);
        q.mode = ask.mode.unwrap_or(Mode::Hybrid);
        let (answer, vector) = loaded
            .index
            .search_embedding(&q, || self.query_vector(&loaded, ask.text, ask.mode))?;
        let prepared = Prepared {
            loaded,
            vector,
            started,
        };
        Ok((prepared, answer))
    }

    /// Checks the request, takes the current index and the query vector.
    fn prepare(&self, ask: &Ask<'_>) -> Result<Prepared, ApiError> {
        self.check(ask)?;
        let started = Instant::now();
        let loaded = self.current();
        let vector = self.query_vector(&loaded, ask.text, ask.mode);
        Ok(Prepared {
            loaded,
            vector,
            started,
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
        let _permit = self
            .compute
            .acquire()
            .await
            .map_err(|e| ApiError::internal("the gateway is shutting down", e))?;
        let me = Arc::clone(self);
        tokio::task::spawn_blocking(move || f(&me))
            .await
            .map_err(|e| ApiError::internal("the request's task failed", e))?
    }

    /// `find`: one result per skill.
    pub(crate) fn find(&self, req: &FindRequest) -> Result<FindResponse, ApiError> {
        let ask = req.ask();
        let (p, answer) = self.answer(&ask)?;
        let ix = &p.loaded.index;
        let mut out = wire::find(ix, ask.text, &answer, self.served(&p.loaded, answer.mode));
        out.took_ms = p.took_ms();
        Ok(out)
    }

    /// `search`: section hits, several per skill.
    pub(crate) fn search(&self, req: &FindRequest) -> Result<SearchResponse, ApiError> {
        let ask = req.ask();
        let p = self.prepare(&ask)?;
        let ix = &p.loaded.index;
        let (hits, mode) = ix.search_sections(&ask.query(p.vector()))?;
        let mut out = wire::search(ix, ask.text, &hits, self.served(&p.loaded, mode));
        out.took_ms = p.took_ms();
        Ok(out)
    }

    /// `route`: the bundle, with tools in the asked format and, with `include_content`, each
    /// skill's `SKILL.md`.
    pub(crate) fn route(&self, req: &RouteRequest) -> Result<RouteResponse, ApiError> {
        let ask = req.ask();
        let (p, answer) = self.answer(&ask)?;
        let ix = &p.loaded.index;
        let bundle = skg_index::route(ix, &answer, req.token_budget);
        let mut out = wire::route(
            ix,
            req,
            &answer,
            &bundle,
            self.served(&p.loaded, answer.mode),
        )?;
        self.metrics.bundle(bundle.plan.len(), bundle.tokens);
        out.took_ms = p.took_ms();
        Ok(out)
    }

    /// One skill by id (routable or not), with its `SKILL.md` — except an unsafe one, whose text
    /// is withheld (403 `unsafe_skill`).
    pub(crate) fn skill(&self, id: &str) -> Result<SkillResponse, ApiError> {
        let loaded = self.current();
        let ix = &loaded.index;
        let (pos, entry) = ix
            .skill(id)
            .ok_or_else(|| ApiError::not_found(format!("no skill with id {id:?} in this index")))?;
        if entry.r#unsafe {
            return Err(ApiError::new(
                ErrorCode::UnsafeSkill,
                format!("skill {id:?} is withheld: the security scan found it unsafe (`skg scan`)"),
            ));
        }
        Ok(wire::skill(ix, pos)?)
    }

    /// `/health`: the served index and why answers are degraded.
    pub fn health(&self) -> HealthResponse {
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
                dir: self.cfg.index_dir.display().to_string(),
                revision: m.content_hash.clone(),
                format: m.format,
                tool: m.tool.clone(),
                counts: m.counts.clone(),
                model: m.model.clone(),
                dim: m.dim,
                loaded_at: loaded.loaded_at,
                sources: m
                    .sources
                    .iter()
                    .map(|s| HealthSource {
                        name: s.name.to_string(),
                        rev: s.rev.clone(),
                        content_hash: s.content_hash.clone(),
                        skills: s.skills,
                    })
                    .collect(),
            },
            uptime_seconds: self.started.elapsed().as_secs(),
            version: env!("CARGO_PKG_VERSION").to_owned(),
        }
    }
}

/// A failed reload: what failed in words without paths (the full error is logged).
fn failed(e: &skg_index::Error, serving: String) -> ReloadOutcome {
    tracing::warn!("reload failed: {e}");
    ReloadOutcome::Failed {
        error: public(e),
        serving,
    }
}
