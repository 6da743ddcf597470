//! Property-based fuzzing of the one plan interface ([`Backend::plan`], [`NufftPlan`]) on the
//! CPU and on OpenCL: random shapes, precisions, sizes (0 and 1 included), coordinates
//! (subnormals, exactly ±π, ±1e300, huge offsets, NaN and infinities), tolerances (invalid
//! ones included), stacked transforms, options and misuse. The property: every call either
//! returns a result within 10× tol of the direct sum ([`nudt_runtime::direct`]) or a typed
//! error — never a panic, an abort, a hang or a wrong answer. The error is the l2 norm of
//! the difference over the larger of the direct sum's norm and the input's times
//! √outputs: a NUFFT's error follows its input, and a result whose terms cancel (every
//! point at one place) would otherwise count the cancellation as error.
//!
//! Where a coordinate is so large that its phase `k·x` cannot be represented to the tolerance
//! in the input's precision (`|k|·|x|·ε ≳ tol`: `x = 1e300`, a point 10⁶ turns out), no
//! algorithm, the direct sum included, has a better answer than that precision gives: the
//! bound there is `10·tol + 10·ε·Σ_d max|k_d|·max|x_d|`, and the result must be finite and no
//! larger than the strengths allow. A case the fuzzer made invalid on purpose (a NaN point, a
//! zero size, a short array, a bad tolerance or sign) must end in an error; an error on a
//! valid case is allowed by the property but listed in the summary.
//!
//! Each backend's test prints a summary on stderr: cases tried, results, errors by class,
//! crashes (0, or the test fails). `NUDT_FUZZ_CASES` sets the cases per backend (default 1000
//! on the CPU; OpenCL runs a tenth of them, at one tolerance per precision, so that PoCL's
//! program builds are reused). A case running longer than `NUDT_FUZZ_HANG_S` seconds
//! (default 120) aborts the run, naming the case. The cases are the same on every run
//! (`NUDT_FUZZ_SEED`, default 43, draws others); `NUDT_FUZZ_SURVEY=1` lists every failure
//! instead of stopping at (and shrinking) the first.
//!
//! ```sh
//! cargo test --release -p nudt-runtime --features opencl --test fuzz -- --nocapture
//! ```

mod common;
use common::Lcg;
use nudt_gen::gpu::GpuMethod;
use nudt_gen::KernelKind;
use nudt_runtime::backend::{Backend, BackendError, BackendFloat, BackendOptions, NufftPlan};
use nudt_runtime::direct;
use nudt_runtime::{ModeOrder, Strategy as Schedule, TransformType, Type3Method, Upsampling};
use num_complex::{Complex, Complex64};
use proptest::prelude::*;
use proptest::test_runner::{Config, RngAlgorithm, TestCaseError, TestError, TestRng, TestRunner};
use std::collections::BTreeMap;
use std::f64::consts::PI;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// How the coordinates of one point set are drawn.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Coords {
    /// Uniform in [−π, π).
    Plain,
    /// Uniform in [−60, 60): several periods.
    Wide,
    /// Only 0, −0, ±π (rounded to the precision), ±2π, ±3π.
    Edges,
    /// Subnormal values of the precision, and zeros.
    Subnormal,
    /// [−π, π) plus a huge offset (10⁴ … 10⁹).
    Offset,
    /// [−π, π) with one value ±1e300 or ±f64::MAX (infinite in f32).
    Huge,
    /// Every value ±1e300 or beyond: nothing representable to any tolerance.
    AllHuge,
    /// [−π, π) with one NaN or infinity.
    NonFinite,
}

/// A way of calling the plan wrongly.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Misuse {
    None,
    /// The input one value short.
    ShortInput,
    /// The output one value long.
    LongOutput,
    /// One coordinate array too many (or, in 1-D, none).
    CoordArrays,
    /// The last coordinate array one value short.
    UnequalLengths,
    /// Execute before the points are set.
    ExecuteFirst,
    /// The setter of the other kind (type 3's on a type 1/2 plan and back).
    WrongSetter,
}

