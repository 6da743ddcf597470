//! [`NcclLink`] (feature `nccl`): a multi-device plan's arrays carried from GPU to GPU by
//! NCCL, over NVLink or PCIe, never through the host. One communicator per device, all made
//! in this process (`ncclCommInitAll`), each on its device's own stream: a carry is a grouped
//! `ncclSend`/`ncclRecv` pair queued there, after the kernels that packed the array and
//! before those that unpack it, with no host synchronisation in between. NCCL is loaded at
//! run time (cudarc's `dynamic-loading`), like the rest of CUDA: without it a plan says why
//! and falls back to the host link.

use super::error::{CudaError, CudaResult};
use super::grid::ptr;
use super::CudaFloat;
use crate::gpu::comm::{Bufs, Carry, Link};
use crate::gpu::device::Device;
use cudarc::driver::CudaStream;
use cudarc::nccl::{result, sys};
use std::sync::Arc;

/// One NCCL communicator per device of a multi-device plan, rank r on device r.
pub struct NcclLink {
    comms: Vec<sys::ncclComm_t>,
    /// The devices' streams, which keep their contexts alive until the communicators are
    /// destroyed.
    _streams: Vec<Arc<CudaStream>>,
}

// SAFETY: NCCL communicators may be used from any thread, one call at a time; a link is
// only used through `&self` by the plan that owns it, which is not `Sync`.
unsafe impl Send for NcclLink {}

/// A failed NCCL call as the CUDA backend's error.
fn nccl(call: &str, e: result::NcclError) -> CudaError {
    CudaError::Driver {
        call: call.to_string(),
        detail: format!("{:?}", e.0),
    }
}

impl NcclLink {
    /// Communicators between the devices of `streams` (distinct GPUs, in rank order), or why
    /// there can be none: NCCL's library missing, a GPU listed twice, or NCCL's refusal.
    pub(crate) fn new(streams: &[&Arc<CudaStream>]) -> CudaResult<Self> {
        // SAFETY: only tries to open the library.
        if !unsafe { sys::is_culib_present() } {
            return Err(CudaError::MissingLibrary {
                name: "NCCL",
                detail: "libnccl.so (or libnccl.so.13) not on the loader's path".into(),
            });
        }
        let ordinals: Vec<i32> = streams
            .iter()
            .map(|s| s.context().ordinal() as i32)
            .collect();
        if (1..ordinals.len()).any(|i| ordinals[..i].contains(&ordinals[i])) {
            return Err(CudaError::Unsupported(format!(
                "NCCL between devices {ordinals:?}: a GPU listed twice"
            )));
        }
        let mut comms = vec![std::ptr::null_mut(); ordinals.len()];
        // SAFETY: `comms` holds one handle per listed device.
        unsafe { result::comm_init_all(comms.as_mut_ptr(), comms.len() as i32, ordinals.as_ptr()) }
            .map_err(|e| nccl("ncclCommInitAll", e))?;
        Ok(NcclLink {
            comms,
            _streams: streams.iter().map(|&s| s.clone()).collect(),
        })
    }
}

impl Drop for NcclLink {
    fn drop(&mut self) {
        for &c in &self.comms {
            // SAFETY: each handle was made by `ncclCommInitAll` and is destroyed once; an
            // error here has no one left to report it to.
            let _ = unsafe { result::comm_destroy(c) };
        }
    }
}

impl<T: CudaFloat> Link<Arc<CudaStream>, T> for NcclLink {
    fn name(&self) -> &'static str {
        "nccl"
    }

    fn carry(
        &self,
        devs: &[&Arc<CudaStream>],
        carries: &[Carry<'_, <Arc<CudaStream> as Device<T>>::Buf>],
    ) -> CudaResult<Bufs<Arc<CudaStream>, T>> {
        let received = carries
            .iter()
            .map(|c| Device::<T>::alloc(devs[c.to], 2 * c.len, "a carried block"))
            .collect::<CudaResult<Vec<_>>>()?;
        if carries.is_empty() {
            return Ok(received);
        }
        // Bytes, not values: a carry only copies them.
        let byte = sys::ncclDataType_t::ncclUint8;
        let bytes = |len: usize| 2 * len * std::mem::size_of::<T>();
        result::group_start().map_err(|e| nccl("ncclGroupStart", e))?;
        let queued = carries.iter().zip(&received).try_for_each(|(c, to)| {
            let (send, recv) = (devs[c.from], devs[c.to]);
            let (src, dst) = (ptr(c.buf, send), ptr(to, recv));
            // SAFETY: both arrays hold `bytes(c.len)` bytes on their devices and outlive the
            // copies: the packed array and the received one are freed in their streams'
            // order, after the copy queued there.
            unsafe {
                let from = c.from as i32;
                let s = send.cu_stream() as sys::cudaStream_t;
                let r = recv.cu_stream() as sys::cudaStream_t;
                result::send(
                    src as _,
                    bytes(c.len),
                    byte,
                    c.to as i32,
                    self.comms[c.from],
                    s,
                )
                .map_err(|e| nccl("ncclSend", e))?;
                result::recv(dst as _, bytes(c.len), byte, from, self.comms[c.to], r)
                    .map_err(|e| nccl("ncclRecv", e))?;
            }
            Ok::<_, CudaError>(())
        });
        let ended = result::group_end().map_err(|e| nccl("ncclGroupEnd", e));
        queued?;
        ended?;
        Ok(received)
    }
}
