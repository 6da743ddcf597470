//! The Gaussian-gridding type 3 on an OpenCL device (`Type3Method::GaussianCapozzoli`): the
//! shared GPU scheme ([`crate::gpu::gaussian`]) over OpenCL buffers and launches, with the
//! generated wide-Gaussian module in OpenCL C and one generated FFT.

use super::device::ClDevice;
use super::error::{OpenClError, OpenClResult};
use super::fft::{ClFloat, GridFfts};
use super::launch::Kernel;
use super::launch::ELEMENT_GROUP;
use super::launch::{alloc, build, kernel_of, launch, upload, zero, Arg};
use crate::gpu::gaussian::{GaussArg, GaussGpu, GaussGrids, GaussKernels};
use crate::planner::gaussian::GaussGeometry;
use nudt_gen::gpu::gaussian_wide_module_in;
use opencl3::memory::{Buffer, ClMem};
use opencl3::program::Program;
use opencl3::types::cl_mem;
use std::cell::RefCell;
use std::sync::Arc;

/// The window of a plan (fixed by its tolerance) and the program built for its width.
pub(crate) struct GaussWindow {
    /// Shape `b` of eq. 6 at the plan's tolerance and `R = 3`.
    pub b: f64,
    kernels: GaussKernels<Kernel>,
    _program: Arc<Program>,
}

impl GaussWindow {
    /// The window for tolerance `tol` and its program for `dim` dimensions, built now (plan
    /// time), as the ES path builds its spread modules.
    pub fn new<T: ClFloat>(dev: &Arc<ClDevice>, dim: usize, tol: f64) -> OpenClResult<Self> {
        let (b, half) = GaussGeometry::window(tol);
        let src = gaussian_wide_module_in(dim, 2 * half + 1, T::PRECISION, dev.info.dialect())
            .map_err(|e| dev.refusal(e))?;
        let program = build(dev, &src)?;
        let kernels = GaussKernels::load(|name| kernel_of(&program, name))?;
        Ok(GaussWindow {
            b,
            kernels,
            _program: program,
        })
    }
}

/// The device state of one pair of point sets (the shared [`GaussGrids`]) with its FFTs
/// (in a cell: they add plans for new batch sizes while the grids are read).
pub(crate) type GaussDev<T> = GaussGrids<Buffer<T>, RefCell<GridFfts<T>>>;

/// The scheme's view of the plan's device.
struct ClGauss<'a>(&'a ClDevice);

impl<T: ClFloat> GaussGpu<T> for ClGauss<'_> {
    type Error = OpenClError;
    type Buf = Buffer<T>;
    type Mem = Option<cl_mem>;
    type Kernel = Kernel;

    fn mem(&self, b: Option<&Buffer<T>>) -> Option<cl_mem> {
        b.map(|b| b.get())
    }

    fn holds(&self, b: &Buffer<T>) -> usize {
        b.size().map_or(0, |bytes| bytes / std::mem::size_of::<T>())
    }

    fn alloc(&self, len: usize, _what: &str) -> OpenClResult<Buffer<T>> {
        alloc::<T>(self.0, len)
    }

    fn upload(&self, v: &[T], _what: &str) -> OpenClResult<Buffer<T>> {
        upload(self.0, v)
    }

    fn launch(
        &self,
        k: &Kernel,
        items: usize,
        nb: usize,
        args: &[GaussArg<Option<cl_mem>>],
    ) -> OpenClResult<()> {
        let args: Vec<Arg> = args
            .iter()
            .map(|a| match *a {
                GaussArg::Mem(m) => Arg::Mem(m),
                GaussArg::U32(v) => Arg::U32(v),
                GaussArg::I32(v) => Arg::I32(v),
                GaussArg::U64(v) => Arg::U64(v),
                GaussArg::F64(v) => Arg::F64(v),
            })
            .collect();
        launch(self.0, k, items, ELEMENT_GROUP, nb, &args)
    }
}

impl<T: ClFloat> GaussDev<T> {
    /// Prepares the grids of `geometry` for the `m` sources and `k` targets in device
    /// buffers ([`GaussGrids::prepare`]); `t3_sources` is the common module's type 3 source
    /// kernel. `old`, the state of the previous point sets, gives back its grid buffer and
    /// FFTs when the grid sizes are unchanged.
    #[allow(clippy::too_many_arguments)]
    pub fn new(
        dev: &Arc<ClDevice>,
        t3_sources: &Kernel,
        win: &GaussWindow,
        geometry: &GaussGeometry,
        points: (&[&Buffer<T>], &[&Buffer<T>]),
        counts: (usize, usize),
        isign: i32,
        batch: usize,
        old: Option<Box<GaussDev<T>>>,
    ) -> OpenClResult<Self> {
        GaussGrids::prepare(
            &ClGauss(dev),
            (&win.kernels, t3_sources),
            win.b,
            geometry,
            points,
            counts,
            isign,
            batch,
            old,
            |n| Ok(RefCell::new(GridFfts::new(dev, n, batch)?)),
        )
    }

    /// `nb` transforms: strengths in `input` (stride M) → values in `output` (stride K), or
    /// with `adjoint`, values at the targets (stride K) → the sources (stride M), by the plan
    /// layer's steps (`isign` is the adjoint's, the forward's negated).
    #[allow(clippy::too_many_arguments)]
    pub fn execute(
        &mut self,
        dev: &ClDevice,
        win: &GaussWindow,
        input: &Buffer<T>,
        output: &Buffer<T>,
        nb: usize,
        isign: i32,
        adjoint: bool,
    ) -> OpenClResult<()> {
        let len = 2 * nb * self.len();
        zero(dev, &mut self.work, len)?;
        let io = (Some(input.get()), Some(output.get()));
        self.run(&ClGauss(dev), &win.kernels, win.b, io, nb, adjoint, || {
            self.fft.borrow_mut().exec(&self.work, isign, nb)
        })
    }
}
