"""Serving a whole model: the roofline of one decode step, of a prefill, and what fits.

`serving_estimate(model, chip, n_chips, tp, batch, context_len, ...)` bounds autoregressive
decoding of `model` on `n_chips` chips split into `n_chips / tp` replicas of `tp` chips each
(tensor parallelism inside a replica, Megatron-style: every layer's weights, attention heads
and KV heads split tp ways). Each replica decodes `batch` sequences at once; one decode step
makes one new token for each of them, every sequence attending over `context_len` tokens
already in its KV cache.

Per decode step and chip (the times in `ServingEstimate.times`):

- "math": 2 FLOPs per active matmul weight per token (`ModelConfig.matmul_params`: a
  mixture of experts counts only `experts_per_token` expert MLPs) + attention, 4 x
  attention width x context_len per token and layer (Q K^T and A V, 2 FLOPs per
  multiply-add; `ModelConfig.attention_flops_per_token`: a sliding-window layer counts at
  most its window, latent attention scores against its cached latent), divided by tp, at
  the chip's dense peak in `dtype` (the dtype the matmuls run in);
- "HBM": the chip's memory traffic, the sum of two parts (`hbm_parts`), which share one
  memory bandwidth and so add up:
  "weights", every weight the step touches, read once in `weights` dtype, divided by tp. The input embedding table is a gather of `batch` rows, not a read of the table, so an
  untied table is left out (the output head [D, V] is read). A mixture of experts reads only
  the experts its tokens route to: with uniform, independent routing of `batch` tokens to
  `experts_per_token` of `experts` experts, a layer reads on average
  E (1 - (1 - k/E)^batch) distinct experts;
  "KV cache", batch x context_len tokens of K and V in `kv_dtype`, all layers, read once
  (`ModelConfig.kv_cache_bytes`: a sliding-window layer keeps at most its window; latent
  attention keeps its latent and RoPE key).
  TP splits the KV heads; when tp exceeds kv_heads each chip keeps one KV head (the heads
  are replicated tp / kv_heads times), so the per-chip cache stops shrinking; latent
  attention's one latent per token is kept whole on every chip;
- "TP": two all-reduces per layer (after attention and after the MLP) of the
  [batch, d_model] activations (bf16) over the tp chips, bandwidth term from
  `roofline.collectives` on the links `roofline.topology` routes the replica's tp chips over,
  plus `hop_latency_s` per step of the collective (`collective_steps`). Default, by the
  links: GPUs behind an NVSwitch pay half of `NVSWITCH_ALL_REDUCE_LATENCY_S` per step (an
  all-reduce there is 2 steps: the measured smallest NCCL all-reduce over 8 H100, about
  26 us, applied to every NVSwitch GPU); every other chip 1 microsecond per hop, the scaling
  book's figure for TPU ICI (a lower bound where NCCL's measured latencies are larger).

`t_decode_step` is the largest of these (every resource overlapped with every other): a
lower bound on the time per output token, so `tokens_per_s` = replicas x batch /
t_decode_step is an upper bound. `ttft_s` bounds the prefill of one `prompt_len`-token
prompt on one replica the same way (2 FLOPs per weight per token, causal attention
2 x width x prompt_len^2 per layer, weights read once, the prompt's KV cache written once,
2 all-reduces per layer of [prompt_len, d_model]); queueing and the first decode step are
not counted.

Memory per chip: the weights / tp (the embedding split like the rest, a simplification),
the KV cache of batch sequences of context_len, and a reserve of `reserve_fraction` of HBM
(default 0.1, as vLLM's default gpu_memory_utilization = 0.9 leaves) for activations,
workspace and fragmentation.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

from .catalog import get_chip
from .collectives import NVSWITCH_ALL_REDUCE_LATENCY_S
from .dtypes import bytes_per_element, canonical_dtype
from .models import ModelConfig, get_model
from .topology import collective_seconds, job_slice_chips, route

__all__ = [
    "ServingEstimate",
    "compute_bound_batch",
    "expected_distinct_experts",
    "serving_estimate",
    "tp_all_reduce_seconds",
    "hop_latency_for",
    "SpeculativeDecoding",
    "speculative_decoding",
    "offline_tokens_per_s",
    "longest_mean_prompt",
]

#: Default per-hop latency of a collective step, seconds (scaling book, sharding chapter:
#: about 1 us per ICI hop; its figure, not a vendor's).
HOP_LATENCY_S = 1e-6
#: Default share of HBM kept free for activations, workspace and fragmentation.
RESERVE_FRACTION = 0.1
#: Bytes per element of the activations the tensor-parallel all-reduces move (bf16).
ACTIVATION_BYTES = 2


def expected_distinct_experts(experts, experts_per_token, tokens) -> float:
    """Expected number of distinct experts that `tokens` tokens route to in one layer, each
    token picking `experts_per_token` of `experts` uniformly and independently:
    E (1 - (1 - k/E)^tokens). One token: k; many tokens: all E."""
    E, k = experts, experts_per_token
    return E * (1 - (1 - k / E) ** tokens)


def _whole(name, value, minimum=1) -> int:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or value != int(value):
        raise ValueError(f"{name} must be a whole number, got {value!r}")
    if value < minimum:
        hint = " (a decode step makes one token for each of batch sequences)" * (name == "batch")
        raise ValueError(f"{name} must be at least {minimum}, got {value}{hint}")
    return int(value)


@dataclass(frozen=True)
class ServingEstimate:
    """The roofline of serving: one decode step, one prefill, and memory per chip.

    `times`: resource -> seconds per decode step on each chip ("math", "HBM", "TP");
    `kinds`: resource -> "compute", "memory" or "link"; `hbm_parts`: the HBM time split into
    "weights" and "KV cache" (they add up to times["HBM"]).
    `memory`: bytes per chip of "weights", "KV cache" and "reserve".
    """

    model: ModelConfig
    chip_name: str
    n_chips: int
    tp: int
    batch: int
    context_len: int
    prompt_len: int
    dtype: str
    weights_dtype: str
    kv_dtype: str
    times: dict
    kinds: dict
    hbm_parts: dict
    prefill_times: dict
    memory: dict
    memory_capacity_bytes: float
    kv_bytes_per_sequence_per_chip: float
    experts_read: float
    assumptions: tuple = field(default=(), repr=False)

    @property
    def replicas(self) -> int:
        """Model copies serving at once: n_chips / tp."""
        return self.n_chips // self.tp

    @property
    def t_decode_step(self) -> float:
        """Lower bound on one decode step (= time per output token): the slowest resource."""
        return max(self.times.values())

    @property
    def slowest(self) -> str:
        return max(self.times, key=lambda resource: self.times[resource])

    @property
    def bound(self) -> str:
        """ "compute", "memory" or "link": the kind of the slowest resource."""
        return self.kinds[self.slowest]

    @property
    def tokens_per_s(self) -> float:
        """Upper bound on output tokens per second of the whole system (all replicas)."""
        return self.replicas * self.batch / self.t_decode_step

    @property
    def ttft_s(self) -> float:
        """Lower bound on the time to first token of one prompt_len-token prompt (prefill)."""
        return max(self.prefill_times.values())

    @property
    def kv_cache_bytes(self) -> float:
        """KV cache of the whole replica's batch (all chips of the replica together, counting
        replicated KV heads once)."""
        return self.batch * self.model.kv_cache_bytes(self.context_len, self.kv_dtype)

    @property
    def memory_bytes(self) -> float:
        """Bytes per chip: weights + KV cache + reserve."""
        return sum(self.memory.values())

    @property
    def fits(self) -> bool:
        return self.memory_bytes <= self.memory_capacity_bytes

    @property
    def max_batch(self) -> int:
        """The largest batch whose KV cache (at context_len) fits beside the weights and the
        reserve; 0 when the weights alone do not fit."""
        free = self.memory_capacity_bytes - self.memory["weights"] - self.memory["reserve"]
        return max(0, math.floor(free / self.kv_bytes_per_sequence_per_chip))

    def to_dict(self) -> dict:
        """Every figure in SI base units, for JSON."""
        return {
            "model": self.model.label,
            "chip": self.chip_name,
            "n_chips": self.n_chips,
            "tp": self.tp,
            "replicas": self.replicas,
            "batch_per_replica": self.batch,
            "context_len": self.context_len,
            "prompt_len": self.prompt_len,
            "dtype": self.dtype,
            "weights_dtype": self.weights_dtype,
            "kv_dtype": self.kv_dtype,
            "times_s": dict(self.times),
            "kinds": dict(self.kinds),
            "hbm_parts_s": dict(self.hbm_parts),
            "t_decode_step_s": self.t_decode_step,
            "bound": self.bound,
            "slowest": self.slowest,
            "tokens_per_s": self.tokens_per_s,
            "prefill_times_s": dict(self.prefill_times),
            "ttft_s": self.ttft_s,
            "kv_cache_bytes": self.kv_cache_bytes,
            "memory_bytes": dict(self.memory),
            "memory_total_bytes": self.memory_bytes,
            "memory_capacity_bytes": self.memory_capacity_bytes,
            "fits": self.fits,
            "max_batch": self.max_batch,
            "experts_read_per_layer": self.experts_read,
            "assumptions": list(self.assumptions),
        }

    def summary(self):
        """Times, bound, throughput and memory with units, as a `roofline.display.Summary`."""
        from .display import Summary
        from .units import format_bytes, format_time

        rows = [(f"decode: {r}", format_time(t)) for r, t in self.times.items()]
        for part, t in self.hbm_parts.items():
            rows.append((f"  of which HBM {part}", format_time(t)))
        rows.append(("time per output token (bound)", format_time(self.t_decode_step)))
        rows.append(("bound", f"{self.bound}-bound ({self.slowest} takes longest)"))
        rows.append(("tokens/s, whole system (upper bound)", f"{self.tokens_per_s:,.0f}"))
        rows.append((f"time to first token ({self.prompt_len} tokens)", format_time(self.ttft_s)))
        for part, nbytes in self.memory.items():
            rows.append((f"memory: {part}", format_bytes(nbytes)))
        verdict = "fits" if self.fits else "DOES NOT FIT"
        total, cap = format_bytes(self.memory_bytes), format_bytes(self.memory_capacity_bytes)
        rows.append(("memory per chip", f"{total} of {cap} ({verdict})"))
        rows.append((f"largest batch that fits (context {self.context_len})", str(self.max_batch)))
        if self.model.is_moe:
            rows.append(
                ("experts read per layer", f"{self.experts_read:.2f} of {self.model.experts}")
            )
        title = (
            f"Serving {self.model.label} on {self.n_chips} x {self.chip_name} "
            f"(tp={self.tp}, {self.replicas} replica(s)), batch {self.batch}, "
            f"context {self.context_len}"
        )
        return Summary(title, rows)

    def __str__(self) -> str:
        return self.summary().text()

    def __repr__(self) -> str:
        return self.summary().text()

    def _repr_html_(self) -> str:
        return self.summary().html()


def _check_split(m: ModelConfig, n_chips, tp):
    if n_chips % tp:
        raise ValueError(
            f"tp={tp} must divide n_chips={n_chips}: the chips form n_chips / tp replicas of "
            f"tp chips each; use one of {[d for d in range(1, n_chips + 1) if n_chips % d == 0]}"
        )
    if m.heads % tp:
        divisors = [d for d in range(1, m.heads + 1) if m.heads % d == 0 and d <= n_chips]
        raise ValueError(
            f"tp={tp} must divide the {m.heads} attention heads of {m.label}; use one of {divisors}"
        )
    kv = m.kv_cache_heads  # 1 for latent attention: every chip keeps the whole latent
    if tp > kv and tp % kv or tp < kv and kv % tp:
        raise ValueError(
            f"tp={tp} and the {kv} KV heads of {m.label} must divide one another (each chip "
            "holds whole KV heads; beyond kv_heads they are replicated)"
        )


def _check_context(m: ModelConfig, name, tokens):
    limit = getattr(m, "max_context", None)
    if limit is not None and tokens > limit:
        raise ValueError(
            f"{name}={tokens:,} is beyond {m.label}'s context of {limit:,} tokens; use at most "
            f"{limit:,} (or model.with_changes(max_context=...) for a long-context variant)"
        )


def _weights_read(m: ModelConfig, tokens) -> tuple[float, float]:
    """(parameters a step of `tokens` tokens reads, distinct experts per layer)."""
    untied_table = 0 if m.tied_embeddings else m.vocab * m.d_model
    if not m.is_moe:
        return m.params - untied_table, 1.0
    distinct = expected_distinct_experts(m.experts, m.experts_per_token, tokens)
    dense = m.params - m.expert_params - untied_table
    return dense + m.expert_params * distinct / m.experts, distinct


def _through_switch(r) -> bool:
    """Whether route `r` runs through a switch's links (GPUs behind an NVSwitch)."""
    return r.kind == "link" and bool(r.axes) and r.axes[0].topology == "switch"