/// One fuzz case: what is planned, with which options, on which data, and how it is called.
#[derive(Clone, Debug)]
struct Case {
    f32: bool,
    ty: u8,
    /// Type 3's dimension (0 and 4 are invalid); types 1/2 take `modes.len()`.
    dim: usize,
    modes: Vec<usize>,
    /// Points (types 1/2), sources (type 3).
    m: usize,
    /// Type 3's targets.
    k: usize,
    ntransf: usize,
    isign: i32,
    tol: f64,
    fft_order: bool,
    kernel: KernelKind,
    sigma: Option<f64>,
    gaussian3: bool,
    threads: Option<usize>,
    schedule: Schedule,
    gpu_methods: (Option<GpuMethod>, Option<GpuMethod>),
    gpu_batch: usize,
    x: Coords,
    s: Coords,
    misuse: Misuse,
    adjoint: bool,
    seed: u64,
}

/// What happened to a case.
enum Outcome {
    /// A result within the bound (the relative error).
    Within,
    /// A typed error (its class), and whether the case was invalid on purpose.
    Error(String, bool),
}

fn tolerance() -> impl Strategy<Value = f64> {
    prop_oneof![
        8 => (1i32..=12).prop_map(|e| 10f64.powi(-e)),
        1 => prop_oneof![
            Just(0.0),
            Just(-1e-6),
            Just(f64::NAN),
            Just(f64::INFINITY),
            Just(1e-20),
            Just(f64::MIN_POSITIVE),
            Just(0.5),
            Just(2.0),
            Just(1e3),
        ],
    ]
}

fn coords() -> impl Strategy<Value = Coords> {
    prop_oneof![
        6 => Just(Coords::Plain),
        2 => Just(Coords::Wide),
        1 => Just(Coords::Edges),
        1 => Just(Coords::Subnormal),
        1 => Just(Coords::Offset),
        1 => Just(Coords::Huge),
        1 => Just(Coords::AllHuge),
        1 => Just(Coords::NonFinite),
    ]
}

fn misuse() -> impl Strategy<Value = Misuse> {
    prop_oneof![
        14 => Just(Misuse::None),
        1 => Just(Misuse::ShortInput),
        1 => Just(Misuse::LongOutput),
        1 => Just(Misuse::CoordArrays),
        1 => Just(Misuse::UnequalLengths),
        1 => Just(Misuse::ExecuteFirst),
        1 => Just(Misuse::WrongSetter),
    ]
}

fn method() -> impl Strategy<Value = Option<GpuMethod>> {
    prop_oneof![
        3 => Just(None),
        1 => Just(Some(GpuMethod::GmSort)),
        1 => Just(Some(GpuMethod::Sm)),
        1 => Just(Some(GpuMethod::OutputDriven)),
    ]
}

/// One mode count: mostly small, sometimes 0 or 1, rarely beyond any memory.
fn mode_count() -> impl Strategy<Value = usize> {
    prop_oneof![
        12 => 2usize..=14,
        2 => Just(1usize),
        1 => Just(0usize),
        1 => prop_oneof![Just(1usize << 40), Just(usize::MAX / 2)],
    ]
}

fn size() -> impl Strategy<Value = usize> {
    prop_oneof![4 => 2usize..=40, 1 => Just(0usize), 1 => Just(1usize)]
}

/// What a case transforms: precision (f32?), type, dimension, modes, points and targets,
/// transforms, sign, tolerance.
type Shape = (bool, u8, usize, Vec<usize>, (usize, usize), usize, i32, f64);

/// How a case calls the plan: coordinates of the points and targets, misuse, adjoint, seed.
type Calls = (Coords, Coords, Misuse, bool, u64);

fn calls() -> impl Strategy<Value = Calls> {
    (coords(), coords(), misuse(), any::<bool>(), any::<u64>())
}

/// The case of `shape` and `calls` with the options the planner would choose.
fn case(
    (f32, ty, dim, modes, (m, k), ntransf, isign, tol): Shape,
    (x, s, misuse, adjoint, seed): Calls,
) -> Case {
    Case {
        f32,
        ty,
        dim,
        modes,
        m,
        k,
        ntransf,
        isign,
        tol,
        fft_order: false,
        kernel: KernelKind::Pswf,
        sigma: None,
        gaussian3: false,
        threads: None,
        schedule: Schedule::Auto,
        gpu_methods: (None, None),
        gpu_batch: 0,
        x,
        s,
        misuse,
        adjoint,
        seed,
    }
}

