"""nudt's transforms as differentiable PyTorch functions: ``nudt.torch.nufft1d1`` ...
``nufft3d3``.

Named and called as finufft's one-call transforms (``nufft2d1(x, y, c, n_modes, eps=1e-6,
isign=None, **kwargs)``), on tensors, without ``out``: the points ``x[, y[, z]]`` are 1-D
real tensors of one length M, float32 or float64; the values are complex tensors of the
matching precision (complex64 or complex128): strengths ``c`` of shape ``(*batch, M)``
(types 1 and 3) or modes ``f`` of shape ``(*batch, N1[, N2[, N3]])`` (type 2). Leading
batch axes stack transforms that share the points (finufft's ``n_trans``); the result has
them too. Points of shape ``(B, M)`` (and type 3's targets ``(B, N)``) give each of ``B``
transforms its own set, in one plan: the values then have exactly one leading axis of ``B``,
and the points' gradients are per point. Type 3 takes its target frequencies ``s[, t[, u]]`` (1-D, one length N) after
``c``. ``isign`` defaults to -1 for type 2 and +1 for types 1 and 3, as finufft's; ``kwargs``
are the plan's options (finufft's on the CPU: ``modeord``, ``nthreads``, ``upsampfac``...;
cufinufft's on the GPU).

Every tensor argument is differentiable: values, points and type 3's targets, in reverse mode
(``backward``, ``torch.autograd.grad``) and forward mode (``torch.func.jvp``,
``torch.autograd.forward_ad``). Gradients follow PyTorch's convention for complex tensors
(the adjoint transform of the output's gradient for the values); the points' gradients are
summed over the batch (per point, for a set per transform). The backward pass makes its
own plan with ``gradients=True`` (the
kernel meets ``eps/10``, so the point gradients meet ``eps``) rather than keep the forward's,
whose fine grid would otherwise stay allocated until the backward runs.

CPU tensors run on ``nudt.Plan``, CUDA tensors on ``nudt.cuda.Plan``, derivatives included
(on the device: nothing goes to the host). Under ``torch.compile`` the transforms are opaque custom operators
(``torch.ops.nudt.nufft`` and ``torch.ops.nudt.nufft_vjp``), so a compiled model keeps one
graph around them; forward mode is not available there (PyTorch's custom operators have no
forward-mode rule, and torch.compile refuses an autograd.Function's own). Eager calls run the
same operators (and ``nudt.nufft_jvp``) under an autograd.Function, which gives forward mode.
``torch.func.vmap`` (and so ``jacrev``, ``jacfwd``) runs the operators once per batch element.
Second derivatives are not available (the backward is not itself differentiable).

Importing this module raises ImportError where PyTorch 2.4 or newer is not installed.
"""

import ast
import math
import numbers
from typing import List, Optional  # PyTorch reads the operators' annotations

import numpy as np

try:
    import torch
except ImportError as e:
    raise ImportError("nudt.torch needs PyTorch (2.4 or newer): pip install torch") from e
if not hasattr(torch.library, "custom_op"):
    raise ImportError(f"nudt.torch needs PyTorch 2.4 or newer (torch.library.custom_op); "
                      f"this is {torch.__version__}")

from ._errors import NudtShapeError, NudtTypeError, NudtValueError  # noqa: E402
from ._interfaces import Plan, _n_modes  # noqa: E402

__all__ = [
    "nufft1d1", "nufft1d2", "nufft1d3",
    "nufft2d1", "nufft2d2", "nufft2d3",
    "nufft3d1", "nufft3d2", "nufft3d3",
]

_COMPLEX = {torch.float32: torch.complex64, torch.float64: torch.complex128}
_WRT = ("data", "points", "targets")
# Keywords of the one-call numpy functions that have no meaning on tensors, or that
# nudt.torch sets itself.
_NOT_OPTIONS = {
    "out": "nudt.torch returns new tensors (autograd needs them): `out` is not supported",
    "gradients": "nudt.torch plans its backward pass with gradients=True itself",
    "dtype": "the precision follows the tensors' dtypes",
    "n_trans": "the number of transforms is the product of the batch axes",
}


# -- What one call computes: the transform's parameters, fixed for its forward and backward.

def _spec(nufft_type, n_modes, eps, isign, options):
    """The parameters the operators take, as one tuple."""
    return nufft_type, tuple(n_modes), eps, isign, options


