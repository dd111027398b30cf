//! Token-level late interaction over each skill's card: a second stage over the fused ranking.
//!
//! The dense side scores a skill by the cosine of two mean-pooled vectors, which blurs *which*
//! words matched. Here a candidate's card (its L0 document: name and description) keeps its
//! tokens' states, and the query's tokens are matched one by one (ColBERT's MaxSim): the mean,
//! over the query's tokens, of each token's best cosine with any of the card's tokens. The fused
//! first [`Late::depth`] are then ordered by `z(fused) + w · z(maxsim)` (z-scores over those
//! candidates), the rest as fused. Measured in docs/retrieval.md ("Token-level late interaction
//! over the candidates"): MaxSim alone ranks worse than either first-stage ranking; beside the
//! fusion at w 0.3 it lifts hit@1 on all three corpus dev sets, which a control (the pooled
//! cosine in its place) does not.
//!
//! The states are the embedding model's own (no second model): the query's come out of the call
//! that embeds it, the cards' out of the index build's, stored as int8 codes with one scale a
//! token (`tokens.bin`, [`CardTokens`]). A query token's match with a card token is
//! `t·s·(a·b)` — its codes `b` and scale `t` against the card token's `a` and `s` —, an exact
//! integer dot product, one card token matched against all the query's in one pass.
//!
//! By default the card tokens are stored on the catalog's first [`DEFAULT_DIRECTIONS`]
//! principal directions ([`crate::pca`]: centered, projected, re-normalized, then coded), and
//! each query token is projected the same way before it is coded: a third of the codes and of
//! the multiply-adds, the whole width's first places within one query on each judged set
//! (docs/retrieval.md, "Made cheap, and the default").

use serde::{Deserialize, Serialize};

use rayon::prelude::*;

use crate::pca::Projection;
use crate::quant::{code, dot};

/// The second stage's settings.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Late {
    /// MaxSim's weight beside the fused score (both z-scored over the candidates); 0 turns the
    /// stage off.
    pub weight: f32,
    /// The fused first this many are reordered.
    pub depth: usize,
}

impl Late {
    /// Off: the fused ranking as it is.
    pub const OFF: Late = Late {
        weight: 0.0,
        depth: 0,
    };

    /// A query's tokens matched at most (its first): MaxSim's cost grows with the query's
    /// length, and a task of the gateway's longest (4,000 characters, cut at the model's 254
    /// tokens) would cost eight times a judged query's (~30 tokens).
    pub const MAX_QUERY_TOKENS: usize = 64;

    /// Whether the stage reorders anything: a positive weight over at least two candidates.
    pub fn runs(&self) -> bool {
        self.weight > 0.0 && self.depth >= 2
    }
}

impl Default for Late {
    /// The measured setting: weight 0.3 over the fused first 20 (as many first places as over
    /// 30 on the three corpus dev sets, at two thirds of the cost).
    fn default() -> Self {
        Late {
            weight: 0.3,
            depth: 20,
        }
    }
}

/// A card's token states as int8 codes: what the index build is given for each card document.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct TokenCodes {
    /// One scale a token.
    pub scales: Vec<f32>,
    /// `dim` codes a token, in token order.
    pub codes: Vec<i8>,
}

/// Every skill's card tokens (`tokens.bin`).
#[derive(Debug, Default)]
pub(crate) struct CardTokens {
    /// The model's dimension (a query token's states).
    dim: usize,
    /// The cards' principal directions the tokens are coded on ([`crate::pca`]).
    projection: Option<Projection>,
    /// Skill `i`'s tokens are `offsets[i]..offsets[i + 1]`.
    offsets: Vec<u32>,
    scales: Vec<f32>,
    codes: Vec<i8>,
}

const MAGIC: &[u8; 8] = b"SKGLATE2";
/// The first version's magic: the model's whole width, no projection, no width in the header.
const MAGIC_UNPROJECTED: &[u8; 8] = b"SKGLATE1";

/// The file of an index folder that holds the cards' tokens (optional: an index without it has
/// no second stage).
pub const TOKENS_FILE: &str = "tokens.bin";

/// The principal directions card and query tokens are projected on by default: the full 384's
/// first places within one query on each judged set; 64 lose more (docs/retrieval.md, the
/// late-interaction cost table and "Made cheap, and the default").
pub const DEFAULT_DIRECTIONS: usize = 128;

