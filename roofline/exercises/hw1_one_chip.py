"""Homework part 1: rooflines on one chip (time, intensity, ridge point, critical batch, regime)."""

from .. import (
    critical_batch_size,
    critical_intensity,
    estimate,
    exact_critical_batch_size,
    get_chip,
    matmul,
)
from ..units import format_bandwidth, format_flops_rate
from .core import Mistake, approximation_mistakes, distinct_mistakes
from .homework import (
    DEMO_ID,
    TIE_MARGIN,
    Draw,
    HomeworkSet,
    define_set,
    draw_until,
    register_question,
    tie_ratio,
)

SET_ID = "part1"
CHIPS = ("TPU v5e", "TPU v5p", "TPU v6e", "A100 SXM", "H100 SXM", "H200", "B200", "MI300X")
BATCHES = (16, 32, 64, 128, 256, 512, 1024, 2048, 4096)
DIMS_D = (2048, 4096, 8192, 16384)
DIMS_F = (4096, 8192, 16384, 28672)


def _draw_once(draw: Draw) -> dict:
    return {
        "chip": draw.choice(CHIPS),
        "B": draw.choice(BATCHES),
        "D": draw.choice(DIMS_D),
        "F": draw.choice(DIMS_F),
    }


def far_from_tie(p: dict) -> bool:
    """True when the math and memory times differ by at least TIE_MARGIN (q5 is then
    unambiguous: 1.0017 from the tie, as v5e with B = 256, D = F = 8192 was, is redrawn)."""
    e = estimate(matmul(p["B"], p["D"], p["F"]), p["chip"])
    return tie_ratio((e.t_math, e.t_comms)) >= 1 + TIE_MARGIN


def make_parameters(draw: Draw) -> dict:
    """A student's chip and sizes: drawn from the id's seed, redrawn while within TIE_MARGIN of
    the compute/memory tie."""
    return draw_until(draw, _draw_once, far_from_tie)


def describe(p: dict) -> list:
    chip = get_chip(p["chip"])
    return [
        ("chip", chip.name),
        ("dense bf16 peak", format_flops_rate(chip.peak_flops_per_s("bf16"))),
        ("memory bandwidth", format_bandwidth(chip.hbm_bytes_per_s)),
        ("matmul X[B, D] @ W[D, F], all bf16", f"B = {p['B']}, D = {p['D']}, F = {p['F']}"),
    ]


def _cost(p):
    return matmul(p["B"], p["D"], p["F"])


def _est(p):
    return estimate(_cost(p), p["chip"])


def _sparse_mistakes(p, dense_value, scale):
    """The 2:4-sparse peak used where the dense one belongs (value = dense_value * scale)."""
    chip = get_chip(p["chip"])
    peak = chip.peak("bf16")
    if peak.sparse_flops_per_s is None:
        return []
    factor = peak.sparse_flops_per_s / peak.dense_flops_per_s
    return [
        Mistake(
            dense_value * factor**scale,
            "You used the 2:4-sparse peak from the spec sheet; a dense matmul runs at the "
            "dense peak (half of the sparse figure).",
        )
    ]


def _time_mistakes(p):
    e = _est(p)
    return _sparse_mistakes(p, e.t_math, -1)


def _bytes_mistakes(p):
    B, D, F = p["B"], p["D"], p["F"]
    return distinct_mistakes(
        _cost(p).bytes,
        [
            Mistake(
                2 * (B * D + D * F),
                "You counted reading X and W but not writing the output "
                "Y[B, F] (B*F more elements).",
            ),
            Mistake(
                B * D + D * F + B * F,
                "That counts elements, not bytes: each bf16 element is 2 bytes.",
            ),
        ],
    )


def _lower_mistakes(p):
    e = _est(p)
    slower, other = ("math", e.t_comms) if e.bound == "compute" else ("memory", e.t_math)
    return [
        Mistake(
            e.t_upper,
            "That is t_math + t_comms, the time with no overlap at all; the "
            "lower bound assumes perfect overlap: max(t_math, t_comms).",
        ),
        Mistake(
            other,
            f"That is the shorter of the two times; the {slower} time is longer "
            "and sets the lower bound max(t_math, t_comms).",
        ),
    ]


def _regime_mistakes(p):
    wrong = "bandwidth" if _est(p).bound == "compute" else "compute"
    return [
        Mistake(
            wrong,
            "Compare this matmul's intensity (q3) with the chip's ridge point (q4): "
            "above the ridge it is compute-bound, below it bandwidth-bound.",
        )
    ]


def _register(q, **kwargs):
    return register_question(SET_ID, q, DEMO, **kwargs)


DEMO = make_parameters(Draw(f"{SET_ID}\0{DEMO_ID}"))

