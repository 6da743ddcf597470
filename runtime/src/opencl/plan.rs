//! NUFFTs of types 1 and 2 on an OpenCL device: the CUDA backend's bin sort, GM-sort
//! spreading and interpolation and mode corrections, rendered in OpenCL C from the same
//! templates (`nudt_gen::cuda::spread_module_in`, `common_module_in`), and the generated FFT
//! ([`ClFft`]).
//!
//! Set-points bins the points on the device (bin index and rank by atomics, a prefix sum of
//! the bin counts on the host, a scatter into bin order); execute runs, per transform,
//! spread → FFT → correct (type 1) or correct → FFT → interpolate (type 2). Host slices in and
//! out.

use super::device::ClDevice;
use super::error::{cl, OpenClError, OpenClResult};
use super::fft::{ClFft, ClFloat};
use crate::error::NudtError;
use crate::uniform::ModeOrder;
use nudt_gen::cuda::{
    choose_bins, common_module_in, names, spread_module_in, CudaSource, CudaSpreadSpec, GM_THREADS,
    MAX_SUBPROBLEM,
};
use nudt_gen::fft::FftDirection;
use nudt_gen::{plan as gplan, KernelKind, KernelSpec, TransformType, Upsampling};
use num_complex::Complex;
use opencl3::kernel::{ExecuteKernel, Kernel};
use opencl3::memory::{Buffer, ClMem, CL_MEM_READ_WRITE};
use opencl3::program::Program;
use opencl3::types::{cl_mem, CL_BLOCKING};
use std::collections::HashMap;
use std::sync::{Arc, Mutex, OnceLock};

/// Options of an OpenCL plan; the defaults are what a FINUFFT user expects.
#[derive(Clone, Debug)]
pub struct ClOptions {
    pub kernel: KernelKind,
    pub upsampling: Upsampling,
    pub mode_order: ModeOrder,
    /// The device; `None`: [`ClDevice::first`].
    pub device: Option<Arc<ClDevice>>,
}

impl Default for ClOptions {
    fn default() -> Self {
        ClOptions {
            kernel: KernelKind::Pswf,
            upsampling: Upsampling::TWO,
            mode_order: ModeOrder::Cmcl,
            device: None,
        }
    }
}

/// Work-items per group of the element-wise kernels (sort, corrections).
const ELEMENT_GROUP: usize = 64;
/// At most this many work-items for a grid-stride loop (the kernels loop over the rest).
const MAX_ITEMS: usize = 1 << 16;

/// Programs built on a device, by source hash: `clBuildProgram` runs once per module and
/// process (PoCL spends a good part of a second on each).
fn build(dev: &Arc<ClDevice>, src: &CudaSource) -> OpenClResult<Arc<Program>> {
    type Cache = Mutex<HashMap<(usize, u64), Arc<Program>>>;
    static CACHE: OnceLock<Cache> = OnceLock::new();
    let key = (Arc::as_ptr(dev) as usize, src.hash);
    let cache = CACHE.get_or_init(Default::default);
    if let Some(p) = cache.lock().expect("cache lock").get(&key) {
        return Ok(p.clone());
    }
    let program =
        Program::create_and_build_from_source(&dev.context, &src.source, "").map_err(|log| {
            OpenClError::Build {
                module: src.name.clone(),
                device: dev.info.name.clone(),
                log,
            }
        })?;
    let program = Arc::new(program);
    cache
        .lock()
        .expect("cache lock")
        .insert(key, program.clone());
    Ok(program)
}

fn kernel_of(program: &Program, name: &str) -> OpenClResult<Kernel> {
    Kernel::create(program, name).map_err(cl("clCreateKernel"))
}

fn alloc<E>(dev: &ClDevice, len: usize) -> OpenClResult<Buffer<E>> {
    // SAFETY: no host pointer; every buffer is written before it is read.
    unsafe {
        Buffer::<E>::create(
            &dev.context,
            CL_MEM_READ_WRITE,
            len.max(1),
            std::ptr::null_mut(),
        )
    }
    .map_err(cl("clCreateBuffer"))
}

fn upload<E>(dev: &ClDevice, data: &[E]) -> OpenClResult<Buffer<E>> {
    let mut b = alloc::<E>(dev, data.len())?;
    if !data.is_empty() {
        // SAFETY: `b` holds `data.len()` elements; the write blocks.
        unsafe {
            dev.queue
                .enqueue_write_buffer(&mut b, CL_BLOCKING, 0, data, &[])
        }
        .map_err(cl("clEnqueueWriteBuffer"))?;
    }
    Ok(b)
}

