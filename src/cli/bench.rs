//! `nudt bench`: the problem set of benches/problems.toml, timed (median of repeats) and checked
//! against the direct sum; optionally beside FINUFFT and ducc0, as JSON lines, or as a chart.
//! With `--backend cuda|opencl`, the GPU problem set on that backend ([`gpu`]), beside
//! cuFINUFFT's perftest with `--compare cufinufft`.

#[cfg(any(feature = "cuda", feature = "opencl"))]
mod cufinufft;
#[cfg(any(feature = "cuda", feature = "opencl"))]
mod gpu;
#[cfg(feature = "cuda")]
mod gpu_cuda;
#[cfg(feature = "opencl")]
mod gpu_opencl;
mod gradients;
mod per_transform;
mod soak;

use super::peer::{self, PeerArgs, PeerResults};
use super::plot::{self, Series};
use super::problem::{self, Measurement, Problem, RunConfig};
use super::transform::BackendArg;
use super::{
    describe_arch, fail, fmt_rate, fmt_time, outln, parse_count, parse_threads, strategy_name,
    warn_threads, Output, Result, StrategyArg,
};
use clap::ValueEnum;
use indicatif::{ProgressBar, ProgressStyle};
use nudt::Options;
use serde::{Deserialize, Serialize};
use serde_json::{json, Map, Value};
use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::process::{Command, ExitStatus, Stdio};

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum Peer {
    /// FINUFFT through python3 and its pip package `finufft` (benches/peer.py)
    Finufft,
    /// ducc0's NUFFT through python3 and its pip package `ducc0` (benches/peer.py)
    Ducc0,
    /// cuFINUFFT's perftest (`cuperftest`, built from its source; --peer-bin), with --backend cuda
    Cufinufft,
}

impl Peer {
    pub fn name(self) -> &'static str {
        match self {
            Peer::Finufft => "finufft",
            Peer::Ducc0 => "ducc0",
            Peer::Cufinufft => "cufinufft",
        }
    }
}

#[derive(clap::Args, Debug)]
#[command(after_help = "Examples:
  nudt bench --scale 0.1                           every CPU problem with a tenth of the points
  nudt bench --only 2d-t1,3d-t2 --compare finufft  two problems beside FINUFFT, with ratios
  nudt bench --compare finufft,ducc0 --dist clustered   both peers, 90% of the points in a blob
  nudt bench --scale 0.1 --json > results.jsonl    one JSON object per problem
  nudt bench --compare finufft --plot bench.svg    throughput chart (.svg or .png)
  nudt bench --soak --backend opencl --cycles 1000 plan/setpts/execute cycles: memory and speed over time
  nudt bench --gradients --scale 0.1               point derivatives against the forward transform
  nudt bench --per-transform --compare finufft      32 transforms with a point set each: one plan,
                                                   32 plans, and FINUFFT's Plan looped over the sets
  nudt bench --backend opencl --quick              the GPU problem set on OpenCL, a tenth of the points
  nudt bench --backend cuda --compare cufinufft --peer-bin ./cuperftest
                                                   the GPU set beside cuFINUFFT's perftest, with ratios

