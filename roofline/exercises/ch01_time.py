"""Exercises of chapter 1, "Where does the time go?"."""

from .. import estimate, get_chip
from ..costs import Cost
from .core import Exercise, Mistake, register


def _op(p):
    """The exercise's operation: a given number of FLOPs and bytes, math in `dtype`."""
    return Cost("work", p["flops"], p["bytes"], p.get("dtype", "bf16"))


register(Exercise(
    id="time-1e12-flops-h100",
    title="A teraFLOP on an H100 (chapter 1)",
    question="How long do 1e12 FLOPs of bf16 math take on an H100 SXM at its dense peak?",
    answer=lambda p: estimate(Cost("work", p["flops"], 1, "bf16"), p["chip"]).t_math,
    kind="time",
    params={"flops": 1e12, "chip": "H100 SXM"},
    hints=("Divide the FLOPs by the chip's dense bf16 peak in FLOP/s.",),
))


def _load_weights_mistakes(p):
    chip = get_chip(p["chip"])
    wrong_bw = 2 * chip.hbm_bytes_per_s  # someone who doubles for "bidirectional"
    return [Mistake(p["bytes"] / wrong_bw, "That uses twice the memory bandwidth; HBM bandwidth "
                    "is quoted as one number, use it as it is.")]


register(Exercise(
    id="time-read-weights-v6e",
    title="Reading the weights (chapter 1)",
    question="How long does a TPU v6e need just to read 16 GB of weights from its HBM once?",
    answer=lambda p: estimate(Cost("read", 1, p["bytes"], "bf16"), p["chip"]).t_comms,
    kind="time",
    params={"bytes": 16e9, "chip": "TPU v6e"},
    hints=("Time to move bytes = bytes / memory bandwidth in bytes/s.",
           "16 GB is 16e9 bytes; the chip's HBM bandwidth is in the catalog."),
    mistakes=_load_weights_mistakes,
))


def _regime(p):
    return estimate(_op(p), p["chip"]).bound


register(Exercise(
    id="time-which-bound-h100",
    title="Which bound? (chapter 1)",
    question=("An operation does 1e12 bf16 FLOPs and moves 1e10 bytes to and from HBM on an "
              "H100 SXM. Is it compute-bound or bandwidth-bound?"),
    answer=_regime,
    kind="choice",
    choices=("compute", "bandwidth"),
    params={"flops": 1e12, "bytes": 1e10, "chip": "H100 SXM"},
    hints=("Compute t_math = FLOPs / peak and t_comms = bytes / bandwidth; the larger one wins.",),
    mistakes=lambda p: [Mistake(
        "bandwidth" if _regime(p) == "compute" else "compute",
        "Compare the two times, not the two counts: 1e12 FLOPs is more than 1e10 bytes, but the "
        "chip does FLOPs far faster than it moves bytes.")],
))


register(Exercise(
    id="time-upper-bound-h100",
    title="No overlap (chapter 1)",
    question=("The same operation (1e12 bf16 FLOPs, 1e10 bytes, H100 SXM): what is the upper "
              "bound on its time, when math and data movement do not overlap at all?"),
    answer=lambda p: estimate(_op(p), p["chip"]).t_upper,
    kind="time",
    params={"flops": 1e12, "bytes": 1e10, "chip": "H100 SXM"},
    hints=("No overlap: the two times add up.",),
    mistakes=lambda p: [
        Mistake(estimate(_op(p), p["chip"]).t_lower,
                "That is the lower bound, max(t_math, t_comms): perfect overlap. Without overlap "
                "the times add."),
        Mistake(estimate(_op(p), p["chip"]).t_math,
                "That is only the math time; the bytes take time too."),
    ],
))


register(Exercise(
    id="time-bound-ratio-symbolic",
    title="The ratio of the bounds (chapter 1)",
    question=("Write t_upper / t_lower as a formula in x, where x = t_comms / t_math and the "
              "math takes longer (0 < x <= 1). What is its largest value? Answer both, as "
              "(formula, largest value)."),
    answer=lambda p: ("1 + x", 2),
    kind="parts",
    parts=(
        Exercise(
            id="time-bound-ratio-symbolic/formula", title="the formula",
            question="t_upper / t_lower as a formula in x",
            answer=lambda p: "1 + x", kind="symbolic", symbols=("x",),
            hints=("With the math slower, t_lower = t_math and t_upper = t_math + t_comms = "
                   "t_math (1 + x).",),
            mistakes=lambda p: [
                Mistake("(1 + x)/x", "That is the case where the bytes take longer "
                                     "(t_lower = t_comms); here the math is slower."),
                Mistake("x", "That is t_comms / t_math itself; divide t_upper, the sum, "
                             "by t_lower.")]),
        Exercise(
            id="time-bound-ratio-symbolic/largest", title="the largest value",
            question="the largest value of t_upper / t_lower",
            answer=lambda p: 2, kind="number", tolerance=0.01,
            hints=("1 + x grows with x, and x is at most 1: when the two times are equal.",),
            mistakes=lambda p: [Mistake(1, "That is the smallest value (x near 0, when the bytes "
                                           "take no time); the ratio grows with x up to x = 1.")],
            generic_mistakes=False),
    ),
    hints=("With the math slower, t_lower = t_math and t_upper = t_math + t_comms = "
           "t_math (1 + x).", "1 + x is largest when x is: x = 1, equal times."),
))
