//! Every CUDA module the runtime can request compiles with NVRTC — on a machine without a
//! GPU. NVRTC is loaded at run time (cudarc's dynamic loading); where it is absent the test
//! prints that it SKIPPED, unless `NUDT_REQUIRE_NVRTC=1` (set by `.ci/run`, which installs the
//! pip wheel `nvidia-cuda-nvrtc==13.0.*`) makes its absence a failure.
//!
//! NVVM's PTX of the narrowest modules is a long run (`NUDT_LONG_TESTS=1`, CI); without it
//! NVRTC's front end checks them and the test says so on stderr.
//!
//! Run locally:
//! ```sh
//! python3 -m pip install --target .nvrtc 'nvidia-cuda-nvrtc==13.0.*'
//! LD_LIBRARY_PATH=$PWD/.nvrtc/nvidia/cu13/lib cargo test --release -p nudt-gen --test cuda_nvrtc
//! ```

mod long;
mod nvrtc;
use nudt_gen::gpu::{
    common_module, fnv1a64, gaussian_wide_module, spread_module, GpuArch, GpuSource, GpuSpreadSpec,
};
use nudt_gen::{KernelKind, KernelSpec, Precision, Upsampling};
use nvrtc::{check_syntax, compile_ptx, nvrtc_present};
use std::collections::{BTreeSet, HashSet};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;

fn compile(src: &GpuSource, arch: &GpuArch) -> Result<usize, String> {
    let text = compile_ptx(&src.name, &src.source, arch)?;
    for k in &src.kernels {
        if !text.contains(&format!(".entry {}(", k.name)) {
            return Err(format!(
                "{}: entry point {} missing from PTX",
                src.name, k.name
            ));
        }
    }
    Ok(text.len())
}

/// Every kernel a plan in `precision` can be given: each family and upsampling at each width
/// that `KernelSpec::for_tolerance` picks somewhere in the accepted tolerance range, from the
/// precision's floor to 0.5 (above which it clamps). The width is a step function of
/// log(tol) with steps of at least 0.45 decades (Gaussian, σ = 1.25), so a 0.01-decade
/// sweep meets every width.
fn requestable_kernels(precision: Precision) -> Vec<KernelSpec> {
    let mut v = Vec::new();
    for kind in [KernelKind::Pswf, KernelKind::Es, KernelKind::Gaussian] {
        for sigma in [Upsampling::TWO, Upsampling::FIVE_FOURTHS] {
            let (lo, hi) = (precision.min_tolerance().log10(), 0.5f64.log10());
            let steps = ((hi - lo) / 0.01).ceil() as usize;
            let mut widths = BTreeSet::new();
            for i in 0..=steps {
                let tol = 10f64
                    .powf(lo + i as f64 * 0.01)
                    .clamp(precision.min_tolerance(), 0.5);
                // Past the widest kernel the planner refuses the tolerance: nothing to compile.
                if let Ok(k) = KernelSpec::for_tolerance(kind, tol, sigma, precision) {
                    if widths.insert(k.width) {
                        v.push(k);
                    }
                }
            }
        }
    }
    v
}

/// The window widths `2⌈2πb⌉ + 1` of the Gaussian-gridding type 3 (nudt_runtime's
/// `type3_gaussian`, Capozzoli et al.'s eq. 6 at oversampling R = 3) at the ends of the
/// tolerance range (the precision's floor, and 0.5, above which the GPU plan clamps) and at
/// the tolerances the benchmarks and tests use. Mirrors `type3_gaussian::{shape_parameter,
/// half_width}`, which this crate cannot reach; the GPU suite's Gaussian tests print the
/// width each plan got.
fn gaussian_window_widths(precision: Precision) -> BTreeSet<usize> {
    let width = |eps: f64| {
        let r = 3.0;
        let alpha = 2.0 + 1.0 / (2.0 * std::f64::consts::PI).sqrt();
        let gamma = std::f64::consts::PI.powi(2) * (1.0 - 2.0 / (r * r));
        let mut b = 1.0f64;
        for _ in 0..100 {
            b = (4.0 * alpha * b / eps + 9.0 * alpha / eps).ln() / gamma;
        }
        2 * (2.0 * std::f64::consts::PI * b).ceil() as usize + 1
    };
    [precision.min_tolerance(), 1e-10, 1e-6, 0.5]
        .into_iter()
        .filter(|&t| t >= precision.min_tolerance())
        .map(width)
        .collect()
}

