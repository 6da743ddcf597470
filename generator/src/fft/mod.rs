//! Generated GPU FFTs: complex-to-complex, forward and inverse, 1–3 dimensions, batched, f32
//! and f64, as CUDA C (NVRTC) or OpenCL C 1.2 from one kernel body (`templates/gpu/fft.tera`)
//! and the [`Dialect`] layer.
//!
//! [`FftSpec`] + [`FftDevice`] → [`plan::plan`] (radices, kernels, launch order, as data) →
//! [`fft_module`] (source text and its [`FftModule::describe_json`] launch description). Like
//! the rest of the generator this knows nothing of the runtime that compiles and launches it.
//!
//! Conventions are cuFFT's and FFTW's: row-major data with the last dimension fastest, batch
//! elements one after another, forward sign −1, inverse +1 and unnormalised (forward then
//! inverse multiplies by the number of points).

pub mod plan;

use crate::error::GenError;
use crate::gpu::Dialect;
use crate::gpu::{fnv1a64, GpuArch};
use crate::params::Precision;
pub use plan::{factor, Buffer, FftPlan, Launch};
use serde::Serialize;
use std::sync::Arc;

const BODY: &str = include_str!("../../templates/gpu/fft.tera");

/// What to transform.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct FftSpec {
    /// Lengths of the 1–3 axes, the last fastest in memory.
    pub shape: Vec<usize>,
    /// Transforms one after another in memory.
    pub batch: usize,
    pub precision: Precision,
}

impl FftSpec {
    pub fn new(shape: &[usize], batch: usize, precision: Precision) -> Self {
        FftSpec {
            shape: shape.to_vec(),
            batch,
            precision,
        }
    }

    /// Rank, lengths and batch within bounds.
    pub fn validate(&self) -> Result<(), GenError> {
        if !(1..=3).contains(&self.shape.len()) {
            return Err(GenError::FftRank(self.shape.len()));
        }
        for (axis, &size) in self.shape.iter().enumerate() {
            if size == 0 || size > plan::MAX_LEN {
                return Err(GenError::FftSize { axis, size });
            }
        }
        if self.batch == 0 {
            return Err(GenError::FftBatchZero);
        }
        self.elements().map(|_| ())
    }

    /// Complex elements of the whole batch, if their bytes fit the address space.
    pub fn elements(&self) -> Result<u64, GenError> {
        let overflow = || GenError::FftOverflow {
            batch: self.batch,
            shape: self.shape.clone(),
        };
        let elems = self
            .shape
            .iter()
            .try_fold(self.batch as u64, |acc, &n| acc.checked_mul(n as u64))
            .ok_or_else(overflow)?;
        let bytes = elems.checked_mul(16).ok_or_else(overflow)?;
        if bytes > isize::MAX as u64 {
            return Err(overflow());
        }
        Ok(elems)
    }

    /// Points of one transform (the factor an inverse after a forward multiplies by).
    pub fn points(&self) -> usize {
        self.shape.iter().product()
    }
}

/// The limits of the device the kernels are generated for.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct FftDevice {
    pub dialect: Dialect,
    /// Threads (work-items) a block may have.
    pub max_threads: u32,
    /// Local (shared) memory a block may use, in bytes (CUDA: the opt-in maximum).
    pub local_bytes: usize,
}

impl FftDevice {
    /// An NVIDIA GPU: 1024 threads per block, the opt-in shared memory.
    pub fn cuda(arch: &GpuArch) -> Self {
        FftDevice {
            dialect: Dialect::Cuda,
            max_threads: 1024,
            local_bytes: arch.shared_mem_per_block_optin,
        }
    }

    /// An OpenCL device from its `CL_DEVICE_MAX_WORK_GROUP_SIZE`, `CL_DEVICE_LOCAL_MEM_SIZE`
    /// and whether it has `cl_khr_fp64`. The FFT adds nothing by atomics, so its source is
    /// the same on every vendor's compiler (no inline PTX).
    pub fn opencl(max_work_group: usize, local_mem: usize, fp64: bool) -> Self {
        FftDevice {
            dialect: Dialect::OpenCl { fp64, ptx: false },
            max_threads: max_work_group.min(u32::MAX as usize) as u32,
            local_bytes: local_mem,
        }
    }

    pub fn validate(&self) -> Result<(), GenError> {
        if self.max_threads == 0 {
            return Err(GenError::FftDevice(
                "a block must hold at least one thread".into(),
            ));
        }
        Ok(())
    }
}

/// Transform direction.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum FftDirection {
    /// exp(−2πi nk/N).
    Forward,
    /// exp(+2πi nk/N), unnormalised.
    Inverse,
}

