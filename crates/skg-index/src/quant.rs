//! Int8 codes of the dense rows, for the first pass of the exact scan.
//!
//! The exact scan streams every row's 384 `f32` (22.7 MB over the shared registries' 14,807
//! rows, ~0.75 ms a query: memory-bound). Each row is also kept as `i8` codes with one scale
//! (a quarter of the bytes); a query's cosine with a row is first *bounded* from the codes,
//! and only the skills whose bound can reach the `keep`-th best are scored exactly, on their
//! `f32` rows. The bound is a proof, not a guess, so the result is the exact scan's, skill for
//! skill and bit for bit:
//!
//! A row `x` is coded as `s·a` (`a` in −127..=127, `s = max|x| / 127`), so `|x_i − s·a_i| ≤ s/2`;
//! the query `v` likewise as `t·b`. With `x = x̂ + e`, `v = v̂ + f`:
//! `x·v − x̂·v̂ = x̂·f + e·v̂ + e·f`, so `|x·v − s·t·(a·b)| ≤ (t/2)·‖x̂‖₁ + (s/2)·‖v̂‖₁ + n·s·t/4`
//! (`n` the dimension). `a·b` is an exact integer. The `f32` arithmetic is covered on top, in
//! proportion to the vectors' size: the exact dot product (eight partial sums of `n/8` products,
//! then their sum) is within `(n/8 + 16)·ε·‖x‖·‖v‖` of the real one, the codes' own rounding
//! within a thousandth of the bound, `s·t·(a·b)` within `4ε` of itself; an absolute `1e-6`
//! covers underflow. A bound that is not finite (values near `f32::MAX`) is no bound: such a
//! row is always rescored.

/// Added to every bound, for underflow (see the module's note for the relative terms).
const SLACK: f32 = 1e-6;

/// Dimensions past which `a·b` could overflow an `i32` (127² · 2^17 < 2^31): such rows are
/// scanned as floats.
const MAX_DIM: usize = 1 << 17;

/// Each row's codes, scale and coded L1 norm.
#[derive(Debug, Default)]
pub(crate) struct Coded {
    dim: usize,
    codes: Vec<i8>,
    /// `s` per row; NaN for a row with a non-finite value (never bounded: always a candidate).
    scale: Vec<f32>,
    /// `‖x̂‖₁ = s·Σ|a|` per row.
    l1: Vec<f32>,
    /// `‖x‖₂` per row.
    norm: Vec<f32>,
}

/// A query's codes.
#[derive(Debug)]
pub(crate) struct QueryCodes {
    codes: Vec<i8>,
    scale: f32,
    l1: f32,
    norm: f32,
}

/// `x` as codes and scale: `s = max|x| / 127`, `a_i = round(x_i / s)`; `None` when a value is
/// not finite. An all-zero `x` has scale 0 and zero codes.
pub(crate) fn code(x: &[f32], out: &mut Vec<i8>) -> Option<f32> {
    if x.iter().any(|f| !f.is_finite()) {
        out.extend(std::iter::repeat_n(0, x.len()));
        return None;
    }
    let max = x.iter().fold(0f32, |m, f| m.max(f.abs()));
    if max == 0.0 {
        out.extend(std::iter::repeat_n(0, x.len()));
        return Some(0.0);
    }
    let s = max / 127.0;
    #[allow(
        clippy::cast_possible_truncation,
        reason = "|x_i / s| ≤ 127 by the choice of s; the clamp guards rounding"
    )]
    out.extend(x.iter().map(|f| (f / s).round().clamp(-127.0, 127.0) as i8));
    Some(s)
}

/// `Σ a_i·b_i`, exact (|a_i·b_i| ≤ 127², so up to [`MAX_DIM`] dimensions fit an `i32`); sixteen
/// partial sums each taking two products 16 lanes apart, the form the compiler turns into
/// multiply-adds of whole 16-bit registers (sign-extend, `vpmaddwd`: sixteen products an
/// instruction with AVX2; one product a partial sum compiled mostly to 32-bit multiplies at half
/// the width — stop 49). Compiled for AVX2 beside the baseline (SSE2, 128-bit lanes), the
/// version chosen by the CPU at run time (`multiversion`): integer arithmetic, so both give the
/// same sum and an answer never depends on the machine. 512-bit lanes (AVX-512) were no faster
/// on this project's machine and slowed the whole route in some runs (docs/retrieval.md, stop
/// 38). Kept out of line: inlined into the scan's loop, the same code was compiled to one byte
/// at a time.
#[multiversion::multiversion(targets("x86_64+avx2"), attrs(inline(never)))]
pub(crate) fn idot(a: &[i8], b: &[i8]) -> i32 {
    dot(a, b)
}

