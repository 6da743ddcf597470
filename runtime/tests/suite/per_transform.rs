//! Plans whose transforms each have their own point set (`set_points_per_transform`,
//! `set_points_type3_per_transform`) on the CPU: every transform against the direct sum and
//! against a plan of its own set alone, ragged and empty sets, the adjoint, going back to
//! shared points, and every refusal as its typed error. Types 1, 2 and 3 also on every
//! backend this build and machine run (CUDA, OpenCL; a missing one says SKIPPED unless the
//! environment requires it, as in `backends.rs`), through the plan interface.

use crate::common;

use common::Lcg;
use nudt_runtime::backend::{Backend, BackendError, BackendFloat, BackendOptions, NufftPlan};
use nudt_runtime::direct::{self, rel_error};
use nudt_runtime::{
    Float, ModeOrder, NudtError, Options, Plan, TransformType, Type3Method, Upsampling,
};
use num_complex::{Complex, Complex64};

/// Per transform of the ragged stacks: point counts (types 1 and 2, type 3's sources)
/// including an empty set.
const RAGGED: [usize; 5] = [37, 0, 11, 58, 4];
/// Type 3's target counts beside them: an empty one where the sources are not.
const RAGGED_TARGETS: [usize; 5] = [21, 9, 0, 30, 13];

fn tol<T: Float>() -> f64 {
    if std::mem::size_of::<T>() == 4 {
        1e-5
    } else {
        1e-9
    }
}

/// `dim` coordinate arrays of `m` values in `[-reach, reach)`.
fn coords<T: Float>(rng: &mut Lcg, dim: usize, m: usize, reach: f64) -> Vec<Vec<T>> {
    (0..dim)
        .map(|_| (0..m).map(|_| T::of(reach * rng.next())).collect())
        .collect()
}

fn complexes<T: Float>(rng: &mut Lcg, n: usize) -> Vec<Complex<T>> {
    (0..n)
        .map(|_| Complex::new(T::of(rng.next()), T::of(rng.next())))
        .collect()
}

fn wide<T: Float>(v: &[Complex<T>]) -> Vec<Complex64> {
    v.iter()
        .map(|c| Complex64::new(c.re.wide(), c.im.wide()))
        .collect()
}

/// The coordinates as the plan read them, in f64.
fn widened<T: Float>(v: &[Vec<T>]) -> Vec<Vec<f64>> {
    v.iter()
        .map(|c| c.iter().map(|x| x.wide()).collect())
        .collect()
}

fn slices<T>(v: &[Vec<T>]) -> Vec<&[T]> {
    v.iter().map(|c| &c[..]).collect()
}

/// The stack's `&[&[&[T]]]` from owned sets.
fn views<T>(sets: &[Vec<Vec<T>>]) -> Vec<Vec<&[T]>> {
    sets.iter().map(|s| slices(s)).collect()
}

fn nested<'a, T>(v: &'a [Vec<&'a [T]>]) -> Vec<&'a [&'a [T]]> {
    v.iter().map(|s| &s[..]).collect()
}

/// Splits `v` into pieces of lengths `lens`.
fn pieces<V>(v: &[V], lens: impl IntoIterator<Item = usize>) -> Vec<&[V]> {
    let mut rest = v;
    lens.into_iter()
        .map(|n| {
            let (a, b) = rest.split_at(n);
            rest = b;
            a
        })
        .collect()
}

fn modes_of(dim: usize) -> &'static [usize] {
    match dim {
        1 => &[24],
        2 => &[12, 9],
        _ => &[8, 6, 5],
    }
}

/// Checks `got` against `want` for transform `b`, with a readable failure.
fn assert_close(got: &[Complex64], want: &[Complex64], bound: f64, what: &str) {
    let err = rel_error(got, want);
    assert!(
        err <= bound,
        "{what}: relative error {err:.2e} above {bound:.1e}"
    );
}

