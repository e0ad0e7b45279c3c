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


def test_one_ring_needs_p_over_2_link_tokens_per_chip():
    # only the backward pass hides the all-reduce: 4BDF/P = 2(R-1)/R * 2DF/(2W) on a
    # bidirectional ring -> B = (R-1)/R * P/(2W)
    peak, link = _peak_and_link("TPU v5e")
    assert peak == 197e12 and link == 45e9
    by_hand = peak / (2 * link)  # 197e12 / 90e9
    assert by_hand == pytest.approx(2188.89, abs=0.01)  # the "about 2,189"
    # 1.5 x the 6BDF figure P/(3W) = 1459.26
    assert by_hand / (peak / (3 * link)) == pytest.approx(1.5)
    # the replicas at which 2^20 tokens per step reach it: R = 1 + 2 T W / P
    replicas = 1 + TOKENS_PER_STEP / by_hand
    assert replicas == pytest.approx(480.04, abs=0.01)
    # the HBM bound it replaces: 2^20 / (197e12 / 819e9) = 4359 replicas
    assert TOKENS_PER_STEP / (197e12 / 819e9) == pytest.approx(4359.3, abs=0.1)
    # the package's collective model gives the same in sympy
    B, D, F, R, P, W = sympy.symbols("B D F R P W", positive=True)
    t_ar = rl.collective_time("all-reduce", 2 * D * F, R, W, "bidirectional-ring")
    solved = sympy.solve(sympy.Eq(4 * B * D * F / P, t_ar), B)[0]
    assert sympy.simplify(solved - (R - 1) * P / (2 * R * W)) == 0


def _tokens(chip, seconds_per_byte):
    """B with 4BDF/P = seconds_per_byte x 2DF: B = seconds_per_byte x 2P/4."""
    return seconds_per_byte * 2 * rl.get_chip(chip).peak_flops_per_s("bf16") / 4


def test_the_table_rows_by_hand():
    v5e_peak, v5e_link = _peak_and_link("TPU v5e")
    # line of 8 (reduce-scatter + all-gather): 2 (7/8) V / W -> B = 2 * 7/8 * 2 * P/(4W)
    line8 = rl.collective_time("all-reduce", 1.0, 8, v5e_link, "line")
    assert _tokens("TPU v5e", line8) == pytest.approx(2 * 7 / 8 * 2 * v5e_peak / (4 * v5e_link))
    assert _tokens("TPU v5e", line8) == pytest.approx(3830.6, abs=0.1)  # was 2553.7 with 6BDF
    # 16 x 16 pod, both axes: 2 x 255/256 V / (4W) -> B = 255/256 * P/(4W) = 1090.2
    pod = rl.multi_axis_collective_time("all-reduce", 1.0, (16, 16), v5e_link)
    assert _tokens("TPU v5e", pod) == pytest.approx(255 / 256 * v5e_peak / (4 * v5e_link))
    assert _tokens("TPU v5e", pod) == pytest.approx(1090.2, abs=0.1)  # was 726.8
    # v5p 16 x 16 x 16, three axes: 2 x 4095/4096 V / (6W) -> B = 4095/4096 P/(6W), W = 9e10:
    # 459e12 / 5.4e11 = 850, the scaling book's "BS=850 per TPU"
    v5p_peak, v5p_link = _peak_and_link("TPU v5p")
    assert (v5p_peak, v5p_link) == (459e12, 90e9)
    v5p = rl.multi_axis_collective_time("all-reduce", 1.0, (16, 16, 16), v5p_link)
    assert _tokens("TPU v5p", v5p) == pytest.approx(4095 / 4096 * 850, rel=1e-12)
    # 8 H100 on NVSwitch: 2 (7/8) V / (18 x 25 GB/s) -> B = 7/8 * P / 450e9 = 1924.0
    h_peak, h_link = _peak_and_link("H100 SXM")
    node = rl.collective_time("all-reduce", 1.0, 8, h_link, "switch", links=18)
    assert _tokens("H100 SXM", node) == pytest.approx(7 / 8 * 989.5e12 / 450e9)
    assert _tokens("H100 SXM", node) == pytest.approx(1924.0, abs=0.1)
    # NVLS at its ideal: 9/8 V / 450e9 -> B = 9/16 * P / 450e9 = 1236.9
    nvls = rl.collective_time(
        "all-reduce", 1.0, 8, h_link, "switch", links=18, in_switch_reduction=True
    )
    assert _tokens("H100 SXM", nvls) == pytest.approx(9 / 16 * 989.5e12 / 450e9)
    # 64 DGX nodes, pipelined: network 2 x 63/64 x (V/8) / 50e9 = 4.92e-12 s/B beside the
    # in-node RS + AG 2 x 7/8 / 450e9 = 3.89e-12 s/B: the network phase is the floor, 2435.1
    network, inside = 2 * 63 / 64 / 8 / 50e9, 2 * 7 / 8 / 450e9
    assert network > inside
    floor = rl.hierarchical_all_reduce_floor(1.0, 8, 64, h_link, 50e9, "switch", links=18)
    assert floor == pytest.approx(network)
    assert _tokens("H100 SXM", floor) == pytest.approx(2435.1, abs=0.1)
    # 4 v5e pods: in-pod RS + AG 2 x 255/256 / (4 x 45e9) beats the network's 2 x 3/4 / 256 /
    # 3.125e9, so the floor is the pod's own all-reduce: 1090.2 again
    four = rl.hierarchical_all_reduce_floor(
        1.0, 256, 4, v5e_link, 2.5e10 / 8, "bidirectional-ring", axes=(16, 16)
    )
    assert four == pytest.approx(2 * 255 / 256 / (4 * 45e9))


def test_v6e_pod_exercise_by_hand():
    # 255/256 * 918e12 / (4 * 90e9) = 2540.04 tokens per chip (1.5 x the 6BDF figure 1693.36)
    value = 255 / 256 * 918e12 / (4 * 90e9)
    assert value == pytest.approx(2540.04, abs=0.01)
    assert check("matmul-dp-gradient-tokens-v6e", value).correct
    assert check("matmul-dp-gradient-tokens-v6e", "2540").correct
    # Google's ICI figure, 100 GB/s per link one way (chapter 5): 255/256 * 918e12 / 4e11
    google = check("matmul-dp-gradient-tokens-v6e", 255 / 256 * 918e12 / (4 * 100e9))
    assert google.correct and "Google" in google.message
    whole_step = check("matmul-dp-gradient-tokens-v6e", 1693.36)
    assert not whole_step.correct and "6BDF" in whole_step.message
    twice = check("matmul-dp-gradient-tokens-v6e", 2 * value)
    assert not twice.correct and "one axis" in twice.message and "forward" in twice.message
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
    # tokens per chip with the phases one after another (backward 4BDF): 1274.9
    assert by_hand / V * 2 * 197e12 / 4 == pytest.approx(1274.9, abs=0.1)
    # the pipelined floor: max(network, RS + AG in the pod) = the in-pod part here
    floor = rl.hierarchical_all_reduce_floor(
        V, 256, 4, v5e_link, 2.5e10 / 8, "bidirectional-ring", axes=(16, 16)
    )
    assert floor == pytest.approx(2 * 255 / 256 * V / (4 * 45e9), rel=1e-12)
