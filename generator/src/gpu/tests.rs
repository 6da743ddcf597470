//! The GPU generator's unit tests: bins, methods, sources and their launch descriptions.

use super::*;
use crate::error::GenError;
use crate::kernel::KernelSpec;
use crate::params::{KernelKind, Precision, Upsampling};

fn es(w: usize) -> KernelSpec {
    KernelSpec::for_width(KernelKind::Es, w, Upsampling::TWO).unwrap()
}

#[test]
fn bins_fit_the_budget_and_favour_cubes() {
    let arch = GpuArch::h100();
    for dim in 1..=3 {
        for w in 2..=16 {
            for p in [Precision::F32, Precision::F64] {
                let s = GpuSpreadSpec::new(dim, es(w), p, &arch).unwrap();
                // Wide 3D f64 kernels overflow the budget even with one-point bins.
                assert!(
                    s.smem_bytes() <= arch.bin_budget() || s.bins == [1, 1, 1],
                    "{s:?}"
                );
                assert!(s.smem_bytes() <= arch.shared_mem_per_block_optin, "{s:?}");
                assert!(s.bins[..dim].iter().all(|&b| b >= 1));
            }
        }
    }
    let s = GpuSpreadSpec::new(2, es(7), Precision::F64, &arch).unwrap();
    assert!(s.bins[0] >= 32 && s.bins[1] >= 32, "{:?}", s.bins);
    assert!(s.bin_efficiency() > 0.7);
    let s = GpuSpreadSpec::new(1, es(7), Precision::F32, &arch).unwrap();
    assert_eq!(s.bins[0], 4096);
}

#[test]
fn spreading_bins_are_small_and_fit() {
    let arch = GpuArch::h100();
    for dim in 1..=3 {
        for w in 2..=16 {
            for p in [Precision::F32, Precision::F64] {
                let base = GpuSpreadSpec::new(dim, es(w), p, &arch).unwrap();
                let roomy = arch.shared_mem_per_block_optin / 2;
                for s in [
                    base.clone().for_spreading(),
                    base.clone().for_sparse_spreading(arch.local_memory()),
                ] {
                    assert!(s == base || s.od_smem_bytes() <= roomy, "{s:?}");
                    assert!(s.od_threads() <= 1024, "{s:?}");
                    assert!(s.bins[..dim]
                        .iter()
                        .all(|&b| b >= 1 && b <= base.bins[0].max(32)));
                    assert!(spread_module(&s).is_ok(), "{s:?}");
                }
            }
        }
    }
    let s = GpuSpreadSpec::new(2, es(7), Precision::F64, &arch).unwrap();
    assert_eq!(s.clone().for_spreading().bins, [26, 2, 1]);
    assert_eq!(s.clone().for_spreading().od_threads(), 32);
    let sparse = s.for_sparse_spreading(arch.local_memory());
    assert_eq!((sparse.bins, sparse.od_box), ([16, 16, 1], OdBox::Shared));
    let s = GpuSpreadSpec::new(3, es(6), Precision::F32, &arch).unwrap();
    assert_eq!(s.for_spreading().bins, [4, 4, 4]);
    let s = GpuSpreadSpec::new(3, es(10), Precision::F64, &arch).unwrap();
    assert_eq!(
        s.clone().for_sparse_spreading(arch.local_memory()),
        s.for_spreading()
    );
    let s = GpuSpreadSpec::new(3, es(10), Precision::F64, &arch).unwrap();
    assert_eq!(s.for_spreading().bins, [4, 4, 8]);
    let s = GpuSpreadSpec::new(1, es(7), Precision::F32, &arch).unwrap();
    assert_eq!(s.for_spreading().bins[0], SPREAD_BIN_1D);
    // A box the module's dimension does not have is a typed error.
    let mut s = GpuSpreadSpec::new(3, es(7), Precision::F64, &arch).unwrap();
    s.od_box = OdBox::Shared;
    assert!(spread_module(&s).is_err());
}

