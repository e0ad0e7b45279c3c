"""The layouts real labs run (issue 31, section 2): ZeRO-1/2 on the data axis, the
interleaved 1F1B schedule, context parallelism, micro-batches that fit, gradients in bf16 or
fp32. Every expected value is worked by hand from the papers' formulas in the comments."""

import pytest

import roofline as rl

NIC = 50e9  # one 400 Gb/s NIC per H100, one way
GB = 1e9

MLPERF = dict(
    model="GPT-3 175B",
    chip="H100",
    n_chips=512,
    tokens_per_step=2304 * 2048,
    seq_len=2048,
    layout="tp=4,pp=8,dp=16",
    dtype="fp8",
    recompute="selective",
    microbatches=72,  # 2304 sequences / 16 replicas / micro-batches of 2 (its config, mbs2)
)
LLAMA405 = dict(
    model="Llama 3.1 405B",
    chip="H100",
    n_chips=16384,
    tokens_per_step=2048 * 8192,  # 16M tokens per batch, 16 sequences per replica
    seq_len=8192,
    layout="tp=8,pp=16,dp=128",
)


def test_mlperf_gpt3_fits_only_with_the_distributed_optimizer():
    # the busiest stage, the first: 12 layers of 12 D^2 + 2 D (D = 12288: 1,811,963,904) and
    # the embedding 50257 x D = 617,558,016 (the last stage holds a copy for the tied head and
    # the final norm, 12,288 more, but keeps 1 micro-batch of activations, not 8)
    layer = 12 * 12288**2 + 2 * 12288
    assert 96 * layer + 50257 * 12288 + 12288 == rl.get_model("GPT-3 175B").params
    stage0 = 12 * layer + 50257 * 12288
    assert stage0 == 22_361_124_864
    slice_params = stage0 / 4  # tp 4: about 5.59e9 parameters per GPU (P / 32 = 5.46e9)
    plain = rl.training_step(**MLPERF, zero_stage=0, virtual_stages=4)
    # 16 bytes per parameter: 89.4 GB of model state alone on an 80 GB GPU
    state = sum(plain.memory[k] for k in ("weights", "gradients", "optimizer"))
    assert state == pytest.approx(16 * slice_params)
    assert not plain.fits and "does not fit" in plain.limits()
    zero1 = rl.training_step(**MLPERF, zero_stage=1, virtual_stages=4)
    # ZeRO-1 over dp 16: 2 (weights) + 2 (gradients) + 12 / 16 (optimizer) bytes per parameter
    assert zero1.memory["optimizer"] == pytest.approx(12 / 16 * slice_params)
    assert zero1.memory["gradients"] == pytest.approx(2 * slice_params)
    # activations (Korthikanti Table 2, fused attention): 34 s b h / t per layer, s 2048,
    # b 2, h 12288, t 4; 96 / 8 = 12 layers; and the input embedding's dropout mask, 1 byte
    # of s b h / t (Korthikanti et al. section 4.3; GPT-3 trains with dropout); in flight 8
    # micro-batches x (1 + 7 / (8 x 4))
    per_layer = 34 * 2048 * 2 * 12288 / 4
    mask = 2048 * 2 * 12288 / 4
    held = 8 * (1 + 7 / 32)
    assert zero1.memory["activations"] == pytest.approx((per_layer * 12 + mask) * held)
    assert zero1.memory_bytes == pytest.approx(4.75 * slice_params + (per_layer * 12 + mask) * held)
    assert zero1.fits  # about 76.6 GB of 80
    assert "ZeRO-1" in zero1.labels["DP"]


