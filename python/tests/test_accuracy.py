"""Accuracy against direct sums: every type x dimension x dtype, through both interfaces,
with out=, batches, both mode orders and the adjoints."""

import numpy as np
import pytest

import nudt
import nudt_direct as direct

DIMS = (1, 2, 3)
MODES = {1: (37,), 2: (16, 13), 3: (8, 7, 6)}
# dtype: (tolerance asked, bound on the relative l2 error). The bound is 20 times the
# tolerance: errors seen are 0.3 to 8 times it (type 3 in 3-D the highest).
PRECISIONS = {
    "complex128": (1e-9, 2e-8),
    "complex64": (1e-5, 2e-4),
}
M = 300
SIMPLE = {(d, t): getattr(nudt, f"nufft{d}d{t}") for d in DIMS for t in (1, 2, 3)}


def real_of(dtype):
    return np.float32 if dtype == "complex64" else np.float64


def points(rng, dim, m, dtype, spread=np.pi):
    return [rng.uniform(-spread, spread, m).astype(real_of(dtype)) for _ in range(dim)]


def cnormal(rng, shape, dtype):
    return (rng.standard_normal(shape) + 1j * rng.standard_normal(shape)).astype(dtype)


def freqs(rng, dim, n, dtype, half=12.0):
    return [rng.uniform(-half, half, n).astype(real_of(dtype)) for _ in range(dim)]


@pytest.mark.parametrize("dtype", PRECISIONS)
@pytest.mark.parametrize("dim", DIMS)
@pytest.mark.parametrize("tp", (1, 2, 3))
def test_simple_interface(tp, dim, dtype):
    eps, bound = PRECISIONS[dtype]
    rng = np.random.default_rng(100 * tp + 10 * dim + len(dtype))
    # points outside [-pi, pi) too: the transforms are 2pi-periodic in them
    x = points(rng, dim, M, dtype, spread=3 * np.pi)
    fn = SIMPLE[dim, tp]
    if tp == 1:
        c = cnormal(rng, M, dtype)
        got = fn(*x, c, MODES[dim], eps=eps)
        want = direct.type1(x, c, MODES[dim], +1)
    elif tp == 2:
        f = cnormal(rng, MODES[dim], dtype)
        got = fn(*x, f, eps=eps)
        want = direct.type2(x, f, -1)
    else:
        c = cnormal(rng, M, dtype)
        s = freqs(rng, dim, 250, dtype)
        got = fn(*x, c, *s, eps=eps)
        want = direct.type3(x, c, s, +1)
    assert got.dtype == np.dtype(dtype)
    assert got.shape == want.shape
    assert direct.rel_err(got, want) < bound


@pytest.mark.parametrize("dtype", PRECISIONS)
@pytest.mark.parametrize("dim", DIMS)
@pytest.mark.parametrize("tp", (1, 2, 3))
def test_plan_batch_out_and_adjoint(tp, dim, dtype):
    """A plan with 3 transforms: execute into a given out (garbage-filled), then the adjoint
    (sign flipped, roles swapped), each stacked transform against its direct sum."""
    eps, bound = PRECISIONS[dtype]
    rng = np.random.default_rng(7 + 100 * tp + 10 * dim + len(dtype))
    n_trans, isign = 3, (-1 if tp == 2 else 1)
    x = points(rng, dim, M, dtype)
    plan = nudt.Plan(tp, dim if tp == 3 else MODES[dim], n_trans, eps, dtype=dtype)
    assert plan.isign == isign and plan.n_trans == n_trans and plan.dim == dim
    if tp == 3:
        s = freqs(rng, dim, 200, dtype)
        plan.setpts(**dict(zip("xyz", x)), **dict(zip("stu", s)))
    else:
        plan.setpts(*x)

    modes = MODES[dim]
    in_shape = {1: (M,), 2: modes, 3: (M,)}[tp]
    out_shape = {1: modes, 2: (M,), 3: (200,)}[tp]
    data = cnormal(rng, (n_trans, *in_shape), dtype)
    out = np.full((n_trans, *out_shape), np.nan, dtype=dtype)
    got = plan.execute(data, out=out)
    assert got is out
    back_in = cnormal(rng, (n_trans, *out_shape), dtype)
    back = plan.execute_adjoint(back_in)
    assert back.shape == (n_trans, *in_shape) and back.dtype == np.dtype(dtype)
    for i in range(n_trans):
        if tp == 1:
            want = direct.type1(x, data[i], modes, isign)
            want_back = direct.type2(x, back_in[i], -isign)
        elif tp == 2:
            want = direct.type2(x, data[i], isign)
            want_back = direct.type1(x, back_in[i], modes, -isign)
        else:
            want = direct.type3(x, data[i], s, isign)
            # the adjoint maps values at the targets back to the sources
            want_back = direct.type3(s, back_in[i], x, -isign)
        assert direct.rel_err(got[i], want) < bound
        assert direct.rel_err(back[i], want_back) < bound


