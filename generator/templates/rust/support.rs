// Shared, width-independent half of nudt's generated CPU spreaders: the scalar trait, the
// tiling of the fine grid, the parallel bin sort, and the two NUDT parallel schedules.
// Rendered once; every generated `Kernel` (one per dimension, width and precision) plugs its
// tile kernels into these schedules. Needs only std and rayon.
//
// Layouts: complex arrays are interleaved `[re, im, re, im, ..]`; grids are row-major with
// the last dimension fastest. A point at grid coordinate `x` touches `i0 .. i0 + w` with
// `i0 = ⌈x − w/2⌉`; its *cell* `i0 + ⌊w/2⌋` decides its tile. Each tile has a padded buffer
// starting `⌊w/2⌋` below the tile, so `off = cell − tile start` indexes the buffer directly
// and the hot loops never wrap.

use rayon::prelude::*;
use std::ops::{Add, AddAssign, Mul, Sub};

/// The two scalar types the generator emits code for.
pub trait Real:
    Copy
    + Send
    + Sync
    + Default
    + PartialOrd
    + Add<Output = Self>
    + Sub<Output = Self>
    + Mul<Output = Self>
    + AddAssign
    + std::fmt::Debug
    + 'static
{
    fn of(x: f64) -> Self;
    fn wide(self) -> f64;
}

impl Real for f32 {
    #[inline(always)]
    fn of(x: f64) -> Self {
        x as f32
    }
    #[inline(always)]
    fn wide(self) -> f64 {
        self as f64
    }
}

impl Real for f64 {
    #[inline(always)]
    fn of(x: f64) -> Self {
        x
    }
    #[inline(always)]
    fn wide(self) -> f64 {
        self
    }
}

/// The points of one tile (or part of one), in sorted order.
#[derive(Clone, Copy)]
pub struct Points<'a, T> {
    pub dim: usize,
    /// Per point: the first touched grid point relative to the buffer's origin in every
    /// dimension, packed ([`pack`]).
    pub off: &'a [u32],
    /// Per point and dimension (`dim · p + d`): the Horner variable `t ∈ [−1, 1)`.
    pub t: &'a [T],
    /// Original index of each point (into strengths or outputs).
    pub idx: &'a [u32],
}

/// Bits of a packed offset per dimension: the 32 bits of a `u32` shared out.
const fn offset_bits(dim: usize) -> u32 {
    [32, 32, 16, 10][dim]
}

/// Largest buffer length per dimension whose offsets fit [`offset_bits`]; tile sides are kept
/// below it. (3-D tiles are a few dozen points, 2-D ones a few hundred.)
pub const fn max_buffer_len(dim: usize) -> usize {
    if dim <= 1 {
        u32::MAX as usize
    } else {
        1 << offset_bits(dim)
    }
}

/// Packs per-dimension offsets into one `u32`, the first dimension in the high bits. The
/// sort writes three streams per tile (index, packed offsets, Horner variables) rather than
/// one per quantity and dimension, which its scattered writes pay for by the stream.
#[inline(always)]
fn pack(dim: usize, off: [u32; 3]) -> u32 {
    let bits = offset_bits(dim);
    (0..dim).fold(0u32, |acc, d| {
        if bits == 32 {
            off[d]
        } else {
            (acc << bits) | off[d]
        }
    })
}

/// Offset along dimension `d` from a packed `off` ([`pack`]).
#[inline(always)]
fn unpack(dim: usize, off: u32, d: usize) -> usize {
    let bits = offset_bits(dim);
    if bits == 32 {
        return off as usize;
    }
    let shift = bits * (dim - 1 - d) as u32;
    ((off >> shift) & ((1 << bits) - 1)) as usize
}

impl<T: Copy> Points<'_, T> {
    /// Offset of point `p` along dimension `d`.
    #[inline(always)]
    pub fn off(&self, d: usize, p: usize) -> usize {
        unpack(self.dim, self.off[p], d)
    }

    /// Horner variable of point `p` along dimension `d`.
    #[inline(always)]
    pub fn t(&self, d: usize, p: usize) -> T {
        self.t[self.dim * p + d]
    }
}

/// The specialised half: spreading and interpolation of one tile's points into or out of a
/// padded, cache-resident buffer, with the kernel evaluated from a Horner table.
pub trait TileKernel<T: Real> {
    const DIM: usize;
    const WIDTH: usize;
    /// Extra buffer points past the support along the contiguous dimension, which padded
    /// row updates touch (with zero weights); the schedules allocate and skip them.
    const SLACK: usize = 0;
    /// The buffers' contiguous dimension is a multiple of this many points, so that every row
    /// of a box starts at the same offset modulo a SIMD register: the kernels then shift
    /// their rows to whole registers ([`Self::SLACK`] leaves them room).
    const ALIGN: usize = 1;
    /// Buffer points along the contiguous dimension for a box whose points reach `reach`
    /// along it: the slack added, rounded up to [`Self::ALIGN`].
    fn row_len(reach: usize) -> usize {
        (reach + Self::SLACK).next_multiple_of(Self::ALIGN)
    }
    /// Reals per row of the Horner table the kernels read: the width padded to whole SIMD
    /// registers (the padding zero). Tables fitted at run time are laid out to match.
    const TABLE_COLUMNS: usize = Self::WIDTH;
    /// Adds the points' contributions into `buf` (interleaved complex, row strides in complex
    /// elements; the last dimension is contiguous). `c` holds the strengths of these points,
    /// in their order (the schedules gather them, see [`gather`]).
    fn spread_tile(buf: &mut [T], strides: [usize; 3], pts: Points<'_, T>, c: &[T], table: &[T]);
    /// Interpolates `buf` at the points, writing interleaved values in the points' order.
    fn interp_tile(buf: &[T], strides: [usize; 3], pts: Points<'_, T>, vals: &mut [T], table: &[T]);
}

/// The value-and-gradient half of a tile kernel, for derivatives of a transform with respect
/// to its points. `dtable` is the Horner table of the kernel's derivative in the Horner
/// variable ([`derivative_table`] of the kernel's table); `scales[d]` converts a derivative
/// along dimension `d` from its units to the coordinates' (the caller's: `−n_d/π` for
/// radians), applied to each point's derivatives as they are written or read.
pub trait GradTileKernel<T: Real>: TileKernel<T> {
    /// Interpolates `buf` at the points: per point `DIM + 1` interleaved complex values, the
    /// interpolant and its derivative along each dimension.
    fn interp_grad_tile(
        buf: &[T],
        strides: [usize; 3],
        pts: Points<'_, T>,
        vals: &mut [T],
        table: &[T],
        dtable: &[T],
        scales: &[T],
    );
    /// Adds, per point, `v·φ + Σ_d u_d·∂_dφ` into `buf`, from `DIM + 1` interleaved complex
    /// values `(v, u_0, ..)` per point in `c`: the transpose of [`Self::interp_grad_tile`].
    fn spread_grad_tile(
        buf: &mut [T],
        strides: [usize; 3],
        pts: Points<'_, T>,
        c: &[T],
        table: &[T],
        dtable: &[T],
        scales: &[T],
    );
}

/// What the gradient kernels evaluate with: the kernel's Horner table, its derivative's
/// ([`derivative_table`]) and the derivatives' scales per dimension ([`GradTileKernel`]).
#[derive(Clone, Copy, Debug)]
pub struct GradTables<'a, T> {
    pub table: &'a [T],
    pub dtable: &'a [T],
    pub scales: &'a [T],
}

/// The Horner table of the derivative of the polynomials in `table` (rows of `columns` reals,
/// highest degree first): one row fewer, row `k` scaled by its degree.
pub fn derivative_table<T: Real>(table: &[T], columns: usize) -> Vec<T> {
    let rows = table.len() / columns.max(1);
    table
        .chunks_exact(columns)
        .take(rows.saturating_sub(1))
        .enumerate()
        .flat_map(|(k, row)| {
            let degree = T::of((rows - 1 - k) as f64);
            row.iter().map(move |&c| c * degree)
        })
        .collect()
}

/// An interpolating tile kernel bound to its tables, as the schedules call it: `(buffer,
/// strides, points, values)`, the values `Q` interleaved complex per point.
pub type InterpTileFn<'a, T> = dyn Fn(&[T], [usize; 3], Points<'_, T>, &mut [T]) + Sync + 'a;
/// A spreading tile kernel bound to its tables: `(buffer, strides, points, strengths)`.
pub type SpreadTileFn<'a, T> = dyn Fn(&mut [T], [usize; 3], Points<'_, T>, &[T]) + Sync + 'a;

/// How a fine grid is cut into tiles of `side ≥ width` points along each dimension. The
/// remainder is a last tile of its own where it is at least `width` long, as every tile is,
/// and is otherwise added to the tile before: at most `side + width − 1` long. A remainder added whatever its length made the last tile up to twice the others,
/// and with it the longest slab of a slab-wise type 1 or 2 ([`TileGrid::rows_planes`]): 250
/// planes in tiles of 16 ended in one of 26, a slab of 32 planes where the rest take 22
/// (10 MB more of a 3-D f64 transform's peak).
#[derive(Clone, Debug, PartialEq)]
pub struct TileGrid {
    pub dim: usize,
    pub n: [usize; 3],
    pub width: usize,
    pub side: [usize; 3],
    pub ntiles: [usize; 3],
}

impl TileGrid {
    /// `n` and `side` give one entry per dimension; `side` is clamped to `[width, n]`.
    pub fn new(n: &[usize], width: usize, side: &[usize]) -> Self {
        let dim = n.len();
        let mut g = TileGrid {
            dim,
            n: [1; 3],
            width,
            side: [1; 3],
            ntiles: [1; 3],
        };
        for d in 0..dim {
            g.n[d] = n[d];
            // The padded buffer (side + w − 1, plus up to 16 points of SIMD slack) must fit the
            // packed offsets.
            let cap = max_buffer_len(dim).saturating_sub(width + 16).max(1);
            g.side[d] = side[d].max(width).min(n[d]).min(cap).max(1);
            let (whole, rest) = (n[d] / g.side[d], n[d] % g.side[d]);
            g.ntiles[d] = if rest >= width {
                whole + 1
            } else {
                whole.max(1)
            };
        }
        g
    }

    /// Fraction bits a fixed-point place keeps ([`Placement::Fixed`]): what the longest
    /// tile's offsets leave of 32 bits.
    pub fn fraction_bits(&self) -> u32 {
        let longest = (0..self.dim)
            .map(|d| self.longest_tile(d))
            .max()
            .unwrap_or(1);
        (longest.saturating_sub(1) as u32).leading_zeros().min(31)
    }

    /// The longest tile along dimension `d`: the first, or the last where it took the
    /// remainder.
    pub fn longest_tile(&self, d: usize) -> usize {
        self.tile_len(d, 0)
            .max(self.tile_len(d, self.ntiles[d] - 1))
    }

    pub fn num_tiles(&self) -> usize {
        self.ntiles[..self.dim].iter().product()
    }

    pub fn grid_len(&self) -> usize {
        self.n[..self.dim].iter().product()
    }

    pub fn tile_start(&self, d: usize, i: usize) -> usize {
        i * self.side[d]
    }

    pub fn tile_len(&self, d: usize, i: usize) -> usize {
        if i + 1 == self.ntiles[d] {
            self.n[d] - i * self.side[d]
        } else {
            self.side[d]
        }
    }

    /// Tile coordinates of a tile id (row-major over tiles).
    pub fn tile_coords(&self, mut id: usize) -> [usize; 3] {
        let mut c = [0; 3];
        for d in (0..self.dim).rev() {
            c[d] = id % self.ntiles[d];
            id /= self.ntiles[d];
        }
        c
    }

    pub fn tile_id(&self, c: [usize; 3]) -> usize {
        (0..self.dim).fold(0, |id, d| id * self.ntiles[d] + c[d])
    }

    /// Grid strides (complex elements) of a row-major box of the given lengths.
    pub fn strides(&self, len: [usize; 3]) -> [usize; 3] {
        let mut s = [0; 3];
        let mut acc = 1;
        for d in (0..self.dim).rev() {
            s[d] = acc;
            acc *= len[d];
        }
        s
    }

    /// Padded buffer lengths of tile `c`: the tile plus `w − 1` points of overhang, the
    /// contiguous dimension's as a kernel's `row_len` makes it ([`TileKernel::row_len`]).
    fn padded(&self, c: [usize; 3], row_len: impl Fn(usize) -> usize) -> [usize; 3] {
        let mut len = [1; 3];
        for d in 0..self.dim {
            len[d] = self.tile_len(d, c[d]) + self.width - 1;
        }
        len[self.dim - 1] = row_len(len[self.dim - 1]);
        len
    }
}

