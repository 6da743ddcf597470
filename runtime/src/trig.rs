//! Sine and cosine of a block of arguments at once, for the type 3 phase factors: one
//! `e^{±iφ}` per source and per target at set-points, where the C library's `sin_cos`, one
//! argument at a time, was most of the phases' half of the step (2-D type 3, 10⁶ sources and
//! targets, one thread of the GPU machine's host: 66 ms of phases in a 143 ms set-points;
//! `NUDT_STEPS=FILE nudt bench --only 2d-t3 --threads 1`). The same steps for every lane and
//! no branch per lane let the compiler run the lanes in vector registers.
//!
//! The argument is reduced by the nearest multiple `q` of π/2 in three parts of π/2 (the
//! first two of 33 bits, so that `q` times either is exact while `|q| < 2²⁰`), and the
//! reduced `r ∈ [−π/4, π/4]` goes through the Taylor series of sine to `r¹⁵` and of cosine to
//! `r¹⁶`, whose first omitted terms are below 5·10⁻¹⁷ there, a tenth of the last place. A
//! block with an argument beyond [`REDUCED_UP_TO`], or not finite, takes the library's
//! function lane by lane.

/// π/2 in three parts: the first two have 33 significant bits, the third the rest.
const PIO2_1: f64 = 1.570_796_326_734_125_6;
const PIO2_2: f64 = 6.077_100_506_303_966e-11;
const PIO2_3: f64 = 2.022_266_248_711_166_5e-21;

/// Largest |argument| reduced here: `q < 2²⁰` keeps `q·PIO2_1` and `q·PIO2_2` exact.
const REDUCED_UP_TO: f64 = 1.6e6;

/// Adding and subtracting 1.5·2⁵² rounds an f64 below 2⁵¹ in magnitude to the nearest
/// integer, and leaves that integer in the low bits of the sum.
const ROUNDER: f64 = 6_755_399_441_055_744.0;

/// `1/k!` with alternating signs: sine's terms `r³ … r¹⁵`, cosine's `r⁴ … r¹⁶` (its `r²`
/// term is `−r²/2`, added apart for accuracy).
const SIN: [f64; 7] = [
    -1.0 / 6.0,
    1.0 / 120.0,
    -1.0 / 5_040.0,
    1.0 / 362_880.0,
    -1.0 / 39_916_800.0,
    1.0 / 6_227_020_800.0,
    -1.0 / 1_307_674_368_000.0,
];
const COS: [f64; 7] = [
    1.0 / 24.0,
    -1.0 / 720.0,
    1.0 / 40_320.0,
    -1.0 / 3_628_800.0,
    1.0 / 479_001_600.0,
    -1.0 / 87_178_291_200.0,
    1.0 / 20_922_789_888_000.0,
];

/// `(sin x, cos x)` of each of `L` arguments.
pub(crate) fn sin_cos_lanes<const L: usize>(x: [f64; L]) -> ([f64; L], [f64; L]) {
    if !x.iter().all(|v| v.abs() <= REDUCED_UP_TO) {
        let both = x.map(f64::sin_cos);
        return (both.map(|b| b.0), both.map(|b| b.1));
    }
    let (mut s, mut c) = ([0.0; L], [0.0; L]);
    for l in 0..L {
        let shifted = x[l] * std::f64::consts::FRAC_2_PI + ROUNDER;
        let q = shifted - ROUNDER;
        let quadrant = shifted.to_bits() & 3;
        let r = ((x[l] - q * PIO2_1) - q * PIO2_2) - q * PIO2_3;
        let r2 = r * r;
        let ps = SIN.iter().rev().fold(0.0, |acc, &k| acc * r2 + k);
        let pc = COS.iter().rev().fold(0.0, |acc, &k| acc * r2 + k);
        let sr = r + r * r2 * ps;
        let cr = (1.0 - 0.5 * r2) + r2 * r2 * pc;
        // x = qπ/2 + r: quadrant 1 swaps sine and cosine, 2 negates both.
        let (a, b) = if quadrant & 1 == 0 {
            (sr, cr)
        } else {
            (cr, sr)
        };
        s[l] = if quadrant & 2 == 0 { a } else { -a };
        c[l] = if (quadrant + 1) & 2 == 0 { b } else { -b };
    }
    (s, c)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Agrees with the library's sine and cosine within a few units of the last place, over
    /// small, moderate and large arguments of both signs, at the multiples of π/2 where the
    /// quadrants change, and beyond the reduction's range.
    #[test]
    fn matches_the_library_over_every_range() {
        let mut args = vec![0.0, -0.0, 1e-300, 0.785, -0.786];
        for k in -40..=40 {
            let m = k as f64 * std::f64::consts::FRAC_PI_2;
            args.extend([m, m + 1e-9, m - 1e-9, m + 0.7, m - 0.7]);
        }
        let mut u = 0x2545_f491_4f6c_dd1du64;
        for scale in [1.0, 30.0, 1e3, 1e5, 1.5e6, 1e8, 1e12] {
            for _ in 0..4000 {
                u ^= u << 13;
                u ^= u >> 7;
                u ^= u << 17;
                args.push(scale * ((u >> 11) as f64 / (1u64 << 53) as f64 * 2.0 - 1.0));
            }
        }
        args.extend([f64::NAN, f64::INFINITY, -f64::INFINITY]);
        for block in args.chunks_exact(8) {
            let x: [f64; 8] = block.try_into().unwrap();
            let (s, c) = sin_cos_lanes(x);
            for l in 0..8 {
                let (es, ec) = x[l].sin_cos();
                // Both reduce exactly enough to be within a few units of 1's last place.
                let tol = 4.0 * f64::EPSILON;
                let ok = |got: f64, want: f64| {
                    (got - want).abs() <= tol || (got.is_nan() && want.is_nan())
                };
                assert!(ok(s[l], es), "sin({}) = {} against {es}", x[l], s[l]);
                assert!(ok(c[l], ec), "cos({}) = {} against {ec}", x[l], c[l]);
            }
        }
    }
}
