//! Derivatives of a transform with respect to its input and its points, written once for
//! every backend: reverse mode ([`vjp`], the vector–Jacobian product a backward pass needs)
//! and forward mode ([`jvp`]). The rules below are [`steps`]: the plan's passes and two
//! element-wise operations over named arrays, which the host runs with loops ([`host`]) and
//! the GPU plans with kernels on the device, where the arrays stay between the passes
//! ([`NufftPlan::run_gradient`]; a CUDA plan also on device arrays, `CudaPlan::vjp_device`).
//!
//! Conventions are PyTorch's: a cotangent of complex values `y` is `∂L/∂Re y + i·∂L/∂Im y`
//! for a real loss `L`, so the input's cotangent is the adjoint transform of the output's
//! (`Aᴴg`), and a real coordinate's is `Σ Re(conj(g)·∂y/∂x)`. Points shared by a stack of
//! `ntransf` transforms get the sum over the stack; with a point set per transform
//! ([`NufftPlan::points_per_transform`]) each point gets its own, and point arrays (tangents,
//! cotangents, type 3's [`Type3Points`]) are the concatenations of the sets'.
//!
//! Types 1 and 2 differentiate with respect to the points in one pass each: the derivative of
//! the kernel, spread or interpolated beside the kernel itself
//! ([`NufftPlan::interp_with_gradient`], [`NufftPlan::spread_with_gradient`]), where
//! differentiating the sums term by term would take `d` more transforms. With `u(x) =
//! Σ_k f_k e^{s·i k·x}` a type 2's interpolant:
//!
//! * type 1, `y_k = Σ_j c_j e^{s·i k·x_j}`: with `h` the adjoint's interpolant of `g` (sign
//!   `−s`), `∂L/∂c_j = h(x_j)` and `∂L/∂x_jd = Re(c_j·conj(∂_d h(x_j)))` — one adjoint with
//!   the gradient gives both; forward mode is one type 1 of `(δc_j, c_j·δx_j)` spread with
//!   the kernel's derivative;
//! * type 2, `y_j = u(x_j)`: `∂L/∂x_jd = Re(conj(g_j)·∂_d u(x_j))` (one type 2 with the
//!   gradient) and `∂L/∂f = Aᴴg` (one adjoint); forward mode is `∇u(x_j)·δx_j` plus the type
//!   2 of `δf`.
//!
//! Type 3, `y_k = Σ_j c_j e^{s·i s_k·x_j}`, has no grid shared by both point sets to
//! differentiate on, so its derivatives are transforms of weighted inputs:
//! `∂L/∂x_jd = Re(s·i·c_j·conj(Aᴴ(g∘s_d)_j))` and `∂L/∂s_kd = Re(conj(g_k)·s·i·A(c∘x_d)_k)`,
//! `2d + 1` transforms in all, batched over the stack.

pub mod host;
pub mod steps;

use crate::backend::{BackendError, NufftPlan};
use crate::error::NudtError;
use crate::float::Float;
use crate::planner::stages::Pass;
use crate::uniform::ModeOrder;
use host::HostArrays;
use nudt_gen::TransformType;
use num_complex::Complex;
use steps::{Given, Setting};

/// Which cotangents [`vjp`] computes (the others are left empty).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Wanted {
    /// The input's: strengths (types 1, 3) or modes (type 2).
    pub input: bool,
    /// The points' (types 1, 2) or the sources' (type 3).
    pub points: bool,
    /// Type 3: the target frequencies'.
    pub targets: bool,
}

impl Wanted {
    /// Every cotangent the plan's type has.
    pub const ALL: Wanted = Wanted {
        input: true,
        points: true,
        targets: true,
    };
}

/// The cotangents of a transform's input and points: what [`vjp`] returns.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Cotangents<T> {
    /// Shaped as the input (`ntransf` stacked); empty where not wanted.
    pub input: Vec<Complex<T>>,
    /// One array per dimension, one value per point (type 3: per source).
    pub points: Vec<Vec<T>>,
    /// Type 3: one array per dimension, one value per target frequency.
    pub targets: Vec<Vec<T>>,
}

/// A change of a transform's input and points, for [`jvp`]: `None` for what does not change.
#[derive(Clone, Copy, Debug)]
pub struct Tangents<'a, T> {
    pub input: Option<&'a [Complex<T>]>,
    /// One array per dimension (type 3: the sources').
    pub points: Option<&'a [&'a [T]]>,
    /// Type 3: the target frequencies', one array per dimension.
    pub targets: Option<&'a [&'a [T]]>,
}

