//! The two halves of every OpenCL NUFFT: [`FineGrid`], points bin-sorted on a fine grid with
//! the spreading and interpolation onto and from it (GM-sort, SM and output-driven, chosen as
//! the CUDA backend chooses), and [`ClModes`], where the uniform modes sit on a fine grid (and
//! their corrections 1/ψ̂) with the FFT between them. Types 1 and 2 use one of each; type 3
//! spreads on one grid and runs a type 2 (one of each more) on the next.

use super::device::ClDevice;
use super::error::{cl, OpenClError, OpenClResult};
use super::fft::{ClFloat, GridFfts};
use super::launch::Kernel;
use super::launch::{
    alloc, build, enqueue, kernel_of, launch, mem, opt_mem, read, read_at, upload, zero, Arg,
    ELEMENT_GROUP,
};
use crate::error::NudtError;
use crate::gpu::engine::{GridParts, SortedGrid};
use crate::gpu::kernels::PassKernels;
use crate::gpu::plan::ModuleKey;
use crate::planner::sets::{launch_sets, non_finite, points_of, sort_bins};
use crate::uniform::ModeOrder;
use nudt_gen::gpu::Dialect;
use nudt_gen::gpu::{
    names, scan_threads, scan_tile, sort_passes, spread_module_in, GpuMethod, GpuSpreadSpec,
    SortPasses, SubproblemFit, COUNT_ITEMS, GM_THREADS, SM_THREADS, SORT_THREADS,
};
use nudt_gen::{KernelSpec, Precision};
use opencl3::memory::Buffer;
use opencl3::program::Program;
use std::marker::PhantomData;
use std::sync::Arc;

/// A grid's spread module, its bins shaped for the grid's role, and the methods it allows on
/// the device. Type 3 grids are sized only in set-points; their modules are made with the
/// plan.
pub(crate) struct ClSpreadModule {
    pub spec: GpuSpreadSpec,
    program: Arc<Program>,
    fit: SubproblemFit,
    /// Which gradient kernels the device runs (SM where their work-groups fit).
    grad_fit: SubproblemFit,
    /// Methods asked for (spreading, interpolation; `None`: choose per point set).
    want: [Option<GpuMethod>; 2],
    /// The sort asked for (two passes, one; `None`: by size, [`sort_passes`]).
    want_two_pass: Option<bool>,
    /// The device's dialect, which sizes the common module's prefix sums.
    dialect: Dialect,
}

impl ClSpreadModule {
    /// The module of `key.dim`-D grids for `key.kernel` in `precision` on `dev`, its bins
    /// shaped for `key.role` unless `key.choice` gives them, with the choice's methods and
    /// sort.
    pub fn new(dev: &Arc<ClDevice>, key: ModuleKey, precision: Precision) -> OpenClResult<Self> {
        let (dim, kernel, role) = (key.dim, key.kernel, key.role);
        let (bins, want) = (key.choice.bins, [key.choice.spread, key.choice.interp]);
        let local = dev.info.local_memory();
        let mut spec = GpuSpreadSpec::within(dim, kernel, precision, local)?.for_role(role, local);
        if let Some(b) = bins {
            spec =
                spec.with_bins(&b[..dim], local.per_block)
                    .map_err(|why| OpenClError::Method {
                        device: dev.info.name.clone(),
                        why,
                    })?;
        }
        let dialect = dev.info.dialect();
        let src = spread_module_in(&spec, dialect).map_err(|e| dev.refusal(e))?;
        let program = build(dev, &src)?;
        let (fit, grad_fit, room) = kernel_fit(dev, &program, &spec)?;
        if let Some(why) = spec.refuse(role.binding(want), fit, room) {
            return Err(OpenClError::Method {
                device: dev.info.name.clone(),
                why,
            });
        }
        Ok(ClSpreadModule {
            spec: src.spec.clone().expect("spread modules carry their spec"),
            program,
            fit,
            grad_fit,
            want,
            want_two_pass: key.choice.two_pass_sort,
            dialect,
        })
    }
}

