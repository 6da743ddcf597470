//! What only the OpenCL backend has (PoCL on a CPU in CI): its on-disk program cache and its
//! plans on device buffers, against the direct sum. Accuracy, batches, adjoints, methods and
//! errors are every backend's suite (`backends.rs`).
//!
//! Without an OpenCL platform the tests say SKIPPED, unless `NUDT_REQUIRE_OPENCL=1` (set by
//! `.ci/run`, which installs PoCL) makes that a failure.
//! ```sh
//! cargo test --release -p nudt-runtime --features opencl --test suite opencl_nufft::
//! ```

use crate::common;
use common::Lcg;
use nudt_runtime::backend::Backend;
use nudt_runtime::direct;
use nudt_runtime::opencl::opencl3::memory::{Buffer, CL_MEM_READ_WRITE};
use nudt_runtime::opencl::opencl3::types::CL_BLOCKING;
use nudt_runtime::opencl::{ClDevice, ClOptions, ClPlan, OpenClError};
use nudt_runtime::{ModeOrder, NudtError, TransformType};
use num_complex::Complex64;

/// Whether the OpenCL backend runs here (a device with `cl_khr_fp64`, which plans need);
/// without, the tests say SKIPPED, or fail where `NUDT_REQUIRE_OPENCL=1`.
fn have_fp64() -> bool {
    match Backend::OpenCl.available() {
        Ok(()) => true,
        Err(e) => {
            if std::env::var("NUDT_REQUIRE_OPENCL").is_ok_and(|v| v == "1") {
                panic!("NUDT_REQUIRE_OPENCL=1 but {e}");
            }
            eprintln!("SKIPPED: {e}");
            false
        }
    }
}

/// Built programs are kept on disk as the device's binaries, keyed by module name, source hash
/// and device: a module missing from the memory cache loads from its binary, and a damaged
/// binary is built again from source and replaced.
#[test]
fn programs_are_cached_on_disk() {
    use nudt_gen::gpu::{common_module_in, GpuSource};
    use nudt_runtime::opencl::{cache_dir, load_program, ProgramOrigin};
    if !have_fp64() {
        return;
    }
    let Some(dir) = cache_dir() else {
        panic!("the OpenCL program cache is off (NUDT_OPENCL_CACHE=off): nothing to test");
    };
    let dev = ClDevice::first().unwrap();
    let common = common_module_in(nudt_gen::Precision::F64, dev.info.dialect()).unwrap();
    let tag = format!(
        "nudt_cache_test_{}_{}",
        std::process::id(),
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap()
            .as_nanos()
    );
    let named = |suffix: &str| GpuSource {
        name: format!("{tag}{suffix}"),
        ..common.clone()
    };
    // The binary a module left, found by its name.
    let file_of = |name: &str| {
        std::fs::read_dir(&dir)
            .unwrap()
            .map(|e| e.unwrap().path())
            .find(|p| {
                let f = p.file_name().unwrap().to_string_lossy().into_owned();
                f.starts_with(&format!("{name}-")) && f.ends_with(".bin")
            })
    };
    let a = named("_a");
    let (_, origin) = load_program(&dev, (&a).into()).unwrap();
    assert_eq!(origin, ProgramOrigin::Compiled);
    assert_eq!(
        load_program(&dev, (&a).into()).unwrap().1,
        ProgramOrigin::Memory
    );
    let bin = file_of(&a.name).expect("the built program's binary on disk");
    let bytes = std::fs::read(&bin).unwrap();
    assert!(!bytes.is_empty());
    // The same binary under a name this process has not built: read from disk.
    let rename = |name: &str| {
        let f = bin
            .file_name()
            .unwrap()
            .to_string_lossy()
            .replacen(&a.name, name, 1);
        dir.join(f)
    };
    let b = named("_b");
    std::fs::write(rename(&b.name), &bytes).unwrap();
    assert_eq!(
        load_program(&dev, (&b).into()).unwrap().1,
        ProgramOrigin::Disk
    );
    // A damaged binary: built again, and the file replaced by a good one.
    let c = named("_c");
    let damaged = rename(&c.name);
    std::fs::write(&damaged, b"not a program binary").unwrap();
    assert_eq!(
        load_program(&dev, (&c).into()).unwrap().1,
        ProgramOrigin::Compiled
    );
    assert_eq!(std::fs::read(&damaged).unwrap(), bytes);
    for name in [&a.name, &b.name, &c.name] {
        let _ = std::fs::remove_file(rename(name));
    }
}

