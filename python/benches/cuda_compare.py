#!/usr/bin/env python3
"""nudt.cuda (cufinufft's Python interface) on CuPy and PyTorch arrays, on problems of the
Rust GPU benchmark (examples/cuda_bench.rs), with the runtime's own GPU times beside.

Usage (on a GPU machine, nudt installed with its `cuda` feature, CuPy and/or PyTorch):
    python3 python/benches/cuda_compare.py [--repeats 5] [--only NAME,..] [--libs cupy,torch]

Per problem and library: points uniform in [-pi, pi)^d, strengths uniform complex in the
unit square (type 3 targets uniform in [-K/2, K/2)^d, K = M^(1/d)), as cuda_bench's; then
  plan      wall time of nudt.cuda.Plan(...) (kernels come from the in-memory cache after
            the first plan of a shape);
  setpts    wall time of plan.setpts(...) until the GPU is done, and the runtime's CUDA-event
            time of the same call (plan.timings(), what cuda_bench reports): the first call
            (which pays lazy initialisation: type 3 plans its grids there) and a second;
  execute   mean of `repeats` calls of plan.execute(c, out=out) after a warm-up, wall until
            the GPU is done, and the runtime's event time (mean);
  alloc     the same with out=None (the result allocated by the input's library);
  one-shot  nufft{d}d{t}(...) wall, plan + setpts + execute;
  error     relative l2 error on 64 sampled outputs against the direct sum, computed in
            float64 with CuPy on the GPU.
The Python layer's cost is the wall time minus the event time (it includes the launch and
synchronisation latency a Rust caller pays too).
"""
import argparse
import statistics
import time

import numpy as np

import nudt.cuda as cu

PROBLEMS = {
    "2D t1 1000² M=1e7 f64 1e-6": dict(tp=1, modes=(1000, 1000), m=10**7, eps=1e-6,
                                       dtype="complex128"),
    "3D t2 100³ M=1e7 f32 1e-5": dict(tp=2, modes=(100, 100, 100), m=10**7, eps=1e-5,
                                      dtype="complex64"),
    "1D t1 N=1e6 M=1e7 f32 1e-6": dict(tp=1, modes=(10**6,), m=10**7, eps=1e-6,
                                       dtype="complex64"),
    "2D t3 M=1e6 → 1e6 f64 1e-6": dict(tp=3, modes=2, m=10**6, eps=1e-6,
                                       dtype="complex128"),
}


def direct_sample(cupy, tp, x, c, freqs, isign, idx):
    """float64 direct sums at sampled outputs: type 1/3 at frequencies `freqs[idx]`, type 2
    at points `x[idx]` over all modes in `c` (modes as frequency vectors `freqs`)."""
    x64 = cupy.stack([v.astype(cupy.float64) for v in x])          # (d, M)
    c64 = c.astype(cupy.complex128).ravel()
    f64 = freqs.astype(cupy.float64)                               # (K, d)
    out = []
    for i in idx:
        if tp == 2:
            phase = f64 @ x64[:, i]                                 # over all modes
            out.append(complex((c64 * cupy.exp(1j * isign * phase)).sum()))
        else:
            phase = f64[i] @ x64
            out.append(complex((c64 * cupy.exp(1j * isign * phase)).sum()))
    return np.array(out)


