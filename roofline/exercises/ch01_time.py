"""Exercises of chapter 1, "Where does the time go?"."""

from .. import estimate, get_chip
from ..costs import Cost
from ..dtypes import bytes_per_element
from .core import Exercise, Mistake, register


def _op(p):
    """The exercise's operation: a given number of FLOPs and bytes, math in `dtype`."""
    return Cost("work", p["flops"], p["bytes"], p.get("dtype", "bf16"))


register(
    Exercise(
        id="time-1e12-flops-h100",
        twice=("sparse",),
        title="A teraFLOP on an H100 (chapter 1)",
        question="How long do 1e12 FLOPs of bf16 math take on an H100 SXM at its dense peak?",
        answer=lambda p: estimate(Cost("work", p["flops"], 1, "bf16"), p["chip"]).t_math,
        kind="time",
        params={"flops": 1e12, "chip": "H100 SXM"},
        hints=("Divide the FLOPs by the chip's dense bf16 peak in FLOP/s.",),
    )
)


def _weights_bytes(p):
    """Bytes of the model's weights: parameters x bytes per parameter in the dtype."""
    return p["parameters"] * bytes_per_element(p["dtype"])


def _load_weights_mistakes(p):
    chip = get_chip(p["chip"])
    # counting parameters instead of bytes and doubling the bandwidth give the same half
    return [
        Mistake(
            p["parameters"] / chip.hbm_bytes_per_s,
            "That is half the time: count bytes, not parameters (each bf16 weight takes "
            "2 bytes), and use the HBM bandwidth as quoted, not doubled.",
        ),
        Mistake(
            p["parameters"] * 4 / chip.hbm_bytes_per_s,
            "That counts 4 bytes per weight (fp32); the weights are stored in bf16, 2 bytes each.",
        ),
    ]


register(
    Exercise(
        id="time-read-weights-mi300x",
        twice=("dtype",),
        byte_units=True,
        title="Reading the weights (chapter 1)",
        question=(
            "A model has 70 billion parameters stored in bf16. How long does an AMD MI300X "
            "need just to read all its weights from HBM once?"
        ),
        answer=lambda p: (
            estimate(Cost("read", 1, _weights_bytes(p), p["dtype"]), p["chip"]).t_comms
        ),
        kind="time",
        params={"parameters": 70e9, "dtype": "bf16", "chip": "MI300X"},
        hints=(
            "Bytes first: parameters x bytes per bf16 number.",
            "Time to move bytes = bytes / memory bandwidth in bytes/s; the MI300X's HBM "
            "bandwidth is in the catalog.",
        ),
        mistakes=_load_weights_mistakes,
    )
)


def _regime(p):
    return estimate(_op(p), p["chip"]).bound


register(
    Exercise(
        id="time-which-bound-h100",
        title="Which bound? (chapter 1)",
        question=(
            "An operation does 1e12 bf16 FLOPs and moves 1e10 bytes to and from HBM on an "
            "H100 SXM. Is it compute-bound or memory-bound?"
        ),
        answer=_regime,
        kind="choice",
        choices=("compute", "memory"),
        params={"flops": 1e12, "bytes": 1e10, "chip": "H100 SXM"},
        hints=(
            "Compute t_math = FLOPs / peak and t_comms = bytes / bandwidth; the larger one wins.",
        ),
        mistakes=lambda p: [
            Mistake(
                "memory" if _regime(p) == "compute" else "compute",
                "Compare the two times, not the two counts: 1e12 FLOPs is more than 1e10 bytes, but the "
                "chip does FLOPs far faster than it moves bytes.",
            )
        ],
    )
)


register(
    Exercise(
        id="time-upper-bound-h100",
        twice=("sparse",),
        byte_units=True,
        title="No overlap (chapter 1)",
        question=(
            "The same operation (1e12 bf16 FLOPs, 1e10 bytes, H100 SXM): what is the upper "
            "bound on its time, when math and data movement do not overlap at all?"
        ),
        answer=lambda p: estimate(_op(p), p["chip"]).t_upper,
        kind="time",
        params={"flops": 1e12, "bytes": 1e10, "chip": "H100 SXM"},
        hints=("No overlap: the two times add up.",),
        mistakes=lambda p: [
            Mistake(
                estimate(_op(p), p["chip"]).t_lower,
                "That is the lower bound, max(t_math, t_comms): perfect overlap. Without overlap "
                "the times add.",
            ),
            Mistake(
                estimate(_op(p), p["chip"]).t_math,
                "That is only the math time; the bytes take time too.",
            ),
        ],
    )
)


register(
    Exercise(
        id="time-bound-ratio-symbolic",
        title="The ratio of the bounds (chapter 1)",
        question=(
            "Write t_upper / t_lower as a formula in r, where r = t_comms / t_math and the "
            "math takes longer (0 < r <= 1). How far apart are the bounds (their ratio) for an "
            "operation whose bytes take a quarter of its math time? Answer both, as "
            "(formula, ratio)."
        ),
        answer=lambda p: ("1 + r", 1 + p["r"]),
        kind="parts",
        params={"r": 0.25},
        parts=(
            Exercise(
                id="time-bound-ratio-symbolic/formula",
                title="the formula",
                question="t_upper / t_lower as a formula in r",
                answer=lambda p: "1 + r",
                kind="symbolic",
                symbols=("r",),
                hints=(
                    "With the math slower, t_lower = t_math and t_upper = t_math + t_comms = "
                    "t_math (1 + r).",
                ),
                mistakes=lambda p: [
                    Mistake(
                        "(1 + r)/r",
                        "That is the case where the bytes take longer "
                        "(t_lower = t_comms); here the math is slower.",
                    ),
                    Mistake(
                        "r", "That is t_comms / t_math itself; divide t_upper, the sum, by t_lower."
                    ),
                ],
            ),
            Exercise(
                id="time-bound-ratio-symbolic/quarter",
                title="the ratio at r = 1/4",
                question="t_upper / t_lower when t_comms = t_math / 4",
                answer=lambda p: 1 + p["r"],
                kind="number",
                tolerance=0.01,
                hints=("Put r = 1/4 into your formula.",),
                mistakes=lambda p: [
                    Mistake(
                        (1 + p["r"]) / p["r"],
                        "That is (1 + r)/r, the case where the bytes take "
                        "longer; here the math is slower, t_lower = t_math.",
                    ),
                    Mistake(
                        2,
                        "2 is the largest the ratio can be, at equal times (r = 1); here the "
                        "bytes take only a quarter of the math time.",
                    ),
                ],
                generic_mistakes=False,
            ),
        ),
        hints=(
            "With the math slower, t_lower = t_math and t_upper = t_math + t_comms = "
            "t_math (1 + r).",
            "Then put r = 1/4 into it.",
        ),
    )
)
