//! The OpenCL backend's NUFFTs (PoCL on a CPU in CI) against the direct sum: types 1, 2 and
//! 3, 1–3 dimensions, f32 and f64, over a range of tolerances (error within 10× tol, as the
//! CPU and CUDA suites ask), stacked transforms, both mode orders, points far outside
//! [−π, π), empty point sets and single modes, and the typed errors. Plans are made through the one plan interface
//! (`nudt_runtime::backend`), as `nudt transform --backend opencl` makes them.
//!
//! Without an OpenCL platform the tests say SKIPPED, unless `NUDT_REQUIRE_OPENCL=1` (set by
//! `.ci/run`, which installs PoCL) makes that a failure.
//! ```sh
//! cargo test --release -p nudt-runtime --features opencl --test opencl_nufft
//! ```

mod common;
use common::Lcg;
use nudt_runtime::backend::{Backend, BackendError, BackendFloat, BackendOptions, NufftPlan};
use nudt_runtime::direct;
use nudt_runtime::opencl::{ClDevice, CudaMethod, OpenClError};
use nudt_runtime::{ModeOrder, NudtError, TransformType};
use num_complex::{Complex, Complex64};

fn have_device() -> bool {
    match ClDevice::first() {
        Ok(_) => true,
        Err(e) => {
            let msg = format!("SKIPPED: no OpenCL device ({e})");
            if std::env::var("NUDT_REQUIRE_OPENCL").is_ok_and(|v| v == "1") {
                panic!("NUDT_REQUIRE_OPENCL=1 but {msg}");
            }
            eprintln!("{msg}");
            false
        }
    }
}

/// Whether the device runs plans: they need `cl_khr_fp64` in both precisions (coordinates
/// are reduced in double). Without, the tests say SKIPPED, or fail where
/// `NUDT_REQUIRE_OPENCL=1` (CI's PoCL has it).
fn have_fp64() -> bool {
    if !have_device() {
        return false;
    }
    let dev = ClDevice::first().unwrap();
    if !dev.info.fp64 {
        let msg = format!(
            "SKIPPED: {} has no cl_khr_fp64, which plans need",
            dev.info.name
        );
        if std::env::var("NUDT_REQUIRE_OPENCL").is_ok_and(|v| v == "1") {
            panic!("NUDT_REQUIRE_OPENCL=1 but {msg}");
        }
        eprintln!("{msg}");
    }
    dev.info.fp64
}

/// Options with the mode order `order` and the spreading and interpolation methods `methods`
/// (`None`: the planner's choice).
fn options(order: ModeOrder, methods: [Option<CudaMethod>; 2]) -> BackendOptions {
    let mut opts = BackendOptions::default();
    opts.opencl.mode_order = order;
    [opts.opencl.spread, opts.opencl.interp] = methods;
    opts
}

fn plan<T: BackendFloat>(
    ty: TransformType,
    modes: &[usize],
    ntransf: usize,
    tol: f64,
    order: ModeOrder,
) -> Result<Box<dyn NufftPlan<T>>, BackendError> {
    plan_with(ty, modes, ntransf, tol, &options(order, [None; 2]))
}

fn plan_with<T: BackendFloat>(
    ty: TransformType,
    modes: &[usize],
    ntransf: usize,
    tol: f64,
    opts: &BackendOptions,
) -> Result<Box<dyn NufftPlan<T>>, BackendError> {
    let isign = if ty == TransformType::Type1 { 1 } else { -1 };
    Backend::OpenCl.plan::<T>(ty, modes, isign, ntransf, tol, opts)
}

/// One transform checked against the direct sum at a sample of outputs; returns the
/// relative l2 error over all stacked transforms.
fn check<T: BackendFloat>(
    ty: TransformType,
    modes: &[usize],
    m: usize,
    ntransf: usize,
    tol: f64,
    order: ModeOrder,
    spread: f64,
) -> f64 {
    let opts = options(order, [None; 2]);
    check_with::<T>(ty, modes, m, ntransf, tol, &opts, spread)
        .unwrap()
        .0
}

