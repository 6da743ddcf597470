//! What the two GPU backends (CUDA and OpenCL) share beyond the plan layer: code that runs
//! the same kernels in the same order, written once over a small trait each backend
//! implements (allocate, upload, launch).

pub(crate) mod gaussian;
