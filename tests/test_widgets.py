"""roofline.widgets: explorers update in place, their numbers match hand derivations,
and their static web fallback is self-contained, interactive and small."""

import json
import re

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import pytest  # noqa: E402

import roofline as rl  # noqa: E402
from roofline import widgets  # noqa: E402

WIDGET_VIEW = "application/vnd.jupyter.widget-view+json"

EXPLORERS = {
    "roofline": (widgets.roofline_explorer, "intensity", [1.0, 10.0, 100.0, 1000.0]),
    "matmul": (widgets.matmul_explorer, "B", [1, 64, 1024, 8192]),
    "sharded_matmul": (widgets.sharded_matmul_explorer, "D", [256, 4096, 65536]),
}


@pytest.fixture(scope="module")
def made():
    return {name: make() for name, (make, _, _) in EXPLORERS.items()}


def _point(explorer, gid):
    return [line for line in explorer.figure.axes[0].get_lines() if line.get_gid() == gid][0]


def _data(explorer):
    return [
        (tuple(line.get_xdata()), tuple(line.get_ydata()))
        for ax in explorer.figure.axes
        for line in ax.get_lines()
    ]


@pytest.mark.parametrize("name", list(EXPLORERS))
def test_set_changes_the_plot_without_new_figures(made, name):
    _, key, values = EXPLORERS[name]
    explorer = made[name]
    figure, figs_before = explorer.figure, plt.get_fignums()
    before, text_before = _data(explorer), explorer.text
    explorer.set(**{key: values[0]})
    middle, text_middle = _data(explorer), explorer.text
    explorer.set(**{key: values[-1]})
    assert _data(explorer) != middle and explorer.text != text_middle
    assert (before, text_before) != (middle, text_middle) or values[0] == explorer.controls[
        key
    ].value
    assert explorer.figure is figure and len(figure.axes) == 1
    assert plt.get_fignums() == figs_before
    assert explorer.controls[key].value == values[-1]


def test_roofline_explorer_point_and_readout():
    explorer = widgets.roofline_explorer("H100 SXM", "bf16", intensity=64.0)
    chip = rl.get_chip("H100 SXM")
    bw, peak = chip.hbm_bytes_per_s, chip.peak("bf16").dense_flops_per_s
    for x in (10.0, 1000.0):
        explorer.set(intensity=x)
        point = _point(explorer, "explorer-point")
        assert point.get_xdata()[0] == pytest.approx(x)
        assert point.get_ydata()[0] == pytest.approx(min(peak, bw * x))
    explorer.set(intensity=10.0)
    assert "memory-bound" in explorer.text
    explorer.set(intensity=1000.0)
    assert "compute-bound" in explorer.text
    assert f"{peak / bw:.1f} FLOPs/B" in explorer.text


def test_roofline_explorer_dtype_options_follow_the_chip():
    explorer = widgets.roofline_explorer("H100 SXM", "fp8")
    explorer.set(chip="TPU v5e")
    assert tuple(explorer.controls["dtype"].options) == rl.get_chip("TPU v5e").dtypes
    assert explorer.controls["dtype"].value == "bf16"  # fp8 is not a v5e dtype
    explorer.set(chip="RTX 3090", dtype="fp16")
    assert "RTX 3090, fp16" in explorer.text
    with pytest.raises(ValueError, match="not one of the choices"):
        explorer.set(dtype="fp64", chip="TPU v5e")
    with pytest.raises(ValueError, match="no control"):
        explorer.set(batch=3)
    with pytest.raises(ValueError, match="outside the slider"):
        explorer.set(intensity=1e9)


def test_matmul_explorer_critical_batches():
    explorer = widgets.matmul_explorer("TPU v5e", B=128, D=4096, F=4096)
    chip = rl.get_chip("TPU v5e")
    r = chip.peak("bf16").dense_flops_per_s / chip.hbm_bytes_per_s
    D = F = 4096
    # 2BDF/peak = 2(BD + DF + BF)/bw  =>  B = r D F / (D F - r (D + F))
    exact = r * D * F / (D * F - r * (D + F))
    assert f"approximate (B << D, F) {r:.4g}" in explorer.text
    assert f"exact for this D, F {exact:.4g}" in explorer.text
    explorer.set(weights="int8")  # int8 weights, bf16 math: half the approximate batch
    assert f"approximate (B << D, F) {r / 2:.4g}" in explorer.text
    B = 64
    explorer.set(B=B, weights=None)
    point = _point(explorer, "explorer-point")
    intensity = 2 * B * D * F / (2 * (B * D + D * F + B * F))
    assert point.get_xdata()[0] == pytest.approx(intensity)


