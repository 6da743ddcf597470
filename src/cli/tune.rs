//! `nudt tune`: times the spreading schedules, tile sides and upsampling factors on a small
//! representative set (types 1 and 2 per dimension, uniform points, tolerance 1e-6, f64),
//! prints what it tried and chose, and saves a profile.

use super::profile::{self, Choice, Profile, Trial};
use super::transform::BackendArg;
use super::{
    describe_arch, describe_gpu, fail, fmt_time, median, outln, parse_count, parse_threads,
    probe_gpu, strategy_name, warn_threads, writable_folder, Result, Rng,
};
use indicatif::{ProgressBar, ProgressStyle};
use nudt::gen::{KernelSpec, Precision, Upsampling};
use nudt::num_complex::Complex64;
use nudt::{Options, Plan, Strategy, TransformType};
use std::f64::consts::PI;
use std::path::{Path, PathBuf};
use std::time::Instant;

#[derive(clap::Args, Debug)]
#[command(after_help = "Examples:
  nudt tune --quick                  about 10-20 s on 2 cores; saves ~/.cache/nudt/<machine>.toml
  nudt tune --dims 3 --threads 4     tune 3-D only, on 4 threads
  nudt tune --out my.toml            save the profile elsewhere
  nudt gen --target rust --dim 2 --profile ~/.cache/nudt/<machine>.toml -o kernels
  nudt tune --backend cuda --quick   the GPU's bins and methods (a build with --features cuda)
  nudt tune --backend opencl --quick the same on the first OpenCL device (--features opencl)

For each dimension it times type 1 (spreading) under both schedules and several tile sides,
type 2 (interpolation) under each tile side, and upsampling 1.25 against 2, each as the median
of a few plan + setpts + execute runs. It keeps the fastest type 1 + type 2 total.
With --backend cuda or opencl it times each GPU spreading and interpolation method with its
bins and with each bin side halved and doubled (types 1 and 2, f32 and f64, set-points +
execute: GPU time on CUDA, wall time on OpenCL) and keeps, per kind of plan, the fastest where
it beats the planner's choice by 3%; plans of that backend on that device model then take it
(use_profile in CudaOptions and ClOptions).")]
pub struct Args {
    /// Smaller problems and fewer repeats (well under a minute on 2 cores)
    #[arg(long)]
    pub(super) quick: bool,
    /// Dimensions to tune
    #[arg(long, value_delimiter = ',', default_value = "1,2,3", value_parser = clap::value_parser!(u8).range(1..=3))]
    dims: Vec<u8>,
    /// Worker threads (default: all cores; the CPU backend; FINUFFT's name: --nthreads)
    #[arg(long, visible_alias = "nthreads", allow_hyphen_values = true, value_parser = parse_threads)]
    threads: Option<usize>,
    /// Write the profile here instead of the cache directory (its folder is checked before
    /// tuning starts; an existing profile of this machine keeps the dimensions not tuned)
    #[arg(long, short = 'o', visible_alias = "output", value_name = "FILE")]
    out: Option<PathBuf>,
    /// Print the table only; save nothing
    #[arg(long)]
    no_save: bool,
    /// What to tune: this machine's CPU code, or a GPU backend on its first device
    #[arg(long, value_enum, default_value_t = BackendArg::Cpu)]
    backend: BackendArg,
    /// Points of each GPU problem (default 10^7, with --quick 10^6); the modes stay
    /// (10^6 in 1-D, 1000² in 2-D, 100³ in 3-D)
    #[arg(long, allow_hyphen_values = true, value_parser = parse_gpu_points)]
    pub(super) points: Option<u64>,
    /// Modes per dimension of each GPU problem (default 10^6 in 1-D, 1000 in 2-D, 100 in
    /// 3-D): a profile for smaller grids, or a quick check of the tuner itself
    #[arg(long, allow_hyphen_values = true, value_parser = parse_gpu_modes)]
    pub(super) modes: Option<u64>,
}

