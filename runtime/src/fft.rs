//! Multi-dimensional FFTs from rustfft's 1-D ones: rows of the contiguous axis in parallel,
//! other axes by gathering batches of columns into contiguous scratch, transforming, and
//! scattering back. A long 1-D transform, which rustfft runs on one thread, is split into a
//! 2-D one ([`FourStep`]) so that every core works on it.

use crate::float::{Float, SyncPtr};
use num_complex::Complex;
use rayon::prelude::*;
use rustfft::{Fft, FftDirection, FftNum};
use std::sync::{Arc, Mutex, OnceLock};

/// Columns gathered per task on non-contiguous axes: a cache line or more of each row.
const COLUMN_BATCH: usize = 16;

/// Unnormalised FFTs over a row-major array of shape `dims`, in both directions. Each
/// direction is planned on first use: most plans only ever run one, and planning a long
/// 1-D transform (its twiddle factors) costs as much as running it.
pub struct FftNd<T: FftNum> {
    dims: Vec<usize>,
    forward: OnceLock<Vec<Arc<dyn Fft<T>>>>,
    inverse: OnceLock<Vec<Arc<dyn Fft<T>>>>,
    /// For a long 1-D transform: its split into `n1 × n2`, planned on first use per direction.
    long: Option<(usize, usize)>,
    long_forward: OnceLock<FourStep<T>>,
    long_inverse: OnceLock<FourStep<T>>,
    /// Scratch of ended row passes, for the next ([`Lent`]): a 1-D grid is one row, whose
    /// scratch is the size of the grid, and allocated fresh (256 KB at 16 000 points) it was
    /// faulted in and zeroed at every execute of a small transform.
    spare: Mutex<Vec<Vec<Complex<T>>>>,
}

/// Scratch lengths from which a row pass borrows from the plan's spares ([`Lent`]): shorter
/// scratch comes from the thread's malloc arena without faults, and the transforms of a stack
/// running at once would all meet at the spares' lock for it.
const LENT_MIN: usize = 1 << 14;

/// A row pass's scratch: lent from a plan's spares and given back when dropped, or, where
/// short, its own.
struct Lent<'a, T> {
    spare: Option<&'a Mutex<Vec<Vec<Complex<T>>>>>,
    buf: Vec<Complex<T>>,
}

impl<'a, T: Float> Lent<'a, T> {
    fn new(spare: &'a Mutex<Vec<Vec<Complex<T>>>>, len: usize) -> Self {
        let spare = (len >= LENT_MIN).then_some(spare);
        // The plan's own spare, else one a dropped plan left ([`crate::reuse`]).
        let mut buf = spare
            .and_then(|s| {
                let own = s.lock().unwrap_or_else(|e| e.into_inner()).pop();
                own.or_else(|| crate::reuse::take::<T>(len))
            })
            .unwrap_or_default();
        buf.resize(len, Complex::default());
        Lent { spare, buf }
    }
}

impl<T> Drop for Lent<'_, T> {
    fn drop(&mut self) {
        if let Some(spare) = self.spare {
            let buf = std::mem::take(&mut self.buf);
            spare.lock().unwrap_or_else(|e| e.into_inner()).push(buf);
        }
    }
}

/// 1-D lengths from which a transform is split across cores (below it, one thread's
/// transform is short next to the spreading around it).
const FOUR_STEP_MIN: usize = 1 << 16;

impl<T: Float> FftNd<T> {
    /// Gives the scratch buffers to the next plan ([`crate::reuse`]).
    pub fn release(&self) {
        let mut spare = self.spare.lock().unwrap_or_else(|e| e.into_inner());
        spare.drain(..).for_each(crate::reuse::keep);
        for four in [self.long_forward.get(), self.long_inverse.get()]
            .into_iter()
            .flatten()
        {
            let mut scratch = four.scratch.lock().unwrap_or_else(|e| e.into_inner());
            crate::reuse::keep(std::mem::take(&mut *scratch));
        }
    }

