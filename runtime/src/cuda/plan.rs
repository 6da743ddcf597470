//! [`CudaPlan`]: the shared GPU plan ([`GpuPlan`]) on CUDA — make a plan once (kernels
//! compiled, cuFFT planned), set points once (bin sort on the GPU), execute many times — with
//! CUDA's own entry points: device arrays in and out on the plan's stream, GPU timings.

use super::backend::{
    addresses, guard_held, read_point, read_word, CudaDev, CudaPoints, HeldCoords,
};
use super::device::{detect_arch, open, probe_libraries};
use super::engine::{Batch, Engine};
use super::error::{device_call, driver, CudaResult};
use super::fft::FftEngine;
use super::grid::{at, memset0, ptr, CommonFns};
use super::memory::{alloc, keep_freed_memory};
use super::{CudaFloat, GpuArch, GpuMethod};
use crate::error::NudtError;
use crate::float::{interleaved, interleaved_mut};
use crate::gpu::engine::SortedGrid;
use crate::gpu::gradient::{self as on_device, check_pass, DeviceArrays};
use crate::gpu::plan::{setup, GpuPlan};
use crate::gradient::host::HostArrays;
use crate::gradient::steps::{self, Given, Set, Steps};
use crate::gradient::{self, Wanted};
use crate::planner::stages::{self, Pass};
use crate::planner::validate::{check_type, point_count, SOURCES, TARGETS};
use crate::planner::{sets, Problem, Type3Method};
use crate::uniform::ModeOrder;
use cudarc::driver::sys::CUevent_flags;
use cudarc::driver::{CudaSlice, CudaStream, DevicePtr, DevicePtrMut, SyncOnDrop};
use nudt_gen::{KernelKind, Upsampling};
use num_complex::Complex;
use std::sync::Arc;

/// Options of a GPU plan; `CudaOptions::default()` is what a cuFINUFFT user expects.
#[derive(Clone, Debug)]
pub struct CudaOptions {
    /// Device ordinal (ignored when `stream` is given: its context decides).
    pub device: usize,
    /// Stream to run on; `None` uses the device's default stream.
    pub stream: Option<Arc<CudaStream>>,
    pub kernel: KernelKind,
    /// Upsampling factor σ; `None` lets the plan layer choose it once the points are known,
    /// as on every backend ([`crate::planner::sigma`]).
    pub upsampling: Option<Upsampling>,
    pub mode_order: ModeOrder,
    /// The spreading method (GM-sort, SM or output-driven); `None` chooses per point set
    /// (from bin occupancy).
    pub spread: Option<GpuMethod>,
    /// The interpolation method (GM-sort or SM); `None` chooses per point set.
    pub interp: Option<GpuMethod>,
    /// Bin sides override (tuning); `None` lets the generator choose from shared memory.
    /// Each side must be at least 1 and a bin's padded box (`side + w − 1` per dimension)
    /// must fit the GPU's shared memory per block; otherwise planning is a typed error.
    pub bins: Option<[usize; 3]>,
    /// The bin sort: `Some(true)` in two passes (by buckets of bins, then by bin),
    /// `Some(false)` in one; `None` takes two where the points' sorted indices outgrow the
    /// GPU's L2 (`nudt_gen::gpu::sort_passes`). Results are the same either way.
    pub two_pass_sort: Option<bool>,
    /// Transforms per cuFFT batch (and per fine-grid buffer); 0 means `min(ntransf, 8)`.
    /// At most [`crate::planner::limits::MAX_BATCH`] are used: the kernels index the batch by `blockIdx.y`.
    pub max_batch: usize,
    /// GPU description override (tuning, tests); `None` reads the device.
    pub arch: Option<GpuArch>,
    /// Take this GPU's `nudt tune --backend cuda` profile ([`crate::planner::gpu_profile`]), when there
    /// is one, for the bins and method of type 1 and 2 plans whose options leave both open
    /// (not with an `arch` override).
    pub use_profile: bool,
    /// How type 3 is computed: FINUFFT's scheme with the plan's kernel (the default), or
    /// Gaussian gridding with Capozzoli et al.'s parameters, as the CPU's option of that name.
    pub type3: Type3Method,
    /// Plan for derivatives with respect to the points, as the CPU's option of that name.
    pub gradients: bool,
    /// The fine grids' FFT: by default whichever of cuFFT and the generated FFT measured
    /// faster for the grid's shape and batch on this GPU (timed once, cached on disk).
    pub fft: FftEngine,
}