/// Points, inputs and outputs in device buffers of the plan's context (one transform and a
/// stack of three, forward and adjoint; type 3, whose extents the device reduces), against
/// the direct sum; buffers shorter than the stack are refused with a length error, longer
/// ones accepted.
/// A device buffer holding `data` and `extra` values more.
pub(crate) fn buffer(dev: &ClDevice, data: &[f64], extra: usize) -> Buffer<f64> {
    // SAFETY: no host pointer; the write below fills the first `data.len()` values and blocks.
    let mut b = unsafe {
        Buffer::<f64>::create(
            dev.context(),
            CL_MEM_READ_WRITE,
            data.len() + extra,
            std::ptr::null_mut(),
        )
    }
    .unwrap();
    unsafe {
        dev.queue()
            .enqueue_write_buffer(&mut b, CL_BLOCKING, 0, data, &[])
    }
    .unwrap();
    b
}

/// The first `n` values of `b`.
pub(crate) fn fetch_reals(dev: &ClDevice, b: &Buffer<f64>, n: usize) -> Vec<f64> {
    let mut v = vec![0.0; n];
    // SAFETY: the callers' buffers hold at least `n` values; the read blocks.
    unsafe {
        dev.queue()
            .enqueue_read_buffer(b, CL_BLOCKING, 0, &mut v, &[])
    }
    .unwrap();
    v
}

/// The first `n` complex values of `b`.
fn fetch(dev: &ClDevice, b: &Buffer<f64>, n: usize) -> Vec<Complex64> {
    let v = fetch_reals(dev, b, 2 * n);
    v.chunks(2).map(|c| Complex64::new(c[0], c[1])).collect()
}