_register(
    "q1",
    twice=("sparse", "multiply-add"),
    question="How long does the math of your matmul take at the chip's dense bf16 peak?",
    answer=lambda p: _est(p).t_math,
    kind="time",
    mistakes=_time_mistakes,
    hints=("t_math = 2*B*D*F FLOPs / dense bf16 peak FLOP/s.",),
)
_register(
    "q2",
    twice=("dtype",),
    question="How many bytes does the matmul move (read X and W, write Y, bf16)?",
    answer=lambda p: _cost(p).bytes,
    kind="size",
    mistakes=_bytes_mistakes,
    hints=("bytes = 2*(B*D + D*F + B*F) in bf16.",),
)
# B << D, F puts the approximation B within 0.15% of the exact value for some ids: the
# tolerance is 0.1% (4 significant digits always pass) so that B is never taken for it
_register(
    "q3",
    twice=("dtype", "multiply-add"),
    question="What is the matmul's exact arithmetic intensity (FLOPs per byte), to 4 "
    "significant digits?",
    answer=lambda p: _cost(p).intensity,
    kind="intensity",
    tolerance=0.001,
    mistakes=lambda p: approximation_mistakes(_cost(p).intensity, p["B"], tolerance=0.001),
    hints=("Divide q1's FLOP count 2*B*D*F by q2's bytes.",),
)
_register(
    "q4",
    twice=("sparse",),
    question="What is the chip's ridge point (critical intensity) in bf16?",
    answer=lambda p: critical_intensity(p["chip"]),
    kind="intensity",
    mistakes=lambda p: _sparse_mistakes(p, critical_intensity(p["chip"]), 1),
    hints=("Dense bf16 peak FLOP/s divided by memory bandwidth in B/s.",),
)
_register(
    "q5",
    question="Is the matmul compute-bound or bandwidth-bound on this chip?",
    answer=lambda p: _est(p).bound,
    kind="choice",
    choices=("compute", "bandwidth"),
    mistakes=_regime_mistakes,
    hints=("Compare q3 with q4.",),
)
_register(
    "q6",
    twice=("sparse", "dtype"),
    byte_units=True,
    question="What is the lower bound on the matmul's time, max(t_math, t_comms)?",
    answer=lambda p: _est(p).t_lower,
    kind="time",
    mistakes=_lower_mistakes,
    hints=("t_comms = bytes (q2) / memory bandwidth; take the larger of t_math and t_comms.",),
)
# The exact critical batch lies r(1/D + 1/F) above the B << D, F one (r the ridge): at least
# 153 x (1/16384 + 1/28672) = 1.5 % on the A100 with the largest sizes, within the usual 2 %
# tolerance; asked to 4 significant digits (0.1 %), the approximation never passes for it.
_register(
    "q7",
    twice=("sparse", "dtype"),
    question="Above which batch size B is this matmul compute-bound, computed exactly "
    "for your D and F (no B << D, F approximation), to 4 significant digits?",
    answer=lambda p: exact_critical_batch_size(p["chip"], p["D"], p["F"]),
    kind="number",
    tolerance=0.001,
    mistakes=lambda p: approximation_mistakes(
        exact_critical_batch_size(p["chip"], p["D"], p["F"]),
        critical_batch_size(p["chip"]),
        tolerance=0.001,
    ),
    hints=("Solve 2BDF / peak = 2(BD + DF + BF) / bandwidth for B.",),
)


def _int8_weights_batch(p):
    """q8: the B << D, F critical batch with int8 weights (bf16 activations and output, the
    math at the bf16 peak): weight bytes D*F, so intensity ~ 2B and B_crit = ridge / 2."""
    return critical_batch_size(p["chip"], "bf16", weights="int8")


def _int8_weights_mistakes(p):
    value = _int8_weights_batch(p)
    return distinct_mistakes(
        value,
        [
            Mistake(
                critical_batch_size(p["chip"]),
                "That is the critical batch with 2-byte (bf16) weights, the ridge point of q4; "
                "int8 weights take 1 byte each, so the bytes halve and so does the batch "
                "needed.",
            ),
            Mistake(
                2 * critical_batch_size(p["chip"]),
                "The int8 weights halve the bytes, which halves the critical batch; you "
                "doubled it.",
            ),
            *approximation_mistakes(
                value,
                exact_critical_batch_size(p["chip"], p["D"], p["F"], "bf16", weights="int8"),
                reverse=True,
            ),
        ],
    )


_register(
    "q8",
    twice=("sparse", "dtype"),
    question="Now store W in int8 (1 byte per weight; X and Y stay bf16 and the math runs at "
    "the bf16 peak). With the B << D, F approximation, what is the critical batch size?",
    answer=_int8_weights_batch,
    kind="number",
    mistakes=_int8_weights_mistakes,
    hints=(
        "With B << D, F only the weights' D*F bytes count: intensity ~ 2*B*D*F / (D*F) = 2B, "
        "so B_crit = ridge point / 2.",
    ),
)

define_set(
    HomeworkSet(
        SET_ID,
        "Homework part 1 (one chip)",
        make_parameters,
        tuple(f"q{i}" for i in range(1, 9)),
        describe,
    )
)
