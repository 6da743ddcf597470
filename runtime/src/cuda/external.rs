//! Device memory and streams owned by another library (CuPy, PyTorch, Numba, …), reached by
//! their raw handles, as `__cuda_array_interface__` or DLPack hand them over.
//!
//! [`ForeignSlice`] implements cudarc's `DevicePtr`/`DevicePtrMut`, so it goes wherever a plan
//! takes a `CudaSlice` ([`CudaPlan::set_points_device`](super::CudaPlan::set_points_device),
//! [`CudaPlan::execute_device`](super::CudaPlan::execute_device)). Making one is `unsafe`, and
//! only for what the driver cannot see: it checks that the address lies in device memory of
//! the plan's device, aligned, with the whole range inside one allocation, but it cannot know
//! whether the owner keeps that memory alive and leaves it alone while the plan works.
//!
//! [`ForeignStream`] orders a plan's stream against another library's stream with events,
//! without blocking the host: the plan waits for what the owner queued before handing the
//! arrays over, and the owner's later work waits for the plan.

use super::error::{driver, CudaError, CudaResult};
use cudarc::driver::result::{event, stream};
use cudarc::driver::sys::{
    self, CUdeviceptr, CUevent_flags, CUevent_wait_flags, CUmemorytype, CUpointer_attribute,
    CUstream,
};
use cudarc::driver::{CudaStream, DevicePtr, DevicePtrMut, DeviceSlice, SyncOnDrop};
use std::marker::PhantomData;
use std::sync::Arc;

/// `len` values of `T` in device memory the plan does not own.
#[derive(Debug)]
pub struct ForeignSlice<T> {
    ptr: CUdeviceptr,
    len: usize,
    stream: Arc<CudaStream>,
    elem: PhantomData<T>,
}

fn attribute<V: Default>(ptr: CUdeviceptr, attr: CUpointer_attribute) -> Result<V, sys::CUresult> {
    let mut v = V::default();
    // SAFETY: `v` is the type the driver writes for each attribute asked for below
    // (CUmemorytype and int as u32/i32, a device address as u64, a size as usize).
    let r = unsafe { sys::cuPointerGetAttribute((&mut v as *mut V).cast(), attr, ptr) };
    match r {
        sys::CUresult::CUDA_SUCCESS => Ok(v),
        e => Err(e),
    }
}

impl<T> ForeignSlice<T> {
    /// `len` values of `T` at device address `ptr`, to be used on `stream` (a plan's,
    /// [`CudaPlan::stream`](super::CudaPlan::stream)); `what` names the array in errors.
    ///
    /// Checks what the driver knows: that `ptr` is aligned for `T` and lies in device memory
    /// (plain or managed) of the stream's device, and that all `len` values lie inside the
    /// allocation holding it. An empty slice may have any address.
    ///
    /// # Safety
    /// The memory must stay allocated until the work queued with this slice on `stream` has
    /// finished, and nothing else may write it meanwhile (nor read it, where the plan writes
    /// it): order the owner's stream with [`ForeignStream`].
    pub unsafe fn new(
        stream: &Arc<CudaStream>,
        ptr: u64,
        len: usize,
        what: &str,
    ) -> CudaResult<Self> {
        let bad = |detail: String| CudaError::ForeignMemory {
            what: what.to_string(),
            detail,
        };
        let slice = ForeignSlice {
            ptr,
            len,
            stream: stream.clone(),
            elem: PhantomData,
        };
        if len == 0 {
            return Ok(slice);
        }
        if !ptr.is_multiple_of(std::mem::align_of::<T>() as u64) {
            return Err(bad(format!(
                "address {ptr:#x} is not aligned to {} bytes",
                std::mem::align_of::<T>()
            )));
        }
        let bytes = len
            .checked_mul(std::mem::size_of::<T>())
            .ok_or_else(|| bad(format!("{len} values do not fit the address space")))?;
        stream
            .context()
            .bind_to_thread()
            .map_err(|e| driver("cuCtxSetCurrent", e))?;
        let not_device = |e: sys::CUresult| {
            bad(format!(
                "address {ptr:#x} is not CUDA device memory ({e:?}); pass a device array \
                 (CuPy, PyTorch on a CUDA device, Numba), not host memory"
            ))
        };
        let kind: u32 = attribute(ptr, CUpointer_attribute::CU_POINTER_ATTRIBUTE_MEMORY_TYPE)
            .map_err(not_device)?;
        let device = [
            CUmemorytype::CU_MEMORYTYPE_DEVICE,
            CUmemorytype::CU_MEMORYTYPE_UNIFIED,
        ];
        if !device.iter().any(|&t| t as u32 == kind) {
            return Err(not_device(sys::CUresult::CUDA_ERROR_INVALID_VALUE));
        }
        let ordinal: i32 = attribute(
            ptr,
            CUpointer_attribute::CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL,
        )
        .map_err(not_device)?;
        let ours = stream.context().ordinal();
        if usize::try_from(ordinal) != Ok(ours) {
            return Err(bad(format!(
                "the array is on CUDA device {ordinal}, the plan on device {ours}"
            )));
        }
        let start: u64 = attribute(
            ptr,
            CUpointer_attribute::CU_POINTER_ATTRIBUTE_RANGE_START_ADDR,
        )
        .map_err(not_device)?;
        let size: usize = attribute(ptr, CUpointer_attribute::CU_POINTER_ATTRIBUTE_RANGE_SIZE)
            .map_err(not_device)?;
        let room = start.saturating_add(size as u64).saturating_sub(ptr);
        if (bytes as u64) > room {
            return Err(bad(format!(
                "{bytes} bytes from {ptr:#x} overrun its allocation ({room} bytes left)"
            )));
        }
        Ok(slice)
    }