#[test]
fn device_buffers() {
    if !have_fp64() {
        return;
    }
    let dev = ClDevice::first().unwrap();
    let buffer = |data: &[f64], extra: usize| buffer(&dev, data, extra);
    let fetch = |b: &Buffer<f64>, n: usize| fetch(&dev, b, n);
    let flat = |v: &[Complex64]| -> Vec<f64> { v.iter().flat_map(|c| [c.re, c.im]).collect() };
    let (modes, m) = ([20usize, 13], 800);
    let nm = modes.iter().product::<usize>();
    let mut rng = Lcg(5);
    let x: Vec<Vec<f64>> = (0..2)
        .map(|_| (0..m).map(|_| 3.0 * rng.next()).collect())
        .collect();
    let xr: Vec<&[f64]> = x.iter().map(|v| &v[..]).collect();
    let xb: Vec<Buffer<f64>> = x.iter().map(|v| buffer(v, 0)).collect();
    let which: Vec<usize> = (0..nm).collect();
    for ntransf in [1, 3] {
        let c: Vec<Complex64> = (0..m * ntransf)
            .map(|_| Complex64::new(rng.next(), rng.next()))
            .collect();
        let mut p = ClPlan::<f64>::new(
            TransformType::Type1,
            &modes,
            1,
            ntransf,
            1e-10,
            ClOptions::default(),
        )
        .unwrap();
        p.set_points_device(&[&xb[0], &xb[1]]).unwrap();
        let cin = buffer(&flat(&c), 0);
        // The output buffer is longer than the stack.
        let mut fout = buffer(&vec![0.0; 2 * nm * ntransf], 6);
        p.execute_device(&cin, &mut fout).unwrap();
        let f = fetch(&fout, nm * ntransf);
        for t in 0..ntransf {
            let want = direct::type1(
                &xr,
                &c[t * m..(t + 1) * m],
                &modes,
                ModeOrder::Cmcl,
                1,
                &which,
            );
            let e = direct::rel_error(&f[t * nm..(t + 1) * nm], &want);
            assert!(e <= 1e-9, "{ntransf} stacked, transform {t}: {e:e}");
        }
        // The adjoint from the modes back to the points: a type 2 with the opposite sign.
        let mut cout = buffer(&vec![0.0; 2 * m * ntransf], 0);
        p.execute_adjoint_device(&fout, &mut cout).unwrap();
        let back = fetch(&cout, m * ntransf);
        let pts: Vec<usize> = (0..m).step_by(20).collect();
        for t in 0..ntransf {
            let want = direct::type2(
                &xr,
                &f[t * nm..(t + 1) * nm],
                &modes,
                ModeOrder::Cmcl,
                -1,
                &pts,
            );
            let got: Vec<Complex64> = pts.iter().map(|&j| back[t * m + j]).collect();
            let e = direct::rel_error(&got, &want);
            assert!(e <= 1e-9, "{ntransf} stacked adjoint, transform {t}: {e:e}");
        }
        // A stack one value short is a length error naming the input.
        let short = buffer(&flat(&c[1..]), 0);
        match p.execute_device(&short, &mut fout) {
            Err(OpenClError::Input(NudtError::Length { what, .. })) => {
                assert!(what.contains("strengths"), "{what}")
            }
            r => panic!("a short input buffer gave {r:?}"),
        }
    }
    // Type 3 from device buffers: the extents are reduced on the device.
    let sp: Vec<Vec<f64>> = (0..2)
        .map(|_| (0..150).map(|_| 5.0 + 9.0 * rng.next()).collect())
        .collect();
    let sb: Vec<Buffer<f64>> = sp.iter().map(|v| buffer(v, 0)).collect();
    let spr: Vec<&[f64]> = sp.iter().map(|v| &v[..]).collect();
    let c: Vec<Complex64> = (0..m)
        .map(|_| Complex64::new(rng.next(), rng.next()))
        .collect();
    let mut p3 = ClPlan::<f64>::new_type3(2, -1, 1, 1e-10, ClOptions::default()).unwrap();
    p3.set_points_type3_device(&[&xb[0], &xb[1]], &[&sb[0], &sb[1]])
        .unwrap();
    let cin = buffer(&flat(&c), 0);
    let mut fout = buffer(&[0.0; 300], 0);
    p3.execute_device(&cin, &mut fout).unwrap();
    let want = direct::type3(&xr, &c, &spr, -1, &(0..150).collect::<Vec<_>>());
    let e = direct::rel_error(&fetch(&fout, 150), &want);
    assert!(e <= 1e-9, "type 3 from device buffers: {e:e}");
    // Coordinates of unequal lengths.
    let short = buffer(&x[1][1..], 0);
    let mut p = ClPlan::<f64>::new(
        TransformType::Type2,
        &modes,
        1,
        1,
        1e-6,
        ClOptions::default(),
    )
    .unwrap();
    assert!(matches!(
        p.set_points_device(&[&xb[0], &short]),
        Err(OpenClError::Input(NudtError::Length { .. }))
    ));
}