/// Which subproblem kernels of `spec`'s built `program` the device runs (the transforms', and
/// the gradient passes'), and the local memory left to a bin's box beside the kernels' own:
/// the spec's fit to the device's local memory and work-group size, narrowed by what the
/// compiled kernels need (`CL_KERNEL_WORK_GROUP_SIZE`, below the device's where registers run
/// out, and the static `CL_KERNEL_LOCAL_MEM_SIZE`). NVIDIA's OpenCL refused the launch of a
/// 3-D f32 SM interpolation at width 5 whose box filled the device's 48 KiB
/// (`CL_OUT_OF_RESOURCES`); a kernel that does not fit is now refused at plan time, or not
/// chosen. The gradient SM kernels hold twice the weights of the SM kernels: where they do not
/// fit, the gradient passes take GM-sort ([`gradient_methods`]) and the transforms keep SM.
fn kernel_fit(
    dev: &ClDevice,
    program: &Program,
    spec: &GpuSpreadSpec,
) -> OpenClResult<(SubproblemFit, SubproblemFit, usize)> {
    let info = &dev.info;
    let fit = spec.fit(info.local_memory().per_block, info.max_work_group);
    let id = dev.context.default_device();
    let needs = |name: &str| -> OpenClResult<(usize, usize)> {
        let k = kernel_of(program, name)?;
        let most = k
            .raw()
            .get_work_group_size(id)
            .map_err(cl("clGetKernelWorkGroupInfo"))?;
        let fixed = k
            .raw()
            .get_local_mem_size(id)
            .map_err(cl("clGetKernelWorkGroupInfo"))?;
        Ok((most, fixed as usize))
    };
    let [ss, si, od, gs, gi] = [
        names::SPREAD_SM,
        names::INTERP_SM,
        names::SPREAD_OD,
        names::SPREAD_GRAD_SM,
        names::INTERP_GRAD_SM,
    ]
    .map(needs);
    let (ss, si, od, gs, gi) = (ss?, si?, od?, gs?, gi?);
    let fixed = [ss.1, si.1, od.1, gs.1, gi.1]
        .into_iter()
        .max()
        .unwrap_or(0);
    let room = info.local_mem - fixed.min(info.local_mem);
    let sm = SM_THREADS as usize;
    let transforms = SubproblemFit {
        sm: fit.sm && sm <= ss.0 && sm <= si.0 && spec.smem_bytes() <= room,
        od: fit.od && spec.od_threads() as usize <= od.0 && spec.od_smem_bytes() <= room,
    };
    let gradients = SubproblemFit {
        sm: transforms.sm && sm <= gs.0 && sm <= gi.0,
        od: false,
    };
    Ok((transforms, gradients, room))
}

/// Points sorted into bins: their indices in bin order (the kernels read the coordinates
/// through them), the coordinate buffers themselves, and the subproblems (at most
/// `max_subproblem` points of one bin each) of the SM and output-driven kernels. The points
/// are one set that every transform shares, or a set per transform, concatenated and sorted
/// set by set ([`crate::planner::sets`]).
struct Sorted<T> {
    m: usize,
    /// Where each set starts, then `m` (`nsets + 1` values), on the device and on the host
    /// (a batch's points, and its launches' sizes: [`crate::planner::sets::points_of`]).
    sets: Buffer<u32>,
    starts: Vec<u32>,
    nsets: usize,
    idx: Buffer<u32>,
    /// One buffer per dimension: the plan's own, or another reference to the caller's.
    coords: Vec<Buffer<T>>,
    /// First sorted point of each bin (`nbins + 1`, the last the total).
    bin_start: Buffer<u32>,
    /// First subproblem of each bin (`nbins + 1`, the last their number): a batch's are
    /// those of its sets' bins.
    sub_start: Buffer<u32>,
    /// The subproblems' bins and first points (room for `sub_bound`).
    sub_bin: Buffer<u32>,
    sub_first: Buffer<u32>,
    /// Groups the subproblem kernels are launched with ([`GpuSpreadSpec::subproblem_bound`]).
    sub_bound: usize,
    spread: GpuMethod,
    interp: GpuMethod,
}

/// The kernels of one grid, and the prefix sums' work-group size and bins per tile.
struct Kernels {
    bin_count: Kernel,
    bin_scatter: Kernel,
    /// The two-pass sort's.
    bin_bucket: Kernel,
    bin_place: Kernel,
    scan_tiles: Kernel,
    scan_totals: Kernel,
    scan_add: Kernel,
    scan_threads: usize,
    scan_tile: usize,
    subprob_map: Kernel,
    /// The passes over the points.
    passes: PassKernels<Kernel>,
}

