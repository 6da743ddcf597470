//! [`CudaMultiPlan`]: a type 1 or 2 transform over several GPUs of one process
//! ([`MultiPlan`]), each with its own context and stream; their data moves through the host
//! ([`HostComm`]) until NCCL's communicator carries it (docs/design.md, "Several devices").

use super::backend::CudaDev;
use super::error::CudaResult;
use super::plan::CudaOptions;
use super::CudaFloat;
use crate::gpu::comm::HostComm;
use crate::gpu::multi::{problem, MultiPlan};
use nudt_gen::TransformType;

/// A type 1 or 2 plan over several CUDA devices.
pub type CudaMultiPlan<T> = MultiPlan<CudaDev<T>, HostComm, T>;

impl<T: CudaFloat> MultiPlan<CudaDev<T>, HostComm, T> {
    crate::gpu::multi::multi_entry_points!(super::CudaError);

    /// A type 1 or 2 plan of `modes` with `ntransf` transforms sharing the points over the
    /// GPUs of ordinals `devices`, in order: whole transforms in shares of the stack where
    /// the plan layer's rule says ([`crate::planner::devices::spread`]), otherwise each
    /// transform (2-D or 3-D) split in slabs, one each. Each GPU is opened as the options
    /// open one (their stream, methods, bins and batch choose for one device and are not
    /// used). Too many devices for the grid is [`crate::NudtError::Devices`].
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
        MultiPlan::assemble(problem, devs, opts.mode_order, HostComm)
    }
}
