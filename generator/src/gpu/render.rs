//! Rendering the GPU modules from the templates under `generator/templates/gpu/`: the spread
//! module of a [`GpuSpreadSpec`], the common module of a precision and the wide-Gaussian
//! module, each in either [`Dialect`].

use super::*;
use crate::error::GenError;
use crate::kernel::{gauss_legendre, KernelSpec};
use crate::params::Precision;
use std::collections::HashMap;
use std::sync::{Arc, Mutex, OnceLock};
use tera::{Context, Tera};

const SPREAD: &str = include_str!("../../templates/gpu/spread.tera");
const COMMON: &str = include_str!("../../templates/gpu/common.tera");
const GAUSSIAN_WIDE: &str = include_str!("../../templates/gpu/gaussian_wide.tera");
/// `grid_position`, the rule that places a coordinate on a grid, which the spread and the
/// common module both render.
const POSITION: &str = include_str!("../../templates/gpu/position.tera");

/// Renders the template `body` (one of this module's) under `name`. Each template is parsed
/// once per process: parsing the spread template took most of a module's 10 ms render, which
/// a type 3 set-points pays for two grids whenever its kernel changes.
fn render(name: &'static str, body: &'static str, ctx: &Context) -> Result<String, GenError> {
    type Parsed = Mutex<HashMap<&'static str, Arc<Tera>>>;
    static PARSED: OnceLock<Parsed> = OnceLock::new();
    let err = |e: tera::Error| GenError::Render(format!("{e:?}"));
    let parsed = PARSED.get_or_init(Default::default);
    let cached = parsed
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .get(name)
        .cloned();
    let t = match cached {
        Some(t) => t,
        None => {
            let mut t = Tera::default();
            t.add_raw_template(name, body).map_err(err)?;
            let t = Arc::new(t);
            let mut map = parsed.lock().unwrap_or_else(|e| e.into_inner());
            map.insert(name, t.clone());
            t
        }
    };
    t.render(name, ctx).map_err(err)
}

/// A CUDA floating literal of the given precision.
fn literal(c: f64, p: Precision) -> String {
    match p {
        Precision::F32 => format!("{:e}f", c as f32),
        Precision::F64 => format!("{c:e}"),
    }
}

/// The body of `weights(t, k)` (the fitted rows of the kernel's polynomials) or
/// `dweights(t, k)` (their derivatives' rows): Horner's rule over `rows`, highest degree
/// first, written out with the coefficients as literals so that every multiply-add has an
/// immediate operand.
fn horner_body(rows: &[Vec<f64>], p: Precision) -> String {
    let mut s = String::new();
    for (j, &c) in rows[0].iter().enumerate() {
        s += &format!("    T k{j} = {};\n", literal(c, p));
    }
    for row in &rows[1..] {
        for (j, &c) in row.iter().enumerate() {
            s += &format!("    k{j} = fma(k{j}, t, {});\n", literal(c, p));
        }
    }
    for j in 0..rows[0].len() {
        s += &format!("    k[{j}] = k{j};\n");
    }
    s
}

