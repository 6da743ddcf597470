//! What an OpenCL plan executes on: its device buffers (fine grid, mode map and FFT; type
//! 3's outer grid and phase factors) and the plan layer's [`Stages`] over them, for one batch
//! of transforms between two device buffers. The order of the stages is not decided here
//! ([`crate::planner::stages`]).

use super::device::ClDevice;
use super::error::OpenClResult;
use super::fft::ClFloat;
use super::gaussian::GaussDev;
use super::grid::{ClModes, ClSpreadModule, FineGrid};
use super::launch::Kernel;
use super::launch::{alloc, launch, mem, zero, Arg, ELEMENT_GROUP};
use crate::error::NudtError;
use crate::gpu::engine::{Type3, Uniform};
use crate::planner::sets;
use crate::planner::stages::{Buf, Factors, Grid, Stages};
use crate::uniform::ModeOrder;
use opencl3::memory::Buffer;
use opencl3::program::Program;
use std::sync::Arc;

/// A type 1/2 engine ([`Uniform`]) on OpenCL.
pub(crate) type UniformDev<T> = Uniform<FineGrid<T>, ClModes<T>, Buffer<T>>;
/// A type 3 engine ([`Type3`]) on OpenCL.
pub(crate) type Type3Dev<T> = Type3<FineGrid<T>, ClModes<T>, Buffer<T>>;
/// What an OpenCL plan executes on.
pub(super) type Engine<T> =
    crate::gpu::engine::Engine<FineGrid<T>, ClModes<T>, Buffer<T>, GaussDev<T>>;

/// `out[t][j] = inp[t][j] · fac[first + j]` for `count` stacked transforms of `n` complex
/// values (`inp` may be `out`); with `conj`, the conjugate of the factor (an adjoint's).
fn cmul<T>(
    dev: &ClDevice,
    k: &Kernel,
    (first, n, count): (usize, usize, usize),
    inp: &Buffer<T>,
    fac: &Buffer<T>,
    out: &Buffer<T>,
    conj: bool,
) -> OpenClResult<()> {
    let args = [
        Arg::U64(n as u64),
        mem(inp),
        mem(fac),
        Arg::U64(first as u64),
        mem(out),
        Arg::U64(n as u64),
        Arg::I32(conj as i32),
    ];
    launch(dev, k, n, ELEMENT_GROUP, count, &args)
}

/// A type 1/2 engine: modes `modes` in `order` on a fine grid `n` through `module`, and
/// `batch` work grids.
pub(super) fn uniform_dev<T: ClFloat>(
    dev: &Arc<ClDevice>,
    module: &ClSpreadModule,
    common: &Program,
    (modes, n): ([usize; 3], [usize; 3]),
    order: ModeOrder,
    batch: usize,
) -> OpenClResult<UniformDev<T>> {
    let grid = FineGrid::new(module, common, n)?;
    let spec = &module.spec;
    let map = ClModes::new(dev, common, spec.dim, modes, n, &spec.kernel, order, batch)?;
    let len = (2 * batch)
        .checked_mul(grid.len())
        .ok_or(NudtError::GridOverflow)?;
    let work = alloc::<T>(dev, len)?;
    Ok(Uniform {
        grid,
        modes: map,
        work,
    })
}

/// The engines that run the plan layer's stages (not the Gaussian type 3's, which has its
/// own steps, nor one waiting for its points).
pub(super) enum Staged<'a, T: ClFloat> {
    Uniform(&'a mut UniformDev<T>),
    Type3(&'a mut Type3Dev<T>),
}

/// The engine as the stages see it, if it runs them.
pub(super) fn staged<T: ClFloat>(e: &mut Engine<T>) -> Option<Staged<'_, T>> {
    match e {
        Engine::Uniform(u) => Some(Staged::Uniform(u)),
        Engine::Type3(t) => Some(Staged::Type3(t)),
        Engine::Gaussian(_) | Engine::Type3Pending => None,
    }
}

/// A batch of transforms (or adjoints) from the device buffer `input` into `output`, stacked
/// from the buffers' starts: the stages' view of a plan's engine.
pub(super) struct Batch<'a, T: ClFloat> {
    pub dev: &'a ClDevice,
    /// The complex multiply of [`cmul`].
    pub cmul: &'a Kernel,
    pub engine: Staged<'a, T>,
    /// The batch's inputs and outputs, from the buffers' starts (a set per transform: its
    /// sets' vectors, from its first point's).
    pub input: &'a Buffer<T>,
    pub output: &'a Buffer<T>,
    /// The batch's first transform, and its transforms.
    pub first: usize,
    pub count: usize,
}

