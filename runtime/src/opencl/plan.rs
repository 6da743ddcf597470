//! NUFFTs of types 1, 2 and 3 on an OpenCL device: the CUDA backend's bin sort, spreading
//! and interpolation (GM-sort, SM and output-driven, chosen as CUDA chooses them), mode
//! corrections and type 3 phase factors, rendered in OpenCL C from the same templates
//! (`nudt_gen::gpu::spread_module_in`, `common_module_in`), and the generated FFT
//! ([`super::ClFft`]).
//!
//! Set-points sorts the points on the device ([`FineGrid::set_points`]); execute runs the plan
//! layer's stage sequence ([`crate::planner::stages`]) on batches of stacked transforms, one
//! launch per stage and one batched FFT per batch ([`super::engine`]). Host slices or device
//! buffers in and out.

use super::device::ClDevice;
use super::engine::{Batch, Engine, Type3Dev, UniformDev};
use super::error::cl;
use super::error::OpenClResult;
use super::fft::ClFloat;
use super::gaussian::{GaussDev, GaussWindow};
use super::grid::{ClSpreadModule, FineGrid};
use super::launch::Kernel;
use super::launch::{
    alloc, build, copy, elements, enqueue, kernel_of, launch, mem, opt_mem, read, share, upload,
    write, zero, Arg, ELEMENT_GROUP,
};
use crate::error::NudtError;
use crate::planner::gaussian::GaussGeometry;
use crate::planner::stages::{self, Pass};
use crate::planner::type3::Geometry;
use crate::planner::validate::{
    check_coords, check_finite, check_type, extent_non_finite, point_count, SOURCES, TARGETS,
};
use crate::planner::{gpu_profile, limits, sets};
use crate::planner::{sigma, DeviceClass, Problem, Recipe, Type3Method};
use crate::uniform::ModeOrder;
use nudt_gen::gpu::{
    common_module_in, fourier_quadrature, names, GpuMethod, ELEMENT_THREADS, MINMAX_BLOCKS,
};
use nudt_gen::{KernelKind, KernelSpec, TransformType, Upsampling};
use num_complex::Complex;
use opencl3::memory::Buffer;
use opencl3::program::Program;
use std::path::Path;
use std::sync::Arc;

/// Options of an OpenCL plan; the defaults are what a FINUFFT user expects.
#[derive(Clone, Debug)]
pub struct ClOptions {
    pub kernel: KernelKind,
    /// Upsampling factor σ; `None` lets the plan layer choose it once the points are known,
    /// as on every backend ([`crate::planner::sigma`]).
    pub upsampling: Option<Upsampling>,
    pub mode_order: ModeOrder,
    /// The device; `None`: [`ClDevice::first`].
    pub device: Option<Arc<ClDevice>>,
    /// The spreading method (GM-sort, SM or output-driven); `None` chooses per point set as
    /// the CUDA backend does. A method the device's work-groups cannot hold is refused.
    pub spread: Option<GpuMethod>,
    /// The interpolation method (GM-sort or SM); `None` chooses per point set.
    pub interp: Option<GpuMethod>,
    /// Bin sides of the sort and the SM methods (1 for unused dimensions); `None` takes the
    /// planner's for the kernel and the device's local memory.
    pub bins: Option<[usize; 3]>,
    /// Take this device's `nudt tune --backend opencl` profile ([`gpu_profile`]), when there
    /// is one, for the bins and method of type 1 and 2 plans whose options leave both open.
    pub use_profile: bool,
    /// Transforms per batch (one launch per stage and one FFT for all of them, on as many
    /// work grids); 0 means `min(ntransf, 8)`, as on CUDA ([`crate::planner::limits::gpu_batch`]).
    pub max_batch: usize,
    /// How type 3 is computed: FINUFFT's scheme (default) or Gaussian gridding, as on every
    /// backend.
    pub type3: Type3Method,
    /// Plan for derivatives with respect to the points, as the CPU's option of that name.
    pub gradients: bool,
}

impl Default for ClOptions {
    fn default() -> Self {
        ClOptions {
            kernel: KernelKind::Pswf,
            upsampling: None,
            mode_order: ModeOrder::Cmcl,
            device: None,
            spread: None,
            interp: None,
            bins: None,
            use_profile: true,
            max_batch: 0,
            type3: Type3Method::Finufft,
            gradients: false,
        }
    }
}

/// What a type 3 plan needs besides the spread modules: the extents' and the phase kernels.
struct Type3Kernels {
    minmax: Kernel,
    sources: Kernel,
    targets: Kernel,
}

