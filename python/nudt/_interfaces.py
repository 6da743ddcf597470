"""finufft's Python interface (``Plan`` and ``nufft1d1`` ... ``nufft3d3``) on nudt's plans.

Names, argument order, keywords, defaults and array conventions are finufft's: modes in
user order ``(N1, N2, N3)`` with ``x`` along the first axis of a C-ordered mode array,
several transforms stacked along a leading axis, the result written into ``out`` when it is
given. Input arrays of the plan's dtype that are C-contiguous are used in place; others
(Fortran-ordered, strided) are copied. Everything here only checks and shapes; the work
runs in :class:`nudt._nudt.RawPlan`, without the GIL.
"""

import numbers
import operator

import numpy as np

from . import _nudt
from ._errors import NudtTypeError, NudtValueError

__all__ = [
    "Plan",
    "nufft1d1", "nufft1d2", "nufft1d3",
    "nufft2d1", "nufft2d2", "nufft2d3",
    "nufft3d1", "nufft3d2", "nufft3d3",
]

# finufft's option keywords that tune FINUFFT's own machinery (FFTW planning, point sorting,
# spreader threading and vectorisation, diagnostics printing). nudt's planner and generated
# spreaders make those choices themselves, so these are accepted (as integers) and have no
# effect; results do not depend on them in finufft either.
_TUNING_OPTIONS = frozenset({
    "debug", "spread_debug", "showwarn", "fftw", "spread_sort", "spread_kerevalmeth",
    "spread_kerpad", "spread_thread", "maxbatchsize", "spread_nthr_atomic",
    "spread_max_sp_size",
})
# finufft options that change what is computed; nudt has only their default.
_DEFAULT_ONLY = {"spreadinterponly": 0, "spread_kerformula": 0}
_UPSAMPFACS = (0.0, 2.0, 1.25)


def _integer(value, name):
    try:
        return operator.index(value)
    except TypeError:
        raise NudtTypeError(
            f"`{name}` must be an integer, got {type(value).__name__}") from None


def _modeord(value):
    """finufft's and cufinufft's ``modeord`` -> True for FFT order."""
    v = _integer(value, "modeord")
    if v not in (0, 1):
        raise NudtValueError(f"modeord must be 0 (centred) or 1 (FFT order), got {v}")
    return v == 1


def _upsampfac(value):
    """finufft's and cufinufft's ``upsampfac`` -> 2.0, 1.25 or 0.0 (the planner's choice)."""
    if not isinstance(value, numbers.Real):
        raise NudtTypeError(f"upsampfac must be a number, got {type(value).__name__}")
    upsampfac = float(value)
    if upsampfac not in _UPSAMPFACS:
        raise NudtValueError(
            f"upsampfac must be 2.0, 1.25 or 0 (chosen by the planner), got {value}")
    return upsampfac


def _default_only(key, value, defaults):
    """An option of which nudt has only the default value."""
    if _integer(value, key) != defaults[key]:
        raise NudtValueError(
            f"option {key}={value} is not supported by nudt (only {key}={defaults[key]})")


def _options(kwargs):
    """finufft's keyword options -> (fft_order, nthreads, upsampfac)."""
    fft_order, nthreads, upsampfac = False, 0, 0.0
    for key, value in kwargs.items():
        if key == "modeord":
            fft_order = _modeord(value)
        elif key == "nthreads":
            nthreads = _integer(value, key)
            if nthreads < 0:
                raise NudtValueError(f"nthreads must be 0 (all cores) or more, got {nthreads}")
        elif key == "upsampfac":
            upsampfac = _upsampfac(value)
        elif key in _DEFAULT_ONLY:
            _default_only(key, value, _DEFAULT_ONLY)
        elif key in _TUNING_OPTIONS:
            _integer(value, key)
        elif key in ("fftw_lock_fun", "fftw_unlock_fun", "fftw_lock_data"):
            raise NudtTypeError(f"option {key!r}: FFTW locks do not apply to nudt")
        else:
            raise NudtTypeError(f"unknown option {key!r}")
    return fft_order, nthreads, upsampfac


def _complex_dtype(dtype):
    try:
        dt = np.dtype(dtype)
    except TypeError:
        dt = None
    if dt not in (np.dtype(np.complex64), np.dtype(np.complex128)):
        raise NudtTypeError(f"dtype must be 'complex64' or 'complex128', got {dtype!r}")
    return dt


