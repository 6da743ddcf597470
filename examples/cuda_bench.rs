//! GPU benchmark: the GPU rows of docs/peers.md (cuFINUFFT on an H100) and the
//! Capozzoli seed case, with setpts (the sort) and execute timed separately by CUDA events,
//! every method, and the error against the direct sum on sampled outputs. The seed cases also
//! run the Gaussian-gridding type 3 with the seed's own parameters (`Type3Method::
//! GaussianCapozzoli`), next to FINUFFT's scheme with the default (PSWF) kernel.
//!
//! ```sh
//! cargo run --release --no-default-features --features cuda --example cuda_bench -- [--quick] [--out FILE]
//!     [--only SUBSTRING] [--method auto|gm-sort|sm|output-driven|gaussian] [--bins B0,B1[,B2]]
//! ```
//! Prints a markdown table (and writes it to FILE). Points uniform in [-π, π)^d, strengths
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
mod bench {
    use nudt::cuda::{CudaError, CudaFloat, CudaMethod, CudaOptions, CudaPlan};
    use nudt::num_complex::Complex64;
    use nudt::{direct, ModeOrder, TransformType, Type3Method};
    use rayon::prelude::*;
    use std::f64::consts::PI;
    use std::time::Instant;

    /// Deterministic uniform in [0, 1) from (seed, index): splitmix64.
    fn unif(seed: u64, i: u64) -> f64 {
        let mut z = seed
            .wrapping_mul(0x9E37_79B9_7F4A_7C15)
            .wrapping_add(i.wrapping_mul(0xBF58_476D_1CE4_E5B9));
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^= z >> 31;
        (z >> 11) as f64 / (1u64 << 53) as f64
    }

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

    #[derive(Clone)]
    struct Problem {
        name: String,
        ty: u8,
        modes: Vec<usize>,
        m: usize,
        /// Type 3 targets.
        k: usize,
        /// Type 3 target box half-width (frequencies in [-s, s)).
        s_half: f64,
        tol: f64,
        f32: bool,
        peer_ms: Option<f64>,
        /// Also run the Gaussian-gridding type 3 (the seed cases).
        gaussian: bool,
    }

    fn problems(quick: bool) -> Vec<Problem> {
        let p = |name: &str, ty, modes: &[usize], m, tol, f32, peer| Problem {
            name: name.into(),
            ty,
            modes: modes.to_vec(),
            m,
            k: 0,
            s_half: 0.0,
            tol,
            f32,
            peer_ms: peer,
            gaussian: false,
        };
        let t3 = |name: &str, dim: usize, m: usize, k: usize, tol, peer| {
            let kk = (m as f64).powf(1.0 / dim as f64);
            Problem {
                name: name.into(),
                ty: 3,
                modes: vec![1; dim],
                m,
                k,
                s_half: kk / 2.0,
                tol,
                f32: false,
                peer_ms: peer,
                gaussian: false,
            }
        };
        let s = if quick { 10 } else { 1 };
        let mut v = vec![
            p(
                "1D t1 N=1e6 M=1e7 f32 1e-6",
                1,
                &[1_000_000],
                10_000_000 / s,
                1e-6,
                true,
                Some(0.639),
            ),
            p(
                "1D t1 N=1e6 M=1e7 f64 1e-6",
                1,
                &[1_000_000],
                10_000_000 / s,
                1e-6,
                false,
                Some(1.062),
            ),
            p(
                "2D t1 1000² M=1e7 f64 1e-6",
                1,
                &[1000, 1000],
                10_000_000 / s,
                1e-6,
                false,
                Some(2.350),
            ),
            p(
                "2D t2 1000² M=1e7 f64 1e-6",
                2,
                &[1000, 1000],
                10_000_000 / s,
                1e-6,
                false,
                Some(1.726),
            ),
            p(
                "2D t1 1000² M=1e7 f32 1e-5",
                1,
                &[1000, 1000],
                10_000_000 / s,
                1e-5,
                true,
                Some(1.382),
            ),
            p(
                "3D t1 100³ M=1e7 f64 1e-6",
                1,
                &[100, 100, 100],
                10_000_000 / s,
                1e-6,
                false,
                Some(13.24),
            ),
            p(
                "3D t2 100³ M=1e7 f64 1e-6",
                2,
                &[100, 100, 100],
                10_000_000 / s,
                1e-6,
                false,
                Some(8.067),
            ),
            p(
                "3D t1 100³ M=1e7 f32 1e-5",
                1,
                &[100, 100, 100],
                10_000_000 / s,
                1e-5,
                true,
                Some(5.820),
            ),
            p(
                "3D t2 100³ M=1e7 f32 1e-5",
                2,
                &[100, 100, 100],
                10_000_000 / s,
                1e-5,
                true,
                Some(2.993),
            ),
        ];
        if !quick {
            v.push(p(
                "3D t1 256³ M=1e8 f32 1e-5",
                1,
                &[256, 256, 256],
                100_000_000,
                1e-5,
                true,
                Some(60.87),
            ));
        }
        v.push(t3(
            "2D t3 M=1e6 → 1e6 f64 1e-6",
            2,
            1_000_000 / s,
            1_000_000 / s,
            1e-6,
            Some(0.919),
        ));
        v.push(t3(
            "3D t3 M=1e6 → 1e6 f64 1e-6",
            3,
            1_000_000 / s,
            1_000_000 / s,
            1e-6,
            Some(4.525),
        ));
        // The Capozzoli et al. seed case: 2D type 3, N = K² sources, K targets, tol 1e-10.
        for kk in [256usize, 512, 1024] {
            let mut q = t3(
                &format!("seed 2D t3 K={kk} (N=K²) f64 1e-10"),
                2,
                kk * kk,
                kk,
                1e-10,
                None,
            );
            q.s_half = kk as f64 / 2.0;
            q.gaussian = true;
            v.push(q);
        }
        v
    }

