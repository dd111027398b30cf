//! The principal directions of a set of token states: what late interaction's card and query
//! tokens are projected on before they are coded ([`crate::late`]).
//!
//! A token state of the embedding model has 384 dimensions, but the tokens of one catalog's
//! cards vary along far fewer: measured over the shared registries' cards (docs/retrieval.md,
//! the late-interaction cost table and "Made cheap, and the default"), matching on the first 128
//! principal directions (centered, then each token re-normalized) gives the full states' first
//! places within one query on each judged set, at a third of the codes and of the multiply-adds;
//! 64 directions lose first places.
//!
//! The fit is repeatable: a fixed sample (every n-th token, [`sample_step`]), sums in `f64` in a
//! fixed order, the symmetric eigendecomposition of the covariance (linfa-linalg, pure Rust), the
//! directions ordered by variance (ties by position) and each one's sign fixed (its largest
//! component positive): the same input on the same machine gives the same bytes. Across machines
//! it need not, to the last bit: linfa-linalg's matrix products go through ndarray's
//! `matrixmultiply`, which picks its kernel (with or without fused multiply-add) by CPU — as the
//! embedding model's ONNX Runtime kernels already make the vectors themselves. Projection at
//! query time multiplies in a fixed order (one output lane per direction, no reassociation), so
//! the AVX2 and baseline versions agree to the bit.

use linfa_linalg::eigh::EighInto as _;

/// At most this many tokens are sampled for the fit (evenly, every n-th): a 384-dimensional
/// covariance is well estimated long before, and the fit stays a fraction of a second.
pub(crate) const MAX_SAMPLE: usize = 32_768;

/// A fit needs at least this many sampled tokens a direction (fewer: the states are kept whole):
/// a covariance of `n` centered tokens has rank below `n`, and directions past its rank (or
/// barely inside it) are whatever the eigensolver returns, which would still weigh on every
/// re-normalized query token.
pub(crate) const MIN_SAMPLE_PER_DIRECTION: usize = 4;

/// Every how many tokens one is sampled, of `total`, for at most [`MAX_SAMPLE`].
pub(crate) fn sample_step(total: usize) -> usize {
    total.div_ceil(MAX_SAMPLE).max(1)
}

/// A centered projection on `k` principal directions of `dim`-dimensional states.
#[derive(Debug, Clone, PartialEq, Default)]
pub(crate) struct Projection {
    pub(crate) dim: usize,
    pub(crate) k: usize,
    /// The fitted states' mean (`dim`).
    pub(crate) mean: Vec<f32>,
    /// The directions, transposed: `dim` rows of `k` (row `i` holds every direction's `i`-th
    /// component), the layout [`Projection::apply`] reads in order.
    pub(crate) axes_t: Vec<f32>,
}

