//! Planning: fine-grid sizes, tile sizes and the schedule choice, from parameters and machine.

use crate::arch::Arch;
use crate::error::GenError;
use crate::kernel::KernelSpec;
use crate::params::{Precision, Strategy};

/// Smallest `2^a 3^b 5^c ≥ n` (FFT-friendly); `None` if it would overflow.
pub fn next_smooth(n: usize) -> Option<usize> {
    let n = n.max(1);
    let mut best: Option<usize> = None;
    let mut p2: usize = 1;
    loop {
        let mut p3 = p2;
        loop {
            let mut p5 = p3;
            while p5 < n {
                p5 = p5.checked_mul(5)?;
            }
            best = Some(best.map_or(p5, |b| b.min(p5)));
            if p3 >= n {
                break;
            }
            p3 = p3.checked_mul(3)?;
        }
        if p2 >= n {
            break;
        }
        p2 = p2.checked_mul(2)?;
    }
    best
}

/// Fine-grid size for `modes` modes along one dimension, on every backend: at least
/// `max(σN, 2w)` points, rounded up by [`fft_size`].
pub fn fine_size(modes: usize, kernel: &KernelSpec) -> Result<usize, GenError> {
    if modes == 0 {
        return Err(GenError::Modes(modes));
    }
    let want = (kernel.upsampling.0 * modes as f64).ceil();
    if !want.is_finite() || want > (usize::MAX / 8) as f64 {
        return Err(GenError::GridOverflow { modes });
    }
    let want = (want as usize).max(2 * kernel.width);
    fft_size(want).ok_or(GenError::GridOverflow { modes })
}

/// An FFT-friendly size of at least `want` points: [`next_smooth`], unless a size `2^a·q`
/// with odd `q ≤ 7` is at most 3% larger and the grid has at least 1024 points per
/// dimension. FFTs run such sizes in fewer passes over memory: on an H100 cuFFT's 4050² f64
/// transform (`2·3⁴·5²`) takes four kernels and 0.85 ms, where 4096² needs two. Below 1024
/// points the transform is cheap beside spreading, and the smooth size is kept.
pub fn fft_size(want: usize) -> Option<usize> {
    let smooth = next_smooth(want)?;
    if want < 1024 {
        return Some(smooth);
    }
    let pow2 = [1usize, 3, 5, 7]
        .iter()
        .filter_map(|&q| {
            let mut n = q;
            while n < want {
                n = n.checked_mul(2)?;
            }
            Some(n)
        })
        .min()?;
    Some(if pow2 as f64 <= 1.03 * smooth as f64 {
        pow2
    } else {
        smooth
    })
}

/// Tile side (grid points per dimension) for the CPU schedules.
///
/// Rule: a tile's padded buffer, `(side + w − 1)^d` complex values, should take about a
/// third of one core's L2 — NUDT measured the best total time near there, since the buffer,
/// the points' data and the kernel tables then share L2 without evicting each other — but
/// no more than a third of [`TILE_L2_CAP`]. The side is rounded down to a multiple of 8
/// (whole cache lines along the contiguous dimension), and never below `w`, so that a tile's
/// box reaches no further than its neighbours'. In 2-D and 3-D it stays at most [`MAX_FIXED_SIDE`], in 2-D
/// at most [`MAX_2D_SIDE`].
pub fn tile_side(dim: usize, kernel: &KernelSpec, precision: Precision, arch: &Arch) -> usize {
    let bytes_per_point = 2 * match precision {
        Precision::F32 => 4,
        Precision::F64 => 8,
    };
    let budget = (arch.l2.min(TILE_L2_CAP) / 3).max(4096) / bytes_per_point;
    let padded = (budget as f64).powf(1.0 / dim as f64).floor() as usize;
    let mut side = padded.saturating_sub(kernel.width - 1) / 8 * 8;
    if dim >= 2 {
        side = side.min(MAX_FIXED_SIDE);
    }
    if dim == 2 {
        side = side.min(MAX_2D_SIDE);
    }
    side.max(kernel.width).max(8)
}

/// The most L2 per core the tile rule ([`tile_side`]) counts. Larger L2s are not faster
/// to work from: on a Xeon with 2 MiB per core, the tiles a third of it gives (1-D 43 680
/// points, 3-D f64 24, f32 32) took 1-D and 3-D f32 transforms 14% and 20–30% longer than
/// those of 1 MiB (21 840, 16, 24; `nudt bench`, BENCHMARKS.md), where each point's row
/// updates miss L1 as often and wait longer on L2.
pub const TILE_L2_CAP: usize = 1 << 20;