def test_sharded_explorer_times_and_threshold():
    B, F = 1024, 8192
    explorer = widgets.sharded_matmul_explorer("TPU v5e", n=2, B=B, D=8192, F=F)
    chip = rl.get_chip("TPU v5e")
    peak, link = chip.peak("bf16").dense_flops_per_s, chip.interconnect.one_way_bytes_per_s
    hbm = chip.hbm_bytes_per_s
    # hand counts: 2 chips share one link (the whole 2BF-byte partial sum each way); 4 v5e
    # chips along an axis form a line (no wraparound below 16): the link next to an end carries
    # 2(n-1)/n partial sums one way; 16 chips close the ring: (n-1)/n per link and direction
    for n, D, link_fraction in ((2, 4096, 1.0), (4, 65536, 2 * 3 / 4), (16, 65536, 15 / 16)):
        explorer.set(n=n, D=D)
        t_math = 2 * B * D * F / n / peak
        t_link = link_fraction * 2 * B * F / link
        t_hbm = 2 * (B * D / n + D / n * F + B * F) / hbm
        math_point, link_point = (
            _point(explorer, "explorer-math"),
            _point(explorer, "explorer-link"),
        )
        hbm_point = _point(explorer, "explorer-hbm")
        assert math_point.get_xdata()[0] == D and link_point.get_xdata()[0] == D
        assert math_point.get_ydata()[0] == pytest.approx(t_math, rel=1e-12)
        assert link_point.get_ydata()[0] == pytest.approx(t_link, rel=1e-12)
        assert hbm_point.get_ydata()[0] == pytest.approx(t_hbm, rel=1e-12)
        threshold = n * link_fraction * 2 * peak / (2 * link)
        assert f"D > {threshold:,.0f}" in explorer.text
        slowest = max((t_math, "compute"), (t_hbm, "memory"), (t_link, "link"))[1]
        assert f"{slowest}-bound" in explorer.text


def test_sharded_explorer_slice_of_their_own():
    """4 TPU v5e chips, B=1024, F=8192, bf16 (2 bytes): the partial sums are
    V = 1024 * 8192 * 2 = 16,777,216 bytes; one ICI link carries W = 45e9 B/s one way.
    - One axis of a larger slice (the default): a line of 4 (no wraparound below 16): the link
      next to an end carries 2 (n-1)/n V = 1.5 V, so 1.5 * 16,777,216 / 45e9 = 559.2 µs, and
      D* = 2 (n-1) P / W = 6 * 1.97e14 / 4.5e10 = 26,267.
    - The 4 chips alone: Google sells them as a 2x2, two axes of one link each (a pair: V/2 each
      way per half). Chapter 6's rule for several axes: split the array so both axes finish
      together; each chip must take in (n-1)/n V = 3/4 V per half (reduce-scatter, then
      all-gather) over its two links at once, so the all-reduce takes 2 * (3/4) V / (2 W) =
      3/4 V / W = 0.75 * 16,777,216 / 45e9 = 279.6 µs, half the line's. The threshold: the
      math 2 B D F / (n P) equals 3/4 * 2 B F / W at D* = n * (3/4) * P / W = 3 P / W
      = 3 * 1.97e14 / 4.5e10 = 13,133 (half of 26,267)."""
    B, F, V, W, P = 1024, 8192, 1024 * 8192 * 2, 45e9, 197e12
    explorer = widgets.sharded_matmul_explorer("TPU v5e", n=4, B=B, D=8192, F=F)
    assert explorer.controls["slice"].value == "axis" and not explorer.controls["slice"].disabled
    line = _point(explorer, "explorer-link").get_ydata()[0]
    assert line == pytest.approx(1.5 * V / W, rel=1e-12)
    assert "line of 4" in explorer.text and f"D > {6 * P / W:,.0f}" == "D > 26,267"
    assert "D > 26,267" in explorer.text
    explorer.set(slice="alone")
    alone = _point(explorer, "explorer-link").get_ydata()[0]
    assert alone == pytest.approx(0.75 * V / W, rel=1e-12)
    assert alone * 1e6 == pytest.approx(279.6, abs=0.05)
    assert "2x2 slice" in explorer.text and f"D > {3 * P / W:,.0f}" == "D > 13,133"
    assert "D > 13,133" in explorer.text
    assert "2x2 slice" in explorer._repr_mimebundle_()["text/html"]  # the alt text names it
    # the link slider scales every link of the slice: twice the bandwidth, half the time
    explorer.set(link_bytes_per_s=2 * W)
    assert _point(explorer, "explorer-link").get_ydata()[0] == pytest.approx(0.375 * V / W)
    assert "D > 6,567" in explorer.text  # 13,133.3 / 2 = 6,566.7
    # a switch has no slice of its own: the control rests, the numbers are the switch's
    explorer.set(chip="H100 SXM")
    assert explorer.controls["slice"].disabled and "switch" in explorer.text


