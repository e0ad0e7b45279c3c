"""Exercises of chapter 6, "Communication rooflines" (ids start with "comms-")."""

from .. import get_chip, sharded_critical_D, sharded_estimate
from .core import Exercise, Mistake, register


def _one_way(chip):
    return get_chip(chip).link_bytes_per_s


register(Exercise(
    id="comms-critical-d-v5e",
    question="Two TPU v5e chips split X[B, D] @ W[D, F] (bf16) along D and add their partial sums "
             "over one ICI link. Above which D is each chip compute-bound?",
    answer=lambda p: sharded_critical_D(p["chip"], n=2, dtype="bf16"),
    kind="number",
    params={"chip": "TPU v5e"},
    hints=("Per chip: t_math = (2BDF/2) / peak FLOP/s and t_comms = 2BF bytes / one-way link "
           "bandwidth. Set them equal: B and F cancel.",),
    mistakes=lambda p: [
        Mistake(sharded_critical_D(p["chip"], n=2, link_bytes_per_s=2 * _one_way(p["chip"])),
                "You used the bidirectional link figure. Each chip's partial sum travels one way; "
                "the link carries the other chip's sum in the opposite direction at the same time."),
        Mistake(2 * sharded_critical_D(p["chip"], n=2),
                "You charged 4BF bytes: both partial sums on one direction. Links are full duplex, "
                "so each direction carries only 2BF bytes."),
        Mistake(sharded_critical_D(p["chip"], n=2) / 2,
                "Half the answer: each chip does 2BDF/2 FLOPs (half of the aggregate 2BDF), "
                "and its partial sum is 2 bytes per element in bf16."),
    ],
))

register(Exercise(
    id="comms-time-per-chip",
    question="B = 1024, D = 16384, F = 8192 in bf16, D split over 2 TPU v5e chips. How long does each "
             "chip need at best (math and link transfer perfectly overlapped)?",
    answer=lambda p: sharded_estimate(p["B"], p["D"], p["F"], p["chip"], n=2).t_lower,
    kind="time",
    params={"B": 1024, "D": 16384, "F": 8192, "chip": "TPU v5e"},
    hints=("Per chip: max(t_math, t_comms) with t_math = 2BDF/2 / peak and t_comms = 2BF / link.",),
    mistakes=lambda p: [
        Mistake(sharded_estimate(p["B"], p["D"], p["F"], p["chip"], n=1 + 1).t_math * 2,
                "That is the time for all 2BDF FLOPs on one chip: each chip does only half of them."),
        Mistake(sharded_estimate(p["B"], p["D"], p["F"], p["chip"], n=2).t_upper,
                "That is t_math + t_comms, the upper bound with no overlap; the question asks for the "
                "best case, max(t_math, t_comms)."),
    ],
))

register(Exercise(
    id="comms-which-regime",
    question="Two TPU v5e chips, bf16, D split in two: B = 8192, D = 4096, F = 16384. Is each chip "
             "'compute'-bound or 'bandwidth'-bound (by its link)?",
    answer=lambda p: sharded_estimate(p["B"], p["D"], p["F"], p["chip"], n=2).bound,
    kind="choice",
    choices=("compute", "bandwidth"),
    params={"B": 8192, "D": 4096, "F": 16384, "chip": "TPU v5e"},
    hints=(f"Compare D with the critical D of the link (about {sharded_critical_D('TPU v5e'):.0f} "
           "for v5e); B does not matter.",),
    mistakes=lambda p: [Mistake("compute", "A large B does not help here: each chip's math and the "
                                "partial sum it sends both grow with B (and with F). Only D, which the "
                                "partial sum does not contain, decides.")],
))

register(Exercise(
    id="comms-flops-per-chip",
    question="A matmul X[B, D] @ W[D, F] is split along D over n chips. Write the FLOPs each chip does "
             "(per chip, not the aggregate) in terms of B, D, F and n.",
    answer=lambda p: "2*B*D*F/n",
    kind="symbolic",
    symbols=("B", "D", "F", "n"),
    hints=("One chip alone would do 2BDF FLOPs (a multiply and an add per term); each chip now "
           "contracts over D/n of the D terms.",),
    mistakes=lambda p: [
        Mistake("2*B*D*F", "That is the aggregate over all n chips; each chip does 1/n of it."),
        Mistake("B*D*F/n", "A multiply and an add are 2 FLOPs: the 2 in 2BDF/n is missing."),
    ],
))

register(Exercise(
    id="comms-ring-bytes",
    question="With a ring all-reduce over n chips, how many bytes does each chip send in one direction "
             "for the bf16 partial sums of Y[B, F]? (an expression in B, F and n)",
    answer=lambda p: "4*B*F*(n - 1)/n",
    kind="symbolic",
    symbols=("B", "F", "n"),
    hints=("A ring all-reduce sends 2(n-1)/n partial sums per chip per direction; one partial "
           "sum is B*F elements of 2 bytes.",),
    mistakes=lambda p: [
        Mistake("2*B*F*(n - 1)/n", "That counts one byte per element; bf16 has 2."),
        Mistake("8*B*F*(n - 1)/n", "That counts both directions; links are full duplex, so only one "
                                   "direction's bytes cost time."),
        Mistake("2*B*F", "That is the n = 2 answer; for n chips a ring sends 2(n-1)/n partial sums."),
    ],
))
