//! The OpenCL backend's timing protocol for `nudt bench --backend opencl`: device buffers in
//! and out (the plan's `set_points_device` and `execute_device`), on the first device
//! (GPUs first), timed on the host with the queue finished after each call, since OpenCL's
//! profiling events belong to single commands, not to a plan's sequence of them.
//!
//! Set-points is the first call on a fresh plan (the median of three plans: the first call
//! builds the grids and sizes the sort's buffers), and again on one plan (the median of
//! three); execute is the mean of `repeats` after one warm-up, and one untimed transform
//! before any of it builds every program. OpenCL has no query of a device's free memory, so
//! the plan's device memory is not reported.

use super::super::problem::Problem;
use super::gpu::{chosen, median3, plan_for, upload_inputs, GpuTimes, Inputs, Timed};
use nudt::gen::Upsampling;
use nudt::num_complex::Complex;
use nudt::opencl::opencl3::memory::{Buffer, CL_MEM_READ_WRITE};
use nudt::opencl::opencl3::types::CL_BLOCKING;
use nudt::opencl::{ClDevice, ClFloat, ClOptions, ClPlan};
use std::sync::Arc;
use std::time::Instant;

/// A device buffer of the device's context holding `data`.
fn upload<T>(dev: &ClDevice, data: &[T]) -> Result<Buffer<T>, String> {
    // SAFETY: no host pointer; the buffer is written in full below before any use.
    let mut b = unsafe {
        Buffer::<T>::create(
            dev.context(),
            CL_MEM_READ_WRITE,
            data.len().max(1),
            std::ptr::null_mut(),
        )
    }
    .map_err(|e| format!("clCreateBuffer: {e}"))?;
    if !data.is_empty() {
        // SAFETY: `b` holds at least `data.len()` elements; the write blocks.
        unsafe {
            dev.queue()
                .enqueue_write_buffer(&mut b, CL_BLOCKING, 0, data, &[])
        }
        .map_err(|e| format!("clEnqueueWriteBuffer: {e}"))?;
    }
    Ok(b)
}

/// Times `p` on the first OpenCL device by the protocol above.
pub fn time<T: ClFloat>(p: &Problem, d: &Inputs<T>, repeats: usize) -> Timed<T> {
    let e = |e: nudt::opencl::OpenClError| e.to_string();
    let dev: Arc<ClDevice> = ClDevice::first().map_err(e)?;
    let finish = || dev.queue().finish().map_err(|e| format!("clFinish: {e}"));
    let (dx, ds, din) = upload_inputs(d, |v| upload(&dev, v))?;
    let mut dout = upload(&dev, &vec![T::default(); 2 * d.n_out])?;
    let opts = || ClOptions {
        device: Some(dev.clone()),
        upsampling: p.upsampfac.map(Upsampling),
        ..ClOptions::default()
    };
    let make = || {
        plan_for(
            p,
            |ty, modes, isign, n, tol| ClPlan::<T>::new(ty, modes, isign, n, tol, opts()),
            |dim, isign, n, tol| ClPlan::<T>::new_type3(dim, isign, n, tol, opts()),
        )
    };
    let set_points = |plan: &mut ClPlan<T>| -> Result<f64, String> {
        let t = Instant::now();
        let rx: Vec<&Buffer<T>> = dx.iter().collect();
        if p.ty == 3 {
            let rs: Vec<&Buffer<T>> = ds.iter().collect();
            plan.set_points_type3_device(&rx, &rs).map_err(e)?;
        } else {
            plan.set_points_device(&rx).map_err(e)?;
        }
        finish()?;
        Ok(t.elapsed().as_secs_f64())
    };
    let mut execute = |plan: &mut ClPlan<T>| -> Result<f64, String> {
        let t = Instant::now();
        plan.execute_device(&din, &mut dout).map_err(e)?;
        finish()?;
        Ok(t.elapsed().as_secs_f64())
    };
    {
        let mut warm = make()?;
        set_points(&mut warm)?;
        execute(&mut warm)?;
    }
    let t_plan = Instant::now();
    let mut plan = make()?;
    let plan_s = t_plan.elapsed().as_secs_f64();
    set_points(&mut plan)?;
    let setpts_again_s = median3(|| set_points(&mut plan))?;
    execute(&mut plan)?;
    let mut exec = 0.0;
    for _ in 0..repeats {
        exec += execute(&mut plan)?;
    }
    let mut raw = vec![T::default(); 2 * d.n_out];
    // SAFETY: `dout` holds `2·n_out` elements; the read blocks.
    unsafe {
        dev.queue()
            .enqueue_read_buffer(&dout, CL_BLOCKING, 0, &mut raw, &[])
    }
    .map_err(|e| format!("clEnqueueReadBuffer: {e}"))?;
    let out = raw.chunks(2).map(|c| Complex::new(c[0], c[1])).collect();
    let chosen = chosen!(p, plan);
    drop(plan);
    let setpts_s = median3(|| set_points(&mut make()?))?;
    let times = GpuTimes {
        plan_s,
        setpts_cold_s: None,
        setpts_s,
        setpts_again_s,
        execute_s: exec / repeats as f64,
        chosen,
        plan_device_bytes: None,
        device_used_bytes: None,
        io: "device buffers",
    };
    Ok((times, out))
}
