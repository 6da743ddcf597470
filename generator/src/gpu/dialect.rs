//! The dialect layer: one small header per backend (`templates/gpu/dialect/*.h.tera`) defines
//! the macros and types a kernel body uses (`KERNEL`, `GLOBAL`, `LOCAL_ARRAY`, `BARRIER`,
//! `LOCAL_ID`, `real2`, `MK2`, `SINCOSPI`, …); the bodies contain no backend branches.

use crate::error::GenError;
use crate::params::Precision;
use tera::{Context, Tera};

const CUDA: &str = include_str!("../../templates/gpu/dialect/cuda.h.tera");
const OPENCL: &str = include_str!("../../templates/gpu/dialect/opencl.h.tera");

/// A GPU source language.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Dialect {
    /// CUDA C++ as NVRTC compiles it (`extern "C"` kernels, dynamic shared memory).
    Cuda,
    /// OpenCL C 1.2; `fp64` says whether the device has `cl_khr_fp64` (doubles), `ptx`
    /// whether its compiler takes inline PTX (NVIDIA's, on sm_60 and later): floating-point
    /// atomic adds are then the native `red` instructions, where OpenCL C 1.2 has only
    /// compare-and-swap loops.
    OpenCl { fp64: bool, ptx: bool },
}

impl Dialect {
    /// A short name for file names, cache keys and descriptions.
    pub fn name(self) -> &'static str {
        match self {
            Dialect::Cuda => "cuda",
            Dialect::OpenCl {
                fp64: true,
                ptx: false,
            } => "opencl",
            Dialect::OpenCl {
                fp64: false,
                ptx: false,
            } => "opencl-fp32",
            Dialect::OpenCl {
                fp64: true,
                ptx: true,
            } => "opencl-ptx",
            Dialect::OpenCl {
                fp64: false,
                ptx: true,
            } => "opencl-fp32-ptx",
        }
    }

    /// The source file extension.
    pub fn extension(self) -> &'static str {
        match self {
            Dialect::Cuda => "cu",
            Dialect::OpenCl { .. } => "cl",
        }
    }

    /// Whether local memory is sized at launch (CUDA's dynamic shared memory) rather than in
    /// the source (OpenCL C 1.2 local arrays).
    pub fn dynamic_local_memory(self) -> bool {
        matches!(self, Dialect::Cuda)
    }

    /// The header for kernels in `precision` whose global indices have type `idx_t`: 32 bits,
    /// or 64 where `wide_index`. A double-precision header for an OpenCL device without
    /// `cl_khr_fp64` is refused.
    pub fn header(self, precision: Precision, wide_index: bool) -> Result<String, GenError> {
        if precision == Precision::F64 && matches!(self, Dialect::OpenCl { fp64: false, .. }) {
            return Err(GenError::Fp64Unsupported);
        }
        // The C type, and PTX's type and register constraint of inline assembly.
        let (real, ptx_type, ptx_reg) = match precision {
            Precision::F32 => ("float", "f32", "f"),
            Precision::F64 => ("double", "f64", "d"),
        };
        let idx = match (self, wide_index) {
            (_, false) => "unsigned",
            (Dialect::Cuda, true) => "unsigned long long",
            (Dialect::OpenCl { .. }, true) => "ulong",
        };
        let body = match self {
            Dialect::Cuda => CUDA,
            Dialect::OpenCl { .. } => OPENCL,
        };
        let mut ctx = Context::new();
        ctx.insert("real", real);
        ctx.insert("idx", idx);
        ctx.insert("ptx", &matches!(self, Dialect::OpenCl { ptx: true, .. }));
        ctx.insert("ptx_type", ptx_type);
        ctx.insert("ptx_reg", ptx_reg);
        Tera::one_off(body, &ctx, false).map_err(|e| GenError::Render(format!("{e:?}")))
    }
}