def test_llama3_405b_fits_only_with_sharded_optimizer_and_gradients():
    P = rl.get_model("Llama 3.1 405B").params
    # the busiest stage, the first (126 = 14 x 8 + 2 x 7: 8 layers): per layer Q, O 16384^2,
    # K, V 16384 x 1024, MLP 3 x 16384 x 53248, 2 norms of 16384 = 3,187,703,808; with the
    # embedding 128256 x 16384 = 2,101,346,304: 27,602,976,768, / tp 8 = 3.45e9 per GPU
    # (the average stage's P / 128 = 3.17e9)
    layer = 2 * 16384**2 + 2 * 16384 * 1024 + 3 * 16384 * 53248 + 2 * 16384
    assert 126 * layer + 2 * 128256 * 16384 + 16384 == P
    slice_params = (8 * layer + 128256 * 16384) / 8
    assert slice_params == 3_450_372_096
    # 126 / 16 -> 8 layers on the first stage, 16 micro-batches (one sequence each) in
    # flight; per layer and token (trained without dropout: no masks) 2 x 4 x 16384
    # d_model-wide (norm and block inputs of attention and MLP) + Q and O input 2 x 2 x 16384
    # + K and V 2 x 2 x 1024 + gate, up and product 3 x 2 x 53248 = 520,192 (31.75 h), on
    # 8192 / 8 tokens per chip: 520,192 x 1024 x 8 x 16 = 68.2 GB
    per_token = 2 * 4 * 16384 + 2 * 2 * 16384 + 2 * 2 * 1024 + 3 * 2 * 53248
    assert per_token == 520_192
    acts = per_token * 8192 / 8 * 8 * 16
    plain = rl.training_step(**LLAMA405)
    assert plain.memory_bytes == pytest.approx(16 * slice_params + acts)  # about 123.4 GB
    assert not plain.fits
    # Llama 3 shards optimizer state and gradients over its 128 replicas (ZeRO-2):
    # 2 + (2 + 12) / 128 bytes per parameter, about 7.3 GB + 68.2 GB = 75.5 GB
    zero2 = rl.training_step(**LLAMA405, zero_stage=2)
    assert zero2.memory_bytes == pytest.approx((2 + 14 / 128) * slice_params + acts)
    assert zero2.fits


def test_interleaved_bubble_and_sends():
    step = rl.training_step(**MLPERF, zero_stage=1, virtual_stages=4)
    plain = rl.training_step(**MLPERF, zero_stage=1)
    math_s = step.times["math"]
    # Narayanan et al. 2021: bubble (p - 1) / (v m) of the stage's work, p 8, v 4, m 72
    assert step.times["bubble"] == pytest.approx(7 / (4 * 72) * math_s)
    assert plain.times["bubble"] == pytest.approx(7 / 72 * math_s)
    # ... which is (p - 1) / (v m + p - 1) of the step's math + bubble
    share = step.times["bubble"] / (math_s + step.times["bubble"])
    assert share == pytest.approx(7 / (4 * 72 + 7))
    # sends: activations forward and gradients back at each of v chunk boundaries per
    # micro-batch, 2 x 2048 x 12288 bf16 / tp 4 each; the stages sit 4 GPUs x ... apart:
    # pp 8 at stride 4 spans 32 GPUs, 4 nodes, so the NIC carries them
    act = 2 * 2048 * 12288 * 2 / 4
    assert step.times["PP"] == pytest.approx(2 * 72 * 4 * act / NIC)
    assert step.times["PP"] == pytest.approx(4 * plain.times["PP"])


def test_interleaving_needs_a_pipeline_and_whole_groups_of_microbatches():
    with pytest.raises(ValueError, match="multiple of 8"):
        rl.training_step(**{**MLPERF, "microbatches": 36}, virtual_stages=4)
    with pytest.raises(ValueError, match="needs pp > 1"):
        rl.training_step(
            "Llama 3 8B", "H100", 8, 8 * 4096, 4096, "tp=8", microbatches=1, virtual_stages=2
        )
    with pytest.raises(ValueError, match="more than the 96 layers"):
        rl.training_step(**MLPERF, virtual_stages=16)  # 8 x 16 = 128 chunks