/// OpenCL C modules hold only the entry points they list (bin sort in one or two passes,
/// every spreading and interpolation method, corrections, type 3 phases), none of CUDA's syntax, and need
/// doubles; the subproblem kernels end in their `__local` parameter.
#[test]
fn opencl_modules_render_without_cuda_syntax() {
    let arch = GpuArch::h100();
    let cl = Dialect::OpenCl {
        fp64: true,
        ptx: false,
    };
    for dim in 1..=3 {
        let s = GpuSpreadSpec::new(dim, es(7), Precision::F32, &arch).unwrap();
        let m = spread_module_in(&s, cl).unwrap();
        let mut names: Vec<&str> = m.kernels.iter().map(|k| k.name).collect();
        names.sort();
        assert_eq!(
            names,
            [
                names::BIN_BUCKET,
                names::BIN_COUNT,
                names::BIN_PLACE,
                names::BIN_SCATTER,
                names::INTERP_GM,
                names::INTERP_GRAD_GM,
                names::INTERP_GRAD_SM,
                names::INTERP_SM,
                names::SPREAD_GM,
                names::SPREAD_GRAD_GM,
                names::SPREAD_GRAD_SM,
                names::SPREAD_OD,
                names::SPREAD_SM,
            ]
        );
        let subproblems = [
            names::SPREAD_SM,
            names::SPREAD_OD,
            names::INTERP_SM,
            names::INTERP_GRAD_SM,
            names::SPREAD_GRAD_SM,
        ];
        for k in subproblems {
            let k = m.kernel(k).unwrap();
            assert_eq!(k.decl.params.len(), 20, "{:?}", k.decl.params);
            assert!(k.dynamic_smem > 0);
        }
        assert_eq!(
            m.source.matches("DYNAMIC_LOCAL_PARAM(smem_raw))").count(),
            subproblems.len()
        );
        let c = common_module_in(Precision::F64, cl).unwrap();
        // OpenCL C 1.2 has no warp shuffles: its scan and min/max reduce through local
        // memory, in groups every device takes.
        let scan = c.kernel(names::BIN_SCAN_TILES).unwrap();
        assert_eq!(scan.block_threads, ELEMENT_THREADS);
        assert_eq!(
            c.kernel(names::BIN_SCAN_TOTALS).unwrap().decl.params.len(),
            6
        );
        assert_eq!(c.kernel(names::MINMAX).unwrap().decl.params.len(), 4);
        for src in [&m, &c] {
            for k in &src.kernels {
                assert_eq!(src.source.matches(&format!(" {}(", k.name)).count(), 1);
                assert!(!k.decl.params.is_empty(), "{}", k.name);
            }
            for cuda in [
                "__global__",
                "__shared__",
                "__syncthreads",
                "blockIdx",
                "_sync(",
            ] {
                assert!(!src.source.contains(cuda), "{cuda} in {}", src.name);
            }
        }
        // NVIDIA's compiler: the native reductions in place of compare-and-swap loops.
        let nv = Dialect::OpenCl {
            fp64: true,
            ptx: true,
        };
        for p in [Precision::F32, Precision::F64] {
            let s = GpuSpreadSpec::new(dim, es(7), p, &arch).unwrap();
            let t = if p == Precision::F32 { "f32" } else { "f64" };
            let (cas, ptx) = (
                spread_module_in(&s, cl).unwrap(),
                spread_module_in(&s, nv).unwrap(),
            );
            // Real additions by compare-and-swap loops on the bits, or PTX's reductions (the
            // sort's integer compare-and-swap is in both).
            assert!(cas.source.contains("(seen) + v") && !cas.source.contains("asm"));
            assert!(!ptx.source.contains("(seen) + v"));
            for space in ["global", "shared"] {
                assert!(ptx
                    .source
                    .contains(&format!("red.{space}.add.{t} [%0], %1;")));
            }
            assert_ne!(cas.name, ptx.name);
        }
        assert!(matches!(
            spread_module_in(
                &s,
                Dialect::OpenCl {
                    fp64: false,
                    ptx: false
                }
            ),
            Err(GenError::Fp64Unsupported)
        ));
    }
}

