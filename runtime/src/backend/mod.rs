//! One plan interface over every backend: [`NufftPlan`], implemented by the CPU [`Plan`] and
//! by each GPU backend's plan, and [`Backend`], the one value that picks among them.
//!
//! Code that does not care where a transform runs (`nudt transform`, a user's pipeline)
//! makes its plan with [`Backend::plan`] or [`Backend::plan_type3`] and drives it through the
//! trait; the backends' own types stay available for what only they offer (device buffers,
//! streams, timings by events).
//!
//! ```
//! use nudt_runtime::backend::{Backend, BackendOptions};
//! use nudt_runtime::TransformType;
//! use num_complex::Complex64;
//! let x: Vec<f64> = (0..100).map(|j| j as f64 * 0.05 - 2.5).collect();
//! let c = vec![Complex64::new(1.0, 0.0); 100];
//! let backend: Backend = "cpu".parse()?;
//! let mut plan =
//!     backend.plan::<f64>(TransformType::Type1, &[32], 1, 1, 1e-9, &BackendOptions::default())?;
//! plan.set_points(&[&x])?;
//! let mut f = vec![Complex64::default(); 32];
//! plan.execute(&c, &mut f)?;
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

use crate::error::NudtError;
use crate::float::Float;
use crate::plan::{Options, Plan};
use crate::planner::Recipe;
use nudt_gen::{KernelSpec, TransformType};
use num_complex::Complex;

/// Where a plan runs.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Backend {
    /// The generated CPU spreaders (rayon).
    Cpu,
    /// An NVIDIA GPU through CUDA (feature `cuda`).
    Cuda,
    /// Any OpenCL device: AMD, Intel and NVIDIA GPUs, CPUs through PoCL (feature `opencl`).
    OpenCl,
}

impl Backend {
    /// Every backend, built in or not.
    pub const ALL: [Backend; 3] = [Backend::Cpu, Backend::Cuda, Backend::OpenCl];

    /// The name `FromStr` reads and reports print.
    pub fn name(self) -> &'static str {
        match self {
            Backend::Cpu => "cpu",
            Backend::Cuda => "cuda",
            Backend::OpenCl => "opencl",
        }
    }

    /// The cargo feature that builds it in (`None`: always there).
    pub fn feature(self) -> Option<&'static str> {
        match self {
            Backend::Cpu => None,
            Backend::Cuda => Some("cuda"),
            Backend::OpenCl => Some("opencl"),
        }
    }

    /// Whether this build has it (a device may still be missing at run time).
    pub fn is_built(self) -> bool {
        match self {
            Backend::Cpu => true,
            Backend::Cuda => cfg!(feature = "cuda"),
            Backend::OpenCl => cfg!(feature = "opencl"),
        }
    }

    /// Whether plans can run here, in this build on this machine, or why not: the CPU always;
    /// CUDA with its driver, libraries and a device; OpenCL with a device that has
    /// `cl_khr_fp64` (its plans reduce coordinates in double in both precisions). What it
    /// returns is what the first plan would fail with.
    pub fn available(self) -> Result<(), BackendError> {
        match self {
            Backend::Cpu => Ok(()),
            #[cfg(feature = "cuda")]
            Backend::Cuda => match crate::cuda::device_count()? {
                0 => Err(crate::cuda::CudaError::NoDevice {
                    ordinal: 0,
                    count: 0,
                }
                .into()),
                _ => Ok(()),
            },
            #[cfg(feature = "opencl")]
            Backend::OpenCl => {
                let dev = crate::opencl::ClDevice::first()?;
                match dev.info.fp64 {
                    true => Ok(()),
                    false => Err(crate::opencl::OpenClError::Unsupported {
                        device: dev.info.name.clone(),
                        source: nudt_gen::GenError::Fp64Unsupported,
                    }
                    .into()),
                }
            }
            #[allow(unreachable_patterns)]
            b => Err(b.not_built()),
        }
    }

    fn not_built(self) -> BackendError {
        BackendError::NotBuilt {
            backend: self,
            feature: self.feature().unwrap_or_default(),
        }
    }

    /// A type 1 or 2 plan with `modes[d]` modes along dimension d on this backend.
    pub fn plan<T: BackendFloat>(
        self,
        ty: TransformType,
        modes: &[usize],
        isign: i32,
        ntransf: usize,
        tol: f64,
        opts: &BackendOptions,
    ) -> Result<Box<dyn NufftPlan<T>>, BackendError> {
        T::make(self, (Shape::Uniform(ty, modes), isign, ntransf, tol), opts)
    }

    /// A type 3 plan in `dim` dimensions on this backend.
    pub fn plan_type3<T: BackendFloat>(
        self,
        dim: usize,
        isign: i32,
        ntransf: usize,
        tol: f64,
        opts: &BackendOptions,
    ) -> Result<Box<dyn NufftPlan<T>>, BackendError> {
        T::make(self, (Shape::Type3(dim), isign, ntransf, tol), opts)
    }
}

