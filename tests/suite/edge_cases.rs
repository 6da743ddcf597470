//! Sizes, point positions and options at the edges, checked against the direct sum.

use crate::common;

use common::*;
use nudt::direct;
use nudt::num_complex::Complex64;
use nudt::TransformType::{Type1, Type2};
use nudt::{ModeOrder, Options, Plan, Strategy, TransformType};
use std::f64::consts::PI;

#[test]
fn odd_even_and_unit_mode_counts() {
    let mut rng = Rng::new(7);
    for modes in [
        vec![1],
        vec![2],
        vec![31],
        vec![1, 9],
        vec![8, 1],
        vec![1, 1, 1],
        vec![5, 6, 7],
    ] {
        let dim = modes.len();
        let x = rng.coords(dim, 120, -PI, PI);
        let c = rng.complexes(120);
        let f = rng.complexes(modes.iter().product());
        let e1 = type12_error::<f64>(Type1, &x, &c, &modes, 1, 1e-9, Options::default());
        let e2 = type12_error::<f64>(Type2, &x, &f, &modes, 1, 1e-9, Options::default());
        assert!(e1 < 1e-8 && e2 < 1e-8, "{modes:?}: {e1:e} {e2:e}");
    }
}

#[test]
fn points_on_the_boundary_and_far_outside_are_periodic() {
    let mut rng = Rng::new(8);
    let mut x = vec![vec![-PI, PI, 0.0, -PI + 1e-15, PI - 1e-15]];
    // Far outside [−π, π): hundreds of periods away.
    x[0].extend((0..50).map(|_| rng.range(-1000.0, 1000.0)));
    x[0].extend((0..50).map(|_| rng.range(-3.0, 3.0) + 2.0 * PI * 317.0));
    let c = rng.complexes(x[0].len());
    let e = type12_error::<f64>(Type1, &x, &c, &[40], -1, 1e-10, Options::default());
    assert!(e < 1e-9, "{e:e}");
    let f = rng.complexes(40);
    let e = type12_error::<f64>(Type2, &x, &f, &[40], 1, 1e-10, Options::default());
    assert!(e < 1e-9, "{e:e}");
}

#[test]
fn no_points_gives_zero_modes() {
    for ty in [TransformType::Type1, TransformType::Type2] {
        let mut plan = Plan::<f64>::new(ty, &[8, 6], 1, 2, 1e-6, Options::default()).unwrap();
        plan.set_points(&[&[], &[]]).unwrap();
        let (a, b) = if ty == TransformType::Type1 {
            (0, 96)
        } else {
            (96, 0)
        };
        let mut out = vec![Complex64::new(5.0, 5.0); b];
        plan.execute(&vec![Complex64::new(1.0, 0.0); a], &mut out)
            .unwrap();
        assert!(out.iter().all(|v| *v == Complex64::default()));
    }
    let mut plan = Plan::<f64>::new_type3(1, 1, 1, 1e-6, Options::default()).unwrap();
    plan.set_points_type3(&[&[]], &[&[1.0, 2.0]]).unwrap();
    let mut out = vec![Complex64::new(5.0, 5.0); 2];
    plan.execute(&[], &mut out).unwrap();
    assert!(out.iter().all(|v| *v == Complex64::default()));
}

#[test]
fn fft_mode_order() {
    let mut rng = Rng::new(9);
    let x = rng.coords(2, 200, -PI, PI);
    let c = rng.complexes(200);
    let opts = Options {
        mode_order: ModeOrder::Fft,
        ..Options::default()
    };
    let e = type12_error::<f64>(Type1, &x, &c, &[9, 10], 1, 1e-8, opts.clone());
    assert!(e < 1e-7, "{e:e}");
    let f = rng.complexes(90);
    let e = type12_error::<f64>(Type2, &x, &f, &[9, 10], -1, 1e-8, opts);
    assert!(e < 1e-7, "{e:e}");
}