/// Methods narrow to what a device's blocks hold, and asking for one they cannot hold is
/// refused with the bytes it needs.
#[test]
fn methods_fit_the_device() {
    let local = GpuArch::h100().local_memory();
    let s = GpuSpreadSpec::within(3, es(7), Precision::F64, local)
        .unwrap()
        .for_role(GridRole::Spread, local);
    let all = s.fit(local.per_block, 1024);
    assert!(all.sm && all.od);
    let dense = (1 << 24, 1000);
    let od = [Some(GpuMethod::OutputDriven), None];
    assert_eq!(
        s.methods(dense.0, dense.1, [None; 2], all).0,
        GpuMethod::OutputDriven
    );
    assert!(s.refuse(od, all, local.per_block).is_none());
    // Room for the box but not for the staged batch: SM instead, and a forced
    // output-driven refused.
    assert!(s.smem_bytes() < s.od_smem_bytes());
    let few = s.fit(s.smem_bytes(), 1024);
    assert!(few.sm && !few.od);
    assert_eq!(s.methods(dense.0, dense.1, od, few).0, GpuMethod::Sm);
    assert!(s.refuse(od, few, s.smem_bytes()).is_some());
    // A 48 KiB device: the width-11 type 3 grid keeps CUDA's 4×4×8 bins, whose SM box
    // (56 KiB) does not fit but the output-driven kernel's batch does; it spreads
    // output-driven, and SM is refused.
    let small = LocalMemory {
        budget: 48 << 10,
        per_block: 48 << 10,
    };
    let w11 = GpuSpreadSpec::within(3, es(11), Precision::F64, small).unwrap();
    let cut = w11.clone().for_role(GridRole::SpreadSparse, small);
    assert_eq!(cut, w11.for_role(GridRole::SpreadSparse, local));
    let fit = cut.fit(small.per_block, 1024);
    assert!(fit.od && !fit.sm, "{:?}", cut.bins);
    // A 2D grid shaped for interpolation (a type 2 plan's, spread onto by its adjoint)
    // has pencils too long for registers: SM spreads there; shaped for spreading, the
    // pencils are short and output-driven fits.
    for mem in [small, local] {
        let s2 = GpuSpreadSpec::within(2, es(6), Precision::F32, mem).unwrap();
        let interp = s2.clone().for_role(GridRole::Interpolated, mem);
        let f = interp.fit(mem.per_block, 1024);
        assert!(!f.od && f.sm, "{:?}", interp.bins);
        assert_eq!(
            interp.methods(dense.0, dense.1, [None; 2], f).0,
            GpuMethod::Sm
        );
        let spread = s2.for_role(GridRole::Spread, mem);
        assert!(spread.fit(mem.per_block, 1024).od, "{:?}", spread.bins);
    }
    let dense = (1 << 24, 4096);
    assert_eq!(
        cut.methods(dense.0, dense.1, [None; 2], fit),
        (GpuMethod::OutputDriven, GpuMethod::GmSort)
    );
    assert!(cut.refuse(od, fit, small.per_block).is_none());
    let sm = [Some(GpuMethod::Sm), None];
    assert!(cut.refuse(sm, fit, small.per_block).is_some());
    // Less room: the pencils' side (the only one the batch depends on) halves.
    let tight = LocalMemory {
        budget: 46 << 10,
        per_block: 46 << 10,
    };
    let w16 = GpuSpreadSpec::within(3, es(16), Precision::F64, tight).unwrap();
    assert_eq!(
        w16.clone().for_role(GridRole::Spread, local).bins,
        [4, 4, 8]
    );
    let cut = w16.for_role(GridRole::Spread, tight);
    assert_eq!(cut.bins, [4, 4, 4]);
    assert!(cut.fit(tight.per_block, 1024).od);
    // No room for the box: GM-sort only.
    let none = s.fit(s.smem_bytes() - 1, 1024);
    assert!(!none.sm);
    let want = [Some(GpuMethod::Sm), Some(GpuMethod::Sm)];
    assert_eq!(
        s.methods(dense.0, dense.1, want, none),
        (GpuMethod::GmSort, GpuMethod::GmSort)
    );
    let why = s.refuse(want, none, s.smem_bytes() - 1).unwrap();
    assert!(why.contains(&s.smem_bytes().to_string()), "{why}");
}

/// The gradient passes run their transform's methods, but for output-driven spreading
/// (no gradient kernel: SM) and SM where the gradient SM kernels do not fit (GM-sort).
#[test]
fn gradient_passes_take_the_transforms_methods() {
    use GpuMethod::*;
    let fits = SubproblemFit { sm: true, od: true };
    let no_sm = SubproblemFit {
        sm: false,
        od: true,
    };
    assert_eq!(gradient_methods((OutputDriven, Sm), fits), (GmSort, Sm));
    assert_eq!(gradient_methods((GmSort, GmSort), fits), (GmSort, GmSort));
    assert_eq!(gradient_methods((Sm, GmSort), fits), (Sm, GmSort));
    assert_eq!(
        gradient_methods((OutputDriven, Sm), no_sm),
        (GmSort, GmSort)
    );
}