/// Non-finite coordinates in device buffers (not read on the host) are found on the device
/// and reported as the host path reports them, naming the first bad point; the plan then
/// takes good points and matches the direct sum. Types 1 and 2 (the bin count) and type 3
/// (its bounding intervals), FINUFFT's and the Gaussian's.
#[test]
fn non_finite_device_points_are_typed_errors() {
    use nudt_runtime::Type3Method;
    if !have_fp64() {
        return;
    }
    let dev = ClDevice::first().unwrap();
    let not_finite = |r: Result<(), OpenClError>, what: &str, index: usize| match r {
        Err(OpenClError::Input(NudtError::NonFinite {
            what: w,
            index: i,
            value,
        })) => {
            assert_eq!((w, i), (what, index), "{value}");
            assert!(!value.is_finite());
        }
        other => panic!("expected NonFinite for {what}[{index}], got {other:?}"),
    };
    let mut rng = Lcg(17);
    let (modes, m) = ([16usize, 12], 500);
    let nm = modes.iter().product::<usize>();
    let x: Vec<Vec<f64>> = (0..2)
        .map(|_| (0..m).map(|_| 3.0 * rng.next()).collect())
        .collect();
    let xr: Vec<&[f64]> = x.iter().map(|v| &v[..]).collect();
    let xb: Vec<Buffer<f64>> = x.iter().map(|v| buffer(&dev, v, 0)).collect();
    let mut bad = x[1].clone();
    bad[m - 2] = f64::INFINITY;
    bad[321] = f64::NAN;
    let bad = buffer(&dev, &bad, 0);
    let c: Vec<Complex64> = (0..m)
        .map(|_| Complex64::new(rng.next(), rng.next()))
        .collect();
    let flat: Vec<f64> = c.iter().flat_map(|v| [v.re, v.im]).collect();
    let cin = buffer(&dev, &flat, 0);
    let o = ClOptions::default();
    let mut p = ClPlan::<f64>::new(TransformType::Type1, &modes, 1, 1, 1e-6, o.clone()).unwrap();
    not_finite(p.set_points_device(&[&xb[0], &bad]), "y", 321);
    let mut fout = buffer(&dev, &vec![0.0; 2 * nm], 0);
    assert!(matches!(
        p.execute_device(&cin, &mut fout),
        Err(OpenClError::Input(NudtError::PointsNotSet))
    ));
    p.set_points_device(&[&xb[0], &xb[1]]).unwrap();
    p.execute_device(&cin, &mut fout).unwrap();
    let which: Vec<usize> = (0..nm).collect();
    let want = direct::type1(&xr, &c, &modes, ModeOrder::Cmcl, 1, &which);
    let e = direct::rel_error(&fetch(&dev, &fout, nm), &want);
    assert!(e <= 1e-5, "type 1 after the bad points: {e:e}");
    let s: Vec<Vec<f64>> = (0..2)
        .map(|_| (0..100).map(|_| 8.0 * rng.next() - 4.0).collect())
        .collect();
    let sr: Vec<&[f64]> = s.iter().map(|v| &v[..]).collect();
    let sb: Vec<Buffer<f64>> = s.iter().map(|v| buffer(&dev, v, 0)).collect();
    let mut bs = s[0].clone();
    bs[9] = f64::NEG_INFINITY;
    let bs = buffer(&dev, &bs, 0);
    for method in [Type3Method::Finufft, Type3Method::GaussianCapozzoli] {
        let o = ClOptions {
            type3: method,
            ..ClOptions::default()
        };
        let mut p3 = ClPlan::<f64>::new_type3(2, 1, 1, 1e-6, o).unwrap();
        not_finite(
            p3.set_points_type3_device(&[&xb[0], &bad], &[&sb[0], &sb[1]]),
            "y",
            321,
        );
        not_finite(
            p3.set_points_type3_device(&[&xb[0], &xb[1]], &[&bs, &sb[1]]),
            "s",
            9,
        );
        p3.set_points_type3_device(&[&xb[0], &xb[1]], &[&sb[0], &sb[1]])
            .unwrap();
        let mut fout = buffer(&dev, &[0.0; 200], 0);
        p3.execute_device(&cin, &mut fout).unwrap();
        let want = direct::type3(&xr, &c, &sr, 1, &(0..100).collect::<Vec<_>>());
        let e = direct::rel_error(&fetch(&dev, &fout, 100), &want);
        assert!(e <= 1e-5, "{method:?} type 3 after the bad points: {e:e}");
    }
}

