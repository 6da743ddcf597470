//! [`MultiPlan`]: a stack of type 1 or 2 transforms over several devices of one GPU backend.
//! A stack at least as long as the devices runs as one-device plans on shares of it
//! ([`super::shares`], the plan layer's rule: [`devices::spread`]); otherwise each transform,
//! in 2-D or 3-D, is split over every device, one after another. The fine grid is cut into
//! slabs along its slowest axis, one per device, and every rule of the cut — slabs, which device a point
//! goes to and where it lies on that device's local grid, halos, the transpose's blocks — is
//! the plan layer's ([`Decomposition`]); the data moves between devices by the
//! [`Exchanges`] over a [`Link`] (through the host, [`super::comm::HostLink`], or NCCL).
//!
//! Each device holds three type 1/2 engines of its backend, made as a one-device plan makes
//! its grid: the local grid (its slab with halo and margins, a `dim`-D grid its points are
//! sorted onto, so that the generated spreading and interpolation kernels run unchanged),
//! the fast axes' engine (FFTs and corrections of the `dim − 1` fast axes, batched over the
//! slab's planes) and the slow axis' (1-D FFTs and corrections, batched over the device's
//! columns of modes). A type 1 spreads on every local grid, sums the halos into the slabs,
//! transforms the planes and keeps their modes, transposes, and transforms the columns: the
//! one-device plan's stages ([`stages::split_sequence`]) run on these engines, with the
//! same kernel and fine grid, so the result is the one-device plan's to rounding. Type 2
//! runs the same steps backwards, and each adjoint the other type's.
#![allow(private_bounds, private_interfaces)]

use super::comm::{Exchanges, Link};
use super::device::Device;
use super::plan::GpuPlan;
use super::plan::{Backend, GridShape, ModuleChoice, ModuleKey, UniformOf};
use super::routing::{self, Routed};
use super::shares::{HostRun, Shares};
use crate::error::NudtError;
use crate::float::{interleaved, interleaved_mut, Float};
use crate::planner::devices::{self, Decomposition, Routes, Spread};
use crate::planner::limits::MAX_POINTS;
use crate::planner::stages::{self, Pass, Stage};
use crate::planner::validate::{
    check_coords_within, check_finite, check_type, point_count, SOURCES,
};
use crate::planner::{sets, sigma, Choices, DeviceClass, Problem, Recipe, Type3Method};
use crate::uniform::ModeOrder;
use nudt_gen::{KernelKind, KernelSpec, TransformType, Upsampling};
use num_complex::Complex;
use std::ops::Range;
use std::time::Instant;

/// One device of a multi-device plan: its engines, its share of the caller's points and
/// their slots in the share packed by device ([`routing`]; the points it holds are the
/// plan's [`Routes`]), and its device state, dropped last.
struct Rank<B: Backend<T>, T: Float> {
    local: UniformOf<B, T>,
    fast: UniformOf<B, T>,
    slow: UniformOf<B, T>,
    share: Range<usize>,
    slot: Option<B::Buf>,
    dev: B,
}

/// A type 1 or 2 plan over several devices of the backend `B`, their data moved over the
/// link `L`.
pub struct MultiPlan<B: Backend<T>, L, T: Float> {
    problem: Problem,
    kernel: KernelSpec,
    fine_grid: Vec<usize>,
    order: ModeOrder,
    /// The points set, once set.
    points: Option<usize>,
    work: Work<B, L, T>,
}

/// How the plan runs its stack ([`Spread`]): each transform in slabs, or whole transforms.
enum Work<B: Backend<T>, L, T: Float> {
    Slabs(Box<Slabs<B, L, T>>),
    Batches(Shares<B, T>),
}

/// Each transform cut in slabs over every device: the devices, the cut, the exchanges, and
/// where the last run spent its time.
struct Slabs<B: Backend<T>, L, T: Float> {
    split: Decomposition,
    /// Where the last set-points spent its time.
    setpts: SetPointsTimes,
    /// Where the points went from each device's share.
    routes: Routes,
    ranks: Vec<Rank<B, T>>,
    comm: Exchanges<DevKernel<B, T>, L>,
    times: StepTimes,
}

/// Where a multi-device plan's last run spent its time, in seconds, each step waited for on
/// every device: the stage at the points (spreading or interpolation on the local grids),
/// the halos' exchange, the fast axes' FFTs and corrections on the slabs' planes, the
/// transpose, and the slow axis' FFTs and corrections with the modes gathered to the host
/// (type 2: scattered from it).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct StepTimes {
    pub points: f64,
    pub halos: f64,
    pub planes: f64,
    pub transpose: f64,
    pub columns: f64,
}

/// Where a multi-device plan's last set-points spent its time, in seconds, each step waited
/// for on every device: the shares of the caller's host arrays copied to their devices (none
/// for arrays on the devices), each share routed and packed by device (its counts read
/// back), the points' exchange, and each device's unpacking and sort of what it received.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct SetPointsTimes {
    pub share: f64,
    pub route: f64,
    pub exchange: f64,
    pub sort: f64,
}

/// A backend's loaded kernel.
type DevKernel<B, T> = <<B as Backend<T>>::Dev as Device<T>>::Kernel;

/// The seconds since `clock` once every device's queued work has run; `clock` restarted.
fn lap<B: Backend<T>, T: Float>(
    ranks: &[Rank<B, T>],
    clock: &mut Instant,
) -> Result<f64, B::Error> {
    for r in ranks {
        r.dev.device().sync()?;
    }
    let t = clock.elapsed().as_secs_f64();
    *clock = Instant::now();
    Ok(t)
}

/// Whether `s` is a stage at the points (skipped on a device that holds none).
fn at_points(s: &Stage) -> bool {
    matches!(s, Stage::Spread { .. } | Stage::Interp { .. })
}

