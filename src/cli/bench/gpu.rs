//! `nudt bench --backend cuda|opencl`: the GPU problem set (benches/gpu_problems.toml) on one
//! GPU backend, timed as a user of the device pays: set-points and execute from device arrays
//! with the device synchronised, and their sum; the device memory the plan holds where the
//! backend can say; the error against the direct sum at sampled outputs. With `--compare
//! cufinufft` (CUDA), cuFINUFFT's perftest runs every problem in the same run
//! ([`super::cufinufft`]) and each row gets the ratio of the two totals.
//!
//! The timing protocol of each backend is in its module ([`super::gpu_cuda`],
//! [`super::gpu_opencl`]); this one draws the data, checks the outputs and prints.

use super::super::problem::{self, Problem};
use super::super::{fail, fmt_rate, fmt_time, outln, Result, Rng};
use super::cufinufft::{PeerRun, Perftest};
use super::{insert_outcome, object, print_rows, problem_json, select};
use nudt::backend::Backend;
use nudt::gen::gpu::GpuMethod;
use nudt::num_complex::Complex;
use nudt::{Float, TransformType};
use serde::Serialize;
use serde_json::{json, Value};
use std::path::PathBuf;

/// What `nudt bench --backend cuda|opencl` takes from the command line.
pub struct GpuArgs {
    pub backend: Backend,
    pub problems: Option<PathBuf>,
    pub only: Vec<String>,
    pub scale: f64,
    pub repeats: usize,
    pub sample: usize,
    pub seed: u64,
    pub json: bool,
    /// cuFINUFFT's perftest (`--compare cufinufft --peer-bin PATH`).
    pub cufinufft: Option<PathBuf>,
}

/// One problem's data in its precision: points, input, type 3 targets, and the output's
/// length.
pub struct Inputs<T> {
    pub x: Vec<Vec<T>>,
    pub input: Vec<Complex<T>>,
    pub targets: Vec<Vec<T>>,
    pub n_out: usize,
}

/// What a backend measured of one problem (its fields are the JSON line's keys). Times in
/// seconds, the device synchronised.
#[derive(Debug, Serialize)]
pub struct GpuTimes {
    /// Making the plan (kernels compiled or loaded from the cache, FFT plans), on the host.
    pub plan_s: f64,
    /// The first set-points of a fresh plan with the device's memory pool emptied first (it
    /// maps its buffers, as the first plan of a process does), where the backend has a pool.
    pub setpts_cold_s: Option<f64>,
    /// The first set-points of a fresh plan (the median of three such plans): what a user
    /// who plans, sets points and executes once pays.
    pub setpts_s: f64,
    /// Set-points again on the same plan (the median of three): its buffers reused.
    pub setpts_again_s: f64,
    /// The mean of `--repeats` executes on one plan.
    pub execute_s: f64,
    #[serde(flatten)]
    pub chosen: Chosen,
    /// Device memory the plan holds once it has run (free memory before the plan minus
    /// after), where the backend can read it.
    pub plan_device_bytes: Option<usize>,
    /// The device's used memory while the plan lives (every process's, the benchmark's
    /// arrays included), where the backend can read it.
    pub device_used_bytes: Option<usize>,
    /// How data went in and out (device arrays, or host slices where a backend has none).
    pub io: &'static str,
}

/// The median of three calls of `f` (a time in seconds).
pub fn median3(
    mut f: impl FnMut() -> std::result::Result<f64, String>,
) -> std::result::Result<f64, String> {
    let mut v = [f()?, f()?, f()?];
    v.sort_by(f64::total_cmp);
    Ok(v[1])
}

/// The method a GPU plan chose for `p`: spreading for types 1 and 3, interpolation for 2.
pub fn method_name(p: &Problem, methods: Option<(GpuMethod, GpuMethod)>) -> String {
    methods
        .map(|(spread, interp)| if p.ty == 2 { interp } else { spread })
        .map_or("?", GpuMethod::name)
        .to_string()
}

/// The problem's data on a device: points (one array per dimension), type 3 targets, and the
/// input as interleaved reals.
pub type OnDevice<B> = (Vec<B>, Vec<B>, B);