/// As [`check`], with `opts`; returns the error and the method the plan reports, or the
/// plan's refusal.
fn check_with<T: BackendFloat>(
    ty: TransformType,
    modes: &[usize],
    m: usize,
    ntransf: usize,
    tol: f64,
    opts: &BackendOptions,
    spread: f64,
) -> Result<(f64, String), BackendError> {
    let order = opts.opencl.mode_order;
    let dim = modes.len();
    let mut rng = Lcg(m as u64 * 31 + dim as u64);
    let x: Vec<Vec<f64>> = (0..dim)
        .map(|_| (0..m).map(|_| rng.next() * spread).collect())
        .collect();
    let nmodes: usize = modes.iter().product();
    let (a, b) = match ty {
        TransformType::Type1 => (m, nmodes),
        _ => (nmodes, m),
    };
    let input: Vec<Complex64> = (0..a * ntransf)
        .map(|_| Complex64::new(rng.next(), rng.next()))
        .collect();
    let xt: Vec<Vec<T>> = x
        .iter()
        .map(|v| v.iter().map(|&c| T::from(c).unwrap()).collect())
        .collect();
    let it: Vec<Complex<T>> = input
        .iter()
        .map(|c| Complex::new(T::from(c.re).unwrap(), T::from(c.im).unwrap()))
        .collect();
    let mut p = plan_with::<T>(ty, modes, ntransf, tol, opts)?;
    let xs: Vec<&[T]> = xt.iter().map(|v| &v[..]).collect();
    p.set_points(&xs).unwrap();
    let mut out = vec![Complex::<T>::default(); b * ntransf];
    p.execute(&it, &mut out).unwrap();
    // The reference from the rounded inputs, as the plan saw them.
    let xr: Vec<Vec<f64>> = xt
        .iter()
        .map(|v| v.iter().map(|c| c.to_f64().unwrap()).collect())
        .collect();
    let xr: Vec<&[f64]> = xr.iter().map(|v| &v[..]).collect();
    let which: Vec<usize> = (0..b).step_by((b / 40).max(1)).collect();
    let (mut got, mut want) = (Vec::new(), Vec::new());
    for t in 0..ntransf {
        let c: Vec<Complex64> = it[t * a..(t + 1) * a]
            .iter()
            .map(|v| Complex64::new(v.re.to_f64().unwrap(), v.im.to_f64().unwrap()))
            .collect();
        want.extend(match ty {
            TransformType::Type1 => direct::type1(&xr, &c, modes, order, 1, &which),
            _ => direct::type2(&xr, &c, modes, order, -1, &which),
        });
        got.extend(which.iter().map(|&i| {
            let v = out[t * b + i];
            Complex64::new(v.re.to_f64().unwrap(), v.im.to_f64().unwrap())
        }));
    }
    let method = p.report().method.unwrap_or_default();
    Ok((direct::rel_error(&got, &want), method))
}

fn sweep<T: BackendFloat>(tols: &[f64]) {
    let cases: &[&[usize]] = &[&[96], &[30, 41], &[12, 9, 14]];
    for ty in [TransformType::Type1, TransformType::Type2] {
        for &modes in cases {
            for &tol in tols {
                let e = check::<T>(
                    ty,
                    modes,
                    700,
                    1,
                    tol,
                    ModeOrder::Cmcl,
                    std::f64::consts::PI,
                );
                eprintln!(
                    "{} {ty:?} {modes:?} tol {tol:.0e}: rel. error {e:.2e}",
                    std::any::type_name::<T>()
                );
                assert!(e <= 10.0 * tol, "{ty:?} {modes:?} tol {tol:e}: {e:e}");
            }
        }
    }
}

#[test]
fn types_1_and_2_f32() {
    if have_fp64() {
        sweep::<f32>(&[1e-2, 1e-4, 1e-5]);
    }
}

#[test]
fn types_1_and_2_f64() {
    if have_fp64() {
        sweep::<f64>(&[1e-3, 1e-6, 1e-9, 1e-12]);
    }
}

/// Stacked transforms, the FFT mode order and points far outside [−π, π).
#[test]
fn batches_mode_order_and_far_points() {
    if !have_fp64() {
        return;
    }
    for ty in [TransformType::Type1, TransformType::Type2] {
        let e = check::<f64>(ty, &[20, 17], 300, 3, 1e-8, ModeOrder::Fft, 40.0);
        eprintln!("{ty:?} 3 stacked, FFT order, |x| < 40: {e:.2e}");
        assert!(e <= 1e-7, "{ty:?}: {e:e}");
        // Batches of 4 (through the plan's buffers) and a last one of 3 (its own FFT).
        let mut opts = options(ModeOrder::Cmcl, [None; 2]);
        opts.opencl.max_batch = 4;
        let (e, _) = check_with::<f64>(ty, &[24, 9], 250, 11, 1e-9, &opts, 3.0).unwrap();
        eprintln!("{ty:?} 11 stacked in batches of 4: {e:.2e}");
        assert!(e <= 1e-8, "{ty:?}: {e:e}");
    }
}

