//! The Gaussian-gridding type 3's geometry (Capozzoli et al.'s parameters, after Lee &
//! Greengard), once for every backend: the window's shape and width from the tolerance, and
//! per dimension the centres, steps and grid size for one pair of point sets. The CPU engine
//! ([`crate::type3_gaussian`]) and both GPUs build their grids from [`GaussGeometry`], so
//! the same points get the same grids everywhere.
//!
//! Per dimension, with centred sources `|x| ≤ X` and targets `|s| ≤ S`, oversampling `R > 2`
//! and accuracy `ε`: `b` solves `b = log(4αb/ε + 9α/ε)/γ` (`α = 2 + 1/√(2π)`,
//! `γ = π²(1 − 2/R²)`); windows are `2m + 1` points with `m = ⌈2πb⌉`; `Δx = π/(RS)`,
//! `M ≥ 2(XSR²/π + 2πRb)` grid points, `Δs = 2π/(ΔxM)`, `τ = bΔx²`, `σ = bΔs²`.

use super::limits::MAX_GRID_SIDE;
use super::type3::{centre_of, checked_side, safe_extents};
use crate::error::{NudtError, Result};
use crate::float::Float;
use nudt_gen::{plan, GenError, KernelKind, KernelSpec, Upsampling};

/// Oversampling `R` of the Gaussian scheme (the seed asks for R > 2; 3 keeps windows narrower
/// than R ≈ 2 would, for a grid about twice as large).
pub(crate) const OVERSAMPLING: f64 = 3.0;

/// The seed's `b` for accuracy `eps` (eq. 6, by successive approximation). Tolerances above
/// ½ read as ½, as the ES width rule does: past about 20 the formula's `b` turns negative.
pub(crate) fn shape_parameter(eps: f64, r: f64) -> f64 {
    let eps = eps.min(0.5);
    let alpha = 2.0 + 1.0 / (2.0 * std::f64::consts::PI).sqrt();
    let gamma = std::f64::consts::PI.powi(2) * (1.0 - 2.0 / (r * r));
    let mut b = 1.0;
    for _ in 0..100 {
        let next = (4.0 * alpha * b / eps + 9.0 * alpha / eps).ln() / gamma;
        if (next - b).abs() < 1e-14 * b {
            return next;
        }
        b = next;
    }
    b
}

/// Half-width `m = ⌈2πb⌉` of the windows for shape `b`: they are `2m + 1` points wide,
/// enough that the truncated tails stay below the accuracy `b` was chosen for.
pub(crate) fn half_width(b: f64) -> usize {
    (2.0 * std::f64::consts::PI * b).ceil() as usize
}

/// One dimension of the scheme: centres, steps and grid size for one pair of point sets.
pub(crate) struct Axis {
    /// Centres of the sources and of the targets.
    pub cx: f64,
    pub cs: f64,
    /// Grid steps `Δx` (source domain) and `Δs = 2π/(ΔxM)` (target domain).
    pub dx: f64,
    pub ds: f64,
    /// Grid size `M` (even, FFT-friendly).
    pub n: usize,
}

impl Axis {
    /// The axis for sources and targets within the intervals `xb` and `sb` (one coordinate
    /// each; `lo > hi` for an empty set) at shape `b`.
    pub(crate) fn new(xb: (f64, f64), sb: (f64, f64), b: f64) -> Result<Self> {
        let r = OVERSAMPLING;
        let (cx, xh) = centre_of(xb);
        let (cs, sh) = centre_of(sb);
        let (xs, ss) = safe_extents(xh, sh);
        let pi = std::f64::consts::PI;
        // Ordered so that nothing overflows where one set sits near ±f64::MAX (`RS` alone
        // would be ∞): `Δx = (π/R)/S` is finite for `S` of at least `safe_extents`' floor.
        let dx = (pi / r) / ss;
        let want = 2.0 * (xs * ss * (r * r / pi) + 2.0 * pi * r * b);
        // An even size keeps the centred index range symmetric.
        let n = plan::next_smooth(checked_side(want)?.div_ceil(2) * 2).ok_or(
            GenError::GridOverflow {
                modes: want as usize,
            },
        )?;
        if n > MAX_GRID_SIDE {
            return Err(NudtError::GridOverflow);
        }
        // `2π/(Δx·M) = S·(2R/M)`, without `Δx·M`, which overflows where `S` is tiny.
        let ds = ss * (2.0 * r / n as f64);
        Ok(Axis { cx, cs, dx, ds, n })
    }

