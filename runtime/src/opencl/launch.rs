//! Building generated modules and launching their kernels: the program cache, buffers and
//! kernel arguments of the OpenCL NUFFT.

use super::device::ClDevice;
use super::error::{cl, device_call, OpenClError, OpenClResult};
use crate::gpu::device::Device;
use nudt_gen::gpu::{declaration, fnv1a64, ArgMismatch, GpuSource, KernelDecl};
use opencl3::kernel::ExecuteKernel;
use opencl3::memory::{Buffer, ClMem, CL_MEM_READ_WRITE};
use opencl3::program::Program;
use opencl3::types::{cl_mem, CL_BLOCKING};
use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::{Arc, Mutex, OnceLock};

/// Work-items per group of the element-wise kernels (sort, corrections, phases).
pub(crate) const ELEMENT_GROUP: usize = 64;
/// At most this many work-items for a grid-stride loop (the kernels loop over the rest).
const MAX_ITEMS: usize = 1 << 16;

/// Where a program came from, for diagnostics and tests.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ProgramOrigin {
    /// Built earlier in this process on this device.
    Memory,
    /// The device's binary, read from the disk cache.
    Disk,
    /// Built from source now (also when the disk cache held a binary the driver refused).
    Compiled,
}

/// Where built programs are kept between runs: `$NUDT_OPENCL_CACHE` (`off` disables the disk
/// cache), else `$XDG_CACHE_HOME/nudt/opencl`, else `~/.cache/nudt/opencl`.
pub fn cache_dir() -> Option<PathBuf> {
    crate::profile::module_cache_dir("NUDT_OPENCL_CACHE", "opencl")
}

/// OpenCL C source to build: a generated module's name, source and source hash.
#[derive(Clone, Copy, Debug)]
pub struct ClSource<'a> {
    pub name: &'a str,
    pub source: &'a str,
    pub hash: u64,
}

impl<'a> From<&'a GpuSource> for ClSource<'a> {
    fn from(s: &'a GpuSource) -> Self {
        ClSource {
            name: &s.name,
            source: &s.source,
            hash: s.hash,
        }
    }
}

/// The cache key of `src` on `dev`: module name, source hash, and a hash of the platform,
/// device and driver version (a new driver may build differently, or refuse old binaries).
fn cache_key(dev: &ClDevice, src: ClSource) -> String {
    let i = &dev.info;
    let who = format!("{}\n{}\n{}", i.platform, i.name, i.driver);
    format!(
        "{}-{:016x}-{:016x}",
        src.name,
        src.hash,
        fnv1a64(who.as_bytes())
    )
}

/// `src` built on `dev` through the caches: in memory (`clBuildProgram` runs once per module
/// and process; PoCL spends a good part of a second on each, NVIDIA's compiler up to a few),
/// then on disk, the device's program binary (`CL_PROGRAM_BINARIES`) under
/// [`cache_dir`]. A cached binary the driver refuses is built again from source and replaced:
/// the caches are an optimisation, never a reason to fail.
pub fn load_program(
    dev: &Arc<ClDevice>,
    src: ClSource,
) -> OpenClResult<(Arc<Program>, ProgramOrigin)> {
    type Cache = Mutex<HashMap<(u64, String), Arc<Program>>>;
    static CACHE: OnceLock<Cache> = OnceLock::new();
    let key = cache_key(dev, src);
    let mem_key = (dev.id, key.clone());
    let cache = CACHE.get_or_init(Default::default);
    if let Some(p) = cache.lock().expect("cache lock").get(&mem_key) {
        return Ok((p.clone(), ProgramOrigin::Memory));
    }
    let path = cache_dir().map(|d| d.join(format!("{key}.bin")));
    // A binary the driver refuses (damaged, cut short, another driver's) is a miss.
    let from_disk = path
        .as_ref()
        .and_then(|p| std::fs::read(p).ok())
        .and_then(|bin| Program::create_and_build_from_binary(&dev.context, &[&bin[..]], "").ok());
    let (program, origin) = match from_disk {
        Some(p) => (p, ProgramOrigin::Disk),
        None => {
            let p = Program::create_and_build_from_source(&dev.context, src.source, "").map_err(
                |log| OpenClError::Build {
                    module: src.name.to_string(),
                    device: dev.info.name.clone(),
                    log,
                },
            )?;
            if let (Some(path), Ok(bins)) = (&path, p.get_binaries()) {
                crate::profile::store_cached(path, bins.first().map_or(&[][..], |b| &b[..]));
            }
            (p, ProgramOrigin::Compiled)
        }
    };
    let program = Arc::new(program);
    cache
        .lock()
        .expect("cache lock")
        .insert(mem_key, program.clone());
    Ok((program, origin))
}

