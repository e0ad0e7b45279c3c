"""Memory capacity and serving of a whole model (roofline.transformer), against hand derivations.

Every expected value is worked out here from the Llama 3 8B sizes (D = 4096, F = 14336,
32 heads of 128, 8 KV heads, 32 layers, vocabulary 128,256, untied embeddings) and the
H100 SXM datasheet (80 GB, 3.35 TB/s, 989.5 TFLOP/s dense bf16), not taken from the code.
"""

import math

import pytest

import roofline as rl
import roofline.transformer as tf

MODEL = tf.LLAMA_8B_MODEL
H100_BYTES, H100_BW, H100_BF16 = 80e9, 3.35e12, 989.5e12

# one layer's weights: Q and O are 4096 x 4096, K and V 4096 x 1024, the MLP three 4096 x 14336
LAYER_WEIGHTS = 2 * 4096 * 4096 + 2 * 4096 * 1024 + 3 * 4096 * 14336  # 218,103,808
# + the norm scales, (2 x 32 + 1) x 4096 = 266,240: 8,030,261,248, Llama 3 8B's 8.03e9
MODEL_WEIGHTS = 32 * LAYER_WEIGHTS + 2 * 128256 * 4096 + 65 * 4096
KV_PER_SEQUENCE_T4096 = 2 * 32 * 8 * 128 * 4096 * 2  # K and V, bf16


def test_weight_bytes_of_the_8b_model():
    assert LAYER_WEIGHTS == 218_103_808
    assert MODEL.params == MODEL_WEIGHTS == 8_030_261_248  # "8B": Llama 3 8B's 8.03e9
    assert tf.weight_bytes(MODEL) == 2 * 8_030_261_248  # about 16.06 GB in bf16
    assert tf.weight_bytes(MODEL, "int8") == 8_030_261_248
    tied = tf.model_from_layer("tied", tf.LLAMA_8B, 32, 128256, tied_embeddings=True)
    assert tied.params == 32 * LAYER_WEIGHTS + 128256 * 4096 + 65 * 4096


def test_kv_cache_bytes_per_sequence():
    assert KV_PER_SEQUENCE_T4096 == 536_870_912  # 0.537 GB per 4096-token sequence
    assert tf.kv_cache_bytes(MODEL, 4096) == KV_PER_SEQUENCE_T4096
    assert tf.kv_cache_bytes(MODEL, 1024) == KV_PER_SEQUENCE_T4096 / 4
    assert tf.kv_cache_bytes(MODEL, 4096, "int8") == KV_PER_SEQUENCE_T4096 / 2


def test_max_batch_on_one_and_several_chips():
    # (80e9 - 16,060,522,496) / 536,870,912 = 119.097...: 119 sequences fit (issue 16's "about 119")
    assert (80e9 - 2 * MODEL_WEIGHTS) / KV_PER_SEQUENCE_T4096 == pytest.approx(119.097, abs=1e-3)
    assert tf.max_batch(MODEL, 4096, "H100 SXM") == 119
    # two H100s, weights and cache split by heads: (160e9 - 16.06e9) / 0.537e9 = 268.1
    assert tf.max_batch(MODEL, 4096, "H100 SXM", n_chips=2) == 268
    # H200, 141 GB: (141e9 - 16.06e9) / 0.537e9 = 232.7
    assert tf.max_batch(MODEL, 4096, "H200") == 232
    # a 1024-token context: four times as many, (80e9 - 16.06e9) / 134,217,728 = 476.4
    assert tf.max_batch(MODEL, 1024, "H100 SXM") == 476
    # an int8 cache halves the bytes per sequence: 238.2
    assert tf.max_batch(MODEL, 4096, "H100 SXM", kv_dtype="int8") == 238
    # a TPU v5e has 16 GB, less than the 16.06 GB of bf16 weights: nothing fits
    assert tf.max_batch(MODEL, 4096, "TPU v5e") == 0


