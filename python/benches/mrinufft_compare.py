#!/usr/bin/env python3
"""nudt's mri-nufft backends beside mri-nufft's finufft (CPU) and cufinufft (GPU) backends,
on a 2-D radial, a 2-D spiral and a 3-D phyllotaxis-radial trajectory, in one process.

Usage (with nudt, mri-nufft and finufft installed; cufinufft and CuPy for the GPU rows):
    python3 python/benches/mrinufft_compare.py [--repeats 5] [--coils 4] [--eps 1e-6]
        [--threads 0] [--pairs cpu,gpu] [--json mrinufft_compare.json] [--max-diff 1e-3]

Per trajectory and pair ("cpu": nudt / finufft, "gpu": nudt-cuda / cufinufft): each operator
is made (plans, point sort) once, timed (`make`), then `repeats` rounds of op (image ->
k-space) and adj_op (k-space -> image) over all coils, the two backends alternating per
round; GPU rows work on CuPy arrays and wait for the device after each call. Medians in
milliseconds, the ratio theirs/nudt of op + adj_op (above 1: nudt faster), and the relative
l2 difference of nudt's results from the other backend's, which must stay below --max-diff
(exit status 1 otherwise: both compute the same operator to eps in float32). A pair whose
backends are not available is reported and skipped (where only the peer is missing,
nudt's backend is timed alone). Output: a markdown table on stdout, the
rows as JSON (--json).
"""
import argparse
import json
import statistics
from importlib import metadata
import sys
import time
import warnings

import mrinufft
import numpy as np

import nudt.mrinufft  # noqa: F401 -- registers "nudt" and "nudt-cuda"

PAIRS = {"cpu": ("nudt", "finufft"), "gpu": ("nudt-cuda", "cufinufft")}


def trajectories():
    """(name, samples (K, d) in [-0.5, 0.5), image shape)."""
    return [
        ("2-D radial 256², 402 × 512",
         mrinufft.initialize_2D_radial(Nc=402, Ns=512).reshape(-1, 2), (256, 256)),
        ("2-D spiral 256², 64 × 2048",
         mrinufft.initialize_2D_spiral(Nc=64, Ns=2048, nb_revolutions=16).reshape(-1, 2),
         (256, 256)),
        ("3-D phyllotaxis radial 96³, 2000 × 256",
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


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--coils", type=int, default=4)
    ap.add_argument("--eps", type=float, default=1e-6)
    ap.add_argument("--threads", type=int, default=0, help="CPU threads, 0 for all")
    ap.add_argument("--pairs", default="cpu,gpu")
    ap.add_argument("--json", default="mrinufft_compare.json", help='JSON file ("-": none)')
    ap.add_argument("--max-diff", type=float, default=1e-3)
    args = ap.parse_args(argv)
    warnings.filterwarnings("ignore", message="Samples will be rescaled")
    available = set(mrinufft.list_backends(available_only=True))
    rng = np.random.default_rng(0)
    print(f"mri-nufft {metadata.version('mri-nufft')}, nudt {nudt.__version__}; "
          f"{args.coils} coils, "
          f"float32, eps {args.eps}, median of {args.repeats}; ratio theirs/nudt of "
          f"op + adj_op (above 1: nudt faster)\n")
    print("| trajectory | backend | make ms | op ms | adj_op ms | ratio | rel. diff |")
    print("|---|---|---|---|---|---|---|")
    rows, ok = [], True
    for name, samples, shape in trajectories():
        samples = samples.astype(np.float32)
        image = (rng.standard_normal((args.coils, *shape))
                 + 1j * rng.standard_normal((args.coils, *shape))).astype(np.complex64)
        for pair in args.pairs.split(","):
            ours, theirs = PAIRS[pair]
            if ours not in available:
                print(f"| {name} | {ours} | skipped: not available | | | | |")
                continue
            if theirs not in available:
                print(f"| {name} | {theirs} | not available: {ours} alone | | | | |")
            if pair == "gpu":
                import cupy
                data = cupy.asarray(image)
                sync = cupy.cuda.runtime.deviceSynchronize
            else:
                data, sync = image, (lambda: None)
            kw = dict(n_coils=args.coils, squeeze_dims=False, eps=args.eps)
            if pair == "cpu":
                kw["nthreads"] = args.threads
            ops, make = {}, {}
            for b in [x for x in (ours, theirs) if x in available]:
                sync()
                t0 = time.perf_counter()
                ops[b] = mrinufft.get_operator(b)(samples, shape, **kw)
                sync()
                make[b] = time.perf_counter() - t0
            times = {b: ([], []) for b in ops}
            results = {}
            for r in range(args.repeats):
                for b in (ops if r % 2 == 0 else list(ops)[::-1]):
                    t_op, ksp = timed(ops[b].op, data, sync)
                    t_adj, img = timed(ops[b].adj_op, ksp, sync)
                    times[b][0].append(t_op)
                    times[b][1].append(t_adj)
                    results[b] = (host(ksp), host(img))
            med = {b: [statistics.median(t) for t in times[b]] for b in ops}
            if theirs in ops:
                diff = max(float(np.linalg.norm(a - b) / np.linalg.norm(b))
                           for a, b in zip(results[ours], results[theirs]))
                ratio = sum(med[theirs]) / sum(med[ours])
            else:
                diff = ratio = float("nan")
            good = not diff > args.max_diff
            ok = ok and good
            rows.append({"trajectory": name, "pair": pair, "samples": len(samples),
                         "shape": list(shape), "coils": args.coils, "eps": args.eps,
                         "repeats": args.repeats, "ratio": ratio, "rel_diff": diff,
                         **{b: {"make_s": make[b], "op_s": med[b][0], "adj_op_s": med[b][1]}
                            for b in ops}})
            for b in ops:
                extra = (f"{ratio:.2f}", f"{diff:.1e}" + ("" if good else " FAIL")) \
                    if b == ours else ("", "")
                print(f"| {name} | {b} | {make[b] * 1e3:.1f} | {med[b][0] * 1e3:.2f} | "
                      f"{med[b][1] * 1e3:.2f} | {extra[0]} | {extra[1]} |", flush=True)
    if args.json != "-":
        with open(args.json, "w") as fh:
            json.dump({"mrinufft": metadata.version("mri-nufft"), "nudt": nudt.__version__,
                       "rows": rows}, fh, indent=1)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