/// [`load_program`]'s program.
pub(crate) fn build(dev: &Arc<ClDevice>, src: &GpuSource) -> OpenClResult<Arc<Program>> {
    load_program(dev, src.into()).map(|(p, _)| p)
}

/// A generated entry point and its declared signature, which every launch's arguments are
/// checked against.
pub(crate) struct Kernel {
    raw: opencl3::kernel::Kernel,
    decl: &'static KernelDecl,
}

impl Kernel {
    /// The driver's kernel object, for its work-group queries.
    pub(crate) fn raw(&self) -> &opencl3::kernel::Kernel {
        &self.raw
    }
}

/// Entry point `name` of `program`, with its declaration (a name without one is the
/// generator's [`nudt_gen::GenError::Render`]).
pub(crate) fn kernel_of(program: &Program, name: &str) -> OpenClResult<Kernel> {
    let decl = declaration(name).ok_or_else(|| {
        OpenClError::Gen(nudt_gen::GenError::Render(format!(
            "{name} has no declared signature"
        )))
    })?;
    let raw = opencl3::kernel::Kernel::create(program, name).map_err(cl("clCreateKernel"))?;
    Ok(Kernel { raw, decl })
}

pub(crate) fn alloc<E>(dev: &ClDevice, len: usize) -> OpenClResult<Buffer<E>> {
    device_call("clCreateBuffer")?;
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
    write_at(dev, b, 0, data)
}

/// Copies `data` into `b` from element `first` on; blocks until done.
pub(crate) fn write_at<E>(
    dev: &ClDevice,
    b: &mut Buffer<E>,
    first: usize,
    data: &[E],
) -> OpenClResult<()> {
    if data.is_empty() {
        return Ok(());
    }
    let offset = first * std::mem::size_of::<E>();
    device_call("clEnqueueWriteBuffer")?;
    // SAFETY: `b` holds at least `first + data.len()` elements (allocated so by the callers);
    // the write blocks.
    unsafe {
        dev.queue
            .enqueue_write_buffer(b, CL_BLOCKING, offset, data, &[])
    }
    .map(drop)
    .map_err(cl("clEnqueueWriteBuffer"))
}

/// Copies the start of `b` into `data`; blocks until the queue's earlier work is done.
pub(crate) fn read<E>(dev: &ClDevice, b: &Buffer<E>, data: &mut [E]) -> OpenClResult<()> {
    read_at(dev, b, 0, data)
}

/// Copies `b` from element `first` on into `data`; blocks until the queue's earlier work is
/// done.
pub(crate) fn read_at<E>(
    dev: &ClDevice,
    b: &Buffer<E>,
    first: usize,
    data: &mut [E],
) -> OpenClResult<()> {
    if data.is_empty() {
        return Ok(());
    }
    let offset = first * std::mem::size_of::<E>();
    device_call("clEnqueueReadBuffer")?;
    // SAFETY: `b` holds at least `first + data.len()` elements (the callers' lengths); the
    // read blocks.
    unsafe {
        dev.queue
            .enqueue_read_buffer(b, CL_BLOCKING, offset, data, &[])
    }
    .map(|_| ())
    .map_err(cl("clEnqueueReadBuffer"))
}

/// Copies `bytes` from `src` at byte `from` to `dst` at byte `to`, in queue order.
pub(crate) fn copy<E>(
    dev: &ClDevice,
    src: &Buffer<E>,
    from: usize,
    dst: &mut Buffer<E>,
    to: usize,
    bytes: usize,
) -> OpenClResult<()> {
    if bytes == 0 {
        return Ok(());
    }
    device_call("clEnqueueCopyBuffer")?;
    // SAFETY: the callers check both ranges against the buffers' sizes.
    unsafe {
        dev.queue
            .enqueue_copy_buffer(src, dst, from, to, bytes, &[])
    }
    .map(|_| ())
    .map_err(cl("clEnqueueCopyBuffer"))
}

/// Elements of `E` that `b` holds.
pub(crate) fn elements<E>(b: &Buffer<E>) -> OpenClResult<usize> {
    let bytes = b.size().map_err(cl("clGetMemObjectInfo"))?;
    Ok(bytes / std::mem::size_of::<E>().max(1))
}