#[test]
fn modules_render_with_every_entry_point() {
    let arch = GpuArch::h100();
    let s = GpuSpreadSpec::new(3, es(7), Precision::F32, &arch).unwrap();
    let m = spread_module(&s).unwrap();
    for k in &m.kernels {
        assert!(
            m.source.contains(&format!("void {}(", k.name))
                || m.source.contains(&format!("ENTRY {}(", k.name))
                || m.source.contains(&format!(") {}(", k.name)),
            "{}",
            k.name
        );
    }
    assert!(m.source.contains("#define W 7"));
    assert!(m.source.contains("fma(k6, t, "));
    assert!(!m.source.contains("{{"));
    let c = common_module(Precision::F64).unwrap();
    for k in &c.kernels {
        assert!(m.hash != c.hash);
        assert!(c.source.contains(k.name), "{}", k.name);
    }
    assert!(m.describe_json().contains("\"smem_bytes\""));
    let gm = m.kernel(names::SPREAD_GM).unwrap();
    assert_eq!(gm.decl.params.len(), 16, "{:?}", gm.decl.params);
    assert_eq!(gm.decl.params[0].ty.arg(), ArgKind::U32);
    assert_eq!(gm.decl.params[1].ty.arg(), ArgKind::Buffer);
    assert_eq!(gm.decl.params[1].name, "idx");
    assert_eq!(gm.decl.params[7].ty.arg(), ArgKind::I32);
    assert_eq!(gm.decl.params[12].ty.arg(), ArgKind::U64);
    assert_eq!(gm.decl.params[12].name, "gstride");
    // The gradient kernels take their methods' plain kernels' arguments and launches.
    for (grad, plain) in [
        (names::INTERP_GRAD_GM, names::INTERP_GM),
        (names::INTERP_GRAD_SM, names::INTERP_SM),
        (names::SPREAD_GRAD_GM, names::SPREAD_GM),
        (names::SPREAD_GRAD_SM, names::SPREAD_SM),
    ] {
        let (g, p) = (m.kernel(grad).unwrap(), m.kernel(plain).unwrap());
        let classes = |k: &GpuKernel| k.decl.args().collect::<Vec<_>>();
        assert_eq!(classes(g), classes(p), "{grad}");
        assert_eq!(
            (g.block_threads, g.dynamic_smem),
            (p.block_threads, p.dynamic_smem)
        );
    }
    assert!(m.source.contains("INLINE void dweights(T t, T* k)"));
    let t3 = c.kernel(names::T3_TARGETS).unwrap();
    assert_eq!(t3.decl.args().filter(|&a| a == ArgKind::F64).count(), 11);
}

#[test]
fn wide_gaussian_modules_render_with_their_signatures() {
    for dim in 1..=3 {
        let m = gaussian_wide_module(dim, 45, Precision::F64).unwrap();
        assert!(m.source.contains("#define HALF 22"));
        assert!(!m.source.contains("{{"));
        for k in &m.kernels {
            assert!(m.source.contains(&format!(" {}(", k.name)), "{}", k.name);
        }
        let spread = m.kernel(names::GW_SPREAD).unwrap();
        assert_eq!(spread.decl.params.len(), 15, "{:?}", spread.decl.params);
        assert_eq!(spread.decl.params[11].ty.arg(), ArgKind::F64);
    }
    assert!(gaussian_wide_module(2, 44, Precision::F32).is_err());
    assert!(gaussian_wide_module(4, 45, Precision::F32).is_err());
    let a = gaussian_wide_module(2, 29, Precision::F32).unwrap();
    let b = gaussian_wide_module(2, 31, Precision::F32).unwrap();
    assert_ne!(a.name, b.name);
}

#[test]
fn quadrature_matches_the_fourier_series() {
    let k = es(9);
    let (z, w) = fourier_quadrature(&k);
    let ft = k.fourier();
    let a = k.half_width();
    for omega in [0.0, 0.4, 1.3] {
        let s: f64 = z
            .iter()
            .zip(&w)
            .map(|(z, w)| w * (omega * a * z).cos())
            .sum();
        assert!((2.0 * a * s - ft.at(omega)).abs() < 1e-13 * ft.at(0.0));
    }
}

#[test]
fn names_are_unique_per_kernel() {
    let arch = GpuArch::h100();
    let a = GpuSpreadSpec::new(2, es(7), Precision::F64, &arch).unwrap();
    let g = KernelSpec::for_width(KernelKind::Gaussian, 7, Upsampling::TWO).unwrap();
    let b = GpuSpreadSpec::new(2, g, Precision::F64, &arch).unwrap();
    let e125 = KernelSpec::for_width(KernelKind::Es, 7, Upsampling::FIVE_FOURTHS).unwrap();
    let c = GpuSpreadSpec::new(2, e125, Precision::F64, &arch).unwrap();
    assert_ne!(a.name(), b.name());
    assert_ne!(a.name(), c.name());
    assert!(a
        .name()
        .chars()
        .all(|ch| ch.is_ascii_alphanumeric() || ch == '_'));
}
