//! What `nudt gen --target opencl|cuda` writes beside the kernels: the README.md (every
//! kernel's arguments, the launch order of a type 1 and a type 2, the host program) and the
//! standalone C host program of one type 1. The OpenCL program is built with gcc and run on
//! the OpenCL platform here (PoCL in CI), against the direct sum; the CUDA one is built with
//! gcc (no CUDA headers: it loads the driver and NVRTC at run time) and compiles its modules
//! with NVRTC, since no GPU runs it here.
//!
//! Without gcc, the OpenCL headers or a platform the OpenCL test says SKIPPED, unless
//! `NUDT_REQUIRE_OPENCL=1`; without NVRTC the CUDA test's NVRTC step says SKIPPED, unless
//! `NUDT_REQUIRE_NVRTC=1`.
//! ```sh
//! cargo test --release --test gen_host
//! ```

use assert_cmd::Command;
use std::path::Path;
use std::process::Output;

fn require(var: &str) -> bool {
    std::env::var(var).is_ok_and(|v| v == "1")
}

/// `nudt gen` with the words of `line`, into `out`; its stdout.
fn gen(line: &str, out: &Path) -> String {
    let o = Command::cargo_bin("nudt")
        .unwrap()
        .args(line.split_whitespace())
        .arg("-o")
        .arg(out)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    String::from_utf8_lossy(&o.stdout).into_owned()
}

fn text(o: &Output) -> String {
    format!(
        "exit {:?}\nstdout:\n{}\nstderr:\n{}",
        o.status.code(),
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    )
}

/// Compiles `dir/<program>.c` with gcc (warnings are errors) and `libs`; Err(log) on failure.
fn gcc(dir: &Path, program: &str, libs: &[&str]) -> Result<(), String> {
    let o = std::process::Command::new("gcc")
        .current_dir(dir)
        .args([
            "-O1", "-std=c11", "-Wall", "-Wextra", "-Werror", "-o", program,
        ])
        .arg(format!("{program}.c"))
        .args(libs)
        .output()
        .map_err(|e| format!("gcc: {e}"))?;
    if o.status.success() {
        Ok(())
    } else {
        Err(text(&o))
    }
}

/// Skips (a message) or, where `var` requires it, fails.
fn skip(var: &str, why: &str) {
    assert!(!require(var), "{var}=1 but {why}");
    eprintln!("SKIPPED: {why}");
}

/// The README names every kernel of every module with a table of its arguments, and the
/// launch order of both types.
fn check_readme(dir: &Path, ext: &str) -> String {
    let readme = std::fs::read_to_string(dir.join("README.md")).unwrap();
    let mut kernels = 0;
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().is_some_and(|e| e == "json")
            && path.with_extension(ext).exists()
            && !path.file_name().unwrap().to_string_lossy().contains("fft")
        {
            let desc: serde_json::Value =
                serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
            for k in desc["kernels"].as_array().unwrap() {
                let name = k["name"].as_str().unwrap();
                assert!(readme.contains(&format!("**`{name}`** — ")), "{name}");
                kernels += 1;
            }
        }
    }
    assert!(kernels >= 15, "{kernels} kernels");
    for needle in [
        "| # | type | name | meaning |",
        "| 0 | `unsigned` | `M` | number of nonuniform points |",
        "### Type 1 (nonuniform points → modes)",
        "### Type 2 (modes → nonuniform points)",
        "nudt_spread_sm",
        "nudt_grid_to_modes",
        "## The host program",
    ] {
        assert!(readme.contains(needle), "{needle:?} missing from README.md");
    }
    // No argument without a meaning.
    assert!(!readme.contains("| |\n"), "an argument without a meaning");
    readme
}

/// One 2-D f64 type 1 through the OpenCL host program, on whatever platform answers.
#[test]
fn opencl_host_program_runs_a_type_1() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    gen(
        "gen --target opencl --dim 2 --tol 1e-6 --precision f64",
        dir,
    );
    let readme = check_readme(dir, "cl");
    assert!(readme.contains("type1_2d_opencl.c"), "{readme}");
    assert!(readme.contains("-lOpenCL"), "{readme}");
    let program = "type1_2d_opencl";
    let source = std::fs::read_to_string(dir.join(format!("{program}.c"))).unwrap();
    assert!(source.contains("static inline void launch_nudt_spread_sm("));
    if let Err(log) = gcc(dir, program, &["-lOpenCL", "-lm"]) {
        if log.contains("CL/cl.h") || log.contains("-lOpenCL") || log.starts_with("gcc:") {
            return skip(
                "NUDT_REQUIRE_OPENCL",
                &format!("no C compiler or OpenCL headers/loader (opencl-headers, ocl-icd-opencl-dev):\n{log}"),
            );
        }
        panic!("the host program does not compile:\n{log}");
    }
    for args in [&["3000", "gm"][..], &["3000", "sm"], &["3000", "od"]] {
        let o = std::process::Command::new(dir.join(program))
            .current_dir(dir)
            .args(args)
            .output()
            .unwrap();
        let log = text(&o);
        if o.status.code() == Some(2) && log.contains("no OpenCL") {
            return skip("NUDT_REQUIRE_OPENCL", &log);
        }
        assert!(o.status.success(), "{args:?}: {log}");
        assert!(
            log.contains("relative error") && log.contains(": ok"),
            "{log}"
        );
        eprintln!("{args:?}: {}", String::from_utf8_lossy(&o.stdout).trim());
    }
}

/// The CUDA host program builds with gcc alone, and compiles its modules with NVRTC.
#[test]
fn cuda_host_program_builds_and_its_modules_compile() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    gen("gen --target cuda --dim 1 --tol 1e-5 --precision f32", dir);
    let readme = check_readme(dir, "cu");
    assert!(readme.contains("NVIDIA GPU to run"), "{readme}");
    let program = "type1_1d_cuda";
    if let Err(log) = gcc(dir, program, &["-ldl", "-lm"]) {
        if log.starts_with("gcc:") {
            return skip("NUDT_REQUIRE_NVRTC", &log);
        }
        panic!("the host program does not compile:\n{log}");
    }
    let o = std::process::Command::new(dir.join(program))
        .current_dir(dir)
        .args(["--nvrtc", "sm_90"])
        .output()
        .unwrap();
    let log = text(&o);
    if log.contains("NVRTC not found") {
        return skip("NUDT_REQUIRE_NVRTC", &log);
    }
    assert!(o.status.success(), "{log}");
    assert_eq!(
        log.matches("compiled for sm_90 by NVRTC").count(),
        3,
        "{log}"
    );
}
