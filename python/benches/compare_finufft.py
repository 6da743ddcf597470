#!/usr/bin/env python3
"""nudt's Python package beside finufft's, on the shared CPU problems, in one process.

Usage (from the repository root, with nudt and finufft installed):
    python3 python/benches/compare_finufft.py [--problems benches/problems.toml]
        [--only NAME,..] [--threads 2] [--repeats 5] [--scale 1.0] [--sample 100]
        [--overhead-points 1000000]

Per problem: the data of benches/peer.py (same generator, seed and distributions),
then `repeats` rounds in which each library (the order alternating per round) makes its plan
with nthreads=THREADS, sets the points and executes once; medians of each phase and of the
totals, the ratio finufft/nudt of the totals (above 1: nudt faster), and each library's
relative l2 error against the direct sum on `sample` outputs.

Then the Python layer's overhead: a 2-D type 1 transform of `overhead-points` points
executed `repeats` x 5 times through nudt.Plan; the overhead of each call is its wall time
minus the runtime's own time inside it (RawPlan.last_call_s, measured in Rust with the GIL
released), reported as a median in microseconds and as a share of the call.

Output: a table on stdout; JSON lines with --json.
"""
import argparse
import json
import os
import statistics
import sys
import time
import tomllib

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "benches"))
from peer import make_data, problem_dim, rel_error  # noqa: E402


def one_shot(lib, t, shape, tol, isign, dtype, threads, pts, data):
    t0 = time.perf_counter()
    plan = lib.Plan(t, shape, eps=tol, isign=isign, dtype=dtype, nthreads=threads)
    t1 = time.perf_counter()
    plan.setpts(**pts)
    t2 = time.perf_counter()
    out = plan.execute(data)
    t3 = time.perf_counter()
    return (t1 - t0, t2 - t1, t3 - t2, t3 - t0), out


def run_problem(libs, p, args):
    t, dim = int(p["type"]), problem_dim(p)
    m = max(1, int(round(p["points"] * args.scale)))
    single = p.get("precision", "f64") == "f32"
    rdt, cdt = (np.float32, np.complex64) if single else (np.float64, np.complex128)
    isign = -1 if t == 2 else 1
    x, data, targets = make_data(p, p.get("dist", "uniform"), dim, m, np.random.default_rng(args.seed))
    pts = {k: np.ascontiguousarray(r, dtype=rdt) for k, r in zip("xyz", x)}
    if t == 3:
        pts.update({k: np.ascontiguousarray(r, dtype=rdt) for k, r in zip("stu", targets)})
    dat = np.ascontiguousarray(data, dtype=cdt)
    shape = dim if t == 3 else tuple(int(n) for n in p["modes"])

    phases = {name: [] for name in libs}
    outs = {}
    for r in range(args.repeats):
        order = list(libs) if r % 2 == 0 else list(libs)[::-1]
        for name in order:
            ph, outs[name] = one_shot(libs[name], t, shape, p["tol"], isign, cdt,
                                      args.threads, pts, dat)
            phases[name].append(ph)
    rec = {"name": p["name"], "type": t, "dim": dim, "points": m,
           "precision": "f32" if single else "f64", "tol": p["tol"],
           "threads": args.threads, "repeats": args.repeats}
    for name in libs:
        med = [statistics.median(col) for col in zip(*phases[name])]
        rec[name] = dict(zip(("plan_s", "setpts_s", "execute_s", "total_s"), med))
        if args.sample > 0:
            rec[name]["rel_error"] = rel_error(p, x, data, targets, outs[name], isign,
                                               args.sample,
                                               np.random.default_rng(args.seed + 1))
    rec["speedup"] = rec["finufft"]["total_s"] / rec["nudt"]["total_s"]
    rec["execute_speedup"] = rec["finufft"]["execute_s"] / rec["nudt"]["execute_s"]
    return rec


def overhead(nudt, args):
    """Median wall time of nudt.Plan.execute and setpts minus the runtime's time inside."""
    m = int(args.overhead_points)
    rng = np.random.default_rng(args.seed)
    x, y = rng.uniform(-np.pi, np.pi, (2, m))
    c = rng.standard_normal(m) + 1j * rng.standard_normal(m)
    plan = nudt.Plan(1, (1000, 1000), eps=1e-6, nthreads=args.threads)
    out = np.empty((1000, 1000), dtype=np.complex128)
    res = {"points": m, "modes": [1000, 1000], "tol": 1e-6, "threads": args.threads}
    for name, call in (("setpts", lambda: plan.setpts(x, y)),
                       ("execute", lambda: plan.execute(c, out=out)),
                       ("execute_alloc", lambda: plan.execute(c))):
        walls, extra = [], []
        for _ in range(5 * args.repeats):
            t0 = time.perf_counter()
            call()
            wall = time.perf_counter() - t0
            walls.append(wall)
            extra.append(wall - plan._raw.last_call_s)
        res[name] = {"wall_s": statistics.median(walls),
                     "overhead_us": 1e6 * statistics.median(extra),
                     "overhead_share": statistics.median(e / w for e, w in zip(extra, walls))}
    return res


def fmt_s(s):
    return f"{s * 1e3:8.1f} ms" if s < 1 else f"{s:8.2f} s "


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--problems", default=os.path.join(HERE, "..", "..", "benches",
                                                        "problems.toml"))
    ap.add_argument("--only")
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--scale", type=float, default=1.0)
    ap.add_argument("--sample", type=int, default=100)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--overhead-points", type=float, default=1e6)
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args(argv)

    import finufft
    import nudt
    libs = {"nudt": nudt, "finufft": finufft}
    with open(args.problems, "rb") as f:
        problems = [p for p in tomllib.load(f)["problem"] if not p.get("gpu_only")]
    if args.only:
        problems = [p for p in problems if p["name"] in args.only.split(",")]

    if not args.json:
        print(f"nudt {nudt.__version__} beside finufft {finufft.__version__}, "
              f"{args.threads} thread(s), median of {args.repeats}, points x{args.scale}")
        print(f"{'problem':10} {'nudt total':>12} {'execute':>11} {'error':>8} │ "
              f"{'finufft':>11} {'execute':>11} {'error':>8} │ {'speedup':>7} {'exec':>6}")
    for p in problems:
        rec = run_problem(libs, p, args)
        if args.json:
            print(json.dumps(rec), flush=True)
            continue
        n, f = rec["nudt"], rec["finufft"]
        print(f"{rec['name']:10} {fmt_s(n['total_s'])} {fmt_s(n['execute_s'])} "
              f"{n.get('rel_error', float('nan')):8.1e} │ {fmt_s(f['total_s'])} "
              f"{fmt_s(f['execute_s'])} {f.get('rel_error', float('nan')):8.1e} │ "
              f"{rec['speedup']:6.2f}× {rec['execute_speedup']:5.2f}×", flush=True)
    if args.overhead_points > 0:
        res = overhead(nudt, args)
        if args.json:
            print(json.dumps({"overhead": res}))
        else:
            print(f"\nPython layer on 2-D type 1, {res['points']} points, 1000x1000 modes, "
                  f"tol 1e-6 (wall time minus the runtime's own, median of "
                  f"{5 * args.repeats}):")
            for k in ("setpts", "execute", "execute_alloc"):
                r = res[k]
                print(f"  {k:14} wall {fmt_s(r['wall_s'])}  overhead "
                      f"{r['overhead_us']:8.1f} µs = {100 * r['overhead_share']:.3f} %")
    return 0


if __name__ == "__main__":
    sys.exit(main())