    /// The pre-compensation `e^{σ(nΔx)²}` by grid index (index `i ≥ M/2` is `i − M`).
    /// Grid coordinates are radians of the periodic grid: sources sit at `(x − c_x)Δs`,
    /// targets at `(s − c_s)Δx`, so `σ(nΔx)² = b(2πn/M)²`.
    pub(crate) fn precomp(&self, b: f64) -> Vec<f64> {
        let nd = self.n;
        let sigma_dx2 = b * (2.0 * std::f64::consts::PI / nd as f64).powi(2);
        (0..nd)
            .map(|i| {
                let k = if i < nd / 2 {
                    i as f64
                } else {
                    i as f64 - nd as f64
                };
                (sigma_dx2 * k * k).exp()
            })
            .collect()
    }
}

/// The post-compensation magnitude `e^{τs²}/(4πb)` of one dimension at the scaled target
/// `u = (s − c_s)Δx` (since `τs² = b(sΔx)²`).
pub(crate) fn post_magnitude(u: f64, b: f64) -> f64 {
    (b * u * u).exp() / (4.0 * std::f64::consts::PI * b)
}

/// The window for accuracy `eps`, as a kernel description (what a plan's recipe reports).
pub(crate) fn window_for(eps: f64) -> KernelSpec {
    let b = shape_parameter(eps, OVERSAMPLING);
    window(half_width(b), b)
}

/// The Gaussian window of half-width `m` and shape `b`, as a kernel description.
fn window(m: usize, b: f64) -> KernelSpec {
    let w = 2 * m + 1;
    let alpha = w as f64 / 2.0;
    KernelSpec {
        kind: KernelKind::Gaussian,
        width: w,
        beta: alpha * alpha / (4.0 * b),
        upsampling: Upsampling::TWO,
    }
}

/// The arguments of a GPU's wide-Gaussian kernels for one geometry, padded to three
/// dimensions (grid sides 1, centres and steps 0 beyond the geometry's), and the tables they
/// read: one layout for CUDA and OpenCL.
#[cfg(any(feature = "cuda", feature = "opencl"))]
pub(crate) struct GaussTables<T> {
    pub n: [usize; 3],
    pub cx: [f64; 3],
    pub cs: [f64; 3],
    pub dx: [f64; 3],
    pub ds: [f64; 3],
    /// `e^{σ(nΔx)²}` per dimension by grid index (`[1]` beyond the geometry's dimensions).
    pub precomp: [Vec<T>; 3],
    /// `e^{−k²/4b}` for `k = −m..=m`.
    pub window: Vec<T>,
}

/// One step of the Gaussian-gridding type 3 on its one grid (every backend runs them).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum GaussStep {
    /// The inputs, times their factors, spread onto the zeroed grid.
    Spread,
    /// The grid times `e^{σ(nΔx)²}`, separable over dimensions.
    Precompensate,
    Fft,
    /// The grid gathered at the outputs, times their factors.
    Gather,
}

/// The steps of a transform, or with `adjoint` of its adjoint: each step's adjoint in reverse
/// order on the same grid — spreading at the targets with conjugate post-factors, the FFT of
/// the other sign, the pre-compensation (real and diagonal, so its own adjoint), gathering at
/// the sources with conjugate pre-phases.
pub(crate) fn steps(adjoint: bool) -> [GaussStep; 4] {
    use GaussStep::*;
    match adjoint {
        false => [Spread, Precompensate, Fft, Gather],
        true => [Spread, Fft, Precompensate, Gather],
    }
}

