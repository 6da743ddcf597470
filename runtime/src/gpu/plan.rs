//! [`GpuPlan`]: one NUFFT plan for every GPU backend. What a plan decides and keeps — the
//! problem, kernel and grids the plan layer chose, the bins and methods of its modules, its
//! batch, the point sets it holds, and the order of set-points' steps (σ refitted to the
//! points, grids rebuilt, points sorted; type 3's bounding boxes, geometry, modules and
//! grids, reused where the sizes allow) — is written here once; a backend ([`Backend`])
//! supplies the device halves of those steps, its entry points for its own device arrays and
//! its execute.
//!
//! `GpuPlan` is public and its [`Backend`] crate-private: the backends are sealed (a user
//! names `CudaPlan` or `ClPlan`), hence the allowance of private bounds below.
#![allow(private_bounds, private_interfaces)]

use super::device::Device;
use super::engine::{Engine, SortedGrid, Type3, Uniform};
use super::gaussian::{GaussGrids, Windowed};
use super::type3::Boxes;
use crate::error::NudtError;
use crate::float::Float;
use crate::planner::gaussian::GaussGeometry;
use crate::planner::stages::{self, Stage};
use crate::planner::type3::Geometry;
use crate::planner::validate::{check_coords, check_type, SOURCES, TARGETS};
use crate::planner::{gpu_profile, limits, od_bins, sets, sigma};
use crate::planner::{DeviceClass, Problem, Recipe, Type3Method};
use crate::uniform::ModeOrder;
use nudt_gen::gpu::{GpuMethod, GridRole};
use nudt_gen::{KernelSpec, TransformType};
use std::path::Path;

/// Bins and methods of a plan's grid modules: the options' or the tuning profile's.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub(crate) struct ModuleChoice {
    pub bins: Option<[usize; 3]>,
    pub spread: Option<GpuMethod>,
    pub interp: Option<GpuMethod>,
    /// The bin sort in two passes (`Some(true)`), one, or by size (`None`).
    pub two_pass_sort: Option<bool>,
}

/// A backend's type 1/2 engine.
pub(crate) type UniformOf<B, T> =
    Uniform<<B as Backend<T>>::Grid, <B as Backend<T>>::Modes, <B as Backend<T>>::Buf>;
/// A backend's type 3 engine.
pub(crate) type Type3Of<B, T> =
    Type3<<B as Backend<T>>::Grid, <B as Backend<T>>::Modes, <B as Backend<T>>::Buf>;
/// A backend's Gaussian type 3 engine.
pub(crate) type GaussOf<B, T> = GaussGrids<<B as Backend<T>>::Buf, <B as Backend<T>>::GaussFft>;
/// What a backend's plan executes on.
pub(crate) type EngineOf<B, T> = Engine<
    <B as Backend<T>>::Grid,
    <B as Backend<T>>::Modes,
    <B as Backend<T>>::Buf,
    GaussOf<B, T>,
>;

/// A grid module to make: `dim`-D grids in `role` for `kernel`, with `choice`'s bins and
/// methods.
#[derive(Clone, Copy)]
pub(crate) struct ModuleKey {
    pub dim: usize,
    pub kernel: KernelSpec,
    pub role: GridRole,
    pub choice: ModuleChoice,
}

/// A type 1/2 engine to make: `modes` in `order` on a fine grid of sides `n` for `kernel`,
/// with batches of `batches[0]` transforms (and a last one of `batches[1]`, where not 0). For
/// a type 3 engine, `modes` are the outer grid's sides and `n` the inner grid's.
pub(crate) struct GridShape<'a> {
    pub modes: &'a [usize],
    pub n: &'a [usize],
    pub kernel: KernelSpec,
    pub order: ModeOrder,
    pub batches: [usize; 2],
}

/// A type 3's point sets on the device — `m` sources and `k` targets in `dim` dimensions, in
/// one pair that every transform shares or a pair per transform (set after set, from
/// `starts`: the sources', the targets') — with the plan's sign and batches.
pub(crate) struct PointSets<'a, P> {
    pub src: &'a P,
    pub tgt: &'a P,
    pub m: usize,
    pub k: usize,
    pub starts: [&'a [u32]; 2],
    pub dim: usize,
    pub isign: i32,
    pub batches: [usize; 2],
}

/// Type 3's modules for one kernel: both grids' and the kernel's Fourier quadrature.
pub(crate) struct Type3Modules<M, Q> {
    pub kernel: KernelSpec,
    pub outer: M,
    pub inner: M,
    pub quadrature: Q,
}

/// What a type 3's preparation takes: the kernel's quadrature, each pair of point sets'
/// geometry, the point sets.
pub(crate) type Type3Prep<'a, B, T> = (
    &'a <B as Backend<T>>::Quadrature,
    &'a [Geometry],
    &'a PointSets<'a, <B as Backend<T>>::Points>,
);