/// Runs a type 1 or 2 stack of `ty` with sign `isign` on `modes` whose transforms have the
/// point sets `sets` (held by the plan that `run(input, output, adjoint)` executes), forward
/// and adjoint, and checks each transform's slice against the direct sum at its own points.
#[allow(clippy::too_many_arguments)]
fn check_stack<T: Float>(
    mut run: impl FnMut(&[Complex<T>], &mut [Complex<T>], bool),
    ty: TransformType,
    isign: i32,
    modes: &[usize],
    sets: &[&Vec<Vec<T>>],
    rng: &mut Lcg,
    tol: f64,
    what: &str,
) {
    let n: usize = modes.iter().product();
    let b = sets.len();
    let counts: Vec<usize> = sets.iter().map(|s| s[0].len()).collect();
    let total: usize = counts.iter().sum();
    for adjoint in [false, true] {
        // Whether this direction maps points to modes.
        let to_modes = (ty == TransformType::Type1) != adjoint;
        let (ins, outs): (Vec<usize>, Vec<usize>) = if to_modes {
            (counts.clone(), vec![n; b])
        } else {
            (vec![n; b], counts.clone())
        };
        let input = complexes::<T>(rng, ins.iter().sum());
        let mut out = vec![Complex::default(); outs.iter().sum()];
        run(&input, &mut out, adjoint);
        assert_eq!(out.len(), if to_modes { b * n } else { total });
        let sign = if adjoint { -isign } else { isign };
        let xs = pieces(&input, ins);
        for (t, (y, set)) in pieces(&out, outs).into_iter().zip(sets).enumerate() {
            let x = widened(set);
            let x = slices(&x);
            let c = wide(xs[t]);
            let want = if to_modes {
                let all: Vec<usize> = (0..n).collect();
                direct::type1(&x, &c, modes, ModeOrder::Cmcl, sign, &all)
            } else {
                let all: Vec<usize> = (0..set[0].len()).collect();
                direct::type2(&x, &c, modes, ModeOrder::Cmcl, sign, &all)
            };
            let what = format!(
                "{what} {ty:?} {}-D {} adjoint {adjoint}, transform {t} of {b} ({} points)",
                modes.len(),
                T::PRECISION.type_name(),
                set[0].len()
            );
            assert_close(&wide(y), &want, 10.0 * tol, &what);
        }
    }
}

/// Types 1 and 2 of every dimension, forward and adjoint, ragged and single stacks: each
/// transform's slice against the direct sum at its own points.
fn uniform_against_direct<T: Float>() {
    let tol = tol::<T>();
    let mut rng = Lcg(7);
    for ty in [TransformType::Type1, TransformType::Type2] {
        for dim in 1..=3 {
            let modes = modes_of(dim);
            for counts in [&RAGGED[..], &[50][..]] {
                let b = counts.len();
                let sets: Vec<Vec<Vec<T>>> = counts
                    .iter()
                    .map(|&m| coords(&mut rng, dim, m, 4.0))
                    .collect();
                let isign = if ty == TransformType::Type1 { 1 } else { -1 };
                let mut plan =
                    Plan::<T>::new(ty, modes, isign, b, tol, Options::default()).expect("plan");
                let v = views(&sets);
                plan.set_points_per_transform(&nested(&v)).expect("points");
                let pairs: Vec<(usize, usize)> = counts.iter().map(|&m| (m, 0)).collect();
                assert_eq!(plan.point_counts(), Some(pairs));
                let run = |x: &[Complex<T>], y: &mut [Complex<T>], adjoint: bool| {
                    match adjoint {
                        true => plan.execute_adjoint(x, y),
                        false => plan.execute(x, y),
                    }
                    .expect("execute")
                };
                let all: Vec<&Vec<Vec<T>>> = sets.iter().collect();
                check_stack(run, ty, isign, modes, &all, &mut rng, tol, "cpu");
            }
        }
    }
}

