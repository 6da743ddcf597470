"""nudt.cuda, cufinufft's interface on the GPU: accuracy against direct sums on the host for
every type x dimension x dtype, out=, batches, mode orders, CuPy and PyTorch arrays,
streams, the derivatives (vjp, jvp), and the typed errors.

Without a GPU the GPU tests are skipped (saying why) and ``test_import`` checks the
ImportError instead; with NUDT_REQUIRE_GPU=1 a missing GPU, CuPy or PyTorch is a failure.
"""

import gc
import importlib
import os
import sys

import numpy as np
import pytest

import nudt
import nudt_direct as direct
from concurrency import in_threads

REQUIRE = os.environ.get("NUDT_REQUIRE_GPU") == "1"
try:
    import nudt.cuda as cu
    IMPORT_ERROR = None
except ImportError as e:
    cu, IMPORT_ERROR = None, e

gpu = pytest.mark.skipif(cu is None and not REQUIRE, reason=f"no GPU: {IMPORT_ERROR}")


def test_import():
    """With a GPU nudt.cuda imports; without one (or without the `cuda` feature) the import
    fails with ImportError saying why, and keeps failing (no half-imported module)."""
    if cu is not None:
        return
    assert not REQUIRE, f"NUDT_REQUIRE_GPU=1 but nudt.cuda does not import: {IMPORT_ERROR}"
    msg = str(IMPORT_ERROR)
    if hasattr(nudt._nudt, "RawCudaPlan"):
        assert msg.startswith("nudt.cuda: no usable GPU: "), msg
    else:
        assert "built without its `cuda` feature" in msg, msg
    sys.modules.pop("nudt.cuda", None)
    with pytest.raises(ImportError, match="^nudt.cuda: "):
        importlib.import_module("nudt.cuda")


def test_cufinufft_signatures():
    """Names, argument order and defaults of cufinufft's Python interface (2.x)."""
    if cu is None:
        pytest.skip(f"no GPU: {IMPORT_ERROR}")
    import inspect
    sig = lambda f: str(inspect.signature(f))  # noqa: E731
    assert sig(cu.Plan.__init__) == ("(self, nufft_type, n_modes, n_trans=1, eps=1e-06, "
                                     "isign=None, dtype='complex64', **kwargs)")
    assert sig(cu.Plan.setpts) == "(self, x, y=None, z=None, s=None, t=None, u=None)"
    assert sig(cu.Plan.execute) == "(self, data, out=None)"
    for d in DIMS:
        pts = ", ".join("xyz"[:d])
        assert sig(getattr(cu, f"nufft{d}d1")) == (
            f"({pts}, data, n_modes=None, out=None, eps=1e-06, isign=1, **kwargs)")
        assert sig(getattr(cu, f"nufft{d}d2")) == (
            f"({pts}, data, out=None, eps=1e-06, isign=-1, **kwargs)")
        assert sig(getattr(cu, f"nufft{d}d3")) == (
            f"({pts}, data, {', '.join('stu'[:d])}, out=None, eps=1e-06, isign=1, **kwargs)")


def _library(name):
    try:
        return importlib.import_module(name)
    except ImportError:
        if REQUIRE:
            raise
        return None


cupy = _library("cupy") if cu is not None or REQUIRE else None
torch = _library("torch") if cu is not None or REQUIRE else None
LIBS = [
    pytest.param("cupy", marks=pytest.mark.skipif(cupy is None, reason="CuPy not installed")),
    pytest.param("torch", marks=pytest.mark.skipif(torch is None,
                                                   reason="PyTorch not installed")),
]


def dev(lib, a):
    """A host array on the GPU, in library `lib`."""
    if lib == "cupy":
        return cupy.asarray(a)
    return torch.from_numpy(np.ascontiguousarray(a)).to("cuda")


def host(a):
    if cupy is not None and isinstance(a, cupy.ndarray):
        return cupy.asnumpy(a)
    return a.detach().cpu().numpy()


DIMS = (1, 2, 3)
MODES = {1: (37,), 2: (16, 13), 3: (8, 7, 6)}
# dtype: (tolerance asked, bound on the relative l2 error): as the CPU tests'.
PRECISIONS = {"complex128": (1e-9, 2e-8), "complex64": (1e-5, 2e-4)}
M = 300


def real_of(dtype):
    return np.float32 if dtype == "complex64" else np.float64


def problem(seed, dim, dtype, tp, n_trans=None, modes=None):
    """Host data of one problem: points, input, type 3 targets, and the direct sums."""
    rng = np.random.default_rng(seed)
    modes = modes or MODES[dim]
    x = [rng.uniform(-3 * np.pi, 3 * np.pi, M).astype(real_of(dtype)) for _ in range(dim)]
    lead = () if n_trans is None else (n_trans,)
    shape = (*lead, *(modes if tp == 2 else (M,)))
    data = (rng.standard_normal(shape) + 1j * rng.standard_normal(shape)).astype(dtype)
    s = [rng.uniform(-12, 12, 250).astype(real_of(dtype)) for _ in range(dim)] \
        if tp == 3 else []
    return x, data, s


