//! The kernel's Fourier transform, by Gauss–Legendre quadrature, for the correction step.

use super::KernelSpec;

/// Nodes and weights of the n-point Gauss–Legendre rule on [−1, 1].
pub fn gauss_legendre(n: usize) -> (Vec<f64>, Vec<f64>) {
    let mut x = vec![0.0; n];
    let mut w = vec![0.0; n];
    for i in 0..n {
        let mut z = (std::f64::consts::PI * (i as f64 + 0.75) / (n as f64 + 0.5)).cos();
        let mut dp = 1.0;
        for _ in 0..100 {
            // Legendre recurrence for P_n(z) and its derivative.
            let (mut p0, mut p1) = (1.0, z);
            for k in 2..=n {
                let p2 = ((2 * k - 1) as f64 * z * p1 - (k - 1) as f64 * p0) / k as f64;
                p0 = p1;
                p1 = p2;
            }
            let pn = if n == 0 { 1.0 } else { p1 };
            let pn1 = if n == 1 { 1.0 } else { p0 };
            dp = n as f64 * (z * pn - pn1) / (z * z - 1.0);
            let dz = pn / dp;
            z -= dz;
            if dz.abs() < 1e-16 {
                break;
            }
        }
        x[i] = z;
        w[i] = 2.0 / ((1.0 - z * z) * dp * dp);
    }
    (x, w)
}

/// Quadrature nodes per vector of [`FourierSeries::on_grid`]: one AVX-512 vector of f64.
const LANES: usize = 8;
/// Frequencies [`FourierSeries::on_grid`] rotates its phases through before computing them
/// again exactly.
const RESEED: usize = 64;
/// Runs of [`RESEED`] frequencies [`FourierSeries::on_grid`] advances together.
const STREAMS: usize = 4;

/// `ψ̂(ω) = ∫ ψ(d) e^{iωd} dd` for the kernel in grid units (real and even, as φ is).
#[derive(Clone, Debug)]
pub struct FourierSeries {
    half_width: f64,
    /// Quadrature nodes on (0, 1] in the normalised variable z, and φ(z)·weight there.
    nodes: Vec<f64>,
    weighted: Vec<f64>,
}

impl FourierSeries {
    pub fn new(spec: &KernelSpec) -> Self {
        // The integrand oscillates at most ~w/2 times over [0, 1]; 2 + 2w nodes on the half
        // interval integrate it to machine precision.
        let q = 2 + 2 * spec.width;
        let (x, w) = gauss_legendre(2 * q);
        let shape = spec.shape();
        let (nodes, weighted) = x
            .iter()
            .zip(&w)
            .filter(|(z, _)| **z > 0.0)
            .map(|(z, wt)| (*z, wt * shape.eval(*z)))
            .unzip();
        FourierSeries {
            half_width: spec.half_width(),
            nodes,
            weighted,
        }
    }

    /// ψ̂ at angular frequency ω (radians per grid point).
    pub fn at(&self, omega: f64) -> f64 {
        let a = self.half_width;
        let s: f64 = self
            .nodes
            .iter()
            .zip(&self.weighted)
            .map(|(z, wt)| wt * (omega * a * z).cos())
            .sum();
        2.0 * a * s
    }

