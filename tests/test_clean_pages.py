"""The published pages read as a book, not as a build log (issue 13 item 4), and one quantity
reads the same wherever it appears (issue 16 item 5).

- no page shows a filesystem path of the machine that built it, a traceback, or a raw float
  with a dozen digits (a tuple or repr printed instead of a formatted value);
- a chip's peak, bandwidth and ridge point, printed with a unit on any page, read exactly as
  the book's one display rule (`roofline.units.RATE_DIGITS`) writes them: never "990 TFLOP/s"
  on one page and "989.5 TFLOP/s" on another.
"""

from __future__ import annotations

import math
import re
import sys
from pathlib import Path

import lookup_share
import notebooks
import pytest

import roofline as rl

ROOT = notebooks.ROOT
pytestmark = [pytest.mark.slow, pytest.mark.xdist_group("book")]

PATH_PATTERN = re.compile(
    r"(?<![\w.:/])(?:/(?:home|root|tmp|work|usr|opt|var|private)/[\w.-]+|"
    r"[A-Za-z]:\\\\?[\w.-]+\\|site-packages|dist-packages)"
)
TRACEBACK_PATTERN = re.compile(
    r"Traceback \(most recent call last\)|\bCell In\[\d+\]|"
    r"File \"[^\"]+\", line \d+"
)
RAW_FLOAT = re.compile(r"(?<![\w.])\d+\.\d{7,}\b|np\.float64\(")


def visible_text(path: Path) -> str:
    from bs4 import BeautifulSoup

    soup = BeautifulSoup(path.read_text("utf-8"), "html.parser")
    for tag in soup(["script", "style", "template"]):
        tag.decompose()
    main = soup.find("main") or soup
    return " ".join(main.get_text(" ").split())


@pytest.fixture(scope="module")
def page_texts(book_html) -> dict[str, str]:
    return {
        str(p.relative_to(book_html)): visible_text(p)
        for p in sorted(book_html.rglob("*.html"))
        if not p.relative_to(book_html).parts[0].startswith("_")
    }


def _hits(pattern, texts):
    out = []
    for name, text in texts.items():
        for m in pattern.finditer(text):
            out.append(f"{name}: ...{text[max(m.start() - 60, 0) : m.end() + 30]}...")
    return out


def test_the_patterns_catch_what_they_are_for():
    assert PATH_PATTERN.search("File /home/ci/rooflines/roofline/units.py, line 3")
    assert PATH_PATTERN.search("in /tmp/fresh/.venv/lib/python3.11/site-packages/x.py")
    assert not PATH_PATTERN.search("4.8 TB/s and 1.2 MB/s per link, 1/2 lower")
    assert TRACEBACK_PATTERN.search("Traceback (most recent call last): ValueError")
    assert RAW_FLOAT.search("(120.26862026862027, 0.5)")
    assert not RAW_FLOAT.search("989.5 TFLOP/s, ridge 240.5, 1.011e-03 s")


def test_no_page_shows_a_path_of_the_build_machine(book_html, page_texts):
    hits = _hits(PATH_PATTERN, page_texts)
    for needle in {str(ROOT), sys.prefix, str(Path.home())} - {"/", "/root"}:
        hits += [
            f"{name}: contains {needle}" for name, text in page_texts.items() if needle in text
        ]
    assert not hits, hits[:10]


def test_no_page_shows_a_traceback(page_texts):
    hits = _hits(TRACEBACK_PATTERN, page_texts)
    assert not hits, hits[:10]


def test_no_page_prints_a_raw_float(page_texts):
    hits = _hits(RAW_FLOAT, page_texts)
    assert not hits, hits[:10]


# ---------------------------------------------------------------- one display per number
def catalog_quantities():
    """(name, value, unit) for every peak record (dense, sparse) of every chip, its HBM
    bandwidth, and the ridge point of each dense peak."""
    for name in rl.list_chips():
        chip = rl.get_chip(name)
        if chip.hbm_bytes_per_s:
            yield f"{name} memory bandwidth", chip.hbm_bytes_per_s, "B/s"
        for peak in chip.peaks:
            label = f"{name} {peak.dtype} ({peak.unit}, {peak.accumulate} accumulate)"
            yield f"{label} peak", peak.dense_flops_per_s, "FLOP/s"
            if peak.sparse_flops_per_s:
                yield f"{label} sparse peak", peak.sparse_flops_per_s, "FLOP/s"
            if chip.hbm_bytes_per_s:
                yield f"{label} ridge", peak.dense_flops_per_s / chip.hbm_bytes_per_s, "FLOPs/B"


