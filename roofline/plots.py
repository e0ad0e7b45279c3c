"""Roofline figures: log-log, labelled axes with units, ridge points marked.

    >>> import roofline as rl
    >>> fig = rl.plots.roofline_figure("H100 SXM", "bf16")            # one chip
    >>> fig = rl.plots.roofline_figure(["TPU v5e", "H100"], bandwidths="all")
    >>> fig = rl.plots.roofline_figure("TPU v5e", operations=[rl.matmul(128, 4096, 4096),
    ...                                rl.plots.Point("my kernel", 50.0, 3e13)])
    >>> print(rl.plots.alt_text(fig))  # doctest: +ELLIPSIS
    Log-log roofline of the TPU v5e (bf16, dense peak): ... at 240.5 FLOPs/B, peak 197 TFLOP/s. ...

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

# the drawing primitives (roofline.drawing), importable from here as before
from .drawing import (  # noqa: F401
    DPI,
    EXPLORER_FIGSIZE,
    FIG_HEIGHT_IN,
    FIG_WIDTH_IN,
    FONT_SCALE,
    INK,
    LABEL_CONTRAST,
    PALETTE,
    SERIES_COLOURS,
    boxes_overlap,
    contrast_on_white,
    figure_legend,
    figure_renderer,
    figure_svg,
    finish,
    font_pt,
    font_size,
    format_axis,
    height_for_legend,
    label_colour,
    legend_below,
    legend_frames,
    legend_rows,
    new_figure,
    overlap_area,
    place_labels,
    style_axes,
    text_artists,
    text_boxes,
    tick_formatter,
)
from .dtypes import canonical_dtype
from .estimate import attainable_flops_per_s, critical_intensity
from .hardware import Chip
from .units import format_bandwidth, format_flops_rate, format_intensity

__all__ = [
    "PALETTE",
    "Point",
    "roofline_figure",
    "linear_and_log_figure",
    "decode_throughput_figure",
    "alt_text",
    "resource_figure",
    "ABOVE_ROOF_NOTE",
    "ROOF_TOLERANCE",
    "step_time_figure",
]


#: One line style per bandwidth of the same chip (fastest first).
_LINESTYLES = ("-", "--", ":", "-.", (0, (5, 1, 1, 1, 1, 1)), (0, (1, 3)))
#: Fills of the shaded regions, from memory-bound (left) to compute-bound (right).
_REGION_COLOURS = ("sky blue", "yellow", "orange", "bluish green", "reddish purple")

#: A point may exceed its roof by this factor before it is flagged (rounding in spec sheets),
#: the same tolerance as `roofline.check_below_roof`.
ROOF_TOLERANCE = 1.02
ABOVE_ROOF_NOTE = "above the roof: check units, sparse vs dense, FLOP counting"

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
            if (
                isinstance(value, bool)
                or not isinstance(value, (int, float))
                or not math.isfinite(value)
                or value <= 0
            ):
                raise ValueError(
                    f"Point {self.label!r}: {what} must be a positive number in SI "
                    f"base units (FLOPs/byte, FLOP/s), got {value!r}"
                )


# ---------------------------------------------------------------- helpers


def _chips(chips) -> list[Chip]:
    if isinstance(chips, (str, Chip)):
        chips = [chips]
    try:
        items = list(chips)
    except TypeError:
        raise TypeError(
            f"chips must be a chip name, a Chip, or a list of them; got {chips!r}"
        ) from None
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
            raise ValueError(
                f"bandwidths must be None (main memory), 'all' (every level of "
                f"chip.memory_levels()) or a dict name -> bytes/s; got {bandwidths!r}"
            )
        levels = chip.memory_levels()
    elif isinstance(bandwidths, dict):
        if not bandwidths:
            raise ValueError("bandwidths is an empty dict; give at least one name -> bytes/s")
        levels = {}
        for name, value in bandwidths.items():
            if (
                isinstance(value, bool)
                or not isinstance(value, (int, float))
                or not math.isfinite(value)
                or value <= 0
            ):
                raise ValueError(
                    f"bandwidth {name!r} must be a positive number of bytes/s "
                    f"(e.g. 3.35e12 for 3.35 TB/s), got {value!r}"
                )
            levels[str(name)] = float(value)
    else:
        raise TypeError(
            f"bandwidths must be None, 'all' or a dict name -> bytes/s; got {bandwidths!r}"
        )
    return dict(sorted(levels.items(), key=lambda kv: -kv[1]))


def _decade_floor(x: float) -> float:
    return 10.0 ** math.floor(math.log10(x))


def _decade_ceil(x: float) -> float:
    return 10.0 ** math.ceil(math.log10(x))


def _series_label(chip, dtype, sparse, several_chips, several_dtypes):
    parts = []
    if several_chips:
        parts.append(chip.name)
    if several_dtypes:
        parts.append(dtype)
    if sparse:
        parts.append("2:4 sparse")
    return ", ".join(parts)


# ---------------------------------------------------------------- the roofline figure


def roofline_figure(
    chips="H100 SXM",
    dtype="bf16",
    *,
    sparse=False,
    bandwidths=None,
    operations=(),
    ax=None,
    title=None,
    intensity_range=None,
    shade_regions=True,
):
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
    shade_regions: with one chip and one dtype, shade the memory-bound and compute-bound
        regions, split exactly at the ridge point(s).
    """
    import numpy as np

    chip_list, dtype_list, operations = _roofline_inputs(chips, dtype, sparse, operations)
    series, ridges = _series_and_ridges(chip_list, dtype_list, sparse, bandwidths)
    lo, hi = _intensity_limits(intensity_range, ridges, operations)
    x = np.geomspace(lo, hi, 256)

    own_figure = ax is None
    fig, ax = _roofline_canvas(ax, series)
    style_axes(ax)
    ax.set_xscale("log")
    ax.set_yscale("log")

    several = (len(chip_list) > 1, len(dtype_list) > 1)
    y_low, y_high = _draw_ceilings(ax, series, x, sparse, several, hi)
    ridge_labels = _draw_ridges(ax, series, ridges)
    labels, violations, ys_of_points = _draw_operations(ax, operations, series[0], sparse)
    _roofline_axes(ax, lo, hi, y_low, y_high, ys_of_points)
    regions = []
    if shade_regions and len(series) == 1:
        regions = _shade_regions(ax, lo, hi, ridges, list(series[0][3]))

    if own_figure:
        legend_below(ax)
    else:  # drawn into a caller's fixed layout (the explorers): keep it inside
        ax.legend(
            loc="lower right",
            fontsize=font_size(ax),
            frameon=True,
            facecolor="white",
            framealpha=0.9,
        )
    if title is None:
        title = _roofline_title(chip_list, dtype_list, sparse)
    if title:
        ax.set_title(title, fontsize=font_size(ax, "title"))

    description = _describe(chip_list, dtype_list, sparse, ridges, regions, operations, violations)
    fig.roofline_ridges = ridges
    fig.roofline_regions = regions
    fig.roofline_violations = violations
    fig.roofline_description = description
    ax.roofline_description = description
    if own_figure:
        fig.set_layout_engine("constrained")
    # every figure: in an explorer the legend sits in the axes, next to ridge values
    _lay_out_labels(fig, ax, ridge_labels, ax.roofline_peak_labels, labels)
    return fig


