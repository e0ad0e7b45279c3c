"""The worked exam graded end to end, as a class would (issue 33).

Two students' handed-in exam notebooks (the real `exercises/exam.ipynb`, id typed in, answer
cells filled as students fill them: values typed with units, a Python expression, a plain
number) go through the teacher's commands: `python -m roofline grade` (detailed CSV, plain
gradebook, feedback files), its Canvas and Moodle uploads, and PrairieLearn's entrypoint.

The students' numbers, as `python -m roofline exam --student ID` prints them (pinned below):

s2001 (all right): TPU v5e, 197 TFLOP/s dense bf16, 819 GB/s; B = 256, D = F = 2048; a ring
all-reduce of 256 MiB over 16 chips, 200 GB/s links one way, 10 us a step; Llama 3.1 405B's KV
cache (L = 126, H_kv = 8, d_h = 128), 4,096 tokens, bf16; Llama 3 8B (Psi = 7,504,658,432,
L = 32, H = 32, d_h = 128), T = 8,192, 256 chips, 305,000 tokens/s.

- q1: FLOPs 2 x 256 x 2048^2 = 2,147,483,648 -> t_math = 10.90 us; bytes 2 (256 x 2048 x 2 +
  2048^2) = 10,485,760 -> t_comms = 12.80 us: memory-bound, 12.80 us. Typed "12.8 us": right.
- q2: I* = 197e12 / 819e9 = 240.54; B = I* D F / (D F - I* (D + F)) = 240.54 x 4,194,304 /
  (4,194,304 - 240.54 x 4096) = 314.39. Typed with I* rounded to 240.5: 314.32, 0.02 % off
  (tolerance 0.1 %): right.
- q3: 2 x 15 x 10 us + 2 x 15/16 x 268,435,456 B / 200 GB/s = 300 us + 2.517 ms = 2.817 ms.
  Typed "2.82 ms" (0.1 % off): right.
- q4: 2 x 126 x 8 x 128 x 2 B x 4096 = 2,113,929,216 B. Typed that product: right.
- q5: 6 Psi + 12 L H d_h T = 45,027,950,592 + 12,884,901,888 = 57,912,852,480 FLOPs a token;
  x 305,000 / (256 x 197e12) = 35.02 %. Typed 0.35: right.  Total 5 of 5.

s2002 (slips): H100 SXM, 989.5 TFLOP/s, 3.35 TB/s; B = 2048, D = F = 16384; 256 MiB over 32
chips, 450 GB/s, 1 us a step; Llama 3.1 405B, 4,096 tokens, fp8; Llama 3 70B, T = 4,096.

- q1: FLOPs 2 x 2048 x 16384^2 = 1,099,511,627,776 -> t_math = 1.111 ms > t_comms =
  671,088,640 B / 3.35 TB/s = 200 us: 1.111 ms. The slip: the FLOP count without its factor 2,
  2048 x 16384^2 / 989.5e12 = 0.5556 ms, half: wrong, the feedback names the lost factor 2.
- q2: the answer cell raises NameError (`ridge` was never defined): no answer; its feedback
  line names the raise.
- q3: 2 x 31 x 1 us + 2 x 31/32 x 268,435,456 B / 450 GB/s = 62 us + 1.156 ms = 1.218 ms.
  Typed as the string "1.2 ms": 1.5 % under, inside the 2 % tolerance, read with its unit:
  right (a string answer costs nothing).
- q4: 2 x 126 x 8 x 128 x 1 B x 4096 = 1,056,964,608 B = 1.057 GB. Typed "1.06 MB": 1000
  times too small: wrong, a unit prefix named.
- q5: left blank (None): unanswered.  Total 1 of 5 (q3).
"""

import csv
import json
import os
import random
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from roofline.exercises import editions, homework

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests" / "data" / "submissions"))
import make_samples  # noqa: E402 (found on the path set just above)

# sandboxed grading runs share the slot uids: one at a time across xdist workers
pytestmark = pytest.mark.usefixtures("one_grader_at_a_time")

# several test runs may share this machine: each grading run gets its own sandbox uids
UID_BASE = 1_000_000 + 8 * random.randrange(100_000)
EXAM = ROOT / "exercises" / "exam.ipynb"

