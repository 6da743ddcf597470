//! One transform over several devices ([`nudt_runtime::MultiPlan`]) against the direct sum
//! and against the one-device plan of the same problem: the slabs, the routing of points onto
//! local grids, the halos and the transposes all run, on two and three OpenCL devices opened
//! apart on one PoCL device and moving their data through the host ([`ClDevice::reopen`]) —
//! the emulation of several GPUs that CI runs.
//!
//! Without an OpenCL platform the tests say SKIPPED, unless `NUDT_REQUIRE_OPENCL=1`.
//! ```sh
//! cargo test --release -p nudt-runtime --features opencl --test multi_device
//! ```

mod common;
use common::Lcg;
use nudt_runtime::backend::Backend;
use nudt_runtime::direct;
use nudt_runtime::opencl::{ClDevice, ClFloat, ClMultiPlan, ClOptions, ClPlan, OpenClError};
use nudt_runtime::{ModeOrder, NudtError, TransformType};
use num_complex::{Complex, Complex64};
use num_traits::NumCast;
use std::f64::consts::PI;
use std::sync::Arc;

/// `count` devices apart from one another on the first OpenCL device, or none (SKIPPED, or a
/// failure where `NUDT_REQUIRE_OPENCL=1`).
fn devices(count: usize) -> Option<Vec<Arc<ClDevice>>> {
    if let Err(e) = Backend::OpenCl.available() {
        if std::env::var("NUDT_REQUIRE_OPENCL").is_ok_and(|v| v == "1") {
            panic!("NUDT_REQUIRE_OPENCL=1 but {e}");
        }
        eprintln!("SKIPPED: {e}");
        return None;
    }
    let first = ClDevice::first().unwrap();
    Some((0..count).map(|_| first.reopen().unwrap()).collect())
}

/// `m` points in `dim` dimensions: random over [-π, π), and a few on ±π, outside the
/// period, and on the planes where the slabs of `n0` planes split (the footprint of a kernel
/// of width `w` starting exactly there).
fn points(dim: usize, m: usize, n0: usize) -> Vec<Vec<f64>> {
    let mut rng = Lcg(42 + dim as u64);
    let mut x: Vec<Vec<f64>> = (0..dim)
        .map(|_| (0..m).map(|_| PI * rng.next()).collect())
        .collect();
    let step = 2.0 * PI / n0 as f64;
    let special = [
        -PI,
        PI,
        7.0,
        -9.5,
        0.0,
        0.5 * step,
        3.5 * step,
        (n0 / 2) as f64 * step,
    ];
    for (j, &s) in special.iter().enumerate() {
        x[0][j] = s;
    }
    x
}

fn cast<T: NumCast>(v: f64) -> T {
    T::from(v).unwrap()
}

fn strengths(len: usize, seed: u64) -> Vec<Complex64> {
    let mut rng = Lcg(seed);
    (0..len)
        .map(|_| Complex64::new(rng.next(), rng.next()))
        .collect()
}

fn widen<T: ClFloat>(v: &[Complex<T>]) -> Vec<Complex64> {
    v.iter()
        .map(|c| Complex64::new(c.re.to_f64().unwrap(), c.im.to_f64().unwrap()))
        .collect()
}

/// One problem on `count` devices: the multi-device plan's transform (or its adjoint) of
/// `ntransf` inputs, its error against the direct sum, and its distance to the one-device
/// plan's.
fn compare<T: ClFloat>(
    ty: TransformType,
    modes: &[usize],
    (count, ntransf, adjoint): (usize, usize, bool),
    tol: f64,
) -> Option<(f64, f64)> {
    let devs = devices(count)?;
    let (dim, m, isign) = (modes.len(), 1500, -1);
    let opts = ClOptions::default();
    let mut multi = ClMultiPlan::<T>::new(ty, modes, (isign, ntransf, tol), &opts, &devs).unwrap();
    let n0 = multi.decomposition().n[0];
    let x = points(dim, m, n0);
    let xt: Vec<Vec<T>> = x
        .iter()
        .map(|v| v.iter().map(|&a| cast(a)).collect())
        .collect();
    let coords: Vec<&[T]> = xt.iter().map(Vec::as_slice).collect();
    multi.set_points(&coords).unwrap();
    let per = multi.points_per_device().unwrap();
    assert_eq!(per.iter().sum::<usize>(), m);
    assert!(per.iter().all(|&p| p > 0), "{per:?}");
    let nmodes: usize = modes.iter().product();
    // Type 1 forward and type 2's adjoint take strengths; the others modes.
    let spreads = (ty == TransformType::Type1) != adjoint;
    let (a, b) = if spreads { (m, nmodes) } else { (nmodes, m) };
    let input = strengths(a * ntransf, 7);
    let input_t: Vec<Complex<T>> = input
        .iter()
        .map(|c| Complex::new(cast(c.re), cast(c.im)))
        .collect();
    let mut out = vec![Complex::<T>::default(); b * ntransf];
    let mut one = ClPlan::<T>::new(ty, modes, isign, ntransf, tol, opts.clone()).unwrap();
    one.set_points(&coords).unwrap();
    let mut reference = out.clone();
    match adjoint {
        false => {
            multi.execute(&input_t, &mut out).unwrap();
            one.execute(&input_t, &mut reference).unwrap();
        }
        true => {
            multi.execute_adjoint(&input_t, &mut out).unwrap();
            one.execute_adjoint(&input_t, &mut reference).unwrap();
        }
    }
    let xs: Vec<&[f64]> = x.iter().map(Vec::as_slice).collect();
    let sign = if adjoint { -isign } else { isign };
    let (order, all) = (ModeOrder::Cmcl, (0..b).collect::<Vec<_>>());
    let mut err: f64 = 0.0;
    for t in 0..ntransf {
        let inp = &input[t * a..][..a];
        let exact = match spreads {
            true => direct::type1(&xs, inp, modes, order, sign, &all),
            false => direct::type2(&xs, inp, modes, order, sign, &all),
        };
        err = err.max(direct::rel_error(&widen(&out[t * b..][..b]), &exact));
    }
    let apart = direct::rel_error(&widen(&out), &widen(&reference));
    eprintln!("{ty:?} {modes:?} on {count} devices, adjoint {adjoint}: error {err:.2e}, from one device {apart:.2e}");
    Some((err, apart))
}