/// Another owner of `b`'s memory object (OpenCL counts its references): how a plan holds
/// the caller's coordinate buffers, which its kernels read at every execute.
pub(crate) fn share<E>(b: &Buffer<E>) -> OpenClResult<Buffer<E>> {
    owner(b.get())
}

/// Another owner of the memory object `m` (the caller's buffer, borrowed meanwhile),
/// released on drop: a `Buffer` for the calls that take one.
pub(crate) fn owner<E>(m: cl_mem) -> OpenClResult<Buffer<E>> {
    // SAFETY: `m` is a live memory object; the new owner's drop releases this retain.
    unsafe { opencl3::memory::retain_mem_object(m) }
        .map_err(|e| cl("clRetainMemObject")(opencl3::error_codes::ClError(e)))?;
    Ok(Buffer::new(m))
}

pub(crate) fn zero<E: Copy + Default>(
    dev: &ClDevice,
    b: &mut Buffer<E>,
    len: usize,
) -> OpenClResult<()> {
    if len == 0 {
        return Ok(());
    }
    device_call("clEnqueueFillBuffer")?;
    // SAFETY: fills `len` elements of a buffer at least that long.
    unsafe {
        dev.queue
            .enqueue_fill_buffer(b, &[E::default()], 0, len * std::mem::size_of::<E>(), &[])
    }
    .map(|_| ())
    .map_err(cl("clEnqueueFillBuffer"))
}

/// A kernel argument: a memory object (or none, for an unused dimension's array), a scalar,
/// or the bytes of a `__local` array (the subproblem kernels' box and staged points), which
/// comes last.
pub(crate) type Arg = crate::gpu::device::Arg<Option<cl_mem>>;

