//! One-call transforms for the common case: plan, set points, execute, drop.

use crate::error::Result;
use crate::float::Float;
use crate::plan::{Options, Plan};
use nudt_gen::TransformType;
use num_complex::Complex;

/// Type 1: modes `f` (row-major, centred) from strengths `c` at points `coords`.
pub fn type1<T: Float>(
    coords: &[&[T]],
    c: &[Complex<T>],
    modes: &[usize],
    isign: i32,
    tol: f64,
) -> Result<Vec<Complex<T>>> {
    let out = modes.iter().product();
    uniform(TransformType::Type1, coords, c, modes, out, isign, tol)
}

/// Type 2: values at `coords` of the Fourier series with coefficients `f` (row-major, centred).
pub fn type2<T: Float>(
    coords: &[&[T]],
    f: &[Complex<T>],
    modes: &[usize],
    isign: i32,
    tol: f64,
) -> Result<Vec<Complex<T>>> {
    let out = coords.first().map_or(0, |x| x.len());
    uniform(TransformType::Type2, coords, f, modes, out, isign, tol)
}

/// A type 1 or 2 of one transform with default options, its output `out` values long.
fn uniform<T: Float>(
    ty: TransformType,
    coords: &[&[T]],
    input: &[Complex<T>],
    modes: &[usize],
    out: usize,
    isign: i32,
    tol: f64,
) -> Result<Vec<Complex<T>>> {
    let mut plan = Plan::new(ty, modes, isign, 1, tol, Options::default())?;
    plan.set_points(coords)?;
    let mut output = vec![Complex::default(); out];
    plan.execute(input, &mut output)?;
    Ok(output)
}

/// Type 3: values at frequencies `targets` of the sum over `sources` with strengths `c`.
pub fn type3<T: Float>(
    sources: &[&[T]],
    c: &[Complex<T>],
    targets: &[&[T]],
    isign: i32,
    tol: f64,
) -> Result<Vec<Complex<T>>> {
    let mut plan = Plan::new_type3(sources.len(), isign, 1, tol, Options::default())?;
    plan.set_points_type3(sources, targets)?;
    let mut f = vec![Complex::default(); targets.first().map_or(0, |s| s.len())];
    plan.execute(c, &mut f)?;
    Ok(f)
}