/// What a Gaussian type 3's preparation takes: the window, the geometry, the point sets, and
/// the last point sets' engine to reuse.
pub(crate) type GaussPrep<'a, B, T> = (
    &'a <B as Backend<T>>::Window,
    &'a GaussGeometry,
    &'a PointSets<'a, <B as Backend<T>>::Points>,
    Option<Box<GaussOf<B, T>>>,
);

/// A backend's type 3 modules.
pub(crate) type Type3ModulesOf<B, T> =
    Type3Modules<<B as Backend<T>>::Module, <B as Backend<T>>::Quadrature>;

/// Makes host values on the fly for a transfer to a device: `fill(at, to)` writes elements
/// `at .. at + to.len()`; called for disjoint pieces from several threads at once.
pub(crate) type Fill<'a, T> = dyn Fn(usize, &mut [T]) + Sync + 'a;
/// Takes values arriving from a device: `take(at, from)` gets elements `at .. at +
/// from.len()`; called for disjoint pieces from several threads at once.
pub(crate) type Take<'a, T> = dyn Fn(usize, &[T]) + Sync + 'a;

/// What the shared plan needs of a GPU backend for elements of `T`.
pub(crate) trait Backend<T: Float>: Sized {
    type Error: From<NudtError>;
    /// A grid's generated module for one kernel and role (sized by no grid).
    type Module;
    /// A kernel's Fourier quadrature (nodes, weights) on the device: type 3's post-factors.
    type Quadrature;
    /// A fine grid with its sort, the modes on it with the FFTs, a device array of `T`.
    type Grid: SortedGrid;
    type Modes;
    type Buf;
    /// The Gaussian type 3's FFTs, and its window and module.
    type GaussFft;
    type Window: Windowed;
    /// Coordinates on the device, one array per dimension, which a sort keeps reading.
    type Points;
    /// The device API its arrays are moved with (a multi-device plan's communicator).
    type Dev: Device<T, Buf = Self::Buf, Error = Self::Error>;
    /// Its name in tuning profiles.
    const NAME: &'static str;
    /// Its plan's name, for `Debug`.
    const PLAN: &'static str;

