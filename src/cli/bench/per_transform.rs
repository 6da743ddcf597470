//! `nudt bench --per-transform`: a stack of `--batch` transforms, each with its own point
//! set (dynamic MRI's frames, cryo-EM's projections), four ways in one run on `--backend`
//! (CPU, CUDA or OpenCL): one nudt plan with a point set per transform
//! (`set_points_per_transform`; on a GPU one sort and one launch per stage for all sets), as
//! many nudt plans one after another, one nudt plan of one transform given each set in turn,
//! and on the CPU with `--compare finufft` FINUFFT's Python `finufft.Plan` looped over the
//! sets (benches/per_transform_peer.py, on the same data). Each is timed as set-points +
//! execute over the whole stack from and to host memory (an execute returns once the output
//! is there, so GPU work is synchronised), median of `--repeats` after a warm-up run (nudt's
//! ways in turn, run by run); plan times are in the JSON lines. Uniform points in [-π, π)^d,
//! complex normal strengths and modes, f64, tolerance 1e-6; M = 10⁴ and 10⁵ points per
//! transform (times `--scale`), 2-D 256² and 3-D 64³ modes, types 1 and 2.

use super::super::npy;
use super::super::peer::find_script;
use super::super::{describe_arch, fail, fmt_dims, fmt_time, median, outln, Result, Rng};
use nudt::backend::{Backend, BackendOptions, NufftPlan};
use nudt::num_complex::Complex64;
use nudt::{direct, ModeOrder, TransformType};
use serde_json::{json, Value};
use std::f64::consts::PI;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Instant;

/// The script FINUFFT's side runs in.
const PEER_SCRIPT: &str = "benches/per_transform_peer.py";
const TOL: f64 = 1e-6;
/// Outputs of the first and last transform checked against the direct sum.
const SAMPLE: usize = 16;

/// What `nudt bench --per-transform` takes from the command line.
pub struct PerTransformArgs {
    pub backend: Backend,
    pub batch: usize,
    pub scale: f64,
    pub repeats: usize,
    pub threads: Option<usize>,
    pub seed: u64,
    pub json: bool,
    pub finufft: bool,
    pub peer_script: Option<PathBuf>,
}

/// One row: a type, modes, and points per transform.
struct Case {
    ty: TransformType,
    modes: Vec<usize>,
    points: usize,
}

impl Case {
    fn label(&self) -> String {
        format!(
            "type {} {}-D {}, M {}",
            self.number(),
            self.modes.len(),
            fmt_dims(&self.modes),
            self.points
        )
    }

    /// 1 or 2.
    fn number(&self) -> u8 {
        match self.ty {
            TransformType::Type1 => 1,
            _ => 2,
        }
    }

    fn isign(&self) -> i32 {
        if self.ty == TransformType::Type1 {
            1
        } else {
            -1
        }
    }
}

/// The rows, in order: per point count, per mode shape, types 1 and 2.
fn cases(scale: f64) -> Vec<Case> {
    let mut v = Vec::new();
    for points in [10_000.0, 100_000.0] {
        for modes in [vec![256, 256], vec![64, 64, 64]] {
            for ty in [TransformType::Type1, TransformType::Type2] {
                v.push(Case {
                    ty,
                    modes: modes.clone(),
                    points: ((points * scale).round() as usize).max(1),
                });
            }
        }
    }
    v
}

/// A stack's data: `coords[d][b]`, transform b's coordinates along axis d, and the
/// concatenated input.
struct Data {
    coords: Vec<Vec<Vec<f64>>>,
    input: Vec<Complex64>,
}

impl Data {
    fn new(case: &Case, batch: usize, seed: u64) -> Self {
        let mut rng = Rng::new(seed);
        let (dim, m) = (case.modes.len(), case.points);
        let coords = (0..dim)
            .map(|_| {
                (0..batch)
                    .map(|_| (0..m).map(|_| rng.uniform(-PI, PI)).collect())
                    .collect()
            })
            .collect();
        let each = match case.ty {
            TransformType::Type1 => m,
            _ => case.modes.iter().product(),
        };
        let input = (0..batch * each).map(|_| rng.complex_normal()).collect();
        Data { coords, input }
    }

    /// Transform b's arrays, one per axis.
    fn set(&self, b: usize) -> Vec<&[f64]> {
        self.coords.iter().map(|axis| &axis[b][..]).collect()
    }
}

/// Plan and set-points + execute times of one way, and its output.
struct Timed {
    plan_s: f64,
    run_s: f64,
    out: Vec<Complex64>,
}

