"""Gradescope and PrairieLearn (issue 34, section 3).

The autograder's wheel is built without setuptools or `wheel`; errors a student can fix are
shown to the student whatever the visibility of scores; without bubblewrap, as root, the
student's code cannot read Gradescope's files; PrairieLearn's external grader writes
/grade/results/results.json as PrairieLearn reads it. Each attack sits next to a canary."""

import base64
import csv
import hashlib
import io
import json
import os
import shutil
import subprocess
import sys
import tempfile
import zipfile
from pathlib import Path

import pytest

# sandboxed grading runs share the slot uids: one at a time across xdist workers
pytestmark = pytest.mark.usefixtures("one_grader_at_a_time")

ROOT = Path(__file__).resolve().parent.parent


# ---------------------------------------------------------------- the wheel, stdlib only
BLOCK_BUILD_TOOLS = "import sys; sys.modules['setuptools'] = None; sys.modules['wheel'] = None; "


def _build_without_build_tools(out: Path) -> Path:
    """Build the wheel in a Python where `import setuptools` and `import wheel` fail, as in a
    venv made by `python -m venv` + `pip install -e .` (pip builds in an isolated env)."""
    code = (
        BLOCK_BUILD_TOOLS + "from pathlib import Path; "
        "from roofline.exercises.grader.wheel import build_wheel; "
        f"print(build_wheel(Path({str(out)!r})))"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=120, cwd=ROOT
    )
    assert done.returncode == 0, done.stderr[-2000:]
    return Path(done.stdout.strip())


def test_the_blocked_build_tools_really_are_blocked():
    # canary: the blocking line makes setuptools' own build fail, as in the README's venv
    code = BLOCK_BUILD_TOOLS + "from setuptools import build_meta"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert done.returncode != 0 and "ModuleNotFoundError" in done.stderr


def test_the_wheel_needs_neither_setuptools_nor_wheel_and_its_record_is_true(tmp_path):
    from roofline import __version__

    wheel = _build_without_build_tools(tmp_path)
    assert wheel.name == f"roofline-{__version__}-py3-none-any.whl"
    info = f"roofline-{__version__}.dist-info"
    with zipfile.ZipFile(wheel) as archive:
        names = set(archive.namelist())
        for needed in ("roofline/__init__.py", "roofline/web/explorer.js"):
            assert needed in names
        assert "roofline/exercises/editions/part1.json" in names  # package data
        assert not [n for n in names if "__pycache__" in n or n.endswith((".pyc", ".orig"))]
        wheel_file = archive.read(f"{info}/WHEEL").decode()
        assert "Tag: py3-none-any" in wheel_file and "Root-Is-Purelib: true" in wheel_file
        metadata = archive.read(f"{info}/METADATA").decode()
        assert f"Version: {__version__}" in metadata
        assert 'Requires-Dist: nbformat>=5.9,<6; extra == "grade"' in metadata  # pyproject
        record = list(csv.reader(io.StringIO(archive.read(f"{info}/RECORD").decode())))
        listed = {row[0] for row in record}
        assert listed == names  # every file, RECORD included, listed once
        for path, digest, size in record:
            if path.endswith("RECORD"):
                assert (digest, size) == ("", "")
                continue
            data = archive.read(path)  # PEP 376/427: urlsafe base64 sha256, no padding
            want = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=")
            assert (digest, size) == (f"sha256={want.decode()}", str(len(data))), path


@pytest.mark.slow
def test_pip_installs_the_wheel_and_the_package_imports_from_it(tmp_path):
    wheel = _build_without_build_tools(tmp_path)
    target = tmp_path / "site"
    subprocess.run(
        [sys.executable, "-m", "pip", "install", "-q", "--no-deps", "--no-index"]
        + ["--target", str(target), str(wheel)],
        check=True,
        capture_output=True,
        timeout=300,
    )
    code = "import roofline, roofline.exercises.homework as h; print(roofline.__file__, h.sets())"
    done = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        env={"PYTHONPATH": str(target), "PATH": "/usr/bin:/bin"},
        timeout=120,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    assert str(target) in done.stdout and "part4" in done.stdout


