#!/usr/bin/env python3
"""FINUFFT's side of `nudt bench --per-transform`: a stack of B transforms, each with its own
point set, as a FINUFFT user runs it today: one `finufft.Plan` and, per transform, `setpts`
on its points and `execute` on its input.

Usage:
    python3 benches/per_transform_peer.py --data DIR --type 1|2|3 --dim D
        [--modes N1,N2[,N3]] [--tol 1e-6] [--threads N] [--repeats R]

Data (written by nudt, float64 / complex128, C order): DIR/x.npy, y.npy[, z.npy], each of
shape (B, M): transform b's coordinates (type 3: sources) along that axis in row b; for type
3, DIR/s.npy, t.npy[, u.npy] of shape (B, K), its targets; DIR/input.npy: type 1's or 3's
strengths (B, M) or type 2's modes (B, N1, N2[, N3]); DIR/nudt.npy: nudt's output of the
same stack, which FINUFFT's is compared against.

Signs: +1 for types 1 and 3, -1 for type 2; modes in FINUFFT's default order (modeord 0), as
nudt's. Timed per repeat: setpts + execute over the B transforms (the plan is made once,
before, and reported as plan_s). Output: one JSON line with plan_s, run_s (the median over
the repeats), rel_diff (||finufft - nudt|| / ||nudt|| over the whole stack), version; or
{"error": ...} and exit 3 when finufft cannot be imported.
"""
import argparse
import json
import os
import sys
import time


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--data", required=True)
    ap.add_argument("--type", type=int, choices=(1, 2, 3), required=True)
    ap.add_argument("--dim", type=int, choices=(1, 2, 3), required=True)
    ap.add_argument("--modes", help="types 1 and 2")
    ap.add_argument("--tol", type=float, default=1e-6)
    ap.add_argument("--threads", type=int, default=os.cpu_count())
    ap.add_argument("--repeats", type=int, default=3)
    a = ap.parse_args()
    try:
        import finufft
        import numpy as np
    except ImportError as e:
        print(json.dumps({"error": f"finufft not installed: {e}"}), flush=True)
        sys.exit(3)

    dim = a.dim
    coords = [np.load(os.path.join(a.data, f"{c}.npy")) for c in "xyz"[:dim]]
    targets = [np.load(os.path.join(a.data, f"{c}.npy")) for c in "stu"[:dim]] \
        if a.type == 3 else []
    data = np.load(os.path.join(a.data, "input.npy"))
    want = np.load(os.path.join(a.data, "nudt.npy"))
    batch, m = coords[0].shape
    if a.type == 3:
        modes, shape = dim, (batch, targets[0].shape[1])
    else:
        modes = tuple(int(n) for n in a.modes.split(","))
        shape = (batch, m) if a.type == 2 else (batch,) + modes
    out = np.empty(shape, dtype=np.complex128)

    t0 = time.perf_counter()
    plan = finufft.Plan(
        a.type, modes, eps=a.tol, isign=-1 if a.type == 2 else 1, nthreads=a.threads
    )
    plan_s = time.perf_counter() - t0

    def run():
        for b in range(batch):
            plan.setpts(*(c[b] for c in coords), **{n: s[b] for n, s in zip("stu", targets)})
            plan.execute(data[b], out=out[b])

    run()  # warm-up: FFTW's plan and the first allocation
    times = []
    for _ in range(a.repeats):
        t0 = time.perf_counter()
        run()
        times.append(time.perf_counter() - t0)
    rel = float(np.linalg.norm(out - want) / np.linalg.norm(want))
    print(
        json.dumps(
            {
                "plan_s": plan_s,
                "run_s": float(np.median(times)),
                "rel_diff": rel,
                "version": finufft.__version__,
            }
        ),
        flush=True,
    )


if __name__ == "__main__":
    main()
