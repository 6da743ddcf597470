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
use super::launch::ELEMENT_GROUP;
use super::launch::{alloc, build, kernel_of, launch, mem, opt_mem, upload, zero, Arg};
use crate::error::NudtError;
use crate::planner::gaussian::{Axis, GaussGeometry};
use nudt_gen::gpu::{gaussian_wide_module_in, names};
use opencl3::kernel::Kernel;
use opencl3::memory::Buffer;
use opencl3::program::Program;
use std::sync::Arc;

/// The window of a plan (fixed by its tolerance) and the program built for its width.
pub(crate) struct GaussWindow {
    /// Shape `b` of eq. 6 at the plan's tolerance and `R = 3`.
    pub b: f64,
    /// Half-width `m`: windows are `2m + 1` points.
    pub half: usize,
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
            half,
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
        let (dim, b) = (geometry.axes.len(), win.b);
        let n = geometry.per_axis(|a| a.n, 1);
        let axis = |f: fn(&Axis) -> f64| geometry.per_axis(f, 0.0);
        let (cx, cs, dx, ds) = (
            axis(|a| a.cx),
            axis(|a| a.cs),
            axis(|a| a.dx),
            axis(|a| a.ds),
        );
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
        let precomp = (0..3)
            .map(|d| match geometry.axes.get(d) {
                Some(a) => upload(
                    dev,
                    &a.precomp(b).into_iter().map(T::of).collect::<Vec<T>>(),
                ),
                None => upload(dev, &[T::one()]),
            })
            .collect::<OpenClResult<Vec<_>>>()?;
        // The table of the CPU's wide-Gaussian spreader, without its leading 1/4b.
        let e3 = upload(dev, &crate::kernels::wide_table::<T>(win.half, b)[1..])?;
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
            args.extend(f64s(cx));
            args.extend(f64s(ds));
            args.extend(f64s(cs));
            args.push(Arg::F64(isign.signum() as f64));
            args.extend((0..3).map(|d| opt_mem(src.get(d))));
            args.push(mem(&pre));
            launch(dev, t3_sources, m, ELEMENT_GROUP, 1, &args)?;
        }
        if k > 0 {
            let mut args = vec![Arg::U32(k as u32)];
            args.extend((0..3).map(|d| opt_mem(targets.get(d).copied())));
            args.extend(f64s(cs));
            args.extend(f64s(dx));
            args.extend(f64s(cx));
            args.extend([sgn, Arg::F64(b)]);
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
    /// with `adjoint`, values at the targets (stride K) → the sources (stride M), the
    /// adjoint of each step on the same grid: spreading at the targets with conjugate
    /// post-factors, the FFT (`isign` is the adjoint's, the forward's negated), the
    /// pre-compensation (real and diagonal, so its own adjoint), and gathering at the sources
    /// with conjugate pre-phases.
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
        let q = || Arg::F64(1.0 / (4.0 * win.b));
        // Points, count and factors of the spreading and of the gathering.
        let src = (&self.src, self.m, &self.pre);
        let tgt = (&self.tgt, self.k, &self.post);
        let (from, to) = if adjoint { (tgt, src) } else { (src, tgt) };
        let conj = || Arg::I32(adjoint as i32);
        let pts = |v: &Vec<Buffer<T>>| -> [Arg; 3] { std::array::from_fn(|d| opt_mem(v.get(d))) };
        let g = &self.work;
        let (x, count, fac) = from;
        if count > 0 {
            let mut args = vec![Arg::U32(count as u32)];
            args.extend(pts(x));
            args.extend([mem(fac), mem(input), mem(g), i(n[0]), i(n[1]), i(n[2])]);
            args.extend([
                mem(&self.e3),
                q(),
                Arg::U64(count as u64),
                Arg::U64(len as u64),
            ]);
            args.push(conj());
            launch(dev, &win.spread, count, ELEMENT_GROUP, nb, &args)?;
        }
        let precomp = || {
            let mut args = vec![Arg::U64(len as u64), mem(g)];
            args.extend(self.precomp.iter().map(mem));
            args.extend([i(n[1]), i(n[2]), Arg::U64(len as u64)]);
            launch(dev, &win.precomp, len, ELEMENT_GROUP, nb, &args)
        };
        if adjoint {
            self.ffts.exec(g, isign, nb)?;
            precomp()?;
        } else {
            precomp()?;
            self.ffts.exec(g, isign, nb)?;
        }
        let (x, count, fac) = to;
        if count > 0 {
            let mut args = vec![Arg::U32(count as u32)];
            args.extend(pts(x));
            args.extend([mem(fac), mem(g), mem(output), i(n[0]), i(n[1]), i(n[2])]);
            args.extend([
                mem(&self.e3),
                q(),
                Arg::U64(count as u64),
                Arg::U64(len as u64),
            ]);
            args.push(conj());
            launch(dev, &win.interp, count, ELEMENT_GROUP, nb, &args)?;
        }
        Ok(())
    }
}
