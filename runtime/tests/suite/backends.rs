//! One accuracy, edge-case and error suite for every backend ([`Backend::ALL`]): types 1, 2
//! and 3 in 1–3 dimensions, f32 and f64, over the tolerance range and every upsampling factor,
//! against the direct sum (error within 10× tol), and the Gaussian-gridding type 3; stacked transforms in batches, both mode
//! orders, points far outside [−π, π), empty point sets and single modes, points set again,
//! adjoints, every GPU method forced, and the typed errors of bad input, which every backend
//! names alike. Plans are made through the one plan interface, as `nudt transform --backend`
//! makes them.
//!
//! A backend runs where this build has it and the machine a device for it. One that is
//! missing says SKIPPED, unless the environment requires it: `NUDT_REQUIRE_GPU=1` (CUDA) or
//! `NUDT_REQUIRE_OPENCL=1` (`.ci/run`, which installs PoCL) make that a failure.
//! ```sh
//! cargo test --release -p nudt-runtime --features cuda,opencl --test suite backends::
//! ```

use crate::common;
use common::{backends, Lcg};
use nudt_gen::gpu::GpuMethod;
use nudt_runtime::backend::{Backend, BackendError, BackendFloat, BackendOptions, NufftPlan};
use nudt_runtime::direct;
use nudt_runtime::{ModeOrder, NudtError, TransformType, Type3Method, Upsampling};
use num_complex::{Complex, Complex64};
use std::f64::consts::PI;

/// Asserts that `$result` is backend `$b`'s typed refusal of bad input, the error matching
/// `$error` (a [`NudtError`] pattern).
macro_rules! refused {
    ($b:expr, $result:expr, $error:pat) => {
        assert!(
            matches!($result, Err(BackendError::Input($error))),
            "{}",
            $b
        )
    };
}

/// The GPU backends among [`backends`]: the ones with methods to force and batches to size.
fn gpus() -> Vec<Backend> {
    backends()
        .into_iter()
        .filter(|&b| b != Backend::Cpu)
        .collect()
}

/// Why `e` is a method refused by a device too small for its blocks (an OpenCL device with
/// less than 64 KiB of local memory, such as a GPU's 48 KiB), or `None` where it is a failure.
fn refusal(e: &BackendError) -> Option<String> {
    #[cfg(feature = "opencl")]
    if let BackendError::OpenCl(nudt_runtime::opencl::OpenClError::Method { why, .. }) = e {
        let small =
            nudt_runtime::opencl::ClDevice::first().is_ok_and(|d| d.info.local_mem < 64 << 10);
        return small.then(|| why.clone());
    }
    let _ = e;
    None
}

fn sign(ty: TransformType) -> i32 {
    if ty == TransformType::Type2 {
        -1
    } else {
        1
    }
}

fn wide<T: BackendFloat>(v: &Complex<T>) -> Complex64 {
    Complex64::new(v.re.to_f64().unwrap(), v.im.to_f64().unwrap())
}

/// `dim` coordinate arrays of `n` values in `centre ± half`, rounded to `T`.
fn points<T: BackendFloat>(
    rng: &mut Lcg,
    dim: usize,
    n: usize,
    half: f64,
    centre: f64,
) -> Vec<Vec<T>> {
    (0..dim)
        .map(|_| {
            (0..n)
                .map(|_| T::from(centre + half * rng.next()).unwrap())
                .collect()
        })
        .collect()
}

fn complexes<T: BackendFloat>(rng: &mut Lcg, n: usize) -> Vec<Complex<T>> {
    (0..n)
        .map(|_| Complex::new(T::from(rng.next()).unwrap(), T::from(rng.next()).unwrap()))
        .collect()
}

/// The coordinates as the plan saw them, widened for the direct sum.
fn widened<T: BackendFloat>(v: &[Vec<T>]) -> Vec<Vec<f64>> {
    v.iter()
        .map(|d| d.iter().map(|c| c.to_f64().unwrap()).collect())
        .collect()
}

fn slices<T>(v: &[Vec<T>]) -> Vec<&[T]> {
    v.iter().map(|x| &x[..]).collect()
}