/// Longest 2-D tile side. A 2-D type 1 or 2 runs slab by slab, a tile row's slab being
/// `side + w − 1` whole rows of the grid; with 64 instead of the L2 rule's 128, 2-D type 1
/// execute on the Xeon fell 10% (260 against 290 ms, 10⁷ points on 2250², three runs) with
/// type 2 level and set-points up to 13 ms longer (more tiles); on the EPYC sides 48–96
/// were within noise of 128 (BENCHMARKS.md).
pub const MAX_2D_SIDE: usize = 64;

/// Longest tile side whose tiles (the last of a row up to `side + w − 1` long) keep the sorted
/// points' offsets in 8 bits, so that a 32-bit fixed-point place keeps 24 fraction bits, f32's
/// precision (the generated support's `Placement::Fixed`). 1-D tiles are far longer and keep
/// f32 Horner variables beside their offsets instead.
pub const MAX_FIXED_SIDE: usize = 128;

/// The schedule for a concrete point set: source-driven, unless the caller asked otherwise.
///
/// NUDT found target-driven 13–28% faster on clustered inputs at 4–8 cores. Here source-
/// driven wins on every point set measured (BENCHMARKS.md: uniform, clustered, radial,
/// spiral; 2 cores): it splits a dense tile into chunks spread in parallel and summed, so a
/// blob costs little more than uniform points, whereas target-driven's blocks each rescan
/// all sources of their neighbouring tiles, and the finer its block tree cuts a dense
/// region, the more often those sources are read (27× slower on 90% of the points in a
/// blob, 3× on a spiral). The tile histogram is where a density-aware choice would look;
/// none has paid yet.
pub fn choose_strategy(requested: Strategy) -> Strategy {
    match requested {
        Strategy::Auto => Strategy::SourceDriven,
        s => s,
    }
}

/// Most sources a target-driven block may gather before the block tree halves it: enough
/// work per task to amortise its buffer, small enough to balance across `cores`.
pub fn max_block_points(total_points: usize, arch: &Arch) -> usize {
    (total_points / (8 * arch.cores.max(1))).max(1 << 14)
}

/// Upsampling for a type 3 when the caller leaves it open: the σ of [`TYPE3_SIGMAS`] with the
/// smallest estimated cost. Spreading and interpolation cost one unit per kernel weight
/// (`(sources + targets)·w^d`); the inner grid `GRID_WEIGHT` units per point and `log2 n`
/// (its FFT, first touch, zeroing and the mode copy). A type 3's grids grow as σ^(2d), so
/// the balance sits well below 2: fitted to 2-D and 3-D runs at 10⁶ points
/// (BENCHMARKS.md), σ = 1.4 at width 9 beat both 1.25 at 11 and 2 at 7 in 3-D (0.57 s
/// against 0.77 and 1.48). `extent[d]` is the half-widths product `X_d·S_d`.
pub fn choose_upsampling_type3(
    kind: crate::params::KernelKind,
    tol: f64,
    precision: Precision,
    extent: &[f64],
    points: usize,
) -> crate::params::Upsampling {
    // σ = 1.25's smaller grid leaves less headroom against rounding: keep it for tolerances
    // well above the precision's epsilon (f32 at 1e-6 loses a digit with it). Below 1e-8 its
    // width nears the widest kernel (16 at 1e-9), whose fit falls short of the tolerance
    // (measured: 1.2e-8 at 1e-9 on a 3-D type 3, tests/suite/properties.rs); σ = 2 needs 10.
    // `cheapest_sigma` keeps σ = 2 there. A σ whose amplified rounding ([`type3_rounding`])
    // exceeds the tolerance is passed over.
    let dim = extent.len();
    cheapest_sigma(kind, tol, precision, dim, points, |sigma, k| {
        if type3_rounding(k, dim, precision) > tol {
            return f64::INFINITY;
        }
        let w = k.width as f64;
        extent
            .iter()
            .map(|&xs| {
                (sigma.0 * (2.0 * sigma.0 * xs / std::f64::consts::PI + w + 1.0)).max(2.0 * w)
            })
            .product()
    })
}

