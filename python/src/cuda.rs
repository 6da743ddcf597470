//! `RawCudaPlan`: the runtime's CUDA plan on device arrays handed over by address.
//!
//! `nudt.cuda` reads each array's `__cuda_array_interface__` (dtype, shape, strides, stream)
//! and passes the device address and length here, with the streams of the arrays' owners.
//! The plan's stream waits for those streams before it touches the arrays, and they wait for
//! the plan's stream afterwards ([`ForeignStream`]): calls return as soon as the work is
//! queued, and the caller's next kernels on its own stream see the results, as cuFINUFFT's
//! on a shared stream.
//!
//! The derivatives (`vjp`, `jvp`) run on device arrays too (`CudaPlan::vjp_device`): the
//! kernel's derivative in one pass for types 1 and 2, and every step on the device; nothing
//! goes to the host. A type 3 plan made for gradients keeps device copies of its sources and
//! targets, which its derivatives weight by.

use crate::errors::{to_py, value_error};
use crate::gradients::check_gradients;
use crate::shared::Shared;
use nudt_runtime::cuda::{
    device_count, CudaError, CudaFloat, CudaOptions, CudaPlan, CudaSlice, CudaStream, ForeignSlice,
    ForeignStream, GpuMethod,
};
use nudt_runtime::gradient::Wanted;
use nudt_runtime::{ModeOrder, NudtError, TransformType, Upsampling};
use pyo3::exceptions::{PyMemoryError, PyRuntimeError};
use pyo3::prelude::*;
use std::sync::Arc;

/// The exception for a CUDA backend error: bad input as the CPU plan's, a bad device array
/// as `ValueError`, no memory as `MemoryError`, everything the GPU or its libraries did
/// wrong as `RuntimeError`.
pub fn cuda_to_py(py: Python<'_>, e: CudaError) -> PyErr {
    match e {
        CudaError::Nudt(e) => to_py(py, e),
        e @ CudaError::ForeignMemory { .. } => value_error(py, e.to_string()),
        e @ CudaError::OutOfMemory { .. } => PyMemoryError::new_err(e.to_string()),
        e => PyRuntimeError::new_err(e.to_string()),
    }
}

/// A type 3 plan's sources and targets on the device, one array per dimension each.
type DeviceSets<T> = (Vec<CudaSlice<T>>, Vec<CudaSlice<T>>);

/// A plan and, for a type 3 plan made for gradients, device copies of the sources and
/// targets of its last set-points that succeeded (the plan keeps them only rescaled).
struct Kept<T: CudaFloat> {
    plan: CudaPlan<T>,
    type3: Option<DeviceSets<T>>,
}

impl<T: CudaFloat> Kept<T> {
    fn new(plan: CudaPlan<T>) -> Self {
        Kept { plan, type3: None }
    }
}

enum AnyCudaPlan {
    F32(Kept<f32>),
    F64(Kept<f64>),
}

/// The plan and what the binding keeps with it, under one lock.
struct CudaState {
    plan: AnyCudaPlan,
    /// The Python owners of the coordinate arrays that a type 1 or 2 plan reads at every
    /// execute, kept alive until the next setpts (as cufinufft keeps them). They change
    /// under the plan's lock, so a setpts on one thread cannot free the arrays an execute on
    /// another is reading.
    coords: Option<Py<PyAny>>,
    /// Whether the last setpts succeeded. One that failed may leave the plan between two
    /// point sets (the new arrays held, the old count), so executes are refused until a
    /// setpts succeeds.
    ready: bool,
}

/// A device array: its address and length in reals (complex data counts two per value).
type Raw = (u64, usize);

