//! The embedding cache: vectors keyed by (model id, text), so unchanged skills are never
//! re-embedded. Serialized as one little-endian binary file, records sorted by key (the same
//! cache content always gives the same bytes).

use std::collections::HashMap;

/// Why a cache file was not used.
#[derive(Debug, thiserror::Error)]
pub enum CacheError {
    /// Not a cache file, or cut short.
    #[error("not an skg embedding cache (or truncated): {0}")]
    Corrupt(&'static str),
    /// The file could not be read.
    #[error("cannot read it: {0}")]
    Unreadable(#[from] std::io::Error),
    /// Written for another model: its vectors can't be mixed with this one's.
    #[error("cache was written for model {found}, not {expected}")]
    OtherModel {
        /// Model of the file.
        found: String,
        /// Model in use.
        expected: String,
    },
}

const MAGIC: &[u8; 8] = b"SKGEMB1\n";

/// Vectors by text for one model.
#[derive(Debug, Clone, PartialEq)]
pub struct EmbeddingCache {
    model_id: String,
    dim: usize,
    map: HashMap<[u8; 32], Vec<f32>>,
}

impl EmbeddingCache {
    /// An empty cache for `model_id` vectors of `dim` components.
    pub fn new(model_id: &str, dim: usize) -> Self {
        EmbeddingCache {
            model_id: model_id.to_owned(),
            dim,
            map: HashMap::new(),
        }
    }

    /// The key of a text: blake3(model id, 0, text).
    pub fn key(&self, text: &str) -> [u8; 32] {
        key(&self.model_id, text)
    }

    /// The cached vector of a text.
    pub fn get(&self, text: &str) -> Option<&[f32]> {
        self.map.get(&self.key(text)).map(Vec::as_slice)
    }

    /// Stores a vector (ignored when its length isn't the cache's dimension).
    pub fn insert(&mut self, text: &str, v: Vec<f32>) {
        if v.len() == self.dim {
            let k = self.key(text);
            self.map.insert(k, v);
        }
    }

    /// Adds the vectors of `other` (a cache of the same model) this one lacks; returns how many.
    /// A cache of another model or dimension adds nothing: its keys name other vectors.
    pub fn absorb(&mut self, other: EmbeddingCache) -> usize {
        if other.model_id != self.model_id || other.dim != self.dim {
            return 0;
        }
        absorb(&mut self.map, other.map)
    }

    /// Keeps only the texts in `keep` (so the file doesn't grow with texts that are gone).
    pub fn retain_texts<'t>(&mut self, keep: impl IntoIterator<Item = &'t str>) {
        retain_texts(&mut self.map, &self.model_id, keep);
    }

    /// Vectors held.
    pub fn len(&self) -> usize {
        self.map.len()
    }

    /// No vectors.
    pub fn is_empty(&self) -> bool {
        self.map.is_empty()
    }

    /// The file content ([`EmbeddingCache::write_to`]) in memory.
    pub fn to_bytes(&self) -> Vec<u8> {
        let mut out =
            Vec::with_capacity(32 + self.model_id.len() + self.map.len() * (32 + 4 * self.dim));
        self.write_to(&mut out)
            .expect("writing into memory does not fail");
        out
    }

    /// Writes the file: magic, model id, dimension, record count, then per record (sorted by
    /// key) the key and the vector, little-endian. Streamed, for a build that publishes the
    /// cache without a copy of it in memory.
    pub fn write_to<W: std::io::Write + ?Sized>(&self, out: &mut W) -> std::io::Result<()> {
        let mut keys: Vec<&[u8; 32]> = self.map.keys().collect();
        keys.sort_unstable();
        let mut header = Vec::new();
        write_header(&mut header, *MAGIC, &self.model_id);
        header.extend_from_slice(&u32::try_from(self.dim).unwrap_or(0).to_le_bytes());
        header.extend_from_slice(&(keys.len() as u64).to_le_bytes());
        out.write_all(&header)?;
        let mut record = Vec::with_capacity(32 + 4 * self.dim);
        for k in keys {
            record.clear();
            record.extend_from_slice(k);
            for x in &self.map[k] {
                record.extend_from_slice(&x.to_le_bytes());
            }
            out.write_all(&record)?;
        }
        Ok(())
    }

    /// Reads a cache file written for `model_id`.
    pub fn from_bytes(bytes: &[u8], model_id: &str) -> Result<Self, CacheError> {
        let mut r = Reader(bytes);
        r.header(*MAGIC, model_id)?;
        let dim = r.u32()? as usize;
        let count = usize::try_from(r.u64()?).map_err(|_| CacheError::Corrupt("count"))?;
        if count.saturating_mul(32 + 4 * dim) != r.0.len() {
            return Err(CacheError::Corrupt(
                "length does not match the record count",
            ));
        }
        let mut map = HashMap::with_capacity(count);
        for _ in 0..count {
            let key: [u8; 32] = r.array()?;
            let v = r
                .take(4 * dim)?
                .chunks_exact(4)
                .map(|c| f32::from_le_bytes([c[0], c[1], c[2], c[3]]))
                .collect();
            map.insert(key, v);
        }
        Ok(EmbeddingCache {
            model_id: model_id.to_owned(),
            dim,
            map,
        })
    }
}

/// The key of a text for a model's caches (vectors and token states): blake3(model id, 0, text).
pub(crate) fn key(model_id: &str, text: &str) -> [u8; 32] {
    let mut h = blake3::Hasher::new();
    h.update(model_id.as_bytes());
    h.update(&[0]);
    h.update(text.as_bytes());
    *h.finalize().as_bytes()
}

/// Adds the entries of `other` that `map` lacks; returns how many.
pub(crate) fn absorb<V>(map: &mut HashMap<[u8; 32], V>, other: HashMap<[u8; 32], V>) -> usize {
    let before = map.len();
    for (k, v) in other {
        map.entry(k).or_insert(v);
    }
    map.len() - before
}

/// Keeps only the entries of the texts in `keep`.
pub(crate) fn retain_texts<'t, V>(
    map: &mut HashMap<[u8; 32], V>,
    model_id: &str,
    keep: impl IntoIterator<Item = &'t str>,
) {
    let keys: std::collections::HashSet<[u8; 32]> =
        keep.into_iter().map(|t| key(model_id, t)).collect();
    map.retain(|k, _| keys.contains(k));
}