/// Upsampling for a type 1 or 2 of `modes` whose `points` are fewer than its fine grid's at
/// σ = 2, when the caller leaves σ open: the σ of [`TYPE3_SIGMAS`] with the smallest cost by
/// [`choose_upsampling_type3`]'s weights, a unit per kernel weight (`points·w^d`) against
/// `GRID_WEIGHT` units per grid point and `log2 n`. A sparse set spends its time on the grid
/// (the FFT, and zeroing and adding its tiles' boxes), which σ = 1.25 makes `1.6^d` times
/// smaller for a kernel `(11/7)^d` times dearer at 1e-6: a stack of 32 3-D transforms of
/// 10⁴ points and 64³ modes took 0.36 s at σ = 1.25 against 0.72 at 2, the 2-D one of 256²
/// modes 45 ms against 63, and at 10⁵ points the rule's 1.4 took 0.88 s against 1.11 in 3-D
/// (2 cores, BENCHMARKS.md); FINUFFT 2.5 lowers σ for sparse sets too.
/// Tolerances type 3 keeps at σ = 2 (below 1e-8, or within 1000 ε) keep it here.
pub fn choose_upsampling_sparse(
    kind: crate::params::KernelKind,
    tol: f64,
    precision: Precision,
    modes: &[usize],
    points: usize,
) -> crate::params::Upsampling {
    cheapest_sigma(kind, tol, precision, modes.len(), points, |_, k| {
        modes
            .iter()
            .map(|&m| fine_size(m, k).map_or(f64::INFINITY, |n| n as f64))
            .product()
    })
}

/// The σ of [`TYPE3_SIGMAS`] (σ = 2 below 1e-8 or within 1000 ε, see
/// [`choose_upsampling_type3`]) whose kernel for `tol` costs least for `points` points in
/// `dim` dimensions and the grid of `grid(σ, kernel)` points: a unit per kernel weight,
/// `GRID_WEIGHT` units per grid point and `log2 n`.
fn cheapest_sigma(
    kind: crate::params::KernelKind,
    tol: f64,
    precision: Precision,
    dim: usize,
    points: usize,
    grid: impl Fn(crate::params::Upsampling, &KernelSpec) -> f64,
) -> crate::params::Upsampling {
    use crate::params::Upsampling;
    if tol < 1e3 * precision.epsilon() || tol < 1e-8 {
        return Upsampling::TWO;
    }
    let cost = |sigma: Upsampling| -> Option<f64> {
        let k = KernelSpec::for_tolerance(kind, tol, sigma, precision).ok()?;
        let n = grid(sigma, &k);
        n.is_finite().then(|| {
            points as f64 * (k.width as f64).powi(dim as i32) + GRID_WEIGHT * n * (n.log2() + 4.0)
        })
    };
    TYPE3_SIGMAS
        .iter()
        .filter_map(|&s| Some((cost(Upsampling(s))?, s)))
        .min_by(|a, b| a.0.total_cmp(&b.0))
        .map_or(Upsampling::TWO, |(_, s)| Upsampling(s))
}

/// The rounding error a type 3 with kernel `kernel` in `dim` dimensions leaves in
/// `precision`, whatever the width: the correction at the targets divides by `ψ̂`, which at
/// the edge of their band (`π/σ` radians per grid point) is smaller than at its centre by a
/// factor that grows with the width and, far more, as σ falls (per axis at σ = 1.25: 14 at
/// width 6, 160 at 11, 1800 at 16; at σ = 2 under 5), and the factors of the axes multiply.
/// The inner type 2's rounding reaches the targets so amplified: measured on 2-D and 3-D
/// type 3s at σ = 1.25 (f32 at 1e-5 to 1e-7, f64 at 1e-9), a tenth to a quarter of the unit
/// roundoff times the product (3-D f32 at 1e-7: 0.26, where 1e-6 was asked). The estimate
/// is that quarter.
pub fn type3_rounding(kernel: &KernelSpec, dim: usize, precision: Precision) -> f64 {
    let ft = kernel.fourier();
    let edge = ft.at(0.0) / ft.at(std::f64::consts::PI / kernel.upsampling.0);
    0.125 * precision.epsilon() * edge.powi(dim as i32)
}