def reference(tp, x, data, s, modes, isign, modeord=0):
    """Direct sums of each transform stacked in `data`."""
    inner = len(modes) if tp == 2 else 1
    many = data.reshape(-1, *data.shape[data.ndim - inner:])
    if tp == 1:
        out = [direct.type1(x, c, modes, isign, modeord) for c in many]
    elif tp == 2:
        out = [direct.type2(x, f, isign, modeord) for f in many]
    else:
        out = [direct.type3(x, c, s, isign) for c in many]
    return np.stack(out) if data.ndim > inner else out[0]


SIMPLE_NAMES = {(d, t): f"nufft{d}d{t}" for d in DIMS for t in (1, 2, 3)}


@gpu
@pytest.mark.parametrize("lib", LIBS)
@pytest.mark.parametrize("dtype", PRECISIONS)
@pytest.mark.parametrize("dim", DIMS)
@pytest.mark.parametrize("tp", (1, 2, 3))
def test_simple_accuracy(tp, dim, dtype, lib):
    """The one-call transforms, every type x dimension x dtype, on CuPy and on PyTorch."""
    eps, bound = PRECISIONS[dtype]
    x, data, s = problem(100 * tp + 10 * dim + len(dtype), dim, dtype, tp)
    fn = getattr(cu, SIMPLE_NAMES[dim, tp])
    dx = [dev(lib, v) for v in x]
    args = [*dx, dev(lib, data)] + [dev(lib, v) for v in s]
    got = fn(*args, MODES[dim], eps=eps) if tp == 1 else fn(*args, eps=eps)
    assert type(got) is type(args[dim])
    assert str(got.dtype).endswith(dtype)
    want = reference(tp, x, data, s, MODES[dim], -1 if tp == 2 else 1)
    assert direct.rel_err(host(got), want) < bound


@gpu
@pytest.mark.parametrize("lib", LIBS)
@pytest.mark.parametrize("tp", (1, 2, 3))
@pytest.mark.parametrize("dim", DIMS)
def test_plan_batch_out_modeord(lib, tp, dim):
    """Plan with n_trans=3, out= given, FFT mode order, isign flipped, executed twice."""
    dtype = "complex128"
    eps, bound = PRECISIONS[dtype]
    x, data, s = problem(7 * tp + dim, dim, dtype, tp, n_trans=3)
    plan = cu.Plan(tp, MODES[dim] if tp != 3 else dim, 3, eps, -1 if tp != 2 else 1,
                   dtype=dtype, modeord=1)
    plan.setpts(*[dev(lib, v) for v in x], **{k: dev(lib, v) for k, v in zip("stu", s)})
    # The points were temporaries: the plan holds them (types 1 and 2 read them at every
    # execute), so memory allocated now cannot be theirs.
    gc.collect()
    junk = [dev(lib, np.full(M, 1e3, real_of(dtype))) for _ in range(2 * dim)]
    want = reference(tp, x, data, s, MODES[dim], -1 if tp != 2 else 1, modeord=1)
    out = dev(lib, np.zeros(want.shape, dtype))
    for _ in range(2):
        got = plan.execute(dev(lib, data), out=out)
        assert got is out
        assert direct.rel_err(host(out), want) < bound
    del junk


@gpu
@pytest.mark.parametrize("lib", LIBS)
@pytest.mark.parametrize("dtype", PRECISIONS)
@pytest.mark.parametrize("tp", (1, 2, 3))
@pytest.mark.parametrize("dim", DIMS)
def test_execute_adjoint(lib, dtype, tp, dim):
    """execute_adjoint of a plan with n_trans=2: the direct sum of the adjoint (type 1's is a
    type 2 with the opposite sign, type 2's a type 1, type 3's from the targets back to the
    sources), into a new array and into out=."""
    eps, bound = PRECISIONS[dtype]
    rng = np.random.default_rng(31 * tp + dim)
    x, _, s = problem(5 * tp + dim, dim, dtype, tp)
    modes = MODES[dim]
    isign = -1 if tp == 2 else 1
    plan = cu.Plan(tp, modes if tp != 3 else dim, 2, eps, isign, dtype=dtype)
    plan.setpts(*[dev(lib, v) for v in x], **{k: dev(lib, v) for k, v in zip("stu", s)})
    shape = {1: (2, *modes), 2: (2, M), 3: (2, len(s[0]) if s else 0)}[tp]
    data = (rng.standard_normal(shape) + 1j * rng.standard_normal(shape)).astype(dtype)
    if tp == 1:
        want = np.stack([direct.type2(x, f, -isign) for f in data])
    elif tp == 2:
        want = np.stack([direct.type1(x, c, modes, -isign) for c in data])
    else:
        want = np.stack([direct.type3(s, f, x, -isign) for f in data])
    got = plan.execute_adjoint(dev(lib, data))
    assert direct.rel_err(host(got), want) < bound
    out = dev(lib, np.zeros(want.shape, dtype))
    assert plan.execute_adjoint(dev(lib, data), out=out) is out
    assert direct.rel_err(host(out), want) < bound


