"""One student cannot take another's gradebook score (issue 34, section 1).

The notebook types a STUDENT_ID; who handed the file in is known, where it is known, from the
LMS (the file's name names a roster student or an LMS alias of one) or Gradescope
(submission_metadata.json). A file whose two identities differ is flagged and credited to
nobody; several files with differently spelled ids and no known sender go to the teacher.
Each attack sits next to an honest canary."""

from roofline.exercises.grader import gradebook, gradescope, report

NBSP = "\u00a0"


def _detailed(file, sid, right, of=8, error=None):
    base = {"student_id": sid, "file": file, "submitted": "", "feedback": "", "expected": ""}
    if error:
        return [{**base, "exercise": "ERROR", "correct": "", "feedback": error}]
    rows = [
        {**base, "exercise": f"part1/q{i}", "correct": "yes" if i <= right else "no"}
        for i in range(1, of + 1)
    ]
    return rows + [{**base, "exercise": "TOTAL", "correct": f"{right}/{of}"}]


def _table(out):
    return {r["student_id"]: (r["score"], r["status"], r["file"]) for r in out}


def test_match_key_folds_case_spaces_width_and_invisibles():
    for variant in ("S9001", f"s9001{NBSP}", " s9001 ", "ｓ９００１", "s\u200b9001", "s\u20039001"):
        assert report.match_key(variant) == "s9001", repr(variant)
    assert report.match_key("s9002") != report.match_key("s9001")  # canary


def test_differently_spelled_ids_without_a_sender_go_to_the_teacher():
    # No roster, file names that name nobody: the ids are all we have.
    rows = (
        _detailed("a.ipynb", "s9001", 8)
        + _detailed("b.ipynb", "S9001", 0)
        + _detailed("c.ipynb", f"s9001{NBSP}", 0)
    )
    mtimes = {"a.ipynb": 1.0, "b.ipynb": 2.0, "c.ipynb": 3.0}  # the attacks are newer
    (row,) = gradebook.summary_rows(rows, None, mtimes)
    # Before: the newest, c.ipynb's 0, replaced s9001's 8 with only a note.
    assert (row["score"], row["status"]) == ("", "review")
    assert "a.ipynb (STUDENT_ID s9001: 8 of 8)" in row["notes"]
    assert "c.ipynb (STUDENT_ID s9001<U+00A0>: 0 of 8)" in row["notes"]
    # Canary: a resubmission spelled the same way is a resubmission; the newest counts.
    rows = _detailed("a.ipynb", "s9001", 3) + _detailed("d.ipynb", "s9001", 8)
    (row,) = gradebook.summary_rows(rows, None, {"a.ipynb": 1.0, "d.ipynb": 2.0})
    assert (row["score"], row["status"], row["file"]) == ("8", "graded", "d.ipynb")


def test_a_file_handed_in_by_one_student_with_anothers_id_counts_for_nobody():
    roster = ["s9001", "s9002", "s9003"]
    rows = (
        _detailed("s9001_hw1.ipynb", "s9001", 8)
        + _detailed("s9002_hw1.ipynb", "S9001", 0)  # s9002 hands in a notebook typed S9001
        + _detailed("s9003_hw1.ipynb", f"s9003{NBSP}", 6)  # honest, a stray space: canary
    )
    mtimes = {"s9001_hw1.ipynb": 1.0, "s9002_hw1.ipynb": 2.0, "s9003_hw1.ipynb": 3.0}
    out = gradebook.summary_rows(rows, roster, mtimes)
    assert _table(out) == {
        "s9001": ("8", "graded", "s9001_hw1.ipynb"),  # not replaced by the newer 0
        "s9002": ("", "missing", ""),
        "s9003": ("6", "graded", "s9003_hw1.ipynb"),
    }
    notes = {r["student_id"]: r["notes"] for r in out}
    assert "s9002_hw1.ipynb has this STUDENT_ID but was handed in by s9002" in notes["s9001"]
    assert "handed in s9002_hw1.ipynb, whose STUDENT_ID is S9001" in notes["s9002"]
    assert notes["s9003"] == ""
    # The detailed CSV flags it and does not count s9002's file as s9001's submission.
    names = {f: r["student_id"] for r in rows for f in [r["file"]]}
    flagged = report.roster_rows(rows, roster, names)
    assert any(
        r["exercise"] == "NOTE"
        and r["file"] == "s9002_hw1.ipynb"
        and "credits it to nobody" in r["feedback"]
        for r in flagged
    )