/// Names of the spread module's entry points.
pub mod names {
    pub const BIN_COUNT: &str = "nudt_bin_count";
    pub const BIN_COUNT_LOCAL: &str = "nudt_bin_count_local";
    pub const BIN_SCATTER: &str = "nudt_bin_scatter";
    pub const BIN_BUCKET: &str = "nudt_bin_bucket";
    pub const BIN_PLACE: &str = "nudt_bin_place";
    pub const SPREAD_GM: &str = "nudt_spread_gm";
    pub const SPREAD_SM: &str = "nudt_spread_sm";
    pub const INTERP_GM: &str = "nudt_interp_gm";
    pub const INTERP_SM: &str = "nudt_interp_sm";
    pub const SPREAD_OD: &str = "nudt_spread_od";
    pub const INTERP_GRAD_GM: &str = "nudt_interp_grad_gm";
    pub const INTERP_GRAD_SM: &str = "nudt_interp_grad_sm";
    pub const SPREAD_GRAD_GM: &str = "nudt_spread_grad_gm";
    pub const SPREAD_GRAD_SM: &str = "nudt_spread_grad_sm";
    pub const BIN_SCAN_TILES: &str = "nudt_bin_scan_tiles";
    pub const BIN_SCAN_TOTALS: &str = "nudt_bin_scan_totals";
    pub const BIN_SCAN_ADD: &str = "nudt_bin_scan_add";
    pub const SUBPROB_MAP: &str = "nudt_subprob_map";
    pub const GRID_TO_MODES: &str = "nudt_grid_to_modes";
    pub const MODES_TO_GRID: &str = "nudt_modes_to_grid";
    pub const CMUL: &str = "nudt_cmul";
    pub const SCALE: &str = "nudt_scale";
    pub const GRAD_REDUCE: &str = "nudt_grad_reduce";
    pub const ROUTE: &str = "nudt_route";
    pub const PACK_POINTS: &str = "nudt_pack_points";
    pub const UNPACK_POINTS: &str = "nudt_unpack_points";
    pub const PERMUTE: &str = "nudt_permute";
    pub const MINMAX: &str = "nudt_minmax";
    pub const T3_SOURCES: &str = "nudt_t3_sources";
    pub const T3_TARGETS: &str = "nudt_t3_targets";
    pub const GW_SPREAD: &str = "nudt_gw_spread";
    pub const GW_PRECOMP: &str = "nudt_gw_precomp";
    pub const GW_TARGETS: &str = "nudt_gw_targets";
    pub const GW_INTERP: &str = "nudt_gw_interp";
}

/// Renders the spread module of one spec in CUDA C.
pub fn spread_module(spec: &GpuSpreadSpec) -> Result<GpuSource, GenError> {
    spread_module_in(spec, Dialect::Cuda)
}

/// The dialect header of a spread or common module: the module's precision, plus doubles
/// where an OpenCL device has them, since coordinates are reduced and type 3 phases computed
/// in double in every precision. An OpenCL device without `cl_khr_fp64` gets
/// [`GenError::Fp64Unsupported`].
fn module_header(dialect: Dialect, precision: Precision) -> Result<String, GenError> {
    let header = dialect.header(precision, false)?;
    Ok(match dialect {
        Dialect::OpenCl { fp64: true, .. } if precision == Precision::F32 => {
            format!("#pragma OPENCL EXTENSION cl_khr_fp64 : enable\n{header}")
        }
        Dialect::OpenCl { fp64: false, .. } => return Err(GenError::Fp64Unsupported),
        _ => header,
    })
}

/// Renders the spread module of one spec in `dialect`. OpenCL C gets every kernel but the
/// tiled bin count: its bin count takes one atomic per point (OpenCL C 1.2 has no warp votes
/// to aggregate them), and its floating-point atomics are compare-and-swap loops unless the
/// dialect takes inline PTX.
/// The subproblem kernels' local memory is sized at launch in both dialects (`dynamic_smem`
/// of their launch description: CUDA's dynamic shared memory, an OpenCL `__local` argument).
///
/// Rendered once per spec and dialect in a process: a type 3 plan asks again for both of its
/// grids' modules at every set-points whose extents change the kernel, and a fresh plan for
/// the modules of the last.
pub fn spread_module_in(spec: &GpuSpreadSpec, dialect: Dialect) -> Result<GpuSource, GenError> {
    type Rendered = Mutex<HashMap<String, GpuSource>>;
    static RENDERED: OnceLock<Rendered> = OnceLock::new();
    let rendered = RENDERED.get_or_init(Default::default);
    // The spec's every field, printed: equal keys render equal sources.
    let key = format!("{spec:?} {dialect:?}");
    if let Some(src) = rendered.lock().unwrap_or_else(|e| e.into_inner()).get(&key) {
        return Ok(src.clone());
    }
    let src = render_spread_module(spec, dialect)?;
    let mut map = rendered.lock().unwrap_or_else(|e| e.into_inner());
    map.insert(key, src.clone());
    Ok(src)
}