@gpu
@pytest.mark.parametrize("lib", LIBS)
@pytest.mark.parametrize("tp", (1, 2, 3))
def test_gradients(lib, tp):
    """vjp and jvp of a plan made with gradients=True, on the device: the cotangents and
    tangents of the CPU plan (checked against finite differences in test_gradients.py), to
    both plans' accuracy (1e-9 asked), as arrays of the input's library on its device."""
    x, data, s = problem(7 + tp, 2, "complex128", tp, n_trans=2, modes=(10, 8))
    x, s = [v[:60] for v in x], [v[:40] for v in s]
    data = data[..., :60] if tp != 2 else data
    shape = (2, 10, 8) if tp == 1 else (2, 60) if tp == 2 else (2, 40)
    g = np.random.default_rng(1).standard_normal(shape) * (1 + 0.5j)
    plans = [mod.Plan(tp, 2 if tp == 3 else (10, 8), 2, 1e-9, dtype="complex128",
                      gradients=True) for mod in (nudt, cu)]
    plans[0].setpts(*x, **dict(zip("st", s)))
    plans[1].setpts(*[dev(lib, v) for v in x], **{k: dev(lib, v) for k, v in zip("st", s)})
    want = plans[0].vjp(data, g)
    got = plans[1].vjp(dev(lib, data), dev(lib, g))
    assert type(got.data) is type(dev(lib, data))
    assert direct.rel_err(host(got.data), want.data) < 1e-7
    for a, b in zip(got.points + (got.targets or ()), want.points + (want.targets or ())):
        assert type(a) is type(got.data) and a.shape == b.shape
        assert direct.rel_err(host(a), b) < 1e-7
    dx = [np.ones_like(v) for v in x]
    tangent = plans[1].jvp(dev(lib, data), d_points=[dev(lib, v) for v in dx])
    assert direct.rel_err(host(tangent), plans[0].jvp(data, d_points=dx)) < 1e-7
    d_data = np.random.default_rng(2).standard_normal(data.shape) * (0.5 - 1j)
    kw = {"d_targets": [dev(lib, np.ones_like(v)) for v in s]} if tp == 3 else {}
    tangent = plans[1].jvp(dev(lib, data), d_data=dev(lib, d_data), **kw)
    kw = {"d_targets": [np.ones_like(v) for v in s]} if tp == 3 else {}
    assert direct.rel_err(host(tangent), plans[0].jvp(data, d_data=d_data, **kw)) < 1e-7
    # Only what is asked for; a wrong cotangent shape is the shape error execute gives.
    only = plans[1].vjp(dev(lib, data), dev(lib, g), wrt="points")
    assert only.data is None and direct.rel_err(host(only.points[0]), want.points[0]) < 1e-7
    with pytest.raises(ValueError):
        plans[1].vjp(dev(lib, data), dev(lib, g[..., :-1]))


@gpu
@pytest.mark.parametrize("lib", LIBS)
@pytest.mark.parametrize("tp", (1, 2))
def test_gradients_of_point_sets_per_transform(lib, tp):
    """With a set per transform (points shaped (n_trans, M)), each point's cotangent is its
    own, shaped as the sets: the CPU plan's, on the device."""
    rng = np.random.default_rng(5 + tp)
    x = [rng.uniform(-3, 3, (3, 50)) for _ in range(2)]
    shape = (3, 10, 8) if tp == 2 else (3, 50)
    data = rng.standard_normal(shape) + 1j * rng.standard_normal(shape)
    out = (3, 50) if tp == 2 else (3, 10, 8)
    g = rng.standard_normal(out) * (1 - 0.5j)
    plans = [mod.Plan(tp, (10, 8), 3, 1e-9, dtype="complex128", gradients=True)
             for mod in (nudt, cu)]
    plans[0].setpts(*x)
    plans[1].setpts(*[dev(lib, v) for v in x])
    want = plans[0].vjp(data, g)
    got = plans[1].vjp(dev(lib, data), dev(lib, g))
    for a, b in zip(got.points, want.points):
        assert a.shape == (3, 50) and direct.rel_err(host(a), b) < 1e-7


@gpu
@pytest.mark.parametrize("method", (0, 1, 2, 3))
@pytest.mark.parametrize("tp", (1, 2))
def test_methods_and_options(method, tp):
    """Every gpu_method, bins, batch size and the no-effect tuning options."""
    dtype, dim = "complex64", 2
    eps, bound = PRECISIONS[dtype]
    x, data, s = problem(31 + method, dim, dtype, tp, n_trans=2)
    plan = cu.Plan(tp, MODES[dim], 2, eps, gpu_method=method, gpu_sort=1,
                   gpu_kerevalmeth=1, gpu_maxsubprobsize=1024, gpu_maxbatchsize=1,
                   gpu_binsizex=8 if method else 0, gpu_binsizey=8 if method else 0,
                   upsampfac=2.0, gpu_device_id=0)
    plan.setpts(*[dev("cupy", v) for v in x])
    got = plan.execute(dev("cupy", data))
    want = reference(tp, x, data, s, MODES[dim], -1 if tp == 2 else 1)
    assert direct.rel_err(host(got), want) < bound


