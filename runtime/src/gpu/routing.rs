//! A multi-device plan's points routed on the devices, once for CUDA and OpenCL: each device
//! takes a contiguous share of the caller's points ([`devices::shares`]), finds each point's
//! device and its place on that device's local grid (the common module's `nudt_route`, the
//! plan layer's rule [`Decomposition::route`]), and packs its share by device
//! (`nudt_pack_points`); the exchanges ([`super::comm::Exchanges::all_to_all`]) then give
//! every device its points ([`Routes::transfers`]), unpacked into coordinate arrays
//! (`nudt_unpack_points`). An execute moves strengths the same way and values back, each
//! permuted by the share's slots (`nudt_permute`). The host only copies the shares as they
//! are: routing them there took a pass over the points and a gather per device, which made
//! a slab plan's set-points four times one device's.
//!
//! [`devices::shares`]: crate::planner::devices::shares
//! [`Routes::transfers`]: crate::planner::devices::Routes::transfers

use super::device::{Arg, Device};
use crate::planner::devices::{Decomposition, Routes, MARGIN};
use nudt_gen::gpu::{names, ROUTE_DEVICES};

/// The common module's kernels of a multi-device plan: `nudt_scale` (the exchanges' packing,
/// halo sums and copies) and the routing's.
#[derive(Clone, Debug)]
pub(crate) struct SlabKernels<K> {
    pub scale: K,
    route: K,
    pack: K,
    unpack: K,
    permute: K,
}

impl<K> SlabKernels<K> {
    /// The kernels, each found by `load` from its generated name.
    pub fn load<E>(load: impl Fn(&'static str) -> Result<K, E>) -> Result<Self, E> {
        Ok(SlabKernels {
            scale: load(names::SCALE)?,
            route: load(names::ROUTE)?,
            pack: load(names::PACK_POINTS)?,
            unpack: load(names::UNPACK_POINTS)?,
            permute: load(names::PERMUTE)?,
        })
    }
}

/// A routed share on its device: the points' records, packed by device, and the share's
/// slots and counts.
pub(crate) type RoutedShare<B> = (B, Routed<B>);

/// A device's share of the points once routed there: per point its slot in the packed
/// share, and how many of the share each of the `p` devices takes (32-bit words in arrays
/// of `T`).
pub(crate) struct Routed<B> {
    pub slot: B,
    counts: B,
    p: usize,
}

impl<B> Routed<B> {
    /// How many of the share each device takes, once the routing has run on `dev`, and
    /// whether a coordinate of the share is not finite.
    pub fn sent<T, D: Device<T, Buf = B>>(&self, dev: &D) -> Result<(Vec<usize>, bool), D::Error> {
        let words = dev.read_words(dev.mem(Some(&self.counts)), self.p + 1)?;
        let sent = words[..self.p].iter().map(|&c| c as usize).collect();
        Ok((sent, words[self.p] != 0))
    }
}

/// The devices a decomposition can route over: each group counts its points per device in
/// local memory.
pub(crate) fn check_devices(split: &Decomposition) -> crate::Result<()> {
    match split.devices() <= ROUTE_DEVICES as usize {
        true => Ok(()),
        false => Err(crate::NudtError::Devices {
            devices: split.devices(),
            why: format!("the routing counts points for at most {ROUTE_DEVICES} devices"),
        }),
    }
}

impl<K> SlabKernels<K> {
    /// Routes the `n` points of a share with coordinates `coords` (on `dev`, read only) and
    /// packs them by device into records of [`Routes::record`] reals, the first coordinate
    /// on the local grid of the point's device: the records, and the share's slots and
    /// counts, queued (read the counts with [`Routed::sent`] once every device has its work).
    pub fn route<T: crate::Float, D: Device<T, Kernel = K>>(
        &self,
        dev: &D,
        split: &Decomposition,
        coords: &[&D::Buf],
        n: usize,
    ) -> Result<RoutedShare<D::Buf>, D::Error> {
        let (p, dim) = (split.devices(), coords.len());
        let table = dev.upload(&split.route_table::<T>(), "the routing's table")?;
        let words = |len: usize| len.div_ceil(std::mem::size_of::<T>() / 4);
        let local = dev.alloc(n.max(1), "the points' local coordinates")?;
        let dest = dev.alloc(words(n), "the points' devices")?;
        let slot = dev.alloc(words(n), "the points' slots")?;
        // Per device, then the mark of a coordinate that is not finite.
        let counts = dev.alloc(words(p + 1), "the points per device")?;
        dev.zero(dev.mem(Some(&counts)), words(p + 1))?;
        let record = Routes::record(dim);
        let records = dev.alloc((n * record).max(1), "the points' records")?;
        if n > 0 {
            let m = |b: &D::Buf| Arg::Mem(dev.mem(Some(b)));
            let u32_of = |v: usize| Arg::U32(v as u32);
            let [_, x1, x2] = dev.mem3(coords);
            let route = [
                Arg::U64(n as u64),
                m(coords[0]),
                Arg::Mem(x1),
                Arg::Mem(x2),
                Arg::I32(dim as i32),
                m(&local),
                m(&dest),
                m(&slot),
                m(&counts),
                m(&table),
                u32_of(p),
                u32_of(split.n[0]),
                u32_of(split.width),
                u32_of(MARGIN),
            ];
            dev.launch(&self.route, n, 1, &route)?;
            let pack = [
                Arg::U64(n as u64),
                Arg::I32(dim as i32),
                m(&dest),
                m(&slot),
                m(&counts),
                m(&local),
                Arg::Mem(x1),
                Arg::Mem(x2),
                Arg::U64(record as u64),
                m(&records),
            ];
            dev.launch(&self.pack, n, 1, &pack)?;
        }
        Ok((records, Routed { slot, counts, p }))
    }

    /// The `dim` coordinate arrays of `n` points received as records.
    pub fn unpack<T, D: Device<T, Kernel = K>>(
        &self,
        dev: &D,
        records: &D::Buf,
        n: usize,
        dim: usize,
    ) -> Result<Vec<D::Buf>, D::Error> {
        let coords = (0..dim)
            .map(|_| dev.alloc(n.max(1), "coordinates"))
            .collect::<Result<Vec<_>, D::Error>>()?;
        if n > 0 {
            let [x0, x1, x2] = dev.mem3(&coords);
            let args = [
                Arg::U64(n as u64),
                Arg::I32(dim as i32),
                Arg::U64(Routes::record(dim) as u64),
                Arg::Mem(dev.mem(Some(records))),
                Arg::Mem(x0),
                Arg::Mem(x1),
                Arg::Mem(x2),
            ];
            dev.launch(&self.unpack, n, 1, &args)?;
        }
        Ok(coords)
    }

    /// `n` complex values of `from` moved by the share's slots into `to`: to their slots (a
    /// share's strengths, packed by device), or from them (`back`: values packed by device,
    /// to the share's order).
    pub fn permute<T, D: Device<T, Kernel = K>>(
        &self,
        dev: &D,
        slot: &D::Buf,
        (from, to): (&D::Buf, &D::Buf),
        n: usize,
        back: bool,
    ) -> Result<(), D::Error> {
        if n == 0 {
            return Ok(());
        }
        let args = [
            Arg::U64(n as u64),
            Arg::Mem(dev.mem(Some(slot))),
            Arg::Mem(dev.mem(Some(from))),
            Arg::Mem(dev.mem(Some(to))),
            Arg::I32(i32::from(back)),
        ];
        dev.launch(&self.permute, n, 1, &args)
    }
}
