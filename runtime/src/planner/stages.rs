//! The stage sequences of types 1, 2 and 3, forward and adjoint, written once: a backend
//! implements the few primitive [`Stages`] and [`run`] drives them in the order the
//! transform needs.
//!
//! Types 1 and 2 are spread → FFT → deconvolve and its reverse; type 3 wraps a type 2 (the
//! "inner" transform, on the fine grid) between phase factors, with the points spread onto
//! an outer grid whose values are the inner transform's modes. Each adjoint is the forward's
//! steps in reverse order, each replaced by its adjoint (spread ↔ interpolate, deconvolve ↔
//! its transpose, phases conjugated) with the FFT's sign flipped, on the same grids and
//! sorted points — so an adjoint needs no second plan and has the forward's error.
//!
//! A gradient pass of type 1 or 2 ([`crate::gradient`]) is the same sequence with its points'
//! stage flagged: spreading of values and derivative weights, or interpolation with the
//! gradient (`dim + 1` values a point), through the kernel's derivative.

use nudt_gen::gpu::GridRole;
use nudt_gen::TransformType;

/// The grids a stage can work on.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Grid {
    /// The oversampled grid the FFT runs on (type 3: the inner transform's).
    Fine,
    /// Type 3's grid the points are spread onto: the inner transform's modes.
    Outer,
}

/// The buffers a stage reads or writes, by their role.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Buf {
    /// The caller's input (strengths or modes).
    Input,
    /// The caller's output.
    Output,
    /// Type 3: the input times its phase factors.
    Phased,
    Grid(Grid),
}

/// Type 3's two sets of phase factors.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Factors {
    /// One per source: the centring of the sources.
    Pre,
    /// One per target: the centring of the targets and the kernel's deconvolution.
    Post,
}

impl Factors {
    /// Which of the sources' `pre` and the targets' `post` (each where the sets start and
    /// the factors) these are.
    pub fn pick<A>(self, pre: A, post: A) -> A {
        match self {
            Factors::Pre => pre,
            Factors::Post => post,
        }
    }
}

/// What one run of a plan computes: its transform or the adjoint, and for types 1 and 2 with
/// or without the gradient, where the points' side holds `dim + 1` values a point (a type 2
/// with its gradient, or a type 1 of values and derivative weights: [`crate::gradient`]).
/// Type 3 has no gradient pass (`gradient::check_direction` refuses it before any run).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Pass {
    pub adjoint: bool,
    pub gradient: bool,
}

impl Pass {
    /// The transform, or with `adjoint` its adjoint.
    pub fn transform(adjoint: bool) -> Self {
        Pass {
            adjoint,
            gradient: false,
        }
    }

    /// The gradient pass in the direction of the transform, or with `adjoint` of its adjoint.
    pub fn gradient(adjoint: bool) -> Self {
        Pass {
            adjoint,
            gradient: true,
        }
    }
}

/// One step of a transform, for every transform of a batch at once.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Stage {
    /// Zeroes a grid before something accumulates into it or fills part of it.
    Zero(Grid),
    /// `to = from · factors` elementwise (conjugated factors in `conj`).
    Phase {
        factors: Factors,
        from: Buf,
        to: Buf,
        conj: bool,
    },
    /// Spreads the values at the points onto a grid (adding to it); with `gradient`, values
    /// and derivative weights with the kernel's derivative.
    Spread {
        from: Buf,
        onto: Grid,
        gradient: bool,
    },
    /// Interpolates a grid at the points; with `gradient`, with the derivatives too.
    Interp { from: Grid, to: Buf, gradient: bool },
    /// The FFT of the fine grid, in place, with this sign.
    Fft { isign: i32 },
    /// Deconvolved modes read from the fine grid.
    GridToModes { to: Buf },
    /// Modes divided by the kernel's transform, written into a zeroed fine grid.
    ModesToGrid { from: Buf },
}

