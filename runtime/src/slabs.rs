//! Types 1 and 2 on a 2-D or 3-D fine grid one slab at a time, so that the whole grid is
//! never held.
//!
//! The fine-grid FFT is separable: transforming every plane (the axes after the first) and
//! then the columns along the first axis gives the grid's transform, and only the planes'
//! entries at the modes feed the columns the correction reads. A row of tiles along the first
//! axis spreads into its slab of planes (the row plus the kernel's overhang), the slab's
//! planes are transformed, and their mode entries are added into a grid of `n₀ × modes`
//! columns; slabs overlap by `w − 1` planes, which the sum joins as the whole grid would.
//! Type 2 runs the same steps backwards. Against the whole grid, a 3-D type 1 of 100³ modes on
//! a 250³ grid holds 24 MB of columns (the rest are the output's rows) and a 22 MB slab
//! instead of 250 MB, and transforms about a third more plane lines (the overlap planes), in
//! caches rather than memory.

use crate::error::Result;
use crate::fft::{FftNd, Needed};
use crate::float::{resize_parallel, rows_per_task, zero_parallel, Float};
use crate::grid::FineGrid;
use crate::kernels::TileRows;
use num_complex::Complex;
use rayon::prelude::*;
use rustfft::FftDirection;

/// One execute's slabs: per slab its tile rows, first plane and plane count
/// ([`FineGrid::slabs`]), the first axis's length, points per plane and modes per plane.
struct Geometry {
    rows: Vec<(TileRows, i64, usize)>,
    n0: usize,
    plane: usize,
    m: usize,
}

/// The first axis's modes: their grid indices and corrections.
pub type FirstAxis<'a, T> = (&'a [usize], &'a [T]);

/// Plane and column transforms and mode positions of a slab-wise type 1 or 2: read-only
/// while transforms run, so that the transforms of a stack share them and run at once, each
/// with its own [`SlabWork`].
pub struct Slabs<T: Float> {
    /// Transform of one plane (the grid's axes after the first).
    plane: FftNd<T>,
    /// Transform of the mode columns along the first axis (length `n₀`).
    columns: FftNd<T>,
    /// Per user mode of a plane (row-major over the later axes), its entry in a transformed
    /// plane.
    at: Vec<usize>,
    /// Its correction factor: the product over the later axes.
    corr: Vec<T>,
    /// Per plane axis, whether an index holds a mode (the plane transform's pruning).
    needed: Vec<Vec<bool>>,
}

/// The buffers of one running slab-wise transform: a slab of planes and the column grid,
/// and the threads the transform counts on, which size its slabs ([`FineGrid::slabs`]).
#[derive(Default)]
pub struct SlabWork<T> {
    slab: Vec<Complex<T>>,
    columns: Vec<Complex<T>>,
    /// The pool's threads, or their share where transforms of a stack run at once (0: all
    /// of the pool).
    pub threads: usize,
}

impl<T: Float> SlabWork<T> {
    /// Gives the slab and the column grid to the next plan ([`crate::reuse`]).
    pub fn release(&mut self) {
        crate::reuse::keep(std::mem::take(&mut self.slab));
        crate::reuse::keep(std::mem::take(&mut self.columns));
    }
}

impl<T: Float> Slabs<T> {
    /// Gives the FFTs' scratch to the next plan ([`crate::reuse`]).
    pub fn release(&self) {
        self.plane.release();
        self.columns.release();
    }

    /// For a grid of `n` points (2-D or 3-D) whose later axes hold the modes at grid indices
    /// `gidx[1..]` with corrections `corr[1..]` (both padded to three axes).
    pub fn new(n: &[usize], gidx: &[Vec<usize>; 3], corr: &[Vec<T>; 3]) -> Self {
        let plane = FftNd::new(&n[1..]);
        let n2: usize = n[2..].iter().product();
        let mut at = Vec::with_capacity(gidx[1].len() * gidx[2].len());
        let mut c = Vec::with_capacity(at.capacity());
        for (&g1, &c1) in gidx[1].iter().zip(&corr[1]) {
            for (&g2, &c2) in gidx[2].iter().zip(&corr[2]) {
                at.push(plane.spectrum_position(g1 * n2 + g2));
                c.push(c1 * c2);
            }
        }
        let needed = (1..n.len())
            .map(|a| {
                let mut v = vec![false; n[a]];
                gidx[a].iter().for_each(|&g| v[g] = true);
                v
            })
            .collect();
        Slabs {
            columns: FftNd::new(&n[..1]),
            plane,
            at,
            corr: c,
            needed,
        }
    }

    /// Modes per plane.
    fn width(&self) -> usize {
        self.at.len()
    }

    /// The slab rows of `grid`'s points, with room made in `work` for the longest slab and
    /// `held` rows of the column grid (zeroed).
    fn prepare(&self, grid: &FineGrid<T>, work: &mut SlabWork<T>, held: usize) -> Result<Geometry> {
        let threads = match work.threads {
            0 => rayon::current_num_threads(),
            t => t,
        };
        let rows = grid.slabs(threads)?;
        let (n0, plane, m) = (
            grid.n[0],
            grid.n[1..].iter().product::<usize>(),
            self.width(),
        );
        let longest = rows.iter().map(|r| r.2).max().unwrap_or(0);
        crate::steps::step("zero", || {
            resize_parallel(&mut work.slab, longest * plane);
            resize_parallel(&mut work.columns, held * m);
            zero_parallel(&mut work.columns);
        });
        Ok(Geometry { rows, n0, plane, m })
    }

