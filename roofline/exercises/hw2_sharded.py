"""Homework part 2: a matmul sharded over n chips on the chips' own topology, three
resources per chip (math, HBM, links), and the decode batch."""

from .. import (
    critical_batch_size,
    get_chip,
    sharded_critical_D,
    sharded_estimate,
    sharded_matmul,
    sharded_topology,
)
from ..units import format_bandwidth, format_flops_rate
from .core import Mistake
from .homework import DEMO_ID, Draw, HomeworkSet, define_set, register_question

SET_ID = "part2"
CHIPS = (
    "TPU v4",
    "TPU v5e",
    "TPU v5p",
    "TPU v6e",
    "A100 SXM",
    "H100 SXM",
    "H200",
    "B200",
    "MI300X",
)
CHIP_COUNTS = (2, 4, 8)
BATCHES = (64, 128, 256, 512, 1024, 2048, 4096)
DIMS_D = (2048, 4096, 8192, 16384, 32768, 65536)
DIMS_F = (4096, 8192, 16384)
WEIGHT_DTYPES = ("bf16", "int8")

_TOPOLOGY_WORDS = {
    "ring": "the two chips share one link",
    "bidirectional-ring": "a ring along one torus axis: each chip sends to both neighbours at once",
    "line": "one torus axis without wraparound (a line): the link next to an end carries the most",
    "switch": "every GPU sends over all its links at once into the switch",
    "mesh": "a direct link from every GPU to every other",
}


def make_parameters(draw: Draw) -> dict:
    return {
        "chip": draw.choice(CHIPS),
        "n": draw.choice(CHIP_COUNTS),
        "B": draw.choice(BATCHES),
        "D": draw.choice(DIMS_D),
        "F": draw.choice(DIMS_F),
        "weights": draw.choice(WEIGHT_DTYPES),
    }


def _plan(p):
    return sharded_matmul(p["B"], p["D"], p["F"], n=p["n"])


def _est(p):
    return sharded_estimate(p["B"], p["D"], p["F"], p["chip"], n=p["n"])


def _sent(p):
    """Bytes each chip sends in one direction, all its links together: 2(n-1)/n partial sums
    on every topology the book uses (the all-reduce is a reduce-scatter and an all-gather)."""
    return _plan(p).send_bytes_per_direction


def links_at_once(p) -> int:
    """How many of its links one chip sends over at the same time during the all-reduce."""
    link_term = _est(p).extra[0]
    return round(_sent(p) / link_term.amount)


def describe(p: dict) -> list:
    chip = get_chip(p["chip"])
    link = chip.interconnect
    topology = sharded_topology(chip, p["n"])
    k = links_at_once(p)
    return [
        ("chip", chip.name),
        ("dense bf16 peak", format_flops_rate(chip.peak_flops_per_s("bf16"))),
        ("memory bandwidth", f"{format_bandwidth(chip.hbm_bytes_per_s)} ({chip.memory_kind})"),
        (
            f"{link.name} link",
            f"{format_bandwidth(link.one_way_bytes_per_s)} one way per link "
            f"({format_bandwidth(link.bidirectional_bytes_per_s)} bidirectional)",
        ),
        (
            "sharded matmul X[B, D] @ W[D, F], bf16",
            f"B = {p['B']}, D = {p['D']}, F = {p['F']}, D split over n = {p['n']} chips",
        ),
        (
            "all-reduce of the partial sums",
            f"{topology}: {_TOPOLOGY_WORDS[topology]}; each chip sends over {k} "
            f"link{'s' if k > 1 else ''} at once",
        ),
        ("decode: weights stored in", p["weights"] + " (math in bf16)"),
    ]


def _flops_mistakes(p):
    return [
        Mistake(
            _plan(p).total_flops,
            "That is all n chips together; each chip does 1/n of the 2*B*D*F FLOPs.",
        )
    ]


def _send_mistakes(p):
    B, F, n = p["B"], p["F"], p["n"]
    out = [
        Mistake(
            2 * _sent(p),
            "You counted both directions; links are full duplex, so what "
            "comes back in the other direction costs no extra time. Count "
            "one direction.",
        )
    ]
    if n > 2:
        out.append(
            Mistake(
                2 * B * F,
                "That is one whole bf16 partial sum (2*B*F bytes); an "
                "all-reduce sends 2(n-1)/n of it out of each chip.",
            )
        )
        out.append(
            Mistake(
                (n - 1) / n * 2 * B * F,
                "That is a reduce-scatter (or an all-gather) "
                "alone; an all-reduce is both, so twice this.",
            )
        )
    return out


def _link_mistakes(p):
    est = _est(p)
    k = links_at_once(p)
    link = get_chip(p["chip"]).interconnect
    out = [
        Mistake(
            est.t_link / 2,
            "You divided by the bidirectional figure; the bytes go one way, "
            "so use the one-way bandwidth of each link.",
        )
    ]
    if k > 1:
        out.append(
            Mistake(
                est.t_link * k,
                f"You sent everything over one link; on this topology "
                f"each chip uses {k} links at once.",
            )
        )
    if k != link.count:
        out.append(
            Mistake(
                est.t_link * k / link.count,
                f"You divided by all {link.count} links; this all-reduce keeps {k} busy per chip.",
            )
        )
    return out


def _math_mistakes(p):
    return [
        Mistake(
            _est(p).t_math * p["n"],
            "That is the time of the whole matmul on one chip; each "
            "of the n chips does 1/n of the FLOPs.",
        )
    ]


