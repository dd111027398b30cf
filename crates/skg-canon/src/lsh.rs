//! Sub-quadratic candidate generation: blocking keys (MinHash bands over body shingles, SimHash
//! bands over description vectors, exact body/head/description/name keys). Two skills become a
//! candidate pair when they share a key; exact signals are computed only for candidates.
//!
//! A key shared by many skills (a template family, a very common name) would make its bucket
//! quadratic again. Buckets up to [`Blocking::max_bucket`] members give all their pairs; larger
//! ones are sorted by MinHash signature (similar bodies sort together) and each member is paired
//! with its next [`Blocking::window`] neighbours and with the bucket's first member. Transitive
//! clustering then joins what a full bucket would have joined, at linear cost.

use rayon::prelude::*;

use crate::text::hash_u64;

/// Blocking parameters.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Blocking {
    /// MinHash bands over body shingles.
    pub minhash_bands: usize,
    /// Rows per MinHash band.
    pub minhash_rows: usize,
    /// SimHash tables over description vectors.
    pub simhash_tables: usize,
    /// Bits per SimHash table.
    pub simhash_bits: usize,
    /// Largest bucket paired exhaustively.
    pub max_bucket: usize,
    /// Neighbours paired in a larger bucket.
    pub window: usize,
}

impl Default for Blocking {
    /// 42 bands × 3 rows: a pair with body Jaccard 0.3 shares a band with probability 0.68, 0.5
    /// with 0.995, 0.1 with 0.04. 24 SimHash tables × 13 bits (a bit agrees with probability
    /// 1 − θ/π): cosine 0.95 → 0.997, 0.88 → 0.93, 0.8 → 0.71, unrelated (cosine ≈ 0.1) → 0.007.
    fn default() -> Self {
        Blocking {
            minhash_bands: 42,
            minhash_rows: 3,
            simhash_tables: 24,
            simhash_bits: 13,
            max_bucket: 40,
            window: 6,
        }
    }
}

impl Blocking {
    /// Hash functions per MinHash signature.
    pub fn minhash_len(&self) -> usize {
        self.minhash_bands * self.minhash_rows
    }
}

/// The MinHash signature of a shingle set (`len` hash functions `h_i(x) = mix(x ⊕ seed_i)`).
/// An empty set gets all `u64::MAX` (and is never blocked on).
pub(crate) fn minhash(shingles: &[u64], len: usize) -> Vec<u64> {
    let seeds: Vec<u64> = (0..len as u64)
        .map(|i| hash_u64(i.wrapping_mul(0x9e37_79b9_7f4a_7c15)))
        .collect();
    let mut sig = vec![u64::MAX; len];
    for &s in shingles {
        for (slot, seed) in sig.iter_mut().zip(&seeds) {
            let h = mix(s ^ seed);
            if h < *slot {
                *slot = h;
            }
        }
    }
    sig
}