/// The relative l2 error of `ntransf` stacked transforms, `out` (`n` values each) computed
/// from `input` (`a` values each), at the outputs `which` against `reference` (one
/// transform's widened input and `which` → the direct sum there).
fn stacked_error<T: BackendFloat>(
    input: &[Complex<T>],
    out: &[Complex<T>],
    [ntransf, a, n]: [usize; 3],
    which: &[usize],
    reference: impl Fn(&[Complex64], &[usize]) -> Vec<Complex64>,
) -> f64 {
    let (mut got, mut want) = (Vec::new(), Vec::new());
    for t in 0..ntransf {
        let c: Vec<Complex64> = input[t * a..(t + 1) * a].iter().map(wide).collect();
        want.extend(reference(&c, which));
        got.extend(which.iter().map(|&i| wide(&out[t * n + i])));
    }
    direct::rel_error(&got, &want)
}

/// A type 1 or 2 transform of `ntransf` stacked inputs at `m` points in `[−spread, spread)^d`,
/// checked against the direct sum at a sample of outputs; returns the relative l2 error over
/// every transform and the method the plan reports, or the plan's refusal.
#[allow(clippy::too_many_arguments)]
fn check_with<T: BackendFloat>(
    b: Backend,
    ty: TransformType,
    modes: &[usize],
    m: usize,
    ntransf: usize,
    tol: f64,
    opts: &BackendOptions,
    spread: f64,
) -> Result<(f64, String), BackendError> {
    let order = opts.cpu.mode_order;
    let dim = modes.len();
    let mut rng = Lcg(m as u64 * 31 + dim as u64);
    let x = points::<T>(&mut rng, dim, m, spread, 0.0);
    let nmodes: usize = modes.iter().product();
    let (a, n) = match ty {
        TransformType::Type1 => (m, nmodes),
        _ => (nmodes, m),
    };
    let input = complexes::<T>(&mut rng, a * ntransf);
    let mut p = b.plan::<T>(ty, modes, sign(ty), ntransf, tol, opts)?;
    p.set_points(&slices(&x))?;
    let mut out = vec![Complex::<T>::default(); n * ntransf];
    p.execute(&input, &mut out)?;
    let xr = widened(&x);
    let which: Vec<usize> = (0..n).step_by((n / 40).max(1)).collect();
    let e = stacked_error(&input, &out, [ntransf, a, n], &which, |c, w| match ty {
        TransformType::Type1 => direct::type1(&slices(&xr), c, modes, order, 1, w),
        _ => direct::type2(&slices(&xr), c, modes, order, -1, w),
    });
    Ok((e, p.report().method.unwrap_or_default()))
}

/// A type 3 transform of `ntransf` stacked strength vectors: `m` sources in `shift ± a`, `k`
/// targets in `−shift/2 ± b`; returns the relative l2 error over every target of every
/// transform against the direct sum, and the method the plan reports, or its refusal.
#[allow(clippy::too_many_arguments)]
fn check3_with<T: BackendFloat>(
    b: Backend,
    dim: usize,
    [m, k]: [usize; 2],
    [ha, hb]: [f64; 2],
    shift: f64,
    ntransf: usize,
    tol: f64,
    opts: &BackendOptions,
) -> Result<(f64, String), BackendError> {
    let mut rng = Lcg(m as u64 * 7 + k as u64 * 3 + dim as u64);
    let x = points::<T>(&mut rng, dim, m, ha, shift);
    let s = points::<T>(&mut rng, dim, k, hb, -0.5 * shift);
    let c = complexes::<T>(&mut rng, m * ntransf);
    let mut p = b.plan_type3::<T>(dim, 1, ntransf, tol, opts)?;
    // The kernel, and so a forced method's fit, is known once the points' extents are.
    p.set_points_type3(&slices(&x), &slices(&s))?;
    let mut out = vec![Complex::<T>::default(); k * ntransf];
    p.execute(&c, &mut out)?;
    let (xr, sr) = (widened(&x), widened(&s));
    let which: Vec<usize> = (0..k).collect();
    let e = stacked_error(&c, &out, [ntransf, m, k], &which, |c, w| {
        direct::type3(&slices(&xr), c, &slices(&sr), 1, w)
    });
    Ok((e, p.report().method.unwrap_or_default()))
}

