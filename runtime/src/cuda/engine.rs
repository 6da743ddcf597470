//! What a CUDA plan executes on: its device buffers (fine grid, mode map, FFTs; type 3's
//! outer grid and phase factors) and the plan layer's [`Stages`] over them, for one batch of
//! transforms between two device addresses. The order of the stages is not decided here
//! ([`crate::planner::stages`]).

use super::error::{CudaError, CudaResult};
use super::gaussian::GaussDev;
use super::grid::{memset0, ptr, CommonFns, FineGrid, GridModule, ModeMapDev};
use super::grid_fft::{FftEngine, GridFfts};
use super::memory::alloc;
use super::{CudaFloat, GpuArch};
use crate::error::NudtError;
use crate::planner::stages::{Buf, Factors, Grid, Stages};
use crate::uniform::ModeOrder;
use cudarc::driver::{CudaSlice, CudaStream};
use nudt_gen::KernelSpec;
use std::sync::Arc;

/// A type 1/2 engine: fine grid, mode map, FFTs and the batch of work grids.
pub(super) struct UniformDev<T: CudaFloat> {
    pub(super) grid: FineGrid<T>,
    pub(super) map: ModeMapDev<T>,
    pub(super) fft: GridFfts<T>,
    pub(super) work: CudaSlice<T>,
}

impl<T: CudaFloat> UniformDev<T> {
    #[allow(clippy::too_many_arguments)]
    pub(super) fn new(
        stream: &Arc<CudaStream>,
        arch: &GpuArch,
        fft: FftEngine,
        module: &GridModule,
        modes: &[usize],
        n: &[usize],
        kernel: KernelSpec,
        order: ModeOrder,
        batches: &[usize],
    ) -> CudaResult<Self> {
        let grid = FineGrid::new(module, n)?;
        let map = ModeMapDev::new(stream, modes, &grid.n, &kernel, order)?;
        let len = grid
            .len()
            .checked_mul(2 * batches[0])
            .ok_or(NudtError::GridOverflow)?;
        let work = alloc::<T>(stream, len, "fine grids")?;
        let fft = GridFfts::new(stream, arch, n, batches, fft, ptr(&work, stream))?;
        Ok(UniformDev {
            grid,
            map,
            fft,
            work,
        })
    }

    /// The fine grids as scratch memory for a sort (address, bytes): unused between
    /// executes, and every use is ordered on the plan's stream.
    pub(super) fn scratch(&self, stream: &CudaStream) -> (u64, usize) {
        (
            ptr(&self.work, stream),
            self.work.len() * std::mem::size_of::<T>(),
        )
    }
}

/// A type 3 engine for one pair of point sets (FINUFFT's method, as the CPU backend's).
pub(super) struct Type3Dev<T: CudaFloat> {
    /// The kernel its grids were made for.
    pub(super) kernel: KernelSpec,
    pub(super) spread: FineGrid<T>,
    pub(super) inner: UniformDev<T>,
    /// Rescaled sources and targets per dimension (the sorts' inputs), and the phase factors.
    pub(super) y: Vec<CudaSlice<T>>,
    pub(super) u: Vec<CudaSlice<T>>,
    pub(super) pre: CudaSlice<T>,
    pub(super) post: CudaSlice<T>,
    /// One batch of phased inputs (the forward's pre-phased strengths, M per transform; the
    /// adjoint's conjugate-post-factored values, K) and of spreading grids.
    pub(super) cwork: CudaSlice<T>,
    pub(super) agrid: CudaSlice<T>,
}

pub(super) enum Engine<T: CudaFloat> {
    Uniform(Box<UniformDev<T>>),
    Type3Pending,
    Type3(Box<Type3Dev<T>>),
    Gaussian(Box<GaussDev<T>>),
}

impl<T: CudaFloat> Engine<T> {
    /// The fine grid's engine and type 3's parts, for the engines that run the plan layer's
    /// stages (not the Gaussian type 3's, nor one waiting for its points).
    pub(super) fn grids(&self) -> Option<(&UniformDev<T>, Option<&Type3Dev<T>>)> {
        match self {
            Engine::Uniform(u) => Some((u, None)),
            Engine::Type3(t) => Some((&t.inner, Some(t))),
            Engine::Gaussian(_) | Engine::Type3Pending => None,
        }
    }
}

