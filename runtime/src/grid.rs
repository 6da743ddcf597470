//! One fine grid and the points binned onto it: spreading and interpolation through the
//! generated kernels, with the schedule chosen for the point set.

use crate::error::{NudtError, Result};
use crate::float::{interleaved, interleaved_mut, Float};
use crate::kernels::{wide_table, KernelFns, TileRows};
use crate::support::{TileGrid, Tiles};
use nudt_gen::{plan, Arch, KernelKind, KernelSpec, Strategy, Upsampling};
use num_complex::Complex;
use std::borrow::Cow;

/// A fine grid with its kernel, tiling and (once set) binned points.
pub struct FineGrid<T: Float> {
    pub n: Vec<usize>,
    pub kernel: KernelSpec,
    fns: KernelFns<T>,
    table: Cow<'static, [T]>,
    /// The Horner table of the kernel's derivative, for gradients (empty where the kernel
    /// has no gradient kernels: the wide Gaussian).
    dtable: Vec<T>,
    side: Vec<usize>,
    requested: Strategy,
    strategy: Strategy,
    max_block_points: usize,
    /// Whether the sort keeps the Horner variables in f32 (`plan::narrow_horner_variables`).
    narrow: bool,
    tiles: Option<Tiles<T>>,
    arch: Arch,
}

/// How a CPU grid's tile side is chosen: given (by the caller, or a tuned profile), or the
/// planner's for the threads each transform of the plan runs on
/// ([`crate::planner::limits::cpu_tile_side`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TileSide {
    Given(usize),
    ForThreads(usize),
}

impl TileSide {
    /// `given`, else sized for a stack of `ntransf` transforms on `threads` threads.
    pub fn new(given: Option<usize>, ntransf: usize, threads: usize) -> Self {
        given.map_or_else(
            || {
                TileSide::ForThreads(crate::planner::limits::cpu_transform_threads(
                    ntransf, threads,
                ))
            },
            TileSide::Given,
        )
    }
}

impl<T: Float> FineGrid<T> {
    /// A grid of `n` points for `kernel`, serving a plan of tolerance `tol`.
    pub fn new(
        n: Vec<usize>,
        kernel: KernelSpec,
        tol: f64,
        strategy: Strategy,
        arch: &Arch,
        tile_side: TileSide,
    ) -> Result<Self> {
        let dim = n.len();
        let unknown = || NudtError::Gen(nudt_gen::GenError::Width(kernel.width));
        // Kernels up to 16 wide come from the registry: its modules bake the PSWF σ = 2 table,
        // other kernels get theirs fitted now by the same generator code. Wider (odd) Gaussian
        // windows go to the wide-Gaussian module, whose table holds e^{−k²/4b}.
        let (fns, table) = if kernel.width > nudt_gen::kernel::MAX_WIDTH {
            let half = (kernel.width - 1) / 2;
            let b = kernel.half_width().powi(2) / (4.0 * kernel.beta);
            let fns = T::wide_kernels(dim).ok_or_else(unknown)?;
            (fns, Cow::Owned(wide_table(half, b)))
        } else {
            let fns = T::kernels(dim, kernel.width).ok_or_else(unknown)?;
            let table = if kernel.kind == KernelKind::Pswf && kernel.upsampling == Upsampling::TWO {
                Cow::Borrowed(fns.table)
            } else {
                let pad = fns.table_columns - kernel.width;
                Cow::Owned(
                    kernel
                        .horner()
                        .coeffs
                        .iter()
                        .flat_map(|row| row.iter().copied().chain(std::iter::repeat_n(0.0, pad)))
                        .map(T::of)
                        .collect(),
                )
            };
            (fns, table)
        };
        let dtable = match fns.grad {
            Some(_) => crate::support::derivative_table(&table, fns.table_columns),
            None => Vec::new(),
        };
        let side = match tile_side {
            TileSide::Given(side) => side,
            TileSide::ForThreads(threads) => {
                let cached = plan::tile_side(dim, &kernel, T::PRECISION, arch);
                crate::planner::limits::cpu_tile_side(&n, kernel.width, cached, threads)
            }
        };
        let narrow = plan::narrow_horner_variables(&kernel, tol, T::PRECISION);
        Ok(FineGrid {
            side: vec![side; dim],
            n,
            kernel,
            fns,
            table,
            dtable,
            requested: strategy,
            strategy,
            max_block_points: 1 << 15,
            narrow,
            tiles: None,
            arch: arch.clone(),
        })
    }