def _out_shape(spec, points, targets, data):
    """The shape of the (batch-flattened) output."""
    nufft_type, n_modes = spec[0], spec[1]
    if nufft_type == 1:
        return (data.shape[0], *n_modes)
    if nufft_type == 2:
        return (data.shape[0], points[0].shape[-1])
    return (data.shape[0], targets[0].shape[-1])


def _cuda():
    """``nudt.cuda``, or why CUDA tensors cannot run here."""
    try:
        from . import cuda
    except ImportError as e:
        raise RuntimeError(f"nudt.torch: CUDA tensors run on nudt.cuda, which does not import "
                           f"here: {e}") from e
    return cuda


def _plan(spec, data, n_trans, gradients):
    """A plan for `spec` on `data`'s device and in its precision."""
    nufft_type, n_modes, eps, isign, options = spec
    kwargs = dict(ast.literal_eval(options))
    dtype = "complex64" if data.dtype == torch.complex64 else "complex128"
    modes = len(n_modes) if nufft_type == 3 else n_modes
    if data.device.type == "cuda":
        index = data.device.index or 0
        if kwargs.setdefault("gpu_device_id", index) != index:
            raise NudtValueError(f"gpu_device_id={kwargs['gpu_device_id']}, but the tensors "
                                 f"are on {data.device}")
        cls = _cuda().Plan
    else:
        cls = Plan
    return cls(nufft_type, modes, n_trans, eps, isign, dtype, gradients=gradients, **kwargs)


def _arg(t):
    """A tensor as the plan takes it: a numpy array sharing its memory (CPU) or the tensor
    itself (CUDA), C-contiguous, without autograd or lazy conjugation."""
    t = t.detach().resolve_conj().resolve_neg().contiguous()
    return t if t.device.type == "cuda" else t.numpy()


def _tensor(a, like):
    """A plan's result as a tensor on `like`'s device."""
    return a if isinstance(a, torch.Tensor) else torch.from_numpy(np.asarray(a)).to(like.device)


def _as_set(t):
    """A coordinate tensor as the plan takes it: ``(B, M)`` for a point set per transform,
    where one transform's ``(1, M)`` is its one set."""
    return _arg(t[0] if t.ndim == 2 and t.shape[0] == 1 else t)


def _set_points(plan, points, targets):
    plan.setpts(*map(_as_set, points), **dict(zip("stu", map(_as_set, targets))))


def _forward(spec, points, targets, data):
    """The transform of `data` (`(n_trans, ...)`) at the points."""
    if data.shape[0] == 0:
        return data.new_zeros(_out_shape(spec, points, targets, data))
    plan = _plan(spec, data, data.shape[0], gradients=False)
    _set_points(plan, points, targets)
    return _tensor(plan.execute(_arg(data)), data)


def _vjp(spec, points, targets, data, cotangent, wrt):
    """The cotangents `(data's, [points'], [targets'])` for those `wrt` (three flags, in
    `_WRT`'s order) asks for, None for the others."""
    n_trans = data.shape[0]
    names = [n for n, w in zip(_WRT, wrt) if w]
    if n_trans == 0 or not names:
        zeros = [torch.zeros_like(a) if w else None
                 for a, w in ((data, wrt[0]), *((p, wrt[1]) for p in points),
                              *((t, wrt[2]) for t in targets))]
        return zeros[0], zeros[1:1 + len(points)], zeros[1 + len(points):]
    plan = _plan(spec, data, n_trans, gradients=True)
    _set_points(plan, points, targets)
    got = plan.vjp(_arg(data), _arg(cotangent), wrt=names)
    d_data = None if got.data is None else _tensor(got.data, data).reshape(data.shape)
    # Shaped as the coordinates: with a set per transform, a cotangent per point.
    d_points = [_tensor(a, data).reshape(p.shape) for a, p in zip(got.points, points)] \
        if wrt[1] else [None] * len(points)
    d_targets = [_tensor(a, data).reshape(t.shape) for a, t in zip(got.targets, targets)] \
        if wrt[2] else [None] * len(targets)
    return d_data, d_points, d_targets