def test_the_autograder_zip_builds_without_build_tools(tmp_path):
    """`python -m roofline autograder` where setuptools and wheel cannot be imported."""
    out = tmp_path / "autograder.zip"
    code = (
        BLOCK_BUILD_TOOLS + "from roofline.exercises.grader.gradescope import main; "
        f"raise SystemExit(main(['--set', 'part1', '--out', {str(out)!r}]))"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=120, cwd=ROOT
    )
    assert done.returncode == 0, done.stderr[-2000:]
    with zipfile.ZipFile(out) as archive:
        assert any(n.startswith("roofline-") and n.endswith(".whl") for n in archive.namelist())


# ---------------------------------------------------------------- errors a student can fix
def _rows(file, sid, verdicts=None, error=None):
    base = {"student_id": sid, "file": file, "submitted": "", "feedback": "", "expected": ""}
    if error:
        return [{**base, "exercise": "ERROR", "correct": "", "feedback": error}]
    rows = [
        {**base, "exercise": f"part1/{q}", "correct": "yes" if ok else "no"}
        for q, ok in (verdicts or {}).items()
    ]
    return rows + [{**base, "exercise": "TOTAL", "correct": "?"}]


FIXABLE_ERRORS = {
    # the teacher-facing reason report.py writes -> words the student must see
    "STUDENT_ID is empty: the student did not type their id, so their numbers are unknown; "
    "ask them to resubmit": "type your student id",
    "this notebook is homework part2 (its metadata says so), not part1, the set this folder "
    "is graded as: was it handed in to the wrong assignment?": "homework part2",
    "STUDENT_ID 's9002' is not your id (s9001): the numbers and the score belong to the id "
    "you type. Type your own id in STUDENT_ID, run all and resubmit": "not your id",
    "cannot read the file: not JSON": "download the notebook again",
}


@pytest.mark.parametrize("visibility", ["hidden", "after_due_date", "after_published"])
def test_errors_a_student_can_fix_are_visible_whatever_the_score_visibility(visibility):
    from roofline.exercises.grader import gradescope

    weights = {"q1": 2.0, "q2": 1.0}
    for reason, words in FIXABLE_ERRORS.items():
        result = gradescope.results(_rows("hw.ipynb", "", error=reason), weights, visibility)
        (test,) = result["tests"]
        assert test["name"] == "Fix this and resubmit", reason
        assert test["visibility"] == "visible" and result["visibility"] == "visible"
        assert words in test["output"] and words in result["output"]
        assert (result["score"], test["max_score"]) == (0, 3.0)  # 2 + 1 points
    nothing = gradescope.results([], weights, visibility)  # no .ipynb handed in
    assert nothing["tests"][0]["visibility"] == "visible"
    assert "no .ipynb file was submitted" in nothing["tests"][0]["output"]
    # canary: a graded submission keeps the teacher's visibility on every test and in all
    graded = gradescope.results(
        _rows("hw.ipynb", "s1", {"q1": True, "q2": False}), weights, visibility
    )
    assert graded["visibility"] == visibility and graded["score"] == 2.0
    assert {t["visibility"] for t in graded["tests"]} == {visibility}


def test_a_grader_failure_is_shown_but_not_as_the_students_to_fix():
    from roofline.exercises.grader import gradescope

    reason = "the grader failed on this notebook: KeyError: 'x'"
    result = gradescope.results(_rows("hw.ipynb", "s1", error=reason), {"q1": 1.0}, "hidden")
    assert result["tests"][0]["name"] == "Not graded"
    assert "tell your teacher" in result["tests"][0]["output"]


# ---------------------------------------------------------------- no bubblewrap, as root
sys.path.insert(0, str(ROOT / "tests" / "data" / "submissions"))
import make_samples  # noqa: E402

GRADESCOPE_ATTACK = """
import os
root, found = {root!r}, []
for what, action in (
    ("open", lambda: open({open_file!r}).read()),
    ("metadata", lambda: open(root + "/submission_metadata.json").read()),
    ("config", lambda: open(root + "/source/config.json").read()),
    ("list", lambda: os.listdir(root)),
    ("submissions", lambda: os.listdir(root + "/submission")),
    ("results", lambda: open(root + "/results/results.json", "w").write("{{}}")),
):
    try:
        action()
        found.append(what + "=done")
    except OSError:
        found.append(what + "=refused")
raise RuntimeError(" ".join(found))
"""