impl Projection {
    /// The first `k` principal directions of the sampled `tokens` (`dim` floats each; a token of
    /// another length or with a non-finite value is left out); `None` when `k` is 0 or not below
    /// `dim`, fewer than [`MIN_SAMPLE_PER_DIRECTION`] tokens a direction are given, or the
    /// eigendecomposition fails.
    pub(crate) fn fit<'a>(
        dim: usize,
        k: usize,
        tokens: impl Iterator<Item = &'a [f32]>,
    ) -> Option<Projection> {
        if k == 0 || k >= dim {
            return None;
        }
        let sample: Vec<&[f32]> = tokens
            .filter(|t| t.len() == dim && t.iter().all(|f| f.is_finite()))
            .collect();
        if sample.len() < MIN_SAMPLE_PER_DIRECTION * k {
            return None;
        }
        #[allow(clippy::cast_precision_loss, reason = "a sample count")]
        let size = sample.len() as f64;
        let mut mean = vec![0f64; dim];
        for t in &sample {
            for (m, x) in mean.iter_mut().zip(*t) {
                *m += f64::from(*x);
            }
        }
        for m in &mut mean {
            *m /= size;
        }
        // The upper triangle of Σ (x − μ)(x − μ)ᵀ, one row at a time: the inner loop runs over
        // independent sums, so it vectorizes without reordering any of them.
        let mut cov = vec![0f64; dim * dim];
        let mut centered = vec![0f64; dim];
        for t in &sample {
            for ((ci, x), m) in centered.iter_mut().zip(*t).zip(&mean) {
                *ci = f64::from(*x) - m;
            }
            for i in 0..dim {
                let ci = centered[i];
                for (s, cj) in cov[i * dim + i..(i + 1) * dim]
                    .iter_mut()
                    .zip(&centered[i..])
                {
                    *s += ci * cj;
                }
            }
        }
        for i in 0..dim {
            for j in 0..i {
                cov[i * dim + j] = cov[j * dim + i];
            }
        }
        let cov = ndarray_linfa::Array2::from_shape_vec((dim, dim), cov).ok()?;
        let (values, vectors) = cov.eigh_into().ok()?;
        let mut order: Vec<usize> = (0..dim).collect();
        order.sort_by(|&a, &b| values[b].total_cmp(&values[a]).then(a.cmp(&b)));
        let mut axes_t = vec![0f32; dim * k];
        for (d, &col) in order.iter().take(k).enumerate() {
            let v = vectors.column(col);
            // The sign: the component of largest magnitude (the first of equals) is positive.
            let lead = (0..dim).fold(
                0,
                |best, i| {
                    if v[i].abs() > v[best].abs() { i } else { best }
                },
            );
            let sign = if v[lead] < 0.0 { -1.0 } else { 1.0 };
            for i in 0..dim {
                #[allow(clippy::cast_possible_truncation, reason = "a unit vector's component")]
                let a = (sign * v[i]) as f32;
                axes_t[i * k + d] = a;
            }
        }
        #[allow(clippy::cast_possible_truncation, reason = "a mean of f32 values")]
        let mean = mean.iter().map(|m| *m as f32).collect();
        Some(Projection {
            dim,
            k,
            mean,
            axes_t,
        })
    }

    /// `out = Aᵀ-projection of (x − mean)`: the `k` coordinates of `x` (`dim` floats) on the
    /// directions, unnormalized. `out` has `k` floats.
    pub(crate) fn apply(&self, x: &[f32], out: &mut [f32]) {
        project(&self.mean, &self.axes_t, self.k, x, out);
    }
}

/// Directions a pass of [`project`] accumulates in registers (four of AVX2's 8-float lanes).
const BLOCK: usize = 32;

