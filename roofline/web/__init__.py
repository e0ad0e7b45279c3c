"""The page explorers of the web edition: data exported as JSON, computed and drawn in the browser.

On a web page there is no Python kernel, so each explorer ships as HTML holding

- its data as JSON (`explorer_data`): the catalog figures it uses, per chip and dtype the
  matrix peak and the vector peak where published (FLOP/s), the memory bandwidth (bytes/s),
  the chip-to-chip link (one-way bytes/s of one link, link count, topology, domain size, and
  for the sharded explorer the package's all-reduce per n and slice choice: `sharded_link`),
  bytes per element of each dtype, its controls and its starting values;
- `explorer.js` (in this folder, inlined: no CDN, works from file://), a dependency-free
  script that computes with the package's formulas and draws the figure in SVG;
- a static first frame (a PNG of the starting state and its readout) for readers without
  JavaScript.

`roofline.widgets` builds this from each explorer's `_repr_mimebundle_`; the book's HTML build
shows it instead of the live ipywidgets view (which needs a kernel: Colab, Jupyter).
Nothing here imports a heavy library.
"""

from __future__ import annotations

import base64
import hashlib
import html
import json
import math
from importlib import resources

from ..catalog import get_chip, list_chips
from ..dtypes import DTYPE_BYTES
from ..hardware import Chip
from ..topology import (
    axis_topology,
    group_link_load,
    is_torus,
    most_chips_on_one_axis,
    slice_shape,
)
from ..units import format_bandwidth, format_intensity

__all__ = [
    "KINDS",
    "N_CHOICES",
    "SLICE_CHOICES",
    "sharded_link",
    "check_slice",
    "slice_choices",
    "chip_data",
    "explorer_data",
    "explorer_script",
    "explorer_html",
    "explorer_card",
    "index_slider_html",
    "select_html",
    "page_script",
]

#: The explorers the page can run, by the name `roofline.widgets` gives them.
KINDS = ("roofline", "matmul", "sharded_matmul")
#: Chip counts the sharded explorer offers (a switch or mesh domain caps them per chip).
N_CHOICES = (2, 4, 8, 16, 32, 64)
#: Where the sharded explorer's n chips sit (its "slice" control): one axis of a larger slice
#: (`roofline.sharded_topology(chip, n)`), or a slice of their own, the shape Google sells for
#: n chips (`roofline.topology.slice_shape`: 4 v5e chips a 2x2). The same on a GPU's switch or
#: mesh: only a TPU torus has slice shapes.
SLICE_CHOICES = {"axis": "one axis of a larger slice", "alone": "the n chips alone"}
_LABELS = {
    "chip": "chip",
    "dtype": "dtype",
    "intensity": "intensity (FLOPs/byte)",
    "B": "B (batch)",
    "D": "D",
    "F": "F",
    "weights": "weights",
    "n": "n chips",
    "slice": "slice",
    "link_bytes_per_s": "link (one way)",
}


def chip_data(chip) -> dict:
    """One chip's figures as the browser needs them (SI units: FLOP/s, bytes/s).

    `matrix` and `vector` map dtype -> dense peak FLOP/s on that unit (fp32-accumulate rate
    where a chip has two); `link` is None for a chip without a chip-to-chip link.
    """
    chip = get_chip(chip)
    matrix, vector = {}, {}
    for dtype in chip.dtypes:
        if chip.has_peak(dtype, "matrix"):
            matrix[dtype] = chip.peak_flops_per_s(dtype, unit="matrix")
        if chip.has_peak(dtype, "vector"):
            vector[dtype] = chip.peak_flops_per_s(dtype, unit="vector")
    link = chip.interconnect
    return {
        "name": chip.name,
        "memory_kind": chip.memory_kind,
        "hbm_bytes_per_s": chip.hbm_bytes_per_s,
        "dtypes": list(chip.dtypes),
        "matrix": matrix,
        "vector": vector,
        "link": None
        if link is None
        else {
            "name": link.name,
            "one_way_bytes_per_s": link.one_way_bytes_per_s,
            "count": link.count,
            "topology": link.topology,
            "domain_chips": link.domain_chips,
            "wraparound_multiple": link.wraparound_multiple,
            "axis_chips": link.axis_chips,
            # routing is the package's (roofline.topology): the page looks it up
            "most_chips": most_chips_on_one_axis(chip),
            "all_reduce": _all_reduce(chip),
        },
    }


def check_slice(slice) -> str:
    """`slice` if it is a key of `SLICE_CHOICES`, else a ValueError naming the choices."""
    if not isinstance(slice, str) or slice not in SLICE_CHOICES:
        choices = "; ".join(f"{k!r} ({v})" for k, v in SLICE_CHOICES.items())
        raise ValueError(f"slice must be one of {choices}; got {slice!r}")
    return slice


