"""Bad input to `import nudt as finufft` fails as it fails in finufft: each call below is
made on finufft and on nudt; both must raise, nudt's exception must be an instance of
finufft's class and carry the key phrase that finufft's message (and its own test suite)
has. Copies of non-contiguous input warn as finufft's do.

nudt's exceptions are also the class a numpy user expects (ValueError for shapes and
values, TypeError for types), checked on the same table.

Where nudt deliberately differs, it is stricter and says so: an unknown option raises
TypeError (finufft warns), points given for a dimension the plan does not have raise
(finufft ignores them), an unreachable tolerance raises ValueError (finufft 2.5 warns and
computes at the precision it can reach); see test_errors.py.
"""

import warnings

import finufft
import numpy as np
import pytest

import nudt

M, NK = 7, 5
RNG = np.random.default_rng(0)
X, Y, Z = RNG.uniform(-np.pi, np.pi, (3, M))
S, T, U = RNG.uniform(-5, 5, (3, NK))
C = np.ones(M, np.complex128)


def planned(lib, tp, modes, n_trans=1, **kw):
    """A plan of `lib` with its points set: x, y, z as the dimension needs, s, t, u too for
    type 3."""
    dim = modes if tp == 3 else len(modes)
    plan = lib.Plan(tp, modes, n_trans, **kw)
    pts = (X, Y, Z)[:dim]
    if tp == 3:
        plan.setpts(*pts, *(None,) * (3 - dim), *(S, T, U)[:dim])
    else:
        plan.setpts(*pts)
    return plan


def zeros(shape, **kw):
    return np.zeros(shape, np.complex128, **kw)


def readonly(shape):
    a = zeros(shape)
    a.flags.writeable = False
    return a


