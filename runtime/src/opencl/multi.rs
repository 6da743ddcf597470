//! [`ClMultiPlan`]: a type 1 or 2 transform over several OpenCL devices ([`MultiPlan`]), their
//! data moved through the host ([`HostLink`]). Devices opened apart from one another
//! ([`ClDevice::reopen`]) stand for several GPUs on one: CI runs every stage of the
//! multi-device path this way on PoCL.

use super::backend::ClDev;
use super::device::ClDevice;
use super::error::OpenClResult;
use super::fft::ClFloat;
use super::plan::ClOptions;
use crate::gpu::comm::HostLink;
use crate::gpu::multi::{problem, MultiPlan};
use nudt_gen::TransformType;
use std::sync::Arc;

/// A type 1 or 2 plan over several OpenCL devices.
pub type ClMultiPlan<T> = MultiPlan<ClDev<T>, HostLink, T>;

impl<T: ClFloat> MultiPlan<ClDev<T>, HostLink, T> {
    crate::gpu::multi::multi_entry_points!(super::OpenClError, opencl3::memory::Buffer<T>);

    /// A type 1 or 2 plan of `modes` with `ntransf` transforms sharing the points over
    /// `devices`, in order: whole transforms in shares of the stack where the plan layer's
    /// rule says ([`crate::planner::devices::spread`]), otherwise each transform (2-D or
    /// 3-D) split in slabs, one each; with the options' kernel, upsampling and mode order
    /// (the rest of the options choose for one device). The plan layer's errors first; too
    /// many devices for the grid is [`crate::NudtError::Devices`].
    pub fn new(
        ty: TransformType,
        modes: &[usize],
        job: (i32, usize, f64),
        opts: &ClOptions,
        devices: &[Arc<ClDevice>],
    ) -> OpenClResult<Self> {
        let problem = problem::<T>(ty, modes, job, (opts.kernel, opts.upsampling))?;
        let devs = devices
            .iter()
            .map(|d| ClDev::open(d.clone(), problem.ty))
            .collect::<OpenClResult<_>>()?;
        MultiPlan::assemble(problem, devs, opts.mode_order, |_| Ok(HostLink))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::gpu::device::Device;
    use crate::gpu::plan::Backend;
    use crate::planner::devices::{locate, Decomposition, Routes, MARGIN};
    use opencl3::memory::Buffer;

    /// The devices' routing (`nudt_route`, `nudt_pack_points`), run on the first OpenCL
    /// device, against the plan layer's rule ([`Decomposition::route`]): every point goes
    /// to the device the rule names, in that device's run of the packed share, once, its
    /// record the rule's local coordinate (its footprint on the same planes) and its other
    /// coordinates as they were. Random points, points on ±π and beyond, and points exactly
    /// where footprints start, in both precisions.
    fn routes_as_the_rule<T: ClFloat + crate::Float>(tol: f64) {
        let dev = match ClDevice::first() {
            Ok(d) => d,
            Err(e) if std::env::var_os("NUDT_REQUIRE_OPENCL").is_none() => {
                eprintln!("SKIPPED: no OpenCL device ({e})");
                return;
            }
            Err(e) => panic!("NUDT_REQUIRE_OPENCL=1 and no OpenCL device: {e}"),
        };
        let cl = ClDev::<T>::open(dev.clone(), TransformType::Type1).unwrap();
        let k = cl.slab_kernels().unwrap();
        let pi = std::f64::consts::PI;
        for (n, modes, w, devices) in [
            (vec![64, 48, 40], vec![30, 20, 17], 7, 3),
            (vec![10, 12], vec![5, 6], 4, 2),
            (vec![9, 8, 8], vec![4, 3, 2], 2, 5),
            (vec![250, 16], vec![100, 8], 16, 4),
        ] {
            let d = Decomposition::new(&n, &modes, w, devices).unwrap();
            let n0 = n[0];
            let mut x: Vec<f64> = (0..3000).map(|i| -7.0 + i as f64 * 0.00473).collect();
            x.extend([-pi, pi, 0.0, 1e-300, -1e-300, 3.0 * pi, -5.5]);
            let step = 2.0 * pi / n0 as f64;
            x.extend((0..2 * n0).map(|i| (i as f64 * 0.5 + 0.5 * w as f64) * step));
            let x: Vec<T> = x.iter().map(|&v| T::from(v).unwrap()).collect();
            let m = x.len();
            let others: Vec<Vec<T>> = (1..n.len())
                .map(|a| (0..m).map(|j| T::from(j * 10 + a).unwrap()).collect())
                .collect();
            let mut arrays = vec![dev.upload(&x, "x").unwrap()];
            arrays.extend(others.iter().map(|o| dev.upload(o, "o").unwrap()));
            let refs: Vec<&Buffer<T>> = arrays.iter().collect();
            let (records, routed) = k.route(&*dev, &d, &refs, m).unwrap();
            let (sent, non_finite) = routed.sent(&*dev).unwrap();
            assert!(!non_finite);
            let slot = Device::<T>::mem(&*dev, Some(&routed.slot));
            let slots = Device::<T>::read_words(&*dev, slot, m).unwrap();
            let rec = Routes::record(n.len());
            let records: Vec<T> = dev.read(dev.mem(Some(&records)), m * rec).unwrap();
            let mut seen = vec![false; m];
            for j in 0..m {
                let xj = x[j].to_f64().unwrap();
                let (r, want) = d.route::<T>(xj);
                let slot = slots[j] as usize;
                let run: usize = sent[..r].iter().sum();
                assert!(
                    run <= slot && slot < run + sent[r],
                    "{xj}: {slot} not in {r}'s run"
                );
                assert!(
                    !std::mem::replace(&mut seen[slot], true),
                    "slot {slot} twice"
                );
                let got = records[slot * rec];
                let l = d.local_planes(r);
                let (on_local, on_whole) =
                    (locate(got.to_f64().unwrap(), l, w).1, locate(xj, n0, w).1);
                let shift = d.slab(r).start as i64 - MARGIN as i64;
                assert_eq!(
                    (on_local + shift).rem_euclid(n0 as i64),
                    on_whole.rem_euclid(n0 as i64),
                    "{xj}"
                );
                let gap = (got - want).abs().to_f64().unwrap();
                assert!(
                    gap <= tol * want.abs().to_f64().unwrap().max(1.0),
                    "{xj}: {got:?} {want:?}"
                );
                for (a, o) in others.iter().enumerate() {
                    assert_eq!(records[slot * rec + 1 + a], o[j]);
                }
            }
            assert_eq!(sent.iter().sum::<usize>(), m);
        }
    }

    #[test]
    fn the_devices_route_as_the_plan_layer_rules() {
        routes_as_the_rule::<f64>(1e-15);
        routes_as_the_rule::<f32>(1e-6);
    }
}
