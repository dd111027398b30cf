//! Embedding many texts through a persistent cache, and a pool of sessions for one text at a
//! time (a gateway's queries).

use std::{
    collections::BTreeSet,
    path::Path,
    sync::{
        Mutex, PoisonError,
        atomic::{AtomicUsize, Ordering},
    },
    time::Instant,
};

use serde::Serialize;
use skg_model::Progress;

use crate::{
    CodedTokens, DIM, Embedder, EmbeddingCache, Error, ModelDir, ModelFiles, Result,
    TOKEN_CACHE_FILE, TokenCache,
};

/// Texts per progress step.
const CHUNK: usize = 256;

/// What an embedding run did.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct EmbeddingStats {
    /// The model's [identity](crate::identity()).
    pub model: String,
    /// Texts asked for.
    pub texts: usize,
    /// Distinct texts among them.
    pub unique_texts: usize,
    /// Embedded now (for its vector, its token states, or both).
    pub embedded: usize,
    /// Texts whose token states were asked for.
    pub token_texts: usize,
    /// Found in the cache.
    pub from_cache: usize,
    /// Time spent embedding.
    pub embed_seconds: f64,
    /// Embedded texts per second.
    pub texts_per_second: f64,
}

/// Vectors for texts (and token states for some), with the caches that hold exactly them (for
/// the caller to publish with its output) and what it took.
#[derive(Debug)]
pub struct Embedded {
    /// One vector per text, in order.
    pub vectors: Vec<Vec<f32>>,
    /// The cache, reduced to these texts.
    pub cache: EmbeddingCache,
    /// The token cache, reduced to the texts asked for token states ([`embed_with_caches`]),
    /// every one of which it holds: write its file ([`TokenCache::write_to`]), then
    /// [`TokenCache::into_states`] hands over the texts' states in order without a second copy
    /// of the codes.
    pub token_cache: TokenCache,
    /// Counts and timing.
    pub stats: EmbeddingStats,
}

/// The cache file at `path` for vectors of the model [identity](crate::identity()) `identity`,
/// or an empty one (an unreadable file, or one written by another model, is logged and ignored:
/// it is a cache).
fn read_cache(path: &Path, identity: &str) -> EmbeddingCache {
    match std::fs::read(path) {
        Ok(bytes) => EmbeddingCache::from_bytes(&bytes, identity).unwrap_or_else(|e| {
            match e {
                // Expected after a model change: everything is embedded again.
                crate::CacheError::OtherModel { .. } => {
                    tracing::info!(path = %path.display(), "embedding cache not used: {e}");
                }
                crate::CacheError::Corrupt(_) | crate::CacheError::Unreadable(_) => {
                    tracing::warn!(path = %path.display(), "embedding cache not used: {e}");
                }
            }
            EmbeddingCache::new(identity, DIM)
        }),
        Err(_) => EmbeddingCache::new(identity, DIM),
    }
}

/// The cache file at `path` for vectors of the model [identity](crate::identity()) `identity`,
/// strictly: for a cache the caller named, where ignoring a bad one would silently make a cold
/// run.
pub(crate) fn read_cache_strict(
    path: &Path,
    identity: &str,
) -> std::result::Result<EmbeddingCache, crate::CacheError> {
    EmbeddingCache::from_bytes(&std::fs::read(path)?, identity)
}

/// A vector for every text by the model `files`: from the cache file `own` (the output's own: a
/// missing, damaged or other model's file adds nothing) and the caches `also` names (each must be
/// this model's: an error otherwise) where they hold one for this model's
/// [identity](crate::identity()), else from the model (loaded only
/// when something is missing, as `threads` single-threaded sessions that share the texts out).
/// Each text is its own inference call, so a vector never depends on which other texts were
/// missing.
pub fn embed_with_cache(
    files: &ModelFiles,
    texts: &[String],
    own: &Path,
    also: &[&Path],
    threads: usize,
    progress: &dyn Progress,
) -> Result<Embedded> {
    embed_with_caches(files, texts, &[], own, also, threads, progress)
}