/// What a type 3's grids need for one kernel (chosen from the last point sets' extents): the
/// outer and inner grids' spread modules and the kernel's Fourier quadrature (nodes,
/// weights) for the post-factors.
struct Type3Modules {
    kernel: KernelSpec,
    outer: ClSpreadModule,
    inner: ClSpreadModule,
    qz: Buffer<f64>,
    qw: Buffer<f64>,
    nq: usize,
}

/// A NUFFT plan of type 1, 2 or 3 in 1–3 dimensions on an OpenCL device.
pub struct ClPlan<T: ClFloat> {
    problem: Problem,
    kernel: KernelSpec,
    /// The tolerance `kernel` was chosen for (type 3: a stage's share).
    kernel_tol: f64,
    /// The spreading and interpolation methods and the bins asked for (or tuned).
    want: [Option<GpuMethod>; 2],
    bins: Option<[usize; 3]>,
    /// The tuning profile whose bins and method the plan took, if any.
    profile: Option<&'static Path>,
    mode_order: ModeOrder,
    /// Transforms per batch.
    batch: usize,
    engine: Engine<T>,
    cmul: Kernel,
    t3: Option<Type3Kernels>,
    /// The Gaussian-gridding type 3's window and program (`None` for other plans).
    gauss: Option<GaussWindow>,
    /// Device copies of one batch's inputs and outputs.
    io: Option<(Buffer<T>, Buffer<T>)>,
    /// Each transform's number of points where each has its own set (types 1 and 2), `None`
    /// where they share one.
    per_set: Option<Vec<usize>>,
    /// The spread modules: types 1 and 2, the one grid's; type 3, both grids' for the last
    /// point sets' kernel. Then the common module and the device, dropped last.
    module: Option<ClSpreadModule>,
    t3_modules: Option<Type3Modules>,
    common: Arc<Program>,
    dev: Arc<ClDevice>,
}

impl<T: ClFloat> std::fmt::Debug for ClPlan<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ClPlan")
            .field("problem", &self.problem)
            .field("fine_grid", &self.fine_grid())
            .field("width", &self.kernel.width)
            .field("device", &self.dev.info.name)
            .finish()
    }
}

/// The size of a point set in device buffers (`dim` of them, all of one length).
fn device_coords<T>(
    dim: usize,
    coords: &[&Buffer<T>],
    names: [&'static str; 3],
) -> OpenClResult<usize> {
    let lens = coords
        .iter()
        .map(|c| elements(c))
        .collect::<Result<Vec<_>, _>>()?;
    Ok(point_count(dim, &lens, names)?)
}

/// Bounding interval `(lo, hi)` of each device array of `n` coordinates, by the min/max
/// kernel: one partial per work-group, finished here (`lo > hi` for an empty array).
fn extents<T>(
    dev: &ClDevice,
    minmax: &Kernel,
    arrays: &[(&Buffer<T>, usize)],
) -> OpenClResult<Vec<(f64, f64)>> {
    let group = ELEMENT_THREADS as usize;
    arrays
        .iter()
        .map(|&(x, n)| {
            if n == 0 {
                return Ok((f64::INFINITY, f64::NEG_INFINITY));
            }
            let groups = n.div_ceil(group).min(MINMAX_BLOCKS as usize);
            let part = alloc::<f64>(dev, 2 * groups)?;
            let args = [Arg::U64(n as u64), mem(x), mem(&part)];
            enqueue(dev, minmax, groups * group, group, 1, &args)?;
            let mut host = vec![0.0f64; 2 * groups];
            read(dev, &part, &mut host)?;
            Ok(host
                .chunks(2)
                .fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), v| {
                    (lo.min(v[0]), hi.max(v[1]))
                }))
        })
        .collect()
}

impl<T: ClFloat> ClPlan<T> {
    crate::entry::plan_entry_points!(ClOptions, super::OpenClError);

