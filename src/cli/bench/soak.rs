//! `nudt bench --soak`: many plan → set-points → execute cycles on one backend, of problem
//! shapes drawn (deterministically, from `--seed`) from a pool of types, dimensions,
//! precisions, sizes and tolerances, with fresh data every cycle. It reports the live heap
//! (the bytes Rust code holds allocated: [`crate::cli::heap`]), host memory (RSS) and, where
//! the backend can say, device memory after a warm-up and at the end, the growth between
//! them, and the throughput of the first and last tenth of the cycles, so that a leak or a
//! slowdown over a long run shows. Every cycle's output is checked to be finite, and at each
//! tenth one cycle's against the direct sum at a few outputs.
//!
//! The warm-up runs every shape of the pool once, at the sizes the cycles draw (a shape's
//! sizes are fixed; only its values are drawn afresh, type 3's extents pinned). What a
//! process keeps for later plans is keyed by the plan, not by the data — kernel fits, FFT
//! plans, GPU programs and FFT handles, the spreaders' spare tile boxes (all as long as the
//! longest box met) — so after the warm-up a cycle allocates nothing it does not free, and
//! the live heap's growth is exactly 0 B unless something leaks.

use super::super::transform::BackendArg;
use super::super::{describe_arch, fail, fmt_time, outln, Result, Rng};
use nudt::backend::{Backend, BackendError, BackendFloat, BackendOptions, NufftPlan};
use nudt::num_complex::{Complex, Complex64};
use nudt::{direct, ModeOrder, TransformType};
use serde_json::{json, Value};
use std::f64::consts::PI;
use std::time::Instant;

/// What `nudt bench --soak` takes from the command line.
pub struct SoakArgs {
    pub backend: BackendArg,
    pub cycles: usize,
    pub shapes: usize,
    pub seed: u64,
    pub threads: Option<usize>,
    pub json: bool,
}

/// One problem shape of the pool: the plan and the sizes its data is drawn at.
#[derive(Clone, Debug)]
struct Shape {
    ty: TransformType,
    f32: bool,
    dim: usize,
    modes: Vec<usize>,
    points: usize,
    targets: usize,
    ntransf: usize,
    tol: f64,
}

impl Shape {
    fn label(&self) -> String {
        let what = match self.ty {
            TransformType::Type3 => format!("{} → {}", self.points, self.targets),
            _ => format!(
                "{} modes, {} points",
                super::super::fmt_dims(&self.modes),
                self.points
            ),
        };
        let p = if self.f32 { "f32" } else { "f64" };
        format!(
            "type {} {}-D {p}, {what}, ×{}, tol {:.0e}",
            nudt::planner::validate::type_number(self.ty),
            self.dim,
            self.ntransf,
            self.tol
        )
    }
}

/// `n` shapes drawn from `rng`: every type, dimension and precision, small enough that a
/// cycle takes about a millisecond on a CPU core (the soak is about many cycles, not big
/// ones). Tolerances come from two per precision, so that the GPU backends build few
/// kernel widths.
fn pool(n: usize, rng: &mut Rng) -> Vec<Shape> {
    let types = [
        TransformType::Type1,
        TransformType::Type2,
        TransformType::Type3,
    ];
    (0..n)
        .map(|i| {
            // The first shapes cover the types and dimensions in turn, the rest at random.
            let ty = types[i % 3];
            let dim = if i < 9 {
                1 + (i / 3) % 3
            } else {
                1 + rng.below(3)
            };
            let f32 = if i < 18 {
                i / 9 == 1
            } else {
                rng.below(2) == 1
            };
            let side = |rng: &mut Rng| match dim {
                1 => 32 + rng.below(224),
                2 => 8 + rng.below(40),
                _ => 4 + rng.below(13),
            };
            let tols: [f64; 2] = if f32 { [1e-3, 1e-5] } else { [1e-6, 1e-9] };
            Shape {
                ty,
                f32,
                dim,
                modes: (0..dim).map(|_| side(rng)).collect(),
                points: 50 + rng.below(1500),
                targets: 50 + rng.below(500),
                ntransf: 1 + usize::from(rng.below(4) == 0),
                tol: tols[rng.below(2)],
            }
        })
        .collect()
}

/// One cycle's data: points (sources), type 3 targets, input.
struct Data {
    x: Vec<Vec<f64>>,
    s: Vec<Vec<f64>>,
    input: Vec<Complex64>,
}

