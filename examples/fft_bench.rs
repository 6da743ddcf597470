//! GPU FFT benchmark: nudt's generated FFT (`nudt::cuda::GenFft`) beside cuFFT in the same
//! run, on the same device buffers, both in place and without transfers, timed with CUDA
//! events (median of 7 rounds of back-to-back executions). Cases: Keskin et al.'s batched 3D
//! FFTs (16³, 32³, 64³, batch filling 2²⁷ points) and the NUFFT fine grids of the shared GPU
//! problems (2000², 4096², 200³, 512³), f32 and f64. GFlop/s by the seed's convention
//! 5·N·log2(N)·batch / t, N the points of one transform; the seed reached 486 on a TITAN X.
//! Accuracy: the generated forward transform against cuFFT's (relative l2), and the round
//! trip forward → inverse against N · input.
//!
//! ```sh
//! cargo run --release --no-default-features --features cuda --example fft_bench -- [--quick] [--only 2000x2000,16x16x16,...] [--out FILE]
//! ```

#[cfg(not(feature = "cuda"))]
fn main() {
    eprintln!("build with --features cuda");
}

#[cfg(feature = "cuda")]
fn main() {
    if let Err(e) = bench::main() {
        eprintln!("fft_bench: {e}");
        std::process::exit(1);
    }
}

#[cfg(feature = "cuda")]
mod bench {
    use nudt::cuda::cudarc::cufft::result as cufft;
    use nudt::cuda::cudarc::driver::sys::CUevent_flags;
    use nudt::cuda::cudarc::driver::{CudaSlice, CudaStream};
    use nudt::cuda::{detect_arch, open, CudaError, CudaFloat, GenFft};
    use nudt::gen::fft::FftDirection;
    use std::sync::Arc;

    type R<T> = Result<T, Box<dyn std::error::Error>>;

    fn input<T: CudaFloat>(n: usize) -> Vec<T> {
        let mut s = 0x9E37_79B9_7F4A_7C15u64;
        (0..2 * n)
            .map(|_| {
                s = s
                    .wrapping_mul(6364136223846793005)
                    .wrapping_add(1442695040888963407);
                T::of((s >> 11) as f64 / (1u64 << 53) as f64 * 2.0 - 1.0)
            })
            .collect()
    }

    fn rel_l2<T: CudaFloat>(a: &[T], b: &[T], scale: f64) -> f64 {
        let (mut num, mut den) = (0.0, 0.0);
        for (x, y) in a.iter().zip(b) {
            let (x, y) = (x.wide(), y.wide() * scale);
            num += (x - y) * (x - y);
            den += y * y;
        }
        (num / den).sqrt()
    }

    /// Median over 7 rounds of the time per call of `reps` back-to-back calls, in ms.
    fn time(stream: &Arc<CudaStream>, reps: usize, mut f: impl FnMut() -> R<()>) -> R<f64> {
        let ctx = stream.context();
        let ev = || ctx.new_event(Some(CUevent_flags::CU_EVENT_DEFAULT));
        let (a, b) = (ev()?, ev()?);
        f()?; // warm-up (module load, first-touch)
        let mut t = Vec::new();
        for _ in 0..7 {
            a.record(stream)?;
            for _ in 0..reps {
                f()?;
            }
            b.record(stream)?;
            b.synchronize()?;
            t.push(a.elapsed_ms(&b)? as f64 / reps as f64);
        }
        t.sort_by(f64::total_cmp);
        Ok(t[3])
    }

    struct Row {
        case: String,
        prec: &'static str,
        batch: usize,
        gen_ms: f64,
        cufft_ms: f64,
        gflops: f64,
        err_vs_cufft: f64,
        roundtrip: f64,
        launches: usize,
    }