#[test]
fn sigma_five_fourths_and_gaussian_kernel() {
    let mut rng = Rng::new(10);
    let x = rng.coords(2, 300, -PI, PI);
    let c = rng.complexes(300);
    let s = rng.coords(2, 100, -20.0, 20.0);
    for (opts, tol) in [
        (
            Options {
                upsampling: Some(nudt::Upsampling::FIVE_FOURTHS),
                ..Options::default()
            },
            1e-8,
        ),
        (
            Options {
                kernel: nudt::KernelKind::Gaussian,
                ..Options::default()
            },
            1e-6,
        ),
    ] {
        let e1 = type12_error::<f64>(Type1, &x, &c, &[30, 21], 1, tol, opts.clone());
        let e3 = type3_error::<f64>(&x, &c, &s, -1, tol, opts.clone());
        assert!(
            e1 < 10.0 * tol && e3 < 10.0 * tol,
            "{opts:?}: {e1:e} {e3:e}"
        );
    }
}

/// Both NUDT schedules must produce the same fine grid up to rounding, on uniform and on
/// clustered points (where the block tree splits).
#[test]
fn source_and_target_driven_grids_agree() {
    let mut rng = Rng::new(11);
    for dim in 1..=3 {
        let m = 40_000;
        let mut x = rng.coords(dim, m, -PI, PI);
        // Cluster half of the points into a small corner that wraps around ±π.
        for xd in x.iter_mut() {
            for v in xd.iter_mut().take(m / 2) {
                *v = PI - 0.05 + 0.1 * (*v + PI) / (2.0 * PI);
            }
        }
        let c = rng.complexes(m);
        let modes = vec![[400, 64, 24][dim - 1]; dim];
        let opts = Options {
            tile_side: Some(16),
            ..Options::default()
        };
        let mut plan = Plan::<f64>::new(TransformType::Type1, &modes, 1, 1, 1e-7, opts).unwrap();
        plan.set_points(&refs(&x)).unwrap();
        let a = plan.spread_only(Strategy::SourceDriven, &c).unwrap();
        let b = plan.spread_only(Strategy::TargetDriven, &c).unwrap();
        let e = direct::rel_error(&b, &a);
        assert!(e < 1e-13, "{dim}D: schedules differ by {e:e}");
        let norm: f64 = a.iter().map(|v| v.norm()).sum();
        assert!(norm > 0.0);
    }
}

/// `interp_only` is the adjoint of `spread_only` on the same fine grid: ⟨S c, g⟩ = ⟨c, S* g⟩
/// (the pair mri-nufft's "pipe" density compensation iterates), and it refuses a grid of the
/// wrong length and a plan without points.
#[test]
fn interp_only_is_the_adjoint_of_spread_only() {
    let mut rng = Rng::new(13);
    for dim in 1..=3 {
        let m = 3_000;
        let x = rng.coords(dim, m, -PI, PI);
        let modes = vec![[200, 40, 16][dim - 1]; dim];
        let mut plan = Plan::<f64>::new(Type2, &modes, -1, 1, 1e-7, Options::default()).unwrap();
        assert!(plan.interp_only(&[]).is_err(), "no points yet");
        plan.set_points(&refs(&x)).unwrap();
        let len: usize = plan.fine_grid().iter().product();
        let c = rng.complexes(m);
        let g = rng.complexes(len);
        let sc = plan.spread_only(plan.strategy(), &c).unwrap();
        let ig = plan.interp_only(&g).unwrap();
        assert_eq!((sc.len(), ig.len()), (len, m));
        let lhs: Complex64 = sc.iter().zip(&g).map(|(a, b)| a * b.conj()).sum();
        let rhs: Complex64 = c.iter().zip(&ig).map(|(a, b)| a * b.conj()).sum();
        assert!(
            (lhs - rhs).norm() < 1e-10 * lhs.norm(),
            "{dim}D: {lhs} vs {rhs}"
        );
        assert!(plan.interp_only(&g[1..]).is_err(), "short grid");
    }
}