    struct Row {
        name: String,
        method: String,
        setpts_ms: f64,
        exec_ms: f64,
        exec_min_ms: f64,
        err: f64,
        peer_ms: Option<f64>,
        m: usize,
        plan_s: f64,
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
            1 => direct::type1(&xr, &cin, &p.modes, ModeOrder::Cmcl, isign, &which),
            2 => direct::type2(&xr, &cin, &p.modes, ModeOrder::Cmcl, isign, &which),
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

    /// Command-line overrides: bin sides for every problem, and one method instead of all.
    struct Config {
        reps: usize,
        bins: Option<[usize; 3]>,
        method: Option<String>,
    }

    fn run<T: CudaFloat>(p: &Problem, cfg: &Config, rows: &mut Vec<Row>) -> Result<(), CudaError> {
        let reps = cfg.reps;
        let dim = p.modes.len();
        let isign = if p.ty == 2 { 1 } else { -1 };
        let t_gen = Instant::now();
        let x: Vec<Vec<T>> = (0..dim)
            .map(|d| coords::<T>(d as u64 + 1, p.m, -PI, PI))
            .collect();
        let s: Vec<Vec<T>> = if p.ty == 3 {
            (0..dim)
                .map(|d| coords::<T>(d as u64 + 11, p.k, -p.s_half, p.s_half))
                .collect()
        } else {
            Vec::new()
        };
        let nmodes: usize = p.modes.iter().product();
        let (nin, nout) = match p.ty {
            1 => (p.m, nmodes),
            2 => (nmodes, p.m),
            _ => (p.m, p.k),
        };
        let input = strengths::<T>(7, nin);
        eprintln!(
            "  [{}] data generated in {:.1} s",
            p.name,
            t_gen.elapsed().as_secs_f64()
        );
        let methods: Vec<Option<CudaMethod>> = match p.ty {
            3 => vec![None],
            1 => vec![
                None,
                Some(CudaMethod::GmSort),
                Some(CudaMethod::Sm),
                Some(CudaMethod::OutputDriven),
            ],
            _ => vec![None, Some(CudaMethod::GmSort), Some(CudaMethod::Sm)],
        };
        let mut variants: Vec<(Option<CudaMethod>, Type3Method)> = methods
            .into_iter()
            .map(|m| (m, Type3Method::Finufft))
            .collect();
        if p.gaussian {
            variants.push((None, Type3Method::GaussianCapozzoli));
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
            let opts = CudaOptions {
                bins: cfg.bins,
                spread_method: method.filter(|_| p.ty != 2),
                interp_method: method.filter(|_| p.ty == 2),
                type3,
                ..CudaOptions::default()
            };
            let t_plan = Instant::now();
            let plan = match p.ty {
                1 => CudaPlan::<T>::new(TransformType::Type1, &p.modes, isign, 1, p.tol, opts),
                2 => CudaPlan::<T>::new(TransformType::Type2, &p.modes, isign, 1, p.tol, opts),
                _ => CudaPlan::<T>::new_type3(dim, isign, 1, p.tol, opts),
            };
            let mut plan = match plan {
                Ok(p) => p,
                Err(CudaError::Unsupported(why)) => {
                    eprintln!("  [{}] {method:?}: unsupported ({why})", p.name);
                    continue;
                }
                Err(e) => return Err(e),
            };
            let plan_s = t_plan.elapsed().as_secs_f64();
            let stream = plan.stream().clone();
            let upload = |v: &[T]| {
                stream.clone_htod(v).map_err(|e| CudaError::Driver {
                    call: "clone_htod".into(),
                    detail: format!("{e:?}"),
                })
            };
            let dx: Vec<_> = x.iter().map(|v| upload(v)).collect::<Result<_, _>>()?;
            let din = upload(&input)?;
            let mut dout = stream
                .alloc_zeros::<T>(2 * nout)
                .map_err(|e| CudaError::Driver {
                    call: "alloc".into(),
                    detail: format!("{e:?}"),
                })?;
            // set_points twice (the first pays lazy initialisation), timed by CUDA events.
            let mut setpts = f64::INFINITY;
            for _ in 0..2 {
                if p.ty == 3 {
                    let xr: Vec<&[T]> = x.iter().map(|v| &v[..]).collect();
                    let sr: Vec<&[T]> = s.iter().map(|v| &v[..]).collect();
                    plan.set_points_type3(&xr, &sr)?;
                } else {
                    let refs: Vec<&_> = dx.iter().collect();
                    plan.set_points_device(&refs)?;
                }
                setpts = setpts.min(plan.timings()?.setpts_ms as f64);
            }
            plan.execute_device(&din, &mut dout)?; // warm-up
            plan.synchronize()?;
            let mut times = Vec::new();
            for _ in 0..reps {
                plan.execute_device(&din, &mut dout)?;
                times.push(plan.timings()?.execute_ms as f64);
            }
            let out = stream.clone_dtoh(&dout).map_err(|e| CudaError::Driver {
                call: "clone_dtoh".into(),
                detail: format!("{e:?}"),
            })?;
            let err = sampled_error(p, &x, &s, &input, &out, isign);
            let mean = times.iter().sum::<f64>() / times.len() as f64;
            let min = times.iter().cloned().fold(f64::INFINITY, f64::min);
            let chosen = plan
                .methods()
                .map(|(a, b)| if p.ty == 2 { b.name() } else { a.name() })
                .unwrap_or("?");
            let label = match method {
                None if gaussian => format!("gaussian (seed params, width {})", plan.width()),
                None => format!("auto ({chosen})"),
                Some(m) => m.name().to_string(),
            };
            eprintln!(
                "  [{}] {label}: plan {plan_s:.2} s, setpts {setpts:.3} ms, exec {mean:.3} ms (min {min:.3}), err {err:.1e}, grid {:?}, bins {:?}",
                p.name,
                plan.fine_grid(),
                plan.bins()
            );
            rows.push(Row {
                name: p.name.clone(),
                method: label,
                setpts_ms: setpts,
                exec_ms: mean,
                exec_min_ms: min,
                err,
                peer_ms: p.peer_ms,
                m: p.m,
                plan_s,
            });
        }
        Ok(())
    }

