"""Every parameter of every cost function against a hand-derived count, plus properties.

Sizes are small and distinct (3, 5, 7, ...) so that a parameter dropped or swapped changes
the expected value; each expected number is worked out in its comment, from the shapes of
the arrays read and written, never from the code under test.
"""

from __future__ import annotations

import math

import pytest
from hypothesis import given
from hypothesis import strategies as st

import roofline as rl
from roofline.costs import (
    dot,
    elementwise,
    matmul,
    matmul_exact_flops,
    per_example_matmul,
    sharded_matmul,
    tiled_matmul,
)
from roofline.transformer import attention_scores, attention_values, fused_attention


def _counts(cost):
    return (cost.flops, cost.bytes)


# ------------------------------------------------------------ dot
@pytest.mark.parametrize(
    "kwargs, flops, nbytes",
    [
        ({"N": 5, "dtype": "fp32"}, 9, 44),  # 5 mul + 4 add; (5 + 5 read + 1 written) x 4 B
        ({"N": 6, "dtype": "fp32"}, 11, 52),  # N: 6 + 5; 13 x 4
        ({"N": 5, "dtype": "fp8"}, 9, 11),  # dtype: 11 elements x 1 B
    ],
)
def test_dot(kwargs, flops, nbytes):
    cost = dot(**kwargs)
    assert _counts(cost) == (flops, nbytes)
    assert cost.dtype == kwargs["dtype"] and cost.unit == "vector"


# ------------------------------------------------------------ elementwise
BASE_ELEMENTWISE = {"N": 7, "dtype": "fp32", "flops_per_element": 3, "inputs": 5, "outputs": 2}


@pytest.mark.parametrize(
    "change, flops, nbytes",
    [
        ({}, 21, 196),  # 3 x 7 FLOPs; (5 + 2) arrays x 7 elements x 4 B
        ({"N": 11}, 33, 308),  # 3 x 11; 7 x 11 x 4
        ({"dtype": "bf16"}, 21, 98),  # 7 x 7 x 2
        ({"flops_per_element": 1}, 7, 196),
        ({"inputs": 1}, 21, 84),  # (1 + 2) x 7 x 4
        ({"outputs": 1}, 21, 168),  # (5 + 1) x 7 x 4: the mutation issue 27 found untested
    ],
)
def test_elementwise(change, flops, nbytes):
    cost = elementwise(**{**BASE_ELEMENTWISE, **change})
    assert _counts(cost) == (flops, nbytes)
    assert cost.dtype == change.get("dtype", "fp32") and cost.unit == "vector"


def test_elementwise_name():
    assert elementwise(4, name="relu").name == "relu"
    assert elementwise(4).name == "elementwise"


# ------------------------------------------------------------ matmul
@pytest.mark.parametrize(
    "kwargs, flops, nbytes",
    [
        # X[3, 5], W[5, 7], Y[3, 7] = 15 + 35 + 21 = 71 elements; 2 x 3 x 5 x 7 = 210 FLOPs
        ({}, 210, 142),  # 71 x 2 B
        ({"B": 4}, 280, 166),  # 2 x (20 + 35 + 28)
        ({"D": 6}, 252, 162),  # 2 x (18 + 42 + 21)
        ({"F": 8}, 240, 158),  # 2 x (15 + 40 + 24)
        ({"dtype": "fp32"}, 210, 284),  # 71 x 4
        ({"activations": "fp32"}, 210, 172),  # 4 x 15 + 2 x 35 + 2 x 21
        ({"weights": "int8"}, 210, 107),  # 2 x 15 + 1 x 35 + 2 x 21
        ({"output": "fp32"}, 210, 184),  # 2 x 15 + 2 x 35 + 4 x 21
        ({"accumulate": "fp32"}, 210, 142),  # the accumulator stays on the chip
    ],
)
def test_matmul(kwargs, flops, nbytes):
    args = {"B": 3, "D": 5, "F": 7, **kwargs}
    cost = matmul(**args)
    assert _counts(cost) == (flops, nbytes)
    assert cost.dtype == kwargs.get("dtype", "bf16") and cost.unit == "matrix"
    assert cost.accumulate == kwargs.get("accumulate")