def _jvp(spec, points, targets, data, d_data, d_points, d_targets):
    """The output's tangent for the tangents given: `d_data` or None, `d_points` and
    `d_targets` one per coordinate array or empty where none changes."""
    if data.shape[0] == 0:
        return data.new_zeros(_out_shape(spec, points, targets, data))
    plan = _plan(spec, data, data.shape[0], gradients=True)
    _set_points(plan, points, targets)
    out = plan.jvp(_arg(data), None if d_data is None else _arg(d_data),
                   [_as_set(t) for t in d_points] or None,
                   [_as_set(t) for t in d_targets] or None)
    return _tensor(out, data)


# -- The custom operators torch.compile sees, with their shapes and backward.

@torch.library.custom_op("nudt::nufft", mutates_args=())
def _nufft_op(points: List[torch.Tensor], targets: List[torch.Tensor], data: torch.Tensor,
              nufft_type: int, n_modes: List[int], eps: float, isign: int,
              options: str) -> torch.Tensor:
    return _forward(_spec(nufft_type, n_modes, eps, isign, options), points, targets, data)


@_nufft_op.register_fake
def _nufft_fake(points, targets, data, nufft_type, n_modes, eps, isign, options):
    spec = _spec(nufft_type, n_modes, eps, isign, options)
    return data.new_empty(_out_shape(spec, points, targets, data))


@torch.library.custom_op("nudt::nufft_vjp", mutates_args=())
def _nufft_vjp_op(points: List[torch.Tensor], targets: List[torch.Tensor], data: torch.Tensor,
                  cotangent: torch.Tensor, nufft_type: int, n_modes: List[int], eps: float,
                  isign: int, options: str, wrt: List[bool]) -> List[torch.Tensor]:
    """`_vjp` as one list `[data's, *points', *targets']`, an empty tensor for each cotangent
    not asked for (an operator returns tensors only)."""
    spec = _spec(nufft_type, n_modes, eps, isign, options)
    d_data, d_points, d_targets = _vjp(spec, points, targets, data, cotangent, wrt)
    arrays = [data, *points, *targets]
    return [a.new_empty(0) if g is None else g
            for g, a in zip([d_data, *d_points, *d_targets], arrays)]


@_nufft_vjp_op.register_fake
def _nufft_vjp_fake(points, targets, data, cotangent, nufft_type, n_modes, eps, isign, options,
                    wrt):
    flags = [wrt[0]] + [wrt[1]] * len(points) + [wrt[2]] * len(targets)
    return [a.new_empty(a.shape if w else (0,))
            for a, w in zip([data, *points, *targets], flags)]


@torch.library.custom_op("nudt::nufft_jvp", mutates_args=())
def _nufft_jvp_op(points: List[torch.Tensor], targets: List[torch.Tensor], data: torch.Tensor,
                  d_data: Optional[torch.Tensor], d_points: List[torch.Tensor],
                  d_targets: List[torch.Tensor], nufft_type: int, n_modes: List[int],
                  eps: float, isign: int, options: str) -> torch.Tensor:
    """`_jvp`: forward mode runs through an operator because torch.func.jvp hands
    `_Nufft.jvp` tensors wrapped by its transform, which only an operator's dispatch
    unwraps."""
    spec = _spec(nufft_type, n_modes, eps, isign, options)
    return _jvp(spec, points, targets, data, d_data, d_points, d_targets)


@_nufft_jvp_op.register_fake
def _nufft_jvp_fake(points, targets, data, d_data, d_points, d_targets, nufft_type, n_modes,
                    eps, isign, options):
    spec = _spec(nufft_type, n_modes, eps, isign, options)
    return data.new_empty(_out_shape(spec, points, targets, data))


def _backward(params, dim, saved, grad, need_data, need_points, need_targets):
    """The gradients of the data, the points and the targets that autograd asks for (None
    for the others), through the vjp operator (of both autograd registrations: an operator's
    dispatch also unwraps the tensors torch.func's transforms hand a backward)."""
    data, *coords = saved
    points, targets = coords[:dim], coords[dim:]
    wrt = [need_data, any(need_points), any(need_targets)]
    got = _once(torch.ops.nudt.nufft_vjp, points, targets, data, grad, *params, wrt)
    return (got[0] if need_data else None,
            [g if n else None for g, n in zip(got[1:1 + dim], need_points)],
            [g if n else None for g, n in zip(got[1 + dim:], need_targets)])