impl CardTokens {
    /// Skill by skill (index order), its card's codes (`None`: no card tokens), handed over;
    /// with `directions` below `dim` (and above 0), every token is projected on the cards'
    /// first `directions` principal directions, re-normalized and coded again.
    pub(crate) fn new(dim: usize, directions: usize, cards: Vec<Option<TokenCodes>>) -> Self {
        let mut cards: Vec<Option<TokenCodes>> = cards
            .into_iter()
            .map(|c| c.filter(|c| dim > 0 && c.codes.len() == c.scales.len() * dim))
            .collect();
        let total: usize = cards.iter().flatten().map(|c| c.scales.len()).sum();
        let projection = if directions > 0 && directions < dim {
            // An evenly spaced sample, decoded (codes × scale); too small a catalog keeps the
            // whole width (`Projection::fit`).
            let sample: Vec<Vec<f32>> = cards
                .iter()
                .flatten()
                .flat_map(|c| c.codes.chunks_exact(dim).zip(&c.scales))
                .step_by(crate::pca::sample_step(total))
                .map(|(t, s)| {
                    let mut x = vec![0f32; dim];
                    decode(t, *s, &mut x);
                    x
                })
                .collect();
            Projection::fit(dim, directions, sample.iter().map(Vec::as_slice))
        } else {
            None
        };
        // Projected card by card, in parallel and in place: each card's whole-width codes are
        // freed as its projected ones replace them.
        if let Some(p) = &projection {
            cards
                .par_iter_mut()
                .flatten()
                .for_each(|c| *c = p.recode(c));
        }
        // Assembled into stores sized once, each card's codes freed as they are copied: the
        // build holds the projected codes about once, not twice over.
        let width = projection.as_ref().map_or(dim, |p| p.k);
        let mut out = CardTokens {
            dim,
            projection,
            offsets: Vec::with_capacity(cards.len() + 1),
            scales: Vec::with_capacity(total),
            codes: Vec::with_capacity(total * width),
        };
        out.offsets.push(0);
        for c in cards {
            if let Some(c) = c {
                out.scales.extend_from_slice(&c.scales);
                out.codes.extend_from_slice(&c.codes);
            }
            out.offsets
                .push(u32::try_from(out.scales.len()).unwrap_or(u32::MAX));
        }
        out
    }

    /// Tokens held, over every card.
    pub(crate) fn len(&self) -> usize {
        self.scales.len()
    }

    /// Codes a token: the projection's directions, or the model's dimension without one.
    fn width(&self) -> usize {
        self.projection.as_ref().map_or(self.dim, |p| p.k)
    }

    /// A query's token states (`dim` floats each) as this store's codes: projected like the
    /// cards', the first [`Late::MAX_QUERY_TOKENS`].
    pub(crate) fn query(&self, states: &[f32]) -> QueryTokens {
        QueryTokens::new(states, self.dim, self.projection.as_ref())
    }

    /// The file in memory ([`CardTokens::write_to`]).
    #[cfg(test)]
    pub(crate) fn to_bytes(&self) -> Vec<u8> {
        let mut out = Vec::new();
        self.write_to(&mut out)
            .expect("writing into memory does not fail");
        out
    }

    /// Writes the file: magic; dimension, code width, skill count, token count (u32 each); with
    /// a projection (width below the dimension) its mean (`dim` f32) and directions (`dim` rows
    /// of `width` f32); the offsets, the scales, the codes (`width` a token); little-endian.
    /// Streamed: at 30,000 cards the file is 307 MB, which the build does not hold twice.
    pub(crate) fn write_to<W: std::io::Write + ?Sized>(&self, out: &mut W) -> std::io::Result<()> {
        let mut head = Vec::with_capacity(24);
        head.extend_from_slice(MAGIC);
        for n in [self.dim, self.width(), self.offsets.len() - 1, self.len()] {
            head.extend_from_slice(&u32::try_from(n).unwrap_or(u32::MAX).to_le_bytes());
        }
        out.write_all(&head)?;
        let mut floats = |values: &mut dyn Iterator<Item = [u8; 4]>| -> std::io::Result<()> {
            let mut buf = Vec::with_capacity(1 << 16);
            for v in values {
                buf.extend_from_slice(&v);
                if buf.len() >= 1 << 16 {
                    out.write_all(&buf)?;
                    buf.clear();
                }
            }
            out.write_all(&buf)
        };
        if let Some(p) = &self.projection {
            floats(&mut p.mean.iter().chain(&p.axes_t).map(|f| f.to_le_bytes()))?;
        }
        floats(&mut self.offsets.iter().map(|o| o.to_le_bytes()))?;
        floats(&mut self.scales.iter().map(|s| s.to_le_bytes()))?;
        let mut buf = Vec::with_capacity(1 << 16);
        for chunk in self.codes.chunks(1 << 16) {
            buf.clear();
            buf.extend(chunk.iter().map(|c| c.to_le_bytes()[0]));
            out.write_all(&buf)?;
        }
        Ok(())
    }

