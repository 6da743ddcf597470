//! The FFT planner: a size, batch and precision plus a device's limits → a [`FftPlan`], pure
//! data: the radices of every axis, the kernels and the order in which they run.
//!
//! Each axis of length N is factored into radices 16, 8, 4, 2, 3, 5, 7, 11, 13 (butterflies held
//! in registers) and any other prime, whose pass sums its DFT directly, so every length works.
//! The passes are Stockham autosort steps: pass p with radix r and Ns = product of the earlier
//! radices reads x[j + u·N/r] (u < r), twiddles by exp(±2πi·u·(j mod Ns)/(Ns·r)), and writes
//! the r outputs at (j/Ns)·Ns·r + j mod Ns + u·Ns, so the result comes out in natural order.
//!
//! Two kinds of kernel carry the passes:
//! * a *block* kernel (Keskin et al.'s scheme) loads a tile into local/shared memory, runs every
//!   pass of one or more axes there and stores it: either a contiguous slab of the trailing axes
//!   (the whole 3D volume when it fits, e.g. 16³) with as many slabs per block as fill the
//!   tile, or `lpb` lines of one strided axis, neighbours in memory, so loads coalesce;
//! * a *pass* kernel (Bainville's scheme) runs one radix pass through global memory, for
//!   axes too long for local memory, ping-ponging with a scratch buffer.
//!
//! The axes not in the trailing slab run one block (or pass sequence) each, from the last
//! remaining axis to the first. Buffers are assigned backwards from the output, so that one
//! launch list serves in-place and out-of-place calls and never writes the input of an
//! out-of-place call.

use super::{FftDevice, FftSpec};
use crate::error::GenError;
use crate::params::Precision;
use serde::Serialize;

/// Radices whose butterflies live in registers (powers of two and small odd primes).
pub const REGISTER_RADICES: [usize; 9] = [2, 3, 4, 5, 7, 8, 11, 13, 16];
/// Terms per partial sum in the directly summed prime passes.
pub const CHUNK: usize = 32;
/// A slab of trailing axes is fused into one block kernel up to this many bytes of data.
pub const FUSE_MAX_BYTES: usize = 100 << 10;
/// Data bytes a block kernel's tile aims for when several slabs or lines share a block.
pub const TILE_TARGET_BYTES: usize = 32 << 10;
/// Bytes a strided tile's lines should cover side by side, so global accesses fill sectors.
pub const COALESCE_BYTES: usize = 128;
/// Bytes of one L2 sector: a strided tile keeps at least this much of each row, if it can.
pub const SECTOR_BYTES: usize = 32;
/// Largest strided tile, in bytes, before lines are dropped for occupancy (three blocks fit
/// an SM's 228 KB).
pub const STRIDED_TILE_MAX_BYTES: usize = 64 << 10;
/// Threads of the global pass and copy kernels.
pub const PASS_THREADS: u32 = 256;
/// Largest grid (blocks of one launch) the plans use: CUDA's grid x limit.
pub const MAX_GRID: u64 = (1 << 31) - 1;
/// Largest length of one axis (the kernels' in-line indices are 32-bit).
pub const MAX_LEN: usize = 1 << 30;

/// Where a launch reads or writes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Buffer {
    /// The caller's input (equal to the output for an in-place call).
    Input,
    /// The caller's output.
    Output,
    /// A buffer of [`FftPlan::scratch_elems`] complex values the executor provides.
    Scratch,
}

impl Buffer {
    fn other(self) -> Buffer {
        match self {
            Buffer::Scratch => Buffer::Output,
            _ => Buffer::Scratch,
        }
    }
}

/// How a block kernel's tile maps to global memory.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Tile {
    /// Complex elements in the tile.
    pub elems: usize,
    /// Whether the tile is one contiguous run (a slab of trailing axes); otherwise it is `lpb`
    /// neighbouring lines of an axis with global stride `stride`.
    pub contiguous: bool,
    /// Lines per block of a strided tile (1 for a contiguous one).
    pub lpb: usize,
    /// Global stride of the strided axis.
    pub stride: usize,
    /// Blocks per outer index: stride / lpb.
    pub chunks: usize,
    /// Global distance between outer indices: N · stride.
    pub outer_stride: usize,
}