    fn build(problem: Problem, opts: ClOptions) -> OpenClResult<Self> {
        let (ty, dim, tol) = (problem.ty, problem.dim(), problem.tol);
        let kernel = sigma::initial_kernel(&problem)?;
        let dev = match opts.device {
            Some(d) => d,
            None => ClDevice::first()?,
        };
        let common_src =
            common_module_in(T::PRECISION, dev.info.dialect()).map_err(|e| dev.refusal(e))?;
        let common = build(&dev, &common_src)?;
        let (mut bins, mut want) = (opts.bins, [opts.spread, opts.interp]);
        let read = opts
            .use_profile
            .then(|| gpu_profile::for_device("opencl", &dev.info.profile_key()))
            .flatten();
        let profile = gpu_profile::tuned(read, (dim, ty, T::PRECISION), &mut bins, &mut want);
        let batch = limits::gpu_batch(problem.ntransf, opts.max_batch);
        let gauss = match (ty, problem.type3) {
            (TransformType::Type3, Type3Method::GaussianCapozzoli) => {
                Some(GaussWindow::new::<T>(&dev, dim, tol)?)
            }
            _ => None,
        };
        let (engine, module, t3) = if ty == TransformType::Type3 {
            let t3 = Type3Kernels {
                minmax: kernel_of(&common, names::MINMAX)?,
                sources: kernel_of(&common, names::T3_SOURCES)?,
                targets: kernel_of(&common, names::T3_TARGETS)?,
            };
            (Engine::Type3Pending, None, Some(t3))
        } else {
            let n = sigma::uniform_grid::<T>(&problem, &kernel, None)?;
            let role = stages::uniform_role(ty);
            let module = ClSpreadModule::new(&dev, dim, kernel, T::PRECISION, role, bins, want)?;
            let grids = (pad3(&problem.modes), pad3(&n));
            let u = UniformDev::new(&dev, &module, &common, grids, opts.mode_order, batch)?;
            (Engine::Uniform(Box::new(u)), Some(module), None)
        };
        let kernel_tol = problem.kernel_tol;
        Ok(ClPlan {
            problem,
            kernel,
            kernel_tol,
            want,
            bins,
            profile,
            mode_order: opts.mode_order,
            batch,
            engine,
            cmul: kernel_of(&common, names::CMUL)?,
            t3,
            gauss,
            io: None,
            per_set: None,
            module,
            t3_modules: None,
            common,
            dev,
        })
    }

    /// Sets the nonuniform points of a type 1 or 2 plan (radians, any finite value) and
    /// bin-sorts them on the device.
    pub fn set_points(&mut self, coords: &[&[T]]) -> OpenClResult<()> {
        self.engine.uniform()?;
        let m = check_coords(self.problem.dim(), coords, SOURCES)?;
        let x: Vec<Buffer<T>> = coords
            .iter()
            .map(|c| upload(&self.dev, c))
            .collect::<Result<_, _>>()?;
        self.fit_upsampling(m)?;
        self.per_set = None;
        self.engine
            .uniform()?
            .grid
            .set_points(&self.dev, x, &sets::shared(m))
    }

    /// Sets a point set per transform of a type 1 or 2 plan, as
    /// [`crate::Plan::set_points_per_transform`] (`sets[b][d]`: transform b's coordinates
    /// along dimension d; sizes may differ and may be 0): the sets are concatenated, copied
    /// to the device and sorted together, set by set ([`crate::planner::sets`]), and execute
    /// runs every transform in one batch, one launch per stage for all sets and one batched
    /// FFT, on `ntransf` work grids ([`limits::gpu_batch_per_transform`]). Execute then
    /// takes and gives the concatenation of the transforms' arrays. A bad set is
    /// [`NudtError::InTransform`] naming it, and the plan keeps the points it had.
    pub fn set_points_per_transform(&mut self, point_sets: &[&[&[T]]]) -> OpenClResult<()> {
        self.engine.uniform()?;
        let (dim, ntransf) = (self.problem.dim(), self.problem.ntransf);
        let c = sets::Concatenated::new(dim, ntransf, point_sets)?;
        let x: Vec<Buffer<T>> = c
            .slices()
            .iter()
            .map(|v| upload(&self.dev, v))
            .collect::<Result<_, _>>()?;
        self.fit_upsampling(sigma::points_per_transform(&c.counts))?;
        self.widen_batch(limits::gpu_batch_per_transform(ntransf))?;
        self.per_set = None;
        self.engine
            .uniform()?
            .grid
            .set_points(&self.dev, x, &c.starts)?;
        self.per_set = Some(c.counts);
        Ok(())
    }

    /// Grows a type 1 or 2 plan's batch to `batch` transforms: its work grids and FFT
    /// rebuilt for them (the points are set again after).
    fn widen_batch(&mut self, batch: usize) -> OpenClResult<()> {
        if self.batch >= batch {
            return Ok(());
        }
        let n = self.engine.uniform()?.grid.n;
        let module = self.module.as_ref().expect("type 1/2 plans have a module");
        let grids = (pad3(&self.problem.modes), n);
        let u = UniformDev::new(
            &self.dev,
            module,
            &self.common,
            grids,
            self.mode_order,
            batch,
        )?;
        self.engine = Engine::Uniform(Box::new(u));
        self.batch = batch;
        self.io = None;
        Ok(())
    }

