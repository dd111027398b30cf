//! Approximate nearest neighbours over the dense rows: an HNSW graph (instant-distance) for
//! indexes large enough that the exact scan dominates a query.
//!
//! The graph only *proposes* skills: every proposed skill (and every lexical candidate) is then
//! scored exactly over all of its rows, so a skill's dense score is the same with or without the
//! graph; what the graph can change is which skills are proposed. Built on one thread with a fixed
//! seed, the graph — and so every answer — is the same on every open of the same index.

use std::path::Path;

use instant_distance::{Builder, HnswMap, Point, Search};
use serde::{Deserialize, Serialize};

/// Indexes with at least this many dense rows get the graph when the caller asks for it by size
/// ([`crate::Index::use_ann`]); below it the exact scan costs a few milliseconds at most.
pub const DEFAULT_MIN_ROWS: usize = 50_000;

/// How the graph is built and searched.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct AnnOptions {
    /// Candidates kept while inserting (HNSW `efConstruction`): higher builds slower, finds more.
    pub ef_construction: usize,
    /// Rows a query visits and returns (HNSW `ef`): the proposal pool before rows are folded
    /// into skills. The default, 256, is the smallest width measured to reach recall@10 ≥ 0.98
    /// against the exact scan at 200,000 rows (0.991; 128 gave 0.971): with two rows per skill
    /// and a fusion pool of 50 skills, the graph must return well over 100 rows.
    pub ef_search: usize,
    /// Seed of the layer assignment.
    pub seed: u64,
}

impl Default for AnnOptions {
    fn default() -> AnnOptions {
        AnnOptions {
            ef_construction: 100,
            ef_search: 256,
            seed: 42,
        }
    }
}

/// The file in an index folder that keeps the graph between opens: a cache (the graph is a
/// function of the folder's content and the options), written by whoever built it and left out
/// of the content hash. Building the graph of 200,000 rows takes ~17 minutes on two cores;
/// loading it, seconds.
pub const CACHE_FILE: &str = "ann.cache";

/// Format of [`CACHE_FILE`]; another is rebuilt.
const CACHE_FORMAT: u32 = 1;

/// What [`CACHE_FILE`] starts with: whose graph it is. The graph follows it.
#[derive(Debug, Serialize, Deserialize, PartialEq)]
struct CacheHeader {
    format: u32,
    /// The index's content hash.
    index: String,
    rows: u64,
    dim: u64,
    ef_construction: u64,
    ef_search: u64,
    seed: u64,
}

impl CacheHeader {
    fn new(index: &str, rows: usize, dim: usize, options: AnnOptions) -> CacheHeader {
        CacheHeader {
            format: CACHE_FORMAT,
            index: index.to_owned(),
            rows: rows as u64,
            dim: dim as u64,
            ef_construction: options.ef_construction as u64,
            ef_search: options.ef_search as u64,
            seed: options.seed,
        }
    }
}

/// The header of the cache file at `path` and its length in bytes, read from the file's first
/// bytes only; `Ok(None)` when there is no file.
///
/// # Errors
/// The file cannot be read, or does not start with a header.
fn read_header(path: &Path) -> crate::Result<Option<(CacheHeader, usize)>> {
    use std::io::Read;
    let file = match std::fs::File::open(path) {
        Ok(f) => f,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(crate::Error::io(path, e)),
    };
    // A header is a few varints and one 64-character hash: far below this.
    let mut head = Vec::with_capacity(HEADER_MAX_BYTES);
    file.take(HEADER_MAX_BYTES as u64)
        .read_to_end(&mut head)
        .map_err(|e| crate::Error::io(path, e))?;
    let (header, rest) =
        postcard::take_from_bytes::<CacheHeader>(&head).map_err(|e| corrupt(path, &e))?;
    Ok(Some((header, head.len() - rest.len())))
}

/// A cache file that does not decode.
fn corrupt(path: &Path, e: &postcard::Error) -> crate::Error {
    crate::Error::Corrupt {
        path: path.to_path_buf(),
        message: format!("nearest-neighbour graph cache: {e}"),
    }
}

/// The most bytes [`read_header`] reads.
const HEADER_MAX_BYTES: usize = 4096;

/// Whether the cache file at `path` holds a graph of the index whose content hash is `index`
/// (with whatever options it was built): such a file may be carried into a rebuilt folder with
/// the same content, where [`Ann::load`] still checks the options. A missing, unreadable or
/// foreign file is not.
pub fn cache_is_of(path: &Path, index: &str) -> bool {
    matches!(read_header(path), Ok(Some((h, _))) if h.format == CACHE_FORMAT && h.index == index)
}

/// Where a graph came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum AnnSource {
    /// Built now (and, when the folder allowed it, saved to [`CACHE_FILE`]).
    Built,
    /// Read from [`CACHE_FILE`].
    Cached,
}

/// One dense row as the graph stores it (unit length: cosine distance = 1 − dot).
#[derive(Debug, Clone, Serialize, Deserialize)]
struct Row(Box<[f32]>);

impl Point for Row {
    fn distance(&self, other: &Self) -> f32 {
        1.0 - crate::search::dot(&self.0, &other.0)
    }
}

/// The graph over an index's dense rows.
pub struct Ann {
    map: HnswMap<Row, u32>,
    options: AnnOptions,
    source: AnnSource,
}

impl std::fmt::Debug for Ann {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Ann")
            .field("options", &self.options)
            .finish_non_exhaustive()
    }
}

