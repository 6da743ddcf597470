//! The runtime's typed errors as the Python exceptions a finufft or numpy user expects.
//!
//! finufft's Python interface raises `RuntimeError` for everything but dtypes; numpy raises
//! `ValueError` for bad shapes and values. Bad input therefore raises
//! `nudt.NudtValueError`, a subclass of both, so that either `except` catches it; a grid
//! too large for memory raises `MemoryError`; misuse of a plan (execute before setpts)
//! raises `RuntimeError`. A tolerance the precision cannot reach, or the upsampfac the caller
//! fixed (a width past the widest kernel, or a type 3 whose correction amplifies rounding
//! past it: `Type3Rounding`), says so in finufft's words ("eps tolerance too small to
//! achieve"), which its users' tests match. A derivative asked of a plan that cannot give
//! it (`NoGradient`) is a bad request too: `NudtValueError`.

use nudt_gen::GenError;
use nudt_runtime::backend::BackendError;
use nudt_runtime::NudtError;
use pyo3::exceptions::{PyMemoryError, PyRuntimeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::PyType;

/// A `ValueError` that is also a `RuntimeError` (`nudt.NudtValueError`), with `msg`.
pub fn value_error(py: Python<'_>, msg: String) -> PyErr {
    let class = py
        .import("nudt._errors")
        .and_then(|m| m.getattr("NudtValueError"))
        .and_then(|c| c.cast_into::<PyType>().map_err(PyErr::from));
    match class {
        Ok(class) => PyErr::from_type(class, msg),
        // `nudt._nudt` imported without its package: a plain ValueError says the same.
        Err(_) => PyValueError::new_err(msg),
    }
}

/// The exception for a runtime error.
pub fn to_py(py: Python<'_>, e: NudtError) -> PyErr {
    let msg = e.to_string();
    match e {
        NudtError::GridTooLarge { .. } | NudtError::GridOverflow => PyMemoryError::new_err(msg),
        NudtError::PointsNotSet
        | NudtError::WrongType { .. }
        | NudtError::Threads(_)
        | NudtError::Unsupported { .. } => PyRuntimeError::new_err(msg),
        NudtError::Gen(
            GenError::ToleranceBelowPrecision { .. } | GenError::WidthForTolerance { .. },
        )
        | NudtError::Type3Rounding { .. } => {
            value_error(py, format!("eps tolerance too small to achieve: {msg}"))
        }
        NudtError::Gen(_)
        | NudtError::NonFinite { .. }
        | NudtError::Length { .. }
        | NudtError::Coordinates { .. }
        | NudtError::ModesShape { .. }
        | NudtError::ZeroTransforms
        | NudtError::Sign(_)
        | NudtError::TooManyPoints(_)
        | NudtError::NoGradient { .. }
        | NudtError::Type3Phase
        | NudtError::PointSets { .. }
        | NudtError::InTransform { .. }
        | NudtError::Profile { .. }
        | NudtError::Devices { .. } => value_error(py, msg),
    }
}

/// The exception for an error of a plan driven through the runtime's backend interface (the
/// derivatives, [`crate::gradients`]): as its backend's own errors.
pub fn backend_to_py(py: Python<'_>, e: BackendError) -> PyErr {
    match e {
        BackendError::Input(e) => to_py(py, e),
        #[cfg(feature = "cuda")]
        BackendError::Cuda(e) => crate::cuda::cuda_to_py(py, e),
        #[allow(unreachable_patterns)]
        e => PyRuntimeError::new_err(e.to_string()),
    }
}
