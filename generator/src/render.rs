//! Rendering: a planned configuration → source text, through the tera templates.
//!
//! The templates are compiled into the binary (`include_str!`), so rendering never touches
//! the file system.

use crate::error::GenError;
use crate::kernel::KernelSpec;
use crate::params::{Precision, Strategy};
use crate::plan;
use tera::{Context, Tera};

const SUPPORT: &str = include_str!("../templates/rust/support.rs");
const SPREADER: &str = include_str!("../templates/rust/spreader.rs.tera");
const GAUSSIAN_WIDE: &str = include_str!("../templates/rust/gaussian_wide.rs.tera");

/// Everything that shapes one generated Rust spreader.
#[derive(Clone, Debug)]
pub struct RustSpreader {
    pub dim: usize,
    pub kernel: KernelSpec,
    pub precision: Precision,
    /// Schedule behind the module's `spread` function.
    pub strategy: Strategy,
    /// Path of the rendered support module, as seen from the spreader.
    pub support_path: String,
    /// Threshold of the target-driven block tree.
    pub max_block_points: usize,
    /// Widest SIMD register of the target in bytes ([`crate::Arch::simd_bytes`]): kernel rows
    /// are padded to fill whole registers.
    pub simd_bytes: usize,
    /// Human-readable record of every parameter, copied into the header comment.
    pub provenance: Vec<String>,
}

fn engine(name: &str, body: &str) -> Result<Tera, GenError> {
    let mut t = Tera::default();
    t.add_raw_template(name, body)
        .map_err(|e| GenError::Render(format!("{e:?}")))?;
    Ok(t)
}

/// The width-independent support module (scalar trait, tiling, bin sort, schedules): plain
/// Rust, the same for every spreader, embedded as text so that the macros and `nudt gen` emit
/// it; this crate's tests compile it (`support_compiles`), so rustfmt and clippy see it too.
pub const SUPPORT_MODULE: &str = SUPPORT;

/// One specialised spreader module.
pub fn spreader_module(s: &RustSpreader) -> Result<String, GenError> {
    if !(1..=3).contains(&s.dim) {
        return Err(GenError::Dimension(s.dim));
    }
    let poly = s.kernel.horner();
    let real = s.precision.type_name();
    let mut ctx = Context::new();
    ctx.insert("version", env!("CARGO_PKG_VERSION"));
    ctx.insert("params", &s.provenance);
    ctx.insert("dim", &s.dim);
    ctx.insert("width", &s.kernel.width);
    let padded = padded_width(s.kernel.width, s.precision, s.simd_bytes);
    let lanes = 2 * complex_per_register(s.precision, s.simd_bytes);
    let table_columns = padded.div_ceil(lanes) * lanes;
    ctx.insert("padded", &padded);
    ctx.insert("lanes", &lanes);
    ctx.insert("table_columns", &table_columns);
    ctx.insert("reg", &format!("{}x{lanes}", real.to_uppercase()));
    ctx.insert("simd_bytes", &s.simd_bytes.max(1));
    ctx.insert("real", real);
    ctx.insert("nc", &poly.nc());
    // Rows padded with zero weights to whole registers (the kernels' Horner rule runs on them).
    let mut coeffs = poly.literals(real);
    for row in &mut coeffs {
        row.resize(table_columns, "0.0".into());
    }
    ctx.insert("coeffs", &coeffs);
    ctx.insert("fit_error", &format!("{:.1e}", poly.max_error));
    ctx.insert("kernel", &format!("{:?}", s.kernel.kind));
    ctx.insert("beta", &format!("{}", s.kernel.beta));
    ctx.insert("support", &s.support_path);
    let (strategy, doc) = match s.strategy {
        Strategy::TargetDriven => (
            "target_driven",
            "target-driven (block tree, no synchronisation)",
        ),
        _ => (
            "source_driven",
            "source-driven (tile buffers added under locks, no atomics)",
        ),
    };
    ctx.insert("strategy", strategy);
    ctx.insert("strategy_doc", doc);
    ctx.insert("max_block_points", &s.max_block_points);
    ctx.insert("interp_chunk", &plan::INTERP_CHUNK);
    engine("spreader", SPREADER)?
        .render("spreader", &ctx)
        .map_err(|e| GenError::Render(format!("{e:?}")))
}

/// `width` rounded up to whole SIMD registers of interleaved complex values of `precision`
/// (at least one complex value per register).
pub fn padded_width(width: usize, precision: Precision, simd_bytes: usize) -> usize {
    let per_register = complex_per_register(precision, simd_bytes);
    width.div_ceil(per_register) * per_register
}

/// Interleaved complex values of `precision` in one SIMD register (at least one).
fn complex_per_register(precision: Precision, simd_bytes: usize) -> usize {
    let real = match precision {
        Precision::F32 => 4,
        Precision::F64 => 8,
    };
    (simd_bytes / (2 * real)).max(1)
}

/// A wide-Gaussian spreader (any odd width, fast Gaussian gridding), for the type 3 of
/// Capozzoli et al. whose windows exceed the fitted kernels' 16 points.
pub fn gaussian_wide_module(
    dim: usize,
    precision: Precision,
    support_path: &str,
) -> Result<String, GenError> {
    if !(1..=3).contains(&dim) {
        return Err(GenError::Dimension(dim));
    }
    let mut ctx = Context::new();
    ctx.insert("dim", &dim);
    ctx.insert("real", precision.type_name());
    ctx.insert("support", support_path);
    engine("gaussian_wide", GAUSSIAN_WIDE)?
        .render("gaussian_wide", &ctx)
        .map_err(|e| GenError::Render(format!("{e:?}")))
}