/// The steps a backend implements. Each acts on every transform of the current batch.
pub trait Stages {
    type Error;
    fn zero(&mut self, grid: Grid) -> Result<(), Self::Error>;
    fn phase(
        &mut self,
        factors: Factors,
        from: Buf,
        to: Buf,
        conj: bool,
    ) -> Result<(), Self::Error>;
    fn spread(&mut self, from: Buf, onto: Grid, gradient: bool) -> Result<(), Self::Error>;
    fn interp(&mut self, from: Grid, to: Buf, gradient: bool) -> Result<(), Self::Error>;
    fn fft(&mut self, isign: i32) -> Result<(), Self::Error>;
    fn grid_to_modes(&mut self, to: Buf) -> Result<(), Self::Error>;
    fn modes_to_grid(&mut self, from: Buf) -> Result<(), Self::Error>;
}

/// The kernels a type 1 plan's fine grid needs (it spreads; its adjoint interpolates with the
/// same kernels) or a type 2's (it interpolates).
pub fn uniform_role(ty: TransformType) -> GridRole {
    match ty {
        TransformType::Type1 => GridRole::Spread,
        _ => GridRole::Interpolated,
    }
}

/// Type 3's outer grid: sources spread onto it, sparse on a grid sized for their extent.
pub const OUTER_ROLE: GridRole = GridRole::SpreadSparse;
/// Type 3's fine grid: the inner type 2 interpolates it at the targets.
pub const INNER_ROLE: GridRole = GridRole::Interpolated;

/// Type 1 between `from` and `to` (when `spreads`), else type 2; both on the fine grid, with
/// the gradient where `gradient`.
fn uniform(spreads: bool, from: Buf, to: Buf, isign: i32, gradient: bool) -> [Stage; 4] {
    let fine = Grid::Fine;
    if spreads {
        [
            Stage::Zero(fine),
            Stage::Spread {
                from,
                onto: fine,
                gradient,
            },
            Stage::Fft { isign },
            Stage::GridToModes { to },
        ]
    } else {
        [
            Stage::Zero(fine),
            Stage::ModesToGrid { from },
            Stage::Fft { isign },
            Stage::Interp {
                from: fine,
                to,
                gradient,
            },
        ]
    }
}

/// The stages of one run of type `ty` with exponent sign `isign` (the plan's): the transform,
/// its adjoint, or (types 1 and 2) either with the gradient.
pub fn sequence(ty: TransformType, isign: i32, pass: Pass) -> Vec<Stage> {
    let adjoint = pass.adjoint;
    let isign = if adjoint { -isign } else { isign };
    let (input, output) = (Buf::Input, Buf::Output);
    match ty {
        // Type 1 spreads, and so does type 2's adjoint; the others interpolate.
        TransformType::Type1 | TransformType::Type2 => uniform(
            (ty == TransformType::Type1) != adjoint,
            input,
            output,
            isign,
            pass.gradient,
        )
        .to_vec(),
        TransformType::Type3 => {
            let outer = Grid::Outer;
            let (first, last) = match adjoint {
                false => (Factors::Pre, Factors::Post),
                true => (Factors::Post, Factors::Pre),
            };
            let mut s = vec![Stage::Phase {
                factors: first,
                from: input,
                to: Buf::Phased,
                conj: adjoint,
            }];
            if adjoint {
                s.extend(uniform(true, Buf::Phased, Buf::Grid(outer), isign, false));
                s.push(Stage::Interp {
                    from: outer,
                    to: output,
                    gradient: false,
                });
            } else {
                s.push(Stage::Zero(outer));
                s.push(Stage::Spread {
                    from: Buf::Phased,
                    onto: outer,
                    gradient: false,
                });
                s.extend(uniform(false, Buf::Grid(outer), output, isign, false));
            }
            s.push(Stage::Phase {
                factors: last,
                from: output,
                to: output,
                conj: adjoint,
            });
            s
        }
    }
}

/// Runs the stages of one batch of transforms (or their adjoints, or gradient passes) on a
/// backend.
pub fn run<S: Stages>(
    backend: &mut S,
    ty: TransformType,
    isign: i32,
    pass: Pass,
) -> Result<(), S::Error> {
    perform(backend, &sequence(ty, isign, pass))
}

