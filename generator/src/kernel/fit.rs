//! Piecewise-polynomial fits of a kernel, evaluated by Horner's rule in generated code.
//!
//! A point at grid coordinate `x` touches grid points `i0 .. i0 + w` with `i0 = ⌈x − w/2⌉`.
//! With `t = 2(i0 − x + w/2) − 1 ∈ [−1, 1)`, the weight on grid point `i0 + j` is
//! `φ((i0 + j − x)/α) = p_j(t)`, one polynomial per `j`. Evaluating all `w` of them at once
//! is `nc` fused multiply–adds over a `w`-vector, which vectorises, and never calls `exp`.

use super::{KernelSpec, Shape};

/// Coefficients of the `w` polynomials, highest degree first: `coeffs[k][j]`.
#[derive(Clone, Debug, PartialEq)]
pub struct PiecewisePoly {
    pub width: usize,
    pub coeffs: Vec<Vec<f64>>,
    /// Largest deviation from the kernel seen on a fine sample of the support.
    pub max_error: f64,
}

/// A Horner table flattened for templates: `nc` rows of `w` literals.
pub type HornerTable = Vec<Vec<String>>;

impl PiecewisePoly {
    /// Fits the smallest degree (≥ w) whose error is a tenth of the kernel's design
    /// tolerance, or else the most accurate degree tried. (The ES kernel's square-root edge
    /// limits polynomial fits to a few percent of its edge value, e^{−β}, whatever the degree.)
    pub fn fit(spec: &KernelSpec) -> Self {
        let target = spec.design_tolerance() * 0.1 + 1e-15;
        let w = spec.width;
        let shape = spec.shape();
        let mut best: Option<Self> = None;
        for nc in (w + 1)..=(w + 8) {
            let p = Self::fit_degree(spec, &shape, nc);
            if p.max_error <= target {
                return p;
            }
            if best.as_ref().is_none_or(|b| p.max_error < b.max_error) {
                best = Some(p);
            }
        }
        best.expect("at least one degree is tried")
    }

    /// Chebyshev interpolation at `nc` nodes, converted to monomial coefficients in `t`.
    fn fit_degree(spec: &KernelSpec, shape: &Shape, nc: usize) -> Self {
        let w = spec.width;
        // One polynomial per grid offset, lowest degree first...
        let per_offset: Vec<Vec<f64>> = (0..w)
            .map(|j| {
                chebyshev_to_monomial(&chebyshev_coefficients(
                    |t| shape.eval(offset(spec, j, t)),
                    nc,
                ))
            })
            .collect();
        // ...stored as rows of one degree each, highest degree first.
        let coeffs = (0..nc)
            .rev()
            .map(|k| per_offset.iter().map(|p| p[k]).collect())
            .collect();
        let mut p = PiecewisePoly {
            width: w,
            coeffs,
            max_error: 0.0,
        };
        p.max_error = p.deviation(spec, shape);
        p
    }

    /// Number of coefficients per polynomial (degree + 1).
    pub fn nc(&self) -> usize {
        self.coeffs.len()
    }

    /// Evaluates all `w` weights at `t` — the same arithmetic the generated code does.
    pub fn eval(&self, t: f64) -> Vec<f64> {
        let mut r = self.coeffs[0].clone();
        for row in &self.coeffs[1..] {
            for (rj, cj) in r.iter_mut().zip(row) {
                *rj = *rj * t + cj;
            }
        }
        r
    }

    /// The derivatives in `t` of the `w` polynomials, as Horner rows like `coeffs` (highest
    /// degree first, one row fewer): each row times its degree. The GPU gradient kernels bake
    /// these beside the kernel's rows, so the derivative they evaluate is exactly that of the
    /// polynomials the kernels evaluate (not of the kernel they fit), and spreading with the
    /// derivative is the transpose of interpolating with it. The CPU derives the same rows
    /// from its tables (`support::derivative_table`).
    pub fn derivative(&self) -> Vec<Vec<f64>> {
        let degree = self.nc() - 1;
        self.coeffs[..degree]
            .iter()
            .enumerate()
            .map(|(k, row)| row.iter().map(|&c| c * (degree - k) as f64).collect())
            .collect()
    }

    /// Largest absolute deviation from the kernel (`spec`, evaluated by `shape`) over a fine
    /// sample of `t ∈ [−1, 1]`.
    fn deviation(&self, spec: &KernelSpec, shape: &Shape) -> f64 {
        let samples = 400;
        let mut worst: f64 = 0.0;
        for s in 0..=samples {
            let t = -1.0 + 2.0 * s as f64 / samples as f64;
            for (j, v) in self.eval(t).iter().enumerate() {
                worst = worst.max((v - shape.eval(offset(spec, j, t))).abs());
            }
        }
        worst
    }

    /// The coefficients as literals of the given scalar type, for templates.
    pub fn literals(&self, ty: &str) -> HornerTable {
        self.coeffs
            .iter()
            .map(|row| {
                row.iter()
                    .map(|&c| match ty {
                        // Shortest literal that round-trips in the target type.
                        "f32" => format!("{:e}_f32", c as f32),
                        _ => format!("{c:e}_{ty}"),
                    })
                    .collect()
            })
            .collect()
    }
}