    /// Reads the file written for `skills` skills of dimension `dim`. The codes keep the file's
    /// buffer (the header and the other fields moved out of it, its bytes re-typed in place), so
    /// opening an index holds the codes once, not the file and a copy.
    pub(crate) fn from_bytes(
        mut bytes: Vec<u8>,
        skills: usize,
        dim: usize,
    ) -> Result<Self, String> {
        let u32_at = |at: usize| -> Result<u32, String> {
            bytes
                .get(at..at + 4)
                .map(|b| u32::from_le_bytes([b[0], b[1], b[2], b[3]]))
                .ok_or_else(|| "truncated".to_owned())
        };
        // Stop 48's files (`SKGLATE1`: no width, no projection) read as the whole width.
        let legacy = bytes.get(..8) == Some(MAGIC_UNPROJECTED.as_slice());
        if bytes.get(..8) != Some(MAGIC.as_slice()) && !legacy {
            return Err("not a card-token file".to_owned());
        }
        let (d, width, n, tokens) = if legacy {
            let d = u32_at(8)? as usize;
            (d, d, u32_at(12)? as usize, u32_at(16)? as usize)
        } else {
            (
                u32_at(8)? as usize,
                u32_at(12)? as usize,
                u32_at(16)? as usize,
                u32_at(20)? as usize,
            )
        };
        let header = if legacy { 20 } else { 24 };
        if d != dim || n != skills {
            return Err(format!(
                "{n} skills of dimension {d}, the index has {skills} of {dim}"
            ));
        }
        if width == 0 || width > dim {
            return Err(format!("{width} codes a token for dimension {dim}"));
        }
        let projected = if width < dim { dim + dim * width } else { 0 };
        let start = header + 4 * projected;
        let scales_at = start + 4 * (n + 1);
        let codes_at = scales_at + 4 * tokens;
        if bytes.len() != codes_at + tokens * width {
            return Err("length does not match the counts".to_owned());
        }
        let f32s = |at: usize, count: usize| -> Result<Vec<f32>, String> {
            (0..count)
                .map(|i| u32_at(at + 4 * i).map(f32::from_bits))
                .collect()
        };
        let projection = if width < dim {
            Some(Projection {
                dim,
                k: width,
                mean: f32s(header, dim)?,
                axes_t: f32s(header + 4 * dim, dim * width)?,
            })
        } else {
            None
        };
        if projection
            .as_ref()
            .is_some_and(|p| p.mean.iter().chain(&p.axes_t).any(|f| !f.is_finite()))
        {
            return Err("a projection value is not finite".to_owned());
        }
        let offsets = (0..=n)
            .map(|i| u32_at(start + 4 * i))
            .collect::<Result<Vec<_>, _>>()?;
        if offsets.first() != Some(&0)
            || offsets.last().map(|&o| o as usize) != Some(tokens)
            || offsets.windows(2).any(|w| w[0] > w[1])
        {
            return Err("offsets out of order".to_owned());
        }
        let scales = f32s(scales_at, tokens)?;
        bytes.drain(..codes_at);
        // `u8` and `i8` share a layout: the standard library collects this in place.
        let codes: Vec<i8> = bytes.into_iter().map(|b| i8::from_le_bytes([b])).collect();
        Ok(CardTokens {
            dim,
            projection,
            offsets,
            scales,
            codes,
        })
    }

    /// MaxSim of the query's tokens with skill `skill`'s card: the mean over the query's tokens
    /// of each one's best (coded) cosine with a card token; `None` when either has no token.
    pub(crate) fn maxsim(&self, skill: usize, q: &QueryTokens) -> Option<f32> {
        let (from, to) = (
            *self.offsets.get(skill)? as usize,
            *self.offsets.get(skill + 1)? as usize,
        );
        if from == to || q.scales.is_empty() {
            return None;
        }
        let width = self.width();
        let mut best = vec![f32::NEG_INFINITY; q.scales.len()];
        best_matches(
            &self.codes[from * width..to * width],
            &self.scales[from..to],
            &q.wide,
            width,
            &mut best,
        );
        let sum: f32 = best.iter().zip(&q.scales).map(|(b, s)| b * s).sum();
        #[allow(clippy::cast_precision_loss, reason = "a query's token count")]
        let n = q.scales.len() as f32;
        Some(sum / n)
    }
}