Problems: benches/problems.toml (built in; --problems to use another file). Points follow the
problem's distribution (uniform in [-pi, pi)^d unless it names clustered, radial, spiral or far;
--dist overrides it; docs/benchmarks.md defines them), strengths complex normal; type 3 targets
uniform in [-K/2, K/2)^d, K = points^(1/d) (or the distribution, scaled).
Signs: +1 for types 1 and 3, -1 for type 2 (FINUFFT's defaults). Times are medians of --repeats
runs of plan + setpts + execute; points/s = points / total; `again`: the median of --repeats
executes more on the last plan (the loop of an iterative reconstruction). A problem's
`ntransf` (default 1) transforms share one plan and its points. Each problem runs in a process of
its own, for nudt and for each peer, so that mem is that problem's peak alone.

--backend cuda|opencl runs the GPU problem set (benches/gpu_problems.toml) in one process on that
backend: device arrays in and out, set-points timed on fresh plans and again on one plan,
execute the mean of --repeats, the device synchronised; the plan's device memory where the
backend can read it. --compare cufinufft runs cuFINUFFT's perftest (--peer-bin: the binary, or a
folder with its source and a cufinufft.sh whose `build` prints `built PATH` last) on the same
problems, every method, and prints nudt's total over its best method's.")]
pub struct Args {
    /// Problems file (TOML, [[problem]] tables) instead of the built-in set
    #[arg(long, value_name = "FILE")]
    problems: Option<PathBuf>,
    /// Run only these problems (comma-separated names); GPU-only problems run only when named
    #[arg(long, value_name = "NAMES", value_delimiter = ',')]
    only: Vec<String>,
    /// Multiply every point count by this factor (e.g. 0.01 for a quick run)
    #[arg(long, default_value_t = 1.0, allow_negative_numbers = true, value_parser = parse_scale)]
    scale: f64,
    /// A tenth of the points (--scale 0.1)
    #[arg(long, conflicts_with = "scale")]
    quick: bool,
    /// Timed repetitions per problem (the median is reported)
    #[arg(long, default_value_t = 3, value_parser = clap::value_parser!(u64).range(1..=1000))]
    repeats: u64,
    /// Worker threads, for nudt and the peer (default: all cores; FINUFFT's name: --nthreads)
    #[arg(long, visible_alias = "nthreads", allow_hyphen_values = true, value_parser = parse_threads)]
    threads: Option<usize>,
    /// Outputs per problem checked against the direct sum (0 to skip)
    #[arg(long, default_value_t = 100, allow_hyphen_values = true, value_parser = parse_count)]
    sample: usize,
    /// Seed of the random data
    #[arg(long, default_value_t = 42)]
    seed: u64,
    /// Spreading schedule of nudt's CPU plans (auto: the planner's choice per point set)
    #[arg(long, value_enum, default_value_t = StrategyArg::Auto)]
    strategy: StrategyArg,
    /// Point distribution of every problem, overriding the file's
    #[arg(long, value_parser = clap::builder::PossibleValuesParser::new(problem::DISTRIBUTIONS))]
    dist: Option<String>,
    /// Run peer libraries on the same problems and print ratios (comma-separated)
    #[arg(long, value_enum, value_delimiter = ',')]
    compare: Vec<Peer>,
    /// Peer script (default: benches/peer.py)
    #[arg(long, value_name = "FILE")]
    peer_script: Option<PathBuf>,
    /// cuFINUFFT's perftest for --compare cufinufft: the binary, or a folder with its source
    /// and a cufinufft.sh that builds it
    #[arg(long, value_name = "PATH")]
    peer_bin: Option<PathBuf>,
    /// Tuning profile nudt's plans take choices from (saved by `nudt tune -o FILE`; also
    /// NUDT_PROFILE) [default: this machine's in the cache folder, if tuned]
    #[arg(long, value_name = "FILE")]
    profile: Option<PathBuf>,
    /// One JSON object per problem per line instead of the table
    #[arg(long)]
    json: bool,
    /// Draw throughput per problem into FILE (.svg or .png); its folder is checked before the
    /// benchmark runs, and an existing FILE is replaced with a notice
    #[arg(long, value_name = "FILE")]
    plot: Option<PathBuf>,
    /// Measure all problems in this process, not each in its own; memory peaks then include
    /// what earlier problems left allocated
    #[arg(long)]
    one_process: bool,
    /// Soak test instead of the problem set: --cycles plan → set-points → execute cycles on
    /// --backend, of --shapes problem shapes (types, dimensions, precisions, sizes), fresh data
    /// each cycle; reports host RSS and device memory after a warm-up and at the end, and the
    /// throughput of the first and last tenth of the cycles
    #[arg(long, conflicts_with_all = [
        "problems", "only", "scale", "repeats", "sample", "strategy", "dist", "compare",
        "peer_script", "plot", "one_process",
    ])]
    soak: bool,
    /// Point derivatives instead of the problem set: for types 1 and 2 in 1-3 D on
    /// --backend, the reverse-mode (a type 2 with the gradient) and forward-mode (a type 1
    /// with the kernel's derivative) passes against the forward transform on the same plan,
    /// and against d + 1 transforms of k-weighted modes
    #[arg(long, conflicts_with_all = [
        "problems", "only", "sample", "strategy", "dist", "compare", "peer_script", "plot",
        "one_process", "soak",
    ])]
    gradients: bool,
    /// Cycles of the soak test
    #[arg(long, default_value_t = 10_000, requires = "soak", allow_hyphen_values = true, value_parser = parse_positive)]
    cycles: usize,
    /// Problem shapes the soak test's cycles draw from (each run once in the warm-up)
    #[arg(long, default_value_t = 24, requires = "soak", allow_hyphen_values = true, value_parser = parse_positive)]
    shapes: usize,
    /// Where the problem set, the soak test, the gradient benchmark and --per-transform run
    /// (cuda, opencl: the GPU problem set)
    #[arg(long, value_enum, default_value_t = BackendArg::Cpu)]
    backend: BackendArg,
    /// A stack of --batch transforms, each with its own point set, instead of the problem
    /// set: one plan with a point set per transform against --batch plans one after another
    /// (and on the CPU with --compare finufft, FINUFFT's Plan looped over the sets),
    /// set-points + execute on --backend; M = 1e4 and 1e5 points per transform (times --scale), 2-D 256² and 3-D 64³
    /// modes, types 1 and 2, f64, tol 1e-6
    #[arg(long, conflicts_with_all = [
        "problems", "only", "sample", "strategy", "dist", "plot", "one_process", "soak",
    ])]
    per_transform: bool,
    /// Transforms of the --per-transform stack
    #[arg(long, default_value_t = 32, requires = "per_transform", allow_hyphen_values = true, value_parser = parse_positive)]
    batch: usize,
    /// Where a child process writes its problem's data and checked outputs for the peers
    /// (set by the parent `nudt bench`)
    #[arg(long, value_name = "DIR", hide = true)]
    share_data: Option<PathBuf>,
}

