//! Every way the CUDA backend can fail, as a typed error: the CPU backend's input errors plus
//! what only a GPU can do wrong (no driver, no device, a missing library, out of memory, a
//! failed compile or launch).

use crate::error::NudtError;
use cudarc::cufft::result::CufftError;
use cudarc::driver::{sys::CUresult, DriverError};

#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum CudaError {
    /// Bad input or parameters, exactly as the CPU backend reports them.
    #[error(transparent)]
    Nudt(#[from] NudtError),
    /// libcuda could not be loaded or initialised.
    #[error("no usable CUDA driver: {0}")]
    NoDriver(String),
    /// The driver is older than the CUDA version the bindings were generated for
    /// ([`super::MIN_DRIVER_VERSION`]); versions read as 1000·major + 10·minor.
    #[error(
        "CUDA driver too old: it supports CUDA {}.{}, the backend needs {}.{} or newer; update \
         the NVIDIA driver",
        found / 1000,
        found % 1000 / 10,
        needed / 1000,
        needed % 1000 / 10
    )]
    DriverTooOld { found: i32, needed: i32 },
    #[error("no CUDA device with ordinal {ordinal} ({count} present)")]
    NoDevice { ordinal: usize, count: usize },
    /// A CUDA library (NVRTC, cuFFT) is not installed where the loader looks.
    #[error("CUDA library {name} not found ({detail}); install it and add its folder to LD_LIBRARY_PATH")]
    MissingLibrary { name: &'static str, detail: String },
    #[error("out of GPU memory: {what} needs {bytes} bytes ({free} free)")]
    OutOfMemory {
        what: String,
        bytes: usize,
        free: usize,
    },
    #[error("NVRTC could not compile {module} for {arch}:\n{log}")]
    Compile {
        module: String,
        arch: String,
        log: String,
    },
    /// A kernel launch failed, or a kernel faulted (seen at the next synchronisation).
    #[error("CUDA kernel {kernel} failed: {detail}")]
    Launch { kernel: String, detail: String },
    /// A launch whose arguments do not match its kernel's declared signature: a bug in nudt,
    /// refused before the driver sees it.
    #[error(transparent)]
    Arguments(#[from] nudt_gen::gpu::ArgMismatch),
    #[error("CUDA driver call {call} failed: {detail}")]
    Driver { call: String, detail: String },
    #[error("cuFFT {call} failed: {detail}")]
    Cufft { call: String, detail: String },
    /// A device array handed over by address ([`super::ForeignSlice`]) that the plan cannot
    /// use: host memory, another device's, misaligned, or shorter than stated.
    #[error("{what}: {detail}")]
    ForeignMemory { what: String, detail: String },
    #[error("not supported by the CUDA backend: {0}")]
    Unsupported(String),
}

pub type CudaResult<T> = std::result::Result<T, CudaError>;

impl From<nudt_gen::GenError> for CudaError {
    fn from(e: nudt_gen::GenError) -> Self {
        CudaError::Nudt(NudtError::Gen(e))
    }
}

/// Driver error codes that mean a kernel faulted or could not start.
fn is_launch_failure(r: CUresult) -> bool {
    matches!(
        r,
        CUresult::CUDA_ERROR_LAUNCH_FAILED
            | CUresult::CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES
            | CUresult::CUDA_ERROR_LAUNCH_TIMEOUT
            | CUresult::CUDA_ERROR_ILLEGAL_ADDRESS
            | CUresult::CUDA_ERROR_ILLEGAL_INSTRUCTION
            | CUresult::CUDA_ERROR_MISALIGNED_ADDRESS
            | CUresult::CUDA_ERROR_INVALID_PC
            | CUresult::CUDA_ERROR_HARDWARE_STACK_ERROR
    )
}

/// Maps a driver error of `call` to the most specific variant.
pub(crate) fn driver(call: &str, e: DriverError) -> CudaError {
    match e.0 {
        CUresult::CUDA_ERROR_OUT_OF_MEMORY => CudaError::OutOfMemory {
            what: call.to_string(),
            bytes: 0,
            free: 0,
        },
        CUresult::CUDA_ERROR_NO_DEVICE => CudaError::NoDevice {
            ordinal: 0,
            count: 0,
        },
        r if call.starts_with("nudt_") => CudaError::Launch {
            kernel: call.to_string(),
            detail: format!("{r:?}"),
        },
        r if is_launch_failure(r) => CudaError::Launch {
            kernel: format!("(asynchronous, seen at {call})"),
            detail: format!("{r:?}"),
        },
        r => CudaError::Driver {
            call: call.to_string(),
            detail: format!("{r:?}"),
        },
    }
}

/// Counts a device call named `call` about to be made ([`crate::fault`]): the error the
/// driver's refusal gives where a test armed this call to fail.
pub(crate) fn device_call(call: &'static str) -> CudaResult<()> {
    crate::fault::device_call(call).map_err(|call| CudaError::Driver {
        call: call.into(),
        detail: "injected fault".into(),
    })
}

pub(crate) fn cufft(call: &str, e: CufftError) -> CudaError {
    use cudarc::cufft::sys::cufftResult;
    match e.0 {
        cufftResult::CUFFT_ALLOC_FAILED => CudaError::OutOfMemory {
            what: format!("cuFFT {call}"),
            bytes: 0,
            free: 0,
        },
        r => CudaError::Cufft {
            call: call.to_string(),
            detail: format!("{r:?}"),
        },
    }
}
