//! [`CudaPlan`]: make a plan once (kernels compiled, cuFFT planned), set points once (bin sort
//! on the GPU), execute many times — from host slices or device buffers.

use super::device::{detect_arch, open, probe_libraries};
use super::engine::{Batch, Engine, Type3Dev, UniformDev};
use super::error::{driver, CudaResult};
use super::gaussian::{GaussDev, GaussWindow};
use super::grid::{at, memset0, ptr, CommonFns, FineGrid, GridModule};
use super::grid_fft::FftEngine;
use super::memory::{alloc, keep_freed_memory};
use super::{CudaFloat, GpuArch, GpuMethod};
use crate::error::NudtError;
use crate::float::{interleaved, interleaved_mut};
use crate::planner::gaussian::GaussGeometry;
use crate::planner::stages::{self, Pass};
use crate::planner::type3::Geometry;
use crate::planner::validate::{
    check_coords, check_finite, check_type, extent_non_finite, non_finite_point, point_count,
    SOURCES, TARGETS,
};
use crate::planner::{gpu_profile, limits, sets};
use crate::planner::{sigma, DeviceClass, Problem, Recipe, Type3Method};
use crate::uniform::ModeOrder;
use cudarc::driver::sys::CUevent_flags;
use cudarc::driver::{
    CudaContext, CudaEvent, CudaSlice, CudaStream, DevicePtr, DevicePtrMut, SyncOnDrop,
};
use nudt_gen::gpu::GridRole;
use nudt_gen::{KernelKind, KernelSpec, TransformType, Upsampling};
use num_complex::Complex;
use std::path::Path;
use std::sync::Arc;

/// Options of a GPU plan; `CudaOptions::default()` is what a cuFINUFFT user expects.
#[derive(Clone, Debug)]
pub struct CudaOptions {
    /// Device ordinal (ignored when `stream` is given: its context decides).
    pub device: usize,
    /// Stream to run on; `None` uses the device's default stream.
    pub stream: Option<Arc<CudaStream>>,
    pub kernel: KernelKind,
    /// Upsampling factor σ; `None` lets the plan layer choose it once the points are known,
    /// as on every backend ([`crate::planner::sigma`]).
    pub upsampling: Option<Upsampling>,
    pub mode_order: ModeOrder,
    /// The spreading method (GM-sort, SM or output-driven); `None` chooses per point set
    /// (from bin occupancy).
    pub spread: Option<GpuMethod>,
    /// The interpolation method (GM-sort or SM); `None` chooses per point set.
    pub interp: Option<GpuMethod>,
    /// Bin sides override (tuning); `None` lets the generator choose from shared memory.
    /// Each side must be at least 1 and a bin's padded box (`side + w − 1` per dimension)
    /// must fit the GPU's shared memory per block; otherwise planning is a typed error.
    pub bins: Option<[usize; 3]>,
    /// The bin sort: `Some(true)` in two passes (by buckets of bins, then by bin),
    /// `Some(false)` in one; `None` takes two where the points' sorted indices outgrow the
    /// GPU's L2 (`nudt_gen::gpu::sort_passes`). Results are the same either way.
    pub two_pass_sort: Option<bool>,
    /// Transforms per cuFFT batch (and per fine-grid buffer); 0 means `min(ntransf, 8)`.
    /// At most [`limits::MAX_BATCH`] are used: the kernels index the batch by `blockIdx.y`.
    pub max_batch: usize,
    /// GPU description override (tuning, tests); `None` reads the device.
    pub arch: Option<GpuArch>,
    /// Take this GPU's `nudt tune --backend cuda` profile ([`gpu_profile`]), when there
    /// is one, for the bins and method of type 1 and 2 plans whose options leave both open
    /// (not with an `arch` override).
    pub use_profile: bool,
    /// How type 3 is computed: FINUFFT's scheme with the plan's kernel (the default), or
    /// Gaussian gridding with Capozzoli et al.'s parameters, as the CPU's option of that name.
    pub type3: Type3Method,
    /// Plan for derivatives with respect to the points, as the CPU's option of that name.
    pub gradients: bool,
    /// The fine grids' FFT: by default whichever of cuFFT and the generated FFT measured
    /// faster for the grid's shape and batch on this GPU (timed once, cached on disk).
    pub fft: FftEngine,
}

impl Default for CudaOptions {
    fn default() -> Self {
        CudaOptions {
            device: 0,
            stream: None,
            kernel: KernelKind::Pswf,
            upsampling: None,
            mode_order: ModeOrder::Cmcl,
            spread: None,
            interp: None,
            bins: None,
            two_pass_sort: None,
            max_batch: 0,
            arch: None,
            use_profile: true,
            type3: Type3Method::Finufft,
            gradients: false,
            fft: FftEngine::Auto,
        }
    }
}

/// GPU time of the last `set_points` (the sort) and the last run (`execute`, its adjoint or
/// a gradient pass; without host transfers), measured with CUDA events.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct CudaTimings {
    pub setpts_ms: f32,
    pub execute_ms: f32,
}

/// What a type 3 plan's set-points needs that does not depend on the points, made with the
/// plan: the spread modules of both grids (the grids themselves are sized from the points'
/// extents) and the kernel's Fourier quadrature (nodes, weights) for the post-factors.
struct Type3Modules {
    kernel: KernelSpec,
    spread: GridModule,
    inner: GridModule,
    qz: CudaSlice<f64>,
    qw: CudaSlice<f64>,
}

impl Type3Modules {
    fn new<T: CudaFloat>(
        ctx: &Arc<CudaContext>,
        stream: &Arc<CudaStream>,
        arch: &GpuArch,
        dim: usize,
        kernel: KernelSpec,
        choice: ModuleChoice,
    ) -> CudaResult<Self> {
        let (qz, qw) = nudt_gen::gpu::fourier_quadrature(&kernel);
        let up = |v: &[f64]| {
            stream
                .clone_htod(v)
                .map_err(|e| driver("cuMemcpyHtoD (quadrature)", e))
        };
        let module = |role| grid_module::<T>(ctx, arch, dim, kernel, role, choice);
        Ok(Type3Modules {
            kernel,
            spread: module(stages::OUTER_ROLE)?,
            inner: module(stages::INNER_ROLE)?,
            qz: up(&qz)?,
            qw: up(&qw)?,
        })
    }
}