fn zero<E: Copy + Default>(dev: &ClDevice, b: &mut Buffer<E>, len: usize) -> OpenClResult<()> {
    // SAFETY: fills `len` elements of a buffer at least that long.
    unsafe {
        dev.queue
            .enqueue_fill_buffer(b, &[E::default()], 0, len * std::mem::size_of::<E>(), &[])
    }
    .map(|_| ())
    .map_err(cl("clEnqueueFillBuffer"))
}

/// A kernel argument: a buffer (or none, for an unused dimension) or a scalar.
enum Arg {
    Mem(Option<cl_mem>),
    U32(u32),
    I32(i32),
    U64(u64),
}

fn mem<E>(b: &Buffer<E>) -> Arg {
    Arg::Mem(Some(b.get()))
}

fn opt_mem<E>(b: Option<&Buffer<E>>) -> Arg {
    Arg::Mem(b.map(|b| b.get()))
}

/// Enqueues `k` over `items` work-items (rounded up to whole groups of `group`) × `ny`.
fn launch(
    dev: &ClDevice,
    k: &Kernel,
    items: usize,
    group: usize,
    ny: usize,
    args: &[Arg],
) -> OpenClResult<()> {
    let mut e = ExecuteKernel::new(k);
    for a in args {
        // SAFETY: the arguments follow the kernel's parameter list in the generated source
        // (buffers as cl_mem, a null cl_mem for an unused dimension's array, scalars of the
        // declared widths: unsigned = u32, int = i32, u64 = ulong).
        unsafe {
            match a {
                Arg::Mem(Some(m)) => e.set_arg(m),
                Arg::Mem(None) => e.set_arg(&std::ptr::null_mut::<std::ffi::c_void>()),
                Arg::U32(v) => e.set_arg(v),
                Arg::I32(v) => e.set_arg(v),
                Arg::U64(v) => e.set_arg(v),
            };
        }
    }
    let items = items.clamp(1, MAX_ITEMS).div_ceil(group) * group;
    // SAFETY: the arguments are set above; the kernels loop grid-stride over their ranges.
    unsafe {
        e.set_global_work_sizes(&[items, ny])
            .set_local_work_sizes(&[group, 1])
            .enqueue_nd_range(&dev.queue)
    }
    .map(|_| ())
    .map_err(cl("clEnqueueNDRangeKernel"))
}

/// Points sorted into bins: one record per point (its index and coordinates, the generated
/// `Pt` struct of [`CudaSpreadSpec::point_bytes`] bytes), in bin order.
struct Sorted {
    m: usize,
    pts: Buffer<u8>,
}

/// A NUFFT plan of type 1 or 2 in 1–3 dimensions on an OpenCL device.
pub struct ClPlan<T: ClFloat> {
    ty: TransformType,
    dim: usize,
    isign: i32,
    ntransf: usize,
    tol: f64,
    kernel: KernelSpec,
    modes: [usize; 3],
    /// Fine grid and bin counts per dimension (1 for unused ones).
    n: [usize; 3],
    nb: [usize; 3],
    len: usize,
    spec: CudaSpreadSpec,
    bin_count: Kernel,
    bin_scatter: Kernel,
    spread_gm: Kernel,
    interp_gm: Kernel,
    to_modes: Kernel,
    to_grid: Kernel,
    fft: ClFft<T>,
    gi: Vec<Buffer<i32>>,
    cf: Vec<Buffer<T>>,
    grid: Buffer<T>,
    sorted: Option<Sorted>,
    /// Device copies of one transform's input and output.
    io: Option<(Buffer<T>, Buffer<T>)>,
    /// Programs the kernels came from (kept alive with them), then the device, dropped last.
    _programs: [Arc<Program>; 2],
    dev: Arc<ClDevice>,
}

impl<T: ClFloat> std::fmt::Debug for ClPlan<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ClPlan")
            .field("type", &self.ty)
            .field("modes", &&self.modes[..self.dim])
            .field("fine_grid", &&self.n[..self.dim])
            .field("width", &self.kernel.width)
            .field("device", &self.dev.info.name)
            .finish()
    }
}

