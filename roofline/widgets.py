"""Explorers: small interactive figures the chapters reuse.

    >>> import roofline as rl
    >>> rl.widgets.roofline_explorer("H100 SXM")        # last expression of a cell
    <Explorer roofline: H100 SXM, bf16: an operation at 64 FLOPs/B>

Each explorer returns an `Explorer`:

- ``.controls``: dict name -> ipywidget (sliders, pickers),
- ``.set(name=value, ...)``: moves controls through the same update path as a reader,
- ``.figure``: the one matplotlib Figure it redraws in place (never a new one),
- ``.widget``: the ipywidgets container (controls, the figure as a PNG, a text readout),
- ``.text``: the current readout as plain text.

Displayed in Jupyter or Colab it is a live widget. Its mimebundle also carries a
``text/html`` version for the web page (`roofline.web`): the same explorer computed and
drawn in SVG by a small inline script from data the package exports as JSON (every
control the chapters name, continuous log-scale sliders, no CDN), with a static first
frame (PNG and readout) for readers without JavaScript. The book's HTML build drops the
widget view and keeps that version (``nb_mime_priority_overrides`` in ``_config.yml``).

Works with ipywidgets 7.7 (Colab) and 8. matplotlib and ipywidgets are imported
only when an explorer is made. The figure is drawn with matplotlib's Agg canvas
directly, so it never enters pyplot's list of open figures.
"""

from __future__ import annotations

import dataclasses
import html
import io
import itertools
import math
from collections import Counter, OrderedDict

from .catalog import get_chip, list_chips
from .costs import matmul
from .dtypes import DTYPE_BYTES, canonical_dtype
from .estimate import (
    attainable_flops_per_s,
    critical_batch_size,
    critical_intensity,
    estimate,
    exact_critical_batch_size,
    sharded_critical_D,
    sharded_estimate,
)
from .hardware import Chip
from .topology import most_chips_on_one_axis
from .units import format_bandwidth, format_flops_rate, format_intensity, format_time
from .web import SLICE_CHOICES, check_slice, sharded_link, slice_choices

__all__ = [
    "Explorer",
    "roofline_explorer",
    "matmul_explorer",
    "sharded_matmul_explorer",
    "COLAB_NOTE",
    "STATIC_LIMIT_BYTES",
]

#: Under each explorer on the web page: what Colab or Jupyter adds. (Not "free-form": the web
#: page's number fields take any B, D, F, while a kernel's sliders step by powers of two; what
#: a kernel adds is the call itself, issue 35.)
COLAB_NOTE = (
    "In Colab or Jupyter this explorer runs in Python, and its call takes other arguments "
    "too (a chip, sizes such as B=1000, a dtype): edit it and run the cell again."
)
#: Budget for one explorer's web HTML: script, data and static first frame (the page limit is 2 MB).
STATIC_LIMIT_BYTES = 150_000
_WIDGET_VIEW = "application/vnd.jupyter.widget-view+json"


# ---------------------------------------------------------------- environment


def enable_colab_widgets() -> None:
    """In Colab, turn on the custom widget manager (ipywidgets need it there)."""
    try:
        import importlib.util

        if importlib.util.find_spec("google.colab") is None:
            return
        from google.colab import output  # type: ignore[import-not-found]

        output.enable_custom_widget_manager()
    except Exception:  # not Colab, or an older Colab: the static fallback still shows
        pass


def load_ipywidgets():
    try:
        import ipywidgets
    except ImportError as exc:  # pragma: no cover - ipywidgets is a dependency
        raise ImportError(
            "the explorers need ipywidgets: pip install 'ipywidgets>=7.7,<9'"
        ) from exc
    return ipywidgets


def _new_figure():
    """A Figure on an Agg canvas, outside pyplot: redrawn in place, never shown twice."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    from .drawing import DPI, EXPLORER_FIGSIZE

    fig = Figure(figsize=EXPLORER_FIGSIZE, dpi=DPI, facecolor="white")
    FigureCanvasAgg(fig)
    # fixed margins (the book's text sizes): the explorer redraws only what moves
    fig.subplots_adjust(left=0.21, right=0.96, bottom=0.14, top=0.92)
    return fig


def encode_png(canvas, quantize=False) -> bytes:
    """PNG of what the Agg canvas holds now: fast for the live view, small for the web page."""
    from PIL import Image

    width, height = canvas.get_width_height()
    image = Image.frombuffer("RGBA", (width, height), canvas.buffer_rgba(), "raw", "RGBA", 0, 1)
    image = image.convert("RGB")
    out = io.BytesIO()
    if quantize:
        image = image.quantize(colors=64, method=Image.Quantize.MEDIANCUT)
        image.save(out, format="PNG", optimize=True)
    else:
        image.save(out, format="PNG", compress_level=1)
    return out.getvalue()


def _chip_options(chip: Chip) -> list[str]:
    names = list_chips()
    if chip.name not in names:
        names = [chip.name] + names
    return names


def _resolve_chip(name, own: Chip) -> Chip:
    return own if name == own.name else get_chip(name)


def _snap_options(values: list, value) -> list:
    """The slider's options with `value` added in order if it is not one of them."""
    if value not in values:
        values = sorted(set(values) | {value})
    return values