/// A cache file's header: its magic, then the model id (length-prefixed).
pub(crate) fn write_header(out: &mut Vec<u8>, magic: [u8; 8], model_id: &str) {
    out.extend_from_slice(&magic);
    out.extend_from_slice(&u32::try_from(model_id.len()).unwrap_or(0).to_le_bytes());
    out.extend_from_slice(model_id.as_bytes());
}

/// Reads a cache file front to back, from memory (`&[u8]`) or streamed from the file (a large
/// catalog's token cache is 822 MB: read whole, it would be held twice while it is parsed).
pub(crate) struct Reader<R>(pub(crate) R);

impl<R: std::io::Read> Reader<R> {
    /// The next `n` bytes, in a buffer of exactly `n` (the codes keep it). Up to 1 MiB is
    /// reserved at once; a longer (damaged) length grows as bytes arrive, so it cannot reserve
    /// more than the file holds.
    pub(crate) fn take(&mut self, n: usize) -> Result<Vec<u8>, CacheError> {
        use std::io::Read as _;
        let mut out = Vec::with_capacity(n.min(1 << 20));
        std::io::Read::take(&mut self.0, n as u64).read_to_end(&mut out)?;
        if out.len() < n {
            return Err(CacheError::Corrupt("truncated"));
        }
        Ok(out)
    }

    /// The next `N` bytes.
    pub(crate) fn array<const N: usize>(&mut self) -> Result<[u8; N], CacheError> {
        let mut out = [0u8; N];
        self.0.read_exact(&mut out).map_err(|e| match e.kind() {
            std::io::ErrorKind::UnexpectedEof => CacheError::Corrupt("truncated"),
            _ => CacheError::Unreadable(e),
        })?;
        Ok(out)
    }

