"""The training step's HBM traffic and FSDP / data-parallel collectives are the busiest
pipeline stage's own (issue 31): each stage moves and reduces its own parameters (the first
holds the embedding, the last the output head, DeepSeek-V3's middle stages four MoE layers),
and every expected value below is derived by hand from the model's published shape."""

import pytest

import roofline as rl
from roofline.parallelism import _stage_params, _stage_slices

H100_NIC = 50e9  # bytes/s one way per GPU, passed explicitly (400 Gb/s ConnectX-7)
H100_HBM = 3.35e12  # bytes/s, the H100 SXM datasheet's 3.35 TB/s

# Llama 3 8B (config.json: hidden 4096, intermediate 14336, 32 layers, 32 heads, 8 KV heads
# of 128, vocab 128,256, untied embeddings). One layer:
#   attention q 4096 x 4096 + k, v 2 x 4096 x 1024 + o 4096 x 4096 = 41,943,040
#   MLP (gated) 3 x 4096 x 14336                                   = 176,160,768
#   two RMSNorms 2 x 4096                                          = 8,192
#   layer                                                          = 218,112,000
LLAMA8_LAYER = 4096 * 4096 * 2 + 2 * 4096 * 1024 + 3 * 4096 * 14336 + 2 * 4096
assert LLAMA8_LAYER == 218_112_000
# pp = 8: 4 layers a stage; stage 0 adds the embedding 128,256 x 4096 = 525,336,576, the last
# stage the output head (the same size) and the final norm 4096:
LLAMA8_STAGE0 = 4 * LLAMA8_LAYER + 128_256 * 4096  # 1,397,784,576
LLAMA8_LAST = 4 * LLAMA8_LAYER + 128_256 * 4096 + 4096  # 1,397,788,672: the most


def _llama8(layout, n_chips, **kw):
    # 32 sequences of 4096, dp 2 -> 16 per replica, 16 micro-batches of one sequence
    return rl.training_step(
        "Llama 3 8B",
        "H100 SXM",
        n_chips,
        tokens_per_step=4096 * 32,
        seq_len=4096,
        layout=layout,
        microbatches=16,
        network_bytes_per_s=H100_NIC,
        **kw,
    )


def test_llama3_8b_stages_hold_their_own_parameters():
    stages = _stage_params(rl.get_model("Llama 3 8B"), 8)
    assert stages[0] == (LLAMA8_STAGE0, 0)
    assert stages[-1] == (LLAMA8_LAST, 0)
    assert all(dense == 4 * LLAMA8_LAYER for dense, _ in stages[1:-1])


def test_llama3_8b_data_parallel_all_reduce_is_the_last_stages():
    # tp 8 x pp 8 x dp 2 on 128 H100: the dp pair sits 64 GPUs apart, in two nodes: the
    # network (a switch, one NIC per GPU). The last stage holds the most parameters, per GPU
    # 1,397,788,672 / 8 = 174,723,584, bf16 gradients 349,447,168 bytes; a ring all-reduce
    # over n = 2 moves 2 (n - 1) / n = 1 x the bytes: 349,447,168 / 50e9 = 6.989 ms
    # (the average stage's P / 64 = 8,030,261,248 / 64 gave 5.019 ms)
    step = _llama8("tp=8,pp=8,dp=2", 128)
    per_gpu = LLAMA8_LAST / 8
    assert step.times["DP"] == pytest.approx(2 * (2 - 1) / 2 * 2 * per_gpu / H100_NIC, rel=1e-12)
    assert step.times["DP"] == pytest.approx(6.98894336e-3, rel=1e-9)


def test_llama3_8b_fsdp_gathers_the_last_stages_weights():
    # tp 8 x fsdp 2 x pp 8: the fsdp pair sits 8 GPUs apart (two nodes: the network). Per
    # micro-batch the bf16 weights are all-gathered twice (forward and backward) and the
    # bf16 gradients reduce-scattered once, each moving (n - 1) / n = 1/2 of the slice's
    # 2 x 174,723,584 bytes: 3 x 174,723,584 / 50e9 per micro-batch, x 16 micro-batches
    step = _llama8("tp=8,fsdp=2,pp=8", 128)
    per_gpu = LLAMA8_LAST / 8
    assert step.times["FSDP"] == pytest.approx(16 * 3 * 0.5 * 2 * per_gpu / H100_NIC, rel=1e-12)


