//! The device engines: a fine grid with its bin-sorted points (spread and interpolate through
//! the generated kernels), the mode map (corrections and mode copies), and cuFFT plans.

use super::error::{device_call, driver, CudaError, CudaResult};
use super::launch::{blocks, load_module, Arg, Kernel};
use super::memory::alloc;
use super::CudaFloat;
use crate::gpu::engine::{GridParts, SortedGrid};
use crate::gpu::gradient::GradKernels;
use crate::gpu::kernels::PassKernels;
use crate::gpu::plan::ModuleKey;
use crate::gpu::routing::SlabKernels;
use crate::planner::limits::MAX_BATCH;
use crate::planner::sets;
use crate::uniform::ModeOrder;
use cudarc::driver::{CudaContext, CudaSlice, CudaStream, DevicePtr};
use nudt_gen::gpu::Dialect;
use nudt_gen::gpu::{
    names, scan_tile, sort_passes, GpuArch, GpuMethod, GpuSource, GpuSpreadSpec, SortPasses,
    SubproblemFit, COUNT_ITEMS, LOCAL_BINS, MINMAX_BLOCKS,
};
use nudt_gen::KernelSpec;
use std::sync::Arc;

/// Raw device address of one of our own buffers. All of them are allocated on, and used only
/// on, the plan's stream, whose ordering alone keeps them safe.
pub(crate) fn ptr<T>(s: &CudaSlice<T>, stream: &CudaStream) -> u64 {
    let (p, _sync) = s.device_ptr(stream);
    p
}

/// Byte offset of element `i` of a `T` array.
pub(crate) fn at<T>(base: u64, i: usize) -> u64 {
    base + (i * std::mem::size_of::<T>()) as u64
}

/// The product of `sides` (points of a grid, bins, modes), or `GridOverflow` if it does not
/// fit a `usize`.
pub(crate) fn checked_len(sides: &[usize]) -> CudaResult<usize> {
    sides
        .iter()
        .try_fold(1usize, |a, &v| a.checked_mul(v))
        .ok_or_else(|| crate::NudtError::GridOverflow.into())
}

/// Zeroes `bytes` bytes at `p` on `stream`.
pub(crate) fn memset0(stream: &CudaStream, p: u64, bytes: usize) -> CudaResult<()> {
    if bytes == 0 {
        return Ok(());
    }
    device_call("cuMemsetD8Async")?;
    // SAFETY: `p .. p + bytes` lies inside a live allocation (callers pass whole buffers).
    unsafe { cudarc::driver::result::memset_d8_async(p, 0, bytes, stream.cu_stream()) }
        .map_err(|e| driver("cuMemsetD8Async", e))
}

/// Entry points of a spread module.
#[derive(Clone, Debug)]
pub(crate) struct SpreadFns {
    bin_count: Kernel,
    bin_count_local: Kernel,
    bin_scatter: Kernel,
    bin_bucket: Kernel,
    bin_place: Kernel,
    /// The passes over the points.
    passes: PassKernels<Kernel>,
}

/// Entry points of the common module.
#[derive(Clone, Debug)]
pub(crate) struct CommonFns {
    pub bin_scan_tiles: Kernel,
    pub bin_scan_totals: Kernel,
    pub bin_scan_add: Kernel,
    pub subprob_map: Kernel,
    pub grid_to_modes: Kernel,
    pub modes_to_grid: Kernel,
    pub cmul: Kernel,
    pub minmax: Kernel,
    pub t3_sources: Kernel,
    pub t3_targets: Kernel,
    /// The derivatives' element-wise steps.
    pub grad: GradKernels<Kernel>,
    /// A multi-device plan's exchanges and routing.
    pub slabs: SlabKernels<Kernel>,
}

impl CommonFns {
    pub fn load(ctx: &Arc<CudaContext>, src: &GpuSource, arch: &GpuArch) -> CudaResult<Self> {
        let (m, _) = load_module(ctx, src, arch)?;
        let k = |n| Kernel::load(&m, src, n);
        Ok(CommonFns {
            bin_scan_tiles: k(names::BIN_SCAN_TILES)?,
            bin_scan_totals: k(names::BIN_SCAN_TOTALS)?,
            bin_scan_add: k(names::BIN_SCAN_ADD)?,
            subprob_map: k(names::SUBPROB_MAP)?,
            grid_to_modes: k(names::GRID_TO_MODES)?,
            modes_to_grid: k(names::MODES_TO_GRID)?,
            cmul: k(names::CMUL)?,
            minmax: k(names::MINMAX)?,
            t3_sources: k(names::T3_SOURCES)?,
            t3_targets: k(names::T3_TARGETS)?,
            grad: GradKernels::load(k)?,
            slabs: SlabKernels::load(k)?,
        })
    }