    /// The same grid, kernel and schedule, holding no points: a plan whose transforms have
    /// a point set each sorts every set onto one of these (`Plan::set_points_per_transform`).
    pub fn without_points(&self) -> Self {
        FineGrid {
            n: self.n.clone(),
            kernel: self.kernel,
            fns: self.fns,
            table: self.table.clone(),
            dtable: self.dtable.clone(),
            side: self.side.clone(),
            requested: self.requested,
            strategy: self.strategy,
            max_block_points: self.max_block_points,
            narrow: self.narrow,
            tiles: None,
            arch: self.arch.clone(),
        }
    }

    pub fn len(&self) -> usize {
        self.n.iter().product()
    }

    /// The schedule in use for the current points.
    pub fn strategy(&self) -> Strategy {
        self.strategy
    }

    pub fn tile_side(&self) -> usize {
        self.side[0]
    }

    /// Bins the points (radians, finite, any range) and picks the spreading schedule.
    pub fn set_points(&mut self, coords: &[&[T]]) {
        let grid = TileGrid::new(&self.n, self.kernel.width, &self.side);
        let tiles = crate::steps::step("sort", || Tiles::bin(grid, coords, self.narrow));
        self.strategy = plan::choose_strategy(self.requested);
        self.max_block_points = plan::max_block_points(tiles.len(), &self.arch);
        self.tiles = Some(tiles);
    }

    pub fn has_points(&self) -> bool {
        self.tiles.is_some()
    }

    fn tiles(&self) -> Result<&Tiles<T>> {
        self.tiles.as_ref().ok_or(NudtError::PointsNotSet)
    }

    /// Spreads strengths (original point order) onto `grid`, which is overwritten.
    pub fn spread(&self, c: &[Complex<T>], grid: &mut [Complex<T>]) -> Result<()> {
        self.spread_with(self.strategy, c, grid)
    }

    /// Spreads with an explicit schedule (for cross-checks and tuning).
    pub fn spread_with(
        &self,
        strategy: Strategy,
        c: &[Complex<T>],
        grid: &mut [Complex<T>],
    ) -> Result<()> {
        let tiles = self.tiles()?;
        let (c, g) = (interleaved(c), interleaved_mut(grid));
        crate::steps::step("spread", || match strategy {
            Strategy::TargetDriven => {
                (self.fns.spread_target_driven)(tiles, c, g, &self.table, self.max_block_points)
            }
            _ => (self.fns.spread_source_driven)(tiles, c, g, &self.table),
        });
        Ok(())
    }

    /// Whether spreading and interpolation can run slab by slab ([`FineGrid::spread_row`]):
    /// 2-D and 3-D grids with the source-driven schedule. Target-driven blocks read across
    /// tile rows, and a 1-D grid is one row of planes of one point.
    pub fn by_slabs(&self) -> bool {
        self.n.len() >= 2 && self.strategy != Strategy::TargetDriven
    }

    /// The slabs of a slab-wise transform on `threads` threads: per slab, its consecutive
    /// tile rows along the first dimension (as many as
    /// [`crate::planner::limits::slab_tile_rows`] gives, less the empty ones at either end),
    /// the first grid plane of its padded slab (wrapping) and its number of planes. Rows
    /// without points add nothing to a type 1's grid and need nothing of a type 2's, so a
    /// slab of none is skipped: a type 3's inner grid holds its targets in the middle `1/σ`
    /// of each axis, and clustered points leave whole rows empty.
    pub fn slabs(&self, threads: usize) -> Result<Vec<(TileRows, i64, usize)>> {
        let tiles = self.tiles()?;
        let g = &tiles.grid;
        let rows = g.ntiles[0];
        let per_row = g.num_tiles() / rows;
        let full = |r: &usize| tiles.starts[(r + 1) * per_row] > tiles.starts[r * per_row];
        let step = crate::planner::limits::slab_tile_rows(&g.ntiles[..g.dim], threads);
        Ok((0..rows)
            .step_by(step)
            .filter_map(|a| {
                let mut held = (a..(a + step).min(rows)).filter(full);
                let first = held.next()?;
                let range = first..held.next_back().unwrap_or(first) + 1;
                let (plane, planes) = g.rows_planes(range.clone());
                Some((range, plane, planes))
            })
            .collect())
    }