impl Default for CudaOptions {
    fn default() -> Self {
        CudaOptions {
            device: 0,
            stream: None,
            kernel: KernelKind::Pswf,
            upsampling: None,
            mode_order: ModeOrder::Cmcl,
            spread: None,
            interp: None,
            bins: None,
            two_pass_sort: None,
            max_batch: 0,
            arch: None,
            use_profile: true,
            type3: Type3Method::Finufft,
            gradients: false,
            fft: FftEngine::Auto,
        }
    }
}

/// GPU time of the last `set_points` (the sort) and the last run (`execute`, its adjoint or
/// a gradient pass; without host transfers), measured with CUDA events.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct CudaTimings {
    pub setpts_ms: f32,
    pub execute_ms: f32,
}

/// A NUFFT plan of type 1, 2 or 3 in 1–3 dimensions on an NVIDIA GPU.
pub type CudaPlan<T> = GpuPlan<CudaDev<T>, T>;

/// The lengths of device arrays (for [`point_count`]).
fn lens<T, C: DevicePtr<T>>(arrays: &[&C]) -> Vec<usize> {
    arrays.iter().map(|c| c.len()).collect()
}

impl<T: CudaFloat> CudaDev<T> {
    /// The device state of a plan on the options' stream or device: the libraries probed,
    /// the context bound, the architecture detected, the common module loaded.
    pub(super) fn open(opts: &CudaOptions) -> CudaResult<Self> {
        // NVRTC and cuFFT probed first, also with the caller's stream (whose driver is loaded
        // but whose NVRTC and cuFFT may not be): cudarc would panic on the first call into a
        // missing one.
        probe_libraries()?;
        let (ctx, stream) = match &opts.stream {
            Some(s) => (s.context().clone(), s.clone()),
            None => {
                let ctx = open(opts.device)?;
                let s = ctx.default_stream();
                (ctx, s)
            }
        };
        ctx.bind_to_thread()
            .map_err(|e| driver("cuCtxSetCurrent", e))?;
        keep_freed_memory(&ctx)?;
        let arch = match &opts.arch {
            Some(a) => a.clone(),
            None => detect_arch(&ctx)?,
        };
        let common_src = nudt_gen::gpu::common_module(T::PRECISION)?;
        let common = CommonFns::load(&ctx, &common_src, &arch)?;
        let ev = || {
            ctx.new_event(Some(CUevent_flags::CU_EVENT_DEFAULT))
                .map_err(|e| driver("cuEventCreate", e))
        };
        let events = [ev()?, ev()?, ev()?, ev()?];
        Ok(CudaDev {
            ctx,
            stream,
            arch,
            common,
            fft: opts.fft,
            coords: Vec::new(),
            held: Vec::new(),
            din: None,
            dout: None,
            staging: Default::default(),
            events,
            recorded: [false; 2],
        })
    }
}

impl<T: CudaFloat> GpuPlan<CudaDev<T>, T> {
    crate::entry::plan_entry_points!(CudaOptions, super::CudaError);
    crate::gpu::plan::gpu_set_points!(super::CudaError);

    fn build(problem: Problem, opts: CudaOptions) -> CudaResult<Self> {
        let dev = CudaDev::open(&opts)?;
        let profile_key =
            (opts.use_profile && opts.arch.is_none()).then(|| super::profile_key(&dev.arch));
        GpuPlan::assemble(problem, setup!(opts, dev, profile_key))
    }

