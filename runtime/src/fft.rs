//! Multi-dimensional FFTs from rustfft's 1-D ones: rows of the contiguous axis in parallel,
//! other axes by gathering batches of columns into contiguous scratch, transforming, and
//! scattering back.

use num_complex::Complex;
use rayon::prelude::*;
use rustfft::{Fft, FftDirection, FftNum, FftPlanner};
use std::sync::{Arc, OnceLock};

/// Columns gathered per task on non-contiguous axes: a cache line or more of each row.
const COLUMN_BATCH: usize = 16;

/// Unnormalised FFTs over a row-major array of shape `dims`, in both directions. Each
/// direction is planned on first use: most plans only ever run one, and planning a long
/// 1-D transform (its twiddle factors) costs as much as running it.
pub struct FftNd<T: FftNum> {
    dims: Vec<usize>,
    forward: OnceLock<Vec<Arc<dyn Fft<T>>>>,
    inverse: OnceLock<Vec<Arc<dyn Fft<T>>>>,
}

impl<T: FftNum + Default> FftNd<T> {
    pub fn new(dims: &[usize]) -> Self {
        FftNd {
            dims: dims.to_vec(),
            forward: OnceLock::new(),
            inverse: OnceLock::new(),
        }
    }

    fn plans(&self, direction: FftDirection) -> &[Arc<dyn Fft<T>>] {
        let cell = match direction {
            FftDirection::Forward => &self.forward,
            FftDirection::Inverse => &self.inverse,
        };
        cell.get_or_init(|| {
            let mut planner = FftPlanner::new();
            self.dims
                .iter()
                .map(|&n| planner.plan_fft(n, direction))
                .collect()
        })
    }

    /// In place: `e^{-2πi jk/n}` for `Forward` (isign = −1), `e^{+2πi jk/n}` for `Inverse`.
    pub fn process(&self, data: &mut [Complex<T>], direction: FftDirection) {
        let plans = self.plans(direction);
        for (axis, (&n, fft)) in self.dims.iter().zip(plans).enumerate() {
            if n == 1 {
                continue;
            }
            let stride: usize = self.dims[axis + 1..].iter().product();
            if stride == 1 {
                data.par_chunks_mut(n).for_each_init(
                    || vec![Complex::default(); fft.get_inplace_scratch_len()],
                    |scratch, row| fft.process_with_scratch(row, scratch),
                );
            } else {
                data.par_chunks_mut(n * stride)
                    .for_each(|block| strided(fft.as_ref(), block, n, stride));
            }
        }
    }
}

/// Transforms the `stride` interleaved columns of a block of shape `(n, stride)`.
fn strided<T: FftNum + Default>(
    fft: &dyn Fft<T>,
    block: &mut [Complex<T>],
    n: usize,
    stride: usize,
) {
    let batches = stride.div_ceil(COLUMN_BATCH);
    let shared = SyncPtr(block.as_mut_ptr());
    (0..batches).into_par_iter().for_each_init(
        || {
            (
                vec![Complex::default(); n * COLUMN_BATCH],
                vec![Complex::default(); fft.get_inplace_scratch_len()],
            )
        },
        |(cols, scratch), b| {
            let c0 = b * COLUMN_BATCH;
            let nc = COLUMN_BATCH.min(stride - c0);
            let base = shared.get();
            for i in 0..n {
                for c in 0..nc {
                    // SAFETY: batch `b` alone touches columns c0..c0+nc of this block.
                    cols[c * n + i] = unsafe { *base.add(i * stride + c0 + c) };
                }
            }
            for c in 0..nc {
                fft.process_with_scratch(&mut cols[c * n..(c + 1) * n], scratch);
            }
            for i in 0..n {
                for c in 0..nc {
                    // SAFETY: as above.
                    unsafe { *base.add(i * stride + c0 + c) = cols[c * n + i] };
                }
            }
        },
    );
}

struct SyncPtr<T>(*mut T);
// SAFETY: used only for disjoint column batches (see `strided`).
unsafe impl<T> Send for SyncPtr<T> {}
unsafe impl<T> Sync for SyncPtr<T> {}
impl<T> SyncPtr<T> {
    fn get(&self) -> *mut T {
        self.0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Naive multi-dimensional DFT, the independent reference.
    fn naive(dims: &[usize], x: &[Complex<f64>], sign: f64) -> Vec<Complex<f64>> {
        let total: usize = dims.iter().product();
        let idx = |mut i: usize| -> Vec<usize> {
            let mut v = vec![0; dims.len()];
            for d in (0..dims.len()).rev() {
                v[d] = i % dims[d];
                i /= dims[d];
            }
            v
        };
        (0..total)
            .map(|k| {
                let kk = idx(k);
                (0..total)
                    .map(|j| {
                        let jj = idx(j);
                        let ph: f64 = (0..dims.len())
                            .map(|d| {
                                2.0 * std::f64::consts::PI * (kk[d] * jj[d]) as f64 / dims[d] as f64
                            })
                            .sum();
                        x[j] * Complex::from_polar(1.0, sign * ph)
                    })
                    .sum()
            })
            .collect()
    }

    #[test]
    fn matches_naive_dft_in_every_dimension() {
        for dims in [vec![12], vec![6, 10], vec![4, 5, 18], vec![1, 7, 3]] {
            let total: usize = dims.iter().product();
            let x: Vec<Complex<f64>> = (0..total)
                .map(|i| Complex::new((i as f64 * 0.37).sin(), (i as f64 * 1.3).cos()))
                .collect();
            for (dir, sign) in [(FftDirection::Forward, -1.0), (FftDirection::Inverse, 1.0)] {
                let mut y = x.clone();
                FftNd::new(&dims).process(&mut y, dir);
                let z = naive(&dims, &x, sign);
                for (a, b) in y.iter().zip(&z) {
                    assert!((a - b).norm() < 1e-10, "{dims:?}");
                }
            }
        }
    }
}