/// The tolerance a type 3's kernel is chosen for when the caller asks for `tol` in `dim`
/// dimensions. The kernel rules ([`KernelSpec::for_tolerance`]) are fitted to one stage on
/// one axis; a type 3 has two stages (spreading at the sources, the inner type 2 at the
/// targets) whose aliasing errors add over the axes, and the correction at the targets
/// divides by the kernel's Fourier transform, which amplifies the inner stage's error
/// towards the edge of the targets' band. With `tol` itself the 3-D type 3 benchmark (10⁶
/// points, 1e-6) measured 4.8–5.9e-7 where ducc0's `nu2nu` measured 5.6–7.2e-8; with
/// `tol/(2·dim)` width 10 at σ = 1.4, 9.3e-8; with `tol/(3·dim)` width 10 at σ = 1.5,
/// 3.6e-8, and the 2-D benchmark 1.0e-7 against ducc0's 2.1e-7 (BENCHMARKS.md). Never below
/// a thousand times the precision's epsilon, where rounding rather than the kernel bounds
/// the error (f32 at σ = 1.25 and 1e-5 measured 1.6e-4 with the kernel for 1.2e-6: wider
/// kernels only add rounding), nor above `tol`.
pub fn type3_stage_tolerance(tol: f64, dim: usize, precision: Precision) -> f64 {
    let floor = (1e3 * precision.epsilon()).min(tol);
    (tol / (3 * dim.max(1)) as f64).max(floor)
}

/// Upsampling for a type 1 or 2 in `dim` dimensions whose points outnumber its fine grid's,
/// when the caller leaves σ open: σ = 2, raised in 2-D and 3-D by just enough to keep the
/// kernel's width and make the per-axis aliasing error `dim` times smaller.
///
/// The errors of the axes add up: at σ = 2 and 1e-6 the measured error grows from 4.4e-7 (1-D)
/// to 7.5e-7 (2-D) and 7–9.6e-7 (3-D), where ducc0, which raises σ with the dimension
/// (2.24 and 2.4 at 1e-6), stays at 3.4–4.8e-7. The per-axis error falls as
/// `e^{−κπ√(1−1/σ)·w}` with κ = `ALIAS_DECAY`, so `√(1−1/σ) = √(1/2) + ln(dim)/(κπw)`
/// divides it by `dim` at the same width: σ = 2.25 in 2-D and 2.45 in 3-D at width 7
/// (rounded to 0.05; the grid then rounds up to an FFT-friendly size: 2250² and 250³ for the
/// benchmark's 1000² and 100³ modes). Only the grid grows, by `(σ/2)^dim`, which the planner
/// accepts where the points outnumber the grid points: there spreading costs more than the
/// FFT. Tolerances within 10 ε of the precision, where rounding rather than aliasing bounds
/// the error, keep σ = 2, and so does any σ that would need a wider kernel.
pub fn choose_upsampling_uniform(
    kind: crate::params::KernelKind,
    tol: f64,
    precision: Precision,
    dim: usize,
) -> crate::params::Upsampling {
    use crate::params::Upsampling;
    let Ok(two) = KernelSpec::for_tolerance(kind, tol, Upsampling::TWO, precision) else {
        return Upsampling::TWO;
    };
    if dim < 2 || tol < 10.0 * precision.epsilon() {
        return Upsampling::TWO;
    }
    let w = two.width as f64;
    let root = 0.5f64.sqrt() + (dim as f64).ln() / (ALIAS_DECAY * std::f64::consts::PI * w);
    // Rounded to a multiple of 0.05, within the validated range.
    let sigma = ((20.0 / (1.0 - root * root)).round() / 20.0).min(Upsampling::MAX);
    match KernelSpec::for_tolerance(kind, tol, Upsampling(sigma), precision) {
        Ok(k) if k.width <= two.width => Upsampling(sigma),
        _ => Upsampling::TWO,
    }
}

/// How fast a kernel's aliasing error falls with σ against the width rules' `e^{−π√(1−1/σ)·w}`
/// ([`choose_upsampling_uniform`]): the rms over an axis's modes of the aliased transform
/// against the transform at the mode, summed from the PSWF's transform. At width 7 over 100
/// modes it is 4.3, 2.2 and 1.2e-7 at σ = 2, 2.25 and 2.5 (κ = 0.83 and 0.85; 0.77–0.87 at
/// widths 4–8), and κ = 0.81–0.83 with the band taken as a continuum; the test
/// `the_aliasing_decay_is_the_kernels` recomputes them and checks that the rule's σ divides
/// the per-axis error by the dimension. With κ = 1 the rule chose σ = 2.35 in 3-D, whose
/// error (2.8e-7 on the benchmark, against the direct sum at the same outputs) stayed above
/// FINUFFT's 2.6e-7 (BENCHMARKS.md).
const ALIAS_DECAY: f64 = 0.81;

