//! Type 3 (nonuniform → nonuniform) on the CPU, FINUFFT-style (Lee & Greengard with any
//! kernel): pre-phase, spread onto a grid that holds the sources, run an inner type 2 at the
//! rescaled targets, and correct at each target. The geometry (centres, scales, grids) is
//! the plan layer's ([`crate::planner::type3`]).

use crate::error::Result;
use crate::float::{Float, GRAIN};
use crate::grid::{FineGrid, TileSide};
use crate::planner::type3::{Axis, Geometry};
use crate::uniform::{self, ModeOrder, Uniform};
use nudt_gen::kernel::EvenChebyshev;
use nudt_gen::{Arch, KernelSpec, Strategy};
use num_complex::Complex;
use rayon::prelude::*;

/// The bounding interval `(lo, hi)` of a set of coordinates along one dimension (`lo > hi`
/// for an empty set; in parallel: a type 3
/// reads every coordinate of both sets for this before anything else can start). The
/// coordinates are finite (the plan checks them), so the extremes are plain comparisons in
/// eight lanes, which vectorise; `f64::min`'s NaN handling kept the loop scalar and the
/// type 3 set-points' twelve passes over 10⁶ coordinates took 20–30 ms (2 threads, 3-D).
pub(crate) fn bounds<T: Float>(v: &[T]) -> (f64, f64) {
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
    v.par_chunks(1 << 14).map(span).reduce(
        || (f64::INFINITY, f64::NEG_INFINITY),
        |(a, b), (c, d)| (a.min(c), b.max(d)),
    )
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
    // Blocks of 128 and more a task: 1024 (8192 indices) gave a type 3 of 10⁵ targets
    // 12 tasks, for 16 threads.
    out.par_chunks_mut(L)
        .with_min_len(1 << 7)
        .enumerate()
        .for_each(|(b, chunk)| {
            let idx = std::array::from_fn(|l| (b * L + l).min(len - 1));
            let (phase, mag) = f(idx);
            let (sin, cos) = crate::trig::sin_cos_lanes(phase.map(|p| sgn * p));
            for (o, ((s, c), m)) in chunk.iter_mut().zip(sin.into_iter().zip(cos).zip(mag)) {
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
}

impl<T: Float> Phases<T> {
    /// From the factors per source and per target ([`polar_blocks`]).
    pub(crate) fn new(pre: Vec<Complex<T>>, post: Vec<Complex<T>>) -> Self {
        Phases { pre, post }
    }

    /// The input times its factors, into `scaled`: the strengths times the pre-phases, or in
    /// the adjoint (whose input sits at the targets) the values times the conjugate
    /// post-factors.
    pub(crate) fn pre<'a>(
        &self,
        c: &[Complex<T>],
        adjoint: bool,
        scaled: &'a mut Vec<Complex<T>>,
    ) -> &'a [Complex<T>] {
        scaled.clear();
        if adjoint {
            let v = c.par_iter().with_min_len(GRAIN).zip(&self.post);
            scaled.par_extend(v.map(|(a, b)| a * b.conj()));
        } else {
            let v = c.par_iter().with_min_len(GRAIN).zip(&self.pre);
            scaled.par_extend(v.map(|(a, b)| a * b));
        }
        scaled
    }

    /// Applies the output's factors: the post-factors at the targets, or in the adjoint the
    /// conjugate pre-phases at the sources.
    pub(crate) fn post(&self, f: &mut [Complex<T>], adjoint: bool) {
        let (fac, conj) = if adjoint {
            (&self.pre, true)
        } else {
            (&self.post, false)
        };
        f.par_iter_mut()
            .with_min_len(GRAIN)
            .zip(fac)
            .for_each(|(v, p)| {
                *v = *v * if conj { p.conj() } else { *p };
            });
    }
}

/// Targets per block of the post-factor pass: Clenshaw chains run this many wide.
const LANES: usize = 8;

/// The buffers of one running type 3 (either method): the grid its sources are spread on,
/// its phased input, and the inner type 2's. Its engine only reads itself, so the
/// transforms of a stack run at once, each on its own `Work`.
#[derive(Default)]
pub struct Work<T> {
    grid: Vec<Complex<T>>,
    scaled: Vec<Complex<T>>,
    inner: uniform::Work<T>,
}

/// What a type 3 run's steps get from [`Work::run_phased`]: the phased input, the grid and
/// the inner transform's buffers, and the output (post-phased once the steps are done).
pub(crate) type Steps<'a, T> = (
    &'a [Complex<T>],
    &'a mut [Complex<T>],
    &'a mut uniform::Work<T>,
    &'a mut [Complex<T>],
);

