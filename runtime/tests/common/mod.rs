//! What the runtime's integration tests share.

/// Deterministic values in [-1, 1) (a 64-bit LCG): the same points on every run and backend.
pub struct Lcg(pub u64);

impl Lcg {
    pub fn next(&mut self) -> f64 {
        self.0 = self
            .0
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        (self.0 >> 11) as f64 / (1u64 << 53) as f64 * 2.0 - 1.0
    }
}

use nudt_runtime::backend::Backend;

/// The environment variable that makes a missing backend a failure.
fn requirement(b: Backend) -> Option<&'static str> {
    match b {
        Backend::Cpu => None,
        Backend::Cuda => Some("NUDT_REQUIRE_GPU"),
        Backend::OpenCl => Some("NUDT_REQUIRE_OPENCL"),
    }
}

/// The backends this build and machine run, each missing one named on stderr (or, where the
/// environment requires it, a panic).
#[allow(dead_code)]
pub fn backends() -> Vec<Backend> {
    Backend::ALL
        .into_iter()
        .filter(|&b| match b.available() {
            Ok(()) => true,
            Err(e) => {
                let required = requirement(b)
                    .is_some_and(|v| std::env::var(v).is_ok_and(|v| v == "1") && b.is_built());
                assert!(!required, "{b} is required here but: {e}");
                eprintln!("SKIPPED {b}: {e}");
                false
            }
        })
        .collect()
}
