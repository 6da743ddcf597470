//! `nudt bench --per-transform`: a stack of `--batch` transforms, each with its own point
//! set (dynamic MRI's frames, cryo-EM's projections), on `--backend` (CPU, CUDA or OpenCL):
//! one nudt plan with a point set per transform (`set_points_per_transform`; on a GPU one
//! sort for all sets and one launch per stage for a batch of them) against as many nudt
//! plans of one transform, each timed two ways, and one nudt plan of one transform given each
//! set in turn, and on the CPU with `--compare finufft` FINUFFT's Python `finufft.Plan`
//! looped over the sets (benches/per_transform_peer.py, on the same data).
//!
//! * Steady state, as a training loop or a time series runs: the plans made before the
//!   clock starts (and given points once), then set-points + execute over the whole stack.
//! * One shot: the same with the plans made inside the clock, as a single use pays.
//!
//! All from and to host memory (an execute returns once the output is there, so GPU work is
//! synchronised), median of `--repeats` after a warm-up run (the ways in turn, run by run).
//! On CUDA each row adds the steady state from device arrays, as a training loop on CUDA
//! tensors runs it ([`device`]).
//! Uniform points in [-π, π)^d, complex normal strengths and modes, f64, tolerance 1e-6;
//! M = 10⁴ and 10⁵ points per transform (times `--scale`), 2-D 256² and 3-D 64³ modes, types
//! 1 and 2; and type 3 in 2-D and 3-D with M sources and M targets per transform, the
//! sources' extent growing from half of [-π, π)^d in the first transform to all of it in the
//! last (so the transforms' own grids differ: the GPUs run them on the largest), the targets
//! in [-64, 64)² or [-16, 16)³ (grids near the type 1 rows').

#[cfg(feature = "cuda")]
mod device;

use super::super::npy;
use super::super::peer::find_script;
use super::super::{describe_arch, fail, fmt_dims, fmt_time, median, outln, Result, Rng};
use nudt::backend::{Backend, BackendOptions, NufftPlan};
use nudt::num_complex::Complex64;
use nudt::{direct, ModeOrder, TransformType};
use serde_json::{json, Value};
use std::cell::RefCell;
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

/// One row: a type, its dimension, modes (types 1 and 2), and points per transform (type
/// 3: sources, and as many targets).
struct Case {
    ty: TransformType,
    dim: usize,
    modes: Vec<usize>,
    points: usize,
}

/// Type 3's targets: half-extent per dimension (2-D, 3-D).
const TYPE3_TARGETS: [f64; 2] = [64.0, 16.0];

impl Case {
    fn label(&self) -> String {
        match self.ty {
            TransformType::Type3 => format!("type 3 {}-D, M = K {}", self.dim, self.points),
            _ => format!(
                "type {} {}-D {}, M {}",
                self.number(),
                self.dim,
                fmt_dims(&self.modes),
                self.points
            ),
        }
    }

    fn number(&self) -> u8 {
        match self.ty {
            TransformType::Type1 => 1,
            TransformType::Type2 => 2,
            TransformType::Type3 => 3,
        }
    }

    /// Values a transform takes and gives.
    fn lengths(&self) -> (usize, usize) {
        let n = self.modes.iter().product();
        match self.ty {
            TransformType::Type1 => (self.points, n),
            TransformType::Type2 => (n, self.points),
            TransformType::Type3 => (self.points, self.points),
        }
    }

    fn isign(&self) -> i32 {
        if self.ty == TransformType::Type2 {
            -1
        } else {
            1
        }
    }
}

/// The rows, in order: per point count, per mode shape, types 1 and 2, then type 3 in 2-D
/// and 3-D.
fn cases(scale: f64) -> Vec<Case> {
    let mut v = Vec::new();
    for points in [10_000.0, 100_000.0] {
        let points = ((points * scale).round() as usize).max(1);
        for modes in [vec![256, 256], vec![64, 64, 64]] {
            for ty in [TransformType::Type1, TransformType::Type2] {
                let (dim, modes) = (modes.len(), modes.clone());
                v.push(Case {
                    ty,
                    dim,
                    modes,
                    points,
                });
            }
        }
        for dim in [2, 3] {
            v.push(Case {
                ty: TransformType::Type3,
                dim,
                modes: Vec::new(),
                points,
            });
        }
    }
    v
}