@gpu
def test_torch_specifics():
    """A tensor that requires grad is read (as cufinufft does); results are tensors on the
    input's device; a non-contiguous input is copied."""
    x, data, _ = problem(5, 2, "complex64", 1)
    tx = [dev("torch", v).requires_grad_(False) for v in x]
    c = dev("torch", data)
    wide = torch.zeros((M, 2), dtype=torch.complex64, device="cuda")
    wide[:, 0] = c
    with pytest.warns(UserWarning, match="`data` does not satisfy the following requirement"):
        got = cu.nufft2d1(*tx, wide[:, 0], (16, 13), eps=1e-5)
    assert isinstance(got, torch.Tensor) and got.device == c.device
    want = reference(1, x, data, [], (16, 13), 1)
    assert direct.rel_err(host(got), want) < 2e-4
    grad = dev("torch", x[0].astype(np.float32)).requires_grad_(True)
    got2 = cu.nufft2d1(grad, tx[1], c, (16, 13), eps=1e-5)
    assert direct.rel_err(host(got2), want) < 2e-4


def fortran(lib, a):
    """A Fortran-ordered device copy of host array `a`."""
    if lib == "cupy":
        return cupy.asfortranarray(cupy.asarray(a))
    return dev(lib, a.T).T


def strided(lib, v):
    """A device vector with the values of `v` at every other element."""
    return dev(lib, np.repeat(v, 2))[::2]


@gpu
@pytest.mark.parametrize("lib", LIBS)
def test_noncontiguous_input_is_copied_with_a_warning(lib):
    """As cufinufft: CuPy and PyTorch inputs that are not C-contiguous (strided points,
    Fortran-ordered modes) are copied, with a UserWarning naming each; the results are
    right."""
    x, data, _ = problem(6, 2, "complex128", 2)
    with pytest.warns(UserWarning) as record:
        got = cu.nufft2d2(*[strided(lib, v) for v in x], fortran(lib, data), eps=1e-9)
    copied = {str(w.message).split("`")[1] for w in record
              if "following requirement: C. Copying array" in str(w.message)}
    assert copied == {"x", "y", "data"}
    want = reference(2, x, data, [], MODES[2], -1)
    assert direct.rel_err(host(got), want) < 2e-8
    # and through a plan's execute_adjoint
    plan = cu.Plan(2, MODES[2], eps=1e-9, dtype="complex128")
    plan.setpts(*[dev(lib, v) for v in x])
    c = (np.arange(M) % 7 - 3.0).astype(np.complex128)
    with pytest.warns(UserWarning, match="`data` does not satisfy the following"):
        back = plan.execute_adjoint(strided(lib, c))
    assert direct.rel_err(host(back), direct.type1(x, c, MODES[2], 1)) < 2e-8


@gpu
@pytest.mark.parametrize("lib", LIBS)
def test_noncontiguous_out_is_refused(lib):
    x, data, _ = problem(6, 2, "complex64", 1)
    plan = cu.Plan(1, MODES[2])
    plan.setpts(*[dev(lib, v) for v in x])
    out = fortran(lib, np.zeros(MODES[2], np.complex64))
    with pytest.raises(TypeError, match="following requirement: C"):
        plan.execute(dev(lib, data), out=out)


@gpu
def test_numba_noncontiguous_is_refused():
    """As cufinufft: a Numba array that is not C-contiguous raises TypeError (nudt copies
    only arrays whose library copies on the device itself)."""
    numba_cuda = pytest.importorskip("numba.cuda")
    x, data, _ = problem(12, 1, "complex128", 1)
    xs = numba_cuda.to_device(np.repeat(x[0], 2))[::2]
    with pytest.raises(TypeError, match="`x` does not satisfy the following requirement: C"):
        cu.nufft1d1(xs, numba_cuda.to_device(data), 37, eps=1e-9)


@gpu
def test_streams():
    """Arrays made and consumed on a non-blocking CuPy stream, and gpu_stream: the work is
    ordered after the producer's kernels and before the consumer's."""
    x, data, _ = problem(8, 3, "complex128", 1, modes=(24, 20, 16))
    want = reference(1, x, data, [], (24, 20, 16), 1)
    s = cupy.cuda.Stream(non_blocking=True)
    for _ in range(3):
        with s:
            dx = [cupy.asarray(v) for v in x]
            c = cupy.asarray(data) * 1.0  # a kernel on s right before the transform
            plan = cu.Plan(1, (24, 20, 16), eps=1e-9, dtype="complex128", gpu_stream=s)
            plan.setpts(*dx)
            f = plan.execute(c)
            total = (f * 1.0).sum()  # consumed on s right after
        s.synchronize()
        assert direct.rel_err(cupy.asnumpy(f), want) < 2e-8
        assert abs(complex(total) - want.sum()) <= 1e-6 * np.abs(want).sum()


@gpu
def test_torch_stream():
    """A tensor made and used on a side stream of PyTorch (whose array interface names no
    stream): the transform is ordered on torch's current stream."""
    x, data, _ = problem(11, 2, "complex64", 2, modes=(300, 200))
    want = reference(2, x, data, [], (300, 200), -1)
    side = torch.cuda.Stream()
    with torch.cuda.stream(side):
        tx = [torch.from_numpy(v).to("cuda", non_blocking=True) for v in x]
        f = torch.from_numpy(data).to("cuda", non_blocking=True) * 1.0
        vals = cu.nufft2d2(*tx, f, eps=1e-5)
        total = (vals * 1.0).sum()
    side.synchronize()
    assert direct.rel_err(host(vals), want) < 2e-4
    assert abs(complex(total.item()) - want.sum()) <= 1e-3 * np.abs(want).sum()


