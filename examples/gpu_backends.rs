//! The same NUFFTs on every GPU backend of this build, in one process, through the one plan
//! interface (`nudt::backend::NufftPlan`): the CUDA backend and the OpenCL backend on the same
//! GPU (OpenCL takes its first device, GPUs first). Host arrays in and out, as a user of the
//! interface passes them, so set-points and execute are timed on the host and include the
//! transfers, alike for both backends; set-points waits for the device (`synchronize`).
//! Each row also gives the relative l2 difference of the two backends' outputs.
//!
//! ```sh
//! cargo build --release --no-default-features --features cuda,opencl --example gpu_backends
//! ./target/release/examples/gpu_backends [--quick] [--only SUBSTRING] [--out FILE]
//! ```
//! The problems and their data are `cuda_bench`'s (`examples/common/gpu_problems.rs`), less
//! 10⁸ points and the seed's Gaussian cases: points uniform in [-π, π)^d, strengths complex
//! uniform, type 3 targets uniform in [-K/2, K/2)^d with K = M^(1/d). Times are medians of 3 (set-points on the
//! same plan, after a first call that allocates).

#[cfg(not(all(feature = "cuda", feature = "opencl")))]
fn main() {
    eprintln!("build with --features cuda,opencl");
}

#[cfg(all(feature = "cuda", feature = "opencl"))]
fn main() {
    if let Err(e) = bench::main() {
        eprintln!("gpu_backends: {e}");
        std::process::exit(1);
    }
}

#[cfg(all(feature = "cuda", feature = "opencl"))]
#[path = "common/gpu_problems.rs"]
mod gpu_problems;

#[cfg(all(feature = "cuda", feature = "opencl"))]
mod bench {
    use super::gpu_problems::{problems, unif, Problem};
    use nudt::backend::{Backend, BackendFloat, BackendOptions, NufftPlan};
    use nudt::num_complex::Complex;
    use nudt::TransformType;
    use std::error::Error;
    use std::time::Instant;

    type Res<T> = Result<T, Box<dyn Error>>;

    struct Timed<T> {
        plan_s: f64,
        setpts_s: f64,
        exec_s: f64,
        method: String,
        out: Vec<Complex<T>>,
    }

    fn median(mut v: Vec<f64>) -> f64 {
        v.sort_by(f64::total_cmp);
        v[v.len() / 2]
    }

    fn run_on<T: BackendFloat>(
        backend: Backend,
        p: &Problem,
        coords: &[Vec<T>],
        targets: &[Vec<T>],
        input: &[Complex<T>],
        out_len: usize,
    ) -> Res<Timed<T>> {
        let dim = p.modes.len();
        let opts = BackendOptions::default();
        let t = Instant::now();
        let mut plan: Box<dyn NufftPlan<T>> = match p.ty {
            TransformType::Type3 => backend.plan_type3::<T>(dim, 1, 1, p.tol, &opts)?,
            ty => backend.plan::<T>(
                ty,
                &p.modes,
                if ty == TransformType::Type2 { -1 } else { 1 },
                1,
                p.tol,
                &opts,
            )?,
        };
        let plan_s = t.elapsed().as_secs_f64();
        let xs: Vec<&[T]> = coords.iter().map(|v| v.as_slice()).collect();
        let ks: Vec<&[T]> = targets.iter().map(|v| v.as_slice()).collect();
        let set = |plan: &mut Box<dyn NufftPlan<T>>| -> Res<f64> {
            let t = Instant::now();
            match p.ty {
                TransformType::Type3 => plan.set_points_type3(&xs, &ks)?,
                _ => plan.set_points(&xs)?,
            }
            plan.synchronize()?;
            Ok(t.elapsed().as_secs_f64())
        };
        set(&mut plan)?;
        let setpts_s = median((0..3).map(|_| set(&mut plan)).collect::<Res<Vec<_>>>()?);
        let mut out = vec![Complex::<T>::default(); out_len];
        plan.execute(input, &mut out)?;
        let mut times = Vec::new();
        for _ in 0..3 {
            let t = Instant::now();
            plan.execute(input, &mut out)?;
            times.push(t.elapsed().as_secs_f64());
        }
        Ok(Timed {
            plan_s,
            setpts_s,
            exec_s: median(times),
            method: plan.report().method.unwrap_or_default(),
            out,
        })
    }

