//! [`ClPlan`]: the shared GPU plan ([`GpuPlan`]) on an OpenCL device — the CUDA backend's
//! bin sort, spreading and interpolation (GM-sort, SM and output-driven, chosen as CUDA
//! chooses them), mode corrections and type 3 phase factors, rendered in OpenCL C from the
//! same templates, on the generated FFT ([`super::ClFft`]) — with OpenCL's own entry points:
//! device buffers in and out.
//!
//! Execute runs the plan layer's stage sequence ([`crate::planner::stages`]) on batches of
//! stacked transforms, one launch per stage and one batched FFT per batch
//! ([`super::engine`]).

use super::backend::ClDev;
use super::device::ClDevice;
use super::engine::{staged, Batch, Engine};
use super::error::{cl, OpenClResult};
use super::fft::ClFloat;
use super::launch::{alloc, copy, elements, owner, read, share, write, zero};
use crate::error::NudtError;
use crate::gpu::gradient as on_device;
use crate::gpu::gradient::check_pass;
use crate::gpu::plan::{setup, GpuPlan};
use crate::gradient::host::HostArrays;
use crate::gradient::steps::Steps;
use crate::planner::stages::{self, Pass};
use crate::planner::validate::{check_type, point_count, SOURCES, TARGETS};
use crate::planner::{sets, Problem, Type3Method};
use crate::uniform::ModeOrder;
use nudt_gen::gpu::GpuMethod;
use nudt_gen::{KernelKind, Upsampling};
use num_complex::Complex;
use opencl3::memory::Buffer;
use opencl3::types::cl_mem;
use std::sync::Arc;

/// Options of an OpenCL plan; the defaults are what a FINUFFT user expects.
#[derive(Clone, Debug)]
pub struct ClOptions {
    pub kernel: KernelKind,
    /// Upsampling factor σ; `None` lets the plan layer choose it once the points are known,
    /// as on every backend ([`crate::planner::sigma`]).
    pub upsampling: Option<Upsampling>,
    pub mode_order: ModeOrder,
    /// The device; `None`: [`ClDevice::first`].
    pub device: Option<Arc<ClDevice>>,
    /// The spreading method (GM-sort, SM or output-driven); `None` chooses per point set as
    /// the CUDA backend does. A method the device's work-groups cannot hold is refused.
    pub spread: Option<GpuMethod>,
    /// The interpolation method (GM-sort or SM); `None` chooses per point set.
    pub interp: Option<GpuMethod>,
    /// Bin sides of the sort and the SM methods (1 for unused dimensions); `None` takes the
    /// planner's for the kernel and the device's local memory.
    pub bins: Option<[usize; 3]>,
    /// The bin sort: `Some(true)` in two passes (by buckets of bins, then by bin),
    /// `Some(false)` in one; `None` takes two where the points' sorted indices outgrow the
    /// device's global memory cache (`nudt_gen::gpu::sort_passes`), as on CUDA. Results are
    /// the same either way.
    pub two_pass_sort: Option<bool>,
    /// Take this device's `nudt tune --backend opencl` profile ([`crate::planner::gpu_profile`]), when there
    /// is one, for the bins and method of type 1 and 2 plans whose options leave both open.
    pub use_profile: bool,
    /// Transforms per batch (one launch per stage and one FFT for all of them, on as many
    /// work grids); 0 means `min(ntransf, 8)`, as on CUDA ([`crate::planner::limits::gpu_batch`]).
    pub max_batch: usize,
    /// How type 3 is computed: FINUFFT's scheme (default) or Gaussian gridding, as on every
    /// backend.
    pub type3: Type3Method,
    /// Plan for derivatives with respect to the points, as the CPU's option of that name.
    pub gradients: bool,
}

impl Default for ClOptions {
    fn default() -> Self {
        ClOptions {
            kernel: KernelKind::Pswf,
            upsampling: None,
            mode_order: ModeOrder::Cmcl,
            device: None,
            spread: None,
            interp: None,
            bins: None,
            two_pass_sort: None,
            use_profile: true,
            max_batch: 0,
            type3: Type3Method::Finufft,
            gradients: false,
        }
    }
}

/// A NUFFT plan of type 1, 2 or 3 in 1–3 dimensions on an OpenCL device.
pub type ClPlan<T> = GpuPlan<ClDev<T>, T>;