/// Copies `d` to a device, one array at a time by `upload`.
pub fn upload_inputs<T: Float, B>(
    d: &Inputs<T>,
    upload: impl Fn(&[T]) -> std::result::Result<B, String>,
) -> std::result::Result<OnDevice<B>, String> {
    let all = |v: &[Vec<T>]| {
        v.iter()
            .map(|a| upload(a.as_slice()))
            .collect::<std::result::Result<Vec<B>, _>>()
    };
    let flat: Vec<T> = d.input.iter().flat_map(|c| [c.re, c.im]).collect();
    Ok((all(&d.x)?, all(&d.targets)?, upload(&flat)?))
}

/// The plan of `p` (one transform), by `uniform(type, modes, isign, ntransf, tol)` for types 1
/// and 2 or `type3(dim, isign, ntransf, tol)`: a backend's two constructors.
pub fn plan_for<P, E: std::fmt::Display>(
    p: &Problem,
    uniform: impl FnOnce(TransformType, &[usize], i32, usize, f64) -> std::result::Result<P, E>,
    type3: impl FnOnce(usize, i32, usize, f64) -> std::result::Result<P, E>,
) -> std::result::Result<P, String> {
    match p.ty {
        3 => type3(p.dim(), p.isign(), 1, p.tol),
        _ => uniform(p.transform(), &p.modes, p.isign(), 1, p.tol),
    }
    .map_err(|e| e.to_string())
}

/// What a GPU plan chose, read by the methods of that name every GPU plan type has.
#[derive(Debug, Serialize)]
pub struct Chosen {
    /// The method (spreading for types 1 and 3, interpolation for type 2).
    pub method: String,
    pub width: usize,
    pub sigma: f64,
    pub fine_grid: Vec<usize>,
    pub bins: Vec<usize>,
}

/// [`Chosen`] of GPU plan `$plan` for problem `$p`.
macro_rules! chosen {
    ($p:expr, $plan:expr) => {
        $crate::cli::bench::gpu::Chosen {
            method: $crate::cli::bench::gpu::method_name($p, $plan.methods()),
            width: $plan.width(),
            sigma: $plan.kernel().upsampling.0,
            fine_grid: $plan.fine_grid(),
            bins: $plan.bins(),
        }
    };
}
pub(super) use chosen;

/// A backend's measurement of one problem, and the outputs it computed.
pub type Timed<T> = std::result::Result<(GpuTimes, Vec<Complex<T>>), String>;

/// One row: nudt's figures with the sum of set-points and execute and the checked error.
#[derive(Debug, Serialize)]
struct GpuMeasured {
    #[serde(flatten)]
    times: GpuTimes,
    total_s: f64,
    points_per_s: f64,
    rel_error: Option<f64>,
}

/// Runs the GPU problem set on `a.backend`, which the caller found available.
pub fn run(a: GpuArgs) -> Result<()> {
    let backend = a.backend;
    let problems = select(problem::load_gpu_problems(a.problems.as_deref())?, &a.only)?;
    let problems: Vec<Problem> = problems.iter().map(|p| p.scaled(a.scale)).collect();
    for p in &problems {
        p.check_fits()?;
        if p.upsampfac.is_some() && a.cufinufft.is_some() {
            return Err(fail!(
                "problem '{}': `upsampfac` fixes nudt's σ alone (cuFINUFFT's perftest has no such option): run it without --compare cufinufft",
                p.name
            ));
        }
        if p.ntransf != 1 {
            return Err(fail!(
                "problem '{}': `ntransf` = {} is measured on --backend cpu only; the GPU set runs one transform a plan",
                p.name,
                p.ntransf
            ));
        }
    }
    let peer = a.cufinufft.as_deref().map(Perftest::locate).transpose()?;
    super::super::flush_notes();
    let mut rows = Vec::new();
    for p in &problems {
        let ours = measure(backend, p, &a);
        let theirs = peer.as_ref().map(|t| t.run(p, a.repeats));
        rows.push((ours, theirs));
    }
    let device = device_name(backend);
    if a.json {
        for (p, (ours, theirs)) in problems.iter().zip(&rows) {
            outln!("{}", json_line(p, &a, &device, ours, theirs.as_ref()));
        }
    } else {
        outln!(
            "nudt {} bench --backend {backend}: {} problem(s), points ×{}, execute the mean of {} run(s)",
            env!("CARGO_PKG_VERSION"),
            problems.len(),
            a.scale,
            a.repeats
        );
        outln!("device: {device}\n");
        print_table(backend, &problems, &rows, peer.is_some());
    }
    let failed: Vec<String> = problems
        .iter()
        .zip(&rows)
        .flat_map(|(p, (ours, theirs))| {
            let peer = theirs.as_ref().and_then(|t| t.as_ref().err());
            [
                ours.as_ref().err().map(|e| format!("{}: {e}", p.name)),
                peer.map(|e| format!("{} (cufinufft): {e}", p.name)),
            ]
        })
        .flatten()
        .collect();
    if !failed.is_empty() {
        return Err(fail!(
            "{} run(s) failed: {}",
            failed.len(),
            failed.join("; ")
        ));
    }
    Ok(())
}

