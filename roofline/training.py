"""A training step on the roofline: FLOPs per token, MFU, memory per chip in mixed precision.

FLOP convention (the PaLM paper's, Chowdhery et al. 2022, appendix B): a multiply-add is 2
FLOPs; the forward pass costs 2 FLOPs per matmul weight per token (`ModelConfig.matmul_params`:
every layer's matmuls and the output head, not the embedding lookup); the backward pass
costs twice the forward (the gradient with respect to the input and the one with respect
to the weights are one matmul each), so 6 per weight per token. Attention adds
12 x layers x attention width x sequence length per token (forward 4, backward 8: the two
matmuls Q K^T and A V of 2 x width x seq FLOPs each), counted over the whole square of
scores; `causal=True` halves it (only the lower triangle is computed, as FlashAttention's
benchmarks count). The attention blocks answer this
(`ModelConfig.attention_flops_per_token`): a sliding-window layer caps the keys at its
window, latent attention (DeepSeek) uses its query/key width d_nope + d_rope and value
width d_v. Recomputation (`recompute`): "full" (activation checkpointing of every
layer: Narayanan et al. 2021) runs each layer's forward again in the backward pass, so
layers cost 8 per weight instead of 6 (the output head is not recomputed); a number f from
0 to 1 recomputes a share f of the layers in full (PaLM's partial rematerialisation: its
HFU / MFU of 57.8 / 46.2 = 1.25 is less than full recomputation's); "selective"
(Korthikanti et al. 2022) recomputes only the attention core (4 x width x seq per layer
more). Model FLOPs (MFU) never count recomputation; hardware FLOPs (HFU) do.

Memory per parameter in mixed precision with Adam (`STATE_BYTES_PER_PARAM`): bf16 weights
2 bytes, bf16 gradients 2, and the optimizer's fp32 master weights 4 + Adam's first and
second moments 4 + 4 = 12: 16 bytes per parameter. Activations: Korthikanti et al.,
"Reducing Activation Recomputation in Large Transformer Models", arXiv 2205.05198, section
4.1 and Table 2, term by term for each block (`activation_bytes_per_layer`: a GPT layer gets
their 34 s b h exactly; grouped-query and latent attention, gated MLPs and mixtures of
experts their own terms).
"""

from __future__ import annotations

from .catalog import get_chip
from .models import ModelConfig, get_model
from .validate import check_size

__all__ = [
    "RECOMPUTE",
    "STATE_BYTES_PER_PARAM",
    "training_flops_per_token",
    "layer_training_flops_per_token",
    "mtp_training_flops_per_token",
    "mfu",
    "hfu",
    "training_state_bytes",
    "recompute_share",
    "recompute_for_ratio",
    "activation_bytes_per_layer",
]

RECOMPUTE = ("none", "selective", "full")
#: How activation memory is counted: "blocks" (each block's own terms) or "gpt-layer"
#: (Korthikanti et al.'s GPT-layer formula for every model).
ACTIVATION_CONVENTIONS = ("blocks", "gpt-layer")

#: Bytes per parameter a mixed-precision Adam training run keeps (Rajbhandari et al., "ZeRO",
#: arXiv 1910.02054, section 3.1, count 2 + 2 + 12 = 16 bytes the same way).
STATE_BYTES_PER_PARAM = {"weights": 2, "gradients": 2, "optimizer": 12}


def _model(model) -> ModelConfig:
    return get_model(model)


def _recompute(recompute):
    is_share = isinstance(recompute, (int, float)) and not isinstance(recompute, bool)
    if is_share and 0 <= recompute <= 1:
        return float(recompute)
    if is_share or recompute not in RECOMPUTE:
        raise ValueError(
            f"recompute is one of {', '.join(repr(r) for r in RECOMPUTE)} "
            "(activation recomputation) or the share of layers recomputed in full, a number "
            f"from 0 to 1 (PaLM's partial rematerialisation), got {recompute!r}"
        )
    return recompute