/// A point set per transform from device buffers holding the sets one after another (sizes
/// 300, 0 and 450): types 1 and 2 in 2-D, each transform against its own direct sum; a
/// non-finite coordinate named in its own set, after which the plan takes good sets; counts
/// that do not fit the buffers are typed errors.
#[test]
fn per_transform_sets_from_device_buffers() {
    if !have_fp64() {
        return;
    }
    let dev = ClDevice::first().unwrap();
    let mut rng = Lcg(29);
    let (modes, counts) = ([16usize, 11], [300usize, 0, 450]);
    let (nm, total, starts) = (16 * 11, 750, [0, 300, 300, 750]);
    let x: Vec<Vec<f64>> = (0..2)
        .map(|_| (0..total).map(|_| 6.0 * rng.next() - 3.0).collect())
        .collect();
    let xb: Vec<Buffer<f64>> = x.iter().map(|v| buffer(&dev, v, 0)).collect();
    let mut bad = x[0].clone();
    bad[310] = f64::INFINITY;
    let bad = buffer(&dev, &bad, 0);
    for ty in [TransformType::Type1, TransformType::Type2] {
        let mut p = ClPlan::<f64>::new(ty, &modes, 1, 3, 1e-9, ClOptions::default()).unwrap();
        match p.set_points_per_transform_device(&[&bad, &xb[1]], &counts) {
            Err(OpenClError::Input(NudtError::InTransform { index: 2, error })) => {
                assert!(matches!(
                    *error,
                    NudtError::NonFinite {
                        what: "x",
                        index: 10,
                        ..
                    }
                ))
            }
            r => panic!("an infinity in set 2 gave {r:?}"),
        }
        for wrong in [&counts[..2], &[300, 1, 450][..]] {
            let r = p.set_points_per_transform_device(&[&xb[0], &xb[1]], wrong);
            assert!(
                matches!(
                    r,
                    Err(OpenClError::Input(
                        NudtError::PointSets { .. } | NudtError::Length { .. }
                    ))
                ),
                "counts {wrong:?}: {r:?}"
            );
        }
        p.set_points_per_transform_device(&[&xb[0], &xb[1]], &counts)
            .unwrap();
        let (nin, nout) = match ty {
            TransformType::Type1 => (total, 3 * nm),
            _ => (3 * nm, total),
        };
        let input: Vec<Complex64> = (0..nin)
            .map(|_| Complex64::new(rng.next(), rng.next()))
            .collect();
        let flat: Vec<f64> = input.iter().flat_map(|v| [v.re, v.im]).collect();
        let mut out = buffer(&dev, &vec![0.0; 2 * nout], 0);
        p.execute_device(&buffer(&dev, &flat, 0), &mut out).unwrap();
        let got = fetch(&dev, &out, nout);
        for b in 0..3 {
            let (s, e) = (starts[b], starts[b + 1]);
            let set: Vec<&[f64]> = x.iter().map(|c| &c[s..e]).collect();
            let (got, want) = match ty {
                TransformType::Type1 => (
                    &got[b * nm..(b + 1) * nm],
                    direct::type1(
                        &set,
                        &input[s..e],
                        &modes,
                        ModeOrder::Cmcl,
                        1,
                        &(0..nm).collect::<Vec<_>>(),
                    ),
                ),
                _ => (
                    &got[s..e],
                    direct::type2(
                        &set,
                        &input[b * nm..(b + 1) * nm],
                        &modes,
                        ModeOrder::Cmcl,
                        1,
                        &(0..e - s).collect::<Vec<_>>(),
                    ),
                ),
            };
            // An empty set's modes are zeros, as its direct sum's.
            let err = match counts[b] {
                0 => got.iter().map(|v| v.norm()).fold(0.0, f64::max),
                _ => direct::rel_error(got, &want),
            };
            assert!(err < 1e-7, "{ty:?}, set {b}: {err:e}");
        }
    }
}

