"""`make book` names the cause when it fails: the notebook and the cell that raised."""

import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent

BAD_NOTEBOOK = """---
jupytext:
  text_representation:
    extension: .md
    format_name: myst
kernelspec:
  display_name: Python 3
  language: python
  name: python3
---
# A chapter with a bug

```{code-cell} ipython3
x = 1
```

```{code-cell} ipython3
raise RuntimeError("deliberate failure in cell two")
```
"""


@pytest.mark.slow
def test_failing_notebook_is_named_with_its_cell(tmp_path):
    shutil.copytree(ROOT / "tools", tmp_path / "tools")
    shutil.copytree(ROOT / "_ext", tmp_path / "_ext")  # the book's Sphinx extensions
    shutil.copy(ROOT / "_config.yml", tmp_path / "_config.yml")
    (tmp_path / "_toc.yml").write_text(
        "format: jb-book\nroot: intro\nchapters:\n  - file: chapters/buggy\n"
    )
    (tmp_path / "intro.md").write_text("# Intro\n")
    (tmp_path / "chapters").mkdir()
    (tmp_path / "chapters" / "buggy.md").write_text(BAD_NOTEBOOK)
    result = subprocess.run(
        [sys.executable, str(tmp_path / "tools" / "build_book.py")],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert result.returncode != 0
    assert "chapters/buggy.md failed in the cell" in result.stderr
    assert 'raise RuntimeError("deliberate failure in cell two")' in result.stderr
    assert "RuntimeError: deliberate failure in cell two" in result.stderr


@pytest.mark.slow
def test_teacher_build_has_no_solutions(tmp_path):
    """`make teacher-book` (build_book.py --no-solutions) drops every solution, code included."""
    for name in ("tools", "roofline", "_ext"):  # _ext: the book's Sphinx extensions
        shutil.copytree(ROOT / name, tmp_path / name, ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copy(ROOT / "_config.yml", tmp_path / "_config.yml")
    if (ROOT / "_static").exists():
        shutil.copytree(ROOT / "_static", tmp_path / "_static")
    (tmp_path / "intro.md").write_text("# Intro\n")
    (tmp_path / "chapters").mkdir()
    source = (ROOT / "chapters" / "01_where_does_the_time_go.md").read_text()
    (tmp_path / "chapters" / "ch.md").write_text(source)
    # the chapter's cross-references need their targets: one-line stand-ins, and the glossary
    shutil.copy(ROOT / "glossary.md", tmp_path / "glossary.md")
    targets = sorted(
        {
            explicit or bare
            for explicit, bare in re.findall(r"\{doc\}`(?:[^`<]*<([^>]+)>|([^`<>]+))`", source)
        }
    )
    for target in targets:
        (tmp_path / "chapters" / f"{target}.md").write_text(f"# {target}\n")
    toc = "".join(f"  - file: chapters/{t}\n" for t in ["ch", *targets]) + "  - file: glossary\n"
    (tmp_path / "_toc.yml").write_text("format: jb-book\nroot: intro\nchapters:\n" + toc)
    assert "solution-start" in source
    out = tmp_path / "teacher"
    result = subprocess.run(
        [
            sys.executable,
            str(tmp_path / "tools" / "build_book.py"),
            "--no-solutions",
            "--out",
            str(out),
        ],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=600,
        env={**__import__("os").environ, "PYTHONPATH": str(tmp_path)},
    )
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
    page = (out / "_build" / "html" / "chapters" / "ch.html").read_text()
    assert "exercise" in page  # the exercises are still there
    assert 'class="solution' not in page and "solution-content" not in page
