//! Derivatives of every type in 1–3 dimensions (`nudt_runtime::gradient`), on every backend
//! available, against central finite differences of the direct sum in f64: the cotangents of
//! the input and the points in reverse mode, and the change of the output in forward mode,
//! within 10× the tolerance (relative l2). Stacks of transforms sum their points'
//! cotangents; with a point set per transform (every backend) each point has its own. Bad
//! requests are typed errors.
//!
//! Every backend differentiates types 1 and 2 in one pass with the kernel's derivative (the
//! CPU's tile kernels, the GPUs' `nudt_interp_grad_*` and `nudt_spread_grad_*`): checked here
//! against the same sums, against `d + 1` transforms on the same plan (each GPU method), and
//! for the spreading pass being the interpolation pass's adjoint.

use crate::common;
use common::{backends, Lcg};
use nudt_runtime::backend::{Backend, BackendError, BackendFloat, BackendOptions, NufftPlan};
use nudt_runtime::direct::{self, rel_error};
use nudt_runtime::gradient::{self, jvp, vjp, Tangents, Type3Points, Wanted};
use nudt_runtime::{ModeOrder, NudtError, TransformType};
use num_complex::{Complex, Complex64};

/// A problem: points (type 3: sources and targets), input, and the derivative directions.
struct Case {
    ty: TransformType,
    modes: Vec<usize>,
    ntransf: usize,
    x: Vec<Vec<f64>>,
    s: Vec<Vec<f64>>,
    input: Vec<Complex64>,
    /// With a point set per transform, each transform's numbers of points (type 3: sources)
    /// and targets; `x` and `s` are then the concatenations of the sets'.
    sets: Option<Vec<(usize, usize)>>,
}

/// One transform's points and targets (one slice per dimension each) and input.
type Transform<'a, U> = (Vec<&'a [U]>, Vec<&'a [U]>, &'a [Complex64]);

fn complex(r: &mut Lcg, n: usize) -> Vec<Complex64> {
    (0..n).map(|_| Complex64::new(r.next(), r.next())).collect()
}

fn reals(r: &mut Lcg, n: usize, scale: f64) -> Vec<f64> {
    (0..n).map(|_| scale * r.next()).collect()
}

impl Case {
    fn new(ty: TransformType, modes: &[usize], ntransf: usize, seed: u64) -> Self {
        let mut r = Lcg(seed);
        let dim = modes.len();
        let m = 30;
        let x = (0..dim).map(|_| reals(&mut r, m, 3.0)).collect();
        let k = 25;
        let s = match ty {
            TransformType::Type3 => (0..dim).map(|_| reals(&mut r, k, 9.0)).collect(),
            _ => Vec::new(),
        };
        let n_in = match ty {
            TransformType::Type2 => modes.iter().product(),
            _ => m,
        };
        let input = complex(&mut r, n_in * ntransf);
        Case {
            ty,
            modes: modes.to_vec(),
            ntransf,
            x,
            s,
            input,
            sets: None,
        }
    }

    /// A point set per transform, `counts[b]` points (type 3: sources) and targets in
    /// transform b.
    fn per_transform(
        ty: TransformType,
        modes: &[usize],
        counts: &[(usize, usize)],
        seed: u64,
    ) -> Self {
        let mut r = Lcg(seed);
        let (m, k): (usize, usize) = counts.iter().fold((0, 0), |(a, b), c| (a + c.0, b + c.1));
        let dim = modes.len();
        let x = (0..dim).map(|_| reals(&mut r, m, 3.0)).collect();
        let s = match ty {
            TransformType::Type3 => (0..dim).map(|_| reals(&mut r, k, 9.0)).collect(),
            _ => Vec::new(),
        };
        let n_in = match ty {
            TransformType::Type2 => modes.iter().product::<usize>() * counts.len(),
            _ => m,
        };
        Case {
            ty,
            modes: modes.to_vec(),
            ntransf: counts.len(),
            x,
            s,
            input: complex(&mut r, n_in),
            sets: Some(counts.to_vec()),
        }
    }

