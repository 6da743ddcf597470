"""`import nudt as finufft`: the same signatures and defaults as finufft's Python package,
and the same results (to the tolerance) and output shapes on the same calls."""

import inspect

import finufft
import numpy as np
import pytest

import nudt

NAMES = [f"nufft{d}d{t}" for d in (1, 2, 3) for t in (1, 2, 3)]


@pytest.mark.parametrize("name", NAMES)
def test_function_signatures(name):
    assert inspect.signature(getattr(nudt, name)) == inspect.signature(getattr(finufft, name))


@pytest.mark.parametrize("method", ["__init__", "setpts", "execute", "execute_adjoint"])
def test_plan_signatures(method):
    ours = inspect.signature(getattr(nudt.Plan, method))
    theirs = inspect.signature(getattr(finufft.Plan, method))
    assert ours == theirs


@pytest.mark.parametrize("dtype", ["complex64", "complex128"])
@pytest.mark.parametrize("tp", (1, 2, 3))
def test_same_results_and_shapes_as_finufft(tp, dtype):
    rng = np.random.default_rng(tp)
    real = np.float32 if dtype == "complex64" else np.float64
    eps, bound = (1e-5, 1e-4) if dtype == "complex64" else (1e-10, 1e-8)
    m, modes, n_trans = 500, (24, 17), 2
    x, y = rng.uniform(-np.pi, np.pi, (2, m)).astype(real)
    s, t = rng.uniform(-20, 20, (2, 300)).astype(real)
    shape = {1: (n_trans, m), 2: (n_trans, *modes), 3: (n_trans, m)}[tp]
    data = (rng.standard_normal(shape) + 1j * rng.standard_normal(shape)).astype(dtype)
    results = []
    for lib in (nudt, finufft):
        plan = lib.Plan(tp, 2 if tp == 3 else modes, n_trans, eps, dtype=dtype, modeord=1)
        if tp == 3:
            plan.setpts(x, y, s=s, t=t)
        else:
            plan.setpts(x, y)
        fwd = plan.execute(data)
        results.append((fwd, plan.execute_adjoint(fwd)))
    for ours, theirs in zip(*results):
        assert ours.shape == theirs.shape and ours.dtype == theirs.dtype
        assert np.linalg.norm(ours - theirs) / np.linalg.norm(theirs) < bound