@gpu
def test_numba():
    """Numba device arrays in, a Numba device array out."""
    numba_cuda = pytest.importorskip("numba.cuda")
    x, data, _ = problem(12, 1, "complex128", 1)
    got = cu.nufft1d1(numba_cuda.to_device(x[0]), numba_cuda.to_device(data), 37, eps=1e-9)
    assert type(got).__module__.startswith("numba")
    want = reference(1, x, data, [], (37,), 1)
    assert direct.rel_err(got.copy_to_host(), want) < 2e-8


@gpu
def test_timings_and_repr():
    x, data, _ = problem(9, 1, "complex64", 1)
    plan = cu.Plan(1, 37)
    plan.setpts(dev("cupy", x[0]))
    plan.execute(dev("cupy", data))
    setpts_ms, exec_ms = plan.timings()
    assert setpts_ms > 0 and exec_ms > 0
    assert repr(plan).startswith("nudt.cuda.CudaPlan")


@gpu
def test_errors():
    x, data, _ = problem(10, 1, "complex64", 1)
    dx, dc = dev("cupy", x[0]), dev("cupy", data)
    plan = cu.Plan(1, 37)
    with pytest.raises(RuntimeError, match="setpts"):
        plan.execute(dc)
    with pytest.raises(TypeError, match="CUDA device array"):
        plan.setpts(x[0])  # a numpy array
    with pytest.raises(TypeError, match="CUDA device array"):
        plan.setpts(torch.from_numpy(x[0]))  # a CPU tensor
    with pytest.raises(TypeError, match="does not have the correct dtype: float64 was given"):
        plan.setpts(dx.astype(cupy.float64))
    with pytest.raises(ValueError, match="Plan dimension is 1, but `y` was specified"):
        plan.setpts(dx, dx)
    with pytest.raises(ValueError, match="vector"):
        plan.setpts(dx.reshape(20, 15))
    plan.setpts(dx)
    with pytest.raises(TypeError, match="complex128 was given, but complex64 was expected"):
        plan.execute(dc.astype(cupy.complex128))
    with pytest.raises(ValueError, match="shape"):
        plan.execute(dc[:-1])
    with pytest.raises(TypeError, match="Argument `out` does not have the correct dtype"):
        plan.execute(dc, out=cupy.zeros(37, cupy.complex128))
    with pytest.raises(ValueError, match="shape"):
        plan.execute(dc, out=cupy.zeros(36, cupy.complex64))
    with pytest.raises(TypeError, match="`out` does not satisfy the following requirement: C"):
        plan.execute(dc, out=cupy.zeros(74, cupy.complex64)[::2])
    with pytest.raises(TypeError, match="CUDA device array"):
        plan.execute(dc, out=np.zeros(37, np.complex64))
    same = cu.Plan(3, 1, eps=1e-5)
    same.setpts(dx, s=dx)
    with pytest.raises(ValueError, match="shares memory"):
        same.execute(dc, out=dc)
    with pytest.raises(TypeError, match="Invalid option 'nthreads'"):
        cu.Plan(1, 37, nthreads=2)
    with pytest.raises(ValueError, match="gpu_method"):
        cu.Plan(1, 37, gpu_method=4)
    with pytest.raises(ValueError, match="gpu_device_id"):
        cu.Plan(1, 37, gpu_device_id=99)
    with pytest.raises(ValueError, match="spreadinterponly"):
        cu.Plan(1, 37, gpu_spreadinterponly=1)
    with pytest.raises(TypeError, match="complex64"):
        cu.Plan(1, 37, dtype="float32")
    with pytest.raises(ValueError):
        cu.Plan(1, 37, eps=1e-12)  # beyond single precision
    with pytest.raises(ValueError, match="nufft_type"):
        cu.Plan(4, 37)
    with pytest.raises(TypeError, match="complex64 or complex128"):
        cu.nufft1d1(dx, dx, 37)
    # errors are also RuntimeError, as cufinufft raises
    with pytest.raises(RuntimeError):
        cu.Plan(1, 37, gpu_method=4)


