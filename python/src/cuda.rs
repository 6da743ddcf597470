//! `RawCudaPlan`: the runtime's CUDA plan on device arrays handed over by address.
//!
//! `nudt.cuda` reads each array's `__cuda_array_interface__` (dtype, shape, strides, stream)
//! and passes the device address and length here, with the streams of the arrays' owners.
//! The plan's stream waits for those streams before it touches the arrays, and they wait for
//! the plan's stream afterwards ([`ForeignStream`]): calls return as soon as the work is
//! queued, and the caller's next kernels on its own stream see the results, as cuFINUFFT's
//! on a shared stream.
//!
//! The derivatives (`vjp`, `jvp`) run on host arrays for now, through the plan's host
//! interface ([`crate::gradients`]): `nudt.cuda.Plan` copies the device arrays over and the
//! results back. CUDA kernels of the kernel's derivative would spare the copies and the
//! `d + 1` transforms that types 1 and 2 take without them.

use crate::arrays::{self, readonly_all};
use crate::errors::{to_py, value_error};
use crate::gradients::{self, check_gradients, Held};
use crate::shared::Shared;
use nudt_runtime::cuda::{
    device_count, CudaError, CudaFloat, CudaOptions, CudaPlan, CudaStream, ForeignSlice,
    ForeignStream, GpuMethod,
};
use nudt_runtime::gradient::Wanted;
use nudt_runtime::{ModeOrder, NudtError, TransformType, Upsampling};
use numpy::PyReadonlyArrayDyn;
use pyo3::exceptions::{PyMemoryError, PyRuntimeError};
use pyo3::prelude::*;
use pyo3::types::PyTuple;
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

enum AnyCudaPlan {
    F32(Held<CudaPlan<f32>, f32>),
    F64(Held<CudaPlan<f64>, f64>),
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

impl AnyCudaPlan {
    fn f32(&mut self) -> Option<&mut Held<CudaPlan<f32>, f32>> {
        match self {
            AnyCudaPlan::F32(h) => Some(h),
            AnyCudaPlan::F64(_) => None,
        }
    }

    fn f64(&mut self) -> Option<&mut Held<CudaPlan<f64>, f64>> {
        match self {
            AnyCudaPlan::F64(h) => Some(h),
            AnyCudaPlan::F32(_) => None,
        }
    }
}

impl CudaState {
    /// The plan in f32, if it is one and has points (for the derivatives).
    fn ready_f32(&mut self) -> Option<&mut Held<CudaPlan<f32>, f32>> {
        self.ready.then(|| self.plan.f32()).flatten()
    }

    /// The plan in f64, if it is one and has points.
    fn ready_f64(&mut self) -> Option<&mut Held<CudaPlan<f64>, f64>> {
        self.ready.then(|| self.plan.f64()).flatten()
    }
}

/// A device array: its address and length in reals (complex data counts two per value).
type Raw = (u64, usize);

/// Host copies of a type 3 plan's sources and targets (numpy arrays, one per dimension).
type HostPoints<'py> = (Vec<Bound<'py, PyAny>>, Vec<Bound<'py, PyAny>>);

/// [`HostPoints`] borrowed as arrays of the plan's real type.
type Borrowed<'py, T> = (
    Vec<PyReadonlyArrayDyn<'py, T>>,
    Vec<PyReadonlyArrayDyn<'py, T>>,
);

/// How a call finds the plan of its precision.
type Pick<T> = fn(&mut AnyCudaPlan) -> Option<&mut Held<CudaPlan<T>, T>>;

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
    /// f32 or f64, and made for derivatives: fixed at construction.
    single: bool,
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

