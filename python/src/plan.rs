//! `RawPlan`: the runtime's CPU plan in the precision the Python `Plan` asked for.

use crate::arrays::{readonly, readwrite};
use crate::errors::{to_py, value_error};
use crate::shared::Shared;
use nudt_runtime::{Float, ModeOrder, Options, Plan, TransformType, Upsampling};
use num_complex::Complex;
use numpy::{Element, PyReadonlyArrayDyn};
use pyo3::prelude::*;

enum AnyPlan {
    F32(Plan<f32>),
    F64(Plan<f64>),
}

impl AnyPlan {
    fn f32(&mut self) -> Option<&mut Plan<f32>> {
        match self {
            AnyPlan::F32(p) => Some(p),
            AnyPlan::F64(_) => None,
        }
    }

    fn f64(&mut self) -> Option<&mut Plan<f64>> {
        match self {
            AnyPlan::F64(p) => Some(p),
            AnyPlan::F32(_) => None,
        }
    }
}

/// How a call finds the plan of its precision `T` in an [`AnyPlan`].
type Pick<T> = fn(&mut AnyPlan) -> Option<&mut Plan<T>>;

/// A type 1, 2 or 3 plan in f32 (`single=True`) or f64. Arguments are already normalised by
/// `nudt.Plan`: `modes` in user order (x first), `isign` ±1, `nthreads` 0 for all threads,
/// `upsampfac` 0 for the planner's choice.
///
/// One plan may be used by several Python threads at once (finufft documents concurrent
/// `execute` calls as safe): see [`Shared`] for how calls take turns.
#[pyclass(module = "nudt._nudt", frozen)]
pub struct RawPlan {
    /// f32 or f64: fixed at construction, so calls borrow their arrays in it before they
    /// wait for the plan.
    single: bool,
    plan: Shared<AnyPlan>,
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
            single,
            plan: Shared::new(plan),
        })
    }

    /// Sets the points (`coords`: one array per dimension) and, for type 3, the target
    /// frequencies (`targets`).
    fn setpts(
        &self,
        py: Python<'_>,
        coords: Vec<Bound<'_, PyAny>>,
        targets: Vec<Bound<'_, PyAny>>,
    ) -> PyResult<()> {
        fn typed<T: Float + Element>(
            py: Python<'_>,
            plan: &Shared<AnyPlan>,
            coords: &[Bound<'_, PyAny>],
            targets: &[Bound<'_, PyAny>],
            pick: Pick<T>,
        ) -> PyResult<()> {
            let c = borrow_all::<T>(coords, ["x", "y", "z"])?;
            let t = borrow_all::<T>(targets, ["s", "t", "u"])?;
            let (c, t) = (slices(&c), slices(&t));
            plan.run(py, to_py, |p| {
                let p = pick(p).expect("precision");
                if p.transform_type() == TransformType::Type3 {
                    p.set_points_type3(&c, &t)
                } else {
                    p.set_points(&c)
                }
            })
        }
        if self.single {
            typed(py, &self.plan, &coords, &targets, AnyPlan::f32)
        } else {
            typed(py, &self.plan, &coords, &targets, AnyPlan::f64)
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
        fn typed<T: Float>(
            py: Python<'_>,
            plan: &Shared<AnyPlan>,
            data: &Bound<'_, PyAny>,
            out: &Bound<'_, PyAny>,
            adjoint: bool,
            pick: Pick<T>,
        ) -> PyResult<()>
        where
            Complex<T>: Element,
        {
            let input = readonly::<Complex<T>>(data, "data")?;
            let mut output = readwrite::<Complex<T>>(out, "out")?;
            let input = input.as_slice().expect("readonly() checked C order");
            let output = output.as_slice_mut().expect("readwrite() checked C order");
            plan.run(py, to_py, |p| {
                let p = pick(p).expect("precision");
                if adjoint {
                    p.execute_adjoint(input, output)
                } else {
                    p.execute(input, output)
                }
            })
        }
        if self.single {
            typed(py, &self.plan, data, out, adjoint, AnyPlan::f32)
        } else {
            typed(py, &self.plan, data, out, adjoint, AnyPlan::f64)
        }
    }

    /// Seconds the runtime spent in the last `setpts` or `execute` of this plan (by any
    /// thread), GIL released: what the Python layer adds is a call's wall time minus this.
    #[getter]
    fn last_call_s(&self, py: Python<'_>) -> PyResult<f64> {
        self.plan.last_call_s(py)
    }

    /// Kernel width in grid points.
    #[getter]
    fn width(&self, py: Python<'_>) -> PyResult<usize> {
        self.plan.with(py, |p| match p {
            AnyPlan::F32(p) => p.width(),
            AnyPlan::F64(p) => p.width(),
        })
    }

    /// Fine grid size per dimension (type 3: once the points are set).
    #[getter]
    fn fine_grid(&self, py: Python<'_>) -> PyResult<Vec<usize>> {
        self.plan.with(py, |p| match p {
            AnyPlan::F32(p) => p.fine_grid(),
            AnyPlan::F64(p) => p.fine_grid(),
        })
    }

    fn __repr__(&self, py: Python<'_>) -> PyResult<String> {
        self.plan.with(py, |p| match p {
            AnyPlan::F32(p) => format!("{p:?}"),
            AnyPlan::F64(p) => format!("{p:?}"),
        })
    }
}
