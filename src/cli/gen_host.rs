//! What `nudt gen --target cuda|opencl` writes beside the kernels so that they can be used
//! without reading nudt: a README.md (every kernel's arguments, the launch order of a whole
//! type 1 and type 2, how to build and run the host program) and, per dimension, a minimal
//! standalone host program in C that runs one type 1 with the emitted files (bin sort,
//! spreading, the emitted FFT, deconvolution) and checks a few modes against the direct sum.
//!
//! Everything here is rendered from the generator's data: the kernels' launch geometry
//! ([`GpuSource::kernels`]) and declared signatures (parameters in order, their types and
//! meanings, each kernel's purpose: `nudt_gen::gpu::KernelDecl`), the FFT's launch plan
//! ([`FftModule::plan`]) and the kernel's Fourier transform by quadrature
//! ([`fourier_quadrature`]). The C launchers are one
//! typed function per kernel, so that a call that does not match a kernel's parameters does
//! not compile.

use super::gen_cuda::CudaJob;
use super::{fail, Result};
use nudt::gen::fft::{fft_module, Buffer, FftDevice, FftDirection, FftModule, FftSpec};
use nudt::gen::gpu::{
    fourier_quadrature, names, scan_tile, ArgKind, Dialect, GpuArch, GpuKernel, GpuSource,
    GpuSpreadSpec,
};
use nudt::gen::{plan as gplan, Precision};
use std::fmt::Write as _;

/// Work-group size and local memory the OpenCL FFT is planned for (as `gen --fft` assumes).
const OPENCL_FFT_THREADS: usize = 256;
const OPENCL_FFT_LOCAL: usize = 32 << 10;

/// The problem the host program of a dimension runs: modes per dimension and default points.
fn demo_modes(dim: usize) -> ([usize; 3], usize) {
    match dim {
        1 => ([200, 1, 1], 4000),
        2 => ([40, 32, 1], 20000),
        _ => ([16, 16, 12], 20000),
    }
}

/// One dimension's host program and the FFT module it runs.
struct Demo<'a> {
    dim: usize,
    modes: [usize; 3],
    fine: [usize; 3],
    points: usize,
    spread: &'a GpuSource,
    spec: &'a GpuSpreadSpec,
    fft: FftModule,
    /// File names of the three modules the program builds.
    files: [String; 3],
    program: String,
}

/// The error the host program accepts: ten times the tolerance the kernel was chosen for
/// (the error of a d-dimensional transform is about d times the per-axis one, and eight modes
/// are a noisy estimate), or, a `--width` given, ten times what that width reaches,
/// 10^(1−w); never below what the precision reaches.
fn check_tolerance(job: &CudaJob) -> f64 {
    let floor = match job.precision {
        Precision::F32 => 1e-4,
        Precision::F64 => 1e-12,
    };
    let tol = job
        .tol
        .unwrap_or_else(|| 10f64.powi(1 - job.kernel.width as i32));
    (10.0 * tol).max(floor)
}

/// The files to write beside the modules: per dimension an FFT module (its source and JSON)
/// and a host program, then README.md. `modules` are the spread modules in the order of
/// `job.dims`, then the common module.
pub fn files(
    job: &CudaJob,
    arch: &GpuArch,
    modules: &[GpuSource],
    header: &str,
) -> Result<Vec<(String, String)>> {
    let ext = job.dialect.extension();
    let common = modules.last().expect("the common module is last");
    let dev = match job.dialect {
        Dialect::Cuda => FftDevice::cuda(arch),
        Dialect::OpenCl { .. } => FftDevice::opencl(
            OPENCL_FFT_THREADS,
            OPENCL_FFT_LOCAL,
            job.precision == Precision::F64,
        ),
    };
    let mut out = Vec::new();
    let mut demos = Vec::new();
    for (&dim, spread) in job.dims.iter().zip(modules) {
        let spec = spread
            .spec
            .as_ref()
            .expect("spread modules carry their spec");
        let (mut modes, points) = demo_modes(dim);
        let mut fine = [1usize; 3];
        for (f, &m) in fine.iter_mut().zip(&modes).take(dim) {
            *f = gplan::fine_size(m, &job.kernel).map_err(|e| fail!("{e}"))?;
        }
        for m in modes.iter_mut().skip(dim) {
            *m = 1;
        }
        let fft = fft_module(&FftSpec::new(&fine[..dim], 1, job.precision), &dev)
            .map_err(|e| fail!("the host program's FFT: {e}"))?;
        out.push((
            format!("{}.{ext}", fft.name),
            format!(
                "{header}// The FFT of the {dim}-D host program's fine grid ({}).\n{}",
                dims_text(&fine[..dim]),
                fft.source
            ),
        ));
        out.push((format!("{}.json", fft.name), fft.describe_json()));
        let program = match job.dialect {
            Dialect::Cuda => format!("type1_{dim}d_cuda.c"),
            Dialect::OpenCl { .. } => format!("type1_{dim}d_opencl.c"),
        };
        let files = [
            format!("{}.{ext}", spread.name),
            format!("{}.{ext}", common.name),
            format!("{}.{ext}", fft.name),
        ];
        demos.push(Demo {
            dim,
            modes,
            fine,
            points,
            spread,
            spec,
            fft,
            files,
            program,
        });
    }
    for d in &demos {
        out.push((d.program.clone(), host_program(job, d, common)?));
    }
    out.push(("README.md".into(), readme(job, arch, modules, &demos)));
    Ok(out)
}

fn dims_text(n: &[usize]) -> String {
    n.iter()
        .map(|v| v.to_string())
        .collect::<Vec<_>>()
        .join(" × ")
}

/// The C type a launcher takes for a parameter of argument kind `kind`.
fn c_type(kind: ArgKind) -> &'static str {
    match kind {
        ArgKind::Buffer => "dmem",
        ArgKind::U32 => "unsigned",
        ArgKind::I32 => "int",
        ArgKind::U64 => "unsigned long long",
        ArgKind::F64 => "double",
    }
}

/// The typed launcher of one kernel: `launch_<name>(groups_x, groups_y, <parameters>)`, its
/// block size and dynamic local memory those of the launch description.
fn launcher(k: &GpuKernel) -> String {
    let mut s = format!(
        "/* {}: {}\n   block {} threads, {} bytes of dynamic local memory; grid: {} */\n",
        k.name, k.decl.purpose, k.block_threads, k.dynamic_smem, k.grid
    );
    let mut params = vec!["size_t groups_x".to_string(), "size_t groups_y".to_string()];
    for p in k.decl.params {
        params.push(format!("{} {}", c_type(p.ty.arg()), p.name));
    }
    let _ = writeln!(
        s,
        "static inline void launch_{}({})\n{{",
        k.name,
        params.join(", ")
    );
    let args: Vec<String> = k
        .decl
        .params
        .iter()
        .map(|p| format!("{{sizeof {0}, &{0}}}", p.name))
        .collect();
    let _ = writeln!(s, "    const arg_t a[] = {{{}}};", args.join(", "));
    let _ = writeln!(
        s,
        "    dev_launch(K_{0}, \"{0}\", groups_x, groups_y, {1}, {2}, {3}, a);\n}}\n",
        k.name,
        k.block_threads,
        k.dynamic_smem,
        k.decl.params.len()
    );
    s
}

