//! `RawPlan`: the runtime's CPU plan in the precision the Python `Plan` asked for.

use crate::arrays::{readonly, readwrite};
use crate::errors::{to_py, value_error};
use nudt_runtime::{Float, ModeOrder, Options, Plan, TransformType, Upsampling};
use num_complex::Complex;
use numpy::{Element, PyReadonlyArrayDyn};
use pyo3::prelude::*;
use std::time::Instant;

enum AnyPlan {
    F32(Plan<f32>),
    F64(Plan<f64>),
}

/// A type 1, 2 or 3 plan in f32 (`single=True`) or f64. Arguments are already normalised by
/// `nudt.Plan`: `modes` in user order (x first), `isign` ±1, `nthreads` 0 for all threads,
/// `upsampfac` 0 for the planner's choice.
#[pyclass(module = "nudt._nudt")]
pub struct RawPlan {
    plan: AnyPlan,
    /// Seconds the runtime spent in the last `setpts` or `execute`, GIL released: what the
    /// Python layer adds is a call's wall time minus this.
    #[pyo3(get)]
    last_call_s: f64,
}

fn make<T: Float>(
    ty: TransformType,
    modes: &[usize],
    isign: i32,
    ntrans: usize,
    eps: f64,
    opts: Options,
) -> nudt_runtime::Result<Plan<T>> {
    match ty {
        TransformType::Type3 => Plan::new_type3(modes.len(), isign, ntrans, eps, opts),
        _ => Plan::new(ty, modes, isign, ntrans, eps, opts),
    }
}

fn borrow_all<'py, T: Element>(
    arrays: &[Bound<'py, PyAny>],
    names: [&str; 3],
) -> PyResult<Vec<PyReadonlyArrayDyn<'py, T>>> {
    arrays
        .iter()
        .zip(names)
        .map(|(a, n)| readonly::<T>(a, n))
        .collect()
}

fn slices<'a, T: Element>(arrays: &'a [PyReadonlyArrayDyn<'_, T>]) -> Vec<&'a [T]> {
    arrays
        .iter()
        .map(|a| a.as_slice().expect("readonly() checked C order"))
        .collect()
}

fn setpts<T: Float + Element>(
    py: Python<'_>,
    plan: &mut Plan<T>,
    coords: &[Bound<'_, PyAny>],
    targets: &[Bound<'_, PyAny>],
) -> PyResult<f64> {
    let (c, t) = (
        borrow_all::<T>(coords, ["x", "y", "z"])?,
        borrow_all::<T>(targets, ["s", "t", "u"])?,
    );
    let (c, t) = (slices(&c), slices(&t));
    let is3 = plan.transform_type() == TransformType::Type3;
    timed(py, || {
        if is3 {
            plan.set_points_type3(&c, &t)
        } else {
            plan.set_points(&c)
        }
    })
}

/// Runs `f` without the GIL; returns the seconds it took (the runtime's own time).
fn timed(py: Python<'_>, f: impl Send + FnOnce() -> nudt_runtime::Result<()>) -> PyResult<f64> {
    py.detach(|| {
        let t0 = Instant::now();
        f().map(|()| t0.elapsed().as_secs_f64())
    })
    .map_err(|e| to_py(py, e))
}

fn execute<T: Float>(
    py: Python<'_>,
    plan: &mut Plan<T>,
    data: &Bound<'_, PyAny>,
    out: &Bound<'_, PyAny>,
    adjoint: bool,
) -> PyResult<f64>
where
    Complex<T>: Element,
{
    let input = readonly::<Complex<T>>(data, "data")?;
    let mut output = readwrite::<Complex<T>>(out, "out")?;
    let input = input.as_slice().expect("readonly() checked C order");
    let output = output.as_slice_mut().expect("readwrite() checked C order");
    timed(py, || {
        if adjoint {
            plan.execute_adjoint(input, output)
        } else {
            plan.execute(input, output)
        }
    })
}

#[pymethods]
impl RawPlan {
    #[new]
    #[allow(clippy::too_many_arguments)]
    #[pyo3(signature = (nufft_type, modes, isign, n_trans, eps, single, fft_order, nthreads, upsampfac))]
    fn new(
        py: Python<'_>,
        nufft_type: u8,
        modes: Vec<usize>,
        isign: i32,
        n_trans: usize,
        eps: f64,
        single: bool,
        fft_order: bool,
        nthreads: usize,
        upsampfac: f64,
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
        let upsampling = if upsampfac == 0.0 {
            None
        } else {
            Some(Upsampling::new(upsampfac).map_err(|e| to_py(py, e.into()))?)
        };
        let opts = Options {
            mode_order: if fft_order {
                ModeOrder::Fft
            } else {
                ModeOrder::Cmcl
            },
            threads: (nthreads > 0).then_some(nthreads),
            upsampling,
            ..Options::default()
        };
        let plan = py
            .detach(|| {
                Ok(if single {
                    AnyPlan::F32(make(ty, &modes, isign, n_trans, eps, opts)?)
                } else {
                    AnyPlan::F64(make(ty, &modes, isign, n_trans, eps, opts)?)
                })
            })
            .map_err(|e| to_py(py, e))?;
        Ok(RawPlan {
            plan,
            last_call_s: 0.0,
        })
    }

    /// Sets the points (`coords`: one array per dimension) and, for type 3, the target
    /// frequencies (`targets`).
    fn setpts(
        &mut self,
        py: Python<'_>,
        coords: Vec<Bound<'_, PyAny>>,
        targets: Vec<Bound<'_, PyAny>>,
    ) -> PyResult<()> {
        self.last_call_s = match &mut self.plan {
            AnyPlan::F32(p) => setpts(py, p, &coords, &targets),
            AnyPlan::F64(p) => setpts(py, p, &coords, &targets),
        }?;
        Ok(())
    }

    /// Runs the transform (or its adjoint) from `data` into `out`, both C-contiguous.
    fn execute(
        &mut self,
        py: Python<'_>,
        data: &Bound<'_, PyAny>,
        out: &Bound<'_, PyAny>,
        adjoint: bool,
    ) -> PyResult<()> {
        self.last_call_s = match &mut self.plan {
            AnyPlan::F32(p) => execute(py, p, data, out, adjoint),
            AnyPlan::F64(p) => execute(py, p, data, out, adjoint),
        }?;
        Ok(())
    }

    /// Kernel width in grid points.
    #[getter]
    fn width(&self) -> usize {
        match &self.plan {
            AnyPlan::F32(p) => p.width(),
            AnyPlan::F64(p) => p.width(),
        }
    }

    /// Fine grid size per dimension (type 3: once the points are set).
    #[getter]
    fn fine_grid(&self) -> Vec<usize> {
        match &self.plan {
            AnyPlan::F32(p) => p.fine_grid(),
            AnyPlan::F64(p) => p.fine_grid(),
        }
    }

    fn __repr__(&self) -> String {
        match &self.plan {
            AnyPlan::F32(p) => format!("{p:?}"),
            AnyPlan::F64(p) => format!("{p:?}"),
        }
    }
}
