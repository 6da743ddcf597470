//! The CUDA backend's device state ([`CudaDev`]: context, stream, GPU description, common
//! module, timing events, the plan's device copies) and the device halves of the shared
//! plan's steps ([`Backend`]): modules compiled by NVRTC, grids and cuFFT plans, uploads,
//! the bin sort, bounding boxes, type 3's preparation and the Gaussian type 3's.

use super::engine::{scratch, uniform_dev, Batch, CudaModes, Type3Dev, UniformDev};
use super::error::{device_call, driver, CudaResult};
use super::fft::FftEngine;
use super::fft::FftPlans;
use super::gaussian::{gauss_window, GaussDev, GaussWindow};
use super::grid::{at, ptr, CommonFns, FineGrid, GridModule};
use super::memory::{alloc, read_back};
use super::staging::Staging;
use super::{CudaFloat, GpuArch};
use crate::error::NudtError;
use crate::gpu::device::Device;
use crate::gpu::engine::Type3;
use crate::gpu::gaussian::GaussGrids;
use crate::gpu::plan::{
    Backend, Fill, GaussPrep, GridShape, ModuleKey, PointSets, Take, Type3Prep,
};
use crate::gpu::routing::SlabKernels;
use crate::gpu::type3::{set_bounds, Boxes, Quadrature, Span, Type3Points};
use crate::planner::stages::{self, Stage};
use cudarc::driver::{CudaContext, CudaEvent, CudaSlice, CudaStream, DevicePtr, SyncOnDrop};
use nudt_gen::KernelSpec;
use std::sync::Arc;

/// The shared plan's view of type 3's modules, quadrature and point sets, and of the Gaussian
/// type 3's preparation (short names for the signatures below).
type Modules = crate::gpu::plan::Type3Modules<GridModule, Quad>;
type Quad = [CudaSlice<f64>; 2];
type Sets<'a, T> = PointSets<'a, CudaPoints<T>>;
type Gauss<'a, T> = GaussPrep<'a, CudaDev<T>, T>;
type Prep<'a, T> = Type3Prep<'a, CudaDev<T>, T>;

/// A device array of coordinates a plan holds between set-points and execute.
pub(super) type HeldCoords<T> = Arc<dyn DevicePtr<T> + Send + Sync>;

/// Addresses of held coordinate arrays for work queued on `stream`, with their guards: kept
/// until the work is queued, they order it after the owners' writes and a drop after it.
pub(super) fn guard_held<'a, T>(
    held: &'a [HeldCoords<T>],
    stream: &'a CudaStream,
) -> Vec<(u64, SyncOnDrop<'a>)> {
    held.iter().map(|c| c.device_ptr(stream)).collect()
}

/// The addresses of up to three guarded arrays, 0 for the rest.
pub(super) fn addresses(guards: &[(u64, SyncOnDrop<'_>)]) -> [u64; 3] {
    std::array::from_fn(|d| guards.get(d).map_or(0, |g| g.0))
}

/// Coordinates on the device: their addresses (one array per dimension), and what keeps them
/// alive while a plan's kernels read them — the plan's own copies of host arrays, or the
/// caller's arrays (`held`). `bad`, where not 0, is a device word the sort leaves the first
/// non-finite point's index in (the check of the caller's arrays).
pub(crate) struct CudaPoints<T> {
    pub at: [u64; 3],
    pub bad: u64,
    pub owned: Vec<CudaSlice<T>>,
    pub held: Vec<HeldCoords<T>>,
}

/// A CUDA plan's device state.
pub struct CudaDev<T: CudaFloat> {
    pub(super) ctx: Arc<CudaContext>,
    pub(super) stream: Arc<CudaStream>,
    pub(super) arch: GpuArch,
    pub(super) common: CommonFns,
    /// The fine grids' FFT engine (the options').
    pub(super) fft: FftEngine,
    /// The coordinates the sorted points are read from (the plan's copies of host arrays,
    /// or the caller's device arrays).
    pub(super) coords: Vec<CudaSlice<T>>,
    pub(super) held: Vec<HeldCoords<T>>,
    /// Device copies of host inputs and outputs (grown on demand).
    pub(super) din: Option<CudaSlice<T>>,
    pub(super) dout: Option<CudaSlice<T>>,
    /// Pinned host memory every host array goes through.
    pub(super) staging: Staging<T>,
    /// Start and end of the last set-points and of the last run.
    pub(super) events: [CudaEvent; 4],
    pub(super) recorded: [bool; 2],
}

impl<T: CudaFloat> CudaDev<T> {
    pub(super) fn bind(&self) -> CudaResult<()> {
        self.ctx
            .bind_to_thread()
            .map_err(|e| driver("cuCtxSetCurrent", e))
    }

    /// Records event `which` (0, 1: set-points' start and end; 2, 3: a run's).
    pub(super) fn record(&mut self, which: usize) -> CudaResult<()> {
        self.events[which]
            .record(&self.stream)
            .map_err(|e| driver("cuEventRecord", e))?;
        if which % 2 == 1 {
            self.recorded[which / 2] = true;
        }
        Ok(())
    }
}

/// The `u32` at `word` on the device, once the stream's work before it has run.
pub(super) fn read_word(stream: &Arc<CudaStream>, word: &CudaSlice<u32>) -> CudaResult<u32> {
    let mut host = [0u32];
    device_call("cuMemcpyDtoH (non-finite check)")?;
    stream
        .memcpy_dtoh(word, &mut host)
        .map_err(|e| driver("cuMemcpyDtoH (non-finite check)", e))?;
    stream
        .synchronize()
        .map_err(|e| driver("cuStreamSynchronize", e))?;
    Ok(host[0])
}

/// The coordinates of point `index` from the device arrays at `coords` (one per dimension):
/// what an error about that point names.
pub(super) fn read_point<T: CudaFloat>(
    stream: &CudaStream,
    coords: &[u64],
    index: usize,
) -> CudaResult<Vec<T>> {
    coords
        .iter()
        .map(|&base| Ok(read_back::<T>(stream, at::<T>(base, index), 1)?[0]))
        .collect()
}

/// Bounding interval `(lo, hi)` per array of `n[i]` coordinates at `x[i]` (device `T`),
/// reduced on the GPU into per-block partials and finished here: one small read-back.
/// An empty array gives `lo > hi`.
fn extents(stream: &Arc<CudaStream>, common: &CommonFns, spans: &[Span<u64>]) -> CudaResult<Boxes> {
    let nb = common.minmax_blocks();
    let part = alloc::<f64>(stream, 2 * nb * spans.len(), "bounding boxes")?;
    let base = ptr(&part, stream);
    for (i, &(x, first, n)) in spans.iter().enumerate() {
        common.minmax(stream, (first, n), x, at::<f64>(base, 2 * nb * i))?;
    }
    let mut host = vec![0.0f64; 2 * nb * spans.len()];
    device_call("cuMemcpyDtoH (bounding boxes)")?;
    stream
        .memcpy_dtoh(&part, &mut host)
        .map_err(|e| driver("cuMemcpyDtoH (bounding boxes)", e))?;
    stream
        .synchronize()
        .map_err(|e| driver("cuStreamSynchronize", e))?;
    Ok(host
        .chunks(2 * nb)
        .map(|c| {
            c.chunks(2)
                .fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), v| {
                    (lo.min(v[0]), hi.max(v[1]))
                })
        })
        .collect())
}