def slice_choices(chip) -> tuple:
    """The `SLICE_CHOICES` keys that differ for `chip`: both on a TPU torus, only "axis" on a
    switch or mesh (the n chips alone use the same links as one axis)."""
    return tuple(SLICE_CHOICES) if is_torus(chip) else ("axis",)


def sharded_link(chip, n, slice="axis") -> dict:
    """The all-reduce of a D-split matmul on `n` chips, where `slice` (a key of
    `SLICE_CHOICES`) puts them, as the package routes it: `per_byte` (bytes on the busiest
    link, one way, per byte of the array V, at the chip's one-way link rate: the link time is
    per_byte x V / link, linear in V and in 1/link without latency), `topology` (the package's
    name: `roofline.sharded_topology` on one axis, `Route.describe` on a slice of its own),
    `shape` (the slice's axes, None on one axis of a larger one) and `where` (in words, for
    the readout and the alt text: "line of 4", "2x2 slice (ring, ring)")."""
    from ..collectives import collective_bytes_per_link

    check_slice(slice)
    chip = get_chip(chip)
    if slice == "alone" and is_torus(chip):
        shape = slice_shape(chip, n)
        share, rate, _, name = group_link_load(chip, n, "x".join(map(str, shape)))
        tops = name.split(": ")[-1]
        where = (
            f"{'x'.join(map(str, shape))} slice ({tops})" if len(shape) > 1 else f"{tops} of {n}"
        )
        # the group's links are the chip's own (a slice of its own shares none)
        return {
            "per_byte": share * chip.link_bytes_per_s / rate,
            "topology": name,
            "shape": list(shape),
            "where": where,
        }
    top = axis_topology(chip, n)
    per_byte = collective_bytes_per_link("all-reduce", 1.0, n, top, chip.link_count or 1)
    return {
        "per_byte": per_byte,
        "topology": top,
        "shape": None,
        "where": f"{top} of {n}" if is_torus(chip) else top,
    }


def _all_reduce(chip) -> dict:
    """n -> slice choice -> `sharded_link` (per_byte, topology, where), for every n the
    explorers offer; "alone" only on a torus (elsewhere it is "axis"); {} for a chip without
    a chip-to-chip topology."""
    if chip.interconnect is None or chip.interconnect.topology is None:
        return {}
    most = most_chips_on_one_axis(chip)
    slices = slice_choices(chip)
    out: dict[str, dict] = {}
    for k in N_CHOICES:
        if most is None or k <= most:
            out[str(k)] = {}
            for s in slices:
                link = sharded_link(chip, k, s)
                out[str(k)][s] = {key: link[key] for key in ("per_byte", "topology", "where")}
    return out


def _chips(own: Chip, usable) -> dict:
    names = [own.name] + [name for name in list_chips() if name != own.name]
    return {
        name: chip_data(own if name == own.name else name)
        for name in names
        if name == own.name or usable(get_chip(name))
    }


def _range(low_exp, high_exp, value, scale, integer=False, step=0.01) -> dict:
    """A log-scale slider: exponents low..high (widened to hold `value`)."""
    position = math.log2(value) if scale == "log2" else math.log10(value)
    return {
        "type": "range",
        "scale": scale,
        "integer": integer,
        "step": step,
        "min": min(low_exp, math.floor(position)),
        "max": max(high_exp, math.ceil(position)),
    }


def _select(options) -> dict:
    return {"type": "select", "options": [[str(v), str(label)] for v, label in options]}