/// 2-D and 3-D grids run slab by slab and skip the tile rows (along the first axis) that hold
/// no points. Points in four thin bands of the first coordinate, one wrapping around ±π,
/// leave rows empty between rows with points (of either parity), whose slabs overlap
/// theirs; types 1 and 2 must still match the direct sum, on one thread (a slab a row or
/// two) and on 16 (slabs of several rows, empty ones among them).
#[test]
fn slabs_skip_rows_without_points() {
    let mut rng = Rng::new(13);
    for dim in [2, 3] {
        let m = 3000;
        let mut x = rng.coords(dim, m, -PI, PI);
        for (j, v) in x[0].iter_mut().enumerate() {
            let band = [-2.5, 0.3, 1.7, PI - 0.05][j % 4];
            *v = band + 0.1 * (*v / PI);
        }
        let c = rng.complexes(m);
        let modes = vec![[0, 0, 48, 20][dim]; dim];
        let f = rng.complexes(modes.iter().product());
        for threads in [1, 16] {
            let opts = Options {
                tile_side: Some(8),
                threads: Some(threads),
                ..Options::default()
            };
            let e1 = type12_error::<f64>(Type1, &x, &c, &modes, 1, 1e-9, opts.clone());
            let e2 = type12_error::<f64>(Type2, &x, &f, &modes, -1, 1e-9, opts);
            assert!(
                e1 < 1e-8 && e2 < 1e-8,
                "{dim}D {threads} threads: {e1:e} {e2:e}"
            );
        }
    }
}

#[test]
fn batches_share_one_sort_and_match_single_runs() {
    let mut rng = Rng::new(12);
    let x = rng.coords(2, 500, -PI, PI);
    let modes = [12, 14];
    let c = rng.complexes(3 * 500);
    let mut batch = Plan::<f64>::new(
        TransformType::Type1,
        &modes,
        -1,
        3,
        1e-9,
        Options::default(),
    )
    .unwrap();
    batch.set_points(&refs(&x)).unwrap();
    let mut fb = vec![Complex64::default(); 3 * 168];
    batch.execute(&c, &mut fb).unwrap();
    for t in 0..3 {
        let which: Vec<usize> = (0..168).collect();
        let exact = direct::type1(
            &refs(&x),
            &c[t * 500..(t + 1) * 500],
            &modes,
            ModeOrder::Cmcl,
            -1,
            &which,
        );
        let e = direct::rel_error(&fb[t * 168..(t + 1) * 168], &exact);
        assert!(e < 1e-8, "transform {t}: {e:e}");
    }
}

/// ⟨A c, f⟩ = ⟨c, A* f⟩ for every type and both type 3 methods: the adjoint really is the
/// adjoint.
#[test]
fn adjoints_satisfy_the_inner_product_identity() {
    let mut rng = Rng::new(13);
    let dot = |a: &[Complex64], b: &[Complex64]| -> Complex64 {
        a.iter().zip(b).map(|(x, y)| x * y.conj()).sum()
    };
    let gaussian = Options {
        type3: nudt::Type3Method::GaussianCapozzoli,
        ..Options::default()
    };
    for (ty, opts) in [
        (TransformType::Type1, Options::default()),
        (TransformType::Type2, Options::default()),
        (TransformType::Type3, Options::default()),
        (TransformType::Type3, gaussian),
    ] {
        let x = rng.coords(2, 300, -PI, PI);
        let s = rng.coords(2, 150, -12.0, 12.0);
        let modes = [16, 11];
        let mut plan = if ty == TransformType::Type3 {
            let mut p = Plan::<f64>::new_type3(2, 1, 1, 1e-10, opts).unwrap();
            p.set_points_type3(&refs(&x), &refs(&s)).unwrap();
            p
        } else {
            let mut p = Plan::<f64>::new(ty, &modes, 1, 1, 1e-11, Options::default()).unwrap();
            p.set_points(&refs(&x)).unwrap();
            p
        };
        let (na, nb) = match ty {
            TransformType::Type1 => (300, 176),
            TransformType::Type2 => (176, 300),
            TransformType::Type3 => (300, 150),
        };
        let (u, v) = (rng.complexes(na), rng.complexes(nb));
        let mut au = vec![Complex64::default(); nb];
        let mut atv = vec![Complex64::default(); na];
        plan.execute(&u, &mut au).unwrap();
        plan.execute_adjoint(&v, &mut atv).unwrap();
        let (l, r) = (dot(&au, &v), dot(&u, &atv));
        assert!((l - r).norm() < 1e-9 * l.norm(), "{ty:?}: {l} vs {r}");
    }
}

