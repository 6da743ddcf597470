//! `nudt tune --backend cuda|opencl`, on each GPU backend of this build: without a device, a
//! typed error (exit 2) that says so; with one, a quick 1-D tune saves a profile of the four
//! kinds of 1-D plan (types 1 and 2, f32 and f64), each choice at most the planner's own
//! time, and a plan made in a process that sees the profile (a child run of this test, given
//! the profile's cache directory) takes its bins and method for points as dense as the tuned
//! problem's, and the planner's own for far sparser ones, unless its options name a method.
//! Both backends share the profile format and the rule that applies it
//! (`nudt::planner::gpu_profile`).
//!
//! ```sh
//! cargo test --release --features cuda,opencl --test tune_gpu
//! ```
#![cfg(feature = "cli")]

use nudt::backend::{Backend, BackendOptions};
use nudt::gen::gpu::GpuMethod;
use nudt::gen::Precision;
use nudt::planner::gpu_profile::{self, GpuProfile};
use nudt::TransformType;
use std::path::{Path, PathBuf};
use std::process::Command;

const TEST: &str = "tune_saves_a_profile_that_plans_take";
/// Set in the child run: the backend and the saved profile's path.
const CHILD_BACKEND: &str = "NUDT_TEST_TUNED_BACKEND";
const CHILD_PROFILE: &str = "NUDT_TEST_TUNED_PROFILE";

/// In the child: plans of every 1-D kind on `backend` take the profile at `path`.
fn plans_take(backend: Backend, path: &Path) {
    let p = GpuProfile::parse(&std::fs::read_to_string(path).unwrap(), backend.name()).unwrap();
    let shown = Some(path.display().to_string());
    let none = BackendOptions::default();
    let unprofiled = BackendOptions::default().with_gpu_profiles(false);
    for ty in [TransformType::Type1, TransformType::Type2] {
        let c = p.choice(1, ty, Precision::F64).expect("a 1D f64 choice");
        let mut plan = backend.plan::<f64>(ty, &[1000], 1, 1, 1e-6, &none).unwrap();
        let r = plan.report();
        let why = || {
            let key = device_key(backend);
            let read = gpu_profile::for_device(backend.name(), &key).map(|(p, _)| p);
            let cache = std::env::var("XDG_CACHE_HOME");
            format!("device key {key}, profile read: {read:?}, cache {cache:?}, {r:?}")
        };
        assert_eq!(r.profile, shown, "{}", why());
        assert_eq!(r.bins.as_ref(), Some(&c.config.bins), "{}", why());
        // As many points per mode as the tune's problem had: the choice stands.
        let density = c
            .config
            .points_per_mode
            .expect("the tuned density recorded");
        let x: Vec<f64> = (0..(density * 1000.0).round() as usize)
            .map(|j| (j as f64 * 0.618).sin() * 3.0)
            .collect();
        plan.set_points(&[&x[..]]).unwrap();
        let r = plan.report();
        assert_eq!(r.method.as_deref(), Some(c.config.method.as_str()));
        assert_eq!(
            (r.profile, r.bins.as_ref()),
            (shown.clone(), Some(&c.config.bins))
        );
        // A thousandth of that: the planner's own rules, as without a profile.
        plan.set_points(&[&x[..x.len() / 1000 + 1]]).unwrap();
        let mut plain = backend
            .plan::<f64>(ty, &[1000], 1, 1, 1e-6, &unprofiled)
            .unwrap();
        plain.set_points(&[&x[..x.len() / 1000 + 1]]).unwrap();
        let (r, want) = (plan.report(), plain.report());
        assert_eq!(r.profile, None, "{r:?}");
        assert_eq!((r.bins, r.method), (want.bins, want.method));
    }
    let forced = none.with_gpu_methods(Some(GpuMethod::GmSort), None);
    let plan = backend
        .plan::<f64>(TransformType::Type1, &[1000], 1, 1, 1e-6, &forced)
        .unwrap();
    assert_eq!(plan.report().profile, None);
    println!("{backend} plans took {}", path.display());
}

