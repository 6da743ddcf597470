//! One transform over several devices ([`nudt_runtime::MultiPlan`]) against the direct sum
//! and against the one-device plan of the same problem: the slabs, the routing of points onto
//! local grids, the halos and the transposes all run, on two and three OpenCL devices opened
//! apart on one PoCL device and moving their data through the host ([`ClDevice::reopen`]) —
//! the emulation of several GPUs that CI runs.
//!
//! Without an OpenCL platform the tests say SKIPPED, unless `NUDT_REQUIRE_OPENCL=1`.
//! ```sh
//! cargo test --release -p nudt-runtime --features opencl --test suite multi_device::
//! ```

use crate::common;
use crate::opencl_nufft::{buffer, fetch_reals};
use common::Lcg;
use nudt_runtime::backend::Backend;
use nudt_runtime::direct;
use nudt_runtime::opencl::opencl3::memory::Buffer;
use nudt_runtime::opencl::{ClDevice, ClFloat, ClMultiPlan, ClOptions, ClPlan, OpenClError};
use nudt_runtime::planner::devices::Spread;
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

fn widen<T: nudt_runtime::Float>(v: &[Complex<T>]) -> Vec<Complex64> {
    v.iter()
        .map(|c| Complex64::new(c.re.to_f64().unwrap(), c.im.to_f64().unwrap()))
        .collect()
}

/// What a comparison needs of a plan, one device's or several's.
trait Run<T> {
    fn points(&mut self, coords: &[&[T]]);
    fn run(&mut self, input: &[Complex<T>], output: &mut [Complex<T>], adjoint: bool);
    /// The points on each device, for a multi-device plan.
    fn per_device(&self) -> Option<Vec<usize>>;
}

macro_rules! runs {
    ($bound:path: $($plan:ident => $per:expr),*) => {$(
        impl<T: $bound> Run<T> for $plan<T> {
            fn points(&mut self, coords: &[&[T]]) {
                self.set_points(coords).unwrap();
            }
            fn run(&mut self, input: &[Complex<T>], output: &mut [Complex<T>], adjoint: bool) {
                match adjoint {
                    false => self.execute(input, output).unwrap(),
                    true => self.execute_adjoint(input, output).unwrap(),
                }
            }
            fn per_device(&self) -> Option<Vec<usize>> {
                #[allow(clippy::redundant_closure_call)]
                ($per)(self)
            }
        }
    )*};
}
runs!(ClFloat: ClMultiPlan => |p: &ClMultiPlan<T>| p.points_per_device(), ClPlan => |_| None);

/// One problem of `modes` in `dim` dimensions on the plans `multi` (slabs of `n0` planes)
/// and `one`: the multi-device plan's transform (or its adjoint) of `ntransf` inputs, its
/// error against the direct sum, and its distance to the one-device plan's.
fn compare<T: nudt_runtime::Float>(
    ty: TransformType,
    modes: &[usize],
    (ntransf, adjoint, n0): (usize, bool, usize),
    (mut multi, mut one): (impl Run<T>, impl Run<T>),
) -> (f64, f64) {
    let (dim, m, isign) = (modes.len(), 1500, -1);
    let x = points(dim, m, n0);
    let xt: Vec<Vec<T>> = x
        .iter()
        .map(|v| v.iter().map(|&a| cast(a)).collect())
        .collect();
    let coords: Vec<&[T]> = xt.iter().map(Vec::as_slice).collect();
    multi.points(&coords);
    one.points(&coords);
    let per = multi.per_device().unwrap();
    // Slabs share the points out; whole transforms give every device all of them.
    let whole = per.iter().all(|&p| p == m);
    assert!(whole || per.iter().sum::<usize>() == m, "{per:?}");
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
    let mut reference = out.clone();
    multi.run(&input_t, &mut out, adjoint);
    one.run(&input_t, &mut reference, adjoint);
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
    eprintln!("{ty:?} {modes:?} on {} devices, adjoint {adjoint}: error {err:.2e}, from one device {apart:.2e}", per.len());
    (err, apart)
}

