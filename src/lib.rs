//! nudt: non-uniform FFTs whose spreading code is generated for the problem and the machine.
//!
//! ```
//! use nudt::{Plan, Options, TransformType};
//! use num_complex::Complex64;
//!
//! let x: Vec<f64> = (0..1000).map(|j| (j as f64 * 0.61).sin() * 3.0).collect();
//! let y: Vec<f64> = (0..1000).map(|j| (j as f64 * 0.37).cos() * 3.0).collect();
//! let c = vec![Complex64::new(1.0, 0.5); 1000];
//! let mut plan = Plan::<f64>::new(TransformType::Type1, &[64, 48], -1, 1, 1e-9, Options::default())?;
//! plan.set_points(&[&x, &y])?;                      // binning happens once, here
//! let mut f = vec![Complex64::default(); 64 * 48];  // row-major, mode k at index k + N/2
//! plan.execute(&c, &mut f)?;                        // execute as often as needed
//! # Ok::<(), nudt::NudtError>(())
//! ```
//!
//! The pieces: [`gen`] (parameters → plan → source), [`spreader!`] (the same generator at
//! compile time), and the runtime re-exported here (plans, binning, FFTs, corrections).

pub use nudt_gen as gen;
pub use nudt_macros::spreader;
pub use nudt_runtime::*;
pub use num_complex;

/// The README's Rust examples, run as doctests so that they cannot drift from the API.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
pub struct ReadmeExamples;
