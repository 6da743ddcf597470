//! Argument parsing, dispatch, and what the commands share: errors, option types, formatting,
//! random data and atomic file writes.

mod bench;
mod demo;
mod gen;
mod gen_cuda;
mod gen_fft;
mod gen_host;
pub mod heap;
mod npy;
mod peer;
mod plot;
mod problem;
mod profile;
mod transform;
mod tune;
mod tune_gpu;

use clap::{Parser, Subcommand, ValueEnum};
use nudt::gen::gpu::GpuArch;
use nudt::gen::{KernelKind, Precision, Strategy, Upsampling};
use std::fmt;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Mutex;

/// Exit code of every error the user can fix: bad options, files, shapes, tolerances.
pub const EXIT_USAGE: i32 = 2;

/// `println!` for a command's output. `println!` panics when stdout is closed early (`nudt
/// bench --json | head -1`); this ends the process quietly instead, as `head` expects.
macro_rules! outln {
    () => { $crate::cli::write_out(format_args!("\n")) };
    ($($arg:tt)*) => { $crate::cli::write_out(format_args!("{}\n", format_args!($($arg)*))) };
}
pub(crate) use outln;

/// `eprintln!` for notes and errors; a closed stderr (`2>&1 | head`) is ignored rather than a
/// panic, since there is nowhere left to report anything.
macro_rules! errln {
    ($($arg:tt)*) => { $crate::cli::write_err(format_args!("{}\n", format_args!($($arg)*))) };
}
pub(crate) use errln;

/// Set by `--quiet`: warnings and notices are not printed (errors always are).
static QUIET: AtomicBool = AtomicBool::new(false);

/// Warnings and notices not yet printed. They are held until the command succeeds (or until
/// [`flush_notes`] says the checks are over), so that a command that fails says one line, its
/// error, whatever it noticed on the way.
static PENDING: Mutex<Vec<String>> = Mutex::new(Vec::new());

/// A one-line `warning: ...` on stderr for input that is accepted but probably not what was
/// meant (a precision converted, an axis read as stacked transforms); `--quiet` silences it.
macro_rules! warnln {
    ($($arg:tt)*) => { $crate::cli::note("warning", format_args!($($arg)*)) };
}
pub(crate) use warnln;

/// Queues `<kind>: <text>` for stderr unless `--quiet` was given.
pub fn note(kind: &str, text: fmt::Arguments) {
    if !QUIET.load(Ordering::Relaxed) {
        let mut pending = PENDING.lock().unwrap_or_else(|e| e.into_inner());
        pending.push(format!("{kind}: {text}"));
    }
}

/// Prints the queued warnings and notices: at the end of a successful command, or where a
/// long one (`bench`, `tune`) has passed its checks and starts measuring, so that they are
/// read before the wait rather than after it.
pub fn flush_notes() {
    let pending = std::mem::take(&mut *PENDING.lock().unwrap_or_else(|e| e.into_inner()));
    for line in pending {
        errln!("{line}");
    }
}

#[derive(Parser, Debug)]
#[command(
    name = "nudt",
    version,
    about = "Generated, machine-tuned non-uniform FFTs (types 1, 2, 3) — run, benchmark, tune, emit source",
    after_help = "Examples:
  nudt demo                                   three small transforms in a few seconds
  nudt bench --scale 0.1 --compare finufft    the benchmark set, a tenth of the points, beside FINUFFT
  nudt transform --type 1 --modes 64,64 --points x.npy,y.npy --strengths c.npy --out f.npy
  nudt tune --quick                           time strategies, tile sizes and sigma; save a profile
  nudt gen --target rust --dim 2 --tol 1e-6 -o src/kernels"
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
    /// Print no warnings or notices on stderr (errors are still printed)
    #[arg(long, short = 'q', global = true)]
    quiet: bool,
}

#[derive(Subcommand, Debug)]
enum Command {
    /// Run three small NUFFTs on built-in data: what nudt chose for this machine, how fast, how accurate
    Demo(demo::Args),
    /// Benchmark the problem set (benches/problems.toml), optionally beside FINUFFT
    Bench(bench::Args),
    /// NUFFT of NumPy .npy files
    Transform(transform::Args),
    /// Emit standalone spreading source (Rust + rayon) tuned for a machine
    Gen(gen::Args),
    /// Time strategies, tile sizes and upsampling on this machine and save a profile
    Tune(tune::Args),
}

