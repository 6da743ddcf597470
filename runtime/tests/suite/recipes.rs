//! One rule for every backend: the same problem and points given to each backend's plan give
//! the same recipe (kernel, σ, width, tolerance split, grids, limits), and the recipes follow
//! the plan layer's rules, checked here from first principles (σ·N, the type 3 grid bound).
//!
//! The CPU always runs; OpenCL with `--features opencl` where a device answers (required
//! where `NUDT_REQUIRE_OPENCL=1`, as `.ci/run` sets with PoCL), CUDA with `--features cuda`
//! where a GPU answers (required where `NUDT_REQUIRE_GPU=1`). A backend that is built but has
//! no device says SKIPPED.
//! ```sh
//! cargo test --release -p nudt-runtime --features opencl --test suite recipes::
//! ```

use crate::common;
use common::Lcg;
use nudt_runtime::backend::{Backend, BackendError, BackendFloat, BackendOptions, NufftPlan};
use nudt_runtime::planner::limits::{MAX_GRID_SIDE, MAX_POINTS};
use nudt_runtime::planner::DeviceClass;
use nudt_runtime::{Recipe, TransformType, Upsampling};

/// `m` deterministic points in `[−scale, scale)^dim`, one array per dimension.
fn points<T: BackendFloat>(rng: &mut Lcg, dim: usize, m: usize, scale: f64) -> Vec<Vec<T>> {
    (0..dim)
        .map(|_| (0..m).map(|_| T::of(scale * rng.next())).collect())
        .collect()
}

/// One problem of the matrix: a type 1/2 with `modes`, or a type 3 in `modes.len()`
/// dimensions with targets spread over `[−extent, extent)`.
struct Case {
    ty: TransformType,
    modes: &'static [usize],
    points: usize,
    tol: f64,
    sigma: Option<f64>,
    extent: f64,
}

const CASES: &[Case] = &[
    // Sparse: σ stays 2.
    Case {
        ty: TransformType::Type1,
        modes: &[300],
        points: 100,
        tol: 1e-9,
        sigma: None,
        extent: 0.0,
    },
    // Dense 2-D and 3-D: σ raised on a CPU where the points outnumber the grid's.
    Case {
        ty: TransformType::Type1,
        modes: &[40, 30],
        points: 20_000,
        tol: 1e-6,
        sigma: None,
        extent: 0.0,
    },
    Case {
        ty: TransformType::Type2,
        modes: &[12, 10, 8],
        points: 20_000,
        tol: 1e-5,
        sigma: None,
        extent: 0.0,
    },
    // A σ the caller fixed, and one that leaves a grid side over 1024 (the FFT sizes' rule).
    Case {
        ty: TransformType::Type2,
        modes: &[24, 20],
        points: 5000,
        tol: 1e-7,
        sigma: Some(1.25),
        extent: 0.0,
    },
    Case {
        ty: TransformType::Type1,
        modes: &[1010],
        points: 500,
        tol: 1e-6,
        sigma: None,
        extent: 0.0,
    },
    // Type 3: σ from the extents, the tolerance split over two stages and the axes.
    Case {
        ty: TransformType::Type3,
        modes: &[1, 1],
        points: 3000,
        tol: 1e-6,
        sigma: None,
        extent: 60.0,
    },
    Case {
        ty: TransformType::Type3,
        modes: &[1, 1, 1],
        points: 2000,
        tol: 1e-8,
        sigma: None,
        extent: 12.0,
    },
    Case {
        ty: TransformType::Type3,
        modes: &[1],
        points: 1000,
        tol: 1e-6,
        sigma: Some(1.5),
        extent: 400.0,
    },
];

fn require(var: &str) -> bool {
    std::env::var(var).is_ok_and(|v| v == "1")
}

/// The backend's plan for `case` with its points set, or `None` where it has no device.
fn planned<T: BackendFloat>(
    backend: Backend,
    case: &Case,
    tol: f64,
) -> Option<Box<dyn NufftPlan<T>>> {
    let mut opts = BackendOptions::default();
    opts = opts.with_kernel(nudt_runtime::KernelKind::Pswf, case.sigma.map(Upsampling));
    opts.cpu.use_profile = false;
    let dim = case.modes.len();
    let made = match case.ty {
        TransformType::Type3 => backend.plan_type3::<T>(dim, 1, 2, tol, &opts),
        ty => backend.plan::<T>(ty, case.modes, -1, 2, tol, &opts),
    };
    let mut plan = match made {
        Ok(p) => p,
        Err(BackendError::Input(e)) => panic!("{backend}: {e}"),
        Err(e) => {
            let required = match backend {
                Backend::Cpu => true,
                Backend::Cuda => require("NUDT_REQUIRE_GPU"),
                Backend::OpenCl => require("NUDT_REQUIRE_OPENCL"),
            };
            assert!(!required, "{backend} is required but: {e}");
            eprintln!("SKIPPED: {backend} ({e})");
            return None;
        }
    };
    let mut rng = Lcg(7 + case.points as u64);
    let x = points::<T>(&mut rng, dim, case.points, std::f64::consts::PI);
    let xr: Vec<&[T]> = x.iter().map(|v| &v[..]).collect();
    match case.ty {
        TransformType::Type3 => {
            let s = points::<T>(&mut rng, dim, case.points, case.extent);
            let sr: Vec<&[T]> = s.iter().map(|v| &v[..]).collect();
            plan.set_points_type3(&xr, &sr)
        }
        _ => plan.set_points(&xr),
    }
    .unwrap_or_else(|e| panic!("{backend}: {e}"));
    Some(plan)
}

