"""Figures and exercises numbered where they live: Figure 6.2, Exercise 12.3 (issue 36).

Sphinx (numfig, no numbered sections) counts figures and exercises across the whole book,
so one new figure in chapter 6 renumbered every later figure, and one new exercise in
chapter 12 renumbered chapter 13's in the Colab twin. Here each document's figures and
exercises restart at 1 under the document's own label: a chapter's number (the two digits
its file name starts with: ``chapters/06_...`` -> ``6``), a homework set's ``H`` and part
(``exercises/homework_part2`` -> ``H2``), the worked exam's ``E`` (``exercises/exam`` ->
Exercise E.3). Other pages (glossary, appendix) keep no label.

`label_of` is the one rule; `tools/notebooks.py` numbers the Colab twins with it too.
"""

from __future__ import annotations

import re

_CHAPTER = re.compile(r"(?:^|/)chapters/(\d+)_")
_HOMEWORK = re.compile(r"(?:^|/)exercises/homework_part(\d+)$")
_EXAM = re.compile(r"(?:^|/)exercises/exam$")


def label_of(docname: str) -> str | None:
    """The number prefix of a document ("6", "H2"), or None for an unnumbered page."""
    if match := _CHAPTER.search(docname):
        return str(int(match.group(1)))
    if match := _HOMEWORK.search(docname):
        return f"H{match.group(1)}"
    if _EXAM.search(docname):
        return "E"
    return None


def number(docname: str, position: int) -> str:
    """The shown number of the `position`-th (from 1) figure or exercise of a document."""
    label = label_of(docname)
    return f"{label}.{position}" if label else str(position)


def renumber(toc_fignumbers: dict) -> None:
    """Each document's figures and exercises restart at 1 under its label, in document order
    (Sphinx's numbers are tuples, which it shows joined with dots)."""
    for docname, by_type in toc_fignumbers.items():
        label = label_of(docname)
        for numbers in by_type.values():
            in_order = sorted(numbers, key=lambda ident: numbers[ident])
            for position, ident in enumerate(in_order, 1):
                numbers[ident] = (label, position) if label else (position,)


#: Attribute of the Sphinx app: whether this build read or removed any page (figure numbers
#: come from the pages' doctrees and the table of contents, which change only then).
_READ_OR_REMOVED = "_roofline_pages_read_or_removed"


def _note_change(app, *args) -> None:
    setattr(app, _READ_OR_REMOVED, True)


def setup(app):
    from sphinx.environment.collectors.toctree import TocTreeCollector

    if not getattr(TocTreeCollector.assign_figure_numbers, "_per_document", False):
        book_wide = TocTreeCollector.assign_figure_numbers

        def assign_figure_numbers(self, env) -> list[str]:
            # Sphinx numbers book-wide and lists the pages whose numbers moved against ITS
            # last numbering; renumber, and list the pages whose shown numbers moved, so a
            # no-change build rewrites nothing.
            if not getattr(env.app, _READ_OR_REMOVED, True):
                # no page read or removed: the numbers saved with the environment stand, and
                # numbering again would load every page's saved doctree (0.8 s) to find that
                return []
            before = {
                doc: {t: dict(n) for t, n in by.items()} for doc, by in env.toc_fignumbers.items()
            }
            book_wide(self, env)
            renumber(env.toc_fignumbers)
            docs = set(before) | set(env.toc_fignumbers)
            return sorted(d for d in docs if before.get(d) != env.toc_fignumbers.get(d))

        assign_figure_numbers._per_document = True  # type: ignore[attr-defined]
        TocTreeCollector.assign_figure_numbers = assign_figure_numbers
    setattr(app, _READ_OR_REMOVED, False)
    app.connect("env-purge-doc", _note_change)
    # last, after any handler that adds pages to read
    app.connect(
        "env-before-read-docs",
        lambda app, env, docnames: docnames and _note_change(app),
        priority=900,
    )
    return {"version": "1", "parallel_read_safe": True, "parallel_write_safe": True}
