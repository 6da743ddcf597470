"""nudt's exceptions.

finufft's Python interface raises ``RuntimeError`` for bad sizes, shapes and options, while a
numpy user reaches for ``ValueError`` (bad values and shapes) or ``TypeError`` (bad types).
nudt raises classes that are both, so code written for either convention catches them.
"""


class NudtValueError(ValueError, RuntimeError):
    """A bad value: size, shape, tolerance, option, non-finite point."""


class NudtTypeError(TypeError, RuntimeError):
    """A bad type: a dtype other than the plan's, a non-integer where one is needed."""