    /// Spreads the strengths of the points of tile rows `rows` into `slab`, their padded
    /// planes ([`FineGrid::slabs`]), overwritten.
    pub fn spread_row(
        &self,
        c: &[Complex<T>],
        slab: &mut [Complex<T>],
        rows: TileRows,
    ) -> Result<()> {
        let tiles = self.tiles()?;
        crate::steps::step("spread", || {
            (self.fns.spread_row)(
                tiles,
                interleaved(c),
                interleaved_mut(slab),
                &self.table,
                rows,
            )
        });
        Ok(())
    }

    /// Interpolates `slab`, tile rows `rows`' padded planes, at their points into `out`
    /// (original point order; the other points' values are left alone).
    pub fn interp_row(
        &self,
        slab: &[Complex<T>],
        out: &mut [Complex<T>],
        rows: TileRows,
    ) -> Result<()> {
        let tiles = self.tiles()?;
        crate::steps::step("interp", || {
            (self.fns.interp_row)(
                tiles,
                interleaved(slab),
                interleaved_mut(out),
                &self.table,
                plan::interp_chunk(tiles.len(), rayon::current_num_threads()),
                rows,
            )
        });
        Ok(())
    }

    /// The gradient kernels, or the typed error of a grid that has none.
    fn grad_fns(&self) -> Result<&crate::kernels::GradFns<T>> {
        self.fns.grad.as_ref().ok_or(NudtError::NoGradient {
            why: "the wide Gaussian window has no derivative kernels",
        })
    }

    /// Per dimension, the factor from the kernels' derivative (in the Horner variable `t`)
    /// to the derivative in the coordinate (radians): `t` runs over 2 as a point moves one
    /// grid spacing (`2π/n` radians) down the grid, so `∂/∂x = −(n/π)·∂/∂t`. The tile kernels
    /// apply it as they write or read each point's derivatives.
    fn coordinate_scales(&self) -> Vec<T> {
        self.n
            .iter()
            .map(|&n| T::of(-(n as f64) / std::f64::consts::PI))
            .collect()
    }

    fn grad_tables<'a>(&'a self, scales: &'a [T]) -> crate::support::GradTables<'a, T> {
        crate::support::GradTables {
            table: &self.table,
            dtable: &self.dtable,
            scales,
        }
    }

    /// Interpolates `grid` (or with `rows`, those tile rows' slab, as [`Self::interp_row`]) at
    /// the points with the gradient: per point (original order) the value and its derivative
    /// along each dimension in radians⁻¹, `dim + 1` values.
    pub fn interp_grad(
        &self,
        grid: &[Complex<T>],
        out: &mut [Complex<T>],
        rows: Option<TileRows>,
    ) -> Result<()> {
        let (tiles, grad) = (self.tiles()?, self.grad_fns()?);
        (grad.interp)(
            tiles,
            interleaved(grid),
            interleaved_mut(out),
            &self.grad_tables(&self.coordinate_scales()),
            plan::interp_chunk(tiles.len(), rayon::current_num_threads()),
            rows,
        );
        Ok(())
    }

    /// Spreads, per point (original order), `(v, u_0, ..)`: `v·W + Σ_d u_d·∂W/∂x_d` of each
    /// point's weights `W` (the transpose of [`Self::interp_grad`]) onto `grid`, overwritten
    /// (or with `rows`, those tile rows' slab, as [`Self::spread_row`]).
    pub fn spread_grad(
        &self,
        vu: &[Complex<T>],
        grid: &mut [Complex<T>],
        rows: Option<TileRows>,
    ) -> Result<()> {
        let (tiles, grad) = (self.tiles()?, self.grad_fns()?);
        (grad.spread)(
            tiles,
            interleaved(vu),
            interleaved_mut(grid),
            &self.grad_tables(&self.coordinate_scales()),
            rows,
        );
        Ok(())
    }

