//! Every way a plan can refuse its input, as a typed error that names the problem.

use nudt_gen::GenError;

#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum NudtError {
    /// The generator refused the parameters (tolerance, width, dimension, grid size...).
    #[error(transparent)]
    Gen(#[from] GenError),
    #[error("{what} has a non-finite value ({value}) at index {index}")]
    NonFinite {
        what: &'static str,
        index: usize,
        value: f64,
    },
    #[error("{what}: expected length {expected}, got {got}")]
    Length {
        what: String,
        expected: usize,
        got: usize,
    },
    #[error("expected {expected} coordinate arrays (one per dimension), got {got}")]
    Coordinates { expected: usize, got: usize },
    #[error("mode counts: expected {expected} (one per dimension), got {got}")]
    ModesShape { expected: usize, got: usize },
    #[error("number of transforms (ntransf) must be at least 1")]
    ZeroTransforms,
    #[error("isign must be +1 or -1, got {0}")]
    Sign(i32),
    #[error("{0} points exceed the supported maximum of 2^31 - 1")]
    TooManyPoints(usize),
    #[error(
        "fine grid of {points} points ({bytes} bytes) exceeds available memory ({available} bytes)"
    )]
    GridTooLarge {
        points: usize,
        bytes: usize,
        available: usize,
    },
    #[error("fine grid size overflows usize")]
    GridOverflow,
    /// A type 3 whose points are so far from their centres that the centring phases
    /// (`c_s·(x − c_x)`, `s·c_x`) overflow f64.
    #[error("type 3 points too far apart: the phases s·x of sources and targets overflow f64 (|s|·|x| beyond 1e308)")]
    Type3Phase,
    /// A type 3 at a σ the caller fixed whose rounding, amplified by the correction at the
    /// edge of the targets' band ([`nudt_gen::plan::type3_rounding`]), exceeds the tolerance.
    #[error("type 3 at upsampling {sigma} cannot reach tolerance {tol:e} in {precision} ({dim}-D): the correction amplifies rounding to about {rounding:.1e}; use upsampling 2, or leave it to the planner")]
    Type3Rounding {
        tol: f64,
        sigma: f64,
        dim: usize,
        precision: &'static str,
        rounding: f64,
    },
    #[error("execute called before set_points")]
    PointsNotSet,
    #[error("this operation needs a type {expected} plan, but the plan is type {actual}")]
    WrongType { expected: u8, actual: u8 },
    /// Per-transform point sets whose number is not the plan's `ntransf`.
    #[error("expected {expected} {what} (one per transform, ntransf = {expected}), got {got}")]
    PointSets {
        what: &'static str,
        expected: usize,
        got: usize,
    },
    /// What is wrong with one transform's own point set (`index` counts from 0).
    #[error("transform {index}: {error}")]
    InTransform { index: usize, error: Box<NudtError> },
    /// A feature this backend does not run in this build.
    #[error("{what} run on the CPU backend in this build; the {backend} backend does not support them yet")]
    Unsupported {
        what: &'static str,
        backend: &'static str,
    },
    #[error("thread pool: {0}")]
    Threads(String),
    /// A gradient was asked of a plan that cannot give it.
    #[error("no gradient: {why}")]
    NoGradient { why: &'static str },
    /// The tuning profile file given to a plan ([`crate::Options::profile`]) cannot be read
    /// or is not a profile.
    #[error("tuning profile {path}: {why}")]
    Profile { path: String, why: String },
    /// A transform that cannot be split over the devices asked for
    /// ([`crate::planner::devices::Decomposition`]).
    #[error("cannot split the transform over {devices} devices: {why}")]
    Devices { devices: usize, why: String },
}

pub type Result<T> = std::result::Result<T, NudtError>;

/// Checks the lengths (complex values) of a stack of inputs and outputs, `got`, against each
/// transform's, `each` (input, output); a mismatch is a [`NudtError::Length`] naming `what`.
/// A stack whose length would overflow is a length error too, since no array has it. Every
/// backend's `execute` and `execute_adjoint` check through here.
pub(crate) fn check_stack(got: [usize; 2], each: &[(usize, usize)], what: [&str; 2]) -> Result<()> {
    for d in 0..2 {
        let expected = each
            .iter()
            .map(|&(a, b)| if d == 0 { a } else { b })
            .fold(0usize, usize::saturating_add);
        if got[d] != expected {
            return Err(NudtError::Length {
                what: what[d].into(),
                expected,
                got: got[d],
            });
        }
    }
    Ok(())
}