def _op_setup(ctx, inputs, output):
    points, targets, data, *params = inputs
    ctx.save_for_backward(data, *points, *targets)
    ctx.params, ctx.dim = params, len(points)


def _op_backward(ctx, grad):
    need_points, need_targets, need_data = ctx.needs_input_grad[:3]
    d_data, d_points, d_targets = _backward(ctx.params, ctx.dim, ctx.saved_tensors, grad,
                                            need_data, need_points, need_targets)
    return d_points, d_targets, d_data, None, None, None, None, None


_nufft_op.register_autograd(_op_backward, setup_context=_op_setup)


class _Layout:
    """Where `_once` puts a call's arguments back: `(kind, where)` per argument, one value to
    torch.func's transforms (a tuple would be taken apart as a tree of arguments)."""

    __slots__ = ("parts",)

    def __init__(self, parts):
        self.parts = parts


class _Once(torch.autograd.Function):
    """A call of a derivative operator (vjp or jvp) that refuses to be differentiated again.
    PyTorch takes an operator without a forward-mode rule for a constant there, so that
    torch.func.hessian (forward over reverse) would silently give zeros; and the operators
    see only the tensors passed to them directly, so the calls go through here, their
    tensors flattened out of the lists (`layout` puts them back)."""

    generate_vmap_rule = True

    @staticmethod
    def forward(op, layout, *tensors):
        args = [a if kind == "value" else tensors[a] if kind == "tensor"
                else list(tensors[a[0]:a[1]]) for kind, a in layout.parts]
        out = op(*args)
        return out if isinstance(out, torch.Tensor) else tuple(out)

    @staticmethod
    def setup_context(ctx, inputs, output):
        """Nothing to keep: differentiating a derivative only raises."""

    @staticmethod
    def backward(ctx, *grads):
        raise RuntimeError(_TWICE)

    @staticmethod
    def jvp(ctx, *tangents):
        raise RuntimeError(_TWICE)


_TWICE = ("nudt.torch: second derivatives are not available (the vjp and jvp of the "
          "transforms are not themselves differentiable)")


def _once(op, *args):
    """`op(*args)` through `_Once`."""
    layout, tensors = [], []
    for a in args:
        if isinstance(a, torch.Tensor):
            layout.append(("tensor", len(tensors)))
            tensors.append(a)
        elif isinstance(a, (list, tuple)) and a and isinstance(a[0], torch.Tensor):
            layout.append(("list", (len(tensors), len(tensors) + len(a))))
            tensors.extend(a)
        else:
            layout.append(("value", a))
    return _Once.apply(op, _Layout(layout), *tensors)


def _vmap_by_loop(op):
    """A batching rule for `op` that runs it once per batch element: what torch.func.vmap,
    jacrev and jacfwd need (a batch of point sets has no shared plan to fold it into)."""
    def pick(arg, dim, i):
        if dim is None:
            return arg
        if isinstance(dim, (list, tuple)):
            return [pick(a, d, i) for a, d in zip(arg, dim)]
        return arg.select(dim, i)

    def rule(info, in_dims, *args):
        outs = [op(*(pick(a, d, i) for a, d in zip(args, in_dims)))
                for i in range(info.batch_size)]
        if isinstance(outs[0], torch.Tensor):
            return torch.stack(outs), 0
        return [torch.stack(o) for o in zip(*outs)], [0] * len(outs[0])

    return rule


for _op in (_nufft_op, _nufft_vjp_op, _nufft_jvp_op):
    _op.register_vmap(_vmap_by_loop(_op))


# -- Eager mode: the same operators under an autograd.Function, which also has forward mode.