def test_llama3_8b_hbm_traffic_is_the_last_stages():
    # The GPT-layer convention keeps 34 s b h / t bytes a layer (sequence parallel, fused
    # attention): 34 x 4096 x 1 x 4096 / 8 = 71,303,168, 4 layers on every stage. Per
    # micro-batch the last stage (P = 174,723,584 parameters a GPU) reads its bf16 weights
    # twice (2 x 2P), writes and reads back its bf16 gradients (2 x 2P), writes and reads its
    # activations (2 x 4 x 71,303,168); once a step Adam moves 28 bytes a parameter:
    # 16 x (8P + 570,425,344) + 28P = 36,383,684,608 bytes / 3.35e12 B/s = 10.861 ms
    step = _llama8("tp=8,pp=8,dp=2", 128, activations="gpt-layer")
    p = LLAMA8_LAST / 8
    acts = 4 * 34 * 4096 * 1 * 4096 / 8
    expected = 16 * (8 * p + 2 * acts) + 28 * p
    assert expected == 36_383_684_608
    assert step.times["HBM"] == pytest.approx(expected / H100_HBM, rel=1e-12)


# DeepSeek-V3 (its config.json: hidden 7168, 61 layers of which the first 3 dense
# (intermediate 18432), 256 routed experts and 1 shared of 2048, MLA with q_lora 1536,
# kv_lora 512, 128 heads, qk 128 + rope 64, v 128; one multi-token-prediction depth).
# One MoE layer's routed experts: 256 x 3 x 7168 x 2048 = 11,274,289,152. Its other
# parameters: MLA 7168 x 1536 + 1536 + 1536 x 128 x 192 + 7168 x 576 + 512
#   + 512 x 128 x 256 + 128 x 128 x 7168 = 187,107,328; shared expert 3 x 7168 x 2048 =
# 44,040,192; router 256 x 7168 = 1,835,008; norms 2 x 7168: 232,996,864.
DSV3_EXPERTS = 256 * 3 * 7168 * 2048
DSV3_MLA = (
    7168 * 1536 + 1536 + 1536 * 128 * 192 + 7168 * 576 + 512 + 512 * 128 * 256 + 128 * 128 * 7168
)
DSV3_MOE_DENSE = DSV3_MLA + 3 * 7168 * 2048 + 256 * 7168 + 2 * 7168
assert (DSV3_EXPERTS, DSV3_MLA, DSV3_MOE_DENSE) == (11_274_289_152, 187_107_328, 232_996_864)


def test_deepseek_v3_busiest_stage_is_one_of_four_moe_layers():
    # 61 layers + 1 MTP depth = 62 units on 16 stages: 14 of 4, 2 of 3. Stage 0 holds the
    # 3 dense layers and one MoE layer, stages 1 to 13 four MoE layers each: the most
    # expert parameters, 4 x 11,274,289,152 = 45,097,156,608
    stages = _stage_params(rl.get_model("DeepSeek-V3"), 16)
    assert stages[1] == (4 * DSV3_MOE_DENSE, 4 * DSV3_EXPERTS)
    assert max(expert for _, expert in stages) == 4 * DSV3_EXPERTS
    assert stages[0][1] == DSV3_EXPERTS


def test_deepseek_v3_data_parallel_reduce_is_the_moe_stages():
    # tp 8 x pp 16 x dp 4 on 512 H100 (no ep: every GPU of a stage holds all its experts,
    # split tp ways). The dp group sits 128 GPUs apart: the network. Stage 1 holds
    # 4 x (232,996,864 + 11,274,289,152) = 46,029,144,064 parameters, 5,753,643,008 a GPU;
    # its dense part and its experts are each all-reduced over dp = 4, a ring moving
    # 2 (n - 1) / n = 1.5 x the bf16 bytes: 1.5 x 2 x 5,753,643,008 / 50e9 = 345.2 ms
    # (the average stage's (671.0e9 params) / 128 a GPU gave about 1.5 x 2 x 5.24e9 / 50e9)
    step = rl.training_step(
        "DeepSeek-V3",
        "H100 SXM",
        512,
        tokens_per_step=4096 * 64,
        seq_len=4096,
        layout="tp=8,pp=16,dp=4",
        microbatches=16,
        network_bytes_per_s=H100_NIC,
    )
    per_gpu = 4 * (DSV3_MOE_DENSE + DSV3_EXPERTS) / 8
    assert per_gpu == 5_753_643_008
    assert step.times["DP"] == pytest.approx(1.5 * 2 * per_gpu / H100_NIC, rel=1e-12)


