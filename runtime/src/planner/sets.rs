//! Per-transform point sets as the GPU backends hold them: every set's coordinates in one
//! array per dimension, set after set, and where each set starts. One sort orders all of
//! them (a point's bin is its set's number times a grid's bins plus its bin there: the
//! kernels' `sets` and `set_bins`), so the sets of consecutive transforms are one run of
//! sorted points and bins; a plan runs them in its own batches ([`Batch`]), each spreading
//! or interpolation launch covering a batch's sets, each onto its own work grid, and the
//! batched FFT and deconvolution following over the batch's grids. CUDA and OpenCL both take
//! their sets from here; shared points are the one set `[0, M]`.

use super::limits::MAX_POINTS;
use super::validate::{check_point_sets, non_finite_point, SOURCES};
use crate::error::{NudtError, Result};
use crate::float::Float;

/// Point sets, one per transform, checked, and where each starts in their concatenation
/// (the backends upload them there set by set, with no copy on the host).
#[derive(Clone, Debug, PartialEq)]
pub struct Concatenated {
    /// Where each set starts, then the total: `ntransf + 1` values, as the kernels take them.
    pub starts: Vec<u32>,
    /// Each set's size.
    pub counts: Vec<usize>,
}

impl Concatenated {
    /// `sets[b][d]`, transform b's coordinates along dimension d, checked as
    /// [`check_point_sets`] checks them (a bad set is [`NudtError::InTransform`] naming it).
    /// The sets together are sorted as one set of 32-bit indices, so they hold at most
    /// [`MAX_POINTS`] points together.
    pub fn new<T: Float>(dim: usize, ntransf: usize, sets: &[&[&[T]]]) -> Result<Self> {
        Self::named(dim, ntransf, sets, SOURCES, "point sets")
    }

    /// [`Self::new`] for sets whose coordinates are called `names` and which together are
    /// `what` (a type 3's sources or targets) in errors.
    pub fn named<T: Float>(
        dim: usize,
        ntransf: usize,
        sets: &[&[&[T]]],
        names: [&'static str; 3],
        what: &'static str,
    ) -> Result<Self> {
        Self::of_counts(check_point_sets(dim, ntransf, sets, names, what)?)
    }

    /// Sets already concatenated on a device, each dimension's array `m` long: `counts`, one
    /// per transform, must number `ntransf` and add up to `m` (the arrays' length).
    pub fn from_counts(ntransf: usize, counts: &[usize], m: usize) -> Result<Self> {
        if counts.len() != ntransf {
            return Err(NudtError::PointSets {
                what: "point counts",
                expected: ntransf,
                got: counts.len(),
            });
        }
        let total = counts.iter().fold(0usize, |a, &c| a.saturating_add(c));
        if total != m {
            return Err(NudtError::Length {
                what: "the point counts' sum (the coordinate arrays' length)".into(),
                expected: m,
                got: total,
            });
        }
        Self::of_counts(counts.to_vec())
    }

    /// The sets sorted together as one set of 32-bit indices hold at most [`MAX_POINTS`]
    /// points together.
    fn of_counts(counts: Vec<usize>) -> Result<Self> {
        let total = counts.iter().fold(0usize, |a, &c| a.saturating_add(c));
        if total > MAX_POINTS {
            return Err(NudtError::TooManyPoints(total));
        }
        let starts = std::iter::once(0)
            .chain(counts.iter().scan(0, |at, &m| {
                *at += m;
                Some(*at as u32)
            }))
            .collect();
        Ok(Concatenated { starts, counts })
    }
}

/// The error of a non-finite coordinate that a device's sort found at `index` of the sets
/// starting at `starts` (its coordinates `values`): [`non_finite_point`]'s, inside
/// [`NudtError::InTransform`] at its place in its own set where each transform has one.
pub fn non_finite<T: Float>(starts: &[u32], index: usize, values: &[T]) -> NudtError {
    if starts.len() <= 2 {
        return non_finite_point(SOURCES, index, values);
    }
    let set = starts[1..].partition_point(|&s| s as usize <= index);
    NudtError::InTransform {
        index: set,
        error: Box::new(non_finite_point(
            SOURCES,
            index - starts[set] as usize,
            values,
        )),
    }
}

/// The starts of one set of `m` points that every transform shares.
pub fn shared(m: usize) -> [u32; 2] {
    [0, m as u32]
}

/// Bins of the sort of `nsets` sets on a grid of `nbins` bins: their product, within the
/// half of `u32` whose top bit the GPU scans keep free; beyond, [`NudtError::GridOverflow`].
pub fn sort_bins(nsets: usize, nbins: usize) -> Result<usize> {
    nsets
        .checked_mul(nbins)
        .filter(|&b| b <= u32::MAX as usize / 2)
        .ok_or(NudtError::GridOverflow)
}

/// One batch of a stack of transforms, as a GPU plan runs it: its transforms, where its
/// inputs and outputs lie in the stack's (complex values), and the point sets its launches
/// cover.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Batch {
    /// Its first transform and their number.
    pub first: usize,
    pub count: usize,
    pub input: std::ops::Range<usize>,
    pub output: std::ops::Range<usize>,
}

/// The batches of at most `batch` transforms of a stack whose transforms take and give
/// `each` (input, output) values: every transform's vectors follow the one's before, for a
/// shared set as for a set per transform, so a batch's are one range of the stack's.
pub fn batches(each: &[(usize, usize)], batch: usize) -> Vec<Batch> {
    let mut at = (0, 0);
    let mut first = 0;
    each.chunks(batch.max(1))
        .map(|c| {
            let (a, b) = c.iter().fold((0, 0), |s, l| (s.0 + l.0, s.1 + l.1));
            let out = Batch {
                first,
                count: c.len(),
                input: at.0..at.0 + a,
                output: at.1..at.1 + b,
            };
            (at, first) = ((at.0 + a, at.1 + b), first + c.len());
            out
        })
        .collect()
}

