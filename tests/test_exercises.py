"""The exercise checker: every exercise accepts its own answer and diagnoses its listed
mistakes; `check` never raises on what a student types; the web page's answer box
carries the same data and (run in node) gives the same verdicts as the kernel."""

import json
import math
import shutil
import subprocess

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import roofline as rl
from roofline.exercises import (
    Exercise,
    Feedback,
    Mistake,
    answerbox,
    check,
    core,
    get_exercise,
    homework,
    list_exercises,
)

ALL = list_exercises()


def _expected_input(exercise, value):
    return value


@pytest.mark.parametrize("exercise_id", ALL)
def test_every_exercise_accepts_its_own_answer(exercise_id):
    exercise = get_exercise(exercise_id)
    expected = exercise.expected()
    feedback = check(exercise_id, expected)
    assert isinstance(feedback, Feedback)
    assert feedback.correct, feedback.message
    if exercise.kind not in ("symbolic", "choice", "parts"):
        value = float(expected)
        if math.isfinite(value) and value > 0:
            # within the tolerance is right, twice the tolerance away is not
            assert check(exercise_id, value * (1 + exercise.tolerance / 2)).correct
            assert not check(exercise_id, value * (1 + 2 * exercise.tolerance + 0.01)).correct


#: The base unit written after a mistake's value, so a mistake reads as a student types it.
BASE_UNIT = {
    "time": "s",
    "rate": "FLOP/s",
    "bandwidth": "B/s",
    "size": "B",
    "count": "FLOPs",
    "intensity": "FLOPs/B",
    "number": "",
}


#: Exercises of modules the lead is rewriting (issue 11) whose table has a known flaw; strict,
#: so the test says when the rewrite has fixed it.
KNOWN_FLAWED = {}


def _flawed(ids):
    return [
        pytest.param(i, marks=pytest.mark.xfail(strict=True, reason=KNOWN_FLAWED[i]))
        if i in KNOWN_FLAWED
        else i
        for i in ids
    ]


def _typed(exercise, value):
    """A value as a student types it: with the base unit where the question wants a unit."""
    return f"{float(value)!r} {BASE_UNIT[exercise.kind]}".strip()


@pytest.mark.parametrize("exercise_id", _flawed(ALL))
def test_every_listed_mistake_gets_its_diagnosis(exercise_id):
    exercise = get_exercise(exercise_id)
    if exercise.kind == "parts":
        pytest.skip("each part is checked on its own by test_each_part_gets_its_own_diagnosis")
    table = exercise.mistake_table()
    if exercise.kind == "symbolic":
        pytest.importorskip("sympy")
    for mistake in table:
        if exercise.kind in ("symbolic", "choice"):
            feedback = check(exercise_id, mistake.value)
            assert not feedback.correct and feedback.diagnosis == mistake.message, (
                mistake,
                feedback,
            )
            continue
        feedback = check(exercise_id, _typed(exercise, mistake.value))
        assert feedback.correct == (mistake.tag == core.ACCEPTED), (mistake, feedback)
        assert feedback.diagnosis == mistake.message, (mistake, feedback)


@pytest.mark.parametrize("exercise_id", [e for e in ALL if get_exercise(e).kind == "parts"])
def test_each_part_gets_its_own_diagnosis(exercise_id):
    """A question in parts: right in every part passes; one part's mistake, with the other
    parts right, fails with that part's diagnosis; a single answer asks for all parts."""
    exercise = get_exercise(exercise_id)
    expected = list(exercise.expected())
    assert check(exercise_id, tuple(expected)).correct
    assert "asks for" in check(exercise_id, expected[0]).message
    for i, part in enumerate(exercise.parts):
        for mistake in part.mistake_table():
            answer = list(expected)
            answer[i] = (
                mistake.value
                if part.kind in ("symbolic", "choice")
                else _typed(part, mistake.value)
            )
            feedback = check(exercise_id, tuple(answer))
            assert not feedback.correct and mistake.message in feedback.message, (
                i,
                mistake,
                feedback,
            )
            assert f"({i + 1}) {part.label()}: not yet" in feedback.message


def _collisions(exercise, params, table):
    """Pairs (a, b) of the answer and mistakes that a student could not tell apart."""
    expected = float(exercise.expected(**params))
    values = [("answer", expected)] + [(m.message[:50], float(m.value)) for m in table]
    return [
        (a, b)
        for i, a in enumerate(values)
        for b in values[i + 1 :]
        if core.collide(a[1], b[1], exercise.tolerance)
    ]