#[test]
fn typed_errors() {
    if !have_fp64() {
        return;
    }
    let err = |r: Result<Box<dyn NufftPlan<f64>>, BackendError>| r.err().expect("an error");
    assert!(matches!(
        err(plan::<f64>(
            TransformType::Type1,
            &[0],
            1,
            1e-6,
            ModeOrder::Cmcl
        )),
        BackendError::Input(NudtError::Gen(_))
    ));
    assert!(matches!(
        err(plan::<f64>(
            TransformType::Type1,
            &[8],
            0,
            1e-6,
            ModeOrder::Cmcl
        )),
        BackendError::Input(NudtError::ZeroTransforms)
    ));
    assert!(matches!(
        err(Backend::OpenCl.plan_type3::<f64>(4, 1, 1, 1e-6, &BackendOptions::default())),
        BackendError::Input(NudtError::Gen(_))
    ));
    let mut p3 = Backend::OpenCl
        .plan_type3::<f64>(2, 1, 1, 1e-6, &BackendOptions::default())
        .unwrap();
    let z = [0.0f64; 3];
    assert!(matches!(
        p3.execute(&[Complex::default(); 3], &mut [Complex::default(); 3]),
        Err(BackendError::Input(NudtError::PointsNotSet))
    ));
    assert!(matches!(
        p3.set_points(&[&z, &z]),
        Err(BackendError::Input(NudtError::WrongType {
            expected: 1,
            actual: 3
        }))
    ));
    assert!(matches!(
        p3.set_points_type3(&[&z, &z], &[&z, &[0.0, f64::INFINITY, 0.0]]),
        Err(BackendError::Input(NudtError::NonFinite {
            what: "t",
            index: 1,
            ..
        }))
    ));
    assert!(matches!(
        p3.set_points_type3(&[&z, &z], &[&z[..2], &z[..2]])
            .and_then(|_| { p3.execute(&[Complex::default(); 2], &mut [Complex::default(); 2]) }),
        Err(BackendError::Input(NudtError::Length { .. }))
    ));
    let mut p = plan::<f32>(TransformType::Type1, &[16, 16], 1, 1e-5, ModeOrder::Cmcl).unwrap();
    let mut out = vec![Complex::default(); 256];
    let w = [0.0f32];
    assert!(matches!(
        p.set_points_type3(&[&w, &w], &[&w, &w]),
        Err(BackendError::Input(NudtError::WrongType {
            expected: 3,
            actual: 1
        }))
    ));
    assert!(matches!(
        p.execute(&[Complex::default(); 4], &mut out),
        Err(BackendError::Input(NudtError::PointsNotSet))
    ));
    let x = [0.1f32, f32::NAN];
    assert!(matches!(
        p.set_points(&[&x, &x]),
        Err(BackendError::Input(NudtError::NonFinite {
            what: "x",
            index: 1,
            ..
        }))
    ));
    let y = [0.1f32, 0.2];
    p.set_points(&[&y, &y]).unwrap();
    assert!(matches!(
        p.execute(&[Complex::default(); 3], &mut out),
        Err(BackendError::Input(NudtError::Length { .. }))
    ));
}

/// A type 3 transform of `ntransf` stacked strength vectors checked against the direct sum:
/// `m` sources in [−a, a)^d around `shift`, `k` targets in [−b, b)^d; returns the relative
/// l2 error over every target of every transform.
#[allow(clippy::too_many_arguments)]
fn check3<T: BackendFloat>(
    dim: usize,
    m: usize,
    k: usize,
    a: f64,
    b: f64,
    shift: f64,
    ntransf: usize,
    tol: f64,
) -> f64 {
    let opts = BackendOptions::default();
    check3_with::<T>(dim, [m, k], [a, b], shift, ntransf, tol, &opts)
        .unwrap()
        .0
}

/// As [`check3`] (`mk`: sources and targets, `ab`: their half-extents), with `opts`;
/// returns the error and the method the plan reports, or the plan's refusal.
fn check3_with<T: BackendFloat>(
    dim: usize,
    [m, k]: [usize; 2],
    [a, b]: [f64; 2],
    shift: f64,
    ntransf: usize,
    tol: f64,
    opts: &BackendOptions,
) -> Result<(f64, String), BackendError> {
    let mut rng = Lcg(m as u64 * 7 + k as u64 * 3 + dim as u64);
    let mut pts = |n: usize, r: f64, c: f64| -> Vec<Vec<T>> {
        (0..dim)
            .map(|_| {
                (0..n)
                    .map(|_| T::from(c + r * rng.next()).unwrap())
                    .collect()
            })
            .collect()
    };
    let x = pts(m, a, shift);
    let s = pts(k, b, -0.5 * shift);
    let c: Vec<Complex<T>> = (0..m * ntransf)
        .map(|_| Complex::new(T::from(rng.next()).unwrap(), T::from(rng.next()).unwrap()))
        .collect();
    let mut p = Backend::OpenCl.plan_type3::<T>(dim, 1, ntransf, tol, opts)?;
    let refs = |v: &[Vec<T>]| -> Vec<Vec<f64>> {
        v.iter()
            .map(|d| d.iter().map(|c| c.to_f64().unwrap()).collect())
            .collect()
    };
    let xs: Vec<&[T]> = x.iter().map(|v| &v[..]).collect();
    let ss: Vec<&[T]> = s.iter().map(|v| &v[..]).collect();
    // The kernel, and so a forced method's fit, is known once the points' extents are.
    p.set_points_type3(&xs, &ss)?;
    let mut out = vec![Complex::<T>::default(); k * ntransf];
    p.execute(&c, &mut out).unwrap();
    let (xr, sr) = (refs(&x), refs(&s));
    let xr: Vec<&[f64]> = xr.iter().map(|v| &v[..]).collect();
    let sr: Vec<&[f64]> = sr.iter().map(|v| &v[..]).collect();
    let which: Vec<usize> = (0..k).collect();
    let wide = |v: &Complex<T>| Complex64::new(v.re.to_f64().unwrap(), v.im.to_f64().unwrap());
    let (mut got, mut want) = (Vec::new(), Vec::new());
    for t in 0..ntransf {
        let ct: Vec<Complex64> = c[t * m..(t + 1) * m].iter().map(wide).collect();
        want.extend(direct::type3(&xr, &ct, &sr, 1, &which));
        got.extend(out[t * k..(t + 1) * k].iter().map(wide));
    }
    let method = p.report().method.unwrap_or_default();
    Ok((direct::rel_error(&got, &want), method))
}

