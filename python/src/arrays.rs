//! Borrowing numpy arrays as Rust slices, without copies.
//!
//! The Python layer hands over C-contiguous arrays of the plan's dtype (copying only input
//! that is not); these checks repeat that contract at the boundary, so that a direct caller of
//! `nudt._nudt` gets a `TypeError`/`ValueError` rather than a wrong answer. rust-numpy's
//! borrow tracking refuses an `out` that overlaps an input.

use crate::errors::value_error;
use num_complex::Complex;
use numpy::{BorrowError, Element, PyArrayDyn, PyArrayMethods, PyUntypedArrayMethods};
use numpy::{PyReadonlyArrayDyn, PyReadwriteArrayDyn};
use pyo3::exceptions::PyTypeError;
use pyo3::prelude::*;

fn typed<'a, 'py, T: Element>(
    a: &'a Bound<'py, PyAny>,
    name: &str,
) -> PyResult<&'a Bound<'py, PyArrayDyn<T>>> {
    let py = a.py();
    a.cast::<PyArrayDyn<T>>().map_err(|_| {
        let got = match a.cast::<numpy::PyUntypedArray>() {
            Ok(u) => format!("an array of dtype {}", u.dtype()),
            Err(_) => format!(
                "a {}",
                a.get_type().name().map_or("?".into(), |n| n.to_string())
            ),
        };
        let want = numpy::dtype::<T>(py);
        PyTypeError::new_err(format!(
            "argument `{name}` must be a numpy array of dtype {want}, got {got}"
        ))
    })
}

/// `a` as an array of `T`, C-contiguous.
fn checked<'a, 'py, T: Element>(
    a: &'a Bound<'py, PyAny>,
    name: &str,
) -> PyResult<&'a Bound<'py, PyArrayDyn<T>>> {
    let arr = typed::<T>(a, name)?;
    if !arr.is_c_contiguous() {
        return Err(value_error(
            a.py(),
            format!("argument `{name}` must be C-contiguous"),
        ));
    }
    Ok(arr)
}

/// `a` as a read-only array of `T`, C-contiguous.
pub fn readonly<'py, T: Element>(
    a: &Bound<'py, PyAny>,
    name: &str,
) -> PyResult<PyReadonlyArrayDyn<'py, T>> {
    checked::<T>(a, name)?
        .try_readonly()
        .map_err(|e| value_error(a.py(), format!("argument `{name}`: {e}")))
}

/// Each of `arrays` as [`readonly`], named by `names` in errors (one per array).
pub fn readonly_all<'py, T: Element>(
    arrays: &[Bound<'py, PyAny>],
    names: &[&str],
) -> PyResult<Vec<PyReadonlyArrayDyn<'py, T>>> {
    arrays
        .iter()
        .zip(names)
        .map(|(a, n)| readonly::<T>(a, n))
        .collect()
}

/// The values of a [`readonly`] array.
pub fn slice<'a, T: Element>(a: &'a PyReadonlyArrayDyn<'_, T>) -> &'a [T] {
    a.as_slice().expect("readonly() checked C order")
}

/// The values of each of `arrays`.
pub fn slices<'a, T: Element>(arrays: &'a [PyReadonlyArrayDyn<'_, T>]) -> Vec<&'a [T]> {
    arrays.iter().map(slice).collect()
}

/// An execute's arrays: `data` as [`readonly`] and `out` as [`readwrite`] complex arrays of
/// `T`, handed to `run` as slices.
pub fn with_io<T, R>(
    (data, out): (&Bound<'_, PyAny>, &Bound<'_, PyAny>),
    run: impl FnOnce(&[Complex<T>], &mut [Complex<T>]) -> PyResult<R>,
) -> PyResult<R>
where
    Complex<T>: Element,
{
    let input = readonly::<Complex<T>>(data, "data")?;
    let mut output = readwrite::<Complex<T>>(out, "out")?;
    let output = output.as_slice_mut().expect("readwrite() checked C order");
    run(slice(&input), output)
}

/// `a` as a writeable array of `T`, C-contiguous, not overlapping any array borrowed before.
pub fn readwrite<'py, T: Element>(
    a: &Bound<'py, PyAny>,
    name: &str,
) -> PyResult<PyReadwriteArrayDyn<'py, T>> {
    checked::<T>(a, name)?.try_readwrite().map_err(|e| match e {
        BorrowError::NotWriteable => {
            PyTypeError::new_err(format!("argument `{name}` must be writeable"))
        }
        _ => value_error(
            a.py(),
            format!(
                "argument `{name}` shares memory with an input array, or with the `out` of a \
                 call running on another thread"
            ),
        ),
    })
}

/// The point sets of a plan with a set per transform: `coords` (one array per dimension, the
/// concatenation of the transforms' sets) cut into `counts[b]` points for transform b,
/// `sets[b][d]`; a `ValueError` if the counts do not add up to the arrays' length.
pub fn per_transform<'a, T>(
    py: Python<'_>,
    coords: &[&'a [T]],
    counts: &[usize],
    what: &str,
) -> PyResult<Vec<Vec<&'a [T]>>> {
    let total: usize = counts.iter().sum();
    if let Some(a) = coords.iter().find(|a| a.len() != total) {
        return Err(value_error(
            py,
            format!(
                "{what}: the counts per transform add up to {total}, the arrays hold {}",
                a.len()
            ),
        ));
    }
    let mut at = 0;
    Ok(counts
        .iter()
        .map(|&m| {
            at += m;
            coords.iter().map(|a| &a[at - m..at]).collect()
        })
        .collect())
}