/// The tolerances of the matrix on backend `b` in precision `T`: every decade on the CPU and
/// CUDA; on OpenCL a middle and the finest one, since each kernel width is a few program
/// builds there (its spreading and interpolation grids, their FFTs), and CI's PoCL, starting
/// with no cache, takes seconds a build.
fn tolerances<T: BackendFloat>(b: Backend) -> &'static [f64] {
    use nudt_gen::Precision::{F32, F64};
    match (b, T::PRECISION) {
        (Backend::OpenCl, F64) => &[1e-6, 1e-12],
        (Backend::OpenCl, F32) => &[1e-4],
        (_, F64) => &[
            1e-2, 1e-3, 1e-4, 1e-5, 1e-6, 1e-7, 1e-8, 1e-9, 1e-10, 1e-11, 1e-12,
        ],
        (_, F32) => &[1e-2, 1e-3, 1e-4, 1e-5, 1e-6],
    }
}

/// The tolerance of the tests beside the matrix in `T` on backend `b`: tight, but on OpenCL one
/// of the matrix's, whose kernels are then built already (see [`tolerances`]).
fn tol<T: BackendFloat>(b: Backend) -> f64 {
    use nudt_gen::Precision::{F32, F64};
    match (b, T::PRECISION) {
        (Backend::OpenCl, F64) => 1e-6,
        (Backend::OpenCl, F32) => 1e-4,
        (_, F64) => 1e-9,
        (_, F32) => 1e-5,
    }
}

/// The modes of the problems in `dim` dimensions: odd and even counts, the same in every
/// test (a fine grid's FFT is one program build on OpenCL).
fn modes(dim: usize) -> &'static [usize] {
    match dim {
        1 => &[57],
        2 => &[24, 17],
        _ => &[10, 9, 12],
    }
}

/// Types 1, 2 and 3 in 1–3 D at each tolerance of `tols` with `opts` on backend `b`: the
/// labels of the errors above 10·tol. Points cover three periods (type 1/2) or sit off
/// centre (type 3). A tolerance the options' σ cannot reach within the widest kernel (a
/// typed error: `errors_name_the_problem`) is left out.
fn matrix<T: BackendFloat>(
    b: Backend,
    tols: &[f64],
    opts: &BackendOptions,
    name: &str,
) -> Vec<String> {
    let mut failures = Vec::new();
    for dim in 1..=3 {
        let modes = modes(dim);
        for &tol in tols {
            if let Some(sigma) = opts.cpu.upsampling {
                let spec =
                    nudt_gen::KernelSpec::for_tolerance(opts.cpu.kernel, tol, sigma, T::PRECISION);
                if spec.is_err() {
                    continue;
                }
            }
            let mut cases = Vec::new();
            for ty in [TransformType::Type1, TransformType::Type2] {
                let r = check_with::<T>(b, ty, modes, 500, 1, tol, opts, 3.0 * PI);
                cases.push((format!("{ty:?}"), r));
            }
            let r = check3_with::<T>(b, dim, [500, 200], [3.0, 10.0], 1.0, 1, tol, opts);
            cases.push(("Type3".into(), r));
            for (ty, r) in cases {
                let label = format!("{b} {name} {ty} {dim}D tol {tol:.0e}");
                match r {
                    Ok((e, _)) => {
                        eprintln!("{label}: rel. error {e:.2e}");
                        if e > 10.0 * tol {
                            failures.push(format!("{label}: {e:.2e}"));
                        }
                    }
                    // A type 3 at a fixed σ that cannot reach `tol` (its split tolerance
                    // needs a kernel past the widest, or the correction amplifies rounding
                    // past it) is refused by design.
                    Err(BackendError::Input(
                        NudtError::Type3Rounding { .. }
                        | NudtError::Gen(nudt_gen::GenError::WidthForTolerance { .. }),
                    )) if ty == "Type3" => {}
                    Err(e) => failures.push(format!("{label}: {e}")),
                }
            }
        }
    }
    failures
}

fn assert_none(failures: Vec<String>) {
    assert!(
        failures.is_empty(),
        "errors above 10·tol:\n{}",
        failures.join("\n")
    );
}

#[test]
fn f64_within_ten_times_tolerance() {
    for b in backends() {
        let tols = tolerances::<f64>(b);
        assert_none(matrix::<f64>(b, tols, &BackendOptions::default(), "f64"));
    }
}

#[test]
fn f32_within_ten_times_tolerance() {
    for b in backends() {
        let tols = tolerances::<f32>(b);
        assert_none(matrix::<f32>(b, tols, &BackendOptions::default(), "f32"));
    }
}

