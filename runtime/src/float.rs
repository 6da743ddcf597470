//! The scalar types a plan can run in.

use crate::kernels::KernelRegistry;
pub use crate::support::Real;
use nudt_gen::Precision;
use num_complex::Complex;
use rustfft::{Fft, FftDirection, FftNum, FftPlanner};
use std::sync::{Arc, Mutex, OnceLock};

/// f32 or f64: generated kernels, FFTs and complex arithmetic all available.
pub trait Float: KernelRegistry + FftNum + num_traits::Float + Default {
    const PRECISION: Precision;

    /// rustfft's plans for `lengths`, from the process's planner of this precision, which
    /// shares twiddles and inner transforms between equal factors and keeps every plan it
    /// made: a plan made again for a length seen before (the next NUFFT plan of a
    /// reconstruction loop, a batch's transforms) costs a lookup instead of its twiddle
    /// tables. The plans kept are one per length and direction a process used.
    ///
    /// A method of each precision rather than a generic function: rustfft's planner
    /// instantiates hundreds of algorithms, and a generic call would compile them again in
    /// every crate that uses a `Plan<f64>` (release builds do not share generic
    /// instances between crates). Here they are compiled once, in this crate.
    fn fft_plans(lengths: &[usize], direction: FftDirection) -> Vec<Arc<dyn Fft<Self>>>;

    /// The work buffers of this precision that dropped plans left ([`crate::reuse`]).
    fn kept() -> &'static Mutex<crate::reuse::Kept<Self>>;
}

fn plans<T: FftNum>(
    planner: &Mutex<FftPlanner<T>>,
    lengths: &[usize],
    direction: FftDirection,
) -> Vec<Arc<dyn Fft<T>>> {
    let mut planner = planner.lock().unwrap_or_else(|e| e.into_inner());
    lengths
        .iter()
        .map(|&n| planner.plan_fft(n, direction))
        .collect()
}

impl Float for f32 {
    const PRECISION: Precision = Precision::F32;
    fn fft_plans(lengths: &[usize], direction: FftDirection) -> Vec<Arc<dyn Fft<Self>>> {
        static PLANNER: OnceLock<Mutex<FftPlanner<f32>>> = OnceLock::new();
        plans(
            PLANNER.get_or_init(|| Mutex::new(FftPlanner::new())),
            lengths,
            direction,
        )
    }

    fn kept() -> &'static Mutex<crate::reuse::Kept<Self>> {
        static KEPT: OnceLock<Mutex<crate::reuse::Kept<f32>>> = OnceLock::new();
        KEPT.get_or_init(Default::default)
    }
}

impl Float for f64 {
    const PRECISION: Precision = Precision::F64;
    fn fft_plans(lengths: &[usize], direction: FftDirection) -> Vec<Arc<dyn Fft<Self>>> {
        static PLANNER: OnceLock<Mutex<FftPlanner<f64>>> = OnceLock::new();
        plans(
            PLANNER.get_or_init(|| Mutex::new(FftPlanner::new())),
            lengths,
            direction,
        )
    }

    fn kept() -> &'static Mutex<crate::reuse::Kept<Self>> {
        static KEPT: OnceLock<Mutex<crate::reuse::Kept<f64>>> = OnceLock::new();
        KEPT.get_or_init(Default::default)
    }
}

/// `n` zero complex values in memory the system gives zeroed and untouched, asked to be
/// backed by huge pages: nothing is written here, and the first writer (a pass, in
/// parallel) faults the pages in. `vec![Complex::default(); n]` writes every value first —
/// 32 ms for the 64 MB of a gradient pass's output on a VM, as long as the pass itself.
pub fn zeroed<T: Float>(n: usize) -> Vec<Complex<T>> {
    // SAFETY: `Complex<T>` of f32 or f64 is two reals, and all-zero bits are 0 + 0i.
    unsafe { zeroed_of(n) }
}

/// [`zeroed`] for reals: the cotangents a derivative returns, one a point.
pub fn zeroed_reals<T: Float>(n: usize) -> Vec<T> {
    // SAFETY: `T` is f32 or f64, whose all-zero bits are 0.0.
    unsafe { zeroed_of(n) }
}

