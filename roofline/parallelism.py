"""A training step spread over many chips: data, fully sharded, tensor, pipeline and expert
parallelism, each resource's time per step, memory per chip and whether it fits.

`training_step(model, chip, n_chips, tokens_per_step, seq_len, layout)` with `layout` the
degrees {"dp", "fsdp", "tp", "cp", "pp", "ep"} (missing ones are 1; their product is n_chips):

- dp: data parallel (plain replicas: every chip keeps the whole weights, gradients and
  optimizer state of its model-parallel slice; gradients are all-reduced once per step).
  `zero_stage=1` shards the optimizer state over the data-parallel group (dp x cp x ep for
  the dense part, dp x cp for the experts: the chips its gradients are reduced over;
  Megatron-LM's distributed optimizer), `zero_stage=2` the gradients too (Rajbhandari et al.
  2019): the gradients are reduce-scattered (ZeRO-2: every micro-batch's) and the updated
  bf16 weights all-gathered; `grad_dtype` says whether gradients are kept and reduced in
  bf16 or fp32;
- fsdp: fully sharded data parallel (ZeRO stage 3): weights, gradients and optimizer state
  are divided by fsdp; per micro-batch each layer's weights are all-gathered for the forward
  and again for the backward pass, and the gradients are reduce-scattered;
- tp: tensor parallel, Megatron-style (Shoeybi et al. 2019) with sequence parallelism
  (Korthikanti et al. 2022): each layer's matmul weights and activations are split tp ways;
  per layer and micro-batch 2 all-reduces (or all-gather + reduce-scatter pairs: the same
  bytes) of the [micro-batch x seq, d_model] activations forward, 2 backward, 2 more with
  full recomputation;
- cp: context parallel (ring attention, Liu et al. 2023; Megatron-LM's context
  parallelism): each chip holds seq_len / cp tokens of every sequence and passes its keys
  and values round the cp ring (forward once, backward K/V and their gradients), a link
  time that overlaps with the attention math like every other resource;
- pp: pipeline parallel, 1F1B schedule (Narayanan et al. 2021): each chip holds
  ceil(layers / pp) layers; the bubble is (pp - 1) / microbatches of the busiest stage's
  time, (pp - 1) / (v x microbatches) with the interleaved schedule of `virtual_stages` = v
  model chunks per stage (which sends v x as many activations); the math time is the
  busiest stage's (the last stage also runs the output head), and so is the memory: the
  stage with the most bytes, each holding its own layers' weights, gradients, optimizer
  state and activations (the first also the embedding and its dropout mask, the last the
  output head, one micro-batch's fp32 logits and DeepSeek-V3's multi-token-prediction
  module), stage i keeping min(pp - i, microbatches) micro-batches (interleaved: Megatron-LM's
  warm-up count, `_Plan.stage_microbatches_held`);
- ep: expert parallel (mixture of experts only): the experts are divided ep ways, each chip
  sees different tokens (so the non-expert gradients are reduced over dp x ep), and every
  MoE layer does an all-to-all of the routed tokens to their experts and back, forward and
  backward.

Where the chips are: `roofline.topology` (the one model of the machine). The axes are laid
out innermost first in the order tp, cp, ep, fsdp, pp, dp (tensor parallelism on the fastest
links), each axis's chips the product of the inner degrees apart. The job's chips form slices
of the shape the vendor sells (a TPU job of n chips: one slice of n up to a pod, else equal
slices; `slice_chips` sets them, e.g. MaxText's DCN axes; `slice_shape` names a slice's own
shape, e.g. "8x16x48", whose axes a layout axis of the same degree takes whole) and NVLink
domains of 8 GPUs; an
axis whose chips sit in one slice uses its interconnect (NVSwitch: all the chip's links at
once; a TPU slice: the physical axes the group spans, each a bidirectional ring where it
wraps round and a line where not, several at once in proportion to their bandwidth); an axis
that leaves the slice uses the data-centre network: one NIC of `network_bytes_per_s` (one way)
per chip into a non-blocking switched fabric (a fat tree), costed as a "switch" with one link
per chip (the same all-reduce time as a ring; an all-to-all sends each chip's share once), in
two levels when several members share a slice. Collective costs come from
`roofline.collectives` (bandwidth terms, one-way link rates, no per-hop latency; on a
switch or a wrapped axis a lower bound, on an unwrapped line longer than 2 the time of
reduce-scatter + all-gather, the scaling book's cost model, which a pipelined algorithm using
both directions of each link could beat by up to 1.5x).

Times are per step and per chip, at the datasheet's dense peak (FLOPs counted as in
`roofline.training`, including recomputation: hardware FLOPs) and full memory bandwidth.
With a pipeline each resource's time is the busiest stage's for that resource: the math the
stage with the most FLOPs, the HBM traffic and the FSDP / data-parallel collectives the stage
with the most parameters and activations of its own (`_stage_slices`: the first holds the
embedding, the last the output head, DeepSeek-V3's middle stages four MoE layers), the TP,
CP and EP collectives the stage with the most (MoE) layers. Every stage must finish its own
work before the step ends, so the step is at least the largest of these; the overlapped
maximum over resources of each resource's busiest stage equals the largest, over the stages,
of each stage's own largest resource (maxima commute): no stage has to be chosen. The bubble
and the exposed data-parallel reduction are added to it separately; the exposure is counted
on the first stage's window (its last backward ends the step) even when another stage holds
more parameters (a later stage's window is longer, so that term may overstate by the few
parameters the embedding and head differ by). Not counted: the all-reduce of a tied
embedding's gradients between the first and last stage (about 6 ms on MLPerf GPT-3's 512
H100s, beside a 419 ms data-parallel reduce), and DeepSeek-V3's copy of the embedding on
its last stage for the multi-token-prediction module (that stage is not the busiest).
Overlap (`t_lower`): every resource runs at the same time as every other, except the
pipeline bubble, which nothing fills, and the data-parallel reduction beyond what it can
hide behind: the last micro-batch's backward (the first pipeline stage finishes its
backward last), plus the next step's first forward for ZeRO's weight all-gather, plus every
micro-batch's backward for ZeRO-2's per-micro-batch reduce-scatters; `t_upper` adds
everything up.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field

from .catalog import get_chip
from .dtypes import canonical_dtype
from .models import ModelConfig, get_model
from .topology import Route, collective_seconds, job_slice_chips, parse_slice_shape, route
from .training import (
    STATE_BYTES_PER_PARAM,
    activation_bytes_per_layer,
    check_recompute,
    layer_training_flops_per_token,
    mtp_training_flops_per_token,
    recompute_share,
    training_flops_per_token,
)

__all__ = ["LAYOUT_AXES", "parse_layout", "TrainingStep", "training_step"]

#: Parallelism degrees, innermost (fastest links) first.
LAYOUT_AXES = ("tp", "cp", "ep", "fsdp", "pp", "dp")
_AXIS_ALIASES = {
    "tp": "tp",
    "tensor": "tp",
    "mp": "tp",
    "model": "tp",
    "cp": "cp",
    "context": "cp",
    "ep": "ep",
    "expert": "ep",
    "experts": "ep",
    "fsdp": "fsdp",
    "zero": "fsdp",
    "zero3": "fsdp",
    "sharded": "fsdp",
    "pp": "pp",
    "pipeline": "pp",
    "dp": "dp",
    "data": "dp",
}


def _whole(name, value) -> int:
    if isinstance(value, str):
        value = value.strip()
        if not value.isdigit():
            raise ValueError(f"{name} must be a whole number, got {value!r}")
        value = int(value)
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise ValueError(f"{name} must be a whole number, 1 or more, got {value!r}")
    return value


def parse_layout(layout, n_chips=None) -> dict:
    """{"dp": .., "fsdp": .., "tp": .., "cp": .., "pp": .., "ep": ..} from a mapping or text such as
    "dp=64,tp=8,pp=16" (missing degrees are 1). With `n_chips`, their product must equal it."""
    if isinstance(layout, str):
        pairs = [p for p in re.split(r"[,\s]+", layout.strip()) if p]
        items = []
        for pair in pairs:
            if "=" not in pair:
                raise ValueError(
                    f"write the layout as axis=degree pairs, e.g. dp=64,tp=8; got {pair!r}"
                )
            key, value = pair.split("=", 1)
            items.append((key, value))
    elif isinstance(layout, dict):
        items = list(layout.items())
    else:
        raise TypeError(f"layout is a mapping such as {{'dp': 64, 'tp': 8}}, got {layout!r}")
    out = dict.fromkeys(LAYOUT_AXES, 1)
    for key, value in items:
        axis = _AXIS_ALIASES.get(str(key).strip().lower())
        if axis is None:
            raise ValueError(
                f"unknown parallelism {key!r} in the layout; use {', '.join(LAYOUT_AXES)}"
            )
        out[axis] = _whole(f"layout {axis}", value)
    if n_chips is not None:
        product = math.prod(out.values())
        if product != n_chips:
            written = " x ".join(f"{a}={out[a]}" for a in LAYOUT_AXES if out[a] > 1) or "1"
            raise ValueError(
                f"the layout's degrees multiply to {product} ({written}), not to the "
                f"{n_chips} chips; make dp x fsdp x tp x cp x pp x ep = {n_chips}"
            )
    return out


@dataclass(frozen=True)
class TrainingStep:
    """The roofline of one training step on every chip: times per resource and memory.

    `times`: resource -> seconds per step, the resources being "math", "HBM" (the chip's
    memory traffic), "TP", "EP", "FSDP", "DP", "PP" (each parallel axis in use: its
    collectives) and "bubble" (the pipeline's idle time, when pp > 1); `kinds`: resource ->
    "compute", "memory", "link" or "bubble"; `labels`: resource -> words for people, naming
    the link ("TP all-reduces (NVLink 4)").
    `memory`: bytes per chip of weights, gradients, optimizer state and activations.
    """

    model: ModelConfig
    chip_name: str
    n_chips: int
    layout: dict
    tokens_per_step: int
    seq_len: int
    dtype: str
    recompute: str
    microbatches: int
    micro_batch: int
    times: dict
    kinds: dict
    labels: dict
    memory: dict
    memory_capacity_bytes: float
    peak_flops_per_s: float
    model_flops_per_chip: float
    hardware_flops_per_chip: float
    assumptions: tuple = field(default=(), repr=False)
    dp_exposed_s: float = 0.0
    zero_stage: int = 0
    virtual_stages: int = 1
    grad_dtype: str = "bf16"
    microbatches_note: str = ""

    @property
    def t_lower(self) -> float:
        """Best case: every resource overlapped with every other, plus the bubble (which
        nothing fills) and the part of the data-parallel reduction (`dp_exposed_s`) that
        outlasts the compute it can hide behind (the last micro-batch's backward)."""
        busy = [t for r, t in self.times.items() if self.kinds[r] != "bubble" and r != "DP"]
        return max(busy) + self.times.get("bubble", 0.0) + self.dp_exposed_s

    @property
    def t_upper(self) -> float:
        """No overlap at all: the sum of every time."""
        return sum(self.times.values())

    @property
    def slowest(self) -> str:
        """The resource (other than the bubble) that takes longest."""
        busy = {r: t for r, t in self.times.items() if self.kinds[r] != "bubble"}
        return max(busy, key=lambda resource: busy[resource])

    @property
    def bound(self) -> str:
        """ "compute", "memory" or "link": the kind of the slowest resource."""
        return self.kinds[self.slowest]

    @property
    def memory_bytes(self) -> float:
        """Everything a chip holds: weights + gradients + optimizer state + activations."""
        return sum(self.memory.values())

    @property
    def fits(self) -> bool:
        """True when `memory_bytes` is at most the chip's memory capacity."""
        return self.memory_bytes <= self.memory_capacity_bytes

    @property
    def mfu_ceiling(self) -> float:
        """The highest MFU this step can reach: model FLOPs per chip / (t_lower x peak)."""
        return self.model_flops_per_chip / (self.t_lower * self.peak_flops_per_s)

    @property
    def tokens_per_s(self) -> float:
        """Tokens per second at the best-case step time."""
        return self.tokens_per_step / self.t_lower

    def limits(self) -> str:
        """In words, what keeps the MFU ceiling below 100 % (and whether the step fits)."""
        reasons = []
        t_math = self.times["math"]
        if self.hardware_flops_per_chip > self.model_flops_per_chip * 1.0001:
            share = 1 - self.model_flops_per_chip / self.hardware_flops_per_chip
            reasons.append(f"recomputation ({share:.0%} of the math is repeated work)")
        if self.slowest != "math":
            slow = self.labels[self.slowest]
            reasons.append(f"{slow} takes {self.times[self.slowest] / t_math:.2f} x the math")
        if self.dp_exposed_s > 0.005 * t_math:
            reasons.append(
                f"{self.labels['DP']} outlasts the last micro-batch's backward by "
                f"{self.dp_exposed_s / t_math:.0%} of the math time"
            )
        bubble = self.times.get("bubble", 0.0)
        if bubble > 0:
            reasons.append(f"the pipeline bubble adds {bubble / t_math:.0%} of the math time")
        if not self.fits:
            from .units import format_bytes

            reasons.append(
                f"memory: {format_bytes(self.memory_bytes)} per chip does not fit in "
                f"{format_bytes(self.memory_capacity_bytes)} (shard with fsdp, tp or pp, "
                "shard the optimizer state with zero_stage=1 or 2, recompute activations, "
                "or pass more microbatches=)"
            )
        if self.microbatches_note:
            reasons.append(self.microbatches_note)
        return "; ".join(reasons) if reasons else "nothing: the math alone sets the time"

    def to_dict(self) -> dict:
        """Every figure in SI base units, for JSON."""
        return {
            "model": self.model.label,
            "model_config": self.model.to_dict(),
            "chip": self.chip_name,
            "n_chips": self.n_chips,
            "layout": dict(self.layout),
            "tokens_per_step": self.tokens_per_step,
            "seq_len": self.seq_len,
            "dtype": self.dtype,
            "recompute": self.recompute,
            "microbatches": self.microbatches,
            "zero_stage": self.zero_stage,
            "virtual_stages": self.virtual_stages,
            "grad_dtype": self.grad_dtype,
            "dp_exposed_s": self.dp_exposed_s,
            "micro_batch_sequences": self.micro_batch,
            "times_s": dict(self.times),
            "kinds": dict(self.kinds),
            "labels": dict(self.labels),
            "t_lower_s": self.t_lower,
            "t_upper_s": self.t_upper,
            "bound": self.bound,
            "slowest": self.slowest,
            "memory_bytes": dict(self.memory),
            "memory_total_bytes": self.memory_bytes,
            "memory_capacity_bytes": self.memory_capacity_bytes,
            "fits": self.fits,
            "mfu_ceiling": self.mfu_ceiling,
            "tokens_per_s": self.tokens_per_s,
            "limits": self.limits(),
            "assumptions": list(self.assumptions),
        }

    def summary(self):
        """Times, bounds, memory and the MFU ceiling with units, as a `roofline.display.Summary`."""
        from .display import Summary
        from .units import format_bytes, format_time

        rows = [(self.labels[r], format_time(t)) for r, t in self.times.items()]
        rows.append(("lower bound (overlap)", format_time(self.t_lower)))
        rows.append(("upper bound (no overlap)", format_time(self.t_upper)))
        rows.append(("bound", f"{self.bound}-bound ({self.slowest} takes longest)"))
        for part, nbytes in self.memory.items():
            rows.append((f"memory: {part}", format_bytes(nbytes)))
        verdict = "fits" if self.fits else "DOES NOT FIT"
        rows.append(
            (
                "memory per chip",
                f"{format_bytes(self.memory_bytes)} of {format_bytes(self.memory_capacity_bytes)} ({verdict})",
            )
        )
        rows.append(("throughput (best case)", f"{self.tokens_per_s:,.0f} tokens/s"))
        rows.append(("MFU ceiling", f"{self.mfu_ceiling:.1%}"))
        rows.append(("what limits it", self.limits()))
        layout = ", ".join(f"{a}={self.layout[a]}" for a in LAYOUT_AXES if self.layout[a] > 1)
        title = (
            f"Training step: {self.model.label} on {self.n_chips} x {self.chip_name} "
            f"({layout or 'one chip'}), {self.tokens_per_step:,} tokens of {self.seq_len}"
        )
        return Summary(title, rows)

    def __str__(self) -> str:
        return self.summary().text()

    def __repr__(self) -> str:
        return self.summary().text()

    def _repr_html_(self) -> str:
        return self.summary().html()


def _batch(tokens_per_step, seq_len, layout):
    """Sequences per model replica, checked to divide (the cp chips of a replica share its
    sequences, each holding 1/cp of every sequence's tokens)."""
    tokens_per_step, seq_len = (
        _whole("tokens_per_step", tokens_per_step),
        _whole("seq_len", seq_len),
    )
    if tokens_per_step % seq_len:
        raise ValueError(
            f"tokens_per_step ({tokens_per_step:,}) is not a whole number of sequences of "
            f"seq_len {seq_len:,}; make it a multiple of {seq_len:,}"
        )
    if seq_len % layout["cp"]:
        raise ValueError(
            f"cp={layout['cp']} must divide the sequence length {seq_len:,} (each chip of the "
            "context-parallel group holds seq_len / cp tokens of every sequence)"
        )
    sequences = tokens_per_step // seq_len
    replicas = layout["dp"] * layout["fsdp"] * layout["ep"]
    if sequences % replicas:
        raise ValueError(
            f"{sequences:,} sequences per step do not split evenly over dp x fsdp x ep = "
            f"{replicas} data-parallel replicas; use a batch that is a multiple of "
            f"{replicas * seq_len:,} tokens"
        )
    return sequences // replicas


def _check_microbatches(per_replica, microbatches, layout, virtual_stages) -> int:
    microbatches = _whole("microbatches", microbatches)
    if per_replica % microbatches:
        raise ValueError(
            f"each replica's {per_replica} sequences do not split into {microbatches} "
            "micro-batches; pick a divisor"
        )
    if virtual_stages > 1 and microbatches % layout["pp"]:
        raise ValueError(
            f"the interleaved schedule (virtual_stages={virtual_stages}) runs micro-batches in "
            f"groups of pp = {layout['pp']}: make microbatches ({microbatches}) a multiple of "
            f"{layout['pp']} (Megatron-LM's rule)"
        )
    return microbatches


def _check_model_split(m: ModelConfig, layout, virtual_stages):
    if layout["ep"] > 1 and (not m.is_moe or m.experts % layout["ep"]):
        raise ValueError(
            f"ep={layout['ep']} needs a mixture of experts whose {m.experts} expert(s) "
            "divide evenly; use ep=1 for a dense model"
        )
    if m.heads % layout["tp"]:
        raise ValueError(f"tp={layout['tp']} must divide the {m.heads} attention heads")
    chunks = layout["pp"] * virtual_stages
    if chunks > m.layers:
        what = "pipeline stages" if virtual_stages == 1 else "pp x virtual_stages model chunks"
        raise ValueError(f"{chunks} {what} are more than the {m.layers} layers")
    if virtual_stages > 1 and layout["pp"] == 1:
        raise ValueError("virtual_stages > 1 interleaves a pipeline: it needs pp > 1")


@dataclass(frozen=True)
class _Plan:
    """What every per-resource formula needs: the model, the layout and the batch split."""

    m: ModelConfig
    layout: dict
    seq_len: int
    recompute: str
    microbatches: int
    micro_batch: int
    fused_attention: bool
    zero_stage: int = 0
    virtual_stages: int = 1
    grad_bytes: int = 2
    expert_nodes_per_token: int | None = None
    activations: str = "blocks"

    @property
    def layers_here(self) -> int:
        """Layers on the busiest pipeline stage (the first stages take the remainder)."""
        return math.ceil(self.m.layers / self.layout["pp"])

    @property
    def data_group(self) -> int:
        """Chips that hold the same dense weights and see different tokens: dp x cp x ep
        (fsdp apart: it shards instead)."""
        return self.layout["dp"] * self.layout["cp"] * self.layout["ep"]

    def stage_activation_bytes(self) -> list[float]:
        """Bytes of activations each pipeline stage keeps at once (one chip of it): its
        layers' and the first stage's embedding's per micro-batch x the micro-batches 1F1B
        keeps on it (`stage_microbatches_held`), and on the last stage the output layer's
        for one micro-batch (`output_layer_bytes`: the last stage runs each micro-batch's
        backward straight after its forward, so no two micro-batches' logits coexist)."""
        layers = self.stage_layer_activations_per_microbatch()
        held = self.stage_microbatches_held()
        embedding, output = self.embedding_bytes(), self.output_layer_bytes()
        out = [acts * n for acts, n in zip(layers, held)]
        if embedding:
            out[0] += embedding * held[0]
        if output:
            out[-1] += output
        return out

    def stage_activations_per_microbatch(self) -> list[float]:
        """Bytes of activations each stage (one chip of it) writes in the forward and reads
        in the backward per micro-batch: its layers' (`stage_layer_activations_per_microbatch`),
        the first stage's embedding dropout mask and the last stage's output layer."""
        out = self.stage_layer_activations_per_microbatch()
        out[0] += self.embedding_bytes()
        out[-1] += self.output_layer_bytes()
        return out

    def _tokens_here(self) -> int:
        """Tokens of one micro-batch on one chip of the context-parallel group: s x b."""
        return self.seq_len // self.layout["cp"] * self.micro_batch

    def output_layer_bytes(self) -> float:
        """Bytes the output layer keeps for the backward pass per micro-batch, on one chip of
        the last stage (Korthikanti et al. 2022, section 4.3; Megatron-LM's
        `theoretical_memory_usage.py` counts the same 4 s b h (1 + v / h) / t): the final
        norm's input and the output projection's input, 2 bytes each of s x b x h stored
        sequence-parallel (2 s b h / t each), and the logits of the cross-entropy in fp32,
        4 s b v / t (the projection is split over the vocabulary, t ways). Assumed: bf16
        activations and an fp32 softmax kept for the backward (Megatron's vocabulary-parallel
        cross-entropy); a fused or chunked cross-entropy (Liger, Apple's Cut Cross-Entropy)
        keeps far less. Kept under any recomputation (only the layers are recomputed).
        Counted with the "blocks" convention only: "gpt-layer" is Korthikanti's per-layer
        formula alone, as homework part 4 states it. s = seq_len / cp, b the micro-batch.
        DeepSeek-V3's multi-token-prediction depths each end in the shared head and its own
        cross-entropy (its report, section 2.2): 1 + mtp_layers such sets."""
        if self.activations != "blocks":
            return 0.0
        sb = self._tokens_here()
        one = (4 * sb * self.m.d_model + 4 * sb * self.m.vocab) / self.layout["tp"]
        return one * (1 + self.m.mtp_layers)

    def embedding_bytes(self) -> float:
        """Bytes the input embedding keeps per micro-batch on one chip of the first stage:
        its dropout mask, 1 byte per element of s x b x h, split t ways by sequence
        parallelism (Korthikanti et al. 2022, section 4.3; Megatron-LM's estimate counts it
        too), only for a model trained with dropout (`trains_with_dropout`); the embedding's
        output itself is the first layer's input, which that layer counts. The token ids
        (8 bytes a token in Megatron-LM's estimate) are left out. "blocks" convention only."""
        if self.activations != "blocks" or not self.m.trains_with_dropout:
            return 0.0
        return self._tokens_here() * self.m.d_model / self.layout["tp"]

    def stage_microbatches_held(self) -> list[float]:
        """Micro-batches' worth of its layers' activations stage i keeps at once, as
        Megatron-LM's schedules run (`megatron/core/pipeline_parallel/schedules.py`): 1F1B
        runs pp - i - 1 warm-up forwards, then one forward and one backward at a time, so
        stage i keeps min(pp - i, microbatches) (the last stage 1: each backward follows its
        forward at once). The interleaved schedule (v = virtual_stages model chunks a stage,
        each 1/v of its layers) runs 2 (pp - i - 1) + (v - 1) pp warm-up chunk forwards (at most
        all m v: Megatron-LM since Nov 2024, commit 4295be1a6c, has no special case for m = pp),
        so it keeps min(that + 1, m v) chunks, / v in whole
        stages: pp + (pp - 1) / v on the first stage (Korthikanti et al. 2022, section 4.2.3:
        pp x (1 + (pp - 1) / (pp v))), pp - (pp - 1) / v on the last, not 1."""
        pp, micro, v = self.layout["pp"], self.microbatches, self.virtual_stages
        if v == 1:
            return [float(min(pp - i, micro)) for i in range(pp)]
        warmup = [2 * (pp - i - 1) + (v - 1) * pp for i in range(pp)]
        return [min(w + 1, micro * v) / v for w in warmup]

    def stage_layer_activations_per_microbatch(self) -> list[float]:
        """Bytes of activations each pipeline stage's layers (one chip of it) keep for one
        micro-batch: its own units (`_stage_units`: layers, and DeepSeek-V3's
        multi-token-prediction depths counted as one more layer like the last), each
        `activation_bytes_per_layer` (Korthikanti et al.'s terms, block by block, for this
        chip's seq_len / cp tokens of each sequence: a DeepSeek-V3 stage of 4 MoE layers
        keeps more than the first, whose 3 dense layers keep less). Layers all alike,
        interleaved chunks or the GPT-layer convention: the model's average layer."""

        def per_layer(layers=None):
            return activation_bytes_per_layer(
                self.m,
                self.seq_len // self.layout["cp"],
                self.micro_batch,
                self.layout["tp"],
                self.recompute,
                fused_attention=self.fused_attention,
                layers=layers,
                convention=self.activations,
            )

        layers = self.m.layers_in_order()
        alike = len({(x.attention, x.mlp) for x in layers}) == 1
        average = alike or self.virtual_stages > 1 or self.activations != "blocks"
        mean = per_layer() if average else 0.0
        out = []
        for units in _stage_units(self.m, self.layout["pp"]):
            if average:
                out.append(mean * len(units))
                continue
            own = [layers[min(i, self.m.layers - 1)] for i in units]
            out.append(per_layer(own) * len(own))
        return out


def _moe_layers_on_a_stage(m: ModelConfig, pp: int) -> int:
    """The most mixture-of-experts layers on one pipeline stage: stages hold consecutive
    layers, the first layers % pp stages one more (as `_Plan.layers_here`), and the first
    `dense_layers` layers have a dense MLP and no expert all-to-all (DeepSeek-V3: 3 of 61)."""
    if not m.is_moe:
        return 0
    q, r = divmod(m.layers, pp)
    start, most = 0, 0
    for i in range(pp):
        end = start + q + (i < r)
        most = max(most, end - max(start, m.dense_layers))
        start = end
    return most


def _zero_sharded_params(p: _Plan, parts, stage=(1, 2)) -> float:
    """Parameters of one chip's slice that it keeps ZeRO state for when `p.zero_stage` is in
    `stage` (else its whole slice), before fsdp: each part sharded over the chips that hold
    the same part and see different tokens, the ones its gradients are reduced over
    (`_link_times`): the dense part over dp x cp x ep (experts apart, the ep chips are data
    parallel for it: taken to be how DeepSeek-V3's ZeRO-1 spans the 128 dense replicas of its
    PP16 x EP64 x DP2 layout, an inference, the report says only "ZeRO-1"), the experts over
    dp x cp (Megatron's expert data-parallel group). `parts`: one chip's (dense, expert)
    parameters on its pipeline stage (`_stage_slices`)."""
    lay = p.layout
    dense, expert = parts
    if p.zero_stage not in stage:
        return dense + expert
    return dense / (lay["dp"] * lay["cp"] * lay["ep"]) + expert / (lay["dp"] * lay["cp"])


def _stage_units(m: ModelConfig, pp: int) -> list[range]:
    """The units each pipeline stage holds, as `_stage_flops_share` splits them: the layers
    in order then the multi-token-prediction depths (unit L + j is depth j), as evenly as
    possible, the first stages taking the remainder."""
    q, r = divmod(m.layers + m.mtp_layers, pp)
    stages, start = [], 0
    for stage in range(pp):
        end = start + q + (1 if stage < r else 0)
        stages.append(range(start, end))
        start = end
    return stages


def _stage_params(m: ModelConfig, pp: int) -> list[tuple[int, int]]:
    """(dense, routed-expert) parameters of each pipeline stage, before tensor and expert
    splits: the layers it holds (`ModelConfig.layers_in_order`: DeepSeek-V3's first stage
    holds its 3 dense-MLP layers), the first stage also the embedding [V, D], the last the
    final norm D, the output head [D, V] and DeepSeek-V3's multi-token-prediction depths
    (`ModelConfig.mtp_params`: per depth a layer like the last, a projection [2 D, D] and 3
    norms of D; trained, so held with gradients and optimizer state). With tied embeddings
    and pp > 1 the last stage keeps its own copy of the table for the head (Megatron-LM's
    shared word embeddings, their gradients all-reduced between the two ends); with pp = 1
    one table. Summed over the stages (pp = 1): `params` + `mtp_params`."""
    layers = m.layers_in_order()
    D, V = m.d_model, m.vocab
    out = []
    for units in _stage_units(m, pp):
        dense = expert = 0
        for i in units:
            layer = layers[min(i, m.layers - 1)]
            routed = layer.mlp.expert_params
            dense += layer.params - routed + (0 if i < m.layers else 2 * D * D + 3 * D)
            expert += routed
        out.append([dense, expert])
    out[0][0] += V * D  # the embedding
    head = 0 if m.tied_embeddings and pp == 1 else V * D
    out[-1][0] += head + D  # the output head and the final norm
    return [(dense, expert) for dense, expert in out]


def _stage_slices(p: _Plan) -> list[tuple[float, float]]:
    """One chip's (dense, routed-expert) parameters on each pipeline stage, before fsdp: the
    stage's own parameters (`_stage_params`: the first stage also the embedding, the last the
    output head, the final norm and DeepSeek-V3's multi-token-prediction module), the dense
    part split tp ways and the routed experts tp x ep ways. The one count that the memory
    (`_memory`), the HBM traffic (`_hbm_bytes`) and the FSDP / data-parallel collectives
    (`_link_times`) all use, stage by stage."""
    tp, ep = p.layout["tp"], p.layout["ep"]
    return [
        (dense / tp, expert / (tp * ep)) for dense, expert in _stage_params(p.m, p.layout["pp"])
    ]


def _memory(p: _Plan) -> dict:
    """Bytes per chip on the pipeline stage that holds the most: model state (2 bytes of
    weights, `grad_bytes` of gradients and 12 of optimizer state per parameter of its slice
    of the stage's own parameters, `_stage_slices`; fsdp shards all three (ZeRO-3), zero_stage
    1 the optimizer state and 2 also the gradients over each part's data-parallel group:
    `_zero_sharded_params`) and the activations that stage keeps in flight
    (`_Plan.stage_activation_bytes`). Stages differ: the first holds the embedding and keeps
    the most micro-batches, the last holds the output head (and DeepSeek-V3's
    multi-token-prediction module), DeepSeek-V3's first holds 3 dense-MLP layers."""
    fsdp = p.layout["fsdp"]
    best: dict = {}
    for parts, acts in zip(_stage_slices(p), p.stage_activation_bytes()):
        state = {
            "weights": STATE_BYTES_PER_PARAM["weights"] * sum(parts) / fsdp,
            "gradients": p.grad_bytes * _zero_sharded_params(p, parts, (2,)) / fsdp,
            "optimizer": STATE_BYTES_PER_PARAM["optimizer"] * _zero_sharded_params(p, parts) / fsdp,
            "activations": acts,
        }
        if not best or sum(state.values()) > sum(best.values()):
            best = state
    return best


def _hbm_bytes(p: _Plan) -> float:
    """A lower bound on each chip's memory traffic per step (bytes), on the pipeline stage
    that moves the most (each stage its own parameters, `_stage_slices`, and its own
    activations, `_Plan.stage_activations_per_microbatch`; without a pipeline, the one
    stage: the whole model's slice).

    Per micro-batch: the bf16 weights of the slice read for the forward, again for the
    backward (and for the recomputed forward), gradients written (and read back to
    accumulate when there are several micro-batches), and the stored activations written
    in the forward and read in the backward. Once per step, Adam reads the fp32 master
    weights, both moments and the gradient and writes master, moments and bf16 weights
    (28 bytes per parameter of the chip's optimizer shard: fsdp, and with ZeRO-1/2 each part's
    data-parallel group, `_zero_sharded_params`).
    Matmul inputs and outputs beyond the stored activations are not counted.
    """
    stages = zip(_stage_slices(p), p.stage_activations_per_microbatch())
    return max(_stage_hbm_bytes(p, parts, acts) for parts, acts in stages)


def _stage_hbm_bytes(p: _Plan, parts, acts_per_microbatch) -> float:
    """`_hbm_bytes` for one stage: one chip's (dense, expert) parameters `parts` and the
    activations it keeps per micro-batch."""
    params = sum(parts)
    w = STATE_BYTES_PER_PARAM["weights"] * params
    reads = (2 + recompute_share(p.recompute)) * w
    grads = p.grad_bytes * params * (2 if p.microbatches > 1 else 1)
    acts = 2 * acts_per_microbatch
    optimizer = 28 * _zero_sharded_params(p, parts) / p.layout["fsdp"]
    return p.microbatches * (reads + grads + acts) + optimizer


def _routes(chip, layout, network, slice_chips, slice_shape=None) -> dict:
    """axis -> `roofline.topology.Route` for each parallel axis in use, laid out innermost
    first (tp, cp, ep, fsdp, pp, dp: each axis's chips sit the product of the inner degrees
    apart; with an explicit `slice_shape` each inner axis takes its place in turn)."""
    stride, routes = 1, {}
    inner: list[int] = []
    if slice_shape is None:
        slice_chips = job_slice_chips(chip, math.prod(layout.values()), slice_chips)
    for axis in LAYOUT_AXES:
        if layout[axis] > 1:
            where = tuple(inner) if slice_shape is not None else None
            routes[axis] = route(
                chip, layout[axis], stride, slice_chips, network, slice_shape, where
            )
            inner.append(layout[axis])
        stride *= layout[axis]
    return routes


def _collective(kind, nbytes, n, r) -> float:
    return collective_seconds(kind, nbytes, r) if n > 1 and r is not None else 0.0


def _all_to_all_split(nbytes, r) -> tuple[float, float]:
    """(seconds inside the node, seconds over the network) of one all-to-all of a `nbytes`
    array (all members' shares together) on route `r`.

    Each member holds nbytes / n and sends an equal part to every member: on a two-level
    route (per_node = m members in each of n / m domains) (m - 1) / n of its share goes to
    its own domain, over the interconnect (an all-to-all among the m of nbytes x m^2 / n^2),
    and (n - m) / n leaves through the NIC; the two run at once, on different links."""
    if r.kind != "two-level":
        return _collective("all-to-all", nbytes, r.size, r), 0.0
    n, m = r.size, r.per_node
    inner = Route(r.name, "link", m, r.axes)
    inside = _collective("all-to-all", nbytes * m * m / (n * n), m, inner)
    across = nbytes / n * (n - m) / n / r.network_bytes_per_s
    return inside, across


def _data_reduce(grad_bytes, weight_bytes, levels, zero) -> float:
    """Gradient reduction over a data group made of `levels` (routes, innermost first; cp
    and ep sit inside dp, so the group is split in levels).

    zero False (plain data parallelism): reduce-scatter down the inner levels, all-reduce
    at the outermost, all-gather back up (the two-level decomposition). zero True (ZeRO-1/2,
    the distributed optimizer): the gradients (`grad_bytes`) are reduce-scattered over the
    whole group and, after each chip's optimizer step on its shard, the updated bf16 weights
    (`weight_bytes`) are all-gathered: a ring all-reduce's bytes when both are bf16."""
    levels = [r for r in levels if r is not None and r.size > 1]
    if not levels:
        return 0.0
    t, g, w = 0.0, grad_bytes, weight_bytes
    for i, r in enumerate(levels):
        if i == len(levels) - 1 and not zero:
            return t + _collective("all-reduce", g, r.size, r)
        t += _collective("reduce-scatter", g, r.size, r)
        t += _collective("all-gather", w if zero else g, r.size, r)
        g, w = g / r.size, w / r.size
    return t


def _ring_attention_bytes(p: _Plan) -> float:
    """Bytes each chip of a context-parallel ring sends per step (Liu et al. 2023, "Ring
    Attention"; Megatron-LM's context parallelism): per layer and micro-batch, cp - 1 steps
    each passing the K and V of its seq_len / cp tokens (bf16, kv_width each, split tp ways)
    to its neighbour in the forward; the backward passes K and V again and their gradients
    (2 x); full recomputation repeats the forward's passes."""
    cp = p.layout["cp"]
    block = 2 * 2 * p.m.kv_width * (p.seq_len // cp) * p.micro_batch / p.layout["tp"]
    passes = 3 + recompute_share(p.recompute)
    return p.layers_here * p.microbatches * passes * (cp - 1) * block


def _link_times(p: _Plan, chip, network, slice_chips=None, slice_shape=None):
    """ "TP", "CP", "EP", "FSDP", "DP", "PP" -> (seconds per step, label, bwd-only seconds)
    for each axis in use."""
    m, layout, microbatches = p.m, p.layout, p.microbatches
    routes = _routes(chip, layout, network, slice_chips, slice_shape)
    times = {}
    layers_here = p.layers_here
    # bf16 activations of one micro-batch on one chip of the context-parallel group
    act = p.micro_batch * (p.seq_len // layout["cp"]) * m.d_model * 2
    # TP collectives per layer: forward 2, backward 2, + 2 x the recomputed share; PaLM's
    # parallel block sums attention and MLP before its one all-reduce: half as many
    passes = (4 + 2 * recompute_share(p.recompute)) / (2 if m.parallel_block else 1)
    if "tp" in routes:
        one = _collective("all-reduce", act, layout["tp"], routes["tp"])
        label = f"TP all-reduces ({routes['tp'].name})"
        times["TP"] = (layers_here * microbatches * passes * one, label)
    if "cp" in routes:
        r = routes["cp"]
        label = f"CP ring attention K/V passes ({r.name}; overlapped with attention)"
        times["CP"] = (_ring_attention_bytes(p) / r.p2p_bytes_per_s, label)
    if "ep" in routes:
        routed = layout["ep"] * act * m.experts_per_token / layout["tp"]
        inside, across = _all_to_all_split(routed, routes["ep"])
        r = routes["ep"]
        limit = p.expert_nodes_per_token
        if limit is not None and limit < m.experts_per_token:
            # node-limited routing (DeepSeek-V3): a token crosses the network once per
            # destination node, at most `limit` of them, then fans out over NVLink there
            across *= limit / m.experts_per_token
        if across > 0:
            share = (r.size - r.per_node) / r.size
            label = (
                f"EP all-to-alls ({r.name}: {share:.0%} of the routed tokens over the "
                f"network, {1 - share:.0%} inside the node, at once)"
            )
        else:
            label = f"EP all-to-alls ({r.name})"
        a2a = 4 + 2 * recompute_share(p.recompute)  # dispatch + combine, fwd and bwd
        moe_layers = _moe_layers_on_a_stage(m, layout["pp"])  # dense layers route nothing
        times["EP"] = (moe_layers * microbatches * a2a * max(inside, across), label)
    # each stage reduces (and with fsdp gathers) its own parameters; the step waits for the
    # stage with the most (`_stage_slices`: the first holds the embedding, the last the head)
    slices = _stage_slices(p)
    if "fsdp" in routes:
        route, n = routes["fsdp"], layout["fsdp"]
        per_mb = max(
            2 * _collective("all-gather", STATE_BYTES_PER_PARAM["weights"] * sum(parts), n, route)
            + _collective("reduce-scatter", p.grad_bytes * sum(parts), n, route)
            for parts in slices
        )
        times["FSDP"] = (microbatches * per_mb, f"FSDP gathers and scatters ({route.name})")
    if p.data_group > 1:
        route = routes.get("dp") or routes.get("ep") or routes["cp"]
        t = max(_stage_data_reduce(p, parts, routes, microbatches) for parts in slices)
        what = {0: "all-reduce", 1: "reduce-scatter + all-gather (ZeRO-1)"}.get(
            p.zero_stage, "reduce-scatters + all-gather (ZeRO-2)"
        )
        grad = "bf16" if p.grad_bytes == 2 else "fp32"
        times["DP"] = (t, f"DP {what}, {grad} gradients ({route.name})")
    if "pp" in routes:
        route = routes["pp"]
        # activations forward, gradients back, once per model chunk boundary: v x as many
        sends = 2 * microbatches * p.virtual_stages * act / layout["tp"]
        label = f"PP sends ({route.name})"
        times["PP"] = (sends / route.p2p_bytes_per_s, label)
    return times


def _stage_data_reduce(p: _Plan, parts, routes, microbatches) -> float:
    """Seconds of one stage's data-parallel gradient reduction per step: its (dense, expert)
    parameters per chip `parts` (`_stage_slices`), divided by fsdp; the dense part over
    cp, ep and dp, the experts over cp and dp (`_data_reduce`)."""
    fsdp = p.layout["fsdp"]
    dense, expert = parts[0] / fsdp, parts[1] / fsdp
    zero = p.zero_stage in (1, 2)
    cp, ep, dp = routes.get("cp"), routes.get("ep"), routes.get("dp")
    t = _data_reduce(p.grad_bytes * dense, 2 * dense, [cp, ep, dp], zero)
    t += _data_reduce(p.grad_bytes * expert, 2 * expert, [cp, dp], zero)
    if p.zero_stage == 2 and microbatches > 1:
        # ZeRO-2 keeps only its gradient shard: every micro-batch's gradients are
        # reduce-scattered as its backward produces them (the weights gathered once)
        rs = _data_reduce(p.grad_bytes * dense, 0, [cp, ep, dp], True)
        rs += _data_reduce(p.grad_bytes * expert, 0, [cp, dp], True)
        t += (microbatches - 1) * rs
    return t


def _stage_flops_share(m: ModelConfig, pp: int, recompute, seq_len, causal) -> float:
    """Busiest pipeline stage's FLOPs over the average stage's (1 without a pipeline).

    The layers are spread as evenly as possible (the first stages take the remainder), each
    stage costing what its own layers cost (`ModelConfig.layers_in_order`: a DeepSeek-V3
    stage holding the 3 dense-MLP layers costs less than one of mixture-of-experts layers;
    Gemma's sliding-window layers less than its global ones; DeepSeek-V3's
    multi-token-prediction module counted as one more layer after the last), and the last
    stage also runs
    the output head (6 x vocab x d_model FLOPs per token, never recomputed; the embedding
    lookup costs no FLOPs): with 96 layers on 8 stages of GPT-3 the last stage runs 12
    layers + the head."""
    if pp == 1:
        return 1.0
    total = training_flops_per_token(m, seq_len, recompute, causal)
    per_layer = [
        layer_training_flops_per_token(layer, seq_len, recompute, causal)
        for layer in m.layers_in_order()
    ]
    # DeepSeek-V3's multi-token-prediction depths go last, on the output head's stage (its
    # report, section 2.2), each split like one more layer (its layer, projection and pass
    # through the shared head)
    mtp = mtp_training_flops_per_token(m, seq_len, recompute, causal)
    per_layer += [mtp / m.mtp_layers] * m.mtp_layers if m.mtp_layers else []
    q, r = divmod(len(per_layer), pp)
    stages, start = [], 0
    for stage in range(pp):
        size = q + (1 if stage < r else 0)
        stages.append(sum(per_layer[start : start + size]))
        start += size
    stages[-1] += 6 * m.vocab * m.d_model  # the output head
    return max(stages) / (total / pp)


def _dp_exposed(p: _Plan, dp_s, math_s, hw_flops, model_flops) -> float:
    """Seconds of the data-parallel reduction no compute hides.

    The first pipeline stage finishes its backward last, so its gradients can only be
    reduced during that last micro-batch's backward (each layer's as soon as it is ready);
    the backward is 1 - model / (3 x hardware) of the math (2/3 without recomputation, 3/4
    with full). With ZeRO-1/2 the weights' all-gather overlaps the next step's first
    forward (Megatron-LM's overlap_param_gather) and ZeRO-2's per-micro-batch
    reduce-scatters run during every micro-batch's backward."""
    if dp_s == 0:
        return 0.0
    forward_share = model_flops / (3 * hw_flops)
    per_mb = math_s / p.microbatches
    window = (1 - forward_share) * per_mb
    if p.zero_stage in (1, 2):
        window += forward_share * per_mb
    if p.zero_stage == 2:
        window += (1 - forward_share) * per_mb * (p.microbatches - 1)
    return max(0.0, dp_s - window)


GRAD_DTYPES = {"bf16": 2, "fp32": 4}


def training_step(
    model,
    chip,
    n_chips,
    tokens_per_step,
    seq_len,
    layout,
    dtype="bf16",
    recompute="none",
    microbatches=None,
    network_bytes_per_s=None,
    fused_attention=True,
    causal=False,
    slice_chips=None,
    zero_stage=0,
    virtual_stages=1,
    grad_dtype="bf16",
    expert_nodes_per_token=None,
    slice_shape=None,
    activations="blocks",
) -> TrainingStep:
    """The roofline of one training step of `model` on `n_chips` chips (see the module
    docstring for every assumption).

    tokens_per_step: tokens in the global batch (a multiple of seq_len whose sequences split
    evenly over dp x fsdp x ep). layout: the parallel degrees, a mapping or
    "dp=64,tp=8,pp=16" (cp: context parallelism, seq_len / cp tokens of each sequence per
    chip, ring attention).
    microbatches: per replica and step (default: one sequence each when pp > 1, else the
    fewest whose activations fit; when none fits, one sequence each, and `limits` says so).
    network_bytes_per_s: one-way bandwidth per chip of the network between interconnect
    domains (default: the catalog's figure, where it has one). fused_attention: attention
    runs as one fused kernel (FlashAttention) that stores no score matrix (activations).
    causal: count half the attention FLOPs (a causal mask; PaLM's MFU counts them all).
    slice_chips: chips in one ICI slice when a TPU job runs as several slices joined by the
    data-centre network (MaxText's dcn_* axes; e.g. 384 for the MLPerf v5p run of 16 slices);
    layout axes beyond one slice then use the network (`roofline.topology.route`).
    slice_shape: one slice's own shape instead of the shape Google sells for its chips, e.g.
    (8, 16, 48) or "8x16x48" (`roofline.topology.parse_slice_shape` checks it: its product is
    the chips of one slice, n_chips or slice_chips); a layout axis whose degree equals one of
    its axes takes that axis whole (MLPerf's v5p run: tensor 8, data 16, FSDP 48).
    zero_stage: 0 (plain replicas), 1 (optimizer state sharded over the data-parallel group,
    dp x cp x ep for the dense part and dp x cp for the experts: Megatron-LM's
    distributed optimizer) or 2 (also the gradients) on the data-parallel axis (Rajbhandari
    et al. 2019); fsdp is ZeRO-3 on its own axis.
    virtual_stages: model chunks per pipeline stage, the interleaved 1F1B schedule
    (Narayanan et al. 2021): the bubble is (pp - 1) / (virtual_stages x microbatches) of the
    stage's work, (pp - 1) / (v m + pp - 1) of the step; v x as many pipeline sends.
    grad_dtype: "bf16" or "fp32": the gradients kept (memory) and reduced (traffic).
    expert_nodes_per_token: node-limited routing (DeepSeek-V3 sends each token to experts on
    at most 4 nodes): the expert all-to-all's network share counts one copy per destination
    node, min(this, experts_per_token) per token, instead of one per expert.
    activations: "blocks" (each block's bytes, `roofline.training.activation_bytes_per_layer`)
    or "gpt-layer" (Korthikanti et al.'s 34 s b h / t for every model, as homework part 4
    states it).
    """
    m = get_model(model)
    chip = get_chip(chip)
    n_chips = _whole("n_chips", n_chips)
    layout = parse_layout(layout, n_chips)
    recompute = check_recompute(recompute)
    dtype = canonical_dtype(dtype)
    if zero_stage not in (0, 1, 2):
        raise ValueError(
            f"zero_stage is 0, 1 or 2 on the data-parallel axis (ZeRO-3 is the fsdp axis: "
            f"put the degree there), got {zero_stage!r}"
        )
    if grad_dtype not in GRAD_DTYPES:
        raise ValueError(f"grad_dtype is 'bf16' or 'fp32', got {grad_dtype!r}")
    virtual_stages = _whole("virtual_stages", virtual_stages)
    _check_model_split(m, layout, virtual_stages)
    per_replica = _batch(tokens_per_step, seq_len, layout)
    peak = chip.peak_flops_per_s(dtype)
    hw_flops = training_flops_per_token(m, seq_len, recompute, causal) * tokens_per_step / n_chips
    model_flops = training_flops_per_token(m, seq_len, "none", causal) * tokens_per_step / n_chips
    share = _stage_flops_share(m, layout["pp"], recompute, seq_len, causal)

    def plan_for(micro):
        micro = _check_microbatches(per_replica, micro, layout, virtual_stages)
        return _Plan(
            m,
            layout,
            int(seq_len),
            recompute,
            micro,
            per_replica // micro,
            fused_attention,
            zero_stage,
            virtual_stages,
            GRAD_DTYPES[grad_dtype],
            None
            if expert_nodes_per_token is None
            else _whole("expert_nodes_per_token", expert_nodes_per_token),
            activations,
        )

    chose = None
    if microbatches is not None:
        plan = plan_for(microbatches)
    elif layout["pp"] > 1:
        plan = plan_for(per_replica)
    else:
        plan, chose = _fewest_microbatches_that_fit(plan_for, per_replica, chip.hbm_bytes)
    times = {"math": hw_flops * share / peak, "HBM": _hbm_bytes(plan) / chip.hbm_bytes_per_s}
    kinds = {"math": "compute", "HBM": "memory"}
    labels = {"math": f"math ({dtype} dense peak)", "HBM": f"{chip.memory_kind} traffic"}
    if share > 1:
        labels["math"] += ", busiest pipeline stage"
    if slice_shape is not None:
        slice_shape = parse_slice_shape(chip, slice_shape, slice_chips or n_chips)
    links = _link_times(plan, chip, network_bytes_per_s, slice_chips, slice_shape)
    for key, (seconds, label) in links.items():
        times[key], kinds[key], labels[key] = seconds, "link", label
    if layout["pp"] > 1:
        staged = [times[r] for r in ("math", "HBM", "TP", "CP", "EP") if r in times]
        times["bubble"] = (layout["pp"] - 1) / (virtual_stages * plan.microbatches) * max(staged)
        kinds["bubble"] = "bubble"
        labels["bubble"] = (
            "pipeline bubble (1F1B)"
            if virtual_stages == 1
            else f"pipeline bubble (interleaved 1F1B, {virtual_stages} chunks per stage)"
        )
    exposed = _dp_exposed(plan, times.get("DP", 0.0), times["math"], hw_flops, model_flops)
    assumptions: tuple[str, ...] = _ASSUMPTIONS + (
        f"gradients kept and reduced in {grad_dtype}; ZeRO stage {zero_stage} on the "
        "data-parallel axis",
    )
    if chose is not None:
        assumptions += (chose,)
    return TrainingStep(
        model=m,
        chip_name=chip.name,
        n_chips=n_chips,
        layout=layout,
        tokens_per_step=int(tokens_per_step),
        seq_len=int(seq_len),
        dtype=dtype,
        recompute=recompute,
        microbatches=plan.microbatches,
        micro_batch=plan.micro_batch,
        times=times,
        kinds=kinds,
        labels=labels,
        memory=_memory(plan),
        memory_capacity_bytes=chip.hbm_bytes,
        peak_flops_per_s=peak,
        model_flops_per_chip=model_flops,
        hardware_flops_per_chip=hw_flops,
        assumptions=assumptions,
        dp_exposed_s=exposed,
        zero_stage=zero_stage,
        virtual_stages=virtual_stages,
        grad_dtype=grad_dtype,
        microbatches_note="" if chose is None or "fit" not in chose else chose,
    )


def _fewest_microbatches_that_fit(plan_for, per_replica, capacity):
    """Without a pipeline: the fewest micro-batches (a divisor of the replica's sequences)
    whose memory fits in `capacity`; when even one sequence per micro-batch does not fit,
    that split, with a note telling the reader to pass microbatches= or shard more."""
    for micro in range(1, per_replica + 1):
        if per_replica % micro:
            continue
        plan = plan_for(micro)
        if sum(_memory(plan).values()) <= capacity:
            note = (
                f"micro-batches: {micro}, the fewest whose activations fit (pass "
                "microbatches= to choose)"
            )
            return plan, note
    note = (
        "micro-batches: even one sequence per micro-batch does not fit; shard more, "
        "recompute activations, or pass microbatches= after sharding"
    )
    return plan_for(per_replica), note


_ASSUMPTIONS = (
    "datasheet dense peak FLOP/s and full memory bandwidth; one-way link rates",
    "FLOPs: 6 per matmul weight per token + 3 x the attention blocks' forward score and value "
    "FLOPs (PaLM's term for plain attention; windows and latent attention as the blocks "
    "count them); recomputation counted "
    "in the math time (hardware FLOPs), not in the MFU; the math time is the busiest "
    "pipeline stage's (the last one also runs the output head)",
    "t_lower: every resource overlapped with every other, except the pipeline bubble "
    "((pp - 1) / (v x microbatches) of the per-stage work, v = 1 for plain 1F1B) and the part "
    "of the data-parallel reduction that outlasts the last micro-batch's backward (plus, "
    "with ZeRO-1/2, the next step's first forward for the weights' all-gather)",
    "axes laid out innermost first tp, cp, ep, fsdp, pp, dp on the vendor's slice shapes "
    "(or the slice_shape given) "
    "(roofline.topology); an axis inside one slice or NVLink domain uses its links, one that "
    "leaves it uses the network (non-blocking, one NIC per chip)",
    "pipeline: each resource's time is the busiest stage's (math: the most FLOPs; HBM "
    "traffic, FSDP and data-parallel collectives: the stage's own parameters, the first "
    "holding the embedding, the last the output head)",
    "memory: bf16 weights, gradients (2 or 4 bytes), fp32 master and Adam moments (12 "
    "bytes), divided by fsdp (ZeRO-3) and, with zero_stage, the optimizer state (1) and "
    "gradients (2) by dp x cp x ep (dense part) or dp x cp (experts); activations block "
    "by block after Korthikanti et al. 2022, with sequence parallelism, on the pipeline "
    "stage that holds the most; the last stage also keeps one micro-batch's output layer "
    "(final norm and projection inputs, 2 s b h / t each, and fp32 logits 4 s b v / t: "
    "Korthikanti et al. section 4.3, an unfused cross-entropy), the first the embedding's "
    "dropout mask; workspace and fragmentation not counted",
)
