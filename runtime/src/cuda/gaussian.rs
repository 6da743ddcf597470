//! The Gaussian-gridding type 3 on the GPU (`Type3Method::GaussianCapozzoli`): the shared GPU
//! scheme ([`crate::gpu::gaussian`]: the CPU engine's scheme, Capozzoli et al.'s parameters,
//! with the same per-dimension geometry) over CUDA arrays and launches, with the generated
//! wide-Gaussian module compiled by NVRTC and cuFFT.

use super::error::CudaResult;
use super::fft::FftPlans;
use super::grid::{memset0, ptr};
use super::launch::{load_module, Kernel};
use super::{CudaFloat, GpuArch};
use crate::gpu::gaussian::{GaussGrids, GaussKernels};
use crate::planner::gaussian::GaussGeometry;
use cudarc::driver::{CudaContext, CudaSlice, CudaStream};
use std::sync::Arc;

/// A plan's window and its module, compiled by NVRTC (its kernels keep the module alive).
pub(crate) type GaussWindow = crate::gpu::gaussian::GaussWindow<Kernel, ()>;

/// The window for tolerance `tol` and its module for `dim` dimensions, compiled now (plan
/// time), as the ES path compiles its spread modules.
pub(crate) fn gauss_window<T: CudaFloat>(
    ctx: &Arc<CudaContext>,
    arch: &GpuArch,
    dim: usize,
    tol: f64,
) -> CudaResult<GaussWindow> {
    let (b, half) = GaussGeometry::window(tol);
    let src = nudt_gen::gpu::gaussian_wide_module(dim, 2 * half + 1, T::PRECISION)?;
    let (m, _) = load_module(ctx, &src, arch)?;
    let kernels = GaussKernels::load(|name| Kernel::load(&m, &src, name))?;
    Ok(GaussWindow {
        b,
        half,
        kernels,
        _module: (),
    })
}

/// The device state of one pair of point sets (the shared [`GaussGrids`]) with cuFFT plans.
pub(crate) type GaussDev<T> = GaussGrids<CudaSlice<T>, FftPlans>;

impl<T: CudaFloat> GaussDev<T> {
    /// `nb` transforms: strengths at `input` (stride M) → values at `output` (stride K), or
    /// with `adjoint`, values at the targets (stride K) → the sources (stride M), by the plan
    /// layer's steps (`isign` is the adjoint's, the forward's negated).
    #[allow(clippy::too_many_arguments)]
    pub fn execute(
        &self,
        win: &GaussWindow,
        stream: &Arc<CudaStream>,
        input: u64,
        output: u64,
        nb: usize,
        isign: i32,
        adjoint: bool,
    ) -> CudaResult<()> {
        let gpu = stream;
        let g = ptr(&self.work, stream);
        memset0(stream, g, 2 * nb * self.len() * std::mem::size_of::<T>())?;
        self.run(
            gpu,
            &win.kernels,
            win.b,
            (input, output),
            nb,
            adjoint,
            || self.fft.exec::<T>(g, nb, isign),
        )
    }
}