/// Points binned into the tiles of a fine grid: the product of `setpts`.
#[derive(Clone, Debug)]
pub struct Tiles<T> {
    pub grid: TileGrid,
    /// Tile `i` holds sorted points `starts[i] .. starts[i + 1]`.
    pub starts: Vec<usize>,
    /// Each sorted point's original index.
    pub order: Order,
    /// Where each sorted point's support starts in its tile's buffer ([`Points`]).
    pub place: Placement<T>,
}

/// The sorted points' places in their tiles' buffers. A plan whose tolerance leaves room
/// (`nudt_gen::plan::narrow_horner_variables`, and every f32 plan) needs them only to f32's
/// precision; those keep 4 bytes a point and dimension, a 3-D f64 point's 28 bytes of
/// offsets and variables become 12 ([`Placement::Fixed`]). The schedules unpack a tile's
/// places into [`Scratch`] before its kernel runs.
#[derive(Clone, Debug)]
pub enum Placement<T> {
    /// Packed offsets ([`pack`]) and interleaved Horner variables in the plan's precision.
    Full { off: Vec<u32>, t: Vec<T> },
    /// Packed offsets and Horner variables in f32: tiles too long for [`Placement::Fixed`]
    /// to keep f32's resolution, 2-D and 3-D sides set above 128 by hand and 1-D tiles
    /// beyond [`Placement::Narrow1`]'s. 1-D places were once kept in fixed point relative to groups of 256
    /// grid points, 8 bytes a point with the index where these take 12, but the strengths'
    /// reads then jumped about within a tile and the grouping pass cost its own time: 1-D
    /// set-points 87 → 61 ms and execute 140 → 110 ms without it, at the same peak memory
    /// (10⁷ points, 2 threads, Xeon; BENCHMARKS.md).
    Narrow { off: Vec<u32>, t: Vec<f32> },
    /// [`Placement::Narrow`] for 1-D tiles of at most 2¹⁶ points, the tile rule's (21 832
    /// in f64): each offset in 16 bits, 8 or 10 bytes a point with the index ([`Order`]).
    /// A 1-D type 1's peak is the caller's 24 bytes a point, the sort's and the grid's; with
    /// 32-bit offsets it stood 1–3 MB under FINUFFT's + 10% (451–453 against 454 MB, 10⁷
    /// points), 12–15 MB under it with these (439–442; BENCHMARKS.md). The kernels read
    /// offsets in 32 bits: a tile's are widened into [`Scratch`] beside its Horner variables.
    Narrow1 { off: Vec<u16>, t: Vec<f32> },
    /// Per point and dimension, the support's start in the buffer in fixed point: the offset
    /// above the low `frac` bits, the fraction of a grid step below. With `frac ≥`
    /// [`FIXED_MIN_FRAC`] the step is at most 2⁻²⁴ of a grid point, as fine as f32's Horner
    /// variables near their ends. One stream for offset and variable also spares the sort a
    /// write stream.
    Fixed { pos: Vec<u32>, frac: u32 },
}

/// The sorted points' original indices. The sort is stable, so a tile's points keep their
/// original order: within a tile, those from one block of 2¹⁶ original indices are one run
/// of sorted slots, and a table of where each (tile, block) run starts gives back the high
/// bits ([`Order::Blocked`]). 10⁷ points keep 20 MB less (a 3-D point 16 → 14 bytes with
/// its fixed-point places): a type 1's or 2's peak is the caller's data, the sort's and the
/// grid's or slabs', and FINUFFT, whose grid is smaller, stood below ours (BENCHMARKS.md).
#[derive(Clone, Debug)]
pub enum Order {
    /// One `u32` per point: where the table would outweigh a quarter of what it saves (few
    /// points, many tiles).
    Wide(Vec<u32>),
    /// Per point the low 16 bits of its index; `first[tile · blocks + b]` (tile-major, and
    /// `len` at the end) is the first sorted slot of the tile's points from block `b`.
    Blocked {
        low: Vec<u16>,
        first: Vec<u32>,
        blocks: usize,
    },
}

/// Original indices per [`Order::Blocked`] block (the bits its `low` keeps).
const ORDER_BLOCK_BITS: u32 = 16;

impl Order {
    /// The original indices of sorted points `range` (inside one tile): a slice of the
    /// stored ones, or decoded into `out`.
    pub fn indices<'a>(
        &'a self,
        range: std::ops::Range<usize>,
        out: &'a mut Vec<u32>,
    ) -> &'a [u32] {
        match self {
            Order::Wide(idx) => &idx[range],
            Order::Blocked { low, first, blocks } => {
                out.clear();
                out.reserve(range.len());
                // The last run starting at or before `range.start` holds it (runs before it
                // may be empty and start at the same slot).
                let mut e = first
                    .partition_point(|&s| s as usize <= range.start)
                    .saturating_sub(1);
                let mut p = range.start;
                while p < range.end {
                    let end = (first[e + 1] as usize).min(range.end);
                    let high = ((e % blocks) as u32) << ORDER_BLOCK_BITS;
                    out.extend(low[p..end].iter().map(|&l| high | l as u32));
                    p = end;
                    e += 1;
                }
                out
            }
        }
    }

    /// The slots, among tile `tile`'s sorted slots `slots`, of the points whose original
    /// index lies in `lo..hi`: one run, as the sort is stable. `lo..hi` lies inside one block
    /// of 2¹⁶ original indices ([`Order::Blocked`]'s).
    fn slots_of(
        &self,
        tile: usize,
        slots: std::ops::Range<usize>,
        lo: usize,
        hi: usize,
    ) -> std::ops::Range<usize> {
        debug_assert_eq!(lo >> ORDER_BLOCK_BITS, (hi - 1) >> ORDER_BLOCK_BITS);
        match self {
            Order::Wide(idx) => {
                let s = &idx[slots.clone()];
                let at = |j: usize| s.partition_point(|&i| (i as usize) < j);
                slots.start + at(lo)..slots.start + at(hi)
            }
            Order::Blocked { low, first, blocks } => {
                let block = lo >> ORDER_BLOCK_BITS;
                let base = block << ORDER_BLOCK_BITS;
                let run = first[tile * blocks + block] as usize
                    ..first[tile * blocks + block + 1] as usize;
                let s = &low[run.clone()];
                let at = |j: usize| s.partition_point(|&l| (l as usize) < j - base);
                run.start + at(lo)..run.start + at(hi)
            }
        }
    }
}

/// Fewest fraction bits [`Placement::Fixed`] keeps: tiles of up to 256 points a side.
pub const FIXED_MIN_FRAC: u32 = 24;

/// A task's room for unpacked places ([`Tiles::points`]); one per worker, reused tile after tile.
#[derive(Default)]
pub struct Scratch<T> {
    off: Vec<u32>,
    t: Vec<T>,
    idx: Vec<u32>,
    /// The same points ordered by cell in 3-D ([`by_cells`]): offsets, variables, indices,
    /// and the cells' running counts.
    cell_off: Vec<u32>,
    cell_t: Vec<T>,
    cell_idx: Vec<u32>,
    count: Vec<u32>,
}

/// A sort's output before it becomes [`Tiles`]: tile starts, the order, then per point a
/// stream of `u32` words (packed offsets, or fixed-point places) and one of reals (Horner
/// variables, or none).
type Sorted<S> = (Vec<usize>, Order, Vec<u32>, Vec<S>);

/// What the sort stores of a point's original index: all of it, or its low bits.
trait IndexWord: Copy + Default + Send + Sync {
    fn of(j: usize) -> Self;
    /// The order these words make with the blocked table `first` (empty for `u32`).
    fn order(words: Vec<Self>, first: Vec<u32>, blocks: usize) -> Order;
}

impl IndexWord for u32 {
    #[inline(always)]
    fn of(j: usize) -> Self {
        j as u32
    }

    fn order(words: Vec<Self>, _: Vec<u32>, _: usize) -> Order {
        Order::Wide(words)
    }
}

impl IndexWord for u16 {
    #[inline(always)]
    fn of(j: usize) -> Self {
        j as u16
    }

    fn order(low: Vec<Self>, first: Vec<u32>, blocks: usize) -> Order {
        Order::Blocked { low, first, blocks }
    }
}

/// The fraction bits of a fixed-point place (`2·frac − 1` is the Horner variable `t`), from
/// `t ∈ [−1, 1)`: truncated, the half step added back in [`unfix`].
#[inline(always)]
fn fix(off: u32, t: f64, frac: u32) -> u32 {
    let mask = (1u32 << frac) - 1;
    let f = ((t + 1.0) * (1u64 << (frac - 1)) as f64) as u32;
    (off << frac) | f.min(mask)
}

/// Offset and Horner variable of a fixed-point place ([`fix`]).
#[inline(always)]
fn unfix(pos: u32, frac: u32) -> (u32, f64) {
    let mask = (1u32 << frac) - 1;
    // `frac ≤ 31` keeps the fraction inside i32, whose conversion vectorises (u32's needs
    // AVX-512), and the scale, a power of two, multiplies exactly where a divide is slow:
    // `(2f + 1) / 2^frac − 1` to the last bit.
    let t = ((pos & mask) as i32 as f64 + 0.5) * (2.0 / (1u64 << frac) as f64) - 1.0;
    (pos >> frac, t)
}

/// Where the points of one dimension land on a fine grid of `n` points: the grid cell at
/// the centre of a point's support (which decides its tile), its offset in the tile and its
/// Horner variable. In f64, so that large f32 grids keep their sub-cell accuracy; any finite
/// coordinate is folded periodically.
#[derive(Clone, Copy)]
struct Axis {
    nf: f64,
    half: f64,
    centre: f64,
    side: f64,
    /// `1 / side`: the tile of a cell is `⌊(cell + ½) / side⌋`, which a multiply gives
    /// exactly. The quotient is at least `½ / side` from an integer, and the product's
    /// rounding error is about `2⁻⁵² · cell / side`: smaller for any cell below 2⁵⁰.
    inv_side: f64,
    last_tile: f64,
}

impl Axis {
    fn new(grid: &TileGrid, d: usize) -> Self {
        Axis {
            nf: grid.n[d] as f64,
            half: grid.width as f64 / 2.0,
            centre: (grid.width / 2) as f64,
            side: grid.side[d] as f64,
            inv_side: 1.0 / grid.side[d] as f64,
            last_tile: (grid.ntiles[d] - 1) as f64,
        }
    }

    /// `(tile, offset in the tile, t)` of coordinate `x` (radians), all in f64 lanes and
    /// without branches, so that a loop over a block of points vectorises. Point by point,
    /// with integer cells and a multiply-high for the tile, set-points of 10⁷ points took
    /// 114, 157 and 244 ms in 1-D, 2-D and 3-D and 216 ms in 3-D f32; by blocks 90, 133,
    /// 213 and 147 ms (2 threads, Xeon, BENCHMARKS.md).
    #[inline(always)]
    fn locate(&self, x: f64) -> (f64, f64, f64) {
        let turns = x * (0.5 / std::f64::consts::PI);
        let xg = (turns - turns.floor()) * self.nf;
        // `turns − ⌊turns⌋` may round up to 1.
        let xg = if xg >= self.nf { xg - self.nf } else { xg };
        let i0 = (xg - self.half).ceil();
        let t = 2.0 * (i0 - xg + self.half) - 1.0;
        // `xg ∈ [0, n)` puts the cell in [0, n]: one correction wraps it.
        let cell = i0 + self.centre;
        let cell = if cell >= self.nf {
            cell - self.nf
        } else {
            cell
        };
        let tile = ((cell + 0.5) * self.inv_side).floor().min(self.last_tile);
        (tile, cell - tile * self.side, t)
    }
}

/// `v`, an integer in `[0, 2³¹)` where coordinates are finite, as a `u32` in vector lanes:
/// Rust's saturating `as` became a scalar conversion and NaN test per lane. NaN (from
/// non-finite coordinates, which plans reject) becomes 0.
#[inline(always)]
fn lane_u32(v: f64) -> u32 {
    // SAFETY: the clamps leave a finite value inside i32's range.
    unsafe { v.max(0.0).min(i32::MAX as f64).to_int_unchecked::<i32>() as u32 }
}

/// Points the sort locates at a time ([`Binner::tiles`], [`Binner::places`]): a block's
/// results stay in L1 between the vectorised locating and the per-point scatter.
const BLOCK: usize = 64;

/// Bytes of write-combining buffers per sorting task ([`Tiles::bin`]): about one core's L2
/// (measured on 2-D and 3-D sorts of 10⁷ points: 256 KiB and 1 MiB both slower in 3-D).
const WC_BYTES: usize = 512 << 10;

