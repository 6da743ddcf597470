"""``nudt.torch``: finufft's one-call transforms as differentiable PyTorch functions.

* ``torch.autograd.gradcheck`` in complex128/float64, for every type and dimension, with
  respect to the values, the points and (type 3) the targets, in reverse and forward mode;
* the gradients against the same sums written directly in torch and differentiated by
  autograd, at eps 1e-6 (double) and 1e-4 (single), within 10x eps relative;
* batches of transforms sharing the points, forward mode through ``torch.func.jvp``, the
  other torch.func transforms, ``torch.compile`` (one graph around the custom operators),
  ``torch.library.opcheck``;
* bad arguments raise TypeError/ValueError.

Skips where PyTorch is missing, unless NUDT_REQUIRE_TORCH=1 (as CI sets), which makes a
missing PyTorch a failure. The CUDA tests run only where ``torch.cuda.is_available()``.
"""

import math
import os

import pytest

if os.environ.get("NUDT_REQUIRE_TORCH") == "1":
    import torch  # CI installs PyTorch: its absence is a failure, not a skip
else:
    torch = pytest.importorskip(
        "torch", reason="PyTorch is not installed (NUDT_REQUIRE_TORCH=1 makes this a failure)")

import nudt  # noqa: E402
import nudt.torch as nt  # noqa: E402

MODES = {1: (12,), 2: (6, 5), 3: (4, 3, 5)}
COMPLEX = {torch.float32: torch.complex64, torch.float64: torch.complex128}
cuda = pytest.mark.skipif(not torch.cuda.is_available(),
                          reason="torch.cuda.is_available() is False: no CUDA device here")