/// `out[d] = Σ_i (x_i − mean_i) · axes_t[i·k + d]`, summed over `i` in order for every `d` (the
/// lanes are the directions, never a reordered sum, so every CPU gives the same bits). The
/// directions are taken [`BLOCK`] at a time, their sums held in registers over the whole of `x`:
/// a multiply and an add per 8 directions and input value, instead of also loading and storing
/// every sum at each input value (stop 50: the query's projection was a third of the stage).
/// `out` has `k` floats.
#[multiversion::multiversion(targets("x86_64+avx2"))]
fn project(mean: &[f32], axes_t: &[f32], k: usize, x: &[f32], out: &mut [f32]) {
    debug_assert_eq!(out.len(), k, "one sum a direction");
    // Centered on the fly (a subtraction per input value and block, no allocation: this runs
    // for every query token and, in a build, every card token).
    let rows = || {
        x.iter()
            .zip(mean)
            .map(|(xi, mi)| xi - mi)
            .zip(axes_t.chunks_exact(k))
    };
    let blocks = k / BLOCK;
    for (b, o) in out[..blocks * BLOCK].chunks_exact_mut(BLOCK).enumerate() {
        let mut acc = [0f32; BLOCK];
        for (c, row) in rows() {
            for (s, a) in acc.iter_mut().zip(&row[b * BLOCK..(b + 1) * BLOCK]) {
                *s += c * a;
            }
        }
        o.copy_from_slice(&acc);
    }
    for (d, o) in out.iter_mut().enumerate().take(k).skip(blocks * BLOCK) {
        *o = 0.0;
        for (c, row) in rows() {
            *o += c * row[d];
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `n` copies of each of `pts`.
    fn repeated<const D: usize>(pts: &[[f32; D]], n: usize) -> Vec<[f32; D]> {
        pts.iter()
            .flat_map(|p| std::iter::repeat_n(*p, n))
            .collect()
    }

    #[test]
    fn the_directions_are_the_covariance_s_largest_in_order() {
        // Around the mean (1, 1, 1): ±3 along x, ±2 along y, ±1 along z (variances 3, 4/3,
        // 1/3): the first two directions are x and y, each with a positive sign.
        let mut pts = Vec::new();
        for (axis, r) in [(0usize, 3.0f32), (1, 2.0), (2, 1.0)] {
            for s in [r, -r] {
                let mut p = [1.0f32; 3];
                p[axis] += s;
                pts.push(p);
            }
        }
        let pts = repeated(&pts, 2);
        let p = Projection::fit(3, 2, pts.iter().map(|p| &p[..])).expect("a projection");
        for (got, want) in p.mean.iter().zip([1.0, 1.0, 1.0]) {
            assert!((got - want).abs() < 1e-6, "{:?}", p.mean);
        }
        let axis = |d: usize| -> Vec<f32> { (0..3).map(|i| p.axes_t[i * 2 + d]).collect() };
        for (got, want) in axis(0).iter().zip([1.0, 0.0, 0.0]) {
            assert!((got - want).abs() < 1e-6, "{:?}", axis(0));
        }
        for (got, want) in axis(1).iter().zip([0.0, 1.0, 0.0]) {
            assert!((got - want).abs() < 1e-6, "{:?}", axis(1));
        }
        // (4, 0.5, 7) − mean = (3, −0.5, 6): coordinates 3 on x, −0.5 on y; z is dropped.
        let mut out = [0f32; 2];
        p.apply(&[4.0, 0.5, 7.0], &mut out);
        assert!(
            (out[0] - 3.0).abs() < 1e-5 && (out[1] + 0.5).abs() < 1e-5,
            "{out:?}"
        );
    }

    #[test]
    fn no_projection_when_it_would_not_reduce_or_the_sample_is_too_small() {
        let pts = repeated(&[[1.0f32, 0.0], [0.0, 1.0], [1.0, 1.0]], 2);
        let it = || pts.iter().map(|p| &p[..]);
        assert!(Projection::fit(2, 2, it()).is_none(), "k = dim");
        assert!(Projection::fit(2, 0, it()).is_none(), "k = 0");
        // One direction needs MIN_SAMPLE_PER_DIRECTION (4) tokens: 3 are not enough, 6 are.
        assert!(Projection::fit(2, 1, it().take(3)).is_none(), "3 tokens");
        assert!(Projection::fit(2, 1, it()).is_some());
    }

    proptest::proptest! {
        /// The kernel (the version this CPU runs) is its definition, bit for bit: each
        /// direction's sum over the input values in order, at widths below, at and past a
        /// register block.
        #[test]
        fn project_is_the_ordered_sum(
            dim in 1usize..24,
            k in 1usize..80,
            seed in proptest::collection::vec(-1.0f32..1.0, 24 * 81),
        ) {
            let x = &seed[..dim];
            let mean = &seed[dim..2 * dim];
            let axes_t = &seed[2 * dim..2 * dim + dim * k];
            let mut out = vec![f32::NAN; k];
            project(mean, axes_t, k, x, &mut out);
            for (d, got) in out.iter().enumerate() {
                let mut want = 0f32;
                for i in 0..dim {
                    want += (x[i] - mean[i]) * axes_t[i * k + d];
                }
                proptest::prop_assert_eq!(got.to_bits(), want.to_bits(), "direction {}", d);
            }
        }
    }

    #[test]
    fn the_sample_step_keeps_at_most_the_maximum() {
        assert_eq!(sample_step(0), 1);
        assert_eq!(sample_step(MAX_SAMPLE), 1);
        assert_eq!(sample_step(MAX_SAMPLE + 1), 2);
        // 100,000 tokens: every 4th, 25,000 of them.
        assert_eq!(sample_step(100_000), 4);
        assert!(100_000usize.div_ceil(sample_step(100_000)) <= MAX_SAMPLE);
    }
}