def explorer_data(kind: str, chip, **start) -> dict:
    """The JSON an explorer's page script runs on: chips, dtype sizes, controls, starting values.

    kind "roofline": start has dtype, intensity (FLOPs/byte). "matmul": dtype, weights (a dtype
    or None: same as the math), B, D, F. "sharded_matmul": n, B, D, F, link_bytes_per_s (one link, one
    way, bytes/s), slice (a key of `SLICE_CHOICES`, "axis" when left out). `chip` (a name or a `Chip`, also one not in the catalog) comes first in the
    chip menu, followed by the catalog chips the explorer can use.
    """
    if kind not in KINDS:
        raise ValueError(f"kind must be one of {', '.join(KINDS)}, got {kind!r}")
    own = get_chip(chip)
    start = {"chip": own.name, **start}
    if kind == "roofline":
        chips = _chips(own, lambda c: True)
        controls = {
            "chip": _select((c, c) for c in chips),
            "dtype": _select((d, d) for d in own.dtypes),
            "intensity": _range(-2, 5, start["intensity"], "log10"),
        }
    elif kind == "matmul":
        chips = _chips(own, lambda c: any(c.has_peak(d, "matrix") for d in c.dtypes))
        dtype = start["dtype"]
        weights = [("", f"same as the math ({dtype})")] + [
            (d, d) for d in DTYPE_BYTES if d != dtype and DTYPE_BYTES[d] <= DTYPE_BYTES[dtype]
        ]
        controls = {
            "chip": _select((c, c) for c in chips),
            "dtype": _select((d, d) for d in own.dtypes if own.has_peak(d, "matrix")),
            "B": _range(0, 16, start["B"], "log2", integer=True),
            "D": _range(6, 16, start["D"], "log2", integer=True),
            "F": _range(6, 16, start["F"], "log2", integer=True),
            "weights": _select(weights),
        }
    else:
        chips = _chips(
            own,
            lambda c: (
                c.interconnect is not None
                and c.interconnect.topology is not None
                and c.has_peak("bf16", "matrix")
            ),
        )
        most = most_chips_on_one_axis(own)
        ns = [k for k in N_CHOICES if most is None or k <= most]
        start.setdefault("slice", "axis")
        check_slice(start["slice"])
        controls = {
            "chip": _select((c, c) for c in chips),
            "n": _select((k, k) for k in sorted(set(ns) | {start["n"]})),
            "slice": _select(SLICE_CHOICES.items()),
            "B": _range(0, 16, start["B"], "log2", integer=True),
            "D": _range(8, 20, start["D"], "log2", integer=True),
            "F": _range(6, 16, start["F"], "log2", integer=True),
            "link_bytes_per_s": _range(9, 13, start["link_bytes_per_s"], "log10"),
        }
    for name, spec in controls.items():
        spec["label"] = _LABELS[name]
    data = {
        "kind": kind,
        "chips": chips,
        "dtype_bytes": dict(DTYPE_BYTES),
        "controls": controls,
        "start": start,
        "n_choices": list(N_CHOICES),
        "x_range": [0.01, 1e5],
    }
    json.dumps(data, allow_nan=False)  # no NaN or infinity reaches the page
    return data


def explorer_script() -> str:
    """The text of explorer.js (package data)."""
    return resources.files(__name__).joinpath("explorer.js").read_text(encoding="utf-8")


#: The script every explorer shares (number formats, start-up, announcements), inlined first.
COMMON_SCRIPT = "common.js"


def page_script(name: str) -> str:
    """The inline script of an explorer: common.js then `name` (a file in this folder),
    escaped so that no "</" ends the script element early."""
    folder = resources.files(__name__)
    text = "\n".join(folder.joinpath(f).read_text(encoding="utf-8") for f in (COMMON_SCRIPT, name))
    return text.replace("</", "<\\/")


def select_html(name: str, label: str, options, value) -> str:
    """A labelled select box: options are (value, text) pairs; `value` is selected (None: the
    first option with an empty value)."""
    label = html.escape(label)
    chosen = "" if value is None else str(value)
    opts = "".join(
        f'<option value="{html.escape(str(v))}"{" selected" if str(v) == chosen else ""}>'
        f"{html.escape(str(t))}</option>"
        for v, t in options
    )
    control = (
        f'<select data-control="{name}" aria-label="{label}" disabled '
        f'style="{_CONTROL_STYLE}">{opts}</select>'
    )
    return f'<label style="max-width:100%">{label} {control}</label>'


def index_slider_html(name: str, label: str, options, value, unit: str) -> str:
    """A slider over a list of whole-number choices (its position is the index), with the
    chosen value in an <output> beside it and as `aria-valuetext` ("16 sequences")."""
    label = html.escape(label)
    index = list(options).index(value)
    return (
        f'<label>{label} <input type="range" data-control="{name}" min="0" '
        f'max="{len(options) - 1}" step="1" value="{index}" aria-label="{label}" '
        f'aria-valuetext="{value:,} {html.escape(unit)}" disabled '
        f'style="width:7em;max-width:40vw;min-height:24px"> '
        f'<output data-for="{name}">{value:,}</output></label>'
    )