/// `Σ a_i·b_i` of two code vectors (8- or 16-bit), exact in `i32` for codes of at most 127 in
/// magnitude, in the form [`idot`] describes; inlined, so compiled for the target of the
/// multiversioned function that calls it ([`idot`], late interaction's kernel).
#[allow(
    clippy::inline_always,
    reason = "compiled inside multiversioned callers, with their target's instructions"
)]
#[inline(always)]
pub(crate) fn dot<T: Copy + Into<i32>>(a: &[T], b: &[T]) -> i32 {
    let mut acc = [0i32; 16];
    let (ac, ar) = a.split_at(a.len() - a.len() % 32);
    let (bc, br) = b.split_at(ac.len());
    for (x, y) in ac.chunks_exact(32).zip(bc.chunks_exact(32)) {
        for i in 0..16 {
            acc[i] += x[i].into() * y[i].into() + x[i + 16].into() * y[i + 16].into();
        }
    }
    let tail: i32 = ar
        .iter()
        .zip(br)
        .map(|(x, y)| (*x).into() * (*y).into())
        .sum();
    acc.iter().sum::<i32>() + tail
}

pub(crate) fn l2(x: &[f32]) -> f32 {
    x.iter().map(|f| f * f).sum::<f32>().sqrt()
}

fn l1(codes: &[i8], scale: f32) -> f32 {
    #[allow(
        clippy::cast_precision_loss,
        reason = "a sum of |codes| ≤ 127 · dim is exact in f32 below 2^24"
    )]
    let sum = codes.iter().map(|&c| i32::from(c).abs()).sum::<i32>() as f32;
    scale * sum
}

impl Coded {
    /// The codes of `vectors` (rows of `dim`).
    /// The codes of `vectors` (rows of `dim`); none past [`MAX_DIM`] (every query then scans
    /// the floats).
    pub(crate) fn new(vectors: &[f32], dim: usize) -> Coded {
        if dim == 0 || dim > MAX_DIM {
            return Coded::default();
        }
        let rows = vectors.len() / dim;
        let mut codes = Vec::with_capacity(rows * dim);
        let (mut scale, mut l1s, mut norm) = (
            Vec::with_capacity(rows),
            Vec::with_capacity(rows),
            Vec::with_capacity(rows),
        );
        for x in vectors.chunks_exact(dim) {
            let start = codes.len();
            let s = code(x, &mut codes).unwrap_or(f32::NAN);
            l1s.push(l1(&codes[start..], s));
            norm.push(l2(x));
            scale.push(s);
        }
        Coded {
            dim,
            codes,
            scale,
            l1: l1s,
            norm,
        }
    }

    /// The query's codes; `None` when it has a non-finite value or the wrong length.
    pub(crate) fn query(&self, v: &[f32]) -> Option<QueryCodes> {
        if v.len() != self.dim || self.dim == 0 {
            return None;
        }
        let mut codes = Vec::with_capacity(v.len());
        let scale = code(v, &mut codes)?;
        let l1 = l1(&codes, scale);
        Some(QueryCodes {
            codes,
            scale,
            l1,
            norm: l2(v),
        })
    }