def test_zero_traffic_bf16_and_fp32_gradients():
    # bf16 bytes of one GPU's slice of the stage with the most parameters, whose reduction
    # the step waits for: the last (12 layers + its own copy of the tied 50,257 x 12288
    # table for the output head + the final norm 12288: 22,361,137,152) / tp 4; the
    # average stage's P / 32 = 174,566,105,088 / 32 gave 2.5 % less
    last_slice = (12 * (12 * 12288**2 + 2 * 12288) + 50257 * 12288 + 12288) / 4
    V = 2 * last_slice
    # dp 16 at stride 32: every member on another node, a ring over the NICs
    plain = rl.training_step(**MLPERF)
    assert plain.times["DP"] == pytest.approx(2 * 15 / 16 * V / NIC)
    zero1 = rl.training_step(**MLPERF, zero_stage=1)
    # reduce-scatter of the bf16 gradients + all-gather of the bf16 weights: the same bytes
    assert zero1.times["DP"] == pytest.approx(2 * 15 / 16 * V / NIC)
    fp32 = rl.training_step(**MLPERF, zero_stage=1, grad_dtype="fp32")
    # fp32 gradients: reduce-scatter 2 V, all-gather V
    assert fp32.times["DP"] == pytest.approx(3 * 15 / 16 * V / NIC)
    # memory: the first stage's slice (12 layers + the embedding: 22,361,124,864 / tp 4,
    # test above), not the average P / 32
    stage0_slice = (12 * (12 * 12288**2 + 2 * 12288) + 50257 * 12288) / 4
    assert fp32.memory["gradients"] == pytest.approx(4 * stage0_slice)
    assert "fp32 gradients" in fp32.labels["DP"]
    # ZeRO-2 keeps only its gradient shard, so it reduce-scatters every micro-batch's
    zero2 = rl.training_step(**MLPERF, zero_stage=2)
    assert zero2.times["DP"] == pytest.approx((72 + 1) * 15 / 16 * V / NIC)
    assert zero2.memory["gradients"] == pytest.approx(2 * stage0_slice / 16)
    with pytest.raises(ValueError, match="ZeRO-3 is the fsdp axis"):
        rl.training_step(**MLPERF, zero_stage=3)
    with pytest.raises(ValueError, match="grad_dtype"):
        rl.training_step(**MLPERF, grad_dtype="fp16x")


def test_dp_all_reduce_hides_only_behind_the_last_backward():
    plain = rl.training_step(**MLPERF)
    # no recomputation of the layers (selective: attention only), so the backward is close
    # to 2/3 of the math: forward share = model / (3 x hardware)
    fwd = plain.model_flops_per_chip / (3 * plain.hardware_flops_per_chip)
    window = (1 - fwd) * plain.times["math"] / 72
    assert plain.dp_exposed_s == pytest.approx(plain.times["DP"] - window)
    # with ZeRO-1 the weights' all-gather also overlaps the next step's first forward
    zero1 = rl.training_step(**MLPERF, zero_stage=1)
    assert zero1.dp_exposed_s == pytest.approx(zero1.times["DP"] - zero1.times["math"] / 72)
    busy = max(t for r, t in zero1.times.items() if r not in ("DP", "bubble"))
    assert zero1.t_lower == pytest.approx(busy + zero1.times["bubble"] + zero1.dp_exposed_s)


def test_context_parallel_ring_attention_by_hand():
    step = rl.training_step(
        "Llama 3.1 405B",
        "H100",
        16384,
        1024 * 131072,
        131072,
        "tp=8,cp=16,pp=16,dp=8",
        zero_stage=1,
        recompute="full",
    )
    assert step.layout["cp"] == 16
    # 1024 sequences over dp 8 (cp chips share theirs): 128 micro-batches of one sequence
    assert (step.microbatches, step.micro_batch) == (128, 1)
    # each chip holds 131072 / 16 = 8192 tokens; a ring step passes their K and V:
    # 2 x 2 bytes x 8 kv heads x 128 x 8192 / tp 8; 15 steps; forward 1 + backward 2 +
    # recomputed forward 1 = 4 passes; 8 layers on the first stage; cp 16 at stride 8
    # leaves the node, so the NIC carries it
    block = 2 * 2 * 8 * 128 * 8192 / 8
    assert step.times["CP"] == pytest.approx(8 * 128 * 4 * 15 * block / NIC)
    # activations of 8192 tokens per chip, full recomputation: 2 s b h / t per layer
    assert step.memory["activations"] == pytest.approx(2 * 8192 * 16384 / 8 * 8 * 16)
    assert rl.parse_layout("tp=8,context=4")["cp"] == 4
    with pytest.raises(ValueError, match="cp=3 must divide the sequence length"):
        rl.training_step("Llama 3 8B", "H100", 3, 3 * 4096, 4096, "cp=3")


def test_default_microbatches_fit_or_say_so():
    # Llama 3 8B (32 layers, h 4096) on 64 H100, ZeRO-1: 8 sequences of 8192 per replica.
    # State: (2 + 2 + 12 / 64) bytes x 8.03e9 = 33.6 GB; activations 34 x 8192 x 4096 x 32
    # = 36.5 GB per sequence: one sequence per micro-batch fits (70 GB), two do not (107 GB)
    step = rl.training_step("Llama 3 8B", "H100", 64, 64 * 8 * 8192, 8192, "dp=64", zero_stage=1)
    assert (step.microbatches, step.micro_batch) == (8, 1)
    assert step.fits and any("fewest" in a for a in step.assumptions)
    # plain replicas: 16 x 8.03e9 = 128 GB of state, nothing fits: the message says what to do
    plain = rl.training_step("Llama 3 8B", "H100", 64, 64 * 8 * 8192, 8192, "dp=64")
    assert not plain.fits and "microbatches=" in plain.limits()
    assert "zero_stage" in plain.limits()