/// Cases for the CPU: everything varies.
fn cpu_cases() -> impl Strategy<Value = Case> {
    let shape = (
        any::<bool>(),
        prop_oneof![2 => Just(1u8), 2 => Just(2u8), 2 => Just(3u8)],
        prop_oneof![10 => 1usize..=3, 1 => Just(0usize), 1 => Just(4usize)],
        proptest::collection::vec(mode_count(), 1..=3),
        (size(), size()),
        prop_oneof![6 => Just(1usize), 2 => 2usize..=3, 1 => Just(0usize)],
        prop_oneof![8 => prop_oneof![Just(1), Just(-1)], 1 => prop_oneof![Just(0), Just(2), Just(-5)]],
        tolerance(),
    );
    let options = (
        any::<bool>(),
        prop_oneof![
            4 => Just(KernelKind::Pswf),
            1 => Just(KernelKind::Es),
            1 => Just(KernelKind::Gaussian)
        ],
        prop_oneof![
            4 => Just(None),
            1 => Just(Some(1.25)),
            1 => Just(Some(2.0)),
            1 => Just(Some(1.6))
        ],
        prop_oneof![4 => Just(false), 1 => Just(true)],
        prop_oneof![Just(None), Just(Some(1usize)), Just(Some(2usize))],
        prop_oneof![
            Just(Schedule::Auto),
            Just(Schedule::SourceDriven),
            Just(Schedule::TargetDriven)
        ],
    );
    (shape, options, calls()).prop_map(
        |(shape, (fft_order, kernel, sigma, gaussian3, threads, schedule), calls)| Case {
            fft_order,
            kernel,
            sigma,
            gaussian3,
            threads,
            schedule,
            ..case(shape, calls)
        },
    )
}

/// Cases for OpenCL: PoCL builds a program per kernel width, FFT size and method (seconds
/// each on a fresh cache), so the tolerance is one per precision (or an invalid one, which
/// fails before any build), the modes and type 3 extents come from short lists, and σ and the
/// kernel are the planner's; methods, batches and the rest still vary.
fn opencl_cases() -> impl Strategy<Value = Case> {
    let modes = prop_oneof![
        Just(vec![12]),
        Just(vec![1]),
        Just(vec![0]),
        Just(vec![8, 5]),
        Just(vec![1, 7]),
        Just(vec![6, 4, 5]),
        Just(vec![1 << 40, 3]),
    ];
    let tol = prop_oneof![
        8 => Just(None),
        1 => prop_oneof![Just(Some(0.0)), Just(Some(f64::NAN)), Just(Some(-1.0)), Just(Some(1e-20))],
    ];
    let shape = (
        any::<bool>(),
        prop_oneof![Just(1u8), Just(2u8), Just(3u8)],
        prop_oneof![10 => 1usize..=3, 1 => Just(0usize), 1 => Just(4usize)],
        modes,
        (size(), size()),
        prop_oneof![6 => Just(1usize), 2 => 2usize..=3, 1 => Just(0usize)],
        prop_oneof![8 => prop_oneof![Just(1), Just(-1)], 1 => Just(0)],
        tol,
    );
    let options = (
        any::<bool>(),
        method(),
        method(),
        prop_oneof![Just(0usize), Just(1usize), Just(2usize)],
    );
    // The tolerance the precision's (1e-4 or 1e-6) unless an invalid one was drawn.
    let shape = shape.prop_map(|(f32, ty, dim, modes, mk, ntransf, isign, tol)| {
        let tol = tol.unwrap_or(if f32 { 1e-4 } else { 1e-6 });
        (f32, ty, dim, modes, mk, ntransf, isign, tol)
    });
    // Type 3 extents are pinned (see `draw`) unless a value is extreme.
    (shape, options, calls()).prop_map(|(shape, (fft_order, spread, interp, gpu_batch), calls)| {
        Case {
            fft_order,
            gpu_methods: (spread, interp),
            gpu_batch,
            ..case(shape, calls)
        }
    })
}

/// A value of `T` from an `f64`, rounding (to ±inf beyond `T`'s range, as `as` does).
fn to<T: BackendFloat>(v: f64) -> T {
    if T::PRECISION == nudt_gen::Precision::F32 {
        T::from(v as f32).unwrap()
    } else {
        T::from(v).unwrap()
    }
}

fn wide<T: BackendFloat>(v: T) -> f64 {
    v.to_f64().unwrap()
}