/// One radix pass inside a block kernel.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct LocalPass {
    /// "reg" (butterflies in registers) or "direct" (a prime summed from local memory).
    pub kind: &'static str,
    pub axis: usize,
    pub r: usize,
    pub ns: usize,
    /// Axis length and N / r.
    pub n: usize,
    pub n_over: usize,
    /// Local stride of the axis and lines of it in the tile.
    pub s: usize,
    pub lines: usize,
    /// Work items (butterflies or outputs) and per-thread iterations over them.
    pub count: usize,
    pub iters: usize,
    pub guard: bool,
}

/// A table of the r-th roots of unity in local memory, for a directly summed prime r.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Roots {
    pub p: usize,
    pub offset: usize,
}

/// A kernel of the module, as the template renders it. Each kind sets its own fields; the
/// others keep their defaults (zero, empty, none).
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct Kernel {
    /// Base name; the forward and inverse entry points add `_fwd` and `_inv`.
    pub name: String,
    /// "block", "pass" or "copy".
    pub kind: &'static str,
    pub doc: String,
    pub threads: u32,
    /// Axes this kernel transforms (all of them or part, for a pass kernel).
    pub axes: Vec<usize>,
    // Block kernels.
    pub tile: Option<Tile>,
    pub passes: Vec<LocalPass>,
    pub roots: Vec<Roots>,
    /// Local memory in complex elements (padded tile and root tables).
    pub local_len: usize,
    pub io_iters: usize,
    pub io_guard: bool,
    // Pass and copy kernels.
    pub r: usize,
    pub ns: usize,
    pub n: usize,
    pub n_over: usize,
    pub s: usize,
    /// Work items per line: N / r butterflies, or N outputs of a direct pass.
    pub per_line: usize,
    pub direct: bool,
    /// Work items of the whole launch.
    pub count: u64,
}

/// One launch of the sequence.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Launch {
    /// Index into [`FftPlan::kernels`].
    pub kernel: usize,
    /// Blocks (work-groups) of the launch.
    pub grid: u64,
    pub threads: u32,
    /// Local/shared memory per block in bytes.
    pub local_bytes: usize,
    pub src: Buffer,
    pub dst: Buffer,
}

/// A planned FFT: kernels and launch order. Pure data, checked without a GPU.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct FftPlan {
    pub shape: Vec<usize>,
    pub batch: usize,
    /// Complex elements of the whole batch.
    pub elems: u64,
    /// Complex elements of scratch the executor provides (0: none).
    pub scratch_elems: u64,
    /// Radices of every axis, in pass order.
    pub radices: Vec<Vec<usize>>,
    /// Whether global indices need 64 bits.
    pub wide_index: bool,
    /// log2 of the pad spacing in local memory.
    pub pad_shift: u32,
    pub kernels: Vec<Kernel>,
    pub launches: Vec<Launch>,
}

/// The radices of a length-`n` axis, in pass order: 16s (or 8·4 for an odd power of two
/// left over), then 8, 4 or 2, then the odd primes in increasing order.
pub fn factor(n: usize) -> Vec<usize> {
    let mut out = Vec::new();
    let mut twos = n.trailing_zeros() as usize;
    let mut m = n >> twos;
    while twos >= 4 {
        if twos == 5 {
            // 32 = 8·4 balances registers better than 16·2.
            out.extend([8, 4]);
            twos = 0;
            break;
        }
        out.push(16);
        twos -= 4;
    }
    match twos {
        3 => out.push(8),
        2 => out.push(4),
        1 => out.push(2),
        _ => {}
    }
    let mut p = 3;
    while p * p <= m {
        while m.is_multiple_of(p) {
            out.push(p);
            m /= p;
        }
        p += 2;
    }
    if m > 1 {
        out.push(m);
    }
    out
}

fn is_register_radix(r: usize) -> bool {
    REGISTER_RADICES.contains(&r)
}

fn scalar_bytes(p: Precision) -> usize {
    match p {
        Precision::F32 => 4,
        Precision::F64 => 8,
    }
}

/// Padded local length of a tile of `elems` complex values.
fn padded(elems: usize, shift: u32) -> usize {
    elems + (elems >> shift) + 1
}

/// Largest divisor of `n` that is at most `cap` (at least 1).
fn largest_divisor_at_most(n: usize, cap: usize) -> usize {
    (1..=cap.min(n).max(1))
        .rev()
        .find(|d| n.is_multiple_of(*d))
        .unwrap_or(1)
}