/// The module of a grid in `role` for `kernel`, with the plan's bins and methods.
fn grid_module<T: CudaFloat>(
    ctx: &Arc<CudaContext>,
    arch: &GpuArch,
    dim: usize,
    kernel: KernelSpec,
    role: GridRole,
    c: ModuleChoice,
) -> CudaResult<GridModule> {
    GridModule::new::<T>(
        ctx,
        arch,
        dim,
        kernel,
        role,
        c.bins,
        c.spread,
        c.interp,
        c.two_pass_sort,
    )
}

/// A device array of coordinates a plan holds between set-points and execute.
type HeldCoords<T> = Arc<dyn DevicePtr<T> + Send + Sync>;

/// Addresses of held coordinate arrays for work queued on `stream`, with their guards: kept
/// until the work is queued, they order it after the owners' writes and a drop after it.
fn guard_held<'a, T>(
    held: &'a [HeldCoords<T>],
    stream: &'a CudaStream,
) -> Vec<(u64, SyncOnDrop<'a>)> {
    held.iter().map(|c| c.device_ptr(stream)).collect()
}

/// A NUFFT plan of type 1, 2 or 3 in 1–3 dimensions on an NVIDIA GPU.
pub struct CudaPlan<T: CudaFloat> {
    problem: Problem,
    batch: usize,
    kernel: KernelSpec,
    /// The tolerance `kernel` was chosen for (type 3: a stage's share).
    kernel_tol: f64,
    /// Bins and methods the grids' modules are generated with (the options', or the
    /// profile's).
    choice: ModuleChoice,
    opts: CudaOptions,
    ctx: Arc<CudaContext>,
    stream: Arc<CudaStream>,
    arch: GpuArch,
    common: CommonFns,
    /// The Gaussian type 3's window and module (type 3 plans with `GaussianCapozzoli`).
    gauss: Option<GaussWindow>,
    /// FINUFFT's type 3 (type 3 plans without `GaussianCapozzoli`), for the kernel of the
    /// last point sets: the kernel depends on their extents.
    t3: Option<Type3Modules>,
    engine: Engine<T>,
    num_points: usize,
    num_targets: usize,
    /// Each transform's number of points where each has its own set (types 1 and 2), `None`
    /// where they share one.
    per_set: Option<Vec<usize>>,
    /// Device copies of host coordinates (`set_points`), inputs and outputs (grown on
    /// demand).
    coords: Vec<CudaSlice<T>>,
    /// The caller's coordinate arrays of [`Self::set_points_device`]: the sort keeps only
    /// the points' order, so every execute reads the coordinates from these.
    held: Vec<HeldCoords<T>>,
    /// Device copies of host type 3 targets.
    targets: Vec<CudaSlice<T>>,
    din: Option<CudaSlice<T>>,
    dout: Option<CudaSlice<T>>,
    events: [CudaEvent; 4],
    recorded: [bool; 2],
    /// The CUDA tuning profile whose bins and method this plan took, if any.
    profile: Option<&'static Path>,
}

/// Bins and methods of a plan's grid modules: the options' or the tuning profile's.
#[derive(Clone, Copy, Debug)]
struct ModuleChoice {
    bins: Option<[usize; 3]>,
    spread: Option<GpuMethod>,
    interp: Option<GpuMethod>,
    two_pass_sort: Option<bool>,
}

/// The number of points in device coordinate arrays, one per dimension, all of one length.
fn device_count<T, C: DevicePtr<T>>(
    dim: usize,
    coords: &[&C],
    names: [&'static str; 3],
) -> CudaResult<usize> {
    let lens: Vec<usize> = coords.iter().map(|c| c.len()).collect();
    Ok(point_count(dim, &lens, names)?)
}

/// Copies host coordinates (`m` per dimension) into `dev`, one device buffer per dimension,
/// reusing the buffers when they are large enough; returns their addresses.
fn upload_coords<T: CudaFloat>(
    stream: &Arc<CudaStream>,
    dev: &mut Vec<CudaSlice<T>>,
    coords: &[&[T]],
    m: usize,
    what: &str,
) -> CudaResult<[u64; 3]> {
    if dev.len() != coords.len() || dev.first().is_some_and(|d| d.len() < m.max(1)) {
        dev.clear();
        for _ in coords {
            dev.push(alloc::<T>(stream, m, what)?);
        }
    }
    let mut p = [0u64; 3];
    for (d, c) in coords.iter().enumerate() {
        if !c.is_empty() {
            let mut dst = dev[d].slice_mut(..m);
            stream
                .memcpy_htod(*c, &mut dst)
                .map_err(|e| driver("cuMemcpyHtoD (coordinates)", e))?;
        }
        p[d] = ptr(&dev[d], stream);
    }
    Ok(p)
}

/// The `u32` at `word` on the device, once the stream's work before it has run.
fn read_word(stream: &Arc<CudaStream>, word: &CudaSlice<u32>) -> CudaResult<u32> {
    let mut host = [0u32];
    stream
        .memcpy_dtoh(word, &mut host)
        .map_err(|e| driver("cuMemcpyDtoH (non-finite check)", e))?;
    stream
        .synchronize()
        .map_err(|e| driver("cuStreamSynchronize", e))?;
    Ok(host[0])
}

/// `n` values of `T` at device address `x`, copied to the host once the stream's earlier work
/// has run: the slow paths that name a bad point.
fn read_back<T: CudaFloat>(stream: &CudaStream, x: u64, n: usize) -> CudaResult<Vec<T>> {
    let mut host = vec![T::zero(); n];
    // SAFETY: `x .. x + n` lies inside the caller's array (lengths checked at set-points);
    // the copy completes before the synchronisation returns.
    unsafe { cudarc::driver::result::memcpy_dtoh_async(&mut host[..], x, stream.cu_stream()) }
        .map_err(|e| driver("cuMemcpyDtoH (points read back)", e))?;
    stream
        .synchronize()
        .map_err(|e| driver("cuStreamSynchronize", e))?;
    Ok(host)
}

/// The coordinates of point `index` from the device arrays at `coords` (one per dimension):
/// what an error about that point names.
fn read_point<T: CudaFloat>(
    stream: &CudaStream,
    coords: &[u64],
    index: usize,
) -> CudaResult<Vec<T>> {
    coords
        .iter()
        .map(|&base| Ok(read_back::<T>(stream, at::<T>(base, index), 1)?[0]))
        .collect()
}

/// The error naming the first non-finite value of the `n` values at `x`, once a bounding
/// interval showed one (a slow path: errors only).
fn first_non_finite<T: CudaFloat>(
    stream: &CudaStream,
    name: &'static str,
    x: u64,
    n: usize,
) -> CudaResult<()> {
    Ok(check_finite(name, &read_back::<T>(stream, x, n)?)?)
}

/// Bounding interval `(lo, hi)` per array of `n[i]` coordinates at `x[i]` (device `T`),
/// reduced on the GPU into per-block partials and finished here: one small read-back.
/// An empty array gives `lo > hi`.
fn extents(
    stream: &Arc<CudaStream>,
    common: &CommonFns,
    arrays: &[(u64, usize)],
) -> CudaResult<Vec<(f64, f64)>> {
    let nb = common.minmax_blocks();
    let part = alloc::<f64>(stream, 2 * nb * arrays.len(), "bounding boxes")?;
    let base = ptr(&part, stream);
    for (i, &(x, n)) in arrays.iter().enumerate() {
        common.minmax(stream, n, x, at::<f64>(base, 2 * nb * i))?;
    }
    let mut host = vec![0.0f64; 2 * nb * arrays.len()];
    stream
        .memcpy_dtoh(&part, &mut host)
        .map_err(|e| driver("cuMemcpyDtoH (bounding boxes)", e))?;
    stream
        .synchronize()
        .map_err(|e| driver("cuStreamSynchronize", e))?;
    Ok(host
        .chunks(2 * nb)
        .map(|c| {
            c.chunks(2)
                .fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), v| {
                    (lo.min(v[0]), hi.max(v[1]))
                })
        })
        .collect())
}

