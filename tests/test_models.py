"""ModelConfig: parameter counts of published models against their published totals, counted by
hand here (never by the code under test), the KV cache, validation and the catalog."""

import json

import pytest

import roofline as rl


def llama_by_hand(L, D, H, Hkv, F, V):
    """Llama-style layer by hand: Q and O are D x D, K and V are D x (Hkv * D/H), three MLP
    matrices D x F, two RMSNorm vectors; untied embedding and head; a final norm."""
    d_h = D // H
    per_layer = 2 * D * D + 2 * D * Hkv * d_h + 3 * D * F + 2 * D
    return L * per_layer + 2 * V * D + D


# (name, hand count, published total, source of the published figure)
PUBLISHED = [
    # Hugging Face model cards: 8.03B, 70.6B, 406B (405,853,388,800 in the safetensors index)
    ("Llama 3 8B", llama_by_hand(32, 4096, 32, 8, 14336, 128256), 8.03e9),
    ("Llama 3 70B", llama_by_hand(80, 8192, 64, 8, 28672, 128256), 70.6e9),
    ("Llama 3.1 405B", llama_by_hand(126, 16384, 128, 8, 53248, 128256), 405e9),
    # GPT-3 paper Table 2.1: 175.0B. By hand: 12 L D^2 (Q, K, V, O = 4 D^2; MLP 2 x 4 D^2)
    # plus one tied V x D table and 2 norms per layer + 1.
    ("GPT-3 175B", 12 * 96 * 12288**2 + 50257 * 12288 + (2 * 96 + 1) * 12288, 175.0e9),
    # PaLM paper: 540.35B. Per layer: Q and O are 18432 x 12288 (48 heads of 256), K and V
    # 18432 x 256 each (multi-query), SwiGLU 3 x 18432 x 73728; one shared 256k x 18432 table.
    (
        "PaLM 540B",
        118 * (2 * 18432 * 12288 + 2 * 18432 * 256 + 3 * 18432 * 73728 + 2 * 18432)
        + 256000 * 18432
        + 18432,
        540.35e9,
    ),
    # Narayanan et al. Table 1: 1008B and 145.6B; their own formula (section 5.1):
    # P = 12 l h^2 (1 + 13/(12 h) + (V + s)/(12 l h)) with s = 2048.
    ("Megatron 1T", 12 * 128 * 25600**2 + 51200 * 25600 + (2 * 128 + 1) * 25600, 1008e9),
    ("Megatron 145.6B", 12 * 80 * 12288**2 + 51200 * 12288 + (2 * 80 + 1) * 12288, 145.6e9),
]


@pytest.mark.parametrize("name, by_hand, published", PUBLISHED, ids=[p[0] for p in PUBLISHED])
def test_params_match_hand_count_and_published_total(name, by_hand, published):
    model = rl.get_model(name)
    assert model.params == by_hand
    assert abs(model.params - published) / published < 0.01


def test_llama_counts_are_exact():
    # the safetensors index totals of the Hugging Face repositories
    assert rl.get_model("Llama 3 8B").params == 8_030_261_248
    assert rl.get_model("Llama 3 70B").params == 70_553_706_496


def test_megatron_counts_agree_with_narayanan_formula():
    for name, L, h in (("Megatron 1T", 128, 25600), ("Megatron 145.6B", 80, 12288)):
        V, s = 51200, 2048
        theirs = 12 * L * h**2 * (1 + 13 / (12 * h) + (V + s) / (12 * L * h))
        # theirs counts biases and position embeddings (which ModelConfig leaves out)
        assert abs(rl.get_model(name).params - theirs) / theirs < 0.001


