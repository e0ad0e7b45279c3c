"""Drawing primitives every figure of the book uses: the colour-blind-safe palette and label
contrast, the figure style (width, fonts, ink), new figures and their SVG, axes formatted by
`roofline.units`, legends under the plot, and labels placed where they cover no other text.

The book's figures themselves (rooflines, resource and decode figures) are in
`roofline.plots`; published measurements draw theirs in `roofline.published`, chapter 9's
measurements in `roofline.measure.figures`, all with these primitives. Every name here is
also importable from `roofline.plots`, where it used to live. matplotlib is imported only
when a figure is made.
"""

from __future__ import annotations

import math

from .units import format_bandwidth, format_flops_rate

__all__ = [
    "PALETTE",
    "LABEL_CONTRAST",
    "contrast_on_white",
    "label_colour",
    "FIG_WIDTH_IN",
    "FIG_HEIGHT_IN",
    "EXPLORER_FIGSIZE",
    "DPI",
    "FONT_SCALE",
    "INK",
    "font_pt",
    "font_size",
    "figure_svg",
    "new_figure",
    "style_axes",
    "format_axis",
    "legend_below",
    "figure_legend",
    "height_for_legend",
    "finish",
    "text_artists",
    "legend_frames",
    "text_boxes",
    "figure_renderer",
    "place_labels",
    "SERIES_COLOURS",
    "legend_rows",
    "boxes_overlap",
    "overlap_area",
    "tick_formatter",
]


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

#: Text drawn in a figure reaches this WCAG contrast ratio on the figure's white background
#: (AA for normal text is 4.5:1; the web page shows every figure on a white card, dark mode too).
LABEL_CONTRAST = 4.5


def _relative_luminance(colour: str) -> float:
    """WCAG 2.1 relative luminance of a "#rrggbb" colour (0 black .. 1 white)."""
    channels = [int(colour[i : i + 2], 16) / 255 for i in (1, 3, 5)]
    r, g, b = (c / 12.92 if c <= 0.04045 else ((c + 0.055) / 1.055) ** 2.4 for c in channels)
    return 0.2126 * r + 0.7152 * g + 0.0722 * b


def contrast_on_white(colour: str) -> float:
    """WCAG contrast ratio of a "#rrggbb" colour against white (1 .. 21)."""
    return 1.05 / (_relative_luminance(colour) + 0.05)


def label_colour(colour: str) -> str:
    """The colour for text in a series colour: the same hue, darkened (each channel scaled by
    the same factor) until it reaches LABEL_CONTRAST on white; a dark enough colour is kept.
    Lines and markers keep the palette colour (WCAG asks 3:1 of graphics, 4.5:1 of text)."""
    original, colour = colour, colour.lower()
    scale = 1.0
    while True:
        candidate = "#" + "".join(
            f"{round(int(colour[i : i + 2], 16) * scale):02x}" for i in (1, 3, 5)
        )
        if contrast_on_white(candidate) >= LABEL_CONTRAST + 0.05 or scale <= 0:
            return candidate if scale < 1.0 else original
        scale = round(scale - 0.02, 2)


#: Order in which chips (or dtypes) get their colours; yellow is kept for shading.
SERIES_COLOURS = (
    "blue",
    "vermillion",
    "bluish green",
    "reddish purple",
    "orange",
    "sky blue",
    "black",
)

# ---------------------------------------------------------------- the book's figure style
#
# Every figure of the book (these functions, roofline.measure.figures, the chapters' own
# figure cells and the kernel explorers) is FIG_WIDTH_IN wide and sizes its text relative to
# that width, so the text has the same size on every figure and stays readable when a page
# shrinks the figure to a phone's width: there the figure is about 360 CSS px wide, and the
# smallest text (FONT_SCALE["small"] x FIG_WIDTH_IN x 2 pt) is about 9 px.

#: Width of every figure, inches. On the web page the SVG is FIG_WIDTH_IN x 96 CSS px wide.
FIG_WIDTH_IN = 5.0
#: Height of a one-panel figure without a legend below it, inches.
FIG_HEIGHT_IN = 3.4
#: The kernel explorers' figure (roofline.widgets): the same width, a fixed layout.
EXPLORER_FIGSIZE = (FIG_WIDTH_IN, FIG_HEIGHT_IN + 0.4)
DPI = 100
#: Text sizes as multiples of the base size, which is 2 pt per inch of figure width.
FONT_SCALE = {"small": 0.9, "normal": 1.0, "title": 1.1}
#: Colours of the plain (black, grey) parts of a figure.
INK = {"text": "#000000", "muted": "#333333", "spine": "#333333", "grid": "#dddddd"}