/// The FFT's launch sequence as a C function: `fft_run(inverse, in, out, scratch)`.
fn fft_runner(dialect: Dialect, fft: &FftModule) -> (Vec<String>, String) {
    let mut entries: Vec<String> = Vec::new();
    let mut body = String::new();
    for (dir, cond) in [
        (FftDirection::Forward, "if (!inverse)"),
        (FftDirection::Inverse, "else"),
    ] {
        let _ = writeln!(body, "    {cond} {{");
        for l in &fft.plan.launches {
            let name = fft.entry(l, dir);
            if !entries.contains(&name) {
                entries.push(name.clone());
            }
            let pick = |b: Buffer| match b {
                Buffer::Input => "in",
                Buffer::Output => "out",
                Buffer::Scratch => "scratch",
            };
            // CUDA sizes the kernels' shared memory at launch; OpenCL's are in the source.
            let local = if dialect.dynamic_local_memory() {
                l.local_bytes
            } else {
                0
            };
            let _ = writeln!(
                body,
                "        {{ const arg_t a[] = {{{{sizeof {src}, &{src}}}, {{sizeof {dst}, &{dst}}}}};\n          dev_launch(K_{name}, \"{name}\", {grid}, 1, {threads}, {local}, 2, a); }}",
                src = pick(l.src),
                dst = pick(l.dst),
                grid = l.grid,
                threads = l.threads,
            );
        }
        let _ = writeln!(body, "    }}");
    }
    let text = format!(
        "/* The FFT of the fine grid ({} launches per direction, from {}.json): forward\n   exp(-2 pi i nk/N) or inverse exp(+2 pi i nk/N), unnormalised; in may equal out; scratch\n   holds FFT_SCRATCH complex values. */\nstatic void fft_run(int inverse, dmem in, dmem out, dmem scratch)\n{{\n    (void)scratch;\n{body}}}\n",
        fft.plan.launches.len(),
        fft.name
    );
    (entries, text)
}

/// C literal of a double, exactly.
fn c_double(v: f64) -> String {
    format!("{v:e}")
}

/// The host program of one dimension.
fn host_program(job: &CudaJob, d: &Demo, common: &GpuSource) -> Result<String> {
    let cuda = job.dialect == Dialect::Cuda;
    let real = match job.precision {
        Precision::F32 => "float",
        Precision::F64 => "double",
    };
    let mut s = String::new();
    let build = if cuda {
        format!(
            "gcc -O2 -std=c11 -o type1_{0}d_cuda type1_{0}d_cuda.c -ldl -lm",
            d.dim
        )
    } else {
        format!(
            "gcc -O2 -std=c11 -o type1_{0}d_opencl type1_{0}d_opencl.c -lOpenCL -lm",
            d.dim
        )
    };
    let _ = write!(
        s,
        "/* {prog}: a minimal standalone host program for the kernels beside it, generated by
   nudt {version} (`{command}`).

   It runs one {dim}-D type 1 NUFFT (isign +1, modes {modes} in centred order, fine grid
   {fine}) on random points and strengths with the emitted modules only: the bin sort, the
   spreading, the emitted FFT and the deconvolution by 1/psi-hat (computed here as the
   runtime computes it), then compares a few modes with the direct sum and exits 1 when the
   relative error is above {tol:e}. README.md lists every kernel's arguments and the launch
   order.

   Build:  {build}
   Run:    ./{exe} [points] [gm|sm|od]   (in this folder; default {points} points, gm)
{extra}*/
",
        prog = d.program,
        version = env!("CARGO_PKG_VERSION"),
        command = job.command,
        dim = d.dim,
        modes = dims_text(&d.modes[..d.dim]),
        fine = dims_text(&d.fine[..d.dim]),
        tol = check_tolerance(job),
        exe = d.program.trim_end_matches(".c"),
        points = d.points,
        extra = if cuda {
            "   The CUDA driver (libcuda.so.1) and NVRTC (libnvrtc.so) are loaded at run time with dlopen,\n   so no CUDA headers or toolkit are needed to build it; it needs an NVIDIA GPU to run.\n   `./EXE --nvrtc sm_90` only compiles the modules with NVRTC for that architecture (no GPU).\n"
                .replace("EXE", d.program.trim_end_matches(".c"))
        } else {
            "   It needs the OpenCL headers and ICD loader (Debian/Ubuntu: opencl-headers,\n   ocl-icd-opencl-dev) and a platform with cl_khr_fp64 (e.g. PoCL: pocl-opencl-icd).\n".into()
        },
    );
    s += "#define _POSIX_C_SOURCE 200809L\n#define NUDT_PI 3.14159265358979323846\n#include <math.h>\n#include <stdio.h>\n#include <stdlib.h>\n#include <string.h>\n#include <time.h>\n";
    s += READ_TEXT;
    s += if cuda { CUDA_LAYER } else { OPENCL_LAYER };
    let spec = d.spec;
    let quad = fourier_quadrature(&job.kernel);
    let _ = write!(
        s,
        "
/* ---- the problem and the modules (from the generator) ------------------------------------- */

typedef {real} real;
#define DIM {dim}
#define ISIGN 1
static const int MODES[3] = {{{m0}, {m1}, {m2}}};
static const int FINE[3] = {{{n0}, {n1}, {n2}}};
/* Bin sides of the spread module (B0, B1, B2 in its source), its subproblem size MAXSUB,
   and the bins per tile of the common module's prefix sums (SCAN_TILE). */
static const int BINS[3] = {{{b0}, {b1}, {b2}}};
#define MAXSUB {maxsub}u
#define SCAN_TILE {scan_tile}u
#define FFT_SCRATCH {scratch}ull
#define DEFAULT_POINTS {points}
#define TOLERANCE {tol:e}
static const char *const SPREAD_MODULE = \"{f0}\";
static const char *const COMMON_MODULE = \"{f1}\";
static const char *const FFT_MODULE = \"{f2}\";

/* The kernel's Fourier transform psi-hat(w) = 2a sum_q QW[q] cos(w a QZ[q]), a = w/2 = {a}:
   Gauss-Legendre nodes on (0, 1] and weights times phi ({kind:?}, width {w}, beta {beta}). */
#define HALF_WIDTH {a:?}
static const double QZ[{nq}] = {{{qz}}};
static const double QW[{nq}] = {{{qw}}};
",
        dim = d.dim,
        m0 = d.modes[0],
        m1 = d.modes[1],
        m2 = d.modes[2],
        n0 = d.fine[0],
        n1 = d.fine[1],
        n2 = d.fine[2],
        b0 = spec.bins[0],
        b1 = spec.bins[1],
        b2 = spec.bins[2],
        maxsub = spec.max_subproblem,
        scan_tile = scan_tile(job.dialect),
        scratch = d.fft.plan.scratch_elems,
        points = d.points,
        tol = check_tolerance(job),
        f0 = d.files[0],
        f1 = d.files[1],
        f2 = d.files[2],
        a = job.kernel.half_width(),
        kind = job.kernel.kind,
        w = job.kernel.width,
        beta = job.kernel.beta,
        nq = quad.0.len(),
        qz = quad
            .0
            .iter()
            .map(|v| c_double(*v))
            .collect::<Vec<_>>()
            .join(", "),
        qw = quad
            .1
            .iter()
            .map(|v| c_double(*v))
            .collect::<Vec<_>>()
            .join(", "),
    );
    s += "\n/* ---- one typed launcher per kernel (from the modules' launch descriptions) ------------- */\n\n";
    let kernels: Vec<&GpuKernel> = d.spread.kernels.iter().chain(&common.kernels).collect();
    for k in &kernels {
        let _ = writeln!(s, "static dfunc K_{};", k.name);
    }
    let (fft_entries, fft_text) = fft_runner(job.dialect, &d.fft);
    for e in &fft_entries {
        let _ = writeln!(s, "static dfunc K_{e};");
    }
    s += "\nstatic void kernels_init(dprog spread, dprog common, dprog fft)\n{\n";
    for k in &d.spread.kernels {
        let _ = writeln!(s, "    K_{0} = dev_kernel(spread, \"{0}\");", k.name);
    }
    for k in &common.kernels {
        let _ = writeln!(s, "    K_{0} = dev_kernel(common, \"{0}\");", k.name);
    }
    for e in &fft_entries {
        let _ = writeln!(s, "    K_{e} = dev_kernel(fft, \"{e}\");");
    }
    s += "}\n\n";
    for k in &kernels {
        s += &launcher(k);
    }
    s += &fft_text;
    s += MAIN;
    Ok(s)
}

