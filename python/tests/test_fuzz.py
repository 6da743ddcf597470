"""Property-based fuzzing (hypothesis) of the finufft interface: ``nufft1d1`` ... ``nufft3d3``
and ``Plan`` (``setpts``, ``execute``, ``execute_adjoint``) over dtypes, shapes, stacked
transforms, layouts (strided and Fortran-ordered arrays, lists), sizes 0 and 1, extreme
coordinates (subnormals, exactly +-pi, +-1e300, huge offsets, NaN and infinities),
tolerances (invalid ones included) and options.

The property: every call returns within 10x eps of the direct sum in numpy (nudt_direct) or
raises what a finufft user expects — ValueError, TypeError or RuntimeError (nudt's classes
are several of these at once), MemoryError for a grid beyond memory — never another
exception, a crash or a wrong answer. Where a coordinate is so large that the phase k.x
cannot be represented to eps in the points' precision, the bound is 10 eps + 10 eps_mach
sum_d max|k_d| max|x_d| and the result must be finite and within what the strengths allow.
A call made invalid on purpose must raise; an exception on a valid call is allowed by the
property but counted apart. Any wrong answer fails the test.

The error, as runtime/tests/fuzz.rs measures it: the l2 norm of the difference from the
direct sum over every output of every transform, relative to the larger of the direct sum's
norm and the input's (every transform's strengths or coefficients) times sqrt(outputs per
transform). A NUFFT's error follows its input (about eps ||input|| per output), so a result
whose terms cancel (every point at one place, each output one sum near 0) measured against
itself alone would count the cancellation as the transform's error.

The counts (calls, results, exceptions by class) are printed at the end of the session
(conftest.py). NUDT_FUZZ_CASES sets hypothesis's examples (default 300). Skipped where
hypothesis is not installed, unless NUDT_REQUIRE_HYPOTHESIS=1 makes that a failure.
"""

import collections
import os
import warnings

import numpy as np
import pytest

import nudt
import nudt_direct as direct

if os.environ.get("NUDT_REQUIRE_HYPOTHESIS") == "1":
    import hypothesis
else:
    hypothesis = pytest.importorskip("hypothesis")
from hypothesis import HealthCheck, given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

CASES = int(os.environ.get("NUDT_FUZZ_CASES", "300"))
EXPECTED = (ValueError, TypeError, RuntimeError, MemoryError)

# What the session saw; conftest.py prints it.
COUNTS = collections.Counter()
VALID_ERRORS = []

COORDS = ("plain", "wide", "edges", "subnormal", "offset", "huge", "allhuge", "nonfinite")
LAYOUTS = ("c", "strided", "fortran", "list")
MISUSES = ("none", "short", "dtype", "execute_first", "out_shape", "out_dtype", "extra_axis")


def draw_coords(rng, cls, n, real, half, pin):
    """n coordinates of class `cls` in dtype `real` (half-width `half` where plain)."""
    tiny = np.finfo(real).tiny
    if cls == "wide":
        v = rng.uniform(-1, 1, n) * (2 * half if pin else 60.0)
    elif cls == "edges":
        v = rng.choice([0.0, -0.0, np.pi, -np.pi, 2 * np.pi, -2 * np.pi, 3 * np.pi, -3 * np.pi],
                       n)
    elif cls == "subnormal":
        v = rng.uniform(-0.5, 0.5, n) * tiny
    elif cls == "allhuge":
        v = rng.choice([1e300, -1e300, np.finfo(np.float64).max, 1e308], n)
    else:
        v = rng.uniform(-half, half, n)
    if pin and cls in ("plain", "huge", "nonfinite") and n >= 2:
        v[0], v[1] = half, -half
    if n:
        at = rng.integers(n)
        if cls == "offset":
            v = v + rng.choice([1e4, -1e6, 1e9, 2.0 ** 40])
        elif cls == "huge":
            v[at] = rng.choice([1e300, -1e300, np.finfo(np.float64).max])
        elif cls == "nonfinite":
            v[at] = rng.choice([np.nan, np.inf, -np.inf])
    with np.errstate(over="ignore"):
        return v.astype(real)


