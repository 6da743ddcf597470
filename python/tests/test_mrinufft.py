"""nudt as mri-nufft's backends "nudt" (CPU) and "nudt-cuda" (GPU): registered by importing
nudt.mrinufft, and their op, adj_op and update_samples equal to direct sums (and, with coils,
sensitivity maps, batches and density, to mri-nufft's finufft backend).

Skipped where mri-nufft is not installed, unless NUDT_REQUIRE_MRINUFFT=1 (set by .ci/run) makes
that a failure; the GPU cases also where nudt.cuda or CuPy does not import (NUDT_REQUIRE_GPU=1
makes that a failure).
"""

import importlib.util
import os

import numpy as np
import pytest

import nudt
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


@pytest.mark.parametrize("backend", BACKENDS)
def test_density_assigned_later_as_finufft_backend(backend):
    """A host density assigned after construction (mri-nufft's update tests do) weighs
    adj_op as in mri-nufft's finufft backend (nudt-cuda keeps it on the GPU)."""
    pytest.importorskip("finufft")
    shape = (24, 20)
    rng = np.random.default_rng(6)
    samples = trajectory(2, np.float64)
    density = 1e-2 + rng.random(len(samples)) / 100
    kspace = cnormal(rng, len(samples), np.complex128)
    ours, theirs = (mrinufft.get_operator(name)(samples, shape, eps=1e-9)
                    for name in (backend, "finufft"))
    ours.density = density
    theirs.density = density
    assert direct.rel_err(to_host(ours.adj_op(kspace)), theirs.adj_op(kspace)) < 1e-7


def test_spread_and_interp_only_are_adjoint():
    """The pair under the pipe density: RawPlan.spread_only onto the fine grid and
    interp_only back, adjoint to each other (<S c, g> = <c, S* g>) in f32 and f64."""
    rng = np.random.default_rng(9)
    for dtype, tol in ((np.complex128, 1e-12), (np.complex64, 1e-5)):
        samples = trajectory(3, np.float64) * 2 * np.pi
        plan = nudt.Plan(2, (12, 10, 8), dtype=dtype, upsampfac=1.25)
        plan.setpts(*samples.T.astype(np.float32 if dtype == np.complex64 else np.float64))
        c = cnormal(rng, len(samples), dtype)
        g = cnormal(rng, int(np.prod(plan._raw.fine_grid)), dtype)
        sc, ig = plan._raw.spread_only(c), plan._raw.interp_only(g)
        assert sc.dtype == dtype and sc.shape == g.shape and ig.shape == c.shape
        lhs, rhs = np.vdot(g, sc), np.vdot(ig, c)
        assert abs(lhs - rhs) < tol * abs(lhs)
        with pytest.raises(ValueError):
            plan._raw.interp_only(g[1:])


@pytest.mark.parametrize("osf", (1.5, 2))
@pytest.mark.parametrize("dim", (2, 3))
def test_pipe_density(dim, osf):
    """density=True (Pipe and Menon's iteration): on a radial trajectory the weights grow
    as the distance from the centre, within the bounds mri-nufft's own test sets its
    backends (correlation above 0.8, at osf 2 above 0.9 with a slope within 0.1 of 1), and
    at least as closely as mri-nufft's finufft backend's weights do; the operator uses
    them as mrinufft.density.pipe returns them."""
    from mrinufft.density import pipe
    if dim == 2:
        samples, shape = mrinufft.initialize_2D_radial(Nc=128, Ns=16).reshape(-1, 2), (32, 32)
    else:
        traj = mrinufft.initialize_2D_radial(Nc=64, Ns=16)
        samples = mrinufft.trajectories.tools.rotate(traj, nb_rotations=64).reshape(-1, 3)
        shape = (32, 32, 32)
    radius = np.linalg.norm(samples, axis=1)

    def fit(weights):
        w, r = weights / weights.mean(), radius / radius.mean()
        return np.corrcoef(r, w)[0, 1], np.polyfit(r, w, 1)[0]

    weights = pipe(samples, shape, backend="nudt", osf=osf, max_iter=10)
    assert weights.shape == (len(samples),) and np.isrealobj(weights)
    corr, slope = fit(weights)
    assert corr > (0.9 if osf == 2 else 0.8), corr
    if osf == 2:
        assert abs(slope - 1) < 0.1, slope
    if importlib.util.find_spec("finufft"):
        theirs = pipe(samples, shape, backend="finufft", osf=osf, max_iter=10)
        assert corr >= fit(np.abs(theirs))[0]
    with pytest.raises(ValueError, match="osf"):
        pipe(samples, shape, backend="nudt", osf=1)
    op = mrinufft.get_operator("nudt")(samples, shape, density=True)
    assert np.allclose(op.density, pipe(samples, shape, backend="nudt"))