/// What the table, the JSON lines and the chart show of one nudt run. Its fields are the
/// run's keys in a JSON line, so a child process's line reads back into it.
#[derive(Debug, Serialize, Deserialize)]
struct Measured {
    plan_s: f64,
    setpts_s: f64,
    execute_s: f64,
    total_s: f64,
    execute_again_s: f64,
    points_per_s: f64,
    /// `None` when not checked (`--sample 0`): JSON null.
    rel_error: Option<f64>,
    peak_rss_bytes: Option<usize>,
    width: usize,
    sigma: f64,
    fine_grid: Vec<usize>,
    strategy: String,
    tile_side: usize,
}

impl From<Measurement> for Measured {
    fn from(m: Measurement) -> Self {
        Measured {
            plan_s: m.plan_s,
            setpts_s: m.setpts_s,
            execute_s: m.execute_s,
            total_s: m.total_s,
            execute_again_s: m.execute_again_s,
            points_per_s: m.points_per_s(),
            rel_error: Some(m.rel_error).filter(|e| e.is_finite()),
            peak_rss_bytes: m.peak_rss,
            width: m.width,
            sigma: m.sigma,
            fine_grid: m.fine_grid,
            strategy: strategy_name(m.strategy).into(),
            tile_side: m.tile_side,
        }
    }
}

/// One problem's nudt figures, or why it has none.
type Outcome = std::result::Result<Measured, String>;

/// Largest `--scale`: 1000 times the shared problems' 10^7 points is already beyond any one
/// machine's memory; what a problems file makes of it is checked per problem.
const MAX_SCALE: f64 = 1000.0;

fn parse_scale(s: &str) -> std::result::Result<f64, String> {
    match s.parse::<f64>() {
        Ok(v) if v.is_finite() && v > 0.0 && v <= MAX_SCALE => Ok(v),
        _ => Err(format!(
            "expected a factor in (0, {MAX_SCALE}] such as 0.1, got '{s}'"
        )),
    }
}

/// A count of at least 1 (`--cycles`, `--shapes`).
fn parse_positive(s: &str) -> std::result::Result<usize, String> {
    match parse_count(s) {
        Ok(v) if v >= 1 => Ok(v),
        _ => Err(format!("expected a whole number >= 1, got '{s}'")),
    }
}

/// The problems to run, in file order.
fn select(all: Vec<Problem>, only: &[String]) -> Result<Vec<Problem>> {
    if only.is_empty() {
        return Ok(all.into_iter().filter(|p| !p.gpu_only).collect());
    }
    for name in only {
        if !all.iter().any(|p| &p.name == name) {
            let names: Vec<&str> = all.iter().map(|p| p.name.as_str()).collect();
            return Err(fail!(
                "--only: no problem named '{name}'; available: {}",
                names.join(", ")
            ));
        }
    }
    Ok(all.into_iter().filter(|p| only.contains(&p.name)).collect())
}

fn progress(len: usize, json: bool) -> ProgressBar {
    let bar = if json {
        ProgressBar::hidden()
    } else {
        ProgressBar::new(len as u64)
    };
    bar.set_style(
        ProgressStyle::with_template("{prefix} [{bar:30}] {pos}/{len} {msg}")
            .expect("valid template")
            .progress_chars("=> "),
    );
    bar
}

