//! nudt-gen: turns NUFFT parameters and a machine description into spreading code.
//!
//! Data flows one way: [`Params`] → kernel choice and [`plan`] (fine grid, tiles, schedule)
//! → [`render`] (tera templates) → source text. This crate knows nothing about the runtime
//! that will compile or call that source. [`fft`] generates GPU FFTs the same way.

pub mod arch;
pub mod error;
pub mod fft;
pub mod gpu;
pub mod kernel;
pub mod params;
pub mod plan;
pub mod render;

/// The support module compiled as the Rust it is (the macros and `nudt gen` embed its text;
/// its users, the generated spreaders, are not here, hence the allowances).
#[cfg(test)]
#[allow(dead_code, unused_imports)]
#[path = "../templates/rust/support.rs"]
mod support_compiles;

pub use arch::Arch;
pub use error::GenError;
pub use kernel::KernelSpec;
pub use params::{
    Accuracy, AlgoParams, KernelKind, Params, Precision, Strategy, TransformType, Upsampling,
};