@pytest.mark.parametrize("exercise_id", _flawed([e for e in ALL if not e.startswith("hw-")]))
def test_no_two_mistakes_of_an_exercise_fall_within_tolerance(exercise_id):
    """Each listed mistake, typed exactly, gets its own diagnosis; none passes as the answer."""
    exercise = get_exercise(exercise_id)
    if exercise.kind in ("symbolic", "choice", "parts"):
        return
    assert not _collisions(exercise, {}, exercise.specific_mistakes())
    assert not _collisions(exercise, {}, exercise.mistake_table())


@pytest.mark.parametrize("set_id", ["part1", "part2", "part3", "part4"])
def test_no_two_homework_mistakes_fall_within_tolerance_over_many_ids(set_id):
    for i in range(300):
        params = homework.parameters(set_id, f"student-{i}", quiet=True)
        for q in homework.questions(set_id):
            exercise = get_exercise(homework.exercise_id(set_id, q))
            if exercise.kind in ("symbolic", "choice", "parts"):
                continue
            found = _collisions(exercise, params, exercise.mistake_table(**params))
            assert not found, (q, i, params, found)


@pytest.mark.parametrize("set_id", ["part1", "part2", "part3", "part4"])
@pytest.mark.parametrize("student", ["alice", "bob", "s1234567", "Zoë Müller"])
def test_homework_answers_and_mistakes_for_many_students(set_id, student):
    from roofline.exercises import editions

    params = homework.parameters(set_id, student, quiet=True)
    for q in homework.questions(set_id):
        exercise = get_exercise(homework.exercise_id(set_id, q))
        with editions.frozen(set_id):  # the figures the set's numbers come from
            expected = exercise.expected(**params)
            mistakes = exercise.specific_mistakes(**params)
        assert homework.check(student, set_id, q, expected).correct
        for mistake in mistakes:
            feedback = homework.check(student, set_id, q, mistake.value)
            if exercise.kind in ("symbolic", "choice") or not core._close(
                float(mistake.value), float(expected), exercise.tolerance
            ):
                assert not feedback.correct and feedback.diagnosis, (q, mistake, feedback)


def test_homework_numbers_are_deterministic_and_personal():
    a = homework.parameters("part1", "s1234567", quiet=True)
    assert a == homework.parameters("part1", "  S1234567 ", quiet=True)
    others = [homework.parameters("part1", f"student-{i}", quiet=True) for i in range(40)]
    assert len({json.dumps(o, sort_keys=True) for o in others}) >= 35
    assert homework.parameters("part1", "x", quiet=True) != homework.parameters(
        "part2", "x", quiet=True
    )
    # an empty id gives the demo numbers and says what to do
    assert homework.parameters("part1", "", quiet=True) == homework.parameters(
        "part1", homework.DEMO_ID
    )


def test_homework_answers_match_a_hand_derivation():
    # part 1, q7: 2BDF/peak = 2(BD + DF + BF)/bw solved for B, written out by hand
    p = homework.parameters("part1", "bob", quiet=True)
    chip = rl.get_chip(p["chip"])
    peak, bw, D, F = chip.peak_flops_per_s("bf16"), chip.hbm_bytes_per_s, p["D"], p["F"]
    by_hand = (D * F / bw) / (D * F / peak - (D + F) / bw)
    assert homework.check("bob", "part1", "q7", by_hand).correct
    # part 2, q2: bob has 2 MI300X joined by one direct link; in the all-reduce each sends
    # its half of the bf16 partial sum (2 B F bytes) over it, then the reduced half back:
    # 2 x (2 B F / 2) = 2 B F bytes one way on that link
    p = homework.parameters("part2", "bob", quiet=True)
    assert (p["chip"], p["n"]) == ("MI300X", 2)
    sent = 2 * p["B"] * p["F"]
    assert homework.check("bob", "part2", "q2", f"{sent / 1e6} MB").correct
    assert not homework.check("bob", "part2", "q2", 2 * sent).correct  # both directions


