//! The fine grids' FFTs: cuFFT's, or the one `nudt_gen::fft` generates, per batch size.
//!
//! Neither wins everywhere: on an H100 the generated FFT is 1.4–2.7× cuFFT on small batched
//! cubes and level on 4096² and 512³, but 0.85–0.9× on 2000² (BENCHMARKS.md). So by default
//! ([`FftEngine::Auto`]) a plan times both on its own fine-grid buffer, once per device,
//! shape, batch and precision, and keeps the faster; the verdict is cached in memory and on
//! disk beside the compiled modules ([`cache_dir`]), so later plans of that size decide
//! without timing, and without compiling the generated FFT when cuFFT won.

mod cufft;
mod generated;

pub(crate) use cufft::FftPlans;
pub use generated::GenFft;

use super::device::driver_version;
use super::error::{driver, CudaError, CudaResult};
use super::grid::memset0;
use super::launch::cache_dir;
use super::CudaFloat;
use cudarc::driver::sys::CUevent_flags;
use cudarc::driver::CudaStream;
use nudt_gen::fft::{fft_module, FftDevice, FftDirection, FftModule, FftSpec};
use nudt_gen::gpu::GpuArch;
use std::collections::HashMap;
use std::sync::{Arc, Mutex, OnceLock};

/// Which FFT a CUDA plan runs on its fine grids.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum FftEngine {
    /// The faster of the two for this shape, batch, precision and GPU, measured once per
    /// device and cached.
    #[default]
    Auto,
    /// cuFFT always.
    CuFft,
    /// The generated FFT always (a size it cannot plan is a typed error).
    Generated,
}

/// The generated FFT is kept only when it is at least this much faster than cuFFT, so that
/// timing noise does not flip the choice (and its scratch buffer is worth having).
const MARGIN: f64 = 0.97;

/// In-place batched FFTs of one fine-grid shape, each batch size on its chosen engine.
pub(crate) struct GridFfts<T: CudaFloat> {
    cufft: FftPlans,
    generated: Vec<(usize, GenFft<T>)>,
}

impl<T: CudaFloat> GridFfts<T> {
    /// Plans the FFTs of grids of shape `n` for each batch size in `batches`; `work` is a
    /// device buffer of at least `batches[0]` grids, which [`FftEngine::Auto`] times on (its
    /// contents are overwritten).
    pub fn new(
        stream: &Arc<CudaStream>,
        arch: &GpuArch,
        n: &[usize],
        batches: &[usize],
        engine: FftEngine,
        work: u64,
    ) -> CudaResult<Self> {
        let mut on_cufft = Vec::new();
        let mut generated: Vec<(usize, GenFft<T>)> = Vec::new();
        for &b in batches {
            if b == 0 || on_cufft.contains(&b) || generated.iter().any(|g| g.0 == b) {
                continue;
            }
            let gen = match engine {
                FftEngine::CuFft => None,
                FftEngine::Generated => Some(GenFft::new(stream, arch, n, b)?),
                FftEngine::Auto => choose::<T>(stream, arch, n, b, work)?,
            };
            match gen {
                Some(g) => generated.push((b, g)),
                None => on_cufft.push(b),
            }
        }
        Ok(GridFfts {
            cufft: FftPlans::new::<T>(stream, n, &on_cufft)?,
            generated,
        })
    }

    /// In-place FFTs of `batch` grids at `data`: `e^{isign·2πi jk/n}`.
    pub fn exec(&self, data: u64, batch: usize, isign: i32) -> CudaResult<()> {
        match self.generated.iter().find(|g| g.0 == batch) {
            Some((_, g)) => {
                let dir = if isign < 0 {
                    FftDirection::Forward
                } else {
                    FftDirection::Inverse
                };
                g.run(data, data, dir)
            }
            None => self.cufft.exec::<T>(data, batch, isign),
        }
    }
}

/// Verdicts of this process, by device and problem: the module to compile when the generated
/// FFT won, `None` when cuFFT did. Generating the module's source takes milliseconds, which a
/// plan made again for the same size should not pay.
type Verdicts = Mutex<HashMap<String, Option<FftModule>>>;

fn verdicts() -> &'static Verdicts {
    static V: OnceLock<Verdicts> = OnceLock::new();
    V.get_or_init(Default::default)
}

