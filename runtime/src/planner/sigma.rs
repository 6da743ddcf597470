//! The kernel and upsampling σ of a plan, chosen by one rule for every backend: σ as the
//! caller fixed it, else 2 until the points are known; then, for types 1 and 2 in 2-D and
//! 3-D, on a CPU raised where the points outnumber the grid's
//! ([`nudt_gen::plan::choose_upsampling_uniform`]) or lowered where they are few, on a GPU
//! lowered to 1.5 where a large grid's memory traffic outweighs the wider kernel
//! ([`gpu_sparse`]), and for type 3 weighed against the
//! points' space–bandwidth product ([`nudt_gen::plan::choose_upsampling_type3`]) with the
//! tolerance split over type 3's two stages ([`nudt_gen::plan::type3_stage_tolerance`]).

use super::recipe::{DeviceClass, Problem};
use super::validate::check_grid;
use crate::error::{NudtError, Result};
use nudt_gen::{plan as gplan, KernelSpec, Precision, TransformType, Upsampling};

/// A type 1 or 2 plan's kernel before its points are known: at the caller's σ, or 2.
pub fn initial_kernel(p: &Problem) -> Result<KernelSpec> {
    let sigma = p.upsampling.unwrap_or(Upsampling::TWO);
    Ok(KernelSpec::for_tolerance(
        p.kernel,
        p.kernel_tol,
        sigma,
        p.precision,
    )?)
}

/// The fine grid of a type 1 or 2 plan for `kernel`: [`gplan::fine_size`] per dimension,
/// within the limits and `memory` ([`check_grid`]).
pub fn uniform_grid<T>(
    p: &Problem,
    kernel: &KernelSpec,
    memory: Option<usize>,
) -> Result<Vec<usize>> {
    let n = p
        .modes
        .iter()
        .map(|&m| gplan::fine_size(m, kernel))
        .collect::<std::result::Result<Vec<_>, _>>()?;
    check_grid::<T>(&n, memory)?;
    Ok(n)
}

/// Where σ is the planner's to choose, the kernel for `points` points of a type 1 or 2 plan
/// on `device` whose kernel is `current`, if it differs (then with its fine grid), in 2-D
/// and 3-D: on a CPU, σ above 2 when the points outnumber the grid points at σ = 2, and when
/// they are fewer, the σ at or below 2 that costs least ([`gplan::choose_upsampling_sparse`]:
/// a sparse set spends its time on the grid); on a GPU, [`gpu_sparse`]'s. A grid that would
/// not fit in `memory`, or a σ whose kernel the tolerance does not allow, keeps σ as it is.
pub fn refit_uniform<T>(
    p: &Problem,
    device: DeviceClass,
    current: &KernelSpec,
    points: usize,
    memory: Option<usize>,
) -> Result<Option<(KernelSpec, Vec<usize>)>> {
    if p.upsampling.is_some() || p.dim() < 2 {
        return Ok(None);
    }
    let two = KernelSpec::for_tolerance(p.kernel, p.kernel_tol, Upsampling::TWO, p.precision)?;
    let grid_points: usize = p
        .modes
        .iter()
        .map(|&n| gplan::fine_size(n, &two))
        .product::<std::result::Result<usize, _>>()?;
    let sigma = match device {
        DeviceClass::Gpu => gpu_sparse(p, points, grid_points),
        DeviceClass::Cpu if points >= grid_points => {
            gplan::choose_upsampling_uniform(p.kernel, p.kernel_tol, p.precision, p.dim())
        }
        DeviceClass::Cpu => {
            gplan::choose_upsampling_sparse(p.kernel, p.tol, p.precision, &p.modes, points)
        }
    };
    if sigma == current.upsampling {
        return Ok(None);
    }
    let Ok(kernel) = KernelSpec::for_tolerance(p.kernel, p.kernel_tol, sigma, p.precision) else {
        return Ok(None);
    };
    Ok(uniform_grid::<T>(p, &kernel, memory)
        .ok()
        .map(|n| (kernel, n)))
}

