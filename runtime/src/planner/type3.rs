//! Type 3's geometry, once for every backend (FINUFFT's scheme, Lee & Greengard with any
//! kernel): centre both point sets, scale the sources onto a spreading grid and the targets
//! into the band of an inner type 2 on that grid's modes.
//!
//! With `x = c_x + x'`, `s = c_s + s'`, `|x'| ≤ X`, `|s'| ≤ S`:
//! `e^{±i s·x} = e^{±i s·c_x} · e^{±i c_s·x'} · e^{±i s'·x'}`. The last factor is computed
//! through a grid of `n ≥ 2σXS/π + w + 1` points with spacing `h = 2π/n`, after scaling
//! `x'' = x'/γ`, `t = γ s'` with `γ = n/(2σS)`, so that the spread sources fit inside
//! `[−π, π)` and the inner type 2 frequencies `h·t` stay inside `[−π/σ, π/σ]`, where the
//! kernel's Fourier transform `ψ̂` is well away from zero.

use super::limits::MAX_GRID_SIDE;
use super::validate::check_grid;
use crate::error::{NudtError, Result};
use nudt_gen::{plan as gplan, GenError, KernelSpec};

/// Bounding intervals `(lo, hi)` of a point set, one per dimension (`lo > hi` for no
/// points).
pub type Boxes = Vec<(f64, f64)>;

/// Centre and half-extent of the interval `(lo, hi)`; `(0, 0)` for an empty set (`lo > hi`).
/// Halved before they are added, so that points near ±f64::MAX do not overflow to ∞ (and a
/// NaN centre) where their interval is narrow.
pub fn centre_of((lo, hi): (f64, f64)) -> (f64, f64) {
    if lo > hi {
        (0.0, 0.0)
    } else {
        (lo / 2.0 + hi / 2.0, hi / 2.0 - lo / 2.0)
    }
}

/// Checks that a type 3's centring phases are finite for sources in the intervals
/// `sources[d]` and targets in `targets[d]`: `c_s·(x − c_x)` at each source and `s·c_x` at
/// each target, summed over the dimensions, are bounded by `Σ |c_s|·X` and
/// `Σ (|c_s| + S)·|c_x|`. Past f64's range a factor would be NaN, and so would the whole
/// transform, without an error (runtime/tests/fuzz.rs found it with a point at ±1e300).
/// Both methods (FINUFFT's and the Gaussian) centre their points this way.
pub fn check_phases(sources: &[(f64, f64)], targets: &[(f64, f64)]) -> Result<()> {
    let (mut pre, mut post) = (0.0f64, 0.0f64);
    for (&x, &s) in sources.iter().zip(targets) {
        let ((cx, xh), (cs, sh)) = (centre_of(x), centre_of(s));
        pre += cs.abs() * xh;
        post += (cs.abs() + sh) * cx.abs();
    }
    match pre.is_finite() && post.is_finite() {
        true => Ok(()),
        false => Err(NudtError::Type3Phase),
    }
}

/// Smallest half-extent [`safe_extents`] gives: the scale factors that divide by a
/// half-extent (`π/(σS)`, the Gaussian's `π/(RS)`) stay finite above it, and a set at
/// ±f64::MAX facing one within it still gets a small grid (`X·S ≤ 16`).
const MIN_EXTENT: f64 = 16.0 / f64::MAX;

/// Half-extents made safe for degenerate sets (FINUFFT's rule, `X·S ≥ 1`, which keeps the
/// grid sensible when either set collapses to a point), each at least `16 / f64::MAX`. Where
/// `X·S < 1` the smaller one is raised to the reciprocal of the larger, or both to 1 where
/// neither exceeds 1: never to the reciprocal of a subnormal, which overflows. Each is at
/// least the true half-extent, so the points always fit the grid: treating a subnormal
/// extent as a point was wrong where the other set sits near ±1e300 (runtime/tests/fuzz.rs:
/// sources within 1e-309 of 0 facing targets at ±f64::MAX have phases near 1).
pub fn safe_extents(xh: f64, sh: f64) -> (f64, f64) {
    let (xh, sh) = (xh.max(MIN_EXTENT), sh.max(MIN_EXTENT));
    if xh * sh >= 1.0 {
        (xh, sh)
    } else if xh.max(sh) <= 1.0 {
        (1.0, 1.0)
    } else if xh > sh {
        (xh, (1.0 / xh).max(MIN_EXTENT))
    } else {
        ((1.0 / sh).max(MIN_EXTENT), sh)
    }
}

