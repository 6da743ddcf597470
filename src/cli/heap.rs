//! The `nudt` binary's allocator: the system's, counting the bytes it has handed out and not
//! yet had back, so that `nudt bench --soak` can report the live heap exactly where RSS
//! only bounds it (RSS moves with the allocator's free lists, fragmentation and page
//! reuse; a leak of a few bytes a cycle hides in it). It counts what Rust code allocates —
//! nudt and its Rust dependencies (rustfft, rayon, cudarc's and opencl3's wrappers) — not
//! what C libraries (a GPU driver, PoCL, cuFFT) take from `malloc` themselves; those show
//! only in RSS.
//!
//! One relaxed atomic add per allocation and per free: nudt's hot loops do not allocate.

use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicIsize, Ordering::Relaxed};

/// The system allocator, counting.
pub struct Counting;

static LIVE: AtomicIsize = AtomicIsize::new(0);

/// The bytes allocated and not yet freed, by the sizes asked for (the allocator's own
/// rounding and headers not counted).
pub fn live_bytes() -> usize {
    LIVE.load(Relaxed).max(0) as usize
}

fn add(p: *mut u8, bytes: isize) -> *mut u8 {
    if !p.is_null() {
        LIVE.fetch_add(bytes, Relaxed);
    }
    p
}

// SAFETY: every call is passed to `System` unchanged; the counts only observe it.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        // SAFETY: the caller's contract, passed on.
        add(unsafe { System.alloc(layout) }, layout.size() as isize)
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        // SAFETY: as above.
        add(
            unsafe { System.alloc_zeroed(layout) },
            layout.size() as isize,
        )
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: as above.
        unsafe { System.dealloc(ptr, layout) };
        LIVE.fetch_sub(layout.size() as isize, Relaxed);
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        // SAFETY: as above; on failure the old block stays allocated and nothing changes.
        let p = unsafe { System.realloc(ptr, layout, new_size) };
        add(p, new_size as isize - layout.size() as isize)
    }
}
