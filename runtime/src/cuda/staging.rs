//! Host arrays to and from the device through page-locked memory the plan keeps: a copy
//! from pageable memory moves at a few GB/s on an H200 host (the driver stages it through
//! its own pinned buffer a piece at a time, on one thread: cuFINUFFT's perftest moves 1 MB
//! of modes in 0.12–0.27 ms), and a stack of 32 transforms of 64³ modes moves 134 MB each
//! way. Here every core copies a piece into the plan's pinned buffer and the DMA engine
//! takes it from there at the bus's rate. The buffer holds at most [`STAGE_BYTES`] and is
//! reused by every transfer of the plan.

use super::error::{device_call, driver, CudaResult};
use super::CudaFloat;
use crate::gpu::plan::{Fill, Take};
use cudarc::driver::{CudaStream, PinnedHostSlice};
use rayon::prelude::*;

/// Most bytes the buffer holds: longer transfers go through it in pieces.
const STAGE_BYTES: usize = 32 << 20;
/// Elements one core copies at a time.
const PIECE: usize = 1 << 15;

/// A plan's page-locked staging buffer, made at its first transfer.
pub(crate) struct Staging<T> {
    buf: Option<PinnedHostSlice<T>>,
}

impl<T> Default for Staging<T> {
    fn default() -> Self {
        Staging { buf: None }
    }
}

impl<T: CudaFloat> Staging<T> {
    /// The first `len` elements of the buffer (grown to hold them, within the cap), once the
    /// transfers queued on `stream` out of and into it have run.
    fn room(&mut self, stream: &CudaStream, len: usize) -> CudaResult<&mut [T]> {
        stream
            .synchronize()
            .map_err(|e| driver("cuStreamSynchronize", e))?;
        if self.buf.as_ref().is_none_or(|b| b.len() < len) {
            self.buf = None;
            // SAFETY: the buffer is written before any of it is read. Default flags: the
            // host reads back what the device wrote, which write-combined memory makes slow.
            let b = unsafe { stream.context().alloc_pinned_with_flags::<T>(len.max(1), 0) }
                .map_err(|e| driver("cuMemHostAlloc", e))?;
            self.buf = Some(b);
        }
        let b = self.buf.as_mut().expect("made above");
        let s = b
            .as_mut_slice()
            .map_err(|e| driver("cuEventSynchronize", e))?;
        Ok(&mut s[..len])
    }

    /// Elements of one piece of a transfer.
    fn piece() -> usize {
        (STAGE_BYTES / std::mem::size_of::<T>()).max(1)
    }

    /// Copies the concatenation of `parts` to the device address `dst`, queued on `stream`
    /// (the host may change `parts` once this returns).
    pub fn htod(&mut self, stream: &CudaStream, parts: &[&[T]], dst: u64) -> CudaResult<()> {
        let len: usize = parts.iter().map(|p| p.len()).sum();
        self.htod_with(stream, len, dst, &|at, to| gather(parts, at, to))
    }

    /// Copies `len` elements to the device address `dst`, queued on `stream`, as `fill`
    /// makes them: `fill(at, to)` writes elements `at .. at + to.len()`, on every core a piece
    /// at a time, straight into the pinned buffer (a gather costs no host array of its own).
    pub fn htod_with(
        &mut self,
        stream: &CudaStream,
        len: usize,
        dst: u64,
        fill: &Fill<'_, T>,
    ) -> CudaResult<()> {
        let piece = Self::piece();
        for at in (0..len).step_by(piece) {
            let n = piece.min(len - at);
            let room = self.room(stream, n)?;
            room.par_chunks_mut(PIECE)
                .enumerate()
                .for_each(|(i, to)| fill(at + i * PIECE, to));
            let to = dst + (at * std::mem::size_of::<T>()) as u64;
            device_call("cuMemcpyHtoDAsync")?;
            // SAFETY: `to .. to + n` lies in the caller's device buffer; the pinned source
            // stays untouched until the next `room`, which waits for this copy.
            unsafe { cudarc::driver::result::memcpy_htod_async(to, room, stream.cu_stream()) }
                .map_err(|e| driver("cuMemcpyHtoDAsync", e))?;
        }
        Ok(())
    }