struct Planner<'a> {
    spec: &'a FftSpec,
    /// Prefix of the kernel names (distinct per plan of a bundle).
    prefix: &'a str,
    dev: &'a FftDevice,
    csize: usize,
    pad_shift: u32,
    total: u64,
    kernels: Vec<Kernel>,
    launches: Vec<Launch>,
}

impl Planner<'_> {
    fn max_threads(&self) -> u32 {
        self.dev.max_threads.min(1024)
    }

    /// Local elements (padded tile plus root tables) of a block over `axes` with `elems` values.
    fn local_len(&self, elems: usize, axes: &[usize]) -> usize {
        let mut len = padded(elems, self.pad_shift);
        let mut seen = Vec::new();
        for &a in axes {
            for r in factor(self.spec.shape[a]) {
                if !is_register_radix(r) && !seen.contains(&r) {
                    seen.push(r);
                    len += r;
                }
            }
        }
        len
    }

    fn fits(&self, elems: usize, axes: &[usize]) -> bool {
        self.local_len(elems, axes) * self.csize <= self.dev.local_bytes
    }

    fn grid_check(&self, blocks: u64) -> Result<u64, GenError> {
        if blocks > MAX_GRID {
            return Err(GenError::FftGrid {
                batch: self.spec.batch,
                shape: self.spec.shape.clone(),
                blocks,
            });
        }
        Ok(blocks)
    }

    /// A block kernel over `axes` (with local strides and line counts) on `tile`.
    fn block(
        &mut self,
        tile: Tile,
        axes: Vec<(usize, usize, usize)>,
        doc: String,
    ) -> Result<(), GenError> {
        let axis_ids: Vec<usize> = axes.iter().map(|a| a.0).collect();
        let max_r = axes
            .iter()
            .flat_map(|&(a, _, _)| factor(self.spec.shape[a]))
            .map(|r| r.min(16))
            .max()
            .unwrap_or(2);
        let want = tile.elems.div_ceil(max_r).div_ceil(32) * 32;
        let threads = (want as u32).clamp(32.min(self.max_threads()), self.max_threads());
        let t = threads as usize;
        let mut passes = Vec::new();
        for &(axis, s, lines) in &axes {
            let n = self.spec.shape[axis];
            let mut ns = 1;
            for r in factor(n) {
                let direct = !is_register_radix(r);
                let count = if direct { lines * n } else { lines * (n / r) };
                passes.push(LocalPass {
                    kind: if direct { "direct" } else { "reg" },
                    axis,
                    r,
                    ns,
                    n,
                    n_over: n / r,
                    s,
                    lines,
                    count,
                    iters: count.div_ceil(t),
                    guard: count % t != 0,
                });
                ns *= r;
            }
        }
        let mut roots = Vec::new();
        let mut offset = padded(tile.elems, self.pad_shift);
        for p in &passes {
            if p.kind == "direct" && !roots.iter().any(|x: &Roots| x.p == p.r) {
                roots.push(Roots { p: p.r, offset });
                offset += p.r;
            }
        }
        let local_len = self.local_len(tile.elems, &axis_ids);
        debug_assert_eq!(local_len, offset);
        let grid = self.grid_check(self.total / tile.elems as u64)?;
        let index = self.kernels.len();
        self.kernels.push(Kernel {
            name: format!("{}k{index}", self.prefix),
            kind: "block",
            doc,
            threads,
            axes: axis_ids,
            io_iters: tile.elems.div_ceil(t),
            io_guard: !tile.elems.is_multiple_of(t),
            tile: Some(tile),
            passes,
            roots,
            local_len,
            ..Default::default()
        });
        self.launches.push(Launch {
            kernel: index,
            grid,
            threads,
            local_bytes: local_len * self.csize,
            src: Buffer::Input,
            dst: Buffer::Output,
        });
        Ok(())
    }

    /// A slab of the trailing axes `first..` in one block kernel, several slabs per block.
    fn slab(&mut self, first: usize) -> Result<(), GenError> {
        let shape = &self.spec.shape;
        let d = shape.len();
        let slab: usize = shape[first..].iter().product();
        let slabs = self.total / slab as u64;
        let cap = (TILE_TARGET_BYTES / (slab * self.csize)).max(1);
        let axes: Vec<usize> = (first..d).filter(|&a| shape[a] > 1).collect();
        // Slabs per block: a divisor of the slab count (no partial tiles), within the target.
        let mut per = largest_divisor_at_most(slabs.min(cap as u64) as usize, cap);
        while per > 1 && (!slabs.is_multiple_of(per as u64) || !self.fits(per * slab, &axes)) {
            per -= 1;
        }
        let elems = per * slab;
        let local: Vec<(usize, usize, usize)> = axes
            .iter()
            .map(|&a| {
                let s: usize = shape[a + 1..].iter().product();
                (a, s, elems / shape[a])
            })
            .collect();
        let doc = format!(
            "Block kernel: axes {:?} of {} slab(s) of {:?} per block, in local memory.",
            axes,
            per,
            &shape[first..]
        );
        self.block(
            Tile {
                elems,
                contiguous: true,
                lpb: 1,
                stride: 1,
                chunks: 1,
                outer_stride: elems,
            },
            local,
            doc,
        )
    }

    /// One strided axis in local memory, `lpb` neighbouring lines per block.
    fn strided(&mut self, axis: usize) -> Result<bool, GenError> {
        let n = self.spec.shape[axis];
        let stride: usize = self.spec.shape[axis + 1..].iter().product();
        let goal = (COALESCE_BYTES / self.csize).max(TILE_TARGET_BYTES / (n * self.csize));
        let mut lpb = largest_divisor_at_most(stride, goal);
        // Fewer lines for a smaller tile, down to one sector per row of the tile: a 2000-line
        // axis at 10 lines (160 KB) runs one block per SM in 1.5 waves; at 4 (f32, 64 KB),
        // three blocks per SM, it took 0.075 ms against 0.097 on an H100 (2000², f32).
        let sector = (SECTOR_BYTES / self.csize).max(1);
        while lpb > sector && lpb * n * self.csize > STRIDED_TILE_MAX_BYTES {
            lpb = largest_divisor_at_most(stride, lpb - 1);
        }
        while lpb > 1 && !self.fits(lpb * n, &[axis]) {
            lpb = largest_divisor_at_most(stride, lpb - 1);
        }
        if !self.fits(lpb * n, &[axis]) {
            return Ok(false);
        }
        let doc = format!(
            "Block kernel: axis {axis} (length {n}, stride {stride}), {lpb} neighbouring line(s) per block, in local memory."
        );
        self.block(
            Tile {
                elems: lpb * n,
                contiguous: false,
                lpb,
                stride,
                chunks: stride / lpb,
                outer_stride: n * stride,
            },
            vec![(axis, lpb, lpb)],
            doc,
        )?;
        Ok(true)
    }

    /// One axis as a sequence of global-memory radix passes.
    fn global(&mut self, axis: usize) -> Result<(), GenError> {
        let n = self.spec.shape[axis];
        let s: usize = self.spec.shape[axis + 1..].iter().product();
        let lines = self.total / n as u64;
        let threads = PASS_THREADS.min(self.dev.max_threads);
        let mut ns = 1;
        for r in factor(n) {
            let direct = !is_register_radix(r);
            let per_line = if direct { n } else { n / r };
            let count = lines * per_line as u64;
            let grid = self.grid_check(count.div_ceil(threads as u64))?;
            let index = self.kernels.len();
            self.kernels.push(Kernel {
                name: format!("{}k{index}", self.prefix),
                kind: "pass",
                doc: format!(
                    "Global pass: axis {axis} (length {n}, stride {s}), radix {r}{}, Ns = {ns}.",
                    if direct { " summed directly" } else { "" }
                ),
                threads,
                axes: vec![axis],
                r,
                ns,
                n,
                n_over: n / r,
                s,
                per_line,
                direct,
                count,
                ..Default::default()
            });
            self.launches.push(Launch {
                kernel: index,
                grid,
                threads,
                local_bytes: 0,
                src: Buffer::Input,
                dst: Buffer::Output,
            });
            ns *= r;
        }
        Ok(())
    }

    fn copy_kernel(&mut self) -> Result<Launch, GenError> {
        let threads = PASS_THREADS.min(self.dev.max_threads);
        let grid = self.grid_check(self.total.div_ceil(threads as u64))?;
        let index = self.kernels.len();
        self.kernels.push(Kernel {
            name: format!("{}k{index}", self.prefix),
            kind: "copy",
            doc: "Copy: the input to scratch, so that the global passes never read and write one buffer.".into(),
            threads,
            count: self.total,
            ..Default::default()
        });
        Ok(Launch {
            kernel: index,
            grid,
            threads,
            local_bytes: 0,
            src: Buffer::Input,
            dst: Buffer::Scratch,
        })
    }

    /// Buffers, backwards from the output: block kernels work in place, pass kernels
    /// alternate between the output and scratch; the first launch reads the input.
    fn assign_buffers(&mut self) -> Result<(), GenError> {
        if self.launches.is_empty() {
            // Every axis has length 1: the transform is the identity.
            let mut c = self.copy_kernel()?;
            c.dst = Buffer::Output;
            self.launches.push(c);
            return Ok(());
        }
        let mut dst = Buffer::Output;
        for l in self.launches.iter_mut().rev() {
            l.dst = dst;
            l.src = if self.kernels[l.kernel].kind == "block" {
                dst
            } else {
                dst.other()
            };
            dst = l.src;
        }
        let first = &mut self.launches[0];
        if first.src == Buffer::Scratch && self.kernels[first.kernel].kind == "pass" {
            // In place, reading the input would read the output it writes: copy first.
            let c = self.copy_kernel()?;
            self.launches.insert(0, c);
        } else {
            first.src = Buffer::Input;
        }
        Ok(())
    }
}