@pytest.mark.parametrize(
    "B, D, F, expected",
    [(3, 5, 7, 189), (4, 5, 7, 252), (3, 6, 7, 231), (3, 5, 8, 216)],  # B F (2D - 1)
)
def test_matmul_exact_flops(B, D, F, expected):
    assert matmul_exact_flops(B, D, F) == expected


@pytest.mark.parametrize(
    "kwargs, flops, nbytes",
    [
        # X[3, 5], W[3, 5, 7], Y[3, 7] = 15 + 105 + 21 = 141 elements
        ({}, 210, 282),
        ({"B": 4}, 280, 376),  # 2 x (20 + 140 + 28)
        ({"D": 6}, 252, 330),  # 2 x (18 + 126 + 21)
        ({"F": 8}, 240, 318),  # 2 x (15 + 120 + 24)
        ({"dtype": "fp32"}, 210, 564),
        ({"activations": "fp32"}, 210, 312),  # 60 + 210 + 42
        ({"weights": "int8"}, 210, 177),  # 30 + 105 + 42
        ({"output": "fp32"}, 210, 324),  # 30 + 210 + 84
    ],
)
def test_per_example_matmul(kwargs, flops, nbytes):
    cost = per_example_matmul(**{"B": 3, "D": 5, "F": 7, **kwargs})
    assert _counts(cost) == (flops, nbytes)
    assert cost.dtype == kwargs.get("dtype", "bf16")


@pytest.mark.parametrize(
    "kwargs, flops, nbytes",
    [
        ({}, 210, 200),  # tiles [3, 5] and [5, 7] loaded: (15 + 35) x 4 B
        ({"bm": 4}, 280, 220),  # (20 + 35) x 4
        ({"bk": 6}, 252, 240),  # (18 + 42) x 4
        ({"bn": 8}, 240, 220),  # (15 + 40) x 4
        ({"dtype": "bf16"}, 210, 100),
    ],
)
def test_tiled_matmul(kwargs, flops, nbytes):
    cost = tiled_matmul(**{"bm": 3, "bk": 5, "bn": 7, "dtype": "fp32", **kwargs})
    assert _counts(cost) == (flops, nbytes)


@pytest.mark.parametrize(
    "kwargs, flops, nbytes, partial, send",
    [
        # each of 2 chips: X[3, 5] W[5, 7] Y[3, 7] in bf16; partial sum 3 x 7 x 2 = 42 B;
        # a one-way ring all-reduce sends 2 (n - 1) / n partial sums = 42 B
        ({}, 210, 142, 42, 42),
        ({"n": 5}, 84, 82, 42, 67.2),  # X[3, 2] W[2, 7] Y[3, 7]: 2 x 41; 2 x 4 / 5 x 42
        ({"B": 4}, 280, 166, 56, 56),
        ({"D": 20}, 420, 242, 42, 42),  # X[3, 10] W[10, 7]: 2 x (30 + 70 + 21)
        ({"F": 8}, 240, 158, 48, 48),
        ({"dtype": "fp32"}, 210, 284, 84, 84),
    ],
)
def test_sharded_matmul(kwargs, flops, nbytes, partial, send):
    args = {"B": 3, "D": 10, "F": 7, "n": 2, "dtype": "bf16", **kwargs}
    sharded = sharded_matmul(**args)
    assert _counts(sharded.per_chip) == (pytest.approx(flops), pytest.approx(nbytes))
    assert sharded.partial_sum_bytes == partial
    assert sharded.send_bytes_per_direction == pytest.approx(send)
    assert sharded.total_flops == pytest.approx(2 * args["B"] * args["D"] * args["F"])