/// The README.md beside the kernels.
fn readme(job: &CudaJob, arch: &GpuArch, modules: &[GpuSource], demos: &[Demo]) -> String {
    let cuda = job.dialect == Dialect::Cuda;
    let lang = if cuda { "CUDA C" } else { "OpenCL C 1.2" };
    let mut s = format!(
        "# nudt-generated {lang} kernels\n\nGenerated by nudt {} with `{}`.\n\n",
        env!("CARGO_PKG_VERSION"),
        job.command
    );
    let _ = writeln!(
        s,
        "| parameter | value |\n|---|---|\n| kernel | {:?}, width {}, β = {}, upsampling factor σ = {} |\n| tolerance | {} |\n| precision | {} |\n| device | {} |\n",
        job.kernel.kind,
        job.kernel.width,
        job.kernel.beta,
        job.kernel.upsampling.0,
        job.tol.map_or("(width given)".to_string(), |t| format!("{t:e}")),
        job.precision.type_name(),
        if cuda {
            format!(
                "{} ({}), {} bytes of shared memory per block",
                arch.name,
                arch.sm(),
                arch.shared_mem_per_block_optin
            )
        } else {
            "any OpenCL 1.2 device with cl_khr_fp64 (the bins assume the local memory given or detected; FFTs: work-groups of 256, 32 KiB local memory)".into()
        }
    );
    s += "## Files\n\n| file | what |\n|---|---|\n";
    let ext = job.dialect.extension();
    for m in modules {
        let what = match &m.spec {
            Some(sp) => format!(
                "{}-D bin sort, spreading and interpolation; bins {} (padded box {} bytes), at most {} points per subproblem",
                sp.dim,
                dims_text(&sp.bins[..sp.dim]),
                sp.smem_bytes(),
                sp.max_subproblem
            ),
            None => "prefix sums, subproblem lists, deconvolution and mode copies, type 3 factors".into(),
        };
        let _ = writeln!(s, "| `{}.{ext}` | {what} |", m.name);
        let _ = writeln!(
            s,
            "| `{}.json` | its entry points: threads per block, dynamic local memory, grid |",
            m.name
        );
    }
    for d in demos {
        let _ = writeln!(
            s,
            "| `{}.{ext}`, `.json` | the FFT of the {}-D host program's fine grid ({}), forward and inverse; the .json lists its launches |",
            d.fft.name,
            d.dim,
            dims_text(&d.fine[..d.dim])
        );
        let _ = writeln!(
            s,
            "| `{}` | the {}-D host program: one type 1 with these files, checked against the direct sum |",
            d.program, d.dim
        );
    }
    let real = match job.precision {
        Precision::F32 => "float",
        Precision::F64 => "double",
    };
    s += &format!(
        "\n## Conventions\n\n\
Complex arrays are interleaved (re, im) in the kernels' precision; grids and mode arrays are\n\
row-major, the last dimension fastest. Points are in radians (any finite value, 2π-periodic);\n\
coordinate arrays beyond the module's dimension are passed as null, with grid sizes, bins and\n\
modes 1 there. A point at grid coordinate x (= n·x/2π mod n) touches the w cells from\n\
⌈x − w/2⌉; its bin is the one of its cell ⌈x − w/2⌉ + ⌊w/2⌋. Type 1 computes\n\
f_k = Σ_j c_j e^{{isign·i k·x_j}} for modes −⌊N/2⌋ ≤ k < ⌈N/2⌉ (centred order: index k + ⌊N/2⌋).\n\
In the argument types, `T` is the kernels' real type ({real}) and `T2` a complex value\n\
(two of them); buffers of `unsigned` are 32-bit, and `u64` is a 64-bit unsigned\n\
(`unsigned long long` in CUDA, `ulong` in OpenCL). Kernels marked y in their grid take the\n\
transform index from the second grid dimension (blockIdx.y / get_group_id(1)), to run a batch\n\
in one launch.\n"
    );
    if !cuda {
        s +=
            "\nIn OpenCL, a global size is groups × block; the subproblem kernels (dynamic local\n\
memory above 0) take one more, trailing `__local` argument of that many bytes\n\
(`clSetKernelArg(k, n, bytes, NULL)`), and every kernel with a block size in its `KERNEL`\n\
attribute must be launched with exactly that work-group size.\n";
    } else {
        s += "\nIn CUDA, the dynamic local memory is the launch's shared memory bytes; above 48 KiB a\n\
kernel needs `cuFuncSetAttribute(f, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, bytes)`\n\
first. Compile with NVRTC (`--gpu-architecture=sm_XY --std=c++17`) or\n\
`nvcc -arch=sm_XY --std=c++17 -cubin`.\n";
    }
    s += "\n## Kernels and their arguments\n";
    for m in modules {
        let _ = writeln!(s, "\n### `{}.{ext}`\n", m.name);
        for k in &m.kernels {
            let _ = writeln!(
                s,
                "**`{}`** — {}. Block: {} threads; dynamic local memory: {} bytes; grid: {}.\n",
                k.name, k.decl.purpose, k.block_threads, k.dynamic_smem, k.grid
            );
            s += "| # | type | name | meaning |\n|---|---|---|---|\n";
            for (i, p) in k.decl.params.iter().enumerate() {
                let _ = writeln!(s, "| {i} | `{}` | `{}` | {} |", p.ty.c(), p.name, p.meaning);
            }
            if !cuda && k.dynamic_smem > 0 {
                let _ = writeln!(
                    s,
                    "| {} | `__local float4*` | (local memory) | {} bytes, set with `clSetKernelArg(k, {}, {}, NULL)` |",
                    k.decl.params.len(),
                    k.dynamic_smem,
                    k.decl.params.len(),
                    k.dynamic_smem
                );
            }
            s += "\n";
        }
    }
    for d in demos {
        let _ = writeln!(
            s,
            "\n### `{}.{ext}` (FFT of {})\n\nEvery kernel takes `(src, dst)`: two pointers to complex values, chosen per launch from the input, the output (the same buffer for an in-place transform) and a scratch buffer of {} complex values. Forward (`_fwd`, e^(−2πi nk/N)) and inverse (`_inv`, e^(+2πi nk/N), unnormalised) launches, in order:\n",
            d.fft.name,
            dims_text(&d.fine[..d.dim]),
            d.fft.plan.scratch_elems
        );
        s += "| # | kernel | grid (blocks) | block | local memory | src → dst |\n|---|---|---|---|---|---|\n";
        for (i, l) in d.fft.plan.launches.iter().enumerate() {
            let _ = writeln!(
                s,
                "| {i} | `{}` / `_inv` | {} | {} | {} bytes{} | {:?} → {:?} |",
                d.fft.entry(l, FftDirection::Forward),
                l.grid,
                l.threads,
                l.local_bytes,
                if job.dialect.dynamic_local_memory() && l.local_bytes > 0 {
                    " (dynamic)"
                } else {
                    ""
                },
                l.src,
                l.dst
            );
        }
    }
    s += &launch_order(modules.last().expect("the common module is last"), demos);
    s += &host_section(job, demos);
    s
}

