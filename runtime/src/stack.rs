//! A stack of transforms on the CPU, several at once: a plan's `ntransf` transforms, sharing
//! their points or each with its own set.
//!
//! A transform's steps are parallel inside, but between them it synchronises (a slab, an
//! FFT axis) and some run on few threads; a small transform (10⁴–10⁵
//! points) is mostly such steps, so one transform after another left cores idle. Here a
//! few workers, each with its own buffers, take transforms from one queue and run them
//! through the same parallel steps: rayon's threads fill one transform's gaps with
//! another's tasks. How many run at once is the plan layer's rule
//! ([`crate::planner::limits::cpu_concurrent`]): the threads and the memory the buffers take.

use crate::error::Result;
use rayon::prelude::*;
use std::sync::Mutex;

/// Runs transform `b` of `each.len()` on its slices of `input` and `output`, the
/// concatenations of the transforms' arrays of lengths `each[b]` (input, output), at most
/// `slots.len()` at once, each on a slot's buffers. A transform without input gives zeros, and
/// one without output has nothing to do; neither is run. The first error (by slot) is
/// returned once every slot has stopped.
pub(crate) fn run<V, W>(
    slots: &mut [W],
    each: &[(usize, usize)],
    input: &[V],
    output: &mut [V],
    transform: impl Fn(usize, &mut W, &[V], &mut [V]) -> Result<()> + Sync,
) -> Result<()>
where
    V: Copy + Default + Send + Sync,
    W: Send,
{
    let mut jobs = Vec::with_capacity(each.len());
    let (mut x, mut y) = (input, output);
    for (b, &(a, o)) in each.iter().enumerate() {
        let (xb, rest) = x.split_at(a);
        x = rest;
        let (yb, rest) = std::mem::take(&mut y).split_at_mut(o);
        y = rest;
        if xb.is_empty() {
            yb.fill(V::default());
        } else if !yb.is_empty() {
            jobs.push((b, xb, yb));
        }
    }
    let run_one = |w: &mut W, (b, x, y): (usize, &[V], &mut [V])| transform(b, w, x, y);
    match slots {
        [] => Ok(()),
        [w] => jobs.into_iter().try_for_each(|job| run_one(w, job)),
        _ => {
            // The longest first, so that a long transform does not start last and run alone.
            jobs.sort_by_key(|(_, x, y)| std::cmp::Reverse(x.len() + y.len()));
            let queue = Mutex::new(jobs.into_iter());
            // The lock is held only to take a job: never across the parallel work.
            let next = || queue.lock().unwrap_or_else(|e| e.into_inner()).next();
            slots
                .par_iter_mut()
                .map(|w| {
                    while let Some(job) = next() {
                        run_one(w, job)?;
                    }
                    Ok(())
                })
                .collect::<Vec<Result<()>>>()
                .into_iter()
                .collect()
        }
    }
}

#[cfg(test)]
mod tests {
    use super::run;
    use crate::error::NudtError;

    /// Every transform runs once on its own slices, whatever the slots, and empty ones are
    /// zeros or nothing.
    #[test]
    fn each_transform_gets_its_slices() {
        let each = [(2, 3), (0, 2), (3, 0), (1, 1), (4, 2)];
        let input: Vec<u64> = (1..=10).collect();
        for slots in 1..=3 {
            let mut output = vec![7u64; 8];
            let mut work = vec![0usize; slots];
            run(&mut work, &each, &input, &mut output, |b, w, x, y| {
                *w += 1;
                let sum: u64 = x.iter().sum();
                y.iter_mut().for_each(|v| *v = 100 * b as u64 + sum);
                Ok(())
            })
            .unwrap();
            assert_eq!(output, [3, 3, 3, 0, 0, 306, 434, 434], "{slots} slots");
            assert_eq!(work.iter().sum::<usize>(), 3, "{slots} slots");
        }
    }

    #[test]
    fn an_error_stops_the_stack() {
        let mut work = vec![(); 2];
        let mut output = vec![0u8; 3];
        let r = run(
            &mut work,
            &[(1, 1); 3],
            &[1u8; 3],
            &mut output,
            |b, _, _, _| {
                if b == 1 {
                    Err(NudtError::PointsNotSet)
                } else {
                    Ok(())
                }
            },
        );
        assert_eq!(r, Err(NudtError::PointsNotSet));
    }
}