def test_units_and_wrong_kinds_are_named():
    assert check("time-1e12-flops-h100", "1.01 ms").correct
    assert check("time-1e12-flops-h100", "1010 us").correct
    assert check("time-1e12-flops-h100", 1.0106e-3).correct
    f = check("time-1e12-flops-h100", "1.01 us")
    assert not f.correct and "1000 times too small" in f.message
    f = check("time-1e12-flops-h100", "989 TFLOP/s")
    assert f.diagnosis == "wrong unit kind" and "rate" in f.message and "time" in f.message
    assert "Unknown unit" in check("time-1e12-flops-h100", "1.01 parsecs").message
    # GB vs GiB on a size
    size = Exercise("t-size", "?", lambda p: 16e9, kind="size")
    assert size.check("16 GB").correct and size.check("16e9").correct
    assert "GiB" in size.check("16 GiB").message and not size.check("16 GiB").correct


def test_parse_quantity():
    cases = {
        "1.01 ms": (1.01e-3, "time"),
        "989 TFLOP/s": (989e12, "rate"),
        "4.5e10 B/s": (4.5e10, "bandwidth"),
        "16 GiB": (16 * 2**30, "size"),
        "240": (240, None),
        "2e12 FLOPs": (2e12, "count"),
        "989 TFLOPS": (989e12, "rate"),
        "1,000 ns": (1e-6, "time"),
        "240 FLOPs/B": (240, "intensity"),
    }
    for text, (value, kind) in cases.items():
        got, got_kind = rl.parse_quantity(text)
        assert math.isclose(got, value, rel_tol=1e-12) and got_kind == kind, text


def test_symbolic_compare_and_safety():
    import sympy

    B, D, F = sympy.symbols("B D F", positive=True)
    ex = Exercise(
        "t-sym",
        "?",
        lambda p: B * D * F,
        kind="symbolic",
        symbols=("B", "D", "F"),
        mistakes=lambda p: [Mistake(2 * B * D * F, "counted twice")],
    )
    assert ex.check(2 * B * D * F / 2).correct
    assert ex.check("B D F").correct and ex.check("(B*D)*F").correct
    b = sympy.Symbol("B")  # a student's symbol without positive=True
    assert ex.check(b * sympy.Symbol("D") * sympy.Symbol("F")).correct
    assert ex.check("2*B*D*F").diagnosis == "counted twice"
    assert "constant factor" in ex.check("3*B*D*F").message
    for evil in ("__import__('os')", "exit()", "input()", "9**9**9**9", "B" * 400, "lambda: 1"):
        f = ex.check(evil)
        assert not f.correct and f.message


class _BrokenFloat:
    def __float__(self):
        raise RuntimeError("broken")

    def __repr__(self):
        raise RuntimeError("broken repr")

    __str__ = __repr__


@pytest.mark.parametrize(
    "answer",
    [
        None,
        ...,
        "",
        "   ",
        "abc",
        [1, 2],
        (1,),
        {"a": 1},
        {1},
        b"1.01",
        float("inf"),
        float("nan"),
        -1.0,
        0,
        10**400,
        1 + 2j,
        True,
        _BrokenFloat(),
        object(),
        [[[]]],
        "1e999 s",
        "\x00",
        "😀",
    ],
)
def test_check_never_raises_on_odd_input(answer):
    for exercise_id in ALL:
        feedback = check(exercise_id, answer)
        assert (
            isinstance(feedback, Feedback)
            and isinstance(feedback.message, str)
            and feedback.message
        )
        str(feedback), feedback._repr_html_()


def test_check_with_numpy_and_sympy_numbers():
    import numpy as np
    import sympy

    t = get_exercise("time-1e12-flops-h100").expected()
    assert check("time-1e12-flops-h100", np.float32(t)).correct
    assert check("time-1e12-flops-h100", np.array(t)).correct
    assert "array of 2" in check("time-1e12-flops-h100", np.array([t, t])).message
    assert check("time-1e12-flops-h100", sympy.Float(t)).correct
    assert (
        "unknown" in check("no-such-exercise", 1).message
        or "no exercise" in check("no-such-exercise", 1).message
    )


_ANSWERS = st.recursive(
    st.none()
    | st.booleans()
    | st.integers()
    | st.floats(allow_nan=True, allow_infinity=True)
    | st.complex_numbers()
    | st.text(max_size=40)
    | st.binary(max_size=10)
    | st.sampled_from(["1.01 ms", "989 TFLOP/s", "compute", "2*B*D*F", "16 GiB", "-1 s", "1e999"]),
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=3), inner, max_size=2)
    ),
    max_leaves=5,
)


