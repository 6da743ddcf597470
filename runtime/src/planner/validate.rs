//! Every check a plan makes of its parameters and point sets, once for every backend: the
//! same bad input gives the same [`NudtError`] on the CPU, CUDA and OpenCL.

use super::limits::{MAX_GRID_SIDE, MAX_POINTS};
use crate::error::{NudtError, Result};
use crate::float::Float;
use nudt_gen::{GenError, TransformType};

/// Names of the source (type 1/2 points, type 3 sources) coordinate arrays by dimension.
pub const SOURCES: [&str; 3] = ["x", "y", "z"];
/// Names of type 3's target frequency arrays by dimension.
pub const TARGETS: [&str; 3] = ["s", "t", "u"];

/// Checks what a plan is made with: 1–3 dimensions, `isign` ±1, at least one transform, and
/// at least one mode per dimension whose product fits a `usize` (type 3 passes ones).
pub fn check_parameters(modes: &[usize], isign: i32, ntransf: usize) -> Result<()> {
    if !(1..=3).contains(&modes.len()) {
        return Err(GenError::Dimension(modes.len()).into());
    }
    if isign != 1 && isign != -1 {
        return Err(NudtError::Sign(isign));
    }
    if ntransf == 0 {
        return Err(NudtError::ZeroTransforms);
    }
    if let Some(&m) = modes.iter().find(|&&m| m == 0) {
        return Err(GenError::Modes(m).into());
    }
    // Every later product of mode counts (input and output lengths) is then safe.
    grid_points(modes)?;
    Ok(())
}

/// The type number (1, 2, 3) errors and reports use.
pub fn type_number(ty: TransformType) -> u8 {
    match ty {
        TransformType::Type1 => 1,
        TransformType::Type2 => 2,
        TransformType::Type3 => 3,
    }
}

/// Refuses a call that needs a plan of type `expected` (1 stands for 1 or 2) on a plan of
/// type `actual`.
pub fn check_type(expected: u8, actual: TransformType) -> Result<()> {
    let actual = type_number(actual);
    let fits = match expected {
        3 => actual == 3,
        _ => actual != 3,
    };
    if fits {
        Ok(())
    } else {
        Err(NudtError::WrongType { expected, actual })
    }
}

