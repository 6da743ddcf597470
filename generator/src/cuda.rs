//! CUDA code generation: spreading, interpolation, bin sort, corrections and type 3 phases as
//! CUDA C source, specialised per (dimension, width, precision, kernel, bin sizes) and tuned
//! for a [`GpuArch`].
//!
//! Like the rest of the generator this knows nothing about the runtime: it returns source
//! text plus a description of every `extern "C"` entry point (launch geometry, shared memory),
//! which the runtime compiles with NVRTC and `nudt gen --target cuda` can print.
//!
//! Two modules cover a plan:
//! * the *spread module* ([`spread_module`]), one per [`CudaSpreadSpec`]: bin sort (bin index
//!   and rank by warp-aggregated atomics, scatter of each point's index to its sorted slot;
//!   the kernels read coordinates and strengths through the index), spreading GM-sort (one
//!   thread per sorted point, global atomics), SM (one block per bin subproblem,
//!   shared-memory accumulation, then atomic adds of the padded bin) and output-driven,
//!   interpolation GM-sort and SM;
//! * the *common module* ([`common_module`]), one per precision: the bin sort's prefix sums
//!   (bin starts and subproblem starts in one pass), subproblem lists, deconvolution + mode
//!   copies (type 1 fine grid → modes, type 2 modes → zero-padded fine grid), complex
//!   scaling, and the type 3 rescaling and pre/post phase kernels.
//!
//! A third, the *wide-Gaussian module* ([`gaussian_wide_module`]), one per (dimension, window
//! width, precision), serves the Gaussian-gridding type 3 (Capozzoli et al.'s parameters):
//! its windows are dozens of points wide, beyond the Horner fits and shared-memory bins.

use crate::error::GenError;
use crate::gpu::Dialect;
use crate::kernel::{gauss_legendre, KernelSpec};
use crate::params::{KernelKind, Precision};
use std::collections::HashMap;
use std::sync::{Arc, Mutex, OnceLock};
use tera::{Context, Tera};

const SPREAD: &str = include_str!("../../templates/cuda/spread.cu.tera");
const COMMON: &str = include_str!("../../templates/cuda/common.cu.tera");
const GAUSSIAN_WIDE: &str = include_str!("../../templates/cuda/gaussian_wide.cu.tera");

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

/// What a fine grid is for, which shapes its bins ([`CudaSpreadSpec::for_role`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum GridRole {
    /// Interpolated from (type 2, type 3's inner grid): the SM-interpolation bins.
    Interpolated,
    /// Spread onto from many points per cell (type 1): [`CudaSpreadSpec::for_spreading`].
    Spread,
    /// Spread onto from few points per cell (type 3's outer grid):
    /// [`CudaSpreadSpec::for_sparse_spreading`].
    SpreadSparse,
}

impl GridRole {
    /// Of the methods asked for (spreading, interpolation), the one that binds on a grid of
    /// this role: the step the forward transform runs there. The other runs only in the
    /// adjoint, which takes the method asked for where the grid holds it and falls back
    /// otherwise ([`CudaSpreadSpec::methods`]), rather than refusing the plan.
    pub fn binding(self, want: [Option<CudaMethod>; 2]) -> [Option<CudaMethod>; 2] {
        match self {
            GridRole::Interpolated => [None, want[1]],
            GridRole::Spread | GridRole::SpreadSparse => [want[0], None],
        }
    }
}

/// Which subproblem kernels of a spec a device can run ([`CudaSpreadSpec::fit`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SubproblemFit {
    /// The SM kernels' box fits a block's local memory.
    pub sm: bool,
    /// So do the output-driven kernel's batch (and box), and its threads a block.
    pub od: bool,
}

/// GPU spreading/interpolation methods.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum CudaMethod {
    /// Point-driven over bin-sorted points, atomics straight to the global grid.
    GmSort,
    /// Shared-memory subproblems: a block accumulates one bin's points in its padded box.
    Sm,
    /// Output-driven subproblems (spreading only): the block's threads share out each point's
    /// footprint, so the shared box needs no atomics. For interpolation it means SM.
    OutputDriven,
}

impl CudaMethod {
    pub fn name(self) -> &'static str {
        match self {
            CudaMethod::GmSort => "gm-sort",
            CudaMethod::Sm => "sm",
            CudaMethod::OutputDriven => "output-driven",
        }
    }
}

/// Most sorted points one shared-memory subproblem (one block) takes (cuFINUFFT's default).
pub const MAX_SUBPROBLEM: usize = 1024;
/// Threads per block of the point-driven kernels.
pub const GM_THREADS: u32 = 256;
/// Threads per block of the subproblem kernels.
pub const SM_THREADS: u32 = 256;
/// Points the output-driven kernel stages in shared memory at a time (weights, offsets, inner
/// values).
pub const OD_BATCH: usize = 64;
/// Most box pencils (threads) of a 3D output-driven block: each holds its pencil of
/// `side + w − 1` complex cells in registers, so wide kernels get smaller bins.
pub const OD_MAX_PENCILS: usize = 512;
/// Longest pencil (complex cells, held in registers by one thread) of the output-driven
/// kernel with its box in registers. Bins shaped for spreading keep theirs at 8–23 cells; a
/// grid shaped for interpolation (a type 2 plan's, spread onto only by its adjoint) has
/// pencils of 40–130 cells, which spill from registers (NVIDIA's OpenCL compiler refuses
/// the launch outright: `CL_OUT_OF_RESOURCES` on the H100), so there the SM kernel spreads.
pub const OD_MAX_ROW: usize = 32;
/// Preferred bin side of output-driven spreading grids per dimension: 2D's for the shared
/// box of type 3's sparse grids ([`CudaSpreadSpec::for_sparse_spreading`]; dense 2D grids
/// take rows of one warp), 3D's for the register box ([`CudaSpreadSpec::for_spreading`]).
/// The 1D entry is unused: 1D spreading grids take SM bins of at most [`SPREAD_BIN_1D`]
/// cells, since [`choose_spread_method`] picks SM there (a width-`w` footprint is too small
/// to share out), and the 1D output-driven kernel, run only when asked for, uses those bins.
pub const OD_BIN_SIDE: [usize; 3] = [0, 16, 4];
/// Most cells of a 1D spreading grid's bin. The SM box's padding favours long bins, but short
/// ones keep more blocks on a multiprocessor: 1D type 1 at 10^7 points on an H100, execute
/// 0.87–0.88 ms (f64, width 7) with 512- to 1024-cell bins against 1.05 with the 3616 that
/// fit the shared memory, and 0.54–0.55 ms (f32) against 0.63 with 4096. Set-points take
/// 0.05–0.1 ms longer (more bins to sum and list), least at 1024.
pub const SPREAD_BIN_1D: usize = 1024;
/// Threads per block of the bin sort's prefix sums in `dialect`: CUDA's scan shuffles inside
/// warps, and a block of 1024 takes the most bins per tile; OpenCL's doubles over local
/// memory in a group of [`ELEMENT_THREADS`], a size the backend already asks of every device.
pub fn scan_threads(dialect: Dialect) -> u32 {
    match dialect {
        Dialect::Cuda => 1024,
        Dialect::OpenCl { .. } => ELEMENT_THREADS,
    }
}

/// Bins one block of the prefix sums' first phase takes in `dialect` (4 per thread): the bins
/// of a grid make `ceil(nbins / scan_tile)` tiles.
pub fn scan_tile(dialect: Dialect) -> usize {
    4 * scan_threads(dialect) as usize
}
/// Most bins whose counters the tiled bin count keeps in shared memory (48 KiB of `u32`).
pub const LOCAL_BINS: usize = 12288;
/// Points per thread of one tile of the tiled bin count.
pub const COUNT_ITEMS: usize = 16;
/// Most buckets of the two-pass sort's first pass: few enough that a tile of
/// `COUNT_ITEMS * ELEMENT_THREADS` points puts several in each (one global atomic per bucket
/// and tile), and that their partly written sectors fit any L2.
pub const SORT_BUCKETS: usize = 1024;

/// Threads per block of the two-pass sort's second pass: large tiles
/// (`COUNT_ITEMS * SORT_THREADS` entries) put more points in each bin a tile reserves room
/// for with one atomic. (The first pass takes [`ELEMENT_THREADS`]: on an H100 its 10^8
/// points took 3.2 ms in blocks of 256 and 3.5 ms in blocks of 1024.)
pub const SORT_THREADS: u32 = 1024;
/// Hash slots of the second pass's shared-memory histogram (a power of two, at least twice
/// the bins of a bucket where the buckets are full: 2·10^6 bins make buckets of 2048).
pub const SORT_SLOTS: usize = 4096;