    fn case<T: CudaFloat>(
        stream: &Arc<CudaStream>,
        arch: &nudt::gen::gpu::GpuArch,
        shape: &[usize],
        batch: usize,
    ) -> R<Row> {
        let n: usize = shape.iter().product();
        let elems = n * batch;
        let mut gen = GenFft::<T>::new(stream, arch, shape, batch)?;
        let x = input::<T>(elems);
        let dx: CudaSlice<T> = stream.clone_htod(&x)?;
        let mut a: CudaSlice<T> = stream.clone_htod(&x)?;
        let b: CudaSlice<T> = stream.clone_htod(&x)?;
        // cuFFT plan of the same batch and layout.
        let mut dims: Vec<i32> = shape.iter().map(|&v| v as i32).collect();
        // SAFETY: rank sizes in `dims`; null embeds = contiguous batches of `n` points.
        let h = unsafe {
            cufft::plan_many(
                dims.len() as i32,
                dims.as_mut_ptr(),
                std::ptr::null_mut(),
                1,
                n as i32,
                std::ptr::null_mut(),
                1,
                n as i32,
                T::FFT_TYPE,
                batch as i32,
            )
        }
        .map_err(|e| format!("cufftPlanMany: {e:?}"))?;
        // SAFETY: a live plan and a live stream.
        unsafe { cufft::set_stream(h, stream.cu_stream() as _) }
            .map_err(|e| format!("cufftSetStream: {e:?}"))?;
        let pb = {
            let (p, _g) = nudt::cuda::cudarc::driver::DevicePtr::device_ptr(&b, stream);
            p
        };
        let cufft_fwd = |dir: i32| -> R<()> {
            // SAFETY: `b` holds the planned batch.
            unsafe { T::exec_fft(h, pb, dir) }.map_err(|e| format!("cufftExec: {e:?}"))?;
            Ok(())
        };
        // Accuracy: forward of the same input by both.
        gen.execute(&dx, &mut a, FftDirection::Forward)?;
        cufft_fwd(-1)?;
        let (ya, yb) = (stream.clone_dtoh(&a)?, stream.clone_dtoh(&b)?);
        let err_vs_cufft = rel_l2(&ya, &yb, 1.0);
        gen.execute_in_place(&mut a, FftDirection::Inverse)?;
        let back = stream.clone_dtoh(&a)?;
        let roundtrip = rel_l2(&back, &x, n as f64);
        // Speed: in place, alternating directions so values stay bounded.
        let reps = (1usize << 28).div_ceil(elems).clamp(3, 200);
        let mut flip = false;
        let gen_ms = time(stream, reps, || {
            flip = !flip;
            let d = if flip {
                FftDirection::Forward
            } else {
                FftDirection::Inverse
            };
            gen.execute_in_place(&mut a, d)
                .map_err(|e: CudaError| e.into())
        })?;
        let mut flip = false;
        let cufft_ms = time(stream, reps, || {
            flip = !flip;
            cufft_fwd(if flip { -1 } else { 1 })
        })?;
        // SAFETY: the plan is destroyed once, after its last use.
        let _ = unsafe { cufft::destroy(h) };
        let flops = 5.0 * n as f64 * (n as f64).log2() * batch as f64;
        Ok(Row {
            case: format!(
                "{}{}",
                shape
                    .iter()
                    .map(|s| s.to_string())
                    .collect::<Vec<_>>()
                    .join("×"),
                if shape.len() > 1 && shape.iter().all(|&s| s == shape[0]) {
                    format!(" ({}^{})", shape[0], shape.len())
                } else {
                    String::new()
                }
            ),
            prec: std::any::type_name::<T>(),
            batch,
            gen_ms,
            cufft_ms,
            gflops: flops / gen_ms * 1e-6,
            err_vs_cufft,
            roundtrip,
            launches: gen.module().plan.launches.len(),
        })
    }

    pub fn main() -> R<()> {
        let args: Vec<String> = std::env::args().collect();
        let quick = args.iter().any(|a| a == "--quick");
        let out = args
            .iter()
            .position(|a| a == "--out")
            .and_then(|i| args.get(i + 1).cloned());
        let ctx = open(0)?;
        let arch = detect_arch(&ctx)?;
        let stream = ctx.default_stream();
        let fill = if quick { 1 << 22 } else { 1 << 27 };
        let cubes: Vec<(Vec<usize>, usize)> = [16usize, 32, 64]
            .iter()
            .map(|&s| (vec![s; 3], fill / (s * s * s)))
            .collect();
        let grids: Vec<(Vec<usize>, usize)> = if quick {
            vec![(vec![2000, 2000], 1), (vec![200, 200, 200], 1)]
        } else {
            vec![
                (vec![2000, 2000], 1),
                (vec![4096, 4096], 1),
                (vec![200, 200, 200], 1),
                (vec![512, 512, 512], 1),
            ]
        };
        let only = args
            .iter()
            .position(|a| a == "--only")
            .and_then(|i| args.get(i + 1).cloned());
        let mut rows = Vec::new();
        for (shape, batch) in cubes.iter().chain(&grids) {
            let name = shape
                .iter()
                .map(|s| s.to_string())
                .collect::<Vec<_>>()
                .join("x");
            if only
                .as_ref()
                .is_some_and(|o| !o.split(',').any(|o| name == o))
            {
                continue;
            }
            for f64_ in [false, true] {
                let r = if f64_ {
                    case::<f64>(&stream, &arch, shape, *batch)?
                } else {
                    case::<f32>(&stream, &arch, shape, *batch)?
                };
                eprintln!(
                    "{} {} x{}: generated {:.4} ms, cuFFT {:.4} ms",
                    r.case, r.prec, r.batch, r.gen_ms, r.cufft_ms
                );
                rows.push(r);
            }
        }
        let mut s = format!(
            "GPU: {} ({}, {} SMs). Generated FFT vs cuFFT, in place, no transfers, CUDA events, median of 7.\n\n\
             | case | prec | batch | launches | generated ms | cuFFT ms | cuFFT / generated | generated GFlop/s | cuFFT GFlop/s | seed (TITAN X) | rel l2 vs cuFFT | round trip |\n\
             |---|---|---|---|---|---|---|---|---|---|---|---|\n",
            arch.name,
            arch.sm(),
            arch.sm_count
        );
        for r in &rows {
            let flops = r.gflops * r.gen_ms;
            s += &format!(
                "| {} | {} | {} | {} | {:.4} | {:.4} | {:.2}× | {:.0} | {:.0} | 486 | {:.1e} | {:.1e} |\n",
                r.case,
                r.prec,
                r.batch,
                r.launches,
                r.gen_ms,
                r.cufft_ms,
                r.cufft_ms / r.gen_ms,
                r.gflops,
                flops / r.cufft_ms,
                r.err_vs_cufft,
                r.roundtrip
            );
        }
        print!("{s}");
        if let Some(p) = out {
            std::fs::write(p, &s)?;
        }
        Ok(())
    }
}