# (id, call on a library, the key phrase of finufft's message)
CASES = [
    # setpts: missing, non-vector and unequal coordinate arrays, dtypes
    ("setpts y missing", lambda lib: lib.Plan(1, (4, 4)).setpts(X), "y must be a vector"),
    ("setpts x 2-D", lambda lib: lib.Plan(1, (4, 4)).setpts(np.stack([X, Y]), Y),
     "x must be a vector"),
    ("setpts y 2-D", lambda lib: lib.Plan(1, (4, 4)).setpts(X, np.stack([X, Y])),
     "y must be a vector"),
    ("setpts z 2-D", lambda lib: lib.Plan(1, (4, 4, 4)).setpts(X, Y, Z[None]),
     "z must be a vector"),
    ("setpts y short", lambda lib: lib.Plan(1, (4, 4)).setpts(X, Y[:-1]),
     "y must have same length as x"),
    ("setpts z long", lambda lib: lib.Plan(2, (4, 4, 4)).setpts(X, Y, np.append(Z, 0.0)),
     "z must have same length as x"),
    ("type 3 s missing", lambda lib: lib.Plan(3, 2).setpts(X, Y), "s must be a vector"),
    ("type 3 t 2-D", lambda lib: lib.Plan(3, 2).setpts(X, Y, s=S, t=T[None]),
     "t must be a vector"),
    ("type 3 u short", lambda lib: lib.Plan(3, 3).setpts(X, Y, Z, S, T, U[:-1]),
     "u must have same length as s"),
    ("setpts float32 into complex128",
     lambda lib: lib.Plan(1, (4,)).setpts(X.astype(np.float32)),
     "Argument `x` does not have the correct dtype: float32 was given, but float64 was "
     "expected."),
    ("setpts int into complex64",
     lambda lib: lib.Plan(1, (4, 4), dtype="complex64").setpts(
         X.astype(np.float32), Y.astype(np.int64)),
     "Argument `y` does not have the correct dtype: int64 was given, but float32 was "
     "expected."),
    ("setpts dtype before missing y",
     lambda lib: lib.Plan(1, (8, 8), dtype="complex64").setpts(np.ones(1, "complex128")),
     "does not have the correct dtype"),
    # execute: dtypes and out's layout
    ("data complex64", lambda lib: planned(lib, 1, (4,)).execute(C.astype(np.complex64)),
     "Argument `data` does not have the correct dtype: complex64 was given, but complex128 "
     "was expected."),
    ("data real", lambda lib: planned(lib, 1, (4,)).execute(C.real),
     "Argument `data` does not have the correct dtype"),
    ("out complex64",
     lambda lib: planned(lib, 1, (4,)).execute(C, np.zeros(4, np.complex64)),
     "Argument `out` does not have the correct dtype"),
    ("out Fortran", lambda lib: planned(lib, 1, (4, 3)).execute(C, zeros((4, 3), order="F")),
     "Argument `out` does not satisfy the following requirement: C"),
    ("out strided", lambda lib: planned(lib, 2, (4,)).execute(zeros(4), zeros(2 * M)[::2]),
     "Argument `out` does not satisfy the following requirement: C"),
    ("out read-only", lambda lib: planned(lib, 1, (4,)).execute(C, readonly(4)),
     "Argument `out` does not satisfy the following requirement: W"),
    # execute: shapes, in each of finufft's rules
    ("c 3-D", lambda lib: planned(lib, 1, (4,)).execute(zeros((1, 1, M))),
     "c.ndim must be 1 or 2 if n_trans == 1"),
    ("c short", lambda lib: planned(lib, 1, (4,)).execute(C[:-1]),
     "c.size must be same as x.size if n_trans == 1"),
    ("c (2, M) for one transform", lambda lib: planned(lib, 1, (4,)).execute(zeros((2, M))),
     "c.size must be same as x.size if n_trans == 1"),
    ("c 1-D for 2 transforms", lambda lib: planned(lib, 1, (4,), 2).execute(zeros(2 * M)),
     "c.ndim must be 2 if n_trans > 1"),
    ("c (2, M+1)", lambda lib: planned(lib, 1, (4,), 2).execute(zeros((2, M + 1))),
     r"c.shape must be (n_trans, x.size) if n_trans > 1"),
    ("type 2 out short", lambda lib: planned(lib, 2, (4,)).execute(zeros(4), zeros(M - 1)),
     "c.size must be same as x.size if n_trans == 1"),
    ("f 3-D for 1-D", lambda lib: planned(lib, 2, (4,)).execute(zeros((1, 2, 4))),
     "f.ndim must be same as the problem dimension or the problem dimension + 1"),
    ("f (2, 4) for one", lambda lib: planned(lib, 2, (4,)).execute(zeros((2, 4))),
     "f.shape[0] must be 1 for type 1 or 2 if n_trans == 1"),
    ("f 1-D for 2", lambda lib: planned(lib, 2, (4,), 2).execute(zeros(4)),
     "f.ndim must be same as the problem dimension + 1 for type 1 or 2 if n_trans > 1"),
    ("f (3, 4) for 2", lambda lib: planned(lib, 2, (4,), 2).execute(zeros((3, 4))),
     "f.shape[0] must be n_trans for type 1 or 2 if n_trans > 1"),
    ("f (2, 9) for (8, 9)", lambda lib: planned(lib, 2, (8, 9)).execute(zeros((2, 9))),
     "f.shape is not consistent with n_modes"),
    ("type 1 out (4, 4) for (4, 3)",
     lambda lib: planned(lib, 1, (4, 3)).execute(C, zeros((4, 4))),
     "f.shape is not consistent with n_modes"),
    ("type 3 out 3-D", lambda lib: planned(lib, 3, 1).execute(C, zeros((1, 1, NK))),
     "f.ndim must be 1 or 2 for type 3 if n_trans == 1"),
    ("type 3 out short", lambda lib: planned(lib, 3, 1).execute(C, zeros(NK - 1)),
     "f.size of must be nk if n_trans == 1"),
    ("type 3 out 1-D for 2",
     lambda lib: planned(lib, 3, 1, 2).execute(zeros((2, M)), zeros(2 * NK)),
     "f.ndim must be 2 for type 3 if n_trans > 1"),
    ("type 3 out (2, NK+1)",
     lambda lib: planned(lib, 3, 1, 2).execute(zeros((2, M)), zeros((2, NK + 1))),
     "f.shape must be (n_trans, nk) if n_trans > 1"),
    ("adjoint of type 1, data (4, 4) for (4, 3)",
     lambda lib: planned(lib, 1, (4, 3)).execute_adjoint(zeros((4, 4))),
     "f.shape is not consistent with n_modes"),
    ("adjoint of type 1, out short",
     lambda lib: planned(lib, 1, (4,)).execute_adjoint(zeros(4), zeros(M - 1)),
     "c.size must be same as x.size if n_trans == 1"),
    ("adjoint of type 3, data short",
     lambda lib: planned(lib, 3, 1).execute_adjoint(zeros(NK - 1)),
     "c.size must be same as x.size if n_trans == 1"),
    # Plan's arguments
    ("dtype float64", lambda lib: lib.Plan(1, (8, 8), dtype="float64"),
     "must be single or double"),
    ("dtype uint32", lambda lib: lib.Plan(1, (8, 8), dtype="uint32"),
     "must be single or double"),
    ("type 3 with modes", lambda lib: lib.Plan(3, (1, 2)),
     "type 3 plan n_modes_or_dim must be one number, the dimension"),
    ("4 mode counts", lambda lib: lib.Plan(2, (1, 2, 3, 4)),
     "n_modes dimension must be 1, 2, or 3"),
    ("type 4", lambda lib: lib.Plan(4, (8,)), "transform type invalid"),
    ("FFTW lock", lambda lib: lib.Plan(1, (8,), fftw_lock_fun=None),
     "Invalid option 'fftw_lock_fun'"),
    # the one-call transforms
    ("x int64", lambda lib: lib.nufft1d1(np.zeros(1, "int64"), np.zeros(1), (4,)),
     "x dtype should be"),
    ("n_modes a string", lambda lib: lib.nufft1d1(np.zeros(1), np.zeros(1), ""),
     "n_modes must be a tuple or an integer"),
    ("n_modes 2-D for 1-D", lambda lib: lib.nufft1d1(np.zeros(1), np.zeros(1), (2, 2)),
     "n_modes dimension does not match"),
    ("n_modes not integers", lambda lib: lib.nufft1d1(np.zeros(1), np.zeros(1), (2.5,)),
     "all elements of input n_modes must be integer"),
    ("no n_modes nor out", lambda lib: lib.nufft1d1(np.zeros(1), np.zeros(1)),
     "type 1 input must supply n_modes"),
    ("c size 3 for 2 points", lambda lib: lib.nufft1d1(np.zeros(2), zeros(3), 4),
     "c.size must be divisible by x.size"),
    ("c 2 points for 2-D", lambda lib: lib.nufft2d1(X, Y, zeros(M + 1), 4),
     "c.size must be divisible by x.size"),
    ("f 3-D for 1-D type 2", lambda lib: lib.nufft1d2(np.zeros(1), zeros((2, 2, 2))),
     "type 2 input dimension must be either dim"),
    ("out 3-D for 1-D type 1",
     lambda lib: lib.nufft1d1(np.zeros(1), zeros(1), 4, out=zeros((2, 2, 4))),
     "type 2 input dimension must be either dim"),
    ("n_trans of c and out",
     lambda lib: lib.nufft1d1(np.zeros(1), zeros((3, 1)), 4, out=zeros((2, 4))),
     "input n_trans and output n_trans do not match"),
    ("n_modes and out", lambda lib: lib.nufft1d1(np.zeros(1), zeros(1), 4, out=zeros(3)),
     "input n_modes and output n_modes do not match"),
    ("x 2-D", lambda lib: lib.nufft1d1(np.stack([X, X]), zeros(2 * M), 4),
     "x must be a vector"),
]