/// `n` values of `E` in zeroed, untouched memory advised to huge pages.
///
/// # Safety
/// All-zero bits must be a valid `E`.
unsafe fn zeroed_of<E>(n: usize) -> Vec<E> {
    if n == 0 || std::mem::size_of::<E>() == 0 {
        return Vec::new();
    }
    let layout = std::alloc::Layout::array::<E>(n).expect("a vector that fits memory");
    // SAFETY: the layout has a non-zero size; the zeroed memory holds `n` valid values (the
    // caller's promise); the vector owns the allocation, made by the global allocator with
    // the layout of `n` of them.
    let v = unsafe {
        let p = std::alloc::alloc_zeroed(layout).cast::<E>();
        if p.is_null() {
            std::alloc::handle_alloc_error(layout);
        }
        Vec::from_raw_parts(p, n, n)
    };
    crate::support::advise_huge_pages(v.as_ptr().cast(), layout.size());
    v
}

/// Views complex values as interleaved `[re, im, ..]` reals, the generated code's layout.
pub fn interleaved<T>(c: &[Complex<T>]) -> &[T] {
    // SAFETY: `Complex<T>` is `#[repr(C)]` with fields `re, im`, so a slice of n of them is
    // exactly 2n consecutive `T`s with the same alignment.
    unsafe { std::slice::from_raw_parts(c.as_ptr().cast::<T>(), 2 * c.len()) }
}

/// Mutable counterpart of [`interleaved`].
pub fn interleaved_mut<T>(c: &mut [Complex<T>]) -> &mut [T] {
    // SAFETY: as in `interleaved`; the borrow is exclusive.
    unsafe { std::slice::from_raw_parts_mut(c.as_mut_ptr().cast::<T>(), 2 * c.len()) }
}

/// Gives `v` length `n`. A fresh allocation is filled by all threads, so the first touch of
/// its pages (the kernel zeroing them) is shared out rather than serialised; existing
/// contents are left as they are — callers that need zeros write them. Within its capacity
/// `v` is cut or extended in place: a buffer that serves grids of several sizes in turn
/// (the type 3 engines of a plan with a point set per transform) is allocated and faulted
/// in once.
pub fn resize_parallel<T: Float>(v: &mut Vec<Complex<T>>, n: usize) {
    use rayon::prelude::*;
    if n <= v.len() {
        v.truncate(n);
    } else if n <= v.capacity() {
        let more = n - v.len();
        v.par_extend(rayon::iter::repeat_n(Complex::default(), more).with_min_len(GRAIN));
    } else if let Some(mut kept) = crate::reuse::take::<T>(n) {
        crate::reuse::keep(std::mem::take(v));
        kept.truncate(n);
        let more = n - kept.len();
        kept.par_extend(rayon::iter::repeat_n(Complex::default(), more).with_min_len(GRAIN));
        *v = kept;
    } else {
        *v = Vec::new();
        let mut fresh: Vec<Complex<T>> = Vec::with_capacity(n);
        // Before the first touch, so that the fill faults in huge pages where it can.
        crate::support::advise_huge_pages(
            fresh.as_ptr().cast(),
            n * std::mem::size_of::<Complex<T>>(),
        );
        fresh.par_extend(rayon::iter::repeat_n(Complex::default(), n).with_min_len(GRAIN));
        *v = fresh;
    }
}

/// Least complex values a task of an element-wise parallel loop takes (256 KiB of f64):
/// rayon splits a loop into tasks by the threads, whatever its length, and each task wakes a
/// sleeping thread — 50–100 µs a loop on 16 threads of a virtual machine, so a grid of 135²
/// points took longer to zero in parallel than its transform's spreading did.
pub const GRAIN: usize = 1 << 14;

/// Rows of `row` values a task of a parallel loop over rows takes: at least one, and
/// [`GRAIN`] values in all.
pub fn rows_per_task(row: usize) -> usize {
    (GRAIN / row.max(1)).max(1)
}

/// `v` zeroed in parallel, [`GRAIN`] values a task (the spreaders' own zeroing).
pub fn zero_parallel<T: Float>(v: &mut [Complex<T>]) {
    crate::support::zero(interleaved_mut(v));
}

/// A pointer that tasks of a parallel loop share to write disjoint elements: column batches
/// of an FFT ([`crate::fft`]), modes scattered to their grid points ([`crate::uniform`]).
/// Each use says why its writes are disjoint.
pub(crate) struct SyncPtr<T>(pub *mut T);
// SAFETY: the users write disjoint elements, each from one task.
unsafe impl<T> Send for SyncPtr<T> {}
unsafe impl<T> Sync for SyncPtr<T> {}
impl<T> SyncPtr<T> {
    pub fn get(&self) -> *mut T {
        self.0
    }
}