/// How set-points orders the points by bin.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SortPasses {
    /// Each index scattered straight to its bin.
    One,
    /// Scattered first to buckets of `2^shift` consecutive bins, then within them to bins.
    Two { shift: u32 },
}

/// The sort for `m` points in `nbins` bins on a GPU with `l2_bytes` of L2: `want` if given
/// (`true`: two passes), else two passes where the sorted index array (4 bytes a point) is
/// larger than L2 and the bins more than [`SORT_BUCKETS`]. A one-pass scatter writes a few
/// bytes into each bin's open sector, and while the indices fit L2 those sectors fill there;
/// beyond it they go back to DRAM partly written (see the template's two-pass sort).
pub fn sort_passes(m: usize, nbins: usize, l2_bytes: usize, want: Option<bool>) -> SortPasses {
    let two = want.unwrap_or(nbins > SORT_BUCKETS && 4 * m > l2_bytes);
    if !two || nbins <= 1 {
        return SortPasses::One;
    }
    let shift = nbins
        .div_ceil(SORT_BUCKETS)
        .next_power_of_two()
        .trailing_zeros();
    SortPasses::Two { shift }
}
/// Blocks of the bounding-interval reduction: each leaves one partial (min, max).
pub const MINMAX_BLOCKS: u32 = 256;
/// Threads per block of the elementwise kernels (corrections, phases, subproblem lists).
pub const ELEMENT_THREADS: u32 = 256;

/// Where the output-driven kernel keeps a bin's padded box while it adds the bin's points.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum OdBox {
    /// In shared memory, each point's footprint cells shared out among the threads, a barrier
    /// between points: 1D, and 2D grids with few points per bin (type 3's outer grid).
    Shared,
    /// In registers, one pencil along the last dimension per thread, no barrier between
    /// points: 2D and 3D (see [`CudaSpreadSpec::for_spreading`]).
    Pencils,
}

/// Everything that shapes one spread module.
#[derive(Clone, Debug, PartialEq)]
pub struct CudaSpreadSpec {
    pub dim: usize,
    pub kernel: KernelSpec,
    pub precision: Precision,
    /// Bin sides in grid points per dimension (1 for unused dimensions).
    pub bins: [usize; 3],
    pub max_subproblem: usize,
    /// The output-driven kernel's box: [`OdBox::Shared`] only in 1D and 2D.
    pub od_box: OdBox,
}

impl CudaSpreadSpec {
    /// The spec for `dim`, `kernel` and `precision`, with bins chosen for `arch`.
    pub fn new(
        dim: usize,
        kernel: KernelSpec,
        precision: Precision,
        arch: &GpuArch,
    ) -> Result<Self, GenError> {
        Self::within(dim, kernel, precision, arch.local_memory())
    }

    /// The spec for `dim`, `kernel` and `precision`, with bins chosen for `local` memory.
    pub fn within(
        dim: usize,
        kernel: KernelSpec,
        precision: Precision,
        local: LocalMemory,
    ) -> Result<Self, GenError> {
        if !(1..=3).contains(&dim) {
            return Err(GenError::Dimension(dim));
        }
        Ok(CudaSpreadSpec {
            dim,
            kernel,
            precision,
            bins: choose_bins(dim, kernel.width, precision, local.budget),
            max_subproblem: MAX_SUBPROBLEM,
            od_box: if dim == 1 {
                OdBox::Shared
            } else {
                OdBox::Pencils
            },
        })
    }

    /// The same spec with bins shaped for a grid that is spread onto (type 1) rather than
    /// interpolated from, by the output-driven method with its box in registers. Every thread
    /// of a block looks at every point of its bin, so few pencils pay, and short ones: a
    /// point's row is a whole pencil of `side + w − 1` cells. Measured on an H100, 10^7
    /// points, execute ms:
    ///
    /// * 3D, 200³ grid: width 7 f64 5.1 with 4³ bins against 5.4 (5³), 5.5 (6×6×4), 5.9
    ///   (4×4×8), 6.1 (4×4×2), 6.5 (6³, 3³), 8.4 (8³), 18 (16³); width 6 f32 2.0 with 4³
    ///   against 2.6 (4×4×8), 3.4 (8³). Wide kernels (type 3 at σ = 1.25: width 10) have a
    ///   larger halo per bin, so their bins are twice as deep along the pencils: 4.0 with
    ///   4×4×8 against 4.4 (8³) and 4.8 (4³).
    /// * 2D, 2000² grid: one warp of rows (`33 − w` of them) two cells deep: width 7 f64 1.74
    ///   with 26×2 bins against 1.82 (26×4), 2.2 (26×8, 10×8, 18×8), 2.5 (58×8) and 2.12 for
    ///   the shared box with 16² bins; width 6 f32 0.72 with 27×2 against 0.80 (27×4) and
    ///   1.07 for the shared box.
    ///
    /// 1D keeps SM bins, of at most [`SPREAD_BIN_1D`] cells. The side is halved while a 3D
    /// box has more than [`OD_MAX_PENCILS`] pencils.
    pub fn for_spreading(self) -> Self {
        let w = self.kernel.width;
        let bins = match self.dim {
            1 => {
                return CudaSpreadSpec {
                    bins: [self.bins[0].min(SPREAD_BIN_1D), 1, 1],
                    ..self
                }
            }
            2 => [33usize.saturating_sub(w).max(1), 2, 1],
            _ => {
                let mut side = OD_BIN_SIDE[2];
                while side > 1 && (side + w - 1).pow(2) > OD_MAX_PENCILS {
                    side /= 2;
                }
                [side, side, if w > 8 { 2 * side } else { side }]
            }
        };
        CudaSpreadSpec {
            bins,
            od_box: OdBox::Pencils,
            ..self
        }
    }

    /// The same spec for type 3's outer grid, spread onto from points that are few per cell
    /// (10^6 sources on a grid of about that many cells). In 3D as [`Self::for_spreading`];
    /// in 2D the register rows lose there (2D type 3 on an H100: 0.95 ms with 23×4 bins
    /// against 0.79 with the shared box), so the box stays in shared memory with square bins:
    /// its blocks are only footprint-sized (64 threads for width 7), so occupancy is set by
    /// how many boxes share a multiprocessor's shared memory, and small bins win (2D width 7
    /// f64 2.14 ms with 16² bins against 2.28 with 32² and 6.0 with 64², type 1 at 10^7
    /// points). The side is halved until the box and the staged batch fit the shared-memory
    /// budget; wide kernels, which would end with sides below half the preferred one (boxes of
    /// mostly padding), get the preferred or half side in up to half the opt-in shared memory
    /// instead (two blocks per multiprocessor).
    pub fn for_sparse_spreading(self, local: LocalMemory) -> Self {
        if self.dim != 2 {
            return self.for_spreading();
        }
        let with_side = |side: usize| CudaSpreadSpec {
            bins: [side, side, 1],
            od_box: OdBox::Shared,
            ..self.clone()
        };
        let preferred = OD_BIN_SIDE[1];
        let mut side = preferred;
        while side >= preferred / 2 {
            if with_side(side).od_smem_bytes() <= local.budget {
                return with_side(side);
            }
            side /= 2;
        }
        let roomy = (local.per_block / 2).max(local.budget);
        for side in [preferred, preferred / 2] {
            if with_side(side).od_smem_bytes() <= roomy {
                return with_side(side);
            }
        }
        loop {
            let candidate = with_side(side);
            if candidate.od_smem_bytes() <= local.budget || side == 1 {
                return candidate;
            }
            side /= 2;
        }
    }

    /// The same spec with bins shaped for `role` on a device with `local` memory. The
    /// spreading shapes were measured where a block may have 227 KiB; on a device with less
    /// (an OpenCL GPU: 48 KiB), the longest side is halved until the kernel the role runs
    /// fits: the output-driven one's staged batch where spreading runs output-driven (2D,
    /// 3D; its box is in registers), else the SM box. Wide kernels (type 3 at σ = 1.25) so
    /// keep their subproblem method, and as large a bin as fits.
    pub fn for_role(self, role: GridRole, local: LocalMemory) -> Self {
        let mut s = match role {
            GridRole::Interpolated => self,
            GridRole::Spread => self.for_spreading(),
            GridRole::SpreadSparse => self.for_sparse_spreading(local),
        };
        let od = role != GridRole::Interpolated && s.dim > 1;
        let fits = |s: &Self| {
            if od {
                s.od_smem_bytes() <= local.per_block
            } else {
                s.smem_bytes() <= local.per_block
            }
        };
        while !fits(&s) {
            // The pencils' batch depends on their side only; a box on every side.
            let d = if od && s.od_box == OdBox::Pencils {
                Some(s.dim - 1).filter(|&d| s.bins[d] > 1)
            } else {
                (0..s.dim)
                    .filter(|&d| s.bins[d] > 1)
                    .max_by_key(|&d| s.bins[d])
            };
            let Some(d) = d else { break };
            s.bins[d] = s.bins[d].div_ceil(2);
        }
        s
    }