/// A type 1, 2 or 3 GPU plan in f32 (`single=True`) or f64. Arguments are already
/// normalised by `nudt.cuda.Plan`: `modes` in user order, `isign` ±1, `upsampfac` 0 for the
/// default, `method` 0 for the plan's choice (else 1 GM-sort, 2 SM, 3 output-driven),
/// `max_batch` 0 for the default, `bins` empty for the generator's choice, `gradients` for a
/// plan meant for `vjp` and `jvp` (`CudaOptions::gradients`).
///
/// Shared between Python threads as the CPU plan is ([`Shared`]): calls take turns, each
/// queuing its work on the plan's stream with the GIL released.
#[pyclass(module = "nudt._nudt", frozen)]
pub struct RawCudaPlan {
    /// Made for derivatives: fixed at construction.
    gradients: bool,
    plan: Shared<CudaState>,
}

/// Wraps each array as a [`ForeignSlice`] on `stream`.
///
/// # Safety
/// As [`ForeignSlice::new`]: the Python layer holds the arrays for the duration of the call,
/// and the owners' streams are ordered around the work (`ordered`).
unsafe fn slices<T>(
    stream: &Arc<CudaStream>,
    arrays: &[Raw],
    names: [&str; 3],
) -> Result<Vec<ForeignSlice<T>>, CudaError> {
    arrays
        .iter()
        .zip(names)
        // SAFETY: forwarded from the caller.
        .map(|(&(p, n), name)| unsafe { ForeignSlice::new(stream, p, n, name) })
        .collect()
}

/// Runs `work` on `plan`'s stream between the owners' streams: it waits for them first, and
/// they wait for it afterwards.
fn ordered<T: CudaFloat, R>(
    plan: &mut CudaPlan<T>,
    streams: &[u64],
    work: impl FnOnce(&mut CudaPlan<T>) -> Result<R, CudaError>,
) -> Result<R, CudaError> {
    // SAFETY: the handles come from the arrays' `__cuda_array_interface__` (or the user's
    // `gpu_stream`), whose owners keep them live while their arrays are in use.
    let foreign: Vec<_> = streams
        .iter()
        .map(|&h| unsafe { ForeignStream::from_handle(h) })
        .collect();
    let stream = plan.stream().clone();
    for s in &foreign {
        s.precede(&stream)?;
    }
    let r = work(plan)?;
    for s in &foreign {
        s.follow(&stream)?;
    }
    Ok(r)
}

/// Sets the points; for a type 3 plan with `keep3`, returns device copies of both sets.
fn setpts<T: CudaFloat>(
    plan: &mut CudaPlan<T>,
    coords: &[Raw],
    targets: &[Raw],
    streams: &[u64],
    counts: Option<(&[usize], Option<&[usize]>)>,
    keep3: bool,
) -> Result<Option<DeviceSets<T>>, CudaError> {
    let stream = plan.stream().clone();
    // SAFETY: see `slices`.
    let c = unsafe { slices::<T>(&stream, coords, ["x", "y", "z"])? };
    let t = unsafe { slices::<T>(&stream, targets, ["s", "t", "u"])? };
    ordered(plan, streams, |plan| {
        if plan.transform_type() == TransformType::Type3 {
            let (c, t) = (c.iter().collect::<Vec<_>>(), t.iter().collect::<Vec<_>>());
            match counts {
                Some((m, Some(k))) => plan.set_points_type3_per_transform_device(&c, &t, (m, k)),
                Some((_, None)) => Err(CudaError::Nudt(NudtError::PointSets {
                    what: "target counts",
                    expected: plan.ntransf(),
                    got: 0,
                })),
                None => plan.set_points_type3_device(&c, &t),
            }?;
            let copy = |v: &[&ForeignSlice<T>]| -> Result<Vec<CudaSlice<T>>, CudaError> {
                v.iter()
                    .map(|a| {
                        stream.clone_dtod(*a).map_err(|e| CudaError::Driver {
                            call: "cuMemcpyDtoDAsync (type 3 points kept for gradients)".into(),
                            detail: e.to_string(),
                        })
                    })
                    .collect()
            };
            Ok(match keep3 {
                true => Some((copy(&c)?, copy(&t)?)),
                false => None,
            })
        } else {
            // The plan reads the coordinates at every execute; `nudt.cuda.Plan` keeps the
            // arrays themselves alive until the next setpts.
            let c: Vec<_> = c.into_iter().map(Arc::new).collect();
            match counts {
                Some((counts, _)) => plan.set_points_per_transform_device(&c, counts),
                None => plan.set_points_device(&c),
            }?;
            Ok(None)
        }
    })
}