    /// Each transform's points, targets and input: slices of `x`, `s` and `input`.
    fn split<'a, U>(
        &self,
        x: &'a [Vec<U>],
        s: &'a [Vec<U>],
        input: &'a [Complex64],
    ) -> Vec<Transform<'a, U>> {
        let n: usize = self.modes.iter().product();
        let counts = match &self.sets {
            Some(c) => c.clone(),
            None => vec![(x[0].len(), s.first().map_or(0, Vec::len)); self.ntransf],
        };
        let shared = self.sets.is_none();
        let (mut at_x, mut at_s, mut at_in) = (0, 0, 0);
        counts
            .iter()
            .map(|&(m, k)| {
                let len_in = if self.ty == TransformType::Type2 {
                    n
                } else {
                    m
                };
                let part = |v: &'a [Vec<U>], at: usize, len: usize| -> Vec<&'a [U]> {
                    v.iter().map(|a| &a[at..at + len]).collect()
                };
                let set = (
                    part(x, at_x, m),
                    part(s, at_s, k),
                    &input[at_in..at_in + len_in],
                );
                if !shared {
                    (at_x, at_s) = (at_x + m, at_s + k);
                }
                at_in += len_in;
                set
            })
            .collect()
    }

    fn dim(&self) -> usize {
        self.x.len()
    }

    /// The stacked output, by direct sums, at points `x`, targets `s` and input `input`.
    fn direct(&self, x: &[Vec<f64>], s: &[Vec<f64>], input: &[Complex64]) -> Vec<Complex64> {
        let isign = sign(self.ty);
        let n: usize = self.modes.iter().product();
        let all = |len: usize| (0..len).collect::<Vec<_>>();
        self.split(x, s, input)
            .into_iter()
            .flat_map(|(xr, sr, inp)| match self.ty {
                TransformType::Type1 => {
                    direct::type1(&xr, inp, &self.modes, ModeOrder::Cmcl, isign, &all(n))
                }
                TransformType::Type2 => {
                    let m = xr[0].len();
                    direct::type2(&xr, inp, &self.modes, ModeOrder::Cmcl, isign, &all(m))
                }
                TransformType::Type3 => direct::type3(&xr, inp, &sr, isign, &all(sr[0].len())),
            })
            .collect()
    }

    /// `(out(+h) − out(−h)) / 2h` along the direction `(dx, ds, dinput)`.
    fn difference(&self, dx: &[Vec<f64>], ds: &[Vec<f64>], dinput: &[Complex64]) -> Vec<Complex64> {
        let h = 1e-6;
        let at = |t: f64| {
            let shift = |a: &[Vec<f64>], d: &[Vec<f64>]| -> Vec<Vec<f64>> {
                a.iter()
                    .zip(d)
                    .map(|(a, d)| a.iter().zip(d).map(|(a, d)| a + t * d).collect())
                    .collect()
            };
            let input: Vec<Complex64> = self
                .input
                .iter()
                .zip(dinput)
                .map(|(c, d)| c + t * d)
                .collect();
            let s = if self.s.is_empty() {
                Vec::new()
            } else {
                shift(&self.s, ds)
            };
            self.direct(&shift(&self.x, dx), &s, &input)
        };
        let (hi, lo) = (at(h), at(-h));
        hi.iter()
            .zip(&lo)
            .map(|(a, b)| (a - b) / (2.0 * h))
            .collect()
    }

    fn plan<T: BackendFloat>(&self, backend: Backend, tol: f64) -> Box<dyn NufftPlan<T>> {
        self.plan_with(
            backend,
            tol,
            &BackendOptions::default().with_gradients(true),
        )
    }

    fn plan_with<T: BackendFloat>(
        &self,
        backend: Backend,
        tol: f64,
        opts: &BackendOptions,
    ) -> Box<dyn NufftPlan<T>> {
        let isign = sign(self.ty);
        let mut plan = match self.ty {
            TransformType::Type3 => {
                backend.plan_type3::<T>(self.dim(), isign, self.ntransf, tol, opts)
            }
            ty => backend.plan::<T>(ty, &self.modes, isign, self.ntransf, tol, opts),
        }
        .unwrap_or_else(|e| panic!("{backend}: {e}"));
        let (x, s) = (cast::<T>(&self.x), cast::<T>(&self.s));
        let xr: Vec<&[T]> = x.iter().map(|v| &v[..]).collect();
        let sr: Vec<&[T]> = s.iter().map(|v| &v[..]).collect();
        let sets = self.split(&x, &s, &self.input);
        let xs: Vec<&[&[T]]> = sets.iter().map(|set| &set.0[..]).collect();
        let ss: Vec<&[&[T]]> = sets.iter().map(|set| &set.1[..]).collect();
        match (self.ty, self.sets.is_some()) {
            (TransformType::Type3, false) => plan.set_points_type3(&xr, &sr),
            (TransformType::Type3, true) => plan.set_points_type3_per_transform(&xs, &ss),
            (_, false) => plan.set_points(&xr),
            (_, true) => plan.set_points_per_transform(&xs),
        }
        .unwrap_or_else(|e| panic!("{backend}: {e}"));
        plan
    }
}