#[test]
fn types_1_and_2_match_the_direct_sum_f64() {
    uniform_against_direct::<f64>();
}

#[test]
fn types_1_and_2_match_the_direct_sum_f32() {
    uniform_against_direct::<f32>();
}

/// Type 3 sets of every dimension whose extents differ between transforms (the CPU gives
/// each its own grids, the GPUs the grids of the widest), ragged with an empty source set and
/// an empty target set, forward and adjoint, on every backend this build and machine run
/// (the Gaussian type 3 on the CPU alone); the GPUs' batches: all at once, two by two, one
/// by one.
fn type3_against_direct<T: BackendFloat>(method: Type3Method) {
    let tol = tol::<T>();
    let mut rng = Lcg(11);
    let opts = BackendOptions::default().with_type3(method);
    let runs = common::backends().into_iter().flat_map(|backend| {
        let batches: &[usize] = match (backend, method) {
            (Backend::Cpu, _) => &[0],
            (_, Type3Method::GaussianCapozzoli) => &[],
            _ => &[0, 2, 1],
        };
        batches.iter().map(move |&b| (backend, b))
    });
    for (backend, batch) in runs {
        let opts = opts.clone().with_gpu_batch(batch);
        for dim in 1..=3 {
            for (counts, targets) in [(&RAGGED[..], &RAGGED_TARGETS[..]), (&[40][..], &[25][..])] {
                let b = counts.len();
                let src: Vec<Vec<Vec<T>>> = (0..b)
                    .map(|t| coords(&mut rng, dim, counts[t], 1.0 + t as f64))
                    .collect();
                let tgt: Vec<Vec<Vec<T>>> = (0..b)
                    .map(|t| coords(&mut rng, dim, targets[t], 12.0 / (1.0 + t as f64)))
                    .collect();
                let mut plan = backend
                    .plan_type3::<T>(dim, 1, b, tol, &opts)
                    .expect("plan");
                let (vs, vt) = (views(&src), views(&tgt));
                plan.set_points_type3_per_transform(&nested(&vs), &nested(&vt))
                    .expect("points");
                let pairs: Vec<(usize, usize)> =
                    counts.iter().copied().zip(targets.to_vec()).collect();
                assert_eq!(plan.point_counts(), Some(pairs));
                assert_eq!(plan.points_per_transform(), b > 1);
                for adjoint in [false, true] {
                    let (ins, outs) = if adjoint {
                        (targets, counts)
                    } else {
                        (counts, targets)
                    };
                    let input = complexes::<T>(&mut rng, ins.iter().sum());
                    let mut out = vec![Complex::default(); outs.iter().sum()];
                    match adjoint {
                        true => plan.execute_adjoint(&input, &mut out),
                        false => plan.execute(&input, &mut out),
                    }
                    .expect("execute");
                    let xs = pieces(&input, ins.iter().copied());
                    let ys = pieces(&out, outs.iter().copied());
                    for t in 0..b {
                        let (x, s) = (widened(&src[t]), widened(&tgt[t]));
                        let (from, to) = if adjoint { (&s, &x) } else { (&x, &s) };
                        let all: Vec<usize> = (0..to[0].len()).collect();
                        let sign = if adjoint { -1 } else { 1 };
                        let want =
                            direct::type3(&slices(from), &wide(xs[t]), &slices(to), sign, &all);
                        let what = format!(
                            "{backend} batch {batch}: type 3 ({}) {dim}-D {} adjoint {adjoint}, \
                             transform {t} of {b}",
                            method.name(),
                            T::PRECISION.type_name()
                        );
                        assert_close(&wide(ys[t]), &want, 10.0 * tol, &what);
                    }
                }
            }
        }
    }
}

#[test]
fn type_3_matches_the_direct_sum_f64() {
    type3_against_direct::<f64>(Type3Method::Finufft);
}

#[test]
fn type_3_matches_the_direct_sum_f32() {
    type3_against_direct::<f32>(Type3Method::Finufft);
}

