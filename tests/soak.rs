//! `nudt bench --soak`: a short soak on the CPU, on OpenCL (PoCL in CI) and on CUDA (the
//! GPU machine; SKIPPED without a GPU unless `NUDT_REQUIRE_GPU=1`) reports its
//! cycles, the live heap at start and end (which must not grow by a byte), host memory at
//! start and end with the growth between them, device memory (or
//! why it cannot be measured), and the throughput of the first and last tenth; its options
//! that do not fit are usage errors (one line, exit 2).
//!
//! ```sh
//! cargo test --release --features opencl --test soak
//! ```
#![cfg(feature = "cli")]

use nudt::backend::Backend;
use serde_json::Value;
use std::process::Command;

/// Runs `nudt` with `args`: (exit code, stdout, stderr).
fn nudt(args: &[&str]) -> (Option<i32>, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_nudt"))
        .args(args)
        .env_remove("NUDT_PROFILE")
        .output()
        .unwrap();
    (
        out.status.code(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// A short soak on `backend` as JSON, its fields checked.
fn soak(backend: &str, cycles: usize, shapes: usize) -> Value {
    let (cycles_s, shapes_s) = (cycles.to_string(), shapes.to_string());
    let args = [
        "bench",
        "--soak",
        "--backend",
        backend,
        "--cycles",
        &cycles_s,
        "--shapes",
        &shapes_s,
        "--json",
    ];
    let (code, out, err) = nudt(&args);
    assert_eq!(code, Some(0), "{err}");
    let v: Value = serde_json::from_str(out.trim()).unwrap_or_else(|e| panic!("{e}: {out}"));
    assert_eq!(v["soak"], true);
    assert_eq!(v["backend"], backend);
    assert_eq!(v["cycles"], cycles as u64);
    assert_eq!(v["shapes"], shapes as u64);
    for key in ["rss_start_bytes", "rss_end_bytes", "rss_peak_bytes"] {
        assert!(v[key].as_u64().is_some_and(|b| b > 0), "{key}: {v}");
    }
    let growth = v["rss_growth_bytes"].as_i64().expect("growth reported");
    let (start, end) = (
        v["rss_start_bytes"].as_i64().unwrap(),
        v["rss_end_bytes"].as_i64().unwrap(),
    );
    assert_eq!(growth, end - start, "{v}");
    // The live heap is exact: after the warm-up has run every shape, a cycle frees all it
    // allocates (`nudt bench --soak`'s documentation says why), so any growth is a leak.
    let (h0, h1) = (
        v["heap_live_start_bytes"]
            .as_i64()
            .expect("live heap reported"),
        v["heap_live_end_bytes"]
            .as_i64()
            .expect("live heap reported"),
    );
    assert!(h0 > 0, "{v}");
    assert_eq!(v["heap_growth_bytes"].as_i64(), Some(h1 - h0), "{v}");
    assert_eq!(h1 - h0, 0, "the live heap grew over the soak: {v}");
    let tenths = v["heap_live_by_tenth_bytes"].as_array().unwrap();
    assert!(tenths.iter().all(|b| b.as_i64() == Some(h0)), "{v}");
    for key in ["cycles_per_s_first_tenth", "cycles_per_s_last_tenth"] {
        assert!(v[key].as_f64().is_some_and(|r| r > 0.0), "{key}: {v}");
    }
    let checked = v["checked_cycles"].as_u64().unwrap();
    assert!(checked >= 10.min(cycles as u64), "{v}");
    assert!(v["max_error_over_tol"].as_f64().unwrap() <= 10.0, "{v}");
    eprintln!("{v}");
    v
}

#[test]
fn soak_reports_memory_and_throughput_on_the_cpu() {
    let v = soak("cpu", 60, 6);
    assert!(v["device_memory"].is_null());
    assert!(v["device_memory_note"]
        .as_str()
        .unwrap()
        .contains("host memory"));
    // The text report says the same.
    let (code, out, err) = nudt(&["bench", "--soak", "--cycles", "20", "--shapes", "3"]);
    assert_eq!(code, Some(0), "{err}");
    for needle in [
        "20 cycles on cpu",
        "host memory (RSS):",
        "live heap (Rust allocations):",
        "at start",
        "at end, growth",
        "throughput: first tenth",
        "last tenth",
        "accuracy:",
    ] {
        assert!(out.contains(needle), "{needle:?} missing from:\n{out}");
    }
}

#[test]
fn soak_on_opencl_says_what_is_measurable() {
    if !Backend::OpenCl.is_built() {
        let (code, _, err) = nudt(&["bench", "--soak", "--backend", "opencl"]);
        assert_eq!(code, Some(2), "{err}");
        assert!(err.contains("`opencl` feature"), "{err}");
        return;
    }
    if let Err(e) = Backend::OpenCl.available() {
        let required = std::env::var("NUDT_REQUIRE_OPENCL").is_ok_and(|v| v == "1");
        assert!(!required, "OpenCL is required here but: {e}");
        eprintln!("SKIPPED opencl: {e}");
        return;
    }
    // One shape: PoCL builds its programs (seconds each on a fresh cache) in the warm-up.
    let v = soak("opencl", 30, 1);
    assert!(v["device"].as_str().unwrap().starts_with("opencl ("), "{v}");
    assert!(v["device_memory"].is_null());
    let note = v["device_memory_note"].as_str().unwrap();
    assert!(note.contains("not measurable"), "{note}");
}

#[test]
fn soak_on_cuda_holds_host_and_device_memory_flat() {
    if !Backend::Cuda.is_built() {
        return;
    }
    if let Err(e) = Backend::Cuda.available() {
        let required = std::env::var("NUDT_REQUIRE_GPU").is_ok_and(|v| v == "1");
        assert!(!required, "NUDT_REQUIRE_GPU=1 but: {e}");
        eprintln!("SKIPPED cuda: {e}");
        return;
    }
    // All 24 shapes: more FFT plans than the cuFFT shelf keeps (16), so plans are shelved,
    // taken back and destroyed through the run, which is where the live heap once drifted.
    let v = soak("cuda", 300, 24);
    let dev = &v["device_memory"];
    let (d0, d1) = (
        dev["used_start_bytes"].as_u64(),
        dev["used_end_bytes"].as_u64(),
    );
    assert!(d0.is_some_and(|b| b > 0), "{v}");
    assert_eq!(d0, d1, "device memory grew over the soak: {v}");
}

#[test]
fn soak_options_that_do_not_fit_are_usage_errors() {
    for (args, needle) in [
        (&["bench", "--cycles", "5"][..], "--soak"),
        (&["bench", "--soak", "--cycles", "0"][..], "--cycles"),
        (&["bench", "--soak", "--shapes", "-1"][..], "--shapes"),
        (
            &["bench", "--soak", "--compare", "finufft"][..],
            "--compare",
        ),
        (&["bench", "--soak", "--backend", "tpu"][..], "tpu"),
    ] {
        let (code, out, err) = nudt(args);
        assert_eq!(code, Some(2), "{args:?}: {err}");
        assert!(out.is_empty(), "{args:?}: {out}");
        assert_eq!(err.trim_end().lines().count(), 1, "{args:?}: {err}");
        assert!(
            err.starts_with("error: ") && err.contains(needle),
            "{args:?}: {err}"
        );
    }
    if !Backend::Cuda.is_built() {
        let (code, _, err) = nudt(&["bench", "--soak", "--backend", "cuda"]);
        assert_eq!(code, Some(2), "{err}");
        assert!(err.contains("`cuda` feature"), "{err}");
    }
}