/// [`embed_with_cache`], and the token states ([`CodedTokens`]) of `token_texts` too: from the
/// token cache beside each embedding cache ([`TOKEN_CACHE_FILE`] in the same folder; read
/// leniently — a missing or damaged one adds nothing), else from the inference call that makes
/// the text's vector (a text whose vector is cached but whose states are not is embedded again).
pub fn embed_with_caches(
    files: &ModelFiles,
    texts: &[String],
    token_texts: &[String],
    own: &Path,
    also: &[&Path],
    threads: usize,
    progress: &dyn Progress,
) -> Result<Embedded> {
    let identity = files.identity();
    let mut cache = read_cache(own, &identity);
    // The token cache is read only when token states are asked for.
    let mut token_cache = if token_texts.is_empty() {
        TokenCache::new(&identity)
    } else {
        read_token_cache(&own.with_file_name(TOKEN_CACHE_FILE), &identity)
    };
    for path in also {
        let other = read_cache_strict(path, &identity).map_err(|source| Error::Cache {
            path: path.to_path_buf(),
            identity: identity.clone(),
            source,
        })?;
        cache.absorb(other);
        if !token_texts.is_empty() {
            let beside = read_token_cache(&path.with_file_name(TOKEN_CACHE_FILE), &identity);
            token_cache.absorb(beside);
        }
    }
    let wants_tokens: BTreeSet<&str> = token_texts.iter().map(String::as_str).collect();
    let unique: BTreeSet<&str> = texts
        .iter()
        .map(String::as_str)
        .chain(wants_tokens.iter().copied())
        .collect();
    // Longest first: the sessions take texts in turn, and the last ones taken are short, so
    // the sessions finish together.
    let mut misses: Vec<&str> = unique
        .iter()
        .copied()
        .filter(|t| {
            cache.get(t).is_none() || (wants_tokens.contains(t) && token_cache.get(t).is_none())
        })
        .collect();
    misses.sort_by_key(|t| (std::cmp::Reverse(t.len()), *t));
    let started = Instant::now();
    if !misses.is_empty() {
        // Many texts: single-threaded sessions only (no solo session; nothing runs alone).
        let pool = Pool::with_solo(files, threads.clamp(1, misses.len()), 1)?;
        progress.phase("embed texts", misses.len() as u64);
        for (t, (v, tokens)) in
            misses
                .iter()
                .zip(embed_shared(&pool, &misses, &wants_tokens, progress)?)
        {
            cache.insert(t, v);
            if let Some(codes) = tokens {
                token_cache.insert(t, codes);
            }
        }
    }
    let embed_seconds = started.elapsed().as_secs_f64();
    let vectors = texts
        .iter()
        .map(|t| cache.get(t).map(<[f32]>::to_vec))
        .collect::<Option<Vec<_>>>()
        .ok_or_else(|| Error::Model("the model returned no vector for some texts".into()))?;
    if token_texts.iter().any(|t| token_cache.get(t).is_none()) {
        return Err(Error::Model(
            "the model returned no token states for some texts".into(),
        ));
    }
    cache.retain_texts(texts.iter().map(String::as_str));
    token_cache.retain_texts(token_texts.iter().map(String::as_str));
    let stats = EmbeddingStats {
        model: identity,
        texts: texts.len(),
        unique_texts: unique.len(),
        embedded: misses.len(),
        token_texts: wants_tokens.len(),
        from_cache: unique.len() - misses.len(),
        embed_seconds,
        texts_per_second: if embed_seconds > 0.0 {
            misses.len() as f64 / embed_seconds
        } else {
            0.0
        },
    };
    Ok(Embedded {
        vectors,
        cache,
        token_cache,
        stats,
    })
}

