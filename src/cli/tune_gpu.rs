//! `nudt tune --backend cuda|opencl`: times each spreading (type 1) and interpolation (type
//! 2) method with its default bins and with each side halved and doubled, on one
//! representative problem per dimension and precision, and saves the fastest (set-points +
//! execute) where it beats the planner's own choice, in the device's profile
//! ([`nudt::planner::gpu_profile`], one format for both backends). Plans are made through the
//! one plan interface, so both backends are tuned by the same code.

use super::tune::{uniform_problem, Args};
use super::{fail, median, outln, Context, Result, Rng};
use nudt::backend::{Backend, BackendError, BackendFloat, BackendOptions};
use nudt::gen::gpu::GpuMethod;
use nudt::gen::Precision;
use nudt::num_complex::Complex;
use nudt::planner::gpu_profile::{self, GpuChoice, GpuConfig, GpuProfile, GpuTrial};
use nudt::TransformType;
use std::time::Instant;

/// Tolerances of the representative problems: where cuFINUFFT's benchmarks run each
/// precision.
const TOL_F64: f64 = 1e-6;
const TOL_F32: f64 = 1e-5;
/// A configuration replaces the planner's choice only when it is this much faster.
const MARGIN: f64 = 0.03;

/// A representative problem of one dimension: modes and points (the GPU benchmark's sizes;
/// a tenth of the points with `--quick`; or `--modes` per dimension and `--points`).
fn workload(dim: usize, args: &Args) -> (Vec<usize>, usize) {
    let quick = args.quick;
    let m = args
        .points
        .map_or(if quick { 1_000_000 } else { 10_000_000 }, |p| p as usize);
    let default = [1_000_000, 1000, 100][dim - 1];
    (vec![args.modes.map_or(default, |n| n as usize); dim], m)
}

/// Bin shapes around `d`: itself, then each side halved and doubled.
fn bin_candidates(d: &[usize]) -> Vec<Vec<usize>> {
    let mut v = vec![d.to_vec()];
    for i in 0..d.len() {
        for side in [d[i] / 2, d[i] * 2] {
            let mut b = d.to_vec();
            b[i] = side.max(1);
            if !v.contains(&b) {
                v.push(b);
            }
        }
    }
    v
}

/// What one configuration measured, and the bins and method its plan ran.
struct Timed {
    setpts_ms: f64,
    execute_ms: f64,
    bins: Vec<usize>,
    method: GpuMethod,
}

/// One timed configuration.
struct Row {
    dim: usize,
    ty: u8,
    precision: &'static str,
    method: GpuMethod,
    bins: Vec<usize>,
    /// Points a transform per mode of the problem timed.
    points_per_mode: f64,
    setpts_ms: f64,
    execute_ms: f64,
    default: bool,
    chosen: bool,
}

impl Row {
    /// The configuration it timed, as a profile names it.
    fn config(&self) -> GpuConfig {
        GpuConfig {
            dim: self.dim,
            ty: self.ty,
            precision: self.precision.into(),
            method: self.method.name().into(),
            bins: self.bins.clone(),
            points_per_mode: Some(self.points_per_mode),
        }
    }

    fn total(&self) -> f64 {
        self.setpts_ms + self.execute_ms
    }
}

/// The problem's data in `T`.
struct Problem<T: BackendFloat> {
    modes: Vec<usize>,
    x: Vec<Vec<T>>,
    c: Vec<Complex<T>>,
    f: Vec<Complex<T>>,
}

impl Problem<f64> {
    fn new(dim: usize, args: &Args, rng: &mut Rng) -> Self {
        let (modes, m) = workload(dim, args);
        let (x, c, f) = uniform_problem(&modes, m, rng);
        Problem { modes, x, c, f }
    }

