//! NumPy `.npy` input and output (npyz) for `nudt transform` — real coordinate arrays, complex
//! data arrays in either precision and either memory order, atomic writes — and for the data
//! `nudt bench` shares with its peers.

use super::{fail, warnln, write_atomic, Result};
use npyz::{DType, NpyFile, Order, TypeChar, WriterBuilder};
use nudt::gen::Precision;
use nudt::num_complex::Complex;
use nudt::Float;
use std::io::BufReader;
use std::path::Path;

/// An array read from disk: its shape (row-major) and its data converted to the run's precision.
pub struct Array<T> {
    pub shape: Vec<usize>,
    pub data: Vec<T>,
}

/// `(1000,)`, `(3, 4)` — as numpy prints shapes.
pub fn fmt_shape(shape: &[usize]) -> String {
    match shape {
        [n] => format!("({n},)"),
        _ => format!(
            "({})",
            shape
                .iter()
                .map(|v| v.to_string())
                .collect::<Vec<_>>()
                .join(", ")
        ),
    }
}

/// An opened `.npy` file.
type Npy = NpyFile<BufReader<std::fs::File>>;

fn open(path: &Path, option: &str) -> Result<Npy> {
    let file = std::fs::File::open(path)
        .map_err(|e| fail!("{option} {}: cannot open: {e}", path.display()))?;
    NpyFile::new(BufReader::new(file))
        .map_err(|e| fail!("{option} {}: not a valid .npy file ({e})", path.display()))
}

/// `(type char, bytes)` of a plain dtype.
fn kind(npy: &Npy) -> Option<(TypeChar, u64, String)> {
    match npy.dtype() {
        DType::Plain(ts) => Some((ts.type_char(), ts.size_field(), ts.to_string())),
        _ => None,
    }
}

fn describe(dtype: &DType) -> String {
    match dtype {
        DType::Plain(ts) => format!("'{ts}'"),
        _ => "a structured dtype".into(),
    }
}

/// Row-major copy of column-major data.
fn to_c_order<T: Copy>(data: Vec<T>, shape: &[usize]) -> Vec<T> {
    if shape.len() < 2 {
        return data;
    }
    let n = data.len();
    let mut out = Vec::with_capacity(n);
    let mut idx = vec![0usize; shape.len()];
    for _ in 0..n {
        // Column-major offset of the row-major multi-index `idx`.
        let mut off = 0;
        for d in (0..shape.len()).rev() {
            off = off * shape[d] + idx[d];
        }
        out.push(data[off]);
        for d in (0..shape.len()).rev() {
            idx[d] += 1;
            if idx[d] < shape[d] {
                break;
            }
            idx[d] = 0;
        }
    }
    out
}

fn shape_of(npy: &Npy) -> Vec<usize> {
    npy.shape().iter().map(|&s| s as usize).collect()
}

/// The array at `path` in row-major order, its data read by `convert` from the file and its
/// dtype's type char and size in bytes. A dtype `convert` does not take (`None`) is an error
/// that names it and what was `expected`, then `hint`.
fn read<U: Copy>(
    path: &Path,
    option: &str,
    expected: &str,
    hint: &str,
    convert: impl FnOnce(Npy, TypeChar, u64) -> Option<std::io::Result<Vec<U>>>,
) -> Result<Array<U>> {
    let npy = open(path, option)?;
    let shape = shape_of(&npy);
    let order = npy.order();
    let dtype = describe(&npy.dtype());
    let data = kind(&npy)
        .and_then(|(class, bytes, _)| convert(npy, class, bytes))
        .ok_or_else(|| {
            fail!(
                "{option} {}: expected {expected}, got dtype {dtype}{hint}",
                path.display()
            )
        })?
        .map_err(|e| fail!("{option} {}: cannot read data ({e})", path.display()))?;
    let data = if order == Order::Fortran {
        to_c_order(data, &shape)
    } else {
        data
    };
    Ok(Array { shape, data })
}

/// A float32 or float64 array, converted to `T`.
pub fn read_real<T: Float>(path: &Path, option: &str) -> Result<Array<T>> {
    let expected = "a float32 or float64 array";
    read(path, option, expected, "", |npy, class, bytes| {
        match (class, bytes) {
            (TypeChar::Float, 4) => Some(
                npy.into_vec::<f32>()
                    .map(|v| v.into_iter().map(|a| T::of(a as f64)).collect()),
            ),
            (TypeChar::Float, 8) => Some(
                npy.into_vec::<f64>()
                    .map(|v| v.into_iter().map(T::of).collect()),
            ),
            _ => None,
        }
    })
}