def mode_freqs(cupy, modes):
    axes = [cupy.arange(n, dtype=cupy.float64) - n // 2 for n in modes]
    grids = cupy.meshgrid(*axes, indexing="ij")
    return cupy.stack([g.ravel() for g in grids], axis=1)


def run(name, p, lib, repeats, cupy, torch):
    rng = cupy.random.default_rng(7)
    real = np.float32 if p["dtype"] == "complex64" else np.float64
    tp, m = p["tp"], p["m"]
    dim = p["modes"] if tp == 3 else len(p["modes"])
    x = [rng.uniform(-np.pi, np.pi, m).astype(real) for _ in range(dim)]
    targets = []
    if tp == 3:
        k = m
        half = round(m ** (1 / dim)) / 2
        targets = [rng.uniform(-half, half, k).astype(real) for _ in range(dim)]
        n_in, n_out = m, k
    else:
        nmod = int(np.prod(p["modes"]))
        n_in, n_out = (m, nmod) if tp == 1 else (nmod, m)
    shape_in = (n_in,) if tp != 2 else p["modes"]
    shape_out = p["modes"] if tp == 1 else (n_out,)
    c = (rng.uniform(-1, 1, shape_in) + 1j * rng.uniform(-1, 1, shape_in)).astype(p["dtype"])
    out = cupy.empty(shape_out, dtype=p["dtype"])
    conv = (lambda a: a) if lib == "cupy" else torch.as_tensor
    dx, dt, dc, dout = [conv(v) for v in x], [conv(v) for v in targets], conv(c), conv(out)
    sync = cupy.cuda.runtime.deviceSynchronize

    sync()
    t0 = time.perf_counter()
    plan = cu.Plan(tp, p["modes"], eps=p["eps"], dtype=p["dtype"])
    t_plan = time.perf_counter() - t0
    row = dict(plan=t_plan * 1e3)
    for key in ("setpts1", "setpts"):  # the first call pays lazy initialisation
        sync()
        t0 = time.perf_counter()
        plan.setpts(*dx, **dict(zip("stu", dt)))
        sync()
        row[key] = (time.perf_counter() - t0) * 1e3
        row[key + "_ev"] = plan.timings()[0]
    for key, kw in (("execute", dict(out=dout)), ("alloc", {})):
        plan.execute(dc, **kw)
        sync()
        walls, evs = [], []
        for _ in range(repeats):
            t0 = time.perf_counter()
            plan.execute(dc, **kw)
            sync()
            walls.append((time.perf_counter() - t0) * 1e3)
            evs.append(plan.timings()[1])
        row[key] = statistics.mean(walls)
        row[key + "_ev"] = statistics.mean(evs)
    fn = getattr(cu, f"nufft{dim}d{tp}")
    sync()
    t0 = time.perf_counter()
    if tp == 1:
        fn(*dx, dc, p["modes"], eps=p["eps"])
    else:
        fn(*dx, dc, *dt, eps=p["eps"])
    sync()
    row["oneshot"] = (time.perf_counter() - t0) * 1e3

    got = cupy.asarray(plan.execute(dc, out=dout)).ravel()
    idx = np.random.default_rng(1).choice(n_out, 64, replace=False)
    isign = -1 if tp == 2 else 1
    if tp == 1:
        freqs = mode_freqs(cupy, p["modes"])
    elif tp == 2:
        freqs = mode_freqs(cupy, p["modes"])
    else:
        freqs = cupy.stack([v.astype(cupy.float64) for v in targets], axis=1)
    want = direct_sample(cupy, tp, x, c, freqs, isign, idx)
    have = cupy.asnumpy(got[cupy.asarray(idx)]).astype(np.complex128)
    row["err"] = float(np.linalg.norm(have - want) / np.linalg.norm(want))
    return row


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--only", default="")
    ap.add_argument("--libs", default="cupy,torch")
    args = ap.parse_args()
    import cupy
    torch = None
    if "torch" in args.libs:
        import torch
    names = [n for n in PROBLEMS if not args.only or any(o in n for o in args.only.split(","))]
    print(f"GPU: {cupy.cuda.runtime.getDeviceProperties(0)['name'].decode()}, "
          f"CuPy {cupy.__version__}" + (f", PyTorch {torch.__version__}" if torch else ""))
    print("| problem | arrays | plan ms | first setpts ms (events) | setpts ms (events) | "
          "execute ms (events) | execute, out=None ms (events) | one-shot ms | rel. error |")
    print("|---|---|---|---|---|---|---|---|---|")
    for name in names:
        for lib in args.libs.split(","):
            r = run(name, PROBLEMS[name], lib, args.repeats, cupy, torch)
            print(f"| {name} | {lib} | {r['plan']:.1f} | {r['setpts1']:.3f} "
                  f"({r['setpts1_ev']:.3f}) | {r['setpts']:.3f} "
                  f"({r['setpts_ev']:.3f}) | {r['execute']:.3f} ({r['execute_ev']:.3f}) | "
                  f"{r['alloc']:.3f} ({r['alloc_ev']:.3f}) | {r['oneshot']:.1f} | "
                  f"{r['err']:.1e} |", flush=True)


if __name__ == "__main__":
    main()
