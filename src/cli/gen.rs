//! `nudt gen`: standalone spreading source for given parameters and a machine. The Rust target
//! writes a module directory (mod.rs, support.rs, one spreader per dimension) that compiles in
//! any crate with only std and rayon; the CUDA target is in `gen_cuda`.

use super::profile;
use super::{
    describe_arch, fail, outln, parse_count, parse_sigma, parse_tol, strategy_name,
    writable_folder, write_atomic, KernelArg, Output, PrecisionArg, Result, StrategyArg,
};
use clap::ValueEnum;
use nudt::gen::gpu::Dialect;
use nudt::gen::render::{self, RustSpreader};
use nudt::gen::{plan as gplan, Arch, KernelSpec, Strategy, Upsampling};
use std::path::{Path, PathBuf};

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum Target {
    /// A Rust module (std + rayon)
    Rust,
    /// CUDA C kernels (.cu) with a JSON description of each module's launches
    Cuda,
    /// OpenCL C 1.2 kernels (.cl) with a JSON description of each module's launches
    Opencl,
}

#[derive(clap::Args, Debug)]
#[command(after_help = "Examples:
  nudt gen --target rust --dim 2 --tol 1e-6 -o src/nufft_kernels
  nudt gen --dim 1,2,3 --width 8 --precision f32 --strategy target-driven -o kernels
  nudt gen --dim 3 --cores 64 --l1 48K --l2 2M --l3 256M -o kernels     (another machine)
  nudt gen --dim 2 --profile ~/.cache/nudt/<machine>.toml -o kernels      (what `nudt tune` chose)
  nudt gen --target cuda --dim 3 --tol 1e-5 --precision f32 -o cuda_kernels
  nudt gen --target cuda --dim 2 --sm-count 108 --shared-mem 163K --l2 40M -o k   (another GPU)
  nudt gen --target cuda --fft 64,64,64 --batch 8 --precision f32 -o fft          (an FFT)
  nudt gen --target opencl --fft 2000,2000 --precision f64 --shared-mem 64K -o fft
  nudt gen --target opencl --dim 2 --tol 1e-9 -o opencl_kernels                  (OpenCL C)

The Rust output is a module directory: mod.rs (parameters, fine_size(), usage), support.rs
(tiling, bin sort, schedules) and spread_<d>d_w<w>_<prec>.rs per dimension (bin, spread,
interp). Add `mod <dir>;` to your crate and `rayon = \"1\"` to its dependencies.
The CUDA output is <module>.cu (extern \"C\" kernels) and <module>.json (entry points, block
sizes, shared memory, bins) per dimension, plus the precision's common module; the OpenCL
output the same modules as .cl files (bin sort; GM-sort, SM and output-driven spreading;
GM-sort and SM interpolation; corrections, type 3 factors), rendered from the same templates;
the subproblem kernels end in a __local argument of the JSON's dynamic_smem bytes.
With --fft, the GPU targets emit one FFT module (forward and inverse c2c kernels, .cu or .cl)
and its JSON launch description: kernels in order with grid, block, local memory and buffers.")]
pub struct Args {
    /// Language of the emitted source
    #[arg(long, value_enum, default_value_t = Target::Rust)]
    target: Target,
    /// Dimension(s) to emit spreaders for
    #[arg(long, value_delimiter = ',', required_unless_present = "fft", value_parser = clap::value_parser!(u8).range(1..=3))]
    dim: Vec<u8>,
    /// Emit an FFT of these sizes (1-3, last fastest) instead of spreaders (--target cuda|opencl)
    #[arg(long, value_delimiter = ',', conflicts_with_all = ["dim", "width", "tol", "kernel", "upsampfac", "profile"], allow_hyphen_values = true, value_parser = parse_count)]
    fft: Vec<usize>,
    /// Transforms in the FFT's batch (--fft)
    #[arg(long, requires = "fft", default_value_t = 1, allow_hyphen_values = true, value_parser = parse_count)]
    batch: usize,
    /// Kernel width in grid points (2-16)
    #[arg(long, conflicts_with = "tol", value_parser = clap::value_parser!(u8).range(2..=16))]
    width: Option<u8>,
    /// Relative tolerance; the width follows from it [default: 1e-6] (FINUFFT's name: --eps)
    #[arg(long, visible_alias = "eps", allow_hyphen_values = true, value_parser = parse_tol)]
    tol: Option<f64>,
    /// Precision of the generated arithmetic
    #[arg(long, value_enum, default_value_t = PrecisionArg::F64)]
    precision: PrecisionArg,
    /// Spreading kernel
    #[arg(long, value_enum, default_value_t = KernelArg::Pswf)]
    kernel: KernelArg,
    /// Upsampling factor the kernel is shaped for, 1.25 to 2.5 [default: 2, or the profile's]
    #[arg(long, allow_hyphen_values = true, value_parser = parse_sigma)]
    upsampfac: Option<f64>,
    /// Schedule behind `spread` [default: the profile's, else source-driven]
    #[arg(long, value_enum)]
    strategy: Option<StrategyArg>,
    /// Tile side in grid points [default: the profile's, else from the caches]
    #[arg(long, value_parser = clap::value_parser!(u32).range(8..=65536))]
    tile_side: Option<u32>,
    /// Tune for this machine (default unless --cores/--l1/--l2/--l3/--simd are given); with
    /// --profile, this machine rather than the one the profile was tuned on
    #[arg(long, conflicts_with_all = ["cores", "l1", "l2", "l3", "simd"])]
    detect: bool,
    /// Cores of the target machine
    #[arg(long, value_parser = clap::value_parser!(u32).range(1..=65536))]
    cores: Option<u32>,
    /// Per-core L1 data cache (e.g. 48K)
    #[arg(long, value_parser = parse_size)]
    l1: Option<usize>,
    /// Per-core L2 cache (e.g. 2M); with --target cuda, the GPU's L2
    #[arg(long, value_parser = parse_size)]
    l2: Option<usize>,
    /// Shared L3 cache (e.g. 32M)
    #[arg(long, value_parser = parse_size)]
    l3: Option<usize>,
    /// Widest SIMD register in bits: 128, 256 or 512
    #[arg(long, value_parser = parse_simd)]
    simd: Option<usize>,
    /// GPU streaming multiprocessors (--target cuda)
    #[arg(long)]
    sm_count: Option<u32>,
    /// GPU shared memory per block (--target cuda|opencl), e.g. 48K
    #[arg(long, value_parser = parse_size)]
    shared_mem: Option<usize>,
    /// Tuning profile written by `nudt tune`
    #[arg(long, value_name = "FILE")]
    profile: Option<PathBuf>,
    /// Output folder (created if missing; files of the same names in it are replaced, with a
    /// notice)
    #[arg(long, short = 'o', visible_alias = "output", value_name = "DIR")]
    out: PathBuf,
}

