//! The FFT planner's output, checked as data (no device): every launch list reads the input
//! first, ends in the output, never writes the input, never has a global pass read and write
//! one buffer (also when input = output), fits the device's limits, and covers its work; the
//! kernel choices the design promises (one fused launch for 16³, strided tiles of neighbouring
//! lines, global passes only where local memory is too small); typed errors for bad requests.

use nudt_gen::fft::{fft_module, plan, Buffer, FftDevice, FftSpec};
use nudt_gen::gpu::GpuArch;
use nudt_gen::{GenError, Precision};

fn devices() -> Vec<FftDevice> {
    vec![
        FftDevice::cuda(&GpuArch::h100()),
        FftDevice::cuda(&GpuArch::turing()),
        FftDevice::opencl(256, 32 << 10, true),
        FftDevice::opencl(4096, 512 << 10, true),
        FftDevice::opencl(64, 2 << 10, false),
    ]
}

fn shapes() -> Vec<(Vec<usize>, usize)> {
    let mut v: Vec<(Vec<usize>, usize)> = (1..=300).map(|n| (vec![n], 3)).collect();
    v.extend([
        (vec![4096], 1),
        (vec![4093], 2),
        (vec![1517], 1),
        (vec![65536], 1),
        (vec![16, 16, 16], 64),
        (vec![32, 32, 32], 8),
        (vec![64, 64, 64], 4),
        (vec![2000, 2000], 1),
        (vec![4096, 4096], 1),
        (vec![200, 200, 200], 1),
        (vec![512, 512, 512], 1),
        (vec![1, 1, 1], 5),
        (vec![7, 1, 9], 2),
        (vec![3, 100003], 1),
    ]);
    v
}

#[test]
fn launch_lists_are_consistent() {
    for dev in devices() {
        for (shape, batch) in shapes() {
            for precision in [Precision::F32, Precision::F64] {
                let spec = FftSpec::new(&shape, batch, precision);
                let p = match plan::plan(&spec, &dev) {
                    Ok(p) => p,
                    Err(GenError::Fp64Unsupported) => {
                        assert_eq!(precision, Precision::F64);
                        continue;
                    }
                    Err(e) => panic!("{shape:?} x {batch} {precision:?} on {dev:?}: {e}"),
                };
                let what = format!("{shape:?} x {batch} {precision:?} on {dev:?}");
                let first = &p.launches[0];
                assert_eq!(first.src, Buffer::Input, "{what}");
                assert_eq!(p.launches.last().unwrap().dst, Buffer::Output, "{what}");
                let mut transformed = vec![0usize; shape.len()];
                for (i, l) in p.launches.iter().enumerate() {
                    let k = &p.kernels[l.kernel];
                    assert_ne!(l.dst, Buffer::Input, "{what}: launch {i} writes the input");
                    if i > 0 {
                        assert_eq!(l.src, p.launches[i - 1].dst, "{what}: launch {i}");
                    }
                    assert!(l.threads >= 1 && l.threads <= dev.max_threads, "{what}");
                    assert!(l.local_bytes <= dev.local_bytes, "{what}: launch {i}");
                    match k.kind {
                        "pass" => {
                            // In place the input is the output: a pass must not read it.
                            assert!(
                                l.src != l.dst
                                    && !(l.src == Buffer::Input && l.dst == Buffer::Output),
                                "{what}: pass {i} reads and writes one buffer"
                            );
                            assert!(l.grid * l.threads as u64 >= k.count, "{what}");
                        }
                        "block" => {
                            let t = k.tile.as_ref().unwrap();
                            assert_eq!(l.grid * t.elems as u64, p.elems, "{what}");
                            for pass in &k.passes {
                                assert!(pass.iters * l.threads as usize >= pass.count, "{what}");
                            }
                        }
                        _ => {}
                    }
                    for &a in &k.axes {
                        transformed[a] += 1;
                    }
                }
                // Block kernels name each axis once; pass kernels once per radix.
                for (a, &n) in shape.iter().enumerate() {
                    let passes = p
                        .kernels
                        .iter()
                        .filter(|k| k.kind == "pass" && k.axes == [a])
                        .count();
                    let expect = if n == 1 {
                        0
                    } else if passes > 0 {
                        plan::factor(n).len()
                    } else {
                        1
                    };
                    assert_eq!(transformed[a], expect, "{what}: axis {a}");
                }
                let s = p
                    .launches
                    .iter()
                    .any(|l| l.src == Buffer::Scratch || l.dst == Buffer::Scratch);
                assert_eq!(p.scratch_elems, if s { p.elems } else { 0 }, "{what}");
            }
        }
    }
}

