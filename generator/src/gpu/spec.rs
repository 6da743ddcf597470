//! What shapes one spread module ([`GpuSpreadSpec`]: dimension, kernel, precision, bins,
//! per-role variants), the GPU methods ([`GpuMethod`]) and the rules that choose among them,
//! with the launch constants the templates and the runtime share.

use super::{Dialect, GpuArch, LocalMemory};
use crate::error::GenError;
use crate::kernel::KernelSpec;
use crate::params::{KernelKind, Precision};

/// What a fine grid is for, which shapes its bins ([`GpuSpreadSpec::for_role`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum GridRole {
    /// Interpolated from (type 2, type 3's inner grid): the SM-interpolation bins.
    Interpolated,
    /// Spread onto from many points per cell (type 1): [`GpuSpreadSpec::for_spreading`].
    Spread,
    /// Spread onto from few points per cell (type 3's outer grid):
    /// [`GpuSpreadSpec::for_sparse_spreading`].
    SpreadSparse,
}

impl GridRole {
    /// Of the methods asked for (spreading, interpolation), the one that binds on a grid of
    /// this role: the step the forward transform runs there. The other runs only in the
    /// adjoint, which takes the method asked for where the grid holds it and falls back
    /// otherwise ([`GpuSpreadSpec::methods`]), rather than refusing the plan.
    pub fn binding(self, want: [Option<GpuMethod>; 2]) -> [Option<GpuMethod>; 2] {
        match self {
            GridRole::Interpolated => [None, want[1]],
            GridRole::Spread | GridRole::SpreadSparse => [want[0], None],
        }
    }
}

/// Which subproblem kernels of a spec a device can run ([`GpuSpreadSpec::fit`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SubproblemFit {
    /// The SM kernels' box fits a block's local memory.
    pub sm: bool,
    /// So do the output-driven kernel's batch (and box), and its threads a block.
    pub od: bool,
}

/// GPU spreading/interpolation methods.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum GpuMethod {
    /// Point-driven over bin-sorted points, atomics straight to the global grid.
    GmSort,
    /// Shared-memory subproblems: a block accumulates one bin's points in its padded box.
    Sm,
    /// Output-driven subproblems (spreading only): the block's threads share out each point's
    /// footprint, so the shared box needs no atomics. For interpolation it means SM.
    OutputDriven,
}

