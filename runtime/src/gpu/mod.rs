//! What the two GPU backends (CUDA and OpenCL) share beyond the plan layer: code that runs
//! the same kernels in the same order, written once over the small device API each backend
//! implements ([`device::Device`]: allocate, upload, read back, launch).

pub mod comm;
pub(crate) mod device;
pub(crate) mod engine;
pub(crate) mod gaussian;
pub(crate) mod gradient;
pub(crate) mod kernels;
pub mod multi;
pub mod plan;
pub(crate) mod routing;
pub(crate) mod shares;
pub(crate) mod type3;
