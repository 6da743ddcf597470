//! The generated FFT's CUDA dialect compiles with NVRTC (to PTX for the H100's sm_90; through
//! the front end for an older sm_75) on a machine without a GPU, for shapes that between them
//! use every kernel kind and radix: power-of-two, mixed and prime lengths, fused 3D volumes,
//! strided tiles, global passes, directly summed primes in shared and global memory, 64-bit
//! indices. Execution is checked in the OpenCL dialect on PoCL (runtime/tests/suite/opencl_fft.rs) and
//! on the H100 by the GPU suite; this test makes sure the CUDA spelling of the same body builds.
//!
//! Where libnvrtc is absent the test says SKIPPED, unless `NUDT_REQUIRE_NVRTC=1` (as in
//! `.ci/run`) makes that a failure. Run locally:
//! ```sh
//! python3 -m pip install --target .nvrtc 'nvidia-cuda-nvrtc==13.0.*'
//! LD_LIBRARY_PATH=$PWD/.nvrtc/nvidia/cu13/lib cargo test --release -p nudt-gen --test fft_nvrtc
//! ```

mod nvrtc;
use nudt_gen::fft::{fft_module, FftDevice, FftDirection, FftModule, FftSpec};
use nudt_gen::gpu::GpuArch;
use nudt_gen::Precision;
use nvrtc::{check_syntax, compile_ptx, nvrtc_present};

fn compile(m: &FftModule, arch: &GpuArch) -> Result<(), String> {
    let text = compile_ptx(&m.name, &m.source, arch)?;
    for l in &m.plan.launches {
        for dir in [FftDirection::Forward, FftDirection::Inverse] {
            let name = m.entry(l, dir);
            if !text.contains(&format!(".entry {name}(")) {
                return Err(format!("{}: entry point {name} missing from PTX", m.name));
            }
        }
    }
    Ok(())
}

#[test]
fn cuda_dialect_compiles() {
    if !nvrtc_present() {
        return;
    }
    let cases: &[(&[usize], usize)] = &[
        (&[2], 1),
        (&[4096], 8),
        (&[2048], 3),
        (&[1000], 2),
        (&[3 * 5 * 7 * 11 * 13], 1),
        (&[4093], 1),
        (&[37 * 41], 1),
        (&[16, 16, 16], 512),
        (&[64, 64, 64], 16),
        (&[200, 200, 200], 1),
        (&[2000, 2000], 1),
        (&[4096, 4096], 1),
        (&[1 << 16], 4),
        (&[3, 100003], 1),
        (&[4096, 4096], 160),
    ];
    let mut failures = Vec::new();
    let mut built = 0;
    for arch in [GpuArch::h100(), GpuArch::turing()] {
        for &(shape, batch) in cases {
            for p in [Precision::F32, Precision::F64] {
                let m =
                    fft_module(&FftSpec::new(shape, batch, p), &FftDevice::cuda(&arch)).unwrap();
                // The H100 to PTX; the older GPU's spelling (no float2 atomics, other
                // shared memory) through NVRTC's front end, a fraction of the time.
                let r = if arch.sm() == "sm_90" {
                    compile(&m, &arch)
                } else {
                    check_syntax(&m.name, &m.source, &arch)
                };
                match r {
                    Ok(()) => built += 1,
                    Err(e) => failures.push(e),
                }
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
    eprintln!("{built} FFT modules compiled");
}