/// σ anywhere in [1.25, 2.5] (the type 3 planner picks 1.4 and 1.5 too, the type 1/2 planner
/// 2.2–2.35 for dense 2-D and 3-D problems): the width and shape rules hold between and past
/// FINUFFT's two factors, for the PSWF and the ES kernel. The rules are the plan layer's, the
/// same on every backend (`recipes.rs`), so the CPU takes the whole range; CUDA the two ends
/// at a middle tolerance, where its kernels' shapes are furthest from σ = 2's; OpenCL none:
/// its kernels are CUDA's templates in another dialect, and each a slow build on PoCL (the
/// whole range took over ten minutes there).
#[test]
fn every_upsampling_factor_within_ten_times_tolerance() {
    use nudt_gen::KernelKind::{Es, Pswf};
    let mut failures = Vec::new();
    for b in backends() {
        let (kernels, sigmas, f64_tols, f32_tols) = match b {
            Backend::Cpu => (
                &[Pswf, Es][..],
                &[1.25, 1.4, 1.5, 1.75, 2.0, 2.25, 2.5][..],
                &[1e-3, 1e-6, 1e-9, 1e-12][..],
                &[1e-2, 1e-4, 1e-5][..],
            ),
            Backend::Cuda => (&[Pswf, Es][..], &[1.25, 2.5][..], &[1e-6][..], &[1e-4][..]),
            Backend::OpenCl => (&[][..], &[][..], &[][..], &[][..]),
        };
        for &kernel in kernels {
            for &sigma in sigmas {
                let up = Some(Upsampling::new(sigma).unwrap());
                let opts = BackendOptions::default().with_kernel(kernel, up);
                let name = format!("{kernel:?} σ = {sigma}");
                failures.extend(matrix::<f64>(b, f64_tols, &opts, &name));
                failures.extend(matrix::<f32>(b, f32_tols, &opts, &name));
            }
        }
    }
    assert_none(failures);
}

/// Stacked transforms, the FFT mode order and points far outside [−π, π); on a GPU in
/// batches of 4 (through the plan's buffers) and a last one of 3 (its own FFT).
#[test]
fn batches_mode_order_and_far_points() {
    for b in backends() {
        for ty in [TransformType::Type1, TransformType::Type2] {
            let t = tol::<f64>(b);
            let fft = BackendOptions::default().with_mode_order(ModeOrder::Fft);
            let (e, _) = check_with::<f64>(b, ty, modes(2), 300, 3, t, &fft, 40.0).unwrap();
            eprintln!("{b} {ty:?} 3 stacked, FFT order, |x| < 40: {e:.2e}");
            assert!(e <= 10.0 * t, "{b} {ty:?}: {e:e}");
            let opts = BackendOptions::default().with_gpu_batch(4);
            let (e, _) = check_with::<f64>(b, ty, modes(2), 250, 11, t, &opts, 3.0).unwrap();
            eprintln!("{b} {ty:?} 11 stacked, batches of 4: {e:.2e}");
            assert!(e <= 10.0 * t, "{b} {ty:?}: {e:e}");
        }
    }
}

/// Stacked type 3 transforms on point sets off centre and with wide extents (large
/// space-bandwidth product, sources around 30), and in batches of 2 on a GPU.
#[test]
fn type_3_batches_and_extents() {
    for b in backends() {
        let t = tol::<f64>(b);
        let none = BackendOptions::default();
        let r = check3_with::<f64>(b, 2, [500, 200], [20.0, 10.0], 30.0, 3, t, &none);
        let (e, _) = r.unwrap();
        eprintln!("{b} type 3 2D, 3 stacked, |x - 30| < 20, |s + 15| < 10: {e:.2e}");
        assert!(e <= 10.0 * t, "{b}: {e:e}");
        let opts = BackendOptions::default().with_gpu_batch(2);
        let r = check3_with::<f64>(b, 1, [300, 120], [4.0, 30.0], 2.0, 5, t, &opts);
        let (e, _) = r.unwrap();
        eprintln!("{b} type 3 1D, 5 stacked, batches of 2: {e:.2e}");
        assert!(e <= 10.0 * t, "{b}: {e:e}");
    }
}