impl<T: Float> Work<T> {
    /// Gives the buffers to the next plan ([`crate::reuse`]).
    pub fn release(&mut self) {
        crate::reuse::keep(std::mem::take(&mut self.grid));
        crate::reuse::keep(std::mem::take(&mut self.scaled));
        self.inner.release();
    }

    /// Sets the threads this transform counts on, as [`uniform::Work::set_threads`].
    pub(crate) fn set_threads(&mut self, threads: usize) {
        self.inner.set_threads(threads);
    }

    /// The frame of every type 3 run, either method and either direction: `input` times its
    /// phases, `steps` from it through a grid of `grid_len` values to `output`, and the
    /// output's phases.
    pub(crate) fn run_phased(
        &mut self,
        phases: &Phases<T>,
        adjoint: bool,
        grid_len: usize,
        input: &[Complex<T>],
        output: &mut [Complex<T>],
        steps: impl FnOnce(Steps<'_, T>) -> Result<()>,
    ) -> Result<()> {
        crate::float::resize_parallel(&mut self.grid, grid_len);
        let scaled = &mut self.scaled;
        let phased = crate::steps::step("phases", || phases.pre(input, adjoint, scaled));
        steps((phased, &mut self.grid, &mut self.inner, &mut *output))?;
        crate::steps::step("phases", || phases.post(output, adjoint));
        Ok(())
    }
}

/// A type 3 method on the CPU (FINUFFT's, or the Gaussian gridding): its phases, its grid
/// and its steps between them. The frame around the steps, and which way they run, is
/// [`Type3Scheme::run`]'s, once for both methods.
pub(crate) trait Type3Scheme<T: Float> {
    fn phases(&self) -> &Phases<T>;

    /// Complex values of the grid the sources are spread on.
    fn grid_len(&self) -> usize;

    /// The steps from the phased input to the output: the transform's, or with `adjoint`
    /// (`isign` then the forward's negated) its adjoint's, each step's adjoint in reverse
    /// order on the same grids and sorted points, so it needs no second plan.
    fn steps(&self, steps: Steps<'_, T>, isign: i32, adjoint: bool) -> Result<()>;

    /// One transform: `f_k = Σ_j c_j e^{isign·i s_k·x_j}` from `input` (strengths `c` at
    /// the sources) to `output` (values `f` at the targets), or with `adjoint` the adjoint,
    /// `c_j = Σ_k f_k e^{isign·i s_k·x_j}` from the targets' values to the sources.
    fn run(
        &self,
        work: &mut Work<T>,
        input: &[Complex<T>],
        output: &mut [Complex<T>],
        isign: i32,
        adjoint: bool,
    ) -> Result<()> {
        let len = self.grid_len();
        work.run_phased(self.phases(), adjoint, len, input, output, |s| {
            self.steps(s, isign, adjoint)
        })
    }
}

/// A type 3 engine for one pair of point sets.
pub struct NonUniform<T: Float> {
    spread: FineGrid<T>,
    inner: Uniform<T>,
    phases: Phases<T>,
}

impl<T: Float> NonUniform<T> {
    /// Bins these sources and targets on the grids of `geometry`, the plan layer's for
    /// them and `kernel`.
    #[allow(clippy::too_many_arguments)]
    pub fn new(
        sources: &[&[T]],
        targets: &[&[T]],
        geometry: Geometry,
        kernel: KernelSpec,
        tol: f64,
        isign: i32,
        strategy: Strategy,
        arch: &Arch,
        tile_side: TileSide,
    ) -> Result<Self> {
        let ft = kernel.fourier();
        // `ψ̂` over each axis's scaled target frequencies, which lie within h·γ times the
        // targets' half-extent.
        let psi_hat: Vec<EvenChebyshev> = geometry
            .axes
            .iter()
            .map(|a| ft.chebyshev(a.h_gamma * a.s_half))
            .collect();
        let n = geometry.spread();
        let axes: &[Axis] = &geometry.axes;
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
            &(sources.iter().zip(axes))
                .map(|(x, a)| scaled(x, a.cx, a.inv_gamma))
                .collect::<Vec<_>>()
                .iter()
                .map(|v| &v[..])
                .collect::<Vec<_>>(),
        );
        let inner_n = geometry.inner.clone();
        let mut inner_grid = FineGrid::new(inner_n, kernel, tol, strategy, arch, tile_side)?;
        inner_grid.set_points(
            &(targets.iter().zip(axes))
                .map(|(s, a)| scaled(s, a.cs, a.h_gamma))
                .collect::<Vec<_>>()
                .iter()
                .map(|v| &v[..])
                .collect::<Vec<_>>(),
        );
        let inner = Uniform::new(&n, inner_grid, ModeOrder::Fft);

