"""One model of the machine (issue 30, section 1): every caller asks `roofline.topology` and
gets one answer for the same collective on the same chips; expected values by hand."""

import json
import math

import pytest

import roofline as rl
from roofline import serving_explorer
from roofline.collectives import multi_axis_collective_time
from roofline.serving import tp_all_reduce_seconds
from roofline.topology import collective_seconds, route, slice_shape
from roofline.training import STATE_BYTES_PER_PARAM

V = 1e9  # bytes of the full array every chip holds
W_V5E, W_V5P = 4.5e10, 9e10  # one ICI link, one way (the catalog's figures, scaling book)

CASES = [
    ("TPU v5e", 4),
    ("TPU v5e", 8),
    ("TPU v5e", 16),
    ("TPU v5e", 256),
    ("TPU v5p", 64),
    ("TPU v5p", 128),
    ("TPU v5p", 6144),
    ("H100 SXM", 8),
    ("H100 SXM", 16),
    ("H100 SXM", 1024),
    ("MI300X", 8),
]


def _dp_all_reduce(chip, n):
    """The data-parallel gradient all-reduce inside training_step (Llama 3 8B, dp = n), and
    the gradient bytes it moves (bf16, 2 bytes per parameter)."""
    step = rl.training_step("Llama 3 8B", chip, n, n * 4096, 4096, {"dp": n})
    grads = STATE_BYTES_PER_PARAM["gradients"] * rl.get_model("Llama 3 8B").params
    return step.times["DP"], grads


@pytest.mark.parametrize("chip,n", CASES)
def test_every_caller_gives_one_answer(chip, n):
    by_estimate = rl.all_reduce_time(chip, V, n)
    t_dp, grads = _dp_all_reduce(chip, n)
    assert t_dp == pytest.approx(rl.all_reduce_time(chip, grads, n), rel=1e-12)
    assert tp_all_reduce_seconds(chip, n, V, hop_latency_s=0.0) == pytest.approx(
        by_estimate, rel=1e-12
    )
    assert collective_seconds("all-reduce", V, route(chip, n)) == pytest.approx(by_estimate)


# The same collectives on the same chips with an explicit slice shape (issue 30): the chips sit
# in a TPU slice of that shape, placed as jax's mesh_utils places a mesh axis (whole slice axes
# whose lengths multiply to n first). By hand, V = 1 GB all-reduced, t = 2 (n-1)/n V / sum R_i,
# R_i = W for a line or a ring of two (one link), 2W for a wrapped axis (a bidirectional ring);
# W = 45 GB/s (v5e), 90 GB/s (v5p) one way per link.
SHAPED_CASES = [
    # v5e 4 as the sold 2x2: two rings of two, R = 2W: 2 x 3/4 x 1e9 / 90e9 = 16.67 ms
    ("TPU v5e", 4, "2x2", 2 * 3 / 4 * V / (2 * W_V5E)),
    # v5e 4 as one axis of a 4x4 (no wrap below 16 on v5e): a line, R = W: 33.33 ms, the
    # answer sharded_topology gives an axis of 4 on its own
    ("TPU v5e", 4, "4x4", 2 * 3 / 4 * V / W_V5E),
    # v5e 8 = 2x4: a ring of two + a line of 4, R = 2W: 2 x 7/8 x 1e9 / 90e9 = 19.44 ms
    ("TPU v5e", 8, "2x4", 2 * 7 / 8 * V / (2 * W_V5E)),
    # v5e 16 = 4x4: two lines of 4, R = 2W: 2 x 15/16 x 1e9 / 90e9 = 20.83 ms
    ("TPU v5e", 16, "4x4", 2 * 15 / 16 * V / (2 * W_V5E)),
    # v5e 16 as one axis of the 16x16 pod: a wrapped ring of 16, R = 2W: the same 20.83 ms
    ("TPU v5e", 16, "16x16", 2 * 15 / 16 * V / (2 * W_V5E)),
    # v5e 256 = the wrapped 16x16, R = 4W: 2 x 255/256 x 1e9 / 180e9 = 11.07 ms
    ("TPU v5e", 256, "16x16", 2 * 255 / 256 * V / (4 * W_V5E)),
    # v5p 8 as 2x2x2: three rings of two, R = 3W: 2 x 7/8 x 1e9 / 270e9 = 6.481 ms
    ("TPU v5p", 8, "2x2x2", 2 * 7 / 8 * V / (3 * W_V5P)),
    # v5p 8 as the axis of 8 of 8x16x48 (whole cubes: wrapped), R = 2W: 9.722 ms
    ("TPU v5p", 8, "8x16x48", 2 * 7 / 8 * V / (2 * W_V5P)),
    # v5p 16 in a 4x4x4 cube: two whole axes of 4 (the 4x4 plane), both wrapped, R = 4W:
    # 2 x 15/16 x 1e9 / 360e9 = 5.208 ms
    ("TPU v5p", 16, "4x4x4", 2 * 15 / 16 * V / (4 * W_V5P)),
    # v5p 64 = 4x4x4, three wrapped rings, R = 6W: 2 x 63/64 x 1e9 / 540e9 = 3.646 ms
    ("TPU v5p", 64, "4x4x4", 2 * 63 / 64 * V / (6 * W_V5P)),
    # v5p 128 = 4x4x8, R = 6W: 3.675 ms
    ("TPU v5p", 128, "4x4x8", 2 * 127 / 128 * V / (6 * W_V5P)),
    # v5p 6144 as the listed 16x16x24 or MLPerf's 8x16x48: all wrapped, R = 6W: 3.703 ms both
    ("TPU v5p", 6144, "16x16x24", 2 * 6143 / 6144 * V / (6 * W_V5P)),
    ("TPU v5p", 6144, "8x16x48", 2 * 6143 / 6144 * V / (6 * W_V5P)),
]


