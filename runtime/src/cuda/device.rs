//! The device side of the backend: probing for the driver and libraries (cudarc panics when a
//! library or symbol it loads is missing, so nothing is called before the probe), the device
//! count, contexts, versions and the device's [`GpuArch`]. Modules and launches:
//! [`super::launch`].

use super::error::{driver, CudaError, CudaResult};
use cudarc::driver::sys::CUdevice_attribute;
use cudarc::driver::CudaContext;
use nudt_gen::gpu::GpuArch;
use std::sync::{Arc, OnceLock};

/// Runs `f`, turning a panic (cudarc's reaction to a missing library or symbol) into an error.
pub(super) fn guarded<R>(what: &'static str, f: impl FnOnce() -> R) -> CudaResult<R> {
    std::panic::catch_unwind(std::panic::AssertUnwindSafe(f)).map_err(|p| {
        let detail = p
            .downcast_ref::<String>()
            .cloned()
            .or_else(|| p.downcast_ref::<&str>().map(|s| s.to_string()))
            .unwrap_or_else(|| "unknown panic".into());
        CudaError::MissingLibrary { name: what, detail }
    })
}

/// The oldest driver the backend runs on: cudarc's `cuda-13000` bindings call entry points
/// that older drivers lack (its `CudaEvent::elapsed_ms` calls `cuEventElapsedTime_v2`, for
/// one), and cudarc answers a missing symbol with a panic, so an older driver is refused up
/// front, by version.
pub const MIN_DRIVER_VERSION: i32 = cudarc::driver::sys::CUDA_VERSION as i32;

/// Checks that libcuda, NVRTC and cuFFT can be loaded and that the driver is at least
/// [`MIN_DRIVER_VERSION`], calling nothing in them but `cuDriverGetVersion` (which every
/// driver has). Every entry point of the backend runs it first: cudarc panics when a library
/// or symbol it needs is missing. The answer is worked out once per process, like the
/// versions: the loader reads its search path when the process starts.
pub fn probe_libraries() -> CudaResult<()> {
    static PROBE: OnceLock<CudaResult<()>> = OnceLock::new();
    PROBE
        .get_or_init(|| {
            let found = driver_version()?;
            if found < MIN_DRIVER_VERSION {
                return Err(CudaError::DriverTooOld {
                    found,
                    needed: MIN_DRIVER_VERSION,
                });
            }
            nvrtc_present()?;
            // SAFETY: this only tries to dlopen the candidate library names.
            if !unsafe { cudarc::cufft::sys::is_culib_present() } {
                return Err(CudaError::MissingLibrary {
                    name: "cufft",
                    detail: "libcufft.so.12 not on the loader path (pip: nvidia-cufft)".into(),
                });
            }
            Ok(())
        })
        .clone()
}

fn nvrtc_present() -> CudaResult<()> {
    // SAFETY: this only tries to dlopen the candidate library names.
    if unsafe { cudarc::nvrtc::sys::is_culib_present() } {
        Ok(())
    } else {
        Err(CudaError::MissingLibrary {
            name: "nvrtc",
            detail: "libnvrtc.so.13 not on the loader path (pip: nvidia-cuda-nvrtc)".into(),
        })
    }
}

/// Number of CUDA devices, or why there are none to be had.
pub fn device_count() -> CudaResult<usize> {
    probe_libraries()?;
    let init = guarded("cuda", cudarc::driver::result::init)?;
    if let Err(e) = init {
        return match e.0 {
            cudarc::driver::sys::CUresult::CUDA_ERROR_NO_DEVICE => Ok(0),
            r => Err(CudaError::NoDriver(format!("cuInit: {r:?}"))),
        };
    }
    let n =
        guarded("cuda", CudaContext::device_count)?.map_err(|e| driver("cuDeviceGetCount", e))?;
    Ok(n.max(0) as usize)
}

/// A context on device `ordinal` (its primary context), after the probes.
pub fn open(ordinal: usize) -> CudaResult<Arc<CudaContext>> {
    let count = device_count()?;
    if ordinal >= count {
        return Err(CudaError::NoDevice { ordinal, count });
    }
    guarded("cuda", || CudaContext::new(ordinal))?
        .map_err(|e| driver("cuDevicePrimaryCtxRetain", e))
}

/// The CUDA version the driver supports, e.g. 13000 for 13.0.
pub fn driver_version() -> CudaResult<i32> {
    static V: OnceLock<CudaResult<i32>> = OnceLock::new();
    V.get_or_init(|| {
        // SAFETY: this only tries to dlopen the candidate library names.
        if !unsafe { cudarc::driver::sys::is_culib_present() } {
            return Err(CudaError::NoDriver(
                "libcuda.so not found (is the NVIDIA driver installed?)".into(),
            ));
        }
        let mut v = 0;
        // SAFETY: writes one int; libcuda is present and every driver has this entry point.
        guarded("cuda", || unsafe {
            cudarc::driver::sys::cuDriverGetVersion(&mut v)
        })?
        .result()
        .map_err(|e| driver("cuDriverGetVersion", e))?;
        Ok(v)
    })
    .clone()
}

/// NVRTC's (major, minor) version.
pub fn nvrtc_version() -> CudaResult<(i32, i32)> {
    static V: OnceLock<CudaResult<(i32, i32)>> = OnceLock::new();
    V.get_or_init(|| {
        nvrtc_present()?;
        let (mut a, mut b) = (0, 0);
        // SAFETY: writes two ints; NVRTC is present.
        guarded("nvrtc", || unsafe {
            cudarc::nvrtc::sys::nvrtcVersion(&mut a, &mut b)
        })?
        .result()
        .map_err(|e| CudaError::MissingLibrary {
            name: "nvrtc",
            detail: format!("nvrtcVersion failed: {e:?}"),
        })?;
        Ok((a, b))
    })
    .clone()
}

/// Reads the architectural parameters the generator tunes for from the device.
pub fn detect_arch(ctx: &Arc<CudaContext>) -> CudaResult<GpuArch> {
    let attr = |a: CUdevice_attribute| -> CudaResult<usize> {
        ctx.attribute(a)
            .map(|v| v.max(0) as usize)
            .map_err(|e| driver("cuDeviceGetAttribute", e))
    };
    let (major, minor) = ctx
        .compute_capability()
        .map_err(|e| driver("cuDeviceGetAttribute", e))?;
    Ok(GpuArch {
        name: ctx.name().unwrap_or_else(|_| "unknown".into()),
        compute_capability: (major as u32, minor as u32),
        sm_count: attr(CUdevice_attribute::CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT)? as u32,
        shared_mem_per_block: attr(
            CUdevice_attribute::CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK,
        )?,
        shared_mem_per_block_optin: attr(
            CUdevice_attribute::CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN,
        )?,
        shared_mem_per_sm: attr(
            CUdevice_attribute::CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_MULTIPROCESSOR,
        )?,
        l2_bytes: attr(CUdevice_attribute::CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE)?,
    })
}
