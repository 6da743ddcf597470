//! What the generated FFT's suites on both GPU backends check against (`runtime/tests/suite/opencl_fft.rs`
//! and `tests/suite/cuda_fft.rs` include this file): rustfft's transform of the same input, the
//! bound per precision, and the tally of lengths over a sweep.

use num_complex::Complex;
use rustfft::FftPlanner;

/// rustfft's forward transform, in f64, along every axis of every batch element of `y`
/// (row-major arrays of `shape`, one after another).
pub fn reference(shape: &[usize], mut y: Vec<Complex<f64>>) -> Vec<Complex<f64>> {
    let vol: usize = shape.iter().product();
    let mut planner = FftPlanner::<f64>::new();
    for (axis, &n) in shape.iter().enumerate() {
        if n == 1 {
            continue;
        }
        let fft = planner.plan_fft_forward(n);
        let stride: usize = shape[axis + 1..].iter().product();
        let mut line = vec![Complex::default(); n];
        for start in (0..y.len()).filter(|i| (i % vol) % (n * stride) < stride) {
            for (e, v) in line.iter_mut().enumerate() {
                *v = y[start + e * stride];
            }
            fft.process(&mut line);
            for (e, v) in line.iter().enumerate() {
                y[start + e * stride] = *v;
            }
        }
    }
    y
}

/// The relative l2 error allowed in precision `T` (f32 or f64).
pub fn tol<T>() -> f64 {
    if std::mem::size_of::<T>() == 4 {
        2e-6
    } else {
        1e-14
    }
}

/// The worst error of a sweep of 1D lengths, and the lengths over the bound.
pub struct Sweep<T> {
    /// The largest error and its length.
    pub worst: (f64, usize),
    pub failures: Vec<String>,
    precision: std::marker::PhantomData<T>,
}

impl<T> Sweep<T> {
    pub fn new() -> Self {
        Sweep {
            worst: (0.0, 0),
            failures: Vec::new(),
            precision: std::marker::PhantomData,
        }
    }

    /// Records length `n`'s forward and round-trip errors.
    pub fn record(&mut self, n: usize, (forward, round_trip): (f64, f64)) {
        let e = forward.max(round_trip);
        if e > self.worst.0 {
            self.worst = (e, n);
        }
        if !(forward <= tol::<T>() && round_trip <= tol::<T>()) {
            let what = format!("N = {n}: forward {forward:.2e}, round trip {round_trip:.2e}");
            self.failures.push(what);
        }
    }

    /// Fails the test with every length over the bound.
    pub fn assert_passed(&self) {
        assert!(self.failures.is_empty(), "{}", self.failures.join("\n"));
    }
}