    fn module(&self, key: ModuleKey) -> Result<Self::Module, Self::Error>;
    fn quadrature(&self, kernel: &KernelSpec) -> Result<Self::Quadrature, Self::Error>;
    /// A type 1/2 engine through `module`.
    fn uniform(
        &self,
        module: &Self::Module,
        shape: GridShape<'_>,
    ) -> Result<UniformOf<Self, T>, Self::Error>;
    /// Replaces `u`'s grid (its sort and kernels) by one through `module`, on the same sides;
    /// its buffers and FFTs stay.
    fn regrid(&self, u: &mut UniformOf<Self, T>, module: &Self::Module) -> Result<(), Self::Error>;
    /// Host point sets (`sets[b][d]`, validated, `m` points together) copied to the device,
    /// one array per dimension holding the sets one after another: each set's slice copied
    /// to its place, with no concatenation on the host.
    fn upload(&mut self, sets: &[&[&[T]]], m: usize) -> Result<Self::Points, Self::Error>;
    /// A device array of `len` values that `fill` makes on the host a piece at a time,
    /// straight into the transfer (a multi-device plan's shares of the caller's arrays).
    fn upload_with(
        &mut self,
        len: usize,
        what: &str,
        fill: &Fill<'_, T>,
    ) -> Result<Self::Buf, Self::Error>;
    /// The first `len` values of `b`, handed to `take` a piece at a time once the device's
    /// earlier work has run (a multi-device plan's shares of the caller's outputs and the
    /// modes it scatters to their rows).
    fn download_with(
        &mut self,
        b: &Self::Buf,
        len: usize,
        take: &Take<'_, T>,
    ) -> Result<(), Self::Error>;
    /// Points whose coordinates are the device arrays `coords`, one per dimension.
    fn points(&mut self, coords: Vec<Self::Buf>) -> Self::Points;
    /// Bin-sorts `points` onto `u`'s grid, in sets starting at `sets` (the last entry their
    /// number).
    fn sort(
        &mut self,
        u: &mut UniformOf<Self, T>,
        points: Self::Points,
        sets: &[u32],
    ) -> Result<(), Self::Error>;
    /// Bounding intervals of each pair's sources and targets, the typed error where a
    /// coordinate is not finite ([`super::type3::set_bounds`]).
    fn bounds(
        &mut self,
        sets: &PointSets<'_, Self::Points>,
    ) -> Result<Vec<(Boxes, Boxes)>, Self::Error>;
    /// A type 3 engine through `mods`.
    fn type3(
        &self,
        mods: &Type3ModulesOf<Self, T>,
        shape: GridShape<'_>,
    ) -> Result<Type3Of<Self, T>, Self::Error>;
    /// Rescales and phases the point sets for their geometries (and the post-factors by the
    /// kernel's quadrature `quad`) on the device and sorts both onto `t`'s grids
    /// ([`super::type3::Type3Points::prepare`]).
    fn prepare_type3(
        &mut self,
        t: &mut Type3Of<Self, T>,
        job: Type3Prep<'_, Self, T>,
    ) -> Result<(), Self::Error>;
    /// The Gaussian type 3's window for `dim` dimensions and tolerance `tol`, its module
    /// compiled.
    fn window(&self, dim: usize, tol: f64) -> Result<Self::Window, Self::Error>;
    /// The Gaussian type 3's device state for `geometry` and the point sets; `old`, the last
    /// point sets', gives back its grids where their sizes are unchanged.
    fn gaussian(&mut self, job: GaussPrep<'_, Self, T>) -> Result<GaussOf<Self, T>, Self::Error>;
    /// Marks the start (`false`) or end (`true`) of a set-points on the device's timeline
    /// (CUDA's events); nothing by default.
    fn mark_setpts(&mut self, _end: bool) -> Result<(), Self::Error> {
        Ok(())
    }
    /// The device's name, for `Debug`.
    fn device_name(&self) -> String;
    fn device(&self) -> &Self::Dev;
    /// The common module's kernels of a multi-device plan (exchanges and routing).
    fn slab_kernels(
        &self,
    ) -> Result<super::routing::SlabKernels<<Self::Dev as Device<T>>::Kernel>, Self::Error>;
    /// Runs `stages` on the type 1/2 engine `u` for `count` transforms, from `io[0]` into
    /// `io[1]`: a multi-device plan's steps ([`stages::split_sequence`]).
    fn run_stages(
        &self,
        u: &mut UniformOf<Self, T>,
        stages: &[Stage],
        io: [&Self::Buf; 2],
        count: usize,
    ) -> Result<(), Self::Error>;
}

/// A NUFFT plan of type 1, 2 or 3 in 1–3 dimensions on a GPU backend `B`
/// ([`crate::cuda::CudaPlan`], [`crate::opencl::ClPlan`]).
pub struct GpuPlan<B: Backend<T>, T: Float> {
    pub(crate) problem: Problem,
    /// Transforms per batch (one launch per stage and one FFT for all of them).
    pub(crate) batch: usize,
    pub(crate) kernel: KernelSpec,
    /// The tolerance `kernel` was chosen for (type 3: a stage's share).
    pub(crate) kernel_tol: f64,
    /// The bins and methods its modules are made with: the options', with the tuning
    /// profile's where it applies to the points ([`Self::retune`]).
    pub(crate) choice: ModuleChoice,
    /// The options' own.
    pub(crate) given: ModuleChoice,
    /// The tuning profile's choice for the plan's kind, where the options leave room for one.
    pub(crate) tuned: Option<gpu_profile::Tuned>,
    pub(crate) mode_order: ModeOrder,
    /// Sources (points) and targets of the point sets, which every transform shares.
    pub(crate) num_points: usize,
    pub(crate) num_targets: usize,
    /// Each transform's numbers of points (type 3: sources) and targets where each has its
    /// own sets, `None` where they share one.
    pub(crate) per_set: Option<Vec<(usize, usize)>>,
    /// Whether the last set-points succeeded ([`Self::begin_set_points`]).
    pub(crate) points_set: bool,
    pub(crate) engine: EngineOf<B, T>,
    /// FINUFFT's type 3: the modules for the kernel of the last point sets (the kernel
    /// depends on their extents).
    pub(crate) t3: Option<Type3ModulesOf<B, T>>,
    /// The Gaussian type 3's window (type 3 plans with `GaussianCapozzoli`).
    pub(crate) gauss: Option<B::Window>,
    /// The backend's device state, dropped last.
    pub(crate) dev: B,
}

/// What a backend's `build` found before the shared plan is made: its device state, the
/// problem's first kernel, and the options' choices.
pub(crate) struct Setup<B> {
    pub dev: B,
    /// The device's key in tuning profiles, where the options take a profile.
    pub profile_key: Option<String>,
    pub choice: ModuleChoice,
    pub mode_order: ModeOrder,
    /// The options' transforms per batch (0: the planner's).
    pub max_batch: usize,
}

/// The [`Setup`] of a GPU plan from its backend's options `$opts` (each backend's options
/// have the fields the plan layer reads alike: bins, methods, sort, mode order, batch), its
/// device state `$dev` and profile key `$key`.
macro_rules! setup {
    ($opts:expr, $dev:expr, $key:expr) => {
        crate::gpu::plan::Setup {
            dev: $dev,
            profile_key: $key,
            choice: crate::gpu::plan::ModuleChoice {
                bins: $opts.bins,
                spread: $opts.spread,
                interp: $opts.interp,
                two_pass_sort: $opts.two_pass_sort,
            },
            mode_order: $opts.mode_order,
            max_batch: $opts.max_batch,
        }
    };
}
pub(crate) use setup;

/// `given` with the profile's bins and the method of the step a plan of type `ty` tunes
/// (spreading for type 1, interpolation for type 2).
fn with_tuned(given: ModuleChoice, ty: TransformType, t: &gpu_profile::Tuned) -> ModuleChoice {
    let mut choice = ModuleChoice {
        bins: Some(t.bins),
        ..given
    };
    if ty == TransformType::Type1 {
        choice.spread = Some(t.method);
    } else {
        choice.interp = Some(t.method);
    }
    choice
}

impl<B: Backend<T>, T: Float> GpuPlan<B, T> {
    /// The plan of `problem` on the device `setup` opened: the profile's bins and methods
    /// where the options leave them open, the batch, the Gaussian type 3's window, and a type
    /// 1/2 plan's grid for its first kernel.
    pub(crate) fn assemble(problem: Problem, setup: Setup<B>) -> Result<Self, B::Error> {
        let (ty, dim) = (problem.ty, problem.dim());
        let kernel = sigma::initial_kernel(&problem)?;
        let given = setup.choice;
        let kind = (dim, ty, T::PRECISION);
        let read = setup
            .profile_key
            .and_then(|key| gpu_profile::for_device(B::NAME, &key));
        let tuned = gpu_profile::tuned(read, kind, given.bins, [given.spread, given.interp]);
        // Taken until points say otherwise: the modules are made for it now, and most plans
        // are of the density it was timed at.
        let choice = tuned.map_or(given, |t| with_tuned(given, ty, &t));
        let batch = limits::gpu_batch(problem.ntransf, setup.max_batch);
        let dev = setup.dev;
        let gauss = match (ty, problem.type3) {
            (TransformType::Type3, Type3Method::GaussianCapozzoli) => {
                Some(dev.window(dim, problem.tol)?)
            }
            _ => None,
        };
        let kernel_tol = problem.kernel_tol;
        let mut plan = GpuPlan {
            problem,
            batch,
            kernel,
            kernel_tol,
            choice,
            given,
            tuned,
            mode_order: setup.mode_order,
            num_points: 0,
            num_targets: 0,
            per_set: None,
            points_set: false,
            engine: Engine::Type3Pending,
            t3: None,
            gauss,
            dev,
        };
        if ty != TransformType::Type3 {
            let n = sigma::uniform_grid::<T>(&plan.problem, &kernel, None)?;
            let module = plan.grid_module(kernel)?;
            let u = plan.uniform_engine(&module, kernel, &n)?;
            plan.engine = Engine::Uniform(Box::new(u));
        }
        Ok(plan)
    }

