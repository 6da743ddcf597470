//! The derivative rules of [`super`] as data: a list of [`Step`]s over named arrays, which
//! each memory space runs with its own loops or kernels — the host's ([`super::host`]) and
//! the GPUs' (`crate::gpu::gradient`, on the common module's `nudt_scale` and
//! `nudt_grad_reduce`). The rules are written once, here; an executor only binds the names
//! to its arrays, checks the bounds ([`Steps::check`]) and runs the steps in order.
//!
//! Besides the plan's passes, a derivative needs two element-wise operations: a strided,
//! weighted and scaled copy ([`Step::Scale`]: building a pass's `dim + 1` values a point,
//! weighting by coordinates, adding a gradient's term) and a reduction to one real a point
//! ([`Step::Reduce`]: `Re(f·x·conj(y))` summed over the transforms that share the point).

use crate::error::NudtError;
use crate::planner::stages::Pass;
use nudt_gen::TransformType;
use num_complex::Complex;

use super::Wanted;

/// A complex array of a derivative.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Cx {
    /// The transform's input, at which it is differentiated.
    Input,
    /// Reverse mode: the output's cotangent; forward mode: the input's tangent.
    Seed,
    /// Reverse mode: the input's cotangent; forward mode: the output's tangent.
    Result,
    /// A work array of [`Steps::temps`]`[i]` values.
    Temp(usize),
}

/// A set of real arrays (one per dimension) of a derivative.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Set {
    /// Forward mode: the points' (type 3: the sources') tangents.
    PointTangents,
    /// Forward mode, type 3: the target frequencies' tangents.
    TargetTangents,
    /// Type 3: the sources, as set.
    Sources,
    /// Type 3: the target frequencies, as set.
    Targets,
    /// Reverse mode: the points' (type 3: the sources') cotangents, one per point.
    PointCotangents,
    /// Reverse mode, type 3: the target frequencies' cotangents.
    TargetCotangents,
}

impl Set {
    /// The name of the arrays in errors.
    pub fn name(self, ty: TransformType) -> &'static str {
        match (self, ty) {
            (Set::PointTangents, TransformType::Type3) => "source tangents",
            (Set::PointTangents, _) => "point tangents",
            (Set::TargetTangents, _) => "target tangents",
            (Set::Sources, _) => "sources",
            (Set::Targets, _) => "targets",
            (Set::PointCotangents, _) => "point cotangents",
            (Set::TargetCotangents, _) => "target cotangents",
        }
    }
}

/// One real array: dimension `d` of a [`Set`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Re {
    pub set: Set,
    pub d: usize,
}

impl Re {
    pub const fn new(set: Set, d: usize) -> Self {
        Re { set, d }
    }
}

/// Every `stride`-th value of a complex array from `offset`: one of a gradient pass's
/// `dim + 1` values a point, or (stride 1) the array itself.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Strided {
    pub array: Cx,
    pub stride: usize,
    pub offset: usize,
}

impl Strided {
    /// The whole array.
    fn all(array: Cx) -> Self {
        Strided {
            array,
            stride: 1,
            offset: 0,
        }
    }

    /// Slot `offset` of `q` values an element.
    fn slot(array: Cx, q: usize, offset: usize) -> Self {
        Strided {
            array,
            stride: q,
            offset,
        }
    }

    /// The length an array needs for `n` elements.
    fn needs(self, n: usize) -> usize {
        match n {
            0 => 0,
            n => (n - 1) * self.stride + self.offset + 1,
        }
    }
}

/// One step of a derivative.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Step {
    /// A run of the plan (its transform, adjoint or a gradient pass) from one array into
    /// another.
    Run { pass: Pass, from: Cx, to: Cx },
    /// Zeroes an array.
    Zero(Cx),
    /// `to[n] = factor · from[n] · weight[n mod len]` (or `+=` with `add`) for `n < count`,
    /// without weight where there is none.
    Scale {
        to: Strided,
        from: Strided,
        count: usize,
        weight: Option<Re>,
        factor: Complex<f64>,
        add: bool,
    },
    /// `to[j] = Σ_{b < copies} Re(factor · x[b·m + j] · conj(y[b·m + j]))` for `j < m`, and
    /// likewise for the `dims − 1` arrays after `to` (dimensions `to.d + 1 ..`) from the slots
    /// after `x`'s (offsets `x.offset + 1 ..`): every dimension's cotangent from one read of
    /// a point's values.
    Reduce {
        to: Re,
        dims: usize,
        x: Strided,
        y: Cx,
        m: usize,
        copies: usize,
        factor: Complex<f64>,
    },
}

