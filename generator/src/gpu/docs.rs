//! What each generated GPU kernel does and what each of its parameters means, as data: the
//! generator's own description of its entry points, which `nudt gen --target cuda|opencl`
//! renders into the README.md beside the kernels (with the parameter types read from the
//! source, [`super::GpuKernel::params`]). The meanings are keyed by parameter name, the same
//! name meaning the same thing in every kernel, except for the few names listed per kernel;
//! `tests.rs` checks that every parameter of every module in both dialects has one.

/// One line on what kernel `name` does, or `None` for a name that is not a generated entry
/// point.
pub fn kernel_purpose(name: &str) -> Option<&'static str> {
    use super::names::*;
    Some(match name {
        BIN_COUNT => {
            "bin sort, pass 1: each point's bin (from its cell on the fine grid) and its rank \
             in the bin (an atomic increment of the bin's counter); the least index of a point \
             with a non-finite coordinate into `bad`"
        }
        BIN_COUNT_LOCAL => {
            "bin sort, pass 1 for grids of at most LOCAL_BINS bins (CUDA): as nudt_bin_count, \
             ranked through a histogram in shared memory (one global atomic per bin and tile)"
        }
        BIN_SCATTER => {
            "bin sort, pass 2: each point's index written to its slot in bin order, \
             `start[bin] + rank`"
        }
        BIN_BUCKET => {
            "two-pass sort for very large grids (CUDA), first pass: (index, bin) pairs \
             scattered to buckets of 2^shift consecutive bins"
        }
        BIN_PLACE => {
            "two-pass sort (CUDA), second pass: each bucket's indices placed in their bins"
        }
        SPREAD_GM => {
            "spreading, GM-sort: one thread per sorted point, atomic adds of its w^d \
             contributions to the fine grid (which must be zeroed first)"
        }
        SPREAD_SM => {
            "spreading, SM: one block per subproblem (at most `maxsub` points of one bin), \
             accumulated in a padded box in local/shared memory, then added to the fine grid"
        }
        SPREAD_OD => {
            "spreading, output-driven: one block per subproblem; each thread owns a pencil of \
             the bin's box, so no two threads add to one cell"
        }
        INTERP_GM => {
            "interpolation, GM-sort: one thread per sorted point reads its w^d grid values"
        }
        INTERP_SM => {
            "interpolation, SM: one block per subproblem, the bin's padded box staged in \
             local/shared memory"
        }
        INTERP_GRAD_GM => {
            "interpolation with the gradient, GM-sort: per sorted point (one thread) its value \
             and its derivative along each dimension, DIM + 1 complex values, from the kernel's \
             weights and their derivatives"
        }
        INTERP_GRAD_SM => {
            "interpolation with the gradient, SM: as nudt_interp_grad_gm, from the bin's padded \
             box staged in local/shared memory (one block per subproblem)"
        }
        SPREAD_GRAD_GM => {
            "spreading of values and derivative weights, GM-sort (the transpose of \
             nudt_interp_grad_gm): per sorted point (v, u_0, ..) adds v·W + Σ_d u_d·∂W/∂x_d of \
             its weights W to the fine grid with atomics"
        }
        SPREAD_GRAD_SM => {
            "spreading of values and derivative weights, SM: as nudt_spread_grad_gm, \
             accumulated per subproblem in the bin's padded box, then added to the fine grid"
        }
        BIN_SCAN_TILES => {
            "prefix sums of the bin counts, step 1: sums inside tiles of SCAN_TILE bins \
             (points and subproblems), each tile's totals into `tiles`"
        }
        BIN_SCAN_TOTALS => {
            "prefix sums, step 2 (one block): the tiles' totals summed; the grand totals into \
             `start[n]`, `substart[n]` and `*nsub`"
        }
        BIN_SCAN_ADD => {
            "prefix sums, step 3 (only for more than one tile): each tile's offset added"
        }
        SUBPROB_MAP => {
            "the subproblem list of the SM and output-driven kernels: bin and first point of each"
        }
        GRID_TO_MODES => {
            "type 1 output: each mode read from its fine-grid index (after the FFT) times its \
             correction 1/ψ̂ (deconvolution)"
        }
        MODES_TO_GRID => {
            "type 2 input: each mode times its correction 1/ψ̂, written to its index on a \
             zeroed fine grid (before the FFT)"
        }
        CMUL => "element-wise complex product (type 3 pre- and post-phases)",
        MINMAX => {
            "bounding interval of a coordinate array (type 3 set-points): per block a (min, max)"
        }
        T3_SOURCES => "type 3: sources rescaled onto the spreading grid, and their pre-phases",
        T3_TARGETS => {
            "type 3: targets rescaled for the inner type 2, and their post-factors (phase over ψ̂)"
        }
        GW_SPREAD => "Gaussian type 3: spreading with pre-phases onto the wide-window grid",
        GW_PRECOMP => "Gaussian type 3: pre-compensation of the grid",
        GW_TARGETS => "Gaussian type 3: target factors",
        GW_INTERP => "Gaussian type 3: interpolation with post-factors",
        _ => return None,
    })
}