/// Draws the data, has `backend` time the problem in its precision, and checks the outputs.
fn measure(backend: Backend, p: &Problem, a: &GpuArgs) -> std::result::Result<GpuMeasured, String> {
    match (backend, p.is_f32()) {
        #[cfg(feature = "cuda")]
        (Backend::Cuda, true) => measure_in::<f32>(p, a, super::gpu_cuda::time),
        #[cfg(feature = "cuda")]
        (Backend::Cuda, false) => measure_in::<f64>(p, a, super::gpu_cuda::time),
        #[cfg(feature = "opencl")]
        (Backend::OpenCl, true) => measure_in::<f32>(p, a, super::gpu_opencl::time),
        #[cfg(feature = "opencl")]
        (Backend::OpenCl, false) => measure_in::<f64>(p, a, super::gpu_opencl::time),
        _ => Err(format!(
            "--backend {backend} has no GPU benchmark in this build"
        )),
    }
}

fn measure_in<T: Float>(
    p: &Problem,
    a: &GpuArgs,
    time: fn(&Problem, &Inputs<T>, usize) -> Timed<T>,
) -> std::result::Result<GpuMeasured, String> {
    let mut rng = Rng::new(a.seed);
    let data = problem::make_data(p, &mut rng);
    let n_out = match p.ty {
        1 => p.modes.iter().product(),
        _ => p.points,
    };
    let d = Inputs {
        x: data.x.iter().map(|v| problem::narrow(v)).collect(),
        input: problem::narrow_c(&data.input),
        targets: data.targets.iter().map(|v| problem::narrow(v)).collect(),
        n_out,
    };
    drop(data);
    let (times, out) = time(p, &d, a.repeats)?;
    let checked = problem::check_outputs(p, (&d.x, &d.input, &d.targets), &out, a.sample, &mut rng);
    let total_s = times.setpts_s + times.execute_s;
    Ok(GpuMeasured {
        times,
        total_s,
        points_per_s: p.points as f64 / total_s,
        rel_error: checked.map(|c| c.rel_error).filter(|e| e.is_finite()),
    })
}

/// The device, in words.
fn device_name(backend: Backend) -> String {
    match backend {
        #[cfg(feature = "cuda")]
        Backend::Cuda => match super::super::probe_gpu() {
            Ok(arch) => super::super::describe_gpu(&arch),
            Err(e) => e,
        },
        #[cfg(feature = "opencl")]
        Backend::OpenCl => match nudt::opencl::ClDevice::first() {
            Ok(d) => format!("{} (OpenCL)", d.info.name),
            Err(e) => e.to_string(),
        },
        b => b.to_string(),
    }
}

/// nudt's total over cuFINUFFT's best (below 1: nudt is faster).
fn ratio(ours: &std::result::Result<GpuMeasured, String>, theirs: &PeerRun) -> Option<f64> {
    Some(ours.as_ref().ok()?.total_s / theirs.best.total_s())
}

fn json_line(
    p: &Problem,
    a: &GpuArgs,
    device: &str,
    ours: &std::result::Result<GpuMeasured, String>,
    theirs: Option<&std::result::Result<PeerRun, String>>,
) -> Value {
    let mut o = problem_json(p);
    o.extend(object(json!({
        "backend": a.backend.name(),
        "device": device,
        "repeats": a.repeats,
        "scale": a.scale,
        "impl": "nudt",
        "version": env!("CARGO_PKG_VERSION"),
    })));
    insert_outcome(&mut o, ours);
    if ours
        .as_ref()
        .is_ok_and(|m| m.times.plan_device_bytes.is_none())
    {
        let why = super::soak::device_memory(a.backend).err();
        o.insert("device_memory_note".into(), json!(why));
    }
    match theirs {
        Some(Ok(t)) => {
            o.insert("cufinufft".into(), json!(t));
            if let Some(r) = ratio(ours, t) {
                o.insert("ratio".into(), json!(r));
            }
        }
        Some(Err(e)) => {
            o.insert("cufinufft".into(), json!({ "error": e }));
        }
        None => {}
    }
    Value::Object(o)
}

