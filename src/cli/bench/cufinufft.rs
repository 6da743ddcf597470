//! `nudt bench --backend cuda --compare cufinufft`: cuFINUFFT's own perftest
//! (perftest/cuda/cuperftest.cu of flatironinstitute/finufft, built from its source for this
//! GPU by the user; this repository neither holds nor builds peer code) on the GPU problem
//! set, in the same run as nudt.
//!
//! Each problem runs once per method the perftest has for it, `--n_runs` = `--repeats`, each
//! run on a fresh plan (its protocol): its `setpts` and `execute` lines' means are the
//! figures, and the best method is the one with the smallest sum. While it runs, the
//! device's used memory is sampled every 5 ms with `nvidia-smi` (where there is one); its
//! peak over the idle device's is what the perftest's process held: CUDA context,
//! libraries, plan and its arrays.

use super::super::problem::Problem;
use super::super::{fail, Result};
use serde::Serialize;
use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};

/// cuFINUFFT's methods by the perftest's `--method` number.
const METHODS: [&str; 4] = ["GM", "SM", "OD", "BG"];

/// The perftest binary.
pub struct Perftest {
    bin: PathBuf,
}

/// One method's means, in seconds.
#[derive(Clone, Debug, Serialize)]
pub struct MethodRun {
    pub method: &'static str,
    pub setpts_s: f64,
    pub execute_s: f64,
}

impl MethodRun {
    pub fn total_s(&self) -> f64 {
        self.setpts_s + self.execute_s
    }
}

/// The perftest's figures for one problem.
#[derive(Debug, Serialize)]
pub struct PeerRun {
    /// The method with the smallest set-points + execute.
    pub best: MethodRun,
    /// Every method that ran.
    pub methods: Vec<MethodRun>,
    /// Its process's peak device memory over the idle device's, where `nvidia-smi` could
    /// sample it.
    pub device_bytes: Option<usize>,
}

impl Perftest {
    /// `path` is the perftest binary, or a folder holding its source and a `cufinufft.sh`
    /// whose `build` verb builds it and prints `built PATH` last (as benches/gpu_compare.sh
    /// took it).
    pub fn locate(path: &Path) -> Result<Self> {
        let at = format!("--peer-bin {}", path.display());
        if path.is_file() {
            return Ok(Perftest {
                bin: path.to_path_buf(),
            });
        }
        if !path.is_dir() {
            return Err(fail!(
                "{at}: no such file; give cuFINUFFT's perftest binary (cuperftest), or a folder with its source and a cufinufft.sh that builds it"
            ));
        }
        let script = path.join("cufinufft.sh");
        let out = Command::new(&script)
            .arg("build")
            .stdin(Stdio::null())
            .output()
            .map_err(|e| fail!("{at}: cannot run {}: {e}", script.display()))?;
        let text = String::from_utf8_lossy(&out.stdout);
        let last = |t: &str| {
            t.lines()
                .rev()
                .find(|l| !l.trim().is_empty())
                .map(str::trim)
                .map(String::from)
        };
        if !out.status.success() {
            let said = last(&String::from_utf8_lossy(&out.stderr)).or_else(|| last(&text));
            return Err(fail!(
                "{at}: `{} build` failed ({}): {}",
                script.display(),
                out.status,
                said.unwrap_or_default()
            ));
        }
        match last(&text)
            .as_deref()
            .and_then(|l| l.strip_prefix("built "))
        {
            Some(bin) if Path::new(bin.trim()).is_file() => Ok(Perftest {
                bin: PathBuf::from(bin.trim()),
            }),
            _ => Err(fail!(
                "{at}: `{} build` did not end with `built PATH` naming the binary",
                script.display()
            )),
        }
    }

    /// Runs every method the perftest has for `p` (`n_runs` each) and keeps what ran.
    pub fn run(&self, p: &Problem, n_runs: usize) -> std::result::Result<PeerRun, String> {
        let idle = smi_used();
        let mut methods = Vec::new();
        let mut last_error = None;
        let mut peak: Option<usize> = None;
        for m in methods_of(p) {
            let sampler = Sampler::start();
            let out = Command::new(&self.bin)
                .args(perftest_args(p, m, n_runs))
                .stdin(Stdio::null())
                .output();
            let sampled = sampler.and_then(Sampler::stop);
            let out = out.map_err(|e| format!("cannot run {}: {e}", self.bin.display()))?;
            let text = String::from_utf8_lossy(&out.stdout);
            let parsed = out
                .status
                .success()
                .then(|| parse(&text))
                .ok_or_else(|| format!("method {} ended with {}", METHODS[m - 1], out.status))
                .and_then(|r| r.map_err(|e| format!("method {}: {e}", METHODS[m - 1])));
            match parsed {
                Ok((setpts_ms, exec_ms)) => {
                    methods.push(MethodRun {
                        method: METHODS[m - 1],
                        setpts_s: setpts_ms * 1e-3,
                        execute_s: exec_ms * 1e-3,
                    });
                    if let (Some(s), Some(i)) = (sampled, idle) {
                        peak = Some(peak.unwrap_or(0).max(s.saturating_sub(i)));
                    }
                }
                Err(e) => last_error = Some(e),
            }
        }
        let best = methods
            .iter()
            .min_by(|a, b| a.total_s().total_cmp(&b.total_s()))
            .cloned()
            .ok_or_else(|| last_error.unwrap_or_else(|| "no method ran".into()))?;
        Ok(PeerRun {
            best,
            methods,
            device_bytes: peak,
        })
    }
}

