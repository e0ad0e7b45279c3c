"""`python -m roofline grade` on a folder of sample submissions gives exactly the expected CSV.

The expected rows are written from what each sample contains (tests/data/submissions/
make_samples.py): which answers it holds, and which mistake each wrong one makes.
"""

import csv
import json
import math
import os
import random
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests" / "data" / "submissions"))
import make_samples  # noqa: E402

from roofline.exercises import grading, homework  # noqa: E402
from roofline.exercises.grader import sandbox as grading_sandbox  # noqa: E402

# sandboxed grading runs share the slot uids: one at a time across xdist workers
pytestmark = pytest.mark.usefixtures("one_grader_at_a_time")

# several test runs may share this machine: each grading run gets its own sandbox uids
UID_BASE = 1_000_000 + 8 * random.randrange(100_000)
HAVE_BWRAP = sys.platform.startswith("linux") and shutil.which("bwrap") is not None

QUESTIONS = [f"q{i}" for i in range(1, 9)]


def _numbers(student_id):
    """The sample's values, evaluated here the same way the notebook evaluates them."""
    import roofline as rl

    params = homework.parameters("part1", student_id, quiet=True)
    scope = {"rl": rl, "params": params}
    exec(make_samples.WORK, scope)
    return scope


def _value(scope, expression):
    return eval(expression, dict(scope))


def _graded(student_id, file, answers, notes=(), duplicate_of=None):
    """Expected rows for a graded sample: (exercise, submitted, correct, feedback fragment)."""
    scope = _numbers(student_id)
    rows = []
    if duplicate_of:
        rows.append((student_id.strip(), file, "NOTE", "", "", f"also submitted in {duplicate_of}"))
    right = 0
    for q in QUESTIONS:
        expression = answers.get(q)
        if expression is None:
            rows.append((student_id.strip(), file, f"part1/{q}", "", "no", "unanswered"))
            continue
        value = _value(scope, expression)
        ok, fragment = EXPECTED_VERDICT[(student_id.strip().lower(), q)](scope, value)
        right += ok
        rows.append(
            (student_id.strip(), file, f"part1/{q}", value, "yes" if ok else "no", fragment)
        )
    for note in notes:
        rows.append((student_id.strip(), file, "NOTE", "", "", note))
    rows.append((student_id.strip(), file, "TOTAL", "", f"{right}/8", ""))
    return rows


def _right(scope, value):
    return True, "is right"


def _bob(q):
    def verdict(scope, value):
        chip = scope["chip"]
        if q == "q1":
            sparse = chip.peak("bf16").sparse_flops_per_s is not None
            return False, "2:4-sparse" if sparse else "half the answer"
        if q == "q2":
            return False, "counts elements"
        if q == "q3":
            exact = scope["flops"] / scope["nbytes"]
            assert abs(scope["B"] - exact) > 0.02 * exact, "pick another id: B is close to exact"
            return False, "approximate value"
        if q == "q4":
            return True, "is right"
        if q == "q5":
            return False, "Compare this matmul's intensity"
        if q == "q6":
            return False, "no overlap"
        if q == "q7":
            return False, "approximate value"
        if q == "q8":
            return False, "That is a time"

    return verdict


EXPECTED_VERDICT = {}
for sid in ("alice", "carol", "dave", "frank"):
    for q in QUESTIONS:
        EXPECTED_VERDICT[(sid, q)] = _right
for q in QUESTIONS:
    EXPECTED_VERDICT[("bob", q)] = _bob(q)
    EXPECTED_VERDICT[("erin", q)] = lambda scope, value: (False, "")