    /// Partials (min, max) each [`Self::minmax`] leaves: one pair per block.
    pub fn minmax_blocks(&self) -> usize {
        MINMAX_BLOCKS as usize
    }

    /// Per-block (min, max) of the `n` coordinates from `first` at `x` into `2 ·
    /// minmax_blocks()` doubles at `part`.
    pub fn minmax(
        &self,
        stream: &CudaStream,
        (first, n): (usize, usize),
        x: u64,
        part: u64,
    ) -> CudaResult<()> {
        let args = [first, n].map(|v| Arg::U64(v as u64));
        let args = [&args[..], &[Arg::Mem(x), Arg::Mem(part)]].concat();
        self.minmax.launch(stream, (MINMAX_BLOCKS, 1), &args)
    }

    /// `out[tr][j] = in[tr][j] · fac[first + j]` for `ntr` transforms of `n` complex values
    /// (with `conj`, the conjugate of the factor: an adjoint's).
    #[allow(clippy::too_many_arguments)]
    pub fn cmul(
        &self,
        stream: &CudaStream,
        (first, n, ntr): (usize, usize, usize),
        input: u64,
        fac: u64,
        out: u64,
        conj: bool,
    ) -> CudaResult<()> {
        if n == 0 {
            return Ok(());
        }
        self.cmul.launch(
            stream,
            (blocks(n, self.cmul.threads), ntr as u32),
            &[
                Arg::U64(n as u64),
                Arg::Mem(input),
                Arg::Mem(fac),
                Arg::U64(first as u64),
                Arg::Mem(out),
                Arg::U64(n as u64),
                Arg::I32(conj as i32),
            ],
        )
    }
}

/// Points sorted into the bins of one fine grid. The buffers outlive a point set: the next
/// `set_points` reuses them when they are large enough, so a repeated sort allocates nothing
/// and never waits on the host.
struct Sorted {
    m: usize,
    /// Where each point set starts, then `m` (`nsets + 1` values): one set that every
    /// transform shares, or one per transform, sorted set by set ([`crate::planner::sets`]).
    sets: CudaSlice<u32>,
    /// The same on the host: a batch's points, and its launches' sizes
    /// ([`crate::planner::sets::points_of`]).
    starts: Vec<u32>,
    nsets: usize,
    /// Bins of every set together (`nsets` times the grid's).
    nbins: usize,
    /// Device addresses of the points' coordinates, one array per dimension (0 past `dim`),
    /// read through `idx` by every spreading and interpolation kernel. Their owner keeps them
    /// alive and unchanged while the points are set (the plan: its own copies, or the
    /// caller's arrays it holds).
    coords: [u64; 3],
    /// The points' indices in bin order, at least `m`.
    idx: CudaSlice<u32>,
    /// Each point's rank inside its bin: at least `m` for the one-pass sort, which alone
    /// keeps them.
    rank: CudaSlice<u32>,
    /// Points per bin (`nbins`).
    counts: CudaSlice<u32>,
    /// Totals of each tile of the prefix sums, then their offsets: (points, subproblems)
    /// per tile of [`scan_tile`] bins.
    scan_tiles: CudaSlice<u32>,
    /// First sorted point of each bin, and of each bin's subproblems (`nbins + 1` each; the
    /// last entries are the totals).
    bin_start: CudaSlice<u32>,
    sub_start: CudaSlice<u32>,
    /// Subproblem lists (bin, first sorted point) of the SM kernels: room for `sub_bound`.
    sub_bin: CudaSlice<u32>,
    sub_first: CudaSlice<u32>,
    /// Subproblem blocks launched ([`GpuSpreadSpec::subproblem_bound`]; 0 without SM).
    sub_bound: usize,
    spread: GpuMethod,
    interp: GpuMethod,
}

