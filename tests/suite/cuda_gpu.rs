//! What only the CUDA backend has, beside every backend's suite (`runtime/tests/suite/backends.rs`,
//! which runs CUDA's accuracy matrix, batches, adjoints, methods and errors): the two-pass bin
//! sort and the FFT engines against the direct sum, agreement with the CPU backend for every
//! spreading and interpolation method and width, device buffers and user streams, cuFFT plan
//! and module caches, device memory given back, the typed errors of a missing or old driver,
//! and the Gaussian-gridding type 3 (`Type3Method::GaussianCapozzoli`) against the direct sum
//! and the CPU's plan of the same method.
//!
//! Run (on a machine with an NVIDIA GPU, the driver, NVRTC 13 and cuFFT on the loader path):
//! ```sh
//! cargo test --release --features cuda --test suite cuda_gpu:: -- --nocapture --test-threads=1
//! ```
//! Without a device every test prints `SKIPPED: no CUDA device (...)` and passes, except
//! where `NUDT_REQUIRE_GPU=1` makes a missing device a failure (the device run sets it); the
//! tests of the typed errors for a missing driver, device or library run everywhere (`.ci/run`
//! runs this suite on a machine without a GPU for them). The GPU tests take turns (see [`gpu`]),
//! so the suite may also run with the default test threads.
#![cfg(feature = "cuda")]

use crate::common;

use common::*;
use nudt::backend::BackendError;
use nudt::cuda::{CudaError, CudaFloat, CudaOptions, CudaPlan, FftEngine, GpuMethod};
use nudt::direct;
use nudt::num_complex::{Complex, Complex64};
use nudt::{ModeOrder, NudtError, Options, Plan, TransformType, Type3Method, Upsampling};
use std::sync::{Arc, Mutex, MutexGuard};

/// The GPU, held for one test: `None` (after printing why) when there is no device. Tests
/// hold it while they run, so that they take turns on the device: one test's allocations
/// cannot then make another's run out of memory, or move the free memory it measures.
fn gpu(test: &str) -> Option<MutexGuard<'static, ()>> {
    static GPU: Mutex<()> = Mutex::new(());
    match nudt::cuda::device_count() {
        // A test that failed while holding the GPU leaves nothing behind that the next needs.
        Ok(n) if n > 0 => Some(GPU.lock().unwrap_or_else(|e| e.into_inner())),
        other => {
            let why = match other {
                Ok(_) => "no device".to_string(),
                Err(e) => e.to_string(),
            };
            if std::env::var("NUDT_REQUIRE_GPU").is_ok_and(|v| v == "1") {
                panic!("NUDT_REQUIRE_GPU=1 but no CUDA device: {why}");
            }
            println!("SKIPPED: no CUDA device ({why}) — {test}");
            None
        }
    }
}

fn opts() -> CudaOptions {
    CudaOptions::default()
}

/// A type 1 (`input` the strengths, outputs on all modes) or type 2 transform (`input` the
/// coefficients, outputs at all points) on the GPU, widened.
fn gpu_type12<T: CudaFloat>(
    ty: TransformType,
    x: &[Vec<f64>],
    input: &[Complex64],
    modes: &[usize],
    isign: i32,
    tol: f64,
    o: CudaOptions,
) -> Result<Vec<Complex64>, CudaError> {
    let mut plan = CudaPlan::<T>::new(ty, modes, isign, 1, tol, o)?;
    run_type12(&mut plan, ty, x, input, modes).map_err(cuda_error)
}

fn gpu_type3<T: CudaFloat>(
    x: &[Vec<f64>],
    c: &[Complex64],
    s: &[Vec<f64>],
    isign: i32,
    tol: f64,
    o: CudaOptions,
) -> Result<Vec<Complex64>, CudaError> {
    let mut plan = CudaPlan::<T>::new_type3(x.len(), isign, 1, tol, o)?;
    run_type3(&mut plan, x, c, s).map_err(cuda_error)
}

/// The CUDA error behind a CUDA plan's [`BackendError`].
fn cuda_error(e: BackendError) -> CudaError {
    match e {
        BackendError::Cuda(e) => e,
        BackendError::Input(e) => CudaError::Nudt(e),
        e => panic!("a CUDA plan's error is a CUDA one: {e}"),
    }
}

/// `plan`'s `execute_device` (or, `adjoint`, `execute_adjoint_device`) of `input` copied to the
/// device, its `n` outputs copied back.
fn execute_on_device<T: CudaFloat>(
    plan: &mut CudaPlan<T>,
    input: &[Complex<T>],
    n: usize,
    adjoint: bool,
) -> Vec<Complex<T>> {
    let stream = plan.stream().clone();
    let flat: Vec<T> = input.iter().flat_map(|v| [v.re, v.im]).collect();
    let din = stream.clone_htod(&flat).unwrap();
    let mut dout = stream.alloc_zeros::<T>(2 * n).unwrap();
    if adjoint {
        plan.execute_adjoint_device(&din, &mut dout)
    } else {
        plan.execute_device(&din, &mut dout)
    }
    .unwrap();
    let back = stream.clone_dtoh(&dout).unwrap();
    back.chunks(2).map(|v| Complex::new(v[0], v[1])).collect()
}