/// The key `backend` files its device's profile under.
fn device_key(backend: Backend) -> String {
    match backend {
        #[cfg(feature = "cuda")]
        Backend::Cuda => {
            let ctx = nudt::cuda::open(0).unwrap();
            nudt::cuda::profile_key(&nudt::cuda::detect_arch(&ctx).unwrap())
        }
        #[cfg(feature = "opencl")]
        Backend::OpenCl => nudt::opencl::ClDevice::first().unwrap().info.profile_key(),
        b => panic!("{b} has no device key in this build"),
    }
}

/// Runs the quick tune of `backend` with its cache under `dir`: the exit status and output.
fn tune(backend: Backend, dir: &Path) -> (Option<i32>, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_nudt"))
        .args([
            "tune",
            "--backend",
            backend.name(),
            "--quick",
            "--dims",
            "1",
        ])
        // A small problem: the test checks what is saved and taken, not the timings.
        .args(["--points", "20000", "--modes", "4096"])
        .env("XDG_CACHE_HOME", dir)
        .output()
        .unwrap();
    let text =
        String::from_utf8_lossy(&out.stdout).into_owned() + &String::from_utf8_lossy(&out.stderr);
    (out.status.code(), text)
}

#[test]
fn tune_saves_a_profile_that_plans_take() {
    if let (Ok(b), Some(path)) = (
        std::env::var(CHILD_BACKEND),
        std::env::var_os(CHILD_PROFILE),
    ) {
        return plans_take(b.parse().unwrap(), &PathBuf::from(path));
    }
    for backend in [Backend::Cuda, Backend::OpenCl] {
        if !backend.is_built() {
            eprintln!("{backend}: not in this build (feature `{backend}`)");
            continue;
        }
        let dir = std::env::temp_dir().join(format!("nudt-tune-{backend}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        let (code, text) = tune(backend, &dir);
        // The backend is not opened in this process until its child has run: on the GPU
        // machine a child started after this process had opened NVIDIA's OpenCL found only
        // the PoCL platform.
        if code == Some(2) && text.contains("to tune") {
            let _ = std::fs::remove_dir_all(&dir);
            let why = backend.available().expect_err(&text);
            eprintln!("{backend}: no device ({why}); the tune said so");
            continue;
        }
        assert_eq!(code, Some(0), "{text}");
        println!("{text}");
        let saved: Vec<PathBuf> = std::fs::read_dir(dir.join("nudt"))
            .unwrap()
            .map(|e| e.unwrap().path())
            .filter(|p| p.extension().is_some_and(|e| e == "toml"))
            .collect();
        assert_eq!(saved.len(), 1, "{saved:?}");
        let name = saved[0].file_name().unwrap().to_string_lossy().into_owned();
        assert!(name.starts_with(&format!("{backend}-")), "{name}");
        let text = std::fs::read_to_string(&saved[0]).unwrap();
        let p = GpuProfile::parse(&text, backend.name()).unwrap();
        assert_eq!(p.choice.len(), 4, "{p:?}");
        for c in &p.choice {
            assert!(c.config.dim == 1 && c.ms <= c.default_ms, "{c:?}");
        }
        let child = Command::new(std::env::current_exe().unwrap())
            .args([TEST, "--exact", "--nocapture", "--test-threads=1"])
            .env(CHILD_BACKEND, backend.name())
            .env(CHILD_PROFILE, &saved[0])
            .env("XDG_CACHE_HOME", &dir)
            .output()
            .unwrap();
        let _ = std::fs::remove_dir_all(&dir);
        let text = String::from_utf8_lossy(&child.stdout).into_owned()
            + &String::from_utf8_lossy(&child.stderr);
        assert!(
            child.status.success() && text.contains("1 passed"),
            "{text}"
        );
    }
}
