//! Integration tests of the `nudt` binary: every command, its bad inputs (one line on stderr,
//! exit code 2), and a `transform` round trip against the library.

use assert_cmd::Command;
use npyz::WriterBuilder;
use nudt::num_complex::Complex64;
use nudt::{Options, Plan, Strategy, TransformType};
use std::path::{Path, PathBuf};

fn nudt() -> Command {
    let mut c = Command::cargo_bin("nudt").expect("the nudt binary is built");
    c.env_remove("NUDT_PYTHON");
    c.env_remove("NUDT_PROFILE");
    c
}

/// `nudt` with the words of `line` (split at white space) as its arguments.
fn nudt_with(line: &str) -> Command {
    let mut c = nudt();
    c.args(line.split_whitespace());
    c
}

/// Runs and returns (exit code, stdout, stderr).
fn run(cmd: &mut Command) -> (i32, String, String) {
    let out = cmd.output().expect("runs");
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// Runs, asserts exit code 0 and returns (stdout, stderr).
fn run_ok(cmd: &mut Command) -> (String, String) {
    let (code, out, err) = run(cmd);
    assert_eq!(code, 0, "{err}");
    (out, err)
}

/// Runs, asserts exit code 0 and returns stdout read as one JSON value.
fn run_json(cmd: &mut Command) -> serde_json::Value {
    let (out, _) = run_ok(cmd);
    serde_json::from_str(out.trim()).unwrap_or_else(|e| panic!("{e}: {out}"))
}

/// Asserts that `text` contains every `needle`.
fn assert_contains(text: &str, needles: &[&str]) {
    for n in needles {
        assert!(text.contains(n), "{n:?} missing from:\n{text}");
    }
}

/// Asserts a usage error: exit 2 and exactly one line on stderr, `error: ` and every
/// `needle`; returns stdout.
fn assert_usage_error(cmd: &mut Command, needles: &[&str]) -> String {
    let (code, out, err) = run(cmd);
    assert_eq!(code, 2, "expected exit code 2; stderr: {err}");
    assert_eq!(
        err.trim_end().lines().count(),
        1,
        "one line expected: {err}"
    );
    assert!(err.starts_with("error: "), "{err}");
    assert_contains(&err, needles);
    out
}

fn save_f64(path: &Path, v: &[f64]) {
    npyz::to_file_1d(path, v.iter().copied()).unwrap();
}

fn save_c64(path: &Path, shape: &[u64], v: &[Complex64]) {
    save_shaped(path, shape, v);
}

/// `v` as an .npy file of `shape`.
fn save_shaped<T: npyz::AutoSerialize + Copy>(path: &Path, shape: &[u64], v: &[T]) {
    let mut w = npyz::WriteOptions::new()
        .default_dtype()
        .shape(shape)
        .writer(std::io::BufWriter::new(
            std::fs::File::create(path).unwrap(),
        ))
        .begin_nd()
        .unwrap();
    w.extend(v.iter().copied()).unwrap();
    w.finish().unwrap();
}

fn load_c64(path: &Path) -> (Vec<u64>, Vec<Complex64>) {
    let bytes = std::fs::read(path).unwrap();
    let npy = npyz::NpyFile::new(&bytes[..]).unwrap();
    let shape = npy.shape().to_vec();
    (shape, npy.into_vec::<Complex64>().unwrap())
}

fn rel_err(a: &[Complex64], b: &[Complex64]) -> f64 {
    nudt::direct::rel_error(a, b)
}

/// Deterministic test data: `m` points per dimension and strengths.
fn data(dim: usize, m: usize) -> (Vec<Vec<f64>>, Vec<Complex64>) {
    let g = [0.754_877_666_2, 0.569_840_291, 0.438_579_6];
    let x = (0..dim)
        .map(|d| {
            (0..m)
                .map(|j| {
                    ((j as f64 + 0.5) * g[d]).fract() * std::f64::consts::TAU - std::f64::consts::PI
                })
                .collect()
        })
        .collect();
    let c = (0..m)
        .map(|j| Complex64::from_polar(1.0 + (j % 7) as f64 / 7.0, j as f64 * 2.399_963))
        .collect();
    (x, c)
}

fn tmp() -> tempfile::TempDir {
    tempfile::tempdir().unwrap()
}

// ---------------------------------------------------------------- help

#[test]
fn every_command_has_help_with_an_example() {
    for cmd in ["demo", "bench", "transform", "gen", "tune"] {
        let (out, _) = run_ok(nudt().args([cmd, "--help"]));
        assert_contains(&out, &["Examples:", &format!("nudt {cmd}")]);
    }
    let (out, _) = run_ok(&mut nudt_with("--help"));
    assert_contains(&out, &["Examples:", "transform"]);
}

#[test]
fn unknown_commands_and_options_are_one_line_errors() {
    assert_usage_error(&mut nudt_with("frobnicate"), &["frobnicate"]);
    assert_usage_error(&mut nudt_with("demo --bogus"), &["--bogus"]);
    assert_usage_error(
        &mut nudt_with("transform --type 4 --points x.npy --out o.npy"),
        &["--type"],
    );
    assert_usage_error(&mut nudt_with("transform --type 1"), &["--points"]);
}

// ---------------------------------------------------------------- demo

#[test]
fn demo_reports_choices_timings_and_errors() {
    let (out, _) = run_ok(&mut nudt_with("demo --scale 0.02 --sample 20"));
    assert_contains(
        &out,
        &[
            "machine:",
            // A fiftieth of the points is sparse on these grids: σ below 2, a wider kernel.
            "width 11",
            "upsampling 1.25",
            "fine grid",
            "set points",
            "execute",
            "points/s",
            "relative l2",
        ],
    );
    assert!(!out.contains("ABOVE TOLERANCE"), "{out}");
}

#[test]
fn demo_without_a_sample_says_the_error_was_not_checked() {
    let (out, _) = run_ok(&mut nudt_with("demo --scale 0.002 --sample 0"));
    assert_eq!(out.matches("not checked (--sample 0)").count(), 3, "{out}");
    assert!(
        !out.contains("NaN") && !out.contains("ABOVE TOLERANCE"),
        "{out}"
    );
}

// ---------------------------------------------------------------- bench

#[test]
fn bench_json_lines_have_the_shared_keys() {
    let dir = tmp();
    let svg = dir.path().join("bench.svg");
    let (out, _) = run_ok(
        bench_cmd("2d-t1,3d-t2", "0.001", "10")
            .args(["--json", "--plot"])
            .arg(&svg),
    );
    let lines: Vec<serde_json::Value> = out
        .lines()
        .map(|l| serde_json::from_str(l).expect("one JSON object per line"))
        .collect();
    assert_eq!(lines.len(), 2);
    assert_eq!(lines[0]["name"], "2d-t1");
    for l in &lines {
        for k in [
            "plan_s",
            "setpts_s",
            "execute_s",
            "total_s",
            "points_per_s",
            "rel_error",
            "width",
            "fine_grid",
        ] {
            assert!(l.get(k).is_some(), "missing {k}: {l}");
        }
        let e = l["rel_error"].as_f64().unwrap();
        assert!(e < 1e-4, "{l}");
        let total = l["total_s"].as_f64().unwrap();
        assert!(
            (l["points_per_s"].as_f64().unwrap() - l["points"].as_f64().unwrap() / total).abs()
                < 1e-6 * l["points_per_s"].as_f64().unwrap()
        );
    }
    let text = std::fs::read_to_string(&svg).unwrap();
    assert!(text.contains("<svg") && text.contains("2d-t1"));
}

/// `bench --per-transform`: a JSON line per problem with every way's times, the per-transform
/// plan checked against the direct sum and against the plans per transform; FINUFFT is the
/// only peer it takes.
#[test]
fn bench_per_transform_times_every_way() {
    let (out, _) = run_ok(&mut nudt_with(
        "bench --per-transform --batch 2 --repeats 1 --scale 0.001 --threads 2 --json",
    ));
    let lines: Vec<serde_json::Value> = out
        .lines()
        .map(|l| serde_json::from_str(l).expect("one JSON object per line"))
        .collect();
    assert_eq!(lines.len(), 12, "{out}");
    for l in &lines {
        assert_eq!(l["bench"], "per-transform");
        assert_eq!(l["batch"], 2);
        for way in [
            "one_plan",
            "separate_plans",
            "looped_plan",
            "one_plan_one_shot",
            "separate_plans_one_shot",
        ] {
            assert!(
                l["ways"][way]["run_s"].as_f64().unwrap() > 0.0,
                "{way}: {l}"
            );
        }
        assert!(
            l["one_shot_separate_over_one"].as_f64().unwrap() > 0.0,
            "{l}"
        );
        assert!(l["rel_error"].as_f64().unwrap() < 1e-5, "{l}");
        // Type 3's one plan takes the kernel of the widest pair of sets, the separate plans
        // each their own: both within tolerance, not equal to rounding.
        let same = if l["type"] == 3 { 1e-5 } else { 1e-12 };
        assert!(l["separate_rel_diff"].as_f64().unwrap() < same, "{l}");
        assert!(l["finufft"].is_null(), "{l}");
    }
    assert_eq!(lines[0]["points"], 10);
    assert_eq!(lines[9]["modes"], serde_json::json!([64, 64, 64]));
    assert_eq!(
        (&lines[10]["type"], &lines[10]["dim"]),
        (&3.into(), &2.into())
    );
    assert_eq!(
        (&lines[11]["type"], &lines[11]["dim"]),
        (&3.into(), &3.into())
    );
    assert_usage_error(
        &mut nudt_with("bench --per-transform --compare ducc0"),
        &["--per-transform", "finufft"],
    );
    assert_usage_error(
        &mut nudt_with("bench --per-transform --only 2d-t1"),
        &["--only"],
    );
}

#[test]
fn bench_table_and_custom_problems() {
    let dir = tmp();
    let file = dir.path().join("p.toml");
    std::fs::write(
        &file,
        "[[problem]]\nname = \"tiny-1d\"\ntype = 1\nmodes = [64]\npoints = 2000\ntol = 1e-9\nprecision = \"f64\"\n\n\
         [[problem]]\nname = \"tiny-3\"\ntype = 3\ndim = 1\npoints = 500\ntol = 1e-4\nprecision = \"f32\"\n",
    )
    .unwrap();
    let png = dir.path().join("b.png");
    let (out, _) = run_ok(
        nudt_with("bench --problems")
            .arg(&file)
            .args(["--repeats", "1", "--plot"])
            .arg(&png),
    );
    assert_contains(&out, &["tiny-1d", "tiny-3", "points/s"]);
    let bytes = std::fs::read(&png).unwrap();
    assert_eq!(&bytes[1..4], b"PNG");
}

#[test]
fn bench_bad_inputs() {
    let dir = tmp();
    for (args, needles) in [
        ("--only nope", &["--only", "nope", "2d-t1"][..]),
        ("--scale -1", &["--scale"]),
        ("--scale 1e6", &["--scale", "1000"]),
        ("--plot x.gif", &["--plot", ".svg"]),
        ("--compare nfft", &["--compare"]),
    ] {
        assert_usage_error(&mut nudt_with(&format!("bench {args}")), needles);
    }
    let problems = |file: &Path, needles: &[&str]| {
        assert_usage_error(nudt_with("bench --problems").arg(file), needles);
    };
    problems(
        &dir.path().join("missing.toml"),
        &["--problems", "missing.toml"],
    );
    let bad = dir.path().join("bad.toml");
    std::fs::write(
        &bad,
        "[[problem]]\nname = \"x\"\ntype = 1\npoints = 10\ntol = 1e-6\n",
    )
    .unwrap();
    problems(&bad, &["bad.toml", "'x'", "modes"]);
    std::fs::write(&bad, "[[problem]\nname = 1").unwrap();
    problems(&bad, &["bad.toml:1"]);
    // A fixed σ is the GPU set's, measured without peers.
    std::fs::write(
        &bad,
        "[[problem]]\nname = \"x\"\ntype = 1\nmodes = [64]\npoints = 10\ntol = 1e-6\nupsampfac = 1.5\n",
    )
    .unwrap();
    problems(&bad, &["'x'", "upsampfac", "--backend cuda|opencl"]);
}

#[test]
fn bench_refuses_problems_too_large_for_memory_before_running_any() {
    let dir = tmp();
    let file = dir.path().join("huge.toml");
    let small =
        "[[problem]]\nname = \"small\"\ntype = 1\nmodes = [16]\npoints = 100\ntol = 1e-6\n\n";
    // 10^15 points: petabytes of coordinates.
    std::fs::write(
        &file,
        format!("{small}[[problem]]\nname = \"huge\"\ntype = 2\nmodes = [64, 64]\npoints = 1000000000000000\ntol = 1e-6\n"),
    )
    .unwrap();
    let out = assert_usage_error(
        nudt_with("bench --problems").arg(&file),
        &["'huge'", "GiB", "memory"],
    );
    assert!(!out.contains("small"), "nothing runs first: {out}");
    // Modes whose product overflows usize.
    std::fs::write(
        &file,
        "[[problem]]\nname = \"wide\"\ntype = 1\nmodes = [4294967296, 4294967296, 4294967296]\npoints = 10\ntol = 1e-6\n",
    )
    .unwrap();
    assert_usage_error(
        nudt_with("bench --problems").arg(&file),
        &["'wide'", "overflow"],
    );
    // The built-in set scaled past memory (10^7 points × 1000 in 3-D).
    assert_usage_error(
        &mut nudt_with("bench --only 3d-t1 --scale 1000"),
        &["'3d-t1'", "memory", "--scale"],
    );
}

/// A problems file in a temporary directory: the problem `name` (the rest of its
/// `[[problem]]` table in `body`), then a tiny one named `tiny`.
fn beside_tiny(name: &str, body: &str) -> (tempfile::TempDir, PathBuf) {
    let dir = tmp();
    let path = dir.path().join("problems.toml");
    let tiny = "type = 1\nmodes = [16]\npoints = 100\ntol = 1e-6\n";
    let text: String = [(name, body), ("tiny", tiny)]
        .iter()
        .map(|(name, body)| format!("[[problem]]\nname = \"{name}\"\n{body}\n"))
        .collect();
    std::fs::write(&path, text).unwrap();
    (dir, path)
}

/// `nudt bench` of the problems `only` with their points scaled by `scale`, one repeat and
/// `sample` outputs checked: the quick run the bench tests build on.
fn bench_cmd(only: &str, scale: &str, sample: &str) -> Command {
    nudt_with(&format!(
        "bench --only {only} --scale {scale} --repeats 1 --sample {sample}"
    ))
}

/// The arguments of `nudt bench` on the problems in `file`, one repeat and 5 outputs checked,
/// then the words of `extra`: the run the tests of a problems file build on.
fn bench_file_args(file: &Path, extra: &str) -> Vec<std::ffi::OsString> {
    ["bench", "--problems"]
        .into_iter()
        .map(Into::into)
        .chain([file.as_os_str().to_owned()])
        .chain(
            format!("--repeats 1 --sample 5 {extra}")
                .split_whitespace()
                .map(Into::into),
        )
        .collect()
}

/// The row of a bench table whose first cell is `name`.
fn table_row<'a>(out: &'a str, name: &str) -> &'a str {
    out.lines()
        .find(|l| l.split_whitespace().next() == Some(name))
        .unwrap_or_else(|| panic!("no row {name}:\n{out}"))
}