/// A derivative's steps and the sizes of its arrays.
#[derive(Clone, Debug, PartialEq)]
pub struct Steps {
    pub ty: TransformType,
    pub dim: usize,
    /// Complex values of each work array ([`Cx::Temp`]).
    pub temps: Vec<usize>,
    /// Reverse mode (else forward mode).
    pub reverse: bool,
    /// Complex values of [`Cx::Seed`] (0 for none: forward mode without an input tangent).
    pub seed: usize,
    /// Complex values of [`Cx::Result`] (0 where nothing is written there).
    pub result: usize,
    /// The real sets read, with the length of each of their `dim` arrays.
    pub reads: Vec<(Set, usize)>,
    /// The real sets written, with the length of each of their `dim` arrays.
    pub writes: Vec<(Set, usize)>,
    pub list: Vec<Step>,
}

/// The lengths of one executor's arrays, which [`Steps::check`] holds the steps to.
pub struct Lengths<'a> {
    pub input: usize,
    /// 0 where there is none.
    pub seed: usize,
    /// Per set read, the length of each of its arrays (empty for a set not given).
    pub reads: &'a dyn Fn(Set) -> Vec<usize>,
}

impl Steps {
    fn new(ty: TransformType, dim: usize) -> Self {
        Steps {
            ty,
            dim,
            temps: Vec::new(),
            reverse: false,
            seed: 0,
            result: 0,
            reads: Vec::new(),
            writes: Vec::new(),
            list: Vec::new(),
        }
    }

    /// An array's name in errors.
    fn name(&self, a: Cx) -> &'static str {
        match (a, self.reverse) {
            (Cx::Input, _) => "input",
            (Cx::Seed, true) => "cotangent",
            (Cx::Seed, false) => "input tangent",
            (Cx::Result, true) => "input cotangent",
            (Cx::Result, false) => "output tangent",
            (Cx::Temp(_), _) => "work array",
        }
    }

    fn temp(&mut self, len: usize) -> Cx {
        self.temps.push(len);
        Cx::Temp(self.temps.len() - 1)
    }

    fn push(&mut self, step: Step) {
        self.list.push(step);
    }

    /// Reads set `set`, `len` values an array.
    fn read(&mut self, set: Set, len: usize) {
        self.reads.push((set, len));
    }

    /// Checks the given arrays against what the steps read: each set read given, `dim`
    /// arrays of the right length; the seed present where a step reads it; every strided
    /// access inside its array. Executors run no step before this passes, so that a device
    /// kernel never reads or writes outside an array.
    pub fn check(&self, lens: &Lengths<'_>) -> Result<(), NudtError> {
        if lens.seed != self.seed {
            return Err(NudtError::Length {
                what: self.name(Cx::Seed).into(),
                expected: self.seed,
                got: lens.seed,
            });
        }
        for &(set, len) in &self.reads {
            let got = (lens.reads)(set);
            if got.len() != self.dim {
                return Err(NudtError::Coordinates {
                    expected: self.dim,
                    got: got.len(),
                });
            }
            if let Some(&bad) = got.iter().find(|&&g| g != len) {
                return Err(NudtError::Length {
                    what: set.name(self.ty).into(),
                    expected: len,
                    got: bad,
                });
            }
        }
        let len = |a: Cx| match a {
            Cx::Input => lens.input,
            Cx::Seed => lens.seed,
            Cx::Result => self.result,
            Cx::Temp(i) => self.temps[i],
        };
        let within = |s: Strided, n: usize, what: &str| match len(s.array) >= s.needs(n) {
            true => Ok(()),
            false => Err(NudtError::Length {
                what: what.into(),
                expected: s.needs(n),
                got: len(s.array),
            }),
        };
        for step in &self.list {
            match *step {
                Step::Scale {
                    to, from, count, ..
                } => {
                    within(from, count, self.name(from.array))?;
                    within(to, count, self.name(to.array))?;
                }
                Step::Reduce {
                    dims,
                    x,
                    y,
                    m,
                    copies,
                    ..
                } => {
                    let last = Strided {
                        offset: x.offset + dims.max(1) - 1,
                        ..x
                    };
                    within(last, m * copies, self.name(x.array))?;
                    within(Strided::all(y), m * copies, self.name(y))?;
                }
                Step::Run { .. } | Step::Zero(_) => {}
            }
        }
        Ok(())
    }
}