/// `src` with comments dropped and every finite floating literal (and the sign of one in an
/// operand position) replaced by `L`: two modules with the same skeleton differ only in the
/// values of well-formed constants, and so compile or fail alike. At one width those values,
/// the Horner coefficients, are most of what separates the kernel families and upsamplings
/// (a fit with more coefficients has more lines, and a skeleton of its own), which is what
/// lets the full set compile in minutes. A literal that is not a finite number (`inff`,
/// `NaN`) is left in place and keeps its module apart, so it is compiled.
fn skeleton(src: &str) -> String {
    let mut out = String::with_capacity(src.len());
    for line in src.lines() {
        let line = line.split("//").next().unwrap_or_default();
        let b = line.as_bytes();
        let mut i = 0;
        while i < b.len() {
            let in_ident = i > 0 && (b[i - 1].is_ascii_alphanumeric() || b[i - 1] == b'_');
            if !b[i].is_ascii_digit() || in_ident {
                out.push(b[i] as char);
                i += 1;
                continue;
            }
            let mut j = i;
            while j < b.len()
                && (b[j].is_ascii_alphanumeric()
                    || b[j] == b'.'
                    || (matches!(b[j], b'+' | b'-') && matches!(b[j - 1], b'e' | b'E')))
            {
                j += 1;
            }
            let token = &line[i..j];
            let number = token.strip_suffix('f').unwrap_or(token);
            let floating = number.contains(['.', 'e', 'E']);
            if floating && number.parse::<f64>().is_ok_and(f64::is_finite) {
                let head = out.trim_end();
                if let Some(before) = head.strip_suffix('-') {
                    if before.trim_end().ends_with(['(', ',', '=']) {
                        out.truncate(before.len());
                    }
                }
                out.push('L');
            } else {
                out.push_str(token);
            }
            i = j;
        }
        out.push('\n');
    }
    out
}

/// How far NVRTC takes a module: to PTX (front end, optimiser, code generation), or through
/// its front end only, a hundredth of the time on the widest 3-D modules. Every module gets
/// the front end, which is where the generated text can go wrong (names, types, overloads,
/// the architecture's intrinsics); a sample of each kind goes on to PTX, so that the back
/// end is seen to take what the front end accepts.
#[derive(Clone, Copy, PartialEq)]
enum Depth {
    Ptx,
    Syntax,
}

/// The compile jobs, one per distinct skeleton and architecture.
#[derive(Default)]
struct Jobs {
    jobs: Vec<(GpuSource, GpuArch, Depth)>,
    seen: HashSet<(String, u64)>,
    requested: usize,
}

impl Jobs {
    fn push(&mut self, src: GpuSource, arch: &GpuArch, depth: Depth) {
        self.requested += 1;
        if self
            .seen
            .insert((arch.sm(), fnv1a64(skeleton(&src.source).as_bytes())))
        {
            self.jobs.push((src, arch.clone(), depth));
        }
    }

    /// The spread modules of `kernels` in every dimension, with the bins of both grids a
    /// plan makes: interpolated from (type 2, type 3's inner grid) and spread onto (types 1
    /// and 3, `for_spreading` and `for_sparse_spreading`); to PTX at the widths `ptx`.
    fn spread_modules(
        &mut self,
        kernels: &[KernelSpec],
        precision: Precision,
        arch: &GpuArch,
        ptx: impl Fn(usize) -> bool,
    ) {
        for &k in kernels {
            let depth = if ptx(k.width) {
                Depth::Ptx
            } else {
                Depth::Syntax
            };
            for dim in 1..=3 {
                let spec = GpuSpreadSpec::new(dim, k, precision, arch).unwrap();
                let spreading = spec.clone().for_spreading();
                let sparse = spec.clone().for_sparse_spreading(arch.local_memory());
                for s in [spec, spreading, sparse] {
                    self.push(spread_module(&s).unwrap(), arch, depth);
                }
            }
        }
    }
}

/// Compiles `jobs` on all cores; returns the failures.
fn compile_all(jobs: Vec<(GpuSource, GpuArch, Depth)>) -> Vec<String> {
    let next = AtomicUsize::new(0);
    let failures = Mutex::new(Vec::new());
    let threads = std::thread::available_parallelism().map_or(2, |n| n.get());
    std::thread::scope(|s| {
        for _ in 0..threads {
            s.spawn(|| loop {
                let i = next.fetch_add(1, Ordering::Relaxed);
                let Some((src, arch, depth)) = jobs.get(i) else {
                    break;
                };
                let r = match depth {
                    Depth::Ptx => compile(src, arch).map(drop),
                    Depth::Syntax => check_syntax(&src.name, &src.source, arch),
                };
                if let Err(e) = r {
                    failures.lock().unwrap().push(e);
                }
            });
        }
    });
    failures.into_inner().unwrap()
}