/// One point set's coordinates and axes, with the dimension fixed at compile time so that
/// the sort's per-point work unrolls: loops over a run-time dimension cost it bounds checks
/// and branches on every point (set-points of 10⁷ points, 2 threads: 1-D 73–75 → 59–63 ms,
/// 2-D 119 → 92–99, 3-D 169 → 136).
struct Binner<'a, T, const D: usize> {
    axes: [Axis; D],
    ntiles: [usize; D],
    coords: [&'a [T]; D],
}

impl<'a, T: Real, const D: usize> Binner<'a, T, D> {
    fn new(grid: &TileGrid, coords: &[&'a [T]]) -> Self {
        Binner {
            axes: std::array::from_fn(|d| Axis::new(grid, d)),
            ntiles: std::array::from_fn(|d| grid.ntiles[d]),
            coords: std::array::from_fn(|d| coords[d]),
        }
    }

    /// The tiles (row-major ids) of the `ids.len() ≤ BLOCK` points from `start`.
    #[inline(always)]
    fn tiles(&self, start: usize, ids: &mut [u32]) {
        #[cfg(target_arch = "x86_64")]
        if simd::avx512() {
            // SAFETY: the CPU has the features `tiles_avx512` is compiled for.
            return unsafe { self.tiles_avx512(start, ids) };
        }
        self.tiles_any(start, ids)
    }

    /// [`Self::places`], compiled for AVX-512.
    #[cfg(target_arch = "x86_64")]
    #[target_feature(enable = "avx512f,avx512dq,avx512bw,avx512vl")]
    unsafe fn places_avx512(
        &self,
        start: usize,
        ids: &mut [u32],
        off: &mut [[u32; BLOCK]; D],
        t: &mut [[f64; BLOCK]; D],
    ) {
        self.places_any(start, ids, off, t)
    }

    /// [`Self::tiles`], compiled for AVX-512.
    #[cfg(target_arch = "x86_64")]
    #[target_feature(enable = "avx512f,avx512dq,avx512bw,avx512vl")]
    unsafe fn tiles_avx512(&self, start: usize, ids: &mut [u32]) {
        self.tiles_any(start, ids)
    }

    #[inline(always)]
    fn tiles_any(&self, start: usize, ids: &mut [u32]) {
        ids.fill(0);
        for d in 0..D {
            let (axis, nt) = (self.axes[d], self.ntiles[d] as u32);
            let xs = &self.coords[d][start..start + ids.len()];
            for (id, x) in ids.iter_mut().zip(xs) {
                let (tile, _, _) = axis.locate(x.wide());
                *id = *id * nt + lane_u32(tile);
            }
        }
    }

    /// As [`Self::tiles`], with each point's offsets in its tile (`off[d]`) and Horner
    /// variables (`t[d]`).
    #[inline(always)]
    fn places(
        &self,
        start: usize,
        ids: &mut [u32],
        off: &mut [[u32; BLOCK]; D],
        t: &mut [[f64; BLOCK]; D],
    ) {
        #[cfg(target_arch = "x86_64")]
        if simd::avx512() {
            // SAFETY: as in `tiles`.
            return unsafe { self.places_avx512(start, ids, off, t) };
        }
        self.places_any(start, ids, off, t)
    }

    #[inline(always)]
    fn places_any(
        &self,
        start: usize,
        ids: &mut [u32],
        off: &mut [[u32; BLOCK]; D],
        t: &mut [[f64; BLOCK]; D],
    ) {
        ids.fill(0);
        let n = ids.len();
        for d in 0..D {
            let (axis, nt) = (self.axes[d], self.ntiles[d] as u32);
            let xs = &self.coords[d][start..start + n];
            for (((id, x), o), t) in ids
                .iter_mut()
                .zip(xs)
                .zip(&mut off[d][..n])
                .zip(&mut t[d][..n])
            {
                let (tile, offset, var) = axis.locate(x.wide());
                *id = *id * nt + lane_u32(tile);
                *o = lane_u32(offset);
                *t = var;
            }
        }
    }
}

impl<T: Real> Tiles<T> {
    /// Parallel counting sort of the points into tiles, in two passes over the coordinates:
    /// the first finds each point's tile and counts points per (chunk, tile); after an
    /// exclusive prefix sum over (tile, chunk), the second locates the points again and
    /// writes their place in the buffer and index to their sorted slots, through small
    /// per-tile buffers (2-D sort of 10⁷ points: second pass 260–380 → 170–250 ms; 3-D:
    /// 380–420 → 210 ms).
    /// Locating twice costs a few flops; keeping per-point results between the passes would
    /// cost a write and a read of them through memory. `coords[d]` are radians, any finite
    /// value (periodic with period 2π). `narrow` says f32's precision is enough for the
    /// places ([`Placement`]); an f32 plan's are never finer.
    pub fn bin(grid: TileGrid, coords: &[&[T]], narrow: bool) -> Self {
        let coarse = narrow || std::mem::size_of::<T>() <= 4;
        let frac = grid.fraction_bits();
        let (starts, order, place) = if coarse && frac >= FIXED_MIN_FRAC {
            let (starts, order, pos, _) = Self::bin_as::<T, true>(&grid, coords, frac);
            (starts, order, Placement::Fixed { pos, frac })
        } else if coarse && std::mem::size_of::<T>() > 4 {
            let (starts, order, off, t) = Self::bin_as::<f32, false>(&grid, coords, 0);
            if grid.dim == 1 && grid.longest_tile(0) + grid.width <= 1 << 16 {
                let off = off
                    .par_iter()
                    .with_min_len(1 << 14)
                    .map(|&o| o as u16)
                    .collect();
                (starts, order, Placement::Narrow1 { off, t })
            } else {
                (starts, order, Placement::Narrow { off, t })
            }
        } else {
            let (starts, order, off, t) = Self::bin_as::<T, false>(&grid, coords, 0);
            (starts, order, Placement::Full { off, t })
        };
        Tiles {
            grid,
            starts,
            order,
            place,
        }
    }

    /// The sort with places in fixed point (`FIXED`, `frac` fraction bits) or as packed
    /// offsets and Horner variables of type `S`.
    fn bin_as<S: Real, const FIXED: bool>(
        grid: &TileGrid,
        coords: &[&[T]],
        frac: u32,
    ) -> Sorted<S> {
        let m = coords.first().map_or(0, |c| c.len());
        // The blocked order's table, a word per (tile, block), within a quarter of the
        // two bytes a point it saves.
        if 8 * grid.num_tiles() * m.div_ceil(1 << ORDER_BLOCK_BITS) <= m {
            Self::bin_dim::<S, u16, FIXED>(grid, coords, frac)
        } else {
            Self::bin_dim::<S, u32, FIXED>(grid, coords, frac)
        }
    }

    /// The sort at the grid's dimension, fixed at compile time.
    fn bin_dim<S: Real, I: IndexWord, const FIXED: bool>(
        grid: &TileGrid,
        coords: &[&[T]],
        frac: u32,
    ) -> Sorted<S> {
        match grid.dim {
            0 | 1 => Self::bin_in::<1, S, I, FIXED>(grid, coords, frac),
            2 => Self::bin_in::<2, S, I, FIXED>(grid, coords, frac),
            _ => Self::bin_in::<3, S, I, FIXED>(grid, coords, frac),
        }
    }

    /// The sort in `D` dimensions, keeping indices as `I` (`u16`: [`Order::Blocked`]).
    fn bin_in<const D: usize, S: Real, I: IndexWord, const FIXED: bool>(
        grid: &TileGrid,
        coords: &[&[T]],
        frac: u32,
    ) -> Sorted<S> {
        // Per point: `WORDS` u32 (fixed-point places, or one packed offset) and `REALS`
        // Horner variables.
        let (words, reals) = if FIXED { (D, 0) } else { (1, D) };
        let m = coords.first().map_or(0, |c| c.len());
        let ntiles = grid.num_tiles();
        let empty: [&[T]; D] = [&[]; D];
        let binner = Binner::<T, D>::new(grid, if m == 0 { &empty } else { coords });
        // Histograms per block of points: one per chunk, or per block of 2¹⁶ original
        // indices (chunks a whole number of them) when the order is blocked.
        // A chunk is whole blocks, or a power of two of points inside one: chunks of whole
        // blocks of 2¹⁶ left a sort of 10⁵ points two tasks, on any number of threads.
        let wide = std::mem::size_of::<I>() == 4;
        let chunk = m.div_ceil(4 * rayon::current_num_threads()).max(1 << 12);
        let block = if wide { chunk } else { 1 << ORDER_BLOCK_BITS };
        let chunk = match chunk < block {
            true => chunk.next_power_of_two(),
            false => chunk.next_multiple_of(block),
        };
        let chunks: Vec<std::ops::Range<usize>> = (0..m)
            .step_by(chunk)
            .map(|s| s..(s + chunk).min(m))
            .collect();

        // Pass 1: per-block histograms (`[block][tile]` within a chunk), then their exclusive
        // prefix over (tile, block): block b of tile i starts after all earlier tiles and
        // earlier blocks of tile i (a stable sort).
        let hists: Vec<Vec<u32>> = chunks
            .par_iter()
            .map(|r| {
                let mut h = vec![0u32; r.len().div_ceil(block) * ntiles];
                let mut ids = [0u32; BLOCK];
                for start in r.clone().step_by(BLOCK) {
                    let ids = &mut ids[..BLOCK.min(r.end - start)];
                    binner.tiles(start, ids);
                    let h = &mut h[(start - r.start) / block * ntiles..];
                    for &id in ids.iter() {
                        h[id as usize] += 1;
                    }
                }
                h
            })
            .collect();
        let blocks = m.div_ceil(block);
        let mut first = if wide {
            Vec::new()
        } else {
            vec![0u32; ntiles * blocks + 1]
        };
        let mut pos = vec![vec![0u32; ntiles]; chunks.len()];
        let mut starts = vec![0usize; ntiles + 1];
        let mut acc = 0usize;
        for i in 0..ntiles {
            starts[i] = acc;
            for ((h, pos), r) in hists.iter().zip(pos.iter_mut()).zip(&chunks) {
                pos[i] = acc as u32;
                for (k, count) in h.iter().skip(i).step_by(ntiles).enumerate() {
                    // A block's run starts with the first chunk inside it.
                    if !wide && (k > 0 || r.start % block == 0) {
                        first[i * blocks + r.start / block + k] = acc as u32;
                    }
                    acc += *count as usize;
                }
            }
        }
        starts[ntiles] = acc;
        if let Some(end) = first.last_mut() {
            *end = m as u32;
        }
        drop(hists);

        // Pass 2: every point to its sorted slot.
        let mut idx = huge_vec::<I>(m);
        let mut wo = huge_vec::<u32>(words * m);
        let mut re = huge_vec::<S>(reals * m);
        {
            let out = SharedMut::new(&mut idx);
            let wout = SharedMut::new(&mut wo);
            let rout = SharedMut::new(&mut re);
            // Software write-combining: a point goes first to a small buffer of its tile, and
            // a full buffer moves to the sorted arrays as one contiguous copy. Scattering each
            // point straight to its slot keeps a write stream per tile and array open at once
            // (over a thousand in 3-D), far more than the caches combine. Up to 128 points
            // per buffer where few tiles leave room (1-D, 2-D): 16 took 1-D and 2-D
            // set-points 59 and 90 ms, 128 49–52 and 78–88 ms (10⁷ points, 2 threads).
            let wc = (WC_BYTES
                / (ntiles
                    * (std::mem::size_of::<I>() + 4 * words + reals * std::mem::size_of::<S>())))
            .clamp(4, 128);
            chunks
                .par_iter()
                .zip(pos.par_iter_mut())
                .for_each(|(r, pos)| {
                    let mut b_idx = vec![I::default(); ntiles * wc];
                    let mut b_w = vec![0u32; ntiles * wc * words];
                    let mut b_r = vec![S::default(); ntiles * wc * reals];
                    let mut fill = vec![0u8; ntiles];
                    let flush = |id: usize,
                                 n: usize,
                                 pos: &mut [u32],
                                 b_idx: &[I],
                                 b_w: &[u32],
                                 b_r: &[S]| {
                        let at = pos[id] as usize;
                        pos[id] += n as u32;
                        let b = id * wc;
                        // SAFETY: the prefix sums give every (tile, chunk) a disjoint range of
                        // slots, and each flush takes the next `n` slots of its own chunk's range.
                        unsafe {
                            out.slice(at, n).copy_from_slice(&b_idx[b..b + n]);
                            wout.slice(words * at, words * n)
                                .copy_from_slice(&b_w[words * b..words * (b + n)]);
                            rout.slice(reals * at, reals * n)
                                .copy_from_slice(&b_r[reals * b..reals * (b + n)]);
                        }
                    };
                    let (mut ids, mut offs, mut vars) =
                        ([0u32; BLOCK], [[0u32; BLOCK]; D], [[0f64; BLOCK]; D]);
                    for start in r.clone().step_by(BLOCK) {
                        let ids = &mut ids[..BLOCK.min(r.end - start)];
                        binner.places(start, ids, &mut offs, &mut vars);
                        for (k, &id) in ids.iter().enumerate() {
                            let (j, id) = (start + k, id as usize);
                            let f = fill[id] as usize;
                            let slot = id * wc + f;
                            b_idx[slot] = I::of(j);
                            if FIXED {
                                for d in 0..D {
                                    b_w[D * slot + d] = fix(offs[d][k], vars[d][k], frac);
                                }
                            } else {
                                b_w[slot] = pack(
                                    D,
                                    std::array::from_fn(|d| if d < D { offs[d][k] } else { 0 }),
                                );
                                for d in 0..D {
                                    b_r[D * slot + d] = S::of(vars[d][k]);
                                }
                            }
                            if f + 1 == wc {
                                flush(id, wc, pos, &b_idx, &b_w, &b_r);
                                fill[id] = 0;
                            } else {
                                if f + 1 == wc / 2 {
                                    // Half-way to a flush, ask for the lines it will write: each
                                    // flush lands somewhere new, and otherwise waits on a miss per
                                    // line (10⁷ points: set-points 93–96 → 72–78 ms in 1-D, 189 →
                                    // 169 ms in 3-D).
                                    let at = pos[id] as usize;
                                    out.prefetch(at, wc);
                                    wout.prefetch(words * at, words * wc);
                                    rout.prefetch(reals * at, reals * wc);
                                }
                                fill[id] = (f + 1) as u8;
                            }
                        }
                    }
                    for (id, &f) in fill.iter().enumerate() {
                        if f > 0 {
                            flush(id, f as usize, pos, &b_idx, &b_w, &b_r);
                        }
                    }
                });
        }
        (starts, I::order(idx, first, blocks), wo, re)
    }