def _check_positive(name, value, whole=False):
    if (
        isinstance(value, bool)
        or not isinstance(value, (int, float))
        or not math.isfinite(value)
        or value <= 0
        or (whole and value != int(value))
    ):
        kind = "a positive whole number" if whole else "a positive number"
        raise ValueError(f"{name} must be {kind}, got {value!r}")
    return int(value) if whole else float(value)


# ---------------------------------------------------------------- the Explorer

#: Figures an explorer keeps drawn (one per chip and dtype seen, the most recent first), so
#: that going back to a chip is a blit; each holds a few MB of pixels.
SCENES = 8


class Explorer:
    """A live explorer plus its web version (`static_html`). Made by the functions below."""

    def __init__(self, name, title, controls, render, web, sync=None):
        widgets = load_ipywidgets()
        self.name = name
        self.title = title
        self.controls = controls
        self.figure = _new_figure()
        self.text = ""
        self._render = render  # render(explorer, changed: set[str]) -> (text, alt)
        self._web = web  # web(explorer) -> (chip, starting values) for roofline.web
        self._hold = False
        self._sync = sync  # sync(explorer, key): keep dependent options valid
        self._alt = ""
        self._background = None  # pixels of everything that does not move
        self._moving = []  # artists redrawn on every update (set by render)
        self._png = b""
        self._scenes = OrderedDict()  # key -> [figure, background, moving artists, state]
        self._scene_key = None
        self._figure_free = True  # self.figure has not been given to a scene yet
        self.work = Counter()
        """What updates cost, counted: "full draws" (a whole figure drawn), "blits" (the
        background restored, the moving artists drawn), "figures built" (a scene's figure
        made and its artists created)."""
        width = int(self.figure.get_figwidth() * self.figure.dpi)
        self._image = widgets.Image(
            format="png", layout=widgets.Layout(width=f"{width}px", max_width="100%")
        )
        self._readout = widgets.HTML()
        self.widget = widgets.VBox(
            [
                widgets.HBox(list(controls.values())[:3]),
                widgets.HBox(list(controls.values())[3:]),
                self._image,
                self._readout,
            ]
        )
        for key, control in controls.items():
            control.observe(self._make_handler(key), names="value")
        self._update({"*"})

    # -- update path: a control moved (by a reader or by .set)
    def _make_handler(self, key):
        def handler(change):
            if not self._hold:
                self._run_sync(key)
                self._update({key})

        return handler

    def _run_sync(self, key) -> None:
        if self._sync is None:
            return
        hold, self._hold = self._hold, True
        try:
            self._sync(self, key)
        finally:
            self._hold = hold

    def _update(self, changed) -> None:
        self.text, self._alt, full = self._render(self, set(changed))
        self._draw(full)
        self._readout.value = (
            f"<pre style='white-space:pre-wrap;margin:0'>{html.escape(self.text)}</pre>"
        )
        self._png = encode_png(self.figure.canvas)
        self._image.value = self._png

    def _draw(self, full: bool) -> None:
        """Blit: redraw the still background only when it changed, then the moving artists."""
        canvas = self.figure.canvas
        if full or self._background is None:
            self.work["full draws"] += 1
            for artist in self._moving:
                artist.set_animated(True)
            canvas.draw()
            self._background = canvas.copy_from_bbox(self.figure.bbox)
            for artist in self._moving:  # so that figure.savefig shows them too
                artist.set_animated(False)
            if self._scene_key in self._scenes:
                self._scenes[self._scene_key][1] = self._background
        else:
            self.work["blits"] += 1
            canvas.restore_region(self._background)
        for artist in self._moving:
            self.figure.draw_artist(artist)

    def scene(self, key, build):
        """The state of the figure for `key` (all that a full redraw depends on: chip, dtype...).

        A key seen before switches back to its figure and its drawn background, so only the
        moving artists are drawn again (a blit, as for a slider). A new key gets a figure,
        `build(figure) -> (state, moving artists)`, drawn in full once. The last `SCENES`
        keys are kept."""
        if key in self._scenes:
            self._scenes.move_to_end(key)
            self.figure, self._background, self._moving, state = self._scenes[key]
            self._scene_key = key
            return state
        figure = self.figure if self._figure_free else _new_figure()
        self._figure_free = False
        state, moving = build(figure)
        self.work["figures built"] += 1
        self.figure, self._background, self._moving = figure, None, list(moving)
        self._scenes[key] = [figure, None, self._moving, state]
        self._scene_key = key
        while len(self._scenes) > SCENES:
            self._scenes.popitem(last=False)
        return state

    def set(self, **values) -> Explorer:
        """Move controls, e.g. ``.set(intensity=100)``; one redraw for all of them."""
        unknown = set(values) - set(self.controls)
        if unknown:
            raise ValueError(
                f"{self.name} explorer has no control {', '.join(sorted(unknown))}; "
                f"its controls are {', '.join(self.controls)}"
            )
        self._hold = True
        try:
            for key, value in values.items():
                control = self.controls[key]
                options = getattr(control, "options", None)
                if options is not None:
                    allowed = [o[1] if isinstance(o, tuple) else o for o in options]
                    if value is None and SAME_AS_MATH in allowed:
                        value = SAME_AS_MATH  # weights=None: the math's own dtype
                    if value not in allowed:
                        raise ValueError(
                            f"{key}={value!r} is not one of the choices "
                            f"{', '.join(map(str, allowed))}"
                        )
                elif hasattr(control, "min") and not isinstance(control.value, str):
                    low, high = _limits(control)
                    if not low <= value <= high:
                        raise ValueError(
                            f"{key}={value!r} is outside the slider's range [{low:g}, {high:g}]"
                        )
                control.value = value
                self._run_sync(key)
        finally:
            self._hold = False
        self._update(set(values))
        return self

    # -- the web page's version
    def static_html(self) -> str:
        """The web page's version (`roofline.web`): the explorer run in the browser from the
        current values, with this figure as its static first frame."""
        from .web import explorer_data, explorer_html

        chip, start = self._web(self)
        data = explorer_data(self.name, chip, **start)
        png = encode_png(self.figure.canvas, quantize=True)
        return explorer_html(data, self.title, png, self._alt, self.text, COLAB_NOTE)

    # -- display
    def _repr_mimebundle_(self, include=None, exclude=None):
        bundle = {"text/plain": f"{self.title} (an interactive explorer: run in Jupyter or Colab)"}
        view = _widget_view(self.widget)
        if view is not None:
            bundle[_WIDGET_VIEW] = view
        bundle["text/html"] = self.static_html()
        if include:
            bundle = {k: v for k, v in bundle.items() if k in include}
        if exclude:
            bundle = {k: v for k, v in bundle.items() if k not in exclude}
        return bundle

    def __repr__(self) -> str:
        return f"<Explorer {self.name}: {self.text.splitlines()[0] if self.text else ''}>"


