"""Homework part 2: a matmul sharded over n chips on the chips' own topology, three
resources per chip (math, HBM, links), and the gradient all-reduce of data parallelism.

Every question's answer depends on the student's sizes, not on the chip alone: the link
questions on B*F (or D*F) and the topology, the per-chip critical batch on D/n and F, the
formula on B*F and the topology. Draws whose two slowest resources lie within
`homework.TIE_MARGIN` of each other are redrawn, so the verdict of q6 is never a near tie, and
so are draws whose verdict would change with Google's ICI figure in place of the book's
(chapter 5: either figure is fine), which the link-time questions (q3, q9) also accept.
"""

from .. import (
    collective_time,
    critical_batch_size,
    exact_critical_batch_size,
    get_chip,
    sharded_estimate,
    sharded_matmul,
    sharded_topology,
)
from ..units import format_bandwidth, format_flops_rate
from .core import Mistake, approximation_mistakes
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
from .links import chip_link, vendor_chip, vendor_link_answers

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

_TOPOLOGY_WORDS = {
    "ring": "the two chips share one link (each direction carries its own bytes); with more "
    "chips this is a one-way ring, or a line, which cost the same",
    "line": "the chips form a line along one torus axis (no wraparound: the axis is shorter "
    "than its full length); the links at the two ends carry the most",
    "bidirectional-ring": "a ring along one torus axis with wraparound: each chip sends half "
    "of the bytes each way round, to both neighbours at once",
    "switch": "every GPU sends over all its links at once into the switch",
    "mesh": "a direct link from every GPU to every other",
}


def _draw_once(draw: Draw) -> dict:
    return {
        "chip": draw.choice(CHIPS),
        "n": draw.choice(CHIP_COUNTS),
        "B": draw.choice(BATCHES),
        "D": draw.choice(DIMS_D),
        "F": draw.choice(DIMS_F),
    }


def _times(p) -> tuple:
    e = _est(p)
    return e.t_math, e.t_memory, e.t_link


def _verdict_and_tie(p) -> tuple:
    e = _est(p)
    return e.bound, tie_ratio((e.t_math, e.t_memory, e.t_link))


def acceptable(p: dict) -> bool:
    """A draw a teacher can defend: the slowest resource is at least TIE_MARGIN slower than
    the next one (q6 is no near tie), with the book's ICI figure and with Google's alike (the
    same verdict either way), and some batch makes each chip's math outlast its memory traffic
    (q7 is finite)."""
    verdict, ratio = _verdict_and_tie(p)
    if ratio < 1 + TIE_MARGIN:
        return False
    google = vendor_chip(p["chip"])
    if google is not None:
        other, other_ratio = _verdict_and_tie(dict(p, chip=google))
        if other != verdict or other_ratio < 1 + TIE_MARGIN:
            return False
    return exact_critical_batch_size(p["chip"], p["D"] / p["n"], p["F"]) != float("inf")


def make_parameters(draw: Draw) -> dict:
    """A student's chip, chip count and sizes, from the id's seed; redrawn until acceptable."""
    return draw_until(draw, _draw_once, acceptable)


def _plan(p):
    return sharded_matmul(p["B"], p["D"], p["F"], n=p["n"])


def _est(p):
    return sharded_estimate(p["B"], p["D"], p["F"], p["chip"], n=p["n"])


def topology(p) -> str:
    """The topology of the student's n chips (the package's rule for the chip)."""
    return sharded_topology(p["chip"], p["n"])


def _links(p) -> int:
    """Links one chip has into the switch (the all-reduce uses them all at once); 1 otherwise."""
    return chip_link(p["chip"]).count if topology(p) == "switch" else 1


def link_bytes(p):
    """q2: bytes the busiest link carries one way during the all-reduce of the partial sums."""
    return _est(p).extra[0].amount


def _out_of_chip(p):
    """Bytes a chip sends in one direction over all its links together on a ring, switch or
    mesh: 2(n-1)/n of a partial sum (a reduce-scatter and an all-gather)."""
    return _plan(p).send_bytes_per_direction


def _one_way(p) -> float:
    return chip_link(p["chip"]).one_way_bytes_per_s


def gradient_allreduce_s(p, dtype_bytes=2):
    """q9: seconds to all-reduce the [D, F] weight gradient over the student's n chips."""
    V = dtype_bytes * p["D"] * p["F"]
    return collective_time("all-reduce", V, p["n"], _one_way(p), topology(p), links=_links(p))