impl<T: CudaFloat> Backend<T> for CudaDev<T> {
    type Error = super::CudaError;
    type Module = GridModule;
    type Quadrature = [CudaSlice<f64>; 2];
    type Grid = FineGrid<T>;
    type Modes = CudaModes<T>;
    type Buf = CudaSlice<T>;
    type GaussFft = FftPlans;
    type Window = GaussWindow;
    type Points = CudaPoints<T>;
    type Dev = Arc<CudaStream>;
    const NAME: &'static str = "cuda";
    const PLAN: &'static str = "CudaPlan";

    fn module(&self, key: ModuleKey) -> CudaResult<GridModule> {
        let (c, ctx) = (key.choice, &self.ctx);
        let (want, two_pass) = ([c.spread, c.interp], c.two_pass_sort);
        GridModule::new::<T>(ctx, &self.arch, key, c.bins, want, two_pass)
    }

    fn quadrature(&self, kernel: &KernelSpec) -> CudaResult<[CudaSlice<f64>; 2]> {
        let (qz, qw) = nudt_gen::gpu::fourier_quadrature(kernel);
        Ok([
            self.stream.upload(&qz, "quadrature")?,
            self.stream.upload(&qw, "quadrature")?,
        ])
    }

    fn uniform(&self, module: &GridModule, shape: GridShape<'_>) -> CudaResult<UniformDev<T>> {
        // cuFFT plans are made in the current context: this device's, where a process drives
        // several (a MultiPlan).
        self.bind()?;
        uniform_dev(&self.stream, &self.arch, self.fft, module, shape)
    }

    fn regrid(&self, u: &mut UniformDev<T>, module: &GridModule) -> CudaResult<()> {
        let dim = u.grid.spec.dim;
        u.grid = FineGrid::new(module, &u.grid.n[..dim])?;
        Ok(())
    }

    fn upload(&mut self, sets: &[&[&[T]]], m: usize) -> CudaResult<CudaPoints<T>> {
        self.bind()?;
        let dim = sets.first().map_or(0, |s| s.len());
        let owned = (0..dim)
            .map(|d| {
                let dst = alloc::<T>(&self.stream, m, "coordinates")?;
                let parts: Vec<&[T]> = sets.iter().map(|set| set[d]).collect();
                self.staging
                    .htod(&self.stream, &parts, ptr(&dst, &self.stream))?;
                Ok(dst)
            })
            .collect::<CudaResult<Vec<_>>>()?;
        Ok(self.points(owned))
    }

    fn upload_with(
        &mut self,
        len: usize,
        what: &str,
        fill: &Fill<'_, T>,
    ) -> CudaResult<CudaSlice<T>> {
        self.bind()?;
        let dst = alloc::<T>(&self.stream, len, what)?;
        self.staging
            .htod_with(&self.stream, len, ptr(&dst, &self.stream), fill)?;
        Ok(dst)
    }