fn draw(shape: &Shape, rng: &mut Rng) -> Data {
    // Type 3 extents are pinned (the first two values at the edges): their grids, and so a
    // GPU backend's FFT programs, stay those of the warm-up.
    let coords = |rng: &mut Rng, n: usize, half: f64, pin: bool| -> Vec<Vec<f64>> {
        (0..shape.dim)
            .map(|_| {
                let mut v: Vec<f64> = (0..n).map(|_| rng.uniform(-half, half)).collect();
                if pin && n >= 2 {
                    (v[0], v[1]) = (half, -half);
                }
                v
            })
            .collect()
    };
    let type3 = shape.ty == TransformType::Type3;
    let x = coords(rng, shape.points, if type3 { 3.0 } else { PI }, type3);
    let s = if type3 {
        coords(rng, shape.targets, 12.0, true)
    } else {
        Vec::new()
    };
    let n_in = match shape.ty {
        TransformType::Type2 => shape.modes.iter().product(),
        _ => shape.points,
    };
    let input = (0..n_in * shape.ntransf)
        .map(|_| rng.complex_normal())
        .collect();
    Data { x, s, input }
}

/// The output length of one transform of `shape`.
fn out_len(shape: &Shape) -> usize {
    match shape.ty {
        TransformType::Type1 => shape.modes.iter().product(),
        TransformType::Type2 => shape.points,
        TransformType::Type3 => shape.targets,
    }
}

fn narrow<T: BackendFloat>(v: &[Vec<f64>]) -> Vec<Vec<T>> {
    v.iter()
        .map(|d| d.iter().map(|&a| T::from(a).expect("finite")).collect())
        .collect()
}

/// What a checked cycle found: the largest relative error at the sampled outputs over the
/// tolerance (within 10 passes).
type Checked = Option<f64>;

/// Plans, sets the points and executes one cycle of `shape` on `backend` in precision `T`;
/// with `check`, compares a few outputs of the first transform with the direct sum.
fn cycle<T: BackendFloat>(
    backend: Backend,
    opts: &BackendOptions,
    shape: &Shape,
    d: &Data,
    check: bool,
) -> std::result::Result<Checked, BackendError> {
    let isign = if shape.ty == TransformType::Type2 {
        -1
    } else {
        1
    };
    let mut plan: Box<dyn NufftPlan<T>> = match shape.ty {
        TransformType::Type3 => {
            backend.plan_type3::<T>(shape.dim, isign, shape.ntransf, shape.tol, opts)?
        }
        ty => backend.plan::<T>(ty, &shape.modes, isign, shape.ntransf, shape.tol, opts)?,
    };
    let (x, s) = (narrow::<T>(&d.x), narrow::<T>(&d.s));
    let xs: Vec<&[T]> = x.iter().map(|v| &v[..]).collect();
    let ss: Vec<&[T]> = s.iter().map(|v| &v[..]).collect();
    match shape.ty {
        TransformType::Type3 => plan.set_points_type3(&xs, &ss)?,
        _ => plan.set_points(&xs)?,
    }
    let input: Vec<Complex<T>> = d
        .input
        .iter()
        .map(|c| {
            Complex::new(
                T::from(c.re).expect("finite"),
                T::from(c.im).expect("finite"),
            )
        })
        .collect();
    let n = out_len(shape);
    let mut out = vec![Complex::<T>::default(); n * shape.ntransf];
    plan.execute(&input, &mut out)?;
    let wide = |v: &Complex<T>| {
        Complex64::new(
            v.re.to_f64().unwrap_or(f64::NAN),
            v.im.to_f64().unwrap_or(f64::NAN),
        )
    };
    if out
        .iter()
        .any(|v| !wide(v).re.is_finite() || !wide(v).im.is_finite())
    {
        return Ok(Some(f64::INFINITY));
    }
    if !check {
        return Ok(None);
    }
    // The coordinates as the plan saw them, widened.
    let wx: Vec<Vec<f64>> = x
        .iter()
        .map(|v| v.iter().map(|a| a.to_f64().unwrap_or(f64::NAN)).collect())
        .collect();
    let ws: Vec<Vec<f64>> = s
        .iter()
        .map(|v| v.iter().map(|a| a.to_f64().unwrap_or(f64::NAN)).collect())
        .collect();
    let wxs: Vec<&[f64]> = wx.iter().map(|v| &v[..]).collect();
    let wss: Vec<&[f64]> = ws.iter().map(|v| &v[..]).collect();
    let a = d.input.len() / shape.ntransf;
    let c: Vec<Complex64> = input[..a].iter().map(wide).collect();
    let which: Vec<usize> = (0..n).step_by((n / 8).max(1)).collect();
    let order = ModeOrder::Cmcl;
    let want = match shape.ty {
        TransformType::Type1 => direct::type1(&wxs, &c, &shape.modes, order, isign, &which),
        TransformType::Type2 => direct::type2(&wxs, &c, &shape.modes, order, isign, &which),
        TransformType::Type3 => direct::type3(&wxs, &c, &wss, isign, &which),
    };
    let got: Vec<Complex64> = which.iter().map(|&i| wide(&out[i])).collect();
    Ok(Some(direct::rel_error(&got, &want) / shape.tol))
}

