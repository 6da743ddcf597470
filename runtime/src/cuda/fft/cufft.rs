//! cuFFT plans of the fine grids, kept across NUFFT plans.
//!
//! Making a cuFFT plan takes 0.5–1.5 ms on an H100, about a third of a fresh type 3
//! set-points, which makes its grids (their sizes follow from the points) and so its FFT
//! plans whenever the sizes change; every new NUFFT plan pays it too. So a dropped
//! [`FftPlans`] puts its cuFFT handles on a shelf for the process, by context, shape, batch
//! and type, and the next plan of that shape takes them from there, as PyTorch's cuFFT plan
//! cache does. A handle is owned by one [`FftPlans`] at a time, never shared.
//!
//! Plans are made without a work area of their own (cuFFT's auto-allocation off): the owner
//! allocates one from the memory pool, shared by its batch sizes, which run in order on its
//! stream, and hands it to each handle. A shelved handle thus holds only cuFFT's tables,
//! not the grid-sized scratch a 2-D or 3-D transform may need.
//!
//! The shelf's own bookkeeping is fixed in size once it has been full: keys hold their shape
//! inline, and it keeps one reference per context, however many plans' handles it holds. So
//! a long run's live heap does not drift with which shapes happen to be shelved (the soak
//! counts it to the byte; each plan opens its context afresh, so a reference per handle was
//! a new allocation kept alive per shelved plan).

use super::super::error::{cufft, device_call, driver, CudaResult};
use super::super::memory::{alloc, release_freed_memory};
use super::super::CudaFloat;
use cudarc::cufft::result as cf;
use cudarc::cufft::sys::{cufftHandle, cufftResult, cufftType};
use cudarc::driver::{CudaContext, CudaSlice, CudaStream, DevicePtr};
use std::sync::{Arc, Mutex, OnceLock};

/// Handles the shelf keeps; past it, the longest-shelved go.
const SHELF: usize = 16;

/// What a handle was planned for: context, grid shape (`rank` sizes), batch and transform
/// type.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Key {
    ctx: usize,
    rank: usize,
    dims: [i32; 3],
    batch: usize,
    ty: cufftType,
}

/// A cuFFT plan with the work-area bytes it asks for.
struct Handle {
    h: cufftHandle,
    work_bytes: usize,
}

/// The shelved handles, oldest first, and the contexts they were made in, each kept alive
/// (one reference per context) while a handle of it is shelved.
#[derive(Default)]
struct Shelf {
    handles: Vec<(Key, Handle)>,
    contexts: Vec<Arc<CudaContext>>,
}

fn shelf() -> &'static Mutex<Shelf> {
    static SHELF_: OnceLock<Mutex<Shelf>> = OnceLock::new();
    SHELF_.get_or_init(Default::default)
}

/// Batched in-place complex FFTs of one grid shape (cuFFT's `plan_many` layout), for a full
/// batch and, if `ntransf` is not a multiple of it, the remainder.
pub(crate) struct FftPlans {
    ctx: Arc<CudaContext>,
    plans: Vec<(Key, Handle)>,
    /// The work area every handle runs with (at least one byte).
    work: CudaSlice<u8>,
}

impl FftPlans {
    /// Plans (or takes from the shelf) the FFTs of grids of shape `n` for each batch size in
    /// `batches`, on `stream`.
    pub fn new<T: CudaFloat>(
        stream: &Arc<CudaStream>,
        n: &[usize],
        batches: &[usize],
    ) -> CudaResult<Self> {
        let ctx = stream.context().clone();
        ctx.bind_to_thread()
            .map_err(|e| driver("cuCtxSetCurrent", e))?;
        let mut dims = [1i32; 3];
        for (d, &v) in dims.iter_mut().zip(n) {
            *d = i32::try_from(v).map_err(|_| crate::NudtError::GridOverflow)?;
        }
        let mut plans: Vec<(Key, Handle)> = Vec::new();
        let made = (|| {
            for &batch in batches {
                if batch == 0 || plans.iter().any(|p| p.0.batch == batch) {
                    continue;
                }
                let key = Key {
                    ctx: ctx.cu_ctx() as usize,
                    rank: n.len(),
                    dims,
                    batch,
                    ty: T::FFT_TYPE,
                };
                let handle = match take(&key) {
                    Some(h) => h,
                    None => make(stream, &key)?,
                };
                plans.push((key, handle));
            }
            Ok(())
        })();
        let work_bytes = plans.iter().map(|p| p.1.work_bytes).max().unwrap_or(0);
        // Whatever fails from here, the handles made so far go back to the shelf.
        let work = made.and_then(|()| alloc::<u8>(stream, work_bytes, "cuFFT work area"));
        let work = match work {
            Ok(w) => w,
            Err(e) => {
                put_back(&ctx, plans);
                return Err(e);
            }
        };
        let me = FftPlans { ctx, plans, work };
        let area = me.work.device_ptr(stream).0 as *mut std::ffi::c_void;
        for (_, p) in &me.plans {
            // SAFETY: live plans; the work area outlives them (`Drop` shelves them first) and
            // holds the bytes each asked for; the stream is the owner's.
            unsafe {
                cudarc::cufft::sys::cufftSetWorkArea(p.h, area)
                    .result()
                    .map_err(|e| cufft("cufftSetWorkArea", e))?;
                cf::set_stream(p.h, stream.cu_stream() as _)
                    .map_err(|e| cufft("cufftSetStream", e))?;
            }
        }
        Ok(me)
    }