        let pre = crate::steps::step("phases", || {
            polar_blocks::<T, LANES>(sources[0].len(), isign, |j| {
                let mut phase = [0.0; LANES];
                for (x, a) in sources.iter().zip(axes) {
                    for (p, &j) in phase.iter_mut().zip(&j) {
                        *p += a.cs * (x[j].wide() - a.cx);
                    }
                }
                (phase, [1.0; LANES])
            })
        });
        let post = crate::steps::step("phases", || {
            polar_blocks::<T, LANES>(targets[0].len(), isign, |k| {
                let (mut phase, mut mag) = ([0.0; LANES], [1.0; LANES]);
                for ((s, a), psi_hat) in targets.iter().zip(axes).zip(&psi_hat) {
                    let v = k.map(|k| s[k].wide());
                    let psi = psi_hat.eval_lanes(v.map(|v| a.h_gamma * (v - a.cs)));
                    for ((p, m), (v, psi)) in phase.iter_mut().zip(&mut mag).zip(v.iter().zip(psi))
                    {
                        *p += v * a.cx;
                        *m /= psi;
                    }
                }
                (phase, mag)
            })
        });
        Ok(NonUniform {
            spread,
            inner,
            phases: Phases::new(pre, post),
        })
    }

    pub fn inner_grid(&self) -> &[usize] {
        &self.inner.grid.n
    }

    pub fn spread_grid(&self) -> &FineGrid<T> {
        &self.spread
    }

    /// Bytes of one running transform's [`Work`] at most: both grids whole.
    pub fn work_bytes(&self) -> usize {
        self.spread.len() * std::mem::size_of::<Complex<T>>() + self.inner.work_bytes()
    }
}

impl<T: Float> Type3Scheme<T> for NonUniform<T> {
    fn phases(&self) -> &Phases<T> {
        &self.phases
    }

    fn grid_len(&self) -> usize {
        self.spread.len()
    }

    /// Forward: spread at the sources, the inner type 2; adjoint: the inner type 1 (type
    /// 2's adjoint), interpolation at the sources (spreading's).
    fn steps(&self, (x, grid, inner, y): Steps<'_, T>, isign: i32, adjoint: bool) -> Result<()> {
        if adjoint {
            self.inner.type1(&self.inner.grid, inner, x, grid, isign)?;
            self.spread.interp(grid, y)
        } else {
            self.spread.spread(x, grid)?;
            self.inner.type2(&self.inner.grid, inner, grid, y, isign)
        }
    }
}