    pub fn new(dims: &[usize]) -> Self {
        let long = match dims {
            &[n] if n >= FOUR_STEP_MIN => FourStep::<T>::split(n),
            _ => None,
        };
        FftNd {
            dims: dims.to_vec(),
            forward: OnceLock::new(),
            inverse: OnceLock::new(),
            long,
            long_forward: OnceLock::new(),
            long_inverse: OnceLock::new(),
            spare: Mutex::new(Vec::new()),
        }
    }

    fn plans(&self, direction: FftDirection) -> &[Arc<dyn Fft<T>>] {
        let cell = match direction {
            FftDirection::Forward => &self.forward,
            FftDirection::Inverse => &self.inverse,
        };
        cell.get_or_init(|| T::fft_plans(&self.dims, direction))
    }

    /// In place: `e^{-2πi jk/n}` for `Forward` (isign = −1), `e^{+2πi jk/n}` for `Inverse`.
    pub fn process(&self, data: &mut [Complex<T>], direction: FftDirection) {
        self.run(data, direction, None);
    }

    /// As [`FftNd::process`], where only the indices with `needed[a][i]` along every axis `a`
    /// matter: the outputs read afterwards ([`Needed::Outputs`], type 1) or the inputs that
    /// may be nonzero ([`Needed::Inputs`], type 2); elsewhere the result is unspecified, or
    /// the input must be zero. Lines that meet no needed index are skipped. Type 1
    /// transforms the outermost axis first, so the indices outside a line are outputs by
    /// then; type 2 the innermost first, so they are still inputs; either way whole blocks
    /// of lines drop out. A fine grid twice the modes per axis then takes 1.75 axes' work
    /// in 3D instead of 3, and 1.5 in 2D instead of 2.
    ///
    /// The spectrum side (type 1's outputs, type 2's inputs) is laid out by
    /// [`FftNd::spectrum_position`]: a long 1-D transform leaves it transposed, which saves
    /// the four-step's transpose and its scratch the size of the grid.
    pub fn process_pruned(
        &self,
        data: &mut [Complex<T>],
        direction: FftDirection,
        needed: &[Vec<bool>],
        side: Needed,
    ) {
        self.run(data, direction, Some((needed, side)));
    }

    /// With a 1-D plan of length `n`: transforms the columns of `data`, a row-major array of
    /// `n` rows (its `data.len() / n` interleaved columns, each of length `n`).
    pub fn process_columns(&self, data: &mut [Complex<T>], direction: FftDirection) {
        let n = self.dims[0];
        let m = data.len() / n.max(1);
        let fft = &self.plans(direction)[0];
        if n > 1 {
            strided(fft.as_ref(), data, n, m);
        }
    }

    /// As [`FftNd::process_columns`], for an array whose rows lie in different buffers (row
    /// `i` is `rows[i]`, all of one length); only the rows `keep` says are written back.
    /// A type 1's slabs keep their columns partly in the caller's output ([`crate::slabs`]).
    pub fn process_row_columns(
        &self,
        rows: &mut [&mut [Complex<T>]],
        keep: &[bool],
        direction: FftDirection,
    ) {
        assert!(
            rows.len() == self.dims[0] && keep.len() == rows.len(),
            "one row per point of the axis"
        );
        transform_columns(self.plans(direction)[0].as_ref(), rows, Some(keep));
    }

    /// Position of spectrum index `k` in [`FftNd::process_pruned`]'s layout: `k` itself,
    /// except for a long 1-D transform split `n1 × n2`, which keeps it at entry
    /// `(k mod n1, k div n1)` of the row-major `n1 × n2` matrix.
    pub fn spectrum_position(&self, k: usize) -> usize {
        match self.long {
            Some((n1, n2)) => (k % n1) * n2 + k / n1,
            None => k,
        }
    }

