"""finufft's Python interface (``Plan`` and ``nufft1d1`` ... ``nufft3d3``) on nudt's plans.

Names, argument order, keywords, defaults and array conventions are finufft's: modes in
user order ``(N1, N2, N3)`` with ``x`` along the first axis of a C-ordered mode array,
several transforms stacked along a leading axis, the result written into ``out`` when it is
given. Input arrays of the plan's dtype that are C-contiguous are used in place; others
(Fortran-ordered, strided) are copied with a ``UserWarning``, as finufft does. Bad input
raises finufft's exception classes with its key phrases (see ``_errors``). Everything here
only checks and shapes; the work runs in :class:`nudt._nudt.RawPlan`, without the GIL.
"""

import collections
import numbers
import operator

import numpy as np

from . import _nudt
from ._errors import NudtShapeError, NudtTypeError, NudtValueError, warn_copy

__all__ = [
    "Cotangents",
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


def _inert_option(key, value, default_only, tuning, library):
    """An option of finufft's or cufinufft's (`library`) that changes nothing in nudt: one of
    which nudt has only the default value (`default_only`, name -> value), or one that tunes
    the library's own machinery (`tuning`), checked as an integer. Any other `key` is not an
    option of the library's."""
    if key in default_only:
        if _integer(value, key) != default_only[key]:
            raise NudtValueError(f"option {key}={value} is not supported by nudt "
                                 f"(only {key}={default_only[key]})")
    elif key in tuning:
        _integer(value, key)
    else:
        raise NudtTypeError(f"Invalid option {key!r}: not an option of {library}'s")


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
        elif key in ("fftw_lock_fun", "fftw_unlock_fun", "fftw_lock_data"):
            raise NudtTypeError(f"Invalid option {key!r}: FFTW locks do not apply to nudt")
        else:
            _inert_option(key, value, _DEFAULT_ONLY, _TUNING_OPTIONS, "finufft")
    return fft_order, nthreads, upsampfac


def _complex_dtype(dtype):
    try:
        dt = np.dtype(dtype)
    except TypeError:
        dt = None
    if dt not in (np.dtype(np.complex64), np.dtype(np.complex128)):
        raise NudtTypeError(f"Expected complex64 or complex128: the dtype (precision type) "
                            f"must be single or double, got {dtype!r}")
    return dt


def wrong_dtype(name, got, want):
    """finufft's and cufinufft's exception for an array of the wrong dtype."""
    return NudtTypeError(f"Argument `{name}` does not have the correct dtype: {got} was "
                         f"given, but {want} was expected.")


def _input(a, name, dtype):
    """`a` as a C-contiguous array of exactly `dtype`: a copy, with finufft's warning, only
    if its layout needs one."""
    if not isinstance(a, np.ndarray):
        # A list or scalar has no dtype of its own to respect: take the plan's when it fits.
        a = np.asarray(a)
        if np.can_cast(a.dtype, dtype, "same_kind"):
            a = a.astype(dtype)
    if a.dtype != dtype:
        raise wrong_dtype(name, a.dtype, dtype)
    if not a.flags.c_contiguous:
        warn_copy(name)
        a = np.ascontiguousarray(a)
    return a


def _output(out, dtype):
    """`out` as given, refused (TypeError, as finufft) unless it is a writeable C-contiguous
    numpy array of `dtype`: the result is written in place, so it cannot be a copy."""
    if not isinstance(out, np.ndarray):
        raise NudtTypeError(f"Argument `out` must be a numpy array, got {type(out).__name__}")
    if out.dtype != dtype:
        raise wrong_dtype("out", out.dtype, dtype)
    for flag, ok in (("C", out.flags.c_contiguous), ("W", out.flags.writeable)):
        if not ok:
            raise NudtTypeError(
                f"Argument `out` does not satisfy the following requirement: {flag}")
    return out


def _shape_of(a):
    """The shape of an array or nested sequence, without copying an array."""
    return tuple(a.shape) if hasattr(a, "shape") else np.shape(a)


def _ndim(a):
    """The number of axes of an array or nested sequence (0 for a scalar)."""
    return len(_shape_of(a))


def stack_lead(shape, inner, n_trans):
    """The leading (batch) axes of `shape` if it is `inner` (one transform) stacked for
    `n_trans` transforms, else None. One transform may come with or without a leading axis
    of 1."""
    k = len(inner)
    lead = tuple(shape[:len(shape) - k])
    ok = len(shape) >= k and tuple(shape[len(shape) - k:]) == tuple(inner)
    if ok and (lead == (n_trans,) or (n_trans == 1 and lead == ())):
        return lead
    return None


def stack_want(inner, n_trans):
    """The shapes `stack_lead` accepts, in words."""
    if n_trans == 1:
        return f"{tuple(inner)} or {(1, *inner)}"
    return f"{(n_trans, *inner)}"


def _finufft_phrase(shape, inner, n_trans, kind):
    """Which of finufft's shape rules `shape` breaks, in finufft's words (its users' tests
    match them): `kind` "modes" for mode arrays (`inner` the mode counts), else vectors of
    values at points ("c") or type 3's results at the targets ("f")."""
    nd, one, letter = len(shape), n_trans == 1, kind
    if kind == "modes":
        d = len(inner)
        if one and nd not in (d, d + 1):
            return ("f.ndim must be same as the problem dimension or the problem dimension "
                    "+ 1 for type 1 or 2 if n_trans == 1")
        if one and nd == d + 1 and shape[0] != 1:
            return ("f.shape[0] must be 1 for type 1 or 2 if n_trans == 1 and len(f.shape) "
                    "== dim+1")
        if not one and nd != d + 1:
            return ("f.ndim must be same as the problem dimension + 1 for type 1 or 2 if "
                    "n_trans > 1")
        if not one and shape[0] != n_trans:
            return "f.shape[0] must be n_trans for type 1 or 2 if n_trans > 1"
        return "f.shape is not consistent with n_modes"
    t3 = " for type 3" if letter == "f" else ""
    if nd not in ((1, 2) if one else (2,)):
        return f"{letter}.ndim must be {'1 or 2' if one else '2'}{t3} if n_trans " \
            f"{'== 1' if one else '> 1'}"
    if letter == "c":
        return ("c.size must be same as x.size if n_trans == 1" if one
                else "c.shape must be (n_trans, x.size) if n_trans > 1")
    # "size of must": finufft's wording, which its tests match.
    return "f.size of must be nk if n_trans == 1" if one else \
        "f.shape must be (n_trans, nk) if n_trans > 1"


def check_type(nufft_type):
    """`nufft_type` as 1, 2 or 3."""
    nufft_type = _integer(nufft_type, "nufft_type")
    if nufft_type not in (1, 2, 3):
        raise NudtValueError(
            f"transform type invalid: nufft_type must be 1, 2 or 3, got {nufft_type}")
    return nufft_type


Cotangents = collections.namedtuple("Cotangents", "data points targets")
Cotangents.__doc__ = """What ``Plan.vjp`` returns: the cotangents of the input (``data``, shaped
as it), of the points (``points``: one array per dimension, the sources' for type 3) and of
type 3's target frequencies (``targets``); ``None`` for what was not asked for (``wrt``)."""

_WRT = ("data", "points", "targets")


def _boolean(value, name):
    if not isinstance(value, (bool, np.bool_)):
        raise NudtTypeError(f"`{name}` must be True or False, got {type(value).__name__}")
    return bool(value)


def _attribute(name, doc=None):
    """A read-only property for the attribute ``_name``."""
    return property(operator.attrgetter("_" + name), doc=doc)


class PlanBase:
    """What finufft's ``Plan`` and cufinufft's share: argument checks, attributes, the shapes
    of data and results. A subclass says how arrays come in (``_check_dtype``, which returns
    the array as the later steps take it, so that a device array is read once; ``_input``,
    ``_output``), how results are allocated (``_empty_like``), words shape errors as its
    model library does (``_POINTS_MESSAGES``, ``_stack_message``) and runs the transforms
    (``_set_points``, ``_execute``); the one-call functions ask it for ``_simple_dtype`` and
    ``_shape``.
    """

    type = _attribute("type")
    dtype = _attribute("dtype")
    dim = _attribute("dim")
    n_modes = _attribute("n_modes", "Modes per dimension, in user order (ones for type 3).")
    n_trans = _attribute("n_trans")
    isign = _attribute("isign")
    gradients = _attribute("gradients", "Whether the plan was made for ``vjp`` and ``jvp``.")

    def _setup(self, nufft_type, n_modes_or_dim, n_trans, eps, isign, dtype, gradients):
        """Checks and keeps the arguments every plan takes; returns eps as a float."""
        self._gradients = _boolean(gradients, "gradients")
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
                    f"type 3 plan n_modes_or_dim must be one number, the dimension (1, 2 or "
                    f"3), got {n_modes_or_dim!r}")
            self._dim = sizes[0]
            self._n_modes = (1,) * self._dim
        else:
            if not 1 <= len(sizes) <= 3:
                raise NudtValueError(
                    f"n_modes dimension must be 1, 2, or 3, got {len(sizes)} entries")
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
        self._sets = None
        return float(eps)

    def __repr__(self):
        return f"{self._repr_prefix}.{self._raw!r}"

    def setpts(self, x=None, y=None, z=None, s=None, t=None, u=None):
        """Sets the nonuniform points: ``x[, y[, z]]`` (M each; sources for types 1 and 3,
        targets for type 2), and for type 3 the target frequencies ``s[, t[, u]]`` (N each).
        Points are in radians, any finite value (the transform is 2pi-periodic in them).

        A point set per transform (nudt's own, for ``n_trans`` > 1): each coordinate of
        shape ``(n_trans, M)`` (sets of one size), or a list of ``n_trans`` vectors (sizes
        that may differ, 0 included). Execute's arrays at the points are then ``(n_trans,
        M)`` for sets of one size; for sizes that differ, the 1-D concatenation of the
        transforms' (``point_counts`` has the sizes), and the mode arrays ``(n_trans,
        *n_modes)``.
        """
        per = self._per_transform((x, y, z), "xyz")
        if per is not None:
            src, counts, form = per
            tgt, tcounts = [], None
            if self._type == 3:
                per_t = self._per_transform((s, t, u), "stu")
                if per_t is None:
                    raise NudtShapeError("s, t, u: with a point set per transform, the target "
                                         "frequencies come per transform too")
                tgt, tcounts, _ = per_t
            elif any(a is not None for a in (s, t, u)):
                raise NudtShapeError("s, t, u are the target frequencies of a type 3 plan only")
            self._set_points(src, tgt, counts, tcounts)
            self._sets = (form, counts, tcounts)
            ragged = form == "concatenated"
            self._nj = sum(counts) if ragged else counts[0]
            self._nk = None if tcounts is None else (sum(tcounts) if ragged else tcounts[0])
            return
        src = self._point_set((x, y, z), "xyz")
        if self._type == 3:
            tgt = self._point_set((s, t, u), "stu")
        elif any(a is not None for a in (s, t, u)):
            raise NudtShapeError("s, t, u are the target frequencies of a type 3 plan only")
        else:
            tgt = []
        self._set_points(src, tgt)
        self._sets = None
        self._nj = src[0].shape[0]
        self._nk = tgt[0].shape[0] if tgt else None

    @property
    def point_counts(self):
        """Per transform, the number of points (type 3: sources), once ``setpts`` ran:
        ``n_trans`` equal counts where the transforms share their points."""
        if self._nj is None:
            return None
        if self._sets is None:
            return [self._nj] * self._n_trans
        return list(self._sets[1])

    def _per_transform(self, arrays, names):
        """For a point set per transform, ``(vectors, counts, form)``: each dimension's sets
        concatenated into one C-contiguous vector of the plan's real dtype, each transform's
        size, and ``"stacked"`` (sets of one size, stacked inputs) or ``"concatenated"``
        (sizes that differ); None where ``arrays`` hold one set that every transform shares."""
        first, n_trans = arrays[0], self._n_trans
        listed = (isinstance(first, (list, tuple)) and len(first) > 0
                  and all(_ndim(e) == 1 for e in first))
        stacked = (not listed and _ndim(first) == 2 and n_trans > 1
                   and _shape_of(first)[0] == n_trans)
        if not (listed or stacked):
            return None
        if self._type not in self._PER_TRANSFORM_TYPES:
            raise NudtValueError(
                f"{names[0]}: a point set per transform runs on one device (nudt.Plan, "
                f"nudt.cuda.Plan) in this build; this plan takes one set that its "
                f"transforms share")
        dim, real = self._dim, self._real
        for a, n in zip(arrays[dim:], names[dim:]):
            if a is not None:
                raise NudtShapeError(f"Plan dimension is {dim}, but `{n}` was specified")
        if listed and len(first) != n_trans:
            raise NudtShapeError(f"{names[0]}: {len(first)} point sets for a plan of "
                                 f"n_trans={n_trans} (one set per transform)")
        counts = [len(e) for e in first] if listed else [_shape_of(first)[1]] * n_trans
        vectors = []
        for a, n in zip(arrays[:dim], names):
            if a is None:
                raise NudtShapeError(f"{n} must be given: a {dim}-D plan takes "
                                     f"{', '.join(names[:dim])}")
            parts = list(a) if listed and isinstance(a, (list, tuple)) else None
            sizes = [_shape_of(e)[0] if _ndim(e) == 1 else None for e in parts] \
                if parts is not None else None
            if (sizes != counts) if listed else (_shape_of(a) != (n_trans, counts[0])):
                want = f"{n_trans} vectors of sizes {counts}" if listed \
                    else f"shape {(n_trans, counts[0])}"
                raise NudtShapeError(f"{n} must have the shape of {names[0]}: {want}")
            for e in (parts if listed else [a]):
                self._check_dtype(e, n, real)
            vectors.append(self._concatenate(parts, n) if listed else self._flatten(a, n))
        form = "stacked" if len(set(counts)) == 1 else "concatenated"
        return vectors, counts, form

    def _point_set(self, arrays, names):
        """One set of coordinates (points x, y, z or type 3 targets s, t, u) as the plan
        takes them, checked as finufft and cufinufft check them — dtypes first, then one
        vector per dimension, all of one length — before any is copied or moved."""
        dim, real = self._dim, self._real
        arrays = [None if a is None else self._check_dtype(a, n, real)
                  for a, n in zip(arrays, names)]
        for a, n in zip(arrays[dim:], names[dim:]):
            if a is not None:
                raise NudtShapeError(f"Plan dimension is {dim}, but `{n}` was specified")
        wanted = ", ".join(names[:dim])
        for a, n in zip(arrays[:dim], names):
            shape = None if a is None else tuple(np.shape(a))
            fields = dict(n=n, dim=dim, names=wanted, shape=shape, first=names[0])
            if shape is None:
                raise NudtShapeError(self._POINTS_MESSAGES["missing"].format(**fields))
            if len(shape) != 1:
                raise NudtShapeError(self._POINTS_MESSAGES["vector"].format(**fields))
            if n == names[0]:
                m = shape[0]
            elif shape[0] != m:
                raise NudtShapeError(
                    self._POINTS_MESSAGES["length"].format(m=m, size=shape[0], **fields))
        return [self._input(a, n, real) for a, n in zip(arrays[:dim], names)]

    def _shapes(self, adjoint):
        """(one transform's shape, kind) of the input and of the output in this direction;
        the kind is the finufft rule a misfit breaks: "modes", "c" (M or N values per
        transform) or "f" (type 3's N results per transform)."""
        if self._nj is None:
            raise RuntimeError("setpts must be called before execute")
        # Sets of sizes that differ: one array for the whole stack on either side.
        modes = (self._n_trans, *self._n_modes) if self._concatenated() else self._n_modes
        pts, modes = ((self._nj,), "c"), (modes, "modes")
        if self._type == 3:
            a, b = pts, ((self._nk,), "c" if adjoint else "f")
        else:
            a, b = (pts, modes) if self._type == 1 else (modes, pts)
        return (b, a) if adjoint else (a, b)

    def _concatenated(self):
        """Whether the transforms have point sets of sizes that differ: execute's arrays are
        then the whole stack's, at the points concatenated."""
        return self._sets is not None and self._sets[0] == "concatenated"

    def _lead(self, shape, inner, kind, name):
        """The batch axes of `name`, shaped `shape`: `inner` stacked n_trans times (or
        holding the whole stack, for point sets of sizes that differ)."""
        lead = stack_lead(shape, inner, 1 if self._concatenated() else self._n_trans)
        if lead is None:
            raise NudtShapeError(self._stack_message(tuple(shape), inner, kind, name))
        return lead

    def execute_adjoint(self, data, out=None):
        """The adjoint transform (input shaped as ``execute``'s output, and back), with the
        opposite sign: type 1's adjoint is a type 2, type 2's a type 1, type 3's maps values
        at the targets back to the sources. It runs on the plan's own grids and sorted
        points (on the GPU, queued as ``execute`` is)."""
        return self._run(data, out, True)

    def _run(self, data, out, adjoint):
        """Checks dtypes, ``out`` and shapes (in finufft's order), then copies ``data`` if
        its layout needs it, allocates ``out`` if not given, runs; returns the result."""
        (inner_in, kind_in), (inner_out, kind_out) = self._shapes(adjoint)
        data = self._check_dtype(data, "data", self._dtype)
        if out is not None:
            out = self._output(out)
        lead = self._lead(_shape_of(data), inner_in, kind_in, "data")
        if out is not None:
            self._lead(out.shape, inner_out, kind_out, "out")
        data = self._input(data, "data", self._dtype)
        if out is None:
            out = self._empty_like(data, (*lead, *inner_out))
        return self._execute(data, out, adjoint)


    def vjp(self, data, cotangent, wrt=None):
        """Reverse mode (the vector-Jacobian product a backward pass needs) of ``execute`` at
        input ``data``, for the cotangent ``cotangent`` of its output (shaped as ``execute``'s
        result): the cotangents of the input, of the points (sources for type 3) and, for
        type 3, of the target frequencies, as a :data:`Cotangents` ``(data, points,
        targets)``.

        Conventions are PyTorch's: the cotangent of complex values ``y`` is ``dL/dRe y + i
        dL/dIm y`` for a real loss ``L``, so the input's cotangent is ``execute_adjoint`` of
        ``cotangent``, and a coordinate's is ``sum Re(conj(cotangent) * dy/dx)``; points shared
        by ``n_trans`` transforms get the sum over them. ``wrt`` names what to compute, some
        of ``"data"``, ``"points"``, ``"targets"`` (default: all the plan's type has); the
        others are ``None``. Needs a plan made with ``gradients=True``; types 1 and 2 take one
        pass with the kernel's derivative, type 3 ``2 dim + 1`` transforms. A ``nudt.cuda``
        plan runs on the device arrays and returns new ones of ``data``'s library, queued on
        the streams as ``execute`` is.
        """
        wrt = self._wrt(wrt)
        data, cotangent, lead = self._derivative_inputs(data, cotangent, "cotangent", True)
        got = self._vjp(data, cotangent, wrt)
        d_data, points, targets = got
        if d_data is not None:
            d_data = d_data.reshape(*lead, *self._shapes(False)[0][0])
        points = tuple(self._as_given(a, 1) for a in points)
        targets = tuple(self._as_given(a, 2) for a in targets)
        return Cotangents(d_data, points if "points" in wrt else None,
                          targets if "targets" in wrt else None)

    def _as_given(self, a, which):
        """A cotangent of points (`which` 1) or targets (2), one vector over the stack, shaped
        as the sets were given: ``(n_trans, M)`` stacked, or split into a list."""
        if self._sets is None:
            return a
        form, counts = self._sets[0], self._sets[which]
        if form == "stacked":
            return a.reshape(self._n_trans, -1)
        ends = np.cumsum(counts).tolist()
        return [a[e - n:e] for e, n in zip(ends, counts)]

    def jvp(self, data, d_data=None, d_points=None, d_targets=None, out=None):
        """Forward mode (the Jacobian-vector product) of ``execute`` at input ``data``: the
        change of its output for a change ``d_data`` of the input (shaped as ``data``),
        ``d_points`` of the points (one array per dimension, the sources' for type 3) and,
        for type 3, ``d_targets`` of the target frequencies; ``None`` for what does not
        change. Returns it shaped as ``execute``'s result (in ``out`` when given). Needs a
        plan made with ``gradients=True``.
        """
        if d_data is not None:
            data, d_data, lead = self._derivative_inputs(data, d_data, "d_data", False)
        else:
            data, _, lead = self._derivative_inputs(data, None, None, False)
        src = self._tangent_set(d_points, "xyz", self._nj, "d_points")
        tgt = None
        if d_targets is not None:
            if self._type != 3:
                raise NudtShapeError("d_targets: only a type 3 plan has target frequencies")
            tgt = self._tangent_set(d_targets, "stu", self._nk, "d_targets")
        inner_out, kind_out = self._shapes(False)[1]
        if out is not None:
            out = self._output(out)
            self._lead(out.shape, inner_out, kind_out, "out")
        else:
            out = self._empty_like(data, (*lead, *inner_out))
        return self._jvp(data, d_data, src, tgt, out)

    def _wrt(self, wrt):
        """``wrt`` as a set of names, checked against the plan's type."""
        names = _WRT if self._type == 3 else _WRT[:2]
        if wrt is None:
            return set(names)
        if isinstance(wrt, str):
            wrt = (wrt,)
        wrt = set(wrt)
        bad = wrt - set(names)
        if bad:
            raise NudtValueError(f"wrt: {sorted(bad)} not among {list(names)} (type "
                                 f"{self._type})")
        return wrt

    def _derivative_inputs(self, data, other, name, output):
        """``data`` (shaped as ``execute``'s input) and ``other`` (as its output if `output`,
        else as its input; None for none) as the raw plan takes them, checked as ``execute``
        checks (one transform with or without a leading axis of 1); with ``data``'s batch
        axes."""
        if not self._gradients:
            raise NudtValueError("vjp and jvp need a plan made with gradients=True (its "
                                 "kernel then meets eps/10, so that the derivatives meet eps)")
        (inner_in, kind_in), (inner_out, kind_out) = self._shapes(False)
        data = self._check_dtype(data, "data", self._dtype)
        lead = self._lead(np.shape(data), inner_in, kind_in, "data")
        if other is not None:
            other = self._check_dtype(other, name, self._dtype)
            inner, kind = (inner_out, kind_out) if output else (inner_in, kind_in)
            self._lead(np.shape(other), inner, kind, name)
            other = self._input(other, name, self._dtype)
        return self._input(data, "data", self._dtype), other, lead

    def _tangent_set(self, arrays, names, n, what):
        """A tangent of a point set (one array of n per dimension; with a set per
        transform, shaped as the sets were given), or None."""
        if arrays is None:
            return None
        arrays = list(arrays) if isinstance(arrays, (list, tuple)) else [arrays]
        if self._sets is not None:
            per = self._per_transform((*arrays, None, None)[:3], [f"d_{c}" for c in names])
            which = 1 if names[0] == "x" else 2
            if per is None or per[1] != list(self._sets[which]):
                raise NudtShapeError(f"{what}: shaped as the point sets per transform "
                                     f"(sizes {list(self._sets[which])}) in each dimension")
            return per[0]
        if len(arrays) != self._dim:
            raise NudtShapeError(f"{what}: {len(arrays)} arrays for a {self._dim}-D plan "
                                 f"(one per dimension: {', '.join(names[:self._dim])})")
        out = []
        for a, letter in zip(arrays, names):
            name = f"d_{letter}"
            a = self._check_dtype(a, name, self._real)
            if tuple(np.shape(a)) != (n,):
                raise NudtShapeError(f"{name} must be of shape ({n},), got {np.shape(a)}")
            out.append(self._input(a, name, self._real))
        return out


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
            unknown keywords raise ``TypeError``. nudt's own ``gradients`` (default False)
            plans for ``vjp`` and ``jvp`` (derivatives with respect to the input and the
            points): the kernel then meets ``eps/10``, so that the point derivatives meet
            ``eps``, and a type 3 plan keeps a copy of its points.
    """

    def __init__(self, nufft_type, n_modes_or_dim, n_trans=1, eps=1e-6, isign=None,
                 dtype="complex128", **kwargs):
        nufft_type = check_type(nufft_type)
        # A keyword of nudt's own, among finufft's options so the signature stays finufft's.
        gradients = kwargs.pop("gradients", False)
        fft_order, nthreads, upsampfac = _options(kwargs)
        eps = self._setup(nufft_type, n_modes_or_dim, n_trans, eps, isign, dtype, gradients)
        self._raw = _nudt.RawPlan(nufft_type, list(self._n_modes), self._isign,
                                  self._n_trans, eps, self._dtype == np.complex64,
                                  fft_order, nthreads, upsampfac, self._gradients)

    _repr_prefix = "nudt"
    # finufft's words (its users' tests match "x must be a vector", "y must have same
    # length as x").
    _POINTS_MESSAGES = {
        "missing": "{n} must be a vector: a {dim}-D plan takes {names}, {n} is missing",
        "vector": "{n} must be a vector, got shape {shape}",
        "length": "{n} must have same length as {first}: {first} has {m} values, {n} {size}",
    }

    @staticmethod
    def _check_dtype(a, name, dtype):
        """Refuses a numpy array of another dtype; lists are converted by ``_input``."""
        if isinstance(a, np.ndarray) and a.dtype != dtype:
            raise wrong_dtype(name, a.dtype, dtype)
        return a

    _input = staticmethod(_input)

    def _stack_message(self, shape, inner, kind, name):
        return (f"{_finufft_phrase(shape, inner, self._n_trans, kind)}: {name} has shape "
                f"{shape}, expected {stack_want(inner, self._n_trans)}")

    def _output(self, out):
        return _output(out, self._dtype)

    def _empty_like(self, data, shape):
        return np.empty(shape, dtype=self._dtype)

    _PER_TRANSFORM_TYPES = (1, 2, 3)

    def _concatenate(self, parts, name):
        """Vectors `parts` (one per transform) as one C-contiguous vector of the plan's real
        dtype."""
        real = self._real
        cat = np.concatenate([_input(e, name, real) for e in parts]) if parts \
            else np.empty(0, real)
        return np.ascontiguousarray(cat, dtype=real)

    def _flatten(self, a, name):
        """An ``(n_trans, M)`` array of sets as one vector of the plan's real dtype."""
        return self._input(a, name, self._real).reshape(-1)

    def _set_points(self, src, tgt, counts=None, target_counts=None):
        self._raw.setpts(src, tgt, counts, target_counts)

    def _execute(self, data, out, adjoint):
        self._raw.execute(data, out, adjoint)
        return out

    def _vjp(self, data, cotangent, wrt):
        return self._raw.vjp(data, cotangent, *(w in wrt for w in _WRT))

    def _jvp(self, data, d_data, d_points, d_targets, out):
        self._raw.jvp(data, d_data, d_points, d_targets, out)
        return out

    @staticmethod
    def _simple_dtype(x, data):
        """finufft's rule: the precision follows the points."""
        dt = x.dtype if isinstance(x, np.ndarray) else np.dtype(np.float64)
        if dt == np.float64:
            return np.dtype(np.complex128)
        if dt == np.float32:
            return np.dtype(np.complex64)
        raise NudtTypeError(f"x dtype should be float64 for double precision or float32 "
                            f"for single precision, got {dt}")

    _shape = staticmethod(np.shape)

    def execute(self, data, out=None):
        """Runs the transform: type 1 strengths ``(M,)`` or ``(n_trans, M)`` to modes,
        type 2 modes to values at the points, type 3 strengths to values at the targets.
        Writes into ``out`` when given (C-contiguous, the plan's dtype) and returns it."""
        return self._run(data, out, False)


