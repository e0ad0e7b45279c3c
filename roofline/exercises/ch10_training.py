"""Exercises of chapter 10, "A training step on the roofline" (ids start with "training-").

Answers come from the package's model layer (`roofline.models`: `get_model`,
`training_flops_per_token`) and the catalog; each exercise's model or chip is one the chapter
did not work through.
"""

import math

from .. import get_chip
from .core import Exercise, Mistake, register

#: Bytes per parameter of mixed-precision training with Adam: bf16 weight and gradient, fp32
#: master weight and the two fp32 moments.
ADAM_MIXED_BYTES_PER_PARAM = 2 + 2 + 4 + 4 + 4


def _model(name):
    from .. import models

    return models.get_model(name)


def _flops_per_token(name, seq_len, **options):
    from .. import training

    return training.training_flops_per_token(_model(name), seq_len, **options)


def _attention(name, seq_len):
    m = _model(name)
    return 12 * m.layers * m.heads * m.head_dim * seq_len


register(
    Exercise(
        id="training-mixtral-flops-per-token",
        twice=("multiply-add",),
        title="Training FLOPs per token of Mixtral 8x7B (chapter 10)",
        question="How many FLOPs does one token of a training step of Mixtral 8x7B cost (each "
        "token goes to 2 of the 8 experts of every layer), with sequences of T = 32768 tokens, "
        "counting attention as PaLM does (12 L H d_h T, no causal halving) and no recomputation?",
        answer=lambda p: _flops_per_token(p["model"], p["T"]),
        kind="count",
        params={"model": "Mixtral 8x7B", "T": 32768},
        hints=(
            "6 FLOPs per matmul parameter a token uses (the active ones: 2 experts of 8; the "
            "embedding table is a lookup) plus the attention term 12 x layers x (heads x "
            "head_dim) x T.",
        ),
        mistakes=lambda p: [
            Mistake(
                _flops_per_token(p["model"], p["T"], attention=False),
                "That is the weight matmuls alone; add the attention term 12 L H d_h T, large "
                "at this context length.",
            ),
            Mistake(
                6 * _model(p["model"]).params + _attention(p["model"], p["T"]),
                "That counts every expert; each token only goes through 2 of the 8, so only the "
                "active parameters cost FLOPs.",
            ),
            Mistake(
                _flops_per_token(p["model"], p["T"]) / 3,
                "That is the forward pass only; the backward pass does twice as much again.",
            ),
            Mistake(
                _flops_per_token(p["model"], p["T"], recompute="full"),
                "That counts full recomputation (one more forward pass); the question has none.",
            ),
            Mistake(
                _flops_per_token(p["model"], p["T"], causal=True),
                "That halves the attention term for causal masking; PaLM's convention counts it "
                "whole.",
            ),
        ],
    )
)

register(
    Exercise(
        id="training-hfu-to-mfu-a100",
        twice=("sparse",),
        title="From hardware FLOPs to MFU (chapter 10)",
        question="Narayanan et al. report 163e12 FLOP/s per A100 GPU for a 1T-parameter model, counting "
        "full recomputation (8 Psi per token instead of 6 Psi; ignore the attention and "
        "vocabulary terms). What MFU is that against the A100's dense bf16 peak?",
        answer=lambda p: 6 / 8 * p["hw_flops_per_s"] / get_chip(p["chip"]).peak_flops_per_s("bf16"),
        kind="number",
        params={"chip": "A100 SXM", "hw_flops_per_s": 163e12},
        hints=(
            "Of 8 Psi FLOPs per token the model needed 6 Psi: the model FLOP/s are 6/8 of the "
            "reported rate. Then divide by the dense bf16 peak.",
        ),
        mistakes=lambda p: [
            Mistake(
                p["hw_flops_per_s"] / get_chip(p["chip"]).peak_flops_per_s("bf16"),
                "That is the HFU (hardware FLOPs, recomputation included). MFU counts only the "
                "6 Psi the model needs: multiply by 6/8.",
            ),
            Mistake(
                8 / 6 * p["hw_flops_per_s"] / get_chip(p["chip"]).peak_flops_per_s("bf16"),
                "The factor is upside down: recomputation makes the hardware do more FLOPs than "
                "the model needs, so MFU is below HFU (x 6/8).",
            ),
        ],
    )
)

