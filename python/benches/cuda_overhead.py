#!/usr/bin/env python3
"""What nudt.cuda's Python layer adds to the Rust CUDA backend, at 10^6 points.

Usage (on a GPU machine, with nudt, CuPy and optionally PyTorch installed):
    python3 python/benches/cuda_overhead.py [--points 1e6] [--repeats 50] [--libs cupy,torch]
        [--only NAME,..] [--json cuda_overhead.json] [--bar 0.05]

Per problem (types 1 and 2 in 2-D and 3-D, a 2-D type 3, float32 and float64) and array
library, one nudt.cuda.Plan, points set from device arrays, then `repeats` timed calls of
plan.execute(c, out=out) with device arrays, each measured three ways:
  call      Python wall time of the execute call (it returns once the work is queued);
  rust      the runtime's own wall time inside that call (RawCudaPlan.last_call_s: measured
            in Rust, GIL released, around the plan's execute, its stream ordering included):
            what a Rust caller of the CUDA backend pays to queue the same work;
  gpu       the CUDA-event time of the transform (plan.timings(), what the Rust backend's
            benchmarks report);
  wall      the call plus the wait for the GPU (cupy deviceSynchronize).
The Python layer adds `call - rust` (argument checks, __cuda_array_interface__, the owners'
streams); its share is (call - rust) / wall, against the bar (default 5%). A second measure
queues `repeats` executes back to back and waits once: per call, (wall / repeats) against
the mean event time (`pipelined`): the Python layer costs nothing there while it queues
faster than the GPU runs.

Each problem's output is checked against the direct sum at 64 sampled outputs (float64,
computed with CuPy): a relative l2 error above 10 x eps fails the run (exit 1), as does a
share above the bar. Output: a markdown table on stdout and the rows as JSON (--json).
"""
import argparse
import json
import statistics
import sys
import time

import numpy as np

PROBLEMS = {
    "2d-t1 1000² f64": dict(tp=1, modes=(1000, 1000), eps=1e-6, dtype="complex128"),
    "2d-t2 1000² f64": dict(tp=2, modes=(1000, 1000), eps=1e-6, dtype="complex128"),
    "2d-t1 1000² f32": dict(tp=1, modes=(1000, 1000), eps=1e-5, dtype="complex64"),
    "3d-t1 100³ f32": dict(tp=1, modes=(100, 100, 100), eps=1e-5, dtype="complex64"),
    "3d-t2 100³ f32": dict(tp=2, modes=(100, 100, 100), eps=1e-5, dtype="complex64"),
    "3d-t1 100³ f64": dict(tp=1, modes=(100, 100, 100), eps=1e-6, dtype="complex128"),
    "2d-t3 f64": dict(tp=3, modes=2, eps=1e-6, dtype="complex128"),
}


def direct(cupy, tp, x, c, freqs, isign, idx):
    """float64 direct sums at the sampled outputs `idx`: types 1 and 3 at frequencies
    `freqs[idx]` over all points, type 2 at points `x[:, idx]` over all modes `freqs`."""
    x64 = cupy.stack([v.astype(cupy.float64) for v in x])
    c64 = c.astype(cupy.complex128).ravel()
    f64 = freqs.astype(cupy.float64)
    out = []
    for i in idx:
        phase = f64 @ x64[:, int(i)] if tp == 2 else f64[int(i)] @ x64
        out.append(complex((c64 * cupy.exp(1j * isign * phase)).sum()))
    return np.array(out)