/// The launch order of a whole type 1 and type 2, with the sizes of the first host program.
fn launch_order(common: &GpuSource, demos: &[Demo]) -> String {
    let Some(d) = demos.first() else {
        return String::new();
    };
    let spread = d.spread;
    let threads = |name: &str| spread.kernel(name).map_or(0, |k| k.block_threads);
    let common_threads = |name: &str| common.kernel(name).map_or(0, |k| k.block_threads);
    let nb: Vec<usize> = (0..3).map(|i| d.fine[i].div_ceil(d.spec.bins[i])).collect();
    let nbins: usize = nb.iter().product();
    let sub = |name: &str| {
        spread
            .kernel(name)
            .map_or((0, 0), |k| (k.block_threads, k.dynamic_smem))
    };
    let (sm_t, sm_l) = sub(names::SPREAD_SM);
    let (od_t, od_l) = sub(names::SPREAD_OD);
    let (ism_t, ism_l) = sub(names::INTERP_SM);
    let mut s = format!(
        "\n## Launch order of a whole transform\n\n\
As the nudt runtime runs it, with the sizes of the {dim}-D host program `{prog}` as the example\n\
({m} points, modes {modes}, fine grid {fine} = n0 × n1 × n2, bins {bins} so nb = {nbt} = {nbins} bins).\n\
\"groups\" is the number of blocks (work-groups); the element-wise kernels loop over their range, so\n\
any number of groups up to ⌈range / block⌉ works. Set-points (steps 1–6) runs once per point set;\n\
each execute then runs the rest.\n\n\
### Type 1 (nonuniform points → modes)\n\n\
| # | kernel | groups × block | buffers and values |\n|---|---|---|---|\n\
| 1 | `nudt_bin_count` | ⌈M / {t_count}⌉ × {t_count} | x0..x2 → `rank` (M), `counts` (nbins, zeroed), `bad` (1, set to 0xffffffff) |\n\
| 2 | `nudt_bin_scan_tiles` | ntiles = ⌈nbins / SCAN_TILE⌉ × {t_scan} | `counts` → `start` and `substart` (nbins + 1 each), `tiles` (2·ntiles) |\n\
| 3 | `nudt_bin_scan_totals` | 1 × {t_scan} | `tiles` → totals into `start[nbins]`, `substart[nbins]`, `nsub` |\n\
| 4 | `nudt_bin_scan_add` | ⌈nbins / {t_el}⌉ × {t_el}, only if ntiles > 1 | `tiles` → `start`, `substart` |\n\
| 5 | `nudt_bin_scatter` | ⌈M / {t_scatter}⌉ × {t_scatter} | `rank`, `start` → `idx` (M, points in bin order) |\n\
| 6 | `nudt_subprob_map` | ⌈nbins / {t_el}⌉ × {t_el} (SM and output-driven only) | `start`, `substart` → `sub_bin`, `sub_first` (nsub each; read `nsub` back, or allocate nbins + M / MAXSUB) |\n\
| 7 | (zero the fine grid) | | `grid`: n0·n1·n2 complex per transform |\n\
| 8 | `nudt_spread_gm`, or | ⌈M / {t_gm}⌉ × {t_gm} | `idx`, x0..x2, `c` → `grid` |\n\
|   | `nudt_spread_sm`, or | nsub × {sm_t}, {sm_l} bytes local | `sub_bin`, `sub_first`, `substart`, `start`, `idx`, x0..x2, `c` → `grid` |\n\
|   | `nudt_spread_od` | nsub × {od_t}, {od_l} bytes local | as `nudt_spread_sm` |\n\
| 9 | the FFT's launches, inverse (`_inv`) for isign = +1, forward (`_fwd`) for −1 | see the FFT tables | `grid` → `grid` in place (with its scratch) |\n\
| 10 | `nudt_grid_to_modes` | ⌈nmodes / {t_el}⌉ × {t_el} | `grid`, `gi0..2`, `cf0..2` → `modes` |\n\n\
The runtime picks the spreading method per point set: output-driven (2-D, 3-D) or SM where the\n\
device's blocks hold the bins' boxes and the points are dense, GM-sort otherwise; all three give\n\
the same grid up to rounding. `gi_d[i]` = k mod n_d and `cf_d[i]` = 1/ψ̂(2πk/n_d) for mode\n\
k = i − ⌊m_d/2⌋, ψ̂ the kernel's Fourier transform (the host program computes both).\n\n\
### Type 2 (modes → nonuniform points)\n\n\
Steps 1–6 as for type 1 (the runtime shapes a type 2 grid's bins for interpolation; these\n\
modules' bins are those of type 1, which interpolation takes as well), then:\n\n\
| # | kernel | groups × block | buffers and values |\n|---|---|---|---|\n\
| 7 | (zero the fine grid) | | `grid` |\n\
| 8 | `nudt_modes_to_grid` | ⌈nmodes / {t_el}⌉ × {t_el} | `modes`, `gi0..2`, `cf0..2` → `grid` |\n\
| 9 | the FFT's launches, forward (`_fwd`) for isign = −1, inverse for +1 | | `grid` → `grid` |\n\
| 10 | `nudt_interp_gm`, or | ⌈M / {t_igm}⌉ × {t_igm} | `idx`, x0..x2, `grid` → `out` (M complex, the caller's order) |\n\
|    | `nudt_interp_sm` | nsub × {ism_t}, {ism_l} bytes local | `sub_bin`, `sub_first`, `substart`, `start`, `idx`, x0..x2, `grid` → `out` |\n",
        dim = d.dim,
        prog = d.program,
        m = d.points,
        modes = dims_text(&d.modes[..d.dim]),
        fine = dims_text(&d.fine[..d.dim]),
        bins = dims_text(&d.spec.bins[..d.dim]),
        nbt = dims_text(&nb[..d.dim]),
        t_count = threads(names::BIN_COUNT),
        t_scatter = threads(names::BIN_SCATTER),
        t_scan = common_threads(names::BIN_SCAN_TILES),
        t_el = common_threads(names::GRID_TO_MODES),
        t_gm = threads(names::SPREAD_GM),
        t_igm = threads(names::INTERP_GM),
    );
    s += "\nA batch of transforms sharing the points passes its count as the y grid size (or `ntr` for\n\
the GM-sort kernels) with the strides between transforms; the sort is done once.\n";
    s += "\n### With the gradient (derivatives with respect to the points)\n\n\
A type 2 with its gradient is type 2's steps with step 10 replaced by `nudt_interp_grad_gm` or\n\
`nudt_interp_grad_sm` (same launches and arguments), which write d + 1 complex values a point:\n\
the value and its derivatives along each dimension, per radian. Its transpose, a type 1 of\n\
values and derivative weights (d + 1 a point), is type 1's steps with step 8 replaced by\n\
`nudt_spread_grad_gm` or `nudt_spread_grad_sm` (output-driven plans take SM). Their `cstride`\n\
is (d + 1)·M.\n";
    s
}