def recompute_share(recompute) -> float:
    """The share of layers whose forward pass is run again in the backward: 1 for "full",
    0 for "none" and "selective" (which repeats only the attention core), the number itself
    for a partial recomputation (a share of the layers checkpointed in full)."""
    recompute = _recompute(recompute)
    if isinstance(recompute, float):
        return recompute
    return 1.0 if recompute == "full" else 0.0


check_recompute = _recompute  # the public name other modules import


def training_flops_per_token(
    model, seq_len, recompute="none", causal=False, attention=True
) -> float:
    """FLOPs to train on one token (forward + backward, + recomputation): see the module
    docstring for the convention.

    6 x matmul_params + 3 x the attention blocks' forward score and value FLOPs
    (`ModelConfig.attention_flops_per_token`: 12 x layers x attention_width x seq_len for
    multi-head attention over the whole square, halved if `causal`, sliding-window layers
    capped at their window; left out if `attention=False`), + DeepSeek-V3's
    multi-token-prediction module (`mtp_training_flops_per_token`); recompute="full" adds one
    forward of the layers (2 x layer matmul weights + the forward attention), "selective"
    the forward attention.
    With recompute="full" this is Narayanan et al.'s Eq. 3 divided by the tokens in a batch.
    """
    m = _model(model)
    check_size("seq_len", seq_len)
    recompute = _recompute(recompute)
    head = m.vocab * m.d_model
    layer_weights = m.matmul_params - head
    # the attention blocks' score and value matmuls (4 x width x seq per layer for plain
    # attention over the whole square, sliding windows capped, latent attention's head sizes)
    attn_fwd = m.attention_flops_per_token(seq_len, causal) if attention else 0
    total = (
        6 * m.matmul_params
        + 3 * attn_fwd
        + mtp_training_flops_per_token(m, seq_len, recompute, causal, attention)
    )
    if recompute == "selective":
        return total + attn_fwd
    return total + recompute_share(recompute) * (2 * layer_weights + attn_fwd)


def mtp_training_flops_per_token(
    model, seq_len, recompute="none", causal=False, attention=True
) -> float:
    """FLOPs to train one token through DeepSeek-V3's multi-token-prediction module
    (`ModelConfig.mtp_layers` depths; 0 for other models): per depth one more layer like the
    last (`layer_training_flops_per_token`), the projection [2 D, D] (6 x 2 D^2) and the
    shared output head once more (6 x vocab x D; DeepSeek-V3 report, section 2.2: each depth
    predicts one more token through the shared head). The module is trained with the model,
    so MFU counts it too."""
    m = _model(model)
    if not m.mtp_layers:
        return 0.0
    layer = layer_training_flops_per_token(m.layers_in_order()[-1], seq_len, recompute, causal)
    if not attention:
        core = m.layers_in_order()[-1].attention.core_flops_per_token(seq_len, causal)
        layer -= (3 + (1 if recompute == "selective" else recompute_share(recompute))) * core
    return m.mtp_layers * (layer + 6 * (2 * m.d_model**2 + m.vocab * m.d_model))


def layer_training_flops_per_token(layer, seq_len, recompute="none", causal=False) -> float:
    """FLOPs to train on one token in one `roofline.models.Layer` (from
    `ModelConfig.layers_in_order()`), the convention of `training_flops_per_token`: 6 per
    active matmul weight + 3 x its attention's forward score and value FLOPs, plus one forward
    of the layer for the recomputed share ("selective": the attention core only). The model's
    total is the sum over its layers + 6 x vocab x d_model for the output head."""
    check_size("seq_len", seq_len)
    recompute = _recompute(recompute)
    attn_fwd = layer.attention.core_flops_per_token(seq_len, causal)
    total = 6 * layer.matmul_params + 3 * attn_fwd
    if recompute == "selective":
        return total + attn_fwd
    return total + recompute_share(recompute) * (2 * layer.matmul_params + attn_fwd)