    /// Type 1: the corrected modes of what `spread` puts into each tile row's slab (`(slab,
    /// row)`: the strengths, or with the gradient, values and derivative weights) into `f`,
    /// whose first-axis modes sit at grid indices `gidx0` with corrections `corr0`.
    ///
    /// The column grid's rows at those indices are `f`'s own rows: they gather their planes'
    /// mode entries there, are transformed in place and end corrected there, and only the
    /// other `n₀ − N₀` rows take a buffer. A 3-D type 1 of 100³ modes on a 250³ grid keeps
    /// 24 MB of columns instead of 40 (its peak: the caller's data and output, the sort's,
    /// the slab's and these).
    pub fn type1(
        &self,
        grid: &FineGrid<T>,
        work: &mut SlabWork<T>,
        (gidx0, corr0): FirstAxis<'_, T>,
        spread: impl Fn(&mut [Complex<T>], TileRows) -> Result<()>,
        f: &mut [Complex<T>],
        direction: FftDirection,
    ) -> Result<()> {
        let n0 = grid.n[0];
        let Geometry { rows, plane, m, .. } = self.prepare(grid, work, n0 - gidx0.len())?;
        let Slabs {
            plane: fft,
            columns,
            at,
            corr,
            needed,
        } = self;
        let SlabWork {
            slab,
            columns: columns_data,
            ..
        } = work;
        zero_parallel(f);
        // Column row of each grid index along the first axis: `f`'s row for a mode's, the
        // buffer's next otherwise.
        let mut held: Vec<Option<&mut [Complex<T>]>> = (0..n0).map(|_| None).collect();
        for (&g0, row) in gidx0.iter().zip(f.chunks_mut(m)) {
            held[g0] = Some(row);
        }
        let keep: Vec<bool> = held.iter().map(Option::is_some).collect();
        let mut spare = columns_data.chunks_mut(m);
        let mut col_rows: Vec<&mut [Complex<T>]> = held
            .into_iter()
            .map(|r| {
                r.or_else(|| spare.next())
                    .expect("a buffer row per grid index without a mode")
            })
            .collect();
        for (r, first, planes) in rows {
            let slab = &mut slab[..planes * plane];
            spread(slab, r)?;
            crate::steps::step("plane_fft", || {
                slab.par_chunks_mut(plane)
                    .with_min_len(rows_per_task(plane))
                    .for_each(|p| fft.process_pruned(p, direction, needed, Needed::Outputs))
            });
            let slab = &*slab;
            // Each column row gathers the slab planes that land on it (one, or none; more
            // only where the slab wraps onto itself).
            crate::steps::step("gather", || {
                let per_task = rows_per_task(m);
                col_rows
                    .par_iter_mut()
                    .with_min_len(per_task)
                    .enumerate()
                    .for_each(|(g0, row)| {
                        let mut i = (g0 as i64 - first).rem_euclid(n0 as i64) as usize;
                        while i < planes {
                            let p = &slab[i * plane..(i + 1) * plane];
                            row.iter_mut()
                                .zip(at.iter())
                                .for_each(|(a, &k)| *a = *a + p[k]);
                            i += n0;
                        }
                    })
            });
        }
        crate::steps::step("column_fft", || {
            columns.process_row_columns(&mut col_rows, &keep, direction)
        });
        drop(col_rows);
        crate::steps::step("correct", || {
            f.par_chunks_mut(m)
                .with_min_len(rows_per_task(m))
                .zip(corr0)
                .for_each(|(out, &c0)| {
                    for (o, &c) in out.iter_mut().zip(corr) {
                        *o = *o * (c0 * c);
                    }
                })
        });
        Ok(())
    }

    /// Type 2: the values at the points `c` of the modes `f` (first-axis modes at grid
    /// indices `gidx0`, corrections `corr0`).
    pub fn type2(
        &self,
        grid: &FineGrid<T>,
        work: &mut SlabWork<T>,
        (gidx0, corr0): FirstAxis<'_, T>,
        f: &[Complex<T>],
        mut interp: impl FnMut(&[Complex<T>], TileRows) -> Result<()>,
        direction: FftDirection,
    ) -> Result<()> {
        let Geometry { rows, n0, plane, m } = self.prepare(grid, work, grid.n[0])?;
        // User rows of the first axis land on distinct column rows.
        let mut user_row = vec![None; n0];
        gidx0
            .iter()
            .enumerate()
            .for_each(|(i0, &g0)| user_row[g0] = Some(i0));
        let corr = &self.corr;
        crate::steps::step("correct", || {
            work.columns
                .par_chunks_mut(m)
                .with_min_len(rows_per_task(m))
                .zip(&user_row)
                .for_each(|(row, i0)| {
                    let Some(i0) = *i0 else { return };
                    let fin = &f[i0 * m..(i0 + 1) * m];
                    for ((o, &v), &cm) in row.iter_mut().zip(fin).zip(corr) {
                        *o = v * (corr0[i0] * cm);
                    }
                })
        });
        crate::steps::step("column_fft", || {
            self.columns.process_columns(&mut work.columns, direction)
        });
        for (r, first, planes) in rows {
            let slab = &mut work.slab[..planes * plane];
            let (fft, needed, at, cols) = (&self.plane, &self.needed, &self.at, &work.columns);
            crate::steps::step("plane_fft", || {
                let per_task = rows_per_task(plane);
                slab.par_chunks_mut(plane)
                    .with_min_len(per_task)
                    .enumerate()
                    .for_each(|(i, p)| {
                        let g0 = (first + i as i64).rem_euclid(n0 as i64) as usize;
                        p.iter_mut().for_each(|v| *v = Complex::default());
                        for (&k, &v) in at.iter().zip(&cols[g0 * m..(g0 + 1) * m]) {
                            p[k] = v;
                        }
                        fft.process_pruned(p, direction, needed, Needed::Inputs);
                    })
            });
            interp(slab, r)?;
        }
        Ok(())
    }
}
