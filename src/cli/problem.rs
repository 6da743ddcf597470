//! Benchmark problems (the `[[problem]]` tables of benches/problems.toml), their random data,
//! and one timed run of nudt on them with the error against the direct sum. Shared by
//! `demo`, `bench` and `tune`.

use super::{fail, median, npy, Context, Result, Rng};
use nudt::gen::KernelKind;
use nudt::num_complex::{Complex, Complex64};
use nudt::{direct, Float, ModeOrder, Options, Plan, Strategy, TransformType};
use serde::Deserialize;
use std::f64::consts::PI;
use std::path::{Path, PathBuf};
use std::time::Instant;

/// The problem set shipped in `benches/`, compiled in.
pub const DEFAULT_PROBLEMS: &str = include_str!("../../benches/problems.toml");

/// The GPU benchmark's problem set (`nudt bench --backend cuda|opencl`), compiled in.
#[cfg(any(feature = "cuda", feature = "opencl"))]
pub const GPU_PROBLEMS: &str = include_str!("../../benches/gpu_problems.toml");

/// One benchmark problem, as in the TOML file.
#[derive(Clone, Debug, Deserialize)]
pub struct Problem {
    pub name: String,
    #[serde(rename = "type")]
    pub ty: u8,
    #[serde(default)]
    pub modes: Vec<usize>,
    pub points: usize,
    pub tol: f64,
    #[serde(default = "default_precision")]
    pub precision: String,
    pub dim: Option<usize>,
    pub distribution: Option<String>,
    #[serde(default)]
    pub gpu_only: bool,
    /// Transforms of one plan sharing its points (FINUFFT's `ntransf`): the input and the
    /// output are that many arrays one after another.
    #[serde(default = "one")]
    pub ntransf: usize,
    /// σ fixed for nudt's GPU plans (FINUFFT's `upsampfac`), where the planner's is not
    /// the one to measure: the same problem at several σ side by side. GPU set only
    /// (cuFINUFFT's perftest has no such option, so no peer runs such a row).
    pub upsampfac: Option<f64>,
}

fn one() -> usize {
    1
}

fn default_precision() -> String {
    "f64".into()
}

#[derive(Deserialize)]
struct ProblemFile {
    #[serde(default)]
    problem: Vec<Problem>,
}

impl Problem {
    /// Dimension: `dim`, else the number of modes, else the leading `<d>d` of the name.
    pub fn dim(&self) -> usize {
        self.dim.unwrap_or_else(|| {
            if !self.modes.is_empty() {
                self.modes.len()
            } else {
                self.name
                    .chars()
                    .next()
                    .and_then(|c| c.to_digit(10))
                    .map_or(0, |d| d as usize)
            }
        })
    }

    pub fn transform(&self) -> TransformType {
        match self.ty {
            1 => TransformType::Type1,
            2 => TransformType::Type2,
            _ => TransformType::Type3,
        }
    }

    /// FINUFFT's default signs: +1 for types 1 and 3, −1 for type 2.
    pub fn isign(&self) -> i32 {
        if self.ty == 2 {
            -1
        } else {
            1
        }
    }

    pub fn is_f32(&self) -> bool {
        self.precision == "f32"
    }

    /// The same problem with `scale` times the points (at least one; a count past usize
    /// saturates, for [`Problem::check_fits`] to refuse).
    pub fn scaled(&self, scale: f64) -> Problem {
        let mut p = self.clone();
        p.points = ((self.points as f64 * scale).round() as usize).max(1);
        p
    }

    /// `256×256` for types 1/2, `-` for type 3.
    pub fn modes_label(&self) -> String {
        if self.ty == 3 {
            "-".into()
        } else {
            super::fmt_dims(&self.modes)
        }
    }