/// The size of a point set given as `dim` arrays of lengths `lens` (`names` by dimension):
/// one array per dimension, all of one length, at most [`MAX_POINTS`].
pub fn point_count(dim: usize, lens: &[usize], names: [&'static str; 3]) -> Result<usize> {
    point_count_within(dim, lens, names, MAX_POINTS)
}

/// [`point_count`] with at most `max` points: a multi-device plan that shares the points out
/// takes [`MAX_POINTS`] per device, not in all.
pub fn point_count_within(
    dim: usize,
    lens: &[usize],
    names: [&'static str; 3],
    max: usize,
) -> Result<usize> {
    if lens.len() != dim {
        return Err(NudtError::Coordinates {
            expected: dim,
            got: lens.len(),
        });
    }
    let m = lens[0];
    if let Some(d) = lens.iter().position(|&l| l != m) {
        return Err(NudtError::Length {
            what: format!("{} coordinates", names[d]),
            expected: m,
            got: lens[d],
        });
    }
    if m > max {
        return Err(NudtError::TooManyPoints(m));
    }
    Ok(m)
}

/// [`point_count`] of host arrays whose values must be finite too.
pub fn check_coords<T: Float>(
    dim: usize,
    coords: &[&[T]],
    names: [&'static str; 3],
) -> Result<usize> {
    check_coords_within(dim, coords, names, MAX_POINTS)
}

/// [`check_coords`] with at most `max` points ([`point_count_within`]).
pub fn check_coords_within<T: Float>(
    dim: usize,
    coords: &[&[T]],
    names: [&'static str; 3],
    max: usize,
) -> Result<usize> {
    let lens: Vec<usize> = coords.iter().map(|c| c.len()).collect();
    let m = point_count_within(dim, &lens, names, max)?;
    for (c, name) in coords.iter().zip(names) {
        check_finite(name, c)?;
    }
    Ok(m)
}

/// The sizes of point sets given one per transform, from the lengths of their arrays
/// (`lens[b][d]`: transform b's along dimension d): `ntransf` sets (else
/// [`NudtError::PointSets`] naming them `what`), each as [`point_count`] wants one set, or
/// [`NudtError::InTransform`] with the first misshapen set's index and the error a shared
/// set would give. Sets may differ in size, and may be empty.
pub fn point_set_counts(
    dim: usize,
    ntransf: usize,
    lens: &[Vec<usize>],
    names: [&'static str; 3],
    what: &'static str,
) -> Result<Vec<usize>> {
    if lens.len() != ntransf {
        return Err(NudtError::PointSets {
            what,
            expected: ntransf,
            got: lens.len(),
        });
    }
    lens.iter()
        .enumerate()
        .map(|(b, l)| point_count(dim, l, names).map_err(|e| in_transform(b, e)))
        .collect()
}

/// `error` of transform `index`'s own point set.
fn in_transform(index: usize, error: NudtError) -> NudtError {
    NudtError::InTransform {
        index,
        error: Box::new(error),
    }
}

/// [`point_set_counts`] of host arrays (`sets[b][d]`: transform b's coordinates along
/// dimension d) whose values must be finite too: else the first transform's with a
/// non-finite value, [`NudtError::InTransform`] around [`check_finite`]'s error. The shapes
/// are checked first, for every set.
pub fn check_point_sets<T: Float>(
    dim: usize,
    ntransf: usize,
    sets: &[&[&[T]]],
    names: [&'static str; 3],
    what: &'static str,
) -> Result<Vec<usize>> {
    use rayon::prelude::*;
    let lens: Vec<Vec<usize>> = sets
        .iter()
        .map(|set| set.iter().map(|c| c.len()).collect())
        .collect();
    let counts = point_set_counts(dim, ntransf, &lens, names, what)?;
    // Every set's values at once: many small sets leave a pass per set little to share out.
    let bad = sets.par_iter().enumerate().find_map_first(|(b, set)| {
        set.iter()
            .zip(names)
            .try_for_each(|(c, name)| check_finite(name, c))
            .err()
            .map(|e| in_transform(b, e))
    });
    match bad {
        Some(e) => Err(e),
        None => Ok(counts),
    }
}

/// The first non-finite value of `v`, if any, as an error. On every core of the caller's
/// pool, by chunks (2-D, 10⁷ points: 4 ms; rayon's `position_first` over single elements
/// took 70 ms).
pub fn check_finite<T: Float>(what: &'static str, v: &[T]) -> Result<()> {
    use rayon::prelude::*;
    const CHUNK: usize = 1 << 16;
    let first = v
        .par_chunks(CHUNK)
        .enumerate()
        .find_map_first(|(i, c)| c.iter().position(|x| !x.is_finite()).map(|p| i * CHUNK + p));
    match first {
        Some(index) => Err(NudtError::NonFinite {
            what,
            index,
            value: v[index].wide(),
        }),
        None => Ok(()),
    }
}

/// The error for point `index`, whose coordinates (`values`, one per dimension, read back
/// from device arrays) a device's bin count found non-finite: the first such dimension.
pub fn non_finite_point<T: Float>(
    names: [&'static str; 3],
    index: usize,
    values: &[T],
) -> NudtError {
    let (d, v) = values
        .iter()
        .enumerate()
        .find(|(_, v)| !v.is_finite())
        .unwrap_or((0, &values[0]));
    NudtError::NonFinite {
        what: names[d],
        index,
        value: v.wide(),
    }
}

/// Whether a bounding interval reduced on a device (`nudt_minmax`, whose minimum is -∞ where
/// an array holds a non-finite value) shows one. An empty array's (+∞, -∞) does not.
pub fn extent_non_finite((lo, hi): (f64, f64)) -> bool {
    lo == f64::NEG_INFINITY || hi == f64::INFINITY
}

/// Points of a grid of sides `n`, or [`NudtError::GridOverflow`] where they overflow.
pub fn grid_points(n: &[usize]) -> Result<usize> {
    n.iter()
        .try_fold(1usize, |a, &b| a.checked_mul(b))
        .ok_or(NudtError::GridOverflow)
}

/// Refuses fine grids with a side over [`MAX_GRID_SIDE`], a size that overflows, or complex
/// `T` values that would not fit in `memory` bytes (a device's, or this machine's; `None`:
/// not known).
pub fn check_grid<T>(n: &[usize], memory: Option<usize>) -> Result<()> {
    if n.iter().any(|&s| s > MAX_GRID_SIDE) {
        return Err(NudtError::GridOverflow);
    }
    let points = grid_points(n)?;
    let bytes = points
        .checked_mul(2 * std::mem::size_of::<T>())
        .ok_or(NudtError::GridOverflow)?;
    let available = memory.unwrap_or(usize::MAX / 2);
    if bytes > available {
        return Err(NudtError::GridTooLarge {
            points,
            bytes,
            available,
        });
    }
    Ok(())
}

/// This machine's memory (MemTotal, Linux), the figure host plans check their grids
/// against; `None` where the system does not say. Public so that tools sizing their own data
/// (the CLI's benchmark) apply the same limit. Read once per process: every plan and every
/// CPU execute asks, and reading `/proc/meminfo` took 3% of a 1-D type 1 of 10⁴ points.
pub fn physical_memory() -> Option<usize> {
    static MEMORY: std::sync::OnceLock<Option<usize>> = std::sync::OnceLock::new();
    *MEMORY.get_or_init(read_physical_memory)
}

fn read_physical_memory() -> Option<usize> {
    let info = std::fs::read_to_string("/proc/meminfo").ok()?;
    let kb = info
        .lines()
        .find(|l| l.starts_with("MemTotal:"))?
        .split_whitespace()
        .nth(1)?
        .parse::<usize>()
        .ok()?;
    Some(kb.saturating_mul(1024))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn point_sets_are_checked_alike() {
        assert_eq!(point_count(2, &[3, 3], SOURCES), Ok(3));
        assert!(matches!(
            point_count(2, &[3], SOURCES),
            Err(NudtError::Coordinates {
                expected: 2,
                got: 1
            })
        ));
        assert!(matches!(
            point_count(3, &[3, 3, 2], TARGETS),
            Err(NudtError::Length { ref what, expected: 3, got: 2 }) if what == "u coordinates"
        ));
        assert_eq!(
            point_count(1, &[MAX_POINTS + 1], SOURCES),
            Err(NudtError::TooManyPoints(MAX_POINTS + 1))
        );
        let x = [0.0, f64::NAN];
        assert!(matches!(
            check_coords(1, &[&x[..]], SOURCES),
            Err(NudtError::NonFinite {
                what: "x",
                index: 1,
                ..
            })
        ));
    }

    #[test]
    fn per_transform_sets_name_the_transform() {
        let (a, b, nan) = ([0.0, 1.0], [0.5], [0.0, f64::NAN]);
        let ok: [&[f64]; 2] = [&a, &a];
        assert_eq!(
            check_point_sets(2, 2, &[&ok, &[&b, &b]], SOURCES, "point sets"),
            Ok(vec![2, 1])
        );
        assert_eq!(
            check_point_sets(2, 3, &[&ok, &ok], SOURCES, "point sets"),
            Err(NudtError::PointSets {
                what: "point sets",
                expected: 3,
                got: 2
            })
        );
        let short: [&[f64]; 2] = [&a, &b];
        let err = check_point_sets(2, 2, &[&ok, &short], SOURCES, "point sets").unwrap_err();
        assert!(matches!(
            err,
            NudtError::InTransform { index: 1, ref error }
                if matches!(**error, NudtError::Length { expected: 2, got: 1, .. })
        ));
        assert_eq!(
            err.to_string(),
            "transform 1: y coordinates: expected length 2, got 1"
        );
        assert_eq!(
            point_set_counts(
                1,
                2,
                &[vec![3], vec![MAX_POINTS + 1]],
                SOURCES,
                "point sets"
            ),
            Err(in_transform(1, NudtError::TooManyPoints(MAX_POINTS + 1)))
        );
        let err = check_point_sets(1, 3, &[&[&a], &[&nan], &[&nan]], TARGETS, "target sets");
        assert!(matches!(
            err,
            Err(NudtError::InTransform { index: 1, ref error })
                if matches!(**error, NudtError::NonFinite { what: "s", index: 1, .. })
        ));
    }

    #[test]
    fn grids_over_the_side_or_memory_are_refused() {
        assert_eq!(
            check_grid::<f64>(&[MAX_GRID_SIDE + 1], None),
            Err(NudtError::GridOverflow)
        );
        assert_eq!(
            check_grid::<f64>(&[1 << 20, 1 << 20, 1 << 20], None),
            Err(NudtError::GridOverflow)
        );
        assert!(matches!(
            check_grid::<f32>(&[1000, 1000], Some(1 << 20)),
            Err(NudtError::GridTooLarge {
                points: 1_000_000,
                ..
            })
        ));
        assert_eq!(check_grid::<f32>(&[1000, 1000], Some(8_000_000)), Ok(()));
    }

    #[test]
    fn parameters_are_checked_in_order() {
        assert!(check_parameters(&[], 1, 1).is_err());
        assert_eq!(check_parameters(&[4], 2, 1), Err(NudtError::Sign(2)));
        assert_eq!(check_parameters(&[4], 1, 0), Err(NudtError::ZeroTransforms));
        assert_eq!(
            check_parameters(&[4, 0], 1, 1),
            Err(GenError::Modes(0).into())
        );
        assert_eq!(
            check_parameters(&[usize::MAX, 3], 1, 1),
            Err(NudtError::GridOverflow)
        );
        assert_eq!(check_type(1, TransformType::Type2), Ok(()));
        assert_eq!(
            check_type(3, TransformType::Type2),
            Err(NudtError::WrongType {
                expected: 3,
                actual: 2
            })
        );
    }
}
