#!/usr/bin/env python3
"""FINUFFT peer benchmark, called as a subprocess by `nudt bench --compare finufft`.

Usage:
    python3 benches/finufft_peer.py --problems FILE.toml [--only NAME[,NAME..]]
        [--threads N] [--repeats R] [--sample S] [--scale F] [--seed SEED]

Problems file: TOML with a `[[problem]]` array (see benches/problems.toml). Keys: name, type
(1, 2 or 3), modes (types 1/2), points, tol, precision ("f64" or "f32"), optional dim (else
len(modes), else the leading "<d>d" of the name), optional distribution (only "uniform"),
optional gpu_only (such problems are skipped).

Data per problem (numpy default_rng(seed); the Rust side uses its own RNG, only the
distributions match):
  * points uniform in [-pi, pi)^d;
  * type 1 strengths and type 2 mode coefficients complex standard normal (re, im ~ N(0,1));
  * type 3: `points` sources uniform in [-pi, pi)^d with complex standard normal strengths,
    and as many targets uniform in [-K/2, K/2)^d, K = points^(1/d).
  `--scale F` multiplies the point count (types 1/2 keep their modes; type 3 targets and K
  follow the scaled count). Points/strengths are generated in float64 and cast for "f32".

Timing: finufft.Plan(type, modes or dim, eps=tol, isign=+1 for types 1/3 and -1 for type 2,
dtype=complex128/complex64, nthreads=N), then setpts, then execute; the whole sequence is
repeated R times (default 3). Reported: the median of each phase and the median of the
per-repeat totals (plan + setpts + execute), in seconds.

Error: relative l2 error ||approx - exact|| / ||exact|| over a random sample of S outputs
(default 100; 0 skips the check and reports rel_error null: mode indices for type 1, points
for type 2, targets for type 3), against the
direct sum in float64 numpy (chunked). Mode k of an axis of length N sits at index k + N//2
(finufft's default mode order); type 1: f_k = sum_j c_j exp(i isign k.x_j); type 2:
c_j = sum_k f_k exp(i isign k.x_j); type 3: f_k = sum_j c_j exp(i isign s_k.x_j).

Output: one JSON object per problem per line on stdout, with keys name, type, dim, modes,
points, targets (type 3 only), tol, precision, threads, repeats, plan_s, setpts_s, execute_s,
total_s, points_per_s (= points / total_s), rel_error, peer ("finufft"), version. Everything
else goes to stderr. If finufft cannot be imported: one line {"error": "finufft not
installed: ..."} and exit 3. Bad arguments or problems file: exit 2.
"""
import argparse
import json
import os
import re
import statistics
import sys
import time
import tomllib
from concurrent.futures import ThreadPoolExecutor

import numpy as np

CHUNK_ELEMS = 1 << 22  # complex elements per direct-sum block (~64 MiB of complex128)


def log(*args):
    print(*args, file=sys.stderr, flush=True)


def problem_dim(p):
    if "dim" in p:
        return int(p["dim"])
    if "modes" in p:
        return len(p["modes"])
    m = re.match(r"^(\d)d", p["name"])
    if not m:
        raise ValueError(f"problem {p['name']!r}: cannot tell the dimension")
    return int(m.group(1))


def complex_normal(rng, shape):
    return rng.standard_normal(shape) + 1j * rng.standard_normal(shape)


def make_data(p, dim, m, rng):
    """Float64 data: points (dim, m), input values, targets (dim, m) or None."""
    x = rng.uniform(-np.pi, np.pi, size=(dim, m))
    if p["type"] == 2:
        return x, complex_normal(rng, tuple(p["modes"])), None
    c = complex_normal(rng, m)
    if p["type"] == 3:
        k = m ** (1.0 / dim)
        return x, c, rng.uniform(-k / 2, k / 2, size=(dim, m))
    return x, c, None


