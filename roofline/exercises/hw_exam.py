"""The worked exam: five questions across the book (one chip, the critical batch, a collective,
the KV cache, MFU), each with a worked solution, and a per-student version for a class.

It is a homework set (`homework.define_set`, set id "exam"): every student gets their own
numbers from their id, checked by `homework.check` and graded by `python -m roofline grade`
like the homework. The book's page (exercises/exam.md) shows the demo id's numbers; a teacher
hands out each student's version with

    python -m roofline exam --student s1234567 --out exam-s1234567.md
    python -m roofline exam --student s1234567 --solutions --out key-s1234567.md

`worked(question, params)` derives each answer in words and numbers from the formula it shows
(plain arithmetic, not the checker's functions); a test checks that the checker accepts it.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from .. import (
    collective_time,
    critical_intensity,
    estimate,
    exact_critical_batch_size,
    get_chip,
    get_model,
    matmul,
    mfu,
    training_flops_per_token,
)
from ..transformer import kv_cache_bytes
from ..units import format_bandwidth, format_bytes, format_flops_rate, format_time
from . import editions
from .core import Mistake, distinct_mistakes
from .homework import (
    DEMO_ID,
    TIE_MARGIN,
    Draw,
    HomeworkSet,
    define_set,
    draw_until,
    parameters,
    register_question,
    tie_ratio,
)
from .homework import given as homework_given

SET_ID = "exam"
CHIPS = ("A100 SXM", "H100 SXM", "H200", "B200", "MI300X", "TPU v5e", "TPU v5p", "TPU v6e")
BATCHES = (64, 128, 256, 512, 1024, 2048)
DIMS = (2048, 4096, 8192, 16384)
RING_CHIPS = (4, 8, 16, 32)
MESSAGE_MIB = (64, 256, 1024)
LINK_GB_PER_S = (25, 50, 100, 200, 450)  # one way, per link
HOP_LATENCY_US = (1, 2, 5, 10)
KV_MODELS = ("Llama 3 8B", "Llama 3 70B", "Llama 3.1 405B")
CONTEXTS = (4096, 8192, 32768)
KV_DTYPES = ("bf16", "fp8")
TRAIN_MODELS = ("Llama 3 8B", "Llama 3 70B")
SEQ_LENS = (2048, 4096, 8192)
TRAIN_CHIPS = (8, 64, 256, 1024)
#: The measured MFU the throughput is made from (its tokens/s are then shown to 3 digits).
TARGET_MFU = (0.30, 0.35, 0.40, 0.45, 0.50, 0.55)
QUESTIONS = ("q1", "q2", "q3", "q4", "q5")


def _draw_once(draw: Draw) -> dict:
    p = {
        "chip": draw.choice(CHIPS),
        "B": draw.choice(BATCHES),
        "D": draw.choice(DIMS),
        "F": draw.choice(DIMS),
        "ring_n": draw.choice(RING_CHIPS),
        "message_bytes": draw.choice(MESSAGE_MIB) * 2**20,
        "link_bytes_per_s": draw.choice(LINK_GB_PER_S) * 1e9,
        "hop_latency_s": draw.choice(HOP_LATENCY_US) / 1e6,
        "kv_model": draw.choice(KV_MODELS),
        "context": draw.choice(CONTEXTS),
        "kv_dtype": draw.choice(KV_DTYPES),
        "train_model": draw.choice(TRAIN_MODELS),
        "seq_len": draw.choice(SEQ_LENS),
        "train_chips": draw.choice(TRAIN_CHIPS),
    }
    target = draw.choice(TARGET_MFU)
    per_token = training_flops_per_token(p["train_model"], p["seq_len"])
    peak = get_chip(p["chip"]).peak_flops_per_s("bf16")
    p["tokens_per_s"] = float(f"{target * p['train_chips'] * peak / per_token:.3g}")
    return p


def _accept(p: dict) -> bool:
    """q1's verdict is no near tie, and q2's batch exists (D F > I* (D + F))."""
    e = estimate(matmul(p["B"], p["D"], p["F"]), p["chip"])
    ridge = critical_intensity(p["chip"])
    return tie_ratio((e.t_math, e.t_comms)) >= 1 + TIE_MARGIN and p["D"] * p["F"] > 2 * ridge * (
        p["D"] + p["F"]
    )


def make_parameters(draw: Draw) -> dict:
    return draw_until(draw, _draw_once, _accept)


#: Significant digits of the peak the handout prints: all the catalog holds (MI300X's
#: 1.3074 PFLOP/s), so that q2's four significant digits follow from the printed figure.
PEAK_DIGITS = 5


def _chip_row(p: dict):
    chip = get_chip(p["chip"])
    return (
        "chip",
        f"{chip.name}: {format_flops_rate(chip.peak_flops_per_s('bf16'), PEAK_DIGITS)} dense bf16, "
        f"{format_bandwidth(chip.hbm_bytes_per_s)} memory bandwidth",
    )


def describe(p: dict) -> list:
    m = get_model(p["train_model"])
    return [
        _chip_row(p),
        ("q1, q2: matmul X[B, D] @ W[D, F], bf16", f"B = {p['B']}, D = {p['D']}, F = {p['F']}"),
        (
            "q3: ring all-reduce",
            f"{p['message_bytes'] // 2**20} MiB over {p['ring_n']} chips, links of "
            f"{format_bandwidth(p['link_bytes_per_s'])} one way, "
            f"{format_time(p['hop_latency_s'])} per step",
        ),
        ("q4: KV cache", _kv_text(p)),
        (
            "q5: training run",
            f"{m.label} (L = {m.layers}, H = {m.heads}, d_h = {_head_dim(m)}, "
            f"matmul weights Psi_matmul = {m.matmul_params:,}), sequences of T = {p['seq_len']:,}, "
            f"{p['train_chips']} chips, {p['tokens_per_s']:,.0f} tokens/s measured",
        ),
    ]


def _kv_text(p: dict) -> str:
    m = get_model(p["kv_model"])
    kv_heads = m.kv_heads if m.kv_heads is not None else m.heads
    return (
        f"{m.label} (L = {m.layers}, H_kv = {kv_heads}, d_h = {_head_dim(m)}), one sequence "
        f"of {p['context']:,} tokens, {p['kv_dtype']}"
    )


def _est(p):
    return estimate(matmul(p["B"], p["D"], p["F"]), p["chip"])


def _q1(p):
    return _est(p).t_lower


def _q2(p):
    return exact_critical_batch_size(p["chip"], p["D"], p["F"])


def _q3(p):
    return collective_time(
        "all-reduce",
        p["message_bytes"],
        p["ring_n"],
        p["link_bytes_per_s"],
        "ring",
        latency_s=p["hop_latency_s"],
    )


def _q4(p):
    return kv_cache_bytes(p["kv_model"], p["context"], p["kv_dtype"])


def _q5(p):
    return mfu(p["train_model"], p["tokens_per_s"], p["chip"], p["train_chips"], p["seq_len"])


ANSWERS = {"q1": _q1, "q2": _q2, "q3": _q3, "q4": _q4, "q5": _q5}

BYTES_PER_NUMBER = {"bf16": 2, "fp8": 1}


def _head_dim(m) -> int:
    """d_h: the config's head_dim, or d_model / heads where it gives none."""
    return m.head_dim if m.head_dim is not None else m.d_model // m.heads