def recompute_for_ratio(model, seq_len, hfu_over_mfu, causal=False) -> float:
    """The share of layers recomputed in full that makes hardware FLOPs / model FLOPs equal a
    paper's stated HFU / MFU (PaLM: 57.8 / 46.2 = 1.25, its partial rematerialisation;
    full recomputation would give about 1.33): (ratio - 1) x model FLOPs / the FLOPs one
    full recomputation adds, per token. Raises if the ratio needs more than full."""
    check_size("hfu_over_mfu", hfu_over_mfu)
    model_flops = training_flops_per_token(model, seq_len, "none", causal)
    extra = training_flops_per_token(model, seq_len, "full", causal) - model_flops
    share = (hfu_over_mfu - 1) * model_flops / extra
    if not 0 <= share <= 1:
        raise ValueError(
            f"an HFU / MFU of {hfu_over_mfu} needs {share:.2f} of the layers recomputed; "
            "it must lie between 1 (none) and full recomputation's "
            f"{1 + extra / model_flops:.3f}"
        )
    return share


def _peak(chip, dtype):
    return get_chip(chip).peak_flops_per_s(dtype)


def mfu(
    model, tokens_per_s, chip, n_chips, seq_len, dtype="bf16", attention=True, causal=False
) -> float:
    """Model FLOPs utilisation as the PaLM paper defines it: the FLOPs the model needs per
    token (no recomputation) x tokens per second, over n_chips x the chip's dense peak in
    `dtype` (the dtype the matmuls run in). A fraction (0.462 = 46.2 %)."""
    check_size("tokens_per_s", tokens_per_s)
    check_size("n_chips", n_chips)
    flops = training_flops_per_token(model, seq_len, "none", causal, attention)
    return flops * tokens_per_s / (n_chips * _peak(chip, dtype))


def hfu(
    model, tokens_per_s, chip, n_chips, seq_len, dtype="bf16", recompute="full", causal=False
) -> float:
    """Hardware FLOPs utilisation: as `mfu`, but counting the recomputed FLOPs too."""
    check_size("tokens_per_s", tokens_per_s)
    check_size("n_chips", n_chips)
    flops = training_flops_per_token(model, seq_len, recompute, causal)
    return flops * tokens_per_s / (n_chips * _peak(chip, dtype))


def training_state_bytes(params, fsdp=1, zero_stage=3) -> dict:
    """Bytes per chip of weights, gradients and optimizer state for `params` parameters held
    by this chip's model-parallel group member (after tensor, pipeline and expert splits).

    Mixed precision with Adam: 2 + 2 + 12 bytes per parameter (`STATE_BYTES_PER_PARAM`).
    Fully sharded data parallelism over `fsdp` chips divides by fsdp what ZeRO's stage
    shards (Rajbhandari et al. 2019): stage 1 the optimizer state, stage 2 also the
    gradients, stage 3 (= FSDP) also the weights, which are all-gathered layer by layer
    when used (the gathered layer's transient copy is not counted).
    """
    check_size("params", params)
    check_size("fsdp", fsdp)
    if zero_stage not in (0, 1, 2, 3):
        raise ValueError(f"zero_stage is 0, 1, 2 or 3, got {zero_stage!r}")
    sharded = {
        "optimizer": zero_stage >= 1,
        "gradients": zero_stage >= 2,
        "weights": zero_stage >= 3,
    }
    return {
        part: params * per / (fsdp if sharded[part] else 1)
        for part, per in STATE_BYTES_PER_PARAM.items()
    }