/// Types 1 and 2 in 2-D and 3-D on two and three devices meet the tolerance against the
/// direct sum and equal the one-device plan to rounding.
#[test]
fn types_1_and_2_match_the_direct_sum_and_one_device() {
    let tol = 1e-6;
    for modes in [vec![24, 17], vec![12, 10, 9]] {
        for ty in [TransformType::Type1, TransformType::Type2] {
            for count in [2, 3] {
                let Some((err, apart)) = compare::<f64>(ty, &modes, (count, 1, false), tol) else {
                    return;
                };
                assert!(err < 10.0 * tol, "{ty:?} {modes:?} {count}: {err:e}");
                assert!(apart < 1e-11, "{ty:?} {modes:?} {count}: {apart:e}");
            }
        }
    }
}

/// Adjoints, stacks of transforms and single precision take the same path. At width 9 (1e-8)
/// two of the points sit exactly where a footprint starts a new plane, and the rescaled
/// coordinate may round to the neighbouring footprint on the local grid: that point's
/// weights then leave out the kernel's edge value at one end and take it at the other, a
/// change below the tolerance (1.8e-10 here) rather than at rounding.
#[test]
fn adjoints_stacks_and_f32() {
    let Some((err, apart)) = compare::<f64>(TransformType::Type1, &[10, 8, 6], (2, 1, true), 1e-8)
    else {
        return;
    };
    assert!(err < 1e-7 && apart < 1e-9, "{err:e} {apart:e}");
    let (err, apart) =
        compare::<f64>(TransformType::Type2, &[16, 12], (3, 3, false), 1e-6).unwrap();
    assert!(err < 1e-5 && apart < 1e-11, "{err:e} {apart:e}");
    let (err, apart) =
        compare::<f32>(TransformType::Type1, &[12, 10, 9], (2, 2, false), 1e-4).unwrap();
    assert!(err < 1e-3 && apart < 1e-5, "{err:e} {apart:e}");
}

/// A split the grid cannot take, a 1-D transform, and an execute before the points are
/// typed errors naming the problem.
#[test]
fn bad_splits_are_typed_errors() {
    let Some(devs) = devices(3) else {
        return;
    };
    let opts = ClOptions::default();
    let new = |modes: &[usize], devs: &[Arc<ClDevice>]| {
        ClMultiPlan::<f64>::new(TransformType::Type1, modes, (1, 1, 1e-6), &opts, devs)
    };
    let devices_error = |r: Result<ClMultiPlan<f64>, OpenClError>| {
        matches!(r, Err(OpenClError::Input(NudtError::Devices { .. })))
    };
    assert!(devices_error(new(&[32], &devs)));
    assert!(devices_error(new(&[8, 8], &[])));
    let mut plan = new(&[8, 8], &devs).unwrap();
    let mut out = vec![Complex::default(); 64];
    let r = plan.execute(&[Complex::default(); 4], &mut out);
    assert!(
        matches!(r, Err(OpenClError::Input(NudtError::PointsNotSet))),
        "{r:?}"
    );
    let x = [0.5f64; 4];
    plan.set_points(&[&x, &x]).unwrap();
    let r = plan.execute(&[Complex::default(); 3], &mut out);
    assert!(
        matches!(r, Err(OpenClError::Input(NudtError::Length { .. }))),
        "{r:?}"
    );
}
