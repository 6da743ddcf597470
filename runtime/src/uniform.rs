//! Types 1 and 2 on one fine grid: spread → FFT → correct, and its transpose. 2-D and 3-D
//! grids spread by the source-driven schedule go slab by slab ([`crate::slabs`]); 1-D grids
//! and the target-driven schedule hold the whole grid.

use crate::error::Result;
use crate::fft::{FftNd, Needed};
use crate::float::Float;
use crate::grid::FineGrid;
use crate::slabs::{FirstAxis, SlabWork, Slabs};
use nudt_gen::kernel::FourierSeries;
use num_complex::Complex;
use rayon::prelude::*;
use rustfft::FftDirection;
use std::sync::OnceLock;

/// Order of the modes in user arrays, per dimension.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum ModeOrder {
    /// Centred: index `i` holds mode `k = i − ⌊N/2⌋` (FINUFFT's default, numpy's fftshift).
    #[default]
    Cmcl,
    /// FFT order: `0, 1, .., ⌈N/2⌉−1, −⌊N/2⌋, .., −1`.
    Fft,
}

impl ModeOrder {
    /// The mode number at array index `i` of a dimension of `n` modes.
    pub fn mode(self, i: usize, n: usize) -> i64 {
        match self {
            ModeOrder::Cmcl => i as i64 - (n / 2) as i64,
            ModeOrder::Fft if i < n - n / 2 => i as i64,
            ModeOrder::Fft => i as i64 - n as i64,
        }
    }
}

/// One axis of a mode map: the fine-grid index of each of the `m` modes in `order` on a grid
/// of `n` points, and its correction `1/ψ̂(2πk/n)`. ψ̂ is even, so it is tabulated once for
/// |k| by phase rotation ([`FourierSeries::on_grid`]) and looked up: a cosine per quadrature
/// node for every mode took a millisecond of a GPU type 3 set-points on 1 300-point axes.
/// The table and the lookup run on every core (on one, a 1-D axis of 10⁶ modes took
/// 10–20 ms of a 200 ms transform), straight into vectors of their length in the plan's
/// precision, with no f64 copy to convert. Every backend's mode map is made here.
pub(crate) fn mode_axis<T: Float>(
    ft: &FourierSeries,
    m: usize,
    n: usize,
    order: ModeOrder,
) -> (Vec<usize>, Vec<T>) {
    /// Table entries (and modes) per task: long enough to amortise a piece's first phases.
    const PIECE: usize = 1 << 13;
    // Either order holds the modes −⌊m/2⌋ ..= ⌈m/2⌉ − 1.
    let kmax = m / 2;
    let mut table = vec![0.0; kmax + 1];
    table
        .par_chunks_mut(PIECE)
        .enumerate()
        .for_each(|(p, out)| ft.on_grid(n, p * PIECE, out));
    let (mut gidx, mut corr) = (vec![0usize; m], vec![T::default(); m]);
    gidx.par_chunks_mut(PIECE)
        .zip(corr.par_chunks_mut(PIECE))
        .enumerate()
        .for_each(|(p, (g, c))| {
            for (i, (g, c)) in g.iter_mut().zip(c).enumerate() {
                let k = order.mode(p * PIECE + i, m);
                // |k| ≤ m/2 < n: one wrap, no division.
                *g = if k < 0 { k + n as i64 } else { k } as usize;
                *c = T::of(1.0 / table[k.unsigned_abs() as usize]);
            }
        });
    (gidx, corr)
}

/// A GPU mode map's tables, per axis padded to three: the fine-grid index (as the kernels'
/// `int`) and the correction of each mode; a padded axis holds one mode at index 0,
/// correction 1. CUDA and OpenCL upload these.
#[cfg(any(feature = "cuda", feature = "opencl"))]
pub(crate) fn device_mode_axes<T: Float>(
    ft: &FourierSeries,
    modes: &[usize],
    n: &[usize],
    order: ModeOrder,
) -> [(Vec<i32>, Vec<T>); 3] {
    std::array::from_fn(|d| match modes.get(d) {
        Some(&m) => {
            let (g, c) = mode_axis(ft, m, n[d], order);
            (g.into_iter().map(|v| v as i32).collect(), c)
        }
        None => (vec![0], vec![T::one()]),
    })
}

/// Where each user mode lives on the fine grid, and its correction factor `1/ψ̂(2πk/n)`.
struct ModeMap<T> {
    /// Per dimension (padded to 3): fine-grid index of each user index.
    gidx: [Vec<usize>; 3],
    corr: [Vec<T>; 3],
    gstride: [usize; 3],
}