impl std::fmt::Display for Backend {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

impl std::str::FromStr for Backend {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        Backend::ALL
            .into_iter()
            .find(|b| b.name() == s)
            .ok_or_else(|| {
                let names: Vec<&str> = Backend::ALL.iter().map(|b| b.name()).collect();
                format!(
                    "unknown backend '{s}' (expected one of {})",
                    names.join(", ")
                )
            })
    }
}

/// Every backend's options in one value; each plan reads its own part.
#[derive(Clone, Debug, Default)]
pub struct BackendOptions {
    pub cpu: Options,
    #[cfg(feature = "cuda")]
    pub cuda: crate::cuda::CudaOptions,
    #[cfg(feature = "opencl")]
    pub opencl: crate::opencl::ClOptions,
    /// The GPU backends' devices (CUDA ordinals; OpenCL: 0, the one this build opens), each
    /// listed once per opening: empty, the options' own device; one, a plan on it; several, a
    /// plan over them ([`crate::MultiPlan`]: types 1 and 2, points shared by the stack), each
    /// transform split in slabs or whole transforms on each device as the plan layer says.
    /// The CPU has none (its threads: [`Options::threads`]).
    pub devices: Vec<usize>,
}

/// Runs `$body` on the options of each GPU backend in this build, as `$o`.
macro_rules! on_gpus {
    ($self:ident, $o:ident => $body:block) => {
        #[cfg(feature = "cuda")]
        {
            let $o = &mut $self.cuda;
            $body
        }
        #[cfg(feature = "opencl")]
        {
            let $o = &mut $self.opencl;
            $body
        }
    };
}

/// `with_…` setters of one option that every GPU backend's options have under one name,
/// `$field` (the CPU has none of them).
macro_rules! gpu_setters {
    ($($(#[doc = $doc:expr])* $name:ident($field:ident: $ty:ty);)*) => {$(
        $(#[doc = $doc])*
        #[cfg_attr(
            not(any(feature = "cuda", feature = "opencl")),
            allow(unused_variables, unused_mut)
        )]
        pub fn $name(mut self, $field: $ty) -> Self {
            on_gpus!(self, o => { o.$field = $field; });
            self
        }
    )*};
}

impl BackendOptions {
    /// Sets what every backend shares: the kernel and σ (`None`: each planner's choice).
    pub fn with_kernel(
        mut self,
        kernel: nudt_gen::KernelKind,
        upsampling: Option<nudt_gen::Upsampling>,
    ) -> Self {
        (self.cpu.kernel, self.cpu.upsampling) = (kernel, upsampling);
        on_gpus!(self, o => { (o.kernel, o.upsampling) = (kernel, upsampling); });
        self
    }

    /// Sets how every backend computes type 3 (FINUFFT's scheme or Gaussian gridding).
    pub fn with_type3(mut self, method: crate::Type3Method) -> Self {
        self.cpu.type3 = method;
        on_gpus!(self, o => { o.type3 = method; });
        self
    }

