"""Whole models: a decoder-only transformer's sizes, its parameter count and a small catalog.

`ModelConfig` holds the sizes a roofline needs (layers, widths, heads, experts); from them
it counts parameters, the parameters a token actually uses (mixture of experts), the KV
cache per token and the shapes of every matmul in a layer. `get_model("Llama 3 70B")`
returns a published configuration with its source, like `get_chip` for hardware;
`ModelConfig.from_hf_config("config.json")` reads a Hugging Face configuration.

A model is made of blocks that know their own cost (`ModelConfig.blocks()`): each layer has
an `Attention` (multi-head, grouped-query, multi-query, or DeepSeek's multi-head latent
attention; optionally a sliding window) and an `MLP` (dense, gated, or a mixture of experts
with shared experts; DeepSeek keeps dense first layers). Each block answers its parameters,
its forward FLOPs per token (attention at a context length), its weight bytes and its
KV-cache bytes; the model adds them up, and training, serving and the CLI ask it.

What `params` counts (every parameter of a Llama/Mistral/PaLM-style model):

- per layer, the matmul weights: Q [D, H d_h], K and V [D, H_kv d_h] each, O [H d_h, D];
  the MLP: up and down [D, F] and [F, D], plus a gate [D, F] when `gated_mlp` (SwiGLU);
  with `experts` > 1 every expert has its own MLP and a router [D, experts] picks
  `experts_per_token` of them for each token;
- per layer, two normalisation scale vectors of D (RMSNorm, as Llama; no biases), four
  with Gemma 2/3's norms after attention and MLP too (`sandwich_norms`), and one final norm
  of D; q/k norms of d_h (Qwen3, Gemma 3: `qk_norm`); projection biases where a family has
  them (Qwen2/2.5's q, k, v: `attention_bias="qkv"`; Llama's attention_bias: "qkvo");
- the token embedding [vocab, D] and the output head [D, vocab], one shared table when
  `tied_embeddings`;
- latent attention (DeepSeek-V2/V3): the query down- and up-projections, the key/value
  down-projection (latent + decoupled RoPE key) and up-projection, the output projection,
  and the two latents' RMSNorm scales; shared experts' MLPs; dense first layers' MLPs.

Not counted in `params`: DeepSeek-V3's multi-token-prediction module (`mtp_layers`; left
out of its published 671B too: `mtp_params` counts it, 11.61B, and `roofline.training`
counts its FLOPs, since it is trained with the model; serving leaves it out, as a server
that does not use it for speculative decoding does). Not counted at all: GPT-3's biases
(about 0.01 % of its weights), LayerNorm shift vectors and learned position embeddings
(GPT-3: 2048 x D, 0.01 %); Qwen1.5-MoE's shared-expert gate ([D, 1] per layer), DeepSeek's
router bias (a routing offset updated by a rule, not by gradients), and a multimodal model's
vision encoder (only the language model of `text_config` is read). So counts agree with
published totals to within a fraction of a percent, and exactly with Llama's and Gemma 2
27B's.
"""

from __future__ import annotations

import contextvars
import json
import re
from dataclasses import dataclass, field, fields, replace
from functools import cached_property
from pathlib import Path
from typing import cast

from .dtypes import bytes_per_element
from .hardware import Source

__all__ = [
    "ModelConfig",
    "LayerMatmul",
    "Attention",
    "MLP",
    "Blocks",
    "Layer",
    "MODELS",
    "get_model",
    "list_models",
    "register_model",
]


@dataclass(frozen=True)
class LayerMatmul:
    """One weight matrix of a layer, [d_in, d_out], multiplied by every token that uses it.

    `copies`: how many such matrices the layer holds (one per expert for an expert's MLP);
    `active`: how many of them each token goes through (experts_per_token for an expert's
    MLP). Per token the matmul costs 2 x d_in x d_out FLOPs per active copy.
    """

    name: str
    d_in: int
    d_out: int
    copies: int = 1
    active: int = 1

    @property
    def params(self) -> int:
        """Weights in all copies: copies x d_in x d_out."""
        return self.copies * self.d_in * self.d_out

    @property
    def active_params(self) -> int:
        """Weights one token multiplies by: active x d_in x d_out."""
        return self.active * self.d_in * self.d_out


def _whole(name: str, value, minimum: int = 1) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        if isinstance(value, float) and value.is_integer():
            value = int(value)
        else:
            raise TypeError(f"{name} must be a whole number, got {value!r}")
    if value < minimum:
        raise ValueError(f"{name} must be at least {minimum}, got {value}")
    return value


# ---------------------------------------------------------------- blocks: each knows its cost


def _keys_per_query(seq_len, window, causal) -> float:
    """Keys one query attends to, averaged over a sequence of `seq_len` tokens.

    causal=False: every query meets min(seq_len, window) keys (the full square of scores, as
    a kernel that computes them all; a window still skips what lies outside it). causal=True:
    query i meets min(i, window) keys; averaged (continuously) that is seq_len / 2 when the
    window holds the whole sequence, else window - window^2 / (2 seq_len).
    """
    w = seq_len if window is None else min(window, seq_len)
    if not causal:
        return w
    return w - w * w / (2 * seq_len)


def _per_chip(replicated, sharded, tp, sequence_parallel) -> float:
    """Bytes on one chip of `tp`: the head- or d_ff-sized tensors split tp ways, the
    d_model-wide ones too only with sequence parallelism (Korthikanti et al. 2022)."""
    return (replicated + sharded) / tp if sequence_parallel else replicated + sharded / tp


#: Bytes per element of the stored activations (16-bit) and of a dropout mask (Korthikanti
#: et al. 2022, section 4.1, count a mask as 1 byte per element).
_ACT_BYTES, _MASK_BYTES = 2, 1