    /// Interpolates `grid` at the points into `out` (original point order).
    pub fn interp(&self, grid: &[Complex<T>], out: &mut [Complex<T>]) -> Result<()> {
        let tiles = self.tiles()?;
        crate::steps::step("interp", || {
            (self.fns.interp)(
                tiles,
                interleaved(grid),
                interleaved_mut(out),
                &self.table,
                plan::interp_chunk(tiles.len(), rayon::current_num_threads()),
            )
        });
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use crate::support::{Order, TileGrid, Tiles};

    /// The tile of coordinate `x` (radians) along an axis of `n` points cut into tiles of
    /// `side` (`ntiles` of them) for a kernel of width `w`: the cell at the centre of the
    /// support, `⌈x·n/2π − w/2⌉ + ⌊w/2⌋` folded into the grid, decides it (support.rs's
    /// layout comment).
    fn tile_of(x: f64, n: usize, side: usize, ntiles: usize, w: usize) -> usize {
        let turns = x / (2.0 * std::f64::consts::PI);
        let xg = (turns - turns.floor()) * n as f64;
        let i0 = (xg - w as f64 / 2.0).ceil() as i64;
        let cell = (i0 + (w / 2) as i64).rem_euclid(n as i64) as usize;
        ((2 * cell + 1) / (2 * side)).min(ntiles - 1)
    }

    /// Sorts of more points than one block of 2¹⁶ keep the low bits of each index and a
    /// table per (tile, block): every tile's indices, decoded, must be its points' in
    /// increasing order (the sort is stable), and all of them together each point once. On
    /// one thread the sort's tasks are whole blocks, on 16 parts of one.
    #[test]
    fn blocked_orders_give_back_every_points_index() {
        let mut state = 0x9e37_79b9_7f4a_7c15u64;
        let mut uniform = move || {
            state = state
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            (state >> 11) as f64 / (1u64 << 53) as f64
        };
        let m = 300_000;
        for (n, side) in [(vec![96], 32), (vec![40, 36], 16), (vec![24, 20, 28], 8)] {
            let dim = n.len();
            let w = 7;
            let coords: Vec<Vec<f64>> = (0..dim)
                .map(|_| (0..m).map(|_| 8.0 * (uniform() - 0.5)).collect())
                .collect();
            let refs: Vec<&[f64]> = coords.iter().map(|v| &v[..]).collect();
            let grid = TileGrid::new(&n, w, &vec![side; dim]);
            for threads in [1, 16] {
                let pool = rayon::ThreadPoolBuilder::new()
                    .num_threads(threads)
                    .build()
                    .expect("a thread pool");
                let tiles = pool.install(|| Tiles::<f64>::bin(grid.clone(), &refs, true));
                check_blocked_order(&tiles, &coords, w, &format!("{dim}-D {threads} threads"));
            }
        }
    }

    /// Every tile's decoded indices in increasing order, each point once, each in its tile.
    fn check_blocked_order(tiles: &Tiles<f64>, coords: &[Vec<f64>], w: usize, case: &str) {
        let (grid, m, dim) = (&tiles.grid, coords[0].len(), coords.len());
        assert!(matches!(tiles.order, Order::Blocked { .. }), "{case}");
        let mut seen = vec![false; m];
        let mut decoded = Vec::new();
        for id in 0..grid.num_tiles() {
            let range = tiles.starts[id]..tiles.starts[id + 1];
            let idx = tiles.order.indices(range, &mut decoded);
            assert!(idx.windows(2).all(|p| p[0] < p[1]), "{case} tile {id}");
            let tc = grid.tile_coords(id);
            for &j in idx {
                let j = j as usize;
                assert!(
                    !std::mem::replace(&mut seen[j], true),
                    "{case}: point {j} twice"
                );
                for d in 0..dim {
                    let t = tile_of(coords[d][j], grid.n[d], grid.side[d], grid.ntiles[d], w);
                    assert_eq!(t, tc[d], "{case}: point {j} in tile {id}");
                }
            }
        }
        assert!(seen.iter().all(|&s| s), "{case}");
    }
}
