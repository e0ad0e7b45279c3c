"""Models made of blocks: latent attention, sliding windows, shared experts, dense first layers,
and `from_hf_config` reading each family strictly. Every expected value is worked by hand in
the comments (from the published config.json values and the papers), never read from the
code under test."""

import json

import pytest

import roofline as rl
from roofline.model_cli import main as model_cli

# ---------------------------------------------------------------- config.json of each family
# Written from the published config.json files (Hugging Face repositories named in the key);
# keys that change no cost (token ids, rope settings, dtypes) kept where they show the reader
# tolerates them.
LLAMA3_8B = {
    "architectures": ["LlamaForCausalLM"],
    "model_type": "llama",
    "hidden_size": 4096,
    "intermediate_size": 14336,
    "num_hidden_layers": 32,
    "num_attention_heads": 32,
    "num_key_value_heads": 8,
    "vocab_size": 128256,
    "hidden_act": "silu",
    "max_position_embeddings": 8192,
    "rope_theta": 500000.0,
    "rms_norm_eps": 1e-05,
    "attention_bias": False,
    "mlp_bias": False,
    "pretraining_tp": 1,
    "tie_word_embeddings": False,
    "torch_dtype": "bfloat16",
    "bos_token_id": 128000,
    "eos_token_id": 128001,
}
MISTRAL_7B = {
    "model_type": "mistral",
    "hidden_size": 4096,
    "intermediate_size": 14336,
    "num_hidden_layers": 32,
    "num_attention_heads": 32,
    "num_key_value_heads": 8,
    "vocab_size": 32000,
    "hidden_act": "silu",
    "max_position_embeddings": 32768,
    "sliding_window": 4096,
    "tie_word_embeddings": False,
}
MIXTRAL = {
    **MISTRAL_7B,
    "model_type": "mixtral",
    "sliding_window": None,
    "num_local_experts": 8,
    "num_experts_per_tok": 2,
    "router_aux_loss_coef": 0.02,
    "output_router_logits": False,
}
QWEN25_7B = {
    "model_type": "qwen2",
    "hidden_size": 3584,
    "intermediate_size": 18944,
    "num_hidden_layers": 28,
    "num_attention_heads": 28,
    "num_key_value_heads": 4,
    "vocab_size": 152064,
    "max_position_embeddings": 131072,
    "sliding_window": 131072,
    "use_sliding_window": False,
    "max_window_layers": 28,
    "tie_word_embeddings": False,
}
QWEN15_MOE = {
    "model_type": "qwen2_moe",
    "hidden_size": 2048,
    "intermediate_size": 5632,
    "moe_intermediate_size": 1408,
    "shared_expert_intermediate_size": 5632,
    "num_experts": 60,
    "num_experts_per_tok": 4,
    "decoder_sparse_step": 1,
    "norm_topk_prob": False,
    "num_hidden_layers": 24,
    "num_attention_heads": 16,
    "num_key_value_heads": 16,
    "vocab_size": 151936,
    "use_sliding_window": False,
    "sliding_window": 32768,
    "max_window_layers": 21,
    "tie_word_embeddings": False,
}
QWEN3_MOE = {
    "model_type": "qwen3_moe",
    "hidden_size": 2048,
    "intermediate_size": 6144,
    "moe_intermediate_size": 768,
    "num_experts": 128,
    "num_experts_per_tok": 8,
    "decoder_sparse_step": 1,
    "mlp_only_layers": [],
    "norm_topk_prob": True,
    "num_hidden_layers": 48,
    "num_attention_heads": 32,
    "num_key_value_heads": 4,
    "head_dim": 128,
    "vocab_size": 151936,
    "use_sliding_window": False,
    "sliding_window": None,
    "max_window_layers": 48,
    "tie_word_embeddings": False,
}
QWEN3_8B = {
    "model_type": "qwen3",
    "hidden_size": 4096,
    "intermediate_size": 12288,
    "num_hidden_layers": 36,
    "num_attention_heads": 32,
    "num_key_value_heads": 8,
    "head_dim": 128,
    "vocab_size": 151936,
    "max_position_embeddings": 40960,
    "use_sliding_window": False,
    "sliding_window": None,
    "max_window_layers": 36,
    "attention_bias": False,
    "tie_word_embeddings": False,
}
GEMMA2_9B = {
    "model_type": "gemma2",
    "hidden_activation": "gelu_pytorch_tanh",
    "hidden_size": 3584,
    "intermediate_size": 14336,
    "num_hidden_layers": 42,
    "num_attention_heads": 16,
    "num_key_value_heads": 8,
    "head_dim": 256,
    "vocab_size": 256000,
    "sliding_window": 4096,
    "max_position_embeddings": 8192,
    "query_pre_attn_scalar": 256,
    "attn_logit_softcapping": 50.0,
    "final_logit_softcapping": 30.0,
    "cache_implementation": "hybrid",
}
GEMMA3_27B = {  # the multimodal config.json: the language model sits in text_config
    "model_type": "gemma3",
    "architectures": ["Gemma3ForConditionalGeneration"],
    "mm_tokens_per_image": 256,
    "text_config": {
        "model_type": "gemma3_text",
        "hidden_size": 5376,
        "intermediate_size": 21504,
        "num_hidden_layers": 62,
        "num_attention_heads": 32,
        "num_key_value_heads": 16,
        "head_dim": 128,
        "vocab_size": 262208,
        "sliding_window": 1024,
        "sliding_window_pattern": 6,
        "rope_local_base_freq": 10000.0,
        "query_pre_attn_scalar": 168,
        "max_position_embeddings": 131072,
    },
    "vision_config": {"model_type": "siglip_vision_model", "hidden_size": 1152},
}
DEEPSEEK_V3 = {
    "model_type": "deepseek_v3",
    "hidden_act": "silu",
    "hidden_size": 7168,
    "intermediate_size": 18432,
    "moe_intermediate_size": 2048,
    "num_hidden_layers": 61,
    "num_attention_heads": 128,
    "num_key_value_heads": 128,
    "n_routed_experts": 256,
    "n_shared_experts": 1,
    "num_experts_per_tok": 8,
    "first_k_dense_replace": 3,
    "moe_layer_freq": 1,
    "n_group": 8,
    "topk_group": 4,
    "topk_method": "noaux_tc",
    "scoring_func": "sigmoid",
    "routed_scaling_factor": 2.5,
    "norm_topk_prob": True,
    "seq_aux": True,
    "aux_loss_alpha": 0.001,
    "ep_size": 1,
    "q_lora_rank": 1536,
    "kv_lora_rank": 512,
    "qk_nope_head_dim": 128,
    "qk_rope_head_dim": 64,
    "v_head_dim": 128,
    "num_nextn_predict_layers": 1,
    "vocab_size": 129280,
    "max_position_embeddings": 163840,
    "tie_word_embeddings": False,
    "quantization_config": {"quant_method": "fp8", "fmt": "e4m3"},
}
DEEPSEEK_V2 = {
    **DEEPSEEK_V3,
    "model_type": "deepseek_v2",
    "hidden_size": 5120,
    "intermediate_size": 12288,
    "moe_intermediate_size": 1536,
    "num_hidden_layers": 60,
    "n_routed_experts": 160,
    "n_shared_experts": 2,
    "num_experts_per_tok": 6,
    "first_k_dense_replace": 1,
    "topk_method": "group_limited_greedy",
    "topk_group": 3,
    "vocab_size": 102400,
}
for _key in ("num_nextn_predict_layers", "quantization_config", "seq_aux"):
    DEEPSEEK_V2.pop(_key)


