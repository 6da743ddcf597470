//! The user-facing plan, in the spirit of FINUFFT and rustfft: make a plan once, set points
//! once (binning happens there), execute many times.

use crate::error::{NudtError, Result};
use crate::float::Float;
use crate::grid::{FineGrid, TileSide};
use crate::planner::stages::Pass;
use crate::planner::type3::Geometry;
use crate::planner::validate::{
    check_coords, check_point_sets, check_type, physical_memory, SOURCES, TARGETS,
};
use crate::planner::{limits, sigma, DeviceClass, Problem, Recipe, Type3Method};
use crate::type3::{NonUniform, Type3Scheme};
use crate::type3_gaussian::GaussianType3;
use crate::uniform::{ModeOrder, Uniform};
use crate::{type3, uniform};
use nudt_gen::{Arch, KernelKind, KernelSpec, Strategy, TransformType, Upsampling};
use num_complex::Complex;
use rayon::prelude::*;
use std::path::{Path, PathBuf};
use std::sync::{Arc, OnceLock};

/// Plan options; `Options::default()` is what FINUFFT users expect.
#[derive(Clone, Debug, PartialEq)]
pub struct Options {
    pub kernel: KernelKind,
    /// Fine-grid upsampling σ; `None` lets the planner choose once the points are known: for
    /// types 1 and 2, σ = 2, or up to 2.35 in 2-D and 3-D when the points outnumber the grid
    /// points (the same width, less aliasing); for type 3, by a cost model.
    pub upsampling: Option<Upsampling>,
    pub strategy: Strategy,
    pub mode_order: ModeOrder,
    /// Worker threads. `None` runs on rayon's global pool, and so does the global pool's own
    /// size for a plan made outside any pool; another count gets a pool of the plan's own.
    pub threads: Option<usize>,
    /// Machine to tune for; `None` detects this one (once per process).
    pub arch: Option<Arch>,
    /// Tile side override (tuning); `None` lets the planner choose from the caches.
    pub tile_side: Option<usize>,
    /// How type 3 is computed.
    pub type3: Type3Method,
    /// Take this machine's `nudt tune` profile ([`crate::profile`]), when there is one, for
    /// what the fields above leave to the planner in a type 1 or 2 plan: the strategy (when
    /// `Auto`), the tile side and σ (when `None`). Applies only with `arch: None` (a plan for
    /// this machine); fields set here always win.
    pub use_profile: bool,
    /// A tuning profile file to take those choices from instead (one `nudt tune -o FILE`
    /// saved): read when the plan is made, and used as given, whichever machine it was tuned
    /// on and whatever `use_profile` and `arch` say; fields set here still win. A file that
    /// cannot be read or is no profile is [`NudtError::Profile`].
    pub profile: Option<PathBuf>,
    /// Plan for derivatives with respect to the points ([`crate::gradient`]): a type 1 or 2
    /// plan's kernel then meets a tenth of the tolerance where it can, so that the point
    /// derivatives meet the tolerance itself ([`crate::planner::Problem::kernel_tol`]).
    pub gradients: bool,
}