    fn run(
        &self,
        data: &mut [Complex<T>],
        direction: FftDirection,
        prune: Option<(&[Vec<bool>], Needed)>,
    ) {
        if let Some((n1, n2)) = self.long {
            // One axis: nothing to prune, but the spectrum may stay transposed.
            let cell = match direction {
                FftDirection::Forward => &self.long_forward,
                FftDirection::Inverse => &self.long_inverse,
            };
            let four = cell.get_or_init(|| FourStep::new(n1, n2, direction));
            return match prune {
                None => four.process(data),
                Some((_, Needed::Outputs)) => four.natural_to_transposed(data),
                Some((_, Needed::Inputs)) => four.transposed_to_natural(data),
            };
        }
        let plans = self.plans(direction);
        let d = self.dims.len();
        let order: Vec<usize> = match prune {
            Some((_, Needed::Inputs)) => (0..d).rev().collect(),
            _ => (0..d).collect(),
        };
        for axis in order {
            let (n, fft) = (self.dims[axis], &plans[axis]);
            if n == 1 {
                continue;
            }
            // Whether the lines of outer index `b` (over the axes before `axis`) matter.
            let live = |mut b: usize| match prune {
                None => true,
                Some((needed, _)) => (0..axis).rev().all(|a| {
                    let i = b % self.dims[a];
                    b /= self.dims[a];
                    needed[a][i]
                }),
            };
            let stride: usize = self.dims[axis + 1..].iter().product();
            if stride == 1 {
                data.par_chunks_mut(n)
                    .with_min_len(crate::float::rows_per_task(n))
                    .enumerate()
                    .filter(|(b, _)| live(*b))
                    .for_each_init(
                        || Lent::new(&self.spare, fft.get_inplace_scratch_len()),
                        |scratch, (_, row)| fft.process_with_scratch(row, &mut scratch.buf),
                    );
            } else {
                data.par_chunks_mut(n * stride)
                    .with_min_len(crate::float::rows_per_task(n * stride))
                    .enumerate()
                    .filter(|(b, _)| live(*b))
                    .for_each(|(_, block)| strided(fft.as_ref(), block, n, stride));
            }
        }
    }
}

/// Which indices [`FftNd::process_pruned`]'s `needed` describes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Needed {
    /// Only these outputs are read afterwards.
    Outputs,
    /// The input is zero away from these.
    Inputs,
}

/// Transforms the columns of a row-major block of `n` rows of `stride` values each.
fn strided<T: FftNum + Default>(
    fft: &dyn Fft<T>,
    block: &mut [Complex<T>],
    n: usize,
    stride: usize,
) {
    if stride == 0 {
        return;
    }
    let mut rows: Vec<&mut [Complex<T>]> = block.chunks_mut(stride).take(n).collect();
    transform_columns(fft, &mut rows, None);
}

/// Transforms with `fft` (of length `rows.len()`) the columns of an array whose row `i` is
/// `rows[i]`, all of one length: batches of [`COLUMN_BATCH`] columns are gathered into
/// contiguous scratch, transformed, and written back to the rows `keep` says (all without).
fn transform_columns<T: FftNum + Default>(
    fft: &dyn Fft<T>,
    rows: &mut [&mut [Complex<T>]],
    keep: Option<&[bool]>,
) {
    let n = rows.len();
    let m = rows.first().map_or(0, |r| r.len());
    assert!(
        fft.len() == n && rows.iter().all(|r| r.len() == m),
        "a row per point of the transform, all of one length"
    );
    let ptrs: Vec<SyncPtr<Complex<T>>> = rows.iter_mut().map(|r| SyncPtr(r.as_mut_ptr())).collect();
    (0..m.div_ceil(COLUMN_BATCH)).into_par_iter().for_each_init(
        || {
            (
                vec![Complex::default(); n * COLUMN_BATCH],
                vec![Complex::default(); fft.get_inplace_scratch_len()],
            )
        },
        |(cols, scratch), b| {
            let c0 = b * COLUMN_BATCH;
            let nc = COLUMN_BATCH.min(m - c0);
            for (i, row) in ptrs.iter().enumerate() {
                for c in 0..nc {
                    // SAFETY: every row holds `m` entries (checked above) and stays borrowed
                    // by `rows` for the call; batch `b` alone touches columns c0..c0+nc.
                    cols[c * n + i] = unsafe { *row.get().add(c0 + c) };
                }
            }
            for c in 0..nc {
                fft.process_with_scratch(&mut cols[c * n..(c + 1) * n], scratch);
            }
            for (i, row) in ptrs.iter().enumerate() {
                if keep.is_some_and(|k| !k[i]) {
                    continue;
                }
                for c in 0..nc {
                    // SAFETY: as above.
                    unsafe { *row.get().add(c0 + c) = cols[c * n + i] };
                }
            }
        },
    );
}

