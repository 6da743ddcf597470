//! `RawPlan`: the runtime's CPU plan in the precision the Python `Plan` asked for.

use crate::arrays::{per_transform, readonly, readonly_all, slice, slices, with_io};
use crate::errors::{to_py, value_error};
use crate::gradients::{self, check_gradients, Held};
use crate::shared::Shared;
use nudt_runtime::gradient::Wanted;
use nudt_runtime::{Float, ModeOrder, Options, Plan, TransformType, Upsampling};
use num_complex::Complex;
use numpy::{Element, PyArray1};
use pyo3::prelude::*;
use pyo3::types::PyTuple;

enum AnyPlan {
    F32(Held<Plan<f32>, f32>),
    F64(Held<Plan<f64>, f64>),
}

impl AnyPlan {
    fn f32(&mut self) -> Option<&mut Held<Plan<f32>, f32>> {
        match self {
            AnyPlan::F32(p) => Some(p),
            AnyPlan::F64(_) => None,
        }
    }

    fn f64(&mut self) -> Option<&mut Held<Plan<f64>, f64>> {
        match self {
            AnyPlan::F64(p) => Some(p),
            AnyPlan::F32(_) => None,
        }
    }
}

/// Each transform's arrays as the runtime takes them, `sets[b][d]`.
fn borrow_sets<'a, T>(sets: &'a [Vec<&'a [T]>]) -> Vec<&'a [&'a [T]]> {
    sets.iter().map(|v| &v[..]).collect()
}

/// How a call finds the plan of its precision `T` in an [`AnyPlan`].
type Pick<T> = fn(&mut AnyPlan) -> Option<&mut Held<Plan<T>, T>>;

/// A type 1, 2 or 3 plan in f32 (`single=True`) or f64. Arguments are already normalised by
/// `nudt.Plan`: `modes` in user order (x first), `isign` ±1, `nthreads` 0 for all threads,
/// `upsampfac` 0 for the planner's choice, `gradients` for a plan meant for `vjp` and `jvp`
/// (`Options::gradients`).
///
/// One plan may be used by several Python threads at once (finufft documents concurrent
/// `execute` calls as safe): see [`Shared`] for how calls take turns.
#[pyclass(module = "nudt._nudt", frozen)]
pub struct RawPlan {
    /// f32 or f64: fixed at construction, so calls borrow their arrays in it before they
    /// wait for the plan.
    single: bool,
    /// Made for derivatives: fixed at construction, as `single`.
    gradients: bool,
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

#[pymethods]
impl RawPlan {
    #[new]
    #[allow(clippy::too_many_arguments)]
    #[pyo3(signature = (nufft_type, modes, isign, n_trans, eps, single, fft_order, nthreads, upsampfac,
                        gradients=false))]
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
            gradients,
            ..Options::default()
        };
        let plan = py
            .detach(|| {
                Ok(if single {
                    AnyPlan::F32(Held::new(make(ty, &modes, isign, n_trans, eps, opts)?))
                } else {
                    AnyPlan::F64(Held::new(make(ty, &modes, isign, n_trans, eps, opts)?))
                })
            })
            .map_err(|e| to_py(py, e))?;
        Ok(RawPlan {
            single,
            gradients,
            plan: Shared::new(plan),
        })
    }

    /// Sets the points (`coords`: one array per dimension) and, for type 3, the target
    /// frequencies (`targets`), of which a plan made for gradients keeps copies. With
    /// `counts` (type 3: and `target_counts`), a set per transform: the arrays are then the
    /// concatenations of the transforms' sets, `counts[b]` points (targets) in transform b.
    #[pyo3(signature = (coords, targets, counts=None, target_counts=None))]
    fn setpts(
        &self,
        py: Python<'_>,
        coords: Vec<Bound<'_, PyAny>>,
        targets: Vec<Bound<'_, PyAny>>,
        counts: Option<Vec<usize>>,
        target_counts: Option<Vec<usize>>,
    ) -> PyResult<()> {
        fn typed<T: Float + Element>(
            py: Python<'_>,
            plan: &Shared<AnyPlan>,
            (coords, targets): (&[Bound<'_, PyAny>], &[Bound<'_, PyAny>]),
            counts: Option<(Vec<usize>, Vec<usize>)>,
            pick: Pick<T>,
            keep: bool,
        ) -> PyResult<()> {
            let c = readonly_all::<T>(coords, &["x", "y", "z"])?;
            let t = readonly_all::<T>(targets, &["s", "t", "u"])?;
            let (c, t) = (slices(&c), slices(&t));
            let sets = counts
                .map(|(m, k)| -> PyResult<_> {
                    let targets = match t.is_empty() {
                        true => vec![Vec::new(); k.len()],
                        false => per_transform(py, &t, &k, "targets")?,
                    };
                    Ok((per_transform(py, &c, &m, "points")?, targets))
                })
                .transpose()?;
            plan.run(py, to_py, |p| {
                let h = pick(p).expect("precision");
                let three = h.plan.transform_type() == TransformType::Type3;
                match (&sets, three) {
                    (None, true) => h.set_type3(&c, &t, keep, |p| p.set_points_type3(&c, &t)),
                    (None, false) => {
                        h.forget_type3();
                        h.plan.set_points(&c)
                    }
                    (Some((xs, ss)), true) => {
                        let (xs, ss) = (borrow_sets(xs), borrow_sets(ss));
                        h.set_type3(&c, &t, keep, |p| p.set_points_type3_per_transform(&xs, &ss))
                    }
                    (Some((xs, _)), false) => {
                        h.forget_type3();
                        h.plan.set_points_per_transform(&borrow_sets(xs))
                    }
                }
            })
        }
        let counts = counts.map(|m| {
            let k = target_counts.unwrap_or_else(|| vec![0; m.len()]);
            (m, k)
        });
        let (keep, arrays) = (self.gradients, (&coords[..], &targets[..]));
        if self.single {
            typed(py, &self.plan, arrays, counts, AnyPlan::f32, keep)
        } else {
            typed(py, &self.plan, arrays, counts, AnyPlan::f64, keep)
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
            with_io((data, out), |input, output| {
                plan.run(py, to_py, |p| {
                    let p = &mut pick(p).expect("precision").plan;
                    if adjoint {
                        p.execute_adjoint(input, output)
                    } else {
                        p.execute(input, output)
                    }
                })
            })
        }
        if self.single {
            typed(py, &self.plan, data, out, adjoint, AnyPlan::f32)
        } else {
            typed(py, &self.plan, data, out, adjoint, AnyPlan::f64)
        }
    }

    /// Reverse mode at input `data` and output cotangent `cotangent` (C-contiguous, the
    /// plan's complex dtype, shaped as `execute`'s input and output): `(input's cotangent or
    /// None, [points'], [targets'])`, flat, each computed only if its `wrt_` flag is set
    /// (`gradient::vjp`). Needs a plan made with `gradients=True`.
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
            gradients::vjp(py, &self.plan, AnyPlan::f32, data, cotangent, wanted)
        } else {
            gradients::vjp(py, &self.plan, AnyPlan::f64, data, cotangent, wanted)
        }
    }

    /// Forward mode at input `data`: the change of the output for the changes `d_data`
    /// (shaped as `data`), `d_points` (one array per dimension; type 3: the sources') and
    /// `d_targets` (type 3), each None where nothing changes, written into `out`
    /// (`gradient::jvp`). Needs a plan made with `gradients=True`.
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
            let pick = AnyPlan::f32;
            gradients::jvp(py, &self.plan, pick, data, d_data, d_points, d_targets, out)
        } else {
            let pick = AnyPlan::f64;
            gradients::jvp(py, &self.plan, pick, data, d_data, d_points, d_targets, out)
        }
    }

    /// Types 1 and 2: the strengths `data` (one transform's, C-contiguous, the plan's complex
    /// dtype) spread onto the fine grid at the points, with neither FFT nor deconvolution
    /// (`Plan::spread_only`, the plan's schedule): a flat array of `fine_grid`'s size. With
    /// `interp_only`, the gridding pair of mri-nufft's "pipe" density compensation.
    fn spread_only<'py>(
        &self,
        py: Python<'py>,
        data: &Bound<'py, PyAny>,
    ) -> PyResult<Bound<'py, PyAny>> {
        fn typed<'py, T: Float>(
            py: Python<'py>,
            plan: &Shared<AnyPlan>,
            data: &Bound<'py, PyAny>,
            pick: Pick<T>,
        ) -> PyResult<Bound<'py, PyAny>>
        where
            Complex<T>: Element,
        {
            let input = readonly::<Complex<T>>(data, "data")?;
            let input = slice(&input);
            let grid = plan.run(py, to_py, |p| {
                let p = &pick(p).expect("precision").plan;
                p.spread_only(p.strategy(), input)
            })?;
            Ok(PyArray1::from_vec(py, grid).into_any())
        }
        if self.single {
            typed(py, &self.plan, data, AnyPlan::f32)
        } else {
            typed(py, &self.plan, data, AnyPlan::f64)
        }
    }

    /// Types 1 and 2: a fine grid as `spread_only` returns it, interpolated at the points
    /// (`Plan::interp_only`, the adjoint of `spread_only`): an array of one value per point.
    fn interp_only<'py>(
        &self,
        py: Python<'py>,
        grid: &Bound<'py, PyAny>,
    ) -> PyResult<Bound<'py, PyAny>> {
        fn typed<'py, T: Float>(
            py: Python<'py>,
            plan: &Shared<AnyPlan>,
            grid: &Bound<'py, PyAny>,
            pick: Pick<T>,
        ) -> PyResult<Bound<'py, PyAny>>
        where
            Complex<T>: Element,
        {
            let input = readonly::<Complex<T>>(grid, "grid")?;
            let input = slice(&input);
            let values = plan.run(py, to_py, |p| {
                pick(p).expect("precision").plan.interp_only(input)
            })?;
            Ok(PyArray1::from_vec(py, values).into_any())
        }
        if self.single {
            typed(py, &self.plan, grid, AnyPlan::f32)
        } else {
            typed(py, &self.plan, grid, AnyPlan::f64)
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
            AnyPlan::F32(h) => h.plan.width(),
            AnyPlan::F64(h) => h.plan.width(),
        })
    }

    /// Fine grid size per dimension (type 3: once the points are set).
    #[getter]
    fn fine_grid(&self, py: Python<'_>) -> PyResult<Vec<usize>> {
        self.plan.with(py, |p| match p {
            AnyPlan::F32(h) => h.plan.fine_grid(),
            AnyPlan::F64(h) => h.plan.fine_grid(),
        })
    }

    fn __repr__(&self, py: Python<'_>) -> PyResult<String> {
        self.plan.with(py, |p| match p {
            AnyPlan::F32(h) => format!("{:?}", h.plan),
            AnyPlan::F64(h) => format!("{:?}", h.plan),
        })
    }
}