fn mib(bytes: Option<usize>) -> String {
    bytes.map_or("-".into(), |b| {
        format!("{:.0} MiB", b as f64 / (1u64 << 20) as f64)
    })
}

/// nudt's figures for one problem and, with `--compare cufinufft`, the perftest's.
type Row = (
    std::result::Result<GpuMeasured, String>,
    Option<std::result::Result<PeerRun, String>>,
);

fn print_table(backend: Backend, problems: &[Problem], rows: &[Row], peer: bool) {
    let mut head: Vec<String> = [
        "problem",
        "type",
        "modes",
        "points",
        "prec",
        "tol",
        "w",
        "σ",
        "method",
        "plan",
        "setpts cold",
        "setpts",
        "again",
        "execute",
        "total",
        "points/s",
        "error",
        "plan mem",
    ]
    .map(String::from)
    .to_vec();
    if peer {
        head.extend(
            [
                "│",
                "cuFINUFFT",
                "setpts",
                "execute",
                "total",
                "mem",
                "ratio",
            ]
            .map(String::from),
        );
    }
    let mut lines = vec![head];
    let mut errors = Vec::new();
    for (p, (ours, theirs)) in problems.iter().zip(rows) {
        let mut row = vec![
            p.name.clone(),
            p.ty.to_string(),
            p.modes_label(),
            p.points.to_string(),
            p.precision.clone(),
            format!("{:.0e}", p.tol),
        ];
        match ours {
            Ok(m) => {
                let t = &m.times;
                row.extend([
                    t.chosen.width.to_string(),
                    format!("{}", t.chosen.sigma),
                    t.chosen.method.clone(),
                    fmt_time(t.plan_s),
                    t.setpts_cold_s.map_or("-".into(), fmt_time),
                    fmt_time(t.setpts_s),
                    fmt_time(t.setpts_again_s),
                    fmt_time(t.execute_s),
                    fmt_time(m.total_s),
                    fmt_rate(m.points_per_s),
                    m.rel_error.map_or("-".into(), |e| format!("{e:.1e}")),
                    mib(t.plan_device_bytes),
                ]);
            }
            Err(e) => {
                row.extend(std::iter::repeat_n("failed".to_string(), 12));
                errors.push(format!("{}: {e}", p.name));
            }
        }
        match theirs {
            Some(Ok(t)) => row.extend([
                "│".into(),
                t.best.method.into(),
                fmt_time(t.best.setpts_s),
                fmt_time(t.best.execute_s),
                fmt_time(t.best.total_s()),
                mib(t.device_bytes),
                ratio(ours, t).map_or("-".into(), |r| format!("{r:.2}")),
            ]),
            Some(Err(e)) => {
                row.extend(["│", "failed", "-", "-", "-", "-", "-"].map(String::from));
                errors.push(format!("{} (cufinufft): {e}", p.name));
            }
            None => {}
        }
        lines.push(row);
    }
    print_rows(&lines);
    outln!("\ntotal = setpts (first call on a fresh plan) + execute, device arrays in and out, the device synchronised; plan mem = device memory the plan holds");
    let unread = |r: &Row| {
        r.0.as_ref()
            .is_ok_and(|m| m.times.plan_device_bytes.is_none())
    };
    if rows.iter().any(unread) {
        if let Err(why) = super::soak::device_memory(backend) {
            outln!("plan mem: {why}");
        }
    }
    if peer {
        outln!("cuFINUFFT: its perftest's means over --repeats fresh plans, the method with the smallest setpts + execute; mem = its process's peak device memory over the idle device's (nvidia-smi every 5 ms); ratio = nudt total / cuFINUFFT total (below 1: nudt is faster)");
    }
    for e in errors {
        outln!("{e}");
    }
}
