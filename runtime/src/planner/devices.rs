//! One type 1 or 2 transform over several devices, as pure data: the fine grid cut into
//! slabs of planes along its slowest axis (axis 0: the grids are row-major), one slab per
//! device; which device a point goes to, and where it lies on that device's local grid; which
//! planes of a local grid are whose (the halo a device spreads beyond its slab); and the
//! blocks of the all-to-all transpose between the slabs' planes and the modes' columns.
//!
//! A device spreads its points onto a local grid: its slab, the `w − 1` planes a kernel
//! footprint starting in the slab's last plane reaches beyond it, and [`MARGIN`] planes at
//! each end. A point's slowest coordinate is shifted and rescaled ([`Decomposition::route`])
//! so that the local grid is the whole grid the kernels see and the footprint lands on the
//! same planes as on the whole fine grid, none wrapped: the spreading and interpolation
//! kernels run unchanged, with no offset parameter. The local grids' planes then go to their
//! owners ([`Decomposition::segments`]: summed for type 1, copied for type 2), each device
//! transforms its slab along the fast axes and keeps those axes' modes (σ^(d−1) less to move),
//! the all-to-all transpose ([`Decomposition::transpose_transfers`]) gives each device all planes of its
//! columns of modes, and a 1-D transform along the slow axis finishes them.

use crate::error::{NudtError, Result};
use crate::float::Float;
use std::f64::consts::TAU;
use std::ops::Range;

/// Planes spared at each end of a local grid, so that a point whose footprint start rounds
/// the other way on the local grid than on the whole grid (the rescaled coordinate's
/// rounding) still lands inside it, unwrapped; the plane it then misses carries the kernel's
/// edge value.
pub const MARGIN: usize = 1;

/// A run of a device's local planes and the slab planes they are: `len` planes from local
/// plane `local` on, global planes `global..global + len` of the slab of device `owner`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Segment {
    pub local: usize,
    pub global: usize,
    pub len: usize,
    pub owner: usize,
}

/// How a transform of `modes` on the fine grid `n` (kernel width `width`) is split over
/// `devices` devices.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Decomposition {
    pub n: Vec<usize>,
    pub modes: Vec<usize>,
    pub width: usize,
    /// Where each device's slab starts, and `n[0]` last.
    starts: Vec<usize>,
    /// Where each device's columns of modes start (a column: one mode of the fast axes, all
    /// planes), and their number last.
    column_starts: Vec<usize>,
    /// Each device's local grid planes.
    local: Vec<usize>,
}

/// The kernels' `locate` of coordinate `x` on a grid of `n` planes for a kernel of width `w`,
/// in double as they compute it (generator/templates/gpu/spread.tera): the coordinate in grid
/// steps, in `[0, n)`, and the footprint's first plane `⌈xg − w/2⌉` (from `−w/2`, before it
/// is wrapped).
pub fn locate(x: f64, n: usize, w: usize) -> (f64, i64) {
    let turns = x * 0.159_154_943_091_895_35;
    let mut xg = (turns - turns.floor()) * n as f64;
    if xg >= n as f64 {
        xg -= n as f64;
    } else if xg.is_nan() || xg < 0.0 {
        xg = 0.0;
    }
    (xg, (xg - 0.5 * w as f64).ceil() as i64)
}

/// `total` items in `parts` runs whose sizes differ by at most one, larger ones first: the
/// runs' starts and `total` last.
fn even_starts(total: usize, parts: usize) -> Vec<usize> {
    (0..=parts)
        .map(|r| r * (total / parts) + r.min(total % parts))
        .collect()
}

/// `m` points in `devices` contiguous shares whose sizes differ by at most one: each device
/// takes its share of the caller's arrays as they are, and routes it itself.
pub fn shares(m: usize, devices: usize) -> Vec<Range<usize>> {
    even_starts(m, devices.max(1))
        .windows(2)
        .map(|s| s[0]..s[1])
        .collect()
}