def describe(p: dict) -> list:
    chip = get_chip(p["chip"])
    link = chip_link(chip)
    topo = topology(p)
    rows = [
        ("chip", chip.name),
        ("dense bf16 peak", format_flops_rate(chip.peak_flops_per_s("bf16"))),
        ("memory bandwidth", f"{format_bandwidth(chip.hbm_bytes_per_s)} ({chip.memory_kind})"),
        (
            f"{link.name} link",
            f"{format_bandwidth(link.one_way_bytes_per_s)} one way per link "
            f"({format_bandwidth(link.bidirectional_bytes_per_s)} bidirectional); "
            f"{link.count} links per chip",
        ),
        (
            "sharded matmul X[B, D] @ W[D, F], bf16",
            f"B = {p['B']}, D = {p['D']}, F = {p['F']}, D split over n = {p['n']} chips",
        ),
        ("topology of your n chips", f"{topo}: {_TOPOLOGY_WORDS.get(topo, topo)}"),
    ]
    return rows


def _flops_mistakes(p):
    return [
        Mistake(
            _plan(p).total_flops,
            "That is all n chips together; each chip does 1/n of the 2*B*D*F FLOPs.",
        )
    ]


def _link_bytes_mistakes(p):
    V, n, topo = _plan(p).partial_sum_bytes, p["n"], topology(p)
    out = [
        Mistake(
            2 * link_bytes(p),
            "That counts both directions, or sends everything one way round: links are full "
            "duplex and the question asks for one direction of the busiest link."
            if topo == "bidirectional-ring"
            else "You counted both directions; links are full duplex, so what comes back "
            "in the other direction costs no extra time. Count one direction.",
        ),
        Mistake(
            link_bytes(p) / 2,
            "That is a reduce-scatter (or an all-gather) alone; an all-reduce is both, so "
            "twice this.",
        ),
    ]
    if topo in ("switch", "mesh"):
        out.append(
            Mistake(
                _out_of_chip(p),
                "That is what each chip sends over all its links together; the question asks "
                "for one link, which carries its share of it.",
            )
        )
    if n > 2:
        out.append(
            Mistake(
                V,
                "That is one whole bf16 partial sum (2*B*F bytes); see how much of it "
                "crosses one link on your topology.",
            )
        )
    return out


def _link_time(p):
    return _est(p).t_link


