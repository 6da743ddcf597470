//! The OpenCL backend's device state ([`ClDev`]: the device, the common program, its
//! kernels, the plan's input and output buffers) and the device halves of the shared plan's
//! steps ([`Backend`]): programs built for the device, grids and generated FFTs, uploads,
//! the bin sort, bounding boxes, type 3's preparation and the Gaussian type 3's.

use super::device::ClDevice;
use super::engine::{uniform_dev, Batch, Staged, Type3Dev, UniformDev};
use super::error::{OpenClError, OpenClResult};
use super::fft::ClFloat;
use super::fft::GridFfts;
use super::gaussian::{gauss_window, GaussDev, GaussWindow};
use super::grid::{ClModes, ClSpreadModule, FineGrid};
use super::launch::{
    alloc, build, enqueue, kernel_of, mem, read, read_at, share, upload, write_at, Arg, Kernel,
};
use crate::error::NudtError;
use crate::gpu::device::Device;
use crate::gpu::engine::Type3;
use crate::gpu::gaussian::GaussGrids;
use crate::gpu::gradient::GradKernels;
use crate::gpu::plan::{
    Backend, Fill, GaussPrep, GridShape, ModuleKey, PointSets, Take, Type3Prep,
};
use crate::gpu::routing::SlabKernels;
use crate::gpu::type3::{set_bounds, Boxes, Quadrature, Span, Type3Points};
use crate::planner::stages::{self, Stage};
use nudt_gen::gpu::{common_module_in, fourier_quadrature, names, ELEMENT_THREADS, MINMAX_BLOCKS};
use nudt_gen::{KernelSpec, TransformType};
use opencl3::memory::{Buffer, ClMem};
use opencl3::program::Program;
use opencl3::types::cl_mem;
use std::cell::RefCell;
use std::sync::Arc;

/// Most values a multi-device plan's gathers and scatters move through the host at a time.
const PIECE: usize = 1 << 20;

/// The values of a piece of a `len`-value transfer: a quarter of it (even: a piece holds
/// whole complex values), at most [`PIECE`]; so small transfers, which the tests run, cross
/// pieces too.
fn piece(len: usize) -> usize {
    len.div_ceil(4).next_multiple_of(2).clamp(2, PIECE)
}

/// What a type 3 plan needs besides the spread modules: the extents' and the phase kernels.
pub(super) struct Type3Kernels {
    pub minmax: Kernel,
    pub sources: Kernel,
    pub targets: Kernel,
}

/// A kernel's Fourier quadrature on the device: its length, nodes and weights.
type Quad = (usize, Buffer<f64>, Buffer<f64>);
/// The shared plan's view of type 3's modules and point sets, and of the Gaussian type 3's
/// preparation (short names for the signatures below).
type Modules = crate::gpu::plan::Type3Modules<ClSpreadModule, Quad>;
type Sets<'a, T> = PointSets<'a, Vec<Buffer<T>>>;
type Gauss<'a, T> = GaussPrep<'a, ClDev<T>, T>;
type Prep<'a, T> = Type3Prep<'a, ClDev<T>, T>;

/// An OpenCL plan's device state; the common program and the device are dropped last.
pub struct ClDev<T: ClFloat> {
    /// The complex multiply of the type 3 phases.
    pub(super) cmul: Kernel,
    /// The derivatives' element-wise steps (taken out while a derivative runs, which also
    /// runs the plan's passes).
    pub(super) grad: Option<GradKernels<Kernel>>,
    /// Type 3 plans' kernels of the common program.
    pub(super) t3: Option<Type3Kernels>,
    /// Device copies of one batch's inputs and outputs.
    pub(super) io: Option<(Buffer<T>, Buffer<T>)>,
    pub(super) common: Arc<Program>,
    pub(super) dev: Arc<ClDevice>,
}

impl<T: ClFloat> ClDev<T> {
    /// The state of a plan of type `ty` on `dev`: its common program built, and the kernels
    /// of it the plan launches itself.
    pub(super) fn open(dev: Arc<ClDevice>, ty: TransformType) -> OpenClResult<Self> {
        let common_src =
            common_module_in(T::PRECISION, dev.info.dialect()).map_err(|e| dev.refusal(e))?;
        let common = build(&dev, &common_src)?;
        let t3 = match ty {
            TransformType::Type3 => Some(Type3Kernels {
                minmax: kernel_of(&common, names::MINMAX)?,
                sources: kernel_of(&common, names::T3_SOURCES)?,
                targets: kernel_of(&common, names::T3_TARGETS)?,
            }),
            _ => None,
        };
        Ok(ClDev {
            cmul: kernel_of(&common, names::CMUL)?,
            grad: Some(GradKernels::load(|n| kernel_of(&common, n))?),
            t3,
            io: None,
            common,
            dev,
        })
    }