@pytest.mark.slow
def test_grade_folder_gives_exactly_the_expected_csv(tmp_path):
    folder = tmp_path / "submissions"
    make_samples.make_all(folder)
    out = tmp_path / "grades.csv"
    result = subprocess.run(
        [
            sys.executable,
            "-m",
            "roofline",
            "grade",
            str(folder),
            "--out",
            str(out),
            "--timeout",
            "4",
            "--jobs",
            "2",
            "--sandbox-uid",
            str(UID_BASE),
        ],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert result.returncode == 0, result.stderr[-3000:]
    from roofline import __version__ as roofline_version

    with open(out, newline="", encoding="utf-8") as handle:
        got = list(csv.DictReader(handle))
    assert list(got[0]) == [
        "student_id",
        "file",
        "exercise",
        "submitted",
        "correct",
        "feedback",
        "expected",
    ]

    expected = []
    expected += _graded("alice", "alice.ipynb", make_samples.CORRECT)
    expected += _graded("bob", "bob.ipynb", make_samples.PARTLY_WRONG)
    expected += _graded("carol", "carol.ipynb", {"q1": make_samples.CORRECT["q1"]})
    expected += [("", "corrupt.ipynb", "ERROR", "", "", "cannot read the notebook")]
    expected += _graded(
        "dave",
        "dave_loop.ipynb",
        make_samples.CORRECT,
        notes=["ran longer than 4 s and was stopped"],
    )
    expected += _graded("erin", "erin_fake.ipynb", {q: "1" for q in QUESTIONS})
    expected += _graded(
        "frank", "frank_1.ipynb", make_samples.CORRECT, duplicate_of="frank_2.ipynb"
    )
    expected += _graded(
        " Frank ", "frank_2.ipynb", make_samples.CORRECT, duplicate_of="frank_1.ipynb"
    )
    expected += [("", "no_id.ipynb", "ERROR", "", "", "STUDENT_ID is empty")]
    expected += [("", "", "INFO", "", "", f"roofline {roofline_version}; set part1")]

    assert len(got) == len(expected), [(r["file"], r["exercise"]) for r in got]
    for row, (sid, file, exercise, submitted, correct, fragment) in zip(got, expected):
        where = f"{file} {exercise}: {row}"
        assert (row["student_id"], row["file"], row["exercise"], row["correct"]) == (
            sid,
            file,
            exercise,
            correct,
        ), where
        if isinstance(submitted, float) or (
            isinstance(submitted, int) and not isinstance(submitted, bool)
        ):
            assert math.isclose(float(row["submitted"]), submitted, rel_tol=1e-12), where
        else:
            assert row["submitted"] == str(submitted), where
        assert fragment in row["feedback"], where
    # the fake "All correct" printed by erin's notebook changed nothing
    assert all(
        r["correct"] == "no"
        for r in got
        if r["file"] == "erin_fake.ipynb" and r["exercise"] != "TOTAL"
    )


def test_cli_rejects_bad_arguments(tmp_path):
    result = subprocess.run(
        [
            sys.executable,
            "-m",
            "roofline",
            "grade",
            str(tmp_path / "nope"),
            "--out",
            str(tmp_path / "g.csv"),
        ],
        capture_output=True,
        text=True,
    )
    assert result.returncode == 2 and "not a folder" in result.stderr
    result = subprocess.run(
        [sys.executable, "-m", "roofline", "grade", str(tmp_path), "--jobs", "0"],
        capture_output=True,
        text=True,
    )
    assert result.returncode == 2 and "must be positive" in result.stderr


def test_measure_subcommand_is_dispatched_lazily():
    import roofline.measure.cli as cli
    from roofline.__main__ import main

    calls = []
    original = cli.main
    cli.main = lambda argv: calls.append(argv) or 0
    try:
        assert main(["measure", "--quick"]) == 0
    finally:
        cli.main = original
    assert calls == [["--quick"]]


# ---------------------------------------------------------------- pieces, without kernels
def test_safe_cell_neutralises_formulas_but_not_numbers():
    assert grading.safe_cell("=1+2") == "'=1+2"
    assert grading.safe_cell("@SUM(A1)") == "'@SUM(A1)"
    assert grading.safe_cell("+33 1 23") == "'+33 1 23"
    assert grading.safe_cell("-2+3") == "'-2+3"
    assert grading.safe_cell("-5") == "-5" and grading.safe_cell("-1.5e-3") == "-1.5e-3"
    assert grading.safe_cell("a\nb\x00c") == "a b<U+0000>c"
    assert grading.safe_cell("x" * 50, cap=10) == "x" * 9 + "…"


def test_write_csv_is_atomic_and_reads_back(tmp_path):
    out = tmp_path / "g.csv"
    out.write_text("old")
    rows = [
        {
            "student_id": "=cmd",
            "file": "a.ipynb",
            "exercise": "TOTAL",
            "submitted": "y" * 10**6,
            "correct": "1/8",
            "feedback": "line\nbreak",
        }
    ]
    grading.write_csv(rows, out)
    with open(out, newline="", encoding="utf-8") as handle:
        got = list(csv.DictReader(handle))
    assert got[0]["student_id"] == "'=cmd" and len(got[0]["submitted"]) == grading.SUBMITTED_CAP
    assert got[0]["feedback"] == "line break"
    assert [p.name for p in tmp_path.iterdir()] == ["g.csv"]  # no temporary file left


def test_survey_gives_every_file_a_place(tmp_path):
    (tmp_path / "b.ipynb").write_text("{}")
    (tmp_path / "A.IPYNB").write_text("{}")
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "c.Ipynb").write_text("{}")
    (tmp_path / "x.json").write_text("{}")
    (tmp_path / "link.ipynb").symlink_to(tmp_path / "b.ipynb")
    notebooks, skipped = grading._survey(tmp_path)
    assert [name for name, _ in notebooks] == ["A.IPYNB", "b.ipynb", "sub/c.Ipynb"]
    assert {r["file"]: r["feedback"].split(";")[0] for r in skipped} == {
        "link.ipynb": "a link",
        "x.json": "not a notebook (a .json file)",
    }


