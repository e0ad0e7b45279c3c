"""Exercises of chapter 4, "Matrix multiplication and the critical batch size".

Every answer is computed by `roofline` from the catalog; the mistakes listed are the
ones specific to each question (the generic ones - unit prefixes, factors of 2,
reciprocals, GB vs GiB - are added by the checker). Each question is about a chip, size,
dtype or situation the chapter does not work through, so it cannot be answered by looking
a printed number up.
"""

from .. import (
    critical_batch_size,
    critical_intensity,
    estimate,
    exact_critical_batch_size,
    format_intensity,
    get_chip,
    matmul,
)
from .core import Exercise, Mistake, register
from .links import vendor_link_answers


def _fp8_bf16_out_intensity():
    """Intensity of an fp8 x fp8 matmul accumulated in fp32 and written back in bf16."""
    B, D, F = _symbols()
    return matmul(B, D, F, dtype="fp8", output="bf16", accumulate="fp32").intensity


def _symbols() -> tuple:
    """The symbols B, D, F (positive), as a 3-tuple."""
    import sympy

    B, D, F = sympy.symbols("B D F", positive=True)
    return B, D, F


register(
    Exercise(
        id="matmul-flops-error-threshold",
        title="When is 2BDF close enough? (chapter 4)",
        question="A matmul X[B, D] @ W[D, F] does exactly BF(2D - 1) FLOPs; the usual count is 2BDF. "
        "What is the smallest D for which 2BDF overstates the exact count by at most 0.02 % "
        "of 2BDF?",
        answer=lambda p: 1 / (2 * p["fraction"]),
        params={"fraction": 2e-4},
        tolerance=0.01,
        hints=(
            "The difference is one add per output element, BF FLOPs; as a fraction of 2BDF it is "
            "1/(2D). Solve 1/(2D) <= 0.0002 for D.",
        ),
        mistakes=lambda p: [
            Mistake(
                1 / p["fraction"],
                "That solves 1/D <= 0.0002: the difference is one add per output "
                "(BF FLOPs) out of 2BDF, so the fraction is 1/(2D), not 1/D.",
            ),
            Mistake(
                1 / (4 * p["fraction"]),
                "That solves 1/(4D) <= 0.0002; the fraction is BF / (2BDF) = 1/(2D).",
            ),
        ],
    )
)

register(
    Exercise(
        id="matmul-intensity-fp8-bf16-out",
        title="An fp8 matmul with a bf16 output (chapter 4)",
        question="An fp8 matmul X[B, D] @ W[D, F]: X and W are fp8 (1 byte each), the sums are "
        "accumulated in fp32 inside the matrix unit, and Y is written back in bf16. Write its "
        "arithmetic intensity (FLOPs per byte), reading X and W once and writing Y once, as a "
        "formula in B, D, F.",
        answer=lambda p: _fp8_bf16_out_intensity(),
        kind="symbolic",
        symbols=("B", "D", "F"),
        hints=(
            "FLOPs are 2BDF whatever the dtype. Bytes: 1 per element of X and W, 2 per element "
            "of Y; the fp32 accumulator never leaves the chip.",
        ),
        mistakes=lambda p: [
            Mistake(
                "2*B*D*F/(B*D + D*F + 4*B*F)",
                "That writes Y in fp32 (4 bytes): the fp32 "
                "accumulator stays inside the unit; Y leaves it "
                "rounded to bf16, 2 bytes.",
            ),
            Mistake(
                "2*B*D*F/(B*D + D*F + B*F)",
                "That writes Y in fp8; the question writes it in bf16, 2 bytes per element.",
            ),
            Mistake(
                "B*D*F/(B*D + D*F + B*F)",
                "That is the all-bf16 intensity; here X and W are 1 byte per element.",
            ),
        ],
    )
)