/// Type 3's point sets, which its derivatives weight inputs and outputs by (the plan holds
/// them only rescaled onto its grids). The same arrays `set_points_type3` was given; with a
/// set per transform, per dimension the concatenation of the transforms' arrays.
#[derive(Clone, Copy, Debug)]
pub struct Type3Points<'a, T> {
    pub sources: &'a [&'a [T]],
    pub targets: &'a [&'a [T]],
}

fn i<T: Float>() -> Complex<T> {
    Complex::new(T::zero(), T::one())
}

/// The sign of the exponent of the transform `plan` runs: its own, or the adjoint's.
fn direction_sign<T: Float, P: NufftPlan<T> + ?Sized>(plan: &P, adjoint: bool) -> i32 {
    let s = plan.recipe().isign;
    if adjoint {
        -s
    } else {
        s
    }
}

/// The mode numbers along `axis` of the modes of one transform (row-major, the first
/// dimension slowest), in `order`.
fn mode_numbers(modes: &[usize], order: ModeOrder, axis: usize) -> Vec<f64> {
    let inner: usize = modes[axis + 1..].iter().product();
    let total: usize = modes.iter().product();
    (0..total)
        .map(|idx| order.mode((idx / inner) % modes[axis], modes[axis]) as f64)
        .collect()
}

/// The number of points per transform of a `q`-values-a-point stack of `len` values, or the
/// typed error of a length that is no such stack.
fn per_point(len: usize, q: usize, what: &str) -> Result<usize, NudtError> {
    match len % q {
        0 => Ok(len / q),
        _ => Err(NudtError::Length {
            what: format!("{what} ({q} values a point)"),
            expected: len.next_multiple_of(q),
            got: len,
        }),
    }
}

/// Whether a gradient pass of a type `ty` plan in this direction interpolates (a type 2's
/// forward, a type 1's adjoint) rather than spreads.
pub(crate) fn interpolates(ty: TransformType, adjoint: bool) -> bool {
    (ty == TransformType::Type2) != adjoint
}

/// Checks that a type 1 or 2 `plan` has a gradient pass in this direction: interpolation on
/// a type 2's forward or a type 1's adjoint, spreading on the other two. Every backend's
/// gradient passes check through here (`entry::plan_entry_points`).
pub(crate) fn check_direction(
    ty: TransformType,
    adjoint: bool,
    interpolates: bool,
) -> Result<(), NudtError> {
    let spreads = (ty == TransformType::Type1) != adjoint;
    match ty {
        TransformType::Type3 => Err(NudtError::NoGradient {
            why: "type 3 plans have no gradient pass; use gradient::vjp or gradient::jvp",
        }),
        _ if spreads == interpolates => Err(NudtError::NoGradient {
            why: match interpolates {
                true => "interpolation with the gradient runs a type 2 or a type 1's adjoint",
                false => "spreading with the gradient runs a type 1 or a type 2's adjoint",
            },
        }),
        _ => Ok(()),
    }
}

/// [`NufftPlan::interp_with_gradient`] by `d + 1` ordinary transforms (the interpolant of
/// `i·s·k_d·f` is `∂_d u`): the way a library without derivative kernels is differentiated,
/// which `nudt bench --gradients` times against every backend's one pass and the tests hold
/// that pass to.
pub fn interp_by_transforms<T: Float, P: NufftPlan<T> + ?Sized>(
    plan: &mut P,
    modes: &[Complex<T>],
    out: &mut [Complex<T>],
    adjoint: bool,
) -> Result<(), BackendError> {
    check_direction(plan.transform_type(), adjoint, true)?;
    let q = plan.dim() + 1;
    let m = per_point(out.len(), q, "values with the gradient")?;
    let (recipe, order) = (plan.recipe(), plan.mode_order());
    let factor = i::<T>() * T::of(f64::from(direction_sign(plan, adjoint)));
    let mut vals = vec![Complex::default(); m];
    for slot in 0..q {
        let input = match slot {
            0 => std::borrow::Cow::Borrowed(modes),
            s => {
                let k = mode_numbers(&recipe.modes, order, s - 1);
                let scaled = modes
                    .chunks(k.len().max(1))
                    .flat_map(|f| f.iter().zip(&k).map(|(&v, &k)| v * factor * T::of(k)));
                std::borrow::Cow::Owned(scaled.collect())
            }
        };
        host::run_pass(plan, Pass::transform(adjoint), &input, &mut vals)?;
        for (o, v) in out.chunks_mut(q).zip(&vals) {
            o[slot] = *v;
        }
    }
    Ok(())
}