@gpu
def test_cufinufft_error_checks():
    """The cases of cufinufft's own error tests (its tests/test_error_checks.py and
    test_array_ordering.py): the classes and phrases they match, on CuPy arrays."""
    x = dev("cupy", np.random.default_rng(1).uniform(-3, 3, (3, 8)).astype(np.float32))
    plan = cu.Plan(1, (16, 16, 16), eps=1e-3)
    with pytest.raises(TypeError, match="`y` must be of shape"):
        plan.setpts(x[0], x[1][:4])
    with pytest.raises(TypeError, match="`z` must be of shape"):
        plan.setpts(x[0], x[1], x[2][:4])
    with pytest.raises(TypeError, match="`x` must be a vector"):
        plan.setpts(cupy.asnumpy(x))  # on the host too: the shape is refused first
    with pytest.raises(TypeError, match="is 1, but `y` was specified"):
        cu.Plan(1, (16,), eps=1e-3).setpts(x[0], x[1])
    with pytest.raises(TypeError, match="is 2, but `z` was specified"):
        cu.Plan(1, (16, 16), eps=1e-3).setpts(*x)
    with pytest.raises(TypeError, match="Invalid option 'foo'"):
        cu.Plan(1, (8, 8), foo="bar")
    for dtype in ("uint8", "float32", "float64"):
        with pytest.raises(TypeError, match="Expected complex64 or complex128"):
            cu.Plan(1, (8, 8), dtype=dtype)
    for i in range(3):
        wrong = [v.astype(cupy.float64) if j == i else v for j, v in enumerate(x)]
        with pytest.raises(TypeError, match="does not have the correct dtype"):
            plan.setpts(*wrong)
    plan.setpts(*x)
    c = cupy.ones(8, cupy.complex64)
    with pytest.raises(TypeError, match="does not have the correct dtype"):
        plan.execute(c, cupy.empty((16, 16, 16), cupy.complex128))
    with pytest.raises(TypeError, match="does not have the correct dtype"):
        plan.execute(cupy.ascontiguousarray(c.real), cupy.empty((16, 16, 16), cupy.complex64))
    with pytest.raises(TypeError, match="following requirement: C"):
        plan.execute(c, out=cupy.empty((16, 16, 16), cupy.complex64, order="F"))
    with pytest.raises(TypeError, match=r"Argument `data` must be of shape"):
        plan.execute(c[:7])


@gpu
@pytest.mark.parametrize("tp", (1, 2))
def test_threads_share_one_plan(tp):
    """Eight threads execute (and execute_adjoint) one plan at once, each on its own data
    and each on its own CuPy stream: no exception, each result its own direct sum."""
    dtype, modes = "complex128", (24, 20)
    eps, bound = PRECISIONS[dtype]
    x, _, _ = problem(40 + tp, 2, dtype, tp, modes=modes)
    plan = cu.Plan(tp, modes, eps=eps, dtype=dtype)
    plan.setpts(*[dev("cupy", v) for v in x])
    data = [problem(50 + i, 2, dtype, tp, modes=modes)[1] for i in range(8)]
    want = [reference(tp, x, d, [], modes, -1 if tp == 2 else 1) for d in data]

    def work(i):
        with cupy.cuda.Stream(non_blocking=True) as s:
            d = dev("cupy", data[i])
            for _ in range(5):
                got = plan.execute(d)
                back = plan.execute_adjoint(got)
            s.synchronize()
        assert direct.rel_err(host(got), want[i]) < bound
        assert back.shape == d.shape

    in_threads(work)


@gpu
def test_setpts_while_others_execute():
    """Two threads set one of two point sets over and over while six execute: every result
    is the direct sum for one of the two sets, and no coordinate array is freed while an
    execute reads it (the sets are temporaries, held only by the plan)."""
    dtype, modes = "complex128", (24, 20)
    eps, bound = PRECISIONS[dtype]
    sets = [problem(60 + k, 2, dtype, 1, modes=modes)[0] for k in range(2)]
    data = problem(70, 2, dtype, 1, modes=modes)[1]
    want = [reference(1, x, data, [], modes, 1) for x in sets]
    plan = cu.Plan(1, modes, eps=eps, dtype=dtype)
    plan.setpts(*[dev("cupy", v) for v in sets[0]])
    d = dev("cupy", data)

    def work(i):
        if i < 2:
            for r in range(10):
                plan.setpts(*[dev("cupy", v) for v in sets[(i + r) % 2]])
                gc.collect()
            return
        for _ in range(8):
            got = host(plan.execute(d))
            errs = [direct.rel_err(got, w) for w in want]
            assert min(errs) < bound, errs

    in_threads(work)


@gpu
@pytest.mark.parametrize("lib", LIBS)
@pytest.mark.parametrize("bad", [np.nan, np.inf, -np.inf])
def test_non_finite_device_points_leave_the_context_alive(lib, bad):
    """A NaN or an infinity in device coordinates (types 1, 2 and 3) is a ValueError naming
    the point, found on the GPU; the CUDA context survives, so the same plan, a new one and
    the array library itself keep working."""
    x, data, _ = problem(11, 2, "complex128", 1)
    bx = [v.copy() for v in x]
    bx[1][123] = bad
    plan = cu.Plan(1, MODES[2], eps=1e-9, isign=-1, dtype="complex128")
    with pytest.raises(ValueError, match=r"y has a non-finite value .* at index 123"):
        plan.setpts(*[dev(lib, v) for v in bx])
    with pytest.raises(RuntimeError, match="setpts"):
        plan.execute(dev(lib, data))
    plan.setpts(*[dev(lib, v) for v in x])
    got = host(plan.execute(dev(lib, data)))
    assert direct.rel_err(got, reference(1, x, data, None, MODES[2], -1)) < 2e-8
    with pytest.raises(ValueError, match="index 123"):
        cu.nufft2d2(*[dev(lib, v) for v in bx], dev(lib, got), eps=1e-9)
    s = [np.linspace(-9.0, 9.0, 50) for _ in range(2)]
    with pytest.raises(ValueError, match="index 123"):
        cu.nufft2d3(*[dev(lib, v) for v in bx], dev(lib, data), *[dev(lib, v) for v in s])
    f = host(cu.nufft2d3(*[dev(lib, v) for v in x], dev(lib, data), *[dev(lib, v) for v in s],
                         eps=1e-9))
    assert direct.rel_err(f, reference(3, x, data, s, None, 1)) < 2e-8
    # The library's own kernels still run in this context.
    assert float(host(dev(lib, np.arange(4.0)) * 2).sum()) == 12.0