/// Runs `job` on every item at once, a host thread each, and gives back the results in order
/// or the first error. The items are the devices' (a rank and what it takes): a transfer
/// waits for its device, so one thread would move one device's data at a time.
fn on_ranks<I: Send, R: Send, E: Send>(
    items: impl IntoIterator<Item = I>,
    job: impl Fn(I) -> Result<R, E> + Sync,
) -> Result<Vec<R>, E> {
    let job = &job;
    std::thread::scope(|s| {
        let running: Vec<_> = items.into_iter().map(|i| s.spawn(move || job(i))).collect();
        running
            .into_iter()
            .map(|t| t.join().unwrap_or_else(|p| std::panic::resume_unwind(p)))
            .collect()
    })
}

/// Visits the values `first .. first + len` of a device's columns of `n0` modes (column `q`'s
/// mode `k` at `k + n0·q`) row by row: `each(i, k, q)` for the value at `first + i`, every
/// column of the piece at mode 0, then at mode 1, and so on. The host's side of the modes
/// is row-major (`k·columns + q`), so its reads or writes then run along its rows rather
/// than a row apart each.
fn by_rows((first, len): (usize, usize), n0: usize, mut each: impl FnMut(usize, usize, usize)) {
    let end = first + len;
    let columns = first / n0..end.div_ceil(n0);
    for k in 0..n0 {
        for q in columns.clone() {
            let at = q * n0 + k;
            if (first..end).contains(&at) {
                each(at - first, k, q);
            }
        }
    }
}

/// A host array the devices' threads write at once, each element from one thread: their
/// downloads land at places no two share (a share's run of the values, the columns' modes).
struct Scatter<'a, T> {
    at: *mut T,
    len: usize,
    _of: std::marker::PhantomData<&'a mut [T]>,
}

// SAFETY: a `Scatter` is a `&mut [T]` whose writes are spread over threads; `set`'s callers
// keep them apart.
unsafe impl<T: Send> Send for Scatter<'_, T> {}
unsafe impl<T: Send> Sync for Scatter<'_, T> {}

impl<'a, T> Scatter<'a, T> {
    fn new(v: &'a mut [T]) -> Self {
        Scatter {
            at: v.as_mut_ptr(),
            len: v.len(),
            _of: std::marker::PhantomData,
        }
    }

    /// Writes `v` at `i` (checked against the length).
    ///
    /// # Safety
    /// No other thread writes or reads element `i` while the `Scatter` lives.
    unsafe fn set(&self, i: usize, v: T) {
        assert!(i < self.len, "scatter at {i} of {}", self.len);
        // SAFETY: `i` is in bounds, and the caller is the only one at element `i`.
        unsafe { self.at.add(i).write(v) }
    }
}

/// Why arrays on the `devices` devices do not go to this plan.
fn on_devices_refused(devices: usize, why: &str) -> NudtError {
    NudtError::Devices {
        devices,
        why: format!("arrays on the devices: the plan {why}"),
    }
}

/// Checks that the arrays `bufs` given for device `r` of `devices` (`what`) live there.
fn check_on<T, D: Device<T>>(
    dev: &D,
    bufs: &[&D::Buf],
    (r, devices): (usize, usize),
    what: &str,
) -> Result<(), NudtError> {
    match bufs.iter().all(|b| dev.owns(b)) {
        true => Ok(()),
        false => Err(on_devices_refused(
            devices,
            &format!("takes {what} for its device {r} on that device"),
        )),
    }
}

/// The problem of a multi-device plan: a type 1 or 2 of `modes` with `ntransf` transforms
/// sharing the points, in `T`, with a backend's options' kernel and upsampling.
pub(crate) fn problem<T: Float>(
    ty: TransformType,
    modes: &[usize],
    (isign, ntransf, tol): (i32, usize, f64),
    (kernel, upsampling): (KernelKind, Option<Upsampling>),
) -> crate::Result<Problem> {
    let choices = Choices::new(
        T::PRECISION,
        kernel,
        upsampling,
        Type3Method::Finufft,
        false,
    );
    Problem::uniform(ty, modes, isign, ntransf, tol, choices)
}

