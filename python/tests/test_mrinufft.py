"""nudt as mri-nufft's backends "nudt" (CPU) and "nudt-cuda" (GPU): registered by importing
nudt.mrinufft, and their op, adj_op and update_samples equal to direct sums (and, with coils,
sensitivity maps, batches and density, to mri-nufft's finufft backend).

Skipped where mri-nufft is not installed, unless NUDT_REQUIRE_MRINUFFT=1 (set by .ci/run) makes
that a failure; the GPU cases also where nudt.cuda or CuPy does not import (NUDT_REQUIRE_GPU=1
makes that a failure).
"""

import os

import numpy as np
import pytest

import nudt_direct as direct

if os.environ.get("NUDT_REQUIRE_MRINUFFT") == "1":
    import mrinufft
    import nudt.mrinufft as nm
else:
    mrinufft = pytest.importorskip("mrinufft")
    nm = pytest.importorskip("nudt.mrinufft")

REQUIRE_GPU = os.environ.get("NUDT_REQUIRE_GPU") == "1"
BACKENDS = [
    "nudt",
    pytest.param("nudt-cuda", marks=pytest.mark.skipif(
        not nm.MRInudtCuda.available and not REQUIRE_GPU,
        reason="nudt.cuda or CuPy does not import")),
]
# (samples dtype, tolerance asked, bound on the relative error)
PRECISIONS = {np.float64: (1e-9, 1e-7), np.float32: (1e-5, 2e-4)}


def trajectory(dim, dtype):
    """A 2-D radial or 3-D phyllotaxis-radial trajectory, (K, dim), in [-0.5, 0.5)."""
    if dim == 2:
        traj = mrinufft.initialize_2D_radial(Nc=16, Ns=40)
    else:
        traj = mrinufft.initialize_3D_phyllotaxis_radial(Nc=24, Ns=20)
    return traj.reshape(-1, dim).astype(dtype)


def to_host(a):
    return a.get() if hasattr(a, "get") else np.asarray(a)


def cnormal(rng, shape, dtype):
    return (rng.standard_normal(shape) + 1j * rng.standard_normal(shape)).astype(dtype)


def test_registered():
    assert {"nudt", "nudt-cuda"} <= set(mrinufft.list_backends())
    assert mrinufft.get_operator("nudt") is nm.MRInudt
    assert mrinufft.check_backend("nudt")


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("dtype", PRECISIONS)
@pytest.mark.parametrize("dim", (2, 3))
def test_op_adj_op_update_samples(backend, dtype, dim):
    eps, bound = PRECISIONS[dtype]
    shape = (24, 20) if dim == 2 else (12, 10, 8)
    cpx = np.complex64 if dtype == np.float32 else np.complex128
    rng = np.random.default_rng(dim)
    samples = trajectory(dim, dtype)
    op = mrinufft.get_operator(backend)(samples, shape, eps=eps)
    norm = np.sqrt(np.prod(shape) * 2 ** dim)
    image = cnormal(rng, shape, cpx)
    kspace = cnormal(rng, len(samples), cpx)
    for _ in range(2):  # the second time on new samples
        pts = (2 * np.pi * samples.astype(np.float64)).T
        got = op.op(image)
        assert got.dtype == cpx
        assert direct.rel_err(to_host(got), direct.type2(pts, image, -1) / norm) < bound
        back = op.adj_op(kspace)
        assert back.shape == shape
        assert direct.rel_err(to_host(back), direct.type1(pts, kspace, shape, 1) / norm) \
            < bound
        samples = np.roll(samples, 1, axis=1)
        op.update_samples(samples)


@pytest.mark.parametrize("backend", BACKENDS)
def test_coils_smaps_batches_density_as_finufft_backend(backend):
    """Several coils with sensitivity maps, two batches, two transforms per plan call and
    Voronoi density: op, adj_op and data_consistency as mri-nufft's finufft backend gives
    them."""
    pytest.importorskip("finufft")
    shape, n_coils = (24, 20), 3
    rng = np.random.default_rng(5)
    samples = trajectory(2, np.float64)
    smaps = cnormal(rng, (n_coils, *shape), np.complex128)
    kw = dict(n_coils=n_coils, n_batchs=2, n_trans=2, smaps=smaps, density="voronoi",
              squeeze_dims=False, eps=1e-9)
    ours = mrinufft.get_operator(backend)(samples, shape, **kw)
    theirs = mrinufft.get_operator("finufft")(samples, shape, **kw)
    image = cnormal(rng, (2, 1, *shape), np.complex128)
    kspace = cnormal(rng, (2, n_coils, len(samples)), np.complex128)
    for name, arg in (("op", image), ("adj_op", kspace)):
        want = getattr(theirs, name)(arg)
        got = to_host(getattr(ours, name)(arg))
        assert got.shape == want.shape
        assert direct.rel_err(got, want) < 1e-7, name
    want = theirs.data_consistency(image, kspace)
    assert direct.rel_err(to_host(ours.data_consistency(image, kspace)), want) < 1e-7


def test_pipe_density_is_refused():
    """density=True is mri-nufft's "pipe" method, which needs a spread-only transform."""
    with pytest.raises(ValueError, match="pipe"):
        mrinufft.get_operator("nudt")(trajectory(2, np.float64), (16, 16), density=True)
