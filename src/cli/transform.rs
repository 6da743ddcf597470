//! `nudt transform`: one NUFFT on NumPy `.npy` files, laid out as finufft's Python interface
//! lays them out (row-major mode arrays, mode k at index k + N/2, an optional leading axis of
//! stacked transforms).

use super::npy::{self, fmt_shape, NpyComplex};
use super::{
    fail, fmt_dims, fmt_time, parse_sigma, parse_threads, parse_tol, strategy_name, KernelArg,
    PrecisionArg, Result, StrategyArg,
};
use clap::ValueEnum;
use nudt::gen::Upsampling;
use nudt::num_complex::Complex;
use nudt::{Options, Plan, TransformType};
use serde_json::json;
use std::path::{Path, PathBuf};
use std::time::Instant;

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum Backend {
    /// Generated CPU spreaders (rayon)
    Cpu,
    /// NVIDIA GPU (not in this build)
    Cuda,
}

#[derive(clap::Args, Debug)]
#[command(after_help = "Examples:
  # type 1: strengths at 2-D points -> 64×64 modes
  nudt transform --type 1 --modes 64,64 --points x.npy,y.npy --strengths c.npy --out f.npy
  # type 2: modes (shape (64, 64)) -> values at the points, as one JSON line of timings
  nudt transform --type 2 --points x.npy,y.npy --coeffs f.npy --out c.npy --json
  # type 3: 1-D points -> arbitrary frequencies s
  nudt transform --type 3 --points x.npy --strengths c.npy --targets s.npy --out f.npy

Layout (as finufft's Python interface): points are 1-D float32/float64 arrays, one file per
dimension; strengths/values are complex of shape (M,); mode arrays have shape (N1[, N2[, N3]]),
row-major, mode k at index k + N/2 in each axis. A leading axis stacks several transforms:
(ntransf, M) or (ntransf, N1, ...). Signs default to finufft's: +1 for types 1 and 3, -1 for
type 2. The output is complex64 or complex128 (--precision), written atomically.")]
pub struct Args {
    /// NUFFT type: 1 (points -> modes), 2 (modes -> points), 3 (points -> frequencies)
    #[arg(long = "type", value_name = "1|2|3", value_parser = clap::value_parser!(u8).range(1..=3))]
    ty: u8,
    /// Mode counts N1[,N2[,N3]] (type 1; type 2 reads them from --coeffs when omitted)
    #[arg(long, value_name = "N1[,N2[,N3]]", value_delimiter = ',')]
    modes: Vec<usize>,
    /// Coordinate files, one 1-D array per dimension (radians; periodic)
    #[arg(
        long,
        value_name = "X.npy[,Y.npy[,Z.npy]]",
        value_delimiter = ',',
        required = true
    )]
    points: Vec<PathBuf>,
    /// Complex strengths at the points (types 1 and 3)
    #[arg(long, value_name = "C.npy")]
    strengths: Option<PathBuf>,
    /// Complex mode coefficients (type 2)
    #[arg(long, value_name = "F.npy")]
    coeffs: Option<PathBuf>,
    /// Target frequency files, one 1-D array per dimension (type 3)
    #[arg(long, value_name = "S.npy[,T.npy[,U.npy]]", value_delimiter = ',')]
    targets: Vec<PathBuf>,
    /// Output file (.npy)
    #[arg(long, short = 'o', value_name = "OUT.npy")]
    out: PathBuf,
    /// Relative tolerance
    #[arg(long, default_value = "1e-6", value_parser = parse_tol)]
    tol: f64,
    /// Precision of the computation and of the output
    #[arg(long, value_enum, default_value_t = PrecisionArg::F64)]
    precision: PrecisionArg,
    /// Sign of the exponent, +1 or -1 (default: +1 for types 1 and 3, -1 for type 2)
    #[arg(long, allow_negative_numbers = true, value_parser = parse_isign)]
    isign: Option<i32>,
    /// Where to run
    #[arg(long, value_enum, default_value_t = Backend::Cpu)]
    backend: Backend,
    /// Worker threads (default: all cores)
    #[arg(long, value_parser = parse_threads)]
    threads: Option<usize>,
    /// Upsampling factor of the fine grid: 2 or 1.25 [default: the planner's choice]
    #[arg(long, value_parser = parse_sigma)]
    upsampfac: Option<f64>,
    /// Spreading kernel
    #[arg(long, value_enum, default_value_t = KernelArg::Es)]
    kernel: KernelArg,
    /// Spreading schedule
    #[arg(long, value_enum, default_value_t = StrategyArg::Auto)]
    strategy: StrategyArg,
    /// Print one JSON line with the parameters used and the timings
    #[arg(long)]
    json: bool,
}