    /// The device address.
    pub fn address(&self) -> u64 {
        self.ptr
    }

    /// Whether the bytes of `self` and `other` overlap.
    pub fn overlaps<U>(&self, other: &ForeignSlice<U>) -> bool {
        let end = |p: u64, n: usize, sz: usize| p.saturating_add(n.saturating_mul(sz) as u64);
        let (a0, a1) = (self.ptr, end(self.ptr, self.len, std::mem::size_of::<T>()));
        let (b0, b1) = (
            other.ptr,
            end(other.ptr, other.len, std::mem::size_of::<U>()),
        );
        self.len > 0 && other.len > 0 && a0 < b1 && b0 < a1
    }
}

impl<T> DeviceSlice<T> for ForeignSlice<T> {
    fn len(&self) -> usize {
        self.len
    }
    fn stream(&self) -> &Arc<CudaStream> {
        &self.stream
    }
}

// The owner orders its streams against the plan's ([`ForeignStream`]); cudarc's own tracking
// of reads and writes has nothing to add, so the guards do nothing.
impl<T> DevicePtr<T> for ForeignSlice<T> {
    fn device_ptr<'a>(&'a self, _stream: &'a CudaStream) -> (CUdeviceptr, SyncOnDrop<'a>) {
        (self.ptr, SyncOnDrop::Sync(None))
    }
}

impl<T> DevicePtrMut<T> for ForeignSlice<T> {
    fn device_ptr_mut<'a>(&'a mut self, _stream: &'a CudaStream) -> (CUdeviceptr, SyncOnDrop<'a>) {
        (self.ptr, SyncOnDrop::Sync(None))
    }
}

/// A stream of another library, by its handle: a `CUstream`/`cudaStream_t`, or CUDA's
/// special handles 1 (the legacy default stream; 0 means the same) and 2 (the per-thread
/// default stream), as `__cuda_array_interface__`'s `stream` field gives them.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ForeignStream(u64);

/// The legacy default stream's special handle.
const LEGACY: u64 = 1;

impl ForeignStream {
    /// # Safety
    /// `handle` must be 0, 1, 2 or a live stream of the context of the plans it is ordered
    /// against, and stay live while this value is used.
    pub unsafe fn from_handle(handle: u64) -> Self {
        ForeignStream(if handle == 0 { LEGACY } else { handle })
    }

    /// The handle of a plan's stream in the same terms (cudarc's default stream is the
    /// legacy default stream).
    fn of(stream: &CudaStream) -> u64 {
        match stream.cu_stream() as u64 {
            0 => LEGACY,
            h => h,
        }
    }

    /// Work queued on `waiter` from now on waits for the work queued on `signal` so far.
    fn order(stream: &CudaStream, waiter: u64, signal: u64) -> CudaResult<()> {
        if waiter == signal {
            return Ok(());
        }
        stream
            .context()
            .bind_to_thread()
            .map_err(|e| driver("cuCtxSetCurrent", e))?;
        let ev = event::create(CUevent_flags::CU_EVENT_DISABLE_TIMING)
            .map_err(|e| driver("cuEventCreate", e))?;
        // SAFETY: `ev` is live until destroyed below (the driver keeps a recorded event's
        // resources until the waits on it are done); both streams are live (constructor).
        let r = unsafe {
            event::record(ev, signal as CUstream)
                .and_then(|()| {
                    stream::wait_event(
                        waiter as CUstream,
                        ev,
                        CUevent_wait_flags::CU_EVENT_WAIT_DEFAULT,
                    )
                })
                .map_err(|e| driver("cuEventRecord/cuStreamWaitEvent (foreign stream)", e))
        };
        // SAFETY: as above; destroying a recorded event is allowed while waits are pending.
        let d = unsafe { event::destroy(ev) }.map_err(|e| driver("cuEventDestroy", e));
        r.and(d)
    }

    /// Makes `stream` (a plan's) wait for the work queued on this stream so far.
    pub fn precede(self, stream: &CudaStream) -> CudaResult<()> {
        Self::order(stream, Self::of(stream), self.0)
    }

    /// Makes this stream wait for the work queued on `stream` (a plan's) so far.
    pub fn follow(self, stream: &CudaStream) -> CudaResult<()> {
        Self::order(stream, self.0, Self::of(stream))
    }
}