    pub fn len(&self) -> usize {
        self.starts.last().copied().unwrap_or(0)
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The sorted points `range`, their places unpacked into `scratch` where they are not
    /// stored as the kernels read them, and in 3-D ordered by cell ([`by_cells`]).
    fn points<'a>(
        &'a self,
        range: std::ops::Range<usize>,
        scratch: &'a mut Scratch<T>,
    ) -> Points<'a, T> {
        let dim = self.grid.dim;
        let span = dim * range.start..dim * range.end;
        let (off, t): (&[u32], &[T]) = match &self.place {
            Placement::Full { off, t } => (&off[range.clone()], &t[span]),
            Placement::Narrow { off, t } => {
                scratch.t.clear();
                scratch.t.extend(t[span].iter().map(|&x| T::of(x as f64)));
                (&off[range.clone()], &scratch.t)
            }
            Placement::Narrow1 { off, t } => {
                scratch.t.clear();
                scratch.t.extend(t[span].iter().map(|&x| T::of(x as f64)));
                scratch.off.clear();
                scratch
                    .off
                    .extend(off[range.clone()].iter().map(|&o| o as u32));
                (&scratch.off, &scratch.t)
            }
            Placement::Fixed { pos, frac } => {
                // Variables and offsets in separate passes, each a loop that vectorises.
                let pos = &pos[span];
                scratch.t.clear();
                scratch
                    .t
                    .extend(pos.iter().map(|&q| T::of(unfix(q, *frac).1)));
                scratch.off.clear();
                scratch.off.extend(pos.chunks_exact(dim).map(|p| {
                    pack(
                        dim,
                        std::array::from_fn(|d| p.get(d).map_or(0, |&q| q >> *frac)),
                    )
                }));
                (&scratch.off, &scratch.t)
            }
        };
        let idx = self.order.indices(range, &mut scratch.idx);
        if dim != 3 {
            return Points { dim, off, t, idx };
        }
        // Offsets lie within their tile.
        let g = &self.grid;
        let cells = std::array::from_fn(|d| ((g.longest_tile(d) - 1) >> CELL_SHIFT) + 1);
        let Scratch {
            ref mut cell_off,
            ref mut cell_t,
            ref mut cell_idx,
            ref mut count,
            ..
        } = *scratch;
        by_cells((off, t, idx), cells, (cell_off, cell_t, cell_idx), count);
        Points {
            dim,
            off: cell_off,
            t: cell_t,
            idx: cell_idx,
        }
    }

    /// Offset of sorted point `p` along dimension `d`.
    fn off(&self, d: usize, p: usize) -> usize {
        match &self.place {
            Placement::Full { off, .. } | Placement::Narrow { off, .. } => {
                unpack(self.grid.dim, off[p], d)
            }
            Placement::Narrow1 { off, .. } => off[p] as usize,
            Placement::Fixed { pos, frac } => unfix(pos[self.grid.dim * p + d], *frac).0 as usize,
        }
    }

    /// Horner variable `i` (`dim · p + d`) of the sorted points.
    fn horner(&self, i: usize) -> T {
        match &self.place {
            Placement::Full { t, .. } => t[i],
            Placement::Narrow { t, .. } | Placement::Narrow1 { t, .. } => T::of(t[i] as f64),
            Placement::Fixed { pos, frac } => T::of(unfix(pos[i], *frac).1),
        }
    }

    fn tile_range(&self, id: usize) -> std::ops::Range<usize> {
        self.starts[id]..self.starts[id + 1]
    }
}

/// Side of the cells (a power of two: its log) by which [`by_cells`] orders a 3-D tile's
/// points.
const CELL_SHIFT: u32 = 2;

/// Orders a 3-D tile's points (packed offsets, Horner variables, indices) by the cell of
/// their support's start, `2^CELL_SHIFT` points a side and at most `span` cells along each
/// dimension, with a counting sort into the second triple of vectors (`count` is its
/// scratch).
///
/// The sort leaves a tile's points in their original order, so successive points land
/// anywhere in the tile's buffer (170 KiB for a 16³ f64 tile at width 7) and each row update
/// misses L1. Within a 4³ cell, successive points share most of their rows: a width-7
/// point's box of 7³ is inside the cell's 10³ (16 KiB). On a Xeon whose 2 MiB L2 answers
/// slowly, 3-D type 1 execute took 20–25% less time (BENCHMARKS.md); on an EPYC whose
/// L2 answers faster, the same order made in the sort itself saved 12%. Done here, per
/// call, on data the kernel is about to read, rather than in the sort: it costs no pass
/// over the sorted arrays and no set-points time. 2-D tiles' rows are longer and fewer
/// per point, and 8² cells made 2-D type 1 slower (BENCHMARKS.md).
fn by_cells<T: Real>(
    (off, t, idx): (&[u32], &[T], &[u32]),
    span: [usize; 3],
    (oo, ot, oi): (&mut Vec<u32>, &mut Vec<T>, &mut Vec<u32>),
    count: &mut Vec<u32>,
) {
    const DIM: usize = 3;
    let cell = |o: u32| -> usize {
        (0..DIM).fold(0, |k, d| k * span[d] + (unpack(DIM, o, d) >> CELL_SHIFT))
    };
    count.clear();
    count.resize(span.iter().product::<usize>() + 1, 0);
    for &o in off {
        count[cell(o) + 1] += 1;
    }
    for c in 1..count.len() {
        count[c] += count[c - 1];
    }
    let n = off.len();
    oo.clear();
    oo.resize(n, 0);
    ot.clear();
    ot.resize(DIM * n, T::default());
    oi.clear();
    oi.resize(n, 0);
    for (p, &o) in off.iter().enumerate() {
        let c = cell(o);
        let q = count[c] as usize;
        count[c] += 1;
        oo[q] = o;
        oi[q] = idx[p];
        ot[DIM * q..DIM * q + DIM].copy_from_slice(&t[DIM * p..DIM * p + DIM]);
    }
}

/// A vector of `len` default (zero) values whose pages the system is asked to back with huge
/// pages where it can (Linux, vectors of a few MiB and more). The sort writes its output in
/// scattered order and the tile kernels read strengths the same way: with 4 KiB pages each
/// such access is a TLB miss, and first touch costs a page fault per 4 KiB.
pub fn huge_vec<V: Copy + Default>(len: usize) -> Vec<V> {
    // Large zeroed allocations come straight from the system, untouched, so the advice
    // lands before the first write.
    let v = vec![V::default(); len];
    advise_huge_pages(v.as_ptr().cast(), std::mem::size_of_val(&v[..]));
    v
}

/// Asks the system to back the whole 2 MiB pages inside the `bytes` bytes at `begin` (one
/// allocation) with huge pages. Advice only: it changes no contents and may be ignored.
pub fn advise_huge_pages(begin: *const u8, bytes: usize) {
    #[cfg(target_os = "linux")]
    {
        const HUGE: usize = 2 << 20;
        const MADV_HUGEPAGE: i32 = 14;
        unsafe extern "C" {
            fn madvise(addr: *mut core::ffi::c_void, len: usize, advice: i32) -> i32;
        }
        let begin = begin as usize;
        let (start, end) = (begin.next_multiple_of(HUGE), (begin + bytes) / HUGE * HUGE);
        if end >= start + HUGE {
            // SAFETY: advice on whole pages inside the vector's allocation; it changes no
            // contents, and the result (unsupported, disabled) needs no handling.
            unsafe { madvise(start as *mut core::ffi::c_void, end - start, MADV_HUGEPAGE) };
        }
    }
    #[cfg(not(target_os = "linux"))]
    let _ = (begin, bytes);
}

/// The cache a [`prefetch`] fills: x86's `_MM_HINT_T0` (every level) and `_MM_HINT_T1`
/// (L2 and below).
const TO_L1: i32 = 3;
const TO_L2: i32 = 2;