    /// Runs the GPU backends' plans on `devices` ([`Self::devices`]).
    pub fn with_devices(mut self, devices: &[usize]) -> Self {
        self.devices = devices.to_vec();
        self
    }

    /// Plans every backend for derivatives with respect to the points ([`Options::gradients`]).
    pub fn with_gradients(mut self, gradients: bool) -> Self {
        self.cpu.gradients = gradients;
        on_gpus!(self, o => { o.gradients = gradients; });
        self
    }

    /// Sets every backend's mode order (FINUFFT's `modeord`).
    pub fn with_mode_order(mut self, order: crate::ModeOrder) -> Self {
        self.cpu.mode_order = order;
        on_gpus!(self, o => { o.mode_order = order; });
        self
    }

    /// Forces the GPU backends' spreading and interpolation methods (`None`: the planner's
    /// choice); the CPU has none to force.
    #[cfg_attr(
        not(any(feature = "cuda", feature = "opencl")),
        allow(unused_variables, unused_mut)
    )]
    pub fn with_gpu_methods(
        mut self,
        spread: Option<nudt_gen::gpu::GpuMethod>,
        interp: Option<nudt_gen::gpu::GpuMethod>,
    ) -> Self {
        on_gpus!(self, o => { (o.spread, o.interp) = (spread, interp); });
        self
    }

    gpu_setters! {
        /// Sets the GPU backends' bin sides (`None`: the planner's); the CPU's tiles are its
        /// own.
        with_gpu_bins(bins: Option<[usize; 3]>);
        /// Whether the GPU backends take their device's `nudt tune` profile (the default).
        with_gpu_profiles(use_profile: bool);
        /// Sets the GPU backends' transforms per batch (0: `min(ntransf, 8)`); the CPU runs
        /// as many transforms of a stack at once as its threads and memory allow
        /// ([`crate::planner::limits::cpu_concurrent`]).
        with_gpu_batch(max_batch: usize);
    }
}

/// Why a plan failed on some backend: the input errors every backend reports alike, or
/// what only that backend can get wrong (no device, a failed compile...).
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
pub enum BackendError {
    /// Bad input or parameters, named as the CPU backend names them.
    #[error(transparent)]
    Input(#[from] NudtError),
    #[cfg(feature = "cuda")]
    #[error(transparent)]
    Cuda(crate::cuda::CudaError),
    #[cfg(feature = "opencl")]
    #[error(transparent)]
    OpenCl(crate::opencl::OpenClError),
    /// The backend is not compiled into this build.
    #[error("the {backend} backend is not in this build (built without the `{feature}` feature); rebuild with `--features {feature}`")]
    NotBuilt {
        backend: Backend,
        feature: &'static str,
    },
}

#[cfg(feature = "cuda")]
impl From<crate::cuda::CudaError> for BackendError {
    fn from(e: crate::cuda::CudaError) -> Self {
        match e {
            crate::cuda::CudaError::Nudt(e) => BackendError::Input(e),
            e => BackendError::Cuda(e),
        }
    }
}

#[cfg(feature = "opencl")]
impl From<crate::opencl::OpenClError> for BackendError {
    fn from(e: crate::opencl::OpenClError) -> Self {
        use crate::opencl::OpenClError as E;
        match e {
            E::Input(e) => BackendError::Input(e),
            E::Gen(e) => BackendError::Input(NudtError::Gen(e)),
            e => BackendError::OpenCl(e),
        }
    }
}

/// What a plan chose and where it runs, for reports.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct PlanReport {
    /// The device (a GPU's name and architecture); `None` on the CPU.
    pub device: Option<String>,
    /// The spreading schedule or GPU method of the transform's main step.
    pub method: Option<String>,
    /// CPU tile side.
    pub tile_side: Option<usize>,
    /// GPU bin sides.
    pub bins: Option<Vec<usize>>,
    /// The tuning profile the plan read.
    pub profile: Option<String>,
    /// Worker threads of a CPU plan.
    pub threads: Option<usize>,
    /// Device time of the last set-points and run (execute, adjoint or gradient pass; without
    /// host transfers), in seconds.
    pub device_times: Option<(f64, f64)>,
}

