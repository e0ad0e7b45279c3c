"""Unit tests of the grader's modules (roofline/exercises/grader/): each module on its own,
with hand-derived expectations, plus the honest-student cases of issue 26 next to canaries.

The fast tests need no kernel; the ones marked slow start kernels (bubblewrap when present)."""

import json
import os
import random
import shutil
import sys
from pathlib import Path

import nbformat
import pytest

from roofline.exercises import core, homework
from roofline.exercises.grader import folder, kernel, probe, report, sandbox

# sandboxed grading runs share the slot uids: one at a time across xdist workers
pytestmark = pytest.mark.usefixtures("one_grader_at_a_time")

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests" / "data" / "submissions"))
import make_samples  # noqa: E402 (found on the path set just above)

HAVE_BWRAP = sys.platform.startswith("linux") and shutil.which("bwrap") is not None
SHADOW = "list = dict = type = str = float = int = len = repr = isinstance = 0"


# ---------------------------------------------------------------- probe (runs in the kernel)
def test_probe_reports_whatever_builtins_the_namespace_shadows():
    namespace = {"STUDENT_ID": "s1", "answers": {"q1": 1.5, "q2": "compute", "q3": None}}
    canary = json.loads(probe.report_of(dict(namespace)))
    shadowed = dict(namespace)
    for name in ("list", "dict", "type", "str", "float", "int", "len", "repr", "isinstance"):
        shadowed[name] = 0
    assert json.loads(probe.report_of(shadowed)) == canary
    assert canary == {
        "has_id": True,
        "student_id": "s1",
        "id_length": 2,
        "answers": {
            "q1": {"type": "float", "value": "1.5"},
            "q2": {"type": "str", "value": "compute"},
            "q3": {"type": "none"},
        },
    }


def test_probe_encodes_numpy_sympy_and_odd_values():
    import numpy as np
    import sympy

    B = sympy.Symbol("B", positive=True)
    assert probe.encode(np.float32(0.5)) == {"type": "float", "value": "0.5"}
    assert probe.encode(np.array([[3]])) == {"type": "int", "value": "3"}
    assert probe.encode(True)["type"] == "other"
    assert probe.encode(2**5000)["value"] == "a huge integer"
    assert probe.encode(2 * B) == {"type": "sympy", "value": "2*B"}
    assert probe.encode(sympy.Rational(1, 4)) == {"type": "float", "value": "0.25"}

    class Broken:
        def __repr__(self):
            raise RuntimeError

    assert probe.encode(Broken()) == {"type": "other", "name": "Broken", "value": "<unprintable>"}
    assert json.loads(probe.report_of({"answers": []}))["answers"] is None


# ---------------------------------------------------------------- report (plain data)
def _report(set_id="part1", code_set=None, answers=None):
    return {
        "set": set_id,
        "code_set": code_set,
        "has_id": True,
        "student_id": "s1",
        "id_length": 2,
        "answers": answers if answers is not None else {},
        "notes": [],
    }


def test_the_set_comes_from_metadata_and_another_set_is_an_error():
    assert report.notebook_set({"rooflines_set": "part3"}) == "part3"
    assert report.notebook_set({"rooflines_set": "../x"}) is None
    assert (
        report.code_set(['p = homework.parameters("part1", S)', "# homework.parameters('part3'"])
        is None
    )
    assert report.which_set(_report("part1"), "part1") == ("part1", None)  # canary
    set_id, why = report.which_set(_report("part3"), "part1")
    assert set_id is None and "homework part3" in why and "part1" in why
    set_id, why = report.which_set(_report(None, code_set="part3"), "part1")
    assert set_id is None and "part3" in why
    assert report.which_set(_report(None, code_set="part1"), None) == ("part1", None)
    rows = report.grade_submission(Path("x.ipynb"), _report("part3"), "part1")
    assert [r["exercise"] for r in rows] == ["ERROR"]  # no score


