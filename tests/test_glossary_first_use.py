"""Every glossary word is linked where a page first uses it (issue 33, section 2): the rule is in
tools/glossary_words.py (its docstring states it exactly); these tests pin it on small pages and
hold the book to it. `python tools/glossary_words.py --fix` links what this test lists.
"""

from __future__ import annotations

import re

import glossary_words as gw
import pytest
from glossary_words import GLOSSARY, ROOT, glossary_entries, unlinked_first_uses

# ---------------------------------------------------------------- the rule on small pages
SAMPLE_GLOSSARY = """```{glossary}
HBM
  High-bandwidth memory.

collective
  An operation of every chip.

KV cache
  Keys and values.

cache
  Small fast memory.

FLOP
FLOPs
  One operation.
```"""


def test_a_use_before_the_link_is_found_with_its_line():
    page = "---\njupytext: x\n---\n# HBM\n\nThe HBM holds it.\n\nSee {term}`HBM`.\n"
    found = unlinked_first_uses(page, glossary_entries(SAMPLE_GLOSSARY))
    assert [(u.line, u.word) for u in found] == [(6, "HBM")]  # the heading is not a use


def test_plurals_synonyms_and_longer_terms():
    entries = glossary_entries(SAMPLE_GLOSSARY)
    page = "{term}`collectives <collective>`, the {term}`KV cache`; FLOPs, then an L2 cache.\n"
    found = unlinked_first_uses(page, entries)
    # "KV cache" is linked and is not a use of "cache"; "FLOPs" is the entry "FLOP"
    assert [u.word for u in found] == ["FLOPs", "cache"]
    # EVERYDAY: a bare "cache" after the KV cache is linked is the KV cache, not a CPU's
    assert not unlinked_first_uses("The {term}`KV cache`: each sequence's cache.\n", entries)
    assert not unlinked_first_uses("{term}`FLOP` counts FLOPs.\n", entries)


def test_code_math_roles_and_urls_are_not_prose():
    entries = glossary_entries(SAMPLE_GLOSSARY)
    page = (
        "```{code-cell} ipython3\nhbm = 'HBM'\n```\n"
        "Math $\\mathrm{HBM}$, code `HBM`, {doc}`HBM`, https://x.org/HBM, [text](HBM.md).\n"
        "```{admonition} HBM in a title\n:class: tip\nNothing here.\n```\n"
        "```\nHBM in a code block\n```\n"
    )
    assert not unlinked_first_uses(page, entries)


def test_an_indented_code_block_is_not_prose_but_a_list_continuation_is():
    # the worked exam's teacher box once had "python -m {term}`roofline` exam" in one
    entries = glossary_entries(SAMPLE_GLOSSARY)
    code = "Run this:\n\n    hbm = read('HBM')\n    print(hbm)\n\nDone.\n"
    assert not unlinked_first_uses(code, entries)
    in_a_list = "- first item\n  goes on\n\n    HBM in the item's second paragraph.\n"
    assert [u.line for u in unlinked_first_uses(in_a_list, entries)] == [4]


def test_going_further_sections_are_read_on_their_own_terms():
    entries = glossary_entries(SAMPLE_GLOSSARY)
    page = (
        "# Title\n\nCore: {term}`HBM`.\n\n## Going further: detail\n\n"
        "HBM again; a {term}`collective` and an L2 cache.\n\n## Back on the core path\n\n"
        "A collective, then HBM.\n"
    )
    found = [(u.line, u.word) for u in unlinked_first_uses(page, entries)]
    # HBM was linked on the core path above the section; "cache" is new in the section; the
    # collective linked only inside the optional section needs its link again on the core path
    assert found == [(7, "cache"), (11, "collective")]


def test_case_matters_for_capitalised_words_only():
    entries = glossary_entries("```{glossary}\nSTREAM\n  A benchmark.\n\ncache\n  Memory.\n```")
    found = unlinked_first_uses("A stream of Cache lines and STREAM.\n", entries)
    assert [u.word for u in found] == ["Cache", "STREAM"]


# ---------------------------------------------------------------- the book
def test_every_glossary_word_is_linked_at_its_first_use_on_every_page():
    problems = gw.problems()
    assert not problems, (
        f"{len(problems)} glossary words are used before the page links them. At each place "
        "below write the word as a link, {term}`word` (or {term}`words <word>` for another "
        "form; `python tools/glossary_words.py --fix` does it), or, where the word has another "
        "meaning there, add the phrase to EVERYDAY in tools/glossary_words.py:\n"
        + "\n".join(problems)
    )


def test_the_pages_are_the_books_pages():
    names = [p.relative_to(ROOT).as_posix() for p in gw.PAGES]
    assert names[0] == "intro.md" and "glossary.md" not in names
    assert "chapters/06_communication_rooflines.md" in names
    assert "exercises/homework_part4.md" in names


@pytest.mark.parametrize("entry", gw.book_entries(), ids=lambda e: e.name)
def test_each_entry_has_a_definition_of_one_to_three_sentences(entry):
    text = GLOSSARY.read_text(encoding="utf-8")
    body = re.search(r"^" + re.escape(entry.terms[-1]) + r"\n((?:[ \t]+.*\n?)+)", text, flags=re.M)
    assert body, f"glossary entry {entry.name!r} has no definition under it"
    # sentences: a full stop (or ! ?) before a capital, an opening bracket or the end; formulas
    # and "e.g. 256" / "et al. 2021" do not end one
    words = re.sub(r"\$[^$]*\$", "X", " ".join(body.group(1).split()))
    sentences = len(re.findall(r"[.!?][)\"]?(?= [A-Z(]|$)", words))
    assert 1 <= sentences <= 3, (
        f"glossary entry {entry.name!r} has {sentences} sentences: define it in one to three "
        "plain sentences for a reader who knows Python only"
    )