/// How to build and run the host programs.
fn host_section(job: &CudaJob, demos: &[Demo]) -> String {
    let cuda = job.dialect == Dialect::Cuda;
    let mut s = "\n## The host program\n\n".to_string();
    s += &format!(
        "`type1_<d>d_{}.c` runs one type 1 (isign +1) with the files above, in plain C: random\n\
points and strengths, the bin sort (steps 1–6), spreading by the method named on its command\n\
line (`gm`, `sm` or `od`), the emitted FFT, the deconvolution, then the direct sum at eight\n\
modes; it prints the relative error and exits 1 when it is above the tolerance (2 on a\n\
device error). Its launchers (`launch_<kernel>`) are generated from the kernels' parameter\n\
lists, one typed C function each; copy them into your own program.\n\n",
        if cuda { "cuda" } else { "opencl" }
    );
    s += "```sh\n";
    for d in demos {
        let exe = d.program.trim_end_matches(".c");
        if cuda {
            let _ = writeln!(s, "gcc -O2 -std=c11 -o {exe} {} -ldl -lm", d.program);
            let _ = writeln!(
                s,
                "./{exe}            # {} points, GM-sort spreading; ./{exe} 100000 sm",
                d.points
            );
            let _ = writeln!(
                s,
                "./{exe} --nvrtc sm_90   # no GPU needed: only compiles the modules with NVRTC"
            );
        } else {
            let _ = writeln!(s, "gcc -O2 -std=c11 -o {exe} {} -lOpenCL -lm", d.program);
            let _ = writeln!(
                s,
                "./{exe}            # {} points, GM-sort spreading; ./{exe} 100000 sm",
                d.points
            );
        }
    }
    s += "```\n\n";
    if cuda {
        s += "It needs no CUDA headers or toolkit to build: the CUDA driver (`libcuda.so.1`) and NVRTC\n\
(`libnvrtc.so`, e.g. `pip install nvidia-cuda-nvrtc` and `LD_LIBRARY_PATH` to its `lib`) are\n\
loaded with `dlopen` when it runs, and the modules compiled for the GPU found there. **It needs\n\
an NVIDIA GPU to run**; nudt's tests only compile it (gcc) and compile its modules with NVRTC\n\
(`--nvrtc sm_90`), since they run where there is no GPU.\n";
    } else {
        s += "It needs the OpenCL headers and the ICD loader (Debian/Ubuntu: `apt-get install\n\
opencl-headers ocl-icd-opencl-dev`) and a platform whose first device has `cl_khr_fp64` (on a\n\
CPU: `pocl-opencl-icd`). nudt's tests build and run it on PoCL.\n";
    }
    s += "\nThe problem size is fixed when the files are generated (the FFT is generated for the fine\n\
grid); the number of points is not.\n";
    s
}

/// A generated file's text, read whole (both layers build their modules from source).
const READ_TEXT: &str = r#"
static char *read_text(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f) {
        fprintf(stderr, "cannot open %s (run the program in the folder of the generated files)\n", path);
        exit(2);
    }
    fseek(f, 0, SEEK_END);
    long len = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *text = malloc((size_t)len + 1);
    if (!text || fread(text, 1, (size_t)len, f) != (size_t)len) {
        fprintf(stderr, "cannot read %s\n", path);
        exit(2);
    }
    text[len] = 0;
    fclose(f);
    return text;
}
"#;

/// The OpenCL device layer of the host program.
const OPENCL_LAYER: &str = r#"#define CL_TARGET_OPENCL_VERSION 120
#include <CL/cl.h>

/* ---- device layer: OpenCL ------------------------------------------------------------------ */

typedef cl_mem dmem;
typedef cl_kernel dfunc;
typedef cl_program dprog;
static cl_device_id device;
static cl_context context;
static cl_command_queue queue;

static void cl_check(cl_int e, const char *what)
{
    if (e != CL_SUCCESS) {
        fprintf(stderr, "OpenCL error %d in %s\n", (int)e, what);
        exit(2);
    }
}

static void dev_init(int argc, char **argv)
{
    (void)argc;
    (void)argv;
    cl_platform_id platforms[16];
    cl_uint np = 0;
    if (clGetPlatformIDs(16, platforms, &np) != CL_SUCCESS || np == 0) {
        fprintf(stderr, "no OpenCL platform found (install one, e.g. PoCL: pocl-opencl-icd)\n");
        exit(2);
    }
    cl_uint found = 0;
    for (cl_uint p = 0; p < np && !found; p++)
        if (clGetDeviceIDs(platforms[p], CL_DEVICE_TYPE_ALL, 1, &device, &found) != CL_SUCCESS)
            found = 0;
    if (!found) {
        fprintf(stderr, "no OpenCL device found\n");
        exit(2);
    }
    char name[256] = "";
    clGetDeviceInfo(device, CL_DEVICE_NAME, sizeof name - 1, name, NULL);
    printf("device: %s\n", name);
    cl_int e;
    context = clCreateContext(NULL, 1, &device, NULL, NULL, &e);
    cl_check(e, "clCreateContext");
    queue = clCreateCommandQueue(context, device, 0, &e);
    cl_check(e, "clCreateCommandQueue");
}

static dprog dev_build(const char *file)
{
    char *text = read_text(file);
    const char *src = text;
    cl_int e;
    cl_program p = clCreateProgramWithSource(context, 1, &src, NULL, &e);
    cl_check(e, "clCreateProgramWithSource");
    if (clBuildProgram(p, 1, &device, "", NULL, NULL) != CL_SUCCESS) {
        size_t len = 0;
        clGetProgramBuildInfo(p, device, CL_PROGRAM_BUILD_LOG, 0, NULL, &len);
        char *log = malloc(len + 1);
        clGetProgramBuildInfo(p, device, CL_PROGRAM_BUILD_LOG, len, log, NULL);
        log[len] = 0;
        fprintf(stderr, "building %s failed:\n%s\n", file, log);
        exit(2);
    }
    free(text);
    return p;
}

static dfunc dev_kernel(dprog p, const char *name)
{
    cl_int e;
    cl_kernel k = clCreateKernel(p, name, &e);
    cl_check(e, name);
    return k;
}

static dmem dev_alloc(size_t bytes)
{
    cl_int e;
    cl_mem m = clCreateBuffer(context, CL_MEM_READ_WRITE, bytes ? bytes : 16, NULL, &e);
    cl_check(e, "clCreateBuffer");
    return m;
}

static void dev_free(dmem m)
{
    if (m) clReleaseMemObject(m);
}

static void dev_upload(dmem d, const void *h, size_t bytes)
{
    if (bytes) cl_check(clEnqueueWriteBuffer(queue, d, CL_TRUE, 0, bytes, h, 0, NULL, NULL), "clEnqueueWriteBuffer");
}

static void dev_download(void *h, dmem d, size_t bytes)
{
    if (bytes) cl_check(clEnqueueReadBuffer(queue, d, CL_TRUE, 0, bytes, h, 0, NULL, NULL), "clEnqueueReadBuffer");
}

static void dev_zero(dmem d, size_t bytes)
{
    const unsigned char zero = 0;
    if (bytes) cl_check(clEnqueueFillBuffer(queue, d, &zero, 1, 0, bytes, 0, NULL, NULL), "clEnqueueFillBuffer");
}

static void dev_finish(void)
{
    cl_check(clFinish(queue), "clFinish");
}

/* One kernel argument: its size and where its value is (a dmem, unsigned, int, ...). */
typedef struct {
    size_t size;
    const void *value;
} arg_t;

/* Launches groups_x x groups_y work-groups of `threads` work-items; `local` bytes of dynamic
   local memory go in as one more, trailing __local argument. */