/// Whether an f64 plan of tolerance `tol` may keep its sorted points' places at f32's
/// resolution: in the generated support's fixed point (24 fraction bits of a grid step), or
/// as f32 Horner variables where tiles are too long for it.
///
/// The sort stores per point and dimension where the kernel's support starts, the largest of
/// its streams (24 of a 3-D f64 point's 32 bytes as f64 `t ∈ [−1, 1)`). At f32's resolution
/// `t` moves by about 2⁻²⁴ and a kernel value by `max|φ'|·2⁻²⁴`, a few 1e-8 of `φ(0)`.
/// Measured against the direct sum (`nudt bench`, 10⁶ points, 2-D and 3-D, f32 variables):
/// no change at 1e-6, 3.1 → 3.2e-8 at 1e-7, and below that a floor near 8e-9 (2.3 → 8.4e-9 at
/// 1e-8, 3.5e-10 → 7.5e-9 at 1e-9); with the fixed-point places 3.6e-8 (2-D) and 2.6e-8
/// (3-D) at 1e-7. From 1e-7 up the floor stays under a tenth of the tolerance. Kernels wider
/// than the registry's (the type 3 Gaussian gridding's windows) were not measured and keep
/// full precision.
pub fn narrow_horner_variables(kernel: &KernelSpec, tol: f64, precision: Precision) -> bool {
    precision == Precision::F64 && tol >= 1e-7 && kernel.width <= crate::kernel::MAX_WIDTH
}

/// The σ a type 3's planner weighs, and a sparse type 1 or 2's: FINUFFT's two and two
/// between them where the kernel narrows by a point at common tolerances.
pub const TYPE3_SIGMAS: [f64; 4] = [2.0, 1.5, 1.4, 1.25];

/// Cost of one inner-grid point per unit of `log2 n`, against one kernel weight
/// ([`choose_upsampling_type3`], [`choose_upsampling_sparse`]; fitted on this project's
/// 2-core AVX2 machine).
const GRID_WEIGHT: f64 = 2.3;

/// Points per interpolation task: one tile, or part of a dense one.
pub const INTERP_CHUNK: usize = 1 << 14;