#[test]
fn bench_measures_each_problem_in_its_own_process() {
    let (_dir, file) = beside_tiny(
        "big",
        "type = 1\nmodes = [1000, 1000]\npoints = 1000000\ntol = 1e-6\n",
    );
    let bench = |extra: &str| run_ok(nudt().args(bench_file_args(&file, extra))).0;
    let out = bench("--threads 2");
    for name in ["big", "tiny"] {
        assert!(table_row(&out, name).ends_with(" MB"), "{out}");
    }

    let out = bench("--threads 2 --json");
    let peak: Vec<f64> = out
        .lines()
        .map(|l| {
            let v: serde_json::Value = serde_json::from_str(l).unwrap();
            v["peak_rss_bytes"]
                .as_f64()
                .unwrap_or_else(|| panic!("{v}"))
        })
        .collect();
    assert_eq!(peak.len(), 2, "{out}");
    // In one process, tiny's peak would start from what glibc kept of big's data (about half
    // of big's peak); in a process of its own it is the program's few MB.
    assert!(
        peak[1] < peak[0] / 4.0,
        "tiny {} vs big {}",
        peak[1],
        peak[0]
    );
}

#[test]
fn bench_reports_a_failing_problem_and_runs_the_others() {
    // Valid in the file, refused by the plan: f32 cannot reach 1e-12.
    let (_dir, file) = beside_tiny(
        "unreachable",
        "type = 1\nmodes = [16]\npoints = 100\ntol = 1e-12\nprecision = \"f32\"\n",
    );
    let bench = |extra: &str| {
        let mut cmd = nudt();
        cmd.args(bench_file_args(&file, extra));
        cmd
    };
    let out = assert_usage_error(&mut bench(""), &["1 problem(s) failed", "f32 can reach"]);
    assert!(table_row(&out, "unreachable").contains("failed"), "{out}");
    assert!(table_row(&out, "tiny").ends_with(" MB"), "{out}");
    assert!(
        out.contains("unreachable: problem 'unreachable': tolerance 1e-12"),
        "{out}"
    );

    // A child's error reads as the same problem's error in one process.
    let errors: Vec<serde_json::Value> = ["--json", "--json --one-process"]
        .iter()
        .map(|extra| {
            let (code, out, err) = run(&mut bench(extra));
            assert_eq!(code, 2, "{err}");
            let lines: Vec<serde_json::Value> = out
                .lines()
                .map(|l| serde_json::from_str(l).unwrap())
                .collect();
            assert_eq!(lines.len(), 2, "{out}");
            assert!(lines[1]["peak_rss_bytes"].as_f64().unwrap() > 0.0, "{out}");
            lines[0]["error"].clone()
        })
        .collect();
    assert!(
        errors[0].as_str().unwrap().contains("f32 can reach"),
        "{errors:?}"
    );
    assert_eq!(errors[0], errors[1]);
}

#[cfg(target_os = "linux")]
#[test]
fn bench_reports_a_problem_whose_process_dies() {
    // 240 MB of points, then 480 MB of strengths: past the 600 MB address space below, so the
    // allocation fails and aborts the problem's process.
    let (_dir, file) = beside_tiny(
        "hog",
        "type = 1\nmodes = [16]\npoints = 30000000\ntol = 1e-6\n",
    );
    let (code, out, err) = run(Command::new("sh")
        .args(["-c", "ulimit -v 600000 && exec \"$0\" \"$@\""])
        .arg(assert_cmd::cargo::cargo_bin("nudt"))
        .args(bench_file_args(&file, "--threads 2")));
    assert_eq!(code, 2, "{err}");
    assert_contains(&err, &["hog: its process ended", "memory allocation"]);
    assert!(table_row(&out, "hog").contains("failed"), "{out}");
    assert!(table_row(&out, "tiny").ends_with(" MB"), "{out}");
}

#[test]
fn bench_json_into_a_closed_pipe_exits_quietly() {
    let mut child = std::process::Command::new(assert_cmd::cargo::cargo_bin("nudt"))
        .args("bench --only 2d-t1 --scale 0.001 --repeats 1 --sample 1 --json".split_whitespace())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    // Like `| head -0`: the reader is gone before the first line is written.
    drop(child.stdout.take());
    let out = child.wait_with_output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!err.contains("panicked"), "{err}");
    assert_eq!(out.status.code(), Some(0), "{err}");
}

/// A stand-in for benches/peer.py that checks its arguments and prints canned lines: the
/// Python `body` as peer.py in a temporary directory, with `calls` naming calls.txt beside it
/// for `body` to log to (read back by `peer_calls`). Returns the directory and the script.
fn fake_peer(body: &str) -> (tempfile::TempDir, PathBuf) {
    let dir = tmp();
    let script = dir.path().join("peer.py");
    let calls = dir.path().join("calls.txt");
    std::fs::write(&script, format!("calls = {calls:?}\n{body}")).unwrap();
    (dir, script)
}

/// What the `fake_peer` in `dir` logged to calls.txt.
fn peer_calls(dir: &tempfile::TempDir) -> String {
    std::fs::read_to_string(dir.path().join("calls.txt")).unwrap()
}

/// `bench` (a `bench_cmd`) with the words of `flags`, `--compare` among them, and the peer
/// `script`.
fn with_peer(mut bench: Command, flags: &str, script: &Path) -> Command {
    bench
        .args(flags.split_whitespace())
        .arg("--peer-script")
        .arg(script);
    bench
}

#[test]
fn bench_compare_reads_the_peer_protocol() {
    let (_dir, script) = fake_peer(
        r#"import json, sys
a = sys.argv
for flag in ["--problems", "--only", "--threads", "--repeats", "--sample", "--scale"]:
    assert flag in a, flag
assert a[a.index("--only") + 1] == "2d-t1", a
print("log line that is not JSON")
print(json.dumps({"name": "2d-t1", "plan_s": 0.001, "setpts_s": 0.002, "execute_s": 0.5,
                  "total_s": 0.503, "points_per_s": 1234.0, "rel_error": 2e-7, "peer": "finufft"}))
"#,
    );
    let compare = |flags: &str| with_peer(bench_cmd("2d-t1", "0.001", "5"), flags, &script);
    let (out, _) = run_ok(&mut compare("--compare finufft"));
    assert_contains(&out, &["finufft", "speedup", "503.0 ms"]);

    let v = run_json(&mut compare("--compare finufft --json"));
    assert_eq!(v["finufft"]["total_s"], 0.503);
    assert!(v["speedup"].as_f64().unwrap() > 0.0);
}

