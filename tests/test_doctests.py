"""The package's docstring examples (``>>>``) run as doctests, so that they stay true."""

from __future__ import annotations

import doctest
import importlib
from pathlib import Path

import pytest

import roofline

PACKAGE = Path(roofline.__file__).parent


def _modules_with_examples() -> list[str]:
    names = []
    for path in sorted(PACKAGE.rglob("*.py")):
        if ">>>" not in path.read_text(encoding="utf-8"):
            continue
        parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
        if parts[-1] == "__init__":
            parts = parts[:-1]
        names.append(".".join(parts))
    return names


MODULES = _modules_with_examples()


def test_the_examples_are_found():
    # the modules whose docstrings show examples today; a new one joins automatically
    for name in ("roofline.costs", "roofline.catalog", "roofline.transformer", "roofline.tiles"):
        assert name in MODULES


@pytest.mark.parametrize("name", MODULES)
def test_docstring_examples(name):
    module = importlib.import_module(name)
    flags = doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE
    result = doctest.testmod(module, optionflags=flags, report=True, verbose=False)
    assert result.attempted > 0, f"{name}: no example ran"
    assert result.failed == 0, f"{name}: {result.failed} docstring example(s) failed (see above)"
