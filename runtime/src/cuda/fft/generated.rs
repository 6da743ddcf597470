//! The generated FFT on an NVIDIA GPU: the module `nudt_gen::fft` renders in the CUDA dialect
//! for the device's limits, compiled by NVRTC through the backend's module cache (memory and
//! disk, like the spreaders) and run from its launch list, beside cuFFT for comparison.
//!
//! Device buffers hold interleaved complex values (`2·len` reals), as everywhere in the
//! backend. The plans run it where it measured faster than cuFFT (`super`, the grids' FFTs); it is also what
//! `examples/fft_bench.rs` and the GPU suite measure and check against cuFFT.

use super::super::error::{driver, CudaError, CudaResult};
use super::super::grid::ptr;
use super::super::launch::load_module;
use super::super::memory::alloc;
use super::super::CudaFloat;
use cudarc::driver::sys::CUfunction_attribute;
use cudarc::driver::{CudaFunction, CudaSlice, CudaStream, LaunchConfig, PushKernelArg};
use nudt_gen::fft::{fft_module, Buffer, FftDevice, FftDirection, FftModule, FftSpec};
use nudt_gen::gpu::{GpuArch, GpuSource};
use std::sync::Arc;

/// A planned, compiled FFT of one shape, batch and precision on one GPU.
pub struct GenFft<T: CudaFloat> {
    stream: Arc<CudaStream>,
    module: FftModule,
    /// Per launch: forward and inverse entry point.
    funcs: Vec<[CudaFunction; 2]>,
    scratch: Option<CudaSlice<T>>,
}

impl<T: CudaFloat> GenFft<T> {
    /// Plans, generates and compiles the FFT of `shape` (1–3 axes, last fastest) × `batch`
    /// for `arch`, to run on `stream`.
    pub fn new(
        stream: &Arc<CudaStream>,
        arch: &GpuArch,
        shape: &[usize],
        batch: usize,
    ) -> CudaResult<Self> {
        let spec = FftSpec::new(shape, batch, T::PRECISION);
        let module = fft_module(&spec, &FftDevice::cuda(arch))?;
        Ok(Self::bundle(stream, arch, vec![module])?.remove(0))
    }

    /// Compiles the members of one `nudt_gen::fft::fft_bundle` (generated for `arch`) as one
    /// NVRTC module.
    pub fn bundle(
        stream: &Arc<CudaStream>,
        arch: &GpuArch,
        modules: Vec<FftModule>,
    ) -> CudaResult<Vec<Self>> {
        let Some(first) = modules.first() else {
            return Ok(Vec::new());
        };
        if modules
            .iter()
            .any(|m| !Arc::ptr_eq(&m.source, &first.source))
        {
            return Err(CudaError::Unsupported(
                "GenFft::bundle takes the members of one fft_bundle".into(),
            ));
        }
        // The module cache keys on the source and architecture; entry points are looked up
        // by the names in the plans, so no signature list is needed.
        let src = GpuSource {
            name: first.name.clone(),
            source: first.source.to_string(),
            hash: first.hash,
            kernels: Vec::new(),
            spec: None,
        };
        let (m, _) = load_module(stream.context(), &src, arch)?;
        modules
            .into_iter()
            .map(|module| {
                let mut funcs = Vec::new();
                for l in &module.plan.launches {
                    let f = |dir| -> CudaResult<CudaFunction> {
                        let f = m
                            .load_function(&module.entry(l, dir))
                            .map_err(|e| driver("cuModuleGetFunction", e))?;
                        if l.local_bytes > 48 << 10 {
                            f.set_attribute(
                                CUfunction_attribute::CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
                                l.local_bytes as i32,
                            )
                            .map_err(|e| driver("cuFuncSetAttribute", e))?;
                        }
                        Ok(f)
                    };
                    funcs.push([f(FftDirection::Forward)?, f(FftDirection::Inverse)?]);
                }
                let scratch = match module.plan.scratch_elems {
                    0 => None,
                    n => Some(alloc::<T>(stream, 2 * n as usize, "FFT scratch")?),
                };
                Ok(GenFft {
                    stream: stream.clone(),
                    module,
                    funcs,
                    scratch,
                })
            })
            .collect()
    }

    /// The generated module (source, plan and launch description; its length is the
    /// batch's complex elements).
    pub fn module(&self) -> &FftModule {
        &self.module
    }

    fn check(&self, what: &str, b: &CudaSlice<T>) -> CudaResult<()> {
        if b.len() < 2 * self.module.len() {
            return Err(CudaError::Unsupported(format!(
                "FFT {what} holds {} complex values, the plan needs {}",
                b.len() / 2,
                self.module.len()
            )));
        }
        Ok(())
    }

    /// Enqueues the transform of `input` into `output` on the stream; `input` is unchanged.
    pub fn execute(
        &mut self,
        input: &CudaSlice<T>,
        output: &mut CudaSlice<T>,
        dir: FftDirection,
    ) -> CudaResult<()> {
        self.check("input", input)?;
        self.check("output", output)?;
        let (i, o) = (ptr(input, &self.stream), ptr(output, &self.stream));
        self.run(i, o, dir)
    }

    /// Enqueues the in-place transform of `data` on the stream.
    pub fn execute_in_place(
        &mut self,
        data: &mut CudaSlice<T>,
        dir: FftDirection,
    ) -> CudaResult<()> {
        self.check("data", data)?;
        let p = ptr(data, &self.stream);
        self.run(p, p, dir)
    }

    /// Enqueues the transform from device address `input` to `output` (equal for in place),
    /// each holding the plan's length.
    pub(crate) fn run(&self, input: u64, output: u64, dir: FftDirection) -> CudaResult<()> {
        let scratch = self.scratch.as_ref().map_or(0, |s| ptr(s, &self.stream));
        let d = matches!(dir, FftDirection::Inverse) as usize;
        for (l, f) in self.module.plan.launches.iter().zip(&self.funcs) {
            let pick = |b: Buffer| match b {
                Buffer::Input => input,
                Buffer::Output => output,
                Buffer::Scratch => scratch,
            };
            let (src, dst) = (pick(l.src), pick(l.dst));
            let cfg = LaunchConfig {
                grid_dim: (l.grid as u32, 1, 1),
                block_dim: (l.threads, 1, 1),
                shared_mem_bytes: l.local_bytes as u32,
            };
            let mut b = self.stream.launch_builder(&f[d]);
            b.arg(&src).arg(&dst);
            // SAFETY: every generated FFT kernel takes (src, dst) device pointers to buffers
            // of the plan's length (checked by the callers, scratch allocated with it); the
            // grid covers exactly the planned work and the kernels guard the rest.
            unsafe { b.launch(cfg) }.map_err(|e| driver(&self.module.entry(l, dir), e))?;
        }
        Ok(())
    }
}
