"""Training FLOPs, MFU and memory per chip, checked against the papers' own formulas and
figures (Narayanan et al. 2021 Eq. 3, the PaLM paper's MFU, Korthikanti et al. 2022 Table 2),
each expected value derived here by hand."""

import pytest

import roofline as rl


def gpt(L, h, a, V, name=None):
    """A GPT-style model as Narayanan et al. count it: d_ff = 4h, multi-head attention."""
    return rl.ModelConfig(L, h, a, 4 * h, V, name=name)


@pytest.mark.parametrize(
    "L, h, a, s, V",
    [
        (128, 25600, 160, 2048, 51200),  # their 1T model
        (80, 12288, 96, 2048, 51200),  # their 145.6B model
        (24, 2304, 24, 2048, 51200),  # their 1.7B model
        (4, 256, 4, 8192, 1000),  # long context, small width: the s/(6h) term matters
    ],
)
def test_narayanan_eq3_flops_with_recomputation(L, h, a, s, V):
    B = 3072
    eq3 = 96 * B * s * L * h**2 * (1 + s / (6 * h) + V / (16 * L * h))
    ours = rl.training_flops_per_token(gpt(L, h, a, V), s, recompute="full") * B * s
    assert ours == pytest.approx(eq3, rel=1e-12)


def test_without_recomputation_is_six_n_plus_attention():
    L, h, s, V = 80, 12288, 2048, 51200
    N = 12 * L * h**2 + V * h  # matmul weights: 12 l h^2 and the output head
    assert rl.training_flops_per_token(gpt(L, h, 96, V), s) == pytest.approx(
        6 * N + 12 * L * h * s, rel=1e-12
    )
    causal = rl.training_flops_per_token(gpt(L, h, 96, V), s, causal=True)
    assert causal == pytest.approx(6 * N + 6 * L * h * s, rel=1e-12)
    selective = rl.training_flops_per_token(gpt(L, h, 96, V), s, recompute="selective")
    assert selective == pytest.approx(6 * N + 16 * L * h * s, rel=1e-12)


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


# ---------------------------------------------------------------- training_step, by hand

H100_PEAK = 989.5e12  # H100 SXM bf16 dense (NVIDIA: 1,979 TFLOPS with sparsity, / 2)
NVLINK = 18 * 25e9  # H100: 18 NVLink 4 links of 25 GB/s one way into the NVSwitch
NIC = 50e9  # one 400 Gb/s NIC per GPU


def test_one_chip_has_only_math_and_memory():
    m = rl.ModelConfig(2, 256, 4, 1024, 1000, name="tiny")
    step = rl.training_step(m, "H100", 1, 8 * 512, 512, {})
    assert set(step.times) == {"math", "HBM"}
    # 6 x matmul weights (2 x 12 x 256^2 + 1000 x 256) + 12 x 2 x 256 x 512 per token
    per_token = 6 * (2 * 12 * 256**2 + 1000 * 256) + 12 * 2 * 256 * 512
    assert step.times["math"] == pytest.approx(per_token * 4096 / H100_PEAK)
    assert step.microbatches == 1 and step.micro_batch == 8