/// Where a point set went once every device routed its share ([`shares`]) on the device
/// (the common module's `nudt_route`, [`Decomposition::route`]'s rule): `sent[q][r]` points
/// of device `q`'s share belong to device `r`. A sender packs its share by receiver, in
/// device order; a receiver holds what it got by sender, in device order. Strengths take
/// the same way ([`Routes::transfers`]), values the way back.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Routes {
    sent: Vec<Vec<usize>>,
}

impl Routes {
    /// The routes of `sent[q][r]` points from device `q`'s share to device `r`.
    pub fn new(sent: Vec<Vec<usize>>) -> Self {
        Routes { sent }
    }

    /// Reals in a point's record as the points travel: its coordinates, padded to whole
    /// complex values (the exchanges move complex values).
    pub fn record(dim: usize) -> usize {
        2 * dim.div_ceil(2)
    }

    /// Points device `r` holds once they have travelled.
    pub fn received(&self, r: usize) -> usize {
        self.sent.iter().map(|s| s[r]).sum()
    }

    /// The exchange that gives every device the values of its points, `per_point` complex
    /// values each: device `q`'s run for device `r` in its packed array (after its runs for
    /// the devices before `r`) to device `r`'s run from `q` (after the runs from the devices
    /// before `q`). Values go back by the same transfers [`Transfer::reversed`].
    pub fn transfers(&self, per_point: usize) -> Vec<Transfer> {
        let mut out = Vec::new();
        for (q, row) in self.sent.iter().enumerate() {
            for (r, &count) in row.iter().enumerate() {
                let src: usize = row[..r].iter().sum();
                let dst: usize = self.sent[..q].iter().map(|s| s[r]).sum();
                if count > 0 {
                    out.push(Transfer {
                        from: q,
                        to: r,
                        src: Side::run(per_point * src),
                        dst: Side::run(per_point * dst),
                        count: per_point * count,
                        batches: 1,
                    });
                }
            }
        }
        out
    }
}

/// How a multi-device plan spreads a stack of transforms over its devices.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Spread {
    /// Every transform cut in slabs over all devices ([`Decomposition`]), one transform after
    /// another.
    Slabs,
    /// Whole transforms: device `r` runs the transforms `shares[r]` of the stack (contiguous,
    /// in order, sizes within one of each other) as a one-device plan, all devices at once.
    Batches(Vec<Range<usize>>),
}

/// The rule that picks a [`Spread`] for `ntransf` transforms over `devices` devices, each
/// transform's fine grid `grid_bytes` and the smallest device's memory `memory` (bytes).
///
/// Whole transforms per device when every device gets at least one and one device holds
/// its share's batch of fine grids twice over (the work grids, and as much again for the
/// FFT's scratch, the points and their sort). Batches move nothing between the devices —
/// no halos, no transposes, each device's one-device plan at its own pace — so where they
/// fit they beat slabs, whose exchanges cost a transform's whole grid each time. Slabs are
/// for the rest: a stack shorter than the devices, or a grid one device cannot hold.
pub fn spread((ntransf, devices): (usize, usize), grid_bytes: usize, memory: usize) -> Spread {
    if devices == 0 || ntransf < devices {
        return Spread::Slabs;
    }
    let share = ntransf.div_ceil(devices);
    let batch = super::limits::gpu_batch(share, 0);
    let need = grid_bytes.saturating_mul(batch).saturating_mul(2);
    match need <= memory {
        true => Spread::Batches(
            even_starts(ntransf, devices)
                .windows(2)
                .map(|s| s[0]..s[1])
                .collect(),
        ),
        false => Spread::Slabs,
    }
}