def canonical(value, unit):
    return {
        "B/s": rl.format_bandwidth,
        "FLOP/s": rl.format_flops_rate,
        "FLOPs/B": rl.format_intensity,
    }[unit](value)


def _printed_value(text):
    return lookup_share.printed_quantities(text)[0].value


def _same(a, b):
    return abs(a / b - 1) < 1e-9


def other_roundings(value, unit):
    """`value` rounded or cut to 3-6 significant digits, where that differs from the book's
    display (a 1-2 digit figure such as "1 TB/s" is a round number, not a display). The value
    itself, printed with all its digits (MI300X's 1.3074 PFLOP/s on the exam's key), is not a
    second rounding of it."""
    shown = _printed_value(canonical(value, unit))
    candidates = set()
    for k in range(3, 7):
        candidates.add(float(f"{value:.{k - 1}e}"))  # rounded: 989.5 -> 990
        scale = 10.0 ** (math.floor(math.log10(value)) - k + 1)
        candidates.add(float(f"{math.floor(value / scale + 1e-9) * scale:.{k - 1}e}"))  # cut: 989
    return {c for c in candidates if not _same(c, shown) and not _same(c, value)}


def test_the_display_rule_is_four_significant_digits():
    # by hand: 989.5e12 FLOP/s is 989.5 T; 197e12 / 819e9 = 240.537...
    assert canonical(989.5e12, "FLOP/s") == "989.5 TFLOP/s"
    assert canonical(197e12 / 819e9, "FLOPs/B") == "240.5 FLOPs/B"
    assert _printed_value(canonical(3.35e12, "B/s")) == 3.35e12
    assert 241.0 in other_roundings(197e12 / 819e9, "FLOPs/B")
    assert 990e12 in other_roundings(989.5e12, "FLOP/s")
    assert 989e12 in other_roundings(989.5e12, "FLOP/s") and 240.0 in other_roundings(
        240.537, "FLOPs/B"
    )
    assert not any(_same(r, 989.5e12) for r in other_roundings(989.5e12, "FLOP/s"))
    # by hand: 1307.4e12 has five digits; printed whole it is the value, cut to four it is 1307
    assert not any(_same(r, 1307.4e12) for r in other_roundings(1307.4e12, "FLOP/s"))
    assert 1.31e15 in other_roundings(1307.4e12, "FLOP/s")


def test_each_catalog_quantity_reads_the_same_on_every_page(page_texts):
    """A catalog quantity printed with its unit but rounded otherwise than the book's display
    (989.5 TFLOP/s shown as 990 or 989, 240.5 FLOPs/B as 241 or 240) is a second display of
    the same number. A printed value that is some other catalog quantity's display is fine."""
    quantities = list(catalog_quantities())
    assert len(quantities) > 50
    displays = {
        u: [_printed_value(canonical(v, u)) for _n, v, u2 in quantities if u2 == u]
        for u in ("B/s", "FLOP/s", "FLOPs/B")
    }
    clashes = []
    for page, text in page_texts.items():
        if page.startswith("exercises/homework_part"):
            # a homework page prints one student's drawn numbers (hw3's q5 intensity lands on
            # any of 362 values): one of them may round like a catalog quantity by chance
            continue
        for printed in lookup_share.printed_quantities(text):
            unit = {"FLOP/B": "FLOPs/B"}.get(printed.unit, printed.unit)
            round_number = float(printed.value).is_integer() and (
                len(str(int(printed.value)).rstrip("0")) < 2  # 100, 2000: an example, not a display
            )
            if (
                unit not in displays
                or printed.digits < 3
                or round_number
                or any(_same(printed.value, d) for d in displays[unit])
            ):
                continue
            for name, value, q_unit in quantities:
                if q_unit == unit and any(
                    _same(printed.value, r) for r in other_roundings(value, unit)
                ):
                    clashes.append(
                        f"{page}: {name} shown as ...{printed.context}... "
                        f"(the book's display: {canonical(value, q_unit)})"
                    )
                    break
    assert not clashes, clashes[:15]
