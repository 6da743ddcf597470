//! A stack of transforms on one device against the same stack over several
//! ([`nudt::MultiPlan`]): set-points and execute timed for each, how the multi-device plan
//! spread the stack (whole transforms in shares of it, or each transform in slabs), the
//! slabs' steps (spreading or interpolation, halos, the planes' FFTs, the transpose, the
//! columns' FFTs and the modes' gather), and how far the two results are apart.
//!
//! ```sh
//! cargo run --release --features cuda --example multi_device -- [--devices 2] [--modes 256]
//!     [--points 10000000] [--dim 3] [--type 1|2] [--ntransf 1] [--f32]
//! cargo run --release --features opencl --example multi_device -- --opencl --devices 2 --modes 32 --points 100000
//! ```
//! `--opencl` opens the first OpenCL device that many times (an emulation, not a speed-up).
//! `--ntransf 16` times a batch of 16 transforms sharing the points: at least one per
//! device, the devices run whole transforms at once. `--on-devices` (CUDA, one transform in
//! slabs) times arrays already on the GPUs: one GPU's plan on its device arrays
//! (`set_points_device`, `execute_device`) against the plan over several on each GPU's share
//! (`set_points_distributed`, `execute_distributed`), each synchronised.
//! Points uniform in [-π, π)^d, strengths complex uniform, tolerance 1e-6 (1e-4 with `--f32`).

#[cfg(not(any(feature = "cuda", feature = "opencl")))]
fn main() {
    eprintln!("build with --features cuda or --features opencl");
}

#[cfg(any(feature = "cuda", feature = "opencl"))]
fn main() {
    let args: Vec<String> = std::env::args().collect();
    let value = |name: &str, default: usize| {
        args.iter()
            .position(|a| a == name)
            .and_then(|i| args.get(i + 1)?.parse().ok())
            .unwrap_or(default)
    };
    let flag = |name: &str| args.iter().any(|a| a == name);
    let job = bench::Job {
        devices: value("--devices", 2),
        modes: vec![value("--modes", 128); value("--dim", 3)],
        points: value("--points", 1_000_000),
        ntransf: value("--ntransf", 1),
        ty: match value("--type", 1) {
            2 => nudt::TransformType::Type2,
            _ => nudt::TransformType::Type1,
        },
    };
    let r = match (flag("--opencl"), flag("--f32")) {
        _ if flag("--on-devices") => match flag("--f32") {
            false => bench::on_devices::<f64>(&job, 1e-6),
            true => bench::on_devices::<f32>(&job, 1e-4),
        },
        (true, false) => bench::opencl::<f64>(&job, 1e-6),
        (true, true) => bench::opencl::<f32>(&job, 1e-4),
        (false, false) => bench::cuda::<f64>(&job, 1e-6),
        (false, true) => bench::cuda::<f32>(&job, 1e-4),
    };
    if let Err(e) = r {
        eprintln!("multi_device: {e}");
        std::process::exit(1);
    }
}

#[cfg(any(feature = "cuda", feature = "opencl"))]
mod bench {
    use nudt::num_complex::Complex;
    use nudt::planner::devices::Spread;
    use nudt::{direct, Float, SetPointsTimes, StepTimes, TransformType};
    use rayon::prelude::*;
    use std::time::Instant;

    pub struct Job {
        pub devices: usize,
        pub modes: Vec<usize>,
        pub points: usize,
        pub ntransf: usize,
        pub ty: TransformType,
    }

    type Res<T> = Result<T, Box<dyn std::error::Error>>;

    /// The few calls a timed plan takes, one device's or several's.
    pub trait Timed<T> {
        fn points(&mut self, coords: &[&[T]]) -> Res<()>;
        fn run(&mut self, input: &[Complex<T>], output: &mut [Complex<T>]) -> Res<()>;
    }

    macro_rules! timed {
        ($bound:path: $($plan:ty),*) => {$(
            impl<T: $bound> Timed<T> for $plan {
                fn points(&mut self, coords: &[&[T]]) -> Res<()> {
                    Ok(self.set_points(coords)?)
                }
                fn run(&mut self, input: &[Complex<T>], output: &mut [Complex<T>]) -> Res<()> {
                    Ok(self.execute(input, output)?)
                }
            }
        )*};
    }