impl Sorted {
    /// Buffers for `m` points (`ranks` of them ranked), `nbins` bins and `sub_bound`
    /// subproblems.
    fn alloc(
        stream: &Arc<CudaStream>,
        m: usize,
        ranks: usize,
        nbins: usize,
        sub_bound: usize,
    ) -> CudaResult<Self> {
        Ok(Sorted {
            m,
            sets: alloc::<u32>(stream, 2, "point set starts")?,
            starts: Vec::new(),
            nsets: 1,
            nbins,
            coords: [0; 3],
            idx: alloc::<u32>(stream, m, "sorted point indices")?,
            rank: alloc::<u32>(stream, ranks, "bin ranks")?,
            counts: alloc::<u32>(stream, nbins, "bin counts")?,
            scan_tiles: alloc::<u32>(stream, 2 * scan_tiles(nbins), "prefix-sum tiles")?,
            bin_start: alloc::<u32>(stream, nbins + 1, "bin starts")?,
            sub_start: alloc::<u32>(stream, nbins + 1, "subproblem starts")?,
            sub_bin: alloc::<u32>(stream, sub_bound, "subproblem bins")?,
            sub_first: alloc::<u32>(stream, sub_bound, "subproblem first points")?,
            sub_bound,
            spread: GpuMethod::GmSort,
            interp: GpuMethod::GmSort,
        })
    }

    /// The sorted points as the kernels take them: indices in bin order, then the
    /// coordinate arrays.
    fn point_args(&self, stream: &CudaStream) -> [Arg; 4] {
        [
            Arg::Mem(ptr(&self.idx, stream)),
            Arg::Mem(self.coords[0]),
            Arg::Mem(self.coords[1]),
            Arg::Mem(self.coords[2]),
        ]
    }

    /// Whether these buffers hold `m` points (`ranks` of them ranked), `nbins` bins and
    /// `sub_bound` subproblems.
    fn fits(&self, m: usize, ranks: usize, nbins: usize, sub_bound: usize) -> bool {
        self.idx.len() >= m
            && self.rank.len() >= ranks
            && self.counts.len() >= nbins
            && self.sub_bin.len() >= sub_bound
    }
}

/// Tiles of the prefix sums over `nbins` bins (at least one).
fn scan_tiles(nbins: usize) -> usize {
    nbins.div_ceil(scan_tile(Dialect::Cuda)).max(1)
}

/// A fine grid on the device: sizes, spread module and (once set) sorted points.
pub(crate) struct FineGrid<T> {
    /// Fine-grid size per dimension (1 for unused dimensions).
    pub n: [usize; 3],
    pub spec: GpuSpreadSpec,
    nb: [usize; 3],
    /// Points of the grid and bins of its sort (products of `n` and `nb`, checked).
    len: usize,
    nbins: usize,
    fns: SpreadFns,
    fit: SubproblemFit,
    sorted: Option<Sorted>,
    /// Methods requested by the options (spreading, interpolation; `None`: choose per point
    /// set).
    want: [Option<GpuMethod>; 2],
    want_two_pass: Option<bool>,
    l2_bytes: usize,
    _t: std::marker::PhantomData<T>,
}

/// A grid's compiled spread module and the methods it allows, which do not depend on the
/// grid's size: made at plan creation, also for type 3, whose grids are sized only in
/// set-points (from the points' extents) and then take their module ready.
#[derive(Clone, Debug)]
pub(crate) struct GridModule {
    spec: GpuSpreadSpec,
    fns: SpreadFns,
    fit: SubproblemFit,
    /// Methods requested by the options (spreading, interpolation; `None`: choose per point
    /// set).
    want: [Option<GpuMethod>; 2],
    /// The sort asked for by the options (`Some(true)`: two passes; `None`: by size), and
    /// the L2 the automatic choice weighs the points against.
    want_two_pass: Option<bool>,
    l2_bytes: usize,
}