impl<T: Float> ModeMap<T> {
    fn new(modes: &[usize], grid: &FineGrid<T>, order: ModeOrder) -> Self {
        let ft = grid.kernel.fourier();
        let dim = modes.len();
        let mut gstride = [0; 3];
        let mut acc = 1;
        for d in (0..dim).rev() {
            gstride[d] = acc;
            acc *= grid.n[d];
        }
        let mut axes: Vec<_> = (0..dim)
            .map(|d| mode_axis(&ft, modes[d], grid.n[d], order))
            .collect();
        axes.resize_with(3, || (vec![0], vec![T::one()]));
        let mut gidx: [Vec<usize>; 3] = Default::default();
        let mut corr: [Vec<T>; 3] = Default::default();
        for (d, (g, c)) in axes.into_iter().enumerate() {
            (gidx[d], corr[d]) = (g, c);
        }
        ModeMap {
            gidx,
            corr,
            gstride,
        }
    }

    /// User-array elements per index of the first dimension.
    fn rows(&self) -> usize {
        self.gidx[1].len() * self.gidx[2].len()
    }
}

/// A type 1/2 engine: fine grid, FFT plan and mode map. Its steps read it and write only the
/// caller's [`Work`], so the transforms of a stack run at once on one engine, each on its
/// own buffers and on its own points (the engine's grid, or a grid of the same size and
/// kernel holding a transform's own point set).
pub struct Uniform<T: Float> {
    pub grid: FineGrid<T>,
    fft: FftNd<T>,
    map: ModeMap<T>,
    /// Per grid axis, whether an index holds a mode: the FFT skips lines through none. Empty
    /// in 1-D, where the one axis has no lines to skip.
    needed: Vec<Vec<bool>>,
    /// The slab-wise steps of 2-D and 3-D grids ([`FineGrid::by_slabs`]), made on first use.
    slabs: OnceLock<Slabs<T>>,
}

/// The buffers of one running type 1 or 2: the whole fine grid where it is held, else a
/// slab and the column grid.
#[derive(Default)]
pub struct Work<T> {
    grid: Vec<Complex<T>>,
    slabs: SlabWork<T>,
}

impl<T> Work<T> {
    /// Sets the threads this transform counts on: the pool's, or their share where several
    /// transforms of a stack run at once (the slabs are sized for them).
    pub fn set_threads(&mut self, threads: usize) {
        self.slabs.threads = threads;
    }
}

impl<T: Float> Work<T> {
    /// Gives the grid and the slab-wise buffers to the next plan ([`crate::reuse`]).
    pub fn release(&mut self) {
        crate::reuse::keep(std::mem::take(&mut self.grid));
        self.slabs.release();
    }
}

/// The FFT direction of the grid step for sign `isign` of the exponent.
pub(crate) fn direction(isign: i32) -> FftDirection {
    if isign < 0 {
        FftDirection::Forward
    } else {
        FftDirection::Inverse
    }
}

impl<T: Float> Uniform<T> {
    /// Gives the FFTs' scratch to the next plan ([`crate::reuse`]).
    pub fn release(&self) {
        self.fft.release();
        if let Some(slabs) = self.slabs.get() {
            slabs.release();
        }
    }

    pub fn new(modes: &[usize], grid: FineGrid<T>, order: ModeOrder) -> Self {
        let fft = FftNd::new(&grid.n);
        let mut map = ModeMap::new(modes, &grid, order);
        // A long 1-D FFT leaves its spectrum transposed (`FftNd::spectrum_position`).
        if grid.n.len() == 1 {
            map.gidx[0]
                .par_iter_mut()
                .with_min_len(crate::float::GRAIN)
                .for_each(|g| *g = fft.spectrum_position(*g));
        }
        // One axis is transformed whole: nothing to prune.
        let pruned_axes = if grid.n.len() > 1 { grid.n.len() } else { 0 };
        let needed = (0..pruned_axes)
            .map(|a| {
                let mut v = vec![false; grid.n[a]];
                for &g in &map.gidx[a] {
                    v[g] = true;
                }
                v
            })
            .collect();
        Uniform {
            fft,
            map,
            needed,
            grid,
            slabs: OnceLock::new(),
        }
    }

    /// The slab-wise steps with this grid's first-axis modes, when the schedule of `points`
    /// allows them ([`FineGrid::by_slabs`]).
    fn slabs(&self, points: &FineGrid<T>) -> Option<(&Slabs<T>, FirstAxis<'_, T>)> {
        if !points.by_slabs() {
            return None;
        }
        let map = &self.map;
        let slabs = self
            .slabs
            .get_or_init(|| Slabs::new(&self.grid.n, &map.gidx, &map.corr));
        Some((slabs, (&map.gidx[0][..], &map.corr[0][..])))
    }

