//! The plan layer: every rule that makes a NUFFT, written once for every backend.
//!
//! A plan starts as a [`Problem`] (what the caller asked for, checked by [`validate`]); the
//! planner turns it into a [`Recipe`] — pure data: the kernel and σ ([`sigma`]), the fine
//! grids and, for type 3, the geometry that scales both point sets onto them ([`type3`]) —
//! and a backend builds its kernels, buffers and FFTs from the recipe. The CPU, CUDA and
//! OpenCL plans all call these functions and no other copy of them exists, so the same
//! problem gets the same recipe on every backend (`tests/suite/recipes.rs` checks it), and
//! `nudt transform --json` prints the recipe a run used.
//!
//! The order of the files is the order of planning: [`limits`] (what every backend accepts),
//! [`validate`] (the checks), [`sigma`] (kernel and upsampling), [`type3`] (type 3's grids),
//! [`recipe`] (the result); [`sets`] (per-transform point sets as the GPUs sort them); [`devices`] (one transform split over several devices); `gaussian` is the Gaussian-gridding type 3's geometry; [`od_bins`] the 2-D and 3-D spreading bins by point density; [`gpu_profile`] what `nudt tune`
//! chose on a GPU. Executing follows [`stages`]: the sequences of types 1, 2 and
//! 3, forward and adjoint, over the few steps each backend implements.

pub mod devices;
pub(crate) mod gaussian;
pub mod gpu_profile;
pub mod limits;
pub mod od_bins;
pub mod recipe;
pub mod sets;
pub mod sigma;
pub mod stages;
pub mod type3;
pub mod validate;

pub use recipe::{Choices, DeviceClass, Problem, Recipe, Type3Method};
