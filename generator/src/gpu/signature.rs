//! Every generated GPU entry point's signature, as data: its name, what it does, and its
//! parameters in order, each with a C-level type and a meaning. The templates render their
//! prototypes from these declarations ([`KernelDecl::prototype`], `{{ sig.<name> }}` in
//! `templates/gpu/`), so a module's source and its launch description cannot disagree; the
//! runtime checks each launch's argument list against them ([`KernelDecl::check`]) before it
//! calls the driver, and `nudt gen --target cuda|opencl` writes them into its launch
//! descriptions and README.
//!
//! One declaration serves both dialects: pointers are spelled with the dialect header's
//! `GLOBAL` and `RESTRICT`, and the subproblem kernels' local memory, sized at launch, is
//! `DYNAMIC_LOCAL_PARAM` (nothing in CUDA, whose dynamic shared memory is a launch setting; a
//! trailing `__local` parameter in OpenCL).

use super::names::*;
use serde::Serialize;

/// What a pointer parameter points to, as the templates name it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Elem {
    /// `T`: a real of the module's precision.
    Real,
    /// `T2`: a complex value, interleaved (re, im).
    Complex,
    /// `int`.
    Int,
    /// `unsigned` (32 bits).
    Uint,
    /// `uint2`: a pair of 32-bit unsigned values.
    Uint2,
    /// `double`, whatever the module's precision.
    Double,
}

impl Elem {
    fn c(self) -> &'static str {
        match self {
            Elem::Real => "T",
            Elem::Complex => "T2",
            Elem::Int => "int",
            Elem::Uint => "unsigned",
            Elem::Uint2 => "uint2",
            Elem::Double => "double",
        }
    }
}

/// A parameter's C-level type.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CType {
    /// `unsigned` (32 bits).
    Uint,
    /// `int` (32 bits).
    Int,
    /// `u64`: 64-bit unsigned (`unsigned long long` in CUDA, `ulong` in OpenCL).
    U64,
    /// `double`.
    Double,
    /// A pointer into global memory: what it points to, whether the kernel only reads
    /// through it (`const`), and whether it may alias another parameter (then without
    /// `RESTRICT`: `nudt_cmul` runs in place, and CUDA's prefix sums pass `substart + n` as
    /// `nsub`).
    Ptr {
        elem: Elem,
        read_only: bool,
        aliased: bool,
    },
}

/// The kind of value a launcher passes for a parameter: what the runtime's argument lists
/// are checked against.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum ArgKind {
    /// A device buffer (or null, for an unused dimension's array).
    Buffer,
    U32,
    I32,
    U64,
    F64,
}

impl std::fmt::Display for ArgKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            ArgKind::Buffer => "buffer",
            ArgKind::U32 => "u32",
            ArgKind::I32 => "i32",
            ArgKind::U64 => "u64",
            ArgKind::F64 => "f64",
        })
    }
}

impl CType {
    /// The kind of argument this parameter takes.
    pub fn arg(self) -> ArgKind {
        match self {
            CType::Uint => ArgKind::U32,
            CType::Int => ArgKind::I32,
            CType::U64 => ArgKind::U64,
            CType::Double => ArgKind::F64,
            CType::Ptr { .. } => ArgKind::Buffer,
        }
    }

    /// The type as the templates spell it (dialect macros included).
    fn template(self) -> String {
        match self {
            CType::Ptr {
                elem,
                read_only,
                aliased,
            } => format!(
                "{}GLOBAL {}*{}",
                if read_only { "const " } else { "" },
                elem.c(),
                if aliased { "" } else { " RESTRICT" }
            ),
            scalar => scalar.c(),
        }
    }

    /// The type in plain C, as a reader of the generated files needs it (`T` the module's
    /// real type, `T2` its complex one, `u64` a 64-bit unsigned).
    pub fn c(self) -> String {
        match self {
            CType::Uint => "unsigned".into(),
            CType::Int => "int".into(),
            CType::U64 => "u64".into(),
            CType::Double => "double".into(),
            CType::Ptr {
                elem, read_only, ..
            } => format!("{}{}*", if read_only { "const " } else { "" }, elem.c()),
        }
    }
}

/// One parameter of a kernel.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Param {
    pub name: &'static str,
    pub ty: CType,
    pub meaning: &'static str,
}

impl Param {
    const fn new(name: &'static str, ty: CType, meaning: &'static str) -> Self {
        Param { name, ty, meaning }
    }

    /// The same parameter with another meaning (a shared name used differently by one
    /// kernel).
    const fn meaning(self, meaning: &'static str) -> Self {
        Param { meaning, ..self }
    }
}

/// A scalar parameter.
const fn uint(name: &'static str, meaning: &'static str) -> Param {
    Param::new(name, CType::Uint, meaning)
}
const fn int(name: &'static str, meaning: &'static str) -> Param {
    Param::new(name, CType::Int, meaning)
}
const fn u64(name: &'static str, meaning: &'static str) -> Param {
    Param::new(name, CType::U64, meaning)
}
const fn double(name: &'static str, meaning: &'static str) -> Param {
    Param::new(name, CType::Double, meaning)
}
/// A buffer the kernel reads.
const fn input(name: &'static str, elem: Elem, meaning: &'static str) -> Param {
    let ty = CType::Ptr {
        elem,
        read_only: true,
        aliased: false,
    };
    Param::new(name, ty, meaning)
}
/// A buffer the kernel writes (and may read).
const fn output(name: &'static str, elem: Elem, meaning: &'static str) -> Param {
    let ty = CType::Ptr {
        elem,
        read_only: false,
        aliased: false,
    };
    Param::new(name, ty, meaning)
}
/// A buffer another parameter may alias (no `RESTRICT`).
const fn aliased(p: Param) -> Param {
    let ty = match p.ty {
        CType::Ptr {
            elem, read_only, ..
        } => CType::Ptr {
            elem,
            read_only,
            aliased: true,
        },
        scalar => scalar,
    };
    Param { ty, ..p }
}

/// One generated entry point's signature.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct KernelDecl {
    pub name: &'static str,
    /// One line on what the kernel does.
    pub purpose: &'static str,
    /// The parameters, in order.
    pub params: &'static [Param],
    /// Whether the kernel takes local memory sized at launch (`DYNAMIC_LOCAL_PARAM`): in
    /// OpenCL one more, trailing `__local` argument of the launch description's
    /// `dynamic_smem` bytes.
    pub dynamic_local: bool,
}

