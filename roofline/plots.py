"""Roofline figures: log-log, labelled axes with units, ridge points marked.

    >>> import roofline as rl
    >>> fig = rl.plots.roofline_figure("H100 SXM", "bf16")            # one chip
    >>> fig = rl.plots.roofline_figure(["TPU v5e", "H100"], bandwidths="all")
    >>> fig = rl.plots.roofline_figure("TPU v5e", operations=[rl.matmul(128, 4096, 4096),
    ...                                rl.plots.Point("my kernel", 50.0, 3e13)])
    >>> print(rl.plots.alt_text(fig))

Every number comes from `roofline`: ceilings from `attainable_flops_per_s`, ridge
points from `critical_intensity`, labels from `roofline.units`. matplotlib is
imported only when a figure is made. The functions return the matplotlib Figure,
so a chapter can add to it; each figure also carries

- ``fig.roofline_description``: a plain-language sentence (the alt text),
- ``fig.roofline_ridges``: one dict per ridge point drawn,
- ``fig.roofline_regions``: the shaded intensity ranges ``(low, high, label)``,
- ``fig.roofline_violations``: the points that lie above their roof.

Figures are created through pyplot and closed at once: a cell whose last
expression is the figure shows it exactly once, and nothing piles up in
``plt.get_fignums()``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from .catalog import get_chip
from .costs import Cost
from .dtypes import canonical_dtype
from .estimate import attainable_flops_per_s, critical_intensity
from .hardware import Chip
from .units import format_bandwidth, format_flops_rate, format_intensity

__all__ = ["PALETTE", "Point", "roofline_figure", "linear_and_log_figure", "decode_throughput_figure",
           "alt_text", "resource_figure",
           "ABOVE_ROOF_NOTE", "ROOF_TOLERANCE"]

#: Okabe & Ito (2008) colour-blind-safe palette, name -> hex.
PALETTE = {
    "black": "#000000",
    "orange": "#E69F00",
    "sky blue": "#56B4E9",
    "bluish green": "#009E73",
    "yellow": "#F0E442",
    "blue": "#0072B2",
    "vermillion": "#D55E00",
    "reddish purple": "#CC79A7",
}

#: Order in which chips (or dtypes) get their colours; yellow is kept for shading.
_SERIES_COLOURS = ("blue", "vermillion", "bluish green", "reddish purple", "orange",
                   "sky blue", "black")
#: One line style per bandwidth of the same chip (fastest first).
_LINESTYLES = ("-", "--", ":", "-.", (0, (5, 1, 1, 1, 1, 1)), (0, (1, 3)))
#: Fills of the shaded regions, from bandwidth-bound (left) to compute-bound (right).
_REGION_COLOURS = ("sky blue", "yellow", "orange", "bluish green", "reddish purple")

#: A point may exceed its roof by this factor before it is flagged (rounding in spec sheets),
#: the same tolerance as `roofline.check_below_roof`.
ROOF_TOLERANCE = 1.02
ABOVE_ROOF_NOTE = "above the roof: check units, sparse vs dense, FLOP counting"

FIGSIZE = (6.4, 4.0)
DPI = 100
X_LABEL = "Arithmetic intensity (FLOPs/byte)"
Y_LABEL = "Attainable performance (FLOP/s)"


@dataclass(frozen=True)
class Point:
    """A measured or claimed operation: a name, its intensity (FLOPs/byte), its FLOP/s."""

    label: str
    intensity: float
    flops_per_s: float

    def __post_init__(self):
        for what in ("intensity", "flops_per_s"):
            value = getattr(self, what)
            if isinstance(value, bool) or not isinstance(value, (int, float)) \
                    or not math.isfinite(value) or value <= 0:
                raise ValueError(f"Point {self.label!r}: {what} must be a positive number in SI "
                                 f"base units (FLOPs/byte, FLOP/s), got {value!r}")


# ---------------------------------------------------------------- helpers

def _chips(chips) -> list[Chip]:
    if isinstance(chips, (str, Chip)):
        chips = [chips]
    try:
        items = list(chips)
    except TypeError:
        raise TypeError(f"chips must be a chip name, a Chip, or a list of them; got {chips!r}") from None
    if not items:
        raise ValueError("give at least one chip, e.g. chips='H100 SXM'")
    return [get_chip(c) for c in items]


def _dtypes(dtype) -> list[str]:
    if isinstance(dtype, str) or not hasattr(dtype, "__iter__"):
        return [canonical_dtype(dtype)]
    items = [canonical_dtype(d) for d in dtype]
    if not items:
        raise ValueError("give at least one dtype, e.g. dtype='bf16'")
    return items


def _bandwidths(chip: Chip, bandwidths) -> dict[str, float]:
    """name -> bytes/s for one chip, fastest first."""
    if bandwidths is None:
        levels = {chip.memory_kind: chip.hbm_bytes_per_s}
    elif isinstance(bandwidths, str):
        if bandwidths != "all":
            raise ValueError(f"bandwidths must be None (main memory), 'all' (every level of "
                             f"chip.memory_levels()) or a dict name -> bytes/s; got {bandwidths!r}")
        levels = chip.memory_levels()
    elif isinstance(bandwidths, dict):
        if not bandwidths:
            raise ValueError("bandwidths is an empty dict; give at least one name -> bytes/s")
        levels = {}
        for name, value in bandwidths.items():
            if isinstance(value, bool) or not isinstance(value, (int, float)) \
                    or not math.isfinite(value) or value <= 0:
                raise ValueError(f"bandwidth {name!r} must be a positive number of bytes/s "
                                 f"(e.g. 3.35e12 for 3.35 TB/s), got {value!r}")
            levels[str(name)] = float(value)
    else:
        raise TypeError(f"bandwidths must be None, 'all' or a dict name -> bytes/s; got {bandwidths!r}")
    return dict(sorted(levels.items(), key=lambda kv: -kv[1]))


def _decade_floor(x: float) -> float:
    return 10.0 ** math.floor(math.log10(x))


def _decade_ceil(x: float) -> float:
    return 10.0 ** math.ceil(math.log10(x))


def _intensity_tick(x, _pos=None) -> str:
    if x <= 0:
        return ""
    if 1e-3 <= x < 1e5:
        return f"{x:g}"
    return f"$10^{{{round(math.log10(x))}}}$"


def _rate_tick(y, _pos=None) -> str:
    return "0" if y == 0 else format_flops_rate(y)


def _new_figure(figsize=FIGSIZE, ncols=1):
    import matplotlib.pyplot as plt
    fig, axes = plt.subplots(1, ncols, figsize=figsize, dpi=DPI, facecolor="white")
    plt.close(fig)  # shown once, by the notebook's display of the returned figure
    return fig, axes


def _style_axes(ax) -> None:
    ax.set_facecolor("white")
    for spine in ax.spines.values():
        spine.set_color("#333333")
    ax.tick_params(colors="#000000", labelsize=8)
    ax.grid(True, which="major", color="#dddddd", linewidth=0.6)
    ax.set_axisbelow(True)


def _series_label(chip, dtype, sparse, several_chips, several_dtypes):
    parts = []
    if several_chips:
        parts.append(chip.name)
    if several_dtypes:
        parts.append(dtype)
    if sparse:
        parts.append("2:4 sparse")
    return ", ".join(parts)


# ---------------------------------------------------------------- the figure

def roofline_figure(chips="H100 SXM", dtype="bf16", *, sparse=False, bandwidths=None,
                    operations=(), ax=None, title=None, intensity_range=None,
                    shade_regions=True):
    """A log-log roofline: one flat ceiling per chip and dtype, one slanted one per bandwidth.

    chips: a name or `Chip`, or a list of them (each gets its own colour).
    dtype: "bf16", ... or a list of dtypes (one set of ceilings per chip and dtype).
    sparse: use the vendor's 2:4-sparse peak (dense matmuls get the dense one: keep False).
    bandwidths: None = main memory only; "all" = `chip.memory_levels()` (memory, links,
        PCIe); or a dict name -> bytes/s. Each is its own slanted ceiling and ridge point.
    operations: `roofline.Cost` items (placed on the first chip's roof at their intensity:
        the predicted performance) and `Point(label, intensity, flops_per_s)` items (a
        measured or claimed figure; one above its roof is flagged and listed in
        ``fig.roofline_violations``).
    ax: draw into this matplotlib Axes instead of a new figure.
    intensity_range: (low, high) in FLOPs/byte; default: two decades around the ridges.
    shade_regions: with one chip and one dtype, shade the bandwidth-bound and compute-bound
        regions, split exactly at the ridge point(s).
    """
    from matplotlib.patches import Rectangle
    from matplotlib.ticker import FuncFormatter, LogLocator, NullFormatter
    import numpy as np

    chip_list = _chips(chips)
    dtype_list = _dtypes(dtype)
    if not isinstance(sparse, bool):
        raise TypeError("sparse must be True or False")
    operations = list(operations) if operations is not None else []
    for op in operations:
        if not isinstance(op, (Cost, Point)):
            raise TypeError(f"operations must be roofline.Cost (from rl.matmul, rl.dot, ...) or "
                            f"roofline.plots.Point(label, intensity, flops_per_s); got {op!r}")

    # -- every ceiling and ridge, computed by roofline
    series = []  # (chip, dtype, peak, {name: bytes/s}, colour)
    several_chips, several_dtypes = len(chip_list) > 1, len(dtype_list) > 1
    index = 0
    for chip in chip_list:
        levels = _bandwidths(chip, bandwidths)
        for dt in dtype_list:
            peak = chip.peak_flops_per_s(dt, sparse=sparse)
            colour = PALETTE[_SERIES_COLOURS[index % len(_SERIES_COLOURS)]]
            series.append((chip, dt, peak, levels, colour))
            index += 1
    ridges = []
    for chip, dt, peak, levels, colour in series:
        for name, bw in levels.items():
            ridges.append({
                "chip": chip.name, "dtype": dt, "sparse": sparse, "bandwidth": name,
                "bytes_per_s": bw, "peak_flops_per_s": peak,
                "intensity": critical_intensity(chip, dt, sparse=sparse, bandwidth_bytes_per_s=bw),
            })

    # -- x range: two decades either side of the ridges, covering the operations
    if intensity_range is not None:
        lo, hi = (float(v) for v in intensity_range)
        if not (0 < lo < hi and math.isfinite(hi)):
            raise ValueError(f"intensity_range must be (low, high) with 0 < low < high FLOPs/byte, "
                             f"got {intensity_range!r}")
    else:
        xs_of_interest = [r["intensity"] for r in ridges]
        xs_of_interest += [op.intensity for op in operations]
        lo = _decade_floor(min(xs_of_interest) / 30)
        hi = _decade_ceil(max(xs_of_interest) * 30)
    x = np.geomspace(lo, hi, 256)

    own_figure = ax is None
    if own_figure:
        fig, ax = _new_figure()
    else:
        fig = ax.figure
    _style_axes(ax)
    ax.set_xscale("log")
    ax.set_yscale("log")

    # -- ceilings
    y_low = math.inf
    y_high = 0.0
    for chip, dt, peak, levels, colour in series:
        prefix = _series_label(chip, dt, sparse, several_chips, several_dtypes)
        for k, (name, bw) in enumerate(levels.items()):
            y = attainable_flops_per_s(x, chip, dt, sparse=sparse, bandwidth_bytes_per_s=bw)
            label = f"{prefix}: {name} {format_bandwidth(bw)}" if prefix else f"{name} {format_bandwidth(bw)}"
            if prefix and k == 0:
                # several flat roofs close together cannot all carry a label: the legend does
                label += f", peak {format_flops_rate(peak)}"
            ax.plot(x, y, color=colour, linestyle=_LINESTYLES[k % len(_LINESTYLES)], linewidth=2,
                    label=label, gid=f"roof:{chip.name}:{dt}:{name}")
            y_low = min(y_low, float(y[0]))
        y_high = max(y_high, peak)
        if not prefix:
            ax.annotate(f"peak {format_flops_rate(peak)}", xy=(hi, peak), xytext=(-4, -3),
                        textcoords="offset points", ha="right", va="top", fontsize=7, color=colour)

    # -- ridge points, marked and labelled with their value
    colours_by_series = {(c.name, d): col for c, d, _, _, col in series}
    for r in ridges:
        colour = colours_by_series[(r["chip"], r["dtype"])]
        ax.plot([r["intensity"]], [r["peak_flops_per_s"]], linestyle="none", marker="o",
                color=colour, markersize=6, markerfacecolor="white", markeredgecolor=colour, markeredgewidth=2,
                zorder=5, gid=f"ridge:{r['chip']}:{r['dtype']}:{r['bandwidth']}")
    for r in ridges:
        # a thin guide from the ridge down to the intensity axis, and the value written
        # up along it: labels of nearby ridges then sit side by side instead of on top
        # of each other
        colour = colours_by_series[(r["chip"], r["dtype"])]
        ax.plot([r["intensity"], r["intensity"]], [1e-300, r["peak_flops_per_s"]], color=colour,
                linewidth=0.8, linestyle=(0, (1, 2)), zorder=2, gid=f"ridge-guide:{r['chip']}")
        ax.text(r["intensity"], 0.03, f" ridge {format_intensity(r['intensity'])}", rotation=90,
                transform=ax.get_xaxis_transform(), ha="right", va="bottom", fontsize=7,
                color=colour, zorder=4, gid=f"ridge-label:{r['chip']}:{r['dtype']}:{r['bandwidth']}")

    # -- operations
    violations = []
    first_chip, first_dtype, first_peak, first_levels, _ = series[0]
    fastest_bw = next(iter(first_levels.values()))
    ys_of_points = []
    for op in operations:
        if isinstance(op, Cost):
            intensity = float(op.intensity)
            y = float(attainable_flops_per_s(intensity, first_chip, first_dtype, sparse=sparse,
                                             bandwidth_bytes_per_s=fastest_bw))
            ax.plot([intensity], [y], linestyle="none", marker="D", markersize=7,
                    color=PALETTE["black"], zorder=6, gid=f"operation:{op.name}")
            ax.annotate(f"{op.name}\n{format_intensity(intensity)}, {format_flops_rate(y)}",
                        xy=(intensity, y), xytext=(6, -6), textcoords="offset points",
                        ha="left", va="top", fontsize=7, color=PALETTE["black"])
            ys_of_points.append(y)
            continue
        # a measured / claimed point: compare with the highest roof of the first chip drawn
        roof = max(float(attainable_flops_per_s(op.intensity, first_chip, first_dtype, sparse=sparse,
                                                bandwidth_bytes_per_s=bw))
                   for bw in first_levels.values())
        above = op.flops_per_s > roof * ROOF_TOLERANCE
        ys_of_points.append(op.flops_per_s)
        if above:
            violations.append({"label": op.label, "intensity": op.intensity,
                               "flops_per_s": op.flops_per_s, "roof_flops_per_s": roof,
                               "ratio": op.flops_per_s / roof, "chip": first_chip.name,
                               "dtype": first_dtype})
            ax.plot([op.intensity], [op.flops_per_s], linestyle="none", marker="X", markersize=10,
                    color=PALETTE["vermillion"], markeredgecolor=PALETTE["black"], zorder=7,
                    gid=f"violation:{op.label}")
            right_half = math.log(op.intensity / lo) > 0.5 * math.log(hi / lo)
            note = ABOVE_ROOF_NOTE.replace(": ", ":\n", 1)
            ax.annotate(f"{op.label}: {note}", xy=(op.intensity, op.flops_per_s),
                        xytext=(-8 if right_half else 8, 8), textcoords="offset points",
                        ha="right" if right_half else "left", va="bottom",
                        fontsize=7, color=PALETTE["vermillion"], fontweight="bold",
                        bbox={"boxstyle": "round,pad=0.2", "facecolor": "white",
                              "edgecolor": PALETTE["vermillion"], "linewidth": 0.8})
        else:
            ax.plot([op.intensity], [op.flops_per_s], linestyle="none", marker="s", markersize=6,
                    color=PALETTE["bluish green"], markeredgecolor=PALETTE["black"], zorder=6,
                    gid=f"point:{op.label}")
            ax.annotate(f"{op.label}\n{format_flops_rate(op.flops_per_s)}",
                        xy=(op.intensity, op.flops_per_s), xytext=(6, -6), textcoords="offset points",
                        ha="left", va="top", fontsize=7, color=PALETTE["black"])

    # -- axes: log-log, numbers with units
    y_top = _decade_ceil(max([y_high * 3] + [v * 2 for v in ys_of_points]))
    y_bottom = max(_decade_floor(min([y_low] + ys_of_points)), y_top / 1e9)
    ax.set_xlim(lo, hi)
    ax.set_ylim(y_bottom, y_top)
    ax.set_xlabel(X_LABEL, fontsize=9)
    ax.set_ylabel(Y_LABEL, fontsize=9)
    ax.xaxis.set_major_locator(LogLocator(base=10))
    ax.xaxis.set_major_formatter(FuncFormatter(_intensity_tick))
    ax.xaxis.set_minor_formatter(NullFormatter())
    ax.yaxis.set_major_locator(LogLocator(base=10))
    ax.yaxis.set_major_formatter(FuncFormatter(_rate_tick))
    ax.yaxis.set_minor_formatter(NullFormatter())

    # -- regions: split exactly at the ridge points (one chip, one dtype)
    regions = []
    if shade_regions and len(series) == 1:
        names = list(first_levels)
        edges = [r["intensity"] for r in ridges]  # fastest bandwidth first = smallest ridge
        bounds = [lo] + edges + [hi]
        labels = []
        for i in range(len(edges) + 1):
            if len(edges) == 1:
                labels.append("bandwidth-bound" if i == 0 else "compute-bound")
            elif i == 0:
                labels.append("bandwidth-bound from every level")
            elif i == len(edges):
                labels.append("compute-bound from every level")
            else:
                labels.append(f"compute-bound from {' / '.join(names[:i])}, "
                              f"bandwidth-bound from {' / '.join(names[i:])}")
        for i, label in enumerate(labels):
            x0, x1 = bounds[i], bounds[i + 1]
            if x1 <= x0:
                continue
            colour = PALETTE[_REGION_COLOURS[i % len(_REGION_COLOURS)]]
            ax.add_patch(Rectangle((x0, 0), x1 - x0, 1, transform=ax.get_xaxis_transform(),
                                   facecolor=colour, alpha=0.13, edgecolor="none", zorder=0,
                                   gid=f"region:{i}"))
            regions.append((x0, x1, label))
            centre = math.sqrt(x0 * x1)
            width = math.log(x1 / x0) / math.log(hi / lo)  # share of the axis
            if i == 0:
                short = "bandwidth-bound"
            elif i == len(edges):
                short = "compute-bound"
            else:
                short = (f"compute-bound from {names[i - 1].split(' (')[0]},\n"
                         f"bandwidth-bound from {names[i].split(' (')[0]}")
                if width < 0.3:
                    short = "mixed"
            if width < 0.08:
                short = ""
            ax.text(centre, 0.97, short, transform=ax.get_xaxis_transform(), ha="center",
                    va="top", fontsize=7, color="#333333", zorder=1)
        for edge in edges:
            ax.axvline(edge, color=PALETTE["black"], alpha=0.6, linewidth=0.8, linestyle=(0, (2, 2)), zorder=1,
                       gid="region-boundary")

    if own_figure:
        # below the plot: inside it, a legend would cover a region label, a ridge label or
        # a point, depending on the chip
        handles = len(ax.get_legend_handles_labels()[0])
        ax.legend(loc="upper center", bbox_to_anchor=(0.5, -0.14), ncol=1 if handles > 2 else handles,
                  fontsize=7, frameon=False)
    else:  # drawn into a caller's fixed layout (the explorers): keep it inside
        ax.legend(loc="lower right", fontsize=7, frameon=True, facecolor="white", framealpha=0.9)
    if title is None:
        what = ", ".join(c.name for c in chip_list) + " (" + ", ".join(dtype_list) \
            + (", 2:4 sparse" if sparse else ", dense") + ")"
        title = f"Roofline: {what}"
    if title:
        ax.set_title(title, fontsize=10)

    description = _describe(chip_list, dtype_list, sparse, ridges, regions, operations, violations)
    fig.roofline_ridges = ridges
    fig.roofline_regions = regions
    fig.roofline_violations = violations
    fig.roofline_description = description
    ax.roofline_description = description
    if own_figure:
        fig.set_layout_engine("tight")
    return fig


def _describe(chip_list, dtype_list, sparse, ridges, regions, operations, violations) -> str:
    kind = "2:4-sparse" if sparse else "dense"
    chips = " and ".join(c.name for c in chip_list)
    dtypes = " and ".join(dtype_list)
    ridge_parts = [f"{r['chip']} {r['dtype']} with {r['bandwidth']} "
                   f"({format_bandwidth(r['bytes_per_s'])}) at {format_intensity(r['intensity'])}, "
                   f"peak {format_flops_rate(r['peak_flops_per_s'])}"
                   for r in ridges]
    text = (f"Log-log roofline of the {chips} ({dtypes}, {kind} peak): attainable FLOP/s rises "
            f"with slope 1 along each bandwidth ceiling and flattens at the peak. Ridge point"
            f"{'s' if len(ridges) > 1 else ''}: {'; '.join(ridge_parts)}.")
    if regions:
        text += (" Shaded regions, split at the ridge point" + ("s" if len(regions) > 2 else "")
                 + ": " + "; ".join(f"{label} from {format_intensity(a)} to {format_intensity(b)}"
                                    for a, b, label in regions) + ".")
    for op in operations:
        if isinstance(op, Cost):
            text += f" Operation {op.name} at {format_intensity(float(op.intensity))}."
    flagged = {v["label"] for v in violations}
    for op in operations:
        if isinstance(op, Point):
            where = "ABOVE the roof (impossible: check units, sparse vs dense, FLOP counting)" \
                if op.label in flagged else "below the roof"
            text += (f" Point {op.label}: {format_flops_rate(op.flops_per_s)} at "
                     f"{format_intensity(op.intensity)}, {where}.")
    return text


def linear_and_log_figure(chip="H100 SXM", dtype="bf16"):
    """The same roofline on linear axes (left) and log-log axes (right).

    On linear axes min(peak, bandwidth x intensity) is a line from the origin that
    bends flat at the ridge point; on log-log axes there is no zero, and the
    slanted part is a line of slope 1 that never reaches the origin.
    """
    import numpy as np
    from matplotlib.ticker import FuncFormatter

    chip = get_chip(chip)
    dtype = canonical_dtype(dtype)
    peak = chip.peak_flops_per_s(dtype)
    ridge = critical_intensity(chip, dtype)
    fig, (left, right) = _new_figure(figsize=(9.6, 3.8), ncols=2)

    _style_axes(left)
    x = np.linspace(0, 3 * ridge, 400)
    y = attainable_flops_per_s(np.maximum(x, 1e-300), chip, dtype)
    y = np.where(x == 0, 0.0, y)
    colour = PALETTE[_SERIES_COLOURS[0]]
    left.plot(x, y, color=colour, linewidth=2, gid=f"roof-linear:{chip.name}:{dtype}")
    left.plot([ridge], [peak], linestyle="none", marker="o", color=colour, markerfacecolor="white",
              markeredgecolor=colour, markeredgewidth=2, markersize=6, zorder=5,
              gid=f"ridge-linear:{chip.name}:{dtype}")
    left.annotate(f"ridge {format_intensity(ridge)}", xy=(ridge, peak), xytext=(4, -14),
                  textcoords="offset points", fontsize=7, color=colour)
    left.plot([0], [0], linestyle="none", marker="o", color=PALETTE["black"], markersize=4)
    left.annotate("origin (0, 0)", xy=(0, 0), xytext=(6, 6), textcoords="offset points", fontsize=7)
    left.set_xlim(0, 3 * ridge)
    left.set_ylim(0, 1.25 * peak)
    left.set_xlabel(X_LABEL, fontsize=9)
    left.set_ylabel(Y_LABEL, fontsize=9)
    left.yaxis.set_major_formatter(FuncFormatter(_rate_tick))
    left.set_title("Linear axes: the roof starts at the origin", fontsize=9)

    roofline_figure(chip, dtype, ax=right, shade_regions=False,
                    title="Log-log axes: no zero, a slope-1 line then flat")
    right.get_legend().remove()
    description = (f"Two plots of the same {chip.name} {dtype} roofline (peak "
                   f"{format_flops_rate(peak)}, {chip.memory_kind} {format_bandwidth(chip.hbm_bytes_per_s)}, "
                   f"ridge point {format_intensity(ridge)}). Left, linear axes: a straight line "
                   f"from the origin up to the ridge, then flat. Right, log-log axes: the same "
                   f"curve as a slope-1 line then flat; a log axis has no zero, so no origin.")
    fig.roofline_description = description
    fig.roofline_regions = []
    fig.roofline_violations = []
    fig.set_layout_engine("tight")
    return fig


def resource_figure(chip="TPU v5e", n=2, operations=(), dtype="bf16", topology=None, title=None):
    """Where a D-split matmul sits against two roofs at once: its chip's memory and its links.

    A sharded matmul has one intensity per resource: x = FLOPs per byte of the chip's own
    memory traffic, y = FLOPs per byte on its busiest link (one way). Each has its ridge
    (peak / bandwidth): right of x* the math outlasts the memory, above y* the math outlasts
    the link. Below and left of both, the slower of memory and link wins; they tie on the
    diagonal y = x * (memory bandwidth / link bandwidth), which passes through (x*, y*).

    operations: (label, B, D, F) tuples, each placed with `roofline.sharded_estimate` on
    `n` chips (topology: `roofline.sharded_topology` unless given).
    """
    import numpy as np
    from matplotlib.ticker import FuncFormatter, LogLocator, NullFormatter

    from .estimate import sharded_estimate, sharded_topology
    own = get_chip(chip)
    if own.interconnect is None:
        raise ValueError(f"{own.name} has no chip-to-chip link in the catalog; pick a chip with one")
    chosen = sharded_topology(own, n, topology)
    peak = own.peak_flops_per_s(dtype)
    memory_bw, link_bw = own.hbm_bytes_per_s, own.link_bytes_per_s
    x_star, y_star = peak / memory_bw, peak / link_bw
    ratio = memory_bw / link_bw

    placed = []
    for item in operations:
        try:
            label, B, D, F = item
        except (TypeError, ValueError):
            raise TypeError(f"each operation is (label, B, D, F), got {item!r}") from None
        est = sharded_estimate(B, D, F, own, n=n, dtype=dtype, topology=chosen)
        link_term = est.extra[0]
        placed.append((str(label), est.cost.flops / est.cost.bytes, est.cost.flops / link_term.amount,
                       est.bound))

    xs = [x_star] + [p[1] for p in placed]
    ys = [y_star] + [p[2] for p in placed]
    lo_x, hi_x = _decade_floor(min(xs) / 10), _decade_ceil(max(xs) * 10)
    lo_y, hi_y = _decade_floor(min(ys) / 10), _decade_ceil(max(ys) * 10)

    fig, ax = _new_figure(figsize=(6.4, 4.6))
    _style_axes(ax)
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlim(lo_x, hi_x)
    ax.set_ylim(lo_y, hi_y)
    grid = np.geomspace(lo_x, hi_x, 400)
    left = grid[grid <= x_star]
    fills = (
        ("memory", left, np.maximum(ratio * left, lo_y), np.full_like(left, hi_y), "bluish green"),
        ("link", grid, np.full_like(grid, lo_y), np.minimum(ratio * grid, y_star), "vermillion"),
        ("compute", grid[grid >= x_star], np.full(int((grid >= x_star).sum()), y_star),
         np.full(int((grid >= x_star).sum()), hi_y), "blue"),
    )
    for kind, x, y0, y1, colour in fills:
        ax.fill_between(x, y0, y1, color=PALETTE[colour], alpha=0.15, linewidth=0, gid=f"region:{kind}")
    ax.axvline(x_star, color=PALETTE["black"], linewidth=1, linestyle=(0, (3, 2)), gid="ridge:memory")
    ax.axhline(y_star, color=PALETTE["black"], linewidth=1, linestyle=(0, (1, 2)), gid="ridge:link")
    diag = grid[grid <= x_star]
    ax.plot(diag, ratio * diag, color="#555555", linewidth=0.8, gid="tie:memory-link")

    def at(fx, fy):  # a point at fractions of the log axes
        return (lo_x * (hi_x / lo_x) ** fx, lo_y * (hi_y / lo_y) ** fy)

    ax.text(*at(0.97, 0.95), "compute-bound", ha="right", va="top", fontsize=8, color="#000000")
    ax.text(*at(0.03, 0.95), f"{own.memory_kind}-bound", ha="left", va="top", fontsize=8, color="#000000")
    ax.text(*at(0.97, 0.05), "link-bound", ha="right", va="bottom", fontsize=8, color="#000000")
    ax.annotate(f"memory ridge {format_intensity(x_star)}", xy=(x_star, hi_y), xytext=(3, -3),
                textcoords="offset points", ha="left", va="top", fontsize=7, rotation=90, color="#333333")
    ax.annotate(f"link ridge {format_intensity(y_star)}", xy=(hi_x, y_star), xytext=(-3, 3),
                textcoords="offset points", ha="right", va="bottom", fontsize=7, color="#333333")

    markers = ("o", "s", "D", "^", "v", "P", "X")
    colours = [PALETTE[c] for c in _SERIES_COLOURS]
    for i, (label, x, y, bound) in enumerate(placed):
        ax.plot([x], [y], linestyle="none", marker=markers[i % len(markers)], markersize=8,
                color=colours[i % len(colours)], markeredgecolor="#000000", zorder=5,
                label=f"{label}: {bound}-bound", gid=f"operation:{label}")

    ax.set_xlabel(f"Intensity against {own.memory_kind} (FLOPs per byte of the chip's memory traffic)",
                  fontsize=9)
    ax.set_ylabel("Intensity against the link\n(FLOPs per byte on the busiest link)", fontsize=9)
    for axis in (ax.xaxis, ax.yaxis):
        axis.set_major_locator(LogLocator(base=10))
        axis.set_major_formatter(FuncFormatter(_intensity_tick))
        axis.set_minor_formatter(NullFormatter())
    if placed:
        ax.legend(loc="upper center", bbox_to_anchor=(0.5, -0.16), ncol=1, fontsize=7, frameon=False)
    ax.set_title(title if title is not None else
                 f"{n} × {own.name}, {dtype}, D split, all-reduce on a {chosen}", fontsize=10)
    where = "; ".join(f"{label} at {format_intensity(x)} against memory and {format_intensity(y)} "
                      f"against the link: {bound}-bound" for label, x, y, bound in placed)
    fig.roofline_description = (
        f"Two intensities of a matmul split over {n} {own.name} chips ({dtype}): FLOPs per byte of "
        f"memory traffic across, FLOPs per byte on the busiest link up, both log scales. The memory "
        f"ridge at {format_intensity(x_star)} and the link ridge at {format_intensity(y_star)} split "
        f"the plane: compute-bound above and right of both; to the left the memory or the link is "
        f"slower, with a diagonal where they tie." + (f" Points: {where}." if where else ""))
    fig.roofline_regions = [("compute", x_star, y_star), ("memory", None, None), ("link", None, None)]
    fig.roofline_points = placed
    fig.roofline_ridges = [{"resource": "memory", "intensity": x_star},
                           {"resource": "link", "intensity": y_star}]
    fig.roofline_violations = []
    fig.set_layout_engine("tight")
    return fig


def decode_throughput_figure(model=None, chip="H100 SXM", contexts=(4096, 1024), *, n_chips=1,
                             dtype="bf16", batch_max=None):
    """Decode tokens/s of a whole model against batch size, with its two walls marked.

    One curve per context length T (`roofline.transformer.step_time`, roofline time of a
    decode step), solid while the batch's KV cache fits next to the weights and dotted
    beyond. The **memory wall** (`max_batch`, one per T) is the largest batch that fits;
    the **compute wall** (`decode_critical_batch` of the weight matmuls) is the batch
    from which the weight matmuls stop being bandwidth-bound. Log-log axes. The figure
    carries ``fig.roofline_walls``: {"memory": {T: batch}, "compute": batch}.
    """
    import numpy as np
    from matplotlib.lines import Line2D
    from matplotlib.ticker import FuncFormatter

    from . import transformer as tf

    model = tf.LLAMA_8B_MODEL if model is None else model
    chip = get_chip(chip)
    contexts = [contexts] if isinstance(contexts, (int, float)) else list(contexts)
    if not contexts:
        raise ValueError("give at least one context length T, e.g. contexts=(4096,)")
    compute_wall = tf.decode_critical_batch(model.layer, contexts[0], chip, dtype, include_attention=False)
    memory_walls = {T: tf.max_batch(model, T, chip, n_chips, dtype) for T in contexts}
    finite = [b for b in (compute_wall, *memory_walls.values()) if math.isfinite(b) and b > 0]
    if batch_max is None:
        batch_max = 2 ** math.ceil(math.log2(2 * max(finite + [64])))
    batches = np.unique(np.round(np.logspace(0, math.log10(batch_max), 160)).astype(int))

    fig, ax = _new_figure(figsize=(6.4, 4.6))
    _style_axes(ax)
    chips = f"{n_chips} x {chip.name}" if n_chips > 1 else chip.name
    parts = []
    for index, T in enumerate(contexts):
        colour = PALETTE[_SERIES_COLOURS[index % len(_SERIES_COLOURS)]]
        rates = np.array([tf.step_time(model, int(b), T, chip, n_chips=n_chips, dtype=dtype).tokens_per_s
                          for b in batches])
        wall = memory_walls[T]
        fits = batches <= wall
        ax.plot(batches[fits], rates[fits], color=colour, linewidth=2, label=f"T = {T:,} tokens",
                gid=f"throughput:{T}")
        beyond = batches >= batches[fits][-1] if fits.any() else np.ones_like(fits)
        ax.plot(batches[beyond], rates[beyond], color=colour, linewidth=1.5, linestyle=":",
                gid=f"throughput-beyond:{T}")
        if wall >= 1:
            at_wall = tf.step_time(model, wall, T, chip, n_chips=n_chips, dtype=dtype).tokens_per_s
            ax.axvline(wall, color=colour, linewidth=1, linestyle="--", zorder=1, gid=f"memory-wall:{T}")
            ax.plot([wall], [at_wall], marker="o", color=colour, markerfacecolor="white",
                    markeredgewidth=2, linestyle="none", zorder=5,
                    label=f"memory wall, T = {T:,}: {wall:,} sequences fit")
            parts.append(f"With T = {T:,} tokens of context the KV cache of at most {wall:,} sequences "
                         f"fits next to the weights, where decode reaches {at_wall:,.0f} tokens/s.")
        else:
            parts.append(f"With T = {T:,} not even the weights fit.")
    if math.isfinite(compute_wall):
        ax.axvline(compute_wall, color=PALETTE["black"], linewidth=1.2, linestyle="-.", zorder=1,
                   label=f"compute wall: weight matmuls compute-bound, B = {compute_wall:.0f}",
                   gid="compute-wall")
    ax.plot([], [], color="#555555", linestyle=":", label="dotted: the batch does not fit")
    ax.set_xscale("log", base=2)
    ax.set_yscale("log")
    ax.set_xlim(1, batch_max)
    ax.xaxis.set_major_formatter(FuncFormatter(lambda x, _pos: f"{x:g}"))
    ax.yaxis.set_major_formatter(FuncFormatter(lambda y, _pos: f"{y:,.0f}" if y >= 1 else f"{y:g}"))
    ax.set_xlabel("Batch size B (sequences decoded together)", fontsize=9)
    ax.set_ylabel("Decode throughput (tokens/s)", fontsize=9)
    ax.set_title(f"{model.name} decode on {chips} ({dtype})", fontsize=10)
    # two columns, filled column by column: curves and the compute wall left, their walls right
    handles, labels = ax.get_legend_handles_labels()
    order = list(range(0, len(handles), 2)) + list(range(1, len(handles), 2))
    ax.legend([handles[i] for i in order], [labels[i] for i in order], loc="upper center",
              bbox_to_anchor=(0.5, -0.14), ncol=2, fontsize=7, frameon=False)
    compute_text = (f"The compute wall, the batch from which the weight matmuls are compute-bound, "
                    f"is at B = {compute_wall:.0f}." if math.isfinite(compute_wall) else
                    "The weight matmuls never become compute-bound.")
    fig.roofline_description = (
        f"Log-log plot of decode throughput in tokens per second against batch size for the "
        f"{model.name} model on {chips} in {dtype}, one curve per context length. Throughput rises "
        f"almost in proportion to the batch at first, then flattens as every sequence's KV-cache "
        f"reads take over. " + " ".join(parts) + " " + compute_text
        + " Dotted parts of the curves are batches whose KV cache does not fit in memory.")
    fig.roofline_walls = {"memory": memory_walls, "compute": compute_wall}
    fig.roofline_regions = []
    fig.roofline_violations = []
    fig.set_layout_engine("tight")
    return fig


def alt_text(fig) -> str:
    """The plain-language description of a figure made by this module (for alt text)."""
    text = getattr(fig, "roofline_description", None)
    if text is None:
        text = getattr(getattr(fig, "figure", None), "roofline_description", None)
    if text is None:
        raise ValueError("this figure was not made by roofline.plots (roofline_figure or "
                         "linear_and_log_figure); write its alt text by hand")
    return text
