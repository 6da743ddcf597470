//! The bins of a 2-D or 3-D type 1 grid by how many points fall on each fine-grid cell: the
//! output-driven method's block size is a trade the point density decides, so it is chosen
//! at set-points, once the points are counted, for CUDA and OpenCL alike.
//!
//! A block of the output-driven kernel owns one bin and holds its padded box (the bin plus
//! `w − 1` cells of halo per axis) in registers, one pencil of `P = side + w − 1` cells per
//! thread; it adds the box to the grid with one complex atomic per box cell, and every one of
//! its `P²` threads looks at every point of the bin. Per fine-grid cell, at `ρ` points a cell,
//! that is `(P/side)³` atomics and `ρ·P²` looks. Small bins (4³ at width 7) win where points
//! are dense (10⁷ points on a 200³ grid, ρ = 1.25: 5.1 ms against 8.4 with 8³ and 18 with
//! 16³ on an H100); at one point per mode in 3-D (ρ = 1/8 at σ = 2) the halo's atomics are
//! the time: 256³ modes f64, 16.8·10⁶ points, H200: the spreading took 36.6 ms with 4³ bins,
//! 2.1·10⁹ complex atomics. Those three H100 rows fit the model's two terms at one atomic ≈
//! [`ATOMIC_PER_LOOK`] looks (4³: 0.68 ns a cell predicted, 0.64 measured; 8³: 0.96, 1.05;
//! 16³: 2.22, 2.25), and the H200 row's 4³ takes 0.27 ns a cell, as the same fit says.
//!
//! In 2-D a block is one warp of rows (`33 − w` of them across the bin) and the bin's depth
//! is the trade: deeper bins pay fewer halo atomics a cell but longer pencils, which every
//! thread updates for every point. The model above does not carry over (its deep 2-D bins
//! cost less than it says), so the depth is read off measured thresholds ([`depth_2d`]).
use nudt_gen::gpu::{OD_MAX_PENCILS, OD_MAX_ROW};

/// One complex atomic add of a box cell to the fine grid, in units of one thread's look at
/// one staged point (the fit above).
const ATOMIC_PER_LOOK: f64 = 4.1;

/// Cube sides weighed: whole sectors per pencil row, as the default 4³.
const SIDES: [usize; 3] = [4, 8, 16];

/// Widest kernel the rule is for: wider ones (type 3 at σ = 1.25) take bins twice as deep
/// along the pencils ([`nudt_gen::gpu::GpuSpreadSpec::for_spreading`]), which it does not
/// weigh.
const MAX_WIDTH: usize = 8;

/// The bins of a `dim`-D type 1 fine grid of sides `grid` that `points` points a transform
/// are spread onto with a kernel of `width`: in 3-D the cube side in [`SIDES`] of the least
/// `ATOMIC_PER_LOOK·(P/side)³ + ρ·P²` whose pencils fit the registers and the block
/// ([`OD_MAX_ROW`], [`OD_MAX_PENCILS`]); in 2-D a warp of rows [`depth_2d`] cells deep;
/// `None` where the module's own bins stand (1-D, wide kernels).
pub fn spread_bins(dim: usize, width: usize, points: usize, grid: &[usize]) -> Option<[usize; 3]> {
    if dim < 2 || width > MAX_WIDTH {
        return None;
    }
    let cells: usize = grid.iter().product();
    let rho = points as f64 / cells.max(1) as f64;
    if dim == 2 {
        return Some([33usize.saturating_sub(width).max(1), depth_2d(rho), 1]);
    }
    let cost = |side: usize| {
        let p = (side + width - 1) as f64;
        ATOMIC_PER_LOOK * (p / side as f64).powi(3) + rho * p * p
    };
    SIDES
        .into_iter()
        .filter(|&s| s + width - 1 <= OD_MAX_ROW && (s + width - 1).pow(2) <= OD_MAX_PENCILS)
        .min_by(|&a, &b| cost(a).total_cmp(&cost(b)))
        .map(|s| [s; 3])
}

/// Depth of a 2-D bin at `rho` points a fine-grid cell: 2 where points are dense, 4 and then
/// 8 as they thin. H200, execute ms of widths 7 (f64) / 6 (f32) at depths 1, 2, 4, 8, 16
/// (`nudt bench --backend cuda`, bins forced through a profile): ρ = 2.5 (10⁷ points on
/// 1000² modes) 1.6, 1.6, 1.6, 2.2, 3.5 / 1.00, 0.91, 0.95, 1.3, 1.9, and on 4096² modes
/// 29.8, 27.1, 27.0, 36.6, 67.2; ρ = 0.25 (one point per mode, 4096²) 13.6, 9.6, 7.7,
/// 7.3, 8.2 / 6.3, 4.6, 3.8, 3.7, 4.1; ρ = 0.025 5.3, 4.9, 4.3, 4.0, 4.0 / 2.9, 2.6, 2.1,
/// 1.9, 1.9.
fn depth_2d(rho: f64) -> usize {
    if rho >= 1.0 {
        2
    } else if rho >= 0.5 {
        4
    } else {
        8
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dense_sets_keep_small_bins_and_sparse_ones_take_large() {
        let grid = [512, 512, 512];
        let modes = 256usize.pow(3);
        let at = |density: f64| spread_bins(3, 7, (density * modes as f64) as usize, &grid);
        assert_eq!(at(10.0), Some([4; 3]));
        assert_eq!(at(1.0), Some([8; 3]));
        assert_eq!(at(0.1), Some([16; 3]));
        // 10^7 points on 200³: where 4³ measured fastest.
        assert_eq!(spread_bins(3, 7, 10_000_000, &[200; 3]), Some([4; 3]));
    }

    #[test]
    fn two_dimensional_bins_deepen_as_points_thin() {
        let grid = [8192, 8192];
        let modes = 4096usize.pow(2);
        let at = |density: f64| spread_bins(2, 7, (density * modes as f64) as usize, &grid);
        assert_eq!(at(10.0), Some([26, 2, 1]));
        assert_eq!(at(1.0), Some([26, 8, 1]));
        assert_eq!(at(0.1), Some([26, 8, 1]));
        // 10⁷ points on 1000² modes (2000² cells) keep the module's own 2-deep rows; f32's
        // width 6 takes one row more across.
        assert_eq!(
            spread_bins(2, 6, 10_000_000, &[2000, 2000]),
            Some([27, 2, 1])
        );
        assert_eq!(
            spread_bins(2, 7, 3_000_000, &[2000, 2000]),
            Some([26, 4, 1])
        );
    }

    #[test]
    fn only_2d_3d_and_kernels_up_to_width_8() {
        assert_eq!(spread_bins(1, 7, 10, &[4096]), None);
        assert_eq!(spread_bins(2, 10, 10, &[4096, 4096]), None);
        assert_eq!(spread_bins(3, 10, 10, &[512; 3]), None);
        // Width 8 at ρ → 0: 16 + 7 = 23 cells a pencil, 529 pencils: over the block's 512.
        assert_eq!(spread_bins(3, 8, 1, &[512; 3]), Some([8; 3]));
    }
}