def direct(tp, points, data, n_modes=None, targets=(), isign=None):
    """The transform as a plain sum of exponentials in torch, which autograd differentiates:
    the reference for every gradient here. Modes are centred, C-ordered (x first)."""
    isign = (-1 if tp == 2 else 1) if isign is None else isign
    x = torch.stack(points)
    if tp == 3:
        freqs = torch.stack(targets)
    else:
        n_modes = tuple(data.shape[data.ndim - len(points):]) if tp == 2 else n_modes
        axes = [torch.arange(n, dtype=x.dtype, device=x.device) - n // 2 for n in n_modes]
        freqs = torch.stack([g.reshape(-1) for g in torch.meshgrid(*axes, indexing="ij")])
    e = torch.exp(1j * isign * (freqs.T @ x))
    if tp == 2:
        return data.reshape(*data.shape[:data.ndim - len(points)], -1) @ e
    out = data @ e.T
    return out.reshape(*data.shape[:-1], *n_modes) if tp == 1 else out


def problem(tp, dim, dtype=torch.float64, batch=(), m=9, n=7, modes=None, seed=0,
            device="cpu"):
    """Points, values, targets (type 3) and modes of a small random problem."""
    g = torch.Generator().manual_seed(seed)
    rand = lambda *s: torch.rand(*s, generator=g, dtype=torch.float64)  # noqa: E731
    modes = modes or MODES[dim]
    pts = [((rand(m) * 2 - 1) * math.pi) for _ in range(dim)]
    tgt = [(rand(n) * 2 - 1) * 5 for _ in range(dim)] if tp == 3 else []
    shape = (*batch, *modes) if tp == 2 else (*batch, m)
    data = torch.complex(rand(*shape) - 0.5, rand(*shape) - 0.5)
    to = lambda t, dt: t.to(dtype=dt, device=device)  # noqa: E731
    return ([to(p, dtype) for p in pts], to(data, COMPLEX[dtype]),
            [to(t, dtype) for t in tgt], modes)


def call(tp, pts, data, tgt, modes, **kwargs):
    """nudt.torch's function for the type and dimension, called as finufft's."""
    f = getattr(nt, f"nufft{len(pts)}d{tp}")
    if tp == 1:
        return f(*pts, data, modes, **kwargs)
    if tp == 2:
        return f(*pts, data, **kwargs)
    return f(*pts, data, *tgt, **kwargs)


def grads(fn, inputs, weights):
    """The gradients of L = Re Σ conj(w)·fn(inputs), by autograd."""
    inputs = [t.detach().clone().requires_grad_() for t in inputs]
    loss = (weights.conj() * fn(*inputs)).real.sum()
    return torch.autograd.grad(loss, inputs)


def rel(a, b):
    return float(torch.linalg.vector_norm(a - b) / torch.linalg.vector_norm(b))


# gradcheck compares each Jacobian entry, analytical a against numerical n (central
# differences, step 1e-6), as |a - n| <= atol + rtol |n|. Its defaults (atol 1e-5, rtol 1e-3)
# would pass a derivative off by 1e-4 of its scale. Here the plans ask for 1e-12, so the
# analytical entries are right to ~1e-11 of the Jacobian's scale (entries of order |k| |c| ~
# 10), and the numerical ones carry the differences' own errors: truncation (step² |k|³ |c| /
# 6 ~ 1e-10) and rounding (1e-16 |y| / step ~ 1e-9). Measured on these problems, types 1
# and 2 still pass at atol 1e-9 (rtol 1e-8), type 3 (|s| up to 5) at atol 1e-8: atol 1e-7
# and rtol 1e-6 leave 10-100x room and are 100x tighter than the defaults.
GRADCHECK = dict(atol=1e-7, rtol=1e-6)


@pytest.mark.parametrize("dim", [1, 2, 3])
@pytest.mark.parametrize("tp", [1, 2, 3])
def test_gradcheck(tp, dim):
    """Reverse and forward mode against numerical differences of nudt's own transform, with
    respect to every input at once (values, points, targets), at eps 1e-12."""
    small = dim == 3  # a Jacobian column or row per value: keep them few in 3-D
    pts, data, tgt, modes = problem(tp, dim, m=4 if small else 8, n=3 if small else 5,
                                    modes=(3, 2, 3) if small else None, seed=tp * 3 + dim)
    inputs = [t.requires_grad_() for t in (data, *pts, *tgt)]

    def fn(data, *coords):
        return call(tp, coords[:dim], data, coords[dim:], modes, eps=1e-12)

    assert torch.autograd.gradcheck(fn, inputs, check_forward_ad=True, **GRADCHECK)


@pytest.mark.parametrize("tp", [1, 2])
def test_gradcheck_options(tp):
    """Options reach the backward's plan: FFT mode order (modeord=1), a flipped sign, one
    thread."""
    pts, data, _, modes = problem(tp, 2, m=8, seed=3)
    inputs = [t.requires_grad_() for t in (data, *pts)]

    def fn(data, *pts):
        return call(tp, pts, data, [], modes, eps=1e-12, isign=-1 if tp == 1 else 1,
                    modeord=1, nthreads=1)

    assert torch.autograd.gradcheck(fn, inputs, check_forward_ad=True, **GRADCHECK)


@pytest.mark.parametrize("dim", [1, 2, 3])
@pytest.mark.parametrize("tp", [1, 2, 3])
def test_against_torch_sums(tp, dim):
    """The gradients of values, points and targets within 10x eps (1e-6) of autograd's
    through the direct sums, relative l2 per input, with a batch of two transforms sharing
    the points; the values too."""
    pts, data, tgt, modes = problem(tp, dim, batch=(2,), m=60, n=40, seed=tp + 5 * dim,
                                    modes={1: (20,), 2: (10, 8), 3: (6, 5, 4)}[dim])
    eps = 1e-6
    ours = call(tp, pts, data, tgt, modes, eps=eps)
    ref = direct(tp, pts, data, modes, tgt)
    assert ours.shape == ref.shape
    assert rel(ours, ref) < 10 * eps
    w = torch.randn(ref.shape, dtype=ref.dtype, generator=torch.Generator().manual_seed(1))
    inputs = [data, *pts, *tgt]
    got = grads(lambda d, *c: call(tp, c[:dim], d, c[dim:], modes, eps=eps), inputs, w)
    want = grads(lambda d, *c: direct(tp, c[:dim], d, modes, c[dim:]), inputs, w)
    for name, a, b in zip(["values", *"xyz"[:dim], *"stu"[:len(tgt)]], got, want):
        assert a.shape == b.shape and a.dtype == b.dtype, name
        assert rel(a, b) < 10 * eps, f"{name}: {rel(a, b):.2e}"


@pytest.mark.parametrize("tp", [1, 2, 3])
def test_float32(tp):
    """complex64/float32 tensors run f32 plans: results and gradients within 10x eps (1e-4)
    of the float64 direct sums, in float32."""
    pts, data, tgt, modes = problem(tp, 2, dtype=torch.float32, m=80, n=50, seed=tp,
                                    modes=(16, 12))
    eps = 1e-4
    out = call(tp, pts, data, tgt, modes, eps=eps)
    assert out.dtype == torch.complex64
    w = torch.ones(out.shape, dtype=torch.complex64)
    got = grads(lambda d, *c: call(tp, c[:2], d, c[2:], modes, eps=eps), [data, *pts, *tgt], w)
    wide = [t.double() if t.is_floating_point() else t.to(torch.complex128)
            for t in (data, *pts, *tgt)]
    want = grads(lambda d, *c: direct(tp, c[:2], d, modes, c[2:]), wide, w.to(torch.complex128))
    for a, b in zip(got, want):
        assert a.dtype in (torch.float32, torch.complex64)
        assert rel(a.to(b.dtype), b) < 10 * eps


def test_batch_axes_and_signs():
    """Leading axes of the values are a batch of transforms on the same points (the points'
    gradients summed over it); isign defaults as finufft's and can be flipped."""
    pts, data, _, modes = problem(2, 2, batch=(2, 3), m=30, seed=4)
    out = nt.nufft2d2(*pts, data, eps=1e-9)
    assert out.shape == (2, 3, 30)
    for b in range(2):
        for c in range(3):
            one = nt.nufft2d2(*pts, data[b, c], eps=1e-9)
            assert rel(out[b, c], one) < 1e-12
    assert rel(nt.nufft2d2(*pts, data, eps=1e-9, isign=1),
               direct(2, pts, data, isign=1)) < 1e-8
    w = torch.ones(out.shape, dtype=out.dtype)
    got = grads(lambda *p: nt.nufft2d2(*p, data, eps=1e-9), pts, w)
    want = grads(lambda *p: direct(2, p, data), pts, w)
    assert all(rel(a, b) < 1e-8 for a, b in zip(got, want))
    empty = nt.nufft1d1(pts[0], data.new_zeros((0, 30)), 7)
    assert empty.shape == (0, 7)


@pytest.mark.parametrize("tp", [1, 2, 3])
def test_a_point_set_per_transform(tp):
    """Points of shape (B, M): each transform its own set, in one call; values, gradients
    (one per point) and forward mode against each transform's direct sum, and gradcheck."""
    b, dim, modes = 3, 2, (7, 6)
    sets = [problem(tp, dim, m=20, n=15, modes=modes, seed=30 + tp + 5 * i) for i in range(b)]
    pts = [torch.stack([s[0][d] for s in sets]) for d in range(dim)]
    data = torch.stack([s[1] for s in sets])
    tgt = [torch.stack([s[2][d] for s in sets]) for d in range(dim)] if tp == 3 else []

    def ref(data, *coords):
        return torch.stack([direct(tp, [c[i] for c in coords[:dim]], data[i], modes,
                                   [c[i] for c in coords[dim:]]) for i in range(b)])

    def ours(data, *coords):
        return call(tp, coords[:dim], data, coords[dim:], modes, eps=1e-10)

    inputs = (data, *pts, *tgt)
    out = ours(*inputs)
    assert out.shape == ref(*inputs).shape and rel(out, ref(*inputs)) < 1e-8
    w = torch.randn(out.shape, dtype=out.dtype, generator=torch.Generator().manual_seed(2))
    got, want = grads(ours, inputs, w), grads(ref, inputs, w)
    assert all(g.shape == i.shape for g, i in zip(got, inputs))
    assert all(rel(a, c) < 1e-8 for a, c in zip(got, want))
    tangents = tuple(torch.randn(t.shape, dtype=t.dtype) for t in inputs)
    assert rel(torch.func.jvp(ours, inputs, tangents)[1],
               torch.func.jvp(ref, inputs, tangents)[1]) < 1e-8
    small = [t[..., :4].detach().clone().requires_grad_() for t in inputs] if tp != 2 else \
        [t.detach().clone().requires_grad_() for t in (data, *(p[:, :4] for p in pts))]
    assert torch.autograd.gradcheck(
        lambda d, *c: call(tp, c[:dim], d, c[dim:], modes, eps=1e-12), small,
        check_forward_ad=True, **GRADCHECK)


@pytest.mark.parametrize("tp", [1, 2, 3])
def test_forward_mode(tp):
    """torch.func.jvp (forward mode) against torch.func.jvp through the direct sums."""
    pts, data, tgt, modes = problem(tp, 2, m=40, n=30, seed=7 + tp, modes=(8, 6))
    g = torch.Generator().manual_seed(3)
    primals = (data, *pts, *tgt)
    tangents = tuple(torch.randn(t.shape, dtype=t.dtype, generator=g) for t in primals)
    _, ours = torch.func.jvp(lambda d, *c: call(tp, c[:2], d, c[2:], modes, eps=1e-9),
                             primals, tangents)
    _, ref = torch.func.jvp(lambda d, *c: direct(tp, c[:2], d, modes, c[2:]), primals,
                            tangents)
    assert rel(ours, ref) < 1e-8


def test_func_transforms():
    """torch.func: grad, jacrev, jacfwd and vmap (the operators' batching rule runs one
    transform per element) against the same transforms of the direct sums; a second
    derivative (hessian, double backward) raises rather than return zeros."""
    pts, data, tgt, _ = problem(3, 2, m=12, n=6, seed=2)
    y, s, t = pts[1], *tgt

    def ours(x):
        return torch.view_as_real(nt.nufft2d3(x, y, data, s, t, eps=1e-10))

    def ref(x):
        return torch.view_as_real(direct(3, [x, y], data, None, [s, t]))

    x = pts[0]
    jac = torch.func.jacrev(ref)(x)
    assert rel(torch.func.jacrev(ours)(x), jac) < 1e-9
    assert rel(torch.func.jacfwd(ours)(x), jac) < 1e-9
    xs = torch.stack([x, 0.5 * x, x + 1])
    assert rel(torch.func.vmap(ours)(xs), torch.stack([ref(v) for v in xs])) < 1e-9
    loss = lambda f: lambda x: f(x).pow(2).sum()  # noqa: E731
    assert rel(torch.func.grad(loss(ours))(x), torch.func.grad(loss(ref))(x)) < 1e-9
    with pytest.raises(RuntimeError, match="second derivatives"):
        torch.func.hessian(loss(ours))(x)
    leaf = x.clone().requires_grad_()
    g, = torch.autograd.grad(loss(ours)(leaf), leaf, create_graph=True)
    with pytest.raises(RuntimeError, match="second derivatives"):
        g.sum().backward()


def test_torch_compile():
    """Inside a torch.compile'd function (fullgraph: no graph break) the transforms are the
    custom operators, with the same values and gradients as in eager mode."""
    pts, data, tgt, modes = problem(3, 2, m=20, n=15, seed=11)

    def model(data, x, y, s, t):
        f = nt.nufft2d3(x, y, data, s, t, eps=1e-9)
        c = nt.nufft2d2(x, y, torch.ones((4, 5), dtype=data.dtype), eps=1e-9)
        return (f.abs() ** 2).sum() + (c * data.conj()).real.sum()

    inputs = [data, *pts, *tgt]
    torch._dynamo.reset()
    compiled = torch.compile(model, backend="aot_eager", fullgraph=True)
    leaves = [[t.detach().clone().requires_grad_() for t in inputs] for _ in range(2)]
    eager, comp = model(*leaves[0]), compiled(*leaves[1])
    assert abs(eager.item() - comp.item()) <= 1e-12 * abs(eager.item())
    eager.backward()
    comp.backward()
    for a, b in zip(leaves[0], leaves[1]):
        assert rel(b.grad, a.grad) < 1e-12


@pytest.mark.parametrize("tp", [1, 2, 3])
def test_opcheck(tp):
    """PyTorch's own checks of the custom operators (the transform, its vjp and jvp):
    schema, fake (meta) implementation, autograd registration, AOT dispatch."""
    pts, data, tgt, modes = problem(tp, 1, m=6, n=5, modes=(5,))
    data.requires_grad_()
    data = data.reshape(1, -1) if tp != 2 else data.reshape(1, *modes)
    params = (tp, list(modes), 1e-9, 1, "[]")
    torch.library.opcheck(torch.ops.nudt.nufft.default, (pts, tgt, data, *params))
    cot = torch.ones_like(torch.ops.nudt.nufft(pts, tgt, data.detach(), *params))
    wrt = [True, True, tp == 3]
    torch.library.opcheck(torch.ops.nudt.nufft_vjp.default,
                          (pts, tgt, data.detach(), cot, *params, wrt))
    torch.library.opcheck(torch.ops.nudt.nufft_jvp.default,
                          (pts, tgt, data.detach(), data.detach(), [p * 0.5 for p in pts],
                           [t * 0.5 for t in tgt], *params))


def test_signatures():
    """finufft's names and argument order, on tensors (no `out`, `isign` per type)."""
    import inspect
    for d in (1, 2, 3):
        pts = ", ".join("xyz"[:d])
        sig = lambda tp: str(inspect.signature(getattr(nt, f"nufft{d}d{tp}")))  # noqa: E731
        assert sig(1) == f"({pts}, c, n_modes, eps=1e-06, isign=None, **kwargs)"
        assert sig(2) == f"({pts}, f, eps=1e-06, isign=None, **kwargs)"
        assert sig(3) == f"({pts}, c, {', '.join('stu'[:d])}, eps=1e-06, isign=None, **kwargs)"


def test_errors():
    """Bad arguments: TypeError for types and dtypes, ValueError (nudt's shape error is both)
    for shapes and lengths; the plan's own checks for options."""
    pts, data, _, _ = problem(1, 2, m=10)
    x, y = pts
    with pytest.raises(nudt.NudtShapeError, match="1-D"):
        nt.nufft2d1(torch.stack(pts)[None], y, data, 8)  # points as one 3-D tensor
    with pytest.raises(nudt.NudtShapeError, match="must have the shape of `x`"):
        nt.nufft2d1(torch.stack(pts), y, data, 8)  # a set per transform in x only
    with pytest.raises(nudt.NudtShapeError, match="one leading axis of 2"):
        nt.nufft2d1(torch.stack(pts), torch.stack(pts), data, 8)  # data without it
    with pytest.raises(ValueError, match="length"):
        nt.nufft2d1(x, y[:7], data, 8)
    with pytest.raises(TypeError, match="float32 or float64"):
        nt.nufft2d1(x.to(torch.int64), y, data, 8)
    with pytest.raises(TypeError, match="one precision"):
        nt.nufft2d1(x, y.float(), data, 8)
    with pytest.raises(TypeError, match="complex128"):
        nt.nufft2d1(x, y, data.real, 8)  # real values
    with pytest.raises(TypeError, match="complex128"):
        nt.nufft2d1(x, y, data.to(torch.complex64), 8)
    with pytest.raises(ValueError, match=r"\(\*batch, M\)"):
        nt.nufft2d1(x, y, data[:5], 8)
    with pytest.raises(TypeError, match="torch.Tensor"):
        nt.nufft2d1(x.numpy(), y, data, 8)
    with pytest.raises(ValueError, match="n_modes"):
        nt.nufft2d1(x, y, data, (8, 8, 8))
    with pytest.raises(ValueError, match="mode axes"):
        nt.nufft3d2(x, y, x, torch.ones(4, 4, dtype=torch.complex128))
    with pytest.raises(TypeError, match="out"):
        nt.nufft2d1(x, y, data, 8, out=torch.empty(8, 8, dtype=torch.complex128))
    with pytest.raises(TypeError, match="Invalid option"):
        nt.nufft2d1(x, y, data, 8, not_an_option=1)
    with pytest.raises(ValueError, match="eps"):
        nt.nufft2d1(x, y, data, 8, eps=1e-20)


@cuda
@pytest.mark.parametrize("tp", [1, 2, 3])
def test_cuda_matches_cpu(tp):
    """CUDA tensors run on nudt.cuda: the same values and gradients as on the CPU."""
    pts, data, tgt, modes = problem(tp, 2, m=50, n=30, seed=tp, modes=(8, 6))
    moved = [t.cuda() for t in (data, *pts, *tgt)]
    w = torch.ones(call(tp, pts, data, tgt, modes).shape, dtype=data.dtype)
    cpu = grads(lambda d, *c: call(tp, c[:2], d, c[2:], modes, eps=1e-9),
                [data, *pts, *tgt], w)
    gpu = grads(lambda d, *c: call(tp, c[:2], d, c[2:], modes, eps=1e-9), moved, w.cuda())
    for a, b in zip(cpu, gpu):
        assert b.device.type == "cuda"
        assert rel(b.cpu(), a) < 1e-7


@cuda
@pytest.mark.parametrize("tp", [1, 2, 3])
def test_cuda_point_sets_per_transform(tp):
    """Points of shape (B, M) as CUDA tensors (type 3: targets (B, K) too, each transform's
    extents its own): the same values and gradients as on the CPU, one per point."""
    b, modes = 3, (7, 6)
    sets = [problem(tp, 2, m=25, n=18, modes=modes, seed=60 + tp + 5 * i) for i in range(b)]
    # Each transform's sources and targets scaled apart: its own type 3 geometry.
    scale = [1.0, 0.5, 1.7]
    pts = [torch.stack([s[0][d] * scale[i] for i, s in enumerate(sets)]) for d in range(2)]
    data = torch.stack([s[1] for s in sets])
    tgt = [torch.stack([s[2][d] / scale[i] for i, s in enumerate(sets)]) for d in range(2)] \
        if tp == 3 else []
    inputs = [data, *pts, *tgt]
    out = call(tp, pts, data, tgt, modes, eps=1e-9)
    w = torch.randn(out.shape, dtype=out.dtype, generator=torch.Generator().manual_seed(4))
    cpu = grads(lambda d, *c: call(tp, c[:2], d, c[2:], modes, eps=1e-9), inputs, w)
    moved = [t.cuda() for t in inputs]
    gpu = grads(lambda d, *c: call(tp, c[:2], d, c[2:], modes, eps=1e-9), moved, w.cuda())
    assert rel(call(tp, moved[1:3], moved[0], moved[3:], modes, eps=1e-9).cpu(), out) < 1e-7
    for a, g in zip(cpu, gpu):
        assert g.device.type == "cuda" and g.shape == a.shape
        assert rel(g.cpu(), a) < 1e-7