def _solve_q1(p) -> tuple[list[str], float]:
    chip, B, D, F = get_chip(p["chip"]), p["B"], p["D"], p["F"]
    peak, bw = chip.peak_flops_per_s("bf16"), chip.hbm_bytes_per_s
    flops, nbytes = 2 * B * D * F, 2 * (B * D + D * F + B * F)
    t_math, t_comms = flops / peak, nbytes / bw
    bound = (
        "compute-bound (the math is slower)"
        if t_math > t_comms
        else ("memory-bound (the bytes are slower)")
    )
    return [
        f"FLOPs = 2 B D F = 2 x {B} x {D} x {F} = {flops:,}",
        f"bytes = 2 (B D + D F + B F) = 2 x ({B * D:,} + {D * F:,} + {B * F:,}) = {nbytes:,} "
        "(bf16: 2 bytes per element; X and W read once, Y written once)",
        f"t_math = FLOPs / P = {flops:,} / {format_flops_rate(peak, PEAK_DIGITS)} = {format_time(t_math)}",
        f"t_comms = bytes / BW_mem = {nbytes:,} B / {format_bandwidth(bw)} = "
        f"{format_time(t_comms)}",
        f"t_lower = max(t_math, t_comms) = {format_time(max(t_math, t_comms))}: {bound}",
    ], max(t_math, t_comms)