# ---------------------------------------------------------------- DeepSeek-V3 by hand
# Latent attention per layer (D = 7168, H = 128, d_nope = 128, d_rope = 64, d_v = 128):
#   Q down 7168 x 1536 = 11,010,048; Q up 1536 x 128 x 192 = 37,748,736;
#   KV down 7168 x (512 + 64) = 4,128,768; KV up 512 x 128 x (128 + 128) = 16,777,216;
#   O 128 x 128 x 7168 = 117,440,512; sum 187,105,280; latent norms 1536 + 512.
DSV3_ATTN = 7168 * 1536 + 1536 * 128 * 192 + 7168 * 576 + 512 * 128 * 256 + 128 * 128 * 7168
assert DSV3_ATTN == 187_105_280
DSV3_EXPERT = 3 * 7168 * 2048  # 44,040,192 (gated: up, gate, down)
DSV3_ROUTER = 7168 * 256
DSV3_DENSE = 3 * 7168 * 18432  # 396,361,728
DSV3_NORMS = (2 * 61 + 1) * 7168 + 61 * (1536 + 512)
DSV3_TABLES = 2 * 129280 * 7168  # untied embedding and output head
DSV3_TOTAL = (
    61 * DSV3_ATTN
    + 3 * DSV3_DENSE
    + 58 * (256 * DSV3_EXPERT + DSV3_EXPERT + DSV3_ROUTER)  # routed + 1 shared + router
    + DSV3_NORMS
    + DSV3_TABLES
)
DSV3_ACTIVE = DSV3_TOTAL - 58 * (256 - 8) * DSV3_EXPERT


def test_deepseek_v3_by_hand_and_published():
    m = rl.get_model("DeepSeek-V3")
    assert m.params == DSV3_TOTAL == 671_026_404_352
    # the multi-token-prediction module is not in the 671B (README_WEIGHTS.md of
    # deepseek-ai/DeepSeek-V3: "11.5B unique parameters, excluding the shared 0.9B Embedding
    # and 0.9B output Head"): one MoE layer like the last, eh_proj [2 x 7168, 7168], enorm,
    # hnorm and the shared head's norm = 11,610,067,968 (11.51B without eh_proj's 0.10B)
    mtp_layer = DSV3_ATTN + 1536 + 512 + 257 * DSV3_EXPERT + DSV3_ROUTER + 2 * 7168
    assert m.mtp_params == mtp_layer + 2 * 7168 * 7168 + 3 * 7168 == 11_610_067_968
    assert abs(m.mtp_params - 11.5e9) / 11.5e9 < 0.01
    assert abs(m.params - 671e9) / 671e9 < 0.01  # "671B total parameters"
    assert m.active_params == DSV3_ACTIVE
    # "37B activated for each token": DeepSeek's activated counts leave out the input
    # embedding table (a lookup): 37.55B - 0.93B = 36.62B, which rounds to the published 37B
    assert round((DSV3_ACTIVE - 129280 * 7168) / 1e9) == 37
    assert m.expert_params == 58 * 256 * DSV3_EXPERT
    assert [(g.count, type(g.block).__name__) for g in m.blocks()] == [
        (61, "Attention"),
        (3, "MLP"),
        (58, "MLP"),
    ]


def test_deepseek_v3_kv_cache_is_the_latent_not_128_heads():
    # 61 layers x (kv_lora_rank 512 + qk_rope_head_dim 64) x 2 bytes = 70,272 B per token;
    # read as dense 128-head attention it was 2 x 61 x 128 x 56 x 2 = 1,748,992 (issue 31)
    m = rl.ModelConfig.from_hf_config(DEEPSEEK_V3)
    assert m.kv_cache_bytes_per_token("bf16") == 61 * (512 + 64) * 2 == 70_272
    assert m.kv_cache_bytes(4096, "fp8") == 4096 * 61 * 576 * 1
    assert m.kv_cache_heads == 1
    assert m == rl.get_model("DeepSeek-V3").with_changes(name="deepseek_v3")


def test_deepseek_v3_attention_flops_count_the_latent_head_sizes():
    m = rl.get_model("DeepSeek-V3")
    # scores over d_nope + d_rope = 192, values over d_v = 128: 2 x 128 x (192 + 128) = 81,920
    # FLOPs per key per layer; 61 layers; against 4096 keys (no mask)
    assert m.attention_flops_per_token(4096, causal=False) == 61 * 81_920 * 4096
    # causal over a 4096-token sequence: 2048 keys on average
    assert m.attention_flops_per_token(4096, causal=True) == 61 * 81_920 * 2048
    # decode against the cached latent (absorbed form): scores over 512 + 64, values over 512
    # 2 x 128 x (576 + 512) = 278,528 per key per layer
    assert m.attention_flops_per_token(4096, False, from_cache=True) == 61 * 278_528 * 4096
    # the down- and up-projections are matmuls each token goes through: 2 x weights
    attn = m.blocks()[0].block
    assert attn.matmul_params == DSV3_ATTN
    assert attn.flops_per_token(4096, causal=False) == 2 * DSV3_ATTN + 81_920 * 4096