    /// Where σ is the plan layer's to choose, the one for `m` points
    /// ([`sigma::refit_uniform`]), rebuilding the grid, its module and FFT if it changes. A
    /// grid that cannot be built keeps σ as it is.
    fn fit_upsampling(&mut self, m: usize) -> OpenClResult<()> {
        let Some((kernel, n)) =
            sigma::refit_uniform::<T>(&self.problem, DeviceClass::Gpu, &self.kernel, m, None)?
        else {
            return Ok(());
        };
        let (dev, dim, ty) = (&self.dev, self.problem.dim(), self.problem.ty);
        let role = stages::uniform_role(ty);
        let built = ClSpreadModule::new(dev, dim, kernel, T::PRECISION, role, self.bins, self.want)
            .and_then(|module| {
                let grids = (pad3(&self.problem.modes), pad3(&n));
                let u = UniformDev::new(
                    dev,
                    &module,
                    &self.common,
                    grids,
                    self.mode_order,
                    self.batch,
                )?;
                Ok((module, u))
            });
        if let Ok((module, u)) = built {
            self.engine = Engine::Uniform(Box::new(u));
            self.module = Some(module);
            self.kernel = kernel;
        }
        Ok(())
    }

    /// Sets the points of a type 1 or 2 plan from device buffers of the plan's context (one
    /// per dimension, `T` radians, all of one length: the number of points). A non-finite
    /// coordinate is found by the sort and reported as [`NudtError::NonFinite`], as for host
    /// arrays; the plan then holds no points. The plan sorts only the
    /// points' order and reads the coordinates from these buffers at every execute: it
    /// holds a reference to each (OpenCL counts them) until the next set-points, and they
    /// must not be written meanwhile: the kernels trust the sort, and a moved point would be
    /// spread outside its bin's box in local memory.
    pub fn set_points_device(&mut self, coords: &[&Buffer<T>]) -> OpenClResult<()> {
        self.engine.uniform()?;
        let m = device_coords(self.problem.dim(), coords, SOURCES)?;
        let held = coords.iter().map(|b| share(b)).collect::<Result<_, _>>()?;
        self.fit_upsampling(m)?;
        self.per_set = None;
        self.engine
            .uniform()?
            .grid
            .set_points(&self.dev, held, &sets::shared(m))
    }

    /// Sets the sources `x` and target frequencies `s` of a type 3 plan (host arrays): copies
    /// them to the device, then as [`Self::set_points_type3_device`].
    pub fn set_points_type3(&mut self, sources: &[&[T]], targets: &[&[T]]) -> OpenClResult<()> {
        check_type(3, self.problem.ty)?;
        let m = check_coords(self.problem.dim(), sources, SOURCES)?;
        let k = check_coords(self.problem.dim(), targets, TARGETS)?;
        let up = |v: &[&[T]]| -> OpenClResult<Vec<Buffer<T>>> {
            v.iter().map(|c| upload(&self.dev, c)).collect()
        };
        let (x, s) = (up(sources)?, up(targets)?);
        let (xr, sr): (Vec<_>, Vec<_>) = (x.iter().collect(), s.iter().collect());
        if self.gauss.is_some() {
            let geometry = GaussGeometry::of(self.problem.tol, sources, targets)?;
            return self.prepare_gaussian(&geometry, &xr, &sr, m, k);
        }
        self.prepare_type3(&xr, &sr, m, k)
    }

    /// Sets the sources and target frequencies of a type 3 plan from device buffers of the
    /// plan's context (one per dimension each, `T`; each set's buffers all of one length:
    /// its size). Plans both grids from the sets' extents (reduced on the device), rescales
    /// both sets and computes their phase factors on the device, and sorts both. The grids of
    /// the last point sets (kernels, FFT, buffers) are kept when the new sets need the same
    /// sizes. A non-finite coordinate is reported as [`NudtError::NonFinite`].
    pub fn set_points_type3_device(
        &mut self,
        sources: &[&Buffer<T>],
        targets: &[&Buffer<T>],
    ) -> OpenClResult<()> {
        check_type(3, self.problem.ty)?;
        let m = device_coords(self.problem.dim(), sources, SOURCES)?;
        let k = device_coords(self.problem.dim(), targets, TARGETS)?;
        if self.gauss.is_some() {
            let (xb, sb) = self.bounds((sources, m), (targets, k))?;
            let geometry = GaussGeometry::new(self.problem.tol, &xb, &sb)?;
            return self.prepare_gaussian(&geometry, sources, targets, m, k);
        }
        self.prepare_type3(sources, targets, m, k)
    }