@settings(max_examples=300)
@given(exercise_id=st.sampled_from(ALL), answer=_ANSWERS)
def test_fuzz_check_never_raises(exercise_id, answer):
    feedback = check(exercise_id, answer)
    assert isinstance(feedback, Feedback) and isinstance(feedback.correct, bool)
    assert isinstance(feedback.message, str) and feedback.message


# ---------------------------------------------------------------- the static answer box
def test_answer_box_embeds_the_right_data():
    html = check("time-1e12-flops-h100", None)._repr_html_()
    assert 'class="roofline-answer-box" data-exercise="time-1e12-flops-h100"' in html
    assert "<input" in html and "<button" in html
    assert 'class="roofline-answer-feedback" role="status"' in html
    assert f"<script {answerbox.SCRIPT_MARK}>" in html and "src=" not in html and "http" not in html
    payload = answerbox.decode_payload(html.split('data-payload="')[1].split('"')[0])
    # the expected value, derived independently: 1e12 FLOPs over the dense bf16 peak
    dense = rl.get_chip("H100 SXM").peak("bf16").dense_flops_per_s
    assert math.isclose(payload["expected"], 1e12 / dense, rel_tol=1e-12)
    assert (
        payload["tolerance"] == 0.02 and payload["kind"] == "time" and payload["wanted"] == "time"
    )
    table = get_exercise("time-1e12-flops-h100").mistake_table()
    assert payload["mistakes"] == [[m.value, m.message, m.tag] for m in table]
    visible = html.split("<script")[0]
    assert "1.01" not in visible and "0.00101" not in visible  # the answer is not in plain view
    # an answered check shows no box
    assert "roofline-answer-box" not in check("time-1e12-flops-h100", 1)._repr_html_()


def test_answer_box_ids_are_unique_and_symbolic_is_honest(monkeypatch):
    monkeypatch.setenv("ROOFLINE_WEB_EDITION", "1")  # the web page's homework box
    first = check("time-1e12-flops-h100", None)._repr_html_()
    second = check("time-1e12-flops-h100", None)._repr_html_()
    ids = [h.split(' id="')[1].split('"')[0] for h in (first, second)]
    assert ids[0] != ids[1]
    sym = homework.check("", "part2", "q8", None)._repr_html_()
    assert "roofline-answer-box" in sym and "Colab" in sym
    infinite = Exercise("t-inf", "?", lambda p: float("inf"))
    payload = answerbox.answer_payload(infinite)
    assert payload["expected"] == "Infinity"


def _node_verdicts(cases):
    """Run the page's script in node on (payload, text) cases; return [(correct, message)]."""
    script = answerbox.BOX_SCRIPT
    program = (
        "globalThis.window = globalThis;\n"
        + script
        + "\nconst cases = JSON.parse(require('fs').readFileSync(0, 'utf8'));\n"
        "console.log(JSON.stringify(cases.map(c => window.RooflineAnswerBox.verdict("
        "window.RooflineAnswerBox.decode(c[0]), c[1]))));"
    )
    result = subprocess.run(
        ["node", "-e", program], input=json.dumps(cases), capture_output=True, text=True, timeout=60
    )
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout)


def _node_cases(pairs):
    """[(exercise, params, text)] -> (kernel verdicts, page verdicts), each [correct, message]."""
    cases, kernel = [], []
    encoded = {}
    for exercise, params, text in pairs:
        key = (exercise.id, json.dumps(params, sort_keys=True, default=str))
        if key not in encoded:
            encoded[key] = answerbox.encode_payload(answerbox.answer_payload(exercise, params))
        cases.append([encoded[key], text])
        f = core.check_answer(exercise, text, exercise.resolve(params))
        kernel.append([f.correct, f.message])
    return kernel, _node_verdicts(cases)


def _students():
    return [
        (homework.exercise_id(s, q), homework.parameters(s, student, quiet=True))
        for student in ("alice", "s1234567")
        for s in ("part1", "part2", "part3", "part4")
        for q in homework.questions(s)
    ]