    /// Type 1: `f_k = Σ_j c_j e^{isign·i k·x_j}` for one transform, of the points sorted on
    /// `points` (this engine's grid, or one like it: [`FineGrid::without_points`]).
    pub fn type1(
        &self,
        points: &FineGrid<T>,
        work: &mut Work<T>,
        c: &[Complex<T>],
        f: &mut [Complex<T>],
        isign: i32,
    ) -> Result<()> {
        if let Some((slabs, first)) = self.slabs(points) {
            let rows = |slab: &mut [Complex<T>], r| points.spread_row(c, slab, r);
            return slabs.type1(points, &mut work.slabs, first, rows, f, direction(isign));
        }
        self.spread_to_modes(work, |grid| points.spread(c, grid), f, isign)
    }

    /// Type 1 of values and derivative weights, `dim + 1` per point `(v_j, u_j)`:
    /// `f_k = Σ_j (v_j + isign·i k·u_j) e^{isign·i k·x_j}`, in one spreading pass with the
    /// kernel's derivative ([`FineGrid::spread_grad`]) — the forward-mode derivative of a
    /// type 1 with respect to its points (`v = δc`, `u = c·δx`).
    pub fn type1_grad(
        &self,
        points: &FineGrid<T>,
        work: &mut Work<T>,
        vu: &[Complex<T>],
        f: &mut [Complex<T>],
        isign: i32,
    ) -> Result<()> {
        if let Some((slabs, first)) = self.slabs(points) {
            let rows = |slab: &mut [Complex<T>], r| points.spread_grad(vu, slab, Some(r));
            return slabs.type1(points, &mut work.slabs, first, rows, f, direction(isign));
        }
        let spread = |grid: &mut [Complex<T>]| points.spread_grad(vu, grid, None);
        self.spread_to_modes(work, spread, f, isign)
    }

    /// `spread` onto the whole fine grid, its FFT and the corrected modes into `f`.
    fn spread_to_modes(
        &self,
        work: &mut Work<T>,
        spread: impl FnOnce(&mut [Complex<T>]) -> Result<()>,
        f: &mut [Complex<T>],
        isign: i32,
    ) -> Result<()> {
        crate::float::resize_parallel(&mut work.grid, self.grid.len());
        spread(&mut work.grid)?;
        crate::steps::step("fft", || {
            self.fft.process_pruned(
                &mut work.grid,
                direction(isign),
                &self.needed,
                Needed::Outputs,
            )
        });
        let (map, work) = (&self.map, &work.grid);
        let row = map.rows();
        if self.grid.n.len() == 1 {
            // One axis: a mode a value, in runs of a grain (the rows below, one mode each,
            // took 7 ns a mode of a 1-D type 1 of 8 000).
            let correct = || {
                f.par_chunks_mut(crate::float::GRAIN)
                    .zip(map.gidx[0].par_chunks(crate::float::GRAIN))
                    .zip(map.corr[0].par_chunks(crate::float::GRAIN))
                    .for_each(|((out, g), c)| {
                        for ((o, &g), &c) in out.iter_mut().zip(g).zip(c) {
                            *o = work[g] * c;
                        }
                    })
            };
            crate::steps::step("correct", correct);
            return Ok(());
        }
        let correct = || {
            let per_task = crate::float::rows_per_task(row);
            f.par_chunks_mut(row)
                .with_min_len(per_task)
                .enumerate()
                .for_each(|(i0, out)| {
                    let (g0, c0) = (map.gidx[0][i0] * map.gstride[0], map.corr[0][i0]);
                    let mut o = 0;
                    for (&g1, &c1) in map.gidx[1].iter().zip(&map.corr[1]) {
                        let (g01, c01) = (g0 + g1 * map.gstride[1], c0 * c1);
                        for (&g2, &c2) in map.gidx[2].iter().zip(&map.corr[2]) {
                            out[o] = work[g01 + g2 * map.gstride[2]] * (c01 * c2);
                            o += 1;
                        }
                    }
                })
        };
        crate::steps::step("correct", correct);
        Ok(())
    }