    /// The same data rounded to f32.
    fn to_f32(&self) -> Problem<f32> {
        let c32 = |v: &[Complex<f64>]| {
            v.iter()
                .map(|z| Complex::new(z.re as f32, z.im as f32))
                .collect()
        };
        Problem {
            modes: self.modes.clone(),
            x: self
                .x
                .iter()
                .map(|v| v.iter().map(|&x| x as f32).collect())
                .collect(),
            c: c32(&self.c),
            f: c32(&self.f),
        }
    }
}

/// Whether `e` is a configuration the device cannot hold (bins beyond its local memory, a
/// method its blocks do not fit), which the tuner passes over.
fn refused(e: &BackendError) -> bool {
    match e {
        #[cfg(feature = "cuda")]
        BackendError::Cuda(nudt::cuda::CudaError::Unsupported(_)) => true,
        #[cfg(feature = "opencl")]
        BackendError::OpenCl(nudt::opencl::OpenClError::Method { .. }) => true,
        _ => false,
    }
}

impl<T: BackendFloat> Problem<T> {
    /// Median milliseconds (set-points, execute) of `repeats` runs on one plan, after one
    /// unmeasured run (a plan's first set-points allocates), with the bins and method used;
    /// `None` where the plan refuses the configuration. The device's own times where the
    /// backend has them (CUDA's events); else the wall time of set-points (to its end on
    /// the device) and of execute with its host copies, which are the same for every
    /// configuration compared.
    fn time(
        &self,
        backend: Backend,
        ty: TransformType,
        tol: f64,
        opts: &BackendOptions,
        repeats: usize,
    ) -> Result<Option<Timed>> {
        let mut plan = match backend.plan::<T>(ty, &self.modes, 1, 1, tol, opts) {
            Ok(p) => p,
            Err(e) if refused(&e) => return Ok(None),
            Err(e) => return Err(fail!("{backend} plan: {e}")),
        };
        let xs: Vec<&[T]> = self.x.iter().map(|v| &v[..]).collect();
        let (input, out_len) = match ty {
            TransformType::Type1 => (&self.c, self.f.len()),
            _ => (&self.f, self.c.len()),
        };
        let mut out = vec![Complex::<T>::default(); out_len];
        let (mut sp, mut ex) = (Vec::new(), Vec::new());
        for rep in 0..=repeats {
            let t0 = Instant::now();
            plan.set_points(&xs).context("set-points")?;
            plan.synchronize().context("set-points")?;
            let t1 = Instant::now();
            plan.execute(input, &mut out).context("execute")?;
            let wall = (ms(t1 - t0), ms(t1.elapsed()));
            let (s, e) = plan
                .report()
                .device_times
                .map_or(wall, |(s, e)| (s * 1e3, e * 1e3));
            if rep > 0 {
                sp.push(s);
                ex.push(e);
            }
        }
        let report = plan.report();
        let method = report
            .method
            .as_deref()
            .and_then(gpu_profile::method_named)
            .ok_or_else(|| fail!("{backend} plan reports no GPU method"))?;
        Ok(Some(Timed {
            setpts_ms: median(&sp),
            execute_ms: median(&ex),
            bins: report.bins.unwrap_or_default(),
            method,
        }))
    }
}

fn ms(d: std::time::Duration) -> f64 {
    d.as_secs_f64() * 1e3
}