/// `n` coordinates of class `class`, centred on 0 with half-width `half` where plain.
fn draw<T: BackendFloat>(rng: &mut Lcg, class: Coords, n: usize, half: f64, pin: bool) -> Vec<T> {
    let tiny = if T::PRECISION == nudt_gen::Precision::F32 {
        f32::MIN_POSITIVE as f64
    } else {
        f64::MIN_POSITIVE
    };
    let pick = |rng: &mut Lcg, vals: &[f64]| {
        let i = ((rng.next() + 1.0) * 0.5 * vals.len() as f64) as usize;
        vals[i.min(vals.len() - 1)]
    };
    let mut v: Vec<f64> = (0..n)
        .map(|_| match class {
            Coords::Wide if pin => 2.0 * half * rng.next(),
            Coords::Wide => 60.0 * rng.next(),
            Coords::Edges => pick(
                rng,
                &[0.0, -0.0, PI, -PI, 2.0 * PI, -2.0 * PI, 3.0 * PI, -3.0 * PI],
            ),
            Coords::Subnormal => tiny * rng.next() * 0.5,
            Coords::AllHuge => pick(rng, &[1e300, -1e300, f64::MAX, -f64::MAX, 1e308]),
            _ => half * rng.next(),
        })
        .collect();
    // Pinned extents: the first two values at ±half, so that a type 3's grids (and on
    // OpenCL its programs) do not change with the draw.
    if pin && matches!(class, Coords::Plain | Coords::Huge | Coords::NonFinite) && n >= 2 {
        (v[0], v[1]) = (half, -half);
    }
    if n > 0 {
        let at = ((rng.next() + 1.0) * 0.5 * n as f64) as usize % n;
        match class {
            Coords::Offset => {
                let o = pick(rng, &[1e4, -1e6, 1e9, 2f64.powi(40)]);
                v.iter_mut().for_each(|x| *x += o);
            }
            Coords::Huge => v[at] = pick(rng, &[1e300, -1e300, f64::MAX, -f64::MAX]),
            Coords::NonFinite => v[at] = pick(rng, &[f64::NAN, f64::INFINITY, f64::NEG_INFINITY]),
            _ => {}
        }
    }
    v.into_iter().map(to::<T>).collect()
}

fn complexes<T: BackendFloat>(rng: &mut Lcg, n: usize) -> Vec<Complex<T>> {
    (0..n)
        .map(|_| Complex::new(to::<T>(rng.next()), to::<T>(rng.next())))
        .collect()
}

fn widen<T: BackendFloat>(v: &[Vec<T>]) -> Vec<Vec<f64>> {
    v.iter()
        .map(|d| d.iter().map(|&c| wide(c)).collect())
        .collect()
}

fn slices<T>(v: &[Vec<T>]) -> Vec<&[T]> {
    v.iter().map(|x| &x[..]).collect()
}

fn options(c: &Case) -> BackendOptions {
    let order = if c.fft_order {
        ModeOrder::Fft
    } else {
        ModeOrder::Cmcl
    };
    let method = if c.gaussian3 {
        Type3Method::GaussianCapozzoli
    } else {
        Type3Method::Finufft
    };
    let mut o = BackendOptions::default()
        .with_kernel(c.kernel, c.sigma.map(Upsampling))
        .with_mode_order(order)
        .with_type3(method)
        .with_gpu_methods(c.gpu_methods.0, c.gpu_methods.1)
        .with_gpu_batch(c.gpu_batch);
    o.cpu.threads = c.threads;
    o.cpu.strategy = c.schedule;
    o
}

/// Whether the fuzzer made `c` invalid on purpose, given the lengths `a` of one input and
/// `n` of one output: every such case must end in an error. Large but finite coordinates
/// are valid (a type 3 whose extents make its grid too large may still fail: that is listed
/// as an error on valid input, not failed), and so are tolerances above 1.
fn invalid(c: &Case, f32: bool, [a, n]: [usize; 2]) -> bool {
    let floor = if f32 { 0.5e-7 } else { 0.5e-15 };
    let bad_tol = !(c.tol.is_finite() && c.tol >= floor);
    let inf_in_f32 = |cl: Coords| f32 && matches!(cl, Coords::Huge | Coords::AllHuge);
    let points_bad = |cl: Coords, n: usize| n > 0 && (cl == Coords::NonFinite || inf_in_f32(cl));
    let shape_bad = match c.ty {
        3 => !(1..=3).contains(&c.dim) || points_bad(c.x, c.m) || points_bad(c.s, c.k),
        _ => c.modes.contains(&0) || c.modes.iter().any(|&n| n >= 1 << 40) || points_bad(c.x, c.m),
    };
    let misuse = match c.misuse {
        Misuse::None => false,
        Misuse::CoordArrays | Misuse::ExecuteFirst | Misuse::WrongSetter | Misuse::LongOutput => {
            true
        }
        // Nothing to take a value from in an empty input.
        Misuse::ShortInput => a * c.ntransf > 0,
        Misuse::UnequalLengths => c.m > 0 || (c.ty == 3 && c.k > 0),
    };
    let _ = n;
    bad_tol || shape_bad || misuse || c.ntransf == 0 || !matches!(c.isign, 1 | -1)
}

