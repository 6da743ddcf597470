//! Fault injection for tests of what a device failure leaves behind (docs/design.md, "When
//! the device fails"): a thread asks that the `n`-th device call it makes from now on — a
//! kernel launch, a copy, a fill, an FFT, an allocation — fail as if the driver had refused
//! it, and checks the typed error and the plan's state after every stage of set-points and
//! execute in turn.
//!
//! Compiled into every build with a GPU backend, so that the suites test the code users run:
//! a device call costs one thread-local count beside the driver's own work. Per thread, so
//! that tests running side by side do not fail one another's calls; a single-device plan
//! makes its device calls on the thread that calls it.

use std::cell::Cell;

thread_local! {
    /// The device calls this thread has made.
    static CALLS: Cell<u64> = const { Cell::new(0) };
    /// The count at which the armed call fails (0: none armed).
    static FAIL_AT: Cell<u64> = const { Cell::new(0) };
}

/// How many device calls this thread has made so far: what a test counts a stage's calls by.
#[doc(hidden)]
pub fn device_calls() -> u64 {
    CALLS.with(Cell::get)
}

/// Makes the `n`-th device call this thread makes from now on fail (once); `0` disarms.
#[doc(hidden)]
pub fn fail_device_call(n: u64) {
    let at = match n {
        0 => 0,
        n => device_calls() + n,
    };
    FAIL_AT.with(|f| f.set(at));
}

/// Counts a device call named `call` about to be made: `Err(call)` where it is the one armed
/// to fail (the backend turns it into the error the driver's refusal gives).
pub(crate) fn device_call(call: &'static str) -> Result<(), &'static str> {
    let n = CALLS.with(|c| {
        c.set(c.get() + 1);
        c.get()
    });
    match FAIL_AT.with(Cell::get) == n {
        true => {
            FAIL_AT.with(|f| f.set(0));
            Err(call)
        }
        false => Ok(()),
    }
}