@dataclass(frozen=True)
class Attention:
    """One layer's attention: its projections, its score and value matmuls, its KV cache.

    Multi-head (kv_heads = heads), grouped-query (1 < kv_heads < heads), multi-query
    (kv_heads = 1), or multi-head latent attention (DeepSeek-V2/V3, arXiv 2405.04434 section
    2.1: `kv_lora_rank` set). `window`: sliding-window attention (Mistral, Gemma 2/3 local
    layers): a query sees at most `window` keys, and the cache keeps at most `window` tokens.

    Latent attention: queries go through a down-projection [D, q_lora_rank] and an
    up-projection [q_lora_rank, H (d_h + d_rope)] (or one [D, H (d_h + d_rope)] when
    q_lora_rank is None); keys and values come from one down-projection [D, kv_lora_rank +
    d_rope] (the latent and the decoupled RoPE key, shared by all heads) and one
    up-projection [kv_lora_rank, H (d_h + d_v)]; the output projection is [H d_v, D]. The
    cache holds kv_lora_rank + d_rope elements per token and layer. Here d_h is DeepSeek's
    qk_nope_head_dim.
    """

    d_model: int
    heads: int
    kv_heads: int
    head_dim: int
    window: int | None = None
    q_lora_rank: int | None = None
    kv_lora_rank: int | None = None
    rope_head_dim: int = 0
    v_head_dim: int | None = None
    qk_norm: bool = False
    """RMSNorm scales of d_h on the queries and on the keys (Qwen3, Gemma 3): 2 d_h weights."""
    bias: str | None = None
    """Projection biases: "qkv" (Qwen2/2.5: H d_h + 2 H_kv d_h) or "qkvo" (Llama's
    attention_bias: also D on the output projection); None: none."""
    dropout: bool = True
    """Trained with dropout (Korthikanti et al.'s GPT layer): its masks are kept for the
    backward pass (`activation_bytes_per_token`); False for models trained without."""

    @property
    def is_latent(self) -> bool:
        return self.kv_lora_rank is not None

    @property
    def kind(self) -> str:
        if self.is_latent:
            return "multi-head latent"
        if self.kv_heads == self.heads:
            return "multi-head"
        return "multi-query" if self.kv_heads == 1 else "grouped-query"

    @property
    def qk_head_dim(self) -> int:
        """Width of one head's query and key: d_h (+ the RoPE part in latent attention)."""
        return self.head_dim + self.rope_head_dim

    @property
    def value_head_dim(self) -> int:
        return self.head_dim if self.v_head_dim is None else self.v_head_dim

    def matmuls(self) -> tuple[LayerMatmul, ...]:
        D, H = self.d_model, self.heads
        if not self.is_latent:
            width, kv = H * self.head_dim, self.kv_heads * self.head_dim
            return (
                LayerMatmul("Q projection", D, width),
                LayerMatmul("K projection", D, kv),
                LayerMatmul("V projection", D, kv),
                LayerMatmul("O projection", width, D),
            )
        r_kv = cast(int, self.kv_lora_rank)
        q_out = H * self.qk_head_dim
        if self.q_lora_rank is None:
            q = [LayerMatmul("Q projection", D, q_out)]
        else:
            q = [
                LayerMatmul("Q down-projection", D, self.q_lora_rank),
                LayerMatmul("Q up-projection", self.q_lora_rank, q_out),
            ]
        return (
            *q,
            LayerMatmul("KV down-projection", D, r_kv + self.rope_head_dim),
            LayerMatmul("KV up-projection", r_kv, H * (self.head_dim + self.value_head_dim)),
            LayerMatmul("O projection", H * self.value_head_dim, D),
        )

    @cached_property
    def params(self) -> int:
        """Projection weights, plus the RMSNorm scales of the latents (latent attention) or
        of the queries and keys (`qk_norm`), plus the projection biases (`bias`)."""
        norms = (self.q_lora_rank or 0) + (self.kv_lora_rank or 0)
        norms += 2 * self.head_dim if self.qk_norm else 0
        return sum(m.params for m in self.matmuls()) + norms + self.bias_params

    @property
    def bias_params(self) -> int:
        """Biases of the Q, K, V (and O) projections: H d_h + 2 H_kv d_h (+ D); 0 without."""
        if self.bias is None:
            return 0
        qkv = (self.heads + 2 * self.kv_heads) * self.head_dim
        return qkv + (self.d_model if self.bias == "qkvo" else 0)

    @cached_property
    def matmul_params(self) -> int:
        return sum(m.active_params for m in self.matmuls())

    @property
    def cache_heads(self) -> int:
        """Distinct cached heads a tensor-parallel split can divide (1 for latent attention:
        every head reads the same latent, so each chip keeps all of it)."""
        return 1 if self.is_latent else self.kv_heads

    @cached_property
    def cache_elements_per_token(self) -> int:
        """Cached elements per token: K and V, 2 x kv_heads x d_h; latent attention:
        kv_lora_rank + d_rope (the compressed latent and the decoupled RoPE key)."""
        if self.is_latent:
            return cast(int, self.kv_lora_rank) + self.rope_head_dim
        return 2 * self.kv_heads * self.head_dim

    def weight_bytes(self, dtype="bf16") -> float:
        """Bytes of this block's parameters in `dtype`."""
        return self.params * bytes_per_element(dtype)

    def kv_cache_bytes_per_token(self, dtype="bf16") -> float:
        """Cache bytes one token adds while it is inside the window (or with no window)."""
        return self.cache_elements_per_token * bytes_per_element(dtype)

    def kv_cache_bytes(self, context, dtype="bf16") -> float:
        """Cache bytes of one sequence of `context` tokens (at most `window` tokens kept)."""
        kept = context if self.window is None else min(context, self.window)
        return kept * self.cache_elements_per_token * bytes_per_element(dtype)

    def core_flops_per_token(self, seq_len, causal=True, from_cache=False) -> float:
        """FLOPs of Q K^T and A V for one query (forward), 2 per multiply-add:
        2 H (d_qk + d_v) x keys, keys from `_keys_per_query(seq_len, window, causal)`.

        from_cache=True (decode of latent attention, DeepSeek's absorbed form): the scores
        and values are taken against the cached latent, d_qk = kv_lora_rank + d_rope and
        d_v = kv_lora_rank (the up-projections folded into the query and output sides,
        which costs the same matmul FLOPs per new token as up-projecting its K and V).
        """
        if from_cache and self.is_latent:
            r = cast(int, self.kv_lora_rank)
            dims = (r + self.rope_head_dim) + r
        else:
            dims = self.qk_head_dim + self.value_head_dim
        return 2 * self.heads * dims * _keys_per_query(seq_len, self.window, causal)

    def flops_per_token(self, seq_len, causal=True) -> float:
        """Forward FLOPs per token: 2 per projection weight + the score and value matmuls."""
        return 2 * self.matmul_params + self.core_flops_per_token(seq_len, causal)

    def activation_bytes_per_token(
        self, seq_len, tp=1, sequence_parallel=True, keep_scores=False
    ) -> float:
        """Bytes this block keeps per token for the backward pass (16-bit activations), on one
        chip of a `tp`-way tensor-parallel group, Korthikanti et al. 2022 (arXiv 2205.05198,
        section 4.1) term by term:

        - d_model-wide (split tp ways only with `sequence_parallel`): the norm's input 2 D,
          the projections' input 2 D, the dropout mask after the output projection D (1 byte
          per element; only with `dropout`); latent attention adds its latents, computed per token for all heads:
          the query latent before and after its norm 2 x 2 q_lora_rank, the key/value
          down-projection's output 2 (kv_lora_rank + d_rope) and the normalised latent
          2 kv_lora_rank;
        - per head (split tp ways): Q 2 H d_qk, K and V 2 H_kv d_qk + 2 H_kv d_v (grouped-
          query attention keeps H_kv heads; latent attention's up-projected K and V, H each),
          the output projection's input 2 H d_v;
        - `keep_scores`: the softmax output (2 bytes), its dropout mask (1) and the dropout's
          output (2) for every key: 5 H x min(seq_len, window) (a fused kernel keeps none);
          without `dropout` only the softmax output, which the value matmul reads: 2 H x keys.

        Multi-head attention with d_h = D / H gives Korthikanti's 13 D (11 s b h + the
        norm's 2 s b h), 5 D of it d_model-wide; without dropout 12 D, 4 D of it.
        """
        D, H, e = self.d_model, self.heads, _ACT_BYTES
        kv_heads = H if self.is_latent else self.kv_heads
        dqk, dv = self.qk_head_dim, self.value_head_dim
        mask = _MASK_BYTES if self.dropout else 0
        replicated = 2 * e * D + mask * D
        if self.is_latent:
            replicated += 2 * e * (self.q_lora_rank or 0)
            r = cast(int, self.kv_lora_rank)
            replicated += e * (r + self.rope_head_dim) + e * r
        sharded = e * (H * dqk + kv_heads * (dqk + dv) + H * dv)
        if keep_scores:
            keys = seq_len if self.window is None else min(seq_len, self.window)
            # the softmax output; with dropout also its mask and the dropout's output
            per_key = e + (mask + e if self.dropout else 0)
            sharded += per_key * H * keys
        return _per_chip(replicated, sharded, tp, sequence_parallel)


@dataclass(frozen=True)
class MLP:
    """One layer's MLP: dense (2 matrices), gated (3: up, gate, down) or a mixture of
    experts: a router [D, experts] sends each token to `experts_per_token` of `experts`
    MLPs of width d_ff, and `shared_d_ff` > 0 adds shared experts every token goes through
    (their widths added up: DeepSeek-V3's one shared expert of 2048, Qwen2-MoE's 5632)."""

    d_model: int
    d_ff: int
    gated: bool
    experts: int = 1
    experts_per_token: int = 1
    shared_d_ff: int = 0
    dropout: bool = True
    """Trained with dropout after the MLP (Korthikanti et al.'s GPT layer): its mask is kept
    for the backward pass; False for models trained without."""

    @property
    def is_moe(self) -> bool:
        return self.experts > 1

    @property
    def kind(self) -> str:
        gate = "gated" if self.gated else "plain"
        if not self.is_moe:
            return f"dense {gate}, d_ff {self.d_ff}"
        shared = f" + shared {self.shared_d_ff}" if self.shared_d_ff else ""
        return (
            f"{self.experts_per_token} of {self.experts} {gate} experts of d_ff {self.d_ff}{shared}"
        )

    def _expert(self, label, width, copies=1, active=1):
        D = self.d_model
        mats = [LayerMatmul(f"{label} up", D, width, copies, active)]
        if self.gated:
            mats.append(LayerMatmul(f"{label} gate", D, width, copies, active))
        mats.append(LayerMatmul(f"{label} down", width, D, copies, active))
        return mats

    def matmuls(self) -> tuple[LayerMatmul, ...]:
        if not self.is_moe:
            return tuple(self._expert("MLP", self.d_ff))
        mats = [LayerMatmul("router", self.d_model, self.experts)]
        mats += self._expert("MLP", self.d_ff, self.experts, self.experts_per_token)
        if self.shared_d_ff:
            mats += self._expert("shared MLP", self.shared_d_ff)
        return tuple(mats)

    @cached_property
    def params(self) -> int:
        return sum(m.params for m in self.matmuls())

    @cached_property
    def matmul_params(self) -> int:
        """Weights one token multiplies by (routed experts: only its experts_per_token)."""
        return sum(m.active_params for m in self.matmuls())

    @cached_property
    def expert_params(self) -> int:
        """Weights of the routed experts (what expert parallelism splits)."""
        return sum(m.params for m in self.matmuls() if m.copies > 1)

    def flops_per_token(self, seq_len=None, causal=True) -> float:
        """Forward FLOPs per token: 2 per weight the token multiplies by (no context)."""
        return 2 * self.matmul_params

    def weight_bytes(self, dtype="bf16") -> float:
        """Bytes of this block's parameters (every expert) in `dtype`."""
        return self.params * bytes_per_element(dtype)

    def activation_bytes_per_token(self, tp=1, sequence_parallel=True) -> float:
        """Bytes this block keeps per token for the backward pass (16-bit activations), on one
        chip of a `tp`-way group, Korthikanti et al. 2022, section 4.1, term by term:

        - d_model-wide (split tp ways only with `sequence_parallel`): the norm's input 2 D,
          the MLP's input 2 D, the dropout mask after it D (1 byte per element; only with
          `dropout`); a mixture
          of experts adds the router's scores 2 x experts and, for each of the
          experts_per_token routed experts, its copy of the token 2 D (what each expert's
          first matmul reads);
        - d_ff-wide (split tp ways), per expert a token goes through: plain, the activation
          function's input and output 2 F + 2 F; gated (SwiGLU), the gate and up outputs
          and their product 3 x 2 F; the shared experts' likewise.

        Not counted: the routed experts' outputs kept for the combine weights' gradient.
        A plain MLP with F = 4 D gives Korthikanti's 21 D (19 s b h + the norm's 2 s b h),
        5 D of it d_model-wide; without dropout 20 D, 4 D of it.
        """
        D, e = self.d_model, _ACT_BYTES
        per_width = (3 if self.gated else 2) * e
        replicated = 2 * e * D + (_MASK_BYTES * D if self.dropout else 0)
        if not self.is_moe:
            return _per_chip(replicated, per_width * self.d_ff, tp, sequence_parallel)
        k = self.experts_per_token
        replicated += e * self.experts + k * e * D
        sharded = per_width * (k * self.d_ff + self.shared_d_ff)
        return _per_chip(replicated, sharded, tp, sequence_parallel)

    def kv_cache_bytes_per_token(self, dtype="bf16") -> float:
        """An MLP caches nothing: 0."""
        return 0


