//! The user-facing plan, in the spirit of FINUFFT and rustfft: make a plan once, set points
//! once (binning happens there), execute many times.

use crate::error::{NudtError, Result};
use crate::float::Float;
use crate::grid::FineGrid;
use crate::planner::stages::Pass;
use crate::planner::type3::Geometry;
use crate::planner::validate::{check_coords, physical_memory, SOURCES, TARGETS};
use crate::planner::{sigma, DeviceClass, Problem, Recipe, Type3Method};
use crate::type3::NonUniform;
use crate::type3_gaussian::GaussianType3;
use crate::uniform::{ModeOrder, Uniform};
use nudt_gen::{Arch, KernelKind, KernelSpec, Strategy, TransformType, Upsampling};
use num_complex::Complex;
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

/// A type 3 engine of either method.
enum Type3Engine<T: Float> {
    Finufft(NonUniform<T>),
    Gaussian(GaussianType3<T>),
}

impl<T: Float> Type3Engine<T> {
    fn execute(&mut self, c: &[Complex<T>], f: &mut [Complex<T>], isign: i32) -> Result<()> {
        match self {
            Type3Engine::Finufft(e) => e.execute(c, f, isign),
            Type3Engine::Gaussian(e) => e.execute(c, f, isign),
        }
    }

    /// Targets → sources; `isign` is the adjoint's (the forward's negated).
    fn execute_adjoint(
        &mut self,
        f: &[Complex<T>],
        c: &mut [Complex<T>],
        isign: i32,
    ) -> Result<()> {
        match self {
            Type3Engine::Finufft(e) => e.execute_adjoint(f, c, isign),
            Type3Engine::Gaussian(e) => e.execute_adjoint(f, c, isign),
        }
    }

    fn spread_grid(&self) -> &FineGrid<T> {
        match self {
            Type3Engine::Finufft(e) => e.spread_grid(),
            Type3Engine::Gaussian(e) => e.spread_grid(),
        }
    }