/// The lengths of device buffers (for [`point_count`]).
fn lens<T>(buffers: &[&Buffer<T>]) -> OpenClResult<Vec<usize>> {
    buffers.iter().map(|b| elements(b)).collect()
}

impl<T: ClFloat> GpuPlan<ClDev<T>, T> {
    crate::entry::plan_entry_points!(ClOptions, super::OpenClError);
    crate::gpu::plan::gpu_set_points!(super::OpenClError);

    fn build(problem: Problem, opts: ClOptions) -> OpenClResult<Self> {
        let dev = match opts.device {
            Some(d) => d,
            None => ClDevice::first()?,
        };
        let profile_key = opts.use_profile.then(|| dev.info.profile_key());
        let state = ClDev::open(dev, problem.ty)?;
        GpuPlan::assemble(problem, setup!(opts, state, profile_key))
    }

    /// Sets the points of a type 1 or 2 plan from device buffers of the plan's context (one
    /// per dimension, `T` radians, all of one length: the number of points). A non-finite
    /// coordinate is found by the sort and reported as [`NudtError::NonFinite`], as for host
    /// arrays; the plan then holds no points. The plan sorts only the
    /// points' order and reads the coordinates from these buffers at every execute: it
    /// holds a reference to each (OpenCL counts them) until the next set-points, and they
    /// must not be written meanwhile: the kernels trust the sort, and a moved point would be
    /// spread outside its bin's box in local memory.
    pub fn set_points_device(&mut self, coords: &[&Buffer<T>]) -> OpenClResult<()> {
        check_type(1, self.problem.ty)?;
        let m = point_count(self.problem.dim(), &lens(coords)?, SOURCES)?;
        let held = coords.iter().map(|b| share(b)).collect::<Result<_, _>>()?;
        self.sort_points(held, m, &sets::shared(m))
    }

    /// Sets a point set per transform of a type 1 or 2 plan from device buffers that hold
    /// the sets one after another (one buffer per dimension, `Σ counts` long; `counts[b]`
    /// transform b's size, `ntransf` of them, 0 allowed), as
    /// [`Self::set_points_per_transform`] does from host arrays, held as
    /// [`Self::set_points_device`] holds its buffers. A non-finite coordinate is
    /// [`NudtError::InTransform`] naming its transform; the plan then holds no points.
    pub fn set_points_per_transform_device(
        &mut self,
        coords: &[&Buffer<T>],
        counts: &[usize],
    ) -> OpenClResult<()> {
        check_type(1, self.problem.ty)?;
        let m = point_count(self.problem.dim(), &lens(coords)?, SOURCES)?;
        let c = sets::Concatenated::from_counts(self.problem.ntransf, counts, m)?;
        let held = coords.iter().map(|b| share(b)).collect::<Result<_, _>>()?;
        self.sort_point_sets(held, c)
    }

    /// Sets the sources and target frequencies of a type 3 plan from device buffers of the
    /// plan's context (one per dimension each, `T`; each set's buffers all of one length:
    /// its size). Plans both grids from the sets' extents (reduced on the device), rescales
    /// both sets and computes their phase factors on the device, and sorts both. The grids of
    /// the last point sets (kernels, FFT, buffers) are kept when the new sets need the same
    /// sizes. A non-finite coordinate is reported as [`NudtError::NonFinite`].
    pub fn set_points_type3_device(
        &mut self,
        sources: &[&Buffer<T>],
        targets: &[&Buffer<T>],
    ) -> OpenClResult<()> {
        self.type3_device(sources, targets, None)
    }

    /// Sets sources and target frequencies per transform of a type 3 plan from device
    /// buffers that hold the sets one after another (one buffer per dimension each;
    /// `counts`: each transform's numbers of sources and of targets, `ntransf` of each), as
    /// [`Self::set_points_type3_per_transform`] does from host arrays. A non-finite
    /// coordinate is [`NudtError::InTransform`] naming its transform.
    pub fn set_points_type3_per_transform_device(
        &mut self,
        sources: &[&Buffer<T>],
        targets: &[&Buffer<T>],
        counts: (&[usize], &[usize]),
    ) -> OpenClResult<()> {
        self.type3_device(sources, targets, Some(counts))
    }

