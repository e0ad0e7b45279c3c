"""rl.serving_estimate against hand derivations (issue 23).

Sizes by hand from the published configurations (catalog sources): Llama 3 70B: 80 layers,
D 8192, 64 heads of 128, 8 KV heads, gated F 28672, vocabulary 128,256, untied. Chips from
their datasheets: H100 SXM 80 GB, 3.35 TB/s, 989.5 TFLOP/s bf16 dense, NVLink 18 x 25 GB/s
one way into NVSwitch; H200 141 GB at 4.8 TB/s.
"""

import math

import pytest

import roofline as rl
from roofline.serving import expected_distinct_experts, serving_estimate

# Llama 3 70B by hand
L70, D70, W70, V70 = 80, 8192, 64 * 128, 128256
LAYER70 = 2 * 8192 * 8192 + 2 * 8192 * 1024 + 3 * 8192 * 28672  # 855,638,016
PARAMS70 = L70 * LAYER70 + (2 * L70 + 1) * D70 + 2 * V70 * D70  # 70,553,706,496
MATMUL70 = L70 * LAYER70 + V70 * D70  # 69,501,714,432: layers + output head
READ70 = PARAMS70 - V70 * D70  # the input table is gathered, not read: 69,503,033,344
H100_BW, H100_BF16, H200_BW = 3.35e12, 989.5e12, 4.8e12


def test_hand_counts():
    assert LAYER70 == 855_638_016
    assert PARAMS70 == 70_553_706_496 == rl.get_model("Llama 3 70B").params
    assert READ70 == 69_503_033_344


def test_kv_cache_bytes_of_published_configs():
    # 2 (K, V) x 80 layers x 8 KV heads x 128 x 2 bytes
    assert 2 * 80 * 8 * 128 * 2 == 327_680
    est = serving_estimate("Llama 3 70B", "H200", batch=1, context_len=1)
    assert est.kv_cache_bytes == 327_680
    est = serving_estimate("Llama 3 70B", "H100", 8, batch=64, context_len=4096)
    assert est.kv_cache_bytes == 64 * 4096 * 327_680  # 85.9 GB for the whole replica
    assert est.memory["KV cache"] == 64 * 4096 * 327_680 / 8  # one KV head per chip
    # fp8 KV cache: half
    est = serving_estimate("Llama 3 70B", "H200", batch=1, context_len=1, kv_dtype="fp8")
    assert est.kv_cache_bytes == 163_840
    # Mixtral: 2 x 32 x 8 x 128 x 2 = 131,072 per token
    assert serving_estimate("Mixtral", "H100", context_len=1).kv_cache_bytes == 131_072


def test_batch_one_decode_is_the_weight_read():
    est = serving_estimate("Llama 3 70B", "H200", batch=1, context_len=1, weights="fp8")
    assert est.hbm_parts["weights"] == pytest.approx(READ70 * 1 / H200_BW)  # 14.48 ms
    # one token of context in a bf16 cache: 327,680 bytes more, 68 ns
    assert est.times["HBM"] == pytest.approx((READ70 + 327_680) / H200_BW)
    assert est.t_decode_step == pytest.approx(14.480e-3, rel=1e-3)
    assert est.bound == "memory" and est.slowest == "HBM"
    assert est.tokens_per_s == pytest.approx(H200_BW / (READ70 + 327_680))


def test_decode_turns_compute_bound_at_peak_over_bandwidth():
    # math 2 MATMUL70 B / peak = weights 2 READ70 / BW  <=>  B = READ70 peak / (MATMUL70 BW)
    b_star = READ70 * H100_BF16 / (MATMUL70 * H100_BW)
    assert b_star == pytest.approx(295.38, abs=0.01)
    below = serving_estimate("Llama 3 70B", "H100", 8, tp=8, batch=295, context_len=1)
    above = serving_estimate("Llama 3 70B", "H100", 8, tp=8, batch=296, context_len=1)
    assert below.times["math"] < below.times["HBM"] < above.times["math"]
    assert above.times["math"] == pytest.approx(2 * MATMUL70 * 296 / 8 / H100_BF16, rel=1e-4)