/// Times one (dimension, type, precision): the planner's choice, then every method and bin
/// shape; marks the choice in `rows` and returns it.
fn tune_one<T: BackendFloat>(
    backend: Backend,
    p: &Problem<T>,
    ty: TransformType,
    repeats: usize,
    rows: &mut Vec<Row>,
) -> Result<GpuChoice> {
    let dim = p.modes.len();
    let (precision, tol) = match T::PRECISION {
        Precision::F32 => ("f32", TOL_F32),
        Precision::F64 => ("f64", TOL_F64),
    };
    let t_num = if ty == TransformType::Type1 { 1 } else { 2 };
    let points_per_mode = p.x[0].len() as f64 / p.modes.iter().product::<usize>() as f64;
    // Measure the planner itself, not the profile being replaced.
    let base = BackendOptions::default().with_gpu_profiles(false);
    let first = rows.len();
    let push = |rows: &mut Vec<Row>, timed: Option<Timed>, default| {
        if let Some(t) = timed {
            rows.push(Row {
                dim,
                ty: t_num,
                precision,
                method: t.method,
                bins: t.bins,
                points_per_mode,
                setpts_ms: t.setpts_ms,
                execute_ms: t.execute_ms,
                default,
                chosen: false,
            });
        }
    };
    let auto = p.time(backend, ty, tol, &base, repeats)?;
    if auto.is_none() {
        return Err(fail!(
            "{dim}-D type {t_num} {precision}: the planner's own choice was refused"
        ));
    }
    push(rows, auto, true);
    let methods: &[GpuMethod] = if ty == TransformType::Type1 {
        &[GpuMethod::GmSort, GpuMethod::Sm, GpuMethod::OutputDriven]
    } else {
        &[GpuMethod::GmSort, GpuMethod::Sm]
    };
    for &method in methods {
        let with = |bins: Option<[usize; 3]>| {
            let spread = Some(method).filter(|_| t_num == 1);
            let interp = Some(method).filter(|_| t_num == 2);
            base.clone()
                .with_gpu_methods(spread, interp)
                .with_gpu_bins(bins)
        };
        // The method's own bins, then the shapes around them.
        let Some(own) = p.time(backend, ty, tol, &with(None), repeats)? else {
            continue;
        };
        let around = bin_candidates(&own.bins);
        push(rows, Some(own), false);
        for b in around.into_iter().skip(1) {
            let bins = std::array::from_fn(|d| b.get(d).copied().unwrap_or(1));
            push(
                rows,
                p.time(backend, ty, tol, &with(Some(bins)), repeats)?,
                false,
            );
        }
    }
    let best = (first..rows.len())
        .min_by(|&a, &b| rows[a].total().total_cmp(&rows[b].total()))
        .expect("the planner's choice ran");
    // Timing noise is a few percent: keep the planner's choice unless clearly beaten.
    let pick = if rows[best].total() < (1.0 - MARGIN) * rows[first].total() {
        best
    } else {
        first
    };
    rows[pick].chosen = true;
    let r = &rows[pick];
    Ok(GpuChoice {
        config: r.config(),
        ms: r.total(),
        default_ms: rows[first].total(),
    })
}

/// The device `backend` tunes (its first), as the profile key and a line describing it.
fn device(backend: Backend) -> Result<(String, String)> {
    match backend {
        #[cfg(feature = "cuda")]
        Backend::Cuda => {
            let ctx = nudt::cuda::open(0).map_err(|e| fail!("no GPU to tune: {e}"))?;
            let arch = nudt::cuda::detect_arch(&ctx).context("GPU")?;
            Ok((nudt::cuda::profile_key(&arch), super::describe_gpu(&arch)))
        }
        #[cfg(feature = "opencl")]
        Backend::OpenCl => {
            let dev = nudt::opencl::ClDevice::first()
                .map_err(|e| fail!("no OpenCL device to tune: {e}"))?;
            let i = &dev.info;
            let line = format!(
                "{} ({}), {} compute units, local memory {} per work-group",
                i.name,
                i.platform,
                i.compute_units,
                super::fmt_bytes(i.local_mem)
            );
            Ok((i.profile_key(), line))
        }
        b => Err(fail!(
            "--backend {b}: this build has no {b} backend; build with `--features {}`",
            b.feature().unwrap_or_default()
        )),
    }
}