/// `Input(NonFinite { .. })` → `Input::NonFinite`: the error's variant path, for counting.
fn class(e: &BackendError) -> String {
    let d = format!("{e:?}");
    let mut parts = Vec::new();
    let mut rest = d.as_str();
    for _ in 0..3 {
        let end = rest
            .find(|ch: char| !(ch.is_alphanumeric() || ch == '_'))
            .unwrap_or(rest.len());
        if end == 0 {
            break;
        }
        parts.push(&rest[..end]);
        rest = rest[end..].trim_start_matches(['(', ' ']);
        if !rest.starts_with(|ch: char| ch.is_ascii_uppercase()) {
            break;
        }
    }
    parts.join("::")
}

/// Runs case `c` in precision `T` on `b`: a result within the bound, a typed error, or a
/// failure (a wrong answer, or bad input accepted).
fn run_case<T: BackendFloat>(b: Backend, c: &Case) -> Result<Outcome, String> {
    let opts = options(c);
    let mut rng = Lcg(c.seed | 1);
    let ty = match c.ty {
        1 => TransformType::Type1,
        2 => TransformType::Type2,
        _ => TransformType::Type3,
    };
    let nmodes = c.modes.iter().fold(1usize, |p, &n| p.saturating_mul(n));
    let (a, n) = match ty {
        TransformType::Type1 => (c.m, nmodes),
        TransformType::Type2 => (nmodes, c.m),
        TransformType::Type3 => (c.m, c.k),
    };
    let (a, n) = if c.adjoint { (n, a) } else { (a, n) };
    let invalid = invalid(c, T::PRECISION == nudt_gen::Precision::F32, [a, n]);
    // A tolerance the forced σ or kernel cannot reach within the widest kernel is refused by
    // design (the message says what would reach it).
    // So is a type 3 whose points at ±1e300 or beyond make its centring phases overflow.
    let unreachable = |e: &BackendError| {
        let forced = c.sigma.is_some() || c.kernel != KernelKind::Pswf;
        let extreme = |cl: Coords| matches!(cl, Coords::Huge | Coords::AllHuge);
        (forced && class(e) == "Input::Gen::WidthForTolerance")
            || (c.sigma.is_some() && class(e) == "Input::Type3Rounding")
            || (c.ty == 3 && (extreme(c.x) || extreme(c.s)) && class(e) == "Input::Type3Phase")
    };
    let err = |e: BackendError| Ok(Outcome::Error(class(&e), invalid || unreachable(&e)));
    let plan = match ty {
        TransformType::Type3 => b.plan_type3::<T>(c.dim, c.isign, c.ntransf, c.tol, &opts),
        _ => b.plan::<T>(ty, &c.modes, c.isign, c.ntransf, c.tol, &opts),
    };
    let mut p: Box<dyn NufftPlan<T>> = match plan {
        Ok(p) => p,
        Err(e) => return err(e),
    };
    let dim = if ty == TransformType::Type3 {
        c.dim
    } else {
        c.modes.len()
    };
    // Type 3 extents are pinned at 3 (sources) and 10 (targets), whatever else is drawn.
    let pin = ty == TransformType::Type3;
    let mut x: Vec<Vec<T>> = (0..dim)
        .map(|_| draw::<T>(&mut rng, c.x, c.m, 3.0, pin))
        .collect();
    let mut s: Vec<Vec<T>> = match ty {
        TransformType::Type3 => (0..dim)
            .map(|_| draw::<T>(&mut rng, c.s, c.k, 10.0, pin))
            .collect(),
        _ => Vec::new(),
    };
    if ty != TransformType::Type3 && c.x == Coords::Plain {
        // Plain points fill [−π, π) as the common case does.
        x.iter_mut()
            .for_each(|d| d.iter_mut().for_each(|v| *v = to::<T>(wide(*v) * PI / 3.0)));
    }
    if a.max(n).saturating_mul(c.ntransf) > 1 << 24 {
        return Err(format!("planned {nmodes} modes (case {c:?})"));
    }
    let mut input = complexes::<T>(&mut rng, a * c.ntransf);
    let mut out = vec![Complex::<T>::new(to::<T>(7.0), to::<T>(7.0)); n * c.ntransf];
    match c.misuse {
        Misuse::ShortInput => {
            input.pop();
        }
        Misuse::LongOutput => out.push(Complex::default()),
        Misuse::UnequalLengths => {
            if let Some(last) = x.last_mut() {
                last.pop();
            }
            if let Some(last) = s.last_mut() {
                last.pop();
            }
        }
        _ => {}
    }
    let (wx, ws) = (widen(&x), widen(&s));
    let mut xs = slices(&x);
    if c.misuse == Misuse::CoordArrays {
        if dim == 1 {
            xs.clear();
        } else {
            xs.push(xs[0]);
        }
    }
    let ss = slices(&s);
    let set = |p: &mut Box<dyn NufftPlan<T>>| match (ty, c.misuse) {
        (TransformType::Type3, Misuse::WrongSetter) => p.set_points(&xs),
        (TransformType::Type3, _) => p.set_points_type3(&xs, &ss),
        (_, Misuse::WrongSetter) => p.set_points_type3(&xs, &xs),
        _ => p.set_points(&xs),
    };
    if c.misuse != Misuse::ExecuteFirst {
        if let Err(e) = set(&mut p) {
            return err(e);
        }
    }
    let run = if c.adjoint {
        p.execute_adjoint(&input, &mut out)
    } else {
        p.execute(&input, &mut out)
    };
    if let Err(e) = run {
        return err(e);
    }
    if invalid {
        return Err(format!("accepted invalid input (case {c:?})"));
    }
    // The direct sum over every output of every transform.
    let order = opts.cpu.mode_order;
    let sign = if c.adjoint { -c.isign } else { c.isign };
    let all: Vec<usize> = (0..n).collect();
    let (wxs, wss) = (slices(&wx), slices(&ws));
    let (mut got, mut want) = (Vec::new(), Vec::new());
    for t in 0..c.ntransf {
        let inp: Vec<Complex64> = input[t * a..(t + 1) * a]
            .iter()
            .map(|v| Complex64::new(wide(v.re), wide(v.im)))
            .collect();
        want.extend(match (ty, c.adjoint) {
            (TransformType::Type1, false) | (TransformType::Type2, true) => {
                direct::type1(&wxs, &inp, &c.modes, order, sign, &all)
            }
            (TransformType::Type2, false) | (TransformType::Type1, true) => {
                direct::type2(&wxs, &inp, &c.modes, order, sign, &all)
            }
            (_, false) => direct::type3(&wxs, &inp, &wss, sign, &all),
            (_, true) => direct::type3(&wss, &inp, &wxs, sign, &all),
        });
        got.extend(
            out[t * n..(t + 1) * n]
                .iter()
                .map(|v| Complex64::new(wide(v.re), wide(v.im))),
        );
    }
    if let Some(i) = got
        .iter()
        .position(|v| !v.re.is_finite() || !v.im.is_finite())
    {
        return Err(format!("non-finite output {} at {i} (case {c:?})", got[i]));
    }
    // The phase's own rounding: ε · Σ_d max|k_d| · max|x_d|.
    let eps = if T::PRECISION == nudt_gen::Precision::F32 {
        f32::EPSILON as f64
    } else {
        f64::EPSILON
    };
    let maxabs = |v: &[f64]| v.iter().fold(0.0f64, |m, x| m.max(x.abs()));
    let reach: f64 = match ty {
        TransformType::Type3 => wx.iter().zip(&ws).map(|(x, s)| maxabs(x) * maxabs(s)).sum(),
        _ => wx
            .iter()
            .zip(&c.modes)
            .map(|(x, &nm)| maxabs(x) * nm.div_ceil(2) as f64)
            .sum(),
    };
    let bound = 10.0 * c.tol + 10.0 * eps * reach;
    // No output exceeds what the strengths allow (|Σ c e^{iθ}| ≤ Σ|c|), with room for the
    // kernel's ripple.
    let l1: f64 = input
        .iter()
        .map(|v| Complex64::new(wide(v.re), wide(v.im)).norm())
        .sum();
    let l2 = input
        .iter()
        .map(|v| Complex64::new(wide(v.re), wide(v.im)).norm_sqr())
        .sum::<f64>()
        .sqrt();
    let largest = got.iter().fold(0.0f64, |m, v| m.max(v.norm()));
    if largest > 2.0 * l1 + 1e-30 {
        return Err(format!(
            "output {largest:e} exceeds 2·Σ|input| = {:e} (case {c:?})",
            2.0 * l1
        ));
    }
    if want.iter().any(|v| !v.re.is_finite() || !v.im.is_finite()) {
        // A phase k·x beyond the largest f64 (x near f64::MAX): the direct sum has no answer
        // either; the result is finite and bounded, which is all there is to check.
        return Ok(Outcome::Within);
    }
    // Relative to the larger of the result's norm and the input's times √outputs, its size
    // where the terms do not cancel: a NUFFT's error follows the input (|error| ≲ tol·‖input‖
    // per output), so a result that cancels — every point within a subnormal of 0, all
    // outputs one sum Σ_k f_k near 0 — measured against itself alone would count the
    // cancellation as the transform's error (ES at 1e-2: 0.7·tol of the input's scale,
    // 14·tol of the cancelled result's).
    let norm = |v: &[Complex64]| v.iter().map(|z| z.norm_sqr()).sum::<f64>().sqrt();
    let scale = norm(&want).max(l2 * (n as f64).sqrt());
    let diff: Vec<Complex64> = got.iter().zip(&want).map(|(g, w)| g - w).collect();
    let e = norm(&diff) / if scale > 0.0 { scale } else { 1.0 };
    if e.is_nan() || e > bound {
        return Err(format!(
            "error {e:.3e} above the bound {bound:.3e} (case {c:?})"
        ));
    }
    Ok(Outcome::Within)
}

