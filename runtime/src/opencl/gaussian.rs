//! The Gaussian-gridding type 3 on an OpenCL device (`Type3Method::GaussianCapozzoli`), as
//! the CUDA backend's `gaussian.rs` runs it: the plan layer's geometry
//! ([`crate::planner::gaussian`]), the generated wide-Gaussian module in OpenCL C — spread
//! the pre-phased sources, pre-compensate, one generated FFT, gather at the targets and
//! post-compensate.
//!
//! Windows are `2⌈2πb⌉ + 1` points wide (47 at 1e-10), far beyond the fitted kernels' 16, so
//! the bin sort and local-memory methods of the ES path do not apply: one work-item per
//! source scatters with global atomics, one per target gathers.

use super::device::ClDevice;
use super::error::OpenClResult;
use super::fft::{ClFloat, GridFfts};
use super::launch::Kernel;
use super::launch::ELEMENT_GROUP;
use super::launch::{alloc, build, kernel_of, launch, mem, opt_mem, upload, zero, Arg};
use crate::error::NudtError;
use crate::planner::gaussian::{steps, GaussGeometry, GaussStep};
use nudt_gen::gpu::{gaussian_wide_module_in, names};
use opencl3::memory::Buffer;
use opencl3::program::Program;
use std::sync::Arc;

/// The window of a plan (fixed by its tolerance) and the program built for its width.
pub(crate) struct GaussWindow {
    /// Shape `b` of eq. 6 at the plan's tolerance and `R = 3`.
    pub b: f64,
    spread: Kernel,
    precomp: Kernel,
    targets: Kernel,
    interp: Kernel,
    _program: Arc<Program>,
}

impl GaussWindow {
    /// The window for tolerance `tol` and its program for `dim` dimensions, built now (plan
    /// time), as the ES path builds its spread modules.
    pub fn new<T: ClFloat>(dev: &Arc<ClDevice>, dim: usize, tol: f64) -> OpenClResult<Self> {
        let (b, half) = GaussGeometry::window(tol);
        let src = gaussian_wide_module_in(dim, 2 * half + 1, T::PRECISION, dev.info.dialect())
            .map_err(|e| dev.refusal(e))?;
        let program = build(dev, &src)?;
        let k = |name| kernel_of(&program, name);
        Ok(GaussWindow {
            b,
            spread: k(names::GW_SPREAD)?,
            precomp: k(names::GW_PRECOMP)?,
            targets: k(names::GW_TARGETS)?,
            interp: k(names::GW_INTERP)?,
            _program: program,
        })
    }
}

/// The device state of one pair of point sets: scaled points and their factors, the
/// pre-compensation and window tables, the grids of one batch and their FFTs.
pub(crate) struct GaussDev<T: ClFloat> {
    dim: usize,
    /// Grid size per dimension (1 for unused dimensions).
    pub n: [usize; 3],
    ffts: GridFfts<T>,
    work: Buffer<T>,
    /// `e^{σ(nΔx)²}` per dimension by grid index (`[1]` for unused dimensions).
    precomp: Vec<Buffer<T>>,
    /// `e^{−k²/4b}` for `k = −m..=m`.
    e3: Buffer<T>,
    /// Sources in radians of the grid, `(x − c_x)Δs`, and their pre-phases.
    src: Vec<Buffer<T>>,
    pre: Buffer<T>,
    /// Targets in radians of the grid, `(s − c_s)Δx`, and their post-factors.
    tgt: Vec<Buffer<T>>,
    post: Buffer<T>,
    pub m: usize,
    pub k: usize,
}