def test_tensor_parallel_all_reduce_with_latency():
    # two all-reduces per layer of 64 x 8192 x 2 bytes over NVSwitch (450 GB/s one way per
    # GPU): 2 (n-1)/n V / W + NCCL's measured smallest all-reduce over 8 H100,
    # 2 x 7/8 x 1024 B / 0.07 GB/s = 25.6 us (2 steps of 12.8 us, not of an ICI hop's 1 us)
    V = 64 * 8192 * 2
    one = 2 * 7 / 8 * V / 450e9 + 2 * 7 / 8 * 1024 / 0.07e9
    est = serving_estimate("Llama 3 70B", "H100", 8, tp=8, batch=64, context_len=4096)
    assert est.times["TP"] == pytest.approx(2 * 80 * one, rel=1e-3)  # 4.75 ms
    assert est.kinds["TP"] == "link"
    assert est.memory["weights"] == PARAMS70 * 2 / 8


def test_weights_and_kv_cache_share_the_memory_bandwidth():
    # Llama 3 70B fp8 on 2 H100 (tp 2), 100 sequences of 5250 tokens: the weight read and the
    # cache read add up on each GPU's 3.35 TB/s
    weights = READ70 / 2
    cache = 100 * 5250 * 163_840 / 2  # fp8 cache, 4 of the 8 KV heads per GPU
    est = serving_estimate("Llama 3 70B", "H100", 2, batch=100, context_len=5250, dtype="fp8")
    assert est.times["HBM"] == pytest.approx((weights + cache) / H100_BW)  # 23.2 ms
    assert est.t_decode_step == est.times["HBM"]


def test_replicas_multiply_throughput():
    one = serving_estimate("Llama 3 70B", "H100", 2, tp=2, batch=16, context_len=2048)
    four = serving_estimate("Llama 3 70B", "H100", 8, tp=2, batch=16, context_len=2048)
    assert four.replicas == 4
    assert four.t_decode_step == one.t_decode_step
    assert four.tokens_per_s == pytest.approx(4 * 16 / one.t_decode_step)


def test_kv_heads_replicated_beyond_kv_heads():
    # PaLM 540B: one KV head (multi-query); tp=4 leaves every chip a whole copy of the cache
    est = serving_estimate("PaLM 540B", "H100", 4, tp=4, batch=2, context_len=2048)
    per_token = 2 * 118 * 256 * 2  # 120,832 bytes in bf16
    assert est.memory["KV cache"] == 2 * 2048 * per_token


def test_mixture_of_experts_reads_only_routed_experts():
    assert expected_distinct_experts(8, 2, 1) == 2
    assert expected_distinct_experts(8, 2, 8) == pytest.approx(8 * (1 - 0.75**8))  # 7.20
    # Mixtral 8x7B batch 1: attention + router + 2 of 8 expert MLPs per layer, norms, head
    attention = 2 * 4096 * 4096 + 2 * 4096 * 1024
    expert = 3 * 4096 * 14336
    read = 32 * (attention + 4096 * 8 + 2 * expert) + 65 * 4096 + 32000 * 4096
    assert read == 12_748_853_248
    est = serving_estimate("Mixtral 8x7B", "H100", batch=1, context_len=1)
    assert est.hbm_parts["weights"] == pytest.approx(read * 2 / H100_BW)  # 7.61 ms, not 27.9
    assert est.experts_read == 2


def test_time_to_first_token_by_hand():
    P = 2048
    flops = 2 * MATMUL70 * P + 2 * 80 * W70 * P**2  # causal attention: 2 L w P^2
    est = serving_estimate("Llama 3 70B", "H100", 8, tp=8, prompt_len=P, context_len=4096)
    assert est.prefill_times["math"] == pytest.approx(flops / 8 / H100_BF16)  # 36.7 ms
    assert est.ttft_s == pytest.approx(36.66e-3, rel=1e-3)


def test_memory_fits_and_max_batch():
    # Llama 3 8B on one H100, context 4096: (80 - 8 reserve - 16.06 weights) GB / 0.537 GB
    weights8 = 2 * (32 * (2 * 4096**2 + 2 * 4096 * 1024 + 3 * 4096 * 14336) + 65 * 4096)
    weights8 += 2 * 2 * 128256 * 4096
    per_seq = 2 * 32 * 8 * 128 * 2 * 4096
    expected = math.floor((80e9 - 8e9 - weights8) / per_seq)
    assert expected == 104
    est = serving_estimate("Llama 3 8B", "H100", batch=104, context_len=4096)
    assert est.max_batch == 104 and est.fits
    assert not serving_estimate("Llama 3 8B", "H100", batch=105, context_len=4096).fits
    # Llama 3 70B in bf16 (141.1 GB) does not fit one H200 (141 GB); in fp8 it does
    assert not serving_estimate("Llama 3 70B", "H200").fits
    assert serving_estimate("Llama 3 70B", "H200", weights="fp8").max_batch > 0