/// `48K`, `2M`, `1G`, `512KiB` or plain bytes.
pub fn parse_size(s: &str) -> std::result::Result<usize, String> {
    let t = s.trim();
    let lower = t.to_ascii_lowercase();
    let stripped = lower
        .trim_end_matches("ib")
        .trim_end_matches('b')
        .to_string();
    let (num, mult) = match stripped.chars().last() {
        Some('k') => (&stripped[..stripped.len() - 1], 1usize << 10),
        Some('m') => (&stripped[..stripped.len() - 1], 1 << 20),
        Some('g') => (&stripped[..stripped.len() - 1], 1 << 30),
        _ => (&stripped[..], 1),
    };
    match num.trim().parse::<usize>() {
        Ok(v) if v > 0 => v
            .checked_mul(mult)
            .ok_or_else(|| format!("size '{s}' is too large")),
        _ => Err(format!(
            "expected a size such as 48K, 2M or 32768, got '{s}'"
        )),
    }
}

fn parse_simd(s: &str) -> std::result::Result<usize, String> {
    match s {
        "128" | "256" | "512" => Ok(s.parse::<usize>().expect("digits") / 8),
        _ => Err(format!("expected 128, 256 or 512 (bits), got '{s}'")),
    }
}

/// `--fft`: the FFT module for the GPU targets.
fn fft(args: &Args) -> Result<()> {
    let cpu_only = [
        (args.cores.is_some(), "--cores"),
        (args.l1.is_some(), "--l1"),
        (args.l2.is_some(), "--l2"),
        (args.l3.is_some(), "--l3"),
        (args.simd.is_some(), "--simd"),
        (args.strategy.is_some(), "--strategy"),
        (args.tile_side.is_some(), "--tile-side"),
        (args.detect, "--detect"),
    ];
    if let Some((_, flag)) = cpu_only.iter().find(|(given, _)| *given) {
        return Err(fail!("{flag} does not apply to --fft"));
    }
    let command = std::iter::once("nudt".to_string())
        .chain(std::env::args().skip(1))
        .collect::<Vec<_>>()
        .join(" ");
    super::gen_fft::emit(&super::gen_fft::FftJob {
        target: args.target,
        shape: &args.fft,
        batch: args.batch,
        precision: args.precision.get(),
        sm_count: args.sm_count,
        shared_mem: args.shared_mem,
        command: &command,
        out: &args.out,
    })
}

