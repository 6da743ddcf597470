//! Shared helpers for the cross-crate tests: a small deterministic RNG and problem builders.
#![allow(dead_code)]

use nudt::backend::{BackendError, NufftPlan};
use nudt::direct;
use nudt::num_complex::{Complex, Complex64};
use nudt::{Float, ModeOrder, Options, Plan, TransformType};

/// xorshift64*: deterministic, dependency-free.
pub struct Rng(u64);

impl Rng {
    pub fn new(seed: u64) -> Self {
        Rng(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1)
    }
    /// Uniform in [0, 1).
    pub fn uniform(&mut self) -> f64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        (self.0.wrapping_mul(0x2545_F491_4F6C_DD1D) >> 11) as f64 / (1u64 << 53) as f64
    }
    pub fn range(&mut self, lo: f64, hi: f64) -> f64 {
        lo + (hi - lo) * self.uniform()
    }
    pub fn complex(&mut self) -> Complex64 {
        Complex64::new(self.range(-1.0, 1.0), self.range(-1.0, 1.0))
    }
    pub fn coords(&mut self, dim: usize, m: usize, lo: f64, hi: f64) -> Vec<Vec<f64>> {
        (0..dim)
            .map(|_| (0..m).map(|_| self.range(lo, hi)).collect())
            .collect()
    }
    pub fn complexes(&mut self, n: usize) -> Vec<Complex64> {
        (0..n).map(|_| self.complex()).collect()
    }
}

pub fn refs<T>(v: &[Vec<T>]) -> Vec<&[T]> {
    v.iter().map(|x| &x[..]).collect()
}

pub fn cast<T: Float>(v: &[Vec<f64>]) -> Vec<Vec<T>> {
    v.iter()
        .map(|x| x.iter().map(|&a| T::of(a)).collect())
        .collect()
}

pub fn cast_c<T: Float>(v: &[Complex64]) -> Vec<Complex<T>> {
    v.iter()
        .map(|a| Complex::new(T::of(a.re), T::of(a.im)))
        .collect()
}

pub fn widen<T: Float>(v: &[Complex<T>]) -> Vec<Complex64> {
    v.iter()
        .map(|a| Complex64::new(a.re.wide(), a.im.wide()))
        .collect()
}

/// How many outputs a type 1 (one per mode) or type 2 transform (one per point of `x`) has.
pub fn output_len(ty: TransformType, x: &[Vec<f64>], modes: &[usize]) -> usize {
    if ty == TransformType::Type1 {
        modes.iter().product()
    } else {
        x[0].len()
    }
}

/// A type 1 (`input` the strengths, outputs on all modes) or type 2 transform (`input` the
/// coefficients, outputs at all points `x`) on `plan`, a plan of any backend made for `modes`;
/// the outputs widened.
pub fn run_type12<T: Float>(
    plan: &mut dyn NufftPlan<T>,
    ty: TransformType,
    x: &[Vec<f64>],
    input: &[Complex64],
    modes: &[usize],
) -> Result<Vec<Complex64>, BackendError> {
    let xt = cast::<T>(x);
    plan.set_points(&refs(&xt))?;
    let mut out = vec![Complex::<T>::default(); output_len(ty, x, modes)];
    plan.execute(&cast_c::<T>(input), &mut out)?;
    Ok(widen(&out))
}

/// A type 3 transform of strengths `c` at sources `x` to targets `s` on `plan` (any
/// backend's); the outputs widened.
pub fn run_type3<T: Float>(
    plan: &mut dyn NufftPlan<T>,
    x: &[Vec<f64>],
    c: &[Complex64],
    s: &[Vec<f64>],
) -> Result<Vec<Complex64>, BackendError> {
    let (xt, st) = (cast::<T>(x), cast::<T>(s));
    plan.set_points_type3(&refs(&xt), &refs(&st))?;
    let mut f = vec![Complex::<T>::default(); s[0].len()];
    plan.execute(&cast_c::<T>(c), &mut f)?;
    Ok(widen(&f))
}

/// Relative l2 error against the direct sum of a type 1 transform (`input` the strengths,
/// outputs on all modes) or a type 2 (`input` the coefficients, outputs at all points).
pub fn type12_error<T: Float>(
    ty: TransformType,
    x: &[Vec<f64>],
    input: &[Complex64],
    modes: &[usize],
    isign: i32,
    tol: f64,
    opts: Options,
) -> f64 {
    let mut plan = Plan::<T>::new(ty, modes, isign, 1, tol, opts.clone()).unwrap();
    let out = run_type12(&mut plan, ty, x, input, modes).unwrap();
    let which: Vec<usize> = (0..out.len()).collect();
    let direct_sum = if ty == TransformType::Type1 {
        direct::type1
    } else {
        direct::type2
    };
    let exact = direct_sum(&refs(x), input, modes, opts.mode_order, isign, &which);
    direct::rel_error(&out, &exact)
}

pub fn type3_error<T: Float>(
    x: &[Vec<f64>],
    c: &[Complex64],
    s: &[Vec<f64>],
    isign: i32,
    tol: f64,
    opts: Options,
) -> f64 {
    let mut plan = Plan::<T>::new_type3(x.len(), isign, 1, tol, opts).unwrap();
    let f = run_type3(&mut plan, x, c, s).unwrap();
    let k = s[0].len();
    let which: Vec<usize> = (0..k).collect();
    let exact = direct::type3(&refs(x), c, &refs(s), isign, &which);
    direct::rel_error(&f, &exact)
}

pub fn default_order() -> ModeOrder {
    ModeOrder::Cmcl
}
