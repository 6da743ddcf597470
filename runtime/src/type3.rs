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
use nudt_gen::kernel::{EvenChebyshev, FourierSeries};
use nudt_gen::{plan, Arch, GenError, KernelSpec, Strategy};
use num_complex::Complex;
use rayon::prelude::*;

/// Centre and half-extent of a set of coordinates along one dimension (in parallel: a type 3
/// reads every coordinate of both sets for this before anything else can start). The
/// coordinates are finite (the plan checks them), so the extremes are plain comparisons in
/// eight lanes, which vectorise; `f64::min`'s NaN handling kept the loop scalar and the
/// type 3 set-points' twelve passes over 10⁶ coordinates took 20–30 ms (2 threads, 3-D).
pub(crate) fn centre<T: Float>(v: &[T]) -> (f64, f64) {
    const LANES: usize = 8;
    let span = |v: &[T]| {
        let (mut lo, mut hi) = ([f64::INFINITY; LANES], [f64::NEG_INFINITY; LANES]);
        let mut chunks = v.chunks_exact(LANES);
        for c in &mut chunks {
            for l in 0..LANES {
                let x = c[l].wide();
                lo[l] = if x < lo[l] { x } else { lo[l] };
                hi[l] = if x > hi[l] { x } else { hi[l] };
            }
        }
        for x in chunks.remainder() {
            (lo[0], hi[0]) = (lo[0].min(x.wide()), hi[0].max(x.wide()));
        }
        let lo = lo.into_iter().fold(f64::INFINITY, f64::min);
        (lo, hi.into_iter().fold(f64::NEG_INFINITY, f64::max))
    };
    let (lo, hi) = v.par_chunks(1 << 14).map(span).reduce(
        || (f64::INFINITY, f64::NEG_INFINITY),
        |(a, b), (c, d)| (a.min(c), b.max(d)),
    );
    centre_of((lo, hi))
}