pub fn run(mut args: Args) -> Result<()> {
    if args.quick {
        args.scale = 0.1;
    }
    check_peers(&args)?;
    if args.per_transform {
        if args.compare.contains(&Peer::Ducc0) {
            return Err(fail!(
                "--per-transform compares with FINUFFT only: --compare finufft"
            ));
        }
        super::profile::use_given(args.profile.as_deref())?;
        warn_threads(args.threads);
        return per_transform::run(per_transform::PerTransformArgs {
            backend: args.backend.get(),
            batch: args.batch,
            scale: args.scale,
            repeats: args.repeats as usize,
            threads: args.threads,
            seed: args.seed,
            json: args.json,
            finufft: args.compare.contains(&Peer::Finufft),
            peer_script: args.peer_script.clone(),
        });
    }
    if args.soak {
        warn_threads(args.threads);
        return soak::run(soak::SoakArgs {
            backend: args.backend,
            cycles: args.cycles,
            shapes: args.shapes,
            seed: args.seed,
            threads: args.threads,
            json: args.json,
        });
    }
    if args.gradients {
        warn_threads(args.threads);
        return gradients::run(gradients::GradientArgs {
            backend: args.backend,
            scale: args.scale,
            repeats: args.repeats,
            seed: args.seed,
            threads: args.threads,
            json: args.json,
        });
    }
    if args.backend != BackendArg::Cpu {
        for (given, what) in [
            (args.strategy != StrategyArg::Auto, "--strategy"),
            (args.dist.is_some(), "--dist"),
            (args.plot.is_some(), "--plot"),
            (args.one_process, "--one-process"),
            (args.profile.is_some(), "--profile"),
            (args.threads.is_some(), "--threads"),
        ] {
            if given {
                return Err(fail!(
                    "{what} applies to --backend cpu; the GPU problem set runs in one process on the device"
                ));
            }
        }
        let backend = args.backend.get();
        backend
            .available()
            .map_err(|e| fail!("--backend {backend}: {e}"))?;
        #[cfg(not(any(feature = "cuda", feature = "opencl")))]
        unreachable!("a build without GPU backends has none available");
        #[cfg(any(feature = "cuda", feature = "opencl"))]
        return gpu::run(gpu::GpuArgs {
            backend,
            problems: args.problems,
            only: args.only,
            scale: args.scale,
            repeats: args.repeats as usize,
            sample: args.sample,
            seed: args.seed,
            json: args.json,
            cufinufft: args
                .peer_bin
                .filter(|_| args.compare.contains(&Peer::Cufinufft)),
        });
    }
    if let Some(p) = &args.plot {
        let ext = p.extension().map(|e| e.to_string_lossy().to_lowercase());
        if !matches!(ext.as_deref(), Some("svg") | Some("png")) {
            return Err(fail!(
                "--plot {}: expected a file name ending in .svg or .png",
                p.display()
            ));
        }
    }
    let inputs: Vec<&Path> = (args.problems.iter().chain(&args.peer_script))
        .chain(&args.profile)
        .map(PathBuf::as_path)
        .collect();
    let plot_out = match &args.plot {
        Some(p) => Some(Output::check(p, "--plot", &inputs, false)?),
        None => None,
    };
    super::profile::use_given(args.profile.as_deref())?;
    warn_threads(args.threads);
    let mut problems = select(
        problem::load_problems(args.problems.as_deref())?,
        &args.only,
    )?;
    if let Some(d) = &args.dist {
        problems
            .iter_mut()
            .for_each(|p| p.distribution = Some(d.clone()));
    }
    if problems.is_empty() {
        return Err(fail!(
            "no problems to run (all are GPU-only; name them with --only)"
        ));
    }
    // Every problem's size before the first runs: one too large for memory would otherwise
    // fail only after the others spent their time.
    for p in &problems {
        p.scaled(args.scale).check_fits()?;
        if p.upsampfac.is_some() {
            return Err(fail!(
                "problem '{}': `upsampfac` is measured on --backend cuda|opencl only",
                p.name
            ));
        }
    }
    let threads = args.threads.unwrap_or_else(rayon::current_num_threads);
    let arch = nudt::plan::this_machine();
    let cfg = RunConfig {
        opts: Options {
            threads: args.threads,
            strategy: args.strategy.get(),
            ..Options::default()
        },
        repeats: args.repeats as usize,
        sample: args.sample,
        seed: args.seed,
        share: args.share_data.clone(),
    };

    super::flush_notes();
    // A failed peer does not lose our results: they are printed, then the error is returned.
    let Runs {
        ours,
        theirs,
        peer_error,
    } = measure(&args, &problems, &cfg, threads)?;

    if args.json {
        for (p, m) in problems.iter().zip(&ours) {
            outln!(
                "{}",
                json_line(p, args.scale, m, &theirs, threads, &args, arch)
            );
        }
    } else {
        outln!(
            "nudt {} bench: {} problem(s), points ×{}, median of {} run(s), {threads} thread(s)",
            env!("CARGO_PKG_VERSION"),
            problems.len(),
            args.scale,
            args.repeats
        );
        outln!("machine: {} ({})\n", describe_arch(arch), arch.key());
        print_table(&problems, args.scale, &ours, &theirs);
    }

    if let Some(out) = &plot_out {
        let path = out.path();
        let names: Vec<String> = problems.iter().map(|p| p.name.clone()).collect();
        let mut series = vec![Series {
            name: "nudt".into(),
            values: ours
                .iter()
                .map(|m| m.as_ref().ok().map(|m| m.points_per_s / 1e6))
                .collect(),
        }];
        for (peer, t) in &theirs {
            series.push(Series {
                name: peer.name().into(),
                values: problems
                    .iter()
                    .map(|p| peer_f64(t.get(&p.name), "points_per_s").map(|v| v / 1e6))
                    .collect(),
            });
        }
        let title = format!(
            "Throughput, {} threads, points ×{} ({})",
            threads,
            args.scale,
            arch.key()
        );
        plot::throughput(path, &title, &names, &series)?;
        if !args.json {
            outln!("\nwrote {}", path.display());
        }
        out.written();
    }

    if let Some(e) = peer_error {
        return Err(e);
    }
    let failed: Vec<String> = problems
        .iter()
        .zip(&ours)
        .filter_map(|(p, m)| m.as_ref().err().map(|e| format!("{}: {e}", p.name)))
        .collect();
    if !failed.is_empty() {
        return Err(fail!(
            "{} problem(s) failed: {}",
            failed.len(),
            failed.join("; ")
        ));
    }
    Ok(())
}

