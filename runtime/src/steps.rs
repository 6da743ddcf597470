//! Wall time of each step of the CPU transforms (the sort, spreading, the FFT passes, the
//! correction, interpolation, a type 3's phases), for finding the steps that leave threads
//! idle as the thread count grows: a step that takes as long on 16 threads as on 2 runs on
//! few of them. Off unless [`STEPS_ENV`] names a file; then each plan call (set-points, an
//! execute) appends a line to it: the call, the plan's threads, its milliseconds and each
//! step's, summed over the call (the transforms of a stack run at once, so their steps'
//! times add up past the call's).

use std::io::Write;
use std::sync::{Mutex, OnceLock};
use std::time::Instant;

/// The environment variable naming the file the step times are appended to.
pub const STEPS_ENV: &str = "NUDT_STEPS";

/// The open file and the steps of the call under way.
struct Log {
    file: std::fs::File,
    steps: Vec<(&'static str, f64)>,
}

/// The log, if [`STEPS_ENV`] names a file that opens: checked once per process.
fn log() -> Option<&'static Mutex<Log>> {
    static LOG: OnceLock<Option<Mutex<Log>>> = OnceLock::new();
    LOG.get_or_init(|| {
        let path = std::env::var_os(STEPS_ENV)?;
        let file = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(path)
            .ok()?;
        let steps = Vec::new();
        Some(Mutex::new(Log { file, steps }))
    })
    .as_ref()
}

/// Runs `f`, adding its wall time to step `name` of the call under way.
pub(crate) fn step<R>(name: &'static str, f: impl FnOnce() -> R) -> R {
    let Some(log) = log() else { return f() };
    let start = Instant::now();
    let r = f();
    let ms = start.elapsed().as_secs_f64() * 1e3;
    let mut log = log.lock().unwrap_or_else(|e| e.into_inner());
    match log.steps.iter_mut().find(|s| s.0 == name) {
        Some(s) => s.1 += ms,
        None => log.steps.push((name, ms)),
    }
    r
}

/// Runs plan call `name` on `threads` threads, then writes its line: its time and its steps'.
pub(crate) fn call<R>(name: &'static str, threads: usize, f: impl FnOnce() -> R) -> R {
    let Some(log) = log() else { return f() };
    let start = Instant::now();
    let r = f();
    let ms = start.elapsed().as_secs_f64() * 1e3;
    let mut log = log.lock().unwrap_or_else(|e| e.into_inner());
    let mut line = format!("{name} threads={threads} total={ms:.3}");
    for (step, t) in std::mem::take(&mut log.steps) {
        line += &format!(" {step}={t:.3}");
    }
    // A line lost to a full disk loses a measurement, not the transform.
    let _ = writeln!(log.file, "{line}");
    r
}
