"""cufinufft's Python interface on nudt's CUDA backend.

Importing this module raises ImportError, with the reason, where it cannot work: in a build
without the CUDA backend (the default ``pip install ./python``; build with
``MATURIN_PEP517_ARGS="--features cuda" python3 -m pip install ./python`` for it).
"""

from . import _nudt

if not _nudt.CUDA_BUILT:
    raise ImportError(
        "nudt.cuda: this nudt was built without the CUDA backend; reinstall with "
        "MATURIN_PEP517_ARGS=\"--features cuda\" python3 -m pip install ./python")
raise ImportError("nudt.cuda: the cufinufft interface is not part of this build yet")