fn render_spread_module(spec: &GpuSpreadSpec, dialect: Dialect) -> Result<GpuSource, GenError> {
    if !(1..=3).contains(&spec.dim) {
        return Err(GenError::Dimension(spec.dim));
    }
    let w = spec.kernel.width;
    if !(crate::kernel::MIN_WIDTH..=crate::kernel::MAX_WIDTH).contains(&w) {
        return Err(GenError::Width(w));
    }
    if spec.bins.contains(&0) || spec.max_subproblem == 0 {
        return Err(GenError::Render(format!(
            "bin sides and subproblem size must be positive: {:?}, {}",
            spec.bins, spec.max_subproblem
        )));
    }
    // 1D has only the shared box, 3D only pencils; 2D has both.
    let only = match spec.dim {
        1 => Some(OdBox::Shared),
        3 => Some(OdBox::Pencils),
        _ => None,
    };
    if only.is_some_and(|b| b != spec.od_box) {
        return Err(GenError::Render(format!(
            "a {}D spread module's output-driven box is {:?}, not {:?}",
            spec.dim,
            only.unwrap_or(spec.od_box),
            spec.od_box
        )));
    }
    let bins: [usize; 3] = std::array::from_fn(|d| if d < spec.dim { spec.bins[d] } else { 1 });
    let spec = GpuSpreadSpec {
        bins,
        ..spec.clone()
    };
    let p = spec.padded();
    let poly = spec.kernel.horner();
    let (nc, fit_error) = (poly.nc(), poly.max_error);
    let mut ctx = Context::new();
    ctx.insert("version", env!("CARGO_PKG_VERSION"));
    ctx.insert(
        "params",
        &vec![
            format!("dimension {}", spec.dim),
            format!("precision {}", spec.precision.type_name()),
            format!(
                "kernel {:?}, width {}, beta {}, upsampling {}",
                spec.kernel.kind, w, spec.kernel.beta, spec.kernel.upsampling.0
            ),
            format!("bins {:?}", &bins[..spec.dim]),
        ],
    );
    ctx.insert("ctype", ctype(spec.precision));
    ctx.insert("dialect", &module_header(dialect, spec.precision)?);
    ctx.insert("cuda", &(dialect == Dialect::Cuda));
    ctx.insert("sig", signature::prototypes());
    ctx.insert("position", POSITION);
    ctx.insert("single", &u8::from(spec.precision == Precision::F32));
    ctx.insert("dim", &spec.dim);
    ctx.insert("width", &w);
    ctx.insert("half", &(w / 2));
    ctx.insert("nc", &nc);
    ctx.insert("fit_error", &format!("{fit_error:.1e}"));
    ctx.insert("kernel", &format!("{:?}", spec.kernel.kind));
    ctx.insert("beta", &format!("{}", spec.kernel.beta));
    ctx.insert("horner", &horner_body(&poly.coeffs, spec.precision));
    ctx.insert("dhorner", &horner_body(&poly.derivative(), spec.precision));
    for d in 0..3 {
        ctx.insert(format!("b{d}"), &bins[d]);
        ctx.insert(format!("p{d}"), &p[d]);
    }
    ctx.insert("smem_bytes", &spec.smem_bytes());
    ctx.insert("maxsub", &spec.max_subproblem);
    ctx.insert("gm_threads", &GM_THREADS);
    ctx.insert("sm_threads", &SM_THREADS);
    ctx.insert("od_threads", &spec.od_threads());
    ctx.insert("od_pencils", &(spec.od_box == OdBox::Pencils));
    ctx.insert("od_batch", &OD_BATCH);
    ctx.insert("od_ahead", &u8::from(spec.dim == 2));
    ctx.insert("local_bins", &LOCAL_BINS);
    ctx.insert("count_items", &COUNT_ITEMS);
    ctx.insert("sort_buckets", &SORT_BUCKETS);
    ctx.insert("sort_slots", &SORT_SLOTS);
    ctx.insert("sort_threads", &SORT_THREADS);
    let source = render("spread", SPREAD, &ctx)?;
    let smem = spec.smem_bytes();
    let mut kernels = vec![
        GpuKernel::new(
            names::BIN_COUNT,
            ELEMENT_THREADS,
            0,
            "ceil(M / block), grid-stride",
        )?,
        GpuKernel::new(
            names::BIN_COUNT_LOCAL,
            ELEMENT_THREADS,
            0,
            "ceil(M / (block * COUNT_ITEMS)) tiles, grid-stride; grids of <= LOCAL_BINS bins",
        )?,
        GpuKernel::new(
            names::BIN_SCATTER,
            ELEMENT_THREADS,
            0,
            "ceil(M / block), grid-stride",
        )?,
        GpuKernel::new(
            names::BIN_BUCKET,
            ELEMENT_THREADS,
            0,
            "ceil(M / (block * COUNT_ITEMS)) tiles, grid-stride; at most SORT_BUCKETS buckets",
        )?,
        GpuKernel::new(
            names::BIN_PLACE,
            SORT_THREADS,
            0,
            "ceil(M / (block * COUNT_ITEMS)) tiles, grid-stride",
        )?,
        GpuKernel::new(
            names::SPREAD_GM,
            GM_THREADS,
            0,
            "ceil(M / block), grid-stride; transforms looped inside",
        )?,
        GpuKernel::new(
            names::SPREAD_SM,
            SM_THREADS,
            smem,
            "x: subproblems, y: transforms",
        )?,
        GpuKernel::new(
            names::SPREAD_OD,
            spec.od_threads(),
            spec.od_smem_bytes(),
            "x: subproblems, y: transforms",
        )?,
        GpuKernel::new(
            names::INTERP_GM,
            GM_THREADS,
            0,
            "ceil(M / block), grid-stride; transforms looped inside",
        )?,
        GpuKernel::new(
            names::INTERP_SM,
            SM_THREADS,
            smem,
            "x: subproblems, y: transforms",
        )?,
    ];
    // The gradient kernels launch as their methods' plain kernels do.
    let gradient = [
        (names::INTERP_GRAD_GM, names::INTERP_GM),
        (names::INTERP_GRAD_SM, names::INTERP_SM),
        (names::SPREAD_GRAD_GM, names::SPREAD_GM),
        (names::SPREAD_GRAD_SM, names::SPREAD_SM),
    ]
    .map(|(name, like)| {
        let like = kernels
            .iter()
            .find(|k| k.name == like)
            .expect("listed above");
        GpuKernel::new(name, like.block_threads, like.dynamic_smem, like.grid)
    });
    for k in gradient {
        kernels.push(k?);
    }
    if dialect != Dialect::Cuda {
        // The tiled count leans on warp votes, which the OpenCL dialect does without.
        kernels.retain(|k| k.name != names::BIN_COUNT_LOCAL);
    }
    let name = match dialect {
        Dialect::Cuda => spec.name(),
        d => format!("{}_{}", spec.name(), d.name()),
    };
    Ok(GpuSource::new(name, source, kernels, Some(spec)))
}