/// Type 3 with a pair of sets per transform from device buffers holding the sets one after
/// another (`set_points_type3_per_transform_device`), extents that differ between the
/// transforms, each against its direct sum; a non-finite target named in its own set; counts
/// that do not fit the buffers are typed errors.
#[test]
fn type3_sets_per_transform_from_device_buffers() {
    if !have_fp64() {
        return;
    }
    let dev = ClDevice::first().unwrap();
    let mut rng = Lcg(31);
    let (m, k) = ([120usize, 0, 70], [40usize, 55, 0]);
    let (ms, ks) = ([0usize, 120, 120, 190], [0usize, 40, 95, 95]);
    let reach = |b: usize, n: usize, scale: f64, rng: &mut Lcg| -> Vec<f64> {
        (0..n)
            .map(|_| scale * (1.0 + b as f64) * (2.0 * rng.next() - 1.0))
            .collect()
    };
    let coords = |at: &[usize; 4], scale: f64, rng: &mut Lcg| -> Vec<Vec<f64>> {
        (0..2)
            .map(|_| {
                (0..3)
                    .flat_map(|b| reach(b, at[b + 1] - at[b], scale, rng))
                    .collect()
            })
            .collect()
    };
    let (x, s) = (coords(&ms, 2.0, &mut rng), coords(&ks, 4.0, &mut rng));
    let up =
        |v: &[Vec<f64>]| -> Vec<Buffer<f64>> { v.iter().map(|c| buffer(&dev, c, 0)).collect() };
    let (xb, sb) = (up(&x), up(&s));
    let mut p = ClPlan::<f64>::new_type3(2, 1, 3, 1e-9, ClOptions::default()).unwrap();
    let mut bad = s[1].clone();
    bad[50] = f64::NAN;
    let bad = buffer(&dev, &bad, 0);
    match p.set_points_type3_per_transform_device(&[&xb[0], &xb[1]], &[&sb[0], &bad], (&m, &k)) {
        Err(OpenClError::Input(NudtError::InTransform { index: 1, error })) => assert!(
            matches!(
                *error,
                NudtError::NonFinite {
                    what: "t",
                    index: 10,
                    ..
                }
            ),
            "{error}"
        ),
        r => panic!("a NaN in target set 1 gave {r:?}"),
    }
    let wrong = p.set_points_type3_per_transform_device(
        &[&xb[0], &xb[1]],
        &[&sb[0], &sb[1]],
        (&m, &[40, 55, 1]),
    );
    assert!(
        matches!(wrong, Err(OpenClError::Input(NudtError::Length { .. }))),
        "{wrong:?}"
    );
    p.set_points_type3_per_transform_device(&[&xb[0], &xb[1]], &[&sb[0], &sb[1]], (&m, &k))
        .unwrap();
    let input: Vec<Complex64> = (0..190)
        .map(|_| Complex64::new(rng.next(), rng.next()))
        .collect();
    let flat: Vec<f64> = input.iter().flat_map(|v| [v.re, v.im]).collect();
    let mut out = buffer(&dev, &vec![0.0; 2 * 95], 0);
    p.execute_device(&buffer(&dev, &flat, 0), &mut out).unwrap();
    let got = fetch(&dev, &out, 95);
    for b in 0..3 {
        let src: Vec<&[f64]> = x.iter().map(|c| &c[ms[b]..ms[b + 1]]).collect();
        let tgt: Vec<&[f64]> = s.iter().map(|c| &c[ks[b]..ks[b + 1]]).collect();
        let all: Vec<usize> = (0..k[b]).collect();
        let want = direct::type3(&src, &input[ms[b]..ms[b + 1]], &tgt, 1, &all);
        let got = &got[ks[b]..ks[b + 1]];
        // A transform without sources gives zeros, as its direct sum.
        let err = match m[b] {
            0 => got.iter().map(|v| v.norm()).fold(0.0, f64::max),
            _ => direct::rel_error(got, &want),
        };
        assert!(err < 1e-7, "set {b}: {err:e}");
    }
}