/// Every spreading method (GM-sort, SM, output-driven) and interpolation method (GM-sort,
/// SM), forced, in types 1, 2 and 3, 1–3 D, both precisions, against the direct sum; the
/// plan must report the method asked for. The point sets are dense enough that bins hold
/// several subproblems of `MAX_SUBPROBLEM` points. A device with less than 64 KiB of local
/// memory (a GPU: 48 KiB) may refuse a method whose blocks it cannot hold, with a typed
/// error; PoCL's 1 MiB holds them all.
fn methods<T: BackendFloat>(tol: f64) {
    use CudaMethod::{GmSort, OutputDriven, Sm};
    let name = std::any::type_name::<T>();
    for (dim, modes) in [(1, &[64][..]), (2, &[24, 20]), (3, &[10, 8, 12])] {
        for (ty, methods) in [
            (TransformType::Type1, &[GmSort, Sm, OutputDriven][..]),
            (TransformType::Type2, &[GmSort, Sm]),
            (TransformType::Type3, &[GmSort, Sm, OutputDriven]),
        ] {
            for &method in methods {
                let result = if ty == TransformType::Type3 {
                    let opts = options(ModeOrder::Cmcl, [Some(method), None]);
                    check3_with::<T>(dim, [3000, 200], [3.0, 6.0], 0.5, 2, tol, &opts)
                } else {
                    let want = if ty == TransformType::Type1 {
                        [Some(method), None]
                    } else {
                        [None, Some(method)]
                    };
                    let opts = options(ModeOrder::Cmcl, want);
                    let pi = std::f64::consts::PI;
                    check_with::<T>(ty, modes, 3000, 2, tol, &opts, pi)
                };
                let (e, got) = match result {
                    Err(BackendError::OpenCl(OpenClError::Method { why, .. }))
                        if ClDevice::first().unwrap().info.local_mem < 64 << 10 =>
                    {
                        eprintln!("{name} {ty:?} {dim}D {method:?}: refused ({why})");
                        continue;
                    }
                    r => r.unwrap(),
                };
                eprintln!("{name} {ty:?} {dim}D {method:?}: rel. error {e:.2e}");
                assert_eq!(got, method.name(), "{name} {ty:?} {dim}D");
                assert!(e <= 10.0 * tol, "{name} {ty:?} {dim}D {method:?}: {e:e}");
            }
        }
    }
}

#[test]
fn every_method_f32() {
    if have_fp64() {
        methods::<f32>(1e-5);
    }
}

#[test]
fn every_method_f64() {
    if have_fp64() {
        methods::<f64>(1e-9);
    }
}

fn sweep3<T: BackendFloat>(tols: &[f64]) {
    for dim in 1..=3 {
        for &tol in tols {
            let e = check3::<T>(dim, 600, 300, 4.0, 8.0, 0.0, 1, tol);
            eprintln!(
                "{} type 3 {dim}D tol {tol:.0e}: rel. error {e:.2e}",
                std::any::type_name::<T>()
            );
            assert!(e <= 10.0 * tol, "type 3 {dim}D tol {tol:e}: {e:e}");
        }
    }
}

#[test]
fn type_3_f32() {
    if have_fp64() {
        sweep3::<f32>(&[1e-2, 1e-4, 1e-5]);
    }
}

#[test]
fn type_3_f64() {
    if have_fp64() {
        sweep3::<f64>(&[1e-3, 1e-6, 1e-9, 1e-12]);
    }
}

