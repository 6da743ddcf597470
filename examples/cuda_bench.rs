//! The CUDA backend's methods one by one: the GPU benchmark is `nudt bench --backend cuda`
//! (with `--compare cufinufft`, beside cuFINUFFT's perftest), which times the method each plan
//! chooses by the protocol below; this example times every method of the same problems, with
//! `--bins`/`--sort` overrides, and the Capozzoli seed case, with setpts (the
//! sort: the first on a fresh plan with the memory pool emptied, the first on another fresh
//! plan that reuses what the pool kept (median of three such plans), then again on the same
//! plan) and execute timed separately
//! by CUDA events, every method, the device memory the plan holds, and the error against the
//! direct sum on sampled outputs. Points are set from device arrays, as cuFINUFFT's perftest
//! does, type 3 included. The seed cases also
//! run the Gaussian-gridding type 3 with the seed's own parameters (`Type3Method::
//! GaussianCapozzoli`), next to FINUFFT's scheme with the default (PSWF) kernel.
//!
//! ```sh
//! cargo run --release --no-default-features --features cuda --example cuda_bench -- [--quick] [--out FILE]
//!     [--csv FILE] [--only SUBSTRING] [--method auto|gm-sort|sm|output-driven|gaussian]
//!     [--bins B0,B1[,B2]] [--sort one|two]
//! ```
//! Prints a markdown table (and writes it to FILE; `--csv` writes the rows as CSV). Points uniform in [-π, π)^d, strengths
//! complex uniform; type 3 targets uniform in [-K/2, K/2)^d with K = M^(1/d) (benches/problems.toml).

#[cfg(not(feature = "cuda"))]
fn main() {
    eprintln!("build with --features cuda");
}

#[cfg(feature = "cuda")]
fn main() {
    if let Err(e) = bench::main() {
        eprintln!("cuda_bench: {e}");
        std::process::exit(1);
    }
}

#[cfg(feature = "cuda")]
#[path = "common/gpu_problems.rs"]
mod gpu_problems;

#[cfg(feature = "cuda")]
mod bench {
    use super::gpu_problems::{problems, unif, Problem};
    use nudt::cuda::{CudaError, CudaFloat, CudaOptions, CudaPlan, GpuMethod};
    use nudt::num_complex::Complex64;
    use nudt::{direct, ModeOrder, TransformType, Type3Method};
    use rayon::prelude::*;
    use std::f64::consts::PI;
    use std::time::Instant;

    fn coords<T: CudaFloat>(seed: u64, m: usize, lo: f64, hi: f64) -> Vec<T> {
        (0..m)
            .into_par_iter()
            .map(|j| T::of(lo + (hi - lo) * unif(seed, j as u64)))
            .collect()
    }

    fn strengths<T: CudaFloat>(seed: u64, n: usize) -> Vec<T> {
        (0..2 * n)
            .into_par_iter()
            .map(|j| T::of(2.0 * unif(seed, j as u64) - 1.0))
            .collect()
    }

    struct Row {
        name: String,
        method: String,
        /// The first set_points of a fresh plan with the memory pool emptied first: it maps
        /// the sort's buffers, as the first plan of a process does.
        setpts_cold_ms: f64,
        /// The first set_points of another fresh plan, made after the first was dropped: its
        /// buffers come from the memory the pool kept (every later plan of a process). The
        /// median of three such plans, each dropped before the next.
        setpts_first_ms: f64,
        /// The median of three more on the same plan (the buffers reused).
        setpts_ms: f64,
        exec_ms: f64,
        exec_min_ms: f64,
        err: f64,
        m: usize,
        plan_s: f64,
        /// Device memory the plan holds after set_points and execute (free memory before the
        /// plan was made minus after), and the device's used memory then, in MiB.
        plan_mib: f64,
        used_mib: f64,
    }