#[test]
fn bench_compare_runs_the_peer_once_per_problem() {
    let (dir, script) = fake_peer(
        r#"import json, sys
name = sys.argv[sys.argv.index("--only") + 1]
with open(calls, "a") as f:
    f.write(name + "\n")
if name == "2d-t3":
    sys.exit("2d-t3 went wrong")
print(json.dumps({"name": name, "plan_s": 0.001, "setpts_s": 0.002, "execute_s": 0.5,
                  "total_s": 0.503, "points_per_s": 1234.0, "rel_error": 2e-7,
                  "peak_rss_bytes": 5e7, "peer": "finufft"}))
"#,
    );
    let (out, _) = run_ok(&mut with_peer(
        bench_cmd("2d-t1,1d-t1,2d-t3", "0.001", "5"),
        "--compare finufft",
        &script,
    ));
    assert_eq!(peer_calls(&dir), "1d-t1\n2d-t1\n2d-t3\n");
    for name in ["1d-t1", "2d-t1"] {
        assert!(table_row(&out, name).contains("503.0 ms"), "{out}");
    }
    // A problem the peer fails on after it worked is that problem's failure alone.
    assert!(table_row(&out, "2d-t3").contains("failed"), "{out}");
    assert_contains(&out, &["2d-t3 (finufft)", "2d-t3 went wrong"]);
}

#[test]
fn bench_compare_without_finufft_is_a_clear_error() {
    let (dir, script) = fake_peer(
        "import sys\nopen(calls, 'a').write('called\\n')\nprint('{\"error\": \"finufft not installed: No module named finufft\"}')\nsys.exit(3)\n",
    );
    let out = assert_usage_error(
        &mut with_peer(
            bench_cmd("2d-t1,2d-t3", "0.001", "0"),
            "--compare finufft",
            &script,
        ),
        &["--compare finufft", "finufft not installed"],
    );
    // nudt's own results are still printed; the peer ran no problem after its error.
    assert_contains(&out, &["2d-t3", "points/s"]);
    assert_eq!(peer_calls(&dir), "called\n");
}

/// Whether python3 can import numpy and finufft (the real peer's needs); says the test
/// skipped where it cannot.
fn finufft_present() -> bool {
    peers_present("finufft")
}

/// Whether python3 can import numpy, tomllib and `modules` (comma-separated); says the test
/// skipped where it cannot (CI installs them: .ci/run).
fn peers_present(modules: &str) -> bool {
    let ok = std::process::Command::new("python3")
        .args(["-c", &format!("import numpy, tomllib, {modules}")])
        .output()
        .is_ok_and(|o| o.status.success());
    if !ok {
        eprintln!("SKIPPED: python3 with numpy and {modules} (pip install {modules}) not found");
    }
    ok
}

#[test]
fn bench_compare_both_peers_on_a_distribution() {
    if !peers_present("finufft, ducc0") {
        return;
    }
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("benches/peer.py");
    let (out, _) = run_ok(&mut with_peer(
        bench_cmd("2d-t1,2d-t3", "0.0001", "10"),
        "--dist clustered --compare finufft,ducc0 --json",
        &script,
    ));
    for line in out.lines() {
        let v: serde_json::Value = serde_json::from_str(line).unwrap();
        assert_eq!(v["distribution"], "clustered", "{v}");
        for peer in ["finufft", "ducc0"] {
            assert_eq!(v[peer]["distribution"], "clustered", "{v}");
            // Each peer's own error against the direct sum, at the problem's tolerance.
            assert!(v[peer]["rel_error"].as_f64().unwrap() < 1e-5, "{v}");
            assert!(v[peer]["peak_rss_bytes"].as_f64().unwrap() > 0.0, "{v}");
        }
        assert!(v["rel_error"].as_f64().unwrap() < 1e-5, "{v}");
        assert!(v["peak_rss_bytes"].as_f64().unwrap() > 0.0, "{v}");
    }
    assert_eq!(out.lines().count(), 2, "{out}");
}

/// benches/small_problems.toml (issue 38) parses and every problem runs, batches and type 3
/// included, each checked against the direct sum over its transforms' outputs, with the
/// execute again on the plan timed.
#[test]
fn bench_small_problems_run() {
    let file = Path::new(env!("CARGO_MANIFEST_DIR")).join("benches/small_problems.toml");
    let (out, _) = run_ok(
        nudt_with("bench --problems")
            .arg(&file)
            .args("--scale 0.002 --repeats 1 --sample 8 --threads 2 --json".split(' ')),
    );
    let lines: Vec<serde_json::Value> = out
        .lines()
        .map(|l| serde_json::from_str(l).expect("one JSON object per line"))
        .collect();
    assert!(lines.len() >= 20, "{out}");
    for l in &lines {
        assert!(l["rel_error"].as_f64().unwrap() < 1e-4, "{l}");
        assert!(l["execute_again_s"].as_f64().unwrap() > 0.0, "{l}");
    }
    let batches: Vec<u64> = lines.iter().filter_map(|l| l["ntransf"].as_u64()).collect();
    assert!(batches.contains(&1) && batches.iter().any(|&b| (8..=32).contains(&b)));
}

/// A batch beside both peers: they transform nudt's stack of inputs (its leading axis) and
/// meet the tolerance at the outputs nudt checked across the transforms, and each reports
/// its execute again on its plan.
#[test]
fn bench_compare_both_peers_on_a_batch() {
    if !peers_present("finufft, ducc0") {
        return;
    }
    let file = Path::new(env!("CARGO_MANIFEST_DIR")).join("benches/small_problems.toml");
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("benches/peer.py");
    let mut cmd = nudt_with("bench --problems");
    cmd.arg(&file).args(
        "--only 2d-t2-1e5-x32-clustered,2d-t3-1e5-x8 --scale 0.01 --repeats 1 --sample 20 --threads 2"
            .split(' '),
    );
    let (out, _) = run_ok(&mut with_peer(
        cmd,
        "--compare finufft,ducc0 --json",
        &script,
    ));
    for line in out.lines() {
        let v: serde_json::Value = serde_json::from_str(line).unwrap();
        assert!(v["ntransf"].as_u64().unwrap() >= 8, "{v}");
        assert!(v["rel_error"].as_f64().unwrap() < 1e-5, "{v}");
        for peer in ["finufft", "ducc0"] {
            assert!(v[peer]["rel_error"].as_f64().unwrap() < 1e-5, "{v}");
            assert!(v[peer]["execute_again_s"].as_f64().unwrap() > 0.0, "{v}");
        }
        assert!(v["speedup_again"].as_f64().unwrap() > 0.0, "{v}");
    }
    assert_eq!(out.lines().count(), 2, "{out}");
}