/// One batch of transforms (or adjoints) between the device addresses `input` and `output`:
/// the stages' view of a plan's engine.
pub(super) struct Batch<'a, T: CudaFloat> {
    pub stream: &'a CudaStream,
    pub common: &'a CommonFns,
    /// The fine grid's engine (type 3: the inner transform's).
    pub fine: &'a UniformDev<T>,
    /// Type 3's outer grid, phase factors and phased inputs.
    pub type3: Option<&'a Type3Dev<T>>,
    pub input: u64,
    pub output: u64,
    /// Transforms in the batch.
    pub count: usize,
    /// Sources and targets: the lengths of the pre- and post-factors.
    pub points: usize,
    pub targets: usize,
}

impl<T: CudaFloat> Batch<'_, T> {
    fn type3(&self) -> CudaResult<&Type3Dev<T>> {
        self.type3
            .ok_or_else(|| CudaError::Unsupported("a type 3 stage on a type 1/2 plan".into()))
    }

    fn grid(&self, g: Grid) -> CudaResult<&FineGrid<T>> {
        match g {
            Grid::Fine => Ok(&self.fine.grid),
            Grid::Outer => Ok(&self.type3()?.spread),
        }
    }

    fn addr(&self, b: Buf) -> CudaResult<u64> {
        let s = self.stream;
        Ok(match b {
            Buf::Input => self.input,
            Buf::Output => self.output,
            Buf::Phased => ptr(&self.type3()?.cwork, s),
            Buf::Grid(Grid::Fine) => ptr(&self.fine.work, s),
            Buf::Grid(Grid::Outer) => ptr(&self.type3()?.agrid, s),
        })
    }
}

impl<T: CudaFloat> Stages for Batch<'_, T> {
    type Error = CudaError;

    fn zero(&mut self, g: Grid) -> CudaResult<()> {
        let bytes = 2 * self.count * self.grid(g)?.len() * std::mem::size_of::<T>();
        memset0(self.stream, self.addr(Buf::Grid(g))?, bytes)
    }

    fn phase(&mut self, f: Factors, from: Buf, to: Buf, conj: bool) -> CudaResult<()> {
        let t = self.type3()?;
        let (n, factors) = f.pick((self.points, &t.pre), (self.targets, &t.post));
        let (x, y, s) = (self.addr(from)?, self.addr(to)?, self.stream);
        self.common
            .cmul(s, n, self.count, x, ptr(factors, s), y, conj)
    }

    fn spread(&mut self, from: Buf, onto: Grid, gradient: bool) -> CudaResult<()> {
        let (c, g) = (self.addr(from)?, self.addr(Buf::Grid(onto))?);
        self.grid(onto)?
            .spread(self.stream, c, g, self.count, gradient)
    }

    fn interp(&mut self, from: Grid, to: Buf, gradient: bool) -> CudaResult<()> {
        let (g, c) = (self.addr(Buf::Grid(from))?, self.addr(to)?);
        self.grid(from)?
            .interp(self.stream, g, c, self.count, gradient)
    }

    fn fft(&mut self, isign: i32) -> CudaResult<()> {
        let g = self.addr(Buf::Grid(Grid::Fine))?;
        self.fine.fft.exec(g, self.count, isign)
    }

    fn grid_to_modes(&mut self, to: Buf) -> CudaResult<()> {
        let (g, f) = (self.addr(Buf::Grid(Grid::Fine))?, self.addr(to)?);
        let (u, len) = (self.fine, self.fine.grid.len());
        u.map
            .grid_to_modes(self.common, self.stream, g, f, len, self.count)
    }

    fn modes_to_grid(&mut self, from: Buf) -> CudaResult<()> {
        let (f, g) = (self.addr(from)?, self.addr(Buf::Grid(Grid::Fine))?);
        let (u, len) = (self.fine, self.fine.grid.len());
        u.map
            .modes_to_grid(self.common, self.stream, f, g, len, self.count)
    }
}
