//! Derivatives of a transform with respect to its input and its points, written once over
//! the plan interface ([`NufftPlan`]) for every backend: reverse mode ([`vjp`], the
//! vector–Jacobian product a backward pass needs) and forward mode ([`jvp`]).
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

use crate::backend::{BackendError, NufftPlan};
use crate::error::NudtError;
use crate::float::Float;
use crate::uniform::ModeOrder;
use nudt_gen::TransformType;
use num_complex::Complex;

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

/// How many times a stack's values run over one point set: `ntransf` where the transforms
/// share their points (the points' cotangents are then sums over the stack), 1 where each
/// has its own (the stack's values and the points are then both the concatenation of the
/// sets', one cotangent a point). The rules below index points by value modulo the set's
/// length, which covers both.
fn copies<T: Float, P: NufftPlan<T> + ?Sized>(plan: &P) -> usize {
    match plan.points_per_transform() {
        true => 1,
        false => plan.recipe().ntransf,
    }
}

fn run<T: Float, P: NufftPlan<T> + ?Sized>(
    plan: &mut P,
    input: &[Complex<T>],
    output: &mut [Complex<T>],
    adjoint: bool,
) -> Result<(), BackendError> {
    match adjoint {
        true => plan.execute_adjoint(input, output),
        false => plan.execute(input, output),
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
        run(plan, &input, &mut vals, adjoint)?;
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
    run(plan, &slot(0), modes, adjoint)?;
    let mut part = vec![Complex::default(); modes.len()];
    for axis in 0..q - 1 {
        run(plan, &slot(axis + 1), &mut part, adjoint)?;
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

/// The points a type 3 derivative needs, checked, with the numbers of sources and targets,
/// or the typed error of their absence.
fn type3_points<'a, T>(
    points: Option<Type3Points<'a, T>>,
    dim: usize,
) -> Result<(Type3Points<'a, T>, usize, usize), NudtError> {
    let p = points.ok_or(NudtError::NoGradient {
        why: "a type 3 derivative needs the sources and targets (gradient::Type3Points)",
    })?;
    let count = |a: &[&[T]]| a.first().map_or(0, |a| a.len());
    let (m, k) = (count(p.sources), count(p.targets));
    check_points("sources", p.sources, dim, m)?;
    check_points("targets", p.targets, dim, k)?;
    Ok((p, m, k))
}

/// `v · w_j` for every transform of a stack of `v`, `w` one weight per point.
fn weighted<T: Float>(v: &[Complex<T>], w: &[T]) -> Vec<Complex<T>> {
    v.chunks(w.len().max(1))
        .flat_map(|v| v.iter().zip(w).map(|(&v, &w)| v * w))
        .collect()
}

/// Checks a point array's length against the plan's count.
fn check_points<T>(what: &str, arrays: &[&[T]], dim: usize, len: usize) -> Result<(), NudtError> {
    if arrays.len() != dim {
        return Err(NudtError::Coordinates {
            expected: dim,
            got: arrays.len(),
        });
    }
    match arrays.iter().find(|a| a.len() != len) {
        Some(a) => Err(NudtError::Length {
            what: what.into(),
            expected: len,
            got: a.len(),
        }),
        None => Ok(()),
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
    let dim = plan.dim();
    let q = dim + 1;
    let mut out = Cotangents::default();
    match plan.transform_type() {
        TransformType::Type1 => {
            let mut h = vec![Complex::default(); input.len() * q];
            plan.interp_with_gradient(cotangent, &mut h, true)?;
            if wanted.input {
                out.input = h.iter().step_by(q).copied().collect();
            }
            if wanted.points {
                let m = per_point(h.len(), q, "strengths")?;
                out.points = sum_over_stack(dim, m, copies(plan), |j, d| {
                    let c = input[j];
                    let dh = h[q * j + 1 + d];
                    (c * dh.conj()).re
                });
            }
        }
        TransformType::Type2 => {
            if wanted.input {
                out.input = vec![Complex::default(); input.len()];
                plan.execute_adjoint(cotangent, &mut out.input)?;
            }
            if wanted.points {
                let mut u = vec![Complex::default(); cotangent.len() * q];
                plan.interp_with_gradient(input, &mut u, false)?;
                out.points = sum_over_stack(dim, cotangent.len(), copies(plan), |j, d| {
                    (cotangent[j].conj() * u[q * j + 1 + d]).re
                });
            }
        }
        TransformType::Type3 => {
            let (p, m, k) = type3_points(points, dim)?;
            let s = T::of(f64::from(plan.recipe().isign));
            if wanted.input {
                out.input = vec![Complex::default(); input.len()];
                plan.execute_adjoint(cotangent, &mut out.input)?;
            }
            let mut tmp_in = vec![Complex::default(); input.len()];
            let mut tmp_out = vec![Complex::default(); cotangent.len()];
            if wanted.points {
                out.points = Vec::with_capacity(dim);
                for d in 0..dim {
                    plan.execute_adjoint(&weighted(cotangent, p.targets[d]), &mut tmp_in)?;
                    let per = tmp_in
                        .iter()
                        .zip(input)
                        .map(|(&a, &c)| (i::<T>() * s * c * a.conj()).re);
                    out.points.push(fold(per, m));
                }
            }
            if wanted.targets {
                out.targets = Vec::with_capacity(dim);
                for d in 0..dim {
                    plan.execute(&weighted(input, p.sources[d]), &mut tmp_out)?;
                    let per = tmp_out
                        .iter()
                        .zip(cotangent)
                        .map(|(&a, &g)| (g.conj() * i::<T>() * s * a).re);
                    out.targets.push(fold(per, k));
                }
            }
        }
    }
    Ok(out)
}

/// Per dimension, `Σ_b f(b·m + j, d)` for each of `m` points over a stack of `ntransf`.
fn sum_over_stack<T: Float>(
    dim: usize,
    m: usize,
    ntransf: usize,
    f: impl Fn(usize, usize) -> T,
) -> Vec<Vec<T>> {
    let m = m / ntransf.max(1);
    (0..dim)
        .map(|d| {
            (0..m)
                .map(|j| (0..ntransf).fold(T::zero(), |acc, b| acc + f(b * m + j, d)))
                .collect()
        })
        .collect()
}

/// Sums a stack of values, `m` a transform, onto `m`.
fn fold<T: Float>(values: impl Iterator<Item = T>, m: usize) -> Vec<T> {
    let mut out = vec![T::zero(); m];
    for (n, v) in values.enumerate() {
        out[n % m.max(1)] += v;
    }
    out
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
    let dim = plan.dim();
    let q = dim + 1;
    let ntransf = copies(plan);
    if let Some(d) = tangents.input {
        if d.len() != input.len() {
            return Err(NudtError::Length {
                what: "input tangent".into(),
                expected: input.len(),
                got: d.len(),
            }
            .into());
        }
    }
    match plan.transform_type() {
        TransformType::Type1 => {
            let m = input.len() / ntransf.max(1);
            if let Some(dx) = tangents.points {
                check_points("point tangents", dx, dim, m)?;
            }
            let mut vu = vec![Complex::default(); input.len() * q];
            for (n, o) in vu.chunks_mut(q).enumerate() {
                o[0] = tangents.input.map_or_else(Complex::default, |d| d[n]);
                if let Some(dx) = tangents.points {
                    for d in 0..dim {
                        o[1 + d] = input[n] * dx[d][n % m.max(1)];
                    }
                }
            }
            plan.spread_with_gradient(&vu, output, false)?;
        }
        TransformType::Type2 => {
            match tangents.input {
                Some(df) => plan.execute(df, output)?,
                None => output.iter_mut().for_each(|v| *v = Complex::default()),
            }
            if let Some(dx) = tangents.points {
                let m = output.len() / ntransf.max(1);
                check_points("point tangents", dx, dim, m)?;
                let mut u = vec![Complex::default(); output.len() * q];
                plan.interp_with_gradient(input, &mut u, false)?;
                for (n, o) in output.iter_mut().enumerate() {
                    for d in 0..dim {
                        *o = *o + u[q * n + 1 + d] * dx[d][n % m.max(1)];
                    }
                }
            }
        }
        TransformType::Type3 => {
            let (p, m, k) = type3_points(points, dim)?;
            let s = T::of(f64::from(plan.recipe().isign));
            match tangents.input {
                Some(dc) => plan.execute(dc, output)?,
                None => output.iter_mut().for_each(|v| *v = Complex::default()),
            }
            let mut tmp = vec![Complex::default(); output.len()];
            // i·s·Σ_d s_kd·A(c∘δx_d)_k, then i·s·Σ_d δs_kd·A(c∘x_d)_k.
            let terms = tangents
                .points
                .map(|dx| check_points("source tangents", dx, dim, m).map(|_| (dx, p.targets)))
                .transpose()?
                .into_iter()
                .chain(
                    tangents
                        .targets
                        .map(|ds| {
                            check_points("target tangents", ds, dim, k).map(|_| (p.sources, ds))
                        })
                        .transpose()?,
                );
            for (weights, factors) in terms {
                for d in 0..dim {
                    plan.execute(&weighted(input, weights[d]), &mut tmp)?;
                    for (n, (o, t)) in output.iter_mut().zip(&tmp).enumerate() {
                        *o = *o + *t * i::<T>() * s * factors[d][n % k.max(1)];
                    }
                }
            }
        }
    }
    Ok(())
}
