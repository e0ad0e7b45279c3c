"""Exercises of chapter 2, "Arithmetic intensity"."""

from .. import critical_intensity, dot, elementwise, estimate, matmul
from ..dtypes import bytes_per_element
from .core import Exercise, Mistake, register


#: The ridge point often quoted for GPUs ("about 300 FLOPs/B"); a folklore figure, not a law.
FOLKLORE_GPU_RIDGE = 300

register(Exercise(
    id="intensity-dot-fp32-symbolic",
    title="The dot product in fp32 (chapter 2)",
    question=("Write the arithmetic intensity of an fp32 dot product of two length-N vectors "
              "(2N - 1 FLOPs; read both vectors, write one number) as a formula in N."),
    answer=lambda p: dot(_symbol("N"), "fp32").intensity,
    kind="symbolic",
    symbols=("N",),
    hints=("An fp32 number takes 4 bytes.",
           "Bytes moved: 2N elements read plus 1 written, each 4 bytes."),
    mistakes=lambda p: [
        Mistake("(2*N - 1)/(2*(2*N + 1))", "That is the bf16 intensity (2 bytes per element); "
                                           "fp32 takes 4 bytes per element."),
        Mistake("(2*N - 1)/(8*N)", "Close: you left out the 4 bytes of the result that is written."),
        Mistake("4*(2*N + 1)/(2*N - 1)", "That is bytes per FLOP; intensity is FLOPs per byte."),
    ],
))


def _symbol(name):
    import sympy
    return sympy.Symbol(name, positive=True)


register(Exercise(
    id="intensity-elementwise-add-bf16",
    title="Adding two vectors (chapter 2)",
    question=("z = x + y on two bf16 vectors of length N (read x and y, write z): what is its "
              "arithmetic intensity, in FLOPs per byte?"),
    answer=lambda p: elementwise(p["N"], p["dtype"]).intensity,
    kind="intensity",
    params={"N": 10**6, "dtype": "bf16"},
    hints=("One FLOP per element; three elements of 2 bytes move per element of z.",),
    mistakes=lambda p: [Mistake(1 / (2 * bytes_per_element(p["dtype"])),
                                "You counted the two reads but not the write of z.")],
))


register(Exercise(
    id="intensity-ridge-h100",
    title="The H100's ridge point (chapter 2)",
    question="What is the ridge point (critical intensity) of an H100 SXM in bf16, dense, from HBM?",
    answer=lambda p: critical_intensity(p["chip"], p["dtype"]),
    kind="intensity",
    params={"chip": "H100 SXM", "dtype": "bf16"},
    # 1%: the often-quoted "about 300" is 1.6% off and must not pass as the computed value
    tolerance=0.01,
    hints=("Ridge point = peak FLOP/s / memory bandwidth in bytes/s.",
           "Use the dense bf16 peak, not the 2:4-sparse figure on the spec sheet."),
    mistakes=lambda p: [
        Mistake(critical_intensity(p["chip"], p["dtype"], sparse=True),
                "That uses the 2:4-sparse peak from the spec sheet; a dense matmul gets the "
                "dense peak, half of it."),
        Mistake(FOLKLORE_GPU_RIDGE,
                f"{FOLKLORE_GPU_RIDGE} is the round figure often quoted for GPUs; this question "
                "asks for this chip's value, dense peak / bandwidth, to within 1%.")],
))


def _matmul_regime(p):
    return estimate(matmul(p["B"], p["D"], p["F"], p["dtype"]), p["chip"]).bound


def _regime_mistakes(p):
    cost = matmul(p["B"], p["D"], p["F"], p["dtype"])
    ridge = critical_intensity(p["chip"], p["dtype"])
    wrong = "bandwidth" if _matmul_regime(p) == "compute" else "compute"
    side = "below" if cost.intensity < ridge else "above"
    return [Mistake(wrong, f"The matmul's intensity, {float(cost.intensity):.0f} FLOPs/B, is "
                           f"{side} this chip's ridge point, {ridge:.0f} FLOPs/B. 'High' and "
                           "'low' only mean something next to the ridge point.")]


for _chip, _label, _title in (("H100 SXM", "h100", "Which regime on the H100?"),
                              ("TPU v5p", "v5p", "Which regime on a TPU v5p?")):
    register(Exercise(
        id=f"intensity-matmul-regime-{_label}",
        title=f"{_title} (chapter 2)",
        question=(f"A bf16 matmul with B = 256, D = F = 8192 runs on a {_chip}, operands in HBM. "
                  "Compute-bound or bandwidth-bound?"),
        answer=_matmul_regime,
        kind="choice",
        choices=("compute", "bandwidth"),
        params={"B": 256, "D": 8192, "F": 8192, "dtype": "bf16", "chip": _chip},
        hints=("Compute the matmul's intensity with rl.matmul(...).intensity and compare it with "
               "rl.critical_intensity(chip).",),
        mistakes=_regime_mistakes,
    ))
