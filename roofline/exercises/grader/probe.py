"""What the grader asks a student's kernel for: runs INSIDE the kernel, reports, judges nothing.

The grader imports this module silently in each kernel before the student's cells (under a
random name) and, after each cell, evaluates `<name>.report()` as a user expression. It reads
`STUDENT_ID` and `answers` from IPython's user namespace and encodes them as JSON.

Everything it calls is bound here when the module is imported, before any student code runs:
a notebook's own `list = ...`, `str = ...` or `len = ...` lives in the user namespace and
cannot reach these names (a student who patches the `builtins` module afterwards only spoils
their own report, which they could have typed anyway). Imports only the standard library
(numpy and sympy values are recognised by duck typing).
"""

from __future__ import annotations

import builtins as _builtins
import json as _json
import numbers as _numbers

_B = {
    name: getattr(_builtins, name)
    for name in (
        "isinstance",
        "len",
        "str",
        "repr",
        "type",
        "int",
        "float",
        "complex",
        "bool",
        "dict",
        "list",
        "getattr",
        "Exception",
        "Ellipsis",
        "min",
    )
}
_dumps = _json.dumps
_Number = _numbers.Number
TEXT_CAP, ID_CAP, ANSWERS_CAP, KEY_CAP, OTHER_CAP = 2000, 1000, 100, 50, 200
HUGE_INT_BITS = 1200


def _plain(value):
    """A numpy scalar or one-element array as the Python number it holds; anything else as is."""
    b = _B
    try:
        module = b["getattr"](b["type"](value), "__module__", "") or ""
        if module.startswith("numpy"):
            size = b["getattr"](value, "size", None)
            if size == 1 and b["getattr"](value, "item", None) is not None:
                return value.item()
    except b["Exception"]:
        pass
    return value


def _number_or_text(value) -> dict | None:
    """The JSON form of a bool, int, float, complex or str (None for other types)."""
    b, isinstance = _B, _B["isinstance"]
    if isinstance(value, b["bool"]):
        return {"type": "other", "name": "bool", "value": b["repr"](value)}
    if isinstance(value, b["int"]):
        if value.bit_length() >= HUGE_INT_BITS:
            return {"type": "other", "name": "int", "value": "a huge integer"}
        return {"type": "int", "value": b["int"].__repr__(value)}
    if isinstance(value, b["float"]):
        return {"type": "float", "value": b["float"].__repr__(value)}
    if isinstance(value, b["complex"]):
        return {"type": "complex", "value": [b["repr"](value.real), b["repr"](value.imag)]}
    if isinstance(value, b["str"]):
        return {"type": "str", "value": b["str"].__str__(value)[:TEXT_CAP]}
    return None


def encode(value) -> dict:
    """One answer as JSON-able {"type": none|int|float|complex|str|sympy|other, "value": ...}."""
    b = _B
    name = "value"
    try:
        value = _plain(value)
        name = b["str"](b["type"](value).__name__)[:KEY_CAP]
        if value is None or value is b["Ellipsis"]:
            return {"type": "none"}
        simple = _number_or_text(value)
        if simple is not None:
            return simple
        module = b["getattr"](b["type"](value), "__module__", "") or ""
        if module.startswith("sympy"):
            if b["getattr"](value, "is_number", False) and value.is_real:
                return {"type": "float", "value": b["repr"](b["float"](value))}
            return {"type": "sympy", "value": b["str"](value)[:TEXT_CAP]}
        as_float = _float_like(value)
        if as_float is not None:
            return as_float
        return {"type": "other", "name": name, "value": b["repr"](value)[:OTHER_CAP]}
    except b["Exception"]:
        return {"type": "other", "name": name, "value": "<unprintable>"}


def _float_like(value) -> dict | None:
    """A Fraction, Decimal or any object whose type has `__float__` (or is a registered
    `numbers.Number`) as the float the notebook's own check reads it as, exactly as
    `roofline.exercises.core._as_details` does (`float(answer)`); None when float() fails,
    which the check calls unreadable too."""
    b = _B
    kind = b["type"](value)
    if not (b["isinstance"](value, _Number) or b["getattr"](kind, "__float__", None) is not None):
        return None
    try:
        number = b["float"](value)
    except b["Exception"]:
        return None
    if not b["isinstance"](number, b["float"]):
        return None
    return {"type": "float", "value": b["float"].__repr__(number)}


def _student_id(sid) -> tuple[object, int]:
    """(the id as text, capped, or None; its full length)."""
    b = _B
    try:
        if b["isinstance"](sid, b["str"]):
            text = b["str"].__str__(sid)
            return text[:ID_CAP], b["len"](text)
        return (None if sid is None else b["repr"](sid)[:OTHER_CAP]), 0
    except b["Exception"]:
        return "<unprintable>", 0


def _answers(answers) -> dict | None:
    b = _B
    try:
        if not b["isinstance"](answers, b["dict"]):
            return None
        items = b["list"](b["dict"].items(answers))[:ANSWERS_CAP]
        return {b["str"](key)[:KEY_CAP]: encode(value) for key, value in items}
    except b["Exception"]:
        return None


def report_of(namespace) -> str:
    """The JSON report of `namespace` (a dict: the kernel's user namespace)."""
    b = _B
    sid, length = _student_id(b["dict"].get(namespace, "STUDENT_ID"))
    return _dumps(
        {
            "has_id": b["dict"].__contains__(namespace, "STUDENT_ID"),
            "student_id": sid,
            "id_length": length,
            "answers": _answers(b["dict"].get(namespace, "answers")),
        }
    )


def report() -> str:
    """The report of the running IPython kernel's user namespace (what the grader evaluates)."""
    from IPython import get_ipython

    shell = get_ipython()
    return report_of(shell.user_ns if shell is not None else {})