/// The plan layer's rules, from first principles: σ·N within each type 1/2 grid side, the
/// type 3 grid bound `2σXS/π + w + 1`, the tolerance split, the limits.
fn check_rules(r: &Recipe, case: &Case) {
    let sigma = r.kernel.upsampling.0;
    assert_eq!((r.max_points, r.max_grid_side), (MAX_POINTS, MAX_GRID_SIDE));
    if let Some(s) = case.sigma {
        assert_eq!(sigma, s, "a fixed σ is kept");
    }
    match case.ty {
        TransformType::Type3 => {
            assert!(r.kernel_tol <= r.tol && r.kernel_tol >= r.tol / (3 * r.dim) as f64 * 0.999);
            assert_eq!(r.spread_grid.len(), r.dim);
            for (&n, &inner) in r.spread_grid.iter().zip(&r.fine_grid) {
                // Sources in [−π, π), targets in [−extent, extent): X·S = π·extent.
                let xs = std::f64::consts::PI * case.extent;
                let want = 2.0 * sigma * xs / std::f64::consts::PI + r.kernel.width as f64 + 1.0;
                assert!(
                    n as f64 >= want * 0.99 && (n as f64) < want * 1.3,
                    "{n} for {want}"
                );
                assert!(inner as f64 >= sigma * n as f64);
            }
        }
        _ => {
            assert_eq!(r.kernel_tol, r.tol);
            if case.sigma.is_none() && dense(r, case) && r.device == DeviceClass::Cpu {
                assert!(sigma > 2.0, "dense {}-D keeps σ = {sigma} on a CPU", r.dim);
            } else if case.sigma.is_none() {
                assert_eq!(sigma, 2.0, "{:?}", r.device);
            }
            for (&n, &m) in r.fine_grid.iter().zip(&r.modes) {
                assert!(n as f64 >= sigma * m as f64 && n >= 2 * r.kernel.width);
                assert!((n as f64) <= 1.15 * (sigma * m as f64).max(2.0 * r.kernel.width as f64));
            }
        }
    }
}

/// A 2-D or 3-D type 1/2 whose points outnumber its grid's at σ = 2: where the CPU's rule
/// raises σ and the GPUs' keeps it ([`DeviceClass`]).
fn dense(r: &Recipe, case: &Case) -> bool {
    let grid_points: usize = r.modes.iter().map(|&m| 2 * m).product();
    case.ty != TransformType::Type3 && r.dim >= 2 && case.points >= grid_points
}

/// Plans every case of `cases` (indices into [`CASES`]) on every backend: the GPUs' recipes
/// are one another's, and the CPU's but for σ (and so the kernel and grid) where the
/// problem is dense.
fn every_backend_plans_alike<T: BackendFloat>(cases: &[usize], tol_of: impl Fn(&Case) -> f64) {
    for case in cases.iter().map(|&i| &CASES[i]) {
        let tol = tol_of(case);
        let cpu = planned::<T>(Backend::Cpu, case, tol).unwrap().recipe();
        check_rules(&cpu, case);
        let mut gpu: Option<Recipe> = None;
        for backend in Backend::ALL
            .into_iter()
            .filter(|b| b.is_built() && *b != Backend::Cpu)
        {
            let Some(r) = planned::<T>(backend, case, tol).map(|p| p.recipe()) else {
                continue;
            };
            assert_eq!(r.device, DeviceClass::Gpu, "{backend}");
            check_rules(&r, case);
            let mut want = cpu.clone();
            want.device = DeviceClass::Gpu;
            if dense(&r, case) && case.sigma.is_none() {
                (want.kernel, want.fine_grid) = (r.kernel, r.fine_grid.clone());
            }
            assert_eq!(r, want, "{backend} against the CPU");
            match &gpu {
                Some(g) => assert_eq!(&r, g, "{backend} against the other GPU backend"),
                None => gpu = Some(r),
            }
        }
    }
}

#[test]
fn every_backend_plans_f64_alike() {
    let all: Vec<usize> = (0..CASES.len()).collect();
    every_backend_plans_alike::<f64>(&all, |c| c.tol);
}

#[test]
fn every_backend_plans_f32_alike() {
    // A dense type 1 and 2 and a type 3: a GPU backend builds its modules for each plan (on
    // PoCL, seconds each).
    every_backend_plans_alike::<f32>(&[1, 2, 5], |c| c.tol.max(1e-5));
}