    /// The device-buffer set-points of a type 3 plan: one shared pair of sets, or the pairs
    /// of `counts` one after another.
    fn type3_device(
        &mut self,
        sources: &[&Buffer<T>],
        targets: &[&Buffer<T>],
        counts: Option<(&[usize], &[usize])>,
    ) -> OpenClResult<()> {
        check_type(3, self.problem.ty)?;
        let m = point_count(self.problem.dim(), &lens(sources)?, SOURCES)?;
        let k = point_count(self.problem.dim(), &lens(targets)?, TARGETS)?;
        let [at_x, at_s] = self.type3_starts((m, k), counts)?;
        let shared = |v: &[&Buffer<T>]| -> OpenClResult<Vec<Buffer<T>>> {
            v.iter().map(|b| share(b)).collect()
        };
        let (x, s) = (shared(sources)?, shared(targets)?);
        self.set_points_type3_on((&x, &at_x), (&s, &at_s))
    }

    /// One checked run of `pass` from host slices: batch by batch, the input written, the
    /// stages run, the output read.
    fn execute_host(
        &mut self,
        input: &[Complex<T>],
        output: &mut [Complex<T>],
        pass: Pass,
    ) -> OpenClResult<()> {
        let each = self.check_io(input.len(), output.len(), pass)?;
        if input.is_empty() || output.is_empty() {
            output.iter_mut().for_each(|v| *v = Complex::default());
            return Ok(());
        }
        let dev = self.dev.dev.clone();
        // Batch by batch, each batch's inputs and outputs the concatenation of its
        // transforms'.
        let batches = sets::batches(&each, self.batch);
        let most = batches
            .iter()
            .map(|b| b.input.len().max(b.output.len()))
            .max();
        let (mut din, dout) = self.io(most.unwrap_or(0))?;
        let mut r = Ok(());
        for b in batches {
            let (xa, yb) = (&input[b.input.clone()], &mut output[b.output.clone()]);
            r = write(&dev, &mut din, crate::float::interleaved(xa))
                .and_then(|()| self.run(&din, &dout, (b.first, b.count), pass))
                .and_then(|()| read(&dev, &dout, crate::float::interleaved_mut(yb)));
            if r.is_err() {
                break;
            }
        }
        self.dev.io = Some((din, dout));
        r
    }

    /// Runs the transform on device buffers of interleaved complex values (`2·len` reals of
    /// `T`, `ntransf` stacked, at least as long as [`Self::execute`]'s slices), with no host
    /// copies. Returns once the work is done.
    pub fn execute_device(
        &mut self,
        input: &Buffer<T>,
        output: &mut Buffer<T>,
    ) -> OpenClResult<()> {
        self.execute_buffers(input, output, Pass::transform(false))
    }

    /// [`Self::execute_adjoint`] on device buffers.
    pub fn execute_adjoint_device(
        &mut self,
        input: &Buffer<T>,
        output: &mut Buffer<T>,
    ) -> OpenClResult<()> {
        self.execute_buffers(input, output, Pass::transform(true))
    }

    fn execute_buffers(
        &mut self,
        input: &Buffer<T>,
        output: &mut Buffer<T>,
        pass: Pass,
    ) -> OpenClResult<()> {
        let counts = self.counts().ok_or(NudtError::PointsNotSet)?;
        let each: Vec<(usize, usize)> = counts
            .iter()
            .map(|&(m, k)| self.problem.lengths(m, k, pass))
            .collect();
        // Buffers may be longer than the stack (OpenCL has no empty buffers, and pooled ones
        // are rounded up), not shorter.
        let [what_in, what_out] = self.problem.io_names(pass);
        let ni: usize = each.iter().map(|l| l.0).sum();
        let no: usize = each.iter().map(|l| l.1).sum();
        for (what, buf, need) in [(what_in, input, ni), (what_out, &*output, no)] {
            let got = complex_len(buf)?;
            if got < need {
                return Err(NudtError::Length {
                    what: format!("{what} (device buffer, complex values)"),
                    expected: need,
                    got,
                }
                .into());
            }
        }
        let dev = self.dev.dev.clone();
        let sz = 2 * std::mem::size_of::<T>();
        if ni == 0 || no == 0 {
            return zero(&dev, output, 2 * no);
        }
        let batches = sets::batches(&each, self.batch);
        if let [one] = &batches[..] {
            self.run(input, output, (0, one.count), pass)?;
            return dev.queue.finish().map_err(cl("clFinish"));
        }
        // The kernels take a batch from the start of a buffer: the others go through the
        // plan's own buffers, by device copies.
        let most = batches
            .iter()
            .map(|b| b.input.len().max(b.output.len()))
            .max();
        let (mut din, dout) = self.io(most.unwrap_or(0))?;
        let mut r = Ok(());
        for b in batches {
            let (i, o) = (b.input.start * sz, b.output.start * sz);
            r = copy(&dev, input, i, &mut din, 0, b.input.len() * sz)
                .and_then(|()| self.run(&din, &dout, (b.first, b.count), pass))
                .and_then(|()| copy(&dev, &dout, 0, output, o, b.output.len() * sz));
            if r.is_err() {
                break;
            }
        }
        self.dev.io = Some((din, dout));
        r.and_then(|()| dev.queue.finish().map_err(cl("clFinish")))
    }

