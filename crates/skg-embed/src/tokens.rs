//! Token states coded in int8, and their cache.
//!
//! Late interaction matches a query's tokens against a card's (docs/retrieval.md, "Token-level
//! late interaction"). A card's token states are [`DIM`] floats a token; they are kept as int8
//! codes with one scale a token (`s = max|x| / 127`, `a_i = round(x_i / s)`): a quarter of the
//! bytes, and the same first places as the floats on the three corpus dev sets. The codes are
//! what both a cold and a warm build store, so the two agree byte for byte.
//!
//! The cache file (`tokens.cache`, beside `embeddings.cache`) is keyed like the embedding cache
//! (blake3 of the model identity and the text) and written sorted by key.

use std::collections::HashMap;

use crate::{
    CacheError, DIM,
    cache::{Reader, absorb, key, retain_texts, write_header},
};

const MAGIC: &[u8; 8] = b"SKGTOK1\n";

/// The token cache's file name in an output folder (a cache, not output).
pub const TOKEN_CACHE_FILE: &str = "tokens.cache";

/// A text's token states as int8 codes: [`DIM`] codes a token, one scale a token.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct CodedTokens {
    /// One scale a token: a state is `scale · codes`.
    pub scales: Vec<f32>,
    /// [`DIM`] codes a token, in token order.
    pub codes: Vec<i8>,
}

impl CodedTokens {
    /// Codes token states ([`DIM`] floats a token; a non-finite value codes as 0).
    pub fn code(states: &[f32]) -> CodedTokens {
        let mut out = CodedTokens::default();
        for t in states.chunks_exact(DIM) {
            let max = t
                .iter()
                .filter(|f| f.is_finite())
                .fold(0f32, |m, f| m.max(f.abs()));
            let scale = max / 127.0;
            out.scales.push(scale);
            out.codes.extend(t.iter().map(|&f| {
                if scale > 0.0 && f.is_finite() {
                    // In −127..=127 by construction of the scale.
                    #[allow(clippy::cast_possible_truncation, reason = "rounded into ±127")]
                    let c = (f / scale).round().clamp(-127.0, 127.0) as i8;
                    c
                } else {
                    0
                }
            }));
        }
        out
    }

    /// How many tokens.
    pub fn len(&self) -> usize {
        self.scales.len()
    }

    /// Whether there is no token.
    pub fn is_empty(&self) -> bool {
        self.scales.is_empty()
    }

    /// Token `i`'s scale.
    pub fn scale(&self, i: usize) -> f32 {
        self.scales[i]
    }
}

/// Coded token states by text, for one model.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct TokenCache {
    model_id: String,
    map: HashMap<[u8; 32], CodedTokens>,
}

impl TokenCache {
    /// An empty cache for `model_id`'s token states.
    pub fn new(model_id: &str) -> Self {
        TokenCache {
            model_id: model_id.to_owned(),
            map: HashMap::new(),
        }
    }

    /// The key of a text: blake3(model id, 0, text), as the embedding cache's.
    pub fn key(&self, text: &str) -> [u8; 32] {
        key(&self.model_id, text)
    }

    /// A text's cached codes.
    pub fn get(&self, text: &str) -> Option<&CodedTokens> {
        self.map.get(&self.key(text))
    }

    /// Stores a text's codes (ignored when the codes are not [`DIM`] a token).
    pub fn insert(&mut self, text: &str, tokens: CodedTokens) {
        if tokens.codes.len() == tokens.scales.len() * DIM {
            self.map.insert(self.key(text), tokens);
        }
    }

    /// Adds another cache's entries (same model) it lacks; returns how many.
    pub fn absorb(&mut self, other: TokenCache) -> usize {
        if other.model_id != self.model_id {
            return 0;
        }
        absorb(&mut self.map, other.map)
    }

