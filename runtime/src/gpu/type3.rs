//! Type 3's device-side preparation, once for CUDA and OpenCL: the bounding boxes a type 3
//! plans its grids from (with the check for non-finite coordinates they give for free), and
//! the common module's two kernels that rescale the sources and targets and compute their
//! phase factors — for FINUFFT's scheme and, for the sources, the Gaussian gridding's.

use super::device::{f64s, Arg, Device};
use crate::float::Float;
use crate::planner::type3::Geometry;
use crate::planner::validate::{check_finite, extent_non_finite, SOURCES, TARGETS};
use nudt_gen::KernelSpec;

/// Bounding intervals `(lo, hi)`, one per dimension (`lo > hi` for no points).
pub(crate) type Boxes = Vec<(f64, f64)>;

/// The sources' and targets' bounding intervals per dimension, from `boxes` (the backend's
/// reduction of each of `arrays`: the `dim` source arrays, then the `dim` target arrays,
/// each a handle and its length). An interval that is not finite shows a non-finite value:
/// its array is read back to name the first one in the typed error.
pub(crate) fn checked_bounds<T: Float, D: Device<T>>(
    dev: &D,
    arrays: &[(D::Mem, usize)],
    mut boxes: Boxes,
) -> Result<(Boxes, Boxes), D::Error> {
    let dim = arrays.len() / 2;
    let names = SOURCES[..dim].iter().chain(&TARGETS[..dim]);
    for ((&(x, n), &b), &name) in arrays.iter().zip(&boxes).zip(names) {
        if extent_non_finite(b) {
            check_finite(name, &dev.read(x, n)?)?;
        }
    }
    let targets = boxes.split_off(dim);
    Ok((boxes, targets))
}

/// The rescaled points and phase factors of one pair of point sets: each source `x` at
/// `y = (x − c_x)/γ` on the outer grid with its pre-phase, each target `s` at `u = h γ (s −
/// c_s)` for the inner type 2 with its post-factor (phase over the kernel's transform).
pub(crate) struct Type3Points<B> {
    pub y: Vec<B>,
    pub u: Vec<B>,
    pub pre: B,
    pub post: B,
}

/// The kernel's Fourier quadrature (nodes, weights) on the device, for the post-factors.
pub(crate) struct Quadrature<M> {
    pub len: usize,
    pub nodes: M,
    pub weights: M,
}

impl<B> Type3Points<B> {
    /// Empty arrays, grown by [`Self::prepare`].
    pub fn new<T, D: Device<T, Buf = B>>(dev: &D) -> Result<Self, D::Error> {
        Ok(Type3Points {
            y: Vec::new(),
            u: Vec::new(),
            pre: dev.alloc(1, "type 3 pre-phases")?,
            post: dev.alloc(1, "type 3 post-factors")?,
        })
    }

    /// Rescales the `m` sources at `x` and the `k` targets at `s` (one array per dimension
    /// each) for `geometry` and computes their factors for `kernel` (whose quadrature is
    /// `quad`) and sign `isign`, by the common module's `kernels` (sources, targets); the
    /// arrays are grown where the sets grew.
    #[allow(clippy::too_many_arguments)]
    pub fn prepare<T, D: Device<T, Buf = B>>(
        &mut self,
        dev: &D,
        kernels: (&D::Kernel, &D::Kernel),
        geometry: &Geometry,
        kernel: &KernelSpec,
        quad: &Quadrature<D::Mem>,
        (x, s): ([D::Mem; 3], [D::Mem; 3]),
        (m, k): (usize, usize),
        isign: i32,
    ) -> Result<(), D::Error> {
        let dim = geometry.inner.len();
        let each = |v: &mut Vec<B>, len: usize, what: &str| -> Result<(), D::Error> {
            if v.len() != dim || v.first().is_some_and(|b| dev.holds(b) < len.max(1)) {
                v.clear();
                for _ in 0..dim {
                    v.push(dev.alloc(len, what)?);
                }
            }
            Ok(())
        };
        each(&mut self.y, m, "rescaled sources")?;
        each(&mut self.u, k, "rescaled targets")?;
        dev.grow(&mut self.pre, 2 * m, "type 3 pre-phases")?;
        dev.grow(&mut self.post, 2 * k, "type 3 post-factors")?;
        let cx = geometry.per_axis(|a| a.cx, 0.0);
        let cs = geometry.per_axis(|a| a.cs, 0.0);
        let inv_gamma = geometry.per_axis(|a| a.inv_gamma, 0.0);
        let h_gamma = geometry.per_axis(|a| a.h_gamma, 0.0);
        let y = dev.mem3(&self.y);
        let pre = dev.mem(Some(&self.pre));
        scale_sources(
            dev,
            kernels.0,
            (dim, m),
            x,
            [cx, inv_gamma, cs],
            isign,
            (y, pre),
        )?;
        if k > 0 {
            let mut args = vec![Arg::U32(k as u32), Arg::I32(dim as i32)];
            args.extend(s.map(Arg::Mem));
            args.extend([f64s(cs), f64s(h_gamma), f64s(cx)].concat());
            args.extend([
                Arg::F64(isign.signum() as f64),
                Arg::I32(quad.len as i32),
                Arg::Mem(quad.nodes),
                Arg::Mem(quad.weights),
                Arg::F64(kernel.half_width()),
            ]);
            args.extend(dev.mem3(&self.u).map(Arg::Mem));
            args.push(Arg::Mem(dev.mem(Some(&self.post))));
            dev.launch(kernels.1, k, 1, &args)?;
        }
        Ok(())
    }
}

/// The common module's source kernel on the `m` sources at `x` (`dim` arrays): `y_d = (x_d −
/// c_d)·scale_d` into `y` and the pre-phase `e^{±i Σ_d s_d (x_d − c_d)}` into `pre`, for
/// `[c, scale, s]` per dimension and the sign of `isign`. FINUFFT's type 3 scales by `1/γ`,
/// the Gaussian gridding by its `Δs`.
pub(crate) fn scale_sources<T, D: Device<T>>(
    dev: &D,
    kernel: &D::Kernel,
    (dim, m): (usize, usize),
    x: [D::Mem; 3],
    [centre, scale, shift]: [[f64; 3]; 3],
    isign: i32,
    (y, pre): ([D::Mem; 3], D::Mem),
) -> Result<(), D::Error> {
    if m == 0 {
        return Ok(());
    }
    let mut args = vec![Arg::U32(m as u32), Arg::I32(dim as i32)];
    args.extend(x.map(Arg::Mem));
    args.extend([f64s(centre), f64s(scale), f64s(shift)].concat());
    args.push(Arg::F64(isign.signum() as f64));
    args.extend(y.map(Arg::Mem));
    args.push(Arg::Mem(pre));
    dev.launch(kernel, m, 1, &args)
}
