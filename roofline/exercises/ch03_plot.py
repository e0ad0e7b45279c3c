"""Exercises of chapter 3, "The roofline plot"."""

from .. import attainable_flops_per_s, critical_intensity, get_chip
from .core import Exercise, Mistake, register


register(Exercise(
    id="plot-attainable-h100",
    title="Reading the roof (chapter 3)",
    question=("On the H100 SXM's bf16 roofline (HBM), what FLOP/s can an operation of "
              "intensity 100 FLOPs/B attain at best?"),
    answer=lambda p: attainable_flops_per_s(p["intensity"], p["chip"], p["dtype"]),
    kind="rate",
    params={"intensity": 100, "chip": "H100 SXM", "dtype": "bf16"},
    hints=("The roof is min(peak FLOP/s, bandwidth x intensity).",
           "Is 100 FLOPs/B left or right of the ridge point?"),
    mistakes=lambda p: [Mistake(get_chip(p["chip"]).peak_flops_per_s(p["dtype"]),
                                "That is the flat roof, the peak; left of the ridge point the "
                                "slanted roof, bandwidth x intensity, is lower.")],
))


register(Exercise(
    id="plot-loglog-slope",
    title="The slope (chapter 3)",
    question=("On log-log axes, what is the slope of the slanted part of a roofline "
              "(attainable FLOP/s = bandwidth x intensity)?"),
    answer=lambda p: 1,
    kind="number",
    tolerance=0.01,
    hints=("Take logs: log(FLOP/s) = log(bandwidth) + log(intensity).",),
    mistakes=lambda p: [Mistake(get_chip("H100 SXM").hbm_bytes_per_s,
                                "The bandwidth is the slope on linear axes; on log-log axes it "
                                "only shifts the line up or down.")],
    generic_mistakes=False,
))


register(Exercise(
    id="plot-ridge-v5e-int8",
    title="The int8 ridge of a TPU v5e (chapter 3)",
    question="Where is the ridge point of a TPU v5e for int8 math from HBM, in FLOPs/B (OPs/B)?",
    answer=lambda p: critical_intensity(p["chip"], p["dtype"]),
    kind="intensity",
    params={"chip": "TPU v5e", "dtype": "int8"},
    hints=("The ridge point is per chip AND per dtype: use the int8 peak.",),
    mistakes=lambda p: [Mistake(critical_intensity(p["chip"], "bf16"),
                                "That is the bf16 ridge point; int8 has its own peak, so its "
                                "own ridge.")],
))


register(Exercise(
    id="plot-ridge-ici-v5e",
    title="The link's ridge (chapter 3)",
    question=("A TPU v5e reads an operation's operands over one ICI link (one way) instead of "
              "from HBM. Where is the ridge point of that roofline, in bf16?"),
    answer=lambda p: critical_intensity(p["chip"], "bf16",
                                        bandwidth_bytes_per_s=get_chip(p["chip"]).link_bytes_per_s),
    kind="intensity",
    params={"chip": "TPU v5e"},
    hints=("Same formula, peak / bandwidth, with the link's one-way bandwidth in place of HBM's.",),
    mistakes=lambda p: [Mistake(critical_intensity(p["chip"], "bf16"),
                                "That is the HBM ridge point; the link is much slower, so its "
                                "ridge sits much further right.")],
))


def _link_regime(p):
    chip = get_chip(p["chip"])
    ridge = critical_intensity(chip, "bf16", bandwidth_bytes_per_s=chip.link_bytes_per_s)
    return "compute" if p["intensity"] >= ridge else "bandwidth"


register(Exercise(
    id="plot-three-regions-v5e",
    title="The middle region (chapter 3)",
    question=("On a TPU v5e, an operation of intensity 1000 FLOPs/B is compute-bound when its "
              "operands sit in HBM. If they come over one ICI link instead, is it compute-bound "
              "or bandwidth-bound?"),
    answer=_link_regime,
    kind="choice",
    choices=("compute", "bandwidth"),
    choice_words={"link": "bandwidth"},  # the question's own word: its bandwidth is the link's
    params={"chip": "TPU v5e", "intensity": 1000},
    hints=("Compare 1000 with the ICI ridge point, not with the HBM one.",),
    mistakes=lambda p: [Mistake("compute" if _link_regime(p) == "bandwidth" else "bandwidth",
                                "That holds against the HBM ridge point; against the link's ridge "
                                "point the answer flips. It sits in the middle region.")],
))


register(Exercise(
    id="plot-half-peak-intensity",
    title="Half the peak (chapter 3)",
    question=("A chip has peak P FLOP/s and memory bandwidth W bytes/s. At what intensity does "
              "an operation attain half the peak? Write it as a formula in P and W."),
    answer=lambda p: "P/(2*W)",
    kind="symbolic",
    symbols=("P", "W"),
    hints=("On the slanted roof the attainable FLOP/s is W x I; set it equal to P/2.",),
    mistakes=lambda p: [
        Mistake("P/W", "That is the ridge point, where the roof reaches the full peak; half the "
                       "peak is reached at half that intensity."),
        Mistake("2*P/W", "Twice the ridge point is on the flat roof, at the full peak: solve "
                         "W x I = P/2."),
        Mistake("2*W/P", "That is bytes per FLOP, the reciprocal: an intensity is FLOPs per byte."),
    ],
))
