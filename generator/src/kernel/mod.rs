//! Spreading kernels: their shape, their piecewise-polynomial fits, and their Fourier series.
//!
//! A kernel lives on the normalised support `z ∈ [-1, 1]`; in grid units it is
//! `ψ(d) = φ(d / α)` with half-width `α = w / 2`, so a point touches `w` grid points.

mod fit;
mod pswf;
mod quadrature;

pub use fit::{HornerTable, PiecewisePoly};
pub use pswf::Prolate;
pub use quadrature::{gauss_legendre, EvenChebyshev, FourierSeries};

use crate::error::GenError;
use crate::params::{KernelKind, Precision, Upsampling};
use std::collections::HashMap;
use std::sync::{Arc, Mutex, OnceLock};

/// Smallest and largest window widths the generator emits code for.
pub const MIN_WIDTH: usize = 2;
pub const MAX_WIDTH: usize = 16;

/// One concrete kernel: family, width and shape parameter.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct KernelSpec {
    pub kind: KernelKind,
    /// Number of grid points touched per dimension.
    pub width: usize,
    /// Shape parameter: ES `β` in `exp(β(√(1−z²)−1))`, Gaussian `β` in `exp(−β z²)`, or
    /// the PSWF's bandwidth `c`.
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
        Self::for_split_tolerance(kind, tol, None, sigma, precision)
    }

    /// The narrowest kernel for a type 3 in `dim` dimensions whose caller asked for `tol`:
    /// one that meets the share of `tol` each of its stages and axes gets
    /// ([`crate::plan::type3_stage_tolerance`]). An unreachable width is reported against
    /// `tol`, the tolerance the caller knows, with the share beside it, and the tolerance its
    /// advice names is one to ask for, not a share.
    pub fn for_type3_tolerance(
        kind: KernelKind,
        tol: f64,
        dim: usize,
        sigma: Upsampling,
        precision: Precision,
    ) -> Result<Self, GenError> {
        Self::for_split_tolerance(kind, tol, Some(dim), sigma, precision)
    }

    /// [`Self::for_tolerance`] for the share of `tol` a stage gets: a type 3's in `type3`
    /// dimensions, else all of it.
    fn for_split_tolerance(
        kind: KernelKind,
        tol: f64,
        type3: Option<usize>,
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
        // The share is never below the floor: `type3_stage_tolerance` keeps it above a
        // thousand times the precision's epsilon, or at `tol`.
        let share = |t: f64| {
            type3
                .map_or(t, |dim| {
                    crate::plan::type3_stage_tolerance(t, dim, precision)
                })
                .min(0.5)
        };
        let s = Upsampling::new(sigma.0)?.0;
        let width = width_for(kind, share(tol), s);
        if width > MAX_WIDTH {
            let tol = tol.min(0.5);
            return Err(GenError::WidthForTolerance {
                tol,
                stage: type3.map(|_| share(tol)).filter(|&t| t != tol),
                needed: width,
                kernel: kind,
                sigma: s,
                advice: advice(kind, tol, s, share),
            });
        }
        Self::for_width(kind, width, sigma)
    }

    /// The kernel of a given width, with the shape parameter tuned for `sigma`.
    pub fn for_width(kind: KernelKind, width: usize, sigma: Upsampling) -> Result<Self, GenError> {
        if !(MIN_WIDTH..=MAX_WIDTH).contains(&width) {
            return Err(GenError::Width(width));
        }
        // `Upsampling`'s field is public; every kernel passes through here, so this is the
        // one place a hand-built σ is checked.
        let sigma = Upsampling::new(sigma.0)?;
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
            // The bandwidth that puts the kernel's spectrum edge where the fine grid aliases,
            // less the small shift FINUFFT 2.5 applies (its choice: 16.4 at w = 7, σ = 2).
            KernelKind::Pswf => std::f64::consts::PI * (1.0 - 0.5 / s) * w - 0.05,
            KernelKind::Gaussian => std::f64::consts::PI * (s - 0.5) * (w / 2.0) / s,
        };
        Ok(KernelSpec {
            kind,
            width,
            beta,
            upsampling: sigma,
        })
    }

    /// An evaluator of φ on the normalised support. Build it once and call it many times:
    /// for the PSWF, building it solves a small eigenproblem.
    pub fn shape(&self) -> Shape {
        match self.kind {
            KernelKind::Es => Shape::Es(self.beta),
            KernelKind::Gaussian => Shape::Gaussian(self.beta),
            KernelKind::Pswf => Shape::Pswf(Prolate::new(self.beta)),
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
            KernelKind::Es | KernelKind::Pswf if s == 2.0 => 10f64.powf(1.0 - w),
            KernelKind::Es | KernelKind::Pswf => {
                (-(std::f64::consts::PI * (1.0 - 1.0 / s).sqrt()) * w).exp()
            }
            KernelKind::Gaussian => {
                (-(std::f64::consts::PI * (s - 1.0) / (s - 0.5)) * (w / 2.0)).exp()
            }
        }
    }

    /// Piecewise-polynomial fit, one polynomial per touched grid point, for Horner
    /// evaluation. Fitted once per kernel in a process ([`memoised`]): a fit takes 2–7 ms (it
    /// searches the degree against a fine sample of the kernel), which was most of a small
    /// problem's set-points wherever σ is not 2 and the grid is rebuilt for it (2-D, 10⁴
    /// points: 2.2 ms of a 3.8 ms transform) and of every type 3 set-points, while a
    /// reconstruction loop plans the same kernel again and again.
    pub fn horner(&self) -> Arc<PiecewisePoly> {
        static FITS: Memo<Arc<PiecewisePoly>> = OnceLock::new();
        memoised(&FITS, self, || Arc::new(PiecewisePoly::fit(self)))
    }

    /// Fourier transform of the kernel in grid units, for the correction step. Built once
    /// per kernel in a process ([`memoised`]) and cloned (a few dozen numbers): building it
    /// solves the PSWF's eigenproblem and a Gauss–Legendre rule, 50–100 µs that a plan of
    /// 10⁴ points paid every time.
    pub fn fourier(&self) -> FourierSeries {
        static BUILT: Memo<FourierSeries> = OnceLock::new();
        memoised(&BUILT, self, || FourierSeries::new(self))
    }
}