/// The Gaussian-gridding type 3 (Capozzoli et al.'s parameters), 1–3 D in f64 (the method's
/// precision: its windows' tails are summed in double), three stacked transforms in batches of
/// 2 on a GPU: forward, and the adjoint on the same plan, against the direct sums. OpenCL takes
/// one tolerance (each window width is a program build per dimension on PoCL).
#[test]
fn gaussian_type3_forward_and_adjoint() {
    let opts = BackendOptions::default()
        .with_type3(Type3Method::GaussianCapozzoli)
        .with_gpu_batch(2);
    for b in backends() {
        let tols: &[f64] = match b {
            Backend::OpenCl => &[1e-6],
            _ => &[1e-4, 1e-7, 1e-10],
        };
        for dim in 1..=3 {
            for &tol in tols {
                let label = format!("{b} Gaussian type 3 {dim}D tol {tol:.0e}");
                let r = check3_with::<f64>(b, dim, [400, 150], [3.0, 8.0], 1.0, 3, tol, &opts);
                let (e, _) = r.unwrap_or_else(|e| panic!("{label}: {e}"));
                eprintln!("{label}: rel. error {e:.2e}");
                assert!(e <= 10.0 * tol, "{label}: {e:e}");
                let mut rng = Lcg(dim as u64 + 17);
                let x = points::<f64>(&mut rng, dim, 400, 3.0, 1.0);
                let s = points::<f64>(&mut rng, dim, 150, 8.0, -0.5);
                let mut p = b.plan_type3::<f64>(dim, 1, 3, tol, &opts).unwrap();
                p.set_points_type3(&slices(&x), &slices(&s)).unwrap();
                let ty = TransformType::Type3;
                let e = adjoint_error(&mut *p, ty, 1, &[], &x, &s, 3, &mut rng);
                eprintln!("{label}, adjoint: rel. error {e:.2e}");
                assert!(e <= 10.0 * tol, "{label}, adjoint: {e:e}");
            }
        }
    }
}

/// Empty point sets (zeros out, or nothing), one mode, one point.
#[test]
fn empty_sets_and_single_modes() {
    let none = BackendOptions::default();
    for b in backends() {
        let mut p = b
            .plan::<f64>(TransformType::Type1, &[5, 4], 1, 2, 1e-6, &none)
            .unwrap();
        p.set_points(&[&[], &[]]).unwrap();
        let mut f = vec![Complex64::new(7.0, 7.0); 40];
        p.execute(&[], &mut f).unwrap();
        assert!(f.iter().all(|v| *v == Complex64::default()), "{b}");
        let mut p = b
            .plan::<f64>(TransformType::Type2, &[3], -1, 1, 1e-6, &none)
            .unwrap();
        p.set_points(&[&[]]).unwrap();
        p.execute(&[Complex64::new(1.0, 0.0); 3], &mut []).unwrap();
        for ty in [TransformType::Type1, TransformType::Type2] {
            let t = tol::<f64>(b);
            let cmcl = none.clone().with_mode_order(ModeOrder::Cmcl);
            let (e, _) = check_with::<f64>(b, ty, &[1], 50, 1, t, &cmcl, 3.0).unwrap();
            assert!(e <= 10.0 * t, "{b} {ty:?} one mode: {e:e}");
            let fft = none.clone().with_mode_order(ModeOrder::Fft);
            let (e, _) = check_with::<f64>(b, ty, &[1, 7, 1], 1, 1, t, &fft, 3.0).unwrap();
            assert!(e <= 10.0 * t, "{b} {ty:?} 3D, one point: {e:e}");
        }
        let mut p3 = b.plan_type3::<f64>(1, -1, 1, 1e-6, &none).unwrap();
        p3.set_points_type3(&[&[]], &[&[0.5, 1.5]]).unwrap();
        let mut g = vec![Complex64::new(1.0, 1.0); 2];
        p3.execute(&[], &mut g).unwrap();
        assert!(g.iter().all(|v| *v == Complex64::default()), "{b}");
        p3.set_points_type3(&[&[0.5, 1.5]], &[&[]]).unwrap();
        p3.execute(&[Complex64::new(1.0, 0.0); 2], &mut []).unwrap();
        let t = tol::<f64>(b);
        let (e, _) = check3_with::<f64>(b, 3, [1, 40], [1.0, 3.0], 0.0, 1, t, &none).unwrap();
        assert!(e <= 10.0 * t, "{b} type 3, one source: {e:e}");
    }
}