impl GridModule {
    /// The spread module of `key.dim`-D grids for `key.kernel` in `T`, its bins shaped for
    /// `key.role`; `bins` overrides them, `want` the methods and `want_two_pass` the choice
    /// of sort ([`sort_passes`]).
    pub fn new<T: CudaFloat>(
        ctx: &Arc<CudaContext>,
        arch: &GpuArch,
        key: ModuleKey,
        bins: Option<[usize; 3]>,
        want: [Option<GpuMethod>; 2],
        want_two_pass: Option<bool>,
    ) -> CudaResult<Self> {
        let (dim, kernel, role) = (key.dim, key.kernel, key.role);
        let local = arch.local_memory();
        let limit = local.per_block.max(48 << 10);
        let mut spec = GpuSpreadSpec::new(dim, kernel, T::PRECISION, arch)?.for_role(role, local);
        if let Some(b) = bins {
            spec = spec
                .with_bins(&b[..dim], limit)
                .map_err(CudaError::Unsupported)?;
        }
        let src = nudt_gen::gpu::spread_module(&spec)?;
        let spec = src.spec.clone().expect("spread modules carry their spec");
        let fit = spec.fit(limit, 1024);
        if let Some(why) = spec.refuse(role.binding(want), fit, limit) {
            return Err(CudaError::Unsupported(why));
        }
        let (m, _) = load_module(ctx, &src, arch)?;
        let k = |name| Kernel::load(&m, &src, name);
        let fns = SpreadFns {
            bin_count: k(names::BIN_COUNT)?,
            bin_count_local: k(names::BIN_COUNT_LOCAL)?,
            bin_scatter: k(names::BIN_SCATTER)?,
            bin_bucket: k(names::BIN_BUCKET)?,
            bin_place: k(names::BIN_PLACE)?,
            passes: PassKernels::load(k)?,
        };
        let (sm, od) = fns.passes.with_shared_memory();
        if fit.sm {
            for f in sm {
                f.allow_smem()?;
            }
        }
        if fit.od {
            od.allow_smem()?;
        }
        Ok(GridModule {
            spec,
            fns,
            fit,
            want,
            want_two_pass,
            l2_bytes: arch.l2_bytes,
        })
    }
}

/// CUDA's launch bounds keep a block's threads whatever the kernels' registers, so the
/// gradient kernels fit as the SM kernels do.
impl<T> SortedGrid for FineGrid<T> {
    fn parts(&self) -> GridParts<'_> {
        let methods = self.sorted.as_ref().map(|s| (s.spread, s.interp));
        (self.n, &self.spec, methods, self.fit)
    }
}

impl<T: CudaFloat> FineGrid<T> {
    /// A fine grid of sides `n` (`module.spec.dim` of them) spread and interpolated through
    /// `module`.
    pub fn new(module: &GridModule, n: &[usize]) -> CudaResult<Self> {
        let dim = n.len();
        // Sides are within the plan layer's limit (`planner::limits::MAX_GRID_SIDE`), so
        // grid indices fit the device's ints; bins are counted in u32.
        let nn: [usize; 3] = std::array::from_fn(|d| if d < dim { n[d] } else { 1 });
        let len = checked_len(&nn)?;
        let spec = module.spec.clone();
        let nb: [usize; 3] = std::array::from_fn(|d| nn[d].div_ceil(spec.bins[d]));
        let nbins = checked_len(&nb)?;
        if nbins > u32::MAX as usize / 2 {
            return Err(crate::NudtError::GridOverflow.into());
        }
        Ok(FineGrid {
            n: nn,
            spec,
            nb,
            len,
            nbins,
            fns: module.fns.clone(),
            fit: module.fit,
            sorted: None,
            want: module.want,
            want_two_pass: module.want_two_pass,
            l2_bytes: module.l2_bytes,
            _t: std::marker::PhantomData,
        })
    }

    pub fn len(&self) -> usize {
        self.len
    }

    /// Forgets the points set (their coordinates were found bad after the sort).
    pub fn forget_points(&mut self) {
        self.sorted = None;
    }