    /// A checked run of `pass` between the device arrays `from` and `to` (the lengths are
    /// the buffers'): a step of a derivative ([`crate::gpu::gradient`]).
    fn device_pass(
        &mut self,
        pass: Pass,
        from: (Option<cl_mem>, usize),
        to: (Option<cl_mem>, usize),
    ) -> OpenClResult<()> {
        check_pass(self.problem.ty, pass)?;
        let (Some(a), Some(b)) = (from.0, to.0) else {
            return Err(NudtError::PointsNotSet.into());
        };
        self.execute_buffers(&owner(a)?, &mut owner(b)?, pass)
    }

    /// A derivative's steps on host arrays ([`crate::NufftPlan::run_gradient`]): uploaded
    /// once, every step on the device, the results read back.
    pub(crate) fn run_gradient(
        &mut self,
        steps: &Steps,
        host: &mut HostArrays<'_, T>,
    ) -> OpenClResult<()> {
        let dev = self.dev.dev.clone();
        let k = self
            .dev
            .grad
            .take()
            .expect("a plan's derivatives run one at a time");
        let r = on_device::run_host(&*dev, &k, steps, host, &mut |p, a, b| {
            self.device_pass(p, a, b)
        });
        self.dev.grad = Some(k);
        r
    }

    /// The plan's device buffers for one batch's inputs and outputs, `len` complex values
    /// each (grown on demand).
    fn io(&mut self, len: usize) -> OpenClResult<(Buffer<T>, Buffer<T>)> {
        match self.dev.io.take() {
            Some((i, o)) if complex_len(&i)? >= len => Ok((i, o)),
            _ => Ok((
                alloc::<T>(&self.dev.dev, 2 * len)?,
                alloc::<T>(&self.dev.dev, 2 * len)?,
            )),
        }
    }

    /// The stacked runs of `pass` (transforms, adjoints, gradient passes) of the batch of
    /// transforms (first, count) from the device buffer `din` into `dout`, each holding the
    /// batch's vectors from its start.
    fn run(
        &mut self,
        din: &Buffer<T>,
        dout: &Buffer<T>,
        (first, count): (usize, usize),
        pass: Pass,
    ) -> OpenClResult<()> {
        let adjoint = pass.adjoint;
        if let (Engine::Type3(t), true) = (&mut self.engine, adjoint) {
            // Type 3's adjoint phases its K inputs where the forward phases its M.
            let len = t.points.phased_len(true, self.batch);
            if 2 * complex_len(&t.phased)? < len {
                t.phased = alloc::<T>(&self.dev.dev, len)?;
            }
        }
        if let Engine::Gaussian(g) = &mut self.engine {
            let win = self.gauss.as_ref().expect("Gaussian engines have a window");
            let isign = if adjoint {
                -self.problem.isign
            } else {
                self.problem.isign
            };
            return g.execute(&self.dev.dev, win, din, dout, count, isign, adjoint);
        }
        let mut batch = Batch {
            dev: &self.dev.dev,
            cmul: &self.dev.cmul,
            engine: staged(&mut self.engine).ok_or(NudtError::PointsNotSet)?,
            input: din,
            output: dout,
            first,
            count,
        };
        stages::run(&mut batch, self.problem.ty, self.problem.isign, pass)
    }

    /// The device the plan runs on.
    pub fn device(&self) -> &Arc<ClDevice> {
        &self.dev.dev
    }
}

/// Complex values of `T` that `b` holds.
fn complex_len<T>(b: &Buffer<T>) -> OpenClResult<usize> {
    Ok(elements(b)? / 2)
}

crate::gpu::shares::host_run!(ClFloat, ClDev, super::OpenClError);
