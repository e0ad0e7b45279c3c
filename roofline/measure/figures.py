"""Figures of a measurement: the bandwidth sweep (bandwidth against working-set size,
plateaus marked) and the measured roofline with the operations timed on it."""

from __future__ import annotations

__all__ = ["sweep_figure", "measured_roofline_figure"]


def sweep_figure(result, ax=None):
    """Log-log plot of each kernel's best bandwidth against its working set, with the
    detected plateaus (caches, main memory) as horizontal segments. Returns the Figure;
    ``fig.roofline_description`` holds a plain-language description (alt text)."""
    from ..drawing import (
        PALETTE,
        font_size,
        format_axis,
        height_for_legend,
        legend_below,
        new_figure,
    )
    from ..units import format_bandwidth

    colours = [PALETTE[k] for k in ("blue", "orange", "bluish green")]
    own = ax is None
    if own:
        fig, ax = new_figure(height_for_legend(1))
    else:
        fig = ax.figure
    markers = ("o", "s", "^")
    for i, (kernel, (sizes, bws)) in enumerate(result.curves().items()):
        ax.plot(
            sizes,
            bws,
            marker=markers[i % 3],
            markersize=4,
            linewidth=1,
            label=kernel,
            color=colours[i % len(colours)],
        )
    levels = result.levels()
    names = [n for n, _ in levels.named()] + ["main memory (DRAM)"]
    for name, p in zip(names, levels.plateaus):
        ax.hlines(
            p.bytes_per_s,
            p.min_working_set,
            p.max_working_set,
            colors=PALETTE.get("black", "k"),
            linewidth=3,
            alpha=0.6,
        )
        ax.annotate(
            f"{name}: {format_bandwidth(p.bytes_per_s)}",
            xy=(p.max_working_set, p.bytes_per_s),
            xytext=(4, 4),
            textcoords="offset points",
            fontsize=font_size(ax),
        )
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.autoscale_view()
    format_axis(ax.xaxis, "bytes", base=2)
    format_axis(ax.yaxis, "bandwidth")
    ax.set_xlabel(
        "Working set (bytes of all arrays the kernel touches)", fontsize=font_size(ax, "normal")
    )
    ax.set_ylabel("Bandwidth (bytes/s)", fontsize=font_size(ax, "normal"))
    if own:
        legend_below(ax, ncol=3)
        from ..drawing import place_labels

        place_labels(fig, [t for t in ax.texts])
    else:
        ax.legend(fontsize=font_size(ax), loc="lower left")
    ax.set_title(f"Bandwidth sweep on {result.host}", fontsize=font_size(ax, "title"))
    fig.roofline_description = (
        "Bandwidth against working-set size for the copy, scale and add kernels on log-log axes; "
        + "; ".join(
            f"{n} {format_bandwidth(p.bytes_per_s)}" for n, p in zip(names, levels.plateaus)
        )
    )
    return fig


_POINT_MARKERS = ("o", "s", "^", "v", "D", "P", "h", "*", "<", ">", "p", "d")