    /// Bin-sorts the points whose coordinates (radians, `T`) are at `coords[d]` on the device,
    /// in sets starting at `sets` (the last entry the number of points `m`;
    /// [`crate::planner::sets::shared`] for one set), the sets one after another:
    /// the points per bin (one kernel; per point also its rank inside its bin for the one-pass
    /// sort, through a shared-memory histogram per tile of points when the bins are few
    /// enough), the prefix sums of bins and subproblems (three launches), the indices placed
    /// in bin order (see [`SortPasses`]), and the subproblem lists. The coordinates stay where
    /// they are: the grid keeps their addresses, and the caller keeps them alive and unchanged
    /// while these points are set. `scratch` (address, bytes) is device memory free until the
    /// sort's work has run, e.g. the fine grids: the two-pass sort keeps its 8 bytes a point
    /// there when they fit, else in a buffer of its own freed after it. Where `bad` is not 0,
    /// the count also leaves there (a device `u32` holding `u32::MAX`) the least index of a
    /// point with a non-finite coordinate: the check of the caller's device arrays, fused into
    /// the pass that reads them. Everything is queued on `stream`; nothing is read back and,
    /// when the last point set was at least as large, nothing is allocated past that buffer.
    pub fn set_points(
        &mut self,
        stream: &Arc<CudaStream>,
        common: &CommonFns,
        coords: [u64; 3],
        sets: &[u32],
        scratch: (u64, usize),
        bad: u64,
    ) -> CudaResult<()> {
        let (m, nsets) = (sets.last().map_or(0, |&m| m as usize), sets.len() - 1);
        let nbins = sets::sort_bins(nsets, self.nbins)?;
        let old = self.sorted.take();
        let (spread, interp) = self.spec.methods(m, nbins, self.want, self.fit);
        let passes = sort_passes(m, nbins, self.l2_bytes, self.want_two_pass);
        let ranks = if passes == SortPasses::One { m } else { 0 };
        // The subproblem lists whenever a subproblem kernel can run: any method may then be
        // asked for (`spread_with`, cross-checks) without sorting again.
        let sub_bound = if self.fit.sm || self.fit.od {
            self.spec.subproblem_bound(m, nbins)
        } else {
            0
        };
        let mut s = match old {
            Some(s) if s.fits(m, ranks, nbins, sub_bound) => s,
            old => {
                drop(old);
                Sorted::alloc(stream, m, ranks, nbins, sub_bound)?
            }
        };
        s.m = m;
        s.nbins = nbins;
        s.nsets = nsets;
        s.starts = sets.to_vec();
        if s.sets.len() < sets.len() {
            s.sets = alloc::<u32>(stream, sets.len(), "point set starts")?;
        }
        device_call("cuMemcpyHtoD (point set starts)")?;
        stream
            .memcpy_htod(sets, &mut s.sets.slice_mut(..sets.len()))
            .map_err(|e| driver("cuMemcpyHtoD (point set starts)", e))?;
        s.coords = coords;
        s.sub_bound = sub_bound;
        s.spread = spread;
        s.interp = interp;
        let (n, nb) = (self.n, self.nb);
        let i = |v: usize| Arg::I32(v as i32);
        let starts = ptr(&s.bin_start, stream);
        let sub_starts = ptr(&s.sub_start, stream);
        let counts = ptr(&s.counts, stream);
        let idx = ptr(&s.idx, stream);
        memset0(stream, counts, 4 * nbins)?;
        let xs = [
            Arg::Mem(coords[0]),
            Arg::Mem(coords[1]),
            Arg::Mem(coords[2]),
        ];
        let geometry = [
            i(n[0]),
            i(n[1]),
            i(n[2]),
            i(nb[1]),
            i(nb[2]),
            Arg::Mem(ptr(&s.sets, stream)),
            Arg::U32(nsets as u32),
            Arg::U32(self.nbins as u32),
        ];
        let point_args = |tail: &[Arg]| {
            let mut args = vec![Arg::U32(m as u32)];
            args.extend_from_slice(&xs);
            args.extend_from_slice(&geometry);
            args.extend_from_slice(tail);
            args
        };
        // Kernels with a thread per point, and with a tile of COUNT_ITEMS points per thread.
        let per_point =
            |k: &Kernel, args: &[Arg]| k.launch(stream, (blocks(m, k.threads), 1), args);
        let per_tile = |k: &Kernel, args: &[Arg]| {
            k.launch(stream, (blocks(m, k.threads * COUNT_ITEMS as u32), 1), args)
        };
        // The one-pass sort ranks each point in the count; the two-pass sort only counts.
        let rank = match passes {
            SortPasses::One => ptr(&s.rank, stream),
            SortPasses::Two { .. } => 0,
        };
        if m > 0 && nbins <= LOCAL_BINS && passes == SortPasses::One {
            let tail = [
                Arg::U32(nbins as u32),
                Arg::Mem(rank),
                Arg::Mem(counts),
                Arg::Mem(bad),
            ];
            per_tile(&self.fns.bin_count_local, &point_args(&tail))?;
        } else if m > 0 {
            per_point(
                &self.fns.bin_count,
                &point_args(&[Arg::Mem(rank), Arg::Mem(counts), Arg::Mem(bad)]),
            )?;
        }
        let (tiles, ntiles) = (ptr(&s.scan_tiles, stream), scan_tiles(nbins));
        common.bin_scan_tiles.launch(
            stream,
            (ntiles as u32, 1),
            &[
                Arg::U32(nbins as u32),
                Arg::Mem(counts),
                Arg::U32(self.spec.max_subproblem as u32),
                Arg::Mem(starts),
                Arg::Mem(sub_starts),
                Arg::Mem(tiles),
            ],
        )?;
        common.bin_scan_totals.launch(
            stream,
            (1, 1),
            &[
                Arg::U32(ntiles as u32),
                Arg::Mem(tiles),
                Arg::U32(nbins as u32),
                Arg::Mem(starts),
                Arg::Mem(sub_starts),
                Arg::Mem(at::<u32>(sub_starts, nbins)),
            ],
        )?;
        // Kernels with a thread per bin.
        let launch_bins =
            |k: &Kernel, args: &[Arg]| k.launch(stream, (blocks(nbins, k.threads), 1), args);
        if ntiles > 1 {
            launch_bins(
                &common.bin_scan_add,
                &[
                    Arg::U32(nbins as u32),
                    Arg::Mem(tiles),
                    Arg::Mem(starts),
                    Arg::Mem(sub_starts),
                ],
            )?;
        }
        match passes {
            _ if m == 0 => {}
            SortPasses::One => per_point(
                &self.fns.bin_scatter,
                &point_args(&[Arg::Mem(rank), Arg::Mem(starts), Arg::Mem(idx)]),
            )?,
            SortPasses::Two { shift } => {
                // (index, bin) of each point in bucket order, in `scratch` or a buffer
                // dropped (stream-ordered) once the second pass is queued. The counts are
                // read by the prefix sums only, so they serve as the passes' fill counters.
                let own;
                let part = if scratch.1 >= 8 * m {
                    scratch.0
                } else {
                    own = alloc::<u64>(stream, m, "two-pass sort entries")?;
                    ptr(&own, stream)
                };
                let nbuckets = nbins.div_ceil(1 << shift);
                memset0(stream, counts, 4 * nbuckets)?;
                let tail = [
                    Arg::U32(nbuckets as u32),
                    Arg::U32(shift),
                    Arg::Mem(starts),
                    Arg::Mem(counts),
                    Arg::Mem(part),
                ];
                per_tile(&self.fns.bin_bucket, &point_args(&tail))?;
                memset0(stream, counts, 4 * nbins)?;
                per_tile(
                    &self.fns.bin_place,
                    &[
                        Arg::U32(m as u32),
                        Arg::Mem(part),
                        Arg::Mem(starts),
                        Arg::Mem(counts),
                        Arg::Mem(idx),
                    ],
                )?;
            }
        }
        if m > 0 && (self.fit.sm || self.fit.od) {
            launch_bins(
                &common.subprob_map,
                &[
                    Arg::U32(nbins as u32),
                    Arg::Mem(starts),
                    Arg::Mem(sub_starts),
                    Arg::U32(self.spec.max_subproblem as u32),
                    Arg::Mem(ptr(&s.sub_bin, stream)),
                    Arg::Mem(ptr(&s.sub_first, stream)),
                ],
            )?;
        }
        self.sorted = Some(s);
        Ok(())
    }