/// What is built from a kernel, by its kind, width and the bits of β and σ.
type Memo<V> = OnceLock<Mutex<HashMap<(KernelKind, usize, u64, u64), V>>>;

/// Kernels whose builds a [`Memo`] keeps: a process meets a handful (a width per tolerance
/// and σ); the memo is emptied should a sweep over many fill it.
const MEMO_MOST: usize = 256;

/// `build()` for `kernel`, from `memo` or built and kept there. Built outside the lock:
/// threads building one kernel at once all get it right.
fn memoised<V: Clone>(memo: &Memo<V>, kernel: &KernelSpec, build: impl FnOnce() -> V) -> V {
    let key = (
        kernel.kind,
        kernel.width,
        kernel.beta.to_bits(),
        kernel.upsampling.0.to_bits(),
    );
    let memo = memo.get_or_init(Default::default);
    if let Some(v) = memo.lock().unwrap_or_else(|e| e.into_inner()).get(&key) {
        return v.clone();
    }
    let v = build();
    let mut held = memo.lock().unwrap_or_else(|e| e.into_inner());
    if held.len() >= MEMO_MOST {
        held.clear();
    }
    held.entry(key).or_insert(v).clone()
}

/// φ on the normalised support `z ∈ [−1, 1]`, ready to evaluate.
#[derive(Clone, Debug, PartialEq)]
pub enum Shape {
    Es(f64),
    Gaussian(f64),
    Pswf(Prolate),
}

impl Shape {
    /// φ(z); zero outside `|z| ≤ 1`.
    pub fn eval(&self, z: f64) -> f64 {
        if z.abs() > 1.0 {
            return 0.0;
        }
        match self {
            Shape::Es(beta) => (beta * ((1.0 - z * z).sqrt() - 1.0)).exp(),
            Shape::Gaussian(beta) => (-beta * z * z).exp(),
            Shape::Pswf(p) => p.eval(z),
        }
    }
}

