"""Training FLOPs, MFU and memory per chip, checked against the papers' own formulas and
figures (Narayanan et al. 2021 Eq. 3, the PaLM paper's MFU, Korthikanti et al. 2022 Table 2),
each expected value derived here by hand."""

import pytest

import roofline as rl


def gpt(l, h, a, V, name=None):
    """A GPT-style model as Narayanan et al. count it: d_ff = 4h, multi-head attention."""
    return rl.ModelConfig(l, h, a, 4 * h, V, name=name)


@pytest.mark.parametrize(
    "l, h, a, s, V",
    [
        (128, 25600, 160, 2048, 51200),  # their 1T model
        (80, 12288, 96, 2048, 51200),  # their 145.6B model
        (24, 2304, 24, 2048, 51200),  # their 1.7B model
        (4, 256, 4, 8192, 1000),  # long context, small width: the s/(6h) term matters
    ],
)
def test_narayanan_eq3_flops_with_recomputation(l, h, a, s, V):
    B = 3072
    eq3 = 96 * B * s * l * h**2 * (1 + s / (6 * h) + V / (16 * l * h))
    ours = rl.training_flops_per_token(gpt(l, h, a, V), s, recompute="full") * B * s
    assert ours == pytest.approx(eq3, rel=1e-12)


def test_without_recomputation_is_six_n_plus_attention():
    l, h, s, V = 80, 12288, 2048, 51200
    N = 12 * l * h**2 + V * h  # matmul weights: 12 l h^2 and the output head
    assert rl.training_flops_per_token(gpt(l, h, 96, V), s) == pytest.approx(
        6 * N + 12 * l * h * s, rel=1e-12
    )
    causal = rl.training_flops_per_token(gpt(l, h, 96, V), s, causal=True)
    assert causal == pytest.approx(6 * N + 6 * l * h * s, rel=1e-12)
    selective = rl.training_flops_per_token(gpt(l, h, 96, V), s, recompute="selective")
    assert selective == pytest.approx(6 * N + 16 * l * h * s, rel=1e-12)


def test_palm_flops_use_attention_width_not_d_model():
    # PaLM: 6N + 12 L H Q T with N = 540.35e9, L = 118, H = 48 heads, Q = 256, T = 2048
    palm = rl.get_model("PaLM 540B")
    N = 540_354_281_472  # every matmul weight (the shared table is the output head)
    expected = 6 * N + 12 * 118 * 48 * 256 * 2048
    assert rl.training_flops_per_token(palm, 2048) == pytest.approx(expected, rel=1e-12)


def test_palm_mfu_is_the_papers():
    # PaLM section 4.1 / Table 3: 238.3K tokens/s on 6144 TPU v4 (275 TFLOP/s bf16),
    # 46.2 % MFU counting attention, 45.7 % without.
    palm = rl.get_model("PaLM 540B")
    with_attention = rl.mfu(palm, 238.3e3, "TPU v4", 6144, 2048)
    without = rl.mfu(palm, 238.3e3, "TPU v4", 6144, 2048, attention=False)
    by_hand = (6 * 540.35e9 + 12 * 118 * 48 * 256 * 2048) * 238.3e3 / (6144 * 275e12)
    assert with_attention == pytest.approx(by_hand, rel=1e-4)
    assert round(with_attention * 100, 1) == 46.2
    assert round(without * 100, 1) == 45.7


def test_hfu_counts_recomputation():
    m = gpt(80, 12288, 96, 51200)
    ratio = rl.hfu(m, 1e5, "A100", 1536, 2048) / rl.mfu(m, 1e5, "A100", 1536, 2048)
    assert ratio == pytest.approx(
        rl.training_flops_per_token(m, 2048, "full") / rl.training_flops_per_token(m, 2048)
    )
    assert 1.3 < ratio < 1.34  # 8/6 minus the head and attention not recomputed


def test_state_bytes_per_parameter():
    # 70e9 parameters, no sharding: 140 GB weights, 140 GB gradients, 840 GB optimizer
    state = rl.training_state_bytes(70e9)
    assert state == {"weights": 140e9, "gradients": 140e9, "optimizer": 840e9}
    assert sum(rl.training_state_bytes(1.0).values()) == 16
    z1 = rl.training_state_bytes(64.0, fsdp=64, zero_stage=1)
    assert z1 == {"weights": 128, "gradients": 128, "optimizer": 12}
    z3 = rl.training_state_bytes(64.0, fsdp=64)
    assert z3 == {"weights": 2, "gradients": 2, "optimizer": 12}


def test_activations_korthikanti_table2():
    # GPT-3 175B as in their Table 3: s = 2048, b = 1, h = 12288, a = 96, t = 8
    m = gpt(96, 12288, 96, 51200)
    s, b, h, a, t = 2048, 1, 12288, 96, 8
    paper = dict(fused_attention=False)  # their layer stores the attention scores
    none = s * b * h * (34 / t + 5 * a * s / (h * t))
    assert rl.activation_bytes_per_layer(m, s, b, t, **paper) == pytest.approx(none)
    selective = rl.activation_bytes_per_layer(m, s, b, t, "selective", **paper)
    assert selective == pytest.approx(34 * s * b * h / t)
    full = rl.activation_bytes_per_layer(m, s, b, t, "full", sequence_parallel=False, **paper)
    assert full == 2 * s * b * h
    plain = rl.activation_bytes_per_layer(m, s, b, t, sequence_parallel=False, **paper)
    assert plain == pytest.approx(s * b * h * (10 + 24 / t + 5 * a * s / (h * t)))
    # no parallelism: s b h (34 + 5 a s / h) bytes
    assert rl.activation_bytes_per_layer(m, s, 1, 1, **paper) == pytest.approx(
        34 * s * h + 5 * a * s * s
    )
    # a fused attention kernel does not store the 5 a s^2 b of scores
    assert rl.activation_bytes_per_layer(m, s, b, t) == pytest.approx(34 * s * b * h / t)


def test_bad_recompute_is_named():
    with pytest.raises(ValueError, match="recompute is one of"):
        rl.training_flops_per_token("Llama 3 8B", 8192, recompute="yes")