/// One transform's sources and targets, one array per dimension each.
type SetPair<'a, T> = (&'a [&'a [T]], &'a [&'a [T]]);

/// A type 3 engine of either method.
enum Type3Engine<T: Float> {
    Finufft(Box<NonUniform<T>>),
    Gaussian(Box<GaussianType3<T>>),
}

impl<T: Float> Type3Engine<T> {
    /// The method's engine, which runs transforms and adjoints ([`Type3Scheme::run`]).
    fn scheme(&self) -> &dyn Type3Scheme<T> {
        match self {
            Type3Engine::Finufft(e) => &**e,
            Type3Engine::Gaussian(e) => &**e,
        }
    }

    fn work_bytes(&self) -> usize {
        match self {
            Type3Engine::Finufft(e) => e.work_bytes(),
            Type3Engine::Gaussian(e) => e.work_bytes(),
        }
    }

    /// Its grids: the one the FFT runs on and, FINUFFT's method, the one sources are
    /// spread on.
    fn grids(&self) -> (Vec<usize>, Vec<usize>) {
        match self {
            Type3Engine::Finufft(e) => (e.inner_grid().to_vec(), e.spread_grid().n.clone()),
            Type3Engine::Gaussian(g) => (g.grid().to_vec(), Vec::new()),
        }
    }

    fn spread_grid(&self) -> &FineGrid<T> {
        match self {
            Type3Engine::Finufft(e) => e.spread_grid(),
            Type3Engine::Gaussian(e) => e.spread_grid(),
        }
    }
}

impl Default for Options {
    fn default() -> Self {
        Options {
            kernel: KernelKind::Pswf,
            upsampling: None,
            strategy: Strategy::Auto,
            mode_order: ModeOrder::Cmcl,
            threads: None,
            arch: None,
            tile_side: None,
            type3: Type3Method::Finufft,
            use_profile: true,
            profile: None,
            gradients: false,
        }
    }
}

/// A type 1/2 engine: the fine grid `n` for `kernel` and the mode map onto it.
fn uniform_engine<T: Float>(
    modes: &[usize],
    n: Vec<usize>,
    kernel: KernelSpec,
    tol: f64,
    opts: &Options,
    arch: &Arch,
    side: TileSide,
) -> Result<Engine<T>> {
    let grid = FineGrid::new(n, kernel, tol, opts.strategy, arch, side)?;
    Ok(Engine::Uniform(
        Box::new(Uniform::new(modes, grid, opts.mode_order)),
        Vec::new(),
    ))
}

/// The machine this process runs on, detected once.
pub fn this_machine() -> &'static Arch {
    static ARCH: OnceLock<Arch> = OnceLock::new();
    ARCH.get_or_init(Arch::detect)
}

enum Engine<T: Float> {
    /// Types 1 and 2: the steps (FFT, mode map), whose own grid holds the points the
    /// transforms share, and with a point set per transform, each set sorted on a grid like
    /// it (empty for shared points).
    Uniform(Box<Uniform<T>>, Vec<FineGrid<T>>),
    /// Type 3 before its points are set: the grids depend on them.
    Type3Pending,
    /// Type 3 with its grids, one engine that every transform shares or one per transform;
    /// an engine runs both directions on them.
    Type3(Vec<Type3Engine<T>>),
}

impl<T: Float> Engine<T> {
    /// Bytes of work buffers one running transform holds at most.
    fn work_bytes(&self) -> usize {
        match self {
            Engine::Uniform(u, _) => u.work_bytes(),
            Engine::Type3(engines) => engines.iter().map(|e| e.work_bytes()).max().unwrap_or(0),
            Engine::Type3Pending => 0,
        }
    }
}

/// The buffers of one running transform, kept from one execute to the next: a plan holds
/// one per transform it runs at once ([`limits::cpu_concurrent`]). A plan uses the part of
/// its type; the other stays empty.
#[derive(Default)]
struct Work<T> {
    uniform: uniform::Work<T>,
    type3: type3::Work<T>,
}

/// The type 3 engine transform `b` of a stack runs on: the only one where the transforms
/// share their points, else the transform's own.
fn of_transform<T: Float>(engines: &[Type3Engine<T>], b: usize) -> &Type3Engine<T> {
    match engines {
        [one] => one,
        _ => &engines[b],
    }
}

/// The grid holding transform `b`'s points: one of `sets`, or where the transforms share
/// their points (`sets` empty), the steps' own.
fn of_points<'a, T: Float>(
    u: &'a Uniform<T>,
    sets: &'a [FineGrid<T>],
    b: usize,
) -> &'a FineGrid<T> {
    sets.get(b).unwrap_or(&u.grid)
}

/// A NUFFT plan of type 1, 2 or 3 in 1–3 dimensions.
///
/// ```
/// use nudt_runtime::{Plan, Options, TransformType};
/// use num_complex::Complex64;
/// let x = [0.1, -2.0, 3.0];
/// let c = [Complex64::new(1.0, 0.0); 3];
/// let mut plan = Plan::<f64>::new(TransformType::Type1, &[8], 1, 1, 1e-9, Options::default()).unwrap();
/// plan.set_points(&[&x]).unwrap();
/// let mut f = vec![Complex64::default(); 8];
/// plan.execute(&c, &mut f).unwrap();
/// ```
///
/// A plan is `Send + Sync`: it may move to another thread, and be shared. `set_points` and
/// `execute` take `&mut self` (they reuse the plan's work buffers), so threads sharing one plan
/// hold it behind a `Mutex`, as the Python package does; a plan per thread runs concurrently.
pub struct Plan<T: Float> {
    problem: Problem,
    opts: Options,
    kernel: KernelSpec,
    /// The tolerance `kernel` was chosen for (type 3: a stage's share).
    kernel_tol: f64,
    engine: Engine<T>,
    /// Per transform, its points (type 3: sources) and targets; empty until points are set.
    counts: Vec<(usize, usize)>,
    /// Buffers of the transforms that run at once.
    work: Vec<Work<T>>,
    pool: Option<Arc<rayon::ThreadPool>>,
    /// A derivative's work arrays, kept for the next (a training loop's calls on one plan
    /// then write memory already faulted in): a gradient pass's `dim + 1` values a point.
    scratch: Vec<Vec<Complex<T>>>,
    /// The tuning profile this plan took choices from.
    profile: Option<PathBuf>,
}