/// The seed's claim (Capozzoli et al., 8.78e-11 on their EFIE test): their Gaussian type 3
/// reaches ≤ 1e-10 when asked for 1e-10, in every dimension and both signs.
#[test]
fn gaussian_type3_with_the_seeds_parameters_reaches_1e10() {
    let mut rng = Rng::new(14);
    let opts = Options {
        type3: nudt::Type3Method::GaussianCapozzoli,
        ..Options::default()
    };
    for dim in 1..=3 {
        let x = rng.coords(dim, 400, -8.0, 5.0);
        let c = rng.complexes(400);
        let s = rng.coords(dim, 150, -3.0, 6.0);
        for isign in [-1, 1] {
            let e = type3_error::<f64>(&x, &c, &s, isign, 1e-10, opts.clone());
            println!("{dim}D isign {isign}: {e:.2e}");
            assert!(e <= 1e-10, "{dim}D: {e:e}");
        }
    }
    // And it keeps to the tolerance when asked for less.
    let x = rng.coords(2, 400, -3.0, 3.0);
    let c = rng.complexes(400);
    let s = rng.coords(2, 150, -20.0, 20.0);
    for tol in [1e-3, 1e-6, 1e-8] {
        let e = type3_error::<f64>(&x, &c, &s, 1, tol, opts.clone());
        assert!(e <= tol, "tol {tol:e}: {e:e}");
    }
}

#[test]
fn plans_run_on_the_threads_they_ask_for() {
    let plan = |threads| {
        let opts = Options {
            threads: Some(threads),
            ..Options::default()
        };
        Plan::<f64>::new(TransformType::Type1, &[8, 8], 1, 1, 1e-6, opts).unwrap()
    };
    let global = rayon::current_num_threads();
    // The global pool's size runs on the global pool; another size on a pool of its own.
    assert_eq!(plan(global).threads(), global);
    assert_eq!(plan(global + 1).threads(), global + 1);
    // A plan made inside another pool of its size keeps that size when it runs outside it.
    let other = rayon::ThreadPoolBuilder::new()
        .num_threads(global + 2)
        .build()
        .unwrap();
    let made_inside = other.install(|| plan(global + 2));
    assert_eq!(made_inside.threads(), global + 2);
}

/// Points on every node of the fine grid and a hair either side of it, so that every tile
/// boundary (small tiles, 8 a side) has points whose support starts just before, at and
/// just after it: the sort's tile of a cell, a floating-point quotient, must be exact there,
/// or a point lands in the neighbouring tile at an offset outside its buffer.
#[test]
fn points_on_tile_boundaries() {
    let mut rng = Rng::new(14);
    for (modes, tol) in [
        (vec![40], 1e-9),
        (vec![24, 18], 1e-9),
        (vec![10, 12, 9], 1e-9),
        (vec![10, 12, 9], 1e-5),
    ] {
        let dim = modes.len();
        let opts = Options {
            tile_side: Some(8),
            ..Options::default()
        };
        let plan = Plan::<f64>::new(TransformType::Type1, &modes, 1, 1, tol, opts.clone()).unwrap();
        let n = plan.fine_grid();
        let shifts = [0.0, -1e-9, 1e-9, 0.5];
        let m = 4 * n.iter().max().unwrap() * 7;
        let x: Vec<Vec<f64>> = (0..dim)
            .map(|d| {
                let step = [1, 5, 7][d];
                (0..m)
                    .map(|j| {
                        let node = (j * step / shifts.len()) % n[d];
                        2.0 * PI * (node as f64 + shifts[j % shifts.len()]) / n[d] as f64
                    })
                    .collect()
            })
            .collect();
        let c = rng.complexes(m);
        let f = rng.complexes(modes.iter().product());
        let (e1, e2) = if tol < 1e-6 {
            (
                type12_error::<f64>(Type1, &x, &c, &modes, 1, tol, opts.clone()),
                type12_error::<f64>(Type2, &x, &f, &modes, -1, tol, opts),
            )
        } else {
            (
                type12_error::<f32>(Type1, &x, &c, &modes, 1, tol, opts.clone()),
                type12_error::<f32>(Type2, &x, &f, &modes, -1, tol, opts),
            )
        };
        assert!(
            e1 < 10.0 * tol && e2 < 10.0 * tol,
            "{modes:?} at {tol:e}: {e1:e} {e2:e}"
        );
    }
}
