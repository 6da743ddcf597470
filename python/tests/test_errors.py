"""Bad input raises the exception a finufft or numpy user expects, naming the problem.

Value problems raise nudt.NudtValueError, a ValueError that is also a RuntimeError (what
finufft raises); shape problems nudt.NudtShapeError, which is also a TypeError (what
cufinufft raises); dtype problems a TypeError; misuse of a plan a RuntimeError. The
comparison with finufft itself, call by call, is test_finufft_errors.py."""

import numpy as np
import pytest

import nudt
import nudt_direct as direct

M = 50


@pytest.fixture
def pts():
    rng = np.random.default_rng(0)
    return rng.uniform(-np.pi, np.pi, (3, M))


@pytest.fixture
def c():
    return np.ones(M, dtype=np.complex128)


def value_error(match):
    """Both ValueError and RuntimeError, with `match` in the message."""
    class Both:
        def __enter__(self):
            self.ctx = pytest.raises(ValueError, match=match)
            self.info = self.ctx.__enter__()
            return self.info

        def __exit__(self, *exc):
            out = self.ctx.__exit__(*exc)
            assert isinstance(self.info.value, RuntimeError)
            return out
    return Both()


def test_dtypes(pts, c):
    x = pts[0]
    with pytest.raises(TypeError, match="dtype"):
        nudt.nufft1d1(x, c.astype(np.complex64), 10)  # complex64 strengths, float64 points
    with pytest.raises(TypeError, match="x dtype should be float64 .* or float32"):
        nudt.nufft1d1(x.astype(np.int64), c, 10)
    plan = nudt.Plan(1, (10,), dtype="complex64")
    with pytest.raises(TypeError, match="float32"):
        plan.setpts(x)
    plan.setpts(x.astype(np.float32))
    with pytest.raises(TypeError, match="complex64"):
        plan.execute(c)
    with pytest.raises(TypeError, match="dtype"):
        plan.execute(c.real.astype(np.float32))
    with pytest.raises(TypeError, match="dtype"):
        nudt.Plan(1, 10, dtype="float64")


def test_out_requirements(pts, c):
    x = pts[0]
    with pytest.raises(TypeError, match="dtype"):
        nudt.nufft1d1(x, c, out=np.zeros(10, dtype=np.complex64))
    with pytest.raises(TypeError, match="requirement: C"):
        nudt.nufft1d1(x, c, out=np.zeros(20, dtype=np.complex128)[::2])
    ro = np.zeros(10, dtype=np.complex128)
    ro.flags.writeable = False
    with pytest.raises(TypeError, match="requirement: W"):
        nudt.nufft1d1(x, c, out=ro)
    with value_error("shape"):
        nudt.nufft1d1(x, c, 10, out=np.zeros(11, dtype=np.complex128))
    with value_error("shape"):
        nudt.nufft1d2(x, np.ones(10, dtype=np.complex128), out=np.zeros(M + 1, np.complex128))
    with pytest.raises(TypeError, match="numpy array"):
        nudt.nufft1d2(x, np.ones(10, dtype=np.complex128), out=[0j] * M)


def shape_error(match):
    """ValueError, TypeError and RuntimeError at once, with `match` in the message."""
    return pytest.raises(nudt.NudtShapeError, match=match)


def test_shape_errors_are_every_class_a_user_may_catch():
    for cls in (ValueError, TypeError, RuntimeError):
        assert issubclass(nudt.NudtShapeError, cls)