def _solve_q2(p) -> tuple[list[str], float]:
    chip, D, F = get_chip(p["chip"]), p["D"], p["F"]
    peak, bw = chip.peak_flops_per_s("bf16"), chip.hbm_bytes_per_s
    ridge = peak / bw
    batch = ridge * D * F / (D * F - ridge * (D + F))
    return [
        f"I* = P / BW_mem = {format_flops_rate(peak, PEAK_DIGITS)} / {format_bandwidth(bw)} = "
        f"{ridge:.4g} FLOPs/B",
        "t_math = t_comms: 2 B D F / P = 2 (B D + D F + B F) / BW_mem; multiply by P / 2 and "
        "collect the terms in B: B (D F - I* (D + F)) = I* D F",
        f"B = I* D F / (D F - I* (D + F)) = {ridge:.4g} x {D} x {F} / ({D * F:,} - {ridge:.4g} x "
        f"{D + F:,}) = {batch:.4g}",
        f"(the B << D, F approximation gives I* = {ridge:.4g}: the exact batch is larger)",
    ], batch


def _solve_q3(p) -> tuple[list[str], float]:
    n, V, bw, a = p["ring_n"], p["message_bytes"], p["link_bytes_per_s"], p["hop_latency_s"]
    latency, transfer = 2 * (n - 1) * a, 2 * (n - 1) / n * V / bw
    return [
        "a ring all-reduce is a reduce-scatter then an all-gather: 2 (n - 1) steps, and each "
        "chip sends 2 (n - 1) / n of the V bytes over its link (one way)",
        f"T = 2 (n - 1) alpha + 2 (n - 1) / n x V / BW_link = 2 x {n - 1} x {format_time(a)} + "
        f"2 x {n - 1}/{n} x {V:,} B / {format_bandwidth(bw)}",
        f"= {format_time(latency)} + {format_time(transfer)} = {format_time(latency + transfer)}",
    ], latency + transfer


def _solve_q4(p) -> tuple[list[str], float]:
    m, T, w = get_model(p["kv_model"]), p["context"], BYTES_PER_NUMBER[p["kv_dtype"]]
    kv_heads = m.kv_heads if m.kv_heads is not None else m.heads  # None: one per query head
    per_token = 2 * m.layers * kv_heads * _head_dim(m) * w
    return [
        f"per token, K and V for every layer and KV head: 2 x L x H_kv x d_h x w = 2 x "
        f"{m.layers} x {kv_heads} x {_head_dim(m)} x {w} = {per_token:,} bytes ({p['kv_dtype']}: "
        f"{w} byte{'s' if w > 1 else ''} per number)",
        f"one sequence of T = {T:,} tokens: {per_token:,} x {T:,} = {per_token * T:,} bytes = "
        f"{format_bytes(per_token * T)}",
    ], per_token * T


def _solve_q5(p) -> tuple[list[str], float]:
    m, chip = get_model(p["train_model"]), get_chip(p["chip"])
    T, n, R = p["seq_len"], p["train_chips"], p["tokens_per_s"]
    per_token = 6 * m.matmul_params + 12 * m.layers * m.heads * _head_dim(m) * T
    peak = chip.peak_flops_per_s("bf16")
    achieved = per_token * R
    return [
        f"model FLOPs per token = 6 Psi_matmul + 12 L H d_h T = 6 x {m.matmul_params:,} + 12 x "
        f"{m.layers} x {m.heads} x {_head_dim(m)} x {T:,} = {per_token:,}",
        f"achieved = FLOPs per token x tokens/s = {per_token:,} x {R:,.0f} = "
        f"{format_flops_rate(achieved)}",
        f"MFU = achieved / (n x P) = {format_flops_rate(achieved)} / ({n} x "
        f"{format_flops_rate(peak, PEAK_DIGITS)}) = {achieved / (n * peak):.1%}",
    ], achieved / (n * peak)


