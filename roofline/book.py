"""Helpers for the book's notebooks that also work outside the book build (Colab, Jupyter).

`glue(name, value)` hands a computed value to the page's prose (MyST-NB's glue),
so no number in the text is typed by hand. Where MyST-NB is not installed (Colab),
it does nothing visible.
"""

from __future__ import annotations

__all__ = ["glue", "glue_text"]


def glue(name: str, value, display: bool = False) -> None:
    """Store `value` under `name` for `{glue:text}` / `{glue:figure}` roles in the page."""
    try:
        from myst_nb import glue as _glue
    except ImportError:  # Colab or plain Jupyter: nothing to glue into
        return
    _glue(name, value, display=display)


def glue_text(**values) -> None:
    """Glue several strings at once: glue_text(h100_time=format_time(t), ridge="295")."""
    for name, value in values.items():
        glue(name, value, display=False)
