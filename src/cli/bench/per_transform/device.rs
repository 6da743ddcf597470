//! The CUDA rows' device-array steady state of `nudt bench --per-transform`: the stack's
//! points and inputs already in device memory, as a training loop on CUDA tensors holds
//! them. One plan given the sets by `set_points_per_transform_device` (the sets one after
//! another in one array per axis, a `(B, M)` tensor's layout) and executed on device
//! buffers, against a plan per transform given its own set's arrays and executed from and
//! into its part of the stack's buffers (type 3: both sets, `set_points_type3_per_transform_device`
//! against `set_points_type3_device`). No host copies on either side; each way ends by
//! synchronising the stream, and host wall time is taken (median of `repeats` after a
//! warm-up, the two ways in turn).

use super::super::super::median;
use super::{sampled_error, DeviceArrays, Stack, TOL};
use nudt::cuda::cudarc::driver::{CudaSlice, DriverError};
use nudt::cuda::{CudaError, CudaOptions, CudaPlan};
use nudt::num_complex::Complex64;
use nudt::TransformType;
use std::sync::Arc;
use std::time::Instant;

/// Borrows of shared device arrays, as the type 3 entry points take them.
fn refs(v: &[Arc<CudaSlice<f64>>]) -> Vec<&CudaSlice<f64>> {
    v.iter().map(|a| &**a).collect()
}

fn driver(call: &'static str) -> impl Fn(DriverError) -> String {
    move |e| format!("{call}: {e:?}")
}

/// Times the stack both ways on the first CUDA device.
pub(super) fn steady(stack: &Stack<'_>, repeats: usize) -> Result<DeviceArrays, String> {
    let (case, coords, targets) = (stack.case, &stack.data.coords, &stack.data.targets);
    let e = |e: CudaError| e.to_string();
    let ctx = nudt::cuda::open(0).map_err(e)?;
    let stream = ctx.default_stream();
    let up = |v: &[f64]| stream.clone_htod(v).map_err(driver("cuMemcpyHtoD"));
    let batch = stack.batch;
    let counts = vec![case.points; batch];
    let joined_of = |sets: &Vec<Vec<Vec<f64>>>| {
        sets.iter()
            .map(|axis| up(&axis.concat()).map(Arc::new))
            .collect::<Result<Vec<_>, _>>()
    };
    let apart_of = |sets: &Vec<Vec<Vec<f64>>>| {
        (0..batch)
            .map(|b| {
                sets.iter()
                    .map(|axis| up(&axis[b]).map(Arc::new))
                    .collect::<Result<Vec<_>, _>>()
            })
            .collect::<Result<Vec<_>, _>>()
    };
    let (joined, apart) = (joined_of(coords)?, apart_of(coords)?);
    let (joined_t, apart_t) = (joined_of(targets)?, apart_of(targets)?);

    let flat: Vec<f64> = stack.data.input.iter().flat_map(|c| [c.re, c.im]).collect();
    let din = up(&flat)?;
    let zeros = || {
        stream
            .alloc_zeros::<f64>(2 * stack.out_len)
            .map_err(driver("cuMemAlloc"))
    };
    let (mut dout_one, mut dout_apart): (CudaSlice<f64>, CudaSlice<f64>) = (zeros()?, zeros()?);
    let opts = || CudaOptions {
        stream: Some(stream.clone()),
        ..CudaOptions::default()
    };
    let plan = |n: usize| {
        match case.ty {
            TransformType::Type3 => CudaPlan::<f64>::new_type3(case.dim, 1, n, TOL, opts()),
            ty => CudaPlan::<f64>::new(ty, &case.modes, case.isign(), n, TOL, opts()),
        }
        .map_err(e)
    };
    let mut one = plan(batch)?;
    let mut separate = (0..batch).map(|_| plan(1)).collect::<Result<Vec<_>, _>>()?;
    let (each_in, each_out) = (flat.len() / batch, 2 * stack.out_len / batch);
    let sync = || stream.synchronize().map_err(driver("cuStreamSynchronize"));
    let mut run_one = || -> Result<f64, String> {
        let t0 = Instant::now();
        match case.ty {
            TransformType::Type3 => one.set_points_type3_per_transform_device(
                &refs(&joined),
                &refs(&joined_t),
                (&counts, &counts),
            ),
            _ => one.set_points_per_transform_device(&joined, &counts),
        }
        .map_err(e)?;
        one.execute_device(&din, &mut dout_one).map_err(e)?;
        sync()?;
        Ok(t0.elapsed().as_secs_f64())
    };
    let mut run_apart = || -> Result<f64, String> {
        let t0 = Instant::now();
        for (b, p) in separate.iter_mut().enumerate() {
            match case.ty {
                TransformType::Type3 => {
                    p.set_points_type3_device(&refs(&apart[b]), &refs(&apart_t[b]))
                }
                _ => p.set_points_device(&apart[b]),
            }
            .map_err(e)?;
            let x = din.slice(b * each_in..(b + 1) * each_in);
            let mut y = dout_apart.slice_mut(b * each_out..(b + 1) * each_out);
            p.execute_device(&x, &mut y).map_err(e)?;
        }
        sync()?;
        Ok(t0.elapsed().as_secs_f64())
    };
    run_one()?;
    run_apart()?;
    let (mut t_one, mut t_apart) = (Vec::new(), Vec::new());
    for _ in 0..repeats.max(1) {
        t_one.push(run_one()?);
        t_apart.push(run_apart()?);
    }
    let back = |d: &CudaSlice<f64>| -> Result<Vec<Complex64>, String> {
        let v = stream.clone_dtoh(d).map_err(driver("cuMemcpyDtoH"))?;
        Ok(v.chunks(2).map(|c| Complex64::new(c[0], c[1])).collect())
    };
    let (out, out_apart) = (back(&dout_one)?, back(&dout_apart)?);
    Ok(DeviceArrays {
        one_s: median(&t_one),
        separate_s: median(&t_apart),
        separate_diff: nudt::direct::rel_error(&out_apart, &out),
        error: sampled_error(case, stack.data, batch, &out),
    })
}
