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
    crate::gpu::multi::multi_entry_points!(super::OpenClError);

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