/// A query's token states as codes (one scale a token), for [`CardTokens::maxsim`].
#[derive(Debug, Default)]
pub(crate) struct QueryTokens {
    scales: Vec<f32>,
    /// The codes widened to 16 bits once, as the kernel multiplies them.
    wide: Vec<i16>,
}

impl QueryTokens {
    /// Codes the first [`Late::MAX_QUERY_TOKENS`] of `states` (`dim` floats a token), each
    /// projected first when the cards' tokens are ([`Projection::recode`]'s way); a token with
    /// a non-finite value is left out.
    pub(crate) fn new(states: &[f32], dim: usize, projection: Option<&Projection>) -> QueryTokens {
        let mut out = QueryTokens::default();
        if dim == 0 {
            return out;
        }
        let mut codes = Vec::new();
        let mut projected = vec![0f32; projection.map_or(0, |p| p.k)];
        for t in states.chunks_exact(dim).take(Late::MAX_QUERY_TOKENS) {
            if t.iter().any(|f| !f.is_finite()) {
                continue;
            }
            let t = match projection {
                Some(p) => {
                    p.apply(t, &mut projected);
                    normalize(&mut projected);
                    projected.as_slice()
                }
                None => t,
            };
            let start = codes.len();
            match code(t, &mut codes) {
                Some(s) => out.scales.push(s),
                None => codes.truncate(start),
            }
        }
        out.wide = codes.into_iter().map(i16::from).collect();
        out
    }
}

impl Projection {
    /// A card's codes projected: each token decoded (codes × scale), projected, re-normalized
    /// and coded again on the directions (an all-zero token stays all zero, scale 0).
    fn recode(&self, c: &TokenCodes) -> TokenCodes {
        let mut out = TokenCodes {
            scales: Vec::with_capacity(c.scales.len()),
            codes: Vec::with_capacity(c.scales.len() * self.k),
        };
        let mut x = vec![0f32; self.dim];
        let mut y = vec![0f32; self.k];
        for (t, s) in c.codes.chunks_exact(self.dim).zip(&c.scales) {
            decode(t, *s, &mut x);
            self.apply(&x, &mut y);
            normalize(&mut y);
            out.scales.push(code(&y, &mut out.codes).unwrap_or(0.0));
        }
        out
    }
}

/// A token's states from its codes: `codes × scale`.
fn decode(codes: &[i8], scale: f32, out: &mut [f32]) {
    for (x, a) in out.iter_mut().zip(codes) {
        *x = f32::from(*a) * scale;
    }
}

/// `x / |x|` in place (unchanged when `|x|` is 0).
fn normalize(x: &mut [f32]) {
    let n = crate::quant::l2(x);
    if n > 0.0 {
        for f in x {
            *f /= n;
        }
    }
}

/// `best[j] = max(best[j], max_t scales[t] · (card_t · query_j))` over the card's tokens `t`
/// (`dim` codes each) and the query's tokens `j` (widened once): each card token is widened once
/// and matched against every query token while it is hot, by [`crate::quant::dot`] inlined here
/// (whole 16-bit registers multiply-added), instead of one out-of-line call a pair. Integer
/// sums, exact, so the AVX2 version (chosen at run time) and the baseline agree to the bit.
#[multiversion::multiversion(targets("x86_64+avx2"), attrs(inline(never)))]
fn best_matches(card: &[i8], scales: &[f32], query: &[i16], dim: usize, best: &mut [f32]) {
    let mut wide = vec![0i16; dim];
    for (t, s) in card.chunks_exact(dim).zip(scales) {
        for (w, c) in wide.iter_mut().zip(t) {
            *w = i16::from(*c);
        }
        for (q, b) in query.chunks_exact(dim).zip(best.iter_mut()) {
            #[allow(
                clippy::cast_precision_loss,
                reason = "|a·b| ≤ 127² · dim is exact in f32 below 2^24 (1,040 dimensions)"
            )]
            let m = s * dot(&wide, q) as f32;
            *b = b.max(m);
        }
    }
}