/// Refuses a peer that does not run beside this backend: cuFINUFFT beside CUDA only, FINUFFT
/// and ducc0 beside the CPU only; and cuFINUFFT without its binary.
fn check_peers(args: &Args) -> Result<()> {
    let gpu = args.backend != BackendArg::Cpu;
    let cuda = args.backend == BackendArg::Cuda;
    for &peer in &args.compare {
        let name = peer.name();
        match peer {
            Peer::Cufinufft if !cuda => {
                return Err(fail!(
                    "--compare cufinufft runs beside --backend cuda (the GPU problem set), not --backend {}",
                    args.backend.get()
                ))
            }
            Peer::Finufft | Peer::Ducc0 if gpu => {
                return Err(fail!(
                    "--compare {name} runs beside --backend cpu; beside --backend {} the peer is cufinufft (CUDA)",
                    args.backend.get()
                ))
            }
            _ => {}
        }
    }
    let cufinufft = args.compare.contains(&Peer::Cufinufft);
    if cufinufft && args.peer_bin.is_none() {
        return Err(fail!(
            "--compare cufinufft needs --peer-bin PATH: cuFINUFFT's perftest binary, or a folder with its source and a cufinufft.sh that builds it"
        ));
    }
    if !cufinufft && args.peer_bin.is_some() {
        return Err(fail!("--peer-bin applies to --compare cufinufft"));
    }
    Ok(())
}

/// What a run measured: nudt's figures, the peers' that ran, and the first peer that could
/// not run at all.
struct Runs {
    ours: Vec<Outcome>,
    theirs: Vec<(Peer, PeerResults)>,
    peer_error: Option<super::Error>,
}