def test_roster_rows():
    def rows(file, sid, exercise="TOTAL"):
        return {
            "student_id": sid,
            "file": file,
            "exercise": exercise,
            "submitted": "",
            "correct": "",
            "feedback": "",
        }

    graded = [
        rows("s100_hw.ipynb", "s100"),
        rows("s200.ipynb", "s300"),
        rows("x.ipynb", "s999"),
        rows("bad.ipynb", "", "ERROR"),
    ]
    names = {"s100_hw.ipynb": "s100", "s200.ipynb": "s300", "x.ipynb": "s999", "bad.ipynb": None}
    out = grading._roster_rows(graded, ["S100", "s200", "s300", "s400"], names)
    notes = [(r["file"], r["feedback"]) for r in out if r["exercise"] == "NOTE"]
    assert notes == [
        (
            "s200.ipynb",
            "the file is named for s200 but its STUDENT_ID is s300: the gradebook credits it "
            "to nobody until you check",
        ),
        ("x.ipynb", "this STUDENT_ID is not on the roster"),
    ]
    # s200's file claims s300: it is s200's hand-in (not graded as theirs) and not s300's work
    assert [r["student_id"] for r in out if r["exercise"] == "MISSING"] == ["s200", "s300", "s400"]


def test_read_roster_skips_header_comments_and_blank_lines(tmp_path):
    roster = tmp_path / "r.csv"
    roster.write_text("\ufeffstudent_id,name\n# a comment\ns1,Ann\n\n s2 ,Bo\n", encoding="utf-8")
    assert grading.read_roster(roster) == ["s1", "s2"]


def test_snapshot_parser_rejects_what_is_not_a_report():
    def reply(text):
        return {"user_expressions": {"report": {"status": "ok", "data": {"text/plain": text}}}}

    good = json.dumps(
        {
            "has_id": True,
            "student_id": "s1",
            "id_length": 2,
            "answers": {"q1": {"type": "float", "value": "1.5"}},
        }
    )
    assert grading._parse_snapshot(reply(repr(good)))["answers"]["q1"]["value"] == "1.5"
    for bad in (
        repr("not json"),
        repr(json.dumps([1])),
        "__import__('os')",
        repr(json.dumps({"has_id": True, "student_id": 5, "answers": None})),
        repr(json.dumps({"has_id": True, "student_id": "s", "answers": {"q1": 3}})),
    ):
        assert grading._parse_snapshot(reply(bad)) is None, bad
    assert grading._parse_snapshot({"user_expressions": {}}) is None


def test_journal_ignores_a_torn_line_and_other_limits(tmp_path):
    journal = tmp_path / "g.csv.journal"
    key = grading.Limits().key()
    entry = {
        "version": grading.JOURNAL_VERSION,
        "file": "a.ipynb",
        "sha256": "00",
        "limits": key,
        "report": {"student_id": "a"},
    }
    other = {**entry, "file": "b.ipynb", "limits": grading.Limits(cell_s=1).key()}
    journal.write_text(json.dumps(entry) + "\n" + json.dumps(other) + "\n" + json.dumps(entry)[:30])
    assert grading._read_journal(journal, key) == {("a.ipynb", "00"): {"student_id": "a"}}