    /// Bytes a run of this problem holds at its peak, roughly: the f64 data and its copy in
    /// the problem's precision, the output, and the fine grid (σ = 2; type 3's grows with the
    /// points, K = points^(1/d) per dimension) with its sort. `None` when that overflows.
    fn bytes_needed(&self) -> Option<usize> {
        let (dim, m) = (self.dim(), self.points);
        let real = if self.is_f32() { 4 } else { 8 };
        let modes = self
            .modes
            .iter()
            .try_fold(1usize, |a, &n| a.checked_mul(n))?;
        let (n_in, n_out) = match self.ty {
            1 => (m, modes),
            2 => (modes, m),
            _ => (m, m),
        };
        let (n_in, n_out) = (
            n_in.checked_mul(self.ntransf)?,
            n_out.checked_mul(self.ntransf)?,
        );
        let grid = if self.ty == 3 {
            let k = (m as f64).powf(1.0 / dim as f64);
            let side = 2.0 * k + 32.0;
            let cells = side.powi(dim as i32);
            // Past 2^60 cells the product is refused below anyway; keep the cast exact.
            if cells > (1u64 << 60) as f64 {
                return None;
            }
            cells as usize
        } else {
            self.modes
                .iter()
                .try_fold(1usize, |a, &n| a.checked_mul(n.checked_mul(2)?.max(32)))?
        };
        let coords = dim
            .checked_mul(m)?
            .checked_mul(if self.ty == 3 { 2 } else { 1 })?;
        let per_coord = 8 + real;
        let per_value = 16 + 2 * real;
        [
            coords.checked_mul(per_coord)?,
            n_in.checked_mul(per_value)?,
            n_out.checked_mul(2 * real)?,
            grid.checked_mul(2 * real)?,
            m.checked_mul(8)?,
        ]
        .iter()
        .try_fold(0usize, |a, &b| a.checked_add(b))
    }

    /// Refuses a problem whose data would not fit in this machine's memory, before any of it
    /// is allocated (an allocation that fails aborts the process instead of reporting).
    pub fn check_fits(&self) -> Result<()> {
        let at = format!("problem '{}' ({} points)", self.name, self.points);
        let Some(bytes) = self.bytes_needed() else {
            return Err(fail!(
                "{at}: its data would overflow the address space; lower --scale or the problem's sizes"
            ));
        };
        match nudt::planner::validate::physical_memory() {
            Some(total) if bytes > total => Err(fail!(
                "{at}: needs about {:.1} GiB for its data, more than the {:.1} GiB of memory here; lower --scale or the problem's sizes",
                bytes as f64 / GIB,
                total as f64 / GIB
            )),
            _ => Ok(()),
        }
    }

    fn check(&self, file: &str) -> Result<()> {
        let at = format!("{file}: problem '{}'", self.name);
        if !(1..=3).contains(&self.ty) {
            return Err(fail!("{at}: `type` must be 1, 2 or 3, got {}", self.ty));
        }
        if self.ty != 3 && !(1..=3).contains(&self.modes.len()) {
            return Err(fail!(
                "{at}: `modes` must list 1 to 3 mode counts for a type {} problem",
                self.ty
            ));
        }
        if self.modes.contains(&0) {
            return Err(fail!("{at}: `modes` must be at least 1 in every dimension"));
        }
        if !(1..=3).contains(&self.dim()) {
            return Err(fail!(
                "{at}: cannot tell the dimension; add `dim = 1`, `2` or `3`"
            ));
        }
        if self.ty != 3 && self.dim() != self.modes.len() {
            return Err(fail!(
                "{at}: `dim` = {} but `modes` has {} entries",
                self.dim(),
                self.modes.len()
            ));
        }
        if self.ntransf == 0 {
            return Err(fail!("{at}: `ntransf` must be at least 1"));
        }
        if !(self.tol.is_finite() && self.tol > 0.0) {
            return Err(fail!("{at}: `tol` must be a positive number"));
        }
        if self.precision != "f32" && self.precision != "f64" {
            return Err(fail!(
                "{at}: `precision` must be \"f32\" or \"f64\", got \"{}\"",
                self.precision
            ));
        }
        if let Some(d) = &self.distribution {
            if !DISTRIBUTIONS.contains(&d.as_str()) {
                return Err(fail!(
                    "{at}: `distribution` \"{d}\" is not one of {}",
                    DISTRIBUTIONS.join(", ")
                ));
            }
        }
        Ok(())
    }
}

