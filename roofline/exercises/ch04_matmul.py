"""Exercises of chapter 4, "Matrix multiplication and the critical batch size".

Every answer is computed by `roofline` from the catalog; the mistakes listed are the
ones specific to each question (the generic ones - unit prefixes, factors of 2,
reciprocals, GB vs GiB - are added by the checker).
"""

from .. import (critical_batch_size, critical_intensity, estimate, exact_critical_batch_size,
                format_bandwidth, format_intensity, get_chip, matmul)
from .core import Exercise, Mistake, register


register(Exercise(
    id="matmul-flops-relative-error",
    title="How wrong is 2BDF? (chapter 4)",
    question="A matmul X[B, D] @ W[D, F] does exactly BF(2D - 1) FLOPs. By what fraction of "
             "2BDF does the usual count 2BDF overstate it? Answer with a formula in B, D, F.",
    answer=lambda p: "1/(2*D)",
    kind="symbolic",
    symbols=("B", "D", "F"),
    hints=("Subtract the exact count from 2BDF, then divide by 2BDF; B and F cancel.",),
    mistakes=lambda p: [
        Mistake("B*F", "That is the absolute difference (in FLOPs); divide it by 2BDF to get a fraction."),
        Mistake("1/(2*D - 1)", "That is the difference relative to the exact count BF(2D - 1); "
                               "the question asks relative to 2BDF."),
        Mistake("1/D", "Each output needs D multiplies and D - 1 adds: the difference is one add "
                       "per output, BF FLOPs, out of 2BDF."),
    ],
))

register(Exercise(
    id="matmul-intensity-bf16",
    title="The intensity formula (chapter 4)",
    question="Write the arithmetic intensity (FLOPs per byte) of a bf16 matmul X[B, D] @ W[D, F] "
             "that reads X and W once and writes Y once, as a formula in B, D, F.",
    answer=lambda p: matmul(*_symbols(), dtype="bf16").intensity,
    kind="symbolic",
    symbols=("B", "D", "F"),
    hints=("FLOPs are 2BDF; bytes are 2 bytes per element of X, W and Y.",),
    mistakes=lambda p: [
        Mistake("2*B*D*F/(B*D + D*F + B*F)", "Each bf16 element is 2 bytes: the bytes are "
                                             "2(BD + DF + BF), so the 2s cancel."),
        Mistake("B", "That is the limit for B much smaller than D and F; the question asks for the "
                     "exact intensity with all three operands."),
        Mistake("B*D*F/(B*D + D*F)", "Y[B, F] is written back to memory too: add its BF elements."),
    ],
))


def _symbols():
    import sympy
    return sympy.symbols("B D F", positive=True)


register(Exercise(
    id="matmul-critical-batch-h200",
    title="Critical batch of the H200 (chapter 4)",
    question="What is the critical batch size of a bf16 matmul with B much smaller than D and F "
             "on an H200 (dense peak, HBM bandwidth)?",
    answer=lambda p: critical_batch_size(p["chip"], "bf16"),
    params={"chip": "H200"},
    hints=("With B << D, F the intensity is about B, so the critical batch is the ridge point: "
           "dense bf16 FLOP/s divided by HBM bytes/s.",),
    mistakes=lambda p: [
        Mistake(critical_batch_size("H100 SXM", "bf16"),
                "That is the H100 SXM's value: the H200 has the same FLOP/s but more bandwidth "
                f"({format_bandwidth(get_chip(p['chip']).hbm_bytes_per_s)}), so its critical "
                "batch is lower. '~300 on GPUs' is not a law."),
        Mistake(critical_batch_size(p["chip"], "bf16", sparse=True),
                "That uses the 2:4-sparse peak; a dense matmul gets the dense figure (half)."),
    ],
))

register(Exercise(
    id="matmul-regime-v5e",
    title="Which regime? (chapter 4)",
    question="On a TPU v5e, is a bf16 matmul with B = 64, D = F = 4096 compute-bound or "
             "bandwidth-bound?",
    answer=lambda p: estimate(matmul(p["B"], p["D"], p["F"]), p["chip"]).bound,
    kind="choice",
    choices=("compute", "bandwidth"),
    params={"chip": "TPU v5e", "B": 64, "D": 4096, "F": 4096},
    hints=("Compare the matmul's intensity (about B when B << D, F) with the chip's ridge point.",),
    mistakes=lambda p: [
        Mistake("compute", f"Its intensity, {format_intensity(matmul(p['B'], p['D'], p['F']).intensity)}, "
                           f"is below the ridge point of the {get_chip(p['chip']).name}, "
                           f"{format_intensity(critical_intensity(p['chip'], 'bf16'))}: loading the "
                           "weights takes longer than the math."),
    ],
))

register(Exercise(
    id="matmul-exact-critical-int8-v5e",
    title="int8 weights, exactly (chapter 4)",
    question="bf16 activations times int8 weights (bf16 math and output) on a TPU v5e with "
             "D = F = 1024: at what batch B does the time for the math equal the time to move "
             "the bytes? Use the exact byte count, not the B << D, F approximation.",
    answer=lambda p: exact_critical_batch_size(p["chip"], p["D"], p["F"], "bf16", weights="int8"),
    params={"chip": "TPU v5e", "D": 1024, "F": 1024},
    tolerance=0.02,
    hints=("Set 2BDF / peak equal to (2BD + 1*DF + 2BF) / bandwidth and solve for B.",),
    mistakes=lambda p: [
        Mistake(critical_batch_size(p["chip"], "bf16", weights="int8"),
                "That is the B << D, F approximation (ridge / 2). At D = F = 1024 the activations "
                "and the output are not small next to the weights: solve with the exact bytes."),
        Mistake(critical_batch_size(p["chip"], "bf16"),
                "That is the critical batch for bf16 weights, without the approximation's "
                "correction either: the weights here are int8, 1 byte each."),
        Mistake(exact_critical_batch_size(p["chip"], p["D"], p["F"], "bf16"),
                "That is the exact value with bf16 weights; the weights here are int8 (1 byte)."),
    ],
))

register(Exercise(
    id="matmul-critical-batch-rtx3090",
    title="A bf16 training matmul on an RTX 3090 (chapter 4)",
    question="A bf16 training matmul (FP32 accumulate) on a GeForce RTX 3090: what is its "
             "critical batch size with B much smaller than D and F?",
    answer=lambda p: critical_batch_size(p["chip"], "bf16"),
    params={"chip": "RTX 3090"},
    hints=("Use the dense bf16 figure with FP32 accumulate and the card's GDDR6X bandwidth.",),
    mistakes=lambda p: [
        Mistake(critical_batch_size(p["chip"], "fp16", accumulate="fp16"),
                "That uses the FP16-accumulate rate, twice the rate a training matmul with FP32 "
                "accumulate gets on a GeForce card."),
        Mistake(critical_intensity(p["chip"], "fp16", sparse=True, accumulate="fp16"),
                "That uses the sparse FP16-accumulate figure: 2:4 sparsity and the FP16 "
                "accumulator each double the rate; a dense bf16 matmul gets neither."),
        Mistake(268e12 / get_chip(p["chip"]).hbm_bytes_per_s,
                "That is the ~286 from a public discussion, which started from 268 TFLOP/s, "
                "close to the sparse FP16-accumulate figure, not the dense bf16 rate."),
    ],
))
