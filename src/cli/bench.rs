//! `nudt bench`: the problem set of benches/problems.toml, timed (median of repeats) and checked
//! against the direct sum; optionally beside FINUFFT and ducc0, as JSON lines, or as a chart.

use super::peer::{self, PeerArgs, PeerResults};
use super::plot::{self, Series};
use super::problem::{self, Measurement, Problem, RunConfig};
use super::{
    describe_arch, fail, fmt_rate, fmt_time, outln, parse_threads, strategy_name, Result,
    StrategyArg,
};
use clap::ValueEnum;
use indicatif::{ProgressBar, ProgressStyle};
use nudt::Options;
use serde_json::{json, Value};
use std::path::PathBuf;

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum Peer {
    /// FINUFFT through python3 and its pip package `finufft` (benches/peer.py)
    Finufft,
    /// ducc0's NUFFT through python3 and its pip package `ducc0` (benches/peer.py)
    Ducc0,
}

impl Peer {
    pub fn name(self) -> &'static str {
        match self {
            Peer::Finufft => "finufft",
            Peer::Ducc0 => "ducc0",
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

Problems: benches/problems.toml (built in; --problems to use another file). Points follow the
problem's distribution (uniform in [-pi, pi)^d unless it names clustered, radial, spiral or far;
--dist overrides it; docs/benchmarks.md defines them), strengths complex normal; type 3 targets
uniform in [-K/2, K/2)^d, K = points^(1/d) (or the distribution, scaled).
Signs: +1 for types 1 and 3, -1 for type 2 (FINUFFT's defaults). Times are medians of --repeats
runs of plan + setpts + execute; points/s = points / total.")]
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
    /// Timed repetitions per problem (the median is reported)
    #[arg(long, default_value_t = 3, value_parser = clap::value_parser!(u64).range(1..=1000))]
    repeats: u64,
    /// Worker threads, for nudt and the peer (default: all cores)
    #[arg(long, value_parser = parse_threads)]
    threads: Option<usize>,
    /// Outputs per problem checked against the direct sum (0 to skip)
    #[arg(long, default_value_t = 100)]
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
    /// One JSON object per problem per line instead of the table
    #[arg(long)]
    json: bool,
    /// Draw throughput per problem into FILE (.svg or .png)
    #[arg(long, value_name = "FILE")]
    plot: Option<PathBuf>,
}

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

pub fn run(args: Args) -> Result<()> {
    if let Some(p) = &args.plot {
        let ext = p.extension().map(|e| e.to_string_lossy().to_lowercase());
        if !matches!(ext.as_deref(), Some("svg") | Some("png")) {
            return Err(fail!(
                "--plot {}: expected a file name ending in .svg or .png",
                p.display()
            ));
        }
    }
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
    };

    let bar = progress(problems.len(), args.json);
    bar.set_prefix("nudt   ");
    let mut ours: Vec<std::result::Result<Measurement, String>> = Vec::new();
    for p in &problems {
        bar.set_message(p.name.clone());
        ours.push(problem::run(&p.scaled(args.scale), &cfg).map_err(|e| e.0));
        bar.inc(1);
    }
    bar.finish_and_clear();

    // A failed peer does not lose our results: they are printed, then the error is returned.
    let mut theirs: Vec<(Peer, PeerResults)> = Vec::new();
    let mut peer_error = None;
    for &peer in &args.compare {
        match run_peer(&args, peer, &problems, threads) {
            Ok(t) => theirs.push((peer, t)),
            Err(e) => peer_error = peer_error.or(Some(e)),
        }
    }

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

