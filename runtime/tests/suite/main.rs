//! The runtime's integration suites, one module each, in one test binary.
//!
//! One binary rather than one per file: each release-built test binary instantiates the
//! generic plans of every backend for itself, which is most of its build time (four suites of
//! the facade crate built apart took 212 CPU s, in one binary 58). Select a suite with its
//! module path: `cargo test --release -p nudt-runtime --all-features --test suite backends::`.
//! The fuzzer (`tests/fuzz.rs`) stays a binary of its own: CI runs it once with its counts
//! printed.

#[path = "../common/mod.rs"]
mod common;
/// The reference FFTs (rustfft, tolerances, length sweeps) of the OpenCL FFT suite.
#[cfg(feature = "opencl")]
#[path = "../common/fft.rs"]
mod fft_reference;

mod backends;
#[cfg(any(feature = "cuda", feature = "opencl"))]
mod faults;
mod gradients;
#[cfg(feature = "opencl")]
mod multi_device;
#[cfg(feature = "opencl")]
mod opencl_fft;
#[cfg(feature = "opencl")]
mod opencl_nufft;
mod per_transform;
mod profile_option;
mod recipes;
