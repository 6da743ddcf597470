//! How a multi-device plan ([`super::multi`]) moves data between its devices: the four
//! exchanges of a slab-decomposed transform (sum the halos, fill them, rows to columns and
//! back), over the device arrays of every device at once (one process drives all of them).
//! What goes where is the plan layer's, as data ([`Transfer`]s of
//! [`Decomposition::halo_transfers`] and [`Decomposition::transpose_transfers`]);
//! [`Exchanges`] carries them out the same way for every backend and link: a block that
//! stays on its device is copied or added there by the common module's `nudt_scale`; one
//! that crosses is packed into consecutive values on its sender by the same kernel, carried
//! whole by a [`Link`], and unpacked (copied or added) on its receiver. Only the link
//! differs: [`HostLink`] goes through host memory on any backend (several OpenCL contexts on
//! one PoCL device then emulate several GPUs, so CI runs every step but the carrying of the
//! multi-device path), NCCL goes from GPU to GPU (`crate::cuda::nccl`).

use super::device::{Arg, Device};
use super::routing::SlabKernels;
use crate::planner::devices::{Decomposition, Side, Transfer};
use crate::planner::limits::MAX_BATCH;

/// Each device's arrays in, each device's arrays out (complex values interleaved, as the
/// kernels take them).
pub(crate) type Bufs<D, T> = Vec<<D as Device<T>>::Buf>;

/// An array of consecutive values to carry whole: from device `from` to a new array of
/// `len` complex values on device `to`.
pub(crate) struct Carry<'a, B> {
    pub from: usize,
    pub buf: &'a B,
    pub len: usize,
    pub to: usize,
}

