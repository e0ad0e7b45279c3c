"""--gradebook-format canvas|moodle (issue 34, section 2): the gradebook joined onto the LMS's
own export, ready to upload; ids a spreadsheet would convert kept as text in the plain one."""

import csv
import io

import pytest

from roofline.exercises.grader import gradebook, lms, regrade

# sandboxed grading runs share the slot uids: one at a time across xdist workers
pytestmark = pytest.mark.usefixtures("one_grader_at_a_time")


def _summary(sid, score, status="graded", max_score="8"):
    return {
        "student_id": sid,
        "score": score,
        "max_score": max_score,
        "status": status,
        "file": "",
        "notes": "",
    }


SUMMARY = [
    _summary("s9001", "8"),
    _summary("0012345", "5"),
    _summary("s9002", "", "review", ""),
    _summary("s9003", "", "missing", ""),
    _summary("stranger", "3"),  # graded, but the LMS does not know them
]


def _read(path):
    return list(csv.reader(io.StringIO(path.read_text(encoding="utf-8"))))


def test_canvas_upload_has_canvas_columns_and_the_exports_students(tmp_path):
    export = tmp_path / "export.csv"
    export.write_text(
        "Student,ID,SIS User ID,SIS Login ID,Section,Homework 1 (101),Current Score\n"
        "    Points Possible,,,,,8,\n"
        '"Lovelace, Ada",11,s9001,ada,Sec 1,,\n'
        '"Zero, Leading",12,0012345,lz,Sec 1,,\n'
        '"Review, Rita",13,S9002,rr,Sec 2,,\n'
        '"Absent, Al",14,s9003,al,Sec 2,,\n',
        encoding="utf-8",
    )
    out = tmp_path / "upload.csv"
    warnings = lms.write_lms("canvas", export, SUMMARY, out, "Homework 1")
    assert _read(out) == [
        ["Student", "ID", "SIS User ID", "SIS Login ID", "Section", "Homework 1 (101)"],
        ["    Points Possible", "", "", "", "", "8"],
        ["Lovelace, Ada", "11", "s9001", "ada", "Sec 1", "8"],
        ["Zero, Leading", "12", "0012345", "lz", "Sec 1", "5"],  # the id exactly as Canvas wrote it
        [
            "Review, Rita",
            "13",
            "S9002",
            "rr",
            "Sec 2",
            "",
        ],  # review: no score, Canvas keeps its own
        ["Absent, Al", "14", "s9003", "al", "Sec 2", ""],
    ]
    assert len(warnings) == 1 and "stranger is not in the Canvas export" in warnings[0]
    # A name the export lacks is a new assignment column, used as given.
    lms.write_lms("canvas", export, SUMMARY, out, "Roofline part1")
    assert _read(out)[0][-1] == "Roofline part1"


def test_moodle_upload_never_has_an_unknown_user_or_an_empty_id(tmp_path):
    export = tmp_path / "moodle.csv"
    export.write_text(
        "First name,Last name,ID number,Institution,Department,Email address,"
        "Assignment: Homework 1 (Real),Last downloaded from this course\n"
        "Ada,Lovelace,s9001,,,ada@uni.edu,-,1700000000\n"
        "Leading,Zero,0012345,,,lz@uni.edu,-,1700000000\n"
        "No,Idnumber,,,,s9004@uni.edu,-,1700000000\n"
        "Absent,Al,s9003,,,al@uni.edu,-,1700000000\n",
        encoding="utf-8",
    )
    summary = SUMMARY + [_summary("s9004@uni.edu", "7")]  # matched by email, but no ID number
    out = tmp_path / "upload.csv"
    warnings = lms.write_lms("moodle", export, summary, out, "Assignment: Homework 1")
    rows = _read(out)
    assert rows == [
        ["First name", "Last name", "ID number", "Email address", "Assignment: Homework 1 (Real)"],
        ["Ada", "Lovelace", "s9001", "ada@uni.edu", "8"],
        ["Leading", "Zero", "0012345", "lz@uni.edu", "5"],
    ]
    assert all(r[2] for r in rows[1:])  # never an empty id: Moodle credits it to the row above
    assert any("s9004@uni.edu" in w and "ID number is empty" in w for w in warnings)
    assert any("stranger is not in the Moodle export" in w for w in warnings)


def test_an_export_without_id_columns_is_refused_with_what_to_do(tmp_path):
    export = tmp_path / "x.csv"
    export.write_text("Name,Score\nAda,1\n", encoding="utf-8")
    with pytest.raises(ValueError, match="Grades > Export"):
        lms.write_lms("canvas", export, SUMMARY, tmp_path / "o.csv", "H")
    with pytest.raises(ValueError, match="ID number, Username or Email address"):
        lms.write_lms("moodle", export, SUMMARY, tmp_path / "o.csv", "H")


@pytest.mark.parametrize("sid", ["0012345", "1E5", "TRUE", "1/2", "1-2", "12345", "1:30", "5%"])
def test_ids_a_spreadsheet_would_convert_stay_text_in_the_plain_gradebook(tmp_path, sid):
    out = tmp_path / "g.csv"
    gradebook.write_summary([_summary(sid, "8"), _summary("s9001", "7")], out)
    rows = _read(out)
    assert rows[1][0] == f'="{sid}"'  # Excel/LibreOffice/Sheets show the text {sid}
    assert rows[2][0] == "s9001"  # canary: an id no spreadsheet converts is left alone


def test_an_id_cannot_escape_the_text_formula():
    # Quotes never get the ="..." form: the id stays plain text, no formula around it.
    assert gradebook.id_cell('1"&HYPERLINK("x")&"') == '1"&HYPERLINK("x")&"'
    assert gradebook.id_cell("=1+1") == "'=1+1"