impl<B: Backend<T>, L: Link<B::Dev, T>, T: Float> MultiPlan<B, L, T>
where
    GpuPlan<B, T>: HostRun<T, Error = B::Error> + Send,
    Rank<B, T>: Send,
    B::Buf: Send,
    B::Error: Send,
{
    /// The plan of `problem` (type 1 or 2) over the devices `devs` opened, with the kernel
    /// and fine grid a one-device GPU plan of the problem takes: whole transforms on each
    /// device or each transform in slabs (2-D and 3-D), as the plan layer's rule says
    /// ([`devices::spread`]). `link` makes the link between the devices, where they
    /// exchange data (slabs).
    pub(crate) fn assemble(
        problem: Problem,
        devs: Vec<B>,
        order: ModeOrder,
        link: impl FnOnce(&[&B::Dev]) -> Result<L, B::Error>,
    ) -> Result<Self, B::Error> {
        let kernel = sigma::initial_kernel(&problem)?;
        let n = sigma::uniform_grid::<T>(&problem, &kernel, None)?;
        let grid_bytes = n.iter().product::<usize>() * 2 * std::mem::size_of::<T>();
        let memory = devs.iter().map(|d| d.device().memory()).min();
        let spread = devices::spread(
            (problem.ntransf, devs.len()),
            grid_bytes,
            memory.unwrap_or(0),
        );
        let work = match spread {
            Spread::Batches(shares) => {
                Work::Batches(Shares::assemble(&problem, devs, order, shares)?)
            }
            Spread::Slabs => Work::Slabs(Box::new(Slabs::assemble(
                &problem,
                (kernel, &n),
                devs,
                order,
                link,
            )?)),
        };
        Ok(MultiPlan {
            problem,
            kernel,
            fine_grid: n,
            order,
            points: None,
            work,
        })
    }

    /// The set-points of host arrays ([`multi_entry_points!`]).
    pub(crate) fn set_points_host(&mut self, coords: &[&[T]]) -> Result<(), B::Error> {
        check_type(1, self.problem.ty)?;
        // Slabs share the points out, and each device holds at most `MAX_POINTS` of them
        // (checked once they are routed); whole transforms give every device all.
        let max = match self.work {
            Work::Slabs(_) => usize::MAX,
            Work::Batches(_) => MAX_POINTS,
        };
        let m = check_coords_within(self.problem.dim(), coords, SOURCES, max)?;
        self.points = None;
        match &mut self.work {
            Work::Slabs(slabs) => slabs.set_points(coords)?,
            Work::Batches(shares) => shares.set_points(coords)?,
        }
        self.points = Some(m);
        Ok(())
    }

    /// The set-points of arrays already on the devices ([`multi_entry_points!`]): a plan of
    /// slabs, `shares[r]` one array per dimension on its device `r`.
    pub(crate) fn set_points_devices(&mut self, shares: &[&[&B::Buf]]) -> Result<(), B::Error> {
        check_type(1, self.problem.ty)?;
        let (dim, p) = (self.problem.dim(), self.device_names().len());
        let Work::Slabs(slabs) = &mut self.work else {
            return Err(on_devices_refused(p, "runs whole transforms on each device").into());
        };
        if shares.len() != p {
            let why = format!("takes a share of points a device, got {}", shares.len());
            return Err(on_devices_refused(p, &why).into());
        }
        let mut lens = Vec::new();
        for (r, (share, rank)) in shares.iter().zip(&slabs.ranks).enumerate() {
            let dev = rank.dev.device();
            check_on(dev, share, (r, p), "coordinates")?;
            let got: Vec<usize> = share.iter().map(|b| dev.holds(b)).collect();
            lens.push(point_count(dim, &got, SOURCES)?);
        }
        self.points = None;
        let arrays: Vec<Vec<&B::Buf>> = shares.iter().map(|s| s.to_vec()).collect();
        slabs.set_points_on_devices(&arrays, &lens)?;
        self.points = Some(lens.iter().sum());
        Ok(())
    }

    /// One checked run of `pass` on arrays on the devices, one each ([`multi_entry_points!`]):
    /// a plan of slabs, one transform.
    pub(crate) fn run_devices(
        &mut self,
        input: &[&B::Buf],
        output: &[&B::Buf],
        pass: Pass,
    ) -> Result<(), B::Error> {
        self.points.ok_or(NudtError::PointsNotSet)?;
        let (ty, isign, p) = (
            self.problem.ty,
            self.problem.isign,
            self.device_names().len(),
        );
        if self.problem.ntransf != 1 {
            return Err(on_devices_refused(p, "runs one transform a call there").into());
        }
        let Work::Slabs(slabs) = &mut self.work else {
            return Err(on_devices_refused(p, "runs whole transforms on each device").into());
        };
        let spreads = stages::split_sequence(ty, isign, pass).2;
        let s = &slabs.split;
        for (r, rank) in slabs.ranks.iter().enumerate() {
            let points = 2 * rank.share.len();
            let modes = 2 * s.column_range(r).len() * s.modes[0];
            let (need_in, need_out) = match spreads {
                true => (points, modes),
                false => (modes, points),
            };
            let dev = rank.dev.device();
            for (bufs, need, what) in [(input, need_in, "input"), (output, need_out, "output")] {
                let b = bufs.get(r).ok_or_else(|| {
                    let why = format!("takes an {what} array a device, got {}", bufs.len());
                    on_devices_refused(p, &why)
                })?;
                check_on(dev, &[b], (r, p), what)?;
                if dev.holds(b) < need.max(1) {
                    return Err(NudtError::Length {
                        what: format!("{what} on device {r} (interleaved complex)"),
                        expected: need,
                        got: dev.holds(b),
                    }
                    .into());
                }
            }
        }
        slabs.run_on_devices((input, output), (ty, isign), pass)
    }

    /// One checked run of `pass` ([`multi_entry_points!`]).
    pub(crate) fn run(
        &mut self,
        input: &[Complex<T>],
        output: &mut [Complex<T>],
        pass: Pass,
    ) -> Result<(), B::Error> {
        let m = self.points.ok_or(NudtError::PointsNotSet)?;
        let counts = self.problem.shared_counts(m, 0);
        let each = self
            .problem
            .check_io(&counts, [input.len(), output.len()], pass)?;
        match &mut self.work {
            Work::Slabs(slabs) => slabs.run(
                (input, output),
                &each,
                (self.problem.ty, self.problem.isign),
                pass,
            ),
            Work::Batches(shares) => shares.run((input, output), &each, pass),
        }
    }
}

