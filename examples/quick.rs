use nudt::*;
use num_complex::Complex64;
use std::time::Instant;
fn main() {
    let args: Vec<String> = std::env::args().collect();
    let dim: usize = args[1].parse().unwrap();
    let ty: usize = args[2].parse().unwrap();
    let n: usize = args[3].parse().unwrap();
    let m: usize = args[4].parse().unwrap();
    let strat = match args.get(5).map(|s| s.as_str()) {
        Some("sd") => Strategy::SourceDriven,
        Some("td") => Strategy::TargetDriven,
        _ => Strategy::Auto,
    };
    let mut s = 12345u64;
    let mut r = || {
        s ^= s << 13;
        s ^= s >> 7;
        s ^= s << 17;
        (s as f64 / u64::MAX as f64) * 2.0 - 1.0
    };
    let coords: Vec<Vec<f64>> = (0..dim)
        .map(|_| (0..m).map(|_| r() * 3.14159).collect())
        .collect();
    let refs: Vec<&[f64]> = coords.iter().map(|v| &v[..]).collect();
    let modes = vec![n; dim];
    let nm: usize = modes.iter().product();
    let (nin, nout) = if ty == 1 { (m, nm) } else { (nm, m) };
    let input: Vec<Complex64> = (0..nin).map(|_| Complex64::new(r(), r())).collect();
    let mut out = vec![Complex64::default(); nout];
    let t0 = Instant::now();
    let tt = if ty == 1 {
        TransformType::Type1
    } else {
        TransformType::Type2
    };
    let mut plan = Plan::<f64>::new(
        tt,
        &modes,
        1,
        1,
        1e-6,
        Options {
            strategy: strat,
            ..Default::default()
        },
    )
    .unwrap();
    let t1 = Instant::now();
    plan.set_points(&refs).unwrap();
    let t2 = Instant::now();
    plan.execute(&input, &mut out).unwrap();
    let t3 = Instant::now();
    plan.execute(&input, &mut out).unwrap();
    let t4 = Instant::now();
    println!(
        "plan {:.3} setpts {:.3} exec {:.3} exec2 {:.3} total {:.3} grid {:?} side {} strat {:?}",
        (t1 - t0).as_secs_f64(),
        (t2 - t1).as_secs_f64(),
        (t3 - t2).as_secs_f64(),
        (t4 - t3).as_secs_f64(),
        (t3 - t0).as_secs_f64(),
        plan.fine_grid(),
        plan.tile_side(),
        plan.strategy()
    );
}