/// The perftest's methods for `p` (1-based, [`METHODS`]): GM and SM for every type; OD
/// (output-driven) spreads, so types 1 and 3 in 2-D and 3-D; BG (block gather) is 3-D type 1
/// only.
fn methods_of(p: &Problem) -> Vec<usize> {
    let dim = p.dim();
    match p.ty {
        2 => vec![1, 2],
        1 => (1..=dim + 1).collect(),
        _ if dim >= 2 => vec![1, 2, 3],
        _ => vec![1, 2],
    }
}

/// The perftest's arguments for `p` with method `m`. A type 3's targets are given as
/// `N1·N2·N3` with each side `round(points^(1/d))` (nudt's run has as many targets as
/// points).
fn perftest_args(p: &Problem, m: usize, n_runs: usize) -> Vec<String> {
    let dim = p.dim();
    let n: Vec<usize> = match p.ty {
        3 => {
            let side = (p.points as f64).powf(1.0 / dim as f64).round() as usize;
            (0..3)
                .map(|d| if d < dim { side.max(1) } else { 1 })
                .collect()
        }
        _ => (0..3)
            .map(|d| p.modes.get(d).copied().unwrap_or(1))
            .collect(),
    };
    let prec = if p.is_f32() { "f" } else { "d" };
    [
        ("--prec", prec.to_string()),
        ("--type", p.ty.to_string()),
        ("--N1", n[0].to_string()),
        ("--N2", n[1].to_string()),
        ("--N3", n[2].to_string()),
        ("--M", p.points.to_string()),
        ("--tol", format!("{:e}", p.tol)),
        ("--method", m.to_string()),
        ("--n_runs", n_runs.to_string()),
    ]
    .into_iter()
    .flat_map(|(k, v)| [k.to_string(), v])
    .collect()
}

/// The means (ms) of the perftest's `setpts` and `execute` lines: CSV under a header
/// `event,count,tot(ms),mean(ms),...`; the column is found by its name, else the fourth.
fn parse(text: &str) -> std::result::Result<(f64, f64), String> {
    let mean_col = text
        .lines()
        .find(|l| l.starts_with("event,"))
        .and_then(|h| h.split(',').position(|c| c.trim() == "mean(ms)"))
        .unwrap_or(3);
    let mean = |event: &str| -> std::result::Result<f64, String> {
        let line = text
            .lines()
            .find(|l| l.split(',').next() == Some(event))
            .ok_or_else(|| format!("no `{event}` line in its output"))?;
        line.split(',')
            .nth(mean_col)
            .and_then(|v| v.trim().parse::<f64>().ok())
            .filter(|v| v.is_finite() && *v >= 0.0)
            .ok_or_else(|| format!("unreadable `{event}` line: {line}"))
    };
    Ok((mean("setpts")?, mean("execute")?))
}

/// `nvidia-smi`'s used memory per sample, the largest of its GPUs' figures, in bytes.
fn smi_peak(text: &str) -> Option<usize> {
    text.lines()
        .filter_map(|l| l.trim().parse::<usize>().ok())
        .max()
        .map(|mib| mib << 20)
}

fn smi_used() -> Option<usize> {
    let out = Command::new("nvidia-smi")
        .args(["--query-gpu=memory.used", "--format=csv,noheader,nounits"])
        .stderr(Stdio::null())
        .output()
        .ok()?;
    smi_peak(&String::from_utf8_lossy(&out.stdout))
}

/// `nvidia-smi` sampling the device's used memory every 5 ms while a run lasts, and a thread
/// reading its samples as they come (a long run would fill the pipe otherwise).
struct Sampler(Child, std::thread::JoinHandle<String>);

impl Sampler {
    fn start() -> Option<Self> {
        let mut child = Command::new("nvidia-smi")
            .args([
                "--query-gpu=memory.used",
                "--format=csv,noheader,nounits",
                "-lms",
                "5",
            ])
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .ok()?;
        let mut out = child.stdout.take()?;
        let reader = std::thread::spawn(move || {
            let mut text = String::new();
            let _ = out.read_to_string(&mut text);
            text
        });
        Some(Sampler(child, reader))
    }