@pytest.mark.parametrize(
    "kwargs, words",
    [
        ({"n_chips": 8, "tp": 3}, "must divide n_chips"),
        ({"n_chips": 5, "tp": 5}, "must divide the 64 attention heads"),
        ({"batch": 0}, "batch must be at least 1"),
        ({"context_len": 10_000}, "beyond"),
    ],
)
def test_bad_input_says_what_to_do(kwargs, words):
    model = "Llama 2 70B" if "context_len" in kwargs else "Llama 3 70B"
    with pytest.raises(ValueError, match=words):
        serving_estimate(model, "H100", **kwargs)


def test_to_dict_and_summary():
    est = serving_estimate("Llama 3 70B", "H100", 8, batch=64, context_len=4096)
    d = est.to_dict()
    assert d["t_decode_step_s"] == est.t_decode_step and d["max_batch"] == est.max_batch
    assert "memory-bound" in est.summary().text()


def test_compute_bound_batch_and_never():
    from roofline.serving import compute_bound_batch

    # context 1: math 2 MATMUL70 B / peak against (READ70 + B x 327,680) bytes / BW, tp 8:
    # B = READ70 / (MATMUL70 BW / peak - 327,680 / 2) (each B costs its bf16 cache too)
    per_seq_math = 2 * MATMUL70 / 8 / H100_BF16
    per_seq_kv = 327_680 / 8 / H100_BW
    weights = 2 * READ70 / 8 / H100_BW
    expected = math.ceil(weights / (per_seq_math - per_seq_kv))
    assert expected == 296
    # ... and against the TP all-reduces: 2 x 80 per step, each 25.6 us of NVSwitch latency
    # (NCCL's smallest all-reduce over 8 H100) + 2 x 7/8 x B x 8192 x 2 bytes / 450 GB/s
    tp_fixed = 160 * 2 * 7 / 8 * 1024 / 0.07e9
    tp_per_seq = 160 * 2 * 7 / 8 * 8192 * 2 / 450e9
    expected_tp = math.ceil(tp_fixed / (per_seq_math - tp_per_seq))
    assert expected_tp > expected  # the latency, not the weights, now sets the batch
    got = compute_bound_batch("Llama 3 70B", "H100", 1, n_chips=8)
    assert abs(got - expected_tp) <= 1  # the measured latency is 25.6 us to 0.1 %
    # 4096 tokens of context: each sequence's cache read (4096 x 327,680 / 8 B = 50 us)
    # outlasts its math (17.6 us): never compute-bound
    assert 4096 * per_seq_kv > per_seq_math
    assert compute_bound_batch("Llama 3 70B", "H100", 4096, n_chips=8) is None


def test_the_assumptions_name_the_tp_latency_the_estimate_used():
    """The TP line says what tp_all_reduce_seconds used: on 8 H100 (NVSwitch) NCCL's measured
    smallest all-reduce, 25.6 us (nccl-tests' 8-GPU curve, collectives.py), i.e. 12.8 us per
    step; on a TPU v5e 2x4 slice the 1 us per hop; a passed latency as passed; one chip: none."""
    import roofline as rl

    def tp_line(*args, **kwargs):
        est = rl.serving_estimate(*args, **kwargs)
        return next(a for a in est.assumptions if a.startswith("TP:"))

    assert "25.6 µs each (12.8 µs per step)" in tp_line("Llama 3 70B", "H100 SXM", 8)
    assert "latency: 1 µs per collective step" in tp_line("Llama 3 70B", "TPU v5e", 8)
    assert "2 µs per collective step (as passed)" in tp_line(
        "Llama 3 70B", "H100 SXM", 8, hop_latency_s=2e-6
    )
    assert tp_line("Llama 3 8B", "H100 SXM", 1) == "TP: none (one chip per replica)"