fn execute<T: CudaFloat>(
    plan: &mut CudaPlan<T>,
    data: Raw,
    out: Raw,
    streams: &[u64],
    adjoint: bool,
) -> Result<(), CudaError> {
    let stream = plan.stream().clone();
    // SAFETY: see `slices`.
    let input = unsafe { ForeignSlice::<T>::new(&stream, data.0, data.1, "data")? };
    let mut output = unsafe { ForeignSlice::<T>::new(&stream, out.0, out.1, "out")? };
    if input.overlaps(&output) {
        return Err(CudaError::ForeignMemory {
            what: "out".into(),
            detail: "shares memory with data".into(),
        });
    }
    ordered(plan, streams, |plan| {
        if adjoint {
            plan.execute_adjoint_device(&input, &mut output)
        } else {
            plan.execute_device(&input, &mut output)
        }
    })
}

/// The device arrays of a derivative: the input, the seed (the output's cotangent, or the
/// input's tangent), the points' and targets' arrays (cotangents written, or tangents read)
/// and the complex result (the input's cotangent, or the output's tangent).
struct Derivative {
    data: Raw,
    seed: Option<Raw>,
    points: Vec<Raw>,
    targets: Vec<Raw>,
    out: Option<Raw>,
}

/// A derivative's device arrays as [`ForeignSlice`]s on `stream`: input, seed, points,
/// targets, result.
type Wrapped<T> = (
    ForeignSlice<T>,
    Option<ForeignSlice<T>>,
    Vec<ForeignSlice<T>>,
    Vec<ForeignSlice<T>>,
    Option<ForeignSlice<T>>,
);

impl Derivative {
    fn wrap<T: CudaFloat>(&self, stream: &Arc<CudaStream>) -> Result<Wrapped<T>, CudaError> {
        // SAFETY: see `slices`.
        let one = |r: Raw, name| unsafe { ForeignSlice::<T>::new(stream, r.0, r.1, name) };
        let some = |r: Option<Raw>, name| r.map(|r| one(r, name)).transpose();
        let data = one(self.data, "data")?;
        let seed = some(self.seed, "seed")?;
        let out = some(self.out, "out")?;
        if let Some(o) = &out {
            if o.overlaps(&data) || seed.as_ref().is_some_and(|s| o.overlaps(s)) {
                return Err(CudaError::ForeignMemory {
                    what: "out".into(),
                    detail: "shares memory with an input".into(),
                });
            }
        }
        // SAFETY: see `slices`.
        let points = unsafe { slices::<T>(stream, &self.points, ["x", "y", "z"])? };
        let targets = unsafe { slices::<T>(stream, &self.targets, ["s", "t", "u"])? };
        Ok((data, seed, points, targets, out))
    }
}

/// A type 3 plan's kept sets as the derivatives take them.
fn kept_sets<T: CudaFloat>(type3: &Option<DeviceSets<T>>) -> Option<[Vec<&CudaSlice<T>>; 2]> {
    type3
        .as_ref()
        .map(|(s, t)| [s.iter().collect(), t.iter().collect()])
}

fn vjp<T: CudaFloat>(
    k: &mut Kept<T>,
    a: &Derivative,
    wanted: Wanted,
    streams: &[u64],
) -> Result<(), CudaError> {
    let (data, seed, mut points, mut targets, mut out) = a.wrap::<T>(&k.plan.stream().clone())?;
    let seed = seed.expect("a cotangent");
    let sets = kept_sets(&k.type3);
    let sets = sets.as_ref().map(|[s, t]| (&s[..], &t[..]));
    let mut pts: Vec<&mut ForeignSlice<T>> = points.iter_mut().collect();
    let mut tgs: Vec<&mut ForeignSlice<T>> = targets.iter_mut().collect();
    ordered(&mut k.plan, streams, |plan| {
        plan.vjp_device(&data, &seed, sets, wanted, out.as_mut(), &mut pts, &mut tgs)
    })
}