/// Resident memory of this process (Linux `VmRSS`), in bytes, once the allocator has given
/// back what it keeps free (glibc's `malloc_trim`): what is left is what is allocated (and
/// its fragmentation), not what the last cycle freed.
fn rss() -> Option<usize> {
    trim();
    status_kib("VmRSS:")
}

#[cfg(all(target_os = "linux", target_env = "gnu"))]
fn trim() {
    extern "C" {
        fn malloc_trim(pad: usize) -> std::ffi::c_int;
    }
    // SAFETY: glibc's malloc_trim takes no pointers and may be called at any time.
    unsafe {
        malloc_trim(0);
    }
}

#[cfg(not(all(target_os = "linux", target_env = "gnu")))]
fn trim() {}

/// How many cycles that left the live heap larger the report names.
const GROWING_KEPT: usize = 5;

/// The bytes Rust code holds allocated now ([`crate::cli::heap`]), less the work buffers
/// dropped plans left for the next ([`nudt::kept_work_bytes`]: a cache of at most 128 MiB a
/// precision, whose content changes with the shapes run): exactly what a leak in nudt's own
/// code would grow.
fn live_heap() -> usize {
    crate::cli::heap::live_bytes().saturating_sub(nudt::kept_work_bytes())
}

/// Peak resident memory of this process (Linux `VmHWM`), in bytes.
fn peak_rss() -> Option<usize> {
    status_kib("VmHWM:")
}

fn status_kib(key: &str) -> Option<usize> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with(key))?;
    let kib: usize = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kib * 1024)
}

/// The device's memory in use (total − free, as the driver reports it) and its total, where
/// the backend can say; else why not.
pub(super) fn device_memory(backend: Backend) -> std::result::Result<(usize, usize), String> {
    match backend {
        Backend::Cpu => Err("none (the CPU backend's memory is host memory, in the RSS)".into()),
        #[cfg(feature = "cuda")]
        Backend::Cuda => nudt::cuda::open(0)
            .map_err(|e| e.to_string())
            .and_then(|ctx| ctx.mem_get_info().map_err(|e| format!("cuMemGetInfo: {e}")))
            .map(|(free, total)| (total - free.min(total), total)),
        Backend::OpenCl => Err(
            "not measurable: OpenCL has no query of a device's free memory (only AMD's cl_amd_device_attribute_query extension); on a CPU device (PoCL) the buffers are host memory, in the RSS"
                .into(),
        ),
        #[allow(unreachable_patterns)]
        _ => Err("not measurable in this build".into()),
    }
}

/// `12.3 MB`, or `-`.
fn mb(b: Option<usize>) -> String {
    b.map_or("-".into(), |b| format!("{:.1} MB", b as f64 / 1e6))
}

/// A signed byte count: `+0 B`, `+12 KiB`, `-3.1 MB`.
fn growth(d: i64) -> String {
    let a = d.unsigned_abs();
    let sign = if d < 0 { "-" } else { "+" };
    if a < 1 << 10 {
        format!("{sign}{a} B")
    } else if a < 1 << 20 {
        format!("{sign}{:.0} KiB", a as f64 / 1024.0)
    } else {
        format!("{sign}{:.1} MiB", a as f64 / (1u64 << 20) as f64)
    }
}

fn diff(a: Option<usize>, b: Option<usize>) -> Option<i64> {
    Some(b? as i64 - a? as i64)
}