    /// Bounds `(lo, hi)` on the exact (`f32`) cosine of `row` with the query: `(−∞, +∞)` for a
    /// row with a non-finite value.
    pub(crate) fn bounds(&self, row: usize, q: &QueryCodes) -> (f32, f32) {
        let s = self.scale[row];
        if s.is_nan() {
            return (f32::NEG_INFINITY, f32::INFINITY);
        }
        let a = &self.codes[row * self.dim..(row + 1) * self.dim];
        #[allow(
            clippy::cast_precision_loss,
            reason = "|a·b| ≤ 127² · dim is exact in f32 below 2^24 (1,040 dimensions)"
        )]
        let (approx, n) = (s * q.scale * idot(a, &q.codes) as f32, self.dim as f32);
        let coded = q.scale / 2.0 * self.l1[row] + s / 2.0 * q.l1 + n * s * q.scale / 4.0;
        let rounding = (n / 8.0 + 16.0) * f32::EPSILON * self.norm[row] * q.norm
            + 4.0 * f32::EPSILON * approx.abs();
        let err = coded * 1.001 + rounding + SLACK;
        let (lo, hi) = (approx - err, approx + err);
        if lo.is_finite() && hi.is_finite() {
            (lo, hi)
        } else {
            (f32::NEG_INFINITY, f32::INFINITY)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn codes_follow_their_definition() {
        // max |x| = 0.5, so s = 0.5 / 127 and x / s = (127, −63.5, 0, 25.4) → (127, −64, 0, 25).
        let c = Coded::new(&[0.5, -0.25, 0.0, 0.1], 4);
        assert_eq!(c.codes, vec![127, -64, 0, 25]);
        assert!((c.scale[0] - 0.5 / 127.0).abs() < 1e-9);
        assert!((c.l1[0] - (127.0 + 64.0 + 25.0) * 0.5 / 127.0).abs() < 1e-6);
        // A non-finite row is never bounded; an all-zero row has scale 0.
        let c = Coded::new(&[f32::NAN, 0.0, 0.0, 0.0, 0.0], 5);
        assert_eq!(
            c.bounds(0, &c.query(&[1.0, 0.0, 0.0, 0.0, 0.0]).expect("finite")),
            (f32::NEG_INFINITY, f32::INFINITY)
        );
        let z = Coded::new(&[0.0; 3], 3);
        let (lo, hi) = z.bounds(0, &z.query(&[0.6, 0.8, 0.0]).expect("finite"));
        assert!(lo <= 0.0 && hi >= 0.0 && hi - lo <= 2.0 * SLACK + 1e-7);
        assert!(z.query(&[f32::INFINITY, 0.0, 0.0]).is_none());
        assert!(z.query(&[0.0, 0.0]).is_none());
    }

    /// Every coordinate of `x` and `v` sits 0.49 of a step above its code, all positive, one at
    /// the code 127 exactly: the three error terms add up with one sign, so the float cosine lies
    /// near the bound's edge — a bound narrowed by a tenth (or missing a term) fails.
    #[test]
    fn the_bound_is_nearly_reached() {
        let (step_x, step_v, dim) = (0.01f32, 0.02f32, 64usize);
        // The first coordinate at the code 127, the others 0.49 of a step above `code`.
        let near_edge = |step: f32, code: f32| -> Vec<f32> {
            (0..dim)
                .map(|i| if i == 0 { 127.0 } else { code + 0.49 } * step)
                .collect()
        };
        let (row, query) = (near_edge(step_x, 40.0), near_edge(step_v, 90.0));
        let c = Coded::new(&row, dim);
        assert_eq!(c.codes[0], 127);
        assert!(c.codes[1..].iter().all(|&a| a == 40));
        let q = c.query(&query).expect("finite");
        let (lo, hi) = c.bounds(0, &q);
        let exact = crate::search::dot(&row, &query);
        let (mid, half) = (f32::midpoint(lo, hi), (hi - lo) / 2.0);
        assert!(lo <= exact && exact <= hi, "{lo} ≤ {exact} ≤ {hi}");
        assert!(exact - mid > 0.9 * half, "{} of {half}", exact - mid);
        // Past MAX_DIM there are no codes, and every query scans the floats.
        assert!(
            Coded::new(&[0.0; 4], MAX_DIM + 1)
                .query(&[0.0; 4])
                .is_none()
        );
        // Values near f32::MAX give no finite bound: the row is always rescored.
        let big = Coded::new(&[f32::MAX / 2.0, 0.0], 2);
        assert_eq!(
            big.bounds(0, &big.query(&[f32::MAX / 2.0, 0.0]).expect("finite")),
            (f32::NEG_INFINITY, f32::INFINITY)
        );
    }

    #[test]
    fn idot_is_the_integer_dot_product() {
        let a: Vec<i8> = (0..37i32)
            .map(|i| i8::try_from(i * 7 % 255 - 127).expect("in range"))
            .collect();
        let b: Vec<i8> = (0..37i32)
            .map(|i| i8::try_from(i * 13 % 255 - 127).expect("in range"))
            .collect();
        let want: i32 = a
            .iter()
            .zip(&b)
            .map(|(x, y)| i32::from(*x) * i32::from(*y))
            .sum();
        assert_eq!(idot(&a, &b), want);
        assert_eq!(idot(&[-127; 32], &[-127; 32]), 32 * 127 * 127);
    }

    proptest::proptest! {
        /// The version this CPU runs (AVX2 or the baseline) is the definition, at every
        /// length: whole 32-byte chunks, a tail, or only a tail.
        #[test]
        fn idot_is_the_definition_at_any_length(
            pairs in proptest::collection::vec((-127i8..=127, -127i8..=127), 0..1200)
        ) {
            let (a, b): (Vec<i8>, Vec<i8>) = pairs.into_iter().unzip();
            let want: i32 = a.iter().zip(&b).map(|(x, y)| i32::from(*x) * i32::from(*y)).sum();
            proptest::prop_assert_eq!(idot(&a, &b), want);
        }
    }
}