fn sign(ty: TransformType) -> i32 {
    if ty == TransformType::Type2 {
        -1
    } else {
        1
    }
}

fn cast<T: BackendFloat>(v: &[Vec<f64>]) -> Vec<Vec<T>> {
    v.iter()
        .map(|a| a.iter().map(|&x| T::of(x)).collect())
        .collect()
}

fn to_t<T: BackendFloat>(v: &[Complex64]) -> Vec<Complex<T>> {
    v.iter()
        .map(|c| Complex::new(T::of(c.re), T::of(c.im)))
        .collect()
}

fn to_f64<T: BackendFloat>(v: &[Complex<T>]) -> Vec<Complex64> {
    v.iter()
        .map(|c| Complex64::new(c.re.wide(), c.im.wide()))
        .collect()
}

/// Relative l2 error of real arrays.
fn rel_real(a: &[Vec<f64>], b: &[Vec<f64>]) -> f64 {
    let num: f64 = a
        .iter()
        .flatten()
        .zip(b.iter().flatten())
        .map(|(x, y)| (x - y).powi(2))
        .sum();
    let den: f64 = b.iter().flatten().map(|y| y * y).sum();
    (num / den).sqrt()
}

/// Reverse mode at cotangent `g` against the difference quotients of `L = Re Σ conj(g)·y`:
/// `∂L/∂x_jd` one point coordinate at a time, `∂L/∂c` from the adjoint's definition.
fn check_vjp<T: BackendFloat>(backend: Backend, case: &Case, tol: f64, seed: u64) {
    let dim = case.dim();
    let mut plan = case.plan::<T>(backend, tol);
    let out_len = case.direct(&case.x, &case.s, &case.input).len();
    let g = complex(&mut Lcg(seed), out_len);
    let sources = cast::<T>(&case.x);
    let targets = cast::<T>(&case.s);
    let (sr, tr): (Vec<&[T]>, Vec<&[T]>) = (
        sources.iter().map(|v| &v[..]).collect(),
        targets.iter().map(|v| &v[..]).collect(),
    );
    let points = (case.ty == TransformType::Type3).then_some(Type3Points {
        sources: &sr,
        targets: &tr,
    });
    let got = vjp(
        &mut *plan,
        &to_t::<T>(&case.input),
        &to_t::<T>(&g),
        points,
        Wanted::ALL,
    )
    .unwrap_or_else(|e| panic!("{backend}: {e}"));
    let loss_dir = |dx: &[Vec<f64>], ds: &[Vec<f64>], dc: &[Complex64]| -> f64 {
        let dy = case.difference(dx, ds, dc);
        g.iter().zip(&dy).map(|(g, d)| (g.conj() * d).re).sum()
    };
    let zeros =
        |a: &[Vec<f64>]| -> Vec<Vec<f64>> { a.iter().map(|v| vec![0.0; v.len()]).collect() };
    let (zx, zs, zc) = (
        zeros(&case.x),
        zeros(&case.s),
        vec![Complex64::default(); case.input.len()],
    );
    let what = format!(
        "{backend} {:?} {}-D ×{} {}",
        case.ty,
        dim,
        case.ntransf,
        std::any::type_name::<T>()
    );
    // Points (type 3: sources), one coordinate at a time.
    let mut expected = zx.clone();
    for d in 0..dim {
        for j in 0..case.x[d].len() {
            let mut dx = zx.clone();
            dx[d][j] = 1.0;
            expected[d][j] = loss_dir(&dx, &zs, &zc);
        }
    }
    let points: Vec<Vec<f64>> = got
        .points
        .iter()
        .map(|v| v.iter().map(|x| x.wide()).collect())
        .collect();
    let err = rel_real(&points, &expected);
    assert!(
        err < 10.0 * tol,
        "{what}: point cotangents off by {err:e} (tol {tol:e})"
    );
    if case.ty == TransformType::Type3 {
        let mut expected = zs.clone();
        for d in 0..dim {
            for k in 0..case.s[d].len() {
                let mut ds = zs.clone();
                ds[d][k] = 1.0;
                expected[d][k] = loss_dir(&zx, &ds, &zc);
            }
        }
        let targets: Vec<Vec<f64>> = got
            .targets
            .iter()
            .map(|v| v.iter().map(|x| x.wide()).collect())
            .collect();
        let err = rel_real(&targets, &expected);
        assert!(err < 10.0 * tol, "{what}: target cotangents off by {err:e}");
    }
    // The input: ∂L/∂Re c + i·∂L/∂Im c, c one value at a time.
    let expected: Vec<Complex64> = (0..case.input.len())
        .map(|n| {
            let mut dc = zc.clone();
            dc[n] = Complex64::new(1.0, 0.0);
            let re = loss_dir(&zx, &zs, &dc);
            dc[n] = Complex64::new(0.0, 1.0);
            Complex64::new(re, loss_dir(&zx, &zs, &dc))
        })
        .collect();
    let err = rel_error(&to_f64(&got.input), &expected);
    assert!(err < 10.0 * tol, "{what}: input cotangent off by {err:e}");
}

