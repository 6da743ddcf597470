#!/usr/bin/env python3
"""Peer benchmarks (FINUFFT, ducc0), called as a subprocess by `nudt bench --compare finufft,ducc0`.

Usage:
    python3 benches/peer.py --peer finufft|ducc0 --problems FILE.toml [--only NAME[,NAME..]]
        [--threads N] [--repeats R] [--sample S] [--scale F] [--seed SEED] [--dist NAME]
        [--data DIR]

Problems file: TOML with a `[[problem]]` array (see benches/problems.toml). Keys: name, type
(1, 2 or 3), modes (types 1/2), points, tol, precision ("f64" or "f32"), optional dim (else
len(modes), else the leading "<d>d" of the name), optional distribution, optional gpu_only
(such problems are skipped), optional ntransf (transforms of one plan sharing its points,
default 1: the input and output then have a leading axis of that length; FINUFFT's n_trans,
ducc0's leading ntrans axis). `--dist` overrides every problem's distribution.

Data: with `--data DIR` (what `nudt bench --compare` passes), the problem's data as nudt drew
and transformed it, and the outputs it checked: DIR/points.npy (float64, (dim, M)),
input.npy (complex128: strengths (M,), or type 2's coefficients in the modes' shape),
targets.npy (type 3, float64 (dim, M)), sample.npy (int64 indices into the C-order output)
and exact.npy (complex128, the direct sums there). Without it the script draws data of the
same distribution with numpy's RNG and samples outputs of its own.

Point distributions (docs/benchmarks.md defines them; src/cli/problem.rs draws the same ones
with its own RNG, so only the distributions match, not the samples):
  * uniform: U[-pi, pi)^d;
  * clustered: each point with probability 0.9 in a blob, N(0.5, 0.1^2) per coordinate,
    otherwise uniform;
  * radial: S = ceil(sqrt(M)) spokes through the origin (2D: angles pi*s/S; 3D: directions
    on a golden-angle spiral over the sphere; 1D: alternating +-1), ceil(M/S) equispaced
    radii in [-pi, pi) per spoke, spoke after spoke;
  * spiral: 16 interleaved Archimedean arms, r = pi*tau, theta = 2*pi*(32*tau + l/16), tau
    uniform in [0, 1) along each arm (1D: the x component; 3D: a stack of such spirals on
    ceil(M^(1/3)) planes z equispaced in [-pi, pi));
  * far: uniform in [-pi, pi) plus 2*pi*k, k a uniform integer in [-16, 16].
Type 3: sources follow the distribution; targets follow it too, scaled by K/(2 pi) into
[-K/2, K/2)^d with K = points^(1/d) (uniform: U[-K/2, K/2)^d). Type 1 strengths and type 2
mode coefficients are complex standard normal.
  `--scale F` multiplies the point count (types 1/2 keep their modes; type 3 targets and K
  follow the scaled count). Data is generated in float64 and cast for "f32".

Timing, per repeat: plan, setpts, execute (FINUFFT: finufft.Plan(type, modes or dim, eps=tol,
isign=+1 for types 1/3 and -1 for type 2, nthreads=N), then setpts, then execute. ducc0:
ducc0.nufft.plan(nu2u=..., coord=..., grid_shape=..., epsilon=tol, nthreads=N) sorts its
points when it is made, so its construction is reported as setpts and plan is 0; type 3 is
ducc0.nufft.experimental.nu2nu, reported whole as execute). Reported: the median of each
phase and the median of the per-repeat totals, in seconds; execute_again_s, the median of
as many executes more on the last plan (ducc0's type 3: plan3.exec on a plan3 made once,
untimed), the loop of an iterative reconstruction; and peak_rss_bytes: the process's
peak resident memory (VmHWM, reset through /proc/self/clear_refs once the problem's data is
ready in the peer's layout, the only copy kept) over data, plans and transforms, before the
error check.

Error: relative l2 error ||approx - exact|| / ||exact|| over the outputs and direct sums of
`--data`, else over a random sample of S outputs (default 100; 0 skips the check and reports
rel_error null) against the direct sum in float64 numpy (chunked). Mode k of an axis of
length N sits at index k + N//2 (the default mode order of both peers, and nudt's).

Output: one JSON object per problem per line on stdout, with keys name, type, dim, modes,
points, ntransf, targets (type 3 only), distribution, tol, precision, threads, repeats, plan_s,
setpts_s, execute_s, total_s, execute_again_s, points_per_s (= points / total_s), rel_error, peak_rss_bytes,
peer, version. Everything else goes to stderr. If the peer cannot be imported: one line
{"error": "<peer> not installed: ..."} and exit 3. Bad arguments or problems file: exit 2.
"""
import argparse
import json
import math
import os
import re
import statistics
import sys
import time
import tomllib
from concurrent.futures import ThreadPoolExecutor