/// What parameter `param` of kernel `kernel` means, or `None` where the generator has no
/// description (a test keeps that from happening for its own kernels).
pub fn param_meaning(kernel: &str, param: &str) -> Option<&'static str> {
    use super::names::*;
    // Names whose meaning depends on the kernel.
    let special = match (kernel, param) {
        (BIN_SCAN_TILES | BIN_SCAN_TOTALS | BIN_SCAN_ADD, "n") => Some("number of bins"),
        (CMUL | MINMAX, "n") => Some("number of elements"),
        (BIN_BUCKET | BIN_PLACE, "start") => {
            Some("first sorted slot of each bin (the bin sort's prefix sums)")
        }
        (BIN_BUCKET, "part") | (BIN_PLACE, "part") => {
            Some("(index, bin) pairs of the first pass, M of them")
        }
        (MINMAX, "part") => Some("out: (min, max) per block, as doubles"),
        (CMUL, "in") => Some("input: complex values, `stride` per transform"),
        (CMUL, "out") => Some("output: complex values (may equal `in`)"),
        (CMUL, "stride") => Some("complex values between transforms"),
        (INTERP_GM | INTERP_SM, "out") => {
            Some("out: values at the points, M complex per transform, in the caller's order")
        }
        (INTERP_GM | INTERP_SM | INTERP_GRAD_GM | INTERP_GRAD_SM, "grid") => {
            Some("fine grids to read, `gstride` complex apart")
        }
        (INTERP_GRAD_GM | INTERP_GRAD_SM, "out") => Some(
            "out: per point DIM + 1 complex values, the value and its derivatives along \
             dimensions 0.. (per radian), GRAD_Q·M per transform, in the caller's order",
        ),
        (INTERP_GRAD_GM | INTERP_GRAD_SM | SPREAD_GRAD_GM | SPREAD_GRAD_SM, "cstride") => {
            Some("complex values between the transforms' vectors, usually (DIM + 1)·M")
        }
        (MINMAX, "x") => Some("coordinates"),
        (T3_SOURCES, "M") | (T3_TARGETS, "K") => Some("number of points"),
        (BIN_SCAN_TOTALS, "nsub") => Some("out: the number of subproblems (one value)"),
        (MODES_TO_GRID, "grid") => Some("out: fine grids (zeroed), `gstride` complex apart"),
        (MODES_TO_GRID, "modes") => Some("modes, `mstride` complex per transform"),
        _ => None,
    };
    if special.is_some() {
        return special;
    }
    Some(match param {
        "M" => "number of nonuniform points",
        "x0" | "x1" | "x2" => {
            "coordinates along dimension 0, 1, 2 (radians, any finite value, 2π-periodic; \
             null beyond the module's dimension)"
        }
        "n0" | "n1" | "n2" => "fine-grid size along dimension 0, 1, 2 (1 beyond the dimension)",
        "nb1" | "nb2" => {
            "bins along dimension 1, 2: ceil(n_d / bin side) (1 beyond the dimension; the \
             bin sides are the module's B0, B1, B2)"
        }
        "nbins" => "number of bins, nb0 * nb1 * nb2",
        "rank" => "each point's rank inside its bin (M values; written by the count)",
        "counts" => "points per bin (nbins values, zeroed before the count)",
        "bad" => {
            "one value, set to 0xffffffff before the count: afterwards the least index of a \
             point with a non-finite coordinate, if any"
        }
        "start" | "bin_start" => {
            "first sorted slot of each bin: nbins + 1 values, the exclusive prefix sums of \
             `counts` (the last is M)"
        }
        "substart" => "first subproblem of each bin: nbins + 1 values (prefix sums of ceil(count / maxsub))",
        "tiles" => "scratch: one (points, subproblems) pair per tile of SCAN_TILE bins",
        "ntiles" => "number of scan tiles, ceil(nbins / SCAN_TILE)",
        "idx" => "sorted point indices: idx[p] is where the p-th point in bin order sits in the caller's arrays",
        "maxsub" => "most points per subproblem (the module's MAXSUB)",
        "sub_bin" | "sub_first" => "subproblem list: each subproblem's bin, and its first sorted point",
        "nsub" => "the number of subproblems (one value on the device, written by the prefix sums)",
        "nbuckets" => "number of buckets",
        "shift" => "log2 of the bins per bucket",
        "fill" => "per bucket (or bin) a counter, zeroed before the launch",
        "c" => "strengths: M complex values per transform (interleaved re, im), `cstride` apart",
        "vu" => {
            "values and derivative weights: per point DIM + 1 complex values (v, u_0, ..), \
             u_d weighting the derivative ∂W/∂x_d per radian, GRAD_Q·M per transform in the \
             caller's order, `cstride` apart"
        }
        "grid" => "fine grids: n0 * n1 * n2 complex values per transform, `gstride` apart",
        "out" => "output",
        "ntr" => "number of transforms (strength vectors) to spread or interpolate",
        "cstride" => "complex values between the transforms' strength (or value) vectors, usually M",
        "gstride" => "complex values between the transforms' fine grids, usually n0 * n1 * n2",
        "mstride" => "complex values between the transforms' mode arrays, usually nmodes",
        "nmodes" => "number of modes, m0 * m1 * m2",
        "m1" | "m2" => "modes along dimension 1, 2 (1 beyond the dimension)",
        "gi0" | "gi1" | "gi2" => {
            "fine-grid index of each mode along dimension 0, 1, 2: k mod n_d for mode k (one \
             entry, 0, beyond the dimension)"
        }
        "cf0" | "cf1" | "cf2" => {
            "correction of each mode along dimension 0, 1, 2: 1/ψ̂(2πk/n_d), ψ̂ the kernel's \
             Fourier transform (one entry, 1, beyond the dimension)"
        }
        "modes" => "out: modes, m0 * m1 * m2 complex per transform, `mstride` apart, last dimension fastest",
        "fac" => "factors, n complex values",
        "conj" => "1 to multiply by the factors' conjugates (the adjoint), else 0",
        "dim" => "dimension of the points",
        "cx0" | "cx1" | "cx2" => "centre of the sources along each dimension",
        "ig0" | "ig1" | "ig2" => "1/γ_d: the sources' scale onto the spreading grid",
        "cs0" | "cs1" | "cs2" => "centre of the targets along each dimension",
        "hg0" | "hg1" | "hg2" => "h_d γ_d: the targets' scale for the inner type 2",
        "sgn" => "the transform's sign, ±1",
        "y0" | "y1" | "y2" => "out: rescaled source coordinates",
        "u0" | "u1" | "u2" => "out: rescaled target coordinates",
        "s0" | "s1" | "s2" => "target frequencies along each dimension",
        "pre" => "out: the sources' pre-phases, M complex",
        "post" => "out: the targets' post-factors, K complex",
        "nq" | "qz" | "qw" | "alpha" => {
            "quadrature of ψ̂: node count, nodes on (0, 1], weights times φ, and half the width"
        }
        "x" => "values",
        "in" => "input",
        _ => return None,
    })
}