impl<B: Backend<T>, L: Link<B::Dev, T>, T: Float> Slabs<B, L, T>
where
    Rank<B, T>: Send,
    B::Buf: Send,
    B::Error: Send,
{
    /// Each transform of `problem` cut in slabs over `devs`, with the one-device plan's
    /// kernel and fine grid `n`: each device's three engines, and the exchanges between
    /// them over the link `link` makes.
    fn assemble(
        problem: &Problem,
        (kernel, n): (KernelSpec, &[usize]),
        devs: Vec<B>,
        order: ModeOrder,
        link: impl FnOnce(&[&B::Dev]) -> Result<L, B::Error>,
    ) -> Result<Self, B::Error> {
        let split = Decomposition::new(n, &problem.modes, kernel.width, devs.len())?;
        routing::check_devices(&split)?;
        let role = stages::uniform_role(problem.ty);
        let ranks = devs
            .into_iter()
            .enumerate()
            .map(|(r, dev)| {
                let module = |dim| {
                    let choice = ModuleChoice::default();
                    dev.module(ModuleKey {
                        dim,
                        kernel,
                        role,
                        choice,
                    })
                };
                let engine = |dim, modes: &[usize], n: &[usize], batch: usize| {
                    let shape = GridShape {
                        modes,
                        n,
                        kernel,
                        order,
                        batches: [batch.max(1), 0],
                    };
                    dev.uniform(&module(dim)?, shape)
                };
                let (d, modes) = (n.len(), &problem.modes);
                let mut local_modes = modes.clone();
                local_modes[0] = 1;
                let local = engine(d, &local_modes, &split.local_sides(r), 1)?;
                let fast = engine(d - 1, &modes[1..], &n[1..], split.slab(r).len())?;
                let slow = engine(1, &modes[..1], &n[..1], split.column_range(r).len())?;
                Ok(Rank {
                    local,
                    fast,
                    slow,
                    share: 0..0,
                    slot: None,
                    dev,
                })
            })
            .collect::<Result<Vec<_>, B::Error>>()?;
        let kernels = ranks.iter().map(|r| r.dev.slab_kernels());
        let kernels = kernels.collect::<Result<_, B::Error>>()?;
        let devices: Vec<&B::Dev> = ranks.iter().map(|r| r.dev.device()).collect();
        let comm = Exchanges::new(link(&devices)?, kernels);
        Ok(Slabs {
            split,
            setpts: SetPointsTimes::default(),
            routes: Routes::default(),
            ranks,
            comm,
            times: StepTimes::default(),
        })
    }

    /// Each point to the device whose slab its footprint starts in, at its place on that
    /// device's local grid, and each device's points sorted there. Each device takes its
    /// share of the caller's arrays as they are (all at once, a host thread each), then
    /// routes it as [`Self::set_points_on_devices`] does.
    fn set_points(&mut self, coords: &[&[T]]) -> Result<(), B::Error> {
        let mut clock = Instant::now();
        let shares = devices::shares(coords[0].len(), self.ranks.len());
        let uploaded = on_ranks(self.ranks.iter_mut().zip(&shares), |(rank, share)| {
            let n = share.len();
            let arrays = coords.iter().map(|x| {
                let part = &x[share.clone()];
                // One value where there are none: drivers refuse empty arrays.
                rank.dev.upload_with(n.max(1), "coordinates", &|at, to| {
                    let take = to.len().min(n.saturating_sub(at));
                    to[..take].copy_from_slice(&part[at..at + take]);
                })
            });
            arrays.collect::<Result<Vec<_>, B::Error>>()
        })?;
        let arrays: Vec<Vec<&B::Buf>> = uploaded.iter().map(|a| a.iter().collect()).collect();
        let share = lap(&self.ranks, &mut clock)?;
        self.route(&arrays, shares)?;
        self.setpts.share = share;
        Ok(())
    }

    /// The points of arrays already on the devices: `shares[r]`, one array per dimension
    /// on device `r`, holds `lens[r]` points (the caller's share of the set, in any split).
    fn set_points_on_devices(
        &mut self,
        shares: &[Vec<&B::Buf>],
        lens: &[usize],
    ) -> Result<(), B::Error> {
        let mut first = 0;
        let ranges = lens.iter().map(|&n| {
            first += n;
            first - n..first
        });
        self.route(shares, ranges.collect())
    }

    /// Every device routes its share (`arrays[r]`, the points `shares[r]` of the set) and
    /// packs it by device ([`routing`]); one exchange gives every device its points, which
    /// it sorts on its local grid.
    fn route(
        &mut self,
        arrays: &[Vec<&B::Buf>],
        shares: Vec<Range<usize>>,
    ) -> Result<(), B::Error> {
        let (p, dim) = (self.ranks.len(), arrays[0].len());
        let mut clock = Instant::now();
        self.setpts = SetPointsTimes::default();
        // A point's slot on its device is a 32-bit word.
        if let Some(most) = shares.iter().map(|s| s.len()).find(|&n| n > MAX_POINTS) {
            return Err(NudtError::TooManyPoints(most).into());
        }
        let routed = (self.ranks.iter().zip(arrays).zip(&shares).enumerate())
            .map(|(r, ((rank, arrays), share))| {
                let (dev, k) = (rank.dev.device(), self.comm.kernels(r));
                k.route(dev, &self.split, arrays, share.len())
            })
            .collect::<Result<Vec<_>, B::Error>>()?;
        let (records, routed): (Vec<_>, Vec<Routed<B::Buf>>) = routed.into_iter().unzip();
        let mut sent = Vec::new();
        for (((rank, routed), arrays), share) in
            self.ranks.iter().zip(&routed).zip(arrays).zip(&shares)
        {
            let dev = rank.dev.device();
            let (counts, non_finite) = routed.sent(dev)?;
            if non_finite {
                // The slow path: the share read back to name its first such coordinate.
                for (&a, name) in arrays.iter().zip(SOURCES) {
                    if let Err(NudtError::NonFinite { what, index, value }) =
                        check_finite(name, &dev.read(dev.mem(Some(a)), share.len())?)
                    {
                        let index = index + share.start;
                        return Err(NudtError::NonFinite { what, index, value }.into());
                    }
                }
            }
            sent.push(counts);
        }
        let routes = Routes::new(sent);
        self.setpts.route = lap(&self.ranks, &mut clock)?;
        if let Some(most) = (0..p).map(|r| routes.received(r)).find(|&n| n > MAX_POINTS) {
            return Err(NudtError::TooManyPoints(most).into());
        }
        let per_point = Routes::record(dim) / 2;
        let lens = (0..p).map(|r| per_point * routes.received(r)).collect();
        let devs: Vec<&B::Dev> = self.ranks.iter().map(|r| r.dev.device()).collect();
        let records: Vec<&B::Buf> = records.iter().collect();
        let got = self
            .comm
            .all_to_all(&devs, &records, lens, &routes.transfers(per_point))?;
        self.setpts.exchange = lap(&self.ranks, &mut clock)?;
        let points = (self.ranks.iter().zip(&got).enumerate())
            .map(|(r, (rank, got))| {
                let held = routes.received(r);
                (self.comm.kernels(r)).unpack(rank.dev.device(), got, held, dim)
            })
            .collect::<Result<Vec<_>, B::Error>>()?;
        drop(got);
        let each = self.ranks.iter_mut().zip(points).zip(routed);
        on_ranks(
            each.enumerate().zip(shares),
            |((r, ((rank, arrays), routed)), share)| {
                let held = routes.received(r);
                let points = rank.dev.points(arrays);
                rank.dev
                    .sort(&mut rank.local, points, &sets::shared(held))?;
                (rank.slot, rank.share) = (Some(routed.slot), share);
                Ok::<(), B::Error>(())
            },
        )?;
        self.setpts.sort = lap(&self.ranks, &mut clock)?;
        self.routes = routes;
        Ok(())
    }

    /// One run of `pass` of a type `ty` transform of sign `isign` over the stack, transform by
    /// transform, each taking and giving `each` values.
    fn run(
        &mut self,
        (input, output): (&[Complex<T>], &mut [Complex<T>]),
        each: &[(usize, usize)],
        (ty, isign): (TransformType, i32),
        pass: Pass,
    ) -> Result<(), B::Error> {
        let (points, grid, spreads) = stages::split_sequence(ty, isign, pass);
        self.times = StepTimes::default();
        let mut at = (0, 0);
        for &(a, b) in each {
            let (x, y) = (&input[at.0..][..a], &mut output[at.1..][..b]);
            match spreads {
                true => self.spread_pass(Input::Host(x), Output::Host(y), &points, &grid)?,
                false => self.interp_pass(Input::Host(x), Output::Host(y), &points, &grid)?,
            }
            at = (at.0 + a, at.1 + b);
        }
        Ok(())
    }

    /// One run of `pass` of a type `ty` transform of sign `isign` on arrays on the devices,
    /// one each ([`DeviceIo`]).
    fn run_on_devices(
        &mut self,
        (input, output): (&[&B::Buf], &[&B::Buf]),
        (ty, isign): (TransformType, i32),
        pass: Pass,
    ) -> Result<(), B::Error> {
        let (points, grid, spreads) = stages::split_sequence(ty, isign, pass);
        self.times = StepTimes::default();
        let (x, y) = (Input::Devices(input), Output::Devices(output));
        match spreads {
            true => self.spread_pass(x, y, &points, &grid),
            false => self.interp_pass(x, y, &points, &grid),
        }
    }

    /// Device `r`'s share of complex values moved by its slots ([`routing`]) from `from`
    /// into `to`: packed by device, or (`back`) from packed to the share's order.
    fn permute(
        &self,
        r: usize,
        (from, to): (&B::Buf, &B::Buf),
        back: bool,
    ) -> Result<(), B::Error> {
        let rank = &self.ranks[r];
        let slot = rank.slot.as_ref().ok_or(NudtError::PointsNotSet)?;
        let (dev, n) = (rank.dev.device(), rank.share.len());
        self.comm.kernels(r).permute(dev, slot, (from, to), n, back)
    }

    /// [`Self::permute`] into a new array.
    fn permuted(&self, r: usize, from: &B::Buf, back: bool) -> Result<B::Buf, B::Error> {
        let (dev, n) = (self.ranks[r].dev.device(), self.ranks[r].share.len());
        let to = dev.alloc(2 * n.max(1), "values by slot")?;
        self.permute(r, (from, &to), back)?;
        Ok(to)
    }

    /// One complex value a point over the routes: from the shares, packed by device, to
    /// the devices that hold the points, or (`back`) the other way.
    fn exchange(&self, from: &[B::Buf], back: bool) -> Result<Vec<B::Buf>, B::Error> {
        let devs: Vec<&B::Dev> = self.ranks.iter().map(|r| r.dev.device()).collect();
        let from: Vec<&B::Buf> = from.iter().collect();
        let forth = self.routes.transfers(1);
        let (transfers, lens): (Vec<_>, Vec<_>) = match back {
            false => (
                forth,
                (0..self.ranks.len())
                    .map(|r| self.routes.received(r))
                    .collect(),
            ),
            true => (
                forth.iter().map(|t| t.reversed()).collect(),
                self.ranks.iter().map(|r| r.share.len()).collect(),
            ),
        };
        self.comm.all_to_all(&devs, &from, lens, &transfers)
    }

    /// The devices and one engine's work arrays (`pick`), in device order.
    fn works(
        &self,
        pick: impl Fn(&Rank<B, T>) -> &UniformOf<B, T>,
    ) -> (Vec<&B::Dev>, Vec<&B::Buf>) {
        self.ranks
            .iter()
            .map(|r| (r.dev.device(), &pick(r).work))
            .unzip()
    }

    /// One type 1 (or type 2's adjoint): strengths `c` at the points to modes `f`.
    fn spread_pass(
        &mut self,
        c: Input<'_, T, B::Buf>,
        f: Output<'_, T, B::Buf>,
        points: &[Stage],
        grid: &[Stage],
    ) -> Result<(), B::Error> {
        let mut clock = Instant::now();
        // Each device's share of the strengths (from the host as it is), packed by device.
        let uploaded = match c {
            Input::Host(c) => {
                let c = interleaved(c);
                on_ranks(self.ranks.iter_mut(), |rank| {
                    let part = &c[2 * rank.share.start..2 * rank.share.end];
                    let n = part.len();
                    rank.dev.upload_with(n.max(2), "strengths", &|at, to| {
                        let take = to.len().min(n.saturating_sub(at));
                        to[..take].copy_from_slice(&part[at..at + take]);
                    })
                })?
            }
            Input::Devices(_) => Vec::new(),
        };
        let shares: Vec<&B::Buf> = match c {
            Input::Host(_) => uploaded.iter().collect(),
            Input::Devices(c) => c.to_vec(),
        };
        let packed = (0..self.ranks.len())
            .map(|r| self.permuted(r, shares[r], false))
            .collect::<Result<Vec<_>, B::Error>>()?;
        drop(uploaded);
        let strengths = self.exchange(&packed, false)?;
        let routes = &self.routes;
        let each = self.ranks.iter_mut().zip(strengths).enumerate();
        on_ranks(each, |(r, (rank, buf))| {
            let steps: Vec<Stage> = match routes.received(r) {
                0 => points.iter().copied().filter(|s| !at_points(s)).collect(),
                _ => points.to_vec(),
            };
            rank.dev
                .run_stages(&mut rank.local, &steps, [&buf, &buf], 1)
        })?;
        self.times.points += lap(&self.ranks, &mut clock)?;
        let (devs, grids) = self.works(|r| &r.local);
        let slabs = self.comm.sum_halos(&devs, &grids, &self.split)?;
        self.times.halos += lap(&self.ranks, &mut clock)?;
        let s = &self.split;
        let mut rows = Vec::new();
        for (r, (rank, slab)) in self.ranks.iter_mut().zip(slabs).enumerate() {
            let planes = s.slab(r).len();
            rank.fast.work = slab;
            let out = rank.dev.device().alloc(2 * planes * s.columns(), "rows")?;
            rank.dev
                .run_stages(&mut rank.fast, grid, [&out, &out], planes)?;
            rows.push(out);
        }
        self.times.planes += lap(&self.ranks, &mut clock)?;
        let devs: Vec<&B::Dev> = self.ranks.iter().map(|r| r.dev.device()).collect();
        let rows: Vec<&B::Buf> = rows.iter().collect();
        let columns = self.comm.to_columns(&devs, &rows, s)?;
        self.times.transpose += lap(&self.ranks, &mut clock)?;
        let (n0, cols) = (s.modes[0], s.columns());
        match f {
            Output::Devices(f) => {
                for (r, (rank, col)) in self.ranks.iter_mut().zip(columns).enumerate() {
                    let range = s.column_range(r);
                    rank.slow.work = col;
                    if !range.is_empty() {
                        rank.dev
                            .run_stages(&mut rank.slow, grid, [f[r], f[r]], range.len())?;
                    }
                }
            }
            Output::Host(f) => {
                let to = Scatter::new(interleaved_mut(f));
                let each = self.ranks.iter_mut().zip(columns).enumerate();
                on_ranks(each, |(r, (rank, col))| {
                    let range = s.column_range(r);
                    rank.slow.work = col;
                    if range.is_empty() {
                        return Ok(());
                    }
                    let out = rank.dev.device().alloc(2 * range.len() * n0, "modes")?;
                    rank.dev
                        .run_stages(&mut rank.slow, grid, [&out, &out], range.len())?;
                    // Mode k of the device's column q is at k + n0·q there, and goes to row
                    // k of the modes: a row at a time, so that the writes run along the rows.
                    let take = |at: usize, from: &[T]| {
                        by_rows((at / 2, from.len() / 2), n0, |i, k, q| {
                            let (place, v) = (2 * (k * cols + range.start + q), &from[2 * i..]);
                            // SAFETY: each (k, column) is one device's, and one place of its
                            // download.
                            unsafe { (to.set(place, v[0]), to.set(place + 1, v[1])) };
                        })
                    };
                    rank.dev.download_with(&out, 2 * range.len() * n0, &take)
                })?;
            }
        }
        self.times.columns += lap(&self.ranks, &mut clock)?;
        Ok(())
    }

    /// One type 2 (or type 1's adjoint): modes `f` to values `c` at the points.
    fn interp_pass(
        &mut self,
        f: Input<'_, T, B::Buf>,
        c: Output<'_, T, B::Buf>,
        points: &[Stage],
        grid: &[Stage],
    ) -> Result<(), B::Error> {
        let mut clock = Instant::now();
        let s = &self.split;
        let (n0, cols) = (s.modes[0], s.columns());
        match f {
            Input::Host(f) => {
                on_ranks(self.ranks.iter_mut().enumerate(), |(r, rank)| {
                    let range = s.column_range(r);
                    // Mode k of the device's column q goes to k + n0·q there, from row k of
                    // the modes: a row at a time, so that the reads run along the rows.
                    let fill = |at: usize, to: &mut [T]| {
                        by_rows((at / 2, to.len() / 2), n0, |i, k, q| {
                            let m = f[k * cols + range.start + q];
                            (to[2 * i], to[2 * i + 1]) = (m.re, m.im);
                        })
                    };
                    let len = 2 * (range.len() * n0).max(1);
                    let modes = rank.dev.upload_with(len, "modes", &fill)?;
                    if !range.is_empty() {
                        rank.dev
                            .run_stages(&mut rank.slow, grid, [&modes, &modes], range.len())?;
                    }
                    Ok::<(), B::Error>(())
                })?;
            }
            Input::Devices(f) => {
                for (r, rank) in self.ranks.iter_mut().enumerate() {
                    let range = s.column_range(r);
                    if !range.is_empty() {
                        rank.dev
                            .run_stages(&mut rank.slow, grid, [f[r], f[r]], range.len())?;
                    }
                }
            }
        }
        self.times.columns += lap(&self.ranks, &mut clock)?;
        let (devs, columns) = self.works(|r| &r.slow);
        let rows = self.comm.to_rows(&devs, &columns, s)?;
        self.times.transpose += lap(&self.ranks, &mut clock)?;
        for (r, (rank, row)) in self.ranks.iter_mut().zip(rows).enumerate() {
            let planes = s.slab(r).len();
            rank.dev
                .run_stages(&mut rank.fast, grid, [&row, &row], planes)?;
        }
        self.times.planes += lap(&self.ranks, &mut clock)?;
        let (devs, slabs) = self.works(|r| &r.fast);
        let locals = self.comm.fill_halos(&devs, &slabs, s)?;
        self.times.halos += lap(&self.ranks, &mut clock)?;
        let routes = &self.routes;
        let each = self.ranks.iter_mut().zip(locals).enumerate();
        let values = on_ranks(each, |(r, (rank, local))| {
            rank.local.work = local;
            let held = routes.received(r);
            let out = rank.dev.device().alloc(2 * held.max(1), "values")?;
            if held > 0 {
                rank.dev
                    .run_stages(&mut rank.local, points, [&out, &out], 1)?;
            }
            Ok::<_, B::Error>(out)
        })?;
        // The values back to the shares they came from, packed by device, then in the
        // share's order: into the caller's arrays on the devices, or each share to its run
        // of the caller's host array.
        let packed = self.exchange(&values, true)?;
        drop(values);
        let c = match c {
            Output::Devices(c) => {
                for (r, values) in packed.iter().enumerate() {
                    self.permute(r, (values, c[r]), true)?;
                }
                self.times.points += lap(&self.ranks, &mut clock)?;
                return Ok(());
            }
            Output::Host(c) => c,
        };
        let shares = (packed.iter().enumerate())
            .map(|(r, values)| self.permuted(r, values, true))
            .collect::<Result<Vec<_>, B::Error>>()?;
        drop(packed);
        let mut rest = interleaved_mut(c);
        let mut parts = Vec::new();
        for rank in &self.ranks {
            let (part, tail) = std::mem::take(&mut rest).split_at_mut(2 * rank.share.len());
            parts.push(part);
            rest = tail;
        }
        let each = self.ranks.iter_mut().zip(shares).zip(parts);
        on_ranks(each, |((rank, share), part)| {
            let n = part.len();
            let to = Scatter::new(part);
            let take = |at: usize, from: &[T]| {
                for (i, &v) in from.iter().enumerate() {
                    // SAFETY: the download's pieces are disjoint runs of the share, each
                    // written by the one call that takes it.
                    unsafe { to.set(at + i, v) };
                }
            };
            rank.dev.download_with(&share, n, &take)
        })?;
        self.times.points += lap(&self.ranks, &mut clock)?;
        Ok(())
    }
}