    /// `out[i] = ψ̂(2πk/n)` for `k = first + i`: correction factors of a fine grid of size n.
    ///
    /// A 1-D grid of a million modes would need tens of millions of cosines; instead each
    /// node's phase is advanced by one rotation per k, and recomputed exactly at the start of
    /// every run of [`RESEED`] k so rounding cannot accumulate. Runs are independent, and
    /// [`STREAMS`] of them advance together, the nodes in vectors of [`LANES`] (padded with
    /// weight 0): one run alone is a chain of dependent multiplies, and node by node in
    /// scalar code the 4 001 frequencies of a 1-D plan of 8 000 modes took 90 µs (45–65 µs
    /// so). Pieces of a table are independent too, so callers may fill them in parallel.
    pub fn on_grid(&self, n: usize, first: usize, out: &mut [f64]) {
        type Lanes = [f64; LANES];
        let step = 2.0 * std::f64::consts::PI / n as f64;
        let a = self.half_width;
        let lanes = |v: &[f64]| -> Vec<Lanes> {
            v.chunks(LANES)
                .map(|c| std::array::from_fn(|l| c.get(l).copied().unwrap_or(0.0)))
                .collect()
        };
        let (nodes, wt) = (lanes(&self.nodes), lanes(&self.weighted));
        let groups = nodes.len();
        // sin and cos of each node's phase at frequency k.
        let angles = |k: usize, s: &mut [Lanes], c: &mut [Lanes]| {
            for ((s, c), z) in s.iter_mut().zip(c.iter_mut()).zip(&nodes) {
                for l in 0..LANES {
                    (s[l], c[l]) = (step * k as f64 * a * z[l]).sin_cos();
                }
            }
        };
        let (mut rs, mut rc) = (vec![[0.0; LANES]; groups], vec![[0.0; LANES]; groups]);
        angles(1, &mut rs, &mut rc);
        let mut ps = vec![[0.0; LANES]; groups * STREAMS];
        let mut pc = ps.clone();
        for (b, block) in out.chunks_mut(RESEED * STREAMS).enumerate() {
            for (r, (s, c)) in ps.chunks_mut(groups).zip(pc.chunks_mut(groups)).enumerate() {
                angles(first + (b * STREAMS + r) * RESEED, s, c);
            }
            for i in 0..RESEED.min(block.len()) {
                let mut acc = [[0.0; LANES]; STREAMS];
                let phases = ps.chunks_exact_mut(groups).zip(pc.chunks_exact_mut(groups));
                for (acc, (s, c)) in acc.iter_mut().zip(phases) {
                    for ((s, c), (w, (r, q))) in
                        s.iter_mut().zip(c).zip(wt.iter().zip(rs.iter().zip(&rc)))
                    {
                        let (sg, cg) = (*s, *c);
                        *acc = std::array::from_fn(|l| acc[l] + w[l] * cg[l]);
                        *s = std::array::from_fn(|l| sg[l] * q[l] + cg[l] * r[l]);
                        *c = std::array::from_fn(|l| cg[l] * q[l] - sg[l] * r[l]);
                    }
                }
                for (st, acc) in acc.iter().enumerate() {
                    if let Some(o) = block.get_mut(st * RESEED + i) {
                        *o = 2.0 * a * acc.iter().sum::<f64>();
                    }
                }
            }
        }
    }

    /// ψ̂ on `[−omega_max, omega_max]` as a Chebyshev series, for evaluating it at many
    /// scattered frequencies: a type 3 corrects every target by 1/ψ̂ there, and [`Self::at`]
    /// costs one cosine per quadrature node (about 2w) each time.
    pub fn chebyshev(&self, omega_max: f64) -> EvenChebyshev {
        // ψ̂ is even, so ψ̂(ω_max·x) = g(2x² − 1) with g smooth on [−1, 1]; g is interpolated
        // at the Chebyshev points y_j = cos(πj/N). ψ̂(ω) = Σ wt·cos(ω·a·z) oscillates at most
        // ω_max·a radians across the interval: 8 + ω_max·a terms of g pass that by far more
        // than the Bessel-function decay of the coefficients needs for f64.
        let degree = (8.0 + omega_max.abs() * self.half_width).ceil().max(16.0) as usize;
        let n = degree;
        let g: Vec<f64> = (0..=n)
            .map(|j| {
                let y = (std::f64::consts::PI * j as f64 / n as f64).cos();
                self.at(omega_max * ((1.0 + y) / 2.0).max(0.0).sqrt())
            })
            .collect();
        let coeffs = (0..=n)
            .map(|k| {
                let s: f64 = (0..=n)
                    .map(|j| {
                        let edge = if j == 0 || j == n { 0.5 } else { 1.0 };
                        edge * g[j] * (std::f64::consts::PI * (j * k) as f64 / n as f64).cos()
                    })
                    .sum();
                let edge = if k == 0 || k == n { 0.5 } else { 1.0 };
                edge * 2.0 * s / n as f64
            })
            .collect();
        EvenChebyshev {
            inv_max: if omega_max == 0.0 {
                0.0
            } else {
                1.0 / omega_max
            },
            coeffs,
        }
    }
}

/// An even function on `[−ω_max, ω_max]` as `Σ c_k T_k(2(ω/ω_max)² − 1)`
/// ([`FourierSeries::chebyshev`]).
#[derive(Clone, Debug)]
pub struct EvenChebyshev {
    inv_max: f64,
    coeffs: Vec<f64>,
}

impl EvenChebyshev {
    /// The value at `omega` (Clenshaw's recurrence); meant for `|omega| ≤ ω_max`.
    pub fn eval(&self, omega: f64) -> f64 {
        self.eval_lanes([omega])[0]
    }

