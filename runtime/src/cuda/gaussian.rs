//! The Gaussian-gridding type 3 on the GPU (`Type3Method::GaussianCapozzoli`): the CPU
//! engine's scheme (crate::type3_gaussian, Capozzoli et al.'s parameters) with the same
//! per-dimension geometry, run by the generated wide-Gaussian module — spread the pre-phased
//! sources, pre-compensate, one cuFFT, gather at the targets and post-compensate.
//!
//! Windows are `2⌈2πb⌉ + 1` points wide (47 at 1e-10), far beyond the fitted kernels' 16, so the
//! bin sort and shared-memory methods of the ES path do not apply: one thread per source
//! scatters with global atomics, one thread per target gathers.

use super::cufft_plans::FftPlans;
use super::device::{blocks, load_module, Arg, Kernel};
use super::error::{driver, CudaResult};
use super::grid::{checked_len, memset0, ptr, CommonFns};
use super::memory::alloc;
use super::{CudaFloat, GpuArch};
use crate::error::NudtError;
use crate::planner::gaussian::{steps, GaussGeometry, GaussStep};
use cudarc::driver::{CudaContext, CudaSlice, CudaStream};
use nudt_gen::gpu::names;
use std::sync::Arc;

/// The window of a plan (fixed by its tolerance) and the module compiled for its width.
pub(crate) struct GaussWindow {
    /// Shape `b` of eq. 6 at the plan's tolerance and `R = 3`.
    pub b: f64,
    /// Half-width `m`: windows are `2m + 1` points.
    pub half: usize,
    spread: Kernel,
    precomp: Kernel,
    targets: Kernel,
    interp: Kernel,
}

impl GaussWindow {
    /// The window for tolerance `tol` and its module for `dim` dimensions, compiled now (plan
    /// time), as the ES path compiles its spread modules.
    pub fn new<T: CudaFloat>(
        ctx: &Arc<CudaContext>,
        arch: &GpuArch,
        dim: usize,
        tol: f64,
    ) -> CudaResult<Self> {
        let (b, half) = GaussGeometry::window(tol);
        let src = nudt_gen::gpu::gaussian_wide_module(dim, 2 * half + 1, T::PRECISION)?;
        let (m, _) = load_module(ctx, &src, arch)?;
        let k = |name| Kernel::load(&m, &src, name);
        Ok(GaussWindow {
            b,
            half,
            spread: k(names::GW_SPREAD)?,
            precomp: k(names::GW_PRECOMP)?,
            targets: k(names::GW_TARGETS)?,
            interp: k(names::GW_INTERP)?,
        })
    }

    pub fn width(&self) -> usize {
        2 * self.half + 1
    }
}

/// The device state of one pair of point sets: scaled points and their factors, the
/// pre-compensation and window tables, the grids of one batch and their cuFFT plans.
pub(crate) struct GaussDev<T: CudaFloat> {
    dim: usize,
    /// Grid size per dimension (1 for unused dimensions).
    pub n: [usize; 3],
    fft: FftPlans,
    work: CudaSlice<T>,
    /// `e^{σ(nΔx)²}` per dimension by grid index (`[1]` for unused dimensions).
    precomp: Vec<CudaSlice<T>>,
    /// `e^{−k²/4b}` for `k = −m..=m`.
    e3: CudaSlice<T>,
    /// Sources in radians of the grid, `(x − c_x)Δs`, and their pre-phases.
    src: Vec<CudaSlice<T>>,
    pre: CudaSlice<T>,
    /// Targets in radians of the grid, `(s − c_s)Δx`, and their post-factors.
    tgt: Vec<CudaSlice<T>>,
    post: CudaSlice<T>,
    m: usize,
    k: usize,
}