/// Parses the command line, runs the command, and returns the process exit code.
pub fn main() -> i32 {
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        Err(e) => return clap_error(e),
    };
    QUIET.store(cli.quiet, Ordering::Relaxed);
    let result = match cli.command {
        Command::Demo(a) => demo::run(a),
        Command::Bench(a) => bench::run(a),
        Command::Transform(a) => transform::run(a),
        Command::Gen(a) => gen::run(a),
        Command::Tune(a) => tune::run(a),
    };
    match result {
        Ok(()) => {
            flush_notes();
            0
        }
        Err(e) => {
            let _ = std::io::stdout().flush();
            // One line, whatever the library said (an NVRTC log spans many).
            let text: Vec<&str> =
                e.0.lines()
                    .map(str::trim)
                    .filter(|l| !l.is_empty())
                    .collect();
            errln!("error: {}", text.join("; "));
            EXIT_USAGE
        }
    }
}

/// Help and version go to stdout as clap prints them; a usage error becomes one line.
fn clap_error(e: clap::Error) -> i32 {
    use clap::error::ErrorKind;
    if matches!(
        e.kind(),
        ErrorKind::DisplayHelp
            | ErrorKind::DisplayVersion
            | ErrorKind::DisplayHelpOnMissingArgumentOrSubcommand
    ) {
        let _ = e.print();
        return if e.kind() == ErrorKind::DisplayHelpOnMissingArgumentOrSubcommand {
            EXIT_USAGE
        } else {
            0
        };
    }
    let text = e.render().to_string();
    let mut parts = Vec::new();
    for line in text.lines() {
        let line = line.trim();
        if line.is_empty() || line.starts_with("Usage:") || line.starts_with("For more information")
        {
            break;
        }
        parts.push(line.trim_start_matches("error: ").to_string());
    }
    let tip = text
        .lines()
        .map(str::trim)
        .find(|l| l.starts_with("tip:"))
        .map(|t| format!(" ({t})"))
        .unwrap_or_default();
    errln!(
        "error: {}{tip}; see 'nudt {}--help'",
        parts.join(" "),
        subcommand_hint()
    );
    EXIT_USAGE
}

/// `"<subcommand> "` when the command line names one, for the `--help` hint.
fn subcommand_hint() -> String {
    let names = ["demo", "bench", "transform", "gen", "tune"];
    std::env::args()
        .skip(1)
        .find(|a| names.contains(&a.as_str()))
        .map(|a| format!("{a} "))
        .unwrap_or_default()
}

/// A one-line message for the user; every command error ends as `error: <message>`, exit 2.
#[derive(Debug)]
pub struct Error(pub String);

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl From<nudt::NudtError> for Error {
    fn from(e: nudt::NudtError) -> Self {
        Error(e.to_string())
    }
}

impl From<nudt::gen::GenError> for Error {
    fn from(e: nudt::gen::GenError) -> Self {
        Error(e.to_string())
    }
}

pub type Result<T> = std::result::Result<T, Error>;

/// Builds an [`Error`] from format arguments.
macro_rules! fail {
    ($($arg:tt)*) => { $crate::cli::Error(format!($($arg)*)) };
}
pub(crate) use fail;

/// Writes to stdout for [`outln!`]: a broken pipe exits with 0 (the reader has all it wanted);
/// any other failure (a full disk behind a redirect) is an error, exit 2.
pub fn write_out(args: fmt::Arguments) {
    let mut out = std::io::stdout().lock();
    match out.write_fmt(args) {
        Ok(()) => {}
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => std::process::exit(0),
        Err(e) => {
            write_err(format_args!(
                "error: cannot write to standard output: {e}\n"
            ));
            std::process::exit(EXIT_USAGE)
        }
    }
}

/// Writes to stderr for [`errln!`], ignoring failure.
pub fn write_err(args: fmt::Arguments) {
    let _ = std::io::stderr().lock().write_fmt(args);
}

/// The GPU the CUDA backend would use (device 0), or why there is none, as a phrase that
/// follows "GPU: ".
#[cfg(feature = "cuda")]
pub fn probe_gpu() -> std::result::Result<GpuArch, String> {
    nudt::cuda::open(0)
        .and_then(|ctx| nudt::cuda::detect_arch(&ctx))
        .map_err(|e| format!("none found ({e})"))
}

/// Without the `cuda` feature nothing is probed; the phrase says how to get a build that does.
#[cfg(not(feature = "cuda"))]
pub fn probe_gpu() -> std::result::Result<GpuArch, String> {
    Err("not probed (this build has no CUDA backend; build with `--features cuda`)".into())
}

