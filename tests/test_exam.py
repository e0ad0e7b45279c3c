"""The worked exam (exercises/exam.md, roofline/exercises/hw_exam.py): the default exam's answers
derived by hand, per-student numbers, solutions the checker accepts, the handout command."""

from pathlib import Path

import pytest

from roofline.__main__ import main as roofline_main
from roofline.exercises import homework
from roofline.exercises import hw_exam as exam

ROOT = Path(__file__).resolve().parent.parent
IDS = ["", "s1", "s2", "s1234567", "ada", "Grace Hopper"] + [f"x{i}" for i in range(30)]

#: The demo id's numbers (what the page shows with no id); pinned so the by-hand values below
#: stay about these numbers.
DEMO = {
    "chip": "MI300X",
    "B": 64,
    "D": 8192,
    "F": 8192,
    "ring_n": 32,
    "message_bytes": 2**30,
    "link_bytes_per_s": 200e9,
    "hop_latency_s": 5e-6,
    "kv_model": "Llama 3.1 405B",
    "context": 8192,
    "kv_dtype": "fp8",
    "train_model": "Llama 3 70B",
    "seq_len": 8192,
    "train_chips": 64,
    "tokens_per_s": 78_200.0,
}
MI300X_PEAK, MI300X_HBM = 1307.4e12, 5.3e12  # AMD's MI300X data sheet, dense bf16 and HBM3


def _answer(q, params=DEMO):
    return exam.ANSWERS[q](params)


def test_demo_numbers_are_the_pinned_ones():
    assert homework.parameters("exam", "", quiet=True) == DEMO == exam.DEMO


def test_default_exam_by_hand():
    # q1: FLOPs 2 x 64 x 8192^2 = 8,589,934,592; bytes 2 (2 x 64 x 8192 + 8192^2) =
    # 136,314,880; t_math 6.57 us < t_comms 136,314,880 / 5.3e12 = 25.72 us: memory-bound
    t_comms = 136_314_880 / MI300X_HBM
    assert 8_589_934_592 / MI300X_PEAK < t_comms
    assert _answer("q1") == pytest.approx(t_comms) == pytest.approx(25.72e-6, rel=1e-3)
    # q2: I* = 1307.4e12 / 5.3e12 = 246.68; B = I* D^2 / (D^2 - 2 I* D) = I* D / (D - 2 I*)
    # = 246.68 x 8192 / (8192 - 493.36) = 262.49
    ridge = MI300X_PEAK / MI300X_HBM
    assert _answer("q2") == pytest.approx(ridge * 8192 / (8192 - 2 * ridge))
    assert _answer("q2") == pytest.approx(262.49, abs=0.01)
    # q3: 2 x 31 x 5 us + 2 x 31/32 x 2^30 B / 200 GB/s = 310 us + 10.401 ms = 10.711 ms
    assert _answer("q3") == pytest.approx(310e-6 + 2 * 31 / 32 * 2**30 / 200e9)
    assert _answer("q3") == pytest.approx(10.711e-3, rel=1e-4)
    # q4: Llama 3.1 405B (config.json: 126 layers, 8 KV heads of 128), fp8, 8192 tokens:
    # 2 x 126 x 8 x 128 x 1 x 8192 = 2,113,929,216 bytes
    assert _answer("q4") == 2 * 126 * 8 * 128 * 8192 == 2_113_929_216
    # q5: Llama 3 70B, Psi = 69,501,714,432 matmul weights; 6 Psi = 417,010,286,592;
    # 12 L H d_h T = 12 x 80 x 64 x 128 x 8192 = 64,424,509,440; per token 481,434,796,032;
    # x 78,200 tokens/s / (64 x 1307.4e12) = 44.99 %
    per_token = 6 * 69_501_714_432 + 12 * 80 * 64 * 128 * 8192
    assert per_token == 481_434_796_032
    assert _answer("q5") == pytest.approx(per_token * 78_200 / (64 * MI300X_PEAK))
    assert _answer("q5") == pytest.approx(0.4499, abs=1e-4)


def test_two_students_get_different_numbers_and_answers():
    one = homework.parameters("exam", "s1", quiet=True)
    two = homework.parameters("exam", "s2", quiet=True)
    assert one != two
    assert [_answer(q, one) for q in exam.QUESTIONS] != [_answer(q, two) for q in exam.QUESTIONS]
    assert homework.parameters("exam", " S1 ", quiet=True) == one  # the same student


@pytest.mark.parametrize("student", IDS)
def test_worked_solutions_agree_with_the_checker(student):
    params = homework.parameters("exam", student, quiet=True)
    for q in exam.QUESTIONS:
        text, value = exam.worked(q, params)
        feedback = homework.check(student, "exam", q, value)
        assert feedback.correct, (student, q, value, feedback.message)
        assert value == pytest.approx(_answer(q, params), rel=1e-9)
        assert text and "{" not in text  # every step filled in


