"""The regrade report (issue 34, section 4): who changed, by how much, on which questions and
why; an unchanged student is counted, never listed."""

import csv

import pytest

from roofline.exercises.grader import regrade, report


def _rows(sid, file, answers, info="graded with roofline 0.1.0; set part1"):
    """Detailed rows: answers {q: (submitted, correct, expected)}."""
    base = {"student_id": sid, "file": file, "feedback": ""}
    rows = [
        {**base, "exercise": f"part1/{q}", "submitted": s, "correct": c, "expected": e}
        for q, (s, c, e) in answers.items()
    ]
    right = sum(c == "yes" for s, c, e in answers.values())
    total = {**base, "exercise": "TOTAL", "submitted": "", "expected": ""}
    return rows + [{**total, "correct": f"{right}/{len(answers)}"}]


def _info(text):
    return {
        "student_id": "",
        "file": "",
        "exercise": "INFO",
        "submitted": "",
        "correct": "",
        "feedback": text,
        "expected": "",
    }


RIGHT = {"q1": ("1.2", "yes", "1.2"), "q2": ("5 ms", "yes", "5 ms")}


def _round_trip(tmp_path, name, rows):
    path = tmp_path / name
    report.write_csv(rows, path)
    return regrade.read_detailed(path)


def test_who_changed_by_how_much_on_which_questions_and_why(tmp_path):
    old = (
        _rows("ada", "ada.ipynb", RIGHT)  # canary: nothing changes
        + _rows("bob", "bob.ipynb", RIGHT)
        + _rows("cy", "cy.ipynb", {"q1": ("1.2", "yes", "1.2"), "q2": ("9 ms", "no", "5 ms")})
        + _rows("eve", "eve.ipynb", RIGHT)
        + [_info("graded with roofline 0.1.0; set part1")]
    )
    new = (
        _rows("ada", "ada.ipynb", RIGHT)
        # a catalog fix moved bob's expected q1 from 1.2 to 1.3: his 1.2 is now wrong
        + _rows("bob", "bob.ipynb", {"q1": ("1.2", "no", "1.3"), "q2": ("5 ms", "yes", "5 ms")})
        # cy resubmitted the same file with q2 fixed
        + _rows("cy", "cy.ipynb", RIGHT)
        + _rows("dee", "dee.ipynb", RIGHT)
        + [_info("graded with roofline 0.1.1; set part1")]
    )
    changes, unchanged = regrade.compare(
        _round_trip(tmp_path, "old.csv", old), _round_trip(tmp_path, "new.csv", new)
    )
    assert unchanged == 1  # ada
    table = {
        r["student_id"]: (r["old_score"], r["new_score"], r["change"], r["questions"], r["why"])
        for r in changes
    }
    assert table == {
        "bob": ("2 of 2", "1 of 2", "-1", "q1", "answer key changed (1.2 -> 1.3): q1"),
        "cy": ("1 of 2", "2 of 2", "+1", "q2", "submission changed: q2"),
        "dee": ("", "2 of 2", "", "", "newly graded"),
        "eve": ("2 of 2", "", "", "", "no longer graded"),
    }
    out = tmp_path / "grades.regrade.csv"
    regrade.write_regrade(changes, out)
    with open(out, newline="", encoding="utf-8") as handle:
        assert len(list(csv.DictReader(handle))) == 4


def test_an_edition_change_is_named_as_such(tmp_path):
    new_key = {"q1": ("1.2", "no", "1.3"), "q2": ("5 ms", "yes", "5 ms")}
    old = _rows("bob", "bob.ipynb", RIGHT) + [
        _info("graded with roofline 0.1.0; set part1 edition 1")
    ]
    new = _rows("bob", "bob.ipynb", new_key) + [
        _info("graded with roofline 0.1.1; set part1 edition 2")
    ]
    changes, _ = regrade.compare(old, new)
    assert [r["why"] for r in changes] == ["edition changed: q1"]
    assert regrade.edition_of(old) == "1" and regrade.edition_of(new) == "2"


def test_ids_match_whatever_their_case_and_spaces():
    old = _rows("S9001", "a.ipynb", RIGHT)
    new = _rows("s9001\u00a0", "a.ipynb", RIGHT)
    assert regrade.compare(old, new) == ([], 1)


def test_a_file_that_is_not_a_detailed_csv_is_refused(tmp_path):
    bad = tmp_path / "gradebook.csv"
    bad.write_text("student_id,score\ns1,3\n")
    with pytest.raises(ValueError, match="pass the --out file"):
        regrade.read_detailed(bad)
