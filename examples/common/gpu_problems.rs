//! The problems `cuda_bench` measures (issue 9's table: cuFINUFFT's perftest sizes, as
//! benches/gpu_problems.toml has them for `nudt bench --backend cuda`, and the 2D type 3 seed
//! cases), and their deterministic data.

use nudt::TransformType;

/// Deterministic uniform in [0, 1) from (seed, index): splitmix64, so any element can be
/// made on its own (in parallel, or again for a sampled error).
pub fn unif(seed: u64, i: u64) -> f64 {
    let mut z = seed
        .wrapping_mul(0x9E37_79B9_7F4A_7C15)
        .wrapping_add(i.wrapping_mul(0xBF58_476D_1CE4_E5B9));
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^= z >> 31;
    (z >> 11) as f64 / (1u64 << 53) as f64
}

/// One benchmark problem: a transform, its sizes and tolerance.
#[derive(Clone)]
pub struct Problem {
    pub name: String,
    pub ty: TransformType,
    pub modes: Vec<usize>,
    pub m: usize,
    /// Type 3 targets.
    pub k: usize,
    /// Type 3 target box half-width (frequencies in [-s, s)).
    pub s_half: f64,
    pub tol: f64,
    pub f32: bool,
    /// Also run the Gaussian-gridding type 3 (the seed cases).
    pub gaussian: bool,
}

/// The problems; `quick` divides the point counts by 10 and leaves out 10⁸ points.
pub fn problems(quick: bool) -> Vec<Problem> {
    let p = |name: &str, ty, modes: &[usize], m, tol, f32| Problem {
        name: name.into(),
        ty,
        modes: modes.to_vec(),
        m,
        k: 0,
        s_half: 0.0,
        tol,
        f32,
        gaussian: false,
    };
    let t3 = |name: &str, dim: usize, m: usize, k: usize, tol| {
        let kk = (m as f64).powf(1.0 / dim as f64);
        Problem {
            name: name.into(),
            ty: TransformType::Type3,
            modes: vec![1; dim],
            m,
            k,
            s_half: kk / 2.0,
            tol,
            f32: false,
            gaussian: false,
        }
    };
    let s = if quick { 10 } else { 1 };
    let mut v = vec![
        p(
            "1D t1 N=1e6 M=1e7 f32 1e-6",
            TransformType::Type1,
            &[1_000_000],
            10_000_000 / s,
            1e-6,
            true,
        ),
        p(
            "1D t1 N=1e6 M=1e7 f64 1e-6",
            TransformType::Type1,
            &[1_000_000],
            10_000_000 / s,
            1e-6,
            false,
        ),
        p(
            "2D t1 1000² M=1e7 f64 1e-6",
            TransformType::Type1,
            &[1000, 1000],
            10_000_000 / s,
            1e-6,
            false,
        ),
        p(
            "2D t2 1000² M=1e7 f64 1e-6",
            TransformType::Type2,
            &[1000, 1000],
            10_000_000 / s,
            1e-6,
            false,
        ),
        p(
            "2D t1 1000² M=1e7 f32 1e-5",
            TransformType::Type1,
            &[1000, 1000],
            10_000_000 / s,
            1e-5,
            true,
        ),
        p(
            "3D t1 100³ M=1e7 f64 1e-6",
            TransformType::Type1,
            &[100, 100, 100],
            10_000_000 / s,
            1e-6,
            false,
        ),
        p(
            "3D t2 100³ M=1e7 f64 1e-6",
            TransformType::Type2,
            &[100, 100, 100],
            10_000_000 / s,
            1e-6,
            false,
        ),
        p(
            "3D t1 100³ M=1e7 f32 1e-5",
            TransformType::Type1,
            &[100, 100, 100],
            10_000_000 / s,
            1e-5,
            true,
        ),
        p(
            "3D t2 100³ M=1e7 f32 1e-5",
            TransformType::Type2,
            &[100, 100, 100],
            10_000_000 / s,
            1e-5,
            true,
        ),
    ];
    if !quick {
        v.push(p(
            "3D t1 256³ M=1e8 f32 1e-5",
            TransformType::Type1,
            &[256, 256, 256],
            100_000_000,
            1e-5,
            true,
        ));
    }
    v.push(t3(
        "2D t3 M=1e6 → 1e6 f64 1e-6",
        2,
        1_000_000 / s,
        1_000_000 / s,
        1e-6,
    ));
    v.push(t3(
        "3D t3 M=1e6 → 1e6 f64 1e-6",
        3,
        1_000_000 / s,
        1_000_000 / s,
        1e-6,
    ));
    // The Capozzoli et al. seed case: 2D type 3, N = K² sources, K targets, tol 1e-10.
    for kk in [256usize, 512, 1024] {
        let mut q = t3(
            &format!("seed 2D t3 K={kk} (N=K²) f64 1e-10"),
            2,
            kk * kk,
            kk,
            1e-10,
        );
        q.s_half = kk as f64 / 2.0;
        q.gaussian = true;
        v.push(q);
    }
    v
}
