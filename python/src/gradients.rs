//! Derivatives of a plan's transform for Python: the `vjp` and `jvp` methods of `RawPlan`,
//! on host arrays, through the runtime's [`gradient`] module (`RawCudaPlan`'s run on device
//! arrays: [`crate::cuda`]).
//!
//! A type 3 derivative weights its inputs and outputs by the sources and target frequencies
//! themselves, which the plan keeps only rescaled onto its grids: [`Held`] keeps a copy of
//! them beside the plan, under the plan's lock, so that a derivative always pairs the plan
//! with the points it was set with, whatever other threads do meanwhile.

use crate::arrays::{readonly, readonly_all, readwrite, slice, slices};
use crate::errors::{backend_to_py, value_error};
use crate::shared::Shared;
use nudt_runtime::backend::{BackendError, NufftPlan};
use nudt_runtime::gradient::{self, Tangents, Type3Points, Wanted};
use nudt_runtime::{Float, NudtError, TransformType};
use num_complex::Complex;
use numpy::{Element, PyArray1};
use pyo3::prelude::*;
use pyo3::types::PyTuple;

/// A type 3 plan's sources and target frequencies, one array per dimension each.
type PointSets<T> = (Vec<Vec<T>>, Vec<Vec<T>>);

/// A runtime plan and, for a type 3 plan made for gradients, its points as set.
pub struct Held<P, T> {
    pub plan: P,
    /// The sources and target frequencies of the last set-points that succeeded.
    type3: Option<PointSets<T>>,
}

/// Borrows of one point set's arrays as slices.
fn refs<T>(arrays: &[Vec<T>]) -> Vec<&[T]> {
    arrays.iter().map(|a| &a[..]).collect()
}

impl<P, T: Float> Held<P, T> {
    pub fn new(plan: P) -> Self {
        Held { plan, type3: None }
    }

    /// Runs `set` (the plan's type 3 set-points) and, if it succeeds and `keep`, keeps copies
    /// of `sources` and `targets` for the derivatives; a failed one leaves none, as the plan
    /// then holds no points either.
    pub fn set_type3<E>(
        &mut self,
        sources: &[&[T]],
        targets: &[&[T]],
        keep: bool,
        set: impl FnOnce(&mut P) -> Result<(), E>,
    ) -> Result<(), E> {
        self.type3 = None;
        set(&mut self.plan)?;
        if keep {
            let copy = |a: &[&[T]]| a.iter().map(|v| v.to_vec()).collect();
            self.type3 = Some((copy(sources), copy(targets)));
        }
        Ok(())
    }

    /// Drops the type 3 points of an earlier set-points (a type 1 or 2 plan keeps none).
    pub fn forget_type3(&mut self) {
        self.type3 = None;
    }
}

/// [`PointSets`] borrowed as slices.
type Slices<'a, T> = (Vec<&'a [T]>, Vec<&'a [T]>);

/// Borrows of the kept point sets, for the runtime's derivatives: `None` for types 1 and 2;
/// for a type 3 plan that kept none (a plan made for gradients whose set-points failed, or
/// that has not run) the plan has no points either.
fn borrowed<T>(
    ty: TransformType,
    type3: &Option<PointSets<T>>,
) -> Result<Option<Slices<'_, T>>, BackendError> {
    match (ty, type3) {
        (TransformType::Type3, None) => Err(NudtError::PointsNotSet.into()),
        (TransformType::Type3, Some((s, t))) => Ok(Some((refs(s), refs(t)))),
        _ => Ok(None),
    }
}

impl<P: NufftPlan<T>, T: Float> Held<P, T> {
    fn vjp(
        &mut self,
        data: &[Complex<T>],
        cotangent: &[Complex<T>],
        wanted: Wanted,
    ) -> Result<gradient::Cotangents<T>, BackendError> {
        let sets = borrowed(self.plan.transform_type(), &self.type3)?;
        let points = sets.as_ref().map(|(s, t)| Type3Points {
            sources: s,
            targets: t,
        });
        gradient::vjp(&mut self.plan, data, cotangent, points, wanted)
    }

    fn jvp(
        &mut self,
        data: &[Complex<T>],
        tangents: Tangents<'_, T>,
        out: &mut [Complex<T>],
    ) -> Result<(), BackendError> {
        let sets = borrowed(self.plan.transform_type(), &self.type3)?;
        let points = sets.as_ref().map(|(s, t)| Type3Points {
            sources: s,
            targets: t,
        });
        gradient::jvp(&mut self.plan, data, tangents, points, out)
    }
}

