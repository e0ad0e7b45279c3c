"""TPU link figures: the catalog keeps How To Scale Your Model's per-link one-way ICI bandwidth
(4.5e10 B/s for v4 and v5e, 9e10 for v5p and v6e), Google's pages give per-chip bidirectional
totals that work out to 5e10 and 1e11 per port and direction (`Link.vendor_one_way_bytes_per_s`).
Chapter 5 says which the book uses and why. An exercise whose answer depends on the figure
accepts the answer computed with Google's, and says which the book uses."""

from __future__ import annotations

import dataclasses

from ..catalog import get_chip
from ..hardware import Link
from ..units import format_bandwidth, format_intensity
from .core import ACCEPTED, Mistake, _show, collide

__all__ = ["chip_link", "vendor_link_answers"]


def chip_link(chip) -> Link:
    """The chip-to-chip link of `chip` (a name or `Chip`); ValueError when the catalog gives it
    none (every exercise about links draws chips that have one)."""
    chip = get_chip(chip)
    if chip.interconnect is None:
        raise ValueError(f"{chip.name} has no chip-to-chip link in the catalog; pick one with one")
    return chip.interconnect


def vendor_chip(chip):
    """`chip` with its interconnect at the vendor's one-way figure (None if it has none)."""
    chip = get_chip(chip)
    link = chip.interconnect
    if link is None or link.vendor_one_way_bytes_per_s is None:
        return None
    vendor_link = dataclasses.replace(
        link, one_way_bytes_per_s=link.vendor_one_way_bytes_per_s, vendor_one_way_bytes_per_s=None
    )
    return dataclasses.replace(chip, interconnect=vendor_link)


def _shown(value: float, kind: str | None) -> str:
    """The book's answer as the note shows it: intensities in FLOPs/B, counts with commas."""
    if kind == "intensity":
        return format_intensity(value)
    if kind in (None, "number"):
        return f"{value:,.0f}" if value >= 100 else f"{value:.4g}"
    return _show(value, kind)


def vendor_link_answers(answer, p: dict, kind: str | None = None, tolerance=0.02) -> list:
    """[the answer with the vendor's link figure, accepted with a note], or [] when the chip
    of `p["chip"]` has no other vendor figure or the link does not change the answer (within
    `tolerance`). `answer(params)` computes the exercise's answer; `kind` is the exercise's
    kind (how the book's own answer is shown in the note)."""
    other = vendor_chip(p["chip"])
    if other is None:
        return []
    book, vendor = float(answer(p)), float(answer(dict(p, chip=other)))
    if collide(vendor, book, tolerance):
        return []
    link = chip_link(p["chip"])
    message = (
        f"Right with Google's figure, {format_bandwidth(link.vendor_one_way_bytes_per_s)} per "
        f"link one way. The book uses How To Scale Your Model's "
        f"{format_bandwidth(link.one_way_bytes_per_s)} (chapter 5 says why), which gives "
        f"{_shown(book, kind)}. Both are accepted."
    )
    return [Mistake(vendor, message, ACCEPTED)]