def _input(a, name, dtype):
    """`a` as a C-contiguous array of exactly `dtype`: a copy only if its layout needs one."""
    if not isinstance(a, np.ndarray):
        # A list or scalar has no dtype of its own to respect: take the plan's when it fits.
        a = np.asarray(a)
        if np.can_cast(a.dtype, dtype, "same_kind"):
            a = a.astype(dtype)
    if a.dtype != dtype:
        raise NudtTypeError(
            f"argument `{name}` has dtype {a.dtype}, but {dtype} was expected")
    return np.ascontiguousarray(a)


def _output(out, dtype):
    if not isinstance(out, np.ndarray):
        raise NudtTypeError(f"argument `out` must be a numpy array, got {type(out).__name__}")
    if out.dtype != dtype:
        raise NudtTypeError(f"argument `out` has dtype {out.dtype}, but {dtype} was expected")
    if not out.flags.c_contiguous:
        raise NudtTypeError("argument `out` must be C-contiguous")
    if not out.flags.writeable:
        raise NudtTypeError("argument `out` must be writeable")
    return out


def _stack_shape(shape, inner, n_trans, name):
    """Checks `shape` against `inner` (one transform) for `n_trans` transforms; returns the
    leading (batch) axes. One transform may come with or without a leading axis of 1."""
    k = len(inner)
    lead = tuple(shape[:len(shape) - k])
    ok = len(shape) >= k and tuple(shape[len(shape) - k:]) == tuple(inner)
    ok = ok and (lead == (n_trans,) or (n_trans == 1 and lead == ()))
    if not ok:
        want = tuple(inner) if n_trans == 1 else (n_trans, *inner)
        also = f" or {(1, *inner)}" if n_trans == 1 else ""
        raise NudtValueError(f"{name} has shape {tuple(shape)}, expected {want}{also}")
    return lead


def _attribute(name, doc=None):
    """A read-only property for the attribute ``_name``."""
    return property(operator.attrgetter("_" + name), doc=doc)