@gpu
@pytest.mark.parametrize("lib", LIBS)
@pytest.mark.parametrize("tp", (1, 2))
@pytest.mark.parametrize("dim", DIMS)
@pytest.mark.parametrize("form", ("stacked", "ragged"))
def test_a_point_set_per_transform(form, dim, tp, lib):
    """A point set per transform from device arrays: an ``(n_trans, M)`` array (used in
    place) or lists of vectors of sizes that differ (joined on the device), types 1 and 2,
    each transform against its own direct sum; results as nudt.Plan gives them (stacked
    modes, the points' values concatenated for ragged sets); the same plan then back to a
    shared set; and the CPU plan's gradients with one cotangent per point."""
    rng = np.random.default_rng(100 * tp + 10 * dim + len(form))
    counts = [60, 60, 60] if form == "stacked" else [60, 0, 45]
    modes = MODES[dim]
    pts = [[rng.uniform(-np.pi, np.pi, m) for m in counts] for _ in range(dim)]
    given = [dev(lib, np.stack(p)) if form == "stacked" else [dev(lib, v) for v in p]
             for p in pts]
    if tp == 1:
        data = [rng.standard_normal(m) + 1j * rng.standard_normal(m) for m in counts]
        stack = np.stack(data) if form == "stacked" else np.concatenate(data)
    else:
        data = [rng.standard_normal(modes) + 1j * rng.standard_normal(modes) for _ in counts]
        stack = np.stack(data)
    plan = cu.Plan(tp, modes, 3, 1e-9, dtype="complex128")
    plan.setpts(*given)
    assert plan.point_counts == counts
    got = host(plan.execute(dev(lib, stack)))
    cpu = nudt.Plan(tp, modes, 3, 1e-9)
    cpu.setpts(*pts)
    assert got.shape == cpu.execute(stack).shape
    parts = got if tp == 1 or form == "stacked" else np.split(got, np.cumsum(counts)[:-1])
    for b, m in enumerate(counts):
        x = np.stack([pts[d][b] for d in range(dim)])
        want = direct.type1(x, data[b], modes, 1) if tp == 1 else direct.type2(x, data[b], -1)
        if m == 0:
            assert not np.any(parts[b]), f"set {b} is empty"
        else:
            assert direct.rel_err(parts[b], want) < 2e-8, f"set {b}"
    # Back to one shared set on the same plan.
    x = [v[0] for v in pts]
    plan.setpts(*[dev(lib, v) for v in x])
    shared = np.stack(data) if tp == 2 else np.stack([rng.standard_normal(60) + 0j] * 3)
    want = reference(tp, x, shared, [], modes, 1 if tp == 1 else -1)
    assert direct.rel_err(host(plan.execute(dev(lib, shared))), want) < 2e-8


@gpu
@pytest.mark.parametrize("lib", LIBS)
@pytest.mark.parametrize("dim", DIMS)
@pytest.mark.parametrize("form", ("stacked", "ragged"))
def test_type3_point_sets_per_transform(form, dim, lib):
    """Type 3 with sources and targets per transform from device arrays, their extents
    different in every transform: each transform against its own direct sum, forward and
    adjoint, and the same as nudt.Plan gives."""
    rng = np.random.default_rng(40 + 10 * dim + len(form))
    counts = [50, 50, 50] if form == "stacked" else [50, 0, 31]
    targets = [40, 40, 40] if form == "stacked" else [17, 40, 0]
    src = [[rng.uniform(-1 - b, 1 + b, m) for b, m in enumerate(counts)] for _ in range(dim)]
    tgt = [[rng.uniform(-9 / (1 + b), 9 / (1 + b), k) for b, k in enumerate(targets)]
           for _ in range(dim)]
    given = [[dev(lib, np.stack(p)) if form == "stacked" else [dev(lib, v) for v in p]
              for p in pts] for pts in (src, tgt)]
    data = [rng.standard_normal(m) + 1j * rng.standard_normal(m) for m in counts]
    stack = np.stack(data) if form == "stacked" else np.concatenate(data)
    plan = cu.Plan(3, dim, 3, 1e-9, dtype="complex128")
    plan.setpts(*given[0], **dict(zip("stu", given[1])))
    assert plan.point_counts == counts
    got = host(plan.execute(dev(lib, stack)))
    cpu = nudt.Plan(3, dim, 3, 1e-9)
    cpu.setpts(*src, **dict(zip("stu", tgt)))
    assert got.shape == cpu.execute(stack).shape
    back = host(plan.execute_adjoint(dev(lib, got)))
    split = (lambda a, n: a) if form == "stacked" else \
        (lambda a, n: np.split(a, np.cumsum(n)[:-1]))
    for b in range(3):
        x = np.stack([src[d][b] for d in range(dim)])
        s = np.stack([tgt[d][b] for d in range(dim)])
        want = direct.type3(x, data[b], s, 1)
        if not counts[b]:
            assert not np.any(split(got, targets)[b]), f"set {b} has no sources"
        elif targets[b]:
            assert direct.rel_err(split(got, targets)[b], want) < 2e-8, f"set {b}"
        if counts[b] and targets[b]:
            want = direct.type3(s, split(got, targets)[b], x, -1)
            assert direct.rel_err(split(back, counts)[b], want) < 2e-8, f"adjoint, set {b}"


