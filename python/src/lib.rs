//! `nudt._nudt`: the Rust half of the `nudt` Python package.
//!
//! It holds one class, [`plan::RawPlan`], a thin shell around the runtime's
//! [`nudt_runtime::Plan`] in f32 or f64 that takes numpy arrays exactly as they are
//! (C-contiguous, of the plan's dtype), releases the GIL while the runtime works, and may be
//! called by several threads at once ([`shared::Shared`]). Everything a finufft user calls —
//! argument defaults, shape rules, option keywords — lives in the pure-Python layer
//! (`nudt/_interfaces.py`), where it reads like finufft's own interface and costs
//! microseconds per call.
//!
//! With the `cuda` feature it also holds [`cuda::RawCudaPlan`], the runtime's CUDA plan on
//! device arrays handed over by address, behind `nudt.cuda` (cufinufft's interface), and
//! [`multi::RawCudaMultiPlan`], a plan over several GPUs on host arrays.
//!
//! Both plan classes also give the derivatives of their transform (`vjp`, `jvp`:
//! [`gradients`]), which `nudt.torch` builds PyTorch's autograd functions on.

mod arrays;
#[cfg(feature = "cuda")]
mod cuda;
mod errors;
mod gradients;
#[cfg(feature = "cuda")]
mod multi;
mod plan;
mod shared;

use pyo3::prelude::*;

/// Bytes of host work buffers that dropped plans left for the next ones: the runtime's
/// cache (at most 128 MiB a precision), which spares a new plan faulting its grid in.
#[pyfunction]
fn kept_work_bytes() -> usize {
    nudt_runtime::kept_work_bytes()
}

/// Frees the host work buffers dropped plans left ([`kept_work_bytes`]), as
/// `torch.cuda.empty_cache` does for PyTorch's cached GPU memory.
#[pyfunction]
fn free_kept_work() {
    nudt_runtime::free_kept_work()
}

/// The extension module `nudt._nudt`.
#[pymodule]
fn _nudt(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<plan::RawPlan>()?;
    m.add_function(wrap_pyfunction!(kept_work_bytes, m)?)?;
    m.add_function(wrap_pyfunction!(free_kept_work, m)?)?;
    #[cfg(feature = "cuda")]
    {
        m.add_class::<cuda::RawCudaPlan>()?;
        m.add_class::<multi::RawCudaMultiPlan>()?;
        m.add_function(wrap_pyfunction!(cuda::cuda_device_count, m)?)?;
    }
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    Ok(())
}
