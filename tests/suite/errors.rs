//! Bad input gets a typed error naming the problem — never a panic.

use nudt::gen::GenError;
use nudt::num_complex::Complex64;
use nudt::{NudtError, Options, Plan, TransformType};

fn t1(modes: &[usize]) -> nudt::Result<Plan<f64>> {
    Plan::new(TransformType::Type1, modes, 1, 1, 1e-6, Options::default())
}

#[test]
fn non_finite_points_and_frequencies() {
    let mut p = t1(&[10, 10]).unwrap();
    let e = p
        .set_points(&[&[0.0, f64::NAN, 1.0], &[0.0, 0.0, 0.0]])
        .unwrap_err();
    assert!(matches!(
        e,
        NudtError::NonFinite {
            what: "x",
            index: 1,
            ..
        }
    ));
    assert!(e.to_string().contains("x has a non-finite value"), "{e}");
    let e = p
        .set_points(&[&[0.0, 1.0], &[f64::INFINITY, 0.0]])
        .unwrap_err();
    assert!(matches!(
        e,
        NudtError::NonFinite {
            what: "y",
            index: 0,
            ..
        }
    ));
    let mut p3 = Plan::<f64>::new_type3(1, 1, 1, 1e-6, Options::default()).unwrap();
    let e = p3
        .set_points_type3(&[&[0.0, 1.0]], &[&[2.0, f64::NEG_INFINITY]])
        .unwrap_err();
    assert!(
        matches!(
            e,
            NudtError::NonFinite {
                what: "s",
                index: 1,
                ..
            }
        ),
        "{e}"
    );
}

#[test]
fn length_and_shape_mismatches() {
    let mut p = t1(&[10, 10]).unwrap();
    assert!(matches!(
        p.set_points(&[&[0.0, 1.0], &[0.0]]),
        Err(NudtError::Length {
            expected: 2,
            got: 1,
            ..
        })
    ));
    assert!(matches!(
        p.set_points(&[&[0.0]]),
        Err(NudtError::Coordinates {
            expected: 2,
            got: 1
        })
    ));
    p.set_points(&[&[0.0, 1.0], &[0.5, 0.5]]).unwrap();
    let mut out = vec![Complex64::default(); 100];
    let e = p.execute(&[Complex64::default(); 3], &mut out).unwrap_err();
    assert!(
        e.to_string()
            .contains("strengths: expected length 2, got 3"),
        "{e}"
    );
    let mut short = vec![Complex64::default(); 99];
    assert!(matches!(
        p.execute(&[Complex64::default(); 2], &mut short),
        Err(NudtError::Length {
            expected: 100,
            got: 99,
            ..
        })
    ));
}

#[test]
fn bad_sizes_and_counts() {
    assert!(matches!(
        t1(&[10, 0]),
        Err(NudtError::Gen(GenError::Modes(0)))
    ));
    assert!(matches!(
        t1(&[]),
        Err(NudtError::Gen(GenError::Dimension(0)))
    ));
    assert!(matches!(
        t1(&[2, 2, 2, 2]),
        Err(NudtError::Gen(GenError::Dimension(4)))
    ));
    assert!(matches!(
        Plan::<f64>::new(TransformType::Type2, &[8], 1, 0, 1e-6, Options::default()),
        Err(NudtError::ZeroTransforms)
    ));
    assert!(matches!(
        Plan::<f64>::new(TransformType::Type1, &[8], 0, 1, 1e-6, Options::default()),
        Err(NudtError::Sign(0))
    ));
    assert!(matches!(
        t1(&[usize::MAX / 2]),
        Err(NudtError::Gen(GenError::GridOverflow { .. }))
    ));
    assert!(matches!(
        t1(&[1 << 40, 1 << 40]),
        Err(NudtError::GridOverflow)
    ));
    let e = t1(&[200_000, 200_000]).unwrap_err();
    assert!(matches!(e, NudtError::GridTooLarge { .. }), "{e}");
}