def test_shapes_and_sizes(pts, c):
    x, y, z = pts
    with shape_error("c.size must be divisible by x.size: c has shape"):
        nudt.nufft1d1(x, c[:-1], 10)
    with shape_error(r"c.ndim must be 2 if n_trans > 1: data has shape \(2, 3, 50\), "
                     r"expected \(6, 50\)"):
        nudt.nufft2d1(x, y, np.ones((2, 3, M), np.complex128), 10)
    with shape_error("y must have same length as x: x has 50 values, y 49"):
        nudt.nufft2d1(x, y[:-1], c, 10)
    with shape_error(r"x must be a vector, got shape \(2, 50\)"):
        nudt.nufft1d1(pts[:2], c, 10)
    with value_error("must supply n_modes or output vector"):
        nudt.nufft1d1(x, c)
    with shape_error("n_modes dimension does not match problem dimension: 3 entries"):
        nudt.nufft2d1(x, y, c, (4, 4, 4))
    with shape_error("input n_modes and output n_modes do not match"):
        nudt.nufft2d1(x, y, c, (4, 4), out=np.zeros((4, 5), np.complex128))
    with shape_error("type 2 input dimension must be either dim"):
        nudt.nufft3d2(x, y, z, np.ones((2, 2), np.complex128))
    plan = nudt.Plan(2, (6, 5), n_trans=2)
    plan.setpts(x, y)
    with shape_error(r"data has shape \(6, 5\), expected \(2, 6, 5\)"):
        plan.execute(np.ones((6, 5), np.complex128))  # 2 transforms expected
    with shape_error(r"data has shape \(2, 5, 6\)"):
        plan.execute(np.ones((2, 5, 6), np.complex128))
    with shape_error("y must be a vector: a 2-D plan takes x, y, y is missing"):
        plan.setpts(x)
    with shape_error("Plan dimension is 2, but `z` was specified"):
        plan.setpts(x, y, z)
    with shape_error("type 3"):
        plan.setpts(x, y, s=x)
    plan3 = nudt.Plan(3, 2)
    with shape_error("s must be a vector: a 2-D plan takes s, t, s is missing"):
        plan3.setpts(x, y)
    with shape_error("Plan dimension is 1, but `y` was specified"):
        nudt.Plan(1, 8).setpts(x, y)


def test_lists_are_taken(pts):
    """finufft needs numpy arrays (a list has no dtype); nudt converts lists of numbers to
    the plan's dtype, as numpy functions do."""
    x = pts[0]
    plan = nudt.Plan(1, (4,))
    plan.setpts(list(x))
    want = direct.type1(x[None], np.ones(M), (4,), 1)
    assert direct.rel_err(plan.execute([1.0] * M), want) < 1e-5


def test_non_finite_points(pts, c):
    x = pts[0].copy()
    x[7] = np.nan
    with value_error("non-finite"):
        nudt.nufft1d1(x, c, 10)
    x[7] = np.inf
    with value_error("non-finite"):
        nudt.nufft1d2(x, np.ones(10, np.complex128))
    s = np.array([1.0, -np.inf])
    with value_error("non-finite"):
        nudt.nufft1d3(pts[0], c, s)


@pytest.mark.parametrize("eps,dtype", [(1e-20, "complex128"), (1e-10, "complex64"),
                                       (0.0, "complex128"), (-1e-6, "complex128"),
                                       (float("nan"), "complex128")])
def test_impossible_tolerances(eps, dtype):
    with value_error("tolerance"):
        nudt.Plan(1, (10,), eps=eps, dtype=dtype)
    if eps > 0:
        with value_error("eps tolerance too small to achieve"):
            nudt.Plan(1, (10,), eps=eps, dtype=dtype)


def test_plan_arguments():
    with value_error("transform type invalid: nufft_type must be 1, 2 or 3, got 4"):
        nudt.Plan(4, (10,))
    with value_error("dimension"):
        nudt.Plan(3, 4)
    with value_error("n_modes dimension must be 1, 2, or 3, got 4 entries"):
        nudt.Plan(1, (4, 4, 4, 4))
    with value_error("at least 1"):
        nudt.Plan(1, (4, 0))
    with value_error("n_trans"):
        nudt.Plan(1, (4,), n_trans=0)
    with pytest.raises(TypeError, match="integer"):
        nudt.Plan(1, (4.5,))
    with pytest.raises(TypeError, match="eps"):
        nudt.Plan(1, (4,), eps="small")