/// One line describing a GPU: what the CUDA generator tunes for.
pub fn describe_gpu(a: &GpuArch) -> String {
    format!(
        "{} ({}), {} SMs, shared memory {} per block ({} opt-in) and {} per SM, L2 {}",
        a.name,
        a.sm(),
        a.sm_count,
        fmt_bytes(a.shared_mem_per_block),
        fmt_bytes(a.shared_mem_per_block_optin),
        fmt_bytes(a.shared_mem_per_sm),
        fmt_bytes(a.l2_bytes)
    )
}

/// Adds context (an option or file name) in front of a library error.
pub trait Context<T> {
    fn context(self, what: impl fmt::Display) -> Result<T>;
}

impl<T, E: fmt::Display> Context<T> for std::result::Result<T, E> {
    fn context(self, what: impl fmt::Display) -> Result<T> {
        self.map_err(|e| Error(format!("{what}: {e}")))
    }
}

/// `--precision`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum PrecisionArg {
    F32,
    F64,
}

impl PrecisionArg {
    pub fn get(self) -> Precision {
        match self {
            PrecisionArg::F32 => Precision::F32,
            PrecisionArg::F64 => Precision::F64,
        }
    }
}

/// `--strategy`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum StrategyArg {
    /// Let the planner choose from the point distribution
    Auto,
    /// Tiles spread at once into their own buffers, added to the grid under locks; no atomics
    SourceDriven,
    /// Grid blocks gather the sources that reach them, no synchronisation
    TargetDriven,
}

impl StrategyArg {
    pub fn get(self) -> Strategy {
        match self {
            StrategyArg::Auto => Strategy::Auto,
            StrategyArg::SourceDriven => Strategy::SourceDriven,
            StrategyArg::TargetDriven => Strategy::TargetDriven,
        }
    }
}

/// `--kernel`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum KernelArg {
    /// Prolate spheroidal wave function (FINUFFT 2.5's default; the most accurate)
    Pswf,
    /// Exponential of semicircle (FINUFFT's before 2.5)
    Es,
    /// Truncated Gaussian
    Gaussian,
}

impl KernelArg {
    pub fn get(self) -> KernelKind {
        match self {
            KernelArg::Pswf => KernelKind::Pswf,
            KernelArg::Es => KernelKind::Es,
            KernelArg::Gaussian => KernelKind::Gaussian,
        }
    }
}

/// Parses `--upsampfac`: 1.25 to 2.5.
pub fn parse_sigma(s: &str) -> std::result::Result<f64, String> {
    let bad = || format!("expected a number from 1.25 to 2.5, got '{s}'");
    let v: f64 = s.parse().map_err(|_| bad())?;
    Upsampling::new(v).map(|u| u.0).map_err(|_| bad())
}

/// Parses a positive finite tolerance.
pub fn parse_tol(s: &str) -> std::result::Result<f64, String> {
    match s.parse::<f64>() {
        Ok(v) if v.is_finite() && v > 0.0 => Ok(v),
        _ => Err(format!(
            "expected a positive number such as 1e-6, got '{s}'"
        )),
    }
}

/// Parses a thread count of at least 1 (`1e3` reads as 1000).
pub fn parse_threads(s: &str) -> std::result::Result<usize, String> {
    match parse_count(s) {
        Ok(v) if v >= 1 => Ok(v),
        _ => Err(format!(
            "expected a whole number of threads >= 1, got '{s}'"
        )),
    }
}

/// Warns when `--threads` exceeds the cores: the extra threads only add scheduling and
/// contention (`--threads 1000` measured 65× slower than the default). Called from
/// each command rather than the parser, which runs before `--quiet` is known.
pub fn warn_threads(threads: Option<usize>) {
    let cores = std::thread::available_parallelism().map_or(1, usize::from);
    if let Some(n) = threads.filter(|&n| n > cores) {
        warnln!("--threads {n} is more than this machine's {cores} cores; the extra threads only add overhead");
    }
}

/// Parses a count (points, modes, a batch): digits, or a number such as `1e6` or `2.5e5` that
/// is a whole number, since that is how sizes are written in papers and in numpy scripts.
/// Zero is left to the caller, which knows whether it is allowed and how to say so.
pub fn parse_count(s: &str) -> std::result::Result<usize, String> {
    if let Ok(v) = s.parse::<usize>() {
        return Ok(v);
    }
    let bad = || format!("expected a whole number such as 256 or 1e6, got '{s}'");
    let v: f64 = s.parse().map_err(|_| bad())?;
    // 2^64 itself is the first f64 past usize::MAX (on 64-bit targets).
    if !v.is_finite() || v < 0.0 || v.fract() != 0.0 {
        Err(bad())
    } else if v >= usize::MAX as f64 {
        Err(format!(
            "'{s}' is more than the largest count this machine can address ({})",
            usize::MAX
        ))
    } else {
        Ok(v as usize)
    }
}

