//! The generated FFT in its CUDA dialect on a GPU, against rustfft on the host: every 1D length
//! 2..=4096 in f32 and f64 (batch 2; compiled as NVRTC bundles of 64 lengths, in parallel),
//! and 2D/3D shapes up to the NUFFT fine grids; forward against rustfft and the round trip
//! forward → inverse against N · input, relative l2 ≤ 2e-6 (f32) and 1e-14 (f64).
//!
//! Without a GPU it says SKIPPED, unless `NUDT_REQUIRE_GPU=1` (the device run) makes that a
//! failure.
#![cfg(feature = "cuda")]

use crate::fft_reference::{reference, tol, Sweep};
use nudt::cuda::{detect_arch, open, CudaFloat, GenFft};
use nudt::gen::fft::{fft_bundle, FftDevice, FftDirection, FftSpec};
use nudt::num_complex::Complex;
use rayon::prelude::*;

fn device() -> Option<(
    std::sync::Arc<nudt::cuda::CudaStream>,
    nudt::gen::gpu::GpuArch,
)> {
    match open(0).and_then(|c| Ok((c.default_stream(), detect_arch(&c)?))) {
        Ok(d) => Some(d),
        Err(e) => {
            let msg = format!("SKIPPED: no CUDA device ({e})");
            if std::env::var("NUDT_REQUIRE_GPU").is_ok_and(|v| v == "1") {
                panic!("NUDT_REQUIRE_GPU=1 but {msg}");
            }
            eprintln!("{msg}");
            None
        }
    }
}

fn input(n: usize, seed: u64) -> Vec<f64> {
    let mut s = seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
    (0..2 * n)
        .map(|_| {
            s = s
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            (s >> 11) as f64 / (1u64 << 53) as f64 * 2.0 - 1.0
        })
        .collect()
}

fn rel_l2(got: &[f64], want: &[f64]) -> f64 {
    let num: f64 = got.iter().zip(want).map(|(a, b)| (a - b) * (a - b)).sum();
    let den: f64 = want.iter().map(|b| b * b).sum();
    (num / den).sqrt()
}

/// (forward error, round-trip error) of one planned FFT.
fn check<T: CudaFloat>(
    stream: &std::sync::Arc<nudt::cuda::CudaStream>,
    fft: &mut GenFft<T>,
    shape: &[usize],
    seed: u64,
) -> (f64, f64) {
    let x64 = input(fft.module().len(), seed);
    let x: Vec<T> = x64.iter().map(|&v| T::of(v)).collect();
    let xr: Vec<f64> = x.iter().map(|v| v.wide()).collect();
    let complexes = xr.chunks(2).map(|c| Complex::new(c[0], c[1])).collect();
    let want: Vec<f64> = reference(shape, complexes)
        .iter()
        .flat_map(|c| [c.re, c.im])
        .collect();
    let dx = stream.clone_htod(&x).unwrap();
    let mut y = stream.clone_htod(&x).unwrap();
    let read = |y: &nudt::cuda::CudaSlice<T>| -> Vec<f64> {
        let host = stream.clone_dtoh(y).unwrap();
        host.iter().map(|v| v.wide()).collect()
    };
    fft.execute(&dx, &mut y, FftDirection::Forward).unwrap();
    let got = read(&y);
    fft.execute_in_place(&mut y, FftDirection::Inverse).unwrap();
    let n: usize = shape.iter().product();
    let back = read(&y);
    let scaled: Vec<f64> = xr.iter().map(|v| v * n as f64).collect();
    (rel_l2(&got, &want), rel_l2(&back, &scaled))
}

fn every_length<T: CudaFloat>() {
    let Some((stream, arch)) = device() else {
        return;
    };
    let t0 = std::time::Instant::now();
    let dev = FftDevice::cuda(&arch);
    let groups: Vec<Vec<usize>> = (2..=4096usize)
        .collect::<Vec<_>>()
        .chunks(64)
        .map(|c| c.to_vec())
        .collect();
    // Generate and compile the bundles in parallel (NVRTC is thread-safe).
    let built: Vec<(Vec<usize>, Vec<GenFft<T>>)> = groups
        .into_par_iter()
        .map(|g| {
            let specs: Vec<FftSpec> = g
                .iter()
                .map(|&n| FftSpec::new(&[n], 2, T::PRECISION))
                .collect();
            let m = fft_bundle(&specs, &dev).unwrap();
            (g, GenFft::<T>::bundle(&stream, &arch, m).unwrap())
        })
        .collect();
    let compiled = t0.elapsed().as_secs_f64();
    let mut sweep = Sweep::<T>::new();
    for (g, ffts) in built {
        for (mut fft, n) in ffts.into_iter().zip(g) {
            sweep.record(n, check(&stream, &mut fft, &[n], n as u64));
        }
    }
    eprintln!(
        "{}: every length 2..=4096 on {}: compiled in {compiled:.1} s, checked in {:.1} s, worst relative l2 {:.2e} at N = {}",
        std::any::type_name::<T>(),
        arch.name,
        t0.elapsed().as_secs_f64() - compiled,
        sweep.worst.0,
        sweep.worst.1
    );
    sweep.assert_passed();
}

fn shapes<T: CudaFloat>() {
    let Some((stream, arch)) = device() else {
        return;
    };
    let cases: &[(&[usize], usize)] = &[
        (&[16, 16, 16], 64),
        (&[32, 32, 32], 8),
        (&[64, 64, 64], 2),
        (&[7, 12], 5),
        (&[5, 9, 11], 3),
        (&[12, 4093], 1),
        (&[1 << 16], 2),
        (&[2000, 2000], 1),
        (&[4096, 4096], 1),
        (&[200, 200, 200], 1),
        (&[512, 512, 512], 1),
    ];
    for &(shape, batch) in cases {
        let mut fft = GenFft::<T>::new(&stream, &arch, shape, batch).unwrap();
        let (f, r) = check(&stream, &mut fft, shape, 5);
        eprintln!(
            "{} {shape:?} x {batch}: forward {f:.2e}, round trip {r:.2e}, {} launches",
            std::any::type_name::<T>(),
            fft.module().plan.launches.len()
        );
        assert!(f <= tol::<T>() && r <= tol::<T>(), "{shape:?} x {batch}");
    }
}

/// The tests `$f32` and `$f64` of the generic check `$check` in each precision.
macro_rules! in_both_precisions {
    ($check:ident: $f32:ident, $f64:ident) => {
        #[test]
        fn $f32() {
            $check::<f32>();
        }

        #[test]
        fn $f64() {
            $check::<f64>();
        }
    };
}

in_both_precisions!(every_length: every_length_f32, every_length_f64);
in_both_precisions!(shapes: multi_dimensional_f32, multi_dimensional_f64);