def test_mixtral_total_and_active():
    # Mistral AI: 46.7B total, 12.9B per token. By hand: attention 2 D^2 + 2 D (8 x 128),
    # 8 experts of 3 D F, a router D x 8, 2 norms; untied 32000 x 4096 tables.
    D, F, L, V = 4096, 14336, 32, 32000
    attn = 2 * D * D + 2 * D * 1024
    total = L * (attn + 8 * 3 * D * F + 8 * D + 2 * D) + 2 * V * D + D
    active = L * (attn + 2 * 3 * D * F + 8 * D + 2 * D) + 2 * V * D + D
    model = rl.get_model("mixtral")
    assert (model.params, model.active_params) == (total, active)
    assert abs(total - 46.7e9) / 46.7e9 < 0.01 and abs(active - 12.9e9) / 12.9e9 < 0.01
    assert model.expert_params == L * 8 * 3 * D * F


def test_matmul_params_leave_out_the_embedding_lookup():
    m = rl.get_model("Llama 3 8B")
    # every layer's matmuls + the output head; not the (untied) input table, not the norms
    assert m.matmul_params == m.params - 128256 * 4096 - (2 * 32 + 1) * 4096
    palm = rl.get_model("PaLM 540B")  # tied: the one table is the output head
    assert palm.matmul_params == 540_354_281_472  # 118 x 4,539,285,504 + 4,718,592,000


def test_kv_cache_bytes_per_token():
    # Llama 3 70B, bf16: 2 (K, V) x 80 layers x 8 KV heads x 128 x 2 bytes = 327,680 B
    assert rl.get_model("Llama 3 70B").kv_cache_bytes_per_token("bf16") == 327_680
    # PaLM 540B multi-query: 2 x 118 x 1 x 256 x 1 byte (int8)
    assert rl.get_model("PaLM 540B").kv_cache_bytes_per_token("int8") == 60_416
    # GPT-3 multi-head: 2 x 96 x 12288 x 2
    assert rl.get_model("GPT-3").kv_cache_bytes_per_token() == 2 * 96 * 12288 * 2


def test_layer_matmul_shapes():
    shapes = {
        m.name: (m.d_in, m.d_out, m.copies, m.active)
        for m in rl.get_model("mixtral").layer_matmuls()
    }
    assert shapes["Q projection"] == (4096, 4096, 1, 1)
    assert shapes["K projection"] == (4096, 1024, 1, 1)
    assert shapes["router"] == (4096, 8, 1, 1)
    assert shapes["MLP gate"] == (4096, 14336, 8, 2)
    assert shapes["MLP down"] == (14336, 4096, 8, 2)
    gpt = [m.name for m in rl.get_model("GPT-3").layer_matmuls()]
    assert "MLP gate" not in gpt and "router" not in gpt


@pytest.mark.parametrize(
    "kwargs, words",
    [
        (dict(layers=0), "layers must be at least 1"),
        (dict(d_model=-8), "d_model must be at least 1"),
        (dict(heads=3), "give head_dim"),
        (dict(kv_heads=3), "kv_heads (3) must divide heads (8)"),
        (dict(experts=4, experts_per_token=5), "cannot exceed experts"),
        (dict(layers=2.5), "whole number"),
        (dict(gated_mlp="yes"), "True or False"),
    ],
)
def test_validation_errors_say_what_is_wrong(kwargs, words):
    base = dict(layers=2, d_model=64, heads=8, d_ff=256, vocab=1000)
    with pytest.raises(
        (ValueError, TypeError), match=words.replace("(", r"\(").replace(")", r"\)")
    ):
        rl.ModelConfig(**{**base, **kwargs})


def test_head_dim_given_lifts_the_divisibility_rule_and_config_is_frozen():
    m = rl.ModelConfig(2, 100, 3, 400, 1000, head_dim=32)
    assert m.attention_width == 96 and m.kv_heads == 3
    with pytest.raises(AttributeError):
        m.layers = 3