/// `x` standardized (mean 0, standard deviation 1); all zeros when it does not vary.
fn zscores(x: &[f32]) -> Vec<f32> {
    #[allow(clippy::cast_precision_loss, reason = "a candidate count")]
    let n = x.len().max(1) as f32;
    let mean = x.iter().sum::<f32>() / n;
    let sd = (x.iter().map(|v| (v - mean) * (v - mean)).sum::<f32>() / n).sqrt();
    x.iter()
        .map(|v| if sd > 0.0 { (v - mean) / sd } else { 0.0 })
        .collect()
}

/// The order of the first `fused.len()` candidates by `z(fused) + weight · z(late)`, ties kept in
/// fused order; a candidate without a MaxSim (`None`) counts at the others' mean (z 0).
pub(crate) fn reorder(fused: &[f32], late: &[Option<f32>], weight: f32) -> Vec<usize> {
    let known: Vec<f32> = late.iter().flatten().copied().collect();
    #[allow(clippy::cast_precision_loss, reason = "a candidate count")]
    let mean = known.iter().sum::<f32>() / known.len().max(1) as f32;
    let filled: Vec<f32> = late.iter().map(|l| l.unwrap_or(mean)).collect();
    let (zf, zl) = (zscores(fused), zscores(&filled));
    let mixed: Vec<f32> = zf.iter().zip(&zl).map(|(f, l)| f + weight * l).collect();
    let mut order: Vec<usize> = (0..fused.len()).collect();
    order.sort_by(|&a, &b| mixed[b].total_cmp(&mixed[a]).then(a.cmp(&b)));
    order
}

#[cfg(test)]
mod tests {
    use super::*;

    fn codes(states: &[f32], dim: usize) -> TokenCodes {
        let mut c = TokenCodes::default();
        for t in states.chunks_exact(dim) {
            c.scales.push(code(t, &mut c.codes).unwrap_or(0.0));
        }
        c
    }

    #[test]
    fn maxsim_is_the_mean_of_each_query_token_s_best_match() {
        // Two dimensions. Card 0: tokens (1, 0) and (0, 1); card 1: (0.6, 0.8); card 2: none.
        let dim = 2;
        let cards = [
            Some(codes(&[1.0, 0.0, 0.0, 1.0], dim)),
            Some(codes(&[0.6, 0.8], dim)),
            None,
        ];
        let store = CardTokens::new(dim, 0, cards.to_vec());
        assert_eq!(store.len(), 3);
        // Query tokens (1, 0) and (0.6, 0.8).
        let q = QueryTokens::new(&[1.0, 0.0, 0.6, 0.8], dim, None);
        // Card 0: best of (1,0)·{(1,0), (0,1)} = 1; best of (0.6,0.8)·{…} = 0.8 → 0.9.
        let m0 = store.maxsim(0, &q).unwrap_or(f32::NAN);
        assert!((m0 - 0.9).abs() < 0.02, "{m0}");
        // Card 1: (1,0)·(0.6,0.8) = 0.6; (0.6,0.8)·(0.6,0.8) = 1 → 0.8.
        let m1 = store.maxsim(1, &q).unwrap_or(f32::NAN);
        assert!((m1 - 0.8).abs() < 0.02, "{m1}");
        assert_eq!(store.maxsim(2, &q), None);
        assert_eq!(store.maxsim(3, &q), None, "past the last skill");
        assert_eq!(store.maxsim(0, &QueryTokens::new(&[], dim, None)), None);
    }

    proptest::proptest! {
        /// The kernel (the version this CPU runs) is its definition: each query token's best
        /// scaled integer dot product over the card's tokens, at any dimension (whole 32-code
        /// chunks, a tail, or only a tail).
        #[test]
        fn best_matches_is_the_best_scaled_dot_product(
            dim in 1usize..80,
            card in proptest::collection::vec(-127i8..=127, 0..2000),
            query in proptest::collection::vec(-127i16..=127, 0..800),
        ) {
            let n = card.len() / dim;
            let m = query.len() / dim;
            let card = &card[..n * dim];
            let query = &query[..m * dim];
            #[allow(clippy::cast_precision_loss, reason = "a test's small index")]
            let scales: Vec<f32> = (0..n).map(|t| 0.01 + t as f32 * 0.001).collect();
            let mut best = vec![f32::NEG_INFINITY; m];
            best_matches(card, &scales, query, dim, &mut best);
            for (j, got) in best.iter().enumerate() {
                let q = &query[j * dim..(j + 1) * dim];
                #[allow(clippy::cast_precision_loss, reason = "exact below 2^24")]
                let want = card
                    .chunks_exact(dim)
                    .zip(&scales)
                    .map(|(c, s)| {
                        s * c.iter().zip(q).map(|(a, b)| i32::from(*a) * i32::from(*b)).sum::<i32>() as f32
                    })
                    .fold(f32::NEG_INFINITY, f32::max);
                proptest::prop_assert_eq!(got.to_bits(), want.to_bits());
            }
        }
    }