@pytest.mark.parametrize("chip,n,shape,by_hand", SHAPED_CASES)
def test_every_caller_gives_one_answer_on_an_explicit_slice(chip, n, shape, by_hand):
    """all_reduce_time, the serving replica's all-reduce, the route itself, a D-split
    matmul's link term (sharded_estimate, its critical D, and sharded_topology where the chips
    take one slice axis) and, where the slice is the whole job, training_step's data-parallel
    all-reduce: one answer, the by-hand one."""
    assert rl.all_reduce_time(chip, V, n, slice_shape=shape) == pytest.approx(by_hand, rel=1e-12)
    r = route(chip, n, slice_shape=shape)
    assert collective_seconds("all-reduce", V, r) == pytest.approx(by_hand, rel=1e-12)
    assert tp_all_reduce_seconds(chip, n, V, 0.0, shape) == pytest.approx(by_hand, rel=1e-12)
    # a D-split matmul whose [B, F] bf16 partial sums are V: B x F x 2 = 20,000 x 25,000 x 2
    B, F, D = 20_000, 25_000, 6144 * 8
    est = rl.sharded_estimate(B, D, F, chip, n, slice_shape=shape)
    (link,) = [t for t in est.extra if t.kind == "link"]
    assert link.seconds == pytest.approx(by_hand, rel=1e-12)
    # its critical D: each chip's math 2 B D* F / (n peak) equals that link time
    d_star = rl.sharded_critical_D(chip, n, slice_shape=shape)
    peak = rl.get_chip(chip).peak_flops_per_s("bf16")
    assert 2 * B * d_star * F / (n * peak) == pytest.approx(by_hand, rel=1e-12)
    if len(r.axes) == 1:  # one slice axis: its topology is the answer sharded_topology gives
        top = rl.sharded_topology(chip, n, slice_shape=shape)
        w = rl.get_chip(chip).link_bytes_per_s
        assert rl.collective_time("all-reduce", V, n, w, top) == pytest.approx(by_hand)
    else:
        with pytest.raises(ValueError, match="not one axis"):
            rl.sharded_topology(chip, n, slice_shape=shape)
    if math.prod(int(a) for a in shape.split("x")) == n:
        step = rl.training_step("Llama 3 8B", chip, n, n * 4096, 4096, {"dp": n}, slice_shape=shape)
        grads = STATE_BYTES_PER_PARAM["gradients"] * rl.get_model("Llama 3 8B").params
        assert step.times["DP"] == pytest.approx(by_hand * grads / V, rel=1e-12)


def test_a_sharded_matmul_counts_the_same_latency_steps_as_the_route():
    # 1 us per step: 2x2x2 is 3 axes of 2 chips, 2 steps each (reduce-scatter + all-gather) =
    # 6 steps; a bidirectional ring of 8 takes 2 x floor(8/2) = 8 (as the CLI test above)
    for shape, steps, gbps in (("2x2x2", 6, 270e9), ("8x16x48", 8, 180e9)):
        est = rl.sharded_estimate(
            20_000, 49_152, 25_000, "TPU v5p", 8, latency_s=1e-6, slice_shape=shape
        )
        (link,) = [t for t in est.extra if t.kind == "link"]
        assert link.fixed_s == pytest.approx(steps * 1e-6)
        assert link.seconds == pytest.approx(2 * 7 / 8 * V / gbps + steps * 1e-6)
        assert link.seconds == pytest.approx(
            rl.all_reduce_time("TPU v5p", V, 8, latency_s=1e-6, slice_shape=shape)
        )


def test_an_axis_alone_is_one_axis_of_a_slice_that_holds_it():
    """Without a slice shape sharded_topology answers for one layout axis of n chips in a
    larger slice: the same answer as that axis of an explicit slice shape (v5e 4 of a 4x4: a
    line; 16 of the 16x16 pod: a wrapped ring; v5p 8 of 8x16x48: a wrapped ring), not the
    answer for a slice of only n chips (v5e 4 as 2x2, v5p 8 as 2x2x2, times above)."""
    for chip, n, shape in (
        ("TPU v5e", 4, "4x4"),
        ("TPU v5e", 16, "16x16"),
        ("TPU v5p", 8, "8x16x48"),
    ):
        assert rl.sharded_topology(chip, n) == rl.sharded_topology(chip, n, slice_shape=shape)
    with pytest.raises(ValueError, match="not both"):
        rl.sharded_estimate(64, 1024, 1024, "TPU v5p", 8, topology="line", slice_shape="2x2x2")
    with pytest.raises(ValueError, match="slice shape is for TPU"):
        rl.sharded_critical_D("H100 SXM", 8, slice_shape="2x2x2")


@pytest.mark.parametrize("chip,n", [c for c in CASES if c[1] <= 8 and "TPU" not in c[0]])
def test_step_time_uses_the_same_route(chip, n):
    """transformer.step_time's tensor-parallel all-reduces (2 per layer of B x d_model bf16)."""
    from roofline import transformer as tf

    model = tf.LLAMA_8B_MODEL
    step = tf.step_time(model, 64, 1024, chip, "decode", n_chips=n)
    nbytes = 64 * model.d_model * 2
    expected = 2 * model.layers * rl.all_reduce_time(chip, nbytes, n)
    assert step.communication_s == pytest.approx(expected, rel=1e-12)


