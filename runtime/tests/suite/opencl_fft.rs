//! The generated FFT in its OpenCL C dialect, executed on an OpenCL device (PoCL on a CPU in CI)
//! and checked against rustfft: 1D lengths 2..=4096 in f32 and f64 (all of them with
//! `NUDT_FFT_LENGTHS=all`, a covering sample by default, see [`lengths`]), multi-dimensional
//! shapes up to the NUFFT fine grids (2000², 200³), batches, in-place and out-of-place, the
//! global-memory pass path, and the round trip forward → inverse = N · input.
//!
//! Without an OpenCL platform the tests say SKIPPED, unless `NUDT_REQUIRE_OPENCL=1` (set by
//! `.ci/run`, which installs PoCL) makes that a failure. Run locally:
//! ```sh
//! apt-get install -y pocl-opencl-icd ocl-icd-libopencl1
//! cargo test --release -p nudt-runtime --features opencl --test suite opencl_fft::
//! ```

use crate::fft_reference::{reference, tol, Sweep};
use nudt_gen::fft::{fft_bundle, fft_module, FftDevice, FftDirection, FftSpec};
use nudt_gen::GenError;
use nudt_runtime::opencl::{ClDevice, ClFft, ClFloat, OpenClError};
use num_complex::Complex;
use std::sync::Arc;

fn device() -> Option<Arc<ClDevice>> {
    match ClDevice::first() {
        Ok(d) => Some(d),
        Err(e) => {
            let msg = format!("SKIPPED: no OpenCL device ({e})");
            if std::env::var("NUDT_REQUIRE_OPENCL").is_ok_and(|v| v == "1") {
                panic!("NUDT_REQUIRE_OPENCL=1 but {msg}");
            }
            eprintln!("{msg}");
            None
        }
    }
}

/// Deterministic input in [-1, 1]² (a 64-bit LCG).
fn input<T: ClFloat>(n: usize, seed: u64) -> Vec<Complex<T>> {
    let mut s = seed
        .wrapping_mul(6364136223846793005)
        .wrapping_add(1442695040888963407);
    let mut next = || {
        s = s
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        T::from((s >> 11) as f64 / (1u64 << 53) as f64 * 2.0 - 1.0).unwrap()
    };
    (0..n).map(|_| Complex::new(next(), next())).collect()
}

/// `c` in f64.
fn widen<T: ClFloat>(c: &Complex<T>) -> Complex<f64> {
    Complex::new(c.re.to_f64().unwrap(), c.im.to_f64().unwrap())
}

fn rel_l2<T: ClFloat>(got: &[Complex<T>], want: &[Complex<f64>]) -> f64 {
    let (mut num, mut den) = (0.0, 0.0);
    for (g, w) in got.iter().zip(want) {
        let g = widen(g);
        num += (g - w).norm_sqr();
        den += w.norm_sqr();
    }
    (num / den).sqrt()
}

/// Forward out of place (input left unchanged) against rustfft, then inverse in place
/// against N · input. Returns the two relative l2 errors.
fn check<T: ClFloat>(fft: &mut ClFft<T>, shape: &[usize], seed: u64) -> (f64, f64) {
    let x = input::<T>(fft.module().len(), seed);
    let want = reference(shape, x.iter().map(widen).collect());
    let inp = fft.upload(&x).unwrap();
    let out = fft.upload(&vec![Complex::default(); x.len()]).unwrap();
    fft.execute(&inp, &out, FftDirection::Forward).unwrap();
    let mut y = vec![Complex::default(); x.len()];
    fft.download(&out, &mut y).unwrap();
    let fwd = rel_l2(&y, &want);
    let mut back = vec![Complex::default(); x.len()];
    fft.download(&inp, &mut back).unwrap();
    assert!(
        back == x,
        "{shape:?}: an out-of-place transform changed its input"
    );
    fft.execute(&out, &out, FftDirection::Inverse).unwrap();
    fft.download(&out, &mut y).unwrap();
    let n = T::from(shape.iter().product::<usize>() as f64).unwrap();
    let scaled: Vec<Complex<f64>> = x.iter().map(|c| widen(&(c * n))).collect();
    (fwd, rel_l2(&y, &scaled))
}