def test_cli_says_what_an_lms_format_needs(tmp_path):
    import subprocess
    import sys

    base = [sys.executable, "-m", "roofline", "grade", str(tmp_path), "--out"]
    base += [str(tmp_path / "g.csv"), "--gradebook-format", "canvas"]
    run = subprocess.run(base, capture_output=True, text=True, timeout=120)
    assert run.returncode == 2 and "pass --summary" in run.stderr
    run = subprocess.run(
        base + ["--summary", str(tmp_path / "u.csv")], capture_output=True, text=True, timeout=120
    )
    assert run.returncode == 2 and "pass --lms-export FILE" in run.stderr


@pytest.mark.slow
def test_cli_writes_a_canvas_upload_from_a_folder(tmp_path):
    """End to end: two notebooks, the Canvas export as the roster; Canvas-named files."""
    import subprocess
    import sys
    from pathlib import Path

    root = Path(__file__).resolve().parent.parent
    sys.path.insert(0, str(root / "tests" / "data" / "submissions"))
    import make_samples

    subs = tmp_path / "subs"
    subs.mkdir()
    make_samples.make(subs / "lovelaceada_11_901_hw.ipynb", "0012345", make_samples.CORRECT)
    make_samples.make(subs / "malloryeve_12_902_hw.ipynb", "0012345 ", make_samples.CORRECT)
    export = tmp_path / "canvas.csv"
    export.write_text(
        "Student,ID,SIS User ID,SIS Login ID,Section,Homework 1 (101)\n"
        "    Points Possible,,,,,8\n"
        '"Lovelace, Ada",11,0012345,ada,S1,\n'
        '"Mallory, Eve",12,0067890,eve,S1,\n',
        encoding="utf-8",
    )
    command = [sys.executable, "-m", "roofline", "grade", str(subs), "--out"]
    command += [str(tmp_path / "g.csv"), "--summary", str(tmp_path / "upload.csv")]
    command += ["--gradebook-format", "canvas", "--lms-export", str(export)]
    command += ["--assignment", "Homework 1", "--jobs", "2"]
    done = subprocess.run(command, cwd=root, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    # Ada's 8 of 8; Eve handed in a notebook typed with Ada's id: credited to nobody.
    assert _read(tmp_path / "upload.csv") == [
        ["Student", "ID", "SIS User ID", "SIS Login ID", "Section", "Homework 1 (101)"],
        ["    Points Possible", "", "", "", "", "8"],
        ["Lovelace, Ada", "11", "0012345", "ada", "S1", "8"],
        ["Mallory, Eve", "12", "0067890", "eve", "S1", ""],
    ]
    # The detailed CSV says it too: Eve's file is flagged (her Canvas ID 12 names her), and
    # she has no graded submission of her own.
    with open(tmp_path / "g.csv", newline="", encoding="utf-8") as handle:
        detailed = list(csv.DictReader(handle))
    assert any(
        r["exercise"] == "NOTE"
        and r["file"] == "malloryeve_12_902_hw.ipynb"
        and "named for 0067890" in r["feedback"]
        for r in detailed
    )
    assert [r["student_id"] for r in detailed if r["exercise"] == "MISSING"] == ["0067890"]
    # A regrade against the same CSV (journal reused): nothing moved, and it says so.
    again = subprocess.run(
        command + ["--compare", str(tmp_path / "g.csv")],
        cwd=root,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert again.returncode == 0, again.stderr[-2000:]
    assert "regrade: 0 student file(s) changed, 2 unchanged" in again.stdout
    assert _read(tmp_path / "g.regrade.csv") == [list(regrade.REGRADE_FIELDS)]


def test_a_moodle_export_is_a_roster_by_its_id_number(tmp_path):
    """--lms-export moodle.csv is also the roster: its ids are the `ID number` column, and
    Username / Email address name the same student (issue 33: the first column, 'First name',
    was read as the ids, so no student matched and the Moodle upload had no row)."""
    export = tmp_path / "moodle.csv"
    export.write_text(
        "First name,Last name,ID number,Institution,Department,Email address,"
        "Assignment: Exam (Real),Last downloaded from this course\n"
        "Ada,Lovelace,s2001,,,ada@uni.edu,-,1700000000\n"
        "Bob,Babbage,s2002,,,bob@uni.edu,-,1700000000\n",
        encoding="utf-8",
    )
    assert gradebook.read_roster_table(export) == (["s2001", "s2002"], [])
    assert gradebook.read_roster_aliases(export) == {"ada@uni.edu": "s2001", "bob@uni.edu": "s2002"}
    # Without ID number, Moodle's next id column (lms.MOODLE_ID_COLUMNS' order) is the id.
    export.write_text("First name,Username,Email address\nAda,ada,ada@uni.edu\n", encoding="utf-8")
    assert gradebook.read_roster_table(export) == (["ada"], [])


def test_an_assignment_name_finds_moodle_s_column_too():
    # Moodle's export heads an assignment's column 'Assignment: NAME (Real)'; Canvas 'NAME (ID)'.
    moodle = ["First name", "ID number", "Assignment: Final exam (Real)", "Quiz: Week 1 (Real)"]
    assert lms.assignment_column(moodle, "Final exam") == "Assignment: Final exam (Real)"
    assert lms.assignment_column(moodle, "Assignment: Final exam") == moodle[2]
    assert lms.assignment_column(moodle, "Final") == "Final"  # a new column, not a prefix match
    assert (
        lms.assignment_column(["Student", "Final exam (201)"], "Final exam") == "Final exam (201)"
    )