fn jvp<T: CudaFloat>(
    k: &mut Kept<T>,
    a: &Derivative,
    (points, targets): (bool, bool),
    streams: &[u64],
) -> Result<(), CudaError> {
    let (data, seed, dp, dt, out) = a.wrap::<T>(&k.plan.stream().clone())?;
    let mut out = out.expect("an output");
    let sets = kept_sets(&k.type3);
    let sets = sets.as_ref().map(|[s, t]| (&s[..], &t[..]));
    let (dp, dt): (Vec<_>, Vec<_>) = (dp.iter().collect(), dt.iter().collect());
    let dp = points.then_some(&dp[..]);
    let dt = targets.then_some(&dt[..]);
    ordered(&mut k.plan, streams, |plan| {
        plan.jvp_device(&data, seed.as_ref(), dp, dt, sets, &mut out)
    })
}

/// The CUDA options of cufinufft's `modeord` (`fft_order`) and `upsampfac` (0: the
/// planner's), the others default: what every `nudt.cuda` plan takes from them.
pub fn options(py: Python<'_>, fft_order: bool, upsampfac: f64) -> PyResult<CudaOptions> {
    let upsampling = match upsampfac {
        0.0 => None,
        u => Some(Upsampling::new(u).map_err(|e| to_py(py, e.into()))?),
    };
    Ok(CudaOptions {
        mode_order: match fft_order {
            true => ModeOrder::Fft,
            false => ModeOrder::Cmcl,
        },
        upsampling,
        ..CudaOptions::default()
    })
}

/// The number of CUDA devices; raises `RuntimeError` saying why there are none to be had
/// (no driver, a driver too old, NVRTC or cuFFT missing, no device).
#[pyfunction]
pub fn cuda_device_count(py: Python<'_>) -> PyResult<usize> {
    match py.detach(device_count) {
        Ok(0) => Err(PyRuntimeError::new_err("no CUDA device found")),
        Ok(n) => Ok(n),
        Err(e) => Err(cuda_to_py(py, e)),
    }
}

