//! `nudt gen --target cuda|opencl`: the modules a GPU backend would compile for these
//! parameters, as standalone `.cu` files of `extern "C"` kernels (or `.cl` files of OpenCL C
//! kernels, rendered from the same templates), each with a JSON file stating its entry
//! points, launch geometry and shared-memory needs.

use super::{describe_gpu, errln, fail, outln, probe_gpu, Result};
use nudt::gen::gpu::Dialect;
use nudt::gen::gpu::{common_module_in, spread_module_in, GpuArch, GpuSource, GpuSpreadSpec};
use nudt::gen::{KernelSpec, Precision};
use std::path::Path;

/// What to emit and for which GPU.
pub struct CudaJob<'a> {
    /// CUDA C, or OpenCL C (bin sort, GM-sort methods, corrections and phases).
    pub dialect: Dialect,
    pub dims: &'a [usize],
    pub kernel: KernelSpec,
    pub precision: Precision,
    /// `--sm-count`, `--shared-mem` (bytes per block, opt-in) and `--l2` (bytes).
    pub sm_count: Option<u32>,
    pub shared_mem: Option<usize>,
    pub l2: Option<usize>,
    /// The command line and tolerance, recorded in every file.
    pub command: &'a str,
    pub tol: Option<f64>,
    pub out: &'a Path,
}

/// The GPU to generate for: the flags over the detected device over an H100 description;
/// with a line for stderr saying which, so that output generated without a GPU (or in a build
/// without the `cuda` feature) never passes silently for this machine's.
fn gpu(job: &CudaJob) -> (GpuArch, String, String) {
    let given = job.sm_count.is_some() || job.shared_mem.is_some() || job.l2.is_some();
    let (mut arch, mut source, mut note) = match probe_gpu() {
        Ok(a) => {
            let note = format!("GPU: detected {}", describe_gpu(&a));
            (a, "detected".to_string(), note)
        }
        Err(why) => {
            let h100 = GpuArch::h100();
            let note = format!(
                "GPU: {why}; generated for the built-in default, {}; --sm-count, --shared-mem and --l2 override it",
                describe_gpu(&h100)
            );
            (
                h100,
                "no GPU detected: the built-in H100 description".to_string(),
                note,
            )
        }
    };
    if given {
        source += ", with the command line's figures";
        note += " (this run's figures given on the command line replace those)";
    }
    if let Some(n) = job.sm_count {
        arch.sm_count = n;
    }
    if let Some(b) = job.shared_mem {
        // A block may then use `b`; one multiprocessor holds at least one such block.
        arch.shared_mem_per_block_optin = b;
        arch.shared_mem_per_block = arch.shared_mem_per_block.min(b);
        arch.shared_mem_per_sm = arch.shared_mem_per_sm.max(b);
    }
    if let Some(b) = job.l2 {
        arch.l2_bytes = b;
    }
    (arch, source, note)
}

/// Writes `<module>.cu` and `<module>.json` for the spreading module of every dimension and
/// for the precision's common module (scan, corrections, mode copies, type 3 factors).
pub fn emit(job: &CudaJob) -> Result<()> {
    let (arch, arch_source, note) = gpu(job);
    if arch.sm_count == 0 || arch.shared_mem_per_block_optin < 1024 {
        return Err(fail!(
            "--sm-count/--shared-mem: a GPU needs at least one multiprocessor and 1K of shared memory per block"
        ));
    }
    let mut modules: Vec<GpuSource> = Vec::new();
    for &dim in job.dims {
        // The bins the runtime uses for a type 1 grid: shaped for output-driven spreading
        // (the interpolation kernels take any bins).
        let spec = GpuSpreadSpec::new(dim, job.kernel, job.precision, &arch)
            .map_err(|e| fail!("--dim {dim}: {e}"))?
            .for_spreading();
        if spec.smem_bytes() > arch.shared_mem_per_block_optin {
            return Err(fail!(
                "--shared-mem: the {dim}-D width-{} box needs {} bytes per block, above the {} given",
                job.kernel.width,
                spec.smem_bytes(),
                arch.shared_mem_per_block_optin
            ));
        }
        modules.push(spread_module_in(&spec, job.dialect).map_err(|e| fail!("--dim {dim}: {e}"))?);
    }
    modules.push(common_module_in(job.precision, job.dialect).map_err(|e| fail!("{e}"))?);

    let header = provenance(job, &arch, &arch_source);
    let mut files = Vec::new();
    for m in &modules {
        files.push((
            format!("{}.{}", m.name, job.dialect.extension()),
            format!("{header}\n{}", m.source),
        ));
        files.push((format!("{}.json", m.name), m.describe_json()));
    }
    // Beside the kernels: per dimension the FFT and host program of one type 1, and README.md.
    files.extend(super::gen_host::files(job, &arch, &modules, &header)?);
    super::gen::write_files(job.out, &files)?;
    match job.dialect {
        Dialect::Cuda => outln!(
            "compile with NVRTC or `nvcc -arch={} --std=c++17 -cubin <file>.cu`; launch geometry and \
             shared memory per kernel are in the .json files",
            arch.sm()
        ),
        Dialect::OpenCl { .. } => outln!(
            "build with clBuildProgram on a device with cl_khr_fp64; work-group sizes per kernel \
             are in the .json files (block_threads), and the bytes of the trailing __local \
             argument of the subproblem kernels (dynamic_smem)"
        ),
    }
    // Last, once all is written: an error stays the one line on stderr.
    errln!("{note}");
    Ok(())
}

/// The comment block every `.cu` file opens with.
fn provenance(job: &CudaJob, arch: &GpuArch, arch_source: &str) -> String {
    let lines = [
        format!(
            "Standalone {} source generated by nudt.",
            match job.dialect {
                Dialect::Cuda => "CUDA",
                Dialect::OpenCl { .. } => "OpenCL C",
            }
        ),
        format!("nudt {} gen: `{}`", env!("CARGO_PKG_VERSION"), job.command),
        format!(
            "kernel = {:?}, width = {}, beta = {}, upsampfac = {}{}",
            job.kernel.kind,
            job.kernel.width,
            job.kernel.beta,
            job.kernel.upsampling.0,
            job.tol
                .map_or(String::new(), |t| format!(" (for tolerance {t:e})"))
        ),
        format!("precision = {}", job.precision.type_name()),
        format!(
            "GPU = {} {} ({}), {} SMs, {} bytes shared memory per block (opt-in), {} per SM, L2 {} bytes",
            arch.name,
            arch.sm(),
            arch_source,
            arch.sm_count,
            arch.shared_mem_per_block_optin,
            arch.shared_mem_per_sm,
            arch.l2_bytes
        ),
    ];
    lines.iter().map(|l| format!("// {l}\n")).collect()
}