/// Stacked type 3 transforms on point sets off-centre and with wide extents (large
/// space-bandwidth product, sources around 30).
#[test]
fn type_3_batches_and_extents() {
    if !have_fp64() {
        return;
    }
    let e = check3::<f64>(2, 500, 200, 20.0, 10.0, 30.0, 3, 1e-8);
    eprintln!("type 3 2D, 3 stacked, |x - 30| < 20, |s + 15| < 10: {e:.2e}");
    assert!(e <= 1e-7, "{e:e}");
    let mut opts = BackendOptions::default();
    opts.opencl.max_batch = 2;
    let (e, _) = check3_with::<f64>(1, [300, 120], [4.0, 30.0], 2.0, 5, 1e-9, &opts).unwrap();
    eprintln!("type 3 1D, 5 stacked in batches of 2: {e:.2e}");
    assert!(e <= 1e-8, "{e:e}");
}

/// Empty point sets (zeros out, or nothing), one mode, one point.
#[test]
fn empty_sets_and_single_modes() {
    if !have_fp64() {
        return;
    }
    let mut p = plan::<f64>(TransformType::Type1, &[5, 4], 2, 1e-6, ModeOrder::Cmcl).unwrap();
    p.set_points(&[&[], &[]]).unwrap();
    let mut f = vec![Complex64::new(7.0, 7.0); 40];
    p.execute(&[], &mut f).unwrap();
    assert!(f.iter().all(|v| *v == Complex64::default()));
    let mut p = plan::<f64>(TransformType::Type2, &[3], 1, 1e-6, ModeOrder::Cmcl).unwrap();
    p.set_points(&[&[]]).unwrap();
    p.execute(&[Complex64::new(1.0, 0.0); 3], &mut []).unwrap();
    for ty in [TransformType::Type1, TransformType::Type2] {
        let e = check::<f64>(ty, &[1], 50, 1, 1e-9, ModeOrder::Cmcl, 3.0);
        assert!(e <= 1e-8, "{ty:?} one mode: {e:e}");
        let e = check::<f64>(ty, &[1, 7, 1], 1, 1, 1e-9, ModeOrder::Fft, 3.0);
        assert!(e <= 1e-8, "{ty:?} 3D, one point: {e:e}");
    }
    let mut p3 = Backend::OpenCl
        .plan_type3::<f64>(1, -1, 1, 1e-6, &BackendOptions::default())
        .unwrap();
    p3.set_points_type3(&[&[]], &[&[0.5, 1.5]]).unwrap();
    let mut g = vec![Complex64::new(1.0, 1.0); 2];
    p3.execute(&[], &mut g).unwrap();
    assert!(g.iter().all(|v| *v == Complex64::default()));
    p3.set_points_type3(&[&[0.5, 1.5]], &[&[]]).unwrap();
    p3.execute(&[Complex64::new(1.0, 0.0); 2], &mut []).unwrap();
    let e = check3::<f64>(3, 1, 40, 1.0, 3.0, 0.0, 1, 1e-9);
    assert!(e <= 1e-8, "type 3, one source: {e:e}");
}

/// Built programs are kept on disk as the device's binaries, keyed by module name, source hash
/// and device: a module missing from the memory cache loads from its binary, and a damaged
/// binary is built again from source and replaced.
#[test]
fn programs_are_cached_on_disk() {
    use nudt_gen::cuda::{common_module_in, CudaSource};
    use nudt_runtime::opencl::{cache_dir, load_program, ProgramOrigin};
    if !have_fp64() {
        return;
    }
    let Some(dir) = cache_dir() else {
        panic!("the OpenCL program cache is off (NUDT_OPENCL_CACHE=off): nothing to test");
    };
    let dev = ClDevice::first().unwrap();
    let common = common_module_in(nudt_gen::Precision::F64, dev.info.dialect()).unwrap();
    let tag = format!(
        "nudt_cache_test_{}_{}",
        std::process::id(),
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap()
            .as_nanos()
    );
    let named = |suffix: &str| CudaSource {
        name: format!("{tag}{suffix}"),
        ..common.clone()
    };
    // The binary a module left, found by its name.
    let file_of = |name: &str| {
        std::fs::read_dir(&dir)
            .unwrap()
            .map(|e| e.unwrap().path())
            .find(|p| {
                let f = p.file_name().unwrap().to_string_lossy().into_owned();
                f.starts_with(&format!("{name}-")) && f.ends_with(".bin")
            })
    };
    let a = named("_a");
    let (_, origin) = load_program(&dev, (&a).into()).unwrap();
    assert_eq!(origin, ProgramOrigin::Compiled);
    assert_eq!(
        load_program(&dev, (&a).into()).unwrap().1,
        ProgramOrigin::Memory
    );
    let bin = file_of(&a.name).expect("the built program's binary on disk");
    let bytes = std::fs::read(&bin).unwrap();
    assert!(!bytes.is_empty());
    // The same binary under a name this process has not built: read from disk.
    let rename = |name: &str| {
        let f = bin
            .file_name()
            .unwrap()
            .to_string_lossy()
            .replacen(&a.name, name, 1);
        dir.join(f)
    };
    let b = named("_b");
    std::fs::write(rename(&b.name), &bytes).unwrap();
    assert_eq!(
        load_program(&dev, (&b).into()).unwrap().1,
        ProgramOrigin::Disk
    );
    // A damaged binary: built again, and the file replaced by a good one.
    let c = named("_c");
    let damaged = rename(&c.name);
    std::fs::write(&damaged, b"not a program binary").unwrap();
    assert_eq!(
        load_program(&dev, (&c).into()).unwrap().1,
        ProgramOrigin::Compiled
    );
    assert_eq!(std::fs::read(&damaged).unwrap(), bytes);
    for name in [&a.name, &b.name, &c.name] {
        let _ = std::fs::remove_file(rename(name));
    }
}

