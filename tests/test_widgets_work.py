"""The explorers' controls match the web page's, and what a chip switch costs is counted
(issue 24, item 6): a chip seen before is a blit, not a full redraw. No timing here."""

import matplotlib

matplotlib.use("Agg")

import pytest  # noqa: E402

import roofline as rl  # noqa: E402
from roofline import widgets  # noqa: E402
from roofline.web import explorer_data  # noqa: E402

MAKERS = {
    "roofline": (widgets.roofline_explorer, {"dtype": "bf16", "intensity": 64.0}),
    "matmul": (
        widgets.matmul_explorer,
        {"dtype": "bf16", "weights": None, "B": 128, "D": 4096, "F": 4096},
    ),
    "sharded_matmul": (
        widgets.sharded_matmul_explorer,
        {"n": 2, "B": 1024, "D": 8192, "F": 8192, "link_bytes_per_s": 9e10},
    ),
}


@pytest.mark.parametrize("kind", list(MAKERS))
def test_widget_controls_are_the_web_pages(kind):
    make, start = MAKERS[kind]
    explorer = make()
    web = explorer_data(kind, "TPU v5e", **start)
    assert set(explorer.controls) == set(web["controls"])
    # the same chips in the chip menu
    assert set(explorer.controls["chip"].options) == set(web["chips"])


def test_a_chip_seen_before_is_a_blit():
    explorer = widgets.roofline_explorer("H100 SXM")
    assert explorer.work["full draws"] == 1 and explorer.work["figures built"] == 1
    chips = ["TPU v5e", "MI300X", "H100 SXM"]
    for i in range(30):
        explorer.set(chip=chips[i % 3])
    # two new chips drawn once each; the other 28 switches only restore a background
    assert explorer.work["figures built"] == 3
    assert explorer.work["full draws"] == 3
    assert explorer.work["blits"] == 28
    chip = rl.get_chip("MI300X")
    explorer.set(chip="MI300X", intensity=10.0)
    assert explorer.figure.axes[0].get_title().startswith("Roofline: MI300X")
    point = [ln for ln in explorer.figure.axes[0].get_lines() if ln.get_gid() == "explorer-point"]
    assert point[0].get_ydata()[0] == pytest.approx(chip.hbm_bytes_per_s * 10.0)


def test_old_scenes_are_dropped():
    explorer = widgets.roofline_explorer("H100 SXM")
    names = [n for n in rl.list_chips() if "bf16" in rl.get_chip(n).dtypes and n != "H100 SXM"]
    names = names[: widgets.SCENES + 2]
    for name in names:
        explorer.set(chip=name)
    assert len(explorer._scenes) == widgets.SCENES
    built = explorer.work["figures built"]
    explorer.set(chip="H100 SXM")  # dropped long ago: built again
    assert explorer.work["figures built"] == built + 1


def test_matmul_explorer_chip_and_dtype():
    explorer = widgets.matmul_explorer("TPU v5e", B=128, D=4096, F=4096)
    explorer.set(chip="H100 SXM")
    h100 = rl.get_chip("H100 SXM")
    r = h100.peak_flops_per_s("bf16") / h100.hbm_bytes_per_s  # 989.5e12 / 3.35e12 = 295.4
    assert f"approximate (B << D, F) {r:.4g}" in explorer.text
    explorer.set(dtype="fp8")
    # the weight menu follows the math's dtype: only dtypes of at most 1 byte next to fp8
    allowed = [v for _, v in explorer.controls["weights"].options]
    assert widgets.SAME_AS_MATH in allowed and "bf16" not in allowed and "fp32" not in allowed
    # fp8: 2BDF FLOPs over DF one-byte weights, intensity 2B: B = (fp8 peak / bandwidth) / 2
    r8 = h100.peak_flops_per_s("fp8") / h100.hbm_bytes_per_s / 2
    assert f"approximate (B << D, F) {r8:.4g}" in explorer.text


def test_sharded_explorer_chip_b_and_f():
    explorer = widgets.sharded_matmul_explorer("TPU v5e", n=2, B=1024, D=8192, F=8192)
    explorer.set(chip="H100 SXM")
    h100 = rl.get_chip("H100 SXM")
    assert explorer.controls["link_bytes_per_s"].value == pytest.approx(h100.link_bytes_per_s)
    assert max(explorer.controls["n"].options) <= h100.interconnect.domain_chips
    explorer.set(B=256, F=4096)
    assert "B=256" in explorer.text and "F=4096" in explorer.text
    assert explorer.figure.axes[0].get_title().endswith("B=256, F=4096")


def test_matmul_weight_menu_starts_with_an_option_selected():
    """Issue 35: the "weights" menu reached the browser with nothing selected (ipywidgets reads
    value None as no selection) and showed blank in chapters 4 and 7."""
    explorer = widgets.matmul_explorer("H100 SXM", B=128, D=4096, F=4096)
    menu = explorer.controls["weights"]
    assert menu.index == 0 and menu.label == "same as the math (bf16)"
    explorer.set(weights="int8")
    assert menu.label == "int8"
    explorer.set(weights=None)  # back to the math's own dtype: selected, not blank
    assert menu.index == 0 and menu.label == "same as the math (bf16)"
    explorer.set(weights="int8")
    explorer.set(dtype="fp16")  # int8 (1 byte) still fits beside fp16 math: kept
    assert menu.label == "int8"
    explorer.set(weights="bf16")  # 2 bytes beside fp16 math
    explorer.set(dtype="fp8")  # bf16 is wider than fp8: the menu falls back to the math's own
    assert menu.index == 0 and menu.label == "same as the math (fp8)"
    # the web page gets null for "the math's own", as before
    assert explorer._web(explorer)[1]["weights"] is None
    named = widgets.matmul_explorer("H100 SXM", weights="int8").controls["weights"]
    assert named.label == "int8"


def test_the_web_note_says_what_a_kernel_offers_and_it_holds():
    """Issue 35: the note promised "the full, free-form explorer" in Colab, whose sliders step by
    powers of two (the web page's number fields take any value). It now says what a kernel adds:
    the call, with any size."""
    assert "free-form" not in widgets.COLAB_NOTE and "B=1000" in widgets.COLAB_NOTE
    explorer = widgets.matmul_explorer("H100 SXM", B=1000, D=5000, F=3000)
    assert explorer.controls["B"].value == 1000 and "B=1000, D=5000, F=3000" in explorer.text