def _step_without_pipeline(model, layout, n, zero_stage=0):
    return rl.training_step(
        model,
        "H100 SXM",
        n,
        tokens_per_step=4096 * 256,
        seq_len=4096,
        layout=layout,
        zero_stage=zero_stage,
        network_bytes_per_s=H100_NIC,
    )


@pytest.mark.parametrize(
    "model", [name for name in rl.list_models() if not rl.get_model(name).mtp_layers]
)
def test_without_a_pipeline_the_one_stage_is_the_whole_model(model):
    # pp = 1: the one stage's parameters are the model's own (dense + routed experts), split
    # exactly as the whole-model slice params / tp + experts / (tp x ep) was, to the last float
    m = rl.get_model(model)
    ((dense, expert),) = _stage_params(m, 1)
    assert (dense, expert) == (m.params - m.expert_params, m.expert_params)
    ep = 8 if m.is_moe and m.experts % 8 == 0 else 1
    step = _step_without_pipeline(m, {"tp": 8, "ep": ep, "dp": 2}, 16 * ep)
    from roofline.parallelism import _Plan

    plan = _Plan(m, step.layout, 4096, "none", step.microbatches, step.micro_batch, True)
    ((d, e),) = _stage_slices(plan)
    assert d == (m.params - m.expert_params) / 8
    assert e == m.expert_params / (8 * ep)


# The last stage's output layer (Korthikanti et al. 2022, section 4.3: the final norm's and
# the output projection's inputs, 2 bytes of s b h each stored sequence-parallel, and the
# cross-entropy's logits in fp32, 4 s b v, all split t ways), for one micro-batch.


def _plan(model, layout, seq_len, microbatches, micro_batch=1, activations="blocks"):
    from roofline.parallelism import _Plan, parse_layout

    lay = parse_layout(layout)
    m = rl.get_model(model)
    return _Plan(m, lay, seq_len, "none", microbatches, micro_batch, True, activations=activations)


def test_output_layer_bytes_by_hand():
    # Llama 3 8B, s 8192, b 1, t 8: 4 x 8192 x (4096 + 128,256) / 8 = 542,113,792 bytes
    plan = _plan("Llama 3 8B", "tp=8,pp=8", 8192, 8)
    assert plan.output_layer_bytes() == 542_113_792
    # DeepSeek-V3 (v 129,280, h 7168), t 1: its multi-token-prediction depth ends in the
    # shared head and its own cross-entropy too: 2 x 4 x 8192 x (7168 + 129,280)
    plan = _plan("DeepSeek-V3", "pp=16", 8192, 16)
    assert plan.output_layer_bytes() == 2 * 4 * 8192 * (7168 + 129_280) == 8_942_256_128
    # the GPT-layer convention (homework part 4's stated formula) counts the layers alone
    assert _plan("Llama 3 8B", "tp=8", 8192, 1, activations="gpt-layer").output_layer_bytes() == 0


def test_embedding_dropout_mask_only_with_dropout():
    # GPT-3 trains with dropout: its embedding's mask, 1 byte of s b h / t = 2048 x 2 x
    # 12288 / 4 = 12,582,912 bytes a micro-batch; Llama 3 trains without dropout: none
    assert _plan("GPT-3 175B", "tp=4,pp=8", 2048, 8, 2).embedding_bytes() == 12_582_912
    assert _plan("Llama 3 8B", "tp=8,pp=8", 8192, 8).embedding_bytes() == 0


def test_llama3_8b_without_a_pipeline_keeps_one_micro_batchs_logits():
    # pp = 1: the one stage is also the last; 32 layers each keeping A bytes a micro-batch
    # (activation_bytes_per_layer, tested on its own) + the output layer 542,113,792 bytes
    step = rl.training_step("Llama 3 8B", "H100 SXM", 8, 8192, 8192, "tp=8", microbatches=1)
    a = rl.training.activation_bytes_per_layer("Llama 3 8B", 8192, 1, 8)
    assert step.memory["activations"] == pytest.approx(32 * a + 542_113_792, rel=1e-12)