def layout(a, how):
    """`a` with the layout `how`: C-contiguous, strided (every other element of a larger
    array), Fortran-ordered (where it has 2 or more axes) or a nested list."""
    if how == "strided":
        big = np.zeros(a.shape[:-1] + (2 * a.shape[-1],) if a.ndim else (), a.dtype)
        if a.ndim:
            big[..., ::2] = a
            return big[..., ::2]
        return a
    if how == "fortran":
        return np.asfortranarray(a)
    if how == "list":
        return a.tolist()
    return a


@st.composite
def cases(draw):
    single = draw(st.booleans())
    tp = draw(st.sampled_from([1, 2, 3]))
    dim = draw(st.integers(1, 3))
    small = st.one_of(st.integers(2, 10), st.just(1), st.just(0))
    decades = st.integers(1, 6 if single else 12).map(lambda e: 10.0 ** -e)
    eps = draw(st.one_of(*[decades] * 6, st.sampled_from(
        [0.0, -1e-6, float("nan"), float("inf"), 1e-20, 2.0, "1e-6"])))
    c = dict(
        single=single, tp=tp, dim=dim,
        modes=tuple(draw(st.one_of(small, small, small, st.just(1 << 40))) for _ in range(dim)),
        m=draw(st.one_of(st.integers(2, 30), st.just(0), st.just(1))),
        k=draw(st.one_of(st.integers(2, 30), st.just(0), st.just(1))),
        n_trans=draw(st.sampled_from([1, 1, 1, 2, 3])),
        stack_axis=draw(st.booleans()),
        eps=eps,
        isign=draw(st.sampled_from([1, -1, None, 0, 5])),
        modeord=draw(st.sampled_from([0, 1] * 5 + [2])),
        upsampfac=draw(st.sampled_from([0.0] * 6 + [2.0] * 2 + [1.25] * 2 + [1.5])),
        nthreads=draw(st.sampled_from([0, 1, 2] * 3 + [-1])),
        x=draw(st.sampled_from(COORDS + ("plain",) * 4)),
        s=draw(st.sampled_from(COORDS + ("plain",) * 4)),
        layout=draw(st.sampled_from(LAYOUTS + ("c",) * 3)),
        api=draw(st.sampled_from(["simple", "plan", "adjoint"])),
        misuse=draw(st.sampled_from(MISUSES + ("none",) * 24)),
        seed=draw(st.integers(0, 2 ** 32 - 1)),
    )
    if c["api"] == "simple":
        # The one-call functions take no plan to misuse, read a type 2's modes from f's
        # shape (a short or huge f is another valid problem) and take the precision from x
        # (list points are float64).
        if c["misuse"] == "execute_first" or (tp == 2 and c["misuse"] == "short"):
            c["misuse"] = "none"
        if tp == 2 and max(c["modes"]) >= 1 << 40:
            c["api"] = "plan"
        if c["layout"] == "list":
            c["layout"] = "c"
    return c


def invalid(c, real, n_in):
    """Whether the case is invalid on purpose: it must raise."""
    eps = c["eps"]
    if isinstance(eps, str):
        return True
    floor = 0.5e-7 if real == np.float32 else 0.5e-15
    if not (np.isfinite(eps) and eps >= floor):
        return True
    if c["modeord"] not in (0, 1) or c["nthreads"] < 0 or c["upsampfac"] not in (0.0, 2.0, 1.25):
        return True
    if c["tp"] != 3 and (0 in c["modes"] or max(c["modes"]) >= 1 << 40):
        return True
    single = real == np.float32

    def bad(cls, n):
        return n > 0 and (cls == "nonfinite" or (single and cls in ("huge", "allhuge")))
    if bad(c["x"], c["m"]) or (c["tp"] == 3 and bad(c["s"], c["k"])):
        return True
    if c["misuse"] in ("dtype", "execute_first", "out_shape", "out_dtype"):
        return True
    if c["misuse"] == "short" and n_in * c["n_trans"] > 0:
        return True
    if c["misuse"] == "extra_axis":
        return True
    return False