import numpy as np

CHUNK_ELEMS = 1 << 22  # complex elements per direct-sum block (~64 MiB of complex128)
DISTRIBUTIONS = ("uniform", "clustered", "radial", "spiral", "far")


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


def spiral2d(m, rng):
    arms = 16
    tau = rng.uniform(0.0, 1.0, size=m)
    arm = np.arange(m) % arms
    r = np.pi * tau
    theta = 2 * np.pi * (32 * tau + arm / arms)
    return np.stack([r * np.cos(theta), r * np.sin(theta)])


def points(dist, dim, m, rng):
    """(dim, m) float64 points of a distribution (see the module docstring)."""
    if dist == "uniform":
        return rng.uniform(-np.pi, np.pi, size=(dim, m))
    if dist == "clustered":
        blob = rng.uniform(size=m) < 0.9
        x = rng.uniform(-np.pi, np.pi, size=(dim, m))
        x[:, blob] = rng.normal(0.5, 0.1, size=(dim, int(blob.sum())))
        return x
    if dist == "far":
        shift = 2 * np.pi * rng.integers(-16, 17, size=(dim, m))
        return rng.uniform(-np.pi, np.pi, size=(dim, m)) + shift
    if dist == "radial":
        spokes = math.ceil(math.sqrt(m))
        per = math.ceil(m / spokes)
        j = np.arange(m)
        s, k = j // per, j % per
        r = -np.pi + 2 * np.pi * (k + 0.5) / per
        if dim == 1:
            u = np.where(s % 2 == 0, 1.0, -1.0)[None, :]
        elif dim == 2:
            a = np.pi * s / spokes
            u = np.stack([np.cos(a), np.sin(a)])
        else:
            zc = 1 - (2 * s + 1) / spokes
            a = s * np.pi * (3 - math.sqrt(5))
            rho = np.sqrt(1 - zc * zc)
            u = np.stack([rho * np.cos(a), rho * np.sin(a), zc])
        return u * r
    if dist == "spiral":
        if dim == 1:
            return spiral2d(m, rng)[:1]
        if dim == 2:
            return spiral2d(m, rng)
        planes = math.ceil(m ** (1 / 3))
        z = -np.pi + 2 * np.pi * (np.arange(m) % planes + 0.5) / planes
        return np.vstack([spiral2d(m, rng), z[None, :]])
    raise ValueError(f"unknown distribution {dist!r} (known: {', '.join(DISTRIBUTIONS)})")


def batch_shape(p, one):
    """The input or output shape of a problem's `ntransf` transforms: `one`'s, with a leading
    axis when there are several."""
    k = int(p.get("ntransf", 1))
    return tuple(one) if k == 1 else (k, *one)


def make_data(p, dist, dim, m, rng):
    """Float64 data: points (dim, m), input values, targets (dim, m) or None."""
    x = points(dist, dim, m, rng)
    if p["type"] == 2:
        return x, complex_normal(rng, batch_shape(p, p["modes"])), None
    c = complex_normal(rng, batch_shape(p, (m,)))
    if p["type"] == 3:
        k = m ** (1.0 / dim)
        if dist == "uniform":
            return x, c, rng.uniform(-k / 2, k / 2, size=(dim, m))
        return x, c, points(dist, dim, m, rng) * (k / (2 * np.pi))
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


class DataError(Exception):
    """`--data` that cannot be read or does not fit the problem: that problem's error."""


def load_shared(d, p, dim, m):
    """`--data DIR`: points, input, targets (or None), sample indices, direct sums."""
    def load(name):
        try:
            return np.load(os.path.join(d, name), allow_pickle=False)
        except (OSError, ValueError) as e:
            raise DataError(f"--data {d}: {e}") from e

    t = p["type"]
    x = load("points.npy")
    data = load("input.npy")
    targets = load("targets.npy") if t == 3 else None
    sample, exact = load("sample.npy"), load("exact.npy")
    want_in = batch_shape(p, [int(n) for n in p["modes"]] if t == 2 else (m,))
    shapes = [(x.shape, (dim, m)), (data.shape, want_in), (sample.shape, exact.shape)]
    if targets is not None:
        shapes.append((targets.shape, (dim, m)))
    for got, want in shapes:
        if got != want:
            raise DataError(f"--data {d}: array of shape {got} where {want} was expected")
    return x, data, targets, sample, exact


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


