//! What the NVRTC tests (cuda_nvrtc.rs, fft_nvrtc.rs) share: whether NVRTC loads, and a
//! module compiled as the runtime compiles it.

use cudarc::nvrtc::{compile_ptx_with_opts, CompileOptions};
use nudt_gen::gpu::GpuArch;

/// Whether NVRTC can be loaded; where it cannot, says the test skipped, unless
/// `NUDT_REQUIRE_NVRTC=1` makes that a failure.
pub fn nvrtc_present() -> bool {
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

/// The PTX of the module `name` (its CUDA `source`) for `arch`, or NVRTC's log. It compiles
/// with the options the runtime uses (see nudt_runtime::cuda): a real architecture, so that
/// ptxas runs too, as it does for the runtime's CUBIN.
pub fn compile_ptx(name: &str, source: &str, arch: &GpuArch) -> Result<String, String> {
    nvrtc(name, source, arch, &[])
}

/// NVRTC's front end only (`-fdevice-syntax-only`: parsing, types, overloads, templates and
/// the architecture's intrinsics), without the optimiser and code generation that take all
/// but a hundredth of a large module's time: Ok, or NVRTC's log.
pub fn check_syntax(name: &str, source: &str, arch: &GpuArch) -> Result<(), String> {
    nvrtc(name, source, arch, &["-fdevice-syntax-only"]).map(drop)
}

fn nvrtc(name: &str, source: &str, arch: &GpuArch, extra: &[&str]) -> Result<String, String> {
    let mut options = vec![
        format!("--gpu-architecture={}", arch.sm()),
        "--std=c++17".into(),
    ];
    options.extend(extra.iter().map(|o| o.to_string()));
    let options = CompileOptions {
        options,
        ..Default::default()
    };
    let ptx = compile_ptx_with_opts(source, options).map_err(|e| match e {
        cudarc::nvrtc::CompileError::CompileError { log, .. } => {
            format!("{name} for {}:\n{}", arch.sm(), log.to_string_lossy())
        }
        other => format!("{name} for {}: {other:?}", arch.sm()),
    })?;
    Ok(ptx.to_src())
}