    /// Which subproblem kernels fit blocks of at most `per_block` bytes of local memory and
    /// `max_threads` threads.
    pub fn fit(&self, per_block: usize, max_threads: usize) -> SubproblemFit {
        let row = self.od_box == OdBox::Shared || self.padded()[self.dim - 1] <= OD_MAX_ROW;
        SubproblemFit {
            sm: self.smem_bytes() <= per_block && SM_THREADS as usize <= max_threads,
            od: row
                && self.od_smem_bytes() <= per_block
                && self.od_threads() as usize <= max_threads,
        }
    }

    /// Why the methods in `want` (spreading, interpolation) cannot run where `fit` holds for
    /// blocks of `per_block` bytes of local memory, if they cannot.
    pub fn refuse(
        &self,
        want: [Option<CudaMethod>; 2],
        fit: SubproblemFit,
        per_block: usize,
    ) -> Option<String> {
        let bins = &self.bins[..self.dim];
        let w = self.kernel.width;
        if want[0] == Some(CudaMethod::OutputDriven) && !fit.od {
            let rows = if self.od_box == OdBox::Pencils {
                format!(
                    " (pencils of {} cells, at most {OD_MAX_ROW} held in registers)",
                    self.padded()[self.dim - 1]
                )
            } else {
                String::new()
            };
            return Some(format!(
                "the output-driven method needs {} bytes of local memory and {} threads per \
                 block for bins {bins:?} at width {w}{rows}, above this device's {per_block} \
                 bytes or its most threads; use SM, GM-sort or smaller bins",
                self.od_smem_bytes(),
                self.od_threads(),
            ));
        }
        let shared_box = want[0] == Some(CudaMethod::Sm)
            || matches!(want[1], Some(CudaMethod::Sm | CudaMethod::OutputDriven));
        if shared_box && !fit.sm {
            return Some(format!(
                "the SM method needs {} bytes of local memory per block for bins {bins:?} at \
                 width {w}, above this device's {per_block}; use GM-sort or smaller bins",
                self.smem_bytes(),
            ));
        }
        None
    }

    /// The spreading and interpolation methods for `m` points in `nbins` bins: the ones
    /// asked for (`want`), else [`choose_spread_method`] and [`choose_interp_method`], then
    /// narrowed to what `fit` allows (output-driven → SM → GM-sort; interpolation has no
    /// output-driven kernel and takes SM for it). Output-driven spreading keeps its box in
    /// registers, so it runs where the SM box does not fit.
    pub fn methods(
        &self,
        m: usize,
        nbins: usize,
        want: [Option<CudaMethod>; 2],
        fit: SubproblemFit,
    ) -> (CudaMethod, CudaMethod) {
        let mut spread = want[0].unwrap_or_else(|| choose_spread_method(self, m, nbins));
        let mut interp = want[1].unwrap_or_else(|| choose_interp_method(self, m, nbins));
        if spread == CudaMethod::OutputDriven && !fit.od {
            spread = CudaMethod::Sm;
        }
        if interp == CudaMethod::OutputDriven {
            interp = CudaMethod::Sm;
        }
        if !fit.sm {
            if spread == CudaMethod::Sm {
                spread = CudaMethod::GmSort;
            }
            interp = CudaMethod::GmSort;
        }
        (spread, interp)
    }

    /// Padded box of one bin: the bin plus `w − 1` points of overhang per used dimension.
    pub fn padded(&self) -> [usize; 3] {
        std::array::from_fn(|d| {
            if d < self.dim {
                self.bins[d] + self.kernel.width - 1
            } else {
                1
            }
        })
    }

    /// Dynamic shared memory of the SM kernels, in bytes.
    pub fn smem_bytes(&self) -> usize {
        self.padded().iter().product::<usize>() * 2 * scalar_bytes(self.precision)
    }

    /// Threads per block of the output-driven kernel, rounded up to whole warps. With the
    /// box in registers, one per pencil (at least one warp in 2D, two in 3D); with the box in
    /// shared memory, the footprint `w^d`, between 64 and 384.
    pub fn od_threads(&self) -> u32 {
        let p = self.padded();
        let threads = match (self.od_box, self.dim) {
            (OdBox::Pencils, 3) => (p[0] * p[1]).max(64),
            (OdBox::Pencils, _) => p[0].max(32),
            (OdBox::Shared, d) => self.kernel.width.pow(d as u32).clamp(64, 384),
        };
        threads.div_ceil(32) as u32 * 32
    }

    /// Dynamic shared memory of the output-driven kernel: one staged batch of `OD_BATCH`
    /// points and, with [`OdBox::Shared`], the box. Per point, with the box in registers: its
    /// row (a pencil's complex cells), `d·w` weights and `d` offsets; with the box shared:
    /// its strength, `d·w` weights and `d` offsets.
    pub fn od_smem_bytes(&self) -> usize {
        let t = scalar_bytes(self.precision);
        let (w, d) = (self.kernel.width, self.dim);
        match self.od_box {
            OdBox::Pencils => OD_BATCH * (2 * t * self.padded()[d - 1] + d * w * t + 4 * d),
            OdBox::Shared => self.smem_bytes() + OD_BATCH * (2 * t + d * w * t + 4 * d),
        }
    }

    /// Subproblem blocks the SM and output-driven kernels are launched with for `m` points in
    /// `nbins` bins: an upper bound of `Σ ⌈count/max_subproblem⌉` over the non-empty bins (at
    /// most `min(nbins, m)` of them), so that the host needs no count back from the sort;
    /// the blocks past the true count return at once.
    pub fn subproblem_bound(&self, m: usize, nbins: usize) -> usize {
        nbins.min(m) + m / self.max_subproblem
    }

    /// Fraction of the padded box that is the bin itself (1 in the limit of huge bins).
    pub fn bin_efficiency(&self) -> f64 {
        let b: usize = self.bins[..self.dim].iter().product();
        let p: usize = self.padded()[..self.dim].iter().product();
        b as f64 / p as f64
    }

    /// A unique, file-name-safe module name.
    pub fn name(&self) -> String {
        format!(
            "nudt_spread_{}d_w{}_{}_{}_s{}_b{}{}",
            self.dim,
            self.kernel.width,
            self.precision.type_name(),
            kernel_tag(&self.kernel),
            // "2", "125", "140": σ to 3 digits (the kernel tag holds β, which depends on it).
            format!("{}", (self.kernel.upsampling.0 * 1000.0).round() / 10.0)
                .replace('.', "")
                .trim_end_matches("00"),
            self.bins[..self.dim]
                .iter()
                .map(|b| b.to_string())
                .collect::<Vec<_>>()
                .join("x"),
            // The 1D default (shared box) and the 2D/3D default (pencils) carry no tag.
            if self.od_box == OdBox::Shared && self.dim > 1 {
                "_odshared"
            } else {
                ""
            }
        )
    }
}

fn kernel_tag(k: &KernelSpec) -> String {
    let kind = match k.kind {
        KernelKind::Pswf => "pswf",
        KernelKind::Es => "es",
        KernelKind::Gaussian => "gauss",
    };
    // β to 6 significant digits distinguishes every kernel the planner makes.
    format!(
        "{kind}{}",
        format!("{:.6e}", k.beta).replace(['.', '+', '-'], "")
    )
}

fn scalar_bytes(p: Precision) -> usize {
    match p {
        Precision::F32 => 4,
        Precision::F64 => 8,
    }
}

fn ctype(p: Precision) -> &'static str {
    match p {
        Precision::F32 => "float",
        Precision::F64 => "double",
    }
}