def _link_time_mistakes(p):
    t = _est(p).t_link
    out = [
        *vendor_link_answers(_link_time, p, "time"),
        Mistake(
            t / 2,
            "You divided by the bidirectional figure; the bytes go one way, so use the one-way "
            "bandwidth of one link.",
        ),
    ]
    if _links(p) > 1:
        out.append(
            Mistake(
                t / _links(p),
                "q2 is already the bytes on one link: divide by one link's one-way bandwidth, "
                "not by all the links together.",
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
    B, D, F = p["B"], p["D"], p["F"]
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


def critical_batch_per_chip(p):
    """q7: the exact batch above which one chip's math outlasts its own HBM traffic, for its
    X[B, D/n] @ W[D/n, F] (bf16)."""
    return exact_critical_batch_size(p["chip"], p["D"] / p["n"], p["F"])


def _critical_batch_mistakes(p):
    value = critical_batch_per_chip(p)
    out = approximation_mistakes(value, critical_batch_size(p["chip"]), what="B << D/n, F")
    whole = exact_critical_batch_size(p["chip"], p["D"], p["F"])
    out.append(
        Mistake(
            whole,
            "That is the whole matmul's critical batch; each chip multiplies only its D/n slice "
            "of W, so use D/n.",
        )
    )
    return out


def _symbols():
    import sympy

    return sympy.symbols("n W", positive=True)


def link_time_formula(p):
    """q8: the all-reduce time of the student's [B, F] partial sums on their topology, as a
    formula in n and W (one link's one-way bandwidth), valid for any n on that topology."""
    n, W = _symbols()
    return collective_time("all-reduce", 2 * p["B"] * p["F"], n, W, topology(p), links=_links(p))


def _formula_mistakes(p):
    n, W = _symbols()
    expected = link_time_formula(p)
    out = []
    fixed = expected.subs(n, p["n"])
    if (expected - fixed).simplify() != 0:
        out.append(
            Mistake(
                fixed,
                f"That is right for your n = {p['n']} only: write it for any n (keep n as a "
                "letter).",
            )
        )
    out.append(
        Mistake(
            expected / 2,
            "That is a reduce-scatter (or an all-gather) alone; an all-reduce is both.",
        )
    )
    if _links(p) > 1:
        out.append(
            Mistake(
                expected * _links(p),
                f"That sends everything over one link; each GPU sends over all its {_links(p)} "
                "links into the switch at once.",
            )
        )
    return out


def _gradient_mistakes(p):
    t = gradient_allreduce_s(p)
    return [
        *vendor_link_answers(gradient_allreduce_s, p, "time"),
        Mistake(
            _est(p).t_link,
            "That is q3, the all-reduce of the [B, F] partial sums; data parallelism "
            "all-reduces the [D, F] weight gradient instead.",
        ),
        Mistake(
            t / 2,
            "That is half the answer: a reduce-scatter or an all-gather alone, or "
            "the bidirectional link figure; an all-reduce is both, one way.",
        ),
        Mistake(
            2 * t,
            "That is twice the answer: a gradient in fp32 (4 bytes) or both "
            "directions counted; this gradient is bf16 and links are full duplex.",
        ),
    ]


def _register(q, **kwargs):
    return register_question(SET_ID, q, DEMO, **kwargs)


DEMO = make_parameters(Draw(f"{SET_ID}\0{DEMO_ID}"))

_register(
    "q1",
    twice=("multiply-add",),
    question="How many FLOPs does each chip do?",
    answer=lambda p: _plan(p).per_chip.flops,
    kind="count",
    mistakes=_flops_mistakes,
    hints=("2*B*D*F / n per chip.",),
)
_register(
    "q2",
    twice=("all-reduce", "dtype"),
    question="During the all-reduce of the bf16 partial sums, how many bytes does the busiest "
    "link carry in one direction?",
    answer=link_bytes,
    kind="size",
    mistakes=_link_bytes_mistakes,
    hints=(
        "A partial sum is B*F bf16 values (V = 2*B*F bytes). An all-reduce is a "
        "reduce-scatter then an all-gather; see chapter 6 for what each takes per link on "
        "your topology.",
    ),
)
_register(
    "q3",
    twice=("bidirectional", "all-reduce"),
    byte_units=True,
    question="How long does the busiest link take to carry q2's bytes (one way)?",
    answer=lambda p: _est(p).t_link,
    kind="time",
    mistakes=_link_time_mistakes,
    hints=("Divide q2 by the one-way bandwidth of one link.",),
)
_register(
    "q4",
    twice=("sparse", "multiply-add"),
    question="How long does each chip's math take at the dense bf16 peak?",
    answer=lambda p: _est(p).t_math,
    kind="time",
    mistakes=_math_mistakes,
    hints=("q1 divided by the dense bf16 peak.",),
)
_register(
    "q5",
    twice=("dtype",),
    byte_units=True,
    question="How long does each chip take to read its X and W slices from its own "
    "memory and write its [B, F] partial sum?",
    answer=lambda p: _est(p).t_memory,
    kind="time",
    mistakes=_hbm_mistakes,
    hints=("Bytes: 2*(B*D/n + (D/n)*F + B*F) in bf16; divide by the memory bandwidth.",),
)
_register(
    "q6",
    question="Assume perfect overlap (math, memory traffic and all-reduce all run at once, "
    "as a chunked collective matmul approaches; the all-reduce's own memory traffic is not "
    "counted). Which resource sets each chip's pace: 'compute', 'memory' or 'link'?",
    answer=lambda p: _est(p).bound,
    kind="choice",
    choices=("compute", "memory", "link"),
    mistakes=_regime_mistakes,
    hints=("With perfect overlap the longest of q3, q4 and q5 wins.",),
)
_register(
    "q7",
    twice=("sparse", "dtype"),
    question="Above which batch size B does each chip's math outlast its own memory traffic, "
    "computed exactly for its slice X[B, D/n] @ W[D/n, F] (no B << D/n, F approximation)?",
    answer=critical_batch_per_chip,
    kind="number",
    mistakes=_critical_batch_mistakes,
    hints=("Solve 2*B*(D/n)*F / peak = 2*(B*D/n + (D/n)*F + B*F) / bandwidth for B.",),
)
_register(
    "q8",
    question="Write the all-reduce time of q3 as a formula in n and W (the one-way bandwidth "
    "of one link), with your B and F as numbers, for any number n of chips on your topology.",
    answer=link_time_formula,
    kind="symbolic",
    symbols=("n", "W"),
    mistakes=_formula_mistakes,
    factor_words={
        "n": "the number of chips",
        "(n-1)/n": "each chip already holds 1/n of the data, so it sends (and receives) only (n-1)/n of it",
    },
    hints=("Write q2 with n as a letter and divide by W.",),
)
_register(
    "q9",
    twice=("bidirectional", "all-reduce", "dtype"),
    byte_units=True,
    question="Use the same n chips for data parallelism instead: each holds all of W[D, F] "
    "and, after the backward pass, the bf16 weight gradient [D, F] is all-reduced over the n "
    "chips on the same topology. How long does that all-reduce take (bandwidth only)?",
    answer=gradient_allreduce_s,
    kind="time",
    mistakes=_gradient_mistakes,
    hints=("As q2 and q3, with the [D, F] gradient (2*D*F bytes) in place of the partial sum.",),
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
