//! The kernel and upsampling σ of a plan, chosen by one rule for every backend: σ as the
//! caller fixed it, else 2 until the points are known; then, for types 1 and 2 on a CPU,
//! raised in 2-D and 3-D where the points outnumber the grid's
//! ([`nudt_gen::plan::choose_upsampling_uniform`]), and for type 3 weighed against the
//! points' space–bandwidth product ([`nudt_gen::plan::choose_upsampling_type3`]) with the
//! tolerance split over type 3's two stages ([`nudt_gen::plan::type3_stage_tolerance`]).

use super::recipe::{DeviceClass, Problem};
use super::validate::check_grid;
use crate::error::{NudtError, Result};
use nudt_gen::{plan as gplan, KernelSpec, Upsampling};

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
/// on `device` whose kernel is `current`, if it differs (then with its fine grid): on a CPU,
/// in 2-D and 3-D, σ above 2 when the points outnumber the grid points at σ = 2, and when
/// they are fewer, the σ at or below 2 that costs least ([`gplan::choose_upsampling_sparse`]:
/// a sparse set spends its time on the grid); a GPU keeps 2 ([`DeviceClass`]). A grid that
/// would not fit in `memory` keeps σ as it is.
pub fn refit_uniform<T>(
    p: &Problem,
    device: DeviceClass,
    current: &KernelSpec,
    points: usize,
    memory: Option<usize>,
) -> Result<Option<(KernelSpec, Vec<usize>)>> {
    if p.upsampling.is_some() || p.dim() < 2 || device == DeviceClass::Gpu {
        return Ok(None);
    }
    let two = KernelSpec::for_tolerance(p.kernel, p.kernel_tol, Upsampling::TWO, p.precision)?;
    let grid_points: usize = p
        .modes
        .iter()
        .map(|&n| gplan::fine_size(n, &two))
        .product::<std::result::Result<usize, _>>()?;
    let sigma = if points >= grid_points {
        gplan::choose_upsampling_uniform(p.kernel, p.kernel_tol, p.precision, p.dim())
    } else {
        gplan::choose_upsampling_sparse(p.kernel, p.tol, p.precision, &p.modes, points)
    };
    if sigma == current.upsampling {
        return Ok(None);
    }
    let kernel = KernelSpec::for_tolerance(p.kernel, p.kernel_tol, sigma, p.precision)?;
    Ok(uniform_grid::<T>(p, &kernel, memory)
        .ok()
        .map(|n| (kernel, n)))
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