def _another_uid_can_run_this_python() -> bool:
    """Whether an unprivileged uid can run this interpreter (not so for a Python under /root,
    0700: run the test from a venv every user can read, e.g. one made from /usr/bin/python3)."""
    try:
        done = subprocess.run([sys.executable, "-c", "pass"], user=64000, group=64000, timeout=60)
    except (OSError, subprocess.SubprocessError):
        return False
    return done.returncode == 0


@pytest.mark.slow
@pytest.mark.skipif(not hasattr(os, "geteuid") or os.geteuid() != 0, reason="needs root")
def test_without_bubblewrap_student_code_cannot_read_gradescopes_files():
    """Gradescope's layout in a folder every user may enter (as /autograder is); the kernel
    runs with the limits only (bubblewrap refused), as the unused uid 64000."""
    from roofline.exercises.grader import gradescope

    if not _another_uid_can_run_this_python():
        pytest.skip(f"uid 64000 cannot run {sys.executable} (a venv every user can read is needed)")
    outer = Path(tempfile.mkdtemp(prefix="gs-", dir="/tmp"))
    try:
        outer.chmod(0o755)
        open_file = outer / "open.txt"  # canary: a world-readable file the code can read
        open_file.write_text("anyone may read this")
        open_file.chmod(0o644)
        root = outer / "autograder"
        for folder in ("source", "submission", "results"):
            (root / folder).mkdir(parents=True, mode=0o755)
        (root / "source" / "config.json").write_text('{"set": "part1", "visibility": "hidden"}')
        (root / "submission_metadata.json").write_text('{"users": [{"sid": "alice"}]}')
        for path in (root, root / "source" / "config.json", root / "submission_metadata.json"):
            path.chmod(0o755 if path.is_dir() else 0o644)  # world-readable before lock_down
        attack = GRADESCOPE_ATTACK.format(root=str(root), open_file=str(open_file))
        make_samples.make(
            root / "submission" / "hw.ipynb", "alice", make_samples.CORRECT, {"q8": attack}
        )
        result = gradescope.run(root, sandbox="rlimits")
        written = json.loads((root / "results" / "results.json").read_text())
    finally:
        shutil.rmtree(outer, ignore_errors=True)
    assert written == result
    assert result["score"] == 8.0  # canary: the notebook was graded, 8 of 8
    assert (
        "open=done metadata=refused config=refused list=refused submissions=refused "
        "results=refused" in result["output"]
    ), result.get("output")


# ---------------------------------------------------------------- PrairieLearn
def test_prairielearn_results_by_hand():
    from roofline.exercises.grader import prairielearn

    rows = _rows("homework_part1.ipynb", "s1", {"q1": True, "q2": False, "q3": True})
    result = prairielearn.results(rows, {"q1": 2.0, "q2": 1.0, "q3": 1.0})
    # points right: q1 (2) + q3 (1) = 3 of 2 + 1 + 1 = 4 -> 0.75
    assert result["gradable"] is True and result["score"] == 0.75
    assert [(t["name"], t["points"], t["max_points"]) for t in result["tests"]] == [
        ("q1", 2.0, 2.0),
        ("q2", 0.0, 1.0),
        ("q3", 1.0, 1.0),
    ]
    # the README's example: 8 questions, q7 weighs 2 (9 points), all right but q7: 7/9
    verdicts = {f"q{i}": i != 7 for i in range(1, 9)}
    readme = prairielearn.results(
        _rows("h.ipynb", "s1", verdicts),
        {"q7": 2.0} | {f"q{i}": 1.0 for i in range(1, 9) if i != 7},
    )
    assert readme["score"] == pytest.approx(7 / 9) and f"{readme['score']:.2f}" == "0.78"
    for reason, words in FIXABLE_ERRORS.items():  # not graded, no attempt counted
        bad = prairielearn.results(_rows("x.ipynb", "", error=reason), {"q1": 1.0})
        assert bad["gradable"] is False and "score" not in bad and "tests" not in bad
        assert words in bad["format_errors"][0]
    assert prairielearn.results([], {"q1": 1.0})["gradable"] is False  # nothing uploaded