/// Renders the width-independent module of one precision in CUDA C.
pub fn common_module(precision: Precision) -> Result<GpuSource, GenError> {
    common_module_in(precision, Dialect::Cuda)
}

/// Renders the width-independent module of one precision in `dialect` (OpenCL C: all but
/// the prefix sum and the min/max reduction, whose warp shuffles OpenCL C 1.2 lacks).
pub fn common_module_in(precision: Precision, dialect: Dialect) -> Result<GpuSource, GenError> {
    let mut ctx = Context::new();
    ctx.insert("version", env!("CARGO_PKG_VERSION"));
    ctx.insert("ctype", ctype(precision));
    ctx.insert("dialect", &module_header(dialect, precision)?);
    ctx.insert("cuda", &(dialect == Dialect::Cuda));
    ctx.insert("sig", signature::prototypes());
    ctx.insert("scan_threads", &scan_threads(dialect));
    ctx.insert("element_threads", &ELEMENT_THREADS);
    ctx.insert("route_devices", &ROUTE_DEVICES);
    ctx.insert("position", POSITION);
    let source = render("common", COMMON, &ctx)?;
    let el = |name| {
        GpuKernel::new(
            name,
            ELEMENT_THREADS,
            0,
            "ceil(n / block), grid-stride; y: transforms where batched",
        )
    };
    let scan = |name, grid| GpuKernel::new(name, scan_threads(dialect), 0, grid);
    let kernels = vec![
        scan(names::BIN_SCAN_TILES, "ceil(nbins / SCAN_TILE) blocks")?,
        scan(names::BIN_SCAN_TOTALS, "one block")?,
        el(names::BIN_SCAN_ADD)?,
        el(names::SUBPROB_MAP)?,
        el(names::GRID_TO_MODES)?,
        el(names::MODES_TO_GRID)?,
        el(names::CMUL)?,
        el(names::SCALE)?,
        el(names::GRAD_REDUCE)?,
        el(names::ROUTE)?,
        el(names::PACK_POINTS)?,
        el(names::UNPACK_POINTS)?,
        el(names::PERMUTE)?,
        GpuKernel::new(
            names::MINMAX,
            ELEMENT_THREADS,
            0,
            "MINMAX_BLOCKS blocks, grid-stride; one (min, max) pair per block",
        )?,
        el(names::T3_SOURCES)?,
        el(names::T3_TARGETS)?,
    ];
    let name = match dialect {
        Dialect::Cuda => format!("nudt_common_{}", precision.type_name()),
        d => format!("nudt_common_{}_{}", precision.type_name(), d.name()),
    };
    Ok(GpuSource::new(name, source, kernels, None))
}