    /// Copies `out.len()` elements from the device address `src` into `out`, after the work
    /// queued on `stream` before it; returns once they are there.
    pub fn dtoh(&mut self, stream: &CudaStream, src: u64, out: &mut [T]) -> CudaResult<()> {
        let (piece, len) = (Self::piece(), out.len());
        let mut chunks = out.chunks_mut(piece);
        self.dtoh_pieces(stream, src, len, |_, room| {
            copy(chunks.next().expect("a chunk a piece"), room)
        })
    }

    /// Copies `len` elements from the device address `src`, after the work queued on
    /// `stream` before it, and hands them to `take(at, from)` (elements `at .. at +
    /// from.len()`) on every core a piece at a time, straight from the pinned buffer; returns
    /// once every piece is taken.
    pub fn dtoh_with(
        &mut self,
        stream: &CudaStream,
        src: u64,
        len: usize,
        take: &Take<'_, T>,
    ) -> CudaResult<()> {
        self.dtoh_pieces(stream, src, len, |at, room| {
            room.par_chunks(PIECE)
                .enumerate()
                .for_each(|(i, from)| take(at + i * PIECE, from))
        })
    }

    /// Copies `len` elements from `src` through the buffer a piece at a time, each piece
    /// handed to `each(at, piece)` once it has arrived.
    fn dtoh_pieces(
        &mut self,
        stream: &CudaStream,
        src: u64,
        len: usize,
        mut each: impl FnMut(usize, &[T]),
    ) -> CudaResult<()> {
        let piece = Self::piece();
        for at in (0..len).step_by(piece) {
            let room = self.room(stream, piece.min(len - at))?;
            let from = src + (at * std::mem::size_of::<T>()) as u64;
            device_call("cuMemcpyDtoHAsync")?;
            // SAFETY: `from .. from + len` lies in the caller's device buffer, and `room`
            // is read only after the stream has run the copy.
            unsafe {
                cudarc::driver::result::memcpy_dtoh_async(&mut *room, from, stream.cu_stream())
            }
            .map_err(|e| driver("cuMemcpyDtoHAsync", e))?;
            stream
                .synchronize()
                .map_err(|e| driver("cuStreamSynchronize", e))?;
            each(at, room);
        }
        Ok(())
    }
}

/// `to` ← `from`, a piece per core.
fn copy<T: Copy + Send + Sync>(to: &mut [T], from: &[T]) {
    to.par_chunks_mut(PIECE)
        .zip(from.par_chunks(PIECE))
        .for_each(|(a, b)| a.copy_from_slice(b));
}

/// `to` ← elements `at .. at + to.len()` of the concatenation of `parts`.
fn gather<T: Copy + Send + Sync>(parts: &[&[T]], mut at: usize, to: &mut [T]) {
    let mut rest = to;
    for p in parts {
        if rest.is_empty() {
            break;
        }
        if at >= p.len() {
            at -= p.len();
            continue;
        }
        let take = (p.len() - at).min(rest.len());
        let (head, tail) = std::mem::take(&mut rest).split_at_mut(take);
        head.copy_from_slice(&p[at..at + take]);
        (rest, at) = (tail, 0);
    }
}

#[cfg(test)]
mod tests {
    use super::gather;

    #[test]
    fn a_piece_gathers_across_parts() {
        let (a, b, c) = ([1, 2, 3], [], [4, 5]);
        let parts: [&[i32]; 3] = [&a, &b, &c];
        let mut to = [0; 3];
        gather(&parts, 2, &mut to);
        assert_eq!(to, [3, 4, 5]);
        let mut to = [0; 2];
        gather(&parts, 0, &mut to);
        assert_eq!(to, [1, 2]);
    }
}