/// A stack's data: `coords[d][b]`, transform b's coordinates along axis d (type 3: its
/// sources; `targets` alike, empty for types 1 and 2), and the concatenated input.
struct Data {
    coords: Vec<Vec<Vec<f64>>>,
    targets: Vec<Vec<Vec<f64>>>,
    input: Vec<Complex64>,
}

impl Data {
    fn new(case: &Case, batch: usize, seed: u64) -> Self {
        let mut rng = Rng::new(seed);
        let (dim, m) = (case.dim, case.points);
        let type3 = case.ty == TransformType::Type3;
        let mut sets = |reach: &dyn Fn(usize) -> f64| -> Vec<Vec<Vec<f64>>> {
            (0..dim)
                .map(|_| {
                    (0..batch)
                        .map(|b| (0..m).map(|_| rng.uniform(-reach(b), reach(b))).collect())
                        .collect()
                })
                .collect()
        };
        // Type 3's sources from half of [-π, π) in the first transform to all of it.
        let grow = |b: usize| PI * (0.5 + 0.5 * b as f64 / (batch.max(2) - 1) as f64);
        let coords = sets(&|b| if type3 { grow(b) } else { PI });
        let targets = match type3 {
            true => sets(&|_| TYPE3_TARGETS[dim - 2]),
            false => Vec::new(),
        };
        let input = (0..batch * case.lengths().0)
            .map(|_| rng.complex_normal())
            .collect();
        Data {
            coords,
            targets,
            input,
        }
    }

    /// Transform b's arrays, one per axis (type 3: its sources).
    fn set(&self, b: usize) -> Vec<&[f64]> {
        self.coords.iter().map(|axis| &axis[b][..]).collect()
    }

    /// Type 3's transform b's targets, one array per axis.
    fn targets_of(&self, b: usize) -> Vec<&[f64]> {
        self.targets.iter().map(|axis| &axis[b][..]).collect()
    }

    /// Gives `plan` transform b's points (type 3: sources and targets).
    fn give(&self, plan: &mut dyn NufftPlan<f64>, b: usize) -> Result<()> {
        match self.targets.is_empty() {
            true => plan.set_points(&self.set(b)),
            false => plan.set_points_type3(&self.set(b), &self.targets_of(b)),
        }
        .map_err(err)
    }

    /// Gives `plan` every transform's points, a set (type 3: a pair) per transform.
    fn give_all(&self, plan: &mut dyn NufftPlan<f64>, batch: usize) -> Result<()> {
        let sources: Vec<Vec<&[f64]>> = (0..batch).map(|b| self.set(b)).collect();
        let sources: Vec<&[&[f64]]> = sources.iter().map(|s| &s[..]).collect();
        match self.targets.is_empty() {
            true => plan.set_points_per_transform(&sources),
            false => {
                let targets: Vec<Vec<&[f64]>> = (0..batch).map(|b| self.targets_of(b)).collect();
                let targets: Vec<&[&[f64]]> = targets.iter().map(|s| &s[..]).collect();
                plan.set_points_type3_per_transform(&sources, &targets)
            }
        }
        .map_err(err)
    }
}

/// One way's time (plans made inside it for a one-shot way) and the part of it spent
/// making plans, and its output (the way's own buffer, made and first written outside the
/// clock, as a caller reuses one: a fresh 134 MB output's page faults took longer than the
/// GPU's whole work on it).
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
    match case.ty {
        TransformType::Type3 => backend.plan_type3::<f64>(case.dim, 1, ntransf, TOL, opts),
        ty => backend.plan::<f64>(ty, &case.modes, case.isign(), ntransf, TOL, opts),
    }
    .map_err(err)
}

/// The stack of one row: its case and data, where it runs, and its output's length.
struct Stack<'a> {
    case: &'a Case,
    data: &'a Data,
    backend: Backend,
    batch: usize,
    opts: &'a BackendOptions,
    out_len: usize,
}