/// Points per interpolation task for `points` points on `threads` threads: [`INTERP_CHUNK`],
/// or fewer where that leaves threads without a task (clustered points fill a few tiles:
/// 10⁵ points made 6–8 tasks for 16 threads), down to 2048 (each task loads its tile's box).
pub fn interp_chunk(points: usize, threads: usize) -> usize {
    (points / (8 * threads.max(1))).clamp(1 << 11, INTERP_CHUNK)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::params::{KernelKind, Upsampling};

    #[test]
    fn fft_sizes_prefer_few_passes_when_cheap() {
        assert_eq!(fft_size(4016), Some(4096));
        assert_eq!(fft_size(2000), Some(2048));
        assert_eq!(fft_size(200), Some(200));
        assert_eq!(fft_size(2_000_000), Some(2_000_000));
        assert_eq!(fft_size(1500), Some(1536));
    }

    #[test]
    fn type3_sigma_follows_the_grid_against_the_points() {
        let pick = |extent: f64, dim: usize, points: usize| {
            choose_upsampling_type3(
                KernelKind::Pswf,
                1e-6,
                Precision::F64,
                &vec![extent; dim],
                points,
            )
            .0
        };
        // The 3-D benchmark (10⁶ sources in [−π, π)³, as many targets in [−50, 50)³): the
        // measured best, σ = 1.4 at width 9.
        assert_eq!(pick(std::f64::consts::PI * 50.0, 3, 2_000_000), 1.4);
        // Few points over a huge space–bandwidth product: the grid is all that counts.
        assert_eq!(pick(1e4, 2, 1000), 1.25);
        // Many points on a small grid: the narrowest kernel.
        assert_eq!(pick(10.0, 2, 10_000_000), 2.0);
        // Near the precision floor σ = 2 regardless.
        let s = choose_upsampling_type3(KernelKind::Pswf, 1e-10, Precision::F64, &[1e4], 10);
        assert_eq!(s.0, 2.0);
    }

    /// The rms over the `modes` of an axis on `n` points of the kernel's aliased transform
    /// against its transform at the mode: the per-axis aliasing error of a type 1 or 2.
    fn aliasing(spec: &KernelSpec, modes: usize, n: usize) -> f64 {
        let (z, wt) = crate::kernel::gauss_legendre(400);
        let shape = spec.shape();
        let weighted: Vec<(f64, f64)> = z
            .iter()
            .zip(&wt)
            .map(|(&z, &w)| (z, w * shape.eval(z)))
            .collect();
        let a = spec.half_width();
        let ft = |omega: f64| -> f64 {
            weighted
                .iter()
                .map(|(z, w)| w * (omega * a * z).cos())
                .sum()
        };
        let tau = 2.0 * std::f64::consts::PI;
        let sum: f64 = (0..=modes / 2)
            .map(|k| {
                let omega = tau * k as f64 / n as f64;
                let aliased: f64 = (1..=3)
                    .map(|m| {
                        ft(omega + tau * m as f64).powi(2) + ft(omega - tau * m as f64).powi(2)
                    })
                    .sum();
                aliased / ft(omega).powi(2)
            })
            .sum();
        (sum / (modes / 2 + 1) as f64).sqrt()
    }

    /// [`ALIAS_DECAY`] from the kernel's own transform: κ between σ = 2 and `sigma`.
    fn decay(width: usize, sigma: f64) -> f64 {
        let spec = |s: f64| KernelSpec::for_width(KernelKind::Pswf, width, Upsampling(s)).unwrap();
        let modes = 100;
        let n = |s: f64| (s * modes as f64).round() as usize;
        let (e2, es) = (
            aliasing(&spec(2.0), modes, n(2.0)),
            aliasing(&spec(sigma), modes, n(sigma)),
        );
        let root = |s: f64| (1.0 - 1.0 / s).sqrt();
        (e2 / es).ln() / (std::f64::consts::PI * width as f64 * (root(sigma) - root(2.0)))
    }

    #[test]
    fn sparse_sets_take_a_smaller_grid_where_it_pays() {
        use crate::params::{KernelKind, Upsampling};
        let f64p = Precision::F64;
        let pick = |tol: f64, modes: &[usize], m: usize| {
            choose_upsampling_sparse(KernelKind::Pswf, tol, f64p, modes, m).0
        };
        // The grid dominates: the smallest grid.
        assert_eq!(pick(1e-6, &[64, 64, 64], 10_000), 1.25);
        assert_eq!(pick(1e-6, &[256, 256], 10_000), 1.25);
        // Spreading weighs in: between.
        assert_eq!(pick(1e-6, &[64, 64, 64], 100_000), 1.4);
        // Near the dense boundary, σ = 2.
        assert_eq!(pick(1e-6, &[256, 256], 250_000), 2.0);
        // Tolerances near the precision keep σ = 2, as type 3's do.
        assert_eq!(pick(1e-9, &[64, 64, 64], 10), 2.0);
        let f32p = choose_upsampling_sparse(KernelKind::Pswf, 1e-5, Precision::F32, &[64, 64], 10);
        assert_eq!(f32p, Upsampling::TWO);
    }

    #[test]
    fn the_aliasing_decay_is_the_kernels() {
        // Width 7, the benchmark's at 1e-6: the constant against the kernel's transform.
        for sigma in [2.25, 2.5] {
            let k = decay(7, sigma);
            assert!((k - ALIAS_DECAY).abs() < 0.05, "σ = {sigma}: κ = {k:.3}");
        }
        for w in 4..=8 {
            let k = decay(w, 2.5);
            assert!((0.75..0.88).contains(&k), "width {w}: κ = {k:.3}");
        }
        // The rule's σ divides the per-axis error by the dimension.
        let error = |s: f64| {
            let spec = KernelSpec::for_width(KernelKind::Pswf, 7, Upsampling(s)).unwrap();
            aliasing(&spec, 100, (s * 100.0).round() as usize)
        };
        let two = error(2.0);
        for dim in 2..=3 {
            let s = choose_upsampling_uniform(KernelKind::Pswf, 1e-6, Precision::F64, dim).0;
            assert!(
                error(s) <= two / dim as f64,
                "{dim}-D σ = {s}: {:.3e} against {two:.3e}",
                error(s)
            );
        }
    }

    #[test]
    fn dense_uniform_problems_raise_sigma_with_the_dimension() {
        let pick = |tol: f64, dim: usize, precision: Precision| {
            choose_upsampling_uniform(KernelKind::Pswf, tol, precision, dim).0
        };
        assert_eq!(pick(1e-6, 1, Precision::F64), 2.0);
        let (s2, s3) = (pick(1e-6, 2, Precision::F64), pick(1e-6, 3, Precision::F64));
        assert!(
            s2 > 2.1 && s2 < s3 && s3 <= Upsampling::MAX,
            "σ = {s2}, {s3}"
        );
        // The benchmark's width 7: per-axis error halved in 2-D, a third in 3-D.
        assert_eq!((s2, s3), (2.25, 2.45));
        for (tol, precision) in [
            (1e-6, Precision::F64),
            (1e-12, Precision::F64),
            (1e-5, Precision::F32),
        ] {
            for dim in 2..=3 {
                let sigma = Upsampling(pick(tol, dim, precision));
                let two =
                    KernelSpec::for_tolerance(KernelKind::Pswf, tol, Upsampling::TWO, precision);
                let raised = KernelSpec::for_tolerance(KernelKind::Pswf, tol, sigma, precision);
                assert!(
                    raised.unwrap().width <= two.unwrap().width,
                    "{tol:e} {dim}-D"
                );
            }
        }
        assert!(pick(1e-5, 3, Precision::F32) > 2.0);
        // Near the floor of the precision, σ = 2 regardless.
        assert_eq!(pick(1e-6, 3, Precision::F32), 2.0);
    }

    #[test]
    fn horner_variables_narrow_only_for_f64_from_1e_7_with_tabled_kernels() {
        let k = |tol| {
            KernelSpec::for_tolerance(KernelKind::Pswf, tol, Upsampling::TWO, Precision::F64)
                .unwrap()
        };
        assert!(narrow_horner_variables(&k(1e-6), 1e-6, Precision::F64));
        assert!(narrow_horner_variables(&k(1e-7), 1e-7, Precision::F64));
        assert!(!narrow_horner_variables(&k(1e-8), 1e-8, Precision::F64));
        assert!(!narrow_horner_variables(&k(1e-6), 1e-6, Precision::F32));
        let wide = KernelSpec {
            width: crate::kernel::MAX_WIDTH + 1,
            ..k(1e-6)
        };
        assert!(!narrow_horner_variables(&wide, 1e-6, Precision::F64));
    }

    #[test]
    fn smooth_numbers() {
        assert_eq!(next_smooth(1), Some(1));
        assert_eq!(next_smooth(7), Some(8));
        assert_eq!(next_smooth(200), Some(200));
        assert_eq!(next_smooth(2001), Some(2025));
        assert_eq!(next_smooth(usize::MAX), None);
    }

    #[test]
    fn fine_sizes_respect_sigma_and_width() {
        let k = KernelSpec::for_width(KernelKind::Es, 7, Upsampling::TWO).unwrap();
        assert_eq!(fine_size(100, &k).unwrap(), 200);
        assert_eq!(fine_size(1, &k).unwrap(), 15);
        assert!(fine_size(0, &k).is_err());
        assert!(fine_size(usize::MAX / 2, &k).is_err());
    }

    #[test]
    fn tiles_fit_a_third_of_l2() {
        let k = KernelSpec::for_width(KernelKind::Es, 7, Upsampling::TWO).unwrap();
        let arch = Arch {
            l2: 1 << 20,
            ..Arch::default()
        };
        let s = tile_side(2, &k, Precision::F64, &arch);
        assert!((s + 6) * (s + 6) * 16 <= (1 << 20) / 3);
        assert!(s >= 64);
        assert!(tile_side(3, &k, Precision::F64, &arch) >= 8);
        // A larger L2 counts as TILE_L2_CAP.
        let big = Arch {
            l2: 2 << 20,
            ..Arch::default()
        };
        for dim in 1..=3 {
            for p in [Precision::F32, Precision::F64] {
                assert_eq!(tile_side(dim, &k, p, &big), tile_side(dim, &k, p, &arch));
            }
        }
        assert_eq!(tile_side(3, &k, Precision::F64, &big), 16);
    }
}
