"""Cost model of one transformer layer: its matmuls and attention, as roofline operations.

Written once, on top of `roofline.costs`, so it works on plain numbers, numpy arrays
and sympy symbols alike::

    >>> import roofline.transformer as tf
    >>> ops = tf.layer_costs(tf.LLAMA_8B, B=1, T=4096, mode="decode")
    >>> [op.name for op in ops][:3]
    ['Q projection', 'K projection', 'V projection']

Sizes (the book's notation, extended for this chapter):

- ``B``: sequences in the batch. In *prefill* (and training) every sequence brings
  ``T`` new tokens, so the matmuls have ``B*T`` rows; in *decode* every sequence
  brings one new token, so they have ``B`` rows.
- ``T``: sequence length, the number of tokens of context the attention looks at
  (the length of the KV cache in decode).
- ``D`` (d_model), ``F`` (d_ff), ``H`` query heads, ``H_kv`` key/value heads, ``d_h``
  head dimension: the `TransformerShape`.

Bytes follow `roofline.costs`: each operand read once and each result written once.
Attention is counted as two separate operations, scores = Q K^T and out = A V, whose
[T_q, T] score matrix goes to memory and back; ``fused_attention=True`` counts one
fused kernel (as FlashAttention) that keeps the scores on chip. Causal masking is
ignored (it would halve the attention FLOPs in prefill), and so are softmax,
normalisation and the residual adds, which are small next to the matmuls.

A whole model is a `roofline.ModelConfig` (the one model type: `model_from_layer` builds one
from a `TransformerShape` repeated ``n_layers`` times, with the token embedding and the
output head; `LLAMA_8B_MODEL` is Llama 3 8B). Memory capacity and serving: `weight_bytes`
(every parameter, norm scales included), `kv_cache_bytes`, `max_batch` (the most sequences
whose KV cache fits next to the weights), and `step_time`, the time of one decode step
(per-token latency, tokens/s) or of a prefill (time to first token). Each takes a
ModelConfig or a catalog name whose layers are all one dense gated layer (`as_model_shape`;
`layer_shape` gives that layer as a `TransformerShape`).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace

from .catalog import get_chip
from .costs import Cost, matmul
from .dtypes import bytes_per_element, canonical_dtype
from .estimate import Estimate, critical_intensity, estimate
from .validate import check_size, is_symbolic

__all__ = [
    "TransformerShape",
    "LLAMA_8B",
    "layer_costs",
    "layer_total",
    "attention_scores",
    "attention_values",
    "fused_attention",
    "decode_critical_batch",
    "MODES",
    "ModelShape",
    "LLAMA_8B_MODEL",
    "weight_bytes",
    "kv_cache_bytes",
    "max_batch",
    "model_costs",
    "StepTime",
    "step_time",
    "time_to_first_token",
    "as_model_shape",
    "model_from_layer",
    "layer_shape",
]

MODES = ("prefill", "decode")


@dataclass(frozen=True)
class TransformerShape:
    """The sizes of one decoder layer with grouped-query attention and a gated MLP."""

    name: str
    d_model: int
    d_ff: int
    n_heads: int
    n_kv_heads: int
    head_dim: int

    def __post_init__(self):
        for field_name in ("d_model", "d_ff", "n_heads", "n_kv_heads", "head_dim"):
            check_size(field_name, getattr(self, field_name))
        if not is_symbolic(self.n_heads) and not is_symbolic(self.n_kv_heads):
            if self.n_heads % self.n_kv_heads:
                raise ValueError(
                    f"{self.name}: n_heads ({self.n_heads}) must be a multiple of "
                    f"n_kv_heads ({self.n_kv_heads}); each KV head serves a group"
                )

    @property
    def weights_per_layer(self):
        """Weight elements of one layer: Q, K, V, O projections and the three MLP matrices."""
        D, F, H, Hkv, dh = self.d_model, self.d_ff, self.n_heads, self.n_kv_heads, self.head_dim
        return D * H * dh + 2 * D * Hkv * dh + H * dh * D + 3 * D * F


#: A Llama-style 8B layer (Llama 3 8B sizes): D = 4096, F = 14336, 32 heads of 128, 8 KV heads.
LLAMA_8B = TransformerShape(
    "Llama-style 8B", d_model=4096, d_ff=14336, n_heads=32, n_kv_heads=8, head_dim=128
)


def _check_attention(B, T_q, T, H, H_kv, d_h):
    for name, value in (("B", B), ("T_q", T_q), ("T", T), ("H", H), ("H_kv", H_kv), ("d_h", d_h)):
        check_size(name, value)


def attention_scores(B, T_q, T, H, H_kv, d_h, dtype="bf16") -> Cost:
    """Scores S = Q K^T for B sequences: T_q queries against T keys in each of H heads.

    FLOPs 2*B*H*T_q*T*d_h. Bytes: read Q [B, T_q, H, d_h] and K [B, T, H_kv, d_h]
    (grouped-query attention: H_kv <= H key heads), write S [B, H, T_q, T].
    """
    _check_attention(B, T_q, T, H, H_kv, d_h)
    e = bytes_per_element(dtype)
    flops = 2 * B * H * T_q * T * d_h
    moved = e * (B * T_q * H * d_h + B * T * H_kv * d_h + B * H * T_q * T)
    return Cost("attention Q K^T", flops, moved, canonical_dtype(dtype))


def attention_values(B, T_q, T, H, H_kv, d_h, dtype="bf16") -> Cost:
    """Output O = A V: the [T_q, T] attention weights times V [T, d_h], per head.

    FLOPs 2*B*H*T_q*T*d_h. Bytes: read A [B, H, T_q, T] and V [B, T, H_kv, d_h],
    write O [B, T_q, H, d_h].
    """
    _check_attention(B, T_q, T, H, H_kv, d_h)
    e = bytes_per_element(dtype)
    flops = 2 * B * H * T_q * T * d_h
    moved = e * (B * H * T_q * T + B * T * H_kv * d_h + B * T_q * H * d_h)
    return Cost("attention A V", flops, moved, canonical_dtype(dtype))


def fused_attention(B, T_q, T, H, H_kv, d_h, dtype="bf16") -> Cost:
    """Q K^T, softmax and A V in one kernel: the scores never leave the chip.

    FLOPs 4*B*H*T_q*T*d_h; bytes: read Q, K, V, write O.
    """
    _check_attention(B, T_q, T, H, H_kv, d_h)
    e = bytes_per_element(dtype)
    flops = 4 * B * H * T_q * T * d_h
    moved = e * (2 * B * T_q * H * d_h + 2 * B * T * H_kv * d_h)
    return Cost("attention (fused)", flops, moved, canonical_dtype(dtype))


def _rows_and_queries(B, T, mode):
    if mode not in MODES:
        raise ValueError(
            f"mode must be 'prefill' (all T tokens at once, as in training) or "
            f"'decode' (one new token per sequence, T tokens in the KV cache), got {mode!r}"
        )
    T_q = T if mode == "prefill" else 1
    return B * T_q, T_q


def layer_costs(
    shape: TransformerShape, B, T, mode="prefill", dtype="bf16", fused_attention_kernel=False
) -> list[Cost]:
    """The operations of one layer, in order, each a `Cost` (per chip, nothing sharded).

    Projections and MLP are `roofline.matmul` with B*T rows (prefill) or B rows
    (decode); attention reads T keys and values per sequence (the KV cache in decode).
    """
    if not isinstance(shape, TransformerShape):
        raise TypeError(
            f"shape must be a TransformerShape such as roofline.transformer.LLAMA_8B, got {shape!r}"
        )
    check_size("B", B)
    check_size("T", T)
    rows, T_q = _rows_and_queries(B, T, mode)
    D, F = shape.d_model, shape.d_ff
    H, H_kv, d_h = shape.n_heads, shape.n_kv_heads, shape.head_dim

    def named(cost, name):
        return Cost(name, cost.flops, cost.bytes, cost.dtype)

    ops = [
        named(matmul(rows, D, H * d_h, dtype), "Q projection"),
        named(matmul(rows, D, H_kv * d_h, dtype), "K projection"),
        named(matmul(rows, D, H_kv * d_h, dtype), "V projection"),
    ]
    if fused_attention_kernel:
        ops.append(fused_attention(B, T_q, T, H, H_kv, d_h, dtype))
    else:
        ops.append(attention_scores(B, T_q, T, H, H_kv, d_h, dtype))
        ops.append(attention_values(B, T_q, T, H, H_kv, d_h, dtype))
    ops += [
        named(matmul(rows, H * d_h, D, dtype), "O projection"),
        named(matmul(rows, D, F, dtype), "MLP up"),
        named(matmul(rows, D, F, dtype), "MLP gate"),
        named(matmul(rows, F, D, dtype), "MLP down"),
    ]
    return ops


def layer_total(
    shape: TransformerShape, B, T, mode="prefill", dtype="bf16", fused_attention_kernel=False
) -> Cost:
    """All of a layer's operations added up: total FLOPs and total bytes."""
    ops = layer_costs(shape, B, T, mode, dtype, fused_attention_kernel)
    flops = sum(op.flops for op in ops)
    moved = sum(op.bytes for op in ops)
    return Cost(f"{shape.name} layer ({mode})", flops, moved, canonical_dtype(dtype))


