"""Exercises of chapter 7, "A transformer layer on the roofline" (ids start with "xformer-")."""

import math

from .. import critical_intensity, estimate, get_chip
from .. import transformer as tf
from ..dtypes import bytes_per_element
from .core import Exercise, Mistake, distinct_mistakes, register


def _op(name, B, T, mode, shape=tf.LLAMA_8B):
    return next(op for op in tf.layer_costs(shape, B, T, mode) if op.name == name)


register(
    Exercise(
        id="xformer-mlp-decode-intensity",
        twice=("dtype", "multiply-add"),
        title="MLP intensity in decode (chapter 7)",
        question="Decode step of the Llama-style 8B layer (D = 4096, F = 14336, bf16) with B = 40 "
        "sequences: what is the arithmetic intensity of the MLP down matmul X[B, F] @ W[F, D], "
        "in FLOPs per byte?",
        answer=lambda p: _op("MLP down", p["B"], p["T"], "decode").intensity,
        kind="intensity",
        params={"B": 40, "T": 4096},
        hints=(
            "In decode the matmul has B rows: X[B, F] @ W[F, D]. FLOPs 2BFD; bytes 2(BF + FD + BD) "
            "in bf16.",
            "With B << D, F the bytes are mostly the weights, 2FD, so the intensity is a little "
            "under B.",
        ),
        mistakes=lambda p: [
            Mistake(
                _op("MLP down", p["B"], p["T"], "prefill").intensity,
                "That is prefill, with B*T rows; in decode each sequence brings one token.",
            ),
            Mistake(
                p["B"] / 2,
                "That divides by 4 bytes per weight; bf16 is 2 bytes, so "
                "2BFD FLOPs over about 2FD bytes is about B.",
            ),
        ],
    )
)


def _kv_layer(p, heads=None, dtype=None):
    """One layer's KV cache of one sequence: K and V, each T x heads x d_h numbers."""
    heads = tf.LLAMA_8B.n_kv_heads if heads is None else heads
    return 2 * p["T"] * heads * tf.LLAMA_8B.head_dim * bytes_per_element(dtype or p["dtype"])


register(
    Exercise(
        id="xformer-kv-cache-bytes",
        twice=("kv", "dtype"),
        title="Size of an fp8 KV cache (chapter 7)",
        question="How many bytes of KV cache does one sequence of T = 16384 tokens hold in ONE layer of the "
        "Llama-style 8B model (8 KV heads of 128) when the cache is stored in fp8?",
        answer=lambda p: _kv_layer(p),
        kind="size",
        params={"T": 16384, "dtype": "fp8"},
        hints=("K and V each store T x H_kv x d_h numbers.", "An fp8 number is 1 byte."),
        mistakes=lambda p: [
            Mistake(
                _kv_layer(p, heads=tf.LLAMA_8B.n_heads),
                "You used the 32 query heads; grouped-query attention stores only the 8 KV heads.",
            ),
            Mistake(_kv_layer(p) / 2, "That is K alone (or V alone); the cache holds both."),
            Mistake(
                _kv_layer(p, dtype="bf16"),
                "That is a bf16 cache (2 bytes a number); fp8 is 1 byte.",
            ),
            Mistake(
                _kv_layer(p) * tf.LLAMA_8B_MODEL.layers,
                f"That is the cache of all {tf.LLAMA_8B_MODEL.layers} layers; the question asks "
                "for ONE layer.",
            ),
        ],
    )
)


def _layer_critical(p):
    return tf.decode_critical_batch(tf.LLAMA_8B, p["T"], p["chip"])


register(
    Exercise(
        id="xformer-decode-regime",
        title="Which regime, with a short context? (chapter 7)",
        question="One decode step of the Llama-style 8B layer with B = 256 sequences of only T = 128 tokens "
        "each, on an RTX 4090 (bf16): is the layer as a whole 'compute'-bound or "
        "'bandwidth'-bound?",
        answer=lambda p: (
            estimate(tf.layer_total(tf.LLAMA_8B, p["B"], p["T"], "decode"), p["chip"]).bound
        ),
        kind="choice",
        choices=("compute", "bandwidth"),
        params={"B": 256, "T": 128, "chip": "RTX 4090"},
        hints=(
            "Add up the layer's FLOPs and bytes with tf.layer_total and compare its intensity with the "
            "chip's ridge point.",
            "The attention's bytes grow with the cache length T: count them for this question's "
            "T, not the chapter's, before you compare.",
        ),
        mistakes=lambda p: [
            Mistake(
                "bandwidth",
                "With a 4096-token cache the layer stays bandwidth-bound at "
                "every batch, but this cache is 32 times shorter: each sequence's "
                "attention bytes are small, and the whole layer crosses over at "
                f"B = {_layer_critical(p):.0f} on this chip, below {p['B']}.",
            )
        ],
    )
)

