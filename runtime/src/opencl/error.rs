//! Why an OpenCL call or plan failed.

use crate::error::NudtError;
use nudt_gen::GenError;

/// Cloneable, so that the process-wide device discovery ([`super::ClDevice::first`]) can hand
/// its failure to every caller.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
pub enum OpenClError {
    #[error("the OpenCL ICD loader (libOpenCL.so) could not be opened; install one (e.g. `apt-get install ocl-icd-libopencl1` and a driver such as pocl-opencl-icd)")]
    NoLoader,
    #[error("no OpenCL platform is installed (the ICD loader found no driver under /etc/OpenCL/vendors or OCL_ICD_VENDORS)")]
    NoPlatform,
    #[error("no OpenCL device on the installed platform(s): {0}")]
    NoDevice(String),
    #[error("{call} failed with OpenCL error {code}")]
    Call { call: &'static str, code: i32 },
    #[error("clBuildProgram of {module} failed on {device}:\n{log}")]
    Build {
        module: String,
        device: String,
        log: String,
    },
    #[error("device {device}: {source}")]
    Unsupported {
        device: String,
        #[source]
        source: GenError,
    },
    /// A spreading or interpolation method asked for whose work-groups the device cannot
    /// hold.
    #[error("device {device}: {why}")]
    Method { device: String, why: String },
    #[error(transparent)]
    Gen(#[from] GenError),
    /// A launch whose arguments do not match its kernel's declared signature: a bug in nudt,
    /// refused before the driver sees it.
    #[error(transparent)]
    Arguments(#[from] nudt_gen::gpu::ArgMismatch),
    /// Bad input or parameters, exactly as the CPU backend reports them.
    #[error(transparent)]
    Input(#[from] NudtError),
    #[error("{what} holds {got} complex values, the plan needs {need}")]
    Length {
        what: &'static str,
        got: usize,
        need: u64,
    },
}

pub type OpenClResult<T> = Result<T, OpenClError>;

/// Counts a device call named `call` about to be made ([`crate::fault`]): the error the
/// driver's refusal gives (`CL_OUT_OF_RESOURCES`) where a test armed this call to fail.
pub(crate) fn device_call(call: &'static str) -> OpenClResult<()> {
    crate::fault::device_call(call).map_err(|call| OpenClError::Call {
        call,
        code: opencl3::error_codes::CL_OUT_OF_RESOURCES,
    })
}

/// Maps an error code of `call`, telling a missing loader (opencl3's dynamic-loading code)
/// apart from a failing call.
pub(crate) fn cl(call: &'static str) -> impl Fn(opencl3::error_codes::ClError) -> OpenClError {
    move |e| {
        if e.0 == opencl3::error_codes::DLOPEN_RUNTIME_LOAD_FAILED {
            OpenClError::NoLoader
        } else {
            OpenClError::Call { call, code: e.0 }
        }
    }
}