/// Name of the spreader module of one dimension.
fn module_name(dim: usize, width: usize, prec: &str) -> String {
    format!("spread_{dim}d_w{width}_{prec}")
}

pub fn run(args: Args) -> Result<()> {
    check_out_dir(&args.out)?;
    if !args.fft.is_empty() {
        return fft(&args);
    }
    if args.target != Target::Rust {
        let cpu_only = [
            (args.cores.is_some(), "--cores"),
            (args.l1.is_some(), "--l1"),
            (args.l3.is_some(), "--l3"),
            (args.simd.is_some(), "--simd"),
            (args.strategy.is_some(), "--strategy"),
            (args.tile_side.is_some(), "--tile-side"),
        ];
        if let Some((_, flag)) = cpu_only.iter().find(|(given, _)| *given) {
            return Err(fail!(
                "{flag} describes CPU code and applies to --target rust only; describe a GPU with --sm-count, --shared-mem and --l2"
            ));
        }
    } else if args.sm_count.is_some() || args.shared_mem.is_some() {
        return Err(fail!(
            "--sm-count and --shared-mem describe a GPU and apply to --target cuda|opencl only"
        ));
    }
    let profile = match &args.profile {
        Some(p) => Some(profile::load(p)?),
        None => None,
    };
    let mut dims: Vec<usize> = args.dim.iter().map(|&d| d as usize).collect();
    dims.sort_unstable();
    dims.dedup();

    // Machine: explicit fields, else the profile's machine unless --detect, else this one.
    let manual = args.cores.is_some()
        || args.l1.is_some()
        || args.l2.is_some()
        || args.l3.is_some()
        || args.simd.is_some();
    let (mut arch, arch_source) = match &profile {
        _ if manual => (
            Arch::default(),
            "given on the command line (defaults for the rest)",
        ),
        Some(_) if args.detect => (
            nudt::plan::this_machine().clone(),
            "detected (--detect: this machine, not the profile's)",
        ),
        Some(p) => (Arch::from(&p.arch), "from the profile"),
        None => (nudt::plan::this_machine().clone(), "detected"),
    };
    if let Some(c) = args.cores {
        arch.cores = c as usize;
    }
    arch.l1 = args.l1.unwrap_or(arch.l1);
    arch.l2 = args.l2.unwrap_or(arch.l2);
    arch.l3 = args.l3.unwrap_or(arch.l3);
    arch.simd_bytes = args.simd.unwrap_or(arch.simd_bytes);

    // One sigma for the whole module: the flag, else the profile's (all its dims must agree).
    let sigma = match (args.upsampfac, &profile) {
        (Some(s), _) => s,
        (None, Some(p)) => {
            let mut s: Vec<f64> = dims
                .iter()
                .filter_map(|&d| p.choice(d).map(|c| c.upsampfac))
                .collect();
            s.dedup();
            match s.as_slice() {
                [] => 2.0,
                [one] => *one,
                _ => {
                    return Err(fail!(
                        "--profile: its dimensions chose different upsampling factors; pass --upsampfac"
                    ))
                }
            }
        }
        (None, None) => 2.0,
    };
    let precision = args.precision.get();
    let prec = precision.type_name();
    let kind = args.kernel.get();
    let kernel = match args.width {
        Some(w) => KernelSpec::for_width(kind, w as usize, Upsampling(sigma))
            .map_err(|e| fail!("--width: {e}"))?,
        None => {
            let tol = args.tol.unwrap_or(1e-6);
            KernelSpec::for_tolerance(kind, tol, Upsampling(sigma), precision)
                .map_err(|e| fail!("--tol: {e}"))?
        }
    };

    let command = std::iter::once("nudt".to_string())
        .chain(std::env::args().skip(1))
        .collect::<Vec<_>>()
        .join(" ");
    if args.target != Target::Rust {
        return super::gen_cuda::emit(&super::gen_cuda::CudaJob {
            dialect: match args.target {
                Target::Cuda => Dialect::Cuda,
                _ => Dialect::OpenCl {
                    fp64: true,
                    ptx: false,
                },
            },
            dims: &dims,
            kernel,
            precision,
            sm_count: args.sm_count,
            shared_mem: args.shared_mem,
            l2: args.l2,
            command: &command,
            tol: match args.width {
                Some(_) => None,
                None => Some(args.tol.unwrap_or(1e-6)),
            },
            out: &args.out,
        });
    }
    let machine = format!("{} ({}, {arch_source})", arch.key(), describe_arch(&arch));
    let mut files: Vec<(String, String)> = Vec::new();
    files.push(("support.rs".into(), render::SUPPORT_MODULE.into()));
    let mut modules = Vec::new();
    for &dim in &dims {
        let choice = profile.as_ref().and_then(|p| p.choice(dim));
        let strategy = match (args.strategy, choice) {
            (Some(s), _) => s.get(),
            (None, Some(c)) if c.strategy == "target-driven" => Strategy::TargetDriven,
            (None, Some(_)) => Strategy::SourceDriven,
            (None, None) => Strategy::Auto,
        };
        let (side, side_source) = match (args.tile_side, choice) {
            (Some(t), _) => (t as usize, "--tile-side".to_string()),
            (None, Some(c)) => (c.tile_side.max(kernel.width), "the profile".to_string()),
            (None, None) => (
                gplan::tile_side(dim, &kernel, precision, &arch),
                "a third of L2 per padded tile".to_string(),
            ),
        };
        if side < kernel.width {
            return Err(fail!(
                "--tile-side {side}: must be at least the kernel width {}",
                kernel.width
            ));
        }
        let max_block_points = gplan::max_block_points(1 << 22, &arch);
        let mut provenance = vec![
            format!("command: {command}"),
            format!("dim = {dim}, precision = {prec}"),
            format!(
                "kernel = {:?}, width = {}, beta = {}, upsampfac = {}{}",
                kernel.kind,
                kernel.width,
                kernel.beta,
                sigma,
                match (args.width, args.tol) {
                    (Some(_), _) => String::new(),
                    (None, t) => format!(" (for tolerance {:e})", t.unwrap_or(1e-6)),
                }
            ),
            format!(
                "strategy = {} (behind `spread`; both schedules are in `support`)",
                strategy_name(if strategy == Strategy::Auto {
                    Strategy::SourceDriven
                } else {
                    strategy
                })
            ),
            format!("tile side = {side} (from {side_source})"),
            format!("machine = {machine}"),
        ];
        if let Some(p) = &args.profile {
            provenance.push(format!("profile = {}", p.display()));
        }
        let spec = RustSpreader {
            dim,
            kernel,
            precision,
            strategy,
            support_path: "super::support".into(),
            max_block_points,
            simd_bytes: arch.simd_bytes,
            provenance,
        };
        let name = module_name(dim, kernel.width, prec);
        let mut body = render::spreader_module(&spec)?;
        body.push_str(&format!(
            "\n/// Tile side (grid points per dimension) chosen for the machine this module was generated for.\npub const TILE_SIDE: usize = {side};\n"
        ));
        files.push((format!("{name}.rs"), body));
        modules.push((dim, name, side, strategy));
    }
    files.push((
        "mod.rs".into(),
        mod_rs(&ModInfo {
            command: &command,
            machine: &machine,
            kernel: &kernel,
            sigma,
            prec,
            modules: &modules,
            profile: args.profile.as_deref(),
            tol: match args.width {
                Some(_) => None,
                None => Some(args.tol.unwrap_or(1e-6)),
            },
        }),
    ));

    write_files(&args.out, &files)
}

