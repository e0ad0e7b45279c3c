"""Feedback that did not help a newcomer (issue 24, item 5): each answer typed as a student
types it, with what the checker must say, in the kernel and on the web page (node).

Every expected value below is derived by hand in its comment, not taken from the checker."""

import shutil

import pytest
from test_exercises import _node_cases

from roofline.exercises import check, get_exercise, homework


def _hw3_q6_bandwidth_fraction():
    """Homework part 3 q6 for the student 'bob', answered with the bandwidth fraction."""
    params = homework.parameters("part3", "bob", quiet=True)
    return homework.exercise_id("part3", "q6"), params, str(params["bandwidth_efficiency"])


#: (exercise id, params, typed answer, a phrase the message must hold, one it must not).
ROWS = [
    # fp32 dot: (2N - 1) FLOPs / (4 (2N + 1)) bytes -> 2N / 8N = 1/4 for large N only
    ("intensity-dot-fp32-symbolic", {}, "1/4", "exact formula in N", "not equal"),
    # half the peak at I = P / (2 BW); "P/2BW" parses left to right as (P/2)*BW
    ("plot-half-peak-intensity", {}, "P/2BW", "(P/2)*BW", "not equal"),
    ("plot-half-peak-intensity", {}, "P/2*BW", "P/(2*BW)", "not equal"),
    # RTX 4090 fp16 with FP16 accumulate: r = 330.3e12 / 1.008e12 = 327.7 FLOPs/B;
    # B = 2 r D F / (2 D F - 2 r (D + F)) = 327.7 * 16384 / (16384 - 1310.7) = 356.2; half: 178.1
    ("matmul-exact-critical-rtx4090-fp16acc", {}, "178", "FP32-accumulate", "bidirectional"),
    # one layer, fp8: 2 (K and V) x 16384 x 8 x 128 x 1 B = 33.55 MB; 32 layers: 1.074 GB
    ("xformer-kv-cache-bytes", {}, "1.07 GB", "ONE layer", "times too large"),
    # H200 141 GB - 16.06 GB of weights = 124.9 GB; 1.074 GB per sequence: 116.4 -> 116
    ("xformer-max-batch", {}, "117", "Round down", "times too large"),
    # 1e12 FLOPs / 989.5 TFLOP/s = 1.0106 ms; "1,011 ms" is 1011 ms, 1.011 ms with a point
    ("time-1e12-flops-h100", {}, "1,011 ms", "write a point", "prefix slipped"),
    ("time-1e12-flops-h100", {}, "1,011 s", "read as 1011", "Add a unit"),
    # "1,000" is one thousand: no note about decimal commas
    ("time-read-weights-mi300x", {}, "1,000 s", "times too large", "comma"),
    # 989.5 TFLOP/s x 1 ms = 9.895e11 FLOPs: a bare 989 is 989 FLOPs, 989 GFLOPs was meant
    ("spec-flops-in-1ms", {}, "989", "989 GFLOPs", "Add a unit"),
    ("spec-flops-in-1ms", {}, "989.5", "989.5 GFLOPs", "Add a unit"),
    # a wrong bare count is a count, told how far off it is, not to add a unit
    ("spec-flops-in-1ms", {}, "5", "times too small", "Add a unit"),
    ("spec-flops-in-1ms", {}, "4.9475e11", "half the answer", "Add a unit"),
]


def _rows():
    rows = [(get_exercise(i), p, t, good, bad) for i, p, t, good, bad in ROWS]
    exercise_id, params, text = _hw3_q6_bandwidth_fraction()
    rows.append((get_exercise(exercise_id), params, text, "bandwidth fraction", "Not within"))
    return rows


@pytest.mark.parametrize("row", range(len(ROWS) + 1))
def test_newcomer_answers_in_the_kernel(row):
    exercise, params, text, good, bad = _rows()[row]
    feedback = check(exercise.id, text, **params)
    assert not feedback.correct
    assert good in feedback.message and bad not in feedback.message, (text, feedback.message)


@pytest.mark.skipif(shutil.which("node") is None, reason="node is not installed")
def test_newcomer_answers_on_the_page():
    rows = _rows()
    kernel, page = _node_cases([(ex, params, text) for ex, params, text, _, _ in rows])
    for (exercise, _, text, good, _), k, g in zip(rows, kernel, page):
        assert g == k, (exercise.id, text, k, g)
        assert good in g[1]


def test_right_answers_still_pass():
    """The new diagnoses catch nothing right: 116 sequences, 1.011 ms, '989.5 GFLOPs'."""
    assert check("xformer-max-batch", "116").correct
    assert check("time-1e12-flops-h100", "1.011 ms").correct
    assert check("spec-flops-in-1ms", "989.5 GFLOPs").correct
    assert check("spec-flops-in-1ms", "9.895e11").correct
    assert check("plot-half-peak-intensity", "P/(2BW)").correct


#: TPU links: the catalog keeps How To Scale Your Model's 4.5e10 / 9e10 B/s one way per link;
#: Google's pages give 400 / 800 GBps bidirectional per chip over 4 ports = 5e10 / 1e11.
LINK_ROWS = [
    # v6e bf16 ridge over one link: 918e12 / 9e10 = 10,200 (book); / 1e11 = 9,180 (Google)
    ("plot-ridge-ici-v6e", "10200 FLOPs/B", "is right"),
    ("plot-ridge-ici-v6e", "9180 FLOPs/B", "Google's figure"),
    # latency crossover, 8 v5e chips on a line (no wraparound below 16), 1 µs a step:
    # (n-1) t = (n-1)/n V / W -> V = n W t = 8 x 4.5e10 x 1e-6 = 360 kB; with Google's 5e10: 400 kB
    ("comms-latency-crossover", "360 kB", "is right"),
    ("comms-latency-crossover", "400 kB", "Google's figure"),
    # two v5p chips: D > 2 P / W (one link, one way): 2 x 459e12 / 9e10 = 10,200; / 1e11: 9,180
    ("problems-v5p-critical-d", "9180", "Google's figure"),
]


@pytest.mark.parametrize("row", range(len(LINK_ROWS)))
def test_both_link_figures_are_accepted_with_a_note(row):
    exercise_id, text, phrase = LINK_ROWS[row]
    feedback = check(exercise_id, text)
    assert feedback.correct and phrase in feedback.message, feedback.message


@pytest.mark.skipif(shutil.which("node") is None, reason="node is not installed")
def test_both_link_figures_on_the_page():
    rows = [(get_exercise(i), {}, t) for i, t, _ in LINK_ROWS]
    kernel, page = _node_cases(rows)
    assert page == kernel and all(ok for ok, _ in page)
