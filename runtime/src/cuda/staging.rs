//! Host arrays to and from the device through page-locked memory the plan keeps: a copy
//! from pageable memory moves at a few GB/s on an H200 host (the driver stages it through
//! its own pinned buffer a piece at a time, on one thread: cuFINUFFT's perftest moves 1 MB
//! of modes in 0.12–0.27 ms), and a stack of 32 transforms of 64³ modes moves 134 MB each
//! way. Here every core copies a piece into one of the plan's two pinned buffers while the
//! DMA engine moves the other's at the bus's rate: the host's copies and the bus's overlap.
//! Each buffer holds at most [`STAGE_BYTES`] and is reused by every transfer of the plan.

use super::error::{device_call, driver, CudaResult};
use super::CudaFloat;
use crate::gpu::plan::{Fill, Take};
use cudarc::driver::{CudaEvent, CudaStream, PinnedHostSlice};
use rayon::prelude::*;

/// Most bytes a buffer holds: longer transfers go through the two in pieces.
const STAGE_BYTES: usize = 32 << 20;
/// Elements one core copies at a time.
const PIECE: usize = 1 << 15;

/// A pinned buffer and the event after the last copy queued out of or into it.
struct Slot<T> {
    buf: PinnedHostSlice<T>,
    done: CudaEvent,
}

/// A plan's two page-locked staging buffers, made at its first transfers; piece `k` of a
/// transfer goes through buffer `k % 2`.
pub(crate) struct Staging<T> {
    slots: [Option<Slot<T>>; 2],
}

impl<T> Default for Staging<T> {
    fn default() -> Self {
        Staging {
            slots: [None, None],
        }
    }
}

impl<T> Drop for Staging<T> {
    /// Waits for the copies still queued out of or into the buffers before they are freed.
    fn drop(&mut self) {
        for s in self.slots.iter().flatten() {
            // Nothing to do with an error here: the context is gone with its copies.
            let _ = s.done.synchronize();
        }
    }
}

impl<T: CudaFloat> Staging<T> {
    /// Buffer `i`, holding at least `len` elements (grown within the cap), once the copy
    /// last queued out of or into it has run.
    fn slot(&mut self, stream: &CudaStream, i: usize, len: usize) -> CudaResult<&mut Slot<T>> {
        let slot = &mut self.slots[i];
        if let Some(s) = slot {
            s.done
                .synchronize()
                .map_err(|e| driver("cuEventSynchronize", e))?;
        }
        if slot.as_ref().is_none_or(|s| s.buf.len() < len) {
            *slot = None;
            let ctx = stream.context();
            // SAFETY: the buffer is written before any of it is read. Default flags: the
            // host reads back what the device wrote, which write-combined memory makes slow.
            let buf = unsafe { ctx.alloc_pinned_with_flags::<T>(len.max(1), 0) }
                .map_err(|e| driver("cuMemHostAlloc", e))?;
            let done = ctx
                .new_event(None)
                .map_err(|e| driver("cuEventCreate", e))?;
            *slot = Some(Slot { buf, done });
        }
        Ok(slot.as_mut().expect("made above"))
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
        bind(stream)?;
        let piece = Self::piece();
        for (k, at) in (0..len).step_by(piece).enumerate() {
            let n = piece.min(len - at);
            let slot = self.slot(stream, k % 2, n)?;
            let room = &mut slot
                .buf
                .as_mut_slice()
                .map_err(|e| driver("cuEventSynchronize", e))?[..n];
            room.par_chunks_mut(PIECE)
                .enumerate()
                .for_each(|(i, to)| fill(at + i * PIECE, to));
            let to = dst + (at * std::mem::size_of::<T>()) as u64;
            device_call("cuMemcpyHtoDAsync")?;
            // SAFETY: `to .. to + n` lies in the caller's device buffer; the pinned source
            // stays untouched until its event has passed, which the next use waits for.
            unsafe { cudarc::driver::result::memcpy_htod_async(to, &*room, stream.cu_stream()) }
                .map_err(|e| driver("cuMemcpyHtoDAsync", e))?;
            slot.done
                .record(stream)
                .map_err(|e| driver("cuEventRecord", e))?;
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

    /// Copies `len` elements from `src` through the buffers a piece at a time, each piece
    /// handed to `each(at, piece)` once it has arrived, while the next one is on its way.
    fn dtoh_pieces(
        &mut self,
        stream: &CudaStream,
        src: u64,
        len: usize,
        mut each: impl FnMut(usize, &[T]),
    ) -> CudaResult<()> {
        bind(stream)?;
        let piece = Self::piece();
        let starts: Vec<usize> = (0..len).step_by(piece).collect();
        let n = |at: usize| piece.min(len - at);
        if let Some(&at) = starts.first() {
            self.queue_dtoh(stream, 0, src, (at, n(at)))?;
        }
        for (k, &at) in starts.iter().enumerate() {
            if let Some(&next) = starts.get(k + 1) {
                self.queue_dtoh(stream, (k + 1) % 2, src, (next, n(next)))?;
            }
            let slot = self.slots[k % 2].as_mut().expect("queued above");
            slot.done
                .synchronize()
                .map_err(|e| driver("cuEventSynchronize", e))?;
            let room = slot
                .buf
                .as_slice()
                .map_err(|e| driver("cuEventSynchronize", e))?;
            each(at, &room[..n(at)]);
        }
        Ok(())
    }

    /// Queues the copy of elements `at .. at + n` from `src` into buffer `i`.
    fn queue_dtoh(
        &mut self,
        stream: &CudaStream,
        i: usize,
        src: u64,
        (at, n): (usize, usize),
    ) -> CudaResult<()> {
        let slot = self.slot(stream, i, n)?;
        let room = &mut slot
            .buf
            .as_mut_slice()
            .map_err(|e| driver("cuEventSynchronize", e))?[..n];
        let from = src + (at * std::mem::size_of::<T>()) as u64;
        device_call("cuMemcpyDtoHAsync")?;
        // SAFETY: `from .. from + n` lies in the caller's device buffer, and the buffer is
        // read only after its event, recorded after the copy, has passed.
        unsafe { cudarc::driver::result::memcpy_dtoh_async(room, from, stream.cu_stream()) }
            .map_err(|e| driver("cuMemcpyDtoHAsync", e))?;
        slot.done
            .record(stream)
            .map_err(|e| driver("cuEventRecord", e))
    }
}

/// Makes `stream`'s context the thread's: the raw copies run in the current one (a process
/// driving several devices switches between theirs).
fn bind(stream: &CudaStream) -> CudaResult<()> {
    stream
        .context()
        .bind_to_thread()
        .map_err(|e| driver("cuCtxSetCurrent", e))
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
