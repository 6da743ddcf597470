"""pytest plugin: mri-nufft's own operator tests, run on nudt's backends.

Loaded with ``-p nudt_upstream_plugin`` (``run.py`` puts this folder on ``PYTHONPATH``)
into a pytest session on mri-nufft's ``tests/`` folder as its source distribution ships it.
mri-nufft's tests name their backends in lists given to ``pytest_cases.parametrize``
(``@parametrize("backend", [...])`` or ``@parametrize(backend=[...])``); this plugin wraps
that function before their modules import it, so that every list naming ``"finufft"`` also
names ``"nudt"``, and every list naming ``"cufinufft"`` also ``"nudt-cuda"``: the tests then
treat nudt's operators as they treat the backends nudt stands in for. Their own conftest's
``--backend nudt`` (or ``nudt-cuda``) then keeps the cases of that backend only, and
``--ref finufft`` keeps finufft as the reference.

Then (``pytest_collection_modifyitems``) every case that is not of a nudt backend is
deselected, and the cases in ``EXCLUDED`` are skipped with the reason written there; and at
the end (``pytest_sessionfinish``) a session in which no nudt case passed fails, so that a
change in mri-nufft's tests that this plugin no longer follows cannot pass by running
nothing.
"""

import re

import pytest
import pytest_cases

import nudt.mrinufft  # noqa: F401 -- registers "nudt" and "nudt-cuda" before their conftest

# Which backend each of nudt's stands in for in mri-nufft's parametrisations.
STANDS_IN_FOR = {"finufft": "nudt", "cufinufft": "nudt-cuda"}
NUDT_BACKENDS = ("nudt", "nudt-cuda")

# (regular expression on the test's node id, reason): cases of nudt's backends that are
# skipped. Each is a feature nudt's backends do not offer (or a test that asks for it of
# every backend in its list), never a wrong result.
EXCLUDED = [
    (r"test_autodiff\.py::",
     "gradients through the operator (mri-nufft's torch autograd wrappers, wrt_data / "
     "wrt_traj): nudt's backends say autograd_available = False; nudt.torch has its own "
     "differentiable transforms (python/tests/test_torch.py)"),
    (r"test_density_for_op\.py::test_pipe\[backend=nudt(-cuda)?-.*-1\]$",
     "pipe density with osf=1: nudt's fine grid is 1.25 to 2.5 times the image's, as "
     "finufft's and cufinufft's are, for which mri-nufft skips the same case"),
]

_original = pytest_cases.parametrize
_seen = {"passed": 0}


def _with_nudt(values):
    """``values`` (a backend list) with nudt's backends after those they stand in for."""
    if not isinstance(values, (list, tuple)):
        return values
    out = []
    for v in values:
        out.append(v)
        if isinstance(v, str) and v in STANDS_IN_FOR and STANDS_IN_FOR[v] not in values:
            out.append(STANDS_IN_FOR[v])
    return type(values)(out)


def parametrize(argnames=None, argvalues=None, *args, **kwargs):
    """pytest_cases.parametrize, nudt's backends added to backend lists."""
    if argnames == "backend":
        argvalues = _with_nudt(argvalues)
    if "backend" in kwargs:
        kwargs["backend"] = _with_nudt(kwargs["backend"])
    return _original(argnames, argvalues, *args, **kwargs)


parametrize.__doc__ = _original.__doc__
pytest_cases.parametrize = parametrize


def _backend_of(item):
    """The nudt backend a collected case runs on, or None."""
    ids = re.findall(r"[\[\-=]((?:nudt-cuda)|(?:nudt))(?=[\]\-])", item.nodeid)
    return ids[0] if ids else None


def pytest_collection_modifyitems(config, items):
    keep, drop = [], []
    for item in items:
        (keep if _backend_of(item) else drop).append(item)
        for pattern, reason in EXCLUDED:
            if re.search(pattern, item.nodeid):
                item.add_marker(pytest.mark.skip(reason=f"nudt excludes: {reason}"))
    if drop:
        config.hook.pytest_deselected(items=drop)
    items[:] = keep


def pytest_runtest_logreport(report):
    if report.when == "call" and report.passed:
        _seen["passed"] += 1


def pytest_sessionfinish(session, exitstatus):
    if session.config.option.collectonly:
        return
    if _seen["passed"] == 0 and exitstatus == 0:
        print("\nnudt_upstream_plugin: no case of a nudt backend passed; mri-nufft's tests "
              "no longer name finufft or cufinufft as this plugin expects")
        session.exitstatus = 1