/// The whole geometry of one pair of point sets: the window at the plan's tolerance and one
/// [`Axis`] per dimension.
pub(crate) struct GaussGeometry {
    /// Shape `b` of eq. 6 at the tolerance and `R = 3`.
    pub b: f64,
    /// Half-width `m`: windows are `2m + 1` points.
    pub half: usize,
    pub axes: Vec<Axis>,
}

impl GaussGeometry {
    /// The window for tolerance `tol` (read as ½ above ½, as `KernelSpec::for_tolerance` reads
    /// it), without point sets yet: what a plan compiles its kernels for.
    pub(crate) fn window(tol: f64) -> (f64, usize) {
        let b = shape_parameter(tol, OVERSAMPLING);
        (b, half_width(b))
    }

    /// The geometry for sources and targets within the bounding intervals `xb` and `sb`
    /// (one per dimension: a backend reduces them where its points are).
    pub(crate) fn new(tol: f64, xb: &[(f64, f64)], sb: &[(f64, f64)]) -> Result<Self> {
        super::type3::check_phases(xb, sb)?;
        let (b, half) = Self::window(tol);
        let axes = xb
            .iter()
            .zip(sb)
            .map(|(&x, &s)| Axis::new(x, s, b))
            .collect::<Result<_>>()?;
        Ok(GaussGeometry { b, half, axes })
    }

    /// The geometry for host arrays of sources and targets (one array per dimension).
    pub(crate) fn of<T: Float>(tol: f64, sources: &[&[T]], targets: &[&[T]]) -> Result<Self> {
        let bounds =
            |v: &[&[T]]| -> Vec<(f64, f64)> { v.iter().map(|c| crate::type3::bounds(c)).collect() };
        Self::new(tol, &bounds(sources), &bounds(targets))
    }

    /// Grid size per dimension.
    pub(crate) fn grid(&self) -> Vec<usize> {
        self.axes.iter().map(|a| a.n).collect()
    }

    /// What a GPU's wide-Gaussian kernels take for this geometry in `T`.
    #[cfg(any(feature = "cuda", feature = "opencl"))]
    pub(crate) fn tables<T: Float>(&self) -> GaussTables<T> {
        let axis = |f: fn(&Axis) -> f64| -> [f64; 3] {
            std::array::from_fn(|d| self.axes.get(d).map_or(0.0, f))
        };
        GaussTables {
            n: std::array::from_fn(|d| self.axes.get(d).map_or(1, |a| a.n)),
            cx: axis(|a| a.cx),
            cs: axis(|a| a.cs),
            dx: axis(|a| a.dx),
            ds: axis(|a| a.ds),
            precomp: std::array::from_fn(|d| match self.axes.get(d) {
                Some(a) => a.precomp(self.b).into_iter().map(T::of).collect(),
                None => vec![T::one()],
            }),
            // The table of the CPU's wide-Gaussian spreader, without its leading 1/4b.
            window: crate::kernels::wide_table::<T>(self.half, self.b)[1..].to_vec(),
        }
    }

    /// The window as a kernel description (what a recipe reports).
    pub(crate) fn kernel(&self) -> KernelSpec {
        window(self.half, self.b)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn eq6_fixed_point() {
        let eps = 1e-10;
        let b = shape_parameter(eps, 3.0);
        let alpha = 2.0 + 1.0 / (2.0 * std::f64::consts::PI).sqrt();
        let gamma = std::f64::consts::PI.powi(2) * (1.0 - 2.0 / 9.0);
        assert!((b - (4.0 * alpha * b / eps + 9.0 * alpha / eps).ln() / gamma).abs() < 1e-12);
        assert!(b > 3.0 && b < 4.0, "b = {b}");
    }
}
