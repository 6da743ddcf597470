"""A point set per transform on ``nudt.Plan`` (nudt's own, beyond finufft's interface):
``setpts`` with coordinates of shape ``(n_trans, M)`` or lists of ``n_trans`` vectors whose
sizes differ, each transform against its own direct sum (``nudt_direct``); ``vjp`` and ``jvp``
with one cotangent per point, against central differences; and the typed errors of sets that
disagree with each other or with the data."""

import numpy as np
import pytest

import nudt
import nudt_direct as direct

MODES = {1: (14,), 2: (9, 8), 3: (5, 6, 4)}


def _sets(rng, dim, counts, scale=np.pi):
    """Per dimension, a list of one vector per transform."""
    return [[rng.uniform(-scale, scale, m) for m in counts] for _ in range(dim)]


def _direct(tp, dim, pts, tgt, data, counts, tcounts=None):
    """Each transform's direct sum, in a list."""
    out = []
    for b in range(len(counts)):
        x = np.stack([pts[d][b] for d in range(dim)])
        if tp == 1:
            out.append(direct.type1(x, data[b], MODES[dim], 1))
        elif tp == 2:
            out.append(direct.type2(x, data[b], -1))
        else:
            s = np.stack([tgt[d][b] for d in range(dim)])
            out.append(direct.type3(x, data[b], s, 1))
    return out


@pytest.mark.parametrize("dim", [1, 2, 3])
@pytest.mark.parametrize("tp", [1, 2, 3])
def test_sets_of_different_sizes_against_direct_sums(tp, dim):
    rng = np.random.default_rng(10 * tp + dim)
    counts, tcounts = [40, 0, 13, 27], [11, 9, 0, 5]
    pts = _sets(rng, dim, counts)
    tgt = _sets(rng, dim, tcounts, 6.0) if tp == 3 else None
    plan = nudt.Plan(tp, dim if tp == 3 else MODES[dim], len(counts), 1e-9)
    plan.setpts(*pts, **(dict(zip("stu", tgt)) if tp == 3 else {}))
    assert plan.point_counts == counts
    if tp == 2:
        data = [rng.standard_normal(MODES[dim]) + 1j * rng.standard_normal(MODES[dim])
                for _ in counts]
        got = plan.execute(np.stack(data))
        assert got.shape == (sum(counts),)
        got = np.split(got, np.cumsum(counts)[:-1])
    else:
        data = [rng.standard_normal(m) + 1j * rng.standard_normal(m) for m in counts]
        got = plan.execute(np.concatenate(data))
        if tp == 1:
            assert got.shape == (len(counts), *MODES[dim])
        else:
            assert got.shape == (sum(tcounts),)
            got = np.split(got, np.cumsum(tcounts)[:-1])
    want = _direct(tp, dim, pts, tgt, data, counts, tcounts)
    for b, (g, w) in enumerate(zip(got, want)):
        if np.size(w) == 0 or np.linalg.norm(w) == 0:
            assert np.all(np.asarray(g) == 0), f"transform {b}: not zero"
        else:
            assert direct.rel_err(g, w) < 1e-8, f"transform {b}"


@pytest.mark.parametrize("dtype", [np.complex64, np.complex128])
def test_sets_of_one_size_are_stacked(dtype):
    """Coordinates of shape (n_trans, M): inputs and outputs stacked as finufft's n_trans."""
    rng = np.random.default_rng(3)
    real = np.float32 if dtype == np.complex64 else np.float64
    pts = rng.uniform(-np.pi, np.pi, (2, 3, 50)).astype(real)
    c = (rng.standard_normal((3, 50)) + 1j * rng.standard_normal((3, 50))).astype(dtype)
    eps = 1e-5 if dtype == np.complex64 else 1e-10
    plan = nudt.Plan(1, (10, 12), 3, eps, dtype=dtype)
    plan.setpts(pts[0], pts[1])
    f = plan.execute(c)
    assert f.shape == (3, 10, 12)
    for b in range(3):
        want = direct.type1(pts[:, b].astype(np.float64), c[b], (10, 12), 1)
        assert direct.rel_err(f[b], want) < 10 * eps
    # Back to points that every transform shares.
    plan.setpts(pts[0, 0], pts[1, 0])
    assert plan.point_counts == [50] * 3
    f = plan.execute(c)
    want = direct.type1(pts[:, 0].astype(np.float64), c[2], (10, 12), 1)
    assert direct.rel_err(f[2], want) < 10 * eps