/// Runs `check` in 1, 2 and 3 dimensions, then fails with every line it pushed.
fn in_each_dimension(mut check: impl FnMut(usize, &mut Vec<String>)) {
    let mut failures = Vec::new();
    for dim in 1..=3 {
        check(dim, &mut failures);
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

fn all(n: usize) -> Vec<usize> {
    (0..n).collect()
}

/// Small problems: odd and even mode counts, points over several periods.
fn problem(dim: usize, seed: u64) -> (Vec<Vec<f64>>, Vec<usize>) {
    let modes = match dim {
        1 => vec![57],
        2 => vec![24, 17],
        _ => vec![10, 9, 12],
    };
    let mut rng = Rng::new(seed);
    let pi = std::f64::consts::PI;
    (rng.coords(dim, 400, -3.0 * pi, 3.0 * pi), modes)
}

fn matrix<T: CudaFloat>(tols: &[f64], name: &str, o: CudaOptions) {
    let mut failures = Vec::new();
    let mut worst = (0.0f64, String::new());
    for dim in 1..=3 {
        let (x, modes) = problem(dim, dim as u64);
        let m = x[0].len();
        let mut rng = Rng::new(200 + dim as u64);
        let c = rng.complexes(m);
        let f = rng.complexes(modes.iter().product());
        let x3 = rng.coords(dim, m, -2.0, 4.5);
        let s = rng.coords(dim, 200, -9.0, 13.0);
        let e1 = direct::type1(&refs(&x), &c, &modes, ModeOrder::Cmcl, 1, &all(f.len()));
        let e2 = direct::type2(&refs(&x), &f, &modes, ModeOrder::Cmcl, -1, &all(m));
        let e3 = direct::type3(&refs(&x3), &c, &refs(&s), 1, &all(s[0].len()));
        for &tol in tols {
            let cases = [
                (
                    "type 1",
                    gpu_type12::<T>(TransformType::Type1, &x, &c, &modes, 1, tol, o.clone()),
                    &e1,
                ),
                (
                    "type 2",
                    gpu_type12::<T>(TransformType::Type2, &x, &f, &modes, -1, tol, o.clone()),
                    &e2,
                ),
                (
                    "type 3",
                    gpu_type3::<T>(&x3, &c, &s, 1, tol, o.clone()),
                    &e3,
                ),
            ];
            for (ty, got, exact) in cases {
                let got = got.unwrap_or_else(|e| panic!("{name} {ty} {dim}D tol {tol:e}: {e}"));
                let err = direct::rel_error(&got, exact);
                let label = format!("{name} {ty} {dim}D tol {tol:.0e}: error {err:.2e}");
                println!("{label}");
                if err / tol > worst.0 {
                    worst = (err / tol, label.clone());
                }
                if err > 10.0 * tol {
                    failures.push(label);
                }
            }
        }
    }
    println!("{name}: worst error/tol = {:.2} ({})", worst.0, worst.1);
    assert!(
        failures.is_empty(),
        "errors above 10·tol:\n{}",
        failures.join("\n")
    );
}

/// Without a driver, device or library, or with a driver older than the bindings, making a
/// plan is a typed error, never a panic; so are the version queries. Runs with and without a
/// GPU (`.ci/run` runs it without one).
#[test]
fn missing_gpu_is_a_typed_error() {
    let driver = nudt::cuda::driver_version();
    assert!(
        matches!(driver, Ok(_) | Err(CudaError::NoDriver(_))),
        "{driver:?}"
    );
    let nvrtc = nudt::cuda::nvrtc_version();
    assert!(
        matches!(
            nvrtc,
            Ok(_) | Err(CudaError::MissingLibrary { name: "nvrtc", .. })
        ),
        "{nvrtc:?}"
    );
    println!("driver {driver:?}, NVRTC {nvrtc:?}");
    match nudt::cuda::device_count() {
        Ok(n) if n > 0 => {
            // The probe passed, so the driver is new enough.
            assert!(driver.unwrap() >= nudt::cuda::MIN_DRIVER_VERSION);
            let e = CudaPlan::<f64>::new(
                TransformType::Type1,
                &[8],
                1,
                1,
                1e-6,
                CudaOptions {
                    device: n,
                    ..opts()
                },
            )
            .unwrap_err();
            assert!(matches!(e, CudaError::NoDevice { .. }), "{e:?}");
        }
        _ => {
            let plans = [
                CudaPlan::<f64>::new(TransformType::Type1, &[8], 1, 1, 1e-6, opts()).err(),
                CudaPlan::<f32>::new(TransformType::Type2, &[8, 9], -1, 3, 1e-4, opts()).err(),
                CudaPlan::<f64>::new_type3(3, 1, 1, 1e-6, opts()).err(),
                CudaPlan::<f64>::new_type3(2, 1, 1, 1e-9, gaussian()).err(),
            ];
            for e in plans {
                let e = e.expect("a plan without a usable GPU");
                println!("no GPU here: {e}");
                assert!(
                    matches!(
                        e,
                        CudaError::NoDriver(_)
                            | CudaError::DriverTooOld { .. }
                            | CudaError::NoDevice { .. }
                            | CudaError::MissingLibrary { .. }
                    ),
                    "{e:?}"
                );
            }
        }
    }
}

/// A driver older than the bindings is refused by its version, before cudarc can call an
/// entry point it lacks: in a child process of this test binary, a stand-in `libcuda.so`
/// (built here by rustc) that reports CUDA 12.4 makes every way in a `DriverTooOld` error.
/// Needs no GPU; says SKIPPED where rustc cannot be run.
#[test]
fn old_driver_is_a_typed_error() {
    const CHILD: &str = "NUDT_TEST_STAND_IN_DRIVER";
    // libtest's name of this test in the suite binary: its module path less the crate.
    let test = "cuda_gpu::old_driver_is_a_typed_error";
    if std::env::var_os(CHILD).is_some() {
        assert_eq!(nudt::cuda::driver_version(), Ok(12040));
        let too_old = |e: CudaError| {
            println!("{e}");
            assert!(
                matches!(
                    e,
                    CudaError::DriverTooOld { found: 12040, needed }
                        if needed == nudt::cuda::MIN_DRIVER_VERSION
                ),
                "{e:?}"
            );
        };
        too_old(nudt::cuda::device_count().unwrap_err());
        too_old(nudt::cuda::open(0).unwrap_err());
        too_old(nudt::cuda::probe_libraries().unwrap_err());
        too_old(CudaPlan::<f64>::new(TransformType::Type1, &[8], 1, 1, 1e-6, opts()).unwrap_err());
        return;
    }
    let dir = std::env::temp_dir().join(format!("nudt-stand-in-driver-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let lib = dir.join("stand_in.rs");
    std::fs::write(
        &lib,
        "/// # Safety\n/// `v` is writable.\n#[no_mangle]\npub unsafe extern \"C\" fn \
         cuDriverGetVersion(v: *mut i32) -> i32 { *v = 12040; 0 }\n",
    )
    .unwrap();
    let built = std::process::Command::new("rustc")
        .args(["--edition", "2021", "--crate-type", "cdylib", "-o"])
        .arg(dir.join("libcuda.so"))
        .arg(&lib)
        .status();
    match built {
        Ok(status) => assert!(
            status.success(),
            "rustc could not build the stand-in driver"
        ),
        Err(e) => {
            println!("SKIPPED: rustc not runnable ({e}) — {test}");
            return;
        }
    }
    let path = match std::env::var("LD_LIBRARY_PATH") {
        Ok(p) if !p.is_empty() => format!("{}:{p}", dir.display()),
        _ => dir.display().to_string(),
    };
    let out = std::process::Command::new(std::env::current_exe().unwrap())
        .args([test, "--exact", "--nocapture", "--test-threads=1"])
        .env(CHILD, "1")
        .env("LD_LIBRARY_PATH", path)
        .output()
        .unwrap();
    let _ = std::fs::remove_dir_all(&dir);
    let text =
        String::from_utf8_lossy(&out.stdout).into_owned() + &String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success() && text.contains("1 passed"), "{text}");
    println!("{text}");
}

/// The two-pass bin sort (by buckets of bins, then by bin), which the plans take
/// automatically only past L2's size, forced on small problems: types 1–3 in 1–3 D meet the
/// same bounds against the direct sum. Its entries go to the fine grids where those are large
/// enough (2D, 3D) and to a buffer of their own where not (1D).
#[test]
fn two_pass_sort_matches_direct_sum() {
    if let Some(_gpu) = gpu("two_pass_sort_matches_direct_sum") {
        let o = CudaOptions {
            two_pass_sort: Some(true),
            ..opts()
        };
        matrix::<f64>(&[1e-3, 1e-6, 1e-9], "f64 two-pass", o.clone());
        matrix::<f32>(&[1e-3, 1e-5], "f32 two-pass", o.clone());
        // More bins than the second pass's hash slots in every tile (128³ cells in 4³ bins,
        // buckets of 32 bins, 5·10^4 points): entries whose slot another bin took place
        // themselves. Type 1 against the direct sum on sampled modes.
        let modes = [64usize, 64, 64];
        let mut rng = Rng::new(77);
        let x = rng.coords(3, 50_000, -3.2, 3.2);
        let c = rng.complexes(50_000);
        let o = CudaOptions {
            spread: Some(GpuMethod::OutputDriven),
            bins: Some([4, 4, 4]),
            ..o
        };
        let which: Vec<usize> = (0..modes.iter().product::<usize>()).step_by(1311).collect();
        let exact = direct::type1(&refs(&x), &c, &modes, ModeOrder::Cmcl, 1, &which);
        let got = gpu_type12::<f64>(TransformType::Type1, &x, &c, &modes, 1, 1e-6, o).unwrap();
        let got: Vec<Complex64> = which.iter().map(|&i| got[i]).collect();
        let err = rel(&got, &exact);
        assert!(err < 1e-5, "3D two-pass sort over many bins: {err:.2e}");
    }
}

/// The plans' fine-grid FFT forced onto the generated FFT, then onto cuFFT, meets the same
/// bounds against the direct sum (types 1–3, 1–3 D, both precisions); the automatic choice
/// times both once and leaves its verdict in the disk cache.
#[test]
fn generated_fft_inside_the_plans() {
    let Some(_gpu) = gpu("generated_fft_inside_the_plans") else {
        return;
    };
    for fft in [FftEngine::Generated, FftEngine::CuFft] {
        let o = CudaOptions { fft, ..opts() };
        matrix::<f64>(&[1e-4, 1e-8, 1e-11], &format!("{fft:?} f64"), o.clone());
        matrix::<f32>(&[1e-3, 1e-5], &format!("{fft:?} f32"), o);
    }
    let dir = std::env::temp_dir().join(format!("nudt-fft-choice-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    nudt::cuda::set_cache_dir(Some(Some(dir.clone())));
    // Modes no other test uses: a verdict for the same fine grid made earlier in this
    // process would be found in memory, and nothing timed or written.
    let (x, _) = problem(2, 7);
    let modes = vec![41, 35];
    let c = Rng::new(8).complexes(x[0].len());
    let got = gpu_type12::<f64>(TransformType::Type1, &x, &c, &modes, 1, 1e-9, opts());
    nudt::cuda::set_cache_dir(None);
    let exact = direct::type1(
        &refs(&x),
        &c,
        &modes,
        ModeOrder::Cmcl,
        1,
        &all(modes[0] * modes[1]),
    );
    let err = direct::rel_error(&got.unwrap(), &exact);
    assert!(err < 1e-8, "{err:e}");
    let verdicts: Vec<String> = std::fs::read_dir(&dir)
        .unwrap()
        .filter_map(|e| {
            let p = e.unwrap().path();
            (p.extension()? == "fft-choice").then(|| std::fs::read_to_string(p).unwrap())
        })
        .collect();
    let _ = std::fs::remove_dir_all(&dir);
    println!("verdicts: {verdicts:?}");
    assert_eq!(verdicts.len(), 1, "{verdicts:?}");
    assert!(
        verdicts[0].starts_with("generated ") || verdicts[0].starts_with("cufft "),
        "{verdicts:?}"
    );
}

/// Relative l2 distance between two result vectors.
fn rel(a: &[Complex64], b: &[Complex64]) -> f64 {
    direct::rel_error(a, b)
}

/// The CPU plan's options for the types 1 and 2 these tests compare: σ = 2, the plan layer's
/// σ for a GPU (`DeviceClass::Gpu`), where on a CPU it raises σ for dense 2-D/3-D points and
/// the fine grids would no longer compare point by point; no tuning profile, which could fix
/// σ on the CPU alone.
fn cpu_opts() -> Options {
    Options {
        use_profile: false,
        upsampling: Some(Upsampling::TWO),
        ..Options::default()
    }
}

fn agreement<T: CudaFloat>(tol: f64, bound: f64, name: &str) {
    in_each_dimension(|dim, failures| {
        // Every backend's grids are the plan layer's (`nudt_gen::plan::fine_size`), so CPU and
        // GPU grids compare point by point.
        let modes = match dim {
            1 => vec![2901],
            2 => vec![130, 97],
            _ => vec![34, 29, 40],
        };
        // Dense enough that SM subproblems split bins, clustered in one corner as well.
        let m = 60_000;
        let mut rng = Rng::new(77 + dim as u64);
        let pi = std::f64::consts::PI;
        let mut x = rng.coords(dim, m, -pi, pi);
        for xd in x.iter_mut() {
            for v in xd.iter_mut().take(m / 3) {
                *v = 0.2 * *v - 2.9;
            }
        }
        let c = rng.complexes(m);
        let f = rng.complexes(modes.iter().product());
        let xt = cast::<T>(&x);
        let cpu = |ty, input: &[Complex64], isign| {
            let mut p = Plan::<T>::new(ty, &modes, isign, 1, tol, cpu_opts()).unwrap();
            p.set_points(&refs(&xt)).unwrap();
            let mut out = vec![Complex::<T>::default(); output_len(ty, &x, &modes)];
            p.execute(&cast_c::<T>(input), &mut out).unwrap();
            widen(&out)
        };
        let ref1 = cpu(TransformType::Type1, &c, -1);
        let ref2 = cpu(TransformType::Type2, &f, 1);
        for method in [GpuMethod::GmSort, GpuMethod::Sm, GpuMethod::OutputDriven] {
            let o = CudaOptions {
                spread: Some(method),
                interp: Some(method),
                ..opts()
            };
            let g1 = gpu_type12::<T>(TransformType::Type1, &x, &c, &modes, -1, tol, o.clone());
            let g2 = gpu_type12::<T>(TransformType::Type2, &x, &f, &modes, 1, tol, o.clone());
            for (ty, got, want) in [("type 1", g1, &ref1), ("type 2", g2, &ref2)] {
                match got {
                    Ok(got) => {
                        let d = rel(&got, want);
                        let label =
                            format!("{name} {ty} {dim}D {}: GPU vs CPU {d:.2e}", method.name());
                        println!("{label}");
                        if d > bound {
                            failures.push(label);
                        }
                    }
                    // Wide 3D f64 boxes may not fit shared memory: a typed refusal is right.
                    Err(CudaError::Unsupported(why)) if method != GpuMethod::GmSort => {
                        println!("{name} {ty} {dim}D {}: unsupported ({why})", method.name())
                    }
                    Err(e) => failures.push(format!("{name} {ty} {dim}D {}: {e}", method.name())),
                }
            }
        }
        // The fine grids themselves, method against method and against the CPU schedules.
        let xt = cast::<T>(&x);
        let ct = cast_c::<T>(&c);
        let mut cpu = Plan::<T>::new(TransformType::Type1, &modes, -1, 1, tol, cpu_opts()).unwrap();
        cpu.set_points(&refs(&xt)).unwrap();
        let cg = widen(&cpu.spread_only(nudt::Strategy::SourceDriven, &ct).unwrap());
        let mut g = CudaPlan::<T>::new(TransformType::Type1, &modes, -1, 1, tol, opts()).unwrap();
        g.set_points(&refs(&xt)).unwrap();
        for method in [GpuMethod::GmSort, GpuMethod::Sm, GpuMethod::OutputDriven] {
            match g.spread_only(method, &ct) {
                Ok(grid) => {
                    let d = rel(&widen(&grid), &cg);
                    let label = format!(
                        "{name} {dim}D fine grid {}: GPU vs CPU {d:.2e}",
                        method.name()
                    );
                    println!("{label}");
                    if d > bound {
                        failures.push(label);
                    }
                }
                Err(CudaError::Unsupported(_)) if method != GpuMethod::GmSort => {}
                Err(e) => failures.push(format!("{name} {dim}D grid {}: {e}", method.name())),
            }
        }
    });
}

#[test]
fn gpu_agrees_with_cpu_for_every_method_f64() {
    if let Some(_gpu) = gpu("gpu_agrees_with_cpu_for_every_method_f64") {
        agreement::<f64>(1e-9, 1e-11, "f64");
    }
}

#[test]
fn gpu_agrees_with_cpu_for_every_method_f32() {
    if let Some(_gpu) = gpu("gpu_agrees_with_cpu_for_every_method_f32") {
        agreement::<f32>(1e-5, 5e-5, "f32");
    }
}

#[test]
fn every_width_and_method_in_every_dimension() {
    let Some(_gpu) = gpu("every_width_and_method_in_every_dimension") else {
        return;
    };
    // Width w via the tolerance 10^(1-w) (the default kernel, σ = 2), every method, against
    // the direct sum, up to the widest kernel (16, at 1e-15). M = 400 keeps it quick.
    in_each_dimension(|dim, failures| {
        let (x, modes) = problem(dim, 40 + dim as u64);
        let mut rng = Rng::new(9 + dim as u64);
        let c = rng.complexes(x[0].len());
        let exact = direct::type1(
            &refs(&x),
            &c,
            &modes,
            ModeOrder::Cmcl,
            1,
            &all(modes.iter().product()),
        );
        for w in 2..=16usize {
            let tol = 10f64.powi(1 - w as i32) * 1.001;
            for method in [GpuMethod::GmSort, GpuMethod::Sm, GpuMethod::OutputDriven] {
                let o = CudaOptions {
                    spread: Some(method),
                    ..opts()
                };
                match gpu_type12::<f64>(TransformType::Type1, &x, &c, &modes, 1, tol, o) {
                    Ok(got) => {
                        let err = rel(&got, &exact);
                        if err > 10.0 * tol.max(1e-12) {
                            failures.push(format!("{dim}D w{w} {}: {err:.2e}", method.name()));
                        }
                    }
                    Err(CudaError::Unsupported(_)) if method != GpuMethod::GmSort => {}
                    Err(e) => failures.push(format!("{dim}D w{w} {}: {e}", method.name())),
                }
            }
        }
    });
}

/// A small run of every method, type, dimension and precision, and of the Gaussian-gridding
/// type 3 (its own module of wide windows): what compute-sanitizer (memcheck, racecheck) runs
/// on — `cuda_gpu sanitizer_small_run`.
#[test]
fn sanitizer_small_run_of_each_method() {
    let Some(_gpu) = gpu("sanitizer_small_run_of_each_method") else {
        return;
    };
    fn one<T: CudaFloat>(tol: f64) {
        for dim in 1..=3 {
            let modes = [vec![37usize], vec![18, 13], vec![9, 8, 11]][dim - 1].clone();
            let mut rng = Rng::new(3 + dim as u64);
            let x = rng.coords(dim, 1500, -4.0, 4.0);
            let c = rng.complexes(1500);
            let f = rng.complexes(modes.iter().product());
            let e1 = direct::type1(&refs(&x), &c, &modes, ModeOrder::Cmcl, 1, &all(f.len()));
            let e2 = direct::type2(&refs(&x), &f, &modes, ModeOrder::Cmcl, 1, &all(1500));
            for method in [GpuMethod::GmSort, GpuMethod::Sm, GpuMethod::OutputDriven] {
                let o = CudaOptions {
                    spread: Some(method),
                    interp: Some(method),
                    max_batch: 1,
                    ..opts()
                };
                let g1 = gpu_type12::<T>(TransformType::Type1, &x, &c, &modes, 1, tol, o.clone())
                    .unwrap();
                let g2 = gpu_type12::<T>(TransformType::Type2, &x, &f, &modes, 1, tol, o.clone())
                    .unwrap();
                assert!(rel(&g1, &e1) < 10.0 * tol, "{dim}D {method:?} type 1");
                assert!(rel(&g2, &e2) < 10.0 * tol, "{dim}D {method:?} type 2");
                let s = rng.coords(dim, 300, -8.0, 8.0);
                let g3 = gpu_type3::<T>(&x, &c, &s, -1, tol, o).unwrap();
                let e3 = direct::type3(&refs(&x), &c, &refs(&s), -1, &all(300));
                assert!(rel(&g3, &e3) < 10.0 * tol, "{dim}D {method:?} type 3");
            }
            // The two-pass sort, with the methods chosen for the points.
            let o = CudaOptions {
                two_pass_sort: Some(true),
                ..opts()
            };
            let g1 =
                gpu_type12::<T>(TransformType::Type1, &x, &c, &modes, 1, tol, o.clone()).unwrap();
            let g2 = gpu_type12::<T>(TransformType::Type2, &x, &f, &modes, 1, tol, o).unwrap();
            assert!(rel(&g1, &e1) < 10.0 * tol, "{dim}D two-pass sort, type 1");
            assert!(rel(&g2, &e2) < 10.0 * tol, "{dim}D two-pass sort, type 2");
            // The Gaussian-gridding type 3: two transforms, in batches of one as above.
            let s = rng.coords(dim, 300, -8.0, 8.0);
            let c2 = rng.complexes(2 * 1500);
            let o = CudaOptions {
                max_batch: 1,
                ..gaussian()
            };
            let xt = cast::<T>(&x);
            let st = cast::<T>(&s);
            let mut plan = CudaPlan::<T>::new_type3(dim, 1, 2, tol, o).unwrap();
            plan.set_points_type3(&refs(&xt), &refs(&st)).unwrap();
            let mut out = vec![Complex::<T>::default(); 2 * 300];
            plan.execute(&cast_c::<T>(&c2), &mut out).unwrap();
            let out = widen(&out);
            for t in 0..2 {
                let e = direct::type3(&refs(&x), &c2[t * 1500..][..1500], &refs(&s), 1, &all(300));
                let err = rel(&out[t * 300..][..300], &e);
                assert!(
                    err < 10.0 * tol,
                    "{dim}D Gaussian type 3, transform {t}: {err:.2e}"
                );
            }
        }
    }
    one::<f64>(1e-7);
    one::<f32>(1e-4);
}

#[test]
fn batches_edge_cases_and_mode_orders() {
    let Some(_gpu) = gpu("batches_edge_cases_and_mode_orders") else {
        return;
    };
    let pi = std::f64::consts::PI;
    let tol = 1e-9;
    // Batches: 5 transforms in cuFFT batches of 2 (with a remainder), against one at a time.
    for ty in [TransformType::Type1, TransformType::Type2] {
        let modes = [20usize, 13];
        let mut rng = Rng::new(5);
        let x = rng.coords(2, 500, -pi, pi);
        let ntr = 5;
        let nin = if ty == TransformType::Type1 { 500 } else { 260 };
        let nout = if ty == TransformType::Type1 { 260 } else { 500 };
        let input = rng.complexes(nin * ntr);
        let o = CudaOptions {
            max_batch: 2,
            ..opts()
        };
        let mut plan = CudaPlan::<f64>::new(ty, &modes, 1, ntr, tol, o).unwrap();
        plan.set_points(&refs(&x)).unwrap();
        let mut out = vec![Complex64::default(); nout * ntr];
        plan.execute(&input, &mut out).unwrap();
        let mut single = CudaPlan::<f64>::new(ty, &modes, 1, 1, tol, opts()).unwrap();
        single.set_points(&refs(&x)).unwrap();
        for t in 0..ntr {
            let mut one = vec![Complex64::default(); nout];
            single
                .execute(&input[t * nin..(t + 1) * nin], &mut one)
                .unwrap();
            assert!(
                rel(&out[t * nout..(t + 1) * nout], &one) < 1e-13,
                "{ty:?} transform {t}"
            );
        }
    }
    // Points exactly on ±π and far outside [−π, π); N_i = 1; FFT mode order.
    let x = vec![
        vec![pi, -pi, 3.0 * pi, -7.5, 100.0, 0.0, 1e-300],
        vec![-pi, pi, 0.5, 11.0, -100.0, 2.0 * pi, -1e-300],
    ];
    let mut rng = Rng::new(6);
    let c = rng.complexes(7);
    for modes in [vec![16usize, 1], vec![1, 1], vec![9, 8]] {
        for order in [ModeOrder::Cmcl, ModeOrder::Fft] {
            let o = CudaOptions {
                mode_order: order,
                ..opts()
            };
            let got = gpu_type12::<f64>(TransformType::Type1, &x, &c, &modes, -1, tol, o).unwrap();
            let exact = direct::type1(&refs(&x), &c, &modes, order, -1, &all(got.len()));
            let err = rel(&got, &exact);
            assert!(err < 10.0 * tol, "{modes:?} {order:?}: {err:e}");
        }
    }
    // More transforms than a CUDA grid has blocks along y (65535, which indexes the batch):
    // `max_batch` is clamped to nudt::cuda::MAX_BATCH, and the shared-memory kernels, whose
    // grids are (subproblems, batch), still see every transform.
    let ntr = nudt::cuda::MAX_BATCH + 10;
    let x1 = vec![vec![0.7]];
    let strengths = Rng::new(7).complexes(ntr);
    let o = CudaOptions {
        max_batch: usize::MAX,
        spread: Some(GpuMethod::Sm),
        interp: Some(GpuMethod::Sm),
        ..opts()
    };
    let mut plan =
        CudaPlan::<f64>::new(TransformType::Type1, &[4], 1, ntr, tol, o.clone()).unwrap();
    plan.set_points(&refs(&x1)).unwrap();
    let mut f = vec![Complex64::default(); 4 * ntr];
    plan.execute(&strengths, &mut f).unwrap();
    let unit = direct::type1(
        &refs(&x1),
        &[Complex64::new(1.0, 0.0)],
        &[4],
        ModeOrder::Cmcl,
        1,
        &all(4),
    );
    let mut plan2 = CudaPlan::<f64>::new(TransformType::Type2, &[4], -1, ntr, tol, o).unwrap();
    plan2.set_points(&refs(&x1)).unwrap();
    let mut back = vec![Complex64::default(); ntr];
    plan2.execute(&f, &mut back).unwrap();
    for (t, c) in strengths.iter().enumerate() {
        let want: Vec<Complex64> = unit.iter().map(|u| u * c).collect();
        let err = rel(&f[4 * t..][..4], &want);
        assert!(err < 10.0 * tol, "type 1 transform {t} of {ntr}: {err:.2e}");
        // Type 2 (the other sign) of those modes at the same point: Σ_k f_k e^{−ikx} = 4c.
        let err2 = (back[t] - 4.0 * c).norm() / (4.0 * c.norm());
        assert!(
            err2 < 10.0 * tol,
            "type 2 transform {t} of {ntr}: {err2:.2e}"
        );
    }
    // M = 0: type 1 gives zeros, type 2 nothing; type 3 with no sources gives zeros.
    let empty: Vec<Vec<f64>> = vec![vec![], vec![]];
    let f = gpu_type12::<f64>(TransformType::Type1, &empty, &[], &[6, 5], 1, tol, opts()).unwrap();
    assert!(f.iter().all(|v| *v == Complex64::default()));
    let c2 = gpu_type12::<f64>(
        TransformType::Type2,
        &empty,
        &rng.complexes(30),
        &[6, 5],
        1,
        tol,
        opts(),
    )
    .unwrap();
    assert!(c2.is_empty());
    let s = rng.coords(2, 4, -3.0, 3.0);
    let f3 = gpu_type3::<f64>(&empty, &[], &s, 1, tol, opts()).unwrap();
    assert!(f3.iter().all(|v| *v == Complex64::default()));
}

#[test]
fn device_buffers_and_user_stream() {
    let Some(_gpu) = gpu("device_buffers_and_user_stream") else {
        return;
    };
    let ctx = nudt::cuda::open(0).unwrap();
    let stream = ctx.new_stream().unwrap();
    let modes = [32usize, 24];
    let mut rng = Rng::new(8);
    let x = cast::<f32>(&rng.coords(2, 3000, -3.0, 3.0));
    let c = cast_c::<f32>(&rng.complexes(3000));
    let o = CudaOptions {
        stream: Some(stream.clone()),
        ..opts()
    };
    let mut plan = CudaPlan::<f32>::new(TransformType::Type1, &modes, -1, 1, 1e-5, o).unwrap();
    // The plan is the arrays' only owner: it reads them again at execute.
    let dx = Arc::new(stream.clone_htod(&x[0]).unwrap());
    let dy = Arc::new(stream.clone_htod(&x[1]).unwrap());
    plan.set_points_device(&[dx, dy]).unwrap();
    let got = widen(&execute_on_device(&mut plan, &c, 32 * 24, false));
    let mut host = vec![Complex::<f32>::default(); 32 * 24];
    plan.execute(&c, &mut host).unwrap();
    assert!(rel(&got, &widen(&host)) < 1e-6);
    let t = plan.timings().unwrap();
    assert!(t.setpts_ms > 0.0 && t.execute_ms > 0.0, "{t:?}");
    // Wrong device lengths are typed errors.
    let short = stream.alloc_zeros::<f32>(10).unwrap();
    let mut df = stream.alloc_zeros::<f32>(2 * 32 * 24).unwrap();
    assert!(matches!(
        plan.execute_device(&short, &mut df),
        Err(CudaError::Nudt(NudtError::Length { .. }))
    ));
}

/// cuFFT plans pass from a dropped NUFFT plan to the next of its shape (the process's shelf),
/// onto another stream, while a second live plan of that shape makes its own; a type 3 plan
/// whose grids change size with its points takes others. Every result against the direct
/// sum: a handle left with its old owner's work area (freed) or stream would fail here, or
/// in the sanitizer's run.
#[test]
fn cufft_plans_pass_between_plans() {
    let Some(_gpu) = gpu("cufft_plans_pass_between_plans") else {
        return;
    };
    let ctx = nudt::cuda::open(0).unwrap();
    let (modes, m, ntr) = ([40usize, 36], 2000, 3);
    let mut rng = Rng::new(31);
    let x = rng.coords(2, m, -3.0, 3.0);
    let c = rng.complexes(m * ntr);
    let which: Vec<usize> = (0..modes.iter().product()).collect();
    let exact: Vec<Complex64> = c
        .chunks(m)
        .flat_map(|ct| direct::type1(&refs(&x), ct, &modes, default_order(), -1, &which))
        .collect();
    // Batches of two: cuFFT plans for batch 2 and for the remainder, 1, sharing a work area.
    let plan = |stream: Option<_>| {
        let o = CudaOptions {
            stream,
            max_batch: 2,
            fft: FftEngine::CuFft,
            ..opts()
        };
        let mut p = CudaPlan::<f64>::new(TransformType::Type1, &modes, -1, ntr, 1e-9, o).unwrap();
        p.set_points(&refs(&x)).unwrap();
        p
    };
    let run = |p: &mut CudaPlan<f64>| {
        let mut f = vec![Complex64::default(); exact.len()];
        p.execute(&c, &mut f).unwrap();
        let e = rel(&f, &exact);
        assert!(e < 1e-8, "{e:.2e}");
    };
    let mut first = plan(None);
    run(&mut first);
    drop(first);
    let (s1, s2) = (ctx.new_stream().unwrap(), ctx.new_stream().unwrap());
    let mut shelved = plan(Some(s1));
    let mut made = plan(Some(s2));
    for _ in 0..2 {
        run(&mut shelved);
        run(&mut made);
    }
    drop(shelved);
    run(&mut made);
    // Type 3: a wider set of targets needs larger grids, then the first size comes back.
    let src = rng.coords(2, m, -3.0, 3.0);
    let cs = rng.complexes(m);
    let mut t3 = CudaPlan::<f64>::new_type3(2, 1, 1, 1e-9, opts()).unwrap();
    for half in [20.0, 45.0, 20.0] {
        let tgt = rng.coords(2, 700, -half, half);
        t3.set_points_type3(&refs(&src), &refs(&tgt)).unwrap();
        let mut f = vec![Complex64::default(); 700];
        t3.execute(&cs, &mut f).unwrap();
        let all: Vec<usize> = (0..700).collect();
        let e = rel(&f, &direct::type3(&refs(&src), &cs, &refs(&tgt), 1, &all));
        assert!(e < 1e-8, "type 3, targets in ±{half}: {e:.2e}");
    }
}

#[test]
fn bad_input_gives_typed_errors() {
    let Some(_gpu) = gpu("bad_input_gives_typed_errors") else {
        return;
    };
    let t1 = TransformType::Type1;
    assert!(matches!(
        CudaPlan::<f32>::new(t1, &[10], 1, 1, 1e-9, opts()),
        Err(CudaError::Nudt(NudtError::Gen(_)))
    ));
    assert!(matches!(
        CudaPlan::<f64>::new(t1, &[10], 2, 1, 1e-6, opts()),
        Err(CudaError::Nudt(NudtError::Sign(2)))
    ));
    assert!(matches!(
        CudaPlan::<f64>::new(t1, &[10], 1, 0, 1e-6, opts()),
        Err(CudaError::Nudt(NudtError::ZeroTransforms))
    ));
    assert!(matches!(
        CudaPlan::<f64>::new(t1, &[10, 0], 1, 1, 1e-6, opts()),
        Err(CudaError::Nudt(NudtError::Gen(_)))
    ));
    assert!(CudaPlan::<f64>::new(t1, &[10; 4], 1, 1, 1e-6, opts()).is_err());
    let mut p = CudaPlan::<f64>::new(t1, &[10, 10], 1, 1, 1e-6, opts()).unwrap();
    let mut out = vec![Complex64::default(); 100];
    assert!(matches!(
        p.execute(&[Complex64::default(); 3], &mut out),
        Err(CudaError::Nudt(NudtError::PointsNotSet))
    ));
    assert!(matches!(
        p.set_points(&[&[0.0, f64::NAN][..], &[0.0, 1.0][..]]),
        Err(CudaError::Nudt(NudtError::NonFinite { index: 1, .. }))
    ));
    assert!(matches!(
        p.set_points(&[&[0.0, 1.0][..], &[0.0][..]]),
        Err(CudaError::Nudt(NudtError::Length { .. }))
    ));
    assert!(matches!(
        p.set_points(&[&[0.0, 1.0][..]]),
        Err(CudaError::Nudt(NudtError::Coordinates { .. }))
    ));
    p.set_points(&[&[0.0, 1.0][..], &[0.5, 1.0][..]]).unwrap();
    assert!(matches!(
        p.execute(&[Complex64::default(); 3], &mut out),
        Err(CudaError::Nudt(NudtError::Length { .. }))
    ));
    assert!(matches!(
        p.set_points_type3(&[&[0.0][..]], &[&[0.0][..]]),
        Err(CudaError::Nudt(NudtError::WrongType { .. }))
    ));
    assert!(matches!(
        CudaPlan::<f64>::new(TransformType::Type3, &[4], 1, 1, 1e-6, opts()),
        Err(CudaError::Nudt(NudtError::WrongType { .. }))
    ));
    assert!(matches!(
        CudaPlan::<f64>::new(
            t1,
            &[10],
            1,
            1,
            1e-6,
            CudaOptions {
                device: 999,
                ..opts()
            }
        ),
        Err(CudaError::NoDevice { ordinal: 999, .. })
    ));
    // Bins: a side of 0, and padded boxes beyond shared memory or beyond usize, are refused;
    // sides in range are used as given.
    for bins in [[0, 8, 1], [1 << 20, 1 << 20, 1], [usize::MAX, 1, 1]] {
        let o = CudaOptions {
            bins: Some(bins),
            ..opts()
        };
        let e = CudaPlan::<f64>::new(t1, &[10, 10], 1, 1, 1e-6, o).unwrap_err();
        assert!(matches!(e, CudaError::Unsupported(_)), "{bins:?}: {e:?}");
    }
    let o = CudaOptions {
        bins: Some([8, 4, 99]),
        ..opts()
    };
    let p = CudaPlan::<f64>::new(t1, &[10, 10], 1, 1, 1e-6, o).unwrap();
    assert_eq!(p.bins(), vec![8, 4]);
    // A grid far beyond the GPU's memory is refused up front, as out of memory.
    let e = CudaPlan::<f64>::new(t1, &[1 << 20, 1 << 20], 1, 1, 1e-6, opts()).unwrap_err();
    assert!(
        matches!(
            e,
            CudaError::OutOfMemory { .. } | CudaError::Nudt(NudtError::GridOverflow)
        ),
        "{e:?}"
    );
    // After all of that the device still works.
    let mut p = CudaPlan::<f64>::new(t1, &[8], 1, 1, 1e-6, opts()).unwrap();
    p.set_points(&[&[0.3][..]]).unwrap();
    let mut f = vec![Complex64::default(); 8];
    p.execute(&[Complex64::new(1.0, 0.0)], &mut f).unwrap();
    assert!(
        (f[4] - Complex64::new(1.0, 0.0)).norm() < 1e-5,
        "{:?}",
        f[4]
    );
}

/// A module of one probe kernel, unique to this process and `tag` (so that no cache holds it).
fn probe_source(tag: &str) -> nudt::gen::gpu::GpuSource {
    let body = format!(
        "extern \"C\" __global__ void nudt_probe(int* p) {{ p[0] = {}; }} // {tag}",
        std::process::id()
    );
    nudt::gen::gpu::GpuSource {
        name: format!("nudt_cache_probe_{tag}"),
        hash: nudt::gen::gpu::fnv1a64(body.as_bytes()),
        source: body,
        kernels: Vec::new(),
        spec: None,
    }
}

/// Modules are compiled once, then come from memory; the disk cache gets the CUBIN; and a
/// cached file the driver cannot or must not load (garbage, a CUBIN cut short, a whole CUBIN
/// of another GPU) is compiled again and replaced rather than reported.
#[test]
fn modules_are_cached_in_memory_and_on_disk() {
    let Some(_gpu) = gpu("modules_are_cached_in_memory_and_on_disk") else {
        return;
    };
    use nudt::cuda::{cache_path, detect_arch, load_module, nvrtc_cubin, GpuArch, ModuleOrigin};
    let dir = std::env::temp_dir().join(format!("nudt-cuda-cache-test-{}", std::process::id()));
    nudt::cuda::set_cache_dir(Some(Some(dir.clone())));
    let ctx = nudt::cuda::open(0).unwrap();
    let arch = detect_arch(&ctx).unwrap();
    let src = probe_source("plain");
    let (_, first) = load_module(&ctx, &src, &arch).unwrap();
    let (_, second) = load_module(&ctx, &src, &arch).unwrap();
    assert_eq!(first, ModuleOrigin::Compiled);
    assert_eq!(second, ModuleOrigin::Memory);
    let path = cache_path(&src, &arch).unwrap().unwrap();
    assert!(std::fs::read(&path).unwrap().starts_with(b"\x7fELF"));

    let other = if arch.compute_capability.0 == 7 {
        GpuArch::h100()
    } else {
        GpuArch::turing()
    };
    let whole = nvrtc_cubin(&probe_source("cut"), &arch).unwrap();
    let damaged = [
        ("garbage", b"not a cubin".to_vec()),
        ("cut", whole[..whole.len() / 2].to_vec()),
        (
            "foreign",
            nvrtc_cubin(&probe_source("foreign"), &other).unwrap(),
        ),
    ];
    for (tag, bytes) in damaged {
        let src = probe_source(tag);
        let path = cache_path(&src, &arch).unwrap().unwrap();
        std::fs::write(&path, &bytes).unwrap();
        let (module, origin) = load_module(&ctx, &src, &arch).unwrap();
        assert_eq!(origin, ModuleOrigin::Compiled, "{tag}");
        module.load_function("nudt_probe").unwrap();
        let now = std::fs::read(&path).unwrap();
        assert!(
            now != bytes && now.starts_with(b"\x7fELF"),
            "{tag}: the cached file was not replaced"
        );
        assert_eq!(
            load_module(&ctx, &src, &arch).unwrap().1,
            ModuleOrigin::Memory
        );
    }
    nudt::cuda::set_cache_dir(None);
    let _ = std::fs::remove_dir_all(&dir);
}

/// Plans and point sets that fail for want of device memory give back what they had taken.
/// Needs a GPU (it reads the device's free memory, `cuMemGetInfo`); without one it says
/// SKIPPED. The GPU tests take turns ([`gpu`]), so no other test allocates meanwhile.
#[test]
fn failures_give_device_memory_back() {
    let Some(_gpu) = gpu("failures_give_device_memory_back") else {
        return;
    };
    let ctx = nudt::cuda::open(0).unwrap();
    // Freed memory returns to the device's pool once the stream-ordered frees have run; the
    // pool keeps it (for the next plan) until trimmed.
    let free = || {
        trim_pool(&ctx);
        ctx.mem_get_info().unwrap().0
    };
    let total = ctx.mem_get_info().unwrap().1;
    let tol = 1e-6;
    let t1 = TransformType::Type1;
    let mut rng = Rng::new(77);
    // The modules and cuFFT's own state, which stay loaded, first: small plans of the kinds
    // that fail below.
    let x = rng.coords(2, 1000, -3.0, 3.0);
    let c = rng.complexes(1000);
    gpu_type12::<f64>(TransformType::Type1, &x, &c, &[32, 32], 1, tol, opts()).unwrap();
    let s = rng.coords(2, 100, -30.0, 30.0);
    gpu_type3::<f64>(&x, &c, &s, 1, tol, opts()).unwrap();
    let before = free();

    // A batch of fine grids beyond the device: each grid (a third of the memory) fits, eight
    // do not; the plan fails at the batch, after its mode map and module.
    let n = ((total / 3 / 16) as f64).sqrt() as usize / 2;
    let o = CudaOptions {
        max_batch: 8,
        ..opts()
    };
    let e = CudaPlan::<f64>::new(t1, &[n, n], 1, 8, tol, o).unwrap_err();
    assert!(matches!(e, CudaError::OutOfMemory { .. }), "{e:?}");
    // Type 3 points whose grids exceed the device: set_points fails after uploading and
    // rescaling a gigabyte of points.
    let m = 20_000_000;
    let xs = rng.coords(2, m, -3.0, 3.0);
    let far = rng.coords(2, 100, -1e5, 1e5);
    let mut plan = CudaPlan::<f64>::new_type3(2, 1, 1, tol, opts()).unwrap();
    let e = plan.set_points_type3(&refs(&xs), &refs(&far)).unwrap_err();
    assert!(matches!(e, CudaError::OutOfMemory { .. }), "{e:?}");
    drop(xs);
    // The plan still works.
    plan.set_points_type3(&refs(&x), &refs(&s)).unwrap();
    let mut f = vec![Complex64::default(); 100];
    plan.execute(&c, &mut f).unwrap();
    let exact = direct::type3(&refs(&x), &c, &refs(&s), 1, &all(100));
    assert!(rel(&f, &exact) < 10.0 * tol);
    drop(plan);

    let after = free();
    println!(
        "free device memory: {} MiB before, {} MiB after the failures",
        before >> 20,
        after >> 20
    );
    // A leak would be gigabytes; the driver's own bookkeeping moves by a few MiB.
    assert!(
        after + (64 << 20) >= before,
        "{} MiB of device memory not given back",
        (before - after) >> 20
    );
}

/// Waits for the device, then gives the default pool's unused memory back to the driver.
fn trim_pool(ctx: &nudt::cuda::CudaContext) {
    use nudt::cuda::cudarc::driver::result::{device, mem_pool};
    ctx.synchronize().unwrap();
    // SAFETY: the device of a live context, and its default pool.
    unsafe { mem_pool::trim_to(device::get_default_mem_pool(ctx.cu_device()).unwrap(), 0) }
        .unwrap();
}

/// Memory that plans free stays in the device's default pool for the next plan (whose
/// set-points then map nothing), and is given back when a plan needs more than the device
/// has outside the pool. Needs a GPU; without one it says SKIPPED.
#[test]
fn freed_memory_is_kept_and_given_back() {
    let Some(_gpu) = gpu("freed_memory_is_kept_and_given_back") else {
        return;
    };
    let ctx = nudt::cuda::open(0).unwrap();
    let stream = ctx.default_stream();
    let free = || {
        ctx.synchronize().unwrap();
        ctx.mem_get_info().unwrap().0
    };
    let tol = 1e-6;
    let mut rng = Rng::new(78);
    let x = rng.coords(2, 1000, -3.0, 3.0);
    let c = rng.complexes(1000);
    // A plan: the pool now keeps what is freed.
    gpu_type12::<f64>(TransformType::Type1, &x, &c, &[32, 32], 1, tol, opts()).unwrap();
    trim_pool(&ctx);
    let total = ctx.mem_get_info().unwrap().1;
    let idle = free();
    // A plan whose fine grid (a fifth of the device, under cuFFT's 2^31 points) fits only if
    // the pool gives back what it keeps.
    let n = ((total as f64 / 5.0 / 16.0).sqrt() / 2.0) as usize;
    let grid_bytes = 16 * (2 * n) * (2 * n);
    // All but half such a grid taken from the pool and freed: the pool keeps it.
    let big = idle.saturating_sub(grid_bytes / 2);
    // SAFETY: never read.
    drop(unsafe { stream.alloc::<u8>(big) }.unwrap());
    let kept = idle.saturating_sub(free());
    assert!(
        kept >= big,
        "the pool kept {} of {} MiB",
        kept >> 20,
        big >> 20
    );
    let plan = CudaPlan::<f64>::new(TransformType::Type1, &[n, n], 1, 1, tol, opts());
    assert!(plan.is_ok(), "{:?}", plan.err());
    drop(plan);
    // And a plan made after it still computes the right answer.
    let f = gpu_type12::<f64>(TransformType::Type1, &x, &c, &[32, 32], 1, tol, opts()).unwrap();
    let exact = direct::type1(&refs(&x), &c, &[32, 32], ModeOrder::Cmcl, 1, &all(f.len()));
    assert!(rel(&f, &exact) < 10.0 * tol);
}

fn gaussian() -> CudaOptions {
    CudaOptions {
        type3: Type3Method::GaussianCapozzoli,
        ..opts()
    }
}

/// The CPU's Gaussian-gridding type 3 (Capozzoli et al.'s parameters), the GPU's reference.
fn cpu_gaussian_type3(
    x: &[Vec<f64>],
    c: &[Complex64],
    s: &[Vec<f64>],
    isign: i32,
    tol: f64,
) -> Vec<Complex64> {
    let o = Options {
        type3: Type3Method::GaussianCapozzoli,
        ..Options::default()
    };
    let mut p = Plan::<f64>::new_type3(x.len(), isign, 1, tol, o).unwrap();
    p.set_points_type3(&refs(x), &refs(s)).unwrap();
    let mut f = vec![Complex64::default(); s[0].len()];
    p.execute(c, &mut f).unwrap();
    f
}

/// The seed case of examples/cuda_bench.rs at K = 64 (N = K² sources in [−π, π)², K targets
/// in [−K/2, K/2)², tol 1e-10), and small 1D and 3D cases at 1e-6: against the direct sum
/// and against the CPU plan of the same method, which computes the same discretisation.
#[test]
fn gaussian_type3_matches_direct_sum_and_cpu() {
    let Some(_gpu) = gpu("gaussian_type3_matches_direct_sum_and_cpu") else {
        return;
    };
    let pi = std::f64::consts::PI;
    let kk = 64usize;
    let mut failures = Vec::new();
    let mut rng = Rng::new(64);
    let cases = [
        (2, kk * kk, kk, pi, kk as f64 / 2.0, 1e-10, 1e-9, -1),
        (1, 3000, 500, 4.0, 60.0, 1e-6, 1e-5, 1),
        (3, 2000, 300, 2.5, 9.0, 1e-6, 1e-5, -1),
    ];
    for (dim, m, k, xh, sh, tol, bound, isign) in cases {
        let x = rng.coords(dim, m, -xh, xh);
        let s = rng.coords(dim, k, -sh, sh);
        let c = rng.complexes(m);
        let exact = direct::type3(&refs(&x), &c, &refs(&s), isign, &all(k));
        let mut plan = CudaPlan::<f64>::new_type3(dim, isign, 1, tol, gaussian()).unwrap();
        plan.set_points_type3(&refs(&x), &refs(&s)).unwrap();
        let mut got = vec![Complex64::default(); k];
        plan.execute(&c, &mut got).unwrap();
        let err = rel(&got, &exact);
        let cpu = cpu_gaussian_type3(&x, &c, &s, isign, tol);
        let agree = rel(&got, &cpu);
        let label = format!(
            "Gaussian type 3 {dim}D M={m} K={k} tol {tol:.0e}: window {}, grid {:?}, error \
             {err:.2e} (CPU {:.2e}), GPU vs CPU {agree:.2e}",
            plan.width(),
            plan.fine_grid(),
            rel(&cpu, &exact)
        );
        println!("{label}");
        // The two backends differ by rounding only: same grid, window and factors.
        if err > bound || agree > 1e-11 {
            failures.push(label);
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// Batches (with a remainder batch), device buffers, new points of the same and of other
/// extents (grid reuse and regrowth), f32, no sources, and a plan refused for a tolerance
/// f32 cannot reach.
#[test]
fn gaussian_type3_batches_points_and_precisions() {
    let Some(_gpu) = gpu("gaussian_type3_batches_points_and_precisions") else {
        return;
    };
    let mut rng = Rng::new(65);
    let (m, k, ntr, tol) = (1200, 150, 5, 1e-8);
    let x = rng.coords(2, m, -3.0, 3.0);
    let s = rng.coords(2, k, -20.0, 20.0);
    let c = rng.complexes(m * ntr);
    let o = CudaOptions {
        max_batch: 2,
        ..gaussian()
    };
    let mut plan = CudaPlan::<f64>::new_type3(2, 1, ntr, tol, o).unwrap();
    plan.set_points_type3(&refs(&x), &refs(&s)).unwrap();
    let mut out = vec![Complex64::default(); k * ntr];
    plan.execute(&c, &mut out).unwrap();
    for t in 0..ntr {
        let exact = direct::type3(&refs(&x), &c[t * m..(t + 1) * m], &refs(&s), 1, &all(k));
        let err = rel(&out[t * k..(t + 1) * k], &exact);
        assert!(err < 10.0 * tol, "transform {t}: {err:.2e}");
    }
    // The same through device buffers.
    let dev = execute_on_device(&mut plan, &c, k * ntr, false);
    assert!(rel(&dev, &out) < 1e-14);
    let t = plan.timings().unwrap();
    assert!(t.setpts_ms > 0.0 && t.execute_ms > 0.0, "{t:?}");
    // New points: shifted (same extents, the grid is reused), then wider (a new grid).
    for (shift, scale) in [(0.7, 1.0), (0.0, 3.0)] {
        let x2: Vec<Vec<f64>> = x
            .iter()
            .map(|v| v.iter().map(|a| a * scale + shift).collect())
            .collect();
        plan.set_points_type3(&refs(&x2), &refs(&s)).unwrap();
        plan.execute(&c, &mut out).unwrap();
        let exact = direct::type3(&refs(&x2), &c[..m], &refs(&s), 1, &all(k));
        let err = rel(&out[..k], &exact);
        assert!(err < 10.0 * tol, "shift {shift} scale {scale}: {err:.2e}");
    }
    // f32 in 1D and 3D.
    for dim in [1, 3] {
        let x = rng.coords(dim, 800, -2.0, 2.0);
        let s = rng.coords(dim, 100, -15.0, 15.0);
        let c = rng.complexes(800);
        let got = gpu_type3::<f32>(&x, &c, &s, -1, 1e-5, gaussian()).unwrap();
        let exact = direct::type3(&refs(&x), &c, &refs(&s), -1, &all(100));
        let err = rel(&got, &exact);
        assert!(err < 1e-4, "f32 {dim}D: {err:.2e}");
    }
    // No sources: zeros.
    let empty: Vec<Vec<f64>> = vec![vec![], vec![]];
    let f = gpu_type3::<f64>(&empty, &[], &s, 1, tol, gaussian()).unwrap();
    assert!(f.iter().all(|v| *v == Complex64::default()));
    assert!(matches!(
        CudaPlan::<f32>::new_type3(2, 1, 1, 1e-10, gaussian()),
        Err(CudaError::Nudt(NudtError::Gen(_)))
    ));
}

/// `execute_adjoint` against the direct sum of the adjoint (type 1's: a type 2 with the
/// opposite sign; type 2's: a type 1; type 3's: the targets back to the sources), for types
/// 1, 2 and FINUFFT's type 3 (both precisions) and the Gaussian type 3 (f64), 1–3 D, three stacked
/// transforms in batches of two (a remainder batch), and through device buffers.
#[test]
fn adjoints_match_the_direct_sum() {
    let Some(_gpu) = gpu("adjoints_match_the_direct_sum") else {
        return;
    };
    in_each_dimension(|dim, failures| {
        let (x, modes) = problem(dim, 70 + dim as u64);
        let mut rng = Rng::new(80 + dim as u64);
        let s = rng.coords(dim, 300, -9.0, 9.0);
        for (label, ty, o) in [
            ("type 1", TransformType::Type1, opts()),
            ("type 2", TransformType::Type2, opts()),
            ("type 3", TransformType::Type3, opts()),
            ("Gaussian type 3", TransformType::Type3, gaussian()),
        ] {
            let o = CudaOptions { max_batch: 2, ..o };
            for (prec, tol) in [("f32", 1e-5), ("f64", 1e-9)] {
                // The Gaussian method is an f64 method (its tests say where f32 stops).
                if label.starts_with("Gaussian") && prec == "f32" {
                    continue;
                }
                let isign = if ty == TransformType::Type2 { -1 } else { 1 };
                let e = if prec == "f32" {
                    adjoint_error::<f32>(ty, isign, &x, &s, &modes, tol, o.clone(), &mut rng)
                } else {
                    adjoint_error::<f64>(ty, isign, &x, &s, &modes, tol, o.clone(), &mut rng)
                };
                let line = format!("{label} {dim}D {prec} tol {tol:.0e}: adjoint error {e:.2e}");
                println!("{line}");
                if e > 10.0 * tol {
                    failures.push(line);
                }
            }
        }
    });
}

/// One plan's adjoint on three stacked inputs, host and device buffers (which must agree to
/// rounding),
/// against the direct sum; returns the relative error.
#[allow(clippy::too_many_arguments)]
fn adjoint_error<T: CudaFloat>(
    ty: TransformType,
    isign: i32,
    x: &[Vec<f64>],
    s: &[Vec<f64>],
    modes: &[usize],
    tol: f64,
    o: CudaOptions,
    rng: &mut Rng,
) -> f64 {
    let ntr = 3;
    let dim = x.len();
    let (xt, st) = (cast::<T>(x), cast::<T>(s));
    let (xr, sr) = (widen_all(&xt), widen_all(&st));
    let mut plan = if ty == TransformType::Type3 {
        let mut p = CudaPlan::<T>::new_type3(dim, isign, ntr, tol, o).unwrap();
        p.set_points_type3(&refs(&xt), &refs(&st)).unwrap();
        p
    } else {
        let mut p = CudaPlan::<T>::new(ty, modes, isign, ntr, tol, o).unwrap();
        p.set_points(&refs(&xt)).unwrap();
        p
    };
    let (m, nm, k) = (x[0].len(), modes.iter().product::<usize>(), s[0].len());
    let (a, b) = match ty {
        TransformType::Type1 => (nm, m),
        TransformType::Type2 => (m, nm),
        TransformType::Type3 => (k, m),
    };
    let v = cast_c::<T>(&rng.complexes(a * ntr));
    let mut out = vec![Complex::<T>::default(); b * ntr];
    plan.execute_adjoint(&v, &mut out).unwrap();
    // The same through device buffers.
    let back = execute_on_device(&mut plan, &v, b * ntr, true);
    // Spreading adds by atomics, in no fixed order: the two runs agree to rounding.
    let apart = rel(&widen(&back), &widen(&out));
    assert!(
        apart < tol,
        "{ty:?} {dim}D: device buffers and host arrays {apart:e} apart"
    );
    let vw = widen(&v);
    let (mut got, mut want) = (Vec::new(), Vec::new());
    let which = all(b);
    for t in 0..ntr {
        let vt = &vw[t * a..(t + 1) * a];
        want.extend(match ty {
            TransformType::Type1 => {
                direct::type2(&refs(&xr), vt, modes, ModeOrder::Cmcl, -isign, &which)
            }
            TransformType::Type2 => {
                direct::type1(&refs(&xr), vt, modes, ModeOrder::Cmcl, -isign, &which)
            }
            TransformType::Type3 => direct::type3(&refs(&sr), vt, &refs(&xr), -isign, &which),
        });
        got.extend(widen(&out[t * b..(t + 1) * b]));
    }
    rel(&got, &want)
}

/// Coordinates as the plan saw them (rounded to `T`), widened again.
fn widen_all<T: CudaFloat>(v: &[Vec<T>]) -> Vec<Vec<f64>> {
    v.iter()
        .map(|d| d.iter().map(|c| c.to_f64().unwrap()).collect())
        .collect()
}

/// Non-finite coordinates in device arrays (which the plan does not read on the host) are
/// found on the GPU and reported as the host path reports them, naming the first bad point,
/// and the context survives: the same plan then takes good points and matches the direct
/// sum. Types 1 and 2 in 1–3 D (the tiled and the warp-aggregated bin counts), type 3 with
/// its bounding intervals, and the Gaussian type 3.
#[test]
fn non_finite_device_points_are_typed_errors() {
    let Some(_gpu) = gpu("non_finite_device_points_are_typed_errors") else {
        return;
    };
    let ctx = nudt::cuda::open(0).unwrap();
    let stream = ctx.new_stream().unwrap();
    let on = |o: CudaOptions| CudaOptions {
        stream: Some(stream.clone()),
        ..o
    };
    let names = ["x", "y", "z"];
    let mut rng = Rng::new(43);
    let (m, tol) = (2000usize, 1e-9);
    let not_finite = |e: CudaError, what: &str, index: usize| match e {
        CudaError::Nudt(NudtError::NonFinite {
            what: w,
            index: i,
            value,
        }) => {
            assert_eq!((w, i), (what, index), "{value}");
            assert!(!value.is_finite());
        }
        other => panic!("expected NonFinite for {what}[{index}], got {other:?}"),
    };
    for (dim, modes) in [(1, vec![64usize]), (2, vec![40, 36]), (3, vec![24, 20, 16])] {
        for ty in [TransformType::Type1, TransformType::Type2] {
            let x = rng.coords(dim, m, -3.0, 3.0);
            let mut bad = x.clone();
            bad[dim - 1][m - 5] = f64::INFINITY;
            bad[dim - 1][700] = f64::NAN;
            bad[0][m - 1] = f64::NEG_INFINITY;
            let up = |v: &[Vec<f64>]| -> Vec<_> {
                v.iter()
                    .map(|c| Arc::new(stream.clone_htod(c).unwrap()))
                    .collect()
            };
            let mut plan = CudaPlan::<f64>::new(ty, &modes, 1, 1, tol, on(opts())).unwrap();
            not_finite(
                plan.set_points_device(&up(&bad)).unwrap_err(),
                names[dim - 1],
                700,
            );
            let nm = modes.iter().product::<usize>();
            let (nin, nout) = if ty == TransformType::Type1 {
                (m, nm)
            } else {
                (nm, m)
            };
            let input = rng.complexes(nin);
            let mut out = vec![Complex64::default(); nout];
            assert!(matches!(
                plan.execute(&input, &mut out),
                Err(CudaError::Nudt(NudtError::PointsNotSet))
            ));
            plan.set_points_device(&up(&x)).unwrap();
            plan.execute(&input, &mut out).unwrap();
            let which: Vec<usize> = (0..nout).collect();
            let exact = if ty == TransformType::Type1 {
                direct::type1(&refs(&x), &input, &modes, default_order(), 1, &which)
            } else {
                direct::type2(&refs(&x), &input, &modes, default_order(), 1, &which)
            };
            let err = direct::rel_error(&out, &exact);
            assert!(err < 1e-7, "{dim}-D {ty:?} after the bad points: {err:e}");
        }
        for o in [opts(), gaussian()] {
            let x = rng.coords(dim, m, -3.0, 3.0);
            let s = rng.coords(dim, 300, -20.0, 20.0);
            let c = rng.complexes(m);
            let up = |v: &[Vec<f64>]| -> Vec<_> {
                v.iter().map(|c| stream.clone_htod(c).unwrap()).collect()
            };
            let mut plan = CudaPlan::<f64>::new_type3(dim, 1, 1, tol, on(o)).unwrap();
            let mut bx = x.clone();
            bx[dim - 1][1234] = f64::NAN;
            let (dx, ds) = (up(&bx), up(&s));
            let e = plan
                .set_points_type3_device(
                    &dx.iter().collect::<Vec<_>>(),
                    &ds.iter().collect::<Vec<_>>(),
                )
                .unwrap_err();
            not_finite(e, names[dim - 1], 1234);
            let mut bs = s.clone();
            bs[0][7] = f64::INFINITY;
            let (dx, ds) = (up(&x), up(&bs));
            let e = plan
                .set_points_type3_device(
                    &dx.iter().collect::<Vec<_>>(),
                    &ds.iter().collect::<Vec<_>>(),
                )
                .unwrap_err();
            not_finite(e, "s", 7);
            let ds = up(&s);
            plan.set_points_type3_device(
                &dx.iter().collect::<Vec<_>>(),
                &ds.iter().collect::<Vec<_>>(),
            )
            .unwrap();
            let mut f = vec![Complex64::default(); 300];
            plan.execute(&c, &mut f).unwrap();
            let which: Vec<usize> = (0..300).collect();
            let err = direct::rel_error(&f, &direct::type3(&refs(&x), &c, &refs(&s), 1, &which));
            assert!(err < 1e-6, "{dim}-D type 3 after the bad points: {err:e}");
        }
    }
}

/// A point set per transform from device arrays that hold the sets one after another (a
/// `(B, M)` tensor, or ragged sets joined on the device): types 1 and 2 in 1–3 D, each
/// transform against its own direct sum, an empty set among them; a non-finite coordinate
/// named in its own set, after which the plan takes good sets; counts that do not fit the
/// arrays are typed errors.
#[test]
fn per_transform_sets_from_device_arrays() {
    let Some(_gpu) = gpu("per_transform_sets_from_device_arrays") else {
        return;
    };
    let ctx = nudt::cuda::open(0).unwrap();
    let stream = ctx.new_stream().unwrap();
    let o = CudaOptions {
        stream: Some(stream.clone()),
        ..opts()
    };
    let mut rng = Rng::new(47);
    let counts = [700usize, 0, 1200];
    let total: usize = counts.iter().sum();
    let starts = [0, 700, 700, total];
    for (dim, modes) in [(1, vec![64usize]), (2, vec![40, 36]), (3, vec![24, 20, 16])] {
        let nm = modes.iter().product::<usize>();
        let x = rng.coords(dim, total, -3.0, 3.0);
        let up = |v: &[Vec<f64>]| -> Vec<_> {
            v.iter()
                .map(|c| Arc::new(stream.clone_htod(c).unwrap()))
                .collect()
        };
        for ty in [TransformType::Type1, TransformType::Type2] {
            let mut plan = CudaPlan::<f64>::new(ty, &modes, 1, 3, 1e-9, o.clone()).unwrap();
            // A NaN at set 2's point 5 (point 705 of the arrays).
            let mut bad = x.clone();
            bad[dim - 1][705] = f64::NAN;
            match plan.set_points_per_transform_device(&up(&bad), &counts) {
                Err(CudaError::Nudt(NudtError::InTransform { index: 2, error })) => {
                    assert!(
                        matches!(*error, NudtError::NonFinite { index: 5, .. }),
                        "{error}"
                    )
                }
                r => panic!("{dim}-D: a NaN in set 2 gave {r:?}"),
            }
            for wrong in [&counts[..2], &[700, 0, 1199][..]] {
                let e = plan.set_points_per_transform_device(&up(&x), wrong);
                assert!(
                    matches!(
                        e,
                        Err(CudaError::Nudt(
                            NudtError::PointSets { .. } | NudtError::Length { .. }
                        ))
                    ),
                    "counts {wrong:?}: {e:?}"
                );
            }
            plan.set_points_per_transform_device(&up(&x), &counts)
                .unwrap();
            let (nin, nout) = match ty {
                TransformType::Type1 => (total, 3 * nm),
                _ => (3 * nm, total),
            };
            let input = rng.complexes(nin);
            let out = execute_on_device(&mut plan, &input, nout, false);
            for b in 0..3 {
                let set: Vec<&[f64]> = x.iter().map(|c| &c[starts[b]..starts[b + 1]]).collect();
                let (got, want) = match ty {
                    TransformType::Type1 => (
                        &out[b * nm..(b + 1) * nm],
                        direct::type1(
                            &set,
                            &input[starts[b]..starts[b + 1]],
                            &modes,
                            default_order(),
                            1,
                            &all(nm),
                        ),
                    ),
                    _ => (
                        &out[starts[b]..starts[b + 1]],
                        direct::type2(
                            &set,
                            &input[b * nm..(b + 1) * nm],
                            &modes,
                            default_order(),
                            1,
                            &all(counts[b]),
                        ),
                    ),
                };
                // An empty set's modes are zeros, as its direct sum's.
                let err = match counts[b] {
                    0 => got.iter().map(|v| v.norm()).fold(0.0, f64::max),
                    _ => direct::rel_error(got, &want),
                };
                assert!(err < 1e-7, "{dim}-D {ty:?}, set {b}: {err:e}");
            }
        }
    }
}

/// Interleaved device copy of complex values.
fn up(stream: &Arc<nudt::cuda::CudaStream>, v: &[Complex64]) -> nudt::cuda::CudaSlice<f64> {
    let flat: Vec<f64> = v.iter().flat_map(|z| [z.re, z.im]).collect();
    stream.clone_htod(&flat).unwrap()
}

fn down(stream: &Arc<nudt::cuda::CudaStream>, v: &nudt::cuda::CudaSlice<f64>) -> Vec<Complex64> {
    let back = stream.clone_dtoh(v).unwrap();
    back.chunks(2).map(|z| Complex64::new(z[0], z[1])).collect()
}

fn rel_re(a: &[f64], b: &[f64]) -> f64 {
    let num: f64 = a.iter().zip(b).map(|(x, y)| (x - y).powi(2)).sum();
    (num / b.iter().map(|y| y * y).sum::<f64>()).sqrt()
}

/// Reverse and forward mode on device arrays (`vjp_device`, `jvp_device`: no host copies)
/// for types 1, 2 and 3 in 2-D, f64, two transforms sharing the points, against the
/// derivatives written out as direct sums: `∂/∂x_jd e^{s·i k·x_j} = s·i·k_d e^{s·i k·x_j}`.
#[test]
fn derivatives_on_device_arrays_match_direct_sums() {
    use nudt::gradient::Wanted;
    let Some(_gpu) = gpu("derivatives_on_device_arrays_match_direct_sums") else {
        return;
    };
    let (n, m, k, ntr) = ([16usize, 12], 300, 200, 2);
    let mut rng = Rng::new(77);
    let x = rng.coords(2, m, -3.0, 3.0);
    let dx = rng.coords(2, m, -1.0, 1.0);
    // Type 3's target frequencies and their tangents.
    let s3 = rng.coords(2, k, -8.0, 8.0);
    let ds = rng.coords(2, k, -1.0, 1.0);
    let freqs: Vec<[f64; 2]> = (0..n[0] * n[1])
        .map(|i| [(i / n[1]) as f64 - 8.0, (i % n[1]) as f64 - 6.0])
        .collect();
    let i1 = Complex64::new(0.0, 1.0);
    let e = |f: [f64; 2], j: usize, s: f64| (i1 * s * (f[0] * x[0][j] + f[1] * x[1][j])).exp();
    let o = CudaOptions {
        gradients: true,
        ..opts()
    };
    let tol = 1e-9;
    for ty in [
        TransformType::Type1,
        TransformType::Type2,
        TransformType::Type3,
    ] {
        let s = if ty == TransformType::Type2 {
            -1.0
        } else {
            1.0
        };
        let mut plan = match ty {
            TransformType::Type3 => CudaPlan::<f64>::new_type3(2, 1, ntr, tol, o.clone()),
            _ => CudaPlan::<f64>::new(ty, &n, s as i32, ntr, tol, o.clone()),
        }
        .unwrap();
        let stream = plan.stream().clone();
        let dev = |v: &Vec<f64>| stream.clone_htod(v).unwrap();
        let (dxs, dss) = (
            x.iter().map(dev).collect::<Vec<_>>(),
            s3.iter().map(dev).collect::<Vec<_>>(),
        );
        // The frequencies of the sum: the modes (types 1, 2) or the targets (type 3).
        let fr: Vec<[f64; 2]> = match ty {
            TransformType::Type3 => (0..k).map(|q| [s3[0][q], s3[1][q]]).collect(),
            _ => freqs.clone(),
        };
        match ty {
            TransformType::Type3 => plan
                .set_points_type3_device(&[&dxs[0], &dxs[1]], &[&dss[0], &dss[1]])
                .unwrap(),
            _ => plan
                .set_points_device(&dxs.iter().map(|a| Arc::new(a.clone())).collect::<Vec<_>>())
                .unwrap(),
        }
        let (src, tgt) = ([&dxs[0], &dxs[1]], [&dss[0], &dss[1]]);
        let points = (ty == TransformType::Type3).then_some((&src[..], &tgt[..]));
        // Inputs and outputs per transform: strengths at the points and values at the
        // frequencies (types 1, 3), or modes and values at the points (type 2).
        let (nin, nout) = match ty {
            TransformType::Type2 => (fr.len(), m),
            _ => (m, fr.len()),
        };
        let input = rng.complexes(nin * ntr);
        let g = rng.complexes(nout * ntr);
        let dinput = rng.complexes(nin * ntr);
        // Exact values: (point j, frequency q) terms of transform t.
        let term = |t: usize, j: usize, q: usize| -> (Complex64, usize) {
            match ty {
                TransformType::Type2 => (input[t * nin + q] * e(fr[q], j, s), t * nout + j),
                _ => (input[t * nin + j] * e(fr[q], j, s), t * nout + q),
            }
        };
        let mut d_points = vec![vec![0.0; m]; 2];
        let mut d_freqs = vec![vec![0.0; k]; 2];
        let mut d_in = vec![Complex64::default(); nin * ntr];
        let mut jvp = vec![Complex64::default(); nout * ntr];
        for t in 0..ntr {
            for j in 0..m {
                for q in 0..fr.len() {
                    let (v, out) = term(t, j, q);
                    let phase = e(fr[q], j, s);
                    let gc = g[out].conj();
                    let at_in = if ty == TransformType::Type2 {
                        t * nin + q
                    } else {
                        t * nin + j
                    };
                    d_in[at_in] += g[out] * phase.conj();
                    jvp[out] += dinput[at_in] * phase;
                    for d in 0..2 {
                        let dv = v * i1 * s * fr[q][d];
                        d_points[d][j] += (gc * dv).re;
                        jvp[out] += dv * dx[d][j];
                        if ty == TransformType::Type3 {
                            let dw = v * i1 * s * x[d][j];
                            d_freqs[d][q] += (gc * dw).re;
                            jvp[out] += dw * ds[d][q];
                        }
                    }
                }
            }
        }
        let (din, dg, ddin) = (up(&stream, &input), up(&stream, &g), up(&stream, &dinput));
        let mut got_in = stream.alloc_zeros::<f64>(2 * nin * ntr).unwrap();
        let mut gp: Vec<_> = (0..2)
            .map(|_| stream.alloc_zeros::<f64>(m).unwrap())
            .collect();
        let mut gt: Vec<_> = (0..2)
            .map(|_| stream.alloc_zeros::<f64>(k).unwrap())
            .collect();
        let (p0, p1) = gp.split_at_mut(1);
        let (t0, t1) = gt.split_at_mut(1);
        let mut targets: Vec<&mut _> = match ty {
            TransformType::Type3 => vec![&mut t0[0], &mut t1[0]],
            _ => Vec::new(),
        };
        plan.vjp_device(
            &din,
            &dg,
            points,
            Wanted::ALL,
            Some(&mut got_in),
            &mut [&mut p0[0], &mut p1[0]],
            &mut targets,
        )
        .unwrap();
        let name = format!("{ty:?}");
        assert!(
            rel(&down(&stream, &got_in), &d_in) < 1e-7,
            "{name}: input cotangent"
        );
        for d in 0..2 {
            let got = stream.clone_dtoh(&gp[d]).unwrap();
            assert!(
                rel_re(&got, &d_points[d]) < 1e-6,
                "{name}: points' cotangent {d}"
            );
            if ty == TransformType::Type3 {
                let got = stream.clone_dtoh(&gt[d]).unwrap();
                assert!(
                    rel_re(&got, &d_freqs[d]) < 1e-6,
                    "{name}: targets' cotangent {d}"
                );
            }
        }
        let (tx, ts) = (
            dx.iter().map(dev).collect::<Vec<_>>(),
            ds.iter().map(dev).collect::<Vec<_>>(),
        );
        let mut out = stream.alloc_zeros::<f64>(2 * nout * ntr).unwrap();
        let ts = [&ts[0], &ts[1]];
        let d_targets = (ty == TransformType::Type3).then_some(&ts[..]);
        plan.jvp_device(
            &din,
            Some(&ddin),
            Some(&[&tx[0], &tx[1]]),
            d_targets,
            points,
            &mut out,
        )
        .unwrap();
        assert!(
            rel(&down(&stream, &out), &jvp) < 1e-6,
            "{name}: forward mode"
        );
        // A cotangent of the wrong length is a typed error, before anything runs.
        let short = stream.alloc_zeros::<f64>(4).unwrap();
        let e = plan.vjp_device(
            &din,
            &short,
            points,
            Wanted::ALL,
            Some(&mut got_in),
            &mut [],
            &mut [],
        );
        assert!(
            matches!(e, Err(CudaError::Nudt(NudtError::Length { .. }))),
            "{name}: {e:?}"
        );
    }
}

/// Host arrays longer than the plan's pinned staging buffers (32 MiB each, two of them used
/// in turn) go through them in pieces: a 1-D f32 plan of 9·10⁶ points takes its coordinates
/// in two pieces and its strengths and values in three each way. The host interface must
/// give what the device interface gives (its arrays copied by cudarc, not by the staging),
/// and the direct sum at sampled outputs.
#[test]
fn host_transfers_cross_the_staging_pieces() {
    let Some(_gpu) = gpu("host_transfers_cross_the_staging_pieces") else {
        return;
    };
    let (m, modes, tol) = (9_000_001, [64], 1e-5);
    let unit = |j: u64, salt: u64| {
        let z = (j ^ salt).wrapping_mul(0x9e3779b97f4a7c15).rotate_left(29);
        (z >> 11) as f64 / (1u64 << 53) as f64
    };
    let x: Vec<f32> = (0..m as u64)
        .map(|j| ((unit(j, 1) - 0.5) * 6.0) as f32)
        .collect();
    let x64: Vec<f64> = x.iter().map(|&v| v as f64).collect();
    let c: Vec<Complex<f32>> = (0..m as u64)
        .map(|j| Complex::new(unit(j, 2) as f32 - 0.5, unit(j, 3) as f32 - 0.5))
        .collect();
    let f: Vec<Complex<f32>> = (0..64u64)
        .map(|k| Complex::new(unit(k, 4) as f32, unit(k, 5) as f32))
        .collect();
    let widen = |v: &[Complex<f32>]| -> Vec<Complex64> {
        v.iter()
            .map(|z| Complex64::new(z.re as f64, z.im as f64))
            .collect()
    };
    for ty in [TransformType::Type1, TransformType::Type2] {
        let mut plan = CudaPlan::<f32>::new(ty, &modes, -1, 1, tol, opts()).unwrap();
        plan.set_points(&[&x]).unwrap();
        let (input, n) = match ty {
            TransformType::Type1 => (&c, 64),
            _ => (&f, m),
        };
        let mut host = vec![Complex::default(); n];
        plan.execute(input, &mut host).unwrap();
        let device = execute_on_device(&mut plan, input, n, false);
        let apart = direct::rel_error(&widen(&host), &widen(&device));
        assert!(
            apart < 1e-6,
            "{ty:?}: host and device interfaces {apart:e} apart"
        );
        // Outputs in every piece of the values (type 2), or every mode (type 1).
        let which: Vec<usize> = match ty {
            TransformType::Type1 => all(64),
            _ => (0..40).map(|i| i * (m / 40) + i).collect(),
        };
        let exact = match ty {
            TransformType::Type1 => {
                direct::type1(&[&x64], &widen(&c), &modes, ModeOrder::Cmcl, -1, &which)
            }
            _ => direct::type2(&[&x64], &widen(&f), &modes, ModeOrder::Cmcl, -1, &which),
        };
        let got: Vec<Complex<f32>> = which.iter().map(|&i| host[i]).collect();
        let err = direct::rel_error(&widen(&got), &exact);
        assert!(err < 1e-3, "{ty:?}: error {err:e} against the direct sum");
    }
}