#[test]
fn bench_compare_shares_its_data_and_checked_outputs_with_the_peer() {
    if !peers_present("numpy") {
        return;
    }
    // The stand-in checks what it was handed against its own numpy direct sums at the shared
    // indices (type 2: at points, sign -1; type 3: at targets, sign +1), and logs it.
    let (dir, script) = fake_peer(
        r#"import json, os, sys
import numpy as np
a = sys.argv
name, d = a[a.index("--only") + 1], a[a.index("--data") + 1]
load = lambda f: np.load(os.path.join(d, f))
x, inp, s, e = load("points.npy"), load("input.npy"), load("sample.npy"), load("exact.npy")
if name == "2d-t2":
    k = np.stack(np.meshgrid(*[np.arange(n) - n // 2 for n in inp.shape], indexing="ij"))
    k = k.reshape(2, -1)
    ref = np.exp(-1j * (x[:, s].T @ k)) @ inp.reshape(-1)
else:
    ref = np.exp(1j * (load("targets.npy")[:, s].T @ x)) @ inp
rec = {"name": name, "files": sorted(os.listdir(d)), "points": list(x.shape),
       "input": list(inp.shape), "sample": list(s.shape), "exact": list(e.shape),
       "dtypes": [str(v.dtype) for v in (x, inp, s, e)],
       "diff": float(np.abs(ref - e).max() / np.abs(e).max()), "dir": d}
open(calls, "a").write(json.dumps(rec) + "\n")
print(json.dumps({"name": name, "plan_s": 0.0, "setpts_s": 0.0, "execute_s": 0.5,
                  "total_s": 0.5, "points_per_s": 1.0, "rel_error": 1e-7, "peer": "finufft"}))
"#,
    );
    let (out, _) = run_ok(&mut with_peer(
        bench_cmd("2d-t2,2d-t3", "0.0001", "7"),
        "--compare finufft",
        &script,
    ));
    let recs: Vec<serde_json::Value> = peer_calls(&dir)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(recs.len(), 2, "{out}");
    let dtypes = ["float64", "complex128", "int64", "complex128"];
    for (r, name) in recs.iter().zip(["2d-t2", "2d-t3"]) {
        assert_eq!(r["name"], name);
        assert_eq!(r["dtypes"], serde_json::json!(dtypes), "{r}");
        assert_eq!(r["sample"], serde_json::json!([7]), "{r}");
        assert_eq!(r["exact"], serde_json::json!([7]), "{r}");
        assert!(r["diff"].as_f64().unwrap() < 1e-10, "{r}");
        // Each problem's data is gone once its peers ran.
        assert!(!Path::new(r["dir"].as_str().unwrap()).exists(), "{r}");
    }
    let (t2, t3) = (&recs[0], &recs[1]);
    assert_eq!(t2["points"], serde_json::json!([2, 1000]), "{t2}");
    assert_eq!(t2["input"], serde_json::json!([1000, 1000]), "{t2}");
    assert_eq!(t3["points"], serde_json::json!([2, 100]), "{t3}");
    assert_eq!(t3["input"], serde_json::json!([100]), "{t3}");
    assert!(
        t3["files"]
            .as_array()
            .unwrap()
            .contains(&"targets.npy".into()),
        "{t3}"
    );
}

#[test]
fn bench_compare_finufft_without_a_sample_skips_both_error_checks() {
    if !finufft_present() {
        return;
    }
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("benches/peer.py");
    let v = run_json(&mut with_peer(
        bench_cmd("2d-t1", "0.0001", "0"),
        "--compare finufft --json",
        &script,
    ));
    assert!(v["rel_error"].is_null(), "{v}");
    assert!(v["finufft"]["rel_error"].is_null(), "{v}");
    assert!(v["finufft"]["total_s"].as_f64().unwrap() > 0.0, "{v}");
    assert!(v["speedup"].as_f64().unwrap() > 0.0, "{v}");
}

// ---------------------------------------------------------------- transform

/// A temporary directory with points x.npy, y.npy and strengths c.npy of a 2-D problem of `m`
/// points, and those points and strengths.
fn inputs(m: usize) -> (tempfile::TempDir, Vec<Vec<f64>>, Vec<Complex64>) {
    let dir = tmp();
    let (x, c) = data(2, m);
    save_f64(&dir.path().join("x.npy"), &x[0]);
    save_f64(&dir.path().join("y.npy"), &x[1]);
    save_c64(&dir.path().join("c.npy"), &[m as u64], &c);
    (dir, x, c)
}

#[test]
fn transform_round_trip_matches_the_library() {
    let m = 3000;
    let (dir, x, c) = inputs(m);
    let d = dir.path();
    let xs: Vec<&[f64]> = x.iter().map(|v| &v[..]).collect();
    let modes = [24usize, 17];

    // Type 1, with the JSON line.
    let v = run_json(
        nudt_with(
            "transform --type 1 --modes 24,17 --points x.npy,y.npy --strengths c.npy \
             --out f.npy --tol 1e-9 --json",
        )
        .current_dir(d),
    );
    let sum = v["plan_s"].as_f64().unwrap()
        + v["setpts_s"].as_f64().unwrap()
        + v["execute_s"].as_f64().unwrap();
    assert!((v["total_s"].as_f64().unwrap() - sum).abs() < 1e-12);
    assert_eq!(v["width"], 10);
    assert_eq!(v["modes"], serde_json::json!([24, 17]));
    assert_eq!(v["isign"], 1);
    let (shape, f) = load_c64(&d.join("f.npy"));
    assert_eq!(shape, vec![24, 17]);
    let mut plan =
        Plan::<f64>::new(TransformType::Type1, &modes, 1, 1, 1e-9, Options::default()).unwrap();
    plan.set_points(&xs).unwrap();
    // The plan layer's recipe, as the library's plan for the same points has it: 3000 points
    // outnumber the 48×34 grid points at σ = 2, so σ is raised.
    let r = &v["recipe"];
    let lib = plan.recipe();
    assert_eq!(r["transform"], 1);
    assert_eq!(r["fine_grid"], serde_json::json!(lib.fine_grid));
    assert_eq!(r["fine_grid"], v["fine_grid"]);
    assert_eq!(r["kernel"]["width"], 10);
    assert_eq!(r["kernel"]["sigma"].as_f64(), Some(lib.kernel.upsampling.0));
    assert!(lib.kernel.upsampling.0 > 2.0, "{lib:?}");
    assert_eq!(r["kernel_tol"].as_f64(), Some(1e-9));
    assert_eq!(r["max_points"].as_u64(), Some(i32::MAX as u64));
    assert_eq!(r["device"], "cpu");
    let mut want = vec![Complex64::default(); 24 * 17];
    plan.execute(&c, &mut want).unwrap();
    assert!(rel_err(&f, &want) < 1e-12, "{}", rel_err(&f, &want));
    // ...and it is the true transform (mode k at index k + N/2, isign +1).
    let which: Vec<usize> = (0..want.len()).step_by(13).collect();
    let exact = nudt::direct::type1(&xs, &c, &modes, nudt::ModeOrder::Cmcl, 1, &which);
    let got: Vec<Complex64> = which.iter().map(|&i| f[i]).collect();
    assert!(rel_err(&got, &exact) < 1e-7);

    // Type 2 of those modes, modes read from the file's shape, isign -1 by default.
    run_ok(
        nudt_with("transform --type 2 --points x.npy,y.npy --coeffs f.npy --out c2.npy --tol 1e-9")
            .current_dir(d),
    );
    let (shape, c2) = load_c64(&d.join("c2.npy"));
    assert_eq!(shape, vec![m as u64]);
    let mut plan = Plan::<f64>::new(
        TransformType::Type2,
        &modes,
        -1,
        1,
        1e-9,
        Options::default(),
    )
    .unwrap();
    plan.set_points(&xs).unwrap();
    let mut want2 = vec![Complex64::default(); m];
    plan.execute(&f, &mut want2).unwrap();
    assert!(rel_err(&c2, &want2) < 1e-12);

    // Type 3 to 1-D targets, in f32, stacked (2 transforms).
    save_f64(
        &d.join("s.npy"),
        &x[0].iter().map(|v| v * 7.0).collect::<Vec<_>>(),
    );
    let stacked: Vec<Complex64> = c.iter().copied().chain(c.iter().map(|v| v * 2.0)).collect();
    save_c64(&d.join("c2x.npy"), &[2, m as u64], &stacked);
    run_ok(
        nudt_with(
            "transform --type 3 --points y.npy --strengths c2x.npy --targets s.npy --out g.npy \
             --precision f32 --tol 1e-5",
        )
        .current_dir(d),
    );
    let bytes = std::fs::read(d.join("g.npy")).unwrap();
    let npy = npyz::NpyFile::new(&bytes[..]).unwrap();
    assert_eq!(npy.shape(), &[2, m as u64]);
    let g: Vec<nudt::num_complex::Complex32> = npy.into_vec().unwrap();
    let s: Vec<f64> = x[0].iter().map(|v| v * 7.0).collect();
    let which: Vec<usize> = (0..m).step_by(97).collect();
    let exact = nudt::direct::type3(&[&x[1]], &c, &[&s], 1, &which);
    let got: Vec<Complex64> = which
        .iter()
        .map(|&i| Complex64::new(g[i].re as f64, g[i].im as f64))
        .collect();
    assert!(rel_err(&got, &exact) < 1e-4, "{}", rel_err(&got, &exact));
    let got2: Vec<Complex64> = which
        .iter()
        .map(|&i| Complex64::new(g[m + i].re as f64, g[m + i].im as f64) / 2.0)
        .collect();
    assert!(rel_err(&got2, &exact) < 1e-4);
}

fn save_f64_shaped(path: &Path, shape: &[u64], v: &[f64]) {
    save_shaped(path, shape, v);
}

/// Points files of shape (B, M) give each transform its own set: the outputs are the
/// library's per-transform plan's, stacked on the same leading axis, for types 1, 2 and 3;
/// data that does not stack B transforms, targets without the axis and a non-finite value
/// in a set are one-line errors naming the file.
#[test]
fn transform_takes_a_point_set_per_transform() {
    let (b, m, k) = (3usize, 200usize, 50usize);
    let dir = tmp();
    let d = dir.path();
    // Transform t's points: the shared generator's, shifted by t.
    let (x, c) = data(2, b * m);
    let x: Vec<Vec<f64>> = x
        .into_iter()
        .map(|v| {
            v.iter()
                .enumerate()
                .map(|(j, p)| p + (j / m) as f64)
                .collect()
        })
        .collect();
    save_f64_shaped(&d.join("x.npy"), &[b as u64, m as u64], &x[0]);
    save_f64_shaped(&d.join("y.npy"), &[b as u64, m as u64], &x[1]);
    save_c64(&d.join("c.npy"), &[b as u64, m as u64], &c);
    let sets: Vec<Vec<&[f64]>> = (0..b)
        .map(|t| x.iter().map(|v| &v[t * m..(t + 1) * m]).collect())
        .collect();
    let sets: Vec<&[&[f64]]> = sets.iter().map(|s| &s[..]).collect();
    let library =
        |ty: TransformType, modes: &[usize], isign: i32, input: &[Complex64], n: usize| {
            let mut plan = Plan::<f64>::new(ty, modes, isign, b, 1e-9, Options::default()).unwrap();
            plan.set_points_per_transform(&sets).unwrap();
            let mut out = vec![Complex64::default(); n];
            plan.execute(input, &mut out).unwrap();
            out
        };

    let v = run_json(
        nudt_with(
            "transform --type 1 --modes 16,12 --points x.npy,y.npy --strengths c.npy \
             --out f.npy --tol 1e-9 --json",
        )
        .current_dir(d),
    );
    assert_eq!(v["ntransf"], 3);
    assert_eq!(v["per_transform"], true);
    assert_eq!(v["points"], 200);
    let (shape, f) = load_c64(&d.join("f.npy"));
    assert_eq!(shape, vec![3, 16, 12]);
    let want = library(TransformType::Type1, &[16, 12], 1, &c, b * 192);
    assert!(rel_err(&f, &want) < 1e-12, "{}", rel_err(&f, &want));

    run_ok(
        nudt_with("transform --type 2 --points x.npy,y.npy --coeffs f.npy --out v.npy --tol 1e-9")
            .current_dir(d),
    );
    let (shape, vals) = load_c64(&d.join("v.npy"));
    assert_eq!(shape, vec![3, 200]);
    let want = library(TransformType::Type2, &[16, 12], -1, &f, b * m);
    assert!(rel_err(&vals, &want) < 1e-12, "{}", rel_err(&vals, &want));

    // Type 3, 1-D: each transform its sources (row t of x.npy) and targets.
    let s: Vec<f64> = (0..b * k).map(|j| (j as f64 * 0.37).sin() * 30.0).collect();
    save_f64_shaped(&d.join("s.npy"), &[b as u64, k as u64], &s);
    let (_, g) = {
        run_ok(
            nudt_with(
                "transform --type 3 --points x.npy --targets s.npy --strengths c.npy --out g.npy \
                 --tol 1e-9",
            )
            .current_dir(d),
        );
        load_c64(&d.join("g.npy"))
    };
    assert_eq!(g.len(), b * k);
    for t in 0..b {
        let which: Vec<usize> = (0..k).collect();
        let exact = nudt::direct::type3(
            &[&x[0][t * m..(t + 1) * m]],
            &c[t * m..(t + 1) * m],
            &[&s[t * k..(t + 1) * k]],
            1,
            &which,
        );
        let e = rel_err(&g[t * k..(t + 1) * k], &exact);
        assert!(e < 1e-8, "transform {t}: {e}");
    }

    let t1 = |args: &str| {
        let mut c = nudt_with(&format!("transform --out out.npy {args}"));
        c.current_dir(d);
        c
    };
    save_c64(&d.join("c2.npy"), &[2, m as u64], &c[..2 * m]);
    assert_usage_error(
        &mut t1("--type 1 --modes 8,8 --points x.npy,y.npy --strengths c2.npy"),
        &["--strengths", "c2.npy", "(2, 200)", "3 point set"],
    );
    save_f64(&d.join("flat.npy"), &x[0][..k]);
    assert_usage_error(
        &mut t1("--type 3 --points x.npy --targets flat.npy --strengths c.npy"),
        &["--targets", "flat.npy", "(B, K)"],
    );
    let mut bad = x[1].clone();
    bad[m + 5] = f64::NAN;
    save_f64_shaped(&d.join("nan.npy"), &[b as u64, m as u64], &bad);
    assert_usage_error(
        &mut t1("--type 1 --modes 8,8 --points x.npy,nan.npy --strengths c.npy"),
        &["--points nan.npy", "non-finite", "[1, 5]"],
    );
    assert!(!d.join("out.npy").exists(), "no output after errors");
}

/// The sort's loops carry an AVX-512 copy taken at run time (`NUDT_NO_AVX512` keeps the
/// AVX2 original): both must place every point alike, so the transforms agree to the bit, and
/// both are the true transform. On a CPU without AVX-512 both runs take the original.
#[test]
fn transform_is_the_same_with_and_without_the_sorts_avx512_copy() {
    let (dir, x, c) = inputs(40_000);
    let d = dir.path();
    let transform = |out: &str| {
        nudt_with(&format!(
            "transform --type 1 --modes 96,80 --points x.npy,y.npy --strengths c.npy \
             --tol 1e-6 --threads 1 --out {out}"
        ))
    };
    // One thread: tiles spread at once add into the grid in the order they finish, which
    // moves the last bits between runs; one thread adds them in one order every time.
    run_ok(transform("wide.npy").current_dir(d));
    run_ok(
        transform("narrow.npy")
            .current_dir(d)
            .env("NUDT_NO_AVX512", "1"),
    );
    let (_, wide) = load_c64(&d.join("wide.npy"));
    let (_, narrow) = load_c64(&d.join("narrow.npy"));
    assert!(
        wide == narrow,
        "the AVX-512 sort changed the transform: {}",
        rel_err(&wide, &narrow)
    );
    let xs: Vec<&[f64]> = x.iter().map(|v| &v[..]).collect();
    let which: Vec<usize> = (0..wide.len()).step_by(101).collect();
    let exact = nudt::direct::type1(&xs, &c, &[96, 80], nudt::ModeOrder::Cmcl, 1, &which);
    let got: Vec<Complex64> = which.iter().map(|&i| wide[i]).collect();
    assert!(rel_err(&got, &exact) < 1e-5, "{}", rel_err(&got, &exact));
}

#[test]
fn transform_bad_inputs_are_one_line_errors_and_write_nothing() {
    let (dir, _, _) = inputs(100);
    let d = dir.path();
    save_f64(&d.join("short.npy"), &[0.1, 0.2]);
    save_c64(
        &d.join("m2.npy"),
        &[10, 10],
        &vec![Complex64::default(); 100],
    );
    std::fs::write(d.join("junk.npy"), b"not numpy").unwrap();
    let t1 = |args: &str| {
        let mut c = nudt_with(&format!("transform --out out.npy {args}"));
        c.current_dir(d);
        c
    };
    assert_usage_error(
        &mut t1("--type 1 --modes 8,8 --points x.npy,missing.npy --strengths c.npy"),
        &["--points", "missing.npy"],
    );
    assert_usage_error(
        &mut t1("--type 1 --modes 8,8 --points x.npy,junk.npy --strengths c.npy"),
        &["junk.npy", ".npy"],
    );
    // Wrong dtype: complex where floats are expected, and the reverse.
    assert_usage_error(
        &mut t1("--type 1 --modes 8,8 --points x.npy,c.npy --strengths c.npy"),
        &["c.npy", "float32 or float64", "<c16"],
    );
    assert_usage_error(
        &mut t1("--type 1 --modes 8,8 --points x.npy,y.npy --strengths x.npy"),
        &["--strengths", "complex"],
    );
    // Wrong shape and mismatched lengths.
    assert_usage_error(
        &mut t1("--type 1 --modes 8,8 --points x.npy,short.npy --strengths c.npy"),
        &["short.npy", "same count"],
    );
    assert_usage_error(
        &mut t1("--type 1 --modes 8,8 --points x.npy,y.npy --strengths m2.npy"),
        &["--strengths", "(100,)", "(10, 10)"],
    );
    assert_usage_error(
        &mut t1("--type 2 --modes 8,8 --points x.npy,y.npy --coeffs m2.npy"),
        &["--coeffs", "(8, 8)", "(10, 10)"],
    );
    assert_usage_error(
        &mut t1("--type 1 --modes 8 --points x.npy,y.npy --strengths c.npy"),
        &["--modes"],
    );
    // Options that do not fit the type, or the build.
    assert_usage_error(
        &mut t1("--type 2 --points x.npy,y.npy --strengths c.npy"),
        &["--strengths", "--coeffs"],
    );
    assert_usage_error(
        &mut t1("--type 3 --points x.npy --strengths c.npy"),
        &["--targets"],
    );
    #[cfg(not(feature = "cuda"))]
    assert_usage_error(
        &mut t1("--type 1 --modes 8,8 --strengths c.npy --backend cuda --points x.npy,y.npy"),
        &[
            "--backend cuda",
            "without the `cuda` feature",
            "--features cuda",
        ],
    );
    assert_usage_error(
        &mut t1(
            "--type 1 --modes 8,8 --strengths c.npy --backend cuda --threads 2 \
             --points x.npy,y.npy",
        ),
        &["--threads", "--backend cpu"],
    );
    assert_usage_error(
        &mut t1("--type 1 --modes 8,8 --points x.npy,y.npy --strengths c.npy --isign 3"),
        &["--isign"],
    );
    assert_usage_error(
        &mut t1(
            "--type 1 --modes 8,8 --points x.npy,y.npy --strengths c.npy \
             --precision f32 --tol 1e-10",
        ),
        &["--tol 1e-10 with --precision f32", "tolerance"],
    );
    // Library errors name the option behind them: a fine grid past memory...
    assert_usage_error(
        &mut t1("--type 1 --modes 10000000,10000000 --points x.npy,y.npy --strengths c.npy"),
        &["--modes 10000000,10000000", "fine grid"],
    );
    // ...and an output whose length overflows, refused before anything is planned.
    assert_usage_error(
        &mut t1("--type 1 --modes 4294967296,4294967296 --points x.npy,y.npy --strengths c.npy"),
        &["--modes 4294967296,4294967296", "output", "address space"],
    );
    assert_usage_error(
        &mut t1("--type 1 --modes 8,8 --points x.npy,y.npy --strengths c.npy --tol zero"),
        &["--tol"],
    );
    // Non-finite coordinates name the file.
    let mut x = data(1, 100).0.remove(0);
    x[7] = f64::NAN;
    save_f64(&d.join("nan.npy"), &x);
    assert_usage_error(
        &mut t1("--type 1 --modes 8,8 --points x.npy,nan.npy --strengths c.npy"),
        &["nan.npy", "index 7"],
    );
    assert!(!d.join("out.npy").exists(), "no output after errors");
    assert_no_partial_outputs(d);
}

/// Asserts that `dir` holds no `.tmp` file: no output left half written.
fn assert_no_partial_outputs(dir: &Path) {
    let partial: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n.ends_with(".tmp"))
        .collect();
    assert!(partial.is_empty(), "{partial:?}");
}

/// `--backend cuda` in a build with the feature: runs on a GPU where there is one (and agrees
/// with the CPU); elsewhere the CUDA backend's typed reason, as one line, and no output.
#[cfg(feature = "cuda")]
#[test]
fn transform_backend_cuda_runs_or_says_why_not() {
    let (dir, x, c) = inputs(500);
    let d = dir.path();
    let mut cmd = nudt_with(
        "transform --type 1 --modes 16,12 --points x.npy,y.npy --strengths c.npy --out f.npy \
         --tol 1e-9 --backend cuda --json",
    );
    cmd.current_dir(d);
    if !matches!(nudt::cuda::device_count(), Ok(n) if n > 0) {
        let (code, _, err) = run(&mut cmd);
        assert_eq!(code, 2, "{err}");
        assert_eq!(err.trim_end().lines().count(), 1, "{err}");
        assert!(err.starts_with("error: --backend cuda: "), "{err}");
        assert!(
            ["CUDA driver", "CUDA device", "CUDA library"]
                .iter()
                .any(|why| err.contains(why)),
            "not a CudaError's text: {err}"
        );
        assert!(!d.join("f.npy").exists());
        return;
    }
    let v = run_json(&mut cmd);
    assert_eq!(v["backend"], "cuda", "{v}");
    for k in [
        "width",
        "fine_grid",
        "strategy",
        "gpu",
        "bins",
        "gpu_execute_s",
    ] {
        assert!(!v[k].is_null(), "missing {k}: {v}");
    }
    let (_, f) = load_c64(&d.join("f.npy"));
    let xs: Vec<&[f64]> = x.iter().map(|v| &v[..]).collect();
    let which: Vec<usize> = (0..16 * 12).collect();
    let exact = nudt::direct::type1(&xs, &c, &[16, 12], nudt::ModeOrder::Cmcl, 1, &which);
    assert!(rel_err(&f, &exact) < 1e-7, "{}", rel_err(&f, &exact));
}

/// `--devices`: types 1 and 2 over several openings of PoCL's one device (each transform in
/// slabs, its halos and transposes through the host) against the direct sum; what a plan over
/// several devices does not run, and `--devices` on the CPU, are one-line errors.
#[cfg(feature = "opencl")]
#[test]
fn transform_over_several_devices() {
    let (dir, x, c) = inputs(2000);
    let d = dir.path();
    let t1 = "transform --type 1 --modes 24,20 --points x.npy,y.npy --strengths c.npy --tol 1e-9";
    assert_usage_error(
        nudt_with(&format!("{t1} --out f.npy --devices 0,1")).current_dir(d),
        &["--devices", "--backend cuda or opencl"],
    );
    let t1 = format!("{t1} --backend opencl");
    if let Err(e) = nudt::backend::Backend::OpenCl.available() {
        let required = std::env::var("NUDT_REQUIRE_OPENCL").is_ok_and(|v| v == "1");
        assert!(!required, "OpenCL is required here but: {e}");
        eprintln!("SKIPPED: {e}");
        return;
    }
    let xs: Vec<&[f64]> = x.iter().map(|v| &v[..]).collect();
    let v = run_json(nudt_with(&format!("{t1} --out f.npy --devices 0,0 --json")).current_dir(d));
    assert_contains(
        v["strategy"].as_str().unwrap(),
        &["each transform in slabs over 2 devices"],
    );
    let (shape, f) = load_c64(&d.join("f.npy"));
    assert_eq!(shape, vec![24, 20]);
    let which: Vec<usize> = (0..24 * 20).collect();
    let exact = nudt::direct::type1(&xs, &c, &[24, 20], nudt::ModeOrder::Cmcl, 1, &which);
    assert!(rel_err(&f, &exact) < 1e-7, "{}", rel_err(&f, &exact));
    // Type 2 of those modes over three.
    run_ok(
        nudt_with(
            "transform --type 2 --points x.npy,y.npy --coeffs f.npy --out c2.npy --tol 1e-9 \
             --backend opencl --devices 0,0,0",
        )
        .current_dir(d),
    );
    let (_, c2) = load_c64(&d.join("c2.npy"));
    let which: Vec<usize> = (0..2000).step_by(7).collect();
    let exact = nudt::direct::type2(&xs, &f, &[24, 20], nudt::ModeOrder::Cmcl, -1, &which);
    let got: Vec<Complex64> = which.iter().map(|&j| c2[j]).collect();
    assert!(rel_err(&got, &exact) < 1e-7, "{}", rel_err(&got, &exact));
    // Type 3 runs on one device; OpenCL opens its device 0 only.
    save_f64(&d.join("s.npy"), &x[0]);
    save_f64(&d.join("t.npy"), &x[1]);
    for (extra, needles) in [
        (
            "--type 3 --targets s.npy,t.npy --devices 0,0",
            &["2 devices", "type 3 runs on one device"][..],
        ),
        (
            "--type 1 --modes 24,20 --devices 0,1",
            &["OpenCL device 1"][..],
        ),
    ] {
        let line = format!(
            "transform {extra} --points x.npy,y.npy --strengths c.npy --out g.npy --backend opencl"
        );
        let (code, _, err) = run(nudt_with(&line).current_dir(d));
        assert_ne!(code, 0, "{err}");
        assert_eq!(err.trim_end().lines().count(), 1, "{err}");
        assert_contains(&err, needles);
        assert!(!d.join("g.npy").exists());
    }
}

#[test]
fn transform_output_replaces_atomically_with_a_notice() {
    let (dir, _, _) = inputs(200);
    let d = dir.path();
    std::fs::write(d.join("f.npy"), b"old contents").unwrap();
    let line = "transform --type 1 --modes 8,8 --points x.npy,y.npy --strengths c.npy --out f.npy";
    let (_, err) = run_ok(nudt_with(line).current_dir(d));
    assert_contains(&err, &["note: replaced the existing f.npy"]);
    assert_eq!(load_c64(&d.join("f.npy")).0, vec![8, 8]);
    assert_no_partial_outputs(d);
    // --quiet silences the notice; a fresh output has none.
    let (_, err) = run_ok(nudt_with(&format!("{line} --quiet")).current_dir(d));
    assert!(!err.contains("note:"), "{err}");
    std::fs::remove_file(d.join("f.npy")).unwrap();
    let (_, err) = run_ok(nudt_with(line).current_dir(d));
    assert!(!err.contains("replaced"), "{err}");
}

/// Outputs are checked before any input is read or any work is done: a folder that is
/// missing, an output that is one of the inputs, an output that is a folder.
#[test]
fn outputs_are_checked_before_any_work() {
    let (dir, _, _) = inputs(100);
    let d = dir.path();
    let x_before = std::fs::read(d.join("x.npy")).unwrap();
    let t1 = |out: &str| {
        let mut c = nudt_with(&format!(
            "transform --type 1 --modes 8,8 --points x.npy,y.npy --strengths c.npy --out {out}"
        ));
        c.current_dir(d);
        c
    };
    assert_usage_error(
        &mut t1("missing/f.npy"),
        &["--out missing/f.npy", "does not exist"],
    );
    assert_usage_error(&mut t1("x.npy"), &["--out x.npy", "input x.npy"]);
    std::fs::create_dir(d.join("sub")).unwrap();
    assert_usage_error(&mut t1("./sub/../c.npy"), &["input c.npy"]);
    assert_usage_error(&mut t1("sub"), &["--out sub", "folder"]);
    assert_eq!(std::fs::read(d.join("x.npy")).unwrap(), x_before);
    // bench --plot is refused at once, not after the benchmark.
    let started = std::time::Instant::now();
    assert_usage_error(
        nudt_with("bench --only 2d-t1 --scale 0.01 --plot missing/p.svg").current_dir(d),
        &["--plot missing/p.svg", "does not exist"],
    );
    assert!(started.elapsed().as_secs() < 5);
    std::fs::write(d.join("p.svg"), "[[problem]]\n").unwrap();
    assert_usage_error(
        nudt_with("bench --problems p.svg --plot p.svg").current_dir(d),
        &["--plot p.svg", "input p.svg"],
    );
    // gen's --out is a folder; tune's a file.
    assert_usage_error(
        nudt_with("gen --dim 1 --out x.npy").current_dir(d),
        &["--out x.npy", "is a file"],
    );
    assert_usage_error(
        nudt_with("tune --quick --dims 1 --out sub").current_dir(d),
        &["--out sub", "folder"],
    );
    assert_no_partial_outputs(d);
}

/// FINUFFT's option names, negative values reaching nudt's own checks, counts written as
/// 1e6, and --modeord.
#[test]
fn transform_takes_finufft_names_and_numbers_as_written() {
    let (dir, x, c) = inputs(300);
    let d = dir.path();
    let cmd = |args: &str| {
        let mut c = nudt_with(&format!(
            "transform --points x.npy,y.npy --strengths c.npy {args}"
        ));
        c.current_dir(d);
        c
    };
    let v = run_json(&mut cmd(
        "--type 1 --modes 1e1,8 --eps 1e-9 --nthreads 1 --output f.npy --json",
    ));
    assert_eq!(v["modes"], serde_json::json!([10, 8]), "{v}");
    assert_eq!(v["tol"], 1e-9, "{v}");
    assert_eq!(v["threads"], 1, "{v}");
    // --modeord 1: the same modes in FFT order (0..N/2-1, then -N/2..-1) in each axis.
    run_ok(&mut cmd(
        "--type 1 --modes 1e1,8 --eps 1e-9 --modeord 1 --out g.npy",
    ));
    let (_, centred) = load_c64(&d.join("f.npy"));
    let (_, fft) = load_c64(&d.join("g.npy"));
    for i in 0..10 {
        for j in 0..8 {
            let (ci, cj) = ((i + 5) % 10, (j + 4) % 8);
            assert!((fft[i * 8 + j] - centred[ci * 8 + cj]).norm() < 1e-12);
        }
    }
    let xs: Vec<&[f64]> = x.iter().map(|v| &v[..]).collect();
    let exact = nudt::direct::type1(
        &xs,
        &c,
        &[10, 8],
        nudt::ModeOrder::Fft,
        1,
        &(0..80).collect::<Vec<_>>(),
    );
    assert!(rel_err(&fft, &exact) < 1e-8);
    // Values that start with '-' get nudt's messages, not "unexpected argument".
    assert_usage_error(
        &mut cmd("--type 1 --modes 8,8 --out f.npy --tol -1"),
        &["--tol", "positive number", "'-1'"],
    );
    assert_usage_error(
        &mut cmd("--type 1 --modes -5,256 --out f.npy"),
        &["--modes", "whole number", "'-5'"],
    );
    assert_usage_error(
        &mut cmd("--type 1 --modes 8,8 --out f.npy --nthreads -2"),
        &["--threads", "'-2'"],
    );
    assert_usage_error(
        &mut cmd("--type 1 --modes 8,8 --out f.npy --modeord 2"),
        &["--modeord"],
    );
    assert_usage_error(
        &mut cmd("--type 1 --modes 2.5,8 --out f.npy"),
        &["--modes", "'2.5'"],
    );
    // A huge count is read, and then refused by nudt's size checks with the option's name.
    let (_, _, err) = run(&mut cmd("--type 1 --modes 1e12,1e12 --out big.npy"));
    assert!(
        err.starts_with("error: --modes 1000000000000,1000000000000"),
        "{err}"
    );
    assert!(!err.contains("invalid digit"), "{err}");
    assert!(!d.join("big.npy").exists());
}

/// Likely mistakes are run, with one warning line each; --quiet silences them.
#[test]
fn likely_mistakes_are_warned_about() {
    let (dir, _, c) = inputs(100);
    let d = dir.path();
    let c32: Vec<nudt::num_complex::Complex32> = c
        .iter()
        .map(|v| nudt::num_complex::Complex32::new(v.re as f32, v.im as f32))
        .collect();
    npyz::to_file_1d(d.join("c32.npy"), c32.iter().copied()).unwrap();
    save_c64(
        &d.join("m2.npy"),
        &[10, 10],
        &vec![Complex64::new(1.0, 0.0); 100],
    );
    let cores = std::thread::available_parallelism().map_or(1, usize::from);
    let cases = [
        (
            "--type 1 --modes 8,8 --points x.npy,y.npy --strengths c32.npy",
            "--strengths c32.npy: complex64 values converted to complex128",
        ),
        (
            "--type 1 --modes 8,8 --points x.npy,y.npy --strengths c.npy --precision f32",
            "complex128 values rounded to complex64",
        ),
        (
            "--type 2 --points x.npy --coeffs m2.npy",
            "shape (10, 10) read as 10 stacked 1-D transforms of 10 modes",
        ),
        (
            "--type 1 --modes 8,8 --points x.npy,y.npy --strengths c.npy --tol 10",
            "--tol 10 is very loose: kernel width 2",
        ),
        (
            &format!(
                "--type 1 --modes 8,8 --points x.npy,y.npy --strengths c.npy --threads {}",
                cores + 1
            ),
            "more than this machine's",
        ),
    ];
    for (args, says) in cases {
        let line = format!("transform --out o.npy {args}");
        let (_, err) = run_ok(nudt_with(&line).current_dir(d));
        let warnings: Vec<&str> = err.lines().filter(|l| l.starts_with("warning: ")).collect();
        assert_eq!(warnings.len(), 1, "{line}: {err}");
        assert_contains(warnings[0], &[says]);
        let (_, err) = run_ok(nudt_with(&format!("{line} --quiet")).current_dir(d));
        assert!(!err.contains("warning"), "{line}: {err}");
    }
    // An impossible tolerance names what would reach it, never what is already set.
    let err = assert_usage_error(
        nudt_with("transform --out o.npy --type 1 --modes 8,8 --points x.npy,y.npy --strengths c.npy --kernel es --upsampfac 1.25 --tol 1e-14").current_dir(d),
        &["--tol 1e-14 with --kernel es and --upsampfac 1.25", "upsampling 2 reaches it", "at least"],
    );
    assert!(err.is_empty());
}

// ---------------------------------------------------------------- gen

/// A scratch crate (kept between runs so rayon compiles once) that uses the generated module.
fn scratch_crate() -> PathBuf {
    let root = Path::new(env!("CARGO_TARGET_TMPDIR")).join("nudt-gen-crate");
    std::fs::create_dir_all(root.join("src")).unwrap();
    std::fs::write(
        root.join("Cargo.toml"),
        "[package]\nname = \"gen-check\"\nversion = \"0.0.0\"\nedition = \"2021\"\n\n[dependencies]\nrayon = \"1\"\n\n[workspace]\n",
    )
    .unwrap();
    root
}

#[test]
fn gen_rust_compiles_with_only_std_and_rayon_and_spreads_like_the_library() {
    let root = scratch_crate();
    let kernels = root.join("src/kernels");
    let _ = std::fs::remove_dir_all(&kernels);
    // A second module in the same crate (one build): 3-D in f32, the planner's schedule.
    let kernels3 = root.join("src/kernels3");
    let _ = std::fs::remove_dir_all(&kernels3);
    run_ok(nudt_with("gen --dim 3 --precision f32 --tol 1e-5 -o").arg(&kernels3));
    let modes3 = [12usize, 10, 8];
    let (x3, c3) = data(3, 1500);
    let x3: Vec<Vec<f32>> = x3
        .iter()
        .map(|v| v.iter().map(|&a| a as f32).collect())
        .collect();
    let c3: Vec<nudt::num_complex::Complex32> = c3
        .iter()
        .map(|z| nudt::num_complex::Complex32::new(z.re as f32, z.im as f32))
        .collect();
    let xs3: Vec<&[f32]> = x3.iter().map(|v| &v[..]).collect();
    // Whatever this machine's `nudt tune` profile says, gen without --profile ignores it.
    let untuned = Options {
        use_profile: false,
        ..Options::default()
    };
    let mut plan3 =
        Plan::<f32>::new(TransformType::Type1, &modes3, 1, 1, 1e-5, untuned.clone()).unwrap();
    plan3.set_points(&xs3).unwrap();
    let module3 = format!("spread_3d_w{}_f32", plan3.width());
    assert!(
        kernels3.join(format!("{module3}.rs")).is_file(),
        "{module3}.rs not generated"
    );
    let (out, _) = run_ok(
        nudt_with(
            "gen --target rust --dim 1,2 --tol 1e-6 --strategy target-driven --tile-side 32 -o",
        )
        .arg(&kernels),
    );
    assert!(out.contains("mod.rs"));
    let module = std::fs::read_to_string(kernels.join("spread_2d_w7_f64.rs")).unwrap();
    // The provenance.
    assert_contains(
        &module,
        &[
            "dim = 2",
            "width = 7",
            "tolerance 1e-6",
            "target-driven",
            "tile side = 32",
            "machine =",
        ],
    );
    let m = 2000;
    let (x, c) = data(2, m);
    let fmt = |v: &[f64]| {
        v.iter()
            .map(|a| format!("{a:?}"))
            .collect::<Vec<_>>()
            .join(", ")
    };
    let fmt32 = |v: &[f32]| {
        v.iter()
            .map(|a| format!("{a:?}f32"))
            .collect::<Vec<_>>()
            .join(", ")
    };
    let interleaved: Vec<f64> = c.iter().flat_map(|z| [z.re, z.im]).collect();
    let interleaved3: Vec<f32> = c3.iter().flat_map(|z| [z.re, z.im]).collect();
    std::fs::write(
        root.join("src/main.rs"),
        format!(
            "mod kernels;\nmod kernels3;\nuse kernels::{{fine_size, spread_2d_w7_f64 as k}};\n\
             fn main() {{\n    let x = [{}];\n    let y = [{}];\n    let c = [{}];\n\
             let n = [fine_size(32), fine_size(20)];\n    let tiles = k::bin(&n, &[k::TILE_SIDE; 2], &[&x, &y]);\n\
             let mut g = vec![0.0f64; 2 * n[0] * n[1]];\n    k::spread(&tiles, &c, &mut g);\n\
             let s: f64 = g.iter().map(|v| v * v).sum();\n    println!(\"{{}} {{}} {{s:e}}\", n[0], n[1]);\n\
             use kernels3::{module3} as k3;\n\
             let (x, y, z) = ([{}], [{}], [{}]);\n    let c = [{}];\n\
             let n = [{m0}, {m1}, {m2}].map(kernels3::fine_size);\n\
             let tiles = k3::bin(&n, &[k3::TILE_SIDE; 3], &[&x, &y, &z]);\n\
             let mut g = vec![0.0f32; 2 * n[0] * n[1] * n[2]];\n    k3::spread(&tiles, &c, &mut g);\n\
             let s: f64 = g.iter().map(|&v| v as f64 * v as f64).sum();\n\
             println!(\"{{}} {{}} {{}} {{s:e}}\", n[0], n[1], n[2]);\n}}\n",
            fmt(&x[0]),
            fmt(&x[1]),
            fmt(&interleaved),
            fmt32(&x3[0]),
            fmt32(&x3[1]),
            fmt32(&x3[2]),
            fmt32(&interleaved3),
            m0 = modes3[0],
            m1 = modes3[1],
            m2 = modes3[2],
        ),
    )
    .unwrap();
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    let built = std::process::Command::new(cargo)
        .args(["run", "--offline", "--quiet"])
        .current_dir(&root)
        .env_remove("RUSTFLAGS")
        .env_remove("CARGO_ENCODED_RUSTFLAGS")
        .env_remove("CARGO_TARGET_DIR")
        .env_remove("CARGO_BUILD_TARGET_DIR")
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&built.stdout);
    assert!(
        built.status.success(),
        "generated crate failed:\n{}",
        String::from_utf8_lossy(&built.stderr)
    );
    let lines: Vec<&str> = stdout.lines().collect();
    assert_eq!(lines.len(), 2, "{stdout}");
    let parts: Vec<&str> = lines[0].split_whitespace().collect();
    assert_eq!(&parts[..2], &["64", "40"]);
    let theirs: f64 = parts[2].parse().unwrap();

    // 3-D f32: the same fine grid and, up to f32 rounding, the same spread as the library's.
    let parts3: Vec<&str> = lines[1].split_whitespace().collect();
    let n3: Vec<usize> = parts3[..3].iter().map(|v| v.parse().unwrap()).collect();
    assert_eq!(n3, plan3.fine_grid());
    let theirs3: f64 = parts3[3].parse().unwrap();
    let g3 = plan3.spread_only(Strategy::SourceDriven, &c3).unwrap();
    let ours3: f64 = g3.iter().map(|z| z.norm_sqr() as f64).sum();
    assert!(
        (theirs3 - ours3).abs() <= 1e-4 * ours3,
        "{theirs3} vs {ours3}"
    );

    // The library's spreader on the same fine grid (32×20 modes → 64×40) with the same kernel.
    let xs: Vec<&[f64]> = x.iter().map(|v| &v[..]).collect();
    let mut plan = Plan::<f64>::new(TransformType::Type1, &[32, 20], 1, 1, 1e-6, untuned).unwrap();
    plan.set_points(&xs).unwrap();
    assert_eq!(plan.fine_grid(), vec![64, 40]);
    let g = plan.spread_only(Strategy::SourceDriven, &c).unwrap();
    let ours: f64 = g.iter().map(|z| z.norm_sqr()).sum();
    assert!((theirs - ours).abs() <= 1e-9 * ours, "{theirs} vs {ours}");
}

#[test]
fn gen_bad_inputs() {
    let dir = tmp();
    let out = dir.path().join("k");
    let gen = |args: &str, needles: &[&str]| {
        assert_usage_error(nudt_with(&format!("gen {args} -o")).arg(&out), needles);
    };
    gen(
        "--target cuda --dim 3 --cores 4",
        &["--cores", "--target rust"],
    );
    gen("--dim 3 --sm-count 100", &["--sm-count", "--target cuda"]);
    gen(
        "--target cuda --dim 3 --width 16 --shared-mem 8K",
        &["--shared-mem"],
    );
    gen("--dim 4", &["--dim"]);
    gen("--dim 2 --width 1", &["--width"]);
    gen("--dim 2 --width 7 --tol 1e-6", &["--width", "--tol"]);
    gen("--dim 2 --precision f32 --tol 1e-12", &["--tol", "f32"]);
    gen("--dim 2 --l2 lots", &["--l2"]);
    gen("--dim 2 --detect --cores 4", &["--detect", "--cores"]);
    let with_profile = |name: &str, needles: &[&str]| {
        assert_usage_error(
            nudt_with("gen --dim 2 --profile")
                .arg(dir.path().join(name))
                .arg("-o")
                .arg(&out),
            needles,
        );
    };
    with_profile("none.toml", &["--profile", "none.toml"]);
    std::fs::write(dir.path().join("bad.toml"), "format = 1\n").unwrap();
    with_profile(
        "bad.toml",
        &["--profile", "bad.toml", "not a nudt tuning profile"],
    );
    assert!(!out.exists());
}

#[test]
fn gen_for_another_machine_records_it() {
    let dir = tmp();
    let out = dir.path().join("k");
    run_ok(
        nudt_with("gen --dim 3 --width 5 --precision f32 --cores 64 --l1 32K --l2 2M --l3 256M -o")
            .arg(&out),
    );
    let module = std::fs::read_to_string(out.join("spread_3d_w5_f32.rs")).unwrap();
    assert!(
        module.contains("c64-l1_32k-l2_2048k-l3_262144k"),
        "{module}"
    );
    assert!(std::fs::read_to_string(out.join("mod.rs"))
        .unwrap()
        .contains("pub mod spread_3d_w5_f32;"));
}

#[test]
fn gen_detect_takes_this_machine_over_the_profiles() {
    let dir = tmp();
    let other = nudt::gen::Arch {
        cores: 96,
        l1: 48 << 10,
        l2: 1 << 20,
        l3: 384 << 20,
        simd_bytes: 64,
    };
    let here = nudt::plan::this_machine().key();
    assert_ne!(other.key(), here);
    let profile = saved_profile(&other, 96, Vec::new(), Vec::new());
    let file = dir.path().join("other.toml");
    std::fs::write(&file, profile.to_toml().unwrap()).unwrap();
    let machine_of = |detect: bool| {
        let out = dir.path().join(format!("k{detect}"));
        let mut cmd = nudt_with("gen --dim 1 --width 4 --profile");
        cmd.arg(&file).arg("-o").arg(&out);
        if detect {
            cmd.arg("--detect");
        }
        run_ok(&mut cmd);
        let text = std::fs::read_to_string(out.join("spread_1d_w4_f64.rs")).unwrap();
        text.lines()
            .find(|l| l.contains("machine ="))
            .expect("provenance names the machine")
            .to_string()
    };
    let from_profile = machine_of(false);
    assert!(from_profile.contains(&other.key()), "{from_profile}");
    let detected = machine_of(true);
    assert!(
        detected.contains(&here) && detected.contains("--detect"),
        "{detected}"
    );
}

// ---------------------------------------------------------------- tune

/// The profile a quick f64 `nudt tune` at 1e-6 with `threads` threads saved on `arch`.
fn saved_profile(
    arch: &nudt::gen::Arch,
    threads: usize,
    choice: Vec<nudt::profile::Choice>,
    trial: Vec<nudt::profile::Trial>,
) -> nudt::profile::Profile {
    nudt::profile::Profile {
        format: nudt::profile::FORMAT,
        nudt: "0.0.0".into(),
        machine: arch.key(),
        created_unix: 1,
        quick: true,
        threads,
        tol: 1e-6,
        precision: "f64".into(),
        arch: arch.into(),
        choice,
        trial,
    }
}

#[test]
fn tune_quick_saves_a_profile_that_gen_uses() {
    use nudt::profile::{Choice, Profile, Trial};
    let dir = tmp();
    let cache = dir.path().join("cache");
    // An earlier run's profile for this machine: a 1-D choice that tuning 2-D must keep, and a
    // 2-D one with tile side 8 (never the planner's) that it replaces and must not measure as
    // "the planner's default".
    let arch = nudt::plan::this_machine();
    let choice = |dim, tile_side| Choice {
        dim,
        strategy: "target-driven".into(),
        tile_side,
        upsampfac: 1.25,
        seconds: 1.0,
        default_seconds: 2.0,
        default_tile_side: 64,
    };
    let trial = Trial {
        dim: 1,
        ty: 1,
        strategy: "target-driven".into(),
        tile_side: 64,
        upsampfac: 1.25,
        width: 9,
        seconds: 0.5,
    };
    let earlier = saved_profile(arch, 1, vec![choice(1, 64), choice(2, 8)], vec![trial]);
    let profile = cache.join("nudt").join(format!("{}.toml", arch.key()));
    std::fs::create_dir_all(profile.parent().unwrap()).unwrap();
    std::fs::write(&profile, earlier.to_toml().unwrap()).unwrap();

    let (out, _) = run_ok(nudt_with("tune --quick --dims 2").env("XDG_CACHE_HOME", &cache));
    assert_contains(
        &out,
        &[
            "chosen for 2-D",
            "planner default",
            "kept the 1-D choice(s)",
        ],
    );
    let saved: Vec<PathBuf> = std::fs::read_dir(cache.join("nudt"))
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .collect();
    assert_eq!(saved, vec![profile.clone()]);
    let tuned = Profile::parse(&std::fs::read_to_string(&profile).unwrap()).unwrap();
    assert_eq!(tuned.choice(1), Some(&earlier.choice[0]), "1-D kept");
    assert!(tuned.trial.contains(&earlier.trial[0]));
    assert!(tuned.trial.iter().filter(|t| t.dim == 2).count() >= 8);
    let two = tuned.choice(2).expect("2-D tuned");
    // The defaults were timed with the planner's own tile side, not the old profile's 8.
    let planner = Plan::<f64>::new(
        TransformType::Type1,
        &[256, 256],
        1,
        1,
        1e-6,
        Options {
            use_profile: false,
            ..Options::default()
        },
    )
    .unwrap()
    .tile_side();
    assert_ne!(planner, 8);
    assert_eq!(two.default_tile_side, planner, "{two:?}");
    let (side, sigma) = (two.tile_side as i64, two.upsampfac);

    let out_dir = dir.path().join("k");
    run_ok(
        nudt_with("gen --dim 2 --profile")
            .arg(&profile)
            .arg("-o")
            .arg(&out_dir),
    );
    let names: Vec<String> = std::fs::read_dir(&out_dir)
        .unwrap()
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect();
    let module = names
        .iter()
        .find(|n| n.starts_with("spread_2d"))
        .expect("a 2-D spreader");
    let body = std::fs::read_to_string(out_dir.join(module)).unwrap();
    assert!(
        body.contains(&format!("pub const TILE_SIDE: usize = {side};")),
        "{body}"
    );
    assert!(
        body.contains(&format!("upsampfac = {sigma}"))
            || body.contains(&format!("upsampfac = {}", sigma as i64))
    );
    assert!(body.contains("profile ="));

    // Plans on this machine pick the profile up by themselves (here through `transform`).
    let (work, _, _) = inputs(2000);
    let transform = |cache: &Path| {
        run_json(
            nudt_with(
                "transform --type 1 --modes 40,40 --tol 1e-6 --points x.npy,y.npy \
                 --strengths c.npy --out f.npy --json",
            )
            .current_dir(work.path())
            .env("XDG_CACHE_HOME", cache),
        )
    };
    let tuned = transform(&cache);
    assert_eq!(tuned["profile"].as_str(), profile.to_str(), "{tuned}");
    let width = tuned["width"].as_u64().unwrap() as i64;
    assert_eq!(
        tuned["tile_side"].as_i64().unwrap(),
        side.max(width),
        "{tuned}"
    );
    let untuned = transform(&dir.path().join("empty"));
    assert!(untuned["profile"].is_null(), "{untuned}");
}

/// A profile saved anywhere (`nudt tune -o FILE`) is taken by `transform` and `bench` through
/// `--profile FILE` or NUDT_PROFILE; a foreign or broken one is an error, not ignored.
#[test]
fn transform_and_bench_take_a_profile_saved_anywhere() {
    let arch = nudt::plan::this_machine();
    let choice = nudt::profile::Choice {
        dim: 2,
        strategy: "target-driven".into(),
        tile_side: 48,
        upsampfac: 2.0,
        seconds: 1.0,
        default_seconds: 2.0,
        default_tile_side: 64,
    };
    let (work, _, _) = inputs(2000);
    let d = work.path();
    let mine = saved_profile(arch, 1, vec![choice], vec![])
        .to_toml()
        .unwrap();
    assert!(
        mine.contains("NUDT_PROFILE"),
        "the header says how plans read it: {mine}"
    );
    std::fs::write(d.join("p.toml"), &mine).unwrap();
    let empty = d.join("no-cache");
    let line = "transform --type 1 --modes 40,40 --points x.npy,y.npy --strengths c.npy \
                --out f.npy --json";
    let check = |v: serde_json::Value| {
        let path = v["profile"].as_str().unwrap_or_default().to_string();
        assert!(path.ends_with("p.toml"), "{v}");
        let width = v["width"].as_i64().unwrap();
        assert_eq!(v["tile_side"].as_i64().unwrap(), 48.max(width), "{v}");
    };
    check(run_json(
        nudt_with(&format!("{line} --profile p.toml"))
            .current_dir(d)
            .env("XDG_CACHE_HOME", &empty),
    ));
    check(run_json(
        nudt_with(line)
            .current_dir(d)
            .env("XDG_CACHE_HOME", &empty)
            .env("NUDT_PROFILE", "p.toml"),
    ));
    let other = mine.replace(
        &format!("machine = \"{}\"", arch.key()),
        "machine = \"elsewhere\"",
    );
    std::fs::write(d.join("other.toml"), other).unwrap();
    assert_usage_error(
        nudt_with(&format!("{line} --profile other.toml")).current_dir(d),
        &["--profile other.toml", "another machine (elsewhere)"],
    );
    assert_usage_error(
        nudt_with("bench --only 2d-t1 --profile other.toml").current_dir(d),
        &["--profile other.toml", "another machine"],
    );
    assert_usage_error(
        nudt_with(line)
            .current_dir(d)
            .env("NUDT_PROFILE", "missing.toml"),
        &["NUDT_PROFILE missing.toml", "cannot read"],
    );
}

#[test]
fn tune_bad_inputs() {
    assert_usage_error(&mut nudt_with("tune --dims 5"), &["--dims"]);
    assert_usage_error(&mut nudt_with("tune --threads 0"), &["--threads"]);
    assert_usage_error(&mut nudt_with("tune --nthreads -1"), &["--threads", "'-1'"]);
    assert_usage_error(&mut nudt_with("tune --points 1e10"), &["--points", "1e9"]);
    assert_usage_error(&mut nudt_with("tune --modes 1"), &["--modes", "2 to 1e7"]);
    assert_usage_error(
        &mut nudt_with("tune --modes 64"),
        &["--modes", "--backend cuda"],
    );
}

/// Whether NVRTC can be loaded; where it cannot, says the test skipped, unless
/// `NUDT_REQUIRE_NVRTC=1` (set by `.ci/run`) makes that a failure.
fn nvrtc_present() -> bool {
    // SAFETY: only tries to dlopen the candidate library names.
    let present = unsafe { cudarc::nvrtc::sys::is_culib_present() };
    if !present {
        let msg = "SKIPPED: NVRTC (libnvrtc.so.13) not found; see docs/gpu.md";
        assert!(
            !std::env::var("NUDT_REQUIRE_NVRTC").is_ok_and(|v| v == "1"),
            "NUDT_REQUIRE_NVRTC=1 but {msg}"
        );
        eprintln!("{msg}");
    }
    present
}

/// `--target opencl`: the same modules as OpenCL C (.cl), with their launch descriptions. The
/// OpenCL suite (runtime/tests/suite/opencl_nufft.rs) builds and runs them on PoCL.
#[test]
fn gen_opencl_writes_kernels() {
    let dir = tmp();
    let out = dir.path().join("cl");
    let (stdout, _) = run_ok(
        nudt_with("gen --target opencl --dim 1,2,3 --tol 1e-6 --precision f32 -o").arg(&out),
    );
    assert!(stdout.contains("clBuildProgram"), "{stdout}");
    let cl = generated_kernels(&out, "cl");
    assert_eq!(cl.len(), 4);
    for (path, src, _) in &cl {
        assert_contains(src, &["OpenCL C", "__kernel"]);
        assert!(
            !src.contains("__global__"),
            "CUDA left in {}",
            path.display()
        );
    }
}

/// The kernel sources `nudt gen` wrote into `dir` (files ending `.ext`, by name), each with its
/// text and the kernels its launch description (the `.json` beside it) lists, never none. The
/// FFT modules of the host programs beside them are not among them (tests/gen_host.rs).
fn generated_kernels(dir: &Path, ext: &str) -> Vec<(PathBuf, String, Vec<serde_json::Value>)> {
    let mut paths: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == ext))
        .filter(|p| {
            !p.file_name()
                .unwrap()
                .to_string_lossy()
                .starts_with("nudt_fft_")
        })
        .collect();
    paths.sort();
    paths
        .into_iter()
        .map(|path| {
            let src = std::fs::read_to_string(&path).unwrap();
            let json = std::fs::read_to_string(path.with_extension("json")).unwrap();
            let desc: serde_json::Value = serde_json::from_str(&json).unwrap();
            let kernels = desc["kernels"].as_array().unwrap().clone();
            assert!(!kernels.is_empty(), "{}", path.display());
            (path, src, kernels)
        })
        .collect()
}

