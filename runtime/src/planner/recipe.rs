//! What a plan computes ([`Problem`]) and what the planner chose for it ([`Recipe`]): pure
//! data, the same on every backend, printed by `nudt transform --json`.

use super::limits::{MAX_GRID_SIDE, MAX_POINTS};
use super::stages::Pass;
use super::validate::{check_parameters, type_number};
use crate::error::Result;
use nudt_gen::{KernelKind, KernelSpec, Precision, TransformType, Upsampling};
use serde::ser::SerializeMap;
use serde::{Serialize, Serializer};

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

impl Type3Method {
    /// The name reports print.
    pub fn name(self) -> &'static str {
        match self {
            Type3Method::Finufft => "finufft",
            Type3Method::GaussianCapozzoli => "gaussian-capozzoli",
        }
    }
}

/// The kind of processor a plan runs on, where the planner's rules weigh costs differently:
/// spreading dominates a CPU's transform, so dense 2-D and 3-D point sets pay for a larger
/// grid and a narrower kernel there; on a GPU spreading is cheap beside the FFT and the
/// memory a larger grid takes, and σ stays 2 (measured on an H100: σ raised made the dense
/// 2-D/3-D rows of the GPU benchmark 7–45% slower).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum DeviceClass {
    Cpu,
    Gpu,
}

/// A transform as the caller asked for it, checked: the planner's input.
#[derive(Clone, Debug, PartialEq)]
pub struct Problem {
    pub ty: TransformType,
    /// Modes per dimension (type 3: a 1 per dimension).
    pub modes: Vec<usize>,
    pub isign: i32,
    pub ntransf: usize,
    pub tol: f64,
    pub precision: Precision,
    pub kernel: KernelKind,
    /// σ as the caller fixed it; `None`: the planner's ([`super::sigma`]).
    pub upsampling: Option<Upsampling>,
    pub type3: Type3Method,
    /// The tolerance a type 1 or 2 plan's kernel meets: `tol`, or for a plan made for
    /// gradients a tenth of it where the kernel reaches that. The derivative of the
    /// interpolant ([`crate::gradient`]) aliases about ten times as much as the interpolant
    /// (the aliased images sit at about 1.5σN, the signal's derivative at about N/4), so a
    /// kernel one digit better gives point derivatives within the caller's tolerance.
    pub kernel_tol: f64,
}

/// The algorithm choices a caller may fix, the same on every backend (each backend's options
/// give theirs through `choices`); the rest the planner decides.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Choices {
    pub precision: Precision,
    pub kernel: KernelKind,
    /// σ; `None`: the planner's ([`super::sigma`]).
    pub upsampling: Option<Upsampling>,
    pub type3: Type3Method,
    /// Whether the plan will be differentiated with respect to its points
    /// ([`Problem::kernel_tol`]).
    pub gradients: bool,
}

impl Choices {
    pub fn new(
        precision: Precision,
        kernel: KernelKind,
        upsampling: Option<Upsampling>,
        type3: Type3Method,
        gradients: bool,
    ) -> Self {
        Choices {
            precision,
            kernel,
            upsampling,
            type3,
            gradients,
        }
    }
}

impl Problem {
    /// A type 1 or 2 problem (`ty` 3 is a wrong-type error: see [`Problem::type3`]).
    pub fn uniform(
        ty: TransformType,
        modes: &[usize],
        isign: i32,
        ntransf: usize,
        tol: f64,
        choices: Choices,
    ) -> Result<Self> {
        super::validate::check_type(1, ty)?;
        Self::checked(ty, modes.to_vec(), isign, ntransf, tol, choices)
    }

    /// A type 3 problem in `dim` dimensions.
    pub fn type3(
        dim: usize,
        isign: i32,
        ntransf: usize,
        tol: f64,
        choices: Choices,
    ) -> Result<Self> {
        let modes = vec![1; dim];
        Self::checked(TransformType::Type3, modes, isign, ntransf, tol, choices)
    }

    fn checked(
        ty: TransformType,
        modes: Vec<usize>,
        isign: i32,
        ntransf: usize,
        tol: f64,
        c: Choices,
    ) -> Result<Self> {
        check_parameters(&modes, isign, ntransf)?;
        // The tolerance and σ: refused here, before any backend allocates.
        let sigma = c.upsampling.unwrap_or(Upsampling::TWO);
        KernelSpec::for_tolerance(c.kernel, tol, sigma, c.precision)?;
        // Type 3's method means nothing to types 1 and 2.
        let type3 = match ty {
            TransformType::Type3 => c.type3,
            _ => Type3Method::Finufft,
        };
        let finer = tol / 10.0;
        let kernel_tol = match ty {
            TransformType::Type3 => tol,
            _ if c.gradients
                && KernelSpec::for_tolerance(c.kernel, finer, sigma, c.precision).is_ok() =>
            {
                finer
            }
            _ => tol,
        };
        Ok(Problem {
            ty,
            modes,
            isign,
            ntransf,
            tol,
            precision: c.precision,
            kernel: c.kernel,
            upsampling: c.upsampling,
            type3,
            kernel_tol,
        })
    }

    pub fn dim(&self) -> usize {
        self.modes.len()
    }

    /// Input and output lengths (complex values) of one run of `pass` with `points` points
    /// (type 3: sources) and `targets` targets: the transform's, or the adjoint's, and for a
    /// gradient pass `dim + 1` values a point on the points' side.
    pub fn lengths(&self, points: usize, targets: usize, pass: Pass) -> (usize, usize) {
        let modes: usize = self.modes.iter().product();
        let points = match pass.gradient {
            true => points.saturating_mul(self.dim() + 1),
            false => points,
        };
        let (a, b) = match self.ty {
            TransformType::Type1 => (points, modes),
            TransformType::Type2 => (modes, points),
            TransformType::Type3 => (points, targets),
        };
        if pass.adjoint {
            (b, a)
        } else {
            (a, b)
        }
    }