    /// The module of a type 1/2 plan's fine grid for `kernel`.
    fn grid_module(&self, kernel: KernelSpec) -> Result<B::Module, B::Error> {
        let (dim, role) = (self.problem.dim(), stages::uniform_role(self.problem.ty));
        let choice = self.choice;
        self.dev.module(ModuleKey {
            dim,
            kernel,
            role,
            choice,
        })
    }

    /// A type 1/2 engine for `kernel` on a fine grid of sides `n`, for the plan's batch.
    fn uniform_engine(
        &self,
        module: &B::Module,
        kernel: KernelSpec,
        n: &[usize],
    ) -> Result<UniformOf<B, T>, B::Error> {
        let shape = GridShape {
            modes: &self.problem.modes,
            n,
            kernel,
            order: self.mode_order,
            batches: self.batches(),
        };
        self.dev.uniform(module, shape)
    }

    /// The batch, and the size of the last one where it is smaller.
    pub(crate) fn batches(&self) -> [usize; 2] {
        [self.batch, self.problem.ntransf % self.batch]
    }

    /// The host set-points of a type 1 or 2 plan ([`gpu_set_points!`]).
    pub(crate) fn set_points_host(&mut self, coords: &[&[T]]) -> Result<(), B::Error> {
        check_type(1, self.problem.ty)?;
        let m = check_coords(self.problem.dim(), coords, SOURCES)?;
        self.begin_set_points();
        let points = self.dev.upload(&[coords], m)?;
        self.sort_points(points, m, &sets::shared(m))
    }

    /// The per-transform host set-points of a type 1 or 2 plan ([`gpu_set_points!`]).
    pub(crate) fn set_points_per_transform_host(
        &mut self,
        point_sets: &[&[&[T]]],
    ) -> Result<(), B::Error> {
        check_type(1, self.problem.ty)?;
        let (dim, ntransf) = (self.problem.dim(), self.problem.ntransf);
        let c = sets::Concatenated::new(dim, ntransf, point_sets)?;
        let m = c.counts.iter().sum();
        self.begin_set_points();
        let points = self.dev.upload(point_sets, m)?;
        self.sort_point_sets(points, c)
    }

    /// Sorts `points`, the sets `c` of a type 1 or 2 plan one after another, and holds them
    /// as a set per transform: host and device-array set-points of both backends.
    pub(crate) fn sort_point_sets(
        &mut self,
        points: B::Points,
        c: sets::Concatenated,
    ) -> Result<(), B::Error> {
        let each = sigma::points_per_transform(&c.counts);
        self.sort_points(points, each, &c.starts)?;
        self.per_set = Some(c.counts.iter().map(|&m| (m, 0)).collect());
        Ok(())
    }

