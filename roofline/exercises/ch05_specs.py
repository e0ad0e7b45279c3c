"""Exercises of chapter 5, "Reading a spec sheet".

Every answer is computed by `roofline` from the catalog; the mistakes listed are the
spec-sheet slips each question invites (sparse for dense, bidirectional for one way,
GB for GiB, a rate for a count).
"""

from .. import check_below_roof, critical_intensity, format_flops_rate, get_chip
from ..hardware import Chip, Peak, Source
from .core import Exercise, Mistake, register

register(
    Exercise(
        id="spec-h100-dense-tf32",
        twice=("sparse",),
        title="The asterisk on TF32 (chapter 5)",
        question="The H100 SXM spec sheet prints 'TF32 Tensor Core: 989 teraFLOPS*', and the asterisk's "
        "footnote says 'Shown with sparsity. Specifications 1/2 lower without sparsity.' What "
        "peak FLOP/s does a dense TF32 matmul get?",
        answer=lambda p: get_chip(p["chip"]).peak_flops_per_s("tf32"),
        kind="rate",
        params={"chip": "H100 SXM"},
        hints=("The starred figure is the 2:4-sparse rate; a dense matmul gets half of it.",),
        mistakes=lambda p: [
            Mistake(
                get_chip(p["chip"]).peak_flops_per_s("tf32", sparse=True),
                "That is the 2:4-sparse figure the asterisk marks (it is also about the dense bf16 "
                "rate: TF32 runs at half the bf16 rate); a dense TF32 matmul gets half of it.",
            ),
        ],
    )
)


def _ici(p):
    return get_chip(p["chip"]).interconnect


register(
    Exercise(
        id="spec-ici-one-way-per-port-v6e",
        twice=("bidirectional",),
        title="One port, one way (chapter 5)",
        question="Google's TPU v6e page says 'Bidirectional inter-chip interconnect (ICI) bandwidth (per "
        "chip): 800 GBps; ICI ports per chip: 4'. What bandwidth does one ICI port carry in one "
        "direction, by that page?",
        answer=lambda p: _ici(p).vendor_one_way_bytes_per_s,
        kind="bandwidth",
        params={"chip": "TPU v6e"},
        givens=("800 GBps",),
        hints=("800 GB/s counts all 4 ports and both directions of each full-duplex link.",),
        mistakes=lambda p: [
            Mistake(
                2 * _ici(p).vendor_one_way_bytes_per_s,
                "That is one port counted in both directions; a link is full duplex, and a "
                "transfer one way gets half of that.",
            ),
            Mistake(
                4 * _ici(p).vendor_one_way_bytes_per_s,
                "That is all 4 ports together, one way; the question asks for one port.",
            ),
        ],
    )
)

register(
    Exercise(
        id="spec-checkpoint-gib-bytes",
        title="GiB in bytes (chapter 5)",
        question="A model checkpoint is listed as 140 GiB. How many bytes is that?",
        answer=lambda p: p["gib"] * 2**30,
        kind="size",
        params={"gib": 140},
        givens=("140 GiB",),
        hints=("1 GiB is 2**30 bytes; 1 GB is 10**9 bytes.",),
        mistakes=lambda p: [
            Mistake(
                p["gib"] * 1e9,
                "That reads GiB as GB: 1 GiB is 2**30 = 1,073,741,824 bytes, 7.4% more than 1 GB.",
            ),
        ],
    )
)


def _measured_point_possible(p):
    try:
        check_below_roof(p["flops_per_s"], p["intensity"], p["chip"], "bf16")
    except ValueError:
        return "impossible"
    return "possible"


register(
    Exercise(
        id="spec-above-roof",
        title="Possible or impossible? (chapter 5)",
        question="A benchmark reports 1.2 PFLOP/s for a dense bf16 matmul of intensity 400 FLOPs/byte "
        "on one H100 SXM. Is that possible or impossible?",
        answer=_measured_point_possible,
        kind="choice",
        choices=("possible", "impossible"),
        params={"chip": "H100 SXM", "flops_per_s": 1.2e15, "intensity": 400.0},
        hints=("Compute the roof at that intensity: min(dense peak, bandwidth x intensity).",),
        mistakes=lambda p: [
            Mistake(
                "possible",
                "It is above the dense bf16 roof of the H100 SXM "
                f"({format_flops_rate(get_chip(p['chip']).peak_flops_per_s('bf16'))}); "
                "only the sparse figure is that high, and a dense matmul cannot reach it.",
            ),
        ],
    )
)