/// The plan's buffers go to the next plan ([`crate::reuse`]).
impl<T: Float> Drop for Plan<T> {
    fn drop(&mut self) {
        for w in &mut self.work {
            w.uniform.release();
            w.type3.release();
        }
        if let Engine::Uniform(u, _) = &self.engine {
            u.release();
        }
        self.scratch.drain(..).for_each(crate::reuse::keep);
    }
}

/// Runs `f` on `pool`, or on the caller's pool where the plan has none of its own.
fn in_pool<R: Send>(pool: &Option<Arc<rayon::ThreadPool>>, f: impl FnOnce() -> R + Send) -> R {
    match pool {
        Some(p) => p.install(f),
        None => f(),
    }
}

/// As [`in_pool`], but on one of the pool's threads where the plan has no pool of its own:
/// handed over once for the whole of `f`. A caller outside every pool hands each parallel
/// loop to rayon's global pool and waits for it, a thread woken and one put to sleep per
/// loop, tens of microseconds each on a virtual machine: most of a small plan's making.
/// Only for making plans: buffers allocated on a pool's thread come from its malloc arena,
/// and set-points and execute calls that ran there peaked 50–90% higher on small 3-D
/// problems, as [`needs_own_pool`] says of fresh threads.
fn handed_to_pool<R: Send>(
    pool: &Option<Arc<rayon::ThreadPool>>,
    f: impl FnOnce() -> R + Send,
) -> R {
    match pool {
        None => rayon::scope(|_| f()),
        own => in_pool(own, f),
    }
}

/// Threads of `pool`, or of the caller's pool where a plan has none of its own.
fn pool_threads(pool: &Option<Arc<rayon::ThreadPool>>) -> usize {
    pool.as_ref()
        .map_or_else(rayon::current_num_threads, |p| p.current_num_threads())
}

/// Whether a plan of `n` threads made here needs a pool of its own: not when rayon's global
/// pool has `n` threads and this thread is none of a pool's. A pool per plan starts fresh
/// threads, and glibc gives them malloc arenas that still hold earlier plans' freed buffers:
/// a 2-D type 3 run as three plans in turn peaked at 239–346 MB over runs on its own pools,
/// and at 226 MB every time on the global pool (the plan's buffers then come from the
/// caller's arena).
fn needs_own_pool(n: usize) -> bool {
    rayon::current_thread_index().is_some() || rayon::current_num_threads() != n
}

// The promise above, checked at compile time.
const _: () = {
    const fn send_sync<P: Send + Sync>() {}
    send_sync::<Plan<f32>>();
    send_sync::<Plan<f64>>();
};

impl<T: Float> Plan<T> {
    /// A derivative's steps on this plan ([`crate::NufftPlan::run_gradient`]): the
    /// element-wise ones on the plan's threads, the work arrays the plan's own.
    pub(crate) fn run_gradient(
        &mut self,
        steps: &crate::gradient::steps::Steps,
        arrays: &mut crate::gradient::host::HostArrays<'_, T>,
    ) -> std::result::Result<(), crate::backend::BackendError> {
        let pool = self.pool.clone();
        let mut scratch = std::mem::take(&mut self.scratch);
        let r = crate::gradient::host::run_on(self, steps, arrays, pool.as_deref(), &mut scratch);
        self.scratch = scratch;
        r
    }

    crate::entry::plan_entry_points!(Options, NudtError);