static void dev_launch(dfunc k, const char *name, size_t groups_x, size_t groups_y,
    unsigned threads, size_t local, int n, const arg_t *a)
{
    for (int i = 0; i < n; i++) cl_check(clSetKernelArg(k, (cl_uint)i, a[i].size, a[i].value), name);
    if (local) cl_check(clSetKernelArg(k, (cl_uint)n, local, NULL), name);
    const size_t global[2] = {groups_x * threads, groups_y}, group[2] = {threads, 1};
    cl_check(clEnqueueNDRangeKernel(queue, k, 2, NULL, global, group, 0, NULL, NULL), name);
}
"#;

/// The CUDA device layer of the host program: the driver API and NVRTC through dlopen.
const CUDA_LAYER: &str = r#"#include <dlfcn.h>
#define NUDT_CUDA_LAYER 1

/* ---- device layer: CUDA driver API and NVRTC, loaded with dlopen (no CUDA headers) --------- */

typedef int CUresult;
typedef int CUdevice;
typedef void *CUcontext;
typedef void *CUmodule;
typedef void *CUstream;
typedef void *nvrtcProgram;
typedef unsigned long long dmem; /* CUdeviceptr */
typedef void *dfunc;             /* CUfunction */
typedef CUmodule dprog;

static CUresult (*cuInit_)(unsigned);
static CUresult (*cuDeviceGet_)(CUdevice *, int);
static CUresult (*cuDeviceGetAttribute_)(int *, int, CUdevice);
static CUresult (*cuDeviceGetName_)(char *, int, CUdevice);
static CUresult (*cuDevicePrimaryCtxRetain_)(CUcontext *, CUdevice);
static CUresult (*cuCtxSetCurrent_)(CUcontext);
static CUresult (*cuCtxSynchronize_)(void);
static CUresult (*cuModuleLoadData_)(CUmodule *, const void *);
static CUresult (*cuModuleGetFunction_)(dfunc *, CUmodule, const char *);
static CUresult (*cuFuncSetAttribute_)(dfunc, int, int);
static CUresult (*cuMemAlloc_)(dmem *, size_t);
static CUresult (*cuMemFree_)(dmem);
static CUresult (*cuMemcpyHtoD_)(dmem, const void *, size_t);
static CUresult (*cuMemcpyDtoH_)(void *, dmem, size_t);
static CUresult (*cuMemsetD8_)(dmem, unsigned char, size_t);
static CUresult (*cuLaunchKernel_)(dfunc, unsigned, unsigned, unsigned, unsigned, unsigned,
    unsigned, unsigned, CUstream, void **, void **);
static CUresult (*cuGetErrorString_)(CUresult, const char **);
static int (*nvrtcCreateProgram_)(nvrtcProgram *, const char *, const char *, int,
    const char *const *, const char *const *);
static int (*nvrtcCompileProgram_)(nvrtcProgram, int, const char *const *);
static int (*nvrtcGetProgramLogSize_)(nvrtcProgram, size_t *);
static int (*nvrtcGetProgramLog_)(nvrtcProgram, char *);
static int (*nvrtcGetCUBINSize_)(nvrtcProgram, size_t *);
static int (*nvrtcGetCUBIN_)(nvrtcProgram, char *);
static int (*nvrtcDestroyProgram_)(nvrtcProgram *);

#define CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR 75
#define CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR 76
#define CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES 8

static char arch[32] = "sm_90";

static void *open_first(const char *const *names, const char *what)
{
    for (int i = 0; names[i]; i++) {
        void *lib = dlopen(names[i], RTLD_NOW | RTLD_GLOBAL);
        if (lib) return lib;
    }
    fprintf(stderr, "%s not found (%s)\n", what, names[0]);
    exit(2);
}

static void *sym(void *lib, const char *name)
{
    void *f = dlsym(lib, name);
    if (!f) {
        fprintf(stderr, "symbol %s not found\n", name);
        exit(2);
    }
    return f;
}

#define LOAD(lib, var, name) (*(void **)(&var) = sym(lib, name))

static void cu_check(CUresult r, const char *what)
{
    if (r != 0) {
        const char *msg = "unknown error";
        if (cuGetErrorString_) cuGetErrorString_(r, &msg);
        fprintf(stderr, "CUDA error %d (%s) in %s\n", r, msg, what);
        exit(2);
    }
}

static void load_nvrtc(void)
{
    static const char *const names[] = {"libnvrtc.so", "libnvrtc.so.13", "libnvrtc.so.12", NULL};
    void *lib = open_first(names, "NVRTC");
    LOAD(lib, nvrtcCreateProgram_, "nvrtcCreateProgram");
    LOAD(lib, nvrtcCompileProgram_, "nvrtcCompileProgram");
    LOAD(lib, nvrtcGetProgramLogSize_, "nvrtcGetProgramLogSize");
    LOAD(lib, nvrtcGetProgramLog_, "nvrtcGetProgramLog");
    LOAD(lib, nvrtcGetCUBINSize_, "nvrtcGetCUBINSize");
    LOAD(lib, nvrtcGetCUBIN_, "nvrtcGetCUBIN");
    LOAD(lib, nvrtcDestroyProgram_, "nvrtcDestroyProgram");
}

/* The module in `file` compiled by NVRTC for `arch` to a CUBIN (size in *size). */
static char *nvrtc_compile(const char *file, size_t *size)
{
    char *text = read_text(file);
    nvrtcProgram p;
    if (nvrtcCreateProgram_(&p, text, file, 0, NULL, NULL) != 0) {
        fprintf(stderr, "nvrtcCreateProgram failed for %s\n", file);
        exit(2);
    }
    char opt_arch[64];
    snprintf(opt_arch, sizeof opt_arch, "--gpu-architecture=%s", arch);
    const char *opts[] = {opt_arch, "--std=c++17"};
    int r = nvrtcCompileProgram_(p, 2, opts);
    if (r != 0) {
        size_t len = 0;
        nvrtcGetProgramLogSize_(p, &len);
        char *log = malloc(len + 1);
        nvrtcGetProgramLog_(p, log);
        log[len] = 0;
        fprintf(stderr, "NVRTC failed on %s for %s:\n%s\n", file, arch, log);
        exit(2);
    }
    nvrtcGetCUBINSize_(p, size);
    char *cubin = malloc(*size);
    nvrtcGetCUBIN_(p, cubin);
    nvrtcDestroyProgram_(&p);
    free(text);
    return cubin;
}

/* `--nvrtc sm_XY`: compile the modules only (no driver, no GPU), then exit. */
static void compile_only(const char *const *files, int n)
{
    load_nvrtc();
    for (int i = 0; i < n; i++) {
        size_t size = 0;
        free(nvrtc_compile(files[i], &size));
        printf("%s: compiled for %s by NVRTC (%zu bytes of CUBIN)\n", files[i], arch, size);
    }
}