const GIB: f64 = (1u64 << 30) as f64;

/// Point distributions of the benchmark (docs/benchmarks.md; benches/peer.py draws the same).
pub const DISTRIBUTIONS: [&str; 5] = ["uniform", "clustered", "radial", "spiral", "far"];

/// Parses and checks a problems file; `file` names it in errors.
pub fn parse_problems(text: &str, file: &str) -> Result<Vec<Problem>> {
    let parsed: ProblemFile = toml::from_str(text).map_err(|e| {
        let msg = e.message().trim().to_string();
        match e.span() {
            Some(span) => {
                let line = text[..span.start.min(text.len())].lines().count().max(1);
                fail!("{file}:{line}: {msg}")
            }
            None => fail!("{file}: {msg}"),
        }
    })?;
    if parsed.problem.is_empty() {
        return Err(fail!("{file}: no [[problem]] tables found"));
    }
    for p in &parsed.problem {
        p.check(file)?;
    }
    Ok(parsed.problem)
}

/// Reads a problems file, or the built-in set when `path` is `None`.
pub fn load_problems(path: Option<&Path>) -> Result<Vec<Problem>> {
    load_or(path, DEFAULT_PROBLEMS, "benches/problems.toml (built in)")
}

/// Reads a problems file, or the built-in GPU set when `path` is `None`.
#[cfg(any(feature = "cuda", feature = "opencl"))]
pub fn load_gpu_problems(path: Option<&Path>) -> Result<Vec<Problem>> {
    load_or(path, GPU_PROBLEMS, "benches/gpu_problems.toml (built in)")
}

/// Reads the problems file at `path`, else parses `builtin` (named `name` in errors).
fn load_or(path: Option<&Path>, builtin: &str, name: &str) -> Result<Vec<Problem>> {
    match path {
        None => parse_problems(builtin, name),
        Some(p) => {
            let text = std::fs::read_to_string(p).context(format!("--problems {}", p.display()))?;
            parse_problems(&text, &p.display().to_string())
        }
    }
}

/// Plan settings of one run.
#[derive(Clone, Debug)]
pub struct RunConfig {
    pub opts: Options,
    /// Timed repetitions of plan + setpts + execute; medians are reported.
    pub repeats: usize,
    /// Outputs checked against the direct sum (0: no check).
    pub sample: usize,
    pub seed: u64,
    /// Where to write the data and the checked outputs for the peers to read ([`share`]).
    pub share: Option<PathBuf>,
}

impl Default for RunConfig {
    fn default() -> Self {
        RunConfig {
            opts: Options::default(),
            repeats: 3,
            sample: 100,
            seed: 42,
            share: None,
        }
    }
}

/// What one problem measured.
#[derive(Clone, Debug)]
pub struct Measurement {
    pub plan_s: f64,
    pub setpts_s: f64,
    pub execute_s: f64,
    /// Median over repeats of plan + setpts + execute.
    pub total_s: f64,
    /// Median of as many executes again on the last repeat's plan, its points set (the loop
    /// of an iterative reconstruction).
    pub execute_again_s: f64,
    pub points: usize,
    pub kernel: KernelKind,
    pub width: usize,
    pub beta: f64,
    pub sigma: f64,
    pub fine_grid: Vec<usize>,
    pub strategy: Strategy,
    pub tile_side: usize,
    /// Relative l2 error on the sample, NaN when not checked.
    pub rel_error: f64,
    /// Peak resident memory of the process over the problem's data, plans and transforms
    /// (before the error check), where the system reports it.
    pub peak_rss: Option<usize>,
    pub sample: usize,
}

impl Measurement {
    /// Nonuniform points per second of the whole transform (plan + setpts + execute).
    pub fn points_per_s(&self) -> f64 {
        self.points as f64 / self.total_s
    }

