"""nudt's exceptions and warnings.

The three conventions nudt answers to disagree on classes: finufft's Python interface raises
``RuntimeError`` for bad sizes, shapes and options (``TypeError`` for array dtypes and
layouts); cufinufft raises ``TypeError`` for bad dtypes, layouts and shapes and
``ValueError`` for bad mode counts; a numpy user reaches for ``ValueError`` (bad values and
shapes) or ``TypeError`` (bad types). nudt raises classes that are several of these at once,
so that the ``except`` clause of code written for any of them catches what it expects. The
messages carry finufft's (``nudt``) or cufinufft's (``nudt.cuda``) key phrases, which their
users' tests match.
"""

import os
import sys
import warnings


class NudtValueError(ValueError, RuntimeError):
    """A bad value: size, tolerance, option, non-finite point."""


class NudtTypeError(TypeError, RuntimeError):
    """A bad type: a dtype other than the plan's, a layout nudt cannot use (``out`` not
    C-contiguous or not writeable), a non-integer where one is needed."""


class NudtShapeError(NudtValueError, TypeError):
    """A bad shape or number of arrays (points given for the wrong dimension, arrays of
    different lengths, data or out not shaped as the plan says): a ``RuntimeError`` as in
    finufft, a ``TypeError`` as in cufinufft, a ``ValueError`` as in numpy."""


_PACKAGE = os.path.dirname(os.path.abspath(__file__)) + os.sep


def warn_copy(name):
    """Warns, as finufft and cufinufft do, that argument `name` is copied to C order; the
    warning names the user's line that called into nudt (the first frame outside this
    package), so that it can be filtered by module like any other."""
    frame, level = sys._getframe(1), 2
    while frame is not None and frame.f_code.co_filename.startswith(_PACKAGE):
        frame, level = frame.f_back, level + 1
    warnings.warn(f"Argument `{name}` does not satisfy the following requirement: C. "
                  f"Copying array (this may reduce performance)", UserWarning,
                  stacklevel=level)
