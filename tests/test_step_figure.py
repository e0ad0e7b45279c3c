"""Chapter 10's figure of where a training step's time goes (issue 35): `step_time_figure` lays
each resource's time end to end, one bar per layout, in the book's figure style."""

from __future__ import annotations

import pytest
from test_figure_layout import _problems

import roofline as rl
from roofline import plots

TOKENS, SEQ, CHIPS = 2048 * 2048, 2048, 6144
LAYOUTS = {"PaLM": "dp=2,fsdp=256,tp=12", "more TP": "dp=2,fsdp=64,tp=48",
           "pipeline": "dp=16,tp=12,pp=32"}  # fmt: skip


@pytest.fixture(scope="module")
def steps():
    return {
        name: rl.training_step("PaLM 540B", "TPU v4", CHIPS, TOKENS, SEQ, layout, recompute="full")
        for name, layout in LAYOUTS.items()
    }


def test_the_math_bar_is_palms_math_with_full_recomputation(steps):
    # By hand (PaLM paper, chapter 10): model FLOPs per token 6·N + 12·L·(H·d_h)·s (N the matmul
    # weights, all of the attention counted); full recomputation runs the layers' forward again
    # (Narayanan et al. 2021, Eq. 3): + 2·(N - V·D) for the layers' weights (not the output
    # head) + 4·L·(H·d_h)·s for their attention.
    palm, v4 = rl.get_model("PaLM 540B"), rl.get_chip("TPU v4")
    width = palm.heads * palm.head_dim
    n, head = palm.matmul_params, palm.vocab * palm.d_model
    per_token = (
        6 * n + 12 * palm.layers * width * SEQ + 2 * (n - head) + 4 * palm.layers * width * SEQ
    )
    t_math = per_token * TOKENS / (CHIPS * v4.peak_flops_per_s("bf16"))  # about 10.83 s
    fig = plots.step_time_figure(steps)
    ax = fig.axes[0]
    top = max(p.get_y() for p in ax.patches)  # PaLM's bar is drawn at the top
    first = min((p for p in ax.patches if p.get_y() == top), key=lambda p: p.get_x())
    assert first.get_x() == 0 and first.get_width() == pytest.approx(t_math, rel=1e-3)


def test_each_bar_is_its_parts_end_to_end_with_the_best_case_marked(steps):
    fig = plots.step_time_figure(steps, {"PaLM": TOKENS / 238.3e3})
    ax = fig.axes[0]
    for row, (name, step) in enumerate(steps.items()):
        y = len(steps) - 1 - row
        bars = sorted((p for p in ax.patches if abs(p.get_y() + p.get_height() / 2 - y) < 1e-9),
                      key=lambda p: p.get_x())  # fmt: skip
        assert len(bars) == sum(t > 0 for t in step.times.values()), name
        for a, b in zip(bars, bars[1:]):
            assert b.get_x() == pytest.approx(a.get_x() + a.get_width())  # end to end
        end = bars[-1].get_x() + bars[-1].get_width()
        assert end == pytest.approx(sum(step.times.values()))
    assert steps["pipeline"].times["bubble"] > 0 and "bubble" not in steps["PaLM"].times
    text = plots.alt_text(fig)
    assert "measured 17.6 s" in text  # 2048 x 2048 tokens / 238.3k tokens/s = 17.60 s
    assert not _problems(fig), _problems(fig)


def test_bad_input_says_what_to_give(steps):
    with pytest.raises(ValueError, match="at least one"):
        plots.step_time_figure({})
    with pytest.raises(ValueError, match="measured names no step"):
        plots.step_time_figure(steps, {"Llama": 1.0})