/// The token cache file at `path`, or an empty one (a missing, damaged or other model's file is
/// a cold start for token states: logged, never an error).
fn read_token_cache(path: &Path, identity: &str) -> TokenCache {
    match std::fs::File::open(path) {
        Ok(file) => {
            TokenCache::read_from(std::io::BufReader::with_capacity(1 << 20, file), identity)
                .unwrap_or_else(|e| {
                    tracing::info!(path = %path.display(), "token cache not used: {e}");
                    TokenCache::new(identity)
                })
        }
        Err(_) => TokenCache::new(identity),
    }
}

/// A text's vector, and its token states' codes when they were asked for (coded where they are
/// made: a build holds a card's codes, not its floats).
type Outcome = (Vec<f32>, Option<CodedTokens>);

/// Vectors of `texts` in order: one worker per session of `pool`, each taking the next text
/// as it becomes free.
fn embed_shared(
    pool: &Pool,
    texts: &[&str],
    wants_tokens: &BTreeSet<&str>,
    progress: &dyn Progress,
) -> Result<Vec<Outcome>> {
    let next = AtomicUsize::new(0);
    let done = AtomicUsize::new(0);
    let results = std::thread::scope(|s| {
        let workers: Vec<_> = (0..pool.slots.len())
            .map(|_| {
                let (next, done) = (&next, &done);
                s.spawn(move || -> Result<Vec<(usize, Outcome)>> {
                    let mut out = Vec::new();
                    loop {
                        let i = next.fetch_add(1, Ordering::Relaxed);
                        let Some(text) = texts.get(i) else {
                            return Ok(out);
                        };
                        let outcome = if wants_tokens.contains(text) {
                            let t = pool.embed_with_tokens(text)?;
                            (t.vector, Some(CodedTokens::code(&t.tokens)))
                        } else {
                            (pool.embed(text)?, None)
                        };
                        out.push((i, outcome));
                        if (done.fetch_add(1, Ordering::Relaxed) + 1) % CHUNK == 0 {
                            progress.advance(CHUNK as u64);
                        }
                    }
                })
            })
            .collect();
        workers
            .into_iter()
            .map(|w| {
                w.join()
                    .unwrap_or_else(|_| Err(Error::Model("an embedding thread panicked".into())))
            })
            .collect::<Result<Vec<_>>>()
    })?;
    progress.advance((texts.len() % CHUNK) as u64);
    let mut vectors: Vec<Option<Outcome>> = vec![None; texts.len()];
    for (i, v) in results.into_iter().flatten() {
        vectors[i] = Some(v);
    }
    vectors
        .into_iter()
        .collect::<Option<Vec<_>>>()
        .ok_or_else(|| Error::Model("the model returned no vector for some texts".into()))
}

/// A few single-threaded sessions for one text at a time, used by whichever caller finds one
/// free (a gateway runs retrieval on a bounded number of threads anyway), and one *solo* session
/// on several threads for a text the caller knows is the only work running
/// ([`Pool::embed_alone`]).
///
/// One request at a time, a single-threaded session leaves the other cores idle: on two cores
/// the query embedding takes ~1.3× as long on one thread as on two (route bench, "query
/// embedding" and "query embedding, 1 thread"). Under load the single-threaded sessions are the
/// faster choice: a session on two threads beside other requests' work waits on a core the
/// others hold. Both kinds of session give the same vector bit for bit
/// (`solo_and_single_threaded_sessions_agree`), so an answer never depends on the load it
/// arrived in.
pub struct Pool {
    slots: Vec<Mutex<Embedder>>,
    solo: Option<Mutex<Embedder>>,
    next: AtomicUsize,
    solo_runs: AtomicUsize,
    identity: String,
}

impl std::fmt::Debug for Pool {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Pool")
            .field("slots", &self.slots.len())
            .field("solo", &self.solo.is_some())
            .finish_non_exhaustive()
    }
}