    /// Points per second of execute alone (the rate for a plan reused many times).
    pub fn exec_points_per_s(&self) -> f64 {
        self.points as f64 / self.execute_s
    }
}

/// Random inputs in f64: points, input values, type 3 targets.
pub struct Data {
    pub x: Vec<Vec<f64>>,
    pub input: Vec<Complex64>,
    pub targets: Vec<Vec<f64>>,
}

/// `m` points of distribution `dist` in `dim` dimensions (docs/benchmarks.md), one vector
/// per dimension.
fn points(dist: &str, dim: usize, m: usize, rng: &mut Rng) -> Vec<Vec<f64>> {
    let mut x = vec![vec![0.0; m]; dim];
    let spiral = |tau: f64, j: usize| {
        let (r, arm) = (PI * tau, (j % 16) as f64 / 16.0);
        let theta = 2.0 * PI * (32.0 * tau + arm);
        [r * theta.cos(), r * theta.sin()]
    };
    match dist {
        "clustered" => {
            for j in 0..m {
                let blob = rng.unit() < 0.9;
                for xd in x.iter_mut() {
                    xd[j] = if blob {
                        0.5 + 0.1 * rng.complex_normal().re
                    } else {
                        rng.uniform(-PI, PI)
                    };
                }
            }
        }
        "far" => {
            for xd in x.iter_mut() {
                for v in xd.iter_mut() {
                    let k = (rng.below(33) as f64) - 16.0;
                    *v = rng.uniform(-PI, PI) + 2.0 * PI * k;
                }
            }
        }
        "radial" => {
            let spokes = (m as f64).sqrt().ceil() as usize;
            let per = m.div_ceil(spokes.max(1)).max(1);
            for j in 0..m {
                let (s, k) = (j / per, j % per);
                let r = -PI + 2.0 * PI * (k as f64 + 0.5) / per as f64;
                let u = match dim {
                    1 => vec![if s % 2 == 0 { 1.0 } else { -1.0 }],
                    2 => {
                        let a = PI * s as f64 / spokes as f64;
                        vec![a.cos(), a.sin()]
                    }
                    _ => {
                        let zc = 1.0 - (2 * s + 1) as f64 / spokes as f64;
                        let a = s as f64 * PI * (3.0 - 5f64.sqrt());
                        let rho = (1.0 - zc * zc).max(0.0).sqrt();
                        vec![rho * a.cos(), rho * a.sin(), zc]
                    }
                };
                for (xd, ud) in x.iter_mut().zip(u) {
                    xd[j] = ud * r;
                }
            }
        }
        "spiral" => {
            let planes = (m as f64).cbrt().ceil().max(1.0);
            for j in 0..m {
                let xy = spiral(rng.unit(), j);
                for (xd, v) in x.iter_mut().zip(xy) {
                    xd[j] = v;
                }
                if dim == 3 {
                    x[2][j] = -PI + 2.0 * PI * ((j as f64 % planes) + 0.5) / planes;
                }
            }
        }
        _ => {
            for xd in x.iter_mut() {
                for v in xd.iter_mut() {
                    *v = rng.uniform(-PI, PI);
                }
            }
        }
    }
    x
}

/// The problem's data, drawn from `rng` (the same on every backend for one seed).
pub fn make_data(p: &Problem, rng: &mut Rng) -> Data {
    let (dim, m) = (p.dim(), p.points);
    let dist = p.distribution.as_deref().unwrap_or("uniform");
    let x = points(dist, dim, m, rng);
    let n_in = p.ntransf
        * if p.ty == 2 {
            p.modes.iter().product()
        } else {
            m
        };
    let input = (0..n_in).map(|_| rng.complex_normal()).collect();
    let targets = if p.ty == 3 {
        let k = (m as f64).powf(1.0 / dim as f64);
        if dist == "uniform" {
            (0..dim)
                .map(|_| (0..m).map(|_| rng.uniform(-k / 2.0, k / 2.0)).collect())
                .collect()
        } else {
            let mut t = points(dist, dim, m, rng);
            t.iter_mut().flatten().for_each(|v| *v *= k / (2.0 * PI));
            t
        }
    } else {
        Vec::new()
    };
    Data { x, input, targets }
}