#[test]
fn gaussian_type_3_matches_the_direct_sum() {
    type3_against_direct::<f64>(Type3Method::GaussianCapozzoli);
}

/// Transform b of a per-transform plan gives what a plan of set b alone gives, to rounding:
/// the same kernel, grid and sort, run at once with the others on its own buffers. Type 3
/// fixes σ, which it otherwise fits to the widest set of the stack.
fn each_transform_alone<T: Float>(threads: Option<usize>) {
    let tol = tol::<T>();
    let rounding = if tol > 1e-6 { 1e-6 } else { 1e-13 };
    let mut rng = Lcg(3);
    let opts = Options {
        threads,
        upsampling: Some(Upsampling::TWO),
        ..Options::default()
    };
    let b = RAGGED.len();
    for dim in 1..=3 {
        let modes = modes_of(dim);
        let n: usize = modes.iter().product();
        let sets: Vec<Vec<Vec<T>>> = RAGGED
            .iter()
            .map(|&m| coords(&mut rng, dim, m, 3.0))
            .collect();
        let v = views(&sets);
        for ty in [TransformType::Type1, TransformType::Type2] {
            let mut all = Plan::<T>::new(ty, modes, 1, b, tol, opts.clone()).expect("plan");
            all.set_points_per_transform(&nested(&v)).expect("points");
            let (ins, outs): (Vec<usize>, Vec<usize>) = match ty {
                TransformType::Type1 => (RAGGED.to_vec(), vec![n; b]),
                _ => (vec![n; b], RAGGED.to_vec()),
            };
            let input = complexes::<T>(&mut rng, ins.iter().sum());
            let mut out = vec![Complex::default(); outs.iter().sum()];
            all.execute(&input, &mut out).expect("execute");
            let xs = pieces(&input, ins);
            for (t, y) in pieces(&out, outs.clone()).into_iter().enumerate() {
                let mut one = Plan::<T>::new(ty, modes, 1, 1, tol, opts.clone()).expect("plan");
                one.set_points(&v[t]).expect("points");
                let mut want = vec![Complex::default(); y.len()];
                one.execute(xs[t], &mut want).expect("execute");
                let what = format!("{ty:?} {dim}-D transform {t}, threads {threads:?}");
                assert_close(&wide(y), &wide(&want), rounding, &what);
            }
        }
        let tgt: Vec<Vec<Vec<T>>> = RAGGED_TARGETS
            .iter()
            .map(|&k| coords(&mut rng, dim, k, 7.0))
            .collect();
        let vt = views(&tgt);
        let mut all = Plan::<T>::new_type3(dim, -1, b, tol, opts.clone()).expect("plan");
        all.set_points_type3_per_transform(&nested(&v), &nested(&vt))
            .expect("points");
        let input = complexes::<T>(&mut rng, RAGGED.iter().sum());
        let mut out = vec![Complex::default(); RAGGED_TARGETS.iter().sum()];
        all.execute(&input, &mut out).expect("execute");
        let xs = pieces(&input, RAGGED);
        for (t, y) in pieces(&out, RAGGED_TARGETS).into_iter().enumerate() {
            let mut one = Plan::<T>::new_type3(dim, -1, 1, tol, opts.clone()).expect("plan");
            one.set_points_type3(&v[t], &vt[t]).expect("points");
            let mut want = vec![Complex::default(); y.len()];
            one.execute(xs[t], &mut want).expect("execute");
            let what = format!("type 3 {dim}-D transform {t}, threads {threads:?}");
            assert_close(&wide(y), &wide(&want), rounding, &what);
        }
    }
}

#[test]
fn each_transform_is_its_own_plan_f64() {
    each_transform_alone::<f64>(None);
    each_transform_alone::<f64>(Some(1));
    each_transform_alone::<f64>(Some(3));
}

#[test]
fn each_transform_is_its_own_plan_f32() {
    each_transform_alone::<f32>(None);
}