def decode_critical_batch(
    shape: TransformerShape,
    T,
    chip,
    dtype="bf16",
    include_attention=True,
    fused_attention_kernel=False,
):
    """The batch B at which one decode step of a layer stops being bandwidth-bound.

    FLOPs are a*B and bytes c + b*B (c: the weights, read once whatever B is; b: what
    each sequence adds, mostly its KV cache). t_math = t_comms gives
    B = ridge * c / (a - ridge * b). When a <= ridge * b every extra sequence brings
    more bytes than the chip can hide behind its FLOPs: bandwidth-bound at every
    batch size, and this returns infinity. `include_attention=False` keeps only the
    weight matmuls (projections and MLP).
    """
    check_size("T", T)
    if is_symbolic(T):
        raise TypeError(
            "decode_critical_batch needs a number for T; use layer_total with "
            "sympy symbols to derive the formula"
        )
    if include_attention:
        ops = [layer_total(shape, b, T, "decode", dtype, fused_attention_kernel) for b in (1, 2)]
    else:
        ops = [
            Cost(
                "matmuls",
                sum(
                    o.flops
                    for o in layer_costs(shape, b, T, "decode", dtype)
                    if "attention" not in o.name
                ),
                sum(
                    o.bytes
                    for o in layer_costs(shape, b, T, "decode", dtype)
                    if "attention" not in o.name
                ),
                dtype,
            )
            for b in (1, 2)
        ]
    a = ops[1].flops - ops[0].flops  # FLOPs per sequence
    b = ops[1].bytes - ops[0].bytes  # bytes per sequence
    c = ops[0].bytes - b  # bytes whatever the batch (the weights)
    ridge = critical_intensity(chip, dtype)
    denominator = a - ridge * b
    if denominator <= 0:
        return float("inf")
    return ridge * c / denominator