impl FftDirection {
    pub fn sign(self) -> i32 {
        match self {
            FftDirection::Forward => -1,
            FftDirection::Inverse => 1,
        }
    }

    /// The suffix of this direction's entry points.
    pub fn tag(self) -> &'static str {
        match self {
            FftDirection::Forward => "fwd",
            FftDirection::Inverse => "inv",
        }
    }
}

/// Generated FFT source, its plan and entry points.
#[derive(Clone, Debug, PartialEq)]
pub struct FftModule {
    /// Unique module name (also a file stem).
    pub name: String,
    pub dialect: Dialect,
    pub precision: Precision,
    /// The source; the members of a bundle ([`fft_bundle`]) share one.
    pub source: Arc<str>,
    /// Stable 64-bit FNV-1a hash of `source`, for caches.
    pub hash: u64,
    pub plan: FftPlan,
}

impl FftModule {
    /// Complex elements of the whole batch: what the buffers of every executor (CUDA,
    /// OpenCL) must hold.
    pub fn len(&self) -> usize {
        self.plan.elems as usize
    }

    /// Whether the batch holds no elements (never: sizes and batch are at least 1).
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The entry point of `launch` in `dir`.
    pub fn entry(&self, launch: &Launch, dir: FftDirection) -> String {
        format!("{}_{}", self.plan.kernels[launch.kernel].name, dir.tag())
    }

    /// The launch description: sizes, scratch, and per direction the kernels in order with
    /// grid, block, local memory and buffers (for `nudt gen` and for executors).
    pub fn describe_json(&self) -> String {
        #[derive(Serialize)]
        struct L {
            kernel: String,
            grid: u64,
            block: u32,
            local_bytes: usize,
            dynamic_local: bool,
            src: Buffer,
            dst: Buffer,
            axes: Vec<usize>,
            doc: String,
        }
        #[derive(Serialize)]
        struct D<'a> {
            name: &'a str,
            hash: String,
            dialect: &'static str,
            precision: &'static str,
            shape: &'a [usize],
            batch: usize,
            elements: u64,
            scratch_elements: u64,
            radices: &'a [Vec<usize>],
            forward: Vec<L>,
            inverse: Vec<L>,
        }
        let launches = |dir: FftDirection| {
            self.plan
                .launches
                .iter()
                .map(|l| {
                    let k = &self.plan.kernels[l.kernel];
                    L {
                        kernel: self.entry(l, dir),
                        grid: l.grid,
                        block: l.threads,
                        local_bytes: l.local_bytes,
                        dynamic_local: self.dialect.dynamic_local_memory() && l.local_bytes > 0,
                        src: l.src,
                        dst: l.dst,
                        axes: k.axes.clone(),
                        doc: k.doc.clone(),
                    }
                })
                .collect()
        };
        let d = D {
            name: &self.name,
            hash: format!("{:016x}", self.hash),
            dialect: self.dialect.name(),
            precision: self.precision.type_name(),
            shape: &self.plan.shape,
            batch: self.plan.batch,
            elements: self.plan.elems,
            scratch_elements: self.plan.scratch_elems,
            radices: &self.plan.radices,
            forward: launches(FftDirection::Forward),
            inverse: launches(FftDirection::Inverse),
        };
        serde_json::to_string_pretty(&d).expect("plain data serialises") + "\n"
    }
}

/// A floating literal of `precision` in both dialects.
fn literal(x: f64, p: Precision) -> String {
    let x = if x.abs() < 1e-300 { 0.0 } else { x };
    match p {
        Precision::F32 => format!("{:e}f", x as f32),
        Precision::F64 => format!("{x:e}"),
    }
}

/// cos and sin of 2πk/n for k in 0..count, as literals.
fn roots(n: usize, count: usize, p: Precision) -> (Vec<String>, Vec<String>) {
    (0..count)
        .map(|k| {
            let a = 2.0 * std::f64::consts::PI * k as f64 / n as f64;
            // Exact zeros and ones where they are exact, so no rounding error shows up there.
            let (s, c) = match (4 * k) % n {
                0 if (4 * k / n).is_multiple_of(4) => (0.0, 1.0),
                0 if (4 * k / n) % 4 == 1 => (1.0, 0.0),
                0 if (4 * k / n) % 4 == 2 => (0.0, -1.0),
                0 => (-1.0, 0.0),
                _ => a.sin_cos(),
            };
            (literal(c, p), literal(s, p))
        })
        .unzip()
}

/// Plans and renders the FFT module of `spec` for `dev`, with forward and inverse kernels.
pub fn fft_module(spec: &FftSpec, dev: &FftDevice) -> Result<FftModule, GenError> {
    let plan = plan::plan(spec, dev)?;
    let source = render(std::slice::from_ref(&plan), spec.precision, dev)?;
    Ok(module(spec, dev, source, plan))
}

