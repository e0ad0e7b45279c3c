"""What a newcomer trips on (issue 24, item 5): words used with no definition, visible code that
uses names only a hidden cell defines, and chapter 7 pointing forward to chapter 8."""

import ast
import builtins
import re
from pathlib import Path

import jupytext
import notebooks
import pytest

ROOT = Path(__file__).resolve().parent.parent
SOURCES = notebooks.notebook_sources()
#: Words the issue found undefined, and more found on the pages: each is a glossary entry now.
WORDS = (
    "softmax",
    "transformer",
    "tensor parallelism",
    "fully sharded data parallelism",
    "expert parallelism",
    "mixture of experts",
    "streaming multiprocessor",
    "VMEM",
    "shared memory",
    "grouped-query attention",
    "gradient",
    "sharding",
    "STREAM",
)


def test_the_words_are_in_the_glossary():
    terms = notebooks.glossary_terms()
    missing = [w for w in WORDS if w.lower() not in terms]
    assert not missing, f"no glossary entry for {missing}"


@pytest.mark.parametrize(
    "page, word",
    [
        ("chapters/06_communication_rooflines.md", "tensor parallelism"),
        ("chapters/06_communication_rooflines.md", "fully sharded data parallelism"),
        ("chapters/06_communication_rooflines.md", "expert parallelism"),
        ("chapters/06_communication_rooflines.md", "mixture of experts"),
        ("chapters/07_transformer_layer.md", "transformer"),
        ("chapters/07_transformer_layer.md", "softmax"),
        ("chapters/08_problems.md", "VMEM"),
        ("chapters/08_problems.md", "streaming multiprocessor"),
        ("chapters/09_measuring_a_roofline.md", "STREAM"),
    ],
)
def test_first_use_links_the_glossary(page, word):
    text = (ROOT / page).read_text(encoding="utf-8")
    prose = re.sub(r"^```\{code-cell\}.*?^```[ \t]*$", "", text, flags=re.M | re.S)  # code out
    linked = re.search(r"\{term\}`(?:[^`<]*<)?" + re.escape(word) + r">?`", prose, re.I)
    assert linked, f"{page}: {word!r} is never linked to the glossary"


def _names(source):
    """(names stored, names loaded) by a cell's code."""
    stores, loads = set(), set()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Name):
            (stores if isinstance(node.ctx, ast.Store) else loads).add(node.id)
        elif isinstance(node, (ast.FunctionDef, ast.ClassDef)):
            stores.add(node.name)
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            stores.update((a.asname or a.name).split(".")[0] for a in node.names)
        elif isinstance(node, ast.arg):
            stores.add(node.arg)
    return stores, loads


@pytest.mark.parametrize("md", SOURCES, ids=lambda p: p.name)
def test_visible_code_defines_what_it_uses(md):
    """A reader sees code cells (shown or behind 'show input'), never a `remove-cell`: a name a
    visible cell uses must come from a visible cell, or the reader cannot run what they see."""
    hidden, visible, problems = {}, set(), []
    for index, cell in enumerate(jupytext.read(md).cells):
        if cell.cell_type != "code":
            continue
        try:
            stores, loads = _names(cell.source)
        except SyntaxError:
            continue
        if "remove-cell" in cell.metadata.get("tags", []):
            hidden.update(dict.fromkeys(stores - visible, index))
            continue
        used = sorted(
            n for n in loads - stores - visible if n in hidden and not hasattr(builtins, n)
        )
        if used:
            problems.append(f"cell {index} uses {used}, defined only in hidden cells")
        visible |= stores
    assert not problems, f"{md.name}: " + "; ".join(problems)


def test_chapter_7_does_not_lean_on_chapter_8():
    text = (ROOT / "chapters" / "07_transformer_layer.md").read_text(encoding="utf-8")
    assert "08_problems" not in text