    /// Bounding intervals per dimension of the `m` sources `x` and the `k` targets `s`,
    /// reduced on the device. A non-finite coordinate shows in its array's interval and is
    /// reported as [`NudtError::NonFinite`] (the array then read back to name the first).
    #[allow(clippy::type_complexity)]
    fn bounds(
        &self,
        (x, m): (&[&Buffer<T>], usize),
        (s, k): (&[&Buffer<T>], usize),
    ) -> OpenClResult<(Vec<(f64, f64)>, Vec<(f64, f64)>)> {
        let t3 = self.t3.as_ref().expect("type 3 plans have their kernels");
        let arrays: Vec<(&Buffer<T>, usize)> = x
            .iter()
            .map(|b| (*b, m))
            .chain(s.iter().map(|b| (*b, k)))
            .collect();
        let mut xb = extents(&self.dev, &t3.minmax, &arrays)?;
        let names = SOURCES[..x.len()].iter().chain(&TARGETS[..s.len()]);
        for ((&(b, n), &e), &name) in arrays.iter().zip(&xb).zip(names) {
            if extent_non_finite(e) {
                let mut host = vec![T::zero(); n];
                read(&self.dev, b, &mut host)?;
                check_finite(name, &host)?;
            }
        }
        let sb = xb.split_off(x.len());
        Ok((xb, sb))
    }

    /// The Gaussian-gridding type 3 set-points: the plan layer's `geometry` for the `m`
    /// sources `x` and `k` targets `s` on the device, prepared there by [`GaussDev::new`].
    fn prepare_gaussian(
        &mut self,
        geometry: &GaussGeometry,
        x: &[&Buffer<T>],
        s: &[&Buffer<T>],
        m: usize,
        k: usize,
    ) -> OpenClResult<()> {
        let old = match std::mem::replace(&mut self.engine, Engine::Type3Pending) {
            Engine::Gaussian(g) => Some(g),
            _ => None,
        };
        let t3 = self.t3.as_ref().expect("type 3 plans have their kernels");
        let win = self.gauss.as_ref().expect("called for Gaussian plans only");
        let (isign, batch) = (self.problem.isign, self.batch);
        let g = GaussDev::new(
            &self.dev,
            &t3.sources,
            win,
            geometry,
            (x, s),
            (m, k),
            isign,
            batch,
            old,
        )?;
        self.engine = Engine::Gaussian(Box::new(g));
        (self.kernel, self.kernel_tol) = (geometry.kernel(), self.problem.tol);
        self.io = None;
        Ok(())
    }