def test_sharded_explorer_slice_choice_is_checked():
    with pytest.raises(ValueError, match="slice must be one of 'axis'.*'alone'.*got '2x2'"):
        widgets.sharded_matmul_explorer("TPU v5e", n=4, slice="2x2")


@pytest.mark.parametrize("name", list(EXPLORERS))
def test_web_version_is_self_contained_and_small(made, name):
    """The text/html the book shows: controls, a static first frame, the data, one inline script."""
    explorer = made[name]
    bundle = explorer._repr_mimebundle_()
    assert WIDGET_VIEW in bundle and "model_id" in bundle[WIDGET_VIEW]
    page = bundle["text/html"]
    assert len(page.encode()) < widgets.STATIC_LIMIT_BYTES
    assert f'data-explorer="{name}"' in page and 'class="roofline-explorer"' in page
    assert '<input type="range"' in page
    assert re.search(r'<img src="data:image/png;base64,[^"]+" alt="[^"]{20,}"', page)
    assert widgets.COLAB_NOTE in page and explorer.text.splitlines()[0] in page
    scripts = re.findall(r"<script[^>]*>", page)
    assert scripts and all("src" not in s for s in scripts)
    code = page.split("<script>")[1].split("</script>")[0]
    assert "http" not in code.replace("http://www.w3.org/2000/svg", "")  # no network, no CDN
    data = json.loads(
        re.search(r'<script type="application/json" class="rx-data">(.*?)</script>', page, re.S)
        .group(1)
        .replace("<\\/", "</"),
        parse_constant=lambda c: pytest.fail(f"{c} in the exported JSON"),
    )
    assert data["kind"] == name
    for control in data["controls"]:
        assert f'data-control="{control}"' in page


def test_web_script_holds_no_markup():
    """explorer.js is inlined into each page: a tag in it (even in a comment) would end the
    script early or be taken for an element by tools that read the page."""
    from roofline.web import explorer_script

    code = explorer_script()
    assert "window.RooflineExplorer" in code
    assert not re.search(r"<[A-Za-z/!]", code), re.search(r".{30}<[A-Za-z/!].{30}", code).group(0)