    #[cfg(feature = "cuda")]
    timed!(nudt::cuda::CudaFloat: nudt::cuda::CudaPlan<T>, nudt::cuda::CudaMultiPlan<T>);
    #[cfg(feature = "opencl")]
    timed!(nudt::opencl::ClFloat: nudt::opencl::ClPlan<T>, nudt::opencl::ClMultiPlan<T>);

    /// A value in [-1, 1) from `seed` and `i` (splitmix64).
    fn unif(seed: u64, i: u64) -> f64 {
        let mut z = seed.wrapping_add(i.wrapping_mul(0x9e3779b97f4a7c15));
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58476d1ce4e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d049bb133111eb);
        ((z ^ (z >> 31)) >> 11) as f64 / (1u64 << 52) as f64 - 1.0
    }

    /// Set-points and execute of `plan` on the job's data, in seconds, and its output.
    fn time<T: Float>(plan: &mut impl Timed<T>, job: &Job) -> Res<(f64, f64, Vec<Complex<T>>)> {
        let (x, input) = data::<T>(job);
        let coords: Vec<&[T]> = x.iter().map(Vec::as_slice).collect();
        let nmodes: usize = job.modes.iter().product();
        let b = match job.ty {
            TransformType::Type1 => nmodes,
            _ => job.points,
        };
        let mut out = vec![Complex::default(); b * job.ntransf];
        // A first round loads what a plan loads once (modules, FFT plans); the second is
        // timed.
        plan.points(&coords)?;
        plan.run(&input, &mut out)?;
        let t0 = Instant::now();
        plan.points(&coords)?;
        let t1 = Instant::now();
        plan.run(&input, &mut out)?;
        Ok(((t1 - t0).as_secs_f64(), t1.elapsed().as_secs_f64(), out))
    }

    /// The job's points and input (the first transform's), as [`time`] makes them.
    fn data<T: Float>(job: &Job) -> (Vec<Vec<T>>, Vec<Complex<T>>) {
        let of = |v: f64| T::from(v).unwrap_or_else(T::zero);
        let m = job.points;
        let x = (0..job.modes.len())
            .map(|d| {
                (0..m)
                    .into_par_iter()
                    .map(|j| of(std::f64::consts::PI * unif(d as u64, j as u64)))
                    .collect()
            })
            .collect();
        let nmodes: usize = job.modes.iter().product();
        let a = match job.ty {
            TransformType::Type1 => m,
            _ => nmodes,
        };
        let input = (0..a * job.ntransf)
            .into_par_iter()
            .map(|j| Complex::new(of(unif(7, j as u64)), of(unif(8, j as u64))))
            .collect();
        (x, input)
    }

    /// The relative error of the first transform of `out` against the direct sum at 16
    /// outputs: points spread over the set (type 2), or modes (type 1, each a sum over every
    /// point on the host's threads).
    fn sampled_error<T: Float>(job: &Job, out: &[Complex<T>]) -> f64 {
        let (x, input) = data::<T>(job);
        let wide = |c: Complex<T>| {
            Complex::new(c.re.to_f64().unwrap_or(0.0), c.im.to_f64().unwrap_or(0.0))
        };
        let order = nudt::ModeOrder::Cmcl;
        let (got, exact): (Vec<_>, Vec<_>) = match job.ty {
            TransformType::Type2 => {
                let which: Vec<usize> = (0..16).map(|i| i * (job.points / 16)).collect();
                let xs: Vec<Vec<f64>> = x
                    .iter()
                    .map(|xd| {
                        which
                            .iter()
                            .map(|&j| xd[j].to_f64().unwrap_or(0.0))
                            .collect()
                    })
                    .collect();
                let xs: Vec<&[f64]> = xs.iter().map(Vec::as_slice).collect();
                let f: Vec<_> = input.iter().map(|&c| wide(c)).collect();
                let exact =
                    direct::type2(&xs, &f, &job.modes, order, -1, &(0..16).collect::<Vec<_>>());
                (which.iter().map(|&j| wide(out[j])).collect(), exact)
            }
            _ => {
                let nmodes: usize = job.modes.iter().product();
                let which: Vec<usize> = (0..16).map(|i| i * (nmodes / 16) + i).collect();
                let exact = which
                    .iter()
                    .map(|&i| {
                        let k = direct::mode_of(i, &job.modes, order);
                        (0..job.points)
                            .into_par_iter()
                            .map(|j| {
                                let phase: f64 = (0..k.len())
                                    .map(|d| k[d] as f64 * x[d][j].to_f64().unwrap_or(0.0))
                                    .sum();
                                wide(input[j]) * Complex::from_polar(1.0, -phase)
                            })
                            .sum()
                    })
                    .collect();
                (which.iter().map(|&i| wide(out[i])).collect(), exact)
            }
        };
        direct::rel_error(&got, &exact)
    }

    fn report<T: Float>(
        job: &Job,
        one: (f64, f64, Vec<Complex<T>>),
        multi: (f64, f64, Vec<Complex<T>>),
        (steps, setpts, spread, link): Layout,
    ) {
        let widen = |v: &[Complex<T>]| -> Vec<Complex<f64>> {
            v.iter()
                .map(|c| Complex::new(c.re.to_f64().unwrap_or(0.0), c.im.to_f64().unwrap_or(0.0)))
                .collect()
        };
        let apart = direct::rel_error(&widen(&multi.2), &widen(&one.2));
        let (total1, total) = (one.0 + one.1, multi.0 + multi.1);
        println!(
            "{:?} modes {:?}, {} points, {} transforms, {:?}: one device set-points {:.4} s execute {:.4} s; {} devices set-points {:.4} s execute {:.4} s (execute {:.2}x, set-points + execute {:.2}x)",
            job.ty, job.modes, job.points, job.ntransf, T::PRECISION, one.0, one.1, job.devices, multi.0, multi.1, one.1 / multi.1, total1 / total
        );
        match spread {
            Spread::Batches(shares) => {
                println!("  whole transforms, shares {shares:?}; apart {apart:.2e}")
            }
            Spread::Slabs => slab_steps(link, steps, setpts, apart),
        }
    }

    /// What a multi-device plan reports of its last set-points and execute.
    type Layout = (StepTimes, SetPointsTimes, Spread, Option<&'static str>);

    /// A plan of slabs' steps.
    fn slab_steps(link: Option<&str>, steps: StepTimes, setpts: SetPointsTimes, apart: f64) {
        println!(
            "  slabs over {}, set-points: share {:.4} s, route {:.4} s, exchange {:.4} s, sort {:.4} s; execute: points {:.4} s, halos {:.4} s, planes {:.4} s, transpose {:.4} s, columns {:.4} s; apart {apart:.2e}",
            link.unwrap_or("-"), setpts.share, setpts.route, setpts.exchange, setpts.sort,
            steps.points, steps.halos, steps.planes, steps.transpose, steps.columns
        );
    }

    /// Both plans timed on the job's data, and the report; `steps` gives the multi-device
    /// plan's step times, spread and link.
    fn race<T: Float, M: Timed<T>>(
        job: &Job,
        mut one: impl Timed<T>,
        mut multi: M,
        steps: impl Fn(&M) -> Layout,
    ) -> Res<()> {
        let b = time(&mut multi, job)?;
        match time(&mut one, job) {
            Ok(a) => report(job, a, b, steps(&multi)),
            // A problem only several devices take (more points than one holds): theirs alone,
            // checked at sampled outputs.
            Err(e) => println!(
                "{:?} modes {:?}, {} points, {} transforms, {:?}: one device: {e}; {} devices set-points {:.4} s execute {:.4} s; error at 16 sampled outputs {:.2e}",
                job.ty, job.modes, job.points, job.ntransf, T::PRECISION, job.devices, b.0, b.1,
                sampled_error(job, &b.2)
            ),
        }
        Ok(())
    }

    #[cfg(feature = "cuda")]
    pub fn cuda<T: nudt::cuda::CudaFloat>(job: &Job, tol: f64) -> Res<()> {
        use nudt::cuda::{CudaMultiPlan, CudaOptions, CudaPlan};
        let opts = CudaOptions::default();
        let one = CudaPlan::<T>::new(job.ty, &job.modes, -1, job.ntransf, tol, opts.clone())?;
        let ids: Vec<usize> = (0..job.devices).collect();
        let multi =
            CudaMultiPlan::<T>::new(job.ty, &job.modes, (-1, job.ntransf, tol), &opts, &ids)?;
        race(job, one, multi, |m| {
            (m.step_times(), m.set_points_times(), m.spread(), m.link())
        })
    }

    // Generic as the built one is, so that `main` names the precision either way.
    #[cfg(not(feature = "cuda"))]
    #[allow(clippy::extra_unused_type_parameters)]
    pub fn cuda<T: Float>(_: &Job, _: f64) -> Res<()> {
        Err("build with --features cuda, or pass --opencl".into())
    }

    /// One GPU's plan on device arrays against the plan over several on each GPU's share,
    /// both synchronised, a warm-up round first; the outputs compared.
    #[cfg(feature = "cuda")]
    pub fn on_devices<T: nudt::cuda::CudaFloat>(job: &Job, tol: f64) -> Res<()> {
        use nudt::cuda::{CudaContext, CudaMultiPlan, CudaOptions, CudaPlan, CudaSlice};
        use nudt::planner::devices::shares;
        use std::sync::Arc;
        let (x, input) = data::<T>(job);
        let flat = |c: &[Complex<T>]| -> Vec<T> { c.iter().flat_map(|v| [v.re, v.im]).collect() };
        let (m, nmodes) = (job.points, job.modes.iter().product::<usize>());
        let spreads = job.ty == TransformType::Type1;
        let ctxs = (0..job.devices)
            .map(CudaContext::new)
            .collect::<Result<Vec<_>, _>>()?;
        let sync = |ctxs: &[Arc<CudaContext>]| -> Res<()> {
            ctxs.iter().try_for_each(|c| c.synchronize())?;
            Ok(())
        };
        // One GPU: everything on GPU 0.
        let s0 = ctxs[0].default_stream();
        let opts = CudaOptions::default();
        let mut one = CudaPlan::<T>::new(job.ty, &job.modes, -1, 1, tol, opts.clone())?;
        let xs: Vec<Arc<CudaSlice<T>>> = x
            .iter()
            .map(|a| s0.clone_htod(a).map(Arc::new))
            .collect::<Result<_, _>>()?;
        let inp = s0.clone_htod(&flat(&input))?;
        let mut out = s0.alloc_zeros::<T>(2 * if spreads { nmodes } else { m })?;
        let mut t_one = (0.0, 0.0);
        for _ in 0..2 {
            let t0 = Instant::now();
            one.set_points_device(&xs)?;
            sync(&ctxs[..1])?;
            let t1 = Instant::now();
            one.execute_device(&inp, &mut out)?;
            sync(&ctxs[..1])?;
            t_one = ((t1 - t0).as_secs_f64(), t1.elapsed().as_secs_f64());
        }
        let one_out = s0.clone_dtoh(&out)?;
        drop((xs, inp, out));
        // Several GPUs: each its share of the points and values, the modes by columns.
        let ids: Vec<usize> = (0..job.devices).collect();
        let mut multi = CudaMultiPlan::<T>::new(job.ty, &job.modes, (-1, 1, tol), &opts, &ids)?;
        let split = multi
            .decomposition()
            .ok_or("the plan runs whole transforms")?
            .clone();
        let (n0, cols) = (job.modes[0], split.columns());
        let share = shares(m, job.devices);
        let streams: Vec<_> = ctxs.iter().map(|c| c.default_stream()).collect();
        let points: Vec<Vec<CudaSlice<T>>> = (0..job.devices)
            .map(|r| {
                x.iter()
                    .map(|a| streams[r].clone_htod(&a[share[r].clone()]))
                    .collect()
            })
            .collect::<Result<_, _>>()?;
        let columns = |r: usize, f: &[T]| -> Vec<T> {
            let mut v = Vec::with_capacity(2 * split.column_range(r).len() * n0);
            for c in split.column_range(r) {
                for k in 0..n0 {
                    v.extend([f[2 * (k * cols + c)], f[2 * (k * cols + c) + 1]]);
                }
            }
            v
        };
        let flat_in = flat(&input);
        let ins: Vec<CudaSlice<T>> = (0..job.devices)
            .map(|r| match spreads {
                true => streams[r].clone_htod(&flat_in[2 * share[r].start..2 * share[r].end]),
                false => streams[r].clone_htod(&columns(r, &flat_in)),
            })
            .collect::<Result<_, _>>()?;
        let mut outs: Vec<CudaSlice<T>> = (0..job.devices)
            .map(|r| {
                let len = match spreads {
                    true => 2 * split.column_range(r).len() * n0,
                    false => 2 * share[r].len(),
                };
                streams[r].alloc_zeros::<T>(len.max(2))
            })
            .collect::<Result<_, _>>()?;
        sync(&ctxs)?;
        let arrays: Vec<Vec<&CudaSlice<T>>> = points.iter().map(|p| p.iter().collect()).collect();
        let arrays: Vec<&[&CudaSlice<T>]> = arrays.iter().map(Vec::as_slice).collect();
        let ins_ref: Vec<&CudaSlice<T>> = ins.iter().collect();
        let mut t_multi = (0.0, 0.0);
        for _ in 0..2 {
            let t0 = Instant::now();
            multi.set_points_distributed(&arrays)?;
            sync(&ctxs)?;
            let t1 = Instant::now();
            let mut outs_ref: Vec<&mut CudaSlice<T>> = outs.iter_mut().collect();
            multi.execute_distributed(&ins_ref, &mut outs_ref)?;
            sync(&ctxs)?;
            t_multi = ((t1 - t0).as_secs_f64(), t1.elapsed().as_secs_f64());
        }
        // The outputs in the one GPU's order.
        let mut got = vec![T::zero(); one_out.len()];
        for (r, o) in outs.iter().enumerate() {
            let v = streams[r].clone_dtoh(o)?;
            match spreads {
                true => {
                    for (q, c) in split.column_range(r).enumerate() {
                        for k in 0..n0 {
                            got[2 * (k * cols + c)] = v[2 * (k + n0 * q)];
                            got[2 * (k * cols + c) + 1] = v[2 * (k + n0 * q) + 1];
                        }
                    }
                }
                false => got[2 * share[r].start..2 * share[r].end]
                    .copy_from_slice(&v[..2 * share[r].len()]),
            }
        }
        let cx = |v: &[T]| -> Vec<Complex<f64>> {
            v.chunks(2)
                .map(|c| Complex::new(c[0].to_f64().unwrap_or(0.0), c[1].to_f64().unwrap_or(0.0)))
                .collect()
        };
        let apart = direct::rel_error(&cx(&got), &cx(&one_out));
        let (total1, total) = (t_one.0 + t_one.1, t_multi.0 + t_multi.1);
        println!(
            "{:?} modes {:?}, {} points, {:?}, arrays on the devices: one device set-points {:.4} s execute {:.4} s; {} devices set-points {:.4} s execute {:.4} s (execute {:.2}x, set-points + execute {:.2}x)",
            job.ty, job.modes, m, T::PRECISION, t_one.0, t_one.1, job.devices, t_multi.0, t_multi.1, t_one.1 / t_multi.1, total1 / total
        );
        let (steps, setpts) = (multi.step_times(), multi.set_points_times());
        slab_steps(multi.link(), steps, setpts, apart);
        Ok(())
    }

    // Generic as the built one is, so that `main` names the precision either way.
    #[cfg(not(feature = "cuda"))]
    #[allow(clippy::extra_unused_type_parameters)]
    pub fn on_devices<T: Float>(_: &Job, _: f64) -> Res<()> {
        Err("--on-devices runs on CUDA: build with --features cuda".into())
    }

    #[cfg(feature = "opencl")]
    pub fn opencl<T: nudt::opencl::ClFloat>(job: &Job, tol: f64) -> Res<()> {
        use nudt::opencl::{ClDevice, ClMultiPlan, ClOptions, ClPlan};
        let first = ClDevice::first()?;
        let devs = (0..job.devices)
            .map(|_| first.reopen())
            .collect::<Result<Vec<_>, _>>()?;
        let opts = ClOptions::default();
        let one = ClPlan::<T>::new(job.ty, &job.modes, -1, job.ntransf, tol, opts.clone())?;
        let multi =
            ClMultiPlan::<T>::new(job.ty, &job.modes, (-1, job.ntransf, tol), &opts, &devs)?;
        race(job, one, multi, |m| {
            (m.step_times(), m.set_points_times(), m.spread(), m.link())
        })
    }

    // Generic as the built one is, so that `main` names the precision either way.
    #[cfg(not(feature = "opencl"))]
    #[allow(clippy::extra_unused_type_parameters)]
    pub fn opencl<T: Float>(_: &Job, _: f64) -> Res<()> {
        Err("build with --features opencl".into())
    }
}