def raised(call):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            call()
        except Exception as e:  # noqa: BLE001 -- the exception is what is compared
            return e
    raise AssertionError("no exception raised")


@pytest.mark.parametrize("call,phrase", [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_same_exception_as_finufft(call, phrase):
    theirs, ours = raised(lambda: call(finufft)), raised(lambda: call(nudt))
    assert phrase in str(theirs), f"finufft says {theirs!r}: the table is out of date"
    assert isinstance(ours, type(theirs)), f"finufft raises {theirs!r}, nudt {ours!r}"
    assert phrase in str(ours), ours
    # and what a numpy user catches: ValueError for shapes and values, TypeError for types
    assert isinstance(ours, (ValueError, TypeError)), ours


# (id, call, the argument copied)
COPIES = [
    ("strided x", lambda lib: lib.Plan(1, (4,)).setpts(np.repeat(X, 2)[::2]), "x"),
    ("Fortran data", lambda lib: planned(lib, 2, (4, 3)).execute(zeros((4, 3), order="F")),
     "data"),
    ("strided data of the adjoint",
     lambda lib: planned(lib, 2, (4,)).execute_adjoint(np.repeat(C, 2)[::2]), "data"),
    ("Fortran f", lambda lib: lib.nufft2d2(X, Y, zeros((4, 3), order="F")), "data"),
]


@pytest.mark.parametrize("call,name", [c[1:] for c in COPIES], ids=[c[0] for c in COPIES])
def test_copies_warn_as_finufft(call, name):
    for lib in (finufft, nudt):
        with pytest.warns(UserWarning) as record:
            call(lib)
        msgs = [str(w.message) for w in record]
        assert any(f"Argument `{name}` does not satisfy the following requirement: C. "
                   "Copying array" in m for m in msgs), (lib.__name__, msgs)


def test_copy_warning_points_at_the_caller():
    """The warning names the user's line, not nudt's internals, so that it can be filtered
    by module as any other."""
    with pytest.warns(UserWarning) as record:
        planned(nudt, 2, (4, 3)).execute(zeros((4, 3), order="F"))
    assert record[0].filename == __file__


def test_contiguous_input_does_not_warn():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        planned(nudt, 1, (4, 3)).execute(C)
        nudt.nufft2d2(X, Y, zeros((4, 3)))