/// `--modes`: a count from 2 to 10^7 per dimension.
fn parse_gpu_modes(s: &str) -> std::result::Result<u64, String> {
    match parse_count(s)? {
        n @ 2..=10_000_000 => Ok(n as u64),
        n => Err(format!("expected 2 to 1e7 modes per dimension, got {n}")),
    }
}

/// `--points`: a count from 1 to 10^9 (`1e7` accepted), the most a GPU problem's arrays
/// were sized for.
fn parse_gpu_points(s: &str) -> std::result::Result<u64, String> {
    match parse_count(s)? {
        n @ 1..=1_000_000_000 => Ok(n as u64),
        n => Err(format!("expected 1 to 1e9 points, got {n}")),
    }
}

impl Args {
    /// Where to save the profile: `--out`, else `default` (the cache directory's), or nowhere
    /// with `--no-save`. A given `--out` is checked before any tuning: a long run that cannot
    /// save its result has been wasted.
    pub(super) fn out_path(&self, default: Option<PathBuf>) -> Result<Option<PathBuf>> {
        match (&self.out, self.no_save) {
            (_, true) => Ok(None),
            (Some(p), false) => {
                let dir = p.parent().filter(|d| !d.as_os_str().is_empty());
                if p.is_dir() {
                    return Err(fail!(
                        "--out {}: is a folder; give a file name",
                        p.display()
                    ));
                }
                writable_folder(dir.unwrap_or(Path::new(".")), true)
                    .map_err(|why| fail!("--out {}: {why}", p.display()))?;
                Ok(Some(p.clone()))
            }
            (None, false) => default.map(Some).ok_or_else(|| {
                fail!(
                    "cannot find a cache directory (set XDG_CACHE_HOME or HOME, or pass --out FILE)"
                )
            }),
        }
    }

    /// The dimensions to tune, in order, once each.
    pub(super) fn dims(&self) -> Vec<usize> {
        let mut dims: Vec<usize> = self.dims.iter().map(|&d| d as usize).collect();
        dims.sort_unstable();
        dims.dedup();
        dims
    }
}

/// A representative problem's data: `m` points uniform in [−π, π)^d, their strengths and the
/// modes' coefficients (complex normal).
pub(super) fn uniform_problem(
    modes: &[usize],
    m: usize,
    rng: &mut Rng,
) -> (Vec<Vec<f64>>, Vec<Complex64>, Vec<Complex64>) {
    let x = (0..modes.len())
        .map(|_| (0..m).map(|_| rng.uniform(-PI, PI)).collect())
        .collect();
    let c = (0..m).map(|_| rng.complex_normal()).collect();
    let f = (0..modes.iter().product::<usize>())
        .map(|_| rng.complex_normal())
        .collect();
    (x, c, f)
}

const TOL: f64 = 1e-6;
/// A configuration replaces the planner's defaults only when it is this much faster.
const MARGIN: f64 = 0.03;

/// A representative problem of one dimension: modes and points.
fn workload(dim: usize, quick: bool) -> (Vec<usize>, usize) {
    match (dim, quick) {
        (1, true) => (vec![100_000], 1_000_000),
        (2, true) => (vec![256, 256], 1_000_000),
        (3, true) => (vec![32, 32, 32], 250_000),
        (1, false) => (vec![1_000_000], 4_000_000),
        (2, false) => (vec![1024, 1024], 4_000_000),
        _ => (vec![96, 96, 96], 2_000_000),
    }
}

/// One configuration to time.
#[derive(Clone, Copy, Debug)]
struct Config {
    ty: u8,
    strategy: Strategy,
    /// `None`: the planner's choice.
    tile: Option<usize>,
    sigma: f64,
}

struct Bench {
    modes: Vec<usize>,
    x: Vec<Vec<f64>>,
    c: Vec<Complex64>,
    f: Vec<Complex64>,
    repeats: usize,
    threads: Option<usize>,
}