def test_deepseek_v3_training_flops_per_token():
    # N = active matmul weights = 61 attention + 3 dense + 58 x (9 experts + router) + head
    N = 61 * DSV3_ATTN + 3 * DSV3_DENSE + 58 * (9 * DSV3_EXPERT + DSV3_ROUTER) + 129280 * 7168
    assert rl.get_model("DeepSeek-V3").matmul_params == N == 36_624_596_992
    # 6 N + 3 x forward attention (causal, seq 4096: 61 x 81,920 x 2048)
    main = 6 * N + 3 * 61 * 81_920 * 2048
    # + the multi-token-prediction depth (report section 2.2): one more MoE layer, the
    # projection [2 x 7168, 7168] and the shared output head once more
    mtp = 6 * (DSV3_ATTN + 9 * DSV3_EXPERT + DSV3_ROUTER) + 3 * 81_920 * 2048
    mtp += 6 * (2 * 7168 * 7168 + 129280 * 7168)
    assert rl.mtp_training_flops_per_token("DeepSeek-V3", 4096, causal=True) == mtp
    assert rl.training_flops_per_token("DeepSeek-V3", 4096, causal=True) == main + mtp
    # main: 6 x 36,624,596,992 + 3 x 61 x 81,920 x 2048 = 250,449,887,232; MTP: 6 x
    # 585,302,016 + 503,316,480 + 6 x 1,029,439,488 = 10,191,765,504: 4.07 % more work
    assert (main, mtp) == (250_449_887_232, 10_191_765_504)
    # without attention (mfu(..., attention=False)): 6 x (N + 585,302,016 + 102,760,448
    # + 926,679,040), the MTP layer's attention core left out too
    no_attn = 6 * (N + 585_302_016 + 102_760_448 + 926_679_040)
    assert rl.training_flops_per_token("DeepSeek-V3", 4096, attention=False) == no_attn


def test_deepseek_v2_by_hand_and_published():
    # attention: 5120 x 1536 + 1536 x 128 x 192 + 5120 x 576 + 512 x 128 x 256 + 16384 x 5120
    attn = 5120 * 1536 + 1536 * 128 * 192 + 5120 * 576 + 512 * 128 * 256 + 16384 * 5120
    expert = 3 * 5120 * 1536
    total = (
        60 * (attn + 1536 + 512)
        + 3 * 5120 * 12288  # one dense first layer
        + 59 * (162 * expert + 160 * 5120)  # 160 routed + 2 shared experts, router
        + (2 * 60 + 1) * 5120
        + 2 * 102400 * 5120
    )
    m = rl.ModelConfig.from_hf_config(DEEPSEEK_V2)
    assert m.params == total == rl.get_model("DeepSeek-V2").params
    assert abs(total - 236e9) / 236e9 < 0.01  # "236B total parameters"
    active = total - 59 * (160 - 6) * expert
    assert m.active_params == active
    assert round((active - 102400 * 5120) / 1e9) == 21  # "21B activated", table excluded


# ---------------------------------------------------------------- sliding windows
def test_mistral_sliding_window_caps_cache_and_attention():
    m = rl.ModelConfig.from_hf_config(MISTRAL_7B)
    assert (m.sliding_window, m.sliding_layers) == (4096, 32)
    # 32 x 2 x 8 x 128 x 2 bytes = 131,072 B per cached token; at most 4096 tokens cached
    assert m.kv_cache_bytes(2048) == 2048 * 131_072
    assert m.kv_cache_bytes(32768) == 4096 * 131_072
    # causal over 8192 tokens: query i sees min(i, 4096) keys, on average
    # 4096 - 4096^2 / (2 x 8192) = 3072; 4 x 32 heads x 128 x 3072 per layer
    assert m.attention_flops_per_token(8192, causal=True) == 32 * 4 * 4096 * 3072
    assert m.attention_flops_per_token(2048, causal=True) == 32 * 4 * 4096 * 1024
    # 32 x (2 x 4096^2 + 2 x 4096 x 1024 + 3 x 4096 x 14336 + 2 x 4096) + 2 x 32000 x 4096
    # + 4096 = 7,241,732,096: Mistral AI's "7.3B" (0.8 % away)
    by_hand = 32 * (2 * 4096**2 + 2 * 4096 * 1024 + 3 * 4096 * 14336 + 8192) + 2 * 32000 * 4096
    assert m.params == by_hand + 4096 == rl.get_model("Mistral 7B").params
    assert abs(m.params - 7.3e9) / 7.3e9 < 0.01
    with pytest.raises(ValueError, match="pass context="):
        m.kv_cache_bytes_per_token()
    assert m.kv_cache_bytes_per_token(context=8192) == 131_072 / 2


def test_gemma2_alternates_sliding_and_global_layers():
    m = rl.ModelConfig.from_hf_config(GEMMA2_9B)
    assert (m.sliding_window, m.sliding_layers, m.tied_embeddings) == (4096, 21, True)
    # per layer and token 2 x 8 x 256 x 2 = 8192 B; at 8192 tokens 21 layers keep 8192
    # tokens and 21 keep 4096
    assert m.kv_cache_bytes(8192) == 21 * 8192 * 8192 + 21 * 4096 * 8192
    # 42 x (Q, O 3584 x 4096 + K, V 3584 x 2048 + 3 x 3584 x 14336 + 4 norms: Gemma 2 norms
    # before and after attention and MLP) + 256000 x 3584 + 3584 = 9,242,007,040: the
    # model card's 9.24B
    layer = 2 * 3584 * 4096 + 2 * 3584 * 2048 + 3 * 3584 * 14336 + 4 * 3584
    assert m.params == 42 * layer + 256000 * 3584 + 3584
    assert abs(m.params - 9.24e9) / 9.24e9 < 0.01


def test_gemma2_27b_against_its_safetensors_total():
    m = rl.get_model("Gemma 2 27B")
    # the checkpoint holds 27,227,128,320 parameters: 46 x (2 x 4608 x 4096 + 2 x 4608 x 2048
    # + 3 x 4608 x 36864 + 4 norms of 4608) + 256000 x 4608 (tied) + 4608, exactly
    layer = 2 * 4608 * 4096 + 2 * 4608 * 2048 + 3 * 4608 * 36864 + 4 * 4608
    assert m.params == 46 * layer + 256000 * 4608 + 4608 == 27_227_128_320
    assert m.kv_cache_bytes(8192) == 23 * 8192 * 8192 + 23 * 4096 * 8192


def test_gemma3_reads_text_config_and_the_5_to_1_pattern():
    m = rl.ModelConfig.from_hf_config(GEMMA3_27B)
    # every 6th layer global: 62 // 6 = 10 global, 52 sliding (window 1024)
    assert (m.sliding_window, m.sliding_layers, m.vocab) == (1024, 52, 262208)
    assert m.name == "gemma3 (language model only)"  # the vision encoder is not counted
    # per layer and token 2 x 16 x 128 x 2 = 8192 B; at 32768 tokens
    assert m.kv_cache_bytes(32768) == 10 * 32768 * 8192 + 52 * 1024 * 8192
    # Gemma 3 report, Table 1: 27B has 25,600M non-embedding parameters;
    # 62 x (2 x 5376 x 4096 + 2 x 5376 x 2048 + 3 x 5376 x 21504) = 25,598,361,600
    non_embedding = 62 * (2 * 5376 * 4096 + 2 * 5376 * 2048 + 3 * 5376 * 21504)
    # + q and k norms of head_dim 128 in each layer (Gemma 3's q_norm, k_norm)
    assert m.params - m.embedding_params - m.norm_params == non_embedding + 62 * 2 * 128
    assert m.norm_params == (4 * 62 + 1) * 5376  # 4 norms per layer + the final one
    assert abs(non_embedding - 25.6e9) / 25.6e9 < 0.01
    # newer transformers write layer_types instead of the pattern: same count
    types = ["sliding_attention"] * 5 + ["full_attention"]
    text = {**GEMMA3_27B["text_config"], "layer_types": (types * 11)[:62]}
    assert rl.ModelConfig.from_hf_config(text).sliding_layers == 52
    # Google's own gemma-3 text_config often has neither: transformers' default pattern is 6,
    # so still 52 sliding and 10 global (not all 62 sliding, which would drop the global
    # layers' long-context cache)
    bare = {k: v for k, v in GEMMA3_27B["text_config"].items() if k != "sliding_window_pattern"}
    assert rl.ModelConfig.from_hf_config(bare).sliding_layers == 52


