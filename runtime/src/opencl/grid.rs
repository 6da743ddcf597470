//! The two halves of every OpenCL NUFFT: [`ClGrid`], points bin-sorted on a fine grid with
//! the GM-sort spreading and interpolation onto and from it, and [`ClModes`], where the
//! uniform modes sit on a fine grid (and their corrections 1/ψ̂) with the FFT between them.
//! Types 1 and 2 use one of each; type 3 spreads on one grid and runs a type 2 (one of each
//! more) on the next.

use super::device::ClDevice;
use super::error::{cl, OpenClResult};
use super::fft::{ClFft, ClFloat};
use super::launch::{
    alloc, kernel_of, launch, mem, opt_mem, read, upload, zero, Arg, ELEMENT_GROUP,
};
use crate::error::NudtError;
use crate::uniform::ModeOrder;
use nudt_gen::cuda::{names, CudaSpreadSpec, GM_THREADS};
use nudt_gen::fft::FftDirection;
use nudt_gen::KernelSpec;
use opencl3::kernel::Kernel;
use opencl3::memory::Buffer;
use opencl3::program::Program;
use std::marker::PhantomData;

/// Points sorted into bins: one record per point (its index and coordinates, the generated
/// `Pt` struct of [`CudaSpreadSpec::point_bytes`] bytes), in bin order.
struct Sorted {
    m: usize,
    pts: Buffer<u8>,
}

/// A fine grid of `n` points per dimension (1 for unused ones) and the points sorted into its
/// bins.
pub(crate) struct ClGrid<T> {
    pub n: [usize; 3],
    nb: [usize; 3],
    point_bytes: usize,
    bin_count: Kernel,
    bin_scatter: Kernel,
    spread_gm: Kernel,
    interp_gm: Kernel,
    sorted: Option<Sorted>,
    _t: PhantomData<T>,
}

impl<T: ClFloat> ClGrid<T> {
    /// A grid of `n` with the kernels of `program`, the spread module of `spec`.
    pub fn new(program: &Program, spec: &CudaSpreadSpec, n: [usize; 3]) -> OpenClResult<Self> {
        let len = n
            .iter()
            .try_fold(1usize, |a, &b| a.checked_mul(b))
            .filter(|l| l.checked_mul(2 * std::mem::size_of::<T>()).is_some());
        if len.is_none() || n.iter().any(|&v| v > i32::MAX as usize / 2) {
            return Err(NudtError::GridOverflow.into());
        }
        Ok(ClGrid {
            n,
            nb: std::array::from_fn(|d| n[d].div_ceil(spec.bins[d])),
            point_bytes: spec.point_bytes(),
            bin_count: kernel_of(program, names::BIN_COUNT)?,
            bin_scatter: kernel_of(program, names::BIN_SCATTER)?,
            spread_gm: kernel_of(program, names::SPREAD_GM)?,
            interp_gm: kernel_of(program, names::INTERP_GM)?,
            sorted: None,
            _t: PhantomData,
        })
    }

    /// Grid points (complex values) of one transform.
    pub fn len(&self) -> usize {
        self.n.iter().product()
    }

    /// Points set and sorted.
    pub fn points(&self) -> Option<usize> {
        self.sorted.as_ref().map(|s| s.m)
    }

