"""How the package's objects show themselves in a notebook: a title and rows of label/value.

`Summary(title, rows)` renders the same rows as short text (`__repr__`, `print`) and as a
small HTML table (`_repr_html_`, what Jupyter and Colab show for a bare last line).
Values are formatted by the caller (with `roofline.units`); `quantity` does that for a
value that may be a plain number, a numpy array or a sympy expression.

Imports nothing heavy: numpy and sympy are looked up only if already loaded.
"""

from __future__ import annotations

import html
import sys

__all__ = ["Summary", "quantity"]


def quantity(value, formatter, max_items: int = 4) -> str:
    """`value` as text with its unit, e.g. quantity(9.89e14, format_flops_rate) -> "989 TFLOP/s".

    A sympy expression with symbols is shown as the formula (it has no single value), a
    sympy number as its value; a numpy array lists up to `max_items` values, or its range.
    Anything the formatter cannot read is shown with str().
    """
    sympy = sys.modules.get("sympy")
    if sympy is not None and isinstance(value, sympy.Basic):
        if not value.is_number:  # a formula: exact as it is, floats in it to 3 digits
            return str(value.evalf(3) if value.atoms(sympy.Float) else value)
        try:
            value = float(value)
        except (TypeError, ValueError):
            return str(value)
    np = sys.modules.get("numpy")
    if np is not None and isinstance(value, np.ndarray):
        flat = value.ravel()
        if flat.size == 0:
            return "(empty array)"
        try:
            if flat.size <= max_items:
                return ", ".join(formatter(x) for x in flat)
            return f"{formatter(flat.min())} to {formatter(flat.max())} ({flat.size} values)"
        except (TypeError, ValueError):
            return str(value)
    try:
        return formatter(value)
    except (TypeError, ValueError, OverflowError):
        return str(value)


class Summary:
    """A title and (label, text) rows, shown as aligned text or as an HTML table."""

    def __init__(self, title: str, rows):
        self.title = str(title)
        self.rows = [(str(label), str(text)) for label, text in rows]

    def text(self) -> str:
        """The title on its own line, then one indented `label  value` line per row."""
        width = max((len(label) for label, _ in self.rows), default=0)
        lines = [self.title] + [f"  {label.ljust(width)}  {text}" for label, text in self.rows]
        return "\n".join(lines)

    def html(self) -> str:
        """A two-column table with the title as its caption (every string escaped)."""
        body = "".join(
            f"<tr><th style='text-align:left;padding-right:1em'>{html.escape(label)}</th>"
            f"<td style='text-align:left'>{html.escape(text)}</td></tr>"
            for label, text in self.rows
        )
        return (
            f"<table class='roofline-summary'>"
            f"<caption style='text-align:left;font-weight:bold'>{html.escape(self.title)}"
            f"</caption><tbody>{body}</tbody></table>"
        )

    __str__ = text
    __repr__ = text
    _repr_html_ = html