    /// In-place FFTs of `batch` grids at `data`: `e^{isign·2πi jk/n}`.
    pub fn exec<T: CudaFloat>(&self, data: u64, batch: usize, isign: i32) -> CudaResult<()> {
        let (_, p) = self
            .plans
            .iter()
            .find(|p| p.0.batch == batch)
            .ok_or_else(|| {
                super::CudaError::Unsupported(format!("no cuFFT plan for batch {batch}"))
            })?;
        let dir = if isign < 0 { -1 } else { 1 };
        device_call("cufftExec")?;
        // SAFETY: `data` holds `batch` contiguous grids of the planned shape.
        unsafe { T::exec_fft(p.h, data, dir) }.map_err(|e| cufft("cufftExec", e))
    }
}

impl Drop for FftPlans {
    fn drop(&mut self) {
        put_back(&self.ctx, std::mem::take(&mut self.plans));
    }
}

/// A shelved handle for `key`, if there is one.
fn take(key: &Key) -> Option<Handle> {
    let mut s = shelf().lock().unwrap_or_else(|p| p.into_inner());
    let i = s.handles.iter().position(|e| e.0 == *key)?;
    let (_, handle) = s.handles.remove(i);
    s.release_unused_contexts();
    Some(handle)
}

/// Shelves `plans` of `ctx`, destroying the longest-shelved handles past [`SHELF`].
fn put_back(ctx: &Arc<CudaContext>, plans: Vec<(Key, Handle)>) {
    if plans.is_empty() {
        return;
    }
    let mut s = shelf().lock().unwrap_or_else(|p| p.into_inner());
    if !s.contexts.iter().any(|c| c.cu_ctx() == ctx.cu_ctx()) {
        s.contexts.push(ctx.clone());
    }
    s.handles.extend(plans);
    let excess = s.handles.len().saturating_sub(SHELF);
    for (key, old) in s.handles.drain(..excess).collect::<Vec<_>>() {
        if let Some(c) = s.contexts.iter().find(|c| c.cu_ctx() as usize == key.ctx) {
            let _ = c.bind_to_thread();
        }
        // SAFETY: a handle the shelf owned alone, destroyed once, in its context (which the
        // shelf keeps alive while the handle is on it).
        let _ = unsafe { cf::destroy(old.h) };
    }
    s.release_unused_contexts();
}

impl Shelf {
    /// Lets go of the contexts no shelved handle belongs to any more.
    fn release_unused_contexts(&mut self) {
        let handles = &self.handles;
        self.contexts
            .retain(|c| handles.iter().any(|(k, _)| k.ctx == c.cu_ctx() as usize));
    }
}

/// A new handle for `key` without a work area of its own. cuFFT's tables come from outside
/// the memory pool, which may be keeping memory that plans freed: on a failed allocation the
/// pool gives it back, once.
fn make(stream: &Arc<CudaStream>, key: &Key) -> CudaResult<Handle> {
    let dist = key
        .dims
        .iter()
        .try_fold(1i32, |a, &b| a.checked_mul(b))
        .ok_or(crate::NudtError::GridOverflow)?;
    let attempt = || -> Result<Handle, cudarc::cufft::result::CufftError> {
        let h = cf::create()?;
        let mut dims = key.dims;
        let mut work_bytes = 0usize;
        // SAFETY: a new handle; `dims` holds `rank` sizes; null embeds mean the plain
        // contiguous layout.
        let made = unsafe {
            cudarc::cufft::sys::cufftSetAutoAllocation(h, 0)
                .result()
                .and_then(|()| {
                    cudarc::cufft::sys::cufftMakePlanMany(
                        h,
                        key.rank as i32,
                        dims.as_mut_ptr(),
                        std::ptr::null_mut(),
                        1,
                        dist,
                        std::ptr::null_mut(),
                        1,
                        dist,
                        key.ty,
                        key.batch as i32,
                        &mut work_bytes,
                    )
                    .result()
                })
        };
        match made {
            Ok(()) => Ok(Handle { h, work_bytes }),
            Err(e) => {
                // SAFETY: the handle made above, destroyed once.
                let _ = unsafe { cf::destroy(h) };
                Err(e)
            }
        }
    };
    match attempt() {
        Err(e) if e.0 == cufftResult::CUFFT_ALLOC_FAILED => {
            release_freed_memory(stream)?;
            attempt()
        }
        r => r,
    }
    .map_err(|e| cufft("cufftMakePlanMany", e))
}