/// splitmix64's finalizer: a fast, well-mixed bijection on u64.
fn mix(mut z: u64) -> u64 {
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

/// Deterministic pseudo-random hyperplanes for SimHash: `tables × bits` vectors of `dim`
/// components, uniform in [-1, 1) (sign-random projections only need symmetry).
pub(crate) fn hyperplanes(tables: usize, bits: usize, dim: usize) -> Vec<Vec<f32>> {
    let mut state = 0x5eed_u64;
    (0..tables * bits)
        .map(|_| {
            (0..dim)
                .map(|_| {
                    state = state.wrapping_add(0x9e37_79b9_7f4a_7c15);
                    let r = mix(state) >> 40; // 24 random bits
                    #[allow(clippy::cast_possible_truncation)]
                    let x = (r as f32) / ((1u32 << 23) as f32) - 1.0;
                    x
                })
                .collect()
        })
        .collect()
}

/// SimHash keys of one vector: one `bits`-bit key per table.
pub(crate) fn simhash_keys(v: &[f32], planes: &[Vec<f32>], bits: usize) -> Vec<u64> {
    planes
        .chunks(bits)
        .map(|table| {
            let mut key = 0u64;
            for (b, p) in table.iter().enumerate() {
                let dot: f32 = p.iter().zip(v).map(|(a, b)| a * b).sum();
                if dot >= 0.0 {
                    key |= 1 << b;
                }
            }
            key
        })
        .collect()
}

/// One blocking key of one skill: `(family, key, skill)`.
pub(crate) type Key = (u32, u64, u32);

/// Candidate pairs `(i, j)` with `i < j`, sorted and unique, from keys grouped into buckets.
/// `order[i]` sorts skills so that similar ones are adjacent (the MinHash signature).
pub(crate) fn pairs_from_keys(
    mut keys: Vec<Key>,
    order: &[&[u64]],
    blocking: &Blocking,
) -> Vec<(u32, u32)> {
    keys.par_sort_unstable();
    keys.dedup();
    let mut buckets: Vec<&[Key]> = Vec::new();
    let mut start = 0;
    for i in 1..=keys.len() {
        if i == keys.len() || (keys[i].0, keys[i].1) != (keys[start].0, keys[start].1) {
            if i - start > 1 {
                buckets.push(&keys[start..i]);
            }
            start = i;
        }
    }
    let mut pairs: Vec<(u32, u32)> = buckets
        .par_iter()
        .flat_map_iter(|bucket| {
            let mut members: Vec<u32> = bucket.iter().map(|k| k.2).collect();
            let mut out = Vec::new();
            if members.len() <= blocking.max_bucket {
                for (x, &a) in members.iter().enumerate() {
                    for &b in &members[x + 1..] {
                        out.push(ordered(a, b));
                    }
                }
            } else {
                members.sort_by(|a, b| order[*a as usize].cmp(order[*b as usize]).then(a.cmp(b)));
                let first = members[0];
                for (x, &a) in members.iter().enumerate() {
                    if a != first {
                        out.push(ordered(first, a));
                    }
                    for &b in members.iter().skip(x + 1).take(blocking.window) {
                        out.push(ordered(a, b));
                    }
                }
            }
            out
        })
        .collect();
    pairs.par_sort_unstable();
    pairs.dedup();
    pairs
}

fn ordered(a: u32, b: u32) -> (u32, u32) {
    if a < b { (a, b) } else { (b, a) }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn minhash_agreement_estimates_jaccard() {
        let a: Vec<u64> = (0..1000).collect();
        let b: Vec<u64> = (500..1500).collect(); // Jaccard 500/1500 = 1/3
        let (sa, sb) = (minhash(&a, 512), minhash(&b, 512));
        let agree = sa.iter().zip(&sb).filter(|(x, y)| x == y).count() as f64 / 512.0;
        assert!((agree - 1.0 / 3.0).abs() < 0.07, "{agree}");
        assert_eq!(minhash(&a, 8), minhash(&a, 8));
    }

    #[test]
    fn simhash_keeps_near_vectors_together() {
        let planes = hyperplanes(4, 8, 3);
        let k1 = simhash_keys(&[1.0, 0.0, 0.0], &planes, 8);
        let k2 = simhash_keys(&[2.0, 0.0, 0.0], &planes, 8);
        let k3 = simhash_keys(&[-1.0, 0.0, 0.0], &planes, 8);
        assert_eq!(k1, k2);
        assert!(k1.iter().zip(&k3).all(|(a, b)| a != b));
    }

    #[test]
    fn big_buckets_are_windowed_not_quadratic() {
        let blocking = Blocking {
            max_bucket: 4,
            window: 1,
            ..Blocking::default()
        };
        let keys: Vec<Key> = (0..100).map(|i| (0, 7, i)).collect();
        let sigs: Vec<[u64; 1]> = (0..100).map(|i| [i]).collect();
        let order: Vec<&[u64]> = sigs.iter().map(<[u64; 1]>::as_slice).collect();
        let pairs = pairs_from_keys(keys, &order, &blocking);
        // star from the first member (99) + chain to the next neighbour (99, overlapping once)
        assert_eq!(pairs.len(), 99 + 99 - 1);
        let small: Vec<Key> = (0..4).map(|i| (1, 3, i)).collect();
        assert_eq!(pairs_from_keys(small, &order, &blocking).len(), 6);
    }
}