register(
    Exercise(
        id="training-states-mixtral-v5e",
        byte_units=True,
        rounding=(
            "up",
            "because the state must fit whole and chips come whole: the quotient's next whole number is the least that holds it.",
        ),
        title="How many TPU v5e chips just to hold the state? (chapter 10)",
        question="Mixtral 8x7B trained with bf16 weights and gradients and Adam in fp32 (master "
        "weights and both moments): ignoring activations, how many TPU v5e chips does it need at "
        "least to hold its weights, gradients and optimizer state?",
        answer=lambda p: math.ceil(
            ADAM_MIXED_BYTES_PER_PARAM * _model(p["model"]).params / get_chip(p["chip"]).hbm_bytes
        ),
        kind="number",
        tolerance=0.0,
        params={"model": "Mixtral 8x7B", "chip": "TPU v5e"},
        hints=(
            "16 bytes per parameter: 2 (bf16 weight) + 2 (bf16 gradient) + 4 (fp32 master) + "
            "4 + 4 (Adam's moments). Every expert is trained, not only the active ones.",
            "Divide by one chip's memory and round up.",
        ),
        mistakes=lambda p: [
            Mistake(
                math.ceil(
                    ADAM_MIXED_BYTES_PER_PARAM
                    * _model(p["model"]).active_params
                    / get_chip(p["chip"]).hbm_bytes
                ),
                "That counts only the active parameters. Every expert has weights, gradients "
                "and optimizer state, whether a token uses it or not.",
            ),
            Mistake(
                math.ceil(4 * _model(p["model"]).params / get_chip(p["chip"]).hbm_bytes),
                "That holds only the bf16 weights and gradients; Adam's fp32 master weights "
                "and two moments add 12 bytes per parameter.",
            ),
        ],
        generic_mistakes=False,
    )
)

register(
    Exercise(
        id="training-attention-ratio-gated",
        title="When attention matters, symbolically (chapter 10)",
        question="L layers of width D, attention width H d_h = D, a gated MLP of width F = 3D "
        "(three D x F matrices). Ignoring embeddings, write the ratio of the attention FLOPs per "
        "token (12 L D T) to 6 Psi, in T and D.",
        answer=lambda p: "2*T/(13*D)",
        kind="symbolic",
        symbols=("T", "D"),
        hints=(
            "Count the weights of one layer: Q, K, V, O are 4 D^2; the gated MLP is 3 D F.",
            "With F = 3D the MLP holds 9 D^2, so Psi = 13 L D^2.",
        ),
        mistakes=lambda p: [
            Mistake(
                "T/(6*D)",
                "That is the chapter's 12 D^2 layer (a plain 4D MLP, or a gated one of width "
                "8D/3); a gated MLP of width 3D holds 3 x 3 D^2 = 9 D^2.",
            ),
            Mistake(
                "T/(5*D)",
                "That counts two D x F matrices (a plain MLP); a gated MLP has three.",
            ),
            Mistake("12*T/(13*D)", "That compares with Psi, not 6 Psi."),
        ],
    )
)

register(
    Exercise(
        id="training-step-time-llama70-h100",
        twice=("sparse",),
        title="Step time of a Llama 3 70B run (chapter 10)",
        question="Llama 3 70B on 1024 H100 SXM GPUs, steps of 2^24 tokens in sequences of "
        "T = 8192, MFU 40 %, attention counted as PaLM does: how long does one step take?",
        answer=lambda p: (
            _flops_per_token(p["model"], p["T"])
            * p["tokens"]
            / (p["mfu"] * p["chips"] * get_chip(p["chip"]).peak_flops_per_s("bf16"))
        ),
        kind="time",
        params={
            "model": "Llama 3 70B",
            "T": 8192,
            "tokens": 2**24,
            "mfu": 0.4,
            "chips": 1024,
            "chip": "H100 SXM",
        },
        hints=(
            "Step FLOPs = (6 Psi + 12 L H d_h T) x tokens per step; the chips deliver "
            "MFU x chips x dense bf16 peak of them per second.",
        ),
        mistakes=lambda p: [
            Mistake(
                6
                * _model(p["model"]).params
                * p["tokens"]
                / (p["mfu"] * p["chips"] * get_chip(p["chip"]).peak_flops_per_s("bf16")),
                "That leaves out the attention term (12 L H d_h T per token), which at "
                "T = 8192 is several per cent.",
            ),
            Mistake(
                _flops_per_token(p["model"], p["T"])
                * p["tokens"]
                / (p["chips"] * get_chip(p["chip"]).peak_flops_per_s("bf16")),
                "That is the time at 100 % of the peak; divide by the MFU as well.",
            ),
        ],
    )
)