impl<T: CudaFloat> CudaPlan<T> {
    crate::entry::plan_entry_points!(CudaOptions, super::CudaError);

    fn build(problem: Problem, opts: CudaOptions) -> CudaResult<Self> {
        let (ty, dim, ntransf, tol) = (problem.ty, problem.dim(), problem.ntransf, problem.tol);
        let kernel = sigma::initial_kernel(&problem)?;
        // Also with the caller's stream, whose driver is loaded but whose NVRTC and cuFFT
        // may not be: cudarc would panic on the first call into a missing one.
        probe_libraries()?;
        let (ctx, stream) = match &opts.stream {
            Some(s) => (s.context().clone(), s.clone()),
            None => {
                let ctx = open(opts.device)?;
                let s = ctx.default_stream();
                (ctx, s)
            }
        };
        ctx.bind_to_thread()
            .map_err(|e| driver("cuCtxSetCurrent", e))?;
        keep_freed_memory(&ctx)?;
        let arch = match &opts.arch {
            Some(a) => a.clone(),
            None => detect_arch(&ctx)?,
        };
        let common_src = nudt_gen::gpu::common_module(T::PRECISION)?;
        let common = CommonFns::load(&ctx, &common_src, &arch)?;
        let batch = limits::gpu_batch(ntransf, opts.max_batch);
        let batches = [batch, ntransf % batch];
        let gauss = if ty == TransformType::Type3 && opts.type3 == Type3Method::GaussianCapozzoli {
            Some(GaussWindow::new::<T>(&ctx, &arch, dim, tol)?)
        } else {
            None
        };
        let (mut bins, mut methods) = (opts.bins, [opts.spread, opts.interp]);
        let read = (opts.use_profile && opts.arch.is_none())
            .then(|| gpu_profile::for_device("cuda", &super::profile_key(&arch)))
            .flatten();
        let kind = (dim, ty, T::PRECISION);
        let profile = gpu_profile::tuned(read, kind, &mut bins, &mut methods);
        let [spread, interp] = methods;
        let choice = ModuleChoice {
            bins,
            spread,
            interp,
            two_pass_sort: opts.two_pass_sort,
        };
        let engine = match ty {
            TransformType::Type3 => Engine::Type3Pending,
            _ => {
                let n = sigma::uniform_grid::<T>(&problem, &kernel, None)?;
                let module =
                    grid_module::<T>(&ctx, &arch, dim, kernel, stages::uniform_role(ty), choice)?;
                Engine::Uniform(Box::new(UniformDev::new(
                    &stream,
                    &arch,
                    opts.fft,
                    &module,
                    &problem.modes,
                    &n,
                    kernel,
                    opts.mode_order,
                    &batches,
                )?))
            }
        };
        let ev = || {
            ctx.new_event(Some(CUevent_flags::CU_EVENT_DEFAULT))
                .map_err(|e| driver("cuEventCreate", e))
        };
        let events = [ev()?, ev()?, ev()?, ev()?];
        let kernel_tol = problem.kernel_tol;
        Ok(CudaPlan {
            problem,
            batch,
            kernel,
            kernel_tol,
            choice,
            opts,
            ctx,
            stream,
            arch,
            common,
            gauss,
            t3: None,
            engine,
            num_points: 0,
            num_targets: 0,
            per_set: None,
            coords: Vec::new(),
            held: Vec::new(),
            targets: Vec::new(),
            din: None,
            dout: None,
            events,
            recorded: [false; 2],
            profile,
        })
    }

    fn bind(&self) -> CudaResult<()> {
        self.ctx
            .bind_to_thread()
            .map_err(|e| driver("cuCtxSetCurrent", e))
    }

    fn record(&mut self, which: usize) -> CudaResult<()> {
        self.events[which]
            .record(&self.stream)
            .map_err(|e| driver("cuEventRecord", e))?;
        if which % 2 == 1 {
            self.recorded[which / 2] = true;
        }
        Ok(())
    }

    /// Sets the nonuniform points of a type 1 or 2 plan from host arrays (radians, any finite
    /// value): copies them to the GPU and bin-sorts them there.
    pub fn set_points(&mut self, coords: &[&[T]]) -> CudaResult<()> {
        check_type(1, self.problem.ty)?;
        let m = check_coords(self.problem.dim(), coords, SOURCES)?;
        self.bind()?;
        self.held.clear();
        let mut dev = std::mem::take(&mut self.coords);
        let p = upload_coords(&self.stream, &mut dev, coords, m, "coordinates");
        self.coords = dev;
        self.fit_upsampling(m)?;
        self.sort_uniform(p?, &sets::shared(m), 0)
    }