def test_from_hf_config_llama_mixtral_qwen(tmp_path):
    llama = {
        "model_type": "llama",
        "hidden_size": 8192,
        "intermediate_size": 28672,
        "num_hidden_layers": 80,
        "num_attention_heads": 64,
        "num_key_value_heads": 8,
        "vocab_size": 128256,
        "hidden_act": "silu",
        "tie_word_embeddings": False,
    }
    folder = tmp_path / "Meta-Llama-3-70B"
    folder.mkdir()
    (folder / "config.json").write_text(json.dumps(llama))
    m = rl.ModelConfig.from_hf_config(folder)
    assert m.params == 70_553_706_496 and m.name == "Meta-Llama-3-70B"
    assert m == rl.get_model("Llama 3 70B").with_changes(name="Meta-Llama-3-70B")
    mixtral = dict(
        llama,
        hidden_size=4096,
        intermediate_size=14336,
        num_hidden_layers=32,
        num_attention_heads=32,
        vocab_size=32000,
        num_local_experts=8,
        num_experts_per_tok=2,
        model_type="mixtral",
    )
    assert (
        rl.ModelConfig.from_hf_config(mixtral).active_params
        == rl.get_model("mixtral").active_params
    )
    # Qwen3-MoE style: num_experts and moe_intermediate_size, explicit head_dim, tied table
    qwen = dict(
        llama,
        model_type="qwen3_moe",
        num_experts=128,
        num_experts_per_tok=8,
        moe_intermediate_size=768,
        head_dim=128,
        hidden_size=2048,
        num_attention_heads=32,
        num_key_value_heads=4,
        tie_word_embeddings=True,
    )
    q = rl.ModelConfig.from_hf_config(qwen)
    assert (q.d_ff, q.experts, q.experts_per_token, q.head_dim) == (768, 128, 8, 128)
    assert q.attention_width == 4096 and q.tied_embeddings


def test_from_hf_config_gemma_is_gated_and_tied():
    # Gemma 7B (config.json): GeGLU with gelu, 3072 wide, 16 heads of 256, tied 256000 table
    gemma = {
        "model_type": "gemma",
        "hidden_act": "gelu",
        "hidden_size": 3072,
        "intermediate_size": 24576,
        "num_hidden_layers": 28,
        "num_attention_heads": 16,
        "num_key_value_heads": 16,
        "head_dim": 256,
        "vocab_size": 256000,
    }
    g = rl.ModelConfig.from_hf_config(gemma)
    assert g.gated_mlp and g.tied_embeddings
    # 28 x (Q, K, V, O of 3072 x 4096 + 3 x 3072 x 24576 + 2 norms) + one table + final norm
    by_hand = 28 * (4 * 3072 * 4096 + 3 * 3072 * 24576 + 2 * 3072) + 256000 * 3072 + 3072
    assert g.params == by_hand
    assert abs(by_hand - 8.54e9) / 8.54e9 < 0.01  # Gemma 7B's model card: 8.54B parameters


def test_from_hf_config_names_the_missing_key(tmp_path):
    with pytest.raises(ValueError, match="'num_attention_heads'"):
        rl.ModelConfig.from_hf_config({"hidden_size": 8, "num_hidden_layers": 2, "vocab_size": 9})
    gpt2 = tmp_path / "config.json"
    gpt2.write_text(json.dumps({"model_type": "gpt2", "n_layer": 12, "n_embd": 768}))
    with pytest.raises(ValueError, match="gpt2.*'num_hidden_layers'"):
        rl.ModelConfig.from_hf_config(gpt2)
    with pytest.raises(ValueError, match="cannot read"):
        rl.ModelConfig.from_hf_config(tmp_path / "missing.json")


def test_get_model_aliases_and_suggestions():
    assert rl.get_model("llama-3-70b") is rl.get_model("Llama 3 70B")
    assert rl.get_model("PaLM").name == "PaLM 540B"
    with pytest.raises(ValueError, match="Closest: .*Llama 3 70B"):
        rl.get_model("Llama 3 7B")
    with pytest.raises(TypeError):
        rl.get_model(70)
    for name in rl.list_models():
        assert rl.get_model(name).source is not None, name


def test_dict_round_trip():
    m = rl.get_model("PaLM 540B")
    assert rl.ModelConfig.from_dict(json.loads(json.dumps(m.to_dict()))) == m
    with pytest.raises(ValueError, match="unknown ModelConfig field.*hidden_size"):
        rl.ModelConfig.from_dict({"hidden_size": 4})
