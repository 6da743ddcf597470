//! Building generated modules and launching their kernels: the program cache, buffers and
//! kernel arguments of the OpenCL NUFFT.

use super::device::ClDevice;
use super::error::{cl, OpenClError, OpenClResult};
use nudt_gen::cuda::CudaSource;
use opencl3::kernel::{ExecuteKernel, Kernel};
use opencl3::memory::{Buffer, ClMem, CL_MEM_READ_WRITE};
use opencl3::program::Program;
use opencl3::types::{cl_mem, CL_BLOCKING};
use std::collections::HashMap;
use std::sync::{Arc, Mutex, OnceLock};

/// Work-items per group of the element-wise kernels (sort, corrections, phases).
pub(crate) const ELEMENT_GROUP: usize = 64;
/// At most this many work-items for a grid-stride loop (the kernels loop over the rest).
const MAX_ITEMS: usize = 1 << 16;

/// Programs built on a device, by source hash: `clBuildProgram` runs once per module and
/// process (PoCL spends a good part of a second on each).
pub(crate) fn build(dev: &Arc<ClDevice>, src: &CudaSource) -> OpenClResult<Arc<Program>> {
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

pub(crate) fn kernel_of(program: &Program, name: &str) -> OpenClResult<Kernel> {
    Kernel::create(program, name).map_err(cl("clCreateKernel"))
}

pub(crate) fn alloc<E>(dev: &ClDevice, len: usize) -> OpenClResult<Buffer<E>> {
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

pub(crate) fn upload<E>(dev: &ClDevice, data: &[E]) -> OpenClResult<Buffer<E>> {
    let mut b = alloc::<E>(dev, data.len())?;
    write(dev, &mut b, data)?;
    Ok(b)
}

/// Copies `data` into the start of `b` (at least as long); blocks until done.
pub(crate) fn write<E>(dev: &ClDevice, b: &mut Buffer<E>, data: &[E]) -> OpenClResult<()> {
    if data.is_empty() {
        return Ok(());
    }
    // SAFETY: `b` holds at least `data.len()` elements (allocated so by the callers); the
    // write blocks.
    unsafe { dev.queue.enqueue_write_buffer(b, CL_BLOCKING, 0, data, &[]) }
        .map(|_| ())
        .map_err(cl("clEnqueueWriteBuffer"))
}

/// Copies the start of `b` into `data`; blocks until the queue's earlier work is done.
pub(crate) fn read<E>(dev: &ClDevice, b: &Buffer<E>, data: &mut [E]) -> OpenClResult<()> {
    if data.is_empty() {
        return Ok(());
    }
    // SAFETY: `b` holds at least `data.len()` elements; the read blocks.
    unsafe { dev.queue.enqueue_read_buffer(b, CL_BLOCKING, 0, data, &[]) }
        .map(|_| ())
        .map_err(cl("clEnqueueReadBuffer"))
}

pub(crate) fn zero<E: Copy + Default>(
    dev: &ClDevice,
    b: &mut Buffer<E>,
    len: usize,
) -> OpenClResult<()> {
    if len == 0 {
        return Ok(());
    }
    // SAFETY: fills `len` elements of a buffer at least that long.
    unsafe {
        dev.queue
            .enqueue_fill_buffer(b, &[E::default()], 0, len * std::mem::size_of::<E>(), &[])
    }
    .map(|_| ())
    .map_err(cl("clEnqueueFillBuffer"))
}

/// A kernel argument: a buffer (or none, for an unused dimension), a scalar, or the bytes of
/// a `__local` array (the subproblem kernels' box and staged points).
pub(crate) enum Arg {
    Mem(Option<cl_mem>),
    Local(usize),
    U32(u32),
    I32(i32),
    U64(u64),
    F64(f64),
}

pub(crate) fn mem<E>(b: &Buffer<E>) -> Arg {
    Arg::Mem(Some(b.get()))
}

pub(crate) fn opt_mem<E>(b: Option<&Buffer<E>>) -> Arg {
    Arg::Mem(b.map(|b| b.get()))
}

/// Enqueues `k` over `items` work-items (rounded up to whole groups of `group`, at most
/// [`MAX_ITEMS`]: the kernels loop grid-stride over the rest) × `ny`.
pub(crate) fn launch(
    dev: &ClDevice,
    k: &Kernel,
    items: usize,
    group: usize,
    ny: usize,
    args: &[Arg],
) -> OpenClResult<()> {
    let items = items.clamp(1, MAX_ITEMS).div_ceil(group) * group;
    enqueue(dev, k, items, group, ny, args)
}

/// Enqueues `k` as `groups` work-groups of `group` work-items × `ny` (the subproblem
/// kernels: one group per subproblem).
pub(crate) fn launch_groups(
    dev: &ClDevice,
    k: &Kernel,
    groups: usize,
    group: usize,
    ny: usize,
    args: &[Arg],
) -> OpenClResult<()> {
    enqueue(dev, k, groups.max(1) * group, group, ny, args)
}

fn enqueue(
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
        // declared widths: unsigned = u32, int = i32, u64 = ulong, double = f64; a local
        // array's size where the kernel's trailing `__local` parameter is).
        unsafe {
            match a {
                Arg::Mem(Some(m)) => e.set_arg(m),
                Arg::Local(bytes) => e.set_arg_local_buffer(*bytes),
                Arg::Mem(None) => e.set_arg(&std::ptr::null_mut::<std::ffi::c_void>()),
                Arg::U32(v) => e.set_arg(v),
                Arg::I32(v) => e.set_arg(v),
                Arg::U64(v) => e.set_arg(v),
                Arg::F64(v) => e.set_arg(v),
            };
        }
    }
    // SAFETY: the arguments are set above; the kernels loop grid-stride over their ranges, and
    // the subproblem kernels return from groups past their count.
    unsafe {
        e.set_global_work_sizes(&[items, ny])
            .set_local_work_sizes(&[group, 1])
            .enqueue_nd_range(&dev.queue)
    }
    .map(|_| ())
    .map_err(cl("clEnqueueNDRangeKernel"))
}