/// A launch's argument list that does not match its kernel's declaration: a bug in the
/// launcher, refused before the driver sees it.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum ArgMismatch {
    #[error("{kernel}: {got} arguments for its {expected} parameters")]
    Count {
        kernel: &'static str,
        expected: usize,
        got: usize,
    },
    #[error("{kernel}: argument {index} ({param}) is a {got}, the parameter takes a {expected}")]
    Kind {
        kernel: &'static str,
        index: usize,
        param: &'static str,
        expected: ArgKind,
        got: ArgKind,
    },
    #[error("{kernel}: its trailing local-memory argument is missing")]
    MissingLocal { kernel: &'static str },
    #[error("{kernel}: a local-memory argument, where the kernel takes none")]
    UnexpectedLocal { kernel: &'static str },
}

impl KernelDecl {
    /// The kinds of argument a launch passes, in order (without the local memory).
    pub fn args(&self) -> impl ExactSizeIterator<Item = ArgKind> + '_ {
        self.params.iter().map(|p| p.ty.arg())
    }

    /// Checks a launch's arguments: their kinds, in order, and with `local` given whether a
    /// local-memory argument follows them (OpenCL's trailing `__local` one). CUDA passes
    /// `None`: it sizes that memory as a launch setting, not an argument.
    pub fn check(
        &self,
        kinds: impl IntoIterator<Item = ArgKind>,
        local: Option<bool>,
    ) -> Result<(), ArgMismatch> {
        let mut got = 0;
        for (index, kind) in kinds.into_iter().enumerate() {
            got = index + 1;
            match self.params.get(index) {
                Some(p) if p.ty.arg() != kind => {
                    return Err(ArgMismatch::Kind {
                        kernel: self.name,
                        index,
                        param: p.name,
                        expected: p.ty.arg(),
                        got: kind,
                    })
                }
                _ => {}
            }
        }
        if got != self.params.len() {
            return Err(ArgMismatch::Count {
                kernel: self.name,
                expected: self.params.len(),
                got,
            });
        }
        match local {
            Some(false) if self.dynamic_local => {
                Err(ArgMismatch::MissingLocal { kernel: self.name })
            }
            Some(true) if !self.dynamic_local => {
                Err(ArgMismatch::UnexpectedLocal { kernel: self.name })
            }
            _ => Ok(()),
        }
    }

    /// The prototype the templates open the kernel's definition with, after its qualifier
    /// (`KERNEL(threads)` or `ENTRY`): the name and parameter list, in the dialect header's
    /// macros, wrapped before 100 columns.
    pub fn prototype(&self) -> String {
        let mut s = format!("{}(", self.name);
        let mut line = s.len();
        let last = self.params.len().saturating_sub(1);
        for (i, p) in self.params.iter().enumerate() {
            let mut item = format!("{} {}", p.ty.template(), p.name);
            if i < last {
                item.push(',');
            } else if self.dynamic_local {
                item += " DYNAMIC_LOCAL_PARAM(smem_raw)";
            }
            if i > 0 {
                if line + 1 + item.len() > 96 {
                    s += "\n    ";
                    line = 4;
                } else {
                    s.push(' ');
                    line += 1;
                }
            }
            line += item.len();
            s += &item;
        }
        s.push(')');
        s
    }
}

/// The declaration of entry point `name`, or `None` for a name no module defines.
pub fn declaration(name: &str) -> Option<&'static KernelDecl> {
    KERNELS.iter().find(|k| k.name == name)
}

/// Every declaration's prototype by kernel name, as the templates read them (`sig`).
pub(super) fn prototypes() -> &'static std::collections::HashMap<&'static str, String> {
    static P: std::sync::OnceLock<std::collections::HashMap<&'static str, String>> =
        std::sync::OnceLock::new();
    P.get_or_init(|| KERNELS.iter().map(|k| (k.name, k.prototype())).collect())
}

/// The declarations as a launch description lists them: each parameter's name, plain C
/// type, argument kind and meaning.
#[derive(Serialize)]
pub(super) struct ParamDescription {
    name: &'static str,
    #[serde(rename = "type")]
    ty: String,
    arg: ArgKind,
    meaning: &'static str,
}

impl From<&Param> for ParamDescription {
    fn from(p: &Param) -> Self {
        ParamDescription {
            name: p.name,
            ty: p.ty.c(),
            arg: p.ty.arg(),
            meaning: p.meaning,
        }
    }
}

/// The parameters of `groups` (arrays or slices of [`Param`]) in order, as one array of their
/// total length `LEN`: how the declarations write a run of parameters several kernels share
/// (the coordinates, the grid sizes, …) once.
const fn concat<const LEN: usize>(groups: &[&[Param]]) -> [Param; LEN] {
    let mut out = [M; LEN];
    let (mut k, mut g) = (0, 0);
    while g < groups.len() {
        let mut i = 0;
        while i < groups[g].len() {
            out[k] = groups[g][i];
            (k, i) = (k + 1, i + 1);
        }
        g += 1;
    }
    assert!(k == LEN, "concat: LEN is not the groups' total length");
    out
}

/// The total length of `groups`, the `LEN` of their [`concat`].
const fn total(groups: &[&[Param]]) -> usize {
    let (mut n, mut g) = (0, 0);
    while g < groups.len() {
        n += groups[g].len();
        g += 1;
    }
    n
}

/// A declaration's parameter list from groups of parameters (arrays of [`Param`], in
/// order), as a `&'static [Param]`.
macro_rules! params {
    ($($group:expr),* $(,)?) => {{
        const GROUPS: &[&[Param]] = &[$(&$group),*];
        const ALL: [Param; total(GROUPS)] = concat(GROUPS);
        &ALL
    }};
}

// ---- the parameters many kernels share ------------------------------------------------------

const M: Param = uint("M", "number of nonuniform points");
const X: [Param; 3] = {
    const MEANING: &str = "coordinates along dimension 0, 1, 2 (radians, any finite value, \
                           2π-periodic; null beyond the module's dimension)";
    [
        input("x0", Elem::Real, MEANING),
        input("x1", Elem::Real, MEANING),
        input("x2", Elem::Real, MEANING),
    ]
};
const N: [Param; 3] = {
    const MEANING: &str = "fine-grid size along dimension 0, 1, 2 (1 beyond the dimension)";
    [int("n0", MEANING), int("n1", MEANING), int("n2", MEANING)]
};
const NB: [Param; 2] = {
    const MEANING: &str = "bins along dimension 1, 2: ceil(n_d / bin side) (1 beyond the \
                           dimension; the bin sides are the module's B0, B1, B2)";
    [int("nb1", MEANING), int("nb2", MEANING)]
};
const IDX: &str = "sorted point indices: idx[p] is where the p-th point in bin order sits in \
                   the caller's arrays";