    /// Type 2: `c_j = Σ_k f_k e^{isign·i k·x_j}` for one transform, at the points sorted on
    /// `points` (as in [`Uniform::type1`]).
    pub fn type2(
        &self,
        points: &FineGrid<T>,
        work: &mut Work<T>,
        f: &[Complex<T>],
        c: &mut [Complex<T>],
        isign: i32,
    ) -> Result<()> {
        if let Some((slabs, first)) = self.slabs(points) {
            let rows = |slab: &[Complex<T>], r| points.interp_row(slab, c, r);
            return slabs.type2(points, &mut work.slabs, first, f, rows, direction(isign));
        }
        points.interp(self.modes_to_grid(work, f, isign), c)
    }

    /// Type 2 with its gradient: per point `dim + 1` values, `u(x_j)` and `∂u/∂x_d(x_j)` of
    /// `u(x) = Σ_k f_k e^{isign·i k·x}`, in one interpolation pass with the kernel's
    /// derivative ([`FineGrid::interp_grad`]).
    pub fn type2_grad(
        &self,
        points: &FineGrid<T>,
        work: &mut Work<T>,
        f: &[Complex<T>],
        out: &mut [Complex<T>],
        isign: i32,
    ) -> Result<()> {
        if let Some((slabs, first)) = self.slabs(points) {
            let rows = |slab: &[Complex<T>], r| points.interp_grad(slab, out, Some(r));
            return slabs.type2(points, &mut work.slabs, first, f, rows, direction(isign));
        }
        points.interp_grad(self.modes_to_grid(work, f, isign), out, None)
    }

    /// The whole fine grid of modes `f`: corrected, placed and transformed, in `work`.
    fn modes_to_grid<'w>(
        &self,
        work: &'w mut Work<T>,
        f: &[Complex<T>],
        isign: i32,
    ) -> &'w [Complex<T>] {
        let work = &mut work.grid;
        crate::float::resize_parallel(work, self.grid.len());
        crate::float::zero_parallel(work);
        let map = &self.map;
        if self.grid.n.len() == 1 {
            // One axis: each mode to its grid point, a grain of modes a task. The slab rows
            // below would be a grid point each, and their table as long as the grid, built
            // on one thread: a few milliseconds of a 1-D type 2 of 200 000 modes.
            let grid = crate::float::SyncPtr(work.as_mut_ptr());
            let len = work.len();
            let grain = crate::float::GRAIN;
            f.par_chunks(grain)
                .zip(map.gidx[0].par_chunks(grain))
                .zip(map.corr[0].par_chunks(grain))
                .for_each(|((f, g), c)| {
                    for ((&v, &g), &c) in f.iter().zip(g).zip(c) {
                        assert!(g < len, "a mode's grid point lies in the grid");
                        // SAFETY: in bounds (checked), and no two modes share a grid point
                        // (`gidx` is injective), so each element has one writer.
                        unsafe { *grid.get().add(g) = v * c };
                    }
                });
        } else {
            self.modes_to_rows(work, f);
        }
        crate::steps::step("fft", || {
            self.fft
                .process_pruned(work, direction(isign), &self.needed, Needed::Inputs)
        });
        work
    }

    /// Modes `f`, corrected, into the zeroed grid `work` of a 2-D or 3-D grid, user row by
    /// user row of the first dimension.
    fn modes_to_rows(&self, work: &mut [Complex<T>], f: &[Complex<T>]) {
        let map = &self.map;
        let row = map.rows();
        // User rows of the first dimension land in distinct grid slabs: fill slabs in parallel.
        let mut row_of_slab = vec![None; self.grid.n[0]];
        for (i0, &g0) in map.gidx[0].iter().enumerate() {
            row_of_slab[g0] = Some(i0);
        }
        work.par_chunks_mut(map.gstride[0])
            .with_min_len(crate::float::rows_per_task(map.gstride[0]))
            .zip(&row_of_slab)
            .for_each(|(slab, i0)| {
                let Some(i0) = *i0 else { return };
                let fin = &f[i0 * row..(i0 + 1) * row];
                let c0 = map.corr[0][i0];
                let mut o = 0;
                for (&g1, &c1) in map.gidx[1].iter().zip(&map.corr[1]) {
                    let (g01, c01) = (g1 * map.gstride[1], c0 * c1);
                    for (&g2, &c2) in map.gidx[2].iter().zip(&map.corr[2]) {
                        slab[g01 + g2 * map.gstride[2]] = fin[o] * (c01 * c2);
                        o += 1;
                    }
                }
            });
    }

    /// Bytes of one running transform's [`Work`] at most: the whole fine grid (the slab-wise
    /// steps hold less).
    pub fn work_bytes(&self) -> usize {
        self.grid.len() * std::mem::size_of::<Complex<T>>()
    }
}