    /// Sorts `points` (in sets starting at `sets`, the last entry their number) on the fine
    /// grid, the grid first refitted for `each` points a transform ([`Self::refit`]); the
    /// plan then holds them as one shared set until the caller says otherwise.
    pub(crate) fn sort_points(
        &mut self,
        points: B::Points,
        each: usize,
        sets: &[u32],
    ) -> Result<(), B::Error> {
        self.begin_set_points();
        self.retune(each);
        self.refit(each)?;
        self.per_set = None;
        self.num_points = 0;
        self.dev.mark_setpts(false)?;
        let Engine::Uniform(u) = &mut self.engine else {
            return Err(NudtError::PointsNotSet.into());
        };
        self.dev.sort(u, points, sets)?;
        self.num_points = sets.last().map_or(0, |&m| m as usize);
        self.dev.mark_setpts(true)?;
        self.points_set = true;
        Ok(())
    }

    /// Marks the plan as holding no points, before a set-points' first device call: one
    /// that fails then leaves execute [`NudtError::PointsNotSet`] until a set-points
    /// succeeds, never the last point sets answering for the new ones (docs/design.md,
    /// "When the device fails"). Input refused before this keeps the points the plan had.
    pub(crate) fn begin_set_points(&mut self) {
        self.points_set = false;
    }

    /// Takes the tuning profile's bins and method where `each` points a transform are as
    /// dense as the problem they were timed on ([`gpu_profile::Tuned::fits`]), and the
    /// options' (the planner's rules) where not, rebuilding the grid's sort and kernels when
    /// that changes them; a module that cannot be built keeps the grid as it is.
    fn retune(&mut self, each: usize) {
        let Some(t) = self.tuned else {
            return;
        };
        let modes: usize = self.problem.modes.iter().product();
        let fits = t.fits(each as f64 / modes.max(1) as f64);
        let want = if fits {
            with_tuned(self.given, self.problem.ty, &t)
        } else {
            self.given
        };
        if want == self.choice {
            return;
        }
        let Engine::Uniform(u) = &mut self.engine else {
            return;
        };
        let key = ModuleKey {
            dim: self.problem.dim(),
            kernel: self.kernel,
            role: stages::uniform_role(self.problem.ty),
            choice: want,
        };
        if let Ok(module) = self.dev.module(key) {
            if self.dev.regrid(u, &module).is_ok() {
                self.choice = want;
            }
        }
    }

    /// Rebuilds a type 1/2 plan's grid where `each` points a transform call for another σ
    /// (where σ is the plan layer's to choose: [`sigma::refit_uniform`]; a grid that cannot
    /// be built keeps σ as it is). The batch never changes: a set per transform runs in the
    /// plan's batches as shared points do ([`sets::Batch`]).
    fn refit(&mut self, each: usize) -> Result<(), B::Error> {
        let refit =
            sigma::refit_uniform::<T>(&self.problem, DeviceClass::Gpu, &self.kernel, each, None)?;
        if let Some((kernel, n)) = refit {
            let built = self
                .grid_module(kernel)
                .and_then(|module| self.uniform_engine(&module, kernel, &n));
            if let Ok(u) = built {
                (self.engine, self.kernel) = (Engine::Uniform(Box::new(u)), kernel);
            }
        }
        self.rebin(each);
        Ok(())
    }

    /// Gives a type 1 plan's grid the spreading bins `each` points a transform call for
    /// ([`od_bins::spread_bins`]), where neither the options nor a tuning profile fixed them;
    /// a module that cannot be built (bins too large for the device) keeps the bins as they
    /// are. Only the grid's sort and kernels change: its buffers and FFTs stay.
    fn rebin(&mut self, each: usize) {
        let Engine::Uniform(u) = &mut self.engine else {
            return;
        };
        if self.problem.ty != TransformType::Type1 || self.choice.bins.is_some() {
            return;
        }
        let (dim, width) = (self.problem.dim(), self.kernel.width);
        let sides = u.grid.sides();
        let Some(bins) = od_bins::spread_bins(dim, width, each, &sides[..dim]) else {
            return;
        };
        if bins == u.grid.bins() {
            return;
        }
        let key = ModuleKey {
            dim,
            kernel: self.kernel,
            role: stages::uniform_role(self.problem.ty),
            choice: ModuleChoice {
                bins: Some(bins),
                ..self.choice
            },
        };
        if let Ok(module) = self.dev.module(key) {
            // A grid that cannot be made keeps the one that was.
            let _ = self.dev.regrid(u, &module);
        }
    }

    /// The host set-points of a type 3 plan ([`gpu_set_points!`]): the arrays copied to the
    /// device, then planned and prepared as device arrays ([`Self::set_points_type3_on`]).
    pub(crate) fn set_points_type3_host(
        &mut self,
        sources: &[&[T]],
        targets: &[&[T]],
    ) -> Result<(), B::Error> {
        check_type(3, self.problem.ty)?;
        let m = check_coords(self.problem.dim(), sources, SOURCES)?;
        let k = check_coords(self.problem.dim(), targets, TARGETS)?;
        self.begin_set_points();
        let src = self.dev.upload(&[sources], m)?;
        let tgt = self.dev.upload(&[targets], k)?;
        self.set_points_type3_on((&src, &sets::shared(m)), (&tgt, &sets::shared(k)))
    }