def test_expert_all_to_all_split_between_node_and_network():
    # DeepSeek-V3's layout (PP16, EP64 over 8 nodes, ZeRO-1) on 2048 H100: ep 64 at
    # stride 1 = 8 GPUs per node x 8 nodes; 15360 sequences of 4096 / (dp 2 x ep 64) = 120
    # per replica, one per micro-batch
    step = rl.training_step(
        "DeepSeek-V3", "H100", 2048, 15360 * 4096, 4096, "pp=16,ep=64,dp=2", zero_stage=1
    )
    assert step.microbatches == 120
    # all-to-all array: 64 members x 4096 tokens x 7168 x 2 bytes x 8 experts per token;
    # each GPU holds V / 64 and sends 56/64 of it through its NIC and 7/64 over NVSwitch
    V = 64 * 4096 * 7168 * 2 * 8
    across = V / 64 * 56 / 64 / NIC
    inside = V / 64 * 7 / 64 / (18 * 25e9)
    assert across > 70 * inside  # the network share decides
    # ceil(61 / 16) = 4 layers on the busiest stage, 120 micro-batches, 4 all-to-alls each
    # (dispatch and combine, forward and backward)
    assert step.times["EP"] == pytest.approx(4 * 120 * 4 * across)
    assert "88% of the routed tokens over the network" in step.labels["EP"]


def test_serving_tp_all_reduce_pays_nvswitch_latency():
    from roofline.serving import tp_all_reduce_seconds

    # NCCL's smallest all-reduce over 8 H100 measures 2 x 7/8 x 1024 B / 0.07 GB/s = 25.6 us
    # (bus bandwidth 0.07 GB/s at 1 KiB): that, not 2 x 1 us, is what a tiny all-reduce costs
    small = tp_all_reduce_seconds("H100", 8, 1024)
    assert small == pytest.approx(2 * 7 / 8 * 1024 / 0.07e9, rel=1e-3)
    # a TPU slice keeps the ICI hop's 1 us: 2 x 2 v5e, 2 axes of 2 chips, 2 steps each way
    assert tp_all_reduce_seconds("TPU v5e", 4, 1024) < 10e-6


def test_partial_recomputation_palm():
    palm = rl.get_model("PaLM 540B")
    # PaLM's ratio HFU / MFU = 57.8 / 46.2: recomputing a share f of the layers adds
    # f x (2 x layer weights + forward attention) to 6 x weights + 3 x forward attention
    N = palm.matmul_params
    layer_weights = N - palm.vocab * palm.d_model
    attn = 4 * 118 * 12288 * 2048  # forward Q K^T and A V over the whole square (MFU's count)
    model = 6 * N + 3 * attn
    f = (57.8 / 46.2 - 1) * model / (2 * layer_weights + attn)
    assert 0.7 < f < 0.8  # not 1: full recomputation would give 1.33
    hw = rl.training_flops_per_token(palm, 2048, recompute=f)
    assert hw / rl.training_flops_per_token(palm, 2048) == pytest.approx(57.8 / 46.2)
    full = rl.training_flops_per_token(palm, 2048, recompute="full")
    assert full / model == pytest.approx(1 + (2 * layer_weights + attn) / model)
    # activations: a share f keeps only the layer input (2 s b h / t), the rest all of its
    # bytes per token / t: d_model-wide 2 x 2 x 18432 (PaLM's parallel layer: ONE LayerNorm,
    # whose input and whose output - the fused attention+MLP input matmul's input - are kept
    # once each; no dropout masks: PaLM trained without dropout), Q and O input
    # 2 x 2 x 12288 (48 heads of 256), multi-query K and V 2 x 2 x 256, gated MLP
    # 3 x 2 x 73728: 73,728 + 49,152 + 1,024 + 442,368 = 566,272
    s, h = 2048, 18432
    per_token = 2 * 2 * 18432 + 2 * 2 * 12288 + 2 * 2 * 256 + 3 * 2 * 73728
    assert per_token == 566_272
    acts = rl.activation_bytes_per_layer(palm, s, 1, 12, recompute=f)
    assert acts == pytest.approx(f * 2 * s * h / 12 + (1 - f) * per_token * s / 12)
    with pytest.raises(ValueError, match="a number from 0 to 1"):
        rl.training_flops_per_token(palm, 2048, recompute=1.5)