impl<T: ClFloat> ClPlan<T> {
    /// A type 1 or 2 plan with `modes[d]` modes along dimension d; `ntransf` transforms share
    /// the points. Type 3 is not built for OpenCL yet: it is refused with a typed error.
    pub fn new(
        ty: TransformType,
        modes: &[usize],
        isign: i32,
        ntransf: usize,
        tol: f64,
        opts: ClOptions,
    ) -> OpenClResult<Self> {
        let dim = modes.len();
        if ty == TransformType::Type3 {
            return Err(OpenClError::NotYet("type 3"));
        }
        if !(1..=3).contains(&dim) {
            return Err(nudt_gen::GenError::Dimension(dim).into());
        }
        if isign != 1 && isign != -1 {
            return Err(NudtError::Sign(isign).into());
        }
        if ntransf == 0 {
            return Err(NudtError::ZeroTransforms.into());
        }
        if let Some(&m) = modes.iter().find(|&&m| m == 0) {
            return Err(nudt_gen::GenError::Modes(m).into());
        }
        let kernel = KernelSpec::for_tolerance(opts.kernel, tol, opts.upsampling, T::PRECISION)?;
        let dev = match opts.device {
            Some(d) => d,
            None => ClDevice::first()?,
        };
        let unsupported = |e: nudt_gen::GenError| match e {
            nudt_gen::GenError::Fp64Unsupported => OpenClError::Unsupported {
                device: dev.info.name.clone(),
                source: e,
            },
            e => e.into(),
        };
        let m3: [usize; 3] = std::array::from_fn(|d| modes.get(d).copied().unwrap_or(1));
        let mut n = [1usize; 3];
        for d in 0..dim {
            n[d] = gplan::fine_size_cufft(modes[d], &kernel)?;
            if n[d] > i32::MAX as usize / 2 {
                return Err(NudtError::GridOverflow.into());
            }
        }
        let len = n
            .iter()
            .try_fold(1usize, |a, &b| a.checked_mul(b))
            .filter(|l| l.checked_mul(2 * std::mem::size_of::<T>()).is_some())
            .ok_or(NudtError::GridOverflow)?;
        let dialect = dev.info.fft_device().dialect;
        let spec = CudaSpreadSpec {
            dim,
            kernel,
            precision: T::PRECISION,
            bins: choose_bins(dim, kernel.width, T::PRECISION, dev.info.local_mem),
            max_subproblem: MAX_SUBPROBLEM,
        };
        let spread_src = spread_module_in(&spec, dialect).map_err(unsupported)?;
        let common_src = common_module_in(T::PRECISION, dialect).map_err(unsupported)?;
        let spec = spread_src
            .spec
            .clone()
            .expect("spread modules carry their spec");
        let nb: [usize; 3] = std::array::from_fn(|d| n[d].div_ceil(spec.bins[d]));
        let spread = build(&dev, &spread_src)?;
        let common = build(&dev, &common_src)?;
        let fft = ClFft::<T>::new(&dev, &n[..dim], 1)?;

        // Where each user mode lives on the fine grid and its correction 1 / ψ̂(k).
        let ft = kernel.fourier();
        let (mut gi, mut cf) = (Vec::new(), Vec::new());
        for d in 0..3 {
            let (g, c): (Vec<i32>, Vec<T>) = if d < dim {
                let step = 2.0 * std::f64::consts::PI / n[d] as f64;
                (0..m3[d])
                    .map(|i| {
                        let k = opts.mode_order.mode(i, m3[d]);
                        (
                            k.rem_euclid(n[d] as i64) as i32,
                            T::of(1.0 / ft.at(step * k as f64)),
                        )
                    })
                    .unzip()
            } else {
                (vec![0], vec![T::one()])
            };
            gi.push(upload(&dev, &g)?);
            cf.push(upload(&dev, &c)?);
        }
        let grid = alloc::<T>(&dev, 2 * len)?;
        Ok(ClPlan {
            ty,
            dim,
            isign,
            ntransf,
            tol,
            kernel,
            modes: m3,
            n,
            nb,
            len,
            spec,
            bin_count: kernel_of(&spread, names::BIN_COUNT)?,
            bin_scatter: kernel_of(&spread, names::BIN_SCATTER)?,
            spread_gm: kernel_of(&spread, names::SPREAD_GM)?,
            interp_gm: kernel_of(&spread, names::INTERP_GM)?,
            to_modes: kernel_of(&common, names::GRID_TO_MODES)?,
            to_grid: kernel_of(&common, names::MODES_TO_GRID)?,
            fft,
            gi,
            cf,
            grid,
            sorted: None,
            io: None,
            _programs: [spread, common],
            dev,
        })
    }

