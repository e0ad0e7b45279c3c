"""Exercises of chapter 3, "The roofline plot"."""

import math

from .. import attainable_flops_per_s, critical_intensity, get_chip
from .core import Exercise, Mistake, register
from .links import vendor_link_answers

register(
    Exercise(
        id="plot-attainable-h100",
        title="Reading the roof (chapter 3)",
        question=(
            "On the H100 SXM's bf16 roofline (HBM), what FLOP/s can an operation of "
            "intensity 100 FLOPs/B attain at best?"
        ),
        answer=lambda p: attainable_flops_per_s(p["intensity"], p["chip"], p["dtype"]),
        kind="rate",
        params={"intensity": 100, "chip": "H100 SXM", "dtype": "bf16"},
        hints=(
            "The roof is min(peak FLOP/s, bandwidth x intensity).",
            "Is 100 FLOPs/B left or right of the ridge point?",
        ),
        mistakes=lambda p: [
            Mistake(
                get_chip(p["chip"]).peak_flops_per_s(p["dtype"]),
                "That is the flat roof, the peak; left of the ridge point the "
                "slanted roof, bandwidth x intensity, is lower.",
            )
        ],
    )
)


def _bandwidth_ratio(p):
    return get_chip(p["faster"]).hbm_bytes_per_s / get_chip(p["slower"]).hbm_bytes_per_s


register(
    Exercise(
        id="plot-loglog-shift-h200",
        title="Two parallel roofs (chapter 3)",
        question=(
            "On log-log axes the slanted roofs of an H200 and an H100 SXM (bf16, HBM) are "
            "parallel lines. At any intensity left of both ridge points, how many times more "
            "FLOP/s does the H200's roof allow than the H100's?"
        ),
        answer=_bandwidth_ratio,
        kind="number",
        tolerance=0.01,
        params={"faster": "H200", "slower": "H100 SXM"},
        hints=(
            "On the slanted roof, attainable FLOP/s = bandwidth x intensity.",
            "At the same intensity, the ratio of the two roofs is the ratio of the bandwidths.",
        ),
        mistakes=lambda p: [
            Mistake(
                1,
                "1 is the slope of both lines on log-log axes; the question asks how far "
                "apart they are: the ratio of the bandwidths.",
            ),
            Mistake(
                1 / _bandwidth_ratio(p),
                "That is the H100's roof over the H200's; the H200 has "
                "the faster memory, so its roof is higher.",
            ),
            Mistake(
                math.log10(_bandwidth_ratio(p)),
                "That is the shift in decades (log10 of the factor); the question asks for the "
                "factor itself.",
            ),
        ],
        generic_mistakes=False,
    )
)


def _int8_ridge_mistakes(p):
    return [
        Mistake(
            critical_intensity(p["chip"], "bf16"),
            "That is the bf16 ridge point; int8 has its own peak, so its own ridge.",
        ),
        Mistake(
            critical_intensity(p["chip"], p["dtype"], sparse=True),
            "That uses the sparse peak (the spec sheet's larger figure); a dense matmul gets "
            "half of it.",
        ),
        Mistake(
            2 * critical_intensity(p["chip"], "bf16"),
            "That doubles the bf16 ridge, as on a TPU; on this GPU the int8 peak is not "
            "twice the bf16 one: read the int8 peak itself.",
        ),
    ]


register(
    Exercise(
        id="plot-ridge-int8-rtx4090",
        twice=("sparse",),
        title="The int8 ridge of an RTX 4090 (chapter 3)",
        question=(
            "Where is the ridge point of an NVIDIA RTX 4090 for dense int8 math from its "
            "memory, in OPs (FLOPs) per byte?"
        ),
        answer=lambda p: critical_intensity(p["chip"], p["dtype"]),
        kind="intensity",
        params={"chip": "RTX 4090", "dtype": "int8"},
        hints=("The ridge point is per chip AND per dtype: use the dense int8 peak.",),
        mistakes=_int8_ridge_mistakes,
    )
)


def _ici_ridge(p):
    chip = get_chip(p["chip"])
    return critical_intensity(chip, "bf16", bandwidth_bytes_per_s=chip.link_bytes_per_s)


register(
    Exercise(
        id="plot-ridge-ici-v6e",
        twice=("bidirectional",),
        title="The link's ridge (chapter 3)",
        question=(
            "A TPU v6e reads an operation's operands over one ICI link (one way) instead of "
            "from HBM. Where is the ridge point of that roofline, in bf16?"
        ),
        answer=_ici_ridge,
        kind="intensity",
        params={"chip": "TPU v6e"},
        hints=(
            "Same formula, peak / bandwidth, with the link's one-way bandwidth in place of HBM's.",
        ),
        mistakes=lambda p: [
            *vendor_link_answers(_ici_ridge, p, "intensity"),
            Mistake(
                critical_intensity(p["chip"], "bf16"),
                "That is the HBM ridge point; the link is much slower, so its ridge sits much "
                "further right.",
            ),
            Mistake(
                _ici_ridge(p) / 2,
                "That uses both directions of the link added together; "
                "operands arriving over it use one direction.",
            ),
        ],
    )
)


def _link_regime(p):
    return "compute" if p["intensity"] >= _ici_ridge(p) else "link"


register(
    Exercise(
        id="plot-three-regions-v6e",
        title="The middle region (chapter 3)",
        question=(
            "On a TPU v6e, an operation of intensity 3000 FLOPs/B is compute-bound when its "
            "operands sit in HBM. If they come over one ICI link instead, is it compute-bound "
            "or bound by the link?"
        ),
        answer=_link_regime,
        kind="choice",
        choices=("compute", "link"),
        # "bandwidth-bound" and "memory-bound" name the same slanted roof: here the link's
        choice_words={"bandwidth": "link", "memory": "link"},
        params={"chip": "TPU v6e", "intensity": 3000},
        hints=("Compare 3000 with the ICI ridge point, not with the HBM one.",),
        mistakes=lambda p: [
            Mistake(
                "compute" if _link_regime(p) == "link" else "link",
                "That holds against the HBM ridge point; against the link's ridge "
                "point the answer flips. It sits in the middle region.",
            )
        ],
    )
)


register(
    Exercise(
        id="plot-half-peak-intensity",
        title="Half the peak (chapter 3)",
        question=(
            "A chip has peak P FLOP/s and memory bandwidth BW bytes/s. At what intensity does "
            "an operation attain half the peak? Write it as a formula in P and BW."
        ),
        answer=lambda p: "P/(2*BW)",
        kind="symbolic",
        symbols=("P", "BW"),
        hints=("On the slanted roof the attainable FLOP/s is BW x I; set it equal to P/2.",),
        mistakes=lambda p: [
            Mistake(
                "P/BW",
                "That is the ridge point, where the roof reaches the full peak; half the "
                "peak is reached at half that intensity.",
            ),
            Mistake(
                "2*P/BW",
                "Twice the ridge point is on the flat roof, at the full peak: solve BW x I = P/2.",
            ),
            Mistake(
                "2*BW/P", "That is bytes per FLOP, the reciprocal: an intensity is FLOPs per byte."
            ),
            Mistake(
                "P*BW/2",
                "That reads as (P/2)*BW: / and * go left to right, so P/2BW or P/2*BW divides "
                "P by 2 only and then multiplies by BW. Put the whole denominator in "
                "parentheses: P/(2*BW).",
            ),
        ],
    )
)