/// Snake-case name of a strategy, as in JSON output and profiles.
pub fn strategy_name(s: Strategy) -> &'static str {
    match s {
        Strategy::SourceDriven => "source-driven",
        Strategy::TargetDriven => "target-driven",
        Strategy::Auto => "auto",
    }
}

/// Seconds as `812 µs`, `12.3 ms` or `1.20 s`.
pub fn fmt_time(s: f64) -> String {
    if !s.is_finite() {
        "-".into()
    } else if s < 1e-3 {
        format!("{:.0} µs", s * 1e6)
    } else if s < 1.0 {
        format!("{:.1} ms", s * 1e3)
    } else {
        format!("{s:.2} s")
    }
}

/// A rate as `12.3 M` (the caller names the unit).
pub fn fmt_rate(r: f64) -> String {
    if !r.is_finite() {
        "-".into()
    } else if r >= 1e9 {
        format!("{:.2} G", r / 1e9)
    } else if r >= 1e6 {
        format!("{:.1} M", r / 1e6)
    } else {
        format!("{:.0} k", r / 1e3)
    }
}

/// `256×256`.
pub fn fmt_dims(n: &[usize]) -> String {
    n.iter()
        .map(|v| v.to_string())
        .collect::<Vec<_>>()
        .join("×")
}

/// Bytes as `48 KiB` / `2 MiB`.
pub fn fmt_bytes(b: usize) -> String {
    if b >= 1 << 20 && b.is_multiple_of(1 << 20) {
        format!("{} MiB", b >> 20)
    } else if b >= 1 << 10 {
        format!("{} KiB", b >> 10)
    } else {
        format!("{b} B")
    }
}

/// One line describing a machine.
pub fn describe_arch(a: &nudt::gen::Arch) -> String {
    let simd = match a.simd_bytes {
        64 => "AVX-512",
        32 => "AVX2",
        _ => "128-bit SIMD",
    };
    format!(
        "{} cores, L1 {}, L2 {}, L3 {}, {simd}",
        a.cores,
        fmt_bytes(a.l1),
        fmt_bytes(a.l2),
        fmt_bytes(a.l3)
    )
}

/// Median of a non-empty sample.
pub fn median(v: &[f64]) -> f64 {
    let mut s = v.to_vec();
    s.sort_by(f64::total_cmp);
    let n = s.len();
    if n == 0 {
        f64::NAN
    } else if n % 2 == 1 {
        s[n / 2]
    } else {
        0.5 * (s[n / 2 - 1] + s[n / 2])
    }
}

/// An output file checked before any work is done: its folder takes new files and it is none
/// of the inputs. An existing file is replaced (atomically, by [`write_atomic`]) and
/// [`Output::written`] says so in one notice, since overwriting a result without a word is the
/// surprise a forgotten `--out` from an earlier run causes.
pub struct Output {
    path: PathBuf,
    existed: bool,
}

