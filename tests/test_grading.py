"""`python -m roofline grade` on a folder of sample submissions gives exactly the expected CSV.

The expected rows are written from what each sample contains (tests/data/submissions/
make_samples.py): which answers it holds, and which mistake each wrong one makes.
"""
import csv
import math
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests" / "data" / "submissions"))
import make_samples  # noqa: E402

from roofline.exercises import homework  # noqa: E402

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
        rows.append((student_id.strip(), file, f"part1/{q}", value, "yes" if ok else "no", fragment))
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
    result = subprocess.run([sys.executable, "-m", "roofline", "grade", str(folder), "--out", str(out),
                             "--timeout", "4", "--jobs", "2"], cwd=ROOT, capture_output=True,
                            text=True, timeout=300)
    assert result.returncode == 0, result.stderr[-3000:]
    with open(out, newline="", encoding="utf-8") as handle:
        got = list(csv.DictReader(handle))
    assert list(got[0]) == ["student_id", "file", "exercise", "submitted", "correct", "feedback"]

    expected = []
    expected += _graded("alice", "alice.ipynb", make_samples.CORRECT)
    expected += _graded("bob", "bob.ipynb", make_samples.PARTLY_WRONG)
    expected += _graded("carol", "carol.ipynb", {"q1": make_samples.CORRECT["q1"]})
    expected += [("", "corrupt.ipynb", "ERROR", "", "", "cannot read the notebook")]
    expected += _graded("dave", "dave_loop.ipynb", make_samples.CORRECT,
                        notes=["ran longer than 4 s and was stopped"])
    expected += _graded("erin", "erin_fake.ipynb", {q: "1" for q in QUESTIONS})
    expected += _graded("frank", "frank_1.ipynb", make_samples.CORRECT, duplicate_of="frank_2.ipynb")
    expected += _graded(" Frank ", "frank_2.ipynb", make_samples.CORRECT, duplicate_of="frank_1.ipynb")
    expected += [("", "no_id.ipynb", "ERROR", "", "", "STUDENT_ID is empty")]

    assert len(got) == len(expected), [(r["file"], r["exercise"]) for r in got]
    for row, (sid, file, exercise, submitted, correct, fragment) in zip(got, expected):
        where = f"{file} {exercise}: {row}"
        assert (row["student_id"], row["file"], row["exercise"], row["correct"]) == \
               (sid, file, exercise, correct), where
        if isinstance(submitted, float) or (isinstance(submitted, int) and not isinstance(submitted, bool)):
            assert math.isclose(float(row["submitted"]), submitted, rel_tol=1e-12), where
        else:
            assert row["submitted"] == str(submitted), where
        assert fragment in row["feedback"], where
    # the fake "All correct" printed by erin's notebook changed nothing
    assert all(r["correct"] == "no" for r in got if r["file"] == "erin_fake.ipynb" and r["exercise"] != "TOTAL")


def test_cli_rejects_bad_arguments(tmp_path):
    result = subprocess.run([sys.executable, "-m", "roofline", "grade", str(tmp_path / "nope"),
                             "--out", str(tmp_path / "g.csv")], capture_output=True, text=True)
    assert result.returncode == 2 and "not a folder" in result.stderr
    result = subprocess.run([sys.executable, "-m", "roofline", "grade", str(tmp_path), "--jobs", "0"],
                            capture_output=True, text=True)
    assert result.returncode == 2 and "must be positive" in result.stderr


def test_measure_subcommand_is_dispatched_lazily():
    from roofline.__main__ import main
    import roofline.measure.cli as cli
    calls = []
    original = cli.main
    cli.main = lambda argv: calls.append(argv) or 0
    try:
        assert main(["measure", "--quick"]) == 0
    finally:
        cli.main = original
    assert calls == [["--quick"]]