def explorer_card(
    *,
    kind: str,
    title: str,
    controls: list[str],
    png: bytes,
    alt: str,
    text: str,
    note: str,
    data: dict,
    data_class: str = "rx-data",
    script: str = "explorer.js",
    card_class: str = "",
) -> str:
    """The one explorer card of the web edition: a named group (`title`) holding the controls
    (HTML from `select_html`, `index_slider_html`, ...), a static first frame (`png`, `alt`,
    the readout `text`) for readers without JavaScript, the figure the script draws, the
    readout, a live region the script fills after the reader pauses, a note, the data as
    JSON (script element of class `data_class`) and the script (common.js, then `script`)."""
    payload = json.dumps(data, allow_nan=False, separators=(",", ":")).replace("</", "<\\/")
    uid = "rx-" + hashlib.sha1(payload.encode()).hexdigest()[:10]
    src = "data:image/png;base64," + base64.b64encode(png).decode("ascii")
    classes = "roofline-explorer" + (f" {card_class}" if card_class else "")
    return (
        f'<div class="{classes}" data-explorer="{html.escape(kind)}" id="{uid}" '
        f'role="group" aria-label="{html.escape(title)}" '
        f'style="position:relative;max-width:680px;border:1px solid #ccc;border-radius:6px;padding:8px;'
        f'background:#fff;color:#000;color-scheme:light">\n'
        f'<p style="margin:0 0 4px 0"><strong>{html.escape(title)}</strong></p>\n'
        f'<div class="rx-controls" style="display:flex;flex-wrap:wrap;gap:4px 14px;'
        f'align-items:center;margin:0 0 6px 0;font-size:90%">\n'
        + "\n".join(controls)
        + "\n</div>\n"
        f'<div class="rx-static"><img src="{src}" alt="{html.escape(alt)}" '
        f'style="max-width:100%;height:auto;display:block"></div>\n'
        f'<div class="rx-figure" style="display:none;width:100%;overflow:hidden;contain:content"></div>\n'
        f'<pre class="roofline-explorer-caption" style="white-space:pre-wrap;margin:4px 0;'
        f'min-height:4.5em;color:#000;background:#fff">{html.escape(text)}</pre>\n'
        # what a screen reader hears after a change (the script fills it, once input pauses)
        f'<p class="rx-live-region" role="status" aria-live="polite" aria-atomic="true" '
        f'style="position:absolute;width:1px;height:1px;margin:-1px;padding:0;overflow:hidden;'
        f'clip:rect(0 0 0 0);white-space:nowrap;border:0"></p>\n'
        f'<p style="margin:0;font-size:90%"><em>{html.escape(note)}</em></p>\n'
        f'<script type="application/json" class="{data_class}">{payload}</script>\n'
        f"<script>{page_script(script)}</script>\n"
        f"</div>"
    )


#: The unit a slider's number field is written in: control -> (unit label, bytes/s or FLOPs/B per unit).
NUMBER_UNITS = {"intensity": ("FLOPs/B", 1.0), "link_bytes_per_s": ("GB/s", 1e9)}
#: Every control at least 24 CSS px tall (WCAG 2.2 target size, 2.5.8).
_CONTROL_STYLE = (
    "color:#000;background:#fff;border:1px solid #767676;border-radius:3px;max-width:100%;"
    "min-height:24px;box-sizing:border-box"
)


def _shown(name: str, value) -> str:
    """A control's value as the page writes it (aria-valuetext), with its unit."""
    if name == "intensity":
        return format_intensity(value)
    if name == "link_bytes_per_s":
        return format_bandwidth(value)
    return f"{value:,.0f}"


def _control_html(name: str, spec: dict, value) -> str:
    """One control. A slider (log scale) comes with a number field beside it, for an exact
    value typed or stepped with the arrow keys; its `aria-valuetext` is the value with its unit
    (a screen reader would otherwise read the slider's log position)."""
    if spec["type"] == "select":
        return select_html(name, spec["label"], spec["options"], value)
    label = html.escape(spec["label"])
    position = math.log2(value) if spec["scale"] == "log2" else math.log10(value)
    shown = html.escape(_shown(name, value))
    unit, per_unit = NUMBER_UNITS.get(name, ("", 1.0))
    number = value / per_unit
    return (
        f'<span class="rx-slider" style="display:inline-flex;flex-wrap:wrap;align-items:center;'
        f'gap:0 4px;max-width:100%"><label style="display:inline-flex;align-items:center;'
        f'gap:0 4px">{label} '
        f'<input type="range" data-control="{name}" min="{spec["min"]}" max="{spec["max"]}" '
        f'step="{spec["step"]}" value="{position:.6g}" aria-label="{label}" '
        f'aria-valuetext="{shown}" disabled style="width:9em;max-width:40vw;margin:0;'
        f'min-height:24px"></label> '
        f'<input type="number" data-number="{name}" data-per-unit="{per_unit:g}" '
        f'value="{number:.6g}" step="any" '
        f'aria-label="{label}: exact value{" in " + unit if unit else ""}" disabled '
        f'style="{_CONTROL_STYLE};width:7em">'
        f"{' ' + html.escape(unit) if unit else ''}</span>"
    )


def explorer_html(data: dict, title: str, png: bytes, alt: str, text: str, note: str) -> str:
    """The explorer's HTML: controls, a static first frame (`png`, `alt`, `text`), the data
    and the script. Without JavaScript the reader sees the first frame and its readout."""
    controls = [
        _control_html(name, spec, data["start"].get(name))
        for name, spec in data["controls"].items()
    ]
    return explorer_card(
        kind=data["kind"],
        title=title,
        controls=controls,
        png=png,
        alt=alt,
        text=text,
        note=note,
        data=data,
    )