    fn sorted(&self) -> CudaResult<&Sorted> {
        self.sorted
            .as_ref()
            .ok_or(CudaError::Nudt(crate::NudtError::PointsNotSet))
    }

    /// The leading arguments of the subproblem kernels: subproblem lists, the bins' first
    /// subproblems (a batch's are those of its sets' bins), bin starts and the sorted points.
    fn subproblem_args(&self, s: &Sorted, stream: &CudaStream) -> Vec<Arg> {
        let mut args = vec![
            Arg::Mem(ptr(&s.sub_bin, stream)),
            Arg::Mem(ptr(&s.sub_first, stream)),
            Arg::Mem(ptr(&s.sub_start, stream)),
            Arg::Mem(ptr(&s.bin_start, stream)),
        ];
        args.extend(s.point_args(stream));
        args
    }

    /// Adds the vectors at `c` of the batch of transforms `batch` (first, count) onto as many
    /// zeroed grids at `grid`: strengths (M each, or a set's for a set per transform), or
    /// with `gradient` values and derivative weights (`dim + 1` a point), spread with the
    /// kernel's derivative.
    pub fn spread(
        &self,
        stream: &CudaStream,
        c: u64,
        grid: u64,
        batch: (usize, usize),
        gradient: bool,
    ) -> CudaResult<()> {
        let method = self.pass_methods(gradient)?.0;
        self.spread_with(method, gradient, stream, c, grid, batch)
    }

