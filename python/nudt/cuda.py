"""cufinufft's Python interface on nudt's CUDA backend: ``import nudt.cuda as cufinufft``.

``Plan`` (``setpts``, ``execute``) and the one-call transforms ``nufft1d1`` ... ``nufft3d3``
take cufinufft's arguments, keywords and defaults (``dtype='complex64'``), on device arrays
of any library that offers ``__cuda_array_interface__``: CuPy, PyTorch (CUDA tensors),
Numba. Results are allocated by the library of the input (CuPy in, CuPy out; a tensor in, a
tensor out on its device) or written into ``out``. Inputs of the plan's dtype that are
C-contiguous are used in place; others are copied with a ``UserWarning`` if they are CuPy or
PyTorch arrays and refused with ``TypeError`` otherwise (Numba), as cufinufft does. Bad
input raises cufinufft's exception classes with its key phrases (see ``_errors``).

Calls return once the work is queued. The plan's stream first waits for the streams the
arrays name in their interface (and ``gpu_stream``), and those streams then wait for the
plan: work the caller queues afterwards on the same streams sees the results, without the
host waiting. Points must be finite: as in cufinufft, they are not checked on the device.

A plan made with ``gradients=True`` gives ``vjp`` and ``jvp`` as ``nudt.Plan``'s, on device
arrays; for now they copy the arrays to the host and run the plan's host interface (which
waits for the work), until the GPU backend has kernels of the kernel's derivative.

Importing this module raises ImportError, with the reason, when the package was built
without the ``cuda`` feature or when no CUDA driver, device, NVRTC or cuFFT is found.
"""

import functools
import math
import types

import numpy as np

from . import _interfaces as _cpu
from . import _nudt
from ._errors import NudtTypeError, NudtValueError, warn_copy
from ._interfaces import (
    PlanBase, _inert_option, _integer, _modeord, _upsampfac, check_type, simple,
    stack_want, wrong_dtype,
)

if not hasattr(_nudt, "RawCudaPlan"):
    raise ImportError(
        "nudt.cuda: this nudt package was built without its `cuda` feature; reinstall "
        "with it: pip install ./python (the default) or maturin build --features cuda")
try:
    _DEVICES = _nudt.cuda_device_count()
except RuntimeError as e:
    raise ImportError(f"nudt.cuda: no usable GPU: {e}") from e

__all__ = [
    "Plan",
    "nufft1d1", "nufft1d2", "nufft1d3",
    "nufft2d1", "nufft2d2", "nufft2d3",
    "nufft3d1", "nufft3d2", "nufft3d3",
]

# cufinufft's options that tune cuFINUFFT's own machinery (kernel evaluation, sort, output
# bins, subproblem size, diagnostics). nudt's generated kernels make those choices
# themselves, so these are accepted (as integers) and have no effect; results do not depend
# on them in cufinufft either.
_TUNING_OPTIONS = frozenset({
    "gpu_sort", "gpu_kerevalmeth", "gpu_maxsubprobsize", "gpu_obinsizex", "gpu_obinsizey",
    "gpu_obinsizez", "gpu_np", "debug",
})
# cufinufft options that change what is computed; nudt has only their default.
_DEFAULT_ONLY = {"gpu_spreadinterponly": 0}
_BINS = ("gpu_binsizex", "gpu_binsizey", "gpu_binsizez")


def _stream_handle(stream):
    """``gpu_stream`` as a handle: an integer, a CuPy stream (``.ptr``), a PyTorch stream
    (``.cuda_stream``) or a Numba stream (``.handle``)."""
    for attr in ("ptr", "cuda_stream"):
        if hasattr(stream, attr):
            stream = getattr(stream, attr)
            break
    else:
        handle = getattr(stream, "handle", None)
        if handle is not None:
            stream = getattr(handle, "value", handle)
    if stream is None:
        return None
    try:
        return _integer(stream, "gpu_stream")
    except TypeError:
        raise NudtTypeError("gpu_stream must be a stream handle (int) or a CuPy, PyTorch "
                            f"or Numba stream, got {type(stream).__name__}") from None