/// [`compare`] on `count` OpenCL devices (the plans' sign −1), and how the multi-device plan
/// spread the stack.
fn compare_cl<T: ClFloat>(
    ty: TransformType,
    modes: &[usize],
    (count, ntransf, adjoint): (usize, usize, bool),
    tol: f64,
) -> Option<(f64, f64, Spread)> {
    let devs = devices(count)?;
    let opts = ClOptions::default();
    let multi = ClMultiPlan::<T>::new(ty, modes, (-1, ntransf, tol), &opts, &devs).unwrap();
    let one = ClPlan::<T>::new(ty, modes, -1, ntransf, tol, opts).unwrap();
    let (n0, spread) = (multi.fine_grid()[0], multi.spread());
    let (err, apart) = compare(ty, modes, (ntransf, adjoint, n0), (multi, one));
    Some((err, apart, spread))
}

/// Types 1 and 2 in 2-D and 3-D on two and three devices meet the tolerance against the
/// direct sum and equal the one-device plan to rounding.
#[test]
fn types_1_and_2_match_the_direct_sum_and_one_device() {
    let tol = 1e-6;
    for modes in [vec![24, 17], vec![12, 10, 9]] {
        for ty in [TransformType::Type1, TransformType::Type2] {
            for count in [2, 3] {
                let Some((err, apart, _)) = compare_cl::<f64>(ty, &modes, (count, 1, false), tol)
                else {
                    return;
                };
                assert!(err < 10.0 * tol, "{ty:?} {modes:?} {count}: {err:e}");
                assert!(apart < 1e-11, "{ty:?} {modes:?} {count}: {apart:e}");
            }
        }
    }
}

/// Adjoints, stacks of transforms shorter than the devices (each transform in slabs) and
/// single precision take the same path.
#[test]
fn adjoints_stacks_and_f32() {
    let Some((err, apart, _)) =
        compare_cl::<f64>(TransformType::Type1, &[10, 8, 6], (2, 1, true), 1e-8)
    else {
        return;
    };
    assert!(err < 1e-7 && apart < 1e-11, "{err:e} {apart:e}");
    let (err, apart, _) =
        compare_cl::<f64>(TransformType::Type2, &[16, 12], (3, 2, false), 1e-6).unwrap();
    assert!(err < 1e-5 && apart < 1e-11, "{err:e} {apart:e}");
    let (err, apart, _) =
        compare_cl::<f32>(TransformType::Type1, &[12, 10, 9], (3, 2, false), 1e-4).unwrap();
    assert!(err < 1e-3 && apart < 1e-5, "{err:e} {apart:e}");
}

/// Stacks of 1, 2, 5 and 16 transforms, types 1 and 2 in 2-D and 3-D, on two and three
/// devices: a stack at least as long as the devices runs whole transforms, each device a
/// contiguous share of it (uneven where the devices do not divide it), a shorter one each
/// transform in slabs; either way the direct sum to the tolerance and the one-device plan
/// to rounding, every transform of the stack in its place.
#[test]
fn stacks_spread_over_the_devices() {
    let tol = 1e-6;
    let shares = |ntransf: usize, count: usize| -> Vec<std::ops::Range<usize>> {
        let (each, rest) = (ntransf / count, ntransf % count);
        let ends: Vec<usize> = (0..=count).map(|r| r * each + r.min(rest)).collect();
        ends.windows(2).map(|e| e[0]..e[1]).collect()
    };
    for count in [2, 3] {
        for ntransf in [1, 2, 5, 16] {
            for modes in [vec![20, 14], vec![10, 8, 9]] {
                for ty in [TransformType::Type1, TransformType::Type2] {
                    let job = (count, ntransf, false);
                    let Some((err, apart, spread)) = compare_cl::<f64>(ty, &modes, job, tol) else {
                        return;
                    };
                    let want = match ntransf >= count {
                        true => Spread::Batches(shares(ntransf, count)),
                        false => Spread::Slabs,
                    };
                    let at = format!("{ty:?} {modes:?}: {ntransf} on {count}");
                    assert_eq!(spread, want, "{at}");
                    assert!(err < 10.0 * tol, "{at}: {err:e}");
                    assert!(apart < 1e-11, "{at}: {apart:e}");
                }
            }
        }
    }
}