def _roofline_canvas(ax, series):
    """The (figure, axes) to draw on: the caller's ``ax``, or a new figure tall enough for a
    legend below it (one entry per chip, dtype and bandwidth when there are several)."""
    if ax is None:
        entries = (
            sum(len(levels) for *_, levels, _ in series)
            if len(series) > 1 or len(series[0][3]) > 1
            else 1
        )
        fig, ax = new_figure(height_for_legend(legend_rows(entries)))
    else:
        fig = ax.figure
    return fig, ax


def _roofline_title(chip_list, dtype_list, sparse) -> str:
    """The default title: "Roofline: " then the chips, the dtypes and dense or 2:4 sparse."""
    what = (
        ", ".join(c.name for c in chip_list)
        + " ("
        + ", ".join(dtype_list)
        + (", 2:4 sparse" if sparse else ", dense")
        + ")"
    )
    return f"Roofline: {what}"


def _roofline_inputs(chips, dtype, sparse, operations):
    chip_list = _chips(chips)
    dtype_list = _dtypes(dtype)
    if not isinstance(sparse, bool):
        raise TypeError("sparse must be True or False")
    operations = list(operations) if operations is not None else []
    for op in operations:
        if not isinstance(op, (Cost, Point)):
            raise TypeError(
                f"operations must be roofline.Cost (from rl.matmul, rl.dot, ...) or "
                f"roofline.plots.Point(label, intensity, flops_per_s); got {op!r}"
            )
    return chip_list, dtype_list, operations


def _series_and_ridges(chip_list, dtype_list, sparse, bandwidths):
    """Every ceiling and ridge, computed by roofline: series are (chip, dtype, peak,
    {bandwidth name: bytes/s}, colour); ridges one dict per (series, bandwidth)."""
    series = []
    for chip in chip_list:
        levels = _bandwidths(chip, bandwidths)
        for dt in dtype_list:
            colour = PALETTE[SERIES_COLOURS[len(series) % len(SERIES_COLOURS)]]
            series.append((chip, dt, chip.peak_flops_per_s(dt, sparse=sparse), levels, colour))
    ridges = []
    for chip, dt, peak, levels, _colour in series:
        for name, bw in levels.items():
            ridges.append(
                {
                    "chip": chip.name,
                    "dtype": dt,
                    "sparse": sparse,
                    "bandwidth": name,
                    "bytes_per_s": bw,
                    "peak_flops_per_s": peak,
                    "intensity": critical_intensity(
                        chip, dt, sparse=sparse, bandwidth_bytes_per_s=bw
                    ),
                }
            )
    return series, ridges


def _intensity_limits(intensity_range, ridges, operations):
    """x range: the caller's, else from 30x below to 30x above the ridges and operations,
    widened to whole decades."""
    if intensity_range is not None:
        lo, hi = (float(v) for v in intensity_range)
        if not (0 < lo < hi and math.isfinite(hi)):
            raise ValueError(
                f"intensity_range must be (low, high) with 0 < low < high FLOPs/byte, "
                f"got {intensity_range!r}"
            )
        return lo, hi
    xs = [r["intensity"] for r in ridges] + [op.intensity for op in operations]
    return _decade_floor(min(xs) / 30), _decade_ceil(max(xs) * 30)


def _draw_ceilings(ax, series, x, sparse, several, hi):
    """One line per chip, dtype and bandwidth; the flat roof's value is written on it (one
    series) or in the legend (several). Returns the lowest and highest roof drawn."""
    y_low, y_high = math.inf, 0.0
    ax.roofline_peak_labels = []
    for chip, dt, peak, levels, colour in series:
        prefix = _series_label(chip, dt, sparse, *several)
        for k, (name, bw) in enumerate(levels.items()):
            y = attainable_flops_per_s(x, chip, dt, sparse=sparse, bandwidth_bytes_per_s=bw)
            label = (
                f"{prefix}: {name} {format_bandwidth(bw)}"
                if prefix
                else f"{name} {format_bandwidth(bw)}"
            )
            if prefix and k == 0:
                # several flat roofs close together cannot all carry a label: the legend does
                label += f", peak {format_flops_rate(peak)}"
            ax.plot(
                x,
                y,
                color=colour,
                linestyle=_LINESTYLES[k % len(_LINESTYLES)],
                linewidth=2,
                label=label,
                gid=f"roof:{chip.name}:{dt}:{name}",
            )
            y_low = min(y_low, float(y[0]))
        y_high = max(y_high, peak)
        if not prefix:
            ax.roofline_peak_labels.append(
                ax.annotate(
                    f"peak {format_flops_rate(peak)}",
                    xy=(hi, peak),
                    xytext=(-4, -3),
                    textcoords="offset points",
                    ha="right",
                    va="top",
                    fontsize=font_size(ax),
                    color=label_colour(colour),
                    bbox=_HALO,
                    gid=f"peak-label:{chip.name}:{dt}",
                )
            )
            ax.roofline_peak_labels[-1].set_in_layout(False)
    return y_low, y_high


