//! Type 3 (nonuniform → nonuniform), FINUFFT-style (Lee & Greengard with any kernel): centre
//! and rescale both point sets, pre-phase, spread onto a grid that holds the sources, run an
//! inner type 2 at the rescaled targets, and correct at each target.
//!
//! With `x = c_x + x'`, `s = c_s + s'`, `|x'| ≤ X`, `|s'| ≤ S`:
//! `e^{±i s·x} = e^{±i s·c_x} · e^{±i c_s·x'} · e^{±i s'·x'}`. The last factor is computed
//! through a grid of `n ≥ 2σXS/π + w + 1` points with spacing `h = 2π/n`, after scaling
//! `x'' = x'/γ`, `t = γ s'` with `γ = n/(2σS)`, so that the spread sources fit inside
//! `[−π, π)` and the inner type 2 frequencies `h·t` stay inside `[−π/σ, π/σ]`, where the
//! kernel's Fourier transform `ψ̂` is well away from zero.

use crate::error::Result;
use crate::float::Float;
use crate::grid::FineGrid;
use crate::uniform::{ModeOrder, Uniform};
use nudt_gen::{plan, Arch, GenError, KernelSpec, Strategy};
use num_complex::Complex;
use rayon::prelude::*;

/// Centre and half-extent of a set of coordinates along one dimension.
pub(crate) fn centre(v: &[f64]) -> (f64, f64) {
    let (lo, hi) = v
        .iter()
        .fold((f64::INFINITY, f64::NEG_INFINITY), |(a, b), &x| {
            (a.min(x), b.max(x))
        });
    if lo > hi {
        (0.0, 0.0)
    } else {
        ((lo + hi) / 2.0, (hi - lo) / 2.0)
    }
}

/// Half-extents made safe for degenerate sets (FINUFFT's rule): X·S ≥ 1 keeps the grid
/// sensible when either set collapses to a point.
pub(crate) fn safe_extents(xh: f64, sh: f64) -> (f64, f64) {
    if xh == 0.0 {
        if sh == 0.0 {
            (1.0, 1.0)
        } else {
            (1.0 / sh, sh)
        }
    } else {
        (xh, sh.max(1.0 / xh))
    }
}

/// The centring factors of a type 3: `e^{±i c_s·(x_j − c_x)}` on the strengths before
/// spreading, and `e^{±i s_k·c_x}` times the scheme's correction at the targets after.
pub(crate) struct Phases<T> {
    pre: Vec<Complex<T>>,
    post: Vec<Complex<T>>,
    scaled: Vec<Complex<T>>,
}

impl<T: Float> Phases<T> {
    /// From accumulated phases (radians, before the sign) and correction magnitudes.
    pub(crate) fn new(pre_phase: &[f64], post_phase: &[f64], post_mag: &[f64], isign: i32) -> Self {
        let sgn = isign.signum() as f64;
        let polar = |mag: f64, ph: f64| {
            let z = Complex::from_polar(mag, sgn * ph);
            Complex::new(T::of(z.re), T::of(z.im))
        };
        Phases {
            pre: pre_phase.par_iter().map(|&p| polar(1.0, p)).collect(),
            post: post_phase
                .par_iter()
                .zip(post_mag)
                .map(|(&p, &mg)| polar(mg, p))
                .collect(),
            scaled: Vec::new(),
        }
    }

    /// The strengths times the pre-phase.
    pub(crate) fn pre(&mut self, c: &[Complex<T>]) -> &[Complex<T>] {
        self.scaled.clear();
        self.scaled
            .par_extend(c.par_iter().zip(&self.pre).map(|(a, b)| a * b));
        &self.scaled
    }

    /// Applies the post-factors to the values at the targets.
    pub(crate) fn post(&self, f: &mut [Complex<T>]) {
        f.par_iter_mut()
            .zip(&self.post)
            .for_each(|(v, p)| *v = *v * p);
    }
}

/// A type 3 engine for one pair of point sets.
pub struct NonUniform<T: Float> {
    spread: FineGrid<T>,
    inner: Uniform<T>,
    phases: Phases<T>,
    work: Vec<Complex<T>>,
}

