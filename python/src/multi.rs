//! `RawCudaMultiPlan`: the runtime's plan over several GPUs ([`CudaMultiPlan`]) on host
//! arrays, behind `nudt.cuda.Plan(..., gpu_device_ids=[...])`.
//!
//! A transform over several GPUs takes numpy arrays: its points are routed to the GPUs whose
//! slabs of the fine grid they touch, and that routing, like the gather of the modes, runs
//! on the host's threads, each GPU moving its share through its own link at once. The
//! checks a cufinufft user meets (shapes, dtypes, options) are the Python layer's, as for
//! the other plans.

use crate::arrays::{readonly_all, slices, with_io};
use crate::cuda::{cuda_to_py, options};
use crate::errors::value_error;
use crate::shared::Shared;
use nudt_runtime::cuda::{CudaFloat, CudaMultiPlan};
use nudt_runtime::TransformType;
use num_complex::Complex;
use numpy::Element;
use pyo3::prelude::*;

enum AnyMulti {
    F32(CudaMultiPlan<f32>),
    F64(CudaMultiPlan<f64>),
}

/// A type 1 or 2 plan over several CUDA devices, on host arrays.
#[pyclass(module = "nudt._nudt", frozen)]
pub struct RawCudaMultiPlan {
    single: bool,
    plan: Shared<AnyMulti>,
}

/// The plan's precision `T`, in the calls generic over it.
trait Pick: CudaFloat + Element {
    fn pick(p: &mut AnyMulti) -> &mut CudaMultiPlan<Self>;
}

impl Pick for f32 {
    fn pick(p: &mut AnyMulti) -> &mut CudaMultiPlan<f32> {
        match p {
            AnyMulti::F32(p) => p,
            AnyMulti::F64(_) => unreachable!("an f64 plan called as f32"),
        }
    }
}

impl Pick for f64 {
    fn pick(p: &mut AnyMulti) -> &mut CudaMultiPlan<f64> {
        match p {
            AnyMulti::F64(p) => p,
            AnyMulti::F32(_) => unreachable!("an f32 plan called as f64"),
        }
    }
}

#[pymethods]
impl RawCudaMultiPlan {
    #[new]
    #[allow(clippy::too_many_arguments)]
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
        devices: Vec<usize>,
    ) -> PyResult<Self> {
        let ty = match nufft_type {
            1 => TransformType::Type1,
            2 => TransformType::Type2,
            t => {
                return Err(value_error(
                    py,
                    format!("a plan over several GPUs (gpu_device_ids) is of type 1 or 2, got {t}"),
                ))
            }
        };
        let opts = options(py, fft_order, upsampfac)?;
        let job = (isign, n_trans, eps);
        let plan = py
            .detach(|| {
                Ok(match single {
                    true => AnyMulti::F32(CudaMultiPlan::new(ty, &modes, job, &opts, &devices)?),
                    false => AnyMulti::F64(CudaMultiPlan::new(ty, &modes, job, &opts, &devices)?),
                })
            })
            .map_err(|e| cuda_to_py(py, e))?;
        Ok(RawCudaMultiPlan {
            single,
            plan: Shared::new(plan),
        })
    }

    /// Sets the points: one C-contiguous array per dimension.
    fn setpts(&self, py: Python<'_>, coords: Vec<Bound<'_, PyAny>>) -> PyResult<()> {
        fn typed<T: Pick>(
            py: Python<'_>,
            plan: &Shared<AnyMulti>,
            coords: &[Bound<'_, PyAny>],
        ) -> PyResult<()> {
            let c = readonly_all::<T>(coords, &["x", "y", "z"])?;
            let c = slices(&c);
            plan.run(py, cuda_to_py, |p| T::pick(p).set_points(&c))
        }
        match self.single {
            true => typed::<f32>(py, &self.plan, &coords),
            false => typed::<f64>(py, &self.plan, &coords),
        }
    }

    /// Runs the transform (or its adjoint) from `data` into `out`, both C-contiguous.
    fn execute(
        &self,
        py: Python<'_>,
        data: &Bound<'_, PyAny>,
        out: &Bound<'_, PyAny>,
        adjoint: bool,
    ) -> PyResult<()> {
        fn typed<T: Pick>(
            py: Python<'_>,
            plan: &Shared<AnyMulti>,
            (data, out): (&Bound<'_, PyAny>, &Bound<'_, PyAny>),
            adjoint: bool,
        ) -> PyResult<()>
        where
            Complex<T>: Element,
        {
            with_io((data, out), |input, output| {
                plan.run(py, cuda_to_py, |p| match adjoint {
                    true => T::pick(p).execute_adjoint(input, output),
                    false => T::pick(p).execute(input, output),
                })
            })
        }
        match self.single {
            true => typed::<f32>(py, &self.plan, (data, out), adjoint),
            false => typed::<f64>(py, &self.plan, (data, out), adjoint),
        }
    }

    /// How the plan runs its stack (`"slabs"`, or `"transforms"` where each GPU takes whole
    /// transforms) and the link between the GPUs (`"nccl"`, `"host"`; `None` for whole
    /// transforms, which exchange nothing).
    fn layout(&self, py: Python<'_>) -> PyResult<(String, Option<String>)> {
        self.plan.with(py, |p| {
            let (slabs, link) = match p {
                AnyMulti::F32(p) => (p.decomposition().is_some(), p.link()),
                AnyMulti::F64(p) => (p.decomposition().is_some(), p.link()),
            };
            let how = if slabs { "slabs" } else { "transforms" };
            (how.to_string(), link.map(str::to_string))
        })
    }

    fn __repr__(&self, py: Python<'_>) -> PyResult<String> {
        self.plan.with(py, |p| match p {
            AnyMulti::F32(p) => format!("{p:?}"),
            AnyMulti::F64(p) => format!("{p:?}"),
        })
    }
}
