//! Type 3 by Gaussian gridding with the parameters of Capozzoli et al. (seed; their Table 1
//! and eq. 6), after Lee & Greengard: spread the sources with a Gaussian, pre-compensate,
//! one FFT, interpolate at the targets with a second Gaussian, post-compensate.
//!
//! Per dimension, with centred sources `|x| ≤ X` and targets `|s| ≤ S`, oversampling `R > 2`
//! and accuracy `ε`: `b` solves `b = log(4αb/ε + 9α/ε)/γ` (`α = 2 + 1/√(2π)`,
//! `γ = π²(1 − 2/R²)`); windows are `2m + 1` points with `m = ⌈2πb⌉`; `Δx = π/(RS)`,
//! `M ≥ 2(XSR²/π + 2πRb)` grid points, `Δs = 2π/(ΔxM)`, `τ = bΔx²`, `σ = bΔs²`. Then
//! `e^{±isx} = e^{τs²} (4πb)^{-1} Σ_p e^{−(pΔs−s)²/4σ} Σ_n e^{σ(nΔx)²} e^{−(nΔx−x)²/4τ} e^{±ipn2π/M}`
//! up to the truncation and aliasing errors the parameters bound by `ε`.

use crate::error::Result;
use crate::fft::FftNd;
use crate::float::Float;
use crate::grid::FineGrid;
use crate::type3::{polar_blocks, Phases};
use crate::uniform::direction;
use nudt_gen::{plan, Arch, GenError, KernelKind, KernelSpec, Strategy, Upsampling};
use num_complex::Complex;
use rayon::prelude::*;

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
/// Shared by the CPU engine and the CUDA backend, so that both build the same grids.
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
    /// The axis for sources `x` and targets `s` (one coordinate each) at shape `b`.
    pub(crate) fn new(x: &[f64], s: &[f64], b: f64) -> Result<Self> {
        use crate::planner::type3::{centre_of, checked_side, safe_extents};
        let r = OVERSAMPLING;
        let (cx, xh) = centre_of(crate::type3::bounds(x));
        let (cs, sh) = centre_of(crate::type3::bounds(s));
        let (xs, ss) = safe_extents(xh, sh);
        let pi = std::f64::consts::PI;
        let dx = pi / (r * ss);
        let want = 2.0 * (xs * ss * r * r / pi + 2.0 * pi * r * b);
        // An even size keeps the centred index range symmetric.
        let n = plan::next_smooth(checked_side(want)?.div_ceil(2) * 2).ok_or(
            GenError::GridOverflow {
                modes: want as usize,
            },
        )?;
        let ds = 2.0 * pi / (dx * n as f64);
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

/// A Gaussian-gridding type 3 engine for one pair of point sets.
pub struct GaussianType3<T: Float> {
    sources: FineGrid<T>,
    targets: FineGrid<T>,
    fft: FftNd<T>,
    /// `e^{σ(nΔx)²}` per dimension, by grid index.
    precomp: Vec<Vec<T>>,
    phases: Phases<T>,
    work: Vec<Complex<T>>,
}

impl<T: Float> GaussianType3<T> {
    pub fn new(
        sources: &[&[T]],
        targets: &[&[T]],
        eps: f64,
        isign: i32,
        strategy: Strategy,
        arch: &Arch,
        tile_side: Option<usize>,
    ) -> Result<Self> {
        let dim = sources.len();
        let (m_src, k_tgt) = (sources[0].len(), targets[0].len());
        let b = shape_parameter(eps, OVERSAMPLING);
        let win = window_for(eps);
        let mut n = Vec::new();
        let mut src_scaled: Vec<Vec<T>> = Vec::new();
        let mut tgt_scaled: Vec<Vec<T>> = Vec::new();
        let mut precomp = Vec::new();
        let mut pre_phase = vec![0.0f64; m_src];
        let mut post_phase = vec![0.0f64; k_tgt];
        let mut post_mag = vec![1.0f64; k_tgt];
        for d in 0..dim {
            let x: Vec<f64> = sources[d].iter().map(|v| v.wide()).collect();
            let s: Vec<f64> = targets[d].iter().map(|v| v.wide()).collect();
            let ax = Axis::new(&x, &s, b)?;
            src_scaled.push(x.iter().map(|&v| T::of((v - ax.cx) * ax.ds)).collect());
            tgt_scaled.push(s.iter().map(|&v| T::of((v - ax.cs) * ax.dx)).collect());
            precomp.push(ax.precomp(b).into_iter().map(T::of).collect());
            for (p, &v) in pre_phase.iter_mut().zip(&x) {
                *p += ax.cs * (v - ax.cx);
            }
            for ((p, mag), &v) in post_phase.iter_mut().zip(post_mag.iter_mut()).zip(&s) {
                *p += v * ax.cx;
                *mag *= post_magnitude((v - ax.cs) * ax.dx, b);
            }
            n.push(ax.n);
        }
        crate::planner::validate::check_grid::<T>(&n, crate::planner::validate::physical_memory())?;
        fn refs<T>(v: &[Vec<T>]) -> Vec<&[T]> {
            v.iter().map(|c| &c[..]).collect()
        }
        let mut src_grid = FineGrid::new(n.clone(), win, eps, strategy, arch, tile_side)?;
        src_grid.set_points(&refs(&src_scaled));
        let mut tgt_grid = FineGrid::new(n.clone(), win, eps, strategy, arch, tile_side)?;
        tgt_grid.set_points(&refs(&tgt_scaled));
        Ok(GaussianType3 {
            fft: FftNd::new(&n),
            sources: src_grid,
            targets: tgt_grid,
            precomp,
            phases: Phases::new(
                polar_blocks::<T, 1>(m_src, isign, |[j]| ([pre_phase[j]], [1.0])),
                polar_blocks::<T, 1>(k_tgt, isign, |[k]| ([post_phase[k]], [post_mag[k]])),
            ),
            work: Vec::new(),
        })
    }

    /// Grid size per dimension.
    pub fn grid(&self) -> &[usize] {
        &self.sources.n
    }

    pub fn spread_grid(&self) -> &FineGrid<T> {
        &self.sources
    }

    /// `f_k = Σ_j c_j e^{isign·i s_k·x_j}` for one transform.
    pub fn execute(&mut self, c: &[Complex<T>], f: &mut [Complex<T>], isign: i32) -> Result<()> {
        crate::float::resize_parallel(&mut self.work, self.sources.len());
        self.sources
            .spread(self.phases.pre(c, false), &mut self.work)?;
        self.precompensate();
        self.fft.process(&mut self.work, direction(isign));
        self.targets.interp(&self.work, f)?;
        self.phases.post(f, false);
        Ok(())
    }

    /// The adjoint, `c_j = Σ_k f_k e^{isign·i s_k·x_j}` (`isign` the forward's negated): each
    /// step's adjoint in reverse order, on the same grids (the FFT's adjoint is the opposite
    /// direction; the pre-compensation is real and diagonal).
    pub fn execute_adjoint(
        &mut self,
        f: &[Complex<T>],
        c: &mut [Complex<T>],
        isign: i32,
    ) -> Result<()> {
        crate::float::resize_parallel(&mut self.work, self.sources.len());
        self.targets
            .spread(self.phases.pre(f, true), &mut self.work)?;
        self.fft.process(&mut self.work, direction(isign));
        self.precompensate();
        self.sources.interp(&self.work, c)?;
        self.phases.post(c, true);
        Ok(())
    }

    /// Multiplies the grid by the pre-compensation `e^{σ|nΔx|²}`, separable over dimensions.
    fn precompensate(&mut self) {
        let pc = &self.precomp;
        let dims = &self.sources.n;
        let inner: usize = dims[1..].iter().product();
        self.work
            .par_chunks_mut(inner.max(1))
            .enumerate()
            .for_each(|(i0, slab)| {
                let f0 = pc[0][i0];
                for (j, v) in slab.iter_mut().enumerate() {
                    let mut fac = f0;
                    let mut r = j;
                    for d in (1..dims.len()).rev() {
                        fac = fac * pc[d][r % dims[d]];
                        r /= dims[d];
                    }
                    *v = *v * fac;
                }
            });
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