/// A type 3 plan whose points are set again: with sets of the same extents (the grids are
/// kept) and then wider ones (new grids); each result against the direct sum.
#[test]
fn type_3_points_set_again() {
    for b in backends() {
        let mut p = b
            .plan_type3::<f64>(2, 1, 1, tol::<f64>(b), &BackendOptions::default())
            .unwrap();
        let mut rng = Lcg(5);
        for (round, (ha, hb)) in [(3.0, 5.0), (3.0, 5.0), (6.0, 9.0)].into_iter().enumerate() {
            let (m, k) = (800, 150);
            let (mut x, mut s) = (
                points::<f64>(&mut rng, 2, m, ha, 0.0),
                points::<f64>(&mut rng, 2, k, hb, 0.0),
            );
            // The first points of each set at the extent's edges, so the extents repeat.
            for d in 0..2 {
                [x[d][0], x[d][1], s[d][0], s[d][1]] = [ha, -ha, hb, -hb];
            }
            let c = complexes::<f64>(&mut rng, m);
            let (xs, ss) = (slices(&x), slices(&s));
            p.set_points_type3(&xs, &ss).unwrap();
            let mut out = vec![Complex64::default(); k];
            p.execute(&c, &mut out).unwrap();
            let which: Vec<usize> = (0..k).collect();
            let e = direct::rel_error(&out, &direct::type3(&xs, &c, &ss, 1, &which));
            eprintln!("{b} type 3 set again, round {round}: {e:.2e}");
            assert!(e <= 10.0 * tol::<f64>(b), "{b} round {round}: {e:e}");
        }
    }
}

/// The adjoint of `p` (sign `isign` forward) on `ntransf` stacked inputs, checked against the
/// direct sum of the adjoint: type 1's is a type 2 with the opposite sign, type 2's a type 1,
/// type 3's the sum from the targets `s` back to the sources `x`. Returns the relative l2
/// error.
#[allow(clippy::too_many_arguments)]
fn adjoint_error<T: BackendFloat>(
    p: &mut dyn NufftPlan<T>,
    ty: TransformType,
    isign: i32,
    modes: &[usize],
    x: &[Vec<T>],
    s: &[Vec<T>],
    ntransf: usize,
    rng: &mut Lcg,
) -> f64 {
    let (xr, sr) = (widened(x), widened(s));
    let (xr, sr) = (slices(&xr), slices(&sr));
    let (m, nmodes) = (x[0].len(), modes.iter().product::<usize>());
    // The adjoint's input and output lengths: the forward's output and input.
    let (a, n) = match ty {
        TransformType::Type1 => (nmodes, m),
        TransformType::Type2 => (m, nmodes),
        TransformType::Type3 => (s[0].len(), m),
    };
    let v = complexes::<T>(rng, a * ntransf);
    let mut out = vec![Complex::<T>::default(); n * ntransf];
    p.execute_adjoint(&v, &mut out).unwrap();
    let which: Vec<usize> = (0..n).step_by((n / 40).max(1)).collect();
    let order = ModeOrder::Cmcl;
    stacked_error(&v, &out, [ntransf, a, n], &which, |v, w| match ty {
        TransformType::Type1 => direct::type2(&xr, v, modes, order, -isign, w),
        TransformType::Type2 => direct::type1(&xr, v, modes, order, -isign, w),
        TransformType::Type3 => direct::type3(&sr, v, &xr, -isign, w),
    })
}