# ------------------------------------------------------------ attention (transformer.py)
ATTENTION = {"B": 2, "T_q": 3, "T": 5, "H": 4, "H_kv": 2, "d_h": 7, "dtype": "fp32"}


def _shapes(B, T_q, T, H, H_kv, d_h):
    """Element counts of the arrays attention touches, from their shapes."""
    return {
        "Q": math.prod((B, T_q, H, d_h)),
        "K": math.prod((B, T, H_kv, d_h)),
        "V": math.prod((B, T, H_kv, d_h)),
        "S": math.prod((B, H, T_q, T)),  # scores, and the weights A of the same shape
        "O": math.prod((B, T_q, H, d_h)),
    }


@pytest.mark.parametrize(
    "change",
    [{}, {"B": 3}, {"T_q": 1}, {"T": 6}, {"H": 8}, {"H_kv": 4}, {"d_h": 9}, {"dtype": "bf16"}],
)
def test_attention_costs(change):
    args = {**ATTENTION, **change}
    e = {"fp32": 4, "bf16": 2}[args["dtype"]]
    dims = {k: v for k, v in args.items() if k != "dtype"}
    n = _shapes(**dims)
    qk_flops = 2 * dims["B"] * dims["H"] * dims["T_q"] * dims["T"] * dims["d_h"]
    assert _counts(attention_scores(**args)) == (qk_flops, e * (n["Q"] + n["K"] + n["S"]))
    assert _counts(attention_values(**args)) == (qk_flops, e * (n["S"] + n["V"] + n["O"]))
    fused = fused_attention(**args)
    assert _counts(fused) == (2 * qk_flops, e * (n["Q"] + n["K"] + n["V"] + n["O"]))


def test_attention_base_case_by_hand():
    # Q 2x3x4x7 = 168, K 2x5x2x7 = 140, S 2x4x3x5 = 120 elements, 4 B each
    assert _counts(attention_scores(**ATTENTION)) == (1680, 4 * 428)


# ------------------------------------------------------------ properties
sizes = st.integers(min_value=1, max_value=10**6)
dtypes = st.sampled_from(["fp8", "bf16", "fp32", "fp64"])
DTYPE_BYTES = {"fp8": 1, "bf16": 2, "fp32": 4, "fp64": 8}


@given(sizes, sizes, sizes, dtypes)
def test_intensity_is_flops_over_bytes(b, d, f, dtype):
    for cost in (matmul(b, d, f, dtype), per_example_matmul(b, d, f, dtype), dot(b, dtype)):
        assert cost.intensity == pytest.approx(cost.flops / cost.bytes)


@given(sizes, sizes, sizes, st.integers(min_value=2, max_value=64))
def test_matmul_flops_are_linear_in_each_size(b, d, f, k):
    base = matmul(b, d, f).flops
    assert matmul(k * b, d, f).flops == k * base
    assert matmul(b, k * d, f).flops == k * base
    assert matmul(b, d, k * f).flops == k * base


@given(sizes, sizes, sizes, dtypes, dtypes)
def test_bytes_grow_with_the_dtype_size(b, d, f, small, large):
    if DTYPE_BYTES[small] > DTYPE_BYTES[large]:
        small, large = large, small
    for fn in (matmul, per_example_matmul, tiled_matmul):
        assert fn(b, d, f, small).bytes <= fn(b, d, f, large).bytes
        # bytes scale exactly with the element size when every operand shares the dtype
        ratio = DTYPE_BYTES[large] / DTYPE_BYTES[small]
        assert fn(b, d, f, large).bytes == pytest.approx(ratio * fn(b, d, f, small).bytes)
    assert matmul(b, d, f, small).flops == matmul(b, d, f, large).flops