/// A type 3 plan whose points are set again: with sets of the same extents (the grids are
/// kept) and then wider ones (new grids); each result against the direct sum.
#[test]
fn type_3_points_set_again() {
    if !have_fp64() {
        return;
    }
    let mut p = Backend::OpenCl
        .plan_type3::<f64>(2, 1, 1, 1e-9, &BackendOptions::default())
        .unwrap();
    let mut rng = Lcg(5);
    for (round, (a, b)) in [(3.0, 5.0), (3.0, 5.0), (6.0, 9.0)].into_iter().enumerate() {
        let (m, k) = (800, 150);
        let mut set = |n: usize, r: f64| -> Vec<Vec<f64>> {
            (0..2)
                .map(|_| (0..n).map(|_| r * rng.next()).collect())
                .collect()
        };
        // The first point of each set at the extent's edge, so the extents repeat.
        let (mut x, mut s) = (set(m, a), set(k, b));
        for d in 0..2 {
            x[d][0] = a;
            x[d][1] = -a;
            s[d][0] = b;
            s[d][1] = -b;
        }
        let c: Vec<Complex64> = (0..m)
            .map(|_| Complex64::new(rng.next(), rng.next()))
            .collect();
        let xs: Vec<&[f64]> = x.iter().map(|v| &v[..]).collect();
        let ss: Vec<&[f64]> = s.iter().map(|v| &v[..]).collect();
        p.set_points_type3(&xs, &ss).unwrap();
        let mut out = vec![Complex64::default(); k];
        p.execute(&c, &mut out).unwrap();
        let which: Vec<usize> = (0..k).collect();
        let e = direct::rel_error(&out, &direct::type3(&xs, &c, &ss, 1, &which));
        eprintln!("type 3 set again, round {round}: {e:.2e}");
        assert!(e <= 1e-8, "round {round}: {e:e}");
    }
}

/// The adjoint of `p` (sign `isign` forward) on `ntransf` stacked inputs `v`, checked against
/// the direct sum of the adjoint: type 1's is a type 2 with the opposite sign, type 2's a
/// type 1, type 3's the sum from the targets `s` back to the sources `x`. Returns the
/// relative l2 error.
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
    let wide = |v: &Complex<T>| Complex64::new(v.re.to_f64().unwrap(), v.im.to_f64().unwrap());
    let refs = |v: &[Vec<T>]| -> Vec<Vec<f64>> {
        v.iter()
            .map(|d| d.iter().map(|c| c.to_f64().unwrap()).collect())
            .collect()
    };
    let (xr, sr) = (refs(x), refs(s));
    let xr: Vec<&[f64]> = xr.iter().map(|v| &v[..]).collect();
    let sr: Vec<&[f64]> = sr.iter().map(|v| &v[..]).collect();
    let (m, nmodes) = (x[0].len(), modes.iter().product::<usize>());
    // The adjoint's input and output lengths: the forward's output and input.
    let (a, b) = match ty {
        TransformType::Type1 => (nmodes, m),
        TransformType::Type2 => (m, nmodes),
        TransformType::Type3 => (s[0].len(), m),
    };
    let v: Vec<Complex<T>> = (0..a * ntransf)
        .map(|_| Complex::new(T::from(rng.next()).unwrap(), T::from(rng.next()).unwrap()))
        .collect();
    let mut out = vec![Complex::<T>::default(); b * ntransf];
    p.execute_adjoint(&v, &mut out).unwrap();
    let which: Vec<usize> = (0..b).step_by((b / 40).max(1)).collect();
    let (mut got, mut want) = (Vec::new(), Vec::new());
    for t in 0..ntransf {
        let vt: Vec<Complex64> = v[t * a..(t + 1) * a].iter().map(wide).collect();
        want.extend(match ty {
            TransformType::Type1 => direct::type2(&xr, &vt, modes, ModeOrder::Cmcl, -isign, &which),
            TransformType::Type2 => direct::type1(&xr, &vt, modes, ModeOrder::Cmcl, -isign, &which),
            TransformType::Type3 => direct::type3(&sr, &vt, &xr, -isign, &which),
        });
        got.extend(which.iter().map(|&i| wide(&out[t * b + i])));
    }
    direct::rel_error(&got, &want)
}