/// A fine grid of `n` points per dimension (1 for unused ones) and the points sorted into its
/// bins.
pub(crate) struct FineGrid<T> {
    pub n: [usize; 3],
    nb: [usize; 3],
    spec: GpuSpreadSpec,
    fit: SubproblemFit,
    grad_fit: SubproblemFit,
    want: [Option<GpuMethod>; 2],
    want_two_pass: Option<bool>,
    k: Kernels,
    sorted: Option<Sorted<T>>,
    _t: PhantomData<T>,
}

impl<T: ClFloat> FineGrid<T> {
    /// A grid of `n` spread and interpolated through `module`; `common` is the common module
    /// (the subproblem lists).
    pub fn new(module: &ClSpreadModule, common: &Program, n: [usize; 3]) -> OpenClResult<Self> {
        let len = n
            .iter()
            .try_fold(1usize, |a, &b| a.checked_mul(b))
            .filter(|l| l.checked_mul(2 * std::mem::size_of::<T>()).is_some());
        // Sides are within the plan layer's limit (`planner::limits::MAX_GRID_SIDE`), so
        // grid indices fit the device's ints.
        if len.is_none() {
            return Err(NudtError::GridOverflow.into());
        }
        let spec = module.spec.clone();
        let (program, dialect) = (&module.program, module.dialect);
        Ok(FineGrid {
            n,
            nb: std::array::from_fn(|d| n[d].div_ceil(spec.bins[d])),
            fit: module.fit,
            grad_fit: module.grad_fit,
            want: module.want,
            want_two_pass: module.want_two_pass,
            k: Kernels {
                bin_count: kernel_of(program, names::BIN_COUNT)?,
                bin_scatter: kernel_of(program, names::BIN_SCATTER)?,
                bin_bucket: kernel_of(program, names::BIN_BUCKET)?,
                bin_place: kernel_of(program, names::BIN_PLACE)?,
                scan_tiles: kernel_of(common, names::BIN_SCAN_TILES)?,
                scan_totals: kernel_of(common, names::BIN_SCAN_TOTALS)?,
                scan_add: kernel_of(common, names::BIN_SCAN_ADD)?,
                scan_threads: scan_threads(dialect) as usize,
                scan_tile: scan_tile(dialect),
                subprob_map: kernel_of(common, names::SUBPROB_MAP)?,
                passes: PassKernels::load(|name| kernel_of(program, name))?,
            },
            spec,
            sorted: None,
            _t: PhantomData,
        })
    }

    /// Grid points (complex values) of one transform.
    pub fn len(&self) -> usize {
        self.n.iter().product()
    }

