//! A derivative's [`Steps`] on the device, once for CUDA and OpenCL: the plan's passes
//! between device arrays, and the common module's `nudt_scale` and `nudt_grad_reduce`
//! for the element-wise steps. The arrays stay on the device from the first pass to the
//! last: on host arrays ([`run_host`]) only the inputs go up and the cotangents or the
//! output come down, where running the host's steps would copy each pass's `dim + 1` values
//! a point both ways.

use super::device::{Arg, Device};
use crate::error::NudtError;
use crate::float::{interleaved, interleaved_mut, Float};
use crate::gradient::host::{check_result, HostArrays};
use crate::gradient::steps::{Cx, Lengths, Set, Step, Steps, Strided};
use crate::gradient::{check_direction, interpolates};
use crate::planner::stages::Pass;
use nudt_gen::gpu::names;
use nudt_gen::TransformType;

/// The common module's two kernels of the derivatives.
#[derive(Clone, Debug)]
pub(crate) struct GradKernels<K> {
    scale: K,
    reduce: K,
}

impl<K> GradKernels<K> {
    /// Both kernels, each found by `load` from its generated name.
    pub fn load<E>(load: impl Fn(&'static str) -> Result<K, E>) -> Result<Self, E> {
        Ok(GradKernels {
            scale: load(names::SCALE)?,
            reduce: load(names::GRAD_REDUCE)?,
        })
    }
}

/// A device array of a derivative and its length (complex values for [`Cx`] arrays, reals
/// for a [`Set`]'s).
pub(crate) type Array<M> = (M, usize);

/// The device arrays a derivative's steps run on: the given ones and, per set the steps
/// write, its `dim` arrays.
pub(crate) struct DeviceArrays<M> {
    pub input: Array<M>,
    /// Length 0 where there is none.
    pub seed: Array<M>,
    pub result: Array<M>,
    pub reads: Vec<(Set, Vec<Array<M>>)>,
    pub writes: Vec<(Set, Vec<Array<M>>)>,
}

impl<M: Copy> DeviceArrays<M> {
    fn set(list: &[(Set, Vec<Array<M>>)], set: Set) -> Option<&[Array<M>]> {
        list.iter().find(|(s, _)| *s == set).map(|(_, a)| &a[..])
    }
}

/// A pass of the plan between device arrays: `(pass, from, to)`.
pub(crate) type PassFn<'a, M, E> = dyn FnMut(Pass, Array<M>, Array<M>) -> Result<(), E> + 'a;

/// Checks a pass a derivative's steps run on a device: a gradient pass in the direction
/// [`interpolates`] gives, which [`check_direction`] holds it to.
pub(crate) fn check_pass(ty: TransformType, pass: Pass) -> Result<(), NudtError> {
    match pass.gradient {
        true => check_direction(ty, pass.adjoint, interpolates(ty, pass.adjoint)),
        false => Ok(()),
    }
}

/// Runs `steps` on `a` with the plan's passes `pass`, after checking every array's length.
pub(crate) fn run<T: Float, D: Device<T>>(
    dev: &D,
    k: &GradKernels<D::Kernel>,
    steps: &Steps,
    a: &DeviceArrays<D::Mem>,
    pass: &mut PassFn<'_, D::Mem, D::Error>,
) -> Result<(), D::Error> {
    check_result(steps, a.result.1)?;
    let reads = |set| DeviceArrays::set(&a.reads, set).map_or(Vec::new(), lens);
    steps.check(&Lengths {
        input: a.input.1,
        seed: a.seed.1,
        reads: &reads,
    })?;
    for &(set, len) in &steps.writes {
        let given = DeviceArrays::set(&a.writes, set).unwrap_or(&[]);
        if given.len() != steps.dim || given.iter().any(|&(_, n)| n < len) {
            return Err(crate::NudtError::Length {
                what: set.name(steps.ty).into(),
                expected: len,
                got: given.iter().map(|&(_, n)| n).min().unwrap_or(0),
            }
            .into());
        }
    }
    let temps = (steps.temps.iter())
        .map(|&n| dev.alloc(2 * n, "a derivative's work array"))
        .collect::<Result<Vec<_>, _>>()?;
    let cx = |c: Cx| -> Array<D::Mem> {
        match c {
            Cx::Input => a.input,
            Cx::Seed => a.seed,
            Cx::Result => a.result,
            Cx::Temp(i) => (dev.mem(Some(&temps[i])), steps.temps[i]),
        }
    };
    let real = |set, d: usize| DeviceArrays::set(&a.reads, set).map(|v| v[d]);
    for step in &steps.list {
        match *step {
            Step::Run { pass: p, from, to } => pass(p, cx(from), cx(to))?,
            Step::Zero(to) => dev.zero(cx(to).0, 2 * cx(to).1)?,
            Step::Scale {
                to,
                from,
                count,
                weight,
                factor,
                add,
            } => {
                if count == 0 {
                    continue;
                }
                let none = (dev.mem(None), 0);
                let (w, wlen) = weight.and_then(|r| real(r.set, r.d)).unwrap_or(none);
                let mut args = strided(cx(to.array).0, to);
                args.insert(0, Arg::U64(count as u64));
                args.extend(strided(cx(from.array).0, from));
                args.extend([
                    Arg::Mem(w),
                    Arg::U64(wlen as u64),
                    Arg::F64(factor.re),
                    Arg::F64(factor.im),
                    Arg::I32(i32::from(add)),
                ]);
                dev.launch(&k.scale, count, 1, &args)?;
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
                if m == 0 {
                    continue;
                }
                // Every dimension's cotangent in one launch (the kernel takes up to three).
                let outs = DeviceArrays::set(&a.writes, to.set).expect("checked above");
                let slot = |k: usize| (k < dims).then(|| (outs[to.d + k].0, x.offset + k));
                let mut args = vec![
                    Arg::U64(m as u64),
                    Arg::U64(copies as u64),
                    Arg::I32(dims as i32),
                ];
                args.extend((0..3).map(|k| Arg::Mem(slot(k).map_or(dev.mem(None), |s| s.0))));
                args.extend([Arg::Mem(cx(x.array).0), Arg::U64(x.stride as u64)]);
                args.extend((0..3).map(|k| Arg::U64(slot(k).map_or(0, |s| s.1) as u64)));
                args.extend([Arg::Mem(cx(y).0), Arg::F64(factor.re), Arg::F64(factor.im)]);
                dev.launch(&k.reduce, m, 1, &args)?;
            }
        }
    }
    // The work arrays are freed in the order of the queue (after the work above).
    drop(temps);
    Ok(())
}

/// The lengths of arrays.
fn lens<M>(v: &[Array<M>]) -> Vec<usize> {
    v.iter().map(|&(_, n)| n).collect()
}

/// A strided array's four arguments: the array, its stride, its offset and (one batch) 0.
fn strided<M>(mem: M, s: Strided) -> Vec<Arg<M>> {
    vec![
        Arg::Mem(mem),
        Arg::U64(s.stride as u64),
        Arg::U64(s.offset as u64),
        Arg::U64(0),
    ]
}

/// [`run`] on host arrays: the given ones uploaded, the result and the written sets read
/// back into `host` once every step has run.
pub(crate) fn run_host<T: Float, D: Device<T>>(
    dev: &D,
    k: &GradKernels<D::Kernel>,
    steps: &Steps,
    host: &mut HostArrays<'_, T>,
    pass: &mut PassFn<'_, D::Mem, D::Error>,
) -> Result<(), D::Error> {
    host.check(steps)?;
    let up = |v: &[T], what| match v.is_empty() {
        true => dev.alloc(1, what),
        false => dev.upload(v, what),
    };
    let input = up(interleaved(host.input), "a derivative's input")?;
    let seed = up(interleaved(host.seed), "a derivative's seed")?;
    let result = dev.alloc(2 * steps.result.max(1), "a derivative's result")?;
    let mut owned = Vec::new();
    let mut reads = Vec::new();
    for &(set, _) in &steps.reads {
        let arrays = host.reads(set).unwrap_or(&[]);
        let bufs = (arrays.iter())
            .map(|v| up(v, set.name(steps.ty)))
            .collect::<Result<Vec<_>, _>>()?;
        reads.push((
            set,
            arrays
                .iter()
                .zip(&bufs)
                .map(|(v, b)| (dev.mem(Some(b)), v.len()))
                .collect(),
        ));
        owned.push(bufs);
    }
    let mut writes = Vec::new();
    for &(set, len) in &steps.writes {
        let bufs = (0..steps.dim)
            .map(|_| dev.alloc(len.max(1), set.name(steps.ty)))
            .collect::<Result<Vec<_>, _>>()?;
        writes.push((set, bufs.iter().map(|b| (dev.mem(Some(b)), len)).collect()));
        owned.push(bufs);
    }
    let arrays = DeviceArrays {
        input: (dev.mem(Some(&input)), host.input.len()),
        seed: (dev.mem(Some(&seed)), host.seed.len()),
        result: (dev.mem(Some(&result)), steps.result),
        reads,
        writes,
    };
    run(dev, k, steps, &arrays, pass)?;
    if steps.result > 0 {
        let got = dev.read(arrays.result.0, 2 * steps.result)?;
        interleaved_mut(host.result).copy_from_slice(&got);
    }
    for (set, bufs) in &arrays.writes {
        let got = (bufs.iter())
            .map(|&(m, n)| dev.read(m, n))
            .collect::<Result<Vec<_>, _>>()?;
        match set {
            Set::TargetCotangents => host.target_cotangents = got,
            _ => host.point_cotangents = got,
        }
    }
    Ok(())
}
