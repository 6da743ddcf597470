//! The OpenCL backend's device state ([`ClDev`]: the device, the common program, its
//! kernels, the plan's input and output buffers) and the device halves of the shared plan's
//! steps ([`Backend`]): programs built for the device, grids and generated FFTs, uploads,
//! the bin sort, bounding boxes, type 3's preparation and the Gaussian type 3's.

use super::device::ClDevice;
use super::engine::{uniform_dev, Type3Dev, UniformDev};
use super::error::{OpenClError, OpenClResult};
use super::fft::ClFloat;
use super::gaussian::{GaussDev, GaussWindow};
use super::grid::{ClModes, ClSpreadModule, FineGrid};
use super::launch::{alloc, enqueue, mem, read, share, upload, Arg, Kernel};
use crate::error::NudtError;
use crate::gpu::device::Device;
use crate::gpu::engine::Type3;
use crate::gpu::plan::{Backend, ModuleChoice};
use crate::gpu::type3::{checked_bounds, Boxes, Quadrature, Type3Points};
use crate::planner::gaussian::GaussGeometry;
use crate::planner::sets;
use crate::planner::stages;
use crate::planner::type3::Geometry;
use crate::uniform::ModeOrder;
use nudt_gen::gpu::{fourier_quadrature, GridRole, ELEMENT_THREADS, MINMAX_BLOCKS};
use nudt_gen::KernelSpec;
use opencl3::memory::{Buffer, ClMem};
use opencl3::program::Program;
use std::sync::Arc;

/// What a type 3 plan needs besides the spread modules: the extents' and the phase kernels.
pub(crate) struct Type3Kernels {
    pub minmax: Kernel,
    pub sources: Kernel,
    pub targets: Kernel,
}

/// What a type 3's grids need for one kernel (chosen from the last point sets' extents): the
/// outer and inner grids' spread modules and the kernel's Fourier quadrature (nodes,
/// weights) for the post-factors.
pub(crate) struct Type3Modules {
    outer: ClSpreadModule,
    inner: ClSpreadModule,
    qz: Buffer<f64>,
    qw: Buffer<f64>,
    nq: usize,
}

/// An OpenCL plan's device state; the common program and the device are dropped last.
pub struct ClDev<T: ClFloat> {
    /// The complex multiply of the type 3 phases.
    pub(super) cmul: Kernel,
    /// Type 3 plans' kernels of the common program.
    pub(super) t3: Option<Type3Kernels>,
    /// Device copies of one batch's inputs and outputs.
    pub(super) io: Option<(Buffer<T>, Buffer<T>)>,
    pub(super) common: Arc<Program>,
    pub(super) dev: Arc<ClDevice>,
}

impl<T: ClFloat> ClDev<T> {
    fn t3(&self) -> &Type3Kernels {
        self.t3.as_ref().expect("type 3 plans have their kernels")
    }
}

/// Per-dimension sizes padded with ones to three dimensions, as the kernels take them.
pub(super) fn pad3(v: &[usize]) -> [usize; 3] {
    std::array::from_fn(|d| v.get(d).copied().unwrap_or(1))
}

/// Bounding interval `(lo, hi)` of each device array of `n` coordinates, by the min/max
/// kernel: one partial per work-group, finished here (`lo > hi` for an empty array).
fn extents<T>(
    dev: &ClDevice,
    minmax: &Kernel,
    arrays: &[(&Buffer<T>, usize)],
) -> OpenClResult<Boxes> {
    let group = ELEMENT_THREADS as usize;
    arrays
        .iter()
        .map(|&(x, n)| {
            if n == 0 {
                return Ok((f64::INFINITY, f64::NEG_INFINITY));
            }
            let groups = n.div_ceil(group).min(MINMAX_BLOCKS as usize);
            let part = alloc::<f64>(dev, 2 * groups)?;
            let args = [Arg::U64(n as u64), mem(x), mem(&part)];
            enqueue(dev, minmax, groups * group, group, 1, &args)?;
            let mut host = vec![0.0f64; 2 * groups];
            read(dev, &part, &mut host)?;
            Ok(host
                .chunks(2)
                .fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), v| {
                    (lo.min(v[0]), hi.max(v[1]))
                }))
        })
        .collect()
}

/// Other owners of `v`'s buffers, which a sort keeps reading.
fn shared<T>(v: &[Buffer<T>]) -> OpenClResult<Vec<Buffer<T>>> {
    v.iter().map(share).collect()
}

impl<T: ClFloat> Backend<T> for ClDev<T> {
    type Error = OpenClError;
    type Module = ClSpreadModule;
    type Type3Modules = Type3Modules;
    type Grid = FineGrid<T>;
    type Modes = ClModes<T>;
    type Buf = Buffer<T>;
    type Gauss = GaussDev<T>;
    type Window = GaussWindow;
    type Points = Vec<Buffer<T>>;
    const NAME: &'static str = "opencl";
    const PLAN: &'static str = "ClPlan";

    fn module(
        &self,
        dim: usize,
        kernel: KernelSpec,
        role: GridRole,
        c: ModuleChoice,
    ) -> OpenClResult<ClSpreadModule> {
        let want = [c.spread, c.interp];
        ClSpreadModule::new(&self.dev, dim, kernel, T::PRECISION, role, c.bins, want)
    }