impl Decomposition {
    /// The split of a 2-D or 3-D transform over `devices`: every device holds at least one
    /// plane, and its local grid is an FFT-friendly number of planes (the local grid is made
    /// as a fine grid, FFTs and all, though only spread on).
    pub fn new(n: &[usize], modes: &[usize], width: usize, devices: usize) -> Result<Self> {
        let refuse = |why: String| NudtError::Devices { devices, why };
        if devices == 0 {
            return Err(refuse("no devices".into()));
        }
        if n.len() < 2 || n.len() != modes.len() {
            return Err(refuse(format!(
                "slabs split 2-D and 3-D transforms, this one is {}-D",
                n.len()
            )));
        }
        if devices > n[0] {
            return Err(refuse(format!(
                "each device holds a plane of the slowest axis, which has {}",
                n[0]
            )));
        }
        let starts = even_starts(n[0], devices);
        let columns = modes[1..].iter().product();
        let local = starts
            .windows(2)
            .map(|s| {
                let want = (s[1] - s[0] + width - 1 + 2 * MARGIN).max(2 * width);
                nudt_gen::plan::next_smooth(want).ok_or(NudtError::GridOverflow)
            })
            .collect::<Result<_>>()?;
        Ok(Decomposition {
            n: n.to_vec(),
            modes: modes.to_vec(),
            width,
            starts,
            column_starts: even_starts(columns, devices),
            local,
        })
    }

    pub fn devices(&self) -> usize {
        self.local.len()
    }

    /// Device `r`'s planes of the fine grid.
    pub fn slab(&self, r: usize) -> Range<usize> {
        self.starts[r]..self.starts[r + 1]
    }

    /// Values in a plane of the fine grid.
    pub fn plane(&self) -> usize {
        self.n[1..].iter().product()
    }

    /// Columns of modes: modes of the fast axes.
    pub fn columns(&self) -> usize {
        self.modes[1..].iter().product()
    }

    /// Device `r`'s columns of modes, which it transforms along the slow axis.
    pub fn column_range(&self, r: usize) -> Range<usize> {
        self.column_starts[r]..self.column_starts[r + 1]
    }

    /// Planes of device `r`'s local grid.
    pub fn local_planes(&self, r: usize) -> usize {
        self.local[r]
    }

    /// The sides of device `r`'s local grid.
    pub fn local_sides(&self, r: usize) -> Vec<usize> {
        let mut s = self.n.clone();
        s[0] = self.local[r];
        s
    }

    /// The device whose slab holds plane `p`.
    pub fn owner(&self, p: usize) -> usize {
        self.starts.partition_point(|&s| s <= p) - 1
    }

    /// The first plane of the kernel footprint of a point with slowest coordinate `x`, and
    /// the coordinate in grid steps unwrapped to the same period ([`locate`]).
    fn footprint(&self, x: f64) -> (usize, f64) {
        let n0 = self.n[0];
        let (xg, start) = locate(x, n0, self.width);
        match start < 0 {
            true => ((start + n0 as i64) as usize, xg + n0 as f64),
            false => (start as usize, xg),
        }
    }

    /// Where a point with slowest coordinate `x` (radians, finite) goes — the rule the devices
    /// run on their shares (the common module's `nudt_route`, which a test holds to this): the device whose
    /// slab holds the first plane of its kernel footprint ([`locate`]), and the coordinate, in
    /// `T`, that puts it at the same place on that device's local grid, whose plane `MARGIN`
    /// is the slab's first. The coordinate rounded to `T` may fall across a plane boundary
    /// the point lies on, and put the footprint a plane over: it is then stepped back by its
    /// rounding, so the footprint is always the same planes as on the whole grid, and the
    /// kernel's weights differ from the whole grid's by rounding only.
    pub fn route<T: Float>(&self, x: f64) -> (usize, T) {
        let w = self.width;
        let (first, xg) = self.footprint(x);
        let r = self.owner(first);
        let (want, l) = ((first - self.starts[r] + MARGIN) as i64, self.local[r]);
        let local = (xg - self.starts[r] as f64 + MARGIN as f64) / l as f64 * TAU;
        let mut local = T::from(local).unwrap_or_else(T::zero);
        for _ in 0..8 {
            let got = locate(local.to_f64().unwrap_or(0.0), l, w).1;
            if got == want {
                break;
            }
            let step = T::epsilon() * local.abs().max(T::one());
            local = if got > want {
                local - step
            } else {
                local + step
            };
        }
        (r, local)
    }

    /// What the devices' routing reads (`nudt_route`): the slabs' first planes and `n[0]`,
    /// then each local grid's planes — small integers, exact in `T`.
    pub fn route_table<T: Float>(&self) -> Vec<T> {
        let planes = self.starts.iter().chain(&self.local);
        planes
            .map(|&p| T::from(p).unwrap_or_else(T::zero))
            .collect()
    }

