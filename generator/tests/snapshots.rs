//! Snapshot tests of rendered source: a change to a template or to the kernel fits shows up
//! here as a reviewable diff (`cargo insta review`).

use nudt_gen::render::{gaussian_wide_module, spreader_module, RustSpreader};
use nudt_gen::{KernelKind, KernelSpec, Precision, Strategy, Upsampling};

fn spreader(
    dim: usize,
    width: usize,
    kind: KernelKind,
    precision: Precision,
    strategy: Strategy,
) -> String {
    let kernel = KernelSpec::for_width(kind, width, Upsampling::TWO).unwrap();
    spreader_module(&RustSpreader {
        dim,
        kernel,
        precision,
        strategy,
        support_path: "super::support".into(),
        max_block_points: 1 << 15,
        simd_bytes: nudt_gen::Arch::default().simd_bytes,
        provenance: vec![format!("snapshot dim={dim} width={width}")],
    })
    .unwrap()
}

#[test]
fn es_1d_width2_f32_source_driven() {
    insta::assert_snapshot!(spreader(
        1,
        2,
        KernelKind::Es,
        Precision::F32,
        Strategy::SourceDriven
    ));
}

#[test]
fn es_3d_width7_f64_target_driven() {
    insta::assert_snapshot!(spreader(
        3,
        7,
        KernelKind::Es,
        Precision::F64,
        Strategy::TargetDriven
    ));
}

#[test]
fn gaussian_2d_width6_f64() {
    insta::assert_snapshot!(spreader(
        2,
        6,
        KernelKind::Gaussian,
        Precision::F64,
        Strategy::Auto
    ));
}

#[test]
fn wide_gaussian_2d_f32() {
    insta::assert_snapshot!(gaussian_wide_module(2, Precision::F32, "super::support").unwrap());
}