def test_serving_explorer_table_is_the_package_answer():
    """The serving explorer's page data (seconds per byte, fixed seconds per tp) reproduce the
    package's tensor-parallel all-reduce, latency included."""
    table = serving_explorer.web_constants()
    for name, data in table["chips"].items():
        for tp, (per_byte, fixed) in data["all_reduce"].items():
            want = tp_all_reduce_seconds(name, int(tp), 3e7)  # latency by the links
            assert per_byte * 3e7 + fixed == pytest.approx(want, rel=1e-9), (name, tp)


def test_matmul_explorer_page_looks_routing_up():
    """The browser edition reads each all-reduce from the package, not its own rules: per n and
    slice choice, bytes on the busiest link per byte of the array, times the array over one
    link, is the package's all-reduce (one axis: sharded_topology's; the n chips alone:
    all_reduce_time on the slice Google sells for n)."""
    from roofline.web import chip_data

    for name in ("TPU v5e", "TPU v5p", "TPU7x", "H100 SXM", "MI300X"):
        chip = rl.get_chip(name)
        link = chip_data(name)["link"]
        for k, by_slice in link["all_reduce"].items():
            n = int(k)
            axis = by_slice["axis"]
            assert axis["topology"] == rl.sharded_topology(name, n)
            want = rl.collective_time(
                "all-reduce", V, n, chip.link_bytes_per_s, axis["topology"], links=chip.link_count
            )
            assert axis["per_byte"] * V / chip.link_bytes_per_s == pytest.approx(want, rel=1e-12)
            if "alone" in by_slice:
                alone = rl.all_reduce_time(name, V, n, slice_shape=slice_shape(name, n))
                got = by_slice["alone"]["per_byte"] * V / chip.link_bytes_per_s
                assert got == pytest.approx(alone, rel=1e-12)
        assert ("alone" in link["all_reduce"]["2"]) == (name.startswith("TPU"))


def test_slice_shapes_are_googles():
    # v5e (cloud.google.com/tpu/docs/v5e, topologies 2x2 ... 16x16) and v5p (docs/v5p table:
    # 2x2x1, 2x2x2, 2x4x4, 4x4x4, 4x4x8, 4x8x8, 8x8x8, ..., 16x16x24 = 6144 chips)
    assert [slice_shape("TPU v5e", n) for n in (4, 8, 16, 32, 64, 128, 256)] == [
        (2, 2),
        (2, 4),
        (4, 4),
        (4, 8),
        (8, 8),
        (8, 16),
        (16, 16),
    ]
    v5p = {4: (2, 2), 8: (2, 2, 2), 32: (2, 4, 4), 64: (4, 4, 4), 128: (4, 4, 8)}
    v5p |= {256: (4, 8, 8), 512: (8, 8, 8), 2048: (8, 16, 16), 6144: (16, 16, 24)}
    # the v5p table's row "8x8x16 | 2048 | 1024 | 256 | 16" (topology, cores, chips, hosts,
    # cubes): 1024 chips are 8x8x16, not 4x16x16 (the same longest axis, less cubic)
    v5p |= {1024: (8, 8, 16), 4096: (16, 16, 16)}
    for n, shape in v5p.items():
        assert slice_shape("TPU v5p", n) == shape, n


# Google's v4 page prints no table of slice shapes. Google's cluster tool xpk
# (github.com/AI-Hypercomputer/xpk, commit 367c8382, src/xpk/core/system_characteristics.py)
# lists, for prefix 'v4', the default topology of each size it sells, in these words:
# "default_topologies=set(['2x2x1', '2x2x2', '2x2x4', '2x4x4', '4x4x4', '4x4x8', '4x8x8',
# '8x8x8', '8x8x12', '8x8x16', '8x16x16'])" (its accelerator types v4-8 ... v4-4096 count
# TensorCores, two per chip: v4-2048 is 8x8x16 = 1024 chips). Each row: the chips are the
# product of the listed axes; the book's shape for that many chips is the listed one.
V4_SOLD_SHAPES = (
    "2x2x1",
    "2x2x2",
    "2x2x4",
    "2x4x4",
    "4x4x4",
    "4x4x8",
    "4x8x8",
    "8x8x8",
    "8x8x12",
    "8x8x16",
    "8x16x16",
)


@pytest.mark.parametrize("listed", V4_SOLD_SHAPES)
def test_tpu_v4_slice_shapes_are_the_ones_google_lists(listed):
    axes = tuple(int(a) for a in listed.split("x"))
    chips = math.prod(axes)  # 2x2x1 = 4 ... 8x8x16 = 1024 ... 8x16x16 = 2048
    assert slice_shape("TPU v4", chips) == tuple(sorted(a for a in axes if a > 1))