#[test]
fn every_requestable_module_compiles_to_ptx() {
    if !nvrtc_present() {
        return;
    }
    let start = std::time::Instant::now();
    // NUDT_NVRTC_FULL=1: every module on every architecture, all of them to PTX.
    let full = std::env::var("NUDT_NVRTC_FULL").is_ok_and(|v| v == "1");
    // The long runs (CI) take the narrowest modules to PTX too; without them the front end
    // checks those, and NVVM compiles the default width's.
    let long = full
        || long::long_tests(
            "cuda_nvrtc: the narrowest modules to PTX (checked through NVRTC's front end here)",
        );
    let depth = |to_ptx: bool| {
        if full || to_ptx {
            Depth::Ptx
        } else {
            Depth::Syntax
        }
    };
    let mut jobs = Jobs::default();
    let (h100, turing, a100) = (GpuArch::h100(), GpuArch::turing(), GpuArch::a100());
    for p in [Precision::F32, Precision::F64] {
        let kernels = requestable_kernels(p);
        let at = |widths: &[usize]| -> Vec<KernelSpec> {
            let keep = |k: &&KernelSpec| full || widths.contains(&k.width);
            kernels.iter().filter(keep).copied().collect()
        };
        // The H100 (the GPU the benchmarks run on): everything a plan can ask for, to PTX
        // at the default (1e-6) width and, in the long runs, the narrowest (the widest 3-D
        // modules take NVVM 15 s each and differ from these only in their loops' bounds).
        let sample = |w: usize| full || w == 7 || (long && w == 2);
        jobs.push(common_module(p).unwrap(), &h100, Depth::Ptx);
        jobs.spread_modules(&kernels, p, &h100, sample);
        // Older GPUs take the f32 path without float2 atomics, and smaller shared memories
        // give other bins: Turing (the smallest) at the narrowest, the default and the
        // widest kernels, the A100 at the default (everything with NUDT_NVRTC_FULL=1),
        // through the front end, which is where another architecture's intrinsics and
        // overloads are resolved; their common modules to PTX.
        for (arch, widths) in [(&turing, &[2, 7, 16][..]), (&a100, &[7][..])] {
            jobs.push(common_module(p).unwrap(), arch, Depth::Ptx);
            jobs.spread_modules(&at(widths), p, arch, |_| full);
        }
        // The wide-Gaussian modules of the Gaussian-gridding type 3: the width sets only the
        // loop bounds, so the widths at the ends of the tolerance range and at the
        // benchmarks' tolerances cover the code (Turing, at the widest, the path without
        // float2 atomics; the source has nothing else that depends on the GPU); to PTX at
        // the narrowest.
        let widths = gaussian_window_widths(p);
        for dim in 1..=3 {
            let narrowest = *widths.first().unwrap();
            for &w in &widths {
                jobs.push(
                    gaussian_wide_module(dim, w, p).unwrap(),
                    &h100,
                    depth(long && w == narrowest),
                );
            }
            let widest = *widths.last().unwrap();
            jobs.push(
                gaussian_wide_module(dim, widest, p).unwrap(),
                &turing,
                depth(false),
            );
        }
    }
    let (requested, n) = (jobs.requested, jobs.jobs.len());
    let to_ptx = jobs.jobs.iter().filter(|j| j.2 == Depth::Ptx).count();
    let generated = start.elapsed().as_secs_f64();
    let failures = compile_all(jobs.jobs);
    eprintln!(
        "{requested} module requests, {n} distinct up to literals ({to_ptx} to PTX, the rest \
         through the front end): generated in {generated:.1} s, compiled by NVRTC in {:.1} s",
        start.elapsed().as_secs_f64() - generated
    );
    assert!(
        failures.is_empty(),
        "{} of {n} modules failed:\n{}",
        failures.len(),
        failures.join("\n\n")
    );
}

