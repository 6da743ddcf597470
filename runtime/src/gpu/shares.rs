//! A multi-device plan's stack run as whole transforms ([`Spread::Batches`]): each device
//! holds a one-device plan ([`GpuPlan`]) of its contiguous share of the stack, every device
//! sorts the same points, and the devices run at once, one host thread each (a CUDA plan
//! binds its own context on the thread that runs it). Nothing moves between the devices: each
//! share's inputs and outputs are its slices of the caller's stacked arrays, so the outputs
//! come back in stack order, each transform the one-device plan's.
//!
//! [`Spread::Batches`]: crate::planner::devices::Spread::Batches

use super::plan::{Backend, GpuPlan, ModuleChoice, Setup};
use crate::float::Float;
use crate::planner::stages::Pass;
use crate::planner::Problem;
use crate::uniform::ModeOrder;
use num_complex::Complex;
use std::ops::Range;

/// A one-device plan's run from host arrays, which each backend's plan has (its
/// `execute_host`); a share's run is one.
pub(crate) trait HostRun<T> {
    type Error;
    fn host_run(
        &mut self,
        input: &[Complex<T>],
        output: &mut [Complex<T>],
        pass: Pass,
    ) -> Result<(), Self::Error>;
}

/// One-device plans of the shares of a stack, a device each.
pub(crate) struct Shares<B: Backend<T>, T: Float> {
    plans: Vec<GpuPlan<B, T>>,
    shares: Vec<Range<usize>>,
}

/// `job` on every plan at once, a host thread each; the first error, once all have ended.
fn on_each<P: Send, I: Send, E: Send>(
    plans: &mut [P],
    inputs: Vec<I>,
    job: impl Fn(&mut P, I) -> Result<(), E> + Sync,
) -> Result<(), E> {
    std::thread::scope(|s| {
        let job = &job;
        let running: Vec<_> = plans
            .iter_mut()
            .zip(inputs)
            .map(|(plan, input)| s.spawn(move || job(plan, input)))
            .collect();
        let ended: Vec<Result<(), E>> = running
            .into_iter()
            .map(|h| h.join().unwrap_or_else(|p| std::panic::resume_unwind(p)))
            .collect();
        ended.into_iter().collect()
    })
}

impl<B: Backend<T>, T: Float> Shares<B, T>
where
    GpuPlan<B, T>: HostRun<T, Error = B::Error> + Send,
    B::Error: Send,
{
    /// The plans of `problem`'s shares `shares` of its stack on the devices `devs` opened, in
    /// order: each a one-device plan of its share, with the options' mode order (the bins and
    /// methods the plan's own choice).
    pub(crate) fn assemble(
        problem: &Problem,
        devs: Vec<B>,
        order: ModeOrder,
        shares: Vec<Range<usize>>,
    ) -> Result<Self, B::Error> {
        let plans = devs
            .into_iter()
            .zip(&shares)
            .map(|(dev, share)| {
                let problem = Problem {
                    ntransf: share.len(),
                    ..problem.clone()
                };
                let setup = Setup {
                    dev,
                    profile_key: None,
                    choice: ModuleChoice::default(),
                    mode_order: order,
                    max_batch: 0,
                };
                GpuPlan::assemble(problem, setup)
            })
            .collect::<Result<_, B::Error>>()?;
        Ok(Shares { plans, shares })
    }

    /// The same points on every device, each sorting its own, all at once.
    pub(crate) fn set_points(&mut self, coords: &[&[T]]) -> Result<(), B::Error> {
        let inputs = vec![(); self.plans.len()];
        on_each(&mut self.plans, inputs, |p, ()| p.set_points_host(coords))
    }

    /// One run of `pass` over the stack, whose transforms take and give `each` values
    /// (checked): each device its share's slices of `input` and `output`, all at once.
    pub(crate) fn run(
        &mut self,
        (input, output): (&[Complex<T>], &mut [Complex<T>]),
        each: &[(usize, usize)],
        pass: Pass,
    ) -> Result<(), B::Error> {
        let (mut rest_in, mut rest_out) = (input, output);
        let mut slices = Vec::new();
        for share in &self.shares {
            let (a, b) = each[share.clone()]
                .iter()
                .fold((0, 0), |(a, b), &(x, y)| (a + x, b + y));
            let (x, after_in) = rest_in.split_at(a);
            let (y, after_out) = std::mem::take(&mut rest_out).split_at_mut(b);
            (rest_in, rest_out) = (after_in, after_out);
            slices.push((x, y));
        }
        on_each(&mut self.plans, slices, |p, (x, y)| p.host_run(x, y, pass))
    }
}

impl<B: Backend<T>, T: Float> Shares<B, T> {
    /// Each device's transforms of the stack.
    pub(crate) fn shares(&self) -> &[Range<usize>] {
        &self.shares
    }

    /// The devices' names, in order.
    pub(crate) fn device_names(&self) -> Vec<String> {
        self.plans.iter().map(|p| p.dev.device_name()).collect()
    }
}

/// Implements [`HostRun`], beside a backend's plan (`$dev`'s, elements bounded by `$bound`,
/// errors `$err`), with its private `execute_host`.
macro_rules! host_run {
    ($bound:path, $dev:ident, $err:ty) => {
        impl<T: $bound> crate::gpu::shares::HostRun<T> for crate::gpu::plan::GpuPlan<$dev<T>, T> {
            type Error = $err;
            fn host_run(
                &mut self,
                input: &[num_complex::Complex<T>],
                output: &mut [num_complex::Complex<T>],
                pass: crate::planner::stages::Pass,
            ) -> std::result::Result<(), $err> {
                self.execute_host(input, output, pass)
            }
        }
    };
}
pub(crate) use host_run;