@pytest.mark.parametrize("tp", [1, 2, 3])
def test_vjp_and_jvp_give_each_point_its_own_cotangent(tp):
    """<vjp(g), δ> and jvp(δ) against central differences of the direct sums, sets of
    sizes that differ (the cotangents come back split as the points were given)."""
    dim, counts, tcounts = 2, [7, 0, 12], [5, 6, 0]
    rng = np.random.default_rng(20 + tp)
    pts = _sets(rng, dim, counts)
    tgt = _sets(rng, dim, tcounts, 5.0) if tp == 3 else None
    plan = nudt.Plan(tp, dim if tp == 3 else MODES[dim], 3, 1e-10, gradients=True)
    plan.setpts(*pts, **(dict(zip("stu", tgt)) if tp == 3 else {}))
    shape_in = (3, *MODES[dim]) if tp == 2 else (sum(counts),)
    cplx = lambda shape: rng.standard_normal(shape) + 1j * rng.standard_normal(shape)  # noqa
    data, d_data = cplx(shape_in), cplx(shape_in)
    dx = _sets(rng, dim, counts)
    ds = _sets(rng, dim, tcounts) if tp == 3 else None
    y = plan.execute(data)
    g = cplx(y.shape)

    def output(t):
        moved = [[p + t * d for p, d in zip(pd, dd)] for pd, dd in zip(pts, dx)]
        moved_t = None if tp != 3 else \
            [[p + t * d for p, d in zip(pd, dd)] for pd, dd in zip(tgt, ds)]
        inp = data + t * d_data
        per = inp if tp == 2 else np.split(inp, np.cumsum(counts)[:-1])
        out = _direct(tp, dim, moved, moved_t, per, counts, tcounts)
        return np.stack(out) if tp == 1 else np.concatenate(out)

    h = 1e-5
    dy = (output(h) - output(-h)) / (2 * h)
    expected = np.vdot(g, dy).real
    cot = plan.vjp(data, g)
    assert isinstance(cot.points[0], list) and [len(v) for v in cot.points[0]] == counts
    got = np.vdot(cot.data, d_data).real + sum(
        np.dot(np.concatenate(c), np.concatenate(d)) for c, d in zip(cot.points, dx))
    if tp == 3:
        got += sum(np.dot(np.concatenate(c), np.concatenate(d)) for c, d in zip(cot.targets, ds))
    assert abs(got - expected) < 1e-6 * abs(expected)
    jv = plan.jvp(data, d_data, dx, ds)
    assert direct.rel_err(jv, dy) < 1e-6


def test_bad_sets_are_typed_errors():
    rng = np.random.default_rng(5)
    plan = nudt.Plan(1, (8, 8), 3, 1e-6)
    xs = [rng.uniform(-3, 3, m) for m in (4, 5, 6)]
    with pytest.raises(ValueError, match="2 point sets for a plan of n_trans=3"):
        plan.setpts(xs[:2], xs[:2])
    with pytest.raises(ValueError, match="y must have the shape of x"):
        plan.setpts(xs, xs[:2] + [xs[0]])
    with pytest.raises(ValueError, match="y must be given"):
        plan.setpts(xs)
    with pytest.raises(TypeError, match="does not have the correct dtype"):
        plan.setpts(xs, [v.astype(np.float32) for v in xs])
    with pytest.raises(ValueError, match="finite|NaN|non-finite"):
        plan.setpts(xs, [xs[0], xs[1], np.full(6, np.nan)])
    plan.setpts(xs, xs)
    with pytest.raises(ValueError):
        plan.execute(np.ones(14, np.complex128))  # 15 strengths in all
    with pytest.raises(ValueError):
        plan.execute(np.ones((3, 5), np.complex128))