    pub fn main() -> Result<(), CudaError> {
        let args: Vec<String> = std::env::args().collect();
        let quick = args.iter().any(|a| a == "--quick");
        let out = args
            .iter()
            .position(|a| a == "--out")
            .and_then(|i| args.get(i + 1).cloned());
        let only = args
            .iter()
            .position(|a| a == "--only")
            .and_then(|i| args.get(i + 1).cloned());
        let bins = args
            .iter()
            .position(|a| a == "--bins")
            .and_then(|i| args.get(i + 1))
            .map(|b| {
                let v: Vec<usize> = b.split(',').filter_map(|s| s.parse().ok()).collect();
                std::array::from_fn(|d| v.get(d).copied().unwrap_or(1))
            });
        let method = args
            .iter()
            .position(|a| a == "--method")
            .and_then(|i| args.get(i + 1).cloned());
        let cfg = Config {
            reps: 5,
            bins,
            method,
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
            "{header}\n\n| problem | method | setpts ms | execute ms (mean of {reps}) | min ms | points/s (exec) | rel. error (sampled) | cuFINUFFT best exec ms | ratio | plan s |\n|---|---|---|---|---|---|---|---|---|---|\n"
        );
        for r in &rows {
            let ratio = r
                .peer_ms
                .map_or("".into(), |p| format!("{:.2}", r.exec_ms / p));
            table += &format!(
                "| {} | {} | {:.3} | {:.3} | {:.3} | {:.3e} | {:.1e} | {} | {} | {:.2} |\n",
                r.name,
                r.method,
                r.setpts_ms,
                r.exec_ms,
                r.exec_min_ms,
                r.m as f64 / (r.exec_ms * 1e-3),
                r.err,
                r.peer_ms.map_or("".into(), |p| format!("{p}")),
                ratio,
                r.plan_s
            );
        }
        println!("{table}");
        if let Some(path) = out {
            let _ = std::fs::write(path, &table);
        }
        Ok(())
    }
}