def _gpu_options(kwargs):
    """cufinufft's keyword options -> (fft_order, upsampfac, device, method, max_batch,
    bins, stream)."""
    fft_order, upsampfac, device, method, max_batch, stream = False, 0.0, 0, 0, 0, None
    bins = [0, 0, 0]
    for key, value in kwargs.items():
        if key == "modeord":
            fft_order = _modeord(value)
        elif key == "upsampfac":
            upsampfac = _upsampfac(value)
        elif key == "gpu_method":
            method = _integer(value, key)
            if method not in (0, 1, 2, 3):
                raise NudtValueError(
                    f"gpu_method must be 0 (chosen per point set), 1 (GM-sort), 2 (SM) or "
                    f"3 (output-driven), got {method}")
        elif key == "gpu_device_id":
            device = _integer(value, key)
            if not 0 <= device < _DEVICES:
                raise NudtValueError(
                    f"gpu_device_id {device}: there are {_DEVICES} CUDA device(s)")
        elif key == "gpu_maxbatchsize":
            max_batch = _integer(value, key)
            if max_batch < 0:
                raise NudtValueError(f"gpu_maxbatchsize must be 0 (default) or more, "
                                     f"got {max_batch}")
        elif key in _BINS:
            side = _integer(value, key)
            if side < 0:
                raise NudtValueError(f"{key} must be 0 (default) or more, got {side}")
            bins[_BINS.index(key)] = side
        elif key == "gpu_stream":
            stream = _stream_handle(value)
        else:
            _inert_option(key, value, _DEFAULT_ONLY, _TUNING_OPTIONS, "cufinufft")
    return fft_order, upsampfac, device, method, max_batch, bins, stream


def _library(obj):
    """The array library an object comes from, by its type's module."""
    kind = type(obj)
    lib = _LIBRARIES.get(kind)
    if lib is None:
        lib = _LIBRARIES[kind] = kind.__module__.split(".")[0]
    return lib


# `_library`'s answers by type: asked several times per call, of a handful of types.
_LIBRARIES = {}


class _DeviceArray:
    """A device array as its ``__cuda_array_interface__`` describes it, with the object that
    owns it (kept alive for the call) and its library. The interface is read once per
    argument and call (it is a property that builds a new dict each time: PyTorch's runs
    Python code): ``_described`` checks the dtype, ``_device_array`` the layout, and fills
    in ``raw`` and ``stream`` for the extension."""

    __slots__ = ("obj", "lib", "cai", "shape", "dtype", "raw", "stream")

    def __init__(self, obj, lib, cai, shape, dtype):
        self.obj, self.lib, self.cai, self.shape, self.dtype = obj, lib, cai, shape, dtype
        self.raw = self.stream = None


def _interface(a, name):
    """(``a``, its library, its ``__cuda_array_interface__``); TypeError for host arrays and
    other objects."""
    lib = _library(a)
    if lib == "torch" and getattr(a, "requires_grad", False):
        a = a.detach()  # the same memory; a tensor that needs grad hides its interface
    try:
        return a, lib, a.__cuda_array_interface__
    except AttributeError:
        raise NudtTypeError(
            f"Argument `{name}` must be a CUDA device array (CuPy, PyTorch on a CUDA "
            f"device, Numba: an object with __cuda_array_interface__), got "
            f"{type(a).__module__}.{type(a).__name__}") from None


def _described(a, name, dtype):
    """``a`` read through its interface, refused unless of exactly ``dtype``."""
    if _library(a) == "torch":
        tensor = _tensor_described(a, name, dtype)
        if tensor is not None:
            return tensor
    a, lib, cai = _interface(a, name)
    typestr = cai["typestr"]
    # The interface's typestr is numpy's `dtype.str` in CuPy, PyTorch and Numba: a string
    # compare spares parsing it on every call.
    got = dtype if typestr == dtype.str else np.dtype(typestr)
    if got != dtype:
        raise wrong_dtype(name, got, dtype)
    return _DeviceArray(a, lib, cai, tuple(map(int, cai["shape"])), got)