    #[test]
    fn a_query_s_first_tokens_are_matched() {
        // 70 query tokens: the first 64 are kept, the rest (all along y) never match.
        let dim = 2;
        let mut states = [1.0, 0.0].repeat(Late::MAX_QUERY_TOKENS);
        states.extend([0.0, 1.0].repeat(70 - Late::MAX_QUERY_TOKENS));
        let q = QueryTokens::new(&states, dim, None);
        assert_eq!(q.scales.len(), Late::MAX_QUERY_TOKENS);
        let card = [Some(codes(&[1.0, 0.0], dim))];
        let store = CardTokens::new(dim, 0, card.to_vec());
        let m = store.maxsim(0, &q).unwrap_or(f32::NAN);
        assert!((m - 1.0).abs() < 0.01, "{m}");
    }

    #[test]
    fn the_streamed_file_is_its_layout_past_the_write_blocks() {
        // 3 cards of 12,000 tokens of 4 dimensions, projected on 2: the scales (144 KB) and the
        // codes (72 KB) run past the 64 KiB blocks the file is streamed in. The bytes are the
        // layout's, field by field.
        let dim = 4;
        let card = |k: usize| {
            let states: Vec<f32> = (0..12_000 * dim)
                .map(|i| (((i * 7 + k * 13) % 23) as f32 - 11.0) / 11.0)
                .collect();
            Some(codes(&states, dim))
        };
        let store = CardTokens::new(dim, 2, vec![card(0), None, card(1), card(2)]);
        let p = store.projection.as_ref().expect("projected");
        let mut want = Vec::new();
        want.extend_from_slice(MAGIC);
        for n in [dim, 2, 4, 36_000] {
            want.extend_from_slice(&u32::try_from(n).unwrap_or(0).to_le_bytes());
        }
        for f in p.mean.iter().chain(&p.axes_t) {
            want.extend_from_slice(&f.to_le_bytes());
        }
        for o in [0u32, 12_000, 12_000, 24_000, 36_000] {
            want.extend_from_slice(&o.to_le_bytes());
        }
        for s in &store.scales {
            want.extend_from_slice(&s.to_le_bytes());
        }
        want.extend(store.codes.iter().map(|&c| c.to_le_bytes()[0]));
        assert_eq!(store.codes.len(), 36_000 * 2);
        let mut got = Vec::new();
        store.write_to(&mut got).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(got.len(), want.len());
        assert!(got == want, "the streamed file differs from its layout");
        let back = CardTokens::from_bytes(got, 4, dim).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!((back.offsets, back.scales), (store.offsets, store.scales));
    }

    #[test]
    fn the_file_reads_back_and_refuses_another_index() {
        let dim = 3;
        let cards = [Some(codes(&[0.1, -0.2, 0.3, 1.0, 0.0, 0.0], dim)), None];
        let store = CardTokens::new(dim, 0, cards.to_vec());
        let bytes = store.to_bytes();
        let back = CardTokens::from_bytes(bytes.clone(), 2, dim).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(back.to_bytes(), bytes);
        assert_eq!(back.offsets, vec![0, 2, 2]);
        assert!(
            CardTokens::from_bytes(bytes.clone(), 3, dim).is_err(),
            "skill count"
        );
        assert!(
            CardTokens::from_bytes(bytes.clone(), 2, 4).is_err(),
            "dimension"
        );
        assert!(CardTokens::from_bytes(bytes[..bytes.len() - 1].to_vec(), 2, dim).is_err());
        assert!(CardTokens::from_bytes(b"SKGLATE0".to_vec(), 2, dim).is_err());
        // The first version (no width, no projection in the header) still reads.
        let mut legacy = b"SKGLATE1".to_vec();
        legacy.extend_from_slice(&bytes[8..12]);
        legacy.extend_from_slice(&bytes[16..]);
        let old = CardTokens::from_bytes(legacy.clone(), 2, dim).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(old.to_bytes(), bytes);
        assert!(CardTokens::from_bytes(legacy[..legacy.len() - 1].to_vec(), 2, dim).is_err());
    }