/// A NUFFT plan on any backend: set points once, execute many times. Host slices in and
/// out; inputs and outputs are stacked `ntransf` times, as in [`Plan`].
pub trait NufftPlan<T: Float> {
    fn backend(&self) -> Backend;
    fn transform_type(&self) -> TransformType;
    fn dim(&self) -> usize;
    fn kernel(&self) -> &KernelSpec;
    /// Kernel width per dimension.
    fn width(&self) -> usize {
        self.kernel().width
    }
    fn tolerance(&self) -> f64;
    /// The fine grid the FFT runs on (known for type 3 once its points are set).
    fn fine_grid(&self) -> Vec<usize>;
    /// The nonuniform points of a type 1 or 2 plan (radians, any finite value).
    fn set_points(&mut self, coords: &[&[T]]) -> Result<(), BackendError>;
    /// Sources and target frequencies of a type 3 plan.
    fn set_points_type3(&mut self, sources: &[&[T]], targets: &[&[T]]) -> Result<(), BackendError>;
    /// A point set per transform of a type 1 or 2 plan (`sets[b][d]`: transform b's
    /// coordinates along dimension d; sizes may differ), as [`Plan::set_points_per_transform`].
    /// Every backend runs them: on the GPUs the sets are sorted together and every stage
    /// is one launch for all of them ([`crate::planner::sets`]).
    fn set_points_per_transform(&mut self, sets: &[&[&[T]]]) -> Result<(), BackendError>;
    /// Sources and targets per transform of a type 3 plan, as
    /// [`Plan::set_points_type3_per_transform`]. On the GPUs every pair gets the grids the
    /// largest needs ([`crate::planner::type3::Geometry::for_sets`]), so that one batch of
    /// grids and one FFT serve all, and the sets are sorted together as for types 1 and 2.
    fn set_points_type3_per_transform(
        &mut self,
        sources: &[&[&[T]]],
        targets: &[&[&[T]]],
    ) -> Result<(), BackendError>;
    /// Per transform, its points (type 3: sources) and targets (0 for types 1 and 2), once
    /// set: the layout of execute's concatenated inputs and outputs.
    fn point_counts(&self) -> Option<Vec<(usize, usize)>>;
    /// Whether each transform has its own point set (set by
    /// [`Self::set_points_per_transform`] or [`Self::set_points_type3_per_transform`])
    /// rather than one that every transform shares: [`crate::gradient`] then gives each
    /// point its own cotangent instead of the sum over the stack.
    fn points_per_transform(&self) -> bool;
    /// The transform (type 1: strengths → modes; 2: modes → values; 3: strengths → values
    /// at the targets). Returns once `output` holds the result.
    fn execute(
        &mut self,
        input: &[Complex<T>],
        output: &mut [Complex<T>],
    ) -> Result<(), BackendError>;
    /// The adjoint, input shaped as [`Self::execute`]'s output and back, with the opposite
    /// sign: type 1's is a type 2, type 2's a type 1, type 3's maps values at the targets
    /// back to the sources. Every backend runs the adjoint of each of the forward's steps on
    /// its own grids and sorted points (no second plan; the forward's accuracy).
    fn execute_adjoint(
        &mut self,
        input: &[Complex<T>],
        output: &mut [Complex<T>],
    ) -> Result<(), BackendError>;
    /// The order of the modes in input and output arrays.
    fn mode_order(&self) -> crate::ModeOrder;
    /// A type 2 (a type 2 plan's forward, or a type 1 plan's adjoint) with its gradient: per
    /// transform and point `dim + 1` values in `out`, the interpolant `u(x_j)` and its
    /// derivatives `∂u/∂x_d(x_j)` (radians⁻¹). What [`crate::gradient`] differentiates
    /// types 1 and 2 with. Every backend runs the type 2's steps with one interpolation pass
    /// of the kernel and its derivative (the CPU's generated tile kernels, the GPUs'
    /// `nudt_interp_grad_*`); [`crate::gradient::interp_by_transforms`] is the way without
    /// the derivative, `dim + 1` transforms.
    fn interp_with_gradient(
        &mut self,
        modes: &[Complex<T>],
        out: &mut [Complex<T>],
        adjoint: bool,
    ) -> Result<(), BackendError>;
    /// A type 1 (a type 1 plan's forward, or a type 2 plan's adjoint) of values and derivative
    /// weights, `dim + 1` a point `(v_j, u_j)`: `f_k = Σ_j (v_j + s·i k·u_j) e^{s·i k·x_j}`
    /// with `s` the direction's sign, in one spreading pass with the kernel's derivative
    /// (the transpose of [`Self::interp_with_gradient`]);
    /// [`crate::gradient::spread_by_transforms`] takes `dim + 1` transforms.
    fn spread_with_gradient(
        &mut self,
        vu: &[Complex<T>],
        modes: &mut [Complex<T>],
        adjoint: bool,
    ) -> Result<(), BackendError>;
    /// Runs a derivative's steps ([`crate::gradient::steps`]) on host arrays: on the host by
    /// default ([`crate::gradient::host::run`]); the GPU plans move the arrays to the device
    /// once and run every step there, rather than copy each pass's `dim + 1` values a point
    /// back and forth.
    fn run_gradient(
        &mut self,
        steps: &crate::gradient::steps::Steps,
        arrays: &mut crate::gradient::host::HostArrays<'_, T>,
    ) -> Result<(), BackendError> {
        crate::gradient::host::run(self, steps, arrays)
    }
    /// Waits for the device's queued work (set-points returns before the sort is done on a
    /// GPU); a no-op on the CPU. For timing.
    fn synchronize(&self) -> Result<(), BackendError> {
        Ok(())
    }
    /// What the plan layer chose: kernel, tolerances, grids and limits, the same on every
    /// backend for the same problem (a type 3's grids once its points are set).
    fn recipe(&self) -> Recipe;
    /// Where it runs and what the backend chose to run it with.
    fn report(&self) -> PlanReport;
}

