//! Device failures in the middle of a plan's work (issue 43): on every GPU backend here, for
//! types 1–3 in 1–3 dimensions (f64, and f32 in 2-D), each device call that plan creation,
//! set-points and execute make (launches of the sort, spreading, FFT, interpolation and
//! correction kernels, copies, fills, FFTs, allocations) is made to fail in turn
//! ([`nudt_runtime::fault`]). Every failure must come back as the backend's typed error for
//! that call (no panic, no other error), and then:
//!
//! * a failed execute leaves the plan as it was: the same plan's next execute is right;
//! * a failed set-points leaves the plan without points: execute is
//!   [`NudtError::PointsNotSet`] (never an answer from half-sorted points) until set-points
//!   succeeds, after which it is right;
//! * a failed plan creation leaves nothing behind, and a plan dropped after a failure makes
//!   way for a new one in the same process that is right.
//!
//! "Right" is within 10× the tolerance of the direct sum at every output. CI runs it on
//! PoCL, the GPU machine on CUDA (also under compute-sanitizer).
//! ```sh
//! cargo test --release -p nudt-runtime --all-features --test suite faults::
//! ```

use crate::common::{backends, Lcg};
use nudt_runtime::backend::{Backend, BackendError, BackendFloat, BackendOptions, NufftPlan};
use nudt_runtime::fault::{device_calls, fail_device_call};
use nudt_runtime::planner::validate::type_number;
use nudt_runtime::{direct, ModeOrder, NudtError, TransformType};
use num_complex::{Complex, Complex64};
use std::f64::consts::PI;

/// One problem: its data in f64 and the direct sum at every output.
struct Problem {
    ty: TransformType,
    dim: usize,
    modes: Vec<usize>,
    x: Vec<Vec<f64>>,
    s: Vec<Vec<f64>>,
    input: Vec<Complex64>,
    want: Vec<Complex64>,
    tol: f64,
}

impl Problem {
    fn new(ty: TransformType, dim: usize, tol: f64) -> Self {
        let mut rng = Lcg(7 + dim as u64 + 10 * ty as u64);
        let modes = [[24, 1, 1], [12, 10, 1], [6, 8, 5]][dim - 1][..dim].to_vec();
        let (m, k) = (150, 40);
        let type3 = ty == TransformType::Type3;
        let mut coords = |n: usize, half: f64| -> Vec<Vec<f64>> {
            (0..dim)
                .map(|_| (0..n).map(|_| half * rng.next()).collect())
                .collect()
        };
        let x = coords(m, if type3 { 3.0 } else { PI });
        let s = if type3 { coords(k, 9.0) } else { Vec::new() };
        let n_in = match ty {
            TransformType::Type2 => modes.iter().product(),
            _ => m,
        };
        let input: Vec<Complex64> = (0..n_in)
            .map(|_| Complex64::new(rng.next(), rng.next()))
            .collect();
        let n_out = match ty {
            TransformType::Type1 => modes.iter().product(),
            TransformType::Type2 => m,
            TransformType::Type3 => k,
        };
        let all: Vec<usize> = (0..n_out).collect();
        let (xs, ss) = (slices(&x), slices(&s));
        let isign = sign(ty);
        let want = match ty {
            TransformType::Type1 => {
                direct::type1(&xs, &input, &modes, ModeOrder::Cmcl, isign, &all)
            }
            TransformType::Type2 => {
                direct::type2(&xs, &input, &modes, ModeOrder::Cmcl, isign, &all)
            }
            TransformType::Type3 => direct::type3(&xs, &input, &ss, isign, &all),
        };
        Problem {
            ty,
            dim,
            modes,
            x,
            s,
            input,
            want,
            tol,
        }
    }
}

fn sign(ty: TransformType) -> i32 {
    if ty == TransformType::Type2 {
        -1
    } else {
        1
    }
}

fn slices<T>(v: &[Vec<T>]) -> Vec<&[T]> {
    v.iter().map(|a| &a[..]).collect()
}

/// The problem's arrays in the plan's precision.
struct Data<T> {
    x: Vec<Vec<T>>,
    s: Vec<Vec<T>>,
    input: Vec<Complex<T>>,
}

/// What one fault did: the error came back typed, or the call was one the plan can do
/// without (its result then right).
#[derive(Default, Debug)]
struct Tally {
    failed: usize,
    absorbed: usize,
}