def test_prairielearn_export_is_a_course_layout(tmp_path):
    out = tmp_path / "pl"
    done = subprocess.run(
        [sys.executable, "-m", "roofline", "prairielearn", "--set", "part1", "--out", str(out)]
        + ["--weights", "q1=2"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    question = out / "questions" / "roofline_part1"
    info = json.loads((question / "info.json").read_text())
    assert info["gradingMethod"] == "External" and info["type"] == "v3"
    options = info["externalGradingOptions"]
    assert options["enabled"] and options["serverFilesCourse"] == ["roofline_grader/"]
    assert options["entrypoint"] == "/grade/serverFilesCourse/roofline_grader/run.sh"
    assert options["timeout"] <= 600  # PrairieLearn's ceiling
    assert 'file-names="homework_part1.ipynb"' in (question / "question.html").read_text()
    config = json.loads((question / "tests" / "config.json").read_text())
    assert config == {"set": "part1", "weights": "q1=2"}
    grader = out / "serverFilesCourse" / "roofline_grader"
    assert os.access(grader / "run.sh", os.X_OK)
    (wheel,) = grader.glob("roofline-*-py3-none-any.whl")
    assert wheel.name in (grader / "Dockerfile").read_text()
    bad = subprocess.run(
        [sys.executable, "-m", "roofline", "prairielearn", "--set", "part9", "--out", str(out)],
        cwd=ROOT,
        capture_output=True,
        text=True,
    )
    assert bad.returncode == 2 and "no homework set 'part9'" in bad.stderr


def test_prairielearn_exam_question_takes_the_exam_notebook(tmp_path):
    # The exam is handed out as exercises/exam.ipynb, and Colab downloads it as exam.ipynb:
    # the upload must ask for that name (it asked for homework_exam.ipynb, issue 33).
    from roofline.exercises.grader import prairielearn

    out = prairielearn.export("exam", tmp_path / "pl")
    question = out / "questions" / "roofline_exam"
    assert 'file-names="exam.ipynb"' in (question / "question.html").read_text()
    assert json.loads((question / "info.json").read_text())["title"] == "Rooflines: The worked exam"
    assert json.loads((question / "tests" / "config.json").read_text())["set"] == "exam"


def _prairielearn_job(tmp_path, student_id: str, notebook_set: str = "part1") -> Path:
    """/grade as PrairieLearn lays it out, from the export: tests/ and serverFilesCourse/
    copied, the upload in student/, the question's data in data/data.json."""
    out = tmp_path / "pl"
    from roofline.exercises.grader import prairielearn

    prairielearn.export("part1", out, "q1=2")
    grade = tmp_path / "grade"
    shutil.copytree(out / "questions" / "roofline_part1" / "tests", grade / "tests")
    shutil.copytree(
        out / "serverFilesCourse" / "roofline_grader",
        grade / "serverFilesCourse" / "roofline_grader",
    )
    (grade / "student").mkdir(parents=True)
    (grade / "data").mkdir()
    (grade / "data" / "data.json").write_text('{"params": {}, "submitted_answers": {}}')
    notebook = grade / "student" / "homework_part1.ipynb"
    make_samples.make(notebook, student_id, make_samples.CORRECT)
    if notebook_set != "part1":
        import nbformat

        nb = nbformat.read(str(notebook), as_version=4)
        nb.metadata["rooflines_set"] = notebook_set
        nbformat.write(nb, str(notebook))
    return grade


def _run_entrypoint(grade: Path) -> dict:
    run_sh = grade / "serverFilesCourse" / "roofline_grader" / "run.sh"
    env = {**os.environ, "PL_GRADE_ROOT": str(grade)}
    env["PATH"] = f"{Path(sys.executable).parent}{os.pathsep}{env['PATH']}"  # python3: this venv
    done = subprocess.run([str(run_sh)], env=env, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    return json.loads((grade / "results" / "results.json").read_text())


@pytest.mark.slow
def test_prairielearn_entrypoint_grades_a_notebook_in_prairielearns_layout(tmp_path):
    result = _run_entrypoint(_prairielearn_job(tmp_path, "alice"))
    # 8 questions right, q1 weighs 2: 9 of 9 points -> score 1.0
    assert result["gradable"] is True and result["score"] == 1.0
    assert len(result["tests"]) == 8 and result["tests"][0]["max_points"] == 2.0


@pytest.mark.slow
def test_prairielearn_marks_a_fixable_submission_not_gradable(tmp_path):
    empty = _run_entrypoint(_prairielearn_job(tmp_path / "a", ""))
    assert empty["gradable"] is False and "type your student id" in empty["format_errors"][0]
    other = _run_entrypoint(_prairielearn_job(tmp_path / "b", "bob", notebook_set="part2"))
    assert other["gradable"] is False and "homework part2" in other["format_errors"][0]


def _gradescope_job(tmp_path, typed_id: str, sid: str, visibility: str = "hidden") -> Path:
    """/autograder as Gradescope lays it out: source/config.json, submission/, metadata."""
    root = tmp_path / "autograder"
    (root / "source").mkdir(parents=True)
    (root / "submission").mkdir()
    config = {"set": "part1", "weights": "q7=2", "visibility": visibility}
    (root / "source" / "config.json").write_text(json.dumps(config))
    metadata = {"users": [{"email": "x@uni.edu", "name": "X", "sid": sid}]}
    (root / "submission_metadata.json").write_text(json.dumps(metadata))
    make_samples.make(root / "submission" / "homework_part1.ipynb", typed_id, make_samples.CORRECT)
    return root


@pytest.mark.slow
def test_gradescope_readme_example_ada_graded_eve_told_at_once(tmp_path):
    from roofline.exercises.grader import gradescope

    ada = gradescope.run(_gradescope_job(tmp_path / "ada", "s9001", "s9001"))
    assert ada["score"] == 9.0  # 8 right, q7 weighs 2: 7 + 2
    assert ada["visibility"] == "hidden" and {t["visibility"] for t in ada["tests"]} == {"hidden"}
    eve = gradescope.run(_gradescope_job(tmp_path / "eve", "s9001", "s9002"))
    (test,) = eve["tests"]
    assert (test["name"], test["visibility"], eve["score"]) == (
        "Fix this and resubmit",
        "visible",
        0,
    )
    assert "STUDENT_ID 's9001' is not your id (s9002)" in test["output"]


PRAIRIELEARN_ATTACK = """
import os

grade, found = {grade!r}, []
for what, action in (
    ("open", lambda: open({open_file!r}).read()),
    ("config", lambda: open(grade + "/tests/config.json").read()),
    ("data", lambda: open(grade + "/data/data.json").read()),
    ("grader", lambda: os.listdir(grade + "/serverFilesCourse")),
    ("results", lambda: open(grade + "/results/results.json", "w").write("{{}}")),
):
    try:
        action()
        found.append(what + "=done")
    except OSError:
        found.append(what + "=refused")
raise RuntimeError(" ".join(found))
"""


@pytest.mark.slow
@pytest.mark.skipif(not hasattr(os, "geteuid") or os.geteuid() != 0, reason="needs root")
def test_prairielearn_without_bubblewrap_student_code_cannot_read_the_job():
    from roofline.exercises.grader import prairielearn

    if not _another_uid_can_run_this_python():
        pytest.skip(f"uid 64000 cannot run {sys.executable} (a venv every user can read is needed)")
    outer = Path(tempfile.mkdtemp(prefix="pl-", dir="/tmp"))
    try:
        outer.chmod(0o755)
        open_file = outer / "open.txt"  # canary: a world-readable file the code can read
        open_file.write_text("anyone may read this")
        open_file.chmod(0o644)
        grade = _prairielearn_job(outer, "alice")
        for path in [grade, *grade.rglob("*")]:
            path.chmod(0o755 if path.is_dir() else 0o644)  # world-readable before lock_down
        attack = PRAIRIELEARN_ATTACK.format(grade=str(grade), open_file=str(open_file))
        notebook = grade / "student" / "homework_part1.ipynb"
        make_samples.make(notebook, "alice", make_samples.CORRECT, {"q8": attack})
        result = prairielearn.run(grade, sandbox="rlimits")
    finally:
        shutil.rmtree(outer, ignore_errors=True)
    assert result["gradable"] and result["score"] == 1.0  # canary: graded, all right
    assert (
        "open=done config=refused data=refused grader=refused results=refused" in result["message"]
    ), result["message"]
