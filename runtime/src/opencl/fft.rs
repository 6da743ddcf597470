//! The generated FFT on an OpenCL device: builds the module `nudt_gen::fft` renders for the
//! device's limits and runs its launch list (see `FftModule::describe_json`).

use super::device::ClDevice;
use super::error::{cl, device_call, OpenClError, OpenClResult};
use super::launch::{load_program, ClSource};
use crate::float::Float;
use nudt_gen::fft::{fft_module, Buffer, FftDirection, FftModule, FftSpec};
use nudt_gen::GenError;
use num_complex::Complex;
use opencl3::kernel::{ExecuteKernel, Kernel};
use opencl3::memory::{Buffer as ClBuffer, ClMem, CL_MEM_READ_WRITE};
use opencl3::program::Program;
use opencl3::types::{CL_BLOCKING, CL_NON_BLOCKING};
use std::sync::Arc;

/// The precisions the OpenCL FFT runs in (f64 needs `cl_khr_fp64`).
pub trait ClFloat: Float {}
impl ClFloat for f32 {}
impl ClFloat for f64 {}

/// A planned, built FFT of one shape, batch and precision on one device. Device buffers hold
/// interleaved complex values (`2·len` reals).
///
/// Fields drop in declaration order: kernels and buffers before the program and the device
/// (context and queue) they belong to.
pub struct ClFft<T: ClFloat> {
    module: FftModule,
    /// Per launch: forward and inverse kernel.
    kernels: Vec<[Kernel; 2]>,
    scratch: Option<ClBuffer<T>>,
    /// Device copy for [`ClFft::transform`], made on first use.
    staging: Option<ClBuffer<T>>,
    /// The program the kernels came from (kept alive with them; shared within a bundle).
    _program: Arc<Program>,
    dev: Arc<ClDevice>,
}

impl<T: ClFloat> std::fmt::Debug for ClFft<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ClFft")
            .field("module", &self.module.name)
            .field("device", &self.dev.info.name)
            .finish()
    }
}

impl<T: ClFloat> ClFft<T> {
    /// Plans, generates and builds the FFT of `shape` (1–3 axes, last fastest) × `batch`.
    pub fn new(dev: &Arc<ClDevice>, shape: &[usize], batch: usize) -> OpenClResult<Self> {
        let spec = FftSpec::new(shape, batch, T::PRECISION);
        let module = fft_module(&spec, &dev.info.fft_device()).map_err(|e| match e {
            GenError::Fp64Unsupported => OpenClError::Unsupported {
                device: dev.info.name.clone(),
                source: e,
            },
            other => OpenClError::Gen(other),
        })?;
        Self::from_module(dev, module)
    }

    /// Builds a module generated for this device (its dialect and limits).
    pub fn from_module(dev: &Arc<ClDevice>, module: FftModule) -> OpenClResult<Self> {
        let mut v = Self::bundle(dev, vec![module])?;
        Ok(v.remove(0))
    }

    /// Builds the members of one `nudt_gen::fft::fft_bundle` with one `clBuildProgram`.
    pub fn bundle(dev: &Arc<ClDevice>, modules: Vec<FftModule>) -> OpenClResult<Vec<Self>> {
        let Some(first) = modules.first() else {
            return Ok(Vec::new());
        };
        if modules
            .iter()
            .any(|m| !Arc::ptr_eq(&m.source, &first.source))
        {
            return Err(OpenClError::Gen(GenError::Render(
                "ClFft::bundle takes the members of one fft_bundle".into(),
            )));
        }
        let src = ClSource {
            name: &first.name,
            source: &first.source,
            hash: first.hash,
        };
        let (program, _) = load_program(dev, src)?;
        modules
            .into_iter()
            .map(|module| {
                let mut kernels = Vec::new();
                for l in &module.plan.launches {
                    let k = |dir| {
                        Kernel::create(&program, &module.entry(l, dir))
                            .map_err(cl("clCreateKernel"))
                    };
                    kernels.push([k(FftDirection::Forward)?, k(FftDirection::Inverse)?]);
                }
                let scratch = match module.plan.scratch_elems {
                    0 => None,
                    n => Some(Self::alloc(dev, n as usize)?),
                };
                Ok(ClFft {
                    module,
                    kernels,
                    scratch,
                    staging: None,
                    _program: program.clone(),
                    dev: dev.clone(),
                })
            })
            .collect()
    }

    fn alloc(dev: &ClDevice, elems: usize) -> OpenClResult<ClBuffer<T>> {
        device_call("clCreateBuffer")?;
        // SAFETY: no host pointer; the buffer is written before it is read.
        unsafe {
            ClBuffer::<T>::create(
                &dev.context,
                CL_MEM_READ_WRITE,
                2 * elems,
                std::ptr::null_mut(),
            )
        }
        .map_err(cl("clCreateBuffer"))
    }

    /// The generated module (source, plan and launch description; its length is the
    /// batch's complex elements).
    pub fn module(&self) -> &FftModule {
        &self.module
    }

    fn check(&self, what: &'static str, b: &ClBuffer<T>) -> OpenClResult<()> {
        let got = b.size().map_err(cl("clGetMemObjectInfo"))? / (2 * std::mem::size_of::<T>());
        if got < self.module.len() {
            return Err(OpenClError::Length {
                what,
                got,
                need: self.module.plan.elems,
            });
        }
        Ok(())
    }

