//! Every CUDA module the runtime can request compiles to PTX with NVRTC — on a machine
//! without a GPU. NVRTC is loaded at run time (cudarc's dynamic loading); where it is absent
//! the test prints that it SKIPPED, unless `NUDT_REQUIRE_NVRTC=1` (set by `.ci/run`, which
//! installs the pip wheel `nvidia-cuda-nvrtc==13.0.*`) makes its absence a failure.
//!
//! Run locally:
//! ```sh
//! python3 -m pip install --target .nvrtc 'nvidia-cuda-nvrtc==13.0.*'
//! LD_LIBRARY_PATH=$PWD/.nvrtc/nvidia/cu13/lib cargo test --release -p nudt-gen --test cuda_nvrtc
//! ```

use cudarc::nvrtc::{compile_ptx_with_opts, CompileOptions};
use nudt_gen::cuda::{
    common_module, gaussian_wide_module, spread_module, CudaSource, CudaSpreadSpec, GpuArch,
};
use nudt_gen::{KernelKind, KernelSpec, Precision, Upsampling};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;

fn nvrtc_present() -> bool {
    // SAFETY: only tries to dlopen the candidate library names.
    let present = unsafe { cudarc::nvrtc::sys::is_culib_present() };
    if !present {
        let msg = "SKIPPED: NVRTC (libnvrtc.so.13) not found; install it with \
                   `python3 -m pip install --target .nvrtc 'nvidia-cuda-nvrtc==13.0.*'` and set \
                   LD_LIBRARY_PATH=$PWD/.nvrtc/nvidia/cu13/lib";
        if std::env::var("NUDT_REQUIRE_NVRTC").is_ok_and(|v| v == "1") {
            panic!("NUDT_REQUIRE_NVRTC=1 but {msg}");
        }
        eprintln!("{msg}");
    }
    present
}

/// The options the runtime compiles with (see nudt_runtime::cuda).
fn options(arch: &GpuArch) -> CompileOptions {
    CompileOptions {
        options: vec![
            format!("--gpu-architecture={}", arch.sm()),
            "--std=c++17".into(),
        ],
        ..Default::default()
    }
}

fn compile(src: &CudaSource, arch: &GpuArch) -> Result<usize, String> {
    let ptx = compile_ptx_with_opts(&src.source, options(arch)).map_err(|e| match e {
        cudarc::nvrtc::CompileError::CompileError { log, .. } => {
            format!("{} for {}:\n{}", src.name, arch.sm(), log.to_string_lossy())
        }
        other => format!("{} for {}: {other:?}", src.name, arch.sm()),
    })?;
    let text = ptx.to_src();
    for k in &src.kernels {
        if !text.contains(&format!(".entry {}(", k.name)) {
            return Err(format!(
                "{}: entry point {} missing from PTX",
                src.name, k.name
            ));
        }
    }
    Ok(text.len())
}

/// Every kernel family and upsampling the runtime plans with, at every width.
fn kernels() -> Vec<KernelSpec> {
    let mut v = Vec::new();
    for kind in [KernelKind::Es, KernelKind::Gaussian] {
        for sigma in [Upsampling::TWO, Upsampling::FIVE_FOURTHS] {
            for w in 2..=16 {
                v.push(KernelSpec::for_width(kind, w, sigma).unwrap());
            }
        }
    }
    v
}

/// Compiles `jobs` on all cores; returns the failures.
fn compile_all(jobs: Vec<(CudaSource, GpuArch)>) -> Vec<String> {
    let next = AtomicUsize::new(0);
    let failures = Mutex::new(Vec::new());
    let threads = std::thread::available_parallelism().map_or(2, |n| n.get());
    std::thread::scope(|s| {
        for _ in 0..threads {
            s.spawn(|| loop {
                let i = next.fetch_add(1, Ordering::Relaxed);
                let Some((src, arch)) = jobs.get(i) else {
                    break;
                };
                if let Err(e) = compile(src, arch) {
                    failures.lock().unwrap().push(e);
                }
            });
        }
    });
    failures.into_inner().unwrap()
}

#[test]
fn every_requestable_module_compiles_to_ptx() {
    if !nvrtc_present() {
        return;
    }
    let start = std::time::Instant::now();
    let mut jobs = Vec::new();
    let full = std::env::var("NUDT_NVRTC_FULL").is_ok_and(|v| v == "1");
    let es2 = |w| KernelSpec::for_width(KernelKind::Es, w, Upsampling::TWO).unwrap();
    // The H100 (the GPU the benchmarks run on): every dimension, width and precision with the
    // bins the planner picks for it. The bins, and so the code's structure, depend on
    // (dimension, width, precision, GPU) only; the kernel family and upsampling change the
    // baked Horner literals alone, which every dimension shares, so the other families are
    // compiled in 1D (all of them with NUDT_NVRTC_FULL=1).
    let h100 = GpuArch::h100();
    for p in [Precision::F32, Precision::F64] {
        jobs.push((common_module(p).unwrap(), h100.clone()));
        for dim in 1..=3 {
            for k in kernels() {
                let default = k.kind == KernelKind::Es && k.upsampling == Upsampling::TWO;
                if default || dim == 1 || full {
                    let spec = CudaSpreadSpec::new(dim, k, p, &h100).unwrap();
                    jobs.push((spread_module(&spec).unwrap(), h100.clone()));
                }
            }
        }
    }
    // Older and smaller GPUs (other bins, no float2 atomics): every dimension and precision
    // of the default kernel at a few widths (every width with NUDT_NVRTC_FULL=1).
    for arch in [GpuArch::turing(), GpuArch::a100()] {
        for p in [Precision::F32, Precision::F64] {
            jobs.push((common_module(p).unwrap(), arch.clone()));
            for dim in 1..=3 {
                for w in 2..=16 {
                    if full || [2, 7, 16].contains(&w) {
                        let spec = CudaSpreadSpec::new(dim, es2(w), p, &arch).unwrap();
                        jobs.push((spread_module(&spec).unwrap(), arch.clone()));
                    }
                }
            }
        }
    }
    // The wide-Gaussian modules of the Gaussian-gridding type 3: the width only sets the loop
    // bounds, so a few widths (the seed's 45 at 1e-10 among them) cover the code; the older
    // GPUs take the path without float2 atomics.
    for p in [Precision::F32, Precision::F64] {
        for dim in 1..=3 {
            for w in [3, 19, 29, 45, 63] {
                jobs.push((gaussian_wide_module(dim, w, p).unwrap(), h100.clone()));
            }
            for arch in [GpuArch::turing(), GpuArch::a100()] {
                jobs.push((gaussian_wide_module(dim, 45, p).unwrap(), arch));
            }
        }
    }
    let n = jobs.len();
    let failures = compile_all(jobs);
    eprintln!(
        "compiled {n} CUDA modules to PTX with NVRTC in {:.1} s",
        start.elapsed().as_secs_f64()
    );
    assert!(
        failures.is_empty(),
        "{} of {n} modules failed:\n{}",
        failures.len(),
        failures.join("\n\n")
    );
}

#[test]
fn compile_errors_are_reported_not_panicked() {
    if !nvrtc_present() {
        return;
    }
    let bad = CudaSource {
        name: "broken".into(),
        source: "extern \"C\" __global__ void k() { undefined_thing(); }".into(),
        hash: 0,
        kernels: Vec::new(),
        spec: None,
    };
    let e = compile(&bad, &GpuArch::h100()).unwrap_err();
    assert!(e.contains("undefined_thing"), "{e}");
}