    if let Some(path) = &args.plot {
        let names: Vec<String> = problems.iter().map(|p| p.name.clone()).collect();
        let mut series = vec![Series {
            name: "nudt".into(),
            values: ours
                .iter()
                .map(|m| m.as_ref().ok().map(|m| m.points_per_s() / 1e6))
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

fn run_peer(args: &Args, peer: Peer, problems: &[Problem], threads: usize) -> Result<PeerResults> {
    // The peer reads the same file; the built-in set goes through a temporary copy.
    let tmp;
    let file = match &args.problems {
        Some(p) => p.clone(),
        None => {
            tmp = std::env::temp_dir().join(format!("nudt-problems-{}.toml", std::process::id()));
            std::fs::write(&tmp, problem::DEFAULT_PROBLEMS)
                .map_err(|e| fail!("{}: cannot write: {e}", tmp.display()))?;
            tmp.clone()
        }
    };
    let names: Vec<String> = problems.iter().map(|p| p.name.clone()).collect();
    let bar = progress(problems.len(), args.json);
    bar.set_prefix(format!("{:<7}", peer.name()));
    let result = peer::run(
        &PeerArgs {
            peer: peer.name(),
            dist: args.dist.as_deref(),
            script: args.peer_script.as_deref(),
            problems: &file,
            only: &names,
            threads,
            repeats: args.repeats as usize,
            sample: args.sample,
            scale: args.scale,
            seed: args.seed,
        },
        |name| {
            bar.set_message(name.to_string());
            bar.inc(1);
        },
    );
    bar.finish_and_clear();
    if args.problems.is_none() {
        let _ = std::fs::remove_file(&file);
    }
    result
}

fn peer_f64(entry: Option<&std::result::Result<Value, String>>, key: &str) -> Option<f64> {
    entry?.as_ref().ok()?.get(key)?.as_f64()
}

fn json_line(
    p: &Problem,
    scale: f64,
    m: &std::result::Result<Measurement, String>,
    theirs: &[(Peer, PeerResults)],
    threads: usize,
    args: &Args,
    arch: &nudt::gen::Arch,
) -> Value {
    let p = p.scaled(scale);
    let mut v = json!({
        "name": p.name,
        "type": p.ty,
        "dim": p.dim(),
        "modes": p.modes,
        "points": p.points,
        "distribution": p.distribution.as_deref().unwrap_or("uniform"),
        "tol": p.tol,
        "precision": p.precision,
        "threads": threads,
        "repeats": args.repeats,
        "scale": scale,
        "machine": arch.key(),
        "impl": "nudt",
        "version": env!("CARGO_PKG_VERSION"),
    });
    let o = v.as_object_mut().expect("object");
    if p.ty == 3 {
        o.insert("targets".into(), json!(p.points));
    }
    match m {
        Ok(m) => {
            let rel = if m.rel_error.is_finite() {
                json!(m.rel_error)
            } else {
                Value::Null
            };
            for (k, val) in [
                ("plan_s", json!(m.plan_s)),
                ("setpts_s", json!(m.setpts_s)),
                ("execute_s", json!(m.execute_s)),
                ("total_s", json!(m.total_s)),
                ("points_per_s", json!(m.points_per_s())),
                ("rel_error", rel),
                ("peak_rss_bytes", json!(m.peak_rss)),
                ("width", json!(m.width)),
                ("sigma", json!(m.sigma)),
                ("fine_grid", json!(m.fine_grid)),
                ("strategy", json!(strategy_name(m.strategy))),
                ("tile_side", json!(m.tile_side)),
            ] {
                o.insert(k.into(), val);
            }
        }
        Err(e) => {
            o.insert("error".into(), json!(e));
        }
    }
    // speedup: against the fastest peer that ran (above 1: nudt is faster).
    let mut fastest = f64::INFINITY;
    for (peer, t) in theirs {
        let pv = match t.get(&p.name) {
            Some(Ok(v)) => v.clone(),
            Some(Err(e)) => json!({ "error": e }),
            None => json!({ "error": "no result from the peer" }),
        };
        if let Some(t) = pv.get("total_s").and_then(Value::as_f64) {
            fastest = fastest.min(t);
        }
        o.insert(peer.name().into(), pv);
    }
    if let (Ok(m), true) = (m, fastest.is_finite()) {
        o.insert("speedup".into(), json!(fastest / m.total_s));
    }
    v
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

fn err_cell(e: f64) -> String {
    if e.is_finite() {
        format!("{e:.1e}")
    } else {
        "-".into()
    }
}

fn mem_cell(bytes: Option<f64>) -> String {
    match bytes {
        Some(b) if b.is_finite() => format!("{:.0} MB", b / 1e6),
        _ => "-".into(),
    }
}

fn print_table(
    problems: &[Problem],
    scale: f64,
    ours: &[std::result::Result<Measurement, String>],
    theirs: &[(Peer, PeerResults)],
) {
    let mut head: Vec<String> = [
        "problem", "type", "modes", "points", "dist", "prec", "tol", "w", "σ", "strategy", "plan",
        "setpts", "execute", "total", "points/s", "error", "mem",
    ]
    .map(String::from)
    .to_vec();
    for (peer, _) in theirs {
        let name = peer.name();
        head.extend([
            "│".into(),
            name.into(),
            "error".into(),
            "mem".into(),
            "speedup".into(),
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
            p.distribution.clone().unwrap_or_else(|| "uniform".into()),
            p.precision.clone(),
            format!("{:.0e}", p.tol),
        ];
        match m {
            Ok(m) => row.extend([
                m.width.to_string(),
                format!("{}", m.sigma),
                strategy_name(m.strategy)
                    .trim_end_matches("-driven")
                    .to_string(),
                fmt_time(m.plan_s),
                fmt_time(m.setpts_s),
                fmt_time(m.execute_s),
                fmt_time(m.total_s),
                fmt_rate(m.points_per_s()),
                err_cell(m.rel_error),
                mem_cell(m.peak_rss.map(|b| b as f64)),
            ]),
            Err(e) => {
                row.extend(std::iter::repeat_n("failed".to_string(), 10));
                errors.push(format!("{}: {e}", p.name));
            }
        }
        for (peer, t) in theirs {
            match t.get(&p.name) {
                Some(Ok(v)) => {
                    let f = |k: &str| v.get(k).and_then(Value::as_f64).unwrap_or(f64::NAN);
                    let speedup = match m {
                        Ok(m) => format!("{:.2}×", f("total_s") / m.total_s),
                        Err(_) => "-".into(),
                    };
                    row.extend([
                        "│".into(),
                        fmt_time(f("total_s")),
                        err_cell(f("rel_error")),
                        mem_cell(v.get("peak_rss_bytes").and_then(Value::as_f64)),
                        speedup,
                    ]);
                }
                Some(Err(e)) => {
                    row.extend(["│", "failed", "-", "-", "-"].map(String::from));
                    errors.push(format!("{} ({}): {e}", p.name, peer.name()));
                }
                None => row.extend(["│", "-", "-", "-", "-"].map(String::from)),
            }
        }
        rows.push(row);
    }
    print_rows(&rows);
    if !theirs.is_empty() {
        outln!("\nspeedup = peer total / nudt total (above 1: nudt is faster); total = plan + setpts + execute; mem = peak resident memory of the process");
    }
    for e in errors {
        outln!("{e}");
    }
}