    /// Sets a point set per transform of a type 1 or 2 plan, as
    /// [`crate::Plan::set_points_per_transform`] (`sets[b][d]`: transform b's coordinates
    /// along dimension d; sizes may differ and may be 0): the sets are concatenated, copied
    /// to the GPU and sorted together, set by set ([`crate::planner::sets`]), and execute
    /// runs every transform in one batch, one launch per stage for all sets and one batched
    /// FFT, on `ntransf` work grids ([`limits::gpu_batch_per_transform`]). Execute then
    /// takes and gives the concatenation of the transforms' arrays. A bad set is
    /// [`NudtError::InTransform`] naming it, and the plan keeps the points it had.
    pub fn set_points_per_transform(&mut self, point_sets: &[&[&[T]]]) -> CudaResult<()> {
        check_type(1, self.problem.ty)?;
        let (dim, ntransf) = (self.problem.dim(), self.problem.ntransf);
        let c = sets::Concatenated::new(dim, ntransf, point_sets)?;
        let m = c.counts.iter().sum();
        self.bind()?;
        self.held.clear();
        let mut dev = std::mem::take(&mut self.coords);
        let p = upload_coords(&self.stream, &mut dev, &c.slices(), m, "coordinates");
        self.coords = dev;
        self.fit_upsampling(sigma::points_per_transform(&c.counts))?;
        self.widen_batch(limits::gpu_batch_per_transform(ntransf))?;
        self.sort_uniform(p?, &c.starts, 0)?;
        self.per_set = Some(c.counts);
        Ok(())
    }

    /// Grows a type 1 or 2 plan's batch to `batch` transforms: its work grids and FFTs
    /// rebuilt for them (the points are set again after).
    fn widen_batch(&mut self, batch: usize) -> CudaResult<()> {
        let Engine::Uniform(u) = &self.engine else {
            unreachable!("type 1/2 plans hold a uniform engine")
        };
        if self.batch >= batch {
            return Ok(());
        }
        let n = u.grid.n[..self.problem.dim()].to_vec();
        self.batch = batch;
        let u = self.uniform_engine(self.kernel, &n)?;
        self.engine = Engine::Uniform(Box::new(u));
        Ok(())
    }