/// A directory removed with everything in it when dropped, on every way out of the run.
struct TempDir(PathBuf);

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// Every problem in turn: nudt, then each peer on the data nudt shared ([`problem::RunConfig::
/// share`]), so that all of them transform the same data and are checked at the same outputs
/// against the same direct sums. One problem's data is on disk at a time. Each problem runs
/// in a child process of its own unless it is the only one or `--one-process` is given:
/// glibc keeps what a problem freed, so in one process every later problem's peak memory
/// would include what earlier ones left. A peer that fails on the first problem does not
/// work at all (package missing, broken script): that is its one error and it runs no more;
/// a later failure is that problem's.
fn measure(args: &Args, problems: &[Problem], cfg: &RunConfig, threads: usize) -> Result<Runs> {
    let exe = if problems.len() > 1 && !args.one_process {
        Some(std::env::current_exe().map_err(|e| fail!("cannot find this program to rerun: {e}"))?)
    } else {
        None
    };
    let peers = if args.compare.is_empty() {
        None
    } else {
        Some(PeerFiles::new(args)?)
    };
    let bar = progress(problems.len() * (1 + args.compare.len()), args.json);
    let mut ours = Vec::new();
    let mut theirs: Vec<(Peer, PeerResults)> = args
        .compare
        .iter()
        .map(|&p| (p, PeerResults::new()))
        .collect();
    let mut dead: Vec<Option<super::Error>> = args.compare.iter().map(|_| None).collect();
    for (i, p) in problems.iter().enumerate() {
        bar.set_message(p.name.clone());
        bar.set_prefix("nudt   ");
        let dir = peers
            .as_ref()
            .filter(|_| args.sample > 0)
            .map(|f| f.dir.0.join(&p.name));
        ours.push(match &exe {
            Some(exe) => measure_in_child(exe, args, &p.name, dir.as_deref()),
            None => {
                let cfg = RunConfig {
                    share: dir.clone().or_else(|| cfg.share.clone()),
                    ..cfg.clone()
                };
                problem::run(&p.scaled(args.scale), &cfg)
                    .map(Measured::from)
                    .map_err(|e| e.0)
            }
        });
        bar.inc(1);
        // Where nudt failed before sharing, the peers draw their own data.
        let data = dir.as_deref().filter(|d| d.join("exact.npy").is_file());
        for ((peer, results), dead) in theirs.iter_mut().zip(dead.iter_mut()) {
            bar.set_prefix(format!("{:<7}", peer.name()));
            if let (None, Some(files)) = (&dead, &peers) {
                match run_peer(args, *peer, p, threads, &files.problems, data) {
                    Ok(r) => results.extend(r),
                    Err(e) if i == 0 => *dead = Some(e),
                    Err(e) => {
                        results.insert(p.name.clone(), Err(e.0));
                    }
                }
            }
            bar.inc(1);
        }
        if let Some(d) = &dir {
            let _ = std::fs::remove_dir_all(d);
        }
    }
    bar.finish_and_clear();
    let peer_error = dead.iter_mut().find_map(Option::take);
    let theirs = theirs
        .into_iter()
        .zip(&dead)
        .filter(|(_, d)| d.is_none())
        .map(|(t, _)| t)
        .collect();
    Ok(Runs {
        ours,
        theirs,
        peer_error,
    })
}

/// The arguments that make `nudt bench` measure problem `name` alone, with this run's
/// settings, as one JSON line (`--one-process` keeps the child from spawning children).
fn child_args(args: &Args, name: &str) -> Vec<OsString> {
    let strategy = args
        .strategy
        .to_possible_value()
        .expect("no skipped variants");
    let mut a: Vec<OsString> = [
        "bench",
        // The parent has said whatever warnings apply, once.
        "--quiet",
        "--one-process",
        "--json",
        "--only",
        name,
        "--scale",
        &args.scale.to_string(),
        "--repeats",
        &args.repeats.to_string(),
        "--sample",
        &args.sample.to_string(),
        "--seed",
        &args.seed.to_string(),
        "--strategy",
        strategy.get_name(),
    ]
    .map(OsString::from)
    .to_vec();
    if let Some(file) = &args.problems {
        a.extend(["--problems".into(), file.into()]);
    }
    if let Some(t) = args.threads {
        a.extend(["--threads".into(), t.to_string().into()]);
    }
    if let Some(d) = &args.dist {
        a.extend(["--dist".into(), d.into()]);
    }
    a
}

/// Runs problem `name` in a child `nudt bench` (sharing its data into `share`) and reads its
/// JSON line back. A failure is the line's error, else [`child_failure`].
fn measure_in_child(exe: &Path, args: &Args, name: &str, share: Option<&Path>) -> Outcome {
    let share = share.map(|d| [OsString::from("--share-data"), d.into()]);
    let out = Command::new(exe)
        .args(child_args(args, name))
        .args(share.into_iter().flatten())
        // Its stderr is read only for why it failed, which a backtrace would bury.
        .env("RUST_BACKTRACE", "0")
        .stdin(Stdio::null())
        .output()
        .map_err(|e| format!("cannot run {}: {e}", exe.display()))?;
    let stdout = String::from_utf8_lossy(&out.stdout);
    let Some(line) = stdout
        .lines()
        .find_map(|l| serde_json::from_str::<Value>(l).ok())
    else {
        return Err(child_failure(
            out.status,
            &String::from_utf8_lossy(&out.stderr),
        ));
    };
    if let Some(e) = line.get("error").and_then(Value::as_str) {
        return Err(e.to_string());
    }
    serde_json::from_value(line).map_err(|e| format!("unreadable result from its process: {e}"))
}

/// Why a child printed no result, in one line: its own error, or, where it died (an
/// allocation that failed, a panic), its exit status and message without Rust's `note:` hints.
fn child_failure(status: ExitStatus, stderr: &str) -> String {
    let said: Vec<&str> = stderr
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty() && !l.starts_with("note:"))
        .collect();
    let said = said.join("; ");
    if let Some(own) = said.strip_prefix("error: ") {
        own.to_string()
    } else if said.is_empty() {
        format!("its process ended ({status}) with no output")
    } else {
        format!("its process ended ({status}): {said}")
    }
}