    /// The per-transform host set-points of a type 3 plan ([`gpu_set_points!`]): each
    /// transform's sources and targets, checked as the CPU's
    /// ([`crate::Plan::set_points_type3_per_transform`]), concatenated on the device.
    pub(crate) fn set_points_type3_per_transform_host(
        &mut self,
        sources: &[&[&[T]]],
        targets: &[&[&[T]]],
    ) -> Result<(), B::Error> {
        self.check_type3_sets()?;
        let (dim, ntransf) = (self.problem.dim(), self.problem.ntransf);
        let named = sets::Concatenated::named;
        let src = named(dim, ntransf, sources, SOURCES, "source sets")?;
        let tgt = named(dim, ntransf, targets, TARGETS, "target sets")?;
        self.begin_set_points();
        let (m, k) = (src.counts.iter().sum(), tgt.counts.iter().sum());
        let (x, s) = (self.dev.upload(sources, m)?, self.dev.upload(targets, k)?);
        self.set_points_type3_on((&x, &src.starts), (&s, &tgt.starts))
    }

    /// Refuses per-transform point sets where the plan cannot run them: a plan not of type 3,
    /// and the Gaussian type 3, whose grids are made for one pair of sets.
    pub(crate) fn check_type3_sets(&self) -> Result<(), NudtError> {
        check_type(3, self.problem.ty)?;
        match self.gauss {
            Some(_) => Err(NudtError::Unsupported {
                what: "per-transform point sets of the Gaussian type 3",
                backend: B::NAME,
            }),
            None => Ok(()),
        }
    }

    /// Where a type 3's device-array sets start: one pair that every transform shares (`m`
    /// sources, `k` targets), or with `counts` (each transform's sources and targets) a pair
    /// per transform, refused where the plan cannot run them ([`Self::check_type3_sets`]) or
    /// where the counts do not add up to the arrays' lengths.
    pub(crate) fn type3_starts(
        &self,
        (m, k): (usize, usize),
        counts: Option<(&[usize], &[usize])>,
    ) -> Result<[Vec<u32>; 2], NudtError> {
        check_type(3, self.problem.ty)?;
        let Some((cm, ck)) = counts else {
            return Ok([sets::shared(m).to_vec(), sets::shared(k).to_vec()]);
        };
        self.check_type3_sets()?;
        let starts = |c, n| sets::Concatenated::from_counts(self.problem.ntransf, c, n);
        Ok([starts(cm, m)?.starts, starts(ck, k)?.starts])
    }

    /// The type 3 set-points from device coordinates: sources in sets starting at `starts`
    /// of the first pair, targets at those of the second (one set each that every transform
    /// shares, or one per transform). Each pair's bounding boxes are reduced on the device
    /// (one small read-back: the grids' sizes depend on them); the plan layer chooses the
    /// kernel and each pair's geometry, on grids all pairs share
    /// ([`Geometry::for_sets`]); both sets are rescaled and their phase factors made on the
    /// device, pair by pair, and both sorted, with the set in the sort key. Modules, grids and
    /// buffers of the last point sets are reused when the kernel and sizes allow. A
    /// non-finite coordinate is [`NudtError::NonFinite`] naming it (inside
    /// [`NudtError::InTransform`] naming its transform where each has its own); the plan then
    /// holds no points.
    pub(crate) fn set_points_type3_on(
        &mut self,
        (src, src_starts): (&B::Points, &[u32]),
        (tgt, tgt_starts): (&B::Points, &[u32]),
    ) -> Result<(), B::Error> {
        self.begin_set_points();
        self.dev.mark_setpts(false)?;
        // The last point sets' engine, reused below where the new sets allow.
        let old = std::mem::replace(&mut self.engine, Engine::Type3Pending);
        (self.num_points, self.num_targets, self.per_set) = (0, 0, None);
        let total = |at: &[u32]| at.last().map_or(0, |&n| n as usize);
        let (m, k) = (total(src_starts), total(tgt_starts));
        let per_transform = src_starts.len() > 2;
        let span = |at: &[u32], b: usize| (at[b + 1] - at[b]) as usize;
        let sets = PointSets {
            src,
            tgt,
            m,
            k,
            starts: [src_starts, tgt_starts],
            dim: self.problem.dim(),
            isign: self.problem.isign,
            batches: self.batches(),
        };
        let boxes = self.dev.bounds(&sets)?;
        if let Some(win) = &self.gauss {
            debug_assert!(!per_transform, "refused by check_type3_sets");
            let (xb, sb) = &boxes[0];
            let geometry = GaussGeometry::new(self.problem.tol, xb, sb)?;
            let old = match old {
                Engine::Gaussian(g) => Some(g),
                _ => None,
            };
            let g = self.dev.gaussian((win, &geometry, &sets, old))?;
            self.engine = Engine::Gaussian(Box::new(g));
            (self.kernel, self.kernel_tol) = (geometry.kernel(), self.problem.tol);
        } else {
            let extents: Vec<_> = boxes
                .iter()
                .map(|(xb, sb)| crate::planner::type3::extents(xb, sb))
                .collect();
            let points: Vec<_> = (0..boxes.len())
                .map(|b| span(src_starts, b) + span(tgt_starts, b))
                .collect();
            let (kernel, stage_tol) =
                sigma::type3_kernel_for_sets(&self.problem, &extents, &points)?;
            let geometries = Geometry::for_sets::<T>(&boxes, &kernel, None)?;
            let (n, inner) = (geometries[0].spread(), geometries[0].inner.clone());
            if self.t3.as_ref().is_none_or(|t| t.kernel != kernel) {
                self.t3 = None;
                self.t3 = Some(self.type3_modules(kernel)?);
            }
            let mods = self.t3.as_ref().expect("made above");
            let dim = sets.dim;
            let same = |t: &Type3Of<B, T>| {
                let sides = |g: &B::Grid| g.sides()[..dim].to_vec();
                t.kernel == kernel && sides(&t.spread) == n && sides(&t.inner.grid) == inner
            };
            let mut t = match old {
                Engine::Type3(t) if same(&t) => t,
                _ => {
                    let shape = GridShape {
                        modes: &n,
                        n: &inner,
                        kernel,
                        order: ModeOrder::Fft,
                        batches: sets.batches,
                    };
                    Box::new(self.dev.type3(mods, shape)?)
                }
            };
            let quad = &mods.quadrature;
            self.dev.prepare_type3(&mut t, (quad, &geometries, &sets))?;
            self.engine = Engine::Type3(t);
            (self.kernel, self.kernel_tol) = (kernel, stage_tol);
        }
        (self.num_points, self.num_targets) = (m, k);
        if per_transform {
            let pairs =
                (0..src_starts.len() - 1).map(|b| (span(src_starts, b), span(tgt_starts, b)));
            self.per_set = Some(pairs.collect());
        }
        self.dev.mark_setpts(true)?;
        self.points_set = true;
        Ok(())
    }