fn i() -> Complex<f64> {
    Complex::new(0.0, 1.0)
}

const ONE: Complex<f64> = Complex::new(1.0, 0.0);

/// How a derivative's plan is set: its transform and dimension, its sign, how many
/// transforms share each point set (`copies`: `ntransf`, or 1 with a set per transform) and,
/// for type 3, the numbers of sources and targets (with a set per transform, the sums).
#[derive(Clone, Copy, Debug)]
pub struct Setting {
    pub ty: TransformType,
    pub dim: usize,
    pub isign: i32,
    pub copies: usize,
    pub type3: Option<(usize, usize)>,
}

impl Setting {
    /// The setting of a plan of `ntransf` transforms, which share one point set or (with
    /// `per_transform`) have one each; `type3`: its numbers of sources and targets (ignored
    /// for types 1 and 2).
    pub fn new(
        (ty, dim, isign): (TransformType, usize, i32),
        ntransf: usize,
        per_transform: bool,
        type3: Option<(usize, usize)>,
    ) -> Self {
        Setting {
            ty,
            dim,
            isign,
            copies: if per_transform { 1 } else { ntransf },
            type3: type3.filter(|_| ty == TransformType::Type3),
        }
    }

    /// Type 3's numbers of sources and targets, or the typed error of a plan without.
    fn type3(&self) -> Result<(usize, usize), NudtError> {
        self.type3.ok_or(NudtError::NoGradient {
            why: "a type 3 derivative needs the sources and targets (gradient::Type3Points)",
        })
    }

    /// The points a type 1 or 2 stack of `n` values a point holds per transform.
    fn per_set(&self, n: usize) -> usize {
        n / self.copies.max(1)
    }
}

/// A run of the plan's `pass` from one array into another.
fn run(pass: Pass, from: Cx, to: Cx) -> Step {
    Step::Run { pass, from, to }
}

/// A reduction to `to`, one real for each of `m` points over `copies` transforms.
fn reduce(to: Re, x: Strided, y: Cx, m: usize, copies: usize, factor: Complex<f64>) -> Step {
    Step::Reduce {
        to,
        dims: 1,
        x,
        y,
        m,
        copies,
        factor,
    }
}

/// The reductions to every dimension's cotangent of the points from slots `1..=dim` of a
/// gradient pass's `dim + 1` values a point, one sweep.
fn reduce_slots(x: Cx, dim: usize, y: Cx, m: usize, copies: usize) -> Step {
    Step::Reduce {
        to: Re::new(Set::PointCotangents, 0),
        dims: dim,
        x: Strided::slot(x, dim + 1, 1),
        y,
        m,
        copies,
        factor: ONE,
    }
}

/// The whole of `n` values, in one step that copies, weights or adds.
fn scale(to: Cx, from: Cx, n: usize, weight: Option<Re>, factor: Complex<f64>, add: bool) -> Step {
    Step::Scale {
        to: Strided::all(to),
        from: Strided::all(from),
        count: n,
        weight,
        factor,
        add,
    }
}