pub fn run(args: &Args, backend: Backend) -> Result<()> {
    let (key, line) = device(backend)?;
    let name = backend.name();
    let out_path = args.out_path(gpu_profile::default_path(name, &key))?;
    let dims = args.dims();
    let repeats = if args.quick { 3 } else { 5 };
    outln!(
        "nudt {} tune --backend {name}{}",
        env!("CARGO_PKG_VERSION"),
        if args.quick { " --quick" } else { "" }
    );
    outln!("device: {line} ({key})");
    super::flush_notes();
    let clock = match backend {
        Backend::Cuda => "GPU time of set-points + execute",
        _ => "wall time of set-points + execute (with its host copies)",
    };
    outln!(
        "problems: types 1 and 2, uniform points, f64 at {TOL_F64:e} and f32 at {TOL_F32:e}, {clock}, median of {repeats}\n"
    );
    let mut rows = Vec::new();
    let mut choices = Vec::new();
    let mut rng = Rng::new(7);
    for &dim in &dims {
        let p64 = Problem::new(dim, args, &mut rng);
        let p32 = p64.to_f32();
        for ty in [TransformType::Type1, TransformType::Type2] {
            choices.push(tune_one(backend, &p64, ty, repeats, &mut rows)?);
            choices.push(tune_one(backend, &p32, ty, repeats, &mut rows)?);
        }
    }
    print_table(&rows, &choices);
    let profile = GpuProfile {
        format: gpu_profile::FORMAT,
        nudt: env!("CARGO_PKG_VERSION").into(),
        gpu: key,
        created_unix: std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_secs()),
        quick: args.quick,
        choice: choices,
        trial: rows
            .iter()
            .map(|r| GpuTrial {
                config: r.config(),
                setpts_ms: r.setpts_ms,
                execute_ms: r.execute_ms,
            })
            .collect(),
    };
    if let Some(path) = out_path {
        let text = profile.to_toml(name).map_err(|e| fail!("profile: {e}"))?;
        super::profile::save_text(&text, &path)?;
        outln!(
            "\nsaved {}; {name} plans on this device model now take its choices for points \
             within {}x as dense as these problems' (--points, --modes)",
            path.display(),
            gpu_profile::DENSITY_SPAN
        );
    }
    Ok(())
}

fn print_table(rows: &[Row], choices: &[GpuChoice]) {
    outln!(
        "{:>3}  {:>4}  {:>4}  {:<13} {:<12} {:>10} {:>10} {:>10}  note",
        "dim",
        "type",
        "prec",
        "method",
        "bins",
        "setpts ms",
        "exec ms",
        "total ms"
    );
    for r in rows {
        let mut note = Vec::new();
        if r.default {
            note.push("planner's choice");
        }
        if r.chosen {
            note.push("<- chosen");
        }
        let bins: Vec<String> = r.bins.iter().map(usize::to_string).collect();
        outln!(
            "{:>3}  {:>4}  {:>4}  {:<13} {:<12} {:>10.3} {:>10.3} {:>10.3}  {}",
            r.dim,
            r.ty,
            r.precision,
            r.method.name(),
            bins.join("x"),
            r.setpts_ms,
            r.execute_ms,
            r.total(),
            note.join(", ")
        );
    }
    outln!();
    for c in choices {
        outln!(
            "chosen for {}-D type {} {}: {} with bins {:?}, {:.3} ms against {:.3} ms for the planner's choice ({:.2}×)",
            c.config.dim,
            c.config.ty,
            c.config.precision,
            c.config.method,
            c.config.bins,
            c.ms,
            c.default_ms,
            c.default_ms / c.ms
        );
    }
    outln!(
        "(a configuration replaces the planner's choice only when at least {:.0}% faster)",
        MARGIN * 100.0
    );
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bin_candidates_halve_and_double_each_side_once() {
        assert_eq!(
            bin_candidates(&[4, 4, 4]),
            vec![
                vec![4, 4, 4],
                vec![2, 4, 4],
                vec![8, 4, 4],
                vec![4, 2, 4],
                vec![4, 8, 4],
                vec![4, 4, 2],
                vec![4, 4, 8],
            ]
        );
        assert_eq!(bin_candidates(&[1]), vec![vec![1], vec![2]]);
    }
}