def test_published_rows_use_the_labs_layouts():
    from roofline.published import MEASUREMENTS

    rows = {m.key: m for m in MEASUREMENTS}
    # PaLM: 57.8 / 46.2 = 1.251 of the model FLOPs, not full recomputation's ~1.33
    f = rl.recompute_for_ratio("PaLM 540B", 2048, 57.8 / 46.2)
    palm = rl.training_step(
        "PaLM 540B", "TPU v4", 6144, 2048 * 2048, 2048, "dp=2,fsdp=256,tp=12", recompute=f
    )
    assert palm.hardware_flops_per_chip / palm.model_flops_per_chip == pytest.approx(1.251, 1e-3)
    assert rows["palm-540b"].bound() == pytest.approx(palm.tokens_per_s)
    # MLPerf GPT-3 on 512 H100: interleaved (v = 4) with the distributed optimizer, and fits
    mlperf = rl.training_step(**{**MLPERF, "recompute": "none"}, zero_stage=1, virtual_stages=4)
    assert mlperf.fits
    assert rows["mlperf-gpt3-h100"].bound() == pytest.approx(mlperf.tokens_per_s)
    for key in ("palm-540b", "mlperf-gpt3-h100"):
        assert rows[key].measured < rows[key].bound()
    with pytest.raises(ValueError, match="between 1"):
        rl.recompute_for_ratio("PaLM 540B", 2048, 1.5)