    fn build(mut problem: Problem, opts: Options) -> Result<Self> {
        let (ty, dim, tol) = (problem.ty, problem.dim(), problem.tol);
        // The tuned choice for the dimension, for a type 1/2 plan that leaves something to
        // the planner: from the profile file given, else this machine's.
        let tuned = match &opts.profile {
            _ if ty == TransformType::Type3 => None,
            Some(path) => crate::profile::read(path)?
                .choice(dim)
                .map(|c| (path.clone(), c.clone())),
            None => match crate::profile::this_machines() {
                Some((path, p)) if opts.use_profile && opts.arch.is_none() => {
                    p.choice(dim).map(|c| (path.to_path_buf(), c.clone()))
                }
                _ => None,
            },
        };
        let mut opts = opts;
        let mut profile = None;
        if let Some((path, c)) = tuned {
            let mut used = false;
            if opts.strategy == Strategy::Auto {
                opts.strategy = c.strategy();
                used = true;
            }
            // σ = 1.25 only where its kernel reaches the tolerance within the widest width.
            if opts.upsampling.is_none()
                && KernelSpec::for_tolerance(opts.kernel, tol, c.upsampling(), T::PRECISION).is_ok()
            {
                opts.upsampling = Some(c.upsampling());
                used = true;
            }
            if opts.tile_side.is_none() {
                opts.tile_side = Some(c.tile_side);
                used = true;
            }
            profile = used.then_some(path);
        }
        problem.upsampling = opts.upsampling;
        let kernel = sigma::initial_kernel(&problem)?;
        if let Some(side) = opts.tile_side.as_mut() {
            // A tuned side is for the tuned width; the schedules need at least this width.
            *side = (*side).max(kernel.width);
        }
        let arch = opts.arch.clone().unwrap_or_else(|| this_machine().clone());
        let pool = match opts.threads {
            Some(n) if !needs_own_pool(n) => None,
            Some(n) => Some(Arc::new(
                rayon::ThreadPoolBuilder::new()
                    .num_threads(n)
                    .build()
                    .map_err(|e| NudtError::Threads(e.to_string()))?,
            )),
            None => None,
        };
        let engine = match ty {
            TransformType::Type3 => Engine::Type3Pending,
            _ => {
                let n = sigma::uniform_grid::<T>(&problem, &kernel, physical_memory())?;
                let side = TileSide::new(opts.tile_side, problem.ntransf, pool_threads(&pool));
                let (modes, tol) = (&problem.modes, problem.kernel_tol);
                handed_to_pool(&pool, || {
                    uniform_engine(modes, n, kernel, tol, &opts, &arch, side)
                })?
            }
        };
        let kernel_tol = problem.kernel_tol;
        Ok(Plan {
            problem,
            kernel,
            kernel_tol,
            engine,
            counts: Vec::new(),
            work: Vec::new(),
            pool,
            scratch: Vec::new(),
            profile,
            opts: Options {
                arch: Some(arch),
                ..opts
            },
        })
    }

    /// The tile side of this plan's CPU grids: the one given, or sized for its threads.
    fn tile_choice(&self) -> TileSide {
        TileSide::new(self.opts.tile_side, self.problem.ntransf, self.threads())
    }

    fn run<R: Send>(&self, f: impl FnOnce() -> R + Send) -> R {
        in_pool(&self.pool, f)
    }

    /// Sets the nonuniform points of a type 1 or 2 plan: one array per dimension, in radians
    /// (any finite value; the transform is 2π-periodic), which all `ntransf` transforms
    /// share. Bins them for every later execute.
    pub fn set_points(&mut self, coords: &[&[T]]) -> Result<()> {
        check_type(1, self.problem.ty)?;
        crate::steps::call("set_points", self.threads(), || {
            let m = self.run(|| check_coords(self.dim(), coords, SOURCES))?;
            self.fit_upsampling(m)?;
            let pool = self.pool.clone();
            let Engine::Uniform(u, sets) = &mut self.engine else {
                unreachable!("type 1/2 plans hold a uniform engine")
            };
            *sets = Vec::new();
            match pool {
                Some(p) => p.install(|| u.grid.set_points(coords)),
                None => u.grid.set_points(coords),
            }
            self.counts = self.problem.shared_counts(m, 0);
            Ok(())
        })
    }