#[test]
fn unreachable_tolerances() {
    let e =
        Plan::<f32>::new(TransformType::Type1, &[8], 1, 1, 1e-9, Options::default()).unwrap_err();
    assert!(matches!(
        e,
        NudtError::Gen(GenError::ToleranceBelowPrecision { .. })
    ));
    assert!(e.to_string().contains("below what f32 can reach"), "{e}");
    for tol in [0.0, -1.0, f64::NAN, f64::INFINITY] {
        assert!(
            matches!(t1_tol(tol), Err(NudtError::Gen(GenError::Tolerance(_)))),
            "{tol}"
        );
    }
    let gauss = Options {
        kernel: nudt::KernelKind::Gaussian,
        ..Options::default()
    };
    let e = Plan::<f64>::new(TransformType::Type1, &[8], 1, 1, 1e-12, gauss).unwrap_err();
    assert!(
        matches!(e, NudtError::Gen(GenError::WidthForTolerance { .. })),
        "{e}"
    );
}

fn t1_tol(tol: f64) -> nudt::Result<Plan<f64>> {
    Plan::new(TransformType::Type1, &[8], 1, 1, tol, Options::default())
}

#[test]
fn wrong_order_of_calls_and_wrong_types() {
    let mut p = t1(&[8]).unwrap();
    let mut out = vec![Complex64::default(); 8];
    assert_eq!(p.execute(&[], &mut out), Err(NudtError::PointsNotSet));
    let mut p3 = Plan::<f64>::new_type3(2, 1, 1, 1e-6, Options::default()).unwrap();
    assert_eq!(p3.execute(&[], &mut []), Err(NudtError::PointsNotSet));
    assert!(matches!(
        p3.set_points(&[&[0.0], &[0.0]]),
        Err(NudtError::WrongType { .. })
    ));
    assert!(matches!(
        p.set_points_type3(&[&[0.0]], &[&[0.0]]),
        Err(NudtError::WrongType { .. })
    ));
    assert!(Plan::<f64>::new(TransformType::Type3, &[8], 1, 1, 1e-6, Options::default()).is_err());
}

#[test]
fn type3_with_an_impossible_space_bandwidth_product() {
    let mut p = Plan::<f64>::new_type3(3, 1, 1, 1e-6, Options::default()).unwrap();
    let x = [0.0, 1e7];
    let s = [0.0, 1e7];
    let e = p
        .set_points_type3(&[&x, &x, &x], &[&s, &s, &s])
        .unwrap_err();
    assert!(
        matches!(
            e,
            NudtError::GridTooLarge { .. }
                | NudtError::GridOverflow
                | NudtError::Gen(GenError::GridOverflow { .. })
        ),
        "{e}"
    );
}

/// A type 3 at σ = 1.25 fixed by the caller, at a tolerance that σ cannot reach: f32 at 1e-6
/// in 3-D (rounding amplified by the correction: 1e-2 to 0.3 measured), and f64 at 1e-9 in
/// 3-D (the split tolerance needs a kernel wider than 16; the unsplit one missed 10·tol:
/// the message names 1e-9, not its share).
/// Both were wrong answers (runtime/tests/fuzz.rs); now typed errors, and σ = 2 reaches both.
#[test]
fn type3_tolerances_out_of_reach_at_a_fixed_sigma() {
    let at = |sigma: f64| Options {
        upsampling: Some(nudt::Upsampling(sigma)),
        ..Options::default()
    };
    let x = [-1.0, 0.5, 2.0];
    let s = [-9.0, 3.0, 10.0];
    let mut p = Plan::<f32>::new_type3(3, 1, 1, 1e-6, at(1.25)).unwrap();
    let (xf, sf) = (x.map(|v| v as f32), s.map(|v| v as f32));
    let e = p
        .set_points_type3(&[&xf, &xf, &xf], &[&sf, &sf, &sf])
        .unwrap_err();
    assert!(matches!(e, NudtError::Type3Rounding { .. }), "{e}");
    assert!(e.to_string().contains("use upsampling 2"), "{e}");
    let mut p = Plan::<f64>::new_type3(3, 1, 1, 1e-9, at(1.25)).unwrap();
    let e = p
        .set_points_type3(&[&x, &x, &x], &[&s, &s, &s])
        .unwrap_err();
    assert!(
        matches!(e, NudtError::Gen(GenError::WidthForTolerance { .. })),
        "{e}"
    );
    // The message names the tolerance asked for, and the share each stage and axis gets.
    let m = e.to_string();
    assert!(m.starts_with("tolerance 1e-9 needs width"), "{m}");
    assert!(m.contains("a type 3 splits it"), "{m}");
    let mut p = Plan::<f32>::new_type3(3, 1, 1, 1e-6, at(2.0)).unwrap();
    assert!(p
        .set_points_type3(&[&xf, &xf, &xf], &[&sf, &sf, &sf])
        .is_ok());
}