class PlanBase:
    """What finufft's ``Plan`` and cufinufft's share: argument checks, attributes, the shapes
    of data and results. A subclass says how arrays come in (``_input``, ``_output``), how
    results are allocated (``_empty_like``) and runs the transforms (``_set_points``,
    ``_execute``); the one-call functions ask it for ``_simple_dtype`` and ``_shape``.
    """

    type = _attribute("type")
    dtype = _attribute("dtype")
    dim = _attribute("dim")
    n_modes = _attribute("n_modes", "Modes per dimension, in user order (ones for type 3).")
    n_trans = _attribute("n_trans")
    isign = _attribute("isign")

    def _setup(self, nufft_type, n_modes_or_dim, n_trans, eps, isign, dtype):
        """Checks and keeps the arguments every plan takes; returns eps as a float."""
        self._dtype = _complex_dtype(dtype)
        self._real = np.dtype(np.float32 if self._dtype == np.complex64 else np.float64)

        if isinstance(n_modes_or_dim, (numbers.Integral, np.integer)):
            sizes = (operator.index(n_modes_or_dim),)
        else:
            try:
                sizes = tuple(_integer(n, "n_modes_or_dim") for n in n_modes_or_dim)
            except TypeError:
                raise NudtTypeError("n_modes_or_dim must be an integer or a tuple of "
                                    "integers") from None
        if nufft_type == 3:
            if len(sizes) != 1 or sizes[0] not in (1, 2, 3):
                raise NudtValueError(
                    f"a type 3 plan takes its dimension (1, 2 or 3), got {n_modes_or_dim!r}")
            self._dim = sizes[0]
            self._n_modes = (1,) * self._dim
        else:
            if not 1 <= len(sizes) <= 3:
                raise NudtValueError(f"n_modes must have 1, 2 or 3 entries, got {len(sizes)}")
            if any(n < 1 for n in sizes):
                raise NudtValueError(f"every mode count must be at least 1, got {sizes}")
            self._dim = len(sizes)
            self._n_modes = sizes

        n_trans = _integer(n_trans, "n_trans")
        if n_trans < 1:
            raise NudtValueError(f"n_trans must be at least 1, got {n_trans}")
        if not isinstance(eps, numbers.Real):
            raise NudtTypeError(f"eps must be a number, got {type(eps).__name__}")
        if isign is None:
            isign = -1 if nufft_type == 2 else 1
        isign = 1 if _integer(isign, "isign") >= 0 else -1

        self._type, self._n_trans, self._isign = nufft_type, n_trans, isign
        self._nj = self._nk = None
        return float(eps)

    def __repr__(self):
        return f"{self._repr_prefix}.{self._raw!r}"

    def setpts(self, x=None, y=None, z=None, s=None, t=None, u=None):
        """Sets the nonuniform points: ``x[, y[, z]]`` (M each; sources for types 1 and 3,
        targets for type 2), and for type 3 the target frequencies ``s[, t[, u]]`` (N each).
        Points are in radians, any finite value (the transform is 2pi-periodic in them).
        """
        dim = self._dim

        def vectors(arrays, names, role):
            given = [a is not None for a in arrays]
            if given != [True] * dim + [False] * (3 - dim):
                raise NudtValueError(
                    f"a {dim}-D plan takes {role} {', '.join(names[:dim])}, "
                    f"got {', '.join(n for n, g in zip(names, given) if g) or 'none'}")
            out = [self._input(a, n, self._real) for a, n in zip(arrays[:dim], names)]
            for a, n in zip(out, names):
                if a.ndim != 1:
                    raise NudtValueError(f"{n} must be a vector, got shape {a.shape}")
                if a.size != out[0].size:
                    raise NudtValueError(
                        f"{n} has {a.size} points but {names[0]} has {out[0].size}")
            return out

        src = vectors([x, y, z], "xyz", "points")
        if self._type == 3:
            tgt = vectors([s, t, u], "stu", "target frequencies")
        elif any(a is not None for a in (s, t, u)):
            raise NudtValueError("s, t, u are target frequencies of a type 3 plan only")
        else:
            tgt = []
        self._set_points(src, tgt)
        self._nj = src[0].size
        self._nk = tgt[0].size if tgt else None

    def _shapes(self, adjoint):
        """(input shape, output shape) of one transform in this direction."""
        if self._nj is None:
            raise RuntimeError("setpts must be called before execute")
        modes = self._n_modes
        a, b = {1: ((self._nj,), modes), 2: (modes, (self._nj,)),
                3: ((self._nj,), (self._nk,))}[self._type]
        return (b, a) if adjoint else (a, b)

    def execute_adjoint(self, data, out=None):
        """The adjoint transform (input shaped as ``execute``'s output, and back), with the
        opposite sign: type 1's adjoint is a type 2, type 2's a type 1, type 3's maps values
        at the targets back to the sources. It runs on the plan's own grids and sorted
        points (on the GPU, queued as ``execute`` is)."""
        return self._run(data, out, True)

    def _run(self, data, out, adjoint):
        """Checks shapes, allocates or checks ``out``, runs; returns the result array."""
        inner_in, inner_out = self._shapes(adjoint)
        data = self._input(data, "data", self._dtype)
        lead = _stack_shape(data.shape, inner_in, self._n_trans, "data")
        if out is None:
            out = self._empty_like(data, (*lead, *inner_out))
        else:
            out = self._output(out)
            _stack_shape(out.shape, inner_out, self._n_trans, "out")
        return self._execute(data, out, adjoint)