class Finufft:
    name = "finufft"

    def __init__(self):
        import finufft
        self.lib, self.version = finufft, finufft.__version__

    def prepare(self, t, x, targets):
        """Inputs in the peer's own layout (not timed): coordinate keyword arguments."""
        pts = {k: np.ascontiguousarray(r) for k, r in zip("xyz", x)}
        if t == 3:
            pts.update({k: np.ascontiguousarray(r) for k, r in zip("stu", targets)})
        return pts

    @staticmethod
    def coords(pts):
        """The (dim, m) sources and targets (or None) back from `prepare`'s layout."""
        def stack(keys):
            rows = [pts[k] for k in keys if k in pts]
            return np.stack(rows) if rows else None
        return stack("xyz"), stack("stu")

    def run(self, t, shape, tol, isign, cdt, threads, pts, dat, ntransf):
        """Plan, setpts and execute, timed; the outputs; an execute on that plan again."""
        t0 = time.perf_counter()
        plan = self.lib.Plan(t, shape, n_trans=ntransf, eps=tol, isign=isign, dtype=cdt,
                             nthreads=threads)
        t1 = time.perf_counter()
        plan.setpts(**pts)
        t2 = time.perf_counter()
        out = plan.execute(dat)
        t3 = time.perf_counter()
        return (t1 - t0, t2 - t1, t3 - t2), out, lambda: plan.execute(dat)


class Ducc0:
    name = "ducc0"

    def __init__(self):
        import ducc0
        self.lib, self.version = ducc0, ducc0.__version__

    def prepare(self, t, x, targets):
        """ducc0 takes coordinates as (points, dim) arrays."""
        pts = {"coord": np.ascontiguousarray(x.T)}
        if t == 3:
            pts["coord_out"] = np.ascontiguousarray(targets.T)
        return pts

    @staticmethod
    def coords(pts):
        """The (dim, m) sources and targets (or None) back from `prepare`'s layout."""
        out = pts.get("coord_out")
        return pts["coord"].T, None if out is None else out.T

    def run(self, t, shape, tol, isign, cdt, threads, pts, dat, ntransf):
        """As Finufft.run; a batch is the leading axis of `dat`, which ducc0 takes as is.
        Type 3's one shot is nu2nu; its execute again, plan3's exec (the plan is made once,
        untimed, at the first call)."""
        del ntransf
        nufft = self.lib.nufft
        forward = isign < 0
        t0 = time.perf_counter()
        if t == 3:
            out = nufft.experimental.nu2nu(points_in=dat, coord_in=pts["coord"],
                                           coord_out=pts["coord_out"], forward=forward,
                                           epsilon=tol, nthreads=threads)
            plan3 = []

            def again():
                if not plan3:
                    plan3.append(nufft.experimental.plan3(
                        coord_in=pts["coord"], coord_out=pts["coord_out"], epsilon=tol,
                        nthreads=threads))
                return plan3[0].exec(forward=forward, points_in=dat)
            return (0.0, 0.0, time.perf_counter() - t0), out, again
        plan = nufft.plan(nu2u=(t == 1), coord=pts["coord"], grid_shape=shape, epsilon=tol,
                          nthreads=threads)
        t1 = time.perf_counter()
        if t == 1:
            def again():
                return plan.nu2u(points=dat, forward=forward)
        else:
            def again():
                return plan.u2nu(grid=dat, forward=forward)
        out = again()
        t2 = time.perf_counter()
        return (0.0, t1 - t0, t2 - t1), out, again


def reset_peak_rss():
    try:
        with open("/proc/self/clear_refs", "w") as f:
            f.write("5")
    except OSError:
        pass


def peak_rss_bytes():
    try:
        with open("/proc/self/status") as f:
            for line in f:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    return None