_TEXTS = [
    "",
    "V/(n*W)",  # a symbol alias (comms-allgather-mesh: W for BW), read alike by the page
    "V/(nBW)",
    "abc",
    "1.01 ms",
    "1.01 us",
    "1 TFLOP/s",
    "-3",
    "0",
    "1e999",
    "240",
    "2x",
    "16 GiB",
    "compute",
    "Bandwidth-bound",
    "memory",
    "maybe",
    "5 parsec",
    "989 TFLOPS",
    "1,000 ns",
    "1/6",
    "1,01 ms",
    "2*989e12",
    "1.5x10^12 FLOP/s",
    "25 GB/sec",
    "4378 flops/byte",
    "34.4 gigabytes",
    "3 Tflop/s",
    "2 millisecond",
    "Bandwidth.",
    "link-bound",
    "It is compute-bound.",
    "(1+2",
    "1/0",
    "inf",
    "74%",
    "5 Gbps",
    "1 GiFLOP/s",
    "3 EiB",  # binary exa: format_bytes(binary=True) prints it
    "3 ;4",
    "2*B*D*F",
    "1 + r; 2",
    "116 sequences",  # issue 33: counts and rates with their noun, rounding, bare percentages
    "27065 tokens/s",
    "3 tokens per second",
    "46.7 chips",
    "57",
    "5 Gbps",
]


@pytest.mark.skipif(shutil.which("node") is None, reason="node is not installed")
def test_answer_box_in_javascript_gives_the_kernels_verdicts():
    pairs = []
    exercises = [(get_exercise(e), {}) for e in ALL if not e.startswith("hw-")]
    exercises += [(get_exercise(e), p) for e, p in _students()]
    for exercise, params in exercises:
        inputs = list(_TEXTS)
        if exercise.kind not in ("choice", "symbolic", "parts"):
            expected = float(exercise.expected(**params))
            inputs += [repr(expected), _typed(exercise, expected)]
            inputs += [_typed(exercise, m.value) for m in exercise.mistake_table(**params)]
            inputs += [repr(float(m.value)) for m in exercise.mistake_table(**params)]
            inputs += [
                repr(expected * 3.7),
                repr(expected / 123.4),
                f"{expected:.4g}",
                f"{expected * 0.9799:.7g}",
                f"{expected * 1.0201:.7g}",
            ]
        elif exercise.kind == "choice":
            inputs += [str(exercise.expected(**params))] + [str(c) + "." for c in exercise.choices]
        for text in inputs:
            pairs.append((exercise, params, text))
    kernel, page = _node_cases(pairs)
    mismatches = [(p[0].id, p[2], k, g) for p, k, g in zip(pairs, kernel, page) if k != g]
    assert not mismatches, "\n".join(map(str, mismatches[:8]))
    assert len(pairs) > 2000


def _formula_inputs(exercise, params):
    import sympy

    expected = sympy.sstr(
        sympy.sympify(exercise.answer(exercise.resolve(params)), locals=core._symbols(exercise))
    )
    names = exercise.symbols
    inputs = [
        expected,
        f"3*({expected})",
        f"({expected})/2",
        f"({expected})*7/12",
        f"({expected}) + 1",
        f"({expected})^2",
        "1",
        "0",
        "",
        "  ",
        "2 2",
        "x^x",
        f"{names[0]}^99",
        f"{names[0]}^(1/2)",
        f"sqrt({names[0]})",
        "__import__('os')",
        "exit()",
        "lambda: 1",
        "B" * 400,
        "9**9**9**9",
        f"({names[0]}",
        f"{names[0]}/0",
        f"{''.join(names)}",
        f"2{''.join(names)}",
        f"{names[0]}-{names[0]}",
        "😀",
        "q",
        f"{names[0]} ** 2",
        f"2.5e1*{names[0]}",
        f"-{names[0]}",
        f"1/(1/{names[0]})",
    ]
    inputs += [
        sympy.sstr(sympy.sympify(m.value, locals=core._symbols(exercise)))
        for m in exercise.specific_mistakes(**params)
    ]
    return inputs


def _formula_exercises():
    found = []
    for eid in ALL:
        exercise = get_exercise(eid)
        params = (
            homework.parameters(eid.split("-")[1], "alice", quiet=True)
            if eid.startswith("hw-")
            else {}
        )
        for ex in exercise.parts if exercise.kind == "parts" else (exercise,):
            if ex.kind == "symbolic":
                found.append((ex, exercise.resolve(params)))
    return found


