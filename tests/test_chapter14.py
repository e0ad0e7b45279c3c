"""Chapter 14 (Part 5, "Your own code"): its place in the book, its claims, its exercises."""

import math
import re
from pathlib import Path

import pytest

from roofline.exercises import check

ROOT = Path(__file__).resolve().parent.parent
CHAPTER = ROOT / "chapters" / "14_your_own_code.md"


def test_part_5_in_the_table_of_contents():
    toc = (ROOT / "_toc.yml").read_text(encoding="utf-8")
    assert re.search(
        r'caption: "Part 5: your own code"\n\s+chapters:\n\s+- file: chapters/14_your_own_code', toc
    )


def test_the_chapter_uses_the_colab_setup_cell_and_glues_its_figures():
    text = CHAPTER.read_text(encoding="utf-8")
    first_cell = text.split("```{code-cell} ipython3", 2)[1]
    assert ":tags: [remove-cell]" in first_cell and "Colab setup" in first_cell
    assert "{glue:text}`ch14_mm_flops`" in text and "{term}`profiler`" in text


# Each exercise's slip gets its own diagnosis (values derived by hand in the comments).
SLIPS = [
    # fvcore's count: 8192 x 4096 x 1024 multiply-adds = 34.36 G; the answer is twice that
    ("own-macs-to-flops", 8192 * 4096 * 1024, "multiply-adds"),
    # fused: read x, write y: 2 x 4 B x 4096^2 = 134 MB (the answer is 9 arrays: 604 MB)
    ("own-unfused-bytes", 2 * 4 * 4096**2, "fused"),
    # the unmasked count over 1 ms: 4 x 4 x 16 x 4096^2 x 128 / 1e-3 = 549.8 TFLOP/s
    ("own-causal-rate", 4 * 4 * 16 * 4096**2 * 128 / 1e-3, "masked"),
    # 8 instead of 6 per parameter per token: 8 x 7e9 x 2^20 / (12 x 8 x 989.5e12) = 0.618
    ("own-recompute-mfu", 8 * 7e9 * 2**20 / (12 * 8 * 989.5e12), "HFU"),
    # dur read as ms: 2 x 8192 x 4096^2 / 0.8 s = 343.6 GFLOP/s
    ("own-trace-rate", 2 * 8192 * 4096**2 / 0.8, "microseconds"),
]


@pytest.mark.parametrize("exercise, wrong, word", SLIPS)
def test_each_slip_is_named(exercise, wrong, word):
    feedback = check(exercise, wrong)
    assert not feedback.correct and word in feedback.message


RIGHT = [
    ("own-macs-to-flops", 2 * 8192 * 4096 * 1024),  # 68.72 GFLOPs
    ("own-unfused-bytes", 9 * 4 * 4096**2),  # 4 writes + 5 reads of 4096^2 fp32: 604 MB
    ("own-causal-rate", 4 * 4 * 16 * 4096**2 * 128 / 2 / 1e-3),  # 274.9 TFLOP/s
    ("own-recompute-mfu", 6 * 7e9 * 2**20 / (12 * 8 * 989.5e12)),  # 0.4636
    ("own-trace-rate", 2 * 8192 * 4096**2 / 800e-6),  # 343.6 TFLOP/s
]


@pytest.mark.parametrize("exercise, value", RIGHT)
def test_the_hand_derived_answers_are_accepted(exercise, value):
    assert check(exercise, value).correct


def test_the_compiler_counts_plain_attention_masked_or_not():
    """The chapter's claim: XLA counts the masked half this program computes; the two matmuls
    are 4 T^2 d_h FLOPs, the scale and softmax a few more per score."""
    jax = pytest.importorskip("jax")
    import jax.numpy as jnp

    import roofline as rl

    def attention(q, k, v, causal=False):
        s = q @ k.T / math.sqrt(q.shape[-1])
        if causal:
            t = q.shape[0]
            s = jnp.where(jnp.tril(jnp.ones((t, t), bool)), s, -jnp.inf)
        return jax.nn.softmax(s, axis=-1) @ v

    T, d_h = 128, 32
    q = jnp.ones((T, d_h), jnp.float32)
    full = rl.place(attention, q, q, q, repeats=1)
    causal = rl.place(lambda a, b, c: attention(a, b, c, causal=True), q, q, q, repeats=1)
    matmuls = 4 * T * T * d_h  # Q K^T and A V: 2 T^2 d_h each = 2,097,152
    assert matmuls < full.flops <= matmuls + 8 * T * T  # scale, max, subtract, sum, divide
    assert causal.flops >= full.flops  # the mask is applied, the masked scores still computed


def test_the_fusion_section_words_its_timing_sentences_from_the_data():
    """The build machine's times can come out in any order: no typed sentence may assume one,
    and the chain's memory verdict is read against its measured share of the roof."""
    text = CHAPTER.read_text(encoding="utf-8")
    assert "fusion_time_text(fused.seconds, unfused.seconds)" in text
    assert "{glue:text}`ch14_fusion_time_text`" in text
    assert "Two\nthings add up in that time" not in text and "ch14_fusion_time_ratio" not in text
    assert "{glue:text}`ch14_chain_time_text`" in text and "if share >= 0.5:" in text
    assert "With well under one FLOP per byte the chain is" not in text
    alt = re.search(r'alt: "(.*)"', text.split("fig-ch14-placed", 1)[1]).group(1)
    assert "further below" not in alt and "closer" not in alt


def test_sin_and_exp_count_as_transcendentals_and_no_flops():
    """The chapter's claim, checked against XLA: 2x + 1 and exp(2 sin x + 1) count the same
    FLOPs (one multiply, one add per element) and the same bytes; only the chain has
    transcendentals, two per element."""
    pytest.importorskip("jax")
    import jax.numpy as jnp

    import roofline as rl

    x = jnp.ones((64, 64), jnp.float32)
    chain = rl.place(lambda a: jnp.exp(jnp.sin(a) * 2.0 + 1.0), x, repeats=1)
    linear = rl.place(lambda a: a * 2.0 + 1.0, x, repeats=1)
    assert chain.flops == linear.flops == 2 * 64 * 64
    assert chain.bytes == linear.bytes == 2 * 4 * 64 * 64  # read x, write y, fp32
    assert chain.transcendentals == 2 * 64 * 64
