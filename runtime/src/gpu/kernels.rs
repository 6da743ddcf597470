//! The kernels of a grid's spread module that make the passes over the sorted points —
//! spreading and interpolation by each method, with the kernel's derivative or without — and
//! which of them a pass takes, once for CUDA and OpenCL (`K`: a backend's loaded kernel).

use nudt_gen::gpu::{names, GpuMethod};

#[derive(Clone, Debug)]
pub(crate) struct PassKernels<K> {
    spread_gm: K,
    spread_sm: K,
    spread_od: K,
    interp_gm: K,
    interp_sm: K,
    spread_grad_gm: K,
    spread_grad_sm: K,
    interp_grad_gm: K,
    interp_grad_sm: K,
}

impl<K> PassKernels<K> {
    /// The module's pass kernels, each found by `load` from its generated name.
    pub fn load<E>(load: impl Fn(&'static str) -> Result<K, E>) -> Result<Self, E> {
        Ok(PassKernels {
            spread_gm: load(names::SPREAD_GM)?,
            spread_sm: load(names::SPREAD_SM)?,
            spread_od: load(names::SPREAD_OD)?,
            interp_gm: load(names::INTERP_GM)?,
            interp_sm: load(names::INTERP_SM)?,
            spread_grad_gm: load(names::SPREAD_GRAD_GM)?,
            spread_grad_sm: load(names::SPREAD_GRAD_SM)?,
            interp_grad_gm: load(names::INTERP_GRAD_GM)?,
            interp_grad_sm: load(names::INTERP_GRAD_SM)?,
        })
    }

    /// The spreading kernel of `method`, with the gradient or without; `None` for the
    /// output-driven method with the gradient, which has no kernel
    /// ([`nudt_gen::gpu::gradient_methods`] never asks for it).
    pub fn spreader(&self, method: GpuMethod, gradient: bool) -> Option<&K> {
        Some(match (method, gradient) {
            (GpuMethod::GmSort, false) => &self.spread_gm,
            (GpuMethod::GmSort, true) => &self.spread_grad_gm,
            (GpuMethod::Sm, false) => &self.spread_sm,
            (GpuMethod::Sm, true) => &self.spread_grad_sm,
            (GpuMethod::OutputDriven, false) => &self.spread_od,
            (GpuMethod::OutputDriven, true) => return None,
        })
    }

    /// The interpolation kernel of `method` (GM-sort, or SM: interpolation has no
    /// output-driven kernel, and the planner maps that method to SM), with the gradient or
    /// without.
    pub fn interpolator(&self, method: GpuMethod, gradient: bool) -> &K {
        match (method, gradient) {
            (GpuMethod::GmSort, false) => &self.interp_gm,
            (GpuMethod::GmSort, true) => &self.interp_grad_gm,
            (_, false) => &self.interp_sm,
            (_, true) => &self.interp_grad_sm,
        }
    }

    /// The kernels that take the dynamic shared (local) memory of a bin's box: the SM ones
    /// and the output-driven spreader, in that order (CUDA raises their limit).
    #[cfg_attr(not(feature = "cuda"), allow(dead_code))]
    pub fn with_shared_memory(&self) -> ([&K; 4], &K) {
        let sm = [
            &self.spread_sm,
            &self.interp_sm,
            &self.spread_grad_sm,
            &self.interp_grad_sm,
        ];
        (sm, &self.spread_od)
    }
}