    /// Device `r`'s local planes in runs of one owner each, in order: local plane `j` is
    /// plane `(start − MARGIN + j) mod n` of the fine grid. Type 1 adds each run into its
    /// owner's slab (the halo's sum), type 2 fills it from there.
    pub fn segments(&self, r: usize) -> Vec<Segment> {
        let n0 = self.n[0];
        let mut global = (self.starts[r] + n0 - MARGIN % n0) % n0;
        let (mut local, mut out) = (0, Vec::new());
        while local < self.local[r] {
            let owner = self.owner(global);
            let len = (self.starts[owner + 1] - global).min(self.local[r] - local);
            out.push(Segment {
                local,
                global,
                len,
                owner,
            });
            local += len;
            global = (global + len) % n0;
        }
        out
    }

    /// The halo exchange of type 1: each run of each device's local planes
    /// ([`Self::segments`]) added into the same planes of its owner's slab. Type 2 fills the
    /// local grids from the slabs: the same transfers [`Transfer::reversed`], copied.
    pub fn halo_transfers(&self) -> Vec<Transfer> {
        let plane = self.plane();
        (0..self.devices())
            .flat_map(|r| {
                self.segments(r).into_iter().map(move |g| Transfer {
                    from: r,
                    to: g.owner,
                    src: Side::run(g.local * plane),
                    dst: Side::run((g.global - self.starts[g.owner]) * plane),
                    count: g.len * plane,
                    batches: 1,
                })
            })
            .collect()
    }

    /// The all-to-all transpose, rows to columns: device `from`'s planes (rows of
    /// [`Self::columns`] modes of the fast axes, plane `p` at row `p − slab start`) restricted
    /// to device `to`'s columns, which `to` holds as columns of all `n[0]` planes (column `c`
    /// from `(c − first column) · n[0]`). One batch a plane; empty blocks are left out.
    /// Columns to rows are the same transfers [`Transfer::reversed`].
    pub fn transpose_transfers(&self) -> Vec<Transfer> {
        let (cols, n0) = (self.columns(), self.n[0]);
        let pairs = (0..self.devices()).flat_map(|a| (0..self.devices()).map(move |b| (a, b)));
        pairs
            .map(|(from, to)| {
                let (planes, range) = (self.slab(from), self.column_range(to));
                Transfer {
                    from,
                    to,
                    src: Side {
                        offset: range.start,
                        stride: 1,
                        batch: cols,
                    },
                    dst: Side {
                        offset: planes.start,
                        stride: n0,
                        batch: 1,
                    },
                    count: range.len(),
                    batches: planes.len(),
                }
            })
            .filter(|t| t.values() > 0)
            .collect()
    }
}

/// Where a block's values lie in a device's array, in complex values: value `i` of batch `b`
/// at `offset + b · batch + i · stride`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Side {
    pub offset: usize,
    pub stride: usize,
    pub batch: usize,
}

impl Side {
    /// Consecutive values from `offset` on.
    pub fn run(offset: usize) -> Side {
        Side {
            offset,
            stride: 1,
            batch: 0,
        }
    }

    /// Where value `i` of batch `b` lies.
    pub fn at(&self, b: usize, i: usize) -> usize {
        self.offset + b * self.batch + i * self.stride
    }
}

/// A block of values one exchange moves from device `from`'s array to device `to`'s (the
/// same device's where the two are equal): `count` values in each of `batches` batches,
/// read at `src`, written or added at `dst`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Transfer {
    pub from: usize,
    pub to: usize,
    pub src: Side,
    pub dst: Side,
    pub count: usize,
    pub batches: usize,
}

impl Transfer {
    /// Values moved.
    pub fn values(&self) -> usize {
        self.count * self.batches
    }

    /// The values in the order they travel between two devices: consecutive, batch after
    /// batch (what a sender packs and a receiver unpacks).
    pub fn packed(&self) -> Side {
        Side {
            offset: 0,
            stride: 1,
            batch: self.count,
        }
    }