register(
    Exercise(
        id="matmul-critical-batch-h200-int8w",
        twice=("dtype", "sparse"),
        title="int8 weights on an H200 (chapter 4)",
        question="An H200 serves a model with int8 weights: bf16 activations times int8 weights, bf16 "
        "math on the dense bf16 peak and a bf16 output. What is the critical batch size with "
        "B much smaller than D and F?",
        answer=lambda p: critical_batch_size(p["chip"], "bf16", weights="int8"),
        params={"chip": "H200"},
        hints=(
            "With B << D, F the bytes are the weights, w*D*F with w = 1, and the FLOPs 2BDF: "
            "the intensity is about 2B/w. Set it equal to the bf16 ridge point.",
        ),
        mistakes=lambda p: [
            Mistake(
                critical_batch_size(p["chip"], "bf16"),
                "That is the critical batch with bf16 weights (2 bytes), which is also what int8 "
                "math on the int8 peak would give. Here the math is bf16 and the weights are "
                "int8, 1 byte: the intensity is about 2B and the critical batch halves.",
            ),
            Mistake(
                critical_batch_size("H100 SXM", "bf16", weights="int8"),
                "That is the H100 SXM's value: the H200 has the same FLOP/s but more bandwidth.",
            ),
        ],
    )
)

register(
    Exercise(
        id="matmul-regime-v5e",
        title="Which regime? (chapter 4)",
        question="On a TPU v5e, is a bf16 matmul with B = 64, D = F = 4096 compute-bound or "
        "memory-bound?",
        answer=lambda p: estimate(matmul(p["B"], p["D"], p["F"]), p["chip"]).bound,
        kind="choice",
        choices=("compute", "memory"),
        params={"chip": "TPU v5e", "B": 64, "D": 4096, "F": 4096},
        hints=(
            "Compare the matmul's intensity (about B when B << D, F) with the chip's ridge point.",
        ),
        mistakes=lambda p: [
            Mistake(
                "compute",
                f"Its intensity, {format_intensity(matmul(p['B'], p['D'], p['F']).intensity)}, "
                f"is below the ridge point of the {get_chip(p['chip']).name}, "
                f"{format_intensity(critical_intensity(p['chip'], 'bf16'))}: loading the "
                "weights takes longer than the math.",
            ),
        ],
    )
)

register(
    Exercise(
        id="matmul-exact-critical-int8-h100",
        twice=("dtype", "sparse"),
        title="int8 weights, exactly (chapter 4)",
        question="bf16 activations times int8 weights (bf16 math on the dense peak, bf16 output) on an "
        "H100 SXM with D = F = 4096: at what batch B does the time for the math equal the "
        "time to move the bytes? Use the exact byte count, not the B << D, F approximation.",
        answer=lambda p: exact_critical_batch_size(
            p["chip"], p["D"], p["F"], "bf16", weights="int8"
        ),
        params={"chip": "H100 SXM", "D": 4096, "F": 4096},
        tolerance=0.01,
        hints=("Set 2BDF / peak equal to (2BD + 1*DF + 2BF) / bandwidth and solve for B.",),
        mistakes=lambda p: [
            Mistake(
                critical_batch_size(p["chip"], "bf16", weights="int8"),
                "That is the B << D, F approximation (ridge / 2). At D = F = 4096 the activations "
                "and the output are not small next to the weights: solve with the exact bytes.",
            ),
            Mistake(
                critical_batch_size(p["chip"], "bf16"),
                "That is the critical batch for bf16 weights, without the approximation's "
                "correction either: the weights here are int8, 1 byte each.",
            ),
            Mistake(
                exact_critical_batch_size(p["chip"], p["D"], p["F"], "bf16"),
                "That is the exact value with bf16 weights; the weights here are int8 (1 byte).",
            ),
        ],
    )
)