    /// Sorts the points whose coordinates (radians, any finite value) lie in `x`, one device
    /// array per dimension, in sets starting at `sets` (the last entry the number of points
    /// `m`; [`crate::planner::sets::shared`] for one set), all on the device, the sets one
    /// after another: each point's bin and rank by atomics;
    /// the bins' starts and their subproblems' by the common module's prefix sums; a scatter
    /// of the point indices into bin order (or, where the indices outgrow the device's cache,
    /// the two-pass sort of [`SortPasses::Two`], as on CUDA) and the subproblem lists. The grid keeps `x`:
    /// spreading and interpolation read the coordinates from it. The subproblem kernels
    /// are launched for [`GpuSpreadSpec::subproblem_bound`] groups and read the true count
    /// on the device, so the host waits for nothing but the queue's end. The count also
    /// finds the first point with a non-finite coordinate (device arrays are not checked
    /// before): reported as [`NudtError::NonFinite`], the grid then holding no points.
    pub fn set_points(
        &mut self,
        dev: &ClDevice,
        x: Vec<Buffer<T>>,
        sets: &[u32],
    ) -> OpenClResult<()> {
        let (m, nsets) = (sets.last().map_or(0, |&m| m as usize), sets.len() - 1);
        let set_bins = self.nb.iter().product::<usize>();
        let nbins = sort_bins(nsets, set_bins)?;
        self.sorted = None;
        let (spread, interp) = self.spec.methods(m, nbins, self.want, self.fit);
        let sub_bound = if self.fit.sm || self.fit.od {
            self.spec.subproblem_bound(m, nbins)
        } else {
            0
        };
        let sorted = Sorted {
            m,
            sets: upload(dev, sets)?,
            starts: sets.to_vec(),
            nsets,
            idx: alloc::<u32>(dev, m)?,
            coords: x,
            bin_start: alloc::<u32>(dev, nbins + 1)?,
            sub_start: alloc::<u32>(dev, nbins + 1)?,
            sub_bin: alloc::<u32>(dev, sub_bound)?,
            sub_first: alloc::<u32>(dev, sub_bound)?,
            sub_bound,
            spread,
            interp,
        };
        let passes = self.sort_passes(dev, m, nbins)?;
        // The one-pass sort ranks each point in the count; the two-pass sort only counts.
        let rank = match passes {
            SortPasses::One => Some(alloc::<u32>(dev, m)?),
            SortPasses::Two { .. } => None,
        };
        let mut counts = alloc::<u32>(dev, nbins)?;
        zero(dev, &mut counts, nbins)?;
        let (n, nb) = (self.n, self.nb);
        let i = |v: usize| Arg::I32(v as i32);
        let xs = |d: usize| opt_mem(sorted.coords.get(d));
        let geometry = || {
            [
                Arg::U32(m as u32),
                xs(0),
                xs(1),
                xs(2),
                i(n[0]),
                i(n[1]),
                i(n[2]),
                i(nb[1]),
                i(nb[2]),
                mem(&sorted.sets),
                Arg::U32(nsets as u32),
                Arg::U32(set_bins as u32),
            ]
        };
        let bad = upload(dev, &[u32::MAX])?;
        if m > 0 {
            let mut args = Vec::from(geometry());
            args.extend([opt_mem(rank.as_ref()), mem(&counts), mem(&bad)]);
            launch(dev, &self.k.bin_count, m, ELEMENT_GROUP, 1, &args)?;
        }
        self.scan(dev, nbins, &counts, &sorted)?;
        match (passes, rank) {
            _ if m == 0 => {}
            (SortPasses::Two { shift }, _) => {
                // (index, bin) of each point in bucket order. The counts are read by the
                // prefix sums only, so they serve as the passes' fill counters.
                let part = alloc::<u64>(dev, m)?;
                let nbuckets = nbins.div_ceil(1 << shift);
                zero(dev, &mut counts, nbuckets)?;
                let mut args = Vec::from(geometry());
                args.extend([
                    Arg::U32(nbuckets as u32),
                    Arg::U32(shift),
                    mem(&sorted.bin_start),
                    mem(&counts),
                    mem(&part),
                ]);
                let tiles = m.div_ceil(COUNT_ITEMS);
                launch(dev, &self.k.bin_bucket, tiles, ELEMENT_GROUP, 1, &args)?;
                zero(dev, &mut counts, nbins)?;
                let args = [
                    Arg::U32(m as u32),
                    mem(&part),
                    mem(&sorted.bin_start),
                    mem(&counts),
                    mem(&sorted.idx),
                ];
                launch(
                    dev,
                    &self.k.bin_place,
                    tiles,
                    SORT_THREADS as usize,
                    1,
                    &args,
                )?;
            }
            (SortPasses::One, rank) => {
                let rank = rank.expect("the one-pass count ranks");
                let mut args = Vec::from(geometry());
                args.extend([mem(&rank), mem(&sorted.bin_start), mem(&sorted.idx)]);
                launch(dev, &self.k.bin_scatter, m, ELEMENT_GROUP, 1, &args)?;
            }
        }
        if m > 0 && sub_bound > 0 {
            let args = [
                Arg::U32(nbins as u32),
                mem(&sorted.bin_start),
                mem(&sorted.sub_start),
                Arg::U32(self.spec.max_subproblem as u32),
                mem(&sorted.sub_bin),
                mem(&sorted.sub_first),
            ];
            launch(dev, &self.k.subprob_map, nbins, ELEMENT_GROUP, 1, &args)?;
        }
        let mut first = [0u32];
        read(dev, &bad, &mut first)?;
        if first[0] != u32::MAX {
            let index = first[0] as usize;
            let mut values = vec![T::zero(); sorted.coords.len()];
            for (v, b) in values.iter_mut().zip(&sorted.coords) {
                read_at(dev, b, index, std::slice::from_mut(v))?;
            }
            return Err(non_finite(sets, index, &values).into());
        }
        self.sorted = Some(sorted);
        Ok(())
    }