    /// Relative l2 error on sampled outputs against the direct sum.
    fn sampled_error<T: CudaFloat>(
        p: &Problem,
        x: &[Vec<T>],
        s: &[Vec<T>],
        input: &[T],
        output: &[T],
        isign: i32,
    ) -> f64 {
        let samples = if p.m >= 50_000_000 { 8 } else { 24 };
        let xw: Vec<Vec<f64>> = x
            .iter()
            .map(|v| v.par_iter().map(|a| a.wide()).collect())
            .collect();
        let xr: Vec<&[f64]> = xw.iter().map(|v| &v[..]).collect();
        let cin: Vec<Complex64> = input
            .par_chunks(2)
            .map(|v| Complex64::new(v[0].wide(), v[1].wide()))
            .collect();
        let out: Vec<Complex64> = output
            .chunks(2)
            .map(|v| Complex64::new(v[0].wide(), v[1].wide()))
            .collect();
        let nout = out.len();
        let which: Vec<usize> = (0..samples)
            .map(|i| ((unif(99, i as u64) * nout as f64) as usize).min(nout - 1))
            .collect();
        let exact = match p.ty {
            TransformType::Type1 => {
                direct::type1(&xr, &cin, &p.modes, ModeOrder::Cmcl, isign, &which)
            }
            TransformType::Type2 => {
                direct::type2(&xr, &cin, &p.modes, ModeOrder::Cmcl, isign, &which)
            }
            _ => {
                let sw: Vec<Vec<f64>> = s
                    .iter()
                    .map(|v| v.iter().map(|a| a.wide()).collect())
                    .collect();
                let sr: Vec<&[f64]> = sw.iter().map(|v| &v[..]).collect();
                direct::type3(&xr, &cin, &sr, isign, &which)
            }
        };
        let got: Vec<Complex64> = which.iter().map(|&i| out[i]).collect();
        direct::rel_error(&got, &exact)
    }

    /// Command-line overrides: bin sides for every problem, one method instead of all, and
    /// the sort's passes.
    struct Config {
        reps: usize,
        bins: Option<[usize; 3]>,
        method: Option<String>,
        two_pass_sort: Option<bool>,
    }

