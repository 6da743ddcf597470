//! The user-facing plan, in the spirit of FINUFFT and rustfft: make a plan once, set points
//! once (binning happens there), execute many times.

use crate::error::{NudtError, Result};
use crate::float::Float;
use crate::grid::FineGrid;
use crate::type3::NonUniform;
use crate::type3_gaussian::GaussianType3;
use crate::uniform::{ModeOrder, Uniform};
use nudt_gen::{plan as gplan, Arch, KernelKind, KernelSpec, Strategy, TransformType, Upsampling};
use num_complex::Complex;
use std::path::Path;
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
}

/// Type 3 algorithms.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum Type3Method {
    /// FINUFFT's: spread, inner type 2, correct — with the plan's kernel (PSWF by default).
    #[default]
    Finufft,
    /// Lee–Greengard Gaussian gridding with Capozzoli et al.'s parameters (Table 1, eq. 6):
    /// wide windows, one FFT, no inner NUFFT.
    GaussianCapozzoli,
}

/// A type 3 engine of either method.
enum Type3Engine<T: Float> {
    Finufft(NonUniform<T>),
    Gaussian(GaussianType3<T>),
}

impl<T: Float> Type3Engine<T> {
    #[allow(clippy::too_many_arguments)]
    fn new(
        method: Type3Method,
        src: &[&[T]],
        tgt: &[&[T]],
        kernel: KernelSpec,
        tol: f64,
        isign: i32,
        strategy: Strategy,
        arch: &Arch,
        side: Option<usize>,
    ) -> Result<Self> {
        Ok(match method {
            Type3Method::Finufft => Type3Engine::Finufft(NonUniform::new(
                src, tgt, kernel, tol, isign, strategy, arch, side,
            )?),
            Type3Method::GaussianCapozzoli => Type3Engine::Gaussian(GaussianType3::new(
                src, tgt, tol, isign, strategy, arch, side,
            )?),
        })
    }

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
        }
    }
}

