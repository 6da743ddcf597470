//! NumPy `.npy` input and output (npyz) for `nudt transform` — real coordinate arrays, complex
//! data arrays in either precision and either memory order, atomic writes — and for the data
//! `nudt bench` shares with its peers.

use super::{fail, write_atomic, Result};
use npyz::{DType, NpyFile, Order, TypeChar, WriterBuilder};
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

fn open(path: &Path, option: &str) -> Result<NpyFile<BufReader<std::fs::File>>> {
    let file = std::fs::File::open(path)
        .map_err(|e| fail!("{option} {}: cannot open: {e}", path.display()))?;
    NpyFile::new(BufReader::new(file))
        .map_err(|e| fail!("{option} {}: not a valid .npy file ({e})", path.display()))
}

/// `(type char, bytes)` of a plain dtype.
fn kind(npy: &NpyFile<BufReader<std::fs::File>>) -> Option<(TypeChar, u64, String)> {
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

fn shape_of(npy: &NpyFile<BufReader<std::fs::File>>) -> Vec<usize> {
    npy.shape().iter().map(|&s| s as usize).collect()
}

/// A float32 or float64 array, converted to `T`.
pub fn read_real<T: Float>(path: &Path, option: &str) -> Result<Array<T>> {
    let npy = open(path, option)?;
    let shape = shape_of(&npy);
    let order = npy.order();
    let bad = |e: std::io::Error| fail!("{option} {}: cannot read data ({e})", path.display());
    let data: Vec<T> = match kind(&npy) {
        Some((TypeChar::Float, 4, _)) => npy
            .into_vec::<f32>()
            .map_err(bad)?
            .into_iter()
            .map(|v| T::of(v as f64))
            .collect(),
        Some((TypeChar::Float, 8, _)) => npy
            .into_vec::<f64>()
            .map_err(bad)?
            .into_iter()
            .map(T::of)
            .collect(),
        _ => {
            return Err(fail!(
                "{option} {}: expected a float32 or float64 array, got dtype {}",
                path.display(),
                describe(&npy.dtype())
            ))
        }
    };
    let data = if order == Order::Fortran {
        to_c_order(data, &shape)
    } else {
        data
    };
    Ok(Array { shape, data })
}

/// A complex64 or complex128 array, converted to `Complex<T>`.
pub fn read_complex<T: Float>(path: &Path, option: &str) -> Result<Array<Complex<T>>> {
    let npy = open(path, option)?;
    let shape = shape_of(&npy);
    let order = npy.order();
    let bad = |e: std::io::Error| fail!("{option} {}: cannot read data ({e})", path.display());
    let data: Vec<Complex<T>> = match kind(&npy) {
        Some((TypeChar::Complex, 8, _)) => npy
            .into_vec::<Complex<f32>>()
            .map_err(bad)?
            .into_iter()
            .map(|c| Complex::new(T::of(c.re as f64), T::of(c.im as f64)))
            .collect(),
        Some((TypeChar::Complex, 16, _)) => npy
            .into_vec::<Complex<f64>>()
            .map_err(bad)?
            .into_iter()
            .map(|c| Complex::new(T::of(c.re), T::of(c.im)))
            .collect(),
        _ => {
            return Err(fail!(
                "{option} {}: expected a complex64 or complex128 array, got dtype {} (use .astype(np.complex128))",
                path.display(),
                describe(&npy.dtype())
            ))
        }
    };
    let data = if order == Order::Fortran {
        to_c_order(data, &shape)
    } else {
        data
    };
    Ok(Array { shape, data })
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