fn adjoints<T: BackendFloat>(tol: f64) {
    use CudaMethod::{GmSort, OutputDriven, Sm};
    let name = std::any::type_name::<T>();
    for (dim, modes) in [(1, &[60][..]), (2, &[24, 17]), (3, &[10, 8, 11])] {
        let mut rng = Lcg(dim as u64 + 99);
        let mut pts = |n: usize, r: f64| -> Vec<Vec<T>> {
            (0..dim)
                .map(|_| (0..n).map(|_| T::from(r * rng.next()).unwrap()).collect())
                .collect()
        };
        let x = pts(900, 3.0);
        let s = pts(300, 7.0);
        let mut rng = Lcg(dim as u64 + 7);
        // The adjoint's own step on each grid: type 1's interpolates on a grid shaped for
        // spreading, type 2's spreads on one shaped for interpolation; every method of it,
        // and the planner's choice (`None`).
        let cases: [(TransformType, &[Option<CudaMethod>]); 3] = [
            (TransformType::Type1, &[Some(GmSort), Some(Sm), None]),
            (
                TransformType::Type2,
                &[Some(GmSort), Some(Sm), Some(OutputDriven), None],
            ),
            (TransformType::Type3, &[None]),
        ];
        for (ty, methods) in cases {
            for &method in methods {
                let isign = if ty == TransformType::Type2 { -1 } else { 1 };
                let mut opts = BackendOptions::default();
                match ty {
                    TransformType::Type1 => opts.opencl.interp = method,
                    _ => opts.opencl.spread = method,
                }
                let label = format!("{name} {ty:?} {dim}D adjoint, {method:?}");
                let made = if ty == TransformType::Type3 {
                    Backend::OpenCl.plan_type3::<T>(dim, isign, 2, tol, &opts)
                } else {
                    Backend::OpenCl.plan::<T>(ty, modes, isign, 2, tol, &opts)
                };
                // A device below 64 KiB of local memory may refuse a method. (A method the
                // adjoint asks of a grid that cannot hold it falls back: the output-driven
                // kernel on a grid shaped for interpolation spreads by SM.)
                let small = ClDevice::first().unwrap().info.local_mem < 64 << 10;
                let mut p = match made {
                    Err(BackendError::OpenCl(OpenClError::Method { why, .. })) if small => {
                        eprintln!("{label}: refused ({why})");
                        continue;
                    }
                    r => r.unwrap(),
                };
                let xs: Vec<&[T]> = x.iter().map(|v| &v[..]).collect();
                let ss: Vec<&[T]> = s.iter().map(|v| &v[..]).collect();
                if ty == TransformType::Type3 {
                    p.set_points_type3(&xs, &ss).unwrap();
                } else {
                    p.set_points(&xs).unwrap();
                }
                eprintln!("{label}: running");
                let e = adjoint_error(&mut *p, ty, isign, modes, &x, &s, 2, &mut rng);
                eprintln!("{label}: rel. error {e:.2e}");
                assert!(e <= 10.0 * tol, "{label}: {e:e}");
            }
        }
    }
}

/// `execute_adjoint` of every type, 1–3 D, both precisions, two stacked transforms, by every
/// method of its own step, against the direct sum of the adjoint.
#[test]
fn adjoints_match_the_direct_sum() {
    if have_fp64() {
        adjoints::<f32>(1e-5);
        adjoints::<f64>(1e-10);
    }
}

