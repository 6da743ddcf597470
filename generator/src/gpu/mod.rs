//! What generated GPU source is written in: the [`Dialect`] (CUDA C++ for NVRTC, OpenCL C 1.2)
//! whose header spells kernels, barriers, thread indices, local memory and complex types, so
//! that kernel bodies under `templates/gpu/` are written once for every backend.

pub mod dialect;

pub use dialect::Dialect;