# ---------------------------------------------------------------- a whole model: memory and serving


def model_from_layer(
    name: str,
    layer: TransformerShape,
    n_layers: int,
    vocab_size: int,
    tied_embeddings: bool = False,
    source: str = "",
):
    """A whole model made of `n_layers` copies of `layer`, a token embedding and an output
    head: a `roofline.ModelConfig` (the one model type; its `params` count every weight, the
    norm scales included: 2 D per layer + a final D).

    The embedding is a [vocab_size, D] table; the output head ("LM head") is another
    [D, vocab_size] matrix unless `tied_embeddings` (then the two share one table).
    """
    from .hardware import Source
    from .models import ModelConfig

    if not isinstance(layer, TransformerShape):
        raise TypeError(
            f"{name}: layer must be a TransformerShape such as "
            f"roofline.transformer.LLAMA_8B, got {layer!r}"
        )
    check_size("n_layers", n_layers)
    check_size("vocab_size", vocab_size)
    return ModelConfig(
        n_layers,
        layer.d_model,
        layer.n_heads,
        layer.d_ff,
        vocab_size,
        kv_heads=layer.n_kv_heads,
        head_dim=layer.head_dim,
        gated_mlp=True,
        tied_embeddings=tied_embeddings,
        name=name,
        source=Source(source, "") if source else None,
    )


