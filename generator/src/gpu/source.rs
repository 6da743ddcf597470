//! Generated GPU source as the runtime takes it: the text and a description of every
//! `extern "C"` entry point (launch geometry, local memory, and its declared signature).

use super::signature::{declaration, KernelDecl, ParamDescription};
use super::GpuSpreadSpec;
use crate::error::GenError;
use serde::Serialize;

/// One `extern "C"` entry point of a generated module and how to launch it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct GpuKernel {
    pub name: &'static str,
    /// Threads per block.
    pub block_threads: u32,
    /// Dynamic shared memory per block in bytes (0: none).
    pub dynamic_smem: usize,
    /// How many blocks (x) and what blockIdx.y means.
    pub grid: &'static str,
    /// Its signature, which the module's source renders its prototype from.
    pub decl: &'static KernelDecl,
}

impl GpuKernel {
    /// Entry point `name` launched so; a name without a declaration is refused (every
    /// prototype a template writes comes from one).
    pub(super) fn new(
        name: &'static str,
        block_threads: u32,
        dynamic_smem: usize,
        grid: &'static str,
    ) -> Result<Self, GenError> {
        let decl = declaration(name)
            .ok_or_else(|| GenError::Render(format!("{name} has no declared signature")))?;
        Ok(GpuKernel {
            name,
            block_threads,
            dynamic_smem,
            grid,
            decl,
        })
    }
}

/// Generated CUDA source and its entry points.
#[derive(Clone, Debug, PartialEq)]
pub struct GpuSource {
    /// Unique module name (also a file stem).
    pub name: String,
    pub source: String,
    /// Stable 64-bit FNV-1a hash of `source`, for caches.
    pub hash: u64,
    pub kernels: Vec<GpuKernel>,
    /// The spread spec this module was made for (`None` for the common module).
    pub spec: Option<GpuSpreadSpec>,
}

impl GpuSource {
    pub(super) fn new(
        name: String,
        source: String,
        kernels: Vec<GpuKernel>,
        spec: Option<GpuSpreadSpec>,
    ) -> Self {
        GpuSource {
            hash: fnv1a64(source.as_bytes()),
            name,
            source,
            kernels,
            spec,
        }
    }

    /// Looks an entry point up by name.
    pub fn kernel(&self, name: &str) -> Option<&GpuKernel> {
        self.kernels.iter().find(|k| k.name == name)
    }

    /// The module's launch description (for `nudt gen`): its name and source hash, the
    /// spread spec's layout, and per entry point the launch geometry, purpose and parameters
    /// from its declaration.
    pub fn describe_json(&self) -> String {
        /// The spread spec's layout.
        #[derive(Serialize)]
        struct Layout {
            dim: usize,
            width: usize,
            precision: &'static str,
            kernel: String,
            beta: f64,
            upsampling: f64,
            bins: [usize; 3],
            padded: [usize; 3],
            smem_bytes: usize,
            max_subproblem: usize,
        }
        #[derive(Serialize)]
        struct Kernel {
            name: &'static str,
            block_threads: u32,
            dynamic_smem: usize,
            grid: &'static str,
            purpose: &'static str,
            /// Whether it takes local memory sized at launch: CUDA's dynamic shared memory of
            /// `dynamic_smem` bytes, OpenCL's trailing `__local` argument of as many.
            dynamic_local: bool,
            params: Vec<ParamDescription>,
        }
        #[derive(Serialize)]
        struct Description<'a> {
            name: &'a str,
            hash: String,
            #[serde(flatten)]
            layout: Option<Layout>,
            kernels: Vec<Kernel>,
        }
        let layout = self.spec.as_ref().map(|sp| Layout {
            dim: sp.dim,
            width: sp.kernel.width,
            precision: sp.precision.type_name(),
            kernel: format!("{:?}", sp.kernel.kind),
            beta: sp.kernel.beta,
            upsampling: sp.kernel.upsampling.0,
            bins: sp.bins,
            padded: sp.padded(),
            smem_bytes: sp.smem_bytes(),
            max_subproblem: sp.max_subproblem,
        });
        let kernels = self
            .kernels
            .iter()
            .map(|k| Kernel {
                name: k.name,
                block_threads: k.block_threads,
                dynamic_smem: k.dynamic_smem,
                grid: k.grid,
                purpose: k.decl.purpose,
                dynamic_local: k.decl.dynamic_local,
                params: k.decl.params.iter().map(ParamDescription::from).collect(),
            })
            .collect();
        let d = Description {
            name: &self.name,
            hash: format!("{:016x}", self.hash),
            layout,
            kernels,
        };
        serde_json::to_string_pretty(&d).expect("plain data serialises") + "\n"
    }
}

/// 64-bit FNV-1a: a stable hash (unlike `DefaultHasher`) for on-disk cache keys.
pub fn fnv1a64(bytes: &[u8]) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for &b in bytes {
        h ^= b as u64;
        h = h.wrapping_mul(0x0000_0100_0000_01b3);
    }
    h
}