    /// Type 3 set-points from `m` sources `x` and `k` targets `s` on the device.
    fn prepare_type3(
        &mut self,
        x: &[&Buffer<T>],
        s: &[&Buffer<T>],
        m: usize,
        k: usize,
    ) -> OpenClResult<()> {
        let old = match std::mem::replace(&mut self.engine, Engine::Type3Pending) {
            Engine::Type3(t) => Some(t),
            _ => None,
        };
        let dim = self.problem.dim();
        let (xb, sb) = self.bounds((x, m), (s, k))?;
        let extent = crate::planner::type3::extents(&xb, &sb);
        let (kernel, stage_tol) = sigma::type3_kernel(&self.problem, &extent, m + k)?;
        let geometry = Geometry::new::<T>(&xb, &sb, &kernel, None)?;
        let (n, inner_n) = (pad3(&geometry.spread()), pad3(&geometry.inner));
        let cx = geometry.per_axis(|a| a.cx, 0.0);
        let cs = geometry.per_axis(|a| a.cs, 0.0);
        let ig = geometry.per_axis(|a| a.inv_gamma, 0.0);
        let hg = geometry.per_axis(|a| a.h_gamma, 0.0);
        let dev = self.dev.clone();
        // The modules are the last point sets' where the kernel is theirs.
        if self.t3_modules.as_ref().is_none_or(|t| t.kernel != kernel) {
            self.t3_modules = None;
            let choice = (self.bins, self.want);
            self.t3_modules = Some(Type3Modules::new::<T>(&dev, dim, kernel, choice)?);
        }
        let mods = self.t3_modules.as_ref().expect("made above");
        let t3 = self.t3.as_ref().expect("type 3 plans have their kernels");
        let (mut sgrid, mut inner, agrid) = match old {
            Some(t) if t.kernel == kernel && t.spread.n == n && t.inner.grid.n == inner_n => {
                let t = *t;
                (t.spread, t.inner, t.agrid)
            }
            _ => {
                let sgrid = FineGrid::<T>::new(&mods.outer, &self.common, n)?;
                let len = sgrid.len().checked_mul(2 * self.batch);
                let agrid = alloc::<T>(&dev, len.ok_or(NudtError::GridOverflow)?)?;
                let (common, grids) = (&self.common, (n, inner_n));
                let inner =
                    UniformDev::new(&dev, &mods.inner, common, grids, ModeOrder::Fft, self.batch)?;
                (sgrid, inner, agrid)
            }
        };
        let f64s = |a: [f64; 3]| [Arg::F64(a[0]), Arg::F64(a[1]), Arg::F64(a[2])];
        let sgn = Arg::F64(self.problem.isign.signum() as f64);
        let y: Vec<Buffer<T>> = (0..dim).map(|_| alloc(&dev, m)).collect::<Result<_, _>>()?;
        let pre = alloc::<T>(&dev, 2 * m)?;
        if m > 0 {
            let mut args = vec![Arg::U32(m as u32), Arg::I32(dim as i32)];
            args.extend((0..3).map(|d| opt_mem(x.get(d).copied())));
            args.extend(f64s(cx));
            args.extend(f64s(ig));
            args.extend(f64s(cs));
            args.push(sgn);
            args.extend((0..3).map(|d| opt_mem(y.get(d))));
            args.push(mem(&pre));
            launch(&dev, &t3.sources, m, ELEMENT_GROUP, 1, &args)?;
        }
        let u: Vec<Buffer<T>> = (0..dim).map(|_| alloc(&dev, k)).collect::<Result<_, _>>()?;
        let post = alloc::<T>(&dev, 2 * k)?;
        if k > 0 {
            let mut args = vec![Arg::U32(k as u32), Arg::I32(dim as i32)];
            args.extend((0..3).map(|d| opt_mem(s.get(d).copied())));
            args.extend(f64s(cs));
            args.extend(f64s(hg));
            args.extend(f64s(cx));
            args.extend([
                Arg::F64(self.problem.isign.signum() as f64),
                Arg::I32(mods.nq as i32),
                mem(&mods.qz),
                mem(&mods.qw),
                Arg::F64(kernel.half_width()),
            ]);
            args.extend((0..3).map(|d| opt_mem(u.get(d))));
            args.push(mem(&post));
            launch(&dev, &t3.targets, k, ELEMENT_GROUP, 1, &args)?;
        }
        sgrid.set_points(&dev, y, &sets::shared(m))?;
        inner.grid.set_points(&dev, u, &sets::shared(k))?;
        self.kernel = kernel;
        self.kernel_tol = stage_tol;
        self.engine = Engine::Type3(Box::new(Type3Dev {
            kernel,
            spread: sgrid,
            agrid,
            inner,
            pre,
            post,
            cw: alloc::<T>(&dev, 2 * m * self.batch)?,
            k,
        }));
        self.io = None;
        Ok(())
    }

    /// Points and targets, which every transform shares (`None` before the points are set;
    /// targets 0 but for type 3).
    fn points_set(&self) -> Option<(usize, usize)> {
        match &self.engine {
            Engine::Uniform(u) => Some((u.grid.points()?, 0)),
            Engine::Type3(t) => Some((t.spread.points()?, t.k)),
            Engine::Gaussian(g) => Some((g.m, g.k)),
            Engine::Type3Pending => None,
        }
    }

    /// Whether each transform has its own point set ([`Self::set_points_per_transform`]).
    pub fn points_per_transform(&self) -> bool {
        self.per_set.is_some()
    }

    /// [`Self::points_set`] for each transform, or each transform's own set.
    fn counts(&self) -> Option<Vec<(usize, usize)>> {
        let (m, k) = self.points_set()?;
        Some(match &self.per_set {
            Some(each) => each.iter().map(|&m| (m, 0)).collect(),
            None => self.problem.shared_counts(m, k),
        })
    }

    /// One checked run of `pass` from host slices: batch by batch, the input written, the
    /// stages run, the output read.
    fn execute_host(
        &mut self,
        input: &[Complex<T>],
        output: &mut [Complex<T>],
        pass: Pass,
    ) -> OpenClResult<()> {
        let each = self.check_io(input.len(), output.len(), pass)?;
        if input.is_empty() || output.is_empty() {
            output.iter_mut().for_each(|v| *v = Complex::default());
            return Ok(());
        }
        let dev = self.dev.clone();
        // Batch by batch, each batch's inputs and outputs the concatenation of its
        // transforms' (one batch for a set per transform).
        let sums = |c: &[(usize, usize)]| c.iter().fold((0, 0), |s, l| (s.0 + l.0, s.1 + l.1));
        let batches: Vec<(usize, (usize, usize))> = each
            .chunks(self.batch)
            .map(|c| (c.len(), sums(c)))
            .collect();
        let most = batches.iter().map(|b| b.1 .0.max(b.1 .1)).max();
        let (mut din, dout) = self.io(most.unwrap_or(0))?;
        let mut r = Ok(());
        let (mut x, mut y) = (input, &mut *output);
        for (count, (a, b)) in batches {
            let (xa, rest) = x.split_at(a);
            let (yb, more) = std::mem::take(&mut y).split_at_mut(b);
            (x, y) = (rest, more);
            r = write(&dev, &mut din, crate::float::interleaved(xa))
                .and_then(|()| self.run(&din, &dout, count, pass))
                .and_then(|()| read(&dev, &dout, crate::float::interleaved_mut(yb)));
            if r.is_err() {
                break;
            }
        }
        self.io = Some((din, dout));
        r
    }

