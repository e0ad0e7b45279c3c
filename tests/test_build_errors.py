"""`make book` names the cause when it fails: the notebook and the cell that raised."""
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent

BAD_NOTEBOOK = '''---
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
'''


@pytest.mark.slow
def test_failing_notebook_is_named_with_its_cell(tmp_path):
    shutil.copytree(ROOT / "tools", tmp_path / "tools")
    shutil.copy(ROOT / "_config.yml", tmp_path / "_config.yml")
    (tmp_path / "_toc.yml").write_text("format: jb-book\nroot: intro\nchapters:\n  - file: chapters/buggy\n")
    (tmp_path / "intro.md").write_text("# Intro\n")
    (tmp_path / "chapters").mkdir()
    (tmp_path / "chapters" / "buggy.md").write_text(BAD_NOTEBOOK)
    result = subprocess.run([sys.executable, str(tmp_path / "tools" / "build_book.py")],
                            cwd=tmp_path, capture_output=True, text=True, timeout=300)
    assert result.returncode != 0
    assert "chapters/buggy.md failed in the cell" in result.stderr
    assert 'raise RuntimeError("deliberate failure in cell two")' in result.stderr
    assert "RuntimeError: deliberate failure in cell two" in result.stderr