fn setpts<T: CudaFloat>(
    plan: &mut CudaPlan<T>,
    coords: &[Raw],
    targets: &[Raw],
    streams: &[u64],
    counts: Option<&[usize]>,
) -> Result<(), CudaError> {
    let stream = plan.stream().clone();
    // SAFETY: see `slices`.
    let c = unsafe { slices::<T>(&stream, coords, ["x", "y", "z"])? };
    let t = unsafe { slices::<T>(&stream, targets, ["s", "t", "u"])? };
    ordered(plan, streams, |plan| {
        if plan.transform_type() == TransformType::Type3 {
            let (c, t) = (c.iter().collect::<Vec<_>>(), t.iter().collect::<Vec<_>>());
            plan.set_points_type3_device(&c, &t)
        } else {
            // The plan reads the coordinates at every execute; `nudt.cuda.Plan` keeps the
            // arrays themselves alive until the next setpts.
            let c: Vec<_> = c.into_iter().map(Arc::new).collect();
            match counts {
                Some(counts) => plan.set_points_per_transform_device(&c, counts),
                None => plan.set_points_device(&c),
            }
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
        let mut opts = CudaOptions {
            device,
            mode_order: if fft_order {
                ModeOrder::Fft
            } else {
                ModeOrder::Cmcl
            },
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
            ..CudaOptions::default()
        };
        if upsampfac != 0.0 {
            opts.upsampling = Some(Upsampling::new(upsampfac).map_err(|e| to_py(py, e.into()))?);
        }
        let plan = py
            .detach(|| -> Result<_, CudaError> {
                Ok(match (ty, single) {
                    (TransformType::Type3, true) => AnyCudaPlan::F32(Held::new(
                        CudaPlan::new_type3(modes.len(), isign, n_trans, eps, opts)?,
                    )),
                    (TransformType::Type3, false) => AnyCudaPlan::F64(Held::new(
                        CudaPlan::new_type3(modes.len(), isign, n_trans, eps, opts)?,
                    )),
                    (_, true) => AnyCudaPlan::F32(Held::new(CudaPlan::new(
                        ty, &modes, isign, n_trans, eps, opts,
                    )?)),
                    (_, false) => AnyCudaPlan::F64(Held::new(CudaPlan::new(
                        ty, &modes, isign, n_trans, eps, opts,
                    )?)),
                })
            })
            .map_err(|e| cuda_to_py(py, e))?;
        Ok(RawCudaPlan {
            single,
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
    /// and 2; type 3 copies them). `host`: a type 3 plan made for gradients is given host
    /// copies of both sets (numpy arrays of its real dtype), and keeps them for `vjp` and
    /// `jvp`. `counts`: a point set per transform (types 1 and 2), `coords` then holding the
    /// sets one after another, `counts[b]` of transform b's.
    #[pyo3(signature = (coords, targets, streams, keep, host=None, counts=None))]
    #[allow(clippy::too_many_arguments)]
    fn setpts(
        &self,
        py: Python<'_>,
        coords: Vec<Raw>,
        targets: Vec<Raw>,
        streams: Vec<u64>,
        keep: Option<Py<PyAny>>,
        host: Option<HostPoints<'_>>,
        counts: Option<Vec<usize>>,
    ) -> PyResult<()> {
        #[allow(clippy::too_many_arguments)]
        fn typed<T: CudaFloat + numpy::Element>(
            py: Python<'_>,
            plan: &Shared<CudaState>,
            coords: Vec<Raw>,
            targets: Vec<Raw>,
            streams: Vec<u64>,
            keep: Option<Py<PyAny>>,
            host: Option<HostPoints<'_>>,
            counts: Option<Vec<usize>>,
            pick: Pick<T>,
        ) -> PyResult<()> {
            let host: Option<Borrowed<'_, T>> = host
                .map(|(s, t)| -> PyResult<_> {
                    Ok((
                        readonly_all::<T>(&s, &["x", "y", "z"])?,
                        readonly_all::<T>(&t, &["s", "t", "u"])?,
                    ))
                })
                .transpose()?;
            let host = host
                .as_ref()
                .map(|(s, t)| (arrays::slices(s), arrays::slices(t)));
            plan.run(py, cuda_to_py, |st| {
                st.ready = false;
                // The old arrays go once nothing reads them: their decref waits for the GIL.
                st.coords = None;
                let h = pick(&mut st.plan).expect("precision");
                let set =
                    |p: &mut CudaPlan<T>| setpts(p, &coords, &targets, &streams, counts.as_deref());
                match &host {
                    Some((s, t)) => h.set_type3(s, t, true, set),
                    None => {
                        h.forget_type3();
                        set(&mut h.plan)
                    }
                }?;
                st.coords = keep;
                st.ready = true;
                Ok(())
            })
        }
        if self.single {
            let pick = AnyCudaPlan::f32;
            typed(
                py, &self.plan, coords, targets, streams, keep, host, counts, pick,
            )
        } else {
            let pick = AnyCudaPlan::f64;
            typed(
                py, &self.plan, coords, targets, streams, keep, host, counts, pick,
            )
        }
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

    /// Reverse mode on host arrays (numpy, the plan's dtypes), as `RawPlan.vjp`; the Python
    /// layer moves device arrays over and back. Waits for the transforms it runs.
    #[pyo3(signature = (data, cotangent, wrt_data, wrt_points, wrt_targets))]
    fn vjp<'py>(
        &self,
        py: Python<'py>,
        data: &Bound<'py, PyAny>,
        cotangent: &Bound<'py, PyAny>,
        wrt_data: bool,
        wrt_points: bool,
        wrt_targets: bool,
    ) -> PyResult<Bound<'py, PyTuple>> {
        check_gradients(py, self.gradients)?;
        let wanted = Wanted {
            input: wrt_data,
            points: wrt_points,
            targets: wrt_targets,
        };
        if self.single {
            gradients::vjp(
                py,
                &self.plan,
                CudaState::ready_f32,
                data,
                cotangent,
                wanted,
            )
        } else {
            gradients::vjp(
                py,
                &self.plan,
                CudaState::ready_f64,
                data,
                cotangent,
                wanted,
            )
        }
    }

    /// Forward mode on host arrays, as `RawPlan.jvp`.
    #[pyo3(signature = (data, d_data, d_points, d_targets, out))]
    fn jvp<'py>(
        &self,
        py: Python<'py>,
        data: &Bound<'py, PyAny>,
        d_data: Option<&Bound<'py, PyAny>>,
        d_points: Option<Vec<Bound<'py, PyAny>>>,
        d_targets: Option<Vec<Bound<'py, PyAny>>>,
        out: &Bound<'py, PyAny>,
    ) -> PyResult<()> {
        check_gradients(py, self.gradients)?;
        if self.single {
            let pick = CudaState::ready_f32;
            gradients::jvp(py, &self.plan, pick, data, d_data, d_points, d_targets, out)
        } else {
            let pick = CudaState::ready_f64;
            gradients::jvp(py, &self.plan, pick, data, d_data, d_points, d_targets, out)
        }
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