/// A complex64 or complex128 array, converted to `Complex<T>`. A file of the other precision
/// is converted with a warning: complex64 data in an f64 run limits the result to about 1e-7
/// whatever `--tol` says, and complex128 data in an f32 run loses digits the user may expect.
pub fn read_complex<T: Float>(path: &Path, option: &str) -> Result<Array<Complex<T>>> {
    let expected = "a complex64 or complex128 array";
    let hint = " (use .astype(np.complex128))";
    read(path, option, expected, hint, |npy, class, bytes| {
        let shown = path.display();
        match (class, bytes, T::PRECISION) {
            (TypeChar::Complex, 8, Precision::F64) => warnln!(
                "{option} {shown}: complex64 values converted to complex128 for this f64 run; they carry only about 7 digits (--precision f32 runs in the file's precision)"
            ),
            (TypeChar::Complex, 16, Precision::F32) => warnln!(
                "{option} {shown}: complex128 values rounded to complex64 for this f32 run (--precision f64 keeps every digit)"
            ),
            _ => {}
        }
        match (class, bytes) {
            (TypeChar::Complex, 8) => Some(npy.into_vec::<Complex<f32>>().map(|v| {
                v.into_iter()
                    .map(|c| Complex::new(T::of(c.re as f64), T::of(c.im as f64)))
                    .collect()
            })),
            (TypeChar::Complex, 16) => Some(npy.into_vec::<Complex<f64>>().map(|v| {
                v.into_iter()
                    .map(|c| Complex::new(T::of(c.re), T::of(c.im)))
                    .collect()
            })),
            _ => None,
        }
    })
}

/// Precisions whose complex values npyz can write.
pub trait NpyComplex: Float {
    /// numpy's name of the complex dtype.
    const DTYPE: &'static str;
    fn write(
        w: &mut std::io::BufWriter<std::fs::File>,
        shape: &[u64],
        data: &[Complex<Self>],
    ) -> std::io::Result<()>;
}

macro_rules! npy_complex {
    ($t:ty, $name:literal) => {
        impl NpyComplex for $t {
            const DTYPE: &'static str = $name;
            fn write(
                w: &mut std::io::BufWriter<std::fs::File>,
                shape: &[u64],
                data: &[Complex<$t>],
            ) -> std::io::Result<()> {
                let mut out = npyz::WriteOptions::new()
                    .default_dtype()
                    .shape(shape)
                    .writer(w)
                    .begin_nd()?;
                out.extend(data.iter().copied())?;
                out.finish()
            }
        }
    };
}

npy_complex!(f32, "complex64");
npy_complex!(f64, "complex128");

/// Writes a complex array of `shape` to `path` via a temporary file and a rename.
pub fn write_complex<T: NpyComplex>(
    path: &Path,
    option: &str,
    shape: &[usize],
    data: &[Complex<T>],
) -> Result<()> {
    let shape: Vec<u64> = shape.iter().map(|&s| s as u64).collect();
    write_atomic(path, option, |w| T::write(w, &shape, data))
}

/// Writes equal-length `rows` as one float64 array of shape `(rows, len)`, row after row
/// (no joined copy: a benchmark's coordinates are hundreds of MB).
pub fn write_rows(path: &Path, what: &str, rows: &[Vec<f64>]) -> Result<()> {
    let shape = [rows.len() as u64, rows.first().map_or(0, Vec::len) as u64];
    write_atomic(path, what, |w| {
        let mut out = npyz::WriteOptions::<f64>::new()
            .default_dtype()
            .shape(&shape)
            .writer(w)
            .begin_nd()?;
        for row in rows {
            out.extend(row.iter().copied())?;
        }
        out.finish()
    })
}

/// Writes indices as an int64 vector, numpy's index type.
pub fn write_indices(path: &Path, what: &str, idx: &[usize]) -> Result<()> {
    write_atomic(path, what, |w| {
        let mut out = npyz::WriteOptions::<i64>::new()
            .default_dtype()
            .shape(&[idx.len() as u64])
            .writer(w)
            .begin_nd()?;
        out.extend(idx.iter().map(|&i| i as i64))?;
        out.finish()
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fortran_to_c() {
        // 2×3 matrix [[0,1,2],[3,4,5]] stored column-major: 0,3,1,4,2,5.
        assert_eq!(
            to_c_order(vec![0, 3, 1, 4, 2, 5], &[2, 3]),
            vec![0, 1, 2, 3, 4, 5]
        );
    }

    #[test]
    fn shapes_print_like_numpy() {
        assert_eq!(fmt_shape(&[5]), "(5,)");
        assert_eq!(fmt_shape(&[2, 3]), "(2, 3)");
    }
}