def font_pt(role: str = "small", width_in: float = FIG_WIDTH_IN) -> float:
    """Text size in points for `role` ("small": ticks, labels on the plot, legends;
    "normal": axis labels; "title") on a figure `width_in` inches wide."""
    try:
        scale = FONT_SCALE[role]
    except KeyError:
        raise ValueError(
            f"font role must be one of {', '.join(FONT_SCALE)}, got {role!r}"
        ) from None
    return round(2.0 * width_in * scale, 1)


def _figure_class():
    """matplotlib Figure subclass whose notebook display includes an SVG (vector: sharp on
    any screen, text as paths so it looks the same in every browser)."""
    global _BookFigure
    if _BookFigure is None:
        from matplotlib.figure import Figure

        class BookFigure(Figure):
            """A Figure that Jupyter, Colab and the book show as SVG (and PNG)."""

            def _repr_svg_(self):
                return figure_svg(self)

        _BookFigure = BookFigure
    return _BookFigure


_BookFigure = None


def figure_svg(fig) -> str:
    """The figure as SVG text, the same on every run (no date, fixed ids)."""
    import io

    import matplotlib

    out = io.StringIO()
    with matplotlib.rc_context({"svg.fonttype": "path", "svg.hashsalt": "roofline"}):
        fig.savefig(out, format="svg", metadata={"Date": None}, facecolor=fig.get_facecolor())
    text = out.getvalue()
    return text[text.index("<svg") :]  # the XML prolog and DOCTYPE do not belong inline


def new_figure(height_in: float = FIG_HEIGHT_IN, nrows: int = 1, ncols: int = 1):
    """(fig, ax) in the book's style: FIG_WIDTH_IN wide, white, styled axes, out of pyplot's
    list of open figures (a cell whose last expression is the figure shows it once). With
    several panels, ax is an array of Axes. Finish it with `finish`."""
    import matplotlib.pyplot as plt
    import numpy as np

    fig, axes = plt.subplots(
        nrows,
        ncols,
        figsize=(FIG_WIDTH_IN, height_in),
        dpi=DPI,
        facecolor="white",
        FigureClass=_figure_class(),
        layout="constrained",
    )
    plt.close(fig)  # shown once, by the notebook's display of the returned figure
    figure_renderer(fig)  # a closed figure keeps a bare canvas: give it Agg's, so that it can draw
    for ax in np.atleast_1d(axes).ravel():
        style_axes(ax)
    return fig, axes


def style_axes(ax) -> None:
    ax.set_facecolor("white")
    for spine in ax.spines.values():
        spine.set_color(INK["spine"])
    ax.tick_params(colors=INK["text"], labelsize=font_pt("small", _width(ax)))
    ax.grid(True, which="major", color=INK["grid"], linewidth=0.6)
    ax.set_axisbelow(True)


def _width(ax) -> float:
    return float(ax.figure.get_size_inches()[0])


def font_size(ax, role="small") -> float:
    return font_pt(role, _width(ax))


#: Tick formats by the quantity on the axis; every label comes from roofline.units.
def tick_formatter(kind):
    from matplotlib.ticker import FuncFormatter

    from .units import format_bytes, format_si, format_time

    def intensity(x, _pos=None):  # the axis label carries the unit (FLOPs/byte)
        if x <= 0:
            return ""
        if 1e-3 <= x < 1e4:
            return f"{x:g}"
        return format_si(x, "").replace(" ", "")  # 10k, 100k, 1M: SI prefixes as in the units

    def count(x, _pos=None):  # batch sizes, tile sides, D: whole numbers, SI prefixes from 100k
        if x <= 0:
            return ""
        if x >= 1e5:
            return format_si(x, "", digits=3).replace(" ", "")
        return f"{x:,.0f}" if x >= 1 else f"{x:g}"

    formats = {
        "intensity": intensity,
        "count": count,
        "flops_rate": lambda y, _pos=None: "0" if y == 0 else format_flops_rate(y),
        "bandwidth": lambda y, _pos=None: "0" if y == 0 else format_bandwidth(y),
        "time": lambda y, _pos=None: "0" if y == 0 else format_time(y, digits=2),
        "bytes": lambda y, _pos=None: "0" if y == 0 else format_bytes(y, binary=True),
    }
    try:
        return FuncFormatter(formats[kind])
    except KeyError:
        raise ValueError(f"axis kind must be one of {', '.join(formats)}, got {kind!r}") from None