    /// Sorts the `m` points whose coordinates (radians, any finite value) lie in `x`, one
    /// device array per dimension: each point's bin and rank by atomics, the bins' starts by a
    /// prefix sum on the host, then a scatter of the point records into bin order.
    pub fn set_points(&mut self, dev: &ClDevice, x: &[Buffer<T>], m: usize) -> OpenClResult<()> {
        self.sorted = None;
        let nbins = self.nb.iter().product::<usize>();
        let rank = alloc::<u32>(dev, m)?;
        let mut counts = alloc::<u32>(dev, nbins)?;
        zero(dev, &mut counts, nbins)?;
        let (n, nb) = (self.n, self.nb);
        let i = |v: usize| Arg::I32(v as i32);
        let xs = |d: usize| opt_mem(x.get(d));
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
            ]
        };
        let sorted = Sorted {
            m,
            pts: alloc::<u8>(dev, m * self.point_bytes)?,
        };
        if m > 0 {
            let mut args = Vec::from(geometry());
            args.extend([mem(&rank), mem(&counts)]);
            launch(dev, &self.bin_count, m, ELEMENT_GROUP, 1, &args)?;
            // The prefix sum of the bin counts, on the host (OpenCL C 1.2 has no warp shuffles
            // for the CUDA template's scan).
            let mut c = vec![0u32; nbins];
            read(dev, &counts, &mut c)?;
            let mut starts = Vec::with_capacity(nbins + 1);
            let mut acc = 0u32;
            for v in c {
                starts.push(acc);
                acc += v;
            }
            starts.push(acc);
            let starts = upload(dev, &starts)?;
            let mut args = Vec::from(geometry());
            args.extend([mem(&rank), mem(&starts), mem(&sorted.pts)]);
            launch(dev, &self.bin_scatter, m, ELEMENT_GROUP, 1, &args)?;
        }
        dev.queue.finish().map_err(cl("clFinish"))?;
        self.sorted = Some(sorted);
        Ok(())
    }

    /// The arguments spread_gm (strengths, grid) and interp_gm (grid, values) share.
    fn points_args(&self, from: &Buffer<T>, to: &Buffer<T>) -> Vec<Arg> {
        let s = self.sorted.as_ref().expect("points set before spreading");
        let i = |v: usize| Arg::I32(v as i32);
        vec![
            Arg::U32(s.m as u32),
            mem(&s.pts),
            mem(from),
            mem(to),
            i(self.n[0]),
            i(self.n[1]),
            i(self.n[2]),
            Arg::I32(1),
            Arg::U64(s.m as u64),
            Arg::U64(self.len() as u64),
        ]
    }

    /// Adds the spread of one transform's strengths `c` (M complex) into `grid` (zeroed).
    pub fn spread(&self, dev: &ClDevice, c: &Buffer<T>, grid: &Buffer<T>) -> OpenClResult<()> {
        let m = self.points().unwrap_or(0);
        let gm = GM_THREADS as usize;
        launch(dev, &self.spread_gm, m, gm, 1, &self.points_args(c, grid))
    }

    /// Interpolates `grid` at the points into `out` (M complex, in the caller's order).
    pub fn interp(&self, dev: &ClDevice, grid: &Buffer<T>, out: &Buffer<T>) -> OpenClResult<()> {
        let m = self.points().unwrap_or(0);
        let gm = GM_THREADS as usize;
        launch(dev, &self.interp_gm, m, gm, 1, &self.points_args(grid, out))
    }
}

/// Uniform modes on a fine grid: each mode's grid index and correction 1/ψ̂(k) per dimension,
/// the FFT of the grid, and the kernels that map between modes and grid.
pub(crate) struct ClModes<T: ClFloat> {
    modes: [usize; 3],
    n: [usize; 3],
    gi: Vec<Buffer<i32>>,
    cf: Vec<Buffer<T>>,
    fft: ClFft<T>,
    to_modes: Kernel,
    to_grid: Kernel,
}

impl<T: ClFloat> ClModes<T> {
    /// `modes[d]` modes in `order` on a fine grid of `n[d]` (both 1 beyond `dim`); `common`
    /// is the common module.
    pub fn new(
        dev: &std::sync::Arc<ClDevice>,
        common: &Program,
        dim: usize,
        modes: [usize; 3],
        n: [usize; 3],
        kernel: &KernelSpec,
        order: ModeOrder,
    ) -> OpenClResult<Self> {
        let ft = kernel.fourier();
        let (mut gi, mut cf) = (Vec::new(), Vec::new());
        for d in 0..3 {
            let (g, c): (Vec<i32>, Vec<T>) = if d < dim {
                let step = 2.0 * std::f64::consts::PI / n[d] as f64;
                (0..modes[d])
                    .map(|i| {
                        let k = order.mode(i, modes[d]);
                        (
                            k.rem_euclid(n[d] as i64) as i32,
                            T::of(1.0 / ft.at(step * k as f64)),
                        )
                    })
                    .unzip()
            } else {
                (vec![0], vec![T::one()])
            };
            gi.push(upload(dev, &g)?);
            cf.push(upload(dev, &c)?);
        }
        Ok(ClModes {
            modes,
            n,
            gi,
            cf,
            fft: ClFft::<T>::new(dev, &n[..dim], 1)?,
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

    /// The FFT of `grid` in place, with the sign of `isign`.
    pub fn fft(&mut self, grid: &Buffer<T>, isign: i32) -> OpenClResult<()> {
        let dir = if isign < 0 {
            FftDirection::Forward
        } else {
            FftDirection::Inverse
        };
        self.fft.execute(grid, grid, dir)
    }

    /// Corrected modes from the transformed `grid` into `modes`.
    pub fn grid_to_modes(
        &self,
        dev: &ClDevice,
        grid: &Buffer<T>,
        modes: &Buffer<T>,
    ) -> OpenClResult<()> {
        let args = self.args(grid, modes);
        launch(dev, &self.to_modes, self.count(), ELEMENT_GROUP, 1, &args)
    }

    /// Corrected `modes` onto the zeroed `grid`.
    pub fn modes_to_grid(
        &self,
        dev: &ClDevice,
        modes: &Buffer<T>,
        grid: &Buffer<T>,
    ) -> OpenClResult<()> {
        let args = self.args(modes, grid);
        launch(dev, &self.to_grid, self.count(), ELEMENT_GROUP, 1, &args)
    }
}
