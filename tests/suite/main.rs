//! The facade crate's integration suites, one module each, in one test binary.
//!
//! One binary rather than one per file because of what a release build of a test costs: each
//! binary instantiates the runtime's generic plans (`Plan<f32>`, `Plan<f64>`, every backend)
//! for itself, so four suites built apart took 212 CPU s and the same four in one binary 58
//! (2 cores). Select a suite with its module path: `cargo test --release --all-features
//! --test suite accuracy::`. Suites that run the `nudt` binary in their own processes and
//! measure it (soak, tune_gpu, bench_gpu, gen_host) and packaging stay files of their own in
//! `tests/`.

mod common;
/// The reference FFTs the runtime's OpenCL FFT suite checks against, for the CUDA one.
#[cfg(feature = "cuda")]
#[path = "../../runtime/tests/common/fft.rs"]
mod fft_reference;

mod accuracy;
#[cfg(feature = "cli")]
mod cli;
mod cuda_fft;
mod cuda_gpu;
mod edge_cases;
mod errors;
mod properties;
mod spreader_macro;