/// A type 3 stage asked of a type 1/2 plan.
fn not_type3() -> super::OpenClError {
    NudtError::WrongType {
        expected: 3,
        actual: 1,
    }
    .into()
}

impl<T: ClFloat> Batch<'_, T> {
    /// The fine grid's engine (type 3: the inner transform's).
    fn fine(&self) -> OpenClResult<&UniformDev<T>> {
        match &self.engine {
            Staged::Uniform(u) => Ok(u),
            Staged::Type3(t) => Ok(&t.inner),
        }
    }

    fn type3(&self) -> OpenClResult<&Type3Dev<T>> {
        match &self.engine {
            Staged::Type3(t) => Ok(t),
            Staged::Uniform(_) => Err(not_type3()),
        }
    }

    fn grid(&self, g: Grid) -> OpenClResult<&FineGrid<T>> {
        match g {
            Grid::Fine => Ok(&self.fine()?.grid),
            Grid::Outer => Ok(&self.type3()?.spread),
        }
    }

    fn buf(&self, b: Buf) -> OpenClResult<&Buffer<T>> {
        Ok(match b {
            Buf::Input => self.input,
            Buf::Output => self.output,
            Buf::Phased => &self.type3()?.phased,
            Buf::Grid(Grid::Fine) => &self.fine()?.work,
            Buf::Grid(Grid::Outer) => &self.type3()?.agrid,
        })
    }
}

impl<T: ClFloat> Stages for Batch<'_, T> {
    type Error = super::OpenClError;

    fn zero(&mut self, g: Grid) -> OpenClResult<()> {
        let dev = self.dev;
        let (len, buf) = match (g, &mut self.engine) {
            (Grid::Fine, Staged::Uniform(u)) => (u.grid.len(), &mut u.work),
            (Grid::Fine, Staged::Type3(t)) => (t.inner.grid.len(), &mut t.inner.work),
            (Grid::Outer, Staged::Type3(t)) => (t.spread.len(), &mut t.agrid),
            (Grid::Outer, Staged::Uniform(_)) => return Err(not_type3()),
        };
        zero(dev, buf, 2 * self.count * len)
    }

    fn phase(&mut self, f: Factors, from: Buf, to: Buf, conj: bool) -> OpenClResult<()> {
        let t = self.type3()?;
        let p = &t.points;
        let (at, factors) = f.pick((&p.starts[0], &p.pre), (&p.starts[1], &p.post));
        let span = sets::point_span(at, self.first, self.count);
        let (x, y) = (self.buf(from)?, self.buf(to)?);
        cmul(self.dev, self.cmul, span, x, factors, y, conj)
    }

    fn spread(&mut self, from: Buf, onto: Grid, gradient: bool) -> OpenClResult<()> {
        let (c, g) = (self.buf(from)?, self.buf(Buf::Grid(onto))?);
        self.grid(onto)?
            .spread(self.dev, c, g, (self.first, self.count), gradient)
    }

    fn interp(&mut self, from: Grid, to: Buf, gradient: bool) -> OpenClResult<()> {
        let (g, c) = (self.buf(Buf::Grid(from))?, self.buf(to)?);
        self.grid(from)?
            .interp(self.dev, g, c, (self.first, self.count), gradient)
    }

    fn fft(&mut self, isign: i32) -> OpenClResult<()> {
        let u = match &mut self.engine {
            Staged::Uniform(u) => &mut **u,
            Staged::Type3(t) => &mut t.inner,
        };
        u.modes.fft(&u.work, isign, self.count)
    }

    fn grid_to_modes(&mut self, to: Buf) -> OpenClResult<()> {
        let (u, f) = (self.fine()?, self.buf(to)?);
        u.modes.grid_to_modes(self.dev, &u.work, f, self.count)
    }

    fn modes_to_grid(&mut self, from: Buf) -> OpenClResult<()> {
        let (u, f) = (self.fine()?, self.buf(from)?);
        u.modes.modes_to_grid(self.dev, f, &u.work, self.count)
    }
}
