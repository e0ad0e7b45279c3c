"""Feedback that finds the slip (issue 33, section 3): typical wrong answers per exercise, with
the message each must get, in the kernel and on the web page (node); and the engine's rules
(GB/GiB only where bytes are involved, factor-of-2 slips named per exercise, every wrong choice
its own message, counts with a noun, rounding, percentages, formulas off by one factor).

Every expected value below is derived by hand in its comment, not taken from the checker."""

import re
import shutil

import pytest
from test_exercises import _node_cases

from roofline.exercises import check, core, get_exercise, homework, list_exercises

#: (exercise id, typed answer, a phrase the message must hold, a phrase it must not hold);
#: every answer here is wrong.
WRONG = [
    # 1e12 FLOPs / 989.5e12 FLOP/s (H100 SXM dense bf16) = 1.0106 ms; twice: 2.02 ms; with the
    # 2:4-sparse peak 1979 TFLOP/s: 0.505 ms, half. The slip the exercise names: the sparse peak.
    ("time-1e12-flops-h100", "2.02 ms", "2:4-sparse", "bytes per element"),
    ("time-1e12-flops-h100", "0.505 ms", "2:4-sparse", "bidirectional"),
    # a time from FLOPs has no bytes in it: 1.0106 ms x 1.0737 = 1.085 ms is no GB/GiB slip
    ("time-1e12-flops-h100", "1.085 ms", "1.07 times too large", "GiB"),
    # 70e9 bf16 weights x 2 B / 5.3e12 B/s (MI300X) = 26.42 ms; fp8-sized bytes: 13.2 ms (half)
    ("time-read-weights-mi300x", "13.21 ms", "each bf16 weight takes 2 bytes", "2:4-sparse"),
    # ... and it is made of bytes: 26.42 ms x 1.0737 = 28.36 ms is the GiB slip
    ("time-read-weights-mi300x", "28.36 ms", "GiB", "times too large"),
    # PaLM MFU of Llama 3 70B: (6 x 69.5e9 + 12 x 80 x 8192 x 8192) FLOPs/token = 481.4e9;
    # x 1.2e6 tokens/s / (1024 x 989.5e12) = 0.5701. A fraction: 0.5701 x 1.0737 = 0.6122 is
    # no GiB slip, and 57 (no % sign) is a percentage typed bare, not "100 times too large".
    ("held-mfu-llama3-70b", "0.6122", "1.07 times too large", "GiB"),
    ("held-mfu-llama3-70b", "57", "without the % sign", "100 times"),
    # decode bound: (16.06 GB weights - 1.05 GB input embedding + 128 x 131,072 B of KV cache)
    # / 4.8 TB/s = 3.130 ms; / 9.0 ms measured = 0.3478
    ("held-decode-fraction", "34.78", "without the % sign", "100 times"),
    # reading the input table too: (16.06 GB + 128 x 131,072 B) / 4.8 TB/s = 3.349 ms; / 9.0 ms
    # = 0.3721, 1.07 times the answer but made of the table's bytes, not of GiB
    ("held-decode-fraction", "0.372", "input embedding table", "GiB"),
    # bubble of a plain pipeline: (p - 1) / (m + p - 1) = 15 / (192 + 15) = 0.07246 with
    # m = 1536 / 8 = 192 micro-batches per replica; twice that, 0.145, names no slip that
    # cannot apply (no sparse peak, no link, no bytes)
    ("parallel-bubble-16-stages", "0.145", "a factor of 2 slipped in", "sparse"),
    # Mixtral 8x7B: 16 B x 46.7e9 parameters / 16 GB per TPU v5e = 46.7 -> 47 chips, rounded up
    ("training-states-mixtral-v5e", "46", "Round up, because", "times too small"),
    ("training-states-mixtral-v5e", "46.7 chips", "whole number: round up", "times too small"),
    # decode turn of Llama 3 8B on an H200 (989.5 TFLOP/s, 4.8 TB/s), 16-token contexts: per
    # sequence 2 x 7.505e9 / 989.5e12 - 16 x 131,072 B / 4.8e12 = 15.169 us - 0.437 us = 14.732 us;
    # weights read without the input table (8.030e9 - 128,256 x 4096) x 2 B / 4.8e12 = 3.127 ms
    # -> 212.3 -> 213; reading the table too, 16.06 GB / 4.8e12 = 3.346 ms -> 227.1 -> 228
    ("serve-compute-turn-h200", "228", "input embedding table", "GiB"),
    # time to first token, Llama 3 8B fp8 on an H100 (1979 TFLOP/s): (2 x 7.505e9 x 4096 +
    # 2 x 32 x 4096 x 4096^2) FLOPs = 6.148e13 + 4.398e12 = 6.588e13 / 1.979e15 = 33.29 ms. A bare
    # 33.4 is right in ms: add a unit; a bare 123 is right in no unit (123 s, ms, us, ...): the
    # number is wrong, and no unit hint may suggest otherwise
    ("serve-ttft-fp8", "33.4", "Add a unit", "any unit"),
    ("serve-ttft-fp8", "123", "Not the answer in any unit", "Add a unit"),
    # (141 GB x 0.9 - 16.06 GB) / (8192 x 131,072 B) = 110.84 GB / 1.0737 GB = 103.2 -> 103
    ("serve-max-batch-h200", "104", "Round down, because", "times too large"),
    # (103.2 itself passes: rounded to 3 digits it is 103; 103.7 is not rounded down)
    ("serve-max-batch-h200", "103.7 sequences", "whole number: round down", "times too"),
    # fp32 partial sums on a one-way ring: reduce-scatter + all-gather, each (n-1)/n x 4BF bytes
    # -> 8BF(n-1)/n. Without (n-1)/n: 8BF; in bf16 bytes: 4BF(n-1)/n (half); per-chip slip:
    # 8BF(n-1) is n times the answer.
    ("comms-ring-bytes-fp32", "8*B*F", "(n-1)/n is missing", "not equal"),
    ("comms-ring-bytes-fp32", "8*B*F*(n-1)", "factor n (the number of chips)", "not equal"),
    ("comms-ring-bytes-fp32", "2*B*F*(n-1)/n", "bytes per fp32 element", "not equal"),
    # causal Q K^T: 2 d_h FLOPs per score, T(T+1)/2 scores per head, H heads -> H T (T+1) d_h;
    # one head only: T (T+1) d_h, a factor H missing
    ("xformer-qk-causal-prefill-flops", "T*(T+1)*d_h", "number of query heads", "not equal"),
    # FSDP on a ring: 3 collectives x 2 Psi (n-1)/n bytes / W < 6 Psi b / P -> b > (n-1) P /
    # (n W); counting one collective: a third of it
    ("parallel-fsdp-ring-symbolic", "(n-1)*P/(3*n*W)", "three collectives", "not equal"),
    # HFU -> MFU: 163e12 / 312e12 (A100 dense bf16) x 6/8 = 0.3918; typed as 39.18 it is a
    # percentage without its sign; against the 2:4-sparse 624e12 it is half, 0.1959
    ("training-hfu-to-mfu-a100", "39.18", "without the % sign", "100 times"),
    ("training-hfu-to-mfu-a100", "0.1959", "2:4-sparse", "bytes per element"),
    # the bubble 15 / 207 = 0.07246 (above), typed as 7.246
    ("parallel-bubble-16-stages", "7.246", "without the % sign", "100 times"),
    # B200 data parallelism: 2187.5 tokens (below); twice is 4375: the link's direction and the
    # all-reduce's two passes can both double it, so both are named, no byte-unit guess
    ("parallel-dp-tokens-b200", "4375", "all-reduce moves the data twice", "GiB"),
    # experts over 64 H100s on 8 nodes: F > 4/9 x 63/64 x 989.5e12 / 50e9 = 8658 (the NICs);
    # keeping the 7 same-node shares of 64 on NVLink leaves 56/64: 4/9 x 56/64 x 19,790 = 7696;
    # forward only (two all-to-alls) halves it, 4329; a plain two-matrix expert (12 D F FLOPs per
    # token, not 18) multiplies it by 3/2, 12,987
    ("parallel-ep-network-h100", "7696", "same node on NVLink", "twice"),
    ("parallel-ep-network-h100", "4329", "four per layer and step", "bidirectional"),
    ("parallel-ep-network-h100", "12987", "gated", "twice"),
    # 1450 TFLOP/s over the dense fp8 peak 1979 TFLOP/s = 0.7327, typed as 73.27
    ("held-fp8-denominator", "73.27", "without the % sign", "100 times"),
    # two TPU v6e chips, B = 512, D = 32768, F = 8192: D is above 2P/BW_link = 2 x 918e12 /
    # 90e9 = 20,400 (the link keeps up) but B is below the slice's HBM critical batch
    # (918e12 / 1.64e12 = 560 with B << D/2, F): memory, not compute
    ("comms-which-regime", "compute", "one condition of two", "work out the figure"),
    # split along F: X[B, D] whole, W_i[D, F/n], Y_i[B, F/n] -> 2BD + 2DF/n + 2BF/n; the
    # chapter's split along D (2BD/n + 2DF/n + 2BF) is the other split
    ("comms-hbm-bytes-per-chip", "2*B*D/n + 2*D*F/n + 2*B*F", "split along D", "not equal"),
    ("comms-hbm-bytes-per-chip", "2*B*D + 2*D*F + 2*B*F", "one chip doing", "not equal"),
    # regime choices: the reason names the method for the choice typed, not the answer's figure
    ("measure-dot-regime", "compute-bound", "above the chip's ridge point", "work out the figure"),
]