# ---------------------------------------------------------------- Qwen
def test_qwen25_sliding_window_off_is_no_window():
    m = rl.ModelConfig.from_hf_config(QWEN25_7B)
    assert m.sliding_window is None and m.kv_heads == 4
    # 28 x (2 x 3584^2 + 2 x 3584 x 512 + 3 x 3584 x 18944 + 2 x 3584 + q, k, v biases
    # 3584 + 2 x 512) + 2 x 152064 x 3584 + 3584 = 7,615,616,512: the card's 7.61B
    layer = 2 * 3584**2 + 2 * 3584 * 512 + 3 * 3584 * 18944 + 2 * 3584 + 3584 + 2 * 512
    assert m.params == 28 * layer + 2 * 152064 * 3584 + 3584
    assert abs(m.params - 7.61e9) / 7.61e9 < 0.01
    on = {**QWEN25_7B, "use_sliding_window": True, "max_window_layers": 20}
    assert rl.ModelConfig.from_hf_config(on).sliding_layers == 8  # layers 20..27 slide


def test_qwen3_dense():
    m = rl.ModelConfig.from_hf_config(QWEN3_8B)
    # 36 x (2 x 4096^2 + 2 x 4096 x 1024 + 3 x 4096 x 12288 + 2 x 4096) + 2 x 151936 x 4096
    # + 4096 + 36 x q/k norms of 128 = 8,190,735,360: Qwen3-8B's 8.2B
    layer = 2 * 4096**2 + 2 * 4096 * 1024 + 3 * 4096 * 12288 + 2 * 4096 + 2 * 128
    assert m.params == 36 * layer + 2 * 151936 * 4096 + 4096
    assert abs(m.params - 8.2e9) / 8.2e9 < 0.01
    assert m.kv_cache_bytes_per_token("bf16") == 36 * 2 * 8 * 128 * 2


def test_qwen_moe_shared_expert_and_qwen3_moe():
    m = rl.ModelConfig.from_hf_config(QWEN15_MOE)
    # per layer: attention 4 x 2048^2, 60 experts of 3 x 2048 x 1408, one shared expert of
    # 3 x 2048 x 5632, router 2048 x 60, 2 norms; untied 151936 x 2048 tables; q, k, v biases
    # 3 x 2048 (16 heads of 128; the shared expert's [2048, 1] gate is not counted)
    attn, expert, shared = 4 * 2048**2 + 3 * 2048, 3 * 2048 * 1408, 3 * 2048 * 5632
    rest = 2048 * 60 + 2 * 2048
    tables = 2 * 151936 * 2048 + 2048
    assert m.params == 24 * (attn + 60 * expert + shared + rest) + tables
    assert m.active_params == 24 * (attn + 4 * expert + shared + rest) + tables
    assert abs(m.params - 14.3e9) / 14.3e9 < 0.01  # Qwen1.5-MoE-A2.7B: 14.3B total
    assert abs(m.active_params - 2.7e9) / 2.7e9 < 0.01  # and 2.7B activated
    q = rl.ModelConfig.from_hf_config(QWEN3_MOE)
    attn = 2 * 2048 * 4096 + 2 * 2048 * 512
    expert = 3 * 2048 * 768
    # + q/k norms of 128 in each of the 48 layers
    total = 48 * (attn + 128 * expert + 2048 * 128 + 2 * 2048 + 2 * 128)
    total += 2 * 151936 * 2048 + 2048
    assert q.params == total
    assert abs(total - 30.5e9) / 30.5e9 < 0.01  # Qwen3-30B-A3B: 30.5B total


# ---------------------------------------------------------------- strictness
@pytest.mark.parametrize(
    "config, words",
    [
        # Llama 4 interleaves MoE and dense layers
        ({**LLAMA3_8B, "interleave_moe_layer_step": 2}, "'interleave_moe_layer_step'"),
        # a hybrid linear-attention model (Qwen3-Next style)
        ({**LLAMA3_8B, "linear_num_value_heads": 32}, "'linear_num_value_heads'"),
        # an expert count under a name this reader does not know
        ({**LLAMA3_8B, "moe_num_experts": 64}, "'moe_num_experts'"),
        ({**DEEPSEEK_V3, "moe_layer_freq": 2}, "moe_layer_freq = 2"),
        ({**QWEN15_MOE, "decoder_sparse_step": 2}, "decoder_sparse_step = 2"),
        ({**GEMMA2_9B, "layer_types": ["chunked_attention"] * 42}, "chunked_attention"),
        (
            {k: v for k, v in DEEPSEEK_V3.items() if k != "qk_nope_head_dim"},
            "no 'qk_nope_head_dim'",
        ),
    ],
)
def test_from_hf_config_refuses_what_it_cannot_count(config, words):
    with pytest.raises(ValueError, match=words):
        rl.ModelConfig.from_hf_config(config)


def test_block_fields_are_validated():
    base = dict(layers=2, d_model=64, heads=8, d_ff=256, vocab=1000)
    with pytest.raises(ValueError, match="give kv_lora_rank"):
        rl.ModelConfig(**base, qk_rope_head_dim=64)
    with pytest.raises(ValueError, match="set experts > 1"):
        rl.ModelConfig(**base, shared_d_ff=64)
    with pytest.raises(ValueError, match="needs sliding_window"):
        rl.ModelConfig(**base, sliding_layers=1)
    with pytest.raises(ValueError, match="cannot exceed layers"):
        rl.ModelConfig(**base, experts=4, dense_layers=3)