/// `set_points` after per-transform sets shares its points again, and the other way round;
/// the counts follow.
#[test]
fn shared_and_per_transform_points_alternate() {
    let mut rng = Lcg(5);
    let modes = [16, 12];
    let sets: Vec<Vec<Vec<f64>>> = [30, 20, 10]
        .iter()
        .map(|&m| coords(&mut rng, 2, m, 3.0))
        .collect();
    let v = views(&sets);
    let ty = TransformType::Type1;
    let mut plan = Plan::<f64>::new(ty, &modes, 1, 3, 1e-9, Options::default()).unwrap();
    assert_eq!(plan.point_counts(), None);
    plan.set_points_per_transform(&nested(&v)).unwrap();
    assert_eq!(plan.point_counts(), Some(vec![(30, 0), (20, 0), (10, 0)]));
    plan.set_points(&v[0]).unwrap();
    assert_eq!(plan.point_counts(), Some(vec![(30, 0); 3]));
    let c = complexes::<f64>(&mut rng, 90);
    let mut shared = vec![Complex::default(); 3 * 192];
    plan.execute(&c, &mut shared).unwrap();
    let mut alone = Plan::<f64>::new(ty, &modes, 1, 3, 1e-9, Options::default()).unwrap();
    alone.set_points(&v[0]).unwrap();
    let mut want = vec![Complex::default(); 3 * 192];
    alone.execute(&c, &mut want).unwrap();
    assert_close(&wide(&shared), &wide(&want), 1e-13, "shared again");
    plan.set_points_per_transform(&nested(&v)).unwrap();
    assert_eq!(plan.point_counts(), Some(vec![(30, 0), (20, 0), (10, 0)]));
    let mut per = vec![Complex::default(); 3 * 192];
    assert!(matches!(
        plan.execute(&c, &mut per),
        Err(NudtError::Length {
            expected: 60,
            got: 90,
            ..
        })
    ));
    plan.execute(&c[..60], &mut per).unwrap();
    assert_close(&wide(&per[..192]), &wide(&want[..192]), 1e-13, "set 0");
}