impl Bench {
    /// Median seconds of plan + setpts + execute, with the width, tile side and schedule used.
    fn time(&self, cfg: Config) -> Result<(f64, usize, usize, Strategy)> {
        let opts = Options {
            strategy: cfg.strategy,
            tile_side: cfg.tile,
            upsampling: Some(Upsampling(cfg.sigma)),
            threads: self.threads,
            // Measure the planner itself, not the profile being replaced.
            use_profile: false,
            ..Options::default()
        };
        let ty = if cfg.ty == 1 {
            TransformType::Type1
        } else {
            TransformType::Type2
        };
        let xs: Vec<&[f64]> = self.x.iter().map(|v| &v[..]).collect();
        let (input, out_len) = if cfg.ty == 1 {
            (&self.c, self.f.len())
        } else {
            (&self.f, self.c.len())
        };
        let mut out = vec![Complex64::default(); out_len];
        let mut times = Vec::new();
        let (mut width, mut side, mut strategy) = (0, 0, cfg.strategy);
        for _ in 0..self.repeats {
            let t0 = Instant::now();
            let mut plan = Plan::<f64>::new(ty, &self.modes, 1, 1, TOL, opts.clone())?;
            plan.set_points(&xs)?;
            plan.execute(input, &mut out)?;
            times.push(t0.elapsed().as_secs_f64());
            width = plan.width();
            side = plan.tile_side();
            strategy = plan.strategy();
        }
        Ok((median(&times), width, side, strategy))
    }
}

/// Tile sides around the planner's: halves and doubles, multiples of 8, at least the width.
fn tile_candidates(default: usize, width: usize, quick: bool) -> Vec<usize> {
    let factors: &[f64] = if quick {
        &[0.5, 1.0, 2.0]
    } else {
        &[0.25, 0.5, 1.0, 2.0, 4.0]
    };
    let mut v: Vec<usize> = factors
        .iter()
        .map(|f| {
            let s = ((default as f64 * f) / 8.0).round() as usize * 8;
            s.max(width.div_ceil(8) * 8).max(8)
        })
        .collect();
    v.sort_unstable();
    v.dedup();
    v
}

struct Row {
    dim: usize,
    cfg: Config,
    /// The schedule the plan ran (Auto resolved).
    resolved: Strategy,
    width: usize,
    side: usize,
    seconds: f64,
    chosen: bool,
}