def test_critical_batch_cannot_be_reached_on_one_h100_at_t4096():
    # weight matmuls only, per layer and sequence: a = 2 * weights FLOPs; bytes: the weights once
    # (c = 2 * weights) plus activations in and out of each matmul, b (elements below, x 2 bytes)
    acts = (4096 + 4096) + 2 * (4096 + 1024) + (4096 + 4096) + 2 * (4096 + 14336) + (14336 + 4096)
    a, b, c = 2 * LAYER_WEIGHTS, 2 * acts, 2 * LAYER_WEIGHTS
    ridge = H100_BF16 / H100_BW
    b_star = ridge * c / (a - ridge * b)
    assert b_star == pytest.approx(332.2, abs=0.1)  # issue 16's "332"
    compute_wall = tf.decode_critical_batch(tf.LLAMA_8B, 4096, "H100 SXM", include_attention=False)
    assert compute_wall == pytest.approx(b_star, rel=1e-9)
    assert tf.max_batch(MODEL, 4096, "H100 SXM") < compute_wall  # the memory wall comes first
    assert tf.max_batch(MODEL, 1024, "H100 SXM") > compute_wall  # a short context reaches it
    # 332 sequences of cache: 332 * 0.537 GB = 178 GB, plus 16 GB of weights
    assert 332 * KV_PER_SEQUENCE_T4096 == pytest.approx(178.2e9, rel=1e-3)


def test_decode_step_at_batch_1_is_all_bandwidth():
    # B = 1: every operation is bandwidth-bound, so the step is total bytes / 3.35 TB/s.
    # Per layer: weights (2 bytes each) + activations in and out of the 7 matmuls, and fused
    # attention reading Q (4096), K and V (2 * 4096 tokens * 1024) and writing O (4096).
    acts = (4096 + 4096) + 2 * (4096 + 1024) + (4096 + 4096) + 2 * (4096 + 14336) + (14336 + 4096)
    attention = 4096 + 2 * 4096 * 1024 + 4096
    per_layer = 2 * (LAYER_WEIGHTS + acts + attention)
    head = 2 * (4096 + 4096 * 128256 + 128256)  # X[1, D], W[D, vocab], logits
    total = 32 * per_layer + head
    step = tf.step_time(MODEL, 1, 4096, "H100 SXM")
    assert step.seconds == pytest.approx(total / H100_BW, rel=1e-12)
    assert step.per_token_latency_s == pytest.approx(4.65e-3, rel=1e-2)
    assert step.tokens_per_s == pytest.approx(H100_BW / total, rel=1e-12)
    assert step.bandwidth_bound_fraction == 1.0
    assert step.fits
    # two chips split every operation's FLOPs and bytes: half the time, plus two all-reduces
    # per layer of X[1, 4096] in bf16 through NVSwitch: 2(n-1)/n * 8192 B / 450 GB/s each
    two = tf.step_time(MODEL, 1, 4096, "H100 SXM", n_chips=2)
    comm = 2 * 32 * (2 * 1 / 2 * 8192 / 450e9)
    assert two.communication_s == pytest.approx(comm)
    assert two.seconds == pytest.approx(step.seconds / 2 + comm)


def test_decode_throughput_is_capped_by_kv_reads():
    # for large B the KV-cache reads dominate: tokens/s -> bandwidth / KV bytes per sequence
    cap = H100_BW / KV_PER_SEQUENCE_T4096  # 6,240 tokens/s
    big = tf.step_time(MODEL, 100_000, 4096, "H100 SXM")
    assert not big.fits
    assert big.tokens_per_s < cap
    assert big.tokens_per_s == pytest.approx(cap, rel=0.2)
    at_wall = tf.step_time(MODEL, 119, 4096, "H100 SXM")
    assert at_wall.fits and not tf.step_time(MODEL, 120, 4096, "H100 SXM").fits
    assert at_wall.tokens_per_s > 20 * tf.step_time(MODEL, 1, 4096, "H100 SXM").tokens_per_s