    /// Type 3's modules for `kernel`: the outer grid's (spread onto, sparse), the inner
    /// grid's (a type 2's), and the kernel's quadrature.
    fn type3_modules(&self, kernel: KernelSpec) -> Result<Type3ModulesOf<B, T>, B::Error> {
        let (dim, choice) = (self.problem.dim(), self.choice);
        let module = |role| {
            self.dev.module(ModuleKey {
                dim,
                kernel,
                role,
                choice,
            })
        };
        Ok(Type3Modules {
            kernel,
            outer: module(stages::OUTER_ROLE)?,
            inner: module(stages::INNER_ROLE)?,
            quadrature: self.dev.quadrature(&kernel)?,
        })
    }

    /// Whether each transform has its own point set ([`Self::set_points_per_transform`]).
    pub fn points_per_transform(&self) -> bool {
        self.per_set.is_some()
    }

    /// Per transform, its points (type 3: sources) and targets, once set.
    pub(crate) fn counts(&self) -> Option<Vec<(usize, usize)>> {
        let set = self.points_set
            && match &self.engine {
                Engine::Uniform(u) => u.grid.methods().is_some(),
                Engine::Type3Pending => false,
                Engine::Type3(_) | Engine::Gaussian(_) => true,
            };
        set.then(|| match &self.per_set {
            Some(each) => each.clone(),
            None => self
                .problem
                .shared_counts(self.num_points, self.num_targets),
        })
    }

    /// Kernel width in grid points: for the Gaussian type 3, its window's `2m + 1`.
    pub fn width(&self) -> usize {
        self.gauss
            .as_ref()
            .map_or(self.kernel.width, Windowed::width)
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
        self.mode_order
    }

    pub fn transform_type(&self) -> TransformType {
        self.problem.ty
    }

    pub fn ntransf(&self) -> usize {
        self.problem.ntransf
    }

    /// The tuning profile (`nudt tune --backend cuda|opencl`) whose bins and method this plan
    /// took, if any (the options' `use_profile`; from set-points on, only where the points are
    /// as dense as the profile's problem).
    pub fn profile(&self) -> Option<&'static Path> {
        let t = self.tuned?;
        (self.choice == with_tuned(self.given, self.problem.ty, &t)).then_some(t.path)
    }

    /// Fine grid of the FFT (type 3: the inner type 2's, or the Gaussian's one grid, once
    /// points are set).
    pub fn fine_grid(&self) -> Vec<usize> {
        let dim = self.problem.dim();
        match &self.engine {
            Engine::Uniform(u) => u.grid.sides()[..dim].to_vec(),
            Engine::Type3(t) => t.inner.grid.sides()[..dim].to_vec(),
            Engine::Gaussian(g) => g.grid(),
            Engine::Type3Pending => Vec::new(),
        }
    }