class _Nufft(torch.autograd.Function):
    """One transform: inputs `(params, dim, data, *points, *targets)`, `params` the
    operators' `(nufft_type, n_modes, eps, isign, options)`."""

    # Its methods run only operators, whose batching rules vmap can compose.
    generate_vmap_rule = True

    @staticmethod
    def forward(params, dim, data, *coords):
        return torch.ops.nudt.nufft(coords[:dim], coords[dim:], data, *params)

    @staticmethod
    def setup_context(ctx, inputs, output):
        params, dim, data, *coords = inputs
        ctx.params, ctx.dim = params, dim
        ctx.save_for_backward(data, *coords)
        ctx.save_for_forward(data, *coords)

    @staticmethod
    def backward(ctx, grad):
        dim, need = ctx.dim, ctx.needs_input_grad[2:]
        d_data, d_points, d_targets = _backward(ctx.params, dim, ctx.saved_tensors, grad,
                                                need[0], need[1:1 + dim], need[1 + dim:])
        return None, None, d_data, *d_points, *d_targets

    @staticmethod
    def jvp(ctx, _params, _dim, d_data, *d_coords):
        data, *coords = ctx.saved_tensors
        dim = ctx.dim

        def filled(tangents, arrays):
            """One tangent per array (zeros for those without), or none at all."""
            if all(t is None for t in tangents):
                return []
            return [torch.zeros_like(a) if t is None else t for t, a in zip(tangents, arrays)]

        points, targets = coords[:dim], coords[dim:]
        return _once(torch.ops.nudt.nufft_jvp, points, targets, data, d_data,
                     filled(d_coords[:dim], points), filled(d_coords[dim:], targets),
                     *ctx.params)


# -- Checks and the public functions.

def _point_set(arrays, names, what):
    """One set of coordinates (points or type 3 targets): real tensors of one shape, dtype
    and device, 1-D (shared by a batch) or ``(B, M)`` (a set per transform). Returns the
    dtype."""
    for a, n in zip(arrays, names):
        if not isinstance(a, torch.Tensor):
            raise NudtTypeError(f"`{n}` must be a torch.Tensor, got {type(a).__name__}")
        if a.dtype not in _COMPLEX:
            raise NudtTypeError(f"`{n}` must be float32 or float64 ({what}), got {a.dtype}")
        if a.ndim not in (1, 2):
            raise NudtShapeError(f"`{n}` must be a vector (a 1-D tensor of {what}) or, for "
                                 f"a set per transform, of shape (B, M), got shape "
                                 f"{tuple(a.shape)}")
    first = arrays[0]
    for a, n in zip(arrays[1:], names[1:]):
        if a.shape != first.shape:
            if a.ndim == first.ndim == 1:
                raise NudtShapeError(f"`{n}` must have the length of `{names[0]}`: {names[0]} "
                                     f"has {first.shape[0]}, {n} {a.shape[0]}")
            raise NudtShapeError(f"`{n}` must have the shape of `{names[0]}`: {names[0]} has "
                                 f"{tuple(first.shape)}, {n} {tuple(a.shape)}")
        if a.dtype != first.dtype:
            raise NudtTypeError(f"`{n}` is {a.dtype}, `{names[0]}` {first.dtype}: give every "
                                f"coordinate in one precision")
    return first.dtype


def _options(kwargs):
    """The plan options as one string an operator can take (a literal of sorted pairs)."""
    for key, why in _NOT_OPTIONS.items():
        if key in kwargs:
            raise NudtTypeError(f"Invalid option {key!r}: {why}")
    for key, value in kwargs.items():
        if not isinstance(value, (numbers.Number, str)) or isinstance(value, complex):
            raise NudtTypeError(f"option {key}={value!r}: nudt.torch passes options that are "
                                f"numbers (a CUDA tensor's stream is PyTorch's current one)")
    return repr(sorted(kwargs.items()))