    /// The same block moved back: from `dst` on `to` to `src` on `from`.
    pub fn reversed(self) -> Transfer {
        Transfer {
            from: self.to,
            to: self.from,
            src: self.dst,
            dst: self.src,
            ..self
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn splits() -> Vec<Decomposition> {
        let mut v = Vec::new();
        for (n, modes, w) in [
            (vec![64, 48, 40], vec![30, 20, 17], 7),
            (vec![10, 12], vec![5, 6], 4),
            (vec![9, 8, 8], vec![4, 3, 2], 2),
            (vec![16, 16], vec![1, 1], 16),
        ] {
            for devices in 1..=n[0].min(5) {
                v.push(Decomposition::new(&n, &modes, w, devices).unwrap());
            }
        }
        v
    }

    /// Slabs cover the slowest axis once, evenly, and so do the columns of modes.
    #[test]
    fn slabs_and_columns_partition() {
        for d in splits() {
            let (mut plane, mut column) = (0, 0);
            let sizes: Vec<usize> = (0..d.devices()).map(|r| d.slab(r).len()).collect();
            assert!(sizes.iter().max().unwrap() - sizes.iter().min().unwrap() <= 1);
            for r in 0..d.devices() {
                assert_eq!(d.slab(r).start, plane);
                assert_eq!(d.column_range(r).start, column);
                for p in d.slab(r) {
                    assert_eq!(d.owner(p), r);
                }
                plane = d.slab(r).end;
                column = d.column_range(r).end;
                assert!(d.local_planes(r) >= d.slab(r).len() + d.width - 1 + 2 * MARGIN);
            }
            assert_eq!((plane, column), (d.n[0], d.columns()));
        }
    }

    /// A routed point lies on its device's local grid where it lies on the whole grid, to
    /// rounding (`gap`, in grid steps), its footprint the same planes, unwrapped and inside the
    /// local grid, and its first plane in the device's slab: random points, points on ±π and
    /// beyond, and points exactly on the planes where footprints start, in `T`.
    fn routes_keep_the_footprint<T: Float>(gap: f64) {
        let pi = std::f64::consts::PI;
        for d in splits() {
            let (n0, w) = (d.n[0], d.width);
            let mut xs: Vec<f64> = (0..2000).map(|i| -7.0 + i as f64 * 0.00703).collect();
            xs.extend([-pi, pi, 0.0, 1e-300, -1e-300, 3.0 * pi, -5.5]);
            let step = 2.0 * pi / n0 as f64;
            xs.extend((0..2 * n0).map(|i| (i as f64 * 0.5 + 0.5 * w as f64) * step));
            for x in xs {
                // The coordinate as the caller holds it.
                let x = T::from(x).unwrap().to_f64().unwrap();
                let (xg, start) = locate(x, n0, w);
                let first = start.rem_euclid(n0 as i64);
                let (r, xl) = d.route::<T>(x);
                assert!(d.slab(r).contains(&(first as usize)), "{x}: {first} {r}");
                let l = d.local_planes(r);
                let (lxg, lfirst) = locate(xl.to_f64().unwrap(), l, w);
                let shift = d.slab(r).start as i64 - MARGIN as i64;
                assert_eq!((lfirst + shift).rem_euclid(n0 as i64), first, "{x}");
                assert!(
                    lfirst >= MARGIN as i64 && lfirst as usize + w + MARGIN <= l,
                    "{x}"
                );
                let apart = (lxg + shift as f64 - xg).rem_euclid(n0 as f64);
                assert!(apart.min(n0 as f64 - apart) < gap, "{x}: {lxg} {xg}");
            }
        }
    }

    #[test]
    fn routed_points_keep_their_footprint() {
        routes_keep_the_footprint::<f64>(1e-9);
        routes_keep_the_footprint::<f32>(1e-4);
    }

    /// Shares cover the points in order; the routes' transfers put every sender's run for
    /// a receiver after the runs from the senders before it, every value once, and their
    /// reverse brings each back to its sender's packed place.
    #[test]
    fn routes_move_every_point_once() {
        assert_eq!(shares(7, 3), vec![0..3, 3..5, 5..7]);
        assert_eq!(shares(1, 3), vec![0..1, 1..1, 1..1]);
        let sent = vec![vec![3, 0, 2], vec![1, 4, 0], vec![0, 0, 5]];
        let routes = Routes::new(sent.clone());
        for per_point in [1, 2] {
            let packed: Vec<Vec<f64>> = sent
                .iter()
                .enumerate()
                .map(|(q, row)| {
                    let n = per_point * row.iter().sum::<usize>();
                    (0..n).map(|i| (q * 1000 + i) as f64).collect()
                })
                .collect();
            let t = routes.transfers(per_point);
            let lens: Vec<usize> = (0..3).map(|r| per_point * routes.received(r)).collect();
            let held = carry_out(&t, &packed, &lens, false);
            for (r, got) in held.iter().enumerate() {
                let want: Vec<f64> = (0..3)
                    .flat_map(|q| {
                        let before: usize = sent[q][..r].iter().sum();
                        let run = per_point * before..per_point * (before + sent[q][r]);
                        run.map(move |i| (q * 1000 + i) as f64)
                    })
                    .collect();
                assert_eq!(got, &want, "{r}");
            }
            let back: Vec<Transfer> = t.iter().map(|t| t.reversed()).collect();
            let lens: Vec<usize> = packed.iter().map(Vec::len).collect();
            assert_eq!(carry_out(&back, &held, &lens, false), packed);
        }
        assert_eq!((Routes::record(2), Routes::record(3)), (2, 4));
    }

    /// A local grid's segments cover it in order, each inside its owner's slab, at the
    /// planes the local grid stands for.
    #[test]
    fn segments_cover_the_local_grid() {
        for d in splits() {
            let n0 = d.n[0];
            for r in 0..d.devices() {
                let mut local = 0;
                for s in d.segments(r) {
                    assert_eq!(s.local, local);
                    assert!(s.len > 0);
                    let slab = d.slab(s.owner);
                    assert!(slab.start <= s.global && s.global + s.len <= slab.end);
                    let origin = d.slab(r).start + n0 * 2 - MARGIN;
                    assert_eq!(s.global, (origin + s.local) % n0);
                    local += s.len;
                }
                assert_eq!(local, d.local_planes(r));
            }
        }
    }

    /// The transfers carried out on host arrays, one per device (`add`: summed, else
    /// written): a host emulation of the exchanges every communicator runs.
    fn carry_out(t: &[Transfer], src: &[Vec<f64>], lens: &[usize], add: bool) -> Vec<Vec<f64>> {
        let mut dst: Vec<Vec<f64>> = lens.iter().map(|&n| vec![0.0; n]).collect();
        for t in t {
            for b in 0..t.batches {
                for i in 0..t.count {
                    let v = src[t.from][t.src.at(b, i)];
                    let o = &mut dst[t.to][t.dst.at(b, i)];
                    *o = if add { *o + v } else { v };
                }
            }
        }
        dst
    }

    /// The transpose's transfers put plane `p`, column `c` of the rows at column `c`, plane
    /// `p` of the columns, every value once, and their reverse brings them back.
    #[test]
    fn transpose_transfers_move_every_value_once() {
        for d in splits() {
            let (cols, n0, devs) = (d.columns(), d.n[0], d.devices());
            let value = |p: usize, c: usize| (p * cols + c) as f64 + 1.0;
            let rows: Vec<Vec<f64>> = (0..devs)
                .map(|r| {
                    d.slab(r)
                        .flat_map(|p| (0..cols).map(move |c| value(p, c)))
                        .collect()
                })
                .collect();
            let t = d.transpose_transfers();
            let lens: Vec<usize> = (0..devs).map(|r| d.column_range(r).len() * n0).collect();
            let columns = carry_out(&t, &rows, &lens, true);
            for (r, held) in columns.iter().enumerate() {
                for (c, column) in d.column_range(r).zip(held.chunks(n0)) {
                    for (p, &v) in column.iter().enumerate() {
                        assert_eq!(v, value(p, c), "{d:?} {r} {p} {c}");
                    }
                }
            }
            let back: Vec<Transfer> = t.iter().map(|t| t.reversed()).collect();
            let lens: Vec<usize> = rows.iter().map(Vec::len).collect();
            assert_eq!(carry_out(&back, &columns, &lens, false), rows);
        }
    }

    /// The halo transfers sum every local plane into the slab plane it stands for, and
    /// their reverse fills each local plane from it.
    #[test]
    fn halo_transfers_sum_and_fill_every_plane() {
        for d in splits() {
            let (n0, plane, devs) = (d.n[0], d.plane(), d.devices());
            // Local plane j of device r stands for plane (start − MARGIN + j) mod n0.
            let global = |r: usize, j: usize| (d.slab(r).start + 2 * n0 - MARGIN + j) % n0;
            let locals: Vec<Vec<f64>> = (0..devs)
                .map(|r| {
                    let value = |j, k| ((r * 97 + j) * plane + k) as f64;
                    (0..d.local_planes(r))
                        .flat_map(|j| (0..plane).map(move |k| value(j, k)))
                        .collect()
                })
                .collect();
            let mut want = vec![0.0; n0 * plane];
            for (r, local) in locals.iter().enumerate() {
                for (j, values) in local.chunks(plane).enumerate() {
                    let at = &mut want[global(r, j) * plane..][..plane];
                    at.iter_mut().zip(values).for_each(|(a, v)| *a += v);
                }
            }
            let t = d.halo_transfers();
            let lens: Vec<usize> = (0..devs).map(|r| d.slab(r).len() * plane).collect();
            let slabs = carry_out(&t, &locals, &lens, true);
            assert_eq!(slabs.concat(), want, "{d:?}");
            let back: Vec<Transfer> = t.iter().map(|t| t.reversed()).collect();
            let lens: Vec<usize> = locals.iter().map(Vec::len).collect();
            let filled = carry_out(&back, &slabs, &lens, false);
            for (r, local) in filled.iter().enumerate() {
                for (j, values) in local.chunks(plane).enumerate() {
                    assert_eq!(values, &want[global(r, j) * plane..][..plane]);
                }
            }
        }
    }

    /// Stacks at least as long as the devices, whose batch of grids fits, go whole to the
    /// devices in contiguous shares covering the stack in order; the rest are slabs.
    #[test]
    fn the_spread_rule() {
        let gib = 1 << 30;
        for (ntransf, devices) in [(2, 2), (5, 2), (16, 2), (5, 3), (16, 3), (7, 7)] {
            let Spread::Batches(shares) = spread((ntransf, devices), 1 << 20, gib) else {
                panic!("{ntransf} on {devices}: slabs");
            };
            assert_eq!(shares.len(), devices);
            let mut next = 0;
            for s in &shares {
                assert_eq!(s.start, next);
                assert!(s.len() == ntransf / devices || s.len() == ntransf / devices + 1);
                next = s.end;
            }
            assert_eq!(next, ntransf);
        }
        let shares = vec![0..2, 2..4, 4..5];
        assert_eq!(spread((5, 3), 1 << 20, gib), Spread::Batches(shares));
        // Fewer transforms than devices, no devices, a grid batch past the memory.
        assert_eq!(spread((1, 2), 1 << 20, gib), Spread::Slabs);
        assert_eq!(spread((2, 3), 1 << 20, gib), Spread::Slabs);
        assert_eq!(spread((4, 0), 1 << 20, gib), Spread::Slabs);
        assert_eq!(spread((16, 2), gib / 8, gib), Spread::Slabs);
        assert!(matches!(spread((16, 2), gib / 16, gib), Spread::Batches(_)));
    }

    /// Splits that cannot be made are typed errors naming why.
    #[test]
    fn bad_splits_are_refused() {
        for (n, modes, devices) in [
            (vec![8, 8], vec![4, 4], 0),
            (vec![8], vec![4], 2),
            (vec![4, 8], vec![2, 4], 5),
            (vec![8, 8], vec![4], 2),
        ] {
            let e = Decomposition::new(&n, &modes, 4, devices).unwrap_err();
            assert!(matches!(e, NudtError::Devices { .. }), "{e}");
        }
    }
}