/// How arrays go from one device to another: every carry of one exchange at once, each to a
/// new array on its receiver, ordered after the work queued on its sender and before the
/// work queued next on its receiver.
pub(crate) trait Link<D: Device<T>, T> {
    /// The link's name (`host`, `nccl`), for reports.
    fn name(&self) -> &'static str;
    /// The arrays of `carries`, in order, on their receivers.
    fn carry(&self, devs: &[&D], carries: &[Carry<'_, D::Buf>]) -> Result<Bufs<D, T>, D::Error>;
}

/// Arrays carried through host memory: read back from the sender, uploaded to the receiver.
#[derive(Clone, Copy, Debug, Default)]
pub struct HostLink;

impl<D: Device<T>, T> Link<D, T> for HostLink {
    fn name(&self) -> &'static str {
        "host"
    }

    fn carry(&self, devs: &[&D], carries: &[Carry<'_, D::Buf>]) -> Result<Bufs<D, T>, D::Error> {
        carries
            .iter()
            .map(|c| {
                let host = devs[c.from].read(devs[c.from].mem(Some(c.buf)), 2 * c.len)?;
                devs[c.to].upload(&host, "a carried block")
            })
            .collect()
    }
}

/// `t`'s values from `src` (laid out as `from`) to `dst` (as `to`) on `dev`, written or
/// added (`add`), by the common module's `nudt_scale` (`k`).
fn move_block<T, D: Device<T>>(
    dev: &D,
    k: &D::Kernel,
    t: &Transfer,
    (src, from): (D::Mem, Side),
    (dst, to): (D::Mem, Side),
    add: bool,
) -> Result<(), D::Error> {
    let mut first = 0;
    while first < t.batches {
        let nb = (t.batches - first).min(MAX_BATCH);
        let side = |mem, s: Side| {
            [
                Arg::Mem(mem),
                Arg::U64(s.stride as u64),
                Arg::U64(s.at(first, 0) as u64),
                Arg::U64(s.batch as u64),
            ]
        };
        let mut args = vec![Arg::U64(t.count as u64)];
        args.extend(side(dst, to));
        args.extend(side(src, from));
        args.extend([
            Arg::Mem(dev.mem(None)),
            Arg::U64(0),
            Arg::F64(1.0),
            Arg::F64(0.0),
            Arg::I32(i32::from(add)),
        ]);
        dev.launch(k, t.count, nb, &args)?;
        first += nb;
    }
    Ok(())
}

/// A multi-device plan's exchanges over the link `L`, with each device's kernels of slabs
/// (`K`: the exchanges' `nudt_scale`, the routing's).
pub(crate) struct Exchanges<K, L> {
    link: L,
    kernels: Vec<SlabKernels<K>>,
}

impl<K, L> Exchanges<K, L> {
    /// The exchanges over `link`; `kernels[r]` are device r's.
    pub fn new(link: L, kernels: Vec<SlabKernels<K>>) -> Self {
        Exchanges { link, kernels }
    }

    /// Device `r`'s kernels of slabs.
    pub fn kernels(&self, r: usize) -> &SlabKernels<K> {
        &self.kernels[r]
    }

    /// The link's name.
    pub fn link_name<T, D: Device<T, Kernel = K>>(&self) -> &'static str
    where
        L: Link<D, T>,
    {
        self.link.name()
    }

    /// Type 1: every device's local grid (its [`Decomposition::local_planes`] planes) added
    /// into the slabs of their planes' owners: each device's slab, the halos summed.
    pub fn sum_halos<T, D: Device<T, Kernel = K>>(
        &self,
        devs: &[&D],
        grids: &[&D::Buf],
        s: &Decomposition,
    ) -> Result<Bufs<D, T>, D::Error>
    where
        L: Link<D, T>,
    {
        let lens = (0..devs.len()).map(|r| s.slab(r).len() * s.plane());
        self.run(devs, grids, lens.collect(), &s.halo_transfers(), true)
    }

    /// Type 2, [`Self::sum_halos`]' adjoint: every device's local grid, copied from the
    /// slabs that hold its planes.
    pub fn fill_halos<T, D: Device<T, Kernel = K>>(
        &self,
        devs: &[&D],
        slabs: &[&D::Buf],
        s: &Decomposition,
    ) -> Result<Bufs<D, T>, D::Error>
    where
        L: Link<D, T>,
    {
        let lens = (0..devs.len()).map(|r| s.local_planes(r) * s.plane());
        let back: Vec<Transfer> = s.halo_transfers().iter().map(|t| t.reversed()).collect();
        self.run(devs, slabs, lens.collect(), &back, false)
    }

    /// The all-to-all transpose: from each device's planes, rows of
    /// [`Decomposition::columns`] values, to each device's columns
    /// ([`Decomposition::column_range`]), each `n[0]` values along the slow axis.
    pub fn to_columns<T, D: Device<T, Kernel = K>>(
        &self,
        devs: &[&D],
        rows: &[&D::Buf],
        s: &Decomposition,
    ) -> Result<Bufs<D, T>, D::Error>
    where
        L: Link<D, T>,
    {
        let lens = (0..devs.len()).map(|r| s.column_range(r).len() * s.n[0]);
        self.run(devs, rows, lens.collect(), &s.transpose_transfers(), false)
    }

    /// The transpose back: columns to rows.
    pub fn to_rows<T, D: Device<T, Kernel = K>>(
        &self,
        devs: &[&D],
        columns: &[&D::Buf],
        s: &Decomposition,
    ) -> Result<Bufs<D, T>, D::Error>
    where
        L: Link<D, T>,
    {
        let lens = (0..devs.len()).map(|r| s.slab(r).len() * s.columns());
        let back: Vec<Transfer> = s
            .transpose_transfers()
            .iter()
            .map(|t| t.reversed())
            .collect();
        self.run(devs, columns, lens.collect(), &back, false)
    }

    /// Every device's runs for the others ([`crate::planner::devices::Routes::transfers`]
    /// or their reverse) from the arrays `src` into new arrays of `lens` complex values, one
    /// per device, each run written at its place.
    pub fn all_to_all<T, D: Device<T, Kernel = K>>(
        &self,
        devs: &[&D],
        src: &[&D::Buf],
        lens: Vec<usize>,
        transfers: &[Transfer],
    ) -> Result<Bufs<D, T>, D::Error>
    where
        L: Link<D, T>,
    {
        self.run(devs, src, lens, transfers, false)
    }

    /// Carries out `transfers` from the arrays `src` into new arrays of `lens` complex
    /// values, one per device (zeroed first where the transfers add).
    fn run<T, D: Device<T, Kernel = K>>(
        &self,
        devs: &[&D],
        src: &[&D::Buf],
        lens: Vec<usize>,
        transfers: &[Transfer],
        add: bool,
    ) -> Result<Bufs<D, T>, D::Error>
    where
        L: Link<D, T>,
    {
        let dst = devs
            .iter()
            .zip(&lens)
            .map(|(d, &n)| {
                let b = d.alloc(2 * n, "an exchange's array")?;
                if add {
                    d.zero(d.mem(Some(&b)), 2 * n)?;
                }
                Ok(b)
            })
            .collect::<Result<Vec<_>, D::Error>>()?;
        let mem = |r: usize, b: &D::Buf| devs[r].mem(Some(b));
        let (stay, cross): (Vec<&Transfer>, Vec<&Transfer>) =
            transfers.iter().partition(|t| t.from == t.to);
        for t in stay {
            let (src, dst) = (
                (mem(t.from, src[t.from]), t.src),
                (mem(t.to, &dst[t.to]), t.dst),
            );
            move_block(devs[t.to], &self.kernels[t.to].scale, t, src, dst, add)?;
        }
        let packed = cross
            .iter()
            .map(|t| {
                let b = devs[t.from].alloc(2 * t.values(), "a packed block")?;
                let src = (mem(t.from, src[t.from]), t.src);
                let to = (mem(t.from, &b), t.packed());
                move_block(devs[t.from], &self.kernels[t.from].scale, t, src, to, false)?;
                Ok(b)
            })
            .collect::<Result<Vec<_>, D::Error>>()?;
        let carries: Vec<Carry<'_, D::Buf>> = cross
            .iter()
            .zip(&packed)
            .map(|(t, buf)| Carry {
                from: t.from,
                buf,
                len: t.values(),
                to: t.to,
            })
            .collect();
        let received = self.link.carry(devs, &carries)?;
        for (t, b) in cross.iter().zip(&received) {
            let src = (mem(t.to, b), t.packed());
            let dst = (mem(t.to, &dst[t.to]), t.dst);
            move_block(devs[t.to], &self.kernels[t.to].scale, t, src, dst, add)?;
        }
        Ok(dst)
    }
}