def test_a_formula_that_expands_too_far_is_wrong_with_a_reason_and_fast():
    from roofline.exercises.grader.report import grade_submission

    q = "q8"
    assert homework.get_set("part2").exercise_id(q)
    expected = homework.parameters("part2", "s1", quiet=True)  # noqa: F841 (the set exists)
    exercise = core.get_exercise(homework.exercise_id("part2", q))
    if exercise.kind != "symbolic":
        pytest.skip("part 2's q8 is no longer a formula question")
    huge = {"type": "str", "value": "(" + "+".join(exercise.symbols) + "+1)^32"}
    rows = grade_submission(Path("x.ipynb"), _report("part2", answers={q: huge}), "part2")
    row = next(r for r in rows if r["exercise"] == f"part2/{q}")
    assert row["correct"] == "no" and "terms" in row["feedback"]
    assert rows[-1]["exercise"] == "TOTAL"


def test_expanded_terms_bound_by_hand():
    import sympy

    B, D, F, n = sympy.symbols("B D F n", positive=True)
    assert core.expanded_terms((B + D + 1) ** 2) == 6  # B², D², 1, BD, B, D
    assert core.expanded_terms((B + D) * (B + 1)) == 4  # BB, B, DB, D (before collecting)
    assert core.expanded_terms(2 * B * D * F / n) == 1
    assert core.expanded_terms((B + D + F + n + 1) ** 4) == 70  # C(8, 4)
    assert core.expanded_terms((B + D + F + n + 1) ** 32) == core.FORMULA_TERMS_CAP + 1


def test_journal_keeps_only_final_results(tmp_path):
    path = tmp_path / "j.jsonl"
    journal = folder._Journal(path, "k", {"a.ipynb": "01", "b.ipynb": "02"})
    journal.add("a.ipynb", {"error": "the grader was stopped", "transient": True})
    journal.add("b.ipynb", {"student_id": "b"})
    journal.close()
    assert report.read_journal(path, "k") == {("b.ipynb", "02"): {"student_id": "b"}}


def test_folder_set_by_option_or_majority_with_a_note():
    reports = {"a": {"set": "part1"}, "b": {"set": "part1"}, "c": {"set": "part3"}, "d": {}}
    assert folder.folder_set(reports, "part2") == ("part2", None)
    chosen, note = folder.folder_set(reports, None)
    assert chosen == "part1" and "2 of 3" in note and "part3 (1)" in note
    assert folder.folder_set({"a": {"set": "part1"}}, None) == ("part1", None)


def test_private_copy_refuses_links_and_copies_files(tmp_path):
    root = tmp_path / "subs"
    (root / "late").mkdir(parents=True)
    secret = tmp_path / "secret"
    secret.mkdir()
    (secret / "key.ipynb").write_text("teacher")
    (root / "link.ipynb").symlink_to(secret / "key.ipynb")
    (root / "swapped").symlink_to(secret)  # a folder replaced by a link after the survey
    for relative in ("link.ipynb", "swapped/key.ipynb"):
        with pytest.raises(OSError):
            folder._copy_private(root, relative, tmp_path / "copy1")
    assert not (tmp_path / "copy1").exists()
    (root / "late" / "plain.ipynb").write_text("{}")  # the canary
    folder._copy_private(root, "late/plain.ipynb", tmp_path / "copy2")
    assert (tmp_path / "copy2").read_text() == "{}"


# ---------------------------------------------------------------- sandbox and kernel, no kernel
def test_sandbox_command_binds_only_the_copy_and_drops_to_the_slot_uid(tmp_path):
    notebook = tmp_path / "n.ipynb"
    notebook.write_text("{}")
    box = sandbox.Sandbox(tmp_path, "bwrap", None, sandbox.Limits(), notebook)
    command = box.command(["python"], 10, [])
    at = command.index("--ro-bind", command.index("--clearenv") - 12)
    assert command[at + 1 : at + 3] == [
        str(box.home / "submission.ipynb"),
        "/home/student/submission.ipynb",
    ]
    assert command[-2:] == ["--", "python"] and "--unshare-net" in command
    assert box._as_student()[-1] == "--"
    box.uid = 64000
    assert "--reuid=64000" in box._as_student()
    limited = sandbox.Sandbox(tmp_path, "rlimits", None, sandbox.Limits(), notebook)
    assert limited.popen_kwargs(10)["cwd"] == str(limited.home)
    assert set(box.popen_kwargs(10)) <= {"pass_fds"}  # the seccomp filter's descriptor
    if box.seccomp is not None:
        assert command[command.index("--seccomp") + 1] == str(box.seccomp)
    box.cleanup()
    limited.cleanup()