def test_time_to_first_token_of_a_4096_token_prompt():
    # prefill, B = 1, T = 4096: the seven weight matmuls (4096 rows) and fused attention
    # (4 * H * T^2 * d_h FLOPs) are compute-bound; the output head (one row) is bandwidth-bound
    layer_flops = 2 * 4096 * LAYER_WEIGHTS + 4 * 32 * 4096 * 4096 * 128
    head_bytes = 2 * (4096 + 4096 * 128256 + 128256)
    expected = 32 * layer_flops / H100_BF16 + head_bytes / H100_BW
    assert expected == pytest.approx(0.0670, abs=1e-4)
    assert tf.time_to_first_token(MODEL, 4096, "H100 SXM") == pytest.approx(expected, rel=1e-9)
    prefill = tf.step_time(MODEL, 1, 4096, "H100 SXM", mode="prefill")
    assert prefill.tokens_per_s == pytest.approx(4096 / expected, rel=1e-9)
    with pytest.raises(ValueError, match="decode"):
        _ = prefill.per_token_latency_s


def test_bad_input_gets_a_message_that_says_what_to_do():
    with pytest.raises(TypeError, match="whole model"):
        tf.max_batch(tf.LLAMA_8B, 4096, "H100 SXM")
    with pytest.raises(ValueError, match="at most 8 chips"):
        tf.max_batch(MODEL, 4096, "H100 SXM", n_chips=16)
    with pytest.raises(ValueError, match="whole number of chips"):
        tf.step_time(MODEL, 1, 4096, "H100 SXM", n_chips=0)
    with pytest.raises(TypeError, match="whole number of sequences"):
        tf.step_time(MODEL, 1.5, 4096, "H100 SXM")
    with pytest.raises(ValueError, match="positive"):
        tf.kv_cache_bytes(MODEL, -1)
    with pytest.raises(ValueError, match="mode"):
        tf.step_time(MODEL, 1, 4096, "H100 SXM", mode="training")


def test_decode_throughput_figure_marks_both_walls():
    import matplotlib.colors as mcolors

    fig = rl.plots.decode_throughput_figure(tf.LLAMA_8B_MODEL, "H100 SXM", contexts=(4096, 1024))
    ax = fig.axes[0]
    assert ax.get_xscale() == "log" and ax.get_yscale() == "log"
    assert "tokens/s" in ax.get_ylabel() and "Batch" in ax.get_xlabel()
    assert fig.roofline_walls["memory"] == {4096: 119, 1024: 476}
    assert fig.roofline_walls["compute"] == pytest.approx(332.2, abs=0.1)
    walls = {
        line.get_gid(): line.get_xdata()[0]
        for line in ax.get_lines()
        if (line.get_gid() or "").endswith(("wall", ":4096", ":1024")) and "wall" in line.get_gid()
    }
    assert walls["memory-wall:4096"] == 119 and walls["memory-wall:1024"] == 476
    assert walls["compute-wall"] == pytest.approx(332.2, abs=0.1)
    palette = {v.lower() for v in rl.plots.PALETTE.values()}
    for line in ax.get_lines():
        if line.get_gid():
            assert mcolors.to_hex(line.get_color()).lower() in palette
    text = rl.plots.alt_text(fig)
    assert "119" in text and "476" in text and "332" in text


def test_max_batch_exercise_against_a_hand_derivation():
    from roofline.exercises import check, get_exercise

    # H200, 141 GB; T = 8192: 2 * 32 * 8 * 128 * 8192 * 2 = 1,073,741,824 bytes per sequence
    by_hand = math.floor((141e9 - 2 * MODEL_WEIGHTS) / (2 * 32 * 8 * 128 * 8192 * 2))
    assert by_hand == 116
    assert get_exercise("xformer-max-batch").expected() == by_hand
    assert check("xformer-max-batch", 116).correct
    assert not check("xformer-max-batch", 131).correct  # weights forgotten
    assert "weights" in check("xformer-max-batch", 131).diagnosis