def test_1024_tpu_v4_chips_are_8x8x16_and_its_axes_route_so():
    # 1024 v4 chips = 8x8x16 (xpk's v4-2048), every axis wrapped (whole cubes). A tensor
    # parallel axis of 8 takes the first slice axis of 8: a bidirectional ring of 8, 45 GB/s
    # one way per link: 1 GB all-reduced in 2 x 7/8 x 1e9 / (2 x 45e9) = 19.44 ms (on the
    # 4x16x16 the book used to pick, tp 8 would take 4 of the axis of 4 then 2 of an axis of
    # 16: a different route). The whole 1024: three wrapped axes, 6 x 45 GB/s into a chip:
    # 2 x 1023/1024 x 1e9 / 270e9 = 7.40 ms.
    assert slice_shape("TPU v4", 1024) == (8, 8, 16)
    r = route("TPU v4", 8, slice_chips=1024)
    assert [(a.chips, a.topology) for a in r.axes] == [(8, "bidirectional-ring")]
    assert collective_seconds("all-reduce", V, r) == pytest.approx(2 * 7 / 8 * V / (2 * 45e9))
    whole = rl.all_reduce_time("TPU v4", V, 1024)
    assert whole == pytest.approx(2 * 1023 / 1024 * V / 270e9)


def test_all_reduce_by_hand():
    """t = 2 (N-1)/N V / sum R_i, R_i = W for a line or one link, 2W for a wrapped axis."""
    # v5e 4 = 2x2 (no 1x4 v5e slice is sold): two axes of one link, R = 2W
    t4 = 2 * 3 / 4 * V / (2 * W_V5E)
    assert rl.all_reduce_time("TPU v5e", V, 4) == pytest.approx(t4)  # 16.7 ms
    assert t4 == pytest.approx(16.67e-3, rel=1e-3)
    # the 1x4 line the training layout used to assume: 2 (3/4) V / W = 33.3 ms, twice as long
    assert rl.collective_time("all-reduce", V, 4, W_V5E, "line") == pytest.approx(2 * t4)
    # v5e 8 = 2x4: one link + a line of 4, R = 2W
    assert rl.all_reduce_time("TPU v5e", V, 8) == pytest.approx(2 * 7 / 8 * V / (2 * W_V5E))
    # v5e 256 = the wrapped 16x16 pod, R = 4W
    assert rl.all_reduce_time("TPU v5e", V, 256) == pytest.approx(2 * 255 / 256 * V / 1.8e11)
    # v5p 128 = 4x4x8 of whole cubes, every axis wrapped: R = 6W
    assert rl.all_reduce_time("TPU v5p", V, 128) == pytest.approx(2 * 127 / 128 * V / 5.4e11)
    # v5p 6144 = 16x16x24, wrapped: R = 6W
    assert rl.all_reduce_time("TPU v5p", V, 6144) == pytest.approx(2 * 6143 / 6144 * V / 5.4e11)
    # 8 H100s under NVSwitch: 18 links x 25 GB/s = 450 GB/s
    assert rl.all_reduce_time("H100 SXM", V, 8) == pytest.approx(2 * 7 / 8 * V / 450e9)
    # 8 MI300X, a full mesh of 64 GB/s links: each chip's 1/8 goes over 7 links at once
    assert rl.all_reduce_time("MI300X", V, 8) == pytest.approx(2 * V / 8 / 64e9)


def test_multi_axis_split_follows_bandwidth():
    """Axis bandwidths R_i; sending R_i / sum R of the array over axis i ends every axis
    together, so t = (N-1)/N V / sum R (all-gather). An equal split waits for the slowest."""
    # 2x4 of single links (R = W each): 7/8 V / 2W
    t = multi_axis_collective_time("all-gather", V, (2, 4), W_V5E, ("ring", "line"))
    assert t == pytest.approx(7 / 8 * V / (2 * W_V5E))
    # a wrapped axis of 16 (R = 2W) beside a line of 4 (R = W): 63/64 V / 3W
    t = multi_axis_collective_time("all-gather", V, (16, 4), W_V5E, ("bidirectional-ring", "line"))
    assert t == pytest.approx(63 / 64 * V / (3 * W_V5E))
    # per-axis bandwidths W and 3W on two lines of 4: 15/16 V / 4W; all-reduce twice that
    t = multi_axis_collective_time("all-reduce", V, (4, 4), (W_V5E, 3 * W_V5E), "line")
    assert t == pytest.approx(2 * 15 / 16 * V / (4 * W_V5E))
    # check the split: axis 2 carries 3/4 of the bytes, axis 1 1/4; each part's time is equal
    part1 = 15 / 16 * (V / 4) / W_V5E
    part2 = 15 / 16 * (3 * V / 4) / (3 * W_V5E)
    assert part1 == pytest.approx(part2) == pytest.approx(t / 2)
    # one axis: exactly the one-axis collective
    assert multi_axis_collective_time("all-gather", V, (8,), W_V5E, "line") == pytest.approx(
        rl.collective_time("all-gather", V, 8, W_V5E, "line")
    )
    # latency: the steps of every axis (3 + 3 on two lines of 4)
    t0 = multi_axis_collective_time("all-gather", V, (4, 4), W_V5E, "line")
    t1 = multi_axis_collective_time("all-gather", V, (4, 4), W_V5E, "line", latency_s=1e-6)
    assert t1 - t0 == pytest.approx(6e-6)


