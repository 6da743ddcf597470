//! The OpenCL backend's NUFFTs (PoCL on a CPU in CI) against the direct sum: types 1 and 2,
//! 1–3 dimensions, f32 and f64, over a range of tolerances (error within 10× tol, as the CPU
//! and CUDA suites ask), stacked transforms, both mode orders, points far outside [−π, π), and
//! the typed errors. Plans are made through the one plan interface
//! (`nudt_runtime::backend`), as `nudt transform --backend opencl` makes them.
//!
//! Without an OpenCL platform the tests say SKIPPED, unless `NUDT_REQUIRE_OPENCL=1` (set by
//! `.ci/run`, which installs PoCL) makes that a failure.
//! ```sh
//! cargo test --release -p nudt-runtime --features opencl --test opencl_nufft
//! ```

use nudt_runtime::backend::{Backend, BackendError, BackendFloat, BackendOptions, NufftPlan};
use nudt_runtime::direct;
use nudt_runtime::opencl::{ClDevice, OpenClError};
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

/// Deterministic values in [-1, 1) (a 64-bit LCG).
struct Lcg(u64);
impl Lcg {
    fn next(&mut self) -> f64 {
        self.0 = self
            .0
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        (self.0 >> 11) as f64 / (1u64 << 53) as f64 * 2.0 - 1.0
    }
}

fn plan<T: BackendFloat>(
    ty: TransformType,
    modes: &[usize],
    ntransf: usize,
    tol: f64,
    order: ModeOrder,
) -> Result<Box<dyn NufftPlan<T>>, BackendError> {
    let mut opts = BackendOptions::default();
    opts.opencl.mode_order = order;
    let isign = if ty == TransformType::Type1 { 1 } else { -1 };
    Backend::OpenCl.plan::<T>(ty, modes, isign, ntransf, tol, &opts)
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
    let mut p = plan::<T>(ty, modes, ntransf, tol, order).unwrap();
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
    direct::rel_error(&got, &want)
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
    if have_device() {
        sweep::<f32>(&[1e-2, 1e-4, 1e-5]);
    }
}

#[test]
fn types_1_and_2_f64() {
    if have_device() && ClDevice::first().unwrap().info.fp64 {
        sweep::<f64>(&[1e-3, 1e-6, 1e-9, 1e-12]);
    }
}

/// Stacked transforms, the FFT mode order and points far outside [−π, π).
#[test]
fn batches_mode_order_and_far_points() {
    if !have_device() {
        return;
    }
    for ty in [TransformType::Type1, TransformType::Type2] {
        let e = check::<f64>(ty, &[20, 17], 300, 3, 1e-8, ModeOrder::Fft, 40.0);
        eprintln!("{ty:?} 3 stacked, FFT order, |x| < 40: {e:.2e}");
        assert!(e <= 1e-7, "{ty:?}: {e:e}");
    }
}

#[test]
fn typed_errors() {
    if !have_device() {
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
        err(Backend::OpenCl.plan_type3::<f64>(2, 1, 1, 1e-6, &BackendOptions::default())),
        BackendError::OpenCl(OpenClError::NotYet(_))
    ));
    let mut p = plan::<f32>(TransformType::Type1, &[16, 16], 1, 1e-5, ModeOrder::Cmcl).unwrap();
    let mut out = vec![Complex::default(); 256];
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