def _limits(control):
    low, high = control.min, control.max
    if type(control).__name__ == "FloatLogSlider":
        return control.base**low, control.base**high
    return low, high


def _widget_view(widget):
    """The widget-view mime data for ipywidgets 8 (_repr_mimebundle_) and 7 (built by hand)."""
    method = getattr(widget, "_repr_mimebundle_", None)
    if method is not None:
        try:
            data = method()
        except Exception:
            data = None
        if isinstance(data, tuple):
            data = data[0]
        if isinstance(data, dict) and _WIDGET_VIEW in data:
            return data[_WIDGET_VIEW]
    model_id = getattr(widget, "model_id", None) or getattr(widget, "_model_id", None)
    if model_id is None:
        return None
    return {"version_major": 2, "version_minor": 0, "model_id": model_id}


# ---------------------------------------------------------------- plot helpers


def _draw_roofline(fig, chip, dtype, title):
    """Clear the figure's axes and draw the roofline with roofline.plots (same look as the book)."""
    from .plots import roofline_figure

    ax = fig.axes[0] if fig.axes else fig.add_subplot(1, 1, 1)
    ax.clear()
    roofline_figure(
        chip,
        dtype,
        ax=ax,
        title=title,
        shade_regions=True,
        intensity_range=_intensity_range(chip, dtype),
    )
    # minor ticks on log axes are most of the redraw time of a chip or dtype switch
    # (about 100 ms of 150); the explorer reads fine with decade ticks alone
    from matplotlib.ticker import NullLocator

    ax.xaxis.set_minor_locator(NullLocator())
    ax.yaxis.set_minor_locator(NullLocator())
    _fit(fig)
    return ax


def _fit(fig):
    """Margins that fit this chip's tick labels, set once per full redraw (the moving
    artists stay out of the layout, so a slider never moves the axes)."""
    fig.tight_layout(pad=0.4)


def _intensity_range(chip, dtype):
    ridge = critical_intensity(chip, dtype)
    return (min(0.1, ridge / 100), max(1e4, ridge * 100))