class Plan(PlanBase):
    """A NUFFT plan, as finufft's ``Plan``: make it once, ``setpts``, then ``execute`` (and
    ``execute_adjoint``) as often as needed.

    Args:
        nufft_type (int): 1 (nonuniform to uniform), 2 (uniform to nonuniform) or 3
            (nonuniform to nonuniform).
        n_modes_or_dim (int or tuple of ints): types 1 and 2: modes per dimension
            ``(N1[, N2[, N3]])``; type 3: the dimension (1, 2 or 3).
        n_trans (int): number of transforms sharing the points, stacked on a leading axis.
        eps (float): relative tolerance; one that the precision cannot reach (below about
            1e-7 in complex64, 1e-15 in complex128) raises ``ValueError``.
        isign (int): sign of the exponent, +1 if non-negative else -1; default -1 for type
            2 and +1 otherwise.
        dtype: ``'complex64'`` (single precision) or ``'complex128'``.
        **kwargs: finufft's options. ``modeord`` (0 centred, 1 FFT order), ``nthreads``
            (0: all cores), ``upsampfac`` (2.0, 1.25, or 0 for the planner's choice) act;
            the options that tune FINUFFT's internals are accepted and have no effect;
            unknown keywords raise ``TypeError``.
    """

    def __init__(self, nufft_type, n_modes_or_dim, n_trans=1, eps=1e-6, isign=None,
                 dtype="complex128", **kwargs):
        nufft_type = _integer(nufft_type, "nufft_type")
        if nufft_type not in (1, 2, 3):
            raise NudtValueError(f"nufft_type must be 1, 2 or 3, got {nufft_type}")
        fft_order, nthreads, upsampfac = _options(kwargs)
        eps = self._setup(nufft_type, n_modes_or_dim, n_trans, eps, isign, dtype)
        self._raw = _nudt.RawPlan(nufft_type, list(self._n_modes), self._isign,
                                  self._n_trans, eps, self._dtype == np.complex64,
                                  fft_order, nthreads, upsampfac)

    _repr_prefix = "nudt"
    _input = staticmethod(_input)

    def _output(self, out):
        return _output(out, self._dtype)

    def _empty_like(self, data, shape):
        return np.empty(shape, dtype=self._dtype)

    def _set_points(self, src, tgt):
        self._raw.setpts(src, tgt)

    def _execute(self, data, out, adjoint):
        self._raw.execute(data, out, adjoint)
        return out

    @staticmethod
    def _simple_dtype(x, data):
        """finufft's rule: the precision follows the points."""
        dt = x.dtype if isinstance(x, np.ndarray) else np.dtype(np.float64)
        if dt == np.float64:
            return np.dtype(np.complex128)
        if dt == np.float32:
            return np.dtype(np.complex64)
        raise NudtTypeError(f"x must be float64 or float32, got {dt}")

    _shape = staticmethod(np.shape)

    def execute(self, data, out=None):
        """Runs the transform: type 1 strengths ``(M,)`` or ``(n_trans, M)`` to modes,
        type 2 modes to values at the points, type 3 strengths to values at the targets.
        Writes into ``out`` when given (C-contiguous, the plan's dtype) and returns it."""
        return self._run(data, out, False)


def simple(plan_cls, dim, tp, pts, c, targets, f, out, n_modes, eps, isign, kwargs):
    """The one-call transforms of ``plan_cls``: finufft's rules for inferring n_trans and
    n_modes, the precision as ``plan_cls._simple_dtype`` says."""
    shape = plan_cls._shape
    dtype = plan_cls._simple_dtype(pts[0], f if tp == 2 else c)
    if tp == 2:
        fs = shape(f)
        if len(fs) not in (dim, dim + 1):
            raise NudtValueError(
                f"f must have {dim} dimensions (one transform) or {dim + 1} (n_trans "
                f"transforms), got shape {fs}")
        n_trans = fs[0] if len(fs) == dim + 1 else 1
        plan = plan_cls(2, fs[len(fs) - dim:], n_trans, eps, isign, dtype, **kwargs)
        plan.setpts(*pts)
        return plan.execute(f, out)

    xs, cs = shape(pts[0]), shape(c)
    if len(xs) != 1:
        raise NudtValueError(f"x must be a vector, got shape {xs}")
    m = xs[0]
    n_trans = cs[0] if len(cs) == 2 else 1
    if len(cs) not in (1, 2) or cs[-1] != m:
        raise NudtValueError(
            f"c has shape {cs}, expected ({m},) or (n_trans, {m}) for {m} points")
    if tp == 3:
        plan = plan_cls(3, dim, n_trans, eps, isign, dtype, **kwargs)
        plan.setpts(**dict(zip("xyz", pts)), **dict(zip("stu", targets)))
        return plan.execute(c, out)

    if n_modes is not None:
        if isinstance(n_modes, (numbers.Integral, np.integer)):
            n_modes = (operator.index(n_modes),) * dim
        else:
            n_modes = tuple(_integer(n, "n_modes") for n in n_modes)
            if len(n_modes) != dim:
                raise NudtValueError(f"n_modes must have {dim} entries, got {len(n_modes)}")
    if out is not None:
        os_ = shape(out)
        if len(os_) not in (dim, dim + 1):
            raise NudtValueError(
                f"out must have {dim} or {dim + 1} dimensions, got shape {os_}")
        from_out = tuple(os_[len(os_) - dim:])
        if n_modes is not None and n_modes != from_out:
            raise NudtValueError(f"n_modes {n_modes} does not match out's shape {os_}")
        n_modes = from_out
    if n_modes is None:
        raise NudtValueError("a type 1 transform needs n_modes or out")
    plan = plan_cls(1, n_modes, n_trans, eps, isign, dtype, **kwargs)
    plan.setpts(*pts)
    return plan.execute(c, out)


