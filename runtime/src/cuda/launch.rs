//! Modules and launches: NVRTC compilation to CUBIN for the device's architecture with
//! in-memory and on-disk caches, loaded kernels with their declared signatures, and the
//! checked launch (as OpenCL's `launch.rs`).

use super::device::{driver_version, guarded, nvrtc_version, probe_libraries};
use super::error::{device_call, driver, CudaError, CudaResult};
use cudarc::driver::sys::CUfunction_attribute;
use cudarc::driver::{
    CudaContext, CudaFunction, CudaModule, CudaStream, LaunchConfig, PushKernelArg,
};
use cudarc::nvrtc::Ptx;
use nudt_gen::gpu::{GpuArch, GpuSource, KernelDecl};
use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::{Arc, Mutex, OnceLock};

/// The NVRTC options every module is compiled with.
pub fn compile_options(arch: &GpuArch) -> Vec<String> {
    vec![
        format!("--gpu-architecture={}", arch.sm()),
        "--std=c++17".into(),
    ]
}

/// Compiles a module with NVRTC straight to CUBIN for `arch` (no driver JIT at load).
pub fn nvrtc_cubin(src: &GpuSource, arch: &GpuArch) -> CudaResult<Vec<u8>> {
    use cudarc::nvrtc::{result, sys};
    use std::ffi::{c_char, CStr, CString};
    probe_libraries()?;
    let err = |log: String| CudaError::Compile {
        module: src.name.clone(),
        arch: arch.sm(),
        log,
    };
    let code = CString::new(src.source.as_str()).map_err(|e| err(e.to_string()))?;
    let name = CString::new(format!("{}.cu", src.name)).map_err(|e| err(e.to_string()))?;
    let prog = guarded("nvrtc", || result::create_program(&code, Some(&name)))?
        .map_err(|e| err(format!("{e:?}")))?;
    let opts = compile_options(arch);
    // SAFETY: `prog` is a live program; it is destroyed exactly once below.
    let out = unsafe {
        match result::compile_program(prog, &opts) {
            Err(e) => {
                let log = result::get_program_log(prog)
                    .map(|l| CStr::from_ptr(l.as_ptr()).to_string_lossy().into_owned())
                    .unwrap_or_default();
                Err(err(format!("{e:?}\n{log}")))
            }
            Ok(()) => {
                let mut size = 0usize;
                sys::nvrtcGetCUBINSize(prog, &mut size)
                    .result()
                    .map_err(|e| err(format!("nvrtcGetCUBINSize: {e:?}")))?;
                let mut bin = vec![0u8; size];
                sys::nvrtcGetCUBIN(prog, bin.as_mut_ptr().cast::<c_char>())
                    .result()
                    .map_err(|e| err(format!("nvrtcGetCUBIN: {e:?}")))?;
                Ok(bin)
            }
        }
    };
    // SAFETY: as above.
    let _ = unsafe { result::destroy_program(prog) };
    out
}

fn cache_override() -> &'static Mutex<Option<Option<PathBuf>>> {
    static O: OnceLock<Mutex<Option<Option<PathBuf>>>> = OnceLock::new();
    O.get_or_init(Default::default)
}

/// Overrides [`cache_dir`] for this process: `Some(Some(dir))` uses `dir`, `Some(None)`
/// disables the disk cache, `None` returns to the environment's choice.
pub fn set_cache_dir(dir: Option<Option<PathBuf>>) {
    *cache_override().lock().unwrap() = dir;
}

/// Where compiled modules are kept between runs: `$NUDT_CUDA_CACHE` (`off` disables the disk
/// cache), else `$XDG_CACHE_HOME/nudt/cuda`, else `~/.cache/nudt/cuda` (unless overridden
/// by [`set_cache_dir`]).
pub fn cache_dir() -> Option<PathBuf> {
    if let Some(d) = cache_override().lock().unwrap().clone() {
        return d;
    }
    crate::profile::module_cache_dir("NUDT_CUDA_CACHE", "cuda")
}

/// Cache key: module name and source hash, architecture, NVRTC and driver versions.
fn cache_key(src: &GpuSource, arch: &GpuArch) -> CudaResult<String> {
    let (a, b) = nvrtc_version()?;
    Ok(format!(
        "{}-{:016x}-{}-nvrtc{a}.{b}-drv{}",
        src.name,
        src.hash,
        arch.sm(),
        driver_version()?
    ))
}

/// The file the disk cache keeps `src`'s CUBIN for `arch` in (`None` with the disk cache
/// off), whether or not it exists yet.
pub fn cache_path(src: &GpuSource, arch: &GpuArch) -> CudaResult<Option<PathBuf>> {
    let key = cache_key(src, arch)?;
    Ok(cache_dir().map(|d| d.join(format!("{key}.cubin"))))
}