#: The numbers each id draws (as the handout prints them), pinned so the derivation above stays
#: about them.
NUMBERS = {
    "s2001": {
        "chip": "TPU v5e",
        "B": 256,
        "D": 2048,
        "F": 2048,
        "ring_n": 16,
        "message_bytes": 256 * 2**20,
        "link_bytes_per_s": 200e9,
        "hop_latency_s": 10e-6,
        "kv_model": "Llama 3.1 405B",
        "context": 4096,
        "kv_dtype": "bf16",
        "train_model": "Llama 3 8B",
        "seq_len": 8192,
        "train_chips": 256,
        "tokens_per_s": 305_000.0,
    },
    "s2002": {
        "chip": "H100 SXM",
        "B": 2048,
        "D": 16384,
        "F": 16384,
        "ring_n": 32,
        "message_bytes": 256 * 2**20,
        "link_bytes_per_s": 450e9,
        "hop_latency_s": 1e-6,
        "kv_model": "Llama 3.1 405B",
        "context": 4096,
        "kv_dtype": "fp8",
        "train_model": "Llama 3 70B",
        "seq_len": 4096,
        "train_chips": 256,
        "tokens_per_s": 254_000.0,
    },
}

ADA = {  # s2001: every answer right, typed as a student types them
    "q1": '"12.8 us"',
    "q2": "240.5 * 2048 * 2048 / (2048 * 2048 - 240.5 * (2048 + 2048))",
    "q3": '"2.82 ms"',
    "q4": "2 * 126 * 8 * 128 * 2 * 4096",
    "q5": "0.35",
}
BOB = {  # s2002: the typical slips
    "q1": "2048 * 16384 * 16384 / 989.5e12",  # the FLOP count without its factor 2
    "q2": "ridge * 16384 * 16384 / (16384 * 16384 - ridge * (16384 + 16384))",  # NameError
    "q3": '"1.2 ms"',  # a string with its unit (and right)
    "q4": '"1.06 MB"',  # GB typed MB: 1000 times too small
    "q5": None,  # left blank
}

#: (submitted as the CSV shows it, correct, words the feedback must hold) per question.
EXPECTED = {
    "s2001": {
        "q1": ("12.8 us", "yes", "is right"),
        "q2": (None, "yes", "is right"),  # a float: checked below to 0.1 %
        "q3": ("2.82 ms", "yes", "is right"),
        "q4": ("2113929216", "yes", "is right"),
        "q5": ("0.35", "yes", "is right"),
    },
    "s2002": {
        "q1": (None, "no", "the FLOP count lost its factor 2"),
        "q2": ("", "no", "code cell 5 raised NameError: name 'ridge' is not defined"),
        "q3": ("1.2 ms", "yes", "is right"),
        "q4": ("1.06 MB", "no", "1000 times too small: a unit prefix slipped"),
        "q5": ("", "no", "unanswered"),
    },
}
#: The by-hand values the teacher-only `expected` column must hold (the derivation above).
BY_HAND = {
    ("s2001", "q1"): 10_485_760 / 819e9,
    ("s2001", "q3"): 2 * 15 * 10e-6 + 2 * 15 / 16 * 268_435_456 / 200e9,
    ("s2001", "q4"): 2_113_929_216,
    ("s2001", "q5"): 57_912_852_480 * 305_000 / (256 * 197e12),
    ("s2002", "q1"): 2 * 2048 * 16384**2 / 989.5e12,
    ("s2002", "q3"): 2 * 31 * 1e-6 + 2 * 31 / 32 * 268_435_456 / 450e9,
    ("s2002", "q4"): 1_056_964_608,
}
SCORES = {"s2001": 5, "s2002": 1}


def _hand_in(folder: Path, names=("ada_exam.ipynb", "bob_exam.ipynb")) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    make_samples.make(folder / names[0], "s2001", ADA, notebook=EXAM, work="")
    make_samples.make(folder / names[1], "s2002", BOB, notebook=EXAM, work="")
    return folder


def _grade(tmp_path: Path, subs: Path, name: str, *options: str) -> Path:
    out = tmp_path / f"{name}.csv"
    command = [sys.executable, "-m", "roofline", "grade", str(subs), "--out", str(out)]
    command += ["--jobs", "2", "--timeout", "60", "--sandbox-uid", str(UID_BASE), *options]
    done = subprocess.run(command, cwd=ROOT, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-3000:]
    return out


