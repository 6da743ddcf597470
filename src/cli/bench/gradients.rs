//! `nudt bench --gradients`: what a derivative with respect to the points costs against the
//! forward transform on the same plan, for types 1 and 2 in 1–3 dimensions, and against the
//! way without the kernel's derivative — `d` more transforms of `i·k_d`-weighted modes, as
//! libraries without point gradients are differentiated. Reverse mode (the points'
//! cotangents a backward pass needs, `gradient::vjp`: a type 2 with the gradient, then one
//! real a point and dimension) and forward mode (the output's tangent for point tangents,
//! `gradient::jvp`) are timed apart, each the median of `--repeats`; the passes with the
//! kernel's derivative are compared with the `d + 1`-transform results (they must agree
//! within a few tolerances: both are checked against the direct sum in the test suite).
//! Times are the host's, copies included (a GPU plan uploads the input and the cotangent and
//! reads back the cotangents: the passes' `d + 1` values a point stay on the device); where
//! the backend also measures its device work (CUDA's events), the device times of the last
//! pass come beside them; on CUDA a second line per problem times the same on device arrays
//! ([`device`]), as a training loop on CUDA tensors runs them.

#[cfg(feature = "cuda")]
mod device;

use super::super::transform::BackendArg;
use super::super::{describe_arch, fail, fmt_time, outln, Result, Rng};
use nudt::backend::{Backend, BackendError, BackendOptions, NufftPlan};
use nudt::gradient;
use nudt::num_complex::Complex64;
use nudt::TransformType;
use serde_json::json;
use std::f64::consts::PI;
use std::time::Instant;

/// What `nudt bench --gradients` takes from the command line.
pub struct GradientArgs {
    pub backend: BackendArg,
    pub scale: f64,
    pub repeats: u64,
    pub seed: u64,
    pub threads: Option<usize>,
    pub json: bool,
}

/// A problem of the gradient benchmark.
struct Case {
    name: &'static str,
    ty: TransformType,
    modes: &'static [usize],
    points: usize,
}

/// Types 1 and 2 at the benchmark's usual densities, smaller than `nudt bench`'s problems so
/// that the whole set runs in a minute on two cores.
const CASES: [Case; 6] = [
    Case {
        name: "1d-t1",
        ty: TransformType::Type1,
        modes: &[200_000],
        points: 2_000_000,
    },
    Case {
        name: "1d-t2",
        ty: TransformType::Type2,
        modes: &[200_000],
        points: 2_000_000,
    },
    Case {
        name: "2d-t1",
        ty: TransformType::Type1,
        modes: &[512, 512],
        points: 1_000_000,
    },
    Case {
        name: "2d-t2",
        ty: TransformType::Type2,
        modes: &[512, 512],
        points: 1_000_000,
    },
    Case {
        name: "3d-t1",
        ty: TransformType::Type1,
        modes: &[64, 64, 64],
        points: 1_000_000,
    },
    Case {
        name: "3d-t2",
        ty: TransformType::Type2,
        modes: &[64, 64, 64],
        points: 1_000_000,
    },
];

const TOL: f64 = 1e-6;

/// The median of `t` (not empty).
fn middle(mut t: Vec<f64>) -> f64 {
    t.sort_by(f64::total_cmp);
    t[t.len() / 2]
}

/// The median time of `repeats` runs of `f`.
fn median(
    repeats: u64,
    mut f: impl FnMut() -> std::result::Result<(), BackendError>,
) -> Result<f64> {
    let mut t = Vec::new();
    for _ in 0..repeats {
        let start = Instant::now();
        f().map_err(|e| fail!("{e}"))?;
        t.push(start.elapsed().as_secs_f64());
    }
    Ok(middle(t))
}

/// The median host time of `repeats` runs of `f` on `plan` (one run of the plan each), and
/// the median of the plan's device time of the run where it measures one.
fn medians(
    repeats: u64,
    plan: &mut dyn NufftPlan<f64>,
    mut f: impl FnMut(&mut dyn NufftPlan<f64>) -> std::result::Result<(), BackendError>,
) -> Result<(f64, Option<f64>)> {
    let (mut host, mut device) = (Vec::new(), Vec::new());
    for _ in 0..repeats {
        let start = Instant::now();
        f(plan).map_err(|e| fail!("{e}"))?;
        host.push(start.elapsed().as_secs_f64());
        device.extend(plan.report().device_times.map(|(_, run)| run));
    }
    let device = (device.len() == host.len()).then(|| middle(device));
    Ok((middle(host), device))
}

