//! The CUDA backend's timing protocol for `nudt bench --backend cuda`, the one cuFINUFFT's
//! perftest is read beside: device arrays in and out (points set from device arrays, type 3
//! included, as the perftest sets them), every time read from CUDA events on the plan's
//! stream.
//!
//! Set-points is timed three ways, since a user pays differently for it: the first call on a
//! fresh plan made with the memory pool emptied (it maps the sort's buffers, as the first plan
//! of a process does); the first call on a fresh plan made after an earlier plan of the same
//! size was dropped (its buffers come from what the pool kept: every later plan of a process;
//! the median of three such plans, since a fresh plan's first call does host work, grids,
//! FFT plans and type 3's mode maps, whose time varies by a millisecond); and again on one
//! plan (the median of three). Execute is the mean of `repeats` after one warm-up. Before
//! any of it, one untimed transform loads every kernel (CUDA's lazy loading), which no later
//! plan pays. Device memory: free memory before the plan minus after its set-points and
//! execute (what the plan holds), and the device's used memory then.

use super::super::problem::Problem;
use super::gpu::{chosen, median3, plan_for, upload_inputs, GpuTimes, Inputs, Timed};
use nudt::cuda::cudarc::driver::DriverError;
use nudt::cuda::{CudaContext, CudaError, CudaFloat, CudaOptions, CudaPlan};
use nudt::gen::Upsampling;
use nudt::num_complex::Complex;
use std::sync::Arc;
use std::time::Instant;

fn driver(call: &'static str) -> impl Fn(DriverError) -> String {
    move |e| format!("{call}: {e:?}")
}

/// Gives the default pool's kept memory back, so that the next plan maps its own.
fn trim(ctx: &Arc<CudaContext>) -> Result<(), String> {
    use nudt::cuda::cudarc::driver::result::{device, mem_pool};
    ctx.synchronize().map_err(driver("cuCtxSynchronize"))?;
    // SAFETY: the device of a live context, and its default pool.
    unsafe {
        let pool = device::get_default_mem_pool(ctx.cu_device())
            .map_err(driver("cuDeviceGetDefaultMemPool"))?;
        mem_pool::trim_to(pool, 0).map_err(driver("cuMemPoolTrimTo"))
    }
}

/// Free and total device memory once the device is idle.
fn free_mem(ctx: &Arc<CudaContext>) -> Result<(usize, usize), String> {
    ctx.synchronize().map_err(driver("cuCtxSynchronize"))?;
    ctx.mem_get_info().map_err(driver("cuMemGetInfo"))
}

/// Times `p` on the first CUDA device by the protocol above.
pub fn time<T: CudaFloat>(p: &Problem, d: &Inputs<T>, repeats: usize) -> Timed<T> {
    let e = |e: CudaError| e.to_string();
    let ctx = nudt::cuda::open(0).map_err(e)?;
    let stream = ctx.default_stream();
    let upload = |v: &[T]| stream.clone_htod(v).map_err(driver("cuMemcpyHtoD"));
    let (dx, ds, din) = upload_inputs(d, upload)?;
    // Shared: a type 1/2 plan holds the coordinate arrays it sorted.
    let dx: Vec<_> = dx.into_iter().map(Arc::new).collect();
    let mut dout = stream
        .alloc_zeros::<T>(2 * d.n_out)
        .map_err(driver("cuMemAlloc"))?;
    let opts = || CudaOptions {
        stream: Some(stream.clone()),
        upsampling: p.upsampfac.map(Upsampling),
        ..CudaOptions::default()
    };
    let make = || {
        plan_for(
            p,
            |ty, modes, isign, n, tol| CudaPlan::<T>::new(ty, modes, isign, n, tol, opts()),
            |dim, isign, n, tol| CudaPlan::<T>::new_type3(dim, isign, n, tol, opts()),
        )
    };
    let set_points = |plan: &mut CudaPlan<T>| -> Result<f64, String> {
        if p.ty == 3 {
            let rx: Vec<&_> = dx.iter().map(|a| a.as_ref()).collect();
            let rs: Vec<&_> = ds.iter().collect();
            plan.set_points_type3_device(&rx, &rs).map_err(e)?;
        } else {
            plan.set_points_device(&dx).map_err(e)?;
        }
        Ok(plan.timings().map_err(e)?.setpts_ms as f64 * 1e-3)
    };
    {
        let mut warm = make()?;
        set_points(&mut warm)?;
        warm.execute_device(&din, &mut dout).map_err(e)?;
        warm.synchronize().map_err(e)?;
    }
    trim(&ctx)?;
    let (free0, _) = free_mem(&ctx)?;
    let t_plan = Instant::now();
    let mut plan = make()?;
    let plan_s = t_plan.elapsed().as_secs_f64();
    let setpts_cold_s = set_points(&mut plan)?;
    let setpts_again_s = median3(|| set_points(&mut plan))?;
    let (free1, _) = free_mem(&ctx)?;
    plan.execute_device(&din, &mut dout).map_err(e)?;
    let (free2, total) = free_mem(&ctx)?;
    let mut exec = 0.0;
    for _ in 0..repeats {
        plan.execute_device(&din, &mut dout).map_err(e)?;
        exec += plan.timings().map_err(e)?.execute_ms as f64 * 1e-3;
    }
    let raw = stream.clone_dtoh(&dout).map_err(driver("cuMemcpyDtoH"))?;
    let out = raw.chunks(2).map(|c| Complex::new(c[0], c[1])).collect();
    let chosen = chosen!(p, plan);
    drop(plan);
    let setpts_s = median3(|| set_points(&mut make()?))?;
    let free_min = free1.min(free2);
    let times = GpuTimes {
        plan_s,
        setpts_cold_s: Some(setpts_cold_s),
        setpts_s,
        setpts_again_s,
        execute_s: exec / repeats as f64,
        chosen,
        plan_device_bytes: Some(free0.saturating_sub(free_min)),
        device_used_bytes: Some(total.saturating_sub(free_min)),
        io: "device arrays",
    };
    Ok((times, out))
}