@pytest.mark.parametrize("row", range(len(WRONG)))
def test_typical_wrong_answers_in_the_kernel(row):
    exercise_id, text, good, bad = WRONG[row]
    feedback = check(exercise_id, text)
    assert not feedback.correct, (text, feedback.message)
    assert good in feedback.message and bad not in feedback.message, (text, feedback.message)


#: Counts and rates of counted things typed with their noun are read as the number.
COUNTS = [
    # 110.84 GB free / 1.0737 GB a sequence = 103.2 -> 103 (see above)
    ("serve-max-batch-h200", "103 sequences"),
    # 16 x 46.7e9 B / 16e9 B = 46.7 -> 47
    ("training-states-mixtral-v5e", "47 chips"),
    # B200, 8 GPUs, all-reduce of 2 Psi bytes over 18 x 50 GB/s one way, beside the backward:
    # 4 Psi b / P > 2 x 2 Psi (7/8) / W -> b > 2.25e15 x 3.5 / (4 x 900e9) = 2187.5 tokens
    ("parallel-dp-tokens-b200", "2188 tokens"),
    ("parallel-dp-tokens-b200", "2188 tokens per step"),
]


@pytest.mark.parametrize("row", range(len(COUNTS)))
def test_counts_with_a_noun_are_accepted(row):
    exercise_id, text = COUNTS[row]
    feedback = check(exercise_id, text)
    assert feedback.correct, (text, feedback.message)