/// Fine grid points at σ = 2 from which a GPU plan's grid work — zeroing, the FFT's passes,
/// the deconvolution, each a sweep of device memory — outweighs a wider kernel's: 2²⁴ (a
/// 4096² grid, or 256³; a 128³ grid's plan was launch-bound at any σ).
pub const GPU_LARGE_GRID: usize = 1 << 24;

/// A GPU type 1 or 2 plan's σ for `points` points a transform on a grid of `grid_points`
/// at σ = 2: 1.5 on a grid of at least [`GPU_LARGE_GRID`] points where the points are few
/// enough that the grid's smaller sweeps outweigh the wider kernel's reads and writes at
/// each point (7 → 9 at 1e-6 in f64, 6 → 7 at 1e-5 in f32): at most one point per mode,
/// and a quarter of one for 3-D interpolation in double precision (9³ against 7³ values a
/// point); spreading in double precision keeps 2 at any density (its output-driven bins
/// grow with the kernel: the 3-D rows ran 1.2–1.3× and the 2-D row 1.1× slower at 1.5).
/// Fitted on an H200 (`nudt bench --backend cuda` with problems at a fixed `upsampfac`,
/// docs/design.md, the σ rule's table): type 2 at 1.5 took 0.6–0.95 of its time at 2 at a
/// tenth or one point per mode, but 1.4× at one point per mode in 3-D f64; type 1 in f32
/// 0.8–0.9. σ = 1.25 was at most 5% faster than the better of 2 and 1.5 on any row and
/// slower on most; dense sets keep 2 (a 100³ type 1 of 10⁷ points took 1.6× as long at 1.5).
pub fn gpu_sparse(p: &Problem, points: usize, grid_points: usize) -> Upsampling {
    let modes: usize = p.modes.iter().product();
    let f64_3d_interp =
        p.ty == TransformType::Type2 && p.precision == Precision::F64 && p.dim() == 3;
    let most = if f64_3d_interp { modes / 4 } else { modes };
    let narrow = p.ty == TransformType::Type2 || p.precision == Precision::F32;
    match grid_points >= GPU_LARGE_GRID && points <= most && narrow {
        true => Upsampling(1.5),
        false => Upsampling::TWO,
    }
}

/// The point count [`refit_uniform`] weighs when each transform of a plan has its own set of
/// `counts[b]` points: their mean, rounded up. The transforms share one grid, and both the
/// spreading and the FFTs add up over them, so the mean set against one grid is the trade a
/// shared set of that size makes.
pub fn points_per_transform(counts: &[usize]) -> usize {
    counts.iter().sum::<usize>().div_ceil(counts.len().max(1))
}

/// The kernel of a type 3 plan whose transforms each have their own sources and targets,
/// with the per-dimension extent products `extents[b]` and `points[b]` sources and targets
/// together: one kernel for all (the recipe's), [`type3_kernel`]'s for the largest extent
/// product per dimension and the largest set, whose transform costs most; each transform
/// then sizes its own grids for it ([`super::type3::Geometry`]). One set gives
/// [`type3_kernel`]'s choice.
pub fn type3_kernel_for_sets(
    p: &Problem,
    extents: &[Vec<f64>],
    points: &[usize],
) -> Result<(KernelSpec, f64)> {
    let widest = (0..p.dim())
        .map(|d| extents.iter().map(|e| e[d]).fold(0.0, f64::max))
        .collect::<Vec<f64>>();
    type3_kernel(p, &widest, points.iter().copied().max().unwrap_or(0))
}