/// Resets this process's peak resident memory (Linux `clear_refs`; elsewhere a no-op).
fn reset_peak_rss() {
    let _ = std::fs::write("/proc/self/clear_refs", "5");
}

/// This process's peak resident memory in bytes since the last reset (Linux `VmHWM`).
fn peak_rss() -> Option<usize> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
    let kib: usize = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kib * 1024)
}

/// `v` rounded to precision `T`.
pub fn narrow<T: Float>(v: &[f64]) -> Vec<T> {
    v.iter().map(|&a| T::of(a)).collect()
}

/// `v` rounded to precision `T`.
pub fn narrow_c<T: Float>(v: &[Complex64]) -> Vec<Complex<T>> {
    v.iter()
        .map(|a| Complex::new(T::of(a.re), T::of(a.im)))
        .collect()
}

fn widen<T: Float>(v: &[T]) -> Vec<f64> {
    v.iter().map(|a| a.wide()).collect()
}

/// Runs `p` in its precision, once [`Problem::check_fits`] says its data fits.
pub fn run(p: &Problem, cfg: &RunConfig) -> Result<Measurement> {
    p.check_fits()?;
    if p.is_f32() {
        run_in::<f32>(p, cfg)
    } else {
        run_in::<f64>(p, cfg)
    }
}

/// Plans, sets points and executes `cfg.repeats` times, then checks a sample of outputs.
pub fn run_in<T: Float>(p: &Problem, cfg: &RunConfig) -> Result<Measurement> {
    let mut rng = Rng::new(cfg.seed);
    let data = make_data(p, &mut rng);
    let dim = p.dim();
    // Each array is narrowed and its f64 original dropped in turn, so that the process holds
    // one copy of the data, as the peers' do; the peak is counted from there (the caller's
    // data and what nudt adds), on both sides alike.
    let Data { x, input, targets } = data;
    let x: Vec<Vec<T>> = x.into_iter().map(|v| narrow(&v)).collect();
    let wide_input = input;
    let input = narrow_c::<T>(&wide_input);
    drop(wide_input);
    let tgt: Vec<Vec<T>> = targets.into_iter().map(|v| narrow(&v)).collect();
    reset_peak_rss();
    let xs: Vec<&[T]> = x.iter().map(|v| &v[..]).collect();
    let ts: Vec<&[T]> = tgt.iter().map(|v| &v[..]).collect();
    let n_out = p.ntransf
        * match p.ty {
            1 => p.modes.iter().product(),
            _ => p.points,
        };
    let mut out = vec![Complex::<T>::default(); n_out];
    let (mut plan_t, mut set_t, mut exec_t, mut tot_t) = (vec![], vec![], vec![], vec![]);
    let mut last = None;
    for _ in 0..cfg.repeats.max(1) {
        // The previous repeat's plan goes first, so that one plan at a time counts towards
        // the peak memory, as in the peers' runs.
        drop(last.take());
        let t0 = Instant::now();
        let mut plan = match p.ty {
            3 => Plan::<T>::new_type3(dim, p.isign(), p.ntransf, p.tol, cfg.opts.clone()),
            _ => Plan::<T>::new(
                p.transform(),
                &p.modes,
                p.isign(),
                p.ntransf,
                p.tol,
                cfg.opts.clone(),
            ),
        }
        .context(format!("problem '{}'", p.name))?;
        let t1 = Instant::now();
        match p.ty {
            3 => plan.set_points_type3(&xs, &ts),
            _ => plan.set_points(&xs),
        }
        .context(format!("problem '{}'", p.name))?;
        let t2 = Instant::now();
        plan.execute(&input, &mut out)
            .context(format!("problem '{}'", p.name))?;
        let t3 = Instant::now();
        plan_t.push((t1 - t0).as_secs_f64());
        set_t.push((t2 - t1).as_secs_f64());
        exec_t.push((t3 - t2).as_secs_f64());
        tot_t.push((t3 - t0).as_secs_f64());
        last = Some(plan);
    }
    let mut plan = last.expect("at least one repeat");
    let peak_rss = peak_rss();
    // The iterative-reconstruction loop: executes on a plan whose points are set.
    let mut again_t = Vec::new();
    for _ in 0..cfg.repeats.max(1) {
        let t0 = Instant::now();
        plan.execute(&input, &mut out)
            .context(format!("problem '{}'", p.name))?;
        again_t.push(t0.elapsed().as_secs_f64());
    }
    let (rel_error, sample) = match check_outputs(p, (&x, &input, &tgt), &out, cfg.sample, &mut rng)
    {
        Some(c) => {
            if let Some(dir) = &cfg.share {
                share(dir, p, &c.points, &c.input, &c.targets, &c.which, &c.exact)?;
            }
            (c.rel_error, c.which.len())
        }
        None => (f64::NAN, 0),
    };
    Ok(Measurement {
        plan_s: median(&plan_t),
        setpts_s: median(&set_t),
        execute_s: median(&exec_t),
        total_s: median(&tot_t),
        execute_again_s: median(&again_t),
        points: p.points,
        kernel: plan.kernel().kind,
        width: plan.width(),
        beta: plan.kernel().beta,
        sigma: plan.kernel().upsampling.0,
        fine_grid: plan.fine_grid(),
        strategy: plan.strategy(),
        tile_side: plan.tile_side(),
        rel_error,
        peak_rss,
        sample,
    })
}