/// Hints that `*p` will be accessed soon, into the cache `LEVEL` names ([`TO_L1`],
/// [`TO_L2`]); a no-op where no hint is available.
///
/// [`gather`] asks for L2 only: a prefetch into L1 holds one of its few line-fill buffers
/// until the line arrives, and a gather keeps more misses in flight than L1 can track;
/// prefetched to L2, execute of 10⁷ points took 116–126 instead of 141–148 ms in 1-D and
/// 239–247 instead of 259–262 ms in 2-D type 1, 3-D level (2 threads, Xeon, BENCHMARKS.md).
/// The sort's and interpolation's write hints measured the same either way and stay with L1.
#[inline(always)]
fn prefetch<const LEVEL: i32, V>(p: *const V) {
    #[cfg(target_arch = "x86_64")]
    // SAFETY: a prefetch never faults and reads no memory the program can observe.
    #[allow(unused_unsafe)]
    unsafe {
        core::arch::x86_64::_mm_prefetch::<LEVEL>(p as *const i8)
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = p;
}

/// Points ahead whose grid row a 1-D interpolation kernel asks the cache for. Reading from the
/// whole grid ([`interp_by_outputs`]), the rows miss L2, and nothing else in the kernel's
/// loop waits on them (`nudt bench --gradients`'s 1-D rows in BENCHMARKS.md include it).
pub const INTERP_AHEAD: usize = 8;

/// Hints that reals `start .. start + len` of `buf` (clamped to it) will be read soon.
#[inline(always)]
pub fn prefetch_reals<T>(buf: &[T], start: usize, len: usize) {
    let end = (start + len).min(buf.len());
    let step = (64 / std::mem::size_of::<T>().max(1)).max(1);
    let mut i = start;
    while i < end {
        // SAFETY: `i < buf.len()`; a prefetch reads nothing.
        prefetch::<TO_L1, _>(unsafe { buf.as_ptr().add(i) });
        i += step;
    }
}

/// Points ahead whose strength [`gather`] asks the cache for. Within a tile the points keep
/// their original order (the sort is stable), so successive strengths lie a tile count apart
/// and every one is a DRAM miss; the loop does little else, so many must be in flight. 16
/// ahead left 1-D spreading latency-bound: 160 took its execute from 90–97 to 61 ms and 3-D
/// from 462–513 to 439–443 ms (10⁷ points, 2-core AMD EPYC with AVX-512, same-run A/B).
const GATHER_AHEAD: usize = 160;

/// The interleaved strengths of points `idx` (from `c`, in the original order) into `out`,
/// in the order of `idx`. Sorted points read their strengths in scattered order, a cache and
/// TLB miss each; inside a tile kernel one point's row updates are too long for the core to
/// reach the next point's load by itself, and the misses serialised (most of the 3-D
/// spreading time). This short loop, with a prefetch ahead, keeps many of them in flight.
/// `Q` complex values per point.
fn gather<T: Real, const Q: usize>(c: &[T], idx: &[u32], out: &mut Vec<T>) {
    out.clear();
    out.reserve(2 * Q * idx.len());
    for (k, &j) in idx.iter().enumerate() {
        if let Some(&a) = idx.get(k + GATHER_AHEAD) {
            prefetch::<TO_L2, _>(c[2 * Q * a as usize..].as_ptr());
        }
        let j = 2 * Q * j as usize;
        out.extend_from_slice(&c[j..j + 2 * Q]);
    }
}

/// `v` zeroed in parallel, 2¹⁵ reals a task: split by the threads alone, a small grid's
/// zeroing woke every thread for a few microseconds of work each.
pub fn zero<T: Real>(v: &mut [T]) {
    v.par_chunks_mut(1 << 15).for_each(|c| c.fill(T::default()));
}

/// A raw pointer shared by tasks that provably write disjoint elements.
struct SharedMut<T> {
    ptr: *mut T,
    len: usize,
}

// SAFETY: only used where the schedule guarantees disjoint writes (see each use).
unsafe impl<T: Send> Send for SharedMut<T> {}
unsafe impl<T: Send> Sync for SharedMut<T> {}

impl<T: Copy> SharedMut<T> {
    fn new(s: &mut [T]) -> Self {
        SharedMut {
            ptr: s.as_mut_ptr(),
            len: s.len(),
        }
    }

    /// # Safety
    /// No other task may access element `i` concurrently.
    unsafe fn write(&self, i: usize, v: T) {
        assert!(i < self.len);
        unsafe { *self.ptr.add(i) = v }
    }

    /// Hints that elements `start .. start + len` (clamped to the slice) will be written soon.
    fn prefetch(&self, start: usize, len: usize) {
        let end = (start + len).min(self.len);
        let bytes = std::mem::size_of::<T>().max(1);
        // One hint per cache line, and one for the last element (a misaligned run's tail).
        for i in (start..end)
            .step_by((64 / bytes).max(1))
            .chain((start < end).then(|| end - 1))
        {
            // SAFETY: `i < self.len`, inside the allocation; a prefetch reads nothing.
            prefetch::<TO_L1, _>(unsafe { self.ptr.add(i) });
        }
    }

    /// Elements `start .. start + len` as a slice.
    ///
    /// # Safety
    /// No other task may access these elements while the slice lives.
    #[allow(clippy::mut_from_ref)]
    unsafe fn slice(&self, start: usize, len: usize) -> &mut [T] {
        assert!(start + len <= self.len);
        unsafe { std::slice::from_raw_parts_mut(self.ptr.add(start), len) }
    }
}

/// Per-dimension map from buffer index to grid index (wrapping periodically), or `None`
/// where that buffer entry does not belong to this task.
fn wrap_map(origin: i64, len: usize, n: usize, keep: impl Fn(usize) -> bool) -> Vec<Option<usize>> {
    // One division, then a step and a wrap per entry: a division per entry made these maps
    // a tenth of a 1-D type 1's execute of 10⁴ points.
    let mut g = origin.rem_euclid(n as i64) as usize;
    (0..len)
        .map(|_| {
            let here = keep(g).then_some(g);
            g = if g + 1 == n { 0 } else { g + 1 };
            here
        })
        .collect()
}

/// Walks a box with per-dimension maps (buffer index → grid index) by runs of consecutive
/// grid points along the contiguous dimension: `f(buffer offset, grid offset, length)` in
/// reals, once per run. A box wraps at most once per dimension, so a row is one or two runs,
/// and whole runs copy and add as vectors where element by element they would not.
fn box_runs(
    dim: usize,
    gstr: [usize; 3],
    maps: &[Vec<Option<usize>>; 3],
    mut f: impl FnMut(usize, usize, usize),
) {
    // Right-aligned, so that index 2 is the contiguous dimension whatever `dim` is.
    let one = vec![Some(0)];
    let shift = 3 - dim;
    let maps: [&Vec<Option<usize>>; 3] =
        std::array::from_fn(|d| if d < shift { &one } else { &maps[d - shift] });
    let gstr: [usize; 3] = std::array::from_fn(|d| if d < shift { 0 } else { gstr[d - shift] });
    // (buffer index, grid index, length) of each run of the last map.
    let mut runs: Vec<(usize, usize, usize)> = Vec::new();
    for (i, g) in maps[2].iter().enumerate() {
        match (g, runs.last_mut()) {
            (Some(g), Some(r)) if r.0 + r.2 == i && r.1 + r.2 == *g => r.2 += 1,
            (Some(g), _) => runs.push((i, *g, 1)),
            (None, _) => {}
        }
    }
    let row = 2 * maps[2].len();
    let mut b = 0;
    for g0 in maps[0].iter() {
        for g1 in maps[1].iter() {
            if let (Some(x), Some(y)) = (g0, g1) {
                let base = x * gstr[0] + y * gstr[1];
                for &(bi, gi, len) in &runs {
                    f(b + 2 * bi, 2 * (base + gi * gstr[2]), 2 * len);
                }
            }
            b += row;
        }
    }
}

/// Adds `buf` (a box with per-dimension maps) into the global grid.
///
/// # Safety
/// No other task may touch the grid points the maps select.
unsafe fn add_box<T: Real>(
    grid: &SharedMut<T>,
    dim: usize,
    gstr: [usize; 3],
    buf: &[T],
    maps: &[Vec<Option<usize>>; 3],
) {
    box_runs(dim, gstr, maps, |b, g, len| {
        // SAFETY: the caller owns these grid points; `slice` checks the bounds.
        let dst = unsafe { grid.slice(g, len) };
        dst.iter_mut()
            .zip(&buf[b..b + len])
            .for_each(|(d, s)| *d += *s);
    });
}

/// Complex grid points one lock of [`GridLocks`] guards: 4 KiB of f64, a few rows of a small
/// 3-D grid, a stretch of a long row.
const LOCK_SPAN: usize = 256;

/// Most locks of one [`GridLocks`]: stretches beyond it share locks (striped), which costs
/// only a rare wait.
const LOCK_STRIPES: usize = 1 << 12;

/// Locks over the stretches of [`LOCK_SPAN`] points of a destination grid, which tiles
/// spread at once add their boxes into ([`add_box_locked`]).
struct GridLocks(Vec<std::sync::Mutex<()>>);

impl GridLocks {
    /// For a destination of `points` complex points.
    fn new(points: usize) -> Self {
        let n = points.div_ceil(LOCK_SPAN).clamp(1, LOCK_STRIPES);
        GridLocks((0..n).map(|_| std::sync::Mutex::new(())).collect())
    }
}

/// Adds `buf` (a box with per-dimension maps) into the global grid, each stretch of
/// [`LOCK_SPAN`] points under its lock, one lock held at a time (no two tasks can wait on
/// each other), kept across the runs of a stretch: a 3-D box of a small grid takes a lock
/// every few rows, not at each.
fn add_box_locked<T: Real>(
    grid: &SharedMut<T>,
    locks: &GridLocks,
    dim: usize,
    gstr: [usize; 3],
    buf: &[T],
    maps: &[Vec<Option<usize>>; 3],
) {
    let span = 2 * LOCK_SPAN;
    let mut held: Option<(usize, std::sync::MutexGuard<'_, ()>)> = None;
    box_runs(dim, gstr, maps, |mut b, mut g, mut len| {
        while len > 0 {
            let piece = (span - g % span).min(len);
            let stripe = (g / span) % locks.0.len();
            if held.as_ref().map(|h| h.0) != Some(stripe) {
                drop(held.take());
                let guard = locks.0[stripe].lock().unwrap_or_else(|e| e.into_inner());
                held = Some((stripe, guard));
            }
            // SAFETY: every task adding to these points holds their stretch's lock, held
            // here; `slice` checks the bounds.
            let dst = unsafe { grid.slice(g, piece) };
            dst.iter_mut()
                .zip(&buf[b..b + piece])
                .for_each(|(d, s)| *d += *s);
            (b, g, len) = (b + piece, g + piece, len - piece);
        }
    });
}

/// Copies the grid points a box's maps select into `buf`; entries the maps leave out are not
/// written.
fn load_box<T: Real>(
    grid: &[T],
    dim: usize,
    gstr: [usize; 3],
    buf: &mut [T],
    maps: &[Vec<Option<usize>>; 3],
) {
    box_runs(dim, gstr, maps, |b, g, len| {
        buf[b..b + len].copy_from_slice(&grid[g..g + len])
    });
}

/// Per-dimension maps of a box whose buffer has lengths `len`; unused dimensions get the
/// single entry `Some(0)`, and the contiguous dimension trailing `None`s up to its buffer
/// length (the slack, which no grid point takes).
fn box_maps(
    dim: usize,
    len: [usize; 3],
    f: impl Fn(usize) -> Vec<Option<usize>>,
) -> [Vec<Option<usize>>; 3] {
    let mut maps: [Vec<Option<usize>>; 3] =
        std::array::from_fn(|d| if d < dim { f(d) } else { vec![Some(0)] });
    maps[dim - 1].resize(len[dim - 1], None);
    maps
}

fn grid_strides(g: &TileGrid) -> [usize; 3] {
    let mut s = g.strides(g.n);
    for v in s.iter_mut().skip(g.dim) {
        *v = 0;
    }
    s
}

/// A worker's buffers, kept from one tile to the next: the tile's padded grid box, its
/// unpacked places, and its gathered strengths or interpolated values. Fresh ones per tile
/// cost an allocation each: hundreds per execute, of 0.2–4 MB.
#[derive(Default)]
struct Work<T> {
    buf: Vec<T>,
    scratch: Scratch<T>,
    values: Vec<T>,
}

/// One [`Work`] per thread of the pool, for one schedule call. They come from the process's
/// spare buffers ([`spare_work`]) and go back there when the call ends.
struct Workers<T: Real>(Vec<std::sync::Mutex<Work<T>>>);

/// Most spare [`Work`]s kept for the next schedule call, per precision.
const SPARE_WORK: usize = 256;

/// Buffers of ended schedule calls, by precision, for the next call to take. Fresh ones per
/// call were allocated, faulted in and zeroed by every spread and interpolation: a 1-D type 1
/// of 10⁴ points spent a quarter of its execute in page faults and memset, and a stack of
/// transforms paid that once per transform.
fn spare_work() -> &'static std::sync::Mutex<Vec<Box<dyn std::any::Any + Send>>> {
    static SPARE: std::sync::OnceLock<std::sync::Mutex<Vec<Box<dyn std::any::Any + Send>>>> =
        std::sync::OnceLock::new();
    SPARE.get_or_init(Default::default)
}

impl<T: Real> Workers<T> {
    fn new() -> Self {
        let n = rayon::current_num_threads().max(1);
        let mut spare = spare_work().lock().unwrap_or_else(|e| e.into_inner());
        let mut taken = Vec::with_capacity(n);
        let mut i = 0;
        while taken.len() < n && i < spare.len() {
            if spare[i].is::<Work<T>>() {
                let w = spare
                    .swap_remove(i)
                    .downcast::<Work<T>>()
                    .expect("checked type");
                taken.push(std::sync::Mutex::new(*w));
            } else {
                i += 1;
            }
        }
        drop(spare);
        taken.resize_with(n, Default::default);
        Workers(taken)
    }

    /// Runs `f` with this thread's buffers, or fresh ones where they are taken: a thread that
    /// waited inside a task for parallel work would steal tasks meanwhile. No schedule nests
    /// parallel work inside its tasks now, so this is the guard that keeps such a change safe
    /// rather than a path taken.
    fn with<R>(&self, f: impl FnOnce(&mut Work<T>) -> R) -> R {
        let i = rayon::current_thread_index().unwrap_or(0) % self.0.len();
        match self.0[i].try_lock() {
            Ok(mut w) => f(&mut w),
            Err(_) => f(&mut Work::default()),
        }
    }
}

/// Works go back to the spare buffers holding only their tile boxes, every box of a
/// precision as long as the longest kept ([`resize_exact`] grows none past the largest it
/// met): what the spares hold then depends on the plans run so far, not on which thread ran
/// which tile nor on how the points fell into tiles (places and values, sized by a tile's
/// points, are freed), so a process that has run each of its plans once holds the same
/// buffers ever after (the soak's zero heap growth, BENCHMARKS.md).
impl<T: Real> Drop for Workers<T> {
    fn drop(&mut self) {
        let mut spare = spare_work().lock().unwrap_or_else(|e| e.into_inner());
        let works: Vec<Work<T>> = self
            .0
            .drain(..)
            .map(|w| w.into_inner().unwrap_or_else(|e| e.into_inner()))
            .collect();
        let longest = spare
            .iter()
            .filter_map(|w| w.downcast_ref::<Work<T>>())
            .chain(&works)
            .map(|w| w.buf.capacity())
            .max()
            .unwrap_or(0);
        for w in spare.iter_mut().filter_map(|w| w.downcast_mut::<Work<T>>()) {
            w.buf.reserve_exact(longest - w.buf.len());
        }
        // At most one call's worth per precision: a call that ran beside another took fresh
        // Works for the rest, which are freed here rather than kept.
        let kept = spare.iter().filter(|w| w.is::<Work<T>>()).count();
        for mut w in works.into_iter().skip(kept) {
            if spare.len() >= SPARE_WORK {
                break;
            }
            w.buf.reserve_exact(longest - w.buf.len());
            spare.push(Box::new(Work {
                buf: w.buf,
                ..Work::default()
            }));
        }
    }
}

/// `v` resized to `n`, its storage grown to exactly `n` where it must grow (not doubled):
/// a tile box then holds the largest box it has met, whatever order they came in.
fn resize_exact<T: Clone>(v: &mut Vec<T>, n: usize, fill: T) {
    v.reserve_exact(n.saturating_sub(v.len()));
    v.resize(n, fill);
}

impl<T: Real> Work<T> {
    /// Spreads sorted points `range` into `buf` (a tile's padded box, `strides`), `Q`
    /// complex values a point.
    fn spread<const Q: usize>(
        &mut self,
        tiles: &Tiles<T>,
        range: std::ops::Range<usize>,
        c: &[T],
        buf: &mut [T],
        strides: [usize; 3],
        tile: &SpreadTileFn<'_, T>,
    ) {
        let pts = tiles.points(range, &mut self.scratch);
        gather::<T, Q>(c, pts.idx, &mut self.values);
        tile(buf, strides, pts, &self.values);
    }
}

/// Kernel weights (points times `w^d`) a spreading or interpolation task takes at least.
/// Small grids cut into tiles for many threads make tiles of a few hundred points, microseconds
/// of work each, and a task per tile woke every thread of the pool for it: on a virtual
/// machine a wake-up costs about as much.
const TASK_TAPS: usize = 1 << 15;

/// Consecutive chunks (tiles, or parts of dense ones) a task takes, of `chunks` holding
/// `points` points on grid `g`: about [`TASK_TAPS`] kernel weights' worth on average, and at
/// least one.
fn chunks_per_task(g: &TileGrid, points: usize, chunks: usize) -> usize {
    let taps = points * g.width.pow(g.dim as u32);
    (TASK_TAPS * chunks / taps.max(1)).max(1)
}

/// Which part of the grid a schedule call covers: all of it, or consecutive rows of tiles
/// along the first dimension (the first and one past the last), whose padded planes make up
/// the destination ([`TileGrid::rows_planes`]). A plan that transforms its grid slab by slab
/// never holds the whole fine grid.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Part {
    Whole,
    Rows(usize, usize),
}