    /// The sort of `m` points into `nbins` bins: in two passes where asked or where their
    /// indices outgrow the device's cache ([`sort_passes`]), if its work-groups hold the
    /// second pass's [`SORT_THREADS`].
    fn sort_passes(&self, dev: &ClDevice, m: usize, nbins: usize) -> OpenClResult<SortPasses> {
        let fits = dev.info.max_work_group >= SORT_THREADS as usize;
        if self.want_two_pass == Some(true) && !fits {
            return Err(OpenClError::Method {
                device: dev.info.name.clone(),
                why: format!("the two-pass sort needs work-groups of {SORT_THREADS} items"),
            });
        }
        let want = if fits {
            self.want_two_pass
        } else {
            Some(false)
        };
        Ok(sort_passes(m, nbins, dev.info.cache_bytes, want))
    }

    /// The prefix sums of the bin `counts` into `s.bin_start` and `s.sub_start` (the
    /// subproblems' starts, their count last): sums inside tiles, sums of the tiles' totals,
    /// the tiles' offsets added (as the CUDA backend runs them).
    fn scan(
        &self,
        dev: &ClDevice,
        nbins: usize,
        counts: &Buffer<u32>,
        s: &Sorted<T>,
    ) -> OpenClResult<()> {
        let sub_start = &s.sub_start;
        // The count's own copy, which the kernel writes besides `sub_start[nbins]`.
        let nsub = alloc::<u32>(dev, 1)?;
        let (threads, tile) = (self.k.scan_threads, self.k.scan_tile);
        let ntiles = nbins.div_ceil(tile).max(1);
        let tiles = alloc::<u32>(dev, 2 * ntiles)?;
        let args = [
            Arg::U32(nbins as u32),
            mem(counts),
            Arg::U32(self.spec.max_subproblem as u32),
            mem(&s.bin_start),
            mem(sub_start),
            mem(&tiles),
        ];
        enqueue(dev, &self.k.scan_tiles, ntiles * threads, threads, 1, &args)?;
        let args = [
            Arg::U32(ntiles as u32),
            mem(&tiles),
            Arg::U32(nbins as u32),
            mem(&s.bin_start),
            mem(sub_start),
            mem(&nsub),
        ];
        enqueue(dev, &self.k.scan_totals, threads, threads, 1, &args)?;
        if ntiles > 1 {
            let args = [
                Arg::U32(nbins as u32),
                mem(&tiles),
                mem(&s.bin_start),
                mem(sub_start),
            ];
            launch(dev, &self.k.scan_add, nbins, ELEMENT_GROUP, 1, &args)?;
        }
        Ok(())
    }

    /// Adds the spread of the strengths `c` of the batch of transforms `batch` (first,
    /// count) — M complex each, stacked, or with a set per transform the batch's sets'
    /// concatenated; with `gradient`, values and derivative weights, `dim + 1` a point,
    /// spread with the kernel's derivative — into as many stacked `grid`s (zeroed), by the
    /// method set-points chose (one the device's blocks hold).
    pub fn spread(
        &self,
        dev: &ClDevice,
        c: &Buffer<T>,
        grid: &Buffer<T>,
        batch: (usize, usize),
        gradient: bool,
    ) -> OpenClResult<()> {
        let s = self.sorted.as_ref().ok_or(NudtError::PointsNotSet)?;
        let method = self.pass_methods(gradient)?.0;
        let k = self
            .k
            .passes
            .spreader(method, gradient)
            .ok_or_else(|| OpenClError::Method {
                device: dev.info.name.clone(),
                why: "output-driven spreading has no gradient kernel".into(),
            })?;
        let (threads, local) = match method {
            GpuMethod::GmSort => (GM_THREADS, 0),
            GpuMethod::Sm => (SM_THREADS, self.spec.smem_bytes()),
            GpuMethod::OutputDriven => (self.spec.od_threads(), self.spec.od_smem_bytes()),
        };
        let kernel = (k, threads as usize, local);
        self.run(dev, s, method, kernel, (c, grid, batch), gradient)
    }

