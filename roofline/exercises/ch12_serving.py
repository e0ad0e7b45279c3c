"""Exercises of chapter 12, "Serving a model" (ids start with "serve-")."""

import math

from ..catalog import get_chip
from ..models import get_model
from ..serving import compute_bound_batch, expected_distinct_experts, serving_estimate
from .core import Exercise, Mistake, register


def _kv_token(p, heads=None, dtype_bytes=None):
    m = get_model(p["model"])
    heads = m.kv_heads if heads is None else heads
    return 2 * m.layers * heads * m.head_dim * (dtype_bytes or p["bytes"])


register(
    Exercise(
        id="serve-kv-per-token",
        twice=("kv", "dtype"),
        title="KV cache per token of a mixture of experts (chapter 12)",
        question="Mixtral 8x7B has 32 layers, 32 query heads and 8 KV heads of 128. How many "
        "bytes of KV cache does one token of context hold, all layers together, in an fp8 "
        "cache?",
        answer=lambda p: _kv_token(p),
        kind="size",
        params={"model": "Mixtral 8x7B", "bytes": 1},
        hints=(
            "K and V: 2 x layers x KV heads x head dimension numbers per token.",
            "The experts change the MLP, not attention; fp8 is 1 byte.",
        ),
        mistakes=lambda p: [
            Mistake(
                _kv_token(p, heads=32), "That uses the 32 query heads; only 8 KV heads are stored."
            ),
            Mistake(_kv_token(p, dtype_bytes=2), "That is a bf16 cache; fp8 is 1 byte."),
            Mistake(_kv_token(p) / 2, "That is K alone; the cache holds K and V."),
        ],
    )
)


def _max_batch(p, reserve=0.1):
    return serving_estimate(
        p["model"], p["chip"], batch=1, context_len=p["context"], reserve_fraction=reserve
    ).max_batch


register(
    Exercise(
        id="serve-max-batch-h200",
        byte_units=True,
        rounding=(
            "down",
            "because a sequence's cache fits whole or not at all: the whole number below the quotient is the most that fit.",
        ),
        title="The memory wall on an H200 (chapter 12)",
        question="Llama 3 8B in bf16 (16.06 GB of weights, 131,072 bytes of KV cache per token) "
        "on one H200 (141 GB), with 10 % of the memory kept in reserve: how many sequences of "
        "8192 tokens fit at most?",
        answer=_max_batch,
        params={"model": "Llama 3 8B", "chip": "H200", "context": 8192},
        tolerance=0.0,
        hints=(
            "Free memory: 141 GB - 14.1 GB reserve - the weights.",
            "One sequence's cache: 8192 x 131,072 bytes; round down.",
        ),
        mistakes=lambda p: [
            Mistake(_max_batch(p, reserve=0.0), "That keeps no reserve; the question keeps 10 %."),
        ],
    )
)


def _compute_turn(p):
    """Smallest batch at which the decode step is compute-bound (context given)."""
    return compute_bound_batch(p["model"], p["chip"], p["context"])


def _turn_reading_the_table(p):
    """The slip: the turn if the step also read the input embedding table (vocab x D), i.e.
    every weight in bf16 (2 bytes each) against 2 FLOPs per matmul weight per sequence plus
    each sequence's own cache of `context` tokens, rounded up to a whole batch."""
    m, chip = get_model(p["model"]), get_chip(p["chip"])
    peak, bw = chip.peak_flops_per_s("bf16"), chip.hbm_bytes_per_s
    per_sequence_s = 2 * m.matmul_params / peak - p["context"] * _kv_token(p, dtype_bytes=2) / bw
    return math.ceil(2 * m.params / bw / per_sequence_s)


register(
    Exercise(
        id="serve-compute-turn-h200",
        twice=("dtype",),
        title="When decode turns compute-bound (chapter 12)",
        question="Decoding Llama 3 8B in bf16 on one H200 (989.5 TFLOP/s, 4.8 TB/s) with very "
        "short contexts (16 tokens): from which batch size on is a decode step compute-bound, "
        "ignoring whether it fits?",
        answer=_compute_turn,
        params={"model": "Llama 3 8B", "chip": "H200", "context": 16},
        tolerance=0.02,
        hints=(
            "A step does 2 FLOPs per matmul weight per sequence and reads each weight (2 bytes) "
            "once, except the input embedding table, of which it looks up one row per token.",
            "Math time = weight time when B = peak / bandwidth, near the chip's ridge point.",
        ),
        mistakes=lambda p: [
            Mistake(2 * _compute_turn(p), "That is the fp8 ridge; the math runs in bf16."),
            Mistake(
                _turn_reading_the_table(p),
                "That reads the input embedding table (vocab x D) too: a decode step only "
                "looks up one row of it per token, so leave it out of the bytes read.",
            ),
        ],
    )
)


def _distinct(p):
    return expected_distinct_experts(p["E"], p["k"], p["tokens"])


register(
    Exercise(
        id="serve-moe-experts-read",
        title="Experts a small batch reads (chapter 12)",
        question="A mixture-of-experts layer has 64 experts and routes each token to 4 of them, "
        "uniformly at random. How many distinct experts does a decode step of 8 tokens read in "
        "that layer, on average?",
        answer=_distinct,
        params={"E": 64, "k": 4, "tokens": 8},
        hints=(
            "One expert escapes one token with probability 1 - 4/64.",
            "It escapes all 8 with (1 - 4/64)^8; the rest of the 64 are read.",
        ),
        mistakes=lambda p: [
            Mistake(p["k"] * p["tokens"], "That assumes no two tokens share an expert."),
            Mistake(float(p["E"]), "Only a batch of many tokens reads every expert."),
        ],
    )
)


def _ttft(p):
    est = serving_estimate(
        p["model"],
        p["chip"],
        batch=1,
        context_len=p["prompt"],
        prompt_len=p["prompt"],
        dtype=p["dtype"],
    )
    return est.ttft_s


register(
    Exercise(
        id="serve-ttft-fp8",
        twice=("sparse", "multiply-add"),
        title="Time to first token (chapter 12)",
        question="Lower bound on the time to first token of a 4096-token prompt for Llama 3 8B "
        "in fp8 on one H100 SXM (1979 TFLOP/s fp8 dense), counting the matmuls (2 FLOPs per "
        "weight per token, the output head included) and causal attention?",
        answer=_ttft,
        kind="time",
        params={"model": "Llama 3 8B", "chip": "H100 SXM", "prompt": 4096, "dtype": "fp8"},
        hints=(
            "Prefill is compute-bound: 2 x 7.5e9 FLOPs per token x 4096 tokens.",
            "Causal attention adds 2 x layers x (H d_h) x T^2 = 2 x 32 x 4096 x 4096^2 FLOPs.",
        ),
        mistakes=lambda p: [
            Mistake(2 * _ttft(p), "That divides by the bf16 peak; the model runs in fp8."),
        ],
    )
)