def test_mlperf_v5p_layout_spans_slices_over_dcn():
    """A 6144-chip TPU v5p job as 16 slices of 384 (the MLPerf GPT-3 layout, data 16 x FSDP 48 x
    tensor 8, had it put data 16 over DCN; the run itself was one slice, per its MaxText flags).
    Modelled, not refused."""
    layout = {"dp": 16, "fsdp": 48, "tp": 8}
    step = rl.training_step(
        "GPT-3 175B", "TPU v5p", 6144, 6144 * 2048, 2048, layout, slice_chips=384
    )
    assert math.isfinite(step.t_lower)
    v5p = rl.get_chip("TPU v5p")
    # 384 chips of whole cubes, as cubic as they come: 4x8x12 (all axes wrap)
    assert slice_shape("TPU v5p", 384) == (4, 8, 12)
    # tensor 8: the whole wrapped axis of 4 (R = 2W) and 2 chips of the next (one link, W)
    tp = route("TPU v5p", 8, 1, 384)
    assert [(a.chips, a.topology) for a in tp.axes] == [(4, "bidirectional-ring"), (2, "ring")]
    # FSDP 48, 8 apart: 4 chips 2 apart round the wrapped axis of 8 (each link shared by 2
    # interleaved groups: R = 2 (W/2) = W) and the whole wrapped axis of 12 (R = 2W)
    fsdp = route("TPU v5p", 48, 8, 384)
    assert [(a.chips, a.topology, a.one_way_bytes_per_s) for a in fsdp.axes] == [
        (4, "bidirectional-ring", W_V5P / 2),
        (12, "bidirectional-ring", W_V5P),
    ]
    assert collective_seconds("all-gather", V, fsdp) == pytest.approx(47 / 48 * V / (3 * W_V5P))
    # data 16, 384 apart: every member in another slice, over DCN (one NIC share per chip)
    dp = route("TPU v5p", 16, 384, 384)
    assert dp.kind == "network"
    net = v5p.network_bytes_per_s
    assert collective_seconds("all-reduce", V, dp) == pytest.approx(2 * 15 / 16 * V / net)
    grads = 2 * rl.get_model("GPT-3 175B").params / 8  # bf16 gradients of the tp slice
    assert step.times["DP"] == pytest.approx(2 * 15 / 16 * (grads / 48) / net, rel=1e-12)
    assert "DCN" in step.labels["DP"]


def test_step_time_takes_a_per_collective_latency():
    """Decode at batch 1 on 8 GPUs is latency-bound: 80 layers x 2 all-reduces x ~10 us."""
    from roofline import transformer as tf

    layer = tf.TransformerShape(
        "70B-like", d_model=8192, d_ff=28672, n_heads=64, n_kv_heads=8, head_dim=128
    )
    model = tf.ModelShape("70B-like", layer, n_layers=80, vocab_size=128256)
    bare = tf.step_time(model, 1, 4096, "H100 SXM", n_chips=8)
    slow = tf.step_time(model, 1, 4096, "H100 SXM", n_chips=8, latency_s=10e-6)
    # 160 all-reduces x 10 us = 1.6 ms on top of the bandwidth term (8192 x 2 bytes: 64 ns)
    assert slow.communication_s - bare.communication_s == pytest.approx(160 * 10e-6)
    assert bare.communication_s == pytest.approx(160 * 2 * 7 / 8 * 8192 * 2 / 450e9)
    assert slow.communication_s > 1.6e-3


@pytest.mark.parametrize("chip,n", [("H100 SXM", 8), ("H100 SXM", 1024), ("TPU v4", 64)])
def test_step_explorer_gives_the_same_answer(chip, n):
    """The training-step explorer (Python side; its page looks these numbers up)."""
    from roofline import step_explorer

    step, reason = step_explorer.step_or_reason("Llama 3 8B", chip, n, "data parallel")
    assert reason is None
    grads = STATE_BYTES_PER_PARAM["gradients"] * rl.get_model("Llama 3 8B").params
    assert step.times["DP"] == pytest.approx(rl.all_reduce_time(chip, grads, n), rel=1e-12)


def test_pcie_cards_share_a_host_and_then_the_network():
    """No chip-to-chip link (L4): a ring over PCIe inside one host of PCIE_HOST_CHIPS cards,
    one x16 link each way (Gen4: 31.5 GB/s); beyond the host, the network."""
    from roofline.topology import PCIE_HOST_CHIPS

    l4 = rl.get_chip("L4")
    r = route(l4, 4)
    assert [(a.chips, a.topology) for a in r.axes] == [(4, "ring")]
    # one-way ring all-reduce: 2 (3/4) V / W_pcie
    assert rl.all_reduce_time(l4, V, 4) == pytest.approx(2 * 3 / 4 * V / l4.host_bytes_per_s)
    assert route(l4, PCIE_HOST_CHIPS).kind == "link"
    if l4.network_bytes_per_s is None:
        with pytest.raises(ValueError, match="network_bytes_per_s"):
            route(l4, 2 * PCIE_HOST_CHIPS)
    # an NVLink bridge joins two H100 PCIe cards: all 12 links at once, then the network
    assert route("H100 PCIe", 2).axes[0].topology == "switch"


def test_a_job_of_two_slices_over_the_network_is_timed_not_refused():
    # 6144 TPU v4 (PaLM's two pods of 3072) all-reducing 1 GB: each 3072-chip slice (16x16x12,
    # whole cubes, so all three axes wrap: 3 axes x 2 links x 45 GB/s = 270 GB/s into a chip)
    # reduce-scatters and all-gathers (2 x 3071/3072 x V / 270e9), and between the two slices
    # each chip all-reduces its 1/3072 shard over DCN (2 x 1/2 x V/3072 / 6.25e9), in sequence.
    V = 1e9
    by_hand = 2 * 3071 / 3072 * V / (3 * 2 * 45e9) + 2 * (1 / 2) * (V / 3072) / 6.25e9
    assert rl.all_reduce_time("TPU v4", V, 6144) == pytest.approx(by_hand, rel=1e-9)
    # two v5p slices of 6144 (Google schedules at most 6144 chips in one slice)
    assert rl.topology.route("TPU v5p", 12288).per_node == 6144