def _hbm_mistakes(p):
    chip = get_chip(p["chip"])
    B, D, F, n = p["B"], p["D"], p["F"], p["n"]
    whole = 2 * (B * D + D * F + B * F) / chip.hbm_bytes_per_s
    return [
        Mistake(
            whole,
            "That reads the whole X and W; each chip reads only its D/n slice of "
            "both (and writes its whole [B, F] partial sum).",
        )
    ]


def _regime_mistakes(p):
    est = _est(p)
    out = []
    for kind, why in (
        ("compute", "compare q4 with q3 and q5: the longest time sets the pace"),
        ("memory", "the HBM time (q5) is not the longest one here"),
        ("link", "the link time (q3) is not the longest one here"),
    ):
        if kind != est.bound:
            out.append(Mistake(kind, f"Not {kind}: {why}."))
    return out


def _critical_D_mistakes(p):
    k = links_at_once(p)
    out = [
        Mistake(
            sharded_critical_D(p["chip"], n=p["n"]) / 2,
            "You used the bidirectional link bandwidth; each direction carries its own "
            "bytes, so use the one-way figure.",
        )
    ]
    if k > 1:
        out.append(
            Mistake(
                sharded_critical_D(p["chip"], n=p["n"]) * k,
                f"You charged everything to one link; each chip uses {k} at once.",
            )
        )
    return out


def _decode_mistakes(p):
    if p["weights"] == "bf16":
        return []
    return [
        Mistake(
            critical_batch_size(p["chip"]),
            "That assumes 2-byte weights; int8 weights are 1 byte each, which halves the "
            "bytes per step and the critical batch.",
        )
    ]


def _register(q, **kwargs):
    return register_question(SET_ID, q, DEMO, **kwargs)


DEMO = make_parameters(Draw(f"{SET_ID}\0{DEMO_ID}"))


def _symbolic_flops(p):
    import sympy

    B, D, F, n = sympy.symbols("B D F n", positive=True)
    return sharded_matmul(B, D, F, n=n).per_chip.flops


def _symbolic_mistakes(p):
    import sympy

    B, D, F, n = sympy.symbols("B D F n", positive=True)
    return [
        Mistake(2 * B * D * F, "That is all n chips together; per chip it is 1/n of it."),
        Mistake(B * D * F / n, "A multiply-add is 2 FLOPs: a matmul does 2*B*D*F FLOPs in all."),
    ]


_register(
    "q1",
    question="How many FLOPs does each chip do?",
    answer=lambda p: _plan(p).per_chip.flops,
    kind="count",
    mistakes=_flops_mistakes,
    hints=("2*B*D*F / n per chip.",),
)
_register(
    "q2",
    question="How many bytes does each chip send in one direction, all its links "
    "together, for the all-reduce of the bf16 partial sums?",
    answer=_sent,
    kind="size",
    mistakes=_send_mistakes,
    hints=(
        "A partial sum is B*F bf16 values (2*B*F bytes); an all-reduce (a reduce-scatter "
        "then an all-gather) sends 2(n-1)/n of it out of each chip.",
    ),
)
_register(
    "q3",
    question="How long does sending q2's bytes take, over the links the chip uses at "
    "once (one way)?",
    answer=lambda p: _est(p).t_link,
    kind="time",
    mistakes=_link_mistakes,
    hints=("Divide q2 by (links used at once) x (one-way bandwidth of one link).",),
)
_register(
    "q4",
    question="How long does each chip's math take at the dense bf16 peak?",
    answer=lambda p: _est(p).t_math,
    kind="time",
    mistakes=_math_mistakes,
    hints=("q1 divided by the dense bf16 peak.",),
)
_register(
    "q5",
    question="How long does each chip take to read its X and W slices from its own "
    "memory and write its [B, F] partial sum?",
    answer=lambda p: _est(p).t_memory,
    kind="time",
    mistakes=_hbm_mistakes,
    hints=("Bytes: 2*(B*D/n + (D/n)*F + B*F) in bf16; divide by the memory bandwidth.",),
)
_register(
    "q6",
    question="Which resource sets each chip's pace: 'compute', 'memory' or 'link'?",
    answer=lambda p: _est(p).bound,
    kind="choice",
    choices=("compute", "memory", "link"),
    mistakes=_regime_mistakes,
    hints=("Compare q3, q4 and q5: the longest one wins.",),
)
_register(
    "q7",
    question="Above which D does each chip's math outlast its all-reduce (the link "
    "condition alone)?",
    answer=lambda p: sharded_critical_D(p["chip"], n=p["n"]),
    kind="number",
    mistakes=_critical_D_mistakes,
    hints=("Set q4 = q3 with D unknown and solve: B and F cancel.",),
)
_register(
    "q8",
    question="Write the FLOPs per chip as a formula in B, D, F and n.",
    answer=_symbolic_flops,
    kind="symbolic",
    symbols=("B", "D", "F", "n"),
    mistakes=_symbolic_mistakes,
    hints=("The whole matmul is 2*B*D*F FLOPs.",),
)
_register(
    "q9",
    question="In decode, with weights stored as given, above which batch size do the "
    "weight matmuls on one chip become compute-bound (B << D, F)?",
    answer=lambda p: critical_batch_size(p["chip"], "bf16", weights=p["weights"]),
    kind="number",
    mistakes=_decode_mistakes,
    hints=("B_crit = ridge point * bytes per weight / 2.",),
)

define_set(
    HomeworkSet(
        SET_ID,
        "Homework part 2 (many chips)",
        make_parameters,
        tuple(f"q{i}" for i in range(1, 10)),
        describe,
    )
)