    /// Interpolates the stacked grids of the batch of transforms `batch` (first, count) at
    /// the points into as many stacked `out`s (M complex each, or the batch's sets', in the
    /// caller's order; with `gradient`, each point's value and derivatives, `dim + 1` a
    /// point), by the method set-points chose (GM-sort or SM).
    pub fn interp(
        &self,
        dev: &ClDevice,
        grid: &Buffer<T>,
        out: &Buffer<T>,
        batch: (usize, usize),
        gradient: bool,
    ) -> OpenClResult<()> {
        let s = self.sorted.as_ref().ok_or(NudtError::PointsNotSet)?;
        let method = self.pass_methods(gradient)?.1;
        let k = self.k.passes.interpolator(method, gradient);
        let (threads, local) = match method {
            GpuMethod::GmSort => (GM_THREADS, 0),
            _ => (SM_THREADS, self.spec.smem_bytes()),
        };
        let kernel = (k, threads as usize, local);
        self.run(dev, s, method, kernel, (grid, out, batch), gradient)
    }

    /// Launches kernel `k` of `method` (with its threads per group and bytes of local
    /// memory) from `from` to `to` for the batch of transforms (first, count) over the
    /// sorted points `s` — the shared set, or the batch's sets, one run of the sorted points
    /// ([`launch_sets`]): GM-sort grid-stride over the batch's points (count, points, input,
    /// output, grid, transforms, sets); the subproblem kernels one group per subproblem of
    /// the batch's bins and transform (lists, bin starts, points, input, output, grid and
    /// bins, strides, sets, local memory). The points are the indices in bin order and the
    /// coordinates; their vectors are `dim + 1` values a point with `gradient`.
    fn run(
        &self,
        dev: &ClDevice,
        s: &Sorted<T>,
        method: GpuMethod,
        (k, threads, local): (&Kernel, usize, usize),
        (from, to, (first, count)): (&Buffer<T>, &Buffer<T>, (usize, usize)),
        gradient: bool,
    ) -> OpenClResult<()> {
        let (set0, nsets, ntr) = launch_sets(s.nsets, first, count);
        let m = points_of(&s.starts, set0, nsets);
        if m == 0 {
            return Ok(());
        }
        let set_args = [Arg::U32(set0 as u32), Arg::U32(nsets as u32)];
        let i = |v: usize| Arg::I32(v as i32);
        let per_point = if gradient { self.spec.dim + 1 } else { 1 };
        let strides = [
            Arg::U64((s.m * per_point) as u64),
            Arg::U64(self.len() as u64),
        ];
        let grid = [i(self.n[0]), i(self.n[1]), i(self.n[2])];
        let points = [
            mem(&s.idx),
            opt_mem(s.coords.first()),
            opt_mem(s.coords.get(1)),
            opt_mem(s.coords.get(2)),
        ];
        let mut args = Vec::new();
        if method == GpuMethod::GmSort {
            args.push(Arg::U32(m as u32));
            args.extend(points);
            args.extend([mem(from), mem(to)]);
            args.extend(grid);
            args.push(Arg::I32(ntr as i32));
            args.extend(strides);
            args.extend([mem(&s.sets), set_args[1], set_args[0]]);
            return launch(dev, k, m, threads, 1, &args);
        }
        args.extend([
            mem(&s.sub_bin),
            mem(&s.sub_first),
            mem(&s.sub_start),
            mem(&s.bin_start),
        ]);
        args.extend(points);
        args.extend([mem(from), mem(to)]);
        args.extend(grid);
        args.extend([i(self.nb[1]), i(self.nb[2])]);
        args.extend(strides);
        let set_bins = self.nb.iter().product::<usize>();
        args.push(Arg::U32(set_bins as u32));
        args.extend(set_args);
        args.push(Arg::Local(local));
        let bound = self
            .spec
            .subproblem_bound(m, nsets * set_bins)
            .min(s.sub_bound);
        enqueue(dev, k, bound.max(1) * threads, threads, ntr, &args)
    }
}