def test_a_dead_kernel_is_retried_once_before_the_cell_is_skipped():
    run = kernel.NotebookRun(["a", "b"], sandbox.Limits(), deadline=0.0)
    gone = kernel.KernelGone(-9)
    run.died_in(2, gone)
    assert run.skip == set() and run.notes == {}  # first death: maybe not its doing, run again
    run.died_in(2, gone)
    assert run.skip == {2} and "killed by SIGKILL" in run.notes[2]
    assert "out-of-memory killer" in kernel.stopped_kernel_note(3, kernel.KernelGone(-9, True))


# ---------------------------------------------------------------- with kernels
def _part3_notebook(path: Path, student_id: str) -> Path:
    nb = nbformat.read(str(ROOT / "exercises" / "homework_part3.ipynb"), as_version=4)
    for cell in nb.cells:
        if cell.cell_type == "code" and cell.source.startswith("STUDENT_ID ="):
            cell.source = f"STUDENT_ID = {student_id!r}"
    nbformat.write(nb, str(path))
    return path


@pytest.mark.slow
@pytest.mark.skipif(not HAVE_BWRAP, reason="needs bubblewrap")
def test_honest_students_are_never_marked_down(tmp_path):
    subs = tmp_path / "subs"
    subs.mkdir()
    make_samples.make(subs / "alice.ipynb", "alice", make_samples.CORRECT)  # the canary
    make_samples.make(subs / "sam.ipynb", "sam", make_samples.CORRECT, {"q8": SHADOW})
    make_samples.make(
        subs / "cleo.ipynb",
        "cleo",
        make_samples.CORRECT,
        {"q2": '# homework.parameters("part3", x)'},
    )
    _part3_notebook(subs / "paul.ipynb", "paul")
    uid = 200000 + 8 * random.randrange(50000)  # several test runs may share this machine
    rows = folder.grade_folder(subs, jobs=2, limits=sandbox.Limits(cell_s=30), sandbox_uid=uid)
    totals = {r["file"]: r["correct"] for r in rows if r["exercise"] == "TOTAL"}
    assert totals == {"alice.ipynb": "8/8", "sam.ipynb": "8/8", "cleo.ipynb": "8/8"}, rows
    ids = {r["file"]: r["student_id"] for r in rows}
    assert ids["sam.ipynb"] == "sam" and not any("duplicated" in r["feedback"] for r in rows)
    paul = [r for r in rows if r["file"] == "paul.ipynb"]
    assert [r["exercise"] for r in paul] == ["ERROR"] and "part3" in paul[0]["feedback"]


@pytest.mark.slow
def test_a_kernel_killed_from_outside_is_retried(tmp_path):
    """The first run of cell q5's kernel is SIGKILLed (as the OOM killer would); the rerun is
    not: the student keeps every point and no note blames the cell. Limits only (no bwrap),
    so the marker file outside the sandbox survives the restart."""
    mark = tmp_path / "killed-once"
    kill_once = (
        f"import os, signal, pathlib\np = pathlib.Path({str(mark)!r})\n"
        "if not p.exists():\n    p.touch()\n    os.kill(os.getpid(), signal.SIGKILL)"
    )
    notebook = make_samples.make(
        tmp_path / "k.ipynb", "kim", make_samples.CORRECT, {"q5": kill_once}
    )
    limits = sandbox.Limits(cell_s=60, notebook_s=120)
    result = kernel.run_notebook(notebook, limits, "rlimits", None)
    assert mark.exists() and result["notes"] == [], result
    rows = report.grade_submission(notebook, result)
    assert rows[-1]["correct"] == "8/8", rows
    os.unlink(mark)