fn parse_isign(s: &str) -> std::result::Result<i32, String> {
    match s {
        "1" | "+1" => Ok(1),
        "-1" => Ok(-1),
        _ => Err(format!("expected +1 or -1, got '{s}'")),
    }
}

pub fn run(args: Args) -> Result<()> {
    if args.backend == Backend::Cuda {
        return Err(fail!(
            "--backend cuda: the CUDA backend is not available in this build (issue 4); use --backend cpu"
        ));
    }
    check_inputs(&args)?;
    match args.precision {
        PrecisionArg::F32 => run_in::<f32>(&args),
        PrecisionArg::F64 => run_in::<f64>(&args),
    }
}

/// Which inputs each type takes; refuses the others before any file is read.
fn check_inputs(a: &Args) -> Result<()> {
    let dim = a.points.len();
    if !(1..=3).contains(&dim) {
        return Err(fail!(
            "--points: expected 1 to 3 coordinate files (one per dimension), got {dim}"
        ));
    }
    match a.ty {
        1 | 3 if a.coeffs.is_some() => {
            return Err(fail!(
                "--coeffs is for type 2; type {} takes --strengths",
                a.ty
            ))
        }
        1 | 3 if a.strengths.is_none() => {
            return Err(fail!("type {} needs --strengths C.npy", a.ty))
        }
        2 if a.strengths.is_some() => {
            return Err(fail!(
                "--strengths is for types 1 and 3; type 2 takes --coeffs"
            ))
        }
        2 if a.coeffs.is_none() => return Err(fail!("type 2 needs --coeffs F.npy")),
        _ => {}
    }
    if a.ty == 3 {
        if !a.modes.is_empty() {
            return Err(fail!(
                "--modes is for types 1 and 2; type 3 takes --targets"
            ));
        }
        if a.targets.len() != dim {
            return Err(fail!(
                "--targets: expected {dim} file(s) to match --points, got {}",
                a.targets.len()
            ));
        }
    } else {
        if !a.targets.is_empty() {
            return Err(fail!("--targets is for type 3"));
        }
        if a.ty == 1 && a.modes.is_empty() {
            return Err(fail!("type 1 needs --modes N1[,N2[,N3]]"));
        }
        if !a.modes.is_empty() && a.modes.len() != dim {
            return Err(fail!(
                "--modes: {} mode count(s) but {dim} coordinate file(s) in --points; give one per dimension",
                a.modes.len()
            ));
        }
        if let Some(i) = a.modes.iter().position(|&n| n == 0) {
            return Err(fail!(
                "--modes: entry {} is 0; every mode count must be at least 1",
                i + 1
            ));
        }
    }
    Ok(())
}

/// Reads one 1-D coordinate array per file; all must have the same length.
fn read_coords<T: NpyComplex>(files: &[PathBuf], option: &str) -> Result<Vec<Vec<T>>> {
    let mut out: Vec<Vec<T>> = Vec::new();
    for f in files {
        let a = npy::read_real::<T>(f, option)?;
        if a.shape.len() != 1 {
            return Err(fail!(
                "{option} {}: expected a 1-D array, got shape {}",
                f.display(),
                fmt_shape(&a.shape)
            ));
        }
        if let Some(first) = out.first() {
            if first.len() != a.data.len() {
                return Err(fail!(
                    "{option} {}: {} values, but {} has {}; every dimension needs the same count",
                    f.display(),
                    a.data.len(),
                    files[0].display(),
                    first.len()
                ));
            }
        }
        out.push(a.data);
    }
    Ok(out)
}