/// Uniform modes on a fine grid: each mode's grid index and correction 1/ψ̂(k) per dimension,
/// the FFT of the grid, and the kernels that map between modes and grid.
pub(crate) struct ClModes<T: ClFloat> {
    modes: [usize; 3],
    n: [usize; 3],
    gi: Vec<Buffer<i32>>,
    cf: Vec<Buffer<T>>,
    ffts: GridFfts<T>,
    to_modes: Kernel,
    to_grid: Kernel,
}

impl<T: ClFloat> ClModes<T> {
    /// `modes[d]` modes in `order` on a fine grid of `n[d]` (both 1 beyond `dim`), with the
    /// FFT of a stack of `batch` grids; `common` is the common module.
    #[allow(clippy::too_many_arguments)]
    pub fn new(
        dev: &std::sync::Arc<ClDevice>,
        common: &Program,
        dim: usize,
        modes: [usize; 3],
        n: [usize; 3],
        kernel: &KernelSpec,
        order: ModeOrder,
        batch: usize,
    ) -> OpenClResult<Self> {
        let (mut gi, mut cf) = (Vec::new(), Vec::new());
        let axes =
            crate::uniform::device_mode_axes::<T>(&kernel.fourier(), &modes[..dim], &n, order);
        for (g, c) in axes {
            gi.push(upload(dev, &g)?);
            cf.push(upload(dev, &c)?);
        }
        Ok(ClModes {
            modes,
            n,
            gi,
            cf,
            ffts: GridFfts::new(dev, &n[..dim], batch)?,
            to_modes: kernel_of(common, names::GRID_TO_MODES)?,
            to_grid: kernel_of(common, names::MODES_TO_GRID)?,
        })
    }

    fn count(&self) -> usize {
        self.modes.iter().product()
    }

    fn args(&self, from: &Buffer<T>, to: &Buffer<T>) -> Vec<Arg> {
        let i = |v: usize| Arg::I32(v as i32);
        let nmodes = self.count();
        vec![
            Arg::U64(nmodes as u64),
            i(self.modes[1]),
            i(self.modes[2]),
            mem(&self.gi[0]),
            mem(&self.gi[1]),
            mem(&self.gi[2]),
            mem(&self.cf[0]),
            mem(&self.cf[1]),
            mem(&self.cf[2]),
            mem(from),
            mem(to),
            i(self.n[1]),
            i(self.n[2]),
            Arg::U64(self.n.iter().product::<usize>() as u64),
            Arg::U64(nmodes as u64),
        ]
    }

    /// The FFTs of `count` stacked grids at `grid` in place, with the sign of `isign`.
    pub fn fft(&mut self, grid: &Buffer<T>, isign: i32, count: usize) -> OpenClResult<()> {
        self.ffts.exec(grid, isign, count)
    }

    /// Corrected modes from `count` stacked transformed grids at `grid` into `modes`.
    pub fn grid_to_modes(
        &self,
        dev: &ClDevice,
        grid: &Buffer<T>,
        modes: &Buffer<T>,
        count: usize,
    ) -> OpenClResult<()> {
        let args = self.args(grid, modes);
        launch(
            dev,
            &self.to_modes,
            self.count(),
            ELEMENT_GROUP,
            count,
            &args,
        )
    }

    /// `count` stacked corrected `modes` onto as many zeroed grids at `grid`.
    pub fn modes_to_grid(
        &self,
        dev: &ClDevice,
        modes: &Buffer<T>,
        grid: &Buffer<T>,
        count: usize,
    ) -> OpenClResult<()> {
        let args = self.args(modes, grid);
        launch(
            dev,
            &self.to_grid,
            self.count(),
            ELEMENT_GROUP,
            count,
            &args,
        )
    }
}

/// The gradient passes take GM-sort where the device's work-groups do not hold their SM
/// kernels (`grad_fit`).
impl<T> SortedGrid for FineGrid<T> {
    fn parts(&self) -> GridParts<'_> {
        let sorted = self.sorted.as_ref();
        (
            self.n,
            &self.spec,
            sorted.map(|s| (s.spread, s.interp)),
            self.grad_fit,
        )
    }
}