/// What a spreading or interpolation launch over transforms `first .. first + count` covers,
/// of `nsets` sorted sets: the first set, the number of sets, and the transforms per set —
/// the one shared set for all `count`, or sets `first ..` one transform each (the kernels'
/// `set0`, `nsets` and `ntr`).
pub fn launch_sets(nsets: usize, first: usize, count: usize) -> (usize, usize, usize) {
    match nsets {
        1 => (0, 1, count),
        _ => (first, count, 1),
    }
}

/// Points of sets `set0 .. set0 + nsets`, from the sets' starts.
pub fn points_of(starts: &[u32], set0: usize, nsets: usize) -> usize {
    (starts[set0 + nsets] - starts[set0]) as usize
}

/// What an element-wise step over the points of transforms `first .. first + count` covers
/// (type 3's phase factors, one per point of sets starting at `starts`): the first point,
/// the points a transform, and the transforms — the one shared set `count` times, or the
/// batch's sets as one run.
pub fn point_span(starts: &[u32], first: usize, count: usize) -> (usize, usize, usize) {
    let (set0, nsets, ntr) = launch_sets(starts.len() - 1, first, count);
    (starts[set0] as usize, points_of(starts, set0, nsets), ntr)
}

/// The most values a batch of `batch` transforms (the plan's batches, [`batches`]) holds at
/// the points of sets starting at `starts`: type 3's phased inputs.
pub fn batch_points(starts: &[u32], batch: usize) -> usize {
    let nsets = starts.len() - 1;
    if nsets == 1 {
        return points_of(starts, 0, 1) * batch;
    }
    (0..nsets)
        .step_by(batch.max(1))
        .map(|first| {
            let (_, n, ntr) = point_span(starts, first, batch.min(nsets - first));
            n * ntr
        })
        .max()
        .unwrap_or(0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sets_are_concatenated_with_their_starts() {
        let (x0, y0) = ([0.1, 0.2], [0.3, 0.4]);
        let (x2, y2) = ([0.5], [0.6]);
        let empty: [f64; 0] = [];
        let sets: [&[&[f64]]; 3] = [&[&x0, &y0], &[&empty, &empty], &[&x2, &y2]];
        let c = Concatenated::new(2, 3, &sets).unwrap();
        assert_eq!(c.starts, vec![0, 2, 2, 3]);
        assert_eq!(c.counts, vec![2, 0, 1]);
        assert!(matches!(
            Concatenated::new(2, 2, &sets),
            Err(NudtError::PointSets { .. })
        ));
        assert_eq!(points_of(&c.starts, 1, 2), 1);
        assert_eq!(launch_sets(3, 1, 2), (1, 2, 1));
        assert_eq!(launch_sets(1, 8, 4), (0, 1, 4));
        let starts = [0, 5, 5, 12, 13];
        assert_eq!(point_span(&starts, 1, 2), (5, 7, 1));
        assert_eq!(point_span(&[0, 9], 4, 3), (0, 9, 3));
        assert_eq!(batch_points(&starts, 2), 8);
        assert_eq!(batch_points(&starts, 3), 12);
        assert_eq!(batch_points(&starts, 1), 7);
        assert_eq!(batch_points(&[0, 9], 4), 36);
        assert_eq!(Concatenated::from_counts(3, &[2, 0, 1], 3), Ok(c));
        assert!(matches!(
            Concatenated::from_counts(2, &[2, 0, 1], 3),
            Err(NudtError::PointSets { .. })
        ));
        assert!(matches!(
            Concatenated::from_counts(3, &[2, 0, 2], 3),
            Err(NudtError::Length {
                expected: 3,
                got: 4,
                ..
            })
        ));
    }

    #[test]
    fn a_bad_point_is_named_in_its_own_set() {
        let bad = [0.5, f64::NAN];
        let in_set = |e: NudtError| match e {
            NudtError::InTransform { index, error } => match *error {
                NudtError::NonFinite { what, index: i, .. } => Some((index, what, i)),
                _ => None,
            },
            _ => None,
        };
        // Sets [0, 2), [2, 2) and [2, 5): point 3 is set 2's point 1.
        assert_eq!(
            in_set(non_finite(&[0, 2, 2, 5], 3, &bad)),
            Some((2, "y", 1))
        );
        assert_eq!(
            in_set(non_finite(&[0, 2, 2, 5], 0, &bad)),
            Some((0, "y", 0))
        );
        assert!(matches!(
            non_finite(&shared(5), 3, &bad),
            NudtError::NonFinite { index: 3, .. }
        ));
    }

    #[test]
    fn a_stack_runs_in_batches_of_consecutive_vectors() {
        let each = [(2, 9), (0, 9), (5, 9)];
        let b = batches(&each, 2);
        assert_eq!(
            b,
            vec![
                Batch {
                    first: 0,
                    count: 2,
                    input: 0..2,
                    output: 0..18
                },
                Batch {
                    first: 2,
                    count: 1,
                    input: 2..7,
                    output: 18..27
                },
            ]
        );
        assert_eq!(batches(&each, 8).len(), 1);
    }

    #[test]
    fn the_sort_counts_every_sets_bins_in_u32() {
        assert_eq!(sort_bins(32, 4096), Ok(32 * 4096));
        assert_eq!(sort_bins(2, 1 << 31), Err(NudtError::GridOverflow));
        assert_eq!(shared(5), [0, 5]);
    }
}