/// The 1D lengths checked: with `NUDT_FFT_LENGTHS=all`, every length 2..=4096; otherwise
/// (CI, where PoCL spends a large part of a second compiling each kernel) 2..=32, every
/// fourth 7-smooth length up to 4096 (the fine grids' kind), a spread of primes up to 4093 and
/// the fine-grid and end-of-range lengths, which between them reach every radix, every pass
/// kind and both ends of the range. The H100 run checks every length in the CUDA dialect
/// (tests/suite/cuda_fft.rs).
fn lengths() -> Vec<usize> {
    if std::env::var("NUDT_FFT_LENGTHS").is_ok_and(|v| v == "all") {
        return (2..=4096).collect();
    }
    let smooth = |mut n: usize| {
        for p in [2, 3, 5, 7] {
            while n.is_multiple_of(p) {
                n /= p;
            }
        }
        n == 1
    };
    let prime = |n: usize| {
        (2..n)
            .take_while(|d| d * d <= n)
            .all(|d| !n.is_multiple_of(d))
    };
    let mut v: Vec<usize> = (2..=32)
        .chain((33..=4096).filter(|&n| smooth(n)).step_by(4))
        .chain((37..=4096).filter(|&n| prime(n)).step_by(50))
        .chain([200, 512, 1000, 2000, 4000, 4093, 4095, 4096])
        .collect();
    v.sort_unstable();
    v.dedup();
    v
}

fn all_lengths<T: ClFloat>(dev: &Arc<ClDevice>) {
    let t0 = std::time::Instant::now();
    let sizes = lengths();
    let mut sweep = Sweep::<T>::new();
    // One program per 48 lengths: PoCL's per-build cost is paid once for them.
    for group in sizes.chunks(48) {
        let specs: Vec<FftSpec> = group
            .iter()
            .map(|&n| {
                FftSpec::new(
                    &[n],
                    2,
                    if std::mem::size_of::<T>() == 4 {
                        nudt_gen::Precision::F32
                    } else {
                        nudt_gen::Precision::F64
                    },
                )
            })
            .collect();
        let modules = fft_bundle(&specs, &dev.info.fft_device()).unwrap();
        let ffts = ClFft::<T>::bundle(dev, modules).unwrap();
        for (mut fft, &n) in ffts.into_iter().zip(group) {
            sweep.record(n, check(&mut fft, &[n], n as u64));
        }
    }
    eprintln!(
        "{}: {} lengths from 2 to 4096 (batch 2) in {:.1} s, worst relative l2 {:.2e} at N = {}",
        std::any::type_name::<T>(),
        sizes.len(),
        t0.elapsed().as_secs_f64(),
        sweep.worst.0,
        sweep.worst.1
    );
    sweep.assert_passed();
}

#[test]
fn lengths_2_to_4096_f32() {
    if let Some(dev) = device() {
        all_lengths::<f32>(&dev);
    }
}

#[test]
fn lengths_2_to_4096_f64() {
    if let Some(dev) = device() {
        if dev.info.fp64 {
            all_lengths::<f64>(&dev);
        } else {
            // The typed refusal is the behaviour to check on such a device.
            let e = ClFft::<f64>::new(&dev, &[8], 1).unwrap_err();
            assert!(matches!(e, OpenClError::Unsupported { .. }), "{e}");
        }
    }
}

fn shapes<T: ClFloat>(dev: &Arc<ClDevice>, cases: &[(&[usize], usize)]) {
    for &(shape, batch) in cases {
        let t0 = std::time::Instant::now();
        let mut fft = ClFft::<T>::new(dev, shape, batch).unwrap();
        let (f, r) = check(&mut fft, shape, 7);
        eprintln!(
            "{} {shape:?} x {batch}: forward {f:.2e}, round trip {r:.2e} ({:.1} s, {} launches)",
            std::any::type_name::<T>(),
            t0.elapsed().as_secs_f64(),
            fft.module().plan.launches.len()
        );
        assert!(f <= tol::<T>() && r <= tol::<T>(), "{shape:?} x {batch}");
    }
}

