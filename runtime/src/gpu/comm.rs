//! How a multi-device plan ([`super::multi`]) moves data between its devices: the four
//! exchanges of a slab-decomposed transform, over the device arrays of every device at once
//! (one process drives all of them). What goes where is the plan layer's
//! ([`Decomposition`]); a communicator only carries it out. [`HostComm`] does it through
//! host memory, on any backend: several OpenCL contexts on one PoCL device then emulate
//! several GPUs, so CI runs every stage of the multi-device path; NCCL does it between GPUs.

use super::device::Device;
use crate::float::Float;
use crate::planner::devices::Decomposition;

/// Each device's arrays in, each device's arrays out (complex values interleaved, as the
/// kernels take them).
pub(crate) type Bufs<D, T> = Vec<<D as Device<T>>::Buf>;

/// The exchanges between the devices of a slab decomposition `s`; `devs[r]` is device r.
pub(crate) trait Communicator<D: Device<T>, T> {
    /// Type 1: every device's local grid (its [`Decomposition::local_planes`] planes)
    /// added into the slabs of their planes' owners ([`Decomposition::segments`]): each
    /// device's slab, the halos summed.
    fn sum_halos(
        &self,
        devs: &[&D],
        grids: &[&D::Buf],
        s: &Decomposition,
    ) -> Result<Bufs<D, T>, D::Error>;
    /// Type 2, [`Self::sum_halos`]' adjoint: every device's local grid, copied from the
    /// slabs that hold its planes.
    fn fill_halos(
        &self,
        devs: &[&D],
        slabs: &[&D::Buf],
        s: &Decomposition,
    ) -> Result<Bufs<D, T>, D::Error>;
    /// The all-to-all transpose: from each device's planes, rows of
    /// [`Decomposition::columns`] values, to each device's columns
    /// ([`Decomposition::column_range`]), each `n[0]` values along the slow axis.
    fn to_columns(
        &self,
        devs: &[&D],
        rows: &[&D::Buf],
        s: &Decomposition,
    ) -> Result<Bufs<D, T>, D::Error>;
    /// The transpose back: columns to rows.
    fn to_rows(
        &self,
        devs: &[&D],
        columns: &[&D::Buf],
        s: &Decomposition,
    ) -> Result<Bufs<D, T>, D::Error>;
}

/// The devices' data moved through host memory: read back, rearranged, uploaded.
#[derive(Clone, Copy, Debug, Default)]
pub struct HostComm;

/// Each device's first `lens[r]` complex values.
fn read_all<D: Device<T>, T>(
    devs: &[&D],
    bufs: &[&D::Buf],
    lens: impl Fn(usize) -> usize,
) -> Result<Vec<Vec<T>>, D::Error> {
    (0..devs.len())
        .map(|r| devs[r].read(devs[r].mem(Some(bufs[r])), 2 * lens(r)))
        .collect()
}

fn upload_all<D: Device<T>, T>(
    devs: &[&D],
    host: &[Vec<T>],
    what: &str,
) -> Result<Bufs<D, T>, D::Error> {
    devs.iter()
        .zip(host)
        .map(|(d, h)| d.upload(h, what))
        .collect()
}

/// Every (device, its local plane, owner, the owner's plane) of the decomposition's halo
/// segments, plane by plane.
fn halo_planes(s: &Decomposition) -> impl Iterator<Item = (usize, usize, usize, usize)> + '_ {
    (0..s.devices()).flat_map(move |r| {
        s.segments(r).into_iter().flat_map(move |g| {
            let at = g.global - s.slab(g.owner).start;
            (0..g.len).map(move |i| (r, g.local + i, g.owner, at + i))
        })
    })
}

/// Every (device, row index, device, column index) pair of one complex value in the
/// transpose: value `c` of plane `p` in its slab's rows, and at `(c − start) · n[0] + p` in
/// its column's device.
fn transpose_pairs(s: &Decomposition) -> impl Iterator<Item = (usize, usize, usize, usize)> + '_ {
    let (cols, n0) = (s.columns(), s.n[0]);
    (0..s.devices())
        .flat_map(move |from| {
            (0..s.devices()).flat_map(move |to| {
                let (planes, range) = s.block(from, to);
                let start = planes.start;
                planes.flat_map(move |p| {
                    let range = range.clone();
                    range.clone().map(move |c| {
                        (
                            (from, (p - start) * cols + c),
                            (to, (c - range.start) * n0 + p),
                        )
                    })
                })
            })
        })
        .map(|((a, i), (b, j))| (a, i, b, j))
}

impl<D: Device<T>, T: Float> Communicator<D, T> for HostComm {
    fn sum_halos(
        &self,
        devs: &[&D],
        grids: &[&D::Buf],
        s: &Decomposition,
    ) -> Result<Bufs<D, T>, D::Error> {
        let w = 2 * s.plane();
        let local = read_all(devs, grids, |r| s.local_planes(r) * s.plane())?;
        let mut slabs: Vec<Vec<T>> = (0..devs.len())
            .map(|r| vec![T::zero(); w * s.slab(r).len()])
            .collect();
        for (r, j, q, p) in halo_planes(s) {
            let src = &local[r][j * w..][..w];
            slabs[q][p * w..][..w]
                .iter_mut()
                .zip(src)
                .for_each(|(a, &b)| *a += b);
        }
        upload_all(devs, &slabs, "slab")
    }

    fn fill_halos(
        &self,
        devs: &[&D],
        slabs: &[&D::Buf],
        s: &Decomposition,
    ) -> Result<Bufs<D, T>, D::Error> {
        let w = 2 * s.plane();
        let slab = read_all(devs, slabs, |r| s.slab(r).len() * s.plane())?;
        let mut local: Vec<Vec<T>> = (0..devs.len())
            .map(|r| vec![T::zero(); w * s.local_planes(r)])
            .collect();
        for (r, j, q, p) in halo_planes(s) {
            local[r][j * w..][..w].copy_from_slice(&slab[q][p * w..][..w]);
        }
        upload_all(devs, &local, "local grid")
    }

    fn to_columns(
        &self,
        devs: &[&D],
        rows: &[&D::Buf],
        s: &Decomposition,
    ) -> Result<Bufs<D, T>, D::Error> {
        let rows = read_all(devs, rows, |r| s.slab(r).len() * s.columns())?;
        let mut cols: Vec<Vec<T>> = (0..devs.len())
            .map(|r| vec![T::zero(); 2 * s.column_range(r).len() * s.n[0]])
            .collect();
        for (a, i, b, j) in transpose_pairs(s) {
            cols[b][2 * j..][..2].copy_from_slice(&rows[a][2 * i..][..2]);
        }
        upload_all(devs, &cols, "columns")
    }

    fn to_rows(
        &self,
        devs: &[&D],
        columns: &[&D::Buf],
        s: &Decomposition,
    ) -> Result<Bufs<D, T>, D::Error> {
        let cols = read_all(devs, columns, |r| s.column_range(r).len() * s.n[0])?;
        let mut rows: Vec<Vec<T>> = (0..devs.len())
            .map(|r| vec![T::zero(); 2 * s.slab(r).len() * s.columns()])
            .collect();
        for (a, i, b, j) in transpose_pairs(s) {
            rows[a][2 * i..][..2].copy_from_slice(&cols[b][2 * j..][..2]);
        }
        upload_all(devs, &rows, "rows")
    }
}
