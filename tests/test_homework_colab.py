"""Homework in a kernel (Colab, Jupyter) shows the kernel's verdict, the web page and its boxes
agree on what they check, and a check after STUDENT_ID changed says the numbers shown are
another id's (issue 24, item 6)."""

from pathlib import Path

from roofline.exercises import homework

ROOT = Path(__file__).resolve().parent.parent


def test_unanswered_homework_in_a_kernel_is_the_kernels_verdict(monkeypatch):
    monkeypatch.delenv("ROOFLINE_WEB_EDITION", raising=False)
    html = homework.check("bob", "part1", "q1", None)._repr_html_()
    assert "roofline-answer-box" not in html and "No answer yet" in html
    assert "in your browser" not in html


def test_unanswered_homework_on_the_web_page_is_the_box(monkeypatch):
    monkeypatch.setenv("ROOFLINE_WEB_EDITION", "1")
    html = homework.check("bob", "part1", "q1", None)._repr_html_()
    assert "roofline-answer-box" in html and "does not check homework" in html


def test_the_pages_say_what_the_boxes_do():
    for n in (1, 2, 3, 4):
        text = (ROOT / "exercises" / f"homework_part{n}.md").read_text(encoding="utf-8")
        assert "the boxes check answers" not in text
        assert "boxes below do not check answers" in text


def test_a_new_id_without_new_numbers_is_said(monkeypatch):
    monkeypatch.setattr(homework, "_SHOWN", {})
    homework.parameters("part1", "alice")  # the notebook shows alice's numbers
    # bob's check, numbers shown for alice: a wrong answer is told why, not diagnosed
    feedback = homework.check("bob", "part1", "q1", "1 s")
    assert not feedback.correct and "numbers shown above are those of 'alice'" in feedback.message
    assert "Run all" in feedback.message
    # once bob's numbers are shown, the same answer gets the ordinary diagnosis
    homework.parameters("part1", "bob")
    again = homework.check("bob", "part1", "q1", "1 s")
    assert "alice" not in again.message


def test_the_same_id_spelled_differently_is_no_change(monkeypatch):
    monkeypatch.setattr(homework, "_SHOWN", {})
    homework.parameters("part2", " S1234567 ")
    feedback = homework.check("s1234567", "part2", "q1", "1 FLOPs")
    assert "numbers shown above" not in feedback.message


#: Sentences true of one edition only: the web page has no kernel, the twin has one.
WEB_ONLY = ("On this web page (no kernel)", "boxes below do not check answers")
TWIN_ONLY = ("In this notebook the cell after each question checks your answer",)


def test_each_edition_says_what_holds_for_it():
    """The web-only sentence is in an `{only} html` block, which the twin drops; the twin's own
    sentence is in an `{only} colab` block (Sphinx has no "colab" tag, the page drops it)."""
    import json
    import re

    import notebooks

    for n in (1, 2, 3, 4):
        md = ROOT / "exercises" / f"homework_part{n}.md"
        text = md.read_text(encoding="utf-8")
        web = re.search(r"^:::\{only\} html\n(.*?)^:::$", text, re.S | re.M)
        colab = re.search(r"^:::\{only\} colab\n(.*?)^:::$", text, re.S | re.M)
        assert web and all(s in web.group(1).replace("\n", " ") for s in WEB_ONLY), md.name
        assert colab and TWIN_ONLY[0] in colab.group(1).replace("\n", " "), md.name
        twin = json.loads(notebooks.expected_ipynb_text(md))
        prose = " ".join(
            "".join(cell["source"]).replace("\n> ", " ").replace("\n", " ")
            for cell in twin["cells"]
            if cell["cell_type"] == "markdown"
        )
        assert not any(s in prose for s in WEB_ONLY), f"{md.name}: web-only text in the twin"
        assert TWIN_ONLY[0] in prose, f"{md.name}: the twin does not say what its cells do"
        assert "{only}" not in prose
        # the first step holds in both: it says which part is the web page's
        assert "(from the web page: the rocket button at its top)" in prose


def test_an_only_block_for_an_unknown_edition_stops_the_twin():
    import notebooks
    import pytest

    twin = notebooks._Twin("chapters/x.md", {})
    with pytest.raises(notebooks.TwinError, match="only"):
        twin.markdown(":::{only} latex\nprinted only\n:::\n")
    assert twin.markdown(":::{only} html\nweb\n:::\n") == ""
    assert twin.markdown(":::{only} colab\ntwin\n:::\n") == "twin"