/// Checks, before anything is generated, that `--out` names a folder that exists or can be
/// created: a generation that fails only at its first write has wasted the user's time.
fn check_out_dir(out: &Path) -> Result<()> {
    if out.exists() && !out.is_dir() {
        return Err(fail!(
            "--out {}: is a file; --out names the folder the sources go in",
            out.display()
        ));
    }
    writable_folder(out, true).map_err(|why| fail!("--out {}: {why}", out.display()))
}

/// Writes each `(file name, text)` into `dir` (created if missing), atomically, saying which
/// it wrote and which existing files it replaced.
pub(super) fn write_files(dir: &Path, files: &[(String, String)]) -> Result<()> {
    std::fs::create_dir_all(dir)
        .map_err(|e| fail!("--out {}: cannot create the folder: {e}", dir.display()))?;
    for (name, body) in files {
        let out = Output::check(&dir.join(name), "--out", &[], false)?;
        write_atomic(out.path(), "--out", |w| {
            std::io::Write::write_all(w, body.as_bytes())
        })?;
        outln!("wrote {}", out.path().display());
        out.written();
    }
    Ok(())
}

/// What mod.rs records.
struct ModInfo<'a> {
    command: &'a str,
    machine: &'a str,
    kernel: &'a KernelSpec,
    sigma: f64,
    prec: &'a str,
    /// (dim, module name, tile side, strategy) per spreader.
    modules: &'a [(usize, String, usize, Strategy)],
    profile: Option<&'a Path>,
    tol: Option<f64>,
}

