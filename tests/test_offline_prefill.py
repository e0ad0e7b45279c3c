"""Issue 31: an offline throughput benchmark prefills every prompt on the chips that decode.

Expected values are worked by hand from Llama 2 70B's published shape (Touvron et al. 2023,
Table 1 / the Hugging Face config: d_model 8192, 80 layers, 64 query heads of 128, 8 KV heads,
gated MLP of 28672, vocabulary 32000) and the H200's fp8 dense peak as NVIDIA prints it
(3,958 TFLOPS with sparsity, so 1,979 dense), not read from the code under test."""

import pytest

import roofline as rl

D, LAYERS, KV_WIDTH, FF, VOCAB = 8192, 80, 8 * 128, 28672, 32000
# every matmul weight a token multiplies by: Q and O (D x D), K and V (D x 1024), the gated
# MLP's three D x FF matrices, and the output head D x V (the input table is a gather)
P_MATMUL = LAYERS * (2 * D * D + 2 * D * KV_WIDTH + 3 * D * FF) + D * VOCAB
PEAK = 1979e12  # H200 fp8, dense
OUT = 294.45  # MLCommons: mean output tokens per sample of the Llama 2 70B benchmark


def decode_flops_per_token(context):
    """2 per weight + attention: Q K^T and A V over `context` cached tokens, 4 x width each."""
    return 2 * P_MATMUL + 4 * D * context * LAYERS


def prefill_flops(prompt):
    """2 per weight per prompt token + causal attention, 2 x width x prompt^2 per layer."""
    return 2 * P_MATMUL * prompt + 2 * D * prompt**2 * LAYERS


def test_hand_count_of_the_weights():
    assert P_MATMUL == 68_713_185_280
    assert rl.get_model("Llama 2 70B").matmul_params == P_MATMUL


def test_no_prefill_is_the_decode_only_bound():
    """prompt 0: 8 GPUs x peak / the decode FLOPs of one token at a context of one."""
    hand = 8 * PEAK / decode_flops_per_token(1)
    got = rl.offline_tokens_per_s(
        "Llama 2 70B", "H200", 8, tp=1, batch=806, dtype="fp8", prompt_len=0, output_len=OUT
    )
    assert got == pytest.approx(hand, rel=1e-9)
    assert got == pytest.approx(115_201, abs=1)


def test_every_prompt_prefilled_at_mlperfs_cap():
    """1,024-token prompts (MLCommons' cap): each request's math is its 294.45 decode tokens
    at a context of 1,024 plus the prompt's prefill; the decode step at batch 806 is
    math-bound (HBM: (68.71 GB of fp8 weights read + 806 x 1,024 x 163,840 B cache) / 4.8 TB/s =
    42.5 ms against 57.1 ms of math), so the math decides: about 25,425 tokens/s, below the
    31,302.7 NVIDIA published."""
    per_request = OUT * decode_flops_per_token(1024) + prefill_flops(1024)
    hand = 8 * OUT * PEAK / per_request
    got = rl.offline_tokens_per_s(
        "Llama 2 70B", "H200", 8, tp=1, batch=806, dtype="fp8", prompt_len=1024, output_len=OUT
    )
    assert got == pytest.approx(hand, rel=1e-9)
    assert 25_400 < got < 25_450 < 31_302.7


def test_the_measurement_bounds_the_mean_prompt():
    """Read backwards: 31,302.7 tokens/s needs 8 x 294.45 x peak / (294.45 x decode(L) +
    prefill(L)) >= 31,302.7; solved by hand (the quadratic in L below) the longest whole L
    is 779 tokens. Without attention it would be 294.45 x (115,201 / 31,302.7 - 1) = 789."""
    measured = 31_302.7
    # 8 OUT PEAK / measured = OUT (2P + 4 D L layers) + 2P L + 2 D L^2 layers
    a = 2 * D * LAYERS
    b = OUT * 4 * D * LAYERS + 2 * P_MATMUL
    c = OUT * 2 * P_MATMUL - 8 * OUT * PEAK / measured
    root = (-b + (b * b - 4 * a * c) ** 0.5) / (2 * a)
    assert int(root) == 779
    got = rl.longest_mean_prompt(
        measured, "Llama 2 70B", "H200", 8, tp=1, batch=806, dtype="fp8", output_len=OUT
    )
    assert got == int(root)


def test_backwards_reading_edges():
    kw = dict(tp=1, batch=806, dtype="fp8", output_len=OUT)
    assert rl.longest_mean_prompt(1e9, "Llama 2 70B", "H200", 8, **kw) is None
    assert rl.longest_mean_prompt(1.0, "Llama 2 70B", "H200", 8, **kw) == 4096  # its context
    with pytest.raises(ValueError, match="prompt_len must be >= 0"):
        rl.offline_tokens_per_s("Llama 2 70B", "H200", 8, prompt_len=-1, output_len=OUT, batch=1)


def test_prefill_lowers_the_bound_monotonically():
    kw = dict(tp=1, batch=806, dtype="fp8", output_len=OUT)
    bounds = [
        rl.offline_tokens_per_s("Llama 2 70B", "H200", 8, prompt_len=p, **kw)
        for p in (0, 128, 512, 1024, 2048)
    ]
    assert bounds == sorted(bounds, reverse=True)