register(
    Exercise(
        id="xformer-weights-critical-batch",
        twice=("dtype", "sparse"),
        title="The weight matmuls' crossover on a TPU v4 (chapter 7)",
        question="Keep only the weight matmuls of a Llama-style 8B layer (Q, K, V, O projections and the MLP). "
        "In decode on a TPU v4 (bf16), at what batch B do they stop being bandwidth-bound? "
        "Use the exact bytes, not B << D.",
        answer=lambda p: tf.decode_critical_batch(
            tf.LLAMA_8B, p["T"], p["chip"], include_attention=False
        ),
        kind="number",
        params={"T": 4096, "chip": "TPU v4"},
        tolerance=0.02,
        hints=(
            "FLOPs: 2B per weight. Bytes: 2 per weight, plus the activations in and out, which grow "
            "with B. Solve t_math = t_comms for B.",
            "With N weights and S = the sum of (input + output width) over the seven matmuls: "
            "2BN / peak = (2N + 2BS) / bandwidth, so B = ridge x N / (N - ridge x S).",
        ),
        mistakes=lambda p: [
            Mistake(
                critical_intensity(p["chip"]),
                "That is the ridge point: the B << D, F approximation. The exact "
                "bytes (activations in and out) push the crossover higher.",
            )
        ],
    )
)

register(
    Exercise(
        id="xformer-qk-causal-prefill-flops",
        factor_words={
            "H": "the number of query heads",
            "d_h": "the head dimension",
            "2": "2 FLOPs per multiply-add",
        },
        title="Causal attention FLOPs in prefill (chapter 7)",
        question="In prefill with a causal mask, query i only looks at keys 1..i, so Q K^T computes T(T+1)/2 "
        "of the T^2 scores in each head. How many FLOPs does it take for ONE sequence in one "
        "layer? Write it in terms of H (query heads), T (tokens) and d_h (head dimension).",
        answer=lambda p: "H*T*(T+1)*d_h",
        kind="symbolic",
        symbols=("H", "T", "d_h"),
        hints=(
            "Each score is one dot product of length d_h: d_h multiplies and d_h adds, 2 d_h FLOPs.",
            "Multiply by the T(T+1)/2 scores and the H heads.",
        ),
        mistakes=lambda p: [
            Mistake(
                "2*H*T**2*d_h",
                "That is the unmasked count (all T^2 scores); the causal mask keeps "
                "T(T+1)/2 of them.",
            ),
            Mistake(
                "H*T**2*d_h",
                "That keeps T^2/2 scores; the diagonal (each query with its own key) "
                "counts too: T(T+1)/2.",
            ),
            Mistake(
                "H*T*(T+1)*d_h/2", "A multiply and an add are 2 FLOPs per term of the dot product."
            ),
            Mistake(
                "2*H*T*d_h", "That is decode (one new query per sequence); prefill has T queries."
            ),
        ],
    )
)


def _free(p):
    """Bytes left on the chip for KV cache once the whole model's weights are in."""
    return get_chip(p["chip"]).hbm_bytes - tf.weight_bytes(tf.LLAMA_8B_MODEL)


register(
    Exercise(
        id="xformer-max-batch",
        twice=("kv", "dtype"),
        byte_units=True,
        title="The memory wall on another chip (chapter 7)",
        question="Serve the whole Llama-style 8B model (32 layers, bf16 weights and KV cache) on one H200 "
        "(141 GB) with sequences of T = 8192 tokens. How many sequences can decode together, "
        "at most, before their KV cache no longer fits next to the weights?",
        answer=lambda p: tf.max_batch(tf.LLAMA_8B_MODEL, p["T"], p["chip"]),
        kind="number",
        params={"T": 8192, "chip": "H200"},
        tolerance=0.005,
        hints=(
            "Free memory = the chip's memory minus the weights (2 bytes per weight, embedding and "
            "output head included).",
            "One sequence's cache: K and V, each T x H_kv x d_h numbers of 2 bytes, in every one of "
            "the 32 layers. Round down: a sequence fits whole or not at all.",
        ),
        mistakes=lambda p: [
            Mistake(
                math.floor(
                    get_chip(p["chip"]).hbm_bytes / tf.kv_cache_bytes(tf.LLAMA_8B_MODEL, p["T"])
                ),
                "The weights take memory too: subtract their bytes before dividing by the cache "
                "of one sequence.",
            ),
            Mistake(
                math.floor(_free(p) / (tf.kv_cache_bytes(tf.LLAMA_8B_MODEL, p["T"]) / 2)),
                "That counts half the cache per sequence: K alone (or V alone), or the chapter's "
                "T = 4096 instead of 8192. The cache holds both K and V for all T tokens.",
            ),
            Mistake(
                math.floor(_free(p) / (tf.kv_cache_bytes(tf.LLAMA_8B_MODEL, p["T"]) / 32)),
                "That is one layer's cache per sequence; every one of the 32 layers keeps its own.",
            ),
            Mistake(
                math.floor(_free(p) / (tf.kv_cache_bytes(tf.LLAMA_8B_MODEL, p["T"]) * 4)),
                "You used the 32 query heads; grouped-query attention caches only the 8 KV heads.",
            ),
            *_rounding_mistakes(p),
        ],
    )
)


def _rounding_mistakes(p) -> list:
    """The batch rounded up, or not rounded: a sequence whose cache does not fit whole
    cannot decode, so the answer is the free memory over one sequence's cache, rounded down."""
    exact = _free(p) / tf.kv_cache_bytes(tf.LLAMA_8B_MODEL, p["T"])
    message = (
        f"Round down: {exact:.4g} sequences' caches fit in the free memory, and a sequence "
        "fits whole or not at all, so the batch that fits is the whole number below."
    )
    wrong = [math.floor(exact) + 1, exact]
    return distinct_mistakes(math.floor(exact), [Mistake(w, message) for w in wrong], 0.005)
