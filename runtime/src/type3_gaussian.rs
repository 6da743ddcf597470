//! Type 3 by Gaussian gridding with the parameters of Capozzoli et al. (seed; their Table 1
//! and eq. 6), after Lee & Greengard: spread the sources with a Gaussian, pre-compensate,
//! one FFT, interpolate at the targets with a second Gaussian, post-compensate. The
//! geometry (window, grids, scalings) is the plan layer's ([`crate::planner::gaussian`]);
//! with it,
//! `e^{±isx} = e^{τs²} (4πb)^{-1} Σ_p e^{−(pΔs−s)²/4σ} Σ_n e^{σ(nΔx)²} e^{−(nΔx−x)²/4τ} e^{±ipn2π/M}`
//! up to the truncation and aliasing errors the parameters bound by `ε`.

use crate::error::Result;
use crate::fft::FftNd;
use crate::float::Float;
use crate::grid::{FineGrid, TileSide};
use crate::planner::gaussian::{post_magnitude, steps, GaussGeometry, GaussStep};
use crate::type3::{polar_blocks, Phases, Steps, Type3Scheme};
use crate::uniform::direction;
use nudt_gen::{Arch, Strategy};
use num_complex::Complex;
use rayon::prelude::*;

/// A Gaussian-gridding type 3 engine for one pair of point sets.
pub struct GaussianType3<T: Float> {
    sources: FineGrid<T>,
    targets: FineGrid<T>,
    fft: FftNd<T>,
    /// `e^{σ(nΔx)²}` per dimension, by grid index.
    precomp: Vec<Vec<T>>,
    phases: Phases<T>,
}

impl<T: Float> GaussianType3<T> {
    pub fn new(
        sources: &[&[T]],
        targets: &[&[T]],
        eps: f64,
        isign: i32,
        strategy: Strategy,
        arch: &Arch,
        tile_side: TileSide,
    ) -> Result<Self> {
        let (m_src, k_tgt) = (sources[0].len(), targets[0].len());
        let geometry = GaussGeometry::of(eps, sources, targets)?;
        let wide = |v: &[&[T]]| -> Vec<Vec<f64>> {
            v.iter()
                .map(|c| c.iter().map(|x| x.wide()).collect())
                .collect()
        };
        let (x, s) = (wide(sources), wide(targets));
        let (b, win, n) = (geometry.b, geometry.kernel(), geometry.grid());
        let mut src_scaled: Vec<Vec<T>> = Vec::new();
        let mut tgt_scaled: Vec<Vec<T>> = Vec::new();
        let mut precomp = Vec::new();
        let mut pre_phase = vec![0.0f64; m_src];
        let mut post_phase = vec![0.0f64; k_tgt];
        let mut post_mag = vec![1.0f64; k_tgt];
        for ((ax, x), s) in geometry.axes.iter().zip(&x).zip(&s) {
            src_scaled.push(x.iter().map(|&v| T::of((v - ax.cx) * ax.ds)).collect());
            tgt_scaled.push(s.iter().map(|&v| T::of((v - ax.cs) * ax.dx)).collect());
            precomp.push(ax.precomp(b).into_iter().map(T::of).collect());
            for (p, &v) in pre_phase.iter_mut().zip(x) {
                *p += ax.cs * (v - ax.cx);
            }
            for ((p, mag), &v) in post_phase.iter_mut().zip(post_mag.iter_mut()).zip(s) {
                *p += v * ax.cx;
                *mag *= post_magnitude((v - ax.cs) * ax.dx, b);
            }
        }
        crate::planner::validate::check_grid::<T>(&n, crate::planner::validate::physical_memory())?;
        fn refs<T>(v: &[Vec<T>]) -> Vec<&[T]> {
            v.iter().map(|c| &c[..]).collect()
        }
        let mut src_grid = FineGrid::new(n.clone(), win, eps, strategy, arch, tile_side)?;
        src_grid.set_points(&refs(&src_scaled));
        let mut tgt_grid = FineGrid::new(n.clone(), win, eps, strategy, arch, tile_side)?;
        tgt_grid.set_points(&refs(&tgt_scaled));
        Ok(GaussianType3 {
            fft: FftNd::new(&n),
            sources: src_grid,
            targets: tgt_grid,
            precomp,
            phases: Phases::new(
                polar_blocks::<T, 1>(m_src, isign, |[j]| ([pre_phase[j]], [1.0])),
                polar_blocks::<T, 1>(k_tgt, isign, |[k]| ([post_phase[k]], [post_mag[k]])),
            ),
        })
    }

    /// Grid size per dimension.
    pub fn grid(&self) -> &[usize] {
        &self.sources.n
    }

    pub fn spread_grid(&self) -> &FineGrid<T> {
        &self.sources
    }

    /// Bytes of one running transform's [`crate::type3::Work`] at most: the grid.
    pub fn work_bytes(&self) -> usize {
        self.sources.len() * std::mem::size_of::<Complex<T>>()
    }

    /// Multiplies `grid` by the pre-compensation `e^{σ|nΔx|²}`, separable over dimensions.
    fn precompensate(&self, grid: &mut [Complex<T>]) {
        let pc = &self.precomp;
        let dims = &self.sources.n;
        let inner: usize = dims[1..].iter().product();
        grid.par_chunks_mut(inner.max(1))
            .enumerate()
            .for_each(|(i0, slab)| {
                let f0 = pc[0][i0];
                for (j, v) in slab.iter_mut().enumerate() {
                    let mut fac = f0;
                    let mut r = j;
                    for d in (1..dims.len()).rev() {
                        fac = fac * pc[d][r % dims[d]];
                        r /= dims[d];
                    }
                    *v = *v * fac;
                }
            });
    }
}

impl<T: Float> Type3Scheme<T> for GaussianType3<T> {
    fn phases(&self) -> &Phases<T> {
        &self.phases
    }

    fn grid_len(&self) -> usize {
        self.sources.len()
    }

    /// The plan layer's [`steps`], as the GPUs run them: spread at the sources (the
    /// adjoint's at the targets), pre-compensate, FFT, gather at the other set.
    fn steps(&self, (x, grid, _, y): Steps<'_, T>, isign: i32, adjoint: bool) -> Result<()> {
        let (from, to) = match adjoint {
            false => (&self.sources, &self.targets),
            true => (&self.targets, &self.sources),
        };
        for step in steps(adjoint) {
            match step {
                GaussStep::Spread => from.spread(x, grid)?,
                GaussStep::Precompensate => self.precompensate(grid),
                GaussStep::Fft => self.fft.process(grid, direction(isign)),
                GaussStep::Gather => to.interp(grid, y)?,
            }
        }
        Ok(())
    }
}