impl Part {
    fn of(rows: Option<std::ops::Range<usize>>) -> Self {
        rows.map_or(Part::Whole, |r| Part::Rows(r.start, r.end))
    }

    /// The ids of the tiles it covers: tiles are numbered with the first dimension slowest.
    fn tile_ids(self, g: &TileGrid) -> std::ops::Range<usize> {
        let per_row = g.num_tiles() / g.ntiles[0];
        match self {
            Part::Whole => 0..g.num_tiles(),
            Part::Rows(a, b) => a * per_row..b * per_row,
        }
    }

    /// Per index of tile `tc`'s box along dimension `d` (`len` entries from the tile's start
    /// less `⌊w/2⌋`), the destination's index: the grid point (wrapping), except along the
    /// first dimension of rows, where it is the plane of their slab (counted from the first
    /// row's start less `⌊w/2⌋`).
    fn tile_map(self, g: &TileGrid, tc: [usize; 3], d: usize, len: usize) -> Vec<Option<usize>> {
        match self {
            Part::Rows(a, _) if d == 0 => {
                let off = g.tile_start(0, tc[0]) - g.tile_start(0, a);
                (off..off + len).map(Some).collect()
            }
            _ => wrap_map(
                g.tile_start(d, tc[d]) as i64 - (g.width / 2) as i64,
                len,
                g.n[d],
                |_| true,
            ),
        }
    }
}

impl TileGrid {
    /// The slab of tile rows `rows` along the first dimension: its first grid plane (the first
    /// row's start less `⌊w/2⌋`, possibly negative: planes wrap) and its number of planes (the
    /// rows' length plus `w − 1`).
    pub fn rows_planes(&self, rows: std::ops::Range<usize>) -> (i64, usize) {
        let (a, last) = (rows.start, rows.end - 1);
        let len = self.tile_start(0, last) + self.tile_len(0, last) - self.tile_start(0, a);
        (
            self.tile_start(0, a) as i64 - (self.width / 2) as i64,
            len + self.width - 1,
        )
    }
}

/// Source-driven spreading (NUDT §4): every tile at once, each into its own padded buffer,
/// which is then added to the grid under locks of the stretches it covers
/// ([`add_box_locked`]); tiles far denser than average are spread in chunks, each added so.
/// `c` holds interleaved strengths in the original point order; `grid` is overwritten.
pub fn spread_source_driven<T: Real, K: TileKernel<T>>(
    tiles: &Tiles<T>,
    c: &[T],
    grid: &mut [T],
    table: &[T],
) {
    let tile = |b: &mut [T], s, p: Points<'_, T>, c: &[T]| K::spread_tile(b, s, p, c, table);
    spread_part::<T, 1>(tiles, c, grid, Part::Whole, K::row_len, &tile);
}

/// Source-driven spreading of `(v, u_0, ..)` per point (`DIM + 1` interleaved complex, the
/// original point order): `Σ v·φ + Σ_d u_d·∂_dφ` with the derivative along each dimension in
/// the Horner variable ([`GradTileKernel`]). `grid` is overwritten; with `rows`, it is those
/// tile rows' slab ([`spread_source_driven_row`]).
pub fn spread_grad<T: Real, K: GradTileKernel<T>>(
    tiles: &Tiles<T>,
    c: &[T],
    grid: &mut [T],
    t: &GradTables<'_, T>,
    rows: Option<std::ops::Range<usize>>,
) {
    let tile = |b: &mut [T], s, p: Points<'_, T>, c: &[T]| {
        K::spread_grad_tile(b, s, p, c, t.table, t.dtable, t.scales)
    };
    let (part, len) = (Part::of(rows), K::row_len);
    match K::DIM {
        1 => spread_part::<T, 2>(tiles, c, grid, part, len, &tile),
        2 => spread_part::<T, 3>(tiles, c, grid, part, len, &tile),
        _ => spread_part::<T, 4>(tiles, c, grid, part, len, &tile),
    }
}

/// As [`spread_source_driven`], for the tiles of rows `rows` along the first dimension only,
/// into `slab`: those rows' padded planes ([`TileGrid::rows_planes`]), each a whole grid
/// plane, overwritten.
pub fn spread_source_driven_row<T: Real, K: TileKernel<T>>(
    tiles: &Tiles<T>,
    c: &[T],
    slab: &mut [T],
    table: &[T],
    rows: std::ops::Range<usize>,
) {
    let tile = |b: &mut [T], s, p: Points<'_, T>, c: &[T]| K::spread_tile(b, s, p, c, table);
    spread_part::<T, 1>(tiles, c, slab, Part::of(Some(rows)), K::row_len, &tile);
}

/// The source-driven schedule for any tile kernel (`tile`, with `Q` complex values a point
/// and boxes of `row_len` points along the contiguous dimension): generic over the precision
/// and `Q` only, so it is compiled once for all widths.
fn spread_part<T: Real, const Q: usize>(
    tiles: &Tiles<T>,
    c: &[T],
    grid: &mut [T],
    part: Part,
    row_len: fn(usize) -> usize,
    tile: &SpreadTileFn<'_, T>,
) {
    let g = &tiles.grid;
    zero(grid);
    // Tiles spread at once and add their boxes under locks: tiles of one colour at a time
    // (3^d colours where a side has an odd number of tiles) with a barrier between colours
    // left one tile to a colour on small grids — a 3-D grid of 40³ points in 27 tiles spread
    // them one after another, whatever the threads.
    // A tile is spread in chunks once it holds four times the average, or an even share of
    // a thread's points (up to 2¹⁵): clustered points fill a few tiles, and a tile of 30 000
    // of 10⁵ points spread alone on one of 16 threads while the rest had finished.
    let share = (tiles.len() / (2 * rayon::current_num_threads())).min(1 << 15);
    let heavy = (4 * tiles.len() / g.num_tiles().max(1))
        .max(share)
        .max(1 << 11);
    let gstr = grid_strides(g);
    let locks = GridLocks::new(grid.len() / 2);
    let shared = SharedMut::new(grid);
    let workers = Workers::new();
    // Each non-empty tile whole, or a heavy one in chunks of `heavy / 2` points.
    let chunks: Vec<(usize, std::ops::Range<usize>)> = part
        .tile_ids(g)
        .flat_map(|id| {
            let range = tiles.tile_range(id);
            let step = if range.len() > heavy {
                heavy / 2
            } else {
                range.len().max(1)
            };
            let end = range.end;
            range
                .step_by(step)
                .map(move |s| (id, s..(s + step).min(end)))
        })
        .collect();
    let points = chunks.iter().map(|(_, r)| r.len()).sum();
    let per_task = chunks_per_task(g, points, chunks.len());
    chunks
        .par_iter()
        .with_min_len(per_task)
        .for_each(|(id, range)| {
            let tc = g.tile_coords(*id);
            let len = g.padded(tc, row_len);
            let maps = box_maps(g.dim, len, |d| {
                part.tile_map(g, tc, d, g.tile_len(d, tc[d]) + g.width - 1)
            });
            workers.with(|w| {
                let mut b = std::mem::take(&mut w.buf);
                b.clear();
                resize_exact(&mut b, 2 * len.iter().product::<usize>(), T::default());
                w.spread::<Q>(tiles, range.clone(), c, &mut b, g.strides(len), tile);
                add_box_locked(&shared, &locks, g.dim, gstr, &b, &maps);
                w.buf = b;
            });
        });
}

/// A box of grid points owned by one target-driven task.
#[derive(Clone, Copy, Debug)]
struct Block {
    start: [usize; 3],
    len: [usize; 3],
    /// Tile whose neighbourhood holds every source that can reach this block.
    tile: [usize; 3],
}