def test_missing_bwrap_is_said_once_and_limits_still_apply(monkeypatch, capsys):
    monkeypatch.setattr(grading.shutil, "which", lambda name: None)
    monkeypatch.setattr(grading_sandbox, "_warned", set())
    assert grading.sandbox_kind("auto") == "rlimits"
    assert grading.sandbox_kind("auto") == "rlimits"
    assert capsys.readouterr().err.count("WARNING: no sandbox") == 1
    with pytest.raises(RuntimeError, match="bubblewrap sandbox cannot run here"):
        grading.sandbox_kind("bwrap")


# ---------------------------------------------------------------- with kernels
def _sandbox_processes(base, count):
    left = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                if base <= os.stat(f"/proc/{entry}").st_uid < base + count:
                    left.append(entry)
            except OSError:
                pass
    return left


def _live_children() -> list[int]:
    """Processes whose parent is this test process and that have not exited (zombies aside)."""
    found = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            stat = Path(f"/proc/{entry}/stat").read_text()
        except OSError:
            continue
        fields = stat.rsplit(")", 1)[1].split()
        if int(fields[1]) == os.getpid() and fields[0] != "Z":
            found.append(int(entry))
    return found


@pytest.mark.slow
def test_limits_without_sandbox_tool_memory_and_notebook_time(tmp_path):
    """The fallback (no bwrap, as the current user): limits still hold, answers before a stop count."""
    notebook = make_samples.make(
        tmp_path / "m.ipynb",
        "mia",
        make_samples.CORRECT,
        {"q2": "x = bytearray(6 * 2 ** 30)", "q5": "import time\ntime.sleep(60)"},
    )
    limits = grading.Limits(cell_s=100, notebook_s=25, memory_bytes=2000 * grading.MIB)
    report = grading.run_notebook(notebook, limits, "rlimits", None)
    # No clock read here: the notebook's stop is seen in its note (the 60 s sleep outlives the
    # 25 s notebook limit but not the 100 s cell limit, so only the notebook limit can have
    # stopped it) and in the state it leaves: no kernel of ours still running.
    assert _live_children() == []
    assert any("raised MemoryError" in n for n in report["notes"]), report
    assert any("ran longer than 25 s in all" in n for n in report["notes"]), report
    rows = grading.grade_submission(notebook, report)
    correct = {r["exercise"]: r["correct"] for r in rows}
    assert [correct[f"part1/q{i}"] for i in range(1, 9)] == ["yes"] * 4 + ["no"] * 4
    assert correct["TOTAL"] == "4/8"


