"""Exercises of chapter 2, "Arithmetic intensity"."""

from .. import critical_intensity, dot, elementwise, estimate, matmul
from ..dtypes import bytes_per_element
from ..units import format_intensity
from .core import Exercise, Mistake, register

#: The ridge point often quoted for GPUs ("about 300 FLOPs/B"); a folklore figure, not a law.
FOLKLORE_GPU_RIDGE = 300

register(
    Exercise(
        id="intensity-dot-fp32-symbolic",
        title="The dot product in fp32 (chapter 2)",
        question=(
            "Write the arithmetic intensity of an fp32 dot product of two length-N vectors "
            "(2N - 1 FLOPs; read both vectors, write one number) as a formula in N."
        ),
        answer=lambda p: dot(_symbol("N"), "fp32").intensity,
        kind="symbolic",
        symbols=("N",),
        hints=(
            "An fp32 number takes 4 bytes.",
            "Bytes moved: 2N elements read plus 1 written, each 4 bytes.",
        ),
        mistakes=lambda p: [
            Mistake(
                "(2*N - 1)/(2*(2*N + 1))",
                "That is the bf16 intensity (2 bytes per element); fp32 takes 4 bytes per element.",
            ),
            Mistake(
                "(2*N - 1)/(8*N)", "Close: you left out the 4 bytes of the result that is written."
            ),
            Mistake(
                "4*(2*N + 1)/(2*N - 1)", "That is bytes per FLOP; intensity is FLOPs per byte."
            ),
            Mistake(
                "1/4",
                "1/4 is where the intensity tends for large N (2N FLOPs over 8N bytes); the "
                "question asks for the exact formula in N, with the -1 FLOP and the 4 bytes of "
                "the result that is written.",
            ),
        ],
    )
)


def _symbol(name):
    import sympy

    return sympy.Symbol(name, positive=True)


def _fma(p):
    """z = x * y + w: 2 FLOPs per element, three inputs, one output."""
    return elementwise(p["N"], p["dtype"], flops_per_element=2, inputs=3, outputs=1, name="fma")


def _fma_mistakes(p):
    size = bytes_per_element(p["dtype"])
    return [
        Mistake(2 / (3 * size), "You counted the three reads but not the write of z."),
        Mistake(2 / (4 * 2), "That uses 2 bytes per number (bf16); fp32 takes 4 bytes."),
        Mistake(1 / (4 * size), "A multiply and an add are 2 FLOPs per element, not 1."),
    ]


register(
    Exercise(
        id="intensity-fma-fp32",
        twice=("multiply-add", "dtype"),
        title="A fused multiply-add (chapter 2)",
        question=(
            "z = x * y + w on three fp32 vectors of length N (read x, y and w, write z): what "
            "is its arithmetic intensity, in FLOPs per byte?"
        ),
        answer=lambda p: _fma(p).intensity,
        kind="intensity",
        params={"N": 10**6, "dtype": "fp32"},
        hints=(
            "Per element: one multiply and one add; three numbers read and one written.",
            "An fp32 number takes 4 bytes.",
        ),
        mistakes=_fma_mistakes,
    )
)


register(
    Exercise(
        id="intensity-ridge-a100-int8",
        twice=("sparse",),
        title="The A100's int8 ridge point (chapter 2)",
        question=(
            "What is the ridge point (critical intensity) of an NVIDIA A100 SXM for dense int8 "
            "math from HBM, in OPs (FLOPs) per byte?"
        ),
        answer=lambda p: critical_intensity(p["chip"], p["dtype"]),
        kind="intensity",
        params={"chip": "A100 SXM", "dtype": "int8"},
        tolerance=0.01,
        hints=(
            "Ridge point = peak FLOP/s / memory bandwidth in bytes/s.",
            "Use the dense int8 peak, not the 2:4-sparse figure on the spec sheet.",
        ),
        mistakes=lambda p: [
            Mistake(
                critical_intensity(p["chip"], p["dtype"], sparse=True),
                "That uses the 2:4-sparse peak from the spec sheet; a dense matmul gets the "
                "dense peak, half of it.",
            ),
            Mistake(
                critical_intensity(p["chip"], "bf16"),
                f"That is the bf16 ridge point; the {p['dtype']} peak is not the bf16 one, so "
                "neither is its ridge.",
            ),
            Mistake(
                FOLKLORE_GPU_RIDGE,
                f"{FOLKLORE_GPU_RIDGE} is the round figure often quoted for GPUs; this question "
                "asks for this chip and dtype: dense peak / bandwidth, to within 1%.",
            ),
        ],
    )
)


def _matmul(p):
    return matmul(p["B"], p["D"], p["F"], p["dtype"])


def _matmul_regime(p):
    return estimate(_matmul(p), p["chip"]).bound


def _regime_mistakes(p):
    cost = _matmul(p)
    ridge = critical_intensity(p["chip"], p["dtype"])
    wrong = "bandwidth" if _matmul_regime(p) == "compute" else "compute"
    side = "below" if cost.intensity < ridge else "above"
    return [
        Mistake(
            wrong,
            f"The matmul's intensity, {format_intensity(float(cost.intensity))}, "
            f"is {side} this chip's {p['dtype']} ridge point, "
            f"{format_intensity(ridge)}. 'High' and 'low' only mean something "
            "next to the ridge point.",
        )
    ]


for _id, _chip, _dtype, _B, _title in (
    ("intensity-matmul-regime-b512-h100", "H100 SXM", "bf16", 512, "Twice the batch on the H100"),
    ("intensity-matmul-regime-int8-v5p", "TPU v5p", "int8", 128, "An int8 matmul on a TPU v5p"),
):
    register(
        Exercise(
            id=_id,
            title=f"{_title} (chapter 2)",
            question=(
                f"A{'n' if _dtype == 'int8' else ''} {_dtype} matmul with B = {_B}, "
                f"D = F = 8192 runs on a {_chip}, operands in HBM. "
                "Compute-bound or memory-bound?"
            ),
            answer=_matmul_regime,
            kind="choice",
            choices=("compute", "memory"),
            params={"B": _B, "D": 8192, "F": 8192, "dtype": _dtype, "chip": _chip},
            hints=(
                "The matmul's intensity is 2BDF FLOPs over (BD + DF + BF) elements times the "
                "bytes per element; compare it with the chip's ridge point for this dtype.",
            ),
            mistakes=_regime_mistakes,
        )
    )