/// `execute_adjoint` of every type, 1–3 D, three stacked transforms (in batches of 2 on a
/// GPU: a remainder batch), against the direct sum of the adjoint; on a GPU also by every
/// method of the adjoint's own step (type 1's interpolates on a grid shaped for spreading,
/// type 2's spreads on one shaped for interpolation).
fn adjoints<T: BackendFloat>(b: Backend, tol: f64) {
    use GpuMethod::{GmSort, OutputDriven, Sm};
    let name = std::any::type_name::<T>();
    let gpu = b != Backend::Cpu;
    for dim in 1..=3 {
        let modes = modes(dim);
        let mut rng = Lcg(dim as u64 + 99);
        let x = points::<T>(&mut rng, dim, 900, 3.0, 0.0);
        let s = points::<T>(&mut rng, dim, 300, 7.0, 0.0);
        let mut rng = Lcg(dim as u64 + 7);
        let cases: [(TransformType, &[Option<GpuMethod>]); 3] = [
            (TransformType::Type1, &[None, Some(GmSort), Some(Sm)]),
            (
                TransformType::Type2,
                &[None, Some(GmSort), Some(Sm), Some(OutputDriven)],
            ),
            (TransformType::Type3, &[None]),
        ];
        for (ty, methods) in cases {
            for &method in methods.iter().filter(|m| gpu || m.is_none()) {
                let isign = sign(ty);
                let opts = BackendOptions::default().with_gpu_batch(2);
                let opts = match ty {
                    TransformType::Type1 => opts.with_gpu_methods(None, method),
                    _ => opts.with_gpu_methods(method, None),
                };
                let label = format!("{b} {name} {ty:?} {dim}D adjoint, {method:?}");
                let made = if ty == TransformType::Type3 {
                    b.plan_type3::<T>(dim, isign, 3, tol, &opts)
                } else {
                    b.plan::<T>(ty, modes, isign, 3, tol, &opts)
                };
                let mut p = match made {
                    Err(e) if refusal(&e).is_some() => {
                        eprintln!("{label}: refused ({e})");
                        continue;
                    }
                    r => r.unwrap(),
                };
                if ty == TransformType::Type3 {
                    p.set_points_type3(&slices(&x), &slices(&s)).unwrap();
                } else {
                    p.set_points(&slices(&x)).unwrap();
                }
                let e = adjoint_error(&mut *p, ty, isign, modes, &x, &s, 3, &mut rng);
                eprintln!("{label}: rel. error {e:.2e}");
                assert!(e <= 10.0 * tol, "{label}: {e:e}");
            }
        }
    }
}

#[test]
fn adjoints_match_the_direct_sum() {
    for b in backends() {
        adjoints::<f32>(b, tol::<f32>(b));
        adjoints::<f64>(b, tol::<f64>(b));
    }
}

/// Every GPU spreading method (GM-sort, SM, output-driven) and interpolation method (GM-sort,
/// SM), forced, in types 1, 2 and 3, 1–3 D, both precisions, against the direct sum; the plan
/// must report the method asked for. The point sets are dense enough that bins hold several
/// subproblems of `MAX_SUBPROBLEM` points. A device too small for a method's blocks may
/// refuse it with a typed error ([`refusal`]).
fn methods<T: BackendFloat>(b: Backend, tol: f64) {
    use GpuMethod::{GmSort, OutputDriven, Sm};
    let name = std::any::type_name::<T>();
    for dim in 1..=3 {
        let modes = modes(dim);
        for (ty, methods) in [
            (TransformType::Type1, &[GmSort, Sm, OutputDriven][..]),
            (TransformType::Type2, &[GmSort, Sm]),
            (TransformType::Type3, &[GmSort, Sm, OutputDriven]),
        ] {
            for &method in methods {
                let result = if ty == TransformType::Type3 {
                    let opts = BackendOptions::default().with_gpu_methods(Some(method), None);
                    check3_with::<T>(b, dim, [3000, 200], [3.0, 6.0], 0.5, 2, tol, &opts)
                } else {
                    let (spread, interp) = match ty {
                        TransformType::Type1 => (Some(method), None),
                        _ => (None, Some(method)),
                    };
                    let opts = BackendOptions::default().with_gpu_methods(spread, interp);
                    check_with::<T>(b, ty, modes, 3000, 2, tol, &opts, PI)
                };
                let label = format!("{b} {name} {ty:?} {dim}D {method:?}");
                let (e, got) = match result {
                    Err(e) if refusal(&e).is_some() => {
                        eprintln!("{label}: refused ({e})");
                        continue;
                    }
                    r => r.unwrap_or_else(|e| panic!("{label}: {e}")),
                };
                eprintln!("{label}: rel. error {e:.2e}");
                assert_eq!(got, method.name(), "{label}");
                assert!(e <= 10.0 * tol, "{label}: {e:e}");
            }
        }
    }
}

#[test]
fn every_gpu_method_f32() {
    for b in gpus() {
        methods::<f32>(b, tol::<f32>(b));
    }
}

#[test]
fn every_gpu_method_f64() {
    for b in gpus() {
        methods::<f64>(b, tol::<f64>(b));
    }
}