/// The width (at least [`MIN_WIDTH`], possibly above [`MAX_WIDTH`]) that kernel `kind` needs
/// for tolerance `tol` (at most 0.5) at upsampling `s`.
fn width_for(kind: KernelKind, tol: f64, s: f64) -> usize {
    let width = match kind {
        KernelKind::Es if s == 2.0 => (10.0 / tol).log10().ceil() as usize,
        // The error falls by e^{π√(1−1/σ)} per point of width. With ln(1/tol) in the
        // numerator (FINUFFT's rule) σ = 1.25 landed about 4× above tol (3.7e-6 and 4.1e-6
        // at 1e-6 on the 2D and 3D type 3 benchmarks); ln(4/tol) adds the missing point.
        KernelKind::Es => {
            ((4.0 / tol).ln() / (std::f64::consts::PI * (1.0 - 1.0 / s).sqrt())).ceil() as usize
        }
        // PSWF at σ = 2: FINUFFT's rule. Below 2, FINUFFT's ln(1/tol) landed just above tol
        // (1.2e-6 at 1e-6, width 10, σ = 1.25, on the 2-D and 3-D type 3 benchmarks), and
        // ln(2/tol) at σ = 1.5 (width 8: 1.1e-6 and 1.6e-6); ln(3/tol) gives 11 and 9,
        // 3.5e-7 and 1.8e-7 (σ = 1.4: 9, 5.9e-7).
        KernelKind::Pswf if s == 2.0 => (10.0 / tol).log10().ceil() as usize,
        KernelKind::Pswf => {
            ((3.0 / tol).ln() / (std::f64::consts::PI * (1.0 - 1.0 / s).sqrt())).ceil() as usize
        }
        // Greengard–Lee: error ≈ exp(−π m (σ−1)/(σ−½)) for half-width m.
        KernelKind::Gaussian => {
            let m = (1.0 / tol).ln() * (s - 0.5) / (std::f64::consts::PI * (s - 1.0));
            2 * (m.ceil() as usize)
        }
    };
    width.max(MIN_WIDTH)
}

