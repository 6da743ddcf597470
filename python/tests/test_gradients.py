"""``Plan.vjp`` and ``Plan.jvp`` (plans made with ``gradients=True``) on numpy arrays, for every
type and dimension: against central differences of the direct sums (``nudt_direct``) along
one random direction of all inputs at once, stacks of transforms (the points' cotangents sum
over the stack), and the typed errors of bad requests. PyTorch's functions on top of these
are tested in ``test_torch.py``; here only that ``nudt.torch`` says what it needs where
PyTorch is missing."""

import importlib
import sys

import numpy as np
import pytest

import nudt
import nudt_direct as direct

MODES = {1: (12,), 2: (6, 5), 3: (4, 3, 5)}
EPS = 1e-10


def _problem(tp, dim, n_trans=1, seed=0):
    """Points, targets (type 3), input, and a random direction of each."""
    rng = np.random.default_rng(seed)
    m, n = 9, 7
    pts = rng.uniform(-np.pi, np.pi, (dim, m))
    tgt = rng.uniform(-5, 5, (dim, n)) if tp == 3 else np.zeros((dim, 0))
    shape = MODES[dim] if tp == 2 else (m,)
    cplx = lambda: (rng.standard_normal((n_trans, *shape))  # noqa: E731
                    + 1j * rng.standard_normal((n_trans, *shape)))
    return pts, tgt, cplx(), rng.standard_normal(pts.shape), rng.standard_normal(tgt.shape), \
        cplx()


def _direct(tp, pts, tgt, data):
    one = {1: lambda c: direct.type1(pts, c, MODES[len(pts)], 1),
           2: lambda f: direct.type2(pts, f, -1),
           3: lambda c: direct.type3(pts, c, tgt, 1)}[tp]
    return np.stack([one(d) for d in data])


def _plan(tp, dim, n_trans, pts, tgt):
    plan = nudt.Plan(tp, dim if tp == 3 else MODES[dim], n_trans, EPS, gradients=True)
    plan.setpts(*pts, **dict(zip("stu", tgt)) if tp == 3 else {})
    return plan


@pytest.mark.parametrize("n_trans", [1, 2])
@pytest.mark.parametrize("dim", [1, 2, 3])
@pytest.mark.parametrize("tp", [1, 2, 3])
def test_vjp_and_jvp_against_differences(tp, dim, n_trans):
    """<vjp(g), δ> = <g, jvp(δ)> = the change of Re Σ conj(g)·y along δ, by central
    differences of the direct sums, to 1e-6 relative (the differences' own error is ~1e-9)."""
    pts, tgt, data, dx, ds, dc = _problem(tp, dim, n_trans, seed=tp * 10 + dim)
    plan = _plan(tp, dim, n_trans, pts, tgt)
    y = plan.execute(data)
    g = np.random.default_rng(1).standard_normal(y.shape) * (1 + 1j)
    h = 1e-5
    moved = [_direct(tp, pts + t * h * dx, tgt + t * h * ds, data + t * h * dc) for t in (1, -1)]
    dy = (moved[0] - moved[1]) / (2 * h)
    expected = np.vdot(g, dy).real

    got = plan.vjp(data, g)
    assert got.data.shape == data.shape
    assert len(got.points) == dim and all(p.shape == (pts.shape[1],) for p in got.points)
    assert (got.targets is None) == (tp != 3)
    pairing = np.vdot(got.data, dc).real + sum(np.dot(p, d) for p, d in zip(got.points, dx))
    if tp == 3:
        pairing += sum(np.dot(t, d) for t, d in zip(got.targets, ds))
    assert abs(pairing - expected) <= 1e-6 * np.linalg.norm(dy) * np.linalg.norm(g)

    tangent = plan.jvp(data, dc, list(dx), list(ds) if tp == 3 else None)
    assert tangent.shape == y.shape
    assert direct.rel_err(tangent, dy) < 1e-6