def test_one_v5p_job_spans_at_most_6144_chips():
    # Google's v5p page: a pod joins 8960 chips, "The largest job that can be scheduled is a
    # 96 cube (6144 chip) job": 6144 chips stay on ICI, 8192 run as two slices of 4096 (the
    # largest equal share of 8192 that fits in 6144) joined by the data-centre network
    assert route("TPU v5p", 6144).kind == "link"
    big = route("TPU v5p", 8192)
    assert (big.kind, big.per_node) == ("two-level", 4096)


def test_an_explicit_slice_shape_is_checked():
    """`slice_shape` takes (8, 16, 48) or "8x16x48" (MLPerf's v5p system file prints
    accelerator_interconnect_topology "8x16x48"); a shape the chip's torus cannot be refuses
    with a message that says what to pass."""
    from roofline.topology import parse_slice_shape

    assert parse_slice_shape("TPU v5p", "8x16x48", 6144) == (8, 16, 48)
    assert parse_slice_shape("TPU v5p", (48, 8, 16)) == (8, 16, 48)  # shortest axis first
    assert parse_slice_shape("TPU v5e", "2x2x1") == (2, 2)  # an axis of 1 is no axis
    assert parse_slice_shape("TPU v5e", "16x8") == (8, 16)  # sold as 8x16
    assert parse_slice_shape("TPU v5p", "2x4x4") == (2, 4, 4)
    bad = [
        ("TPU v5p", "8x16x48", 4096, "not the 4096"),  # 8 x 16 x 48 = 6144 chips
        ("TPU v5p", "4x4x4x4", None, "at most 3 axes"),
        ("TPU v5p", "4x4x5", None, "whole 4x4x4 cubes"),  # 80 chips, not whole cubes
        ("TPU v5e", "4x32", None, "at most 16"),  # a v5e pod is 16 x 16
        ("TPU v5e", "16x16x2", None, "at most 2 axes"),
        ("TPU v5p", "16x24x32", None, "at most 6144"),  # 12,288 chips: two slices
        ("TPU v5p", "8 by 16", None, "whole numbers"),
        ("TPU v5p", (0, 4), None, "whole numbers"),
        ("H100 SXM", "2x4", None, "TPU tori"),
        # below a cube and on 2D tori only the shapes Google sells (v5e page: 2x2, 2x4, 4x4,
        # 4x8, 8x8, 8x16, 16x16; v5p 2x2x1, 2x2x2, 2x2x4, 2x4x4)
        ("TPU v5e", "2x16", None, "it sells 4x8"),
        ("TPU v5e", "3x5", None, "nor any other of 15"),
        ("TPU v5p", "1x4x4", None, "it sells 2x2x4"),
    ]
    for chip, shape, n, words in bad:
        with pytest.raises(ValueError, match=words):
            parse_slice_shape(chip, shape, n)
    with pytest.raises(ValueError, match="not the 384"):
        rl.training_step(
            "GPT-3 175B",
            "TPU v5p",
            6144,
            6144 * 2048,
            2048,
            "dp=16,fsdp=48,tp=8",
            slice_chips=384,
            slice_shape="8x16x48",
        )


def test_an_explicit_shape_prefers_several_whole_axes_as_mesh_utils():
    """jax's mesh_utils places a mesh axis on as many whole physical axes as multiply to its
    size (3, then 2, then 1): tp = 16 on a 4x4x16 v5p slice (four cubes, every axis wraps) is
    the 4x4 plane, two wrapped rings of 4 (each R = 2W), not the axis of 16."""
    r = route("TPU v5p", 16, 1, slice_shape="4x4x16")
    assert [(a.chips, a.topology, a.one_way_bytes_per_s) for a in r.axes] == [
        (4, "bidirectional-ring", W_V5P),
        (4, "bidirectional-ring", W_V5P),
    ]
    # no product of two or three axes is 16 on 8x16x48: the axis of 16, wrapped
    r = route("TPU v5p", 16, 384, slice_shape="8x16x48", inner=(8, 48))
    assert [(a.chips, a.topology) for a in r.axes] == [(16, "bidirectional-ring")]