/// What a plan transforms: types 1/2 with their modes, or type 3 in some dimension.
#[derive(Clone, Copy, Debug)]
pub enum Shape<'a> {
    Uniform(TransformType, &'a [usize]),
    Type3(usize),
}

/// What [`Backend::plan`] and [`Backend::plan_type3`] ask of a backend: the shape, `isign`,
/// `ntransf` and `tol` of the plan.
#[doc(hidden)]
pub type PlanArgs<'a> = (Shape<'a>, i32, usize, f64);

/// The precisions every built backend runs: `f32` and `f64`.
pub trait BackendFloat: Float {
    #[doc(hidden)]
    fn make(
        backend: Backend,
        args: PlanArgs<'_>,
        opts: &BackendOptions,
    ) -> Result<Box<dyn NufftPlan<Self>>, BackendError>;
}

/// A boxed plan of type `$plan` with options `$o` for the [`PlanArgs`] of
/// [`BackendFloat::make`].
macro_rules! boxed_plan {
    ($plan:ty, $o:expr, $args:expr) => {{
        let (shape, isign, ntransf, tol) = $args;
        Ok(Box::new(match shape {
            Shape::Uniform(ty, modes) => <$plan>::new(ty, modes, isign, ntransf, tol, $o)?,
            Shape::Type3(dim) => <$plan>::new_type3(dim, isign, ntransf, tol, $o)?,
        }))
    }};
}