    /// Runs the transform on device buffers of interleaved complex values (`2·len` reals of
    /// `T`, `ntransf` stacked, at least as long as [`Self::execute`]'s slices), with no host
    /// copies. Returns once the work is done.
    pub fn execute_device(
        &mut self,
        input: &Buffer<T>,
        output: &mut Buffer<T>,
    ) -> OpenClResult<()> {
        self.execute_buffers(input, output, false)
    }

    /// [`Self::execute_adjoint`] on device buffers.
    pub fn execute_adjoint_device(
        &mut self,
        input: &Buffer<T>,
        output: &mut Buffer<T>,
    ) -> OpenClResult<()> {
        self.execute_buffers(input, output, true)
    }

    fn execute_buffers(
        &mut self,
        input: &Buffer<T>,
        output: &mut Buffer<T>,
        adjoint: bool,
    ) -> OpenClResult<()> {
        let pass = Pass::transform(adjoint);
        let counts = self.counts().ok_or(NudtError::PointsNotSet)?;
        let each: Vec<(usize, usize)> = counts
            .iter()
            .map(|&(m, k)| self.problem.lengths(m, k, pass))
            .collect();
        // Every batch but a per-transform plan's one batch has the first transform's lengths.
        let (a, b) = each[0];
        // Buffers may be longer than the stack (OpenCL has no empty buffers, and pooled ones
        // are rounded up), not shorter.
        let [what_in, what_out] = self.problem.io_names(pass);
        let ni: usize = each.iter().map(|l| l.0).sum();
        let no: usize = each.iter().map(|l| l.1).sum();
        for (what, buf, need) in [(what_in, input, ni), (what_out, &*output, no)] {
            let got = complex_len(buf)?;
            if got < need {
                return Err(NudtError::Length {
                    what: format!("{what} (device buffer, complex values)"),
                    expected: need,
                    got,
                }
                .into());
            }
        }
        let dev = self.dev.clone();
        let sz = 2 * std::mem::size_of::<T>();
        if ni == 0 || no == 0 {
            return zero(&dev, output, 2 * no);
        }
        let ntransf = self.problem.ntransf;
        if ntransf <= self.batch {
            self.run(input, output, ntransf, pass)?;
            return dev.queue.finish().map_err(cl("clFinish"));
        }
        // The kernels take a batch from the start of a buffer: the others go through the
        // plan's own buffers, by device copies.
        let (mut din, dout) = self.io(a.max(b) * self.batch)?;
        let mut r = Ok(());
        for t0 in (0..ntransf).step_by(self.batch) {
            let count = self.batch.min(ntransf - t0);
            r = copy(&dev, input, t0 * a * sz, &mut din, 0, count * a * sz)
                .and_then(|()| self.run(&din, &dout, count, pass))
                .and_then(|()| copy(&dev, &dout, 0, output, t0 * b * sz, count * b * sz));
            if r.is_err() {
                break;
            }
        }
        self.io = Some((din, dout));
        r.and_then(|()| dev.queue.finish().map_err(cl("clFinish")))
    }

    /// The plan's device buffers for one batch's inputs and outputs, `len` complex values
    /// each (grown on demand).
    fn io(&mut self, len: usize) -> OpenClResult<(Buffer<T>, Buffer<T>)> {
        match self.io.take() {
            Some((i, o)) if complex_len(&i)? >= len => Ok((i, o)),
            _ => Ok((
                alloc::<T>(&self.dev, 2 * len)?,
                alloc::<T>(&self.dev, 2 * len)?,
            )),
        }
    }