def _op_artists(ax, colour):
    (point,) = ax.plot(
        [],
        [],
        linestyle="none",
        marker="D",
        markersize=9,
        color=colour,
        markeredgecolor="#000000",
        zorder=8,
        gid="explorer-point",
    )
    (guide,) = ax.plot(
        [], [], color=colour, linewidth=1, linestyle=(0, (3, 2)), zorder=7, gid="explorer-guide"
    )
    from .drawing import font_pt

    label = ax.annotate(
        "",
        xy=(1, 1),
        xytext=(8, -10),
        textcoords="offset points",
        fontsize=font_pt("small"),
        color="#000000",
        zorder=9,
        bbox={"boxstyle": "round,pad=0.2", "facecolor": "white", "edgecolor": colour},
    )
    label.set_in_layout(False)
    return point, guide, label


def _place(artists, ax, intensity, flops, text):
    point, guide, label = artists
    point.set_data([intensity], [flops])
    guide.set_data([intensity, intensity], [ax.get_ylim()[0], flops])
    label.xy = (intensity, flops)
    label.set_text(text)
    # next to the point, where it covers no ridge value, region name, tick or legend
    from .plots import figure_renderer, legend_frames, marker_boxes, place_labels, text_artists

    still = getattr(label, "_roofline_still_boxes", None)
    if still is None:  # the text and ridge markers that do not move, measured once per background
        renderer = figure_renderer(ax.figure)
        still = [
            a.get_window_extent(renderer) for _, a in text_artists(ax.figure) if a is not label
        ]
        still += marker_boxes(ax, renderer, ("ridge:",)) + legend_frames(ax.figure)
        label._roofline_still_boxes = still
    place_labels(ax.figure, [label], taken=still)


# ---------------------------------------------------------------- explorers


def roofline_explorer(chip="H100 SXM", dtype="bf16", intensity=64.0) -> Explorer:
    """Pick a chip and dtype, slide an operation's intensity, read where it lands on the roof."""
    from .drawing import PALETTE

    widgets = load_ipywidgets()
    enable_colab_widgets()
    own = get_chip(chip)
    dtype = canonical_dtype(dtype)
    own.peak(dtype)  # a clear error if the chip has no such dtype
    intensity = _check_positive("intensity", intensity)
    if not 0.01 <= intensity <= 1e5:
        raise ValueError(f"intensity must be between 0.01 and 1e5 FLOPs/byte, got {intensity!r}")
    controls = {
        "chip": widgets.Dropdown(options=_chip_options(own), value=own.name, description="chip"),
        "dtype": widgets.Dropdown(options=list(own.dtypes), value=dtype, description="dtype"),
        "intensity": widgets.FloatLogSlider(
            value=intensity,
            base=10,
            min=-2,
            max=5,
            step=0.01,
            description="FLOPs/byte",
            readout_format=".3g",
            continuous_update=True,
        ),
    }

    def render(ex, changed):
        c = ex.controls
        current = _resolve_chip(c["chip"].value, own)
        dt = c["dtype"].value
        title = f"Roofline: {current.name} ({dt}, dense)"
        state = ex.scene((current.name, dt), _roofline_scene(current, dt, title, PALETTE["black"]))
        x = float(c["intensity"].value)
        y = float(attainable_flops_per_s(x, current, dt))
        ridge = critical_intensity(current, dt)
        bound = "compute" if x >= ridge else "memory"
        _place(
            state["artists"], state["ax"], x, y, f"{format_intensity(x)}\n{format_flops_rate(y)}"
        )
        text = (
            f"{current.name}, {dt}: an operation at {format_intensity(x)}\n"
            f"attainable {format_flops_rate(y)} of {format_flops_rate(current.peak_flops_per_s(dt))} peak; "
            f"{bound}-bound (ridge point {format_intensity(ridge)})"
        )
        alt = (
            f"Roofline of the {current.name} in {dt} with its ridge point at "
            f"{format_intensity(ridge)}; an operation at {format_intensity(x)} reaches "
            f"{format_flops_rate(y)} and is {bound}-bound."
        )
        return text, alt, False

    def sync(ex, key):
        if key == "chip":
            _follow_chip(ex.controls, _resolve_chip(ex.controls["chip"].value, own).dtypes)

    def web(ex):
        c = ex.controls
        return (
            _resolve_chip(c["chip"].value, own),
            {"dtype": c["dtype"].value, "intensity": float(c["intensity"].value)},
        )

    return Explorer(
        "roofline",
        "Roofline explorer: where does an operation land?",
        controls,
        render,
        web,
        sync=sync,
    )


def _roofline_scene(chip, dtype, title, colour):
    """`Explorer.scene`'s builder of a roofline with an operation's point, guide and label."""

    def build(figure):
        ax = _draw_roofline(figure, chip, dtype, title)
        artists = _op_artists(ax, colour)
        return {"ax": ax, "artists": artists}, artists

    return build


def _follow_chip(controls, dtypes) -> None:
    """The dtype menu follows the chip; keep the dtype if the new chip has it, else bf16."""
    picker = controls["dtype"]
    old = picker.value
    if tuple(picker.options) != tuple(dtypes):
        picker.options = list(dtypes)
    picker.value = old if old in dtypes else ("bf16" if "bf16" in dtypes else dtypes[0])