/// Centre and half-extent of the interval `(lo, hi)`; `(0, 0)` for an empty set (`lo > hi`).
/// The GPU backends reduce the interval on the device.
pub(crate) fn centre_of((lo, hi): (f64, f64)) -> (f64, f64) {
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

/// `mag·e^{±i·phase}` for `len` indices, in parallel, from a function giving
/// `(phase, mag)` of `L` consecutive indices at once (the last block padded by repeating its
/// last index), so that per-target work such as the kernel's Fourier series runs `L` wide.
pub(crate) fn polar_blocks<T: Float, const L: usize>(
    len: usize,
    isign: i32,
    f: impl Fn([usize; L]) -> ([f64; L], [f64; L]) + Sync,
) -> Vec<Complex<T>> {
    let sgn = isign.signum() as f64;
    let mut out = vec![Complex::default(); len];
    out.par_chunks_mut(L)
        .with_min_len(1 << 10)
        .enumerate()
        .for_each(|(b, chunk)| {
            let idx = std::array::from_fn(|l| (b * L + l).min(len - 1));
            let (phase, mag) = f(idx);
            for ((o, p), m) in chunk.iter_mut().zip(phase).zip(mag) {
                let (s, c) = (sgn * p).sin_cos();
                *o = Complex::new(T::of(m * c), T::of(m * s));
            }
        });
    out
}

/// The centring factors of a type 3: `e^{±i c_s·(x_j − c_x)}` on the strengths before
/// spreading, and `e^{±i s_k·c_x}` times the scheme's correction at the targets after.
pub(crate) struct Phases<T> {
    pre: Vec<Complex<T>>,
    post: Vec<Complex<T>>,
    scaled: Vec<Complex<T>>,
}

impl<T: Float> Phases<T> {
    /// From the factors per source and per target ([`polar_blocks`]).
    pub(crate) fn new(pre: Vec<Complex<T>>, post: Vec<Complex<T>>) -> Self {
        Phases {
            pre,
            post,
            scaled: Vec::new(),
        }
    }

    /// The input times its factors: the strengths times the pre-phases, or in the adjoint
    /// (whose input sits at the targets) the values times the conjugate post-factors.
    pub(crate) fn pre(&mut self, c: &[Complex<T>], adjoint: bool) -> &[Complex<T>] {
        self.scaled.clear();
        if adjoint {
            self.scaled
                .par_extend(c.par_iter().zip(&self.post).map(|(a, b)| a * b.conj()));
        } else {
            self.scaled
                .par_extend(c.par_iter().zip(&self.pre).map(|(a, b)| a * b));
        }
        &self.scaled
    }

    /// Applies the output's factors: the post-factors at the targets, or in the adjoint the
    /// conjugate pre-phases at the sources.
    pub(crate) fn post(&self, f: &mut [Complex<T>], adjoint: bool) {
        let (fac, conj) = if adjoint {
            (&self.pre, true)
        } else {
            (&self.post, false)
        };
        f.par_iter_mut().zip(fac).for_each(|(v, p)| {
            *v = *v * if conj { p.conj() } else { *p };
        });
    }
}

/// Targets per block of the post-factor pass: Clenshaw chains run this many wide.
const LANES: usize = 8;

/// One dimension of a type 3's grid: where both point sets sit, and how they are scaled.
struct Axis {
    /// Centres of the sources and of the targets.
    cx: f64,
    cs: f64,
    /// Sources are spread at `(x − c_x)/γ`.
    inv_gamma: f64,
    /// Targets are interpolated at `h·γ·(s − c_s)`.
    h_gamma: f64,
    /// Spreading grid size.
    n: usize,
    /// `ψ̂` over the targets' scaled frequencies.
    psi_hat: EvenChebyshev,
}

impl Axis {
    fn new<T: Float>(x: &[T], s: &[T], kernel: &KernelSpec, ft: &FourierSeries) -> Result<Self> {
        let sigma = kernel.upsampling.0;
        let (cx, xh) = centre(x);
        let (cs, sh) = centre(s);
        let (xs, ss) = safe_extents(xh, sh);
        let want = 2.0 * sigma * xs * ss / std::f64::consts::PI + kernel.width as f64 + 1.0;
        if !want.is_finite() || want > 1e15 {
            return Err(GenError::GridOverflow { modes: usize::MAX }.into());
        }
        let n = plan::next_smooth((want.ceil() as usize).max(2 * kernel.width)).ok_or(
            GenError::GridOverflow {
                modes: want as usize,
            },
        )?;
        let gamma = n as f64 / (2.0 * sigma * ss);
        let h_gamma = 2.0 * std::f64::consts::PI / n as f64 * gamma;
        Ok(Axis {
            cx,
            cs,
            inv_gamma: 1.0 / gamma,
            h_gamma,
            n,
            // Every target's frequency h·γ·(s − c_s) lies within h·γ·(half-extent of s).
            psi_hat: ft.chebyshev(h_gamma * sh),
        })
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
    #[allow(clippy::too_many_arguments)]
    pub fn new(
        sources: &[&[T]],
        targets: &[&[T]],
        kernel: KernelSpec,
        tol: f64,
        isign: i32,
        strategy: Strategy,
        arch: &Arch,
        tile_side: Option<usize>,
    ) -> Result<Self> {
        let ft = kernel.fourier();
        let axes = sources
            .iter()
            .zip(targets)
            .map(|(x, s)| Axis::new(x, s, &kernel, &ft))
            .collect::<Result<Vec<_>>>()?;
        let n: Vec<usize> = axes.iter().map(|a| a.n).collect();
        crate::plan::check_grid::<T>(&n)?;
        // Into a vector of its length, chunk by chunk: a loop that vectorises, where a
        // collected parallel map stayed scalar.
        let scaled = |v: &[T], c: f64, f: f64| -> Vec<T> {
            let mut out = vec![T::default(); v.len()];
            out.par_chunks_mut(1 << 14)
                .zip(v.par_chunks(1 << 14))
                .for_each(|(o, v)| {
                    for (o, &v) in o.iter_mut().zip(v) {
                        *o = T::of((v.wide() - c) * f);
                    }
                });
            out
        };
        let mut spread = FineGrid::new(n.clone(), kernel, tol, strategy, arch, tile_side)?;
        spread.set_points(
            &(sources.iter().zip(&axes))
                .map(|(x, a)| scaled(x, a.cx, a.inv_gamma))
                .collect::<Vec<_>>()
                .iter()
                .map(|v| &v[..])
                .collect::<Vec<_>>(),
        );
        let inner_n = n
            .iter()
            .map(|&nd| plan::fine_size(nd, &kernel))
            .collect::<std::result::Result<Vec<_>, _>>()?;
        crate::plan::check_grid::<T>(&inner_n)?;
        let mut inner_grid = FineGrid::new(inner_n, kernel, tol, strategy, arch, tile_side)?;
        inner_grid.set_points(
            &(targets.iter().zip(&axes))
                .map(|(s, a)| scaled(s, a.cs, a.h_gamma))
                .collect::<Vec<_>>()
                .iter()
                .map(|v| &v[..])
                .collect::<Vec<_>>(),
        );
        let inner = Uniform::new(&n, inner_grid, ModeOrder::Fft);

        let pre = polar_blocks::<T, LANES>(sources[0].len(), isign, |j| {
            let mut phase = [0.0; LANES];
            for (x, a) in sources.iter().zip(&axes) {
                for (p, &j) in phase.iter_mut().zip(&j) {
                    *p += a.cs * (x[j].wide() - a.cx);
                }
            }
            (phase, [1.0; LANES])
        });
        let post = polar_blocks::<T, LANES>(targets[0].len(), isign, |k| {
            let (mut phase, mut mag) = ([0.0; LANES], [1.0; LANES]);
            for (s, a) in targets.iter().zip(&axes) {
                let v = k.map(|k| s[k].wide());
                let psi = a.psi_hat.eval_lanes(v.map(|v| a.h_gamma * (v - a.cs)));
                for ((p, m), (v, psi)) in phase.iter_mut().zip(&mut mag).zip(v.iter().zip(psi)) {
                    *p += v * a.cx;
                    *m /= psi;
                }
            }
            (phase, mag)
        });
        Ok(NonUniform {
            spread,
            inner,
            phases: Phases::new(pre, post),
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
        self.spread
            .spread(self.phases.pre(c, false), &mut self.work)?;
        self.inner.type2(&self.work, f, isign)?;
        self.phases.post(f, false);
        Ok(())
    }

    /// The adjoint, `c_j = Σ_k f_k e^{isign·i s_k·x_j}` (`isign` the forward's negated), as
    /// the adjoint of each step on the same grids and sorted points: conjugate post-factors,
    /// the inner type 1 (type 2's adjoint), interpolation at the sources (spreading's), and
    /// conjugate pre-phases. Its error is the forward's, and it needs no second plan.
    pub fn execute_adjoint(
        &mut self,
        f: &[Complex<T>],
        c: &mut [Complex<T>],
        isign: i32,
    ) -> Result<()> {
        crate::float::resize_parallel(&mut self.work, self.spread.len());
        self.inner
            .type1(self.phases.pre(f, true), &mut self.work, isign)?;
        self.spread.interp(&self.work, c)?;
        self.phases.post(c, true);
        Ok(())
    }
}