/// Bin sides for the SM kernels: the bin shape with the largest bin-to-padded-box ratio whose
/// padded box of complex values fits `budget` bytes (ties → the larger bin).
///
/// In 1D the ratio grows with the bin, so the bin is the largest that fits (at most 4096).
/// In 2D and 3D near-cubes win; wide 3D kernels get small bins and a low ratio, which is
/// where the planner prefers GM-sort.
pub fn choose_bins(dim: usize, width: usize, precision: Precision, budget: usize) -> [usize; 3] {
    let cbytes = 2 * scalar_bytes(precision);
    let cap = budget / cbytes;
    let pad = width - 1;
    let max_side: usize = match dim {
        1 => 4096,
        2 => 128,
        _ => 64,
    };
    let mut best = ([1usize; 3], -1.0f64, 0usize);
    let mut consider = |b: [usize; 3]| {
        let mut p = 1usize;
        let mut v = 1usize;
        for &s in &b[..dim] {
            p *= s + pad;
            v *= s;
        }
        if p > cap {
            return;
        }
        let eff = v as f64 / p as f64;
        if eff > best.1 + 1e-12 || ((eff - best.1).abs() <= 1e-12 && v > best.2) {
            best = (b, eff, v);
        }
    };
    // Sides 1..8, then multiples of 4 (1D: of 32), so boxes keep whole sectors per row.
    let sides: Vec<usize> = (1..=max_side)
        .filter(|&s| s <= 8 || s % if dim == 1 { 32 } else { 4 } == 0)
        .collect();
    match dim {
        1 => sides.iter().for_each(|&a| consider([a, 1, 1])),
        2 => {
            for &a in &sides {
                for &b in &sides {
                    consider([a, b, 1]);
                }
            }
        }
        _ => {
            for &a in &sides {
                for &b in &sides {
                    for &c in &sides {
                        consider([a, b, c]);
                    }
                }
            }
        }
    }
    best.0
}

/// One `extern "C"` entry point of a generated module and how to launch it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CudaKernel {
    pub name: &'static str,
    /// Threads per block.
    pub block_threads: u32,
    /// Dynamic shared memory per block in bytes (0: none).
    pub dynamic_smem: usize,
    /// How many blocks (x) and what blockIdx.y means.
    pub grid: &'static str,
    /// The parameters, in order, as declared in the source.
    pub params: Vec<CudaParam>,
}

/// One kernel parameter: its C type and name.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CudaParam {
    pub ty: String,
    pub name: String,
}

impl CudaParam {
    /// The argument class a launcher must pass: `"ptr"`, `"u64"`, `"u32"`, `"i32"`, `"f64"`.
    pub fn class(&self) -> &'static str {
        let t = self.ty.replace("__restrict__", "");
        let t = t.trim();
        if t.contains('*') {
            "ptr"
        } else if t.contains("unsigned long long") || t == "u64" {
            "u64"
        } else if t.contains("unsigned") {
            "u32"
        } else if t.contains("double") {
            "f64"
        } else if t.contains("int") {
            "i32"
        } else {
            "other"
        }
    }
}

/// The parameter list of `extern "C"` kernel `name` in `source`. The dynamic local memory
/// of the subproblem kernels (`DYNAMIC_LOCAL_PARAM`: no parameter in CUDA, a trailing
/// `__local` one in OpenCL) is not among them: `CudaKernel::dynamic_smem` sizes it.
pub fn parse_params(source: &str, name: &str) -> Option<Vec<CudaParam>> {
    let at = source.find(&format!(" {name}("))?;
    let open = at + name.len() + 1;
    let close = open + source[open..].find(')')?;
    let list = &source[open + 1..close];
    let list = list.split("DYNAMIC_LOCAL_PARAM(").next().unwrap_or(list);
    Some(
        list.split(',')
            .map(|p| {
                let p = p.split_whitespace().collect::<Vec<_>>().join(" ");
                let cut = p.rfind([' ', '*']).map_or(0, |i| i + 1);
                CudaParam {
                    ty: p[..cut].trim().to_string(),
                    name: p[cut..].trim().to_string(),
                }
            })
            .filter(|p| !p.name.is_empty())
            .collect(),
    )
}

/// Generated CUDA source and its entry points.
#[derive(Clone, Debug, PartialEq)]
pub struct CudaSource {
    /// Unique module name (also a file stem).
    pub name: String,
    pub source: String,
    /// Stable 64-bit FNV-1a hash of `source`, for caches.
    pub hash: u64,
    pub kernels: Vec<CudaKernel>,
    /// The spread spec this module was made for (`None` for the common module).
    pub spec: Option<CudaSpreadSpec>,
}

impl CudaSource {
    fn new(
        name: String,
        source: String,
        mut kernels: Vec<CudaKernel>,
        spec: Option<CudaSpreadSpec>,
    ) -> Self {
        for k in kernels.iter_mut() {
            k.params = parse_params(&source, k.name).unwrap_or_default();
        }
        CudaSource {
            hash: fnv1a64(source.as_bytes()),
            name,
            source,
            kernels,
            spec,
        }
    }

    /// Looks an entry point up by name.
    pub fn kernel(&self, name: &str) -> Option<&CudaKernel> {
        self.kernels.iter().find(|k| k.name == name)
    }