def _draw_ridges(ax, series, ridges):
    """Each ridge point: a ring on the roof, a dotted guide down to the intensity axis and
    its value written up along the guide. Returns the value labels."""
    colours = {(c.name, d): col for c, d, _, _, col in series}
    texts = []
    for r in ridges:
        colour = colours[(r["chip"], r["dtype"])]
        ax.plot(
            [r["intensity"]],
            [r["peak_flops_per_s"]],
            linestyle="none",
            marker="o",
            color=colour,
            markersize=6,
            markerfacecolor="white",
            markeredgecolor=colour,
            markeredgewidth=2,
            zorder=5,
            gid=f"ridge:{r['chip']}:{r['dtype']}:{r['bandwidth']}",
        )
        ax.plot(
            [r["intensity"], r["intensity"]],
            [1e-300, r["peak_flops_per_s"]],
            color=colour,
            linewidth=0.8,
            linestyle=(0, (1, 2)),
            zorder=2,
            gid=f"ridge-guide:{r['chip']}",
        )
        # the number alone (the axis says FLOPs/byte): a short label finds room between points
        value = format_intensity(r["intensity"]).split()[0]
        texts.append(
            ax.text(
                r["intensity"],
                0.03,
                f"ridge {value}",
                rotation=90,
                transform=ax.get_xaxis_transform(),
                ha="right",
                va="bottom",
                fontsize=font_size(ax),
                color=label_colour(colour),
                zorder=4,
                bbox=_HALO,
                gid=f"ridge-label:{r['chip']}:{r['dtype']}:{r['bandwidth']}",
            )
        )
        texts[-1].set_in_layout(False)
    return texts


#: A white, slightly see-through box behind text written over lines.
_HALO = {"boxstyle": "square,pad=0.1", "facecolor": "white", "edgecolor": "none", "alpha": 0.8}


def _draw_operations(ax, operations, first, sparse):
    """Costs on the first series' fastest roof (diamonds), Points where they were measured
    (squares; crosses with a boxed warning above their roof). Returns (labels, violations,
    y values)."""
    chip, dtype, _peak, levels, _colour = first
    fastest_bw = next(iter(levels.values()))
    labels, violations, ys = [], [], []
    for op in operations:
        if isinstance(op, Cost):
            label, y = _draw_cost(ax, op, chip, dtype, sparse, fastest_bw)
            labels.append(label)
            ys.append(y)
            continue
        # a measured / claimed point: compare with the highest roof of the first chip drawn
        roof = max(
            float(
                attainable_flops_per_s(
                    op.intensity, chip, dtype, sparse=sparse, bandwidth_bytes_per_s=bw
                )
            )
            for bw in levels.values()
        )
        ys.append(op.flops_per_s)
        if op.flops_per_s > roof * ROOF_TOLERANCE:
            violations.append(
                {
                    "label": op.label,
                    "intensity": op.intensity,
                    "flops_per_s": op.flops_per_s,
                    "roof_flops_per_s": roof,
                    "ratio": op.flops_per_s / roof,
                    "chip": chip.name,
                    "dtype": dtype,
                }
            )
            labels.append(_draw_violation(ax, op))
        else:
            labels.append(_draw_point(ax, op))
    return labels, violations, ys


def _draw_cost(ax, op, chip, dtype, sparse, fastest_bw):
    """A `Cost` as a black diamond on the chip's roof at its intensity (FLOPs/byte), using the
    fastest bandwidth drawn (bytes/s). Returns (its label, its attainable FLOP/s)."""
    intensity = float(op.intensity)
    y = float(
        attainable_flops_per_s(
            intensity, chip, dtype, sparse=sparse, bandwidth_bytes_per_s=fastest_bw
        )
    )
    ax.plot(
        [intensity],
        [y],
        linestyle="none",
        marker="D",
        markersize=7,
        color=PALETTE["black"],
        zorder=6,
        gid=f"operation:{op.name}",
    )
    label = _point_label(ax, f"{_wrap(op.name)}\n{format_intensity(intensity)}", intensity, y)
    return label, y


def _draw_violation(ax, op):
    """A `Point` above its roof: a vermillion cross with a boxed, bold warning. Returns the label."""
    ax.plot(
        [op.intensity],
        [op.flops_per_s],
        linestyle="none",
        marker="X",
        markersize=10,
        color=PALETTE["vermillion"],
        markeredgecolor=PALETTE["black"],
        zorder=7,
        gid=f"violation:{op.label}",
    )
    note = ABOVE_ROOF_NOTE.replace(", sparse", ",\nsparse", 1)
    return _point_label(
        ax,
        f"{_wrap(op.label)}:\n{note}",
        op.intensity,
        op.flops_per_s,
        color=label_colour(PALETTE["vermillion"]),
        fontweight="bold",
        bbox={
            "boxstyle": "round,pad=0.2",
            "facecolor": "white",
            "edgecolor": PALETTE["vermillion"],
            "linewidth": 0.8,
        },
    )


def _draw_point(ax, op):
    """A `Point` at or under its roof: a green square labelled with its FLOP/s. Returns the label."""
    ax.plot(
        [op.intensity],
        [op.flops_per_s],
        linestyle="none",
        marker="s",
        markersize=6,
        color=PALETTE["bluish green"],
        markeredgecolor=PALETTE["black"],
        zorder=6,
        gid=f"point:{op.label}",
    )
    return _point_label(
        ax,
        f"{_wrap(op.label)}\n{format_flops_rate(op.flops_per_s)}",
        op.intensity,
        op.flops_per_s,
    )


def _wrap(text: str, width: int = 24) -> str:
    """Break a long label into lines of about `width` characters."""
    import textwrap

    return "\n".join(textwrap.wrap(text, width)) or text


def _point_label(ax, text, x, y, **style):
    """A label next to a point; `place_labels` later moves it where it covers nothing. It
    stays inside the axes, so the layout ignores it."""
    style.setdefault("color", PALETTE["black"])
    style.setdefault("bbox", _HALO)
    label = ax.annotate(
        text,
        xy=(x, y),
        xytext=(6, -6),
        textcoords="offset points",
        ha="left",
        va="top",
        fontsize=font_size(ax),
        zorder=9,
        **style,
    )
    label.set_in_layout(False)
    return label