def test_wrt_and_partial_tangents():
    """``wrt`` computes only what it names (None for the rest); tangents left out count as
    zero."""
    pts, tgt, data, dx, ds, dc = _problem(3, 2)
    plan = _plan(3, 2, 1, pts, tgt)
    g = np.ones(7, dtype=np.complex128)
    full = plan.vjp(data, g)
    only = plan.vjp(data, g, wrt="targets")
    assert only.data is None and only.points is None
    np.testing.assert_allclose(np.stack(only.targets), np.stack(full.targets))
    pts_only = plan.jvp(data, d_points=list(dx))
    both = plan.jvp(data, d_points=list(dx), d_targets=[np.zeros(7)] * 2)
    np.testing.assert_allclose(pts_only, both)
    np.testing.assert_allclose(plan.jvp(data, d_data=dc), plan.execute(dc))


def test_single_precision():
    """complex64 plans: derivatives within 10x a float32 tolerance of the float64 ones."""
    pts, tgt, data, dx, _, _ = _problem(1, 2)
    g = np.ones((1, 9), dtype=np.complex128)
    exact = _plan(2, 2, 1, pts, tgt).vjp(np.ones((1, *MODES[2]), np.complex128), g)
    plan = nudt.Plan(2, MODES[2], 1, 1e-4, dtype="complex64", gradients=True)
    plan.setpts(*pts.astype(np.float32))
    got = plan.vjp(np.ones((1, *MODES[2]), np.complex64), g.astype(np.complex64))
    assert got.points[0].dtype == np.float32 and got.data.dtype == np.complex64
    assert direct.rel_err(np.stack(got.points), np.stack(exact.points)) < 1e-3


def test_errors():
    pts, tgt, data, dx, ds, dc = _problem(1, 2)
    plain = nudt.Plan(1, MODES[2], eps=1e-6)
    plain.setpts(*pts)
    with pytest.raises(ValueError, match="gradients=True"):
        plain.vjp(data[0], np.ones(MODES[2], np.complex128))
    with pytest.raises(TypeError, match="gradients"):
        nudt.Plan(1, MODES[2], gradients="yes")
    plan = nudt.Plan(1, MODES[2], eps=1e-6, gradients=True)
    with pytest.raises(RuntimeError, match="setpts"):
        plan.vjp(data[0], np.ones(MODES[2], np.complex128))
    plan.setpts(*pts)
    g = np.ones(MODES[2], np.complex128)
    with pytest.raises(ValueError, match="wrt"):
        plan.vjp(data[0], g, wrt=("points", "targets"))
    with pytest.raises(nudt.NudtShapeError):
        plan.vjp(data[0], np.ones((5, 6), np.complex128))
    with pytest.raises(TypeError, match="dtype"):
        plan.vjp(data[0], g.astype(np.complex64))
    with pytest.raises(nudt.NudtShapeError):
        plan.vjp(np.ones((2, 10), np.complex128), g)  # a stack of 2 for a plan of 1
    with pytest.raises(nudt.NudtShapeError, match="one per dimension"):
        plan.jvp(data, d_points=[dx[0]])
    with pytest.raises(nudt.NudtShapeError, match="d_y must be of shape"):
        plan.jvp(data, d_points=[dx[0], dx[1][:3]])
    with pytest.raises(nudt.NudtShapeError, match="type 3"):
        plan.jvp(data, d_targets=[dx[0], dx[1]])
    with pytest.raises(TypeError, match="dtype"):
        plan.jvp(data, d_points=[dx[0].astype(np.float32), dx[1]])


def test_torch_module_without_torch(monkeypatch):
    """Without PyTorch, importing nudt.torch raises ImportError saying what to install."""
    monkeypatch.setitem(sys.modules, "torch", None)  # what `import torch` then raises
    monkeypatch.delitem(sys.modules, "nudt.torch", raising=False)
    with pytest.raises(ImportError, match="nudt.torch needs PyTorch"):
        importlib.import_module("nudt.torch")