def _tensor_described(a, name, dtype):
    """A CUDA tensor of PyTorch's own class and of a dtype nudt knows, read from its
    attributes: what its ``__cuda_array_interface__`` says (a property of Python code that
    checks a dozen attributes and builds two dicts per call), in a few calls. None for the
    other tensors (subclasses, on the host, sparse, other dtypes), which the interface
    describes or refuses."""
    torch = _torch()
    if not isinstance(a, torch.Tensor):
        return None
    if a.requires_grad:
        a = a.detach()  # the same memory; a tensor that needs grad hides its interface
    got = torch.dtypes.get(a.dtype)
    if got is None or type(a) is not torch.Tensor or not a.is_cuda or a.is_sparse:
        return None
    if got != dtype:
        raise wrong_dtype(name, got, dtype)
    strides = None if a.is_contiguous() else tuple(n * got.itemsize for n in a.stride())
    cai = {"data": (a.data_ptr() if a.numel() else 0, False), "strides": strides}
    return _DeviceArray(a, "torch", cai, tuple(a.shape), got)


@functools.cache
def _torch():
    """What the tensors' fast paths need of PyTorch, looked up once: its ``Tensor`` class,
    its dtypes nudt takes as numpy's, and its current stream of a device index as a handle
    (PyTorch's interface names no stream: its kernels run on the current one).
    ``torch.cuda.current_stream`` builds a ``Stream`` object under a device guard, tens of
    microseconds a call; the raw handle that PyTorch's compiler reads
    (``torch._C._cuda_getCurrentRawStream``) is the same number without them, where this
    PyTorch has it."""
    import torch
    stream = getattr(torch._C, "_cuda_getCurrentRawStream", None)
    if stream is None:
        def stream(index):
            return torch.cuda.current_stream(index).cuda_stream
    dtypes = {getattr(torch, n): np.dtype(n)
              for n in ("float32", "float64", "complex64", "complex128")}
    return types.SimpleNamespace(Tensor=torch.Tensor, dtypes=dtypes, stream=stream)


def _c_contiguous(shape, strides, itemsize):
    expected = itemsize
    for n, st in zip(reversed(shape), reversed(strides)):
        if n != 1 and st != expected:
            return False
        expected *= n
    return True


def _contiguous_copy(a, lib, name):
    """A C-contiguous copy of input `a`, with cufinufft's warning, for the libraries that
    copy on the device themselves (CuPy, PyTorch); cufinufft's TypeError for the others
    (Numba, whose arrays copy only through a kernel of the user's)."""
    if lib not in ("torch", "cupy"):
        raise NudtTypeError(
            f"Argument `{name}` does not satisfy the following requirement: C (nudt copies "
            f"CuPy and PyTorch arrays, not {type(a).__module__}.{type(a).__name__}: pass a "
            f"C-contiguous one)")
    warn_copy(name)
    if lib == "torch":
        return a.contiguous()
    import cupy
    with cupy.cuda.Device(a.device.id):
        return cupy.ascontiguousarray(a)


def _device_array(a, name, dtype, writes=False):
    """``a`` (an array, or one ``_described`` already) as a C-contiguous device array of
    exactly ``dtype``, ready for the extension: a copy only if its layout needs one (never
    for an output)."""
    if not isinstance(a, _DeviceArray):
        a = _described(a, name, dtype)
    cai = a.cai
    if cai.get("mask") is not None:
        raise NudtTypeError(f"Argument `{name}`: masked arrays are not supported")
    ptr, readonly = cai["data"]
    if writes and readonly:
        raise NudtTypeError(f"Argument `{name}` does not satisfy the following requirement: W")
    strides = cai.get("strides")
    if strides is not None and not _c_contiguous(a.shape, strides, a.dtype.itemsize):
        if writes:
            # The result is written in place: a copy would not be the caller's array.
            raise NudtTypeError(
                f"Argument `{name}` does not satisfy the following requirement: C")
        return _device_array(_contiguous_copy(a.obj, a.lib, name), name, dtype)
    stream = cai.get("stream")
    if stream is None and a.lib == "torch":
        stream = _torch().stream(a.obj.get_device())
    a.stream = stream
    a.raw = (int(ptr or 0), math.prod(a.shape) * (2 if a.dtype.kind == "c" else 1))
    return a


