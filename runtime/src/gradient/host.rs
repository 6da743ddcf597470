//! The host's executor of a derivative's [`Steps`]: host slices, the plan's passes through
//! [`NufftPlan`], and loops for the element-wise steps. Every plan's default
//! ([`NufftPlan::run_gradient`]); the GPU plans run the same steps on the device instead.

use super::steps::{Cx, Lengths, Re, Set, Step, Steps};
use crate::backend::{BackendError, NufftPlan};
use crate::error::NudtError;
use crate::float::{zeroed, zeroed_reals, Float};
use crate::planner::stages::Pass;
use num_complex::Complex;
use rayon::prelude::*;

/// The host arrays a derivative's steps run on: the given ones, borrowed, and the real
/// arrays it writes, filled by [`run`] (`dim` arrays per set of [`Steps::writes`]).
pub struct HostArrays<'a, T> {
    pub input: &'a [Complex<T>],
    /// Empty where there is none.
    pub seed: &'a [Complex<T>],
    /// [`Steps::result`] values (empty where nothing is written there).
    pub result: &'a mut [Complex<T>],
    pub point_tangents: Option<&'a [&'a [T]]>,
    pub target_tangents: Option<&'a [&'a [T]]>,
    pub sources: Option<&'a [&'a [T]]>,
    pub targets: Option<&'a [&'a [T]]>,
    pub point_cotangents: Vec<Vec<T>>,
    pub target_cotangents: Vec<Vec<T>>,
}

impl<'a, T> HostArrays<'a, T> {
    /// The arrays of a set read, where given.
    pub fn reads(&self, set: Set) -> Option<&'a [&'a [T]]> {
        match set {
            Set::PointTangents => self.point_tangents,
            Set::TargetTangents => self.target_tangents,
            Set::Sources => self.sources,
            Set::Targets => self.targets,
            Set::PointCotangents | Set::TargetCotangents => None,
        }
    }

    /// The lengths [`Steps::check`] holds the steps to.
    pub fn check(&self, steps: &Steps) -> Result<(), NudtError> {
        check_result(steps, self.result.len())?;
        let reads = |set| {
            self.reads(set)
                .map_or(Vec::new(), |a| a.iter().map(|a| a.len()).collect())
        };
        steps.check(&Lengths {
            input: self.input.len(),
            seed: self.seed.len(),
            reads: &reads,
        })
    }

    fn written(&mut self, set: Set) -> &mut Vec<Vec<T>> {
        match set {
            Set::TargetCotangents => &mut self.target_cotangents,
            _ => &mut self.point_cotangents,
        }
    }
}

/// Checks the result array's length against the steps'.
pub(crate) fn check_result(steps: &Steps, got: usize) -> Result<(), NudtError> {
    match got == steps.result {
        true => Ok(()),
        false => Err(NudtError::Length {
            what: match steps.reverse {
                true => "input cotangent",
                false => "output tangent",
            }
            .into(),
            expected: steps.result,
            got,
        }),
    }
}

/// Runs `pass` of `plan` from `from` into `to` on host slices.
pub(crate) fn run_pass<T: Float, P: NufftPlan<T> + ?Sized>(
    plan: &mut P,
    pass: Pass,
    from: &[Complex<T>],
    to: &mut [Complex<T>],
) -> Result<(), BackendError> {
    let interpolates = super::interpolates(plan.transform_type(), pass.adjoint);
    match (pass.gradient, pass.adjoint) {
        (false, false) => plan.execute(from, to),
        (false, true) => plan.execute_adjoint(from, to),
        (true, adjoint) if interpolates => plan.interp_with_gradient(from, to, adjoint),
        (true, adjoint) => plan.spread_with_gradient(from, to, adjoint),
    }
}

/// Elements a task takes at least in the element-wise steps, which run on the calling
/// thread pool (a CPU plan's own, [`crate::Plan`]'s `run_gradient`).
const PAR_MIN: usize = 1 << 14;

/// Where a step writes complex values: the result (borrowed from the caller) or a work
/// array, moved out of its place while the step reads the others.
enum Dst<'a, T> {
    Result(&'a mut [Complex<T>]),
    Temp(usize, Vec<Complex<T>>),
    None,
}

impl<T> Dst<'_, T> {
    fn values(&mut self) -> &mut [Complex<T>] {
        match self {
            Dst::Result(r) => r,
            Dst::Temp(_, v) => v,
            Dst::None => &mut [],
        }
    }
}

/// Runs `steps` on `arrays` with `plan`'s passes, after checking them; the element-wise
/// steps run on the caller's thread pool.
pub fn run<T: Float, P: NufftPlan<T> + ?Sized>(
    plan: &mut P,
    steps: &Steps,
    arrays: &mut HostArrays<'_, T>,
) -> Result<(), BackendError> {
    run_on(plan, steps, arrays, None, &mut Vec::new())
}