def _pow2_options(low_exp, high_exp, value):
    return _snap_options([2**k for k in range(low_exp, high_exp + 1)], value)


def _matrix_dtypes(chip: Chip, keep: str | None = None) -> list[str]:
    """The dtypes a matmul can use on `chip`: those with a matrix-unit peak (all its dtypes
    for a chip without one, e.g. a measured CPU), plus `keep` if given."""
    dtypes = [d for d in chip.dtypes if chip.has_peak(d, "matrix")] or list(chip.dtypes)
    return dtypes + [keep] if keep is not None and keep not in dtypes else dtypes


#: The weight menu's "same as the math" option. Not None: ipywidgets reads value None as
#: "nothing selected" (the menu showed blank in chapters 4 and 7) and resets the index to it.
SAME_AS_MATH = ""


def _weights_of(value: str):
    """The weight dtype a menu value names (None: the math's own)."""
    return None if value == SAME_AS_MATH else value


def _weight_choices(dtype: str) -> list:
    """(label, value) of the weight dtypes: the math's own (SAME_AS_MATH), or a narrower one."""
    return [(f"same as the math ({dtype})", SAME_AS_MATH)] + [
        (name, name)
        for name in DTYPE_BYTES
        if name != dtype and DTYPE_BYTES[name] <= DTYPE_BYTES[dtype]
    ]


def _matmul_controls(widgets, own, dtype, B, D, F, weights) -> dict:
    weight_choices = _weight_choices(dtype)
    if weights is not None and weights not in [v for _, v in weight_choices]:
        weight_choices.append((weights, weights))
    chips = [n for n in _chip_options(own) if n == own.name or _matrix_dtypes(get_chip(n))]
    return {
        "chip": widgets.Dropdown(options=chips, value=own.name, description="chip"),
        "dtype": widgets.Dropdown(
            options=_matrix_dtypes(own, dtype), value=dtype, description="dtype"
        ),
        "B": widgets.SelectionSlider(
            options=_pow2_options(0, 16, B), value=B, description="B (batch)"
        ),
        "D": widgets.SelectionSlider(options=_pow2_options(6, 16, D), value=D, description="D"),
        "F": widgets.SelectionSlider(options=_pow2_options(6, 16, F), value=F, description="F"),
        "weights": widgets.Dropdown(
            options=weight_choices,
            value=SAME_AS_MATH if weights is None else weights,
            description="weights",
        ),
    }


def matmul_explorer(chip="TPU v5e", B=128, D=4096, F=4096, dtype="bf16", weights=None) -> Explorer:
    """X[B, D] @ W[D, F]: pick the chip and dtype, slide B, D, F and the weight dtype; compare
    the two critical batches."""
    from .drawing import PALETTE

    widgets = load_ipywidgets()
    enable_colab_widgets()
    own = get_chip(chip)
    dtype = canonical_dtype(dtype)
    own.peak(dtype)
    B = _check_positive("B", B, whole=True)
    D = _check_positive("D", D, whole=True)
    F = _check_positive("F", F, whole=True)
    weights = None if weights is None else canonical_dtype(weights)
    controls = _matmul_controls(widgets, own, dtype, B, D, F, weights)

    def render(ex, changed):
        c = ex.controls
        current, dt = _resolve_chip(c["chip"].value, own), c["dtype"].value
        title = f"X[B, D] @ W[D, F] on the {current.name} ({dt})"
        state = ex.scene((current.name, dt), _roofline_scene(current, dt, title, PALETTE["orange"]))
        b, d, f = c["B"].value, c["D"].value, c["F"].value
        w = _weights_of(c["weights"].value)
        cost = matmul(b, d, f, dtype=dt, weights=w)
        x = float(cost.intensity)
        y = float(attainable_flops_per_s(x, current, dt))
        est = estimate(cost, current, dtype=dt)
        approx = critical_batch_size(current, dt, weights=w)
        exact = exact_critical_batch_size(current, d, f, dtype=dt, weights=w)
        _place(
            state["artists"],
            state["ax"],
            x,
            y,
            f"B={b}: {format_intensity(x)}\n{format_flops_rate(y)}",
        )
        exact_text = (
            "never: memory-bound at every B for this D, F" if math.isinf(exact) else f"{exact:.4g}"
        )
        wname = w or dt
        text = (
            f"B={b}, D={d}, F={f}, {dt} math, {wname} weights: intensity {format_intensity(x)}, "
            f"{est.bound}-bound\n"
            f"time between {format_time(est.t_lower)} and {format_time(est.t_upper)}; "
            f"attainable {format_flops_rate(y)}\n"
            f"critical batch: approximate (B << D, F) {approx:.4g}; exact for this D, F {exact_text}"
        )
        alt = (
            f"Roofline of the {current.name} ({dt}); a matmul with B={b}, D={d}, F={f} and {wname} "
            f"weights sits at {format_intensity(x)}, {est.bound}-bound. Critical batch about "
            f"{approx:.4g} (exact {exact_text})."
        )
        return text, alt, False

    def sync(ex, key):
        c = ex.controls
        if key == "chip":
            _follow_chip(c, _matrix_dtypes(_resolve_chip(c["chip"].value, own)))
        if key in ("chip", "dtype"):  # the weight menu follows the math's dtype
            old, choices = c["weights"].value, _weight_choices(c["dtype"].value)
            c["weights"].options = choices
            c["weights"].value = old if old in [v for _, v in choices] else SAME_AS_MATH

    def web(ex):
        c = ex.controls
        return _resolve_chip(c["chip"].value, own), {
            "dtype": c["dtype"].value,
            "weights": _weights_of(c["weights"].value),
            "B": c["B"].value,
            "D": c["D"].value,
            "F": c["F"].value,
        }

    return Explorer(
        "matmul",
        "Matmul explorer: batch size and the critical batch",
        controls,
        render,
        web,
        sync=sync,
    )


