//! `nudt transform`: one NUFFT on NumPy `.npy` files, laid out as finufft's Python interface
//! lays them out (row-major mode arrays, mode k at index k + N/2, an optional leading axis of
//! stacked transforms). Points files of shape (B, M) give each of B transforms its own point
//! set (`Plan::set_points_per_transform`); the data then carries the same leading axis.

use super::npy::{self, fmt_shape, NpyComplex};
use super::{
    errln, fail, fmt_dims, fmt_time, outln, parse_count, parse_sigma, parse_threads, parse_tol,
    warn_threads, warnln, Error, KernelArg, Output, PrecisionArg, Result, StrategyArg,
};
use clap::ValueEnum;
use nudt::backend::{Backend, BackendError, BackendFloat, BackendOptions, NufftPlan};
use nudt::gen::Upsampling;
use nudt::num_complex::Complex;
use nudt::{ModeOrder, NudtError, TransformType};
use serde_json::{json, Value};
use std::path::{Path, PathBuf};
use std::time::Instant;

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum BackendArg {
    /// Generated CPU spreaders (rayon)
    Cpu,
    /// NVIDIA GPU (builds with the `cuda` feature)
    Cuda,
    /// Any OpenCL device: AMD, Intel, NVIDIA GPUs, CPUs via PoCL (builds with the `opencl` feature)
    Opencl,
}

impl BackendArg {
    pub fn get(self) -> Backend {
        match self {
            BackendArg::Cpu => Backend::Cpu,
            BackendArg::Cuda => Backend::Cuda,
            BackendArg::Opencl => Backend::OpenCl,
        }
    }
}

#[derive(clap::Args, Debug)]
#[command(after_help = "Examples:
  # type 1: strengths at 2-D points -> 64×64 modes
  nudt transform --type 1 --modes 64,64 --points x.npy,y.npy --strengths c.npy --out f.npy
  # type 2: modes (shape (64, 64)) -> values at the points, as one JSON line of timings
  nudt transform --type 2 --points x.npy,y.npy --coeffs f.npy --out c.npy --json
  # type 3: 1-D points -> arbitrary frequencies s
  nudt transform --type 3 --points x.npy --strengths c.npy --targets s.npy --out f.npy
  # 16 transforms, each with its own 2-D points: x.npy, y.npy and c.npy of shape (16, M)
  nudt transform --type 1 --modes 64,64 --points x.npy,y.npy --strengths c.npy --out f.npy