def _empty_like(like, shape, dtype):
    """A new device array of ``like``'s library, on its device."""
    lib = _library(like)
    if lib == "torch":
        import torch
        tdtype = {np.dtype(np.complex64): torch.complex64, np.dtype(np.complex128):
                  torch.complex128, np.dtype(np.float32): torch.float32,
                  np.dtype(np.float64): torch.float64}[np.dtype(dtype)]
        return torch.empty(shape, dtype=tdtype, device=like.device)
    if lib == "cupy":
        import cupy
        with cupy.cuda.Device(like.device.id):
            return cupy.empty(shape, dtype=dtype)
    if lib in ("numba", "numba_cuda"):  # numba_cuda: NVIDIA's package behind numba.cuda
        from numba import cuda
        return cuda.device_array(shape, dtype=dtype)
    raise NudtTypeError(
        f"nudt.cuda allocates results as CuPy, PyTorch or Numba arrays; for a "
        f"{type(like).__module__}.{type(like).__name__} input pass `out`")


class Plan(PlanBase):
    """A NUFFT plan on the GPU, as cufinufft's ``Plan``: make it once, ``setpts``, then
    ``execute`` as often as needed.

    Args:
        nufft_type (int): 1 (nonuniform to uniform), 2 (uniform to nonuniform) or 3
            (nonuniform to nonuniform).
        n_modes (int or tuple of ints): types 1 and 2: modes per dimension
            ``(N1[, N2[, N3]])``; type 3: the dimension (1, 2 or 3).
        n_trans (int): number of transforms sharing the points, stacked on a leading axis.
        eps (float): relative tolerance; one the precision cannot reach raises ValueError.
        isign (int): sign of the exponent; default -1 for type 2 and +1 otherwise.
        dtype: ``'complex64'`` (the default, as cufinufft's) or ``'complex128'``.
        **kwargs: cufinufft's options. ``modeord`` (0 centred, 1 FFT order), ``upsampfac``
            (2.0, 1.25, 0 for the default), ``gpu_method`` (0 chosen per point set, 1
            GM-sort, 2 SM, 3 output-driven), ``gpu_binsizex/y/z`` (bin sides, 0 default),
            ``gpu_maxbatchsize`` (transforms per batch, 0 default), ``gpu_device_id`` and
            ``gpu_stream`` (a stream to order the work with) act; the options that tune
            cuFINUFFT's internals (``gpu_sort``, ``gpu_kerevalmeth``,
            ``gpu_maxsubprobsize``, ...) are accepted and have no effect; unknown keywords
            raise ``TypeError``. nudt's own ``gradients`` (default False) plans for ``vjp``
            and ``jvp``, as ``nudt.Plan``'s; a type 3 plan then keeps a host copy of its
            points (``setpts`` waits for it).
    """

    _repr_prefix = "nudt.cuda"
    # cufinufft's words (its tests match "`x` must be a vector", "`y` must be of shape").
    _POINTS_MESSAGES = {
        "missing": "Argument `{n}` is missing: a {dim}-D plan takes {names}",
        "vector": "Argument `{n}` must be a vector, got shape {shape}",
        "length": "Argument `{n}` must be of shape ({m},), got ({size},)",
    }

    def __new__(cls, *args, gpu_device_ids=None, **kwargs):
        # Several GPUs: a plan of its own kind, on host arrays (``_MultiGpuPlan``).
        if gpu_device_ids is not None:
            return _MultiGpuPlan(*args, gpu_device_ids=gpu_device_ids, **kwargs)
        return super().__new__(cls)

    def __init__(self, nufft_type, n_modes, n_trans=1, eps=1e-6, isign=None,
                 dtype="complex64", **kwargs):
        nufft_type = check_type(nufft_type)
        kwargs.pop("gpu_device_ids", None)  # None here: ``__new__`` took the others
        gradients = kwargs.pop("gradients", False)  # nudt's own, as nudt.Plan's
        fft_order, upsampfac, device, method, max_batch, bins, self._stream = \
            _gpu_options(kwargs)
        eps = self._setup(nufft_type, n_modes, n_trans, eps, isign, dtype, gradients)
        if any(bins):
            if not all(bins[:self._dim]):
                raise NudtValueError(f"give gpu_binsize for all {self._dim} dimensions")
            bins = bins[:self._dim]
        else:
            bins = []
        self._raw = _nudt.RawCudaPlan(nufft_type, list(self._n_modes), self._isign,
                                      self._n_trans, eps, self._dtype == np.complex64,
                                      fft_order, upsampfac, device, method, max_batch, bins,
                                      self._gradients)
        self._accepted = {}

    def _streams(self, arrays):
        """The distinct streams of the arrays' owners and the plan's ``gpu_stream``."""
        handles = {a.stream for a in arrays}
        handles.add(self._stream)
        handles.discard(None)
        return sorted(handles)

    @staticmethod
    def _check_dtype(a, name, dtype):
        """Refuses a device array, or a numpy array (refused later for being on the host,
        after the shape checks, as cufinufft orders them), of another dtype; returns a
        device array ``_described``, for ``_input`` to use without reading it again."""
        if isinstance(a, np.ndarray):
            if a.dtype != dtype:
                raise wrong_dtype(name, a.dtype, dtype)
            return a
        return a if isinstance(a, _DeviceArray) else _described(a, name, dtype)

    @staticmethod
    def _input(a, name, dtype):
        return _device_array(a, name, dtype)

    def _stack_message(self, shape, inner, kind, name):
        return f"Argument `{name}` must be of shape {stack_want(inner, self._n_trans)}, " \
            f"got {shape}"

    def _output(self, out):
        return _device_array(out, "out", self._dtype, writes=True)

    def _empty_like(self, data, shape):
        return _device_array(_empty_like(data.obj, shape, self._dtype), "out", self._dtype,
                             writes=True)

    _PER_TRANSFORM_TYPES = (1, 2, 3)

    def _concatenate(self, parts, name):
        """Device vectors `parts` joined on the device by their own library (CuPy, PyTorch);
        Numba has no such call: its sets come as one ``(n_trans, M)`` array."""
        arrays = [_device_array(e, name, self._real).obj for e in parts]
        lib = _library(arrays[0])
        if lib == "torch":
            import torch
            return _device_array(torch.cat(arrays), name, self._real)
        if lib == "cupy":
            import cupy
            with cupy.cuda.Device(arrays[0].device.id):
                return _device_array(cupy.concatenate(arrays), name, self._real)
        raise NudtTypeError(
            f"Argument `{name}`: point sets of sizes that differ are joined by CuPy or "
            f"PyTorch, not {type(arrays[0]).__module__}.{type(arrays[0]).__name__}: pass "
            f"sets of one size as one (n_trans, M) array")

    def _flatten(self, a, name):
        # A C-contiguous (n_trans, M) array is its sets one after another already.
        return _device_array(a, name, self._real)

    def _set_points(self, src, tgt, counts=None, target_counts=None):
        # A new dict, not cleared: an execute of the old points that finishes meanwhile (on
        # another thread) records its shapes in the dict it read.
        self._accepted = {}
        # Types 1 and 2 read the coordinates at every execute (the sort keeps only their
        # order), so the plan holds the arrays until the next setpts, as cufinufft's does;
        # type 3 rescales copies (and for gradients keeps device copies of both sets).
        self._raw.setpts([a.raw for a in src], [a.raw for a in tgt],
                         self._streams(src + tgt), src if self._type != 3 else None, counts,
                         target_counts)

    def _run(self, data, out, adjoint):
        """``PlanBase._run`` (every check, in cufinufft's order), once per shape of the
        arguments and direction since the last ``setpts``; later calls of a shape it
        accepted skip the shape rules, which depend on nothing else. Each array is still
        read once per call, its dtype and layout checked (in the same order, so any error
        is the same) and the result allocated where ``out`` is not given."""
        data = self._check_dtype(data, "data", self._dtype)
        if out is not None:
            out = _described(out, "out", self._dtype)
        if not isinstance(data, _DeviceArray):  # a host array: refused after the shapes
            return super()._run(data, out, adjoint)
        key = (adjoint, data.shape, None if out is None else out.shape)
        accepted = self._accepted
        shape = accepted.get(key)
        if shape is None:
            result = super()._run(data, out, adjoint)
            accepted[key] = tuple(result.shape)
            return result
        if out is not None:
            out = self._output(out)
        data = self._input(data, "data", self._dtype)
        if out is None:
            out = self._empty_like(data, shape)
        return self._execute(data, out, adjoint)

    def _execute(self, data, out, adjoint):
        self._raw.execute(data.raw, out.raw, self._streams([data, out]), adjoint)
        return out.obj

    def _vjp(self, data, cotangent, wrt):
        """The cotangents on the device, in new arrays of ``data``'s library: the input's
        (shaped as ``data``'s flat stack) and one vector per dimension for the points' (one
        value a point, or a point of each set) and type 3's targets'."""
        like = data.obj
        d_data = None
        if "data" in wrt:
            d_data = _device_array(_empty_like(like, data.shape, self._dtype), "d_data",
                                   self._dtype, writes=True)
        reals = lambda n, k: [  # noqa: E731
            _device_array(_empty_like(like, (n,), self._real), name, self._real, writes=True)
            for name in k[:self._dim]]
        points = reals(self._total(1), ("d_x", "d_y", "d_z")) if "points" in wrt else []
        targets = reals(self._total(2), ("d_s", "d_t", "d_u")) if "targets" in wrt else []
        arrays = [data, cotangent, *points, *targets] + ([d_data] if d_data else [])
        self._raw.vjp(data.raw, cotangent.raw, None if d_data is None else d_data.raw,
                      [a.raw for a in points], [a.raw for a in targets], self._streams(arrays))
        return (None if d_data is None else d_data.obj, [a.obj for a in points],
                [a.obj for a in targets])

    def _total(self, which):
        """The number of values the cotangents of the points (`which` 1: type 3's sources)
        or type 3's targets (2) hold: the shared set's, or every set's."""
        if self._sets is None:
            return self._nj if which == 1 else self._nk
        return sum(self._sets[which])

    def _jvp(self, data, d_data, d_points, d_targets, out):
        given = [a for a in (data, d_data, *(d_points or ()), *(d_targets or ()), out)
                 if a is not None]
        self._raw.jvp(data.raw, None if d_data is None else d_data.raw,
                      None if d_points is None else [a.raw for a in d_points],
                      None if d_targets is None else [a.raw for a in d_targets],
                      out.raw, self._streams(given))
        return out.obj

    @staticmethod
    def _simple_dtype(x, data):
        """cufinufft's rule: the precision follows the data."""
        dtype = np.dtype(_interface(data, "data")[2]["typestr"])
        if dtype not in (np.complex64, np.complex128):
            raise NudtTypeError(f"data must be complex64 or complex128, got {dtype}")
        return dtype

    @staticmethod
    def _shape(a):
        return tuple(int(n) for n in _interface(a, "argument")[2]["shape"])

    def setpts(self, x, y=None, z=None, s=None, t=None, u=None):
        """Sets the nonuniform points (device arrays of the plan's real dtype): ``x[, y[,
        z]]`` (M each; sources for types 1 and 3, targets for type 2), and for type 3 the
        target frequencies ``s[, t[, u]]``. Types 1 and 2 sort the points' order only and
        read the coordinates at every execute: the plan keeps a reference to ``x[, y[, z]]``
        until the next ``setpts``, and they must not be written meanwhile (as in
        cufinufft: the kernels trust the sort, and a moved point would be spread outside
        its bin's box in shared memory); call ``setpts`` again after changing them.
        Type 3 rescales copies of both sets."""
        super().setpts(x, y, z, s, t, u)

    def execute(self, data, out=None):
        """Queues the transform: type 1 strengths ``(M,)`` or ``(n_trans, M)`` to modes,
        type 2 modes to values at the points, type 3 strengths to values at the targets.
        Writes into ``out`` when given (C-contiguous, the plan's dtype) and returns it,
        else returns a new array of the input's library."""
        return self._run(data, out, False)

    def timings(self):
        """GPU milliseconds of the last ``setpts`` and ``execute`` (CUDA events); waits for
        them to finish."""
        return self._raw.timings()


