"""roofline.plots: ridge points, regions, axes, above-roof flags, palette, alt text.

Expected values are derived here from the catalog's raw records (peak / bandwidth),
not read back from the functions under test.
"""

import math

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import pytest  # noqa: E402

import roofline as rl  # noqa: E402
from roofline import plots  # noqa: E402
from roofline.plots import Point  # noqa: E402

OKABE_ITO = {"#000000", "#E69F00", "#56B4E9", "#009E73", "#F0E442", "#0072B2", "#D55E00", "#CC79A7"}


def _lines(fig, prefix):
    return [
        line
        for ax in fig.axes
        for line in ax.get_lines()
        if (line.get_gid() or "").startswith(prefix)
    ]


def _regions(fig):
    patches = [p for p in fig.axes[0].patches if (p.get_gid() or "").startswith("region:")]
    return sorted((p.get_x(), p.get_x() + p.get_width()) for p in patches)


def _dense_ridge(name, dtype="bf16", bandwidth=None):
    chip = rl.get_chip(name)
    peak = chip.peak(dtype).dense_flops_per_s
    return peak / (bandwidth if bandwidth is not None else chip.hbm_bytes_per_s), peak


@pytest.mark.parametrize("name", ["H100 SXM", "TPU v5e", "RTX 3090", "MI300X"])
def test_ridge_marker_sits_at_peak_over_bandwidth(name):
    fig = plots.roofline_figure(name, "bf16")
    ridge, peak = _dense_ridge(name)
    (marker,) = _lines(fig, "ridge:")
    assert marker.get_xdata()[0] == pytest.approx(ridge, rel=1e-12)
    assert marker.get_ydata()[0] == pytest.approx(peak, rel=1e-12)
    # the drawn roof bends exactly there: slope 1 below, flat above
    (roof,) = _lines(fig, "roof:")
    x, y = roof.get_xdata(), roof.get_ydata()
    below = x < ridge
    assert y[below] == pytest.approx(x[below] * rl.get_chip(name).hbm_bytes_per_s, rel=1e-12)
    assert all(v == pytest.approx(peak) for v in y[~below])


def test_regions_split_exactly_at_the_ridge():
    fig = plots.roofline_figure("H100 SXM", "bf16")
    ridge, _ = _dense_ridge("H100 SXM")
    (a0, a1), (b0, b1) = _regions(fig)
    assert a1 == pytest.approx(ridge, rel=1e-12)
    assert b0 == pytest.approx(ridge, rel=1e-12)
    assert [label for *_, label in fig.roofline_regions] == ["memory-bound", "compute-bound"]
    boundary = [line for line in fig.axes[0].get_lines() if line.get_gid() == "region-boundary"]
    assert boundary and boundary[0].get_xdata()[0] == pytest.approx(ridge, rel=1e-12)


def test_two_bandwidths_give_two_ridges_and_three_regions():
    chip = rl.get_chip("H100 SXM")
    pcie = chip.host_link.one_way_bytes_per_s
    fig = plots.roofline_figure(
        chip, "bf16", bandwidths={"HBM": chip.hbm_bytes_per_s, "PCIe": pcie}
    )
    xs = sorted(m.get_xdata()[0] for m in _lines(fig, "ridge:"))
    peak = chip.peak("bf16").dense_flops_per_s
    assert xs == pytest.approx([peak / chip.hbm_bytes_per_s, peak / pcie], rel=1e-12)
    regions = _regions(fig)
    assert len(regions) == 3
    assert regions[0][1] == pytest.approx(xs[0]) and regions[1][0] == pytest.approx(xs[0])
    assert regions[1][1] == pytest.approx(xs[1]) and regions[2][0] == pytest.approx(xs[1])


def test_all_bandwidths_draw_every_memory_level():
    chip = rl.get_chip("TPU v5e")
    fig = plots.roofline_figure(chip, bandwidths="all")
    peak = chip.peak("bf16").dense_flops_per_s
    expected = sorted(
        peak / bw
        for bw in (
            chip.hbm_bytes_per_s,
            chip.interconnect.one_way_bytes_per_s,
            chip.host_link.one_way_bytes_per_s,
        )
    )
    xs = sorted(m.get_xdata()[0] for m in _lines(fig, "ridge:"))
    assert xs == pytest.approx(expected, rel=1e-12)


