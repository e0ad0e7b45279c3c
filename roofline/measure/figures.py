"""The bandwidth sweep as a figure: bandwidth against working-set size, plateaus marked."""

from __future__ import annotations

__all__ = ["sweep_figure"]


def sweep_figure(result, ax=None):
    """Log-log plot of each kernel's best bandwidth against its working set, with the
    detected plateaus (caches, main memory) as horizontal segments. Returns the Figure;
    ``fig.roofline_description`` holds a plain-language description (alt text)."""
    import matplotlib.pyplot as plt
    from matplotlib.ticker import FuncFormatter

    from ..plots import PALETTE
    from ..units import format_bandwidth, format_bytes

    colours = [PALETTE[k] for k in ("blue", "orange", "green") if k in PALETTE] or [None] * 3
    own = ax is None
    if own:
        fig, ax = plt.subplots(figsize=(6.4, 3.8), dpi=100)
    else:
        fig = ax.figure
    markers = ("o", "s", "^")
    for i, (kernel, (sizes, bws)) in enumerate(result.curves().items()):
        ax.plot(sizes, bws, marker=markers[i % 3], markersize=4, linewidth=1, label=kernel,
                color=colours[i % len(colours)])
    levels = result.levels()
    names = [n for n, _ in levels.named()] + ["main memory (DRAM)"]
    for name, p in zip(names, levels.plateaus):
        ax.hlines(p.bytes_per_s, p.min_working_set, p.max_working_set, colors=PALETTE.get("black", "k"),
                  linewidth=3, alpha=0.6)
        ax.annotate(f"{name}: {format_bandwidth(p.bytes_per_s)}", xy=(p.max_working_set, p.bytes_per_s),
                    xytext=(4, 4), textcoords="offset points", fontsize=7)
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.xaxis.set_major_formatter(FuncFormatter(lambda x, _: format_bytes(x, binary=True)))
    ax.yaxis.set_major_formatter(FuncFormatter(lambda y, _: format_bandwidth(y)))
    ax.set_xlabel("Working set (bytes of all arrays the kernel touches)")
    ax.set_ylabel("Bandwidth (bytes/s)")
    ax.grid(True, which="major", alpha=0.3)
    ax.legend(fontsize=8, loc="lower left")
    ax.set_title(f"Bandwidth sweep on {result.host}", fontsize=10)
    fig.tight_layout()
    fig.roofline_description = (
        "Bandwidth against working-set size for the copy, scale and add kernels on log-log axes; "
        + "; ".join(f"{n} {format_bandwidth(p.bytes_per_s)}" for n, p in zip(names, levels.plateaus)))
    if own:
        plt.close(fig)
    return fig