    /// The grid the FFT runs on.
    fn fft_grid(&self) -> Vec<usize> {
        match self {
            Type3Engine::Finufft(e) => e.inner_grid().to_vec(),
            Type3Engine::Gaussian(e) => e.grid().to_vec(),
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
) -> Result<Engine<T>> {
    let grid = FineGrid::new(n, kernel, tol, opts.strategy, arch, opts.tile_side)?;
    Ok(Engine::Uniform(Box::new(Uniform::new(
        modes,
        grid,
        opts.mode_order,
    ))))
}

/// The machine this process runs on, detected once.
pub fn this_machine() -> &'static Arch {
    static ARCH: OnceLock<Arch> = OnceLock::new();
    ARCH.get_or_init(Arch::detect)
}

enum Engine<T: Float> {
    Uniform(Box<Uniform<T>>),
    /// Type 3 before its points are set: the grids depend on them.
    Type3Pending,
    /// Type 3 with its grids; the engine runs both directions on them.
    Type3(Box<Type3Engine<T>>),
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
    num_points: usize,
    num_targets: usize,
    pool: Option<Arc<rayon::ThreadPool>>,
    /// The tuning profile this plan took choices from.
    profile: Option<PathBuf>,
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
                uniform_engine(&problem.modes, n, kernel, problem.kernel_tol, &opts, &arch)?
            }
        };
        let kernel_tol = problem.kernel_tol;
        Ok(Plan {
            problem,
            kernel,
            kernel_tol,
            engine,
            num_points: 0,
            num_targets: 0,
            pool,
            profile,
            opts: Options {
                arch: Some(arch),
                ..opts
            },
        })
    }

    fn run<R: Send>(&self, f: impl FnOnce() -> R + Send) -> R {
        match &self.pool {
            Some(p) => p.install(f),
            None => f(),
        }
    }

    /// Sets the nonuniform points of a type 1 or 2 plan: one array per dimension, in radians
    /// (any finite value; the transform is 2π-periodic). Bins them for every later execute.
    pub fn set_points(&mut self, coords: &[&[T]]) -> Result<()> {
        crate::planner::validate::check_type(1, self.problem.ty)?;
        let m = self.run(|| check_coords(self.dim(), coords, SOURCES))?;
        self.fit_upsampling(m)?;
        let pool = self.pool.clone();
        let Engine::Uniform(u) = &mut self.engine else {
            unreachable!("type 1/2 plans hold a uniform engine")
        };
        match pool {
            Some(p) => p.install(|| u.grid.set_points(coords)),
            None => u.grid.set_points(coords),
        }
        self.num_points = m;
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
        if let Ok(engine) = self.run(|| uniform_engine(modes, n, kernel, tol, opts, &arch)) {
            self.engine = engine;
            self.kernel = kernel;
        }
        Ok(())
    }

    /// Sets sources `x` and target frequencies `s` of a type 3 plan.
    pub fn set_points_type3(&mut self, sources: &[&[T]], targets: &[&[T]]) -> Result<()> {
        crate::planner::validate::check_type(3, self.problem.ty)?;
        let dim = self.dim();
        let m = self.run(|| check_coords(dim, sources, SOURCES))?;
        let k = self.run(|| check_coords(dim, targets, TARGETS))?;
        let bounds = |v: &[&[T]]| self.run(|| v.iter().map(|c| crate::type3::bounds(c)).collect());
        let (xb, sb): (Vec<_>, Vec<_>) = (bounds(sources), bounds(targets));
        let (isign, strategy) = (self.problem.isign, self.opts.strategy);
        let arch = self.opts.arch.clone().unwrap_or_default();
        let side = self.opts.tile_side;
        let (nu, kernel, kernel_tol) = match self.problem.type3 {
            Type3Method::Finufft => {
                let extent = crate::planner::type3::extents(&xb, &sb);
                let (kernel, stage_tol) = sigma::type3_kernel(&self.problem, &extent, m + k)?;
                let geometry = Geometry::new::<T>(&xb, &sb, &kernel, physical_memory())?;
                let nu = self.run(|| {
                    NonUniform::new(
                        sources, targets, geometry, kernel, stage_tol, isign, strategy, &arch, side,
                    )
                })?;
                (Type3Engine::Finufft(nu), kernel, stage_tol)
            }
            // Gaussian gridding sizes its windows from the caller's tolerance itself.
            Type3Method::GaussianCapozzoli => {
                let tol = self.problem.tol;
                let g = self.run(|| {
                    GaussianType3::new(sources, targets, tol, isign, strategy, &arch, side)
                })?;
                (
                    Type3Engine::Gaussian(g),
                    crate::planner::gaussian::window_for(tol),
                    tol,
                )
            }
        };
        self.kernel = kernel;
        self.kernel_tol = kernel_tol;
        self.engine = Engine::Type3(Box::new(nu));
        self.num_points = m;
        self.num_targets = k;
        Ok(())
    }

    /// What the planner chose for this plan: kernel, tolerances and grids (a type 3's grids
    /// once its points are set).
    pub fn recipe(&self) -> Recipe {
        let (fine, spread) = match &self.engine {
            Engine::Uniform(u) => (u.grid.n.clone(), Vec::new()),
            Engine::Type3(e) => match &**e {
                Type3Engine::Finufft(e) => (e.inner_grid().to_vec(), e.spread_grid().n.clone()),
                Type3Engine::Gaussian(g) => (g.grid().to_vec(), Vec::new()),
            },
            Engine::Type3Pending => (Vec::new(), Vec::new()),
        };
        Recipe::new(
            &self.problem,
            DeviceClass::Cpu,
            self.kernel,
            self.kernel_tol,
            fine,
            spread,
        )
    }

    /// The points set: sources and targets (type 3) or points and 0.
    fn counts(&self) -> Option<(usize, usize)> {
        let set = match &self.engine {
            Engine::Uniform(u) => u.grid.has_points(),
            Engine::Type3Pending => false,
            Engine::Type3(_) => true,
        };
        set.then_some((self.num_points, self.num_targets))
    }

    /// One checked run of `pass`, transform by transform of the stack. A gradient pass
    /// (types 1 and 2) runs the uniform engine's with the kernels' derivative.
    fn execute_host(
        &mut self,
        input: &[Complex<T>],
        output: &mut [Complex<T>],
        pass: Pass,
    ) -> Result<()> {
        let (a, b) = self.check_io(input.len(), output.len(), pass)?;
        let (adjoint, gradient) = (pass.adjoint, pass.gradient);
        if a == 0 {
            output.iter_mut().for_each(|v| *v = Complex::default());
        }
        if a == 0 || b == 0 {
            return Ok(());
        }
        let isign = if adjoint {
            -self.problem.isign
        } else {
            self.problem.isign
        };
        let as_type1 = (self.problem.ty == TransformType::Type1) != adjoint;
        let engine = &mut self.engine;
        let mut body = move || -> Result<()> {
            for (x, y) in input.chunks(a).zip(output.chunks_mut(b)) {
                match &mut *engine {
                    Engine::Uniform(u) if as_type1 && gradient => u.type1_grad(x, y, isign)?,
                    Engine::Uniform(u) if as_type1 => u.type1(x, y, isign)?,
                    Engine::Uniform(u) if gradient => u.type2_grad(x, y, isign)?,
                    Engine::Uniform(u) => u.type2(x, y, isign)?,
                    Engine::Type3(e) if adjoint => e.execute_adjoint(x, y, isign)?,
                    Engine::Type3(e) => e.execute(x, y, isign)?,
                    Engine::Type3Pending => return Err(NudtError::PointsNotSet),
                }
            }
            Ok(())
        };
        match self.pool.clone() {
            Some(p) => p.install(body),
            None => body(),
        }
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
        self.pool
            .as_ref()
            .map_or_else(rayon::current_num_threads, |p| p.current_num_threads())
    }

    pub fn kernel(&self) -> &KernelSpec {
        &self.kernel
    }

    pub fn tolerance(&self) -> f64 {
        self.problem.tol
    }

    /// Fine grid size per dimension (type 3: the inner type 2's grid, once points are set).
    pub fn fine_grid(&self) -> Vec<usize> {
        match &self.engine {
            Engine::Uniform(u) => u.grid.n.clone(),
            Engine::Type3(forward) => forward.fft_grid(),
            Engine::Type3Pending => Vec::new(),
        }
    }

    /// The spreading schedule chosen for the current points.
    pub fn strategy(&self) -> Strategy {
        match &self.engine {
            Engine::Uniform(u) => u.grid.strategy(),
            Engine::Type3(forward) => forward.spread_grid().strategy(),
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
            Engine::Uniform(u) => u.grid.tile_side(),
            Engine::Type3(forward) => forward.spread_grid().tile_side(),
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
    /// the two schedules and for tuning). Returns the fine grid.
    pub fn spread_only(&self, strategy: Strategy, c: &[Complex<T>]) -> Result<Vec<Complex<T>>> {
        let Engine::Uniform(u) = &self.engine else {
            return Err(NudtError::WrongType {
                expected: 1,
                actual: 3,
            });
        };
        if c.len() != self.num_points {
            return Err(NudtError::Length {
                what: "strengths".into(),
                expected: self.num_points,
                got: c.len(),
            });
        }
        let mut g = vec![Complex::default(); u.grid.len()];
        self.run(|| u.grid.spread_with(strategy, c, &mut g))?;
        Ok(g)
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