    /// A JSON description of the module's entry points and layout (for `nudt gen`).
    pub fn describe_json(&self) -> String {
        let mut s = format!(
            "{{\n  \"name\": \"{}\",\n  \"hash\": \"{:016x}\",\n",
            self.name, self.hash
        );
        if let Some(sp) = &self.spec {
            let p = sp.padded();
            s += &format!(
                "  \"dim\": {},\n  \"width\": {},\n  \"precision\": \"{}\",\n  \"kernel\": \"{:?}\",\n  \"beta\": {},\n  \"upsampling\": {},\n  \"bins\": [{}, {}, {}],\n  \"padded\": [{}, {}, {}],\n  \"smem_bytes\": {},\n  \"max_subproblem\": {},\n",
                sp.dim,
                sp.kernel.width,
                sp.precision.type_name(),
                sp.kernel.kind,
                sp.kernel.beta,
                sp.kernel.upsampling.0,
                sp.bins[0],
                sp.bins[1],
                sp.bins[2],
                p[0],
                p[1],
                p[2],
                sp.smem_bytes(),
                sp.max_subproblem
            );
        }
        s += "  \"kernels\": [\n";
        let rows: Vec<String> = self
            .kernels
            .iter()
            .map(|k| {
                format!(
                    "    {{\"name\": \"{}\", \"block_threads\": {}, \"dynamic_smem\": {}, \"grid\": \"{}\"}}",
                    k.name, k.block_threads, k.dynamic_smem, k.grid
                )
            })
            .collect();
        s += &rows.join(",\n");
        s += "\n  ]\n}\n";
        s
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

/// Renders the template `body` (one of this module's) under `name`. Each template is parsed
/// once per process: parsing the spread template took most of a module's 10 ms render, which
/// a type 3 set-points pays for two grids whenever its kernel changes.
fn render(name: &'static str, body: &'static str, ctx: &Context) -> Result<String, GenError> {
    type Parsed = Mutex<HashMap<&'static str, Arc<Tera>>>;
    static PARSED: OnceLock<Parsed> = OnceLock::new();
    let err = |e: tera::Error| GenError::Render(format!("{e:?}"));
    let parsed = PARSED.get_or_init(Default::default);
    let cached = parsed
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .get(name)
        .cloned();
    let t = match cached {
        Some(t) => t,
        None => {
            let mut t = Tera::default();
            t.add_raw_template(name, body).map_err(err)?;
            let t = Arc::new(t);
            let mut map = parsed.lock().unwrap_or_else(|e| e.into_inner());
            map.insert(name, t.clone());
            t
        }
    };
    t.render(name, ctx).map_err(err)
}

/// A CUDA floating literal of the given precision.
fn literal(c: f64, p: Precision) -> String {
    match p {
        Precision::F32 => format!("{:e}f", c as f32),
        Precision::F64 => format!("{c:e}"),
    }
}

/// The body of `weights(t, k)`: Horner's rule over the fitted rows, written out with the
/// coefficients as literals so that every multiply-add has an immediate operand.
fn horner_body(kernel: &KernelSpec, p: Precision) -> (String, usize, f64) {
    let poly = kernel.horner();
    let w = kernel.width;
    let mut s = String::new();
    for j in 0..w {
        s += &format!("    T k{j} = {};\n", literal(poly.coeffs[0][j], p));
    }
    for row in &poly.coeffs[1..] {
        for (j, &c) in row.iter().enumerate() {
            s += &format!("    k{j} = fma(k{j}, t, {});\n", literal(c, p));
        }
    }
    for j in 0..w {
        s += &format!("    k[{j}] = k{j};\n");
    }
    (s, poly.nc(), poly.max_error)
}

/// Names of the spread module's entry points.
pub mod names {
    pub const BIN_COUNT: &str = "nudt_bin_count";
    pub const BIN_COUNT_LOCAL: &str = "nudt_bin_count_local";
    pub const BIN_SCATTER: &str = "nudt_bin_scatter";
    pub const BIN_BUCKET: &str = "nudt_bin_bucket";
    pub const BIN_PLACE: &str = "nudt_bin_place";
    pub const SPREAD_GM: &str = "nudt_spread_gm";
    pub const SPREAD_SM: &str = "nudt_spread_sm";
    pub const INTERP_GM: &str = "nudt_interp_gm";
    pub const INTERP_SM: &str = "nudt_interp_sm";
    pub const SPREAD_OD: &str = "nudt_spread_od";
    pub const BIN_SCAN_TILES: &str = "nudt_bin_scan_tiles";
    pub const BIN_SCAN_TOTALS: &str = "nudt_bin_scan_totals";
    pub const BIN_SCAN_ADD: &str = "nudt_bin_scan_add";
    pub const SUBPROB_MAP: &str = "nudt_subprob_map";
    pub const GRID_TO_MODES: &str = "nudt_grid_to_modes";
    pub const MODES_TO_GRID: &str = "nudt_modes_to_grid";
    pub const CMUL: &str = "nudt_cmul";
    pub const MINMAX: &str = "nudt_minmax";
    pub const T3_SOURCES: &str = "nudt_t3_sources";
    pub const T3_TARGETS: &str = "nudt_t3_targets";
    pub const GW_SPREAD: &str = "nudt_gw_spread";
    pub const GW_PRECOMP: &str = "nudt_gw_precomp";
    pub const GW_TARGETS: &str = "nudt_gw_targets";
    pub const GW_INTERP: &str = "nudt_gw_interp";
}

/// Renders the spread module of one spec in CUDA C.
pub fn spread_module(spec: &CudaSpreadSpec) -> Result<CudaSource, GenError> {
    spread_module_in(spec, Dialect::Cuda)
}

/// The dialect header of a spread or common module: the module's precision, plus doubles
/// where an OpenCL device has them, since coordinates are reduced and type 3 phases computed
/// in double in every precision. An OpenCL device without `cl_khr_fp64` gets
/// [`GenError::Fp64Unsupported`].
fn module_header(dialect: Dialect, precision: Precision) -> Result<String, GenError> {
    let header = dialect.header(precision, false)?;
    Ok(match dialect {
        Dialect::OpenCl { fp64: true, .. } if precision == Precision::F32 => {
            format!("#pragma OPENCL EXTENSION cl_khr_fp64 : enable\n{header}")
        }
        Dialect::OpenCl { fp64: false, .. } => return Err(GenError::Fp64Unsupported),
        _ => header,
    })
}

/// Renders the spread module of one spec in `dialect`. OpenCL C gets every kernel but the
/// tiled bin count: its bin count takes one atomic per point (OpenCL C 1.2 has no warp votes
/// to aggregate them), and its floating-point atomics are compare-and-swap loops unless the
/// dialect takes inline PTX.
/// The subproblem kernels' local memory is sized at launch in both dialects (`dynamic_smem`
/// of their launch description: CUDA's dynamic shared memory, an OpenCL `__local` argument).
///
/// Rendered once per spec and dialect in a process: a type 3 plan asks again for both of its
/// grids' modules at every set-points whose extents change the kernel, and a fresh plan for
/// the modules of the last.
pub fn spread_module_in(spec: &CudaSpreadSpec, dialect: Dialect) -> Result<CudaSource, GenError> {
    type Rendered = Mutex<HashMap<String, CudaSource>>;
    static RENDERED: OnceLock<Rendered> = OnceLock::new();
    let rendered = RENDERED.get_or_init(Default::default);
    // The spec's every field, printed: equal keys render equal sources.
    let key = format!("{spec:?} {dialect:?}");
    if let Some(src) = rendered.lock().unwrap_or_else(|e| e.into_inner()).get(&key) {
        return Ok(src.clone());
    }
    let src = render_spread_module(spec, dialect)?;
    let mut map = rendered.lock().unwrap_or_else(|e| e.into_inner());
    map.insert(key, src.clone());
    Ok(src)
}

fn render_spread_module(spec: &CudaSpreadSpec, dialect: Dialect) -> Result<CudaSource, GenError> {
    if !(1..=3).contains(&spec.dim) {
        return Err(GenError::Dimension(spec.dim));
    }
    let w = spec.kernel.width;
    if !(crate::kernel::MIN_WIDTH..=crate::kernel::MAX_WIDTH).contains(&w) {
        return Err(GenError::Width(w));
    }
    if spec.bins.contains(&0) || spec.max_subproblem == 0 {
        return Err(GenError::Render(format!(
            "bin sides and subproblem size must be positive: {:?}, {}",
            spec.bins, spec.max_subproblem
        )));
    }
    // 1D has only the shared box, 3D only pencils; 2D has both.
    let only = match spec.dim {
        1 => Some(OdBox::Shared),
        3 => Some(OdBox::Pencils),
        _ => None,
    };
    if only.is_some_and(|b| b != spec.od_box) {
        return Err(GenError::Render(format!(
            "a {}D spread module's output-driven box is {:?}, not {:?}",
            spec.dim,
            only.unwrap_or(spec.od_box),
            spec.od_box
        )));
    }
    let bins: [usize; 3] = std::array::from_fn(|d| if d < spec.dim { spec.bins[d] } else { 1 });
    let spec = CudaSpreadSpec {
        bins,
        ..spec.clone()
    };
    let p = spec.padded();
    let (horner, nc, fit_error) = horner_body(&spec.kernel, spec.precision);
    let mut ctx = Context::new();
    ctx.insert("version", env!("CARGO_PKG_VERSION"));
    ctx.insert(
        "params",
        &vec![
            format!("dimension {}", spec.dim),
            format!("precision {}", spec.precision.type_name()),
            format!(
                "kernel {:?}, width {}, beta {}, upsampling {}",
                spec.kernel.kind, w, spec.kernel.beta, spec.kernel.upsampling.0
            ),
            format!("bins {:?}", &bins[..spec.dim]),
        ],
    );
    ctx.insert("ctype", ctype(spec.precision));
    ctx.insert("dialect", &module_header(dialect, spec.precision)?);
    ctx.insert("cuda", &(dialect == Dialect::Cuda));
    ctx.insert("single", &u8::from(spec.precision == Precision::F32));
    ctx.insert("dim", &spec.dim);
    ctx.insert("width", &w);
    ctx.insert("half", &(w / 2));
    ctx.insert("nc", &nc);
    ctx.insert("fit_error", &format!("{fit_error:.1e}"));
    ctx.insert("kernel", &format!("{:?}", spec.kernel.kind));
    ctx.insert("beta", &format!("{}", spec.kernel.beta));
    ctx.insert("horner", &horner);
    for d in 0..3 {
        ctx.insert(format!("b{d}"), &bins[d]);
        ctx.insert(format!("p{d}"), &p[d]);
    }
    ctx.insert("smem_bytes", &spec.smem_bytes());
    ctx.insert("maxsub", &spec.max_subproblem);
    ctx.insert("gm_threads", &GM_THREADS);
    ctx.insert("sm_threads", &SM_THREADS);
    ctx.insert("od_threads", &spec.od_threads());
    ctx.insert("od_pencils", &(spec.od_box == OdBox::Pencils));
    ctx.insert("od_batch", &OD_BATCH);
    ctx.insert("od_ahead", &u8::from(spec.dim == 2));
    ctx.insert("local_bins", &LOCAL_BINS);
    ctx.insert("count_items", &COUNT_ITEMS);
    ctx.insert("sort_buckets", &SORT_BUCKETS);
    ctx.insert("sort_slots", &SORT_SLOTS);
    ctx.insert("sort_threads", &SORT_THREADS);
    let source = render("spread", SPREAD, &ctx)?;
    let smem = spec.smem_bytes();
    let mut kernels = vec![
        CudaKernel {
            name: names::BIN_COUNT,
            block_threads: ELEMENT_THREADS,
            dynamic_smem: 0,
            grid: "ceil(M / block), grid-stride",
            params: Vec::new(),
        },
        CudaKernel {
            name: names::BIN_COUNT_LOCAL,
            block_threads: ELEMENT_THREADS,
            dynamic_smem: 0,
            grid: "ceil(M / (block * COUNT_ITEMS)) tiles, grid-stride; grids of <= LOCAL_BINS bins",
            params: Vec::new(),
        },
        CudaKernel {
            name: names::BIN_SCATTER,
            block_threads: ELEMENT_THREADS,
            dynamic_smem: 0,
            grid: "ceil(M / block), grid-stride",
            params: Vec::new(),
        },
        CudaKernel {
            name: names::BIN_BUCKET,
            block_threads: ELEMENT_THREADS,
            dynamic_smem: 0,
            grid:
                "ceil(M / (block * COUNT_ITEMS)) tiles, grid-stride; at most SORT_BUCKETS buckets",
            params: Vec::new(),
        },
        CudaKernel {
            name: names::BIN_PLACE,
            block_threads: SORT_THREADS,
            dynamic_smem: 0,
            grid: "ceil(M / (block * COUNT_ITEMS)) tiles, grid-stride",
            params: Vec::new(),
        },
        CudaKernel {
            name: names::SPREAD_GM,
            block_threads: GM_THREADS,
            dynamic_smem: 0,
            grid: "ceil(M / block), grid-stride; transforms looped inside",
            params: Vec::new(),
        },
        CudaKernel {
            name: names::SPREAD_SM,
            block_threads: SM_THREADS,
            dynamic_smem: smem,
            grid: "x: subproblems, y: transforms",
            params: Vec::new(),
        },
        CudaKernel {
            name: names::SPREAD_OD,
            block_threads: spec.od_threads(),
            dynamic_smem: spec.od_smem_bytes(),
            grid: "x: subproblems, y: transforms",
            params: Vec::new(),
        },
        CudaKernel {
            name: names::INTERP_GM,
            block_threads: GM_THREADS,
            dynamic_smem: 0,
            grid: "ceil(M / block), grid-stride; transforms looped inside",
            params: Vec::new(),
        },
        CudaKernel {
            name: names::INTERP_SM,
            block_threads: SM_THREADS,
            dynamic_smem: smem,
            grid: "x: subproblems, y: transforms",
            params: Vec::new(),
        },
    ];
    if dialect != Dialect::Cuda {
        // Tiled counts and the two-pass sort lean on warp votes and shared-memory atomics
        // the OpenCL dialect does without.
        kernels.retain(|k| {
            ![names::BIN_COUNT_LOCAL, names::BIN_BUCKET, names::BIN_PLACE].contains(&k.name)
        });
    }
    let name = match dialect {
        Dialect::Cuda => spec.name(),
        d => format!("{}_{}", spec.name(), d.name()),
    };
    Ok(CudaSource::new(name, source, kernels, Some(spec)))
}

/// Renders the width-independent module of one precision in CUDA C.
pub fn common_module(precision: Precision) -> Result<CudaSource, GenError> {
    common_module_in(precision, Dialect::Cuda)
}

/// Renders the width-independent module of one precision in `dialect` (OpenCL C: all but
/// the prefix sum and the min/max reduction, whose warp shuffles OpenCL C 1.2 lacks).
pub fn common_module_in(precision: Precision, dialect: Dialect) -> Result<CudaSource, GenError> {
    let mut ctx = Context::new();
    ctx.insert("version", env!("CARGO_PKG_VERSION"));
    ctx.insert("ctype", ctype(precision));
    ctx.insert("dialect", &module_header(dialect, precision)?);
    ctx.insert("cuda", &(dialect == Dialect::Cuda));
    ctx.insert("scan_threads", &scan_threads(dialect));
    ctx.insert("element_threads", &ELEMENT_THREADS);
    let source = render("common", COMMON, &ctx)?;
    let el = |name| CudaKernel {
        name,
        block_threads: ELEMENT_THREADS,
        dynamic_smem: 0,
        grid: "ceil(n / block), grid-stride; y: transforms where batched",
        params: Vec::new(),
    };
    let scan = |name, grid| CudaKernel {
        name,
        block_threads: scan_threads(dialect),
        dynamic_smem: 0,
        grid,
        params: Vec::new(),
    };
    let kernels = vec![
        scan(names::BIN_SCAN_TILES, "ceil(nbins / SCAN_TILE) blocks"),
        scan(names::BIN_SCAN_TOTALS, "one block"),
        el(names::BIN_SCAN_ADD),
        el(names::SUBPROB_MAP),
        el(names::GRID_TO_MODES),
        el(names::MODES_TO_GRID),
        el(names::CMUL),
        CudaKernel {
            name: names::MINMAX,
            block_threads: ELEMENT_THREADS,
            dynamic_smem: 0,
            grid: "MINMAX_BLOCKS blocks, grid-stride; one (min, max) pair per block",
            params: Vec::new(),
        },
        el(names::T3_SOURCES),
        el(names::T3_TARGETS),
    ];
    let name = match dialect {
        Dialect::Cuda => format!("nudt_common_{}", precision.type_name()),
        d => format!("nudt_common_{}_{}", precision.type_name(), d.name()),
    };
    Ok(CudaSource::new(name, source, kernels, None))
}

/// Renders the wide-Gaussian module for `dim` dimensions and windows `width` (odd) points
/// wide: spreading with pre-phases, pre-compensation, target factors and interpolation with
/// post-factors (templates/cuda/gaussian_wide.cu.tera). The window's shape is not baked in:
/// the runtime passes the table `e^{−k²/4b}` and `1/4b`, so one module serves every `b` of a
/// width, while the width itself fixes the loop bounds the compiler sees.
pub fn gaussian_wide_module(
    dim: usize,
    width: usize,
    precision: Precision,
) -> Result<CudaSource, GenError> {
    if !(1..=3).contains(&dim) {
        return Err(GenError::Dimension(dim));
    }
    if width % 2 != 1 {
        return Err(GenError::Render(format!(
            "wide-Gaussian windows are 2m + 1 points wide, got {width}"
        )));
    }
    let mut ctx = Context::new();
    ctx.insert("version", env!("CARGO_PKG_VERSION"));
    ctx.insert("ctype", ctype(precision));
    ctx.insert("single", &u8::from(precision == Precision::F32));
    ctx.insert("dim", &dim);
    ctx.insert("width", &width);
    ctx.insert("half", &(width / 2));
    let source = render("gaussian_wide", GAUSSIAN_WIDE, &ctx)?;
    let k = |name, block_threads, grid| CudaKernel {
        name,
        block_threads,
        dynamic_smem: 0,
        grid,
        params: Vec::new(),
    };
    let kernels = vec![
        k(
            names::GW_SPREAD,
            GM_THREADS,
            "ceil(M / block), grid-stride; y: transforms",
        ),
        k(
            names::GW_PRECOMP,
            ELEMENT_THREADS,
            "ceil(grid / block), grid-stride; y: transforms",
        ),
        k(
            names::GW_TARGETS,
            ELEMENT_THREADS,
            "ceil(K / block), grid-stride",
        ),
        k(
            names::GW_INTERP,
            GM_THREADS,
            "ceil(K / block), grid-stride; y: transforms",
        ),
    ];
    Ok(CudaSource::new(
        format!("nudt_gw_{dim}d_w{width}_{}", precision.type_name()),
        source,
        kernels,
        None,
    ))
}

/// Quadrature nodes `z_q ∈ (0, 1]` and weights `φ(z_q)·w_q` of the kernel's Fourier transform
/// `ψ̂(ω) = 2α Σ_q w_q φ(z_q) cos(ω α z_q)` (α = w/2), as the type 3 target kernel takes
/// them. Same rule as [`crate::kernel::FourierSeries`].
pub fn fourier_quadrature(kernel: &KernelSpec) -> (Vec<f64>, Vec<f64>) {
    let q = 2 + 2 * kernel.width;
    let (x, w) = gauss_legendre(2 * q);
    let shape = kernel.shape();
    x.iter()
        .zip(&w)
        .filter(|(z, _)| **z > 0.0)
        .map(|(z, wt)| (*z, wt * shape.eval(*z)))
        .unzip()
}

/// Which method to spread with, for `m` points on a grid cut into `nbins` bins.
///
/// The subproblem methods pay one global atomic per padded-box point per subproblem instead
/// of one per (point, touched grid point): they win once a bin holds more than about
/// `2·padded / w^d` points, provided (in 1D, where SM runs) the box is not mostly padding. In
/// 2D and 3D the output-driven variant (no shared atomics) is the faster of the two, and its
/// spreading bins are small and mostly padding by design ([`CudaSpreadSpec::for_spreading`]);
/// in 1D the footprint is too small to share out, and SM is used.
pub fn choose_spread_method(spec: &CudaSpreadSpec, m: usize, nbins: usize) -> CudaMethod {
    let w = spec.kernel.width as f64;
    let p: usize = spec.padded()[..spec.dim].iter().product();
    let per_bin = m as f64 / nbins.max(1) as f64;
    let breakeven = 2.0 * p as f64 / w.powi(spec.dim as i32);
    if (spec.dim > 1 || spec.bin_efficiency() >= 0.05) && per_bin >= breakeven {
        if spec.dim == 1 {
            CudaMethod::Sm
        } else {
            CudaMethod::OutputDriven
        }
    } else {
        CudaMethod::GmSort
    }
}

/// Which method to interpolate with: SM (the bin's box read once into shared memory) when
/// bins are reasonably full and not mostly padding, else GM-sort (reads through L1/L2).
pub fn choose_interp_method(spec: &CudaSpreadSpec, m: usize, nbins: usize) -> CudaMethod {
    let p: usize = spec.padded()[..spec.dim].iter().product();
    let per_bin = m as f64 / nbins.max(1) as f64;
    if spec.dim > 1 && spec.bin_efficiency() >= 0.1 && per_bin >= 0.2 * p as f64 {
        CudaMethod::Sm
    } else {
        CudaMethod::GmSort
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::params::Upsampling;

    fn es(w: usize) -> KernelSpec {
        KernelSpec::for_width(KernelKind::Es, w, Upsampling::TWO).unwrap()
    }

    #[test]
    fn bins_fit_the_budget_and_favour_cubes() {
        let arch = GpuArch::h100();
        for dim in 1..=3 {
            for w in 2..=16 {
                for p in [Precision::F32, Precision::F64] {
                    let s = CudaSpreadSpec::new(dim, es(w), p, &arch).unwrap();
                    // Wide 3D f64 kernels overflow the budget even with one-point bins.
                    assert!(
                        s.smem_bytes() <= arch.bin_budget() || s.bins == [1, 1, 1],
                        "{s:?}"
                    );
                    assert!(s.smem_bytes() <= arch.shared_mem_per_block_optin, "{s:?}");
                    assert!(s.bins[..dim].iter().all(|&b| b >= 1));
                }
            }
        }
        let s = CudaSpreadSpec::new(2, es(7), Precision::F64, &arch).unwrap();
        assert!(s.bins[0] >= 32 && s.bins[1] >= 32, "{:?}", s.bins);
        assert!(s.bin_efficiency() > 0.7);
        let s = CudaSpreadSpec::new(1, es(7), Precision::F32, &arch).unwrap();
        assert_eq!(s.bins[0], 4096);
    }

    #[test]
    fn spreading_bins_are_small_and_fit() {
        let arch = GpuArch::h100();
        for dim in 1..=3 {
            for w in 2..=16 {
                for p in [Precision::F32, Precision::F64] {
                    let base = CudaSpreadSpec::new(dim, es(w), p, &arch).unwrap();
                    let roomy = arch.shared_mem_per_block_optin / 2;
                    for s in [
                        base.clone().for_spreading(),
                        base.clone().for_sparse_spreading(arch.local_memory()),
                    ] {
                        assert!(s == base || s.od_smem_bytes() <= roomy, "{s:?}");
                        assert!(s.od_threads() <= 1024, "{s:?}");
                        assert!(s.bins[..dim]
                            .iter()
                            .all(|&b| b >= 1 && b <= base.bins[0].max(32)));
                        assert!(spread_module(&s).is_ok(), "{s:?}");
                    }
                }
            }
        }
        let s = CudaSpreadSpec::new(2, es(7), Precision::F64, &arch).unwrap();
        assert_eq!(s.clone().for_spreading().bins, [26, 2, 1]);
        assert_eq!(s.clone().for_spreading().od_threads(), 32);
        let sparse = s.for_sparse_spreading(arch.local_memory());
        assert_eq!((sparse.bins, sparse.od_box), ([16, 16, 1], OdBox::Shared));
        let s = CudaSpreadSpec::new(3, es(6), Precision::F32, &arch).unwrap();
        assert_eq!(s.for_spreading().bins, [4, 4, 4]);
        let s = CudaSpreadSpec::new(3, es(10), Precision::F64, &arch).unwrap();
        assert_eq!(
            s.clone().for_sparse_spreading(arch.local_memory()),
            s.for_spreading()
        );
        let s = CudaSpreadSpec::new(3, es(10), Precision::F64, &arch).unwrap();
        assert_eq!(s.for_spreading().bins, [4, 4, 8]);
        let s = CudaSpreadSpec::new(1, es(7), Precision::F32, &arch).unwrap();
        assert_eq!(s.for_spreading().bins[0], SPREAD_BIN_1D);
        // A box the module's dimension does not have is a typed error.
        let mut s = CudaSpreadSpec::new(3, es(7), Precision::F64, &arch).unwrap();
        s.od_box = OdBox::Shared;
        assert!(spread_module(&s).is_err());
    }

    /// OpenCL C modules hold only the entry points they list (bin sort, every spreading and
    /// interpolation method, corrections, type 3 phases), none of CUDA's syntax, and need
    /// doubles; the subproblem kernels end in their `__local` parameter.
    #[test]
    fn opencl_modules_render_without_cuda_syntax() {
        let arch = GpuArch::h100();
        let cl = Dialect::OpenCl {
            fp64: true,
            ptx: false,
        };
        for dim in 1..=3 {
            let s = CudaSpreadSpec::new(dim, es(7), Precision::F32, &arch).unwrap();
            let m = spread_module_in(&s, cl).unwrap();
            let mut names: Vec<&str> = m.kernels.iter().map(|k| k.name).collect();
            names.sort();
            assert_eq!(
                names,
                [
                    names::BIN_COUNT,
                    names::BIN_SCATTER,
                    names::INTERP_GM,
                    names::INTERP_SM,
                    names::SPREAD_GM,
                    names::SPREAD_OD,
                    names::SPREAD_SM,
                ]
            );
            for k in [names::SPREAD_SM, names::SPREAD_OD, names::INTERP_SM] {
                let k = m.kernel(k).unwrap();
                assert_eq!(k.params.len(), 17, "{:?}", k.params);
                assert!(k.dynamic_smem > 0);
            }
            assert_eq!(
                m.source.matches("DYNAMIC_LOCAL_PARAM(smem_raw))").count(),
                3
            );
            let c = common_module_in(Precision::F64, cl).unwrap();
            // OpenCL C 1.2 has no warp shuffles: its scan and min/max reduce through local
            // memory, in groups every device takes.
            let scan = c.kernel(names::BIN_SCAN_TILES).unwrap();
            assert_eq!(scan.block_threads, ELEMENT_THREADS);
            assert_eq!(c.kernel(names::BIN_SCAN_TOTALS).unwrap().params.len(), 6);
            assert_eq!(c.kernel(names::MINMAX).unwrap().params.len(), 3);
            for src in [&m, &c] {
                for k in &src.kernels {
                    assert_eq!(src.source.matches(&format!(" {}(", k.name)).count(), 1);
                    assert!(!k.params.is_empty(), "{}", k.name);
                }
                for cuda in [
                    "__global__",
                    "__shared__",
                    "__syncthreads",
                    "blockIdx",
                    "_sync(",
                ] {
                    assert!(!src.source.contains(cuda), "{cuda} in {}", src.name);
                }
            }
            // NVIDIA's compiler: the native reductions in place of compare-and-swap loops.
            let nv = Dialect::OpenCl {
                fp64: true,
                ptx: true,
            };
            for p in [Precision::F32, Precision::F64] {
                let s = CudaSpreadSpec::new(dim, es(7), p, &arch).unwrap();
                let t = if p == Precision::F32 { "f32" } else { "f64" };
                let (cas, ptx) = (
                    spread_module_in(&s, cl).unwrap(),
                    spread_module_in(&s, nv).unwrap(),
                );
                assert!(cas.source.contains("cmpxchg") && !cas.source.contains("asm"));
                assert!(!ptx.source.contains("cmpxchg"));
                for space in ["global", "shared"] {
                    assert!(ptx
                        .source
                        .contains(&format!("red.{space}.add.{t} [%0], %1;")));
                }
                assert_ne!(cas.name, ptx.name);
            }
            assert!(matches!(
                spread_module_in(
                    &s,
                    Dialect::OpenCl {
                        fp64: false,
                        ptx: false
                    }
                ),
                Err(GenError::Fp64Unsupported)
            ));
        }
    }

    /// Methods narrow to what a device's blocks hold, and asking for one they cannot hold is
    /// refused with the bytes it needs.
    #[test]
    fn methods_fit_the_device() {
        let local = GpuArch::h100().local_memory();
        let s = CudaSpreadSpec::within(3, es(7), Precision::F64, local)
            .unwrap()
            .for_role(GridRole::Spread, local);
        let all = s.fit(local.per_block, 1024);
        assert!(all.sm && all.od);
        let dense = (1 << 24, 1000);
        let od = [Some(CudaMethod::OutputDriven), None];
        assert_eq!(
            s.methods(dense.0, dense.1, [None; 2], all).0,
            CudaMethod::OutputDriven
        );
        assert!(s.refuse(od, all, local.per_block).is_none());
        // Room for the box but not for the staged batch: SM instead, and a forced
        // output-driven refused.
        assert!(s.smem_bytes() < s.od_smem_bytes());
        let few = s.fit(s.smem_bytes(), 1024);
        assert!(few.sm && !few.od);
        assert_eq!(s.methods(dense.0, dense.1, od, few).0, CudaMethod::Sm);
        assert!(s.refuse(od, few, s.smem_bytes()).is_some());
        // A 48 KiB device: the width-11 type 3 grid keeps CUDA's 4×4×8 bins, whose SM box
        // (56 KiB) does not fit but the output-driven kernel's batch does; it spreads
        // output-driven, and SM is refused.
        let small = LocalMemory {
            budget: 48 << 10,
            per_block: 48 << 10,
        };
        let w11 = CudaSpreadSpec::within(3, es(11), Precision::F64, small).unwrap();
        let cut = w11.clone().for_role(GridRole::SpreadSparse, small);
        assert_eq!(cut, w11.for_role(GridRole::SpreadSparse, local));
        let fit = cut.fit(small.per_block, 1024);
        assert!(fit.od && !fit.sm, "{:?}", cut.bins);
        // A 2D grid shaped for interpolation (a type 2 plan's, spread onto by its adjoint)
        // has pencils too long for registers: SM spreads there; shaped for spreading, the
        // pencils are short and output-driven fits.
        for mem in [small, local] {
            let s2 = CudaSpreadSpec::within(2, es(6), Precision::F32, mem).unwrap();
            let interp = s2.clone().for_role(GridRole::Interpolated, mem);
            let f = interp.fit(mem.per_block, 1024);
            assert!(!f.od && f.sm, "{:?}", interp.bins);
            assert_eq!(
                interp.methods(dense.0, dense.1, [None; 2], f).0,
                CudaMethod::Sm
            );
            let spread = s2.for_role(GridRole::Spread, mem);
            assert!(spread.fit(mem.per_block, 1024).od, "{:?}", spread.bins);
        }
        let dense = (1 << 24, 4096);
        assert_eq!(
            cut.methods(dense.0, dense.1, [None; 2], fit),
            (CudaMethod::OutputDriven, CudaMethod::GmSort)
        );
        assert!(cut.refuse(od, fit, small.per_block).is_none());
        let sm = [Some(CudaMethod::Sm), None];
        assert!(cut.refuse(sm, fit, small.per_block).is_some());
        // Less room: the pencils' side (the only one the batch depends on) halves.
        let tight = LocalMemory {
            budget: 46 << 10,
            per_block: 46 << 10,
        };
        let w16 = CudaSpreadSpec::within(3, es(16), Precision::F64, tight).unwrap();
        assert_eq!(
            w16.clone().for_role(GridRole::Spread, local).bins,
            [4, 4, 8]
        );
        let cut = w16.for_role(GridRole::Spread, tight);
        assert_eq!(cut.bins, [4, 4, 4]);
        assert!(cut.fit(tight.per_block, 1024).od);
        // No room for the box: GM-sort only.
        let none = s.fit(s.smem_bytes() - 1, 1024);
        assert!(!none.sm);
        let want = [Some(CudaMethod::Sm), Some(CudaMethod::Sm)];
        assert_eq!(
            s.methods(dense.0, dense.1, want, none),
            (CudaMethod::GmSort, CudaMethod::GmSort)
        );
        let why = s.refuse(want, none, s.smem_bytes() - 1).unwrap();
        assert!(why.contains(&s.smem_bytes().to_string()), "{why}");
    }

    #[test]
    fn modules_render_with_every_entry_point() {
        let arch = GpuArch::h100();
        let s = CudaSpreadSpec::new(3, es(7), Precision::F32, &arch).unwrap();
        let m = spread_module(&s).unwrap();
        for k in &m.kernels {
            assert!(
                m.source.contains(&format!("void {}(", k.name))
                    || m.source.contains(&format!("ENTRY {}(", k.name))
                    || m.source.contains(&format!(") {}(", k.name)),
                "{}",
                k.name
            );
        }
        assert!(m.source.contains("#define W 7"));
        assert!(m.source.contains("fma(k6, t, "));
        assert!(!m.source.contains("{{"));
        let c = common_module(Precision::F64).unwrap();
        for k in &c.kernels {
            assert!(m.hash != c.hash);
            assert!(c.source.contains(k.name), "{}", k.name);
        }
        assert!(m.describe_json().contains("\"smem_bytes\""));
        let gm = m.kernel(names::SPREAD_GM).unwrap();
        assert_eq!(gm.params.len(), 13, "{:?}", gm.params);
        assert_eq!(gm.params[0].class(), "u32");
        assert_eq!(gm.params[1].class(), "ptr");
        assert_eq!(gm.params[1].name, "idx");
        assert_eq!(gm.params[7].class(), "i32");
        assert_eq!(gm.params[12].class(), "u64");
        assert_eq!(gm.params[12].name, "gstride");
        let t3 = c.kernel(names::T3_TARGETS).unwrap();
        assert_eq!(t3.params.iter().filter(|p| p.class() == "f64").count(), 11);
        for k in m.kernels.iter().chain(&c.kernels) {
            assert!(!k.params.is_empty(), "{}", k.name);
            assert!(
                k.params.iter().all(|p| p.class() != "other"),
                "{:?}",
                k.params
            );
        }
    }

    #[test]
    fn wide_gaussian_modules_render_with_their_signatures() {
        for dim in 1..=3 {
            let m = gaussian_wide_module(dim, 45, Precision::F64).unwrap();
            assert!(m.source.contains("#define HALF 22"));
            assert!(!m.source.contains("{{"));
            for k in &m.kernels {
                assert!(m.source.contains(&format!(" {}(", k.name)), "{}", k.name);
                assert!(
                    k.params.iter().all(|p| p.class() != "other"),
                    "{:?}",
                    k.params
                );
            }
            let spread = m.kernel(names::GW_SPREAD).unwrap();
            assert_eq!(spread.params.len(), 15, "{:?}", spread.params);
            assert_eq!(spread.params[11].class(), "f64");
        }
        assert!(gaussian_wide_module(2, 44, Precision::F32).is_err());
        assert!(gaussian_wide_module(4, 45, Precision::F32).is_err());
        let a = gaussian_wide_module(2, 29, Precision::F32).unwrap();
        let b = gaussian_wide_module(2, 31, Precision::F32).unwrap();
        assert_ne!(a.name, b.name);
    }

    #[test]
    fn quadrature_matches_the_fourier_series() {
        let k = es(9);
        let (z, w) = fourier_quadrature(&k);
        let ft = k.fourier();
        let a = k.half_width();
        for omega in [0.0, 0.4, 1.3] {
            let s: f64 = z
                .iter()
                .zip(&w)
                .map(|(z, w)| w * (omega * a * z).cos())
                .sum();
            assert!((2.0 * a * s - ft.at(omega)).abs() < 1e-13 * ft.at(0.0));
        }
    }

    #[test]
    fn names_are_unique_per_kernel() {
        let arch = GpuArch::h100();
        let a = CudaSpreadSpec::new(2, es(7), Precision::F64, &arch).unwrap();
        let g = KernelSpec::for_width(KernelKind::Gaussian, 7, Upsampling::TWO).unwrap();
        let b = CudaSpreadSpec::new(2, g, Precision::F64, &arch).unwrap();
        let e125 = KernelSpec::for_width(KernelKind::Es, 7, Upsampling::FIVE_FOURTHS).unwrap();
        let c = CudaSpreadSpec::new(2, e125, Precision::F64, &arch).unwrap();
        assert_ne!(a.name(), b.name());
        assert_ne!(a.name(), c.name());
        assert!(a
            .name()
            .chars()
            .all(|ch| ch.is_ascii_alphanumeric() || ch == '_'));
    }
}