impl<T: ClFloat> GaussDev<T> {
    /// Prepares the grids of `geometry` for the `m` sources and `k` targets in device
    /// buffers: scales both sets and computes their factors on the device. `t3_sources` is
    /// the common module's type 3 source kernel, which does exactly this scheme's source
    /// step when its scale is `Δs`. `old`, the state of the previous point sets, gives back
    /// its grid buffer and FFTs when the grid sizes are unchanged.
    #[allow(clippy::too_many_arguments)]
    pub fn new(
        dev: &Arc<ClDevice>,
        t3_sources: &Kernel,
        win: &GaussWindow,
        geometry: &GaussGeometry,
        (sources, targets): (&[&Buffer<T>], &[&Buffer<T>]),
        (m, k): (usize, usize),
        isign: i32,
        batch: usize,
        old: Option<Box<GaussDev<T>>>,
    ) -> OpenClResult<Self> {
        let dim = geometry.axes.len();
        let t = geometry.tables::<T>();
        let n = t.n;
        let len = crate::planner::validate::grid_points(&n)?;
        let (ffts, work) = match old.filter(|g| g.n == n) {
            Some(g) => {
                let g = *g;
                (g.ffts, g.work)
            }
            None => {
                let wlen = len.checked_mul(2 * batch).ok_or(NudtError::GridOverflow)?;
                (
                    GridFfts::new(dev, &n[..dim], batch)?,
                    alloc::<T>(dev, wlen)?,
                )
            }
        };
        let precomp = t
            .precomp
            .iter()
            .map(|v| upload(dev, v))
            .collect::<OpenClResult<_>>()?;
        let e3 = upload(dev, &t.window)?;
        let scaled = |count: usize| -> OpenClResult<Vec<Buffer<T>>> {
            (0..dim).map(|_| alloc::<T>(dev, count)).collect()
        };
        let (src, tgt) = (scaled(m)?, scaled(k)?);
        let (pre, post) = (alloc::<T>(dev, 2 * m)?, alloc::<T>(dev, 2 * k)?);
        let f64s = |a: [f64; 3]| a.map(Arg::F64);
        let sgn = Arg::F64(isign.signum() as f64);
        if m > 0 {
            let mut args = vec![Arg::U32(m as u32), Arg::I32(dim as i32)];
            args.extend((0..3).map(|d| opt_mem(sources.get(d).copied())));
            args.extend(f64s(t.cx));
            args.extend(f64s(t.ds));
            args.extend(f64s(t.cs));
            args.push(Arg::F64(isign.signum() as f64));
            args.extend((0..3).map(|d| opt_mem(src.get(d))));
            args.push(mem(&pre));
            launch(dev, t3_sources, m, ELEMENT_GROUP, 1, &args)?;
        }
        if k > 0 {
            let mut args = vec![Arg::U32(k as u32)];
            args.extend((0..3).map(|d| opt_mem(targets.get(d).copied())));
            args.extend(f64s(t.cs));
            args.extend(f64s(t.dx));
            args.extend(f64s(t.cx));
            args.extend([sgn, Arg::F64(win.b)]);
            args.extend((0..3).map(|d| opt_mem(tgt.get(d))));
            args.push(mem(&post));
            launch(dev, &win.targets, k, ELEMENT_GROUP, 1, &args)?;
        }
        Ok(GaussDev {
            dim,
            n,
            ffts,
            work,
            precomp,
            e3,
            src,
            pre,
            tgt,
            post,
            m,
            k,
        })
    }

    pub fn grid(&self) -> Vec<usize> {
        self.n[..self.dim].to_vec()
    }

    /// `nb` transforms: strengths in `input` (stride M) → values in `output` (stride K), or
    /// with `adjoint`, values at the targets (stride K) → the sources (stride M), by the plan
    /// layer's [`steps`] (`isign` is the adjoint's, the forward's negated).
    #[allow(clippy::too_many_arguments)]
    pub fn execute(
        &mut self,
        dev: &ClDevice,
        win: &GaussWindow,
        input: &Buffer<T>,
        output: &Buffer<T>,
        nb: usize,
        isign: i32,
        adjoint: bool,
    ) -> OpenClResult<()> {
        let n = self.n;
        let len: usize = n.iter().product();
        zero(dev, &mut self.work, 2 * nb * len)?;
        let i = |v: usize| Arg::I32(v as i32);
        // Points, count and factors of the spreading and of the gathering.
        let src = (&self.src, self.m, &self.pre);
        let tgt = (&self.tgt, self.k, &self.post);
        let (from, to) = if adjoint { (tgt, src) } else { (src, tgt) };
        let g = &self.work;
        // The arguments of the spreading and gathering kernels around their data buffers.
        let walk = |(x, count, fac): (&Vec<Buffer<T>>, usize, &Buffer<T>), a, b| {
            let mut args = vec![Arg::U32(count as u32)];
            args.extend((0..3).map(|d| opt_mem(x.get(d))));
            args.extend([mem(fac), mem(a), mem(b), i(n[0]), i(n[1]), i(n[2])]);
            args.extend([mem(&self.e3), Arg::F64(1.0 / (4.0 * win.b))]);
            args.extend([Arg::U64(count as u64), Arg::U64(len as u64)]);
            args.push(Arg::I32(adjoint as i32));
            (count, args)
        };
        for step in steps(adjoint) {
            match step {
                GaussStep::Spread => match walk(from, input, g) {
                    (0, _) => {}
                    (count, args) => launch(dev, &win.spread, count, ELEMENT_GROUP, nb, &args)?,
                },
                GaussStep::Precompensate => {
                    let mut args = vec![Arg::U64(len as u64), mem(g)];
                    args.extend(self.precomp.iter().map(mem));
                    args.extend([i(n[1]), i(n[2]), Arg::U64(len as u64)]);
                    launch(dev, &win.precomp, len, ELEMENT_GROUP, nb, &args)?;
                }
                GaussStep::Fft => self.ffts.exec(g, isign, nb)?,
                GaussStep::Gather => match walk(to, g, output) {
                    (0, _) => {}
                    (count, args) => launch(dev, &win.interp, count, ELEMENT_GROUP, nb, &args)?,
                },
            }
        }
        Ok(())
    }
}