impl GpuMethod {
    pub fn name(self) -> &'static str {
        match self {
            GpuMethod::GmSort => "gm-sort",
            GpuMethod::Sm => "sm",
            GpuMethod::OutputDriven => "output-driven",
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
/// box of type 3's sparse grids ([`GpuSpreadSpec::for_sparse_spreading`]; dense 2D grids
/// take rows of one warp), 3D's for the register box ([`GpuSpreadSpec::for_spreading`]).
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
/// The most devices a multi-device plan's routing kernel counts points for (its per-group
/// counters live in local memory).
pub const ROUTE_DEVICES: u32 = 64;

/// Where the output-driven kernel keeps a bin's padded box while it adds the bin's points.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum OdBox {
    /// In shared memory, each point's footprint cells shared out among the threads, a barrier
    /// between points: 1D, and 2D grids with few points per bin (type 3's outer grid).
    Shared,
    /// In registers, one pencil along the last dimension per thread, no barrier between
    /// points: 2D and 3D (see [`GpuSpreadSpec::for_spreading`]).
    Pencils,
}

/// Everything that shapes one spread module.
#[derive(Clone, Debug, PartialEq)]
pub struct GpuSpreadSpec {
    pub dim: usize,
    pub kernel: KernelSpec,
    pub precision: Precision,
    /// Bin sides in grid points per dimension (1 for unused dimensions).
    pub bins: [usize; 3],
    pub max_subproblem: usize,
    /// The output-driven kernel's box: [`OdBox::Shared`] only in 1D and 2D.
    pub od_box: OdBox,
}

impl GpuSpreadSpec {
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
        Ok(GpuSpreadSpec {
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

    /// The same spec with the caller's bin sides (`bins[d]` for each dimension: a tuning
    /// profile's, or an option's), or why they cannot be: a side of 0, or a padded bin box
    /// (the SM methods' block) above `limit` bytes of local memory.
    pub fn with_bins(mut self, bins: &[usize], limit: usize) -> Result<Self, String> {
        let (w, dim) = (self.kernel.width, self.dim);
        let refuse = |why: String| Err(format!("bins {bins:?} at width {w}: {why}"));
        if bins.len() != dim || bins.contains(&0) {
            return refuse(format!("{dim} sides of at least 1 expected"));
        }
        let bytes = bins
            .iter()
            .try_fold(2 * scalar_bytes(self.precision), |a, &b| {
                b.checked_add(w - 1).and_then(|p| a.checked_mul(p))
            });
        match bytes {
            Some(b) if b <= limit => {
                self.bins = std::array::from_fn(|d| bins.get(d).copied().unwrap_or(1));
                Ok(self)
            }
            Some(b) => refuse(format!(
                "the padded box needs {b} bytes of local memory per block, above this device's \
                 {limit}"
            )),
            None => refuse("the padded box overflows".into()),
        }
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
                return GpuSpreadSpec {
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
        GpuSpreadSpec {
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
        let with_side = |side: usize| GpuSpreadSpec {
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
        want: [Option<GpuMethod>; 2],
        fit: SubproblemFit,
        per_block: usize,
    ) -> Option<String> {
        let bins = &self.bins[..self.dim];
        let w = self.kernel.width;
        if want[0] == Some(GpuMethod::OutputDriven) && !fit.od {
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
        let shared_box = want[0] == Some(GpuMethod::Sm)
            || matches!(want[1], Some(GpuMethod::Sm | GpuMethod::OutputDriven));
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
        want: [Option<GpuMethod>; 2],
        fit: SubproblemFit,
    ) -> (GpuMethod, GpuMethod) {
        let mut spread = want[0].unwrap_or_else(|| choose_spread_method(self, m, nbins));
        let mut interp = want[1].unwrap_or_else(|| choose_interp_method(self, m, nbins));
        if spread == GpuMethod::OutputDriven && !fit.od {
            spread = GpuMethod::Sm;
        }
        if interp == GpuMethod::OutputDriven {
            interp = GpuMethod::Sm;
        }
        if !fit.sm {
            if spread == GpuMethod::Sm {
                spread = GpuMethod::GmSort;
            }
            interp = GpuMethod::GmSort;
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

/// How many times the box's atomics a bin's points must cost in point-driven atomics before
/// a subproblem method spreads them. 3D's scattered point-driven atomics cost about 1.5 box
/// atomics each (H200, 256³ modes f64: GM-sort 15.2 ms for 5.8·10⁸ complex atomics of
/// 1.7·10⁶ points, output-driven 36.6 ms for 2.1·10⁹ box atomics and the looks at 1.7·10⁷
/// points), so 3D takes output-driven at two thirds of its box; 1D and 2D keep 2.
fn breakeven_factor(dim: usize) -> f64 {
    if dim == 3 {
        2.0 / 3.0
    } else {
        2.0
    }
}

/// Which method to spread with, for `m` points on a grid cut into `nbins` bins.
///
/// The subproblem methods pay one global atomic per padded-box point per subproblem instead
/// of one per (point, touched grid point): they win once a bin holds more than about
/// `f·padded / w^d` points ([`breakeven_factor`] `f`), provided (in 1D, where SM runs) the box is not mostly padding. In
/// 2D and 3D the output-driven variant (no shared atomics) is the faster of the two, and its
/// spreading bins are small and mostly padding by design ([`GpuSpreadSpec::for_spreading`]);
/// in 1D the footprint is too small to share out, and SM is used.
pub fn choose_spread_method(spec: &GpuSpreadSpec, m: usize, nbins: usize) -> GpuMethod {
    let w = spec.kernel.width as f64;
    let p: usize = spec.padded()[..spec.dim].iter().product();
    let per_bin = m as f64 / nbins.max(1) as f64;
    let breakeven = breakeven_factor(spec.dim) * p as f64 / w.powi(spec.dim as i32);
    if (spec.dim > 1 || spec.bin_efficiency() >= 0.05) && per_bin >= breakeven {
        if spec.dim == 1 {
            GpuMethod::Sm
        } else {
            GpuMethod::OutputDriven
        }
    } else {
        GpuMethod::GmSort
    }
}

/// The methods of the gradient passes (spreading of values and derivative weights,
/// interpolation with the gradient) where the transform's are `methods` ([`GpuSpreadSpec::methods`]):
/// the same method, but that there is no output-driven gradient kernel (its registers
/// would hold a pencil's value and derivative rows), so output-driven spreading takes
/// GM-sort: its bins are small and mostly padding by design, which SM would zero, fill and
/// add back whole (3-D type 1 on the H100: 49 ms against the forward's 3.0), and SM takes
/// GM-sort where the gradient SM kernels do not run on the device (`fit.sm`: the box is the
/// SM kernels', but an OpenCL driver may give the larger gradient kernels fewer work-items
/// a group).
pub fn gradient_methods(
    methods: (GpuMethod, GpuMethod),
    fit: SubproblemFit,
) -> (GpuMethod, GpuMethod) {
    let one = |m| match m {
        GpuMethod::Sm if fit.sm => GpuMethod::Sm,
        _ => GpuMethod::GmSort,
    };
    (one(methods.0), one(methods.1))
}

/// Fewest points a bin, per cell of its padded box, for which SM interpolates faster than
/// GM-sort. GM-sort reads `w^d` scattered cells a point through L1/L2, whose sectors a warp's
/// points share only when they lie close; SM reads the box once, coalesced. In 3-D a point's
/// `w³` reads are the dearer, so SM pays sooner. 256³ modes, uniform points, H200, the sum
/// of set-points and execute (`nudt tune --backend cuda --dims 3 --modes 256`): f32 at one
/// point per mode (0.05 a box cell) SM 8.2 ms against GM-sort 14.7, f64 (0.027) 14.9
/// against 15.7; at a tenth of a point per mode (0.005, 0.0027) GM-sort 4.3 against 4.5 and
/// 6.8 against 10.1.
fn interp_breakeven(dim: usize) -> f64 {
    if dim == 3 {
        0.02
    } else {
        0.2
    }
}

/// Which method to interpolate with: SM (the bin's box read once into shared memory) when
/// bins are reasonably full ([`interp_breakeven`]) and not mostly padding, else GM-sort
/// (reads through L1/L2).
pub fn choose_interp_method(spec: &GpuSpreadSpec, m: usize, nbins: usize) -> GpuMethod {
    let p: usize = spec.padded()[..spec.dim].iter().product();
    let per_bin = m as f64 / nbins.max(1) as f64;
    if spec.dim > 1
        && spec.bin_efficiency() >= 0.1
        && per_bin >= interp_breakeven(spec.dim) * p as f64
    {
        GpuMethod::Sm
    } else {
        GpuMethod::GmSort
    }
}