def test_web_data_carries_the_catalog_figures():
    """Spot checks against the vendors' figures (TPU v5e page, H100 datasheet, Hopper whitepaper)."""
    from roofline.web import explorer_data

    data = explorer_data(
        "sharded_matmul", "TPU v5e", n=2, B=1024, D=8192, F=8192, link_bytes_per_s=4.5e10
    )
    v5e, h100 = data["chips"]["TPU v5e"], data["chips"]["H100 SXM"]
    assert list(data["chips"])[0] == "TPU v5e"
    assert v5e["matrix"]["bf16"] == 197e12 and v5e["hbm_bytes_per_s"] == 819e9
    assert v5e["link"] == {
        "name": "ICI",
        "one_way_bytes_per_s": 4.5e10,
        "count": 4,
        "topology": "torus",
        "domain_chips": 256,
        "wraparound_multiple": 16,  # a v5e axis wraps only at its full length (scaling book)
        "axis_chips": 16,
        "most_chips": 16,
        # bytes on the busiest link, one way, per byte V of the all-reduced array (chapter 6,
        # reduce-scatter then all-gather). One axis of n chips: 2 chips share one link (V/2
        # each way to reduce-scatter, V/2 to gather back: V), a line below 16 (2(n-1)/n V),
        # the wrapped ring of 16 (half that, 15/16 V). The n chips alone are Google's slice
        # for n, every axis at once: each chip moves (n-1)/n V in each half over all its axes
        # together (one link per axis for a pair or a line), so 2(n-1)/n V / (axes):
        # 2x2 2(3/4)/2 = 3/4, 2x4 2(7/8)/2 = 7/8, 4x4 of lines 2(15/16)/2 = 15/16
        "all_reduce": {
            "2": {
                "axis": {"per_byte": 1.0, "topology": "ring", "where": "ring of 2"},
                "alone": {"per_byte": 1.0, "topology": "ring", "where": "ring of 2"},
            },
            "4": {
                "axis": {"per_byte": 1.5, "topology": "line", "where": "line of 4"},
                "alone": {
                    "per_byte": 0.75,
                    "topology": "2 x 2: ring, ring",
                    "where": "2x2 slice (ring, ring)",
                },
            },
            "8": {
                "axis": {"per_byte": 1.75, "topology": "line", "where": "line of 8"},
                "alone": {
                    "per_byte": pytest.approx(0.875, rel=1e-12),
                    "topology": "2 x 4: ring, line",
                    "where": "2x4 slice (ring, line)",
                },
            },
            "16": {
                "axis": {
                    "per_byte": 0.9375,
                    "topology": "bidirectional-ring",
                    "where": "bidirectional-ring of 16",
                },
                "alone": {
                    "per_byte": 0.9375,
                    "topology": "4 x 4: line, line",
                    "where": "4x4 slice (line, line)",
                },
            },
        },
    }
    assert h100["matrix"]["bf16"] == pytest.approx(989.5e12, rel=1e-12)
    assert h100["vector"]["bf16"] == pytest.approx(133.8e12, rel=1e-12)
    assert h100["link"]["count"] == 18 and h100["link"]["topology"] == "switch"
    assert "RTX 4090" not in data["chips"]  # no chip-to-chip link: not in this menu
    roof = explorer_data("roofline", "H100 SXM", dtype="fp32", intensity=1.0)
    assert roof["chips"]["H100 SXM"]["vector"]["fp32"] == pytest.approx(67e12, rel=1e-12)
    assert "fp32" not in roof["chips"]["H100 SXM"]["matrix"]  # a CUDA-core figure only
    assert "RTX 4090" in roof["chips"]
    with pytest.raises(ValueError, match="kind must be one of"):
        explorer_data("heatmap", "H100 SXM")


def test_web_version_of_a_chip_outside_the_catalog():
    chip = rl.Chip(
        name="my laptop",
        vendor="measured",
        peaks=(rl.Peak("fp64", 1e11, rl.Source("here", "measured")),),
        hbm_bytes=16e9,
        hbm_bytes_per_s=5e10,
        memory_source=rl.Source("here", "measured"),
    )
    page = widgets.roofline_explorer(chip, dtype="fp64", intensity=1.0)._repr_mimebundle_()[
        "text/html"
    ]
    assert '<option value="my laptop" selected>' in page and "H100 SXM" in page


def test_mimebundle_respects_exclude(made):
    bundle = made["roofline"]._repr_mimebundle_(exclude={WIDGET_VIEW})
    assert WIDGET_VIEW not in bundle and "text/html" in bundle


def test_widget_view_for_ipywidgets_7_style_objects():
    class Old:  # ipywidgets 7 widgets have a model_id but no _repr_mimebundle_
        model_id = "abc123"

    assert widgets._widget_view(Old()) == {
        "version_major": 2,
        "version_minor": 0,
        "model_id": "abc123",
    }


def test_bad_arguments_say_what_to_do():
    with pytest.raises(ValueError, match="no chip-to-chip link"):
        widgets.sharded_matmul_explorer("RTX 4090")
    with pytest.raises(ValueError, match="at least 2 chips"):
        widgets.sharded_matmul_explorer(n=1)
    with pytest.raises(ValueError, match="positive whole number"):
        widgets.matmul_explorer(B=0)
    with pytest.raises(ValueError, match="has no fp64"):
        widgets.roofline_explorer("TPU v5e", "fp64")