@given(sizes, st.integers(1, 8), st.integers(1, 8), st.integers(1, 8), dtypes)
def test_elementwise_bytes_are_arrays_times_elements_times_size(n, fpe, inputs, outputs, dtype):
    cost = elementwise(n, dtype, fpe, inputs, outputs)
    assert cost.bytes == (inputs + outputs) * n * DTYPE_BYTES[dtype]
    assert cost.flops == fpe * n


@given(sizes, sizes, sizes, st.integers(1, 64))
def test_sharding_keeps_the_total_flops(b, d, f, n):
    assert sharded_matmul(b, d, f, n).total_flops == pytest.approx(matmul(b, d, f).flops)


def test_matmul_is_exported_at_the_top():
    assert rl.matmul is matmul


# ------------------------------------------------------------ a layer and a model (transformer.py)
def _tiny_layer():
    from roofline.transformer import TransformerShape

    return TransformerShape("tiny", d_model=6, d_ff=10, n_heads=2, n_kv_heads=1, head_dim=3)


def _tiny(n_layers=2, vocab=11, tied=False):
    from roofline.transformer import model_from_layer

    return model_from_layer(
        "tiny model", _tiny_layer(), n_layers=n_layers, vocab_size=vocab, tied_embeddings=tied
    )


def test_layer_weights_and_flops_by_hand():
    from roofline.transformer import layer_total

    layer = _tiny_layer()
    # Q 6x6 + K, V 6x3 each + O 6x6 + up, gate, down 6x10 each = 36 + 36 + 36 + 180
    assert layer.weights_per_layer == 288
    # prefill B=1, T=4: 4 rows through 288 weights (2 FLOPs each) + attention
    # 4 B H T_q T d_h = 4 x 1 x 2 x 4 x 4 x 3 = 384
    assert layer_total(layer, 1, 4, "prefill").flops == 2 * 4 * 288 + 384
    # decode B=2, T=4: 2 rows + attention of 1 query against 4 keys: 4 x 2 x 2 x 1 x 4 x 3 = 192
    assert layer_total(layer, 2, 4, "decode").flops == 2 * 2 * 288 + 192
    # dtype: every byte halves from bf16 to fp8, FLOPs unchanged
    bf16, fp8 = layer_total(layer, 2, 4, "decode"), layer_total(layer, 2, 4, "decode", "fp8")
    assert (fp8.flops, fp8.bytes) == (bf16.flops, bf16.bytes / 2)


@pytest.mark.parametrize(
    "model_args, dtype, expected",
    [
        # 2 layers + embedding + head + norm scales (2 of 6 per layer, a final 6), 2 B each
        ({}, "bf16", 2 * (2 * 288 + 2 * 11 * 6 + 5 * 6)),
        ({"n_layers": 3}, "bf16", 2 * (3 * 288 + 2 * 11 * 6 + 7 * 6)),
        ({"vocab": 13}, "bf16", 2 * (2 * 288 + 2 * 13 * 6 + 5 * 6)),
        ({"tied": True}, "bf16", 2 * (2 * 288 + 11 * 6 + 5 * 6)),  # one shared table
        ({}, "fp32", 4 * (2 * 288 + 2 * 11 * 6 + 5 * 6)),
    ],
)
def test_weight_bytes(model_args, dtype, expected):
    from roofline.transformer import weight_bytes

    assert weight_bytes(_tiny(**model_args), dtype) == expected


@pytest.mark.parametrize(
    "n_layers, T, dtype, expected",
    [
        (2, 5, "bf16", 120),  # K and V: 2 x 2 layers x 1 KV head x 3 x 5 tokens x 2 B
        (3, 5, "bf16", 180),
        (2, 7, "bf16", 168),
        (2, 5, "fp8", 60),
    ],
)
def test_kv_cache_bytes(n_layers, T, dtype, expected):
    from roofline.transformer import kv_cache_bytes

    assert kv_cache_bytes(_tiny(n_layers=n_layers), T, dtype) == expected
