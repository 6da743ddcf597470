//! The CUDA rows' device-array times of `nudt bench --gradients`: the points, the input, the
//! cotangent and the tangents already in device memory, as a training loop on CUDA tensors
//! holds them, and the derivatives on device arrays (`CudaPlan::vjp_device`, `jvp_device`)
//! against the forward transform (`execute_device`) on the same plan. Each run ends by
//! synchronising the stream; host wall time, median of `repeats` after a warm-up.

use super::TOL;
use nudt::cuda::cudarc::driver::{CudaSlice, DriverError};
use nudt::cuda::{CudaError, CudaOptions, CudaPlan};
use nudt::gradient::Wanted;
use nudt::num_complex::Complex64;
use nudt::TransformType;
use std::sync::Arc;
use std::time::Instant;

/// Type 3's sources and targets on the device (none here: types 1 and 2).
type Type3Sets<'a> = (&'a [&'a CudaSlice<f64>], &'a [&'a CudaSlice<f64>]);

/// One case's data, on the host.
pub(super) struct Data<'a> {
    pub ty: TransformType,
    pub modes: &'a [usize],
    pub isign: i32,
    pub coords: &'a [Vec<f64>],
    pub tangents: &'a [Vec<f64>],
    pub input: &'a [Complex64],
    pub cotangent: &'a [Complex64],
}

/// Median seconds of the forward transform, the points' cotangents (reverse mode) and the
/// output's tangent for point tangents (forward mode), on device arrays of the first GPU.
pub(super) fn times(d: &Data<'_>, repeats: u64) -> Result<[f64; 3], String> {
    let e = |e: CudaError| e.to_string();
    let driver = |e: DriverError| format!("CUDA copy: {e:?}");
    let ctx = nudt::cuda::open(0).map_err(e)?;
    let stream = ctx.default_stream();
    let up = |v: &[f64]| stream.clone_htod(v).map_err(driver);
    let flat = |c: &[Complex64]| c.iter().flat_map(|v| [v.re, v.im]).collect::<Vec<_>>();
    let opts = CudaOptions {
        stream: Some(stream.clone()),
        gradients: true,
        ..CudaOptions::default()
    };
    let mut plan = CudaPlan::<f64>::new(d.ty, d.modes, d.isign, 1, TOL, opts).map_err(e)?;
    let coords = (d.coords.iter())
        .map(|a| up(a).map(Arc::new))
        .collect::<Result<Vec<_>, _>>()?;
    plan.set_points_device(&coords).map_err(e)?;
    let (input, cotangent) = (up(&flat(d.input))?, up(&flat(d.cotangent))?);
    let tangents = (d.tangents.iter())
        .map(|a| up(a))
        .collect::<Result<Vec<_>, _>>()?;
    let tangents: Vec<&CudaSlice<f64>> = tangents.iter().collect();
    let zeros = |n: usize| stream.alloc_zeros::<f64>(n).map_err(driver);
    let mut out = zeros(2 * d.cotangent.len())?;
    let mut cot: Vec<CudaSlice<f64>> = (0..d.coords.len())
        .map(|_| zeros(d.coords[0].len()))
        .collect::<Result<_, _>>()?;
    let points_only = Wanted {
        input: false,
        points: true,
        targets: false,
    };
    let time = |run: &mut dyn FnMut() -> Result<(), CudaError>| -> Result<f64, String> {
        let mut t = Vec::new();
        for i in 0..=repeats {
            let start = Instant::now();
            run().map_err(e)?;
            stream.synchronize().map_err(driver)?;
            if i > 0 {
                t.push(start.elapsed().as_secs_f64());
            }
        }
        t.sort_by(f64::total_cmp);
        Ok(t[t.len() / 2])
    };
    let forward = time(&mut || plan.execute_device(&input, &mut out))?;
    let none: Option<Type3Sets<'_>> = None;
    let reverse = time(&mut || {
        let mut outs: Vec<&mut CudaSlice<f64>> = cot.iter_mut().collect();
        let no_input: Option<&mut CudaSlice<f64>> = None;
        plan.vjp_device(
            &input,
            &cotangent,
            none,
            points_only,
            no_input,
            &mut outs,
            &mut [],
        )
    })?;
    let fwd = time(&mut || plan.jvp_device(&input, None, Some(&tangents), None, none, &mut out))?;
    Ok([forward, reverse, fwd])
}