    fn download_with(
        &mut self,
        b: &CudaSlice<T>,
        len: usize,
        take: &Take<'_, T>,
    ) -> CudaResult<()> {
        self.bind()?;
        let src = ptr(b, &self.stream);
        self.staging.dtoh_with(&self.stream, src, len, take)
    }

    fn points(&mut self, owned: Vec<CudaSlice<T>>) -> CudaPoints<T> {
        CudaPoints {
            at: self.stream.mem3(&owned),
            bad: 0,
            owned,
            held: Vec::new(),
        }
    }

    fn sort(&mut self, u: &mut UniformDev<T>, p: CudaPoints<T>, sets: &[u32]) -> CudaResult<()> {
        self.bind()?;
        let scratch = scratch(u, &self.stream);
        let r = u
            .grid
            .set_points(&self.stream, &self.common, p.at, sets, scratch, p.bad);
        // The kernels read the coordinates from these until the next points.
        (self.coords, self.held) = (p.owned, p.held);
        r
    }

    fn bounds(&mut self, sets: &Sets<'_, T>) -> CudaResult<Vec<(Boxes, Boxes)>> {
        let dim = sets.dim;
        let arrays: Vec<u64> = [sets.src, sets.tgt]
            .iter()
            .flat_map(|p| p.at[..dim].iter().copied())
            .collect();
        let (s, common) = (&self.stream, &self.common);
        set_bounds::<T, _>(s, &arrays, sets.starts, |spans| extents(s, common, spans))
    }

    fn type3(&self, mods: &Modules, shape: GridShape<'_>) -> CudaResult<Type3Dev<T>> {
        let s = &self.stream;
        let (kernel, n) = (shape.kernel, shape.modes);
        Ok(Type3 {
            kernel,
            spread: FineGrid::new(&mods.outer, n)?,
            inner: uniform_dev(s, &self.arch, self.fft, &mods.inner, shape)?,
            points: Type3Points::new(s)?,
            phased: alloc::<T>(s, 0, "phased inputs")?,
            agrid: alloc::<T>(s, 0, "type 3 spreading grids")?,
        })
    }

    fn prepare_type3(&mut self, t: &mut Type3Dev<T>, (quad, g, sets): Prep<T>) -> CudaResult<()> {
        let (s, batch) = (&self.stream, sets.batches[0]);
        let alen = t.spread.len().checked_mul(2 * batch);
        s.grow(
            &mut t.agrid,
            alen.ok_or(NudtError::GridOverflow)?,
            "type 3 spreading grids",
        )?;
        let quad = Quadrature {
            len: quad[0].len(),
            nodes: ptr(&quad[0], s),
            weights: ptr(&quad[1], s),
        };
        let kernels = (&self.common.t3_sources, &self.common.t3_targets);
        let (p, kernel) = (&mut t.points, &t.kernel);
        let pts = (sets.src.at, sets.tgt.at);
        p.prepare(s, kernels, g, kernel, &quad, pts, sets.starts, sets.isign)?;
        s.grow(&mut t.phased, p.phased_len(false, batch), "phased inputs")?;
        let (py, pu) = (s.mem3(&p.y), s.mem3(&p.u));
        let scratch = scratch(&t.inner, s);
        let [src, tgt] = sets.starts;
        t.spread.set_points(s, &self.common, py, src, scratch, 0)?;
        t.inner
            .grid
            .set_points(s, &self.common, pu, tgt, scratch, 0)
    }

    fn window(&self, dim: usize, tol: f64) -> CudaResult<GaussWindow> {
        gauss_window::<T>(&self.ctx, &self.arch, dim, tol)
    }

    fn gaussian(&mut self, job: Gauss<T>) -> CudaResult<GaussDev<T>> {
        let (s, sets) = (&self.stream, job.2);
        let pts = (sets.src.at, sets.tgt.at);
        let ffts = |n: &[usize]| FftPlans::new::<T>(s, n, &sets.batches);
        GaussGrids::prepare(s, &self.common.t3_sources, job, pts, ffts)
    }

    fn mark_setpts(&mut self, end: bool) -> CudaResult<()> {
        self.record(end as usize)
    }

    fn device_name(&self) -> String {
        self.arch.name.clone()
    }

    fn device(&self) -> &Arc<CudaStream> {
        &self.stream
    }

    fn slab_kernels(&self) -> CudaResult<SlabKernels<super::launch::Kernel>> {
        Ok(self.common.slabs.clone())
    }

    fn run_stages(
        &self,
        u: &mut UniformDev<T>,
        steps: &[Stage],
        [input, output]: [&CudaSlice<T>; 2],
        count: usize,
    ) -> CudaResult<()> {
        self.bind()?;
        let stream = &self.stream;
        let mut batch = Batch {
            stream,
            common: &self.common,
            fine: u,
            type3: None,
            input: ptr(input, stream),
            output: ptr(output, stream),
            first: 0,
            count,
        };
        stages::perform(&mut batch, steps)
    }
}