/// Refuses `args` unless they fill `decl`'s parameters in order, followed by local memory
/// exactly where the kernel takes it.
fn check(decl: &KernelDecl, args: &[Arg]) -> Result<(), ArgMismatch> {
    let (values, local) = match args.split_last() {
        Some((Arg::Local(_), values)) => (values, true),
        _ => (args, false),
    };
    // Local memory anywhere else ends the kinds early: a count the check refuses.
    decl.check(values.iter().map_while(Arg::kind), Some(local))?;
    if values.iter().any(|a| a.kind().is_none()) {
        return Err(ArgMismatch::UnexpectedLocal { kernel: decl.name });
    }
    Ok(())
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

/// Enqueues `k` over exactly `items` work-items (a multiple of `group`) × `ny`: the
/// subproblem kernels, one group per subproblem.
pub(crate) fn enqueue(
    dev: &ClDevice,
    k: &Kernel,
    items: usize,
    group: usize,
    ny: usize,
    args: &[Arg],
) -> OpenClResult<()> {
    check(k.decl, args)?;
    device_call(k.decl.name)?;
    let mut e = ExecuteKernel::new(&k.raw);
    for a in args {
        // SAFETY: the arguments match the kernel's declared parameters (checked above; the
        // source's prototype is rendered from the declaration): buffers as cl_mem, a null
        // cl_mem for an unused dimension's array, scalars of the declared widths (unsigned =
        // u32, int = i32, u64 = ulong, double = f64), a local array's size where the kernel's
        // trailing `__local` parameter is.
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
    // Devices opened again on one device (the emulation of several GPUs) run their kernels
    // one at a time, each to its end: PoCL 3.1's CPU driver counts a compiled kernel's uses
    // without a lock, and aborts (`pocl_release_dlhandle_cache`) when the queues of several
    // contexts run the same kernel at once.
    static TWINS: std::sync::Mutex<()> = std::sync::Mutex::new(());
    let _one = dev
        .twin
        .then(|| TWINS.lock().unwrap_or_else(|e| e.into_inner()));
    // SAFETY: the arguments are set above; the kernels loop grid-stride over their ranges, and
    // the subproblem kernels return from groups past their count.
    unsafe {
        e.set_global_work_sizes(&[items, ny])
            .set_local_work_sizes(&[group, 1])
            .enqueue_nd_range(&dev.queue)
    }
    .map_err(cl("clEnqueueNDRangeKernel"))?;
    match dev.twin {
        true => dev.queue.finish().map_err(cl("clFinish")),
        false => Ok(()),
    }
}

/// The shared GPU code's device API ([`Device`]) on a device's queue: arrays are `Buffer`s,
/// handled by their memory objects, element-wise kernels launched in groups of
/// [`ELEMENT_GROUP`].
impl<T: Copy + Default> Device<T> for ClDevice {
    type Error = OpenClError;
    type Buf = Buffer<T>;
    type Mem = Option<cl_mem>;
    type Kernel = Kernel;

    fn mem(&self, b: Option<&Buffer<T>>) -> Option<cl_mem> {
        b.map(|b| b.get())
    }

    fn holds(&self, b: &Buffer<T>) -> usize {
        elements(b).unwrap_or(0)
    }

    fn alloc(&self, len: usize, _what: &str) -> OpenClResult<Buffer<T>> {
        alloc::<T>(self, len)
    }

    fn upload(&self, v: &[T], _what: &str) -> OpenClResult<Buffer<T>> {
        upload(self, v)
    }

    fn read(&self, x: Option<cl_mem>, n: usize) -> OpenClResult<Vec<T>> {
        let mut host = vec![T::default(); n];
        if let Some(m) = x {
            read(self, &owner::<T>(m)?, &mut host)?;
        }
        Ok(host)
    }

    fn read_words(&self, x: Option<cl_mem>, n: usize) -> OpenClResult<Vec<u32>> {
        let mut host = vec![0; n];
        if let Some(m) = x {
            read(self, &owner::<u32>(m)?, &mut host)?;
        }
        Ok(host)
    }

    fn owns(&self, b: &Buffer<T>) -> bool {
        b.context().ok() == Some(self.context.get())
    }

    fn zero(&self, x: Option<cl_mem>, n: usize) -> OpenClResult<()> {
        match x {
            Some(m) => zero(self, &mut owner::<T>(m)?, n),
            None => Ok(()),
        }
    }

    fn launch(&self, k: &Kernel, items: usize, nb: usize, args: &[Arg]) -> OpenClResult<()> {
        launch(self, k, items, ELEMENT_GROUP, nb, args)
    }

    fn sync(&self) -> OpenClResult<()> {
        self.queue.finish().map_err(cl("clFinish"))
    }

    fn memory(&self) -> usize {
        let global = |&id| opencl3::device::Device::new(id).global_mem_size().ok();
        (self.context.devices().first().and_then(global)).map_or(usize::MAX, |b| b as usize)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use nudt_gen::gpu::{names, ArgKind};

    /// A launch is checked against the kernel's declaration before any driver call: a
    /// wrong count, kind or local-memory argument is a typed error.
    #[test]
    fn argument_lists_are_checked_before_the_launch() {
        let cmul = declaration(names::CMUL).unwrap();
        let buf = || Arg::Mem(None);
        let ok = || {
            let (n, first, stride) = (Arg::U64(4), Arg::U64(0), Arg::U64(4));
            vec![n, buf(), buf(), first, buf(), stride, Arg::I32(0)]
        };
        assert_eq!(check(cmul, &ok()), Ok(()));
        let mut short = ok();
        short.pop();
        assert!(matches!(
            check(cmul, &short),
            Err(ArgMismatch::Count { got: 6, .. })
        ));
        let mut wrong = ok();
        wrong[0] = Arg::U32(4);
        assert!(matches!(
            check(cmul, &wrong),
            Err(ArgMismatch::Kind { index: 0, .. })
        ));
        let mut local = ok();
        local.push(Arg::Local(64));
        assert_eq!(
            check(cmul, &local),
            Err(ArgMismatch::UnexpectedLocal {
                kernel: names::CMUL
            })
        );
        let mut inside = ok();
        inside.insert(3, Arg::Local(64));
        assert!(check(cmul, &inside).is_err());
        let sm = declaration(names::SPREAD_SM).unwrap();
        let mut args: Vec<Arg> = sm
            .args()
            .map(|k| match k {
                ArgKind::Buffer => buf(),
                ArgKind::U32 => Arg::U32(0),
                ArgKind::I32 => Arg::I32(0),
                ArgKind::U64 => Arg::U64(0),
                ArgKind::F64 => Arg::F64(0.0),
            })
            .collect();
        assert_eq!(
            check(sm, &args),
            Err(ArgMismatch::MissingLocal {
                kernel: names::SPREAD_SM
            })
        );
        args.push(Arg::Local(1024));
        assert_eq!(check(sm, &args), Ok(()));
    }
}