    fn uniform(
        &self,
        module: &ClSpreadModule,
        (modes, n): (&[usize], &[usize]),
        _kernel: KernelSpec,
        order: ModeOrder,
        batches: [usize; 2],
    ) -> OpenClResult<UniformDev<T>> {
        let grids = (pad3(modes), pad3(n));
        uniform_dev(&self.dev, module, &self.common, grids, order, batches[0])
    }

    fn upload(&mut self, coords: &[&[T]], _m: usize) -> OpenClResult<Vec<Buffer<T>>> {
        coords.iter().map(|c| upload(&self.dev, c)).collect()
    }

    fn sort(
        &mut self,
        u: &mut UniformDev<T>,
        points: Vec<Buffer<T>>,
        sets: &[u32],
    ) -> OpenClResult<()> {
        u.grid.set_points(&self.dev, points, sets)
    }

    fn bounds(
        &mut self,
        dim: usize,
        (src, m): (&Vec<Buffer<T>>, usize),
        (tgt, k): (&Vec<Buffer<T>>, usize),
    ) -> OpenClResult<(Boxes, Boxes)> {
        let arrays: Vec<(&Buffer<T>, usize)> = src[..dim]
            .iter()
            .map(|b| (b, m))
            .chain(tgt[..dim].iter().map(|b| (b, k)))
            .collect();
        let boxes = extents(&self.dev, &self.t3().minmax, &arrays)?;
        let mems: Vec<_> = arrays.iter().map(|&(b, n)| (Some(b.get()), n)).collect();
        checked_bounds::<T, _>(&*self.dev, &mems, boxes)
    }

    fn type3_modules(
        &self,
        dim: usize,
        kernel: KernelSpec,
        c: ModuleChoice,
    ) -> OpenClResult<Type3Modules> {
        let module = |role| self.module(dim, kernel, role, c);
        let (qz, qw) = fourier_quadrature(&kernel);
        Ok(Type3Modules {
            outer: module(stages::OUTER_ROLE)?,
            inner: module(stages::INNER_ROLE)?,
            nq: qz.len(),
            qz: upload(&self.dev, &qz)?,
            qw: upload(&self.dev, &qw)?,
        })
    }

    fn type3(
        &self,
        mods: &Type3Modules,
        (n, inner): (&[usize], &[usize]),
        kernel: KernelSpec,
        batches: [usize; 2],
    ) -> OpenClResult<Type3Dev<T>> {
        let (dev, common) = (&self.dev, &self.common);
        let spread = FineGrid::<T>::new(&mods.outer, common, pad3(n))?;
        let len = spread.len().checked_mul(2 * batches[0]);
        let agrid = alloc::<T>(dev, len.ok_or(NudtError::GridOverflow)?)?;
        let grids = (pad3(n), pad3(inner));
        let inner = uniform_dev(dev, &mods.inner, common, grids, ModeOrder::Fft, batches[0])?;
        Ok(Type3 {
            kernel,
            spread,
            agrid,
            inner,
            points: Type3Points::new(&**dev)?,
            phased: alloc::<T>(dev, 1)?,
        })
    }

    fn prepare_type3(
        &mut self,
        t: &mut Type3Dev<T>,
        mods: &Type3Modules,
        geometry: &Geometry,
        (src, tgt): (&Vec<Buffer<T>>, &Vec<Buffer<T>>),
        (m, k): (usize, usize),
        isign: i32,
        batch: usize,
    ) -> OpenClResult<()> {
        let dev = &*self.dev;
        let clen = m.checked_mul(2 * batch).ok_or(NudtError::GridOverflow)?;
        dev.grow(&mut t.phased, clen, "phased inputs")?;
        let quad = Quadrature {
            len: mods.nq,
            nodes: Some(mods.qz.get()),
            weights: Some(mods.qw.get()),
        };
        let t3 = self.t3();
        let kernels = (&t3.sources, &t3.targets);
        let pts = (dev.mem3(src), dev.mem3(tgt));
        let (p, kernel) = (&mut t.points, &t.kernel);
        p.prepare(dev, kernels, geometry, kernel, &quad, pts, (m, k), isign)?;
        t.spread.set_points(dev, shared(&p.y)?, &sets::shared(m))?;
        t.inner
            .grid
            .set_points(dev, shared(&p.u)?, &sets::shared(k))
    }

    fn window(&self, dim: usize, tol: f64) -> OpenClResult<GaussWindow> {
        GaussWindow::new::<T>(&self.dev, dim, tol)
    }

    fn window_width(win: &GaussWindow) -> usize {
        win.width()
    }

    fn gaussian(
        &mut self,
        win: &GaussWindow,
        geometry: &GaussGeometry,
        (src, tgt): (&Vec<Buffer<T>>, &Vec<Buffer<T>>),
        counts: (usize, usize),
        isign: i32,
        batches: [usize; 2],
        old: Option<Box<GaussDev<T>>>,
    ) -> OpenClResult<GaussDev<T>> {
        let dev = &self.dev;
        let pts = (dev.mem3(src), dev.mem3(tgt));
        let sources = &self.t3().sources;
        GaussDev::new(
            dev, sources, win, geometry, pts, counts, isign, batches[0], old,
        )
    }

    fn gaussian_grid(g: &GaussDev<T>) -> Vec<usize> {
        g.grid()
    }

    fn device_name(&self) -> String {
        self.dev.info.name.clone()
    }
}
