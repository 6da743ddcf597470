//! What every backend accepts: one set of limits, so that a problem one backend plans is
//! never refused by another.

/// Most points (sources or targets) of one set. The GPU sorts keep a point's index and its
/// bin's counts in 32-bit words whose top bit their scans and ranks need, so a set holds at
/// most 2³¹ − 1 points; the CPU sort's 32-bit indices would take twice as many, but a
/// problem that runs on the CPU should run on a GPU of the memory too (2³¹ points of a 3-D
/// f64 type 1 take 86 GB with their strengths).
pub const MAX_POINTS: usize = i32::MAX as usize;

/// Longest fine grid side. The GPU kernels index one axis of a grid with `int` and add a
/// kernel's reach or a second index to it, so a side keeps a bit of headroom below 2³¹; a
/// CPU grid of that side (1-D f64: 17 GB) is one a GPU could hold too.
pub const MAX_GRID_SIDE: usize = (i32::MAX / 2) as usize;

/// Most transforms of one GPU batch: the kernels take a batch's transform from the second
/// grid dimension (CUDA's `blockIdx.y`, at most 65535 blocks; OpenCL's group id 1, kept to
/// the same bound). A larger `max_batch` is clamped to it (the results are the same, in more
/// batches).
pub const MAX_BATCH: usize = 65535;

/// Transforms a GPU plan runs together — one launch per stage and one batched FFT for all of
/// them, on a stack of work grids — out of `ntransf`, given the caller's `max_batch` (0: up
/// to 8, which amortises the launches and FFT of small transforms while keeping the work
/// grids to 8 fine grids). Transforms with a point set each run in the same batches: their
/// sets are sorted together, a batch's sets one run of the sorted points
/// ([`super::sets::Batch`]), so they need no more work grids than shared points do.
pub fn gpu_batch(ntransf: usize, max_batch: usize) -> usize {
    match max_batch {
        0 => ntransf.min(8),
        b => b.min(ntransf).min(MAX_BATCH),
    }
}

/// Share of this machine's memory that a CPU plan's transforms running at once may hold in
/// work buffers ([`cpu_concurrent`]): a quarter, beside the caller's arrays and the sorted
/// points.
const CPU_WORK_MEMORY_SHARE: usize = 4;

/// Transforms of a stack of `ntransf` a CPU plan runs at once on `threads` threads, each
/// holding `work_bytes` of buffers (a fine grid, or a type 3's two), within a quarter of
/// `memory` (`None`: not known, no bound): at most one per thread, at least one.
///
/// One transform after another, each parallel inside, leaves cores idle wherever a
/// transform's steps synchronise (a slab, an FFT axis) or run on few
/// threads, and small transforms (10⁴–10⁵ points) are mostly such steps; several
/// transforms at once fill those gaps with each other's work, at a work buffer each.
pub fn cpu_concurrent(
    ntransf: usize,
    threads: usize,
    work_bytes: usize,
    memory: Option<usize>,
) -> usize {
    let by_memory = memory.map_or(usize::MAX, |m| {
        (m / CPU_WORK_MEMORY_SHARE) / work_bytes.max(1)
    });
    ntransf.min(threads).min(by_memory).max(1)
}

/// Threads each transform of a CPU stack of `ntransf` runs on, of `threads`: their share
/// when [`cpu_concurrent`] runs several at once (memory aside, which only lowers how many).
pub fn cpu_transform_threads(ntransf: usize, threads: usize) -> usize {
    (threads / cpu_concurrent(ntransf, threads, 0, None)).max(1)
}

/// Tiles a CPU grid aims for per thread ([`cpu_tile_side`]).
const TILES_PER_THREAD: usize = 2;

/// Tile side of a CPU grid of `n` points whose kernel is `width` wide, on `threads`
/// threads: `side` (the cache's choice, `nudt_gen::plan::tile_side`), made smaller where it
/// leaves fewer than [`TILES_PER_THREAD`] tiles a thread, in multiples of 8 (whole cache
/// lines along a row) and never below `width` nor 8.
///
/// A tile is spread by one thread, and a small grid is few tiles of the cache's size: a
/// 1-D grid of 16 000 points was one tile of 43 680, a 3-D grid of 40³ points 27 of 16³,
/// so a type 1 of 10⁴ points spread on one thread or a few, whatever the threads. Smaller
/// tiles cost more padding per point (a box of `side + w − 1` a side), which only pays where
/// threads would otherwise idle.
pub fn cpu_tile_side(n: &[usize], width: usize, side: usize, threads: usize) -> usize {
    let floor = width.max(8);
    let tiles = |s: usize| n.iter().map(|&m| m.div_ceil(s)).product::<usize>();
    let wanted = TILES_PER_THREAD * threads.max(1);
    if side <= floor || tiles(side) >= wanted {
        return side;
    }
    let points = n.iter().product::<usize>() as f64;
    let even = (points / wanted as f64).powf(1.0 / n.len().max(1) as f64) as usize;
    (even / 8 * 8).clamp(floor, side)
}

