//! Type 3's device-side preparation, once for CUDA and OpenCL: the bounding boxes a type 3
//! plans its grids from (with the check for non-finite coordinates they give for free), and
//! the common module's two kernels that rescale the sources and targets and compute their
//! phase factors — for FINUFFT's scheme and, for the sources, the Gaussian gridding's.

use super::device::{f64s, Arg, Device};
use crate::error::NudtError;
use crate::float::Float;
use crate::planner::type3::Geometry;
use crate::planner::validate::{check_finite, extent_non_finite, SOURCES, TARGETS};
use nudt_gen::KernelSpec;

pub(crate) use crate::planner::type3::Boxes;

/// Where a backend reduces a coordinate array to its bounding interval: the array, its first
/// element and the number of elements from there (one point set of several).
pub(crate) type Span<M> = (M, usize, usize);

/// Each pair of point sets' bounding intervals per dimension, the sources' then the
/// targets', from `arrays` (the `dim` source arrays, then the `dim` target arrays, each set
/// after set: sources from `starts[0]`, targets from `starts[1]`) by the backend's
/// `reduce` of the spans it is given (`nudt_minmax` over each, all queued before one read).
/// An interval that is not finite shows a non-finite value: its array is read back to name
/// the first one in the typed error, inside [`NudtError::InTransform`] naming its set where
/// there are several.
pub(crate) fn set_bounds<T: Float, D: Device<T>>(
    dev: &D,
    arrays: &[D::Mem],
    starts: [&[u32]; 2],
    reduce: impl FnOnce(&[Span<D::Mem>]) -> Result<Boxes, D::Error>,
) -> Result<Vec<(Boxes, Boxes)>, D::Error> {
    let dim = arrays.len() / 2;
    let nsets = starts[0].len() - 1;
    let span = |b: usize, a: usize| {
        let at = starts[a / dim];
        (arrays[a], at[b] as usize, (at[b + 1] - at[b]) as usize)
    };
    let spans: Vec<_> = (0..nsets)
        .flat_map(|b| (0..2 * dim).map(move |a| (b, a)))
        .map(|(b, a)| span(b, a))
        .collect();
    let boxes = reduce(&spans)?;
    let names: Vec<_> = SOURCES[..dim].iter().chain(&TARGETS[..dim]).collect();
    let mut out = Vec::with_capacity(nsets);
    for (b, set) in boxes.chunks(2 * dim).enumerate() {
        for (a, &interval) in set.iter().enumerate() {
            if extent_non_finite(interval) {
                let (x, first, n) = span(b, a);
                let v = dev.read(x, first + n)?;
                check_finite(names[a], &v[first..]).map_err(|error| match nsets {
                    1 => error,
                    _ => NudtError::InTransform {
                        index: b,
                        error: Box::new(error),
                    },
                })?;
            }
        }
        out.push((set[..dim].to_vec(), set[dim..].to_vec()));
    }
    Ok(out)
}

