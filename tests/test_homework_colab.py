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