/// Forward mode along a random direction of the input and every point set.
fn check_jvp<T: BackendFloat>(backend: Backend, case: &Case, tol: f64, seed: u64) {
    let mut r = Lcg(seed);
    let dim = case.dim();
    let mut plan = case.plan::<T>(backend, tol);
    let dx: Vec<Vec<f64>> = case.x.iter().map(|v| reals(&mut r, v.len(), 1.0)).collect();
    let ds: Vec<Vec<f64>> = case.s.iter().map(|v| reals(&mut r, v.len(), 1.0)).collect();
    let dc = complex(&mut r, case.input.len());
    let expected = case.difference(&dx, &ds, &dc);
    let (dxt, dst, sources, targets) = (
        cast::<T>(&dx),
        cast::<T>(&ds),
        cast::<T>(&case.x),
        cast::<T>(&case.s),
    );
    let dxr: Vec<&[T]> = dxt.iter().map(|v| &v[..]).collect();
    let dsr: Vec<&[T]> = dst.iter().map(|v| &v[..]).collect();
    let sr: Vec<&[T]> = sources.iter().map(|v| &v[..]).collect();
    let tr: Vec<&[T]> = targets.iter().map(|v| &v[..]).collect();
    let type3 = case.ty == TransformType::Type3;
    let tangents = Tangents {
        input: Some(&to_t::<T>(&dc)),
        points: Some(&dxr),
        targets: type3.then_some(&dsr[..]),
    };
    let points = type3.then_some(Type3Points {
        sources: &sr,
        targets: &tr,
    });
    let mut out = vec![Complex::default(); expected.len()];
    jvp(
        &mut *plan,
        &to_t::<T>(&case.input),
        tangents,
        points,
        &mut out,
    )
    .unwrap_or_else(|e| panic!("{backend}: {e}"));
    let err = rel_error(&to_f64(&out), &expected);
    assert!(
        err < 10.0 * tol,
        "{backend} {:?} {dim}-D ×{} {}: forward mode off by {err:e} (tol {tol:e})",
        case.ty,
        case.ntransf,
        std::any::type_name::<T>()
    );
}

const TYPES: [TransformType; 3] = [
    TransformType::Type1,
    TransformType::Type2,
    TransformType::Type3,
];
const MODES: [&[usize]; 3] = [&[14], &[10, 8], &[6, 5, 4]];

#[test]
fn reverse_and_forward_mode_match_the_direct_sums_in_f64() {
    for backend in backends() {
        for (t, ty) in TYPES.into_iter().enumerate() {
            for (d, modes) in MODES.into_iter().enumerate() {
                let seed = 100 + 10 * t as u64 + d as u64;
                let case = Case::new(ty, modes, 1, seed);
                check_vjp::<f64>(backend, &case, 1e-6, seed + 1);
                check_jvp::<f64>(backend, &case, 1e-6, seed + 2);
            }
        }
    }
}