#: The former whole-model type's constructor, kept for old code: it now builds a ModelConfig.
ModelShape = model_from_layer

#: The whole Llama-style 8B model (Llama 3 8B sizes): 32 layers of `LLAMA_8B`, a 128,256-token
#: vocabulary, separate embedding and output matrices: 8,030,261,248 parameters, as
#: `get_model("Llama 3 8B")` (8,029,995,008 matmul and table weights + 266,240 norm scales).
LLAMA_8B_MODEL = model_from_layer(
    "Llama-style 8B",
    LLAMA_8B,
    n_layers=32,
    vocab_size=128256,
    tied_embeddings=False,
    source="https://huggingface.co/meta-llama/Meta-Llama-3-8B/blob/main/config.json: "
    "hidden_size 4096, intermediate_size 14336, num_hidden_layers 32, num_attention_heads 32, "
    "num_key_value_heads 8, vocab_size 128256, tie_word_embeddings false",
)


def as_model_shape(model):
    """The `roofline.ModelConfig` of a ModelConfig or a catalog model's name, checked to be
    a model whose layers are all alike in the way `TransformerShape` describes (grouped-,
    multi-query or multi-head attention, a gated MLP, no experts, no sliding window, no
    latent attention); otherwise the error says which block differs and points to
    roofline.serving, whose blocks count every kind. (The name is the former ModelShape's.)
    """
    from .models import ModelConfig, get_model

    if isinstance(model, (str, ModelConfig)):
        m = get_model(model)
        differs = [
            words
            for bad, words in (
                (m.is_moe, "a mixture of experts"),
                (not m.gated_mlp, "an ungated MLP"),
                (m.sliding_window is not None, "sliding-window layers"),
                (m.kv_lora_rank is not None, "latent attention"),
            )
            if bad
        ]
        if differs:
            raise ValueError(
                f"{m.label} has {' and '.join(differs)}: roofline.transformer's layer is one "
                "dense gated layer; use roofline.serving_estimate(model, ...) for this model"
            )
        return m
    raise TypeError(
        f"model must be a roofline.ModelConfig such as roofline.transformer.LLAMA_8B_MODEL or "
        f"a catalog name (a whole model, not one layer), got {model!r}"
    )


def layer_shape(model) -> TransformerShape:
    """One layer of a whole model (a ModelConfig or a catalog name) as a `TransformerShape`,
    for `layer_costs` and `decode_critical_batch`."""
    m = as_model_shape(model)
    return TransformerShape(
        m.label, m.d_model, m.d_ff, m.heads, int(m.kv_heads or 0), int(m.head_dim or 0)
    )


def _check_model(model):
    return as_model_shape(model)


def _check_chips(n_chips, model):
    if isinstance(n_chips, bool) or not isinstance(n_chips, int) or n_chips < 1:
        raise ValueError(f"n_chips must be a whole number of chips, 1 or more, got {n_chips!r}")
    if n_chips > model.kv_heads:
        raise ValueError(
            f"n_chips = {n_chips} is more than the {model.kv_heads} KV heads of {model.label}: "
            "splitting the model by heads (tensor parallelism) cannot spread the KV cache over more "
            f"chips than that. Use at most {model.kv_heads} chips per model copy."
        )


def weight_bytes(model, dtype="bf16"):
    """Bytes of all the model's parameters in `dtype` (bf16: 2 bytes per parameter), norm
    scales included (`ModelConfig.params`)."""
    model = _check_model(model)
    return model.params * bytes_per_element(dtype)


def kv_cache_bytes(model, T, dtype="bf16"):
    """Bytes of KV cache one sequence of T tokens holds, all layers together.

    K and V, each T x H_kv x d_h numbers per layer: 2 * n_layers * H_kv * d_h * T * bytes.
    `dtype` is the cache's own dtype (an int8 or fp8 cache halves it).
    """
    model = _check_model(model)
    check_size("T", T)
    return 2 * model.layers * model.kv_width * T * bytes_per_element(dtype)