    /// What one run of `pass` takes and gives, as errors name them.
    pub fn io_names(&self, pass: Pass) -> [&'static str; 2] {
        if pass.gradient {
            // Types 1 and 2: the points' side named for what it holds.
            let spreads = (self.ty == TransformType::Type1) != pass.adjoint;
            return match spreads {
                true => ["values and derivative weights (dim + 1 a point)", "modes"],
                false => ["modes", "values with the gradient (dim + 1 a point)"],
            };
        }
        let [i, o] = match self.ty {
            TransformType::Type1 => ["strengths", "modes"],
            TransformType::Type2 => ["modes", "values"],
            TransformType::Type3 => ["strengths", "values"],
        };
        if pass.adjoint {
            [o, i]
        } else {
            [i, o]
        }
    }

    /// The point counts a plan reports when its `ntransf` transforms share one set of
    /// `points` points (type 3: sources) and `targets` targets: that pair for every
    /// transform, as a plan with a set per transform reports each set's.
    pub fn shared_counts(&self, points: usize, targets: usize) -> Vec<(usize, usize)> {
        vec![(points, targets); self.ntransf]
    }

    /// Checks the lengths (complex values) of the stacked inputs and outputs, `got`, of one
    /// run of `pass` over the transforms whose point sets have `counts` (per transform,
    /// points or sources and targets: [`Problem::shared_counts`] or each set's), and returns
    /// each transform's input and output lengths: a stack is the concatenation of its
    /// transforms' arrays. Every backend's execute and gradient pass check through here.
    pub fn check_io(
        &self,
        counts: &[(usize, usize)],
        got: [usize; 2],
        pass: Pass,
    ) -> Result<Vec<(usize, usize)>> {
        debug_assert_eq!(counts.len(), self.ntransf, "a count pair per transform");
        let each: Vec<(usize, usize)> = counts
            .iter()
            .map(|&(m, k)| self.lengths(m, k, pass))
            .collect();
        crate::error::check_stack(got, &each, self.io_names(pass))?;
        Ok(each)
    }
}

/// What the planner chose for a [`Problem`]: everything a backend builds from, and nothing
/// about the backend. A type 3's grids are known once its points are set (empty before).
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Recipe {
    #[serde(serialize_with = "transform_number")]
    pub transform: TransformType,
    pub dim: usize,
    #[serde(serialize_with = "precision_name")]
    pub precision: Precision,
    pub modes: Vec<usize>,
    pub isign: i32,
    pub ntransf: usize,
    pub tol: f64,
    /// The kernel (Gaussian type 3: its window) and σ.
    #[serde(serialize_with = "kernel_fields")]
    pub kernel: KernelSpec,
    /// The tolerance the kernel meets: `tol`, or type 3's per-stage share of it.
    pub kernel_tol: f64,
    /// The grid the FFT runs on (type 3: the inner type 2's, or Gaussian gridding's one).
    pub fine_grid: Vec<usize>,
    /// Type 3 (FINUFFT's method): the grid the sources are spread on.
    pub spread_grid: Vec<usize>,
    /// `null` for types 1 and 2.
    #[serde(serialize_with = "type3_name")]
    pub type3: Option<Type3Method>,
    /// The limits every backend plans within ([`super::limits`]).
    pub max_points: usize,
    pub max_grid_side: usize,
    /// Whose costs the rules weighed.
    pub device: DeviceClass,
}

impl Recipe {
    /// The recipe of `problem` on `device` with the kernel chosen for `kernel_tol` and its
    /// grids.
    pub fn new(
        problem: &Problem,
        device: DeviceClass,
        kernel: KernelSpec,
        kernel_tol: f64,
        fine_grid: Vec<usize>,
        spread_grid: Vec<usize>,
    ) -> Self {
        Recipe {
            transform: problem.ty,
            dim: problem.dim(),
            precision: problem.precision,
            modes: problem.modes.clone(),
            isign: problem.isign,
            ntransf: problem.ntransf,
            tol: problem.tol,
            kernel,
            kernel_tol,
            fine_grid,
            spread_grid,
            type3: (problem.ty == TransformType::Type3).then_some(problem.type3),
            max_points: MAX_POINTS,
            max_grid_side: MAX_GRID_SIDE,
            device,
        }
    }
}

fn transform_number<S: Serializer>(
    t: &TransformType,
    s: S,
) -> std::result::Result<S::Ok, S::Error> {
    s.serialize_u8(type_number(*t))
}

fn precision_name<S: Serializer>(p: &Precision, s: S) -> std::result::Result<S::Ok, S::Error> {
    s.serialize_str(p.type_name())
}

fn type3_name<S: Serializer>(
    m: &Option<Type3Method>,
    s: S,
) -> std::result::Result<S::Ok, S::Error> {
    match m {
        Some(m) => s.serialize_str(m.name()),
        None => s.serialize_none(),
    }
}

fn kernel_fields<S: Serializer>(k: &KernelSpec, s: S) -> std::result::Result<S::Ok, S::Error> {
    let kind = match k.kind {
        KernelKind::Pswf => "pswf",
        KernelKind::Es => "es",
        KernelKind::Gaussian => "gaussian",
    };
    let mut m = s.serialize_map(Some(4))?;
    m.serialize_entry("kind", kind)?;
    m.serialize_entry("width", &k.width)?;
    m.serialize_entry("beta", &k.beta)?;
    m.serialize_entry("sigma", &k.upsampling.0)?;
    m.end()
}
