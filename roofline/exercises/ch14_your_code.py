"""Exercises of chapter 14, "Your own code on the roofline" (ids start with "own-").

Each is a slip a counter or a profile invites: multiply-adds counted as one, bytes after fusion
held against FLOPs before it, a causal mask ignored, recomputed FLOPs counted as model FLOPs,
a trace's microseconds read as milliseconds.
"""

from .. import get_chip, matmul
from ..transformer import fused_attention
from .core import Exercise, Mistake, register

# ---------------------------------------------------------------- 1 FLOP or 2 per multiply-add


def _macs(p):
    return p["B"] * p["D"] * p["F"]


register(
    Exercise(
        id="own-macs-to-flops",
        title="A counter that counts multiply-adds (chapter 14)",
        question="fvcore's FlopCountAnalysis counts a linear layer with input [8192, 4096] "
        "and weight [4096, 1024]. Work out first the number fvcore prints (it counts "
        "multiply-adds), then the FLOPs in the book's convention (a multiply and an add are "
        "2 FLOPs). Enter the book's count.",
        answer=lambda p: matmul(p["B"], p["D"], p["F"], "fp32").flops,
        kind="count",
        params={"B": 8192, "D": 4096, "F": 1024},
        hints=(
            "fvcore (like ptflops) counts one multiply-add as one operation.",
            "The book counts 2 per multiply-add: 2 B D F.",
        ),
        mistakes=lambda p: [
            Mistake(
                _macs(p),
                "That is fvcore's number: multiply-adds (MACs), one per multiply-add. The "
                "book counts a multiply and an add as 2 FLOPs.",
            ),
        ],
    )
)

# ---------------------------------------------------------------- bytes before and after fusion


def _chain_bytes(p, fused=False):
    n, size, ops = p["elements"], 4, p["ops"]
    return 2 * n * size if fused else ops * 2 * n * size


register(
    Exercise(
        id="own-unfused-bytes",
        title="Bytes of an unfused chain (chapter 14)",
        question="y = tanh(x * 3 + 1) - x on a 4096 x 4096 fp32 array runs op by op, without "
        "fusion: mul, add, tanh, sub, each reading its inputs from memory and writing its "
        "result. How many bytes move? (The scalars are negligible; x is read twice: once by "
        "mul, once by sub.)",
        answer=lambda p: _chain_bytes(p) + p["elements"] * 4,
        kind="size",
        params={"elements": 4096 * 4096, "ops": 4},
        hints=(
            "Each of the 4 ops reads one array of 4 bytes per element and writes one.",
            "sub reads two arrays (tanh's result and x): add one more array read.",
        ),
        mistakes=lambda p: [
            Mistake(
                _chain_bytes(p, fused=True),
                "That is the fused program's traffic (read x once, write y once), what XLA "
                "reports after fusion; op by op every intermediate array is written and read "
                "again.",
            ),
            Mistake(
                _chain_bytes(p),
                "Close: that counts one input per op, but sub reads two arrays (tanh's result "
                "and x).",
            ),
        ],
    )
)

# ---------------------------------------------------------------- causal masking


def _attention_rate(p, causal=True):
    cost = fused_attention(p["B"], p["T"], p["T"], p["H"], p["H"], p["d_h"], "bf16")
    return cost.flops / (2 if causal else 1) / p["seconds"]


register(
    Exercise(
        id="own-causal-rate",
        title="A causal kernel's real rate (chapter 14)",
        question="A causal attention kernel (B = 4, H = 16 heads, T = 4096, d_h = 128, bf16) "
        "takes 1.0 ms on an H100 SXM. A counter that ignores the mask reports "
        "4 B H T^2 d_h FLOPs for it. What FLOP/s did the kernel really reach?",
        answer=_attention_rate,
        kind="rate",
        params={"B": 4, "H": 16, "T": 4096, "d_h": 128, "seconds": 1.0e-3},
        hints=(
            "A causal kernel skips the scores above the diagonal: about half of them.",
            "FLOPs done = 4 B H T^2 d_h / 2; divide by 1.0 ms.",
        ),
        mistakes=lambda p: [
            Mistake(
                _attention_rate(p, causal=False),
                "That divides the counter's full count: the kernel skipped the masked half "
                "of the scores, so it did half those FLOPs.",
            ),
        ],
    )
)

# ---------------------------------------------------------------- recomputation


def _mfu(p, per_param=6):
    flops = per_param * p["params"] * p["tokens"]
    return flops / (p["seconds"] * p["chips"] * get_chip(p["chip"]).peak_flops_per_s("bf16"))


register(
    Exercise(
        id="own-recompute-mfu",
        title="Recomputed FLOPs are not model FLOPs (chapter 14)",
        question="A profiler counts every FLOP the GPUs ran in one training step of a 7e9 "
        "parameter model on 2^20 tokens: 8 per parameter per token, because the step "
        "recomputes the forward pass. The step takes 12 s on 8 H100 SXM in bf16. What is "
        "its MFU (model FLOPs: 6 per parameter per token), as a fraction?",
        answer=_mfu,
        params={
            "params": 7e9,
            "tokens": 2**20,
            "seconds": 12.0,
            "chips": 8,
            "chip": "H100 SXM",
        },
        hints=(
            "MFU counts the FLOPs the model needs, 6 per parameter per token, not those the "
            "hardware ran.",
            "MFU = 6 x 7e9 x 2^20 / (12 s x 8 x the H100's dense bf16 peak).",
        ),
        mistakes=lambda p: [
            Mistake(
                _mfu(p, per_param=8),
                "That counts the recomputed forward pass too (8 per parameter per token): "
                "that is the HFU, hardware FLOPs utilisation. MFU counts 6.",
            ),
        ],
    )
)

# ---------------------------------------------------------------- reading a profile


def _addmm_rate(p, dur_unit=1e-6):
    flops = matmul(p["B"], p["D"], p["F"], "bf16").flops
    return flops / (p["dur"] * dur_unit)


register(
    Exercise(
        id="own-trace-rate",
        title="A matmul read from a trace (chapter 14)",
        question='A PyTorch profiler trace holds an "aten::addmm" event with "Input Dims": '
        '[[4096], [8192, 4096], [4096, 4096]], "Input type" c10::BFloat16 and "dur": 800 '
        "(the trace's time unit). What FLOP/s did the matmul reach (2 FLOPs per multiply-add, "
        "the bias add left out)?",
        answer=_addmm_rate,
        kind="rate",
        params={"B": 8192, "D": 4096, "F": 4096, "dur": 800},
        hints=(
            "addmm(bias, X, W): X is [8192, 4096], W is [4096, 4096]; FLOPs 2 B D F.",
            "Chrome traces give ts and dur in microseconds.",
        ),
        mistakes=lambda p: [
            Mistake(
                _addmm_rate(p, dur_unit=1e-3),
                "That reads dur as milliseconds; the Chrome trace format counts microseconds.",
            ),
            Mistake(
                _addmm_rate(p) / 2,
                "That counts one per multiply-add; the book counts 2 FLOPs.",
            ),
        ],
    )
)