#[test]
fn kernel_choices() {
    let h100 = FftDevice::cuda(&GpuArch::h100());
    let kinds = |shape: &[usize], batch, prec| {
        let p = plan::plan(&FftSpec::new(shape, batch, prec), &h100).unwrap();
        p.launches
            .iter()
            .map(|l| p.kernels[l.kernel].kind)
            .collect::<Vec<_>>()
    };
    // Keskin's scheme: a whole 16³ volume (and 64² slabs of 64³) in one block.
    assert_eq!(kinds(&[16, 16, 16], 64, Precision::F64), ["block"]);
    assert_eq!(kinds(&[64, 64, 64], 4, Precision::F32), ["block", "block"]);
    assert_eq!(kinds(&[2000, 2000], 1, Precision::F64), ["block", "block"]);
    assert_eq!(
        kinds(&[512, 512, 512], 1, Precision::F32),
        ["block", "block", "block"]
    );
    // Too long for shared memory: Bainville's global passes, 65536 = 16⁴.
    assert_eq!(kinds(&[1 << 16], 1, Precision::F64), ["pass"; 4]);
    // A strided axis takes neighbouring lines, so a warp's loads coalesce.
    let p = plan::plan(&FftSpec::new(&[200, 200, 200], 1, Precision::F32), &h100).unwrap();
    for l in &p.launches[1..] {
        let t = p.kernels[l.kernel].tile.as_ref().unwrap();
        assert!(!t.contiguous && t.lpb >= 8, "{t:?}");
    }
    // A long strided axis drops lines for occupancy (64 KB tiles), not below one sector.
    let strided = |shape: &[usize], prec| {
        let p = plan::plan(&FftSpec::new(shape, 1, prec), &h100).unwrap();
        p.kernels[p.launches.last().unwrap().kernel]
            .tile
            .clone()
            .unwrap()
            .lpb
    };
    assert_eq!(strided(&[2000, 2000], Precision::F32), 4);
    assert_eq!(strided(&[2000, 2000], Precision::F64), 2);
    assert_eq!(strided(&[4096, 4096], Precision::F32), 4);
    assert_eq!(strided(&[512, 512, 512], Precision::F32), 16);
}

#[test]
fn bad_requests_are_typed_errors() {
    let dev = FftDevice::cuda(&GpuArch::h100());
    let err = |shape: &[usize], batch| {
        fft_module(&FftSpec::new(shape, batch, Precision::F32), &dev).unwrap_err()
    };
    assert_eq!(err(&[0], 1), GenError::FftSize { axis: 0, size: 0 });
    assert_eq!(err(&[4, 0], 1), GenError::FftSize { axis: 1, size: 0 });
    assert_eq!(err(&[], 1), GenError::FftRank(0));
    assert_eq!(err(&[2, 2, 2, 2], 1), GenError::FftRank(4));
    assert_eq!(err(&[8], 0), GenError::FftBatchZero);
    assert!(matches!(
        err(&[1 << 20, 1 << 20], usize::MAX / 4),
        GenError::FftOverflow { .. }
    ));
    assert!(matches!(err(&[16], 1usize << 40), GenError::FftGrid { .. }));
    let no_fp64 = FftDevice::opencl(256, 32 << 10, false);
    assert_eq!(
        fft_module(&FftSpec::new(&[8], 1, Precision::F64), &no_fp64).unwrap_err(),
        GenError::Fp64Unsupported
    );
    let no_threads = FftDevice {
        max_threads: 0,
        ..dev
    };
    assert!(matches!(
        fft_module(&FftSpec::new(&[8], 1, Precision::F32), &no_threads).unwrap_err(),
        GenError::FftDevice(_)
    ));
}

#[test]
fn description_is_json_with_both_directions() {
    let m = fft_module(
        &FftSpec::new(&[32, 32, 32], 2, Precision::F32),
        &FftDevice::cuda(&GpuArch::h100()),
    )
    .unwrap();
    let j = m.describe_json();
    for key in [
        "\"forward\"",
        "\"inverse\"",
        "\"grid\"",
        "\"block\"",
        "\"local_bytes\"",
        "\"src\"",
        "\"dst\"",
        "\"scratch_elements\"",
    ] {
        assert!(j.contains(key), "{key} missing:\n{j}");
    }
    for l in &m.plan.launches {
        for dir in [
            nudt_gen::fft::FftDirection::Forward,
            nudt_gen::fft::FftDirection::Inverse,
        ] {
            assert!(
                m.source.contains(&format!(" {}(", m.entry(l, dir))),
                "{}",
                m.entry(l, dir)
            );
        }
    }
    // OpenCL source never mentions CUDA spellings and vice versa: the dialect layer holds them.
    let cl = fft_module(
        &FftSpec::new(&[32, 32, 32], 2, Precision::F32),
        &FftDevice::opencl(256, 32 << 10, false),
    )
    .unwrap();
    assert!(!cl.source.contains("__syncthreads") && !cl.source.contains("threadIdx"));
    assert!(!m.source.contains("barrier(") && !m.source.contains("get_local_id"));
}