/// What the peers read besides their arguments, in one temporary directory of this run:
/// the problems file (`--problems`, or a copy of the built-in set) and each problem's shared
/// data in a folder of its name.
struct PeerFiles {
    dir: TempDir,
    problems: PathBuf,
}

impl PeerFiles {
    fn new(args: &Args) -> Result<Self> {
        let dir = TempDir(std::env::temp_dir().join(format!("nudt-bench-{}", std::process::id())));
        std::fs::create_dir_all(&dir.0)
            .map_err(|e| fail!("{}: cannot create: {e}", dir.0.display()))?;
        let problems = match &args.problems {
            Some(p) => p.clone(),
            None => {
                let copy = dir.0.join("problems.toml");
                std::fs::write(&copy, problem::DEFAULT_PROBLEMS)
                    .map_err(|e| fail!("{}: cannot write: {e}", copy.display()))?;
                copy
            }
        };
        Ok(PeerFiles { dir, problems })
    }
}

/// Runs the peer on problem `p` in a fresh Python process, so that its peak memory figure
/// is that problem's alone; on the data in `data` where nudt shared it.
fn run_peer(
    args: &Args,
    peer: Peer,
    p: &Problem,
    threads: usize,
    file: &Path,
    data: Option<&Path>,
) -> Result<PeerResults> {
    peer::run(&PeerArgs {
        peer: peer.name(),
        dist: args.dist.as_deref(),
        script: args.peer_script.as_deref(),
        problems: file,
        only: &p.name,
        threads,
        repeats: args.repeats as usize,
        sample: args.sample,
        scale: args.scale,
        seed: args.seed,
        data,
    })
}

fn peer_f64(entry: Option<&std::result::Result<Value, String>>, key: &str) -> Option<f64> {
    entry?.as_ref().ok()?.get(key)?.as_f64()
}

fn json_line(
    p: &Problem,
    scale: f64,
    m: &Outcome,
    theirs: &[(Peer, PeerResults)],
    threads: usize,
    args: &Args,
    arch: &nudt::gen::Arch,
) -> Value {
    let p = p.scaled(scale);
    let mut o = problem_json(&p);
    o.extend(object(json!({
        "distribution": p.distribution.as_deref().unwrap_or("uniform"),
        "threads": threads,
        "repeats": args.repeats,
        "scale": scale,
        "machine": arch.key(),
        "impl": "nudt",
        "version": env!("CARGO_PKG_VERSION"),
    })));
    insert_outcome(&mut o, m);
    // speedup: against the fastest peer that ran (above 1: nudt is faster).
    let (mut fastest, mut fastest_again) = (f64::INFINITY, f64::INFINITY);
    for (peer, t) in theirs {
        let pv = match t.get(&p.name) {
            Some(Ok(v)) => v.clone(),
            Some(Err(e)) => json!({ "error": e }),
            None => json!({ "error": "no result from the peer" }),
        };
        if let Some(t) = pv.get("total_s").and_then(Value::as_f64) {
            fastest = fastest.min(t);
        }
        if let Some(t) = pv.get("execute_again_s").and_then(Value::as_f64) {
            fastest_again = fastest_again.min(t);
        }
        o.insert(peer.name().into(), pv);
    }
    if let (Ok(m), true) = (m, fastest.is_finite()) {
        o.insert("speedup".into(), json!(fastest / m.total_s));
    }
    if let (Ok(m), true) = (m, fastest_again.is_finite()) {
        o.insert(
            "speedup_again".into(),
            json!(fastest_again / m.execute_again_s),
        );
    }
    Value::Object(o)
}

/// The keys every `nudt bench` JSON line of a problem starts with: the problem as run.
fn problem_json(p: &Problem) -> Map<String, Value> {
    let mut o = object(json!({
        "name": p.name,
        "type": p.ty,
        "dim": p.dim(),
        "modes": p.modes,
        "points": p.points,
        "tol": p.tol,
        "precision": p.precision,
        "ntransf": p.ntransf,
    }));
    if p.ty == 3 {
        o.insert("targets".into(), json!(p.points));
    }
    o
}

/// The keys of a JSON object (`v` made by `json!({...})` or a struct's serialisation).
fn object(v: Value) -> Map<String, Value> {
    let Value::Object(o) = v else {
        unreachable!("an object literal or a struct of plain fields")
    };
    o
}

/// A run's figures as keys of `o` (its fields' names), or why it has none as `error`.
fn insert_outcome<M: Serialize>(o: &mut Map<String, Value>, m: &std::result::Result<M, String>) {
    match m {
        Ok(m) => o.extend(object(serde_json::to_value(m).expect("plain fields"))),
        Err(e) => {
            o.insert("error".into(), json!(e));
        }
    }
}