    /// Reads [`write_header`]'s header: another magic is corrupt, another model id a cache of
    /// another model.
    pub(crate) fn header(&mut self, magic: [u8; 8], model_id: &str) -> Result<(), CacheError> {
        if self.array::<8>()? != magic {
            return Err(CacheError::Corrupt("bad magic"));
        }
        let n = self.u32()? as usize;
        let found = String::from_utf8_lossy(&self.take(n)?).into_owned();
        if found != model_id {
            return Err(CacheError::OtherModel {
                found,
                expected: model_id.to_owned(),
            });
        }
        Ok(())
    }

    pub(crate) fn u32(&mut self) -> Result<u32, CacheError> {
        Ok(u32::from_le_bytes(self.array()?))
    }

    pub(crate) fn u64(&mut self) -> Result<u64, CacheError> {
        Ok(u64::from_le_bytes(self.array()?))
    }

    /// Whether nothing follows.
    pub(crate) fn at_end(&mut self) -> Result<bool, CacheError> {
        let mut one = [0u8; 1];
        loop {
            match self.0.read(&mut one) {
                Ok(n) => return Ok(n == 0),
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                Err(e) => return Err(CacheError::Unreadable(e)),
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trip_and_model_check() {
        let mut c = EmbeddingCache::new("m1", 2);
        c.insert("hello", vec![0.5, -1.0]);
        c.insert("bad", vec![1.0]); // wrong dimension: ignored
        let bytes = c.to_bytes();
        let back = EmbeddingCache::from_bytes(&bytes, "m1").expect("reads");
        assert_eq!(back, c);
        assert_eq!(back.get("hello"), Some(&[0.5, -1.0][..]));
        assert!(back.get("bad").is_none());
        assert!(matches!(
            EmbeddingCache::from_bytes(&bytes, "m2"),
            Err(CacheError::OtherModel { .. })
        ));
        assert!(EmbeddingCache::from_bytes(&bytes[..bytes.len() - 1], "m1").is_err());
    }

    #[test]
    fn absorb_adds_what_is_missing_and_only_of_the_same_model() {
        let mut a = EmbeddingCache::new("m", 2);
        a.insert("x", vec![1.0, 0.0]);
        let mut b = EmbeddingCache::new("m", 2);
        b.insert("x", vec![9.0, 9.0]);
        b.insert("y", vec![0.0, 1.0]);
        assert_eq!(a.absorb(b), 1, "only y was missing");
        assert_eq!(
            a.get("x"),
            Some(&[1.0f32, 0.0][..]),
            "a vector held is kept"
        );
        assert_eq!(a.get("y"), Some(&[0.0f32, 1.0][..]));
        let mut other = EmbeddingCache::new("n", 2);
        other.insert("z", vec![1.0, 1.0]);
        assert_eq!(
            a.absorb(other),
            0,
            "another model's vectors are not this one's"
        );
        assert_eq!(a.len(), 2);
    }

    #[test]
    #[allow(
        clippy::disallowed_methods,
        reason = "the test writes cache files to read back"
    )]
    fn a_named_cache_is_checked_strictly() {
        let cache_vectors = |path: &std::path::Path, identity: &str| {
            crate::cached::read_cache_strict(path, identity).map(|c| c.len())
        };
        let dir = tempfile::tempdir().expect("a temporary folder");
        let mut c = EmbeddingCache::new("m", 2);
        c.insert("x", vec![1.0, 0.0]);
        c.insert("y", vec![0.0, 1.0]);
        let good = dir.path().join("good");
        std::fs::write(&good, c.to_bytes()).expect("write");
        assert_eq!(cache_vectors(&good, "m").expect("same model"), 2);
        assert!(matches!(
            cache_vectors(&good, "n"),
            Err(CacheError::OtherModel { .. })
        ));
        let bad = dir.path().join("bad");
        std::fs::write(&bad, b"not a cache").expect("write");
        assert!(matches!(
            cache_vectors(&bad, "m"),
            Err(CacheError::Corrupt(_))
        ));
        assert!(matches!(
            cache_vectors(&dir.path().join("missing"), "m"),
            Err(CacheError::Unreadable(_))
        ));
    }
}