/// What would reach `tol` where `kind` at upsampling `s` needs more than [`MAX_WIDTH`] for
/// `share(tol)` (the share of `tol` the kernel is for, which grows with it): the first of
/// the other choices (more upsampling, then the PSWF, the most accurate kernel per point of
/// width) that reaches it, and the smallest tolerance the current choice reaches.
/// Computed rather than fixed, so that the advice never names what is already set.
fn advice(kind: KernelKind, tol: f64, s: f64, share: impl Fn(f64) -> f64) -> String {
    let candidates = [
        (kind, 2.0),
        (kind, 2.5),
        (KernelKind::Pswf, s),
        (KernelKind::Pswf, 2.0),
        (KernelKind::Pswf, 2.5),
    ];
    let reaches = |k, t, sigma| width_for(k, share(t), sigma);
    let other = candidates.iter().find_map(|&(k, sigma)| {
        let w = reaches(k, tol, sigma);
        ((k, sigma) != (kind, s) && w <= MAX_WIDTH).then(|| {
            let with = match (k != kind, sigma != s) {
                (true, true) => format!("the {} kernel at upsampling {sigma}", k.name()),
                (true, false) => format!("the {} kernel", k.name()),
                _ => format!("upsampling {sigma}"),
            };
            format!("{with} reaches it at width {w}, or ")
        })
    });
    // The width falls as the tolerance grows: bisect (in log scale) for the smallest
    // tolerance this kernel and σ reach, then round it up to two significant digits.
    let (mut lo, mut hi) = (tol.ln(), 0.5f64.ln());
    for _ in 0..60 {
        let mid = 0.5 * (lo + hi);
        if reaches(kind, mid.exp(), s) > MAX_WIDTH {
            lo = mid;
        } else {
            hi = mid;
        }
    }
    let reach = hi.exp();
    let unit = 10f64.powf(reach.log10().floor() - 1.0);
    let mut digits = (reach / unit).ceil();
    // The printed value, not the computed one, must reach: step up past any rounding.
    let shown = loop {
        let text = format!("{:.1e}", digits * unit);
        if text.parse().is_ok_and(|t| reaches(kind, t, s) <= MAX_WIDTH) {
            break text;
        }
        digits += 1.0;
    };
    format!(
        "{}ask for a tolerance of at least {shown}",
        other.unwrap_or_default()
    )
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
    fn pswf_rules_match_finufft() {
        // FINUFFT 2.5 (spread_debug output): w = 7, c = 16.4 at 1e-6 and σ = 2; c = 18.8 at
        // w = 10 and σ = 1.25, where nudt takes one point more at 1e-6.
        let k = KernelSpec::for_tolerance(KernelKind::Pswf, 1e-6, Upsampling::TWO, Precision::F64)
            .unwrap();
        assert_eq!(k.width, 7);
        assert!((k.beta - 16.4).abs() < 0.05, "c = {}", k.beta);
        let k = KernelSpec::for_tolerance(
            KernelKind::Pswf,
            1e-6,
            Upsampling::FIVE_FOURTHS,
            Precision::F64,
        )
        .unwrap();
        assert_eq!(k.width, 11);
        let k = KernelSpec::for_width(KernelKind::Pswf, 10, Upsampling::FIVE_FOURTHS).unwrap();
        assert!((k.beta - 18.8).abs() < 0.05, "c = {}", k.beta);
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

    /// A type 3's unreachable width names the tolerance the caller asked for (the width
    /// was sought for its share, 1e-9 / 9 in 3-D, which the caller never wrote), and the
    /// tolerance its advice names is one to ask for: it reaches, and a sixth less does not.
    #[test]
    fn type3_width_errors_name_the_tolerance_asked_for() {
        let t3 = |tol| {
            KernelSpec::for_type3_tolerance(
                KernelKind::Pswf,
                tol,
                3,
                Upsampling::FIVE_FOURTHS,
                Precision::F64,
            )
        };
        let e = t3(1e-9).unwrap_err();
        let m = e.to_string();
        assert!(matches!(e, GenError::WidthForTolerance { tol, .. } if tol == 1e-9));
        assert!(m.starts_with("tolerance 1e-9 needs width"), "{m}");
        assert!(m.contains("two stages and its axes: 1.1e-10 each"), "{m}");
        let reach: f64 = m.rsplit(' ').next().unwrap().parse().unwrap();
        assert!(t3(reach).is_ok(), "{m}");
        assert!(t3(reach / 1.2).is_err(), "{m}");
        // Types 1 and 2 keep the tolerance whole, and their message says nothing of a split.
        let m =
            KernelSpec::for_tolerance(KernelKind::Pswf, 1e-14, Upsampling(1.25), Precision::F64)
                .unwrap_err()
                .to_string();
        assert!(!m.contains("splits"), "{m}");
    }

    /// The advice of an unreachable width names only what would change something, and every
    /// alternative it names does reach the tolerance.
    #[test]
    fn width_advice_is_what_would_help() {
        let message = |kind, tol, sigma| {
            KernelSpec::for_tolerance(kind, tol, Upsampling(sigma), Precision::F64)
                .unwrap_err()
                .to_string()
        };
        // Already σ = 2: more upsampling or the PSWF helps, never "use upsampling 2".
        let m = message(KernelKind::Gaussian, 1e-12, 2.0);
        assert!(m.contains("Gaussian kernel"), "{m}");
        assert!(!m.contains("upsampling 2 "), "{m}");
        assert!(m.contains("the PSWF kernel reaches it at width 13"), "{m}");
        // PSWF at σ = 1.25: σ = 2 reaches 1e-14 at width 15; the kernel is already the best.
        let m = message(KernelKind::Pswf, 1e-14, 1.25);
        assert!(m.contains("upsampling 2 reaches it at width 15"), "{m}");
        assert!(!m.contains("PSWF kernel reaches"), "{m}");
        // ES at σ = 1.25: σ = 2 is named, not "the ES kernel".
        let m = message(KernelKind::Es, 1e-14, 1.25);
        assert!(m.contains("upsampling 2 reaches it"), "{m}");
        assert!(!m.contains("the ES kernel reaches"), "{m}");
        // The tolerance named as reachable is reached, at the width limit or below.
        let reach: f64 = m.rsplit(' ').next().unwrap().parse().unwrap();
        let k = KernelSpec::for_tolerance(KernelKind::Es, reach, Upsampling(1.25), Precision::F64);
        assert!(k.is_ok_and(|k| k.width <= MAX_WIDTH), "{m}");
        assert!(
            width_for(KernelKind::Es, reach / 1.2, 1.25) > MAX_WIDTH,
            "{m}"
        );
        for bad in [0.5, -2.0, 1.0, 1.2, 2.6, f64::NAN, f64::INFINITY] {
            let e =
                KernelSpec::for_tolerance(KernelKind::Pswf, 1e-6, Upsampling(bad), Precision::F64);
            assert!(matches!(e, Err(GenError::Upsampling(_))), "σ = {bad}");
            let e = KernelSpec::for_width(KernelKind::Es, 7, Upsampling(bad));
            assert!(matches!(e, Err(GenError::Upsampling(_))), "σ = {bad}");
        }
    }
}