@pytest.mark.skipif(shutil.which("node") is None, reason="node is not installed")
def test_formula_boxes_on_the_page_agree_with_sympy():
    """Every formula exercise: the page (values at random points) and the kernel (sympy)
    give the same verdict and message on right, wrong, scaled and malformed formulas."""
    pytest.importorskip("sympy")
    pairs = [
        (ex, params, text)
        for ex, params in _formula_exercises()
        for text in _formula_inputs(ex, params)
    ]
    assert len({ex.id for ex, _, _ in pairs}) >= 10
    kernel, page = _node_cases(pairs)
    mismatches = [(p[0].id, p[2], k, g) for p, k, g in zip(pairs, kernel, page) if k != g]
    assert not mismatches, "\n".join(map(str, mismatches[:8]))
    # the right formula passes in both, a wrong constant is named in both
    assert sum(k[0] for k in kernel) >= len({ex.id for ex, _, _ in pairs})


# ---------------------------------------------------------------- the issue's inputs, one table
def _hw(set_id, q):
    """(exercise id, params) of a homework question for the student 'bob'."""
    return homework.exercise_id(set_id, q), homework.parameters(set_id, "bob", quiet=True)


def _hw1_b():
    return str(homework.parameters("part1", "bob", quiet=True)["B"])


def _hw1_q1_times(factor):
    exercise_id, params = _hw("part1", "q1")
    return f"{get_exercise(exercise_id).expected(**params) * factor!r} s"


