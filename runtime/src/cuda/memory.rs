//! Device memory: allocation with an up-front size check, the policy of the pool that cudarc
//! allocates from, and the shared GPU code's device API on a stream.
//!
//! cudarc allocates with `cuMemAllocAsync` from the device's current stream-ordered pool. The
//! default pool gives freed memory back to the driver at the next synchronisation, so a new
//! plan's first set-points maps its sort buffers afresh: about 0.3–0.6 ms of a 10⁷-point
//! set-points on an H100 (a third of it in 2-D f64), 2.7 ms at 10⁸. nudt keeps freed memory
//! in that pool instead ([`keep_freed_memory`]), as CuPy's and PyTorch's caching allocators
//! do, and gives it back when an allocation (its own or cuFFT's) would not otherwise fit
//! ([`release_freed_memory`]). A pool the caller made current is left as they set it.

use super::error::{device_call, driver, CudaError, CudaResult};
use super::grid::{memset0, ptr};
use super::launch::{blocks, Arg, Kernel};
use super::CudaFloat;
use crate::gpu::device::Device;
use cudarc::driver::result::mem_pool;
use cudarc::driver::sys::{CUmemPool_attribute, CUmemoryPool};
use cudarc::driver::{CudaContext, CudaSlice, CudaStream, DeviceRepr};
use std::ffi::c_void;
use std::sync::Arc;

/// The device's default pool, if it is the one allocations come from.
fn default_pool(ctx: &CudaContext) -> Option<CUmemoryPool> {
    if !ctx.has_async_alloc() {
        return None;
    }
    let dev = ctx.cu_device();
    // SAFETY: the device of a live context.
    let (current, default) = unsafe {
        (
            cudarc::driver::result::device::get_mem_pool(dev).ok()?,
            cudarc::driver::result::device::get_default_mem_pool(dev).ok()?,
        )
    };
    (current == default).then_some(default)
}

/// Lets the default pool keep what plans free, for the next plan to reuse.
pub(crate) fn keep_freed_memory(ctx: &CudaContext) -> CudaResult<()> {
    if let Some(pool) = default_pool(ctx) {
        let mut keep = u64::MAX;
        // SAFETY: a live pool; the release threshold is a u64.
        unsafe {
            mem_pool::set_attribute(
                pool,
                CUmemPool_attribute::CU_MEMPOOL_ATTR_RELEASE_THRESHOLD,
                (&mut keep as *mut u64).cast::<c_void>(),
            )
        }
        .map_err(|e| driver("cuMemPoolSetAttribute", e))?;
    }
    Ok(())
}

/// Gives the default pool's unused memory back to the driver, once the frees queued on
/// `stream` have run.
pub(crate) fn release_freed_memory(stream: &CudaStream) -> CudaResult<()> {
    if let Some(pool) = default_pool(stream.context()) {
        stream
            .synchronize()
            .map_err(|e| driver("cuStreamSynchronize", e))?;
        // SAFETY: a live pool.
        unsafe { mem_pool::trim_to(pool, 0) }.map_err(|e| driver("cuMemPoolTrimTo", e))?;
    }
    Ok(())
}

/// Free device memory as the driver reports it (the pool's kept memory not counted).
fn free_bytes(stream: &CudaStream) -> usize {
    stream.context().mem_get_info().map_or(usize::MAX, |m| m.0)
}