/// [`run`] with the element-wise steps on `pool` (a CPU plan's own; the work arrays are
/// still allocated on the calling thread, whose malloc arena the plan's buffers come from),
/// and the work arrays taken from `scratch` where it holds one of the length a step needs,
/// and left there for the next call.
pub(crate) fn run_on<T: Float, P: NufftPlan<T> + ?Sized>(
    plan: &mut P,
    steps: &Steps,
    arrays: &mut HostArrays<'_, T>,
    pool: Option<&rayon::ThreadPool>,
    scratch: &mut Vec<Vec<Complex<T>>>,
) -> Result<(), BackendError> {
    let on_pool = |f: &mut (dyn FnMut() + Send)| match pool {
        Some(p) => p.install(f),
        None => f(),
    };
    arrays.check(steps)?;
    // Kept ones, or fresh ones untouched until the passes write them (a gradient pass's
    // `dim + 1` values a point are tens of MB: zeroing them here took as long as the pass).
    // A fresh array is zero already, and skips the steps that zero it.
    let mut fresh = Vec::new();
    let mut temps: Vec<Vec<Complex<T>>> = (steps.temps.iter())
        .map(|&n| match scratch.iter().position(|v| v.len() == n) {
            Some(i) => {
                fresh.push(false);
                scratch.swap_remove(i)
            }
            None => {
                fresh.push(true);
                zeroed(n)
            }
        })
        .collect();
    scratch.clear();
    for &(set, len) in &steps.writes {
        // Zeroed by the system, not written, and faulted in by the step that writes them.
        *arrays.written(set) = (0..steps.dim).map(|_| zeroed_reals(len)).collect();
    }
    let (input, seed) = (arrays.input, arrays.seed);
    let reads = [
        Set::PointTangents,
        Set::TargetTangents,
        Set::Sources,
        Set::Targets,
    ]
    .map(|set| (set, arrays.reads(set)));
    let real = |r: Re| -> &[T] {
        let given = reads
            .iter()
            .find(|(set, _)| *set == r.set)
            .and_then(|(_, a)| *a);
        given.expect("checked by Steps::check")[r.d]
    };
    for step in &steps.list {
        // The rules never read the array a step writes.
        let to = match *step {
            Step::Run { to, .. } | Step::Zero(to) => Some(to),
            Step::Scale { to, .. } => Some(to.array),
            Step::Reduce { .. } => None,
        };
        let mut dst = match to {
            Some(Cx::Result) => Dst::Result(std::mem::take(&mut arrays.result)),
            Some(Cx::Temp(i)) => Dst::Temp(i, std::mem::take(&mut temps[i])),
            _ => Dst::None,
        };
        let src = |a: Cx| -> &[Complex<T>] {
            match a {
                Cx::Input => input,
                Cx::Seed => seed,
                Cx::Temp(i) => &temps[i],
                Cx::Result => unreachable!("no step reads the result"),
            }
        };
        let out = dst.values();
        match *step {
            Step::Run { pass, from, .. } => run_pass(plan, pass, src(from), out)?,
            Step::Zero(Cx::Temp(i)) if fresh[i] => {}
            Step::Zero(_) => out.fill(Complex::default()),
            Step::Scale {
                to,
                from,
                count,
                weight,
                factor,
                add,
            } => {
                let v = src(from.array);
                let w = weight.map(real);
                // Element n is value `to.offset` of the n-th run of `to.stride` (the rules'
                // offsets are within their stride).
                let f = Complex::new(T::of(factor.re), T::of(factor.im));
                let each = |(n, run): (usize, &mut [Complex<T>])| {
                    let mut x = v[n * from.stride + from.offset];
                    if let Some(w) = w {
                        x = x * w[n % w.len()];
                    }
                    let o = &mut run[to.offset];
                    *o = x * f + if add { *o } else { Complex::default() };
                };
                on_pool(&mut || {
                    let runs = out.par_chunks_mut(to.stride).with_min_len(PAR_MIN);
                    runs.enumerate().take(count).for_each(each);
                });
            }
            Step::Reduce {
                to,
                dims,
                x,
                y,
                m,
                copies,
                factor,
            } => {
                let (xs, ys) = (src(x.array), src(y));
                let f = Complex::new(T::of(factor.re), T::of(factor.im));
                debug_assert!(dims <= 3, "one sum a dimension, at most three");
                // Every dimension's array by blocks of points, the blocks of all of them
                // taken together: one task a block writes its part of every array, from one
                // read of each point's values.
                let mut blocks: Vec<Vec<&mut [T]>> = Vec::new();
                for v in &mut arrays.written(to.set)[to.d..to.d + dims] {
                    let parts: Vec<&mut [T]> = v.chunks_mut(PAR_MIN).collect();
                    blocks.resize_with(parts.len(), Vec::new);
                    for (block, part) in blocks.iter_mut().zip(parts) {
                        block.push(part);
                    }
                }
                let mut blocks = Some(blocks);
                on_pool(&mut || {
                    let all = blocks.take().unwrap_or_default();
                    all.into_par_iter().enumerate().for_each(|(bi, mut outs)| {
                        for jj in 0..outs.first().map_or(0, |o| o.len()) {
                            let j = bi * PAR_MIN + jj;
                            let mut acc = [T::zero(); 3];
                            for b in 0..copies {
                                let n = b * m + j;
                                let (at, yc) = (n * x.stride + x.offset, ys[n].conj() * f);
                                for (k, a) in acc.iter_mut().take(dims).enumerate() {
                                    *a += (xs[at + k] * yc).re;
                                }
                            }
                            for (o, a) in outs.iter_mut().zip(acc) {
                                o[jj] = a;
                            }
                        }
                    })
                });
            }
        }
        match dst {
            Dst::Result(r) => arrays.result = r,
            Dst::Temp(i, v) => {
                temps[i] = v;
                fresh[i] = false;
            }
            Dst::None => {}
        }
    }
    *scratch = temps;
    Ok(())
}