impl Stack<'_> {
    fn plan(&self, ntransf: usize) -> Result<Box<dyn NufftPlan<f64>>> {
        make_plan(self.case, self.backend, ntransf, self.opts)
    }

    /// Every transform's input and output, in turn.
    fn each<'o>(
        &'o self,
        out: &'o mut [Complex64],
    ) -> impl Iterator<Item = (usize, (&'o [Complex64], &'o mut [Complex64]))> {
        let (each_in, each_out) = (
            self.data.input.len() / self.batch,
            self.out_len / self.batch,
        );
        self.data
            .input
            .chunks(each_in)
            .zip(out.chunks_mut(each_out))
            .enumerate()
    }

    /// One plan of `batch` transforms given a point set each, then executed into `out`.
    fn one(&self, plan: &mut dyn NufftPlan<f64>, out: &mut [Complex64]) -> Result<()> {
        self.data.give_all(plan, self.batch)?;
        plan.execute(&self.data.input, out).map_err(err)
    }

    /// A plan per transform (`plans[b]`, or one made there and dropped when `plans` is
    /// `None`), each given its set and executed into its part of `out`; the time spent
    /// making plans.
    fn separate(
        &self,
        mut plans: Option<&mut [Box<dyn NufftPlan<f64>>]>,
        out: &mut [Complex64],
    ) -> Result<f64> {
        let mut plan_s = 0.0;
        for (b, (x, y)) in self.each(out) {
            let mut made;
            let plan = match plans.as_deref_mut() {
                Some(p) => &mut p[b],
                None => {
                    let t0 = Instant::now();
                    made = self.plan(1)?;
                    plan_s += t0.elapsed().as_secs_f64();
                    &mut made
                }
            };
            self.data.give(&mut **plan, b)?;
            plan.execute(x, y).map_err(err)?;
        }
        Ok(plan_s)
    }

    /// One plan of one transform given each set in turn (as FINUFFT's plan is looped).
    fn looped(&self, plan: &mut dyn NufftPlan<f64>, out: &mut [Complex64]) -> Result<()> {
        for (b, (x, y)) in self.each(out) {
            self.data.give(plan, b)?;
            plan.execute(x, y).map_err(err)?;
        }
        Ok(())
    }
}

/// Times `f` writing into `out` (a way's buffer, reused), whose result is the seconds it
/// spent making plans.
fn timed(
    out: &RefCell<Vec<Complex64>>,
    f: impl FnOnce(&mut [Complex64]) -> Result<f64>,
) -> Result<Timed> {
    let mut out = out.borrow_mut();
    let t0 = Instant::now();
    let plan_s = f(&mut out)?;
    Ok(Timed {
        plan_s,
        run_s: t0.elapsed().as_secs_f64(),
        out: out.clone(),
    })
}

/// The ways of one row, in the order [`WAYS`] names them: steady state (one plan, B plans,
/// one looped plan, all made beforehand) and one shot (one plan, B plans, made inside).
fn run_ways(stack: &Stack<'_>, repeats: usize) -> Result<Vec<Timed>> {
    let one = RefCell::new(stack.plan(stack.batch)?);
    let many = RefCell::new(
        (0..stack.batch)
            .map(|_| stack.plan(1))
            .collect::<Result<Vec<_>>>()?,
    );
    let single = RefCell::new(stack.plan(1)?);
    let outs: Vec<RefCell<Vec<Complex64>>> = WAYS
        .iter()
        .map(|_| RefCell::new(vec![Complex64::default(); stack.out_len]))
        .collect();
    timed_ways(
        repeats,
        &[
            &|| {
                timed(&outs[0], |out| {
                    stack.one(&mut **one.borrow_mut(), out).map(|()| 0.0)
                })
            },
            &|| {
                timed(&outs[1], |out| {
                    stack.separate(Some(&mut many.borrow_mut()), out)
                })
            },
            &|| {
                timed(&outs[2], |out| {
                    stack.looped(&mut **single.borrow_mut(), out).map(|()| 0.0)
                })
            },
            &|| {
                timed(&outs[3], |out| {
                    let t0 = Instant::now();
                    let mut plan = stack.plan(stack.batch)?;
                    let plan_s = t0.elapsed().as_secs_f64();
                    stack.one(&mut *plan, out).map(|()| plan_s)
                })
            },
            &|| timed(&outs[4], |out| stack.separate(None, out)),
        ],
    )
}

