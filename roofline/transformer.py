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
"""

from __future__ import annotations

from dataclasses import dataclass

from .costs import Cost, matmul
from .dtypes import bytes_per_element, canonical_dtype
from .estimate import critical_intensity
from .validate import check_size, is_symbolic

__all__ = ["TransformerShape", "LLAMA_8B", "layer_costs", "layer_total", "attention_scores",
           "attention_values", "fused_attention", "decode_critical_batch", "MODES"]

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
                raise ValueError(f"{self.name}: n_heads ({self.n_heads}) must be a multiple of "
                                 f"n_kv_heads ({self.n_kv_heads}); each KV head serves a group")

    @property
    def weights_per_layer(self):
        """Weight elements of one layer: Q, K, V, O projections and the three MLP matrices."""
        D, F, H, Hkv, dh = self.d_model, self.d_ff, self.n_heads, self.n_kv_heads, self.head_dim
        return D * H * dh + 2 * D * Hkv * dh + H * dh * D + 3 * D * F


#: A Llama-style 8B layer (Llama 3 8B sizes): D = 4096, F = 14336, 32 heads of 128, 8 KV heads.
LLAMA_8B = TransformerShape("Llama-style 8B", d_model=4096, d_ff=14336, n_heads=32,
                            n_kv_heads=8, head_dim=128)


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
        raise ValueError(f"mode must be 'prefill' (all T tokens at once, as in training) or "
                         f"'decode' (one new token per sequence, T tokens in the KV cache), got {mode!r}")
    T_q = T if mode == "prefill" else 1
    return B * T_q, T_q


def layer_costs(shape: TransformerShape, B, T, mode="prefill", dtype="bf16",
                fused_attention_kernel=False) -> list[Cost]:
    """The operations of one layer, in order, each a `Cost` (per chip, nothing sharded).

    Projections and MLP are `roofline.matmul` with B*T rows (prefill) or B rows
    (decode); attention reads T keys and values per sequence (the KV cache in decode).
    """
    if not isinstance(shape, TransformerShape):
        raise TypeError(f"shape must be a TransformerShape such as roofline.transformer.LLAMA_8B, "
                        f"got {shape!r}")
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


def layer_total(shape: TransformerShape, B, T, mode="prefill", dtype="bf16",
                fused_attention_kernel=False) -> Cost:
    """All of a layer's operations added up: total FLOPs and total bytes."""
    ops = layer_costs(shape, B, T, mode, dtype, fused_attention_kernel)
    flops = sum(op.flops for op in ops)
    moved = sum(op.bytes for op in ops)
    return Cost(f"{shape.name} layer ({mode})", flops, moved, canonical_dtype(dtype))


def decode_critical_batch(shape: TransformerShape, T, chip, dtype="bf16", include_attention=True,
                          fused_attention_kernel=False):
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
        raise TypeError("decode_critical_batch needs a number for T; use layer_total with "
                        "sympy symbols to derive the formula")
    if include_attention:
        ops = [layer_total(shape, b, T, "decode", dtype, fused_attention_kernel) for b in (1, 2)]
    else:
        ops = [Cost("matmuls", sum(o.flops for o in layer_costs(shape, b, T, "decode", dtype)
                                   if "attention" not in o.name),
                    sum(o.bytes for o in layer_costs(shape, b, T, "decode", dtype)
                        if "attention" not in o.name), dtype) for b in (1, 2)]
    a = ops[1].flops - ops[0].flops          # FLOPs per sequence
    b = ops[1].bytes - ops[0].bytes          # bytes per sequence
    c = ops[0].bytes - b                     # bytes whatever the batch (the weights)
    ridge = critical_intensity(chip, dtype)
    denominator = a - ridge * b
    if denominator <= 0:
        return float("inf")
    return ridge * c / denominator
