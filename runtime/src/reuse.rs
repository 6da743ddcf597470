//! Work buffers a dropped plan leaves to the next one: its fine grids and FFT scratch, kept
//! per precision up to a bound, and taken back by [`crate::float::resize_parallel`] and the
//! FFT's row scratch before they allocate.
//!
//! Why: a fresh buffer's pages are faulted in by its first writer, and on a VM a fault costs
//! about a microsecond. A 1-D type 1 of 10⁴ points and 8 000 modes (a 256 KB grid, as much FFT
//! scratch) ran its first execute on a new plan in 480 µs and the next in 242 µs (2 threads,
//! the development VM; `nudt bench --problems benches/small_problems.toml --only 1d-t1-1e4`,
//! columns `execute` and `again`); a one-shot call (plan, points, execute), as a reconstruction
//! loop or a Python function makes again and again, paid the faults every time. The allocator
//! does not keep them: blocks this large are mapped afresh and unmapped when freed.

use crate::float::Float;
use num_complex::Complex;

/// Largest buffer kept (bytes): beyond it the first touch is a small part of a transform
/// that fills such a grid.
const KEEP_LARGEST: usize = 64 << 20;
/// Most bytes kept per precision: what a process may hold beyond its live plans.
const KEEP_TOTAL: usize = 128 << 20;
/// Most buffers kept per precision (a stack's grids, each plan's FFT scratch).
const KEEP_COUNT: usize = 16;

/// The buffers kept for one precision.
#[derive(Default)]
pub struct Kept<T> {
    bufs: Vec<Vec<Complex<T>>>,
}

fn bytes<T>(v: &Vec<Complex<T>>) -> usize {
    v.capacity() * std::mem::size_of::<Complex<T>>()
}

impl<T> Kept<T> {
    /// The smallest kept buffer of at least `n` values' capacity, its contents whatever
    /// they were; `None` where none is that large.
    fn take(&mut self, n: usize) -> Option<Vec<Complex<T>>> {
        let fit = (self.bufs.iter().enumerate())
            .filter(|(_, v)| v.capacity() >= n)
            .min_by_key(|(_, v)| v.capacity())?
            .0;
        Some(self.bufs.swap_remove(fit))
    }

    /// Keeps `v` where it is within the bounds: the smallest buffers make room for it.
    /// The list's own storage is made once, for all it may hold.
    fn keep(&mut self, v: Vec<Complex<T>>) {
        let size = bytes(&v);
        if size == 0 || size > KEEP_LARGEST {
            return;
        }
        if self.bufs.capacity() == 0 {
            self.bufs.reserve_exact(KEEP_COUNT + 1);
        }
        self.bufs.push(v);
        self.bufs
            .sort_unstable_by_key(|b| std::cmp::Reverse(b.capacity()));
        let mut total = 0;
        self.bufs.truncate(KEEP_COUNT);
        self.bufs.retain(|b| {
            total += bytes(b);
            total <= KEEP_TOTAL
        });
    }
}

/// Bytes of work buffers that dropped plans left for the next ones, both precisions: memory
/// the process holds beyond its live plans, at most 128 MiB a precision.
pub fn kept_work_bytes() -> usize {
    fn held<T: Float>() -> usize {
        let kept = T::kept().lock().unwrap_or_else(|e| e.into_inner());
        kept.bufs.iter().map(bytes).sum()
    }
    held::<f32>() + held::<f64>()
}

/// Frees the work buffers that dropped plans left ([`kept_work_bytes`]): the next plans then
/// allocate theirs afresh.
pub fn free_kept_work() {
    fn free<T: Float>() {
        T::kept()
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .bufs
            .clear();
    }
    free::<f32>();
    free::<f64>();
}

/// A buffer of at least `n` values' capacity that a dropped plan left ([`Kept::take`]).
pub(crate) fn take<T: Float>(n: usize) -> Option<Vec<Complex<T>>> {
    T::kept().lock().unwrap_or_else(|e| e.into_inner()).take(n)
}

/// Keeps `v` for a later [`take`] ([`Kept::keep`]).
pub(crate) fn keep<T: Float>(v: Vec<Complex<T>>) {
    T::kept().lock().unwrap_or_else(|e| e.into_inner()).keep(v)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A kept buffer comes back to a request it is large enough for, the smallest that is,
    /// and only once; one beyond the largest kept is not kept, and the smallest make room
    /// past the total.
    #[test]
    fn the_smallest_fitting_buffer_comes_back_once() {
        let mut kept = Kept::<f64>::default();
        let (a, b) = (Vec::with_capacity(1000), Vec::with_capacity(5000));
        let (pa, pb) = (a.as_ptr(), b.as_ptr());
        kept.keep(a);
        kept.keep(b);
        assert_eq!(kept.take(900).map(|v| v.as_ptr()), Some(pa));
        assert_eq!(kept.take(900).map(|v| v.as_ptr()), Some(pb));
        assert!(kept.take(1).is_none());
        let values = |bytes: usize| bytes / std::mem::size_of::<Complex<f64>>();
        kept.keep(Vec::with_capacity(values(KEEP_LARGEST) + 1));
        assert!(kept.take(1).is_none());
        for _ in 0..KEEP_TOTAL / KEEP_LARGEST + 1 {
            kept.keep(Vec::with_capacity(values(KEEP_LARGEST)));
        }
        let held: usize = kept.bufs.iter().map(bytes).sum();
        assert!(
            held <= KEEP_TOTAL && held > KEEP_TOTAL - KEEP_LARGEST,
            "{held}"
        );
        for _ in 0..2 * KEEP_COUNT {
            kept.keep(Vec::with_capacity(10));
        }
        assert!(kept.bufs.len() <= KEEP_COUNT);
    }
}