const MULTI: &[(&[usize], usize)] = &[
    (&[7, 12], 3),
    (&[64, 64], 2),
    (&[16, 16, 16], 3),
    (&[32, 32, 32], 1),
    (&[5, 9, 11], 2),
    (&[1, 8], 2),
    (&[3, 1, 5], 1),
    (&[1], 3),
    (&[12, 4093], 1),
    (&[200, 200, 200], 1),
    (&[2000, 2000], 1),
];

#[test]
fn multi_dimensional_f32() {
    if let Some(dev) = device() {
        shapes::<f32>(&dev, MULTI);
    }
}

#[test]
fn multi_dimensional_f64() {
    if let Some(dev) = device().filter(|d| d.info.fp64) {
        shapes::<f64>(&dev, MULTI);
    }
}

/// Axes too long for local memory run as global radix passes: forced here with a device
/// description of 2 KiB of local memory, so the pass kernels, the directly summed prime in
/// global memory, scratch ping-pong and the in-place copy are all exercised.
#[test]
fn global_memory_passes() {
    let Some(dev) = device().filter(|d| d.info.fp64) else {
        return;
    };
    let small = FftDevice {
        local_bytes: 2 << 10,
        ..dev.info.fft_device()
    };
    for (shape, batch) in [
        (&[1000][..], 3),
        (&[4096][..], 1),
        (&[2 * 1021][..], 1),
        (&[3 * 5 * 7 * 8][..], 2),
        (&[50, 300][..], 2),
        (&[9, 128, 130][..], 1),
    ] {
        let module = fft_module(
            &FftSpec::new(shape, batch, nudt_gen::Precision::F64),
            &small,
        )
        .unwrap();
        assert!(
            module.plan.kernels.iter().any(|k| k.kind == "pass"),
            "{shape:?} planned without global passes"
        );
        let mut fft = ClFft::<f64>::from_module(&dev, module).unwrap();
        let (f, r) = check(&mut fft, shape, 3);
        eprintln!("global passes {shape:?} x {batch}: forward {f:.2e}, round trip {r:.2e}");
        assert!(f <= 1e-14 && r <= 1e-14, "{shape:?}");
    }
}

#[test]
fn bad_requests_are_typed_errors() {
    let Some(dev) = device() else {
        return;
    };
    let e = ClFft::<f32>::new(&dev, &[0], 1).unwrap_err();
    assert!(
        matches!(e, OpenClError::Gen(GenError::FftSize { axis: 0, size: 0 })),
        "{e}"
    );
    let e = ClFft::<f32>::new(&dev, &[8], 0).unwrap_err();
    assert!(matches!(e, OpenClError::Gen(GenError::FftBatchZero)), "{e}");
    let e = ClFft::<f32>::new(&dev, &[1 << 20, 1 << 20], usize::MAX / 2).unwrap_err();
    assert!(
        matches!(e, OpenClError::Gen(GenError::FftOverflow { .. })),
        "{e}"
    );
    let e = ClFft::<f32>::new(&dev, &[2, 2, 2, 2], 1).unwrap_err();
    assert!(matches!(e, OpenClError::Gen(GenError::FftRank(4))), "{e}");
    // A host slice of the wrong length.
    let mut fft = ClFft::<f32>::new(&dev, &[8], 2).unwrap();
    let mut short = vec![Complex::default(); 15];
    let e = fft
        .transform(&mut short, FftDirection::Forward)
        .unwrap_err();
    assert!(
        matches!(
            e,
            OpenClError::Length {
                got: 15,
                need: 16,
                ..
            }
        ),
        "{e}"
    );
}
