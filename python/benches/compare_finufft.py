#!/usr/bin/env python3
"""nudt's Python package beside finufft's, on the shared CPU problems, in one process.

Usage (from the repository root, with nudt and finufft installed):
    python3 python/benches/compare_finufft.py [--problems benches/problems.toml]
        [--only NAME,..] [--threads 2] [--repeats 5] [--scale 1.0] [--sample 100]
        [--overhead-points 1000000]

Per problem: the data of benches/peer.py (same generator, seed and distributions),
then `repeats` rounds in which each library (the order alternating per round) makes its plan
with nthreads=THREADS, sets the points and executes once, and then calls its one-call
function (nufft2d1...: plan, points and execute in one); medians of each phase, of
set-points + execute, of the plan's total and of the one-call total, the ratios finufft/nudt
(above 1: nudt faster), and each library's relative l2 error against the direct sum on
`sample` outputs. An error above 10 x tol (either library's) makes the exit status 1.

Then the Python layer's overhead: a 2-D type 1 transform of `overhead-points` points
executed `repeats` x 5 times through nudt.Plan; the overhead of each call is its wall time
minus the runtime's own time inside it (RawPlan.last_call_s, measured in Rust with the GIL
released), reported as a median in microseconds and as a share of the call.

Output: a markdown table on stdout, and every record as JSON in --json (default
compare_finufft.json; "-" for none).
"""
import argparse
import json
import os
import statistics
import sys
import time
try:
    import tomllib
except ImportError:  # Python 3.10
    import tomli as tomllib

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


def one_call(lib, t, dim, shape, tol, isign, threads, pts, data):
    """The one-call function nufft{dim}d{t}: plan, points and execute in one; (seconds, out)."""
    fn = getattr(lib, f"nufft{dim}d{t}")
    coords = [pts[k] for k in "xyz"[:dim]]
    kw = dict(eps=tol, isign=isign, nthreads=threads)
    t0 = time.perf_counter()
    if t == 1:
        out = fn(*coords, data, shape, **kw)
    elif t == 2:
        out = fn(*coords, data, **kw)
    else:
        out = fn(*coords, data, *(pts[k] for k in "stu"[:dim]), **kw)
    return time.perf_counter() - t0, out


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
    calls = {name: [] for name in libs}
    outs, call_outs = {}, {}
    for r in range(args.repeats):
        order = list(libs) if r % 2 == 0 else list(libs)[::-1]
        for name in order:
            ph, outs[name] = one_shot(libs[name], t, shape, p["tol"], isign, cdt,
                                      args.threads, pts, dat)
            phases[name].append(ph)
            s, call_outs[name] = one_call(libs[name], t, dim, shape, p["tol"], isign,
                                          args.threads, pts, dat)
            calls[name].append(s)
    rec = {"name": p["name"], "type": t, "dim": dim, "points": m,
           "precision": "f32" if single else "f64", "tol": p["tol"],
           "threads": args.threads, "repeats": args.repeats}
    for name in libs:
        med = [statistics.median(col) for col in zip(*phases[name])]
        rec[name] = dict(zip(("plan_s", "setpts_s", "execute_s", "total_s"), med))
        rec[name]["setpts_execute_s"] = statistics.median(
            ph[1] + ph[2] for ph in phases[name])
        rec[name]["one_call_s"] = statistics.median(calls[name])
        if args.sample > 0:
            for key, got in (("rel_error", outs[name]), ("one_call_rel_error",
                                                         call_outs[name])):
                rec[name][key] = rel_error(p, x, data, targets, got, isign, args.sample,
                                           np.random.default_rng(args.seed + 1))
    for key in ("total_s", "execute_s", "setpts_execute_s", "one_call_s"):
        rec["speedup_" + key[:-2]] = rec["finufft"][key] / rec["nudt"][key]
    rec["errors_ok"] = all(rec[n].get(k, 0) <= 10 * p["tol"] for n in libs
                           for k in ("rel_error", "one_call_rel_error"))
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
    return f"{s * 1e3:.1f} ms" if s < 1 else f"{s:.2f} s"


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--problems", default=os.path.join(HERE, "..", "..", "benches",
                                                        "problems.toml"))
    ap.add_argument("--only")
    ap.add_argument("--threads", type=int, default=2, help="threads for both (0: all cores)")
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--scale", type=float, default=1.0)
    ap.add_argument("--sample", type=int, default=100)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--overhead-points", type=float, default=1e6)
    ap.add_argument("--json", default="compare_finufft.json", help='JSON file ("-": none)')
    args = ap.parse_args(argv)

    import finufft
    import nudt
    libs = {"nudt": nudt, "finufft": finufft}
    with open(args.problems, "rb") as f:
        problems = [p for p in tomllib.load(f)["problem"] if not p.get("gpu_only")]
    if args.only:
        problems = [p for p in problems if p["name"] in args.only.split(",")]

    print(f"nudt {nudt.__version__} beside finufft {finufft.__version__} from Python, "
          f"{args.threads or 'all'} thread(s), median of {args.repeats}, points "
          f"x{args.scale}; ratios finufft/nudt (above 1: nudt faster)\n")
    print("| problem | nudt set-points + execute | finufft | ratio | nudt plan total | "
          "finufft | ratio | nudt one-call | finufft | ratio | error nudt | finufft |")
    print("|---|---|---|---|---|---|---|---|---|---|---|---|")
    records, ok = [], True
    for p in problems:
        rec = run_problem(libs, p, args)
        records.append(rec)
        ok = ok and rec["errors_ok"]
        n, f = rec["nudt"], rec["finufft"]
        cols = [rec["name"]]
        for key in ("setpts_execute_s", "total_s", "one_call_s"):
            cols += [fmt_s(n[key]), fmt_s(f[key]), f"{rec['speedup_' + key[:-2]]:.2f}×"]
        cols += [f"{n.get('rel_error', float('nan')):.1e}",
                 f"{f.get('rel_error', float('nan')):.1e}"
                 + ("" if rec["errors_ok"] else " FAIL")]
        print("| " + " | ".join(cols) + " |", flush=True)
    res = None
    if args.overhead_points > 0:
        res = overhead(nudt, args)
        print(f"\nPython layer on 2-D type 1, {res['points']} points, 1000x1000 modes, "
              f"tol 1e-6 (wall time minus the runtime's own, median of "
              f"{5 * args.repeats}):\n")
        print("| call | wall | Python adds | share |")
        print("|---|---|---|---|")
        for k in ("setpts", "execute", "execute_alloc"):
            r = res[k]
            print(f"| {k} | {fmt_s(r['wall_s'])} | {r['overhead_us']:.1f} µs | "
                  f"{100 * r['overhead_share']:.3f} % |")
    if args.json != "-":
        with open(args.json, "w") as fh:
            json.dump({"nudt": nudt.__version__, "finufft": finufft.__version__,
                       "threads": args.threads, "problems": records, "overhead": res}, fh,
                      indent=1)
    if not ok:
        print("\nan error above 10 x tol: FAIL")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