def test_several_chips_get_distinct_colours_and_no_shading():
    fig = plots.roofline_figure(["H100 SXM", "TPU v5e"])
    roofs = _lines(fig, "roof:")
    assert len(roofs) == 2 and roofs[0].get_color() != roofs[1].get_color()
    assert _regions(fig) == []


def test_axes_are_log_log_with_units():
    fig = plots.roofline_figure("H100 SXM")
    ax = fig.axes[0]
    assert ax.get_xscale() == "log" and ax.get_yscale() == "log"
    assert ax.get_xlabel() == "Arithmetic intensity (FLOPs/byte)"
    assert ax.get_ylabel() == "Attainable performance (FLOP/s)"
    fig.canvas.draw()
    labels = [t.get_text() for t in ax.get_yticklabels() if t.get_text()]
    assert "100 TFLOP/s" in labels and "1 PFLOP/s" in labels
    assert all(label.endswith("FLOP/s") for label in labels)


def test_points_above_the_roof_are_flagged_and_below_are_not():
    chip = rl.get_chip("H100 SXM")
    bw = chip.hbm_bytes_per_s
    dense = chip.peak("bf16").dense_flops_per_s
    fig = plots.roofline_figure(
        chip,
        operations=[
            Point("too fast", 10, 2 * bw * 10),  # twice the memory roof
            Point("sparse peak", 1000, chip.peak("bf16").sparse_flops_per_s),  # Q5
            Point("fine", 10, 0.5 * bw * 10),
            Point("at the peak", 1000, dense),
        ],
    )
    flagged = {v["label"] for v in fig.roofline_violations}
    assert flagged == {"too fast", "sparse peak"}
    assert {m.get_gid() for m in _lines(fig, "violation:")} == {
        "violation:too fast",
        "violation:sparse peak",
    }
    notes = [t.get_text() for t in fig.axes[0].texts if "above the roof" in t.get_text()]
    assert len(notes) == 2 and all("sparse vs dense" in n for n in notes)
    assert "ABOVE the roof" in plots.alt_text(fig)


def test_cost_is_placed_on_the_roof_at_its_intensity():
    chip = rl.get_chip("TPU v5e")
    B, D, F = 128, 4096, 4096
    fig = plots.roofline_figure(chip, operations=[rl.matmul(B, D, F)])
    (point,) = _lines(fig, "operation:")
    intensity = 2 * B * D * F / (2 * (B * D + D * F + B * F))
    assert point.get_xdata()[0] == pytest.approx(intensity, rel=1e-12)
    expected = min(chip.peak("bf16").dense_flops_per_s, chip.hbm_bytes_per_s * intensity)
    assert point.get_ydata()[0] == pytest.approx(expected, rel=1e-12)
    assert fig.roofline_violations == []


def test_palette_is_okabe_ito_and_used_for_lines():
    assert {v.upper() for v in plots.PALETTE.values()} == OKABE_ITO
    fig = plots.roofline_figure(
        ["H100 SXM", "TPU v5e", "A100 SXM"], operations=[Point("p", 10, 1e12)]
    )
    for line in fig.axes[0].get_lines():
        colour = matplotlib.colors.to_hex(line.get_color()).upper()
        assert colour in OKABE_ITO, line.get_gid()


def test_alt_text_names_chip_dtype_and_ridge_value():
    fig = plots.roofline_figure("H100 SXM", "bf16")
    text = plots.alt_text(fig)
    ridge, _ = _dense_ridge("H100 SXM")  # 989.5e12 / 3.35e12 = 295.4
    assert 100 <= ridge < 1000
    assert "H100 SXM" in text and "bf16" in text and f"{ridge:.1f} FLOPs/B" in text
    assert "dense" in text
    with pytest.raises(ValueError, match="not made by roofline.plots"):
        plots.alt_text(plt.figure())
    plt.close("all")