    fn row<T: BackendFloat>(p: &Problem) -> Res<String> {
        let dim = p.modes.len();
        let pi = std::f64::consts::PI;
        let data = |seed: u64, n: usize, lo: f64, hi: f64| -> Vec<T> {
            (0..n)
                .map(|j| T::from(lo + (hi - lo) * unif(seed, j as u64)).unwrap())
                .collect()
        };
        let coords: Vec<Vec<T>> = (0..dim).map(|d| data(d as u64 + 1, p.m, -pi, pi)).collect();
        let (targets, nmodes) = if p.ty == TransformType::Type3 {
            let t: Vec<Vec<T>> = (0..dim)
                .map(|d| data(d as u64 + 11, p.k, -p.s_half, p.s_half))
                .collect();
            (t, p.k)
        } else {
            (Vec::new(), p.modes.iter().product())
        };
        let (in_len, out_len) = match p.ty {
            TransformType::Type1 => (p.m, nmodes),
            TransformType::Type2 => (nmodes, p.m),
            TransformType::Type3 => (p.m, nmodes),
        };
        let input: Vec<Complex<T>> = data(7, 2 * in_len, -1.0, 1.0)
            .chunks(2)
            .map(|v| Complex::new(v[0], v[1]))
            .collect();
        let cuda = run_on(Backend::Cuda, p, &coords, &targets, &input, out_len)?;
        let ocl = run_on(Backend::OpenCl, p, &coords, &targets, &input, out_len)?;
        let (mut num, mut den) = (0.0, 0.0);
        for (a, b) in cuda.out.iter().zip(&ocl.out) {
            num += (a - b).norm_sqr().to_f64().unwrap();
            den += a.norm_sqr().to_f64().unwrap();
        }
        let ms = |s: f64| s * 1e3;
        let ratio = (ocl.setpts_s + ocl.exec_s) / (cuda.setpts_s + cuda.exec_s);
        Ok(format!(
            "| {} | {:.1} | {:.2} | {:.2} ({}) | {:.1} | {:.2} | {:.2} ({}) | {:.2} | {:.1e} |",
            p.name,
            ms(cuda.plan_s),
            ms(cuda.setpts_s),
            ms(cuda.exec_s),
            cuda.method,
            ms(ocl.plan_s),
            ms(ocl.setpts_s),
            ms(ocl.exec_s),
            ocl.method,
            ratio,
            (num / den).sqrt()
        ))
    }

    pub fn main() -> Res<()> {
        let args: Vec<String> = std::env::args().collect();
        let arg = |name: &str| {
            args.iter()
                .position(|a| a == name)
                .and_then(|i| args.get(i + 1).cloned())
        };
        let quick = args.iter().any(|a| a == "--quick");
        let only = arg("--only");
        let mut table = String::from(
            "| problem | CUDA plan ms | CUDA setpts ms | CUDA exec ms (method) | OpenCL plan ms | OpenCL setpts ms | OpenCL exec ms (method) | OpenCL / CUDA (setpts + exec) | rel. l2 difference |\n|---|---|---|---|---|---|---|---|---|\n",
        );
        // The seed cases' Gaussian method is CUDA-only, and 10⁸ points are more than this
        // comparison needs.
        for p in problems(quick)
            .into_iter()
            .filter(|p| !p.gaussian && p.m <= 10_000_000)
        {
            if only.as_ref().is_some_and(|o| !p.name.contains(o.as_str())) {
                continue;
            }
            let r = if p.f32 {
                row::<f32>(&p)
            } else {
                row::<f64>(&p)
            };
            let line = r.unwrap_or_else(|e| format!("| {} | failed: {e} |", p.name));
            eprintln!("{line}");
            table += &line;
            table.push('\n');
        }
        println!("{table}");
        if let Some(path) = arg("--out") {
            std::fs::write(path, &table)?;
        }
        Ok(())
    }
}