type BinCache = Mutex<HashMap<String, Arc<Vec<u8>>>>;
type ModCache = Mutex<HashMap<(usize, String), Arc<CudaModule>>>;

fn bin_cache() -> &'static BinCache {
    static C: OnceLock<BinCache> = OnceLock::new();
    C.get_or_init(Default::default)
}

fn mod_cache() -> &'static ModCache {
    static C: OnceLock<ModCache> = OnceLock::new();
    C.get_or_init(Default::default)
}

/// Where a module came from, for diagnostics and tests.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ModuleOrigin {
    /// Already loaded in this context.
    Memory,
    /// CUBIN compiled earlier in this process, loaded into a new context.
    MemoryCubin,
    /// CUBIN read from the disk cache.
    Disk,
    /// Compiled by NVRTC now (also when the disk cache held a file the driver refused).
    Compiled,
}

/// Whether `bytes` can be handed to `cuModuleLoadData`, which takes no length: a 64-bit
/// little-endian ELF image whose program and section header tables lie inside it. A file cut
/// short (a full disk, a crash mid-copy) fails this instead of sending the driver past the
/// end of the buffer.
fn whole_cubin(bytes: &[u8]) -> bool {
    let u16_at = |i: usize| u16::from_le_bytes([bytes[i], bytes[i + 1]]) as u64;
    let u64_at = |i: usize| {
        let mut v = [0u8; 8];
        v.copy_from_slice(&bytes[i..i + 8]);
        u64::from_le_bytes(v)
    };
    // The ELF64 header: magic, class 2 (64-bit), data 1 (little-endian), then the table
    // offsets (e_phoff at 0x20, e_shoff at 0x28) and entry sizes and counts (0x36..0x3e).
    if bytes.len() < 64 || bytes[..4] != *b"\x7fELF" || bytes[4] != 2 || bytes[5] != 1 {
        return false;
    }
    let fits = |off: u64, size: u64, count: u64| {
        size.checked_mul(count)
            .and_then(|t| t.checked_add(off))
            .is_some_and(|end| end <= bytes.len() as u64)
    };
    fits(u64_at(0x20), u16_at(0x36), u16_at(0x38)) && fits(u64_at(0x28), u16_at(0x3a), u16_at(0x3c))
}

/// The CUBIN of `src` for `arch`: from memory, from disk, or compiled now (and stored).
fn cubin(src: &GpuSource, arch: &GpuArch, key: &str) -> CudaResult<(Arc<Vec<u8>>, ModuleOrigin)> {
    if let Some(b) = bin_cache().lock().unwrap().get(key) {
        return Ok((b.clone(), ModuleOrigin::MemoryCubin));
    }
    let path = cache_dir().map(|d| d.join(format!("{key}.cubin")));
    if let Some(bytes) = path.as_ref().and_then(|p| std::fs::read(p).ok()) {
        // A damaged file is a cache miss: compiled again below, and overwritten.
        if whole_cubin(&bytes) {
            let b = Arc::new(bytes);
            bin_cache()
                .lock()
                .unwrap()
                .insert(key.to_string(), b.clone());
            return Ok((b, ModuleOrigin::Disk));
        }
    }
    Ok((compile_and_store(src, arch, key)?, ModuleOrigin::Compiled))
}

/// Compiles `src` for `arch` and stores the CUBIN under `key` in memory and, best effort, on
/// disk (replacing whatever file was there).
fn compile_and_store(src: &GpuSource, arch: &GpuArch, key: &str) -> CudaResult<Arc<Vec<u8>>> {
    let b = Arc::new(nvrtc_cubin(src, arch)?);
    if let Some(dir) = cache_dir() {
        crate::profile::store_cached(&dir.join(format!("{key}.cubin")), &b);
    }
    bin_cache()
        .lock()
        .unwrap()
        .insert(key.to_string(), b.clone());
    Ok(b)
}