/// Splits a data shape into (ntransf, per-transform shape) given what one transform takes.
fn stacked(shape: &[usize], one: &[usize]) -> Option<usize> {
    if shape == one {
        Some(1)
    } else if shape.len() == one.len() + 1 && &shape[1..] == one && shape[0] >= 1 {
        Some(shape[0])
    } else {
        None
    }
}

fn run_in<T: NpyComplex>(a: &Args) -> Result<()> {
    let dim = a.points.len();
    let isign = a.isign.unwrap_or(if a.ty == 2 { -1 } else { 1 });
    let coords = read_coords::<T>(&a.points, "--points")?;
    let m = coords[0].len();
    let targets = if a.ty == 3 {
        read_coords::<T>(&a.targets, "--targets")?
    } else {
        Vec::new()
    };
    let k = targets.first().map_or(0, Vec::len);

    // Input data, its stacking, and the output shape.
    let (input, ntransf, modes, out_one): (Vec<Complex<T>>, usize, Vec<usize>, Vec<usize>) = if a.ty
        == 2
    {
        let path = a.coeffs.as_ref().expect("checked");
        let f = npy::read_complex::<T>(path, "--coeffs")?;
        let modes = if a.modes.is_empty() {
            if f.shape.len() == dim || f.shape.len() == dim + 1 {
                f.shape[f.shape.len() - dim..].to_vec()
            } else {
                return Err(fail!(
                        "--coeffs {}: expected a {dim}-D mode array (or {}-D with a leading ntransf axis) to match --points, got shape {}",
                        path.display(),
                        dim + 1,
                        fmt_shape(&f.shape)
                    ));
            }
        } else {
            a.modes.clone()
        };
        let Some(nt) = stacked(&f.shape, &modes) else {
            return Err(fail!(
                "--coeffs {}: expected shape {} (or (ntransf, {})) from --modes, got {}",
                path.display(),
                fmt_shape(&modes),
                modes
                    .iter()
                    .map(|v| v.to_string())
                    .collect::<Vec<_>>()
                    .join(", "),
                fmt_shape(&f.shape)
            ));
        };
        if modes.contains(&0) {
            return Err(fail!("--coeffs {}: a mode count is 0", path.display()));
        }
        (f.data, nt, modes, vec![m])
    } else {
        let path = a.strengths.as_ref().expect("checked");
        let c = npy::read_complex::<T>(path, "--strengths")?;
        let Some(nt) = stacked(&c.shape, &[m]) else {
            return Err(fail!(
                    "--strengths {}: expected shape ({m},) or (ntransf, {m}) to match the {m} points, got {}",
                    path.display(),
                    fmt_shape(&c.shape)
                ));
        };
        let out_one = if a.ty == 1 { a.modes.clone() } else { vec![k] };
        (c.data, nt, a.modes.clone(), out_one)
    };

    let opts = Options {
        kernel: a.kernel.get(),
        upsampling: a.upsampfac.map(Upsampling),
        strategy: a.strategy.get(),
        threads: a.threads,
        ..Options::default()
    };
    let t0 = Instant::now();
    let mut plan = match a.ty {
        1 => Plan::<T>::new(TransformType::Type1, &modes, isign, ntransf, a.tol, opts),
        2 => Plan::<T>::new(TransformType::Type2, &modes, isign, ntransf, a.tol, opts),
        _ => Plan::<T>::new_type3(dim, isign, ntransf, a.tol, opts),
    }?;
    let t1 = Instant::now();
    let xs: Vec<&[T]> = coords.iter().map(|v| &v[..]).collect();
    let named = |e: nudt::NudtError| match e {
        nudt::NudtError::NonFinite { what, index, value } => {
            let (files, option, i) = match what {
                "s" | "t" | "u" => (&a.targets, "--targets", "stu".find(what)),
                _ => (&a.points, "--points", "xyz".find(what)),
            };
            match i.and_then(|i| files.get(i)) {
                Some(f) => fail!(
                    "{option} {}: non-finite value ({value}) at index {index}",
                    f.display()
                ),
                None => super::Error::from(nudt::NudtError::NonFinite { what, index, value }),
            }
        }
        e => e.into(),
    };
    if a.ty == 3 {
        let ts: Vec<&[T]> = targets.iter().map(|v| &v[..]).collect();
        plan.set_points_type3(&xs, &ts).map_err(named)?;
    } else {
        plan.set_points(&xs).map_err(named)?;
    }
    let t2 = Instant::now();
    let out_len: usize = out_one.iter().product::<usize>() * ntransf;
    let mut out = vec![Complex::<T>::default(); out_len];
    plan.execute(&input, &mut out)?;
    let t3 = Instant::now();
    let (plan_s, setpts_s, execute_s) = (
        (t1 - t0).as_secs_f64(),
        (t2 - t1).as_secs_f64(),
        (t3 - t2).as_secs_f64(),
    );

    let mut out_shape = out_one.clone();
    if ntransf > 1 {
        out_shape.insert(0, ntransf);
    }
    npy::write_complex(&a.out, "--out", &out_shape, &out)?;

    let total_s = plan_s + setpts_s + execute_s;
    if a.json {
        let mut v = json!({
            "type": a.ty,
            "dim": dim,
            "points": m,
            "ntransf": ntransf,
            "precision": T::PRECISION.type_name(),
            "tol": a.tol,
            "isign": isign,
            "kernel": format!("{:?}", a.kernel).to_lowercase(),
            "width": plan.width(),
            "upsampfac": plan.kernel().upsampling.0,
            "fine_grid": plan.fine_grid(),
            "strategy": strategy_name(plan.strategy()),
            "tile_side": plan.tile_side(),
            "profile": plan.profile().map(|p| p.display().to_string()),
            "threads": a.threads.unwrap_or_else(rayon::current_num_threads),
            "backend": "cpu",
            "plan_s": plan_s,
            "setpts_s": setpts_s,
            "execute_s": execute_s,
            "total_s": total_s,
            "out": a.out.display().to_string(),
            "out_shape": out_shape,
            "out_dtype": T::DTYPE,
        });
        let o = v.as_object_mut().expect("object");
        if a.ty == 3 {
            o.insert("targets".into(), json!(k));
        } else {
            o.insert("modes".into(), json!(modes));
        }
        println!("{v}");
    } else {
        eprintln!(
            "{}: width {}, fine grid {}, {}; plan {}, setpts {}, execute {} (total {})",
            summary(a.ty, dim, m, k, &modes, ntransf),
            plan.width(),
            fmt_dims(&plan.fine_grid()),
            strategy_name(plan.strategy()),
            fmt_time(plan_s),
            fmt_time(setpts_s),
            fmt_time(execute_s),
            fmt_time(total_s)
        );
        eprintln!(
            "wrote {} ({} {})",
            display(&a.out),
            T::DTYPE,
            fmt_shape(&out_shape)
        );
    }
    Ok(())
}

fn display(p: &Path) -> String {
    p.display().to_string()
}

fn summary(ty: u8, dim: usize, m: usize, k: usize, modes: &[usize], nt: usize) -> String {
    let stack = if nt > 1 {
        format!(" ×{nt} transforms")
    } else {
        String::new()
    };
    match ty {
        1 => format!(
            "type 1, {dim}-D: {m} points -> {} modes{stack}",
            fmt_dims(modes)
        ),
        2 => format!(
            "type 2, {dim}-D: {} modes -> {m} points{stack}",
            fmt_dims(modes)
        ),
        _ => format!("type 3, {dim}-D: {m} points -> {k} frequencies{stack}"),
    }
}