def max_batch(model, T, chip, n_chips=1, dtype="bf16", kv_dtype=None) -> int:
    """The most sequences of T tokens whose KV cache fits in memory next to the weights.

    floor((n_chips * memory per chip - weight bytes) / KV bytes per sequence), with the
    weights and the cache split evenly over `n_chips` (by heads, so at most H_kv chips).
    Returns 0 when the weights alone do not fit. Activations, the runtime's workspace
    and memory fragmentation are ignored: a real server fits somewhat fewer.
    """
    model = _check_model(model)
    check_size("T", T)
    if is_symbolic(T):
        raise TypeError("max_batch needs a number for T (it rounds down to whole sequences)")
    _check_chips(n_chips, model)
    chip = get_chip(chip)
    free = n_chips * chip.hbm_bytes - weight_bytes(model, dtype)
    if free <= 0:
        return 0
    per_sequence = kv_cache_bytes(model, T, kv_dtype if kv_dtype is not None else dtype)
    # a relative 1e-12 keeps an exact fit (e.g. 119.0) from rounding down to 118
    return int(math.floor(free / per_sequence * (1 + 1e-12)))


def model_costs(
    model, B, T, mode="decode", dtype="bf16", fused_attention_kernel=False
) -> list[Cost]:
    """The operations of one step of the whole model, each counted over all layers.

    Each of the layer's operations (`layer_costs`) times `n_layers`, then the output head
    X[B, D] @ W[D, vocab]: logits only for the last position of each sequence, in prefill
    too (that is all generating the next token needs). The embedding lookup, a gather
    of B rows, is left out.
    """
    model = _check_model(model)
    ops = [
        replace(
            op,
            name=f"{op.name} (x{model.layers} layers)",
            flops=model.layers * op.flops,
            bytes=model.layers * op.bytes,
        )
        for op in layer_costs(layer_shape(model), B, T, mode, dtype, fused_attention_kernel)
    ]
    head = matmul(B, model.d_model, model.vocab, dtype)
    ops.append(replace(head, name="output head"))
    return ops


@dataclass(frozen=True)
class StepTime:
    """Roofline time of one step of a whole model on `n_chips` chips, in seconds.

    Each operation takes max(t_math, t_comms) (its own roofline bound); the step is
    their sum: the kernels run one after another. Decode: the step makes one token
    per sequence, so `seconds` is the per-token latency and B / seconds the tokens/s.
    Prefill: the step reads all B*T prompt tokens and makes the first new token.
    """

    model_name: str
    chip_name: str
    mode: str
    B: int
    T: int
    n_chips: int
    estimates: tuple[Estimate, ...]
    fits: bool
    """False when B sequences' KV cache and the weights do not fit in memory."""
    communication_s: float = 0.0
    """With n_chips > 1: the tensor-parallel all-reduces between the chips (two per layer),
    added to the step, not overlapped (see `step_time`)."""

    @property
    def seconds(self) -> float:
        """The step's time: the sum of every operation's max(t_math, t_comms), plus the
        chips' all-reduces (`communication_s`, 0 on one chip)."""
        return sum(e.t_lower for e in self.estimates) + self.communication_s

    @property
    def t_math_s(self) -> float:
        """Time all the operations would take at peak FLOP/s alone."""
        return sum(e.t_math for e in self.estimates)

    @property
    def t_comms_s(self) -> float:
        """Time moving all the operations' bytes would take at memory bandwidth alone."""
        return sum(e.t_comms for e in self.estimates)

    @property
    def per_token_latency_s(self) -> float:
        """Decode: seconds between two tokens of one sequence (the step time)."""
        if self.mode != "decode":
            raise ValueError(
                "per-token latency is a decode figure; this is a prefill step "
                "(use time_to_first_token or .seconds)"
            )
        return self.seconds

    @property
    def tokens_per_s(self) -> float:
        """Tokens processed per second: B per step in decode, B*T per step in prefill."""
        return (self.B if self.mode == "decode" else self.B * self.T) / self.seconds

    @property
    def bandwidth_bound_fraction(self) -> float:
        """Share of the step's time spent in operations that are bandwidth-bound."""
        return sum(e.t_lower for e in self.estimates if e.t_comms > e.t_math) / self.seconds

    def __str__(self) -> str:
        from .units import format_time

        chips = f"{self.n_chips} x {self.chip_name}" if self.n_chips > 1 else self.chip_name
        fit = "" if self.fits else " (DOES NOT FIT in memory)"
        return (
            f"{self.model_name} {self.mode}, B = {self.B}, T = {self.T} on {chips}: "
            f"{format_time(self.seconds)} per step, {self.tokens_per_s:,.0f} tokens/s{fit}"
        )


