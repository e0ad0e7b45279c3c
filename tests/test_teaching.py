"""What issue 17 asks of the text, tested: chapters refer to each other by label (a typed
"Chapter 3" drifts when chapters move), every chapter links its words to the glossary, and
exercises transfer (few answers can be copied from the chapter's own printout)."""

from __future__ import annotations

import re

import lookup_share
import notebooks
import pytest

ROOT = notebooks.ROOT
CHAPTERS = sorted((ROOT / "chapters").glob("*.md"))
HOMEWORK = sorted((ROOT / "exercises").glob("*.md"))
PROSE_FILES = [ROOT / "intro.md", ROOT / "glossary.md", *CHAPTERS, *HOMEWORK]

TYPED_CHAPTER = re.compile(r"\b[Cc]hapters?\s+\d")


def prose(md_text: str) -> str:
    """A MyST notebook's markdown with code cells, front matter and HTML comments removed."""
    text = re.sub(r"\A---\n.*?\n---\n", "", md_text, flags=re.S)
    text = re.sub(r"```\{code-cell\}.*?\n```", "", text, flags=re.S)
    return re.sub(r"<!--.*?-->", "", text, flags=re.S)


def test_prose_helper_drops_code_cells():
    text = (
        "---\njupytext: x\n---\nSee chapter 2.\n```{code-cell} ipython3\nprint('chapter 9')\n```\n"
    )
    assert TYPED_CHAPTER.findall(prose(text)) == ["chapter 2"]


@pytest.mark.parametrize("path", PROSE_FILES, ids=lambda p: p.name)
def test_no_typed_chapter_numbers_in_prose(path):
    """Cross-references go through {doc} or {ref}, which follow a chapter when it moves."""
    found = [
        line.strip()
        for line in prose(path.read_text("utf-8")).splitlines()
        if TYPED_CHAPTER.search(line)
    ]
    assert not found, f"{path.name}: typed chapter numbers (use {{doc}} or {{ref}}): {found[:5]}"


@pytest.mark.parametrize("path", [ROOT / "intro.md", *CHAPTERS, *HOMEWORK], ids=lambda p: p.name)
def test_every_page_links_its_words_to_the_glossary(path):
    terms = re.findall(r"\{term\}`([^`]+)`", prose(path.read_text("utf-8")))
    assert len(terms) >= 3, f"{path.name} links only {len(terms)} words to the glossary"


def glossary_terms() -> set[str]:
    text = (ROOT / "glossary.md").read_text("utf-8")
    block = re.search(r"```\{glossary\}\n(.*?)\n```", text, flags=re.S)
    assert block, "glossary.md has no {glossary} block"
    return {
        line.strip().lower()
        for line in block.group(1).splitlines()
        if line.strip() and not line.startswith((" ", "\t"))
    }


def test_every_term_link_names_a_glossary_entry():
    """The build catches this too (a warning is an error); this says which page and term."""
    known = glossary_terms()
    missing = []
    for path in [ROOT / "intro.md", *CHAPTERS, *HOMEWORK]:
        for link in re.findall(r"\{term\}`([^`]+)`", path.read_text("utf-8")):
            target = re.search(r"<([^>]+)>\s*$", link)
            name = (target.group(1) if target else link).strip().lower()
            if name not in known:
                missing.append(f"{path.name}: {name}")
    assert not missing, missing


# ---------------------------------------------------------------- exercises that transfer
def test_printed_quantities_read_units_and_prefixes():
    found = lookup_share.printed_quantities(
        "takes 1.01 ms at 989.5 TFLOP/s; ridge 240.5 FLOPs/B, 16 GB read at 8,756 or 3e-3 s"
    )
    values = [(round(p.value, 9), p.unit) for p in found]
    assert values == [
        (0.00101, "s"),
        (989.5e12, "FLOP/s"),
        (240.5, "FLOPs/B"),
        (16e9, "B"),
        (8756.0, ""),
        (0.003, "s"),
    ]


def test_a_multiplier_answers_only_a_ratio():
    # "2x" or "4 ×" is a ratio; an intensity or a bare-number exercise of another kind must not
    # count it as its answer (issue 27.8: "fp8 doubles the ridge, 2x" blocked two exercises).
    found = lookup_share.printed_quantities("fp8 ridge is 2x the bf16 one, 4 × faster, x = 3")
    assert [(p.value, p.unit) for p in found] == [(2.0, "x"), (4.0, "x"), (3.0, "")]
    assert "x" not in lookup_share.KIND_UNITS["intensity"]
    assert "x" in lookup_share.KIND_UNITS["number"]


def test_a_printed_answer_counts_as_a_lookup_and_a_new_one_does_not(tmp_path):
    """Two fake pages for the same chapter source: one prints the answer of the chapter's first
    numeric exercise outside the exercise blocks, the other prints it only inside a solution."""
    from roofline.exercises import get_exercise

    md = ROOT / "chapters" / "01_where_does_the_time_go.md"
    first = next(
        a
        for i in lookup_share.chapter_exercise_ids(md)
        for a in lookup_share.numeric_answers(get_exercise(i))
    )
    ex_id, kind, value, _tol = first
    unit = lookup_share.KIND_UNITS[kind][0]
    shown = f"<main><p>the answer is {value!r} {unit}</p></main>"
    hidden = f"<main><div class='solution'><p>the answer is {value!r} {unit}</p></div></main>"
    (tmp_path / "shown.html").write_text(shown)
    (tmp_path / "hidden.html").write_text(hidden)
    assert ex_id in [
        x for x, _v, _c in lookup_share.chapter_share(md, tmp_path / "shown.html").lookups
    ]
    assert ex_id not in [
        x for x, _v, _c in lookup_share.chapter_share(md, tmp_path / "hidden.html").lookups
    ]


@pytest.mark.slow
@pytest.mark.xdist_group("book")
def test_at_most_a_quarter_of_numeric_exercises_are_lookups(book_html):
    shares = lookup_share.book_shares(book_html)
    numeric = sum(s.numeric for s in shares)
    lookups = [f"{s.chapter}: {x}" for s in shares for x, _v, _c in s.lookups]
    assert numeric >= 30, "too few numeric exercises found: is the tool reading the right ids?"
    assert len(lookups) <= lookup_share.MAX_SHARE * numeric, (
        f"{len(lookups)} of {numeric} numeric exercises can be copied from their chapter: {lookups}"
    )
    for share in shares:
        assert share.share <= lookup_share.MAX_CHAPTER_SHARE, (share.chapter, share.lookups)