def run_problem(peer, p, args):
    t, dim = int(p["type"]), problem_dim(p)
    dist = args.dist or p.get("distribution", "uniform")
    m = max(1, int(round(p["points"] * args.scale)))
    single = p.get("precision", "f64") == "f32"
    rdt, cdt = (np.float32, np.complex64) if single else (np.float64, np.complex128)
    isign = -1 if t == 2 else 1
    if args.data:
        x, data, targets, sample, exact = load_shared(args.data, p, dim, m)
    else:
        x, data, targets = make_data(p, dist, dim, m, np.random.default_rng(args.seed))
    # The peers see the data in the problem's precision, in their own layout, and the
    # process keeps only that copy (the check uses those same values): its peak memory is
    # then the caller's data and what the library adds, as nudt's is.
    x = x.astype(rdt, copy=False)
    targets = None if targets is None else targets.astype(rdt, copy=False)
    dat = np.ascontiguousarray(data, dtype=cdt)
    pts = peer.prepare(t, x, targets)
    del data, x, targets
    reset_peak_rss()
    shape = dim if t == 3 else tuple(int(n) for n in p["modes"])

    ntransf = int(p.get("ntransf", 1))
    phases, out, again = [], None, None
    for _ in range(args.repeats):
        out = again = None
        (a, b, c), out, again = peer.run(t, shape, p["tol"], isign, cdt, args.threads, pts,
                                         dat, ntransf)
        phases.append((a, b, c, a + b + c))
    plan_s, setpts_s, execute_s, total_s = (statistics.median(col) for col in zip(*phases))
    peak = peak_rss_bytes()
    # The iterative-reconstruction loop: executes on the last plan, after the peak is read
    # (ducc0's type 3 makes its plan3 at the first call, untimed).
    again()
    times = []
    for _ in range(args.repeats):
        t0 = time.perf_counter()
        again()
        times.append(time.perf_counter() - t0)
    execute_again_s = statistics.median(times)

    err = None  # --sample 0: no check, as nudt's own side reports it
    if args.data:
        approx = out.reshape(-1)[sample].astype(np.complex128)
        err = float(np.linalg.norm(approx - exact) / np.linalg.norm(exact))
    elif args.sample > 0:
        t0 = time.perf_counter()
        x, targets = peer.coords(pts)
        # A batch is checked on its first transform.
        first = (dat, out) if ntransf == 1 else (dat[0], out[0])
        err = rel_error(p, x.astype(np.float64), first[0].astype(np.complex128),
                        None if targets is None else targets.astype(np.float64), first[1], isign,
                        args.sample, np.random.default_rng(args.seed + 1))
        log(f"  {p['name']}: direct-sum check took {time.perf_counter() - t0:.1f} s")
    rec = {"name": p["name"], "type": t, "dim": dim,
           "modes": None if t == 3 else [int(n) for n in p["modes"]], "points": m,
           "ntransf": ntransf}
    if t == 3:
        rec["targets"] = m
    rec.update({"distribution": dist, "tol": p["tol"], "precision": "f32" if single else "f64",
                "threads": args.threads, "repeats": args.repeats, "plan_s": plan_s,
                "setpts_s": setpts_s, "execute_s": execute_s, "total_s": total_s,
                "execute_again_s": execute_again_s,
                "points_per_s": m / total_s, "rel_error": err, "peak_rss_bytes": peak,
                "peer": peer.name, "version": peer.version})
    return rec


PEERS = {"finufft": Finufft, "ducc0": Ducc0}


def parse_args(argv):
    ap = argparse.ArgumentParser(description="NUFFT peer benchmark (JSON lines on stdout)")
    ap.add_argument("--peer", choices=sorted(PEERS), default="finufft")
    ap.add_argument("--problems", required=True, help="problems TOML file")
    ap.add_argument("--only", help="comma-separated problem names")
    ap.add_argument("--threads", type=int, default=os.cpu_count() or 1)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--sample", type=int, default=100)
    ap.add_argument("--scale", type=float, default=1.0)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--dist", choices=DISTRIBUTIONS, help="override every problem's distribution")
    ap.add_argument("--data", metavar="DIR",
                    help="the data and checked outputs nudt shared (one problem: use --only)")
    args = ap.parse_args(argv)
    if args.threads < 1 or args.repeats < 1 or args.scale <= 0:
        ap.error("--threads, --repeats and --scale must be positive")
    if args.sample < 0:
        ap.error("--sample must be 0 (no error check) or more")
    if args.data and (not args.only or "," in args.only):
        ap.error("--data holds one problem's data: name that problem with --only")
    return args


def main(argv=None):
    args = parse_args(argv)
    try:
        peer = PEERS[args.peer]()
    except Exception as e:  # ImportError, or a broken shared library
        print(json.dumps({"error": f"{args.peer} not installed: {e}"}), flush=True)
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
        try:
            rec = run_problem(peer, p, args)
        except DataError as e:
            rec = {"name": p["name"], "error": str(e)}
        print(json.dumps(rec), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