/// A 1-D transform of length `n = n1·n2` as a 2-D one (Bailey's four-step algorithm): with
/// the input read as an `n1 × n2` row-major matrix (`x[n2·j1 + j2]`), transform its columns,
/// multiply entry `(k1, j2)` by `ω^{j2·k1}`, transform its rows, and transpose, so that
/// output `k1 + n1·k2` is entry `(k1, k2)`. Every step runs in parallel, where rustfft runs a
/// single long transform on one thread.
pub struct FourStep<T: FftNum> {
    n1: usize,
    n2: usize,
    columns: Arc<dyn Fft<T>>,
    rows: Arc<dyn Fft<T>>,
    /// `ω^e` for `e = hi·n2 + lo` as `coarse[hi]·fine[lo]`: `ω^{j2·k1}` from two small
    /// tables to within two roundings (computed in f64), where successive powers would drift.
    coarse: Vec<Complex<T>>,
    fine: Vec<Complex<T>>,
    /// Holds the transposed result before it is copied back: [`FourStep::process`] only; the
    /// NUFFT's grids take the transposed spectrum as it is. Taken out of the lock while in
    /// use: the transforms of a stack may run at once, and a thread that held the lock
    /// through the parallel copy could steal another transform's task that waits on it.
    scratch: Mutex<Vec<Complex<T>>>,
}

impl<T: Float> FourStep<T> {
    /// The split of `n` into `n1 × n2` closest to square, if it has one with both factors at
    /// least 16 (a prime length has none, and a lopsided split gains little).
    pub fn split(n: usize) -> Option<(usize, usize)> {
        let root = (n as f64).sqrt() as usize;
        let n1 = (16..=root.max(16)).rev().find(|&d| n.is_multiple_of(d))?;
        (n / n1 >= 16).then_some((n1, n / n1))
    }

    pub fn new(n1: usize, n2: usize, direction: FftDirection) -> Self {
        let plans = T::fft_plans(&[n1, n2], direction);
        let n = n1 * n2;
        let sign = match direction {
            FftDirection::Forward => -1.0,
            FftDirection::Inverse => 1.0,
        };
        let root = |e: usize| {
            let (s, c) = (sign * 2.0 * std::f64::consts::PI * e as f64 / n as f64).sin_cos();
            Complex::new(T::of(c), T::of(s))
        };
        FourStep {
            n1,
            n2,
            columns: plans[0].clone(),
            rows: plans[1].clone(),
            coarse: (0..n1).map(|hi| root(hi * n2)).collect(),
            fine: (0..n2).map(root).collect(),
            scratch: Mutex::new(Vec::new()),
        }
    }

    /// Natural order in, natural order out.
    pub fn process(&self, data: &mut [Complex<T>]) {
        let (n1, n2) = (self.n1, self.n2);
        self.natural_to_transposed(data);
        let mut out = std::mem::take(&mut *self.scratch.lock().unwrap_or_else(|e| e.into_inner()));
        crate::float::resize_parallel(&mut out, n1 * n2);
        // Transpose in blocks of output rows: each task reads a strip of columns.
        const BLOCK: usize = 16;
        let src = &*data;
        out.par_chunks_mut(BLOCK * n1)
            .enumerate()
            .for_each(|(b, dst)| {
                let k2s = b * BLOCK..(b * BLOCK + BLOCK).min(n2);
                for k1 in 0..n1 {
                    for (r, k2) in k2s.clone().enumerate() {
                        dst[r * n1 + k1] = src[k1 * n2 + k2];
                    }
                }
            });
        data.par_chunks_mut(1 << 16)
            .zip(out.par_chunks(1 << 16))
            .for_each(|(d, o)| d.copy_from_slice(o));
        *self.scratch.lock().unwrap_or_else(|e| e.into_inner()) = out;
    }

    /// The first three steps: natural order in, output `k1 + n1·k2` at entry `(k1, k2)`.
    pub fn natural_to_transposed(&self, data: &mut [Complex<T>]) {
        strided(self.columns.as_ref(), data, self.n1, self.n2);
        self.twiddled_rows(data, true);
    }