def direct_sum(freqs, x, c, isign):
    """exact_i = sum_j c_j exp(i isign freqs_i . x_j); freqs (S, d), x (d, M), c (M,)."""
    step = max(1, CHUNK_ELEMS // max(1, freqs.shape[0]))

    def block(a):
        return np.exp((1j * isign) * (freqs @ x[:, a:a + step])) @ c[a:a + step]

    # numpy releases the GIL in exp: spread the blocks over the cores
    with ThreadPoolExecutor(os.cpu_count() or 1) as pool:
        return sum(pool.map(block, range(0, x.shape[1], step)),
                   np.zeros(freqs.shape[0], dtype=np.complex128))


def mode_grid(modes):
    """All mode index vectors (prod(N), d), row-major, matching a C-order mode array."""
    axes = [np.arange(n) - n // 2 for n in modes]
    return np.stack([g.ravel() for g in np.meshgrid(*axes, indexing="ij")], axis=1)


def rel_error(p, x, data, targets, out, isign, sample, rng):
    t = p["type"]
    if t == 1:
        modes = p["modes"]
        flat = rng.choice(int(np.prod(modes)), size=min(sample, int(np.prod(modes))),
                          replace=False)
        idx = np.unravel_index(flat, modes)
        freqs = np.stack([i - n // 2 for i, n in zip(idx, modes)], axis=1).astype(np.float64)
        exact = direct_sum(freqs, x, data, isign)
        approx = out.reshape(-1)[flat]
    elif t == 2:
        sel = rng.choice(x.shape[1], size=min(sample, x.shape[1]), replace=False)
        # c_j = sum_k f_k exp(i isign k.x_j): a direct sum with the roles swapped.
        exact = direct_sum(x[:, sel].T, mode_grid(p["modes"]).T.astype(np.float64),
                           data.reshape(-1), isign)
        approx = out[sel]
    else:
        sel = rng.choice(targets.shape[1], size=min(sample, targets.shape[1]), replace=False)
        exact = direct_sum(targets[:, sel].T, x, data, isign)
        approx = out[sel]
    approx = approx.astype(np.complex128)
    return float(np.linalg.norm(approx - exact) / np.linalg.norm(exact))


def run_problem(finufft, p, args):
    t, dim = int(p["type"]), problem_dim(p)
    if p.get("distribution", "uniform") != "uniform":
        raise ValueError(f"distribution {p['distribution']!r} not supported")
    m = max(1, int(round(p["points"] * args.scale)))
    single = p.get("precision", "f64") == "f32"
    rdt, cdt = (np.float32, np.complex64) if single else (np.float64, np.complex128)
    isign = -1 if t == 2 else 1
    rng = np.random.default_rng(args.seed)
    x, data, targets = make_data(p, dim, m, rng)
    # setpts(x, y, z, s, t, u): sources/nonuniform points by keyword, type 3 targets in s, t, u
    pts = {k: np.ascontiguousarray(r, dtype=rdt) for k, r in zip("xyz", x)}
    if t == 3:
        pts.update({k: np.ascontiguousarray(r, dtype=rdt) for k, r in zip("stu", targets)})
    dat = np.ascontiguousarray(data, dtype=cdt)
    shape = dim if t == 3 else tuple(int(n) for n in p["modes"])

    phases, out = [], None
    for _ in range(args.repeats):
        t0 = time.perf_counter()
        plan = finufft.Plan(t, shape, eps=p["tol"], isign=isign, dtype=cdt,
                            nthreads=args.threads)
        t1 = time.perf_counter()
        plan.setpts(**pts)
        t2 = time.perf_counter()
        out = plan.execute(dat)
        t3 = time.perf_counter()
        phases.append((t1 - t0, t2 - t1, t3 - t2, t3 - t0))
        del plan
    plan_s, setpts_s, execute_s, total_s = (statistics.median(col) for col in zip(*phases))

    err = None  # --sample 0: no check, as nudt's own side reports it
    if args.sample > 0:
        t0 = time.perf_counter()
        err = rel_error(p, x, data, targets, out, isign, args.sample,
                        np.random.default_rng(args.seed + 1))
        log(f"  {p['name']}: direct-sum check took {time.perf_counter() - t0:.1f} s")
    rec = {"name": p["name"], "type": t, "dim": dim,
           "modes": None if t == 3 else [int(n) for n in p["modes"]], "points": m}
    if t == 3:
        rec["targets"] = m
    rec.update({"tol": p["tol"], "precision": "f32" if single else "f64",
                "threads": args.threads, "repeats": args.repeats, "plan_s": plan_s,
                "setpts_s": setpts_s, "execute_s": execute_s, "total_s": total_s,
                "points_per_s": m / total_s, "rel_error": err, "peer": "finufft",
                "version": finufft.__version__})
    return rec


def parse_args(argv):
    ap = argparse.ArgumentParser(description="FINUFFT peer benchmark (JSON lines on stdout)")
    ap.add_argument("--problems", required=True, help="problems TOML file")
    ap.add_argument("--only", help="comma-separated problem names")
    ap.add_argument("--threads", type=int, default=os.cpu_count() or 1)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--sample", type=int, default=100)
    ap.add_argument("--scale", type=float, default=1.0)
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args(argv)
    if args.threads < 1 or args.repeats < 1 or args.scale <= 0:
        ap.error("--threads, --repeats and --scale must be positive")
    if args.sample < 0:
        ap.error("--sample must be 0 (no error check) or more")
    return args


def main(argv=None):
    args = parse_args(argv)
    try:
        import finufft
    except Exception as e:  # ImportError, or a broken shared library
        print(json.dumps({"error": f"finufft not installed: {e}"}), flush=True)
        return 3
    try:
        with open(args.problems, "rb") as f:
            problems = tomllib.load(f).get("problem", [])
    except (OSError, tomllib.TOMLDecodeError) as e:
        log(f"cannot read problems file {args.problems}: {e}")
        return 2
    if args.only:
        wanted = [n.strip() for n in args.only.split(",") if n.strip()]
        known = {p["name"] for p in problems}
        missing = [n for n in wanted if n not in known]
        if missing:
            log(f"unknown problem(s): {', '.join(missing)}")
            return 2
        problems = [p for p in problems if p["name"] in wanted]
    for p in problems:
        if p.get("gpu_only", False):
            log(f"skipping {p['name']} (gpu_only)")
            continue
        log(f"running {p['name']} ...")
        print(json.dumps(run_problem(finufft, p, args)), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