/// Renders the wide-Gaussian module for `dim` dimensions and windows `width` (odd) points
/// wide: spreading with pre-phases, pre-compensation, target factors and interpolation with
/// post-factors (`generator/templates/gpu/gaussian_wide.tera`). The window's shape is not baked in:
/// the runtime passes the table `e^{−k²/4b}` and `1/4b`, so one module serves every `b` of a
/// width, while the width itself fixes the loop bounds the compiler sees.
pub fn gaussian_wide_module(
    dim: usize,
    width: usize,
    precision: Precision,
) -> Result<GpuSource, GenError> {
    gaussian_wide_module_in(dim, width, precision, Dialect::Cuda)
}

/// [`gaussian_wide_module`] in `dialect` (every kernel in both; OpenCL C needs doubles, as
/// the points are located in double in both precisions).
pub fn gaussian_wide_module_in(
    dim: usize,
    width: usize,
    precision: Precision,
    dialect: Dialect,
) -> Result<GpuSource, GenError> {
    if !(1..=3).contains(&dim) {
        return Err(GenError::Dimension(dim));
    }
    if width % 2 != 1 {
        return Err(GenError::Render(format!(
            "wide-Gaussian windows are 2m + 1 points wide, got {width}"
        )));
    }
    let mut ctx = Context::new();
    ctx.insert("version", env!("CARGO_PKG_VERSION"));
    ctx.insert("ctype", ctype(precision));
    ctx.insert("single", &u8::from(precision == Precision::F32));
    ctx.insert("dim", &dim);
    ctx.insert("width", &width);
    ctx.insert("half", &(width / 2));
    ctx.insert("position", POSITION);
    ctx.insert("dialect", &module_header(dialect, precision)?);
    ctx.insert("cuda", &(dialect == Dialect::Cuda));
    ctx.insert("sig", signature::prototypes());
    let source = render("gaussian_wide", GAUSSIAN_WIDE, &ctx)?;
    let k = |name, block_threads, grid| GpuKernel::new(name, block_threads, 0, grid);
    let kernels = vec![
        k(
            names::GW_SPREAD,
            GM_THREADS,
            "ceil(M / block), grid-stride; y: transforms",
        )?,
        k(
            names::GW_PRECOMP,
            ELEMENT_THREADS,
            "ceil(grid / block), grid-stride; y: transforms",
        )?,
        k(
            names::GW_TARGETS,
            ELEMENT_THREADS,
            "ceil(K / block), grid-stride",
        )?,
        k(
            names::GW_INTERP,
            GM_THREADS,
            "ceil(K / block), grid-stride; y: transforms",
        )?,
    ];
    let name = format!("nudt_gw_{dim}d_w{width}_{}", precision.type_name());
    let name = match dialect {
        Dialect::Cuda => name,
        d => format!("{name}_{}", d.name()),
    };
    Ok(GpuSource::new(name, source, kernels, None))
}

/// Quadrature nodes `z_q ∈ (0, 1]` and weights `φ(z_q)·w_q` of the kernel's Fourier transform
/// `ψ̂(ω) = 2α Σ_q w_q φ(z_q) cos(ω α z_q)` (α = w/2), as the type 3 target kernel takes
/// them. Same rule as [`crate::kernel::FourierSeries`].
pub fn fourier_quadrature(kernel: &KernelSpec) -> (Vec<f64>, Vec<f64>) {
    let q = 2 + 2 * kernel.width;
    let (x, w) = gauss_legendre(2 * q);
    let shape = kernel.shape();
    x.iter()
        .zip(&w)
        .filter(|(z, _)| **z > 0.0)
        .map(|(z, wt)| (*z, wt * shape.eval(*z)))
        .unzip()
}

fn ctype(p: Precision) -> &'static str {
    match p {
        Precision::F32 => "float",
        Precision::F64 => "double",
    }
}
