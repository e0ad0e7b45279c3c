"""Homework part 4: a whole model, trained and served (chapters 10-12).

Every student gets a published model, an 8-GPU NVLink node (or half of one), a training
layout (tensor parallelism inside data parallelism or ZeRO-3 sharding) and a serving setup.
The questions: a training step's lower bound and its limiting resource, the MFU of a given
measured throughput, the memory per chip and whether it fits, then serving's decode
tokens/s, the largest batch that fits and the time to first token.

A draw is redrawn (`homework.draw_until`) until it is one a teacher can defend: the
slowest resource of the training step, and of the decode step, takes at least
`homework.TIE_MARGIN` longer than the next; the training memory lies at least
TIE_MARGIN away from the chip's capacity (the fit verdict survives rounding); the serving
batch fits, with room for at least one more sequence.
"""

from __future__ import annotations

import math

from .. import get_chip, get_model, serving_estimate, training_flops_per_token, training_step
from ..units import format_bandwidth, format_bytes, format_flops_rate
from .core import Mistake
from .homework import (
    DEMO_ID,
    TIE_MARGIN,
    Draw,
    HomeworkSet,
    define_set,
    draw_until,
    register_question,
    tie_ratio,
)
from .links import chip_link

SET_ID = "part4"
#: (published model, layers): a layer count other than the published one is a small variant,
#: the same layers stacked fewer times (so that more students' training fits in memory).
MODELS = (
    ("Llama 3 8B", 32),
    ("Llama 3 8B", 16),
    ("Llama 3 8B", 24),
    ("Llama 3 70B", 80),
    ("Llama 3 70B", 40),
    ("Mixtral 8x7B", 32),
    ("Mixtral 8x7B", 16),
    ("Mixtral 8x7B", 24),
)
#: Chips in 8-GPU NVLink-switch nodes: every collective of this homework stays in the node.
CHIPS = ("A100 SXM", "H100 SXM", "H200", "B200")
CHIP_COUNTS = (4, 8)
TP_DEGREES = (1, 2, 4, 8)
DATA_AXES = ("dp", "fsdp")
SEQ_LENS = (512, 1024, 2048, 4096)
SEQUENCES_PER_REPLICA = (1, 2, 4, 8)
#: The measured training throughput, as a fraction of the bound's tokens/s (q3).
MEASURED_FRACTIONS = (0.45, 0.55, 0.65, 0.75)
SERVE_BATCHES = (1, 4, 16, 64, 256)
CONTEXTS = (1024, 2048, 4096)
PROMPTS = (512, 1024, 2048)
WEIGHT_DTYPES = ("bf16", "int8")
RESOURCES = ("math", "HBM", "TP", "FSDP", "DP")


def _draw_once(draw: Draw) -> dict:
    n = draw.choice(CHIP_COUNTS)
    tp = draw.choice(d for d in TP_DEGREES if d <= n)
    name, layers = draw.choice(MODELS)
    return {
        "model": name,
        "layers": layers,
        "chip": draw.choice(CHIPS),
        "n": n,
        "tp": tp,
        "data_axis": draw.choice(DATA_AXES),
        "seq_len": draw.choice(SEQ_LENS),
        "sequences": draw.choice(SEQUENCES_PER_REPLICA),
        "measured_fraction": draw.choice(MEASURED_FRACTIONS),
        "serve_tp": draw.choice(d for d in TP_DEGREES if d <= n),
        "serve_batch": draw.choice(SERVE_BATCHES),
        "context": draw.choice(CONTEXTS),
        "prompt": draw.choice(PROMPTS),
        "weights": draw.choice(WEIGHT_DTYPES),
    }


def model(p: dict):
    """The student's model: the published one, or a variant with fewer layers."""
    published = get_model(p["model"])
    if p["layers"] == published.layers:
        return published
    return published.with_changes(
        layers=p["layers"], name=f"{published.name} at {p['layers']} layers", source=None
    )


