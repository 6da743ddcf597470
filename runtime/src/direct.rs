//! Direct O(NM) sums in f64: the reference every result is checked against.

use crate::uniform::ModeOrder;
use num_complex::Complex64;
use rayon::prelude::*;

/// Mode numbers of user index `flat` of a row-major mode array.
pub fn mode_of(flat: usize, modes: &[usize], order: ModeOrder) -> Vec<i64> {
    let mut k = vec![0; modes.len()];
    let mut r = flat;
    for d in (0..modes.len()).rev() {
        k[d] = order.mode(r % modes[d], modes[d]);
        r /= modes[d];
    }
    k
}

fn phase(isign: i32, freq: &[f64], x: &[&[f64]], j: usize) -> Complex64 {
    let ph: f64 = freq.iter().zip(x).map(|(k, xd)| k * xd[j]).sum();
    Complex64::from_polar(1.0, isign as f64 * ph)
}

/// `Σ_j c_j e^{isign·i·ξ·x_j}` at each frequency `ξ` of `freqs` (one `Vec` per output).
pub fn sum_at(x: &[&[f64]], c: &[Complex64], freqs: &[Vec<f64>], isign: i32) -> Vec<Complex64> {
    freqs
        .par_iter()
        .map(|f| (0..c.len()).map(|j| c[j] * phase(isign, f, x, j)).sum())
        .collect()
}

/// Type 1 at the user indices `which` of the mode array.
pub fn type1(
    x: &[&[f64]],
    c: &[Complex64],
    modes: &[usize],
    order: ModeOrder,
    isign: i32,
    which: &[usize],
) -> Vec<Complex64> {
    let freqs: Vec<Vec<f64>> = which
        .iter()
        .map(|&i| {
            mode_of(i, modes, order)
                .into_iter()
                .map(|k| k as f64)
                .collect()
        })
        .collect();
    sum_at(x, c, &freqs, isign)
}

/// Type 2 at the points `which`.
pub fn type2(
    x: &[&[f64]],
    f: &[Complex64],
    modes: &[usize],
    order: ModeOrder,
    isign: i32,
    which: &[usize],
) -> Vec<Complex64> {
    which
        .par_iter()
        .map(|&j| {
            (0..f.len())
                .map(|i| {
                    let k: Vec<f64> = mode_of(i, modes, order)
                        .into_iter()
                        .map(|k| k as f64)
                        .collect();
                    f[i] * phase(isign, &k, x, j)
                })
                .sum()
        })
        .collect()
}

/// Type 3 at the targets `which`.
pub fn type3(
    x: &[&[f64]],
    c: &[Complex64],
    s: &[&[f64]],
    isign: i32,
    which: &[usize],
) -> Vec<Complex64> {
    let freqs: Vec<Vec<f64>> = which
        .iter()
        .map(|&k| s.iter().map(|sd| sd[k]).collect())
        .collect();
    sum_at(x, c, &freqs, isign)
}

/// Relative l2 error `‖a − b‖ / ‖b‖` (0 when both are empty).
pub fn rel_error(a: &[Complex64], b: &[Complex64]) -> f64 {
    let num: f64 = a.iter().zip(b).map(|(x, y)| (x - y).norm_sqr()).sum();
    let den: f64 = b.iter().map(|y| y.norm_sqr()).sum();
    if den == 0.0 {
        num.sqrt()
    } else {
        (num / den).sqrt()
    }
}
