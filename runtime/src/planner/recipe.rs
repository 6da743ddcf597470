//! What a plan computes ([`Problem`]) and what the planner chose for it ([`Recipe`]): pure
//! data, the same on every backend, printed by `nudt transform --json`.

use super::limits::{MAX_GRID_SIDE, MAX_POINTS};
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
}

impl Problem {
    /// A type 1 or 2 problem (`ty` 3 is a wrong-type error: see [`Problem::type3`]).
    #[allow(clippy::too_many_arguments)]
    pub fn uniform(
        ty: TransformType,
        modes: &[usize],
        isign: i32,
        ntransf: usize,
        tol: f64,
        precision: Precision,
        kernel: KernelKind,
        upsampling: Option<Upsampling>,
    ) -> Result<Self> {
        super::validate::check_type(1, ty)?;
        Self::checked(Problem {
            ty,
            modes: modes.to_vec(),
            isign,
            ntransf,
            tol,
            precision,
            kernel,
            upsampling,
            type3: Type3Method::Finufft,
        })
    }

    /// A type 3 problem in `dim` dimensions.
    #[allow(clippy::too_many_arguments)]
    pub fn type3(
        dim: usize,
        isign: i32,
        ntransf: usize,
        tol: f64,
        precision: Precision,
        kernel: KernelKind,
        upsampling: Option<Upsampling>,
        method: Type3Method,
    ) -> Result<Self> {
        Self::checked(Problem {
            ty: TransformType::Type3,
            modes: vec![1; dim],
            isign,
            ntransf,
            tol,
            precision,
            kernel,
            upsampling,
            type3: method,
        })
    }

    fn checked(p: Problem) -> Result<Self> {
        check_parameters(&p.modes, p.isign, p.ntransf)?;
        // The tolerance and σ: refused here, before any backend allocates.
        KernelSpec::for_tolerance(
            p.kernel,
            p.tol,
            p.upsampling.unwrap_or(Upsampling::TWO),
            p.precision,
        )?;
        Ok(p)
    }

    pub fn dim(&self) -> usize {
        self.modes.len()
    }

    /// Input and output lengths (complex values) of one transform with `points` points (type
    /// 3: sources) and `targets` targets; with `adjoint`, of its adjoint.
    pub fn lengths(&self, points: usize, targets: usize, adjoint: bool) -> (usize, usize) {
        let modes: usize = self.modes.iter().product();
        let (a, b) = match self.ty {
            TransformType::Type1 => (points, modes),
            TransformType::Type2 => (modes, points),
            TransformType::Type3 => (points, targets),
        };
        if adjoint {
            (b, a)
        } else {
            (a, b)
        }
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
}

impl Recipe {
    /// The recipe of `problem` with the kernel chosen for `kernel_tol` and its grids.
    pub fn new(
        problem: &Problem,
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