fn err(e: impl std::fmt::Display) -> super::super::Error {
    fail!("per-transform benchmark: {e}")
}

/// A plan of `ntransf` transforms of `case` on `backend`.
fn make_plan(
    case: &Case,
    backend: Backend,
    ntransf: usize,
    opts: &BackendOptions,
) -> Result<Box<dyn NufftPlan<f64>>> {
    backend
        .plan::<f64>(case.ty, &case.modes, case.isign(), ntransf, TOL, opts)
        .map_err(err)
}

/// (a): one plan of `batch` transforms, a point set each.
fn one_plan(
    case: &Case,
    data: &Data,
    (backend, batch): (Backend, usize),
    opts: &BackendOptions,
    out_len: usize,
) -> Result<Timed> {
    let t0 = Instant::now();
    let mut plan = make_plan(case, backend, batch, opts)?;
    let t1 = Instant::now();
    let sets: Vec<Vec<&[f64]>> = (0..batch).map(|b| data.set(b)).collect();
    let sets: Vec<&[&[f64]]> = sets.iter().map(|s| &s[..]).collect();
    let mut out = vec![Complex64::default(); out_len];
    plan.set_points_per_transform(&sets).map_err(err)?;
    plan.execute(&data.input, &mut out).map_err(err)?;
    Ok(Timed {
        plan_s: (t1 - t0).as_secs_f64(),
        run_s: t1.elapsed().as_secs_f64(),
        out,
    })
}

/// (b): a plan per transform, one after another (each made, given its points, executed and
/// dropped).
fn separate_plans(
    case: &Case,
    data: &Data,
    (backend, batch): (Backend, usize),
    opts: &BackendOptions,
    out_len: usize,
) -> Result<Timed> {
    let mut out = vec![Complex64::default(); out_len];
    let (each_in, each_out) = (data.input.len() / batch, out_len / batch);
    let (mut plan_s, mut run_s) = (0.0, 0.0);
    for (b, (x, y)) in data
        .input
        .chunks(each_in)
        .zip(out.chunks_mut(each_out))
        .enumerate()
    {
        let t0 = Instant::now();
        let mut plan = make_plan(case, backend, 1, opts)?;
        let t1 = Instant::now();
        plan.set_points(&data.set(b)).map_err(err)?;
        plan.execute(x, y).map_err(err)?;
        plan_s += (t1 - t0).as_secs_f64();
        run_s += t1.elapsed().as_secs_f64();
    }
    Ok(Timed { plan_s, run_s, out })
}

/// (b'): one plan of one transform, given each set in turn (as FINUFFT's plan is looped).
fn looped_plan(
    case: &Case,
    data: &Data,
    (backend, batch): (Backend, usize),
    opts: &BackendOptions,
    out_len: usize,
) -> Result<Timed> {
    let mut out = vec![Complex64::default(); out_len];
    let (each_in, each_out) = (data.input.len() / batch, out_len / batch);
    let t0 = Instant::now();
    let mut plan = make_plan(case, backend, 1, opts)?;
    let t1 = Instant::now();
    for (b, (x, y)) in data
        .input
        .chunks(each_in)
        .zip(out.chunks_mut(each_out))
        .enumerate()
    {
        plan.set_points(&data.set(b)).map_err(err)?;
        plan.execute(x, y).map_err(err)?;
    }
    Ok(Timed {
        plan_s: (t1 - t0).as_secs_f64(),
        run_s: t1.elapsed().as_secs_f64(),
        out,
    })
}

/// The plan time and median set-points + execute time of each of `ways` over `repeats`
/// runs, after a warm-up run of each, taken in turn run by run so that a machine whose load
/// changes weighs on all alike; with the last run's outputs.
fn timed_ways(repeats: usize, ways: &[&dyn Fn() -> Result<Timed>]) -> Result<Vec<Timed>> {
    for way in ways {
        way()?;
    }
    let mut runs: Vec<Vec<Timed>> = ways.iter().map(|_| Vec::new()).collect();
    for _ in 0..repeats {
        for (way, r) in ways.iter().zip(&mut runs) {
            r.push(way()?);
        }
    }
    Ok(runs
        .into_iter()
        .map(|runs| {
            let plan_s = median(&runs.iter().map(|t| t.plan_s).collect::<Vec<_>>());
            let run_s = median(&runs.iter().map(|t| t.run_s).collect::<Vec<_>>());
            let out = runs.into_iter().last().expect("a repeat").out;
            Timed { plan_s, run_s, out }
        })
        .collect())
}

