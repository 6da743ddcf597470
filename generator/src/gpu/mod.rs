//! GPU code generation, for CUDA (NVRTC) and OpenCL alike: spreading, interpolation, bin
//! sort, corrections and type 3 phases, specialised per (dimension, width, precision, kernel,
//! bins) and tuned for a [`GpuArch`]. Kernel bodies are written once, under
//! `generator/templates/gpu/`, over a [`Dialect`] header that spells what differs.
//!
//! Like the rest of the generator this knows nothing about the runtime: it returns source
//! text plus a description of every `extern "C"` entry point (launch geometry, local
//! memory, and its signature: [`signature`] declares every kernel's parameters, and the
//! templates render the prototypes from those declarations), which the runtime compiles and
//! launches against, and `nudt gen --target cuda|opencl` prints.
//!
//! Three modules cover a plan:
//! * the *spread module* ([`spread_module_in`]), one per [`GpuSpreadSpec`]: bin sort (bin
//!   index and rank by warp-aggregated atomics, scatter of each point's index to its sorted
//!   slot; the kernels read coordinates and strengths through the index), spreading GM-sort
//!   (one thread per sorted point, global atomics), SM (one block per bin subproblem,
//!   shared-memory accumulation, then atomic adds of the padded bin) and output-driven,
//!   interpolation GM-sort and SM;
//! * the *common module* ([`common_module_in`]), one per precision: the bin sort's prefix
//!   sums, subproblem lists, deconvolution + mode copies, complex scaling, and the type 3
//!   rescaling and pre/post phase kernels;
//! * the *wide-Gaussian module* ([`gaussian_wide_module`]), one per (dimension, window width,
//!   precision), for the Gaussian-gridding type 3 (Capozzoli et al.'s parameters): its
//!   windows are dozens of points wide, beyond the Horner fits and shared-memory bins.

mod arch;
pub mod dialect;
mod render;
pub mod signature;
mod source;
mod spec;
#[cfg(test)]
mod tests;

pub use arch::{GpuArch, LocalMemory};
pub use dialect::Dialect;
pub use render::*;
pub use signature::{declaration, ArgKind, ArgMismatch, CType, Elem, KernelDecl, Param};
pub use source::*;
pub use spec::*;