macro_rules! backend_float {
    ($t:ty) => {
        impl BackendFloat for $t {
            fn make(
                backend: Backend,
                args: PlanArgs<'_>,
                opts: &BackendOptions,
            ) -> Result<Box<dyn NufftPlan<$t>>, BackendError> {
                if !opts.devices.is_empty() {
                    return match backend {
                        Backend::Cpu => Err(NudtError::Devices {
                            devices: opts.devices.len(),
                            why: "the CPU backend runs on threads, not devices".into(),
                        }
                        .into()),
                        #[cfg(feature = "cuda")]
                        Backend::Cuda => devices::cuda_plan::<$t>(args, opts),
                        #[cfg(feature = "opencl")]
                        Backend::OpenCl => devices::opencl_plan::<$t>(args, opts),
                        #[allow(unreachable_patterns)]
                        b => Err(b.not_built()),
                    };
                }
                match backend {
                    Backend::Cpu => boxed_plan!(Plan::<$t>, opts.cpu.clone(), args),
                    #[cfg(feature = "cuda")]
                    Backend::Cuda => {
                        boxed_plan!(crate::cuda::CudaPlan::<$t>, opts.cuda.clone(), args)
                    }
                    #[cfg(feature = "opencl")]
                    Backend::OpenCl => {
                        boxed_plan!(crate::opencl::ClPlan::<$t>, opts.opencl.clone(), args)
                    }
                    #[allow(unreachable_patterns)]
                    b => Err(b.not_built()),
                }
            }
        }
    };
}
backend_float!(f32);
backend_float!(f64);

/// The [`NufftPlan`] methods every backend's plan has under the same names and signatures,
/// forwarded to them (errors into [`BackendError`]).
macro_rules! forward_plan_methods {
    ($plan:path) => {
        forward_plan_methods!(@query $plan;
            transform_type -> TransformType,
            dim -> usize,
            kernel -> &KernelSpec,
            tolerance -> f64,
            fine_grid -> Vec<usize>,
            point_counts -> Option<Vec<(usize, usize)>>,
            points_per_transform -> bool,
            recipe -> Recipe,
            mode_order -> crate::ModeOrder);
        forward_plan_methods!(@run $plan;
            set_points(coords: &[&[T]]),
            set_points_type3(sources: &[&[T]], targets: &[&[T]]),
            execute(input: &[Complex<T>], output: &mut [Complex<T>]),
            execute_adjoint(input: &[Complex<T>], output: &mut [Complex<T>]),
            interp_with_gradient(modes: &[Complex<T>], out: &mut [Complex<T>], adjoint: bool),
            spread_with_gradient(vu: &[Complex<T>], modes: &mut [Complex<T>], adjoint: bool));
    };
    (@query $plan:path; $($name:ident -> $ret:ty),*) => {
        $(fn $name(&self) -> $ret {
            <$plan>::$name(self)
        })*
    };
    (@run $plan:path; $($name:ident($($arg:ident: $ty:ty),*)),*) => {
        $(fn $name(&mut self, $($arg: $ty),*) -> Result<(), BackendError> {
            Ok(<$plan>::$name(self, $($arg),*)?)
        })*
    };
}

impl<T: Float> NufftPlan<T> for Plan<T> {
    fn backend(&self) -> Backend {
        Backend::Cpu
    }
    forward_plan_methods!(Plan<T>);
    fn run_gradient(
        &mut self,
        steps: &crate::gradient::steps::Steps,
        arrays: &mut crate::gradient::host::HostArrays<'_, T>,
    ) -> Result<(), BackendError> {
        Plan::run_gradient(self, steps, arrays)
    }
    fn set_points_per_transform(&mut self, sets: &[&[&[T]]]) -> Result<(), BackendError> {
        Ok(Plan::set_points_per_transform(self, sets)?)
    }
    fn set_points_type3_per_transform(
        &mut self,
        sources: &[&[&[T]]],
        targets: &[&[&[T]]],
    ) -> Result<(), BackendError> {
        Ok(Plan::set_points_type3_per_transform(
            self, sources, targets,
        )?)
    }
    fn report(&self) -> PlanReport {
        PlanReport {
            method: Some(
                match self.strategy() {
                    nudt_gen::Strategy::SourceDriven => "source-driven",
                    nudt_gen::Strategy::TargetDriven => "target-driven",
                    nudt_gen::Strategy::Auto => "auto",
                }
                .into(),
            ),
            tile_side: Some(self.tile_side()),
            profile: self.profile().map(|p| p.display().to_string()),
            threads: Some(self.threads()),
            ..PlanReport::default()
        }
    }
}