/// What one backend's run saw.
#[derive(Default)]
struct Tally {
    cases: usize,
    within: usize,
    errors: BTreeMap<String, usize>,
    /// Errors on cases that were valid by [`invalid`]'s model, a few of them shown.
    unexpected: BTreeMap<String, usize>,
    examples: Vec<String>,
    crashes: usize,
    /// With `NUDT_FUZZ_SURVEY=1`: every failure, the run going on past them.
    failures: Vec<String>,
}

/// The backend's availability, as backends.rs reports it: `false` (SKIPPED) where it is
/// missing and not required.
fn available(b: Backend, var: &str) -> bool {
    match b.available() {
        Ok(()) => true,
        Err(e) => {
            let required = std::env::var(var).is_ok_and(|v| v == "1") && b.is_built();
            assert!(!required, "{b} is required here ({var}=1) but: {e}");
            eprintln!("SKIPPED {b}: {e}");
            false
        }
    }
}

fn env_number(var: &str, default: u64) -> u64 {
    match std::env::var(var) {
        Ok(v) => v
            .parse()
            .unwrap_or_else(|_| panic!("{var}={v}: expected a whole number")),
        Err(_) => default,
    }
}

/// Aborts the process if one case runs longer than `limit`: a hang ends the run with the
/// case named rather than at CI's timeout.
/// Returns the start of the running case (milliseconds since the returned epoch, plus one; 0
/// while none runs) and its description, which the caller keeps up to date.
fn watchdog(limit: Duration) -> (Arc<AtomicU64>, Arc<Mutex<String>>, Instant) {
    let started = Arc::new(AtomicU64::new(0));
    let current = Arc::new(Mutex::new(String::new()));
    let (s, cur) = (started.clone(), current.clone());
    let epoch = Instant::now();
    std::thread::spawn(move || loop {
        std::thread::sleep(Duration::from_millis(500));
        let at = s.load(Ordering::Relaxed);
        if at > 0
            && (epoch.elapsed().as_millis() as u64).saturating_sub(at) > limit.as_millis() as u64
        {
            eprintln!(
                "fuzz: HANG, a case ran longer than {} s: {}",
                limit.as_secs(),
                cur.lock().unwrap_or_else(|e| e.into_inner())
            );
            std::process::abort();
        }
    });
    (started, current, epoch)
}

