"""Accessibility of what the package writes, without a browser (issue 25).

The figure label colours reach WCAG AA contrast on the white figure card (computed here from
WCAG 2.1's definition, not with the package's helper), and an explorer's HTML names each
slider's value with its unit, offers a number field beside it and has a live region.
(tests/test_a11y.py checks the same pages in Chromium with axe-core.)
"""

from __future__ import annotations

import re

import pytest

import roofline as rl
from roofline import plots
from roofline.web import explorer_data, explorer_html


def wcag_contrast(hex_a: str, hex_b: str) -> float:
    """WCAG 2.1 contrast ratio (1.4.3), from its definition of relative luminance."""

    def luminance(colour: str) -> float:
        values = []
        for i in (1, 3, 5):
            c = int(colour[i : i + 2], 16) / 255
            values.append(c / 12.92 if c <= 0.03928 else ((c + 0.055) / 1.055) ** 2.4)
        return 0.2126 * values[0] + 0.7152 * values[1] + 0.0722 * values[2]

    a, b = sorted((luminance(hex_a), luminance(hex_b)), reverse=True)
    return (a + 0.05) / (b + 0.05)


def test_wcag_contrast_of_known_pairs():
    # black on white is 21:1; #767676 on white is the classic 4.54:1 (the lightest AA grey)
    assert wcag_contrast("#000000", "#ffffff") == pytest.approx(21.0)
    assert wcag_contrast("#767676", "#ffffff") == pytest.approx(4.54, abs=0.01)


@pytest.mark.parametrize("name", sorted(plots.PALETTE))
def test_every_label_colour_reaches_aa_on_white(name):
    colour = plots.PALETTE[name]
    label = plots.label_colour(colour)
    assert wcag_contrast(label, "#ffffff") >= 4.5, (name, colour, label)
    # the same hue: each channel scaled by one factor (within rounding)
    original = [int(colour[i : i + 2], 16) for i in (1, 3, 5)]
    darker = [int(label[i : i + 2], 16) for i in (1, 3, 5)]
    top = max(range(3), key=lambda i: original[i])
    factor = darker[top] / original[top] if original[top] else 1.0
    assert all(abs(d - o * factor) <= 1.0 for d, o in zip(darker, original)), (colour, label)


def test_palette_colours_below_aa_are_darkened_and_dark_ones_kept():
    # vermillion #D55E00 is 3.9:1 and bluish green #009E73 3.4:1 on white (the labels)
    assert wcag_contrast("#D55E00", "#ffffff") < 4.5
    assert plots.label_colour("#D55E00") != "#D55E00"
    assert plots.label_colour("#0072B2") == "#0072B2"  # blue: 5.2:1 already


def test_peak_and_ridge_labels_of_a_roofline_figure_pass_aa():
    import matplotlib

    matplotlib.use("Agg")
    # a claimed point far above the roof gets the (vermillion) warning label
    claim = plots.Point("claimed kernel", 1000.0, 5e15)
    result = plots.roofline_figure(["H100 SXM", "TPU v5e"], dtype="bf16", operations=[claim])
    fig = result if hasattr(result, "axes") else result[0]
    try:
        texts = [t for ax in fig.axes for t in ax.texts if t.get_text().strip()]
        assert texts
        for text in texts:
            colour = matplotlib.colors.to_hex(text.get_color())
            assert wcag_contrast(colour, "#ffffff") >= 4.5, (text.get_text(), colour)
    finally:
        import matplotlib.pyplot as plt

        plt.close(fig)


def test_explorer_sliders_say_value_and_unit_and_have_a_number_field():
    data = explorer_data("roofline", "H100 SXM", dtype="bf16", intensity=500)
    page = explorer_html(data, "Roofline explorer", b"png", "alt", "readout", "note")
    sliders = re.findall(r'<input type="range"[^>]*>', page)
    assert len(sliders) == 1
    assert 'aria-valuetext="500 FLOPs/B"' in sliders[0]
    number = re.search(r'<input type="number" data-number="intensity"[^>]*>', page)
    assert number and 'value="500"' in number.group(0) and "FLOPs/B" in number.group(0)
    assert re.search(r'role="status" aria-live="polite"', page)
    assert 'role="group" aria-label="Roofline explorer"' in page
    assert page.count("min-height:24px") >= 3  # select, slider and number field


def test_sharded_explorer_link_field_is_in_gb_per_s():
    chip = rl.get_chip("TPU v5e")
    link = chip.interconnect.one_way_bytes_per_s
    data = explorer_data("sharded_matmul", chip, n=4, B=1024, D=8192, F=8192, link_bytes_per_s=link)
    page = explorer_html(data, "t", b"png", "alt", "readout", "note")
    field = re.search(r'<input type="number" data-number="link_bytes_per_s"[^>]*>', page).group(0)
    assert f'value="{link / 1e9:.6g}"' in field and 'data-per-unit="1e+09"' in field
    slider = re.search(r'<input type="range" data-control="link_bytes_per_s"[^>]*>', page).group(0)
    assert re.search(r'aria-valuetext="[\d.]+ GB/s"', slider), slider


def test_a_table_with_an_unnamed_column_is_refused():
    """Issue 35: chapter 5 had a table whose first header cell was empty (axe's
    empty-table-header): `rl.book.table` asks for a name for every column."""
    with pytest.raises(ValueError, match="name every column"):
        rl.book.table(["", "one way"], [["one link", "25 GB/s"]])
    assert "<th>links</th>" in rl.book.table(["links", "one way"], [["a", "b"]]).data


def test_no_markdown_table_has_an_empty_header_cell():
    """Homework part 4's table of per-chip costs began with an empty header cell."""
    import notebooks

    empty = []
    for md in notebooks.notebook_sources():
        lines = md.read_text(encoding="utf-8").splitlines()
        for number, (line, below) in enumerate(zip(lines, lines[1:]), start=1):
            if re.fullmatch(r"\|(\s*:?-+:?\s*\|)+", below.strip()) and line.startswith("|"):
                cells = line.strip().strip("|").split("|")
                if any(not c.strip() for c in cells):
                    empty.append(f"{md.name}:{number}: {line}")
    assert not empty, "tables with an empty header cell:\n" + "\n".join(empty)