def _read(path: Path) -> list[dict]:
    with open(path, newline="", encoding="utf-8") as handle:
        return list(csv.DictReader(handle))


def test_the_handout_numbers_are_the_pinned_ones():
    for sid, numbers in NUMBERS.items():
        assert homework.parameters("exam", sid, quiet=True) == numbers, sid


@pytest.mark.slow
def test_two_exam_notebooks_graded_end_to_end(tmp_path):
    subs = _hand_in(tmp_path / "subs")
    (tmp_path / "roster.txt").write_text("s2001\ns2002\n", encoding="utf-8")
    options = [
        "--summary",
        str(tmp_path / "gradebook.csv"),
        "--roster",
        str(tmp_path / "roster.txt"),
    ]
    out = _grade(tmp_path, subs, "grades", *options, "--feedback-dir", str(tmp_path / "fb"))
    rows = _read(out)
    for sid, questions in EXPECTED.items():
        mine = {r["exercise"]: r for r in rows if r["student_id"] == sid}
        for q, (submitted, correct, words) in questions.items():
            row = mine[f"exam/{q}"]
            assert row["correct"] == correct and words in row["feedback"], (sid, q, row)
            if submitted is not None:
                assert row["submitted"] == submitted, (sid, q, row)
            if (sid, q) in BY_HAND:
                assert float(row["expected"]) == pytest.approx(BY_HAND[sid, q], rel=1e-5)
        assert mine["TOTAL"]["correct"] == f"{SCORES[sid]}/5"
    ada_q2 = next(r for r in rows if r["student_id"] == "s2001" and r["exercise"] == "exam/q2")
    assert float(ada_q2["submitted"]) == pytest.approx(314.39, rel=1e-3)  # I* rounded: 314.32
    notes = [r["feedback"] for r in rows if r["exercise"] == "NOTE"]
    assert notes == ["code cell 5 raised NameError: name 'ridge' is not defined"]
    (info,) = [r for r in rows if r["exercise"] == "INFO"]
    assert f"set exam edition {editions.current('exam')}" in info["feedback"]  # the frozen one
    assert [
        (r["student_id"], r["score"], r["max_score"], r["status"])
        for r in _read(tmp_path / "gradebook.csv")
    ] == [("s2001", "5", "5", "graded"), ("s2002", "1", "5", "graded")]
    feedback = {p.name.split(".ipynb")[0]: p.read_text() for p in (tmp_path / "fb").iterdir()}
    assert "Total: 5 of 5 questions right" in feedback["ada_exam"]
    assert "Total: 1 of 5 questions right" in feedback["bob_exam"]
    assert "exam/q4: not right. It is 1000 times too small" in feedback["bob_exam"]
    assert "1.11" not in feedback["bob_exam"]  # no expected value of a wrong answer handed out