/// The products `X_d·S_d` of the sources' and targets' half-extents per dimension, from
/// their bounding intervals: what σ is weighed against ([`super::sigma::type3_kernel`]).
pub fn extents(sources: &[(f64, f64)], targets: &[(f64, f64)]) -> Vec<f64> {
    sources
        .iter()
        .zip(targets)
        .map(|(&x, &s)| centre_of(x).1 * centre_of(s).1)
        .collect()
}

/// A grid side of at least `want` points (rounded up), or [`GenError::GridOverflow`] where
/// `want` is not finite or over [`MAX_GRID_SIDE`]: the one cut-off of every type 3 grid.
pub fn checked_side(want: f64) -> Result<usize> {
    if !want.is_finite() || want > MAX_GRID_SIDE as f64 {
        return Err(GenError::GridOverflow { modes: usize::MAX }.into());
    }
    Ok(want.ceil().max(0.0) as usize)
}

/// One dimension of a type 3: where both point sets sit and how they are scaled.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Axis {
    /// Centres of the sources and of the targets.
    pub cx: f64,
    pub cs: f64,
    /// Sources are spread at `(x − c_x)/γ`.
    pub inv_gamma: f64,
    /// Targets are interpolated at `h·γ·(s − c_s)`.
    pub h_gamma: f64,
    /// Half-extent of the targets (before [`safe_extents`]): the scaled targets lie within
    /// `h·γ` times it, where the correction's `ψ̂` is evaluated.
    pub s_half: f64,
    /// Spreading grid size.
    pub n: usize,
}

impl Axis {
    /// The axis for sources in the interval `x` and targets in `s` (`(lo, hi)` each).
    pub fn new(x: (f64, f64), s: (f64, f64), kernel: &KernelSpec) -> Result<Self> {
        Self::on_grid(x, s, kernel, 0)
    }

    /// [`Self::new`] on a spreading grid of at least `side` points: the sources then fill
    /// less of it, and `1/γ` shrinks with it, while the targets' band (`h·γ`) stays.
    fn on_grid(x: (f64, f64), s: (f64, f64), kernel: &KernelSpec, side: usize) -> Result<Self> {
        let sigma = kernel.upsampling.0;
        let (cx, xh) = centre_of(x);
        let (cs, sh) = centre_of(s);
        let (xs, ss) = safe_extents(xh, sh);
        // Products and quotients ordered so that none overflows where one set sits near
        // ±f64::MAX and the other within [`MIN_EXTENT`] (`2σS` alone would be ∞).
        let pi = std::f64::consts::PI;
        let want = xs * ss * (2.0 * sigma / pi) + kernel.width as f64 + 1.0;
        let want = checked_side(want)?.max(2 * kernel.width).max(side);
        let n = gplan::next_smooth(want).ok_or(GenError::GridOverflow { modes: want })?;
        // With `γ = n/(2σS)`: `1/γ = S·(2σ/n) ≤ π/X` (as `n ≥ 2σXS/π`) and `h·γ = (π/σ)/S`,
        // both finite for half-extents of at least [`MIN_EXTENT`].
        Ok(Axis {
            cx,
            cs,
            inv_gamma: ss * (2.0 * sigma / n as f64),
            h_gamma: (pi / sigma) / ss,
            s_half: sh,
            n,
        })
    }
}

/// Both grids of a type 3 for one pair of point sets.
#[derive(Clone, Debug, PartialEq)]
pub struct Geometry {
    pub axes: Vec<Axis>,
    /// The inner type 2's fine grid, whose modes are the spreading grid's points.
    pub inner: Vec<usize>,
}

impl Geometry {
    /// The grids for sources and targets in the bounding intervals `sources[d]` and
    /// `targets[d]`, both checked against the limits and `memory` (complex `T` values).
    pub fn new<T>(
        sources: &[(f64, f64)],
        targets: &[(f64, f64)],
        kernel: &KernelSpec,
        memory: Option<usize>,
    ) -> Result<Self> {
        check_phases(sources, targets)?;
        let axes = sources
            .iter()
            .zip(targets)
            .map(|(&x, &s)| Axis::new(x, s, kernel))
            .collect::<Result<Vec<_>>>()?;
        Self::with_axes::<T>(axes, kernel, memory)
    }