@pytest.mark.parametrize(
    "q, wrong, words",
    [
        # the all-reduce without its latency: 2 x 31/32 x 2^30 / 200e9 = 10.4 ms
        ("q3", 2 * 31 / 32 * 2**30 / 200e9, "latency"),
        # MFU over one chip's peak: 44.99 % x 64
        ("q5", 0.4499 * 64, "one chip's peak"),
        # q1 with the shorter time, t_math = 8,589,934,592 / 1307.4e12 = 6.57 us
        ("q1", 8_589_934_592 / 1307.4e12, "shorter of the two times"),
        # the KV cache counted with K only: half of 2,113,929,216
        ("q4", 2_113_929_216 / 2, "K and V"),
    ],
)
def test_typical_slips_get_their_cause(q, wrong, words):
    feedback = homework.check("", "exam", q, wrong)
    assert not feedback.correct and words in feedback.message, feedback.message


def test_handout_and_key_from_the_command_line(tmp_path, capsys):
    sheet, key = tmp_path / "exam.md", tmp_path / "key.md"
    assert roofline_main(["exam", "--student", "s1", "--out", str(sheet)]) == 0
    assert roofline_main(["exam", "--student", "s1", "--solutions", "--out", str(key)]) == 0
    text, answers = sheet.read_text(encoding="utf-8"), key.read_text(encoding="utf-8")
    params = homework.parameters("exam", "s1", quiet=True)
    for label, value in homework.given("exam", params).rows:
        assert f"- {label}: {value}" in text
    assert "Solution" not in text
    for q in exam.QUESTIONS:
        assert f"## {q}" in text and exam.solution(q, params) in answers
    assert "student s1" in text
    capsys.readouterr()
    assert roofline_main(["exam", "--student", "s2"]) == 0  # no --out: printed
    assert "student s2" in capsys.readouterr().out


def test_page_asks_every_question_with_a_solution():
    page = (ROOT / "exercises" / "exam.md").read_text(encoding="utf-8")
    for q in exam.QUESTIONS:
        assert f'homework.check(STUDENT_ID, "exam", "{q}", answers["{q}"])' in page
        assert f'exam.worked("{q}", params)' in page
        assert f"{{solution-start}} exam-{q}" in page
    toc = (ROOT / "_toc.yml").read_text(encoding="utf-8")
    assert toc.index("exercises/homework_part4") < toc.index("exercises/exam")


def test_handout_key_and_worked_solutions_use_the_frozen_edition(monkeypatch):
    """A catalog fix after the exam was set moves no student's handout, key or worked value
    (issue 33): they read the exam's edition, as the checker and the grader do."""
    import dataclasses

    from roofline import catalog, get_chip
    from roofline.exercises import editions

    sid = next(
        f"s{i}"
        for i in range(200)
        if homework.parameters("exam", f"s{i}", quiet=True)["chip"] == "H100 SXM"
    )
    params = homework.parameters("exam", sid, quiet=True)
    before = exam.handout(sid, solutions=True)
    assert f"(edition {editions.current('exam')})" in before
    live = get_chip("H100 SXM")
    # The fix: the H100's memory bandwidth quoted 10 % higher (any figure q1 reads would do).
    fixed = dataclasses.replace(live, hbm_bytes_per_s=live.hbm_bytes_per_s * 1.1)
    monkeypatch.setitem(catalog.CATALOG, "H100 SXM", fixed)
    assert get_chip("H100 SXM").hbm_bytes_per_s == live.hbm_bytes_per_s * 1.1  # canary
    assert exam.handout(sid, solutions=True) == before
    for q in exam.QUESTIONS:
        assert homework.check(sid, "exam", q, exam.worked(q, params)[1]).correct, q
    # Canary: with the live catalog, q1's worked value moves (t_comms is 1.1x shorter), and
    # q2's exact batch too (I* = P / BW_mem is 1.1x smaller).
    with editions.frozen("exam", editions.LIVE):
        assert exam.SOLVERS["q2"](params)[1] != pytest.approx(exam.worked("q2", params)[1])


def test_the_exam_notebook_names_its_set_for_the_grader():
    """The grader reads a handed-in notebook's set from its metadata, as for the homework: a
    notebook handed in to another assignment is then refused by name (issue 33: the exam's twin
    had no set, so only its code hinted at it)."""
    import json

    from roofline.exercises.grader import report

    metadata = json.loads((ROOT / "exercises" / "exam.ipynb").read_text())["metadata"]
    assert report.notebook_set(metadata) == "exam"
    set_id, why = report.which_set({"set": report.notebook_set(metadata)}, "part1")
    assert set_id is None and "homework exam" in why


def test_a_flop_count_without_its_factor_2_is_named_where_it_shows():
    # s2002: H100 SXM (989.5 TFLOP/s dense bf16, 3.35 TB/s), B = 2048, D = F = 16384.
    # t_math = 2 x 2048 x 16384^2 / 989.5e12 = 1.111 ms > t_comms = 671,088,640 / 3.35e12 =
    # 200 us; B D F / P = 0.556 ms is still above t_comms, so the lost 2 is the answer's half.
    assert homework.parameters("exam", "s2002", quiet=True)["chip"] == "H100 SXM"
    feedback = homework.check("s2002", "exam", "q1", 2048 * 16384**2 / 989.5e12)
    assert not feedback.correct and "lost its factor 2" in feedback.message
    assert "bytes per element" not in feedback.message  # the bytes cannot halve this answer
    # Canary: the demo's memory-bound matmul (t_comms = 25.72 us): half of t_comms is a byte
    # slip, the generic factor-2 message, not the FLOP count.
    half = homework.check("", "exam", "q1", 136_314_880 / 5.3e12 / 2)
    assert "lost its factor 2" not in half.message and "half the answer" in half.message