/// Where a slab plan's pass takes its values from: the caller's host array (each device's
/// share a run of it), or arrays on the devices, one each.
#[derive(Clone, Copy)]
enum Input<'a, T, Buf> {
    Host(&'a [Complex<T>]),
    Devices(&'a [&'a Buf]),
}

/// Where a slab plan's pass puts its values.
enum Output<'a, T, Buf> {
    Host(&'a mut [Complex<T>]),
    Devices(&'a [&'a Buf]),
}

impl<B: Backend<T>, L: Link<B::Dev, T>, T: Float> MultiPlan<B, L, T> {
    /// How the stack goes over the devices: whole transforms in shares of the stack, or
    /// each transform in slabs (the plan layer's rule, [`devices::spread`]).
    pub fn spread(&self) -> Spread {
        match &self.work {
            Work::Slabs(_) => Spread::Slabs,
            Work::Batches(shares) => Spread::Batches(shares.shares().to_vec()),
        }
    }

    /// How each transform is split over the devices, where it is.
    pub fn decomposition(&self) -> Option<&Decomposition> {
        match &self.work {
            Work::Slabs(slabs) => Some(&slabs.split),
            Work::Batches(_) => None,
        }
    }

    /// The kernel, the one a one-device plan of the problem takes.
    pub fn kernel(&self) -> &KernelSpec {
        &self.kernel
    }

