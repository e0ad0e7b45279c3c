"""Checks on sizes passed to the cost formulas.

Sizes may be plain numbers, numpy arrays or sympy expressions. Numbers and arrays
must be positive and finite; sympy expressions are accepted as they are (declare
symbols with `positive=True` so that limits and simplifications work).
"""

from __future__ import annotations

import math
import numbers
import sys

__all__ = ["check_size", "is_symbolic"]


def is_symbolic(value) -> bool:
    """True for a sympy expression (without importing sympy when it is not loaded)."""
    sympy = sys.modules.get("sympy")
    return sympy is not None and isinstance(value, sympy.Basic)


def check_size(name: str, value, allow_zero: bool = False):
    """Return `value` if it is a valid size; raise TypeError/ValueError saying what is expected."""
    if is_symbolic(value):
        if value.is_number:
            return check_size(name, float(value), allow_zero)
        if value.is_positive is False or (value.is_nonnegative is False):
            raise ValueError(f"{name} = {value} cannot be positive; sizes must be positive")
        return value
    if isinstance(value, bool):
        raise TypeError(f"{name} must be a number, got the boolean {value!r}")
    if isinstance(value, numbers.Real):
        x = float(value)
        if math.isnan(x):
            raise ValueError(f"{name} is NaN; give a positive number")
        if math.isinf(x):
            raise ValueError(f"{name} is infinite; give a positive, finite number")
        if x < 0 or (x == 0 and not allow_zero):
            raise ValueError(
                f"{name} must be {'zero or more' if allow_zero else 'positive'}, got {value!r}"
            )
        return value
    np = sys.modules.get("numpy")
    if np is not None and isinstance(value, np.ndarray):
        if value.dtype.kind not in "iuf":
            raise TypeError(f"{name} must hold numbers, got an array of {value.dtype}")
        if value.size and not np.all(np.isfinite(value)):
            raise ValueError(f"{name} holds NaN or infinite values; give positive, finite sizes")
        if value.size and (np.any(value < 0) or (not allow_zero and np.any(value == 0))):
            raise ValueError(f"{name} must be positive everywhere, got {value!r}")
        return value
    if isinstance(value, (list, tuple)) and np is not None:
        return check_size(name, np.asarray(value, dtype=float), allow_zero)
    raise TypeError(
        f"{name} must be a number, a numpy array or a sympy symbol, got {value!r} "
        f"({type(value).__name__})"
    )