/// Reverse mode at an input of `input` values and a cotangent of `output` values: the
/// steps giving what `wanted` asks for ([`super::vjp`]'s rules).
pub fn vjp(
    s: &Setting,
    (input, output): (usize, usize),
    wanted: Wanted,
) -> Result<Steps, NudtError> {
    let (dim, q) = (s.dim, s.dim + 1);
    let mut st = Steps::new(s.ty, dim);
    st.reverse = true;
    st.seed = output;
    match s.ty {
        TransformType::Type1 => {
            // One adjoint with the gradient: h and ∇h at every point.
            let h = st.temp(input * q);
            st.push(run(Pass::gradient(true), Cx::Seed, h));
            if wanted.input {
                st.result = input;
                st.push(Step::Scale {
                    to: Strided::all(Cx::Result),
                    from: Strided::slot(h, q, 0),
                    count: input,
                    weight: None,
                    factor: ONE,
                    add: false,
                });
            }
            if wanted.points {
                let m = s.per_set(input);
                st.writes.push((Set::PointCotangents, m));
                // Re(c_j·conj(∂_d h(x_j))) = Re(∂_d h(x_j)·conj(c_j)).
                st.push(reduce_slots(h, dim, Cx::Input, m, s.copies));
            }
        }
        TransformType::Type2 => {
            if wanted.input {
                st.result = input;
                st.push(run(Pass::transform(true), Cx::Seed, Cx::Result));
            }
            if wanted.points {
                let u = st.temp(output * q);
                st.push(run(Pass::gradient(false), Cx::Input, u));
                let m = s.per_set(output);
                st.writes.push((Set::PointCotangents, m));
                // Re(conj(g_j)·∂_d u(x_j)).
                st.push(reduce_slots(u, dim, Cx::Seed, m, s.copies));
            }
        }
        TransformType::Type3 => {
            let (m, k) = s.type3()?;
            st.read(Set::Sources, m);
            st.read(Set::Targets, k);
            let is = i() * f64::from(s.isign);
            if wanted.input {
                st.result = input;
                st.push(run(Pass::transform(true), Cx::Seed, Cx::Result));
            }
            let (at_out, at_in) = (st.temp(output), st.temp(input));
            if wanted.points {
                st.writes.push((Set::PointCotangents, m));
                for d in 0..dim {
                    // Re(s·i·c_j·conj(Aᴴ(g∘s_d)_j)).
                    let w = Re::new(Set::Targets, d);
                    st.push(scale(at_out, Cx::Seed, output, Some(w), ONE, false));
                    st.push(run(Pass::transform(true), at_out, at_in));
                    st.push(reduce(
                        Re::new(Set::PointCotangents, d),
                        Strided::all(Cx::Input),
                        at_in,
                        m,
                        input / m.max(1),
                        is,
                    ));
                }
            }
            if wanted.targets {
                st.writes.push((Set::TargetCotangents, k));
                for d in 0..dim {
                    // Re(conj(g_k)·s·i·A(c∘x_d)_k).
                    let w = Re::new(Set::Sources, d);
                    st.push(scale(at_in, Cx::Input, input, Some(w), ONE, false));
                    st.push(run(Pass::transform(false), at_in, at_out));
                    st.push(reduce(
                        Re::new(Set::TargetCotangents, d),
                        Strided::all(at_out),
                        Cx::Seed,
                        k,
                        output / k.max(1),
                        is,
                    ));
                }
            }
        }
    }
    Ok(st)
}

/// Which tangents a forward-mode derivative is given.
#[derive(Clone, Copy, Debug)]
pub struct Given {
    pub input: bool,
    pub points: bool,
    pub targets: bool,
}