#[test]
fn gen_cuda_writes_kernels_that_compile_to_ptx() {
    let dir = tmp();
    for (dim, prec, tol, gpu) in [
        ("1,2", "f64", "1e-9", ""),
        (
            "3",
            "f32",
            "1e-5",
            "--sm-count 108 --shared-mem 163K --l2 40M",
        ),
    ] {
        let out = dir.path().join(format!("cuda_{prec}"));
        let (stdout, stderr) = run_ok(
            nudt_with(&format!(
                "gen --target cuda --dim {dim} --precision {prec} --tol {tol} {gpu} -o"
            ))
            .arg(&out),
        );
        assert!(stdout.contains(".json"), "{stdout}");
        // Never silently an H100: a detected GPU, or the built-in default and how to override it.
        assert!(
            stderr.contains("GPU: detected")
                || (stderr.contains("built-in default") && stderr.contains("--sm-count")),
            "{stderr}"
        );
        let cu = generated_kernels(&out, "cu");
        // One spreading module per dimension, and the common module.
        assert_eq!(cu.len(), dim.split(',').count() + 1);
        for (path, src, kernels) in &cu {
            assert_contains(src, &["nudt", tol, "extern \"C\" __global__"]);
            if !nvrtc_present() {
                continue;
            }
            let ptx = cudarc::nvrtc::compile_ptx_with_opts(
                src,
                cudarc::nvrtc::CompileOptions {
                    options: vec!["--gpu-architecture=sm_90".into(), "--std=c++17".into()],
                    ..Default::default()
                },
            )
            .unwrap_or_else(|e| panic!("{}: {e:?}", path.display()))
            .to_src();
            for k in kernels {
                let name = k["name"].as_str().unwrap();
                assert!(
                    ptx.contains(&format!(".entry {name}(")),
                    "{name} not in {}",
                    path.display()
                );
            }
        }
    }
}

/// A build without the CUDA backend says so when asked to tune it.
#[cfg(not(feature = "cuda"))]
#[test]
fn tune_cuda_without_the_backend_is_a_usage_error() {
    assert_usage_error(
        &mut nudt_with("tune --backend cuda --quick"),
        &["--backend cuda", "--features cuda"],
    );
}