def test_llama3_70b_on_8192_h100_by_hand():
    P = 70_553_706_496
    step = rl.training_step("Llama 3 70B", "H100", 8192, 2048 * 8192, 8192, "dp=64,tp=8,pp=16")
    # 2048 sequences / 64 replicas = 32 per replica, one per micro-batch (pp > 1 default)
    assert (step.microbatches, step.micro_batch) == (32, 1)
    # matmul weights: Q, O 8192^2; K, V 8192 x 1024; 3 MLP 8192 x 28672; the output head
    layer = 6 * (2 * 8192**2 + 2 * 8192 * 1024 + 3 * 8192 * 28672) + 12 * 8192 * 8192
    head = 6 * 128256 * 8192
    per_token = 80 * layer + head
    # the busiest stage is the last: 80 / 16 = 5 layers + the output head (about 1.2 layers),
    # and each of its 8192 / 16 = 512 chips (tp 8 x dp 64) runs 1/512 of every token's share
    math_s = (5 * layer + head) * 2048 * 8192 / 512 / H100_PEAK
    assert step.times["math"] == pytest.approx(math_s)
    assert step.hardware_flops_per_chip == pytest.approx(per_token * 2048 * 8192 / 8192)
    # TP: 4 all-reduces per layer and micro-batch of 1 x 8192 x 8192 bf16, on NVSwitch
    one = 2 * 7 / 8 * (8192 * 8192 * 2) / NVLINK
    assert step.times["TP"] == pytest.approx(80 / 16 * 32 * 4 * one)
    # DP: each stage's gradient slice all-reduced over 64 nodes' NICs; the step waits for
    # the stage with the most parameters, the last: 5 layers of 855,654,400 + the output
    # head 128,256 x 8192 = 1,050,673,152 + the final norm 8192 = 5,328,953,344, / tp 8
    # (the average stage's P / 128 = 551,200,832 was 17 % less)
    last_stage = 5 * 855_654_400 + 128_256 * 8192 + 8192
    dp_s = 2 * 63 / 64 * 2 * last_stage / 8 / NIC
    assert step.times["DP"] == pytest.approx(dp_s)
    assert step.times["bubble"] == pytest.approx(15 / 32 * math_s)
    # the all-reduce hides only behind the last micro-batch's backward: 2/3 of math / 32
    exposed = dp_s - 2 / 3 * math_s / 32
    assert step.dp_exposed_s == pytest.approx(exposed)
    assert step.t_lower == pytest.approx(math_s * (1 + 15 / 32) + exposed)
    model_per_chip = per_token * 2048 * 8192 / 8192
    assert step.mfu_ceiling == pytest.approx(model_per_chip / (step.t_lower * H100_PEAK))
    assert step.bound == "compute" and step.slowest == "math"
    # model state of the busiest stage, the first: its 5 layers, each Q, O 8192^2, K, V
    # 8192 x 1024, MLP 3 x 8192 x 28672, 2 norms of 8192 = 855,654,400, and the embedding
    # 128256 x 8192 = 1,050,673,152: 5,328,945,152 parameters, split tp 8 ways (the last
    # stage holds the head and the final norm, 8192 more, but keeps 1 micro-batch, not 16)
    layer_params = 2 * 8192**2 + 2 * 8192 * 1024 + 3 * 8192 * 28672 + 2 * 8192
    assert layer_params == 855_654_400 and 80 * layer_params + 2 * 1_050_673_152 + 8192 == P
    stage0 = 5 * layer_params + 128256 * 8192
    assert stage0 == 5_328_945_152  # the average stage's P / 16 is 4.41e9
    assert step.memory["weights"] == pytest.approx(2 * stage0 / 8)
    assert step.memory["optimizer"] == pytest.approx(12 * stage0 / 8)
    # activations per layer and token (fused attention), Korthikanti's terms for a GQA layer
    # with a gated MLP, trained without dropout (no masks): d_model-wide 2 x 2 x 2 x 8192
    # (attention's and the MLP's norm inputs and block inputs); Q and the output projection's
    # input 2 x 2 x 8192, K and V 2 x 2 x 1024; gate, up and their product 3 x 2 x 28672:
    # 65,536 + 36,864 + 172,032 = 274,432 (33.5 h, where a GPT layer with dropout keeps 34 h:
    # no masks save 2 h, GQA's smaller K and V 3 h, the gate's tensor adds 4.5 h)
    per_token = 2 * 4 * 8192 + 2 * 2 * 8192 + 2 * 2 * 1024 + 3 * 2 * 28672
    assert per_token == 274_432 == 33.5 * 8192
    # s b / t tokens per chip (sequence parallelism), 5 layers, 16 micro-batches in flight
    assert step.memory["activations"] == pytest.approx(per_token * 8192 / 8 * 5 * 16)
    assert step.fits and step.t_upper > step.t_lower