@pytest.mark.parametrize("dim", DIMS)
@pytest.mark.parametrize("tp", (1, 2))
def test_mode_orders(tp, dim):
    rng = np.random.default_rng(3 * tp + dim)
    x = points(rng, dim, M, "complex128")
    modes = (10, 9, 8)[:dim]
    fn = SIMPLE[dim, tp]
    if tp == 1:
        c = cnormal(rng, M, "complex128")
        centred = fn(*x, c, modes, eps=1e-10)
        fft = fn(*x, c, modes, eps=1e-10, modeord=1)
        assert direct.rel_err(fft, direct.type1(x, c, modes, 1, modeord=1)) < 1e-8
        np.testing.assert_allclose(fft, np.fft.ifftshift(centred), rtol=0, atol=1e-9)
    else:
        f = cnormal(rng, modes, "complex128")
        got = fn(*x, f, eps=1e-10, modeord=1)
        assert direct.rel_err(got, direct.type2(x, f, -1, modeord=1)) < 1e-8
        # the same as centred order on the shifted coefficients
        np.testing.assert_allclose(got, fn(*x, np.fft.fftshift(f), eps=1e-10),
                                   rtol=0, atol=1e-8)


def test_isign_and_leading_axis_of_one():
    rng = np.random.default_rng(11)
    x, y = points(rng, 2, M, "complex128")
    c = cnormal(rng, (1, M), "complex128")
    got = nudt.nufft2d1(x, y, c, (12, 10), eps=1e-10, isign=-5)  # negative: sign -1
    assert got.shape == (1, 12, 10)
    assert direct.rel_err(got[0], direct.type1([x, y], c[0], (12, 10), -1)) < 1e-8
    got = nudt.nufft2d1(x, y, c[0], 11, eps=1e-10, isign=0)  # non-negative: sign +1
    assert direct.rel_err(got, direct.type1([x, y], c[0], (11, 11), +1)) < 1e-8


def test_n_modes_from_out_and_batched_type2():
    rng = np.random.default_rng(12)
    x, y, z = points(rng, 3, M, "complex128")
    c = cnormal(rng, (2, M), "complex128")
    out = np.zeros((2, 6, 5, 4), dtype=np.complex128)
    got = nudt.nufft3d1(x, y, z, c, out=out, eps=1e-9)
    assert got is out
    for i in range(2):
        assert direct.rel_err(out[i], direct.type1([x, y, z], c[i], (6, 5, 4), 1)) < 1e-7
    f = cnormal(rng, (4, 6, 5, 4), "complex128")
    vals = nudt.nufft3d2(x, y, z, f, eps=1e-9)
    assert vals.shape == (4, M)
    for i in range(4):
        assert direct.rel_err(vals[i], direct.type2([x, y, z], f[i], -1)) < 1e-7


def test_strided_and_fortran_input_are_copied_correctly():
    rng = np.random.default_rng(13)
    xs = rng.uniform(-np.pi, np.pi, (2, 2 * M))
    x, y = xs[0, ::2], xs[1, ::2]  # strided views
    assert not x.flags.c_contiguous
    f = np.asfortranarray(cnormal(rng, (14, 9), "complex128"))
    with pytest.warns(UserWarning, match="requirement: C. Copying array"):
        got = nudt.nufft2d2(x, y, f, eps=1e-10)
    assert direct.rel_err(got, direct.type2([x, y], np.ascontiguousarray(f), -1)) < 1e-8


def test_upsampfac_and_nthreads():
    rng = np.random.default_rng(14)
    x = points(rng, 1, M, "complex128")
    c = cnormal(rng, M, "complex128")
    want = direct.type1(x, c, (64,), 1)
    for opts in ({"upsampfac": 1.25}, {"upsampfac": 2.0}, {"nthreads": 1},
                 {"nthreads": 2, "fftw": 0, "spread_sort": 2, "debug": 0}):
        assert direct.rel_err(nudt.nufft1d1(*x, c, 64, eps=1e-9, **opts), want) < 1e-7, opts


def test_zero_points():
    x = np.zeros(0)
    f = nudt.nufft1d1(x, np.zeros(0, dtype=np.complex128), 8)
    assert f.shape == (8,) and not f.any()
    assert nudt.nufft1d2(x, np.ones(8, dtype=np.complex128)).shape == (0,)
