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

use crate::{DIM, Embedder, EmbeddingCache, Error, ModelDir, ModelFiles, Result};

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
    /// Embedded now.
    pub embedded: usize,
    /// Found in the cache.
    pub from_cache: usize,
    /// Time spent embedding.
    pub embed_seconds: f64,
    /// Embedded texts per second.
    pub texts_per_second: f64,
}

/// Vectors for texts, with the cache that holds exactly them (for the caller to publish with
/// its output) and what it took.
#[derive(Debug)]
pub struct Embedded {
    /// One vector per text, in order.
    pub vectors: Vec<Vec<f32>>,
    /// The cache, reduced to these texts.
    pub cache: EmbeddingCache,
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
    let identity = files.identity();
    let mut cache = read_cache(own, &identity);
    for path in also {
        let other = read_cache_strict(path, &identity).map_err(|source| Error::Cache {
            path: path.to_path_buf(),
            identity: identity.clone(),
            source,
        })?;
        cache.absorb(other);
    }
    let unique: BTreeSet<&str> = texts.iter().map(String::as_str).collect();
    // Longest first: the sessions take texts in turn, and the last ones taken are short, so
    // the sessions finish together.
    let mut misses: Vec<&str> = unique
        .iter()
        .copied()
        .filter(|t| cache.get(t).is_none())
        .collect();
    misses.sort_by_key(|t| (std::cmp::Reverse(t.len()), *t));
    let started = Instant::now();
    if !misses.is_empty() {
        let pool = Pool::from_files(files, threads.clamp(1, misses.len()))?;
        progress.phase("embed texts", misses.len() as u64);
        for (t, v) in misses.iter().zip(embed_shared(&pool, &misses, progress)?) {
            cache.insert(t, v);
        }
    }
    let embed_seconds = started.elapsed().as_secs_f64();
    let vectors = texts
        .iter()
        .map(|t| cache.get(t).map(<[f32]>::to_vec))
        .collect::<Option<Vec<_>>>()
        .ok_or_else(|| Error::Model("the model returned no vector for some texts".into()))?;
    cache.retain_texts(texts.iter().map(String::as_str));
    let stats = EmbeddingStats {
        model: identity,
        texts: texts.len(),
        unique_texts: unique.len(),
        embedded: misses.len(),
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
        stats,
    })
}

/// Vectors of `texts` in order: one worker per session of `pool`, each taking the next text
/// as it becomes free.
fn embed_shared(pool: &Pool, texts: &[&str], progress: &dyn Progress) -> Result<Vec<Vec<f32>>> {
    let next = AtomicUsize::new(0);
    let done = AtomicUsize::new(0);
    let results = std::thread::scope(|s| {
        let workers: Vec<_> = (0..pool.slots.len())
            .map(|_| {
                let (next, done) = (&next, &done);
                s.spawn(move || -> Result<Vec<(usize, Vec<f32>)>> {
                    let mut out = Vec::new();
                    loop {
                        let i = next.fetch_add(1, Ordering::Relaxed);
                        let Some(text) = texts.get(i) else {
                            return Ok(out);
                        };
                        out.push((i, pool.embed(text)?));
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
    let mut vectors: Vec<Option<Vec<f32>>> = vec![None; texts.len()];
    for (i, v) in results.into_iter().flatten() {
        vectors[i] = Some(v);
    }
    vectors
        .into_iter()
        .collect::<Option<Vec<_>>>()
        .ok_or_else(|| Error::Model("the model returned no vector for some texts".into()))
}

/// A few single-threaded sessions for one text at a time, used by whichever caller finds one
/// free (a gateway runs retrieval on a bounded number of threads anyway).
pub struct Pool {
    slots: Vec<Mutex<Embedder>>,
    next: AtomicUsize,
    identity: String,
}

impl std::fmt::Debug for Pool {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Pool")
            .field("slots", &self.slots.len())
            .finish_non_exhaustive()
    }
}

impl Pool {
    /// `sessions` sessions (at least one) of the model in `dir`.
    pub fn load(dir: &ModelDir, sessions: usize) -> Result<Pool> {
        Pool::from_files(&dir.read_files()?, sessions)
    }

    /// `sessions` sessions (at least one) of the model `files` (read once for all of them).
    pub fn from_files(files: &ModelFiles, sessions: usize) -> Result<Pool> {
        let slots = (0..sessions.max(1))
            .map(|_| Embedder::from_files(files, 1).map(Mutex::new))
            .collect::<Result<Vec<_>>>()?;
        Ok(Pool {
            slots,
            next: AtomicUsize::new(0),
            identity: files.identity(),
        })
    }

    /// The [identity](crate::identity()) of the vectors it makes.
    pub fn identity(&self) -> &str {
        &self.identity
    }

    /// The vector of one text: on a free session, else waiting for the next in turn.
    pub fn embed(&self, text: &str) -> Result<Vec<f32>> {
        let n = self.slots.len();
        let start = self.next.fetch_add(1, Ordering::Relaxed) % n;
        let run = |e: &mut Embedder| {
            e.embed(&[text])?
                .pop()
                .ok_or_else(|| Error::Model("the model returned no vector".into()))
        };
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
