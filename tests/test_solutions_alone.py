"""Every solution runs on its own (issue 35): a reader opens one solution and runs its code after
the chapter's own cells, without having run (or opened) the solutions above it.

Checked statically, for every notebook at once (executing each solution alone after its chapter
would take minutes): each name a solution's code reads must be defined by the notebook's
non-solution code cells, by that solution's own code, or be a Python builtin. Chapter 12's
"When decode turns compute-bound" read `h200`, which only the solution above it defined.
"""

from __future__ import annotations

import ast
import builtins

import jupytext
import notebooks
import pytest

SOURCES = notebooks.notebook_sources()


def _python(source: str) -> str:
    """A code cell as Python: IPython magics and shell lines (`%`, `!`) dropped."""
    return "\n".join(
        "" if line.lstrip().startswith(("%", "!")) else line for line in source.splitlines()
    )


def _defined(tree: ast.AST) -> set[str]:
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Name) and isinstance(node.ctx, (ast.Store, ast.Del)):
            names.add(node.id)
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.add(node.name)
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            names.update((a.asname or a.name).split(".")[0] for a in node.names)
        elif isinstance(node, ast.arg):
            names.add(node.arg)
        elif isinstance(node, ast.ExceptHandler) and node.name:
            names.add(node.name)
    return names


def _read(tree: ast.AST) -> set[str]:
    return {
        node.id
        for node in ast.walk(tree)
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load)
    }


def _cells(md_path):
    """(solution label or None, code) for each code cell, in order."""
    notebook = jupytext.read(md_path, fmt="md:myst")
    label = None
    for kind, piece in notebooks._segments(notebook):
        if kind == "start":
            label = piece.strip()
        elif kind == "end":
            label = None
        elif kind == "code":
            yield label, _python(piece.source)


def missing_names(md_path) -> dict[str, set[str]]:
    """{solution label: names its code reads that only other solutions (or nothing) define}."""
    cells = list(_cells(md_path))
    chapter: set[str] = set(dir(builtins)) | {"display", "get_ipython"}
    for label, code in cells:
        if label is None:
            chapter |= _defined(ast.parse(code))
    solutions: dict[str, list[str]] = {}
    for label, code in cells:
        if label is not None:
            solutions.setdefault(label, []).append(code)
    missing = {}
    for label, codes in solutions.items():
        tree = ast.parse("\n".join(codes))
        unknown = _read(tree) - _defined(tree) - chapter
        if unknown:
            missing[label] = unknown
    return missing


@pytest.mark.parametrize("md", SOURCES, ids=lambda p: p.stem)
def test_every_solution_runs_after_the_chapter_alone(md):
    missing = missing_names(md)
    assert not missing, (
        f"{md.name}: these solutions read names that only another solution defines: "
        + "; ".join(f"{label}: {sorted(names)}" for label, names in missing.items())
        + " (define them in the solution itself)"
    )


def test_the_check_finds_a_name_another_solution_defines(tmp_path):
    """The bug of issue 35, rebuilt: a solution reading `h200` from the solution above it."""
    md = tmp_path / "x.md"
    md.write_text(
        "```{code-cell} ipython3\nimport math\n```\n\n"
        "```{solution-start} a\n:class: dropdown\n```\n"
        '```{code-cell} ipython3\nh200 = "H200"\n```\n```{solution-end}\n```\n\n'
        "```{solution-start} b\n:class: dropdown\n```\n"
        "```{code-cell} ipython3\nprint(math.pi, h200)\n```\n```{solution-end}\n```\n",
        encoding="utf-8",
    )
    assert missing_names(md) == {"b": {"h200"}}
