//! nudt-runtime: plans, binning, FFTs, corrections and the CPU executors that run nudt's
//! generated spreaders inside complete NUFFTs of types 1, 2 and 3.

pub mod backend;
#[cfg(feature = "cuda")]
pub mod cuda;
pub mod direct;
mod entry;
pub mod error;
#[cfg(any(feature = "cuda", feature = "opencl"))]
#[doc(hidden)]
pub mod fault;
mod fft;
pub mod float;
#[cfg(any(feature = "cuda", feature = "opencl"))]
mod gpu;
#[cfg(any(feature = "cuda", feature = "opencl"))]
pub use gpu::plan::GpuPlan;
#[cfg(any(feature = "cuda", feature = "opencl"))]
pub use gpu::{comm::HostLink, multi::MultiPlan, multi::SetPointsTimes, multi::StepTimes};
pub mod gradient;
mod grid;
mod oneshot;
#[cfg(feature = "opencl")]
pub mod opencl;
pub mod plan;
pub mod planner;
pub mod profile;
mod reuse;
mod slabs;
mod stack;
pub mod steps;
mod trig;
mod type3;
mod type3_gaussian;
mod uniform;

/// The generated spreaders and their registry (`nudt-kernels`).
pub use nudt_kernels as kernels;
pub use nudt_kernels::support;

pub use error::{NudtError, Result};
pub use float::Float;
pub use nudt_gen::{Arch, KernelKind, Strategy, TransformType, Upsampling};
pub use oneshot::{type1, type2, type3};
pub use plan::{Options, Plan};
pub use planner::{Recipe, Type3Method};
pub use reuse::{free_kept_work, kept_work_bytes};
pub use uniform::ModeOrder;