const START: &str = "first sorted slot of each bin: nbins + 1 values, the exclusive prefix \
                     sums of `counts` (the last is M)";
const SUBSTART: &str = "first subproblem of each bin: nbins + 1 values (prefix sums of \
                        ceil(count / maxsub))";
const MAXSUB: Param = uint("maxsub", "most points per subproblem (the module's MAXSUB)");
const SUB: [Param; 2] = [
    input("sub_bin", Elem::Uint, SUB_MEANING),
    input("sub_first", Elem::Uint, SUB_MEANING),
];
/// The subproblems of a batch of sets: those of its bins, `substart[set0 · set_bins]` up to
/// `substart[(set0 + nsets) · set_bins]` (all of them for one shared set).
const SUB_STARTS: Param = input("substart", Elem::Uint, SUBSTART);
const BIN_START: Param = input("bin_start", Elem::Uint, START);
const NTR: Param = int(
    "ntr",
    "number of transforms (strength vectors) to spread or interpolate per point set: all of \
     them where they share their points, 1 where each has its own set",
);
/// The point sets: one per transform (each sorted, spread and interpolated on its own grid,
/// `gstride` after the one before), or one that every transform shares.
const SETS: Param = input(
    "sets",
    Elem::Uint,
    "first point of each point set in the concatenated coordinates: nsets + 1 values, 0 \
     first and M last ([0, M] for one set)",
);
const NSETS: Param = uint(
    "nsets",
    "number of point sets: the batch's transforms' own, or 1 for points they share",
);
/// A launch covers a batch of consecutive sets, which the sort keeps as one run of sorted
/// points and bins: the plan's batch of transforms, not every set at once.
const SET0: Param = uint(
    "set0",
    "first point set of the launch's batch, which covers sets set0 .. set0 + nsets: their \
     vectors are counted from the batch's first point (sets[set0]) and their grids from the \
     batch's first (0 for one shared set)",
);
const SET_BINS: Param = uint(
    "set_bins",
    "bins of one set's grid, nb0 * nb1 * nb2: a point's bin is its set's number times \
     set_bins plus its bin on the grid, so that one sort orders the sets one after another",
);
const CSTRIDE: Param = u64(
    "cstride",
    "complex values between the transforms' strength (or value) vectors, usually M",
);
const GSTRIDE: Param = u64(
    "gstride",
    "complex values between the transforms' fine grids, usually n0 * n1 * n2",
);
const GRAD_CSTRIDE: Param =
    CSTRIDE.meaning("complex values between the transforms' vectors, usually (DIM + 1)·M");
const STRENGTHS: Param = input(
    "c",
    Elem::Complex,
    "strengths: M complex values per transform (interleaved re, im), `cstride` apart",
);
const VU: Param = input(
    "vu",
    Elem::Complex,
    "values and derivative weights: per point DIM + 1 complex values (v, u_0, ..), u_d \
     weighting the derivative ∂W/∂x_d per radian, GRAD_Q·M per transform in the caller's \
     order, `cstride` apart",
);
const GRID_OUT: Param = output(
    "grid",
    Elem::Complex,
    "fine grids: n0 * n1 * n2 complex values per transform, `gstride` apart, added to (zero \
     them first)",
);
const GRID_IN: Param = input(
    "grid",
    Elem::Complex,
    "fine grids to read, `gstride` complex apart",
);
const VALUES_OUT: Param = output(
    "out",
    Elem::Complex,
    "out: values at the points, M complex per transform, `cstride` apart, in the caller's order",
);
const GRAD_OUT: Param = output(
    "out",
    Elem::Complex,
    "out: per point DIM + 1 complex values, the value and its derivatives along dimensions \
     0.. (per radian), GRAD_Q·M per transform, in the caller's order",
);

/// A point-driven (GM-sort) kernel's parameters around its input and output (the p-th sorted
/// point's set, found in `sets`, giving its grid).
const fn gm(from: Param, to: Param, cstride: Param) -> [Param; 16] {
    let idx = input("idx", Elem::Uint, IDX);
    let m = M.meaning("number of points of the launch's batch of sets (all of them for one set)");
    concat(&[
        &[m, idx],
        &X,
        &[from, to],
        &N,
        &[NTR, cstride, GSTRIDE, SETS, NSETS, SET0],
    ])
}

/// A subproblem kernel's parameters around its input and output (one block per subproblem,
/// y the transform within its bin's set).
const fn sm(from: Param, to: Param, cstride: Param) -> [Param; 20] {
    let idx = input("idx", Elem::Uint, IDX);
    concat(&[
        &SUB,
        &[SUB_STARTS, BIN_START, idx],
        &X,
        &[from, to],
        &N,
        &NB,
        &[cstride, GSTRIDE, SET_BINS, SET0, NSETS],
    ])
}