def test_nim_row_is_the_published_throughput():
    from roofline.published import MEASUREMENTS

    row = {m.key: m for m in MEASUREMENTS}["nim-tpot-100"]
    # NVIDIA's NIM 1.8.0 table: 917.26 tokens/s at 92.91 ms per token -> 85.2 requests in
    # flight; the KV caches of 5250-token requests: (0.9 x 80 GB - 70.6e9 / 2 bytes of fp8
    # weights) / (5250 x 80 layers x 8 KV heads x 128 x 2 x 1 byte / 2 GPUs) = 85 fit
    assert row.measured == 917.26
    assert round(917.26 * 92.91e-3) == 85
    fits = rl.serving_estimate(
        "Llama 3 70B", "H100", 2, tp=2, batch=1, context_len=5250, dtype="fp8"
    ).max_batch
    P = rl.get_model("Llama 3 70B").params
    assert fits == int((0.9 * 80e9 - P / 2) // (5250 * 80 * 8 * 128 * 2 / 2))
    at_fit = rl.serving_estimate(
        "Llama 3 70B", "H100", 2, tp=2, batch=fits, context_len=5250, dtype="fp8"
    )
    assert row.bound() == pytest.approx(at_fit.tokens_per_s)
    assert row.measured < row.bound()


def test_speculative_decoding_pays_for_its_draft():
    # Llama 3 70B fp8 on 2 H100 (tp 2), one sequence at 4096 tokens, drafts from Llama 3 8B
    s = rl.speculative_decoding("Llama 3 70B", "Llama 3 8B", "H100", 2, 4, 0.8, 4096, "fp8")
    # Leviathan et al. 2023: (1 - 0.8^5) / (1 - 0.8) = 3.3616 tokens per round
    assert s.tokens_per_round == pytest.approx((1 - 0.8**5) / 0.2) == pytest.approx(3.3616)
    # target step at batch 1 is memory-bound: half the 69,503,033,344 weight bytes read (the
    # embedding table gathered, not read) + half of 4096 x 163,840 fp8 cache bytes, at 3.35 TB/s;
    # checking 5 tokens reads the same bytes (the guesses share one cache)
    target = (69_503_033_344 / 2 + 4096 * 163_840 / 2) / 3.35e12
    assert s.target_step_s == pytest.approx(target)
    assert s.verify_s == pytest.approx(target)
    # the draft's step: 32 layers x 2 all-reduces, each 25.6 us of NVSwitch latency + a
    # 4096 x 2-byte vector (ring factor 2 x 1/2 = 1) at 450 GB/s, more than its weight read
    draft = 64 * (2 * 7 / 8 * 1024 / 0.07e9 + 4096 * 2 / 450e9)
    assert s.draft_step_s == pytest.approx(draft, rel=1e-3)
    assert s.speedup == pytest.approx(3.3616 * target / (4 * draft + target), rel=1e-3)
    # a poor draft (acceptance 0.5) with many guesses is slower than no speculation
    poor = rl.speculative_decoding("Llama 3 70B", "Llama 3 8B", "H100", 2, 8, 0.5, 4096, "fp8")
    assert poor.speedup < 1
    with pytest.raises(ValueError, match="probability"):
        rl.speculative_decoding("Llama 3 70B", "Llama 3 8B", "H100", 2, 4, 1.5)


def test_training_and_serving_rows_say_the_bounds_configuration():
    from roofline.published import held_against

    for row in held_against():
        if row["category"] in ("training", "serving"):
            assert row["bound_config"], row["key"]
    rows = {r["key"]: r for r in held_against()}
    assert "interleaved (4 chunks per stage), ZeRO-1" in rows["mlperf-gpt3-h100"]["bound_config"]
    assert "reused" in rows["mlperf-llama2-mi300x"]["bound_config"]


def test_deepseek_v3_row_node_limited_all_to_all_by_hand():
    from roofline.published import MEASUREMENTS

    row = {m.key: m for m in MEASUREMENTS}["deepseek-v3-h800"]
    # DeepSeek-V3, Table 1: 180K GPU hours per 1e12 tokens on 2048 GPUs
    assert row.measured == pytest.approx(1e12 / (180e3 * 3600) * 2048)  # 3.16M tokens/s
    # each token's 7168-wide bf16 activation crosses the network once per destination node,
    # at most 4 of the 8 nodes of its ep group (4 x 7/8 on average leave its own node):
    # per all-to-all each GPU sends 4096 tokens x 7168 x 2 bytes x 4 x 7/8 through 50 GB/s
    across = 4096 * 7168 * 2 * 4 * 7 / 8 / NIC
    # 4 MoE layers on the busiest stage, 120 micro-batches, 4 all-to-alls per layer
    ep_s = 4 * 120 * 4 * across
    step = rl.training_step(
        "DeepSeek-V3",
        "H100",
        2048,
        15360 * 4096,
        4096,
        "pp=16,ep=64,dp=2",
        dtype="fp8",
        zero_stage=1,
        causal=True,
        expert_nodes_per_token=4,
    )
    assert step.times["EP"] == pytest.approx(ep_s)
    assert step.slowest == "EP" and ep_s > step.times["math"]
    # no bubble counted (DualPipe's is smaller than 1F1B's): tokens / (the EP time + the
    # ZeRO-1 reduce-scatter and all-gather no compute window hides: none, now that the last
    # stage's math counts the multi-token-prediction depth, 1.46 x the average stage's)
    assert 0 <= step.dp_exposed_s < 0.01 * ep_s
    assert row.bound() == pytest.approx(15360 * 4096 / (ep_s + step.dp_exposed_s))
    assert row.measured < row.bound()


def test_megatron_backward_overlaps_only_the_weight_gradient_matmul():
    """Chapter 6: Megatron-LM overlaps the MLP's input-gradient all-reduce with the
    column-parallel layer's weight-gradient matmul only (gate and up: 2 x 2BDF/n FLOPs, 2/3 of
    the gated forward's 3 x 2BDF/n). Hidden when 4BDF/(nP) > 2 (n-1)/n 2BD/BW_total, i.e.
    F > (n-1) P / BW_total = 7 x 989.5e12 / 450e9 = 15,392 on 8 H100s (the forward's
    (2/3)(n-1)P/BW_total = 10,261; a backward chunked over all of its math (1/3): 5,131)."""
    h100 = rl.get_chip("H100 SXM")
    peak, total = h100.peak_flops_per_s("bf16"), h100.interconnect.one_way_total_bytes_per_s
    assert (peak, total) == (989.5e12, 450e9)
    f_star = 7 * 989.5e12 / 450e9
    assert f_star == pytest.approx(15392.2, abs=0.1)
    tm, tc = rl.megatron_mlp_times(4096, 4096, f_star, 8, peak, total)
    assert 2 / 3 * tm == pytest.approx(tc)
    # Llama-3-8B's F = 14336: the weight-gradient matmul lasts 14336 / 15392 = 0.93 of it
    tm, tc = rl.megatron_mlp_times(4096, 4096, 14336, 8, peak, total)
    assert 2 / 3 * tm / tc == pytest.approx(14336 / f_star) == pytest.approx(0.931, abs=1e-3)


DEEPSEEK = dict(
    model="DeepSeek-V3",
    chip="H100 SXM",
    n_chips=2048,
    tokens_per_step=15360 * 4096,
    seq_len=4096,
    layout="pp=16,ep=64,dp=2",
    dtype="fp8",
    zero_stage=1,
    causal=True,
    expert_nodes_per_token=4,
)


def test_deepseek_zero1_shards_the_dense_part_over_dp_x_ep():
    """DeepSeek-V3 (arXiv 2412.19437, section 3.2): PP16 x EP64 x ZeRO-1 DP on 2048 GPUs. The
    dense part (attention, shared experts, the 3 dense MLPs, embeddings) is replicated on the
    128 GPUs of a stage (ep 64 x dp 2), which reduce its gradients; ZeRO-1 shards its optimizer
    state over the same 128. Each routed expert lives on dp 2 GPUs: sharded over 2."""
    m = rl.get_model("DeepSeek-V3")
    # routed experts: 58 MoE layers x 256 experts x 3 matrices x 7168 x 2048
    experts = 58 * 256 * 3 * 7168 * 2048
    assert experts == m.expert_params == 653_908_770_816
    # the dense part: 671,026,404,352 - experts = 17,117,633,536 (the total: test_model_blocks)
    assert m.params == 671_026_404_352
    step = rl.training_step(**DEEPSEEK)
    # the stages hold their own layers (61 layers + 1 MTP depth = 62 units: 14 stages of 4,
    # 2 of 3): stage 0 layers 0-3 (3 dense) + the embedding, stages 1-13 four MoE layers,
    # stage 15 layers 59, 60, the MTP depth, the output head and the final norm. Per MoE
    # layer: latent attention D x 1536 + 1536 + 1536 x 128 x 192 + D x 576 + 512
    # + 512 x 128 x 256 + 128 x 128 x D = 187,107,328, shared expert 3 x D x 2048, router
    # D x 256, 2 norms of D: 232,996,864 dense; routed 256 x 3 x D x 2048 = 11,274,289,152
    D = 7168
    attn = D * 1536 + 1536 + 1536 * 128 * 192 + D * 576 + 512 + 512 * 128 * 256 + 128 * 128 * D
    moe_dense = attn + 3 * D * 2048 + D * 256 + 2 * D
    assert (attn, moe_dense) == (187_107_328, 232_996_864)
    routed = 256 * 3 * D * 2048
    # the busiest stage in bytes is stage 1 (4 MoE layers, 15 micro-batches in flight):
    # bf16 weights 2 x (4 x 232,996,864 + 4 x 11,274,289,152 / ep 64) = 3,273,261,056
    # (the average stage's was 3.417e9: 2 x (dense / 16 + experts / 1024)); stage 0 holds
    # more weights (6.17 GB: the dense MLPs of 18432 and the embedding) but keeps less
    # activations (16 micro-batches x 3 dense + 1 MoE layers: 96.7 GB against 111.9)
    weights = 2 * (4 * moe_dense + 4 * routed / 64)
    assert weights == 3_273_261_056
    assert step.memory["weights"] == pytest.approx(weights)
    assert step.memory["gradients"] == pytest.approx(weights)
    # optimizer, 12 bytes, ZeRO-1: the dense part over dp x ep = 128, the experts over dp 2:
    # 12 x (4 x 232,996,864 / 128 + 4 x 11,274,289,152 / 64 / 2) = 4,315,232,256
    optimizer = 12 * (4 * moe_dense / 128 + 4 * routed / 128)
    assert optimizer == 4_315_232_256
    assert step.memory["optimizer"] == pytest.approx(optimizer)
    # model state 2 x 3.273 + 4.315 = 10.86 GB + activations. Counted block by block (16-bit,
    # nothing recomputed, no dropout masks) stage 1 keeps 4 MoE layers x 15 micro-batches x
    # 4096 tokens x 455,296 bytes (tests/test_model_blocks.py) = 111.9 GB: 122.8 GB, it does
    # not fit 80 GB (with Korthikanti's GPT-layer 34 h it did: 74.65 GB, test below)
    acts = 4 * 15 * 4096 * 455_296
    assert step.memory["activations"] == pytest.approx(acts)
    assert step.memory_bytes == pytest.approx(acts + 2 * weights + optimizer)
    assert not step.fits and round(step.memory_bytes / 1e9, 1) == 122.8
    gpt_layer = rl.training_step(**DEEPSEEK, activations="gpt-layer")
    # Korthikanti's GPT-layer formula gives every layer 34 h, so the busiest stage is stage 0
    # (16 micro-batches, and the most weights): 3 dense layers (attention + 3 x D x 18432 +
    # 2 D) + 1 MoE layer's dense part + the embedding 129280 x D = 2,910,126,080 dense, one
    # layer's routed experts / ep 64; weights 2 x (2,910,126,080 + 11,274,289,152 / 64)
    # = 6,172,573,696, as many gradient bytes, optimizer 12 x (2,910,126,080 / 128
    # + 11,274,289,152 / 64 / 2) = 1,329,788,928; activations 16 x 4 x 34 x 7168 x 4096
    # = 63,887,638,528: 77.56 GB, it fits (74.65 GB with the average stage's weights)
    dense0 = 3 * (attn + 3 * D * 18432 + 2 * D) + moe_dense + 129280 * D
    assert dense0 == 2_910_126_080
    state0 = 4 * (dense0 + routed / 64) + 12 * (dense0 / 128 + routed / 128)
    acts0 = 16 * 4 * 34 * 7168 * 4096
    assert gpt_layer.memory_bytes == pytest.approx(state0 + acts0)
    assert gpt_layer.fits and round(gpt_layer.memory_bytes / 1e9, 2) == 77.56


def test_expert_all_to_alls_only_on_moe_layers():
    """DeepSeek-V3's first 3 of 61 layers have a dense MLP and route nothing. Without a
    pipeline every GPU runs 58 MoE layers' all-to-alls, not 61; with pp 16 (61 = 13 x 4 +
    3 x 3, the first stages take the extra layer) stage 0 holds layers 0-3 (3 dense, 1 MoE),
    stage 1 layers 4-7 (4 MoE): the busiest stage still does 4 layers' all-to-alls."""
    from roofline.parallelism import _moe_layers_on_a_stage

    m = rl.get_model("DeepSeek-V3")
    assert _moe_layers_on_a_stage(m, 1) == 58
    assert _moe_layers_on_a_stage(m, 16) == 4
    assert _moe_layers_on_a_stage(m, 61) == 1
    assert _moe_layers_on_a_stage(rl.get_model("Llama 3 8B"), 4) == 0
    # 20 stages: 61 = 1 x 4 + 19 x 3; stage 0 (0-3) holds 1 MoE layer, stage 1 (4-6) 3
    assert _moe_layers_on_a_stage(m, 20) == 3
    one = dict(DEEPSEEK, n_chips=128, tokens_per_step=128 * 4096, layout="ep=64,dp=2")
    one.pop("expert_nodes_per_token")
    step = rl.training_step(**one, microbatches=1)
    per_layer = step.times["EP"] / 58  # the same all-to-alls in every MoE layer
    dense_too = rl.training_step(**dict(one, model=m.with_changes(dense_layers=0)), microbatches=1)
    assert dense_too.times["EP"] == pytest.approx(61 * per_layer)


def test_palm_parallel_block_needs_one_tensor_parallel_all_reduce_per_pass():
    """PaLM's block computes attention and MLP from the same input and sums them, so one
    all-reduce closes both per pass (Chowdhery et al. 2022, section 2: "parallel
    formulation"): forward 1 + backward 1 per layer, against Megatron's 2 + 2 for a serial
    block (Shoeybi et al. 2019, Figure 4: the f and g operators of attention and of the MLP).
    Full recomputation repeats the forward's: 3 against 6. Counts by hand; the collective's
    time cancels in each ratio."""
    layout = "dp=2,fsdp=16,tp=8"
    args = ("TPU v4", 256, 256 * 2048, 2048, layout)
    palm = rl.get_model("PaLM 540B")
    assert palm.parallel_block
    serial = palm.with_changes(parallel_block=False)

    def tp(model, recompute="none"):
        return rl.training_step(model, *args, microbatches=1, recompute=recompute).times["TP"]

    assert tp(palm) / tp(serial) == pytest.approx(2 / 4, rel=1e-12)
    assert tp(palm, "full") / tp(palm) == pytest.approx(3 / 2, rel=1e-12)
    assert tp(serial, "full") / tp(serial) == pytest.approx(6 / 4, rel=1e-12)