/// Left-aligned first column, right-aligned rest, two spaces between.
fn print_rows(rows: &[Vec<String>]) {
    let cols = rows.iter().map(Vec::len).max().unwrap_or(0);
    let width: Vec<usize> = (0..cols)
        .map(|c| {
            rows.iter()
                .filter_map(|r| r.get(c))
                .map(|s| s.chars().count())
                .max()
                .unwrap_or(0)
        })
        .collect();
    for r in rows {
        let line: Vec<String> = r
            .iter()
            .enumerate()
            .map(|(c, s)| {
                if c == 0 {
                    format!("{s:<w$}", w = width[c])
                } else {
                    format!("{s:>w$}", w = width[c])
                }
            })
            .collect();
        outln!("{}", line.join("  ").trim_end());
    }
}

fn err_cell(e: Option<f64>) -> String {
    match e {
        Some(e) if e.is_finite() => format!("{e:.1e}"),
        _ => "-".into(),
    }
}

fn mem_cell(bytes: Option<f64>) -> String {
    match bytes {
        Some(b) if b.is_finite() => format!("{:.0} MB", b / 1e6),
        _ => "-".into(),
    }
}

fn print_table(problems: &[Problem], scale: f64, ours: &[Outcome], theirs: &[(Peer, PeerResults)]) {
    let mut head: Vec<String> = [
        "problem", "type", "modes", "points", "ntr", "dist", "prec", "tol", "w", "σ", "strategy",
        "plan", "setpts", "execute", "total", "again", "points/s", "error", "mem",
    ]
    .map(String::from)
    .to_vec();
    for (peer, _) in theirs {
        let name = peer.name();
        head.extend([
            "│".into(),
            name.into(),
            "again".into(),
            "error".into(),
            "mem".into(),
            "speedup".into(),
            "again".into(),
        ]);
    }
    let mut rows = vec![head];
    let mut errors = Vec::new();
    for (p, m) in problems.iter().zip(ours) {
        let p = p.scaled(scale);
        let mut row = vec![
            p.name.clone(),
            p.ty.to_string(),
            p.modes_label(),
            p.points.to_string(),
            p.ntransf.to_string(),
            p.distribution.clone().unwrap_or_else(|| "uniform".into()),
            p.precision.clone(),
            format!("{:.0e}", p.tol),
        ];
        match m {
            Ok(m) => row.extend([
                m.width.to_string(),
                format!("{}", m.sigma),
                m.strategy.trim_end_matches("-driven").to_string(),
                fmt_time(m.plan_s),
                fmt_time(m.setpts_s),
                fmt_time(m.execute_s),
                fmt_time(m.total_s),
                fmt_time(m.execute_again_s),
                fmt_rate(m.points_per_s),
                err_cell(m.rel_error),
                mem_cell(m.peak_rss_bytes.map(|b| b as f64)),
            ]),
            Err(e) => {
                row.extend(std::iter::repeat_n("failed".to_string(), 11));
                errors.push(format!("{}: {e}", p.name));
            }
        }
        for (peer, t) in theirs {
            match t.get(&p.name) {
                Some(Ok(v)) => {
                    let f = |k: &str| v.get(k).and_then(Value::as_f64).unwrap_or(f64::NAN);
                    let speedup = |ours: fn(&Measured) -> f64, key: &str| match m {
                        Ok(m) => format!("{:.2}×", f(key) / ours(m)),
                        Err(_) => "-".into(),
                    };
                    row.extend([
                        "│".into(),
                        fmt_time(f("total_s")),
                        fmt_time(f("execute_again_s")),
                        err_cell(v.get("rel_error").and_then(Value::as_f64)),
                        mem_cell(v.get("peak_rss_bytes").and_then(Value::as_f64)),
                        speedup(|m| m.total_s, "total_s"),
                        speedup(|m| m.execute_again_s, "execute_again_s"),
                    ]);
                }
                Some(Err(e)) => {
                    row.extend(["│", "failed", "-", "-", "-", "-", "-"].map(String::from));
                    errors.push(format!("{} ({}): {e}", p.name, peer.name()));
                }
                None => row.extend(["│", "-", "-", "-", "-", "-", "-"].map(String::from)),
            }
        }
        rows.push(row);
    }
    print_rows(&rows);
    if !theirs.is_empty() {
        outln!("\nspeedup = peer total / nudt total (above 1: nudt is faster); total = plan + setpts + execute; again = an execute on the plan made (points set), its speedup the peer's again / nudt's; ntr = transforms per plan; mem = peak resident memory of the process");
    }
    for e in errors {
        outln!("{e}");
    }
}