pub fn run(a: SoakArgs) -> Result<()> {
    let backend = a.backend.get();
    if let (false, Some(f)) = (backend.is_built(), backend.feature()) {
        return Err(fail!(
            "--backend {backend}: this nudt was built without the `{f}` feature; rebuild with `cargo build --release --features {f}`, or use --backend cpu"
        ));
    }
    if a.threads.is_some() && backend != Backend::Cpu {
        return Err(fail!(
            "--threads applies to --backend cpu; a GPU backend runs on the device"
        ));
    }
    backend
        .available()
        .map_err(|e| fail!("--backend {backend}: {e}"))?;
    let mut opts = BackendOptions::default();
    opts.cpu.threads = a.threads;
    let mut rng = Rng::new(a.seed);
    let shapes = pool(a.shapes, &mut rng);
    let device = describe_device(backend, a.threads);
    super::super::flush_notes();
    if !a.json {
        outln!(
            "nudt {} bench --soak: {} cycles on {device}, {} problem shapes (types 1–3, 1–3 D, f32 and f64), seed {}",
            env!("CARGO_PKG_VERSION"),
            a.cycles,
            shapes.len(),
            a.seed
        );
    }
    let run_one = |shape: &Shape, rng: &mut Rng, check: bool| -> Result<Checked> {
        let d = draw(shape, rng);
        let r = if shape.f32 {
            cycle::<f32>(backend, &opts, shape, &d, check)
        } else {
            cycle::<f64>(backend, &opts, shape, &d, check)
        };
        r.map_err(|e| fail!("--backend {backend}: {}: {e}", shape.label()))
    };
    // Warm-up: every shape once, so that what is cached for good is cached.
    let t0 = Instant::now();
    for s in &shapes {
        run_one(s, &mut rng, false)?;
    }
    let warmup_s = t0.elapsed().as_secs_f64();
    let tenth = (a.cycles / 10).max(1);
    let mut marks = Vec::with_capacity(a.cycles / tenth + 2);
    // RSS at the end of each tenth: a leak climbs steadily, an allocator settling does not.
    let mut rss_marks = Vec::with_capacity(a.cycles / tenth + 1);
    let mut heap_marks = Vec::with_capacity(a.cycles / tenth + 1);
    let mut growing: Vec<(usize, usize, i64)> = Vec::with_capacity(GROWING_KEPT);
    let dev_start = device_memory(backend);
    // After the marks' own arrays and the device's answer, which the end's count holds too.
    let heap_start = live_heap();
    let rss_start = rss();
    let mut worst: f64 = 0.0;
    let mut checks = 0;
    let start = Instant::now();
    marks.push(0.0);
    for i in 0..a.cycles {
        let which = rng.below(shapes.len());
        let shape = &shapes[which];
        let check = i % tenth == 0;
        let before = live_heap();
        let checked = run_one(shape, &mut rng, check)?;
        // The first cycles that changed the live heap, to name what grew (their record's
        // room is taken before the start's count).
        let grew = live_heap() as i64 - before as i64;
        if grew != 0 && growing.len() < GROWING_KEPT {
            growing.push((i, which, grew));
        }
        if let Some(e) = checked {
            if !e.is_finite() {
                return Err(fail!(
                    "cycle {i}: {}: the output has non-finite values",
                    shape.label()
                ));
            }
            checks += 1;
            worst = worst.max(e);
            if e > 10.0 {
                return Err(fail!(
                    "cycle {i}: {}: error {:.1e} against the direct sum, {e:.0}× the tolerance",
                    shape.label(),
                    e * shape.tol
                ));
            }
        }
        if (i + 1) % tenth == 0 || i + 1 == a.cycles {
            marks.push(start.elapsed().as_secs_f64());
            heap_marks.push(live_heap());
            rss_marks.push(rss());
        }
    }
    let total_s = start.elapsed().as_secs_f64();
    let heap_end = live_heap();
    let rss_end = rss();
    let dev_end = device_memory(backend);
    // Cycles per second in the first and the last tenth.
    let first = tenth as f64 / (marks[1] - marks[0]).max(1e-9);
    let n = marks.len();
    let last_cycles = a.cycles - (n - 2) * tenth;
    let last_cycles = if last_cycles == 0 { tenth } else { last_cycles };
    let last = last_cycles as f64 / (marks[n - 1] - marks[n - 2]).max(1e-9);
    let rss_growth = diff(rss_start, rss_end);
    let (dev_used, dev_note) = match (&dev_start, &dev_end) {
        (Ok((u0, total)), Ok((u1, _))) => (Some((*u0, *u1, *total)), None),
        (Err(why), _) | (_, Err(why)) => (None, Some(why.clone())),
    };

    if a.json {
        let device_memory: Value = match dev_used {
            Some((u0, u1, total)) => json!({
                "used_start_bytes": u0,
                "used_end_bytes": u1,
                "growth_bytes": u1 as i64 - u0 as i64,
                "total_bytes": total,
            }),
            None => Value::Null,
        };
        let mut v = json!({
            "soak": true,
            "backend": backend.name(),
            "device": device,
            "machine": nudt::plan::this_machine().key(),
            "version": env!("CARGO_PKG_VERSION"),
            "seed": a.seed,
            "cycles": a.cycles,
            "shapes": shapes.len(),
            "warmup_cycles": shapes.len(),
            "warmup_s": warmup_s,
            "total_s": total_s,
            "cycles_per_s": a.cycles as f64 / total_s.max(1e-9),
            "cycles_per_s_first_tenth": first,
            "cycles_per_s_last_tenth": last,
            "rss_start_bytes": rss_start,
            "rss_end_bytes": rss_end,
            "rss_growth_bytes": rss_growth,
            "rss_peak_bytes": peak_rss(),
            "rss_by_tenth_bytes": rss_marks,
            "heap_live_start_bytes": heap_start,
            "heap_live_end_bytes": heap_end,
            "heap_growth_bytes": heap_end as i64 - heap_start as i64,
            "heap_live_by_tenth_bytes": heap_marks,
            "heap_growing_cycles": growing.iter().map(|&(i, s, b)| json!({
                "cycle": i,
                "shape": shapes[s].label(),
                "bytes": b,
            })).collect::<Vec<_>>(),
            "device_memory": device_memory,
            "checked_cycles": checks,
            "max_error_over_tol": worst,
        });
        if let Some(note) = dev_note {
            v["device_memory_note"] = json!(note);
        }
        outln!("{v}");
        return Ok(());
    }
    let arch = nudt::plan::this_machine();
    outln!("machine: {} ({})", describe_arch(arch), arch.key());
    outln!(
        "warm-up: {} cycles (each shape once) in {}",
        shapes.len(),
        fmt_time(warmup_s)
    );
    outln!(
        "cycles: {} in {} ({:.0} cycles/s)",
        a.cycles,
        fmt_time(total_s),
        a.cycles as f64 / total_s.max(1e-9)
    );
    outln!(
        "host memory (RSS): {} at start, {} at end, growth {} (peak {})",
        mb(rss_start),
        mb(rss_end),
        rss_growth.map_or("-".into(), growth),
        mb(peak_rss())
    );
    let by_tenth: Vec<String> = rss_marks
        .iter()
        .map(|b| b.map_or("-".into(), |b| format!("{:.1}", b as f64 / 1e6)))
        .collect();
    outln!("RSS after each tenth (MB): {}", by_tenth.join(" "));
    outln!(
        "live heap (Rust allocations): {} B at start, {} B at end, growth {}",
        heap_start,
        heap_end,
        growth(heap_end as i64 - heap_start as i64)
    );
    let by_tenth: Vec<String> = heap_marks.iter().map(|b| b.to_string()).collect();
    outln!("live heap after each tenth (B): {}", by_tenth.join(" "));
    for &(i, s, b) in &growing {
        outln!(
            "  cycle {i} changed the live heap by {}: {}",
            growth(b),
            shapes[s].label()
        );
    }
    match (dev_used, dev_note) {
        (Some((u0, u1, total)), _) => outln!(
            "device memory (used of {}): {} at start, {} at end, growth {}",
            mb(Some(total)),
            mb(Some(u0)),
            mb(Some(u1)),
            growth(u1 as i64 - u0 as i64)
        ),
        (None, Some(why)) => outln!("device memory: {why}"),
        (None, None) => {}
    }
    outln!(
        "throughput: first tenth {first:.0} cycles/s, last tenth {last:.0} cycles/s (last/first {:.2})",
        last / first
    );
    outln!(
        "accuracy: {checks} cycles checked against the direct sum, largest error {worst:.2}× the tolerance (within 10× passes)"
    );
    Ok(())
}

/// The device a soak runs on, in words.
fn describe_device(backend: Backend, threads: Option<usize>) -> String {
    match backend {
        Backend::Cpu => match threads.unwrap_or_else(rayon::current_num_threads) {
            1 => "cpu (1 thread)".into(),
            n => format!("cpu ({n} threads)"),
        },
        #[cfg(feature = "cuda")]
        Backend::Cuda => match super::super::probe_gpu() {
            Ok(arch) => format!("cuda ({})", arch.name),
            Err(_) => "cuda".into(),
        },
        #[cfg(feature = "opencl")]
        Backend::OpenCl => match nudt::opencl::ClDevice::first() {
            Ok(d) => format!("opencl ({}, {})", d.info.name, d.info.platform),
            Err(_) => "opencl".into(),
        },
        #[allow(unreachable_patterns)]
        b => b.name().into(),
    }
}