/// Runs `stages` in order on a backend.
pub fn perform<S: Stages>(backend: &mut S, stages: &[Stage]) -> Result<(), S::Error> {
    for &stage in stages {
        match stage {
            Stage::Zero(g) => backend.zero(g)?,
            Stage::Phase {
                factors,
                from,
                to,
                conj,
            } => backend.phase(factors, from, to, conj)?,
            Stage::Spread {
                from,
                onto,
                gradient,
            } => backend.spread(from, onto, gradient)?,
            Stage::Interp { from, to, gradient } => backend.interp(from, to, gradient)?,
            Stage::Fft { isign } => backend.fft(isign)?,
            Stage::GridToModes { to } => backend.grid_to_modes(to)?,
            Stage::ModesToGrid { from } => backend.modes_to_grid(from)?,
        }
    }
    Ok(())
}

/// A type 1 or 2 pass split over devices ([`super::devices`]): the stages at the points, on
/// each device's local grid (zero and spread, or interpolate), and the grid's stages (FFT and
/// modes, or modes and FFT), which run on the fast axes' planes and on the slow axis'
/// columns alike (the FFT and the corrections are separable), with whether the pass spreads
/// (then the points' stages run first). The same sequence as one device's, cut in two.
pub fn split_sequence(ty: TransformType, isign: i32, pass: Pass) -> (Vec<Stage>, Vec<Stage>, bool) {
    let mut s = sequence(ty, isign, pass);
    let at = s
        .iter()
        .position(|st| matches!(st, Stage::Spread { .. } | Stage::Interp { .. }))
        .expect("types 1 and 2 have a stage at the points");
    let spreads = matches!(s[at], Stage::Spread { .. });
    let grid = s.split_off(at + spreads as usize);
    match spreads {
        true => (s, grid, true),
        false => (grid, s, false),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashSet;

    const TYPES: [TransformType; 3] = [
        TransformType::Type1,
        TransformType::Type2,
        TransformType::Type3,
    ];

    /// What each stage reads and writes, and whether it adds into what it writes (or writes
    /// only part of it) rather than overwriting all of it.
    fn effects(s: Stage) -> (Vec<Buf>, Buf, bool) {
        let (fine, g) = (Buf::Grid(Grid::Fine), Buf::Grid);
        match s {
            Stage::Zero(grid) => (vec![], g(grid), false),
            Stage::Phase { from, to, .. } => (vec![from], to, false),
            Stage::Spread { from, onto, .. } => (vec![from], g(onto), true),
            Stage::Interp { from, to, .. } => (vec![g(from)], to, false),
            Stage::Fft { .. } => (vec![fine], fine, false),
            Stage::GridToModes { to } => (vec![fine], to, false),
            Stage::ModesToGrid { from } => (vec![from], fine, true),
        }
    }

    /// Every buffer a stage reads holds what an earlier stage wrote (or is the input), the
    /// output is written, and the input never is.
    #[test]
    fn every_read_follows_a_write() {
        for ty in TYPES {
            for adjoint in [false, true] {
                let mut written = HashSet::from([Buf::Input]);
                for stage in sequence(ty, 1, Pass::transform(adjoint)) {
                    let (reads, writes, _) = effects(stage);
                    for r in reads {
                        assert!(
                            written.contains(&r),
                            "{ty:?} adj {adjoint}: {stage:?} reads {r:?}"
                        );
                    }
                    assert_ne!(writes, Buf::Input, "{ty:?} adj {adjoint}: {stage:?}");
                    written.insert(writes);
                }
                assert!(written.contains(&Buf::Output), "{ty:?} adj {adjoint}");
            }
        }
    }

    /// A pass split over devices keeps one device's stages, cut between the points' stages
    /// and the grid's: spreading passes zero and spread first, interpolating ones end there.
    #[test]
    fn split_sequences_are_the_sequence_cut() {
        for ty in [TransformType::Type1, TransformType::Type2] {
            for adjoint in [false, true] {
                let pass = Pass::transform(adjoint);
                let whole = sequence(ty, -1, pass);
                let (points, grid, spreads) = split_sequence(ty, -1, pass);
                assert_eq!(spreads, (ty == TransformType::Type1) != adjoint);
                let joined = match spreads {
                    true => [points.clone(), grid.clone()].concat(),
                    false => [grid.clone(), points.clone()].concat(),
                };
                assert_eq!(joined, whole);
                assert!(grid
                    .iter()
                    .all(|s| !matches!(s, Stage::Spread { .. } | Stage::Interp { .. })));
                assert!(points
                    .iter()
                    .any(|s| matches!(s, Stage::Spread { .. } | Stage::Interp { .. })));
            }
        }
    }

    /// Every grid is zeroed before it is first accumulated into, in every sequence.
    #[test]
    fn grids_are_zeroed_before_accumulating() {
        for ty in TYPES {
            for adjoint in [false, true] {
                let mut zeroed = HashSet::new();
                for stage in sequence(ty, 1, Pass::transform(adjoint)) {
                    let (_, writes, accumulates) = effects(stage);
                    if let Stage::Zero(g) = stage {
                        zeroed.insert(Buf::Grid(g));
                    } else if accumulates {
                        assert!(zeroed.contains(&writes), "{ty:?} adj {adjoint}: {stage:?}");
                    }
                }
            }
        }
    }

    /// One FFT per transform, with the plan's sign forward and the opposite in the adjoint;
    /// an adjoint spreads where its forward interpolates, grid for grid.
    #[test]
    fn adjoints_mirror_their_forwards() {
        for ty in TYPES {
            for isign in [1, -1] {
                let fw = sequence(ty, isign, Pass::transform(false));
                let adj = sequence(ty, isign, Pass::transform(true));
                let ffts = |s: &[Stage]| -> Vec<i32> {
                    s.iter()
                        .filter_map(|st| match st {
                            Stage::Fft { isign } => Some(*isign),
                            _ => None,
                        })
                        .collect()
                };
                assert_eq!(ffts(&fw), vec![isign]);
                assert_eq!(ffts(&adj), vec![-isign]);
                let spreads = |s: &[Stage]| -> Vec<Grid> {
                    s.iter()
                        .filter_map(|st| match st {
                            Stage::Spread { onto, .. } => Some(*onto),
                            _ => None,
                        })
                        .collect()
                };
                let interps = |s: &[Stage]| -> Vec<Grid> {
                    s.iter()
                        .rev()
                        .filter_map(|st| match st {
                            Stage::Interp { from, .. } => Some(*from),
                            _ => None,
                        })
                        .collect()
                };
                assert_eq!(spreads(&fw), interps(&adj), "{ty:?}");
                assert_eq!(interps(&fw), spreads(&adj), "{ty:?}");
            }
        }
    }

    /// A gradient pass of type 1 or 2 is its transform's sequence with the one stage at the
    /// points (the spread or the interpolation) flagged, in both directions.
    #[test]
    fn gradient_passes_flag_the_points_stage_only() {
        for ty in [TransformType::Type1, TransformType::Type2] {
            for adjoint in [false, true] {
                let plain = sequence(ty, 1, Pass::transform(adjoint));
                let grad = sequence(ty, 1, Pass::gradient(adjoint));
                assert_eq!(plain.len(), grad.len());
                let mut flagged = 0;
                for (p, g) in plain.iter().zip(&grad) {
                    match (*p, *g) {
                        (
                            Stage::Spread { from, onto, .. },
                            Stage::Spread {
                                from: f,
                                onto: o,
                                gradient: true,
                            },
                        ) => {
                            assert_eq!((from, onto), (f, o));
                            flagged += 1;
                        }
                        (
                            Stage::Interp { from, to, .. },
                            Stage::Interp {
                                from: f,
                                to: t,
                                gradient: true,
                            },
                        ) => {
                            assert_eq!((from, to), (f, t));
                            flagged += 1;
                        }
                        _ => assert_eq!(p, g, "{ty:?} adj {adjoint}"),
                    }
                }
                assert_eq!(flagged, 1, "{ty:?} adj {adjoint}");
                assert!(plain.iter().all(|s| !matches!(
                    s,
                    Stage::Spread { gradient: true, .. } | Stage::Interp { gradient: true, .. }
                )));
            }
        }
    }
}