def measured_roofline_figure(result, dtype: str = "fp64"):
    """The measured roofline with the measured operations on it, every label in the legend.

    Roofs on one thread (the bandwidth of each memory level and the matmul peak, all
    measured on one thread, like the operations), and, when the run measured them, the
    main-memory roof and peak on all threads in a second colour. Each operation has its
    own marker and a legend entry with its name and FLOP/s; nothing is written on the
    plot itself, so no label can cover another. ``fig.roofline_description`` is the alt
    text; ``fig.roofline_ridges`` lists the ridge points drawn (threads, level, intensity).
    """
    import math

    import numpy as np

    from ..drawing import font_size, format_axis, height_for_legend, new_figure
    from ..estimate import attainable_flops_per_s

    chip = result.chip
    peak = chip.peak_flops_per_s(dtype)
    levels = chip.memory_levels()
    all_chip, all_peak = _all_thread_chip(result, dtype)
    ridges = _measured_ridges(result, dtype, all_chip, all_peak)
    points = result.points()
    xs = [r["intensity"] for r in ridges] + [p.intensity for p in points]
    lo = 10.0 ** math.floor(math.log10(min(xs) / 3))
    hi = 10.0 ** math.ceil(math.log10(max(xs) * 10))
    x = np.geomspace(lo, hi, 256)

    entries = len(levels) + 1 + (all_chip is not None) + len(points)
    fig, ax = new_figure(height_for_legend(entries + 2))
    ax.set_xscale("log")
    ax.set_yscale("log")
    _draw_measured_roofs(ax, x, result, dtype, all_chip, all_peak)
    above = _draw_measured_points(ax, chip, dtype, points)
    tops = [peak] + ([all_peak] if all_chip is not None else []) + [p.flops_per_s for p in points]
    bottoms = [float(attainable_flops_per_s(lo, chip, dtype))] + [p.flops_per_s for p in points]
    ax.set_xlim(lo, hi)
    ax.set_ylim(
        10.0 ** math.floor(math.log10(min(bottoms) / 2)),
        10.0 ** math.ceil(math.log10(max(tops) * 2)),
    )
    format_axis(ax.xaxis, "intensity")
    format_axis(ax.yaxis, "flops_rate")
    ax.set_xlabel("Arithmetic intensity (FLOPs/byte)", fontsize=font_size(ax, "normal"))
    ax.set_ylabel("Attainable performance (FLOP/s)", fontsize=font_size(ax, "normal"))
    ax.set_title(f"{result.host}, measured ({dtype})", fontsize=font_size(ax, "title"))
    # the legend stays an Axes legend (below the plot, anchored under the axis label), every
    # label in it: nothing is written on the plot, so no label can cover another
    ax.legend(
        loc="upper center",
        bbox_to_anchor=(0.5, -0.2),
        ncol=1,
        fontsize=font_size(ax),
        frameon=False,
    )
    fig.roofline_description = _measured_description(
        result, dtype, all_chip, all_peak, points, above
    )
    fig.roofline_ridges = ridges
    fig.roofline_violations = above
    return fig


def _all_thread_chip(result, dtype: str):
    """The chip as measured on all threads and its peak (FLOP/s) in ``dtype``, or (None, None)
    when the run used one thread, measured no all-thread bandwidth, or stopped early."""
    if result.threads > 1 and result.threaded_bandwidth:
        try:
            all_chip = result.chip_all_threads
            return all_chip, all_chip.peak_flops_per_s(dtype)
        except Exception:  # the all-thread step stopped early or missed this dtype
            pass
    return None, None


def _measured_ridges(result, dtype: str, all_chip, all_peak) -> list[dict]:
    """One dict per ridge point drawn: threads, memory level, bandwidth (bytes/s), peak
    (FLOP/s) and ridge intensity (FLOPs/byte); one per memory level on one thread, then the
    main-memory ridge on all threads when ``all_chip`` is given."""
    from ..estimate import critical_intensity

    chip = result.chip
    peak = chip.peak_flops_per_s(dtype)
    ridges = [
        {
            "threads": 1,
            "level": name,
            "bytes_per_s": bw,
            "peak_flops_per_s": peak,
            "intensity": critical_intensity(chip, dtype, bandwidth_bytes_per_s=bw),
        }
        for name, bw in chip.memory_levels().items()
    ]
    if all_chip is not None:
        ridges.append(
            {
                "threads": result.threads,
                "level": "DRAM",
                "bytes_per_s": all_chip.hbm_bytes_per_s,
                "peak_flops_per_s": all_peak,
                "intensity": critical_intensity(all_chip, dtype),
            }
        )
    return ridges


def _ridge_marker(ax, ridge: float, peak: float, color) -> None:
    """An open circle at the ridge point (intensity in FLOPs/byte, peak in FLOP/s)."""
    ax.plot(
        [ridge],
        [peak],
        marker="o",
        color=color,
        markerfacecolor="white",
        markeredgewidth=2,
        linestyle="none",
        zorder=5,
    )