/// A type 3's kernel and the tolerance it was chosen for, from the product of the sources'
/// and targets' half-extents per dimension (`extent[d] = X_d·S_d`) and the number of
/// sources and targets together.
///
/// The kernel meets [`gplan::type3_stage_tolerance`] (the tolerance split over both stages
/// and every axis; [`KernelSpec::for_type3_tolerance`], whose errors name the tolerance
/// asked for). σ, when open, is the cheapest for that tolerance
/// ([`gplan::choose_upsampling_type3`]). A σ the caller fixed that cannot reach the
/// tolerance is an error, as FINUFFT limits σ = 1.25 to the tolerances it reaches: where
/// the split tolerance needs a kernel wider than the widest
/// ([`nudt_gen::GenError::WidthForTolerance`]; the kernel for the unsplit tolerance, used
/// here before, missed 10·tol: 35·tol in f64 at 1e-9), or where the amplified rounding
/// ([`gplan::type3_rounding`]) exceeds the tolerance ([`NudtError::Type3Rounding`]).
pub fn type3_kernel(p: &Problem, extent: &[f64], points: usize) -> Result<(KernelSpec, f64)> {
    let stage_tol = gplan::type3_stage_tolerance(p.tol, p.dim(), p.precision);
    let sigma = p.upsampling.unwrap_or_else(|| {
        gplan::choose_upsampling_type3(p.kernel, stage_tol, p.precision, extent, points)
    });
    let kernel = KernelSpec::for_type3_tolerance(p.kernel, p.tol, p.dim(), sigma, p.precision)?;
    let rounding = gplan::type3_rounding(&kernel, p.dim(), p.precision);
    if p.upsampling.is_some() && rounding > p.tol {
        return Err(NudtError::Type3Rounding {
            tol: p.tol,
            sigma: sigma.0,
            dim: p.dim(),
            precision: p.precision.type_name(),
            rounding,
        });
    }
    Ok((kernel, stage_tol))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::planner::recipe::Choices;
    use crate::planner::Type3Method;
    use nudt_gen::KernelKind;

    fn problem(ty: TransformType, modes: &[usize], precision: Precision) -> Problem {
        let tol = if precision == Precision::F32 {
            1e-5
        } else {
            1e-6
        };
        let c = Choices::new(
            precision,
            KernelKind::Pswf,
            None,
            Type3Method::Finufft,
            false,
        );
        Problem::uniform(ty, modes, 1, 1, tol, c).unwrap()
    }

    /// σ = 1.5 on a GPU where a large grid holds at most one point per mode, for
    /// interpolation and for spreading in single precision; 2 for double precision's
    /// spreading, small grids and dense sets; and the CPU's rules unchanged by it.
    #[test]
    fn a_gpu_lowers_sigma_for_sparse_sets_on_large_grids() {
        use TransformType::{Type1, Type2};
        let sigma = |ty, modes: &[usize], precision, points| {
            let p = problem(ty, modes, precision);
            let k = initial_kernel(&p).unwrap();
            let refit = refit_uniform::<f64>(&p, DeviceClass::Gpu, &k, points, None).unwrap();
            refit.map_or(k.upsampling.0, |(k, n)| {
                assert_eq!(n, uniform_grid::<f64>(&p, &k, None).unwrap());
                k.upsampling.0
            })
        };
        let (big3, big2, small) = (&[256, 256, 256][..], &[4096, 4096][..], &[64, 64, 64][..]);
        assert_eq!(sigma(Type2, big3, Precision::F64, 1 << 20), 1.5);
        assert_eq!(sigma(Type2, big3, Precision::F64, 1 << 23), 2.0);
        assert_eq!(sigma(Type2, big3, Precision::F32, 1 << 23), 1.5);
        assert_eq!(sigma(Type2, big2, Precision::F32, 1 << 24), 1.5);
        assert_eq!(sigma(Type1, big3, Precision::F32, 1 << 20), 1.5);
        assert_eq!(sigma(Type1, big3, Precision::F64, 1 << 20), 2.0);
        assert_eq!(sigma(Type2, big2, Precision::F64, (1 << 24) + 1), 2.0);
        assert_eq!(sigma(Type2, small, Precision::F64, 1000), 2.0);
        assert_eq!(sigma(Type2, &[1 << 20], Precision::F64, 1000), 2.0);
        let p = problem(Type2, big3, Precision::F64);
        let k = initial_kernel(&p).unwrap();
        let cpu = refit_uniform::<f64>(&p, DeviceClass::Cpu, &k, 1 << 20, None).unwrap();
        assert_eq!(
            cpu.map(|(k, _)| k.upsampling),
            Some(gplan::choose_upsampling_sparse(
                p.kernel,
                p.tol,
                p.precision,
                &p.modes,
                1 << 20
            ))
            .filter(|&s| s != Upsampling::TWO)
        );
    }
}