/// Target-driven spreading (NUDT §5): every block of the grid gathers the sources of the
/// tiles around it that reach it, spreads them locally and writes only its own points, so
/// tasks share nothing. Blocks with more than `max_points` candidate sources are halved
/// (a quad/oct-tree) to keep clustered inputs balanced.
pub fn spread_target_driven<T: Real, K: TileKernel<T>>(
    tiles: &Tiles<T>,
    c: &[T],
    grid: &mut [T],
    table: &[T],
    max_points: usize,
) {
    let g = &tiles.grid;
    let w = g.width;
    zero(grid);
    // Dimensions cut into fewer than three tiles get one block spanning them, so a
    // neighbourhood never wraps onto itself.
    let whole: [bool; 3] = std::array::from_fn(|d| d >= g.dim || g.ntiles[d] < 3);
    let neighbours = |tc: [usize; 3]| -> Vec<usize> {
        let per_dim: Vec<Vec<usize>> = (0..g.dim)
            .map(|d| {
                let nt = g.ntiles[d];
                if whole[d] {
                    (0..nt).collect()
                } else {
                    vec![(tc[d] + nt - 1) % nt, tc[d], (tc[d] + 1) % nt]
                }
            })
            .collect();
        let mut ids = vec![[0usize; 3]];
        for (d, opts) in per_dim.iter().enumerate() {
            ids = ids
                .iter()
                .flat_map(|c| {
                    opts.iter().map(move |&o| {
                        let mut c = *c;
                        c[d] = o;
                        c
                    })
                })
                .collect();
        }
        ids.into_iter().map(|c| g.tile_id(c)).collect()
    };

    // The buffer of a block reaches `w − 1` points beyond it on each side; a source belongs
    // to it when its support starts inside `[origin, start + len)`.
    let origin = |b: &Block, d: usize| b.start[d] as i64 - (w as i64 - 1);
    // Visits (sorted point, original index, place in the block's buffer).
    let reaching = |b: &Block, mut visit: Option<&mut dyn FnMut(usize, u32, [u32; 3])>| -> usize {
        let mut count = 0;
        let mut decoded = Vec::new();
        for nb in neighbours(b.tile) {
            let nc = g.tile_coords(nb);
            let range = tiles.tile_range(nb);
            let idx = match visit {
                Some(_) => tiles.order.indices(range.clone(), &mut decoded),
                None => &[],
            };
            'point: for p in range.clone() {
                let mut rel = [0u32; 3];
                for d in 0..g.dim {
                    let i0 =
                        g.tile_start(d, nc[d]) as i64 - (w / 2) as i64 + tiles.off(d, p) as i64;
                    let r = (i0 - origin(b, d)).rem_euclid(g.n[d] as i64) as usize;
                    if r >= b.len[d] + w - 1 {
                        continue 'point;
                    }
                    rel[d] = r as u32;
                }
                count += 1;
                if let Some(f) = visit.as_mut() {
                    f(p, idx[p - range.start], rel);
                }
            }
        }
        count
    };

    // The block tree: one block per tile (or per run of tiles in `whole` dimensions), halved
    // along its longest splittable side while too many sources reach it.
    let mut blocks = Vec::new();
    let outer: [usize; 3] = std::array::from_fn(|d| if whole[d] { 1 } else { g.ntiles[d] });
    let mut stack = Vec::new();
    for a in 0..outer[0] {
        for b in 0..outer[1] {
            for e in 0..outer[2] {
                let tile = [a, b, e];
                let mut start = [0; 3];
                let mut len = [1; 3];
                for d in 0..g.dim {
                    if whole[d] {
                        len[d] = g.n[d];
                    } else {
                        start[d] = g.tile_start(d, tile[d]);
                        len[d] = g.tile_len(d, tile[d]);
                    }
                }
                stack.push(Block { start, len, tile });
            }
        }
    }
    while let Some(b) = stack.pop() {
        let split = (0..g.dim)
            .filter(|&d| !whole[d] && b.len[d] >= 2 * w)
            .max_by_key(|&d| b.len[d]);
        match split {
            Some(d) if reaching(&b, None) > max_points => {
                let half = b.len[d] / 2;
                let mut lo = b;
                let mut hi = b;
                lo.len[d] = half;
                hi.start[d] += half;
                hi.len[d] -= half;
                stack.push(lo);
                stack.push(hi);
            }
            _ => blocks.push(b),
        }
    }

    let gstr = grid_strides(g);
    let shared = SharedMut::new(grid);
    blocks.par_iter().for_each(|b| {
        let (mut off, mut t, mut idx) = (Vec::new(), Vec::new(), Vec::new());
        reaching(
            b,
            Some(&mut |p, j, rel| {
                off.push(pack(g.dim, rel));
                t.extend((0..g.dim).map(|d| tiles.horner(g.dim * p + d)));
                idx.push(j);
            }),
        );
        if idx.is_empty() {
            return;
        }
        let pts = Points {
            dim: g.dim,
            off: &off,
            t: &t,
            idx: &idx,
        };
        let mut len: [usize; 3] =
            std::array::from_fn(|d| if d < g.dim { b.len[d] + 2 * (w - 1) } else { 1 });
        len[g.dim - 1] = K::row_len(len[g.dim - 1]);
        let mut buf = vec![T::default(); 2 * len.iter().product::<usize>()];
        let mut cs = Vec::new();
        gather::<T, 1>(c, &idx, &mut cs);
        K::spread_tile(&mut buf, g.strides(len), pts, &cs, table);
        let maps = box_maps(g.dim, len, |d| {
            let (s, l) = (b.start[d], b.len[d]);
            wrap_map(origin(b, d), b.len[d] + 2 * (w - 1), g.n[d], |x| {
                x >= s && x < s + l
            })
        });
        // SAFETY: blocks partition the grid and each writes only the points it owns.
        unsafe { add_box(&shared, g.dim, gstr, &buf, &maps) };
    });
}

/// Interpolation (type 2): per tile (split into chunks of at most `chunk` points), copy the
/// padded window out of the grid, interpolate every point from it, and scatter the values
/// to the points' original positions. `out` is interleaved, in the original point order.
pub fn interp<T: Real, K: TileKernel<T>>(
    tiles: &Tiles<T>,
    grid: &[T],
    out: &mut [T],
    table: &[T],
    chunk: usize,
) {
    let tile = |b: &[T], s, p: Points<'_, T>, v: &mut [T]| K::interp_tile(b, s, p, v, table);
    interp_part::<T, 1>(tiles, grid, out, chunk, Part::Whole, K::row_len, &tile);
}

/// Interpolation with the gradient: per point `DIM + 1` interleaved complex values in `out`
/// (original point order), the interpolant and its derivative along each dimension in the
/// Horner variable ([`GradTileKernel`]). With `rows`, only those tile rows' points, from
/// their slab ([`interp_row`]).
pub fn interp_grad<T: Real, K: GradTileKernel<T>>(
    tiles: &Tiles<T>,
    grid: &[T],
    out: &mut [T],
    t: &GradTables<'_, T>,
    chunk: usize,
    rows: Option<std::ops::Range<usize>>,
) {
    let tile = |b: &[T], s, p: Points<'_, T>, v: &mut [T]| {
        K::interp_grad_tile(b, s, p, v, t.table, t.dtable, t.scales)
    };
    let (part, len) = (Part::of(rows), K::row_len);
    match K::DIM {
        1 => interp_part::<T, 2>(tiles, grid, out, chunk, part, len, &tile),
        2 => interp_part::<T, 3>(tiles, grid, out, chunk, part, len, &tile),
        _ => interp_part::<T, 4>(tiles, grid, out, chunk, part, len, &tile),
    }
}

/// As [`interp`], for the points of tile rows `rows` along the first dimension only, from
/// `slab`: those rows' padded planes ([`TileGrid::rows_planes`]). The other points' outputs
/// are left as they are.
pub fn interp_row<T: Real, K: TileKernel<T>>(
    tiles: &Tiles<T>,
    slab: &[T],
    out: &mut [T],
    table: &[T],
    chunk: usize,
    rows: std::ops::Range<usize>,
) {
    let tile = |b: &[T], s, p: Points<'_, T>, v: &mut [T]| K::interp_tile(b, s, p, v, table);
    interp_part::<T, 1>(
        tiles,
        slab,
        out,
        chunk,
        Part::of(Some(rows)),
        K::row_len,
        &tile,
    );
}

/// The interpolation schedule for any tile kernel (`tile`, `Q` complex values a point, boxes
/// of `row_len` points along the contiguous dimension): compiled once per precision and `Q`.
fn interp_part<T: Real, const Q: usize>(
    tiles: &Tiles<T>,
    grid: &[T],
    out: &mut [T],
    chunk: usize,
    part: Part,
    row_len: fn(usize) -> usize,
    tile: &InterpTileFn<'_, T>,
) {
    let g = &tiles.grid;
    if part == Part::Whole && by_outputs::<T, Q>(g, tiles.len()) {
        return interp_by_outputs::<T, Q>(tiles, grid, out, row_len, tile);
    }
    let chunk = chunk.max(1);
    let work: Vec<(usize, usize, usize)> = part
        .tile_ids(g)
        .flat_map(|id| {
            let r = tiles.tile_range(id);
            (r.start..r.end)
                .step_by(chunk)
                .map(move |s| (id, s, (s + chunk).min(r.end)))
        })
        .collect();
    let gstr = grid_strides(g);
    let shared = SharedMut::new(out);
    let workers = Workers::new();
    let points = work.iter().map(|&(_, s, e)| e - s).sum();
    let per_task = chunks_per_task(g, points, work.len());
    work.par_iter()
        .with_min_len(per_task)
        .for_each(|&(id, s, e)| {
            workers.with(|w| {
                let tc = g.tile_coords(id);
                let len = g.padded(tc, row_len);
                // Every entry, the contiguous dimension's slack included, maps to a grid point, so
                // the load overwrites the whole buffer and it needs no zeroing.
                let maps = box_maps(g.dim, len, |d| part.tile_map(g, tc, d, len[d]));
                let buf = &mut w.buf;
                resize_exact(buf, 2 * len.iter().product::<usize>(), T::default());
                load_box(grid, g.dim, gstr, buf, &maps);
                let pts = tiles.points(s..e, &mut w.scratch);
                let vals = &mut w.values;
                vals.clear();
                vals.resize(2 * Q * (e - s), T::default());
                tile(buf, g.strides(len), pts, vals);
                for (k, &j) in pts.idx.iter().enumerate() {
                    if let Some(&a) = pts.idx.get(k + GATHER_AHEAD) {
                        shared.prefetch(2 * Q * a as usize, 2 * Q);
                    }
                    for r in 0..2 * Q {
                        // SAFETY: `idx` is a permutation, so every output slot is written by one
                        // task.
                        unsafe { shared.write(2 * Q * j as usize + r, vals[2 * Q * k + r]) };
                    }
                }
            })
        });
}

/// Points per block of outputs that [`interp_by_outputs`] fills at once: a block's values
/// (`2Q` reals a point, 1–2 MiB in f64) stay in the caches while its points' tiles take
/// turns. A block of 2¹⁶ is one of [`Order::Blocked`]'s.
const OUTPUT_BLOCK: usize = 1 << ORDER_BLOCK_BITS;

/// Largest fine grid (bytes) that [`interp_by_outputs`] reads from: every block of outputs
/// reads the whole grid, which must stay in the caches.
const OUTPUT_BLOCK_GRID: usize = 8 << 20;

/// Whether a 1-D interpolation of `points` points on grid `g` runs by blocks of outputs
/// ([`interp_by_outputs`]) rather than by tiles: the grid small, the outputs many times
/// larger, and blocks enough for four per thread.
fn by_outputs<T, const Q: usize>(g: &TileGrid, points: usize) -> bool {
    let real = std::mem::size_of::<T>();
    let grid = 2 * real * g.grid_len();
    let outputs = 2 * Q * real * points;
    g.dim == 1
        && grid <= OUTPUT_BLOCK_GRID
        && outputs >= 4 * grid
        && points >= 4 * OUTPUT_BLOCK * rayon::current_num_threads()
}

/// A 1-D interpolation by blocks of outputs: a task takes [`OUTPUT_BLOCK`] consecutive
/// original indices and, tile by tile, the run of that tile's sorted slots that holds them
/// (the sort is stable), so its writes fall in one window of the output. By tiles, a task's
/// successive points lie a tile count apart in the output, and each write of a point's `2Q`
/// reals missed every cache: 1-D type 2 with 2·10⁶ points (the size of `nudt bench
/// --gradients`'s 1-D rows) spent 9 of its 21 ms in them, and the gradient's reverse pass
/// (`Q = 2`) 12 of 31 (2 threads, EPYC, `perf`); BENCHMARKS.md has those rows by blocks.
/// Tiles whose box lies inside the grid read it in place; the few that wrap are loaded once
/// per call.
fn interp_by_outputs<T: Real, const Q: usize>(
    tiles: &Tiles<T>,
    grid: &[T],
    out: &mut [T],
    row_len: fn(usize) -> usize,
    tile: &InterpTileFn<'_, T>,
) {
    let g = &tiles.grid;
    // Each tile's box: a slice of the grid, or a copy where it wraps.
    let boxes: Vec<std::borrow::Cow<'_, [T]>> = (0..g.num_tiles())
        .map(|id| {
            let tc = g.tile_coords(id);
            let len = g.padded(tc, row_len);
            let origin = g.tile_start(0, tc[0]) as i64 - (g.width / 2) as i64;
            if origin >= 0 && origin as usize + len[0] <= g.n[0] {
                let start = 2 * origin as usize;
                return std::borrow::Cow::Borrowed(&grid[start..start + 2 * len[0]]);
            }
            let maps = box_maps(1, len, |d| Part::Whole.tile_map(g, tc, d, len[d]));
            let mut buf = vec![T::default(); 2 * len[0]];
            load_box(grid, 1, grid_strides(g), &mut buf, &maps);
            std::borrow::Cow::Owned(buf)
        })
        .collect();
    let shared = SharedMut::new(out);
    let workers = Workers::new();
    let m = tiles.len();
    (0..m.div_ceil(OUTPUT_BLOCK)).into_par_iter().for_each(|b| {
        let (lo, hi) = (b * OUTPUT_BLOCK, ((b + 1) * OUTPUT_BLOCK).min(m));
        workers.with(|w| {
            for (id, buf) in boxes.iter().enumerate() {
                let slots = tiles.order.slots_of(id, tiles.tile_range(id), lo, hi);
                if slots.is_empty() {
                    continue;
                }
                let n = slots.len();
                let pts = tiles.points(slots, &mut w.scratch);
                let vals = &mut w.values;
                vals.clear();
                vals.resize(2 * Q * n, T::default());
                tile(buf, [1, 0, 0], pts, vals);
                for (k, &j) in pts.idx.iter().enumerate() {
                    for r in 0..2 * Q {
                        // SAFETY: `idx` is a permutation, and this block's indices are its task's.
                        unsafe { shared.write(2 * Q * j as usize + r, vals[2 * Q * k + r]) };
                    }
                }
            }
        })
    });
}