def _n_options(chip: Chip) -> list[int]:
    """The chip counts the sharded explorer offers for `chip` (one torus axis or one switch or
    mesh domain caps them)."""
    most = most_chips_on_one_axis(chip)
    return [k for k in (2, 4, 8, 16, 32, 64) if not most or k <= most]


def _sharded_chips(own: Chip) -> list[str]:
    """The chip menu: `own`, then the catalog chips with a link topology and a bf16 matrix peak."""

    def usable(c):
        return (
            c.interconnect is not None
            and c.interconnect.topology is not None
            and c.has_peak("bf16", "matrix")
        )

    return [n for n in _chip_options(own) if n == own.name or usable(get_chip(n))]


def _check_sharded(own: Chip, n, link_bytes_per_s):
    """Validated (n, one link's one-way bytes/s) for the sharded explorer."""
    n = _check_positive("n", n, whole=True)
    if n < 2:
        raise ValueError("n must be at least 2 chips for a sharded matmul")
    if link_bytes_per_s is None:
        if own.link_bytes_per_s is None:
            raise ValueError(
                f"{own.name} has no chip-to-chip link in the catalog; pass "
                "link_bytes_per_s (one way, per link, in bytes/s)"
            )
        link_bytes_per_s = own.link_bytes_per_s
    link_bytes_per_s = _check_positive("link_bytes_per_s", link_bytes_per_s)
    if not 1e9 <= link_bytes_per_s <= 1e13:
        raise ValueError(
            "link_bytes_per_s must be between 1e9 and 1e13 bytes/s (one way, per link)"
        )
    link, most = own.interconnect, most_chips_on_one_axis(own)
    if n not in _n_options(own) and most and link is not None:  # most is None without a link
        where = "one torus axis holds" if link.topology == "torus" else f"{link.name} joins"
        raise ValueError(f"{where} at most {most} {own.name} chips; pick n <= {most}")
    return n, link_bytes_per_s


