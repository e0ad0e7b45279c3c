"""Feedback files and unreadable files (issue 34, section 1): each submission gets its own
feedback file, and a file the grader alone may read is never quoted in a row."""

import os

import pytest

from roofline.exercises.grader import folder, gradebook, kernel


def _rows(file, sid, verdict):
    return [
        {
            "student_id": sid,
            "file": file,
            "exercise": "part1/q1",
            "correct": verdict,
            "feedback": f"{sid} feedback",
        },
        {
            "student_id": sid,
            "file": file,
            "exercise": "TOTAL",
            "correct": "1/1" if verdict == "yes" else "0/1",
            "feedback": "",
        },
    ]


COLLIDING = ["hw1 ada.ipynb", "hw1_ada.ipynb", "sub/x.ipynb", "sub__x.ipynb", "A.ipynb", "a.ipynb"]


def test_feedback_names_are_unique_per_submission_even_case_folded():
    names = gradebook.feedback_names(COLLIDING)
    assert len({n.casefold() for n in names.values()}) == len(COLLIDING)
    # Still readable: the old slug comes first (what the teacher looks for).
    assert names["hw1 ada.ipynb"].startswith("hw1_ada.ipynb-")
    assert names["sub/x.ipynb"].startswith("sub__x.ipynb-")
    assert "/" not in "".join(names.values())


def test_each_student_reads_only_their_own_feedback(tmp_path):
    rows = []
    for i, file in enumerate(COLLIDING):
        rows += _rows(file, f"student{i}", "yes" if i % 2 else "no")
    assert gradebook.write_feedback(rows, tmp_path) == len(COLLIDING)
    written = sorted(tmp_path.iterdir())
    # The old names wrote 4 files for these 6 (hw1_ada.ipynb.txt and sub__x.ipynb.txt twice;
    # A and a apart only on a case-sensitive disk).
    assert len(written) == len(COLLIDING)
    names = gradebook.feedback_names(COLLIDING)
    for i, file in enumerate(COLLIDING):
        text = (tmp_path / names[file]).read_text(encoding="utf-8")
        assert f"Student id: student{i}\n" in text and f"File: {file}\n" in text
        others = [f"student{j} " for j in range(len(COLLIDING)) if j != i]
        assert not any(o in text for o in others)


def test_a_file_that_is_not_json_is_never_quoted(tmp_path):
    secret = tmp_path / "shadow.ipynb"
    secret.write_text("root:SECRETHASH:19000:0:99999:7:::\n")
    with pytest.raises(ValueError) as caught:
        kernel.read_cells(secret)
    message = str(caught.value)
    assert "SECRET" not in message and "root" not in message
    assert "not JSON" in message and "line 1, column 1" in message
    good = tmp_path / "good.ipynb"  # canary: a notebook still reads
    good.write_text('{"cells": [], "metadata": {}, "nbformat": 4, "nbformat_minor": 5}')
    assert kernel.read_cells(good)[0] == []


def test_a_hard_link_to_an_owner_only_file_is_refused_unquoted(tmp_path):
    private = tmp_path / "private"
    private.mkdir()
    secret = private / "shadow"
    secret.write_text("root:SECRETHASH:19000:0:99999:7:::\n")
    os.chmod(secret, 0o600)
    submissions = tmp_path / "subs"
    submissions.mkdir()
    os.link(secret, submissions / "mallory.ipynb")
    (submissions / "honest.ipynb").write_text("{}")  # canary: an ordinary 0644 file copies
    os.chmod(submissions / "honest.ipynb", 0o644)
    copies = tmp_path / "copies"
    copies.mkdir()
    done: dict = {}
    notebooks = [
        ("honest.ipynb", submissions / "honest.ipynb"),
        ("mallory.ipynb", submissions / "mallory.ipynb"),
    ]
    private_copies, _ = folder._snapshot(submissions, notebooks, copies, done)
    assert private_copies["honest.ipynb"] is not None
    assert private_copies["mallory.ipynb"] is None
    error = done[("mallory.ipynb", None)]["error"]
    assert "hard link" in error and "SECRET" not in error
    assert not any("SECRET" in p.read_text() for p in copies.iterdir())