/// Points, inputs and outputs in device buffers of the plan's context (one transform and a
/// stack of three, forward and adjoint; type 3, whose extents the device reduces), against
/// the direct sum; buffers shorter than the stack are refused with a length error, longer
/// ones accepted.
#[test]
fn device_buffers() {
    use nudt_runtime::opencl::opencl3::memory::{Buffer, CL_MEM_READ_WRITE};
    use nudt_runtime::opencl::opencl3::types::CL_BLOCKING;
    use nudt_runtime::opencl::{ClOptions, ClPlan};
    if !have_fp64() {
        return;
    }
    let dev = ClDevice::first().unwrap();
    let buffer = |data: &[f64], extra: usize| -> Buffer<f64> {
        let mut b = unsafe {
            Buffer::<f64>::create(
                dev.context(),
                CL_MEM_READ_WRITE,
                data.len() + extra,
                std::ptr::null_mut(),
            )
        }
        .unwrap();
        unsafe {
            dev.queue()
                .enqueue_write_buffer(&mut b, CL_BLOCKING, 0, data, &[])
        }
        .unwrap();
        b
    };
    let fetch = |b: &Buffer<f64>, n: usize| -> Vec<Complex64> {
        let mut v = vec![0.0; 2 * n];
        unsafe {
            dev.queue()
                .enqueue_read_buffer(b, CL_BLOCKING, 0, &mut v, &[])
        }
        .unwrap();
        v.chunks(2).map(|c| Complex64::new(c[0], c[1])).collect()
    };
    let flat = |v: &[Complex64]| -> Vec<f64> { v.iter().flat_map(|c| [c.re, c.im]).collect() };
    let (modes, m) = ([20usize, 13], 800);
    let nm = modes.iter().product::<usize>();
    let mut rng = Lcg(5);
    let x: Vec<Vec<f64>> = (0..2)
        .map(|_| (0..m).map(|_| 3.0 * rng.next()).collect())
        .collect();
    let xr: Vec<&[f64]> = x.iter().map(|v| &v[..]).collect();
    let xb: Vec<Buffer<f64>> = x.iter().map(|v| buffer(v, 0)).collect();
    let which: Vec<usize> = (0..nm).collect();
    for ntransf in [1, 3] {
        let c: Vec<Complex64> = (0..m * ntransf)
            .map(|_| Complex64::new(rng.next(), rng.next()))
            .collect();
        let mut p = ClPlan::<f64>::new(
            TransformType::Type1,
            &modes,
            1,
            ntransf,
            1e-10,
            ClOptions::default(),
        )
        .unwrap();
        p.set_points_device(&[&xb[0], &xb[1]]).unwrap();
        let cin = buffer(&flat(&c), 0);
        // The output buffer is longer than the stack.
        let mut fout = buffer(&vec![0.0; 2 * nm * ntransf], 6);
        p.execute_device(&cin, &mut fout).unwrap();
        let f = fetch(&fout, nm * ntransf);
        for t in 0..ntransf {
            let want = direct::type1(
                &xr,
                &c[t * m..(t + 1) * m],
                &modes,
                ModeOrder::Cmcl,
                1,
                &which,
            );
            let e = direct::rel_error(&f[t * nm..(t + 1) * nm], &want);
            assert!(e <= 1e-9, "{ntransf} stacked, transform {t}: {e:e}");
        }
        // The adjoint from the modes back to the points: a type 2 with the opposite sign.
        let mut cout = buffer(&vec![0.0; 2 * m * ntransf], 0);
        p.execute_adjoint_device(&fout, &mut cout).unwrap();
        let back = fetch(&cout, m * ntransf);
        let pts: Vec<usize> = (0..m).step_by(20).collect();
        for t in 0..ntransf {
            let want = direct::type2(
                &xr,
                &f[t * nm..(t + 1) * nm],
                &modes,
                ModeOrder::Cmcl,
                -1,
                &pts,
            );
            let got: Vec<Complex64> = pts.iter().map(|&j| back[t * m + j]).collect();
            let e = direct::rel_error(&got, &want);
            assert!(e <= 1e-9, "{ntransf} stacked adjoint, transform {t}: {e:e}");
        }
        // A stack one value short is a length error naming the input.
        let short = buffer(&flat(&c[1..]), 0);
        match p.execute_device(&short, &mut fout) {
            Err(OpenClError::Input(NudtError::Length { what, .. })) => {
                assert!(what.contains("strengths"), "{what}")
            }
            r => panic!("a short input buffer gave {r:?}"),
        }
    }
    // Type 3 from device buffers: the extents are reduced on the device.
    let sp: Vec<Vec<f64>> = (0..2)
        .map(|_| (0..150).map(|_| 5.0 + 9.0 * rng.next()).collect())
        .collect();
    let sb: Vec<Buffer<f64>> = sp.iter().map(|v| buffer(v, 0)).collect();
    let spr: Vec<&[f64]> = sp.iter().map(|v| &v[..]).collect();
    let c: Vec<Complex64> = (0..m)
        .map(|_| Complex64::new(rng.next(), rng.next()))
        .collect();
    let mut p3 = ClPlan::<f64>::new_type3(2, -1, 1, 1e-10, ClOptions::default()).unwrap();
    p3.set_points_type3_device(&[&xb[0], &xb[1]], &[&sb[0], &sb[1]])
        .unwrap();
    let cin = buffer(&flat(&c), 0);
    let mut fout = buffer(&[0.0; 300], 0);
    p3.execute_device(&cin, &mut fout).unwrap();
    let want = direct::type3(&xr, &c, &spr, -1, &(0..150).collect::<Vec<_>>());
    let e = direct::rel_error(&fetch(&fout, 150), &want);
    assert!(e <= 1e-9, "type 3 from device buffers: {e:e}");
    // Coordinates of unequal lengths.
    let short = buffer(&x[1][1..], 0);
    let mut p = ClPlan::<f64>::new(
        TransformType::Type2,
        &modes,
        1,
        1,
        1e-6,
        ClOptions::default(),
    )
    .unwrap();
    assert!(matches!(
        p.set_points_device(&[&xb[0], &short]),
        Err(OpenClError::Input(NudtError::Length { .. }))
    ));
}