/// Every bad stack is a typed error that names the transform, and leaves the plan with the
/// points it had.
#[test]
fn bad_stacks_are_typed_errors() {
    let (a, b, nan) = ([0.1, 0.2, 0.3], [0.5, 0.6], [0.0, f64::INFINITY]);
    let ok: [&[f64]; 2] = [&a, &a];
    let mut plan = Plan::<f64>::new(
        TransformType::Type2,
        &[8, 8],
        -1,
        2,
        1e-6,
        Options::default(),
    )
    .unwrap();
    let mut out = vec![Complex64::default(); 6];
    let modes = vec![Complex64::new(1.0, 0.0); 128];
    assert_eq!(plan.execute(&modes, &mut out), Err(NudtError::PointsNotSet));
    assert_eq!(
        plan.set_points_per_transform(&[&ok]),
        Err(NudtError::PointSets {
            what: "point sets",
            expected: 2,
            got: 1
        })
    );
    let one: [&[f64]; 1] = [&a];
    let err = plan.set_points_per_transform(&[&ok, &one]).unwrap_err();
    assert!(matches!(
        &err,
        NudtError::InTransform { index: 1, error }
            if **error == NudtError::Coordinates { expected: 2, got: 1 }
    ));
    assert!(err.to_string().starts_with("transform 1: "), "{err}");
    let ragged: [&[f64]; 2] = [&a, &b];
    assert!(matches!(
        plan.set_points_per_transform(&[&ragged, &ok]),
        Err(NudtError::InTransform { index: 0, error })
            if matches!(*error, NudtError::Length { expected: 3, got: 2, .. })
    ));
    let inf: [&[f64]; 2] = [&b, &nan];
    let small: [&[f64]; 2] = [&b, &b];
    assert!(matches!(
        plan.set_points_per_transform(&[&small, &inf]),
        Err(NudtError::InTransform { index: 1, error })
            if matches!(*error, NudtError::NonFinite { what: "y", index: 1, .. })
    ));
    assert_eq!(plan.point_counts(), None, "no points after refusals");
    plan.set_points_per_transform(&[&ok, &small]).unwrap();
    assert!(plan.set_points_per_transform(&[&ok, &inf]).is_err());
    assert_eq!(plan.point_counts(), Some(vec![(3, 0), (2, 0)]));
    plan.execute(&modes, &mut out[..5]).unwrap();
    assert!(matches!(
        plan.execute(&modes, &mut out),
        Err(NudtError::Length { ref what, expected: 5, got: 6 }) if what == "values"
    ));
    assert_eq!(
        plan.set_points_type3_per_transform(&[&ok, &ok], &[&ok, &ok]),
        Err(NudtError::WrongType {
            expected: 3,
            actual: 2
        })
    );

    let mut t3 = Plan::<f64>::new_type3(2, 1, 2, 1e-6, Options::default()).unwrap();
    assert_eq!(
        t3.set_points_per_transform(&[&ok, &ok]),
        Err(NudtError::WrongType {
            expected: 1,
            actual: 3
        })
    );
    assert_eq!(
        t3.set_points_type3_per_transform(&[&ok, &ok], &[&ok]),
        Err(NudtError::PointSets {
            what: "target sets",
            expected: 2,
            got: 1
        })
    );
    assert!(matches!(
        t3.set_points_type3_per_transform(&[&ok, &ok], &[&ok, &inf]),
        Err(NudtError::InTransform { index: 1, error })
            if matches!(*error, NudtError::NonFinite { what: "t", index: 1, .. })
    ));
    // Sources 1e300 apart against targets 1e300 apart: no grid holds the product.
    let (far, wide_s) = ([-1e300, 1e300], [-1e300, 1e300]);
    let far: [&[f64]; 2] = [&far, &far];
    let wide_t: [&[f64]; 2] = [&wide_s, &wide_s];
    assert!(matches!(
        t3.set_points_type3_per_transform(&[&ok, &far], &[&ok, &wide_t]),
        Err(NudtError::InTransform { index: 1, .. })
    ));
    assert_eq!(t3.point_counts(), None);
}

/// `NufftPlan` forwards per-transform sets to the CPU plan, counts and all.
#[test]
fn the_plan_interface_takes_per_transform_sets() {
    use nudt_runtime::backend::{Backend, BackendOptions};
    let opts = BackendOptions::default();
    let (a, b) = ([0.1, 0.2, 0.3], [0.5, 0.6]);
    let mut plan = Backend::Cpu
        .plan::<f64>(TransformType::Type1, &[8], 1, 2, 1e-9, &opts)
        .unwrap();
    plan.set_points_per_transform(&[&[&a], &[&b]]).unwrap();
    assert_eq!(plan.point_counts(), Some(vec![(3, 0), (2, 0)]));
    let c = vec![Complex64::new(1.0, 0.0); 5];
    let mut f = vec![Complex64::default(); 16];
    plan.execute(&c, &mut f).unwrap();
    let want = direct::type1(
        &[&b],
        &c[3..],
        &[8],
        ModeOrder::Cmcl,
        1,
        &(0..8).collect::<Vec<_>>(),
    );
    assert_close(&f[8..], &want, 1e-8, "transform 1 through NufftPlan");
    let mut t3 = Backend::Cpu
        .plan_type3::<f64>(1, 1, 2, 1e-9, &opts)
        .unwrap();
    t3.set_points_type3_per_transform(&[&[&a], &[&b]], &[&[&b], &[&a]])
        .unwrap();
    assert_eq!(t3.point_counts(), Some(vec![(3, 2), (2, 3)]));
}

// ---- every backend, through the plan interface --------------------------------------------

