"""Homework part 2: a matmul sharded over n chips, one-way vs bidirectional links, decode batch."""

from .. import (critical_batch_size, get_chip, sharded_critical_D, sharded_estimate,
                sharded_matmul)
from ..units import format_bandwidth, format_flops_rate
from .core import Exercise, Mistake, register
from .homework import DEMO_ID, Draw, HomeworkSet, define_set

SET_ID = "part2"
CHIPS = ("TPU v4", "TPU v5e", "TPU v5p", "TPU v6e", "A100 SXM", "H100 SXM", "B200", "MI300X")
CHIP_COUNTS = (2, 4, 8)
BATCHES = (256, 512, 1024, 2048, 4096)
DIMS_D = (2048, 4096, 8192, 16384, 32768, 65536)
DIMS_F = (4096, 8192, 16384)
WEIGHT_DTYPES = ("bf16", "int8")


def make_parameters(draw: Draw) -> dict:
    return {"chip": draw.choice(CHIPS), "n": draw.choice(CHIP_COUNTS), "B": draw.choice(BATCHES),
            "D": draw.choice(DIMS_D), "F": draw.choice(DIMS_F),
            "weights": draw.choice(WEIGHT_DTYPES)}


def describe(p: dict) -> list:
    chip = get_chip(p["chip"])
    link = chip.interconnect
    return [("chip", chip.name),
            ("dense bf16 peak", format_flops_rate(chip.peak_flops_per_s("bf16"))),
            ("memory bandwidth", format_bandwidth(chip.hbm_bytes_per_s)),
            (f"{link.name} link", f"{format_bandwidth(link.one_way_bytes_per_s)} one way per link "
                                  f"({format_bandwidth(link.bidirectional_bytes_per_s)} bidirectional)"),
            ("sharded matmul X[B, D] @ W[D, F], bf16",
             f"B = {p['B']}, D = {p['D']}, F = {p['F']}, D split over n = {p['n']} chips (ring all-reduce)"),
            ("decode: weights stored in", p["weights"] + " (math in bf16)")]


def _plan(p):
    return sharded_matmul(p["B"], p["D"], p["F"], n=p["n"])


def _est(p):
    return sharded_estimate(p["B"], p["D"], p["F"], p["chip"], n=p["n"])


def _link(p):
    return get_chip(p["chip"]).interconnect


def _flops_mistakes(p):
    return [Mistake(_plan(p).total_flops, "That is all n chips together; each chip does 1/n of the "
                                          "2*B*D*F FLOPs.")]


def _send_mistakes(p):
    B, F, n = p["B"], p["F"], p["n"]
    out = [Mistake(2 * _plan(p).send_bytes_per_direction,
                   "You counted both directions; links are full duplex, so what comes back in the "
                   "other direction costs no extra time. Count one direction.")]
    if n > 2:
        out.append(Mistake(2 * B * F, "That is one whole bf16 partial sum (2*B*F bytes); a ring "
                                      "all-reduce sends 2(n-1)/n of it per chip and direction."))
    return out


def _comms_mistakes(p):
    t = _est(p).t_comms
    link = _link(p)
    return [Mistake(t / 2, "You divided by the bidirectional link bandwidth; the bytes go one way, "
                           "so divide by the one-way figure."),
            Mistake(t / link.count, f"You divided by all {link.count} links together; a ring uses one "
                                    "link in each direction.")]


def _math_mistakes(p):
    return [Mistake(_est(p).t_math * p["n"], "That is the time of the whole matmul on one chip; each "
                                             "of the n chips does 1/n of the FLOPs.")]


def _regime_mistakes(p):
    wrong = "compute" if _est(p).bound == "bandwidth" else "bandwidth"
    return [Mistake(wrong, "Compare q4 (math time per chip) with q3 (link time): the longer one "
                           "decides. Equivalently, compare D with the critical D (q6).")]


def _critical_D_mistakes(p):
    return [Mistake(sharded_critical_D(p["chip"], n=p["n"]) / 2,
                    "You used the bidirectional link bandwidth; the partial sums go one way per "
                    "link, so use the one-way figure.")]


def _decode_mistakes(p):
    if p["weights"] == "bf16":
        return []
    return [Mistake(critical_batch_size(p["chip"]),
                    "That assumes 2-byte weights; int8 weights are 1 byte each, which halves the "
                    "bytes per step and the critical batch.")]


def _register(q, **kwargs):
    return register(Exercise(id=f"hw-{SET_ID}-{q}", params=dict(DEMO), **kwargs))


DEMO = make_parameters(Draw(f"{SET_ID}\0{DEMO_ID}"))


def _symbolic_flops(p):
    import sympy
    B, D, F, n = sympy.symbols("B D F n", positive=True)
    return sharded_matmul(B, D, F, n=n).per_chip.flops


def _symbolic_mistakes(p):
    import sympy
    B, D, F, n = sympy.symbols("B D F n", positive=True)
    return [Mistake(2 * B * D * F, "That is all n chips together; per chip it is 1/n of it."),
            Mistake(B * D * F / n, "A multiply-add is 2 FLOPs: a matmul does 2*B*D*F FLOPs in all.")]


_register("q1", question="How many FLOPs does each chip do?", answer=lambda p: _plan(p).per_chip.flops,
          kind="count", mistakes=_flops_mistakes, hints=("2*B*D*F / n per chip.",))
_register("q2", question="How many bytes does each chip send over one link in one direction "
                         "(ring all-reduce of the bf16 partial sums)?",
          answer=lambda p: _plan(p).send_bytes_per_direction, kind="size", mistakes=_send_mistakes,
          hints=("A partial sum is B*F bf16 values (2*B*F bytes); a ring sends 2(n-1)/n of it.",))
_register("q3", question="How long does sending q2's bytes take over one link (one way)?",
          answer=lambda p: _est(p).t_comms, kind="time", mistakes=_comms_mistakes,
          hints=("Divide q2 by the one-way bandwidth of one link.",))
_register("q4", question="How long does each chip's math take at the dense bf16 peak?",
          answer=lambda p: _est(p).t_math, kind="time", mistakes=_math_mistakes,
          hints=("q1 divided by the dense bf16 peak.",))
_register("q5", question="Is the sharded matmul compute-bound or bandwidth-bound (link-bound)?",
          answer=lambda p: _est(p).bound, kind="choice", choices=("compute", "bandwidth"),
          mistakes=_regime_mistakes, hints=("Compare q4 with q3.",))
_register("q6", question="Above which D is the sharded matmul compute-bound on n chips?",
          answer=lambda p: sharded_critical_D(p["chip"], n=p["n"]), kind="number",
          mistakes=_critical_D_mistakes,
          hints=("Set 2BDF/(n*peak) = 2(n-1)/n * 2BF / link and solve for D: B and F cancel.",))
_register("q7", question="In decode, with weights stored as given, above which batch size do the "
                         "weight matmuls become compute-bound (B << D, F)?",
          answer=lambda p: critical_batch_size(p["chip"], "bf16", weights=p["weights"]),
          kind="number", mistakes=_decode_mistakes,
          hints=("B_crit = ridge point * bytes per weight / 2.",))
_register("q8", question="Write the FLOPs per chip as a formula in B, D, F and n.",
          answer=_symbolic_flops, kind="symbolic", symbols=("B", "D", "F", "n"),
          mistakes=_symbolic_mistakes, hints=("The whole matmul is 2*B*D*F FLOPs.",))

define_set(HomeworkSet(SET_ID, "Homework part 2 (many chips)", make_parameters,
                       tuple(f"q{i}" for i in range(1, 9)), describe))