    /// Sets the nonuniform points (radians, any finite value) and bin-sorts them on the
    /// device.
    pub fn set_points(&mut self, coords: &[&[T]]) -> OpenClResult<()> {
        let names = ["x", "y", "z"];
        if coords.len() != self.dim {
            return Err(NudtError::Coordinates {
                expected: self.dim,
                got: coords.len(),
            }
            .into());
        }
        let m = coords[0].len();
        for (d, c) in coords.iter().enumerate() {
            if c.len() != m {
                return Err(NudtError::Length {
                    what: format!("{} coordinates", names[d]),
                    expected: m,
                    got: c.len(),
                }
                .into());
            }
            if let Some(index) = c.iter().position(|x| !x.is_finite()) {
                return Err(NudtError::NonFinite {
                    what: names[d],
                    index,
                    value: c[index].wide(),
                }
                .into());
            }
        }
        if m > u32::MAX as usize / 2 {
            return Err(NudtError::TooManyPoints(m).into());
        }
        self.sorted = None;
        let dev = self.dev.clone();
        let x: Vec<Buffer<T>> = coords
            .iter()
            .map(|c| upload(&dev, c))
            .collect::<Result<_, _>>()?;
        let nbins = self.nb.iter().product::<usize>();
        let rank = alloc::<u32>(&dev, m)?;
        let mut counts = alloc::<u32>(&dev, nbins)?;
        zero(&dev, &mut counts, nbins)?;
        let (n, nb) = (self.n, self.nb);
        let i = |v: usize| Arg::I32(v as i32);
        let xs = |d: usize| opt_mem(x.get(d));
        if m > 0 {
            launch(
                &dev,
                &self.bin_count,
                m,
                ELEMENT_GROUP,
                1,
                &[
                    Arg::U32(m as u32),
                    xs(0),
                    xs(1),
                    xs(2),
                    i(n[0]),
                    i(n[1]),
                    i(n[2]),
                    i(nb[1]),
                    i(nb[2]),
                    mem(&rank),
                    mem(&counts),
                ],
            )?;
        }
        // The prefix sum of the bin counts, on the host (OpenCL C 1.2 has no warp shuffles
        // for the CUDA template's scan; a local-memory scan is the next step).
        let mut c = vec![0u32; nbins];
        // SAFETY: `counts` holds `nbins` u32; the read blocks.
        unsafe {
            dev.queue
                .enqueue_read_buffer(&counts, CL_BLOCKING, 0, &mut c, &[])
        }
        .map_err(cl("clEnqueueReadBuffer"))?;
        let mut starts = Vec::with_capacity(nbins + 1);
        let mut acc = 0u32;
        for v in c {
            starts.push(acc);
            acc += v;
        }
        starts.push(acc);
        let starts = upload(&dev, &starts)?;
        let sorted = Sorted {
            m,
            pts: alloc::<u8>(&dev, m * self.spec.point_bytes())?,
        };
        if m > 0 {
            launch(
                &dev,
                &self.bin_scatter,
                m,
                ELEMENT_GROUP,
                1,
                &[
                    Arg::U32(m as u32),
                    xs(0),
                    xs(1),
                    xs(2),
                    i(n[0]),
                    i(n[1]),
                    i(n[2]),
                    i(nb[1]),
                    i(nb[2]),
                    mem(&rank),
                    mem(&starts),
                    mem(&sorted.pts),
                ],
            )?;
        }
        dev.queue.finish().map_err(cl("clFinish"))?;
        self.sorted = Some(sorted);
        Ok(())
    }

    /// Elements of one transform's input and output.
    fn lengths(&self) -> (usize, usize) {
        let m = self.sorted.as_ref().map_or(0, |s| s.m);
        let modes: usize = self.modes.iter().product();
        match self.ty {
            TransformType::Type1 => (m, modes),
            _ => (modes, m),
        }
    }

    /// Runs the transform on `ntransf` stacked host inputs: type 1 strengths (M each) →
    /// modes; type 2 modes → values at the points (M each).
    pub fn execute(&mut self, input: &[Complex<T>], output: &mut [Complex<T>]) -> OpenClResult<()> {
        let Some(s) = self.sorted.as_ref() else {
            return Err(NudtError::PointsNotSet.into());
        };
        let m = s.m;
        let (a, b) = self.lengths();
        let (what_in, what_out) = match self.ty {
            TransformType::Type1 => ("strengths", "modes"),
            _ => ("modes", "values"),
        };
        for (what, got, one) in [(what_in, input.len(), a), (what_out, output.len(), b)] {
            if got != one * self.ntransf {
                return Err(NudtError::Length {
                    what: what.into(),
                    expected: one * self.ntransf,
                    got,
                }
                .into());
            }
        }
        if m == 0 {
            output.iter_mut().for_each(|v| *v = Complex::default());
            return Ok(());
        }
        let dev = self.dev.clone();
        let (mut din, dout) = match self.io.take() {
            Some(io) => io,
            None => (alloc::<T>(&dev, 2 * a)?, alloc::<T>(&dev, 2 * b)?),
        };
        let mut r = Ok(());
        for (x, y) in input.chunks(a).zip(output.chunks_mut(b)) {
            r = self.one(&mut din, &dout, x, y);
            if r.is_err() {
                break;
            }
        }
        self.io = Some((din, dout));
        r
    }