/// Bad input gets the same typed error on every backend, naming the problem.
#[test]
fn errors_name_the_problem() {
    let none = BackendOptions::default();
    for b in backends() {
        let plan = |modes: &[usize], ntransf| {
            b.plan::<f64>(TransformType::Type1, modes, 1, ntransf, 1e-6, &none)
        };
        refused!(b, plan(&[0], 1), NudtError::Gen(_));
        refused!(b, plan(&[8], 0), NudtError::ZeroTransforms);
        refused!(
            b,
            b.plan_type3::<f64>(4, 1, 1, 1e-6, &none),
            NudtError::Gen(_)
        );
        let mut p3 = b.plan_type3::<f64>(2, 1, 1, 1e-6, &none).unwrap();
        let z = [0.0f64; 3];
        refused!(
            b,
            p3.execute(&[Complex::default(); 3], &mut [Complex::default(); 3]),
            NudtError::PointsNotSet
        );
        refused!(
            b,
            p3.set_points(&[&z, &z]),
            NudtError::WrongType {
                expected: 1,
                actual: 3
            }
        );
        refused!(
            b,
            p3.set_points_type3(&[&z, &z], &[&z, &[0.0, f64::INFINITY, 0.0]]),
            NudtError::NonFinite {
                what: "t",
                index: 1,
                ..
            }
        );
        refused!(
            b,
            p3.set_points_type3(&[&z, &z], &[&z[..2], &z[..2]])
                .and_then(|_| p3.execute(&[Complex::default(); 2], &mut [Complex::default(); 2])),
            NudtError::Length { .. }
        );
        let mut p = b
            .plan::<f32>(TransformType::Type1, &[16, 16], 1, 1, 1e-5, &none)
            .unwrap();
        let mut out = vec![Complex::default(); 256];
        let w = [0.0f32];
        refused!(
            b,
            p.set_points_type3(&[&w, &w], &[&w, &w]),
            NudtError::WrongType {
                expected: 3,
                actual: 1
            }
        );
        refused!(
            b,
            p.execute(&[Complex::default(); 4], &mut out),
            NudtError::PointsNotSet
        );
        let x = [0.1f32, f32::NAN];
        refused!(
            b,
            p.set_points(&[&x, &x]),
            NudtError::NonFinite {
                what: "x",
                index: 1,
                ..
            }
        );
        let y = [0.1f32, 0.2];
        p.set_points(&[&y, &y]).unwrap();
        match p.execute(&[Complex::default(); 3], &mut out) {
            Err(BackendError::Input(NudtError::Length { what, .. })) => {
                assert!(what.contains("strengths"), "{b}: {what}")
            }
            r => panic!("{b}: a short input gave {r:?}"),
        }
        // A tolerance no kernel reaches in f32.
        let r = b.plan::<f32>(TransformType::Type1, &[16], 1, 1, 1e-12, &none);
        refused!(b, r, _);
    }
}

/// Type 3 sources within a subnormal of 0 facing targets at ±1e300 and ±f64::MAX (phases
/// s·x near 1), and the sets swapped, by both methods: within 10·tol of the direct sum on
/// every backend. The grid's scale `2σS` overflowed to ∞ there (NaN, or every source at 0:
/// errors 0.07 to 1.5), and a subnormal extent counted as a point (runtime/tests/fuzz.rs).
#[test]
fn type3_subnormal_sources_facing_huge_targets() {
    let tiny = [-3.6e-309, -7e-310, 1e-309, 2.5e-309];
    let huge = [f64::MAX, -1e300, 1e308, -f64::MAX, 3.0];
    let mut failures = Vec::new();
    for b in backends() {
        for method in [Type3Method::Finufft, Type3Method::GaussianCapozzoli] {
            for (x, s) in [(&tiny[..], &huge[..]), (&huge[..], &tiny[..])] {
                let opts = BackendOptions::default().with_type3(method);
                let mut rng = Lcg(3);
                let c = complexes::<f64>(&mut rng, x.len());
                let mut p = b.plan_type3::<f64>(1, 1, 1, 1e-6, &opts).unwrap();
                p.set_points_type3(&[x], &[s]).unwrap();
                let mut out = vec![Complex64::default(); s.len()];
                p.execute(&c, &mut out).unwrap();
                let all: Vec<usize> = (0..s.len()).collect();
                let want = direct::type3(&[x], &c, &[s], 1, &all);
                let e = direct::rel_error(&out, &want);
                if e.is_nan() || e > 1e-5 {
                    failures.push(format!("{b} {method:?} x {x:?}: error {e:e}"));
                }
            }
        }
    }
    assert_none(failures);
}