SOLVERS = {"q1": _solve_q1, "q2": _solve_q2, "q3": _solve_q3, "q4": _solve_q4, "q5": _solve_q5}


def worked(question: str, params: dict) -> tuple[str, float]:
    """The worked solution of `question` with these numbers (one step a line) and the value
    its arithmetic arrives at (computed from the formula shown, not by the checker's code)."""
    if question not in SOLVERS:
        raise KeyError(f"the exam has no question {question!r}; it has {', '.join(QUESTIONS)}")
    with editions.frozen(SET_ID):  # the figures the checker and the grader use, not the live
        lines, value = SOLVERS[question](params)  # catalog (a catalog fix moves no one's key)
    return "\n".join(lines), value


def solution(question: str, params: dict) -> str:
    """The worked solution's text (see `worked`)."""
    return worked(question, params)[0]


def _q1_mistakes(p):
    e = _est(p)
    listed = [
        Mistake(
            e.t_upper,
            "That is t_math + t_comms, the time with no overlap; the lower "
            "bound overlaps them: max(t_math, t_comms).",
        ),
        Mistake(
            min(e.t_math, e.t_comms),
            "That is the shorter of the two times; the longer one sets the lower bound.",
        ),
    ]
    if e.t_math / 2 > e.t_comms:  # compute-bound even at half the FLOPs: the slip shows
        listed.append(
            Mistake(
                e.t_math / 2,
                "That is half of t_math: the FLOP count lost its factor 2 (a matmul does "
                "2 B D F FLOPs, a multiply and an add per term of each sum), or the 2:4-sparse "
                "peak stands where the dense one belongs.",
            )
        )
    return listed


def _q3_mistakes(p):
    n, V, bw, a = p["ring_n"], p["message_bytes"], p["link_bytes_per_s"], p["hop_latency_s"]
    return distinct_mistakes(
        _q3(p),
        [
            Mistake(
                2 * (n - 1) / n * V / bw, "You left out the latency: 2 (n - 1) steps of alpha each."
            ),
            Mistake(
                2 * (n - 1) * a + 2 * V / bw,
                "Each chip sends (n - 1)/n of the data per "
                "half, not all of it: the ring's share belongs in the bandwidth term.",
            ),
        ],
    )


def _q5_mistakes(p):
    m = get_model(p["train_model"])
    no_attention = (
        6
        * m.matmul_params
        * p["tokens_per_s"]
        / (p["train_chips"] * get_chip(p["chip"]).peak_flops_per_s("bf16"))
    )
    return distinct_mistakes(
        _q5(p),
        [
            Mistake(
                _q5(p) * p["train_chips"],
                "That divides by one chip's peak; the "
                "throughput is the whole run's, so divide by all the chips' peak.",
            ),
            Mistake(
                no_attention,
                "That counts 6 Psi_matmul only: add the attention term 12 L H d_h T per token.",
            ),
        ],
    )


def _register(q, **kwargs):
    return register_question(SET_ID, q, DEMO, **kwargs)


DEMO = make_parameters(Draw(f"{SET_ID}\0{DEMO_ID}"))