/// Several FFTs of one precision in one source (one NVRTC or `clBuildProgram` call for all,
/// e.g. every FFT a set of plans needs); each member has its own plan and kernel names.
pub fn fft_bundle(specs: &[FftSpec], dev: &FftDevice) -> Result<Vec<FftModule>, GenError> {
    let Some(first) = specs.first() else {
        return Ok(Vec::new());
    };
    if specs.iter().any(|s| s.precision != first.precision) {
        return Err(GenError::Render(
            "the FFTs of one bundle share a precision".into(),
        ));
    }
    let plans = specs
        .iter()
        .enumerate()
        .map(|(i, s)| plan::plan_named(s, dev, &format!("nudt_fft_m{i}_")))
        .collect::<Result<Vec<_>, _>>()?;
    let source = render(&plans, first.precision, dev)?;
    Ok(specs
        .iter()
        .zip(plans)
        .map(|(s, p)| module(s, dev, source.clone(), p))
        .collect())
}

fn module(spec: &FftSpec, dev: &FftDevice, source: Arc<str>, plan: FftPlan) -> FftModule {
    let dims = spec
        .shape
        .iter()
        .map(|n| n.to_string())
        .collect::<Vec<_>>()
        .join("x");
    FftModule {
        name: format!(
            "nudt_fft_{dims}_b{}_{}_{}",
            spec.batch,
            spec.precision.type_name(),
            dev.dialect.name().replace('-', "_")
        ),
        dialect: dev.dialect,
        precision: spec.precision,
        hash: fnv1a64(source.as_bytes()),
        source,
        plan,
    }
}

/// Renders the kernels of `plans` (helpers once) in `dev`'s dialect.
fn render(plans: &[FftPlan], p: Precision, dev: &FftDevice) -> Result<Arc<str>, GenError> {
    let mut ctx = tera::Context::new();
    ctx.insert("version", env!("CARGO_PKG_VERSION"));
    let shapes: Vec<String> = plans
        .iter()
        .map(|pl| format!("{:?} x {}", pl.shape, pl.batch))
        .collect();
    ctx.insert(
        "title",
        &format!(
            "{} {} ({})",
            shapes.join(", "),
            p.type_name(),
            dev.dialect.name()
        ),
    );
    ctx.insert(
        "real",
        match p {
            Precision::F32 => "float",
            Precision::F64 => "double",
        },
    );
    let wide = plans.iter().any(|pl| pl.wide_index);
    ctx.insert("dialect", &dev.dialect.header(p, wide)?);
    ctx.insert("pad_shift", &plans[0].pad_shift);
    ctx.insert("chunk", &plan::CHUNK);
    #[derive(Serialize)]
    struct Half {
        r: usize,
        half: usize,
        cos: Vec<String>,
        sin: Vec<String>,
    }
    let halves: Vec<Half> = [8, 16]
        .iter()
        .map(|&r| {
            let (cos, sin) = roots(r, r / 2, p);
            Half {
                r,
                half: r / 2,
                cos,
                sin,
            }
        })
        .collect();
    ctx.insert("halves", &halves);
    #[derive(Serialize)]
    struct Odd {
        p: usize,
        half: usize,
        cos: Vec<String>,
        sin: Vec<String>,
    }
    let mut used: Vec<usize> = plans
        .iter()
        .flat_map(|pl| pl.radices.iter().flatten().copied())
        .filter(|r| r % 2 == 1 && plan::REGISTER_RADICES.contains(r))
        .collect();
    used.sort_unstable();
    used.dedup();
    let odd: Vec<Odd> = used
        .iter()
        .map(|&q| {
            let (cos, sin) = roots(q, q, p);
            Odd {
                p: q,
                half: q / 2,
                cos,
                sin,
            }
        })
        .collect();
    ctx.insert("odd", &odd);
    #[derive(Serialize)]
    struct Dir {
        tag: &'static str,
        sign: i32,
    }
    #[derive(Serialize)]
    struct K<'a> {
        #[serde(flatten)]
        k: &'a plan::Kernel,
        dirs: Vec<Dir>,
    }
    let kernels: Vec<K> = plans
        .iter()
        .flat_map(|pl| pl.kernels.iter())
        .map(|k| K {
            k,
            dirs: [FftDirection::Forward, FftDirection::Inverse]
                .iter()
                .map(|d| Dir {
                    tag: d.tag(),
                    sign: d.sign(),
                })
                .collect(),
        })
        .collect();
    ctx.insert("kernels", &kernels);
    let source =
        tera::Tera::one_off(BODY, &ctx, false).map_err(|e| GenError::Render(format!("{e:?}")))?;
    Ok(source.into())
}
