//! `bench --compare finufft,ducc0`: runs benches/peer.py (python3 + the peer's pip package) on
//! a problem and reads its one-JSON-object-per-line output.

use super::{fail, Result};
use serde_json::Value;
use std::collections::HashMap;
use std::io::{BufRead, BufReader, Read};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

/// What the peer measured for one problem: its JSON object, or why it has none.
pub type PeerResults = HashMap<String, std::result::Result<Value, String>>;

/// Peer run settings, passed through to the script.
pub struct PeerArgs<'a> {
    /// `finufft` or `ducc0`: the script's `--peer`.
    pub peer: &'a str,
    /// Distribution override (`--dist`), if any.
    pub dist: Option<&'a str>,
    pub script: Option<&'a Path>,
    pub problems: &'a Path,
    /// The problem to run (`--only`): one process per problem keeps its peak memory its own.
    pub only: &'a str,
    pub threads: usize,
    pub repeats: usize,
    pub sample: usize,
    pub scale: f64,
    pub seed: u64,
    /// The data and checked outputs nudt shared for this problem (the script's `--data`).
    pub data: Option<&'a Path>,
}

/// A peer script: `explicit` (`--peer-script`), else `default` (a path under the checkout,
/// such as benches/peer.py) under the working directory, else the one in the source tree
/// this binary was built from.
pub fn find_script(explicit: Option<&Path>, default: &str) -> Result<PathBuf> {
    if let Some(p) = explicit {
        return if p.is_file() {
            Ok(p.to_path_buf())
        } else {
            Err(fail!("--peer-script {}: no such file", p.display()))
        };
    }
    let local = PathBuf::from(default);
    if local.is_file() {
        return Ok(local);
    }
    let built = Path::new(env!("CARGO_MANIFEST_DIR")).join(default);
    if built.is_file() {
        return Ok(built);
    }
    Err(fail!(
        "--compare: cannot find {default} (run from the nudt checkout or pass --peer-script FILE)"
    ))
}

/// Runs the peer on `args.only`.
pub fn run(args: &PeerArgs) -> Result<PeerResults> {
    let script = find_script(args.script, "benches/peer.py")?;
    let python = std::env::var("NUDT_PYTHON").unwrap_or_else(|_| "python3".into());
    let mut cmd = Command::new(&python);
    cmd.arg(&script)
        .arg("--peer")
        .arg(args.peer)
        .arg("--problems")
        .arg(args.problems)
        .arg("--only")
        .arg(args.only)
        .arg("--threads")
        .arg(args.threads.to_string())
        .arg("--repeats")
        .arg(args.repeats.to_string())
        .arg("--sample")
        .arg(args.sample.to_string())
        .arg("--scale")
        .arg(args.scale.to_string())
        .arg("--seed")
        .arg(args.seed.to_string())
        .args(args.dist.map(|d| ["--dist", d]).into_iter().flatten())
        .args(
            args.data
                .map(|d| [std::ffi::OsStr::new("--data"), d.as_os_str()])
                .into_iter()
                .flatten(),
        )
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let mut child = cmd
        .spawn()
        .map_err(|e| fail!("--compare {}: cannot run {python}: {e}", args.peer))?;
    let mut stderr = child.stderr.take().expect("piped");
    let err_thread = std::thread::spawn(move || {
        let mut s = String::new();
        let _ = stderr.read_to_string(&mut s);
        s
    });
    let mut results = PeerResults::new();
    let mut global_error = None;
    let stdout = child.stdout.take().expect("piped");
    for line in BufReader::new(stdout).lines() {
        let Ok(line) = line else { break };
        let line = line.trim();
        if !line.starts_with('{') {
            continue;
        }
        let Ok(v) = serde_json::from_str::<Value>(line) else {
            continue;
        };
        let name = v.get("name").and_then(Value::as_str).map(str::to_string);
        let error = v.get("error").and_then(Value::as_str).map(str::to_string);
        match (name, error) {
            (Some(n), Some(e)) => {
                results.insert(n, Err(e));
            }
            (Some(n), None) => {
                results.insert(n, Ok(v));
            }
            (None, Some(e)) => global_error = Some(e),
            (None, None) => {}
        }
    }
    let status = child
        .wait()
        .map_err(|e| fail!("--compare {}: {e}", args.peer))?;
    let log = err_thread.join().unwrap_or_default();
    if let Some(e) = global_error {
        return Err(fail!("--compare {}: {e}", args.peer));
    }
    if !status.success() && results.is_empty() {
        let last = log
            .lines()
            .rev()
            .find(|l| !l.trim().is_empty())
            .unwrap_or("no output");
        return Err(fail!(
            "--compare {}: {} exited with {status}: {}",
            args.peer,
            script.display(),
            last.trim()
        ));
    }
    Ok(results)
}