def _n_modes(n_modes, dim):
    """The one-call transforms' ``n_modes`` (an integer for every dimension, or one per
    dimension) as a tuple, refused in finufft's words."""
    if isinstance(n_modes, numbers.Integral):
        return (operator.index(n_modes),) * dim
    if isinstance(n_modes, str) or not hasattr(n_modes, "__iter__"):
        raise NudtTypeError(f"input n_modes must be a tuple or an integer, got "
                            f"{type(n_modes).__name__}")
    n_modes = tuple(n_modes)
    if len(n_modes) != dim:
        raise NudtShapeError(f"input n_modes dimension does not match problem dimension: "
                             f"{len(n_modes)} entries for a {dim}-D transform")
    if not all(isinstance(n, numbers.Integral) for n in n_modes):
        raise NudtTypeError(f"all elements of input n_modes must be integer, got {n_modes}")
    return tuple(operator.index(n) for n in n_modes)


def simple(plan_cls, dim, tp, pts, c, targets, f, out, n_modes, eps, isign, kwargs):
    """The one-call transforms of ``plan_cls``: finufft's rules for inferring n_trans and
    n_modes, and its words when they fail; the precision as ``plan_cls._simple_dtype``
    says."""
    shape = plan_cls._shape
    dtype = plan_cls._simple_dtype(pts[0], f if tp == 2 else c)
    modes_ndim = ("type 1 output dimension or type 2 input dimension must be either dim "
                  "(n_trans==1) or dim+1 (n_trans>=1)")
    if tp == 2:
        fs = shape(f)
        if len(fs) not in (dim, dim + 1):
            raise NudtShapeError(f"{modes_ndim}: f has shape {fs} for a {dim}-D transform")
        n_trans = fs[0] if len(fs) == dim + 1 else 1
        plan = plan_cls(2, fs[len(fs) - dim:], n_trans, eps, isign, dtype, **kwargs)
        plan.setpts(*pts)
        return plan.execute(f, out)

    xs, cs = shape(pts[0]), shape(c)
    if len(xs) != 1:
        raise NudtShapeError(f"x must be a vector, got shape {xs}")
    m, size = xs[0], int(np.prod(cs))
    if m and size % m:
        raise NudtShapeError(f"c.size must be divisible by x.size: c has shape {cs} for {m} "
                             f"points")
    # The plan's execute says in finufft's words what else is wrong with c's shape.
    n_trans = size // m if m else (cs[0] if len(cs) == 2 else 1)
    if tp == 3:
        plan = plan_cls(3, dim, n_trans, eps, isign, dtype, **kwargs)
        plan.setpts(**dict(zip("xyz", pts)), **dict(zip("stu", targets)))
        return plan.execute(c, out)

    if n_modes is not None:
        n_modes = _n_modes(n_modes, dim)
    if out is not None:
        os_ = shape(out)
        if len(os_) not in (dim, dim + 1):
            raise NudtShapeError(f"{modes_ndim}: out has shape {os_} for a {dim}-D transform")
        if (os_[0] if len(os_) == dim + 1 else 1) != n_trans:
            raise NudtShapeError(f"input n_trans and output n_trans do not match: c has shape "
                                 f"{cs}, out {os_}")
        from_out = tuple(os_[len(os_) - dim:])
        if n_modes is not None and n_modes != from_out:
            raise NudtShapeError(f"input n_modes and output n_modes do not match: {n_modes} "
                                 f"and out's shape {os_}")
        n_modes = from_out
    if n_modes is None:
        raise NudtValueError("type 1 input must supply n_modes or output vector (out), or both")
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