impl Pool {
    /// `sessions` sessions (at least one) of the model in `dir`, and a solo session on as many
    /// threads as there are sessions, at most one per core, when that is more than one (a
    /// caller that allows one text at a time gets no second thread).
    pub fn load(dir: &ModelDir, sessions: usize) -> Result<Pool> {
        Pool::from_files(&dir.read_files()?, sessions)
    }

    /// [`Pool::load`] from files already read (once for all the sessions).
    pub fn from_files(files: &ModelFiles, sessions: usize) -> Result<Pool> {
        let cores = std::thread::available_parallelism().map_or(1, usize::from);
        Pool::with_solo(files, sessions, sessions.min(cores))
    }

    /// `sessions` single-threaded sessions (at least one) and, when `solo_threads` > 1, a solo
    /// session on that many threads.
    pub fn with_solo(files: &ModelFiles, sessions: usize, solo_threads: usize) -> Result<Pool> {
        let slots = (0..sessions.max(1))
            .map(|_| Embedder::from_files(files, 1).map(Mutex::new))
            .collect::<Result<Vec<_>>>()?;
        let solo = (solo_threads > 1)
            .then(|| Embedder::from_files(files, solo_threads).map(Mutex::new))
            .transpose()?;
        Ok(Pool {
            slots,
            solo,
            next: AtomicUsize::new(0),
            solo_runs: AtomicUsize::new(0),
            identity: files.identity(),
        })
    }

    /// The [identity](crate::identity()) of the vectors it makes.
    pub fn identity(&self) -> &str {
        &self.identity
    }

    /// How many texts the solo session embedded.
    pub fn solo_runs(&self) -> usize {
        self.solo_runs.load(Ordering::Relaxed)
    }

    /// The vector of one text on the solo session, for a caller that knows nothing else is
    /// running; as [`Pool::embed`] when there is no solo session or it is taken.
    pub fn embed_alone(&self, text: &str) -> Result<Vec<f32>> {
        self.alone(|e| one(e, text))
    }

    /// The vector of one text: on a free single-threaded session, else waiting for the next in
    /// turn.
    pub fn embed(&self, text: &str) -> Result<Vec<f32>> {
        self.shared(|e| one(e, text))
    }

    /// [`Pool::embed_alone`] with the text's token states ([`Embedder::embed_with_tokens`]).
    pub fn embed_alone_with_tokens(&self, text: &str) -> Result<crate::TokenEmbedding> {
        self.alone(|e| e.embed_with_tokens(text))
    }

    /// [`Pool::embed`] with the text's token states ([`Embedder::embed_with_tokens`]).
    pub fn embed_with_tokens(&self, text: &str) -> Result<crate::TokenEmbedding> {
        self.shared(|e| e.embed_with_tokens(text))
    }

    /// `run` on the solo session when it is free, else as [`Pool::shared`].
    fn alone<T>(&self, run: impl FnOnce(&mut Embedder) -> Result<T>) -> Result<T> {
        if let Some(solo) = &self.solo
            && let Ok(mut e) = solo.try_lock()
        {
            self.solo_runs.fetch_add(1, Ordering::Relaxed);
            return run(&mut e);
        }
        self.shared(run)
    }

    /// `run` on a free single-threaded session, else on the next in turn once it is free.
    fn shared<T>(&self, run: impl FnOnce(&mut Embedder) -> Result<T>) -> Result<T> {
        let n = self.slots.len();
        let start = self.next.fetch_add(1, Ordering::Relaxed) % n;
        for i in 0..n {
            if let Ok(mut e) = self.slots[(start + i) % n].try_lock() {
                return run(&mut e);
            }
        }
        let mut e = self.slots[start]
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        run(&mut e)
    }
}

fn one(e: &mut Embedder, text: &str) -> Result<Vec<f32>> {
    e.embed(&[text])?
        .pop()
        .ok_or_else(|| Error::Model("the model returned no vector".into()))
}
