"""Exercises of chapter 7, "A transformer layer on the roofline" (ids start with "xformer-")."""

import math

from .. import critical_intensity, estimate, get_chip
from .. import transformer as tf
from ..dtypes import bytes_per_element
from .core import Exercise, Mistake, register


def _op(name, B, T, mode, shape=tf.LLAMA_8B):
    return next(op for op in tf.layer_costs(shape, B, T, mode) if op.name == name)


register(Exercise(
    id="xformer-mlp-decode-intensity",
    title="MLP intensity in decode (chapter 7)",
    question="Decode step of the Llama-style 8B layer with B = 16 sequences (bf16): what is the "
             "arithmetic intensity of the MLP up matmul, in FLOPs per byte?",
    answer=lambda p: _op("MLP up", p["B"], p["T"], "decode").intensity,
    kind="intensity",
    params={"B": 16, "T": 4096},
    hints=("In decode the matmul has B rows: X[B, D] @ W[D, F]. With B << D, F the bytes are "
           "mostly the weights, 2DF, and the FLOPs are 2BDF.",),
    mistakes=lambda p: [Mistake(_op("MLP up", p["B"], p["T"], "prefill").intensity,
                                "That is prefill, with B*T rows; in decode each sequence brings one token.")],
))

register(Exercise(
    id="xformer-kv-cache-bytes",
    title="Size of the KV cache (chapter 7)",
    question="How many bytes of KV cache does one sequence of T = 4096 tokens hold in ONE layer of the "
             "Llama-style 8B model (8 KV heads of 128, bf16)?",
    answer=lambda p: 2 * p["T"] * tf.LLAMA_8B.n_kv_heads * tf.LLAMA_8B.head_dim * bytes_per_element("bf16"),
    kind="size",
    params={"T": 4096},
    hints=("K and V each store T x H_kv x d_h numbers of 2 bytes.",),
    mistakes=lambda p: [
        Mistake(2 * p["T"] * tf.LLAMA_8B.n_heads * tf.LLAMA_8B.head_dim * 2,
                "You used the 32 query heads; grouped-query attention stores only the 8 KV heads."),
        Mistake(p["T"] * tf.LLAMA_8B.n_kv_heads * tf.LLAMA_8B.head_dim * 2,
                "That is K alone (or V alone); the cache holds both."),
    ],
))

register(Exercise(
    id="xformer-decode-regime",
    title="Which regime? (chapter 7)",
    question="One decode step of the Llama-style 8B layer with B = 64 sequences of T = 4096 tokens on an "
             "H100 SXM: is the layer as a whole 'compute'-bound or 'bandwidth'-bound?",
    answer=lambda p: estimate(tf.layer_total(tf.LLAMA_8B, p["B"], p["T"], "decode"), p["chip"]).bound,
    kind="choice",
    choices=("compute", "bandwidth"),
    params={"B": 64, "T": 4096, "chip": "H100 SXM"},
    hints=("Add up the layer's FLOPs and bytes; the KV cache is read once per sequence.",),
    mistakes=lambda p: [Mistake("compute", "The weight matmuls are getting closer to the ridge, but "
                                "every sequence reads its own KV cache with only about H/H_kv FLOPs "
                                "per byte. The layer's intensity stays far below the ridge.")],
))

register(Exercise(
    id="xformer-weights-critical-batch",
    title="The weight matmuls' crossover (chapter 7)",
    question="Keep only the weight matmuls of a Llama-style 8B layer (Q, K, V, O projections and the MLP). "
             "In decode on an H100 SXM (bf16), at what batch B do they stop being bandwidth-bound? "
             "Use the exact bytes, not B << D.",
    answer=lambda p: tf.decode_critical_batch(tf.LLAMA_8B, p["T"], p["chip"], include_attention=False),
    kind="number",
    params={"T": 4096, "chip": "H100 SXM"},
    tolerance=0.02,
    hints=("FLOPs: 2B per weight. Bytes: 2 per weight, plus the activations in and out, which grow "
           "with B. Solve t_math = t_comms for B.",),
    mistakes=lambda p: [Mistake(critical_intensity(p["chip"]),
                                "That is the ridge point: the B << D, F approximation. The exact "
                                "bytes (activations in and out) push the crossover higher.")],
))

register(Exercise(
    id="xformer-qk-decode-flops",
    title="Attention FLOPs in decode (chapter 7)",
    question="In decode, how many FLOPs does Q K^T take for ONE sequence in one layer? Write it in terms of "
             "H (query heads), T (tokens in the cache) and d_h (head dimension).",
    answer=lambda p: "2*H*T*d_h",
    kind="symbolic",
    symbols=("H", "T", "d_h"),
    hints=("One query vector of d_h per head, dotted with each of T keys: d_h multiplies and adds.",),
    mistakes=lambda p: [
        Mistake("H*T*d_h", "A multiply and an add are 2 FLOPs."),
        Mistake("2*H*T**2*d_h", "That is prefill (T queries); in decode there is one new query per sequence."),
    ],
))

def _free(p):
    """Bytes left on the chip for KV cache once the whole model's weights are in."""
    return get_chip(p["chip"]).hbm_bytes - tf.weight_bytes(tf.LLAMA_8B_MODEL)


register(Exercise(
    id="xformer-max-batch",
    question="Serve the whole Llama-style 8B model (32 layers, bf16 weights and KV cache) on one H200 "
             "(141 GB) with sequences of T = 8192 tokens. How many sequences can decode together, "
             "at most, before their KV cache no longer fits next to the weights?",
    answer=lambda p: tf.max_batch(tf.LLAMA_8B_MODEL, p["T"], p["chip"]),
    kind="number",
    params={"T": 8192, "chip": "H200"},
    tolerance=0.005,
    hints=("Free memory = the chip's memory minus the weights (2 bytes per weight, embedding and "
           "output head included).",
           "One sequence's cache: K and V, each T x H_kv x d_h numbers of 2 bytes, in every one of "
           "the 32 layers. Round down: a sequence fits whole or not at all."),
    mistakes=lambda p: [
        Mistake(math.floor(get_chip(p["chip"]).hbm_bytes / tf.kv_cache_bytes(tf.LLAMA_8B_MODEL, p["T"])),
                "The weights take memory too: subtract their bytes before dividing by the cache "
                "of one sequence."),
        Mistake(math.floor(_free(p) / (tf.kv_cache_bytes(tf.LLAMA_8B_MODEL, p["T"]) / 2)),
                "That counts half the cache per sequence: K alone (or V alone), or the chapter's "
                "T = 4096 instead of 8192. The cache holds both K and V for all T tokens."),
        Mistake(math.floor(_free(p) / (tf.kv_cache_bytes(tf.LLAMA_8B_MODEL, p["T"]) / 32)),
                "That is one layer's cache per sequence; every one of the 32 layers keeps its own."),
        Mistake(math.floor(_free(p) / (tf.kv_cache_bytes(tf.LLAMA_8B_MODEL, p["T"]) * 4)),
                "You used the 32 query heads; grouped-query attention caches only the 8 KV heads."),
    ],
))
