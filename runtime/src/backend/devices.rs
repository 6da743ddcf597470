//! Plans on the devices listed in [`BackendOptions::devices`]: one listed device is a
//! one-device plan there; two or more a [`crate::MultiPlan`] of types 1 and 2 over them (the
//! plan layer's rules: whole transforms in shares of the stack, or each transform in slabs),
//! behind the same [`NufftPlan`] interface as any plan. What a plan over several devices does
//! not run in this build — type 3, a point set per transform, gradients — is a typed error.
//!
//! A device may be listed more than once: it is then opened that many times apart from
//! itself, each opening with its own queue and buffers, which runs every stage of the
//! multi-device path on one GPU (how CI tries it on PoCL, and a user without several GPUs).

use super::{Backend, BackendError, BackendOptions, NufftPlan, PlanArgs, PlanReport, Shape};
use crate::error::NudtError;
use crate::planner::devices::Spread;

/// A plan over several devices refusing what it does not run: `why`, for `devices` devices.
fn refuse(devices: usize, why: &str) -> BackendError {
    NudtError::Devices {
        devices,
        why: why.to_string(),
    }
    .into()
}

/// Type 3 is planned on one device only.
const TYPE3: &str = "type 3 runs on one device in this build";

/// The report of a multi-device plan: its devices and how the stack goes over them.
fn multi_report(names: Vec<String>, spread: Spread) -> PlanReport {
    let n = names.len();
    let method = match spread {
        Spread::Slabs => format!("each transform in slabs over {n} devices"),
        Spread::Batches(shares) => format!("transforms in shares {shares:?} over {n} devices"),
    };
    PlanReport {
        device: Some(names.join(", ")),
        method: Some(method),
        ..PlanReport::default()
    }
}

/// The gradient passes `$name`, each refused ([`no_gradient`]).
macro_rules! refuse_gradients {
    ($($name:ident),*) => {$(
        fn $name(
            &mut self,
            _: &[num_complex::Complex<T>],
            _: &mut [num_complex::Complex<T>],
            _: bool,
        ) -> Result<(), BackendError> {
            Err(no_gradient())
        }
    )*};
}

/// The [`NufftPlan`] of a backend's multi-device plan type `$plan` (`$float` its precisions,
/// `$backend` its [`Backend`]), forwarding what the plan runs and refusing the rest.
macro_rules! multi_nufft_plan {
    ($plan:ident, $float:path, $backend:expr) => {
        impl<T: $float> NufftPlan<T> for $plan<T> {
            fn backend(&self) -> Backend {
                $backend
            }
            fn kernel(&self) -> &nudt_gen::KernelSpec {
                $plan::kernel(self)
            }
            fn fine_grid(&self) -> Vec<usize> {
                $plan::fine_grid(self).to_vec()
            }
            fn points_per_transform(&self) -> bool {
                false
            }
            fn set_points_type3(&mut self, _: &[&[T]], _: &[&[T]]) -> Result<(), BackendError> {
                Err(refuse(self.device_names().len(), TYPE3))
            }
            fn set_points_per_transform(&mut self, _: &[&[&[T]]]) -> Result<(), BackendError> {
                let why = "a point set per transform runs on one device in this build";
                Err(refuse(self.device_names().len(), why))
            }
            fn set_points_type3_per_transform(
                &mut self,
                _: &[&[&[T]]],
                _: &[&[&[T]]],
            ) -> Result<(), BackendError> {
                Err(refuse(self.device_names().len(), TYPE3))
            }
            refuse_gradients!(interp_with_gradient, spread_with_gradient);
            fn report(&self) -> PlanReport {
                multi_report(self.device_names(), self.spread())
            }
            forward_plan_methods!(@query $plan<T>;
                transform_type -> nudt_gen::TransformType,
                dim -> usize,
                tolerance -> f64,
                point_counts -> Option<Vec<(usize, usize)>>,
                recipe -> crate::planner::Recipe,
                mode_order -> crate::ModeOrder);
            forward_plan_methods!(@run $plan<T>;
                set_points(coords: &[&[T]]),
                execute(input: &[num_complex::Complex<T>], output: &mut [num_complex::Complex<T>]),
                execute_adjoint(input: &[num_complex::Complex<T>], output: &mut [num_complex::Complex<T>]));
        }
    };
}

