//! `nudt::spreader!` as a user crate calls it: good input compiles and runs right. (Bad input
//! is a compile error naming the bad argument: `macros/tests/ui.rs`.)

mod es5 {
    nudt::spreader! { dim = 2, width = 5, precision = f64, kernel = es, strategy = target_driven }
}

mod gauss {
    nudt::spreader! { dim = 1, tol = 1e-4, precision = f32, kernel = gaussian, strategy = source_driven }
}

/// The ES kernel of width 5 at σ = 2 (β = 2.30·w), in grid units from the point.
fn es(d: f64) -> f64 {
    let z = d / 2.5;
    if z.abs() > 1.0 {
        0.0
    } else {
        (11.5 * ((1.0 - z * z).sqrt() - 1.0)).exp()
    }
}

/// Signed distance from grid point `i` to coordinate `x` (radians) on a periodic grid of `n`.
fn dist(i: usize, x: f64, n: usize) -> f64 {
    let xg = x.rem_euclid(2.0 * std::f64::consts::PI) * n as f64 / (2.0 * std::f64::consts::PI);
    let d = i as f64 - xg;
    d - (d / n as f64).round() * n as f64
}

/// A user crate's own spreaders through `nudt::spreader!` (the default support path,
/// `::nudt::support`), checked against a direct spread and against the transpose identity.
#[test]
fn a_user_crates_spreader_matches_the_direct_spread() {
    assert_eq!((es5::DIM, es5::WIDTH), (2, 5));
    let (n0, n1) = (32, 24);
    let x = [0.3_f64, -2.0, 3.1];
    let y = [1.0_f64, 0.2, -3.0];
    let c = [1.0_f64, 0.0, 0.5, -0.5, 0.0, 2.0];
    let tiles = es5::bin(&[n0, n1], &[8, 8], &[&x, &y]);
    let mut grid = vec![0.0_f64; 2 * n0 * n1];
    es5::spread(&tiles, &c, &mut grid);
    // Direct spread, row-major (the last dimension fastest), periodic.
    let mut worst: f64 = 0.0;
    for i in 0..n0 {
        for j in 0..n1 {
            let (mut re, mut im) = (0.0, 0.0);
            for p in 0..3 {
                let k = es(dist(i, x[p], n0)) * es(dist(j, y[p], n1));
                re += k * c[2 * p];
                im += k * c[2 * p + 1];
            }
            let g = &grid[2 * (i * n1 + j)..];
            worst = worst.max((g[0] - re).abs()).max((g[1] - im).abs());
        }
    }
    // Width 5 serves 1e-4; its Horner fit is a tenth of that.
    assert!(
        worst < 2e-5,
        "spread differs from the direct sum by {worst:e}"
    );
    // Interpolation is the transpose: ⟨spread(c), g⟩ = ⟨c, interp(g)⟩ for the real part.
    let mut back = vec![0.0_f64; 6];
    es5::interp(&tiles, &grid, &mut back);
    let lhs: f64 = grid.iter().map(|v| v * v).sum();
    let rhs: f64 = c.iter().zip(&back).map(|(a, b)| a * b).sum();
    assert!(
        (lhs - rhs).abs() < 1e-12 * lhs,
        "⟨Sc, Sc⟩ = {lhs} but ⟨c, S*Sc⟩ = {rhs}"
    );
    assert_eq!(gauss::WIDTH, 10);
}