/// Sets of very different sizes, an empty one among them.
const UNEVEN: [usize; 4] = [300, 0, 3, 41];

/// Types 1 and 2 of every dimension on every backend this build and machine run (the GPUs
/// sort all sets at once and spread or interpolate a batch of them in one launch per stage),
/// forward and adjoint, each transform against the direct sum at its own points; then the
/// same plan on points its transforms share again, and per-transform sets once more. The
/// GPUs' batches: all four transforms at once; two and two (the second batch's sets starting
/// past the first point and grid); one by one (a batch of an empty set among them).
fn every_backend_against_direct<T: BackendFloat>() {
    let tol = tol::<T>();
    let mut rng = Lcg(13);
    for (backend, batch) in common::backends().into_iter().flat_map(|backend| {
        let batches: &[usize] = match backend {
            Backend::Cpu => &[0],
            _ => &[0, 2, 1],
        };
        batches.iter().map(move |&b| (backend, b))
    }) {
        let opts = BackendOptions::default().with_gpu_batch(batch);
        for ty in [TransformType::Type1, TransformType::Type2] {
            for dim in 1..=3 {
                let modes = modes_of(dim);
                let b = UNEVEN.len();
                let sets: Vec<Vec<Vec<T>>> = UNEVEN
                    .iter()
                    .map(|&m| coords(&mut rng, dim, m, 4.0))
                    .collect();
                let isign = if ty == TransformType::Type1 { 1 } else { -1 };
                let mut plan = backend
                    .plan::<T>(ty, modes, isign, b, tol, &opts)
                    .expect("plan");
                let v = views(&sets);
                let what = format!("{backend}, batch {batch}");
                let per: Vec<&Vec<Vec<T>>> = sets.iter().collect();
                let shared: Vec<&Vec<Vec<T>>> = vec![&sets[0]; b];
                for (again, stack) in [(false, &per), (true, &shared), (false, &per)] {
                    match again {
                        true => plan.set_points(&v[0]),
                        false => plan.set_points_per_transform(&nested(&v)),
                    }
                    .expect("points");
                    let pairs: Vec<(usize, usize)> =
                        stack.iter().map(|s| (s[0].len(), 0)).collect();
                    assert_eq!(plan.point_counts(), Some(pairs), "{what}");
                    let run = |x: &[Complex<T>], y: &mut [Complex<T>], adjoint: bool| {
                        match adjoint {
                            true => plan.execute_adjoint(x, y),
                            false => plan.execute(x, y),
                        }
                        .expect("execute")
                    };
                    check_stack(run, ty, isign, modes, stack, &mut rng, tol, &what);
                }
            }
        }
    }
}

#[test]
fn every_backend_matches_the_direct_sum_f64() {
    every_backend_against_direct::<f64>();
}

#[test]
fn every_backend_matches_the_direct_sum_f32() {
    every_backend_against_direct::<f32>();
}