/// The ratio of two device times, for the table.
fn device_ratio(a: Option<f64>, b: Option<f64>) -> String {
    match (a, b) {
        (Some(a), Some(b)) => format!("{:.2}×", a / b),
        _ => "-".into(),
    }
}

/// Relative l2 difference of the derivative slots (`1..q` of every `q`) of two arrays.
fn derivative_difference(a: &[Complex64], b: &[Complex64], q: usize) -> f64 {
    let (mut num, mut den) = (0.0, 0.0);
    for (x, y) in a.chunks(q).zip(b.chunks(q)) {
        for (x, y) in x[1..].iter().zip(&y[1..]) {
            num += (x - y).norm_sqr();
            den += y.norm_sqr();
        }
    }
    (num / den.max(f64::MIN_POSITIVE)).sqrt()
}

pub fn run(a: GradientArgs) -> Result<()> {
    let backend = a.backend.get();
    backend
        .available()
        .map_err(|e| fail!("--backend {backend}: {e}"))?;
    let mut opts = BackendOptions::default().with_gradients(true);
    opts.cpu.threads = a.threads;
    let mut rng = Rng::new(a.seed);
    if !a.json {
        let machine = match backend {
            Backend::Cpu => {
                let threads = a.threads.unwrap_or_else(rayon::current_num_threads);
                format!(
                    "{}, {threads} threads",
                    describe_arch(nudt::plan::this_machine())
                )
            }
            _ => String::new(),
        };
        outln!(
            "point derivatives against the forward transform, {backend}, f64, tol {TOL:.0e} (plans made for gradients), medians of {}\n\
             dev.rev, dev.fwd: reverse and forward mode over the forward transform in device time, where the backend measures it\n{machine}",
            a.repeats
        );
        outln!(
            "{:<6} {:>10} {:>10} {:>10} {:>7} {:>12} {:>7} {:>10} {:>12} {:>9} {:>8} {:>8}",
            "",
            "points",
            "forward",
            "reverse",
            "ratio",
            "d+1 transf.",
            "ratio",
            "fwd-mode",
            "d+1 transf.",
            "agree",
            "dev.rev",
            "dev.fwd"
        );
    }
    for case in &CASES {
        let dim = case.modes.len();
        let q = dim + 1;
        let m = ((case.points as f64 * a.scale).round() as usize).max(1);
        let n: usize = case.modes.iter().product();
        let coords: Vec<Vec<f64>> = (0..dim)
            .map(|_| (0..m).map(|_| rng.uniform(-PI, PI)).collect())
            .collect();
        let refs: Vec<&[f64]> = coords.iter().map(|v| &v[..]).collect();
        let isign = if case.ty == TransformType::Type2 {
            -1
        } else {
            1
        };
        let mut plan = backend
            .plan::<f64>(case.ty, case.modes, isign, 1, TOL, &opts)
            .map_err(|e| fail!("{}: {e}", case.name))?;
        plan.set_points(&refs)
            .map_err(|e| fail!("{}: {e}", case.name))?;
        let (n_in, n_out) = match case.ty {
            TransformType::Type1 => (m, n),
            _ => (n, m),
        };
        let input: Vec<Complex64> = (0..n_in).map(|_| rng.complex_normal()).collect();
        let mut out = vec![Complex64::default(); n_out];
        let plan = &mut *plan;
        let (forward, forward_dev) = medians(a.repeats, plan, |p| p.execute(&input, &mut out))?;
        // Reverse mode: the interpolant's gradient at the points, of the output's cotangent
        // through the adjoint (type 1) or of the modes (type 2).
        let adjoint = case.ty == TransformType::Type1;
        let modes: Vec<Complex64> = match case.ty {
            TransformType::Type1 => (0..n).map(|_| rng.complex_normal()).collect(),
            _ => input.clone(),
        };
        let (mut one, mut by) = (
            vec![Complex64::default(); q * m],
            vec![Complex64::default(); q * m],
        );
        // What a backward pass pays for the points' cotangents (the pass with the gradient,
        // then one real a point and dimension), and a forward-mode one for point tangents.
        let cotangent: Vec<Complex64> = (0..n_out).map(|_| rng.complex_normal()).collect();
        let points_only = gradient::Wanted {
            input: false,
            points: true,
            targets: false,
        };
        let (reverse, reverse_dev) = medians(a.repeats, plan, |p| {
            gradient::vjp(p, &input, &cotangent, None, points_only).map(|_| ())
        })?;
        plan.interp_with_gradient(&modes, &mut one, adjoint)
            .map_err(|e| fail!("{}: {e}", case.name))?;
        let reverse_by = median(a.repeats, || {
            gradient::interp_by_transforms(plan, &modes, &mut by, adjoint)
        })?;
        let mut agree = derivative_difference(&one, &by, q);
        let tangents: Vec<Vec<f64>> = (0..dim)
            .map(|_| (0..m).map(|_| rng.uniform(-1.0, 1.0)).collect())
            .collect();
        let dx: Vec<&[f64]> = tangents.iter().map(|v| &v[..]).collect();
        let moved = gradient::Tangents {
            input: None,
            points: Some(&dx),
            targets: None,
        };
        let (fwd, fwd_dev) = medians(a.repeats, plan, |p| {
            gradient::jvp(p, &input, moved, None, &mut out)
        })?;
        // The forward-mode pass against d + 1 transforms: a type 1 of values and derivative
        // weights (a type 2's adjoint).
        let vu: Vec<Complex64> = (0..q * m).map(|_| rng.complex_normal()).collect();
        let (mut f1, mut f2) = (vec![Complex64::default(); n], vec![Complex64::default(); n]);
        plan.spread_with_gradient(&vu, &mut f1, !adjoint)
            .map_err(|e| fail!("{}: {e}", case.name))?;
        let fwd_by = median(a.repeats, || {
            gradient::spread_by_transforms(plan, &vu, &mut f2, !adjoint)
        })?;
        #[cfg(feature = "cuda")]
        let on_device = match backend {
            Backend::Cuda => {
                let data = device::Data {
                    ty: case.ty,
                    modes: case.modes,
                    isign,
                    coords: &coords,
                    tangents: &tangents,
                    input: &input,
                    cotangent: &cotangent,
                };
                Some(device::times(&data, a.repeats).map_err(|e| fail!("{}: {e}", case.name))?)
            }
            _ => None,
        };
        #[cfg(not(feature = "cuda"))]
        let on_device: Option<[f64; 3]> = None;
        let diff: f64 = f1.iter().zip(&f2).map(|(x, y)| (x - y).norm_sqr()).sum();
        let size: f64 = f2.iter().map(|y| y.norm_sqr()).sum();
        agree = agree.max((diff / size.max(f64::MIN_POSITIVE)).sqrt());
        if a.json {
            println!(
                "{}",
                json!({
                    "problem": case.name, "backend": backend.name(), "points": m,
                    "modes": case.modes, "tol": TOL, "forward_s": forward,
                    "reverse_s": reverse, "reverse_by_transforms_s": reverse_by,
                    "forward_mode_s": fwd, "forward_mode_by_transforms_s": fwd_by,
                    "agreement": agree, "forward_device_s": forward_dev,
                    "reverse_device_s": reverse_dev, "forward_mode_device_s": fwd_dev,
                    "device_arrays_s": on_device.map(|[f, r, m]| json!({
                        "forward": f, "reverse": r, "forward_mode": m,
                    })),
                })
            );
        } else {
            outln!(
                "{:<6} {:>10} {:>10} {:>10} {:>6.2}× {:>12} {:>6.2}× {:>10} {:>12} {:>9.1e} {:>8} {:>8}",
                case.name,
                m,
                fmt_time(forward),
                fmt_time(reverse),
                reverse / forward,
                fmt_time(reverse_by),
                reverse_by / forward,
                fmt_time(fwd),
                fmt_time(fwd_by),
                agree,
                device_ratio(reverse_dev, forward_dev),
                device_ratio(fwd_dev, forward_dev)
            );
            if let Some([f, r, m]) = on_device {
                outln!(
                    "{:<6} device arrays: forward {}, reverse {} ({:.2}×), fwd-mode {} ({:.2}×)",
                    "",
                    fmt_time(f),
                    fmt_time(r),
                    r / f,
                    fmt_time(m),
                    m / f
                );
            }
        }
    }
    Ok(())
}