class _MultiGpuPlan(_cpu.Plan):
    """A type 1 or 2 plan over several GPUs of this process: ``nudt.cuda.Plan(nufft_type,
    n_modes, ..., gpu_device_ids=[0, 1, ...])``. With as many transforms as GPUs or more,
    each GPU takes whole transforms; otherwise each transform (2-D or 3-D) is cut in slabs
    of its fine grid, one per GPU, which exchange halos and a transpose through NCCL where
    the library is found (through the host otherwise). The result equals the one-GPU plan's
    to rounding.

    It takes numpy arrays, as ``nudt.Plan`` does (C-contiguous inputs are used in place,
    others copied with a warning; ``out`` must be a writeable C-contiguous array): each GPU
    takes a contiguous share of them as it is, all at the same time, and the GPUs route the
    points among themselves. Device arrays raise ``TypeError``. The options are ``nudt.cuda.Plan``'s;
    those that choose for one GPU (``gpu_method``, bins, batch, ``gpu_device_id``,
    ``gpu_stream``) are accepted and not used. Types 1 and 2, one point set shared by the
    transforms, no derivatives. ``layout()`` says how it runs: ``("slabs", link)`` or
    ``("transforms", None)``.
    """

    _repr_prefix = "nudt.cuda"
    _POINTS_MESSAGES = Plan._POINTS_MESSAGES
    _PER_TRANSFORM_TYPES = ()

    def __init__(self, nufft_type, n_modes, n_trans=1, eps=1e-6, isign=None,
                 dtype="complex64", gpu_device_ids=None, **kwargs):
        nufft_type = check_type(nufft_type)
        if nufft_type == 3:
            raise NudtValueError("a plan over several GPUs (gpu_device_ids) is of type 1 or "
                                 "2; type 3 runs on one GPU")
        devices = _device_ids(gpu_device_ids)
        if kwargs.pop("gradients", False):
            raise NudtValueError("gradients=True: derivatives run on one GPU; a plan over "
                                 "several GPUs (gpu_device_ids) has none")
        fft_order, upsampfac = _gpu_options(kwargs)[:2]
        eps = self._setup(nufft_type, n_modes, n_trans, eps, isign, dtype, False)
        self._raw = _nudt.RawCudaMultiPlan(nufft_type, list(self._n_modes), self._isign,
                                           self._n_trans, eps, self._dtype == np.complex64,
                                           fft_order, upsampfac, devices)

    @staticmethod
    def _host(a, name):
        if hasattr(a, "__cuda_array_interface__"):
            raise NudtTypeError(
                f"Argument `{name}`: a plan over several GPUs (gpu_device_ids) takes host "
                f"(numpy) arrays and shares them out to the GPUs itself; copy it "
                f"first (CuPy: .get(), PyTorch: .cpu().numpy())")
        return a

    @classmethod
    def _check_dtype(cls, a, name, dtype):
        return _cpu.Plan._check_dtype(cls._host(a, name), name, dtype)

    @classmethod
    def _input(cls, a, name, dtype):
        return _cpu._input(cls._host(a, name), name, dtype)

    def _set_points(self, src, tgt, counts=None, target_counts=None):
        self._raw.setpts(src)

    def layout(self):
        """``("slabs", link)``: each transform cut over the GPUs, ``link`` ``"nccl"`` or
        ``"host"``; ``("transforms", None)``: whole transforms on each GPU."""
        return self._raw.layout()