KEYRING_AND_USERNS = """
import ctypes
libc = ctypes.CDLL(None, use_errno=True)
found = []
for name, args in (("keyctl", (250, 0, -3, 0)), ("add_key", (248, b"user", b"k", b"v", 1, -3)),
                   ("unshare-user", (272, 0x10000000))):
    ctypes.set_errno(0)
    found.append(f"{name}={libc.syscall(*args)}/{ctypes.get_errno()}")
import os
child = os.fork()  # unshare(CLONE_NEWUSER) needs a single-threaded process: a fresh child
if child == 0:
    os._exit(0 if libc.syscall(272, 0x10000000) == 0 else ctypes.get_errno())
found.append(f"child-unshare-user={os.waitstatus_to_exitcode(os.waitpid(child, 0)[1])}")
raise RuntimeError(" ".join(found))
"""


def test_seccomp_program_by_hand():
    program = sandbox.seccomp_program()
    if program is None:
        pytest.skip("the filter is written for x86-64")
    assert len(program) == 20 * 8  # 20 sock_filter instructions of 8 bytes
    import struct

    first = struct.unpack("=HBBI", program[:8])
    assert first == (0x20, 0, 0, 4)  # load the architecture word of seccomp_data


@pytest.mark.slow
@pytest.mark.skipif(not HAVE_BWRAP, reason="needs bubblewrap")
def test_keyrings_and_nested_user_namespaces_are_refused(tmp_path):
    if sandbox.seccomp_program() is None:
        pytest.skip("the filter is written for x86-64")
    notebook = make_samples.make(
        tmp_path / "k.ipynb", "kay", make_samples.CORRECT, {"q8": KEYRING_AND_USERNS}
    )
    uid = 200000 + 8 * random.randrange(50000) if os.geteuid() == 0 else None
    result = kernel.run_notebook(notebook, sandbox.Limits(cell_s=30), "bwrap", uid)
    note = next(n for n in result["notes"] if "RuntimeError" in n)
    assert "keyctl=-1/1" in note and "add_key=-1/1" in note, note  # EPERM
    assert "unshare-user=-1/1" in note and "child-unshare-user=1" in note, note
    assert report.grade_submission(notebook, result)[-1]["correct"] == "8/8"  # the canary part


def test_ids_are_shown_as_they_are_and_look_alikes_flagged():
    assert report.safe_cell("\t=HYPERLINK(1)").startswith("'")  # leading whitespace, then =
    assert report.safe_cell(" @SUM(A1)").startswith("'")
    assert report.safe_cell("alice") == "alice" and report.safe_cell("-1.5") == "-1.5"  # canaries
    assert report.safe_cell("al\u200bice") == "al<U+200B>ice"
    assert report.safe_cell("\u202eecila") == "<U+202E>ecila"
    assert report.skeleton("\u0430lice") == report.skeleton("ALICE\u200b") == "alice"  # Cyrillic а
    assert report.skeleton("ｂｏｂ") == "bob"  # NFKC: full-width letters

    def total(file, sid):
        row = {"student_id": sid, "file": file, "submitted": "", "correct": "8/8", "feedback": ""}
        return {**row, "exercise": "TOTAL"}

    rows = [total("a.ipynb", "alice"), total("b.ipynb", "\u0430lice")]
    names = {"a.ipynb": "alice", "b.ipynb": "\u0430lice"}
    out = report.roster_rows(rows, ["alice"], names)
    notes = [r["feedback"] for r in out if r["exercise"] == "NOTE"]
    assert (
        len(notes) == 1
        and "looks like alice" in notes[0]
        and "b.ipynb" in [r["file"] for r in out if r["exercise"] == "NOTE"]
    )
    reports = {
        "a": {"student_id": "alice"},
        "b": {"student_id": "al\x00ice"},
        "c": {"student_id": "bob"},
    }
    duplicates = folder._duplicate_notes([("a", None), ("b", None), ("c", None)], reports)
    assert duplicates == {"a": ["b"], "b": ["a"], "c": []}


# ---------------------------------------------------------------- gradebook
def _detailed(file, sid, verdicts, error=None):
    """Detailed CSV rows of one file: verdicts {q: True/False}, or an ERROR row."""
    base = {"student_id": sid, "file": file, "submitted": "", "feedback": ""}
    if error:
        return [{**base, "exercise": "ERROR", "correct": "", "feedback": error}]
    rows = [
        {**base, "exercise": f"part1/{q}", "correct": "yes" if ok else "no"}
        for q, ok in verdicts.items()
    ]
    return rows + [
        {**base, "exercise": "TOTAL", "correct": f"{sum(verdicts.values())}/{len(verdicts)}"}
    ]