impl<T: Float> NonUniform<T> {
    /// Plans the grids for these sources and targets and bins both.
    pub fn new(
        sources: &[&[T]],
        targets: &[&[T]],
        kernel: KernelSpec,
        isign: i32,
        strategy: Strategy,
        arch: &Arch,
        tile_side: Option<usize>,
    ) -> Result<Self> {
        let dim = sources.len();
        let sigma = kernel.upsampling.0;
        let w = kernel.width as f64;
        let m = sources[0].len();
        let k = targets[0].len();
        let mut n = Vec::with_capacity(dim);
        let mut scaled_src: Vec<Vec<T>> = Vec::with_capacity(dim);
        let mut scaled_tgt: Vec<Vec<T>> = Vec::with_capacity(dim);
        let mut pre_phase = vec![0.0f64; m];
        let mut post_phase = vec![0.0f64; k];
        let mut post_mag = vec![1.0f64; k];
        let ft = kernel.fourier();
        for d in 0..dim {
            let x: Vec<f64> = sources[d].iter().map(|v| v.wide()).collect();
            let s: Vec<f64> = targets[d].iter().map(|v| v.wide()).collect();
            let (cx, xh) = centre(&x);
            let (cs, sh) = centre(&s);
            let (xs, ss) = safe_extents(xh, sh);
            let want = 2.0 * sigma * xs * ss / std::f64::consts::PI + w + 1.0;
            if !want.is_finite() || want > 1e15 {
                return Err(GenError::GridOverflow { modes: usize::MAX }.into());
            }
            let nd = plan::next_smooth((want.ceil() as usize).max(2 * kernel.width)).ok_or(
                GenError::GridOverflow {
                    modes: want as usize,
                },
            )?;
            let gamma = nd as f64 / (2.0 * sigma * ss);
            let h = 2.0 * std::f64::consts::PI / nd as f64;
            scaled_src.push(x.par_iter().map(|&v| T::of((v - cx) / gamma)).collect());
            scaled_tgt.push(s.par_iter().map(|&v| T::of(h * gamma * (v - cs))).collect());
            pre_phase
                .par_iter_mut()
                .zip(&x)
                .for_each(|(p, &v)| *p += cs * (v - cx));
            // Every target's frequency h·γ·(s − c_s) lies within h·γ·(half-extent of s).
            let psi_hat = ft.chebyshev(h * gamma * sh);
            post_phase
                .par_iter_mut()
                .zip(post_mag.par_iter_mut())
                .zip(&s)
                .for_each(|((p, mag), &v)| {
                    *p += v * cx;
                    *mag /= psi_hat.eval(h * gamma * (v - cs));
                });
            n.push(nd);
        }
        crate::plan::check_grid::<T>(&n)?;
        let src_refs: Vec<&[T]> = scaled_src.iter().map(|v| &v[..]).collect();
        let tgt_refs: Vec<&[T]> = scaled_tgt.iter().map(|v| &v[..]).collect();

        let mut spread = FineGrid::new(n.clone(), kernel, strategy, arch, tile_side)?;
        spread.set_points(&src_refs);
        let inner_n = n
            .iter()
            .map(|&nd| plan::fine_size(nd, &kernel))
            .collect::<std::result::Result<Vec<_>, _>>()?;
        crate::plan::check_grid::<T>(&inner_n)?;
        let mut inner_grid = FineGrid::new(inner_n, kernel, strategy, arch, tile_side)?;
        inner_grid.set_points(&tgt_refs);
        let inner = Uniform::new(&n, inner_grid, ModeOrder::Fft);
        Ok(NonUniform {
            spread,
            inner,
            phases: Phases::new(&pre_phase, &post_phase, &post_mag, isign),
            work: Vec::new(),
        })
    }

    pub fn inner_grid(&self) -> &[usize] {
        &self.inner.grid.n
    }

    pub fn spread_grid(&self) -> &FineGrid<T> {
        &self.spread
    }

    /// `f_k = Σ_j c_j e^{isign·i s_k·x_j}` for one transform.
    pub fn execute(&mut self, c: &[Complex<T>], f: &mut [Complex<T>], isign: i32) -> Result<()> {
        crate::float::resize_parallel(&mut self.work, self.spread.len());
        self.spread.spread(self.phases.pre(c), &mut self.work)?;
        self.inner.type2(&self.work, f, isign)?;
        self.phases.post(f);
        Ok(())
    }
}