/// Loads `src` into `ctx` for `arch`, through the caches. A cached CUBIN the driver refuses
/// (corrupt, or not this GPU's after all) is compiled again and replaced, not reported: the
/// caches are an optimisation, never a reason to fail.
pub fn load_module(
    ctx: &Arc<CudaContext>,
    src: &GpuSource,
    arch: &GpuArch,
) -> CudaResult<(Arc<CudaModule>, ModuleOrigin)> {
    let key = cache_key(src, arch)?;
    let ctx_key = (ctx.cu_ctx() as usize, key.clone());
    if let Some(m) = mod_cache().lock().unwrap().get(&ctx_key) {
        return Ok((m.clone(), ModuleOrigin::Memory));
    }
    let (bin, origin) = cubin(src, arch, &key)?;
    let load = |bin: &[u8]| {
        ctx.load_module(Ptx::from_binary(bin.to_vec()))
            .map_err(|e| driver("cuModuleLoadData", e))
    };
    let (module, origin) = match load(&bin) {
        Ok(m) => (m, origin),
        Err(_) if origin != ModuleOrigin::Compiled => (
            load(&compile_and_store(src, arch, &key)?)?,
            ModuleOrigin::Compiled,
        ),
        Err(e) => return Err(e),
    };
    mod_cache().lock().unwrap().insert(ctx_key, module.clone());
    Ok((module, origin))
}

/// A kernel argument: device addresses for arrays (0 for an unused dimension's).
pub(crate) type Arg = crate::gpu::device::Arg<u64>;

/// One loaded entry point with its launch shape.
#[derive(Clone, Debug)]
pub(crate) struct Kernel {
    pub name: &'static str,
    f: CudaFunction,
    pub threads: u32,
    pub smem: u32,
    /// Its declared signature, which every launch's arguments are checked against.
    decl: &'static KernelDecl,
}

/// Whether to synchronise after every launch (`NUDT_CUDA_SYNC=1`), so that a faulting kernel
/// is named in the error (and compute-sanitizer reports line up with launches).
fn sync_each_launch() -> bool {
    static S: OnceLock<bool> = OnceLock::new();
    *S.get_or_init(|| std::env::var("NUDT_CUDA_SYNC").is_ok_and(|v| v == "1"))
}

impl Kernel {
    /// Loads entry point `name` of `module` as described by `src`.
    pub fn load(module: &Arc<CudaModule>, src: &GpuSource, name: &'static str) -> CudaResult<Self> {
        let info = src.kernel(name).ok_or_else(|| CudaError::Driver {
            call: "cuModuleGetFunction".into(),
            detail: format!("{name} is not in module {}", src.name),
        })?;
        let f = module
            .load_function(name)
            .map_err(|e| driver("cuModuleGetFunction", e))?;
        Ok(Kernel {
            name,
            f,
            threads: info.block_threads,
            smem: info.dynamic_smem as u32,
            decl: info.decl,
        })
    }

    /// Lets the kernel use more than the default 48 KiB of dynamic shared memory.
    pub fn allow_smem(&self) -> CudaResult<()> {
        if self.smem > 48 << 10 {
            self.f
                .set_attribute(
                    CUfunction_attribute::CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
                    self.smem as i32,
                )
                .map_err(|e| driver("cuFuncSetAttribute", e))?;
        }
        Ok(())
    }

    /// Launches on `stream` with `grid` blocks (x, y) of `self.threads` threads.
    pub fn launch(&self, stream: &CudaStream, grid: (u32, u32), args: &[Arg]) -> CudaResult<()> {
        // Local memory (an OpenCL argument) ends the kinds early: a count the check refuses.
        self.decl.check(args.iter().map_while(Arg::kind), None)?;
        device_call(self.name)?;
        let mut b = stream.launch_builder(&self.f);
        for a in args {
            match a {
                Arg::Mem(v) => b.arg(v),
                Arg::U32(v) => b.arg(v),
                Arg::I32(v) => b.arg(v),
                Arg::U64(v) => b.arg(v),
                Arg::F64(v) => b.arg(v),
                // Refused by the check above; no CUDA kernel takes local memory.
                Arg::Local(_) => {
                    return Err(CudaError::Unsupported(format!(
                        "{}: a local array",
                        self.name
                    )))
                }
            };
        }
        let cfg = LaunchConfig {
            grid_dim: (grid.0.max(1), grid.1.max(1), 1),
            block_dim: (self.threads, 1, 1),
            shared_mem_bytes: self.smem,
        };
        // SAFETY: the arguments match the kernel's declared signature (checked above; the
        // source's prototype is rendered from it), every pointer is a live device allocation of the right length, and
        // the kernels bound-check every index against the lengths passed with them.
        unsafe { b.launch(cfg) }.map_err(|e| driver(self.name, e))?;
        if sync_each_launch() {
            stream.synchronize().map_err(|e| driver(self.name, e))?;
        }
        Ok(())
    }
}

/// Blocks for a grid-stride loop over `n` items with `threads` per block.
pub(crate) fn blocks(n: usize, threads: u32) -> u32 {
    n.div_ceil(threads as usize).clamp(1, 1 << 20) as u32
}