def _device_ids(ids):
    """``gpu_device_ids`` as a list of distinct CUDA ordinals."""
    try:
        devices = [_integer(d, "gpu_device_ids") for d in ids]
    except TypeError:
        raise NudtTypeError(f"gpu_device_ids must be a list of CUDA device ordinals, got "
                            f"{type(ids).__name__}") from None
    if not devices:
        raise NudtValueError("gpu_device_ids is empty")
    if len(set(devices)) != len(devices):
        raise NudtValueError(f"gpu_device_ids lists a GPU twice: {devices}")
    bad = [d for d in devices if not 0 <= d < _DEVICES]
    if bad:
        raise NudtValueError(f"gpu_device_ids {bad}: there are {_DEVICES} CUDA device(s)")
    return devices


def nufft1d1(x, data, n_modes=None, out=None, eps=1e-6, isign=1, **kwargs):
    return simple(Plan, 1, 1, (x,), data, (), None, out, n_modes, eps, isign, kwargs)


def nufft1d2(x, data, out=None, eps=1e-6, isign=-1, **kwargs):
    return simple(Plan, 1, 2, (x,), None, (), data, out, None, eps, isign, kwargs)


def nufft1d3(x, data, s, out=None, eps=1e-6, isign=1, **kwargs):
    return simple(Plan, 1, 3, (x,), data, (s,), None, out, None, eps, isign, kwargs)