    /// The fine grid, the one a one-device plan of the problem takes.
    pub fn fine_grid(&self) -> &[usize] {
        &self.fine_grid
    }

    /// Points on each device, once set (every point on every device where each runs whole
    /// transforms).
    pub fn points_per_device(&self) -> Option<Vec<usize>> {
        let m = self.points?;
        Some(match &self.work {
            Work::Slabs(slabs) => (0..slabs.ranks.len())
                .map(|r| slabs.routes.received(r))
                .collect(),
            Work::Batches(shares) => vec![m; shares.shares().len()],
        })
    }

    /// The link the devices exchange data over (`host`, `nccl`), where they do (slabs).
    pub fn link(&self) -> Option<&'static str> {
        match &self.work {
            Work::Slabs(slabs) => Some(slabs.comm.link_name()),
            Work::Batches(_) => None,
        }
    }

    /// Where the last set-points spent its time, each transform in slabs; zero where the
    /// devices run whole transforms.
    pub fn set_points_times(&self) -> SetPointsTimes {
        match &self.work {
            Work::Slabs(slabs) => slabs.setpts,
            Work::Batches(_) => SetPointsTimes::default(),
        }
    }

    /// Where the last run spent its time, each transform in slabs; zero where the devices
    /// run whole transforms (one step each, nothing exchanged).
    pub fn step_times(&self) -> StepTimes {
        match &self.work {
            Work::Slabs(slabs) => slabs.times,
            Work::Batches(_) => StepTimes::default(),
        }
    }

    pub fn transform_type(&self) -> TransformType {
        self.problem.ty
    }

    pub fn dim(&self) -> usize {
        self.problem.dim()
    }

    pub fn tolerance(&self) -> f64 {
        self.problem.tol
    }

    pub fn mode_order(&self) -> ModeOrder {
        self.order
    }

    /// Per transform, its points and 0 targets, once set (every transform shares them).
    pub fn point_counts(&self) -> Option<Vec<(usize, usize)>> {
        Some(vec![(self.points?, 0); self.problem.ntransf])
    }

    /// What the plan layer chose: the recipe of the one-device GPU plan of the problem,
    /// whose kernel and fine grid this plan takes.
    pub fn recipe(&self) -> Recipe {
        Recipe::new(
            &self.problem,
            DeviceClass::Gpu,
            self.kernel,
            self.problem.kernel_tol,
            self.fine_grid.clone(),
            Vec::new(),
        )
    }

    /// The devices' names, in the plan's order.
    pub fn device_names(&self) -> Vec<String> {
        match &self.work {
            Work::Slabs(slabs) => slabs.ranks.iter().map(|r| r.dev.device_name()).collect(),
            Work::Batches(shares) => shares.device_names(),
        }
    }
}

