//! Per-transform point sets as the GPU backends hold them: every set's coordinates in one
//! array per dimension, set after set, and where each set starts. One sort then orders all
//! of them (a point's bin is its set's number times a grid's bins plus its bin there: the
//! kernels' `sets` and `set_bins`), and every spreading or interpolation launch covers every
//! set, each onto its own work grid; the batched FFT and deconvolution follow over the stack.
//! CUDA and OpenCL both take their sets from here; shared points are the one set `[0, M]`.

use super::limits::MAX_POINTS;
use super::validate::{check_point_sets, SOURCES};
use crate::error::{NudtError, Result};
use crate::float::Float;

/// Point sets, one per transform, checked and concatenated.
#[derive(Clone, Debug, PartialEq)]
pub struct Concatenated<T> {
    /// Per dimension, every set's coordinates, set after set.
    pub coords: Vec<Vec<T>>,
    /// Where each set starts in `coords`, then the total: `ntransf + 1` values, as the
    /// kernels take them.
    pub starts: Vec<u32>,
    /// Each set's size.
    pub counts: Vec<usize>,
}

impl<T: Float> Concatenated<T> {
    /// `sets[b][d]`, transform b's coordinates along dimension d, checked as
    /// [`check_point_sets`] checks them (a bad set is [`NudtError::InTransform`] naming it),
    /// and concatenated. The sets together are sorted as one set of 32-bit indices, so they
    /// hold at most [`MAX_POINTS`] points together.
    pub fn new(dim: usize, ntransf: usize, sets: &[&[&[T]]]) -> Result<Self> {
        let counts = check_point_sets(dim, ntransf, sets, SOURCES, "point sets")?;
        let total: usize = counts.iter().sum();
        if total > MAX_POINTS {
            return Err(NudtError::TooManyPoints(total));
        }
        let coords = (0..dim)
            .map(|d| sets.iter().flat_map(|set| set[d].iter().copied()).collect())
            .collect();
        let starts = std::iter::once(0)
            .chain(counts.iter().scan(0, |at, &m| {
                *at += m;
                Some(*at as u32)
            }))
            .collect();
        Ok(Concatenated {
            coords,
            starts,
            counts,
        })
    }

    /// The coordinates as the backends upload them, one slice per dimension.
    pub fn slices(&self) -> Vec<&[T]> {
        self.coords.iter().map(Vec::as_slice).collect()
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
        assert_eq!(c.coords, vec![vec![0.1, 0.2, 0.5], vec![0.3, 0.4, 0.6]]);
        assert_eq!(c.starts, vec![0, 2, 2, 3]);
        assert_eq!(c.counts, vec![2, 0, 1]);
        assert!(matches!(
            Concatenated::new(2, 2, &sets),
            Err(NudtError::PointSets { .. })
        ));
    }

    #[test]
    fn the_sort_counts_every_sets_bins_in_u32() {
        assert_eq!(sort_bins(32, 4096), Ok(32 * 4096));
        assert_eq!(sort_bins(2, 1 << 31), Err(NudtError::GridOverflow));
        assert_eq!(shared(5), [0, 5]);
    }
}