# ---------------------------------------------------------------- serving and the CLI
def test_deepseek_v3_serving_keeps_the_whole_latent_on_every_chip():
    # fp8 weights on 8 H200: 671,026,404,352 B / 8 per chip; the bf16 latent cache of one
    # 4096-token sequence, 4096 x 70,272 = 287,834,112 B, kept whole on each chip
    est = rl.serving_estimate("DeepSeek-V3", "H200", 8, batch=1, context_len=4096, weights="fp8")
    assert est.memory["weights"] == DSV3_TOTAL / 8
    assert est.memory["KV cache"] == 4096 * 70_272
    assert est.fits
    bf16 = rl.serving_estimate("DeepSeek-V3", "H100", 8, batch=1, context_len=4096)
    assert not bf16.fits  # 1.34 TB of bf16 weights on 640 GB


FAMILIES = {
    "llama": (LLAMA3_8B, "grouped-query"),
    "mistral": (MISTRAL_7B, "sliding window 4,096"),
    "mixtral": (MIXTRAL, "2 of 8 gated experts"),
    "qwen2": (QWEN25_7B, "grouped-query"),
    "qwen2_moe": (QWEN15_MOE, "shared 5632"),
    "qwen3": (QWEN3_8B, "grouped-query, 32 heads of 128, 8 KV heads"),
    "qwen3_moe": (QWEN3_MOE, "8 of 128 gated experts"),
    "gemma2": (GEMMA2_9B, "sliding window 4,096"),
    "gemma3": (GEMMA3_27B, "sliding window 1,024"),
    "deepseek_v2": (DEEPSEEK_V2, "6 of 160 gated experts of d_ff 1536 + shared 3072"),
    "deepseek_v3": (DEEPSEEK_V3, "latent 512 + RoPE key 64"),
}


@pytest.mark.parametrize("family", list(FAMILIES))
def test_cli_reads_every_family(family, tmp_path, capsys):
    config, words = FAMILIES[family]
    path = tmp_path / family / "config.json"
    path.parent.mkdir()
    path.write_text(json.dumps(config))
    out_json = tmp_path / "figures.json"
    assert model_cli([str(path), "--json", str(out_json)]) == 0
    out = capsys.readouterr().out
    assert words in out and f"Model {family}" in out
    figures = json.loads(out_json.read_text())
    model = rl.ModelConfig.from_hf_config(config)
    assert figures["params"] == model.params
    # serving it on 4 H100: the KV cache of one 4096-token sequence is the blocks' own
    serve = [str(path), "--chip", "H100", "--chips", "4", "--serve", "--json", str(out_json)]
    assert model_cli(serve) == 0
    assert json.loads(out_json.read_text())["kv_cache_bytes"] == model.kv_cache_bytes(4096)


def test_cli_says_deepseek_v3_does_not_fit_on_8_h100(tmp_path, capsys):
    path = tmp_path / "config.json"
    path.write_text(json.dumps(DEEPSEEK_V3))
    argv = [str(path), "--chip", "H100", "--chips", "8", "--serve", "--context", "4096"]
    assert model_cli(argv) == 0
    out = capsys.readouterr().out
    assert "DOES NOT FIT" in out and "256" in out


def test_mistral_decode_reads_at_most_the_window():
    # decode, batch 1, context 32768 on one H100: the cache read is 4096 tokens x 131,072 B
    # (every layer capped at its 4096-token window), not 32768 x 131,072
    est = rl.serving_estimate("Mistral 7B", "H100", 1, batch=1, context_len=32768)
    hbm = rl.get_chip("H100").hbm_bytes_per_s
    assert est.hbm_parts["KV cache"] * hbm == pytest.approx(4096 * 131_072, rel=1e-12)
    assert est.memory["KV cache"] == 4096 * 131_072
    # decode attention: each new token against min(32768, 4096) keys, 4 x 4096 x 4096 per layer
    # N = 32 x (2 x 4096^2 + 2 x 4096 x 1024 + 3 x 4096 x 14336) + 32000 x 4096 (the head)
    N = 32 * (2 * 4096**2 + 2 * 4096 * 1024 + 3 * 4096 * 14336) + 32000 * 4096
    per_token = 2 * N + 32 * 4 * 4096 * 4096  # 2 N + attention
    peak = rl.get_chip("H100").peak_flops_per_s("bf16")
    assert est.times["math"] * peak == pytest.approx(per_token, rel=1e-12)


def test_gemma2_training_flops_cap_the_local_layers():
    # Gemma 2 27B at seq 8192, causal: 23 global layers see 8192 / 2 = 4096 keys on average,
    # 23 local layers 4096 - 4096^2 / (2 x 8192) = 3072; 4 x 32 x 128 = 16,384 per key
    m = rl.get_model("Gemma 2 27B")
    attn = 16_384 * (23 * 4096 + 23 * 3072)
    assert m.attention_flops_per_token(8192, causal=True) == attn
    expected = 6 * m.matmul_params + 3 * attn
    assert rl.training_flops_per_token(m, 8192, causal=True) == expected


def test_block_fields_round_trip_through_json(tmp_path, capsys):
    m = rl.get_model("DeepSeek-V3")
    data = json.loads(json.dumps(m.to_dict()))
    assert rl.ModelConfig.from_dict(data) == m
    path = tmp_path / "dsv3_fields.json"
    path.write_text(json.dumps(data))
    assert model_cli([str(path)]) == 0
    assert "671 billion" in capsys.readouterr().out


def test_transformer_whole_model_functions_take_a_model_config():
    import roofline.transformer as tf

    # the same Llama 3 8B either way (one model type): every parameter, the (2 x 32 + 1) x
    # 4096 norm scales included; the KV cache is 2 x 32 x 8 x 128 x 2 = 131,072 B per token
    assert tf.weight_bytes("Llama 3 8B") == tf.weight_bytes(tf.LLAMA_8B_MODEL)
    assert tf.weight_bytes("Llama 3 8B") == 2 * 8_030_261_248
    # built from one layer's shape, it keeps ModelConfig's default dropout flag (Korthikanti's
    # masks: training memory only; the serving functions that use it never read it)
    llama = rl.get_model("Llama 3 8B").with_changes(name="Llama-style 8B", trains_with_dropout=True)
    assert tf.LLAMA_8B_MODEL == llama
    assert tf.layer_shape("Llama 3 8B").weights_per_layer == 218_103_808
    assert tf.kv_cache_bytes(rl.get_model("Llama 3 8B"), 4096) == 4096 * 131_072
    assert tf.max_batch("Llama 3 8B", 4096, "H100") == tf.max_batch(tf.LLAMA_8B_MODEL, 4096, "H100")
    for name, words in (
        ("DeepSeek-V3", "mixture of experts and latent attention"),
        ("Mistral 7B", "sliding-window layers"),
        ("GPT-3", "ungated MLP"),
    ):
        with pytest.raises(ValueError, match=words):
            tf.weight_bytes(name)
    with pytest.raises(TypeError, match="ModelConfig such as"):
        tf.weight_bytes(tf.LLAMA_8B)