/// What the coverage above rests on: the sweep finds the widths the rules give, the
/// spreading bins are real variants, and the skeleton ignores literal values only.
#[test]
fn coverage_sweep_and_skeleton_are_sound() {
    let widths = |kind, sigma, p| -> Vec<usize> {
        requestable_kernels(p)
            .iter()
            .filter(|k| k.kind == kind && k.upsampling == sigma)
            .map(|k| k.width)
            .collect::<BTreeSet<_>>()
            .into_iter()
            .collect()
    };
    let two = Upsampling::TWO;
    assert_eq!(
        widths(KernelKind::Pswf, two, Precision::F64),
        (2..=16).collect::<Vec<_>>()
    );
    assert_eq!(
        widths(KernelKind::Es, two, Precision::F32),
        (2..=8).collect::<Vec<_>>()
    );
    // Gaussian widths are even: 2⌈m⌉.
    assert_eq!(
        widths(KernelKind::Gaussian, two, Precision::F64),
        (2..=16).step_by(2).collect::<Vec<_>>()
    );
    let g64 = gaussian_window_widths(Precision::F64);
    assert_eq!(g64.first(), Some(&9));
    assert_eq!(g64.last(), Some(&65));
    assert!(g64.contains(&47), "{g64:?}"); // 1e-10, the seed's tolerance
    assert_eq!(gaussian_window_widths(Precision::F32).last(), Some(&35));

    let h100 = GpuArch::h100();
    let k = KernelSpec::for_width(KernelKind::Pswf, 7, two).unwrap();
    let spec = GpuSpreadSpec::new(2, k, Precision::F32, &h100).unwrap();
    let spreading = spec.clone().for_spreading();
    let (a, b) = (
        spread_module(&spec).unwrap(),
        spread_module(&spreading).unwrap(),
    );
    assert_ne!(skeleton(&a.source), skeleton(&b.source));
    // Same width and precision, another family: the same skeleton when the fits have as
    // many coefficients, never when the bins differ.
    let es = KernelSpec::for_width(KernelKind::Es, 7, two).unwrap();
    let e = spread_module(&GpuSpreadSpec::new(2, es, Precision::F32, &h100).unwrap()).unwrap();
    assert_ne!(e.source, a.source);
    if es.horner().nc() == k.horner().nc() {
        assert_eq!(skeleton(&e.source), skeleton(&a.source));
    }
    assert_eq!(
        skeleton("x = fma(k0, t, -1.25e-3f); y = 2.0; // c"),
        "x = fma(k0, t, L); y = L; \n"
    );
    assert_eq!(skeleton("z = a - 1.5e0;"), "z = a - L;\n");
    assert_eq!(
        skeleton("#define W 7\nT v = inff;"),
        "#define W 7\nT v = inff;\n"
    );
    assert_ne!(skeleton("T v = 1e400;"), skeleton("T v = 1e4;"));
}

/// The gradient kernels (interpolation with the gradient, spreading of values and derivative
/// weights; GM-sort and SM) are in every spread module, so the sweep above compiles them
/// wherever it compiles a module (to PTX on the H100 at widths 2 and 7). Here, to PTX for the
/// H100 (sm_90) too: the widest 3-D modules in both precisions, with the bins of both grids
/// (interpolated from: type 2; spread onto: type 1), whose gradient kernels hold the most
/// weights a thread (six arrays of 16 where the plain kernels hold three).
#[test]
fn gradient_kernels_compile_for_sm_90() {
    use nudt_gen::gpu::names;
    let h100 = GpuArch::h100();
    let gradient = [
        names::INTERP_GRAD_GM,
        names::INTERP_GRAD_SM,
        names::SPREAD_GRAD_GM,
        names::SPREAD_GRAD_SM,
    ];
    let mut jobs = Vec::new();
    for p in [Precision::F32, Precision::F64] {
        for dim in 1..=3 {
            let k = KernelSpec::for_width(KernelKind::Pswf, 16, Upsampling::TWO).unwrap();
            let spec = GpuSpreadSpec::new(dim, k, p, &h100).unwrap();
            for s in [spec.clone(), spec.for_spreading()] {
                let src = spread_module(&s).unwrap();
                for name in gradient {
                    assert!(src.kernel(name).is_some(), "{name} in {}", src.name);
                }
                if dim == 3 {
                    jobs.push((src, h100.clone(), Depth::Ptx));
                }
            }
        }
    }
    if !nvrtc_present() {
        return;
    }
    let failures = compile_all(jobs);
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
}

#[test]
fn compile_errors_are_reported_not_panicked() {
    if !nvrtc_present() {
        return;
    }
    let bad = GpuSource {
        name: "broken".into(),
        source: "extern \"C\" __global__ void k() { undefined_thing(); }".into(),
        hash: 0,
        kernels: Vec::new(),
        spec: None,
    };
    let e = compile(&bad, &GpuArch::h100()).unwrap_err();
    assert!(e.contains("undefined_thing"), "{e}");
    // The front end alone finds it too.
    let e = check_syntax(&bad.name, &bad.source, &GpuArch::h100()).unwrap_err();
    assert!(e.contains("undefined_thing"), "{e}");
}
