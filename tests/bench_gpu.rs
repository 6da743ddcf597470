//! `nudt bench --backend cuda|opencl`: the GPU problem set on OpenCL (PoCL in CI) prints its
//! rows, each checked against the direct sum; the options and peers that do not fit a backend,
//! and a backend that cannot run here, are usage errors (one line, exit 2). The reading of
//! cuFINUFFT's perftest is tested in the binary (`src/cli/bench/cufinufft.rs`) with a
//! stand-in script, so that it runs without a GPU.
//!
//! ```sh
//! cargo test --release --features opencl --test bench_gpu
//! ```
#![cfg(feature = "cli")]

use nudt::backend::Backend;
use serde_json::Value;
use std::process::Command;

/// Runs `nudt` with the words of `line`: (exit code, stdout, stderr).
fn nudt(line: &str) -> (Option<i32>, String, String) {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_nudt"));
    cmd.args(line.split_whitespace()).env_remove("NUDT_PROFILE");
    let out = cmd.output().expect("nudt runs");
    let text = |b: &[u8]| String::from_utf8_lossy(b).into_owned();
    (out.status.code(), text(&out.stdout), text(&out.stderr))
}

/// Asserts exit 2 with one line on stderr, `error: ` and every needle.
fn usage_error(line: &str, needles: &[&str]) {
    let (code, out, err) = nudt(line);
    assert_eq!(code, Some(2), "{line}: {err}");
    assert_eq!(err.trim_end().lines().count(), 1, "{line}: {err}");
    assert!(err.starts_with("error: "), "{err}");
    for n in needles {
        assert!(err.contains(n), "{line}: {n:?} missing from {err}");
    }
    assert!(out.is_empty(), "{line}: {out}");
}

#[test]
fn peers_and_options_that_do_not_fit_the_backend_are_usage_errors() {
    usage_error(
        "bench --compare cufinufft --peer-bin x",
        &["--compare cufinufft", "--backend cuda"],
    );
    usage_error(
        "bench --backend opencl --compare cufinufft --peer-bin x",
        &["--compare cufinufft", "--backend opencl"],
    );
    usage_error(
        "bench --backend opencl --compare finufft",
        &["--compare finufft", "--backend cpu", "cufinufft"],
    );
    usage_error(
        "bench --backend cuda --compare ducc0",
        &["--compare ducc0", "--backend cpu"],
    );
    usage_error("bench --backend cuda --compare cufinufft", &["--peer-bin"]);
    usage_error("bench --peer-bin x", &["--peer-bin", "--compare cufinufft"]);
    usage_error(
        "bench --backend opencl --plot x.svg",
        &["--plot", "--backend cpu"],
    );
    usage_error("bench --quick --scale 0.5", &["--quick", "--scale"]);
}

/// Without a GPU (or without the feature) `--backend cuda` is the backend's typed reason, as
/// for every other command, before anything runs or the peer is looked for.
#[test]
fn backend_cuda_without_a_gpu_says_why() {
    let Err(why) = Backend::Cuda.available() else {
        eprintln!("SKIPPED: a CUDA device is here");
        return;
    };
    for line in [
        "bench --backend cuda --quick",
        "bench --backend cuda --compare cufinufft --peer-bin /nonexistent",
    ] {
        usage_error(line, &["--backend cuda: ", &why.to_string()]);
    }
}

/// A problem of the GPU set for each dimension, type and precision (every row on PoCL takes
/// four minutes of CI, the 10⁸-point one alone more), at a thousandth of the points.
const ROWS: [&str; 4] = ["1d-t1-f32", "2d-t2", "3d-t2-f32", "2d-t3"];

#[test]
fn backend_opencl_runs_rows_of_the_gpu_set() {
    if let Err(e) = Backend::OpenCl.available() {
        let required = std::env::var("NUDT_REQUIRE_OPENCL").is_ok_and(|v| v == "1");
        assert!(!required, "OpenCL is required here but: {e}");
        eprintln!("SKIPPED opencl: {e}");
        return;
    }
    let line = format!(
        "bench --backend opencl --scale 1e-3 --repeats 1 --sample 10 --json --only {}",
        ROWS.join(",")
    );
    let (code, out, err) = nudt(&line);
    assert_eq!(code, Some(0), "{err}");
    let rows: Vec<Value> = out
        .lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("{e}: {l}")))
        .collect();
    let names: Vec<&str> = rows.iter().map(|v| v["name"].as_str().unwrap()).collect();
    assert_eq!(names, ROWS);
    for v in &rows {
        assert_eq!(v["backend"], "opencl", "{v}");
        assert_eq!(v["io"], "device buffers", "{v}");
        let tol = v["tol"].as_f64().unwrap();
        let err = v["rel_error"]
            .as_f64()
            .expect("checked against the direct sum");
        assert!(err < 10.0 * tol, "{v}");
        let f = |k: &str| v[k].as_f64().unwrap_or_else(|| panic!("{k}: {v}"));
        for k in ["plan_s", "setpts_s", "setpts_again_s", "execute_s"] {
            assert!(f(k) > 0.0, "{k}: {v}");
        }
        assert!(
            (f("total_s") - f("setpts_s") - f("execute_s")).abs() < 1e-12,
            "{v}"
        );
        assert!(v["plan_device_bytes"].is_null(), "{v}");
        assert!(v["device_memory_note"]
            .as_str()
            .unwrap()
            .contains("not measurable"));
        assert!(v.get("cufinufft").is_none(), "{v}");
    }
    // The table: a header and the row.
    let (code, out, err) = nudt("bench --backend opencl --scale 1e-3 --repeats 1 --only 2d-t2");
    assert_eq!(code, Some(0), "{err}");
    for needle in [
        "--backend opencl",
        "setpts",
        "execute",
        "total",
        "2d-t2",
        "device:",
    ] {
        assert!(out.contains(needle), "{needle:?} missing from {out}");
    }
}