/// A stack spread in shares runs adjoints, single precision and 1-D as the one-device plan
/// does.
#[test]
fn shares_run_adjoints_and_f32() {
    let job = (2, 5, true);
    let Some((err, apart, spread)) =
        compare_cl::<f64>(TransformType::Type2, &[12, 10, 8], job, 1e-8)
    else {
        return;
    };
    assert_eq!(spread, Spread::Batches(vec![0..3, 3..5]));
    assert!(err < 1e-7 && apart < 1e-11, "{err:e} {apart:e}");
    let (err, apart, spread) =
        compare_cl::<f32>(TransformType::Type1, &[24, 17], (3, 4, false), 1e-4).unwrap();
    assert_eq!(spread, Spread::Batches(vec![0..2, 2..3, 3..4]));
    assert!(err < 1e-3 && apart < 1e-5, "{err:e} {apart:e}");
    // Whole transforms take 1-D too, which slabs refuse.
    let (err, apart, spread) =
        compare_cl::<f64>(TransformType::Type1, &[40], (3, 3, false), 1e-6).unwrap();
    assert_eq!(spread, Spread::Batches(vec![0..1, 1..2, 2..3]));
    assert!(err < 1e-5 && apart < 1e-11, "{err:e} {apart:e}");
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

/// Points, values and modes on the devices (`set_points_distributed`,
/// `execute_distributed` and its adjoint): uneven shares of the points, each on its
/// device, and the modes by each device's columns. Each type and direction against the
/// direct sum and against the same plan on host arrays; arrays on the wrong device, of the
/// wrong length or count, a plan of whole transforms, and a coordinate that is not finite
/// are typed errors.
#[test]
fn arrays_on_the_devices() {
    let Some(devs) = devices(3) else { return };
    let (modes, m, tol) = ([12usize, 10, 9], 1500, 1e-6);
    let cuts = [0, 100, 1100, m];
    let nmodes: usize = modes.iter().product();
    for ty in [TransformType::Type1, TransformType::Type2] {
        let opts = ClOptions::default();
        let mut plan = ClMultiPlan::<f64>::new(ty, &modes, (-1, 1, tol), &opts, &devs).unwrap();
        let x = points(3, m, plan.fine_grid()[0]);
        let shares: Vec<Vec<Buffer<f64>>> = (0..3)
            .map(|r| {
                x.iter()
                    .map(|a| buffer(&devs[r], &a[cuts[r]..cuts[r + 1]], 0))
                    .collect()
            })
            .collect();
        let refs: Vec<Vec<&Buffer<f64>>> = shares.iter().map(|s| s.iter().collect()).collect();
        let refs: Vec<&[&Buffer<f64>]> = refs.iter().map(Vec::as_slice).collect();
        plan.set_points_distributed(&refs).unwrap();
        assert_eq!(plan.points_per_device().unwrap().iter().sum::<usize>(), m);
        let split = plan.decomposition().unwrap().clone();
        let cols = split.columns();
        let xs: Vec<&[f64]> = x.iter().map(Vec::as_slice).collect();
        let all: Vec<usize> = (0..nmodes).collect();
        for adjoint in [false, true] {
            let spreads = (ty == TransformType::Type1) != adjoint;
            let sign = if adjoint { 1 } else { -1 };
            // Values by shares, modes by each device's columns.
            let values = strengths(m, 11);
            let mode_values = strengths(nmodes, 12);
            let value_bufs = |v: &[Complex64]| -> Vec<Buffer<f64>> {
                (0..3)
                    .map(|r| {
                        let part: Vec<f64> = v[cuts[r]..cuts[r + 1]]
                            .iter()
                            .flat_map(|c| [c.re, c.im])
                            .collect();
                        buffer(&devs[r], &part, 0)
                    })
                    .collect()
            };
            let column_len = |r: usize| 2 * split.column_range(r).len() * modes[0];
            let mode_bufs = |f: &[Complex64]| -> Vec<Buffer<f64>> {
                (0..3)
                    .map(|r| {
                        let mut v = vec![0.0; column_len(r).max(2)];
                        for (q, c) in split.column_range(r).enumerate() {
                            for k in 0..modes[0] {
                                let z = f[k * cols + c];
                                (v[2 * (k + modes[0] * q)], v[2 * (k + modes[0] * q) + 1]) =
                                    (z.re, z.im);
                            }
                        }
                        buffer(&devs[r], &v, 0)
                    })
                    .collect()
            };
            let (input, mut output) = match spreads {
                true => (
                    value_bufs(&values),
                    mode_bufs(&vec![Complex64::default(); nmodes]),
                ),
                false => (
                    mode_bufs(&mode_values),
                    value_bufs(&vec![Complex64::default(); m]),
                ),
            };
            let inp: Vec<&Buffer<f64>> = input.iter().collect();
            let mut out: Vec<&mut Buffer<f64>> = output.iter_mut().collect();
            match adjoint {
                false => plan.execute_distributed(&inp, &mut out).unwrap(),
                true => plan.execute_adjoint_distributed(&inp, &mut out).unwrap(),
            }
            let (got, exact, host) = match spreads {
                true => {
                    let mut got = vec![Complex64::default(); nmodes];
                    for (r, b) in output.iter().enumerate() {
                        let v = fetch_reals(&devs[r], b, column_len(r));
                        for (q, c) in split.column_range(r).enumerate() {
                            for k in 0..modes[0] {
                                let at = 2 * (k + modes[0] * q);
                                got[k * cols + c] = Complex64::new(v[at], v[at + 1]);
                            }
                        }
                    }
                    let exact = direct::type1(&xs, &values, &modes, ModeOrder::Cmcl, sign, &all);
                    (got, exact, (values.clone(), nmodes))
                }
                false => {
                    let mut got = Vec::new();
                    for (r, b) in output.iter().enumerate() {
                        let v = fetch_reals(&devs[r], b, 2 * (cuts[r + 1] - cuts[r]));
                        got.extend(v.chunks(2).map(|c| Complex64::new(c[0], c[1])));
                    }
                    let at: Vec<usize> = (0..m).collect();
                    let exact =
                        direct::type2(&xs, &mode_values, &modes, ModeOrder::Cmcl, sign, &at);
                    (got, exact, (mode_values.clone(), m))
                }
            };
            let err = direct::rel_error(&got, &exact);
            assert!(err < 10.0 * tol, "{ty:?} adjoint {adjoint}: {err:e}");
            // The same plan on host arrays.
            let mut on_host = vec![Complex64::default(); host.1];
            plan.set_points(&xs).unwrap();
            match adjoint {
                false => plan.execute(&host.0, &mut on_host).unwrap(),
                true => plan.execute_adjoint(&host.0, &mut on_host).unwrap(),
            }
            let apart = direct::rel_error(&got, &on_host);
            assert!(
                apart < 1e-12,
                "{ty:?} adjoint {adjoint}: {apart:e} from host arrays"
            );
            plan.set_points_distributed(&refs).unwrap();
        }
        // Typed errors, the plan left able to run.
        let refused = |r: Result<(), OpenClError>| {
            assert!(
                matches!(r, Err(OpenClError::Input(NudtError::Devices { .. }))),
                "{r:?}"
            );
        };
        let mut swapped = refs.clone();
        swapped.swap(0, 1);
        refused(plan.set_points_distributed(&swapped));
        refused(plan.set_points_distributed(&refs[..2]));
        let short: Vec<Buffer<f64>> = (0..3).map(|r| buffer(&devs[r], &[0.0; 2], 0)).collect();
        let short_refs: Vec<&Buffer<f64>> = short.iter().collect();
        let mut outs: Vec<Buffer<f64>> = (0..3)
            .map(|r| buffer(&devs[r], &vec![0.0; 2 * m], 0))
            .collect();
        let mut out_refs: Vec<&mut Buffer<f64>> = outs.iter_mut().collect();
        let r = plan.execute_distributed(&short_refs, &mut out_refs);
        assert!(
            matches!(r, Err(OpenClError::Input(NudtError::Length { .. }))),
            "{r:?}"
        );
        let mut bad = x[1].clone();
        bad[1000] = f64::NAN;
        let bad_share = buffer(&devs[1], &bad[100..1100], 0);
        let mut with_nan = refs.clone();
        let second = [refs[1][0], &bad_share, refs[1][2]];
        with_nan[1] = &second;
        let r = plan.set_points_distributed(&with_nan);
        assert!(
            matches!(
                r,
                Err(OpenClError::Input(NudtError::NonFinite { index: 1000, .. }))
            ),
            "{r:?}"
        );
    }
    // A stack as long as the devices runs whole transforms: no arrays on the devices.
    let opts = ClOptions::default();
    let mut plan =
        ClMultiPlan::<f64>::new(TransformType::Type1, &modes, (-1, 3, tol), &opts, &devs).unwrap();
    let b: Vec<Buffer<f64>> = (0..3).map(|r| buffer(&devs[r], &[0.1; 4], 0)).collect();
    let one: Vec<[&Buffer<f64>; 3]> = b.iter().map(|b| [b, b, b]).collect();
    let refs: Vec<&[&Buffer<f64>]> = one.iter().map(|a| &a[..]).collect();
    let r = plan.set_points_distributed(&refs);
    assert!(
        matches!(r, Err(OpenClError::Input(NudtError::Devices { .. }))),
        "{r:?}"
    );
}

/// The same on the GPUs of this machine, where it has two or more (`NUDT_REQUIRE_GPU=1`
/// makes fewer a failure): CUDA devices, each with its own context and stream.
#[cfg(feature = "cuda")]
mod cuda {
    use super::*;
    use nudt_runtime::cuda::{CudaContext, CudaFloat, CudaMultiPlan, CudaOptions, CudaPlan};

    runs!(CudaFloat: CudaMultiPlan => |p: &CudaMultiPlan<T>| p.points_per_device(), CudaPlan => |_| None);

    fn gpus() -> Option<usize> {
        let count = Backend::Cuda
            .available()
            .ok()
            .and_then(|_| CudaContext::device_count().ok())
            .unwrap_or(0) as usize;
        if count < 2 {
            if std::env::var("NUDT_REQUIRE_GPU").is_ok_and(|v| v == "1") {
                panic!("NUDT_REQUIRE_GPU=1 but {count} CUDA devices (two needed)");
            }
            eprintln!("SKIPPED: {count} CUDA devices (two needed)");
            return None;
        }
        Some(count)
    }

    /// [`compare`] over `count` GPUs with `ntransf` transforms; with one, each transform in
    /// slabs, whose exchanges go through NCCL where `NUDT_REQUIRE_NCCL=1` says they must.
    fn compare_cuda<T: CudaFloat>(
        ty: TransformType,
        modes: &[usize],
        (count, ntransf, adjoint): (usize, usize, bool),
        tol: f64,
    ) -> (f64, f64) {
        let opts = CudaOptions::default();
        let ids: Vec<usize> = (0..count).collect();
        let multi = CudaMultiPlan::<T>::new(ty, modes, (-1, ntransf, tol), &opts, &ids).unwrap();
        let one = CudaPlan::<T>::new(ty, modes, -1, ntransf, tol, opts).unwrap();
        if multi.spread() == Spread::Slabs
            && std::env::var("NUDT_REQUIRE_NCCL").is_ok_and(|v| v == "1")
        {
            assert_eq!(multi.link(), Some("nccl"), "NUDT_REQUIRE_NCCL=1");
        }
        let n0 = multi.fine_grid()[0];
        compare(ty, modes, (ntransf, adjoint, n0), (multi, one))
    }

    /// Types 1 and 2 in 2-D and 3-D, f64 and f32, over every GPU: one transform in slabs,
    /// and a stack of two (whole transforms on two GPUs).
    #[test]
    fn types_1_and_2_over_the_gpus() {
        let Some(count) = gpus() else {
            return;
        };
        for modes in [vec![40, 33], vec![24, 20, 18]] {
            for ty in [TransformType::Type1, TransformType::Type2] {
                for (ntransf, adjoint) in [(1, false), (1, true), (2, false)] {
                    let job = (count, ntransf, adjoint);
                    let (err, apart) = compare_cuda::<f64>(ty, &modes, job, 1e-6);
                    assert!(err < 1e-5 && apart < 1e-9, "{err:e} {apart:e}");
                    let (err, apart) = compare_cuda::<f32>(ty, &modes, job, 1e-4);
                    assert!(err < 1e-3 && apart < 1e-4, "{err:e} {apart:e}");
                }
            }
        }
    }
}

/// Points all in one slab leave the other devices none: they spread nothing (type 1) and
/// interpolate nothing (type 2), and the transforms still match the direct sum.
#[test]
fn devices_without_points() {
    let Some(devs) = devices(3) else {
        return;
    };
    let (modes, m) = ([16usize, 12], 300);
    let mut rng = Lcg(5);
    let x: Vec<Vec<f64>> = vec![
        (0..m).map(|_| 0.1 + 0.05 * rng.next()).collect(),
        (0..m).map(|_| PI * rng.next()).collect(),
    ];
    let xs: Vec<&[f64]> = x.iter().map(Vec::as_slice).collect();
    for ty in [TransformType::Type1, TransformType::Type2] {
        let opts = ClOptions::default();
        let mut plan = ClMultiPlan::<f64>::new(ty, &modes, (1, 1, 1e-6), &opts, &devs).unwrap();
        plan.set_points(&xs).unwrap();
        let per = plan.points_per_device().unwrap();
        assert_eq!(per.iter().filter(|&&p| p == 0).count(), 2, "{per:?}");
        let (a, b) = match ty {
            TransformType::Type1 => (m, 16 * 12),
            _ => (16 * 12, m),
        };
        let input = strengths(a, 3);
        let mut out = vec![Complex64::default(); b];
        plan.execute(&input, &mut out).unwrap();
        let all: Vec<usize> = (0..b).collect();
        let exact = match ty {
            TransformType::Type1 => direct::type1(&xs, &input, &modes, ModeOrder::Cmcl, 1, &all),
            _ => direct::type2(&xs, &input, &modes, ModeOrder::Cmcl, 1, &all),
        };
        let err = direct::rel_error(&out, &exact);
        assert!(err < 1e-5, "{ty:?}: {err:e}");
    }
}

/// The backend-generic interface over listed devices (`BackendOptions::with_devices`): a
/// type 2 plan over two openings of the OpenCL device is a multi-device plan behind
/// `NufftPlan` whose transform and adjoint match the direct sum; what it does not run is a
/// typed error, and a device this build cannot open is refused by number.
#[test]
fn listed_devices_behind_the_plan_interface() {
    use nudt_runtime::backend::{BackendError, BackendOptions};
    if devices(1).is_none() {
        return;
    }
    let (modes, m) = ([20usize, 18], 900);
    let x = points(2, m, 40);
    let xs: Vec<&[f64]> = x.iter().map(Vec::as_slice).collect();
    let opts = BackendOptions::default().with_devices(&[0, 0]);
    let mut plan = Backend::OpenCl
        .plan::<f64>(TransformType::Type2, &modes, -1, 1, 1e-8, &opts)
        .unwrap();
    let method = plan.report().method.unwrap();
    assert!(method.contains("slabs over 2 devices"), "{method}");
    plan.set_points(&xs).unwrap();
    assert_eq!(plan.point_counts(), Some(vec![(m, 0)]));
    let (f, c) = (strengths(20 * 18, 11), strengths(m, 12));
    let mut out = vec![Complex64::default(); m];
    plan.execute(&f, &mut out).unwrap();
    let all: Vec<usize> = (0..m).collect();
    let exact = direct::type2(&xs, &f, &modes, ModeOrder::Cmcl, -1, &all);
    assert!(direct::rel_error(&out, &exact) < 1e-6);
    let mut back = vec![Complex64::default(); 20 * 18];
    plan.execute_adjoint(&c, &mut back).unwrap();
    let all: Vec<usize> = (0..20 * 18).collect();
    let exact = direct::type1(&xs, &c, &modes, ModeOrder::Cmcl, 1, &all);
    assert!(direct::rel_error(&back, &exact) < 1e-6);
    let e = plan.interp_with_gradient(&f, &mut vec![Complex64::default(); 3 * m], false);
    assert!(
        matches!(e, Err(BackendError::Input(NudtError::NoGradient { .. }))),
        "{e:?}"
    );
    let e = plan.set_points_per_transform(&[&xs[..]]);
    assert!(
        matches!(
            e,
            Err(BackendError::Input(NudtError::Devices { devices: 2, .. }))
        ),
        "{e:?}"
    );
    for (devices, ty3) in [(&[0, 0][..], true), (&[0, 1][..], false)] {
        let opts = BackendOptions::default().with_devices(devices);
        let e = match ty3 {
            true => Backend::OpenCl.plan_type3::<f64>(2, 1, 1, 1e-6, &opts),
            false => Backend::OpenCl.plan::<f64>(TransformType::Type1, &modes, 1, 1, 1e-6, &opts),
        };
        let e = e.err().map(|e| e.to_string()).unwrap_or_default();
        let why = if ty3 {
            "type 3 runs on one device"
        } else {
            "OpenCL device 1"
        };
        assert!(e.contains(why), "{e}");
    }
    let cpu = Backend::Cpu.plan::<f64>(TransformType::Type1, &modes, 1, 1, 1e-6, &opts);
    assert!(matches!(
        cpu.err(),
        Some(BackendError::Input(NudtError::Devices { .. }))
    ));
}