impl Ann {
    /// The graph over `vectors` (rows of `dim` floats), built on one thread so that it is the same
    /// every time.
    ///
    /// # Errors
    /// The build thread cannot be started.
    pub fn build(vectors: &[f32], dim: usize, options: AnnOptions) -> crate::Result<Ann> {
        let points: Vec<Row> = vectors
            .chunks_exact(dim.max(1))
            .map(|r| Row(r.into()))
            .collect();
        let values: Vec<u32> = (0..points.len())
            .map(|i| u32::try_from(i).unwrap_or(u32::MAX))
            .collect();
        let builder = Builder::default()
            .ef_construction(options.ef_construction)
            .ef_search(options.ef_search)
            .seed(options.seed);
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(1)
            .build()
            .map_err(|e| crate::Error::Ann(format!("cannot start the build thread: {e}")))?;
        let map = pool.install(|| builder.build(points, values));
        Ok(Ann {
            map,
            options,
            source: AnnSource::Built,
        })
    }

    /// The graph of the index whose content hash is `index` from the cache file at `path`, when
    /// the file holds the graph of that content, row count, dimension and options; `Ok(None)`
    /// when there is no file or it holds another graph (another index, other options, another
    /// format).
    ///
    /// # Errors
    /// The file cannot be read, or its graph does not decode.
    pub fn load(
        path: &Path,
        index: &str,
        rows: usize,
        dim: usize,
        options: AnnOptions,
    ) -> crate::Result<Option<Ann>> {
        // The header first: a cache of another index is not read past it.
        let header_len = match read_header(path)? {
            Some((h, len)) if h == CacheHeader::new(index, rows, dim, options) => len,
            _ => return Ok(None),
        };
        let bytes = match std::fs::read(path) {
            Ok(b) => b,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
            Err(e) => return Err(crate::Error::io(path, e)),
        };
        let graph = bytes.get(header_len..).unwrap_or_default();
        let map: HnswMap<Row, u32> = postcard::from_bytes(graph).map_err(|e| corrupt(path, &e))?;
        // Every row once, each naming a row of this index (what `nearest` hands back).
        // …and one point per row, each of the index's dimension (a point of another length
        // would fail the first query that meets it).
        if map.values.len() != rows
            || map.values.iter().any(|&v| v as usize >= rows)
            || map.iter().count() != rows
            || map.iter().any(|(_, p)| p.0.len() != dim)
        {
            return Err(crate::Error::Corrupt {
                path: path.to_path_buf(),
                message: "nearest-neighbour graph cache: its rows are not this index's".into(),
            });
        }
        Ok(Some(Ann {
            map,
            options,
            source: AnnSource::Cached,
        }))
    }

    /// Writes the graph to the cache file at `path` (whole, through a temporary file renamed
    /// over it), as the graph of the index whose content hash is `index`.
    ///
    /// # Errors
    /// The graph does not encode or the file cannot be written.
    pub fn save(&self, path: &Path, index: &str, dim: usize) -> crate::Result<()> {
        let header = CacheHeader::new(index, self.map.values.len(), dim, self.options);
        let mut bytes =
            postcard::to_stdvec(&header).map_err(|e| crate::Error::Ann(e.to_string()))?;
        bytes.extend(postcard::to_stdvec(&self.map).map_err(|e| crate::Error::Ann(e.to_string()))?);
        skg_artifact::write_file(path, &bytes).map_err(crate::Error::from)
    }

    /// Where this graph came from.
    pub fn source(&self) -> AnnSource {
        self.source
    }

    /// Up to `ef_search` rows nearest to `v`, nearest first: (row, cosine).
    pub fn nearest(&self, v: &[f32]) -> Vec<(u32, f32)> {
        let mut search = Search::default();
        let q = Row(v.into());
        self.map
            .search(&q, &mut search)
            .map(|item| (*item.value, 1.0 - item.distance))
            .collect()
    }

    /// How it was built.
    pub fn options(&self) -> AnnOptions {
        self.options
    }
}

/// The graph against the exact scan on a set of queries.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct RecallReport {
    /// Dense rows in the graph.
    pub rows: usize,
    /// How the graph was built and searched.
    pub ef_construction: usize,
    /// Rows a query visits.
    pub ef_search: usize,
    /// Queries measured.
    pub queries: usize,
    /// Mean share of the exact scan's 10 nearest skills the graph also returns in its 10.
    pub recall_at_10: f64,
    /// The same at 50 (the fusion's pool).
    pub recall_at_50: f64,
}

/// Mean recall@`k` of the graph's nearest skills against the exact scan's, for each query vector
/// under `query`'s filters (quarantine, aliases). A query whose exact list is empty counts as 1.
pub fn recall(
    index: &crate::Index,
    vectors: &[Vec<f32>],
    query: &crate::Query<'_>,
    k: usize,
) -> f64 {
    if vectors.is_empty() {
        return 1.0;
    }
    let total: f64 = vectors
        .iter()
        .map(|v| {
            let exact = index.nearest_skills(query, v, k, true);
            if exact.is_empty() {
                return 1.0;
            }
            let approx: std::collections::HashSet<u32> = index
                .nearest_skills(query, v, k, false)
                .into_iter()
                .map(|(s, _)| s)
                .collect();
            let found = exact.iter().filter(|(s, _)| approx.contains(s)).count();
            found as f64 / exact.len() as f64
        })
        .sum();
    total / vectors.len() as f64
}

/// [`recall`] at 10 and 50 with the index's graph (none: the exact scan against itself).
pub fn report(
    index: &crate::Index,
    vectors: &[Vec<f32>],
    query: &crate::Query<'_>,
) -> RecallReport {
    let options = index.ann().unwrap_or_default();
    RecallReport {
        rows: index.vector_rows(),
        ef_construction: options.ef_construction,
        ef_search: options.ef_search,
        queries: vectors.len(),
        recall_at_10: recall(index, vectors, query, 10),
        recall_at_50: recall(index, vectors, query, 50),
    }
}
