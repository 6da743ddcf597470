#!/usr/bin/env python3
"""What a point gradient costs from Python, against the forward transform (issue 40).

Usage (from the repository root, with nudt installed; PyTorch for the nudt.torch rows):
    python3 python/benches/gradient_timing.py [--modes 256] [--points 100000] [--eps 1e-6]
        [--threads 2] [--repeats 5] [--device cpu|cuda]

One 2-D type 1 problem (modes² modes, uniform points in [-pi, pi)², complex128), on one plan
made with gradients=True and its points set once (and the forward of a plain plan beside it):
``nudt.Plan`` on numpy arrays, or with ``--device cuda`` ``nudt.cuda.Plan`` on PyTorch CUDA
tensors (every row waits for the GPU; nothing leaves the device):

* forward: ``execute``; adjoint: ``execute_adjoint``, a type 2;
* vjp, points: ``vjp(c, g, wrt="points")``, one interpolation pass with the kernel's
  derivative;
* d transforms: what differentiating the sum term by term takes instead, ``d`` adjoint
  transforms (type 2) of ``i k_d g``, then ``Re(c conj(.))``;
* vjp, all: the points' and the strengths' cotangents together.

Then the same through nudt.torch (each call makes its plan and sets its points, as finufft's
one-call functions do): the forward call, and ``backward`` with respect to the points only.
The fastest and the median of ``repeats`` runs, in milliseconds, and the fastest as a
multiple of the first row's.
"""
import argparse
import statistics
import time

import numpy as np

import nudt


def times_ms(fn, repeats):
    """(fastest, median) of `repeats` runs: the fastest is the one least disturbed by other
    work on a shared machine."""
    times = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        fn()
        times.append((time.perf_counter() - t0) * 1e3)
    return min(times), statistics.median(times)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--modes", type=int, default=256)
    ap.add_argument("--points", type=int, default=100_000)
    ap.add_argument("--eps", type=float, default=1e-6)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--device", choices=("cpu", "cuda"), default="cpu")
    a = ap.parse_args()
    rng = np.random.default_rng(0)
    n, m = (a.modes, a.modes), a.points
    hx, hy = rng.uniform(-np.pi, np.pi, (2, m))
    hc = rng.standard_normal(m) + 1j * rng.standard_normal(m)
    hg = rng.standard_normal(n) + 1j * rng.standard_normal(n)
    k = [np.arange(s) - s // 2 for s in n]
    # The cotangent of the modes times i k_d, as the adjoint (sign -1) differentiates.
    hw = [-1j * k[0][:, None] * hg, -1j * k[1][None, :] * hg]
    if a.device == "cuda":
        import torch
        import nudt.cuda as mod
        dev = lambda v: torch.from_numpy(np.ascontiguousarray(v)).cuda()  # noqa: E731
        sync, kw, plan_kw = torch.cuda.synchronize, {}, {"dtype": "complex128"}
        norm = lambda v: float(torch.linalg.norm(v))  # noqa: E731
    else:
        mod, dev, sync, kw = nudt, (lambda v: v), (lambda: None), {"nthreads": a.threads}
        plan_kw = kw
        norm = np.linalg.norm
    x, y, c, g = map(dev, (hx, hy, hc, hg))
    weighted = [dev(w) for w in hw]

    plan = mod.Plan(1, n, eps=a.eps, gradients=True, **plan_kw)
    plan.setpts(x, y)

    def by_transforms():
        return [(c * plan.execute_adjoint(w).conj()).real for w in weighted]

    fast = plan.vjp(c, g, wrt="points").points
    slow = by_transforms()
    err = max(norm(f - s) / norm(s) for f, s in zip(fast, slow))

    plain = mod.Plan(1, n, eps=a.eps, **plan_kw)
    plain.setpts(x, y)
    rows = [
        ("forward (execute, plan without gradients)", lambda: plain.execute(c)),
        ("forward (execute, gradients=True)", lambda: plan.execute(c)),
        ("adjoint (execute_adjoint)", lambda: plan.execute_adjoint(g)),
        ("vjp, points (one pass)", lambda: plan.vjp(c, g, wrt="points")),
        ("d = 2 adjoint transforms of i k_d g", by_transforms),
        ("vjp, points + strengths", lambda: plan.vjp(c, g)),
    ]
    try:
        import torch
        import nudt.torch as nt
        torch.set_num_threads(a.threads)
        t = lambda v: torch.from_numpy(v).to(a.device)  # noqa: E731
        tx, ty, tc, tg = map(t, (hx, hy, hc, hg))

        def torch_forward():
            return nt.nufft2d1(tx, ty, tc, n, eps=a.eps, **kw)

        def torch_backward_points():
            px, py = tx.clone().requires_grad_(), ty.clone().requires_grad_()
            f = nt.nufft2d1(px, py, tc, n, eps=a.eps, **kw)
            f.backward(tg)
            return px.grad

        rows += [("nudt.torch forward (plan + points + execute)", torch_forward),
                 ("nudt.torch forward + backward, points", torch_backward_points)]
    except ImportError as e:
        print(f"(no nudt.torch rows: {e})")

    rows = [(name, lambda fn=fn: (fn(), sync())) for name, fn in rows]
    for _, fn in rows:  # warm-up: thread pools, page faults, modules
        fn()
    base = None
    where = "CUDA" if a.device == "cuda" else f"{a.threads} threads"
    print(f"2-D type 1, {n[0]}x{n[1]} modes, {m} points, eps {a.eps}, {where} "
          f"(one-pass vs d-transform point cotangents differ by {err:.1e} relative)")
    print(f"  {'':<46} {'fastest':>9}    {'median':>9}")
    for name, fn in rows:
        fastest, median = times_ms(fn, a.repeats)
        base = base or fastest
        print(f"  {name:<46} {fastest:9.1f} ms {median:9.1f} ms  {fastest / base:5.2f}x")


if __name__ == "__main__":
    main()