    /// Sets a point set per transform of a type 1 or 2 plan: `sets[b][d]` holds transform
    /// b's coordinates along dimension d (radians, any finite value), `ntransf` sets whose
    /// sizes `M_b` may differ and may be 0. [`Plan::execute`] then takes and gives the
    /// concatenation over the transforms of their arrays: type 1, `Σ M_b` strengths in and
    /// `ntransf` mode arrays out; type 2 the reverse ([`Plan::point_counts`] has the `M_b`).
    ///
    /// Every set is binned here, the sets in parallel; the transforms share the fine grid
    /// size, kernel and FFT, and execute runs several at once. A bad set is
    /// [`NudtError::InTransform`] naming it, and the plan then keeps the points it had.
    /// [`Plan::set_points`] goes back to points that every transform shares.
    pub fn set_points_per_transform(&mut self, sets: &[&[&[T]]]) -> Result<()> {
        check_type(1, self.problem.ty)?;
        let (dim, ntransf) = (self.dim(), self.problem.ntransf);
        let counts = self.run(|| check_point_sets(dim, ntransf, sets, SOURCES, "point sets"))?;
        self.fit_upsampling(sigma::points_per_transform(&counts))?;
        let Engine::Uniform(u, held) = &mut self.engine else {
            unreachable!("type 1/2 plans hold a uniform engine")
        };
        // The steps' own grid holds shared points only.
        u.grid = u.grid.without_points();
        let sort = || -> Vec<FineGrid<T>> {
            sets.par_iter()
                .map(|set| {
                    let mut grid = u.grid.without_points();
                    grid.set_points(set);
                    grid
                })
                .collect()
        };
        *held = match &self.pool {
            Some(p) => p.install(sort),
            None => sort(),
        };
        self.counts = counts.into_iter().map(|m| (m, 0)).collect();
        Ok(())
    }

    /// Where σ is the planner's to choose, the one for `m` points ([`sigma::refit_uniform`]),
    /// rebuilding the grid if it changes.
    fn fit_upsampling(&mut self, m: usize) -> Result<()> {
        let Some((kernel, n)) = sigma::refit_uniform::<T>(
            &self.problem,
            DeviceClass::Cpu,
            &self.kernel,
            m,
            physical_memory(),
        )?
        else {
            return Ok(());
        };
        let arch = self.opts.arch.clone().unwrap_or_default();
        let (modes, tol, opts) = (&self.problem.modes, self.problem.kernel_tol, &self.opts);
        let side = self.tile_choice();
        let engine = self.run(|| uniform_engine(modes, n, kernel, tol, opts, &arch, side));
        if let Ok(engine) = engine {
            self.engine = engine;
            self.kernel = kernel;
            self.counts = Vec::new();
        }
        Ok(())
    }

    /// Sets sources `x` and target frequencies `s` of a type 3 plan, which all `ntransf`
    /// transforms share.
    pub fn set_points_type3(&mut self, sources: &[&[T]], targets: &[&[T]]) -> Result<()> {
        check_type(3, self.problem.ty)?;
        let dim = self.dim();
        crate::steps::call("set_points_type3", self.threads(), || {
            let m = self.run(|| check_coords(dim, sources, SOURCES))?;
            let k = self.run(|| check_coords(dim, targets, TARGETS))?;
            let engines = self.type3_engines(&[(sources, targets)], &[(m, k)])?;
            self.engine = Engine::Type3(engines);
            self.counts = self.problem.shared_counts(m, k);
            Ok(())
        })
    }

    /// Sets sources and target frequencies per transform of a type 3 plan: `sources[b][d]`
    /// and `targets[b][d]` are transform b's along dimension d, `ntransf` of each, with
    /// sizes `M_b` and `K_b` that may differ and may be 0. [`Plan::execute`] then takes the
    /// `Σ M_b` strengths and gives the `Σ K_b` values, each transform's in turn.
    ///
    /// Each transform gets its own grids for its points' extents (the engines are built in
    /// parallel) with one kernel for all, the one the planner chooses for the widest
    /// ([`sigma::type3_kernel_for_sets`]); execute runs several at once. A bad set, or one
    /// whose grids do not fit, is [`NudtError::InTransform`] naming it, and the plan then
    /// keeps the points it had. [`Plan::set_points_type3`] goes back to shared points.
    pub fn set_points_type3_per_transform(
        &mut self,
        sources: &[&[&[T]]],
        targets: &[&[&[T]]],
    ) -> Result<()> {
        check_type(3, self.problem.ty)?;
        let (dim, ntransf) = (self.dim(), self.problem.ntransf);
        let m = self.run(|| check_point_sets(dim, ntransf, sources, SOURCES, "source sets"))?;
        let k = self.run(|| check_point_sets(dim, ntransf, targets, TARGETS, "target sets"))?;
        let pairs: Vec<_> = sources
            .iter()
            .copied()
            .zip(targets.iter().copied())
            .collect();
        let counts: Vec<_> = m.into_iter().zip(k).collect();
        let engines = self.type3_engines(&pairs, &counts)?;
        self.engine = Engine::Type3(engines);
        self.counts = counts;
        Ok(())
    }

