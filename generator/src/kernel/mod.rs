//! Spreading kernels: their shape, their piecewise-polynomial fits, and their Fourier series.
//!
//! A kernel lives on the normalised support `z ∈ [-1, 1]`; in grid units it is
//! `ψ(d) = φ(d / α)` with half-width `α = w / 2`, so a point touches `w` grid points.

mod fit;
mod quadrature;

pub use fit::{HornerTable, PiecewisePoly};
pub use quadrature::{gauss_legendre, FourierSeries};

use crate::error::GenError;
use crate::params::{KernelKind, Precision, Upsampling};

/// Smallest and largest window widths the generator emits code for.
pub const MIN_WIDTH: usize = 2;
pub const MAX_WIDTH: usize = 16;

/// One concrete kernel: family, width and shape parameter.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct KernelSpec {
    pub kind: KernelKind,
    /// Number of grid points touched per dimension.
    pub width: usize,
    /// Shape parameter: ES `β` in `exp(β(√(1−z²)−1))`, or Gaussian `β` in `exp(−β z²)`.
    pub beta: f64,
    pub upsampling: Upsampling,
}

impl KernelSpec {
    /// The narrowest kernel that meets relative tolerance `tol`.
    ///
    /// Tolerances below what `precision` can reach are an error rather than a silent clamp:
    /// a caller asking for 1e-9 in f32 has a bug worth hearing about.
    pub fn for_tolerance(
        kind: KernelKind,
        tol: f64,
        sigma: Upsampling,
        precision: Precision,
    ) -> Result<Self, GenError> {
        if !tol.is_finite() || tol <= 0.0 {
            return Err(GenError::Tolerance(tol));
        }
        if tol < precision.min_tolerance() {
            return Err(GenError::ToleranceBelowPrecision {
                tol,
                precision: precision.type_name(),
                floor: precision.min_tolerance(),
            });
        }
        let tol = tol.min(0.5);
        let s = sigma.0;
        let width = match kind {
            KernelKind::Es if s == 2.0 => (10.0 / tol).log10().ceil() as usize,
            // The error falls by e^{π√(1−1/σ)} per point of width. With ln(1/tol) in the
            // numerator (FINUFFT's rule) σ = 1.25 landed about 4× above tol (3.7e-6 and 4.1e-6
            // at 1e-6 on the 2D and 3D type 3 benchmarks); ln(4/tol) adds the missing point.
            KernelKind::Es => {
                ((4.0 / tol).ln() / (std::f64::consts::PI * (1.0 - 1.0 / s).sqrt())).ceil() as usize
            }
            // Greengard–Lee: error ≈ exp(−π m (σ−1)/(σ−½)) for half-width m.
            KernelKind::Gaussian => {
                let m = (1.0 / tol).ln() * (s - 0.5) / (std::f64::consts::PI * (s - 1.0));
                2 * (m.ceil() as usize)
            }
        };
        let width = width.max(MIN_WIDTH);
        if width > MAX_WIDTH {
            return Err(GenError::WidthForTolerance {
                tol,
                needed: width,
                kernel: kind,
                sigma: s,
            });
        }
        Self::for_width(kind, width, sigma)
    }

    /// The kernel of a given width, with the shape parameter tuned for `sigma`.
    pub fn for_width(kind: KernelKind, width: usize, sigma: Upsampling) -> Result<Self, GenError> {
        if !(MIN_WIDTH..=MAX_WIDTH).contains(&width) {
            return Err(GenError::Width(width));
        }
        let w = width as f64;
        let s = sigma.0;
        let beta = match kind {
            KernelKind::Es if s == 2.0 => {
                // FINUFFT's measured optimum per width; narrow kernels want a slightly smaller β.
                let per_w = match width {
                    2 => 2.20,
                    3 => 2.26,
                    4 => 2.38,
                    _ => 2.30,
                };
                per_w * w
            }
            KernelKind::Es => 0.97 * std::f64::consts::PI * (1.0 - 0.5 / s) * w,
            KernelKind::Gaussian => std::f64::consts::PI * (s - 0.5) * (w / 2.0) / s,
        };
        Ok(KernelSpec {
            kind,
            width,
            beta,
            upsampling: sigma,
        })
    }

    /// Evaluates φ(z) on the normalised support; zero outside `|z| ≤ 1`.
    pub fn eval(&self, z: f64) -> f64 {
        if z.abs() > 1.0 {
            return 0.0;
        }
        match self.kind {
            KernelKind::Es => (self.beta * ((1.0 - z * z).sqrt() - 1.0)).exp(),
            KernelKind::Gaussian => (-self.beta * z * z).exp(),
        }
    }

    /// Half-width α = w/2 in grid points.
    pub fn half_width(&self) -> f64 {
        self.width as f64 / 2.0
    }

    /// The relative accuracy this width is designed to deliver (the inverse of the width rule).
    pub fn design_tolerance(&self) -> f64 {
        let w = self.width as f64;
        let s = self.upsampling.0;
        match self.kind {
            KernelKind::Es if s == 2.0 => 10f64.powf(1.0 - w),
            KernelKind::Es => (-(std::f64::consts::PI * (1.0 - 1.0 / s).sqrt()) * w).exp(),
            KernelKind::Gaussian => {
                (-(std::f64::consts::PI * (s - 1.0) / (s - 0.5)) * (w / 2.0)).exp()
            }
        }
    }

    /// Piecewise-polynomial fit, one polynomial per touched grid point, for Horner evaluation.
    pub fn horner(&self) -> PiecewisePoly {
        PiecewisePoly::fit(self)
    }

    /// Fourier transform of the kernel in grid units, for the correction step.
    pub fn fourier(&self) -> FourierSeries {
        FourierSeries::new(self)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn es_width_rule_matches_finufft() {
        let k = KernelSpec::for_tolerance(KernelKind::Es, 1e-6, Upsampling::TWO, Precision::F64)
            .unwrap();
        assert_eq!(k.width, 7);
        assert!((k.beta - 16.1).abs() < 1e-12);
        let k = KernelSpec::for_tolerance(KernelKind::Es, 1e-12, Upsampling::TWO, Precision::F64)
            .unwrap();
        assert_eq!(k.width, 13);
    }

    #[test]
    fn unreachable_tolerances_are_errors() {
        let e = KernelSpec::for_tolerance(KernelKind::Es, 1e-9, Upsampling::TWO, Precision::F32);
        assert!(matches!(e, Err(GenError::ToleranceBelowPrecision { .. })));
        let e =
            KernelSpec::for_tolerance(KernelKind::Gaussian, 1e-12, Upsampling::TWO, Precision::F64);
        assert!(matches!(e, Err(GenError::WidthForTolerance { .. })));
        assert!(KernelSpec::for_width(KernelKind::Es, 17, Upsampling::TWO).is_err());
    }
}