static void dev_init(int argc, char **argv)
{
    (void)argc;
    (void)argv;
    static const char *const names[] = {"libcuda.so.1", "libcuda.so", NULL};
    void *lib = open_first(names, "the CUDA driver (an NVIDIA GPU and its driver are needed to run)");
    LOAD(lib, cuInit_, "cuInit");
    LOAD(lib, cuDeviceGet_, "cuDeviceGet");
    LOAD(lib, cuDeviceGetAttribute_, "cuDeviceGetAttribute");
    LOAD(lib, cuDeviceGetName_, "cuDeviceGetName");
    LOAD(lib, cuDevicePrimaryCtxRetain_, "cuDevicePrimaryCtxRetain");
    LOAD(lib, cuCtxSetCurrent_, "cuCtxSetCurrent");
    LOAD(lib, cuCtxSynchronize_, "cuCtxSynchronize");
    LOAD(lib, cuModuleLoadData_, "cuModuleLoadData");
    LOAD(lib, cuModuleGetFunction_, "cuModuleGetFunction");
    LOAD(lib, cuFuncSetAttribute_, "cuFuncSetAttribute");
    LOAD(lib, cuMemAlloc_, "cuMemAlloc_v2");
    LOAD(lib, cuMemFree_, "cuMemFree_v2");
    LOAD(lib, cuMemcpyHtoD_, "cuMemcpyHtoD_v2");
    LOAD(lib, cuMemcpyDtoH_, "cuMemcpyDtoH_v2");
    LOAD(lib, cuMemsetD8_, "cuMemsetD8_v2");
    LOAD(lib, cuLaunchKernel_, "cuLaunchKernel");
    LOAD(lib, cuGetErrorString_, "cuGetErrorString");
    load_nvrtc();
    cu_check(cuInit_(0), "cuInit");
    CUdevice dev;
    cu_check(cuDeviceGet_(&dev, 0), "cuDeviceGet (no GPU?)");
    int major = 0, minor = 0;
    cu_check(cuDeviceGetAttribute_(&major, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, dev), "cuDeviceGetAttribute");
    cu_check(cuDeviceGetAttribute_(&minor, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, dev), "cuDeviceGetAttribute");
    snprintf(arch, sizeof arch, "sm_%d%d", major, minor);
    char name[256] = "";
    cuDeviceGetName_(name, sizeof name - 1, dev);
    printf("device: %s (%s)\n", name, arch);
    CUcontext ctx;
    cu_check(cuDevicePrimaryCtxRetain_(&ctx, dev), "cuDevicePrimaryCtxRetain");
    cu_check(cuCtxSetCurrent_(ctx), "cuCtxSetCurrent");
}

static dprog dev_build(const char *file)
{
    size_t size = 0;
    char *cubin = nvrtc_compile(file, &size);
    CUmodule m;
    cu_check(cuModuleLoadData_(&m, cubin), file);
    free(cubin);
    return m;
}

static dfunc dev_kernel(dprog m, const char *name)
{
    dfunc f;
    cu_check(cuModuleGetFunction_(&f, m, name), name);
    return f;
}

static dmem dev_alloc(size_t bytes)
{
    dmem d;
    cu_check(cuMemAlloc_(&d, bytes ? bytes : 16), "cuMemAlloc");
    return d;
}

static void dev_free(dmem d)
{
    if (d) cuMemFree_(d);
}

static void dev_upload(dmem d, const void *h, size_t bytes)
{
    if (bytes) cu_check(cuMemcpyHtoD_(d, h, bytes), "cuMemcpyHtoD");
}

static void dev_download(void *h, dmem d, size_t bytes)
{
    if (bytes) cu_check(cuMemcpyDtoH_(h, d, bytes), "cuMemcpyDtoH");
}

static void dev_zero(dmem d, size_t bytes)
{
    if (bytes) cu_check(cuMemsetD8_(d, 0, bytes), "cuMemsetD8");
}

static void dev_finish(void)
{
    cu_check(cuCtxSynchronize_(), "cuCtxSynchronize");
}

/* One kernel argument: its size and where its value is (a dmem, unsigned, int, ...). */
typedef struct {
    size_t size;
    const void *value;
} arg_t;

/* Launches groups_x x groups_y blocks of `threads`, with `shared` bytes of dynamic shared
   memory (above 48 KiB the kernel is allowed that much first). */
static void dev_launch(dfunc k, const char *name, size_t groups_x, size_t groups_y,
    unsigned threads, size_t shared, int n, const arg_t *a)
{
    void *params[64];
    for (int i = 0; i < n; i++) params[i] = (void *)a[i].value;
    if (shared > 48 * 1024)
        cu_check(cuFuncSetAttribute_(k, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, (int)shared), name);
    cu_check(cuLaunchKernel_(k, (unsigned)groups_x, (unsigned)groups_y, 1, threads, 1, 1,
                 (unsigned)shared, NULL, params, NULL), name);
}
"#;

/// The program itself, the same for both device layers.
const MAIN: &str = r#"
/* ---- the type 1 --------------------------------------------------------------------------- */

/* Groups for a grid-stride kernel over n items. */
static size_t groups(size_t n, unsigned threads)
{
    size_t g = (n + threads - 1) / threads;
    return g < 1 ? 1 : (g > 4096 ? 4096 : g);
}

static unsigned long long rng = 0x9e3779b97f4a7c15ull;
static double uniform(void) /* in [0, 1) */
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return (double)(rng >> 11) * (1.0 / 9007199254740992.0);
}

/* psi-hat at angular frequency w (radians per grid point), by the quadrature above. */
static double psi_hat(double w)
{
    double s = 0.0;
    for (size_t q = 0; q < sizeof QZ / sizeof QZ[0]; q++) s += QW[q] * cos(w * HALF_WIDTH * QZ[q]);
    return 2.0 * HALF_WIDTH * s;
}

