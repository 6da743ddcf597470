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

/// Type 2 at the points `which`, separably: per point, one table of phases per dimension
/// (in the modes' `order`), then a row-major sweep over the modes (no exp in the inner loop).
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
            let ph: Vec<Vec<Complex64>> = modes
                .iter()
                .zip(x)
                .map(|(&n, xd)| {
                    (0..n)
                        .map(|i| {
                            let k = order.mode(i, n) as f64;
                            Complex64::from_polar(1.0, isign as f64 * k * xd[j])
                        })
                        .collect()
                })
                .collect();
            let last = ph.last().expect("1 to 3 dimensions");
            let inner =
                |row: &[Complex64]| -> Complex64 { row.iter().zip(last).map(|(a, b)| a * b).sum() };
            match modes.len() {
                1 => inner(f),
                2 => f
                    .chunks(modes[1])
                    .zip(&ph[0])
                    .map(|(row, a)| a * inner(row))
                    .sum(),
                _ => f
                    .chunks(modes[1] * modes[2])
                    .zip(&ph[0])
                    .map(|(plane, a)| {
                        let s: Complex64 = plane
                            .chunks(modes[2])
                            .zip(&ph[1])
                            .map(|(row, b)| b * inner(row))
                            .sum();
                        a * s
                    })
                    .sum(),
            }
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

#[cfg(test)]
mod tests {
    use super::*;

    /// The separable type 2 against the plain sum over every mode (a type 3 whose sources are
    /// the mode numbers), in both mode orders and 1–3 dimensions.
    #[test]
    fn separable_type2_is_the_plain_sum() {
        let x: [&[f64]; 3] = [&[0.3, -1.2, 2.9], &[1.1, 0.2, -3.0], &[-0.7, 2.2, 0.4]];
        for (modes, order) in [
            (&[5][..], ModeOrder::Fft),
            (&[3, 4][..], ModeOrder::Cmcl),
            (&[2, 3, 5][..], ModeOrder::Fft),
        ] {
            let n: usize = modes.iter().product();
            let f: Vec<Complex64> = (0..n)
                .map(|i| Complex64::new(i as f64, 1.0 - i as f64))
                .collect();
            let k: Vec<Vec<f64>> = (0..modes.len())
                .map(|d| (0..n).map(|i| mode_of(i, modes, order)[d] as f64).collect())
                .collect();
            let k: Vec<&[f64]> = k.iter().map(|v| &v[..]).collect();
            let x = &x[..modes.len()];
            let a = type2(x, &f, modes, order, -1, &[0, 2]);
            let b = type3(&k, &f, x, -1, &[0, 2]);
            assert!(rel_error(&a, &b) < 1e-13, "{modes:?}");
        }
    }
}