impl<T: CudaFloat> GaussDev<T> {
    /// Prepares the grids of `geometry` for `sources` and `targets` (validated host arrays)
    /// on the device. `old`, the state of the previous point sets, gives back its grid buffer
    /// and cuFFT plans when the grid sizes are unchanged.
    #[allow(clippy::too_many_arguments)]
    pub fn new(
        stream: &Arc<CudaStream>,
        common: &CommonFns,
        win: &GaussWindow,
        geometry: &GaussGeometry,
        sources: &[&[T]],
        targets: &[&[T]],
        isign: i32,
        batches: [usize; 2],
        old: Option<Box<GaussDev<T>>>,
    ) -> CudaResult<Self> {
        let dim = sources.len();
        let (m, k) = (sources[0].len(), targets[0].len());
        let t = geometry.tables::<T>();
        let n = t.n;
        let len = checked_len(&n)?;
        let reuse = old.filter(|g| g.n == n && g.work.len() >= 2 * len * batches[0]);
        let (fft, work) = match reuse {
            Some(g) => {
                let g = *g;
                (g.fft, g.work)
            }
            None => {
                let wlen = len
                    .checked_mul(2 * batches[0])
                    .ok_or(NudtError::GridOverflow)?;
                let work = alloc::<T>(stream, wlen, "Gaussian type 3 grids")?;
                (FftPlans::new::<T>(stream, &n[..dim], &batches)?, work)
            }
        };
        let upload = |v: &[T], what: &str| -> CudaResult<CudaSlice<T>> {
            let mut dv = alloc::<T>(stream, v.len(), what)?;
            if !v.is_empty() {
                stream
                    .memcpy_htod(v, &mut dv)
                    .map_err(|e| driver(&format!("cuMemcpyHtoD ({what})"), e))?;
            }
            Ok(dv)
        };
        let precomp = t
            .precomp
            .iter()
            .map(|v| upload(v, "pre-compensation"))
            .collect::<CudaResult<Vec<_>>>()?;
        let e3 = upload(&t.window, "Gaussian window table")?;
        let raw_src = sources
            .iter()
            .map(|v| upload(v, "type 3 sources"))
            .collect::<CudaResult<Vec<_>>>()?;
        let raw_tgt = targets
            .iter()
            .map(|v| upload(v, "type 3 targets"))
            .collect::<CudaResult<Vec<_>>>()?;
        let src = (0..dim)
            .map(|_| alloc::<T>(stream, m, "scaled sources"))
            .collect::<CudaResult<Vec<_>>>()?;
        let tgt = (0..dim)
            .map(|_| alloc::<T>(stream, k, "scaled targets"))
            .collect::<CudaResult<Vec<_>>>()?;
        let pre = alloc::<T>(stream, 2 * m, "type 3 pre-phases")?;
        let post = alloc::<T>(stream, 2 * k, "type 3 post-factors")?;
        let p3 = |v: &[CudaSlice<T>], d: usize| Arg::Ptr(v.get(d).map_or(0, |s| ptr(s, stream)));
        let f3 = |a: [f64; 3]| [Arg::F64(a[0]), Arg::F64(a[1]), Arg::F64(a[2])];
        let sgn = isign.signum() as f64;
        if m > 0 {
            // The ES path's source kernel does exactly the CPU's source step when its scale
            // is Δs: y = (x − c_x)Δs and the pre-phase e^{±i c_s·(x − c_x)}.
            let kk = &common.t3_sources;
            let mut args = vec![
                Arg::U32(m as u32),
                Arg::I32(dim as i32),
                p3(&raw_src, 0),
                p3(&raw_src, 1),
                p3(&raw_src, 2),
            ];
            args.extend(f3(t.cx));
            args.extend(f3(t.ds));
            args.extend(f3(t.cs));
            args.extend([
                Arg::F64(sgn),
                p3(&src, 0),
                p3(&src, 1),
                p3(&src, 2),
                Arg::Ptr(ptr(&pre, stream)),
            ]);
            kk.launch(stream, (blocks(m, kk.threads), 1), &args)?;
        }
        if k > 0 {
            let kk = &win.targets;
            let mut args = vec![
                Arg::U32(k as u32),
                p3(&raw_tgt, 0),
                p3(&raw_tgt, 1),
                p3(&raw_tgt, 2),
            ];
            args.extend(f3(t.cs));
            args.extend(f3(t.dx));
            args.extend(f3(t.cx));
            args.extend([
                Arg::F64(sgn),
                Arg::F64(win.b),
                p3(&tgt, 0),
                p3(&tgt, 1),
                p3(&tgt, 2),
                Arg::Ptr(ptr(&post, stream)),
            ]);
            kk.launch(stream, (blocks(k, kk.threads), 1), &args)?;
        }
        Ok(GaussDev {
            dim,
            n,
            fft,
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

    /// `nb` transforms: strengths at `input` (stride M) → values at `output` (stride K), or
    /// with `adjoint`, values at the targets (stride K) → the sources (stride M), by the plan
    /// layer's [`steps`] (`isign` is the adjoint's, the forward's negated).
    #[allow(clippy::too_many_arguments)]
    pub fn execute(
        &self,
        win: &GaussWindow,
        stream: &CudaStream,
        input: u64,
        output: u64,
        nb: usize,
        isign: i32,
        adjoint: bool,
    ) -> CudaResult<()> {
        let n = self.n;
        let len: usize = n.iter().product();
        let g = ptr(&self.work, stream);
        memset0(stream, g, 2 * nb * len * std::mem::size_of::<T>())?;
        let i = |v: usize| Arg::I32(v as i32);
        let p3 = |v: &[CudaSlice<T>], d: usize| Arg::Ptr(v.get(d).map_or(0, |s| ptr(s, stream)));
        // Points, count and factors of the spreading and of the gathering.
        let src = (&self.src[..], self.m, &self.pre);
        let tgt = (&self.tgt[..], self.k, &self.post);
        let (from, to) = if adjoint { (tgt, src) } else { (src, tgt) };
        // The spreading or gathering kernel `kk` over one of them, between addresses a and b.
        let walk = |kk: &Kernel, (x, count, fac): (&[CudaSlice<T>], usize, &CudaSlice<T>), a, b| {
            if count == 0 {
                return Ok(());
            }
            let args = [
                Arg::U32(count as u32),
                p3(x, 0),
                p3(x, 1),
                p3(x, 2),
                Arg::Ptr(ptr(fac, stream)),
                Arg::Ptr(a),
                Arg::Ptr(b),
                i(n[0]),
                i(n[1]),
                i(n[2]),
                Arg::Ptr(ptr(&self.e3, stream)),
                Arg::F64(1.0 / (4.0 * win.b)),
                Arg::U64(count as u64),
                Arg::U64(len as u64),
                Arg::I32(adjoint as i32),
            ];
            kk.launch(stream, (blocks(count, kk.threads), nb as u32), &args)
        };
        for step in steps(adjoint) {
            match step {
                GaussStep::Spread => walk(&win.spread, from, input, g)?,
                GaussStep::Precompensate => win.precomp.launch(
                    stream,
                    (blocks(len, win.precomp.threads), nb as u32),
                    &[
                        Arg::U64(len as u64),
                        Arg::Ptr(g),
                        p3(&self.precomp, 0),
                        p3(&self.precomp, 1),
                        p3(&self.precomp, 2),
                        i(n[1]),
                        i(n[2]),
                        Arg::U64(len as u64),
                    ],
                )?,
                GaussStep::Fft => self.fft.exec::<T>(g, nb, isign)?,
                GaussStep::Gather => walk(&win.interp, to, g, output)?,
            }
        }
        Ok(())
    }
}
