//! Why the generator refused a set of parameters.

use crate::params::KernelKind;

#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum GenError {
    #[error("dimension must be 1, 2 or 3, got {0}")]
    Dimension(usize),
    #[error("tolerance must be a positive finite number, got {0}")]
    Tolerance(f64),
    #[error(
        "tolerance {tol:e} is below what {precision} can reach (smallest accepted: {floor:e})"
    )]
    ToleranceBelowPrecision {
        tol: f64,
        precision: &'static str,
        floor: f64,
    },
    #[error("tolerance {tol:e} needs width {needed} with the {} kernel at upsampling {sigma}{}, above the maximum 16; {advice}", .kernel.name(), split_note(.stage))]
    WidthForTolerance {
        /// The tolerance the caller asked for.
        tol: f64,
        /// Where a type 3 splits `tol` across its stages and axes, the share each gets
        /// ([`crate::plan::type3_stage_tolerance`]), which the width is for: the message
        /// names both, as the caller knows only `tol`.
        stage: Option<f64>,
        needed: usize,
        kernel: KernelKind,
        sigma: f64,
        /// What would reach `tol` instead, computed from the kernels and upsamplings that do.
        advice: String,
    },
    #[error("kernel width must be between 2 and 16, got {0}")]
    Width(usize),
    #[error("upsampling factor must be between 1.25 and 2.5, got {0}")]
    Upsampling(f64),
    #[error("mode count {0} along a dimension must be at least 1")]
    Modes(usize),
    #[error("fine grid for {modes} modes would overflow the address space")]
    GridOverflow { modes: usize },
    #[error("an FFT has 1, 2 or 3 dimensions, got {0}")]
    FftRank(usize),
    #[error("FFT length along axis {axis} must be between 1 and 2^30, got {size}")]
    FftSize { axis: usize, size: usize },
    #[error("FFT batch must be at least 1, got 0")]
    FftBatchZero,
    #[error("FFT of {batch} x {shape:?} elements overflows the address space")]
    FftOverflow { batch: usize, shape: Vec<usize> },
    #[error("FFT of {batch} x {shape:?} needs {blocks} thread blocks in one launch, above the 2^31-1 a grid holds; split the batch")]
    FftGrid {
        batch: usize,
        shape: Vec<usize>,
        blocks: u64,
    },
    #[error("device description unusable for an FFT: {0}")]
    FftDevice(String),
    #[error("double precision needs an OpenCL device with cl_khr_fp64")]
    Fp64Unsupported,
    #[error("template rendering failed: {0}")]
    Render(String),
}

/// How a [`GenError::WidthForTolerance`] message says that the tolerance was split.
fn split_note(stage: &Option<f64>) -> String {
    stage.map_or_else(String::new, |t| {
        format!(" (a type 3 splits it across its two stages and its axes: {t:.1e} each)")
    })
}