/// Refuses a derivative of a plan not made for them: its point derivatives would miss the
/// tolerance (the kernel meets `eps`, not `eps/10`), and a type 3 one would not have kept
/// its points.
pub fn check_gradients(py: Python<'_>, gradients: bool) -> PyResult<()> {
    match gradients {
        true => Ok(()),
        false => Err(value_error(
            py,
            "this plan was made without gradients=True: make it with gradients=True for vjp \
             and jvp (its kernel then meets eps/10, so that the derivatives meet eps)"
                .into(),
        )),
    }
}

/// How a binding finds the plan of a call's precision in its shared state `S`: `None` where
/// it has none to run (a CUDA plan whose last set-points failed).
pub type PickHeld<S, P, T> = fn(&mut S) -> Option<&mut Held<P, T>>;

/// Runs `work` on the plan `pick` finds in `shared`, in turn with the other calls and without
/// the GIL.
fn run_held<S: Send, P, T, R: Send>(
    py: Python<'_>,
    shared: &Shared<S>,
    pick: PickHeld<S, P, T>,
    work: impl Send + FnOnce(&mut Held<P, T>) -> Result<R, BackendError>,
) -> PyResult<R> {
    shared.run(py, backend_to_py, |s| match pick(s) {
        Some(h) => work(h),
        None => Err(NudtError::PointsNotSet.into()),
    })
}

/// The binding's `vjp`: borrows the arrays, runs [`gradient::vjp`] on the plan without the
/// GIL, returns `(input's cotangent or None, [points'...], [targets'...])` as 1-D arrays (the
/// Python layer shapes them).
pub fn vjp<'py, S: Send, P, T>(
    py: Python<'py>,
    shared: &Shared<S>,
    pick: PickHeld<S, P, T>,
    data: &Bound<'py, PyAny>,
    cotangent: &Bound<'py, PyAny>,
    wanted: Wanted,
) -> PyResult<Bound<'py, PyTuple>>
where
    T: Float + Element,
    Complex<T>: Element,
    P: NufftPlan<T>,
{
    let data = readonly::<Complex<T>>(data, "data")?;
    let cot = readonly::<Complex<T>>(cotangent, "cotangent")?;
    let (d, g) = (slice(&data), slice(&cot));
    let got = run_held(py, shared, pick, |h| h.vjp(d, g, wanted))?;
    let input = wanted
        .input
        .then(|| PyArray1::from_vec(py, got.input).into_any());
    let reals = |v: Vec<Vec<T>>| -> Vec<Bound<'py, PyArray1<T>>> {
        v.into_iter().map(|a| PyArray1::from_vec(py, a)).collect()
    };
    (input, reals(got.points), reals(got.targets)).into_pyobject(py)
}

/// The binding's `jvp`: the change of the output at input `data` for the changes `d_data`,
/// `d_points` and `d_targets` (each `None` where nothing changes), into `out`.
#[allow(clippy::too_many_arguments)]
pub fn jvp<'py, S: Send, P, T>(
    py: Python<'py>,
    shared: &Shared<S>,
    pick: PickHeld<S, P, T>,
    data: &Bound<'py, PyAny>,
    d_data: Option<&Bound<'py, PyAny>>,
    d_points: Option<Vec<Bound<'py, PyAny>>>,
    d_targets: Option<Vec<Bound<'py, PyAny>>>,
    out: &Bound<'py, PyAny>,
) -> PyResult<()>
where
    T: Float + Element,
    Complex<T>: Element,
    P: NufftPlan<T>,
{
    let data = readonly::<Complex<T>>(data, "data")?;
    let d_data = d_data
        .map(|a| readonly::<Complex<T>>(a, "d_data"))
        .transpose()?;
    let d_points = d_points
        .map(|a| readonly_all::<T>(&a, &["d_x", "d_y", "d_z"]))
        .transpose()?;
    let d_targets = d_targets
        .map(|a| readonly_all::<T>(&a, &["d_s", "d_t", "d_u"]))
        .transpose()?;
    let mut output = readwrite::<Complex<T>>(out, "out")?;
    let output = output.as_slice_mut().expect("readwrite() checked C order");
    let pts = d_points.as_deref().map(slices);
    let tgt = d_targets.as_deref().map(slices);
    let tangents = Tangents {
        input: d_data.as_ref().map(slice),
        points: pts.as_deref(),
        targets: tgt.as_deref(),
    };
    let data = slice(&data);
    run_held(py, shared, pick, |h| h.jvp(data, tangents, output))
}