/// The rescaled points and phase factors of a type 3's point sets (one pair, or a pair per
/// transform, set after set): each source `x` at `y = (x − c_x)/γ` on the outer grid with
/// its pre-phase, each target `s` at `u = h γ (s − c_s)` for the inner type 2 with its
/// post-factor (phase over the kernel's transform), by its own pair's geometry.
pub(crate) struct Type3Points<B> {
    pub y: Vec<B>,
    pub u: Vec<B>,
    pub pre: B,
    pub post: B,
    /// Where each pair's sources and targets start, then their totals (`[0, m]`, `[0, k]`
    /// for one pair that every transform shares).
    pub starts: [Vec<u32>; 2],
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
            starts: [vec![0, 0], vec![0, 0]],
        })
    }

    /// Reals of the phased inputs a batch of `batch` transforms holds at most: the forward's
    /// at the sources, the adjoint's at the targets.
    pub fn phased_len(&self, adjoint: bool, batch: usize) -> usize {
        2 * crate::planner::sets::batch_points(&self.starts[usize::from(adjoint)], batch)
    }

    /// Rescales the sources at `x` and the targets at `s` (one array per dimension each,
    /// pair after pair from `starts`: sources', targets') for each pair's geometry
    /// (`geometries[b]`) and computes their factors for `kernel` (whose quadrature is `quad`)
    /// and sign `isign`, by the common module's `kernels` (sources, targets), one launch of
    /// each a pair; the arrays are grown where the sets grew.
    #[allow(clippy::too_many_arguments)]
    pub fn prepare<T, D: Device<T, Buf = B>>(
        &mut self,
        dev: &D,
        kernels: (&D::Kernel, &D::Kernel),
        geometries: &[Geometry],
        kernel: &KernelSpec,
        quad: &Quadrature<D::Mem>,
        (x, s): ([D::Mem; 3], [D::Mem; 3]),
        starts: [&[u32]; 2],
        isign: i32,
    ) -> Result<(), D::Error> {
        let dim = geometries.first().map_or(1, |g| g.inner.len());
        let total = |at: &[u32]| at.last().map_or(0, |&n| n as usize);
        let (m, k) = (total(starts[0]), total(starts[1]));
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
        self.starts = starts.map(<[u32]>::to_vec);
        let (y, u) = (dev.mem3(&self.y), dev.mem3(&self.u));
        let (pre, post) = (dev.mem(Some(&self.pre)), dev.mem(Some(&self.post)));
        for (b, geometry) in geometries.iter().enumerate() {
            let span = |at: &[u32]| (at[b] as usize, (at[b + 1] - at[b]) as usize);
            let cx = geometry.per_axis(|a| a.cx, 0.0);
            let cs = geometry.per_axis(|a| a.cs, 0.0);
            let inv_gamma = geometry.per_axis(|a| a.inv_gamma, 0.0);
            let h_gamma = geometry.per_axis(|a| a.h_gamma, 0.0);
            let (first, m) = span(starts[0]);
            let frame = [cx, inv_gamma, cs];
            scale_sources(dev, kernels.0, (dim, first, m), x, frame, isign, (y, pre))?;
            let (first, k) = span(starts[1]);
            if k > 0 {
                let mut args = vec![Arg::U64(first as u64), Arg::U32(k as u32)];
                args.push(Arg::I32(dim as i32));
                args.extend(s.map(Arg::Mem));
                args.extend([f64s(cs), f64s(h_gamma), f64s(cx)].concat());
                args.extend([
                    Arg::F64(isign.signum() as f64),
                    Arg::I32(quad.len as i32),
                    Arg::Mem(quad.nodes),
                    Arg::Mem(quad.weights),
                    Arg::F64(kernel.half_width()),
                ]);
                args.extend(u.map(Arg::Mem));
                args.push(Arg::Mem(post));
                dev.launch(kernels.1, k, 1, &args)?;
            }
        }
        Ok(())
    }
}

/// The common module's source kernel on the `m` sources from `first` at `x` (`dim` arrays,
/// written at the same places of `y` and `pre`): `y_d = (x_d −
/// c_d)·scale_d` into `y` and the pre-phase `e^{±i Σ_d s_d (x_d − c_d)}` into `pre`, for
/// `[c, scale, s]` per dimension and the sign of `isign`. FINUFFT's type 3 scales by `1/γ`,
/// the Gaussian gridding by its `Δs`.
pub(crate) fn scale_sources<T, D: Device<T>>(
    dev: &D,
    kernel: &D::Kernel,
    (dim, first, m): (usize, usize, usize),
    x: [D::Mem; 3],
    [centre, scale, shift]: [[f64; 3]; 3],
    isign: i32,
    (y, pre): ([D::Mem; 3], D::Mem),
) -> Result<(), D::Error> {
    if m == 0 {
        return Ok(());
    }
    let mut args = vec![
        Arg::U64(first as u64),
        Arg::U32(m as u32),
        Arg::I32(dim as i32),
    ];
    args.extend(x.map(Arg::Mem));
    args.extend([f64s(centre), f64s(scale), f64s(shift)].concat());
    args.push(Arg::F64(isign.signum() as f64));
    args.extend(y.map(Arg::Mem));
    args.push(Arg::Mem(pre));
    dev.launch(kernel, m, 1, &args)
}