    /// As [`Self::spread`], with an explicit method (cross-checks).
    pub fn spread_with(
        &self,
        method: GpuMethod,
        gradient: bool,
        stream: &CudaStream,
        c: u64,
        grid: u64,
        batch: (usize, usize),
    ) -> CudaResult<()> {
        let s = self.sorted()?;
        match method {
            GpuMethod::OutputDriven if !self.fit.od => {
                return Err(CudaError::Unsupported(format!(
                    "output-driven spreading needs {} bytes of shared memory and {} threads per \
                     block",
                    self.spec.od_smem_bytes(),
                    self.spec.od_threads()
                )))
            }
            GpuMethod::Sm if !self.fit.sm => {
                return Err(CudaError::Unsupported(format!(
                    "SM spreading needs {} bytes of shared memory per block",
                    self.spec.smem_bytes()
                )))
            }
            _ => {}
        }
        let kernel = self.fns.passes.spreader(method, gradient).ok_or_else(|| {
            CudaError::Unsupported("output-driven spreading has no gradient kernel".into())
        })?;
        self.launch(kernel, method, s, stream, (c, grid, batch), gradient)
    }

    /// Interpolates the grids at `grid` of the batch of transforms `batch` (first, count)
    /// into its vectors at `out`: values (M each, or a set's), or with `gradient` values and
    /// derivatives (`dim + 1` a point).
    pub fn interp(
        &self,
        stream: &CudaStream,
        grid: u64,
        out: u64,
        batch: (usize, usize),
        gradient: bool,
    ) -> CudaResult<()> {
        let s = self.sorted()?;
        let method = self.pass_methods(gradient)?.1;
        if method != GpuMethod::GmSort && !self.fit.sm {
            return Err(CudaError::Unsupported(format!(
                "SM interpolation needs {} bytes of shared memory per block",
                self.spec.smem_bytes()
            )));
        }
        let kernel = self.fns.passes.interpolator(method, gradient);
        self.launch(kernel, method, s, stream, (grid, out, batch), gradient)
    }

    /// Launches `kernel` of `method` from `from` to `to` for the batch of transforms
    /// (first, count) over the sorted points `s` — the shared set, or the batch's sets, one
    /// run of the sorted points ([`sets::launch_sets`]): GM-sort a thread per point of the
    /// batch, the transforms looped inside (count, points, input, output, grid, transforms,
    /// strides, sets); the subproblem kernels a block per subproblem of the batch's bins and
    /// transform (lists, bin starts, points, input, output, grid and bins, strides, sets).
    /// The points' vectors are `dim + 1` values a point with `gradient`.
    fn launch(
        &self,
        kernel: &Kernel,
        method: GpuMethod,
        s: &Sorted,
        stream: &CudaStream,
        (from, to, (first, count)): (u64, u64, (usize, usize)),
        gradient: bool,
    ) -> CudaResult<()> {
        let (set0, nsets, ntr) = sets::launch_sets(s.nsets, first, count);
        let m = sets::points_of(&s.starts, set0, nsets);
        if m == 0 {
            return Ok(());
        }
        let set_args = [Arg::U32(set0 as u32), Arg::U32(nsets as u32)];
        let per_point = if gradient { self.spec.dim + 1 } else { 1 };
        let strides = [
            Arg::U64((s.m * per_point) as u64),
            Arg::U64(self.len() as u64),
        ];
        let (n, nb) = (self.n, self.nb);
        let i = |v: usize| Arg::I32(v as i32);
        let grid = [i(n[0]), i(n[1]), i(n[2])];
        if method == GpuMethod::GmSort {
            let mut args = vec![Arg::U32(m as u32)];
            args.extend(s.point_args(stream));
            args.extend([Arg::Mem(from), Arg::Mem(to)]);
            args.extend(grid);
            args.push(Arg::I32(ntr as i32));
            args.extend(strides);
            args.extend([Arg::Mem(ptr(&s.sets, stream)), set_args[1], set_args[0]]);
            return kernel.launch(stream, (blocks(m, kernel.threads), 1), &args);
        }
        let mut args = self.subproblem_args(s, stream);
        args.extend([Arg::Mem(from), Arg::Mem(to)]);
        args.extend(grid);
        args.extend([i(nb[1]), i(nb[2])]);
        args.extend(strides);
        args.push(Arg::U32(self.nbins as u32));
        args.extend(set_args);
        let bound = self.spec.subproblem_bound(m, nsets * self.nbins);
        kernel.launch(stream, (bound.min(s.sub_bound) as u32, ntr as u32), &args)
    }
}

/// Where each user mode lives on the fine grid and its correction factor, on the device.
pub(crate) struct ModeMapDev<T> {
    m: [usize; 3],
    /// Modes in all (the product of `m`, checked).
    len: usize,
    gi: Vec<CudaSlice<i32>>,
    cf: Vec<CudaSlice<T>>,
    /// Fine-grid sizes of dimensions 1 and 2 (row strides).
    n12: [usize; 2],
}

