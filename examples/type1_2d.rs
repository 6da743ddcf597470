//! The ten-line library example: a 2-D type 1 NUFFT, checked against the direct sum.

use nudt::num_complex::Complex64;
use nudt::{direct, ModeOrder, Options, Plan, TransformType};
use std::f64::consts::{PI, TAU};

fn main() -> Result<(), nudt::NudtError> {
    let m = 100_000;
    let x: Vec<f64> = (0..m)
        .map(|j| ((j as f64) * 0.7548776662).fract() * TAU - PI)
        .collect();
    let y: Vec<f64> = (0..m)
        .map(|j| ((j as f64) * 0.5698402910).fract() * TAU - PI)
        .collect();
    let c: Vec<Complex64> = (0..m)
        .map(|j| Complex64::from_polar(1.0, j as f64 * 2.3999632297))
        .collect();

    let mut plan = Plan::<f64>::new(
        TransformType::Type1,
        &[256, 256],
        1,
        1,
        1e-9,
        Options::default(),
    )?;
    plan.set_points(&[&x, &y])?;
    let mut f = vec![Complex64::default(); 256 * 256]; // row-major, mode (k1, k2) at [k1 + 128, k2 + 128]
    plan.execute(&c, &mut f)?;

    let sample: Vec<usize> = (0..f.len()).step_by(997).collect();
    let exact = direct::type1(&[&x, &y], &c, &[256, 256], ModeOrder::Cmcl, 1, &sample);
    let got: Vec<Complex64> = sample.iter().map(|&i| f[i]).collect();
    println!(
        "{plan:?}\nrelative error on {} modes: {:.2e}",
        sample.len(),
        direct::rel_error(&got, &exact)
    );
    Ok(())
}