def test_palm_layout_on_tpu_v4_torus_and_dcn():
    P = rl.get_model("PaLM 540B").params
    step = rl.training_step(
        "PaLM 540B", "TPU v4", 6144, 2048 * 2048, 2048, "dp=2,fsdp=256,tp=12", recompute="full"
    )
    W = 4.5e10  # one ICI link, one way
    V = 2 * P / 12  # bf16 weights (and gradients) of one tensor-parallel slice
    # fsdp 256 = a 16 x 16 slice of wrapped axes: all-gather (N-1)/N V / (2 k W), k = 2 axes
    gather = 255 / 256 * V / (4 * W)
    assert step.times["FSDP"] == pytest.approx(3 * gather)  # gather, gather, reduce-scatter
    # dp 2 across the two pods over DCN (2.5e10 B/s per 4-chip host): 2 (n-1)/n V' / W
    assert step.times["DP"] == pytest.approx(V / 256 / (2.5e10 / 4))
    # tp 12 on one wrapped axis: all-reduce (n-1)/n V / W; PaLM's parallel block (attention
    # and MLP summed before one all-reduce) needs 1 per layer in each pass: forward,
    # backward and the recomputed forward = 3 (a serial block: 6)
    act = 4 * 2048 * 18432 * 2  # 4 sequences per replica, one micro-batch
    assert step.times["TP"] == pytest.approx(118 * 3 * 11 / 12 * act / W)
    # full recomputation keeps each layer's input, split 12 ways by sequence parallelism,
    # and the output layer (never recomputed; Korthikanti et al. section 4.3): the final
    # norm's and the projection's inputs 2 x 2 s b h / t and the fp32 logits 4 s b v / t,
    # s b = 2048 x 4, v = 256,000: 4 x 8192 x (18432 + 256000) / 12 = 749,382,314.7 bytes
    # (no embedding dropout mask: PaLM trains without dropout)
    output_layer = 4 * 2048 * 4 * (18432 + 256000) / 12
    layers = 2 * 2048 * 4 * 18432 / 12 * 118
    assert step.memory["activations"] == pytest.approx(layers + output_layer)
    assert step.memory["weights"] == pytest.approx(2 * P / 12 / 256)


def test_two_level_all_reduce_when_a_node_holds_part_of_the_group():
    P = 8_030_261_248
    step = rl.training_step("Llama 3 8B", "H100", 64, 256 * 8192, 8192, "dp=16,tp=4")
    V = 2 * P / 4
    inside = 1 / 2 * V / NVLINK  # reduce-scatter over the 2 replicas sharing a node
    across = 2 * 7 / 8 * (V / 2) / NIC  # ring all-reduce of half over 8 nodes
    assert step.times["DP"] == pytest.approx(2 * inside + across)


@pytest.mark.parametrize(
    "kwargs, words",
    [
        (dict(layout="dp=64,tp=8"), "multiply to 512.*not to the 8192 chips"),
        (dict(layout="dp=64,xp=128"), "unknown parallelism 'xp'"),
        (dict(layout="dp=64,tp=8,pp=sixteen"), "whole number"),
        (dict(tokens_per_step=1000), "not a whole number of sequences"),
        (dict(tokens_per_step=100 * 8192), "do not split evenly over dp x fsdp x ep = 64"),
        (dict(microbatches=5), "do not split into 5 micro-batches"),
        (dict(layout="dp=64,tp=8,ep=16"), "ep=16 needs a mixture of experts"),
        (dict(layout="dp=8,tp=1024"), "must divide the 64 attention heads"),
    ],
)
def test_training_step_errors(kwargs, words):
    args = dict(
        model="Llama 3 70B",
        chip="H100",
        n_chips=8192,
        tokens_per_step=2048 * 8192,
        seq_len=8192,
        layout="dp=64,tp=8,pp=16",
    )
    with pytest.raises(ValueError, match=words):
        rl.training_step(**{**args, **kwargs})