def hop_latency_for(r) -> float:
    """Default latency per collective step on route `r`: NVSwitch GPUs half the measured
    smallest all-reduce (`NVSWITCH_ALL_REDUCE_LATENCY_S` / 2, an all-reduce being 2 steps
    there), other links `HOP_LATENCY_S`."""
    return NVSWITCH_ALL_REDUCE_LATENCY_S / 2 if _through_switch(r) else HOP_LATENCY_S


def tp_all_reduce_seconds(chip, tp, nbytes, hop_latency_s=None, slice_shape=None) -> float:
    """One all-reduce of `nbytes` over the tp chips of one replica: bandwidth + latency.

    The replica is its own group and slice (`roofline.topology.route`: tp TPU chips in the
    slice shape Google sells, e.g. a 2x2 for 4 v5e; tp GPUs under one NVSwitch; beyond one
    domain, the network), timed by `roofline.topology.collective_seconds` with
    `hop_latency_s` per step of the collective (`collective_steps` on each axis; default
    `hop_latency_for` the route: NVSwitch's measured latency, else 1 us per hop).
    slice_shape: the TPU slice the replica runs in, when not the shape Google sells for tp
    chips (e.g. "8x16x48"): its tp chips take whole slice axes whose lengths multiply to tp
    where they can (`roofline.topology.route`)."""
    if tp < 2:
        return 0.0
    r = _tp_route(chip, tp, slice_shape)
    hop = hop_latency_for(r) if hop_latency_s is None else hop_latency_s
    return collective_seconds("all-reduce", nbytes, r, hop, hop)