register(
    Exercise(
        id="spec-ridge-l4-fp8",
        twice=("sparse",),
        title="The L4's fp8 ridge point (chapter 5)",
        question="The NVIDIA L4's datasheet says 'FP8 Tensor Core: 485 teraFLOPS*' (*with sparsity; "
        "1/2 lower without) and 'GPU memory bandwidth: 300GB/s'. What is its ridge point "
        "(FLOPs/byte) for dense fp8 matmuls?",
        answer=lambda p: critical_intensity(p["chip"], "fp8"),
        kind="intensity",
        params={"chip": "L4"},
        tolerance=0.01,
        hints=("Halve the starred figure for the dense rate, then divide FLOP/s by bytes/s.",),
        mistakes=lambda p: [
            Mistake(
                critical_intensity(p["chip"], "fp8", sparse=True),
                "That uses the 2:4-sparse figure the asterisk marks; a dense matmul gets half.",
            ),
            Mistake(
                critical_intensity(p["chip"], "bf16"),
                "That is the bf16 ridge; fp8 runs at twice the bf16 rate on the L4.",
            ),
        ],
    )
)

register(
    Exercise(
        id="spec-flops-in-1ms",
        twice=("sparse",),
        title="A count from a rate (chapter 5)",
        question="How many FLOPs (a count) does an H100 SXM do in 1 ms at its dense bf16 peak?",
        answer=lambda p: get_chip(p["chip"]).peak_flops_per_s("bf16") * p["seconds"],
        kind="count",
        params={"chip": "H100 SXM", "seconds": 1e-3},
        hints=("A count is a rate (FLOP/s) times a time (s).",),
        mistakes=lambda p: [
            Mistake(
                get_chip(p["chip"]).peak_flops_per_s("bf16"),
                "That is the rate, FLOP/s: multiply by the time to get a count of FLOPs.",
            ),
        ],
    )
)


# A chip the catalog does not hold: the student reads its sheet and computes, no helper call.
#: the bandwidth is printed in GiB/s (4,800 x 2^30 bytes/s), the unit slip the exercise tests
FICTIONAL_SHEET = {"bf16_sparse_flops_per_s": 1.8e15, "hbm_bytes_per_s": 4800 * 2**30}


def _fictional_chip(p) -> Chip:
    src = Source("exercise", "a fictional spec sheet, figures given in the question")
    return Chip(
        name="fictional accelerator",
        vendor="fictional",
        peaks=(Peak("bf16", p["sparse"] / 2, src, sparse_flops_per_s=p["sparse"]),),
        hbm_bytes=1e11,
        hbm_bytes_per_s=p["bandwidth"],
        memory_source=src,
    )


register(
    Exercise(
        id="spec-fictional-ridge",
        twice=("sparse",),
        title="A sheet the catalog does not have (chapter 5)",
        question="A fictional accelerator's sheet says 'BF16: 1,800 teraFLOPS*' (*with 2:4 sparsity) "
        "and 'HBM: 4,800 GiB/s'. Write the code (or do the arithmetic) for its dense bf16 ridge "
        "point, in FLOPs per byte.",
        answer=lambda p: critical_intensity(_fictional_chip(p), "bf16"),
        kind="intensity",
        params={
            "sparse": FICTIONAL_SHEET["bf16_sparse_flops_per_s"],
            "bandwidth": FICTIONAL_SHEET["hbm_bytes_per_s"],
        },
        hints=(
            "Halve the sparse figure to get the dense peak, then divide by the bandwidth in B/s.",
            "Write the numbers in base units: 1,800 teraFLOPS is 1.8e15 FLOP/s; a GiB is 2^30 "
            "bytes, so 4,800 GiB/s is 4800 x 2**30 B/s.",
        ),
        mistakes=lambda p: [
            Mistake(
                p["sparse"] / p["bandwidth"],
                "That uses the sparse figure the asterisk marks; a dense matmul gets half of it.",
            ),
            Mistake(
                p["sparse"] / 2 / 4.8e12,
                "That reads 4,800 GiB/s as 4.8 TB/s; a GiB is 2^30 bytes, not 10^9.",
            ),
        ],
    )
)