    /// Sets the points of a type 1 or 2 plan from device arrays (one per dimension, `T`
    /// radians), as cuFINUFFT's `setpts` takes them: the plan sorts only the points' order
    /// (a 4-byte index each) and reads the coordinates from these arrays at every execute,
    /// so it holds them until the next set-points or its drop. Holding a clone of each `Arc`
    /// also keeps safe code from writing them meanwhile (`Arc::get_mut` refuses): the
    /// kernels trust the sort, and a point moved out of its bin would be spread outside the
    /// bin's shared-memory box. A non-finite coordinate is found by the sort's first pass
    /// and reported as [`NudtError::NonFinite`], as for host arrays (the host waits for the
    /// sort to read back the one word): the plan then holds no points.
    pub fn set_points_device<C: DevicePtr<T> + Send + Sync + 'static>(
        &mut self,
        coords: &[Arc<C>],
    ) -> CudaResult<()> {
        self.set_points_held(coords, None)
    }

    /// Sets a point set per transform of a type 1 or 2 plan from device arrays that hold the
    /// sets one after another (one array per dimension, `Σ counts` long; `counts[b]`
    /// transform b's size, `ntransf` of them, 0 allowed), as
    /// [`Self::set_points_per_transform`] does from host arrays — a training batch's
    /// trajectories as one `(B, M)` tensor, with no copy to the host — held as
    /// [`Self::set_points_device`] holds its arrays. A non-finite coordinate is
    /// [`NudtError::InTransform`] naming its transform; the plan then holds no points.
    pub fn set_points_per_transform_device<C: DevicePtr<T> + Send + Sync + 'static>(
        &mut self,
        coords: &[Arc<C>],
        counts: &[usize],
    ) -> CudaResult<()> {
        self.set_points_held(coords, Some(counts))
    }

    /// The device-array set-points of a type 1 or 2 plan: one shared set, or the sets of
    /// `counts` one after another.
    fn set_points_held<C: DevicePtr<T> + Send + Sync + 'static>(
        &mut self,
        coords: &[Arc<C>],
        counts: Option<&[usize]>,
    ) -> CudaResult<()> {
        check_type(1, self.problem.ty)?;
        let refs: Vec<&C> = coords.iter().map(|c| c.as_ref()).collect();
        let m = point_count(self.problem.dim(), &lens(&refs), SOURCES)?;
        let concatenated = counts
            .map(|c| sets::Concatenated::from_counts(self.problem.ntransf, c, m))
            .transpose()?;
        self.dev.bind()?;
        let held: Vec<HeldCoords<T>> = coords.iter().map(|c| c.clone() as HeldCoords<T>).collect();
        let stream = self.dev.stream.clone();
        let guards = guard_held(&held, &stream);
        let at = addresses(&guards);
        self.begin_set_points();
        device_call("cuMemcpyHtoD (non-finite check)")?;
        let bad = stream
            .clone_htod(&[u32::MAX])
            .map_err(|e| driver("cuMemcpyHtoD (non-finite check)", e))?;
        let points = CudaPoints {
            at,
            bad: ptr(&bad, &stream),
            owned: Vec::new(),
            held: held.clone(),
        };
        let starts = concatenated
            .as_ref()
            .map_or(sets::shared(m).to_vec(), |c| c.starts.clone());
        let r = match concatenated {
            Some(c) => self.sort_point_sets(points, c),
            None => self.sort_points(points, m, &starts),
        };
        drop(guards);
        r?;
        let first = read_word(&stream, &bad)?;
        if first == u32::MAX {
            return Ok(());
        }
        (self.num_points, self.per_set, self.points_set) = (0, None, false);
        self.dev.held.clear();
        if let Engine::Uniform(u) = &mut self.engine {
            u.grid.forget_points();
        }
        let values = read_point::<T>(&stream, &at[..self.problem.dim()], first as usize)?;
        Err(sets::non_finite(&starts, first as usize, &values).into())
    }

    /// Sets the sources and target frequencies of a type 3 plan from device arrays (one per
    /// dimension, `T`), as cuFINUFFT's `setpts` takes them: both bounding boxes are reduced on
    /// the GPU (one small read-back: the grids' sizes depend on them), both sets rescaled and
    /// their phase factors computed there, and both sorted. A non-finite coordinate shows in
    /// its array's bounding interval and is reported as [`NudtError::NonFinite`] (the array is
    /// then read back to name its first one); the plan then holds no points.
    pub fn set_points_type3_device<C: DevicePtr<T>>(
        &mut self,
        sources: &[&C],
        targets: &[&C],
    ) -> CudaResult<()> {
        self.type3_device(sources, targets, None)
    }

    /// Sets sources and target frequencies per transform of a type 3 plan from device
    /// arrays that hold the sets one after another (one array per dimension each; `counts`:
    /// each transform's numbers of sources and of targets, `ntransf` of each), as
    /// [`Self::set_points_type3_per_transform`] does from host arrays. A non-finite
    /// coordinate is [`NudtError::InTransform`] naming its transform.
    pub fn set_points_type3_per_transform_device<C: DevicePtr<T>>(
        &mut self,
        sources: &[&C],
        targets: &[&C],
        counts: (&[usize], &[usize]),
    ) -> CudaResult<()> {
        self.type3_device(sources, targets, Some(counts))
    }

    /// The device-array set-points of a type 3 plan: one shared pair of sets, or the pairs of
    /// `counts` one after another.
    fn type3_device<C: DevicePtr<T>>(
        &mut self,
        sources: &[&C],
        targets: &[&C],
        counts: Option<(&[usize], &[usize])>,
    ) -> CudaResult<()> {
        check_type(3, self.problem.ty)?;
        let m = point_count(self.problem.dim(), &lens(sources), SOURCES)?;
        let k = point_count(self.problem.dim(), &lens(targets), TARGETS)?;
        let [at_x, at_s] = self.type3_starts((m, k), counts)?;
        self.dev.bind()?;
        let stream = self.dev.stream.clone();
        let gs: Vec<_> = sources.iter().map(|c| c.device_ptr(&stream)).collect();
        let gt: Vec<_> = targets.iter().map(|c| c.device_ptr(&stream)).collect();
        let points = |g: &[(u64, SyncOnDrop<'_>)]| CudaPoints {
            at: addresses(g),
            bad: 0,
            owned: Vec::new(),
            held: Vec::new(),
        };
        let (ps, pt) = (points(&gs), points(&gt));
        let r = self.set_points_type3_on((&ps, &at_x), (&pt, &at_s));
        drop((gs, gt));
        r
    }

    /// One checked run of `pass` from host slices: the input copied in, the stages run on
    /// the device by batches, the output copied back (both through the plan's pinned
    /// staging buffer).
    fn execute_host(
        &mut self,
        input: &[Complex<T>],
        output: &mut [Complex<T>],
        pass: Pass,
    ) -> CudaResult<()> {
        let each = self.check_io(input.len(), output.len(), pass)?;
        self.dev.bind()?;
        let stream = self.dev.stream.clone();
        let grow = |slot: &mut Option<CudaSlice<T>>, len: usize, what: &str| -> CudaResult<()> {
            if slot.as_ref().is_none_or(|s| s.len() < len.max(1)) {
                *slot = None;
                *slot = Some(alloc::<T>(&stream, len, what)?);
            }
            Ok(())
        };
        let mut din = self.dev.din.take();
        let mut dout = self.dev.dout.take();
        grow(&mut din, 2 * input.len(), "input")?;
        grow(&mut dout, 2 * output.len(), "output")?;
        let (din, dout) = (din.unwrap(), dout.unwrap());
        let (pi, po) = (ptr(&din, &stream), ptr(&dout, &stream));
        (self.dev.din, self.dev.dout) = (Some(din), Some(dout));
        self.dev.staging.htod(&stream, &[interleaved(input)], pi)?;
        self.run(pi, po, pass, &each)?;
        self.dev
            .staging
            .dtoh(&stream, po, interleaved_mut(output))?;
        stream
            .synchronize()
            .map_err(|e| driver("cuStreamSynchronize", e))
    }

    /// Runs the transform on device buffers of interleaved complex values (`2·len` reals),
    /// with no host copies. Returns once the work is queued on the plan's stream.
    pub fn execute_device<I: DevicePtr<T>, O: DevicePtrMut<T>>(
        &mut self,
        input: &I,
        output: &mut O,
    ) -> CudaResult<()> {
        self.execute_on_device(input, output, false)
    }

    /// [`Self::execute_adjoint`] on device buffers, queued on the plan's stream.
    pub fn execute_adjoint_device<I: DevicePtr<T>, O: DevicePtrMut<T>>(
        &mut self,
        input: &I,
        output: &mut O,
    ) -> CudaResult<()> {
        self.execute_on_device(input, output, true)
    }

    fn execute_on_device<I: DevicePtr<T>, O: DevicePtrMut<T>>(
        &mut self,
        input: &I,
        output: &mut O,
        adjoint: bool,
    ) -> CudaResult<()> {
        if input.len() % 2 != 0 || output.len() % 2 != 0 {
            return Err(NudtError::Length {
                what: "device buffers (interleaved complex, even length)".into(),
                expected: input.len() & !1,
                got: input.len(),
            }
            .into());
        }
        let pass = Pass::transform(adjoint);
        let each = self.check_io(input.len() / 2, output.len() / 2, pass)?;
        self.dev.bind()?;
        let stream = self.dev.stream.clone();
        let (pi, gi) = input.device_ptr(&stream);
        let (po, go) = output.device_ptr_mut(&stream);
        let r = self.run(pi, po, pass, &each);
        drop((gi, go));
        r
    }

    /// A checked run of `pass` between device addresses of `from.1` and `to.1` complex
    /// values: a step of a derivative ([`crate::gpu::gradient`]).
    fn device_pass(&mut self, pass: Pass, from: (u64, usize), to: (u64, usize)) -> CudaResult<()> {
        check_pass(self.problem.ty, pass)?;
        let each = self.check_io(from.1, to.1, pass)?;
        self.run(from.0, to.0, pass, &each)
    }

    /// A derivative's steps on host arrays ([`crate::NufftPlan::run_gradient`]): uploaded
    /// once, every step on the device, the results read back.
    pub(crate) fn run_gradient(
        &mut self,
        steps: &Steps,
        host: &mut HostArrays<'_, T>,
    ) -> CudaResult<()> {
        self.dev.bind()?;
        let (stream, k) = (self.dev.stream.clone(), self.dev.common.grad.clone());
        on_device::run_host(&stream, &k, steps, host, &mut |p, a, b| {
            self.device_pass(p, a, b)
        })
    }

    /// Reverse mode ([`crate::gradient::vjp`]) on device arrays, queued on the plan's stream:
    /// at input `input` for the output's cotangent `cotangent` (interleaved complex, as
    /// [`Self::execute_device`] takes them), the input's cotangent into `d_input` (where
    /// `wanted.input`), the points' (type 3: the sources') into `d_points` and type 3's
    /// targets' into `d_targets` (one array per dimension each, or none where not wanted).
    /// Type 3 needs its sources and targets as set (`points`). Nothing leaves the device.
    #[allow(clippy::too_many_arguments)]
    pub fn vjp_device<C: DevicePtr<T>, I: DevicePtr<T>, O: DevicePtrMut<T>>(
        &mut self,
        input: &I,
        cotangent: &I,
        points: Option<(&[&C], &[&C])>,
        wanted: Wanted,
        d_input: Option<&mut O>,
        d_points: &mut [&mut O],
        d_targets: &mut [&mut O],
    ) -> CudaResult<()> {
        let counts = points.map(|(s, t)| (len_of(s), len_of(t)));
        let lens = (complex_len(input.len())?, complex_len(cotangent.len())?);
        let steps = steps::vjp(&gradient::setting(self, counts), lens, wanted)?;
        self.dev.bind()?;
        let stream = self.dev.stream.clone();
        let (gi, gs) = (input.device_ptr(&stream), cotangent.device_ptr(&stream));
        let reads = type3_reads(&stream, points);
        let n_result = d_input.as_deref().map_or(Ok(0), |o| complex_len(o.len()))?;
        let result = d_input.map(|o| o.device_ptr_mut(&stream));
        let (gp, gt) = (ptrs_mut(&stream, d_points), ptrs_mut(&stream, d_targets));
        let arrays = DeviceArrays {
            input: (gi.0, lens.0),
            seed: (gs.0, lens.1),
            result: (result.as_ref().map_or(0, |r| r.0), n_result),
            reads: addresses_of(&reads),
            writes: vec![
                (Set::PointCotangents, addresses_in(&gp)),
                (Set::TargetCotangents, addresses_in(&gt)),
            ],
        };
        let k = self.dev.common.grad.clone();
        let r = on_device::run::<T, _>(&stream, &k, &steps, &arrays, &mut |p, a, b| {
            self.device_pass(p, a, b)
        });
        drop((gi, gs, reads, result, gp, gt));
        r
    }

    /// Forward mode ([`crate::gradient::jvp`]) on device arrays, queued on the plan's stream:
    /// the change of the output at input `input` for the changes `d_input` of the input,
    /// `d_points` of the points (type 3: the sources) and `d_targets` of type 3's targets
    /// (`None` for those that do not change), into `output`. Type 3 needs its sources and
    /// targets as set (`points`: arrays of any type, as the tangents).
    #[allow(clippy::too_many_arguments)]
    pub fn jvp_device<C: DevicePtr<T>, P: DevicePtr<T>, I: DevicePtr<T>, O: DevicePtrMut<T>>(
        &mut self,
        input: &I,
        d_input: Option<&I>,
        d_points: Option<&[&C]>,
        d_targets: Option<&[&C]>,
        points: Option<(&[&P], &[&P])>,
        output: &mut O,
    ) -> CudaResult<()> {
        let given = Given {
            input: d_input.is_some(),
            points: d_points.is_some(),
            targets: d_targets.is_some(),
        };
        let counts = points.map(|(s, t)| (len_of(s), len_of(t)));
        let lens = (complex_len(input.len())?, complex_len(output.len())?);
        let steps = steps::jvp(&gradient::setting(self, counts), lens, given)?;
        let n_seed = d_input.map_or(Ok(0), |d| complex_len(d.len()))?;
        self.dev.bind()?;
        let stream = self.dev.stream.clone();
        let gi = input.device_ptr(&stream);
        let gs = d_input.map(|d| d.device_ptr(&stream));
        let mut reads = type3_reads(&stream, points);
        for (set, v) in [
            (Set::PointTangents, d_points),
            (Set::TargetTangents, d_targets),
        ] {
            if let Some(v) = v {
                reads.push((set, ptrs(&stream, v)));
            }
        }
        let go = output.device_ptr_mut(&stream);
        let arrays = DeviceArrays {
            input: (gi.0, lens.0),
            seed: (gs.as_ref().map_or(0, |g| g.0), n_seed),
            result: (go.0, lens.1),
            reads: addresses_of(&reads),
            writes: Vec::new(),
        };
        let k = self.dev.common.grad.clone();
        let r = on_device::run::<T, _>(&stream, &k, &steps, &arrays, &mut |p, a, b| {
            self.device_pass(p, a, b)
        });
        drop((gi, gs, reads, go));
        r
    }

    /// One run of `pass` (the transform, its adjoint, a gradient pass) between device
    /// addresses whose transforms take and give `each` values (validated lengths).
    fn run(
        &mut self,
        input: u64,
        output: u64,
        pass: Pass,
        each: &[(usize, usize)],
    ) -> CudaResult<()> {
        // The held coordinates are read by this work, which runs by the plan's batches
        // ([`sets::batches`]): a batch without inputs gives zeros, one without outputs
        // nothing.
        let stream = self.dev.stream.clone();
        let held = self.dev.held.clone();
        let _guards = guard_held(&held, &stream);
        let adjoint = pass.adjoint;
        let (a, b) = self
            .problem
            .lengths(self.num_points, self.num_targets, pass);
        let sz = std::mem::size_of::<T>();
        if adjoint && a > 0 && b > 0 {
            // Type 3's adjoint phases its K inputs where the forward phases its M.
            if let Engine::Type3(t) = &mut self.engine {
                let len = t.points.phased_len(true, self.batch);
                if t.phased.len() < len {
                    t.phased = alloc::<T>(&stream, 0, "phased inputs")?;
                    t.phased = alloc::<T>(&stream, len, "phased inputs")?;
                }
            }
        }
        self.dev.record(2)?;
        let (ty, isign) = (self.problem.ty, self.problem.isign);
        for batch in sets::batches(each, self.batch) {
            let input = at::<T>(input, 2 * batch.input.start);
            let output = at::<T>(output, 2 * batch.output.start);
            if batch.input.is_empty() {
                memset0(&stream, output, 2 * batch.output.len() * sz)?;
                continue;
            }
            if batch.output.is_empty() {
                continue;
            }
            let count = batch.count;
            match (&self.engine, self.engine.staged()) {
                (_, Some((fine, type3))) => {
                    let mut batch = Batch {
                        stream: &stream,
                        common: &self.dev.common,
                        fine,
                        type3,
                        input,
                        output,
                        first: batch.first,
                        count,
                    };
                    stages::run(&mut batch, ty, isign, pass)?;
                }
                (Engine::Gaussian(g), _) => {
                    let win = self.gauss.as_ref().expect("Gaussian engines have a window");
                    let isign = if adjoint { -isign } else { isign };
                    g.execute(win, &stream, input, output, count, isign, adjoint)?;
                }
                _ => return Err(NudtError::PointsNotSet.into()),
            }
        }
        self.dev.record(3)
    }

    /// Spreads strengths with an explicit method onto the fine grid (types 1/2; for checks
    /// against the CPU schedules and between methods). Returns the fine grid.
    pub fn spread_only(
        &mut self,
        method: GpuMethod,
        c: &[Complex<T>],
    ) -> CudaResult<Vec<Complex<T>>> {
        self.dev.bind()?;
        let stream = self.dev.stream.clone();
        let Engine::Uniform(u) = &self.engine else {
            return Err(NudtError::WrongType {
                expected: 1,
                actual: crate::planner::validate::type_number(self.problem.ty),
            }
            .into());
        };
        if u.grid.methods().is_none() {
            return Err(NudtError::PointsNotSet.into());
        }
        if c.len() != self.num_points {
            return Err(NudtError::Length {
                what: "strengths".into(),
                expected: self.num_points,
                got: c.len(),
            }
            .into());
        }
        let mut dc = alloc::<T>(&stream, 2 * c.len(), "strengths")?;
        if !c.is_empty() {
            stream
                .memcpy_htod(interleaved(c), &mut dc)
                .map_err(|e| driver("cuMemcpyHtoD (strengths)", e))?;
        }
        let len = u.grid.len();
        let g = alloc::<T>(&stream, 2 * len, "fine grid")?;
        memset0(
            &stream,
            ptr(&g, &stream),
            2 * len * std::mem::size_of::<T>(),
        )?;
        let _held = guard_held(&self.dev.held, &stream);
        u.grid.spread_with(
            method,
            false,
            &stream,
            ptr(&dc, &stream),
            ptr(&g, &stream),
            (0, 1),
        )?;
        let mut out = vec![Complex::<T>::default(); len];
        stream
            .memcpy_dtoh(&g.slice(..2 * len), interleaved_mut(&mut out))
            .map_err(|e| driver("cuMemcpyDtoH (fine grid)", e))?;
        stream
            .synchronize()
            .map_err(|e| driver("cuStreamSynchronize", e))?;
        Ok(out)
    }

    /// GPU times of the last `set_points` and run (execute, adjoint or gradient pass; waits
    /// for them to finish).
    pub fn timings(&self) -> CudaResult<CudaTimings> {
        let ms = |i: usize| -> CudaResult<f32> {
            if !self.dev.recorded[i] {
                return Ok(0.0);
            }
            self.dev.events[2 * i]
                .elapsed_ms(&self.dev.events[2 * i + 1])
                .map_err(|e| driver("cuEventElapsedTime", e))
        };
        Ok(CudaTimings {
            setpts_ms: ms(0)?,
            execute_ms: ms(1)?,
        })
    }

    /// Waits for all work queued by this plan.
    pub fn synchronize(&self) -> CudaResult<()> {
        self.dev
            .stream
            .synchronize()
            .map_err(|e| driver("cuStreamSynchronize", e))
    }

    /// The GPU the kernels were generated for.
    pub fn arch(&self) -> &GpuArch {
        &self.dev.arch
    }

    pub fn stream(&self) -> &Arc<CudaStream> {
        &self.dev.stream
    }
}