@pytest.mark.slow
@pytest.mark.skipif(not HAVE_BWRAP, reason="needs bubblewrap")
def test_killed_grader_leaves_no_process_and_a_rerun_resumes(tmp_path):
    folder, out = tmp_path / "subs", tmp_path / "grades.csv"
    folder.mkdir()
    for name in ("a1", "a2", "a3"):
        make_samples.make(
            folder / f"{name}.ipynb",
            name,
            make_samples.CORRECT,
            {"q8": "import time\ntime.sleep(1)"},
        )
    command = [
        sys.executable,
        "-m",
        "roofline",
        "grade",
        str(folder),
        "--out",
        str(out),
        "--jobs",
        "1",
        "--timeout",
        "20",
        "--sandbox-uid",
        str(UID_BASE + 4),
    ]
    journal = out.with_name("grades.csv.journal")
    grader = subprocess.Popen(
        command, cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
    )
    try:
        # no clock: wait for the first finished notebook, or for the grader to stop
        while grader.poll() is None and not (journal.exists() and journal.read_text().count("\n")):
            time.sleep(0.1)
        time.sleep(0.5)  # well into the next notebook
    finally:
        grader.send_signal(signal.SIGKILL)
        grader.wait(10)
    finished = journal.read_text().count("\n")
    assert 1 <= finished < 3 and not out.exists()
    if os.geteuid() == 0:
        for _ in range(30):  # the kernels die with the grader (bwrap --die-with-parent)
            if not _sandbox_processes(UID_BASE + 4, 1):
                break
            time.sleep(0.1)
        assert _sandbox_processes(UID_BASE + 4, 1) == []
    with open(journal, "a") as handle:
        handle.write('{"version": 1, "file": "a3.ipy')  # torn by the kill
    rerun = subprocess.run(command, cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert rerun.returncode == 0, rerun.stderr[-2000:]
    assert rerun.stderr.count("reused ") == finished and rerun.stderr.count("ran ") == 3 - finished
    with open(out, newline="", encoding="utf-8") as handle:
        totals = {
            r["file"]: r["correct"] for r in csv.DictReader(handle) if r["exercise"] == "TOTAL"
        }
    assert totals == {"a1.ipynb": "8/8", "a2.ipynb": "8/8", "a3.ipynb": "8/8"}


def test_readme_and_help_state_the_default_limits():
    """The teacher reads the limits in the README and in --help: they must be the code's."""
    d = grading.Limits()
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    teachers = readme[readme.index("## For teachers") :]
    for text in (
        f"{d.memory_bytes // grading.MIB} MiB of address space",
        f"{d.cpu_s} s of CPU time",
        f"{d.processes} processes",
        f"{d.file_bytes // grading.MIB} MiB per file",
        f"{d.open_files} open files",
        f"default {d.disk_bytes // grading.MIB} MiB each",
        f"(default {d.cell_s:g})",
        f"(default {d.notebook_s:g} s",
    ):
        assert text in teachers, text
    from roofline.__main__ import build_parser

    help_text = build_parser()._subparsers._group_actions[0].choices["grade"].format_help()
    for text in (
        f"(default {d.cell_s:g})",
        f"(default {d.notebook_s:g})",
        f"(default {d.memory_bytes // grading.MIB})",
        f"(default {d.processes})",
    ):
        assert text in " ".join(help_text.split()), text


def _part4_notebook(path, student_id, answers):
    """homework_part4.ipynb with `student_id` typed in and `answers` (q -> value) filled in."""
    import nbformat

    nb = nbformat.read(str(ROOT / "exercises" / "homework_part4.ipynb"), as_version=4)
    for cell in nb.cells:
        if cell.cell_type != "code":
            continue
        if cell.source.startswith("STUDENT_ID ="):
            cell.source = f"STUDENT_ID = {student_id!r}"
        for q, value in answers.items():
            if cell.source.startswith(f'answers["{q}"] = None'):
                first, rest = cell.source.split("\n", 1)
                cell.source = f'answers["{q}"] = {value!r}\n{rest}'
    nbformat.write(nb, str(path))
    return path


@pytest.mark.slow
def test_a_part4_class_folder_is_graded_as_part4(tmp_path):
    """Two part-4 notebooks in a class folder: the set comes from the notebook's metadata,
    the hand-derived answers (tests/test_homework_part4.py) score 8/8, a wrong verdict and
    a missing answer lose their points."""
    from test_homework_part4 import answers_by_hand

    folder = tmp_path / "part4"
    folder.mkdir()
    right = answers_by_hand(homework.parameters("part4", "ada", quiet=True))
    _part4_notebook(folder / "ada.ipynb", "ada", right)
    other = answers_by_hand(homework.parameters("part4", "ben", quiet=True))
    other["q5"] = {"yes": "no", "no": "yes"}[other["q5"]]
    del other["q8"]
    _part4_notebook(folder / "ben.ipynb", "ben", other)
    out = tmp_path / "grades.csv"
    command = [sys.executable, "-m", "roofline", "grade", str(folder), "--out", str(out)]
    command += ["--jobs", "2", "--sandbox-uid", str(UID_BASE + 8)]
    result = subprocess.run(command, cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stderr[-3000:]
    with open(out, newline="", encoding="utf-8") as handle:
        rows = list(csv.DictReader(handle))
    totals = {r["file"]: r["correct"] for r in rows if r["exercise"] == "TOTAL"}
    assert totals == {"ada.ipynb": "8/8", "ben.ipynb": "6/8"}, rows
    ben = {r["exercise"]: r for r in rows if r["file"] == "ben.ipynb"}
    assert ben["part4/q5"]["correct"] == "no" and ben["part4/q8"]["feedback"] == "unanswered"
    assert any(r["exercise"] == "INFO" and "set part4" in r["feedback"] for r in rows)
