//! What to compute, and on what machine: the generator's input.

use crate::arch::Arch;
use crate::error::GenError;
use crate::kernel::KernelSpec;

/// Floating-point precision of the data and of the generated arithmetic.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Precision {
    F32,
    F64,
}

impl Precision {
    /// The Rust / CUDA scalar type name.
    pub fn type_name(self) -> &'static str {
        match self {
            Precision::F32 => "f32",
            Precision::F64 => "f64",
        }
    }

    /// Machine epsilon: a tolerance below a small multiple of it cannot be met.
    pub fn epsilon(self) -> f64 {
        match self {
            Precision::F32 => f32::EPSILON as f64,
            Precision::F64 => f64::EPSILON,
        }
    }

    /// The smallest tolerance a plan accepts in this precision (FINUFFT's practical floor).
    pub fn min_tolerance(self) -> f64 {
        match self {
            Precision::F32 => 1e-7,
            Precision::F64 => 1e-15,
        }
    }
}

/// NUFFT type: 1 (nonuniform → uniform), 2 (uniform → nonuniform), 3 (nonuniform → nonuniform).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum TransformType {
    Type1,
    Type2,
    Type3,
}

/// Which spreading kernel family to use.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum KernelKind {
    /// Prolate spheroidal wave function ψ₀ (FINUFFT 2.5's default): the most accurate per
    /// unit of width, about half a digit ahead of ES, and as cheap once fitted.
    Pswf,
    /// "Exponential of semicircle", FINUFFT's kernel before 2.5.
    Es,
    /// Truncated Gaussian (Dutt–Rokhlin, Greengard–Lee): about twice as wide for the same accuracy.
    Gaussian,
}

impl KernelKind {
    /// The kernel's usual name, as the literature writes it.
    pub fn name(self) -> &'static str {
        match self {
            KernelKind::Pswf => "PSWF",
            KernelKind::Es => "ES",
            KernelKind::Gaussian => "Gaussian",
        }
    }
}

/// Parallel spreading strategy (NUDT, sections 4–5).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Strategy {
    /// Tiles spread at once, each into its own buffer, added to the grid under locks of the
    /// stretches it covers; no atomics.
    SourceDriven,
    /// Grid blocks own their points and gather the sources that reach them; no synchronisation.
    TargetDriven,
    /// Let the planner decide from the point distribution.
    Auto,
}

/// Upsampling factor σ of the fine grid, from 1.25 (smallest FFTs, widest kernels) to 2.5.
/// FINUFFT offers 1.25 and 2; values between trade kernel width against grid size, which pays
/// in type 3, whose grids grow as σ^(2d); above 2 (ducc0 goes to 2.5) the same width aliases
/// less, which the planner uses to keep 2-D and 3-D errors at the 1-D level.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Upsampling(pub f64);

impl Upsampling {
    pub const TWO: Upsampling = Upsampling(2.0);
    pub const FIVE_FOURTHS: Upsampling = Upsampling(1.25);
    /// Bounds of the σ the width and shape rules are validated for (tests/suite/accuracy.rs).
    pub const MIN: f64 = 1.25;
    pub const MAX: f64 = 2.5;

    pub fn new(sigma: f64) -> Result<Self, GenError> {
        if (Self::MIN..=Self::MAX).contains(&sigma) {
            Ok(Upsampling(sigma))
        } else {
            Err(GenError::Upsampling(sigma))
        }
    }
}

/// How the window width is chosen.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Accuracy {
    /// Requested relative tolerance ε; the width and shape follow from it.
    Tolerance(f64),
    /// An explicit width in grid points (2..=16).
    Width(usize),
}

/// Algorithmic parameters of one family of generated kernels.
#[derive(Clone, Debug, PartialEq)]
pub struct AlgoParams {
    pub dim: usize,
    pub transform: TransformType,
    pub kernel: KernelKind,
    pub accuracy: Accuracy,
    pub upsampling: Upsampling,
    pub precision: Precision,
    pub strategy: Strategy,
}

impl AlgoParams {
    /// A type 1, PSWF, σ = 2 configuration at the given tolerance.
    pub fn new(dim: usize, precision: Precision, tol: f64) -> Self {
        AlgoParams {
            dim,
            transform: TransformType::Type1,
            kernel: KernelKind::Pswf,
            accuracy: Accuracy::Tolerance(tol),
            upsampling: Upsampling::TWO,
            precision,
            strategy: Strategy::Auto,
        }
    }

    /// Checks the ranges and returns the kernel these parameters call for.
    pub fn kernel_spec(&self) -> Result<KernelSpec, GenError> {
        if !(1..=3).contains(&self.dim) {
            return Err(GenError::Dimension(self.dim));
        }
        match self.accuracy {
            Accuracy::Tolerance(tol) => {
                KernelSpec::for_tolerance(self.kernel, tol, self.upsampling, self.precision)
            }
            Accuracy::Width(w) => KernelSpec::for_width(self.kernel, w, self.upsampling),
        }
    }
}

/// Everything the generator needs: the algorithm and the machine.
#[derive(Clone, Debug, PartialEq)]
pub struct Params {
    pub algo: AlgoParams,
    pub arch: Arch,
}