#[test]
fn single_precision_and_stacks_of_transforms() {
    for backend in backends() {
        for ty in TYPES {
            let case = Case::new(ty, &[12, 9], 3, 7);
            check_vjp::<f32>(backend, &case, 1e-3, 8);
            check_jvp::<f32>(backend, &case, 1e-3, 9);
            check_vjp::<f64>(backend, &case, 1e-8, 10);
        }
    }
}

/// `Re Σ conj(a)·b`: the real inner product the adjoint identity is written in.
fn dot<T: BackendFloat>(a: &[Complex<T>], b: &[Complex<T>]) -> f64 {
    a.iter()
        .zip(b)
        .map(|(a, b)| a.re.wide() * b.re.wide() + a.im.wide() * b.im.wide())
        .sum()
}

fn norm<T: BackendFloat>(a: &[Complex<T>]) -> f64 {
    dot(a, a).sqrt()
}

/// One plan's gradient passes in both directions: each against `d + 1` transforms on the
/// same plan (within `agree`, relative l2), and the spreading pass against the interpolation
/// pass through the adjoint identity `⟨vu, I f⟩ = ⟨S vu, f⟩` (within `adjoint`, relative to
/// `|vu|·|I f|`), which holds to rounding only where the spreading kernels are the exact
/// transpose of the interpolation kernels (the derivative rows and their scale included).
fn check_one_pass<T: BackendFloat>(
    backend: Backend,
    case: &Case,
    opts: &BackendOptions,
    (tol, agree, adjoint): (f64, f64, f64),
    what: &str,
) {
    let mut plan = case.plan_with::<T>(backend, tol, opts);
    let mut r = Lcg(17);
    let dim = case.dim();
    // Values at the points over the stack: each transform's at the shared points, or the
    // concatenated sets'.
    let m = match case.sets {
        Some(_) => case.x[0].len(),
        None => case.x[0].len() * case.ntransf,
    };
    let n: usize = case.modes.iter().product::<usize>() * case.ntransf;
    let q = dim + 1;
    let f = to_t::<T>(&complex(&mut r, n));
    let vu = to_t::<T>(&complex(&mut r, q * m));
    // A type 2 interpolates forward, a type 1 in its adjoint; spreading the other way.
    let interp_adjoint = case.ty == TransformType::Type1;
    let (mut one, mut by) = (
        vec![Complex::<T>::default(); vu.len()],
        vec![Complex::<T>::default(); vu.len()],
    );
    plan.interp_with_gradient(&f, &mut one, interp_adjoint)
        .unwrap_or_else(|e| panic!("{what}: {e}"));
    gradient::interp_by_transforms(&mut *plan, &f, &mut by, interp_adjoint)
        .unwrap_or_else(|e| panic!("{what}: {e}"));
    let err = rel_error(&to_f64(&one), &to_f64(&by));
    assert!(
        err < agree,
        "{what}: interpolation with the gradient off by {err:e}"
    );
    let (mut spread, mut spread_by) = (
        vec![Complex::<T>::default(); n],
        vec![Complex::<T>::default(); n],
    );
    plan.spread_with_gradient(&vu, &mut spread, !interp_adjoint)
        .unwrap_or_else(|e| panic!("{what}: {e}"));
    gradient::spread_by_transforms(&mut *plan, &vu, &mut spread_by, !interp_adjoint)
        .unwrap_or_else(|e| panic!("{what}: {e}"));
    let err = rel_error(&to_f64(&spread), &to_f64(&spread_by));
    assert!(
        err < agree,
        "{what}: spreading with the gradient off by {err:e}"
    );
    let gap = (dot(&vu, &one) - dot(&spread, &f)).abs() / (norm(&vu) * norm(&one));
    assert!(gap < adjoint, "{what}: not each other's adjoint, {gap:e}");
}

