"""nudt: generated, machine-tuned non-uniform FFTs, with finufft's Python interface.

``import nudt as finufft`` runs code written for finufft: the one-call transforms
``nufft1d1`` ... ``nufft3d3`` and the ``Plan`` class (``setpts``, ``execute``,
``execute_adjoint``) take the same arguments, keywords and defaults, and give the same
results to the requested tolerance. ``import nudt.cuda as cufinufft`` does the same for
cufinufft's interface on GPU arrays (CuPy, PyTorch, Numba); without a GPU importing it
raises ImportError saying why. ``import nudt.mrinufft`` registers the mri-nufft backends
"nudt" and "nudt-cuda". A plan may be shared between threads (calls take turns, without the
GIL).
"""

from . import _interfaces, _nudt
from ._errors import NudtShapeError, NudtTypeError, NudtValueError
from ._nudt import free_kept_work, kept_work_bytes
from ._interfaces import (
    Cotangents,
    Plan,
    nufft1d1, nufft1d2, nufft1d3,
    nufft2d1, nufft2d2, nufft2d3,
    nufft3d1, nufft3d2, nufft3d3,
)

__version__ = _nudt.__version__

# finufft's names (the interface's own list), the exception classes, and the host work
# buffers' cache: what dropped plans left for the next (kept_work_bytes), and freeing it.
__all__ = [
    *_interfaces.__all__,
    "NudtShapeError", "NudtTypeError", "NudtValueError",
    "free_kept_work", "kept_work_bytes",
]