/// The two-pass bin sort (by buckets of bins, then by bin), which plans take by themselves
/// only where the sorted indices outgrow the device's cache, forced on small problems: types
/// 1 and 2 in 1–3 D against the direct sum (type 3 sorts its two grids by the same code);
/// then over more bins than
/// the buckets (128³ cells in 4³ bins, 5·10⁴ points: buckets of 32 bins, and more bins in a
/// tile than the second pass's hash slots, whose entries place themselves).
#[test]
fn two_pass_sort_matches_direct_sum() {
    if !have_fp64() {
        return;
    }
    let two_pass = ClOptions {
        two_pass_sort: Some(true),
        ..ClOptions::default()
    };
    let mut rng = Lcg(11);
    let (m, tol) = (700, 1e-5);
    for modes in [vec![40usize], vec![24, 18], vec![10, 12, 9]] {
        let dim = modes.len();
        let nm: usize = modes.iter().product();
        let which: Vec<usize> = (0..nm).collect();
        let (x, c) = points(&mut rng, dim, m);
        let xr: Vec<&[f64]> = x.iter().map(|v| &v[..]).collect();
        let f = points(&mut rng, 0, nm).1;
        let mut p1 =
            ClPlan::<f64>::new(TransformType::Type1, &modes, 1, 1, tol, two_pass.clone()).unwrap();
        p1.set_points(&xr).unwrap();
        let mut g1 = vec![Complex64::default(); nm];
        p1.execute(&c, &mut g1).unwrap();
        let e1 = direct::type1(&xr, &c, &modes, ModeOrder::Cmcl, 1, &which);
        let err = direct::rel_error(&g1, &e1);
        assert!(err < 10.0 * tol, "{dim}-D type 1: {err:.2e}");
        let mut p2 =
            ClPlan::<f64>::new(TransformType::Type2, &modes, -1, 1, tol, two_pass.clone()).unwrap();
        p2.set_points(&xr).unwrap();
        let mut g2 = vec![Complex64::default(); m];
        p2.execute(&f, &mut g2).unwrap();
        let e2 = direct::type2(
            &xr,
            &f,
            &modes,
            ModeOrder::Cmcl,
            -1,
            &(0..m).collect::<Vec<_>>(),
        );
        let err = direct::rel_error(&g2, &e2);
        assert!(err < 10.0 * tol, "{dim}-D type 2: {err:.2e}");
    }
    let modes = [64usize, 64, 64];
    let m = 50_000;
    let (x, c) = points(&mut rng, 3, m);
    let xr: Vec<&[f64]> = x.iter().map(|v| &v[..]).collect();
    let o = ClOptions {
        bins: Some([4, 4, 4]),
        ..two_pass
    };
    let mut p = ClPlan::<f64>::new(TransformType::Type1, &modes, 1, 1, 1e-6, o).unwrap();
    p.set_points(&xr).unwrap();
    let nm: usize = modes.iter().product();
    let mut got = vec![Complex64::default(); nm];
    p.execute(&c, &mut got).unwrap();
    let which: Vec<usize> = (0..nm).step_by(1311).collect();
    let exact = direct::type1(&xr, &c, &modes, ModeOrder::Cmcl, 1, &which);
    let got: Vec<Complex64> = which.iter().map(|&i| got[i]).collect();
    let err = direct::rel_error(&got, &exact);
    assert!(err < 1e-5, "3-D two-pass sort over many bins: {err:.2e}");
}

/// `m` random points in `dim` dimensions (coordinates within ±3.2) and `m` complex values.
fn points(rng: &mut Lcg, dim: usize, m: usize) -> (Vec<Vec<f64>>, Vec<Complex64>) {
    let x = (0..dim)
        .map(|_| (0..m).map(|_| 3.2 * rng.next()).collect())
        .collect();
    let c = (0..m)
        .map(|_| Complex64::new(rng.next(), rng.next()))
        .collect();
    (x, c)
}
