//! The Gaussian-gridding type 3 on an OpenCL device (`Type3Method::GaussianCapozzoli`): the
//! shared GPU scheme ([`crate::gpu::gaussian`]) over OpenCL buffers and launches, with the
//! generated wide-Gaussian module in OpenCL C and one generated FFT.

use super::device::ClDevice;
use super::error::OpenClResult;
use super::fft::{ClFloat, GridFfts};
use super::launch::Kernel;
use super::launch::{build, kernel_of, zero};
use crate::gpu::gaussian::{GaussGrids, GaussKernels};
use crate::planner::gaussian::GaussGeometry;
use nudt_gen::gpu::gaussian_wide_module_in;
use opencl3::memory::{Buffer, ClMem};
use opencl3::program::Program;
use std::cell::RefCell;
use std::sync::Arc;

/// A plan's window and the program built for its width.
pub(crate) type GaussWindow = crate::gpu::gaussian::GaussWindow<Kernel, Arc<Program>>;

/// The window for tolerance `tol` and its program for `dim` dimensions, built now (plan
/// time), as the ES path builds its spread modules.
pub(crate) fn gauss_window<T: ClFloat>(
    dev: &Arc<ClDevice>,
    dim: usize,
    tol: f64,
) -> OpenClResult<GaussWindow> {
    let (b, half) = GaussGeometry::window(tol);
    let src = gaussian_wide_module_in(dim, 2 * half + 1, T::PRECISION, dev.info.dialect())
        .map_err(|e| dev.refusal(e))?;
    let program = build(dev, &src)?;
    let kernels = GaussKernels::load(|name| kernel_of(&program, name))?;
    Ok(GaussWindow {
        b,
        half,
        kernels,
        _module: program,
    })
}

/// The device state of one pair of point sets (the shared [`GaussGrids`]) with its FFTs
/// (in a cell: they add plans for new batch sizes while the grids are read).
pub(crate) type GaussDev<T> = GaussGrids<Buffer<T>, RefCell<GridFfts<T>>>;

impl<T: ClFloat> GaussDev<T> {
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
        self.run(dev, &win.kernels, win.b, io, nb, adjoint, || {
            self.fft.borrow_mut().exec(&self.work, isign, nb)
        })
    }
}