def sharded_matmul_explorer(
    chip="TPU v5e", n=2, B=1024, D=8192, F=8192, link_bytes_per_s=None, slice="axis"
) -> Explorer:
    """D split over n chips: time per chip for the math, the chip's HBM and its link.

    The link carries the all-reduce of the partial sums on the chip's own topology
    (`roofline.sharded_topology`: one link for two TPUs, a line or a wrapped ring along a
    torus axis for more, all NVLinks at once through NVSwitch); the slider sets one link's
    one-way bandwidth. The chip, B and F are controls too, as on the web page.
    slice (a TPU torus only; `roofline.web.SLICE_CHOICES`): "axis" (the default) puts the n
    chips on one axis of a larger slice, as `roofline.sharded_topology(chip, n)` does (4 v5e
    chips: a line of 4); "alone" gives them a slice of their own, the shape Google sells for n
    chips (`roofline.topology.slice_shape`: 4 v5e chips a 2x2), the all-reduce on all its axes
    at once (`roofline.sharded_estimate(..., slice_shape=)`). On a switch or mesh both are the
    same and the control rests."""
    import numpy as np

    widgets = load_ipywidgets()
    enable_colab_widgets()
    own = get_chip(chip)
    B = _check_positive("B", B, whole=True)
    D = _check_positive("D", D, whole=True)
    F = _check_positive("F", F, whole=True)
    n, link_bytes_per_s = _check_sharded(own, n, link_bytes_per_s)
    slice = check_slice(slice)
    controls = {
        "chip": widgets.Dropdown(options=_sharded_chips(own), value=own.name, description="chip"),
        "n": widgets.SelectionSlider(
            options=_snap_options(_n_options(own), n), value=n, description="n chips"
        ),
        "slice": widgets.Dropdown(
            options=[(label, key) for key, label in SLICE_CHOICES.items()],
            value=slice,
            description="slice",
            disabled=len(slice_choices(own)) < 2,
        ),
        "B": widgets.SelectionSlider(
            options=_pow2_options(0, 16, B), value=B, description="B (batch)"
        ),
        "D": widgets.SelectionSlider(options=_pow2_options(8, 20, D), value=D, description="D"),
        "F": widgets.SelectionSlider(options=_pow2_options(6, 16, F), value=F, description="F"),
        "link_bytes_per_s": widgets.FloatLogSlider(
            value=link_bytes_per_s,
            base=10,
            min=9,
            max=13,
            step=0.01,
            description="link B/s",
            readout_format=".3g",
        ),
    }
    d_axis = np.array([2.0**k for k in np.arange(8, 20.01, 0.25)])

    def render(ex, changed):
        c = ex.controls
        current = _resolve_chip(c["chip"].value, own)
        b, f = c["B"].value, c["F"].value
        ranges = (tuple(c["n"].options), (c["link_bytes_per_s"].min, c["link_bytes_per_s"].max))
        state = ex.scene((current.name, b, f), _sharded_scene(current, b, f, ranges, d_axis))
        return _sharded_update(state, current, c, d_axis)

    def sync(ex, key):
        if key != "chip":
            return
        c = ex.controls
        current = _resolve_chip(c["chip"].value, own)
        if current.link_bytes_per_s is not None:  # the link slider starts at the chip's link
            c["link_bytes_per_s"].value = current.link_bytes_per_s
        options, old = _n_options(current), c["n"].value
        c["n"].options = options
        c["n"].value = old if old in options else max([k for k in options if k <= old] or options)
        c["slice"].disabled = len(slice_choices(current)) < 2  # the same either way

    def web(ex):
        c = ex.controls
        return _resolve_chip(c["chip"].value, own), {
            "n": c["n"].value,
            "B": c["B"].value,
            "D": c["D"].value,
            "F": c["F"].value,
            "link_bytes_per_s": float(c["link_bytes_per_s"].value),
            "slice": c["slice"].value,
        }

    return Explorer(
        "sharded_matmul",
        "Sharded matmul explorer: math, memory and link time per chip",
        controls,
        render,
        web,
        sync=sync,
    )


def _sharded_at(chip, n, B, D, F, link, slice):
    """(estimate, threshold D, where in words) of the sharded explorer for `slice`: one axis
    of a larger slice (`sharded_estimate(..., link_bytes_per_s=link)`), or the n chips' own
    slice (`sharded_estimate(..., slice_shape=)` on the chip with the slider's link: every
    link of the slice at that one-way rate)."""
    route = sharded_link(chip, n, slice)
    if route["shape"] is None:
        est = sharded_estimate(B, D, F, chip, n=n, dtype="bf16", link_bytes_per_s=link)
        threshold = sharded_critical_D(chip, n=n, dtype="bf16", link_bytes_per_s=link)
    else:
        own_link = dataclasses.replace(chip.interconnect, one_way_bytes_per_s=link)
        mine = dataclasses.replace(chip, interconnect=own_link)
        shape = "x".join(map(str, route["shape"]))
        est = sharded_estimate(B, D, F, mine, n=n, dtype="bf16", slice_shape=shape)
        threshold = sharded_critical_D(mine, n=n, dtype="bf16", slice_shape=shape)
    return est, threshold, route["where"]


def _sharded_scene(chip, B, F, ranges, d_axis):
    """`Explorer.scene`'s builder of the sharded explorer's axes for one chip, B and F: the
    curves and markers (moving), and a y range over every n and link the controls allow."""
    import numpy as np

    from .drawing import PALETTE, font_pt, format_axis, style_axes

    def build(fig):
        ax = fig.add_subplot(1, 1, 1)
        style_axes(ax)
        ax.set_xscale("log", base=2)
        ax.set_yscale("log")
        state = _sharded_artists(ax, chip, PALETTE, font_pt("small"))
        ax.set_xlim(d_axis[0], d_axis[-1])
        ax.set_xlabel("Contraction size D (split over n chips)", fontsize=font_pt("normal"))
        ax.set_ylabel("Time per chip", fontsize=font_pt("normal"))
        ax.legend(loc="upper left", fontsize=font_pt("small"), facecolor="white")
        # fixed y range over every n, D and link the sliders allow: moving n or the link
        # then only redraws the curves (fast), and the eye can compare positions
        lows, highs = [], []
        (n_options, (lo_exp, hi_exp)) = ranges
        for n_opt, bw, where in itertools.product(
            (min(n_options), max(n_options)), (10**lo_exp, 10**hi_exp), slice_choices(chip)
        ):
            e = _sharded_at(chip, n_opt, B, d_axis, F, bw, where)[0]
            times = (np.min(e.t_math), np.min(e.t_memory), e.t_link)
            lows.append(min(float(t) for t in times))
            highs.append(max(float(np.max(e.t_math)), float(np.max(e.t_memory)), float(e.t_link)))
        ax.set_ylim(
            10 ** math.floor(math.log10(min(lows))), 10 ** math.ceil(math.log10(max(highs)))
        )
        format_axis(ax.xaxis, "count", base=2)
        format_axis(ax.yaxis, "time")
        ax.set_title(f"{chip.name} × n, bf16: B={B}, F={F}", fontsize=font_pt("title"))
        state["label"].set_in_layout(False)
        _fit(fig)
        state["ax"] = ax
        moving = [
            state[k] for k in ("math", "hbm", "comms", "threshold", "label", "pm", "pc", "ph")
        ]
        return state, moving

    return build