    /// One geometry per pair of point sets (`sets[b]`: the sources' and the targets'
    /// intervals), all on the same grids: each dimension's spreading grid is the largest
    /// that any pair needs, so that one batch of grids, one FFT and one deconvolution serve
    /// every transform (the GPUs' type 3 with a set per transform). A pair on a grid larger
    /// than its own keeps its accuracy: its sources fill less of the grid. With several
    /// pairs, an error of one is [`NudtError::InTransform`] naming it.
    pub fn for_sets<T>(
        sets: &[(Boxes, Boxes)],
        kernel: &KernelSpec,
        memory: Option<usize>,
    ) -> Result<Vec<Self>> {
        let named = |b: usize, error: NudtError| match sets.len() {
            1 => error,
            _ => NudtError::InTransform {
                index: b,
                error: Box::new(error),
            },
        };
        let own = sets
            .iter()
            .enumerate()
            .map(|(b, (x, s))| Self::new::<T>(x, s, kernel, memory).map_err(|e| named(b, e)))
            .collect::<Result<Vec<_>>>()?;
        let sides: Vec<usize> = (0..own.first().map_or(0, |g| g.axes.len()))
            .map(|d| own.iter().map(|g| g.axes[d].n).max().unwrap_or(0))
            .collect();
        sets.iter()
            .enumerate()
            .map(|(b, (x, s))| {
                let axes = (x.iter().zip(s).zip(&sides))
                    .map(|((&x, &s), &side)| Axis::on_grid(x, s, kernel, side))
                    .collect::<Result<Vec<_>>>();
                axes.and_then(|axes| Self::with_axes::<T>(axes, kernel, memory))
                    .map_err(|e| named(b, e))
            })
            .collect()
    }

    /// The geometry of `axes`: the inner grid for their spreading grid, both checked.
    fn with_axes<T>(axes: Vec<Axis>, kernel: &KernelSpec, memory: Option<usize>) -> Result<Self> {
        let n = Self::spread_of(&axes);
        check_grid::<T>(&n, memory)?;
        let inner = n
            .iter()
            .map(|&nd| gplan::fine_size(nd, kernel))
            .collect::<std::result::Result<Vec<_>, _>>()?;
        check_grid::<T>(&inner, memory)?;
        Ok(Geometry { axes, inner })
    }

    fn spread_of(axes: &[Axis]) -> Vec<usize> {
        axes.iter().map(|a| a.n).collect()
    }

    /// The spreading grid.
    pub fn spread(&self) -> Vec<usize> {
        Self::spread_of(&self.axes)
    }