def test_gradebook_roster_order_newest_resubmission_weights_and_no_dates(tmp_path):
    from roofline.exercises.grader import gradebook

    rows = (
        _detailed("zoe.ipynb", "zoe", {"q1": True, "q2": True, "q3": False})
        + _detailed("amy_old.ipynb", "AMY", {"q1": False, "q2": False, "q3": False})
        + _detailed("amy_new.ipynb", " amy ", {"q1": True, "q2": False, "q3": True})
        + _detailed("bo.ipynb", "bo", {}, error="the notebook has no `answers` dictionary")
        + _detailed("x.ipynb", "stranger", {"q1": True, "q2": True, "q3": True})
    )
    mtimes = {"amy_old.ipynb": 100.0, "amy_new.ipynb": 200.0}
    weights = gradebook.parse_weights("q1=2,q3=0.5", ["q1", "q2", "q3"])
    out = gradebook.summary_rows(rows, ["Zoe", "Amy", "Bo", "Cy"], mtimes, weights)
    table = [(r["student_id"], r["score"], r["max_score"], r["status"], r["file"]) for r in out]
    assert table == [
        ("Zoe", "3", "3.5", "graded", "zoe.ipynb"),  # 2 + 1 of 2 + 1 + 0.5
        ("Amy", "2.5", "3.5", "graded", "amy_new.ipynb"),  # 2 + 0.5; the newer file counts
        ("Bo", "", "", "error", "bo.ipynb"),
        ("Cy", "", "", "missing", ""),
        ("stranger", "3.5", "3.5", "graded", "x.ipynb"),
    ]
    assert "amy_old.ipynb" in out[1]["notes"] and "answers" in out[2]["notes"]
    assert out[4]["notes"] == "not on the roster"
    gradebook.write_summary(out, tmp_path / "g.csv")
    text = (tmp_path / "g.csv").read_text()
    assert text.splitlines()[0] == "student_id,score,max_score,status,file,notes"
    assert "/" not in "".join(r["score"] + r["max_score"] for r in out)  # never 8/8: a date
    with pytest.raises(ValueError, match="no question 'q9'"):
        gradebook.parse_weights("q9=1", ["q1", "q2"])


def test_roster_csv_by_header_and_a_warning_for_a_gradebook_export(tmp_path):
    from roofline.exercises.grader import gradebook

    plain = tmp_path / "ids.txt"
    plain.write_text("# class\ns1\n\ns2\n")
    assert gradebook.read_roster_table(plain) == (["s1", "s2"], [])  # the canary
    canvas = tmp_path / "canvas.csv"
    canvas.write_text('Student,ID,SIS User ID,Section\n"Doe, Jane",77,s9,A\n"Roe, Rick",78,s8,A\n')
    assert gradebook.read_roster_table(canvas)[0] == ["s9", "s8"]  # SIS User ID before ID
    sis = tmp_path / "sis.csv"
    sis.write_text("Name,SIS User ID\nJane,s9\n")
    assert gradebook.read_roster_table(sis) == (["s9"], [])
    export = tmp_path / "export.csv"
    export.write_text("Student,Section,Total\nJane Doe,A,10\n")
    ids, warnings = gradebook.read_roster_table(export)
    assert ids[0] == "Student" and "gradebook export" in warnings[0]