/// Tiles a slab's spreading aims for per thread and per `2^d` ([`slab_tile_rows`]): enough
/// that tiles of uneven point counts even out across the threads.
const SLAB_TILES_PER_THREAD: usize = 2;

/// Rows of tiles along the first axis that a slab-wise type 1 or 2 (2-D and 3-D grids,
/// `ntiles` tiles per axis) spreads and transforms at once, on `threads` threads: one, unless
/// a row's tiles are too few to keep the threads busy.
///
/// Each slab's steps end in a barrier. The rule was measured when a slab's tiles were
/// spread colour by colour (2^d colours, one at a time): a row of a 2-D grid of 512² points
/// has 8 tiles of 64, so a colour's 4 tiles left 12 of 16 threads idle, and each of the
/// grid's 8 slabs paid three barriers; a 3-D grid of 80³ points in tiles of 16 has 25 tiles
/// a row, 3 to 6 a colour. Rows enough for [`SLAB_TILES_PER_THREAD`] tiles per thread and
/// per colour filled them, at a slab that many rows long: where the rows are few, the whole
/// grid. A large grid keeps one row per slab (a 3-D grid of 250³ points: 256 tiles a row),
/// and with it the memory the slabs save. Tiles now spread all at once (locks, not
/// colours), so fewer rows might fill the threads; the factor stays until measured so.
pub fn slab_tile_rows(ntiles: &[usize], threads: usize) -> usize {
    let per_row: usize = ntiles[1..].iter().product();
    let colours = 1 << ntiles.len();
    let wanted = SLAB_TILES_PER_THREAD * threads.max(1) * colours;
    wanted.div_ceil(per_row.max(1)).clamp(1, ntiles[0].max(1))
}

#[cfg(test)]
mod tests {
    use super::{cpu_concurrent, cpu_tile_side, cpu_transform_threads, slab_tile_rows};

    #[test]
    fn small_grids_take_tiles_enough_for_the_threads() {
        // 1-D 16 000 points: one tile of the cache's 43 680 → 32 of 496 on 16 threads.
        assert_eq!(cpu_tile_side(&[16000], 7, 43680, 16), 496);
        assert!(16000usize.div_ceil(cpu_tile_side(&[16000], 7, 43680, 16)) >= 32);
        // 3-D 40³ in tiles of 16 (27) on 16 threads → tiles of 8 (125); 2 threads keep 16.
        assert_eq!(cpu_tile_side(&[40, 40, 40], 7, 16, 16), 8);
        assert_eq!(cpu_tile_side(&[40, 40, 40], 7, 16, 2), 16);
        // Never below the width, nor 8; a large grid keeps the cache's side.
        assert_eq!(cpu_tile_side(&[40, 40, 40], 13, 16, 64), 13);
        assert_eq!(cpu_tile_side(&[20, 20], 5, 16, 64), 8);
        assert_eq!(cpu_tile_side(&[250, 250, 250], 7, 16, 16), 16);
        // A stack of 32 on 16 threads runs 16 at once, one thread each; 4 get 4 each.
        assert_eq!(cpu_transform_threads(32, 16), 1);
        assert_eq!(cpu_transform_threads(4, 16), 4);
        assert_eq!(cpu_transform_threads(1, 16), 16);
    }

    #[test]
    fn slabs_take_rows_enough_to_keep_the_threads_busy() {
        // 3-D 250³ in tiles of 16: 256 tiles a row, enough for 16 threads, not for 32.
        assert_eq!(slab_tile_rows(&[16, 16, 16], 2), 1);
        assert_eq!(slab_tile_rows(&[16, 16, 16], 16), 1);
        assert_eq!(slab_tile_rows(&[16, 16, 16], 32), 2);
        // 2-D 512² in tiles of 64: 8 rows of 8, all of them at 16 threads.
        assert_eq!(slab_tile_rows(&[8, 8], 2), 2);
        assert_eq!(slab_tile_rows(&[8, 8], 16), 8);
        assert_eq!(slab_tile_rows(&[1, 1], 0), 1);
    }

    #[test]
    fn a_cpu_stack_runs_a_transform_per_thread_within_memory() {
        assert_eq!(cpu_concurrent(32, 8, 1 << 20, None), 8);
        assert_eq!(cpu_concurrent(3, 8, 1 << 20, None), 3);
        // A quarter of 64 MiB holds two 8 MiB buffers.
        assert_eq!(cpu_concurrent(32, 8, 8 << 20, Some(64 << 20)), 2);
        // One runs whatever its buffers take.
        assert_eq!(cpu_concurrent(32, 8, 1 << 30, Some(64 << 20)), 1);
        assert_eq!(cpu_concurrent(1, 0, 0, Some(0)), 1);
    }
}