crate::gpu::shares::host_run!(CudaFloat, CudaDev, super::CudaError);

/// A device array's address, held for the work queued on the stream, and its length.
type Held<'a> = (usize, (u64, SyncOnDrop<'a>));

/// The number of complex values of an interleaved device array, or the typed error of an
/// odd length.
fn complex_len(len: usize) -> CudaResult<usize> {
    match len % 2 {
        0 => Ok(len / 2),
        _ => Err(NudtError::Length {
            what: "device buffers (interleaved complex, even length)".into(),
            expected: len & !1,
            got: len,
        }
        .into()),
    }
}

/// The length of a point set's arrays (0 for none).
fn len_of<T, C: DevicePtr<T>>(arrays: &[&C]) -> usize {
    arrays.first().map_or(0, |a| a.len())
}

fn ptrs<'a, T, C: DevicePtr<T>>(stream: &'a CudaStream, v: &'a [&C]) -> Vec<Held<'a>> {
    v.iter().map(|a| (a.len(), a.device_ptr(stream))).collect()
}

fn ptrs_mut<'a, T, O: DevicePtrMut<T>>(
    stream: &'a CudaStream,
    v: &'a mut [&mut O],
) -> Vec<Held<'a>> {
    v.iter_mut()
        .map(|a| (a.len(), a.device_ptr_mut(stream)))
        .collect()
}

/// Type 3's sources and targets as the derivatives read them.
fn type3_reads<'a, T, C: DevicePtr<T>>(
    stream: &'a CudaStream,
    points: Option<(&'a [&C], &'a [&C])>,
) -> Vec<(Set, Vec<Held<'a>>)> {
    points.map_or(Vec::new(), |(s, t)| {
        vec![
            (Set::Sources, ptrs(stream, s)),
            (Set::Targets, ptrs(stream, t)),
        ]
    })
}

fn addresses_in(v: &[Held<'_>]) -> Vec<(u64, usize)> {
    v.iter().map(|(n, (p, _))| (*p, *n)).collect()
}

fn addresses_of(v: &[(Set, Vec<Held<'_>>)]) -> Vec<(Set, Vec<(u64, usize)>)> {
    v.iter().map(|(s, h)| (*s, addresses_in(h))).collect()
}
