"""Cost formulas and roofline estimates, cross-checked against independent derivations."""

import math

import numpy as np
import pytest
import sympy
from hypothesis import given, settings
from hypothesis import strategies as st

import roofline as rl

B, D, F, N, n = sympy.symbols("B D F N n", positive=True)
sizes = st.integers(min_value=1, max_value=2**16)
chips = st.sampled_from([c for c in rl.list_chips() if "bf16" in rl.get_chip(c).dtypes])


# ---- formulas written once: numbers, arrays and symbols agree


def test_matmul_is_2bdf_symbolically_and_intensity_tends_to_b():
    cost = rl.matmul(B, D, F)
    assert sympy.simplify(cost.flops - 2 * B * D * F) == 0
    limit = sympy.limit(sympy.limit(cost.intensity, D, sympy.oo), F, sympy.oo)
    assert sympy.simplify(limit - B) == 0


def test_exact_matmul_flops_counts_multiplies_and_adds():
    # B*F outputs, each a length-D dot product: D multiplies and D - 1 adds
    assert sympy.expand(rl.matmul_exact_flops(B, D, F) - (B * F * D + B * F * (D - 1))) == 0
    # brute force on a tiny case
    b, d, f = 3, 5, 2
    adds = mults = 0
    for _ in range(b * f):
        mults += d
        adds += d - 1
    assert rl.matmul_exact_flops(b, d, f) == adds + mults


def test_dot_intensity_tends_to_one_half_in_bf16():
    assert sympy.limit(rl.dot(N).intensity, N, sympy.oo) == sympy.Rational(1, 2)
    for name in rl.list_chips():
        chip = rl.get_chip(name)
        dtype = "bf16" if "bf16" in chip.dtypes else chip.dtypes[0]
        assert rl.dot(1e9, dtype="bf16").intensity < rl.critical_intensity(chip, dtype)


@settings(max_examples=60)
@given(sizes, sizes, sizes)
def test_symbolic_and_numeric_matmul_agree(b, d, f):
    cost = rl.matmul(B, D, F, weights="int8")
    numeric = rl.matmul(b, d, f, weights="int8")
    subs = {B: b, D: d, F: f}
    assert float(cost.flops.subs(subs)) == pytest.approx(numeric.flops)
    assert float(cost.bytes.subs(subs)) == pytest.approx(numeric.bytes)
    array = rl.matmul(np.array([b, b + 1.0]), d, f, weights="int8")
    assert array.flops[0] == pytest.approx(numeric.flops)


def test_matmul_bytes_count_each_operand_in_its_dtype():
    # bf16 activations (2 B), int8 weights (1 B), fp32 output (4 B), written out by hand
    cost = rl.matmul(8, 16, 32, dtype="bf16", weights="int8", output="fp32")
    assert cost.bytes == 2 * 8 * 16 + 1 * 16 * 32 + 4 * 8 * 32


@settings(max_examples=60)
@given(sizes, sizes, sizes)
def test_intensity_grows_with_batch(b, d, f):
    assert rl.matmul(b + 1, d, f).intensity > rl.matmul(b, d, f).intensity


def test_per_example_weights_never_beat_one_flop_per_byte_in_bf16():
    # weights B*D*F elements of 2 bytes for 2BDF FLOPs: intensity < 1 whatever B is
    for b in [1, 64, 4096, 10**6]:
        assert rl.per_example_matmul(b, 4096, 4096).intensity < 1


def test_tiled_matmul_intensity_ignores_bk():
    one, other = rl.tiled_matmul(128, 64, 256), rl.tiled_matmul(128, 4096, 256)
    assert one.intensity == pytest.approx(other.intensity)
    bm, bn = sympy.symbols("b_m b_n", positive=True)
    bk = sympy.Symbol("b_k", positive=True)
    assert sympy.simplify(rl.tiled_matmul(bm, bk, bn).intensity - bm * bn / (bm + bn)) == 0


# ---- estimates


@settings(max_examples=80)
@given(chips, sizes, sizes, sizes)
def test_lower_and_upper_bounds_are_within_2x(chip, b, d, f):
    est = rl.estimate(rl.matmul(b, d, f), chip)
    assert est.t_lower <= est.t_upper <= 2 * est.t_lower * (1 + 1e-12)


def test_one_teraflop_on_h100_takes_about_one_millisecond():
    est = rl.estimate(rl.Cost("work", 1e12, 1, "bf16"), "H100")
    assert est.t_math == pytest.approx(1e12 / 989.5e12)
    assert rl.format_time(est.t_math) == "1.01 ms"  # Q7: ms, not us


def test_bound_follows_the_ridge_point():
    ridge = rl.critical_intensity("v5e")
    below = rl.Cost("x", ridge * 0.9 * 1e9, 1e9, "bf16")
    above = rl.Cost("x", ridge * 1.1 * 1e9, 1e9, "bf16")
    assert rl.estimate(below, "v5e").bound == "memory"
    assert rl.estimate(above, "v5e").bound == "compute"
    arr = rl.estimate(rl.Cost("x", np.array([0.5, 2.0]) * ridge * 1e9, 1e9, "bf16"), "v5e").bound
    assert list(arr) == ["memory", "compute"]


def test_symbolic_estimate_refuses_to_guess_the_bound():
    est = rl.estimate(rl.matmul(B, D, F), "v5e")
    assert isinstance(est.t_lower, sympy.Max)
    with pytest.raises(TypeError, match="substitute"):
        _ = est.bound