    /// The inverse arrangement: input `k1 + n1·k2` at entry `(k1, k2)`, natural order out.
    /// With `x[n2·j1 + j2]`, the exponent `(n2·j1 + j2)(k1 + n1·k2)` splits as
    /// `n2·j1·k1 + j2·k1 + n1·j2·k2 (mod n)`: rows over `k2`, the twiddle `ω^{j2·k1}`, then
    /// columns over `k1`.
    pub fn transposed_to_natural(&self, data: &mut [Complex<T>]) {
        self.twiddled_rows(data, false);
        strided(self.columns.as_ref(), data, self.n1, self.n2);
    }

    /// Each row `k1`: entry `j2` times `ω^{j2·k1}`, and the row transform, in the order asked.
    fn twiddled_rows(&self, data: &mut [Complex<T>], twiddle_first: bool) {
        let (n1, n2) = (self.n1, self.n2);
        let per_task = crate::float::rows_per_task(n2);
        data.par_chunks_mut(n2)
            .with_min_len(per_task)
            .enumerate()
            .for_each_init(
                || vec![Complex::default(); self.rows.get_inplace_scratch_len()],
                |scratch, (k1, row)| {
                    if !twiddle_first {
                        self.rows.process_with_scratch(row, scratch);
                    }
                    // e = j2·k1 mod n, kept as hi·n2 + lo while j2 steps (k1 < n1, so k1 = 0·n2 + k1).
                    let (mut hi, mut lo) = (0, 0);
                    for v in row.iter_mut() {
                        *v = *v * self.coarse[hi] * self.fine[lo];
                        lo += k1;
                        while lo >= n2 {
                            lo -= n2;
                            hi += 1;
                        }
                        if hi >= n1 {
                            hi -= n1;
                        }
                    }
                    if twiddle_first {
                        self.rows.process_with_scratch(row, scratch);
                    }
                },
            );
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rustfft::FftPlanner;

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

    /// The pruned paths of a long 1-D transform leave the spectrum transposed: type 1's
    /// outputs and type 2's inputs sit at `spectrum_position(k)`. Checked against rustfft's
    /// single transform in both directions, on a square and a lopsided split.
    #[test]
    fn long_transforms_keep_the_spectrum_at_its_position() {
        for n in [1 << 16, 3 * 5 * 7 * 11 * 13 * 17] {
            let plan = FftNd::<f64>::new(&[n]);
            let x: Vec<Complex<f64>> = (0..n)
                .map(|i| Complex::new((i as f64 * 0.61).cos(), (i as f64 * 0.29).sin()))
                .collect();
            let rel = |got: &[Complex<f64>], want: &[Complex<f64>]| {
                let err: f64 = got.iter().zip(want).map(|(a, b)| (a - b).norm_sqr()).sum();
                (err / want.iter().map(|b| b.norm_sqr()).sum::<f64>()).sqrt()
            };
            let all = [vec![true; n]];
            for dir in [FftDirection::Forward, FftDirection::Inverse] {
                let mut want = x.clone();
                FftPlanner::new().plan_fft(n, dir).process(&mut want);
                // Type 1's side: natural input, spectrum out at its positions.
                let mut y = x.clone();
                plan.process_pruned(&mut y, dir, &all, Needed::Outputs);
                let got: Vec<_> = (0..n).map(|k| y[plan.spectrum_position(k)]).collect();
                assert!(rel(&got, &want) < 1e-14, "n = {n} outputs");
                // Type 2's side: the spectrum in at its positions, natural output.
                let mut y = vec![Complex::default(); n];
                for (k, v) in x.iter().enumerate() {
                    y[plan.spectrum_position(k)] = *v;
                }
                plan.process_pruned(&mut y, dir, &all, Needed::Inputs);
                assert!(rel(&y, &want) < 1e-14, "n = {n} inputs");
            }
        }
    }

    #[test]
    fn four_step_matches_rustfft_on_long_transforms() {
        // Against rustfft's own single 1-D transform, both directions, square and lopsided
        // splits, f64 and f32.
        for n in [1 << 16, 3 * 5 * 7 * 11 * 13 * 17, 2_000_000] {
            let (n1, n2) = FourStep::<f64>::split(n).expect("smooth lengths split");
            assert_eq!(n1 * n2, n);
            let x: Vec<Complex<f64>> = (0..n)
                .map(|i| Complex::new((i as f64 * 0.37).sin(), (i as f64 * 1.3).cos()))
                .collect();
            for dir in [FftDirection::Forward, FftDirection::Inverse] {
                let mut want = x.clone();
                FftPlanner::new().plan_fft(n, dir).process(&mut want);
                let mut got = x.clone();
                FftNd::new(&[n]).process(&mut got, dir);
                let err = got
                    .iter()
                    .zip(&want)
                    .map(|(a, b)| (a - b).norm_sqr())
                    .sum::<f64>();
                let norm = want.iter().map(|b| b.norm_sqr()).sum::<f64>();
                assert!(
                    (err / norm).sqrt() < 1e-14,
                    "n = {n}: {}",
                    (err / norm).sqrt()
                );

                let xs: Vec<Complex<f32>> = x
                    .iter()
                    .map(|v| Complex::new(v.re as f32, v.im as f32))
                    .collect();
                let mut got = xs.clone();
                FftNd::new(&[n]).process(&mut got, dir);
                let err = got
                    .iter()
                    .zip(&want)
                    .map(|(a, b)| (Complex::new(a.re as f64, a.im as f64) - b).norm_sqr())
                    .sum::<f64>();
                assert!(
                    (err / norm).sqrt() < 5e-6,
                    "f32 n = {n}: {}",
                    (err / norm).sqrt()
                );
            }
        }
        assert_eq!(FourStep::<f64>::split(65537), None, "a prime has no split");
    }

    #[test]
    fn pruned_transforms_match_naive_dft_where_needed() {
        // Needed indices as a type 1/2 fine grid has them (the modes' two ends of each
        // axis), and an irregular set; both directions.
        let ends = |n: usize, m: usize| {
            (0..n)
                .map(|i| i < m.div_ceil(2) || i >= n - m / 2)
                .collect()
        };
        let odd = |n: usize| (0..n).map(|i| i % 3 == 1).collect();
        let cases: Vec<(Vec<usize>, Vec<Vec<bool>>)> = vec![
            (vec![12], vec![ends(12, 5)]),
            (vec![10, 8], vec![ends(10, 5), ends(8, 4)]),
            (vec![6, 9, 10], vec![ends(6, 3), ends(9, 4), ends(10, 5)]),
            (vec![6, 9, 10], vec![odd(6), ends(9, 4), odd(10)]),
            (vec![5, 1, 8], vec![ends(5, 2), vec![true], odd(8)]),
        ];
        for (dims, needed) in cases {
            let total: usize = dims.iter().product();
            let at = |mut j: usize| -> bool {
                (0..dims.len()).rev().all(|a| {
                    let i = j % dims[a];
                    j /= dims[a];
                    needed[a][i]
                })
            };
            let x: Vec<Complex<f64>> = (0..total)
                .map(|i| Complex::new((i as f64 * 0.37).sin(), (i as f64 * 1.3).cos()))
                .collect();
            let sparse: Vec<Complex<f64>> = (0..total)
                .map(|j| if at(j) { x[j] } else { Complex::default() })
                .collect();
            for (dir, sign) in [(FftDirection::Forward, -1.0), (FftDirection::Inverse, 1.0)] {
                let plan = FftNd::new(&dims);
                let mut y = x.clone();
                plan.process_pruned(&mut y, dir, &needed, Needed::Outputs);
                let z = naive(&dims, &x, sign);
                let checked = (0..total).filter(|&k| at(k)).count();
                assert!(checked > 0 && checked < total, "{dims:?}");
                for k in (0..total).filter(|&k| at(k)) {
                    assert!((y[k] - z[k]).norm() < 1e-10, "outputs {dims:?} at {k}");
                }
                let mut y = sparse.clone();
                plan.process_pruned(&mut y, dir, &needed, Needed::Inputs);
                let z = naive(&dims, &sparse, sign);
                for (k, (a, b)) in y.iter().zip(&z).enumerate() {
                    assert!((a - b).norm() < 1e-10, "inputs {dims:?} at {k}");
                }
            }
        }
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