impl Output {
    /// Checks `path` (given as `option`) against `inputs`. With `create_dirs`, missing
    /// folders above it are allowed (they will be created) when the nearest existing one is
    /// writable; otherwise its folder must exist.
    pub fn check(path: &Path, option: &str, inputs: &[&Path], create_dirs: bool) -> Result<Self> {
        let shown = path.display();
        let meta = std::fs::metadata(path).ok();
        if meta.as_ref().is_some_and(|m| m.is_dir()) {
            return Err(fail!("{option} {shown}: is a folder; give a file name"));
        }
        if meta.is_some() {
            let this = std::fs::canonicalize(path).ok();
            if let Some(input) = inputs
                .iter()
                .find(|i| this.is_some() && std::fs::canonicalize(i).ok() == this)
            {
                return Err(fail!(
                    "{option} {shown}: is also the input {}; writing it would destroy that input, so choose another output name",
                    input.display()
                ));
            }
        }
        let dir = match path.parent() {
            Some(d) if !d.as_os_str().is_empty() => d,
            _ => Path::new("."),
        };
        writable_folder(dir, create_dirs).map_err(|why| fail!("{option} {shown}: {why}"))?;
        Ok(Output {
            path: path.to_path_buf(),
            existed: meta.is_some(),
        })
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Says, after a successful write, that an existing file was replaced.
    pub fn written(&self) {
        if self.existed {
            note(
                "note",
                format_args!("replaced the existing {}", self.path.display()),
            );
        }
    }
}

/// Why files cannot be created in `dir`, if they cannot. With `create`, a missing `dir` is
/// judged by its nearest existing ancestor (where it would be created). Writability is tested
/// by creating and removing a probe file: permission bits alone miss read-only mounts and
/// ACLs, and a file is what will be written.
pub fn writable_folder(dir: &Path, create: bool) -> std::result::Result<(), String> {
    let mut at = dir;
    while !at.exists() {
        if !create {
            return Err(format!("the folder {} does not exist", dir.display()));
        }
        at = match at.parent() {
            Some(p) if !p.as_os_str().is_empty() => p,
            _ => Path::new("."),
        };
    }
    if !at.is_dir() {
        return Err(format!("{} is not a folder", at.display()));
    }
    let probe = at.join(format!(".nudt-probe.{}.tmp", std::process::id()));
    match std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .open(&probe)
    {
        Ok(_) => {
            let _ = std::fs::remove_file(&probe);
            Ok(())
        }
        Err(e) => Err(format!("cannot write in the folder {} ({e})", at.display())),
    }
}

/// Writes `path` through a temporary file in the same directory and a rename, so readers
/// never see a half-written file.
pub fn write_atomic(
    path: &Path,
    what: &str,
    fill: impl FnOnce(&mut std::io::BufWriter<std::fs::File>) -> std::io::Result<()>,
) -> Result<()> {
    let dir = match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d.to_path_buf(),
        _ => std::path::PathBuf::from("."),
    };
    let name = path
        .file_name()
        .ok_or_else(|| fail!("{what} {}: not a file name", path.display()))?;
    let tmp = dir.join(format!(
        ".{}.{}.tmp",
        name.to_string_lossy(),
        std::process::id()
    ));
    let result = (|| -> std::io::Result<()> {
        let file = std::fs::File::create(&tmp)?;
        let mut w = std::io::BufWriter::new(file);
        fill(&mut w)?;
        let file = w.into_inner().map_err(|e| e.into_error())?;
        file.sync_all()?;
        std::fs::rename(&tmp, path)
    })();
    if let Err(e) = result {
        let _ = std::fs::remove_file(&tmp);
        return Err(fail!("{what} {}: cannot write: {e}", path.display()));
    }
    Ok(())
}

/// xoshiro256** seeded through splitmix64: fast, reproducible benchmark data.
pub struct Rng([u64; 4]);

impl Rng {
    pub fn new(seed: u64) -> Self {
        let mut z = seed;
        let mut next = || {
            z = z.wrapping_add(0x9E37_79B9_7F4A_7C15);
            let mut x = z;
            x = (x ^ (x >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
            x = (x ^ (x >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
            x ^ (x >> 31)
        };
        Rng([next(), next(), next(), next()])
    }

    pub fn next_u64(&mut self) -> u64 {
        let s = &mut self.0;
        let result = s[1].wrapping_mul(5).rotate_left(7).wrapping_mul(9);
        let t = s[1] << 17;
        s[2] ^= s[0];
        s[3] ^= s[1];
        s[1] ^= s[2];
        s[0] ^= s[3];
        s[2] ^= t;
        s[3] = s[3].rotate_left(45);
        result
    }

    /// Uniform in `[0, 1)`.
    pub fn unit(&mut self) -> f64 {
        (self.next_u64() >> 11) as f64 * (1.0 / (1u64 << 53) as f64)
    }

    /// Uniform in `[a, b)`.
    pub fn uniform(&mut self, a: f64, b: f64) -> f64 {
        a + (b - a) * self.unit()
    }

    /// Complex standard normal: real and imaginary parts independent N(0, 1).
    pub fn complex_normal(&mut self) -> nudt::num_complex::Complex64 {
        let u = 1.0 - self.unit(); // (0, 1]
        let r = (-2.0 * u.ln()).sqrt();
        let theta = std::f64::consts::TAU * self.unit();
        nudt::num_complex::Complex64::from_polar(r, theta)
    }

    /// Uniform index below `n` (n > 0).
    pub fn below(&mut self, n: usize) -> usize {
        ((self.next_u64() as u128 * n as u128) >> 64) as usize
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rng_is_uniform_enough() {
        let mut r = Rng::new(1);
        let m: f64 = (0..10000).map(|_| r.unit()).sum::<f64>() / 10000.0;
        assert!((m - 0.5).abs() < 0.02);
        assert!((0..1000).all(|_| r.below(7) < 7));
    }

    #[test]
    fn formats() {
        assert_eq!(fmt_time(0.0123), "12.3 ms");
        assert_eq!(fmt_dims(&[3, 4]), "3×4");
        assert_eq!(median(&[3.0, 1.0, 2.0]), 2.0);
        assert_eq!(fmt_bytes(48 << 10), "48 KiB");
    }
}