/// Plans `spec` for `dev`; kernels are named `nudt_fft_k<i>`.
pub fn plan(spec: &FftSpec, dev: &FftDevice) -> Result<FftPlan, GenError> {
    plan_named(spec, dev, "nudt_fft_")
}

/// Plans `spec` for `dev` with kernels named `<prefix>k<i>`.
pub fn plan_named(spec: &FftSpec, dev: &FftDevice, prefix: &str) -> Result<FftPlan, GenError> {
    spec.validate()?;
    dev.validate()?;
    dev.dialect.header(spec.precision, false)?;
    let csize = 2 * scalar_bytes(spec.precision);
    let elems = spec.elements()?;
    let mut p = Planner {
        spec,
        prefix,
        dev,
        csize,
        pad_shift: match spec.precision {
            Precision::F32 => 4,
            Precision::F64 => 3,
        },
        total: elems,
        kernels: Vec::new(),
        launches: Vec::new(),
    };
    let shape = &spec.shape;
    let d = shape.len();
    // The longest run of trailing axes that fits one block's local memory.
    let mut first = d;
    while first > 0 {
        let slab: usize = shape[first - 1..].iter().product();
        let axes: Vec<usize> = (first - 1..d).collect();
        if slab * csize > FUSE_MAX_BYTES || !p.fits(slab, &axes) {
            break;
        }
        first -= 1;
    }
    if first < d && shape[first..].iter().any(|&n| n > 1) {
        p.slab(first)?;
    }
    for axis in (0..first).rev() {
        if shape[axis] == 1 {
            continue;
        }
        if !p.strided(axis)? {
            p.global(axis)?;
        }
    }
    p.assign_buffers()?;
    let scratch = p
        .launches
        .iter()
        .any(|l| l.src == Buffer::Scratch || l.dst == Buffer::Scratch);
    Ok(FftPlan {
        shape: shape.clone(),
        batch: spec.batch,
        elems,
        scratch_elems: if scratch { elems } else { 0 },
        radices: shape.iter().map(|&n| factor(n)).collect(),
        // Room for a grid rounded up to whole blocks above the last element.
        wide_index: elems + 2048 > u32::MAX as u64,
        pad_shift: p.pad_shift,
        kernels: p.kernels,
        launches: p.launches,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn factors_multiply_back_and_use_known_radices() {
        for n in 1..=5000usize {
            let f = factor(n);
            assert_eq!(f.iter().product::<usize>(), n, "{n}: {f:?}");
            for &r in &f {
                assert!(
                    is_register_radix(r) || (r > 13 && (2..r).all(|d| r % d != 0)),
                    "{n}: {f:?}"
                );
            }
        }
        assert_eq!(factor(4096), vec![16, 16, 16]);
        assert_eq!(factor(2000), vec![16, 5, 5, 5]);
        assert_eq!(factor(32), vec![8, 4]);
        assert_eq!(factor(4093), vec![4093]);
    }
}