def mode_freqs(cupy, modes):
    axes = [cupy.arange(n, dtype=cupy.float64) - n // 2 for n in modes]
    return cupy.stack([g.ravel() for g in cupy.meshgrid(*axes, indexing="ij")], axis=1)


def run(cu, cupy, torch, name, p, lib, m, repeats):
    rng = cupy.random.default_rng(7)
    real = np.float32 if p["dtype"] == "complex64" else np.float64
    tp = p["tp"]
    dim = p["modes"] if tp == 3 else len(p["modes"])
    x = [rng.uniform(-np.pi, np.pi, m).astype(real) for _ in range(dim)]
    targets = []
    if tp == 3:
        half = round(m ** (1 / dim)) / 2
        targets = [rng.uniform(-half, half, m).astype(real) for _ in range(dim)]
        shape_in, shape_out = (m,), (m,)
    else:
        shape_in = (m,) if tp == 1 else p["modes"]
        shape_out = p["modes"] if tp == 1 else (m,)
    c = (rng.uniform(-1, 1, shape_in) + 1j * rng.uniform(-1, 1, shape_in)).astype(p["dtype"])
    out = cupy.empty(shape_out, dtype=p["dtype"])
    conv = (lambda a: a) if lib == "cupy" else torch.as_tensor
    dx, dt, dc, dout = [conv(v) for v in x], [conv(v) for v in targets], conv(c), conv(out)
    sync = cupy.cuda.runtime.deviceSynchronize

    plan = cu.Plan(tp, p["modes"], eps=p["eps"], dtype=p["dtype"])
    plan.setpts(*dx, **dict(zip("stu", dt)))
    for _ in range(3):  # warm-up: lazy initialisation, memory pools
        plan.execute(dc, out=dout)
    sync()
    call, rust, gpu, wall = [], [], [], []
    for _ in range(repeats):
        sync()
        t0 = time.perf_counter()
        plan.execute(dc, out=dout)
        t1 = time.perf_counter()
        sync()
        t2 = time.perf_counter()
        call.append(t1 - t0)
        wall.append(t2 - t0)
        rust.append(plan._raw.last_call_s)
        gpu.append(plan.timings()[1] * 1e-3)
    sync()
    t0 = time.perf_counter()
    for _ in range(repeats):
        plan.execute(dc, out=dout)
    sync()
    pipelined = (time.perf_counter() - t0) / repeats

    got = cupy.asarray(dout).ravel()
    idx = np.random.default_rng(1).choice(got.size, 64, replace=False)
    isign = -1 if tp == 2 else 1
    freqs = (cupy.stack([v.astype(cupy.float64) for v in targets], axis=1) if tp == 3
             else mode_freqs(cupy, p["modes"]))
    want = direct(cupy, tp, x, c, freqs, isign, idx)
    have = cupy.asnumpy(got[cupy.asarray(idx)]).astype(np.complex128)
    err = float(np.linalg.norm(have - want) / np.linalg.norm(want))

    med = statistics.median
    added = [a - b for a, b in zip(call, rust)]
    return {
        "problem": name, "arrays": lib, "points": m, "type": tp, "dtype": p["dtype"],
        "eps": p["eps"], "repeats": repeats,
        "call_s": med(call), "rust_s": med(rust), "gpu_s": med(gpu), "wall_s": med(wall),
        "python_added_s": med(added),
        "python_share": med(a / w for a, w in zip(added, wall)),
        "pipelined_s": pipelined, "pipelined_over_gpu": pipelined / statistics.mean(gpu),
        "rel_error": err, "error_ok": err <= 10 * p["eps"],
    }


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--points", type=float, default=1e6)
    ap.add_argument("--repeats", type=int, default=50)
    ap.add_argument("--libs", default="cupy,torch")
    ap.add_argument("--only", default="")
    ap.add_argument("--json", default="cuda_overhead.json")
    ap.add_argument("--bar", type=float, default=0.05, help="largest Python share allowed")
    args = ap.parse_args(argv)

    import cupy
    import nudt
    import nudt.cuda as cu
    libs = args.libs.split(",")
    torch = None
    if "torch" in libs:
        try:
            import torch
        except ImportError:
            libs.remove("torch")
            print("PyTorch does not import: CuPy arrays only", file=sys.stderr)
    names = [n for n in PROBLEMS
             if not args.only or any(o in n for o in args.only.split(","))]
    gpu = cupy.cuda.runtime.getDeviceProperties(0)["name"].decode()
    m = int(args.points)
    print(f"nudt {nudt.__version__} on {gpu}, CuPy {cupy.__version__}"
          + (f", PyTorch {torch.__version__}" if torch else "")
          + f"; {m} points, median of {args.repeats}\n")
    print("| problem | arrays | GPU (events) ms | Rust call ms | Python call ms | "
          "Python adds µs | share of wall | wall ms | pipelined / GPU | rel. error |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    rows, ok = [], True
    for name in names:
        for lib in libs:
            r = run(cu, cupy, torch, name, PROBLEMS[name], lib, m, args.repeats)
            rows.append(r)
            bad = (not r["error_ok"]) or r["python_share"] > args.bar
            ok = ok and not bad
            print(f"| {name} | {lib} | {r['gpu_s'] * 1e3:.3f} | {r['rust_s'] * 1e3:.3f} | "
                  f"{r['call_s'] * 1e3:.3f} | {r['python_added_s'] * 1e6:.1f} | "
                  f"{100 * r['python_share']:.2f}% | {r['wall_s'] * 1e3:.3f} | "
                  f"{r['pipelined_over_gpu']:.3f} | {r['rel_error']:.1e}"
                  f"{' FAIL' if bad else ''} |", flush=True)
    worst = max(r["python_share"] for r in rows)
    print(f"\nlargest Python share {100 * worst:.2f}% (bar {100 * args.bar:.0f}%); "
          f"errors {'within' if all(r['error_ok'] for r in rows) else 'NOT within'} 10 x eps")
    with open(args.json, "w") as f:
        json.dump({"gpu": gpu, "nudt": nudt.__version__, "bar": args.bar, "rows": rows}, f,
                  indent=1)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
