//! [`CudaMultiPlan`]: a type 1 or 2 transform over several GPUs of one process
//! ([`MultiPlan`]), each with its own context and stream; their data moves from GPU to GPU
//! through NCCL where the feature `nccl` is built and the library found ([`CudaLink`]),
//! through the host otherwise.

use super::backend::CudaDev;
use super::error::CudaResult;
#[cfg(feature = "nccl")]
use super::nccl::NcclLink;
use super::plan::CudaOptions;
use super::CudaFloat;
use crate::gpu::comm::{Bufs, Carry, HostLink, Link};
use crate::gpu::multi::{problem, MultiPlan};
use cudarc::driver::CudaStream;
use nudt_gen::TransformType;
use std::sync::Arc;

/// A type 1 or 2 plan over several CUDA devices.
pub type CudaMultiPlan<T> = MultiPlan<CudaDev<T>, CudaLink, T>;

/// How a [`CudaMultiPlan`]'s GPUs exchange data: through NCCL, or through the host.
pub enum CudaLink {
    Host(HostLink),
    #[cfg(feature = "nccl")]
    Nccl(NcclLink),
}

impl CudaLink {
    /// The link `NUDT_LINK` names between the GPUs of `streams`: `host`; `nccl`, or why
    /// NCCL cannot join them (the feature not built, its library missing, a GPU listed
    /// twice); unset, NCCL where it can, the host otherwise.
    fn between(streams: &[&Arc<CudaStream>]) -> CudaResult<CudaLink> {
        let asked = std::env::var("NUDT_LINK").ok();
        if asked.as_deref() == Some("host") {
            return Ok(CudaLink::Host(HostLink));
        }
        let nccl = Self::nccl(streams);
        match asked.as_deref() {
            Some("nccl") => nccl,
            _ => Ok(nccl.unwrap_or(CudaLink::Host(HostLink))),
        }
    }

    #[cfg(feature = "nccl")]
    fn nccl(streams: &[&Arc<CudaStream>]) -> CudaResult<CudaLink> {
        NcclLink::new(streams).map(CudaLink::Nccl)
    }

    #[cfg(not(feature = "nccl"))]
    fn nccl(streams: &[&Arc<CudaStream>]) -> CudaResult<CudaLink> {
        Err(super::CudaError::Unsupported(format!(
            "NCCL between {} GPUs: nudt built without the feature `nccl`",
            streams.len()
        )))
    }
}

impl<T: CudaFloat> Link<Arc<CudaStream>, T> for CudaLink {
    fn name(&self) -> &'static str {
        match self {
            CudaLink::Host(l) => <HostLink as Link<Arc<CudaStream>, T>>::name(l),
            #[cfg(feature = "nccl")]
            CudaLink::Nccl(l) => <NcclLink as Link<Arc<CudaStream>, T>>::name(l),
        }
    }

    fn carry(
        &self,
        devs: &[&Arc<CudaStream>],
        carries: &[Carry<'_, cudarc::driver::CudaSlice<T>>],
    ) -> CudaResult<Bufs<Arc<CudaStream>, T>> {
        match self {
            CudaLink::Host(l) => l.carry(devs, carries),
            #[cfg(feature = "nccl")]
            CudaLink::Nccl(l) => l.carry(devs, carries),
        }
    }
}

impl<T: CudaFloat> MultiPlan<CudaDev<T>, CudaLink, T> {
    crate::gpu::multi::multi_entry_points!(super::CudaError, cudarc::driver::CudaSlice<T>);

    /// A type 1 or 2 plan of `modes` with `ntransf` transforms sharing the points over the
    /// GPUs of ordinals `devices`, in order: whole transforms in shares of the stack where
    /// the plan layer's rule says ([`crate::planner::devices::spread`]), otherwise each
    /// transform (2-D or 3-D) split in slabs, one each, exchanging data through NCCL where
    /// it can ([`CudaLink`]: `NUDT_LINK=host` keeps it on the host, `NUDT_LINK=nccl` makes
    /// NCCL's absence an error). Each GPU is opened as
    /// the options open one (their stream, methods, bins and batch choose for one device and
    /// are not used). Too many devices for the grid is [`crate::NudtError::Devices`].
    pub fn new(
        ty: TransformType,
        modes: &[usize],
        job: (i32, usize, f64),
        opts: &CudaOptions,
        devices: &[usize],
    ) -> CudaResult<Self> {
        let problem = problem::<T>(ty, modes, job, (opts.kernel, opts.upsampling))?;
        let devs = devices
            .iter()
            .map(|&device| {
                CudaDev::open(&CudaOptions {
                    device,
                    stream: None,
                    ..opts.clone()
                })
            })
            .collect::<CudaResult<_>>()?;
        MultiPlan::assemble(problem, devs, opts.mode_order, CudaLink::between)
    }
}