    /// `count` stacked runs of `pass` (transforms, adjoints, gradient passes) from the device
    /// buffer `din` into `dout`.
    fn run(
        &mut self,
        din: &Buffer<T>,
        dout: &Buffer<T>,
        count: usize,
        pass: Pass,
    ) -> OpenClResult<()> {
        let adjoint = pass.adjoint;
        let (points, targets) = self.points_set().ok_or(NudtError::PointsNotSet)?;
        if let (Engine::Type3(t), true) = (&mut self.engine, adjoint) {
            // Type 3's adjoint phases its K inputs where the forward phases its M.
            if complex_len(&t.cw)? < targets * self.batch {
                t.cw = alloc::<T>(&self.dev, 2 * targets * self.batch)?;
            }
        }
        if let Engine::Gaussian(g) = &mut self.engine {
            let win = self.gauss.as_ref().expect("Gaussian engines have a window");
            let isign = if adjoint {
                -self.problem.isign
            } else {
                self.problem.isign
            };
            return g.execute(&self.dev, win, din, dout, count, isign, adjoint);
        }
        let mut batch = Batch {
            dev: &self.dev,
            cmul: &self.cmul,
            engine: self.engine.staged().ok_or(NudtError::PointsNotSet)?,
            input: din,
            output: dout,
            count,
            points,
            targets,
        };
        stages::run(&mut batch, self.problem.ty, self.problem.isign, pass)
    }

    pub fn transform_type(&self) -> TransformType {
        self.problem.ty
    }

    pub fn dim(&self) -> usize {
        self.problem.dim()
    }

    /// The order of the modes in input and output arrays.
    pub fn mode_order(&self) -> ModeOrder {
        self.mode_order
    }

    pub fn kernel(&self) -> &KernelSpec {
        &self.kernel
    }

    pub fn width(&self) -> usize {
        self.kernel.width
    }

    pub fn tolerance(&self) -> f64 {
        self.problem.tol
    }

    pub fn ntransf(&self) -> usize {
        self.problem.ntransf
    }

    /// The fine grid the FFT runs on (type 3: the inner type 2's, once the points are set).
    pub fn fine_grid(&self) -> Vec<usize> {
        match &self.engine {
            Engine::Uniform(u) => u.grid.n[..self.problem.dim()].to_vec(),
            Engine::Type3(t) => t.inner.grid.n[..self.problem.dim()].to_vec(),
            Engine::Gaussian(g) => g.grid(),
            Engine::Type3Pending => Vec::new(),
        }
    }

    /// Bin sides of the sort (type 3: of the outer grid's).
    pub fn bins(&self) -> Vec<usize> {
        let module = match &self.t3_modules {
            Some(t) => Some(&t.outer),
            None => self.module.as_ref(),
        };
        module.map_or_else(Vec::new, |m| m.spec.bins[..self.problem.dim()].to_vec())
    }

    /// What the plan layer chose for this plan (a type 3's grids once its points are set):
    /// the same as any backend's for the same problem and points.
    pub fn recipe(&self) -> Recipe {
        let dim = self.problem.dim();
        let spread = match &self.engine {
            Engine::Type3(t) => t.spread.n[..dim].to_vec(),
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

    /// The spreading and interpolation methods for the current points (type 3: the outer
    /// grid's spreading, the inner grid's interpolation).
    pub fn methods(&self) -> Option<(GpuMethod, GpuMethod)> {
        match &self.engine {
            Engine::Uniform(u) => u.grid.methods(),
            Engine::Type3(t) => Some((t.spread.methods()?.0, t.inner.grid.methods()?.1)),
            Engine::Gaussian(_) | Engine::Type3Pending => None,
        }
    }

    /// The `nudt tune --backend opencl` profile whose bins and method this plan took, if any
    /// ([`ClOptions::use_profile`]).
    pub fn profile(&self) -> Option<&'static Path> {
        self.profile
    }

    /// The device the plan runs on.
    pub fn device(&self) -> &Arc<ClDevice> {
        &self.dev
    }
}

/// Complex values of `T` that `b` holds.
fn complex_len<T>(b: &Buffer<T>) -> OpenClResult<usize> {
    Ok(elements(b)? / 2)
}

/// Per-dimension sizes padded with ones to three dimensions, as the kernels take them.
fn pad3(v: &[usize]) -> [usize; 3] {
    std::array::from_fn(|d| v.get(d).copied().unwrap_or(1))
}

impl Type3Modules {
    fn new<T: ClFloat>(
        dev: &Arc<ClDevice>,
        dim: usize,
        kernel: KernelSpec,
        (bins, want): (Option<[usize; 3]>, [Option<GpuMethod>; 2]),
    ) -> OpenClResult<Self> {
        let module = |role| ClSpreadModule::new(dev, dim, kernel, T::PRECISION, role, bins, want);
        let (qz, qw) = fourier_quadrature(&kernel);
        Ok(Type3Modules {
            kernel,
            outer: module(stages::OUTER_ROLE)?,
            inner: module(stages::INNER_ROLE)?,
            nq: qz.len(),
            qz: upload(dev, &qz)?,
            qw: upload(dev, &qw)?,
        })
    }
}
