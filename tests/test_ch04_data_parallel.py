"""Chapter 4's data-parallel limit: the gradient all-reduce against the memory bound, derived
by hand (spec figures from the catalog, every formula written out here)."""

import pytest
import sympy

import roofline as rl
from roofline.exercises import check

TOKENS_PER_STEP = 256 * 4096  # the chapter's step: 2^20 tokens


def _peak_and_link(chip):
    c = rl.get_chip(chip)
    return c.peak("bf16").dense_flops_per_s, c.interconnect.one_way_bytes_per_s


def test_one_ring_needs_p_over_3_link_tokens_per_chip():
    # 6BDF/P = 2(R-1)/R * 2DF/(2W) on a bidirectional ring -> B = (R-1)/R * P/(3W)
    peak, link = _peak_and_link("TPU v5e")
    assert peak == 197e12 and link == 45e9
    by_hand = peak / (3 * link)  # 197e12 / 135e9
    assert by_hand == pytest.approx(1459.26, abs=0.01)
    # the replicas at which 2^20 tokens per step reach it: R = 1 + 3 T W / P
    replicas = 1 + TOKENS_PER_STEP / by_hand
    assert replicas == pytest.approx(719.6, abs=0.1)
    # the HBM bound it replaces: 2^20 / (197e12 / 819e9) = 4359 replicas
    assert TOKENS_PER_STEP / (197e12 / 819e9) == pytest.approx(4359.3, abs=0.1)
    # the package's collective model gives the same in sympy
    B, D, F, R, P, W = sympy.symbols("B D F R P W", positive=True)
    t_ar = rl.collective_time("all-reduce", 2 * D * F, R, W, "bidirectional-ring")
    solved = sympy.solve(sympy.Eq(6 * B * D * F / P, t_ar), B)[0]
    assert sympy.simplify(solved - (R - 1) * P / (3 * R * W)) == 0


def test_the_table_rows_by_hand():
    v5e_peak, v5e_link = _peak_and_link("TPU v5e")
    per = v5e_peak / (6 * v5e_link)  # B = (all-reduce seconds per 2DF bytes) * P / 6 ... / DF
    # line of 8: 2 (n-1)/n V / W -> B = 2 * 7/8 * 2 * P/(6W)
    line8 = rl.collective_time("all-reduce", 2.0, 8, v5e_link, "line") * v5e_peak / 6
    assert line8 == pytest.approx(2 * 7 / 8 * 2 * per, rel=1e-12)
    assert line8 == pytest.approx(2553.7, abs=0.1)
    # 16 x 16 pod, both axes: (N-1)/N V / (2W) -> B = 255/256 * P/(6W) = 726.8
    pod = rl.multi_axis_collective_time("all-reduce", 2.0, (16, 16), v5e_link) * v5e_peak / 6
    assert pod == pytest.approx(255 / 256 * per, rel=1e-12)
    assert pod == pytest.approx(726.8, abs=0.1)
    # 8 H100 on NVSwitch: 2 (7/8) V / (18 x 25 GB/s) -> B = 7/12 * P / 450e9 = 1282.7
    h_peak, h_link = _peak_and_link("H100 SXM")
    node = rl.collective_time("all-reduce", 2.0, 8, h_link, "switch", links=18) * h_peak / 6
    assert node == pytest.approx(7 / 12 * 989.5e12 / 450e9, rel=1e-12)
    # 64 DGX nodes: RS + AG in the node 2 x 7/8 V / 450e9, ring across nodes
    # 2 x 63/64 x (V/8) / 50e9 -> 2906 tokens per GPU
    seconds_per_byte = 2 * 7 / 8 / 450e9 + 2 * 63 / 64 / 8 / 50e9
    assert seconds_per_byte * 2 * 989.5e12 / 6 == pytest.approx(2906.1, abs=0.1)


def test_v6e_pod_exercise_by_hand():
    # 255/256 * 918e12 / (6 * 90e9) = 1693.36 tokens per chip
    value = 255 / 256 * 918e12 / (6 * 90e9)
    assert value == pytest.approx(1693.36, abs=0.01)
    assert check("matmul-dp-gradient-tokens-v6e", value).correct
    assert check("matmul-dp-gradient-tokens-v6e", "1693").correct
    forward_only = check("matmul-dp-gradient-tokens-v6e", 3 * value)
    assert not forward_only.correct and "forward" in forward_only.message
    one_axis = check("matmul-dp-gradient-tokens-v6e", 2 * value)
    assert not one_axis.correct and "one axis" in one_axis.message
    memory = check("matmul-dp-gradient-tokens-v6e", 918e12 / 1638e9)
    assert not memory.correct and "memory bound" in memory.message


def test_the_table_agrees_with_the_package_all_reduce_of_a_chip():
    """The chapter composes the collectives itself; rl.all_reduce_time picks the same slice."""
    V = 2.0**30
    v5e_link = 45e9
    pod = rl.multi_axis_collective_time("all-reduce", V, (16, 16), v5e_link)
    assert rl.all_reduce_time("TPU v5e", V, 256) == pytest.approx(pod, rel=1e-12)
    four_pods = rl.hierarchical_all_reduce_time(
        V, 256, 4, v5e_link, 2.5e10 / 8, "bidirectional-ring", axes=(16, 16)
    )
    assert rl.all_reduce_time("TPU v5e", V, 1024) == pytest.approx(four_pods, rel=1e-12)
    # by hand: RS + AG in the pod 2 x 255/256 V / (4 x 45e9), ring across 4 pods of V/256 at
    # 2.5e10 / 8 B/s per chip: 2 x 3/4 x V/256 / 3.125e9
    by_hand = 2 * 255 / 256 * V / (4 * 45e9) + 2 * 3 / 4 * V / 256 / 3.125e9
    assert four_pods == pytest.approx(by_hand, rel=1e-12)
    assert by_hand / V * 2 * 197e12 / 6 == pytest.approx(850.0, abs=0.5)