/// Runs `p` on `backend` in precision `T` with every device call of each stage failed in
/// turn, asserting the behaviour the module's documentation states.
fn faults_of<T: BackendFloat>(backend: Backend, p: &Problem) -> Tally {
    let narrow = |v: &[Vec<f64>]| -> Vec<Vec<T>> {
        v.iter()
            .map(|a| a.iter().map(|&c| T::from(c).unwrap()).collect())
            .collect()
    };
    let d = Data::<T> {
        x: narrow(&p.x),
        s: narrow(&p.s),
        input: p
            .input
            .iter()
            .map(|c| Complex::new(T::from(c.re).unwrap(), T::from(c.im).unwrap()))
            .collect(),
    };
    let what = format!(
        "{backend} type {} {}-D {}",
        type_number(p.ty),
        p.dim,
        std::any::type_name::<T>()
    );
    let opts = BackendOptions::default();
    let make = || -> Result<Box<dyn NufftPlan<T>>, BackendError> {
        match p.ty {
            TransformType::Type3 => backend.plan_type3::<T>(p.dim, 1, 1, p.tol, &opts),
            ty => backend.plan::<T>(ty, &p.modes, sign(ty), 1, p.tol, &opts),
        }
    };
    let set = |plan: &mut Box<dyn NufftPlan<T>>| match p.ty {
        TransformType::Type3 => plan.set_points_type3(&slices(&d.x), &slices(&d.s)),
        _ => plan.set_points(&slices(&d.x)),
    };
    let exec = |plan: &mut Box<dyn NufftPlan<T>>| -> Result<Vec<Complex64>, BackendError> {
        let mut out = vec![Complex::<T>::default(); p.want.len()];
        plan.execute(&d.input, &mut out)?;
        Ok(out
            .iter()
            .map(|v| Complex64::new(v.re.to_f64().unwrap(), v.im.to_f64().unwrap()))
            .collect())
    };
    let right = |out: &[Complex64], when: &str| {
        let e = direct::rel_error(out, &p.want);
        assert!(
            e <= 10.0 * p.tol,
            "{what}, {when}: error {e:.2e} (tol {:.0e})",
            p.tol
        );
    };
    // The injected failure as its backend reports it.
    let injected = |e: &BackendError, when: &str| {
        let s = e.to_string();
        let typed = match backend {
            Backend::Cuda => s.contains("injected fault"),
            _ => s.contains("OpenCL error -5"),
        };
        assert!(typed, "{what}, {when}: not the injected failure: {s}");
    };
    // The first plan counts each stage's device calls (an execute's after the first, which
    // may allocate its work buffers once: the larger of the two).
    let c0 = device_calls();
    let mut plan = make().unwrap();
    let c1 = device_calls();
    set(&mut plan).unwrap();
    let c2 = device_calls();
    right(&exec(&mut plan).unwrap(), "first execute");
    let c3 = device_calls();
    right(&exec(&mut plan).unwrap(), "second execute");
    let c4 = device_calls();
    let (n_plan, n_set, n_exec) = (c1 - c0, c2 - c1, (c3 - c2).max(c4 - c3));
    assert!(n_set > 0 && n_exec > 0, "{what}: no device calls counted");
    let mut t = Tally::default();
    let mut tally = |r: Result<(), BackendError>, when: &str| match r {
        Err(e) => {
            injected(&e, when);
            t.failed += 1;
            true
        }
        Ok(()) => {
            t.absorbed += 1;
            false
        }
    };
    for n in 1..=n_exec {
        let when = format!("execute's call {n} of {n_exec} failed");
        fail_device_call(n);
        let r = exec(&mut plan);
        fail_device_call(0);
        match r {
            Ok(out) => {
                right(&out, &when);
                tally(Ok(()), &when);
            }
            Err(e) => {
                tally(Err(e), &when);
            }
        }
        right(
            &exec(&mut plan).unwrap(),
            &format!("{when}, the next execute"),
        );
    }
    for n in 1..=n_set {
        let when = format!("set-points' call {n} of {n_set} failed");
        fail_device_call(n);
        let r = set(&mut plan);
        fail_device_call(0);
        if tally(r, &when) {
            let r = exec(&mut plan);
            assert!(
                matches!(r, Err(BackendError::Input(NudtError::PointsNotSet))),
                "{what}, {when}: execute gave {:?}",
                r.map(|_| "an answer")
            );
            set(&mut plan).unwrap();
        }
        right(
            &exec(&mut plan).unwrap(),
            &format!("{when}, then set again"),
        );
    }
    // A plan dropped in the middle of a failed execute; a new one in the same process.
    fail_device_call(n_exec.div_ceil(2));
    let r = exec(&mut plan);
    fail_device_call(0);
    tally(r.map(drop), "execute before the drop");
    drop(plan);
    for n in 1..=n_plan {
        let when = format!("plan creation's call {n} of {n_plan} failed");
        fail_device_call(n);
        let r = make();
        fail_device_call(0);
        let Ok(mut plan) = r.map_err(|e| tally(Err(e), &when)) else {
            continue;
        };
        tally(Ok(()), &when);
        set(&mut plan).unwrap();
        right(&exec(&mut plan).unwrap(), &when);
    }
    let mut plan = make().unwrap();
    set(&mut plan).unwrap();
    right(&exec(&mut plan).unwrap(), "a new plan after the drop");
    eprintln!("{what}: device calls: plan {n_plan}, set-points {n_set}, execute {n_exec}; {t:?}");
    t
}

#[test]
fn every_device_call_failing_leaves_a_typed_error_and_a_usable_plan() {
    let gpus: Vec<Backend> = backends()
        .into_iter()
        .filter(|&b| b != Backend::Cpu)
        .collect();
    for b in gpus {
        let mut total = Tally::default();
        let mut add = |t: Tally| {
            total.failed += t.failed;
            total.absorbed += t.absorbed;
        };
        for ty in [
            TransformType::Type1,
            TransformType::Type2,
            TransformType::Type3,
        ] {
            for dim in 1..=3 {
                add(faults_of::<f64>(b, &Problem::new(ty, dim, 1e-6)));
            }
            add(faults_of::<f32>(b, &Problem::new(ty, 2, 1e-4)));
        }
        eprintln!(
            "{b}: {} injected failures typed, {} absorbed",
            total.failed, total.absorbed
        );
        assert!(total.failed > 100, "{b}: {total:?}");
    }
}