#[cfg(test)]
mod tests {
    use super::super::*;
    use super::*;
    use crate::{KernelKind, KernelSpec, Precision, Upsampling};

    /// Every entry point of the spread and common modules (those `nudt gen` writes), in both dialects and precisions, has a purpose and
    /// a meaning for each parameter, so the README `nudt gen` writes never has a blank.
    #[test]
    fn every_kernel_and_parameter_is_described() {
        for precision in [Precision::F32, Precision::F64] {
            for dialect in [
                Dialect::Cuda,
                Dialect::OpenCl {
                    fp64: true,
                    ptx: false,
                },
            ] {
                let mut modules = vec![common_module_in(precision, dialect).unwrap()];
                for dim in 1..=3 {
                    let kernel =
                        KernelSpec::for_width(KernelKind::Pswf, 6, Upsampling(2.0)).unwrap();
                    let spec = GpuSpreadSpec::new(dim, kernel, precision, &GpuArch::h100())
                        .unwrap()
                        .for_spreading();
                    modules.push(spread_module_in(&spec, dialect).unwrap());
                }
                for m in &modules {
                    for k in &m.kernels {
                        assert!(kernel_purpose(k.name).is_some(), "{}", k.name);
                        assert!(!k.params.is_empty(), "{} in {}", k.name, m.name);
                        for p in &k.params {
                            assert!(
                                param_meaning(k.name, &p.name).is_some(),
                                "{}({} {}) in {}",
                                k.name,
                                p.ty,
                                p.name,
                                m.name
                            );
                        }
                    }
                }
            }
        }
    }
}