def nufft2d1(x, y, data, n_modes=None, out=None, eps=1e-6, isign=1, **kwargs):
    return simple(Plan, 2, 1, (x, y), data, (), None, out, n_modes, eps, isign, kwargs)


def nufft2d2(x, y, data, out=None, eps=1e-6, isign=-1, **kwargs):
    return simple(Plan, 2, 2, (x, y), None, (), data, out, None, eps, isign, kwargs)


def nufft2d3(x, y, data, s, t, out=None, eps=1e-6, isign=1, **kwargs):
    return simple(Plan, 2, 3, (x, y), data, (s, t), None, out, None, eps, isign, kwargs)


def nufft3d1(x, y, z, data, n_modes=None, out=None, eps=1e-6, isign=1, **kwargs):
    return simple(Plan, 3, 1, (x, y, z), data, (), None, out, n_modes, eps, isign, kwargs)


def nufft3d2(x, y, z, data, out=None, eps=1e-6, isign=-1, **kwargs):
    return simple(Plan, 3, 2, (x, y, z), None, (), data, out, None, eps, isign, kwargs)


def nufft3d3(x, y, z, data, s, t, u, out=None, eps=1e-6, isign=1, **kwargs):
    return simple(Plan, 3, 3, (x, y, z), data, (s, t, u), None, out, None, eps, isign,
                  kwargs)


def _document():
    """The one-call transforms' docstrings: the CPU functions', on device arrays."""
    note = ("\n    All arrays are device arrays (CuPy, PyTorch, Numba); the result is an "
            "array of\n    data's library, or out.\n")
    for dim in (1, 2, 3):
        for tp in (1, 2, 3):
            name = f"nufft{dim}d{tp}"
            doc = getattr(_cpu, name).__doc__.replace(" c: ", " data: ").replace(
                " f: ", " data: ").replace("the precision follows x", "the precision "
                                           "follows data, complex64 or complex128")
            globals()[name].__doc__ = doc + note


_document()
