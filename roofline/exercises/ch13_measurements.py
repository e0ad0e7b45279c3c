"""Exercises of chapter 13, "Held against measurements" (ids start with "held-")."""

from .. import get_chip, mfu
from ..collectives import collective_time
from ..models import get_model
from ..serving import serving_estimate
from .core import Exercise, Mistake, register


def _mfu(p, attention=True, dtype="bf16"):
    return mfu(
        p["model"], p["tokens_per_s"], p["chip"], p["n_chips"], p["seq_len"], dtype, attention
    )


register(
    Exercise(
        id="held-mfu-llama3-70b",
        twice=("sparse",),
        title="MFU of a training run (chapter 13)",
        question="A run trains Llama 3 70B on sequences of 8192 tokens over 1024 H100 SXM "
        "(bf16) at 1.2 million tokens/s. What is its MFU under the PaLM paper's convention "
        "(6 FLOPs per matmul weight per token plus 12 x layers x attention width x sequence "
        "length), as a fraction?",
        answer=lambda p: _mfu(p),
        params={
            "model": "Llama 3 70B",
            "chip": "H100 SXM",
            "n_chips": 1024,
            "seq_len": 8192,
            "tokens_per_s": 1.2e6,
        },
        hints=(
            (
                "FLOPs per token: 6 x the matmul weights (every layer and the output head) + "
                "12 L (H d_h) T."
            ),
            "MFU = FLOPs per token x tokens/s / (chips x dense bf16 peak).",
        ),
        mistakes=lambda p: [
            Mistake(_mfu(p, attention=False), "That leaves out the attention term 12 L H d_h T."),
            Mistake(_mfu(p, dtype="fp8"), "That divides by the fp8 peak; the run is in bf16."),
        ],
    )
)


def _nvls_bus(p, in_switch=True):
    link = get_chip(p["chip"]).interconnect
    n, V = p["n"], p["nbytes"]
    t = collective_time(
        "all-reduce",
        V,
        n,
        link.one_way_bytes_per_s,
        "switch",
        links=link.count,
        in_switch_reduction=in_switch,
    )
    return V / t * 2 * (n - 1) / n


register(
    Exercise(
        id="held-nvls-bus-bound",
        twice=("bidirectional",),
        title="The bus-bandwidth bound with in-switch reduction (chapter 13)",
        question="nccl-tests reports bus bandwidth = (bytes / time) x 2(n-1)/n for an "
        "all-reduce. On 8 B200 GPUs joined by NVSwitch (18 NVLink 5 links of 50 GB/s one way "
        "each) with in-switch reduction (NVLS), what bus bandwidth can an 8 GB all-reduce "
        "reach at most?",
        answer=lambda p: _nvls_bus(p),
        kind="bandwidth",
        params={"chip": "B200", "n": 8, "nbytes": 8e9},
        hints=(
            (
                "With in-switch reduction each GPU sends its whole partial sum and its 1/n slice "
                "of the sum into the switch, and receives as much: time = (n+1)/n V / (18 x 50 "
                "GB/s)."
            ),
            "Then multiply V / time by 2(n-1)/n = 14/8.",
        ),
        mistakes=lambda p: [
            Mistake(
                _nvls_bus(p, in_switch=False),
                "That is the bound without in-switch reduction (a ring: bus = link rate).",
            ),
        ],
    )
)


def _decode_ratio(p):
    bound = serving_estimate(
        p["model"], p["chip"], batch=1, context_len=p["context"], dtype=p["dtype"]
    )
    return bound.t_decode_step / p["measured_s"]


def _decode_ratio_reading_the_table(p):
    """The slip: the bound if the step also read the input embedding table (vocab x D), i.e.
    every weight (2 bytes each in bf16) plus the batch-1 cache of `context` tokens, over the
    chip's HBM bandwidth, against the measured time."""
    m = get_model(p["model"])
    read = m.weight_bytes(p["dtype"]) + p["context"] * m.kv_cache_bytes_per_token(p["dtype"])
    return read / get_chip(p["chip"]).hbm_bytes_per_s / p["measured_s"]


register(
    Exercise(
        id="held-decode-fraction",
        byte_units=True,
        title="How close is a batch-1 decode? (chapter 13)",
        question="A server decodes Llama 3 8B in bf16 on one H200 at batch 1, with a 128-token "
        "context, and measures 9.0 ms per output token. What fraction of the roofline's "
        "bound is that (bound time / measured time, at most 1)? The input embedding table is "
        "looked up (one row per token), not read.",
        answer=_decode_ratio,
        params={
            "model": "Llama 3 8B",
            "chip": "H200",
            "context": 128,
            "dtype": "bf16",
            "measured_s": 9.0e-3,
        },
        hints=(
            (
                "At batch 1 a decode step reads every weight once: about 2 bytes x 7.5 billion "
                "(the input embedding table is a lookup, not a read)."
            ),
            "Divide by the H200's 4.8 TB/s for the bound, then by 9.0 ms.",
        ),
        mistakes=lambda p: [
            Mistake(
                _decode_ratio(p)
                * get_chip("H200").hbm_bytes_per_s
                / get_chip("H100 SXM").hbm_bytes_per_s,
                "That uses the H100's 3.35 TB/s; the H200 has 4.8 TB/s.",
            ),
            Mistake(
                _decode_ratio_reading_the_table(p),
                "That reads the input embedding table (vocab x D) too: a decode step only "
                "looks up one row of it per token, so leave it out of the bytes read.",
            ),
        ],
    )
)


def _fraction(p, dtype, sparse=False):
    return p["measured"] / get_chip(p["chip"]).peak_flops_per_s(dtype, sparse=sparse)


register(
    Exercise(
        id="held-fp8-denominator",
        twice=("sparse",),
        title="A kernel above the roof? (chapter 13)",
        question="A post reports an fp8 matmul on an H100 SXM at 1,450 TFLOP/s and calls it "
        "'147 % of peak'. What fraction of the right peak (dense fp8) did it reach?",
        answer=lambda p: _fraction(p, "fp8"),
        params={"chip": "H100 SXM", "measured": 1450e12},
        hints=(
            "The post divided by the bf16 peak (989.5 TFLOP/s).",
            "An fp8 matmul runs on fp8 tensor cores: divide by the dense fp8 peak.",
        ),
        mistakes=lambda p: [
            Mistake(_fraction(p, "bf16"), "That is the bf16 peak, the post's own error."),
            Mistake(
                _fraction(p, "fp8", sparse=True),
                "That is the sparse (2:4) fp8 peak; a dense matmul gets the dense one.",
            ),
        ],
    )
)