    #[test]
    fn projected_tokens_match_as_their_centered_states() {
        // Every card token lies in the plane z = 0.5: two directions hold all of their
        // variation, so the projection loses nothing and a match is the cosine of the tokens
        // centered on their mean (0, 0, 0.5). Card 0: (±1, 0, 0.5); card 1: (0, ±1, 0.5).
        let dim = 3;
        // Each token twice: a fit of two directions needs eight tokens.
        let cards = [
            Some(codes(&[1.0, 0.0, 0.5, -1.0, 0.0, 0.5].repeat(2), dim)),
            Some(codes(&[0.0, 1.0, 0.5, 0.0, -1.0, 0.5].repeat(2), dim)),
        ];
        let store = CardTokens::new(dim, 2, cards.to_vec());
        assert_eq!(store.width(), 2);
        assert_eq!(store.codes.len(), 8 * 2);
        // Half of them (one card's) are too few: the whole width is kept.
        let few = CardTokens::new(dim, 2, cards[..1].to_vec());
        assert_eq!(few.width(), dim);
        // Query tokens (2, 0, 0.5) → centered (2, 0, 0): cosine 1 with (1, 0, 0), 0 with
        // (0, ±1, 0); (0.5, 0.5, 0.5) → (0.5, 0.5, 0): 1/√2 with either card's best.
        let q = store.query(&[2.0, 0.0, 0.5, 0.5, 0.5, 0.5]);
        let m0 = store.maxsim(0, &q).unwrap_or(f32::NAN);
        let m1 = store.maxsim(1, &q).unwrap_or(f32::NAN);
        let r = std::f32::consts::FRAC_1_SQRT_2;
        assert!((m0 - f32::midpoint(1.0, r)).abs() < 0.02, "{m0}");
        assert!((m1 - r / 2.0).abs() < 0.02, "{m1}");
        // Unprojected, the shared z lifts every match: the projection is what removes it.
        let whole = CardTokens::new(dim, 0, cards.to_vec());
        assert_eq!(whole.width(), dim);
        let m1_whole = whole
            .maxsim(1, &whole.query(&[2.0, 0.0, 0.5, 0.5, 0.5, 0.5]))
            .unwrap_or(f32::NAN);
        assert!(m1_whole > m1 + 0.1, "{m1_whole} vs {m1}");
        // The file carries the projection: read back, the same bytes and the same matches.
        let bytes = store.to_bytes();
        let back = CardTokens::from_bytes(bytes.clone(), 2, dim).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(back.to_bytes(), bytes);
        assert_eq!(
            back.maxsim(0, &back.query(&[2.0, 0.0, 0.5])),
            store.maxsim(0, &store.query(&[2.0, 0.0, 0.5]))
        );
        assert!(CardTokens::from_bytes(bytes[..bytes.len() - 1].to_vec(), 2, dim).is_err());
        assert!(
            CardTokens::from_bytes(bytes.clone(), 2, 4).is_err(),
            "dimension"
        );
    }

    #[test]
    fn reorder_mixes_the_two_z_scores() {
        // Fused 3, 2, 1 (z ≈ 1.22, 0, −1.22); MaxSim 0, 0, 1 (z ≈ −0.71, −0.71, 1.41).
        let fused = [3.0, 2.0, 1.0];
        let late = [Some(0.0), Some(0.0), Some(1.0)];
        // Weight 0.3: 1.01, −0.21, −0.80 → unchanged.
        assert_eq!(reorder(&fused, &late, 0.3), vec![0, 1, 2]);
        // Weight 1: 0.51, −0.71, 0.20 → the third passes the second.
        assert_eq!(reorder(&fused, &late, 1.0), vec![0, 2, 1]);
        // Weight 2: −0.20, −1.41, 1.61 → the third first.
        assert_eq!(reorder(&fused, &late, 2.0), vec![2, 0, 1]);
        // A candidate without a MaxSim counts at the others' mean; no variation: fused order.
        assert_eq!(
            reorder(&fused, &[None, Some(0.5), Some(0.5)], 5.0),
            vec![0, 1, 2]
        );
    }
}