def format_axis(axis, kind: str, base: int = 10) -> None:
    """Ticks of one log axis in the book's style: major ticks only, labelled by
    roofline.units for `kind` ("intensity", "count", "flops_rate", "bandwidth", "time",
    "bytes"). Call it after setting the axis limits: a span under two decades gets
    ticks at 1, 2 and 5 (or 1 and 2^k/2) times each power so that it keeps several labels."""
    from matplotlib.ticker import LogLocator, NullFormatter, NullLocator

    low, high = sorted(abs(v) for v in axis.get_view_interval())
    decades = math.log(high / low, base) if low > 0 else 99
    if base == 10:
        subs = (1.0, 2.0, 5.0) if decades < 2 else (1.0,)
        step = max(1, math.ceil(decades / 7))  # at most about 7 labels
        axis.set_major_locator(LogLocator(base=10**step if step > 1 else 10, subs=subs))
    else:
        step = max(1, math.ceil(decades / 8))
        axis.set_major_locator(LogLocator(base=base**step))
    axis.set_major_formatter(tick_formatter(kind))
    axis.set_minor_locator(NullLocator())
    axis.set_minor_formatter(NullFormatter())


def legend_below(ax, handles=None, labels=None, ncol=1):
    """The figure's legend under the plot, below the axis labels (inside the axes a legend
    hides curves, labels or points, depending on the chip), in the book's style. Needs the
    constrained layout of `new_figure`. Returns the Legend, or None with nothing to list."""
    if handles is None:
        handles, labels = ax.get_legend_handles_labels()
    if not handles:
        return None
    return ax.figure.legend(
        handles,
        labels,
        loc="outside lower center",
        ncol=ncol,
        fontsize=font_size(ax),
        frameon=False,
        handlelength=2.2,
    )


def figure_legend(fig):
    """The legend of a figure made here: under the plot (a figure legend) or in the axes."""
    if fig.legends:
        return fig.legends[0]
    return next((ax.get_legend() for ax in fig.axes if ax.get_legend() is not None), None)


def legend_rows(n_entries: int, ncol: int = 1) -> int:
    return math.ceil(n_entries / ncol) if n_entries else 0


def height_for_legend(rows: int, base_in: float = FIG_HEIGHT_IN) -> float:
    """Figure height, inches, that keeps the axes' height with `rows` legend rows below."""
    return base_in + rows * 1.45 * font_pt("small") / 72


def finish(fig, *, legend=True, ncol=1):
    """Put the legend under the plot (one per Axes that has labelled artists) and lay the
    figure out tightly; returns the figure. For figures drawn with `new_figure`."""
    if legend:
        for ax in fig.axes:
            legend_below(ax, ncol=ncol)
    return fig


def text_artists(fig):
    """Every piece of text the figure draws, as (kind, artist): titles, axis labels, the tick
    labels drawn, texts and annotations inside the axes, legend entries."""
    found = []

    def add(kind, artist):
        if artist is not None and artist.get_visible() and artist.get_text().strip():
            found.append((kind, artist))

    for text in fig.texts:
        add("figure text", text)
    for legend in fig.legends:
        for text in legend.get_texts():
            add("legend", text)
    if getattr(fig, "_suptitle", None) is not None:
        add("suptitle", fig._suptitle)
    for ax in fig.axes:
        if not ax.get_visible():
            continue
        for title in (ax.title, ax._left_title, ax._right_title):
            add("title", title)
        add("x label", ax.xaxis.label)
        add("y label", ax.yaxis.label)
        for axis, name in ((ax.xaxis, "x tick"), (ax.yaxis, "y tick")):
            for tick in axis._update_ticks():
                if tick.label1.get_visible():
                    add(name, tick.label1)
                if tick.label2.get_visible():
                    add(name, tick.label2)
        for text in ax.texts:
            add("text", text)
        legend = ax.get_legend()
        if legend is not None:
            for text in legend.get_texts():
                add("legend", text)
            add("legend title", legend.get_title())
    return found


def legend_frames(fig):
    """Pixel boxes of the figure's legends (a label under a legend is hidden by it)."""
    renderer = figure_renderer(fig)
    legends = list(fig.legends) + [
        ax.get_legend() for ax in fig.axes if ax.get_legend() is not None
    ]
    return [legend.get_window_extent(renderer) for legend in legends if legend.get_visible()]


def text_boxes(fig):
    """(description, Bbox in display pixels) of every text of `text_artists`; the overlap
    test and `place_labels` use it."""
    renderer = figure_renderer(fig)
    return [
        (f"{kind} {artist.get_text()!r}", artist.get_window_extent(renderer))
        for kind, artist in text_artists(fig)
    ]


def figure_renderer(fig):
    """The figure's renderer (a closed pyplot figure has a bare canvas: give it Agg's)."""
    if not hasattr(fig.canvas, "get_renderer"):
        from matplotlib.backends.backend_agg import FigureCanvasAgg

        FigureCanvasAgg(fig)
    return fig.canvas.get_renderer()