const RANK_OUT: Param = output(
    "rank",
    Elem::Uint,
    "each point's rank inside its bin (M values; written by the count)",
);
const COUNTS_OUT: Param = output(
    "counts",
    Elem::Uint,
    "points per bin (nbins values, zeroed before the count)",
);
const BAD: Param = output(
    "bad",
    Elem::Uint,
    "one value, set to 0xffffffff before the count: afterwards the least index of a point \
     with a non-finite coordinate, if any",
);
const FILL: Param = output(
    "fill",
    Elem::Uint,
    "per bucket (or bin) a counter, zeroed before the launch",
);
const PAIRS: &str = "(index, bin) pairs of the first pass, M of them";
const GI: [Param; 3] = {
    const MEANING: &str = "fine-grid index of each mode along dimension 0, 1, 2: k mod n_d for \
                           mode k (one entry, 0, beyond the dimension)";
    [
        input("gi0", Elem::Int, MEANING),
        input("gi1", Elem::Int, MEANING),
        input("gi2", Elem::Int, MEANING),
    ]
};
const CF: [Param; 3] = {
    const MEANING: &str = "correction of each mode along dimension 0, 1, 2: 1/ψ̂(2πk/n_d), ψ̂ \
                           the kernel's Fourier transform (one entry, 1, beyond the dimension)";
    [
        input("cf0", Elem::Real, MEANING),
        input("cf1", Elem::Real, MEANING),
        input("cf2", Elem::Real, MEANING),
    ]
};
/// Three doubles of one meaning, one per dimension.
const fn doubles(names: [&'static str; 3], meaning: &'static str) -> [Param; 3] {
    [
        double(names[0], meaning),
        double(names[1], meaning),
        double(names[2], meaning),
    ]
}
/// Three arrays of reals of one meaning, one per dimension (null beyond the dimension).
const fn reals(names: [&'static str; 3], out: bool, meaning: &'static str) -> [Param; 3] {
    if out {
        [
            output(names[0], Elem::Real, meaning),
            output(names[1], Elem::Real, meaning),
            output(names[2], Elem::Real, meaning),
        ]
    } else {
        [
            input(names[0], Elem::Real, meaning),
            input(names[1], Elem::Real, meaning),
            input(names[2], Elem::Real, meaning),
        ]
    }
}
const SGN: Param = double("sgn", "the transform's sign, ±1");
/// Where a kernel over one point set of several (a set per transform) starts.
const FIRST: &str = "index of the first element (a set's start among concatenated sets)";
const CX: [Param; 3] = doubles(
    ["cx0", "cx1", "cx2"],
    "centre of the sources along each dimension",
);
const CS: [Param; 3] = doubles(
    ["cs0", "cs1", "cs2"],
    "centre of the targets along each dimension",
);
const DIM: Param = int("dim", "dimension of the points");
const CONJ: Param = int(
    "conj",
    "1 to multiply by the factors' conjugates (the adjoint), else 0",
);
const E3: Param = input(
    "e3",
    Elem::Real,
    "the window's table e^{−k²/4b}, k = −HALF..HALF (2 HALF + 1 values)",
);
const Q: Param = double("q", "1/(4b), b the window's shape parameter");

// ---- the declarations ---------------------------------------------------------------------

const IG: [Param; 3] = doubles(
    ["ig0", "ig1", "ig2"],
    "1/γ_d: the sources' scale onto the spreading grid",
);
const HG: [Param; 3] = doubles(
    ["hg0", "hg1", "hg2"],
    "h_d γ_d: the targets' scale for the inner type 2",
);
const S: [Param; 3] = reals(
    ["s0", "s1", "s2"],
    false,
    "target frequencies along each dimension (null beyond the dimension)",
);
const U_OUT: [Param; 3] = reals(
    ["u0", "u1", "u2"],
    true,
    "out: rescaled target coordinates (null beyond the dimension)",
);
const START_IN: Param = input("start", Elem::Uint, START);
const SORTED_START: Param = input(
    "start",
    Elem::Uint,
    "first sorted slot of each bin (the bin sort's prefix sums)",
);
const NBINS: Param = uint(
    "nbins",
    "number of bins of every point set, nsets * nb0 * nb1 * nb2",
);
const NBINS_SCAN: Param = uint("n", "number of bins");

/// What a sort kernel reads of a point's place: the points, the grid, its bins and the sets
/// (a point's bin key is its set's number times `set_bins` plus its bin on the grid).
const SORT_KEY: [Param; 12] = concat(&[&[M], &X, &N, &NB, &[SETS, NSETS, SET_BINS]]);

/// Every generated entry point of the spread, common and wide-Gaussian modules.
pub static KERNELS: &[KernelDecl] = &[
    KernelDecl {
        name: BIN_COUNT,
        purpose: "bin sort, pass 1: each point's bin (from its cell on the fine grid) and its \
                  rank in the bin (an atomic increment of the bin's counter); the least index \
                  of a point with a non-finite coordinate into `bad`",
        params: params!(SORT_KEY, [RANK_OUT, COUNTS_OUT, BAD]),
        dynamic_local: false,
    },
    KernelDecl {
        name: BIN_COUNT_LOCAL,
        purpose: "bin sort, pass 1 for grids of at most LOCAL_BINS bins (CUDA): as \
                  nudt_bin_count, ranked through a histogram in shared memory (one global \
                  atomic per bin and tile)",
        params: params!(SORT_KEY, [NBINS, RANK_OUT, COUNTS_OUT, BAD]),
        dynamic_local: false,
    },
    KernelDecl {
        name: BIN_SCATTER,
        purpose: "bin sort, pass 2: each point's index written to its slot in bin order, \
                  `start[bin] + rank`",
        params: params!(
            SORT_KEY,
            [
                input(
                    "rank",
                    Elem::Uint,
                    "each point's rank inside its bin (M values)",
                ),
                START_IN,
                output("idx", Elem::Uint, IDX)
            ]
        ),
        dynamic_local: false,
    },
    KernelDecl {
        name: BIN_BUCKET,
        purpose: "two-pass sort for very large grids, first pass: (index, bin) pairs \
                  scattered to buckets of 2^shift consecutive bins",
        params: params!(
            SORT_KEY,
            [
                uint("nbuckets", "number of buckets"),
                uint("shift", "log2 of the bins per bucket"),
                SORTED_START,
                FILL,
                output("part", Elem::Uint2, PAIRS)
            ]
        ),
        dynamic_local: false,
    },
    KernelDecl {
        name: BIN_PLACE,
        purpose: "two-pass sort, second pass: each bucket's indices placed in their bins",
        params: &[
            M,
            input("part", Elem::Uint2, PAIRS),
            SORTED_START,
            FILL,
            output("idx", Elem::Uint, IDX),
        ],
        dynamic_local: false,
    },
    KernelDecl {
        name: SPREAD_GM,
        purpose: "spreading, GM-sort: one thread per sorted point, atomic adds of its w^d \
                  contributions to the fine grid (which must be zeroed first)",
        params: &gm(STRENGTHS, GRID_OUT, CSTRIDE),
        dynamic_local: false,
    },
    KernelDecl {
        name: SPREAD_SM,
        purpose: "spreading, SM: one block per subproblem (at most `maxsub` points of one \
                  bin), accumulated in a padded box in local/shared memory, then added to the \
                  fine grid",
        params: &sm(STRENGTHS, GRID_OUT, CSTRIDE),
        dynamic_local: true,
    },
    KernelDecl {
        name: SPREAD_OD,
        purpose: "spreading, output-driven: one block per subproblem; each thread owns a \
                  pencil of the bin's box, so no two threads add to one cell",
        params: &sm(STRENGTHS, GRID_OUT, CSTRIDE),
        dynamic_local: true,
    },
    KernelDecl {
        name: INTERP_GM,
        purpose: "interpolation, GM-sort: one thread per sorted point reads its w^d grid values",
        params: &gm(GRID_IN, VALUES_OUT, CSTRIDE),
        dynamic_local: false,
    },
    KernelDecl {
        name: INTERP_SM,
        purpose: "interpolation, SM: one block per subproblem, the bin's padded box staged in \
                  local/shared memory",
        params: &sm(GRID_IN, VALUES_OUT, CSTRIDE),
        dynamic_local: true,
    },
    KernelDecl {
        name: INTERP_GRAD_GM,
        purpose: "interpolation with the gradient, GM-sort: per sorted point (one thread) its \
                  value and its derivative along each dimension, DIM + 1 complex values, from \
                  the kernel's weights and their derivatives",
        params: &gm(GRID_IN, GRAD_OUT, GRAD_CSTRIDE),
        dynamic_local: false,
    },
    KernelDecl {
        name: INTERP_GRAD_SM,
        purpose: "interpolation with the gradient, SM: as nudt_interp_grad_gm, from the bin's \
                  padded box staged in local/shared memory (one block per subproblem)",
        params: &sm(GRID_IN, GRAD_OUT, GRAD_CSTRIDE),
        dynamic_local: true,
    },
    KernelDecl {
        name: SPREAD_GRAD_GM,
        purpose: "spreading of values and derivative weights, GM-sort (the transpose of \
                  nudt_interp_grad_gm): per sorted point (v, u_0, ..) adds v·W + Σ_d \
                  u_d·∂W/∂x_d of its weights W to the fine grid with atomics",
        params: &gm(VU, GRID_OUT, GRAD_CSTRIDE),
        dynamic_local: false,
    },
    KernelDecl {
        name: SPREAD_GRAD_SM,
        purpose: "spreading of values and derivative weights, SM: as nudt_spread_grad_gm, \
                  accumulated per subproblem in the bin's padded box, then added to the fine \
                  grid",
        params: &sm(VU, GRID_OUT, GRAD_CSTRIDE),
        dynamic_local: true,
    },
    KernelDecl {
        name: BIN_SCAN_TILES,
        purpose: "prefix sums of the bin counts, step 1: sums inside tiles of SCAN_TILE bins \
                  (points and subproblems), each tile's totals into `tiles`",
        params: &[
            NBINS_SCAN,
            input("counts", Elem::Uint, "points per bin (nbins values)"),
            MAXSUB,
            output("start", Elem::Uint, START),
            output("substart", Elem::Uint, SUBSTART),
            output(
                "tiles",
                Elem::Uint2,
                "scratch: one (points, subproblems) pair per tile of SCAN_TILE bins",
            ),
        ],
        dynamic_local: false,
    },
    KernelDecl {
        name: BIN_SCAN_TOTALS,
        purpose: "prefix sums, step 2 (one block): the tiles' totals summed; the grand totals \
                  into `start[n]`, `substart[n]` and `*nsub`",
        params: &[
            uint("ntiles", "number of scan tiles, ceil(nbins / SCAN_TILE)"),
            output(
                "tiles",
                Elem::Uint2,
                "one (points, subproblems) pair per tile of SCAN_TILE bins, summed in place",
            ),
            NBINS_SCAN,
            aliased(output("start", Elem::Uint, START)),
            aliased(output("substart", Elem::Uint, SUBSTART)),
            aliased(output(
                "nsub",
                Elem::Uint,
                "out: the number of subproblems (one value; CUDA passes `substart + n`)",
            )),
        ],
        dynamic_local: false,
    },
    KernelDecl {
        name: BIN_SCAN_ADD,
        purpose: "prefix sums, step 3 (only for more than one tile): each tile's offset added",
        params: &[
            NBINS_SCAN,
            input(
                "tiles",
                Elem::Uint2,
                "each tile's offsets (points, subproblems), the sums of step 2",
            ),
            output("start", Elem::Uint, START),
            output("substart", Elem::Uint, SUBSTART),
        ],
        dynamic_local: false,
    },
    KernelDecl {
        name: SUBPROB_MAP,
        purpose: "the subproblem list of the SM and output-driven kernels: bin and first point \
                  of each",
        params: &[
            NBINS,
            START_IN,
            input("substart", Elem::Uint, SUBSTART),
            MAXSUB,
            output("sub_bin", Elem::Uint, SUB_MEANING),
            output("sub_first", Elem::Uint, SUB_MEANING),
        ],
        dynamic_local: false,
    },
    KernelDecl {
        name: GRID_TO_MODES,
        purpose: "type 1 output: each mode read from its fine-grid index (after the FFT) times \
                  its correction 1/ψ̂ (deconvolution)",
        params: params!(
            MODE_MAP,
            [GRID_IN, output("modes", Elem::Complex, MODES_OUT)],
            MODE_STRIDES
        ),
        dynamic_local: false,
    },
    KernelDecl {
        name: MODES_TO_GRID,
        purpose: "type 2 input: each mode times its correction 1/ψ̂, written to its index on a \
                  zeroed fine grid (before the FFT)",
        params: params!(
            MODE_MAP,
            [
                input(
                    "modes",
                    Elem::Complex,
                    "modes, `mstride` complex per transform"
                ),
                output(
                    "grid",
                    Elem::Complex,
                    "out: fine grids (zeroed), `gstride` complex apart"
                )
            ],
            MODE_STRIDES
        ),
        dynamic_local: false,
    },
    KernelDecl {
        name: CMUL,
        purpose: "element-wise complex product (type 3 pre- and post-phases)",
        params: &[
            u64("n", "number of elements"),
            aliased(input(
                "in",
                Elem::Complex,
                "input: complex values, `stride` per transform",
            )),
            input(
                "fac",
                Elem::Complex,
                "factors, n complex values from `first`",
            ),
            u64("first", FIRST),
            aliased(output(
                "out",
                Elem::Complex,
                "output: complex values (may equal `in`)",
            )),
            u64("stride", "complex values between transforms"),
            CONJ,
        ],
        dynamic_local: false,
    },
    KernelDecl {
        name: SCALE,
        purpose: "strided complex values times a constant and a real weight per element, \
                  written or added, in batches (GROUP_Y): a derivative's element-wise step, \
                  a multi-device plan's packing and halo sums",
        params: &[
            u64("n", "number of elements"),
            output("to", Elem::Complex, "out: the values written or added to"),
            u64("to_stride", "complex values between elements of `to`"),
            u64(
                "to_offset",
                "complex values before the first element of `to`",
            ),
            u64("to_batch", "complex values between batches of `to`"),
            input("from", Elem::Complex, "the values scaled"),
            u64("from_stride", "complex values between elements of `from`"),
            u64(
                "from_offset",
                "complex values before the first element of `from`",
            ),
            u64("from_batch", "complex values between batches of `from`"),
            input(
                "w",
                Elem::Real,
                "weights, element i takes w[i mod wlen] (none: wlen 0)",
            ),
            u64("wlen", "number of weights, 0 for none"),
            double("fre", "real part of the constant factor"),
            double("fim", "imaginary part of the constant factor"),
            int("add", "1 to add to `to`, 0 to overwrite it"),
        ],
        dynamic_local: false,
    },
    KernelDecl {
        name: GRAD_REDUCE,
        purpose: "a derivative's reductions: per point and per slot of `x` (one a dimension), \
                  the real part of a constant times the slot's value times the conjugate of \
                  another, summed over a stack of transforms, in one sweep over `x`",
        params: &[
            u64("m", "number of points (outputs)"),
            u64("copies", "transforms stacked over the points, summed"),
            int("slots", "slots reduced, 1 to 3: one output array each"),
            output("to0", Elem::Real, "out: one real per point, slot 0's"),
            output("to1", Elem::Real, "out: slot 1's (none below two slots)"),
            output("to2", Elem::Real, "out: slot 2's (none below three slots)"),
            input(
                "x",
                Elem::Complex,
                "first factors, slot s of element b m + j at (b m + j) x_stride + offset s",
            ),
            u64("x_stride", "complex values between elements of `x`"),
            u64("off0", "slot 0's offset in an element of `x`"),
            u64("off1", "slot 1's offset"),
            u64("off2", "slot 2's offset"),
            input("y", Elem::Complex, "conjugated factors, copies · m complex"),
            double("fre", "real part of the constant factor"),
            double("fim", "imaginary part of the constant factor"),
        ],
        dynamic_local: false,
    },
    KernelDecl {
        name: ROUTE,
        purpose: "a multi-device plan's routing of a share of the points: each point's \
                  device (the slab its kernel footprint starts in), its slowest coordinate \
                  on that device's local grid, and its rank among the share's points of that \
                  device; the share's count per device",
        params: &[
            u64("n", "number of points of the share"),
            input("x0", Elem::Real, "slowest coordinates, radians"),
            input("x1", Elem::Real, "second coordinates, checked finite"),
            input(
                "x2",
                Elem::Real,
                "third coordinates, checked finite (none in 2-D)",
            ),
            int("dim", "dimensions, 2 or 3"),
            output(
                "xl",
                Elem::Real,
                "out: slowest coordinates on the local grids of the points' devices",
            ),
            output("dest", Elem::Uint, "out: each point's device"),
            output(
                "rank",
                Elem::Uint,
                "out: each point's place among the share's points of its device",
            ),
            output(
                "counts",
                Elem::Uint,
                "the share's points per device, zeroed before, counted into; then 1 where \
                 a coordinate is not finite",
            ),
            input(
                "table",
                Elem::Real,
                "the slabs' first planes (devices + 1, n0 last) and the local grids' \
                 planes (devices), small integers exact in T",
            ),
            uint("devices", "number of devices (at most ROUTE_DEVICES)"),
            uint("n0", "planes of the fine grid along the slowest axis"),
            uint("width", "kernel width"),
            uint("margin", "planes spared before a slab on its local grid"),
        ],
        dynamic_local: false,
    },
    KernelDecl {
        name: PACK_POINTS,
        purpose: "a multi-device plan's points packed by device: each point's slot (its \
                  device's run, then its rank there), its coordinates written there as a \
                  record",
        params: &[
            u64("n", "number of points of the share"),
            int("dim", "dimensions, 2 or 3"),
            input("dest", Elem::Uint, "each point's device"),
            output(
                "slot",
                Elem::Uint,
                "in: each point's rank on its device; out: its slot",
            ),
            input("counts", Elem::Uint, "the share's points per device"),
            input("x0", Elem::Real, "slowest coordinates, on the local grids"),
            input("x1", Elem::Real, "second coordinates"),
            input("x2", Elem::Real, "third coordinates (none in 2-D)"),
            u64(
                "record",
                "reals per point's record (dim, padded to whole complex values)",
            ),
            output("records", Elem::Real, "out: the points' records, by slot"),
        ],
        dynamic_local: false,
    },
    KernelDecl {
        name: UNPACK_POINTS,
        purpose: "a multi-device plan's received point records split into coordinate arrays",
        params: &[
            u64("n", "number of points"),
            int("dim", "dimensions, 2 or 3"),
            u64("record", "reals per point's record"),
            input("records", Elem::Real, "the points' records"),
            output("x0", Elem::Real, "out: slowest coordinates"),
            output("x1", Elem::Real, "out: second coordinates"),
            output("x2", Elem::Real, "out: third coordinates (none in 2-D)"),
        ],
        dynamic_local: false,
    },
    KernelDecl {
        name: PERMUTE,
        purpose: "complex values moved by a permutation: to[slot[i]] = from[i], or back, \
                  to[i] = from[slot[i]] (a multi-device plan's strengths and values)",
        params: &[
            u64("n", "number of values"),
            input("slot", Elem::Uint, "the permutation"),
            input("from", Elem::Complex, "the values"),
            output("to", Elem::Complex, "out: the values moved"),
            int(
                "back",
                "1 for to[i] = from[slot[i]], 0 for to[slot[i]] = from[i]",
            ),
        ],
        dynamic_local: false,
    },
    KernelDecl {
        name: MINMAX,
        purpose: "bounding interval of a coordinate array (type 3 set-points): per block a \
                  (min, max)",
        params: &[
            u64("first", FIRST),
            u64("n", "number of elements, from the first"),
            input("x", Elem::Real, "coordinates"),
            output(
                "part",
                Elem::Double,
                "out: (min, max) per block, as doubles",
            ),
        ],
        dynamic_local: false,
    },
    KernelDecl {
        name: T3_SOURCES,
        purpose: "type 3: sources rescaled onto the spreading grid, and their pre-phases",
        params: params!(
            [
                u64("first", FIRST),
                uint("M", "number of points, from the first"),
                DIM
            ],
            X,
            CX,
            IG,
            CS,
            [SGN],
            reals(["y0", "y1", "y2"], true, Y_MEANING),
            [output(
                "pre",
                Elem::Complex,
                "out: the sources' pre-phases, M complex",
            )]
        ),
        dynamic_local: false,
    },
    KernelDecl {
        name: T3_TARGETS,
        purpose: "type 3: targets rescaled for the inner type 2, and their post-factors (phase \
                  over ψ̂)",
        params: params!(
            [
                u64("first", FIRST),
                uint("K", "number of points, from the first"),
                DIM
            ],
            S,
            CS,
            HG,
            CX,
            [
                SGN,
                int("nq", QUADRATURE),
                input("qz", Elem::Double, QUADRATURE),
                input("qw", Elem::Double, QUADRATURE),
                double("alpha", QUADRATURE)
            ],
            U_OUT,
            [POST_OUT]
        ),
        dynamic_local: false,
    },
    KernelDecl {
        name: GW_SPREAD,
        purpose: "Gaussian type 3: spreading with pre-phases onto the wide-window grid",
        params: params!(
            [M],
            X,
            [
                input(
                    "pre",
                    Elem::Complex,
                    "each point's factor (pre-phases; the adjoint's conjugate post-factors)",
                ),
                STRENGTHS,
                GRID_OUT
            ],
            N,
            [E3, Q, CSTRIDE, GSTRIDE, CONJ]
        ),
        dynamic_local: false,
    },
    KernelDecl {
        name: GW_PRECOMP,
        purpose: "Gaussian type 3: pre-compensation of the grid",
        params: &[
            u64("len", "points of one grid, n0 * n1 * n2"),
            output(
                "grid",
                Elem::Complex,
                "fine grids, multiplied in place, `gstride` complex apart",
            ),
            input("p0", Elem::Real, PRECOMP),
            input("p1", Elem::Real, PRECOMP),
            input("p2", Elem::Real, PRECOMP),
            N[1],
            N[2],
            GSTRIDE,
        ],
        dynamic_local: false,
    },
    KernelDecl {
        name: GW_TARGETS,
        purpose: "Gaussian type 3: target factors",
        params: params!(
            [uint("K", "number of points")],
            S,
            CS,
            [double("dx0", DX), double("dx1", DX), double("dx2", DX)],
            CX,
            [SGN, double("b", "the window's shape parameter")],
            U_OUT,
            [POST_OUT]
        ),
        dynamic_local: false,
    },
    KernelDecl {
        name: GW_INTERP,
        purpose: "Gaussian type 3: interpolation with post-factors",
        params: params!(
            [uint("K", "number of points")],
            reals(["u0", "u1", "u2"], false, U_MEANING),
            [
                input(
                    "post",
                    Elem::Complex,
                    "each point's factor (post-factors; the adjoint's conjugate pre-phases)",
                ),
                GRID_IN,
                output(
                    "out",
                    Elem::Complex,
                    "out: values at the points, K complex per transform, `ostride` apart",
                )
            ],
            N,
            [
                E3,
                Q,
                u64(
                    "ostride",
                    "complex values between the transforms' outputs, usually K",
                ),
                GSTRIDE,
                CONJ
            ]
        ),
        dynamic_local: false,
    },
];

const SUB_MEANING: &str = "subproblem list: each subproblem's bin, and its first sorted point";
const NMODES: Param = u64("nmodes", "number of modes, m0 * m1 * m2");
const M1: Param = int("m1", "modes along dimension 1 (1 beyond the dimension)");
const M2: Param = int("m2", "modes along dimension 2 (1 beyond the dimension)");
const MSTRIDE: Param = u64(
    "mstride",
    "complex values between the transforms' mode arrays, usually nmodes",
);
/// The modes↔grid kernels' map: mode counts, each mode's grid index and correction.
const MODE_MAP: [Param; 9] = concat(&[&[NMODES, M1, M2], &GI, &CF]);
/// The modes↔grid kernels' grid sides and strides.
const MODE_STRIDES: [Param; 4] = [N[1], N[2], GSTRIDE, MSTRIDE];
const POST_OUT: Param = output(
    "post",
    Elem::Complex,
    "out: the targets' post-factors, K complex",
);
const MODES_OUT: &str =
    "out: modes, m0 * m1 * m2 complex per transform, `mstride` apart, last dimension fastest";
const Y_MEANING: &str = "out: rescaled source coordinates (null beyond the dimension)";
const U_MEANING: &str = "rescaled target coordinates, radians of the grid (null beyond the \
                         dimension)";
const QUADRATURE: &str =
    "quadrature of ψ̂: node count, nodes on (0, 1], weights times φ, and half the width";
const PRECOMP: &str = "pre-compensation factors along dimension 0, 1, 2 (one 1 beyond the \
                       dimension)";
const DX: &str =
    "the targets' scale onto the grid along dimension 0, 1, 2: u_d = (s_d − cs_d)·dx_d";

#[cfg(test)]
mod tests {
    use super::super::*;
    use super::*;
    use crate::{KernelKind, KernelSpec, Precision, Upsampling};

    /// Every kernel definition in a rendered `source`, as its name and its prototype (name
    /// and parameter list, whitespace collapsed): whatever opens a definition, through the
    /// dialect macros (`KERNEL(threads)`, `ENTRY`) or spelled out (`__global__`,
    /// `__kernel`), so that a prototype written by hand in a template is found too.
    fn definitions(source: &str) -> Vec<(String, String)> {
        let mut found = Vec::new();
        let mut at = 0;
        for line in source.split_inclusive('\n') {
            let start = at;
            at += line.len();
            let t = line.trim_start();
            let opens = t.starts_with("KERNEL(")
                || t.starts_with("ENTRY ")
                || t.contains("__global__")
                || t.contains("__kernel");
            if !opens || t.starts_with('#') || t.starts_with("//") {
                continue;
            }
            // The name is the identifier before the first '(' after the qualifier.
            let skip = if t.starts_with("KERNEL(") {
                line.find(')').expect("KERNEL(threads)") + 1
            } else {
                0
            };
            let open = start + skip + line[skip..].find('(').expect("a parameter list");
            let name_from = source[..open]
                .rfind(|c: char| !(c.is_alphanumeric() || c == '_'))
                .map_or(0, |i| i + 1);
            let mut depth = 0;
            let close = source[open..]
                .char_indices()
                .find(|&(_, c)| {
                    depth += match c {
                        '(' => 1,
                        ')' => -1,
                        _ => 0,
                    };
                    depth == 0
                })
                .map(|(i, _)| open + i)
                .expect("a closed parameter list");
            found.push((
                source[name_from..open].to_string(),
                collapse(&source[name_from..=close]),
            ));
        }
        found
    }

    fn collapse(s: &str) -> String {
        s.split_whitespace().collect::<Vec<_>>().join(" ")
    }

    /// Every module a plan or `nudt gen` renders, for several specs, in every dialect and
    /// precision.
    fn modules() -> Vec<GpuSource> {
        let dialects = [
            Dialect::Cuda,
            Dialect::OpenCl {
                fp64: true,
                ptx: false,
            },
            Dialect::OpenCl {
                fp64: true,
                ptx: true,
            },
        ];
        let arch = GpuArch::h100();
        let mut out = Vec::new();
        for dialect in dialects {
            for precision in [Precision::F32, Precision::F64] {
                out.push(common_module_in(precision, dialect).unwrap());
                for dim in 1..=3 {
                    for (kind, w) in [(KernelKind::Es, 2), (KernelKind::Pswf, 7)] {
                        let kernel = KernelSpec::for_width(kind, w, Upsampling(2.0)).unwrap();
                        let base = GpuSpreadSpec::new(dim, kernel, precision, &arch).unwrap();
                        for spec in [
                            base.clone(),
                            base.clone().for_spreading(),
                            base.clone().for_sparse_spreading(arch.local_memory()),
                        ] {
                            out.push(spread_module_in(&spec, dialect).unwrap());
                        }
                    }
                    out.push(gaussian_wide_module_in(dim, 9, precision, dialect).unwrap());
                }
            }
        }
        out
    }

    /// The prototypes in the rendered sources are their declarations', and each module
    /// defines exactly the kernels its launch description lists, each once: a template that
    /// writes a prototype by hand, or a kernel listed without its definition, fails here.
    #[test]
    fn rendered_prototypes_are_the_declarations() {
        let mut seen = std::collections::HashSet::new();
        for m in modules() {
            let defs = definitions(&m.source);
            let mut names: Vec<&str> = defs.iter().map(|(n, _)| n.as_str()).collect();
            names.sort_unstable();
            let mut listed: Vec<&str> = m.kernels.iter().map(|k| k.name).collect();
            listed.sort_unstable();
            assert_eq!(names, listed, "{}", m.name);
            for (name, proto) in &defs {
                let decl = declaration(name).unwrap_or_else(|| panic!("{name} undeclared"));
                assert_eq!(proto, &collapse(&decl.prototype()), "{name} in {}", m.name);
                seen.insert(decl.name);
            }
            for k in &m.kernels {
                assert_eq!(k.decl.name, k.name);
                assert_eq!(k.decl.dynamic_local, k.dynamic_smem > 0, "{}", k.name);
            }
        }
        // No declaration without a kernel.
        assert_eq!(seen.len(), KERNELS.len());
    }

    /// Every kernel says what it does and what each parameter means (the README `nudt gen`
    /// writes has no blank), and no kernel names two parameters alike.
    #[test]
    fn every_kernel_and_parameter_is_described() {
        let mut names = std::collections::HashSet::new();
        for k in KERNELS {
            assert!(names.insert(k.name), "{} declared twice", k.name);
            assert!(!k.purpose.is_empty() && !k.params.is_empty(), "{}", k.name);
            let mut params = std::collections::HashSet::new();
            for p in k.params {
                assert!(params.insert(p.name), "{}: {} twice", k.name, p.name);
                assert!(!p.meaning.is_empty(), "{}({})", k.name, p.name);
            }
        }
    }

    #[test]
    fn prototypes_spell_the_dialect_macros() {
        let gm = declaration(names::SPREAD_GM).unwrap().prototype();
        assert!(gm.starts_with(
            "nudt_spread_gm(unsigned M, const GLOBAL unsigned* RESTRICT idx, const GLOBAL T* \
             RESTRICT x0,"
        ));
        assert!(gm.contains("int ntr, u64 cstride, u64 gstride,"), "{gm}");
        assert!(
            gm.ends_with("const GLOBAL unsigned* RESTRICT sets, unsigned nsets, unsigned set0)"),
            "{gm}"
        );
        assert!(gm.lines().all(|l| l.len() <= 100), "{gm}");
        let sm = declaration(names::SPREAD_SM).unwrap().prototype();
        assert!(
            sm.ends_with("unsigned nsets DYNAMIC_LOCAL_PARAM(smem_raw))"),
            "{sm}"
        );
        let cmul = declaration(names::CMUL).unwrap().prototype();
        assert!(cmul.contains("const GLOBAL T2* in,"), "{cmul}");
        assert!(cmul.contains("const GLOBAL T2* RESTRICT fac,"), "{cmul}");
    }

    #[test]
    fn argument_lists_are_checked_against_the_declaration() {
        use ArgKind::*;
        let cmul = declaration(names::CMUL).unwrap();
        let ok = [U64, Buffer, Buffer, U64, Buffer, U64, I32];
        assert_eq!(cmul.check(ok.into_iter(), None), Ok(()));
        assert_eq!(cmul.check(ok.into_iter(), Some(false)), Ok(()));
        assert_eq!(
            cmul.check(ok[..6].iter().copied(), None),
            Err(ArgMismatch::Count {
                kernel: names::CMUL,
                expected: 7,
                got: 6
            })
        );
        let e = cmul
            .check([U64, Buffer, U64, U64, Buffer, U64, I32], None)
            .unwrap_err();
        assert_eq!(
            e,
            ArgMismatch::Kind {
                kernel: names::CMUL,
                index: 2,
                param: "fac",
                expected: Buffer,
                got: U64
            }
        );
        assert_eq!(
            e.to_string(),
            "nudt_cmul: argument 2 (fac) is a u64, the parameter takes a buffer"
        );
        assert_eq!(
            cmul.check(ok.into_iter(), Some(true)),
            Err(ArgMismatch::UnexpectedLocal {
                kernel: names::CMUL
            })
        );
        let sm = declaration(names::SPREAD_SM).unwrap();
        assert!(sm.check(sm.args(), Some(true)).is_ok());
        assert_eq!(
            sm.check(sm.args(), Some(false)),
            Err(ArgMismatch::MissingLocal {
                kernel: names::SPREAD_SM
            })
        );
        assert!(sm.check(sm.args(), None).is_ok());
        assert!(declaration("nudt_none").is_none());
    }
}