register(
    Exercise(
        id="matmul-exact-critical-rtx4090-fp16acc",
        twice=("sparse",),
        title="An fp16 inference matmul on an RTX 4090 (chapter 4)",
        question="An fp16 inference matmul (fp16 activations, weights and output) with FP16 accumulate, "
        "dense, on a GeForce RTX 4090, with D = F = 8192: at what batch B does the time for "
        "the math equal the time to move the bytes? Use the exact byte count.",
        answer=lambda p: exact_critical_batch_size(
            p["chip"], p["D"], p["F"], "fp16", accumulate="fp16"
        ),
        params={"chip": "RTX 4090", "D": 8192, "F": 8192},
        tolerance=0.01,
        hints=(
            "The ridge is the dense fp16 figure with FP16 accumulate over the GDDR6X bandwidth. "
            "Then solve BDF = I*(BD + DF + BF) for B, as for bf16.",
        ),
        mistakes=lambda p: [
            Mistake(
                exact_critical_batch_size(p["chip"], p["D"], p["F"], "fp16"),
                "That uses the FP32-accumulate rate; with FP16 accumulate a GeForce card runs "
                "fp16 at twice that rate, so the ridge doubles.",
            ),
            Mistake(
                exact_critical_batch_size(p["chip"], p["D"], p["F"], "fp16", accumulate="fp16") / 2,
                "That is half the answer: the FP32-accumulate rate (half the FP16-accumulate one "
                "on a GeForce card) halves the ridge, or a sparse/dense or 2-byte slip. With "
                "FP16 accumulate use the FP16-accumulate dense peak, then solve with the exact "
                "bytes.",
            ),
            Mistake(
                critical_batch_size(p["chip"], "fp16", accumulate="fp16"),
                "That is the B << D, F approximation (the ridge point itself); solve with the "
                "exact bytes, which include the activations and the output.",
            ),
            Mistake(
                exact_critical_batch_size(
                    p["chip"], p["D"], p["F"], "fp16", sparse=True, accumulate="fp16"
                ),
                "That uses the 2:4-sparse figure; a dense matmul gets half of it.",
            ),
        ],
    )
)

register(
    Exercise(
        id="matmul-bytes-bf16-writeback",
        twice=("dtype",),
        title="Bytes with an fp32 accumulator (chapter 4)",
        question="A bf16 matmul with B = 2048, D = 8192, F = 1024 accumulates in fp32 inside the matrix "
        "unit and writes Y back in bf16. How many bytes must it move to and from memory at "
        "least (read X and W once, write Y once)?",
        answer=lambda p: matmul(p["B"], p["D"], p["F"], "bf16", accumulate="fp32").bytes,
        kind="size",
        params={"B": 2048, "D": 8192, "F": 1024},
        hints=(
            "Count each operand in the dtype it has in memory: X, W and Y are all bf16 "
            "(2 bytes); the fp32 accumulator never leaves the chip.",
        ),
        mistakes=lambda p: [
            Mistake(
                matmul(p["B"], p["D"], p["F"], "bf16", output="fp32").bytes,
                "That writes Y in fp32: the fp32 sums stay inside the matrix unit and are "
                "rounded to bf16 (2 bytes) on the way out.",
            ),
            Mistake(
                matmul(p["B"], p["D"], p["F"], "fp32").bytes,
                "That counts every operand in fp32; only the accumulator is fp32, and it never "
                "reaches memory.",
            ),
        ],
    )
)

register(
    Exercise(
        id="matmul-critical-batch-int8-v4",
        twice=("dtype",),
        title="int8 on a TPU v4 (chapter 4)",
        question="On a TPU v4, a matmul runs entirely in int8 (int8 activations, weights and output, "
        "on the int8 peak). What is its critical batch size with B much smaller than D and "
        "F? (Google's page gives the TPU v4 275 TFLOP/s in bf16 and 275 TOPS in int8.)",
        answer=lambda p: critical_batch_size(p["chip"], "int8"),
        params={"chip": "TPU v4"},
        tolerance=0.01,
        hints=(
            "Intensity with B << D, F: 2BDF FLOPs over D*F bytes (1 byte per weight), about 2B. "
            "Set it equal to the int8 ridge point, int8 peak over HBM bandwidth.",
        ),
        mistakes=lambda p: [
            Mistake(
                critical_intensity(p["chip"], "int8"),
                "That is the int8 ridge point itself (on a TPU v4 it equals the bf16 one: both "
                "peaks are 275 T(FL)OP/s, the int8 peak does not double as on a TPU v5e). With "
                "1-byte weights the intensity is about 2B, so the critical batch is half the ridge.",
            ),
        ],
    )
)