/// What [`check_outputs`] compared: the data widened to f64, the outputs it drew and the
/// direct sums there, and the relative l2 error of the transform's outputs against them.
pub struct Checked {
    pub points: Vec<Vec<f64>>,
    pub input: Vec<Complex64>,
    pub targets: Vec<Vec<f64>>,
    pub which: Vec<usize>,
    pub exact: Vec<Complex64>,
    pub rel_error: f64,
}

/// The data a run transformed, in its precision: points, input, type 3 targets.
pub type Transformed<'a, T> = (&'a [Vec<T>], &'a [Complex<T>], &'a [Vec<T>]);

/// Checks `sample` outputs of `out` (drawn from `rng`) against the direct sum of `p` on the
/// data `(points, input, targets)` it transformed, as that precision holds them; `None`
/// with nothing to check.
pub fn check_outputs<T: Float>(
    p: &Problem,
    (x, input, tgt): Transformed<T>,
    out: &[Complex<T>],
    sample: usize,
    rng: &mut Rng,
) -> Option<Checked> {
    let n_out = out.len();
    if sample == 0 || n_out == 0 {
        return None;
    }
    let which: Vec<usize> = (0..sample.min(n_out)).map(|_| rng.below(n_out)).collect();
    let points: Vec<Vec<f64>> = x.iter().map(|v| widen(v)).collect();
    let xr: Vec<&[f64]> = points.iter().map(|v| &v[..]).collect();
    let input: Vec<Complex64> = input
        .iter()
        .map(|c| Complex64::new(c.re.wide(), c.im.wide()))
        .collect();
    let targets: Vec<Vec<f64>> = tgt.iter().map(|v| widen(v)).collect();
    let exact = batch_direct(p, &xr, &input, &targets, n_out / p.ntransf, &which);
    let got: Vec<Complex64> = which
        .iter()
        .map(|&i| Complex64::new(out[i].re.wide(), out[i].im.wide()))
        .collect();
    let rel_error = direct::rel_error(&got, &exact);
    Some(Checked {
        points,
        input,
        targets,
        which,
        exact,
        rel_error,
    })
}