/// [`NufftPlan::spread_with_gradient`] by `d + 1` ordinary transforms, as
/// [`interp_by_transforms`].
pub fn spread_by_transforms<T: Float, P: NufftPlan<T> + ?Sized>(
    plan: &mut P,
    vu: &[Complex<T>],
    modes: &mut [Complex<T>],
    adjoint: bool,
) -> Result<(), BackendError> {
    check_direction(plan.transform_type(), adjoint, false)?;
    let q = plan.dim() + 1;
    per_point(vu.len(), q, "values and derivative weights")?;
    let (recipe, order) = (plan.recipe(), plan.mode_order());
    let factor = i::<T>() * T::of(f64::from(direction_sign(plan, adjoint)));
    let slot = |s: usize| -> Vec<Complex<T>> { vu.iter().skip(s).step_by(q).copied().collect() };
    host::run_pass(plan, Pass::transform(adjoint), &slot(0), modes)?;
    let mut part = vec![Complex::default(); modes.len()];
    for axis in 0..q - 1 {
        host::run_pass(plan, Pass::transform(adjoint), &slot(axis + 1), &mut part)?;
        let k = mode_numbers(&recipe.modes, order, axis);
        for (f, p) in modes
            .chunks_mut(k.len().max(1))
            .zip(part.chunks(k.len().max(1)))
        {
            for ((f, &p), &k) in f.iter_mut().zip(p).zip(&k) {
                *f = *f + p * factor * T::of(k);
            }
        }
    }
    Ok(())
}

/// How `plan` is set, for the steps of a derivative: type 3 with its numbers of sources
/// and targets (`counts`).
pub(crate) fn setting<T: Float, P: NufftPlan<T> + ?Sized>(
    plan: &P,
    counts: Option<(usize, usize)>,
) -> Setting {
    let recipe = plan.recipe();
    Setting::new(
        (plan.transform_type(), plan.dim(), recipe.isign),
        recipe.ntransf,
        plan.points_per_transform(),
        counts,
    )
}

/// The numbers of sources and targets of type 3 `points` (the first dimension's lengths).
fn counts<T>(points: Option<Type3Points<'_, T>>) -> Option<(usize, usize)> {
    let count = |a: &[&[T]]| a.first().map_or(0, |a| a.len());
    points.map(|p| (count(p.sources), count(p.targets)))
}

/// The host arrays of a derivative at `input` with seed `seed` into `result`.
fn arrays<'a, T: Copy>(
    input: &'a [Complex<T>],
    seed: &'a [Complex<T>],
    result: &'a mut [Complex<T>],
    points: Option<Type3Points<'a, T>>,
) -> HostArrays<'a, T> {
    HostArrays {
        input,
        seed,
        result,
        point_tangents: None,
        target_tangents: None,
        sources: points.map(|p| p.sources),
        targets: points.map(|p| p.targets),
        point_cotangents: Vec::new(),
        target_cotangents: Vec::new(),
    }
}

/// Reverse mode: the cotangents of the input and the points of `plan`'s transform at input
/// `input` (its points those set), given the cotangent `cotangent` of its output. Type 3
/// needs its `points`; types 1 and 2 ignore them.
pub fn vjp<T: Float, P: NufftPlan<T> + ?Sized>(
    plan: &mut P,
    input: &[Complex<T>],
    cotangent: &[Complex<T>],
    points: Option<Type3Points<'_, T>>,
    wanted: Wanted,
) -> Result<Cotangents<T>, BackendError> {
    let s = setting(plan, counts(points));
    let steps = steps::vjp(&s, (input.len(), cotangent.len()), wanted)?;
    let mut result = crate::float::zeroed(steps.result);
    let mut a = arrays(input, cotangent, &mut result, points);
    plan.run_gradient(&steps, &mut a)?;
    let (points, targets) = (a.point_cotangents, a.target_cotangents);
    Ok(Cotangents {
        input: result,
        points,
        targets,
    })
}

/// Forward mode: the change of `plan`'s output at input `input` (its points those set) for
/// the changes `tangents` of its input and points, into `output`. Type 3 needs its `points`.
pub fn jvp<T: Float, P: NufftPlan<T> + ?Sized>(
    plan: &mut P,
    input: &[Complex<T>],
    tangents: Tangents<'_, T>,
    points: Option<Type3Points<'_, T>>,
    output: &mut [Complex<T>],
) -> Result<(), BackendError> {
    let s = setting(plan, counts(points));
    let given = Given {
        input: tangents.input.is_some(),
        points: tangents.points.is_some(),
        targets: tangents.targets.is_some(),
    };
    if given.targets && s.ty != TransformType::Type3 {
        return Err(NudtError::NoGradient {
            why: "only a type 3 plan has target frequencies to take tangents of",
        }
        .into());
    }
    let steps = steps::jvp(&s, (input.len(), output.len()), given)?;
    let mut a = arrays(input, tangents.input.unwrap_or(&[]), output, points);
    a.point_tangents = tangents.points;
    a.target_tangents = tangents.targets;
    plan.run_gradient(&steps, &mut a)
}