def _transform(nufft_type, points, targets, data, n_modes, eps, isign, kwargs):
    """Checks the arguments in finufft's order (points, values, modes), then runs."""
    dim = len(points)
    real = _point_set(points, "xyz"[:dim], "the points, radians")
    # A leading axis on the points: a set per transform, one transform per row.
    sets = points[0].shape[0] if points[0].ndim == 2 else None
    if targets:
        if _point_set(targets, "stu"[:dim], "target frequencies") != real:
            raise NudtTypeError(f"the targets are {targets[0].dtype}, the points {real}")
        if (targets[0].shape[0] if targets[0].ndim == 2 else None) != sets:
            raise NudtShapeError(f"the targets must have a leading axis of the points' "
                                 f"(B = {sets}) exactly when the points have one, got shape "
                                 f"{tuple(targets[0].shape)}")
    name = "f" if nufft_type == 2 else "c"
    if not isinstance(data, torch.Tensor):
        raise NudtTypeError(f"`{name}` must be a torch.Tensor, got {type(data).__name__}")
    if data.dtype != _COMPLEX[real]:
        raise NudtTypeError(f"`{name}` must be {_COMPLEX[real]} (the points are {real}), got "
                            f"{data.dtype}")
    devices = {a.device for a in (*points, *targets, data)}
    if len(devices) > 1:
        raise NudtValueError(f"the tensors are on several devices: {sorted(map(str, devices))}")
    if data.device.type not in ("cpu", "cuda"):
        raise NudtTypeError(f"nudt.torch runs CPU and CUDA tensors, got {data.device}")
    if nufft_type == 2:
        if data.ndim < dim:
            raise NudtShapeError(f"`f` must have the {dim} mode axes last, got shape "
                                 f"{tuple(data.shape)}")
        inner = tuple(data.shape[data.ndim - dim:])
        n_modes = inner
    else:
        m = points[0].shape[-1]
        if data.ndim < 1 or data.shape[-1] != m:
            raise NudtShapeError(f"`c` must be of shape (*batch, M), M = {m} points, got "
                                 f"{tuple(data.shape)}")
        inner = (m,)
        n_modes = _n_modes(n_modes, dim) if nufft_type == 1 else (1,) * dim
    if not isinstance(eps, numbers.Real):
        raise NudtTypeError(f"eps must be a number, got {type(eps).__name__}")
    if isign is None:
        isign = -1 if nufft_type == 2 else 1
    isign = 1 if int(isign) >= 0 else -1
    batch = tuple(data.shape[:data.ndim - len(inner)])
    if sets is not None and batch != (sets,):
        raise NudtShapeError(f"with a point set per transform (points of shape "
                             f"{tuple(points[0].shape)}), "
                             f"`{name}` must have one leading axis of {sets}, got shape "
                             f"{tuple(data.shape)}")
    flat = data.reshape(math.prod(batch), *inner)
    params = (nufft_type, list(n_modes), float(eps), isign, _options(kwargs))
    if torch.compiler.is_compiling():
        out = torch.ops.nudt.nufft(list(points), list(targets), flat, *params)
    else:
        out = _Nufft.apply(params, dim, flat, *points, *targets)
    return out.reshape(*batch, *out.shape[1:])


def nufft1d1(x, c, n_modes, eps=1e-6, isign=None, **kwargs):
    return _transform(1, (x,), (), c, n_modes, eps, isign, kwargs)


def nufft1d2(x, f, eps=1e-6, isign=None, **kwargs):
    return _transform(2, (x,), (), f, None, eps, isign, kwargs)


def nufft1d3(x, c, s, eps=1e-6, isign=None, **kwargs):
    return _transform(3, (x,), (s,), c, None, eps, isign, kwargs)


def nufft2d1(x, y, c, n_modes, eps=1e-6, isign=None, **kwargs):
    return _transform(1, (x, y), (), c, n_modes, eps, isign, kwargs)


def nufft2d2(x, y, f, eps=1e-6, isign=None, **kwargs):
    return _transform(2, (x, y), (), f, None, eps, isign, kwargs)


def nufft2d3(x, y, c, s, t, eps=1e-6, isign=None, **kwargs):
    return _transform(3, (x, y), (s, t), c, None, eps, isign, kwargs)


def nufft3d1(x, y, z, c, n_modes, eps=1e-6, isign=None, **kwargs):
    return _transform(1, (x, y, z), (), c, n_modes, eps, isign, kwargs)


def nufft3d2(x, y, z, f, eps=1e-6, isign=None, **kwargs):
    return _transform(2, (x, y, z), (), f, None, eps, isign, kwargs)


def nufft3d3(x, y, z, c, s, t, u, eps=1e-6, isign=None, **kwargs):
    return _transform(3, (x, y, z), (s, t, u), c, None, eps, isign, kwargs)


def _document():
    """Docstrings of the transforms: the numpy functions' descriptions, on tensors."""
    from . import _interfaces
    note = ("\n    On tensors, differentiable in every tensor argument (see nudt.torch); leading "
            "axes\n    of the values are a batch of transforms sharing the points. isign "
            "defaults to -1\n    for type 2, +1 otherwise.\n")
    for dim in (1, 2, 3):
        for tp in (1, 2, 3):
            name = f"nufft{dim}d{tp}"
            doc = getattr(_interfaces, name).__doc__
            doc = doc.replace("    out: optional C-contiguous array to write the result into.\n",
                              "")
            globals()[name].__doc__ = doc + note


_document()