def test_mlperf_v5p_on_its_own_8x16x48_slice():
    """The run's own topology (8x16x48): tensor 8, FSDP 48 and data 16 each take a whole slice
    axis of their degree; whole cubes, so every axis wraps (a bidirectional ring, R = 2W)."""
    shape = "8x16x48"
    for size, stride, inner in ((8, 1, ()), (48, 8, (8,)), (16, 384, (8, 48))):
        r = route("TPU v5p", size, stride, slice_shape=shape, inner=inner)
        assert [(a.chips, a.topology, a.one_way_bytes_per_s) for a in r.axes] == [
            (size, "bidirectional-ring", W_V5P)
        ]
    # Google's sold shape for 6144 chips, 16 x 16 x 24, has no axis of 8: the tensor group is
    # 8 chips of a wrapped axis of 16, a line (R = W)
    tp = route("TPU v5p", 8, 1, 6144)
    assert [(a.chips, a.topology) for a in tp.axes] == [(8, "line")]

    common = ("GPT-3 175B", "TPU v5p", 6144, 6144 * 2048, 2048, "dp=16,fsdp=48,tp=8")
    own = rl.training_step(*common, dtype="int8", slice_shape=shape)
    sold = rl.training_step(*common, dtype="int8")
    m = rl.get_model("GPT-3 175B")
    # 8 sequences of 2048 per replica (6144 / (16 x 48)), one micro-batch; per step each
    # layer all-reduces the activations (8 x 2048 x d_model x 2 bytes) 4 times (2 forward,
    # 2 backward) over the ring of 8: 2 (7/8) V / (2W) each, 96 layers
    v = 8 * 2048 * 12288 * 2
    assert (m.d_model, m.layers) == (12288, 96)  # GPT-3 175B, Brown et al. 2020, Table 2.1
    tp_by_hand = 96 * 4 * 2 * 7 / 8 * v / (2 * W_V5P)  # 1.503 s
    assert own.times["TP"] == pytest.approx(tp_by_hand, rel=1e-12)
    assert tp_by_hand == pytest.approx(1.5032, rel=1e-4)
    assert sold.times["TP"] == pytest.approx(2 * tp_by_hand, rel=1e-12)  # a line: R = W
    # FSDP 48 round its wrapped axis: weights gathered twice, gradients scattered once, each
    # (47/48) of the tp slice's bf16 bytes (2 P / 8) over 2W
    fsdp_by_hand = 3 * 47 / 48 * (2 * m.params / 8) / (2 * W_V5P)
    assert own.times["FSDP"] == pytest.approx(fsdp_by_hand, rel=1e-12)
    # data 16 round its wrapped axis: the 1/384 bf16 gradient shard, 2 (15/16) V / 2W
    dp_by_hand = 2 * 15 / 16 * (2 * m.params / 384) / (2 * W_V5P)
    assert own.times["DP"] == pytest.approx(dp_by_hand, rel=1e-12)
    # on its own slice the step is compute-bound; as Google's sold shape maps it, TP-bound
    assert (own.bound, sold.bound) == ("compute", "link")
    assert own.tokens_per_s == pytest.approx(6144 * 2048 / own.times["math"])
    # per chip: int8 peak / (6 P + 12 L d T) FLOPs per token (PaLM's count, attention not
    # causal) = 918e12 / (6 x 174.57e9 + 12 x 96 x 12288 x 2048) = 852.85 tokens/s
    per_chip = 918e12 / (6 * m.params + 12 * 96 * 12288 * 2048)
    assert own.tokens_per_s / 6144 == pytest.approx(per_chip, rel=1e-4)
    assert per_chip == pytest.approx(852.85, rel=1e-4)
    assert sold.tokens_per_s == pytest.approx(6144 * 2048 / (2 * tp_by_hand))  # 681 per chip


def test_tpu7x_slices_are_whole_cubes_up_to_a_pod():
    """Google's xpk lists TPU7x topologies as whole 4x4x4 cubes, axes 4..256, at most 144 cubes
    (its generate_tpu_topologies(max_cubes=144)), e.g. 4x4x124 and 16x24x24."""
    from roofline.topology import parse_slice_shape

    assert rl.get_chip("TPU7x").interconnect.axis_chips == 256
    assert parse_slice_shape("TPU7x", "4x4x124") == (4, 4, 124)  # 31 cubes, in xpk's list
    assert parse_slice_shape("TPU7x", "16x24x24", 9216) == (16, 24, 24)  # 4 x 6 x 6 = 144 cubes
    with pytest.raises(ValueError, match="at most 9216"):
        parse_slice_shape("TPU7x", "16x24x28")  # 4 x 6 x 7 = 168 cubes: beyond one pod
    # the sold shape for a whole pod: 144 cubes as cubic as they come, 4 x 6 x 6 cubes
    assert slice_shape("TPU7x", 9216) == (16, 24, 24)
    # whole cubes wrap round (assumed as on v5p): three bidirectional rings of 100 GB/s links
    r = route("TPU7x", 9216)
    assert [a.topology for a in r.axes] == ["bidirectional-ring"] * 3


def test_v5e_dcn_from_googles_pod_figure():
    """Google's v5e page: "TPU Pod size: 256 chips", "Data center network bandwidth per Pod:
    6.4 Tbps": 6.4e12 / 256 = 25 Gb/s per chip = 3.125e9 bytes/s, the scaling book's 2.5e10
    bytes/s per 8-chip host again (2.5e10 / 8 = 3.125e9)."""
    v5e = rl.get_chip("TPU v5e")
    assert v5e.network_bytes_per_s == 3.125e9 == 2.5e10 / 8
    assert v5e.network.source.url == "https://cloud.google.com/tpu/docs/v5e"
    assert "6.4 Tbps" in v5e.network.source.says


@pytest.mark.parametrize("shape", ["4x4x4", "4x4x8", "4x8x8", "8x8x8", "12x16x16", "16x16x16"])
def test_tpu_v4_whole_cube_slices_wrap(shape):
    """Every v4 slice of whole 4x4x4 cubes is a 3D torus (the scaling book: "Any multiple of a
    full cube (e.g. 4x4x4 or 4x4x8) will have wraparounds"; Jouppi et al. 2023 call the
    16x16x16 system a 3D torus). Google's v4 sentence about 2A=B=C or 2A=2B=C shapes names the
    slices that may *also* be wired as a twisted torus (its types-topologies page: "also have
    topology variants optimized for all-to-all"), not the only ones that wrap."""
    axes = tuple(int(a) for a in shape.split("x"))
    r = route("TPU v4", math.prod(axes), slice_shape=shape)
    assert {a.topology for a in r.axes} == {"bidirectional-ring"}