    fn t3(&self) -> &Type3Kernels {
        self.t3.as_ref().expect("type 3 plans have their kernels")
    }
}

/// Per-dimension sizes padded with ones to three dimensions, as the kernels take them.
pub(super) fn pad3(v: &[usize]) -> [usize; 3] {
    std::array::from_fn(|d| v.get(d).copied().unwrap_or(1))
}

/// Bounding interval `(lo, hi)` of the coordinates of each span (an array, its first
/// element, their number), by the min/max kernel: one partial per work-group, finished here
/// (`lo > hi` for an empty span).
fn extents(dev: &ClDevice, minmax: &Kernel, spans: &[Span<Option<cl_mem>>]) -> OpenClResult<Boxes> {
    let group = ELEMENT_THREADS as usize;
    spans
        .iter()
        .map(|&(x, first, n)| {
            if n == 0 {
                return Ok((f64::INFINITY, f64::NEG_INFINITY));
            }
            let groups = n.div_ceil(group).min(MINMAX_BLOCKS as usize);
            let part = alloc::<f64>(dev, 2 * groups)?;
            let args = [
                Arg::U64(first as u64),
                Arg::U64(n as u64),
                Arg::Mem(x),
                mem(&part),
            ];
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
    type Quadrature = Quad;
    type Grid = FineGrid<T>;
    type Modes = ClModes<T>;
    type Buf = Buffer<T>;
    type GaussFft = RefCell<GridFfts<T>>;
    type Window = GaussWindow;
    type Points = Vec<Buffer<T>>;
    type Dev = ClDevice;
    const NAME: &'static str = "opencl";
    const PLAN: &'static str = "ClPlan";

    fn module(&self, key: ModuleKey) -> OpenClResult<ClSpreadModule> {
        ClSpreadModule::new(&self.dev, key, T::PRECISION)
    }

    fn quadrature(&self, kernel: &KernelSpec) -> OpenClResult<Quad> {
        let (qz, qw) = fourier_quadrature(kernel);
        Ok((qz.len(), upload(&self.dev, &qz)?, upload(&self.dev, &qw)?))
    }

    fn uniform(
        &self,
        module: &ClSpreadModule,
        shape: GridShape<'_>,
    ) -> OpenClResult<UniformDev<T>> {
        let grids = (pad3(shape.modes), pad3(shape.n));
        let (order, batch) = (shape.order, shape.batches[0]);
        uniform_dev(&self.dev, module, &self.common, grids, order, batch)
    }

    fn regrid(&self, u: &mut UniformDev<T>, module: &ClSpreadModule) -> OpenClResult<()> {
        u.grid = FineGrid::new(module, &self.common, u.grid.n)?;
        Ok(())
    }

    fn upload(&mut self, sets: &[&[&[T]]], m: usize) -> OpenClResult<Vec<Buffer<T>>> {
        let dim = sets.first().map_or(0, |s| s.len());
        (0..dim)
            .map(|d| {
                let mut b = alloc::<T>(&self.dev, m)?;
                let mut at = 0;
                for c in sets.iter().map(|set| set[d]) {
                    write_at(&self.dev, &mut b, at, c)?;
                    at += c.len();
                }
                Ok(b)
            })
            .collect()
    }

    fn upload_with(&mut self, len: usize, _: &str, fill: &Fill<'_, T>) -> OpenClResult<Buffer<T>> {
        let mut b = alloc::<T>(&self.dev, len)?;
        let p = piece(len);
        let mut piece = vec![T::zero(); p.min(len)];
        for at in (0..len).step_by(p) {
            let to = &mut piece[..p.min(len - at)];
            fill(at, to);
            write_at(&self.dev, &mut b, at, to)?;
        }
        Ok(b)
    }

    fn download_with(&mut self, b: &Buffer<T>, len: usize, take: &Take<'_, T>) -> OpenClResult<()> {
        let p = piece(len);
        let mut piece = vec![T::zero(); p.min(len)];
        for at in (0..len).step_by(p) {
            let from = &mut piece[..p.min(len - at)];
            read_at(&self.dev, b, at, from)?;
            take(at, from);
        }
        Ok(())
    }

    fn points(&mut self, coords: Vec<Buffer<T>>) -> Vec<Buffer<T>> {
        coords
    }

    fn sort(&mut self, u: &mut UniformDev<T>, p: Vec<Buffer<T>>, sets: &[u32]) -> OpenClResult<()> {
        u.grid.set_points(&self.dev, p, sets)
    }

    fn bounds(&mut self, sets: &Sets<'_, T>) -> OpenClResult<Vec<(Boxes, Boxes)>> {
        let dim = sets.dim;
        let arrays: Vec<_> = sets.src[..dim]
            .iter()
            .chain(&sets.tgt[..dim])
            .map(|b| Some(b.get()))
            .collect();
        let (dev, minmax) = (&*self.dev, &self.t3().minmax);
        set_bounds::<T, _>(dev, &arrays, sets.starts, |spans| {
            extents(dev, minmax, spans)
        })
    }

    fn type3(&self, mods: &Modules, shape: GridShape<'_>) -> OpenClResult<Type3Dev<T>> {
        let (dev, common, batch) = (&self.dev, &self.common, shape.batches[0]);
        let spread = FineGrid::<T>::new(&mods.outer, common, pad3(shape.modes))?;
        let len = spread.len().checked_mul(2 * batch);
        let agrid = alloc::<T>(dev, len.ok_or(NudtError::GridOverflow)?)?;
        let kernel = shape.kernel;
        Ok(Type3 {
            kernel,
            spread,
            agrid,
            inner: self.uniform(&mods.inner, shape)?,
            points: Type3Points::new(&**dev)?,
            phased: alloc::<T>(dev, 1)?,
        })
    }

    fn prepare_type3(&mut self, t: &mut Type3Dev<T>, (q, g, sets): Prep<T>) -> OpenClResult<()> {
        let dev = &*self.dev;
        let quad = Quadrature {
            len: q.0,
            nodes: Some(q.1.get()),
            weights: Some(q.2.get()),
        };
        let t3 = self.t3();
        let kernels = (&t3.sources, &t3.targets);
        let pts = (dev.mem3(sets.src), dev.mem3(sets.tgt));
        let (p, kernel) = (&mut t.points, &t.kernel);
        p.prepare(dev, kernels, g, kernel, &quad, pts, sets.starts, sets.isign)?;
        dev.grow(
            &mut t.phased,
            p.phased_len(false, sets.batches[0]),
            "phased inputs",
        )?;
        let [src, tgt] = sets.starts;
        t.spread.set_points(dev, shared(&p.y)?, src)?;
        t.inner.grid.set_points(dev, shared(&p.u)?, tgt)
    }

    fn window(&self, dim: usize, tol: f64) -> OpenClResult<GaussWindow> {
        gauss_window::<T>(&self.dev, dim, tol)
    }

    fn gaussian(&mut self, job: Gauss<T>) -> OpenClResult<GaussDev<T>> {
        let (dev, sets) = (&self.dev, job.2);
        let pts = (dev.mem3(sets.src), dev.mem3(sets.tgt));
        let ffts = |n: &[usize]| Ok(RefCell::new(GridFfts::new(dev, n, sets.batches[0])?));
        GaussGrids::prepare(&**dev, &self.t3().sources, job, pts, ffts)
    }

    fn device_name(&self) -> String {
        self.dev.info.name.clone()
    }

    fn device(&self) -> &ClDevice {
        &self.dev
    }

    fn slab_kernels(&self) -> OpenClResult<SlabKernels<Kernel>> {
        SlabKernels::load(|name| kernel_of(&self.common, name))
    }

    fn run_stages(
        &self,
        u: &mut UniformDev<T>,
        steps: &[Stage],
        [input, output]: [&Buffer<T>; 2],
        count: usize,
    ) -> OpenClResult<()> {
        let mut batch = Batch {
            dev: &self.dev,
            cmul: &self.cmul,
            engine: Staged::Uniform(u),
            input,
            output,
            first: 0,
            count,
        };
        stages::perform(&mut batch, steps)
    }
}