pub fn run(args: Args) -> Result<()> {
    warn_threads(args.threads);
    if args.backend != BackendArg::Cpu {
        return super::tune_gpu::run(&args, args.backend.get());
    }
    if args.points.is_some() || args.modes.is_some() {
        return Err(fail!(
            "--points and --modes size the GPU problems: they apply to --backend cuda|opencl"
        ));
    }
    let arch = nudt::plan::this_machine().clone();
    let dims = args.dims();
    let out_path = args.out_path(profile::default_path(&arch))?;
    let threads = args.threads.unwrap_or_else(rayon::current_num_threads);
    let repeats = if args.quick { 3 } else { 5 };
    outln!(
        "nudt {} tune{}",
        env!("CARGO_PKG_VERSION"),
        if args.quick { " --quick" } else { "" }
    );
    outln!("machine: {} ({})", describe_arch(&arch), arch.key());
    match probe_gpu() {
        Ok(gpu) => outln!("GPU: {}", describe_gpu(&gpu)),
        Err(why) => outln!("GPU: {why}"),
    }
    outln!(
        "problems: types 1 and 2, uniform points, tolerance {TOL:e}, f64, {threads} thread(s), median of {repeats}\n"
    );

    super::flush_notes();
    let bar = ProgressBar::new(0);
    bar.set_style(
        ProgressStyle::with_template("[{bar:30}] {pos}/{len} {msg}")
            .expect("valid template")
            .progress_chars("=> "),
    );
    let mut tiles_of = Vec::new();
    for &dim in &dims {
        let k2 = KernelSpec::for_tolerance(
            Options::default().kernel,
            TOL,
            Upsampling::TWO,
            Precision::F64,
        )?;
        let default_side = nudt::gen::plan::tile_side(dim, &k2, Precision::F64, &arch);
        let tiles = tile_candidates(default_side, k2.width, args.quick);
        // defaults (2) + both schedules per tile + type 2 per tile − the default's twins + sigma 1.25 (2)
        bar.inc_length((2 + 3 * tiles.len() - 2 + 2) as u64);
        tiles_of.push((dim, tiles));
    }

    let mut rows: Vec<Row> = Vec::new();
    let mut choices: Vec<Choice> = Vec::new();
    let mut rng = Rng::new(7);
    for (dim, tiles) in tiles_of {
        let (modes, m) = workload(dim, args.quick);
        bar.set_message(format!("{dim}-D: generating {m} points"));
        let (x, c, f) = uniform_problem(&modes, m, &mut rng);
        let bench = Bench {
            x,
            c,
            f,
            modes,
            repeats,
            threads: args.threads,
        };
        let time = |cfg: Config, rows: &mut Vec<Row>| -> Result<usize> {
            bar.set_message(describe(dim, &cfg));
            let (seconds, width, side, resolved) = bench.time(cfg)?;
            rows.push(Row {
                dim,
                cfg,
                resolved,
                width,
                side,
                seconds,
                chosen: false,
            });
            bar.inc(1);
            Ok(rows.len() - 1)
        };
        let def = |ty| Config {
            ty,
            strategy: Strategy::Auto,
            tile: None,
            sigma: 2.0,
        };
        let d1 = time(def(1), &mut rows)?;
        let d2 = time(def(2), &mut rows)?;
        let (def_side, def_strategy) = (rows[d1].side, rows[d1].resolved);
        // (type 1 row, type 2 row) pairs: the candidates.
        let mut pairs = vec![(d1, d2)];
        for &t in &tiles {
            let t2 = if t == def_side {
                d2
            } else {
                time(
                    Config {
                        ty: 2,
                        strategy: Strategy::Auto,
                        tile: Some(t),
                        sigma: 2.0,
                    },
                    &mut rows,
                )?
            };
            for s in [Strategy::SourceDriven, Strategy::TargetDriven] {
                if t == def_side && s == def_strategy {
                    continue;
                }
                let cfg = Config {
                    ty: 1,
                    strategy: s,
                    tile: Some(t),
                    sigma: 2.0,
                };
                pairs.push((time(cfg, &mut rows)?, t2));
            }
        }
        let best2 = *pairs
            .iter()
            .min_by(|a, b| pair_total(&rows, a).total_cmp(&pair_total(&rows, b)))
            .expect("the defaults ran");
        // Sigma 1.25 with the best schedule, the planner's tile side for its wider kernel.
        let strategy = rows[best2.0].resolved;
        let s1 = time(
            Config {
                ty: 1,
                strategy,
                tile: None,
                sigma: 1.25,
            },
            &mut rows,
        )?;
        let s2 = time(
            Config {
                ty: 2,
                strategy: Strategy::Auto,
                tile: None,
                sigma: 1.25,
            },
            &mut rows,
        )?;
        pairs.push((s1, s2));
        let mut best = *pairs
            .iter()
            .min_by(|a, b| pair_total(&rows, a).total_cmp(&pair_total(&rows, b)))
            .expect("non-empty");
        // Timing noise is a few percent: keep the planner's defaults unless clearly beaten.
        if pair_total(&rows, &best) > (1.0 - MARGIN) * pair_total(&rows, &(d1, d2)) {
            best = (d1, d2);
        }
        let (seconds, default_seconds) = (pair_total(&rows, &best), pair_total(&rows, &(d1, d2)));
        rows[best.0].chosen = true;
        rows[best.1].chosen = true;
        choices.push(Choice {
            dim,
            strategy: strategy_name(rows[best.0].resolved).into(),
            tile_side: rows[best.0].side,
            upsampfac: rows[best.0].cfg.sigma,
            seconds,
            default_seconds,
            default_tile_side: def_side,
        });
    }
    bar.finish_and_clear();

    print_table(&rows, &choices);

    let trials = rows
        .iter()
        .map(|r| Trial {
            dim: r.dim,
            ty: r.cfg.ty,
            strategy: strategy_name(r.resolved).into(),
            tile_side: r.side,
            upsampfac: r.cfg.sigma,
            width: r.width,
            seconds: r.seconds,
        })
        .collect();
    let mut profile = Profile {
        format: profile::FORMAT,
        nudt: env!("CARGO_PKG_VERSION").into(),
        machine: arch.key(),
        created_unix: std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_secs()),
        quick: args.quick,
        threads,
        tol: TOL,
        precision: "f64".into(),
        arch: (&arch).into(),
        choice: choices,
        trial: trials,
    };
    if let Some(path) = out_path {
        outln!();
        match profile::merge_existing(&mut profile, &path) {
            profile::Merged::Fresh => {}
            profile::Merged::Kept(kept) => {
                let kept: Vec<String> = kept.iter().map(|d| format!("{d}-D")).collect();
                outln!(
                    "kept the {} choice(s) of the existing profile (not tuned this run)",
                    kept.join(", ")
                );
            }
            profile::Merged::Replaced(why) => outln!("replacing {}: {why}", path.display()),
        }
        profile::save(&profile, &path)?;
        outln!("saved {}", path.display());
        outln!(
            "use it: nudt gen --target rust --dim {} --profile {} -o kernels",
            dims[0],
            path.display()
        );
        if args.out.is_some() {
            outln!(
                "plans read it with `nudt transform --profile {0}` (or bench), or NUDT_PROFILE={0} in the environment",
                path.display()
            );
        }
    }
    Ok(())
}