def _roofline_axes(ax, lo, hi, y_low, y_high, ys_of_points):
    """Log-log limits (whole decades, room above the peak for the region labels) and ticks
    labelled with units."""
    y_top = _decade_ceil(max([y_high * 3] + [v * 2 for v in ys_of_points]))
    y_bottom = max(_decade_floor(min([y_low] + ys_of_points)), y_top / 1e9)
    ax.set_xlim(lo, hi)
    ax.set_ylim(y_bottom, y_top)
    ax.set_xlabel(X_LABEL, fontsize=font_size(ax, "normal"))
    ax.set_ylabel(Y_LABEL, fontsize=font_size(ax, "normal"))
    format_axis(ax.xaxis, "intensity")
    format_axis(ax.yaxis, "flops_rate")


def _region_labels(names, n_edges):
    """Long label (alt text, fig.roofline_regions) of each region, left to right."""
    labels = []
    for i in range(n_edges + 1):
        if n_edges == 1:
            labels.append("memory-bound" if i == 0 else "compute-bound")
        elif i == 0:
            labels.append("memory-bound from every level")
        elif i == n_edges:
            labels.append("compute-bound from every level")
        else:
            labels.append(
                f"compute-bound from {' / '.join(names[:i])}, "
                f"memory-bound from {' / '.join(names[i:])}"
            )
    return labels


def _shade_regions(ax, lo, hi, ridges, names):
    """Shade the regions between the ridge points (one chip, one dtype) and name each at
    the top of the axes, in short if it is narrow and not at all if it is very narrow."""
    from matplotlib.patches import Rectangle

    edges = [r["intensity"] for r in ridges]  # fastest bandwidth first = smallest ridge
    bounds = [lo] + edges + [hi]
    regions = []
    ax.roofline_region_labels = []
    for i, label in enumerate(_region_labels(names, len(edges))):
        x0, x1 = max(bounds[i], lo), min(bounds[i + 1], hi)
        if x1 <= x0:
            continue
        colour = PALETTE[_REGION_COLOURS[i % len(_REGION_COLOURS)]]
        ax.add_patch(
            Rectangle(
                (x0, 0),
                x1 - x0,
                1,
                transform=ax.get_xaxis_transform(),
                facecolor=colour,
                alpha=0.13,
                edgecolor="none",
                zorder=0,
                gid=f"region:{i}",
            )
        )
        regions.append((bounds[i], bounds[i + 1], label))
        width = math.log(x1 / x0) / math.log(hi / lo)  # share of the axis
        if i == 0:
            short = "memory-bound"
        elif i == len(edges):
            short = "compute-bound"
        else:
            short = (
                "mixed"
                if width < 0.45
                else (
                    f"compute-bound from {names[i - 1].split(' (')[0]},\n"
                    f"memory-bound from {names[i].split(' (')[0]}"
                )
            )
        if width < 0.12 or (width < 0.25 and short != "mixed"):
            short = short if width >= 0.25 else ""
        if short:
            ax.roofline_region_labels.append(
                ax.text(
                    math.sqrt(x0 * x1),
                    0.97,
                    short,
                    transform=ax.get_xaxis_transform(),
                    ha="center",
                    va="top",
                    fontsize=font_size(ax),
                    color=INK["muted"],
                    zorder=1,
                    gid=f"region-label:{i}",
                )
            )
            ax.roofline_region_labels[-1].set_in_layout(False)
    for edge in edges:
        ax.axvline(
            edge,
            color=PALETTE["black"],
            alpha=0.6,
            linewidth=0.8,
            linestyle=(0, (2, 2)),
            zorder=1,
            gid="region-boundary",
        )
    return regions


#: Spots tried for the value of a flat roof, written at the right end of it.
_PEAK_SPOTS = [
    ((dx, dy), "right", "top" if dy < 0 else "bottom")
    for dx in (-4, -60, -120, -180)
    for dy in (-5, 3)
]


def _marker_boxes(ax, renderer, prefixes=("ridge:", "operation:", "point:", "violation:")):
    """Pixel boxes of the markers drawn by lines whose gid starts with one of `prefixes`."""
    from matplotlib.transforms import Bbox

    boxes = []
    for line in ax.get_lines():
        if (line.get_gid() or "").startswith(prefixes) and line.get_marker() not in (
            None,
            "None",
            "",
        ):
            half = line.get_markersize() * ax.figure.dpi / 72 / 2 + 1
            for x, y in ax.transData.transform(line.get_xydata()):
                boxes.append(Bbox([[x - half, y - half], [x + half, y + half]]))
    return boxes


marker_boxes = _marker_boxes  # the public name other modules import


def _lay_out_labels(fig, ax, ridge_labels, peak_labels, point_labels):
    """Once the layout is final: ridge values that would touch move to the other side of
    their guide or up it; the peak's value goes where no marker is; then each point's label
    goes where it covers no other text."""
    if fig.get_layout_engine() is not None:
        fig.get_layout_engine().execute(fig)
    renderer = figure_renderer(fig)
    markers = _marker_boxes(ax, renderer)
    kept = []  # region names that touch a neighbour or leave the axes are left out
    for text in getattr(ax, "roofline_region_labels", []):
        box = text.get_window_extent(renderer)
        if (
            any(boxes_overlap(box, other) for other in kept)
            or box.x0 < ax.bbox.x0
            or box.x1 > ax.bbox.x1
        ):
            text.set_visible(False)
        else:
            kept.append(box)
    placed = []
    for text in sorted(ridge_labels, key=lambda t: t.get_position()[0]):
        for ha, y in (("right", 0.03), ("left", 0.03), ("right", 0.38), ("left", 0.38)):
            text.set_horizontalalignment(ha)
            text.set_y(y)
            box = text.get_window_extent(renderer)
            if (
                not any(boxes_overlap(box, other) for other in placed)
                and box.x0 >= ax.bbox.x0 - 1
                and box.x1 <= ax.bbox.x1 + 1
            ):
                break
        placed.append(text.get_window_extent(renderer))
    # points first (ridge values move out of their way after), then the peak's value
    if point_labels:
        place_labels(fig, point_labels, obstacles=markers, ignore=peak_labels)
    if peak_labels:
        place_labels(fig, peak_labels, obstacles=markers, spots=_PEAK_SPOTS, ignore=ridge_labels)
    _move_covered_ridge_labels(fig, ax, ridge_labels, renderer)