def _sharded_artists(ax, chip, palette, small_pt) -> dict:
    """The sharded explorer's curves, threshold line, markers and label (empty until updated)."""
    state = {}
    (state["math"],) = ax.plot(
        [], [], color=palette["blue"], linewidth=2, label="math per chip: (2BDF/n) / peak"
    )
    (state["hbm"],) = ax.plot(
        [],
        [],
        color=palette["bluish green"],
        linewidth=2,
        linestyle="-.",
        label=f"{chip.memory_kind} per chip: its shards and partial sum",
    )
    (state["comms"],) = ax.plot(
        [],
        [],
        color=palette["vermillion"],
        linewidth=2,
        linestyle="--",
        label="link per chip: all-reduce of the 2BF-byte partial sums",
    )
    state["threshold"] = ax.axvline(
        1,
        color=palette["black"],
        alpha=0.7,
        linestyle=":",
        linewidth=1.2,
        label="threshold D (math = link)",
    )
    for key, marker, colour, size, gid in (
        ("pm", "o", "blue", 7, "explorer-math"),
        ("pc", "s", "vermillion", 7, "explorer-link"),
        ("ph", "D", "bluish green", 6, "explorer-hbm"),
    ):
        (state[key],) = ax.plot(
            [],
            [],
            marker,
            color=palette[colour],
            markersize=size,
            markeredgecolor="#000000",
            zorder=5,
            gid=gid,
        )
    state["label"] = ax.annotate(
        "",
        xy=(1, 1),
        xytext=(4, 6),
        textcoords="offset points",
        fontsize=small_pt,
        ha="left",
        va="bottom",
        color="#333333",
    )
    return state


def _sharded_update(state, chip, c, d_axis) -> tuple:
    """Move the sharded explorer's curves and markers to the controls' values; (text, alt, False)."""
    import numpy as np

    ax = state["ax"]
    nn, B, d, F = c["n"].value, c["B"].value, c["D"].value, c["F"].value
    link = float(c["link_bytes_per_s"].value)
    curve, threshold, where = _sharded_at(chip, nn, B, d_axis, F, link, c["slice"].value)
    t_link = np.broadcast_to(np.asarray(curve.t_link, dtype=float), d_axis.shape)
    state["math"].set_data(d_axis, np.asarray(curve.t_math, dtype=float))
    state["hbm"].set_data(d_axis, np.asarray(curve.t_memory, dtype=float))
    state["comms"].set_data(d_axis, t_link)
    state["threshold"].set_xdata([threshold, threshold])
    here = _sharded_at(chip, nn, B, d, F, link, c["slice"].value)[0]
    state["pm"].set_data([d], [here.t_math])
    state["pc"].set_data([d], [here.t_link])
    state["ph"].set_data([d], [here.t_memory])
    state["label"].set_text(f"threshold D = {threshold:,.0f}")
    at = min(max(threshold, d_axis[0]), d_axis[-1])
    state["label"].xy = (at, ax.get_ylim()[0])
    right_half = at > math.sqrt(d_axis[0] * d_axis[-1])  # write it on the side with room
    state["label"].set_horizontalalignment("right" if right_half else "left")
    state["label"].set_position((-4 if right_half else 4, 6))
    bound, mem = here.bound, chip.memory_kind
    text = (
        f"{nn} × {chip.name}, bf16, B={B}, D={d}, F={F}, one link {format_bandwidth(link)} one way, "
        f"{where}\n"
        f"per chip: math {format_time(here.t_math)}, {mem} {format_time(here.t_memory)}, "
        f"link {format_time(here.t_link)} -> {bound}-bound\n"
        f"link threshold: math outlasts the link when D > {threshold:,.0f} (B and F cancel)"
    )
    alt = (
        f"Time per chip against D for a matmul split over {nn} {chip.name} chips ({where}): the "
        "math time "
        f"grows with D, the {mem} time grows more slowly, the link time does not; "
        f"math and link cross at D = {threshold:,.0f}. At D={d}: math {format_time(here.t_math)}, "
        f"{mem} {format_time(here.t_memory)}, link {format_time(here.t_link)}, {bound}-bound."
    )
    return text, alt, False