/// Forward mode at an input of `input` values into an output of `output` values, for the
/// tangents `given` ([`super::jvp`]'s rules).
pub fn jvp(s: &Setting, (input, output): (usize, usize), given: Given) -> Result<Steps, NudtError> {
    let (dim, q) = (s.dim, s.dim + 1);
    let mut st = Steps::new(s.ty, dim);
    st.result = output;
    st.seed = if given.input { input } else { 0 };
    let tangent = |set, d| Some(Re { set, d });
    // The input tangent's transform, or zeros for the terms below to add to.
    let start = |st: &mut Steps| match given.input {
        true => st.push(run(Pass::transform(false), Cx::Seed, Cx::Result)),
        false => st.push(Step::Zero(Cx::Result)),
    };
    match s.ty {
        TransformType::Type1 => {
            if !given.input && !given.points {
                st.push(Step::Zero(Cx::Result));
                return Ok(st);
            }
            // One type 1 of (δc_j, c_j·δx_j) with the kernel's derivative.
            let vu = st.temp(input * q);
            if !(given.input && given.points) {
                st.push(Step::Zero(vu));
            }
            if given.input {
                st.push(Step::Scale {
                    to: Strided::slot(vu, q, 0),
                    from: Strided::all(Cx::Seed),
                    count: input,
                    weight: None,
                    factor: ONE,
                    add: false,
                });
            }
            if given.points {
                st.read(Set::PointTangents, s.per_set(input));
                for d in 0..dim {
                    st.push(Step::Scale {
                        to: Strided::slot(vu, q, 1 + d),
                        from: Strided::all(Cx::Input),
                        count: input,
                        weight: tangent(Set::PointTangents, d),
                        factor: ONE,
                        add: false,
                    });
                }
            }
            st.push(run(Pass::gradient(false), vu, Cx::Result));
        }
        TransformType::Type2 => {
            start(&mut st);
            if given.points {
                // ∇u(x_j)·δx_j added.
                st.read(Set::PointTangents, s.per_set(output));
                let u = st.temp(output * q);
                st.push(run(Pass::gradient(false), Cx::Input, u));
                for d in 0..dim {
                    st.push(Step::Scale {
                        to: Strided::all(Cx::Result),
                        from: Strided::slot(u, q, 1 + d),
                        count: output,
                        weight: tangent(Set::PointTangents, d),
                        factor: ONE,
                        add: true,
                    });
                }
            }
        }
        TransformType::Type3 => {
            let (m, k) = s.type3()?;
            start(&mut st);
            // i·s·Σ_d s_kd·A(c∘δx_d)_k, then i·s·Σ_d δs_kd·A(c∘x_d)_k.
            let mut terms = Vec::new();
            if given.points {
                st.read(Set::PointTangents, m);
                st.read(Set::Targets, k);
                terms.push((Set::PointTangents, Set::Targets));
            }
            if given.targets {
                st.read(Set::Sources, m);
                st.read(Set::TargetTangents, k);
                terms.push((Set::Sources, Set::TargetTangents));
            }
            let is = i() * f64::from(s.isign);
            let (weighted, transformed) = (st.temp(input), st.temp(output));
            for (weights, factors) in terms {
                for d in 0..dim {
                    st.push(scale(
                        weighted,
                        Cx::Input,
                        input,
                        tangent(weights, d),
                        ONE,
                        false,
                    ));
                    st.push(run(Pass::transform(false), weighted, transformed));
                    st.push(scale(
                        Cx::Result,
                        transformed,
                        output,
                        tangent(factors, d),
                        is,
                        true,
                    ));
                }
            }
        }
    }
    Ok(st)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn setting(ty: TransformType, copies: usize) -> Setting {
        Setting::new((ty, 2, -1), copies, false, Some((30, 20)))
    }

    /// The checks an executor runs first: a seed of the wrong length, a missing or short set
    /// of reals, and a strided access past its array are typed errors naming the array.
    #[test]
    fn checks_refuse_what_the_steps_would_read_outside() {
        let all = Wanted::ALL;
        let t2 = vjp(&setting(TransformType::Type2, 2), (80, 60), all).unwrap();
        let none = |_| Vec::new();
        let lens = |input, seed| Lengths {
            input,
            seed,
            reads: &none,
        };
        assert_eq!(t2.check(&lens(80, 60)), Ok(()));
        let e = t2.check(&lens(80, 59)).unwrap_err();
        assert!(
            matches!(&e, NudtError::Length { what, .. } if what == "cotangent"),
            "{e}"
        );
        // Type 3 reads its sources and targets: none given, then a short one.
        let t3 = vjp(&setting(TransformType::Type3, 1), (30, 20), all).unwrap();
        let e = t3.check(&lens(30, 20)).unwrap_err();
        assert!(
            matches!(
                e,
                NudtError::Coordinates {
                    expected: 2,
                    got: 0
                }
            ),
            "{e}"
        );
        let short = |set| match set {
            Set::Targets => vec![20, 19],
            _ => vec![30, 30],
        };
        let e = t3
            .check(&Lengths {
                input: 30,
                seed: 20,
                reads: &short,
            })
            .unwrap_err();
        assert!(
            matches!(&e, NudtError::Length { what, .. } if what == "targets"),
            "{e}"
        );
        // A type 1's input shorter than its pass's values a point need.
        let mut t1 = vjp(&setting(TransformType::Type1, 1), (30, 80), all).unwrap();
        t1.temps[0] -= 1;
        let e = t1.check(&lens(30, 80)).unwrap_err();
        assert!(
            matches!(&e, NudtError::Length { what, .. } if what == "work array"),
            "{e}"
        );
    }

    /// The rules' shapes: a type 1's reverse mode is one adjoint gradient pass and a
    /// reduction a dimension summed over the transforms sharing the points; forward mode
    /// without tangents only zeroes the output.
    #[test]
    fn rules_take_one_pass_for_types_1_and_2() {
        let st = vjp(&setting(TransformType::Type1, 3), (90, 80), Wanted::ALL).unwrap();
        let runs = st
            .list
            .iter()
            .filter(|s| matches!(s, Step::Run { .. }))
            .count();
        assert_eq!(runs, 1);
        assert_eq!(st.writes, vec![(Set::PointCotangents, 30)]);
        assert!(st.list.iter().any(|s| matches!(
            s,
            Step::Reduce {
                copies: 3,
                m: 30,
                ..
            }
        )));
        let given = Given {
            input: false,
            points: false,
            targets: false,
        };
        let st = jvp(&setting(TransformType::Type1, 1), (30, 80), given).unwrap();
        assert_eq!(st.list, vec![Step::Zero(Cx::Result)]);
    }
}
