//! `nudt demo`: a few NUFFTs on built-in random data, with everything a newcomer wants to see —
//! what nudt chose for this machine, how long each phase took, and how accurate it was.

use super::problem::{self, Problem, RunConfig};
use super::{
    describe_arch, fmt_dims, fmt_rate, fmt_time, outln, parse_threads, strategy_name, Result,
};
use nudt::Options;

#[derive(clap::Args, Debug)]
#[command(after_help = "Examples:
  nudt demo                    2-D type 1 (1e6 points, 256×256), 3-D type 2 and 2-D type 3
  nudt demo --threads 1        the same on one thread
  nudt demo --scale 4          four times the points")]
pub struct Args {
    /// Worker threads (default: all cores; FINUFFT's name: --nthreads)
    #[arg(long, visible_alias = "nthreads", allow_hyphen_values = true, value_parser = parse_threads)]
    threads: Option<usize>,
    /// Multiply every point count by this factor
    #[arg(long, default_value_t = 1.0, allow_negative_numbers = true, value_parser = parse_scale)]
    scale: f64,
    /// Outputs checked against the direct sum per case (0 to skip the check)
    #[arg(long, default_value_t = 100)]
    sample: usize,
}

fn parse_scale(s: &str) -> std::result::Result<f64, String> {
    match s.parse::<f64>() {
        Ok(v) if v.is_finite() && v > 0.0 && v <= 100.0 => Ok(v),
        _ => Err(format!("expected a factor in (0, 100], got '{s}'")),
    }
}

/// The built-in cases.
fn cases() -> Vec<(Problem, &'static str)> {
    let p = |name: &str, ty: u8, modes: &[usize], points: usize, dim: usize| Problem {
        name: name.into(),
        ty,
        modes: modes.to_vec(),
        points,
        tol: 1e-6,
        precision: "f64".into(),
        dim: Some(dim),
        distribution: None,
        gpu_only: false,
        ntransf: 1,
        upsampfac: None,
    };
    vec![
        (
            p("2d-t1", 1, &[256, 256], 1_000_000, 2),
            "2-D type 1: 1,000,000 random points -> 256×256 Fourier modes",
        ),
        (
            p("3d-t2", 2, &[48, 48, 48], 200_000, 3),
            "3-D type 2: 48×48×48 modes -> 200,000 random points",
        ),
        (
            p("2d-t3", 3, &[], 100_000, 2),
            "2-D type 3: 100,000 points -> 100,000 arbitrary frequencies",
        ),
    ]
}

pub fn run(args: Args) -> Result<()> {
    super::warn_threads(args.threads);
    let arch = nudt::plan::this_machine();
    outln!("nudt {} demo", env!("CARGO_PKG_VERSION"));
    outln!(
        "machine: {} (profile key {})",
        describe_arch(arch),
        arch.key()
    );
    let threads = args.threads.unwrap_or_else(rayon::current_num_threads);
    outln!("threads: {threads}; points uniform in [-pi, pi)^d, strengths complex normal, tolerance 1e-6, f64\n");
    let cfg = RunConfig {
        opts: Options {
            threads: args.threads,
            ..Options::default()
        },
        repeats: 3,
        sample: args.sample,
        seed: 2024,
        share: None,
    };
    for (case, title) in cases() {
        let case = case.scaled(args.scale);
        let title = if args.scale == 1.0 {
            title.to_string()
        } else {
            format!("{title} (points ×{})", args.scale)
        };
        let m = problem::run(&case, &cfg)?;
        outln!("{title}");
        outln!(
            "  kernel       {}, width {} (beta {:.2}), upsampling {}",
            m.kernel.name(),
            m.width,
            m.beta,
            m.sigma
        );
        outln!(
            "  fine grid    {}, tiles of {} per side, {} spreading",
            fmt_dims(&m.fine_grid),
            m.tile_side,
            strategy_name(m.strategy)
        );
        outln!("  plan         {}", fmt_time(m.plan_s));
        let what = if case.ty == 3 {
            "size the grids from the points, sort into tiles"
        } else {
            "sort into tiles"
        };
        outln!("  set points   {}  ({what})", fmt_time(m.setpts_s));
        outln!(
            "  execute      {}  ({} points/s; {} points/s counting plan and sort too)",
            fmt_time(m.execute_s),
            fmt_rate(m.exec_points_per_s()),
            fmt_rate(m.points_per_s())
        );
        if m.sample == 0 {
            outln!("  error        not checked (--sample 0)\n");
        } else {
            let verdict = if m.rel_error <= 10.0 * case.tol {
                "ok"
            } else {
                "ABOVE TOLERANCE"
            };
            outln!(
                "  error        {:.2e} relative l2 vs the direct sum on {} outputs (asked 1e-6: {verdict})\n",
                m.rel_error, m.sample
            );
        }
    }
    outln!("Times are medians of 3 runs. Next:");
    outln!("  nudt bench --scale 0.1 --compare finufft   the benchmark set beside FINUFFT");
    outln!("  nudt tune --quick                          tune tile sizes, strategy and sigma for this machine");
    outln!("  nudt transform --help                      transform your own .npy files");
    outln!("  nudt gen --target rust --dim 2 -o kernels  emit the generated spreader as source");
    Ok(())
}