# ---- critical batch sizes: published worked values and an independent solve


def test_published_critical_batches():
    assert rl.critical_batch_size("TPU v5e") == pytest.approx(240, rel=0.01)
    assert rl.critical_batch_size("H100 SXM") == pytest.approx(295, rel=0.01)
    # bf16 math with int8 weights: half the bytes per weight, half the batch
    assert rl.critical_batch_size("TPU v5e", weights="int8") == pytest.approx(120, rel=0.01)


@pytest.mark.parametrize(
    "d, f, weights",
    [(4096, 4096, None), (1024, 1024, "int8"), (4096, 4096, "int8"), (8192, 28672, None)],
)
def test_exact_crossover_solves_t_math_equals_t_comms(d, f, weights):
    chip = rl.get_chip("TPU v5e")
    peak, bw = chip.peak_flops_per_s("bf16"), chip.hbm_bytes_per_s
    w = 1 if weights == "int8" else 2
    b = sympy.Symbol("b", positive=True)
    # independent: write the balance out by hand and let sympy solve it
    solution = sympy.solve(
        sympy.Eq(2 * b * d * f / peak, (2 * b * d + w * d * f + 2 * b * f) / bw), b
    )
    exact = rl.exact_critical_batch_size(chip, d, f, weights=weights)
    assert exact == pytest.approx(float(solution[0]), rel=1e-9)
    assert exact > rl.critical_batch_size(chip, weights=weights)


def test_exact_and_approximate_critical_batch_converge():
    approx = rl.critical_batch_size("H100")
    gaps = [
        rl.exact_critical_batch_size("H100", s, s) / approx - 1
        for s in (2**12, 2**15, 2**18, 2**21)
    ]
    assert all(g1 > g2 > 0 for g1, g2 in zip(gaps, gaps[1:]))
    assert gaps[-1] < 1e-3


def test_small_matrices_never_become_compute_bound():
    assert math.isinf(rl.exact_critical_batch_size("TPU v6e", 512, 512))


# ---- sharding over chips


def test_two_chip_v5e_example_is_compute_bound_above_8755():
    # independent: each chip does B*D*F FLOPs, sends 2BF bytes one way over a 4.5e10 B/s link
    peak = rl.get_chip("v5e").peak("bf16").dense_flops_per_s
    threshold = 2 * peak / 4.5e10
    assert rl.sharded_critical_D("v5e", n=2, link_bytes_per_s=4.5e10) == pytest.approx(threshold)
    assert round(threshold) == 8756 and threshold == pytest.approx(8755, abs=1)
    for b in (1, 128, 65536):  # the link threshold does not depend on B
        above, below = (
            rl.sharded_estimate(b, 9000, 8192, "v5e"),
            rl.sharded_estimate(b, 8000, 8192, "v5e"),
        )
        assert above.t_math > above.t_link and below.t_math < below.t_link


def test_sharded_matmul_counts_per_chip_and_aggregate():
    plan = rl.sharded_matmul(B, D, F, n=2)
    assert sympy.simplify(plan.per_chip.flops - B * D * F) == 0  # 2BDF/2 per chip
    assert sympy.simplify(plan.total_flops - 2 * B * D * F) == 0  # same total
    assert sympy.simplify(plan.send_bytes_per_direction - 2 * B * F) == 0  # one bf16 partial sum
    general = rl.sharded_matmul(B, D, F, n=n)
    assert sympy.simplify(general.send_bytes_per_direction - 2 * (n - 1) * 2 * B * F / n) == 0


def test_point_above_the_roof_is_an_error():
    ridge = rl.critical_intensity("H100")
    sparse_peak = rl.get_chip("H100").peak_flops_per_s("bf16", sparse=True)
    with pytest.raises(ValueError, match="above the roofline"):
        rl.check_below_roof(sparse_peak, 2 * ridge, "H100")
    assert rl.check_below_roof(0.5 * sparse_peak, 2 * ridge, "H100") > 0


# ---- bad input


@pytest.mark.parametrize(
    "bad, error",
    [
        (-1, ValueError),
        (0, ValueError),
        (float("nan"), ValueError),
        (float("inf"), ValueError),
        ("128", TypeError),
        (True, TypeError),
        (None, TypeError),
    ],
)
def test_bad_sizes_are_refused_with_a_message(bad, error):
    with pytest.raises(error, match="B"):
        rl.matmul(bad, 128, 128)


def test_negative_symbol_is_refused():
    with pytest.raises(ValueError):
        rl.matmul(sympy.Symbol("B", negative=True), 8, 8)


def test_unknown_dtype_names_the_known_ones():
    with pytest.raises(ValueError, match="bf16"):
        rl.matmul(1, 2, 3, dtype="bfloat17")
    assert rl.canonical_dtype("bfloat16") == "bf16"
    assert rl.canonical_dtype(np.float32) == "fp32"


def test_accumulate_rate_reaches_the_ridge_and_critical_batch():
    rtx = rl.get_chip("RTX 3090")
    fp16_acc = rtx.peak("fp16", accumulate="fp16")
    assert rl.critical_intensity(rtx, "fp16", accumulate="fp16") == pytest.approx(
        fp16_acc.dense_flops_per_s / rtx.hbm_bytes_per_s
    )
    assert rl.critical_batch_size(rtx, "fp16", accumulate="fp16") == pytest.approx(
        2 * rl.critical_batch_size(rtx, "fp16")
    )