#: (exercise id, params or None, typed answer, correct?, a phrase the message must hold).
#: The expected verdicts come from the question (by hand), not from the checker.
ISSUE_TABLE = [
    # right answers that were rejected
    ("spec-h100-dense-tf32", None, "494.5 teraFLOPS", True, "is right"),
    ("spec-h100-dense-tf32", None, "494.5 Tflop/s", True, "is right"),
    ("spec-h100-dense-tf32", None, "989e12/2", True, "is right"),
    ("spec-ici-one-way-per-port-v6e", None, "100 GB/sec", True, "is right"),
    ("spec-checkpoint-gib-bytes", None, "150.3 gigabytes", True, "is right"),
    # z = x*y + w in fp32: 2 FLOPs per (3 reads + 1 write) x 4 B = 1/8
    ("intensity-fma-fp32", None, "1/8", True, "is right"),
    # RTX 4090 int8: 660.6 TOPS dense / 1.008 TB/s = 655.4 OPs/B
    ("plot-ridge-int8-rtx4090", None, "655 OPs/B", True, "is right"),
    ("plot-ridge-int8-rtx4090", None, "655 OPs per byte", True, "is right"),
    # TPU v6e: 918 TFLOP/s / 90 GB/s per ICI link, one way = 10200 FLOPs/B
    ("plot-ridge-ici-v6e", None, "10200 flops/byte", True, "is right"),
    ("time-1e12-flops-h100", None, "1.01 millisecond", True, "is right"),
    ("time-1e12-flops-h100", None, "1.01 ms.", True, "is right"),
    ("time-which-bound-h100", None, "Bandwidth.", True, "is right"),
    ("time-which-bound-h100", None, "It is bandwidth-bound!", True, "is right"),
    # TPU v4 (275 TFLOP/s, 1200 GB/s), Llama-style 8B weight matmuls: N = 218,103,808 weights,
    # S = 9D + 2*1024 + 3F = 81,920 widths; B = r N / (N - r S) with r = 275e12 / 1.2e12 = 250.75
    ("xformer-weights-critical-batch", None, "250.8", True, "is right"),
    ("xformer-weights-critical-batch", None, "250.7500", True, "is right"),
    ("spec-above-roof", None, "Impossible.", True, "is right"),
    # wrong answers that were accepted or misread
    ("time-1e12-flops-h100", None, "1,01 ms", False, "Write 1.01, not 1,01"),
    ("spec-checkpoint-gib-bytes", None, "140 GiB", False, "repeats the figure the question gives"),
    ("plot-three-regions-v6e", None, "link-bound", True, "is right"),
    # A100 SXM int8: 624 TOPS dense / 2.039 TB/s = 306.0 OPs/B; "300" is 2% off
    ("intensity-ridge-a100-int8", None, "300", False, "often quoted"),
    ("intensity-ridge-a100-int8", None, "306", True, "is right"),
    # a student marks an estimate: "~", "about", "approx." before the number are read past
    ("intensity-ridge-a100-int8", None, "~306", True, "is right"),
    ("intensity-ridge-a100-int8", None, "\u2248 306 FLOPs/B", True, "is right"),
    # MI300X: 70e9 bf16 weights x 2 B / 5.3 TB/s = 26.4 ms
    ("time-read-weights-mi300x", None, "about 26.4 ms", True, "is right"),
    ("time-read-weights-mi300x", None, "Approx. 26.4 ms", True, "is right"),
    ("time-read-weights-mi300x", None, "roughly 52.8 ms", False, "fp32"),
    ("hw-part1-q3", "B", None, False, "approximate value"),
    # diagnoses
    ("time-1e12-flops-h100", None, "1.01", False, "Add a unit"),
    ("spec-flops-in-1ms", None, "989.5", False, "989.5 GFLOPs"),
    ("time-1e12-flops-h100", None, "989.5 s", False, "a time is the work divided by the rate"),
    ("intensity-fma-fp32", None, "8", False, "FLOPs per byte, not bytes per FLOP"),
    ("time-1e12-flops-h100", None, "1.01 us", False, "1000 times too small"),
    ("time-1e12-flops-h100", None, "989 TFLOP/s", False, "asks for a time"),
    ("time-1e12-flops-h100", None, "5 Gbps", False, "lower-case b is a bit"),
    # questions in two parts
    # r = 1/4: 1 + r = 1.25; 2 is the largest ratio (r = 1), not this one
    ("time-bound-ratio-symbolic", None, "1 + r; 1.25", True, "(2) the ratio at r = 1/4: right"),
    ("time-bound-ratio-symbolic", None, "1 + r; 2", False, "(2) the ratio at r = 1/4: not yet"),
    ("time-bound-ratio-symbolic", None, "1 + r", False, "asks for 2 answers"),
    # 2^24 fp64 elements copied in 100 ms: STREAM 2 x 8 x 2^24 / 0.1 = 2.68 GB/s, mbw half of it
    ("measure-copy-bandwidth", None, "2.68 GB/s; 1.34 GB/s", True, "(1) STREAM: right"),
    ("measure-copy-bandwidth", None, "1.34 GB/s; 1.34 GB/s", False, "counts the bytes copied once"),
    # H100 SXM, r = 989.5e12 / 3.35e12: B = r D / (2D - 4r) = 172.6 (D = 4096), 349.1 (D = 1024)
    ("problems-int8-weights-exact", None, "172.6; 349.1", True, "(2) D = F = 1024: right"),
    # formulas
    ("plot-half-peak-intensity", None, "P/(2BW)", True, "is right"),
    ("plot-half-peak-intensity", None, "P/BW", False, "ridge point"),
    ("plot-half-peak-intensity", None, "P/(4*BW)", False, "yours is 1/2 times the answer"),
    ("measure-triad-formula", None, "24N/t", True, "is right"),
    ("measure-triad-formula", None, "16*N/t", False, "counts two arrays"),
    # homework: the kind of slip, never the ratio
    ("hw-part1-q1", "x6.68", None, False, "too large, by a factor between 1.5 and 10"),
    ("hw-part1-q1", "x1.3", None, False, "too large, but by less than 50%"),
    ("hw-part1-q1", "x0.01", None, False, "too small, by more than a factor of 10"),
]


def _issue_rows():
    rows = []
    for exercise_id, special, text, correct, phrase in ISSUE_TABLE:
        params = {}
        if exercise_id.startswith("hw-"):
            exercise_id, params = _hw(*exercise_id.split("-")[1:])
            if special == "B":
                text = _hw1_b()
            elif special.startswith("x"):
                text = _hw1_q1_times(float(special[1:]))
        rows.append((get_exercise(exercise_id), params, text, correct, phrase))
    return rows


@pytest.mark.parametrize("row", range(len(ISSUE_TABLE)))
def test_issue_inputs_in_the_kernel(row):
    exercise, params, text, correct, phrase = _issue_rows()[row]
    feedback = check(exercise.id, text, **params)
    assert feedback.correct is correct and phrase in feedback.message, (text, feedback.message)