    /// Ends the sampling; the peak it saw.
    fn stop(mut self) -> Option<usize> {
        let _ = self.0.kill();
        let _ = self.0.wait();
        smi_peak(&self.1.join().ok()?)
    }
}

#[cfg(all(test, unix))]
mod tests {
    use super::*;
    use std::os::unix::fs::PermissionsExt;

    /// A stand-in perftest: perftest's output format, method 2 the fastest in total, method
    /// 3 failing, and its arguments appended to `args.txt` beside it.
    const STAND_IN: &str = r##"#!/bin/sh
echo "$*" >> "$(dirname "$0")/args.txt"
case "$*" in
  *"--method 1 "*) s=2.000000; e=5.000000 ;;
  *"--method 2 "*) s=3.000000; e=1.500000 ;;
  *) echo "method not supported" >&2; exit 1 ;;
esac
echo "# cufinufft perftest"
echo "event,count,tot(ms),mean(ms),min(ms),std(ms),nupts/s,ns/nupt"
echo "host_to_device,1,9.0,9.0,9.0,0.0,0.0,0.0"
echo "makeplan,1,7.0,7.0,7.0,0.0,0.0,0.0"
echo "setpts,5,10.0,$s,1.0,0.1,1e9,1.0"
echo "execute,5,10.0,$e,1.0,0.1,1e9,1.0"
"##;

    fn script(dir: &Path, name: &str, text: &str) -> PathBuf {
        let path = dir.join(name);
        std::fs::write(&path, text).unwrap();
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
        path
    }

    fn problem(toml: &str) -> Problem {
        super::super::super::problem::parse_problems(toml, "test")
            .unwrap()
            .remove(0)
    }

    #[test]
    fn runs_every_method_and_keeps_the_best() {
        let dir = tempfile::tempdir().unwrap();
        let bin = script(dir.path(), "cuperftest", STAND_IN);
        let t = Perftest::locate(&bin).unwrap();
        let p = problem(
            "[[problem]]\nname='2d-t1'\ntype=1\nmodes=[1000,500]\npoints=12345\ntol=1e-5\nprecision='f32'\n",
        );
        let r = t.run(&p, 4).unwrap();
        assert_eq!(r.best.method, "SM");
        assert!(
            (r.best.setpts_s - 3e-3).abs() < 1e-12 && (r.best.execute_s - 1.5e-3).abs() < 1e-12
        );
        let names: Vec<&str> = r.methods.iter().map(|m| m.method).collect();
        assert_eq!(names, ["GM", "SM"], "OD failed and is left out");
        let args = std::fs::read_to_string(dir.path().join("args.txt")).unwrap();
        let first = args.lines().next().unwrap();
        assert_eq!(
            first,
            "--prec f --type 1 --N1 1000 --N2 500 --N3 1 --M 12345 --tol 1e-5 --method 1 --n_runs 4"
        );
        assert_eq!(
            args.lines().count(),
            3,
            "GM, SM and OD for 2-D type 1: {args}"
        );
    }

    #[test]
    fn type3_targets_are_a_box_of_as_many_points() {
        let p = problem("[[problem]]\nname='3d-t3'\ntype=3\ndim=3\npoints=100000\ntol=1e-6\n");
        let a = perftest_args(&p, 3, 5).join(" ");
        assert!(
            a.contains("--type 3 --N1 46 --N2 46 --N3 46 --M 100000"),
            "{a}"
        );
        assert_eq!(methods_of(&p), [1, 2, 3]);
    }

    #[test]
    fn a_folder_builds_with_its_script() {
        let dir = tempfile::tempdir().unwrap();
        let bin = script(dir.path(), "cuperftest", STAND_IN);
        let build = format!("#!/bin/sh\necho compiling\necho built {}\n", bin.display());
        script(dir.path(), "cufinufft.sh", &build);
        let t = Perftest::locate(dir.path()).unwrap();
        assert_eq!(t.bin, bin);
        script(
            dir.path(),
            "cufinufft.sh",
            "#!/bin/sh\necho nvcc: not found >&2\nexit 1\n",
        );
        let e = Perftest::locate(dir.path()).err().unwrap().0;
        assert!(e.contains("nvcc: not found") && !e.contains('\n'), "{e}");
    }

    #[test]
    fn output_without_the_lines_is_an_error() {
        assert_eq!(
            parse("event,count,tot(ms),mean(ms)\nsetpts,5,1,0.5\nexecute,5,2,0.25\n"),
            Ok((0.5, 0.25))
        );
        let e = parse("event,count,tot(ms),mean(ms)\nsetpts,5,1,0.5\n").unwrap_err();
        assert!(e.contains("execute"), "{e}");
        assert!(parse("setpts,5,1,nan\nexecute,5,1,1\n").is_err());
    }
}