/// Allocates `len` elements (at least one), refusing up front what cannot fit even after
/// the pool has given its kept memory back.
pub(crate) fn alloc<T: DeviceRepr>(
    stream: &Arc<CudaStream>,
    len: usize,
    what: &str,
) -> CudaResult<CudaSlice<T>> {
    let bytes = len
        .checked_mul(std::mem::size_of::<T>())
        .ok_or(crate::NudtError::GridOverflow)?;
    let mut free = free_bytes(stream);
    if bytes > free {
        release_freed_memory(stream)?;
        free = free_bytes(stream);
    }
    if bytes > free {
        return Err(CudaError::OutOfMemory {
            what: what.into(),
            bytes,
            free,
        });
    }
    device_call("cuMemAllocAsync")?;
    // SAFETY: every buffer is written (by a kernel, a copy or a memset) before it is read.
    unsafe { stream.alloc::<T>(len.max(1)) }.map_err(|e| match driver(what, e) {
        CudaError::OutOfMemory { .. } => CudaError::OutOfMemory {
            what: what.into(),
            bytes,
            free,
        },
        other => other,
    })
}

/// `n` values of `T` at device address `x`, copied to the host once the stream's earlier work
/// has run: the slow paths that name a bad point.
pub(crate) fn read_back<T: cudarc::driver::DeviceRepr + Default + Clone>(
    stream: &CudaStream,
    x: u64,
    n: usize,
) -> CudaResult<Vec<T>> {
    let mut host = vec![T::default(); n];
    // The raw copy runs in the thread's current context, which must be the stream's (a
    // process driving several devices switches between theirs).
    stream
        .context()
        .bind_to_thread()
        .map_err(|e| driver("cuCtxSetCurrent", e))?;
    device_call("cuMemcpyDtoH (read back)")?;
    // SAFETY: `x .. x + n` lies inside the caller's array (lengths checked at set-points);
    // the copy completes before the synchronisation returns.
    unsafe { cudarc::driver::result::memcpy_dtoh_async(&mut host[..], x, stream.cu_stream()) }
        .map_err(|e| driver("cuMemcpyDtoH (points read back)", e))?;
    stream
        .synchronize()
        .map_err(|e| driver("cuStreamSynchronize", e))?;
    Ok(host)
}

/// The shared GPU code's device API ([`Device`]) on a plan's stream: arrays are
/// `CudaSlice`s, handled by their addresses, and every use is ordered on the stream.
impl<T: CudaFloat> Device<T> for Arc<CudaStream> {
    type Error = CudaError;
    type Buf = CudaSlice<T>;
    type Mem = u64;
    type Kernel = Kernel;

    fn mem(&self, b: Option<&CudaSlice<T>>) -> u64 {
        b.map_or(0, |s| ptr(s, self))
    }

    fn holds(&self, b: &CudaSlice<T>) -> usize {
        b.len()
    }

    fn alloc(&self, len: usize, what: &str) -> CudaResult<CudaSlice<T>> {
        alloc::<T>(self, len, what)
    }

    fn upload(&self, v: &[T], what: &str) -> CudaResult<CudaSlice<T>> {
        let mut dv = alloc::<T>(self, v.len(), what)?;
        if !v.is_empty() {
            device_call("cuMemcpyHtoD")?;
            self.memcpy_htod(v, &mut dv)
                .map_err(|e| driver(&format!("cuMemcpyHtoD ({what})"), e))?;
        }
        Ok(dv)
    }

    fn read(&self, x: u64, n: usize) -> CudaResult<Vec<T>> {
        read_back(self, x, n)
    }

    fn read_words(&self, x: u64, n: usize) -> CudaResult<Vec<u32>> {
        read_back(self, x, n)
    }

    fn owns(&self, b: &CudaSlice<T>) -> bool {
        b.ordinal() == self.context().ordinal()
    }

    fn zero(&self, x: u64, n: usize) -> CudaResult<()> {
        memset0(self, x, n * std::mem::size_of::<T>())
    }

    fn launch(&self, k: &Kernel, items: usize, nb: usize, args: &[Arg]) -> CudaResult<()> {
        k.launch(self, (blocks(items, k.threads), nb as u32), args)
    }

    fn memory(&self) -> usize {
        free_bytes(self)
    }

    fn sync(&self) -> CudaResult<()> {
        self.synchronize()
            .map_err(|e| driver("cuStreamSynchronize", e))
    }
}