/// The refusals of [`bad_stacks_are_typed_errors`] through the plan interface, alike on every
/// backend: the same [`NudtError`] as the CPU's, the plan keeping the points it had.
#[test]
fn every_backend_refuses_bad_stacks_alike() {
    let (a, b, nan) = ([0.1, 0.2, 0.3], [0.5, 0.6], [0.0, f64::NAN]);
    let (ok, one): ([&[f64]; 2], [&[f64]; 1]) = ([&a, &a], [&a]);
    let (small, inf): ([&[f64]; 2], [&[f64]; 2]) = ([&b, &b], [&b, &nan]);
    let input = |e: BackendError| match e {
        BackendError::Input(e) => e,
        e => panic!("not an input error: {e}"),
    };
    let opts = BackendOptions::default();
    for backend in common::backends() {
        let ty = TransformType::Type2;
        let mut plan = backend
            .plan::<f64>(ty, &[8, 8], -1, 2, 1e-6, &opts)
            .unwrap();
        let sets = |p: &mut Box<dyn NufftPlan<f64>>, s: &[&[&[f64]]]| {
            p.set_points_per_transform(s).map_err(input)
        };
        assert_eq!(
            sets(&mut plan, &[&ok]),
            Err(NudtError::PointSets {
                what: "point sets",
                expected: 2,
                got: 1
            }),
            "{backend}"
        );
        let err = sets(&mut plan, &[&ok, &one]).unwrap_err();
        assert!(
            matches!(&err, NudtError::InTransform { index: 1, error }
                if **error == NudtError::Coordinates { expected: 2, got: 1 }),
            "{backend}: {err}"
        );
        assert!(matches!(
            sets(&mut plan, &[&small, &inf]),
            Err(NudtError::InTransform { index: 1, error })
                if matches!(*error, NudtError::NonFinite { what: "y", index: 1, .. })
        ));
        assert_eq!(
            plan.point_counts(),
            None,
            "{backend}: no points after refusals"
        );
        sets(&mut plan, &[&ok, &small]).unwrap();
        assert!(sets(&mut plan, &[&ok, &inf]).is_err());
        assert_eq!(plan.point_counts(), Some(vec![(3, 0), (2, 0)]), "{backend}");
        let modes = vec![Complex64::new(1.0, 0.0); 128];
        let mut out = vec![Complex64::default(); 6];
        plan.execute(&modes, &mut out[..5]).unwrap();
        assert!(matches!(
            plan.execute(&modes, &mut out).map_err(input),
            Err(NudtError::Length { ref what, expected: 5, got: 6 }) if what == "values"
        ));
        let mut t3 = backend.plan_type3::<f64>(2, 1, 2, 1e-6, &opts).unwrap();
        assert_eq!(
            sets(&mut t3, &[&ok, &ok]),
            Err(NudtError::WrongType {
                expected: 1,
                actual: 3
            }),
            "{backend}"
        );
        let pairs = |p: &mut Box<dyn NufftPlan<f64>>, x: &[&[&[f64]]], s: &[&[&[f64]]]| {
            p.set_points_type3_per_transform(x, s).map_err(input)
        };
        assert_eq!(
            pairs(&mut t3, &[&ok, &ok], &[&ok]),
            Err(NudtError::PointSets {
                what: "target sets",
                expected: 2,
                got: 1
            }),
            "{backend}"
        );
        let err = pairs(&mut t3, &[&ok, &ok], &[&ok, &inf]).unwrap_err();
        assert!(
            matches!(&err, NudtError::InTransform { index: 1, error }
                if matches!(**error, NudtError::NonFinite { what: "t", index: 1, .. })),
            "{backend}: {err}"
        );
        // Sources 1e300 apart against targets 1e300 apart: no grid holds the product.
        let far = [-1e300, 1e300];
        let far: [&[f64]; 2] = [&far, &far];
        let err = pairs(&mut t3, &[&ok, &far], &[&ok, &far]).unwrap_err();
        assert!(
            matches!(err, NudtError::InTransform { index: 1, .. }),
            "{backend}: {err}"
        );
        assert_eq!(t3.point_counts(), None, "{backend}");
        pairs(&mut t3, &[&ok, &small], &[&small, &ok]).unwrap();
        assert_eq!(t3.point_counts(), Some(vec![(3, 2), (2, 3)]), "{backend}");
        // The Gaussian type 3's grids are made for one pair of sets on the GPUs.
        let gauss = opts.clone().with_type3(Type3Method::GaussianCapozzoli);
        let mut g = backend.plan_type3::<f64>(2, 1, 2, 1e-6, &gauss).unwrap();
        let got = pairs(&mut g, &[&ok, &small], &[&small, &ok]);
        match backend {
            Backend::Cpu => got.unwrap(),
            _ => assert_eq!(
                got,
                Err(NudtError::Unsupported {
                    what: "per-transform point sets of the Gaussian type 3",
                    backend: backend.name(),
                })
            ),
        }
    }
}
