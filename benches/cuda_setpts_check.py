#!/usr/bin/env python3
"""What the device-side check for non-finite points leaves on nudt.cuda's setpts: the wall
time of setpts on CuPy points (which waits for the sort to read back one word) against the
sort's own GPU time (CUDA events, `plan.timings()`), medians of 10 after 2 warm-up calls.
Run on a machine with a GPU, CuPy and the nudt wheel: `python3 benches/cuda_setpts_check.py`."""
import time
import numpy as np
import cupy
import nudt.cuda as cu

rng = np.random.default_rng(0)
for dim, modes, m, dtype in [(2, (1000, 1000), 10**6, "complex64"), (2, (2000, 2000), 10**7, "complex64"),
                             (3, (100, 100, 100), 10**6, "complex128"), (3, (100, 100, 100), 10**7, "complex128")]:
    real = np.float32 if dtype == "complex64" else np.float64
    x = [cupy.asarray(rng.uniform(-np.pi, np.pi, m).astype(real)) for _ in range(dim)]
    plan = cu.Plan(1, modes, eps=1e-6 if dtype == "complex64" else 1e-9, dtype=dtype)
    walls, evs = [], []
    for it in range(12):
        cupy.cuda.Device().synchronize()
        t = time.perf_counter()
        plan.setpts(*x)
        cupy.cuda.Device().synchronize()
        walls.append((time.perf_counter() - t) * 1e3)
        evs.append(plan.timings()[0])
    w, e = np.median(walls[2:]), np.median(evs[2:])
    print(f"{dim}-D {dtype} M={m:.0e}: setpts wall {w:.3f} ms, sort on the GPU (events) {e:.3f} ms, "
          f"difference {w - e:.3f} ms")