/// Type 1 + type 2 seconds of a (type 1 row, type 2 row) pair.
fn pair_total(rows: &[Row], p: &(usize, usize)) -> f64 {
    rows[p.0].seconds + rows[p.1].seconds
}

fn describe(dim: usize, c: &Config) -> String {
    format!(
        "{dim}-D type {}: {}, tile {}, sigma {}",
        c.ty,
        strategy_name(c.strategy),
        c.tile.map_or("auto".to_string(), |t| t.to_string()),
        c.sigma
    )
}

fn print_table(rows: &[Row], choices: &[Choice]) {
    outln!(
        "{:>3}  {:>4}  {:<14} {:>6}  {:>5}  {:>2}  {:>9}  note",
        "dim",
        "type",
        "strategy",
        "tile",
        "sigma",
        "w",
        "time"
    );
    for r in rows {
        let mut note = Vec::new();
        if r.cfg.tile.is_none() && r.cfg.sigma == 2.0 {
            note.push("planner default");
        }
        if r.chosen {
            note.push("<- chosen");
        }
        // Interpolation (type 2) has one schedule.
        let strategy = if r.cfg.ty == 2 {
            "-"
        } else {
            strategy_name(r.resolved)
        };
        outln!(
            "{:>3}  {:>4}  {:<14} {:>6}  {:>5}  {:>2}  {:>9}  {}",
            r.dim,
            r.cfg.ty,
            strategy,
            r.side,
            r.cfg.sigma,
            r.width,
            fmt_time(r.seconds),
            note.join(", ")
        );
    }
    outln!();
    for c in choices {
        outln!(
            "chosen for {}-D: {}, tile {}, sigma {} — type 1 + type 2 in {} vs {} with the planner's defaults (tile {}): {:.2}×",
            c.dim,
            c.strategy,
            c.tile_side,
            c.upsampfac,
            fmt_time(c.seconds),
            fmt_time(c.default_seconds),
            c.default_tile_side,
            c.default_seconds / c.seconds
        );
    }
    outln!(
        "(a configuration replaces the defaults only when at least {:.0}% faster)",
        MARGIN * 100.0
    );
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tile_candidates_are_multiples_of_8_and_cover_the_width() {
        let v = tile_candidates(16, 7, true);
        assert_eq!(v, vec![8, 16, 32]);
        assert!(tile_candidates(8, 13, true)
            .iter()
            .all(|&s| s >= 16 && s % 8 == 0));
    }
}