def test_each_block_answers_its_own_cost():
    m = rl.get_model("DeepSeek-V3")
    attn, dense, moe = (g.block for g in m.blocks())
    # attention: 187,105,280 projection weights + 2,048 latent norm scales, bf16
    assert attn.weight_bytes("bf16") == 2 * (DSV3_ATTN + 1536 + 512)
    assert attn.kv_cache_bytes_per_token("bf16") == (512 + 64) * 2
    assert attn.kind == "multi-head latent"
    # dense MLP: 396,361,728 weights, 2 FLOPs each per token
    assert dense.flops_per_token() == 2 * DSV3_DENSE
    assert dense.kv_cache_bytes_per_token() == 0
    # MoE MLP: a token goes through 8 routed + 1 shared expert and the router
    assert moe.flops_per_token() == 2 * (9 * DSV3_EXPERT + DSV3_ROUTER)
    assert moe.weight_bytes("fp8") == 257 * DSV3_EXPERT + DSV3_ROUTER
    # the model is the sum of its blocks, norms and tables
    blocks = sum(g.count * g.block.params for g in m.blocks())
    assert m.params == blocks + m.norm_params + m.embedding_params
    gqa = rl.get_model("Llama 3 70B").blocks()[0].block
    assert (gqa.kind, gqa.kv_cache_bytes_per_token("bf16")) == ("grouped-query", 2 * 8 * 128 * 2)
    assert rl.get_model("PaLM").blocks()[0].block.kind == "multi-query"
    assert rl.get_model("GPT-3").blocks()[0].block.kind == "multi-head"


def test_python_m_roofline_model_reads_a_deepseek_config(tmp_path):
    import subprocess
    import sys

    folder = tmp_path / "DeepSeek-V3"
    folder.mkdir()
    (folder / "config.json").write_text(json.dumps(DEEPSEEK_V3))
    run = subprocess.run(
        [sys.executable, "-m", "roofline", "model", str(folder / "config.json")],
        capture_output=True,
        text=True,
    )
    assert run.returncode == 0, run.stderr
    # 671,026,404,352 parameters; 61 x 576 x 2 = 70,272 bytes of cache per token
    assert "671 billion" in run.stdout and "70,272 bytes per token" in run.stdout
    assert "8 of 256 gated experts of d_ff 2048 + shared 2048" in run.stdout
    assert "MLP (3 layers)         dense gated, d_ff 18432" in run.stdout


# Every registered model's published total (the figure its source states), each also derived
# by hand in a test above or in tests/test_models.py; a model added to the catalog without
# its figure here fails the test below.
PUBLISHED_TOTALS = {
    "Llama 3 8B": 8.03e9,  # model card
    "Llama 3 70B": 70.6e9,  # model card
    "Llama 2 70B": 69e9,  # 80 x 855,654,400 + 2 x 32000 x 8192 + 8192 = 68,976,648,192
    "Llama 3.1 405B": 405e9,
    "Mixtral 8x7B": 46.7e9,
    "GPT-3 175B": 175.0e9,
    "PaLM 540B": 540.35e9,
    "Megatron 1T": 1008e9,
    "Megatron 145.6B": 145.6e9,
    "Mistral 7B": 7.3e9,
    "Gemma 2 27B": 27.2e9,
    "DeepSeek-V3": 671e9,
    "DeepSeek-V2": 236e9,
}


def test_every_catalog_model_is_within_1_percent_of_its_published_total():
    assert set(PUBLISHED_TOTALS) == set(rl.models.MODELS)
    for name, published in PUBLISHED_TOTALS.items():
        params = rl.get_model(name).params
        assert abs(params - published) / published < 0.01, (name, params)
    layer = 2 * 8192**2 + 2 * 8192 * 1024 + 3 * 8192 * 28672 + 2 * 8192  # Llama 2 70B
    assert rl.get_model("Llama 2 70B").params == 80 * layer + 2 * 32000 * 8192 + 8192


# ---------------------------------------------------------------- layers in order (issue 31)
def test_layers_in_order_deepseek_dense_first_gemma_interleaved_qwen_full_first():
    ds = rl.get_model("DeepSeek-V3").layers_in_order()
    # first_k_dense_replace 3: layers 0-2 dense (d_ff 18432), 3-60 mixture of experts
    assert len(ds) == 61
    assert [layer.mlp.is_moe for layer in ds[:4]] == [False, False, False, True]
    # a dense layer: attention + 3 x 7168 x 18432 + 2 norms of 7168
    assert ds[0].params == DSV3_ATTN + 1536 + 512 + DSV3_DENSE + 2 * 7168
    assert ds[60].matmul_params == DSV3_ATTN + 9 * DSV3_EXPERT + DSV3_ROUTER
    # the layers add up to the model: norms of the layers + the final norm, tables
    m = rl.get_model("DeepSeek-V3")
    assert sum(layer.params for layer in ds) + 7168 + DSV3_TABLES == m.params
    # Gemma 2 (transformers: layer i slides when i is even): 42 layers, 21 sliding
    g2 = rl.ModelConfig.from_hf_config(GEMMA2_9B)
    assert [layer.attention.window for layer in g2.layers_in_order()[:4]] == [4096, None] * 2
    # Gemma 3: (i + 1) % 6 == 0 is global: layers 5, 11, ..., 59 (10 of 62)
    g3 = rl.ModelConfig.from_hf_config(GEMMA3_27B).layers_in_order()
    assert [i for i, layer in enumerate(g3) if layer.attention.window is None] == list(
        range(5, 62, 6)
    )
    # the same from layer_types (5 sliding then 1 full, repeated)
    types = (["sliding_attention"] * 5 + ["full_attention"]) * 11
    text = {**GEMMA3_27B["text_config"], "layer_types": types[:62]}
    assert rl.ModelConfig.from_hf_config(text).global_every == 6
    # Qwen2 with max_window_layers 20: layers 0-19 full, 20-27 slide
    on = {**QWEN25_7B, "use_sliding_window": True, "max_window_layers": 20}
    qwen = rl.ModelConfig.from_hf_config(on).layers_in_order()
    assert [layer.attention.window is None for layer in qwen] == [True] * 20 + [False] * 8
    # another order (here: the first 4 layers global, then sliding) keeps its counts, and
    # layers_in_order puts the full layers first
    odd = {**GEMMA3_27B["text_config"]}
    odd.pop("sliding_window_pattern")
    odd["layer_types"] = ["full_attention"] * 4 + ["sliding_attention"] * 58
    m = rl.ModelConfig.from_hf_config(odd)
    assert (m.sliding_layers, m.global_every) == (58, None)
    assert [x.attention.window for x in m.layers_in_order()[3:5]] == [None, 1024]
    with pytest.raises(ValueError, match="global_every"):
        rl.ModelConfig(4, 64, 8, 256, 1000, sliding_window=16, sliding_layers=3, global_every=2)