def _tp_route(chip, tp, slice_shape=None):
    """The route of one replica's tp chips (`tp_all_reduce_seconds`)."""
    if slice_shape is not None:
        return route(get_chip(chip), tp, slice_shape=slice_shape)
    return route(get_chip(chip), tp, 1, job_slice_chips(chip, tp))


def _tp_latency_words(chip, tp, hop_latency_s=None, slice_shape=None) -> str:
    """What latency the TP all-reduces were given, in the words of the assumptions list: the
    value `tp_all_reduce_seconds` used (from `hop_latency_for` unless passed)."""
    from .units import format_time

    if hop_latency_s is not None:
        return f"{format_time(hop_latency_s)} per collective step (as passed)"
    r = _tp_route(chip, tp, slice_shape)
    hop = hop_latency_for(r)
    if _through_switch(r):
        return (
            f"NCCL's measured smallest all-reduce on NVSwitch, "
            f"{format_time(NVSWITCH_ALL_REDUCE_LATENCY_S)} each ({format_time(hop)} per step)"
        )
    return f"{format_time(hop)} per collective step"


def _resource_times(
    m, chip, tp, tokens, ctx_tokens, dtypes, kv_chip_fraction, hop, causal, slice_shape=None
):
    """Per-chip seconds of math, weights, KV cache and TP for one pass over `tokens` tokens.

    ctx_tokens: decode: context_len (each token attends over it); prefill: the prompt length
    (each token attends over half of it on average, `causal`)."""
    dtype, w_dtype, kv_dtype = dtypes
    # the attention blocks' score and value FLOPs: prefill averaged under the causal mask,
    # decode against the whole context (latent attention: against the cached latent)
    attn_per_token = m.attention_flops_per_token(ctx_tokens, causal, from_cache=not causal)
    flops = (2 * m.matmul_params + attn_per_token) * tokens / tp
    params_read, distinct = _weights_read(m, tokens)
    kv_seqs = 1 if causal else tokens  # prefill writes one prompt's, decode reads each's
    kv_bytes = kv_seqs * m.kv_cache_bytes(ctx_tokens, kv_dtype) * kv_chip_fraction
    ar = tp_all_reduce_seconds(chip, tp, tokens * m.d_model * ACTIVATION_BYTES, hop, slice_shape)
    parts = {
        "weights": params_read * bytes_per_element(w_dtype) / tp / chip.hbm_bytes_per_s,
        "KV cache": kv_bytes / chip.hbm_bytes_per_s,
    }
    times = {"math": flops / chip.peak_flops_per_s(dtype), "HBM": sum(parts.values())}
    if tp > 1:
        times["TP"] = 2 * m.layers * ar
    return times, parts, distinct