def activation_bytes_per_layer(
    model,
    seq_len,
    micro_batch=1,
    tp=1,
    recompute="none",
    sequence_parallel=True,
    fused_attention=True,
    layers=None,
    convention="blocks",
) -> float:
    """Bytes of activations one layer keeps for the backward pass, 16-bit activations,
    averaged over `layers` (`roofline.models.Layer`s from `ModelConfig.layers_in_order()`;
    default every layer of the model; a pipeline stage passes its own).

    Korthikanti et al. 2022 ("Reducing Activation Recomputation in Large Transformer
    Models", arXiv 2205.05198), section 4.1 and Table 2, with s = seq_len, b = micro_batch
    (sequences), h = d_model, a = heads, t = tp, for a GPT layer (multi-head attention, d_ff =
    4h, dropout):
      none:      s b h (34 + 5 a s / h) / t with sequence parallelism
                 (s b h (10 + 24/t + 5 a s/(h t)) without);
      selective: 34 s b h / t (s b h (10 + 24/t) without): the attention scores are recomputed;
      full:      2 s b h: only each layer's input is kept (divided by t with sequence
                 parallelism, where each chip keeps its 1/t of the sequence).
    Every other layer is counted term by term by its blocks (`Attention` and
    `MLP.activation_bytes_per_token`): grouped-query attention keeps H_kv heads of K and V,
    a gated MLP three d_ff-wide tensors instead of two, a mixture of experts each routed
    expert's copy of the token and its d_ff-wide tensors for the experts_per_token experts
    it goes through (and its shared experts'), latent attention its compressed latents as
    well as the up-projected queries, keys and values. Dropout masks (1 byte per element
    after attention and after the MLP, and the scores' mask and dropout output) only for a
    model that trains with dropout (`ModelConfig.trains_with_dropout`: GPT-3 and Megatron's
    models keep Korthikanti's 34; Llama, PaLM, DeepSeek, Mistral, Gemma train without, 2 h
    bytes per token less: a GPT-shaped layer without dropout keeps 32 s b h / t).
    The 5 a s^2 b term is the attention scores, softmax and dropout of the scores: a fused
    attention kernel (FlashAttention, `fused_attention=True`, the default) never stores
    them, so it is dropped (then "none" and "selective" keep the same bytes).
    convention="gpt-layer": Korthikanti's GPT-layer formula above for every model, whatever
    its blocks (34 s b h / t and the 5 a s^2 b scores; homework part 4 states it so).
    """
    if convention not in ACTIVATION_CONVENTIONS:
        raise ValueError(
            f"convention is {' or '.join(repr(c) for c in ACTIVATION_CONVENTIONS)} (block by "
            f"block, or Korthikanti's GPT-layer formula for every model), got {convention!r}"
        )
    m = _model(model)
    for name, value in (("seq_len", seq_len), ("micro_batch", micro_batch), ("tp", tp)):
        check_size(name, value)
    recompute = _recompute(recompute)
    if isinstance(recompute, float):  # a share f of the layers keeps only its input
        args = (m, seq_len, micro_batch, tp)
        kw = dict(
            sequence_parallel=sequence_parallel,
            fused_attention=fused_attention,
            layers=layers,
            convention=convention,
        )
        full = activation_bytes_per_layer(*args, "full", **kw)  # type: ignore[arg-type]
        none = activation_bytes_per_layer(*args, "none", **kw)  # type: ignore[arg-type]
        return recompute * full + (1 - recompute) * none
    s, b, h, t = seq_len, micro_batch, m.d_model, tp
    if recompute == "full":
        return 2 * s * b * h / (t if sequence_parallel else 1)
    keep_scores = recompute == "none" and not fused_attention
    if convention == "gpt-layer":
        scores = 5 * m.heads * s / (h * t) if keep_scores else 0
        per = 34 / t if sequence_parallel else 10 + 24 / t
        return s * b * h * (per + scores)
    layers = m.layers_in_order() if layers is None else tuple(layers)
    if not layers:
        raise ValueError("layers: give at least one roofline.models.Layer (or None: all)")
    kinds: dict = {}
    for layer in layers:  # the distinct (attention, MLP) pairs and how many layers have each
        kinds[(layer.attention, layer.mlp)] = kinds.get((layer.attention, layer.mlp), 0) + 1
    per_token = [
        (n, layer.activation_bytes_per_token(s, t, sequence_parallel, keep_scores))
        for (n, layer) in ((n, _first(layers, key)) for key, n in kinds.items())
    ]
    if len(per_token) == 1:  # one kind of layer: no averaging (exact)
        return s * b * per_token[0][1]
    return s * b * sum(n * v for n, v in per_token) / len(layers)


def _first(layers, key):
    return next(layer for layer in layers if (layer.attention, layer.mlp) == key)