#[cfg(feature = "cuda")]
impl<T: crate::cuda::CudaFloat> NufftPlan<T> for crate::cuda::CudaPlan<T> {
    fn backend(&self) -> Backend {
        Backend::Cuda
    }
    forward_plan_methods!(crate::cuda::CudaPlan<T>);
    fn set_points_per_transform(&mut self, sets: &[&[&[T]]]) -> Result<(), BackendError> {
        Ok(crate::cuda::CudaPlan::set_points_per_transform(self, sets)?)
    }
    fn set_points_type3_per_transform(
        &mut self,
        sources: &[&[&[T]]],
        targets: &[&[&[T]]],
    ) -> Result<(), BackendError> {
        Ok(crate::cuda::CudaPlan::set_points_type3_per_transform(
            self, sources, targets,
        )?)
    }
    fn synchronize(&self) -> Result<(), BackendError> {
        Ok(crate::cuda::CudaPlan::synchronize(self)?)
    }
    fn run_gradient(
        &mut self,
        steps: &crate::gradient::steps::Steps,
        arrays: &mut crate::gradient::host::HostArrays<'_, T>,
    ) -> Result<(), BackendError> {
        Ok(crate::cuda::CudaPlan::run_gradient(self, steps, arrays)?)
    }
    fn report(&self) -> PlanReport {
        PlanReport {
            device: Some(format!("{} ({})", self.arch().name, self.arch().sm())),
            method: gpu_method(self.transform_type(), self.methods()),
            bins: Some(self.bins()),
            profile: self.profile().map(|p| p.display().to_string()),
            device_times: self
                .timings()
                .ok()
                .map(|t| (f64::from(t.setpts_ms) / 1e3, f64::from(t.execute_ms) / 1e3)),
            ..PlanReport::default()
        }
    }
}

/// The GPU method of a transform's main step: interpolation for type 2, else spreading.
#[cfg(any(feature = "cuda", feature = "opencl"))]
fn gpu_method(
    ty: TransformType,
    methods: Option<(nudt_gen::gpu::GpuMethod, nudt_gen::gpu::GpuMethod)>,
) -> Option<String> {
    let (spread, interp) = methods?;
    let main = if ty == TransformType::Type2 {
        interp
    } else {
        spread
    };
    Some(main.name().to_string())
}

#[cfg(feature = "opencl")]
impl<T: crate::opencl::ClFloat> NufftPlan<T> for crate::opencl::ClPlan<T> {
    fn backend(&self) -> Backend {
        Backend::OpenCl
    }
    forward_plan_methods!(crate::opencl::ClPlan<T>);
    fn run_gradient(
        &mut self,
        steps: &crate::gradient::steps::Steps,
        arrays: &mut crate::gradient::host::HostArrays<'_, T>,
    ) -> Result<(), BackendError> {
        Ok(crate::opencl::ClPlan::run_gradient(self, steps, arrays)?)
    }
    fn set_points_per_transform(&mut self, sets: &[&[&[T]]]) -> Result<(), BackendError> {
        Ok(crate::opencl::ClPlan::set_points_per_transform(self, sets)?)
    }
    fn set_points_type3_per_transform(
        &mut self,
        sources: &[&[&[T]]],
        targets: &[&[&[T]]],
    ) -> Result<(), BackendError> {
        Ok(crate::opencl::ClPlan::set_points_type3_per_transform(
            self, sources, targets,
        )?)
    }
    fn report(&self) -> PlanReport {
        let d = &self.device().info;
        PlanReport {
            device: Some(format!("{} ({})", d.name, d.platform)),
            method: gpu_method(self.transform_type(), self.methods()),
            bins: Some(self.bins()),
            profile: self.profile().map(|p| p.display().to_string()),
            ..PlanReport::default()
        }
    }
}

// After the macros it uses.
#[cfg(any(feature = "cuda", feature = "opencl"))]
mod devices;