static double seconds(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

int main(int argc, char **argv)
{
    const char *const modules[3] = {SPREAD_MODULE, COMMON_MODULE, FFT_MODULE};
#ifdef NUDT_CUDA_LAYER
    if (argc > 2 && strcmp(argv[1], "--nvrtc") == 0) {
        snprintf(arch, sizeof arch, "%s", argv[2]);
        compile_only(modules, 3);
        return 0;
    }
#endif
    const size_t M = argc > 1 ? (size_t)strtoull(argv[1], NULL, 10) : DEFAULT_POINTS;
    const char *method = argc > 2 ? argv[2] : "gm";
    if (M == 0 || M > 0xffffffffull || (strcmp(method, "gm") && strcmp(method, "sm") && strcmp(method, "od"))) {
        fprintf(stderr, "usage: %s [points (1 to 2^32-1)] [gm|sm|od]\n", argv[0]);
        return 2;
    }
    dev_init(argc, argv);
    const dprog spread = dev_build(modules[0]), common = dev_build(modules[1]), fft = dev_build(modules[2]);
    kernels_init(spread, common, fft);

    /* Random points in [-pi, pi)^DIM and strengths in [-1, 1)^2. */
    real *x[3] = {NULL, NULL, NULL};
    real *c = malloc(2 * M * sizeof(real));
    for (int d = 0; d < DIM; d++) {
        x[d] = malloc(M * sizeof(real));
        for (size_t j = 0; j < M; j++) x[d][j] = (real)(NUDT_PI * (2.0 * uniform() - 1.0));
    }
    for (size_t j = 0; j < 2 * M; j++) c[j] = (real)(2.0 * uniform() - 1.0);
    dmem dx[3] = {0, 0, 0};
    for (int d = 0; d < DIM; d++) {
        dx[d] = dev_alloc(M * sizeof(real));
        dev_upload(dx[d], x[d], M * sizeof(real));
    }
    const dmem dc = dev_alloc(2 * M * sizeof(real));
    dev_upload(dc, c, 2 * M * sizeof(real));

    /* Set-points: the bin sort. */
    const double t0 = seconds();
    const int n0 = FINE[0], n1 = FINE[1], n2 = FINE[2];
    const int nb0 = (n0 + BINS[0] - 1) / BINS[0], nb1 = (n1 + BINS[1] - 1) / BINS[1],
              nb2 = (n2 + BINS[2] - 1) / BINS[2];
    const unsigned nbins = (unsigned)nb0 * (unsigned)nb1 * (unsigned)nb2;
    const unsigned ntiles = (nbins + SCAN_TILE - 1) / SCAN_TILE;
    const dmem rank = dev_alloc(M * 4), counts = dev_alloc(nbins * 4ull), bad = dev_alloc(4),
               idx = dev_alloc(M * 4), start = dev_alloc((nbins + 1) * 4ull),
               substart = dev_alloc((nbins + 1) * 4ull), nsub_dev = dev_alloc(4),
               tiles = dev_alloc(2 * 4ull * ntiles);
    const unsigned none = 0xffffffffu;
    dev_zero(counts, nbins * 4ull);
    dev_upload(bad, &none, 4);
    /* One point set that the transforms share: its points 0..M (a set per transform would
       list each set's first point, the sets' bins following one another). */
    const unsigned set_range[2] = {0u, (unsigned)M};
    const dmem sets = dev_alloc(sizeof set_range);
    dev_upload(sets, set_range, sizeof set_range);
    launch_nudt_bin_count(groups(M, 256), 1, (unsigned)M, dx[0], dx[1], dx[2], n0, n1, n2, nb1, nb2, sets, 1u, nbins, rank, counts, bad);
    launch_nudt_bin_scan_tiles(ntiles, 1, nbins, counts, MAXSUB, start, substart, tiles);
    launch_nudt_bin_scan_totals(1, 1, ntiles, tiles, nbins, start, substart, nsub_dev);
    if (ntiles > 1) launch_nudt_bin_scan_add(groups(nbins, 256), 1, nbins, tiles, start, substart);
    launch_nudt_bin_scatter(groups(M, 256), 1, (unsigned)M, dx[0], dx[1], dx[2], n0, n1, n2, nb1, nb2, sets, 1u, nbins, rank, start, idx);
    unsigned nsub = 0, first_bad = 0;
    dev_download(&nsub, nsub_dev, 4);
    dev_download(&first_bad, bad, 4);
    if (first_bad != none) {
        fprintf(stderr, "point %u has a non-finite coordinate\n", first_bad);
        return 2;
    }
    const dmem sub_bin = dev_alloc(nsub * 4ull), sub_first = dev_alloc(nsub * 4ull);
    launch_nudt_subprob_map(groups(nbins, 256), 1, nbins, start, substart, MAXSUB, sub_bin, sub_first);
    dev_finish();
    const double t1 = seconds();

    /* Execute: spread, FFT, deconvolve. */
    const unsigned long long glen = (unsigned long long)n0 * n1 * n2;
    const int m0 = MODES[0], m1 = MODES[1], m2 = MODES[2];
    const unsigned long long nmodes = (unsigned long long)m0 * m1 * m2;
    const dmem grid = dev_alloc(2 * glen * sizeof(real)), modes = dev_alloc(2 * nmodes * sizeof(real)),
               scratch = dev_alloc(2 * FFT_SCRATCH * sizeof(real));
    /* Per dimension: each mode's fine-grid index k mod n and its correction 1/psi-hat(2 pi k/n). */
    dmem gi[3], cf[3];
    for (int d = 0; d < 3; d++) {
        int *g = malloc(MODES[d] * sizeof(int));
        real *f = malloc(MODES[d] * sizeof(real));
        for (int i = 0; i < MODES[d]; i++) {
            const int k = i - MODES[d] / 2;
            g[i] = d < DIM ? (k % FINE[d] + FINE[d]) % FINE[d] : 0;
            f[i] = d < DIM ? (real)(1.0 / psi_hat(2.0 * NUDT_PI * k / FINE[d])) : (real)1;
        }
        gi[d] = dev_alloc(MODES[d] * sizeof(int));
        cf[d] = dev_alloc(MODES[d] * sizeof(real));
        dev_upload(gi[d], g, MODES[d] * sizeof(int));
        dev_upload(cf[d], f, MODES[d] * sizeof(real));
        free(g);
        free(f);
    }
    dev_finish();
    const double t2 = seconds();
    dev_zero(grid, 2 * glen * sizeof(real));
    if (!strcmp(method, "gm"))
        launch_nudt_spread_gm(groups(M, 256), 1, (unsigned)M, idx, dx[0], dx[1], dx[2], dc, grid, n0, n1, n2, 1, M, glen, sets, 1u, 0u);
    else if (!strcmp(method, "sm"))
        launch_nudt_spread_sm(nsub ? nsub : 1, 1, sub_bin, sub_first, substart, start, idx, dx[0], dx[1], dx[2], dc, grid, n0, n1, n2, nb1, nb2, M, glen, nbins, 0u, 1u);
    else
        launch_nudt_spread_od(nsub ? nsub : 1, 1, sub_bin, sub_first, substart, start, idx, dx[0], dx[1], dx[2], dc, grid, n0, n1, n2, nb1, nb2, M, glen, nbins, 0u, 1u);
    fft_run(ISIGN > 0, grid, grid, scratch);
    launch_nudt_grid_to_modes(groups(nmodes, 256), 1, nmodes, m1, m2, gi[0], gi[1], gi[2], cf[0], cf[1], cf[2], grid, modes, n1, n2, glen, nmodes);
    real *f = malloc(2 * nmodes * sizeof(real));
    dev_download(f, modes, 2 * nmodes * sizeof(real));
    const double t3 = seconds();

    /* Eight modes against the direct sum f_k = sum_j c_j exp(i ISIGN k.x_j). */
    double num = 0.0, den = 0.0;
    for (int s = 0; s < 8; s++) {
        int i[3];
        for (int d = 0; d < 3; d++)
            i[d] = s == 0 ? 0 : s == 1 ? MODES[d] - 1 : s == 2 ? MODES[d] / 2 : (int)(uniform() * MODES[d]);
        double re = 0.0, im = 0.0;
        for (size_t j = 0; j < M; j++) {
            double ph = 0.0;
            for (int d = 0; d < DIM; d++) ph += (double)(i[d] - MODES[d] / 2) * (double)x[d][j];
            const double cr = cos(ISIGN * ph), ci = sin(ISIGN * ph);
            re += c[2 * j] * cr - c[2 * j + 1] * ci;
            im += c[2 * j] * ci + c[2 * j + 1] * cr;
        }
        const size_t at = ((size_t)i[0] * m1 + i[1]) * m2 + i[2];
        num += (f[2 * at] - re) * (f[2 * at] - re) + (f[2 * at + 1] - im) * (f[2 * at + 1] - im);
        den += re * re + im * im;
    }
    const double err = sqrt(num / den);
    printf("type 1, %d-D, %zu points, %s spreading: set-points %.3f ms, execute %.3f ms\n", DIM, M, method,
        1e3 * (t1 - t0), 1e3 * (t3 - t2));
    printf("relative error against the direct sum at 8 modes: %.3e (tolerance %.0e): %s\n", err, TOLERANCE,
        err <= TOLERANCE ? "ok" : "FAILED");
    for (int d = 0; d < 3; d++) {
        dev_free(dx[d]);
        dev_free(gi[d]);
        dev_free(cf[d]);
        free(x[d]);
    }
    dev_free(dc);
    dev_free(rank);
    dev_free(counts);
    dev_free(bad);
    dev_free(sets);
    dev_free(idx);
    dev_free(start);
    dev_free(substart);
    dev_free(nsub_dev);
    dev_free(tiles);
    dev_free(sub_bin);
    dev_free(sub_first);
    dev_free(grid);
    dev_free(modes);
    dev_free(scratch);
    free(c);
    free(f);
    return err <= TOLERANCE ? 0 : 1;
}
"#;