def test_network_needed_but_unknown_is_explained():
    with pytest.raises(ValueError, match="pass network_bytes_per_s"):
        rl.training_step("Llama 3 8B", "A100", 16, 16 * 4096, 4096, "dp=16")
    step = rl.training_step(
        "Llama 3 8B", "A100", 16, 16 * 4096, 4096, "dp=16", network_bytes_per_s=25e9
    )
    assert step.times["DP"] > 0


def test_published_runs_take_longer_than_the_bound():
    """A roofline bound below a measured step time is what it must be; above it would be a
    counting error."""
    # Narayanan et al., 1T model: 163 TFLOP/s per A100 by their Eq. 3 (with recomputation),
    # batch 3072 of 2048 on 3072 GPUs, TP 8 x PP 64 (so dp 6), 8 HDR 200 Gb/s NICs per node
    L, h, s, V, B = 128, 25600, 2048, 51200, 3072
    eq3 = 96 * B * s * L * h**2 * (1 + s / (6 * h) + V / (16 * L * h))
    measured_s = eq3 / (3072 * 163e12)
    step = rl.training_step(
        "Megatron 1T", "A100", 3072, B * s, s, "tp=8,pp=64,dp=6", "bf16", "full", None, 25e9
    )
    assert step.t_lower < measured_s
    # Eq. 3 per token is 96 L h^2 (1 + s / 6h) for the layers + 6 V h for the head; the
    # busiest stage is the last: 128 / 64 = 2 layers + the head, on 3072 / 64 = 48 GPUs
    last_stage = 2 * 96 * h**2 * (1 + s / (6 * h)) + 6 * V * h
    assert step.times["math"] == pytest.approx(last_stage * B * s / 48 / 312e12)  # A100 peak
    # PaLM 540B: 2048 x 2048 tokens per step at 238.3K tokens/s
    palm = rl.training_step(
        "PaLM 540B", "TPU v4", 6144, 2048 * 2048, 2048, "dp=2,fsdp=256,tp=12", recompute="full"
    )
    assert palm.t_lower < 2048 * 2048 / 238.3e3


def test_fsdp_group_larger_than_a_pod_runs_in_two_levels():
    # fsdp 512 x tp 12 on TPU v4: 256 fsdp chips (x 12 = 3072) fit a 4096-chip pod, so two
    # pods: gather inside each over a 16 x 16 slice of wrapped axes, then across over DCN
    P = rl.get_model("PaLM 540B").params
    step = rl.training_step(
        "PaLM 540B", "TPU v4", 6144, 2 * 2048 * 2048, 2048, "fsdp=512,tp=12", microbatches=1
    )
    V = 2 * P / 12
    inside = 255 / 256 * V / (4 * 4.5e10)
    across = 1 / 2 * (V / 256) / (2.5e10 / 4)
    assert step.times["FSDP"] == pytest.approx(3 * (inside + across))


def test_a_step_that_does_not_fit_says_so():
    # Llama 3 8B with plain data parallelism: 16 bytes x 8.03e9 parameters = 128.5 GB of
    # model state alone on every 80 GB A100
    step = rl.training_step(
        "Llama 3 8B", "A100", 16, 16 * 4096, 4096, "dp=16", network_bytes_per_s=25e9
    )
    assert sum(step.memory[k] for k in ("weights", "gradients", "optimizer")) == pytest.approx(
        16 * 8_030_261_248
    )
    assert not step.fits and "does not fit" in step.limits()
    sharded = rl.training_step(
        "Llama 3 8B", "A100", 16, 16 * 4096, 4096, "fsdp=16", network_bytes_per_s=25e9
    )
    assert sharded.memory["optimizer"] == pytest.approx(12 * 8_030_261_248 / 16)