@dataclass(frozen=True)
class Blocks:
    """`count` layers' worth of one block (an `Attention` or an `MLP`)."""

    count: int
    block: Attention | MLP


#: ModelConfig fields for people, not the model's sizes (`to_dict` omits them).
_FOR_PEOPLE = frozenset({"source", "aliases", "explorers"})


@dataclass(frozen=True)
class Layer:
    """One decoder layer in its place (`index`, from 0 at the embedding): its attention, its
    MLP and its normalisation scales (`norm_params`: 2 D, or 4 D with Gemma's norms after
    attention and MLP too). `ModelConfig.layers_in_order()` lists them."""

    index: int
    attention: Attention
    mlp: MLP
    norm_params: int = 0
    parallel_block: bool = False
    """PaLM's parallel layer: attention and MLP read one normalised input (one norm, one fused
    input matmul), so the layer keeps that norm's input and the shared input once."""

    @property
    def params(self) -> int:
        """Attention + MLP (every expert) + this layer's norm scales."""
        return self.attention.params + self.mlp.params + self.norm_params

    @property
    def matmul_params(self) -> int:
        """Weights one token multiplies by in this layer (routed experts: experts_per_token)."""
        return self.attention.matmul_params + self.mlp.matmul_params

    def flops_per_token(self, seq_len, causal=True) -> float:
        """Forward FLOPs per token: the attention's (at `seq_len`) and the MLP's."""
        return self.attention.flops_per_token(seq_len, causal) + self.mlp.flops_per_token()

    def activation_bytes_per_token(
        self, seq_len, tp=1, sequence_parallel=True, keep_scores=False
    ) -> float:
        """Bytes this layer keeps per token for the backward pass without recomputation: its
        attention's and its MLP's (`roofline.training.activation_bytes_per_layer` adds the
        recomputation options)."""
        attention = self.attention.activation_bytes_per_token(
            seq_len, tp, sequence_parallel, keep_scores
        )
        kept = attention + self.mlp.activation_bytes_per_token(tp, sequence_parallel)
        if self.parallel_block:  # the norm's input and the matmuls' input counted once, not twice
            shared = 2 * _ACT_BYTES * self.attention.d_model
            kept -= _per_chip(shared, 0, tp, sequence_parallel)
        return kept