    /// The values at `L` frequencies at once. Clenshaw's recurrence is a chain of dependent
    /// multiply–adds, so one evaluation waits on latency; `L` independent chains in step
    /// keep the FMA units busy and vectorise (a type 3 evaluates one per target and dimension).
    pub fn eval_lanes<const L: usize>(&self, omega: [f64; L]) -> [f64; L] {
        let y = omega.map(|o| {
            let x = o * self.inv_max;
            2.0 * x * x - 1.0
        });
        let (mut b1, mut b2) = ([0.0; L], [0.0; L]);
        for &c in self.coeffs[1..].iter().rev() {
            for ((b1, b2), y) in b1.iter_mut().zip(b2.iter_mut()).zip(&y) {
                let b0 = c + 2.0 * y * *b1 - *b2;
                *b2 = *b1;
                *b1 = b0;
            }
        }
        std::array::from_fn(|l| self.coeffs[0] + y[l] * b1[l] - b2[l])
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::params::{KernelKind, Upsampling};

    #[test]
    fn gauss_legendre_integrates_polynomials_exactly() {
        let (x, w) = gauss_legendre(7);
        // Degree 12 is within 2n−1 = 13.
        let s: f64 = x.iter().zip(&w).map(|(x, w)| w * x.powi(12)).sum();
        assert!((s - 2.0 / 13.0).abs() < 1e-14);
        assert!((w.iter().sum::<f64>() - 2.0).abs() < 1e-14);
    }

    #[test]
    fn chebyshev_series_matches_the_quadrature() {
        // Against `at` (itself checked against a Riemann sum below), across kernels, widths
        // and both upsampling factors' passbands. Both sum terms of size ψ̂(0) to values that
        // fall to ~1e-5 of it at the band edge, so they agree to ~1e-13 of ψ̂(0) absolutely,
        // and to ~1e-11 relatively at the edge (the correction 1/ψ̂ needs far less).
        for (kind, w) in [
            (KernelKind::Pswf, 16),
            (KernelKind::Pswf, 7),
            (KernelKind::Es, 11),
            (KernelKind::Pswf, 2),
        ] {
            for sigma in [Upsampling::TWO, Upsampling::FIVE_FOURTHS] {
                let spec = KernelSpec::for_width(kind, w, sigma).unwrap();
                let ft = spec.fourier();
                let omega_max = std::f64::consts::PI / sigma.0;
                let table = ft.chebyshev(omega_max);
                let peak = ft.at(0.0);
                for i in 0..=1000 {
                    let omega = omega_max * (2.0 * i as f64 / 1000.0 - 1.0);
                    let exact = ft.at(omega);
                    let err = (table.eval(omega) - exact).abs();
                    let lanes = table.eval_lanes([omega, 0.0, -omega, omega]);
                    assert_eq!(lanes[0].to_bits(), table.eval(omega).to_bits());
                    assert!((lanes[2] - exact).abs() <= err + 1e-15 * peak);
                    assert!((lanes[1] - peak).abs() < 1e-13 * peak);
                    let at = format!("{kind:?} w={w} σ={} ω={omega}: {err:e}", sigma.0);
                    assert!(err < 1e-13 * peak && err < 1e-10 * exact.abs(), "{at}");
                }
            }
        }
        assert_eq!(
            FourierSeries::new(&KernelSpec::for_width(KernelKind::Es, 7, Upsampling::TWO).unwrap())
                .chebyshev(0.0)
                .eval(0.0)
                .signum(),
            1.0
        );
    }

    #[test]
    fn grid_values_match_direct_evaluation() {
        let spec = KernelSpec::for_width(KernelKind::Es, 9, Upsampling::TWO).unwrap();
        let ft = spec.fourier();
        let n = 3000;
        let mut grid = vec![0.0; 1501];
        ft.on_grid(n, 0, &mut grid);
        // A piece starting mid-table, as parallel callers fill it.
        let mut piece = vec![0.0; 200];
        ft.on_grid(n, 700, &mut piece);
        // Every k: runs of 64 advance four at a time, and the table's end cuts a block short.
        for (k, got) in grid.iter().enumerate() {
            let exact = ft.at(2.0 * std::f64::consts::PI * k as f64 / n as f64);
            assert!((got - exact).abs() < 1e-13 * exact.abs(), "k = {k}");
        }
        for k in 700..900 {
            let exact = ft.at(2.0 * std::f64::consts::PI * k as f64 / n as f64);
            assert!(
                (piece[k - 700] - exact).abs() < 1e-13 * exact.abs(),
                "k = {k}"
            );
        }
    }

    #[test]
    fn fourier_transform_matches_a_riemann_sum() {
        // Independent check: a fine midpoint rule over the support.
        for kind in [KernelKind::Pswf, KernelKind::Es] {
            let spec = KernelSpec::for_width(kind, 7, Upsampling::TWO).unwrap();
            let (ft, shape) = (spec.fourier(), spec.shape());
            let a = spec.half_width();
            for omega in [0.0, 0.3, 1.1, 2.0] {
                let m = 200_000;
                let h = 2.0 * a / m as f64;
                let direct: f64 = (0..m)
                    .map(|i| {
                        let d = -a + (i as f64 + 0.5) * h;
                        shape.eval(d / a) * (omega * d).cos() * h
                    })
                    .sum();
                assert!((ft.at(omega) - direct).abs() < 1e-8 * direct.abs());
            }
        }
    }
}