/// The relative error of transforms 0 and `batch − 1` of `out` against the direct sum, at
/// [`SAMPLE`] outputs of each.
fn sampled_error(case: &Case, data: &Data, batch: usize, out: &[Complex64]) -> f64 {
    let (each_in, each_out) = (data.input.len() / batch, out.len() / batch);
    let (mut got, mut want) = (Vec::new(), Vec::new());
    for b in [0, batch - 1] {
        let x = data.set(b);
        let c = &data.input[b * each_in..(b + 1) * each_in];
        let which: Vec<usize> = (0..SAMPLE).map(|i| i * each_out / SAMPLE).collect();
        want.extend(match case.ty {
            TransformType::Type1 => direct::type1(&x, c, &case.modes, ModeOrder::Cmcl, 1, &which),
            _ => direct::type2(&x, c, &case.modes, ModeOrder::Cmcl, -1, &which),
        });
        got.extend(which.iter().map(|&i| out[b * each_out + i]));
    }
    direct::rel_error(&got, &want)
}

/// Writes the stack and nudt's output for the FINUFFT script, runs it, and reads its line.
fn finufft(
    args: &PerTransformArgs,
    case: &Case,
    data: &Data,
    out: &[Complex64],
    dir: &Path,
    threads: usize,
) -> Result<Value> {
    let batch = args.batch;
    for (d, axis) in data.coords.iter().enumerate() {
        npy::write_rows(
            &dir.join(format!("{}.npy", ["x", "y", "z"][d])),
            "--per-transform",
            axis,
        )?;
    }
    let mut in_shape = vec![batch];
    let mut out_shape = vec![batch];
    match case.ty {
        TransformType::Type1 => {
            in_shape.push(case.points);
            out_shape.extend(&case.modes);
        }
        _ => {
            in_shape.extend(&case.modes);
            out_shape.push(case.points);
        }
    }
    npy::write_complex(
        &dir.join("input.npy"),
        "--per-transform",
        &in_shape,
        &data.input,
    )?;
    npy::write_complex(&dir.join("nudt.npy"), "--per-transform", &out_shape, out)?;
    let script = find_script(args.peer_script.as_deref(), PEER_SCRIPT)?;
    let python = std::env::var("NUDT_PYTHON").unwrap_or_else(|_| "python3".into());
    let modes: Vec<String> = case.modes.iter().map(ToString::to_string).collect();
    let output = Command::new(&python)
        .arg(&script)
        .arg("--data")
        .arg(dir)
        .args(["--type", &case.number().to_string()])
        .args(["--modes", &modes.join(",")])
        .args(["--tol", &TOL.to_string()])
        .args(["--threads", &threads.to_string()])
        .args(["--repeats", &args.repeats.to_string()])
        .stdin(Stdio::null())
        .output()
        .map_err(|e| fail!("--compare finufft: cannot run {python}: {e}"))?;
    let line = String::from_utf8_lossy(&output.stdout);
    let v: Value = line
        .lines()
        .rev()
        .find_map(|l| serde_json::from_str(l.trim()).ok())
        .ok_or_else(|| {
            let log = String::from_utf8_lossy(&output.stderr);
            let last = log
                .lines()
                .rev()
                .find(|l| !l.trim().is_empty())
                .unwrap_or("no output");
            fail!(
                "--compare finufft: {} exited with {}: {}",
                script.display(),
                output.status,
                last.trim()
            )
        })?;
    if let Some(e) = v.get("error").and_then(Value::as_str) {
        return Err(fail!("--compare finufft: {e}"));
    }
    Ok(v)
}