register(
    Exercise(
        id="matmul-max-replicas-v5p",
        twice=("dtype", "sparse"),
        title="Tokens per replica (chapter 4)",
        question="A training step processes 256 sequences of 4096 tokens each on TPU v5p chips, with "
        "pure data parallelism (one chip per model replica, each replica gets an equal share "
        "of the tokens). Up to how many replicas do the bf16 weight matmuls of each replica "
        "stay compute-bound, with B much smaller than D and F?",
        answer=lambda p: (
            p["sequences"] * p["tokens_per_sequence"] / critical_batch_size(p["chip"], "bf16")
        ),
        params={"chip": "TPU v5p", "sequences": 256, "tokens_per_sequence": 4096},
        hints=(
            "B in a weight matmul is the number of tokens one replica processes per step: "
            "sequences x tokens per sequence / replicas. Keep it at least the critical batch.",
        ),
        mistakes=lambda p: [
            Mistake(
                p["sequences"] / critical_batch_size(p["chip"], "bf16"),
                "That counts sequences; every token of every sequence is a row of X, so B counts "
                "tokens: 256 x 4096 per step.",
            ),
            Mistake(
                p["sequences"] * p["tokens_per_sequence"] / critical_batch_size("TPU v5e", "bf16"),
                "That uses the TPU v5e's critical batch; the TPU v5p has its own.",
            ),
        ],
    )
)


def _pod_gradient_tokens(p):
    """Tokens per chip at which the backward pass, 4BDF / P per weight matrix, equals the
    all-reduce of its bf16 [D, F] gradient over a torus slice with every axis at once (D and F
    cancel: any V gives the same B). Only the backward can hide the all-reduce: the gradient of
    the first layer is ready last, and the next step's forward needs its updated weight first."""
    from ..collectives import multi_axis_collective_time

    chip = get_chip(p["chip"])
    V = 2.0**30
    seconds = multi_axis_collective_time(
        "all-reduce", V, p["axes"], chip.interconnect.one_way_bytes_per_s
    )
    return seconds / V * 2 * chip.peak_flops_per_s("bf16") / 4


register(
    Exercise(
        id="matmul-dp-gradient-tokens-v6e",
        twice=("bidirectional", "all-reduce"),
        title="Gradients on a TPU v6e pod (chapter 4)",
        question="A full TPU v6e pod (a 16 x 16 torus, both axes wrap around) trains a model with "
        "pure data parallelism, one chip per replica. After each step the bf16 gradient of "
        "every weight matrix W[D, F] is all-reduced over all 256 chips, on both axes at once, "
        "overlapped with the backward pass. How many tokens must each chip process per step "
        "for its backward math (4BDF FLOPs per weight matrix) to outlast that all-reduce?",
        answer=_pod_gradient_tokens,
        params={"chip": "TPU v6e", "axes": (16, 16)},
        hints=(
            "Math: the backward pass only, 4BDF / P (the forward runs before any gradient "
            "exists). All-reduce over k axes at once of N chips in all: "
            "2 (N-1)/N V / (2 k BW_link) with V = 2DF bytes. Set them equal: D and F cancel.",
        ),
        mistakes=lambda p: [
            *vendor_link_answers(_pod_gradient_tokens, p, "number"),
            Mistake(
                2 / 3 * _pod_gradient_tokens(p),
                "That lets the whole step's 6BDF hide the all-reduce; only the backward's 4BDF "
                "can (the forward runs before there is a gradient, and the first layer's "
                "gradient is ready last).",
            ),
            Mistake(
                2 * _pod_gradient_tokens(p),
                "Twice the answer: either the all-reduce runs on one axis only (2 links per "
                "chip; over the whole pod both axes work at once, 4 links) or only the "
                "forward's 2BDF was counted (the backward does 4BDF).",
            ),
            Mistake(
                critical_batch_size(p["chip"], "bf16"),
                "That is the memory bound (the critical batch); the gradient all-reduce asks "
                "for more tokens per chip.",
            ),
        ],
    )
)