def _move_covered_ridge_labels(fig, ax, ridge_labels, renderer):
    """A ridge value that a point's label covers moves along its guide to a free spot."""
    spots = [(ha, y) for y in (0.03, 0.15, 0.27, 0.39, 0.51, 0.63) for ha in ("right", "left")]
    for text in ridge_labels:
        others = [a.get_window_extent(renderer) for _, a in text_artists(fig) if a is not text]
        others += legend_frames(fig)
        box = text.get_window_extent(renderer)
        if not any(boxes_overlap(box, other) for other in others):
            continue
        best, best_cost = None, math.inf
        for ha, y in spots:
            text.set_horizontalalignment(ha)
            text.set_y(y)
            box = text.get_window_extent(renderer)
            outside = box.width * box.height - overlap_area(box, ax.bbox)
            cost = 10 * outside + sum(overlap_area(box, other) for other in others)
            if cost < best_cost:
                best, best_cost = (ha, y), cost
            if cost == 0:
                break
        text.set_horizontalalignment(best[0])
        text.set_y(best[1])


def _describe(chip_list, dtype_list, sparse, ridges, regions, operations, violations) -> str:
    kind = "2:4-sparse" if sparse else "dense"
    chips = " and ".join(c.name for c in chip_list)
    dtypes = " and ".join(dtype_list)
    ridge_parts = [
        f"{r['chip']} {r['dtype']} with {r['bandwidth']} "
        f"({format_bandwidth(r['bytes_per_s'])}) at {format_intensity(r['intensity'])}, "
        f"peak {format_flops_rate(r['peak_flops_per_s'])}"
        for r in ridges
    ]
    text = (
        f"Log-log roofline of the {chips} ({dtypes}, {kind} peak): attainable FLOP/s rises "
        f"with slope 1 along each bandwidth ceiling and flattens at the peak. Ridge point"
        f"{'s' if len(ridges) > 1 else ''}: {'; '.join(ridge_parts)}."
    )
    if regions:
        text += (
            " Shaded regions, split at the ridge point"
            + ("s" if len(regions) > 2 else "")
            + ": "
            + "; ".join(
                f"{label} from {format_intensity(a)} to {format_intensity(b)}"
                for a, b, label in regions
            )
            + "."
        )
    for op in operations:
        if isinstance(op, Cost):
            text += f" Operation {op.name} at {format_intensity(float(op.intensity))}."
    flagged = {v["label"] for v in violations}
    for op in operations:
        if isinstance(op, Point):
            where = (
                "ABOVE the roof (impossible: check units, sparse vs dense, FLOP counting)"
                if op.label in flagged
                else "below the roof"
            )
            text += (
                f" Point {op.label}: {format_flops_rate(op.flops_per_s)} at "
                f"{format_intensity(op.intensity)}, {where}."
            )
    return text


def linear_and_log_figure(chip="H100 SXM", dtype="bf16"):
    """The same roofline on linear axes (top) and log-log axes (bottom).

    On linear axes min(peak, bandwidth x intensity) is a line from the origin that
    bends flat at the ridge point; on log-log axes there is no zero, and the
    slanted part is a line of slope 1 that never reaches the origin. The panels are
    stacked, so that each keeps the full width (and readable text) on a phone.
    """
    chip = get_chip(chip)
    dtype = canonical_dtype(dtype)
    peak = chip.peak_flops_per_s(dtype)
    ridge = critical_intensity(chip, dtype)
    fig, (top, bottom) = new_figure(2 * FIG_HEIGHT_IN - 0.2, nrows=2)
    _linear_roofline(top, chip, dtype, peak, ridge)
    roofline_figure(
        chip,
        dtype,
        ax=bottom,
        shade_regions=False,
        title="Log-log axes: no zero, a slope-1 line then flat",
    )
    bottom.get_legend().remove()
    description = (
        f"Two plots of the same {chip.name} {dtype} roofline (peak "
        f"{format_flops_rate(peak)}, {chip.memory_kind} {format_bandwidth(chip.hbm_bytes_per_s)}, "
        f"ridge point {format_intensity(ridge)}). Top, linear axes: a straight line "
        f"from the origin up to the ridge, then flat. Bottom, log-log axes: the same "
        f"curve as a slope-1 line then flat; a log axis has no zero, so no origin."
    )
    fig.roofline_description = description
    fig.roofline_regions = []
    fig.roofline_violations = []
    fig.set_layout_engine("constrained")
    _lay_out_labels(
        fig,
        bottom,
        [t for t in bottom.texts if (t.get_gid() or "").startswith("ridge-label")],
        bottom.roofline_peak_labels,
        [],
    )
    return fig