#[pymethods]
impl RawCudaPlan {
    #[new]
    #[allow(clippy::too_many_arguments)]
    #[pyo3(signature = (nufft_type, modes, isign, n_trans, eps, single, fft_order, upsampfac,
                        device, method, max_batch, bins, gradients=false))]
    fn new(
        py: Python<'_>,
        nufft_type: u8,
        modes: Vec<usize>,
        isign: i32,
        n_trans: usize,
        eps: f64,
        single: bool,
        fft_order: bool,
        upsampfac: f64,
        device: usize,
        method: u8,
        max_batch: usize,
        bins: Vec<usize>,
        gradients: bool,
    ) -> PyResult<Self> {
        let ty = match nufft_type {
            1 => TransformType::Type1,
            2 => TransformType::Type2,
            3 => TransformType::Type3,
            t => {
                return Err(value_error(
                    py,
                    format!("nufft_type must be 1, 2 or 3, got {t}"),
                ))
            }
        };
        let method = match method {
            0 => None,
            1 => Some(GpuMethod::GmSort),
            2 => Some(GpuMethod::Sm),
            3 => Some(GpuMethod::OutputDriven),
            m => {
                return Err(value_error(
                    py,
                    format!("gpu_method must be 0, 1, 2 or 3, got {m}"),
                ))
            }
        };
        let opts = CudaOptions {
            device,
            spread: method,
            interp: method,
            max_batch,
            bins: match bins[..] {
                [] => None,
                [a] => Some([a, 1, 1]),
                [a, b] => Some([a, b, 1]),
                [a, b, c] => Some([a, b, c]),
                _ => return Err(value_error(py, "bins: 1 to 3 sides".into())),
            },
            gradients,
            ..options(py, fft_order, upsampfac)?
        };
        let plan = py
            .detach(|| -> Result<_, CudaError> {
                Ok(match (ty, single) {
                    (TransformType::Type3, true) => AnyCudaPlan::F32(Kept::new(
                        CudaPlan::new_type3(modes.len(), isign, n_trans, eps, opts)?,
                    )),
                    (TransformType::Type3, false) => AnyCudaPlan::F64(Kept::new(
                        CudaPlan::new_type3(modes.len(), isign, n_trans, eps, opts)?,
                    )),
                    (_, true) => AnyCudaPlan::F32(Kept::new(CudaPlan::new(
                        ty, &modes, isign, n_trans, eps, opts,
                    )?)),
                    (_, false) => AnyCudaPlan::F64(Kept::new(CudaPlan::new(
                        ty, &modes, isign, n_trans, eps, opts,
                    )?)),
                })
            })
            .map_err(|e| cuda_to_py(py, e))?;
        Ok(RawCudaPlan {
            gradients,
            plan: Shared::new(CudaState {
                plan,
                coords: None,
                ready: false,
            }),
        })
    }

    /// Sets the points (`coords`: one device array per dimension, as (address, length)) and,
    /// for type 3, the target frequencies (`targets`); `streams` are the owners' streams;
    /// `keep` is what keeps the coordinate arrays alive while the plan reads them (types 1
    /// and 2; type 3 copies them, and a type 3 plan made for gradients keeps device copies
    /// for `vjp` and `jvp`). `counts`: a point set per transform, `coords` then holding the
    /// sets one after another, `counts[b]` of transform b's (type 3: its sources, and
    /// `target_counts[b]` its targets, `targets` holding their sets alike).
    #[pyo3(signature = (coords, targets, streams, keep, counts=None, target_counts=None))]
    #[allow(clippy::too_many_arguments)]
    fn setpts(
        &self,
        py: Python<'_>,
        coords: Vec<Raw>,
        targets: Vec<Raw>,
        streams: Vec<u64>,
        keep: Option<Py<PyAny>>,
        counts: Option<Vec<usize>>,
        target_counts: Option<Vec<usize>>,
    ) -> PyResult<()> {
        let keep3 = self.gradients;
        self.plan.run(py, cuda_to_py, |st| {
            st.ready = false;
            // The old arrays go once nothing reads them: their decref waits for the GIL.
            st.coords = None;
            let counts = counts.as_deref().map(|m| (m, target_counts.as_deref()));
            match &mut st.plan {
                AnyCudaPlan::F32(k) => {
                    k.type3 = None;
                    k.type3 = setpts(&mut k.plan, &coords, &targets, &streams, counts, keep3)?;
                }
                AnyCudaPlan::F64(k) => {
                    k.type3 = None;
                    k.type3 = setpts(&mut k.plan, &coords, &targets, &streams, counts, keep3)?;
                }
            }
            st.coords = keep;
            st.ready = true;
            Ok(())
        })
    }

    /// Queues the transform (or its adjoint) from device array `data` into device array
    /// `out` (both C-contiguous, interleaved complex).
    fn execute(
        &self,
        py: Python<'_>,
        data: Raw,
        out: Raw,
        streams: Vec<u64>,
        adjoint: bool,
    ) -> PyResult<()> {
        self.plan.run(py, cuda_to_py, |st| {
            if !st.ready {
                return Err(CudaError::Nudt(NudtError::PointsNotSet));
            }
            match &mut st.plan {
                AnyCudaPlan::F32(h) => execute(&mut h.plan, data, out, &streams, adjoint),
                AnyCudaPlan::F64(h) => execute(&mut h.plan, data, out, &streams, adjoint),
            }
        })
    }

    /// Reverse mode on device arrays, queued as `execute` is: at input `data` for the
    /// output's cotangent `cotangent`, the input's cotangent into `d_data` (where given), the
    /// points' (type 3: the sources') into `d_points` and type 3's targets' into `d_targets`
    /// (one real array per dimension, or none where not wanted).
    #[allow(clippy::too_many_arguments)]
    fn vjp(
        &self,
        py: Python<'_>,
        data: Raw,
        cotangent: Raw,
        d_data: Option<Raw>,
        d_points: Vec<Raw>,
        d_targets: Vec<Raw>,
        streams: Vec<u64>,
    ) -> PyResult<()> {
        check_gradients(py, self.gradients)?;
        let wanted = Wanted {
            input: d_data.is_some(),
            points: !d_points.is_empty(),
            targets: !d_targets.is_empty(),
        };
        let arrays = Derivative {
            data,
            seed: Some(cotangent),
            points: d_points,
            targets: d_targets,
            out: d_data,
        };
        self.plan
            .run(py, cuda_to_py, |st| match (st.ready, &mut st.plan) {
                (false, _) => Err(CudaError::Nudt(NudtError::PointsNotSet)),
                (true, AnyCudaPlan::F32(k)) => vjp(k, &arrays, wanted, &streams),
                (true, AnyCudaPlan::F64(k)) => vjp(k, &arrays, wanted, &streams),
            })
    }

    /// Forward mode on device arrays, queued as `execute` is: the change of the output at
    /// input `data` for the changes `d_data` of the input, `d_points` of the points (type 3:
    /// the sources) and `d_targets` of type 3's targets (`None` where nothing changes), into
    /// `out`.
    #[allow(clippy::too_many_arguments)]
    fn jvp(
        &self,
        py: Python<'_>,
        data: Raw,
        d_data: Option<Raw>,
        d_points: Option<Vec<Raw>>,
        d_targets: Option<Vec<Raw>>,
        out: Raw,
        streams: Vec<u64>,
    ) -> PyResult<()> {
        check_gradients(py, self.gradients)?;
        let given = (d_points.is_some(), d_targets.is_some());
        let arrays = Derivative {
            data,
            seed: d_data,
            points: d_points.unwrap_or_default(),
            targets: d_targets.unwrap_or_default(),
            out: Some(out),
        };
        self.plan
            .run(py, cuda_to_py, |st| match (st.ready, &mut st.plan) {
                (false, _) => Err(CudaError::Nudt(NudtError::PointsNotSet)),
                (true, AnyCudaPlan::F32(k)) => jvp(k, &arrays, given, &streams),
                (true, AnyCudaPlan::F64(k)) => jvp(k, &arrays, given, &streams),
            })
    }

    /// Seconds the runtime spent queuing the last `setpts` or `execute` (GIL released).
    #[getter]
    fn last_call_s(&self, py: Python<'_>) -> PyResult<f64> {
        self.plan.last_call_s(py)
    }

    /// GPU milliseconds of the last `setpts` and `execute`, by CUDA events (waits for them).
    fn timings(&self, py: Python<'_>) -> PyResult<(f32, f32)> {
        let t = self
            .plan
            .with(py, |st| match &st.plan {
                AnyCudaPlan::F32(h) => h.plan.timings(),
                AnyCudaPlan::F64(h) => h.plan.timings(),
            })?
            .map_err(|e| cuda_to_py(py, e))?;
        Ok((t.setpts_ms, t.execute_ms))
    }

    /// Waits for the work queued by this plan.
    fn synchronize(&self, py: Python<'_>) -> PyResult<()> {
        self.plan
            .with(py, |st| match &st.plan {
                AnyCudaPlan::F32(h) => h.plan.synchronize(),
                AnyCudaPlan::F64(h) => h.plan.synchronize(),
            })?
            .map_err(|e| cuda_to_py(py, e))
    }

    /// The device ordinal the plan runs on.
    #[getter]
    fn device(&self, py: Python<'_>) -> PyResult<usize> {
        self.plan.with(py, |st| match &st.plan {
            AnyCudaPlan::F32(h) => h.plan.stream().context().ordinal(),
            AnyCudaPlan::F64(h) => h.plan.stream().context().ordinal(),
        })
    }

    fn __repr__(&self, py: Python<'_>) -> PyResult<String> {
        self.plan.with(py, |st| match &st.plan {
            AnyCudaPlan::F32(h) => format!("{:?}", h.plan),
            AnyCudaPlan::F64(h) => format!("{:?}", h.plan),
        })
    }
}