/// The direct sums at `which`, indices into the outputs of `p.ntransf` transforms one after
/// another (`n_out` each): each transform's sums from its own slice of `input`.
fn batch_direct(
    p: &Problem,
    xr: &[&[f64]],
    input: &[Complex64],
    targets: &[Vec<f64>],
    n_out: usize,
    which: &[usize],
) -> Vec<Complex64> {
    let n_in = input.len() / p.ntransf;
    let mut exact = vec![Complex64::default(); which.len()];
    for (t, c) in input.chunks(n_in).enumerate() {
        let (at, local): (Vec<usize>, Vec<usize>) = which
            .iter()
            .enumerate()
            .filter(|(_, &i)| i / n_out == t)
            .map(|(k, &i)| (k, i % n_out))
            .unzip();
        if at.is_empty() {
            continue;
        }
        let sums = match p.ty {
            1 => direct::type1(xr, c, &p.modes, ModeOrder::Cmcl, p.isign(), &local),
            2 => direct::type2(xr, c, &p.modes, ModeOrder::Cmcl, p.isign(), &local),
            _ => {
                let tr: Vec<&[f64]> = targets.iter().map(|v| &v[..]).collect();
                direct::type3(xr, c, &tr, p.isign(), &local)
            }
        };
        for (k, v) in at.into_iter().zip(sums) {
            exact[k] = v;
        }
    }
    exact
}

/// Writes into `dir` what `nudt bench` hands its peers (benches/peer.py `--data`), so that all
/// of them transform the same data and have their errors measured at the same outputs
/// against the same direct sums: the sources (`points.npy`, shape `(dim, M)`), the input
/// (`input.npy`: strengths, or the modes' coefficients in their shape), type 3's targets
/// (`targets.npy`), the indices of the checked outputs into the output in C order
/// (`sample.npy`) and the direct sums there (`exact.npy`). Everything is written in f64 from
/// the values this run transformed, which for an f32 problem are already rounded to f32:
/// the peers' cast gives them back exactly. Data drawn apart, with the outputs sampled apart,
/// let the errors of two libraries differ by the sampling alone (3-D type 1: 2.7e-7 and
/// 4.1e-7 for FINUFFT at 100 and 20 samples of its own).
fn share(
    dir: &Path,
    p: &Problem,
    points: &[Vec<f64>],
    input: &[Complex64],
    targets: &[Vec<f64>],
    which: &[usize],
    exact: &[Complex64],
) -> Result<()> {
    const WHAT: &str = "data shared with the peers";
    std::fs::create_dir_all(dir).context(format!("{WHAT}: {}", dir.display()))?;
    npy::write_rows(&dir.join("points.npy"), WHAT, points)?;
    // A batch's input is one array per transform, stacked on a leading axis.
    let one = if p.ty == 2 {
        p.modes.clone()
    } else {
        vec![input.len() / p.ntransf]
    };
    let input_shape = match p.ntransf {
        1 => one,
        n => std::iter::once(n).chain(one).collect(),
    };
    npy::write_complex(&dir.join("input.npy"), WHAT, &input_shape, input)?;
    if !targets.is_empty() {
        npy::write_rows(&dir.join("targets.npy"), WHAT, targets)?;
    }
    npy::write_indices(&dir.join("sample.npy"), WHAT, which)?;
    npy::write_complex(&dir.join("exact.npy"), WHAT, &[exact.len()], exact)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn builtin_problems_parse() {
        let ps = parse_problems(DEFAULT_PROBLEMS, "builtin").unwrap();
        assert!(ps.iter().any(|p| p.name == "2d-t1"));
        assert!(ps.iter().all(|p| (1..=3).contains(&p.dim())));
    }

    #[test]
    fn bad_problem_names_file_and_key() {
        let e = parse_problems(
            "[[problem]]\nname='x'\ntype=4\npoints=1\ntol=1e-6\nmodes=[4]\n",
            "p.toml",
        )
        .unwrap_err();
        assert!(e.0.contains("p.toml") && e.0.contains("`type`"), "{e}");
    }
}