@gpu
@pytest.mark.skipif(cupy is None, reason="CuPy not installed")
def test_point_sets_per_transform_errors():
    """Sets whose number or sizes disagree are shape errors (ValueError); a non-finite
    coordinate names its transform, and the plan then takes good sets."""
    rng = np.random.default_rng(5)
    xs = [dev("cupy", rng.uniform(-3, 3, m)) for m in (4, 5, 6)]
    plan = cu.Plan(1, (8, 8), 3, 1e-6, dtype="complex128")
    with pytest.raises(ValueError, match="2 point sets for a plan of n_trans=3"):
        plan.setpts(xs[:2], xs[:2])
    with pytest.raises(ValueError, match="y must have the shape of x"):
        plan.setpts(xs, xs[::-1])
    bad = [v.copy() for v in xs]
    bad[2][3] = np.nan
    with pytest.raises(ValueError, match="transform 2"):
        plan.setpts(xs, bad)
    plan.setpts(xs, xs)
    out = host(plan.execute(cupy.ones(15, dtype=np.complex128)))
    # Set 1's five unit strengths sum at mode (0, 0), to the plan's tolerance.
    assert out.shape == (3, 8, 8) and abs(out[1, 4, 4] - 5) < 5e-5


def _gpu_ids():
    """Two GPUs where there are two (one plan over one GPU otherwise)."""
    return list(range(min(2, nudt._nudt.cuda_device_count())))


@gpu
@pytest.mark.parametrize("dtype", PRECISIONS)
@pytest.mark.parametrize("dim", (2, 3))
@pytest.mark.parametrize("tp", (1, 2))
@pytest.mark.parametrize("n_trans", (1, 3))
def test_several_gpus(dtype, dim, tp, n_trans):
    """``gpu_device_ids``: each transform in slabs (one transform) or whole transforms per
    GPU (three), forward and adjoint, on numpy arrays, against the direct sums."""
    eps, bound = PRECISIONS[dtype]
    x, data, _ = problem(21 + dim, dim, dtype, tp, n_trans if n_trans > 1 else None)
    modes = MODES[dim]
    plan = cu.Plan(tp, modes, n_trans, eps=eps, dtype=dtype, gpu_device_ids=_gpu_ids())
    how, link = plan.layout()
    assert (how, link is None) == (("slabs", False) if n_trans == 1 else ("transforms", True))
    plan.setpts(*x)
    got = plan.execute(data)
    want = reference(tp, x, data, [], modes, plan._isign)
    assert isinstance(got, np.ndarray) and got.shape == want.shape
    assert np.linalg.norm(got - want) <= bound * np.linalg.norm(want)
    # The adjoint of type 1 is type 2 with the opposite sign, and back.
    back = plan.execute_adjoint(got)
    want_back = reference(3 - tp, x, got, [], modes, -plan._isign)
    assert np.linalg.norm(back - want_back) <= bound * np.linalg.norm(want_back)
    out = np.empty_like(got)
    assert plan.execute(data, out=out) is out
    # The same again, to the rounding of the spreading's atomic sums (in any order).
    assert np.linalg.norm(out - got) <= bound * 1e-2 * np.linalg.norm(got)


@gpu
def test_several_gpus_errors():
    """What a plan over several GPUs refuses, with the exception a cufinufft user expects."""
    ids = _gpu_ids()
    with pytest.raises(ValueError, match="type 1 or 2"):
        cu.Plan(3, 2, gpu_device_ids=ids)
    with pytest.raises(ValueError, match="twice"):
        cu.Plan(1, (16, 16), gpu_device_ids=[0, 0])
    with pytest.raises(ValueError, match="CUDA device"):
        cu.Plan(1, (16, 16), gpu_device_ids=[0, 99])
    with pytest.raises(ValueError, match="empty"):
        cu.Plan(1, (16, 16), gpu_device_ids=[])
    with pytest.raises(TypeError, match="gpu_device_ids"):
        cu.Plan(1, (16, 16), gpu_device_ids=0)
    with pytest.raises(ValueError, match="gradients"):
        cu.Plan(1, (16, 16), gpu_device_ids=ids, gradients=True)
    plan = cu.Plan(1, (16, 16), gpu_device_ids=ids, dtype="complex128")
    x = np.linspace(-3, 3, 50)
    with pytest.raises(RuntimeError, match="setpts"):
        plan.execute(np.ones(50, np.complex128))
    plan.setpts(x, x)
    with pytest.raises(TypeError, match="x dtype|float64|complex"):
        plan.setpts(x.astype(np.float32), x.astype(np.float32))
    with pytest.raises(ValueError):
        plan.execute(np.ones(49, np.complex128))
    if cupy is not None:
        with pytest.raises(TypeError, match="host"):
            plan.setpts(cupy.asarray(x), cupy.asarray(x))
