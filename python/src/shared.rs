//! Plans that several Python threads call at once.
//!
//! finufft documents concurrent `execute` calls on one plan as safe, and a Python user
//! shares a plan between threads as they would any object. PyO3 hands a `&mut self` method
//! to one thread at a time and raises "Already borrowed" in the others, so the classes are
//! `frozen` (methods take `&self`) and keep their runtime plan behind [`Shared`]'s mutex.

use pyo3::exceptions::PyRuntimeError;
use pyo3::prelude::*;
use std::sync::Mutex;
use std::time::Instant;

/// A runtime plan (with whatever the binding keeps beside it), taken in turn by the calls
/// of any number of threads.
///
/// Calls wait for the plan and run on it with the GIL released, so other Python threads go
/// on meanwhile; concurrent `execute`s of one plan run one after the other, and a `setpts`
/// waits for the `execute` in progress (and the next `execute` for it). They take turns
/// rather than run side by side because the runtime's plans hold their grids and sorted
/// points as working state (`&mut self`) and each call already uses all the threads (or the
/// GPU stream) the plan was given. The mutex is only ever held without the GIL, inside
/// `detach`: a thread holding it never waits for the GIL, so no two threads can each wait
/// for what the other holds.
pub struct Shared<P> {
    state: Mutex<State<P>>,
}

struct State<P> {
    plan: P,
    /// Seconds the runtime spent in the last call that succeeded (by any thread).
    last_call_s: f64,
}

/// Why a call on a [`Shared`] plan failed.
enum Failure<E> {
    /// An earlier call panicked while it held the plan.
    Poisoned,
    Runtime(E),
}

fn poisoned() -> PyErr {
    PyRuntimeError::new_err(
        "this plan panicked in an earlier call and may be inconsistent: make a new one",
    )
}

impl<P: Send> Shared<P> {
    pub fn new(plan: P) -> Self {
        Shared {
            state: Mutex::new(State {
                plan,
                last_call_s: 0.0,
            }),
        }
    }

    /// Runs `work` on the plan without the GIL, in turn with the other calls, and keeps the
    /// seconds it took as `last_call_s`; a runtime error becomes a Python exception by
    /// `to_py`.
    pub fn run<R: Send, E: Send>(
        &self,
        py: Python<'_>,
        to_py: fn(Python<'_>, E) -> PyErr,
        work: impl Send + FnOnce(&mut P) -> Result<R, E>,
    ) -> PyResult<R> {
        py.detach(|| {
            let mut state = self.state.lock().map_err(|_| Failure::Poisoned)?;
            let t0 = Instant::now();
            let r = work(&mut state.plan).map_err(Failure::Runtime)?;
            state.last_call_s = t0.elapsed().as_secs_f64();
            Ok(r)
        })
        .map_err(|f| match f {
            Failure::Poisoned => poisoned(),
            Failure::Runtime(e) => to_py(py, e),
        })
    }

    /// `f` of the plan (a quick look: attributes, repr), in turn with the other calls.
    pub fn with<R: Send>(&self, py: Python<'_>, f: impl Send + FnOnce(&mut P) -> R) -> PyResult<R> {
        py.detach(|| self.state.lock().ok().map(|mut s| f(&mut s.plan)))
            .ok_or_else(poisoned)
    }

    /// Seconds the runtime spent in the last call that succeeded.
    pub fn last_call_s(&self, py: Python<'_>) -> PyResult<f64> {
        py.detach(|| self.state.lock().ok().map(|s| s.last_call_s))
            .ok_or_else(poisoned)
    }
}