    /// Keeps only the entries of `keep`.
    pub fn retain_texts<'t>(&mut self, keep: impl IntoIterator<Item = &'t str>) {
        retain_texts(&mut self.map, &self.model_id, keep);
    }

    /// Entries held.
    pub fn len(&self) -> usize {
        self.map.len()
    }

    /// Whether it holds nothing.
    pub fn is_empty(&self) -> bool {
        self.map.is_empty()
    }

    /// The codes of each of `texts`, in order, moved out of the cache: a build holds each card's
    /// codes once, not the cache's and a copy (at 30,000 cards the copy was ~0.9 GB). Write the
    /// cache's file first ([`TokenCache::write_to`]): what is moved out is no longer in it. A
    /// text given again gets a copy of its codes; `None` when a text has none.
    pub fn into_states(mut self, texts: &[String]) -> Option<Vec<CodedTokens>> {
        let mut first: HashMap<&str, usize> = HashMap::new();
        let mut states: Vec<CodedTokens> = Vec::with_capacity(texts.len());
        for text in texts {
            let codes = if let Some(&i) = first.get(text.as_str()) {
                states[i].clone()
            } else {
                first.insert(text, states.len());
                self.map.remove(&self.key(text))?
            };
            states.push(codes);
        }
        Some(states)
    }

    /// The file content ([`TokenCache::write_to`]) in memory.
    pub fn to_bytes(&self) -> Vec<u8> {
        let mut out = Vec::new();
        self.write_to(&mut out)
            .expect("writing into memory does not fail");
        out
    }

    /// Writes the file: magic, model id, record count, then per record (sorted by key) the key,
    /// the token count, the scales and the codes, little-endian. Streamed (the file of a large
    /// catalog's cards is the size of their codes: 822 MB at 30,000).
    pub fn write_to<W: std::io::Write + ?Sized>(&self, out: &mut W) -> std::io::Result<()> {
        let mut keys: Vec<&[u8; 32]> = self.map.keys().collect();
        keys.sort_unstable();
        let mut header = Vec::new();
        write_header(&mut header, *MAGIC, &self.model_id);
        out.write_all(&header)?;
        out.write_all(&(keys.len() as u64).to_le_bytes())?;
        let mut record = Vec::new();
        for k in keys {
            let t = &self.map[k];
            record.clear();
            record.extend_from_slice(k);
            record.extend_from_slice(&u32::try_from(t.len()).unwrap_or(0).to_le_bytes());
            for s in &t.scales {
                record.extend_from_slice(&s.to_le_bytes());
            }
            record.extend(t.codes.iter().map(|&c| c.to_le_bytes()[0]));
            out.write_all(&record)?;
        }
        Ok(())
    }

    /// Reads a cache file written for `model_id` from memory.
    pub fn from_bytes(bytes: &[u8], model_id: &str) -> Result<Self, CacheError> {
        Self::read_from(bytes, model_id)
    }

    /// Reads a cache file written for `model_id`, streamed (buffer a file's reader): the file
    /// is never held whole beside the codes it is parsed into.
    pub fn read_from(source: impl std::io::Read, model_id: &str) -> Result<Self, CacheError> {
        let mut r = Reader(source);
        r.header(*MAGIC, model_id)?;
        let count = r.u64()?;
        let mut map = HashMap::new();
        for _ in 0..count {
            let key: [u8; 32] = r.array()?;
            let n = r.u32()? as usize;
            let scales = r
                .take(n.checked_mul(4).ok_or(CacheError::Corrupt("count"))?)?
                .chunks_exact(4)
                .map(|b| f32::from_le_bytes([b[0], b[1], b[2], b[3]]))
                .collect();
            // `u8` and `i8` share a layout: the standard library collects this in place.
            let codes = r
                .take(n.checked_mul(DIM).ok_or(CacheError::Corrupt("count"))?)?
                .into_iter()
                .map(|b| i8::from_le_bytes([b]))
                .collect();
            map.insert(key, CodedTokens { scales, codes });
        }
        if !r.at_end()? {
            return Err(CacheError::Corrupt("bytes past the last record"));
        }
        Ok(TokenCache {
            model_id: model_id.to_owned(),
            map,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn codes_follow_their_definition() {
        // Token 0: max |x| 0.5 → scale 0.5/127, codes round(x / scale); token 1: all zero.
        let mut states = vec![0f32; 2 * DIM];
        states[0] = 0.5;
        states[1] = -0.25;
        states[2] = 0.001;
        let c = CodedTokens::code(&states);
        assert_eq!(c.len(), 2);
        assert!((c.scale(0) - 0.5 / 127.0).abs() < 1e-9);
        assert_eq!(&c.codes[..3], &[127, -64, 0]); // −0.25·127/0.5 = −63.5 → −64
        assert!(c.scale(1).abs() < f32::MIN_POSITIVE);
        assert!(c.codes[DIM..].iter().all(|&x| x == 0));
    }

    #[test]
    fn round_trip_sorted_and_model_checked() {
        let mut c = TokenCache::new("m1");
        let mut a = vec![0f32; 2 * DIM];
        a[5] = 1.0;
        a[DIM + 7] = -0.3;
        c.insert("two tokens", CodedTokens::code(&a));
        c.insert("none", CodedTokens::default());
        c.insert(
            "bad",
            CodedTokens {
                scales: vec![0.0],
                codes: vec![1],
            },
        );
        assert_eq!(c.len(), 2, "a record of the wrong length is not kept");
        let bytes = c.to_bytes();
        let back = TokenCache::from_bytes(&bytes, "m1").expect("reads");
        assert_eq!(back, c);
        assert_eq!(back.get("two tokens").map(CodedTokens::len), Some(2));
        assert_eq!(back.to_bytes(), bytes, "same content, same bytes");
        assert!(matches!(
            TokenCache::from_bytes(&bytes, "m2"),
            Err(CacheError::OtherModel { .. })
        ));
        assert!(TokenCache::from_bytes(&bytes[..bytes.len() - 1], "m1").is_err());
        let mut longer = bytes.clone();
        longer.push(0);
        assert!(TokenCache::from_bytes(&longer, "m1").is_err());
        let mut kept = back.clone();
        kept.retain_texts(["none"]);
        assert_eq!(kept.len(), 1);
        let mut other = TokenCache::new("m1");
        assert_eq!(other.absorb(back), 2);
    }

    #[test]
    fn states_are_moved_out_after_the_file_is_written() {
        let mut c = TokenCache::new("m1");
        let mut a = vec![0f32; 2 * DIM];
        a[3] = 0.7;
        let mut b = vec![0f32; DIM];
        b[9] = -0.2;
        c.insert("a", CodedTokens::code(&a));
        c.insert("b", CodedTokens::code(&b));
        let texts = |t: &[&str]| t.iter().map(|&x| x.to_owned()).collect::<Vec<_>>();
        // The streamed file is the whole cache's: the header (magic, the id's length and bytes,
        // the count), then per record its key, token count, scales and codes; it reads back.
        let mut file = Vec::new();
        c.write_to(&mut file).expect("writes");
        let records = 2 * (32 + 4) + 3 * (4 + DIM);
        assert_eq!(file.len(), 8 + 4 + 2 + 8 + records);
        assert_eq!(TokenCache::from_bytes(&file, "m1").expect("reads"), c);
        // Streamed through a small buffer, as a build reads the file: the same cache; cut short,
        // refused.
        let small =
            |b: &[u8]| std::io::BufReader::with_capacity(7, std::io::Cursor::new(b.to_vec()));
        let read = |b: &[u8]| TokenCache::read_from(small(b), "m1");
        let back = read(&file).expect("reads");
        assert_eq!(back, c);
        // Each record's codes are held in a buffer of their own size, not a grown one.
        for t in back.map.values() {
            assert_eq!(t.codes.capacity(), t.codes.len());
        }
        assert!(read(&file[..file.len() - 1]).is_err());
        assert!(read(&[file.as_slice(), &[0]].concat()).is_err());
        let states = c
            .clone()
            .into_states(&texts(&["b", "a", "b"]))
            .expect("every text is held");
        // In the texts' order; the text given twice gets its codes twice.
        let want = [c.get("b"), c.get("a"), c.get("b")].map(|x| x.cloned().expect("held"));
        assert_eq!(states, want);
        assert_eq!(states[1].len(), 2);
        assert!(c.into_states(&texts(&["a", "c"])).is_none(), "c has none");
    }
}
