//! What a CUDA plan executes on: its device buffers (fine grid, mode map, FFTs; type 3's
//! outer grid and phase factors) and the plan layer's [`Stages`] over them, for one batch of
//! transforms between two device addresses. The order of the stages is not decided here
//! ([`crate::planner::stages`]).

use super::error::{CudaError, CudaResult};
use super::fft::{FftEngine, GridFfts};
use super::gaussian::GaussDev;
use super::grid::{memset0, ptr, CommonFns, FineGrid, GridModule, ModeMapDev};
use super::memory::alloc;
use super::{CudaFloat, GpuArch};
use crate::error::NudtError;
use crate::gpu::engine::{Type3, Uniform};
use crate::gpu::plan::GridShape;
use crate::planner::sets;
use crate::planner::stages::{Buf, Factors, Grid, Stages};
use cudarc::driver::{CudaSlice, CudaStream};
use std::sync::Arc;

/// The modes on a fine grid (corrections and mode copies) and the grid's FFTs.
pub(crate) struct CudaModes<T: CudaFloat> {
    pub(super) map: ModeMapDev<T>,
    pub(super) fft: GridFfts<T>,
}

/// A type 1/2 engine ([`Uniform`]) on CUDA.
pub(crate) type UniformDev<T> = Uniform<FineGrid<T>, CudaModes<T>, CudaSlice<T>>;
/// A type 3 engine ([`Type3`]) on CUDA.
pub(crate) type Type3Dev<T> = Type3<FineGrid<T>, CudaModes<T>, CudaSlice<T>>;
/// What a CUDA plan executes on.
pub(super) type Engine<T> =
    crate::gpu::engine::Engine<FineGrid<T>, CudaModes<T>, CudaSlice<T>, GaussDev<T>>;

/// A type 1/2 engine of `shape` through `module`, with FFTs for its batches (work grids for
/// the first).
pub(super) fn uniform_dev<T: CudaFloat>(
    stream: &Arc<CudaStream>,
    arch: &GpuArch,
    fft: FftEngine,
    module: &GridModule,
    shape: GridShape<'_>,
) -> CudaResult<UniformDev<T>> {
    let (modes, n, batches) = (shape.modes, shape.n, &shape.batches);
    let (kernel, order) = (shape.kernel, shape.order);
    let grid = FineGrid::new(module, n)?;
    let map = ModeMapDev::new(stream, modes, &grid.n, &kernel, order)?;
    let len = grid
        .len()
        .checked_mul(2 * batches[0])
        .ok_or(NudtError::GridOverflow)?;
    let work = alloc::<T>(stream, len, "fine grids")?;
    let fft = GridFfts::new(stream, arch, n, batches, fft, ptr(&work, stream))?;
    let modes = CudaModes { map, fft };
    Ok(Uniform { grid, modes, work })
}

/// The fine grids of `u` as scratch memory for a sort (address, bytes): unused between
/// executes, and every use is ordered on the plan's stream.
pub(super) fn scratch<T: CudaFloat>(u: &UniformDev<T>, stream: &CudaStream) -> (u64, usize) {
    (
        ptr(&u.work, stream),
        u.work.len() * std::mem::size_of::<T>(),
    )
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
    /// The batch's inputs and outputs (a set per transform: its sets' vectors, from its
    /// first point's).
    pub input: u64,
    pub output: u64,
    /// The batch's first transform, and its transforms.
    pub first: usize,
    pub count: usize,
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
            Buf::Phased => ptr(&self.type3()?.phased, s),
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
        let p = &t.points;
        let (at, factors) = f.pick((&p.starts[0], &p.pre), (&p.starts[1], &p.post));
        let span = sets::point_span(at, self.first, self.count);
        let (x, y, s) = (self.addr(from)?, self.addr(to)?, self.stream);
        self.common.cmul(s, span, x, ptr(factors, s), y, conj)
    }

    fn spread(&mut self, from: Buf, onto: Grid, gradient: bool) -> CudaResult<()> {
        let (c, g) = (self.addr(from)?, self.addr(Buf::Grid(onto))?);
        self.grid(onto)?
            .spread(self.stream, c, g, (self.first, self.count), gradient)
    }

    fn interp(&mut self, from: Grid, to: Buf, gradient: bool) -> CudaResult<()> {
        let (g, c) = (self.addr(Buf::Grid(from))?, self.addr(to)?);
        self.grid(from)?
            .interp(self.stream, g, c, (self.first, self.count), gradient)
    }

    fn fft(&mut self, isign: i32) -> CudaResult<()> {
        let g = self.addr(Buf::Grid(Grid::Fine))?;
        self.fine.modes.fft.exec(g, self.count, isign)
    }

    fn grid_to_modes(&mut self, to: Buf) -> CudaResult<()> {
        let (g, f) = (self.addr(Buf::Grid(Grid::Fine))?, self.addr(to)?);
        let (u, len) = (self.fine, self.fine.grid.len());
        u.modes
            .map
            .grid_to_modes(self.common, self.stream, g, f, len, self.count)
    }

    fn modes_to_grid(&mut self, from: Buf) -> CudaResult<()> {
        let (f, g) = (self.addr(from)?, self.addr(Buf::Grid(Grid::Fine))?);
        let (u, len) = (self.fine, self.fine.grid.len());
        u.modes
            .map
            .modes_to_grid(self.common, self.stream, f, g, len, self.count)
    }
}