_register(
    "q1",
    twice=("sparse", "dtype", "multiply-add"),
    byte_units=True,
    question="What is the lower bound on your matmul's time, max(t_math, t_comms)?",
    answer=_q1,
    kind="time",
    mistakes=_q1_mistakes,
    hints=("t_math = 2 B D F / P; t_comms = 2 (B D + D F + B F) bytes / BW_mem.",),
)
_register(
    "q2",
    twice=("sparse", "dtype"),
    question="Above which batch size B is your matmul compute-bound, exactly for your D and F, "
    "to 4 significant digits?",
    answer=_q2,
    kind="number",
    tolerance=0.001,
    hints=("Solve 2 B D F / P = 2 (B D + D F + B F) / BW_mem for B.",),
)
_register(
    "q3",
    twice=("all-reduce", "bidirectional"),
    byte_units=True,
    question="How long does the ring all-reduce take?",
    answer=_q3,
    kind="time",
    mistakes=_q3_mistakes,
    hints=("A ring all-reduce is a reduce-scatter and an all-gather: 2 (n - 1) steps.",),
)
_register(
    "q4",
    twice=("kv", "dtype"),
    question="How many bytes does the KV cache of one sequence take?",
    answer=_q4,
    kind="size",
    hints=("Per token: K and V for every layer and every KV head of d_h numbers.",),
)
_register(
    "q5",
    twice=("forward-backward", "multiply-add"),
    question="What MFU does the measured training throughput reach?",
    answer=_q5,
    kind="number",
    mistakes=_q5_mistakes,
    hints=("MFU = model FLOPs per token x tokens/s / (chips x dense peak).",),
)

define_set(
    HomeworkSet(
        SET_ID, "The worked exam", make_parameters, QUESTIONS, describe, notebook="exam.ipynb"
    )
)

QUESTION_TEXT = {
    "q1": "Matmul time (chapters 1 to 4). What is the lower bound on the time of your matmul "
    "X[B, D] @ W[D, F] in bf16 on your chip, max(t_math, t_comms), at the dense bf16 peak and "
    "the full memory bandwidth? Is it compute-bound or memory-bound?",
    "q2": "Critical batch (chapter 4). Keep D and F: above which batch size B is the matmul "
    "compute-bound? Solve t_math = t_comms exactly (no B << D, F approximation), to 4 "
    "significant digits.",
    "q3": "A collective (chapter 6). How long does a one-way ring all-reduce of your message take "
    "over your chips, with the latency per step and the one-way link bandwidth given?",
    "q4": "The KV cache (chapter 7). How many bytes does the KV cache of one sequence of your "
    "model take at your context length and dtype?",
    "q5": "MFU (chapter 10). Your training run measures the tokens/s given. What model FLOPs "
    "utilisation (MFU) is that, counting 6 Psi_matmul + 12 L H d_h T FLOPs per token?",
}


def handout(student_id: str, solutions: bool = False) -> str:
    """The exam with `student_id`'s numbers as Markdown (with the worked solutions: the key)."""
    params = parameters(SET_ID, student_id, quiet=True)
    shown = student_id.strip() or DEMO_ID
    given = homework_given(SET_ID, params)  # the set's frozen edition, named as in the notebook
    lines = [f"# The worked exam: student {shown}", "", given.title, ""]
    rows = given.rows
    lines += [f"- {label}: {value}" for label, value in rows]
    lines += [
        "",
        "Give each answer with its unit and show how you derived it. The exam notebook "
        "(exercises/exam.ipynb, with STUDENT_ID set to your id) checks each answer.",
        "",
    ]
    for q in QUESTIONS:
        lines += [f"## {q}", "", QUESTION_TEXT[q], ""]
        if solutions:
            lines += ["Solution:", "", "```text", solution(q, params), "```", ""]
    return "\n".join(lines)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m roofline exam",
        description="Write the worked exam with one student's numbers (the same numbers the "
        "exam notebook and `python -m roofline grade` derive from the id).",
    )
    parser.add_argument("--student", required=True, help="the student's id, e.g. s1234567")
    parser.add_argument("--solutions", action="store_true", help="add the worked solutions")
    parser.add_argument("--out", type=Path, help="Markdown file to write (default: print it)")
    args = parser.parse_args(argv)
    text = handout(args.student, args.solutions)
    if args.out is None:
        print(text)
        return 0
    try:
        args.out.write_text(text + "\n", encoding="utf-8")
    except OSError as error:
        print(f"cannot write {args.out}: {error.strerror or error}", file=sys.stderr)
        return 2
    print(f"wrote {args.out}")
    return 0