@pytest.mark.skipif(shutil.which("node") is None, reason="node is not installed")
def test_issue_inputs_on_the_page():
    rows = _issue_rows()
    kernel, page = _node_cases([(ex, params, text) for ex, params, text, _, _ in rows])
    for (exercise, _, text, correct, phrase), k, g in zip(rows, kernel, page):
        assert g == k, (exercise.id, text, k, g)
        assert g[0] is correct and phrase in g[1], (exercise.id, text, g)


def test_no_ratio_and_no_expected_value_in_homework_output(monkeypatch):
    monkeypatch.setenv("ROOFLINE_WEB_EDITION", "1")  # the web page's homework box
    for set_id in ("part1", "part2", "part3", "part4"):
        params = homework.parameters(set_id, "bob", quiet=True)
        for q in homework.questions(set_id):
            exercise = get_exercise(homework.exercise_id(set_id, q))
            html = homework.check("bob", set_id, q, None)._repr_html_()
            payload = answerbox.decode_payload(html.split('data-payload="')[1].split('"')[0])
            assert payload["kind"] == "private" and "expected" not in payload
            assert "mistakes" not in payload and "correct_message" not in payload
            if exercise.kind in ("choice", "symbolic"):
                continue
            expected = float(exercise.expected(**params))
            for factor in (6.68, 0.137, 1.3, 25.0):
                feedback = homework.check("bob", set_id, q, expected * factor)
                assert not feedback.correct
                text = str(feedback) + feedback._repr_html_()
                assert "times too" not in text and "6.68" not in text, text
    # chapter exercises keep the full diagnosis
    assert (
        "about 6.68 times too large"
        in check("time-1e12-flops-h100", f"{6.68 * 1.0106e-3} s").message
    )


def test_an_unknown_exercise_id_is_named_with_the_nearest_ids():
    feedback = check("time-1e12-flops-h10", "1.01 ms")
    assert feedback.unknown and not feedback.correct
    assert "There is no exercise 'time-1e12-flops-h10'" in feedback.message
    assert "time-1e12-flops-h100" in feedback.message
    assert "Unknown exercise" in str(feedback) and "Unknown exercise" in feedback._repr_html_()
    assert "Not yet" not in str(feedback)
    assert not check("time-1e12-flops-h100", "1.02 s").unknown


@pytest.mark.parametrize(
    "set_id, question", [("part1", "q5"), ("part2", "q6"), ("part3", "q5"), ("part4", "q5")]
)
def test_homework_choice_answers_vary_over_2000_ids(set_id, question):
    """Each value of a choice question is the answer for at least 20% of student ids."""
    exercise = get_exercise(homework.exercise_id(set_id, question))
    counts = {c: 0 for c in exercise.choices}
    for i in range(2000):
        counts[exercise.expected(**homework.parameters(set_id, f"id-{i}", quiet=True))] += 1
    assert min(counts.values()) >= 400, counts


def test_homework_part3_q5_intensity_is_shown_as_it_is_checked():
    for i in range(50):
        p = homework.parameters("part3", f"id-{i}", quiet=True)
        shown = dict(homework.given("part3", p).rows)["q5 asks about intensity"]
        value = rl.parse_quantity(shown)[0]
        from roofline.exercises import editions, hw3_measured

        with editions.frozen("part3"):  # the figures the set's numbers come from
            assert value == hw3_measured.regime_intensity(p)


def test_answer_boxes_carry_a_human_label():
    html = check("time-1e12-flops-h100", None)._repr_html_()
    assert "Your answer to &ldquo;A teraFLOP on an H100 (chapter 1)&rdquo;" in html
    assert "Your answer to <code>" not in html
    for exercise_id in ALL:
        label = get_exercise(exercise_id).label()
        assert label and not label.startswith(("hw-", "time-", "plot-")), exercise_id


def test_ratio_text_rounds_halves_up_as_javascript_does():
    # JavaScript's toPrecision(3) picks the larger of two equally near candidates (ECMA-262
    # Number.prototype.toPrecision) of the exact binary value: 494.5 -> "495" (Python's format
    # gives "494"), 1.005 (binary 1.00499999...) -> "1".
    from roofline.exercises.core import ratio_text

    assert ratio_text(494.5) == "495"
    assert ratio_text(2.5) == "2.5"
    assert ratio_text(1.005) == "1"
    assert ratio_text(12345.0) == "12300"
