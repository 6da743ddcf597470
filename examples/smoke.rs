use nudt::*;
use num_complex::Complex64;
fn main() {
    let m = 2000;
    let mut s = 12345u64;
    let mut r = || {
        s ^= s << 13;
        s ^= s >> 7;
        s ^= s << 17;
        (s as f64 / u64::MAX as f64) * 2.0 - 1.0
    };
    for dim in 1..=3usize {
        let coords: Vec<Vec<f64>> = (0..dim)
            .map(|_| (0..m).map(|_| r() * 3.14159).collect())
            .collect();
        let c: Vec<Complex64> = (0..m).map(|_| Complex64::new(r(), r())).collect();
        let modes = vec![[33usize, 20, 10][dim - 1]; dim];
        let refs: Vec<&[f64]> = coords.iter().map(|v| &v[..]).collect();
        for tol in [1e-3, 1e-6, 1e-9, 1e-12] {
            let f = type1(&refs, &c, &modes, 1, tol).unwrap();
            let which: Vec<usize> = (0..f.len()).step_by(7).collect();
            let exact = direct::type1(&refs, &c, &modes, ModeOrder::Cmcl, 1, &which);
            let approx: Vec<Complex64> = which.iter().map(|&i| f[i]).collect();
            let e1 = direct::rel_error(&approx, &exact);
            let fin: Vec<Complex64> = (0..modes.iter().product::<usize>())
                .map(|_| Complex64::new(r(), r()))
                .collect();
            let cv = type2(&refs, &fin, &modes, -1, tol).unwrap();
            let which: Vec<usize> = (0..m).step_by(13).collect();
            let exact = direct::type2(&refs, &fin, &modes, ModeOrder::Cmcl, -1, &which);
            let approx: Vec<Complex64> = which.iter().map(|&i| cv[i]).collect();
            let e2 = direct::rel_error(&approx, &exact);
            let tg: Vec<Vec<f64>> = (0..dim)
                .map(|_| (0..500).map(|_| r() * 40.0 + 3.0).collect())
                .collect();
            let trefs: Vec<&[f64]> = tg.iter().map(|v| &v[..]).collect();
            let f3 = type3(&refs, &c, &trefs, 1, tol).unwrap();
            let which: Vec<usize> = (0..500).step_by(5).collect();
            let exact = direct::type3(&refs, &c, &trefs, 1, &which);
            let approx: Vec<Complex64> = which.iter().map(|&i| f3[i]).collect();
            let e3 = direct::rel_error(&approx, &exact);
            println!("dim {dim} tol {tol:e}: t1 {e1:.2e} t2 {e2:.2e} t3 {e3:.2e}");
        }
    }
}