/// A type 1/2 engine: the fine grid for `kernel` and the mode map onto it.
fn uniform_engine<T: Float>(
    modes: &[usize],
    kernel: KernelSpec,
    tol: f64,
    opts: &Options,
    arch: &Arch,
) -> Result<Engine<T>> {
    let n = modes
        .iter()
        .map(|&m| gplan::fine_size(m, &kernel))
        .collect::<std::result::Result<Vec<_>, _>>()?;
    check_grid::<T>(&n)?;
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

/// Refuses fine grids that overflow or could not fit in memory.
pub(crate) fn check_grid<T>(n: &[usize]) -> Result<()> {
    let points = n
        .iter()
        .try_fold(1usize, |a, &b| a.checked_mul(b))
        .ok_or(NudtError::GridOverflow)?;
    let bytes = points
        .checked_mul(2 * std::mem::size_of::<T>())
        .ok_or(NudtError::GridOverflow)?;
    let available = physical_memory().unwrap_or(usize::MAX / 2);
    if bytes > available {
        return Err(NudtError::GridTooLarge {
            points,
            bytes,
            available,
        });
    }
    Ok(())
}

/// This machine's memory (MemTotal, Linux), the figure plans check their grids against;
/// `None` where the system does not say. Public so that tools sizing their own data (the
/// CLI's benchmark) apply the same limit.
pub fn physical_memory() -> Option<usize> {
    let info = std::fs::read_to_string("/proc/meminfo").ok()?;
    let kb = info
        .lines()
        .find(|l| l.starts_with("MemTotal:"))?
        .split_whitespace()
        .nth(1)?
        .parse::<usize>()
        .ok()?;
    Some(kb.saturating_mul(1024))
}

/// The first non-finite value of `v`, if any, as an error. On every core of the caller's
/// pool, by chunks (2-D, 10⁷ points: 4 ms; rayon's `position_first` over single elements
/// took 70 ms).
fn check_finite<T: Float>(what: &'static str, v: &[T]) -> Result<()> {
    use rayon::prelude::*;
    const CHUNK: usize = 1 << 16;
    let first = v
        .par_chunks(CHUNK)
        .enumerate()
        .find_map_first(|(i, c)| c.iter().position(|x| !x.is_finite()).map(|p| i * CHUNK + p));
    match first {
        Some(index) => Err(NudtError::NonFinite {
            what,
            index,
            value: v[index].wide(),
        }),
        None => Ok(()),
    }
}

fn check_coords<T: Float>(dim: usize, coords: &[&[T]], names: [&'static str; 3]) -> Result<usize> {
    if coords.len() != dim {
        return Err(NudtError::Coordinates {
            expected: dim,
            got: coords.len(),
        });
    }
    let m = coords[0].len();
    for (d, c) in coords.iter().enumerate() {
        if c.len() != m {
            return Err(NudtError::Length {
                what: format!("{} coordinates", names[d]),
                expected: m,
                got: c.len(),
            });
        }
        check_finite(names[d], c)?;
    }
    if m > u32::MAX as usize {
        return Err(NudtError::TooManyPoints(m));
    }
    Ok(m)
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
pub struct Plan<T: Float> {
    ty: TransformType,
    dim: usize,
    isign: i32,
    ntransf: usize,
    tol: f64,
    opts: Options,
    kernel: KernelSpec,
    modes: Vec<usize>,
    engine: Engine<T>,
    num_points: usize,
    num_targets: usize,
    pool: Option<Arc<rayon::ThreadPool>>,
    /// The tuning profile this plan took choices from.
    profile: Option<&'static Path>,
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

impl<T: Float> Plan<T> {
    /// Makes a type 1 or 2 plan with `modes[d]` modes along dimension d. `isign` is ±1;
    /// `ntransf` transforms share the points (and their sort).
    pub fn new(
        ty: TransformType,
        modes: &[usize],
        isign: i32,
        ntransf: usize,
        tol: f64,
        opts: Options,
    ) -> Result<Self> {
        if ty == TransformType::Type3 {
            return Err(NudtError::WrongType {
                expected: 1,
                actual: 3,
            });
        }
        Self::build(ty, modes, isign, ntransf, tol, opts)
    }

    /// Makes a type 3 plan in `dim` dimensions; its grids are planned by `set_points_type3`.
    pub fn new_type3(
        dim: usize,
        isign: i32,
        ntransf: usize,
        tol: f64,
        opts: Options,
    ) -> Result<Self> {
        Self::build(
            TransformType::Type3,
            &vec![1; dim],
            isign,
            ntransf,
            tol,
            opts,
        )
    }

    fn build(
        ty: TransformType,
        modes: &[usize],
        isign: i32,
        ntransf: usize,
        tol: f64,
        opts: Options,
    ) -> Result<Self> {
        let dim = modes.len();
        if !(1..=3).contains(&dim) {
            return Err(nudt_gen::GenError::Dimension(dim).into());
        }
        if isign != 1 && isign != -1 {
            return Err(NudtError::Sign(isign));
        }
        if ntransf == 0 {
            return Err(NudtError::ZeroTransforms);
        }
        // This machine's tuned choice for the dimension, for a type 1/2 plan that leaves
        // something to the planner.
        let tuned = match crate::profile::this_machines() {
            Some((path, p))
                if opts.use_profile && opts.arch.is_none() && ty != TransformType::Type3 =>
            {
                p.choice(dim).map(|c| (path, c))
            }
            _ => None,
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
        let sigma = opts.upsampling.unwrap_or(Upsampling::TWO);
        let kernel = KernelSpec::for_tolerance(opts.kernel, tol, sigma, T::PRECISION)?;
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
            _ => uniform_engine(modes, kernel, tol, &opts, &arch)?,
        };
        Ok(Plan {
            ty,
            dim,
            isign,
            ntransf,
            tol,
            kernel,
            modes: modes.to_vec(),
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
        if self.ty == TransformType::Type3 {
            return Err(NudtError::WrongType {
                expected: 1,
                actual: 3,
            });
        }
        let m = self.run(|| check_coords(self.dim, coords, ["x", "y", "z"]))?;
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

    /// Where σ is the planner's to choose, the one for `m` points
    /// ([`gplan::choose_upsampling_uniform`]: above 2 in 2-D and 3-D when the points
    /// outnumber the grid points), rebuilding the grid if it changes. A grid that would not
    /// fit leaves σ as it is.
    fn fit_upsampling(&mut self, m: usize) -> Result<()> {
        if self.opts.upsampling.is_some() || self.dim < 2 {
            return Ok(());
        }
        let kind = self.opts.kernel;
        let two = KernelSpec::for_tolerance(kind, self.tol, Upsampling::TWO, T::PRECISION)?;
        let grid_points: usize = self
            .modes
            .iter()
            .map(|&n| gplan::fine_size(n, &two))
            .product::<std::result::Result<usize, _>>()?;
        let sigma = if m >= grid_points {
            gplan::choose_upsampling_uniform(kind, self.tol, T::PRECISION, self.dim)
        } else {
            Upsampling::TWO
        };
        if sigma == self.kernel.upsampling {
            return Ok(());
        }
        let kernel = KernelSpec::for_tolerance(kind, self.tol, sigma, T::PRECISION)?;
        let arch = self.opts.arch.clone().unwrap_or_default();
        let (modes, tol, opts) = (&self.modes, self.tol, &self.opts);
        if let Ok(engine) = self.run(|| uniform_engine(modes, kernel, tol, opts, &arch)) {
            self.engine = engine;
            self.kernel = kernel;
        }
        Ok(())
    }

    /// Sets sources `x` and target frequencies `s` of a type 3 plan.
    pub fn set_points_type3(&mut self, sources: &[&[T]], targets: &[&[T]]) -> Result<()> {
        if self.ty != TransformType::Type3 {
            return Err(NudtError::WrongType {
                expected: 3,
                actual: self.type_number(),
            });
        }
        let m = self.run(|| check_coords(self.dim, sources, ["x", "y", "z"]))?;
        let k = self.run(|| check_coords(self.dim, targets, ["s", "t", "u"]))?;
        // The kernel meets the tolerance over both stages and every axis.
        let stage_tol = gplan::type3_stage_tolerance(self.tol, self.dim, T::PRECISION);
        let sigma = match self.opts.upsampling {
            Some(sigma) => sigma,
            None => {
                // σ is open: choose it now that the space–bandwidth product is known.
                let half = |v: &[T]| crate::type3::centre(v).1;
                let extent: Vec<f64> = sources
                    .iter()
                    .zip(targets)
                    .map(|(x, s)| half(x) * half(s))
                    .collect();
                gplan::choose_upsampling_type3(
                    self.opts.kernel,
                    stage_tol,
                    T::PRECISION,
                    &extent,
                    m + k,
                )
            }
        };
        // A σ the caller fixed may need a kernel wider than the widest for the stage
        // tolerance: it then gets the kernel for the tolerance itself.
        let kind = self.opts.kernel;
        let (kernel, stage_tol) =
            match KernelSpec::for_tolerance(kind, stage_tol, sigma, T::PRECISION) {
                Ok(kernel) => (kernel, stage_tol),
                Err(_) => (
                    KernelSpec::for_tolerance(kind, self.tol, sigma, T::PRECISION)?,
                    self.tol,
                ),
            };
        self.kernel = kernel;
        let (kernel, isign, strategy) = (self.kernel, self.isign, self.opts.strategy);
        let arch = self.opts.arch.clone().unwrap_or_default();
        let side = self.opts.tile_side;
        // Gaussian gridding sizes its windows from the caller's tolerance itself.
        let method = self.opts.type3;
        let tol = match method {
            Type3Method::Finufft => stage_tol,
            Type3Method::GaussianCapozzoli => self.tol,
        };
        let nu = self.run(|| {
            Type3Engine::new(
                method, sources, targets, kernel, tol, isign, strategy, &arch, side,
            )
        })?;
        self.engine = Engine::Type3(Box::new(nu));
        self.num_points = m;
        self.num_targets = k;
        Ok(())
    }

    fn type_number(&self) -> u8 {
        match self.ty {
            TransformType::Type1 => 1,
            TransformType::Type2 => 2,
            TransformType::Type3 => 3,
        }
    }

    /// Input and output lengths of one transform, for this plan's direction.
    fn lengths(&self, adjoint: bool) -> (usize, usize) {
        let modes: usize = self.modes.iter().product();
        let (a, b) = match self.ty {
            TransformType::Type1 => (self.num_points, modes),
            TransformType::Type2 => (modes, self.num_points),
            TransformType::Type3 => (self.num_points, self.num_targets),
        };
        if adjoint {
            (b, a)
        } else {
            (a, b)
        }
    }

    fn check_io(
        &self,
        input: &[Complex<T>],
        output: &[Complex<T>],
        adjoint: bool,
    ) -> Result<(usize, usize)> {
        let set = match &self.engine {
            Engine::Uniform(u) => u.grid.has_points(),
            Engine::Type3Pending => false,
            Engine::Type3(_) => true,
        };
        if !set {
            return Err(NudtError::PointsNotSet);
        }
        let (a, b) = self.lengths(adjoint);
        crate::error::check_stack(
            [input.len(), output.len()],
            [a, b],
            self.ntransf,
            ["input", "output"],
        )?;
        Ok((a, b))
    }

    /// Runs the plan's transform on `ntransf` stacked inputs.
    ///
    /// Type 1: strengths (M each) → modes; type 2: modes → values at the points (M each);
    /// type 3: strengths (M each) → values at the targets (K each).
    pub fn execute(&mut self, input: &[Complex<T>], output: &mut [Complex<T>]) -> Result<()> {
        self.execute_dir(input, output, false)
    }

    /// The adjoint: type 1's is a type 2 with the opposite sign, type 2's a type 1, and
    /// type 3's maps values at the targets back to the sources (the type 3 with roles and
    /// sign swapped), run as the adjoint of each step on the forward's own grids.
    pub fn execute_adjoint(
        &mut self,
        input: &[Complex<T>],
        output: &mut [Complex<T>],
    ) -> Result<()> {
        self.execute_dir(input, output, true)
    }

    fn execute_dir(
        &mut self,
        input: &[Complex<T>],
        output: &mut [Complex<T>],
        adjoint: bool,
    ) -> Result<()> {
        let (a, b) = self.check_io(input, output, adjoint)?;
        if a == 0 {
            output.iter_mut().for_each(|v| *v = Complex::default());
        }
        if a == 0 || b == 0 {
            return Ok(());
        }
        let isign = if adjoint { -self.isign } else { self.isign };
        let as_type1 = (self.ty == TransformType::Type1) != adjoint;
        let engine = &mut self.engine;
        let mut body = move || -> Result<()> {
            for (x, y) in input.chunks(a).zip(output.chunks_mut(b)) {
                match &mut *engine {
                    Engine::Uniform(u) if as_type1 => u.type1(x, y, isign)?,
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
        self.tol
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

    /// The tuning profile whose choices this plan took, if any ([`Options::use_profile`]).
    pub fn profile(&self) -> Option<&'static Path> {
        self.profile
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
        self.ty
    }

    pub fn dim(&self) -> usize {
        self.dim
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
            .field("type", &self.ty)
            .field("precision", &T::PRECISION)
            .field("modes", &self.modes)
            .field("isign", &self.isign)
            .field("ntransf", &self.ntransf)
            .field("tol", &self.tol)
            .field("kernel", &self.kernel)
            .field("fine_grid", &self.fine_grid())
            .field("strategy", &self.strategy())
            .field("profile", &self.profile)
            .finish()
    }
}