@dataclass(frozen=True)
class ModelConfig:
    """A decoder-only transformer, sizes only (the module docstring says what is counted).

    layers: decoder layers (L). d_model: width of the residual stream (D). heads: query
    heads (H). d_ff: hidden width of the MLP (F; of each routed expert's MLP in a mixture of
    experts). vocab: vocabulary size (V). kv_heads: key/value heads (H_kv; default `heads`:
    multi-head attention; 1: multi-query; in between: grouped-query). head_dim: d_h, default
    d_model / heads. gated_mlp: three MLP matrices (SwiGLU: up, gate, down) instead of two.
    experts / experts_per_token: a mixture of experts (each token's MLP is `experts_per_token`
    of `experts` MLPs). tied_embeddings: the output head reuses the embedding table.
    name, source, aliases: for people (a catalog entry's `source` says where its sizes come
    from; `aliases`, the other names `get_model` answers to).

    The layers are made of blocks (`blocks()`: an `Attention` and an `MLP` per layer), and
    the fields after max_context choose their kinds:
    sliding_window / sliding_layers: `sliding_layers` layers (default all) attend over at
    most `sliding_window` tokens and cache that many (Mistral 7B: all 32 at 4096; Gemma 2:
    half; Gemma 3: 5 in 6). kv_lora_rank (with q_lora_rank, qk_rope_head_dim, v_head_dim):
    multi-head latent attention (DeepSeek-V2/V3), head_dim being qk_nope_head_dim.
    shared_d_ff: shared experts' total width next to the routed ones. dense_layers /
    dense_d_ff: the first `dense_layers` layers keep a dense MLP of width dense_d_ff
    (DeepSeek-V3: 3 of 18432, then 58 mixture-of-experts layers).
    """

    layers: int
    d_model: int
    heads: int
    d_ff: int
    vocab: int
    kv_heads: int | None = None
    head_dim: int | None = None
    gated_mlp: bool = False
    experts: int = 1
    experts_per_token: int = 1
    tied_embeddings: bool = False
    name: str | None = None
    source: Source | None = field(default=None, compare=False, repr=False)
    aliases: tuple[str, ...] = field(default=(), compare=False, repr=False)
    """Other names readers type for a catalog model (`get_model("llama3-70b")`), ignoring case,
    spaces, dashes and underscores; the name itself needs no alias."""
    explorers: tuple[str, ...] = field(default=(), compare=False, repr=False)
    """The book's explorers that offer this catalog model as a choice: "serving"
    (`roofline.serving_explorer`), "step" (`roofline.step_explorer`)."""
    max_context: int | None = None
    """The longest context (prompt + generated tokens) the model was trained for (Hugging
    Face's max_position_embeddings); None: not stated, nothing is checked."""
    sliding_window: int | None = None
    sliding_layers: int | None = None
    q_lora_rank: int | None = None
    kv_lora_rank: int | None = None
    qk_rope_head_dim: int = 0
    v_head_dim: int | None = None
    shared_d_ff: int = 0
    dense_layers: int = 0
    dense_d_ff: int | None = None
    parallel_block: bool = False
    """Attention and MLP read the same input and their outputs are added (PaLM's "parallel
    layers", GPT-J): the same FLOPs and weights, but one tensor-parallel all-reduce per layer
    in each pass instead of two (`roofline.parallelism`)."""
    global_every: int | None = None
    """Where the sliding-window layers sit (`layers_in_order()`): every `global_every`-th layer (the
    last of each run of that many) attends globally and the others slide (Gemma 2: 2, layers
    0, 2, 4, ... slide; Gemma 3: 6, transformers' (i + 1) % 6); `sliding_layers` then
    defaults to layers - layers // global_every. None: the full-attention layers come first
    and the `sliding_layers` last (Qwen2's max_window_layers)."""
    sandwich_norms: bool = False
    """Gemma 2/3: RMSNorms after attention and after the MLP as well as before each: 4 D of
    norm scales per layer instead of 2 D."""
    qk_norm: bool = False
    """RMSNorm of d_h on queries and keys (Qwen3, Gemma 3): 2 d_h parameters per layer."""
    attention_bias: str | None = None
    """Projection biases: "qkv" (Qwen2/2.5, Qwen1.5-MoE) or "qkvo" (Llama's attention_bias)."""
    mtp_layers: int = 0
    """DeepSeek-V3's multi-token-prediction module (num_nextn_predict_layers; the paper's D =
    1): per depth one more layer like the last, a projection [2 D, D] and 3 norms of D, the
    embedding and output head shared with the main model. Not in `params` (DeepSeek's 671B
    is the main model's; `mtp_params` counts it), but trained: its FLOPs are in
    `roofline.training` (on the last pipeline stage, beside the output head)."""
    trains_with_dropout: bool = True
    """Trained with dropout (GPT-3, Megatron's models): the training-memory count keeps
    Korthikanti et al.'s dropout masks (1 byte per element after attention and after the
    MLP, and on the attention scores when they are kept) and the dropout's output on the
    scores. False for the models trained without (Llama, PaLM, DeepSeek, Mistral, Gemma,
    Qwen: each catalog entry's source says where it is stated): 2 D bytes per token and
    layer less (32 instead of 34 for a GPT layer). Default True: Korthikanti's count."""

    def __post_init__(self):
        for size in ("layers", "d_model", "heads", "d_ff", "vocab", "experts"):
            object.__setattr__(self, size, _whole(size, getattr(self, size)))
        epk = _whole("experts_per_token", self.experts_per_token)
        object.__setattr__(self, "experts_per_token", epk)
        if epk > self.experts:
            raise ValueError(
                f"experts_per_token ({epk}) cannot exceed experts ({self.experts}): "
                "a token is routed to some of the experts that exist"
            )
        kv = self.heads if self.kv_heads is None else _whole("kv_heads", self.kv_heads)
        if self.heads % kv:
            raise ValueError(
                f"kv_heads ({kv}) must divide heads ({self.heads}): each key/value head serves "
                "a whole group of query heads (1 = multi-query, heads = multi-head)"
            )
        object.__setattr__(self, "kv_heads", kv)
        if self.head_dim is None:
            if self.d_model % self.heads:
                raise ValueError(
                    f"heads ({self.heads}) does not divide d_model ({self.d_model}); "
                    "give head_dim explicitly (e.g. head_dim=128)"
                )
            object.__setattr__(self, "head_dim", self.d_model // self.heads)
        else:
            object.__setattr__(self, "head_dim", _whole("head_dim", self.head_dim))
        for flag in (
            "gated_mlp",
            "tied_embeddings",
            "sandwich_norms",
            "qk_norm",
            "trains_with_dropout",
        ):
            if not isinstance(getattr(self, flag), bool):
                raise TypeError(f"{flag} must be True or False, got {getattr(self, flag)!r}")
        if self.max_context is not None:
            object.__setattr__(self, "max_context", _whole("max_context", self.max_context))
        if self.name is not None and not isinstance(self.name, str):
            raise TypeError(f"name must be text, got {self.name!r}")
        self._check_block_fields()

    def _check_block_fields(self):
        for size in ("sliding_window", "q_lora_rank", "kv_lora_rank", "v_head_dim", "dense_d_ff"):
            if getattr(self, size) is not None:
                object.__setattr__(self, size, _whole(size, getattr(self, size)))
        if self.attention_bias not in (None, "qkv", "qkvo"):
            raise ValueError(
                f'attention_bias is None, "qkv" (Qwen2) or "qkvo" (Llama\'s attention_bias), '
                f"got {self.attention_bias!r}"
            )
        for size in ("qk_rope_head_dim", "shared_d_ff", "dense_layers", "mtp_layers"):
            object.__setattr__(self, size, _whole(size, getattr(self, size), minimum=0))
        if self.global_every is not None:
            every = _whole("global_every", self.global_every, minimum=2)
            object.__setattr__(self, "global_every", every)
            implied = self.layers - self.layers // every
            if self.sliding_window is None or self.sliding_layers not in (None, implied):
                raise ValueError(
                    f"global_every={every} places sliding-window layers: it needs "
                    f"sliding_window, and sliding_layers None or {implied} "
                    f"(layers - layers // global_every), got {self.sliding_layers}"
                )
            object.__setattr__(self, "sliding_layers", implied)
        if self.sliding_layers is not None:
            n = _whole("sliding_layers", self.sliding_layers, minimum=0)
            if self.sliding_window is None or n > self.layers:
                raise ValueError(
                    f"sliding_layers ({n}) needs sliding_window and at most layers "
                    f"({self.layers}) layers"
                )
            object.__setattr__(self, "sliding_layers", n)
        if self.kv_lora_rank is None and (
            self.q_lora_rank or self.qk_rope_head_dim or self.v_head_dim
        ):
            raise ValueError(
                "q_lora_rank, qk_rope_head_dim and v_head_dim describe multi-head latent "
                "attention: give kv_lora_rank too (DeepSeek-V3: 512)"
            )
        if (self.shared_d_ff or self.dense_layers) and not self.is_moe:
            raise ValueError(
                "shared_d_ff and dense_layers describe a mixture of experts: set experts > 1"
            )
        if self.dense_layers > self.layers:
            raise ValueError(
                f"dense_layers ({self.dense_layers}) cannot exceed layers ({self.layers})"
            )

    # -- the blocks
    def attention_block(self, window: int | None = None) -> Attention:
        """The attention of one layer (with `window` for a sliding-window layer)."""
        return Attention(
            self.d_model,
            self.heads,
            cast(int, self.kv_heads),
            cast(int, self.head_dim),
            window,
            self.q_lora_rank,
            self.kv_lora_rank,
            self.qk_rope_head_dim,
            self.v_head_dim,
            self.qk_norm,
            self.attention_bias,
            self.trains_with_dropout,
        )

    def blocks(self) -> tuple[Blocks, ...]:
        """Every layer's blocks, grouped by kind: attention blocks (sliding-window and full)
        then MLP blocks (dense first layers, then the rest); the counts of the attention
        groups add up to `layers`, and so do the MLP groups'."""
        cached = self.__dict__.get("_blocks")
        if cached is None:
            cached = self._make_blocks()
            object.__setattr__(self, "_blocks", cached)  # frozen: built once, never changed
        return cached

    def _make_blocks(self) -> tuple[Blocks, ...]:
        groups = []
        n_window = 0 if self.sliding_window is None else self.sliding_layers
        n_window = self.layers if n_window is None else n_window
        if n_window:
            groups.append(Blocks(n_window, self.attention_block(self.sliding_window)))
        if self.layers - n_window:
            groups.append(Blocks(self.layers - n_window, self.attention_block()))
        if self.dense_layers:
            width = self.dense_d_ff or self.d_ff
            dense = MLP(self.d_model, width, self.gated_mlp, dropout=self.trains_with_dropout)
            groups.append(Blocks(self.dense_layers, dense))
        if self.layers - self.dense_layers:
            mlp = MLP(
                self.d_model,
                self.d_ff,
                self.gated_mlp,
                self.experts,
                self.experts_per_token,
                self.shared_d_ff,
                self.trains_with_dropout,
            )
            groups.append(Blocks(self.layers - self.dense_layers, mlp))
        return tuple(groups)

    def layers_in_order(self) -> tuple[Layer, ...]:
        """Every layer in order, from the embedding to the output head: DeepSeek-V3's 3
        dense-MLP layers then 58 mixture-of-experts ones; Gemma's sliding and global layers
        interleaved (`global_every`); otherwise the full-attention layers first. The same
        blocks as `blocks()`, which groups them by kind."""
        cached = self.__dict__.get("_layers")
        if cached is None:
            cached = tuple(self._layer(i) for i in range(self.layers))
            object.__setattr__(self, "_layers", cached)  # frozen: built once, never changed
        return cached

    def _is_sliding(self, i: int) -> bool:
        if self.sliding_window is None:
            return False
        if self.global_every is not None:
            return bool((i + 1) % self.global_every)
        n = self.layers if self.sliding_layers is None else self.sliding_layers
        return i >= self.layers - n

    def _layer(self, i: int) -> Layer:
        groups = self.blocks()
        attns = {b.block.window: b.block for b in groups if isinstance(b.block, Attention)}
        mlps = [g.block for g in groups if isinstance(g.block, MLP)]
        attention = attns[self.sliding_window if self._is_sliding(i) else None]
        mlp = mlps[0] if i < self.dense_layers else mlps[-1]
        return Layer(i, attention, mlp, self.norm_params_per_layer, self.parallel_block)

    def _sum(self, what):
        """Sum over every layer's blocks of what(block) (exact for whole numbers)."""
        return sum(g.count * what(g.block) for g in self.blocks())

    # -- sizes derived from the configuration
    @property
    def attention_width(self) -> int:
        """H x d_h: the width of the queries (PaLM's "attention width"; 12288 for PaLM 540B,
        whose d_model is 18432)."""
        return self.heads * cast(int, self.head_dim)  # __post_init__ fills head_dim

    @property
    def kv_width(self) -> int:
        """H_kv x d_h: the width of the keys (and of the values) of one token in one layer."""
        return cast(int, self.kv_heads) * cast(int, self.head_dim)  # both filled by __post_init__

    @property
    def kv_cache_heads(self) -> int:
        """Cached heads a tensor-parallel split can divide: kv_heads, or 1 for latent
        attention (one latent per token serves every head)."""
        return self.attention_block().cache_heads

    @property
    def is_moe(self) -> bool:
        """True for a mixture of experts (more than one expert MLP per layer)."""
        return self.experts > 1

    @property
    def label(self) -> str:
        """The name, or the sizes when the configuration has no name."""
        return self.name or (
            f"model (L={self.layers}, D={self.d_model}, H={self.heads}, F={self.d_ff})"
        )

    def layer_matmuls(self) -> tuple[LayerMatmul, ...]:
        """Every weight matrix of one layer of the most common kind (the last: for
        DeepSeek-V3 a mixture-of-experts layer), in the order a token meets them."""
        mlp = [g.block for g in self.blocks() if isinstance(g.block, MLP)][-1]
        return self.attention_block().matmuls() + mlp.matmuls()

    @property
    def layer_params(self) -> int:
        """Matmul weights of one layer of the most common kind (all experts), norms excluded."""
        return sum(m.params for m in self.layer_matmuls())

    @property
    def expert_params(self) -> int:
        """Weights of every routed expert MLP in all layers (0 for a dense model): what expert
        parallelism splits (shared experts are not split)."""
        return int(self._sum(lambda b: b.expert_params if isinstance(b, MLP) else 0))

    @property
    def embedding_params(self) -> int:
        """The embedding table and the output head (one table when tied): V x D each."""
        return (1 if self.tied_embeddings else 2) * self.vocab * self.d_model

    @property
    def norm_params_per_layer(self) -> int:
        """Normalisation scales of one layer: two of D (RMSNorm, no biases), four with
        `sandwich_norms` (Gemma 2/3). Latent and q/k norms belong to the attention block."""
        return (4 if self.sandwich_norms else 2) * self.d_model

    @property
    def mtp_params(self) -> int:
        """Parameters of the multi-token-prediction module (`mtp_layers` depths), left out of
        `params`: per depth one layer like the last (every expert), the projection [2 D, D]
        and 3 norms of D (on the hidden state, on the embedding, before the shared head);
        the embedding and output head are the main model's, not counted again. DeepSeek-V3:
        11,610,067,968 against the "11.5B unique parameters" of DeepSeek's README_WEIGHTS.md
        (which matches 11,507,286,016, the layer alone, without the projection's 0.10B);
        its model card's "14B of MTP module weights" also counts the checkpoint's own copies
        of the embedding and head."""
        if not self.mtp_layers:
            return 0
        last = self.layers_in_order()[-1]
        return self.mtp_layers * (last.params + 2 * self.d_model**2 + 3 * self.d_model)

    @property
    def norm_params(self) -> int:
        """Normalisation scales: every layer's (`norm_params_per_layer`) and a final one of D."""
        return self.layers * self.norm_params_per_layer + self.d_model

    @property
    def params(self) -> int:
        """Every parameter: all layers' blocks (every expert), the norms, the embedding and
        the output head (counted once when tied)."""
        return int(self._sum(lambda b: b.params)) + self.norm_params + self.embedding_params

    @property
    def active_params(self) -> int:
        """Parameters one token uses: as `params`, with only `experts_per_token` of the routed
        expert MLPs (equal to `params` for a dense model)."""
        return self.params - self.expert_params + self._routed_active

    @property
    def _routed_active(self) -> int:
        return int(
            self._sum(
                lambda b: (
                    b.matmul_params - (b.params - b.expert_params) if isinstance(b, MLP) else 0
                )
            )
        )

    @property
    def matmul_params(self) -> int:
        """Weights a token is multiplied by (the N of "6N FLOPs per token"): every layer's
        active matmul weights plus the output head [D, V]. The embedding lookup is a gather,
        not a matmul, so an untied input table is left out; norms are elementwise."""
        return int(self._sum(lambda b: b.matmul_params)) + self.vocab * self.d_model

    def attention_flops_per_token(self, seq_len, causal=True, from_cache=False) -> float:
        """Forward FLOPs of the score and value matmuls per token, all layers: each
        attention block's `core_flops_per_token` (sliding-window layers capped at their
        window). causal: averaged over a sequence of seq_len tokens under a causal mask;
        causal=False: every query against seq_len keys (decode against a context of seq_len).
        from_cache: a decode step of latent attention against the cached latent."""
        return self._sum(
            lambda b: (
                b.core_flops_per_token(seq_len, causal, from_cache)
                if isinstance(b, Attention)
                else 0
            )
        )

    def forward_flops_per_token(self, seq_len, causal=True) -> float:
        """Forward FLOPs per token: 2 per active matmul weight (output head included) +
        `attention_flops_per_token(seq_len, causal)`."""
        return 2 * self.matmul_params + self.attention_flops_per_token(seq_len, causal)

    def weight_bytes(self, dtype="bf16") -> float:
        """Bytes of every parameter in `dtype` (bf16: 2 bytes each)."""
        return self.params * bytes_per_element(dtype)

    def kv_cache_bytes(self, context, dtype="bf16") -> float:
        """KV-cache bytes of one sequence of `context` tokens, all layers (a sliding-window
        layer keeps at most its window)."""
        return self._sum(
            lambda b: b.kv_cache_bytes(context, dtype) if isinstance(b, Attention) else 0
        )

    def kv_cache_bytes_per_token(self, dtype="bf16", context=None) -> float:
        """KV-cache bytes one token of context holds, all layers together: 2 (K and V) x
        layers x kv_heads x head_dim x bytes per element of `dtype` (grouped-query and
        multi-query attention store kv_heads, not heads; latent attention stores
        kv_lora_rank + qk_rope_head_dim per layer). With sliding-window layers this is the
        average over a sequence of `context` tokens (required then: the window caps it)."""
        if context is None:
            if self.sliding_window is not None and self.sliding_layers != 0:
                raise ValueError(
                    f"{self.label} has sliding-window layers (window {self.sliding_window}): "
                    "the cache per token depends on the context; pass context=..."
                )
            return self.kv_cache_bytes(1, dtype)
        return self.kv_cache_bytes(context, dtype) / context

    def with_changes(self, **changes) -> ModelConfig:
        """A copy with some fields changed (validated again), e.g. `.with_changes(layers=40)`."""
        return replace(self, **changes)

    # -- display
    def _attention_rows(self) -> list:
        rows = []
        for g in self.blocks():
            b = g.block
            if not isinstance(b, Attention):
                continue
            text = f"{b.kind}, {b.heads} heads of {b.qk_head_dim}"
            if b.is_latent:
                text += f", latent {b.kv_lora_rank} + RoPE key {b.rope_head_dim} cached"
            else:
                text += f", {b.kv_heads} KV head{'' if b.kv_heads == 1 else 's'}"
            if b.window is not None:
                text += f", sliding window {b.window:,}"
            rows.append((f"attention ({g.count} layers)", text))
        return rows

    def summary(self):
        """The sizes and counts, as a `roofline.display.Summary`."""
        from .display import Summary

        rows = [("layers", str(self.layers)), ("d_model", str(self.d_model))]
        rows += self._attention_rows()
        rows += [
            (f"MLP ({g.count} layers)", g.block.kind)
            for g in self.blocks()
            if isinstance(g.block, MLP)
        ]
        rows.append(
            ("vocab", f"{self.vocab}{' (tied embeddings)' if self.tied_embeddings else ''}")
        )
        rows.append(("parameters", f"{self.params / 1e9:.4g} billion"))
        if self.is_moe:
            rows.append(("active per token", f"{self.active_params / 1e9:.4g} billion"))
        if self.mtp_layers:
            rows.append(
                (
                    "MTP module",
                    f"{self.mtp_params / 1e9:.4g} billion more (multi-token prediction, "
                    f"{self.mtp_layers} depth; trained, not in the parameters above)",
                )
            )
        if self.sliding_window is None or self.sliding_layers == 0:
            kv = f"{self.kv_cache_bytes_per_token('bf16'):,.0f} bytes per token (bf16)"
        else:
            n = self.sliding_window
            beyond = (self.kv_cache_bytes(2 * n, "bf16") - self.kv_cache_bytes(n, "bf16")) / n
            kv = (
                f"{self.kv_cache_bytes(n, 'bf16') / n:,.0f} bytes per token (bf16) up to "
                f"{n:,} tokens, then {beyond:,.0f} per further token (windows full)"
            )
        rows.append(("KV cache", kv))
        if self.max_context is not None:
            rows.append(("context", f"up to {self.max_context:,} tokens"))
        if self.source is not None:
            rows.append(("source", f"{self.source.url}: {self.source.says}"))
        return Summary(f"Model {self.label}", rows)

    def __str__(self) -> str:
        return self.label

    def _repr_html_(self) -> str:
        return self.summary().html()

    def to_dict(self) -> dict:
        """The configuration's fields (without the source and aliases), e.g. for JSON."""
        return {f.name: getattr(self, f.name) for f in fields(self) if f.name not in _FOR_PEOPLE}

    @classmethod
    def from_dict(cls, data: dict) -> ModelConfig:
        """The inverse of `to_dict` (unknown keys are an error naming them)."""
        names = {f.name for f in fields(cls)} - _FOR_PEOPLE
        unknown = sorted(set(data) - names)
        if unknown:
            raise ValueError(
                f"unknown ModelConfig field(s) {', '.join(unknown)}; known: {', '.join(sorted(names))}"
                ". For a Hugging Face config.json use ModelConfig.from_hf_config."
            )
        return cls(**data)

    @classmethod
    def from_hf_config(cls, path_or_dict, name=None) -> ModelConfig:
        """Read a Hugging Face `config.json` (a path, a folder holding one, or its dict).

        Llama / Mistral / Mixtral / Qwen keys: num_hidden_layers, hidden_size,
        num_attention_heads, intermediate_size, vocab_size; optional num_key_value_heads,
        head_dim, tie_word_embeddings, num_local_experts or num_experts, num_experts_per_tok
        (with moe_intermediate_size as the expert width where given). These families (and
        Gemma's GeGLU) use a gated MLP; another model_type with hidden_act "gelu"/"relu" reads
        as an ungated one. A missing tie_word_embeddings takes transformers' default for the
        family (tied for Gemma, untied for the others).

        Also read: shared experts (Qwen-MoE shared_expert_intermediate_size, DeepSeek
        n_shared_experts), dense first layers (DeepSeek first_k_dense_replace, Qwen
        mlp_only_layers), DeepSeek's n_routed_experts and latent attention (kv_lora_rank,
        q_lora_rank, qk_nope_head_dim, qk_rope_head_dim, v_head_dim), sliding windows
        (Mistral sliding_window on every layer; Qwen use_sliding_window with
        max_window_layers; Gemma 2 every other layer; Gemma 3 sliding_window_pattern or
        layer_types, which also place them: `global_every`) and a multimodal config's
        text_config. From the model_type and a few keys, what transformers' code for the
        family builds: Gemma 2/3's four norms per layer, Qwen3's and Gemma 3's q/k norms,
        Qwen2's q/k/v biases, attention_bias (q, k, v and o), DeepSeek's
        num_nextn_predict_layers (the multi-token-prediction module, `mtp_layers`), and
        whether it trains with dropout (`trains_with_dropout`: any of attention_dropout,
        hidden_dropout, resid_pdrop, attn_pdrop, embd_pdrop, dropout, ... above 0; with no
        dropout key, none: the default of transformers' configs for these families).

        Strict: a key this reader does not read whose name says it changes the cost (experts,
        windows, layer kinds, head or layer sizes, ...) raises ValueError naming it, as do
        interleaved dense/MoE layers (moe_layer_freq, decoder_sparse_step other than 1):
        a model is never counted as a dense one it is not.
        """
        data, default_name = _read_hf(path_or_dict)
        return _from_hf(cls, data, name or default_name)


# ---------------------------------------------------------------- Hugging Face config.json

_GATED_FAMILIES = ("llama", "mistral", "mixtral", "qwen", "gemma", "deepseek")
_HF_REQUIRED = {
    "layers": "num_hidden_layers",
    "d_model": "hidden_size",
    "heads": "num_attention_heads",
    "vocab": "vocab_size",
}
#: Dropout rates in the families' configs (Llama ... DeepSeek: attention_dropout; GPT-2 and
#: Phi: *_pdrop; Falcon: hidden_dropout; OPT: dropout, activation_dropout; BERT: *_prob).
_HF_DROPOUT_KEYS = (
    "attention_dropout", "hidden_dropout", "resid_pdrop", "attn_pdrop", "embd_pdrop",
    "dropout", "activation_dropout", "hidden_dropout_prob", "attention_probs_dropout_prob",
)  # fmt: skip
#: Keys read into the ModelConfig (or checked against a value this reader models).
_HF_READ = {
    *_HF_REQUIRED.values(),
    "model_type", "_name_or_path", "intermediate_size", "num_key_value_heads", "head_dim",
    "hidden_act", "hidden_activation", "tie_word_embeddings", "max_position_embeddings",
    "num_local_experts", "num_experts", "n_routed_experts", "num_experts_per_tok",
    "moe_intermediate_size", "shared_expert_intermediate_size", "n_shared_experts",
    "first_k_dense_replace", "moe_layer_freq", "decoder_sparse_step", "mlp_only_layers",
    "kv_lora_rank", "q_lora_rank", "qk_nope_head_dim", "qk_rope_head_dim", "v_head_dim",
    "sliding_window", "use_sliding_window", "max_window_layers", "sliding_window_pattern",
    "layer_types", "text_config", "vision_config", "num_nextn_predict_layers",
    "attention_bias", *_HF_DROPOUT_KEYS,
}  # fmt: skip
#: Keys whose name sounds like cost but that change no parameter, FLOP or cached byte:
#: routing rules (which experts, how weighted), losses, softcapping, scalings, dropout.
_HF_COST_NEUTRAL = {
    "n_group", "topk_group", "topk_method", "scoring_func", "routed_scaling_factor",
    "norm_topk_prob", "seq_aux", "aux_loss_alpha", "ep_size", "router_aux_loss_coef",
    "router_jitter_noise", "output_router_logits", "router_z_loss_coef",
    "attn_logit_softcapping", "final_logit_softcapping", "query_pre_attn_scalar",
    "cache_implementation", "rope_local_base_freq",
}  # fmt: skip
#: Words in a key that usually mean it changes the cost: an unread key holding one is refused.
_HF_COST_WORDS = re.compile(
    r"expert|moe|lora|window|sliding|sparse|layer_types|mlp_only|dense|shared|nextn|rope_head"
    r"|nope|v_head|head_dim|altup|laurel|per_layer|cross_attention|encoder|ssm|mamba|conv|"
    r"linear|hybrid|num_.*layers|num_.*heads|_size$|_dim$"
)


def _read_hf(path_or_dict):
    if isinstance(path_or_dict, dict):
        return path_or_dict, None
    if not isinstance(path_or_dict, (str, Path)):
        raise TypeError(
            f"from_hf_config takes a path to config.json or its dict, got {path_or_dict!r}"
        )
    path = Path(path_or_dict)
    if path.is_dir():
        path = path / "config.json"
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as error:
        raise ValueError(f"cannot read {path}: {error.strerror or error}") from None
    try:
        data = json.loads(text)
    except json.JSONDecodeError as error:
        raise ValueError(f"{path} is not valid JSON ({error})") from None
    if not isinstance(data, dict):
        raise ValueError(f"{path} holds {type(data).__name__}, not a JSON object of settings")
    default = path.parent.name if path.name == "config.json" and path.parent.name else path.stem
    return data, default


def _hf_text(data: dict) -> dict:
    """The language model's settings: a multimodal config (Gemma 3) nests them in
    text_config; its vision tower is another model, not counted here."""
    text = data.get("text_config")
    if isinstance(text, dict):
        return {"model_type": data.get("model_type"), **text}
    return data


def _check_hf_keys(data: dict):
    kind = data.get("model_type", "unknown model_type")
    unread = sorted(
        key
        for key in data
        if key not in _HF_READ and key not in _HF_COST_NEUTRAL and _HF_COST_WORDS.search(key)
    )
    if unread:
        raise ValueError(
            f"config.json ({kind}) has {', '.join(repr(k) for k in unread)}, which changes the "
            "model's cost in a way ModelConfig does not read; describe the model with "
            "ModelConfig(...) fields instead (rather than have it counted wrong)"
        )
    for key, allowed in (("moe_layer_freq", 1), ("decoder_sparse_step", 1)):
        if data.get(key, allowed) != allowed:
            raise ValueError(
                f"config.json ({kind}) has {key} = {data[key]!r}: mixture-of-experts layers "
                "interleaved with dense ones are not modelled (only dense first layers); "
                "describe the model with ModelConfig(...)"
            )


def _hf_experts(data: dict, need) -> dict:
    """Mixture-of-experts fields: Mixtral (num_local_experts), Qwen-MoE (num_experts,
    shared_expert_intermediate_size, mlp_only_layers), DeepSeek (n_routed_experts,
    n_shared_experts, first_k_dense_replace)."""
    keys = ("num_local_experts", "num_experts", "n_routed_experts")
    experts = next((data[k] for k in keys if data.get(k)), 1)
    if experts <= 1:
        return {"d_ff": need("intermediate_size")}
    out = {
        "experts": experts,
        "experts_per_token": need("num_experts_per_tok"),
        "d_ff": data.get("moe_intermediate_size") or need("intermediate_size"),
    }
    if data.get("shared_expert_intermediate_size"):
        out["shared_d_ff"] = data["shared_expert_intermediate_size"]
    elif data.get("n_shared_experts"):
        out["shared_d_ff"] = data["n_shared_experts"] * out["d_ff"]
    dense = data.get("first_k_dense_replace") or len(data.get("mlp_only_layers") or ())
    if dense:
        out["dense_layers"] = dense
        out["dense_d_ff"] = need("intermediate_size")
    return out


def _hf_extras(data: dict, kind: str) -> dict:
    """What changes the parameter count by little but exactly (transformers' modelling code
    for each family): Gemma 2/3's four norms per layer, Qwen3's and Gemma 3's q/k norms,
    Qwen2's q/k/v biases (always on in transformers' Qwen2 and Qwen2-MoE attention), Llama's
    attention_bias (q, k, v and o), DeepSeek's multi-token-prediction depths."""
    out: dict = {}
    if kind.startswith(("gemma2", "gemma3")):
        out["sandwich_norms"] = True
    if kind.startswith(("qwen3", "gemma3")):
        out["qk_norm"] = True
    if kind in ("qwen2", "qwen2_moe"):
        out["attention_bias"] = "qkv"
    elif data.get("attention_bias"):
        out["attention_bias"] = "qkvo"
    if data.get("num_nextn_predict_layers"):
        out["mtp_layers"] = data["num_nextn_predict_layers"]
    out["trains_with_dropout"] = _hf_dropout(data, kind)
    return out


def _hf_dropout(data: dict, kind: str) -> bool:
    """Whether the config trains with dropout: any dropout rate > 0 (one flag: every mask
    Korthikanti counts is then kept). No dropout key at all: no dropout, the default of
    transformers' config classes for the families read here (LlamaConfig, MistralConfig,
    Qwen2Config, Gemma2Config, DeepseekV3Config: attention_dropout=0.0, and no other
    dropout), as these models were trained."""
    rates = [data[key] for key in _HF_DROPOUT_KEYS if data.get(key) is not None]
    for rate in rates:
        if not isinstance(rate, (int, float)) or isinstance(rate, bool) or not 0 <= rate < 1:
            raise ValueError(
                f"config.json ({kind or 'unknown model_type'}) has a dropout rate {rate!r}; "
                "expected a number from 0 (no dropout) to below 1"
            )
    return any(rate > 0 for rate in rates)


def _global_every(types) -> int | None:
    """p when layer_types is p - 1 sliding layers then one full, repeated (the last run may be
    cut short); None for any other order (the counts are still read; `layers_in_order` then
    puts the full layers first)."""
    for every in range(2, len(types) + 1):
        if all(
            t == ("full_attention" if (i + 1) % every == 0 else "sliding_attention")
            for i, t in enumerate(types)
        ):
            return every
    return None


def _hf_attention(data: dict, kind: str, layers: int, need) -> dict:
    """Latent attention (DeepSeek) and sliding windows (Mistral, Qwen, Gemma 2/3)."""
    out: dict = {}
    if data.get("kv_lora_rank"):
        out.update(
            kv_lora_rank=data["kv_lora_rank"],
            q_lora_rank=data.get("q_lora_rank"),
            head_dim=need("qk_nope_head_dim"),
            qk_rope_head_dim=data.get("qk_rope_head_dim", 0),
            v_head_dim=data.get("v_head_dim"),
        )
    window = data.get("sliding_window")
    if window is None or data.get("use_sliding_window") is False:
        return out
    types = data.get("layer_types")
    if types is not None:
        odd = sorted(set(types) - {"sliding_attention", "full_attention"})
        if odd:
            raise ValueError(f"config.json ({kind}) has layer_types {odd}, not modelled")
        sliding = sum(t == "sliding_attention" for t in types)
        every = _global_every(types)
        if every is not None:
            out["global_every"] = every
    elif kind.startswith("gemma2"):
        out["global_every"] = 2  # layers 0, 2, 4, ... slide (transformers' Gemma 2)
        sliding = layers - layers // 2
    elif data.get("sliding_window_pattern") or kind.startswith("gemma3"):
        # every p-th layer is global; Gemma 3's config.json often omits the pattern and
        # transformers then takes 6 (Gemma3TextConfig: 5 local layers, then 1 global)
        pattern = data.get("sliding_window_pattern") or 6
        sliding = layers - layers // pattern
        if pattern > 1:
            out["global_every"] = pattern
    elif data.get("use_sliding_window"):
        sliding = layers - data.get("max_window_layers", 0)  # Qwen2: the first ones are full
    else:
        sliding = layers  # Mistral 7B v0.1: every layer
    out.update(sliding_window=window, sliding_layers=sliding)
    return out


def _from_hf(cls, data: dict, name):
    text_only = isinstance(data.get("text_config"), dict)
    name = name or data.get("_name_or_path") or data.get("model_type")
    data = _hf_text(data)
    kind = str(data.get("model_type") or "").lower()

    def need(key):
        if key not in data or data[key] is None:
            raise ValueError(
                f"config.json ({kind or 'unknown model_type'}) has no {key!r}; expected "
                f"Llama/Mistral/Qwen/Gemma/DeepSeek-style keys ({', '.join(_HF_REQUIRED.values())}"
                ", intermediate_size)"
            )
        return data[key]

    _check_hf_keys(data)
    kwargs = {ours: need(theirs) for ours, theirs in _HF_REQUIRED.items()}
    kwargs.update(_hf_experts(data, need))
    if data.get("num_key_value_heads") is not None:
        kwargs["kv_heads"] = data["num_key_value_heads"]
    if data.get("head_dim") is not None:
        kwargs["head_dim"] = data["head_dim"]
    kwargs.update(_hf_attention(data, kind, kwargs["layers"], need))
    act = str(data.get("hidden_act", data.get("hidden_activation", "silu"))).lower()
    # Llama, Mistral, Mixtral, Qwen, DeepSeek and Gemma (GeGLU: gelu, gated) gate their MLP
    kwargs["gated_mlp"] = kind.startswith(_GATED_FAMILIES) or not act.startswith(("gelu", "relu"))
    # transformers' own defaults when the key is absent: Gemma ties, the others do not
    tied_default = kind.startswith("gemma")
    kwargs["tied_embeddings"] = bool(data.get("tie_word_embeddings", tied_default))
    if data.get("max_position_embeddings") is not None:
        kwargs["max_context"] = data["max_position_embeddings"]
    kwargs.update(_hf_extras(data, kind))
    if text_only:  # say so wherever the model is shown: the image encoder is not counted
        name = f"{name} (language model only)"
    return cls(**kwargs, name=name)


# ---------------------------------------------------------------- the catalog

_PALM = "https://arxiv.org/abs/2204.02311"
_MEGATRON = "https://arxiv.org/abs/2104.04473"
_GPT3 = "https://arxiv.org/abs/2005.14165"
_LLAMA3 = "https://arxiv.org/abs/2407.21783"


def _hf(repo: str) -> str:
    return f"https://huggingface.co/{repo}/blob/main/config.json"


_MODELS = [
    ModelConfig(
        32,
        4096,
        32,
        14336,
        128256,
        kv_heads=8,
        gated_mlp=True,
        name="Llama 3 8B",
        explorers=("serving", "step"),
        aliases=("Meta-Llama-3-8B", "Llama 3.1 8B", "llama3-8b"),
        trains_with_dropout=False,
        source=Source(
            _hf("meta-llama/Meta-Llama-3-8B"),
            "num_hidden_layers 32, hidden_size 4096, num_attention_heads 32, num_key_value_heads "
            "8, intermediate_size 14336, vocab_size 128256, tie_word_embeddings false; "
            "8.03B parameters"
            "; no dropout: attention_dropout 0.0 (transformers' default where config.json "
            "omits it), the family's only dropout",
        ),
    ),
    ModelConfig(
        80,
        8192,
        64,
        28672,
        128256,
        kv_heads=8,
        gated_mlp=True,
        name="Llama 3 70B",
        explorers=("serving", "step"),
        aliases=("Meta-Llama-3-70B", "Llama 3.1 70B", "llama3-70b"),
        trains_with_dropout=False,
        source=Source(
            _hf("meta-llama/Meta-Llama-3-70B"),
            "num_hidden_layers 80, hidden_size 8192, num_attention_heads 64, num_key_value_heads "
            "8, intermediate_size 28672, vocab_size 128256, tie_word_embeddings false; "
            "70.6B parameters"
            "; no dropout: attention_dropout 0.0 (transformers' default where config.json "
            "omits it), the family's only dropout",
        ),
    ),
    ModelConfig(
        80,
        8192,
        64,
        28672,
        32000,
        kv_heads=8,
        gated_mlp=True,
        name="Llama 2 70B",
        aliases=("Llama-2-70b-hf", "llama2-70b"),
        trains_with_dropout=False,
        max_context=4096,
        source=Source(
            _hf("meta-llama/Llama-2-70b-hf"),
            "num_hidden_layers 80, hidden_size 8192, num_attention_heads 64, num_key_value_heads "
            "8, intermediate_size 28672, vocab_size 32000, max_position_embeddings 4096, "
            "tie_word_embeddings false; 69B parameters (MLPerf Inference's llama2-70b)"
            "; no dropout: attention_dropout 0.0 (transformers' default where config.json "
            "omits it), the family's only dropout (Touvron et al. 2023, arXiv "
            "2307.09288, section 2.2, list no dropout among the training hyperparameters)",
        ),
    ),
    ModelConfig(
        126,
        16384,
        128,
        53248,
        128256,
        kv_heads=8,
        gated_mlp=True,
        name="Llama 3.1 405B",
        explorers=("serving", "step"),
        aliases=("Llama 3 405B", "Meta-Llama-3.1-405B", "llama3-405b"),
        trains_with_dropout=False,
        max_context=131072,
        source=Source(
            _hf("meta-llama/Llama-3.1-405B"),
            "num_hidden_layers 126, hidden_size 16384, num_attention_heads 128, "
            "num_key_value_heads 8, intermediate_size 53248, vocab_size 128256, "
            "max_position_embeddings 131072 (Llama 3 paper, "
            f"{_LLAMA3}, Table 3: 126 layers, model dimension 16,384, FFN dimension 53,248, "
            "128 attention heads, 8 key/value heads); 405B parameters"
            "; no dropout: attention_dropout 0.0 (transformers' default where config.json "
            "omits it), the family's only dropout",
        ),
    ),
    ModelConfig(
        32,
        4096,
        32,
        14336,
        32000,
        kv_heads=8,
        gated_mlp=True,
        experts=8,
        experts_per_token=2,
        name="Mixtral 8x7B",
        explorers=("serving", "step"),
        aliases=("Mixtral-8x7B-v0.1", "mixtral"),
        trains_with_dropout=False,
        max_context=32768,
        source=Source(
            _hf("mistralai/Mixtral-8x7B-v0.1"),
            "num_hidden_layers 32, hidden_size 4096, num_attention_heads 32, num_key_value_heads "
            "8, intermediate_size 14336, vocab_size 32000, num_local_experts 8, "
            "num_experts_per_tok 2, max_position_embeddings 32768; Mistral AI: 46.7B total "
            "parameters, 12.9B used per token"
            "; no dropout: attention_dropout 0.0 (transformers' default where config.json "
            "omits it), the family's only dropout",
        ),
    ),
    ModelConfig(
        96,
        12288,
        96,
        4 * 12288,
        50257,
        tied_embeddings=True,
        name="GPT-3 175B",
        explorers=("step",),
        aliases=("GPT-3", "gpt3", "davinci"),
        max_context=2048,
        source=Source(
            _GPT3,
            "Brown et al., Table 2.1: GPT-3 175B, n_params 175.0B, n_layers 96, d_model 12288, "
            "n_heads 96, d_head 128; context window n_ctx = 2048 tokens (section 2.1); "
            "d_ff = 4 d_model; GPT-2's 50257-token vocabulary with the "
            "output head tied to the embedding",
        ),
    ),
    ModelConfig(
        118,
        18432,
        48,
        4 * 18432,
        256000,
        kv_heads=1,
        head_dim=256,
        gated_mlp=True,
        tied_embeddings=True,
        name="PaLM 540B",
        aliases=("PaLM",),
        trains_with_dropout=False,
        max_context=2048,
        source=Source(
            _PALM,
            "Chowdhery et al., Table 1 and section 2: 118 layers, d_model 18432, 48 heads of "
            "256 (attention width 12288), multi-query attention, SwiGLU with d_ff = 4 d_model, "
            "shared input-output embeddings, 256k vocabulary, no biases, sequence length 2048; "
            "540.35B parameters; section 2: parallel layers, y = x + MLP(LN(x)) + "
            'Attention(LN(x)); section 5, Training setup: "Dropout - The model was trained '
            'without dropout, although dropout of 0.1 is used for finetuning in most cases"',
        ),
        parallel_block=True,
    ),
    ModelConfig(
        128,
        25600,
        160,
        4 * 25600,
        51200,
        tied_embeddings=True,
        name="Megatron 1T",
        aliases=("Megatron 1008B",),
        source=Source(
            _MEGATRON,
            "Narayanan et al., Table 1: 1008B parameters, 160 attention heads, hidden size "
            "25600, 128 layers; vocabulary 51,200; d_ff = 4 h, output layer sharing the embedding "
            "(section 5.1: parameters 12 l h^2 (1 + 13/(12h) + (V + s)/(12 l h)))",
        ),
    ),
    ModelConfig(
        80,
        12288,
        96,
        4 * 12288,
        51200,
        tied_embeddings=True,
        name="Megatron 145.6B",
        aliases=("Megatron 146B",),
        source=Source(
            _MEGATRON,
            "Narayanan et al., Table 1: 145.6B parameters, 96 attention heads, hidden size "
            "12288, 80 layers; vocabulary 51,200; d_ff = 4 h, output layer sharing the embedding",
        ),
    ),
    ModelConfig(
        32,
        4096,
        32,
        14336,
        32000,
        kv_heads=8,
        gated_mlp=True,
        sliding_window=4096,
        name="Mistral 7B",
        aliases=("Mistral-7B-v0.1",),
        explorers=("serving",),
        trains_with_dropout=False,
        max_context=32768,
        source=Source(
            _hf("mistralai/Mistral-7B-v0.1"),
            "num_hidden_layers 32, hidden_size 4096, num_attention_heads 32, num_key_value_heads "
            "8, intermediate_size 14336, vocab_size 32000, sliding_window 4096, "
            "max_position_embeddings 32768, tie_word_embeddings false (Jiang et al., "
            "arXiv 2310.06825, Table 1: window_size 4096); Mistral AI: a 7.3B parameter model"
            "; no dropout: attention_dropout 0.0 (transformers' default where config.json "
            "omits it), the family's only dropout",
        ),
    ),
    ModelConfig(
        46,
        4608,
        32,
        36864,
        256000,
        kv_heads=16,
        head_dim=128,
        gated_mlp=True,
        tied_embeddings=True,
        sliding_window=4096,
        sliding_layers=23,
        global_every=2,
        sandwich_norms=True,
        name="Gemma 2 27B",
        aliases=("gemma-2-27b",),
        explorers=("serving",),  # the page's context slider stops at its 8,192 tokens
        trains_with_dropout=False,
        max_context=8192,
        source=Source(
            _hf("google/gemma-2-27b"),
            "model_type gemma2, num_hidden_layers 46, hidden_size 4608, num_attention_heads 32, "
            "num_key_value_heads 16, head_dim 128, intermediate_size 36864, vocab_size 256000, "
            "sliding_window 4096 (every other layer, starting with the first), "
            "max_position_embeddings 8192, tied embeddings; 27.2B parameters"
            "; no dropout: attention_dropout 0.0 (transformers' default where config.json "
            "omits it), the family's only dropout",
        ),
    ),
    ModelConfig(
        61,
        7168,
        128,
        2048,
        129280,
        head_dim=128,
        gated_mlp=True,
        experts=256,
        experts_per_token=8,
        q_lora_rank=1536,
        kv_lora_rank=512,
        qk_rope_head_dim=64,
        v_head_dim=128,
        shared_d_ff=2048,
        dense_layers=3,
        dense_d_ff=18432,
        mtp_layers=1,
        name="DeepSeek-V3",
        explorers=("serving",),
        aliases=("DeepSeek V3", "deepseek-v3-base"),
        trains_with_dropout=False,
        max_context=163840,
        source=Source(
            _hf("deepseek-ai/DeepSeek-V3"),
            "num_hidden_layers 61, hidden_size 7168, num_attention_heads 128, q_lora_rank "
            "1536, kv_lora_rank 512, qk_nope_head_dim 128, qk_rope_head_dim 64, v_head_dim "
            "128, n_routed_experts 256, num_experts_per_tok 8, n_shared_experts 1, "
            "moe_intermediate_size 2048, first_k_dense_replace 3, intermediate_size 18432, "
            "vocab_size 129280, max_position_embeddings 163840, tie_word_embeddings false, "
            "num_nextn_predict_layers 1; "
            "DeepSeek-V3 Technical Report (arXiv 2412.19437): 671B total parameters, 37B "
            "activated for each token; section 2.2: the multi-token-prediction module shares the "
            "embedding and output head; README_WEIGHTS.md of deepseek-ai/DeepSeek-V3: MTP "
            "modules 11.5B unique parameters, excluding the shared 0.9B Embedding and 0.9B "
            "output Head"
            "; no dropout: attention_dropout 0.0 (transformers' default where config.json "
            "omits it), the family's only dropout",
        ),
    ),
    ModelConfig(
        60,
        5120,
        128,
        1536,
        102400,
        head_dim=128,
        gated_mlp=True,
        experts=160,
        experts_per_token=6,
        q_lora_rank=1536,
        kv_lora_rank=512,
        qk_rope_head_dim=64,
        v_head_dim=128,
        shared_d_ff=2 * 1536,
        dense_layers=1,
        dense_d_ff=12288,
        name="DeepSeek-V2",
        aliases=("DeepSeek V2",),
        trains_with_dropout=False,
        max_context=163840,
        source=Source(
            _hf("deepseek-ai/DeepSeek-V2"),
            "num_hidden_layers 60, hidden_size 5120, num_attention_heads 128, q_lora_rank "
            "1536, kv_lora_rank 512, qk_nope_head_dim 128, qk_rope_head_dim 64, v_head_dim "
            "128, n_routed_experts 160, num_experts_per_tok 6, n_shared_experts 2, "
            "moe_intermediate_size 1536, first_k_dense_replace 1, intermediate_size 12288, "
            "vocab_size 102400; DeepSeek-V2 (arXiv 2405.04434): 236B total parameters, "
            "21B activated for each token"
            "; no dropout: attention_dropout 0.0 (transformers' default where config.json "
            "omits it), the family's only dropout",
        ),
    ),
]


def _name(model: ModelConfig) -> str:
    """The name of a catalog or registered model (`register_model` refuses one without)."""
    assert model.name is not None, "catalog and registered models are named"
    return model.name


#: name -> ModelConfig, in the order the book lists them.
MODELS: dict[str, ModelConfig] = {_name(m): m for m in _MODELS}
_USER_MODELS: dict[str, ModelConfig] = {}


#: While set, `get_model` looks names up here, not in the catalog: {_key(name): ModelConfig} of a
#: homework edition's frozen figures (roofline.exercises.editions). None: the catalog.
FROZEN_MODELS: contextvars.ContextVar[dict | None] = contextvars.ContextVar(
    "frozen_models", default=None
)


def _key(name: str) -> str:
    return re.sub(r"[\s_\-]+", "", name.lower())


def _index() -> dict[str, ModelConfig]:
    index = {}
    for model in list(MODELS.values()) + list(_USER_MODELS.values()):
        index[_key(_name(model))] = model
        for alias in model.aliases:
            index.setdefault(_key(alias), model)
    return index


def models_shown_in(explorer: str) -> tuple[str, ...]:
    """The catalog models whose entry offers them in `explorer` ("serving", "step"; the
    `ModelConfig.explorers` field), in book order. Registered models are not offered: the
    explorers' web pages are built from the catalog alone."""
    return tuple(m.name for m in _MODELS if explorer in m.explorers and m.name)


def list_models() -> list[str]:
    """Names of every model in the catalog (and any you registered), in book order."""
    return list(MODELS) + list(_USER_MODELS)


def get_model(name) -> ModelConfig:
    """Look a model up by name or alias, ignoring case, spaces, dashes and underscores.

    get_model("Llama 3 70B") and get_model("llama-3-70b") are the same. A `ModelConfig`
    passed in is returned as it is. An unknown name raises ValueError naming the closest.
    """
    if isinstance(name, ModelConfig):
        return name
    if not isinstance(name, str):
        raise TypeError(f"model name must be text such as 'Llama 3 70B', got {name!r}")
    frozen = FROZEN_MODELS.get()  # a homework edition's frozen figures, while one is read
    index = _index() if frozen is None else frozen
    key = _key(name)
    if key in index:
        return index[key]
    from .catalog import closest_names

    hint = closest_names(key, {k: m.name for k, m in index.items()}, list_models())
    raise ValueError(
        f"unknown model {name!r}.{hint} Or describe it: "
        "ModelConfig(layers, d_model, heads, d_ff, vocab, ...) or ModelConfig.from_hf_config(path)."
    )


def register_model(model: ModelConfig) -> ModelConfig:
    """Make your own named `ModelConfig` findable by `get_model` (for this Python session)."""
    if not isinstance(model, ModelConfig):
        raise TypeError("register_model takes a roofline.ModelConfig")
    if not model.name:
        raise ValueError("give the model a name= to register it")
    if model.name in MODELS:
        raise ValueError(f"{model.name!r} is a catalog model; give yours another name")
    _USER_MODELS[model.name] = model
    return model