def test_count_nouns_are_read_as_numbers_and_units_are_not():
    assert core.count_details("27065 tokens/s")["value"] == 27065
    assert core.count_details("3 tokens per second")["value"] == 3
    assert core.count_details("47 chips")["noun"] == "chips"
    assert core.count_details("5%  chips") is None  # a percentage of chips is no count
    assert core.count_details("chips") is None
    assert core.count_details("5 Gbps") is None  # bits per second: the unit hint, not a count
    assert "lower-case b is a bit" in check("serve-max-batch-h200", "5 Gbps").message
    # a real unit is no noun: a size where a plain number is asked stays "a size"
    assert "a size in bytes" in check("serve-max-batch-h200", "103 GB").message


@pytest.mark.skipif(shutil.which("node") is None, reason="node is not installed")
def test_typical_wrong_answers_and_counts_on_the_page():
    rows = [(get_exercise(i), {}, t) for i, t, _, _ in WRONG]
    rows += [(get_exercise(i), {}, t) for i, t in COUNTS]
    rows += [(get_exercise("held-mfu-llama3-70b"), {}, "57%")]  # typed with the sign: right
    rows += [(get_exercise("serve-max-batch-h200"), {}, "5 Gbps")]  # bits, not a count
    kernel, page = _node_cases(rows)
    for (exercise, _, text), k, g in zip(rows, kernel, page):
        assert g == k, (exercise.id, text, k, g)
    assert all(ok for ok, _ in page[len(WRONG) : -1])
    assert "lower-case b" in page[-1][1]


def _numeric_ids():
    return [
        i for i in list_exercises() if get_exercise(i).kind not in ("symbolic", "choice", "parts")
    ]