    /// Type 3 engines for point set pairs `sets` (sources, targets) of sizes `counts`, built
    /// in parallel with one kernel (which the plan takes). With more than one pair, an
    /// error of one is [`NudtError::InTransform`] naming it.
    fn type3_engines(
        &mut self,
        sets: &[SetPair<'_, T>],
        counts: &[(usize, usize)],
    ) -> Result<Vec<Type3Engine<T>>> {
        let named = |b: usize, error: NudtError| match sets.len() {
            1 => error,
            _ => NudtError::InTransform {
                index: b,
                error: Box::new(error),
            },
        };
        // The lowest transform's error, of results made in parallel.
        let first_error = |all: Vec<Result<Type3Engine<T>>>| -> Result<Vec<Type3Engine<T>>> {
            all.into_iter()
                .enumerate()
                .map(|(b, r)| r.map_err(|e| named(b, e)))
                .collect()
        };
        let (isign, strategy) = (self.problem.isign, self.opts.strategy);
        let side = self.tile_choice();
        let arch = self.opts.arch.clone().unwrap_or_default();
        let (engines, kernel, kernel_tol) = match self.problem.type3 {
            Type3Method::Finufft => {
                let bounds = |v: &[&[T]]| -> Vec<(f64, f64)> {
                    v.iter().map(|c| crate::type3::bounds(c)).collect()
                };
                let boxes: Vec<_> = self.run(|| {
                    sets.par_iter()
                        .map(|(x, s)| (bounds(x), bounds(s)))
                        .collect()
                });
                let extents: Vec<Vec<f64>> = boxes
                    .iter()
                    .map(|(xb, sb)| crate::planner::type3::extents(xb, sb))
                    .collect();
                let points: Vec<usize> = counts.iter().map(|&(m, k)| m + k).collect();
                let (kernel, stage_tol) =
                    sigma::type3_kernel_for_sets(&self.problem, &extents, &points)?;
                let geometries = boxes
                    .iter()
                    .enumerate()
                    .map(|(b, (xb, sb))| {
                        Geometry::new::<T>(xb, sb, &kernel, physical_memory())
                            .map_err(|e| named(b, e))
                    })
                    .collect::<Result<Vec<_>>>()?;
                let engines = self.run(|| {
                    sets.par_iter()
                        .zip(geometries)
                        .map(|(&(x, s), geometry)| {
                            NonUniform::new(
                                x, s, geometry, kernel, stage_tol, isign, strategy, &arch, side,
                            )
                            .map(|e| Type3Engine::Finufft(Box::new(e)))
                        })
                        .collect()
                });
                (first_error(engines)?, kernel, stage_tol)
            }
            // Gaussian gridding sizes its windows from the caller's tolerance itself.
            Type3Method::GaussianCapozzoli => {
                let tol = self.problem.tol;
                let engines = self.run(|| {
                    sets.par_iter()
                        .map(|&(x, s)| {
                            GaussianType3::new(x, s, tol, isign, strategy, &arch, side)
                                .map(|g| Type3Engine::Gaussian(Box::new(g)))
                        })
                        .collect()
                });
                (
                    first_error(engines)?,
                    crate::planner::gaussian::window_for(tol),
                    tol,
                )
            }
        };
        self.kernel = kernel;
        self.kernel_tol = kernel_tol;
        Ok(engines)
    }

    /// What the planner chose for this plan: kernel, tolerances and grids (a type 3's grids
    /// once its points are set; with a point set per transform, the largest side of any
    /// transform's along each axis).
    pub fn recipe(&self) -> Recipe {
        let (fine, spread) = self.grids();
        Recipe::new(
            &self.problem,
            DeviceClass::Cpu,
            self.kernel,
            self.kernel_tol,
            fine,
            spread,
        )
    }

    /// The grid the FFT runs on and a type 3's spreading grid (empty for types 1 and 2, and
    /// before a type 3's points are set); over a type 3's engines, the largest side along
    /// each axis.
    fn grids(&self) -> (Vec<usize>, Vec<usize>) {
        let widest = |a: Vec<usize>, b: Vec<usize>| match a.is_empty() {
            true => b,
            false => a.iter().zip(&b).map(|(x, y)| *x.max(y)).collect(),
        };
        match &self.engine {
            Engine::Uniform(u, _) => (u.grid.n.clone(), Vec::new()),
            Engine::Type3(engines) => engines
                .iter()
                .map(Type3Engine::grids)
                .fold((Vec::new(), Vec::new()), |(f, s), (g, t)| {
                    (widest(f, g), widest(s, t))
                }),
            Engine::Type3Pending => (Vec::new(), Vec::new()),
        }
    }

    /// Whether each transform has its own point set (from [`Self::set_points_per_transform`]
    /// or [`Self::set_points_type3_per_transform`]), not one that the stack shares.
    pub fn points_per_transform(&self) -> bool {
        match &self.engine {
            Engine::Uniform(_, sets) => !sets.is_empty(),
            Engine::Type3(engines) => engines.len() > 1,
            Engine::Type3Pending => false,
        }
    }

    /// The points set, per transform: sources and targets (type 3) or points and 0.
    fn counts(&self) -> Option<Vec<(usize, usize)>> {
        (!self.counts.is_empty()).then(|| self.counts.clone())
    }

    /// One checked run of `pass`, transform by transform of the stack. A gradient pass
    /// (types 1 and 2) runs the uniform engine's with the kernels' derivative.
    fn execute_host(
        &mut self,
        input: &[Complex<T>],
        output: &mut [Complex<T>],
        pass: Pass,
    ) -> Result<()> {
        let each = self.check_io(input.len(), output.len(), pass)?;
        if pass.gradient {
            return self.gradient_pass(input, output, &each, pass.adjoint);
        }
        let adjoint = pass.adjoint;
        let isign = if adjoint {
            -self.problem.isign
        } else {
            self.problem.isign
        };
        let as_type1 = (self.problem.ty == TransformType::Type1) != adjoint;
        let slots = limits::cpu_concurrent(
            self.problem.ntransf,
            self.threads(),
            self.engine.work_bytes(),
            physical_memory(),
        );
        self.work.truncate(slots);
        self.work.resize_with(slots, Work::default);
        let threads = self.threads();
        let share = (threads / slots).max(1);
        for w in &mut self.work {
            w.uniform.set_threads(share);
            w.type3.set_threads(share);
        }
        let (engine, work) = (&self.engine, &mut self.work[..]);
        let body = move || {
            crate::stack::run(work, &each, input, output, |b, w, x, y| match engine {
                Engine::Uniform(u, sets) if as_type1 => {
                    u.type1(of_points(u, sets, b), &mut w.uniform, x, y, isign)
                }
                Engine::Uniform(u, sets) => {
                    u.type2(of_points(u, sets, b), &mut w.uniform, x, y, isign)
                }
                Engine::Type3(e) => {
                    of_transform(e, b)
                        .scheme()
                        .run(&mut w.type3, x, y, isign, adjoint)
                }
                Engine::Type3Pending => Err(NudtError::PointsNotSet),
            })
        };
        crate::steps::call("execute", threads, || in_pool(&self.pool, body))
    }

    /// One gradient pass over the stack, transform by transform (the pass runs in parallel
    /// inside): interpolation with the gradient or spreading of values and derivative weights,
    /// whichever of the two `adjoint` makes of this plan's type; `each` from [`Self::check_io`].
    fn gradient_pass(
        &mut self,
        input: &[Complex<T>],
        output: &mut [Complex<T>],
        each: &[(usize, usize)],
        adjoint: bool,
    ) -> Result<()> {
        let Engine::Uniform(u, sets) = &self.engine else {
            unreachable!("a gradient pass is checked to be of type 1 or 2")
        };
        let (isign, spreads) = match adjoint {
            true => (-self.problem.isign, self.problem.ty == TransformType::Type2),
            false => (self.problem.isign, self.problem.ty == TransformType::Type1),
        };
        self.work.truncate(1);
        self.work.resize_with(1, Work::default);
        let threads = self.threads();
        let work = &mut self.work[0].uniform;
        work.set_threads(threads);
        in_pool(&self.pool, || {
            let (mut x, mut y) = (input, &mut output[..]);
            for (b, &(a, c)) in each.iter().enumerate() {
                let (xb, rest) = x.split_at(a);
                let (yb, tail) = std::mem::take(&mut y).split_at_mut(c);
                (x, y) = (rest, tail);
                let grid = of_points(u, sets, b);
                match (spreads, a == 0 || c == 0) {
                    // No points: nothing to interpolate, and zero modes from spreading nothing.
                    (_, true) => yb.iter_mut().for_each(|v| *v = Complex::default()),
                    (true, false) => u.type1_grad(grid, work, xb, yb, isign)?,
                    (false, false) => u.type2_grad(grid, work, xb, yb, isign)?,
                }
            }
            Ok(())
        })
    }

    /// The order of the modes in input and output arrays.
    pub fn mode_order(&self) -> ModeOrder {
        self.opts.mode_order
    }

    /// Kernel width per dimension.
    pub fn width(&self) -> usize {
        self.kernel.width
    }

    /// Worker threads the plan runs on.
    pub fn threads(&self) -> usize {
        pool_threads(&self.pool)
    }

    pub fn kernel(&self) -> &KernelSpec {
        &self.kernel
    }

    pub fn tolerance(&self) -> f64 {
        self.problem.tol
    }

    /// Fine grid size per dimension (type 3: the inner type 2's grid, once points are set).
    pub fn fine_grid(&self) -> Vec<usize> {
        self.grids().0
    }

    /// The spreading schedule chosen for the current points.
    pub fn strategy(&self) -> Strategy {
        match &self.engine {
            Engine::Uniform(u, _) => u.grid.strategy(),
            Engine::Type3(engines) => engines[0].spread_grid().strategy(),
            Engine::Type3Pending => self.opts.strategy,
        }
    }

    /// The tuning profile whose choices this plan took, if any ([`Options::profile`],
    /// [`Options::use_profile`]).
    pub fn profile(&self) -> Option<&Path> {
        self.profile.as_deref()
    }

    /// Tile side of the CPU schedules, in grid points per dimension.
    pub fn tile_side(&self) -> usize {
        match &self.engine {
            Engine::Uniform(u, _) => u.grid.tile_side(),
            Engine::Type3(engines) => engines[0].spread_grid().tile_side(),
            Engine::Type3Pending => 0,
        }
    }

    pub fn transform_type(&self) -> TransformType {
        self.problem.ty
    }

    pub fn dim(&self) -> usize {
        self.problem.dim()
    }

    /// Spreads with an explicit schedule onto the fine grid (types 1/2; for cross-checking
    /// the two schedules and for tuning) the strengths at the points the transforms share
    /// ([`NudtError::PointsNotSet`] without them). Returns the fine grid.
    pub fn spread_only(&self, strategy: Strategy, c: &[Complex<T>]) -> Result<Vec<Complex<T>>> {
        let Engine::Uniform(u, _) = &self.engine else {
            return Err(NudtError::WrongType {
                expected: 1,
                actual: 3,
            });
        };
        if !u.grid.has_points() {
            return Err(NudtError::PointsNotSet);
        }
        let m = self.counts[0].0;
        if c.len() != m {
            return Err(NudtError::Length {
                what: "strengths".into(),
                expected: m,
                got: c.len(),
            });
        }
        let mut g = vec![Complex::default(); u.grid.len()];
        self.run(|| u.grid.spread_with(strategy, c, &mut g))?;
        Ok(g)
    }

    /// Interpolates a fine grid (laid out as [`Plan::spread_only`] returns it, of
    /// [`Plan::fine_grid`]'s size) at the points, in their original order: the adjoint of
    /// `spread_only`, with neither FFT nor deconvolution (types 1/2). With `spread_only` it
    /// makes the gridding operator that density compensation by fixed-point iteration
    /// (Pipe and Menon's) needs.
    pub fn interp_only(&self, grid: &[Complex<T>]) -> Result<Vec<Complex<T>>> {
        let Engine::Uniform(u, _) = &self.engine else {
            return Err(NudtError::WrongType {
                expected: 2,
                actual: 3,
            });
        };
        if !u.grid.has_points() {
            return Err(NudtError::PointsNotSet);
        }
        if grid.len() != u.grid.len() {
            return Err(NudtError::Length {
                what: "fine grid".into(),
                expected: u.grid.len(),
                got: grid.len(),
            });
        }
        let mut out = vec![Complex::default(); self.counts[0].0];
        self.run(|| u.grid.interp(grid, &mut out))?;
        Ok(out)
    }
}

impl<T: Float> std::fmt::Debug for Plan<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Plan")
            .field("problem", &self.problem)
            .field("kernel", &self.kernel)
            .field("fine_grid", &self.fine_grid())
            .field("strategy", &self.strategy())
            .field("profile", &self.profile)
            .finish()
    }
}