/// Normalised kernel argument of grid point `j` for Horner variable `t`.
fn offset(spec: &KernelSpec, j: usize, t: f64) -> f64 {
    let a = spec.half_width();
    let u = (t + 1.0) / 2.0; // i0 − x + α
    (u - a + j as f64) / a
}

fn chebyshev_coefficients(f: impl Fn(f64) -> f64, n: usize) -> Vec<f64> {
    let pi = std::f64::consts::PI;
    let values: Vec<f64> = (0..n)
        .map(|m| f((pi * (m as f64 + 0.5) / n as f64).cos()))
        .collect();
    (0..n)
        .map(|k| {
            let s: f64 = values
                .iter()
                .enumerate()
                .map(|(m, v)| v * (pi * k as f64 * (m as f64 + 0.5) / n as f64).cos())
                .sum();
            let scale = if k == 0 { 1.0 } else { 2.0 };
            scale * s / n as f64
        })
        .collect()
}

/// Σ a_k T_k(t) as monomial coefficients, lowest degree first.
fn chebyshev_to_monomial(a: &[f64]) -> Vec<f64> {
    let n = a.len();
    let mut out = vec![0.0; n];
    let mut prev = vec![0.0; n]; // T_{k-1}
    let mut cur = vec![0.0; n]; // T_k
    prev[0] = 1.0;
    if n > 1 {
        cur[1] = 1.0;
    }
    out[0] += a[0];
    if n > 1 {
        out[1] += a[1];
    }
    for ak in a.iter().skip(2) {
        let mut next = vec![0.0; n];
        for i in 0..n - 1 {
            next[i + 1] += 2.0 * cur[i];
        }
        for i in 0..n {
            next[i] -= prev[i];
        }
        for i in 0..n {
            out[i] += ak * next[i];
        }
        prev = cur;
        cur = next;
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::params::{KernelKind, Upsampling};

    #[test]
    fn fit_error_is_far_below_the_tolerance_it_serves() {
        for kind in [KernelKind::Pswf, KernelKind::Es, KernelKind::Gaussian] {
            for sigma in [Upsampling::TWO, Upsampling::FIVE_FOURTHS] {
                for w in 2..=16 {
                    let spec = KernelSpec::for_width(kind, w, sigma).unwrap();
                    let p = spec.horner();
                    let err = p.max_error;
                    let served = spec.design_tolerance().max(1e-15);
                    assert!(
                        err < 0.12 * served + 2e-14,
                        "{kind:?} σ={} w={w}: fit error {err:e} vs tolerance {served:e}",
                        sigma.0
                    );
                }
            }
        }
    }

    /// The derivative rows, evaluated by Horner's rule, are the difference quotients of the
    /// fitted polynomials.
    #[test]
    fn derivative_rows_differentiate_the_fit() {
        for kind in [KernelKind::Pswf, KernelKind::Es, KernelKind::Gaussian] {
            for w in [2, 7, 16] {
                let p = KernelSpec::for_width(kind, w, Upsampling::TWO)
                    .unwrap()
                    .horner();
                let rows = p.derivative();
                assert_eq!(rows.len(), p.nc() - 1);
                let h = 1e-6;
                for t in [-0.9, -0.3, 0.0, 0.45, 0.8] {
                    let mut d = rows[0].clone();
                    for row in &rows[1..] {
                        for (dj, cj) in d.iter_mut().zip(row) {
                            *dj = *dj * t + cj;
                        }
                    }
                    let (hi, lo) = (p.eval(t + h), p.eval(t - h));
                    for j in 0..w {
                        let quotient = (hi[j] - lo[j]) / (2.0 * h);
                        assert!(
                            (d[j] - quotient).abs() < 1e-6 * (1.0 + quotient.abs()),
                            "{kind:?} w={w} t={t} j={j}: {} vs {quotient}",
                            d[j]
                        );
                    }
                }
            }
        }
    }

    #[test]
    fn degrees_stay_near_the_width() {
        let spec = KernelSpec::for_width(KernelKind::Es, 7, Upsampling::TWO).unwrap();
        let nc = spec.horner().nc();
        assert!((8..=11).contains(&nc), "nc = {nc}");
    }

    #[test]
    fn weights_at_a_grid_point_are_the_kernel_at_integer_offsets() {
        // Independent check of the offset convention: at t = 1 (x on a grid point) the
        // weights are φ at integer offsets j + 1 − α.
        for kind in [KernelKind::Pswf, KernelKind::Es] {
            let spec = KernelSpec::for_width(kind, 8, Upsampling::TWO).unwrap();
            let shape = spec.shape();
            for (j, v) in spec.horner().eval(1.0).iter().enumerate() {
                let exact = shape.eval((j as f64 + 1.0 - 4.0) / 4.0);
                assert!(
                    (v - exact).abs() < 0.12 * spec.design_tolerance(),
                    "{kind:?} j={j}: {v} vs {exact}"
                );
            }
        }
    }
}