impl<T: CudaFloat> ModeMapDev<T> {
    pub fn new(
        stream: &Arc<CudaStream>,
        modes: &[usize],
        n: &[usize; 3],
        kernel: &KernelSpec,
        order: ModeOrder,
    ) -> CudaResult<Self> {
        let dim = modes.len();
        let m: [usize; 3] = std::array::from_fn(|d| if d < dim { modes[d] } else { 1 });
        let len = checked_len(&m)?;
        let (mut gi, mut cf) = (Vec::new(), Vec::new());
        for (g, c) in crate::uniform::device_mode_axes::<T>(&kernel.fourier(), modes, n, order) {
            device_call("cuMemcpyHtoD (mode map)")?;
            gi.push(
                stream
                    .clone_htod(&g)
                    .map_err(|e| driver("cuMemcpyHtoD (mode map)", e))?,
            );
            cf.push(
                stream
                    .clone_htod(&c)
                    .map_err(|e| driver("cuMemcpyHtoD (corrections)", e))?,
            );
        }
        Ok(ModeMapDev {
            m,
            len,
            gi,
            cf,
            n12: [n[1], n[2]],
        })
    }

    pub fn len(&self) -> usize {
        self.len
    }

    fn args(&self, stream: &CudaStream, from: u64, to: u64, gstride: usize) -> Vec<Arg> {
        let nmodes = self.len();
        vec![
            Arg::U64(nmodes as u64),
            Arg::I32(self.m[1] as i32),
            Arg::I32(self.m[2] as i32),
            Arg::Mem(ptr(&self.gi[0], stream)),
            Arg::Mem(ptr(&self.gi[1], stream)),
            Arg::Mem(ptr(&self.gi[2], stream)),
            Arg::Mem(ptr(&self.cf[0], stream)),
            Arg::Mem(ptr(&self.cf[1], stream)),
            Arg::Mem(ptr(&self.cf[2], stream)),
            Arg::Mem(from),
            Arg::Mem(to),
            Arg::I32(self.n12[0] as i32),
            Arg::I32(self.n12[1] as i32),
            Arg::U64(gstride as u64),
            Arg::U64(nmodes as u64),
        ]
    }

    /// Type 1 output: corrected modes out of `ntr` fine grids (stride `gstride` complex).
    pub fn grid_to_modes(
        &self,
        common: &CommonFns,
        stream: &CudaStream,
        grid: u64,
        modes: u64,
        gstride: usize,
        ntr: usize,
    ) -> CudaResult<()> {
        let k = &common.grid_to_modes;
        self.by_batches(ntr, gstride, |first, n| {
            let (g, f) = (grid + first.0, modes + first.1);
            let grid_dim = (blocks(self.len(), k.threads), n as u32);
            k.launch(stream, grid_dim, &self.args(stream, g, f, gstride))
        })
    }

    /// `launch` over `ntr` transforms in runs of at most [`MAX_BATCH`] (the grid's second
    /// dimension holds the transform: a multi-device plan's columns number up to a slab's
    /// plane), given each run's byte offsets on the fine grids (stride `gstride` complex)
    /// and on the modes, and its transforms.
    fn by_batches(
        &self,
        ntr: usize,
        gstride: usize,
        mut launch: impl FnMut((u64, u64), usize) -> CudaResult<()>,
    ) -> CudaResult<()> {
        let value = 2 * std::mem::size_of::<T>();
        for first in (0..ntr).step_by(MAX_BATCH) {
            let at = (
                (first * gstride * value) as u64,
                (first * self.len * value) as u64,
            );
            launch(at, (ntr - first).min(MAX_BATCH))?;
        }
        Ok(())
    }

    /// Type 2 input: corrected modes into `ntr` zeroed fine grids.
    pub fn modes_to_grid(
        &self,
        common: &CommonFns,
        stream: &CudaStream,
        modes: u64,
        grid: u64,
        gstride: usize,
        ntr: usize,
    ) -> CudaResult<()> {
        let k = &common.modes_to_grid;
        self.by_batches(ntr, gstride, |first, n| {
            let (g, f) = (grid + first.0, modes + first.1);
            let grid_dim = (blocks(self.len(), k.threads), n as u32);
            k.launch(stream, grid_dim, &self.args(stream, f, g, gstride))
        })
    }
}