def test_llama3_8b_last_stage_is_the_busiest_with_few_layers_a_stage():
    # tp 1 x pp 16, 2 micro-batches of one 8192-token sequence: 2 layers a stage. Stage 0:
    # 2 layers + the embedding (16 bytes a parameter), 2 micro-batches of 2 layers'
    # activations A; stage 15: 2 layers + the head + the final norm, 1 micro-batch of 2
    # layers + the output layer 4 x 8192 x (4096 + 128,256) = 4,336,910,336 bytes, more
    # than the 2 A = 2.28 GB stage 0 keeps besides: the last stage holds the most
    step = rl.training_step("Llama 3 8B", "H100 SXM", 16, 2 * 8192, 8192, "pp=16", microbatches=2)
    a = rl.training.activation_bytes_per_layer("Llama 3 8B", 8192, 1, 1)
    logits = 4 * 8192 * (4096 + 128_256)
    assert logits == 4_336_910_336 and logits > 2 * a
    last = 2 * LLAMA8_LAYER + 128_256 * 4096 + 4096
    assert step.memory["weights"] == 2 * last
    assert step.memory["activations"] == pytest.approx(2 * a + logits, rel=1e-12)
    first = 16 * (2 * LLAMA8_LAYER + 128_256 * 4096) + 2 * 2 * a
    assert step.memory_bytes > first


def test_deepseek_v3_logits_do_not_make_the_last_stage_the_busiest():
    # pp 16 x ep 64 x dp 2 (its own layout), 16 micro-batches of one 4096-token sequence:
    # the last stage adds 2 x 4 x 4096 x (7168 + 129,280) = 4.47 GB of logits (main head and
    # the MTP depth's), but the first stage holds the most: the embedding 129,280 x 7168, 3
    # dense layers and one MoE layer (2,910,126,080 dense + 11,274,289,152 / 64 experts a
    # GPU) and keeps 16 micro-batches in flight (1F1B) against the last stage's 1
    step = rl.training_step(
        "DeepSeek-V3", "H100 SXM", 2048, 4096 * 2048, 4096, "pp=16,ep=64,dp=2", microbatches=16
    )
    dense0 = 129_280 * 7168 + 3 * (DSV3_MLA + 3 * 7168 * 18432 + 2 * 7168) + DSV3_MOE_DENSE
    assert dense0 == 2_910_126_080
    assert step.memory["weights"] == 2 * (dense0 + DSV3_EXPERTS / 64)
    plan = _plan("DeepSeek-V3", "pp=16,ep=64,dp=2", 4096, 16)
    assert plan.output_layer_bytes() == 2 * 4 * 4096 * (7168 + 129_280)


def test_interleaved_schedule_keeps_megatron_lms_warm_up_on_every_stage():
    # Megatron-LM's interleaved 1F1B (schedules.py): stage r runs 2 (pp - r - 1) + (v - 1) pp
    # warm-up chunk forwards, then one forward and one backward at a time: it keeps that + 1
    # chunks of 1/v of its layers. MLPerf's GPT-3 layout, pp 8, v 4, 72 micro-batches:
    # stage 0 (14 + 24 + 1) / 4 = 9.75 = Korthikanti's 8 x (1 + 7 / 32); the last stage
    # (0 + 24 + 1) / 4 = 6.25, not 1
    plan = _plan("GPT-3 175B", "tp=4,pp=8,dp=16", 2048, 72, 2)
    plan = type(plan)(**{**plan.__dict__, "virtual_stages": 4})
    held = plan.stage_microbatches_held()
    assert held == [(2 * (7 - r) + 24 + 1) / 4 for r in range(8)]
    assert held[0] == 8 * (1 + 7 / 32) == 9.75 and held[-1] == 6.25
    # with as many micro-batches as stages, m v = 32 chunks cap the warm-up: stages 0-3
    # (warm-up 38, 36, 34, 32, + 1 > 32) run every forward first and keep all 8; stages 4-7
    # keep (30, 28, 26, 24 + 1) / 4 = 7.75, 7.25, 6.75, 6.25 (Megatron-LM since its commit
    # 4295be1a6c, Nov 2024, which dropped the special case that ran all forwards first on
    # every stage when m = pp; an expert re-check played the schedule to the same figures)
    plan8 = type(plan)(**{**plan.__dict__, "microbatches": 8})
    assert plan8.stage_microbatches_held() == [8.0] * 4 + [7.75, 7.25, 6.75, 6.25]
    # plain 1F1B: min(pp - r, m)
    plain = _plan("GPT-3 175B", "tp=4,pp=8,dp=16", 2048, 72, 2)
    assert plain.stage_microbatches_held() == [8.0, 7.0, 6.0, 5.0, 4.0, 3.0, 2.0, 1.0]