    fn driver_err(
        call: &str,
    ) -> impl Fn(nudt::cuda::cudarc::driver::DriverError) -> CudaError + '_ {
        move |e| CudaError::Driver {
            call: call.into(),
            detail: format!("{e:?}"),
        }
    }

    fn run<T: CudaFloat>(p: &Problem, cfg: &Config, rows: &mut Vec<Row>) -> Result<(), CudaError> {
        let reps = cfg.reps;
        let dim = p.modes.len();
        let isign = if p.ty == TransformType::Type2 { 1 } else { -1 };
        let t_gen = Instant::now();
        let x: Vec<Vec<T>> = (0..dim)
            .map(|d| coords::<T>(d as u64 + 1, p.m, -PI, PI))
            .collect();
        let s: Vec<Vec<T>> = if p.ty == TransformType::Type3 {
            (0..dim)
                .map(|d| coords::<T>(d as u64 + 11, p.k, -p.s_half, p.s_half))
                .collect()
        } else {
            Vec::new()
        };
        let nmodes: usize = p.modes.iter().product();
        let (nin, nout) = match p.ty {
            TransformType::Type1 => (p.m, nmodes),
            TransformType::Type2 => (nmodes, p.m),
            _ => (p.m, p.k),
        };
        let input = strengths::<T>(7, nin);
        eprintln!(
            "  [{}] data generated in {:.1} s",
            p.name,
            t_gen.elapsed().as_secs_f64()
        );
        let methods = vec![
            None,
            Some(GpuMethod::GmSort),
            Some(GpuMethod::Sm),
            Some(GpuMethod::OutputDriven),
        ];
        let mut variants: Vec<(Option<GpuMethod>, Type3Method)> = methods
            .into_iter()
            // Interpolation has no output-driven method.
            .filter(|m| p.ty != TransformType::Type2 || *m != Some(GpuMethod::OutputDriven))
            .map(|m| (m, Type3Method::Finufft))
            .collect();
        if p.gaussian {
            variants.push((None, Type3Method::GaussianCapozzoli));
        }
        let ctx = nudt::cuda::open(0)?;
        let mem = || -> Result<(usize, usize), CudaError> {
            ctx.synchronize().map_err(driver_err("cuCtxSynchronize"))?;
            ctx.mem_get_info().map_err(driver_err("cuMemGetInfo"))
        };
        // Gives the default pool's kept memory back, so that the next plan maps its own.
        let trim = || -> Result<(), CudaError> {
            use nudt::cuda::cudarc::driver::result::{device, mem_pool};
            ctx.synchronize().map_err(driver_err("cuCtxSynchronize"))?;
            // SAFETY: the device of a live context, and its default pool.
            unsafe {
                let pool = device::get_default_mem_pool(ctx.cu_device())
                    .map_err(driver_err("cuDeviceGetDefaultMemPool"))?;
                mem_pool::trim_to(pool, 0).map_err(driver_err("cuMemPoolTrimTo"))
            }
        };
        let stream = ctx.default_stream();
        let upload = |v: &[T]| stream.clone_htod(v).map_err(driver_err("clone_htod"));
        // Shared: a type 1/2 plan holds the coordinate arrays it sorted.
        let dx: Vec<_> = x
            .iter()
            .map(|v| upload(v).map(std::sync::Arc::new))
            .collect::<Result<_, _>>()?;
        let ds: Vec<_> = s.iter().map(|v| upload(v)).collect::<Result<_, _>>()?;
        let din = upload(&input)?;
        let mut dout = stream
            .alloc_zeros::<T>(2 * nout)
            .map_err(driver_err("alloc"))?;
        let make = |method: Option<GpuMethod>, type3| {
            let opts = CudaOptions {
                bins: cfg.bins,
                two_pass_sort: cfg.two_pass_sort,
                spread: method.filter(|_| p.ty != TransformType::Type2),
                interp: method.filter(|_| p.ty == TransformType::Type2),
                type3,
                stream: Some(stream.clone()),
                ..CudaOptions::default()
            };
            match p.ty {
                TransformType::Type3 => CudaPlan::<T>::new_type3(dim, isign, 1, p.tol, opts),
                ty => CudaPlan::<T>::new(ty, &p.modes, isign, 1, p.tol, opts),
            }
        };
        let set_points = |plan: &mut CudaPlan<T>| -> Result<f64, CudaError> {
            if p.ty == TransformType::Type3 {
                let rx: Vec<&_> = dx.iter().map(|a| a.as_ref()).collect();
                let rs: Vec<&_> = ds.iter().collect();
                plan.set_points_type3_device(&rx, &rs)?;
            } else {
                plan.set_points_device(&dx)?;
            }
            Ok(plan.timings()?.setpts_ms as f64)
        };
        // One untimed transform of each plan kind first: the first launch of every kernel
        // loads it (CUDA's lazy loading), which no later plan pays.
        for &(method, type3) in &variants {
            if let Ok(mut plan) = make(method, type3) {
                set_points(&mut plan)?;
                plan.execute_device(&din, &mut dout)?;
                plan.synchronize()?;
            }
        }
        for (method, type3) in variants {
            let gaussian = type3 == Type3Method::GaussianCapozzoli;
            let name = if gaussian {
                "gaussian"
            } else {
                method.map_or("auto", |m| m.name())
            };
            if cfg.method.as_ref().is_some_and(|want| want != name) {
                continue;
            }
            trim()?;
            let (free0, _) = mem()?;
            let t_plan = Instant::now();
            let mut plan = match make(method, type3) {
                Ok(p) => p,
                Err(CudaError::Unsupported(why)) => {
                    eprintln!("  [{}] {method:?}: unsupported ({why})", p.name);
                    continue;
                }
                Err(e) => return Err(e),
            };
            let plan_s = t_plan.elapsed().as_secs_f64();
            let setpts_cold = set_points(&mut plan)?;
            let mut again = Vec::new();
            for _ in 0..3 {
                again.push(set_points(&mut plan)?);
            }
            again.sort_by(f64::total_cmp);
            let setpts = again[1];
            let (free1, _) = mem()?;
            plan.execute_device(&din, &mut dout)?; // warm-up
            let (free2, total) = mem()?;
            let mut times = Vec::new();
            for _ in 0..reps {
                plan.execute_device(&din, &mut dout)?;
                times.push(plan.timings()?.execute_ms as f64);
            }
            let out = stream.clone_dtoh(&dout).map_err(driver_err("clone_dtoh"))?;
            let err = sampled_error(p, &x, &s, &input, &out, isign);
            let mean = times.iter().sum::<f64>() / times.len() as f64;
            let min = times.iter().cloned().fold(f64::INFINITY, f64::min);
            let chosen = plan
                .methods()
                .map(|(a, b)| {
                    if p.ty == TransformType::Type2 {
                        b.name()
                    } else {
                        a.name()
                    }
                })
                .unwrap_or("?");
            let label = match method {
                None if gaussian => format!("gaussian (seed params, width {})", plan.width()),
                None => format!("auto ({chosen})"),
                Some(m) => m.name().to_string(),
            };
            let (grid, bins) = (plan.fine_grid(), plan.bins());
            drop(plan);
            // A fresh plan's first call does host work (grids, cuFFT plans, mode maps for
            // type 3) whose time varies by a millisecond between plans: the median of three.
            let mut firsts = Vec::new();
            for _ in 0..3 {
                let mut fresh = make(method, type3)?;
                firsts.push(set_points(&mut fresh)?);
            }
            firsts.sort_by(f64::total_cmp);
            let setpts_first = firsts[1];
            let mib = |b: usize| b as f64 / (1u64 << 20) as f64;
            let free_min = free1.min(free2);
            let plan_mib = mib(free0.saturating_sub(free_min));
            let used_mib = mib(total - free_min);
            eprintln!(
                "  [{}] {label}: plan {plan_s:.2} s, setpts {setpts_cold:.3} ms cold, {setpts_first:.3} ms first, {setpts:.3} ms again, exec {mean:.3} ms (min {min:.3}), err {err:.1e}, plan {plan_mib:.0} MiB, grid {:?}, bins {:?}",
                p.name,
                grid,
                bins
            );
            rows.push(Row {
                name: p.name.clone(),
                method: label,
                setpts_cold_ms: setpts_cold,
                setpts_first_ms: setpts_first,
                setpts_ms: setpts,
                exec_ms: mean,
                exec_min_ms: min,
                err,
                m: p.m,
                plan_s,
                plan_mib,
                used_mib,
            });
        }
        Ok(())
    }

    pub fn main() -> Result<(), CudaError> {
        let args: Vec<String> = std::env::args().collect();
        let quick = args.iter().any(|a| a == "--quick");
        // The value after option `name`, if given.
        let value = |name: &str| {
            args.iter()
                .position(|a| a == name)
                .and_then(|i| args.get(i + 1).cloned())
        };
        let (out, csv_out, only) = (value("--out"), value("--csv"), value("--only"));
        let bins = value("--bins").map(|b| {
            let v: Vec<usize> = b.split(',').filter_map(|s| s.parse().ok()).collect();
            std::array::from_fn(|d| v.get(d).copied().unwrap_or(1))
        });
        let method = value("--method");
        let two_pass_sort = match value("--sort").as_deref() {
            None => None,
            Some("one") => Some(false),
            Some("two") => Some(true),
            Some(other) => {
                return Err(CudaError::Unsupported(format!(
                    "--sort takes one or two, not {other}"
                )))
            }
        };
        let cfg = Config {
            reps: 5,
            bins,
            method,
            two_pass_sort,
        };
        let reps = cfg.reps;
        let ctx = nudt::cuda::open(0)?;
        let arch = nudt::cuda::detect_arch(&ctx)?;
        let header = format!(
            "GPU: {} ({}, {} SMs, {} KiB shared/block opt-in, {} MiB L2), driver {}, NVRTC {:?}",
            arch.name,
            arch.sm(),
            arch.sm_count,
            arch.shared_mem_per_block_optin >> 10,
            arch.l2_bytes >> 20,
            nudt::cuda::driver_version()?,
            nudt::cuda::nvrtc_version()?
        );
        eprintln!("{header}");
        let mut rows = Vec::new();
        for p in problems(quick) {
            if only.as_ref().is_some_and(|o| !p.name.contains(o.as_str())) {
                continue;
            }
            let t = Instant::now();
            let r = if p.f32 {
                run::<f32>(&p, &cfg, &mut rows)
            } else {
                run::<f64>(&p, &cfg, &mut rows)
            };
            if let Err(e) = r {
                eprintln!("  [{}] FAILED: {e}", p.name);
            }
            eprintln!("  [{}] done in {:.1} s", p.name, t.elapsed().as_secs_f64());
        }
        let mut table = format!(
            "{header}\n\n| problem | method | setpts ms (fresh plan, pool empty) | setpts ms (fresh plan) | setpts ms (again) | execute ms (mean of {reps}) | min ms | points/s (exec) | rel. error (sampled) | plan MiB | device used MiB | plan s |\n|---|---|---|---|---|---|---|---|---|---|---|---|\n"
        );
        let mut csv = String::from(
            "problem,method,setpts_cold_ms,setpts_first_ms,setpts_ms,exec_ms,exec_min_ms,err,plan_mib,used_mib\n",
        );
        for r in &rows {
            table += &format!(
                "| {} | {} | {:.3} | {:.3} | {:.3} | {:.3} | {:.3} | {:.3e} | {:.1e} | {:.0} | {:.0} | {:.2} |\n",
                r.name,
                r.method,
                r.setpts_cold_ms,
                r.setpts_first_ms,
                r.setpts_ms,
                r.exec_ms,
                r.exec_min_ms,
                r.m as f64 / (r.exec_ms * 1e-3),
                r.err,
                r.plan_mib,
                r.used_mib,
                r.plan_s
            );
            csv += &format!(
                "{},{},{:.4},{:.4},{:.4},{:.4},{:.4},{:.2e},{:.1},{:.1}\n",
                r.name,
                r.method,
                r.setpts_cold_ms,
                r.setpts_first_ms,
                r.setpts_ms,
                r.exec_ms,
                r.exec_min_ms,
                r.err,
                r.plan_mib,
                r.used_mib
            );
        }
        println!("{table}");
        if let Some(path) = out {
            let _ = std::fs::write(path, &table);
        }
        if let Some(path) = csv_out {
            let _ = std::fs::write(path, &csv);
        }
        Ok(())
    }
}