/// SIMD registers of reals, as the generated tile kernels use them: one type per (precision,
/// register width), named for its lanes (`F64x4` is four f64 lanes, an AVX2 register). The
/// generator picks the type for the target it renders for and writes the kernels against
/// [`simd::Reg`]; where the build's target features have the instructions (AVX2 and FMA on
/// x86-64), the type wraps the `std::arch` register, elsewhere an array whose lane loops the
/// compiler vectorises as it can. Explicit registers because the optimiser's vectoriser
/// split the interpolation's accumulators by real and imaginary lanes into scalar code.
pub mod simd {
    /// Whether this CPU runs AVX-512 F, DQ, BW and VL (Intel since Skylake-SP, AMD since
    /// Zen 4): the features the `*_avx512` twins of hot loops are compiled for. Those loops
    /// are written once, in scalars or portable registers, and compiled a second time with
    /// these features enabled, so that builds for AVX2 machines still run 512-bit vectors
    /// where the CPU has them. `NUDT_NO_AVX512` set in the environment turns them off, for
    /// a same-machine comparison.
    pub fn avx512() -> bool {
        static ON: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
        *ON.get_or_init(|| {
            #[cfg(target_arch = "x86_64")]
            let has = std::arch::is_x86_feature_detected!("avx512f")
                && std::arch::is_x86_feature_detected!("avx512dq")
                && std::arch::is_x86_feature_detected!("avx512bw")
                && std::arch::is_x86_feature_detected!("avx512vl");
            #[cfg(not(target_arch = "x86_64"))]
            let has = false;
            has && std::env::var_os("NUDT_NO_AVX512").is_none()
        })
    }

    /// One register of `LANES` reals of type `T`.
    pub trait Reg<T>: Copy {
        const LANES: usize;
        fn zero() -> Self;
        fn splat(x: T) -> Self;
        /// `(a, b, a, b, ..)`: one complex value in every pair of lanes.
        fn splat_pair(a: T, b: T) -> Self;
        /// The first `LANES` reals of `s`.
        fn load(s: &[T]) -> Self;
        /// Into the first `LANES` reals of `s`.
        fn store(self, s: &mut [T]);
        /// `self · b + c`, fused where the target has FMA.
        fn mul_add(self, b: Self, c: Self) -> Self;
        fn mul(self, b: Self) -> Self;
        fn add(self, b: Self) -> Self;
        /// Lanes `0 .. LANES/2`, each twice: `(x0, x0, x1, x1, ..)`.
        fn dup_low(self) -> Self;
        /// Lanes `LANES/2 .. LANES`, each twice.
        fn dup_high(self) -> Self;
        /// Sums of the even and of the odd lanes (the real and imaginary parts).
        fn sum_pairs(self) -> (T, T);
    }

    macro_rules! array_reg {
        ($name:ident, $t:ty, $n:literal) => {
            /// A register as an array (targets without a `std::arch` implementation).
            #[derive(Clone, Copy)]
            pub struct $name([$t; $n]);

            impl Reg<$t> for $name {
                const LANES: usize = $n;
                #[inline(always)]
                fn zero() -> Self {
                    $name([0.0; $n])
                }
                #[inline(always)]
                fn splat(x: $t) -> Self {
                    $name([x; $n])
                }
                #[inline(always)]
                fn splat_pair(a: $t, b: $t) -> Self {
                    $name(std::array::from_fn(|i| if i % 2 == 0 { a } else { b }))
                }
                #[inline(always)]
                fn load(s: &[$t]) -> Self {
                    $name(s[..$n].try_into().expect("a register's worth of lanes"))
                }
                #[inline(always)]
                fn store(self, s: &mut [$t]) {
                    s[..$n].copy_from_slice(&self.0);
                }
                #[inline(always)]
                fn mul_add(self, b: Self, c: Self) -> Self {
                    $name(std::array::from_fn(|i| {
                        if cfg!(target_feature = "fma") {
                            self.0[i].mul_add(b.0[i], c.0[i])
                        } else {
                            self.0[i] * b.0[i] + c.0[i]
                        }
                    }))
                }
                #[inline(always)]
                fn mul(self, b: Self) -> Self {
                    $name(std::array::from_fn(|i| self.0[i] * b.0[i]))
                }
                #[inline(always)]
                fn add(self, b: Self) -> Self {
                    $name(std::array::from_fn(|i| self.0[i] + b.0[i]))
                }
                #[inline(always)]
                fn dup_low(self) -> Self {
                    $name(std::array::from_fn(|i| self.0[i / 2]))
                }
                #[inline(always)]
                fn dup_high(self) -> Self {
                    $name(std::array::from_fn(|i| self.0[$n / 2 + i / 2]))
                }
                #[inline(always)]
                fn sum_pairs(self) -> ($t, $t) {
                    let (mut re, mut im) = (0.0, 0.0);
                    for i in 0..$n / 2 {
                        re += self.0[2 * i];
                        im += self.0[2 * i + 1];
                    }
                    (re, im)
                }
            }
        };
    }

    array_reg!(F64x2, f64, 2);
    array_reg!(F64x8, f64, 8);
    array_reg!(F32x2, f32, 2);
    array_reg!(F32x4, f32, 4);
    array_reg!(F32x16, f32, 16);

    #[cfg(not(all(
        target_arch = "x86_64",
        target_feature = "avx2",
        target_feature = "fma"
    )))]
    array_reg!(F64x4, f64, 4);
    #[cfg(not(all(
        target_arch = "x86_64",
        target_feature = "avx2",
        target_feature = "fma"
    )))]
    array_reg!(F32x8, f32, 8);

    #[cfg(all(
        target_arch = "x86_64",
        target_feature = "avx2",
        target_feature = "fma"
    ))]
    pub use avx2::{F32x8, F64x4};

    /// AVX2 + FMA registers (x86-64-v3), compiled only where the build enables both features,
    /// which is what makes the intrinsic calls sound.
    #[cfg(all(
        target_arch = "x86_64",
        target_feature = "avx2",
        target_feature = "fma"
    ))]
    mod avx2 {
        use super::Reg;
        use std::arch::x86_64::*;

        /// Four f64 lanes.
        #[derive(Clone, Copy)]
        pub struct F64x4(__m256d);

        impl Reg<f64> for F64x4 {
            const LANES: usize = 4;
            #[inline(always)]
            fn zero() -> Self {
                // SAFETY: AVX2 and FMA are enabled for this build (the module's cfg).
                unsafe { F64x4(_mm256_setzero_pd()) }
            }
            #[inline(always)]
            fn splat(x: f64) -> Self {
                // SAFETY: AVX2 and FMA are enabled for this build (the module's cfg).
                unsafe { F64x4(_mm256_set1_pd(x)) }
            }
            #[inline(always)]
            fn splat_pair(a: f64, b: f64) -> Self {
                // SAFETY: AVX2 and FMA are enabled for this build (the module's cfg).
                unsafe { F64x4(_mm256_setr_pd(a, b, a, b)) }
            }
            #[inline(always)]
            fn load(s: &[f64]) -> Self {
                let s = &s[..4];
                // SAFETY: `s` holds the four lanes read; AVX is enabled (the module's cfg).
                F64x4(unsafe { _mm256_loadu_pd(s.as_ptr()) })
            }
            #[inline(always)]
            fn store(self, s: &mut [f64]) {
                let s = &mut s[..4];
                // SAFETY: `s` holds the four lanes written; AVX is enabled (the module's cfg).
                unsafe { _mm256_storeu_pd(s.as_mut_ptr(), self.0) }
            }
            #[inline(always)]
            fn mul_add(self, b: Self, c: Self) -> Self {
                // SAFETY: AVX2 and FMA are enabled for this build (the module's cfg).
                unsafe { F64x4(_mm256_fmadd_pd(self.0, b.0, c.0)) }
            }
            #[inline(always)]
            fn mul(self, b: Self) -> Self {
                // SAFETY: AVX2 and FMA are enabled for this build (the module's cfg).
                unsafe { F64x4(_mm256_mul_pd(self.0, b.0)) }
            }
            #[inline(always)]
            fn add(self, b: Self) -> Self {
                // SAFETY: AVX2 and FMA are enabled for this build (the module's cfg).
                unsafe { F64x4(_mm256_add_pd(self.0, b.0)) }
            }
            #[inline(always)]
            fn dup_low(self) -> Self {
                // SAFETY: AVX2 and FMA are enabled for this build (the module's cfg).
                unsafe { F64x4(_mm256_permute4x64_pd::<0b01_01_00_00>(self.0)) }
            }
            #[inline(always)]
            fn dup_high(self) -> Self {
                // SAFETY: AVX2 and FMA are enabled for this build (the module's cfg).
                unsafe { F64x4(_mm256_permute4x64_pd::<0b11_11_10_10>(self.0)) }
            }
            #[inline(always)]
            fn sum_pairs(self) -> (f64, f64) {
                // SAFETY: AVX2 and FMA are enabled for this build (the module's cfg).
                unsafe {
                    let s = _mm_add_pd(
                        _mm256_castpd256_pd128(self.0),
                        _mm256_extractf128_pd::<1>(self.0),
                    );
                    (_mm_cvtsd_f64(s), _mm_cvtsd_f64(_mm_unpackhi_pd(s, s)))
                }
            }
        }

        /// Eight f32 lanes.
        #[derive(Clone, Copy)]
        pub struct F32x8(__m256);

        impl Reg<f32> for F32x8 {
            const LANES: usize = 8;
            #[inline(always)]
            fn zero() -> Self {
                // SAFETY: AVX2 and FMA are enabled for this build (the module's cfg).
                unsafe { F32x8(_mm256_setzero_ps()) }
            }
            #[inline(always)]
            fn splat(x: f32) -> Self {
                // SAFETY: AVX2 and FMA are enabled for this build (the module's cfg).
                unsafe { F32x8(_mm256_set1_ps(x)) }
            }
            #[inline(always)]
            fn splat_pair(a: f32, b: f32) -> Self {
                // SAFETY: AVX2 and FMA are enabled for this build (the module's cfg).
                unsafe { F32x8(_mm256_setr_ps(a, b, a, b, a, b, a, b)) }
            }
            #[inline(always)]
            fn load(s: &[f32]) -> Self {
                let s = &s[..8];
                // SAFETY: `s` holds the eight lanes read; AVX is enabled (the module's cfg).
                F32x8(unsafe { _mm256_loadu_ps(s.as_ptr()) })
            }
            #[inline(always)]
            fn store(self, s: &mut [f32]) {
                let s = &mut s[..8];
                // SAFETY: `s` holds the eight lanes written; AVX is enabled (the module's cfg).
                unsafe { _mm256_storeu_ps(s.as_mut_ptr(), self.0) }
            }
            #[inline(always)]
            fn mul_add(self, b: Self, c: Self) -> Self {
                // SAFETY: AVX2 and FMA are enabled for this build (the module's cfg).
                unsafe { F32x8(_mm256_fmadd_ps(self.0, b.0, c.0)) }
            }
            #[inline(always)]
            fn mul(self, b: Self) -> Self {
                // SAFETY: AVX2 and FMA are enabled for this build (the module's cfg).
                unsafe { F32x8(_mm256_mul_ps(self.0, b.0)) }
            }
            #[inline(always)]
            fn add(self, b: Self) -> Self {
                // SAFETY: AVX2 and FMA are enabled for this build (the module's cfg).
                unsafe { F32x8(_mm256_add_ps(self.0, b.0)) }
            }
            #[inline(always)]
            fn dup_low(self) -> Self {
                // SAFETY: AVX2 and FMA are enabled for this build (the module's cfg).
                unsafe {
                    F32x8(_mm256_permutevar8x32_ps(
                        self.0,
                        _mm256_setr_epi32(0, 0, 1, 1, 2, 2, 3, 3),
                    ))
                }
            }
            #[inline(always)]
            fn dup_high(self) -> Self {
                // SAFETY: AVX2 and FMA are enabled for this build (the module's cfg).
                unsafe {
                    F32x8(_mm256_permutevar8x32_ps(
                        self.0,
                        _mm256_setr_epi32(4, 4, 5, 5, 6, 6, 7, 7),
                    ))
                }
            }
            #[inline(always)]
            fn sum_pairs(self) -> (f32, f32) {
                // SAFETY: AVX2 and FMA are enabled for this build (the module's cfg).
                unsafe {
                    // Lanes (r0 i0 r1 i1 | r2 i2 r3 i3): halves added, then the two pairs.
                    let s = _mm_add_ps(
                        _mm256_castps256_ps128(self.0),
                        _mm256_extractf128_ps::<1>(self.0),
                    );
                    let s = _mm_add_ps(s, _mm_movehl_ps(s, s));
                    (
                        _mm_cvtss_f32(s),
                        _mm_cvtss_f32(_mm_shuffle_ps::<0b01>(s, s)),
                    )
                }
            }
        }
    }
}