/// Gradients are asked of a plan over several devices.
fn no_gradient() -> BackendError {
    NudtError::NoGradient {
        why: "a plan over several devices has no gradient pass in this build; plan on one device",
    }
    .into()
}

/// A boxed plan, or why not.
type Boxed<T> = Result<Box<dyn NufftPlan<T>>, BackendError>;

/// The rule of listed devices, for `count` of them: one, `one`'s plan there (any type);
/// several, `many`'s multi-device plan of a type 1 or 2 (`ty`, `modes`, `(isign, ntransf,
/// tol)`), type 3 refused.
fn on_devices<'a, T>(
    (shape, isign, ntransf, tol): PlanArgs<'a>,
    count: usize,
    one: impl FnOnce(PlanArgs<'a>) -> Boxed<T>,
    many: impl FnOnce(nudt_gen::TransformType, &'a [usize], (i32, usize, f64)) -> Boxed<T>,
) -> Boxed<T> {
    if count == 1 {
        return one((shape, isign, ntransf, tol));
    }
    match shape {
        Shape::Uniform(ty, modes) => many(ty, modes, (isign, ntransf, tol)),
        Shape::Type3(_) => Err(refuse(count, TYPE3)),
    }
}

#[cfg(feature = "cuda")]
pub(super) use cuda::plan as cuda_plan;
#[cfg(feature = "opencl")]
pub(super) use opencl::plan as opencl_plan;

#[cfg(feature = "cuda")]
mod cuda {
    use super::*;
    use crate::cuda::{CudaFloat, CudaMultiPlan, CudaOptions, CudaPlan};

    multi_nufft_plan!(CudaMultiPlan, CudaFloat, Backend::Cuda);

    /// A CUDA plan on the GPUs of ordinals `opts.devices`.
    pub fn plan<T: CudaFloat>(args: PlanArgs<'_>, opts: &BackendOptions) -> Boxed<T> {
        let devices = &opts.devices;
        let one = |args| -> Boxed<T> {
            let o = CudaOptions {
                device: devices[0],
                stream: None,
                ..opts.cuda.clone()
            };
            boxed_plan!(CudaPlan::<T>, o, args)
        };
        on_devices(args, devices.len(), one, |ty, modes, job| {
            Ok(Box::new(CudaMultiPlan::<T>::new(
                ty, modes, job, &opts.cuda, devices,
            )?))
        })
    }
}

#[cfg(feature = "opencl")]
mod opencl {
    use super::*;
    use crate::opencl::{ClDevice, ClFloat, ClMultiPlan, ClOptions, ClPlan};

    multi_nufft_plan!(ClMultiPlan, ClFloat, Backend::OpenCl);

    /// An OpenCL plan on `opts.devices`: this build opens the options' device (else the
    /// first one found) as device 0, once per time it is listed.
    pub fn plan<T: ClFloat>(args: PlanArgs<'_>, opts: &BackendOptions) -> Boxed<T> {
        let n = opts.devices.len();
        if let Some(&k) = opts.devices.iter().find(|&&k| k != 0) {
            let why = format!(
                "OpenCL device {k}: this build opens one OpenCL device, 0 (list it more than once to run over several openings of it)"
            );
            return Err(refuse(n, &why));
        }
        let first = match &opts.opencl.device {
            Some(d) => d.clone(),
            None => ClDevice::first()?,
        };
        let one = |args| -> Boxed<T> {
            let o = ClOptions {
                device: Some(first.clone()),
                ..opts.opencl.clone()
            };
            boxed_plan!(ClPlan::<T>, o, args)
        };
        on_devices(args, n, one, |ty, modes, job| {
            let mut devices = vec![first.clone()];
            for _ in 1..n {
                devices.push(first.reopen()?);
            }
            Ok(Box::new(ClMultiPlan::<T>::new(
                ty,
                modes,
                job,
                &opts.opencl,
                &devices,
            )?))
        })
    }
}
