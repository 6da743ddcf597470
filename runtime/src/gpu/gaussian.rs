//! The Gaussian-gridding type 3 on a GPU (`Type3Method::GaussianCapozzoli`), once for CUDA
//! and OpenCL: the device state of one pair of point sets ([`GaussGrids`]), how it is
//! prepared (scale both point sets and compute their factors) and the plan layer's
//! [`steps`] over it, with every kernel's argument list. A backend only says how to
//! allocate, upload and launch ([`Device`]) and runs its own FFT.
//!
//! Windows are `2⌈2πb⌉ + 1` points wide (47 at 1e-10), far beyond the fitted kernels' 16, so
//! the bin sort and shared-memory methods of the ES path do not apply: one thread per source
//! scatters with global atomics, one thread per target gathers.

use super::device::{f64s, Arg, Device};
use super::plan::PointSets;
use super::type3::scale_sources;
use crate::error::NudtError;
use crate::float::Float;
use crate::planner::gaussian::{steps, GaussGeometry, GaussStep};
use crate::planner::validate::grid_points;
use nudt_gen::gpu::names;

/// A plan's window (fixed by its tolerance) and the module built for its width (`K`: a
/// backend's loaded kernel; `P`: what keeps the module alive, where its kernels do not).
pub(crate) struct GaussWindow<K, P> {
    /// Shape `b` of eq. 6 at the plan's tolerance and `R = 3`.
    pub b: f64,
    /// Half-width `m`: windows are `2m + 1` points.
    pub half: usize,
    pub kernels: GaussKernels<K>,
    pub _module: P,
}

/// A window's width in grid points.
pub(crate) trait Windowed {
    fn width(&self) -> usize;
}

impl<K, P> Windowed for GaussWindow<K, P> {
    fn width(&self) -> usize {
        2 * self.half + 1
    }
}

/// The wide-Gaussian module's kernels (`K`, a backend's loaded kernel), built per plan for
/// its window width.
pub(crate) struct GaussKernels<K> {
    spread: K,
    precomp: K,
    /// Targets scaled to `(s − c_s)Δx` and their post-factors.
    targets: K,
    interp: K,
}

impl<K> GaussKernels<K> {
    /// The module's kernels, each found by `load` from its generated name.
    pub fn load<E>(load: impl Fn(&'static str) -> Result<K, E>) -> Result<Self, E> {
        Ok(GaussKernels {
            spread: load(names::GW_SPREAD)?,
            precomp: load(names::GW_PRECOMP)?,
            targets: load(names::GW_TARGETS)?,
            interp: load(names::GW_INTERP)?,
        })
    }
}

/// What a Gaussian type 3's set-points prepares from: the plan's window (kernels `K`, module
/// `P`), the geometry, the point sets (device coordinates `Q`), and the last point sets'
/// state `S`, if any ([`crate::gpu::plan::GaussPrep`]).
pub(crate) type GaussJob<'a, K, P, Q, S> = (
    &'a GaussWindow<K, P>,
    &'a GaussGeometry,
    &'a PointSets<'a, Q>,
    Option<Box<S>>,
);

/// The device state of one pair of point sets: scaled points and their factors, the
/// pre-compensation and window tables, the grids of one batch (`B`, an array) and their FFTs
/// (`F`).
pub(crate) struct GaussGrids<B, F> {
    dim: usize,
    /// Grid size per dimension (1 for unused dimensions).
    pub n: [usize; 3],
    pub fft: F,
    pub work: B,
    /// `e^{σ(nΔx)²}` per dimension by grid index (`[1]` for unused dimensions).
    precomp: Vec<B>,
    /// `e^{−k²/4b}` for `k = −m..=m`.
    e3: B,
    /// Sources in radians of the grid, `(x − c_x)Δs`, and their pre-phases.
    src: Vec<B>,
    pre: B,
    /// Targets in radians of the grid, `(s − c_s)Δx`, and their post-factors.
    tgt: Vec<B>,
    post: B,
    pub m: usize,
    pub k: usize,
}