def _linear_roofline(ax, chip, dtype, peak, ridge):
    """The roofline on linear axes, from the origin to three times the ridge point."""
    import numpy as np

    x = np.linspace(0, 3 * ridge, 400)
    y = attainable_flops_per_s(np.maximum(x, 1e-300), chip, dtype)
    y = np.where(x == 0, 0.0, y)
    colour = PALETTE[SERIES_COLOURS[0]]
    ax.plot(x, y, color=colour, linewidth=2, gid=f"roof-linear:{chip.name}:{dtype}")
    ax.plot(
        [ridge],
        [peak],
        linestyle="none",
        marker="o",
        color=colour,
        markerfacecolor="white",
        markeredgecolor=colour,
        markeredgewidth=2,
        markersize=6,
        zorder=5,
        gid=f"ridge-linear:{chip.name}:{dtype}",
    )
    ax.annotate(
        f"ridge {format_intensity(ridge)}",
        xy=(ridge, peak),
        xytext=(4, -14),
        textcoords="offset points",
        fontsize=font_size(ax),
        color=label_colour(colour),
    )
    ax.plot([0], [0], linestyle="none", marker="o", color=PALETTE["black"], markersize=4)
    ax.annotate(
        "origin (0, 0)",
        xy=(0, 0),
        xytext=(6, 6),
        textcoords="offset points",
        fontsize=font_size(ax),
    )
    ax.set_xlim(0, 3 * ridge)
    ax.set_ylim(0, 1.25 * peak)
    ax.set_xlabel(X_LABEL, fontsize=font_size(ax, "normal"))
    ax.set_ylabel(Y_LABEL, fontsize=font_size(ax, "normal"))
    ax.yaxis.set_major_formatter(tick_formatter("flops_rate"))
    ax.set_title("Linear axes: the roof starts at the origin", fontsize=font_size(ax, "title"))


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
    from .estimate import sharded_topology

    own = get_chip(chip)
    if own.interconnect is None:
        raise ValueError(
            f"{own.name} has no chip-to-chip link in the catalog; pick a chip with one"
        )
    chosen = sharded_topology(own, n, topology)
    peak = own.peak_flops_per_s(dtype)
    memory_bw, link_bw = own.hbm_bytes_per_s, own.link_bytes_per_s
    x_star, y_star = peak / memory_bw, peak / link_bw
    ratio = memory_bw / link_bw

    placed = _place_sharded(operations, own, n, dtype, chosen)

    xs = [x_star] + [p[1] for p in placed]
    ys = [y_star] + [p[2] for p in placed]
    lo_x, hi_x = _decade_floor(min(xs) / 10), _decade_ceil(max(xs) * 10)
    lo_y, hi_y = _decade_floor(min(ys) / 10), _decade_ceil(max(ys) * 10)

    fig, ax = new_figure(height_for_legend(len(placed), base_in=FIG_HEIGHT_IN + 0.3))
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlim(lo_x, hi_x)
    ax.set_ylim(lo_y, hi_y)
    _resource_regions(ax, x_star, y_star, ratio, (lo_x, hi_x), (lo_y, hi_y))
    _resource_labels(ax, own, x_star, y_star, (lo_x, hi_x), (lo_y, hi_y))
    _resource_points(ax, placed)

    ax.set_xlabel(
        f"Intensity against {own.memory_kind}\n(FLOPs per byte of the chip's memory traffic)",
        fontsize=font_size(ax, "normal"),
    )
    ax.set_ylabel(
        "Intensity against the link\n(FLOPs per byte on the busiest link)",
        fontsize=font_size(ax, "normal"),
    )
    format_axis(ax.xaxis, "intensity")
    format_axis(ax.yaxis, "intensity")
    legend_below(ax)
    ax.set_title(
        title
        if title is not None
        else _wrap(f"{n} × {own.name}, {dtype}, D split, all-reduce on a {chosen}", 48),
        fontsize=font_size(ax, "title"),
    )
    fig.roofline_description = _resource_description(n, own, dtype, x_star, y_star, placed)
    fig.roofline_regions = [
        ("compute", x_star, y_star),
        ("memory", None, None),
        ("link", None, None),
    ]
    fig.roofline_points = placed
    fig.roofline_ridges = [
        {"resource": "memory", "intensity": x_star},
        {"resource": "link", "intensity": y_star},
    ]
    fig.roofline_violations = []
    fig.set_layout_engine("constrained")
    return fig


def _place_sharded(operations, own, n, dtype, chosen):
    """Each (label, B, D, F) placed with `roofline.sharded_estimate` on ``n`` chips: a list of
    (label, FLOPs per byte of memory traffic, FLOPs per byte on the busiest link, bound)."""
    from .estimate import sharded_estimate

    placed = []
    for item in operations:
        try:
            label, B, D, F = item
        except (TypeError, ValueError):
            raise TypeError(f"each operation is (label, B, D, F), got {item!r}") from None
        est = sharded_estimate(B, D, F, own, n=n, dtype=dtype, topology=chosen)
        link_term = est.extra[0]
        placed.append(
            (
                str(label),
                est.cost.flops / est.cost.bytes,
                est.cost.flops / link_term.amount,
                est.bound,
            )
        )
    return placed


def _resource_regions(ax, x_star, y_star, ratio, x_limits, y_limits):
    """Shade where memory, the link or compute bounds the time (intensities in FLOPs/byte; ratio
    = memory / link bandwidth) and draw both ridges and the memory-link tie diagonal."""
    import numpy as np

    (lo_x, hi_x), (lo_y, hi_y) = x_limits, y_limits
    grid = np.geomspace(lo_x, hi_x, 400)
    left = grid[grid <= x_star]
    fills = (
        ("memory", left, np.maximum(ratio * left, lo_y), np.full_like(left, hi_y), "bluish green"),
        ("link", grid, np.full_like(grid, lo_y), np.minimum(ratio * grid, y_star), "vermillion"),
        (
            "compute",
            grid[grid >= x_star],
            np.full(int((grid >= x_star).sum()), y_star),
            np.full(int((grid >= x_star).sum()), hi_y),
            "blue",
        ),
    )
    for kind, x, y0, y1, colour in fills:
        ax.fill_between(
            x, y0, y1, color=PALETTE[colour], alpha=0.15, linewidth=0, gid=f"region:{kind}"
        )
    ax.axvline(
        x_star, color=PALETTE["black"], linewidth=1, linestyle=(0, (3, 2)), gid="ridge:memory"
    )
    ax.axhline(y_star, color=PALETTE["black"], linewidth=1, linestyle=(0, (1, 2)), gid="ridge:link")
    diag = grid[grid <= x_star]
    ax.plot(diag, ratio * diag, color="#555555", linewidth=0.8, gid="tie:memory-link")


def _resource_labels(ax, own, x_star, y_star, x_limits, y_limits):
    """Name the three regions in their corners and write the two ridge values (FLOPs/byte)."""
    (lo_x, hi_x), (lo_y, hi_y) = x_limits, y_limits

    def at(fx, fy):  # a point at fractions of the log axes
        return (lo_x * (hi_x / lo_x) ** fx, lo_y * (hi_y / lo_y) ** fy)

    ax.text(
        *at(0.97, 0.95),
        "compute-bound",
        ha="right",
        va="top",
        fontsize=font_size(ax),
        color=INK["text"],
    )
    ax.text(
        *at(0.03, 0.95),
        f"{own.memory_kind}-bound",
        ha="left",
        va="top",
        fontsize=font_size(ax),
        color=INK["text"],
    )
    ax.text(
        *at(0.97, 0.05),
        "link-bound",
        ha="right",
        va="bottom",
        fontsize=font_size(ax),
        color=INK["text"],
    )
    ax.annotate(
        f"memory ridge {format_intensity(x_star)}",
        xy=(x_star, hi_y),
        xytext=(3, -3),
        textcoords="offset points",
        ha="left",
        va="top",
        fontsize=font_size(ax),
        rotation=90,
        color=INK["muted"],
    )
    ax.annotate(
        f"link ridge {format_intensity(y_star)}",
        xy=(hi_x, y_star),
        xytext=(-3, 3),
        textcoords="offset points",
        ha="right",
        va="bottom",
        fontsize=font_size(ax),
        color=INK["muted"],
    )