@pytest.mark.parametrize("exercise_id", _numeric_ids())
def test_gib_and_factor_two_only_where_they_can_apply(exercise_id):
    """The GB/GiB guess only where bytes are involved; a factor-2 message names only the
    slips the exercise declares (none declared: neutral)."""
    exercise = get_exercise(exercise_id)
    params = {}
    if exercise.homework:
        set_id, q = exercise_id.split("-")[1:]
        params = homework.parameters(set_id, "alice", quiet=True)
    for mistake in exercise.mistake_table(**params):
        if "GiB" in mistake.message and "7.4%" in mistake.message:
            assert exercise.byte_units, mistake.message
        if mistake.message.startswith(("It is twice the answer", "It is half the answer")):
            named = [s for s, text in core.TWICE_SLIPS.items() if text in mistake.message]
            assert set(named) == set(exercise.twice), (mistake.message, exercise.twice)


def test_byte_units_default_follows_the_kind():
    assert get_exercise("spec-checkpoint-gib-bytes").byte_units  # a size
    assert not get_exercise("time-1e12-flops-h100").byte_units  # a time from FLOPs
    assert not get_exercise("parallel-bubble-16-stages").byte_units  # a fraction


def _choice_cases():
    cases = []
    for exercise_id in list_exercises():
        exercise = get_exercise(exercise_id)
        if exercise.kind != "choice":
            continue
        if exercise.homework:
            set_id, _ = exercise_id.split("-")[1:]
            for student in ("alice", "bob", "s1234567", "carol"):
                cases.append((exercise, homework.parameters(set_id, student, quiet=True)))
        else:
            cases.append((exercise, {}))
    return cases


def test_every_wrong_choice_gets_a_message_about_that_choice():
    """No wrong choice gets the neutral sentence, and no two wrong choices of a homework
    question share one message (each is about its own choice)."""
    neutral = core.CHOICE_NEUTRAL.split("{choice}")[1]
    for exercise, params in _choice_cases():
        messages = core.wrong_choice_messages(exercise, exercise.resolve(params))
        assert len(messages) == len(exercise.choices) - 1, exercise.id
        for key, message in messages.items():
            assert neutral not in message, (exercise.id, key, message)
        if exercise.homework:
            assert len(set(messages.values())) == len(messages), exercise.id


def test_homework_part4_choices_say_what_the_choice_means():
    exercise_id = homework.exercise_id("part4", "q5")
    for student in ("alice", "bob", "carol"):
        params = homework.parameters("part4", student, quiet=True)
        right = get_exercise(exercise_id).expected(**params)
        wrong = "no" if right == "yes" else "yes"
        message = check(exercise_id, wrong, **params).message
        assert "HBM capacity" in message and "ridge point" not in message, message


@pytest.mark.skipif(shutil.which("node") is None, reason="node is not installed")
def test_wrong_choices_on_the_page():
    rows = [
        (exercise, params, choice)
        for exercise, params in _choice_cases()
        for choice in exercise.choices
    ]
    kernel, page = _node_cases(rows)
    assert page == kernel


def test_regime_hints_hint_the_method_not_the_number():
    """comms-which-regime's hint gave the link's critical D (10,200 for v5e: 197e12 / 45e9 x
    2 / ... as the chapter derives); xformer-decode-regime's said the cache was far smaller.
    A hint names the method: no figure of the answer's comparison in it."""
    for exercise_id in ("comms-which-regime", "xformer-decode-regime"):
        for hint in get_exercise(exercise_id).hints:
            assert not re.search(r"\d{3,}", hint), hint
            assert "far less" not in hint


def test_unknown_slip_and_bad_rounding_are_refused():
    with pytest.raises(ValueError, match="unknown factor-of-2 slip"):
        core.Exercise("t-slip", "?", lambda p: 1.0, twice=("sprase",))
    with pytest.raises(ValueError, match="rounding"):
        core.Exercise("t-round", "?", lambda p: 1.0, rounding=("sideways", "because"))


@pytest.mark.parametrize("student", ["alice", "bob", "s1234567"])
def test_homework_part4_percent_and_rate_with_its_noun(student):
    """q3 (an MFU, a fraction) typed as a bare percentage is told to add the sign, for every
    student's numbers; q6 (tokens per second) typed with 'tokens/s' is read as the number."""
    params = homework.parameters("part4", student, quiet=True)
    q3, q6 = homework.exercise_id("part4", "q3"), homework.exercise_id("part4", "q6")
    mfu = get_exercise(q3).expected(**params)
    assert 0 < mfu < 1
    assert "without the % sign" in check(q3, f"{100 * mfu:.4g}", **params).message
    assert check(q3, f"{100 * mfu:.4g}%", **params).correct
    rate = get_exercise(q6).expected(**params)
    assert check(q6, f"{rate:.0f} tokens/s", **params).correct