/// The one-pass gradients against `d + 1` transforms and each other's adjoint, on every
/// backend: types 1 and 2 in 1–3 dimensions, a stack of three transforms run in batches of
/// two, and on the GPUs each method the plan may run (the planner's choice, GM-sort, SM, and
/// output-driven, whose plans' gradient passes take SM).
#[test]
fn one_pass_gradients_agree_with_transforms_and_are_adjoint() {
    use nudt_gen::gpu::GpuMethod::{GmSort, OutputDriven, Sm};
    use nudt_runtime::backend::Backend::Cpu;
    for backend in backends() {
        let methods: &[Option<_>] = match backend {
            Cpu => &[None],
            _ => &[None, Some(GmSort), Some(Sm), Some(OutputDriven)],
        };
        for (d, modes) in MODES.into_iter().enumerate() {
            for (t, ty) in [TransformType::Type1, TransformType::Type2]
                .into_iter()
                .enumerate()
            {
                let case = Case::new(ty, modes, 3, 40 + 10 * t as u64 + d as u64);
                for &method in methods {
                    let opts = BackendOptions::default()
                        .with_gradients(true)
                        .with_gpu_batch(2)
                        .with_gpu_methods(method, method);
                    let what = format!("{backend} {ty:?} {}-D {method:?}", d + 1);
                    check_one_pass::<f64>(backend, &case, &opts, (1e-6, 1e-5, 1e-12), &what);
                }
            }
        }
        let case = Case::new(TransformType::Type2, &[12, 9], 2, 41);
        let opts = BackendOptions::default().with_gradients(true);
        let what = format!("{backend} f32");
        check_one_pass::<f32>(backend, &case, &opts, (1e-3, 1e-2, 1e-5), &what);
    }
}

/// A point set per transform (sizes that differ, one of them empty): each point gets its own
/// cotangent, in both modes, and the one-pass gradients over such a stack, on every backend
/// (type 3's too).
#[test]
fn a_point_set_per_transform_gets_its_own_cotangents() {
    for backend in backends() {
        for (t, ty) in TYPES.into_iter().enumerate() {
            for (d, modes) in MODES.into_iter().enumerate() {
                let seed = 300 + 10 * t as u64 + d as u64;
                let counts: &[(usize, usize)] = &[(17, 9), (0, 4), (26, 0), (11, 13)];
                let case = Case::per_transform(ty, modes, counts, seed);
                check_vjp::<f64>(backend, &case, 1e-6, seed + 1);
                check_jvp::<f64>(backend, &case, 1e-6, seed + 2);
                if ty != TransformType::Type3 {
                    let opts = BackendOptions::default().with_gradients(true);
                    let what = format!("{backend} per-transform {ty:?} {}-D", d + 1);
                    check_one_pass::<f64>(backend, &case, &opts, (1e-6, 1e-5, 1e-12), &what);
                }
            }
        }
        let case = Case::per_transform(TransformType::Type1, &[12, 9], &[(20, 0), (7, 0)], 5);
        check_vjp::<f32>(backend, &case, 1e-3, 6);
        check_jvp::<f32>(backend, &case, 1e-3, 7);
    }
}

#[test]
fn bad_requests_are_typed_errors() {
    let case = Case::new(TransformType::Type1, &[8, 8], 1, 3);
    for backend in backends() {
        let mut plan = case.plan::<f64>(backend, 1e-6);
        let n = 64;
        let m = case.x[0].len();
        // Interpolation runs on a type 1's adjoint, not its forward.
        let e = plan.interp_with_gradient(
            &vec![Complex64::default(); n],
            &mut vec![Complex64::default(); 3 * m],
            false,
        );
        assert!(
            matches!(e, Err(BackendError::Input(NudtError::NoGradient { .. }))),
            "{backend}: {e:?}"
        );
        // The wrong number of values a point.
        let e = plan.interp_with_gradient(
            &vec![Complex64::default(); n],
            &mut vec![Complex64::default(); 2 * m + 1],
            true,
        );
        assert!(
            matches!(e, Err(BackendError::Input(NudtError::Length { .. }))),
            "{backend}: {e:?}"
        );
        // A point tangent of the wrong length.
        let short = vec![0.0; m - 1];
        let full = vec![0.0; m];
        let tangents = Tangents {
            input: None,
            points: Some(&[&full[..], &short[..]]),
            targets: None,
        };
        let mut out = vec![Complex64::default(); n];
        let e = jvp(&mut *plan, &case.input, tangents, None, &mut out);
        assert!(
            matches!(e, Err(BackendError::Input(NudtError::Length { .. }))),
            "{backend}: {e:?}"
        );
        // Type 3 without its points.
        let t3 = Case::new(TransformType::Type3, &[1, 1], 1, 4);
        let mut p3 = t3.plan::<f64>(backend, 1e-6);
        let g = vec![Complex64::default(); t3.s[0].len()];
        let e = vjp(&mut *p3, &t3.input, &g, None, Wanted::ALL);
        assert!(
            matches!(e, Err(BackendError::Input(NudtError::NoGradient { .. }))),
            "{backend}: {e:?}"
        );
    }
}