fn fuzz(b: Backend, cases: u32, strategy: impl Strategy<Value = Case>, command: &str) {
    let limit = Duration::from_secs(env_number("NUDT_FUZZ_HANG_S", 120));
    let (started, current, epoch) = watchdog(limit);
    let tally = Mutex::new(Tally::default());
    // Survey: list every failure rather than stop (and shrink) at the first.
    let survey = std::env::var("NUDT_FUZZ_SURVEY").is_ok_and(|v| v == "1");
    let config = Config {
        cases,
        failure_persistence: None,
        max_shrink_iters: 200,
        ..Config::default()
    };
    let seed = env_number("NUDT_FUZZ_SEED", 43);
    let mut bytes = [0u8; 32];
    bytes[..8].copy_from_slice(&seed.to_le_bytes());
    let mut runner =
        TestRunner::new_with_rng(config, TestRng::from_seed(RngAlgorithm::ChaCha, &bytes));
    let t0 = Instant::now();
    let result = runner.run(&strategy, |c| {
        *current.lock().unwrap_or_else(|e| e.into_inner()) = format!("{b} {c:?}");
        started.store(epoch.elapsed().as_millis() as u64 + 1, Ordering::Relaxed);
        let r = catch_unwind(AssertUnwindSafe(|| match c.f32 {
            true => run_case::<f32>(b, &c),
            false => run_case::<f64>(b, &c),
        }));
        started.store(0, Ordering::Relaxed);
        let mut t = tally.lock().unwrap_or_else(|e| e.into_inner());
        t.cases += 1;
        match r {
            Ok(Ok(Outcome::Within)) => t.within += 1,
            Ok(Ok(Outcome::Error(class, expected))) => {
                *t.errors.entry(class.clone()).or_default() += 1;
                if !expected {
                    *t.unexpected.entry(class.clone()).or_default() += 1;
                    if t.examples.len() < 6 {
                        t.examples.push(format!("{class}: {c:?}"));
                    }
                }
            }
            Ok(Err(why)) => {
                t.crashes += 1;
                if survey {
                    t.failures.push(why);
                    return Ok(());
                }
                return Err(TestCaseError::fail(format!("{b}: {why}")));
            }
            Err(panic) => {
                t.crashes += 1;
                let what = panic
                    .downcast_ref::<String>()
                    .cloned()
                    .or_else(|| panic.downcast_ref::<&str>().map(|s| s.to_string()))
                    .unwrap_or_default();
                let why = format!("panicked: {what} (case {c:?})");
                if survey {
                    t.failures.push(why);
                    return Ok(());
                }
                return Err(TestCaseError::fail(format!("{b}: {why}")));
            }
        }
        Ok(())
    });
    let t = tally.into_inner().unwrap_or_else(|e| e.into_inner());
    let errors: usize = t.errors.values().sum();
    eprintln!(
        "fuzz {b}: {} cases (seed {seed}) in {:.1} s: {} within 10·tol of the direct sum, {errors} typed errors, {} crashes",
        t.cases,
        t0.elapsed().as_secs_f64(),
        t.within,
        t.crashes
    );
    for (class, n) in &t.errors {
        let unexpected = t.unexpected.get(class).copied().unwrap_or(0);
        eprintln!("fuzz {b}:   {n:>5} {class} ({unexpected} on valid input)");
    }
    for e in &t.examples {
        eprintln!("fuzz {b}:   error on valid input: {e}");
    }
    for f in &t.failures {
        eprintln!("fuzz {b}:   FAILED: {f}");
    }
    eprintln!("fuzz {b}: rerun with: {command}");
    assert!(t.failures.is_empty(), "{} failures", t.failures.len());
    match result {
        Ok(()) => {}
        Err(TestError::Fail(why, case)) => panic!("{why}\nminimal failing case: {case:?}"),
        Err(TestError::Abort(why)) => panic!("fuzzing aborted: {why}"),
    }
}

/// The number of cases: `NUDT_FUZZ_CASES`, else `default`.
fn cases(default: u64) -> u64 {
    env_number("NUDT_FUZZ_CASES", default)
}

#[test]
fn cpu_calls_are_within_tolerance_or_typed_errors() {
    let n = cases(1000) as u32;
    let command =
        "cargo test --release -p nudt-runtime --features opencl --test fuzz cpu -- --nocapture";
    fuzz(Backend::Cpu, n, cpu_cases(), command);
}

#[test]
fn opencl_calls_are_within_tolerance_or_typed_errors() {
    if !available(Backend::OpenCl, "NUDT_REQUIRE_OPENCL") {
        return;
    }
    let n = cases(1000).div_ceil(10) as u32;
    let command = "NUDT_REQUIRE_OPENCL=1 cargo test --release -p nudt-runtime --features opencl --test fuzz opencl -- --nocapture";
    fuzz(Backend::OpenCl, n, opencl_cases(), command);
}