@pytest.mark.slow
@pytest.mark.skipif(not HAVE_BWRAP, reason="needs bubblewrap")
def test_cli_summary_feedback_and_retry_errors(tmp_path):
    import csv
    import subprocess

    subs, out = tmp_path / "subs", tmp_path / "out" / "grades.csv"
    subs.mkdir()
    out.parent.mkdir()
    make_samples.make(subs / "alice.ipynb", "alice", make_samples.CORRECT)  # the canary
    old = make_samples.make(subs / "bob_v1.ipynb", "bob", make_samples.PARTLY_WRONG)
    new = make_samples.make(subs / "bob_v2.ipynb", " BOB ", make_samples.CORRECT)
    os.utime(old, (1_000_000_000, 1_000_000_000))
    os.utime(new, (1_100_000_000, 1_100_000_000))
    (subs / "broken.ipynb").write_text("{not json")
    roster = tmp_path / "roster.csv"
    roster.write_text("Name,SIS User ID\nBob B,Bob\nAl A,Alice\nCy C,cy\n")
    uid = str(200000 + 8 * random.randrange(50000))
    command = [sys.executable, "-m", "roofline", "grade", str(subs), "--out", str(out)]
    command += ["--jobs", "2", "--sandbox-uid", uid, "--roster", str(roster)]
    command += ["--summary", str(tmp_path / "g.csv"), "--feedback-dir", str(tmp_path / "fb")]
    command += ["--weights", "q1=2,q8=0.5"]
    first = subprocess.run(command, cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert first.returncode == 0, first.stderr[-2000:]
    with open(tmp_path / "g.csv", newline="", encoding="utf-8") as handle:
        book = [
            (r["student_id"], r["score"], r["max_score"], r["status"], r["file"])
            for r in csv.DictReader(handle)
        ]
    # 8 questions, q1 weighs 2 and q8 0.5: max 2 + 6 + 0.5 = 8.5
    assert book[:3] == [
        ("Bob", "8.5", "8.5", "graded", "bob_v2.ipynb"),
        ("Alice", "8.5", "8.5", "graded", "alice.ipynb"),
        ("cy", "", "", "missing", ""),
    ], book
    assert book[3][3] == "error" and book[3][4] == "broken.ipynb"
    (alice_feedback,) = (tmp_path / "fb").glob("alice.ipynb-*.txt")  # name + hash of the name
    feedback = alice_feedback.read_text()
    assert "part1/q1: right" in feedback and "8 of 8" in feedback
    rows = list(csv.DictReader(open(out, newline="", encoding="utf-8")))
    assert rows[-1]["exercise"] == "INFO" and "set part1" in rows[-1]["feedback"]
    assert all(r["expected"] for r in rows if r["exercise"].startswith("part1/"))
    again = subprocess.run(
        command + ["--retry-errors"], cwd=ROOT, capture_output=True, text=True, timeout=300
    )
    assert again.returncode == 0, again.stderr[-2000:]
    assert "ran broken.ipynb" in again.stderr and "reused alice.ipynb" in again.stderr


# ---------------------------------------------------------------- Gradescope
def test_gradescope_results_format_by_hand():
    from roofline.exercises.grader import gradescope

    rows = _detailed("a.ipynb", "amy", {"q1": True, "q2": False})
    result = gradescope.results(rows, {"q1": 2.0, "q2": 1.0}, "after_due_date")
    assert result["score"] == 2.0 and result["visibility"] == "after_due_date"
    assert [(t["name"], t["score"], t["max_score"]) for t in result["tests"]] == [
        ("q1", 2.0, 2.0),
        ("q2", 0.0, 1.0),
    ]
    failed = gradescope.results(
        _detailed("b.ipynb", "", {}, error="STUDENT_ID is empty"), {"q1": 1.0}, "hidden"
    )
    assert failed["score"] == 0 and "STUDENT_ID is empty" in failed["tests"][0]["output"]


@pytest.mark.slow
def test_gradescope_zip_and_run_autograder_in_a_gradescope_layout(tmp_path):
    """Build the zip, unpack it as Gradescope does (/autograder/source), put a submission in
    /autograder/submission and run run_autograder with AUTOGRADER_ROOT pointing there."""
    import subprocess
    import zipfile

    from roofline import __version__

    zip_path = tmp_path / "autograder.zip"
    built = subprocess.run(
        [sys.executable, "-m", "roofline", "autograder", "--set", "part1", "--out", str(zip_path)]
        + ["--weights", "q1=2"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert built.returncode == 0, built.stderr[-2000:]
    root = tmp_path / "autograder"
    with zipfile.ZipFile(zip_path) as archive:
        names = set(archive.namelist())
        assert {"setup.sh", "run_autograder", "config.json"} <= names
        assert f"roofline-{__version__}-py3-none-any.whl" in names  # the version that built it
        archive.extractall(root / "source")
    assert "roofline-*.whl)[grade]" in (root / "source" / "setup.sh").read_text()
    (root / "submission").mkdir()
    make_samples.make(root / "submission" / "homework_part1.ipynb", "alice", make_samples.CORRECT)
    run_script = root / "source" / "run_autograder"
    run_script.chmod(0o755)
    env = {**os.environ, "AUTOGRADER_ROOT": str(root)}
    env["PATH"] = f"{Path(sys.executable).parent}{os.pathsep}{env['PATH']}"  # python3: this venv
    done = subprocess.run([str(run_script)], env=env, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    result = json.loads((root / "results" / "results.json").read_text())
    assert result["score"] == 9.0  # 8 questions right, q1 weighs 2
    assert len(result["tests"]) == 8 and result["tests"][0]["max_score"] == 2.0
    assert all(t["visibility"] == "after_due_date" for t in result["tests"])


RUN_FOLDER_ATTACK = """
import os

found = []
for what, action in (
    ("write", lambda: open("/run/kernel/big", "wb").write(b"x" * 1000)),
    ("swap", lambda: os.replace("/run/kernel/k-4", "/run/kernel/moved")),
    ("append", lambda: open("/run/kernel/kernel.json", "a").write("x")),
):
    try:
        action()
        found.append(what + "=done")
    except OSError:
        found.append(what + "=refused")
raise RuntimeError(" ".join(found))
"""


@pytest.mark.slow
@pytest.mark.skipif(not HAVE_BWRAP or os.geteuid() != 0, reason="needs bubblewrap and root")
def test_the_socket_folder_is_sealed_before_student_code_runs(tmp_path):
    notebook = make_samples.make(
        tmp_path / "r.ipynb", "ray", make_samples.CORRECT, {"q8": RUN_FOLDER_ATTACK}
    )
    uid = 200000 + 8 * random.randrange(50000)
    result = kernel.run_notebook(notebook, sandbox.Limits(cell_s=30), "bwrap", uid)
    note = next(n for n in result["notes"] if "RuntimeError" in n)
    assert "write=refused swap=refused append=refused" in note, note
    assert report.grade_submission(notebook, result)[-1]["correct"] == "8/8"  # the canary part


def test_the_grader_queues_few_and_bounded_messages():
    """A kernel flooding a channel the grader does not read fills at most 16 x 8 MiB."""
    import zmq

    context = kernel.new_context()
    try:
        socket = context.socket(zmq.DEALER)
        assert socket.getsockopt(zmq.RCVHWM) == kernel.QUEUED_MESSAGES == 16
        assert socket.getsockopt(zmq.MAXMSGSIZE) == kernel.MAX_MESSAGE_BYTES == 8 * 2**20
        socket.close()
    finally:
        context.destroy(linger=0)


# ---------------------------------------------------------------- a raised answer cell (issue 33)
def test_an_answer_whose_cell_raised_says_so_on_its_own_line():
    cells = [
        'STUDENT_ID = "s2002"',
        'answers["q1"] = 1e-3',
        'answers["q2"] = ridge * 2\nhomework.check(STUDENT_ID, "exam", "q2", answers["q2"])',
        "while True:\n    pass",
        "if answers['q3'] == 1: pass",  # compares, sets nothing
    ]
    notes = {
        3: "code cell 3 raised NameError: name 'ridge' is not defined",
        4: "code cell 4 ran longer than 4 s and was stopped",
        5: "code cell 5 raised KeyError: 'q3'",
        7: "its kernel was restarted 3 times; the cells after the last failure were not run",
    }
    assert report.answer_notes(cells, notes) == {"q2": notes[3]}  # only q2's cell sets it
    graded = report.grade_submission(
        Path("bob.ipynb"),
        {**_report("exam"), "student_id": "s2002", "answers": {}, "answer_notes": {"q2": notes[3]}},
    )
    feedback = {r["exercise"]: r["feedback"] for r in graded}
    assert feedback["exam/q2"] == (
        "unanswered: code cell 3 raised NameError: name 'ridge' is not defined "
        '(the cell that sets answers["q2"])'
    )
    assert feedback["exam/q1"] == 'unanswered: there is no answers["q1"] in the notebook'  # canary