def step_time(
    model,
    B,
    T,
    chip,
    mode="decode",
    n_chips=1,
    dtype="bf16",
    fused_attention_kernel=True,
    latency_s=0.0,
) -> StepTime:
    """Roofline time of one decode step (or one prefill) of the whole model.

    Attention is fused by default (one kernel reads Q, K, V and writes O), as serving
    systems do in both prefill and decode. With `n_chips` > 1 the model is split Megatron's way
    (tensor parallelism: attention by heads, the MLP by columns then rows): each chip does 1/n
    of every operation's FLOPs and bytes, and each layer ends its attention and its MLP with an
    all-reduce of the [tokens, d_model] activations (tokens = B in decode, B*T in prefill) on
    the links `roofline.topology.route` gives the n chips (bandwidth term), plus `latency_s`
    seconds per all-reduce (a fixed cost: launch, synchronisation and hops; default 0, a
    lower bound), added to the step without overlap (`StepTime.communication_s`). Decode at
    batch 1 is latency-bound on several chips: a small NCCL all-reduce on 8 x H100 measures
    25.6 us (pass latency_s=collectives.NVSWITCH_ALL_REDUCE_LATENCY_S), so 80 layers x 2
    all-reduces add about 4.1 ms per token.
    """
    model = _check_model(model)
    _check_chips(n_chips, model)
    for name, value in (("B", B), ("T", T)):
        check_size(name, value)
        if is_symbolic(value) or not float(value).is_integer():
            raise TypeError(
                f"step_time needs {name} as a whole number of "
                f"{'sequences' if name == 'B' else 'tokens'}, got {value!r}"
            )
    chip = get_chip(chip)
    ops = model_costs(model, B, T, mode, dtype, fused_attention_kernel)
    estimates = tuple(
        estimate(replace(op, flops=op.flops / n_chips, bytes=op.bytes / n_chips), chip)
        for op in ops
    )
    fits = B <= max_batch(model, T, chip, n_chips, dtype)
    tokens = B * (T if mode == "prefill" else 1)
    comm = _tensor_parallel_comm_s(model, tokens, chip, n_chips, dtype, latency_s)
    return StepTime(model.label, chip.name, mode, int(B), int(T), n_chips, estimates, fits, comm)


def _tensor_parallel_comm_s(model, tokens, chip, n_chips, dtype, latency_s=0.0) -> float:
    """Seconds of the 2 all-reduces of [tokens, d_model] per layer over n_chips (0 for one),
    routed by `roofline.topology` (the n chips are one group and one slice), each plus a
    fixed `latency_s`."""
    if n_chips == 1:
        return 0.0
    from .topology import collective_seconds, route

    nbytes = tokens * model.d_model * bytes_per_element(dtype)
    r = route(chip, n_chips)
    return 2 * model.layers * collective_seconds("all-reduce", nbytes, r, 0.0, 0.0, latency_s)


def time_to_first_token(
    model, T, chip, B=1, n_chips=1, dtype="bf16", fused_attention_kernel=True
) -> float:
    """Seconds from a prompt of T tokens (per sequence, B sequences) to its first new token.

    The prefill step's roofline time (`step_time` with mode="prefill"); queueing and
    the network are left out.
    """
    return step_time(model, B, T, chip, "prefill", n_chips, dtype, fused_attention_kernel).seconds