pub fn run(args: PerTransformArgs) -> Result<()> {
    let threads = args.threads.unwrap_or_else(rayon::current_num_threads);
    let backend = args.backend;
    backend
        .available()
        .map_err(|e| fail!("--backend {backend}: {e}"))?;
    if args.finufft && backend != Backend::Cpu {
        return Err(fail!(
            "--per-transform --compare finufft runs FINUFFT on the CPU: use --backend cpu"
        ));
    }
    let mut opts = BackendOptions::default();
    opts.cpu.threads = args.threads;
    let arch = nudt::plan::this_machine();
    let batch = args.batch;
    let on = (backend, batch);
    let dir = std::env::temp_dir().join(format!("nudt-per-transform-{}", std::process::id()));
    if args.finufft {
        std::fs::create_dir_all(&dir)
            .map_err(|e| fail!("--compare finufft: cannot make {}: {e}", dir.display()))?;
    }
    if !args.json {
        outln!(
            "nudt {} bench --per-transform --backend {backend}: {batch} transforms, a point set each, f64, tol {TOL:e}, {threads} host thread(s); set-points + execute over the stack, median of {} run(s)",
            env!("CARGO_PKG_VERSION"),
            args.repeats
        );
        let device = match backend {
            Backend::Cpu => String::new(),
            _ => {
                let case = &cases(args.scale)[0];
                let report = make_plan(case, backend, 1, &opts)?.report();
                format!(", device {}", report.device.unwrap_or_default())
            }
        };
        outln!(
            "machine: {} ({}){device}\n",
            describe_arch(arch),
            arch.key()
        );
        outln!(
            "{:<28} {:>10} {:>10} {:>10} {:>10} {:>7} {:>7} {:>7}  {:>8} {:>8}",
            "problem",
            "one plan",
            "B plans",
            "1 looped",
            "finufft",
            "B/one",
            "lp/one",
            "fin/one",
            "error",
            "fin diff"
        );
    }
    let result = (|| -> Result<()> {
        for case in cases(args.scale) {
            let data = Data::new(&case, batch, args.seed);
            let out_len = batch
                * match case.ty {
                    TransformType::Type1 => case.modes.iter().product(),
                    _ => case.points,
                };
            let [one, many, looped]: [Timed; 3] = timed_ways(
                args.repeats,
                &[
                    &|| one_plan(&case, &data, on, &opts, out_len),
                    &|| separate_plans(&case, &data, on, &opts, out_len),
                    &|| looped_plan(&case, &data, on, &opts, out_len),
                ],
            )?
            .try_into()
            .map_err(|_| fail!("per-transform benchmark: three ways, three results"))?;
            let same = direct::rel_error(&many.out, &one.out)
                .max(direct::rel_error(&looped.out, &one.out));
            let error = sampled_error(&case, &data, batch, &one.out);
            let peer = match args.finufft {
                true => Some(finufft(&args, &case, &data, &one.out, &dir, threads)?),
                false => None,
            };
            let peer_f = |k: &str| peer.as_ref().and_then(|v| v.get(k)).and_then(Value::as_f64);
            let fin_s = peer_f("run_s");
            if args.json {
                outln!(
                    "{}",
                    json!({
                        "bench": "per-transform",
                        "backend": backend.name(),
                        "type": case.number(),
                        "dim": case.modes.len(),
                        "modes": case.modes,
                        "points": case.points,
                        "batch": batch,
                        "tol": TOL,
                        "threads": threads,
                        "repeats": args.repeats,
                        "one_plan": {"plan_s": one.plan_s, "run_s": one.run_s},
                        "separate_plans": {"plan_s": many.plan_s, "run_s": many.run_s},
                        "looped_plan": {"plan_s": looped.plan_s, "run_s": looped.run_s},
                        "finufft": peer,
                        "separate_over_one": many.run_s / one.run_s,
                        "looped_over_one": looped.run_s / one.run_s,
                        "finufft_over_one": fin_s.map(|f| f / one.run_s),
                        "rel_error": error,
                        "separate_rel_diff": same,
                        "machine": arch.key(),
                    })
                );
            } else {
                let opt = |v: Option<f64>, f: &dyn Fn(f64) -> String| v.map_or("-".into(), f);
                outln!(
                    "{:<28} {:>10} {:>10} {:>10} {:>10} {:>6.2}× {:>6.2}× {:>7}  {:>8.1e} {:>8}",
                    case.label(),
                    fmt_time(one.run_s),
                    fmt_time(many.run_s),
                    fmt_time(looped.run_s),
                    opt(fin_s, &fmt_time),
                    many.run_s / one.run_s,
                    looped.run_s / one.run_s,
                    opt(fin_s, &|f| format!("{:.2}×", f / one.run_s)),
                    error,
                    opt(peer_f("rel_diff"), &|d| format!("{d:.1e}")),
                );
                if same > 1e-12 {
                    outln!("  (one plan and the plans per transform differ by {same:.1e})");
                }
            }
        }
        Ok(())
    })();
    if args.finufft {
        let _ = std::fs::remove_dir_all(&dir);
    }
    result?;
    if !args.json {
        outln!(
            "\none plan: set_points_per_transform + execute; B plans: a new plan, set_points, execute per transform (making the plan not counted); 1 looped: one plan of one transform, set_points + execute per transform; finufft: one finufft.Plan, setpts + execute per transform. error: one plan against the direct sum at {SAMPLE} outputs of the first and last transform; fin diff: FINUFFT's output against one plan's."
        );
    }
    Ok(())
}