/// A CUDA row's device-array steady state ([`device`]): the two ways' median times, how far
/// the separate plans' output is from the one plan's, and the one plan's error against the
/// direct sum; `None` on the other backends.
struct DeviceArrays {
    one_s: f64,
    separate_s: f64,
    separate_diff: f64,
    error: f64,
}

#[cfg(feature = "cuda")]
fn device_arrays(stack: &Stack<'_>, repeats: usize) -> Result<Option<DeviceArrays>> {
    match stack.backend {
        Backend::Cuda => device::steady(stack, repeats).map(Some).map_err(err),
        _ => Ok(None),
    }
}

#[cfg(not(feature = "cuda"))]
fn device_arrays(_: &Stack<'_>, _: usize) -> Result<Option<DeviceArrays>> {
    Ok(None)
}

/// The ways [`run_ways`] times, by name in the JSON lines.
const WAYS: [&str; 5] = [
    "one_plan",
    "separate_plans",
    "looped_plan",
    "one_plan_one_shot",
    "separate_plans_one_shot",
];

/// The median times of each of `ways` over `repeats` runs, after a warm-up run of each,
/// taken in turn run by run so that a machine whose load changes weighs on all alike; with
/// the last run's outputs.
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
            TransformType::Type2 => direct::type2(&x, c, &case.modes, ModeOrder::Cmcl, -1, &which),
            TransformType::Type3 => direct::type3(&x, c, &data.targets_of(b), 1, &which),
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
    for (names, sets) in [("xyz", &data.coords), ("stu", &data.targets)] {
        for (axis, name) in sets.iter().zip(names.chars()) {
            npy::write_rows(&dir.join(format!("{name}.npy")), "--per-transform", axis)?;
        }
    }
    let mut in_shape = vec![batch];
    let mut out_shape = vec![batch];
    match case.ty {
        TransformType::Type2 => {
            in_shape.extend(&case.modes);
            out_shape.push(case.points);
        }
        _ => {
            in_shape.push(case.points);
            match case.ty {
                TransformType::Type1 => out_shape.extend(&case.modes),
                _ => out_shape.push(case.points),
            }
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
    let modes = match case.ty {
        TransformType::Type3 => Vec::new(),
        _ => vec!["--modes".to_string(), modes.join(",")],
    };
    let output = Command::new(&python)
        .arg(&script)
        .arg("--data")
        .arg(dir)
        .args(["--type", &case.number().to_string()])
        .args(["--dim", &case.dim.to_string()])
        .args(&modes)
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
    let dir = std::env::temp_dir().join(format!("nudt-per-transform-{}", std::process::id()));
    if args.finufft {
        std::fs::create_dir_all(&dir)
            .map_err(|e| fail!("--compare finufft: cannot make {}: {e}", dir.display()))?;
    }
    if !args.json {
        outln!(
            "nudt {} bench --per-transform --backend {backend}: {batch} transforms, a point set each, f64, tol {TOL:e}, {threads} host thread(s); median of {} run(s)",
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
            "{:<28} {:>42}   {:>28}",
            "",
            "steady state (plans made before)",
            "one shot (plans made inside)"
        );
        outln!(
            "{:<28} {:>9} {:>9} {:>7} {:>9} {:>7} {:>9} {:>7}   {:>9} {:>9} {:>7}  {:>8} {:>8}",
            "problem",
            "one plan",
            "B plans",
            "B/one",
            "1 looped",
            "lp/one",
            "finufft",
            "fin/one",
            "one plan",
            "B plans",
            "B/one",
            "error",
            "fin diff"
        );
    }
    let result = (|| -> Result<()> {
        for case in cases(args.scale) {
            let data = Data::new(&case, batch, args.seed);
            let out_len = batch * case.lengths().1;
            let stack = Stack {
                case: &case,
                data: &data,
                backend,
                batch,
                opts: &opts,
                out_len,
            };
            let times = run_ways(&stack, args.repeats)?;
            let [one, many, looped, one_shot, many_shot] = &times[..] else {
                return Err(fail!("per-transform benchmark: five ways, five results"));
            };
            let same = times[1..]
                .iter()
                .map(|t| direct::rel_error(&t.out, &one.out))
                .fold(0.0, f64::max);
            let error = sampled_error(&case, &data, batch, &one.out).max(sampled_error(
                &case,
                &data,
                batch,
                &one_shot.out,
            ));
            let device = device_arrays(&stack, args.repeats)?;
            let peer = match args.finufft {
                true => Some(finufft(&args, &case, &data, &one.out, &dir, threads)?),
                false => None,
            };
            let peer_f = |k: &str| peer.as_ref().and_then(|v| v.get(k)).and_then(Value::as_f64);
            let fin_s = peer_f("run_s");
            if args.json {
                let ways: serde_json::Map<String, Value> = WAYS
                    .iter()
                    .zip(&times)
                    .map(|(name, t)| {
                        (
                            name.to_string(),
                            json!({"plan_s": t.plan_s, "run_s": t.run_s}),
                        )
                    })
                    .collect();
                outln!(
                    "{}",
                    json!({
                        "bench": "per-transform",
                        "backend": backend.name(),
                        "type": case.number(),
                        "dim": case.dim,
                        "modes": case.modes,
                        "points": case.points,
                        "batch": batch,
                        "tol": TOL,
                        "threads": threads,
                        "repeats": args.repeats,
                        "ways": ways,
                        "finufft": peer,
                        "separate_over_one": many.run_s / one.run_s,
                        "looped_over_one": looped.run_s / one.run_s,
                        "one_shot_separate_over_one": many_shot.run_s / one_shot.run_s,
                        "finufft_over_one": fin_s.map(|f| f / one.run_s),
                        "device_arrays": device.as_ref().map(|d| json!({
                            "one_plan_s": d.one_s,
                            "separate_plans_s": d.separate_s,
                            "separate_over_one": d.separate_s / d.one_s,
                            "rel_error": d.error,
                            "separate_rel_diff": d.separate_diff,
                        })),
                        "rel_error": error,
                        "separate_rel_diff": same,
                        "machine": arch.key(),
                    })
                );
            } else {
                let opt = |v: Option<f64>, f: &dyn Fn(f64) -> String| v.map_or("-".into(), f);
                outln!(
                    "{:<28} {:>9} {:>9} {:>6.2}× {:>9} {:>6.2}× {:>9} {:>7}   {:>9} {:>9} {:>6.2}×  {:>8.1e} {:>8}",
                    case.label(),
                    fmt_time(one.run_s),
                    fmt_time(many.run_s),
                    many.run_s / one.run_s,
                    fmt_time(looped.run_s),
                    looped.run_s / one.run_s,
                    opt(fin_s, &fmt_time),
                    opt(fin_s, &|f| format!("{:.2}×", f / one.run_s)),
                    fmt_time(one_shot.run_s),
                    fmt_time(many_shot.run_s),
                    many_shot.run_s / one_shot.run_s,
                    error,
                    opt(peer_f("rel_diff"), &|d| format!("{d:.1e}")),
                );
                if same > 1e-12 {
                    outln!("  (one plan and the other ways differ by {same:.1e})");
                }
                if let Some(d) = &device {
                    outln!(
                        "  device arrays, steady: one plan {}, B plans {}, {:.2}×; error {:.1e} (B plans differ by {:.1e})",
                        fmt_time(d.one_s),
                        fmt_time(d.separate_s),
                        d.separate_s / d.one_s,
                        d.error,
                        d.separate_diff
                    );
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
            "\nsteady state, plans made before the clock: one plan: set_points_per_transform + execute; B plans: set_points + execute of each of B plans of one transform; 1 looped: one plan of one transform, set_points + execute per transform; finufft: one finufft.Plan, setpts + execute per transform. one shot: the same with the plans made inside the clock (B plans: each made, run and dropped). error: one plan (both ways) against the direct sum at {SAMPLE} outputs of the first and last transform; fin diff: FINUFFT's output against one plan's."
        );
    }
    Ok(())
}