fn mod_rs(info: &ModInfo) -> String {
    let ModInfo {
        command,
        machine,
        kernel,
        sigma,
        prec,
        modules,
        profile,
        tol,
    } = *info;
    let mut s = String::new();
    let dims: Vec<String> = modules.iter().map(|m| format!("{}-D", m.0)).collect();
    s.push_str(&format!(
        "//! nudt-generated spreaders ({}), width {}, {prec}: standalone, needs only std and rayon.\n//!\n",
        dims.join(", "),
        kernel.width
    ));
    s.push_str(&format!(
        "//! Generated by nudt {} with `{command}`.\n//!\n",
        env!("CARGO_PKG_VERSION")
    ));
    s.push_str("//! | parameter | value |\n//! |---|---|\n");
    s.push_str(&format!(
        "//! | kernel | {:?}, width {}, beta {} |\n",
        kernel.kind, kernel.width, kernel.beta
    ));
    if let Some(t) = tol {
        s.push_str(&format!(
            "//! | tolerance | {t:e} (the width follows from it) |\n"
        ));
    }
    s.push_str(&format!(
        "//! | upsampling factor | {sigma} |\n//! | precision | {prec} |\n"
    ));
    for (dim, name, side, strategy) in modules {
        s.push_str(&format!(
            "//! | `{name}` | {dim}-D, tile side {side}, `spread` is {} |\n",
            strategy_name(if *strategy == Strategy::Auto {
                Strategy::SourceDriven
            } else {
                *strategy
            })
        ));
    }
    s.push_str(&format!("//! | machine | {machine} |\n"));
    if let Some(p) = profile {
        s.push_str(&format!("//! | profile | {} |\n", p.display()));
    }
    let (d, name, _, _) = &modules[0];
    let ex_n: Vec<String> = (0..*d).map(|_| "fine_size(256)".to_string()).collect();
    let ex_x: Vec<&str> = ["&x", "&y", "&z"][..*d].to_vec();
    let ex_len: Vec<String> = (0..*d).map(|i| format!("n[{i}]")).collect();
    s.push_str(&format!(
        "//!
//! Layouts: complex arrays are interleaved `[re, im, ..]`; grids are row-major, last dimension
//! fastest; points are in radians (any finite value, 2π-periodic).
//!
//! ```ignore
//! mod kernels; // this directory; add `rayon = \"1\"` to [dependencies]
//! use kernels::{{fine_size, {name} as k}};
//! let n = [{n}];
//! let tiles = k::bin(&n, &[k::TILE_SIDE; {d}], &[{x}]); // once per point set
//! let mut grid = vec![0.0; 2 * {len}];
//! k::spread(&tiles, &strengths, &mut grid); // type 1: points -> fine grid
//! k::interp(&tiles, &grid, &mut values);    // type 2: fine grid -> points
//! ```

#![allow(dead_code, unused_imports, clippy::all)]

pub mod support;
",
        n = ex_n.join(", "),
        x = ex_x.join(", "),
        len = ex_len.join(" * "),
    ));
    for (_, name, _, _) in modules {
        s.push_str(&format!("pub mod {name};\n"));
    }
    s.push_str(&format!(
        "
/// Kernel width: grid points touched per dimension by each nonuniform point.
pub const WIDTH: usize = {w};
/// Upsampling factor σ the kernel's shape was chosen for.
pub const UPSAMPFAC: f64 = {sigma:?};
/// Shape parameter of the kernel.
pub const BETA: f64 = {beta:?};

/// Fine-grid size for `modes` modes: the smallest 2^a 3^b 5^c at least max(σ·modes, 2·WIDTH).
pub fn fine_size(modes: usize) -> usize {{
    let want = ((UPSAMPFAC * modes as f64).ceil() as usize).max(2 * WIDTH);
    let mut n = want;
    loop {{
        let mut r = n;
        for p in [2, 3, 5] {{
            while r % p == 0 {{
                r /= p;
            }}
        }}
        if r == 1 {{
            return n;
        }}
        n += 1;
    }}
}}
",
        w = kernel.width,
        beta = kernel.beta,
    ));
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes() {
        assert_eq!(parse_size("48K"), Ok(48 << 10));
        assert_eq!(parse_size("2MiB"), Ok(2 << 20));
        assert_eq!(parse_size("1024"), Ok(1024));
        assert!(parse_size("lots").is_err());
        assert!(parse_size("0").is_err());
    }
}