def test_busiest_stage_counts_the_layers_each_stage_holds():
    from roofline.parallelism import _stage_flops_share

    # DeepSeek-V3 on 16 stages, causal, seq 4096, no recomputation. Per layer 6 x matmul
    # weights + 3 x the forward attention 81,920 x 2048 (128 heads x 2 x (192 + 128), 2048
    # keys on average)
    attn = 3 * 81_920 * 2048
    dense = 6 * (DSV3_ATTN + DSV3_DENSE) + attn
    moe = 6 * (DSV3_ATTN + 9 * DSV3_EXPERT + DSV3_ROUTER) + attn
    head = 6 * 129280 * 7168
    mtp = moe + 6 * 2 * 7168 * 7168 + head  # its layer, projection and head pass
    assert dense < moe  # the dense MLP (396.4M) has no router (1.8M): stage 0 is lighter
    # without the MTP module: 61 = 13 x 4 + 3 x 3, stage 0 holds layers 0-3 (3 dense + 1 MoE),
    # stages 1-12 four MoE layers, stage 15 the last 3 MoE layers + the output head
    m = rl.get_model("DeepSeek-V3").with_changes(mtp_layers=0)
    total = 3 * dense + 58 * moe + head
    busiest = max(3 * dense + moe, 4 * moe, 3 * moe + head)
    share = _stage_flops_share(m, 16, "none", 4096, True)
    assert share == pytest.approx(busiest / (total / 16), rel=1e-12)
    # the head (5.56e9 FLOPs per token) outweighs a MoE layer (4.02e9): the last stage is the
    # busiest, 3 MoE layers + the head; the old per-layer average (61 layers alike, dense ones
    # included) gave it 3 x average + head: share 1.12462, now 1.12473
    assert busiest == 3 * moe + head
    assert round(share, 5) == 1.12473
    # with it, 62 units = 14 x 4 + 2 x 3: the last stage holds 2 MoE layers, the MTP depth
    # and the head
    total = 3 * dense + 58 * moe + mtp + head
    share = _stage_flops_share(rl.get_model("DeepSeek-V3"), 16, "none", 4096, True)
    assert share == pytest.approx((2 * moe + mtp + head) / (total / 16), rel=1e-12)
    assert round(share, 3) == 1.460
    # a uniform model is unchanged: GPT-3 on 8 stages, 12 layers + the head on the last
    gpt = rl.get_model("GPT-3")
    layer = 6 * 12 * 12288**2 + 3 * 4 * 12288 * 2048  # causal: 2048 of 4096 keys
    head = 6 * 50257 * 12288
    share = _stage_flops_share(gpt, 8, "none", 4096, True)
    assert share == pytest.approx((12 * layer + head) / ((96 * layer + head) / 8), rel=1e-12)


# ---------------------------------------------------------------- activation memory per block
def test_gpt3_activations_are_korthikanti_exactly():
    gpt = rl.get_model("GPT-3")
    s, b, h, a = 2048, 1, 12288, 96
    # Korthikanti et al. 2022, Table 2: s b h (34 + 5 a s / h) / t with sequence parallelism,
    # s b h (10 + 24 / t + 5 a s / (h t)) without; the fused kernel drops the 5 a s / h term
    for t in (1, 8):
        assert rl.activation_bytes_per_layer(gpt, s, b, t) == s * b * h * 34 / t
        no_sp = rl.activation_bytes_per_layer(gpt, s, b, t, sequence_parallel=False)
        assert no_sp == s * b * h * (10 + 24 / t)
        scores = rl.activation_bytes_per_layer(gpt, s, b, t, fused_attention=False)
        assert scores == pytest.approx(s * b * h * (34 + 5 * a * s / h) / t, rel=1e-15)
        assert rl.activation_bytes_per_layer(gpt, s, b, t, "full") == 2 * s * b * h / t
    # per block: attention 13 h (5 h of it d_model-wide), MLP 21 h (5 h d_model-wide)
    layer = gpt.layers_in_order()[0]
    assert layer.attention.activation_bytes_per_token(s) == 13 * h
    assert layer.mlp.activation_bytes_per_token() == 21 * h


def test_dropout_masks_only_where_a_model_trains_with_dropout():
    # GPT-3 keeps Korthikanti's masks (test above); without dropout a GPT layer loses the
    # mask after attention's output projection (h, 1 byte per element) and after the MLP (h):
    # 34 - 2 = 32 h per token; kept scores lose their mask and the dropout's output
    # (a s x (1 + 2) bytes), keeping the softmax output 2 a s: s b h (32 + 2 a s / h) / t
    gpt = rl.get_model("GPT-3")
    assert gpt.trains_with_dropout
    plain = gpt.with_changes(trains_with_dropout=False)
    s, b, h, a = 2048, 1, 12288, 96
    layer = plain.layers_in_order()[0]
    assert layer.attention.activation_bytes_per_token(s) == 12 * h
    assert layer.mlp.activation_bytes_per_token() == 20 * h
    for t in (1, 8):
        assert rl.activation_bytes_per_layer(plain, s, b, t) == s * b * h * 32 / t
        scores = rl.activation_bytes_per_layer(plain, s, b, t, fused_attention=False)
        assert scores == pytest.approx(s * b * h * (32 + 2 * a * s / h) / t, rel=1e-15)
        # without sequence parallelism the masks were d_model-wide, kept whole: 10 - 2 = 8
        no_sp = rl.activation_bytes_per_layer(plain, s, b, t, sequence_parallel=False)
        assert no_sp == s * b * h * (8 + 24 / t)
    # homework part 4's explicit GPT-layer formula keeps 34 h whatever the model
    gpt_layer = rl.activation_bytes_per_layer(plain, s, b, 8, convention="gpt-layer")
    assert gpt_layer == s * b * h * 34 / 8
    # the catalog: only GPT-3 and Megatron's models train with dropout
    with_dropout = {n for n in rl.list_models() if rl.get_model(n).trains_with_dropout}
    assert with_dropout == {"GPT-3 175B", "Megatron 1T", "Megatron 145.6B"}


@pytest.mark.parametrize(
    "extra, expected",
    [
        ({}, False),  # no dropout key: transformers' default for these families, 0.0
        ({"attention_dropout": 0.0}, False),
        ({"attention_dropout": 0.1}, True),
        ({"attention_dropout": 0.0, "hidden_dropout": 0.1}, True),
        ({"resid_pdrop": 0.1}, True),
    ],
)
def test_from_hf_config_reads_dropout(extra, expected):
    m = rl.ModelConfig.from_hf_config({**LLAMA3_8B, **extra})
    assert m.trains_with_dropout is expected
    # Llama 3 8B's activation bytes per token and layer differ by the masks: 2 x 4096
    masks = 2 * 4096 if expected else 0
    base = rl.ModelConfig.from_hf_config(LLAMA3_8B).layers_in_order()[0]
    assert m.layers_in_order()[0].activation_bytes_per_token(4096) == (
        base.activation_bytes_per_token(4096) + masks
    )


