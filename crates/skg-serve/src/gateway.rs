//! The gateway's state: the served index (hot-swapped), the query embedder, limits, and the
//! operations the HTTP API and the MCP server share.

use std::{
    path::PathBuf,
    sync::{Arc, Mutex},
    time::{Duration, Instant, SystemTime},
};

use arc_swap::ArcSwap;
use serde::Serialize;
use skg_index::{Index, Mode, Query, adapt::Format};

use crate::{error::ApiError, metrics::Metrics};

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
}

impl Config {
    /// Defaults for `index_dir`.
    pub fn new(index_dir: PathBuf) -> Config {
        Config {
            index_dir,
            admin_token: None,
            max_body_bytes: 64 * 1024,
            timeout: Duration::from_secs(10),
            header_read_timeout: Duration::from_secs(5),
            concurrency: 256,
            compute_slots: std::thread::available_parallelism().map_or(2, usize::from),
            max_k: 50,
            max_query_chars: 4000,
            allowed_origins: Vec::new(),
            degraded: Vec::new(),
            query_cache: 4096,
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
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
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
    query_vectors: Option<quick_cache::sync::Cache<String, Arc<Vec<f32>>>>,
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

/// Common retrieval parameters of find / search / route.
#[derive(Debug, Clone)]
pub(crate) struct Ask {
    pub text: String,
    pub k: usize,
    pub mode: Option<Mode>,
    pub include_quarantined: bool,
    pub min_score: Option<f32>,
}

impl Gateway {
    /// Opens the index folder (refusing an unfinished one) and builds the gateway.
    pub fn open(cfg: Config, embedder: Option<Arc<dyn Embed>>) -> skg_index::Result<Gateway> {
        let index = Index::open(&cfg.index_dir)?;
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
            Ok(_) => match Index::open(&self.cfg.index_dir) {
                Ok(index) => {
                    let to = index.manifest.content_hash.clone();
                    self.metrics.index_loaded(&index);
                    self.current.store(Arc::new(Loaded {
                        index,
                        loaded_at: now(),
                    }));
                    ReloadOutcome::Reloaded { from: serving, to }
                }
                Err(e) => ReloadOutcome::Failed {
                    error: e.to_string(),
                    serving,
                },
            },
            Err(e) => ReloadOutcome::Failed {
                error: e.to_string(),
                serving,
            },
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
    fn query_vector(
        &self,
        loaded: &Loaded,
        text: &str,
        mode: Option<Mode>,
    ) -> Option<Arc<Vec<f32>>> {
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
                let v = Arc::new(v);
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
    fn check(&self, ask: &Ask) -> Result<(), ApiError> {
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

    fn query<'a>(ask: &'a Ask, vector: Option<&'a [f32]>) -> Query<'a> {
        let mut q = Query::new(&ask.text, vector, ask.k);
        if let Some(m) = ask.mode {
            q.mode = m;
        }
        q.include_quarantined = ask.include_quarantined;
        if let Some(s) = ask.min_score {
            q.min_score = s;
        }
        q
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
            .map_err(|_| ApiError::internal("the gateway is shutting down"))?;
        let me = Arc::clone(self);
        tokio::task::spawn_blocking(move || f(&me))
            .await
            .map_err(|e| ApiError::internal(format!("the request's task failed: {e}")))?
    }

    /// `find`: one result per skill.
    pub(crate) fn find(&self, ask: &Ask) -> Result<serde_json::Value, ApiError> {
        self.check(ask)?;
        let started = Instant::now();
        let loaded = self.current();
        let ix = &loaded.index;
        let vector = self.query_vector(&loaded, &ask.text, ask.mode);
        let answer = ix.search(&Self::query(ask, vector.as_deref().map(Vec::as_slice)))?;
        let results: Vec<serde_json::Value> = answer
            .hits
            .iter()
            .map(|h| {
                let s = &ix.skills[h.skill as usize];
                let d = &ix.docs[h.doc as usize];
                serde_json::json!({
                    "id": s.id, "name": s.name, "description": s.description,
                    "registry": s.registry, "path": s.path,
                    "root_uri": root_uri(s.id.as_str()), "uri": doc_uri(s.id.as_str(), d),
                    "level": u8::from(d.level), "score": h.score, "bm25": h.bm25, "dense": h.dense,
                    "abstract": d.snippet, "quarantined": s.quarantined, "alias_of": s.alias_of,
                })
            })
            .collect();
        Ok(serde_json::json!({
            "query": ask.text,
            "mode": answer.mode,
            "index_revision": ix.manifest.content_hash,
            "degraded": self.degraded(&loaded),
            "results": results,
            "rejected": rejected(ix, &answer),
            "nothing_cleared_the_floor": answer.hits.is_empty(),
            "took_ms": started.elapsed().as_secs_f64() * 1000.0,
        }))
    }

    /// `search`: section hits, several per skill.
    pub(crate) fn search(&self, ask: &Ask) -> Result<serde_json::Value, ApiError> {
        self.check(ask)?;
        let started = Instant::now();
        let loaded = self.current();
        let ix = &loaded.index;
        let vector = self.query_vector(&loaded, &ask.text, ask.mode);
        let (hits, mode) =
            ix.search_sections(&Self::query(ask, vector.as_deref().map(Vec::as_slice)))?;
        let results: Vec<serde_json::Value> = hits
            .iter()
            .map(|h| {
                let s = &ix.skills[h.skill as usize];
                let d = &ix.docs[h.doc as usize];
                serde_json::json!({
                    "id": s.id, "name": s.name, "doc_id": d.id, "level": u8::from(d.level),
                    "file": d.file, "title": d.title, "heading_path": d.heading_path,
                    "lines": [d.line_start, d.line_end],
                    "root_uri": root_uri(s.id.as_str()), "uri": doc_uri(s.id.as_str(), d),
                    "score": h.score, "bm25": h.bm25, "dense": h.dense, "snippet": d.snippet,
                })
            })
            .collect();
        Ok(serde_json::json!({
            "query": ask.text,
            "mode": mode,
            "index_revision": ix.manifest.content_hash,
            "degraded": self.degraded(&loaded),
            "results": results,
            "nothing_cleared_the_floor": results.is_empty(),
            "took_ms": started.elapsed().as_secs_f64() * 1000.0,
        }))
    }

    /// `route`: the bundle, in `format`, optionally with each skill's `SKILL.md`.
    pub(crate) fn route(
        &self,
        ask: &Ask,
        token_budget: Option<u64>,
        format: Format,
        with_content: bool,
    ) -> Result<serde_json::Value, ApiError> {
        self.check(ask)?;
        let started = Instant::now();
        let loaded = self.current();
        let ix = &loaded.index;
        let vector = self.query_vector(&loaded, &ask.text, ask.mode);
        let answer = ix.search(&Self::query(ask, vector.as_deref().map(Vec::as_slice)))?;
        let bundle = skg_index::route(ix, &answer, token_budget);
        let plan: Vec<serde_json::Value> = bundle
            .plan
            .iter()
            .enumerate()
            .map(|(i, b)| {
                let s = &ix.skills[b.skill as usize];
                let mut v = serde_json::json!({
                    "step": i + 1, "id": s.id, "name": s.name, "description": s.description,
                    "root_uri": root_uri(s.id.as_str()), "reason": b.reason, "tokens": b.tokens,
                    "depends_on": s.depends_on,
                });
                if with_content {
                    v["markdown"] = ix.markdown(b.skill).map_or_else(
                        |e| serde_json::Value::String(format!("(unreadable: {e})")),
                        serde_json::Value::String,
                    );
                }
                v
            })
            .collect();
        let mut out = serde_json::json!({
            "task": ask.text,
            "mode": answer.mode,
            "index_revision": ix.manifest.content_hash,
            "degraded": self.degraded(&loaded),
            "format": format.as_str(),
            "plan": plan,
            "cycles": bundle.cycles,
            "type_errors": bundle.type_errors,
            "missing": bundle.missing,
            "tokens": {
                "bundle": bundle.tokens,
                "budget": bundle.token_budget,
                "overrun": bundle.overrun,
                "catalog": bundle.catalog_tokens,
                "reduction": 1.0 - bundle.tokens as f64 / bundle.catalog_tokens.max(1) as f64,
            },
            "rejected": rejected(ix, &answer),
            "nothing_cleared_the_floor": answer.hits.is_empty(),
        });
        if format != Format::Bundle {
            out["tools"] = skg_index::adapt::tools(ix, &bundle, format);
        }
        self.metrics.bundle(bundle.plan.len(), bundle.tokens);
        out["took_ms"] = serde_json::json!(started.elapsed().as_secs_f64() * 1000.0);
        Ok(out)
    }

    /// One skill by id (routable or not), with its `SKILL.md`.
    pub(crate) fn skill(&self, id: &str) -> Result<serde_json::Value, ApiError> {
        let loaded = self.current();
        let ix = &loaded.index;
        let (pos, s) = ix
            .skill(id)
            .ok_or_else(|| ApiError::not_found(format!("no skill with id {id:?} in this index")))?;
        let mut v = serde_json::to_value(s).map_err(|e| ApiError::internal(e.to_string()))?;
        v["routable"] = s.routable().into();
        v["root_uri"] = root_uri(s.id.as_str()).into();
        v["index_revision"] = ix.manifest.content_hash.clone().into();
        v["markdown"] = ix.markdown(pos)?.into();
        Ok(v)
    }
}

fn rejected(ix: &Index, answer: &skg_index::Answer) -> Vec<serde_json::Value> {
    answer
        .rejected
        .iter()
        .map(|h| serde_json::json!({"id": ix.skills[h.skill as usize].id, "score": h.score}))
        .collect()
}

/// `skg://skills/<id>`: the skill.
pub(crate) fn root_uri(id: &str) -> String {
    format!("skg://skills/{id}")
}

/// The hit's uri: the abstract, the overview, or a file's line range.
fn doc_uri(id: &str, d: &skg_index::DocEntry) -> String {
    match d.level {
        skg_model::Level::L0 => format!("skg://skills/{id}/.abstract"),
        skg_model::Level::L1 => format!("skg://skills/{id}/.overview"),
        skg_model::Level::L2 => format!(
            "skg://skills/{id}/{}#L{}-L{}",
            d.file, d.line_start, d.line_end
        ),
    }
}