def _simple(*args):
    return simple(Plan, *args)


def nufft1d1(x, c, n_modes=None, out=None, eps=1e-6, isign=1, **kwargs):
    return _simple(1, 1, (x,), c, (), None, out, n_modes, eps, isign, kwargs)


def nufft1d2(x, f, out=None, eps=1e-6, isign=-1, **kwargs):
    return _simple(1, 2, (x,), None, (), f, out, None, eps, isign, kwargs)


def nufft1d3(x, c, s, out=None, eps=1e-6, isign=1, **kwargs):
    return _simple(1, 3, (x,), c, (s,), None, out, None, eps, isign, kwargs)


def nufft2d1(x, y, c, n_modes=None, out=None, eps=1e-6, isign=1, **kwargs):
    return _simple(2, 1, (x, y), c, (), None, out, n_modes, eps, isign, kwargs)


def nufft2d2(x, y, f, out=None, eps=1e-6, isign=-1, **kwargs):
    return _simple(2, 2, (x, y), None, (), f, out, None, eps, isign, kwargs)


def nufft2d3(x, y, c, s, t, out=None, eps=1e-6, isign=1, **kwargs):
    return _simple(2, 3, (x, y), c, (s, t), None, out, None, eps, isign, kwargs)


def nufft3d1(x, y, z, c, n_modes=None, out=None, eps=1e-6, isign=1, **kwargs):
    return _simple(3, 1, (x, y, z), c, (), None, out, n_modes, eps, isign, kwargs)


def nufft3d2(x, y, z, f, out=None, eps=1e-6, isign=-1, **kwargs):
    return _simple(3, 2, (x, y, z), None, (), f, out, None, eps, isign, kwargs)


def nufft3d3(x, y, z, c, s, t, u, out=None, eps=1e-6, isign=1, **kwargs):
    return _simple(3, 3, (x, y, z), c, (s, t, u), None, out, None, eps, isign, kwargs)


def _document():
    """Docstrings of the one-call transforms, generated from one description each."""
    pts, tgts = "xyz", "stu"
    for dim in (1, 2, 3):
        p = ", ".join(pts[:dim])
        modes = ", ".join(f"N{i + 1}" for i in range(dim))
        inner = " + ".join(f"k{i + 1} {pts[i]}[j]" for i in range(dim))
        inner3 = " + ".join(f"{tgts[i]}[k] {pts[i]}[j]" for i in range(dim))
        common = (f"    {p}: points (float64 or float32 vectors of length M, radians; the "
                  f"precision follows x).\n")
        tail = ("    out: optional C-contiguous array to write the result into.\n"
                "    eps: relative tolerance.\n"
                "    isign: sign of the exponent (+ if non-negative).\n"
                "    **kwargs: finufft's options (see Plan).\n")
        docs = {
            1: (f"{dim}-D type 1: f[{modes.replace('N', 'k')}] = sum_j c[j] exp(+-i ({inner}))"
                f" for the modes -N/2 <= k < N/2 of each dimension.\n\n{common}"
                f"    c: strengths, (M,) or (n_trans, M).\n"
                f"    n_modes: ({modes}) or one integer for all dimensions; may come from "
                f"out.\n{tail}"),
            2: (f"{dim}-D type 2: c[j] = sum_k f[k] exp(+-i ({inner})), the Fourier series "
                f"with coefficients f at the points.\n\n{common}"
                f"    f: modes, ({modes}) or (n_trans, {modes}).\n{tail}"),
            3: (f"{dim}-D type 3: f[k] = sum_j c[j] exp(+-i ({inner3})) at the target "
                f"frequencies.\n\n{common}"
                f"    c: strengths, (M,) or (n_trans, M).\n"
                f"    {', '.join(tgts[:dim])}: target frequencies (vectors of length N).\n"
                f"{tail}"),
        }
        for tp in (1, 2, 3):
            globals()[f"nufft{dim}d{tp}"].__doc__ = docs[tp]


_document()