def test_from_hf_config_refuses_a_bad_dropout_rate():
    with pytest.raises(ValueError, match="dropout rate 1.5"):
        rl.ModelConfig.from_hf_config({**LLAMA3_8B, "attention_dropout": 1.5})


def test_deepseek_v3_activations_block_by_block():
    m = rl.get_model("DeepSeek-V3")
    assert not m.trains_with_dropout  # its report lists no dropout; config attention_dropout 0
    D = 7168
    # latent attention per token: d_model-wide 4 D (norm input 2 D, projections' input 2 D;
    # no dropout mask) + query latent before and after its norm 2 x 2 x 1536 + the KV
    # down-projection's output 2 x (512 + 64) + the normalised latent 2 x 512 = 36,992; per
    # head (128): Q and K 2 x 2 x 192, V and the output projection's input 2 x 2 x 128 =
    # 163,840
    attention = 4 * D + 4 * 1536 + 2 * 576 + 2 * 512 + 128 * (4 * 192 + 4 * 128)
    assert attention == 36_992 + 163_840 == 200_832
    # dense MLP (layers 0-2): 4 D + gate, up, product 3 x 2 x 18432 = 28,672 + 110,592
    dense = 4 * D + 6 * 18432
    assert dense == 139_264
    # MoE MLP: 4 D + router scores 2 x 256 + 8 routed copies of the token 8 x 2 D
    # + (8 routed + 1 shared) x 3 x 2 x 2048 = 143,872 + 110,592 = 254,464
    moe = 4 * D + 2 * 256 + 8 * 2 * D + 9 * 6 * 2048
    assert moe == 254_464
    layers = m.layers_in_order()
    assert layers[0].activation_bytes_per_token(4096) == attention + dense == 340_096
    assert layers[3].activation_bytes_per_token(4096) == attention + moe == 455_296
    # averaged over the 61 layers, for 4096 tokens on one chip; was Korthikanti's GPT layer,
    # 34 x 7168 x 4096 = 998,244,352
    average = 4096 * (3 * (attention + dense) + 58 * (attention + moe)) / 61
    assert rl.activation_bytes_per_layer(m, 4096) == pytest.approx(average, rel=1e-15)
    # (3 x 340,096 + 58 x 455,296) / 61 = 27,427,456 / 61 = 449,630.4 B per token, x 4096
    assert round(average / 1e9, 3) == 1.842
    # a pipeline stage's own layers: the first four (3 dense, 1 MoE) with tp = 8
    first = rl.activation_bytes_per_layer(m, 4096, 1, 8, layers=layers[:4])
    assert first == pytest.approx(4096 * (3 * (attention + dense) + attention + moe) / 4 / 8)
    # trained with dropout, Korthikanti's masks come back: D bytes after attention and D after
    # the MLP: 200,832 + 7,168 = 208,000 and 254,464 + 7,168 = 261,632 (average 1.900 GB)
    with_dropout = m.with_changes(trains_with_dropout=True).layers_in_order()
    assert with_dropout[3].activation_bytes_per_token(4096) == 208_000 + 261_632


def test_busiest_activation_stage_of_deepseek_v3():
    # DeepSeek-V3 on pp = 16 with 120 micro-batches of one 4096-token sequence: with 1F1B
    # stage i keeps min(16 - i, 120) micro-batches; per token a dense layer keeps
    # 200,832 + 139,264 = 340,096 bytes, a MoE layer 200,832 + 254,464 = 455,296 (above)
    attention = 200_832
    dense, moe = attention + 4 * 7168 + 6 * 18432, attention + 254_464
    stage0 = 16 * (3 * dense + moe)  # 16 x 1,475,584 = 23,609,344
    stage1 = 15 * 4 * moe  # 15 x 1,821,184 = 27,317,760: four MoE layers outweigh stage 0
    assert (stage0, stage1) == (23_609_344, 27_317_760)
    # the old formula: 16 micro-batches x 4 layers x 34 x 7168 x 4096 = 63.9 GB; block by
    # block 4096 x 27,317,760 = 111.9 GB (115.4 GB with Korthikanti's dropout masks)
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
    )
    assert step.memory["activations"] == pytest.approx(4096 * stage1, rel=1e-12)
    assert round(step.memory["activations"] / 1e9, 1) == 111.9


def test_gpt_layer_convention_is_korthikanti_for_every_model():
    # homework part 4 states Korthikanti's GPT-layer formula: 34 s b h / t whatever the blocks
    # (DeepSeek-V3: 34 x 4096 x 7168 = 998,244,352 bytes per layer, as before the blocks)
    ds = rl.activation_bytes_per_layer("DeepSeek-V3", 4096, convention="gpt-layer")
    assert ds == 34 * 4096 * 7168 == 998_244_352
    llama = rl.activation_bytes_per_layer("Llama 3 70B", 8192, 1, 8, convention="gpt-layer")
    assert llama == 34 * 8192 * 8192 / 8
    with pytest.raises(ValueError, match="gpt-layer"):
        rl.activation_bytes_per_layer("GPT-3", 2048, convention="korthikanti")


def test_stage_params_hold_the_mtp_module_on_the_last_stage():
    from roofline.parallelism import _stage_params

    m = rl.get_model("DeepSeek-V3")
    D, V = 7168, 129280
    # one MoE layer (tests/test_layouts.py): 232,996,864 dense + 11,274,289,152 routed; the
    # MTP depth is one more such layer + a projection [2 D, D] + 3 norms of D: 11.61 B
    moe_dense, routed = 232_996_864, 256 * 3 * D * 2048
    mtp = moe_dense + routed + 2 * D * D + 3 * D
    # 232,996,864 + 11,274,289,152 + 102,760,448 + 21,504
    assert mtp == m.mtp_params == 11_610_067_968
    # without a pipeline the one stage holds everything: the 671 B and the MTP module
    ((dense, expert),) = _stage_params(m, 1)
    assert dense + expert == m.params + mtp
    # pp 16: 62 units (61 layers + 1 depth), stages 14 and 15 hold 3; the last holds layers
    # 59 and 60, the MTP depth, the output head V x D and the final norm D
    dense, expert = _stage_params(m, 16)[-1]
    assert dense == 3 * moe_dense + 2 * D * D + 3 * D + V * D + D
    assert expert == 3 * routed