@pytest.mark.slow
def test_exam_scores_land_in_the_canvas_and_moodle_uploads(tmp_path):
    canvas = tmp_path / "canvas.csv"
    canvas.write_text(
        "Student,ID,SIS User ID,SIS Login ID,Section,Final exam (201),Current Score\n"
        "    Points Possible,,,,,5,\n"
        '"Lovelace, Ada",11,s2001,ada,Sec 1,,\n'
        '"Babbage, Bob",12,s2002,bob,Sec 1,,\n',
        encoding="utf-8",
    )
    names = ("lovelaceada_11_901_exam.ipynb", "babbagebob_12_902_exam.ipynb")  # Canvas's names
    subs = _hand_in(tmp_path / "canvas_subs", names)
    options = ["--summary", str(tmp_path / "canvas_up.csv"), "--gradebook-format", "canvas"]
    _grade(tmp_path, subs, "c", *options, "--lms-export", str(canvas), "--assignment", "Final exam")
    with open(tmp_path / "canvas_up.csv", newline="", encoding="utf-8") as handle:
        assert list(csv.reader(handle)) == [
            ["Student", "ID", "SIS User ID", "SIS Login ID", "Section", "Final exam (201)"],
            ["    Points Possible", "", "", "", "", "5"],
            ["Lovelace, Ada", "11", "s2001", "ada", "Sec 1", "5"],
            ["Babbage, Bob", "12", "s2002", "bob", "Sec 1", "1"],
        ]
    moodle = tmp_path / "moodle.csv"
    moodle.write_text(
        "First name,Last name,ID number,Institution,Department,Email address,"
        "Assignment: Final exam (Real),Last downloaded from this course\n"
        "Ada,Lovelace,s2001,,,ada@uni.edu,-,1700000000\n"
        "Bob,Babbage,s2002,,,bob@uni.edu,-,1700000000\n",
        encoding="utf-8",
    )
    subs = _hand_in(tmp_path / "moodle_subs")
    options = ["--summary", str(tmp_path / "moodle_up.csv"), "--gradebook-format", "moodle"]
    _grade(tmp_path, subs, "m", *options, "--lms-export", str(moodle), "--assignment", "Final exam")
    with open(tmp_path / "moodle_up.csv", newline="", encoding="utf-8") as handle:
        assert list(csv.reader(handle)) == [
            [
                "First name",
                "Last name",
                "ID number",
                "Email address",
                "Assignment: Final exam (Real)",
            ],
            ["Ada", "Lovelace", "s2001", "ada@uni.edu", "5"],
            ["Bob", "Babbage", "s2002", "bob@uni.edu", "1"],
        ]


@pytest.mark.slow
def test_exam_graded_by_prairielearns_entrypoint(tmp_path):
    from roofline.exercises.grader import prairielearn

    pl = prairielearn.export("exam", tmp_path / "pl")
    scores = {}
    for sid, name, answers in (("s2001", "ada", ADA), ("s2002", "bob", BOB)):
        grade = tmp_path / name
        shutil.copytree(pl / "questions" / "roofline_exam" / "tests", grade / "tests")
        server = pl / "serverFilesCourse" / "roofline_grader"
        shutil.copytree(server, grade / "serverFilesCourse" / "roofline_grader")
        (grade / "data").mkdir()
        (grade / "data" / "data.json").write_text('{"params": {}, "submitted_answers": {}}')
        (grade / "student").mkdir()  # the upload, under the name the question asks for
        make_samples.make(grade / "student" / "exam.ipynb", sid, answers, notebook=EXAM, work="")
        env = {**os.environ, "PL_GRADE_ROOT": str(grade)}
        env["PATH"] = f"{Path(sys.executable).parent}{os.pathsep}{env['PATH']}"
        run_sh = grade / "serverFilesCourse" / "roofline_grader" / "run.sh"
        done = subprocess.run([str(run_sh)], env=env, capture_output=True, text=True, timeout=300)
        assert done.returncode == 0, done.stderr[-2000:]
        scores[sid] = json.loads((grade / "results" / "results.json").read_text())
    assert scores["s2001"]["score"] == 1.0  # 5 of 5
    assert scores["s2002"]["score"] == pytest.approx(1 / 5)  # q3 only
    points = {t["name"]: t["points"] for t in scores["s2002"]["tests"]}
    assert points == {"q1": 0, "q2": 0, "q3": 1, "q4": 0, "q5": 0}


@pytest.mark.slow
def test_exam_graded_by_gradescopes_autograder(tmp_path):
    from roofline.exercises.grader import gradescope

    for sid, answers in (("s2001", ADA), ("s2002", BOB)):
        root = tmp_path / sid / "autograder"  # as Gradescope lays it out
        (root / "source").mkdir(parents=True)
        (root / "submission").mkdir()
        config = {"set": "exam", "weights": "", "visibility": "after_due_date"}
        (root / "source" / "config.json").write_text(json.dumps(config))
        metadata = {"users": [{"email": "x@uni.edu", "name": "X", "sid": sid}]}
        (root / "submission_metadata.json").write_text(json.dumps(metadata))
        make_samples.make(root / "submission" / "exam.ipynb", sid, answers, notebook=EXAM, work="")
        result = gradescope.run(root)
        assert result["score"] == SCORES[sid], result
        right = {t["name"]: t["score"] for t in result["tests"]}
        expected = {q: float(v[1] == "yes") for q, v in EXPECTED[sid].items()}
        assert right == expected, result