    /// One transform through the device copies `din` and `dout`.
    fn one(
        &mut self,
        din: &mut Buffer<T>,
        dout: &Buffer<T>,
        x: &[Complex<T>],
        y: &mut [Complex<T>],
    ) -> OpenClResult<()> {
        let dev = self.dev.clone();
        let q = &dev.queue;
        // SAFETY: `din` holds `2·x.len()` reals; the write blocks.
        unsafe { q.enqueue_write_buffer(din, CL_BLOCKING, 0, crate::float::interleaved(x), &[]) }
            .map_err(cl("clEnqueueWriteBuffer"))?;
        zero(&dev, &mut self.grid, 2 * self.len)?;
        let s = self.sorted.as_ref().expect("checked by execute");
        let (n, len, m) = (self.n, self.len, s.m);
        let i = |v: usize| Arg::I32(v as i32);
        let nmodes: usize = self.modes.iter().product();
        let map = |from: &Buffer<T>, to: &Buffer<T>| {
            vec![
                Arg::U64(nmodes as u64),
                i(self.modes[1]),
                i(self.modes[2]),
                mem(&self.gi[0]),
                mem(&self.gi[1]),
                mem(&self.gi[2]),
                mem(&self.cf[0]),
                mem(&self.cf[1]),
                mem(&self.cf[2]),
                mem(from),
                mem(to),
                i(n[1]),
                i(n[2]),
                Arg::U64(len as u64),
                Arg::U64(nmodes as u64),
            ]
        };
        // spread_gm takes (strengths, grid), interp_gm (grid, values): the same positions.
        let points = |from: &Buffer<T>, to: &Buffer<T>| {
            vec![
                Arg::U32(m as u32),
                mem(&s.pts),
                mem(from),
                mem(to),
                i(n[0]),
                i(n[1]),
                i(n[2]),
                Arg::I32(1),
                Arg::U64(m as u64),
                Arg::U64(len as u64),
            ]
        };
        let dir = if self.isign < 0 {
            FftDirection::Forward
        } else {
            FftDirection::Inverse
        };
        let gm = GM_THREADS as usize;
        let grid = &self.grid;
        if self.ty == TransformType::Type1 {
            launch(&dev, &self.spread_gm, m, gm, 1, &points(din, grid))?;
            self.fft.execute(grid, grid, dir)?;
            launch(
                &dev,
                &self.to_modes,
                nmodes,
                ELEMENT_GROUP,
                1,
                &map(grid, dout),
            )?;
        } else {
            launch(
                &dev,
                &self.to_grid,
                nmodes,
                ELEMENT_GROUP,
                1,
                &map(din, grid),
            )?;
            self.fft.execute(grid, grid, dir)?;
            launch(&dev, &self.interp_gm, m, gm, 1, &points(grid, dout))?;
        }
        // SAFETY: `dout` holds `2·y.len()` reals; the read blocks until the work is done.
        unsafe {
            q.enqueue_read_buffer(dout, CL_BLOCKING, 0, crate::float::interleaved_mut(y), &[])
        }
        .map_err(cl("clEnqueueReadBuffer"))?;
        Ok(())
    }

    pub fn transform_type(&self) -> TransformType {
        self.ty
    }

    pub fn dim(&self) -> usize {
        self.dim
    }

    pub fn kernel(&self) -> &KernelSpec {
        &self.kernel
    }

    pub fn width(&self) -> usize {
        self.kernel.width
    }

    pub fn tolerance(&self) -> f64 {
        self.tol
    }

    pub fn ntransf(&self) -> usize {
        self.ntransf
    }

    /// The fine grid the FFT runs on.
    pub fn fine_grid(&self) -> Vec<usize> {
        self.n[..self.dim].to_vec()
    }

    /// Bin sides of the sort.
    pub fn bins(&self) -> Vec<usize> {
        self.spec.bins[..self.dim].to_vec()
    }

    /// The device the plan runs on.
    pub fn device(&self) -> &Arc<ClDevice> {
        &self.dev
    }
}