def test_tpu_v5p_whole_cubes_keep_full_wraparound():
    # Google's v5p page: "all 4x4x4 and larger slices have full 3D torus connectivity"
    for shape in ("4x4x4", "8x8x8", "4x4x12"):
        axes = tuple(int(a) for a in shape.split("x"))
        r = route("TPU v5p", math.prod(axes), slice_shape=shape)
        assert {a.topology for a in r.axes} == {"bidirectional-ring"}


def test_tpu_v4_all_reduce_on_whole_cubes_by_hand():
    # 1 GB over 64 v4 chips (4x4x4, a torus): three bidirectional rings of 4, each link 45 GB/s
    # each way, 3 x 2 x 45 = 270 GB/s into a chip: 2 x 63/64 x 1e9 / 270e9 = 7.292 ms
    assert rl.all_reduce_time("TPU v4", 1e9, 64) == pytest.approx(2 * 63 / 64 * 1e9 / 270e9)
    # 128 chips (4x4x8): the same three rings: 2 x 127/128 x 1e9 / 270e9 = 7.350 ms
    assert rl.all_reduce_time("TPU v4", 1e9, 128) == pytest.approx(2 * 127 / 128 * 1e9 / 270e9)


# -- an explicit slice shape, wherever a slice is asked for (issue 30) ------------------------
# 8 TPU v5p chips (one-way ICI link 90 GB/s), 1 GB all-reduced:
# - alone, an 8-chip slice is Google's 2x2x2: three axes of 2 chips (one link each, a "ring" of
#   two), the array split over them in proportion to bandwidth, 3 x 90 = 270 GB/s into a chip:
#   2 x 7/8 x 1e9 / 270e9 = 6.481 ms;
# - the same 8 chips as the axis of 8 of MLPerf's 8x16x48 slice (whole cubes: the axis wraps):
#   one bidirectional ring of 8, 2 x 90 = 180 GB/s: 2 x 7/8 x 1e9 / 180e9 = 9.722 ms.
V5P_8_ALONE_S = 2 * 7 / 8 * 1e9 / (3 * 90e9)
V5P_8_ON_AXIS_S = 2 * 7 / 8 * 1e9 / (2 * 90e9)


def test_all_reduce_time_takes_an_explicit_slice_shape():
    assert V5P_8_ALONE_S == pytest.approx(6.481e-3, abs=1e-6)
    assert V5P_8_ON_AXIS_S == pytest.approx(9.722e-3, abs=1e-6)
    assert rl.all_reduce_time("TPU v5p", 1e9, 8) == pytest.approx(V5P_8_ALONE_S, rel=1e-12)
    on_axis = rl.all_reduce_time("TPU v5p", 1e9, 8, slice_shape="8x16x48")
    assert on_axis == pytest.approx(V5P_8_ON_AXIS_S, rel=1e-12)
    with pytest.raises(ValueError, match="slice shape is for TPU"):
        rl.all_reduce_time("H100 SXM", 1e9, 8, slice_shape="2x2x2")


def test_serving_tp_all_reduce_takes_an_explicit_slice_shape():
    # the tp = 8 replica's all-reduce, no per-hop latency: the two figures above
    assert tp_all_reduce_seconds("TPU v5p", 8, 1e9, 0.0) == pytest.approx(V5P_8_ALONE_S)
    assert tp_all_reduce_seconds("TPU v5p", 8, 1e9, 0.0, "8x16x48") == pytest.approx(
        V5P_8_ON_AXIS_S
    )
    # serving Llama 3 70B (80 layers, d_model 8192) on 8 v5p at batch 64: 2 all-reduces per
    # layer of 64 x 8192 x 2 bytes = 1,048,576 B; 160 x 1,048,576 x 2 x 7/8 / (270 or 180 GB/s)
    per_step = 2 * 80 * 64 * 8192 * 2 * 2 * 7 / 8
    for shape, gbps in ((None, 270e9), ("8x16x48", 180e9)):
        est = rl.serving_estimate(
            "Llama 3 70B", "TPU v5p", 8, batch=64, hop_latency_s=0.0, slice_shape=shape
        )
        assert est.times["TP"] == pytest.approx(per_step / gbps)


def test_model_cli_passes_the_slice_shape(tmp_path):
    from roofline.model_cli import main

    # --serve, 1 us per collective step (the default): on 2x2x2, 3 axes x 2(2-1) = 6 steps; on
    # a bidirectional ring of 8, 2 x floor(8/2) = 8 steps; 160 all-reduces of 1,048,576 B
    nbytes = 64 * 8192 * 2
    by_hand = {
        None: 160 * (2 * 7 / 8 * nbytes / 270e9 + 6e-6),
        "8x16x48": 160 * (2 * 7 / 8 * nbytes / 180e9 + 8e-6),
    }
    for shape, expected in by_hand.items():
        out = tmp_path / f"{shape}.json"
        argv = ["Llama 3 70B", "--chip", "v5p", "--chips", "8", "--serve", "--batch", "64"]
        argv += ["--json", str(out)] + (["--slice-shape", shape] if shape else [])
        assert main(argv) == 0
        tp_s = json.loads(out.read_text())["times_s"]["TP"]
        assert tp_s == pytest.approx(expected)
    # a shape that is not a slice: exit status 2 with what to pass
    assert (
        main(["Llama 3 70B", "--chip", "v5p", "--chips", "8", "--serve"] + ["--slice-shape", "3x3"])
        == 2
    )
