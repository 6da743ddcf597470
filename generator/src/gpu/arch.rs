//! The GPU a module is generated for ([`GpuArch`]) and the local memory its subproblem
//! kernels may take ([`LocalMemory`]).

/// The GPU a module is generated for.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct GpuArch {
    /// Device name, informational.
    pub name: String,
    /// Compute capability (major, minor), e.g. (9, 0) for an H100.
    pub compute_capability: (u32, u32),
    /// Streaming multiprocessors.
    pub sm_count: u32,
    /// Shared memory a block gets without opting in (48 KiB on every NVIDIA GPU so far).
    pub shared_mem_per_block: usize,
    /// Shared memory a block may have after opting in (`cuFuncSetAttribute`).
    pub shared_mem_per_block_optin: usize,
    /// Shared memory of one multiprocessor, shared by its resident blocks.
    pub shared_mem_per_sm: usize,
    /// L2 cache in bytes.
    pub l2_bytes: usize,
}

impl GpuArch {
    /// An NVIDIA H100 SXM (sm_90): 132 SMs, 227 KiB opt-in shared memory per block, 50 MB L2.
    pub fn h100() -> Self {
        GpuArch {
            name: "NVIDIA H100".into(),
            compute_capability: (9, 0),
            sm_count: 132,
            shared_mem_per_block: 48 << 10,
            shared_mem_per_block_optin: 227 << 10,
            shared_mem_per_sm: 228 << 10,
            l2_bytes: 50 << 20,
        }
    }

    /// An NVIDIA A100 (sm_80): 108 SMs, 163 KiB opt-in, 40 MB L2.
    pub fn a100() -> Self {
        GpuArch {
            name: "NVIDIA A100".into(),
            compute_capability: (8, 0),
            sm_count: 108,
            shared_mem_per_block: 48 << 10,
            shared_mem_per_block_optin: 163 << 10,
            shared_mem_per_sm: 164 << 10,
            l2_bytes: 40 << 20,
        }
    }

    /// A small consumer GPU (sm_75, Turing): 64 KiB shared memory per SM and opt-in.
    pub fn turing() -> Self {
        GpuArch {
            name: "NVIDIA Turing".into(),
            compute_capability: (7, 5),
            sm_count: 40,
            shared_mem_per_block: 48 << 10,
            shared_mem_per_block_optin: 64 << 10,
            shared_mem_per_sm: 64 << 10,
            l2_bytes: 4 << 20,
        }
    }

    /// The NVRTC/nvcc architecture name, e.g. `sm_90`.
    pub fn sm(&self) -> String {
        format!(
            "sm_{}{}",
            self.compute_capability.0, self.compute_capability.1
        )
    }

    /// Shared memory the spreading bins may use per block: a quarter of a multiprocessor, so
    /// that four blocks (1024 threads) stay resident, but never below the no-opt-in 48 KiB
    /// and never above the opt-in limit.
    pub fn bin_budget(&self) -> usize {
        (self.shared_mem_per_sm / 4)
            .max(self.shared_mem_per_block)
            .min(
                self.shared_mem_per_block_optin
                    .max(self.shared_mem_per_block),
            )
    }

    /// The shared memory the subproblem kernels plan for: the bin budget, and at most the
    /// opt-in limit per block.
    pub fn local_memory(&self) -> LocalMemory {
        LocalMemory {
            budget: self.bin_budget(),
            per_block: self
                .shared_mem_per_block_optin
                .max(self.shared_mem_per_block),
        }
    }

    /// A short key naming this GPU for caches and tuning profiles.
    pub fn key(&self) -> String {
        format!(
            "{}-sm{}-smem{}k-l2_{}m",
            self.sm(),
            self.sm_count,
            self.shared_mem_per_block_optin >> 10,
            self.l2_bytes >> 20
        )
    }
}

/// The local memory (CUDA's shared memory) a device gives the subproblem kernels: what the
/// bins are planned for, and the most one block may have. Both backends plan from it: CUDA
/// from its [`GpuArch`], OpenCL from `CL_DEVICE_LOCAL_MEM_SIZE` (both fields).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LocalMemory {
    /// Bytes one bin's box should take, so that several blocks share a multiprocessor.
    pub budget: usize,
    /// The most bytes one block may have.
    pub per_block: usize,
}