    /// Sets the points of a type 1 or 2 plan from device arrays (one per dimension, `T`
    /// radians), as cuFINUFFT's `setpts` takes them: the plan sorts only the points' order
    /// (a 4-byte index each) and reads the coordinates from these arrays at every execute,
    /// so it holds them until the next set-points or its drop. Holding a clone of each `Arc`
    /// also keeps safe code from writing them meanwhile (`Arc::get_mut` refuses): the
    /// kernels trust the sort, and a point moved out of its bin would be spread outside the
    /// bin's shared-memory box. A non-finite coordinate is found by the sort's first pass
    /// and reported as [`NudtError::NonFinite`], as for host arrays (the host waits for the
    /// sort to read back the one word): the plan then holds no points.
    pub fn set_points_device<C: DevicePtr<T> + Send + Sync + 'static>(
        &mut self,
        coords: &[Arc<C>],
    ) -> CudaResult<()> {
        check_type(1, self.problem.ty)?;
        let refs: Vec<&C> = coords.iter().map(|c| c.as_ref()).collect();
        let m = device_count(self.problem.dim(), &refs, SOURCES)?;
        self.bind()?;
        self.held = coords.iter().map(|c| c.clone() as HeldCoords<T>).collect();
        let stream = self.stream.clone();
        let held = self.held.clone();
        let guards = guard_held(&held, &stream);
        let mut p = [0u64; 3];
        for (d, g) in guards.iter().enumerate() {
            p[d] = g.0;
        }
        let bad = stream
            .clone_htod(&[u32::MAX])
            .map_err(|e| driver("cuMemcpyHtoD (non-finite check)", e))?;
        let r = self
            .fit_upsampling(m)
            .and_then(|()| self.sort_uniform(p, &sets::shared(m), ptr(&bad, &stream)));
        drop(guards);
        r?;
        let first = read_word(&stream, &bad)?;
        if first == u32::MAX {
            return Ok(());
        }
        self.num_points = 0;
        self.held.clear();
        if let Engine::Uniform(u) = &mut self.engine {
            u.grid.forget_points();
        }
        let values = read_point::<T>(&stream, &p[..self.problem.dim()], first as usize)?;
        Err(non_finite_point(SOURCES, first as usize, &values).into())
    }

    /// Sorts the points at `p` in sets starting at `sets` (the last entry their number) on
    /// the fine grid; the plan then holds them as one shared set until the caller says
    /// otherwise.
    fn sort_uniform(&mut self, p: [u64; 3], sets: &[u32], bad: u64) -> CudaResult<()> {
        self.per_set = None;
        self.record(0)?;
        let Engine::Uniform(u) = &mut self.engine else {
            unreachable!("type 1/2 plans hold a uniform engine")
        };
        let scratch = u.scratch(&self.stream);
        u.grid
            .set_points(&self.stream, &self.common, p, sets, scratch, bad)?;
        self.num_points = sets.last().map_or(0, |&m| m as usize);
        self.record(1)
    }

    /// Where σ is the plan layer's to choose, the one for `m` points
    /// ([`sigma::refit_uniform`]), rebuilding the grid, its module and FFTs if it changes. A
    /// grid that cannot be built keeps σ as it is.
    fn fit_upsampling(&mut self, m: usize) -> CudaResult<()> {
        let Some((kernel, n)) =
            sigma::refit_uniform::<T>(&self.problem, DeviceClass::Gpu, &self.kernel, m, None)?
        else {
            return Ok(());
        };
        if let Ok(u) = self.uniform_engine(kernel, &n) {
            self.engine = Engine::Uniform(Box::new(u));
            self.kernel = kernel;
        }
        Ok(())
    }

    /// A type 1 or 2 engine for `kernel` on a fine grid of sides `n`, for the plan's batch.
    fn uniform_engine(&self, kernel: KernelSpec, n: &[usize]) -> CudaResult<UniformDev<T>> {
        let (ty, dim) = (self.problem.ty, self.problem.dim());
        let role = stages::uniform_role(ty);
        let module = grid_module::<T>(&self.ctx, &self.arch, dim, kernel, role, self.choice)?;
        UniformDev::new(
            &self.stream,
            &self.arch,
            self.opts.fft,
            &module,
            &self.problem.modes,
            n,
            kernel,
            self.opts.mode_order,
            &[self.batch, self.problem.ntransf % self.batch],
        )
    }

    /// Sets sources `x` and target frequencies `s` of a type 3 plan (host arrays): copies them
    /// to the GPU, then as [`Self::set_points_type3_device`].
    pub fn set_points_type3(&mut self, sources: &[&[T]], targets: &[&[T]]) -> CudaResult<()> {
        check_type(3, self.problem.ty)?;
        let m = check_coords(self.problem.dim(), sources, SOURCES)?;
        let k = check_coords(self.problem.dim(), targets, TARGETS)?;
        self.bind()?;
        if self.gauss.is_some() {
            return self.set_points_gaussian(sources, targets, m, k);
        }
        self.record(0)?;
        let stream = self.stream.clone();
        let mut src = std::mem::take(&mut self.coords);
        let mut tgt = std::mem::take(&mut self.targets);
        let ps = upload_coords(&stream, &mut src, sources, m, "type 3 sources");
        let pt = upload_coords(&stream, &mut tgt, targets, k, "type 3 targets");
        self.coords = src;
        self.targets = tgt;
        self.prepare_type3(ps?, pt?, m, k)
    }

    /// Sets the sources and target frequencies of a type 3 plan from device arrays (one per
    /// dimension, `T`), as cuFINUFFT's `setpts` takes them: both bounding boxes are reduced on
    /// the GPU (one small read-back: the grids' sizes depend on them), both sets rescaled and
    /// their phase factors computed there, and both sorted. A non-finite coordinate shows in
    /// its array's bounding interval and is reported as [`NudtError::NonFinite`] (the array is
    /// then read back to name its first one); the plan then holds no points.
    pub fn set_points_type3_device<C: DevicePtr<T>>(
        &mut self,
        sources: &[&C],
        targets: &[&C],
    ) -> CudaResult<()> {
        check_type(3, self.problem.ty)?;
        let m = device_count(self.problem.dim(), sources, SOURCES)?;
        let k = device_count(self.problem.dim(), targets, TARGETS)?;
        self.bind()?;
        let stream = self.stream.clone();
        if self.gauss.is_some() {
            // The Gaussian engine plans its geometry on the host.
            let host = |v: &[&C], n: usize| -> CudaResult<Vec<Vec<T>>> {
                v.iter()
                    .map(|c| {
                        let mut h = vec![T::zero(); n];
                        stream
                            .memcpy_dtoh(*c, &mut h)
                            .map_err(|e| driver("cuMemcpyDtoH (type 3 points)", e))?;
                        Ok(h)
                    })
                    .collect()
            };
            let (hs, ht) = (host(sources, m)?, host(targets, k)?);
            stream
                .synchronize()
                .map_err(|e| driver("cuStreamSynchronize", e))?;
            let rs: Vec<&[T]> = hs.iter().map(|v| &v[..]).collect();
            let rt: Vec<&[T]> = ht.iter().map(|v| &v[..]).collect();
            check_coords(self.problem.dim(), &rs, SOURCES)?;
            check_coords(self.problem.dim(), &rt, TARGETS)?;
            return self.set_points_gaussian(&rs, &rt, m, k);
        }
        self.record(0)?;
        let gs: Vec<_> = sources.iter().map(|c| c.device_ptr(&stream)).collect();
        let gt: Vec<_> = targets.iter().map(|c| c.device_ptr(&stream)).collect();
        let (mut ps, mut pt) = ([0u64; 3], [0u64; 3]);
        for (d, g) in gs.iter().enumerate() {
            ps[d] = g.0;
        }
        for (d, g) in gt.iter().enumerate() {
            pt[d] = g.0;
        }
        let r = self.prepare_type3(ps, pt, m, k);
        drop((gs, gt));
        r
    }

    /// The type 3 set-points from device coordinates at `src` (`m` per dimension) and `tgt`
    /// (`k`): grids planned from the bounding boxes, points rescaled and phase factors made on
    /// the GPU, both sets sorted. Grids, buffers and sorts of the last point sets are reused
    /// when the sizes allow.
    fn prepare_type3(
        &mut self,
        src: [u64; 3],
        tgt: [u64; 3],
        m: usize,
        k: usize,
    ) -> CudaResult<()> {
        // Grids (modules, cuFFT plans, buffers) of the last point sets, reused when the new
        // ones need the same sizes.
        let old = match std::mem::replace(&mut self.engine, Engine::Type3Pending) {
            Engine::Type3(t) => Some(t),
            _ => None,
        };
        let dim = self.problem.dim();
        let stream = self.stream.clone();
        let arrays: Vec<(u64, usize)> = (0..dim)
            .map(|d| (src[d], m))
            .chain((0..dim).map(|d| (tgt[d], k)))
            .collect();
        let boxes = extents(&stream, &self.common, &arrays)?;
        let names = SOURCES[..dim].iter().chain(&TARGETS[..dim]);
        for ((&(x, n), &b), &name) in arrays.iter().zip(&boxes).zip(names) {
            if extent_non_finite(b) {
                first_non_finite::<T>(&stream, name, x, n)?;
            }
        }
        let (xb, sb) = boxes.split_at(dim);
        let extent = crate::planner::type3::extents(xb, sb);
        let (kernel, stage_tol) = sigma::type3_kernel(&self.problem, &extent, m + k)?;
        let geometry = Geometry::new::<T>(xb, sb, &kernel, None)?;
        let (n, inner_n) = (geometry.spread(), geometry.inner.clone());
        let cx = geometry.per_axis(|a| a.cx, 0.0);
        let cs = geometry.per_axis(|a| a.cs, 0.0);
        let ig = geometry.per_axis(|a| a.inv_gamma, 0.0);
        let hg = geometry.per_axis(|a| a.h_gamma, 0.0);
        let batches = [self.batch, self.problem.ntransf % self.batch];
        // The modules are the last point sets' where the kernel is theirs.
        if self.t3.as_ref().is_none_or(|t| t.kernel != kernel) {
            self.t3 = None;
            self.t3 = Some(Type3Modules::new::<T>(
                &self.ctx,
                &stream,
                &self.arch,
                dim,
                kernel,
                self.choice,
            )?);
        }
        let mods = self.t3.as_ref().expect("made above");
        let reuse = old.filter(|t| {
            t.kernel == kernel && t.spread.n[..dim] == n[..] && t.inner.grid.n[..dim] == inner_n[..]
        });
        let mut t = match reuse {
            Some(t) => t,
            None => Box::new(Type3Dev {
                kernel,
                spread: FineGrid::new(&mods.spread, &n)?,
                inner: UniformDev::new(
                    &stream,
                    &self.arch,
                    self.opts.fft,
                    &mods.inner,
                    &n,
                    &inner_n,
                    kernel,
                    ModeOrder::Fft,
                    &batches,
                )?,
                y: Vec::new(),
                u: Vec::new(),
                pre: alloc::<T>(&stream, 0, "type 3 pre-phase")?,
                post: alloc::<T>(&stream, 0, "type 3 post-factors")?,
                cwork: alloc::<T>(&stream, 0, "pre-phased strengths")?,
                agrid: alloc::<T>(&stream, 0, "type 3 spreading grids")?,
            }),
        };
        // Per-point buffers, grown when the point sets grow.
        let grow = |b: &mut CudaSlice<T>, len: usize, what: &str| -> CudaResult<()> {
            if b.len() < len.max(1) {
                // The old buffer goes first, so the two never coexist.
                *b = alloc::<T>(&stream, 0, what)?;
                *b = alloc::<T>(&stream, len, what)?;
            }
            Ok(())
        };
        let grow_all = |v: &mut Vec<CudaSlice<T>>, len: usize, what: &str| -> CudaResult<()> {
            if v.len() != dim || v[0].len() < len.max(1) {
                v.clear();
                for _ in 0..dim {
                    v.push(alloc::<T>(&stream, len, what)?);
                }
            }
            Ok(())
        };
        grow_all(&mut t.y, m, "rescaled sources")?;
        grow_all(&mut t.u, k, "rescaled targets")?;
        grow(&mut t.pre, 2 * m, "type 3 pre-phase")?;
        grow(&mut t.post, 2 * k, "type 3 post-factors")?;
        let alen = t
            .spread
            .len()
            .checked_mul(2 * self.batch)
            .ok_or(NudtError::GridOverflow)?;
        let clen = m
            .checked_mul(2 * self.batch)
            .ok_or(NudtError::GridOverflow)?;
        grow(&mut t.cwork, clen, "pre-phased strengths")?;
        grow(&mut t.agrid, alen, "type 3 spreading grids")?;
        let p3 = |v: &[CudaSlice<T>], d: usize| v.get(d).map_or(0, |s| ptr(s, &stream));
        let sgn = self.problem.isign.signum() as f64;
        use super::device::{blocks, Arg};
        let f64s = |a: [f64; 3]| [Arg::F64(a[0]), Arg::F64(a[1]), Arg::F64(a[2])];
        if m > 0 {
            let kk = &self.common.t3_sources;
            let mut args = vec![
                Arg::U32(m as u32),
                Arg::I32(dim as i32),
                Arg::Ptr(src[0]),
                Arg::Ptr(src[1]),
                Arg::Ptr(src[2]),
            ];
            args.extend(f64s(cx));
            args.extend(f64s(ig));
            args.extend(f64s(cs));
            args.push(Arg::F64(sgn));
            args.extend([
                Arg::Ptr(p3(&t.y, 0)),
                Arg::Ptr(p3(&t.y, 1)),
                Arg::Ptr(p3(&t.y, 2)),
                Arg::Ptr(ptr(&t.pre, &stream)),
            ]);
            kk.launch(&stream, (blocks(m, kk.threads), 1), &args)?;
        }
        if k > 0 {
            let kk = &self.common.t3_targets;
            let mut args = vec![
                Arg::U32(k as u32),
                Arg::I32(dim as i32),
                Arg::Ptr(tgt[0]),
                Arg::Ptr(tgt[1]),
                Arg::Ptr(tgt[2]),
            ];
            args.extend(f64s(cs));
            args.extend(f64s(hg));
            args.extend(f64s(cx));
            args.extend([
                Arg::F64(sgn),
                Arg::I32(mods.qz.len() as i32),
                Arg::Ptr(ptr(&mods.qz, &stream)),
                Arg::Ptr(ptr(&mods.qw, &stream)),
                Arg::F64(kernel.half_width()),
                Arg::Ptr(p3(&t.u, 0)),
                Arg::Ptr(p3(&t.u, 1)),
                Arg::Ptr(p3(&t.u, 2)),
                Arg::Ptr(ptr(&t.post, &stream)),
            ]);
            kk.launch(&stream, (blocks(k, kk.threads), 1), &args)?;
        }
        let py = [p3(&t.y, 0), p3(&t.y, 1), p3(&t.y, 2)];
        let pu = [p3(&t.u, 0), p3(&t.u, 1), p3(&t.u, 2)];
        let scratch = t.inner.scratch(&stream);
        t.spread
            .set_points(&stream, &self.common, py, &sets::shared(m), scratch, 0)?;
        t.inner
            .grid
            .set_points(&stream, &self.common, pu, &sets::shared(k), scratch, 0)?;
        self.engine = Engine::Type3(t);
        self.kernel = kernel;
        self.kernel_tol = stage_tol;
        self.num_points = m;
        self.num_targets = k;
        self.record(1)
    }

    /// The Gaussian-gridding `set_points_type3`: the plan layer's geometry, prepared on the
    /// GPU by [`GaussDev::new`].
    fn set_points_gaussian(
        &mut self,
        sources: &[&[T]],
        targets: &[&[T]],
        m: usize,
        k: usize,
    ) -> CudaResult<()> {
        let old = match std::mem::replace(&mut self.engine, Engine::Type3Pending) {
            Engine::Gaussian(g) => Some(g),
            _ => None,
        };
        self.record(0)?;
        let win = self.gauss.as_ref().expect("called for Gaussian plans only");
        let geometry = GaussGeometry::of(self.problem.tol, sources, targets)?;
        let dev = GaussDev::new(
            &self.stream,
            &self.common,
            win,
            &geometry,
            sources,
            targets,
            self.problem.isign,
            [self.batch, self.problem.ntransf % self.batch],
            old,
        )?;
        self.engine = Engine::Gaussian(Box::new(dev));
        (self.kernel, self.kernel_tol) = (geometry.kernel(), self.problem.tol);
        self.num_points = m;
        self.num_targets = k;
        self.record(1)
    }

    /// Whether each transform has its own point set ([`Self::set_points_per_transform`]).
    pub fn points_per_transform(&self) -> bool {
        self.per_set.is_some()
    }

    /// The points set, which every transform shares: sources and targets (type 3) or points
    /// and 0.
    fn counts(&self) -> Option<Vec<(usize, usize)>> {
        let set = match &self.engine {
            Engine::Uniform(u) => u.grid.has_points(),
            Engine::Type3Pending => false,
            Engine::Type3(_) | Engine::Gaussian(_) => true,
        };
        set.then(|| match &self.per_set {
            Some(each) => each.iter().map(|&m| (m, 0)).collect(),
            None => self
                .problem
                .shared_counts(self.num_points, self.num_targets),
        })
    }

    /// One checked run of `pass` from host slices: the input copied in, the stages run on
    /// the device by batches, the output copied back.
    fn execute_host(
        &mut self,
        input: &[Complex<T>],
        output: &mut [Complex<T>],
        pass: Pass,
    ) -> CudaResult<()> {
        self.check_io(input.len(), output.len(), pass)?;
        self.bind()?;
        let stream = self.stream.clone();
        let grow = |slot: &mut Option<CudaSlice<T>>, len: usize, what: &str| -> CudaResult<()> {
            if slot.as_ref().is_none_or(|s| s.len() < len.max(1)) {
                *slot = None;
                *slot = Some(alloc::<T>(&stream, len, what)?);
            }
            Ok(())
        };
        let mut din = self.din.take();
        let mut dout = self.dout.take();
        grow(&mut din, 2 * input.len(), "input")?;
        grow(&mut dout, 2 * output.len(), "output")?;
        let (mut din, dout) = (din.unwrap(), dout.unwrap());
        if !input.is_empty() {
            if let Err(e) = stream.memcpy_htod(interleaved(input), &mut din) {
                self.din = Some(din);
                self.dout = Some(dout);
                return Err(driver("cuMemcpyHtoD (input)", e));
            }
        }
        let (pi, po) = (ptr(&din, &stream), ptr(&dout, &stream));
        let r = self.run(pi, po, pass);
        self.din = Some(din);
        self.dout = Some(dout);
        r?;
        if !output.is_empty() {
            let dout = self.dout.as_ref().unwrap();
            stream
                .memcpy_dtoh(&dout.slice(..2 * output.len()), interleaved_mut(output))
                .map_err(|e| driver("cuMemcpyDtoH (output)", e))?;
        }
        stream
            .synchronize()
            .map_err(|e| driver("cuStreamSynchronize", e))
    }

    /// Runs the transform on device buffers of interleaved complex values (`2·len` reals),
    /// with no host copies. Returns once the work is queued on the plan's stream.
    pub fn execute_device<I: DevicePtr<T>, O: DevicePtrMut<T>>(
        &mut self,
        input: &I,
        output: &mut O,
    ) -> CudaResult<()> {
        self.execute_on_device(input, output, false)
    }

    /// [`Self::execute_adjoint`] on device buffers, queued on the plan's stream.
    pub fn execute_adjoint_device<I: DevicePtr<T>, O: DevicePtrMut<T>>(
        &mut self,
        input: &I,
        output: &mut O,
    ) -> CudaResult<()> {
        self.execute_on_device(input, output, true)
    }

    fn execute_on_device<I: DevicePtr<T>, O: DevicePtrMut<T>>(
        &mut self,
        input: &I,
        output: &mut O,
        adjoint: bool,
    ) -> CudaResult<()> {
        if input.len() % 2 != 0 || output.len() % 2 != 0 {
            return Err(NudtError::Length {
                what: "device buffers (interleaved complex, even length)".into(),
                expected: input.len() & !1,
                got: input.len(),
            }
            .into());
        }
        let pass = Pass::transform(adjoint);
        self.check_io(input.len() / 2, output.len() / 2, pass)?;
        self.bind()?;
        let stream = self.stream.clone();
        let (pi, gi) = input.device_ptr(&stream);
        let (po, go) = output.device_ptr_mut(&stream);
        let r = self.run(pi, po, pass);
        drop((gi, go));
        r
    }

    /// One run of `pass` (the transform, its adjoint, a gradient pass) between device
    /// addresses (validated lengths).
    fn run(&mut self, input: u64, output: u64, pass: Pass) -> CudaResult<()> {
        // The held coordinates are read by this work.
        let stream = self.stream.clone();
        let held = self.held.clone();
        let guards = guard_held(&held, &stream);
        let r = self.run_held(input, output, pass);
        drop(guards);
        r
    }

    fn run_held(&mut self, input: u64, output: u64, pass: Pass) -> CudaResult<()> {
        let adjoint = pass.adjoint;
        let (a, b) = self
            .problem
            .lengths(self.num_points, self.num_targets, pass);
        let sz = std::mem::size_of::<T>();
        let stream = self.stream.clone();
        if adjoint && a > 0 && b > 0 {
            // Type 3's adjoint phases its K inputs where the forward phases its M.
            if let Engine::Type3(t) = &mut self.engine {
                let len = 2 * a * self.batch;
                if t.cwork.len() < len {
                    t.cwork = alloc::<T>(&stream, 0, "phased inputs")?;
                    t.cwork = alloc::<T>(&stream, len, "phased inputs")?;
                }
            }
        }
        self.record(2)?;
        if a == 0 {
            memset0(&stream, output, 2 * b * self.problem.ntransf * sz)?;
        }
        if a > 0 && b > 0 {
            let (ty, isign) = (self.problem.ty, self.problem.isign);
            let mut t0 = 0;
            while t0 < self.problem.ntransf {
                let count = self.batch.min(self.problem.ntransf - t0);
                let input = at::<T>(input, 2 * t0 * a);
                let output = at::<T>(output, 2 * t0 * b);
                match (&self.engine, self.engine.grids()) {
                    (_, Some((fine, type3))) => {
                        let mut batch = Batch {
                            stream: &stream,
                            common: &self.common,
                            fine,
                            type3,
                            input,
                            output,
                            count,
                            points: self.num_points,
                            targets: self.num_targets,
                        };
                        stages::run(&mut batch, ty, isign, pass)?;
                    }
                    (Engine::Gaussian(g), _) => {
                        let win = self.gauss.as_ref().expect("Gaussian engines have a window");
                        let isign = if adjoint { -isign } else { isign };
                        g.execute(win, &stream, input, output, count, isign, adjoint)?;
                    }
                    _ => return Err(NudtError::PointsNotSet.into()),
                }
                t0 += count;
            }
        }
        self.record(3)
    }

    /// Spreads strengths with an explicit method onto the fine grid (types 1/2; for checks
    /// against the CPU schedules and between methods). Returns the fine grid.
    pub fn spread_only(
        &mut self,
        method: GpuMethod,
        c: &[Complex<T>],
    ) -> CudaResult<Vec<Complex<T>>> {
        self.bind()?;
        let stream = self.stream.clone();
        let Engine::Uniform(u) = &self.engine else {
            return Err(NudtError::WrongType {
                expected: 1,
                actual: crate::planner::validate::type_number(self.problem.ty),
            }
            .into());
        };
        if !u.grid.has_points() {
            return Err(NudtError::PointsNotSet.into());
        }
        if c.len() != self.num_points {
            return Err(NudtError::Length {
                what: "strengths".into(),
                expected: self.num_points,
                got: c.len(),
            }
            .into());
        }
        let mut dc = alloc::<T>(&stream, 2 * c.len(), "strengths")?;
        if !c.is_empty() {
            stream
                .memcpy_htod(interleaved(c), &mut dc)
                .map_err(|e| driver("cuMemcpyHtoD (strengths)", e))?;
        }
        let len = u.grid.len();
        let g = alloc::<T>(&stream, 2 * len, "fine grid")?;
        memset0(
            &stream,
            ptr(&g, &stream),
            2 * len * std::mem::size_of::<T>(),
        )?;
        let _held = guard_held(&self.held, &stream);
        u.grid.spread_with(
            method,
            false,
            &stream,
            ptr(&dc, &stream),
            ptr(&g, &stream),
            1,
        )?;
        let mut out = vec![Complex::<T>::default(); len];
        stream
            .memcpy_dtoh(&g.slice(..2 * len), interleaved_mut(&mut out))
            .map_err(|e| driver("cuMemcpyDtoH (fine grid)", e))?;
        stream
            .synchronize()
            .map_err(|e| driver("cuStreamSynchronize", e))?;
        Ok(out)
    }

    /// GPU times of the last `set_points` and run (execute, adjoint or gradient pass; waits
    /// for them to finish).
    pub fn timings(&self) -> CudaResult<CudaTimings> {
        let ms = |i: usize| -> CudaResult<f32> {
            if !self.recorded[i] {
                return Ok(0.0);
            }
            self.events[2 * i]
                .elapsed_ms(&self.events[2 * i + 1])
                .map_err(|e| driver("cuEventElapsedTime", e))
        };
        Ok(CudaTimings {
            setpts_ms: ms(0)?,
            execute_ms: ms(1)?,
        })
    }

    /// The `nudt tune --backend cuda` profile whose bins and method this plan took, if any
    /// ([`CudaOptions::use_profile`]).
    pub fn profile(&self) -> Option<&'static Path> {
        self.profile
    }

    /// Waits for all work queued by this plan.
    pub fn synchronize(&self) -> CudaResult<()> {
        self.stream
            .synchronize()
            .map_err(|e| driver("cuStreamSynchronize", e))
    }

    /// Kernel width in grid points: for the Gaussian type 3, its window's `2m + 1`.
    pub fn width(&self) -> usize {
        self.gauss.as_ref().map_or(self.kernel.width, |g| g.width())
    }

    pub fn kernel(&self) -> &KernelSpec {
        &self.kernel
    }

    pub fn tolerance(&self) -> f64 {
        self.problem.tol
    }

    pub fn dim(&self) -> usize {
        self.problem.dim()
    }

    /// The order of the modes in input and output arrays.
    pub fn mode_order(&self) -> ModeOrder {
        self.opts.mode_order
    }

    pub fn transform_type(&self) -> TransformType {
        self.problem.ty
    }

    pub fn ntransf(&self) -> usize {
        self.problem.ntransf
    }

    /// The GPU the kernels were generated for.
    pub fn arch(&self) -> &GpuArch {
        &self.arch
    }

    pub fn stream(&self) -> &Arc<CudaStream> {
        &self.stream
    }

    /// Fine grid of the FFT (type 3: the inner type 2's, or the Gaussian's one grid, once
    /// points are set).
    pub fn fine_grid(&self) -> Vec<usize> {
        match &self.engine {
            Engine::Uniform(u) => u.grid.n[..self.problem.dim()].to_vec(),
            Engine::Type3(t) => t.inner.grid.n[..self.problem.dim()].to_vec(),
            Engine::Gaussian(g) => g.grid(),
            Engine::Type3Pending => Vec::new(),
        }
    }

    /// What the plan layer chose for this plan (a type 3's grids once its points are set):
    /// the same as any backend's for the same problem and points.
    pub fn recipe(&self) -> Recipe {
        let spread = match &self.engine {
            Engine::Type3(t) => t.spread.n[..self.problem.dim()].to_vec(),
            _ => Vec::new(),
        };
        Recipe::new(
            &self.problem,
            DeviceClass::Gpu,
            self.kernel,
            self.kernel_tol,
            self.fine_grid(),
            spread,
        )
    }

    /// Bin sides of the spreading grid.
    pub fn bins(&self) -> Vec<usize> {
        match &self.engine {
            Engine::Uniform(u) => u.grid.spec.bins[..self.problem.dim()].to_vec(),
            Engine::Type3(t) => t.spread.spec.bins[..self.problem.dim()].to_vec(),
            Engine::Gaussian(_) | Engine::Type3Pending => Vec::new(),
        }
    }

    /// (spreading, interpolation) methods chosen for the current points (`None` before
    /// points are set, and for the Gaussian type 3, which sorts nothing: one thread per point).
    pub fn methods(&self) -> Option<(GpuMethod, GpuMethod)> {
        match &self.engine {
            Engine::Uniform(u) => u.grid.methods(),
            Engine::Type3(t) => Some((t.spread.methods()?.0, t.inner.grid.methods()?.1)),
            Engine::Gaussian(_) | Engine::Type3Pending => None,
        }
    }
}

impl<T: CudaFloat> std::fmt::Debug for CudaPlan<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CudaPlan")
            .field("type", &self.problem.ty)
            .field("precision", &T::PRECISION)
            .field("modes", &self.problem.modes)
            .field("isign", &self.problem.isign)
            .field("ntransf", &self.problem.ntransf)
            .field("tol", &self.problem.tol)
            .field("kernel", &self.kernel)
            .field("type3", &self.opts.type3)
            .field("width", &self.width())
            .field("gpu", &self.arch.name)
            .field("fine_grid", &self.fine_grid())
            .field("bins", &self.bins())
            .field("methods", &self.methods())
            .finish()
    }
}