def layout(p: dict) -> dict:
    """The training layout: tp chips per model copy, the rest on the data axis."""
    return {"tp": p["tp"], p["data_axis"]: p["n"] // p["tp"]}


def layout_text(p: dict) -> str:
    lay = layout(p)
    return ", ".join(f"{axis}={degree}" for axis, degree in lay.items() if degree > 1) or "one chip"


def tokens_per_step(p: dict) -> int:
    """Global batch: `sequences` sequences of seq_len per model copy (n / tp copies)."""
    return p["sequences"] * p["seq_len"] * (p["n"] // p["tp"])


def train(p: dict):
    """The student's training step (the package's `training_step`, no recomputation, one
    micro-batch per model copy, activations by Korthikanti's GPT-layer formula as q4's hint
    states it)."""
    return training_step(
        model(p),
        p["chip"],
        p["n"],
        tokens_per_step(p),
        p["seq_len"],
        layout(p),
        microbatches=1,
        activations="gpt-layer",
    )


def serve(p: dict):
    """The student's serving estimate: n chips in replicas of serve_tp, bf16 KV cache."""
    return serving_estimate(
        model(p),
        p["chip"],
        n_chips=p["n"],
        tp=p["serve_tp"],
        batch=p["serve_batch"],
        context_len=p["context"],
        prompt_len=p["prompt"],
        weights=p["weights"],
    )


def measured_tokens_per_s(p: dict) -> float:
    """q3's measured throughput, to 4 significant digits (as shown; made by `_measured`)."""
    return p["measured_tokens_per_s"]


def _four_digits(value: float) -> str:
    """`value` (already 4 significant digits) shown with all four: 12,340 or 123.4."""
    decimals = max(0, 3 - math.floor(math.log10(abs(value)))) if value else 0
    return f"{value:,.{decimals}f}"


def mfu(p: dict) -> float:
    """q3: measured tokens/s x model FLOPs per token / (chips x dense bf16 peak)."""
    per_token = training_flops_per_token(model(p), p["seq_len"])
    peak = get_chip(p["chip"]).peak_flops_per_s("bf16")
    return measured_tokens_per_s(p) * per_token / (p["n"] * peak)


def acceptable(p: dict) -> bool:
    """No near tie in the training or decode bound, no near tie in the training fit, a
    serving split the model allows and a serving batch that fits with room to spare."""
    m = model(p)
    if m.heads % p["serve_tp"] or m.heads % p["tp"]:
        return False
    step = train(p)
    busy = [t for r, t in step.times.items() if step.kinds[r] != "bubble"]
    if tie_ratio(busy) < 1 + TIE_MARGIN:
        return False
    if abs(step.memory_bytes / step.memory_capacity_bytes - 1) < TIE_MARGIN:
        return False
    est = serve(p)
    if (
        tie_ratio(est.times.values()) < 1 + TIE_MARGIN
        or tie_ratio(est.prefill_times.values()) < 1 + TIE_MARGIN
    ):
        return False
    return est.max_batch > p["serve_batch"]


#: q2's answer is drawn first, evenly over these, so that guessing "math" passes one
#: student in three, not three in four (DP through an in-node switch rarely outlasts the
#: optimizer's HBM traffic, so it is not a target; it can still come up).
TARGETS = ("math", "HBM", "FSDP")
#: Draws tried for the target before any acceptable draw is taken.
TARGET_TRIES = 40


def _draw_for(draw: Draw, target: str) -> dict:
    """A draw aimed at `target` limiting the training step (the fsdp axis for FSDP; the
    rest as drawn, redrawn by `make_parameters` until the target limits)."""
    p = _draw_once(draw)
    if target == "FSDP":
        p["data_axis"] = "fsdp"
    return p


def make_parameters(draw: Draw) -> dict:
    """A student's model, chip, chips, layouts and sizes; redrawn until acceptable, and
    (for the first `TARGET_TRIES` draws) until the drawn target limits the training step."""
    target = draw.choice(TARGETS)
    tries = [0]

    def accept(p: dict) -> bool:
        tries[0] += 1
        if not acceptable(p):
            return False
        return tries[0] > TARGET_TRIES or train(p).slowest == target

    return _measured(draw_until(draw, lambda d: _draw_for(d, target), accept))


def _measured(p: dict) -> dict:
    """The drawn share of the bound's tokens/s (q3) replaced by the throughput it makes, to 4
    significant digits: the share is nearly q3's answer (MFU = share x the bound's MFU
    ceiling), so it must not be among the parameters a student can print."""
    shown = dict(p)
    fraction = shown.pop("measured_fraction")
    shown["measured_tokens_per_s"] = float(f"{fraction * train(p).tokens_per_s:.4g}")
    return shown


def _model_row(p) -> tuple:
    m = model(p)
    shape = (
        f"{m.layers} layers, d_model {m.d_model}, {m.heads} heads of {m.head_dim} "
        f"({m.kv_heads} KV heads), d_ff {m.d_ff} ({'gated' if m.gated_mlp else 'plain'} MLP), "
        f"vocabulary {m.vocab:,}"
    )
    if m.is_moe:
        shape += f", {m.experts} experts of which {m.experts_per_token} per token"
    return ("model", f"{m.label}: {shape}; {m.params:,} parameters")


def describe(p: dict) -> list:
    chip = get_chip(p["chip"])
    link = chip_link(chip)
    m = model(p)
    return [
        _model_row(p),
        ("matmul weights per token (N)", f"{m.matmul_params:,}"),
        (
            "chip",
            f"{chip.name}: {format_flops_rate(chip.peak_flops_per_s('bf16'))} dense bf16, "
            f"{format_bandwidth(chip.hbm_bytes_per_s)} and {format_bytes(chip.hbm_bytes)} of "
            f"HBM; {link.count} {link.name} links of {format_bandwidth(link.one_way_bytes_per_s)} "
            "one way into the switch",
        ),
        ("chips", f"{p['n']} in one node"),
        (
            "training",
            f"layout {layout_text(p)}; {p['sequences']} sequence(s) of {p['seq_len']:,} tokens "
            f"per model copy and step ({tokens_per_step(p):,} tokens per step); bf16, "
            "Adam, no recomputation, fused attention",
        ),
        ("q3: measured training throughput", f"{_four_digits(measured_tokens_per_s(p))} tokens/s"),
        (
            "serving",
            f"tp={p['serve_tp']} ({p['n'] // p['serve_tp']} replica(s)); batch "
            f"{p['serve_batch']} per replica at context {p['context']:,}; weights in "
            f"{p['weights']}, bf16 KV cache and matmuls; prompt of {p['prompt']:,} tokens (q8)",
        ),
    ]


def _register(q, **kwargs):
    return register_question(SET_ID, q, DEMO, **kwargs)


DEMO = make_parameters(Draw(f"{SET_ID}\0{DEMO_ID}"))


def _slowest(p) -> str:
    return train(p).slowest


def _no_overlap(p) -> float:
    return train(p).t_upper


_register(
    "q1",
    twice=("sparse",),
    byte_units=True,
    question="What is the lower bound on one training step's time (every resource overlapped "
    "with every other, except that the data-parallel all-reduce can only run beside the "
    "backward pass)?",
    answer=lambda p: train(p).t_lower,
    kind="time",
    mistakes=lambda p: [
        Mistake(
            _no_overlap(p),
            "That is the sum of the times (no overlap at all), the upper bound; the lower bound "
            "is the slowest resource alone.",
        ),
        Mistake(
            train(p).times["math"] * (1 + 2 / 6),
            "That counts 8 FLOPs per weight and token (full recomputation); this step "
            "recomputes nothing: 6.",
        ),
    ],
    hints=(
        "Work out each resource's time per step on one chip: math, HBM traffic and the "
        "collectives of each parallel axis in use; the bound is the largest, except a DP "
        "all-reduce: only the backward pass (2/3 of the math) hides it, so what outlasts "
        "the backward adds to the step.",
    ),
)
_register(
    "q2",
    question="Which resource limits the training step: math, HBM, TP, FSDP or DP?",
    answer=_slowest,
    kind="choice",
    choices=RESOURCES,
    choice_reasons={
        "math": "Not math: the step's FLOPs over the chips' dense peak is not the longest of "
        "q1's times here; work out the HBM and the collectives' times too and take the largest.",
        "HBM": "Not HBM: the bytes each chip reads and writes per step over its HBM bandwidth "
        "are not the longest of q1's times here; compare them with the math and each collective.",
        "TP": "Not TP: the tensor-parallel all-reduces of activations are not the longest of "
        "q1's times here (with no tensor parallelism they take no time at all); compare each "
        "resource's time.",
        "FSDP": "Not FSDP: the all-gathers of the weights and the reduce-scatter of the "
        "gradients over the FSDP group are not the longest of q1's times here (with no FSDP "
        "they take no time at all); compare each resource's time.",
        "DP": "Not DP: the all-reduce of the gradients over the data-parallel replicas, its "
        "whole time, is not the longest of q1's times here; compare each resource's time.",
    },
    hints=("The resource whose time is the largest in q1.",),
)
_register(
    "q3",
    twice=("sparse",),
    question="What MFU does the measured training throughput reach?",
    answer=mfu,
    kind="number",
    mistakes=lambda p: [
        Mistake(
            mfu(p) * p["n"],
            "That divides by one chip's peak; the throughput is the whole system's, so divide "
            "by all the chips' peak.",
        ),
        Mistake(
            train(p).mfu_ceiling,
            "That is the bound's MFU ceiling; the question asks for the measured throughput's.",
        ),
    ],
    hints=("MFU = tokens/s x model FLOPs per token / (chips x dense peak).",),
)
_register(
    "q4",
    question="How many bytes does each chip hold during training?",
    answer=lambda p: train(p).memory_bytes,
    kind="size",
    mistakes=lambda p: [
        Mistake(
            train(p).memory_bytes - train(p).memory["activations"],
            "That is the model state alone; add the activations kept for the backward pass.",
        ),
    ],
    hints=(
        "16 bytes per parameter of the chip's share, plus, for each layer the chip holds, "
        "34 s b D / t bytes of activations (Korthikanti et al. 2022): s = seq_len tokens per "
        "sequence, b = sequences per micro-batch, D = the model width, t = tp.",
    ),
)
_register(
    "q5",
    question="Does the training step fit in the chip's memory?",
    answer=lambda p: "yes" if train(p).fits else "no",
    kind="choice",
    choices=("yes", "no"),
    choice_reasons={
        "yes": "Not yes: the bytes each chip holds (q4: the model state plus the activations) "
        "exceed its HBM capacity; compare the two in the same unit.",
        "no": "Not no: the bytes each chip holds (q4: the model state plus the activations) "
        "are within its HBM capacity; compare the two in the same unit.",
    },
    hints=("Compare q4 with the chip's HBM capacity.",),
)
_register(
    "q6",
    byte_units=True,
    question="At most how many tokens per second does the whole system decode?",
    answer=lambda p: serve(p).tokens_per_s,
    kind="number",
    mistakes=lambda p: [
        Mistake(
            serve(p).tokens_per_s / (p["n"] // p["serve_tp"]),
            "That is one replica's; all the replicas decode at once.",
        ),
    ],
    hints=("replicas x batch / (the slowest of math, HBM and TP per decode step).",),
)
_register(
    "q7",
    byte_units=True,
    rounding=(
        "down",
        "because a sequence's cache fits whole or not at all: the whole number below the quotient is the most that fit.",
    ),
    question="What is the largest batch per replica whose KV cache fits?",
    answer=lambda p: serve(p).max_batch,
    kind="number",
    tolerance=0.01,
    hints=(
        "(HBM - weights per chip - 10 % reserve) / KV bytes per sequence per chip, rounded down.",
    ),
)
_register(
    "q8",
    twice=("sparse",),
    byte_units=True,
    question="What is the lower bound on the time to first token of the prompt?",
    answer=lambda p: serve(p).ttft_s,
    kind="time",
    hints=("The prefill of the prompt: the slowest of its math, HBM and TP times.",),
)

define_set(
    HomeworkSet(
        SET_ID,
        "Homework part 4 (a whole model)",
        make_parameters,
        tuple(f"q{i}" for i in range(1, 9)),
        describe,
    )
)