def test_sparse_switch_moves_the_ridge():
    chip = rl.get_chip("H100 SXM")
    fig = plots.roofline_figure(chip, sparse=True)
    (marker,) = _lines(fig, "ridge:")
    assert marker.get_xdata()[0] == pytest.approx(
        chip.peak("bf16").sparse_flops_per_s / chip.hbm_bytes_per_s
    )
    assert "2:4-sparse" in plots.alt_text(fig)


def test_linear_and_log_figure_answers_q2():
    fig = plots.linear_and_log_figure("H100 SXM")
    left, right = fig.axes
    assert left.get_xscale() == "linear" and left.get_yscale() == "linear"
    assert right.get_xscale() == "log" and right.get_yscale() == "log"
    (linear,) = [ln for ln in left.get_lines() if (ln.get_gid() or "").startswith("roof-linear")]
    assert linear.get_xdata()[0] == 0 and linear.get_ydata()[0] == 0  # through the origin
    assert right.get_xlim()[0] > 0  # a log axis has no zero
    ridge, _ = _dense_ridge("H100 SXM")
    for prefix in ("ridge-linear:", "ridge:"):
        (m,) = _lines(fig, prefix)
        assert m.get_xdata()[0] == pytest.approx(ridge, rel=1e-12)
    assert "origin" in plots.alt_text(fig)


def test_figures_are_white_small_and_not_left_open():
    before = plt.get_fignums()
    fig = plots.roofline_figure("TPU v5e")
    assert plt.get_fignums() == before
    assert matplotlib.colors.to_hex(fig.get_facecolor()) == "#ffffff"
    w, h = fig.get_size_inches()
    assert w <= 7 and h <= 4.5 and fig.dpi <= 110


def test_own_axes_are_drawn_into():
    fig, ax = plt.subplots()
    out = plots.roofline_figure("T4", "fp16", ax=ax)
    assert out is fig and ax.get_xscale() == "log"
    plt.close(fig)


@pytest.mark.parametrize(
    "kwargs, message",
    [
        ({"bandwidths": "fast"}, "bandwidths must be None"),
        ({"bandwidths": {"HBM": -1}}, "positive number of bytes/s"),
        ({"intensity_range": (10, 1)}, "0 < low < high"),
        ({"operations": [3.0]}, "operations must be roofline.Cost"),
        ({"dtype": "fp64", "chips": "TPU v5e"}, "has no fp64 figure"),
    ],
)
def test_bad_input_says_what_to_do(kwargs, message):
    with pytest.raises((ValueError, TypeError), match=message):
        plots.roofline_figure(**kwargs)


def test_point_rejects_non_positive_values():
    with pytest.raises(ValueError, match="positive number"):
        Point("x", 0, 1e12)
    with pytest.raises(ValueError, match="positive number"):
        Point("x", 1, math.nan)


def test_every_ridge_is_labelled_with_its_value_at_its_intensity():
    import roofline as rl

    chip = rl.get_chip("TPU v5e")
    fig = rl.plots.roofline_figure(chip, "bf16", bandwidths="all")
    ax = fig.axes[0]
    labels = {
        t.get_text().strip(): t.get_position()[0]
        for t in ax.texts
        if t.get_text().strip().startswith("ridge ")
    }
    bandwidths = [
        chip.hbm_bytes_per_s,
        chip.interconnect.one_way_bytes_per_s,
        chip.host_link.one_way_bytes_per_s,
    ]
    for bw in bandwidths:
        ridge = chip.peak("bf16").dense_flops_per_s / bw  # independent of critical_intensity
        text = f"ridge {rl.format_intensity(ridge).removesuffix(' FLOPs/B')}"  # the axis gives the unit
        assert text in labels, f"{text} missing from {sorted(labels)}"
        assert labels[text] == pytest.approx(ridge)


def test_several_chips_name_their_peaks_in_the_legend():
    import roofline as rl

    fig = rl.plots.roofline_figure(["TPU v5e", "A100 SXM"], "bf16")
    legend = [t.get_text() for t in rl.plots.figure_legend(fig).get_texts()]
    assert any("TPU v5e" in t and rl.format_flops_rate(197e12) in t for t in legend)
    assert any("A100 SXM" in t and rl.format_flops_rate(312e12) in t for t in legend)