def serving_estimate(
    model,
    chip,
    n_chips=1,
    tp=None,
    batch=1,
    context_len=4096,
    prompt_len=None,
    dtype="bf16",
    weights=None,
    kv_dtype=None,
    hop_latency_s=None,
    reserve_fraction=RESERVE_FRACTION,
    slice_shape=None,
) -> ServingEstimate:
    """The roofline of serving `model` on `n_chips` x `chip` (see the module docstring).

    tp: chips per replica (default n_chips: one replica over every chip). batch: sequences
    each replica decodes at once. context_len: tokens each sequence attends over (its KV
    cache). prompt_len: prompt tokens for the time to first token (default context_len).
    dtype: the dtype the matmuls run in; weights / kv_dtype: storage dtypes of the weights
    and of the KV cache (default `dtype`; e.g. weights="int8" with dtype="bf16" is
    weight-only quantisation). slice_shape: the TPU slice each replica's tp chips run in,
    when not the shape Google sells for tp chips (e.g. "8x16x48"; `tp_all_reduce_seconds`).
    """
    m = get_model(model)
    chip = get_chip(chip)
    n_chips = _whole("n_chips", n_chips)
    tp = n_chips if tp is None else _whole("tp", tp)
    batch = _whole("batch", batch)
    context_len = _whole("context_len", context_len)
    prompt_len = context_len if prompt_len is None else _whole("prompt_len", prompt_len)
    _check_split(m, n_chips, tp)
    _check_context(m, "context_len", context_len)
    _check_context(m, "prompt_len", prompt_len)
    if not 0 <= reserve_fraction < 1:
        raise ValueError(f"reserve_fraction is a share of HBM in [0, 1), got {reserve_fraction}")
    dtype = canonical_dtype(dtype)
    dtypes = (dtype, canonical_dtype(weights or dtype), canonical_dtype(kv_dtype or dtype))
    kv_heads = m.kv_cache_heads
    kv_chip_fraction = max(kv_heads // tp, 1) / kv_heads  # replicated beyond kv_heads
    args = (dtypes, kv_chip_fraction, hop_latency_s)
    times, hbm_parts, distinct = _resource_times(
        m, chip, tp, batch, context_len, *args, False, slice_shape
    )
    prefill, _, _ = _resource_times(m, chip, tp, prompt_len, prompt_len, *args, True, slice_shape)
    kinds = {"math": "compute", "HBM": "memory", "TP": "link"}
    kv_seq = m.kv_cache_bytes(context_len, dtypes[2]) * kv_chip_fraction
    memory = {
        "weights": m.params * bytes_per_element(dtypes[1]) / tp,
        "KV cache": batch * kv_seq,
        "reserve": reserve_fraction * chip.hbm_bytes,
    }
    return ServingEstimate(
        model=m,
        chip_name=chip.name,
        n_chips=n_chips,
        tp=tp,
        batch=batch,
        context_len=context_len,
        prompt_len=prompt_len,
        dtype=dtypes[0],
        weights_dtype=dtypes[1],
        kv_dtype=dtypes[2],
        times=times,
        kinds={r: kinds[r] for r in times},
        hbm_parts=hbm_parts,
        prefill_times=prefill,
        memory=memory,
        memory_capacity_bytes=chip.hbm_bytes,
        kv_bytes_per_sequence_per_chip=kv_seq,
        experts_read=distinct,
        assumptions=_assumptions(
            _tp_latency_words(chip, tp, hop_latency_s, slice_shape) if tp > 1 else None
        ),
    )


def _assumptions(tp_latency: str | None) -> tuple[str, ...]:
    """The estimate's assumptions, the TP line naming the latency it used (None: one chip
    per replica, no TP all-reduces)."""
    if tp_latency is None:
        return tuple(
            "TP: none (one chip per replica)" if a.startswith("TP:") else a for a in _ASSUMPTIONS
        )
    return tuple(a.replace("{tp_latency}", tp_latency) for a in _ASSUMPTIONS)


_ASSUMPTIONS = (
    "datasheet dense peak FLOP/s in dtype and full HBM bandwidth; one-way link rates",
    (
        "decode step bound: the slowest of math, HBM (weights + KV cache, read once per step) "
        "and TP all-reduces, all overlapped"
    ),
    "mixture of experts: uniform, independent routing; a layer reads E(1-(1-k/E)^batch) experts",
    (
        "TP: 2 all-reduces of bf16 [batch, d_model] per layer, latency: {tp_latency}; KV heads "
        "replicated when tp > kv_heads"
    ),
    (
        "memory: weights / tp + KV cache + a reserve of 10 % of HBM (vLLM's default 0.9 "
        "utilisation); prefill (TTFT) of one prompt, no queueing"
    ),
)


def compute_bound_batch(model, chip, context_len, limit=1 << 20, **kwargs):
    """The smallest batch at which a decode step is compute-bound (math takes longest), or
    None when it stays memory- or link-bound up to `limit` sequences (with long contexts
    and few KV heads each sequence's cache read outlasts its math, so more sequences never
    help). Whether that batch fits is not checked: compare `ServingEstimate.max_batch`.
    `kwargs` go to `serving_estimate` (n_chips, tp, dtype, weights, kv_dtype, ...)."""

    def compute_bound(batch):
        est = serving_estimate(model, chip, batch=batch, context_len=context_len, **kwargs)
        return est.bound == "compute"

    if not compute_bound(limit):
        return None
    lo, hi = 1, limit
    while lo < hi:
        mid = (lo + hi) // 2
        lo, hi = (lo, mid) if compute_bound(mid) else (mid + 1, hi)
    return lo


@dataclass(frozen=True)
class SpeculativeDecoding:
    """One sequence decoded with a draft model's guesses checked by the target model.

    `k` guesses per round, each accepted with probability `acceptance` (independently, the
    assumption of Leviathan et al. 2023, arXiv 2211.17192, section 3.1): a round yields
    `tokens_per_round` = (1 - a^(k+1)) / (1 - a) tokens (the accepted guesses and the target's
    own next token) and lasts `round_s` = k x `draft_step_s` + `verify_s`: the draft decodes
    its k guesses one after another on the same chips, then the target checks them in one
    step. `verify_s` is the larger of the k + 1 tokens' math (and TP all-reduces) and one
    read of the weights and of this sequence's cache (the guesses share it).
    `target_step_s`: the target's plain decode step, one token per step."""

    k: int
    acceptance: float
    draft_step_s: float
    verify_s: float
    target_step_s: float

    @property
    def tokens_per_round(self) -> float:
        a, k = self.acceptance, self.k
        return k + 1.0 if a == 1 else (1 - a ** (k + 1)) / (1 - a)

    @property
    def round_s(self) -> float:
        return self.k * self.draft_step_s + self.verify_s

    @property
    def tokens_per_s(self) -> float:
        return self.tokens_per_round / self.round_s

    @property
    def speedup(self) -> float:
        """Tokens per second over the target's plain decode of the same sequence."""
        return self.tokens_per_s * self.target_step_s


def speculative_decoding(
    target, draft, chip, n_chips=1, k=4, acceptance=0.8, context_len=4096, dtype="bf16"
) -> SpeculativeDecoding:
    """Speculative decoding of one sequence (batch 1) of `target` with guesses from `draft`,
    both on the same `n_chips` x `chip` (tensor parallel over all of them), at the rooflines
    `serving_estimate` gives: see `SpeculativeDecoding` for the formulas. `acceptance`: the
    chance that the target accepts one guess (0 to 1; measured per draft, task and sampling)."""
    k = _whole("k", k)
    if not 0 <= acceptance <= 1:
        raise ValueError(f"acceptance is a probability from 0 to 1, got {acceptance!r}")
    kw = dict(n_chips=n_chips, context_len=context_len, dtype=dtype)
    one = serving_estimate(target, chip, batch=1, **kw)
    many = serving_estimate(target, chip, batch=k + 1, **kw)
    verify = max(many.times["math"], one.times["HBM"], many.times.get("TP", 0.0))
    draft_step = serving_estimate(draft, chip, batch=1, **kw).t_decode_step
    return SpeculativeDecoding(k, float(acceptance), draft_step, verify, one.t_decode_step)


def offline_tokens_per_s(
    model, chip, n_chips=1, *, prompt_len, output_len, batch, **kwargs
) -> float:
    """Upper bound on output tokens/s of an offline benchmark in which every request first
    prefills `prompt_len` tokens and then decodes `output_len` tokens on the same chips
    (MLPerf's offline scenario: all requests queued at once, prompts and outputs share them).

    Per request, on each chip of a replica, every resource's time is its decode share
    (`output_len` decode steps at `batch` sequences, each step's time / batch; the steps
    attend over `prompt_len` tokens, the shortest context a decode token of the request sees)
    plus its prefill time (`ServingEstimate.prefill_times`: the prompt's math, causal
    attention included, and its TP all-reduces). The prefill's memory traffic is left out:
    a batched prefill shares one read of the weights among many prompts, and its KV-cache
    writes are small beside its math. Resources overlap, so a request takes at least its
    largest total, and the bound is replicas x batch x output_len / (batch x that total).
    Everything left out (the prefill's reads, the longer contexts of later tokens, memory
    capacity: `batch` is not checked to fit) only lowers the time, so this is an upper bound.
    prompt_len 0: no prefill, `serving_estimate(..., context_len=1).tokens_per_s`.
    prompt_len and output_len may be means (not whole): the math is linear in each, and
    the quadratic causal attention evaluated at the mean is below the mean (Jensen); the
    decode's attention term, output x prompt summed over requests, is taken at the means
    (exact unless output and prompt lengths are correlated).
    Counted slightly high, so the bound may sit a little low: the prefill runs the output
    layer for every prompt token (serving stacks compute only the last token's logits), and
    `output_len` decode steps follow it although the prefill makes the first token (Llama 2
    70B at 1,024-token prompts: under 0.4 %).
    `kwargs` go to `serving_estimate` (tp, dtype, weights, kv_dtype, hop_latency_s, ...)."""
    if not prompt_len >= 0 or not output_len > 0:
        raise ValueError(
            f"prompt_len must be >= 0 and output_len > 0 tokens, got {prompt_len!r}, {output_len!r}"
        )
    context = max(1, math.floor(prompt_len))
    est = serving_estimate(
        model, chip, n_chips, batch=batch, context_len=context, prompt_len=context, **kwargs
    )
    share = prompt_len / context  # the prefill of a mean prompt_len, from one of `context`
    totals = {
        r: output_len * t / batch
        + (share * est.prefill_times.get(r, 0.0) if r != "HBM" and prompt_len else 0.0)
        for r, t in est.times.items()
    }
    return est.replicas * output_len / max(totals.values())


def longest_mean_prompt(tokens_per_s, model, chip, n_chips=1, *, output_len, batch, **kwargs):
    """The roofline read backwards: the longest mean prompt (whole tokens) at which
    `offline_tokens_per_s` still allows a measured `tokens_per_s`. A benchmark that
    publishes its throughput and its mean output but not its mean prompt must have prompts
    no longer than this on average (or a count is wrong). None: the measurement is above
    the bound even with no prefill; the model's longest context: no prompt it can take is
    too long. Arguments as for `offline_tokens_per_s`."""
    m = get_model(model)

    def allowed(prompt):
        bound = offline_tokens_per_s(
            m, chip, n_chips, prompt_len=prompt, output_len=output_len, batch=batch, **kwargs
        )
        return bound >= tokens_per_s

    if not allowed(0):
        return None
    lo, hi = 0, m.max_context or 1 << 20
    if allowed(hi):
        return hi
    while hi - lo > 1:  # allowed(lo), not allowed(hi); the bound falls as prompts grow
        mid = (lo + hi) // 2
        lo, hi = (mid, hi) if allowed(mid) else (lo, mid)
    return lo