def run_case(c):
    """One call (or plan, setpts, execute) of case `c`: the exception it raised, or None
    once its result is checked against the direct sum (an AssertionError if it is wrong);
    and whether the case is invalid on purpose."""
    real = np.float32 if c["single"] else np.float64
    cplx = np.complex64 if c["single"] else np.complex128
    rng = np.random.default_rng(c["seed"])
    tp, dim, n_trans = c["tp"], c["dim"], c["n_trans"]
    pin = tp == 3
    x = [draw_coords(rng, c["x"], c["m"], real, 3.0 if pin else np.pi, pin) for _ in range(dim)]
    s = [draw_coords(rng, c["s"], c["k"], real, 10.0, pin) for _ in range(dim)] if tp == 3 else []
    modes = c["modes"]
    adjoint = c["api"] == "adjoint"
    if tp == 1:
        shapes = ((c["m"],), modes)
    elif tp == 2:
        shapes = (modes, (c["m"],))
    else:
        shapes = ((c["m"],), (c["k"],))
    inner_in, inner_out = shapes[::-1] if adjoint else shapes
    n_in = int(np.prod(inner_in, dtype=object))
    bad = invalid(c, real, n_in)
    if max(n_in, int(np.prod(inner_out, dtype=object)), *inner_in, *inner_out) * n_trans > 1 << 22:
        # A mode count beyond memory: the plan must refuse it before any data exists.
        data = np.zeros(1, cplx)
    else:
        lead = (n_trans,) if (n_trans > 1 or c["stack_axis"]) else ()
        data = (rng.standard_normal(lead + tuple(inner_in))
                + 1j * rng.standard_normal(lead + tuple(inner_in))).astype(cplx)
    misuse, given = c["misuse"], data
    if misuse == "short" and data.size:
        given = data[..., :-1]
    elif misuse == "dtype":
        given = data.astype(np.complex128 if c["single"] else np.complex64)
    elif misuse == "extra_axis":
        given = data[None, None]
    kwargs = dict(modeord=c["modeord"], nthreads=c["nthreads"], upsampfac=c["upsampfac"])
    xs = [layout(v, c["layout"]) for v in x]
    ss = [layout(v, c["layout"]) for v in s]
    given = layout(given, "c" if c["layout"] == "list" else c["layout"])
    out = None
    wrong = np.complex128 if c["single"] else np.complex64
    huge = max(*inner_in, *inner_out) >= 1 << 22
    if huge:
        pass  # No `out` of that size: the plan must refuse the modes first.
    elif misuse in ("out_shape", "out_dtype") and c["api"] != "simple":
        shape = (n_trans, *inner_out) if n_trans > 1 else tuple(inner_out)
        if misuse == "out_shape":
            out = np.zeros((shape[0] + 1,) + shape[1:], cplx)
        else:
            out = np.zeros(shape, wrong)
    elif misuse == "out_shape":
        out = np.zeros((3, 3, 3, 3), cplx)
    elif misuse == "out_dtype":
        # The one-call functions: c or f of the other precision than x.
        given = given.astype(wrong)
    isign = c["isign"]
    sign_kw = {} if isign is None else {"isign": isign}
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", UserWarning)
            if c["api"] == "simple":
                fn = getattr(nudt, f"nufft{dim}d{tp}")
                if tp == 1:
                    got = fn(*xs, given, modes, out=out, eps=c["eps"], **sign_kw, **kwargs)
                elif tp == 2:
                    got = fn(*xs, given, out=out, eps=c["eps"], **sign_kw, **kwargs)
                else:
                    got = fn(*xs, given, *ss, out=out, eps=c["eps"], **sign_kw, **kwargs)
            else:
                plan = nudt.Plan(tp, dim if tp == 3 else modes, n_trans=n_trans, eps=c["eps"],
                                 dtype=cplx, **sign_kw, **kwargs)
                if misuse != "execute_first":
                    if tp == 3:
                        plan.setpts(*xs, *([None] * (3 - dim)), *ss)
                    else:
                        plan.setpts(*xs)
                run = plan.execute_adjoint if adjoint else plan.execute
                got = run(given, out=out)
    except EXPECTED as e:
        return e, bad
    assert not bad, f"invalid input accepted: {c}"
    # The reference: nudt's sign convention (+1 if non-negative), per stacked transform.
    if isign is None:
        isign = -1 if tp == 2 else 1
    sign = 1 if isign >= 0 else -1
    if adjoint:
        sign = -sign
    pts = np.array([v.astype(np.float64) for v in x])
    tgts = np.array([v.astype(np.float64) for v in s]) if tp == 3 else None
    d = np.asarray(data, np.complex128).reshape((n_trans,) + tuple(inner_in))
    modeord = c["modeord"]
    want = []
    for t in range(n_trans):
        if (tp, adjoint) in ((1, False), (2, True)):
            want.append(direct.type1(pts, d[t].ravel(), modes, sign, modeord))
        elif (tp, adjoint) in ((2, False), (1, True)):
            want.append(direct.type2(pts, d[t].reshape(modes), sign, modeord))
        elif not adjoint:
            want.append(direct.type3(pts, d[t], tgts, sign))
        else:
            want.append(direct.type3(tgts, d[t], pts, sign))
    want = np.concatenate([np.ravel(w) for w in want])
    got = np.asarray(got, np.complex128).ravel()
    assert got.shape == want.shape, (got.shape, want.shape, c)
    if not np.all(np.isfinite(got)):
        raise Failure(f"non-finite output: {c}")
    mach = np.finfo(real).eps
    if tp == 3:
        reach = sum(np.max(np.abs(a), initial=0.0) * np.max(np.abs(b), initial=0.0)
                    for a, b in zip(pts, tgts))
    else:
        reach = sum(np.max(np.abs(a), initial=0.0) * ((n + 1) // 2) for a, n in zip(pts, modes))
    bound = 10 * c["eps"] + 10 * mach * reach
    l1 = float(np.sum(np.abs(d)))
    if np.max(np.abs(got), initial=0.0) > 2 * l1 + 1e-30:
        raise Failure(f"output too large: {c}")
    if not np.all(np.isfinite(want)):
        # A phase k.x beyond the largest float: the direct sum has no answer either.
        return None, bad
    outputs = int(np.prod(inner_out, dtype=object))
    scale = max(np.linalg.norm(want), np.linalg.norm(d) * np.sqrt(outputs))
    err = np.linalg.norm(got - want) / (scale if scale else 1.0)
    if not err <= bound:
        raise Failure(f"error {err:.3e} above {bound:.3e}: {c}")
    return None, bad


class Failure(AssertionError):
    """A wrong answer: the property does not hold."""


@settings(max_examples=CASES, deadline=None, database=None, derandomize=True,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much])
@given(cases())
def test_calls_are_within_tolerance_or_raise_what_finufft_users_expect(c):
    COUNTS["calls"] += 1
    # Phases beyond the largest float overflow in the direct sum: no warning for those.
    with np.errstate(all="ignore"):
        raised, bad = run_case(c)
    if raised is None:
        COUNTS["results within the bound"] += 1
        return
    name = type(raised).__name__
    COUNTS[f"raised {name}"] += 1
    # A tolerance the chosen upsampfac cannot reach is refused by design (the message says
    # which upsampfac or tolerance would do).
    unreachable = c["upsampfac"] == 1.25 and "too small to achieve" in str(raised)
    if not bad and not unreachable:
        # Allowed by the property, but listed: a valid call that raised.
        COUNTS[f"raised {name} on a valid call"] += 1
        if len(VALID_ERRORS) < 8:
            VALID_ERRORS.append(f"{name}: {raised} ({c})")