def _draw_measured_roofs(ax, x, result, dtype: str, all_chip, all_peak) -> None:
    """The one-thread roofs (one line style per memory level, blue) with their ridge markers and
    a legend entry for the matmul peak, then the all-thread DRAM roof (vermillion) if measured.
    ``x`` is the intensity grid (FLOPs/byte)."""
    from ..drawing import PALETTE
    from ..estimate import attainable_flops_per_s, critical_intensity
    from ..units import format_bandwidth, format_flops_rate, format_intensity

    chip = result.chip
    peak = chip.peak_flops_per_s(dtype)
    one, many = PALETTE["blue"], PALETTE["vermillion"]
    styles = ("-", "--", ":", "-.")
    for k, (name, bw) in enumerate(chip.memory_levels().items()):
        ridge = critical_intensity(chip, dtype, bandwidth_bytes_per_s=bw)
        ax.plot(
            x,
            attainable_flops_per_s(x, chip, dtype, bandwidth_bytes_per_s=bw),
            color=one,
            linestyle=styles[k % len(styles)],
            linewidth=2,
            label=f"1 thread, {name}: {format_bandwidth(bw)}, ridge {format_intensity(ridge)}",
        )
        _ridge_marker(ax, ridge, peak, one)
    ax.plot([], [], color="none", label=f"1 thread, matmul peak {format_flops_rate(peak)}")
    if all_chip is not None:
        ridge = critical_intensity(all_chip, dtype)
        ax.plot(
            x,
            attainable_flops_per_s(x, all_chip, dtype),
            color=many,
            linewidth=1.5,
            linestyle=(0, (5, 2)),
            label=f"{result.threads} threads, DRAM: {format_bandwidth(all_chip.hbm_bytes_per_s)}, "
            f"peak {format_flops_rate(all_peak)}, ridge {format_intensity(ridge)}",
        )
        _ridge_marker(ax, ridge, all_peak, many)


def _draw_measured_points(ax, chip, dtype: str, points) -> list[str]:
    """Each measured operation as its own marker with a legend entry (name, FLOP/s); returns the
    labels of those more than 2 % above the highest one-thread roof at their intensity."""
    from ..drawing import PALETTE
    from ..estimate import attainable_flops_per_s
    from ..units import format_flops_rate

    levels = chip.memory_levels()
    greys = (
        PALETTE["black"],
        PALETTE["bluish green"],
        PALETTE["reddish purple"],
        PALETTE["orange"],
    )
    above = []
    for i, p in enumerate(points):
        roof = max(
            float(attainable_flops_per_s(p.intensity, chip, dtype, bandwidth_bytes_per_s=bw))
            for bw in levels.values()
        )
        flag = p.flops_per_s > roof * 1.02
        if flag:
            above.append(p.label)
        ax.plot(
            [p.intensity],
            [p.flops_per_s],
            marker=_POINT_MARKERS[i % len(_POINT_MARKERS)],
            markersize=7,
            color=greys[i % len(greys)],
            markeredgecolor=PALETTE["black"],
            linestyle="none",
            zorder=6,
            label=f"{p.label}: {format_flops_rate(p.flops_per_s)}"
            + (" (ABOVE the roof)" if flag else ""),
        )
    return above


def _measured_description(result, dtype: str, all_chip, all_peak, points, above) -> str:
    """Alt text of the measured roofline: the one-thread roofs and ridges, the all-thread roof
    when measured, and every operation (intensity, FLOP/s, whether above its roof)."""
    from ..estimate import critical_intensity
    from ..units import format_bandwidth, format_flops_rate, format_intensity

    chip = result.chip
    peak = chip.peak_flops_per_s(dtype)
    text = (
        f"Log-log roofline of {result.host} measured in {dtype}. On one thread: a flat roof at the "
        f"matmul peak, {format_flops_rate(peak)}, and one slanted roof per memory level: "
        + "; ".join(
            f"{name} {format_bandwidth(bw)}, ridge point "
            f"{format_intensity(critical_intensity(chip, dtype, bandwidth_bytes_per_s=bw))}"
            for name, bw in chip.memory_levels().items()
        )
        + "."
    )
    if all_chip is not None:
        text += (
            f" On all {result.threads} threads: peak {format_flops_rate(all_peak)}, main memory "
            f"{format_bandwidth(all_chip.hbm_bytes_per_s)}, ridge point "
            f"{format_intensity(critical_intensity(all_chip, dtype))}."
        )
    text += (
        " Operations measured on one thread, as points: "
        + "; ".join(
            f"{p.label} at {format_intensity(p.intensity)}, {format_flops_rate(p.flops_per_s)}"
            + (" (above the roof)" if p.label in above else "")
            for p in points
        )
        + "."
    )
    return text