Layout (as finufft's Python interface): points are 1-D float32/float64 arrays, one file per
dimension; strengths/values are complex of shape (M,); mode arrays have shape (N1[, N2[, N3]]),
row-major, mode k at index k + N/2 in each axis (--modeord 1: FFT order). A leading axis
stacks several transforms: (ntransf, M) or (ntransf, N1, ...). Points (and type 3's targets)
of shape (B, M) give each of B transforms its own set (row b: transform b's; CPU backend):
strengths and outputs are then (B, M), mode arrays (B, N1, ...). Signs default to finufft's:
+1 for types 1 and 3, -1 for type 2. The output is complex64 or complex128 (--precision),
written atomically; its folder is checked before any work, an output that names an input is
refused, and an existing output is replaced with a notice on stderr (--quiet silences it).")]
pub struct Args {
    /// NUFFT type: 1 (points -> modes), 2 (modes -> points), 3 (points -> frequencies)
    #[arg(long = "type", value_name = "1|2|3", value_parser = clap::value_parser!(u8).range(1..=3))]
    ty: u8,
    /// Mode counts N1[,N2[,N3]] (type 1; type 2 reads them from --coeffs when omitted)
    #[arg(long, value_name = "N1[,N2[,N3]]", value_delimiter = ',', allow_hyphen_values = true, value_parser = parse_count)]
    modes: Vec<usize>,
    /// Coordinate files, one array per dimension (radians; periodic): 1-D, shared by every
    /// transform, or (B, M), a point set per transform
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
    /// Target frequency files, one array per dimension (type 3), shaped as --points
    #[arg(long, value_name = "S.npy[,T.npy[,U.npy]]", value_delimiter = ',')]
    targets: Vec<PathBuf>,
    /// Output file (.npy); an existing file is replaced, with a notice
    #[arg(long, short = 'o', visible_alias = "output", value_name = "OUT.npy")]
    out: PathBuf,
    /// Relative tolerance (FINUFFT's name: --eps)
    #[arg(long, visible_alias = "eps", default_value = "1e-6", allow_hyphen_values = true, value_parser = parse_tol)]
    tol: f64,
    /// Precision of the computation and of the output
    #[arg(long, value_enum, default_value_t = PrecisionArg::F64)]
    precision: PrecisionArg,
    /// Sign of the exponent, +1 or -1 (default: +1 for types 1 and 3, -1 for type 2)
    #[arg(long, allow_negative_numbers = true, value_parser = parse_isign)]
    isign: Option<i32>,
    /// Where to run
    #[arg(long, value_enum, default_value_t = BackendArg::Cpu)]
    backend: BackendArg,
    /// GPU devices to run on, --backend cuda or opencl (CUDA ordinals; OpenCL: 0, its one
    /// device): one, a plan there; several, types 1 and 2 over them, each transform in
    /// slabs or whole transforms on each device (a device listed twice is opened twice)
    #[arg(long, value_name = "D1[,D2,...]", value_delimiter = ',', value_parser = parse_device)]
    devices: Vec<usize>,
    /// Worker threads, --backend cpu (default: all cores; FINUFFT's name: --nthreads)
    #[arg(long, visible_alias = "nthreads", allow_hyphen_values = true, value_parser = parse_threads)]
    threads: Option<usize>,
    /// Order of the modes in each axis, as FINUFFT's modeord: 0 centred (mode k at index
    /// k + N/2), 1 FFT order (modes 0..N/2-1, then the negative ones)
    #[arg(long, value_name = "0|1", default_value_t = 0, allow_hyphen_values = true, value_parser = clap::value_parser!(u8).range(0..=1))]
    modeord: u8,
    /// Upsampling factor of the fine grid, 1.25 to 2.5 [default: the planner's choice]
    #[arg(long, allow_hyphen_values = true, value_parser = parse_sigma)]
    upsampfac: Option<f64>,
    /// Spreading kernel
    #[arg(long, value_enum, default_value_t = KernelArg::Pswf)]
    kernel: KernelArg,
    /// Spreading schedule, --backend cpu (the GPU chooses its own per point set)
    #[arg(long, value_enum, default_value_t = StrategyArg::Auto)]
    strategy: StrategyArg,
    /// Tuning profile to take choices from (saved by `nudt tune -o FILE`; also NUDT_PROFILE)
    /// [default: this machine's in the cache folder, if tuned]
    #[arg(long, value_name = "FILE")]
    profile: Option<PathBuf>,
    /// Print one JSON line with the parameters used and the timings
    #[arg(long)]
    json: bool,
}

fn parse_device(s: &str) -> std::result::Result<usize, String> {
    s.parse()
        .map_err(|_| format!("expected a device number such as 0 or 1, got '{s}'"))
}

fn parse_isign(s: &str) -> std::result::Result<i32, String> {
    match s {
        "1" | "+1" => Ok(1),
        "-1" => Ok(-1),
        _ => Err(format!("expected +1 or -1, got '{s}'")),
    }
}

pub fn run(args: Args) -> Result<()> {
    check_inputs(&args)?;
    let inputs: Vec<&Path> = (args.points.iter().chain(&args.targets))
        .chain(args.strengths.iter().chain(&args.coeffs))
        .chain(&args.profile)
        .map(PathBuf::as_path)
        .collect();
    let out = Output::check(&args.out, "--out", &inputs, false)?;
    super::profile::use_given(args.profile.as_deref())?;
    warn_threads(args.threads);
    match args.precision {
        PrecisionArg::F32 => run_in::<f32>(&args, &out),
        PrecisionArg::F64 => run_in::<f64>(&args, &out),
    }
}

/// Which inputs each type and backend take; refuses the others before any file is read.
fn check_inputs(a: &Args) -> Result<()> {
    let backend = a.backend.get();
    // Options that do not fit the backend first: they are wrong in any build.
    if backend == Backend::Cpu && !a.devices.is_empty() {
        return Err(fail!(
            "--devices applies to --backend cuda or opencl; the CPU backend runs on --threads"
        ));
    }
    if backend != Backend::Cpu {
        if a.threads.is_some() {
            return Err(fail!(
                "--threads applies to --backend cpu; a GPU backend runs on the device"
            ));
        }
        if a.strategy != StrategyArg::Auto {
            return Err(fail!(
                "--strategy applies to --backend cpu; a GPU backend chooses its method per point set"
            ));
        }
    }
    if let (false, Some(f)) = (backend.is_built(), backend.feature()) {
        return Err(fail!(
            "--backend {backend}: this nudt was built without the `{f}` feature; rebuild with `cargo build --release --features {f}`, or use --backend cpu"
        ));
    }
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

/// Tolerances from here up get a warning: they give the narrowest kernels (width 2 or 3) and
/// one digit or none, which is more often a typo (`--tol 1` for 1e-1, a sign or exponent
/// lost) than a wish.
const LOOSE_TOL: f64 = 0.1;

/// Coordinate arrays, one per dimension, all of one shape: (M,), a set every transform
/// shares, or (B, M), B sets of M points (row b transform b's, in `data` row after row).
struct Coords<T> {
    data: Vec<Vec<T>>,
    batch: Option<usize>,
    /// Points per set.
    m: usize,
}

impl<T> Coords<T> {
    /// Set `b`'s arrays (the shared set's for 1-D files).
    fn set(&self, b: usize) -> Vec<&[T]> {
        let r = match self.batch {
            Some(_) => b * self.m..(b + 1) * self.m,
            None => 0..self.m,
        };
        self.data.iter().map(|v| &v[r.clone()]).collect()
    }
}

/// Reads one coordinate array per file: all 1-D, or all (B, M), of one shape.
fn read_coords<T: NpyComplex>(files: &[PathBuf], option: &str) -> Result<Coords<T>> {
    let mut data: Vec<Vec<T>> = Vec::new();
    let mut first: Option<Vec<usize>> = None;
    for f in files {
        let a = npy::read_real::<T>(f, option)?;
        if !matches!(a.shape.len(), 1 | 2) {
            return Err(fail!(
                "{option} {}: expected a 1-D array, or (B, M) for a point set per transform, got shape {}",
                f.display(),
                fmt_shape(&a.shape)
            ));
        }
        if let Some(shape) = &first {
            if let ([m], [n]) = (&shape[..], &a.shape[..]) {
                if m != n {
                    return Err(fail!(
                        "{option} {}: {n} values, but {} has {m}; every dimension needs the same count",
                        f.display(),
                        files[0].display(),
                    ));
                }
            }
            if *shape != a.shape {
                return Err(fail!(
                    "{option} {}: shape {}, but {} has {}; every dimension needs the same shape",
                    f.display(),
                    fmt_shape(&a.shape),
                    files[0].display(),
                    fmt_shape(shape)
                ));
            }
        }
        first.get_or_insert(a.shape);
        data.push(a.data);
    }
    let shape = first.unwrap_or_default();
    let (batch, m) = match shape[..] {
        [b, m] if b == 0 => {
            return Err(fail!(
                "{option} {}: shape {}: a point set per transform needs at least one transform",
                files[0].display(),
                fmt_shape(&[b, m])
            ))
        }
        [b, m] => (Some(b), m),
        [m] => (None, m),
        _ => (None, 0),
    };
    Ok(Coords { data, batch, m })
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

/// Everything read from the files, checked against each other, for either backend.
struct Inputs<T> {
    dim: usize,
    isign: i32,
    coords: Coords<T>,
    /// Type 3 target frequencies (no arrays otherwise).
    targets: Coords<T>,
    input: Vec<Complex<T>>,
    ntransf: usize,
    /// Types 1 and 2 (from --modes, or the --coeffs file's shape).
    modes: Vec<usize>,
    /// Shape of one transform's output, and the length of all of them.
    out_one: Vec<usize>,
    out_len: usize,
}

impl<T> Inputs<T> {
    /// Points per transform.
    fn points(&self) -> usize {
        self.coords.m
    }

    fn frequencies(&self) -> usize {
        self.targets.m
    }

    /// Whether each transform has its own point set (points files of shape (B, M)).
    fn per_transform(&self) -> bool {
        self.coords.batch.is_some()
    }
}

/// What one backend ran: the output, its timings and the parameters it chose.
struct Ran<T> {
    out: Vec<Complex<T>>,
    plan_s: f64,
    setpts_s: f64,
    execute_s: f64,
    width: usize,
    upsampfac: f64,
    fine_grid: Vec<usize>,
    /// The CPU's spreading schedule, or the GPU's method for this type's main step
    /// (spreading; interpolation for type 2).
    strategy: Option<String>,
    /// CPU tile side (the GPU's bins are in `extra`).
    tile_side: Option<usize>,
    profile: Option<String>,
    threads: Option<usize>,
    backend: &'static str,
    /// Where it ran, for the one-line summary.
    place: String,
    /// Fields only this backend has (the GPU's name, bins and device timings).
    extra: serde_json::Map<String, Value>,
    /// What the plan layer chose (`recipe` in the JSON line).
    recipe: nudt::Recipe,
}

/// The step a library error came from, for naming the options behind it.
#[derive(Clone, Copy)]
enum Step {
    Plan,
    Points,
    Execute,
}

/// Puts the option(s) behind a library error in front of it: the library knows a tolerance
/// or a grid size, the user knows `--tol` and `--modes`.
fn explain<T>(a: &Args, d: &Inputs<T>, step: Step, e: NudtError) -> Error {
    use nudt::gen::GenError as G;
    use NudtError as E;
    let list = |v: &[usize]| {
        v.iter()
            .map(ToString::to_string)
            .collect::<Vec<_>>()
            .join(",")
    };
    let sigma = a
        .upsampfac
        .map_or(String::new(), |s| format!(" and --upsampfac {s}"));
    let what = match &e {
        E::InTransform { index: b, error } => match &**error {
            E::NonFinite { what, index, value } => {
                let (files, option, i) = match *what {
                    "s" | "t" | "u" => (&a.targets, "--targets", "stu".find(what)),
                    _ => (&a.points, "--points", "xyz".find(what)),
                };
                let file = i
                    .and_then(|i| files.get(i))
                    .map_or(String::new(), |f| format!(" {}", f.display()));
                return fail!("{option}{file}: non-finite value ({value}) at index [{b}, {index}]");
            }
            _ => "--points".into(),
        },
        E::Unsupported { .. } => "--points of shape (B, M) (a point set per transform)".into(),
        E::NonFinite { what, index, value } => {
            let (files, option, i) = match *what {
                "s" | "t" | "u" => (&a.targets, "--targets", "stu".find(what)),
                _ => (&a.points, "--points", "xyz".find(what)),
            };
            if let Some(f) = i.and_then(|i| files.get(i)) {
                return fail!(
                    "{option} {}: non-finite value ({value}) at index {index}",
                    f.display()
                );
            }
            option.to_string()
        }
        E::Gen(G::ToleranceBelowPrecision { .. }) => format!(
            "--tol {:e} with --precision {}",
            a.tol,
            a.precision.get().type_name()
        ),
        E::Gen(G::Tolerance(_)) => format!("--tol {:e}", a.tol),
        E::Gen(G::WidthForTolerance { .. }) => format!(
            "--tol {:e} with --kernel {}{sigma}",
            a.tol,
            format!("{:?}", a.kernel).to_lowercase()
        ),
        E::Gen(G::Upsampling(_)) => "--upsampfac".into(),
        E::Gen(G::GridOverflow { .. }) | E::GridTooLarge { .. } | E::GridOverflow if a.ty == 3 => {
            "--points with --targets (a type 3 grid grows with the product of their extents)".into()
        }
        E::Gen(G::GridOverflow { .. }) | E::GridTooLarge { .. } | E::GridOverflow => {
            format!("--modes {}{sigma}", list(&d.modes))
        }
        E::Gen(G::Modes(_)) | E::ModesShape { .. } => format!("--modes {}", list(&d.modes)),
        E::Threads(_) => format!("--threads {}", a.threads.unwrap_or(0)),
        E::TooManyPoints(_) | E::Coordinates { .. } => "--points".into(),
        E::Length { .. } => match (step, a.ty) {
            (Step::Execute, 2) => "--coeffs".into(),
            (Step::Execute, _) => "--strengths".into(),
            (_, 3) => "--points and --targets".into(),
            _ => "--points".into(),
        },
        _ => match step {
            Step::Plan => "planning",
            Step::Points => "setting the points",
            Step::Execute => "executing",
        }
        .into(),
    };
    fail!("{what}: {e}")
}

/// Reads and checks every input file; nothing is planned yet.
fn read_inputs<T: NpyComplex>(a: &Args) -> Result<Inputs<T>> {
    let dim = a.points.len();
    let isign = a.isign.unwrap_or(if a.ty == 2 { -1 } else { 1 });
    let coords = read_coords::<T>(&a.points, "--points")?;
    let m = coords.m;
    let targets = if a.ty == 3 {
        read_coords::<T>(&a.targets, "--targets")?
    } else {
        Coords {
            data: Vec::new(),
            batch: coords.batch,
            m: 0,
        }
    };
    if targets.batch.is_some() != coords.batch.is_some() {
        let shape = |c: &Coords<T>| match c.batch {
            Some(b) => fmt_shape(&[b, c.m]),
            None => fmt_shape(&[c.m]),
        };
        return Err(fail!(
            "--targets {}: shape {}, but --points {} has {}; a point set per transform needs (B, M) points and (B, K) targets",
            a.targets[0].display(),
            shape(&targets),
            a.points[0].display(),
            shape(&coords)
        ));
    }
    if let (Some(b), Some(bt)) = (coords.batch, targets.batch) {
        if b != bt {
            return Err(fail!(
                "--targets {}: {bt} target sets, but --points has {b} point sets; give one per transform",
                a.targets[0].display()
            ));
        }
    }
    let k = targets.m;
    // With a point set per transform, the data must stack exactly that many transforms.
    let sets = |nt: usize, option: &str, path: &Path, shape: &[usize]| -> Result<()> {
        match coords.batch {
            Some(b) if nt != b || (b > 1 && shape.len() == 1) => Err(fail!(
                "{option} {}: shape {}, but --points holds {b} point set(s); give the data of each, ({b}, ...)",
                path.display(),
                fmt_shape(shape)
            )),
            _ => Ok(()),
        }
    };

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
        sets(nt, "--coeffs", path, &f.shape)?;
        if dim == 1 && nt > 1 && coords.batch.is_none() {
            warnln!(
                "--coeffs {}: shape {} read as {nt} stacked 1-D transforms of {} modes each (one --points file); a 2-D transform needs two",
                path.display(),
                fmt_shape(&f.shape),
                modes[0]
            );
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
        sets(nt, "--strengths", path, &c.shape)?;
        if dim == 1 && nt > 1 && coords.batch.is_none() {
            warnln!(
                "--strengths {}: shape {} read as {nt} stacked 1-D transforms of {m} points each (one --points file)",
                path.display(),
                fmt_shape(&c.shape)
            );
        }
        let out_one = if a.ty == 1 { a.modes.clone() } else { vec![k] };
        (c.data, nt, a.modes.clone(), out_one)
    };
    // The output in values and in bytes, before anything is planned or allocated.
    let out_len = out_one
        .iter()
        .try_fold(ntransf, |n, &v| n.checked_mul(v))
        .filter(|n| n.checked_mul(std::mem::size_of::<Complex<T>>()).is_some())
        .ok_or_else(|| {
            let from = match a.ty {
                1 => {
                    let modes: Vec<String> = out_one.iter().map(ToString::to_string).collect();
                    format!("--modes {}", modes.join(","))
                }
                2 => "--points".to_string(),
                _ => "--targets".to_string(),
            };
            fail!(
                "{from} with {ntransf} transform(s): the output does not fit in the address space"
            )
        })?;
    Ok(Inputs {
        dim,
        isign,
        coords,
        targets,
        input,
        ntransf,
        modes,
        out_one,
        out_len,
    })
}

/// `--type`, already checked to be 1, 2 or 3.
fn transform_type(ty: u8) -> TransformType {
    match ty {
        1 => TransformType::Type1,
        2 => TransformType::Type2,
        _ => TransformType::Type3,
    }
}

/// Every backend's options from the command line (each plan reads its own part).
fn backend_options(a: &Args) -> BackendOptions {
    let order = if a.modeord == 1 {
        ModeOrder::Fft
    } else {
        ModeOrder::Cmcl
    };
    let mut o = BackendOptions::default()
        .with_kernel(a.kernel.get(), a.upsampfac.map(Upsampling))
        .with_mode_order(order);
    o.cpu.strategy = a.strategy.get();
    o.cpu.threads = a.threads;
    o.with_devices(&a.devices)
}

/// Plans on `--backend`, sets the points and executes, timed phase by phase on the host
/// (transfers included; a GPU plan adds its device times as `gpu_setpts_s`,
/// `gpu_execute_s`).
fn run_on<T: NpyComplex + BackendFloat>(a: &Args, d: &Inputs<T>) -> Result<Ran<T>> {
    let backend = a.backend.get();
    // Input errors name their options; the rest is the backend's own (no device...).
    let named = |step: Step, e: BackendError| match e {
        BackendError::Input(e) => explain(a, d, step, e),
        e => fail!("--backend {backend}: {e}"),
    };
    let opts = backend_options(a);
    let t0 = Instant::now();
    let plan = match transform_type(a.ty) {
        TransformType::Type3 => backend.plan_type3::<T>(d.dim, d.isign, d.ntransf, a.tol, &opts),
        ty => backend.plan::<T>(ty, &d.modes, d.isign, d.ntransf, a.tol, &opts),
    };
    let mut plan: Box<dyn NufftPlan<T>> = plan.map_err(|e| named(Step::Plan, e))?;
    let plan_s = t0.elapsed().as_secs_f64();
    // Allocated untimed, and only once the plan has accepted the sizes (its memory check).
    let mut out = vec![Complex::<T>::default(); d.out_len];
    let t1 = Instant::now();
    match d.coords.batch {
        Some(b) => {
            let xs: Vec<Vec<&[T]>> = (0..b).map(|i| d.coords.set(i)).collect();
            let ts: Vec<Vec<&[T]>> = (0..b).map(|i| d.targets.set(i)).collect();
            let xs: Vec<&[&[T]]> = xs.iter().map(|s| &s[..]).collect();
            let ts: Vec<&[&[T]]> = ts.iter().map(|s| &s[..]).collect();
            if a.ty == 3 {
                plan.set_points_type3_per_transform(&xs, &ts)
            } else {
                plan.set_points_per_transform(&xs)
            }
        }
        None if a.ty == 3 => plan.set_points_type3(&d.coords.set(0), &d.targets.set(0)),
        None => plan.set_points(&d.coords.set(0)),
    }
    .and_then(|()| plan.synchronize())
    .map_err(|e| named(Step::Points, e))?;
    let t2 = Instant::now();
    plan.execute(&d.input, &mut out)
        .map_err(|e| named(Step::Execute, e))?;
    let t3 = Instant::now();
    let r = plan.report();
    let mut extra = serde_json::Map::new();
    if let Some(dev) = &r.device {
        extra.insert("gpu".into(), json!(dev));
    }
    if let Some(bins) = &r.bins {
        extra.insert("bins".into(), json!(bins));
    }
    if let Some((setpts, execute)) = r.device_times {
        extra.insert("gpu_setpts_s".into(), json!(setpts));
        extra.insert("gpu_execute_s".into(), json!(execute));
    }
    let method = r
        .method
        .clone()
        .unwrap_or_else(|| "one thread per point".into());
    let place = match &r.device {
        Some(dev) => format!("{method} on {dev}"),
        None => method,
    };
    Ok(Ran {
        out,
        plan_s,
        setpts_s: (t2 - t1).as_secs_f64(),
        execute_s: (t3 - t2).as_secs_f64(),
        width: plan.width(),
        upsampfac: plan.kernel().upsampling.0,
        fine_grid: plan.fine_grid(),
        strategy: r.method,
        tile_side: r.tile_side,
        profile: r.profile,
        threads: r.threads,
        backend: backend.name(),
        place,
        extra,
        recipe: plan.recipe(),
    })
}

/// Reads the inputs, runs them on a backend, writes the output and reports.
fn run_in<T: NpyComplex + BackendFloat>(a: &Args, out: &Output) -> Result<()> {
    let d = read_inputs::<T>(a)?;
    let r = run_on(a, &d)?;
    if a.tol >= LOOSE_TOL {
        warnln!(
            "--tol {} is very loose: kernel width {}, relative errors up to about {} (usual tolerances are 1e-3 to 1e-12)",
            a.tol,
            r.width,
            a.tol.min(0.5)
        );
    }
    let (dim, m, k, ntransf) = (d.dim, d.points(), d.frequencies(), d.ntransf);
    let mut out_shape = d.out_one.clone();
    if ntransf > 1 || d.per_transform() {
        out_shape.insert(0, ntransf);
    }
    npy::write_complex(out.path(), "--out", &out_shape, &r.out)?;
    out.written();

    let total_s = r.plan_s + r.setpts_s + r.execute_s;
    if a.json {
        let mut v = json!({
            "type": a.ty,
            "dim": dim,
            "points": m,
            "ntransf": ntransf,
            "per_transform": d.per_transform(),
            "precision": T::PRECISION.type_name(),
            "tol": a.tol,
            "isign": d.isign,
            "kernel": format!("{:?}", a.kernel).to_lowercase(),
            "width": r.width,
            "upsampfac": r.upsampfac,
            "fine_grid": r.fine_grid,
            "strategy": r.strategy,
            "tile_side": r.tile_side,
            "profile": r.profile,
            "threads": r.threads,
            "backend": r.backend,
            "plan_s": r.plan_s,
            "setpts_s": r.setpts_s,
            "execute_s": r.execute_s,
            "total_s": total_s,
            "out": a.out.display().to_string(),
            "out_shape": out_shape,
            "out_dtype": T::DTYPE,
        });
        let o = v.as_object_mut().expect("object");
        o.extend(r.extra);
        o.insert("recipe".into(), json!(r.recipe));
        if a.ty == 3 {
            o.insert("targets".into(), json!(k));
        } else {
            o.insert("modes".into(), json!(d.modes));
        }
        outln!("{v}");
    } else {
        errln!(
            "{}: width {}, fine grid {}, {}; plan {}, setpts {}, execute {} (total {})",
            summary(a.ty, dim, m, k, &d.modes, ntransf, d.per_transform()),
            r.width,
            fmt_dims(&r.fine_grid),
            r.place,
            fmt_time(r.plan_s),
            fmt_time(r.setpts_s),
            fmt_time(r.execute_s),
            fmt_time(total_s)
        );
        errln!(
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

fn summary(
    ty: u8,
    dim: usize,
    m: usize,
    k: usize,
    modes: &[usize],
    nt: usize,
    per_transform: bool,
) -> String {
    let stack = match (nt, per_transform) {
        (_, true) => format!(" ×{nt} transforms, a point set each"),
        (1, false) => String::new(),
        _ => format!(" ×{nt} transforms"),
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