def test_resubmissions_named_for_the_student_keep_the_newest():
    # Canary of the rule above: the same student's two files (both named for them) with
    # differently written ids are a resubmission, the newest counts.
    rows = _detailed("amy_v1.ipynb", "AMY", 2) + _detailed("amy_v2.ipynb", " amy ", 7)
    out = gradebook.summary_rows(rows, ["Amy"], {"amy_v1.ipynb": 1.0, "amy_v2.ipynb": 2.0})
    assert _table(out) == {"Amy": ("7", "graded", "amy_v2.ipynb")}


def test_canvas_file_names_name_the_student_by_their_canvas_user_id(tmp_path):
    export = tmp_path / "canvas.csv"
    export.write_text(
        "Student,ID,SIS User ID,SIS Login ID,Section,Homework 1 (101)\n"
        "    Points Possible,,,,,8\n"
        '"Lovelace, Ada",12345,s9001,ada@uni.edu,Sec 1,\n'
        '"Mallory, Eve",12399,s9002,eve@uni.edu,Sec 1,\n',
        encoding="utf-8",
    )
    roster, warnings = gradebook.read_roster_table(export)
    assert roster == ["s9001", "s9002"] and warnings == []
    aliases = gradebook.read_roster_aliases(export)
    assert aliases["12345"] == "s9001" and aliases["eve@uni.edu"] == "s9002"
    # Canvas names a download  <name>_<canvas user id>_<submission id>_<file name>
    rows = _detailed("lovelaceada_12345_777001_homework.ipynb", "s9001", 8) + _detailed(
        "malloryeve_12399_777002_homework.ipynb", "s9001", 0
    )
    mtimes = {"lovelaceada_12345_777001_homework.ipynb": 1.0}
    mtimes["malloryeve_12399_777002_homework.ipynb"] = 2.0
    out = gradebook.summary_rows(rows, roster, mtimes, aliases=aliases)
    assert _table(out) == {
        "s9001": ("8", "graded", "lovelaceada_12345_777001_homework.ipynb"),
        "s9002": ("", "missing", ""),
    }


def test_explicit_senders_win_over_file_names():
    rows = _detailed("x.ipynb", "s9001", 8) + _detailed("y.ipynb", "s9001", 0)
    out = gradebook.summary_rows(
        rows, ["s9001", "s9002"], owners={"x.ipynb": "s9001", "y.ipynb": "S9002"}
    )
    assert _table(out) == {"s9001": ("8", "graded", "x.ipynb"), "s9002": ("", "missing", "")}


def test_gradescope_takes_the_identity_from_submission_metadata(tmp_path):
    (tmp_path / "submission_metadata.json").write_text(
        '{"users": [{"email": "ada@uni.edu", "id": 1, "name": "Ada", "sid": "s9001"}]}'
    )
    assert gradescope.submitter_ids(tmp_path) == ["s9001"]
    own = _detailed("hw.ipynb", f"S9001{NBSP}", 8)
    assert gradescope.checked_identity(own, ["s9001"]) == own  # canary: their own id, any case
    other = gradescope.checked_identity(_detailed("hw.ipynb", "s9002", 8), ["s9001"])
    assert [r["exercise"] for r in other] == ["ERROR"]
    assert "is not your id (s9001)" in other[0]["feedback"]
    result = gradescope.results(other, {f"q{i}": 1.0 for i in range(1, 9)}, "after_due_date")
    assert result["score"] == 0
    unknown = gradescope.checked_identity(own, [])
    assert unknown[:-1] == own and unknown[-1]["exercise"] == "NOTE"
    assert gradescope.submitter_ids(tmp_path / "nowhere") == []


def test_a_file_naming_two_students_names_no_sender():
    known = {"12": "s9002", "11": "s9001", "s9001": "s9001", "s90012": "s90012"}
    assert report.named_in_file("lovelace_11_901_hw.ipynb", known) == "11"
    assert report.named_in_file("lovelace_11_12_hw.ipynb", known) is None  # two students
    assert report.named_in_file("s9001_11_hw.ipynb", known) in ("11", "s9001")  # one student
    assert report.named_in_file("hw_s90012x.ipynb", known) == "s90012"  # longest inside a word