impl<B, F> GaussGrids<B, F> {
    /// Prepares the grids of `geometry` for the point sets `sets` (their sizes, sign and
    /// batches), whose coordinates are the device arrays `sources` and `targets` (one per
    /// dimension): scales both sets and computes their factors on the device, for the window
    /// `win`. `t3_sources` is the common module's type 3 source kernel: with scale `Δs` it
    /// does exactly this scheme's source step, `y = (x − c_x)Δs` and the pre-phase
    /// `e^{±i c_s·(x − c_x)}`. `old`, the state of the previous point sets, gives back its
    /// grid buffer and FFTs when the grid sizes are unchanged and it holds a batch; `ffts`
    /// makes them otherwise.
    pub fn prepare<T: Float, G: Device<T, Buf = B>, P, Q>(
        gpu: &G,
        t3_sources: &G::Kernel,
        (win, geometry, sets, old): GaussJob<'_, G::Kernel, P, Q, Self>,
        (sources, targets): ([G::Mem; 3], [G::Mem; 3]),
        ffts: impl FnOnce(&[usize]) -> Result<F, G::Error>,
    ) -> Result<Self, G::Error> {
        let (kernels, b) = (&win.kernels, win.b);
        let (m, k, isign, batch) = (sets.m, sets.k, sets.isign, sets.batches[0]);
        let dim = geometry.axes.len();
        let t = geometry.tables::<T>();
        let n = t.n;
        let len = grid_points(&n)?;
        let wlen = len.checked_mul(2 * batch).ok_or(NudtError::GridOverflow)?;
        let (fft, work) = match old.filter(|g| g.n == n && gpu.holds(&g.work) >= wlen) {
            Some(g) => (g.fft, g.work),
            None => (ffts(&n[..dim])?, gpu.alloc(wlen, "Gaussian type 3 grids")?),
        };
        let precomp = t
            .precomp
            .iter()
            .map(|v| gpu.upload(v, "pre-compensation"))
            .collect::<Result<Vec<_>, _>>()?;
        let e3 = gpu.upload(&t.window, "Gaussian window table")?;
        let scaled = |count: usize, what| -> Result<Vec<B>, G::Error> {
            (0..dim).map(|_| gpu.alloc(count, what)).collect()
        };
        let (src, tgt) = (scaled(m, "scaled sources")?, scaled(k, "scaled targets")?);
        let pre = gpu.alloc(2 * m, "type 3 pre-phases")?;
        let post = gpu.alloc(2 * k, "type 3 post-factors")?;
        let sgn = Arg::F64(isign.signum() as f64);
        let mems = |v: [G::Mem; 3]| v.map(Arg::Mem);
        let scaled_at = (gpu.mem3(&src[..]), gpu.mem(Some(&pre)));
        let frame = [t.cx, t.ds, t.cs];
        scale_sources(
            gpu,
            t3_sources,
            (dim, 0, m),
            sources,
            frame,
            isign,
            scaled_at,
        )?;
        if k > 0 {
            let mut args = vec![Arg::U32(k as u32)];
            args.extend(mems(targets));
            args.extend([f64s(t.cs), f64s(t.dx), f64s(t.cx)].concat());
            args.extend([sgn, Arg::F64(b)]);
            args.extend(mems(gpu.mem3(&tgt[..])));
            args.push(Arg::Mem(gpu.mem(Some(&post))));
            gpu.launch(&kernels.targets, k, 1, &args)?;
        }
        Ok(GaussGrids {
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

    /// Complex values of one grid.
    pub fn len(&self) -> usize {
        self.n.iter().product()
    }

    /// `nb` transforms on the zeroed grids: strengths at `input` (stride M) → values at
    /// `output` (stride K), or with `adjoint`, values at the targets (stride K) → the sources
    /// (stride M), by the plan layer's [`steps`], with the module `kernels` of window shape `b`; `fft` runs the FFTs
    /// of the grids (of the sign the caller chose: the adjoint's is the forward's negated).
    #[allow(clippy::too_many_arguments)]
    pub fn run<T, G: Device<T, Buf = B>>(
        &self,
        gpu: &G,
        kernels: &GaussKernels<G::Kernel>,
        b: f64,
        (input, output): (G::Mem, G::Mem),
        nb: usize,
        adjoint: bool,
        mut fft: impl FnMut() -> Result<(), G::Error>,
    ) -> Result<(), G::Error> {
        let (n, len) = (self.n, self.len());
        let g = gpu.mem(Some(&self.work));
        let i = |v: usize| Arg::I32(v as i32);
        let mem = |b: &B| Arg::Mem(gpu.mem(Some(b)));
        // Points, count and factors of the spreading and of the gathering.
        let src = (&self.src[..], self.m, &self.pre);
        let tgt = (&self.tgt[..], self.k, &self.post);
        let (from, to) = if adjoint { (tgt, src) } else { (src, tgt) };
        // The spreading or gathering kernel `kk` over one of them, between handles a and b.
        let walk = |kk, (x, count, fac): (&[B], usize, &B), a, b_| {
            if count == 0 {
                return Ok(());
            }
            let mut args = vec![Arg::U32(count as u32)];
            args.extend(gpu.mem3(x).map(Arg::Mem));
            args.extend([mem(fac), Arg::Mem(a), Arg::Mem(b_)]);
            args.extend([i(n[0]), i(n[1]), i(n[2]), mem(&self.e3)]);
            args.extend([Arg::F64(1.0 / (4.0 * b)), Arg::U64(count as u64)]);
            args.extend([Arg::U64(len as u64), Arg::I32(adjoint as i32)]);
            gpu.launch(kk, count, nb, &args)
        };
        for step in steps(adjoint) {
            match step {
                GaussStep::Spread => walk(&kernels.spread, from, input, g)?,
                GaussStep::Precompensate => {
                    let mut args = vec![Arg::U64(len as u64), Arg::Mem(g)];
                    args.extend(gpu.mem3(&self.precomp[..]).map(Arg::Mem));
                    args.extend([i(n[1]), i(n[2]), Arg::U64(len as u64)]);
                    gpu.launch(&kernels.precomp, len, nb, &args)?;
                }
                GaussStep::Fft => fft()?,
                GaussStep::Gather => walk(&kernels.interp, to, g, output)?,
            }
        }
        Ok(())
    }
}