impl<B: Backend<T>, L: Link<B::Dev, T>, T: Float> std::fmt::Debug for MultiPlan<B, L, T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let names = self.device_names();
        f.debug_struct("MultiPlan")
            .field("type", &self.problem.ty)
            .field("precision", &T::PRECISION)
            .field("modes", &self.problem.modes)
            .field("ntransf", &self.problem.ntransf)
            .field("kernel", &self.kernel)
            .field("fine_grid", &self.fine_grid)
            .field("spread", &self.spread())
            .field("link", &self.link())
            .field("devices", &names)
            .finish()
    }
}

/// Expands, inside a backend's `impl<T: …> MultiPlan<ItsDev<T>, ItsComm, T>`, to the public
/// set-points and executes with the backend's error type `$err` (the shared plan's are
/// crate-private: its [`Backend`] is sealed).
macro_rules! multi_entry_points {
    ($err:ty, $buf:ty) => {
        /// Sets the points from arrays already on the devices, of a plan that cuts its
        /// transform in slabs ([`MultiPlan::spread`]): `shares[r]`, one array per dimension
        /// on the plan's device `r`, is that device's share of the set, of any size (the set
        /// is the shares one after another). Each device routes its own share, and one
        /// exchange gives every device the points its slab needs: nothing passes through
        /// the host. The arrays are read on the plan's queues, and need not outlive the
        /// call. A coordinate that is not finite is [`crate::NudtError::NonFinite`], its
        /// index in the whole set.
        pub fn set_points_distributed(
            &mut self,
            shares: &[&[&$buf]],
        ) -> std::result::Result<(), $err> {
            self.set_points_devices(shares)
        }

        /// Runs the transform (`ntransf` 1) on arrays on the devices, one each, interleaved
        /// complex: the points' values as set by [`Self::set_points_distributed`] (device
        /// `r`'s for its share, in its order) and the modes by columns — device `r` holds
        /// the columns [`crate::planner::devices::Decomposition::column_range`] of the fast
        /// axes' modes (row-major over them), column `q` of its range all the slowest axis'
        /// modes from `n₀ q` on (the plan's mode order). Type 1 takes the values and gives
        /// the modes; type 2 the other way. Queued on the plan's queues.
        pub fn execute_distributed(
            &mut self,
            input: &[&$buf],
            output: &mut [&mut $buf],
        ) -> std::result::Result<(), $err> {
            let output: Vec<&$buf> = output.iter().map(|b| &**b).collect();
            let pass = crate::planner::stages::Pass::transform(false);
            self.run_devices(input, &output, pass)
        }

        /// The adjoint of [`Self::execute_distributed`], each side as the other type's.
        pub fn execute_adjoint_distributed(
            &mut self,
            input: &[&$buf],
            output: &mut [&mut $buf],
        ) -> std::result::Result<(), $err> {
            let output: Vec<&$buf> = output.iter().map(|b| &**b).collect();
            let pass = crate::planner::stages::Pass::transform(true);
            self.run_devices(input, &output, pass)
        }

        /// Sets the points (host arrays, radians, one per dimension). In slabs each goes to
        /// the device whose slab its footprint starts in, at its place on that device's local
        /// grid ([`crate::planner::devices::Decomposition::route`]), and each device sorts its
        /// own; in shares of the stack every device takes and sorts all of them, at once.
        pub fn set_points(&mut self, coords: &[&[T]]) -> std::result::Result<(), $err> {
            self.set_points_host(coords)
        }

        /// Runs the transform on `ntransf` stacked inputs, as a one-device plan's `execute`:
        /// each device its share of the stack, at once, or one transform after another, each
        /// over every device ([`MultiPlan::spread`]).
        pub fn execute(
            &mut self,
            input: &[num_complex::Complex<T>],
            output: &mut [num_complex::Complex<T>],
        ) -> std::result::Result<(), $err> {
            self.run(
                input,
                output,
                crate::planner::stages::Pass::transform(false),
            )
        }

        /// The adjoint, as a one-device plan's `execute_adjoint`.
        pub fn execute_adjoint(
            &mut self,
            input: &[num_complex::Complex<T>],
            output: &mut [num_complex::Complex<T>],
        ) -> std::result::Result<(), $err> {
            self.run(input, output, crate::planner::stages::Pass::transform(true))
        }
    };
}
pub(crate) use multi_entry_points;