/// The generated FFT for `b` grids of shape `n` if it measures faster than cuFFT on this
/// device (from the caches when they know), `None` for cuFFT.
fn choose<T: CudaFloat>(
    stream: &Arc<CudaStream>,
    arch: &GpuArch,
    n: &[usize],
    b: usize,
    work: u64,
) -> CudaResult<Option<GenFft<T>>> {
    let spec = FftSpec::new(n, b, T::PRECISION);
    let dev = FftDevice::cuda(arch);
    let here = format!(
        "{}-{}-{}-{:?}-{}-{:?}",
        arch.name,
        arch.sm(),
        dev.local_bytes,
        spec.shape,
        spec.batch,
        spec.precision
    );
    // The generated FFT needs its scratch (global-pass plans), and timing it a second cuFFT
    // plan: where the device has no room for them, the plan takes cuFFT this time and
    // records nothing, rather than failing where cuFFT alone would fit.
    let out_of_memory = |e: &CudaError| matches!(e, CudaError::OutOfMemory { .. });
    let load = |m: FftModule| match GenFft::<T>::bundle(stream, arch, vec![m]) {
        Ok(mut g) => Ok(Some(g.remove(0))),
        Err(e) if out_of_memory(&e) => Ok(None),
        Err(e) => Err(e),
    };
    let known = verdicts().lock().unwrap().get(&here).cloned();
    let module = match known {
        Some(None) => return Ok(None),
        Some(Some(m)) => return load(m),
        None => match fft_module(&spec, &dev) {
            Ok(m) => m,
            // A size the generator cannot plan (too large a batch for its grid): cuFFT.
            Err(_) => {
                verdicts().lock().unwrap().insert(here, None);
                return Ok(None);
            }
        },
    };
    // On disk the source hash stands for the generator's version and the device's limits.
    let file = cache_dir().map(|d| {
        d.join(format!(
            "{}-{:016x}-{}-drv{}.fft-choice",
            module.name,
            module.hash,
            arch.sm(),
            driver_version().unwrap_or(0)
        ))
    });
    let stored = file
        .as_ref()
        .and_then(|f| std::fs::read_to_string(f).ok())
        .and_then(|t| t.split_whitespace().next().map(|w| w == "generated"));
    if stored == Some(false) {
        verdicts().lock().unwrap().insert(here, None);
        return Ok(None);
    }
    let Some(gen) = load(module.clone())? else {
        return Ok(None);
    };
    let wins = match stored {
        Some(w) => w,
        None => {
            let bytes = gen.module().len() * 2 * std::mem::size_of::<T>();
            memset0(stream, work, bytes)?;
            let cufft = match FftPlans::new::<T>(stream, n, &[b]) {
                Ok(c) => c,
                Err(e) if out_of_memory(&e) => return Ok(None),
                Err(e) => return Err(e),
            };
            let gen_ms = time(stream, || gen.run(work, work, FftDirection::Forward))?;
            let cufft_ms = time(stream, || cufft.exec::<T>(work, b, -1))?;
            let wins = gen_ms < MARGIN * cufft_ms;
            if let Some(path) = &file {
                // A cache that cannot be written only means timing again in the next process.
                let _ = std::fs::create_dir_all(path.parent().unwrap_or(path)).and_then(|_| {
                    std::fs::write(
                        path,
                        format!(
                            "{} generated_ms {gen_ms:.5} cufft_ms {cufft_ms:.5}\n",
                            if wins { "generated" } else { "cufft" }
                        ),
                    )
                });
            }
            wins
        }
    };
    verdicts()
        .lock()
        .unwrap()
        .insert(here, wins.then_some(module));
    Ok(wins.then_some(gen))
}

/// GPU time of one call of `f`, in ms: the best of 3 rounds of 3 back-to-back calls, after
/// one call that loads the module and warms the caches.
fn time(stream: &Arc<CudaStream>, mut f: impl FnMut() -> CudaResult<()>) -> CudaResult<f64> {
    let ctx = stream.context();
    let event = || {
        ctx.new_event(Some(CUevent_flags::CU_EVENT_DEFAULT))
            .map_err(|e| driver("cuEventCreate", e))
    };
    let (start, stop) = (event()?, event()?);
    f()?;
    let mut best = f64::INFINITY;
    for _ in 0..3 {
        start
            .record(stream)
            .map_err(|e| driver("cuEventRecord", e))?;
        for _ in 0..3 {
            f()?;
        }
        stop.record(stream)
            .map_err(|e| driver("cuEventRecord", e))?;
        stop.synchronize()
            .map_err(|e| driver("cuEventSynchronize", e))?;
        let ms = start
            .elapsed_ms(&stop)
            .map_err(|e| driver("cuEventElapsedTime", e))?;
        best = best.min(ms as f64 / 3.0);
    }
    if !best.is_finite() {
        return Err(CudaError::Unsupported("FFT timing gave no time".into()));
    }
    Ok(best)
}
