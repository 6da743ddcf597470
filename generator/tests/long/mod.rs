//! The long runs that the README's test command leaves out and CI keeps (issue 37: that
//! command within 10 minutes on 2 cores, CI within 30).

use std::io::Write;

/// Whether the long runs are on: `NUDT_LONG_TESTS=1`, which `.ci/run` sets. Without it, says
/// on stderr what `what` leaves out, written past libtest's capture so that a passing run
/// shows it too.
pub fn long_tests(what: &str) -> bool {
    let on = std::env::var("NUDT_LONG_TESTS").is_ok_and(|v| v == "1");
    if !on {
        let line = format!("SKIPPED without NUDT_LONG_TESTS=1 (CI sets it): {what}\n");
        let _ = std::io::stderr().write_all(line.as_bytes());
    }
    on
}
