"""Helpers for the book's notebooks that also work outside the book build (Colab, Jupyter).

`glue(name, value)` hands a computed value to the page's prose (MyST-NB's glue),
so no number in the text is typed by hand. Where MyST-NB is not installed (Colab),
it does nothing visible.
"""

from __future__ import annotations

__all__ = ["glue", "glue_text", "table", "link", "Raw", "expect_error"]


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


class expect_error:
    """Run a block that should fail and show its error message instead of a traceback.

        with rl.book.expect_error():
            rl.get_chip("H10")      # prints: KeyError: no chip named 'H10' ...

    The cell (and "Run all" in Colab) goes on after it. A block that raises nothing is a
    mistake in the page, so that raises AssertionError; pass `kind` (an exception class or a
    tuple of them) to let only that kind through.
    """

    def __init__(self, kind=Exception):
        self.kind = kind
        self.error = None  # the exception caught, for a later cell to look at

    def __enter__(self):
        return self

    def __exit__(self, exc_type, exc, tb):
        if exc_type is None:
            raise AssertionError("the block in `with expect_error()` raised no error")
        if not issubclass(exc_type, self.kind):
            return False  # an unexpected kind of error: let it through, traceback and all
        self.error = exc
        # KeyError's str() adds quotes around the message; the message itself reads better
        message = exc.args[0] if isinstance(exc, KeyError) and len(exc.args) == 1 else str(exc)
        print(f"{exc_type.__name__}: {message}")
        return True


class Raw(str):
    """Text that `table` inserts as HTML without escaping (e.g. a link from `link`)."""


def link(url: str, text: str) -> Raw:
    """An HTML link for a table cell."""
    import html

    return Raw(f'<a href="{html.escape(url)}">{html.escape(text)}</a>')


def table(header, rows, caption=None):
    """A small HTML table that looks the same on the web page, in Jupyter and in Colab.

    Cells are escaped unless they are `Raw`; numbers should already be formatted
    by `roofline.units`. `caption` (text, escaped) is written under the table: the place for a
    note that would otherwise stretch a cell (and the table) wide.
    """
    import html

    from IPython.display import HTML

    if any(not str(h).strip() for h in header):
        raise ValueError(
            f"table header {list(map(str, header))} has an empty cell: name every column "
            "(a screen reader reads the header before each cell), e.g. 'links' or 'chip'"
        )

    def cell(value, tag):
        text = value if isinstance(value, Raw) else html.escape(str(value))
        return f"<{tag}>{text}</{tag}>"

    head = "".join(cell(h, "th") for h in header)
    body = "".join("<tr>" + "".join(cell(c, "td") for c in row) + "</tr>" for row in rows)
    below = "" if caption is None else f"<caption>{html.escape(str(caption))}</caption>"
    return HTML(
        f"<table class='roofline-table'>{below}<thead><tr>{head}</tr></thead>"
        f"<tbody>{body}</tbody></table>"
    )