    /// What the plan layer chose for this plan (a type 3's grids once its points are set):
    /// the same as any backend's for the same problem and points.
    pub fn recipe(&self) -> Recipe {
        let spread = match &self.engine {
            Engine::Type3(t) => t.spread.sides()[..self.problem.dim()].to_vec(),
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

    /// Bin sides of the sort (type 3: the outer grid's; none before a type 3's points, and
    /// for the Gaussian type 3, which sorts nothing).
    pub fn bins(&self) -> Vec<usize> {
        let dim = self.problem.dim();
        match &self.engine {
            Engine::Uniform(u) => u.grid.bins()[..dim].to_vec(),
            Engine::Type3(t) => t.spread.bins()[..dim].to_vec(),
            Engine::Gaussian(_) | Engine::Type3Pending => Vec::new(),
        }
    }

    /// (spreading, interpolation) methods chosen for the current points (type 3: the outer
    /// grid's spreading, the inner grid's interpolation; `None` before points are set, and
    /// for the Gaussian type 3: one thread per point).
    pub fn methods(&self) -> Option<(GpuMethod, GpuMethod)> {
        match &self.engine {
            Engine::Uniform(u) => u.grid.methods(),
            Engine::Type3(t) => Some((t.spread.methods()?.0, t.inner.grid.methods()?.1)),
            Engine::Gaussian(_) | Engine::Type3Pending => None,
        }
    }
}

impl<B: Backend<T>, T: Float> std::fmt::Debug for GpuPlan<B, T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct(B::PLAN)
            .field("type", &self.problem.ty)
            .field("precision", &T::PRECISION)
            .field("modes", &self.problem.modes)
            .field("isign", &self.problem.isign)
            .field("ntransf", &self.problem.ntransf)
            .field("tol", &self.problem.tol)
            .field("kernel", &self.kernel)
            .field("type3", &self.problem.type3)
            .field("width", &self.width())
            .field("device", &self.dev.device_name())
            .field("fine_grid", &self.fine_grid())
            .field("bins", &self.bins())
            .field("methods", &self.methods())
            .finish()
    }
}

/// Expands, inside a backend's `impl<T: …> GpuPlan<ItsDev<T>, T>`, to the public set-points
/// of host arrays with the backend's error type `$err` (the shared plan's are crate-private:
/// its [`Backend`] is sealed).
macro_rules! gpu_set_points {
    ($err:ty) => {
        /// Sets the nonuniform points of a type 1 or 2 plan from host arrays (radians, any
        /// finite value): copies them to the device and bin-sorts them there.
        pub fn set_points(&mut self, coords: &[&[T]]) -> std::result::Result<(), $err> {
            self.set_points_host(coords)
        }

        /// Sets a point set per transform of a type 1 or 2 plan, as
        /// [`crate::Plan::set_points_per_transform`] (`sets[b][d]`: transform b's
        /// coordinates along dimension d; sizes may differ and may be 0): the sets are
        /// concatenated, copied to the device and sorted together, set by set
        /// ([`crate::planner::sets`]), and execute runs the transforms in the plan's batches,
        /// one launch per stage for a batch's sets and one batched FFT of its grids (the same
        /// work grids as for shared points). Execute then takes and gives the concatenation
        /// of the transforms' arrays. A bad set is
        /// [`crate::NudtError::InTransform`] naming it, and the plan keeps the points it had.
        pub fn set_points_per_transform(
            &mut self,
            point_sets: &[&[&[T]]],
        ) -> std::result::Result<(), $err> {
            self.set_points_per_transform_host(point_sets)
        }

        /// Sets sources and target frequencies per transform of a type 3 plan, as
        /// [`crate::Plan::set_points_type3_per_transform`] (`sources[b][d]`, `targets[b][d]`:
        /// transform b's along dimension d; sizes may differ and may be 0). Every pair is
        /// rescaled by its own geometry onto grids that all pairs share, each dimension's
        /// the largest any pair needs ([`crate::planner::type3::Geometry::for_sets`]), so
        /// that execute runs the transforms in the plan's batches as for types 1 and 2: one
        /// launch per stage for a batch's sets, one batched FFT. The Gaussian type 3 takes
        /// one pair ([`crate::NudtError::Unsupported`]). A bad set is
        /// [`crate::NudtError::InTransform`] naming it.
        pub fn set_points_type3_per_transform(
            &mut self,
            sources: &[&[&[T]]],
            targets: &[&[&[T]]],
        ) -> std::result::Result<(), $err> {
            self.set_points_type3_per_transform_host(sources, targets)
        }

        /// Sets sources `x` and target frequencies `s` of a type 3 plan (host arrays): both
        /// copied to the device, their bounding boxes reduced there (the grids' sizes depend
        /// on them), both rescaled and phased there and sorted; the last point sets' grids
        /// reused where the sizes allow. A non-finite coordinate is
        /// [`crate::NudtError::NonFinite`] naming it.
        pub fn set_points_type3(
            &mut self,
            sources: &[&[T]],
            targets: &[&[T]],
        ) -> std::result::Result<(), $err> {
            self.set_points_type3_host(sources, targets)
        }
    };
}
pub(crate) use gpu_set_points;