/// A 1-D interpolation with many more points than grid points runs by blocks of outputs on
/// the CPU (`interp_by_outputs`), each block taking its run of every tile's sorted points:
/// the plain and gradient passes at sampled points against the direct sums of the value and
/// of `isign·i·k`-weighted modes, with the sort's blocked order (tiles of the planner's side)
/// and its wide one (tiles of 8 points: more (tile, block) runs than the order keeps).
#[test]
fn long_1d_interpolations_by_blocks_of_outputs_match_the_direct_sum() {
    // Four blocks of 2¹⁶ outputs per thread and more: the rule for running by blocks.
    let (threads, m) = (2, 4 * 2 * (1 << 16) + 4321);
    for (n, tile_side) in [(3000, None), (1 << 16, Some(8))] {
        let mut r = Lcg(31);
        let x = reals(&mut r, m, 3.1);
        let f = complex(&mut r, n);
        let mut opts = BackendOptions::default().with_gradients(true);
        opts.cpu.threads = Some(threads);
        opts.cpu.tile_side = tile_side;
        let mut plan = Backend::Cpu
            .plan::<f64>(TransformType::Type2, &[n], -1, 1, 1e-9, &opts)
            .unwrap();
        plan.set_points(&[&x]).unwrap();
        let (mut plain, mut grad) = (
            vec![Complex64::default(); m],
            vec![Complex64::default(); 2 * m],
        );
        plan.execute(&f, &mut plain).unwrap();
        plan.interp_with_gradient(&f, &mut grad, false).unwrap();
        let order = plan.mode_order();
        let which: Vec<usize> = (0..40)
            .map(|i| (i * 7919 * 131) % m)
            .chain([0, m - 1])
            .collect();
        let weighted: Vec<Complex64> = (0..n)
            .map(|i| f[i] * Complex64::new(0.0, -(order.mode(i, n) as f64)))
            .collect();
        let want = direct::type2(&[&x], &f, &[n], order, -1, &which);
        let want_d = direct::type2(&[&x], &weighted, &[n], order, -1, &which);
        let got: Vec<Complex64> = which.iter().map(|&j| plain[j]).collect();
        let got_v: Vec<Complex64> = which.iter().map(|&j| grad[2 * j]).collect();
        let got_d: Vec<Complex64> = which.iter().map(|&j| grad[2 * j + 1]).collect();
        for (what, got, want) in [
            ("values", &got, &want),
            ("gradient's values", &got_v, &want),
            ("derivatives", &got_d, &want_d),
        ] {
            let err = rel_error(got, want);
            assert!(
                err < 1e-8,
                "n {n}, tiles {tile_side:?}: {what} off by {err:e}"
            );
        }
    }
}

/// Derivatives one after another on one plan (whose work arrays a CPU plan keeps): forward
/// mode with only the input's tangent, then with only the points' — whose pass reads a work
/// array the first filled — still matches the direct sums.
#[test]
fn derivatives_in_turn_on_one_plan_match_the_direct_sums() {
    for backend in backends() {
        let case = Case::new(TransformType::Type1, &[10, 8], 2, 91);
        let mut plan = case.plan::<f64>(backend, 1e-9);
        let mut r = Lcg(5);
        let dx: Vec<Vec<f64>> = case.x.iter().map(|v| reals(&mut r, v.len(), 1.0)).collect();
        let dc = complex(&mut r, case.input.len());
        let zero = vec![Complex64::default(); dc.len()];
        let still: Vec<Vec<f64>> = dx.iter().map(|v| vec![0.0; v.len()]).collect();
        let dxr: Vec<&[f64]> = dx.iter().map(|v| &v[..]).collect();
        let mut out = vec![Complex64::default(); case.difference(&dx, &[], &zero).len()];
        for (input, points) in [(Some(&dc[..]), None), (None, Some(&dxr[..]))] {
            let tangents = Tangents {
                input,
                points,
                targets: None,
            };
            jvp(&mut *plan, &case.input, tangents, None, &mut out).unwrap();
            let moved = if points.is_some() { &dx } else { &still };
            let expected = case.difference(moved, &[], input.unwrap_or(&zero));
            let err = rel_error(&out, &expected);
            assert!(
                err < 1e-7,
                "{backend}: off by {err:e} after another derivative"
            );
        }
    }
}