    /// Per-dimension values (`f` of each axis), padded to three with `pad`: the GPU kernels'
    /// arguments.
    pub fn per_axis(&self, f: impl Fn(&Axis) -> f64, pad: f64) -> [f64; 3] {
        std::array::from_fn(|d| self.axes.get(d).map_or(pad, &f))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use nudt_gen::{KernelKind, Upsampling};

    /// Subnormal extents and points near ±f64::MAX: finite centres and scales (NaN here was
    /// a NaN transform without an error, found by runtime/tests/fuzz.rs).
    #[test]
    fn degenerate_extents_give_finite_scales() {
        let k = KernelSpec::for_width(KernelKind::Pswf, 8, Upsampling(2.0)).unwrap();
        let tiny = f64::MIN_POSITIVE / 4.0;
        let cases = [
            ((0.0, tiny), (-3.0, 3.0)),
            ((-3.0, 3.0), (tiny, 2.0 * tiny)),
            ((0.0, tiny), (0.0, tiny)),
            ((f64::MAX, f64::MAX), (-3.0, 3.0)),
            ((0.0, 0.0), (-f64::MAX, -f64::MAX)),
        ];
        for (x, s) in cases {
            let a = Axis::new(x, s, &k).unwrap();
            let all = [a.cx, a.cs, a.inv_gamma, a.h_gamma, a.s_half];
            assert!(all.iter().all(|v| v.is_finite()), "{x:?} {s:?}: {a:?}");
        }
    }

    #[test]
    fn sources_fit_the_grid_and_targets_the_band() {
        let k = KernelSpec::for_width(KernelKind::Pswf, 8, Upsampling(1.5)).unwrap();
        let (x, s) = ((-3.0, 5.0), (10.0, 50.0));
        let g = Geometry::new::<f64>(&[x], &[s], &k, None).unwrap();
        let a = g.axes[0];
        assert_eq!((a.cx, a.cs, a.s_half), (1.0, 30.0, 20.0));
        // Scaled sources within [−π, π), scaled targets within the band [−π/σ, π/σ].
        assert!(4.0 * a.inv_gamma <= std::f64::consts::PI);
        let band = a.h_gamma * a.s_half;
        assert!((band - std::f64::consts::PI / 1.5).abs() < 1e-12, "{band}");
        assert!(a.n as f64 >= 2.0 * 1.5 * 4.0 * 20.0 / std::f64::consts::PI + 9.0);
        assert_eq!(g.inner, vec![gplan::fine_size(a.n, &k).unwrap()]);
    }

    /// Pairs of sets on common grids: each keeps its centres and its targets' band, its
    /// sources within [−π, π), on the grid the widest pair needs.
    #[test]
    fn sets_share_the_widest_grids() {
        let k = KernelSpec::for_width(KernelKind::Pswf, 8, Upsampling::TWO).unwrap();
        let narrow = (
            vec![(-1.0, 1.0), (0.0, 2.0)],
            vec![(-3.0, 3.0), (-1.0, 1.0)],
        );
        let wide = (
            vec![(-9.0, 9.0), (0.0, 1.0)],
            vec![(-8.0, 8.0), (-1.0, 1.0)],
        );
        let sets = [narrow.clone(), wide.clone()];
        let g = Geometry::for_sets::<f64>(&sets, &k, None).unwrap();
        let own: Vec<Geometry> = sets
            .iter()
            .map(|(x, s)| Geometry::new::<f64>(x, s, &k, None).unwrap())
            .collect();
        let sides = |g: &Geometry| g.spread();
        assert_eq!(sides(&g[0]), sides(&g[1]));
        assert_eq!(
            (g[0].inner.clone(), g[1].inner.clone()),
            (own[1].inner.clone(), own[1].inner.clone())
        );
        assert_eq!(g[1], own[1]);
        assert!(own[0].axes[0].n < g[0].axes[0].n);
        for (g, (x, s)) in g.iter().zip(&sets) {
            for ((a, &x), &s) in g.axes.iter().zip(x).zip(s) {
                assert_eq!((a.cx, a.cs), (centre_of(x).0, centre_of(s).0));
                assert!(centre_of(x).1 * a.inv_gamma <= std::f64::consts::PI);
                assert!((a.h_gamma * a.s_half - std::f64::consts::PI / 2.0).abs() < 1e-12);
            }
        }
        let far = (
            vec![(-1e300, 1e300), (0.0, 1.0)],
            vec![(-1e6, 1e6), (0.0, 1.0)],
        );
        let err = Geometry::for_sets::<f64>(&[narrow, far], &k, None).unwrap_err();
        assert!(
            matches!(err, NudtError::InTransform { index: 1, .. }),
            "{err}"
        );
    }

    #[test]
    fn degenerate_and_huge_sets() {
        let k = KernelSpec::for_width(KernelKind::Pswf, 6, Upsampling::TWO).unwrap();
        // One source and one target: X·S = 1, the smallest grid.
        let g = Geometry::new::<f64>(&[(2.0, 2.0)], &[(0.0, 0.0)], &k, None).unwrap();
        assert_eq!(g.axes[0].n, 12);
        // A space–bandwidth product past the longest side is a typed error.
        assert!(Geometry::new::<f64>(&[(-1e6, 1e6)], &[(-1e6, 1e6)], &k, None).is_err());
        assert!(checked_side(f64::NAN).is_err());
    }

    /// A source at f64::MAX/4 facing targets near 10: the grid is small (one point each
    /// side), but `s·c_x` overflows; the Gaussian type 3 checks the same.
    #[test]
    fn overflowing_phases_are_a_typed_error() {
        let k = KernelSpec::for_width(KernelKind::Pswf, 6, Upsampling::TWO).unwrap();
        let far = [(f64::MAX / 4.0, f64::MAX / 4.0)];
        let err = Geometry::new::<f64>(&far, &[(9.0, 11.0)], &k, None).unwrap_err();
        assert_eq!(err, NudtError::Type3Phase);
        assert!(check_phases(&far, &[(0.0, 0.0)]).is_ok());
        assert!(check_phases(&[(1.0, 3.0)], &[(f64::MAX / 2.0, f64::MAX)]).is_err());
        assert!(check_phases(&[(-1.0, 1.0), (3.0, 4.0)], &[(-5.0, 5.0), (1.0, 2.0)]).is_ok());
    }
}
