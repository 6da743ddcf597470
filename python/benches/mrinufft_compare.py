#!/usr/bin/env python3
"""nudt's mri-nufft backends beside mri-nufft's finufft (CPU) and cufinufft (GPU) backends,
on a 2-D radial and a 3-D phyllotaxis-radial trajectory, in one process.

Usage (with nudt, mri-nufft and finufft installed; cufinufft and CuPy for the GPU rows):
    python3 python/benches/mrinufft_compare.py [--repeats 5] [--coils 4] [--eps 1e-6]
        [--threads 0]

Per trajectory and backend: the operator is made (plans, point sort) once, then `repeats`
rounds of op (image -> k-space) and adj_op (k-space -> image) over all coils, the backends
alternating per round; medians in milliseconds, the ratio theirs/nudt (above 1: nudt
faster), and the relative l2 difference of nudt's results from the other backend's. GPU
timings synchronize the device after each call.
"""
import argparse
import statistics
import time

import mrinufft
import numpy as np

import nudt.mrinufft  # noqa: F401 -- registers "nudt" and "nudt-cuda"

PAIRS = [("nudt", "finufft"), ("nudt-cuda", "cufinufft")]


def trajectories():
    """(name, samples (K, d) in [-0.5, 0.5), image shape)."""
    return [
        ("2-D radial 256^2", mrinufft.initialize_2D_radial(Nc=402, Ns=512).reshape(-1, 2),
         (256, 256)),
        ("3-D phyllotaxis radial 96^3",
         mrinufft.initialize_3D_phyllotaxis_radial(Nc=2000, Ns=256).reshape(-1, 3),
         (96, 96, 96)),
    ]


def host(a):
    return a.get() if hasattr(a, "get") else np.asarray(a)


def timed(fun, arg, sync):
    t0 = time.perf_counter()
    out = fun(arg)
    sync()
    return time.perf_counter() - t0, out


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--coils", type=int, default=4)
    ap.add_argument("--eps", type=float, default=1e-6)
    ap.add_argument("--threads", type=int, default=0, help="CPU threads, 0 for all")
    args = ap.parse_args()
    available = set(mrinufft.list_backends(available_only=True))
    rng = np.random.default_rng(0)
    print(f"{'trajectory':30} {'backend':10} {'op ms':>9} {'adj ms':>9} "
          f"{'theirs/nudt':>12} {'rel diff':>9}")
    for name, samples, shape in trajectories():
        samples = samples.astype(np.float32)
        image = (rng.standard_normal((args.coils, *shape))
                 + 1j * rng.standard_normal((args.coils, *shape))).astype(np.complex64)
        for ours, theirs in PAIRS:
            if not {ours, theirs} <= available:
                print(f"{name:30} {ours:10} skipped: {theirs} or {ours} not available")
                continue
            gpu = ours.endswith("cuda")
            if gpu:
                import cupy
                data = cupy.asarray(image)
                sync = cupy.cuda.runtime.deviceSynchronize
            else:
                data, sync = image, (lambda: None)
            kw = dict(n_coils=args.coils, squeeze_dims=False, eps=args.eps)
            if not gpu:
                kw["nthreads"] = args.threads
            ops = {b: mrinufft.get_operator(b)(samples, shape, **kw) for b in (ours, theirs)}
            times = {b: ([], []) for b in ops}
            results = {}
            for r in range(args.repeats):
                for b in (ops if r % 2 == 0 else list(ops)[::-1]):
                    t_op, ksp = timed(ops[b].op, data, sync)
                    t_adj, img = timed(ops[b].adj_op, ksp, sync)
                    times[b][0].append(t_op)
                    times[b][1].append(t_adj)
                    results[b] = (host(ksp), host(img))
            med = {b: [statistics.median(t) * 1e3 for t in times[b]] for b in ops}
            diff = max(np.linalg.norm(a - b) / np.linalg.norm(b)
                       for a, b in zip(results[ours], results[theirs]))
            ratio = sum(med[theirs]) / sum(med[ours])
            print(f"{name:30} {ours:10} {med[ours][0]:9.1f} {med[ours][1]:9.1f} "
                  f"{ratio:12.2f} {diff:9.1e}")
            print(f"{'':30} {theirs:10} {med[theirs][0]:9.1f} {med[theirs][1]:9.1f}")


if __name__ == "__main__":
    main()