def boxes_overlap(a, b, tolerance_px=1.0) -> bool:
    return (
        min(a.x1, b.x1) - max(a.x0, b.x0) > tolerance_px
        and min(a.y1, b.y1) - max(a.y0, b.y0) > tolerance_px
    )


#: Offsets (points) and alignments tried, in order, for a label next to a point.
_LABEL_SPOTS = [
    ((6, -6), "left", "top"),
    ((6, 6), "left", "bottom"),
    ((-6, -6), "right", "top"),
    ((-6, 6), "right", "bottom"),
    ((6, -22), "left", "top"),
    ((-6, -22), "right", "top"),
    ((6, 22), "left", "bottom"),
    ((-6, 22), "right", "bottom"),
    ((0, -12), "center", "top"),
    ((0, 12), "center", "bottom"),
    ((12, -40), "left", "top"),
    ((-12, -40), "right", "top"),
    ((12, 40), "left", "bottom"),
    ((-12, 40), "right", "bottom"),
    ((0, -40), "center", "top"),
    ((0, 40), "center", "bottom"),
    ((6, -60), "left", "top"),
    ((-6, -60), "right", "top"),
    ((6, 60), "left", "bottom"),
    ((-6, 60), "right", "bottom"),
]


def place_labels(fig, labels, obstacles=(), spots=None, ignore=(), taken=None) -> None:
    """Move each annotation of `labels` (made with textcoords="offset points") to the first
    spot around its point where it stays inside its Axes and covers no other text (nor any
    Bbox of `obstacles`; `taken`: the other text's boxes, when the caller keeps them); if none is free, the spot that covers least. Call it once the
    axes' limits and the figure's layout are final."""
    renderer = figure_renderer(fig)
    if taken is None:  # else: the caller's boxes of everything else (an explorer caches them)
        if fig.get_layout_engine() is not None:
            fig.get_layout_engine().execute(fig)
        own = {id(label) for label in labels} | {id(text) for text in ignore}
        taken = [
            artist.get_window_extent(renderer)
            for _, artist in text_artists(fig)
            if id(artist) not in own
        ]
        taken += legend_frames(fig)
    taken = list(taken) + list(obstacles)
    from matplotlib.transforms import Bbox

    points = fig.dpi / 72
    anchors = [label.axes.transData.transform(label.xy) for label in labels]
    for index, label in enumerate(labels):
        ax = label.axes
        # measure the label once (anchored left, bottom at its point), then shift that box
        label.set_position((0, 0))
        label.set_horizontalalignment("left")
        label.set_verticalalignment("bottom")
        base = label.get_window_extent(renderer)
        width, height = base.width, base.height
        best, best_cost = None, (math.inf, math.inf)
        for offset, ha, va in spots or _LABEL_SPOTS:
            x0 = base.x0 + offset[0] * points - {"left": 0, "center": width / 2, "right": width}[ha]
            y0 = (
                base.y0
                + offset[1] * points
                - {"bottom": 0, "center": height / 2, "top": height}[va]
            )
            box = Bbox.from_bounds(x0, y0, width, height)
            outside = width * height - overlap_area(box, ax.bbox)
            # first no covered text; then a spot nearer its own point than any other point's,
            # so that two labels never read as each other's
            cost = (
                10 * outside + sum(overlap_area(box, other) for other in taken),
                _nearer_another(box, anchors, index),
            )
            if cost < best_cost:
                best, best_cost = (offset, ha, va, box), cost
            if cost == (0, 0):
                break
        assert best is not None  # the first spot tried always sets it (its cost is finite)
        offset, ha, va, box = best
        label.set_position(offset)
        label.set_horizontalalignment(ha)
        label.set_verticalalignment(va)
        taken.append(box)


def _nearer_another(box, anchors, own: int) -> int:
    """1 if a point of `anchors` (pixels) other than `anchors[own]` is nearer to `box` than
    its own point, else 0."""

    def distance(point):
        dx = max(box.x0 - point[0], 0.0, point[0] - box.x1)
        dy = max(box.y0 - point[1], 0.0, point[1] - box.y1)
        return math.hypot(dx, dy)

    mine = distance(anchors[own])
    return int(any(distance(p) < mine for i, p in enumerate(anchors) if i != own))


def overlap_area(a, b) -> float:
    w = min(a.x1, b.x1) - max(a.x0, b.x0)
    h = min(a.y1, b.y1) - max(a.y0, b.y0)
    return w * h if w > 0 and h > 0 else 0.0