def _resource_points(ax, placed):
    """Each placed operation as its own marker and colour, labelled with its bound."""
    markers = ("o", "s", "D", "^", "v", "P", "X")
    colours = [PALETTE[c] for c in SERIES_COLOURS]
    for i, (label, x, y, bound) in enumerate(placed):
        ax.plot(
            [x],
            [y],
            linestyle="none",
            marker=markers[i % len(markers)],
            markersize=8,
            color=colours[i % len(colours)],
            markeredgecolor="#000000",
            zorder=5,
            label=f"{label}: {bound}-bound",
            gid=f"operation:{label}",
        )


def _resource_description(n, own, dtype, x_star, y_star, placed) -> str:
    """Alt text of the resource figure: the axes, both ridges (FLOPs/byte) and every point."""
    where = "; ".join(
        f"{label} at {format_intensity(x)} against memory and {format_intensity(y)} "
        f"against the link: {bound}-bound"
        for label, x, y, bound in placed
    )
    return (
        f"Two intensities of a matmul split over {n} {own.name} chips ({dtype}): FLOPs per byte of "
        f"memory traffic across, FLOPs per byte on the busiest link up, both log scales. The memory "
        f"ridge at {format_intensity(x_star)} and the link ridge at {format_intensity(y_star)} split "
        f"the plane: compute-bound above and right of both; to the left the memory or the link is "
        f"slower, with a diagonal where they tie." + (f" Points: {where}." if where else "")
    )


def decode_throughput_figure(
    model=None, chip="H100 SXM", contexts=(4096, 1024), *, n_chips=1, dtype="bf16", batch_max=None
):
    """Decode tokens/s of a whole model against batch size, with its two walls marked.

    One curve per context length T (`roofline.transformer.step_time`, roofline time of a
    decode step), solid while the batch's KV cache fits next to the weights and dotted
    beyond. The **memory wall** (`max_batch`, one per T) is the largest batch that fits;
    the **compute wall** (`decode_critical_batch` of the weight matmuls) is the batch
    from which the weight matmuls stop being memory-bound. Log-log axes. The figure
    carries ``fig.roofline_walls``: {"memory": {T: batch}, "compute": batch}.
    """
    import numpy as np

    from . import transformer as tf

    model = tf.as_model_shape(tf.LLAMA_8B_MODEL if model is None else model)
    chip = get_chip(chip)
    contexts = [contexts] if isinstance(contexts, (int, float)) else list(contexts)
    if not contexts:
        raise ValueError("give at least one context length T, e.g. contexts=(4096,)")
    compute_wall = tf.decode_critical_batch(
        tf.layer_shape(model), contexts[0], chip, dtype, include_attention=False
    )
    memory_walls = {T: tf.max_batch(model, T, chip, n_chips, dtype) for T in contexts}
    finite = [b for b in (compute_wall, *memory_walls.values()) if math.isfinite(b) and b > 0]
    if batch_max is None:
        batch_max = 2 ** math.ceil(math.log2(2 * max(finite + [64])))
    batches = np.unique(np.round(np.logspace(0, math.log10(batch_max), 160)).astype(int))

    fig, ax = new_figure(height_for_legend(2 * len(contexts) + 2))
    chips = f"{n_chips} x {chip.name}" if n_chips > 1 else chip.name
    parts = []
    for index, T in enumerate(contexts):
        colour = PALETTE[SERIES_COLOURS[index % len(SERIES_COLOURS)]]
        parts.append(
            _draw_context_curve(
                ax, model, chip, T, batches, memory_walls[T], colour, n_chips, dtype
            )
        )
    _draw_compute_wall(ax, compute_wall)
    ax.plot([], [], color="#555555", linestyle=":", label="dotted: the batch does not fit")
    ax.set_xscale("log", base=2)
    ax.set_yscale("log")
    ax.set_xlim(1, batch_max)
    format_axis(ax.xaxis, "count", base=2)
    format_axis(ax.yaxis, "count")
    ax.set_xlabel("Batch size B (sequences decoded together)", fontsize=font_size(ax, "normal"))
    ax.set_ylabel("Decode throughput (tokens/s)", fontsize=font_size(ax, "normal"))
    ax.set_title(f"{model.name} decode on {chips} ({dtype})", fontsize=font_size(ax, "title"))
    legend_below(ax)
    fig.roofline_description = _decode_description(model, chips, dtype, parts, compute_wall)
    fig.roofline_walls = {"memory": memory_walls, "compute": compute_wall}
    fig.roofline_regions = []
    fig.roofline_violations = []
    fig.set_layout_engine("constrained")
    return fig


def _draw_context_curve(ax, model, chip, T, batches, wall, colour, n_chips, dtype) -> str:
    """Decode tokens/s against batch for context length ``T`` (tokens): solid while the KV cache
    fits (batch <= ``wall`` sequences), dotted beyond, with the memory wall marked. Returns the
    sentence of the alt text for this ``T``."""
    import numpy as np

    from . import transformer as tf

    rates = np.array(
        [
            tf.step_time(model, int(b), T, chip, n_chips=n_chips, dtype=dtype).tokens_per_s
            for b in batches
        ]
    )
    fits = batches <= wall
    ax.plot(
        batches[fits],
        rates[fits],
        color=colour,
        linewidth=2,
        label=f"T = {T:,} tokens",
        gid=f"throughput:{T}",
    )
    beyond = batches >= batches[fits][-1] if fits.any() else np.ones_like(fits)
    ax.plot(
        batches[beyond],
        rates[beyond],
        color=colour,
        linewidth=1.5,
        linestyle=":",
        gid=f"throughput-beyond:{T}",
    )
    if wall >= 1:
        at_wall = tf.step_time(model, wall, T, chip, n_chips=n_chips, dtype=dtype).tokens_per_s
        ax.axvline(
            wall, color=colour, linewidth=1, linestyle="--", zorder=1, gid=f"memory-wall:{T}"
        )
        ax.plot(
            [wall],
            [at_wall],
            marker="o",
            color=colour,
            markerfacecolor="white",
            markeredgewidth=2,
            linestyle="none",
            zorder=5,
            label=f"memory wall, T = {T:,}: {wall:,} sequences fit",
        )
        return (
            f"With T = {T:,} tokens of context the KV cache of at most {wall:,} sequences "
            f"fits next to the weights, where decode reaches {at_wall:,.0f} tokens/s."
        )
    return f"With T = {T:,} not even the weights fit."