    /// Enqueues the transform of device buffer `input` into `output` (the same buffer for an
    /// in-place transform); an out-of-place call leaves `input` unchanged.
    pub fn execute(
        &mut self,
        input: &ClBuffer<T>,
        output: &ClBuffer<T>,
        dir: FftDirection,
    ) -> OpenClResult<()> {
        self.check("input", input)?;
        self.check("output", output)?;
        let d = matches!(dir, FftDirection::Inverse) as usize;
        for (l, k) in self.module.plan.launches.iter().zip(&self.kernels) {
            let pick = |b: Buffer| match b {
                Buffer::Input => input,
                Buffer::Output => output,
                Buffer::Scratch => self.scratch.as_ref().expect("planned with scratch"),
            };
            let (src, dst) = (pick(l.src), pick(l.dst));
            device_call("clEnqueueNDRangeKernel (FFT)")?;
            // SAFETY: every generated kernel takes (src, dst) buffers of the plan's length
            // (checked above); the grid covers exactly the planned work items.
            unsafe {
                ExecuteKernel::new(&k[d])
                    .set_arg(src)
                    .set_arg(dst)
                    .set_global_work_size(l.grid as usize * l.threads as usize)
                    .set_local_work_size(l.threads as usize)
                    .enqueue_nd_range(&self.dev.queue)
            }
            .map_err(cl("clEnqueueNDRangeKernel"))?;
        }
        Ok(())
    }

    /// Transforms host data in place (upload, [`ClFft::execute`], download).
    pub fn transform(&mut self, data: &mut [Complex<T>], dir: FftDirection) -> OpenClResult<()> {
        if data.len() != self.module.len() {
            return Err(OpenClError::Length {
                what: "data",
                got: data.len(),
                need: self.module.plan.elems,
            });
        }
        let mut buf = match self.staging.take() {
            Some(b) => b,
            None => Self::alloc(&self.dev, self.module.len())?,
        };
        let dev = self.dev.clone();
        let q = &dev.queue;
        let reals = crate::float::interleaved_mut(data);
        // SAFETY: `buf` holds 2·len reals, as many as `reals`; the writes block.
        unsafe { q.enqueue_write_buffer(&mut buf, CL_NON_BLOCKING, 0, reals, &[]) }
            .map_err(cl("clEnqueueWriteBuffer"))?;
        let run = self.execute(&buf, &buf, dir);
        let read = run.and_then(|_| {
            // SAFETY: as above; the read blocks until the transform is done.
            unsafe { q.enqueue_read_buffer(&buf, CL_BLOCKING, 0, reals, &[]) }
                .map(|_| ())
                .map_err(cl("clEnqueueReadBuffer"))
        });
        self.staging = Some(buf);
        read
    }

    /// Uploads `data` into a new device buffer.
    pub fn upload(&self, data: &[Complex<T>]) -> OpenClResult<ClBuffer<T>> {
        let mut b = Self::alloc(&self.dev, data.len())?;
        // SAFETY: `b` holds exactly the reals of `data`; the write blocks.
        unsafe {
            self.dev.queue.enqueue_write_buffer(
                &mut b,
                CL_BLOCKING,
                0,
                crate::float::interleaved(data),
                &[],
            )
        }
        .map_err(cl("clEnqueueWriteBuffer"))?;
        Ok(b)
    }

    /// Reads a device buffer back into `out` (after every enqueued transform).
    pub fn download(&self, b: &ClBuffer<T>, out: &mut [Complex<T>]) -> OpenClResult<()> {
        // SAFETY: reads at most the buffer's reals into `out`; the read blocks.
        unsafe {
            self.dev.queue.enqueue_read_buffer(
                b,
                CL_BLOCKING,
                0,
                crate::float::interleaved_mut(out),
                &[],
            )
        }
        .map(|_| ())
        .map_err(cl("clEnqueueReadBuffer"))
    }
}

/// The FFTs of stacks of grids of one shape, per stack size: the plan's batch, made with the
/// grids, and any other (a last, partial batch) made when first run.
pub(crate) struct GridFfts<T: ClFloat> {
    shape: Vec<usize>,
    ffts: Vec<(usize, ClFft<T>)>,
    dev: Arc<ClDevice>,
}

impl<T: ClFloat> GridFfts<T> {
    pub fn new(dev: &Arc<ClDevice>, shape: &[usize], batch: usize) -> OpenClResult<Self> {
        Ok(GridFfts {
            shape: shape.to_vec(),
            ffts: vec![(batch, ClFft::<T>::new(dev, shape, batch)?)],
            dev: dev.clone(),
        })
    }

    /// The FFTs of `count` stacked grids at `grid` in place, with the sign of `isign`.
    pub fn exec(&mut self, grid: &ClBuffer<T>, isign: i32, count: usize) -> OpenClResult<()> {
        let dir = if isign < 0 {
            FftDirection::Forward
        } else {
            FftDirection::Inverse
        };
        let i = match self.ffts.iter().position(|(b, _)| *b == count) {
            Some(i) => i,
            None => {
                let fft = ClFft::<T>::new(&self.dev, &self.shape, count)?;
                self.ffts.push((count, fft));
                self.ffts.len() - 1
            }
        };
        self.ffts[i].1.execute(grid, grid, dir)
    }
}