def test_options():
    with pytest.raises(TypeError, match="Invalid option 'chkbnd'"):
        nudt.Plan(1, (10,), chkbnd=1)
    with pytest.raises(TypeError, match="Invalid option 'n_threads'"):
        nudt.nufft1d1(np.zeros(3), np.ones(3, np.complex128), 4, n_threads=2)
    with value_error("upsampfac"):
        nudt.Plan(1, (10,), upsampfac=2.6)
    with value_error("modeord"):
        nudt.Plan(1, (10,), modeord=2)
    with value_error("nthreads"):
        nudt.Plan(1, (10,), nthreads=-1)
    with value_error("spreadinterponly"):
        nudt.Plan(1, (10,), spreadinterponly=1)
    with pytest.raises(TypeError, match="Invalid option 'fftw_lock_fun': FFTW locks"):
        nudt.Plan(1, (10,), fftw_lock_fun=None)
    # upsampfac 1.25 needs a width past 16 at 1e-14: the planner says so
    with value_error("eps tolerance too small to achieve: tolerance 1e-14 needs"):
        nudt.Plan(1, (10,), eps=1e-14, upsampfac=1.25)



def test_type3_tolerance_out_of_reach_at_upsampfac_125():
    """A type 3 at upsampfac 1.25 refuses a tolerance it cannot reach, in finufft's words:
    complex64 at 1e-6 in 3-D (the correction amplifies rounding past it), complex128 at
    1e-9 in 3-D (the share of eps each stage and axis gets needs a width past 16; the
    message names the eps asked for). upsampfac 2 reaches both."""
    x = np.array([-1.0, 0.5, 2.0])
    s = np.array([-9.0, 3.0, 10.0])
    for eps, dtype, match in [(1e-6, "complex64", "amplifies rounding"),
                              (1e-9, "complex128", "tolerance 1e-9 needs width")]:
        real = np.float32 if dtype == "complex64" else np.float64
        xs, ss = [x.astype(real)] * 3, [s.astype(real)] * 3
        plan = nudt.Plan(3, 3, eps=eps, dtype=dtype, upsampfac=1.25)
        with value_error(f"eps tolerance too small to achieve: .*{match}"):
            plan.setpts(*xs, *ss)
        nudt.Plan(3, 3, eps=eps, dtype=dtype, upsampfac=2.0).setpts(*xs, *ss)

def test_grid_too_large_is_memory_error():
    with pytest.raises(MemoryError):
        nudt.Plan(1, (10**6, 10**6, 10**6))


def test_execute_before_setpts():
    plan = nudt.Plan(1, (10,))
    with pytest.raises(RuntimeError, match="setpts"):
        plan.execute(np.ones(5, np.complex128))
    raw = nudt._nudt.RawPlan(1, [10], 1, 1, 1e-6, False, False, 0, 0.0)
    with pytest.raises(RuntimeError, match="set_points"):
        raw.execute(np.ones(5, np.complex128), np.zeros(10, np.complex128), False)


def test_raw_plan_refuses_bad_arrays():
    """The extension checks its own boundary too: dtype, layout, overlap."""
    raw = nudt._nudt.RawPlan(2, [8], -1, 1, 1e-6, False, False, 0, 0.0)
    x = np.linspace(-3, 3, 8)
    with pytest.raises(TypeError, match="float64"):
        raw.setpts([x.astype(np.float32)], [])
    with pytest.raises(TypeError, match="numpy array"):
        raw.setpts([[0.0, 1.0]], [])
    with value_error("C-contiguous"):
        raw.setpts([np.linspace(-3, 3, 16)[::2]], [])
    raw.setpts([x], [])
    buf = np.zeros(16, np.complex128)
    for out in (buf[:8], buf[4:12]):  # the same array, an overlapping view
        with value_error("shares memory"):
            raw.execute(buf[:8], out, False)
    raw.execute(buf[:8], buf[8:], False)  # disjoint halves of one buffer are fine
    with value_error("length"):
        raw.execute(np.ones(7, np.complex128), np.zeros(8, np.complex128), False)