def _draw_compute_wall(ax, compute_wall) -> None:
    """A dash-dot vertical line at the batch from which the weight matmuls are compute-bound
    (none when they never are)."""
    if math.isfinite(compute_wall):
        ax.axvline(
            compute_wall,
            color=PALETTE["black"],
            linewidth=1.2,
            linestyle="-.",
            zorder=1,
            label=f"compute wall: weight matmuls compute-bound, B = {compute_wall:.0f}",
            gid="compute-wall",
        )


def _decode_description(model, chips, dtype, parts, compute_wall) -> str:
    """Alt text of the decode figure: the axes, each context's memory wall and the compute wall."""
    compute_text = (
        f"The compute wall, the batch from which the weight matmuls are compute-bound, "
        f"is at B = {compute_wall:.0f}."
        if math.isfinite(compute_wall)
        else "The weight matmuls never become compute-bound."
    )
    return (
        f"Log-log plot of decode throughput in tokens per second against batch size for the "
        f"{model.name} model on {chips} in {dtype}, one curve per context length. Throughput rises "
        f"almost in proportion to the batch at first, then flattens as every sequence's KV-cache "
        f"reads take over. "
        + " ".join(parts)
        + " "
        + compute_text
        + " Dotted parts of the curves are batches whose KV cache does not fit in memory."
    )


def alt_text(fig) -> str:
    """The plain-language description of a figure made by this module (for alt text)."""
    text = getattr(fig, "roofline_description", None)
    if text is None:
        text = getattr(getattr(fig, "figure", None), "roofline_description", None)
    if text is None:
        raise ValueError(
            "this figure was not made by roofline.plots (roofline_figure or "
            "linear_and_log_figure); write its alt text by hand"
        )
    return text


#: Colours of a training step's resources in `step_time_figure`: the math, the memory, each
#: parallel axis's collectives (one colour per axis) and the pipeline's idle time.
STEP_COLOURS = {
    "math": "blue",
    "HBM": "bluish green",
    "TP": "orange",
    "FSDP": "sky blue",
    "DP": "reddish purple",
    "EP": "yellow",
    "PP": "black",
    "bubble": "vermillion",
}


def step_time_figure(steps, measured=None, title=None):
    """Where a training step's time goes: one bar per layout, the times of its resources
    (`TrainingStep.times`: math, HBM traffic, each axis's collectives, the pipeline bubble)
    laid end to end, so the bar is the step **without any overlap** (`t_upper`); a dashed tick
    marks the best case, everything overlapped but the bubble (`t_lower`), and a diamond a
    measured step where one is given.

    steps: {label: TrainingStep}, drawn top to bottom; measured: {label: seconds per step}.
    """
    from matplotlib.lines import Line2D
    from matplotlib.patches import Patch

    if not steps:
        raise ValueError("give at least one training step: {label: rl.training_step(...)}")
    measured = dict(measured or {})
    unknown = set(measured) - set(steps)
    if unknown:
        raise ValueError(f"measured names no step of {sorted(steps)}: {sorted(unknown)}")
    order = [r for r in STEP_COLOURS if any(r in s.times for s in steps.values())]
    order += [r for s in steps.values() for r in s.times if r not in order]
    colour = {r: PALETTE[STEP_COLOURS.get(r, "black")] for r in order}
    fig, ax = new_figure(height_for_legend(3, base_in=1.6 + 0.55 * len(steps)))
    labels = list(steps)
    for row, label in enumerate(labels):
        y, left, step = len(labels) - 1 - row, 0.0, steps[label]
        for resource in order:
            seconds = step.times.get(resource, 0.0)
            if seconds > 0:
                ax.barh(
                    y,
                    seconds,
                    left=left,
                    height=0.6,
                    color=colour[resource],
                    edgecolor="white",
                    linewidth=0.6,
                )
                left += seconds
        ax.plot([step.t_lower] * 2, [y - 0.4, y + 0.4], color=PALETTE["black"], lw=1.5, ls="--")
        if label in measured:
            ax.plot([measured[label]], [y], marker="D", ms=6, color=PALETTE["black"], ls="none")
    ax.set_yticks(range(len(labels)), labels[::-1], fontsize=font_size(ax))
    ax.set_ylim(-0.6, len(labels) - 0.4)
    highest = max([s.t_upper for s in steps.values()] + list(measured.values()))
    ax.set_xlim(0, highest * 1.08)
    ax.xaxis.set_major_formatter(tick_formatter("time"))
    ax.grid(False, axis="y")
    ax.set_xlabel("time per step (the parts end to end)", fontsize=font_size(ax, "normal"))
    if title:
        ax.set_title(title, fontsize=font_size(ax, "title"))
    handles = [Patch(color=colour[r]) for r in order]
    names = list(order)
    handles.append(Line2D([], [], color=PALETTE["black"], lw=1.5, ls="--"))
    names.append("best case (all overlapped)")
    if measured:
        handles.append(Line2D([], [], marker="D", color=PALETTE["black"], ls="none"))
        names.append("measured step")
    legend_below(ax, handles, names, ncol=3)
    fig.roofline_description = _step_description(steps, order, measured, title)
    fig.roofline_regions = []
    fig.roofline_violations = []
    return fig


def _step_description(steps, order, measured, title) -> str:
    from .units import format_time

    rows = []
    for label, step in steps.items():
        parts = ", ".join(f"{r} {format_time(step.times[r])}" for r in order if r in step.times)
        seen = f"; measured {format_time(measured[label])}" if label in measured else ""
        rows.append(
            f"{label}: {parts}; best case {format_time(step.t_lower)}, no overlap "
            f"{format_time(step.t_upper)}{seen}"
        )
    head = f"{title}. " if title else ""
    return (
        head
        + "Bars of a training step's time per layout, the parts end to end. "
        + ". ".join(rows)
        + "."
    )
