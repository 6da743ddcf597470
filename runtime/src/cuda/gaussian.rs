//! The Gaussian-gridding type 3 on the GPU (`Type3Method::GaussianCapozzoli`): the shared GPU
//! scheme ([`crate::gpu::gaussian`]: the CPU engine's scheme, Capozzoli et al.'s parameters,
//! with the same per-dimension geometry) over CUDA arrays and launches, with the generated
//! wide-Gaussian module compiled by NVRTC and cuFFT.

use super::cufft_plans::FftPlans;
use super::device::{blocks, load_module, Arg, Kernel};
use super::error::{driver, CudaError, CudaResult};
use super::grid::{memset0, ptr, CommonFns};
use super::memory::alloc;
use super::{CudaFloat, GpuArch};
use crate::gpu::gaussian::{GaussArg, GaussGpu, GaussGrids, GaussKernels};
use crate::planner::gaussian::GaussGeometry;
use cudarc::driver::{CudaContext, CudaSlice, CudaStream};
use std::sync::Arc;

/// The window of a plan (fixed by its tolerance) and the module compiled for its width.
pub(crate) struct GaussWindow {
    /// Shape `b` of eq. 6 at the plan's tolerance and `R = 3`.
    pub b: f64,
    /// Half-width `m`: windows are `2m + 1` points.
    pub half: usize,
    kernels: GaussKernels<Kernel>,
}

impl GaussWindow {
    /// The window for tolerance `tol` and its module for `dim` dimensions, compiled now (plan
    /// time), as the ES path compiles its spread modules.
    pub fn new<T: CudaFloat>(
        ctx: &Arc<CudaContext>,
        arch: &GpuArch,
        dim: usize,
        tol: f64,
    ) -> CudaResult<Self> {
        let (b, half) = GaussGeometry::window(tol);
        let src = nudt_gen::gpu::gaussian_wide_module(dim, 2 * half + 1, T::PRECISION)?;
        let (m, _) = load_module(ctx, &src, arch)?;
        let kernels = GaussKernels::load(|name| Kernel::load(&m, &src, name))?;
        Ok(GaussWindow { b, half, kernels })
    }

    pub fn width(&self) -> usize {
        2 * self.half + 1
    }
}

/// The device state of one pair of point sets (the shared [`GaussGrids`]) with cuFFT plans.
pub(crate) type GaussDev<T> = GaussGrids<CudaSlice<T>, FftPlans>;

/// The scheme's view of the plan's stream.
struct CudaGauss<'a>(&'a Arc<CudaStream>);

impl<T: CudaFloat> GaussGpu<T> for CudaGauss<'_> {
    type Error = CudaError;
    type Buf = CudaSlice<T>;
    type Mem = u64;
    type Kernel = Kernel;

    fn mem(&self, b: Option<&CudaSlice<T>>) -> u64 {
        b.map_or(0, |s| ptr(s, self.0))
    }

    fn holds(&self, b: &CudaSlice<T>) -> usize {
        b.len()
    }

    fn alloc(&self, len: usize, what: &str) -> CudaResult<CudaSlice<T>> {
        alloc::<T>(self.0, len, what)
    }

    fn upload(&self, v: &[T], what: &str) -> CudaResult<CudaSlice<T>> {
        let mut dv = alloc::<T>(self.0, v.len(), what)?;
        if !v.is_empty() {
            self.0
                .memcpy_htod(v, &mut dv)
                .map_err(|e| driver(&format!("cuMemcpyHtoD ({what})"), e))?;
        }
        Ok(dv)
    }

    fn launch(
        &self,
        k: &Kernel,
        items: usize,
        nb: usize,
        args: &[GaussArg<u64>],
    ) -> CudaResult<()> {
        let args: Vec<Arg> = args
            .iter()
            .map(|a| match *a {
                GaussArg::Mem(p) => Arg::Ptr(p),
                GaussArg::U32(v) => Arg::U32(v),
                GaussArg::I32(v) => Arg::I32(v),
                GaussArg::U64(v) => Arg::U64(v),
                GaussArg::F64(v) => Arg::F64(v),
            })
            .collect();
        k.launch(self.0, (blocks(items, k.threads), nb as u32), &args)
    }
}

impl<T: CudaFloat> GaussDev<T> {
    /// Prepares the grids of `geometry` for `sources` and `targets` (validated host arrays)
    /// on the device. `old`, the state of the previous point sets, gives back its grid buffer
    /// and cuFFT plans when the grid sizes are unchanged.
    #[allow(clippy::too_many_arguments)]
    pub fn new(
        stream: &Arc<CudaStream>,
        common: &CommonFns,
        win: &GaussWindow,
        geometry: &GaussGeometry,
        sources: &[&[T]],
        targets: &[&[T]],
        isign: i32,
        batches: [usize; 2],
        old: Option<Box<GaussDev<T>>>,
    ) -> CudaResult<Self> {
        let gpu = CudaGauss(stream);
        let upload = |v: &[&[T]], what| -> CudaResult<Vec<CudaSlice<T>>> {
            v.iter().map(|v| gpu.upload(v, what)).collect()
        };
        let raw_src = upload(sources, "type 3 sources")?;
        let raw_tgt = upload(targets, "type 3 targets")?;
        let (src, tgt): (Vec<_>, Vec<_>) = (raw_src.iter().collect(), raw_tgt.iter().collect());
        GaussGrids::prepare(
            &gpu,
            (&win.kernels, &common.t3_sources),
            win.b,
            geometry,
            (&src, &tgt),
            (sources[0].len(), targets[0].len()),
            isign,
            batches[0],
            old,
            |n| FftPlans::new::<T>(stream, n, &batches),
        )
    }

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
        let gpu = CudaGauss(stream);
        let g = ptr(&self.work, stream);
        memset0(stream, g, 2 * nb * self.len() * std::mem::size_of::<T>())?;
        self.run(
            &gpu,
            &win.kernels,
            win.b,
            (input, output),
            nb,
            adjoint,
            || self.fft.exec::<T>(g, nb, isign),
        )
    }
}
